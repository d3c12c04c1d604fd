//! The kernel backend's topology: two network namespaces joined only through the emulator.
//!
//! ```text
//!   <run>-snd namespace                 emulator process               <run>-rcv namespace
//!   senders: 10.71.h.l (flow k-1)  --> rove0 (TUN) ==> links of the flow's path ==> rove0 (TUN) --> receivers: 10.72.h.l
//!                                  <-- rove0 (TUN) <== links of its ack_path   <== rove0 (TUN) <--
//! ```
//!
//! Flow `i` owns the address pair 10.71.h.l (sender) and 10.72.h.l (receiver) with
//! `h.l = i + 1` as a 16-bit number, so one sender namespace and one receiver namespace hold
//! any number of flows and the emulator classifies a packet to its flow by address alone: a
//! packet read from the sender side's TUN belongs to the flow of its source address (data
//! direction, routed through `path`), one read from the receiver side to the flow of its
//! destination address (ACK direction, through `ack_path`). Each receiver address has a /32
//! route with `src` set to its flow's sender address, so a client that does not bind picks the
//! right source. Neither namespace has any other interface than `lo`, so nothing leaves them.
//!
//! Why two namespaces and not one pair per flow: building a namespace costs a few `ip`
//! invocations, and the per-flow state Linux keeps per namespace (TCP metrics cache) is turned
//! off with `net.ipv4.tcp_no_metrics_save = 1`, so flows sharing a namespace do not learn from
//! each other.

use crate::netns::{ip, ip_batch, Netns};
use crate::sys::netns_sysctl;
use rove_scenario::Hop;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU32, Ordering};

/// Name of the TUN device in both namespaces.
pub const TUN_NAME: &str = "rove0";
/// First two octets of the sender addresses (private range, used only inside the namespaces).
pub const SENDER_NET: [u8; 2] = [10, 71];
/// First two octets of the receiver addresses.
pub const RECEIVER_NET: [u8; 2] = [10, 72];
/// Flows one topology can address (16 bits of host part, 0 and 65535 unused).
pub const MAX_FLOWS: usize = 65_534;
/// MTU of the TUN devices: an Ethernet path's, as the simulator's 1500-byte packets assume.
pub const MTU: u32 = 1500;

fn addr(net: [u8; 2], flow: usize) -> Ipv4Addr {
    let k = flow as u32 + 1;
    Ipv4Addr::new(net[0], net[1], (k >> 8) as u8, (k & 0xff) as u8)
}

/// The sender address of route `route` (see [`routes`]: route `i < flows` is flow `i`'s first
/// path, so a single-path flow's sender address is `sender_addr(flow)`).
pub fn sender_addr(route: usize) -> Ipv4Addr {
    addr(SENDER_NET, route)
}

/// One path of one flow, as the emulator routes it and the address plan names it: its own
/// sender address (`sender_addr(route index)`), the flow's receiver address.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteSpec {
    pub flow: usize,
    /// 0 for a single-path flow and a multipath flow's first path; 1, 2, ... for its others.
    pub subflow: usize,
    pub path: Vec<Hop>,
    pub ack_path: Vec<Hop>,
}

/// `(path, ack_path)` of each path of a flow, in order (a multipath flow's `paths`).
pub fn flow_paths(f: &rove_scenario::FlowSpec) -> Vec<(Vec<Hop>, Vec<Hop>)> {
    match &f.multipath {
        Some(mp) => mp
            .paths
            .iter()
            .map(|p| (p.path.clone(), p.ack_path.clone()))
            .collect(),
        None => vec![(f.path.clone(), f.ack_path.clone())],
    }
}

/// A multipath flow (key `paths`): an MPTCP connection on the kernel backend.
pub fn is_multipath(f: &rove_scenario::FlowSpec) -> bool {
    f.multipath.is_some()
}

/// The routes of a scenario: route `i` is flow `i`'s first path (for every flow), then the
/// further paths of multipath flows, flow by flow, in order.
pub fn routes(sc: &rove_scenario::Scenario) -> Vec<RouteSpec> {
    let mut out: Vec<RouteSpec> = Vec::new();
    let mut extra = Vec::new();
    for (i, f) in sc.flows.iter().enumerate() {
        for (k, (path, ack_path)) in flow_paths(f).into_iter().enumerate() {
            let r = RouteSpec {
                flow: i,
                subflow: k,
                path,
                ack_path,
            };
            if k == 0 {
                out.push(r);
            } else {
                extra.push(r);
            }
        }
    }
    out.extend(extra);
    out
}

pub fn receiver_addr(flow: usize) -> Ipv4Addr {
    addr(RECEIVER_NET, flow)
}

/// The flow an address belongs to, if it is in block `net`.
#[inline]
pub fn flow_of(ip: [u8; 4], net: [u8; 2]) -> Option<usize> {
    if ip[0] != net[0] || ip[1] != net[1] {
        return None;
    }
    let k = (ip[2] as usize) << 8 | ip[3] as usize;
    k.checked_sub(1)
}

static RUN_COUNTER: AtomicU32 = AtomicU32::new(0);

/// A run id unique on this machine while this process lives: `rove-<pid>-<n>`.
pub fn new_run_id() -> String {
    let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("rove-{}-{n}", std::process::id())
}

/// The namespaces of a run; dropping it deletes them (and so the devices, addresses, routes).
#[derive(Debug)]
pub struct Topology {
    pub run_id: String,
    pub n_flows: usize,
    pub n_routes: usize,
    // Field order is drop order: receiver side first, then sender side.
    pub rcv: Netns,
    pub snd: Netns,
}

impl Topology {
    pub fn snd_name(run_id: &str) -> String {
        format!("{run_id}-snd")
    }

    pub fn rcv_name(run_id: &str) -> String {
        format!("{run_id}-rcv")
    }

    /// Builds both namespaces with their TUN devices, addresses and routes for `n_flows` flows
    /// and their `routes` (see [`routes`]). On error, whatever was built is removed again
    /// before returning.
    pub fn build(run_id: &str, n_flows: usize, routes: &[RouteSpec]) -> Result<Topology, String> {
        if routes.len() > MAX_FLOWS {
            return Err(format!(
                "{} flow paths: the kernel backend addresses at most {MAX_FLOWS}",
                routes.len()
            ));
        }
        let snd = Netns::create(&Self::snd_name(run_id))?;
        let rcv = Netns::create(&Self::rcv_name(run_id))?;
        let topo = Topology {
            run_id: run_id.to_string(),
            n_flows,
            n_routes: routes.len(),
            rcv,
            snd,
        };
        for ns in [&topo.snd.name, &topo.rcv.name] {
            ip(&["-n", ns, "tuntap", "add", "dev", TUN_NAME, "mode", "tun"])?;
            // txqueuelen: room for bursts between two reads of the emulator, so that drops
            // happen in the emulated queue, not in front of the TUN device.
            let mut cmds = vec![format!(
                "link set dev {TUN_NAME} mtu {MTU} txqueuelen 10000 up"
            )];
            let sender_side = ns == &topo.snd.name;
            if sender_side {
                // An address per route; a route to each receiver with its first path's address
                // as source (further paths' subflows bind their own address).
                for (r, route) in routes.iter().enumerate() {
                    cmds.push(format!("addr add {}/32 dev {TUN_NAME}", sender_addr(r)));
                    if route.subflow == 0 {
                        cmds.push(format!(
                            "route add {}/32 dev {TUN_NAME} src {}",
                            receiver_addr(route.flow),
                            sender_addr(r)
                        ));
                    }
                }
            } else {
                for f in 0..n_flows {
                    cmds.push(format!("addr add {}/32 dev {TUN_NAME}", receiver_addr(f)));
                }
                for (r, route) in routes.iter().enumerate() {
                    cmds.push(format!(
                        "route add {}/32 dev {TUN_NAME} src {}",
                        sender_addr(r),
                        receiver_addr(route.flow)
                    ));
                }
            }
            ip_batch(ns, &cmds)?;
            // Flows sharing a namespace must not inherit each other's cwnd/RTT from the
            // TCP metrics cache; IPv6 is off so no router solicitations reach the emulator.
            for (key, value) in [
                ("net.ipv4.tcp_no_metrics_save", "1"),
                ("net.ipv6.conf.all.disable_ipv6", "1"),
                ("net.ipv6.conf.default.disable_ipv6", "1"),
            ] {
                netns_sysctl(ns, key, value).map_err(|e| format!("sysctl {key}: {e}"))?;
            }
        }
        Ok(topo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        for f in [0usize, 1, 254, 255, 256, 65_533] {
            assert_eq!(flow_of(sender_addr(f).octets(), SENDER_NET), Some(f));
            assert_eq!(flow_of(receiver_addr(f).octets(), RECEIVER_NET), Some(f));
            assert_eq!(flow_of(sender_addr(f).octets(), RECEIVER_NET), None);
        }
        assert_eq!(sender_addr(0), Ipv4Addr::new(10, 71, 0, 1));
        assert_eq!(receiver_addr(255), Ipv4Addr::new(10, 72, 1, 0));
        assert_eq!(flow_of([10, 71, 0, 0], SENDER_NET), None);
    }
}
