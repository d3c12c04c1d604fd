//! MPTCP-TSC, Traffic Split Control (Park, "Multi-path TCP extension for multimedia QoS in
//! wireless networks", SNU PhD 2016, Ch. 2, §2.4; from Park, Joo, Park, Bahk, ICC 2014;
//! summary: seed-003 §2). A sender-side scheduler for a delay-bounded stream (live video):
//! once per time slot of length Δt it splits the application's rate over the subflows, the
//! cheapest path (cost a_s per unit rate) first, each path only up to the rate whose expected
//! network delay is the threshold d_thr^net, and then rate-limits each subflow to its share.
//!
//! **The delay model** (§2.3). A path of M_s hops, capacity c_s and minimum RTT RTT_s^min
//! carrying x_s packets/s is a closed queueing network (Schwartz): with
//! K_s = M_s − 1 + c_s·RTT_s^min, RTT'_s = K_s / (c_s − x_s) and the one-way network delay is
//!
//! ```text
//!     E[d_s^net(x_s)] ≤ K_s / (2 (c_s − x_s))                                      (2.4)
//!     E[d^send(x)]     = 1 / (Σ_s x_s − f)       the send buffer as M/M/1          (2.1)
//! ```
//!
//! **Each slot k** (§2.4.2), from what the connection knows of the previous slot:
//!
//! ```text
//!     f̃      = (b_{k+1} − b_k)/Δt + Σ_s x_{s,k}                                    (2.12)
//!     c̃_s    = (x_{s,k}·RTT_{s,k} + M_s − 1) / (RTT_{s,k} − RTT_s^min)             (2.13)
//!     x̄_s    = c̃_s − (M_s − 1 + c̃_s·RTT_s^min) / (2·d_thr^net)                     (2.15)
//!     T      = f̃ + 1/d_thr^send                                                    (2.16)
//!     for s by increasing a_s while T > 0:
//!         x_s = min{T, x_s^cw}        in slow start   (the delay bound is dropped)
//!               min{x̄_s, T, x_s^cw}   otherwise                                    (2.17)
//!         x_s = max{x_s, 0, x_s^min};  T −= x_s                                    (2.14)
//!     the subflows left get x_s^min
//! ```
//!
//! (2.13) inverts (2.4): the capacity that explains the RTT the path showed at the rate it
//! carried; (2.15) is the rate whose (2.4) delay is exactly d_thr^net; (2.16) the total whose
//! (2.1) delay is exactly d_thr^send. b is the send-buffer backlog (bytes written and not
//! handed to a subflow, in packets of the subflow MSS), x_{s,k} subflow s's allocation in slot
//! k (`estimate_rate`), RTT_{s,k} its smoothed RTT (srtt), RTT_s^min its minimum RTT (the path model's, else
//! the sender's windowed minimum), x_s^cw = cwnd_s / srtt_s, slow start cwnd < ssthresh. Rates
//! are in packets (of the subflow's MSS) per second and times in seconds, as the formulas mix
//! them (summary §1). The allocator is [`allocate`], the same function as the model library's
//! `rove.models.mptcp_delay.tsc_allocate` (checked on the same inputs:
//! `tsc_python_cases.toml`, here and in `tests/test_mptcp_delay_models.py`).
//!
//! **The rate limiter.** Each subflow has a byte budget, refilled at every slot boundary with
//! x_s·Δt·MSS: the dissertation allocates "the transmission rate from the send buffer to each
//! subflow" without saying how it is enforced (seed-003 §2.4 reads it as a token bucket).
//! A new DSN goes to the cheapest subflow that has budget left, cwnd space and (outside slow
//! start, `delay_check`) a current one-way delay srtt/2 within d_thr^net; when there is none, the
//! data waits in the send buffer. A DSN may take a budget below zero (a segment is not split);
//! the deficit is carried into the next slot, an unspent budget is not, so a subflow's rate
//! over any run of slots is its allocation within one segment.
//!
//! **The slot timer.** The connection asks the scheduler after every ACK, timer and write, but
//! a rate limiter must also act when none comes (budgets exhausted, the data waiting, nothing
//! in flight). The scheduler tells the connection when it wants to be asked again
//! ([`Scheduler::wake_at`]: the end of the current slot), and the connection arms a timer of its
//! own for it (`rove_tcp::Timer::Scheduler`, on subflow 0). So a slot ends exactly every Δt
//! while the connection runs, and (2.12)–(2.13) are measured over slots of length Δt (a slot
//! closes at the first scheduling step at or after its end, which the timer makes its end).
//!
//! Where the dissertation is silent ([UNSPECIFIED] in seed-003 §2.5, "Not given"), the choice made
//! here; each is a `scheduler_params` key:
//!
//! | key | default | choice |
//! |---|---|---|
//! | `d_net_thr_ms` | 100 | d_thr^net; "we set d_thr^net to [100, 500] ms" (§2.4.1), simulated at 100, 200, 500 ms: the default is the tightest |
//! | `d_send_thr_ms` | 100 | d_thr^send = 100 ms (§2.4.1) |
//! | `d_req_ms` | none | d_req, when given, is checked against (2.11)'s d_thr^net + d_thr^send ≤ d_req; the dissertation does not give the d_req of its figures |
//! | `slot_ms` | 10 | Δt: "a short interval (≪ RTT)" (§2.4.1), not given; a quarter of the 40-ms LTE RTT of §2.5 |
//! | `costs` | the paths' `cost` | a_s per subflow (cost per Mbit/s; WiFi 1, LTE 10 in §2.5): one number ≥ 0 per path; by default the scenario's `cost` of each `paths` entry. Ties go to the lower subflow index; a subflow added at run time without a cost is the most expensive |
//! | `hops` | 5 | M_s: the dissertation's model check used M_s = 5 (§2.3); its simulations do not say. A number for every path, or one per path |
//! | `x_min_pps` | 10 | x_s^min, packets/s: "we add a lower bound x_s^min of the transmission rate to periodically measure the RTT_s and c_s" (§2.4.2), its value not given: one packet per d_thr^send (100 ms), so every path's srtt is refreshed several times a second. With 0 a path whose x̄ fell to 0 carries nothing, and (2.13) (evaluated only for a path that carried data, `capacity_update`) never raises it again |
//! | `min_rate_for_unassigned` | true | the subflows left once T ≤ 0 get x^min, as (2.14) bounds every subflow; `false`: 0, as the printed step 4 says (the same when x^min = 0) |
//! | `min_queue_delay_ms` | 0 | (2.13) is undefined without a queue: while srtt − RTT^min ≤ this, c̃_s keeps its previous value (+∞, "c large", before the first), as the model library does |
//! | `estimate_rate` | `"allocated"` | x_{s,k} in (2.12) and (2.13) is "the traffic allocation (from the send buffer) to subflow s at time slot k" (§2.4.1), the allocation; so when a subflow takes less than its allocation (its window or its data ran short) (2.12) counts the shortfall as demand, and the next slot asks for it again. `"carried"`: what the subflow took from the send buffer in slot k (then (2.12) is the send buffer's conservation and f̃ the true arrival rate) |
//! | `capacity_update` | `"carried"` | (2.13) is evaluated only for a subflow that carried data in the slot (its RTT says nothing about a rate it did not carry); `"every_slot"`: for every usable subflow every slot |
//! | `delay_check` | true | a DSN goes only to a subflow whose srtt/2 is within d_thr^net (outside slow start): the allocation bounds the *expected* delay, this keeps a path whose queue is already past the threshold from getting more; `false`: the budgets alone |
//! | `rate_slots` | 1 | (2.12) over the last n slots: (b_{k+1} − b_{k+1−n})/(nΔt) + the mean Σ_s x_s of those slots. Not in the dissertation, which takes one slot (n = 1); larger n smooths a bursty source's f̃ |
//! | `slow_start_exemption` | true | (2.14) as printed: a subflow in slow start (cwnd < ssthresh) has no delay bound, "to help new subflow to rapidly enlarge its congestion window"; `false`: the bound applies in slow start too. A rate-limited subflow that never loses a packet never leaves slow start, so with `true` its delay bound never applies (see `crates/world/tests/tsc.rs`) |
//! | `backlog_term` | false | not in the dissertation: (2.16) with the backlog b, T = f̃ + (1 + b)/d_thr^send, the rate that also empties what waits within d_thr^send (Little's law). (2.16) as printed (`false`) has no such term, so a backlog left when the subflows could not take a burst drains at 1/d_thr^send = 10 packets/s (see `crates/world/tests/tsc.rs`) |
//! | `receive_buffer_optimization` | false | TSC replaces the default scheduler, so the kernel's opportunistic retransmission and penalisation (mptcp_rcv_buf_optimization) do not run; `true` runs them when the connection window blocks new data |
//!
//! Choices that are not parameters: a subflow that is not usable (joining, potentially
//! failed, paused, closed) or has no RTT sample gets rate 0 and takes no part in the slot; with
//! `estimate_rate = "carried"` x_{s,k} counts the new data the scheduler handed the subflow
//! (reinjections do not come from the send buffer); the first slot closes at the first
//! scheduling step with b_k = 0 one slot earlier, so f̃ is the first write's backlog over Δt;
//! the reordering and loss-recovery delays (2.5)–(2.7) enter only through the thresholds, as
//! in (2.11); the scheduler waits when the connection window or the application has no new
//! data, and the connection serves reinjections before asking it.
//!
//! **Measured** (`crates/world/tests/tsc.rs`, the Ch. 2 setting: WiFi 3 Mbit/s at cost 1, LTE
//! 15 Mbit/s at cost 10, a 4-Mbit/s VBR video, d_thr^net = 100 ms): as printed, TSC keeps every
//! WiFi RTT under 2·d_thr^net and costs 8.3 where minRTT costs 39.5, but its send buffer grows
//! all run (0.5 % of the packets within d_req = 200 ms): a burst the windows cannot take in one
//! slot leaves a backlog that (2.16) has no term for, and the subflows never leave slow start,
//! so d_thr^net never binds. With `backlog_term = true` and `slow_start_exemption = false`
//! 99.6 % arrive within 200 ms, at a cost of 19.7.

use super::{Pick, SchedContext, Scheduler, SubflowInfo};
use rove_sim::Nanos;
use rove_tcp::cc::{params, reject_unknown, ParamError};

/// d_thr^send, seconds: "we set ... d_thr^send to 100 ms" (§2.4.1, seed-003 §2.3).
pub const D_SEND_THR_S: f64 = 0.100;
/// d_thr^net, seconds: the lower end of "[100, 500] ms" (§2.4.1); [GAP] which one.
pub const D_NET_THR_S: f64 = 0.100;
/// Δt, seconds: "≪ RTT" (§2.4.1); [GAP] a quarter of the 40-ms LTE RTT of §2.5.
pub const SLOT_S: f64 = 0.010;
/// x_s^min, packets/s: "to periodically measure the RTT_s and c_s" (§2.4.2), value not given;
/// [GAP] one packet per d_thr^send.
pub const X_MIN_PPS: f64 = 10.0;
/// M_s: the hops of the dissertation's model check (§2.3, "M_s = 5"); [GAP] in its simulations.
pub const HOPS: f64 = 5.0;

use crate::MAX_SUBFLOWS;

/// What x_{s,k} is in (2.12) and (2.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EstimateRate {
    /// The allocation of slot k (the symbol's meaning in §2.4).
    Allocated,
    /// What the subflow took from the send buffer in slot k.
    Carried,
}

/// When (2.13) is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityUpdate {
    /// For a subflow that carried data in the slot.
    Carried,
    /// For every usable subflow, every slot.
    EverySlot,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TscParams {
    pub d_net_thr_s: f64,
    pub d_send_thr_s: f64,
    pub d_req_s: Option<f64>,
    pub slot_s: f64,
    /// a_s per subflow, `None`: the paths' costs ([`Scheduler::set_path_costs`]).
    pub costs: Option<Vec<f64>>,
    /// M_s: one value for every path, or one per path.
    pub hops: Vec<f64>,
    pub x_min_pps: f64,
    pub min_rate_for_unassigned: bool,
    pub min_queue_delay_s: f64,
    pub estimate_rate: EstimateRate,
    pub capacity_update: CapacityUpdate,
    pub delay_check: bool,
    pub rate_slots: u32,
    pub slow_start_exemption: bool,
    pub backlog_term: bool,
    pub receive_buffer_optimization: bool,
}

impl Default for TscParams {
    fn default() -> Self {
        TscParams {
            d_net_thr_s: D_NET_THR_S,
            d_send_thr_s: D_SEND_THR_S,
            d_req_s: None,
            slot_s: SLOT_S,
            costs: None,
            hops: vec![HOPS],
            x_min_pps: X_MIN_PPS,
            min_rate_for_unassigned: true,
            min_queue_delay_s: 0.0,
            estimate_rate: EstimateRate::Allocated,
            capacity_update: CapacityUpdate::Carried,
            delay_check: true,
            rate_slots: 1,
            slow_start_exemption: true,
            backlog_term: false,
            receive_buffer_optimization: false,
        }
    }
}

/// The `scheduler_params` keys TSC accepts.
pub const PARAM_KEYS: &[&str] = &[
    "d_net_thr_ms",
    "d_send_thr_ms",
    "d_req_ms",
    "slot_ms",
    "costs",
    "hops",
    "x_min_pps",
    "min_rate_for_unassigned",
    "min_queue_delay_ms",
    "estimate_rate",
    "capacity_update",
    "delay_check",
    "rate_slots",
    "slow_start_exemption",
    "backlog_term",
    "receive_buffer_optimization",
];

/// The most slots (2.12) may span (`rate_slots`): the ring of backlog samples is fixed.
pub const MAX_RATE_SLOTS: u32 = 64;

fn bad(key: &str, message: String) -> ParamError {
    ParamError {
        key: key.into(),
        message,
    }
}

/// A number in `[lo, hi]` (or `(lo, hi]` when `open_lo`), `None` when absent.
fn number_within(
    t: &toml::Table,
    key: &str,
    lo: f64,
    hi: f64,
    open_lo: bool,
    unit: &str,
) -> Result<Option<f64>, ParamError> {
    let Some(x) = params::number(t, key)? else {
        return Ok(None);
    };
    let above = if open_lo { x > lo } else { x >= lo };
    if above && x <= hi {
        Ok(Some(x))
    } else {
        let open = if open_lo { "(" } else { "[" };
        Err(bad(
            key,
            format!("{x} is out of range; accepted: a number in {open}{lo}, {hi}] ({unit})"),
        ))
    }
}

/// One number in `[lo, hi]` or an array of 1 to 8 of them; `None` when absent.
fn numbers(
    t: &toml::Table,
    key: &str,
    lo: f64,
    hi: f64,
    what: &str,
) -> Result<Option<Vec<f64>>, ParamError> {
    let accepted = format!(
        "{what}: a number in [{lo}, {hi}] or an array of 1 to {MAX_SUBFLOWS} of them, one per path"
    );
    let one = |v: &toml::Value| match v {
        toml::Value::Float(f) if f.is_finite() && *f >= lo && *f <= hi => Some(*f),
        toml::Value::Integer(i) if (*i as f64) >= lo && (*i as f64) <= hi => Some(*i as f64),
        _ => None,
    };
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::Array(items)) if !items.is_empty() && items.len() <= MAX_SUBFLOWS => {
            items
                .iter()
                .map(|v| one(v).ok_or_else(|| bad(key, format!("got {v}; accepted: {accepted}"))))
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        }
        Some(v) => match one(v) {
            Some(x) => Ok(Some(vec![x])),
            None => Err(bad(key, format!("got {v}; accepted: {accepted}"))),
        },
    }
}

impl TscParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        reject_unknown(t, PARAM_KEYS)?;
        let d = TscParams::default();
        let ms = |key: &str, default: f64, lo: f64, open_lo: bool| -> Result<f64, ParamError> {
            Ok(number_within(t, key, lo, 60_000.0, open_lo, "ms")?.map_or(default, |x| x / 1e3))
        };
        // (2.11) is checked on the values as written, in ms.
        let given_ms = |key: &str, default_s: f64| -> Result<f64, ParamError> {
            Ok(params::number(t, key)?.unwrap_or(default_s * 1e3))
        };
        let p = TscParams {
            d_net_thr_s: ms("d_net_thr_ms", d.d_net_thr_s, 0.0, true)?,
            d_send_thr_s: ms("d_send_thr_ms", d.d_send_thr_s, 0.0, true)?,
            d_req_s: number_within(t, "d_req_ms", 0.0, 60_000.0, true, "ms")?.map(|x| x / 1e3),
            slot_s: ms("slot_ms", d.slot_s, 0.0, true)?,
            costs: numbers(t, "costs", 0.0, 1e12, "a cost per Mbit/s")?,
            hops: numbers(t, "hops", 1.0, 1000.0, "hops")?.unwrap_or(d.hops),
            x_min_pps: number_within(t, "x_min_pps", 0.0, 1e9, false, "packets/s")?
                .unwrap_or(d.x_min_pps),
            min_rate_for_unassigned: params::boolean(
                t,
                "min_rate_for_unassigned",
                d.min_rate_for_unassigned,
            )?,
            min_queue_delay_s: ms("min_queue_delay_ms", d.min_queue_delay_s, 0.0, false)?,
            estimate_rate: match params::choice(
                t,
                "estimate_rate",
                "allocated",
                &["allocated", "carried"],
            )? {
                "carried" => EstimateRate::Carried,
                _ => EstimateRate::Allocated,
            },
            capacity_update: match params::choice(
                t,
                "capacity_update",
                "carried",
                &["carried", "every_slot"],
            )? {
                "every_slot" => CapacityUpdate::EverySlot,
                _ => CapacityUpdate::Carried,
            },
            delay_check: params::boolean(t, "delay_check", d.delay_check)?,
            rate_slots: params::integer(t, "rate_slots", d.rate_slots, 1, MAX_RATE_SLOTS, "slots")?,
            slow_start_exemption: params::boolean(
                t,
                "slow_start_exemption",
                d.slow_start_exemption,
            )?,
            backlog_term: params::boolean(t, "backlog_term", d.backlog_term)?,
            receive_buffer_optimization: params::boolean(
                t,
                "receive_buffer_optimization",
                d.receive_buffer_optimization,
            )?,
        };
        if p.slot_s * 1e9 < 1.0 {
            return Err(bad(
                "slot_ms",
                format!(
                    "{} ms is below 1 ns; accepted: a number in (0, 60000] (ms) of at least 1e-6",
                    p.slot_s * 1e3
                ),
            ));
        }
        if let Some(req) = params::number(t, "d_req_ms")? {
            let net = given_ms("d_net_thr_ms", d.d_net_thr_s)?;
            let send = given_ms("d_send_thr_ms", d.d_send_thr_s)?;
            if net + send > req {
                return Err(bad(
                    "d_req_ms",
                    format!(
                        "(2.11) needs d_net_thr_ms + d_send_thr_ms <= d_req_ms, got {net} + \
                         {send} > {req}; accepted: d_req_ms >= {}",
                        net + send
                    ),
                ));
            }
        }
        Ok(p)
    }
}

// ------------------------------------------------------------------------------------------
// The model: estimators (2.12)-(2.13), the rate bound (2.15) and the allocator (2.14)-(2.17).

/// (2.12) f_k = (b_{k+1} − b_k)/Δt + Σ_s x_{s,k}: the application's rate over the last slot(s),
/// from the send-buffer backlog (packets) at both ends and what the subflows drained (packets/s).
pub fn estimate_app_rate(backlog_now: f64, backlog_prev: f64, dt_s: f64, drained_pps: f64) -> f64 {
    (backlog_now - backlog_prev) / dt_s + drained_pps
}

/// (2.13) c_{s,k} = (x_{s,k}·RTT_{s,k} + M_s − 1)/(RTT_{s,k} − RTT_s^min), packets/s; `previous`
/// when RTT − RTT^min ≤ `min_queue_delay_s` (undefined without a queue).
pub fn estimate_capacity(
    x_pps: f64,
    rtt_s: f64,
    rtt_min_s: f64,
    hops: f64,
    previous: f64,
    min_queue_delay_s: f64,
) -> f64 {
    if rtt_s - rtt_min_s > min_queue_delay_s {
        (x_pps * rtt_s + hops - 1.0) / (rtt_s - rtt_min_s)
    } else {
        previous
    }
}

/// (2.15) x̄_s = c_s − (M_s − 1 + c_s·RTT_s^min)/(2·d_thr^net): the rate whose (2.4) network delay
/// is d_thr^net; negative when the path cannot meet it. An unobserved capacity (+∞) bounds
/// nothing (+∞) unless RTT^min alone exceeds 2·d_thr^net.
pub fn rate_bound(c_pps: f64, rtt_min_s: f64, hops: f64, d_net_thr_s: f64) -> f64 {
    if c_pps.is_infinite() {
        return if rtt_min_s < 2.0 * d_net_thr_s {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
    }
    c_pps - (hops - 1.0 + c_pps * rtt_min_s) / (2.0 * d_net_thr_s)
}

/// What the allocator knows of one path in a slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathState {
    /// c̃_s (packets/s; +∞ before it is observed).
    pub c_pps: f64,
    /// RTT_{s,k} and RTT_s^min, seconds.
    pub rtt_s: f64,
    pub rtt_min_s: f64,
    /// a_s.
    pub cost: f64,
    /// Congestion window, packets, and whether the subflow is in slow start.
    pub cwnd: f64,
    pub slow_start: bool,
    /// x_s^min, packets/s, and M_s.
    pub x_min_pps: f64,
    pub hops: f64,
}

/// The thresholds of one allocation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub d_net_s: f64,
    pub d_send_s: f64,
    /// (2.14)'s x^min for the subflows left once T ≤ 0 (else 0, the printed step 4).
    pub min_rate_for_unassigned: bool,
}

/// MPTCP-TSC's greedy split (2.14)–(2.17) of f̃ (packets/s) over `paths`, cheapest first (ties:
/// the lower index), into `x` (packets/s, one per path). The model library's `tsc_allocate`,
/// operation for operation.
pub fn allocate(f_pps: f64, paths: &[PathState], thr: Thresholds, x: &mut [f64]) {
    let n = paths.len();
    debug_assert!(n <= MAX_SUBFLOWS && x.len() >= n);
    let mut order = [0usize; MAX_SUBFLOWS];
    for (i, o) in order.iter_mut().enumerate().take(n) {
        *o = i;
    }
    // Insertion sort by (cost, index): stable, no allocation.
    for i in 1..n {
        let mut j = i;
        while j > 0 && paths[order[j]].cost < paths[order[j - 1]].cost {
            order.swap(j, j - 1);
            j -= 1;
        }
    }
    let mut total = f_pps + 1.0 / thr.d_send_s; // (2.16)
    for &s in &order[..n] {
        let p = &paths[s];
        if total <= 0.0 {
            // Step 4: the rest get 0, but (2.14) keeps x^min (see `min_rate_for_unassigned`).
            x[s] = if thr.min_rate_for_unassigned {
                p.x_min_pps
            } else {
                0.0
            };
            continue;
        }
        let x_cw = p.cwnd / p.rtt_s;
        let share = if p.slow_start {
            total.min(x_cw)
        } else {
            rate_bound(p.c_pps, p.rtt_min_s, p.hops, thr.d_net_s)
                .min(total)
                .min(x_cw) // (2.17)
        };
        x[s] = share.max(0.0).max(p.x_min_pps); // x ≥ 0 (2.11), x ≥ x^min (2.14)
        total -= x[s];
    }
}

// ------------------------------------------------------------------------------------------
// The scheduler.

/// One closed slot, for (2.12): the backlog when it opened (packets), what the subflows
/// drained in it (packets) and its length (s).
#[derive(Debug, Clone, Copy, Default)]
struct ClosedSlot {
    backlog_at_start: f64,
    drained: f64,
    length_s: f64,
}

pub struct Tsc {
    pub params: TscParams,
    /// a_s per subflow (+∞ where none is known).
    costs: [f64; MAX_SUBFLOWS],
    /// The current slot: its start and end, and the backlog (packets) when it opened; `None`
    /// before the first scheduling step.
    slot: Option<(Nanos, Nanos)>,
    slot_backlog: f64,
    /// The last `rate_slots` closed slots, a ring (oldest at `ring_head`).
    ring: [ClosedSlot; MAX_RATE_SLOTS as usize],
    ring_head: usize,
    ring_len: usize,
    /// Per subflow: c̃_s, the allocation x_s of the slot, its byte budget, and the new-data bytes
    /// handed to it in the slot.
    c_pps: [f64; MAX_SUBFLOWS],
    x_pps: [f64; MAX_SUBFLOWS],
    budget_bytes: [f64; MAX_SUBFLOWS],
    carried_bytes: [u64; MAX_SUBFLOWS],
    /// f̃ of the current slot (packets/s), and the slots opened so far.
    f_pps: f64,
    pub slots: u64,
}

impl Tsc {
    pub fn new(params: TscParams) -> Self {
        let mut costs = [f64::INFINITY; MAX_SUBFLOWS];
        if let Some(c) = &params.costs {
            costs[..c.len()].copy_from_slice(c);
        }
        Tsc {
            params,
            costs,
            slot: None,
            slot_backlog: 0.0,
            ring: [ClosedSlot::default(); MAX_RATE_SLOTS as usize],
            ring_head: 0,
            ring_len: 0,
            c_pps: [f64::INFINITY; MAX_SUBFLOWS],
            x_pps: [0.0; MAX_SUBFLOWS],
            budget_bytes: [0.0; MAX_SUBFLOWS],
            carried_bytes: [0; MAX_SUBFLOWS],
            f_pps: 0.0,
            slots: 0,
        }
    }

    /// The registry's builder.
    pub fn build(t: &toml::Table) -> Result<Box<dyn Scheduler>, ParamError> {
        Ok(Box::new(Tsc::new(TscParams::from_table(t)?)))
    }

    /// x_s of the current slot, packets/s.
    pub fn allocation(&self) -> &[f64; MAX_SUBFLOWS] {
        &self.x_pps
    }

    /// c̃_s, packets/s (+∞ while unobserved).
    pub fn capacity_estimates(&self) -> &[f64; MAX_SUBFLOWS] {
        &self.c_pps
    }

    /// f̃ of the current slot, packets/s.
    pub fn app_rate_estimate(&self) -> f64 {
        self.f_pps
    }

    /// What subflow `s` may still take in this slot, bytes (negative: a deficit).
    pub fn budget_bytes(&self, s: usize) -> f64 {
        self.budget_bytes[s]
    }

    pub fn costs(&self) -> &[f64; MAX_SUBFLOWS] {
        &self.costs
    }

    fn hops(&self, s: usize) -> f64 {
        let h = &self.params.hops;
        if h.len() == 1 {
            h[0]
        } else {
            h.get(s).copied().unwrap_or(HOPS)
        }
    }

    /// What the allocator knows of subflow `s` now.
    fn path_state(&self, s: usize, info: &SubflowInfo) -> PathState {
        let rtt_min_us = if info.rtprop_us > 0 {
            info.rtprop_us
        } else {
            info.srtt_us
        };
        PathState {
            c_pps: self.c_pps[s],
            rtt_s: info.srtt_us as f64 / 1e6,
            rtt_min_s: rtt_min_us as f64 / 1e6,
            cost: self.costs[s],
            cwnd: info.cwnd as f64,
            slow_start: self.params.slow_start_exemption && info.cwnd < info.ssthresh,
            x_min_pps: self.params.x_min_pps,
            hops: self.hops(s),
        }
    }

    /// Closes the slot that ended at or before `cx.now` (estimating (2.12)–(2.13) over it) and
    /// opens the next: the allocation (2.14)–(2.17) and the budgets.
    fn next_slot(&mut self, cx: &SchedContext) {
        let now = cx.now;
        let n = cx.subflows.len().min(MAX_SUBFLOWS);
        let mss = |s: usize| cx.subflows[s].mss.max(1) as f64;
        // The backlog in packets of the connection's segment size (subflow 0's MSS).
        let backlog = cx.queued_bytes as f64 / mss(0);
        let length_s = match self.slot {
            Some((start, _)) => (now - start) as f64 / 1e9,
            None => self.params.slot_s, // the first: b = 0 one slot ago
        };
        // (2.13) per subflow, x_{s,k} being its allocation in the slot (or what it carried).
        let mut drained = 0.0;
        for s in 0..n {
            let info = &cx.subflows[s];
            let x_pps = match self.params.estimate_rate {
                EstimateRate::Allocated => self.x_pps[s],
                EstimateRate::Carried => self.carried_bytes[s] as f64 / mss(s) / length_s,
            };
            drained += x_pps * length_s;
            let update = match self.params.capacity_update {
                CapacityUpdate::Carried => self.carried_bytes[s] > 0,
                CapacityUpdate::EverySlot => info.usable,
            };
            if update && info.srtt_us > 0 {
                let p = self.path_state(s, info);
                self.c_pps[s] = estimate_capacity(
                    x_pps,
                    p.rtt_s,
                    p.rtt_min_s,
                    p.hops,
                    self.c_pps[s],
                    self.params.min_queue_delay_s,
                );
            }
            self.carried_bytes[s] = 0;
        }
        // (2.12) over the last `rate_slots` closed slots.
        self.push_closed(ClosedSlot {
            backlog_at_start: self.slot_backlog,
            drained,
            length_s,
        });
        let (mut b_then, mut drained_sum, mut span_s) = (0.0, 0.0, 0.0);
        for i in 0..self.ring_len {
            let c = &self.ring[(self.ring_head + i) % MAX_RATE_SLOTS as usize];
            if i == 0 {
                b_then = c.backlog_at_start;
            }
            drained_sum += c.drained;
            span_s += c.length_s;
        }
        // f ≥ 0 always holds for the true rate; rounding of the byte counts may not.
        self.f_pps = estimate_app_rate(backlog, b_then, span_s, drained_sum / span_s).max(0.0);
        // (2.14)-(2.17) over the usable subflows (with an RTT sample).
        let mut paths = [PathState {
            c_pps: 0.0,
            rtt_s: 1.0,
            rtt_min_s: 0.0,
            cost: 0.0,
            cwnd: 0.0,
            slow_start: false,
            x_min_pps: 0.0,
            hops: HOPS,
        }; MAX_SUBFLOWS];
        let mut index = [0usize; MAX_SUBFLOWS];
        let mut m = 0;
        for s in 0..n {
            let info = &cx.subflows[s];
            self.x_pps[s] = 0.0;
            if info.usable && info.srtt_us > 0 {
                paths[m] = self.path_state(s, info);
                index[m] = s;
                m += 1;
            }
        }
        let mut x = [0.0; MAX_SUBFLOWS];
        // `backlog_term`: T = f̃ + b/d + 1/d (the allocator adds the 1/d).
        let demand = if self.params.backlog_term {
            self.f_pps + backlog / self.params.d_send_thr_s
        } else {
            self.f_pps
        };
        allocate(
            demand,
            &paths[..m],
            Thresholds {
                d_net_s: self.params.d_net_thr_s,
                d_send_s: self.params.d_send_thr_s,
                min_rate_for_unassigned: self.params.min_rate_for_unassigned,
            },
            &mut x,
        );
        for j in 0..m {
            self.x_pps[index[j]] = x[j];
        }
        // The budgets: x_s·Δt, plus a deficit carried over (a surplus is not).
        for s in 0..n {
            let refill = self.x_pps[s] * self.params.slot_s * mss(s);
            self.budget_bytes[s] = self.budget_bytes[s].min(0.0) + refill;
        }
        let slot_ns = ((self.params.slot_s * 1e9).round() as Nanos).max(1);
        self.slot = Some((now, now + slot_ns));
        self.slot_backlog = backlog;
        self.slots += 1;
    }

    /// Appends a closed slot, dropping the oldest beyond `rate_slots`.
    fn push_closed(&mut self, c: ClosedSlot) {
        let cap = self.params.rate_slots as usize;
        let tail = (self.ring_head + self.ring_len) % MAX_RATE_SLOTS as usize;
        self.ring[tail] = c;
        if self.ring_len == cap {
            self.ring_head = (self.ring_head + 1) % MAX_RATE_SLOTS as usize;
        } else {
            self.ring_len += 1;
        }
    }

    /// The subflow the next DSN goes to: the cheapest usable one with budget left, cwnd space
    /// and (outside slow start, with `delay_check`) srtt/2 within d_thr^net.
    pub fn choice(&self, cx: &SchedContext) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (s, info) in cx.subflows.iter().enumerate().take(MAX_SUBFLOWS) {
            if !info.available() || self.budget_bytes[s] <= 0.0 {
                continue;
            }
            let slow_start = self.params.slow_start_exemption && info.cwnd < info.ssthresh;
            if self.params.delay_check
                && !slow_start
                && info.srtt_us as f64 / 2e6 > self.params.d_net_thr_s
            {
                continue;
            }
            if best.is_none_or(|b| self.costs[s] < self.costs[b]) {
                best = Some(s);
            }
        }
        best
    }
}

impl Scheduler for Tsc {
    fn name(&self) -> &'static str {
        "tsc"
    }

    fn uses_receive_buffer_optimization(&self) -> bool {
        self.params.receive_buffer_optimization
    }

    fn uses_extended_info(&self) -> bool {
        true // RTT^min (rtprop_us)
    }

    fn pick(&mut self, cx: &SchedContext) -> Pick {
        if self.slot.is_none_or(|(_, end)| cx.now >= end) {
            self.next_slot(cx);
        }
        if !cx.can_send_new {
            return Pick::Wait;
        }
        match self.choice(cx) {
            Some(s) => {
                let payload = cx.next_payload_bytes as u64;
                self.budget_bytes[s] -= payload as f64;
                self.carried_bytes[s] += payload;
                Pick::New(1 << s)
            }
            None => Pick::Wait,
        }
    }

    fn wake_at(&self) -> Option<Nanos> {
        self.slot.map(|(_, end)| end)
    }

    fn set_path_costs(&mut self, n: usize, costs: Option<&[f64]>) -> Result<(), ParamError> {
        if self.params.hops.len() > 1 && self.params.hops.len() != n {
            return Err(bad(
                "hops",
                format!(
                    "{} values for {n} paths; accepted: one number for every path or one per path",
                    self.params.hops.len()
                ),
            ));
        }
        if let Some(given) = &self.params.costs {
            if given.len() != n {
                return Err(bad(
                    "costs",
                    format!(
                        "{} costs for {n} paths; accepted: one number >= 0 per path (cost per \
                         Mbit/s)",
                        given.len()
                    ),
                ));
            }
            return Ok(()); // the parameter wins over the paths' costs
        }
        match costs {
            Some(c) => {
                self.costs[..c.len()].copy_from_slice(c);
                Ok(())
            }
            None => Err(bad(
                "costs",
                "tsc needs each path's cost; accepted: `cost` on every paths entry, or \
                 scheduler_params.costs with one number >= 0 per path"
                    .into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_support::{cx, sub};
    use rove_tcp::MSS;

    const THR_100MS: Thresholds = Thresholds {
        d_net_s: 0.1,
        d_send_s: 0.1,
        min_rate_for_unassigned: true,
    };

    /// Path 0 = LTE: cost 10, c 1500 pkt/s, RTT^min 40 ms (x̄ = 1500 − (4 + 60)/0.2 = 1180);
    /// path 1 = WiFi: cost 1, c 300 pkt/s, RTT^min 20 ms (x̄ = 300 − (4 + 6)/0.2 = 250); both
    /// with srtt 50 ms, M = 5, 1000-packet windows, out of slow start.
    fn lte_wifi() -> [PathState; 2] {
        let p = |c_pps, rtt_min_s, cost| PathState {
            c_pps,
            rtt_s: 0.05,
            rtt_min_s,
            cost,
            cwnd: 1000.0,
            slow_start: false,
            x_min_pps: 0.0,
            hops: 5.0,
        };
        [p(1500.0, 0.04, 10.0), p(300.0, 0.02, 1.0)]
    }

    fn alloc(f: f64, paths: &[PathState], thr: Thresholds) -> Vec<f64> {
        let mut x = [0.0; MAX_SUBFLOWS];
        allocate(f, paths, thr, &mut x);
        x[..paths.len()].to_vec()
    }

    #[test]
    fn the_cheap_wifi_path_is_filled_to_its_bound_and_lte_takes_the_rest() {
        // T = 400 + 1/0.1 = 410 pkt/s: WiFi takes x̄ = 250, LTE the remaining 160.
        let paths = lte_wifi();
        assert_eq!(alloc(400.0, &paths, THR_100MS), [160.0, 250.0]);
        // (2.4) at those rates: WiFi 10/(2·50) = 100 ms = d_thr^net exactly; LTE 64/(2·1340).
        // A small demand fits on WiFi alone: T = 210 < 250, LTE gets x^min = 0.
        assert_eq!(alloc(200.0, &paths, THR_100MS), [0.0, 210.0]);
    }

    #[test]
    fn a_path_that_cannot_meet_the_threshold_gets_nothing() {
        // WiFi c = 50 pkt/s, RTT^min 100 ms, d_thr^net = 50 ms: x̄ = 50 − (4 + 5)/0.1 = −40 → 0.
        assert_eq!(rate_bound(50.0, 0.1, 5.0, 0.05), -40.0);
        let mut paths = lte_wifi();
        paths[1] = PathState {
            c_pps: 50.0,
            rtt_s: 0.2,
            rtt_min_s: 0.1,
            ..paths[1]
        };
        let thr = Thresholds {
            d_net_s: 0.05,
            ..THR_100MS
        };
        // LTE carries all of T = 410 (its x̄ at 50 ms: 1500 − 64/0.1 = 860).
        assert_eq!(alloc(400.0, &paths, thr), [410.0, 0.0]);
        // An unobserved capacity bounds nothing, unless RTT^min alone exceeds 2·d_thr^net.
        assert_eq!(rate_bound(f64::INFINITY, 0.04, 5.0, 0.1), f64::INFINITY);
        assert_eq!(rate_bound(f64::INFINITY, 0.3, 5.0, 0.1), f64::NEG_INFINITY);
    }

    #[test]
    fn windows_slow_start_and_the_probing_rate_bound_the_shares() {
        let mut paths = lte_wifi();
        // WiFi's window, 5 packets per 50 ms = 100 pkt/s, caps it: LTE takes 310.
        paths[1].cwnd = 5.0;
        assert_eq!(alloc(400.0, &paths, THR_100MS), [310.0, 100.0]);
        // In slow start the delay bound is dropped (2.14): WiFi takes all 410.
        paths[1].cwnd = 1000.0;
        paths[1].slow_start = true;
        assert_eq!(alloc(400.0, &paths, THR_100MS), [0.0, 410.0]);
        // x^min keeps probing the unassigned LTE path, unless the printed step 4 is asked for.
        let mut paths = lte_wifi();
        for p in &mut paths {
            p.x_min_pps = 5.0;
        }
        assert_eq!(alloc(200.0, &paths, THR_100MS), [5.0, 210.0]);
        let step4 = Thresholds {
            min_rate_for_unassigned: false,
            ..THR_100MS
        };
        assert_eq!(alloc(200.0, &paths, step4), [0.0, 210.0]);
    }

    #[test]
    fn the_estimators_invert_the_delay_model() {
        // (2.12): backlog 30 → 50 packets in 100 ms while the subflows drained 300 pkt/s.
        assert_eq!(estimate_app_rate(50.0, 30.0, 0.1, 300.0), 500.0);
        // (2.13) inverts (2.4): c = 300, RTT^min 20 ms, M = 5, x = 250: RTT' = 10/50 = 200 ms,
        // and (250·0.2 + 4)/0.18 = 300.
        let c = estimate_capacity(250.0, 0.2, 0.02, 5.0, f64::INFINITY, 0.0);
        assert!((c - 300.0).abs() < 1e-12, "{c}");
        // (2.15) gives d_thr^net exactly: x̄ = 300 − 10/0.2 = 250 and K/(2(c − x̄)) = 0.1.
        let x_bar = rate_bound(300.0, 0.02, 5.0, 0.1);
        assert_eq!(x_bar, 250.0);
        assert!((10.0 / (2.0 * (300.0 - x_bar)) - 0.1).abs() < 1e-15);
        // Without a queue (2.13) is undefined: the previous estimate stays.
        assert_eq!(estimate_capacity(100.0, 0.04, 0.04, 5.0, 900.0, 0.0), 900.0);
        assert_eq!(
            estimate_capacity(100.0, 0.0405, 0.04, 5.0, 900.0, 0.001),
            900.0
        );
    }

    /// Every case of `tsc_python_cases.toml` (generated from rove.models.mptcp_delay's
    /// tsc_allocate): the same allocation, to the last bit.
    #[test]
    fn allocator_equals_the_python_model() {
        let doc: toml::Table = include_str!("tsc_python_cases.toml").parse().unwrap();
        let cases = doc["case"].as_array().unwrap();
        assert!(cases.len() >= 30);
        let floats = |v: &toml::Value| -> Vec<f64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_float().unwrap())
                .collect()
        };
        for case in cases {
            let c = case.as_table().unwrap();
            let name = c["name"].as_str().unwrap();
            let (c_hat, rtt, rtt_min) = (
                floats(&c["c_hat"]),
                floats(&c["rtt"]),
                floats(&c["rtt_min"]),
            );
            let (cost, cwnd, x_min, hops) = (
                floats(&c["cost"]),
                floats(&c["cwnd"]),
                floats(&c["x_min"]),
                floats(&c["hops"]),
            );
            let slow: Vec<bool> = c["slow_start"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_bool().unwrap())
                .collect();
            let paths: Vec<PathState> = (0..c_hat.len())
                .map(|i| PathState {
                    c_pps: c_hat[i],
                    rtt_s: rtt[i],
                    rtt_min_s: rtt_min[i],
                    cost: cost[i],
                    cwnd: cwnd[i],
                    slow_start: slow[i],
                    x_min_pps: x_min[i],
                    hops: hops[i],
                })
                .collect();
            let thr = Thresholds {
                d_net_s: c["d_net_thr"].as_float().unwrap(),
                d_send_s: c["d_send_thr"].as_float().unwrap(),
                min_rate_for_unassigned: c["min_rate_for_unassigned"].as_bool().unwrap(),
            };
            let got = alloc(c["f_hat"].as_float().unwrap(), &paths, thr);
            assert_eq!(got, floats(&c["x"]), "{name}");
        }
    }

    /// LTE (subflow 0, cost 10) and WiFi (subflow 1, cost 1), srtt 50 ms, RTT^min 40 and
    /// 20 ms, cwnd 100 out of slow start (ssthresh 50).
    fn subflows() -> [SubflowInfo; 2] {
        let s = |rtprop_ms: u64| SubflowInfo {
            rtprop_us: rtprop_ms * 1000,
            ssthresh: 50,
            ..sub(50, 100, 0)
        };
        [s(40), s(20)]
    }

    fn tsc(t: &str) -> Tsc {
        let mut s = Tsc::new(TscParams::from_table(&t.parse().unwrap()).unwrap());
        s.set_path_costs(2, Some(&[10.0, 1.0])).unwrap();
        s
    }

    /// Picks until the scheduler waits at `now` with `backlog` packets written and unsent;
    /// returns the subflows picked in order.
    fn drain(s: &mut Tsc, subs: &[SubflowInfo], now: Nanos, backlog: u64) -> Vec<usize> {
        let mut picked = Vec::new();
        let mut c = cx(subs);
        c.now = now;
        loop {
            c.queued_bytes = (backlog - picked.len() as u64) * MSS as u64;
            c.can_send_new = picked.len() as u64 != backlog;
            match s.pick(&c) {
                Pick::New(mask) => picked.push(mask.trailing_zeros() as usize),
                Pick::Wait => return picked,
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn each_slot_allocates_from_the_last_and_the_budgets_enforce_it() {
        let mut s = tsc("");
        let subs = subflows();
        // Slot 1 opens at 0 with 40 packets written: f̃ = 40/10 ms = 4000 pkt/s, T = 4010.
        // Capacities are unobserved (x̄ = ∞): WiFi takes x^cw = 100/50 ms = 2000, LTE 2000.
        // Budgets of 2000 pkt/s · 10 ms = 20 packets each: WiFi (cheapest) first.
        let picked = drain(&mut s, &subs, 0, 40);
        assert_eq!(picked, [vec![1; 20], vec![0; 20]].concat());
        assert_eq!(s.app_rate_estimate(), 4000.0);
        assert_eq!(&s.allocation()[..2], &[2000.0, 2000.0]);
        assert_eq!(s.wake_at(), Some(10_000_000), "the slot's end");
        // Slot 2 at 10 ms, nothing left: f̃ = (0 − 40)/10 ms + 40/10 ms = 0, T = 10 pkt/s.
        // (2.13) with what each carried (2000 pkt/s): WiFi (2000·0.05 + 4)/0.03 = 3466.67,
        // LTE (100 + 4)/0.01 = 10400; WiFi's x̄ = 3466.67 − (4 + 69.33)/0.2 = 3100, so WiFi
        // takes T = 10, and LTE, unassigned, its probing rate x^min = 10.
        let mut c = cx(&subs);
        c.now = 10_000_000;
        c.queued_bytes = 0;
        c.can_send_new = false;
        assert_eq!(s.pick(&c), Pick::Wait);
        let est = s.capacity_estimates();
        assert!((est[1] - 104.0 / 0.03).abs() < 1e-9 && (est[0] - 10_400.0).abs() < 1e-9);
        assert_eq!(s.app_rate_estimate(), 0.0);
        assert_eq!(&s.allocation()[..2], &[10.0, 10.0]);
        // Each budget is 10 pkt/s · 10 ms = 0.1 packet: one segment goes on each, cheapest
        // first, and the deficit (0.9 segment) is carried into the next slot.
        assert!((s.budget_bytes(1) - 144.8).abs() < 1e-9);
        assert_eq!(drain(&mut s, &subs, 10_000_000, 3), [1, 0]);
        assert!((s.budget_bytes(1) - (144.8 - 1448.0)).abs() < 1e-9);
        assert!((s.budget_bytes(0) - (144.8 - 1448.0)).abs() < 1e-9);
        assert_eq!(s.wake_at(), Some(20_000_000));
    }

    #[test]
    fn no_budget_or_no_window_or_too_much_delay_means_wait_or_the_next_path() {
        let subs = subflows();
        // 40 packets written: f̃ = 4000, T = 4010 (see above). WiFi (cheapest) has no cwnd
        // space: its 20 packets of budget wait, and LTE sends its own 20.
        let mut full = subs;
        full[1].in_flight = 100;
        assert_eq!(drain(&mut tsc(""), &full, 0, 40), [0; 20]);
        // With 1 packet written, T = 110 is all WiFi's; LTE has its probing rate x^min = 10
        // pkt/s (0.1 packet), which lets the packet go; without x^min, the packet waits.
        assert_eq!(drain(&mut tsc(""), &full, 0, 1), [0]);
        assert_eq!(drain(&mut tsc("x_min_pps = 0"), &full, 0, 1), []);
        // WiFi's srtt/2 = 125 ms is past d_thr^net = 100 ms (out of slow start): its budget
        // (x^cw = 100/0.25 s = 400 pkt/s: 4 packets) is not used; LTE's (2000 pkt/s) is...
        let mut slow = subs;
        slow[1].srtt_us = 250_000;
        assert_eq!(drain(&mut tsc(""), &slow, 0, 40), [0; 20]);
        // ... unless WiFi is in slow start, or the check is off.
        let mut starting = slow;
        starting[1].ssthresh = rove_tcp::state::INFINITE_SSTHRESH;
        let both = [vec![1; 4], vec![0; 20]].concat();
        assert_eq!(drain(&mut tsc(""), &starting, 0, 40), both);
        assert_eq!(drain(&mut tsc("delay_check = false"), &slow, 0, 40), both);
        // Nothing written at the slot's start: f̃ = 0, T = 10 pkt/s for WiFi and x^min for
        // LTE, 0.1 packet each: one segment goes on each, the rest waits for the next slot.
        let mut s = tsc("");
        let mut c = cx(&subs);
        c.queued_bytes = 0;
        c.can_send_new = false;
        assert_eq!(s.pick(&c), Pick::Wait);
        assert_eq!(drain(&mut s, &subs, 1_000_000, 5), [1, 0]);
    }

    #[test]
    fn the_app_rate_may_be_taken_over_several_slots() {
        // rate_slots = 2: (2.12) over slots 1 and 2. Slot 1 (virtual, b = 0 → 40) then slot 2
        // where 40 packets left and 20 more were written: b = 20 at 10 ms.
        let mut s = tsc("rate_slots = 2");
        let subs = subflows();
        drain(&mut s, &subs, 0, 40);
        let mut c = cx(&subs);
        c.now = 10_000_000;
        c.queued_bytes = 20 * MSS as u64;
        c.can_send_new = false;
        s.pick(&c);
        // (20 − 0)/20 ms + 40/20 ms = 3000 pkt/s (one slot alone: (20 − 40)/10 ms + 4000 = 2000).
        assert!((s.app_rate_estimate() - 3000.0).abs() < 1e-9);
    }

    #[test]
    fn the_ablation_switches_change_what_they_say() {
        // backlog_term: with windows that do not bind (cwnd 1000: x^cw = 20 000 pkt/s), the
        // first slot's 40 packets give f̃ = 4000 and T = 4010 (2.16), all WiFi's; with the
        // backlog term T = 4000 + 41/0.1 = 4410. LTE, unassigned, gets x^min = 10 either way.
        let mut subs = subflows();
        for s in &mut subs {
            s.cwnd = 1000;
            s.ssthresh = 500;
        }
        let mut c = cx(&subs);
        c.queued_bytes = 40 * MSS as u64;
        let mut plain = tsc("");
        plain.pick(&c);
        assert_eq!(&plain.allocation()[..2], &[10.0, 4010.0]);
        let mut drained = tsc("backlog_term = true");
        drained.pick(&c);
        assert!((drained.allocation()[1] - 4410.0).abs() < 1e-9);
        // slow_start_exemption: a subflow in slow start keeps (2.15)'s bound when it is off.
        let mut starting = subs[1];
        starting.ssthresh = rove_tcp::state::INFINITE_SSTHRESH;
        assert!(tsc("").path_state(1, &starting).slow_start);
        assert!(
            !tsc("slow_start_exemption = false")
                .path_state(1, &starting)
                .slow_start
        );
        // estimate_rate: (2.12) counts the allocation (4010 + 10 pkt/s for 10 ms = 40.2
        // packets) or what was carried (nothing here): f̃ = −40/0.01 + 4020 = 20, or 0.
        c.now = 10_000_000;
        c.queued_bytes = 0;
        c.can_send_new = false;
        plain.pick(&c);
        assert!((plain.app_rate_estimate() - 20.0).abs() < 1e-6);
        let mut carried = tsc("estimate_rate = \"carried\"");
        c.now = 0;
        c.queued_bytes = 40 * MSS as u64;
        carried.pick(&c);
        c.now = 10_000_000;
        c.queued_bytes = 0;
        carried.pick(&c);
        assert_eq!(carried.app_rate_estimate(), 0.0);
    }

    #[test]
    fn parameters_are_validated_naming_the_key() {
        let err = |t: &str| TscParams::from_table(&t.parse().unwrap()).unwrap_err();
        let e = err("d_net = 100");
        assert_eq!(e.key, "d_net");
        assert_eq!(
            e.message,
            "unknown parameter; accepted: d_net_thr_ms, d_send_thr_ms, d_req_ms, slot_ms, costs, \
             hops, x_min_pps, min_rate_for_unassigned, min_queue_delay_ms, estimate_rate, \
             capacity_update, \
             delay_check, rate_slots, slow_start_exemption, backlog_term, \
             receive_buffer_optimization"
        );
        let e = err("d_net_thr_ms = 0");
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            (
                "d_net_thr_ms",
                "0 is out of range; accepted: a number in (0, 60000] (ms)"
            )
        );
        let e = err("costs = [1, -2]");
        assert_eq!(e.key, "costs");
        assert!(
            e.message.starts_with("got -2; accepted: a cost per Mbit/s"),
            "{}",
            e.message
        );
        assert_eq!(err("hops = 0").key, "hops");
        assert_eq!(err("capacity_update = \"never\"").key, "capacity_update");
        assert_eq!(err("rate_slots = 0").key, "rate_slots");
        assert_eq!(err("delay_check = 1").key, "delay_check");
        let e = err("d_net_thr_ms = 200\nd_req_ms = 250");
        assert_eq!(e.key, "d_req_ms");
        assert_eq!(
            e.message,
            "(2.11) needs d_net_thr_ms + d_send_thr_ms <= d_req_ms, got 200 + 100 > 250; \
             accepted: d_req_ms >= 300"
        );
        let p = TscParams::from_table(&toml::Table::new()).unwrap();
        assert_eq!(p, TscParams::default());
        assert_eq!(
            (p.d_net_thr_s, p.d_send_thr_s, p.slot_s, p.hops.as_slice()),
            (0.1, 0.1, 0.01, &[5.0][..])
        );
        let p =
            TscParams::from_table(&"costs = [10, 1.5]\nhops = [5, 3]".parse().unwrap()).unwrap();
        assert_eq!((p.costs, p.hops), (Some(vec![10.0, 1.5]), vec![5.0, 3.0]));
    }

    #[test]
    fn costs_come_from_the_paths_unless_given() {
        let mut s = Tsc::new(TscParams::default());
        s.set_path_costs(2, Some(&[10.0, 1.0])).unwrap();
        assert_eq!(&s.costs()[..2], &[10.0, 1.0]);
        let e = Tsc::new(TscParams::default())
            .set_path_costs(2, None)
            .unwrap_err();
        assert_eq!(e.key, "costs");
        assert_eq!(
            e.message,
            "tsc needs each path's cost; accepted: `cost` on every paths entry, or \
             scheduler_params.costs with one number >= 0 per path"
        );
        // Given as a parameter: they win, and must be one per path.
        let given = |t: &str| Tsc::new(TscParams::from_table(&t.parse().unwrap()).unwrap());
        let mut s = given("costs = [2, 3]");
        s.set_path_costs(2, Some(&[10.0, 1.0])).unwrap();
        assert_eq!(&s.costs()[..2], &[2.0, 3.0]);
        let e = given("costs = [2]").set_path_costs(2, None).unwrap_err();
        assert_eq!(
            e.message,
            "1 costs for 2 paths; accepted: one number >= 0 per path (cost per Mbit/s)"
        );
        assert_eq!(
            given("hops = [5, 3, 4]")
                .set_path_costs(2, Some(&[1.0, 2.0]))
                .unwrap_err()
                .key,
            "hops"
        );
        // A subflow beyond the costs (added at run time) is the most expensive.
        assert_eq!(s.costs()[2], f64::INFINITY);
    }
}
