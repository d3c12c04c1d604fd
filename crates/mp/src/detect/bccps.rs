//! BCCPS's shared-bottleneck detection (Wei, Xue, Han, Xing, Wei, Hong, IEEE TVT 2021; seed-001
//! §2.3): S1 pairs subflows whose RTTs rise together while they are in BBR's PROBE_BW, S2
//! confirms a set when its members enter PROBE_RTT together.
//!
//! # Why it works
//!
//! A BBR flow's 1.25-gain probe builds a small queue at its bottleneck, and the following 0.75
//! phase drains it: for about one RTprop the queue, and so the RTT of *every* flow through that
//! bottleneck, rises linearly. Subflows whose RTTs rise together share the queue (S1). Behind
//! one bottleneck, a subflow's PROBE_RTT (cwnd 4 for 200 ms) drains the queue, the others
//! measure a new min_rtt and restart their 10 s min_rtt timers, so from then on they enter
//! PROBE_RTT together (S2).
//!
//! # The algorithm as built (the paper's S1/S2 with the summary's concrete version [GAP])
//!
//! ```text
//!  every ACK of subflow r: append (t, rtt) to a ring of the last `history_len` samples
//!
//!  RTT-rise test, every RTprop_r / fits_per_rtprop while r has been in PROBE_BW for the whole
//!  window: least-squares fit of rtt against t over the last fit_window_rtprops · RTprop_r;
//!      rising if slope > 0, R² ≥ r2_min, and fitted rtt(now) − RTprop_r ≥
//!      max(rise_min_ms, rise_min_rtprop · RTprop_r)
//!  consecutive rising tests make one rise(r, t_start = first window's start, t_end = last test)
//!
//!  S1, once a rise ρ of r has ended and tol = coincidence_rtprops · max(RTprop_r, RTprop_j)
//!  has passed, for every other subflow j:
//!      j had a rise overlapping [ρ.start − tol, ρ.end + tol]        → vote "shared"  (hit)
//!      else if ρ echoes r's own probe (overlaps a 1.25 phase of r, extended by RTprop_r)
//!           and j was in PROBE_BW all along and acknowledged data   → vote "not shared" (miss)
//!      else                                                         → no vote
//!  (a pair of rises is counted once, from whichever side is judged first)
//!  pair (r, j) is a candidate while ≥ votes_needed of its last vote_window votes are hits;
//!  candidate sets = connected components of candidate pairs (union–find)
//!
//!  S2, when subflow r enters PROBE_RTT at t, judged at t + s2_slack + max RTprop:
//!      a set passes when all its members' last PROBE_RTT entries lie within
//!      s2_slack + (max RTprop of the set) of each other
//!      r's confirmed set, if any: kept if it passes, expires otherwise
//!      r's candidate set (≥ 2 members): confirmed if it passes (replacing the confirmed sets
//!      it overlaps); cancelled otherwise (its pairs' votes are cleared, S1 starts over)
//!
//!  reported groups: couple = "confirmed": confirmed sets (with require_s1, only the subflows
//!                   S1 still holds together within them); couple = "candidate": candidate sets
//! ```
//!
//! # Choices where the sources are silent [GAP]
//!
//! * The paper has no threshold; the summary's defaults are used (R² 0.6, rise ≥ max(1 ms,
//!   0.1·RTprop), one RTprop of coincidence, 2 of 3 votes, ±(200 ms + max RTprop)).
//! * "RTT increase ... during ProbeBW": the fit runs only when the whole window lies in
//!   PROBE_BW (a refill after PROBE_RTT is not a rise). The rise is measured at the *fitted*
//!   value at the window's end, which a single noisy sample cannot fake.
//! * A probe's queue shows in the RTT about one RTprop after the probe starts, so "r was in its
//!   own 1.25 phase" is taken as: the rise overlaps a 1.25 phase of r extended by RTprop_r.
//! * The fit runs every RTprop/8 (`fits_per_rtprop`), not on every ACK: rises last about one
//!   RTprop and coincidence is judged to one RTprop, so finer steps change nothing but cost.
//!   It needs `min_fit_samples` (5) samples in the window.
//! * The ring holds `history_len` (4096) samples: at one ACK per packet this covers two RTprop
//!   up to 2048 packets per RTprop (≈ 240 Mbit/s at 10 ms, 24 Mbit/s at 100 ms). Beyond that the
//!   fit sees the newest 4096 samples only (a shorter but still recent window).
//! * `require_s1` (default false, the paper's procedure): a set confirmed by S2 stays
//!   confirmed until S2 fails at a later PROBE_RTT (the summary's expiry, "a confirmed set
//!   expires if S2 fails at the next PROBE_RTT"). That alone keeps two subflows coupled after
//!   their paths split as long as their PROBE_RTT timers, aligned while they shared, stay
//!   aligned; `true` (rove's addition) reports a confirmed set only where S1 still pairs its
//!   members. Measured in rove's simulator (MPTCP-BBR + minRTT, seed-001 Table I, 60 s, seeds
//!   1-3): at the shared bottleneck `false` gives accuracy 0.83 every seed and one regrouping,
//!   `true` 0.07-0.54 with 12-41 regroupings (coupled subflows cruising at α give S1 too few
//!   coincident rises, so the set flaps); on disjoint bottlenecks `false` gives 0.17-0.82 (S2
//!   confirms subflows whose 10-s PROBE_RTT timers started together: they coincide without a
//!   shared queue), `true` 0.47-0.93.
//! * Votes are per pair; a set is a connected component, so a set can hold two subflows that
//!   were never paired directly (through a third).
//!
//! # Without a path model
//!
//! A subflow whose congestion control has no path model (not BBR-family) has no PROBE_BW and
//! no PROBE_RTT: it records no rise, takes part in no vote and no S2 test, so it is never in a
//! candidate or confirmed set: it is reported independent. Nothing is inferred in its place.
//!
//! # Cost
//!
//! Per ACK: O(1) (ring write, phase bookkeeping); per fit: O(samples in one RTprop); per rise
//! finalisation and per `partition`: O(subflows²). Memory is allocated when a subflow is first
//! seen (its ring), never per ACK.
//!
//! # Parameters
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `couple` | "confirmed" | report confirmed sets, or "candidate" sets (S1 only) |
//! | `require_s1` | false | a confirmed set is reported only where S1 still pairs its members (rove's addition) |
//! | `fit_window_rtprops` | 1.0 | least-squares window, RTprops |
//! | `fits_per_rtprop` | 8 | fits per RTprop |
//! | `min_fit_samples` | 5 | samples a fit needs |
//! | `r2_min` | 0.6 | R² a rise needs |
//! | `rise_min_ms` | 1.0 | fitted rtt − RTprop a rise needs, at least ... |
//! | `rise_min_rtprop` | 0.1 | ... and at least this fraction of RTprop |
//! | `history_len` | 4096 | RTT samples kept per subflow |
//! | `coincidence_rtprops` | 1.0 | S1 coincidence tolerance, RTprops (the pair's larger) |
//! | `votes_needed` | 2 | hits among the last `vote_window` votes for a candidate pair |
//! | `vote_window` | 3 | votes remembered per pair (≤ 8) |
//! | `s2_slack_ms` | 200 | S2 window: this + max RTprop of the set |

use super::{
    bit, canonical, real, AckObservation, Common, Detector, UnionFind, COMMON_KEYS, MAX_SUBFLOWS,
};
use rove_sim::{Nanos, NS_PER_MS};
use rove_tcp::cc::{params, reject_unknown, ModelPhase, ParamError};

pub const PARAM_KEYS: &[&str] = &[
    "couple",
    "require_s1",
    "fit_window_rtprops",
    "fits_per_rtprop",
    "min_fit_samples",
    "r2_min",
    "rise_min_ms",
    "rise_min_rtprop",
    "history_len",
    "coincidence_rtprops",
    "votes_needed",
    "vote_window",
    "s2_slack_ms",
];

/// Least-squares window: one RTprop (seed-001 §2.3: "a sliding window of one RTprop_r").
pub const FIT_WINDOW_RTPROPS: f64 = 1.0;
/// Fits per RTprop [GAP, this module].
pub const FITS_PER_RTPROP: u32 = 8;
/// Samples a fit needs [GAP, this module].
pub const MIN_FIT_SAMPLES: u32 = 5;
/// R² of a rise (seed-001 §2.3 concrete version: "R^2 >= 0.6").
pub const R2_MIN: f64 = 0.6;
/// Rise at least max(1 ms, 0.1·RTprop) (seed-001 §2.3: "rtt_end - RTprop_r >= max(1 ms,
/// 0.1*RTprop_r)").
pub const RISE_MIN_MS: f64 = 1.0;
pub const RISE_MIN_RTPROP: f64 = 0.1;
/// RTT samples kept per subflow [GAP, this module; the summary asks for ≥ 2 RTprop].
pub const HISTORY_LEN: u32 = 4096;
/// Coincidence tolerance: one RTprop, the pair's larger (paper: "the judgement window is one
/// RTprop"; seed-001 §2.3: "use max(RTprop_r, RTprop_j)").
pub const COINCIDENCE_RTPROPS: f64 = 1.0;
/// Candidate pair: ≥ 2 hits among the last 3 votes (seed-001 §2.3: "votes >= 2 of the last 3
/// probe cycles").
pub const VOTES_NEEDED: u32 = 2;
pub const VOTE_WINDOW: u32 = 3;
/// S2 window ±(200 ms + max RTprop) (seed-001 §2.3; 200 ms is BBR's PROBE_RTT duration,
/// tcp_bbr.c bbr_probe_rtt_mode_ms).
pub const S2_SLACK_MS: u32 = 200;

/// Rises remembered per subflow (a rise lasts about one RTprop and is judged one RTprop after
/// it ends, so a handful are live at once).
const RISES: usize = 16;
/// Probe (gain > 1) phases remembered per subflow.
const PROBES: usize = 4;

/// Which sets `partition` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Couple {
    /// Sets S2 confirmed (the paper: "only couple confirmed sets").
    Confirmed,
    /// Sets S1 paired, confirmed or not.
    Candidate,
}

#[derive(Debug, Clone, Copy)]
pub struct BccpsParams {
    pub couple: Couple,
    pub require_s1: bool,
    pub fit_window_rtprops: f64,
    pub fits_per_rtprop: u32,
    pub min_fit_samples: u32,
    pub r2_min: f64,
    pub rise_min_ms: f64,
    pub rise_min_rtprop: f64,
    pub history_len: u32,
    pub coincidence_rtprops: f64,
    pub votes_needed: u32,
    pub vote_window: u32,
    pub s2_slack_ms: u32,
}

impl Default for BccpsParams {
    fn default() -> Self {
        BccpsParams {
            couple: Couple::Confirmed,
            require_s1: false,
            fit_window_rtprops: FIT_WINDOW_RTPROPS,
            fits_per_rtprop: FITS_PER_RTPROP,
            min_fit_samples: MIN_FIT_SAMPLES,
            r2_min: R2_MIN,
            rise_min_ms: RISE_MIN_MS,
            rise_min_rtprop: RISE_MIN_RTPROP,
            history_len: HISTORY_LEN,
            coincidence_rtprops: COINCIDENCE_RTPROPS,
            votes_needed: VOTES_NEEDED,
            vote_window: VOTE_WINDOW,
            s2_slack_ms: S2_SLACK_MS,
        }
    }
}

impl BccpsParams {
    pub fn from_table(t: &toml::Table) -> Result<Self, ParamError> {
        let keys: Vec<&str> = COMMON_KEYS.iter().chain(PARAM_KEYS).copied().collect();
        reject_unknown(t, &keys)?;
        let d = BccpsParams::default();
        let p = BccpsParams {
            couple: match params::choice(t, "couple", "confirmed", &["confirmed", "candidate"])? {
                "candidate" => Couple::Candidate,
                _ => Couple::Confirmed,
            },
            require_s1: params::boolean(t, "require_s1", d.require_s1)?,
            fit_window_rtprops: real(
                t,
                "fit_window_rtprops",
                d.fit_window_rtprops,
                0.1,
                10.0,
                "RTprops",
            )?,
            fits_per_rtprop: params::integer(
                t,
                "fits_per_rtprop",
                d.fits_per_rtprop,
                1,
                64,
                "fits",
            )?,
            min_fit_samples: params::integer(
                t,
                "min_fit_samples",
                d.min_fit_samples,
                3,
                1000,
                "samples",
            )?,
            r2_min: real(
                t,
                "r2_min",
                d.r2_min,
                0.0,
                1.0,
                "coefficient of determination",
            )?,
            rise_min_ms: real(t, "rise_min_ms", d.rise_min_ms, 0.0, 10_000.0, "ms")?,
            rise_min_rtprop: real(
                t,
                "rise_min_rtprop",
                d.rise_min_rtprop,
                0.0,
                10.0,
                "RTprops",
            )?,
            history_len: params::integer(t, "history_len", d.history_len, 16, 1 << 20, "samples")?,
            coincidence_rtprops: real(
                t,
                "coincidence_rtprops",
                d.coincidence_rtprops,
                0.0,
                10.0,
                "RTprops",
            )?,
            votes_needed: params::integer(t, "votes_needed", d.votes_needed, 1, 8, "votes")?,
            vote_window: params::integer(t, "vote_window", d.vote_window, 1, 8, "votes")?,
            s2_slack_ms: params::integer(t, "s2_slack_ms", d.s2_slack_ms, 0, 60_000, "ms")?,
        };
        if p.votes_needed > p.vote_window {
            return Err(ParamError {
                key: "votes_needed".to_string(),
                message: format!(
                    "{} votes needed out of a window of {}; accepted: at most vote_window",
                    p.votes_needed, p.vote_window
                ),
            });
        }
        Ok(p)
    }
}

/// A least-squares line through samples (x, y), x relative to the window's end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub samples: u32,
    /// dy/dx.
    pub slope: f64,
    /// Coefficient of determination (0 when x or y does not vary).
    pub r2: f64,
    /// Fitted y at x = 0 (the window's end).
    pub end: f64,
}

/// Fits y = a + b·x to `samples` (x ≤ 0: time before the window's end).
pub fn least_squares(samples: impl Iterator<Item = (f64, f64)>) -> Fit {
    let (mut n, mut sx, mut sy, mut sxx, mut sxy, mut syy) = (0u32, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (x, y) in samples {
        n += 1;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
    }
    let nf = n as f64;
    let vxx = nf * sxx - sx * sx;
    let vyy = nf * syy - sy * sy;
    let vxy = nf * sxy - sx * sy;
    if n < 2 || vxx <= 0.0 {
        return Fit {
            samples: n,
            slope: 0.0,
            r2: 0.0,
            end: if n > 0 { sy / nf } else { 0.0 },
        };
    }
    let slope = vxy / vxx;
    let r2 = if vyy > 0.0 {
        vxy * vxy / (vxx * vyy)
    } else {
        0.0
    };
    Fit {
        samples: n,
        slope,
        r2,
        end: (sy - slope * sx) / nf,
    }
}

impl BccpsParams {
    /// Whether a fit (x, y in ms) over the window of a subflow with `rtprop_ms` is an RTT rise.
    pub fn is_rise(&self, fit: &Fit, rtprop_ms: f64) -> bool {
        fit.samples >= self.min_fit_samples
            && fit.slope > 0.0
            && fit.r2 >= self.r2_min
            && fit.end - rtprop_ms >= self.rise_min_ms.max(self.rise_min_rtprop * rtprop_ms)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Rise {
    valid: bool,
    start: Nanos,
    end: Nanos,
    /// Still rising at the last fit.
    open: bool,
    finalized: bool,
    /// Subflows this rise has been paired with (each pair of rises is counted once).
    matched: u64,
}

#[derive(Debug, Default)]
struct Sub {
    seen: bool,
    phase: Option<ModelPhase>,
    /// When the subflow last entered PROBE_BW (meaningful while it is there).
    probe_bw_since: Nanos,
    /// RTprop (the model's min_rtt), µs; 0 before one.
    rtprop_us: u64,
    last_ack: Nanos,
    /// Start of the gain > 1 phase the subflow is in.
    probing_since: Option<Nanos>,
    /// Ended gain > 1 phases (start, end), a ring.
    probes: [(Nanos, Nanos); PROBES],
    probes_len: usize,
    probes_head: usize,
    /// RTT samples (time ns, rtt µs), a ring of history_len.
    hist_t: Vec<Nanos>,
    hist_rtt: Vec<u32>,
    hist_head: usize,
    next_fit: Nanos,
    rises: [Rise; RISES],
    /// Slot of the newest rise.
    rise_last: usize,
    probe_rtt_entry: Option<Nanos>,
    /// When the S2 judgement of the last PROBE_RTT entry is due.
    s2_due: Option<Nanos>,
}

impl Sub {
    fn rtprop(&self) -> Nanos {
        self.rtprop_us * 1000
    }

    fn in_probe_bw(&self) -> bool {
        self.phase == Some(ModelPhase::ProbeBw)
    }

    /// Samples from newest to oldest.
    fn samples(&self) -> impl Iterator<Item = (Nanos, u32)> + '_ {
        let len = self.hist_t.len();
        (0..len).map(move |k| {
            let i = (self.hist_head + len - 1 - k) % len;
            (self.hist_t[i], self.hist_rtt[i])
        })
    }

    fn push_sample(&mut self, cap: usize, t: Nanos, rtt_us: u64) {
        let rtt = rtt_us.min(u32::MAX as u64) as u32;
        if self.hist_t.len() < cap {
            self.hist_t.push(t);
            self.hist_rtt.push(rtt);
            self.hist_head = self.hist_t.len() % cap;
        } else {
            self.hist_t[self.hist_head] = t;
            self.hist_rtt[self.hist_head] = rtt;
            self.hist_head = (self.hist_head + 1) % cap;
        }
    }

    /// Whether `r` (a rise of this subflow) echoes one of its own gain > 1 phases: overlaps
    /// [start, end + RTprop] of one (the queue shows in the RTT about one RTprop later).
    fn echoes_own_probe(&self, r: &Rise, now: Nanos) -> bool {
        let echo = |(s, e): (Nanos, Nanos)| s <= r.end && e + self.rtprop() >= r.start;
        self.probes[..self.probes_len].iter().any(|&p| echo(p))
            || self.probing_since.is_some_and(|s| echo((s, now)))
    }

    fn open_rise(&self) -> bool {
        self.rises[self.rise_last].valid && self.rises[self.rise_last].open
    }
}

pub struct Bccps {
    p: BccpsParams,
    interval: Nanos,
    subs: Vec<Sub>,
    /// Subflows seen: indices below this.
    n: usize,
    /// votes[i][j] (i < j): the pair's last votes, newest in bit 0, 1 = hit.
    votes: [[u8; MAX_SUBFLOWS]; MAX_SUBFLOWS],
    /// Confirmed sets (bit masks), disjoint.
    confirmed: [u64; MAX_SUBFLOWS],
    confirmed_len: usize,
}

pub(super) fn build(
    t: &toml::Table,
    common: Common,
    subflows: usize,
) -> Result<Box<dyn Detector>, ParamError> {
    Ok(Box::new(Bccps::new(
        BccpsParams::from_table(t)?,
        common,
        subflows,
    )))
}

impl Bccps {
    /// A detector whose first `subflows` rings are allocated now (later ones when first seen).
    pub fn new(p: BccpsParams, common: Common, subflows: usize) -> Self {
        let mut subs: Vec<Sub> = (0..MAX_SUBFLOWS).map(|_| Sub::default()).collect();
        for s in subs.iter_mut().take(subflows.min(MAX_SUBFLOWS)) {
            s.hist_t.reserve_exact(p.history_len as usize);
            s.hist_rtt.reserve_exact(p.history_len as usize);
        }
        Bccps {
            p,
            interval: common.interval,
            subs,
            n: 0,
            votes: [[0; MAX_SUBFLOWS]; MAX_SUBFLOWS],
            confirmed: [0; MAX_SUBFLOWS],
            confirmed_len: 0,
        }
    }

    fn see(&mut self, sub: usize) {
        let s = &mut self.subs[sub];
        if !s.seen {
            s.seen = true;
            let cap = self.p.history_len as usize;
            s.hist_t.reserve_exact(cap);
            s.hist_rtt.reserve_exact(cap);
        }
        self.n = self.n.max(sub + 1);
    }

    fn vote_mask(&self) -> u8 {
        ((1u16 << self.p.vote_window) - 1) as u8
    }

    fn vote(&mut self, i: usize, j: usize, hit: bool) {
        let (a, b) = (i.min(j), i.max(j));
        self.votes[a][b] = ((self.votes[a][b] << 1) | hit as u8) & self.vote_mask();
    }

    /// Whether S1 pairs (i, j) now.
    pub fn is_candidate_pair(&self, i: usize, j: usize) -> bool {
        let (a, b) = (i.min(j), i.max(j));
        a != b && self.votes[a][b].count_ones() >= self.p.votes_needed
    }

    fn candidates(&self) -> UnionFind {
        let mut uf = UnionFind::new();
        for i in 0..self.n {
            for j in i + 1..self.n {
                if self.is_candidate_pair(i, j) {
                    uf.union(i, j);
                }
            }
        }
        uf
    }

    /// The coincidence tolerance of pair (i, j), ns.
    fn tolerance(&self, i: usize, j: usize) -> Nanos {
        let rtprop = self.subs[i].rtprop().max(self.subs[j].rtprop());
        (self.p.coincidence_rtprops * rtprop as f64) as Nanos
    }

    fn max_rtprop(&self, set: u64) -> Nanos {
        (0..self.n)
            .filter(|&i| set & bit(i) != 0)
            .map(|i| self.subs[i].rtprop())
            .max()
            .unwrap_or(0)
    }

    fn all_seen(&self) -> u64 {
        (0..self.n)
            .filter(|&i| self.subs[i].seen)
            .fold(0, |m, i| m | bit(i))
    }

    // ---- RTT rises ------------------------------------------------------------------------

    /// Runs the least-squares test of subflow `r` at `now` and extends, opens or closes its
    /// current rise.
    fn fit(&mut self, r: usize, now: Nanos) {
        let s = &self.subs[r];
        let rtprop = s.rtprop();
        let window = (self.p.fit_window_rtprops * rtprop as f64) as Nanos;
        let rising = s.probe_bw_since + window <= now && {
            let from = now.saturating_sub(window);
            let fit = least_squares(
                s.samples()
                    .take_while(|&(t, _)| t >= from)
                    .map(|(t, rtt)| (-((now - t) as f64) / 1e6, rtt as f64 / 1e3)),
            );
            self.p.is_rise(&fit, rtprop as f64 / 1e6)
        };
        let s = &mut self.subs[r];
        if rising {
            if s.open_rise() {
                s.rises[s.rise_last].end = now;
            } else {
                let slot = (s.rise_last + 1) % RISES;
                if s.rises[slot].valid && !s.rises[slot].finalized {
                    // Overwritten before its time (only with very short, dense rises): judge
                    // it with what is known now.
                    self.finalize(r, slot, now);
                }
                let s = &mut self.subs[r];
                s.rise_last = slot;
                s.rises[slot] = Rise {
                    valid: true,
                    start: now.saturating_sub(window),
                    end: now,
                    open: true,
                    finalized: false,
                    matched: 0,
                };
            }
        } else {
            let last = s.rise_last;
            s.rises[last].open = false;
        }
    }

    /// Judges the ended rises whose coincidence window has passed.
    fn finalize_due(&mut self, now: Nanos) {
        let tol_max =
            (self.p.coincidence_rtprops * self.max_rtprop(self.all_seen()) as f64) as Nanos;
        for r in 0..self.n {
            for k in 0..RISES {
                let rise = self.subs[r].rises[k];
                if rise.valid && !rise.open && !rise.finalized && rise.end + tol_max <= now {
                    self.finalize(r, k, now);
                }
            }
        }
    }

    /// S1 votes of rise `k` of subflow `r` against every other subflow.
    fn finalize(&mut self, r: usize, k: usize, now: Nanos) {
        self.subs[r].rises[k].finalized = true;
        let rise = self.subs[r].rises[k];
        let own_probe = self.subs[r].echoes_own_probe(&rise, now);
        for j in 0..self.n {
            if j == r || !self.subs[j].seen || rise.matched & bit(j) != 0 {
                continue;
            }
            let tol = self.tolerance(r, j);
            let (lo, hi) = (rise.start.saturating_sub(tol), rise.end + tol);
            let other = self.subs[j]
                .rises
                .iter()
                .position(|o| o.valid && o.start <= hi && o.end >= lo);
            if let Some(m) = other {
                self.subs[j].rises[m].matched |= bit(r);
                self.subs[r].rises[k].matched |= bit(j);
                self.vote(r, j, true);
            } else {
                let sj = &self.subs[j];
                let watched =
                    sj.in_probe_bw() && sj.probe_bw_since <= lo && sj.last_ack >= rise.end;
                if own_probe && watched {
                    self.vote(r, j, false);
                }
            }
        }
    }

    // ---- S2 -------------------------------------------------------------------------------

    /// Whether the members of `set` entered PROBE_RTT within s2_slack + max RTprop of each
    /// other (their last entries).
    fn s2_passes(&self, set: u64) -> bool {
        let window = self.p.s2_slack_ms as Nanos * NS_PER_MS + self.max_rtprop(set);
        let (mut lo, mut hi) = (Nanos::MAX, 0);
        for i in (0..self.n).filter(|&i| set & bit(i) != 0) {
            let Some(t) = self.subs[i].probe_rtt_entry else {
                return false;
            };
            lo = lo.min(t);
            hi = hi.max(t);
        }
        hi - lo <= window
    }

    fn judge_s2_due(&mut self, now: Nanos) {
        for r in 0..self.n {
            if self.subs[r].s2_due.is_some_and(|d| d <= now) {
                self.subs[r].s2_due = None;
                self.judge_s2(r);
            }
        }
    }

    /// S2 after subflow `r`'s PROBE_RTT entry.
    fn judge_s2(&mut self, r: usize) {
        if let Some(k) = (0..self.confirmed_len).find(|&k| self.confirmed[k] & bit(r) != 0) {
            if !self.s2_passes(self.confirmed[k]) {
                self.remove_confirmed(k);
            }
        }
        let mut uf = self.candidates();
        let root = uf.find(r);
        let set = (0..self.n)
            .filter(|&i| uf.find(i) == root)
            .fold(0u64, |m, i| m | bit(i));
        if set.count_ones() < 2 {
            return;
        }
        if self.s2_passes(set) {
            let mut k = 0;
            while k < self.confirmed_len {
                if self.confirmed[k] & set != 0 {
                    self.remove_confirmed(k);
                } else {
                    k += 1;
                }
            }
            self.confirmed[self.confirmed_len] = set;
            self.confirmed_len += 1;
        } else {
            for i in 0..self.n {
                for j in i + 1..self.n {
                    if set & bit(i) != 0 && set & bit(j) != 0 {
                        self.votes[i][j] = 0;
                    }
                }
            }
        }
    }

    fn remove_confirmed(&mut self, k: usize) {
        self.confirmed_len -= 1;
        self.confirmed[k] = self.confirmed[self.confirmed_len];
    }

    /// The confirmed sets now (bit masks, in no particular order).
    pub fn confirmed_sets(&self) -> &[u64] {
        &self.confirmed[..self.confirmed_len]
    }
}

impl Detector for Bccps {
    fn name(&self) -> &'static str {
        "bccps"
    }

    fn on_ack(&mut self, sub: usize, obs: &AckObservation) {
        if sub >= MAX_SUBFLOWS {
            return;
        }
        self.see(sub);
        let now = obs.now;
        let cap = self.p.history_len as usize;
        let phase = obs.model.map(|m| m.phase);
        let enters_probe_rtt = phase == Some(ModelPhase::ProbeRtt)
            && self.subs[sub]
                .phase
                .is_some_and(|p| p != ModelPhase::ProbeRtt);
        if enters_probe_rtt {
            // Judged once every member of any set could have entered too.
            let window = self.p.s2_slack_ms as Nanos * NS_PER_MS + self.max_rtprop(self.all_seen());
            self.subs[sub].probe_rtt_entry = Some(now);
            self.subs[sub].s2_due = Some(now + window);
        }
        let s = &mut self.subs[sub];
        s.last_ack = now;
        if let Some(rtt) = obs.rtt_us {
            s.push_sample(cap, now, rtt);
        }
        if phase != s.phase {
            if phase == Some(ModelPhase::ProbeBw) {
                s.probe_bw_since = now;
            }
            if s.phase == Some(ModelPhase::ProbeBw) {
                let last = s.rise_last;
                s.rises[last].open = false;
            }
            s.phase = phase;
        }
        if let Some(m) = obs.model {
            if let Some(min_rtt) = m.min_rtt_us {
                s.rtprop_us = min_rtt as u64;
            }
            let probing = m.phase == ModelPhase::ProbeBw && m.pacing_gain > 1.0;
            match (s.probing_since, probing) {
                (None, true) => s.probing_since = Some(now),
                (Some(start), false) => {
                    s.probing_since = None;
                    s.probes[s.probes_head] = (start, now);
                    s.probes_head = (s.probes_head + 1) % PROBES;
                    s.probes_len = (s.probes_len + 1).min(PROBES);
                }
                _ => {}
            }
        }
        if s.in_probe_bw() && s.rtprop_us > 0 && now >= s.next_fit {
            s.next_fit = now + s.rtprop() / self.p.fits_per_rtprop as Nanos;
            self.fit(sub, now);
            self.finalize_due(now);
        }
        if self.subs[sub].s2_due.is_some_and(|d| d <= now) {
            self.judge_s2_due(now);
        }
    }

    /// Loss plays no part in BCCPS's detection (it reads RTTs and BBR's state only).
    fn on_loss_event(&mut self, _sub: usize, _now: Nanos) {}

    fn partition(&mut self, now: Nanos, groups: &mut [u32]) {
        self.finalize_due(now);
        self.judge_s2_due(now);
        let mut cand = self.candidates();
        match self.p.couple {
            Couple::Candidate => cand.write(groups),
            Couple::Confirmed => {
                let mut out = UnionFind::new();
                for &set in self.confirmed_sets() {
                    for j in (0..self.n).filter(|&j| set & bit(j) != 0) {
                        for i in (0..j).filter(|&i| set & bit(i) != 0) {
                            if !self.p.require_s1 || cand.find(i) == cand.find(j) {
                                out.union(i, j);
                            }
                        }
                    }
                }
                out.write(groups);
            }
        }
        canonical(groups);
    }

    fn interval(&self) -> Nanos {
        self.interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::fluid::{self, FluidConfig};
    use rove_tcp::cc::PathModel;

    const RTPROP_MS: f64 = 20.0;

    // ---- the least-squares rise test --------------------------------------------------------

    /// Samples every 1 ms over one RTprop (20 ms) ending at x = 0.
    fn series(y: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        (0..=20).map(|k| (k as f64 - 20.0, y(k as f64))).collect()
    }

    #[test]
    fn a_ramp_of_1_ms_per_2_ms_over_one_rtprop_is_a_rise() {
        // rtt = 20 + 0.5·k ms for k = 0..20: slope 0.5, a perfect line, ends at 30 ms.
        let fit = least_squares(series(|k| RTPROP_MS + 0.5 * k).into_iter());
        assert_eq!(fit.samples, 21);
        assert!((fit.slope - 0.5).abs() < 1e-12, "{fit:?}");
        assert!((fit.r2 - 1.0).abs() < 1e-12);
        assert!((fit.end - 30.0).abs() < 1e-9);
        assert!(BccpsParams::default().is_rise(&fit, RTPROP_MS));
    }

    #[test]
    fn noise_without_trend_is_not_a_rise() {
        // ±1.5 ms alternating around 25 ms (5 ms above RTprop): no trend; the least-squares
        // slope of the alternating series is tiny and R² near 0.
        let fit = least_squares(
            series(|k| {
                25.0 + if (k as u32).is_multiple_of(2) {
                    1.5
                } else {
                    -1.5
                }
            })
            .into_iter(),
        );
        assert!(fit.r2 < 0.05, "{fit:?}");
        assert!(!BccpsParams::default().is_rise(&fit, RTPROP_MS));
        // A flat series has no R² at all.
        let fit = least_squares(series(|_| 25.0).into_iter());
        assert_eq!((fit.slope, fit.r2, fit.end), (0.0, 0.0, 25.0));
        assert!(!BccpsParams::default().is_rise(&fit, RTPROP_MS));
    }

    #[test]
    fn a_ramp_too_small_is_not_a_rise() {
        // 0.05 ms per ms from RTprop: a clean line (R² = 1) but only 1 ms up at the end,
        // below max(1 ms, 0.1·20 ms) = 2 ms.
        let fit = least_squares(series(|k| RTPROP_MS + 0.05 * k).into_iter());
        assert!((fit.r2 - 1.0).abs() < 1e-9 && (fit.end - 21.0).abs() < 1e-9);
        assert!(!BccpsParams::default().is_rise(&fit, RTPROP_MS));
        // The same line 0.1 ms per ms (2 ms up) just qualifies.
        let fit = least_squares(series(|k| RTPROP_MS + 0.1 * k).into_iter());
        assert!(BccpsParams::default().is_rise(&fit, RTPROP_MS));
    }

    // ---- S1 and S2 on scripted subflows ----------------------------------------------------

    /// Queue delay (ms) at `t` of a 1.25-gain probe started at `p` by a subflow of RTprop 20 ms
    /// alone at its bottleneck: its ACKs show the queue one RTprop later, rising 0.25 ms per ms
    /// for one RTprop (to 0.25·RTprop = 5 ms), then draining as fast in the 0.75 phase.
    fn bump(t: f64, p: f64) -> f64 {
        let x = t - p - RTPROP_MS;
        if (0.0..RTPROP_MS).contains(&x) {
            0.25 * x
        } else if (RTPROP_MS..2.0 * RTPROP_MS).contains(&x) {
            5.0 - 0.25 * (x - RTPROP_MS)
        } else {
            0.0
        }
    }

    /// Two subflows of RTprop 20 ms in PROBE_BW with 8-phase cycles of 160 ms: subflow 0 probes
    /// at 100 + 160k ms, subflow 1 at 180 + 160k ms. `shared` decides whose probes each sees.
    /// `probe_rtt[i]`: start of subflow i's PROBE_RTT episodes (220 ms each, no probing).
    struct Script {
        shared: bool,
        probe_rtt: [Vec<f64>; 2],
    }

    impl Script {
        fn in_probe_rtt(&self, sub: usize, t: f64) -> bool {
            self.probe_rtt[sub]
                .iter()
                .any(|&s| (s..s + 220.0).contains(&t))
        }

        /// Probe starts of `sub` up to `t` (skipping those during its PROBE_RTT).
        fn probes(&self, sub: usize, t: f64) -> impl Iterator<Item = f64> + '_ {
            let first = if sub == 0 { 100.0 } else { 180.0 };
            (0..)
                .map(move |k| first + 160.0 * k as f64)
                .take_while(move |&p| p <= t)
                .filter(move |&p| !self.in_probe_rtt(sub, p) && !self.in_probe_rtt(sub, p + 40.0))
        }

        fn observe(&self, sub: usize, t: f64) -> AckObservation {
            let seen = |s: usize| self.shared || s == sub;
            let queue: f64 = (0..2)
                .filter(|&s| seen(s))
                .map(|s| self.probes(s, t).map(|p| bump(t, p)).sum::<f64>())
                .sum();
            let last_probe = self.probes(sub, t).last();
            let in_probe_rtt = self.in_probe_rtt(sub, t);
            let gain = match last_probe {
                Some(p) if t - p < 20.0 && !in_probe_rtt => 1.25,
                Some(p) if t - p < 40.0 && !in_probe_rtt => 0.75,
                _ => 1.0,
            };
            let rtt = RTPROP_MS + queue;
            AckObservation {
                now: (t * 1e6) as Nanos,
                sent_at: (t * 1e6) as Nanos,
                rtt_us: Some((rtt * 1e3).round() as u64),
                srtt_us: (rtt * 1e3) as u64,
                model: Some(PathModel {
                    bw_bps: 5e6,
                    min_rtt_us: Some(20_000),
                    phase: if in_probe_rtt {
                        ModelPhase::ProbeRtt
                    } else {
                        ModelPhase::ProbeBw
                    },
                    pacing_gain: gain,
                }),
            }
        }

        /// ACKs every 1 ms on both subflows over [from, to) ms.
        fn drive(&self, d: &mut Bccps, from: u32, to: u32) {
            for ms in from..to {
                for sub in 0..2 {
                    d.on_ack(sub, &self.observe(sub, ms as f64));
                }
            }
        }
    }

    fn detector(couple: Couple) -> Bccps {
        let p = BccpsParams {
            couple,
            ..BccpsParams::default()
        };
        Bccps::new(p, Common::default(), 2)
    }

    fn groups(d: &mut Bccps, ms: u32) -> [u32; 2] {
        let mut g = [0u32; 2];
        d.partition(ms as Nanos * NS_PER_MS, &mut g);
        g
    }

    #[test]
    fn rtts_rising_together_make_a_candidate_pair_after_two_votes_and_not_before() {
        let script = Script {
            shared: true,
            probe_rtt: [vec![], vec![]],
        };
        let mut d = detector(Couple::Candidate);
        // Subflow 0's probe at 100 ms: both RTTs rise over [120, 140] ms; the rise is judged
        // one RTprop after it ends. One hit.
        script.drive(&mut d, 0, 200);
        assert_eq!(d.votes[0][1], 0b1);
        assert!(!d.is_candidate_pair(0, 1));
        assert_eq!(groups(&mut d, 200), [0, 1]);
        // Subflow 1's probe at 180 ms: the second hit (counted once, though both subflows saw
        // a rise).
        script.drive(&mut d, 200, 280);
        assert_eq!(d.votes[0][1], 0b11);
        assert!(d.is_candidate_pair(0, 1));
        assert_eq!(groups(&mut d, 280), [0, 0]);
        // And so on, one hit per probe.
        script.drive(&mut d, 280, 2000);
        assert_eq!(d.votes[0][1], 0b111);
        // Confirmed mode reports nothing before S2.
        let mut d = detector(Couple::Confirmed);
        script.drive(&mut d, 0, 2000);
        assert!(d.is_candidate_pair(0, 1));
        assert_eq!(groups(&mut d, 2000), [0, 1]);
    }

    #[test]
    fn an_rtt_rising_alone_pairs_nothing() {
        let script = Script {
            shared: false,
            probe_rtt: [vec![], vec![]],
        };
        let mut d = detector(Couple::Candidate);
        script.drive(&mut d, 0, 3000);
        // Each subflow's own probe raised only its own RTT: misses only.
        assert_eq!(d.votes[0][1], 0);
        assert!(!d.is_candidate_pair(0, 1));
        assert_eq!(groups(&mut d, 3000), [0, 1]);
    }

    #[test]
    fn s2_confirms_coincident_probe_rtt_entries() {
        // Entries 50 ms apart, within ±(200 ms + 20 ms).
        let script = Script {
            shared: true,
            probe_rtt: [vec![1000.0], vec![1050.0]],
        };
        let mut d = detector(Couple::Confirmed);
        script.drive(&mut d, 0, 1200);
        assert_eq!(
            groups(&mut d, 1200),
            [0, 1],
            "not judged before 1000 + 220 ms"
        );
        script.drive(&mut d, 1200, 1300);
        assert_eq!(d.confirmed_sets(), &[0b11]);
        assert_eq!(groups(&mut d, 1300), [0, 0]);
        script.drive(&mut d, 1300, 5000);
        assert_eq!(groups(&mut d, 5000), [0, 0]);
    }

    #[test]
    fn s2_cancels_a_candidate_set_whose_probe_rtt_entries_do_not_coincide() {
        // Entries 1 s apart.
        let script = Script {
            shared: true,
            probe_rtt: [vec![1000.0], vec![2000.0]],
        };
        let mut d = detector(Couple::Confirmed);
        script.drive(&mut d, 0, 1000);
        assert!(d.is_candidate_pair(0, 1));
        script.drive(&mut d, 1000, 1225);
        assert!(
            !d.is_candidate_pair(0, 1),
            "S2 failed at 1220 ms: votes cleared"
        );
        assert!(d.confirmed_sets().is_empty());
        script.drive(&mut d, 1225, 2000);
        assert!(d.is_candidate_pair(0, 1), "S1 pairs them again");
        script.drive(&mut d, 2000, 2300);
        assert!(
            !d.is_candidate_pair(0, 1),
            "and S2 cancels again at 2220 ms"
        );
        script.drive(&mut d, 2300, 4000);
        assert!(d.confirmed_sets().is_empty());
        assert_eq!(groups(&mut d, 4000), [0, 1]);
    }

    #[test]
    fn a_confirmed_set_expires_when_s2_fails_at_the_next_probe_rtt() {
        let script = Script {
            shared: true,
            probe_rtt: [vec![1000.0, 11_000.0], vec![1050.0, 12_000.0]],
        };
        let mut d = detector(Couple::Confirmed);
        script.drive(&mut d, 0, 11_000);
        assert_eq!(groups(&mut d, 11_000), [0, 0]);
        script.drive(&mut d, 11_000, 11_300);
        assert!(d.confirmed_sets().is_empty());
        assert_eq!(groups(&mut d, 11_300), [0, 1]);
    }

    #[test]
    fn a_confirmed_set_splits_when_s1_no_longer_pairs_it() {
        // Confirmed while shared; then the paths split at 3 s (each RTT shows only its own
        // probes). With require_s1, misses end the grouping within a few probes; without it,
        // the confirmed set stands until the next S2 test.
        for require_s1 in [true, false] {
            let shared = Script {
                shared: true,
                probe_rtt: [vec![1000.0], vec![1050.0]],
            };
            let split = Script {
                shared: false,
                probe_rtt: [vec![1000.0], vec![1050.0]],
            };
            let p = BccpsParams {
                require_s1,
                ..BccpsParams::default()
            };
            let mut d = Bccps::new(p, Common::default(), 2);
            shared.drive(&mut d, 0, 3000);
            assert_eq!(groups(&mut d, 3000), [0, 0]);
            split.drive(&mut d, 3000, 4000);
            let want = if require_s1 { [0, 1] } else { [0, 0] };
            assert_eq!(groups(&mut d, 4000), want, "require_s1 = {require_s1}");
        }
    }

    #[test]
    fn subflows_without_a_path_model_are_never_grouped() {
        let script = Script {
            shared: true,
            probe_rtt: [vec![1000.0], vec![1050.0]],
        };
        let mut d = detector(Couple::Candidate);
        for ms in 0..3000u32 {
            for sub in 0..2 {
                let mut obs = script.observe(sub, ms as f64);
                obs.model = None;
                d.on_ack(sub, &obs);
            }
        }
        assert_eq!(d.votes[0][1], 0);
        assert_eq!(groups(&mut d, 3000), [0, 1]);
    }

    #[test]
    fn parameters_are_read_and_checked() {
        let t: toml::Table =
            "couple = \"candidate\"\nr2_min = 0.8\nvotes_needed = 3\nvote_window = 4"
                .parse()
                .unwrap();
        let p = BccpsParams::from_table(&t).unwrap();
        assert_eq!(p.couple, Couple::Candidate);
        assert_eq!((p.r2_min, p.votes_needed, p.vote_window), (0.8, 3, 4));
        let t: toml::Table = "votes_needed = 4".parse().unwrap();
        let e = BccpsParams::from_table(&t).unwrap_err();
        assert_eq!(e.key, "votes_needed");
        let t: toml::Table = "couple = \"all\"".parse().unwrap();
        let e = BccpsParams::from_table(&t).unwrap_err();
        assert_eq!(
            e.message,
            "unknown value \"all\"; accepted: \"confirmed\", \"candidate\""
        );
    }

    // ---- the fluid model --------------------------------------------------------------------

    /// With `require_s1` (rove's addition, not the default).
    fn detector_requiring_s1() -> Bccps {
        let p = BccpsParams {
            couple: Couple::Confirmed,
            require_s1: true,
            ..BccpsParams::default()
        };
        Bccps::new(p, Common::default(), 2)
    }

    #[test]
    fn regroups_when_the_fluid_topology_changes() {
        // Shared for 45 s, then disjoint, with require_s1: grouped once S2 has confirmed the
        // pair (the model's PROBE_RTT timers align at the 2nd or 3rd episode, 20-30 s), split
        // by S1's misses within a second of the change.
        for seed in 1..=5 {
            let cfg = FluidConfig {
                switch_ms: Some(45_000.0),
                duration_ms: 90_000.0,
                seed,
                ..FluidConfig::default()
            };
            let mut d = detector_requiring_s1();
            let s = fluid::run(&cfg, &mut d);
            let grouped_at = s.iter().find(|x| x.groups == [0, 0]).map(|x| x.t_ms);
            let split_at = s
                .iter()
                .find(|x| x.t_ms >= 45_000.0 && x.groups == [0, 1])
                .map(|x| x.t_ms);
            let before = fluid::accuracy(&s, 35_000.0, 45_000.0);
            let after = fluid::accuracy(&s, 45_000.0, 90_000.0);
            println!(
                "bccps, shared until 45 s, seed {seed}: grouped at {grouped_at:?} ms, split at \
                 {split_at:?} ms, accuracy 35-45 s {before:.2}, 45-90 s {after:.2}"
            );
            assert!(grouped_at.is_some_and(|t| t < 35_000.0) && before >= 0.9);
            assert!(split_at.is_some_and(|t| t < 46_000.0));
        }
        // Disjoint for 20 s, then shared: never grouped while disjoint; grouped once the
        // PROBE_RTT timers align, which the model takes from 20 s to over a minute.
        for seed in 1..=5 {
            let cfg = FluidConfig {
                shared: false,
                switch_ms: Some(20_000.0),
                duration_ms: 90_000.0,
                seed,
                ..FluidConfig::default()
            };
            let mut d = detector(Couple::Confirmed);
            let s = fluid::run(&cfg, &mut d);
            let grouped_at = s.iter().find(|x| x.groups == [0, 0]).map(|x| x.t_ms);
            println!(
                "bccps, shared from 20 s, seed {seed}: grouped at {grouped_at:?} ms, accuracy \
                 20-90 s {:.2}",
                fluid::accuracy(&s, 20_000.0, 90_000.0)
            );
            assert_eq!(fluid::accuracy(&s, 0.0, 20_000.0), 1.0);
        }
    }
}
