//! Coupled congestion control for multipath TCP: LIA, OLIA, BALIA, wVegas and MPTCP-BBR, and the
//! shared state through which the subflows of one connection see each other.
//!
//! # The coupling
//!
//! A multipath connection runs one full TCP sender per subflow, each with its own
//! `Box<dyn CongestionControl>`. A coupled algorithm needs, on every ACK of subflow *r*, the
//! windows and RTTs of the other subflows of its connection (the kernel reads them by walking
//! `mpcb`'s subflow list). Here they live in a [`CouplingHandle`]: one per connection, cheaply
//! clonable (`Arc<Mutex<..>>`; the simulator is single-threaded, so the lock is never contended),
//! holding one [`SlotState`] per subflow.
//!
//! - The connection layer makes the handle ([`CouplingHandle::new`]) and, for each subflow,
//!   takes a slot ([`CouplingHandle::subflow`]) and passes it to the algorithm through
//!   [`CcConfig::with_coupling`](super::CcConfig::with_coupling). That is all it must do.
//! - The algorithm publishes its own state (cwnd, ssthresh, srtt, MSS, and what its formula
//!   needs from the others: OLIA's inter-loss distance, wVegas's rate) into its slot from its own
//!   hooks (`pkts_acked` runs on every ACK, `cong_avoid`, `ssthresh`, `set_state`), and reads the
//!   slots of its *group* when it computes its increase or decrease.
//! - Every slot carries a **group id** (default 0). Only slots of the same group are coupled:
//!   BCCPS and MPTCP-SSCC (seed 001 §2.3, seed 000 §4.3) couple the subflows that share a
//!   bottleneck and leave the others uncoupled, and regroup them at run time with
//!   [`CouplingHandle::set_group`]. A subflow alone in its group behaves as a single-path flow
//!   (Reno for LIA, OLIA and BALIA, as `mptcp_oliasbdx.c` does for a lone subflow, seed 000 §4.3;
//!   BBR for MPTCP-BBR, seed 001 Algorithm 1 line 18).
//! - A slot counts in its group's sums only when it is *usable* (the connection layer clears it
//!   with [`CouplingHandle::set_usable`] when the subflow's path is down or the subflow closed;
//!   the kernel's `mptcp_sk_can_send`) and has an RTT sample (`srtt_us > 0`; the kernel's
//!   `mptcp_*_sk_can_send` test `tp->srtt_us` too). A subflow that has not joined yet is
//!   therefore left out by itself.
//!
//! Built without a slot (a plain single-path flow with `cc = "lia"`), an algorithm makes a private
//! handle with one slot: a one-subflow group.
//!
//! Only the coupled algorithms publish. A subflow switched at run time to an uncoupled algorithm
//! (MPTCP-SSCC picks CUBIC, BBR, ... for uncoupled subflows) should be moved to a group of its
//! own ([`CouplingHandle::uncouple`]) or marked unusable, or its slot keeps its last values and
//! its group's members keep counting them. A coupled algorithm built later on the same slot
//! takes it over from its first hook call.
//!
//! # Use from the connection layer
//!
//! ```
//! use rove_tcp::cc::{build, CcConfig, CouplingHandle};
//!
//! let params = toml::Table::new(); // the flow's cc_params
//! let coupling = CouplingHandle::new(); // one per multipath connection
//! let mut subflows = Vec::new();
//! for _path in 0..2 {
//!     let slot = coupling.subflow(); // slot 0, 1, ... in group 0
//!     let config = CcConfig::new(&params, 1).with_coupling(slot);
//!     subflows.push(build("lia", &config).unwrap().unwrap()); // give it to the subflow's TcpSender
//! }
//! // A shared-bottleneck detector (BCCPS, MPTCP-SSCC) regroups at run time:
//! coupling.set_group(1, 7); // subflow 1 now coupled only with group 7's subflows (none: alone)
//! coupling.uncouple(0); // subflow 0 in a group of its own
//! coupling.set_usable(1, false); // path of subflow 1 down: left out of every sum
//! assert_eq!(coupling.slot(1).group, 7);
//! ```
//!
//! # What is published, and when
//!
//! A slot holds what its subflow published at its last hook call; another subflow's cwnd changed
//! by the sender outside a hook (PRR during recovery, RTO) is seen at that subflow's next ACK.
//! The kernel reads live `tcp_sock` fields instead; the difference is at most one ACK of one
//! subflow.
//!
//! # Algorithms (one file each)
//!
//! | name | file | source |
//! |---|---|---|
//! | `lia` | [`lia`] | RFC 6356 §3; Linux MPTCP `mptcp_coupled.c` |
//! | `olia` | [`olia`] | Khalili et al., CoNEXT 2012; draft-khalili-mptcp-congestion-control-05; `mptcp_olia.c` |
//! | `balia` | [`balia`] | Peng, Walid, Hwang, Low, ToN 24(1) 2016; `mptcp_balia.c` |
//! | `wvegas` | [`wvegas`] | Cao, Xu, Fu, ICNP 2012; `mptcp_wvegas.c` |
//! | `mpbbr` | [`mpbbr`] | Wei et al., IEEE TVT 2021 (BCCPS), seed 001 §2.4: BBR v1 per subflow, coupled by Eqs. 1–6 |
//! | `olia_sbd` | [`olia`] | OLIA*, MPTCP-SSCC's OLIA over a shared-bottleneck group (seed 000 §4.3; `mptcp_oliasbdx.c`) |
//! | `sscc` | [`olia`] | MPTCP-SSCC (seed 000 §4): OLIA* per subflow; on a multipath flow with RFC 8382 detection |

pub mod balia;
pub mod lia;
pub mod mpbbr;
pub mod olia;
pub mod wvegas;

use std::sync::{Arc, Mutex, MutexGuard};

use crate::state::{CaState, TcpState};

/// The coupled algorithms (their registry names): built with a [`CouplingSlot`] they couple
/// the subflows of a connection.
pub const NAMES: &[&str] = &[
    "lia", "olia", "balia", "wvegas", "mpbbr", "olia_sbd", "sscc",
];

/// Whether `cc` is one of the coupled algorithms.
pub fn is_coupled(cc: &str) -> bool {
    NAMES.contains(&cc)
}

/// The default group of a new slot: all subflows of a connection are coupled together.
pub const DEFAULT_GROUP: u32 = 0;

/// What one subflow published, as its group's members read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotState {
    /// Coupling group; only slots with the same group see each other.
    pub group: u32,
    /// Set by the connection layer: false while the subflow cannot send (path down, closed).
    pub usable: bool,
    /// snd_cwnd, packets.
    pub cwnd: u32,
    /// snd_ssthresh, packets.
    pub ssthresh: u32,
    /// ca_state == Recovery (OLIA then counts ssthresh as the window, `mptcp_get_crt_cwnd`).
    pub in_recovery: bool,
    /// Smoothed RTT, µs; 0 before the first sample (the slot then does not count).
    pub srtt_us: u64,
    /// mss_cache, bytes.
    pub mss: u32,
    /// OLIA: l_r, the inter-loss distance, in packets (max of the data acked between the last
    /// two losses and since the last loss).
    pub olia_inter_loss_pkts: u64,
    /// wVegas: instant rate cwnd/rtt (packets per µs) from its last update; 0 = none yet.
    pub wvegas_rate: f64,
    /// wVegas: whether the subflow has RTT samples in its current round (`sampled_rtt > 0`).
    pub wvegas_sampled: bool,
    /// MPTCP-BBR: BtlBW_r, the subflow's bandwidth estimate (bbr_bw), in tcp_bbr.c's unit
    /// (packets per µs << 24); 0 before a sample.
    pub bbr_bw: u32,
    /// MPTCP-BBR: RTprop_r, the subflow's min_rtt, µs; `u32::MAX` before a sample.
    pub bbr_min_rtt_us: u32,
    /// MPTCP-BBR: where the subflow is in PROBE_BW's gain cycle; `None` outside PROBE_BW.
    pub bbr_probe_bw: Option<mpbbr::ProbeBwPhase>,
}

impl Default for SlotState {
    fn default() -> Self {
        SlotState {
            group: DEFAULT_GROUP,
            usable: true,
            cwnd: crate::state::INIT_CWND,
            ssthresh: crate::state::INFINITE_SSTHRESH,
            in_recovery: false,
            srtt_us: 0,
            mss: crate::MSS,
            olia_inter_loss_pkts: 0,
            wvegas_rate: 0.0,
            wvegas_sampled: false,
            bbr_bw: 0,
            bbr_min_rtt_us: u32::MAX,
            bbr_probe_bw: None,
        }
    }
}

impl SlotState {
    /// Whether the slot takes part in its group's sums: usable and with an RTT sample.
    #[inline]
    pub fn counts(&self) -> bool {
        self.usable && self.srtt_us > 0
    }
}

/// The members of `me`'s group that count (`me` itself included when it counts).
#[inline]
pub fn members(
    slots: &[SlotState],
    me: usize,
) -> impl Iterator<Item = (usize, &SlotState)> + Clone {
    let group = slots[me].group;
    slots
        .iter()
        .enumerate()
        .filter(move |(_, s)| s.group == group && s.counts())
}

/// Number of counting members of `me`'s group.
pub fn group_size(slots: &[SlotState], me: usize) -> usize {
    members(slots, me).count()
}

#[derive(Debug, Default)]
struct Shared {
    slots: Vec<SlotState>,
}

/// The coupling of one multipath connection: one slot per subflow. Clone it freely; all clones
/// share the same slots.
#[derive(Debug, Clone, Default)]
pub struct CouplingHandle {
    shared: Arc<Mutex<Shared>>,
}

impl CouplingHandle {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // Single-threaded use: a poisoned lock can only follow a panic elsewhere; keep going.
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a slot for a new subflow, in [`DEFAULT_GROUP`], and returns it bound to this handle.
    pub fn subflow(&self) -> CouplingSlot {
        let mut s = self.lock();
        s.slots.push(SlotState::default());
        CouplingSlot {
            handle: self.clone(),
            slot: s.slots.len() - 1,
        }
    }

    /// The slot of subflow `index` (slots are numbered as the connection's subflows), added
    /// with any missing before it in [`DEFAULT_GROUP`]: an algorithm built for an existing
    /// subflow (a switch at run time) takes its slot over rather than adding one.
    pub fn subflow_slot(&self, index: usize) -> CouplingSlot {
        let mut s = self.lock();
        while s.slots.len() <= index {
            s.slots.push(SlotState::default());
        }
        CouplingSlot {
            handle: self.clone(),
            slot: index,
        }
    }

    /// Number of slots (subflows ever added).
    pub fn len(&self) -> usize {
        self.lock().slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves `slot` into `group`; it is coupled with the slots of that group from the next ACK on.
    /// Panics if `slot` was never handed out (a bug in the caller).
    pub fn set_group(&self, slot: usize, group: u32) {
        self.lock().slots[slot].group = group;
    }

    pub fn group(&self, slot: usize) -> u32 {
        self.lock().slots[slot].group
    }

    /// Puts `slot` in a group of its own (uncoupled): the group id `u32::MAX - slot`, which
    /// callers numbering groups from 0 never reach.
    pub fn uncouple(&self, slot: usize) {
        self.set_group(slot, u32::MAX - slot as u32);
    }

    /// Marks `slot` usable or not (path down, subflow closed): an unusable slot is left out of
    /// its group's sums, as the kernel skips subflows for which `mptcp_sk_can_send` is false.
    pub fn set_usable(&self, slot: usize, usable: bool) {
        self.lock().slots[slot].usable = usable;
    }

    /// A copy of what `slot` last published (for metrics and tests).
    pub fn slot(&self, slot: usize) -> SlotState {
        self.lock().slots[slot]
    }

    /// A copy of every slot.
    pub fn slots(&self) -> Vec<SlotState> {
        self.lock().slots.clone()
    }
}

/// One subflow's slot in a [`CouplingHandle`]: what a coupled algorithm is built with.
#[derive(Debug, Clone)]
pub struct CouplingSlot {
    handle: CouplingHandle,
    slot: usize,
}

impl CouplingSlot {
    /// A private one-slot handle: the coupling of an algorithm built without one.
    pub fn alone() -> Self {
        CouplingHandle::new().subflow()
    }

    /// The slot's index in its handle (the argument of `set_group`, `set_usable`, `slot`).
    pub fn index(&self) -> usize {
        self.slot
    }

    pub fn handle(&self) -> &CouplingHandle {
        &self.handle
    }

    /// Publishes the window, RTT and MSS of `tp`, then lets `extra` update the rest of the slot;
    /// returns `f` applied to all slots (read under the same lock) and this slot's index.
    pub fn publish_and<R>(
        &self,
        tp: &TcpState,
        extra: impl FnOnce(&mut SlotState),
        f: impl FnOnce(&[SlotState], usize) -> R,
    ) -> R {
        let mut s = self.handle.lock();
        let me = &mut s.slots[self.slot];
        me.cwnd = tp.snd_cwnd;
        me.ssthresh = tp.snd_ssthresh;
        me.in_recovery = tp.ca_state == CaState::Recovery;
        me.srtt_us = tp.srtt_us;
        me.mss = tp.mss_cache;
        extra(me);
        f(&s.slots, self.slot)
    }

    /// Publishes `tp` (and `extra`) into the slot.
    pub fn publish(&self, tp: &TcpState, extra: impl FnOnce(&mut SlotState)) {
        self.publish_and(tp, extra, |_, _| ())
    }

    /// `f` applied to all slots and this slot's index, publishing nothing.
    pub fn read<R>(&self, f: impl FnOnce(&[SlotState], usize) -> R) -> R {
        let s = self.handle.lock();
        f(&s.slots, self.slot)
    }
}

// ------------------------------------------------------------------------------------------------
// cc_params helpers shared by the coupled algorithms.

/// `kernel_ack_counting` (all three window-coupled algorithms) [GAP]: RFC 6356 and the papers
/// increase "per ACK" of one packet (the byte form: ∝ bytes_acked), so an ACK covering `acked`
/// packets counts `acked` times (default). The multipath-tcp.org kernel's `mptcp_coupled.c`,
/// `mptcp_olia.c` and `mptcp_balia.c` count one per `cong_avoid` call whatever `acked` is (their
/// code predates `tcp_cong_avoid_ai(tp, w, acked)`), which grows half as fast with delayed ACKs;
/// `true` reproduces that.
pub(crate) const KERNEL_ACK_COUNTING: &str = "kernel_ack_counting";

/// Reno's congestion avoidance after slow start (tcp_reno_cong_avoid), used by a subflow that is
/// alone in its group. `acked` is what slow start left over.
pub(crate) fn reno_ai(tp: &mut TcpState, acked: u32) {
    let w = tp.snd_cwnd;
    tp.cong_avoid_ai(w, acked);
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::SlotState;

    /// A counting slot in group 0 with `cwnd` packets, `srtt_us` and the default MSS.
    pub fn slot(cwnd: u32, srtt_us: u64) -> SlotState {
        SlotState {
            cwnd,
            srtt_us,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_share_state_across_clones_and_groups_filter_members() {
        let h = CouplingHandle::new();
        let a = h.subflow();
        let b = h.clone().subflow();
        let c = h.subflow();
        assert_eq!((a.index(), b.index(), c.index()), (0, 1, 2));
        let tp = TcpState {
            snd_cwnd: 20,
            srtt_us: 40_000,
            ..Default::default()
        };
        a.publish(&tp, |_| {});
        b.publish(&tp, |_| {});
        // c has no RTT sample yet: it does not count.
        assert_eq!(h.slot(0).cwnd, 20);
        let slots = h.slots();
        assert_eq!(group_size(&slots, 0), 2);
        h.set_group(1, 7);
        let slots = h.slots();
        assert_eq!(group_size(&slots, 0), 1);
        assert_eq!(group_size(&slots, 1), 1);
        h.set_group(0, 7);
        assert_eq!(group_size(&h.slots(), 1), 2);
        h.set_usable(0, false);
        assert_eq!(group_size(&h.slots(), 1), 1);
        h.uncouple(2);
        assert_eq!(h.group(2), u32::MAX - 2);
        assert_eq!(h.len(), 3);
    }

    /// Two subflows with equal windows (20) and RTTs: coupled, LIA, OLIA and BALIA all grow one
    /// packet per 80 acked (LIA: (Σw)²/w = 1600/20; OLIA: α = 0, w/(Σw)² = 1/80; BALIA: α = 1,
    /// (x/rtt)/(2x)² = 1/(4w)), a quarter of Reno's pace per subflow; moved to different groups,
    /// each is Reno (one packet per 20); moved back, coupled again. (OLIA's counter in 2^-10
    /// packet truncates 1024/80 = 12.8 to 12 per packet acked: its 80 is ⌈1023/12⌉ = 86.)
    #[test]
    fn regrouping_decouples_and_recouples() {
        use crate::cc::{build, CcConfig, CongestionControl};
        use crate::state::AckSample;
        let p = toml::Table::new();
        for (name, every) in [("lia", 80), ("olia", 86), ("balia", 80)] {
            let h = CouplingHandle::new();
            let cfg = |s: CouplingSlot| CcConfig::new(&p, 1).with_coupling(s);
            let mut a: Box<dyn CongestionControl> =
                build(name, &cfg(h.subflow())).unwrap().unwrap();
            let mut b: Box<dyn CongestionControl> =
                build(name, &cfg(h.subflow())).unwrap().unwrap();
            let mk = || TcpState {
                snd_cwnd: 20,
                snd_ssthresh: 10,
                srtt_us: 50_000,
                is_cwnd_limited: true,
                ..Default::default()
            };
            let (mut ta, mut tb) = (mk(), mk());
            a.init(&mut ta);
            b.init(&mut tb);
            let ack = AckSample {
                pkts_acked: 1,
                rtt_us: 50_000,
                in_flight: 0,
            };
            a.pkts_acked(&mut ta, &ack);
            b.pkts_acked(&mut tb, &ack);
            let drive = |cc: &mut Box<dyn CongestionControl>, tp: &mut TcpState, n: u32| {
                for _ in 0..n {
                    cc.pkts_acked(tp, &ack);
                    cc.cong_avoid(tp, 1);
                }
            };
            drive(&mut a, &mut ta, every - 1);
            assert_eq!(
                ta.snd_cwnd, 20,
                "{name} coupled: no increase before {every} packets"
            );
            drive(&mut a, &mut ta, 1);
            assert_eq!(ta.snd_cwnd, 21, "{name} coupled: one packet at {every}");

            h.set_group(1, 5);
            let (mut ta, mut tb) = (mk(), mk());
            for (cc, tp) in [(&mut a, &mut ta), (&mut b, &mut tb)] {
                cc.init(tp);
                drive(cc, tp, 20);
                assert_eq!(tp.snd_cwnd, 21, "{name} uncoupled: Reno, one packet per 20");
            }

            h.set_group(1, 0);
            let (mut ta, mut tb) = (mk(), mk());
            b.init(&mut tb);
            b.pkts_acked(&mut tb, &ack);
            a.init(&mut ta);
            drive(&mut a, &mut ta, 40);
            assert_eq!(ta.snd_cwnd, 20, "{name} recoupled");
        }
    }

    #[test]
    fn handle_is_send_and_sync() {
        fn check<T: Send + Sync + Clone>() {}
        check::<CouplingHandle>();
        check::<CouplingSlot>();
    }
}
