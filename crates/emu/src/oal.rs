//! OAL on the kernel backend (issue 19 item 5): the simulator's OAL controller
//! (`rove_world::control::oal::Oal`, the same code) run by the emulator on the real clock, over
//! real Linux senders' packets crossing an emulated WiFi cell.
//!
//! - **Tick.** Every `every` (4 ms, seed-004 Table 1's 250 Hz) of emulator time, an event calls
//!   [`Oal::step`] with the emulator's links: the AP sampler reads the emulated cell's counters
//!   (the same `AnyLink` the simulator samples), the controller labels, retrains (on a worker
//!   thread, `rove_world::control::oal::trainer`, so the emulator's loop does not wait for a
//!   tree: the time each step takes is reported) or predicts with its fixed `model`, and sets
//!   per-flow targets in its packet monitor.
//! - **Packets.** Every packet of a tracked flow offered to the cell's link (data at the AP's
//!   downlink queue, ACKs at the station's uplink queue, as the simulator's path element sees
//!   them) is parsed here and shown to the same monitor as an `Observed`: sequence numbers in
//!   bytes from the SYN's ISN + 1 (unwrapped from 32 bits), the ACK number, TSval/TSecr, and
//!   the window field shifted by the flow's window scale.
//! - **Window scale.** Read from the handshake (RFC 7323 §2.2–2.3): the receiver's SYN-ACK
//!   gives the shift of the windows it sends, in force only if the sender's SYN offered the
//!   option too; a shift above 14 is taken as 14. Until the SYN-ACK is seen a flow's ACKs are
//!   not monitored (and never rewritten); a flow whose SYN the emulator did not see is left
//!   alone. SYN and SYN-ACK windows are never scaled and never rewritten.
//! - **Rewrite.** When the monitor lowers an ACK's window (`allocate::rewritten_window`: the
//!   target in the flow's scale, never above the client's advertisement), the new 16-bit field
//!   is written in place and the TCP checksum updated incrementally (RFC 1624 Eqn. 3); no other
//!   byte changes, so the IPv4 checksum stands.
//!
//! [GAP] UNA (the cwnd estimate without a regressor) is the unacknowledged bytes past the AP
//! over the flow's MSS (its largest payload seen), rounded down; the simulator counts segments.
//! [GAP] `record = true` is refused on the kernel: a recorded row holds the sender's true cwnd
//! and srtt, which the emulator cannot read.

use crate::tcp_header::{be32, set_tcp_word, tcp_offsets, tcp_option, timestamps};
use rove_scenario::component::build_components;
use rove_scenario::Scenario;
use rove_sim::link::AnyLink;
use rove_sim::Nanos;
use rove_world::control::oal::monitor::{Monitor, Observed, Role};
use rove_world::control::oal::Oal;
use std::sync::{Arc, Mutex};

/// RFC 7323 §2.3: a shift above 14 is used as 14.
pub const MAX_WSCALE: u8 = 14;
/// TCP option kind of the window scale (RFC 7323 §2.2).
const OPT_WSCALE: u8 = 3;
/// Offset of the window field in the TCP header.
const WINDOW_AT: usize = 14;

/// What the emulator learns from a flow's headers for the monitor.
#[derive(Debug, Clone, Copy, Default)]
struct FlowHeader {
    /// ISN + 1 from the sender's SYN: relative sequence numbers count from it.
    base: Option<u32>,
    /// The highest relative sequence number seen: the reference for unwrapping.
    high_rel: u64,
    /// Whether the sender's SYN offered window scaling.
    syn_scaled: bool,
    /// The shift of the receiver's windows, once its SYN-ACK is seen.
    wscale: Option<u8>,
    /// The largest payload seen going down.
    mss: u32,
}

impl FlowHeader {
    /// `seq` relative to the ISN + 1, unwrapped near the highest seen (RFC 1982-style serial
    /// arithmetic: within 2^31 of it).
    fn relative(&self, base: u32, seq: u32) -> u64 {
        let r = seq.wrapping_sub(base);
        let d = r.wrapping_sub(self.high_rel as u32) as i32 as i64;
        (self.high_rel as i64 + d).max(0) as u64
    }
}

/// A flow's ACKs as the rewrite treated them.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct FlowRewrites {
    pub wscale: Option<u8>,
    /// ACKs monitored, and those whose window was lowered.
    pub acks: u64,
    pub rewritten: u64,
    /// Windows written (bytes, as the sender reads them): least, largest, sum.
    pub written_min_bytes: Option<u64>,
    pub written_max_bytes: u64,
    pub written_sum_bytes: u64,
    /// The window every monitored ACK left with (rewritten or not), integrated over time
    /// from the first ACK to the last (byte·ns), and that span.
    pub window_integral: f64,
    pub window_span_ns: Nanos,
    #[serde(skip)]
    last: Option<(Nanos, u64)>,
}

impl FlowRewrites {
    fn ack(&mut self, now: Nanos, window_bytes: u64, lowered: bool) {
        self.acks += 1;
        if let Some((t, w)) = self.last {
            self.window_integral += w as f64 * (now - t) as f64;
            self.window_span_ns += now - t;
        }
        self.last = Some((now, window_bytes));
        if lowered {
            self.rewritten += 1;
            self.written_min_bytes = Some(
                self.written_min_bytes
                    .map_or(window_bytes, |m| m.min(window_bytes)),
            );
            self.written_max_bytes = self.written_max_bytes.max(window_bytes);
            self.written_sum_bytes += window_bytes;
        }
    }
}

/// One OAL controller in the emulator.
pub struct KernelOal {
    /// Its place among the scenario's `[[controllers]]`.
    index: usize,
    oal: Oal,
    monitor: Arc<Mutex<Monitor>>,
    /// Per scenario flow: tracked by the monitor (a downlink single-path flow of the cell).
    tracked: Vec<bool>,
    headers: Vec<FlowHeader>,
    pub flows: Vec<FlowRewrites>,
    /// Wall-clock time of the steps (retraining included): longest and total.
    step_max_ns: u64,
    step_total_ns: u64,
}

/// Builds the scenario's `kind = "oal"` controllers with the simulator's own builder (same keys,
/// same errors), and refuses what the kernel cannot run (`record = true`).
pub fn build(sc: &Scenario) -> Result<Vec<KernelOal>, String> {
    // Each with its place among the scenario's `[[controllers]]` (summary.json's `index`).
    let (indices, specs): (Vec<usize>, Vec<_>) = sc
        .controllers
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind == "oal")
        .map(|(i, c)| (i, c.clone()))
        .unzip();
    let built = build_components(&specs, sc, &[("oal", Oal::new)]).map_err(|e| e.to_string())?;
    built
        .into_iter()
        .zip(specs.iter().zip(indices))
        .map(|(oal, (spec, index))| {
            if oal.records() {
                return Err(format!(
                    "{}: {}.record: recorded items hold the senders' true cwnd and srtt, which the kernel backend cannot read; remove record or run on the simulator",
                    sc.source, spec.location
                ));
            }
            let monitor = oal.monitor().clone();
            let tracked: Vec<bool> = monitor.lock().expect("one thread").flows.iter().map(|f| f.tracked).collect();
            Ok(KernelOal {
                index,
                oal,
                monitor,
                headers: vec![FlowHeader::default(); tracked.len()],
                flows: vec![FlowRewrites::default(); tracked.len()],
                tracked,
                step_max_ns: 0,
                step_total_ns: 0,
            })
        })
        .collect()
}

/// The trainer thread's scheduling: ordinary, not the SCHED_FIFO it inherits from rove-emu, and
/// off the CPU rove-emu pinned itself to (isolate.rs), on the others (the hosts' stacks').
/// Best effort: on failure it trains where it is.
fn trainer_thread_setup() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid param pointer; pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
    let Ok(pinned) = crate::isolate::allowed_cpus() else {
        return;
    };
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
    if let [emu_cpu] = pinned[..] {
        // SAFETY: cpu_set_t is plain data; CPU_SET within its size.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for c in (0..online.min(libc::CPU_SETSIZE as usize)).filter(|&c| c != emu_cpu) {
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        if online > 1 {
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        }
    }
}

impl KernelOal {
    /// The WiFi cell's link index.
    pub fn link(&self) -> u32 {
        self.oal.link() as u32
    }

    pub fn tick_ns(&self) -> Nanos {
        self.oal.tick_ns()
    }

    /// Retrains on a worker thread from now on (`trainer.rs`): a retrain on 10,000 items takes
    /// 15–30 ms, which the emulator's real-clock loop must not wait for.
    pub fn train_in_background(&mut self) {
        self.oal.train_in_background(trainer_thread_setup);
    }

    /// The controller's tick at emulator time `now`.
    pub fn step(&mut self, now: Nanos, links: &[AnyLink]) {
        let wall = crate::sys::monotonic_ns();
        self.oal.step(now, links, None);
        let took = crate::sys::monotonic_ns() - wall;
        self.step_max_ns = self.step_max_ns.max(took);
        self.step_total_ns += took;
    }

    /// Flow `flow`'s IPv4 packet `pkt` (read from the sender side if `data_side`) enters the
    /// cell at `now`: shown to the monitor, its window rewritten in place if the monitor
    /// lowers it.
    pub fn on_packet(&mut self, now: Nanos, flow: usize, data_side: bool, pkt: &mut [u8]) {
        if !self.tracked.get(flow).copied().unwrap_or(false) {
            return;
        }
        let Some((ihl, doff)) = tcp_offsets(pkt) else {
            return;
        };
        let flags = pkt[ihl + 13];
        let (syn, rst, ack_flag) = (flags & 0x02 != 0, flags & 0x04 != 0, flags & 0x10 != 0);
        let total = (u16::from_be_bytes([pkt[2], pkt[3]]) as usize).min(pkt.len());
        let payload = total.saturating_sub(ihl + doff) as u64;
        let seq = be32(pkt, ihl + 4);
        let h = &mut self.headers[flow];
        if data_side && syn && !ack_flag {
            *h = FlowHeader {
                base: Some(seq.wrapping_add(1)),
                syn_scaled: tcp_option(pkt, OPT_WSCALE).is_some_and(|d| d.len() == 1),
                ..FlowHeader::default()
            };
        }
        let Some(base) = h.base else {
            return; // its SYN was not seen
        };
        if !data_side && syn && ack_flag {
            let offered = tcp_option(pkt, OPT_WSCALE)
                .filter(|d| d.len() == 1)
                .map(|d| d[0]);
            let shift = match offered {
                Some(s) if h.syn_scaled => s.min(MAX_WSCALE),
                _ => 0,
            };
            h.wscale = Some(shift);
            self.flows[flow].wscale = Some(shift);
        }
        let role = match (data_side, syn, rst, ack_flag) {
            (true, false, false, _) if payload > 0 => Role::Segment,
            (false, false, false, true) => Role::Ack,
            _ => Role::Other,
        };
        let wscale = match (role, h.wscale) {
            (Role::Ack, None) => return, // the window's scale is not known yet
            (_, w) => w.unwrap_or(0),
        };
        let (tsval, tsecr) = timestamps(pkt).unwrap_or((0, 0));
        let mut o = Observed {
            role,
            wire_bytes: total as u32,
            seq: 0,
            seq_end: 0,
            ack: 0,
            tsval,
            tsecr,
            rwnd_bytes: 0,
        };
        match role {
            Role::Segment => {
                o.seq = h.relative(base, seq);
                o.seq_end = o.seq + payload;
                h.high_rel = h.high_rel.max(o.seq_end);
                h.mss = h.mss.max(payload as u32);
            }
            Role::Ack => {
                o.ack = h.relative(base, be32(pkt, ihl + 8));
                h.high_rel = h.high_rel.max(o.ack);
                let field = u16::from_be_bytes([pkt[ihl + WINDOW_AT], pkt[ihl + WINDOW_AT + 1]]);
                o.rwnd_bytes = u64::from(field) << wscale;
            }
            Role::Other => {}
        }
        let lowered = {
            let mut m = self.monitor.lock().expect("one thread");
            let f = &mut m.flows[flow];
            f.wscale = wscale;
            f.units_per_segment = u64::from(h.mss.max(1));
            m.see(now, flow, &mut o)
        };
        if role == Role::Ack {
            if lowered {
                set_tcp_word(pkt, ihl, WINDOW_AT, (o.rwnd_bytes >> wscale) as u16);
            }
            self.flows[flow].ack(now, o.rwnd_bytes, lowered);
        }
    }

    /// The controller's report (the simulator's) with its place among the scenario's
    /// controllers (`index`), the rewrites per flow and the steps' wall-clock cost, for
    /// `emu_summary.json`.
    pub fn summary(&self, names: &[String]) -> serde_json::Value {
        let mut v = self.oal.report().to_json();
        let flows: Vec<serde_json::Value> = (0..self.flows.len())
            .filter(|&i| self.tracked[i])
            .map(|i| {
                let mut f = serde_json::to_value(self.flows[i]).expect("plain data");
                f["flow"] = names[i].clone().into();
                let r = &self.flows[i];
                f["window_mean_bytes"] = if r.window_span_ns > 0 {
                    (r.window_integral / r.window_span_ns as f64).into()
                } else {
                    serde_json::Value::Null
                };
                f
            })
            .collect();
        v["flows"] = flows.into();
        v["index"] = self.index.into();
        v["step_max_us"] = (self.step_max_ns as f64 / 1e3).into();
        v["step_total_ms"] = (self.step_total_ns as f64 / 1e6).into();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp_header::{fix_checksums, fold, sum16};

    const SENDER: [u8; 4] = [10, 71, 0, 1];
    const RECEIVER: [u8; 4] = [10, 72, 0, 1];

    /// A scenario with one station's downlink flow through a WiFi cell and an OAL controller.
    fn kernel_oal(keys: &str) -> KernelOal {
        let text = format!(
            "duration = \"1s\"\n[links.air]\nkind = \"wifi\"\n[links.air.stations.s1]\nsnr = \"30dB\"\n\
             [[flows]]\nname = \"f\"\ncc = \"cubic\"\npath = [\"air:s1\"]\nack_path = [\"air:s1:up\"]\n\
             [[controllers]]\nkind = \"oal\"\nlink = \"air\"\n{keys}\n"
        );
        let kinds = rove_sim::link::model::kinds();
        let opts = rove_scenario::ParseOptions {
            source: "test.toml",
            known_link_kinds: &kinds,
            ..Default::default()
        };
        let sc = rove_scenario::parse(&text, &opts).expect("scenario");
        build(&sc).expect("oal").remove(0)
    }

    /// A TCP/IPv4 packet with `options` (a multiple of 4 bytes) and `payload` bytes, checksums
    /// valid.
    #[allow(clippy::too_many_arguments)]
    fn tcp(
        src: [u8; 4],
        dst: [u8; 4],
        seq: u32,
        ack: u32,
        flags: u8,
        window: u16,
        options: &[u8],
        payload: &[u8],
    ) -> Vec<u8> {
        let doff = 20 + options.len();
        let total = 20 + doff + payload.len();
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p[20..22].copy_from_slice(&5201u16.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[28..32].copy_from_slice(&ack.to_be_bytes());
        p[32] = ((doff / 4) as u8) << 4;
        p[33] = flags;
        p[34..36].copy_from_slice(&window.to_be_bytes());
        p[40..40 + options.len()].copy_from_slice(options);
        p[40 + options.len()..].copy_from_slice(payload);
        fix_checksums(&mut p);
        p
    }

    /// The ones' complement sum over pseudo-header and segment is 0xffff when valid.
    fn checksums_valid(p: &[u8]) -> bool {
        let acc = sum16(&p[12..20], 0) + 6 + (p.len() - 20) as u32;
        fold(sum16(&p[..20], 0)) == 0 && fold(sum16(&p[20..], acc)) == 0
    }

    fn window_field(p: &[u8]) -> u16 {
        u16::from_be_bytes([p[34], p[35]])
    }

    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    const ISN: u32 = 0xffff_f000; // the byte sequence wraps 4 kB into the flow

    /// The handshake (the sender's SYN with window scale `syn_ws`, the receiver's SYN-ACK with
    /// `synack_ws`) and one 1448-byte segment, through the monitor.
    fn handshake(o: &mut KernelOal, syn_ws: Option<u8>, synack_ws: Option<u8>) {
        let ws = |s: Option<u8>| s.map_or(vec![1, 1, 1, 1], |s| vec![1, 3, 3, s]);
        let mut syn = tcp(SENDER, RECEIVER, ISN, 0, SYN, 64240, &ws(syn_ws), &[]);
        o.on_packet(0, 0, true, &mut syn);
        let mut synack = tcp(
            RECEIVER,
            SENDER,
            7,
            ISN.wrapping_add(1),
            SYN | ACK,
            65160,
            &ws(synack_ws),
            &[],
        );
        o.on_packet(1, 0, false, &mut synack);
        assert_eq!(
            window_field(&synack),
            65160,
            "a SYN-ACK's window is never rewritten"
        );
        let mut data = tcp(
            SENDER,
            RECEIVER,
            ISN.wrapping_add(1),
            8,
            ACK,
            502,
            &[],
            &[0xab; 1448],
        );
        o.on_packet(2, 0, true, &mut data);
    }

    /// An ACK of `acked` bytes with window field `field`, through the monitor; the packet after.
    fn ack(o: &mut KernelOal, at: Nanos, acked: u32, field: u16) -> Vec<u8> {
        let mut a = tcp(
            RECEIVER,
            SENDER,
            8,
            ISN.wrapping_add(1 + acked),
            ACK,
            field,
            &[1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 5],
            &[],
        );
        o.on_packet(at, 0, false, &mut a);
        a
    }

    fn set_target(o: &KernelOal, bytes: Option<u64>) {
        o.monitor.lock().unwrap().flows[0].target_bytes = bytes;
    }

    #[test]
    fn the_rewrite_scales_the_target_by_the_flows_window_scale_for_scales_0_to_14() {
        for ws in 0u8..=14 {
            let mut o = kernel_oal("min_window = \"0B\"");
            handshake(&mut o, Some(7), Some(ws));
            assert_eq!(o.flows[0].wscale, Some(ws));
            let unit = 1u64 << ws;
            // The client advertises 40000 units; the target is 12345 units and a bit.
            set_target(&o, Some(12_345 * unit + unit - 1));
            let a = ack(&mut o, 10, 1448, 40_000);
            assert_eq!(
                window_field(&a),
                12_345,
                "wscale {ws}: the target in units of 2^{ws}, rounded down"
            );
            assert!(checksums_valid(&a), "wscale {ws}");
            // A target above the advertisement: the ACK passes untouched.
            set_target(&o, Some(50_000 * unit));
            let b = ack(&mut o, 20, 1448, 40_000);
            assert_eq!(window_field(&b), 40_000, "wscale {ws}: never raised");
            // An advertisement below the target's units is never raised either.
            set_target(&o, Some(12_345 * unit));
            let c = ack(&mut o, 30, 1448, 1_000);
            assert_eq!(window_field(&c), 1_000, "wscale {ws}");
            assert_eq!(
                (o.flows[0].acks, o.flows[0].rewritten),
                (3, 1),
                "wscale {ws}"
            );
            assert_eq!(o.flows[0].written_max_bytes, 12_345 * unit);
        }
    }

    #[test]
    fn without_the_senders_window_scale_option_windows_are_unscaled() {
        // RFC 7323 §2.2: scaling is in force only when both SYNs carry the option.
        let mut o = kernel_oal("min_window = \"0B\"");
        handshake(&mut o, None, Some(7));
        assert_eq!(o.flows[0].wscale, Some(0));
        set_target(&o, Some(30_000));
        assert_eq!(window_field(&ack(&mut o, 10, 1448, 60_000)), 30_000);
        // A shift above 14 counts as 14 (RFC 7323 §2.3).
        let mut o = kernel_oal("min_window = \"0B\"");
        handshake(&mut o, Some(7), Some(15));
        assert_eq!(o.flows[0].wscale, Some(MAX_WSCALE));
    }

    #[test]
    fn the_floor_holds_and_no_ack_before_the_syn_ack_is_touched() {
        let mut o = kernel_oal(""); // min_window = 2 segments = 2896 B
        let mut early = tcp(RECEIVER, SENDER, 8, 1, ACK, 60_000, &[], &[]);
        set_target(&o, Some(0));
        o.on_packet(0, 0, false, &mut early);
        assert_eq!(
            (window_field(&early), o.flows[0].acks),
            (60_000, 0),
            "no SYN seen: left alone"
        );
        handshake(&mut o, Some(7), Some(7));
        let a = ack(&mut o, 10, 1448, 20_000);
        assert_eq!(
            window_field(&a),
            2896u16.div_ceil(128),
            "the floor, rounded up to a unit"
        );
    }

    #[test]
    fn sequence_numbers_unwrap_past_2_to_the_32_for_una() {
        let mut o = kernel_oal("");
        handshake(&mut o, Some(7), Some(7));
        // Nine more segments: the sequence crosses 2^32 (ISN 0xfffff000); one ACK for two.
        for k in 1..10u32 {
            let mut d = tcp(
                SENDER,
                RECEIVER,
                ISN.wrapping_add(1 + 1448 * k),
                8,
                ACK,
                502,
                &[],
                &[0; 1448],
            );
            o.on_packet(10 + k as u64, 0, true, &mut d);
        }
        ack(&mut o, 30, 2 * 1448, 1000);
        let m = o.monitor.lock().unwrap();
        let f = &m.flows[0];
        assert_eq!((f.next_seq, f.high_ack), (10 * 1448, 2 * 1448));
        assert_eq!(f.una_pkts(), 8);
        assert_eq!(m.retransmissions, 0);
    }

    /// xorshift64*: a fixed stream of test inputs.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    #[test]
    fn the_incremental_checksum_equals_a_full_recomputation_over_random_packets() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..100_000 {
            let opts = 4 * (rng.next() % 11) as usize;
            let payload = (rng.next() % 1461) as usize; // odd lengths too
            let mut p = vec![0u8; 40 + opts + payload];
            for b in p.iter_mut() {
                *b = rng.next() as u8;
            }
            p[0] = 0x45;
            let total = p.len() as u16;
            p[2..4].copy_from_slice(&total.to_be_bytes());
            p[9] = 6;
            p[32] = (((20 + opts) / 4) as u8) << 4 | (p[32] & 0x0f);
            fix_checksums(&mut p);
            let new = rng.next() as u16;
            let mut incremental = p.clone();
            set_tcp_word(&mut incremental, 20, WINDOW_AT, new);
            let mut full = incremental.clone();
            fix_checksums(&mut full);
            assert_eq!(incremental, full, "window {new:#06x}");
            assert!(checksums_valid(&incremental));
        }
        // RFC 1624 §4's example: the recomputation gives 0x0000, never 0xffff (Eqn. 2's flaw).
        assert_eq!(
            crate::tcp_header::checksum_adjust(0xdd2f, 0x5555, 0x3285),
            0x0000
        );
    }
}
