//! BBRv3 (`cc = "bbr3"`): Google's `net/ipv4/tcp_bbr.c` on the v3 branch of
//! github.com/google/bbr (read at commit 001a430b3ddbbc6d9173061a74d8b580c757b91b, where
//! `BBR_VERSION` is 3), which the IETF CCWG draft (draft-ietf-ccwg-bbr) describes; where the
//! two could differ this port follows the code (the draft's text was not compared line by
//! line). v3 is v2alpha's state machine with retuned constants and a handful of fixes, so it
//! is ported as those changes against the v2alpha port ([`super`]): the same `Bbr2` runs all
//! three, "bbr3" with `Params::v3` set and the v3 defaults below.
//!
//! # What v3 changes, against tcp_bbr2.c (v2alpha)
//!
//! Constants (tcp_bbr.c v3, by name; v2alpha's value in brackets):
//!
//! * `bbr_startup_pacing_gain = BBR_UNIT * 277 / 100 + 1` = 710/256 = 2.77, 4 ln 2
//!   [bbr_high_gain 2.89]; it also sets the initial pacing rate (bbr_init_pacing_rate_from_rtt).
//! * `bbr_startup_cwnd_gain = BBR_UNIT * 2` = 2.0 in STARTUP and DRAIN [2.89].
//! * `bbr_pacing_gain[BBR_BW_PROBE_DOWN] = BBR_UNIT * 91 / 100` = 232/256 = 0.906 [0.75];
//!   (the draft's 0.90, rounded). UP 5/4, CRUISE and REFILL 1.0 are unchanged.
//! * `bbr_bw_probe_cwnd_gain = 1`: UP's cwnd gain is 2 + 1/4 = 2.25 (bbr_update_gains) [2.0].
//! * `bbr_full_loss_cnt = 6` loss events in a Recovery round to leave STARTUP on loss [8].
//! * Unchanged, checked against v3: `bbr_drain_gain = BBR_UNIT * 1000 / 2885` (0.347),
//!   `bbr_cwnd_gain` 2, `bbr_loss_thresh = BBR_UNIT * 2 / 100` (2 %), `bbr_beta = BBR_UNIT * 30
//!   / 100` (bw_lo, inflight_lo and inflight_hi keep 1 - 0.3 = 0.7 of themselves),
//!   `bbr_inflight_headroom` 15 %, `bbr_full_bw_thresh` 5/4 and `bbr_full_bw_cnt` 3,
//!   `bbr_bw_probe_max_rounds = 63`, `bbr_bw_probe_rand_rounds = 2`, `bbr_bw_probe_base_us` 2 s,
//!   `bbr_bw_probe_rand_us` 1 s, `bbr_probe_rtt_win_ms` 5000, `bbr_probe_rtt_mode_ms` 200,
//!   `bbr_probe_rtt_cwnd_gain` 1/2, `bbr_extra_acked_gain` 1, `bbr_extra_acked_win_rtts` 5
//!   (1 round before the pipe is full, now unconditionally), `bbr_extra_acked_max_us` 100 ms,
//!   `bbr_tso_rtt_shift` 9, the flooring quantization budget (+2 packets in UP).
//! * Removed: `bbr_bw_probe_pif_gain` (see the UP exit below) and `bbr_bw_probe_reno_gain`:
//!   the Reno-coexistence bound is `min(bbr_bw_probe_max_rounds, bbr_target_inflight)`
//!   rounds, the same number v2alpha computed with its default reno gain of 1.0.
//!
//! State machine (functions of tcp_bbr.c v3):
//!
//! * **Full-bandwidth estimator** (`bbr_check_full_bw_reached`, `bbr_reset_full_bw`): v2alpha
//!   compared max_bw at round starts, in STARTUP only. v3 compares each ACK's own rate sample
//!   with full_bw (a sample 25 % above it restarts the count at once), counts a round without
//!   growth at each round start, and keeps running after STARTUP: `full_bw_now` says the
//!   rate has plateaued (3 rounds) since the estimator was last reset. `full_bw_reached` is
//!   set from it.
//! * **PROBE_UP exit** (bbr_update_cycle_phase, BBR_BW_PROBE_UP): v2alpha left UP once inflight
//!   reached 1.25 BDP after one min_rtt. v3 restarts the estimator when UP begins
//!   (`bbr_start_bw_probe_up`: full_bw = this sample) and while inflight_hi limits cwnd
//!   (cwnd-limited with cwnd >= inflight_hi), and leaves UP when the rate plateaus
//!   (`full_bw_now`). The risky-probe exit and the loss exit are unchanged.
//! * **STARTUP exit on loss** (`bbr_handle_queue_too_high_in_startup`): inflight_hi =
//!   max(BDP, inflight_latest), not the BDP alone: what the round actually delivered.
//! * **"Latest" filters** (`bbr_update_latest_delivery_signals`,
//!   `bbr_advance_latest_delivery_signals`): bw_latest / inflight_latest are still the
//!   round's max when the model runs; they restart from this ACK's sample at the end of
//!   bbr_main (v2alpha: inside update_congestion_signals, before STARTUP's loss check).
//!   bw_lo / inflight_lo are cut exactly as in v2alpha: max(latest, 0.7 · itself) once per
//!   loss round outside probes (bbr_adapt_lower_bounds), reset on REFILL and PROBE_RTT exit.
//! * **inflight_hi growth in UP** (`bbr_probe_inflight_hi_upward`): ACKs that arrive while
//!   inflight_hi does not limit cwnd no longer clear the accumulated credit
//!   (v2alpha: `bw_probe_up_acks = 0`, "don't accumulate unused credits").
//! * **PROBE_RTT timer** (`bbr_update_min_rtt`): the 5 s probe_rtt_min filter takes a sample
//!   only when it is lower (`<`) than the filter (or the filter expired); v2alpha also
//!   refreshed the timestamp on an equal one (`<=`), which postponed PROBE_RTT while RTT
//!   samples kept matching min_rtt.
//! * **RTO** (`bbr_set_state`, TCP_CA_Loss) and **undo** (`bbr_undo_cwnd`) reset the whole
//!   estimator (full_bw, full_bw_cnt, full_bw_now); v2alpha's RTO cleared full_bw only.
//! * **init** (`bbr_init`): prior_cwnd = tp->prior_cwnd and the first round ends after what
//!   is in flight now (next_rtt_delivered = tp->delivered); this matters when the algorithm is
//!   switched to mid-connection. (rove's v2alpha port starts both from 0.)
//!
//! # Where this differs from tcp_bbr.c (v3)
//!
//! Everything the v2alpha port lists in [`super`] (no ECN, no PLB, no fast path; rove's
//! `tx_in_flight`, `lost` and `skb_marked_lost`), and:
//!
//! * **ECN** is omitted, so v3's ECN pieces are too: `bbr_full_ecn_cnt` (STARTUP exit after 2
//!   rounds above ecn_thresh), the ECN cut of inflight_lo, `bbr_ecn_reprobe_gain`,
//!   `ecn_in_cycle` / `loss_in_cycle`, which only the ECN re-probe reads.
//! * **TLP loss-probe recovery** (`bbr_run_loss_probe_recovery` on CA_EVENT_TLP_RECOVERY, and
//!   the TLP exception of `bbr_advance_latest_delivery_signals`) is not ported: rove's sender
//!   raises no such event and its rate samples do not flag ACKs of a TLP retransmission, so
//!   a loss repaired by a TLP is not counted as a loss round, and the latest filters always
//!   advance.
//! * `rs->is_ack_delayed` is not available: an expired probe_rtt_min filter takes any sample
//!   (as the v2alpha port does).
//! * `bbr_fast_ack_mode` (a receiver-side quick-ACK setting) has no counterpart.
//!
//! # Parameters (`cc_params`)
//!
//! bbr2's keys (its module doc), with `full_loss_cnt` defaulting to 6, and:
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `startup_pacing_gain` | 2.77 (710/256) | STARTUP pacing gain (and the initial pacing rate's) |
//! | `startup_cwnd_gain` | 2.0 | STARTUP and DRAIN cwnd gain |
//! | `probe_down_gain` | 0.91 (232/256) | PROBE_BW DOWN pacing gain, above 0 and at most 1 |
//! | `bw_probe_cwnd_gain` | 1 | UP's cwnd gain is 2 + this / 4 (0..3, the kernel's range) |
//!
//! Gains given as numbers are rounded to the nearest 1/256.

use super::{gain, integer, reject_unknown, Bbr2, CcConfig, ParamError, Params, PARAM_KEYS};
use crate::cc::bbr::{bad, BBR_SCALE, BBR_UNIT, FULL_BW_CNT, FULL_BW_THRESH};
use crate::cc::CongestionControl;
use crate::state::{RateSample, TcpState};

/// tcp_bbr.c (v3): bbr_startup_pacing_gain = BBR_UNIT * 277 / 100 + 1 (4 ln 2).
pub(super) const V3_STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// tcp_bbr.c (v3): bbr_startup_cwnd_gain = BBR_UNIT * 2.
pub(super) const V3_STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// tcp_bbr.c (v3): bbr_pacing_gain[BBR_BW_PROBE_DOWN] = BBR_UNIT * 91 / 100.
pub(super) const V3_PROBE_DOWN_GAIN: u32 = BBR_UNIT * 91 / 100;
/// tcp_bbr.c (v3): bbr_bw_probe_cwnd_gain = 1 (quarters added to cwnd_gain in UP).
pub(super) const V3_BW_PROBE_CWND_GAIN: u32 = 1;
/// tcp_bbr.c (v3): bbr_full_loss_cnt = 6.
pub(super) const V3_FULL_LOSS_CNT: u32 = 6;

/// The cc_params of "bbr3" beyond BBRv2's.
const V3_PARAM_KEYS: &[&str] = &[
    "startup_pacing_gain",
    "startup_cwnd_gain",
    "probe_down_gain",
    "bw_probe_cwnd_gain",
];

impl Params {
    /// BBRv3's defaults.
    pub(super) fn v3() -> Self {
        Params {
            v3: true,
            startup_pacing_gain: V3_STARTUP_PACING_GAIN,
            startup_cwnd_gain: V3_STARTUP_CWND_GAIN,
            probe_down_gain: V3_PROBE_DOWN_GAIN,
            bw_probe_cwnd_gain: V3_BW_PROBE_CWND_GAIN,
            full_loss_cnt: V3_FULL_LOSS_CNT,
            ..Params::default()
        }
    }

    /// BBRv3's ("bbr3"): BBRv2's keys with the v3 defaults, plus its gains.
    pub(super) fn from_table_v3(t: &toml::Table) -> Result<Self, ParamError> {
        let keys: Vec<&str> = PARAM_KEYS.iter().chain(V3_PARAM_KEYS).copied().collect();
        reject_unknown(t, &keys)?;
        let mut p = Params::v3();
        for (key, field) in [
            ("startup_pacing_gain", &mut p.startup_pacing_gain),
            ("startup_cwnd_gain", &mut p.startup_cwnd_gain),
        ] {
            if let Some(v) = gain(t, key)? {
                *field = v;
            }
        }
        if let Some(v) = gain(t, "probe_down_gain")? {
            if v == 0 || v > BBR_UNIT {
                return Err(bad(
                    "probe_down_gain",
                    format!(
                        "expected a gain above 0 and at most 1, got {}",
                        v as f64 / BBR_UNIT as f64
                    ),
                ));
            }
            p.probe_down_gain = v;
        }
        if let Some(v) = integer(t, "bw_probe_cwnd_gain", 0, 3)? {
            p.bw_probe_cwnd_gain = v;
        }
        Self::parse(t, p)
    }
}

impl Bbr2 {
    /// "bbr3": this state machine with the v3 changes on.
    pub fn build_v3(config: &CcConfig) -> Result<Box<dyn CongestionControl>, ParamError> {
        let p = Params::from_table_v3(config.params)?;
        let mut b = Bbr2::new(p, config.seed);
        b.name = "bbr3";
        Ok(Box::new(b))
    }

    /// bbr_check_full_bw_reached (v3): per-ACK samples against full_bw, a round without 25 %
    /// growth counted at each round start; full_bw_now after 3 such rounds.
    pub(super) fn v3_check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full.bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if self.sample_bw >= bw_thresh {
            self.reset_full_bw();
            self.full.bw = self.sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full.cnt += 1;
        self.full_bw_now = self.full.cnt >= FULL_BW_CNT;
        self.full.reached |= self.full_bw_now;
    }

    /// bbr_start_bw_probe_up (v3): the plateau detector starts over from this sample.
    pub(super) fn v3_on_probe_up(&mut self) {
        if self.p.v3 {
            self.reset_full_bw();
            self.full.bw = self.sample_bw;
        }
    }

    /// BBR_BW_PROBE_UP's (2) exit (v3): true when the rate has plateaued. While inflight_hi
    /// limits cwnd the plateau says nothing about the path: the detector starts over.
    pub(super) fn v3_probe_up_plateaued(&mut self, tp: &TcpState) -> bool {
        if tp.is_cwnd_limited() && tp.snd_cwnd >= self.inflight_hi {
            self.reset_full_bw();
            self.full.bw = self.sample_bw;
            return false;
        }
        self.full_bw_now
    }

    /// bbr_init's v3 differences: prior_cwnd from the socket, the first round ends after
    /// what is in flight now, the estimator reset.
    pub(super) fn v3_init(&mut self, tp: &TcpState) {
        if !self.p.v3 {
            return;
        }
        self.prior_cwnd = tp.prior_cwnd;
        self.next_rtt_delivered = tp.delivered;
        self.reset_full_bw();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{in_probe_bw, BW_10MBPS};
    use super::super::{
        inflight_hi_cut, loss_lower_bounds, AckPhase, Mode, Phase, BETA, CWND_GAIN, DRAIN_GAIN,
        HEADROOM, LOSS_THRESH,
    };
    use super::*;
    use crate::state::CaState;

    fn bbr3(params: &str) -> Bbr2 {
        let t: toml::Table = toml::from_str(params).expect("valid toml");
        let mut b = Bbr2::new(Params::from_table_v3(&t).expect("valid params"), 7);
        b.name = "bbr3";
        b
    }

    fn bbr2() -> Bbr2 {
        Bbr2::new(Params::default(), 7)
    }

    /// A valid rate sample of `delivered` packets over 40 ms: rate `delivered` / 40 ms.
    fn sample(delivered: i64, prior_delivered: u64) -> RateSample {
        RateSample {
            delivered,
            prior_delivered,
            interval_ns: 40_000_000,
            acked_sacked: 1,
            rtt_ns: 40_000_000,
            ..Default::default()
        }
    }

    #[test]
    fn constants_match_tcp_bbr_c_v3() {
        // 256 · 277 / 100 = 709 (truncated), + 1.
        assert_eq!(V3_STARTUP_PACING_GAIN, 710);
        assert_eq!(V3_STARTUP_CWND_GAIN, 512);
        // 256 · 91 / 100 = 232.96, truncated: 0.906.
        assert_eq!(V3_PROBE_DOWN_GAIN, 232);
        assert_eq!(V3_FULL_LOSS_CNT, 6);
        // Unchanged from v2alpha, as tcp_bbr.c v3 has them.
        assert_eq!(DRAIN_GAIN, 88); // BBR_UNIT * 1000 / 2885
        assert_eq!((LOSS_THRESH, BETA, HEADROOM), (5, 76, 38));
        let b = bbr3("");
        assert!(b.p.v3);
        assert_eq!(b.p.bw_probe_max_rounds, 63);
        assert_eq!(b.p.bw_probe_rand_rounds, 2);
        assert_eq!((b.p.loss_thresh, b.p.beta, b.p.full_loss_cnt), (5, 76, 6));
        // The kernel's startup gains are in force from construction and from init.
        assert_eq!((b.pacing_gain, b.cwnd_gain), (710, 512));
        // bbr2 keeps v2alpha's.
        let b = bbr2();
        assert!(!b.p.v3);
        assert_eq!(
            (b.pacing_gain, b.cwnd_gain, b.p.full_loss_cnt),
            (739, 739, 8)
        );
    }

    #[test]
    fn gains_per_mode_and_phase_are_v3s() {
        // (phase, pacing gain, cwnd gain): UP 1.25 with cwnd 2.25 (512 + 256 · 1 / 4),
        // DOWN 0.906, CRUISE and REFILL 1.0, all with cwnd 2.0.
        for (phase, pacing, cwnd) in [
            (Phase::Up, 320, 576),
            (Phase::Down, 232, CWND_GAIN),
            (Phase::Cruise, 256, CWND_GAIN),
            (Phase::Refill, 256, CWND_GAIN),
        ] {
            let mut b = bbr3("");
            in_probe_bw(&mut b, phase);
            assert_eq!((b.pacing_gain, b.cwnd_gain), (pacing, cwnd), "{phase:?}");
            // v2alpha: UP's cwnd gain stays 2.0, DOWN paces at 0.75.
            let mut b = bbr2();
            in_probe_bw(&mut b, phase);
            let v2 = match phase {
                Phase::Down => (192, CWND_GAIN),
                Phase::Up => (320, CWND_GAIN),
                _ => (256, CWND_GAIN),
            };
            assert_eq!((b.pacing_gain, b.cwnd_gain), v2, "bbr2 {phase:?}");
        }
        let mut b = bbr3("");
        for (mode, gains) in [
            (Mode::Startup, (710, 512)),
            (Mode::Drain, (88, 512)),
            (Mode::ProbeRtt, (256, 256)),
        ] {
            b.mode = mode;
            b.update_gains();
            assert_eq!((b.pacing_gain, b.cwnd_gain), gains, "{mode:?}");
        }
        // The parameters move them.
        let mut b =
            bbr3("bw_probe_cwnd_gain = 3\nprobe_down_gain = 0.75\nstartup_cwnd_gain = 2.89");
        in_probe_bw(&mut b, Phase::Up);
        assert_eq!(b.cwnd_gain, 512 + 192);
        b.cycle_idx = Phase::Down;
        b.update_gains();
        assert_eq!(b.pacing_gain, 192);
        b.mode = Mode::Startup;
        b.update_gains();
        assert_eq!(b.cwnd_gain, 740); // 2.89 · 256 = 739.84, rounded
    }

    #[test]
    fn startup_pacing_starts_at_2_77_times_cwnd_over_srtt() {
        let mut b = bbr3("");
        let mut tp = TcpState {
            srtt_us: 40_000,
            ..Default::default()
        };
        b.init(&mut tp);
        // 10 packets / 40 ms = 250 pkt/s of 1448 bytes = 362 kB/s, · 710/256, less 1 %.
        let bw = (tp.snd_cwnd as u64 * (1 << 24) / 40_000) as u32;
        assert_eq!(
            tp.pacing_rate,
            crate::cc::bbr::bw_to_pacing_rate(&tp, bw, 710)
        );
        let mut b2 = bbr2();
        let mut tp2 = TcpState {
            srtt_us: 40_000,
            ..Default::default()
        };
        b2.init(&mut tp2);
        assert!(tp.pacing_rate < tp2.pacing_rate);
    }

    #[test]
    fn startup_exits_on_loss_after_6_loss_events_in_a_recovery_round_with_inflight_hi_from_the_round(
    ) {
        // Six loss events in the round, then the round ends in Recovery with 3 of 100 packets
        // lost (3 > 100 · 5 >> 8 = 1): STARTUP is over. bbr2 needs 8.
        let run = |b: &mut Bbr2, events: u32| -> bool {
            let mut tp = TcpState {
                now: 1_000_000_000,
                srtt_us: 40_000,
                min_rtt_us: 40_000,
                ..Default::default()
            };
            b.init(&mut tp);
            b.bw_hi = [BW_10MBPS, 0];
            b.inflight_latest = 50;
            tp.ca_state = CaState::Recovery;
            let lossy = RateSample {
                losses: 1,
                ..Default::default()
            };
            b.loss_round_start = false;
            for _ in 0..events - 1 {
                b.check_loss_too_high_in_startup(&tp, &lossy);
            }
            b.loss_round_start = true;
            let end = RateSample {
                losses: 1,
                lost: 3,
                tx_in_flight: 100,
                ..Default::default()
            };
            b.check_loss_too_high_in_startup(&tp, &end);
            b.full.reached
        };
        let mut b = bbr3("");
        assert!(!run(&mut b, 5));
        let mut b = bbr3("");
        assert!(run(&mut b, 6));
        // v3: inflight_hi = max(BDP with budget (34 packets), inflight_latest (50)).
        assert_eq!(b.inflight_hi, 50);
        let mut b = bbr2();
        assert!(!run(&mut b, 6));
        assert!(run(&mut b, 8));
        assert_eq!(b.inflight_hi, 34); // v2alpha: the BDP alone
    }

    #[test]
    fn loss_cuts_bw_lo_and_inflight_lo_and_inflight_hi_to_0_7() {
        // beta 76/256: the multiplier is 180/256 = 0.703.
        // 100 packets · 180 >> 8 = 70; a round that delivered 80 keeps 80.
        assert_eq!(loss_lower_bounds(1000, 100, 0, 0, BETA), (703, 70));
        assert_eq!(loss_lower_bounds(1000, 100, 800, 80, BETA), (800, 80));
        // A probe with too much loss: inflight_hi = max(tx_in_flight, 0.7 · target).
        assert_eq!(inflight_hi_cut(20, 100, BETA), 70);
        // And in a whole ACK: CRUISE with a loss in the round, at a loss-round start.
        let mut b = bbr3("");
        let mut tp = in_probe_bw(&mut b, Phase::Cruise);
        tp.snd_cwnd = 100;
        tp.delivered = 1000;
        b.loss_round_delivered = 900;
        b.loss_in_round = true;
        let rs = RateSample {
            delivered: 1,
            prior_delivered: 950,
            interval_ns: 40_000_000,
            acked_sacked: 1,
            ..Default::default()
        };
        b.update_congestion_signals(&tp, &rs, 1);
        assert_eq!(b.inflight_lo, 70); // 100 (cwnd) · 0.7
        assert_eq!(b.bw_lo, ((BW_10MBPS as u64 * 180) >> 8) as u32); // 9830
    }

    #[test]
    fn full_bw_estimator_uses_each_sample_and_keeps_running_after_startup() {
        let mut b = bbr3("");
        in_probe_bw(&mut b, Phase::Cruise);
        b.full.reached = false;
        b.mode = Mode::Startup;
        b.reset_full_bw();
        // A 100-packet sample sets full_bw; then three round starts at 110 (< 125): plateau.
        b.sample_bw = 100;
        b.round_start = false;
        b.v3_check_full_bw_reached(&sample(1, 0));
        assert_eq!(b.full.bw, 100);
        b.sample_bw = 110;
        b.round_start = true;
        for cnt in 1..=3 {
            assert!(!b.full.reached);
            b.v3_check_full_bw_reached(&sample(1, 0));
            assert_eq!(b.full.cnt, cnt);
        }
        assert!(b.full_bw_now && b.full.reached);
        // Frozen once it plateaued, until reset.
        b.sample_bw = 1000;
        b.v3_check_full_bw_reached(&sample(1, 0));
        assert_eq!(b.full.bw, 100);
        // A sample of 125 or more restarts the count even between round starts (v2alpha
        // looked only at round starts, at max_bw).
        b.reset_full_bw();
        b.full.bw = 100;
        b.full.cnt = 2;
        b.round_start = false;
        b.sample_bw = 125;
        b.v3_check_full_bw_reached(&sample(1, 0));
        assert_eq!((b.full.bw, b.full.cnt), (125, 0));
        // App-limited samples are ignored.
        b.sample_bw = 1000;
        let mut app = sample(1, 0);
        app.is_app_limited = true;
        b.v3_check_full_bw_reached(&app);
        assert_eq!(b.full.bw, 125);
    }

    #[test]
    fn probe_up_ends_on_a_bandwidth_plateau_not_at_1_25_bdp() {
        // In UP with no inflight_hi: a flow past 1.25 BDP after a min_rtt leaves UP in bbr2
        // (is_queuing) but not in bbr3 until its rate has plateaued.
        let setup = |b: &mut Bbr2| -> (TcpState, RateSample) {
            let mut tp = in_probe_bw(b, Phase::Refill);
            tp.delivered = 1000;
            tp.snd_cwnd = 80;
            b.round_start = true;
            b.sample_bw = BW_10MBPS;
            b.start_bw_probe_up(&tp);
            tp.now += 100_000_000; // 100 ms > min_rtt
            let mut rs = sample(34, 900);
            rs.prior_in_flight = 60; // > 1.25 · 34
            (tp, rs)
        };
        let mut b = bbr2();
        let (tp, rs) = setup(&mut b);
        b.update_cycle_phase(&tp, &rs);
        assert_eq!(b.cycle_idx, Phase::Down);

        let mut b = bbr3("");
        let (tp, rs) = setup(&mut b);
        assert_eq!(b.full.bw, BW_10MBPS); // start_bw_probe_up restarted the estimator
        b.round_start = false;
        b.update_cycle_phase(&tp, &rs);
        assert_eq!(b.cycle_idx, Phase::Up);
        // Three rounds with samples below 1.25 · full_bw: plateau, UP ends.
        b.sample_bw = BW_10MBPS;
        for _ in 0..3 {
            assert_eq!(b.cycle_idx, Phase::Up);
            b.round_start = true;
            b.v3_check_full_bw_reached(&rs);
            b.update_cycle_phase(&tp, &rs);
        }
        assert!(b.full_bw_now);
        assert_eq!(b.cycle_idx, Phase::Down);
        assert_eq!(b.ack_phase, AckPhase::ProbeStopping);
    }

    #[test]
    fn probe_up_restarts_the_plateau_detector_while_inflight_hi_limits_cwnd() {
        let mut b = bbr3("");
        let mut tp = in_probe_bw(&mut b, Phase::Up);
        b.inflight_hi = 40;
        tp.snd_cwnd = 40;
        tp.is_cwnd_limited = true;
        b.full_bw_now = true;
        b.full.cnt = 3;
        b.sample_bw = 7;
        assert!(!b.v3_probe_up_plateaued(&tp));
        assert_eq!((b.full.bw, b.full.cnt, b.full_bw_now), (7, 0, false));
        tp.is_cwnd_limited = false;
        b.full_bw_now = true;
        assert!(b.v3_probe_up_plateaued(&tp));
    }

    #[test]
    fn inflight_hi_growth_credit_survives_acks_when_inflight_hi_is_not_limiting() {
        let credit_after = |b: &mut Bbr2| {
            let mut tp = in_probe_bw(b, Phase::Up);
            b.inflight_hi = 50;
            b.probe_up_cnt = 10;
            b.bw_probe_up_acks = 7;
            b.round_start = false;
            tp.snd_cwnd = 40; // below inflight_hi: not using it
            let rs = RateSample {
                acked_sacked: 2,
                ..Default::default()
            };
            b.probe_inflight_hi_upward(&tp, &rs);
            b.bw_probe_up_acks
        };
        assert_eq!(credit_after(&mut bbr3("")), 7);
        assert_eq!(credit_after(&mut bbr2()), 0);
    }

    #[test]
    fn an_rtt_equal_to_the_probe_rtt_min_does_not_postpone_probe_rtt() {
        let stamp_after_equal_sample = |b: &mut Bbr2| {
            let mut tp = in_probe_bw(b, Phase::Cruise);
            let before = b.probe_rtt_min_stamp;
            tp.now += 1_000_000_000; // 1 s later, the 5 s window not expired
            b.update_min_rtt(&mut tp, &sample(1, 0)); // rtt 40 ms = probe_rtt_min_us
            b.probe_rtt_min_stamp.wrapping_sub(before)
        };
        assert_eq!(stamp_after_equal_sample(&mut bbr3("")), 0);
        assert!(stamp_after_equal_sample(&mut bbr2()) > 0);
    }

    #[test]
    fn rto_and_undo_reset_the_whole_estimator() {
        let mut b = bbr3("");
        let mut tp = in_probe_bw(&mut b, Phase::Cruise);
        b.full.bw = 100;
        b.full.cnt = 3;
        b.full_bw_now = true;
        b.set_state(&mut tp, CaState::Loss);
        assert_eq!((b.full.bw, b.full.cnt, b.full_bw_now), (0, 0, false));
        assert!(b.full.reached);
        b.full.cnt = 2;
        b.full_bw_now = true;
        b.undo_cwnd(&tp);
        assert_eq!((b.full.cnt, b.full_bw_now), (0, false));
        // v2alpha's RTO clears full_bw only.
        let mut b = bbr2();
        let mut tp = in_probe_bw(&mut b, Phase::Cruise);
        b.full.bw = 100;
        b.full.cnt = 2;
        b.set_state(&mut tp, CaState::Loss);
        assert_eq!((b.full.bw, b.full.cnt), (0, 2));
    }

    #[test]
    fn latest_filters_hold_the_rounds_max_until_the_end_of_the_ack() {
        // A loss-round start: bbr2 restarts bw_latest / inflight_latest from this sample
        // inside update_congestion_signals; bbr3 still has the round's max there.
        let latest = |b: &mut Bbr2| {
            let mut tp = in_probe_bw(b, Phase::Up);
            tp.delivered = 1000;
            b.loss_round_delivered = 900;
            b.inflight_latest = 60;
            b.bw_latest = 500;
            b.update_congestion_signals(&tp, &sample(30, 950), 300);
            (b.bw_latest, b.inflight_latest)
        };
        assert_eq!(latest(&mut bbr3("")), (500, 60));
        assert_eq!(latest(&mut bbr2()), (300, 30));
    }

    #[test]
    fn init_mid_connection_takes_prior_cwnd_and_the_round_from_the_socket() {
        let mut b = bbr3("");
        let mut tp = TcpState {
            delivered: 5000,
            prior_cwnd: 80,
            srtt_us: 40_000,
            min_rtt_us: 40_000,
            ..Default::default()
        };
        b.init(&mut tp);
        assert_eq!((b.prior_cwnd, b.next_rtt_delivered), (80, 5000));
        let mut b = bbr2();
        b.init(&mut tp);
        assert_eq!((b.prior_cwnd, b.next_rtt_delivered), (0, 0));
    }

    #[test]
    fn bad_parameters_are_named() {
        for (src, key) in [
            ("alpha = 0.1", "alpha"),
            ("probe_down_gain = 1.5", "probe_down_gain"),
            ("probe_down_gain = 0", "probe_down_gain"),
            ("bw_probe_cwnd_gain = 4", "bw_probe_cwnd_gain"),
            ("startup_pacing_gain = 5", "startup_pacing_gain"),
            ("full_loss_cnt = 16", "full_loss_cnt"),
            ("probe_try = true", "probe_try"), // a bbr2plus key
        ] {
            let t: toml::Table = toml::from_str(src).unwrap();
            let e = Params::from_table_v3(&t)
                .err()
                .unwrap_or_else(|| panic!("{src} accepted"));
            assert_eq!(e.key, key);
        }
        // bbr2 does not take bbr3's keys.
        let t: toml::Table = toml::from_str("bw_probe_cwnd_gain = 1").unwrap();
        assert_eq!(
            Params::from_table(&t).unwrap_err().key,
            "bw_probe_cwnd_gain"
        );
    }
}
