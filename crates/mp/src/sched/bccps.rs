//! BCCPS's packet scheduler (Wei, Xue, Han, Xing, Wei, Hong, IEEE TVT 2021, "BBR-Based
//! Congestion Control and Packet Scheduling for Bottleneck Fairness Considered Multipath TCP in
//! Heterogeneous Wireless Networks", §III-C, Algorithm 2; summary: seed-001 §2.5).
//!
//! The scheduler keeps a FIFO send queue per subflow at the connection ([`Pick::Enqueue`], see
//! the `sched` module): it "schedul[es] more packets on a subflow than what it can currently
//! send, so the queues may therefore build up at the sender", and each subflow sends its queue
//! in order as its cwnd allows. Two phases:
//!
//! 1. **Redundant phase** (Algorithm 2 lines 1–7): while fewer than `T_threshold` bytes of
//!    unique data were scheduled (`count_data`), each new DSN is queued on every usable or
//!    joining subflow. Mouse flows (≤ 100 KB) then finish at the fastest path's pace, and every
//!    subflow's BBR gets its first BtlBW and RTprop samples. Copies still queued when the DSN is
//!    DATA_ACKed are dropped by the connection ([GAP] below).
//! 2. **Forward prediction** (lines 8–20, Eqs. 7–9): each new DSN goes to the available subflow
//!    with the smallest predicted arrival time
//!
//!    ```text
//!    T_r     = T_net^r + T_wait^r                                  (7)
//!    T_net^r = RTT_r / 2 + q_r · RTT_r                             (8)
//!    T_wait^r = k_r / BtlBW_r                                      (9)
//!    ```
//!
//!    one-way delay, plus one retransmission's RTT weighted by the loss rate q_r ("we assume
//!    that the lost packet can successfully arrive at the receiver by one retransmission"),
//!    plus the time to drain the k_r bytes ahead of it on the subflow at its bottleneck
//!    bandwidth. T_min starts at +∞ for every DSN; ties go to the lowest subflow index.
//!    Consecutive DSNs then get non-decreasing predicted arrival times and arrive nearly in
//!    order, which is what keeps the receiver's reordering buffer small.
//!
//! Inputs: BtlBW_r and RTprop_r are the subflow's congestion-control model
//! (`CongestionControl::path_model`: BBR's bbr_bw and min_rtt); q_r is the connection's
//! per-subflow loss-rate EWMA (`SubflowInfo::loss_rate`); k_r is counted in bytes: the
//! subflow's send queue plus the segments its TCP sender holds unsent (MSS each).
//!
//! Where the paper is silent ([GAP] in seed-001 §2.5), with the choice made here; each is a
//! `scheduler_params` key:
//!
//! | key | default | choice |
//! |---|---|---|
//! | `redundant_bytes` | 100000 | T_threshold = "100 KB" of unique connection-level data, 1 KB = 1000 B as rove's sizes ("100KB" in a scenario is 100000 B); Algorithm 2 counts packets (`count_data++`), the summary suggests bytes: a DSN is redundant while the bytes before it are < T_threshold, so 70 full segments (DSNs 0..=69, 101360 B) are. 0 disables the phase |
//! | `rtt` | `"srtt"` | RTT_r: the smoothed RTT (RTprop plus the current queueing delay), or `"rtprop"` (the model's min RTT) |
//! | `queue_cap_bdp` | 2 | a subflow's send queue is full at ≥ `queue_cap_bdp` · BDP_r bytes: "cap each subflow queue (e.g. 2·BDP_r) so that a path that suddenly dies does not strand data" |
//! | `cap_rtt` | `"max"` | the cap's BDP_r = BtlBW_r · RTT' with RTT' the largest RTprop among the available subflows, as the paper's own Eq. 2 defines BDP_r (with Eq. 1's RTT' = max RTprop, there over a shared-bottleneck set); `"own"`: BtlBW_r · RTprop_r |
//! | `at_cap` | `"wait"` | a full queue does not change the choice: when the subflow with the least T_r is full the scheduler waits (Algorithm 2 line 19 always schedules on the argmin); `"skip"`: a full subflow is not a candidate, the least T_r among the others is chosen, and the scheduler waits only when all are full |
//! | `count_inflight` | false | k_r counts "unsent packets in queue" only; `true` adds the subflow's packets in flight |
//! | `serialization` | false | `true` adds the packet's own serialisation time, its payload / BtlBW_r, to T_wait |
//! | `probe_rtt_available` | true | "available" = usable (established, not potentially failed, not paused) with BtlBW_r > 0; a subflow in PROBE_RTT (cwnd 4) stays available (its k_r/BtlBW_r then understates its wait); `false` excludes it |
//! | `unsampled` | `"cwnd_rate"` | a usable subflow with no bandwidth sample yet (it has not carried data: a subflow that joins after the redundant phase, or every subflow without it) predicts with its window's rate, cwnd·MSS/srtt, in place of BtlBW_r; `"skip"` leaves it out, and then a subflow that never got data never gets a sample and is never used (measured without the redundant phase on seed-001's WiFi + LTE paths: the LTE subflow starves, the 100 MB download takes 75.9 s where it takes 30.8 s) |
//! | `fallback` | `"minrtt"` | when no usable subflow has a bandwidth sample (a BBR subflow before its first delivery-rate sample, or an algorithm without a model): minRTT's choice, sent at once ([`Pick::New`]); `"wait"` sends nothing (Algorithm 2 read literally: T_min stays ∞), which needs the redundant phase to get the first samples and stalls a connection whose subflows have no model |
//! | `loss_rate_weight` | 0.125 | q_r is an EWMA of the fraction of segments lost between consecutive loss events (entering Recovery, or an RTO), starting at 0; "Suggested EWMA weight 1/8" |
//! | `receive_buffer_optimization` | false | BCCPS replaces the default scheduler's logic, so the kernel's opportunistic retransmission and penalisation (mptcp_rcv_buf_optimization) do not run; `true` runs them when the connection window blocks new data |
//!
//! Why `cap_rtt = "max"` and `at_cap = "wait"`: a bulk transfer always has data, so the
//! queues grow until a cap binds, and then the cap decides. With `"skip"` every queue fills
//! to its cap and the choice goes to whichever has room, whatever its T_r: DSNs then wait on
//! paths whose predicted arrival differs by up to the caps' difference (measured on
//! seed-001's Table II paths: twice minRTT's reordering, `crates/world/tests/bccps.rs`). With
//! `"wait"` the least-T_r choice is kept, and a path is used only once the faster paths'
//! queues predict a later arrival than it; a cap of 2·BtlBW_r·RTprop_r on a 20-ms path (40 ms
//! of queue) is below the 40-ms one-way-delay gap to a 100-ms path, which then never gets
//! data; 2·BtlBW_r·max RTprop always exceeds the gap.
//!
//! Not from the paper: when the connection window (or the application) has no new data, the
//! scheduler waits; reinjections after an RTO are the connection's (as MPTCP's); duplicates of
//! the redundant phase still queued when their data is DATA_ACKed are dropped ("Suggest
//! dropping still-unsent duplicates from the per-subflow queues once the data is DATA-ACKed").

use super::{lowest_rtt, Pick, SchedContext, Scheduler, SubflowInfo};
use crate::SubflowMask;
use rove_tcp::cc::{params, reject_unknown, ModelPhase, ParamError};

/// T_threshold, bytes of unique data: Algorithm 2's "100 KB" mouse-flow threshold (seed-001
/// §2.5, "Use 100 KB of unique connection-level data"), in rove's decimal KB.
pub const REDUNDANT_BYTES: u32 = 100_000;
/// Send-queue cap in BDPs (seed-001 §2.5 [GAP]: "cap each subflow queue (e.g. 2·BDP_r)").
pub const QUEUE_CAP_BDP: f64 = 2.0;

/// Which RTT Eq. 8 uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttChoice {
    Srtt,
    Rtprop,
}

/// The RTT of the send-queue cap's BDP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapRtt {
    /// The subflow's own RTprop: BDP_r = BtlBW_r · RTprop_r.
    Own,
    /// The largest RTprop among the available subflows (Eq. 1's RTT', Eq. 2's BDP_r).
    Max,
}

/// What a full send queue does to the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtCap {
    /// The subflow is not a candidate; the least T_r among the others is chosen.
    Skip,
    /// The subflow stays a candidate; if it has the least T_r, the scheduler waits.
    Wait,
}

/// How a usable subflow without a bandwidth sample predicts (`unsampled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsampled {
    /// cwnd·MSS/srtt in place of BtlBW_r.
    CwndRate,
    /// Not available until it has a sample.
    Skip,
}

/// What happens when no usable subflow has a bandwidth sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    MinRtt,
    Wait,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BccpsParams {
    pub redundant_bytes: u32,
    pub rtt: RttChoice,
    pub queue_cap_bdp: f64,
    pub cap_rtt: CapRtt,
    pub at_cap: AtCap,
    pub count_inflight: bool,
    pub serialization: bool,
    pub probe_rtt_available: bool,
    pub unsampled: Unsampled,
    pub fallback: Fallback,
    pub loss_rate_weight: f64,
    pub receive_buffer_optimization: bool,
}

impl Default for BccpsParams {
    fn default() -> Self {
        BccpsParams {
            redundant_bytes: REDUNDANT_BYTES,
            rtt: RttChoice::Srtt,
            queue_cap_bdp: QUEUE_CAP_BDP,
            cap_rtt: CapRtt::Max,
            at_cap: AtCap::Wait,
            count_inflight: false,
            serialization: false,
            probe_rtt_available: true,
            unsampled: Unsampled::CwndRate,
            fallback: Fallback::MinRtt,
            loss_rate_weight: super::DEFAULT_LOSS_RATE_WEIGHT,
            receive_buffer_optimization: false,
        }
    }
}

/// The `scheduler_params` keys BCCPS accepts.
pub const PARAM_KEYS: &[&str] = &[
    "redundant_bytes",
    "rtt",
    "queue_cap_bdp",
    "cap_rtt",
    "at_cap",
    "count_inflight",
    "serialization",
    "probe_rtt_available",
    "unsampled",
    "fallback",
    "loss_rate_weight",
    "receive_buffer_optimization",
];

/// A number in `(lo, hi]`, `default` when absent.
fn number_in(
    t: &toml::Table,
    key: &str,
    default: f64,
    lo: f64,
    hi: f64,
) -> Result<f64, ParamError> {
    match params::number(t, key)? {
        None => Ok(default),
        Some(x) if x > lo && x <= hi => Ok(x),
        Some(x) => Err(ParamError {
            key: key.into(),
            message: format!("{x} is out of range; accepted: a number in ({lo}, {hi}]"),
        }),
    }
}

impl BccpsParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = BccpsParams::default();
        let p = BccpsParams {
            redundant_bytes: params::integer(
                t,
                "redundant_bytes",
                d.redundant_bytes,
                0,
                u32::MAX,
                "bytes",
            )?,
            rtt: match params::choice(t, "rtt", "srtt", &["srtt", "rtprop"])? {
                "srtt" => RttChoice::Srtt,
                _ => RttChoice::Rtprop,
            },
            queue_cap_bdp: number_in(t, "queue_cap_bdp", d.queue_cap_bdp, 0.0, 1000.0)?,
            cap_rtt: match params::choice(t, "cap_rtt", "max", &["max", "own"])? {
                "own" => CapRtt::Own,
                _ => CapRtt::Max,
            },
            at_cap: match params::choice(t, "at_cap", "wait", &["wait", "skip"])? {
                "skip" => AtCap::Skip,
                _ => AtCap::Wait,
            },
            count_inflight: params::boolean(t, "count_inflight", d.count_inflight)?,
            serialization: params::boolean(t, "serialization", d.serialization)?,
            probe_rtt_available: params::boolean(t, "probe_rtt_available", d.probe_rtt_available)?,
            unsampled: match params::choice(t, "unsampled", "cwnd_rate", &["cwnd_rate", "skip"])? {
                "skip" => Unsampled::Skip,
                _ => Unsampled::CwndRate,
            },
            fallback: match params::choice(t, "fallback", "minrtt", &["minrtt", "wait"])? {
                "minrtt" => Fallback::MinRtt,
                _ => Fallback::Wait,
            },
            loss_rate_weight: number_in(t, "loss_rate_weight", d.loss_rate_weight, 0.0, 1.0)?,
            receive_buffer_optimization: params::boolean(
                t,
                "receive_buffer_optimization",
                d.receive_buffer_optimization,
            )?,
        };
        if p.fallback == Fallback::Wait && p.redundant_bytes == 0 {
            return Err(ParamError {
                key: "fallback".into(),
                message:
                    "\"wait\" with redundant_bytes = 0 never sends a first segment (no subflow \
                          gets a bandwidth sample); accepted: \"minrtt\", or \"wait\" with \
                          redundant_bytes > 0"
                        .into(),
            });
        }
        Ok(p)
    }
}

pub struct Bccps {
    pub params: BccpsParams,
    /// count_data: bytes of unique data scheduled in the redundant phase.
    redundant_scheduled: u64,
}

impl Bccps {
    pub fn new(params: BccpsParams) -> Self {
        Bccps {
            params,
            redundant_scheduled: 0,
        }
    }

    /// The registry's builder.
    pub fn build(t: &toml::Table) -> Result<Box<dyn Scheduler>, ParamError> {
        Ok(Box::new(Bccps::new(BccpsParams::from_table(t)?)))
    }

    /// Whether the next DSN is still redundant (fewer than `redundant_bytes` were scheduled).
    pub fn in_redundant_phase(&self) -> bool {
        self.redundant_scheduled < self.params.redundant_bytes as u64
    }

    /// The bandwidth a subflow predicts with, bit/s: its BtlBW_r, or before its first sample
    /// (with `unsampled = "cwnd_rate"`) its window's rate cwnd·MSS/srtt; 0 when neither.
    pub fn bandwidth_bps(&self, s: &SubflowInfo) -> f64 {
        if s.btl_bw_bps > 0.0 {
            return s.btl_bw_bps;
        }
        match self.params.unsampled {
            Unsampled::CwndRate if s.srtt_us > 0 => {
                s.cwnd as f64 * s.mss as f64 * 8.0 / (s.srtt_us as f64 / 1e6)
            }
            _ => 0.0,
        }
    }

    /// Usable with a bandwidth to predict with (and not in PROBE_RTT unless
    /// `probe_rtt_available`).
    fn available(&self, s: &SubflowInfo) -> bool {
        s.usable
            && self.bandwidth_bps(s) > 0.0
            && (self.params.probe_rtt_available || s.phase != Some(ModelPhase::ProbeRtt))
    }

    /// The send-queue cap, bytes: `queue_cap_bdp` · BtlBW_r · RTT, where RTT is the subflow's
    /// RTprop, or with `cap_rtt = "max"` `max_rtprop_us` (the largest RTprop among the
    /// available subflows, Eq. 1's RTT').
    pub fn queue_cap_bytes(&self, s: &SubflowInfo, max_rtprop_us: u64) -> f64 {
        let rtt_us = match self.params.cap_rtt {
            CapRtt::Own => s.rtprop_us,
            CapRtt::Max => max_rtprop_us,
        };
        self.params.queue_cap_bdp * self.bandwidth_bps(s) / 8.0 * rtt_us as f64 / 1e6
    }

    /// T_r of Eqs. 7–9 for a packet of `payload` bytes, seconds.
    pub fn predicted_arrival_s(&self, s: &SubflowInfo, payload: u32) -> f64 {
        let rtt_us = match self.params.rtt {
            RttChoice::Srtt => s.srtt_us,
            RttChoice::Rtprop => s.rtprop_us,
        };
        let rtt = rtt_us as f64 / 1e6;
        let t_net = rtt / 2.0 + s.loss_rate * rtt; // Eq. 8
        let mut k = s.queued_bytes + s.unsent as u64 * s.mss as u64;
        if self.params.count_inflight {
            k += s.in_flight as u64 * s.mss as u64;
        }
        if self.params.serialization {
            k += payload as u64;
        }
        let t_wait = k as f64 * 8.0 / self.bandwidth_bps(s); // Eq. 9
        t_net + t_wait // Eq. 7
    }

    /// Phase 2's choice for the next DSN (Algorithm 2 lines 9–19, with the queue cap).
    pub fn predicted_choice(&self, cx: &SchedContext) -> Prediction {
        let max_rtprop_us = cx
            .subflows
            .iter()
            .filter(|s| self.available(s))
            .map(|s| s.rtprop_us)
            .max();
        let Some(max_rtprop_us) = max_rtprop_us else {
            return Prediction::NoSample;
        };
        let mut best: Option<(usize, f64, bool)> = None;
        for (i, s) in cx.subflows.iter().enumerate() {
            if !self.available(s) {
                continue;
            }
            let full = s.queued_bytes as f64 >= self.queue_cap_bytes(s, max_rtprop_us);
            if full && self.params.at_cap == AtCap::Skip {
                continue;
            }
            let t = self.predicted_arrival_s(s, cx.next_payload_bytes);
            if best.is_none_or(|(_, t_min, _)| t < t_min) {
                best = Some((i, t, full));
            }
        }
        // With `at_cap = "wait"` the earliest arrival may be a full queue: wait for it.
        match best {
            Some((i, _, false)) => Prediction::Subflow(i),
            _ => Prediction::Full,
        }
    }
}

/// The outcome of phase 2's prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prediction {
    /// The subflow with the least predicted arrival time.
    Subflow(usize),
    /// That subflow's queue is full (`at_cap = "skip"`: every available one is).
    Full,
    /// No usable subflow has a bandwidth sample.
    NoSample,
}

impl Scheduler for Bccps {
    fn name(&self) -> &'static str {
        "bccps"
    }

    fn uses_receive_buffer_optimization(&self) -> bool {
        self.params.receive_buffer_optimization
    }

    fn loss_rate_weight(&self) -> f64 {
        self.params.loss_rate_weight
    }

    fn uses_extended_info(&self) -> bool {
        true
    }

    fn pick(&mut self, cx: &SchedContext) -> Pick {
        if !cx.can_send_new {
            return Pick::Wait;
        }
        if self.in_redundant_phase() {
            let mask = cx
                .subflows
                .iter()
                .enumerate()
                .filter(|(_, s)| s.usable || s.joining)
                .fold(0, |m: SubflowMask, (i, _)| m | 1 << i);
            if mask == 0 {
                return Pick::Wait;
            }
            self.redundant_scheduled += cx.next_payload_bytes as u64;
            return Pick::Enqueue(mask);
        }
        match self.predicted_choice(cx) {
            Prediction::Subflow(r) => Pick::Enqueue(1 << r),
            Prediction::Full => Pick::Wait,
            Prediction::NoSample => match self.params.fallback {
                Fallback::MinRtt => match lowest_rtt(cx.subflows, true) {
                    Some(r) => Pick::New(1 << r),
                    None => Pick::Wait,
                },
                Fallback::Wait => Pick::Wait,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_support::{cx, sub};
    use rove_tcp::MSS;

    /// A usable subflow: srtt and RTprop (ms), BtlBW (Mbit/s), loss rate, `queued` bytes.
    fn path(srtt_ms: u64, rtprop_ms: u64, mbps: f64, q: f64, queued: u64) -> SubflowInfo {
        SubflowInfo {
            btl_bw_bps: mbps * 1e6,
            rtprop_us: rtprop_ms * 1000,
            loss_rate: q,
            queued_bytes: queued,
            queued_segs: queued.div_ceil(MSS as u64) as u32,
            phase: Some(ModelPhase::ProbeBw),
            ..sub(srtt_ms, 10, 0)
        }
    }

    fn with(t: &str) -> Bccps {
        Bccps::new(BccpsParams::from_table(&t.parse().unwrap()).unwrap())
    }

    /// Past the redundant phase.
    fn predicting(t: &str) -> Bccps {
        let mut b = with(t);
        b.redundant_scheduled = u64::MAX;
        b
    }

    #[test]
    fn predicted_arrival_matches_eqs_7_to_9() {
        let b = predicting("");
        // Slow path: RTT 80 ms, 20 Mbit/s, q 0.01, 10 000 B queued, 2 segments unsent:
        // 40 ms + 0.8 ms + (10000 + 2·1448)·8 / 20e6 s = 40.8 ms + 5.1584 ms = 45.9584 ms.
        let mut s = path(80, 60, 20.0, 0.01, 10_000);
        s.unsent = 2;
        s.in_flight = 10;
        assert!((b.predicted_arrival_s(&s, MSS) - 0.0459584).abs() < 1e-12);
        // With RTprop (60 ms): 30 + 0.6 + 5.1584 = 35.7584 ms.
        let r = predicting("rtt = \"rtprop\"");
        assert!((r.predicted_arrival_s(&s, MSS) - 0.0357584).abs() < 1e-12);
        // count_inflight adds 10 in flight · 1448 B · 8 / 20e6 = 5.792 ms; serialization adds
        // 1448 · 8 / 20e6 = 0.5792 ms.
        let c = predicting("count_inflight = true\nserialization = true");
        assert!(
            (c.predicted_arrival_s(&s, MSS) - (0.0459584 + 0.005792 + 0.0005792)).abs() < 1e-12
        );
    }

    /// Where the slow path starts to win, by hand. Fast f (index 0): RTT 20 ms, 10 Mbit/s,
    /// q 0; slow s (index 1): RTT 80 ms, 20 Mbit/s, q 0.01, nothing queued.
    ///   T_s = 40 ms + 0.01·80 ms = 40.8 ms
    ///   T_f = 10 ms + k·8 / 10e6 s = 10 ms + 0.8 µs·k
    ///   T_f < T_s  ⇔  k < 30.8 ms / 0.8 µs = 38 500 B
    /// In 1448-byte segments, f takes the DSN with 26 queued (37 648 B, T_f = 40.1184 ms), s
    /// with 27 (39 096 B, T_f = 41.2768 ms).
    #[test]
    fn the_slow_path_wins_past_the_hand_computed_backlog_srtt() {
        let pick = |k: u64| {
            // RTprop = srtt: the fast path's cap, 2 · 10 Mbit/s · 20 ms = 50 000 B, is not hit.
            let subs = [path(20, 20, 10.0, 0.0, k), path(80, 80, 20.0, 0.01, 0)];
            predicting("").pick(&cx(&subs))
        };
        assert_eq!(pick(0), Pick::Enqueue(0b01));
        assert_eq!(pick(26 * MSS as u64), Pick::Enqueue(0b01));
        assert_eq!(pick(38_499), Pick::Enqueue(0b01));
        assert_eq!(pick(38_501), Pick::Enqueue(0b10));
        assert_eq!(pick(27 * MSS as u64), Pick::Enqueue(0b10));
        // T_min starts at +∞ for every DSN, and a tie stays on the lower index.
        let same = [path(20, 15, 10.0, 0.0, 0), path(20, 15, 10.0, 0.0, 0)];
        assert_eq!(predicting("").pick(&cx(&same)), Pick::Enqueue(0b01));
    }

    /// The same with `rtt = "rtprop"`: srtt 30/100 ms (queueing) but RTprop 20/80 ms, so the
    /// crossover is the one above, 38 500 B; with srtt it would be
    ///   T_s = 50 + 1 = 51 ms, T_f = 15 ms + 0.8 µs·k  ⇒  k < 36 ms / 0.8 µs = 45 000 B
    /// (31 segments, 44 888 B, stay on f; 32, 46 336 B, go to s).
    #[test]
    fn the_slow_path_wins_past_the_hand_computed_backlog_rtprop() {
        let pick = |params: &str, k: u64| {
            let subs = [path(30, 20, 10.0, 0.0, k), path(100, 80, 20.0, 0.01, 0)];
            predicting(params).pick(&cx(&subs))
        };
        let rtprop = "rtt = \"rtprop\"";
        assert_eq!(pick(rtprop, 26 * MSS as u64), Pick::Enqueue(0b01));
        assert_eq!(pick(rtprop, 27 * MSS as u64), Pick::Enqueue(0b10));
        assert_eq!(pick("", 31 * MSS as u64), Pick::Enqueue(0b01));
        assert_eq!(pick("", 32 * MSS as u64), Pick::Enqueue(0b10));
        assert_eq!(pick("", 44_999), Pick::Enqueue(0b01));
        assert_eq!(pick("", 45_001), Pick::Enqueue(0b10));
    }

    #[test]
    fn the_redundant_phase_ends_after_100_kb_of_unique_data() {
        // DSN d is redundant while d·1448 < 100 000: DSN 69 (99 912 B before it) is the last,
        // DSN 70 (101 360 B before it) the first predicted one.
        let mut b = with("");
        let mut joining = path(80, 60, 0.0, 0.0, 0);
        joining.usable = false;
        joining.joining = true;
        let mut failed = path(50, 40, 5.0, 0.0, 0);
        failed.usable = false;
        let subs = [path(20, 15, 10.0, 0.0, 0), joining, failed];
        for dsn in 0..70 {
            assert_eq!(
                b.pick(&cx(&subs)),
                Pick::Enqueue(0b011),
                "DSN {dsn}: every usable or joining subflow"
            );
        }
        assert!(!b.in_redundant_phase());
        assert_eq!(
            b.pick(&cx(&subs)),
            Pick::Enqueue(0b001),
            "DSN 70: predicted"
        );
        // Disabled: predicted from the first DSN.
        let mut none = with("redundant_bytes = 0");
        assert_eq!(none.pick(&cx(&subs)), Pick::Enqueue(0b001));
    }

    #[test]
    fn caps_are_bdps_of_the_largest_rtprop_or_of_the_subflows_own() {
        // Fast 10 Mbit/s, RTprop 20 ms; slow 20 Mbit/s, RTprop 80 ms (the largest).
        let (f, s) = (path(20, 20, 10.0, 0.0, 0), path(80, 80, 20.0, 0.01, 0));
        let cap = |params: &str, x: &SubflowInfo| predicting(params).queue_cap_bytes(x, 80_000);
        // Default: 2 · 1.25 MB/s · 80 ms = 200 000 B; 2 · 2.5 MB/s · 80 ms = 400 000 B.
        assert!((cap("", &f) - 200_000.0).abs() < 1e-6);
        assert!((cap("", &s) - 400_000.0).abs() < 1e-6);
        // Own RTprop: 2 · 1.25 MB/s · 20 ms = 50 000 B.
        assert!((cap("cap_rtt = \"own\"", &f) - 50_000.0).abs() < 1e-6);
        assert!((cap("cap_rtt = \"own\"", &s) - 400_000.0).abs() < 1e-6);
        assert!((cap("queue_cap_bdp = 0.5", &f) - 50_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_full_earliest_queue_waits_by_default_and_is_skipped_on_request() {
        // queue_cap_bdp = 0.25 of the largest RTprop (80 ms): the fast path's cap is
        // 0.25 · 1.25 MB/s · 80 ms = 25 000 B, the slow one's 50 000 B. With 25 000 B queued
        // the fast path still has the least T (10 + 20 = 30 ms < 40.8 ms) but is full.
        let pick = |at_cap: &str, kf: u64, ks: u64| {
            let subs = [path(20, 20, 10.0, 0.0, kf), path(80, 80, 20.0, 0.01, ks)];
            predicting(&format!("queue_cap_bdp = 0.25\n{at_cap}")).pick(&cx(&subs))
        };
        let skip = "at_cap = \"skip\"";
        assert_eq!(pick("", 24_999, 0), Pick::Enqueue(0b01));
        assert_eq!(
            pick("", 25_000, 0),
            Pick::Wait,
            "the earliest arrival is full: wait"
        );
        assert_eq!(pick(skip, 24_999, 0), Pick::Enqueue(0b01));
        assert_eq!(
            pick(skip, 25_000, 0),
            Pick::Enqueue(0b10),
            "skipped: the next earliest"
        );
        assert_eq!(pick(skip, 25_000, 50_000), Pick::Wait, "all full");
        // A full queue that is not the earliest does not hold the others back: with 50 000 B
        // on the slow path (full; T = 40.8 + 20 = 60.8 ms) the fast one takes the DSN.
        assert_eq!(pick("", 0, 50_000), Pick::Enqueue(0b01));
    }

    #[test]
    fn without_bandwidth_samples_falls_back_to_min_rtt_or_waits() {
        let subs = [path(80, 60, 0.0, 0.0, 0), path(20, 15, 0.0, 0.0, 0)];
        let skip = "unsampled = \"skip\"";
        assert_eq!(
            predicting(skip).pick(&cx(&subs)),
            Pick::New(0b10),
            "minRTT, sent at once"
        );
        assert_eq!(
            predicting(&format!("{skip}\nfallback = \"wait\"")).pick(&cx(&subs)),
            Pick::Wait
        );
        // One subflow with a sample: with "skip" it alone is available.
        let subs = [path(80, 60, 20.0, 0.0, 0), path(20, 15, 0.0, 0.0, 0)];
        assert_eq!(predicting(skip).pick(&cx(&subs)), Pick::Enqueue(0b01));
        // PROBE_RTT stays available unless excluded.
        let mut probing = path(20, 15, 10.0, 0.0, 0);
        probing.phase = Some(ModelPhase::ProbeRtt);
        let subs = [probing, path(80, 60, 20.0, 0.0, 0)];
        assert_eq!(predicting("").pick(&cx(&subs)), Pick::Enqueue(0b01));
        assert_eq!(
            predicting("probe_rtt_available = false").pick(&cx(&subs)),
            Pick::Enqueue(0b10)
        );
    }

    #[test]
    fn a_subflow_without_a_sample_predicts_with_its_window_rate() {
        // No sample on the 20-ms subflow (cwnd 10): 10 · 1448 B per 20 ms = 5.792 Mbit/s in
        // place of BtlBW. With 30 000 B queued its T = 10 + 30000·8/5.792e6 s = 10 + 41.4 ms =
        // 51.4 ms; the sampled 80-ms subflow (20 Mbit/s, empty queue) predicts 40 ms: it wins.
        // With 20 000 B queued the unsampled one predicts 10 + 27.6 = 37.6 ms and takes it.
        let fresh = path(20, 15, 0.0, 0.0, 30_000);
        assert!((predicting("").bandwidth_bps(&fresh) - 5.792e6).abs() < 1.0);
        let subs = [path(80, 60, 20.0, 0.0, 0), fresh];
        assert_eq!(predicting("").pick(&cx(&subs)), Pick::Enqueue(0b01));
        let subs = [path(80, 60, 20.0, 0.0, 0), path(20, 15, 0.0, 0.0, 20_000)];
        assert_eq!(predicting("").pick(&cx(&subs)), Pick::Enqueue(0b10));
        // Before any RTT sample it has nothing to predict with.
        let mut unborn = path(20, 15, 0.0, 0.0, 0);
        unborn.srtt_us = 0;
        assert_eq!(predicting("").bandwidth_bps(&unborn), 0.0);
    }

    #[test]
    fn parameters_are_validated_naming_the_key() {
        let err = |t: &str| BccpsParams::from_table(&t.parse().unwrap()).unwrap_err();
        let e = err("redundant = 1");
        assert_eq!(e.key, "redundant");
        assert_eq!(
            e.message,
            "unknown parameter; accepted: redundant_bytes, rtt, queue_cap_bdp, cap_rtt, at_cap, \
             count_inflight, \
             serialization, probe_rtt_available, unsampled, fallback, loss_rate_weight, \
             receive_buffer_optimization"
        );
        let e = err("rtt = \"min\"");
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            (
                "rtt",
                "unknown value \"min\"; accepted: \"srtt\", \"rtprop\""
            )
        );
        let e = err("queue_cap_bdp = 0");
        assert_eq!(
            e.message,
            "0 is out of range; accepted: a number in (0, 1000]"
        );
        let e = err("loss_rate_weight = 1.5");
        assert_eq!(e.key, "loss_rate_weight");
        assert_eq!(err("redundant_bytes = -1").key, "redundant_bytes");
        assert_eq!(err("count_inflight = 1").key, "count_inflight");
        assert_eq!(
            err("fallback = \"wait\"\nredundant_bytes = 0").key,
            "fallback"
        );
        let p = BccpsParams::from_table(&toml::Table::new()).unwrap();
        assert_eq!(p, BccpsParams::default());
        assert_eq!(
            (p.redundant_bytes, p.queue_cap_bdp, p.loss_rate_weight),
            (100_000, 2.0, 0.125)
        );
        let b = with("receive_buffer_optimization = true\nloss_rate_weight = 0.25");
        assert!(b.uses_receive_buffer_optimization());
        assert_eq!(b.loss_rate_weight(), 0.25);
        assert!(!with("").uses_receive_buffer_optimization());
    }

    #[test]
    fn waits_when_no_new_data_may_go() {
        let subs = [path(20, 15, 10.0, 0.0, 0)];
        let mut c = cx(&subs);
        c.can_send_new = false;
        assert_eq!(with("").pick(&c), Pick::Wait);
    }
}
