//! `receiver = "rtsc"`: R-TSC, seed 003 Ch. 3 §3.5 (Fig. 3.5, Algorithm 1). The receiver of an
//! unmodified MPTCP sender estimates each path from the packets that arrive, computes the
//! delay-optimal subflow rates x* of (3.10), turns each into a window cap W̄_r, and whenever a
//! subflow's estimated window exceeds its cap sends intentional triple duplicate ACKs, so the
//! sender halves that subflow's window. The data is already received (it goes to the
//! reordering buffer as usual), so no application byte waits for the halving.
//!
//! ```text
//!  every data segment on subflow r:      count it; one-way delay d = now − TSval;
//!                                        T^p_r = min echo RTT; T^R_r = T^p_r + d − min d
//!                                        if w_r > W̄_r (and no episode on r): DupAcks(r)
//!  every δt (update_ms):                 x̂_r ← β x̂_r + (1−β) pkts/δt
//!                                        w_r ← α w_r + (1−α) pkts·T^R_r/δt
//!                                        c_r ← capacity sample when queued (T^R_r > T^p_r + q)
//!                                        f̂ = Σ x̂_r (3.21); x* = argmin (3.10); W̄_r = cap(x*_r)
//! ```
//!
//! Where the dissertation is silent or loose ([GAP], each a `receiver_params` key):
//! * `update_ms` (δt, default 10): EstimateSubflowPath's update period; (3.10) and the caps are
//!   recomputed at the same period, not per packet (the summary's note).
//! * `window_weight` (α, default 0.75) and `rate_weight` (β, default 0.75): the EWMA weights of
//!   w_r and x̂_r (a time constant of 4 δt = 40 ms, about one RTT of the testbed's paths).
//! * T^R_r: the dissertation takes it "from the TCP timestamp option". The receiver here takes
//!   the propagation RTT T^p_r as the smallest echo RTT (now − TSecr, Linux's
//!   tcp_rcv_rtt_measure_ts, 1 ms resolution) and the queueing part from the one-way delay's
//!   rise above its minimum (arrival − TSval, whose clock offset cancels), so an idle sender's
//!   pause does not inflate T^R as a raw echo sample would.
//! * `queue_ms` (default 2): "T^R > T^p" is read as T^R > T^p + queue_ms (the summary: with "≥"
//!   it always fires). The capacity sample is the arrival rate inside an update period in which
//!   every arrival saw a queue: (arrivals − 1) over the time from the first to the last (at least
//!   4 arrivals), smoothed with `rate_weight`. The printed c_r ← x̂_r takes the period's average
//!   rate, which counts the idle time after a burst's queue drains (an application-limited
//!   video sender idles between frames): on the testbed setting it gave 30 and 6.7 Mbit/s for
//!   paths of 40 and 12.
//! * f̂ (3.21): rove's receiving application reads every in-order byte at once, so the play-back
//!   buffer term is 0 and f̂ = Σ x̂_r; `app_rate_mbps` gives f instead (a player that knows its
//!   stream's rate).
//! * `ca2` (C_a², default 1) of (3.1), as the model library.
//! * A subflow whose capacity was not observed yet (no queue) is left uncapped and (3.10) runs
//!   over the others with the demand they carry (f̂ minus the uncapped subflows' x̂); no cap is
//!   set while that demand is not below their capacity.
//! * Window caps: the closed-form inverse of the single-flow cycle (3.6)–(3.9) with the sender's
//!   decrease factor `beta` (default 0.5, Reno/LIA; 0.7 for CUBIC), not the dissertation's
//!   LIA-coupled search (3.13)–(3.20) (`delay_optimum` module documentation).
//! * `holdoff_rtts` (default 1): after an episode ends (the held segment retransmitted), the next
//!   one on that subflow waits this many T^R_r, so the estimate sees the halved window (the
//!   summary's guard against repeated halvings from the EWMA's lag). One episode at a time per
//!   subflow in any case.
//! * `mss_bytes` (default 1448, rove's): the payload of a packet, converting `app_rate_mbps` and
//!   the reported rates.

use super::delay_optimum::{minimize_delay, window_cap};
use super::{BehaviourReport, ReceiverAction, ReceiverBehaviour, ReceiverView, SegmentArrival};
use rove_sim::Nanos;
use rove_tcp::cc::{params, reject_unknown, ParamError};

/// The parameters (module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RtscParams {
    pub update_ns: Nanos,
    pub window_weight: f64,
    pub rate_weight: f64,
    pub queue_ns: Nanos,
    pub app_rate_mbps: Option<f64>,
    pub ca2: f64,
    pub beta: f64,
    pub holdoff_rtts: f64,
    pub mss_bytes: f64,
}

impl Default for RtscParams {
    fn default() -> Self {
        RtscParams {
            update_ns: 10_000_000,
            window_weight: 0.75,
            rate_weight: 0.75,
            queue_ns: 2_000_000,
            app_rate_mbps: None,
            ca2: 1.0,
            beta: 0.5,
            holdoff_rtts: 1.0,
            mss_bytes: rove_tcp::MSS as f64,
        }
    }
}

/// The fewest arrivals in an update period for a capacity sample (two give one gap; a few more
/// keep a lone pair's jitter out).
const CAPACITY_SAMPLE_PKTS: u32 = 4;

const PARAM_KEYS: &[&str] = &[
    "update_ms",
    "window_weight",
    "rate_weight",
    "queue_ms",
    "app_rate_mbps",
    "ca2",
    "beta",
    "holdoff_rtts",
    "mss_bytes",
];

/// A number in `[lo, hi]` (`(lo, hi]` when `open_lo`), or `None` when absent.
fn within(
    t: &toml::Table,
    key: &str,
    lo: f64,
    hi: f64,
    open_lo: bool,
    what: &str,
) -> Result<Option<f64>, ParamError> {
    let Some(x) = params::number(t, key)? else {
        return Ok(None);
    };
    if (if open_lo { x > lo } else { x >= lo }) && x <= hi {
        return Ok(Some(x));
    }
    let open = if open_lo { "(" } else { "[" };
    Err(ParamError {
        key: key.to_string(),
        message: format!("{x} is out of range; accepted: a number in {open}{lo}, {hi}] ({what})"),
    })
}

impl RtscParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = RtscParams::default();
        let ms = |x: f64| (x * 1e6).round() as Nanos;
        Ok(RtscParams {
            update_ns: within(t, "update_ms", 0.0, 10_000.0, true, "ms")?.map_or(d.update_ns, ms),
            window_weight: within(t, "window_weight", 0.0, 0.999, false, "EWMA weight")?
                .unwrap_or(d.window_weight),
            rate_weight: within(t, "rate_weight", 0.0, 0.999, false, "EWMA weight")?
                .unwrap_or(d.rate_weight),
            queue_ns: within(t, "queue_ms", 0.0, 10_000.0, false, "ms")?.map_or(d.queue_ns, ms),
            app_rate_mbps: within(t, "app_rate_mbps", 0.0, 1e6, true, "Mbit/s")?,
            ca2: within(t, "ca2", 0.0, 1e3, false, "C_a^2")?.unwrap_or(d.ca2),
            beta: within(
                t,
                "beta",
                0.0,
                0.99,
                true,
                "the sender's window decrease factor",
            )?
            .unwrap_or(d.beta),
            holdoff_rtts: within(t, "holdoff_rtts", 0.0, 100.0, false, "RTTs")?
                .unwrap_or(d.holdoff_rtts),
            mss_bytes: within(t, "mss_bytes", 1.0, 65_535.0, false, "bytes")?
                .unwrap_or(d.mss_bytes),
        })
    }
}

/// What R-TSC knows of one subflow's path.
#[derive(Debug, Clone, Copy, Default)]
struct PathEstimate {
    /// Segments that arrived since the last update.
    pkts: u32,
    /// x̂_r, packets/s, and w_r, packets (EWMAs); whether they have a first value.
    x_pps: f64,
    w_pkts: f64,
    estimated: bool,
    /// c_r, packets/s (`None`: no queue seen yet).
    c_pps: Option<f64>,
    /// T^p_r (smallest echo RTT) and the smallest one-way delay, ns.
    tp_ns: Option<Nanos>,
    owd_min_ns: Option<i64>,
    /// The latest T^R_r, ns (`None` before T^p is known).
    rtt_ns: Option<Nanos>,
    /// This period's first and last arrival times, and whether every arrival saw a queue.
    first_arrival_ns: Nanos,
    last_arrival_ns: Nanos,
    all_queued: bool,
    /// x*_r (packets/s) and W̄_r (packets) of the last solve.
    target_pps: Option<f64>,
    cap_pkts: Option<f64>,
    /// An episode runs on this subflow; the earliest time the next may begin.
    in_episode: bool,
    next_allowed_ns: Nanos,
}

pub struct Rtsc {
    params: RtscParams,
    paths: Vec<PathEstimate>,
    last_update_ns: Option<Nanos>,
    next_update_ns: Nanos,
    /// Scratch for (3.10): capacities, T^p, rates, and the subflow each slot stands for.
    c: Vec<f64>,
    tp: Vec<f64>,
    x: Vec<f64>,
    who: Vec<usize>,
}

impl Rtsc {
    pub fn new(params: RtscParams) -> Self {
        Rtsc {
            params,
            paths: Vec::with_capacity(8),
            last_update_ns: None,
            next_update_ns: 0,
            c: Vec::with_capacity(8),
            tp: Vec::with_capacity(8),
            x: Vec::with_capacity(8),
            who: Vec::with_capacity(8),
        }
    }

    pub fn build(t: &toml::Table) -> Result<Box<dyn ReceiverBehaviour>, ParamError> {
        Ok(Box::new(Rtsc::new(RtscParams::from_table(t)?)))
    }

    fn path(&mut self, sub: usize) -> &mut PathEstimate {
        if sub >= self.paths.len() {
            self.paths.resize(sub + 1, PathEstimate::default()); // once per new subflow
        }
        &mut self.paths[sub]
    }

    /// Subflow `sub`'s window cap, packets (`None`: uncapped).
    pub fn window_cap(&self, sub: usize) -> Option<f64> {
        self.paths.get(sub).and_then(|p| p.cap_pkts)
    }

    /// Subflow `sub`'s estimated window, packets.
    pub fn window_estimate(&self, sub: usize) -> Option<f64> {
        self.paths
            .get(sub)
            .filter(|p| p.estimated)
            .map(|p| p.w_pkts)
    }

    /// The update at the end of a δt period (EstimateSubflowPath), then (3.10) and the caps.
    fn update(&mut self, now: Nanos, view: &ReceiverView) {
        let Some(last) = self.last_update_ns.replace(now) else {
            return; // the first period starts now
        };
        let dt_s = (now - last) as f64 / 1e9;
        if dt_s <= 0.0 {
            return;
        }
        let p = self.params;
        let mut demand_pps = p.app_rate_mbps.map(|m| m * 1e6 / 8.0 / p.mss_bytes);
        let mut f_hat = 0.0;
        for (sub, e) in self.paths.iter_mut().enumerate() {
            if view.is_closed(sub) {
                continue;
            }
            let x_now = e.pkts as f64 / dt_s;
            let rtt_s = e.rtt_ns.map(|r| r as f64 / 1e9);
            let w_now = rtt_s.map_or(0.0, |r| e.pkts as f64 * r / dt_s);
            if e.estimated {
                e.x_pps = p.rate_weight * e.x_pps + (1.0 - p.rate_weight) * x_now;
                e.w_pkts = p.window_weight * e.w_pkts + (1.0 - p.window_weight) * w_now;
            } else if e.pkts > 0 {
                (e.x_pps, e.w_pkts, e.estimated) = (x_now, w_now, true);
            }
            // A capacity sample: the arrival rate of a busy period, (pkts − 1) over the time
            // from the period's first arrival to its last, when every arrival saw a queue.
            if e.all_queued && e.pkts >= CAPACITY_SAMPLE_PKTS {
                let span_s = (e.last_arrival_ns - e.first_arrival_ns) as f64 / 1e9;
                if span_s > 0.0 {
                    let sample = (e.pkts - 1) as f64 / span_s;
                    e.c_pps = Some(match e.c_pps {
                        Some(c) => p.rate_weight * c + (1.0 - p.rate_weight) * sample,
                        None => sample,
                    });
                }
            }
            e.pkts = 0;
            f_hat += e.x_pps; // (3.21) with an empty play-back buffer
        }
        let f = *demand_pps.get_or_insert(f_hat);
        // (3.10) over the subflows whose capacity and T^p are known; the others keep their rate.
        self.c.clear();
        self.tp.clear();
        self.who.clear();
        let mut uncapped_pps = 0.0;
        for (sub, e) in self.paths.iter_mut().enumerate() {
            e.target_pps = None;
            e.cap_pkts = None;
            if view.is_closed(sub) {
                continue;
            }
            match (e.c_pps, e.tp_ns) {
                (Some(c), Some(tp)) if c > 0.0 => {
                    self.c.push(c);
                    self.tp.push(tp as f64 / 1e9);
                    self.who.push(sub);
                }
                _ => uncapped_pps += e.x_pps,
            }
        }
        self.x.clear();
        self.x.resize(self.c.len(), 0.0);
        let residual = f - uncapped_pps;
        if residual <= 0.0
            || minimize_delay(&self.c, &self.tp, residual, p.ca2, &mut self.x).is_none()
        {
            return;
        }
        for (i, &sub) in self.who.iter().enumerate() {
            let e = &mut self.paths[sub];
            e.target_pps = Some(self.x[i]);
            e.cap_pkts = window_cap(self.x[i], self.c[i], self.tp[i], p.beta);
        }
    }
}

impl ReceiverBehaviour for Rtsc {
    fn name(&self) -> &'static str {
        "rtsc"
    }

    fn on_segment(
        &mut self,
        a: &SegmentArrival,
        view: &ReceiverView,
        actions: &mut Vec<ReceiverAction>,
    ) {
        if self.last_update_ns.is_none() {
            self.last_update_ns = Some(a.now);
            self.next_update_ns = a.now + self.params.update_ns;
        }
        let holdoff = self.params.holdoff_rtts;
        let queue_ns = self.params.queue_ns;
        let e = self.path(a.sub);
        e.pkts += 1;
        if let Some(r) = a.echo_rtt_ns.filter(|&r| r > 0) {
            e.tp_ns = Some(e.tp_ns.map_or(r, |t| t.min(r)));
        }
        let owd = a.now as i64 - a.sent_at as i64;
        let owd_min = *e.owd_min_ns.get_or_insert(owd);
        e.owd_min_ns = Some(owd_min.min(owd));
        if let Some(tp) = e.tp_ns {
            e.rtt_ns = Some(tp + (owd - owd_min).max(0) as Nanos);
        }
        let queued = matches!((e.rtt_ns, e.tp_ns), (Some(r), Some(tp)) if r > tp + queue_ns);
        if e.pkts == 1 {
            (e.first_arrival_ns, e.all_queued) = (a.now, queued);
        }
        e.last_arrival_ns = a.now;
        e.all_queued &= queued;
        if e.in_episode && !view.receiver(a.sub).is_holding() {
            e.in_episode = false;
            let rtt = e.rtt_ns.unwrap_or(0) as f64;
            e.next_allowed_ns = a.now + (holdoff * rtt) as Nanos;
        }
        // Algorithm 1 line 8: w_r > W̄_r^Dup → do not advance the ACK (a duplicate-ACK episode),
        // at a segment that is in order on its subflow.
        let over_cap = matches!(e.cap_pkts, Some(cap) if e.estimated && e.w_pkts > cap);
        if over_cap && !e.in_episode && a.now >= e.next_allowed_ns && a.in_order && !a.duplicate {
            e.in_episode = true;
            actions.push(ReceiverAction::DupAcks { sub: a.sub });
        }
    }

    fn wake_at(&self) -> Option<Nanos> {
        self.last_update_ns.map(|_| self.next_update_ns)
    }

    fn on_wake(&mut self, now: Nanos, view: &ReceiverView, _actions: &mut Vec<ReceiverAction>) {
        if now < self.next_update_ns {
            return;
        }
        self.update(now, view);
        self.next_update_ns = now + self.params.update_ns;
    }

    fn report(&self) -> Option<BehaviourReport> {
        let mbps = |pps: f64| pps * self.params.mss_bytes * 8.0 / 1e6;
        Some(BehaviourReport {
            window_cap_pkts: self.paths.iter().map(|p| p.cap_pkts).collect(),
            capacity_mbps: self.paths.iter().map(|p| p.c_pps.map(mbps)).collect(),
            target_rate_mbps: self.paths.iter().map(|p| p.target_pps.map(mbps)).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_validated_with_the_accepted_keys() {
        let t = |s: &str| -> toml::Table { s.parse().unwrap() };
        let p = RtscParams::from_table(&t("update_ms = 20\nbeta = 0.7")).unwrap();
        assert_eq!((p.update_ns, p.beta), (20_000_000, 0.7));
        let e = RtscParams::from_table(&t("cap = 3")).unwrap_err();
        assert_eq!(e.key, "cap");
        assert!(
            e.message.contains("accepted: update_ms, window_weight"),
            "{}",
            e.message
        );
        let e = RtscParams::from_table(&t("window_weight = 1.5")).unwrap_err();
        assert_eq!(e.key, "window_weight");
        assert!(e.message.contains("[0, 0.999]"), "{}", e.message);
        let e = RtscParams::from_table(&t("update_ms = \"10ms\"")).unwrap_err();
        assert_eq!(e.key, "update_ms");
    }
}
