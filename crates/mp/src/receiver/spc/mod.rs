//! Subflow Population Control (`receiver = "spc"`): S.-Y. Park, "Multi-path TCP extension for
//! multimedia QoS in wireless networks", PhD thesis, SNU 2016, Ch. 4 (seed 003 §4.4,
//! Algorithm 2). A receiver-only scheme for one path: the sender is an unmodified MPTCP server
//! that opens many subflows (up to 20) over it with uncoupled Cubic, and the receiver steers
//! their number and windows with its ACKs alone.
//!
//! ```text
//!   data segment on subflow s ─► RTT sample R (timestamp echo)
//!        │
//!        ├─ R − RTT_min ≥ σ_RTT  and  t ≥ t_dup          (receiver-side CoDel, `codel`)
//!        │      ├─ an active subflow is not in R_F  → intentional 3-dup-ACK to the one of
//!        │      │                                     highest throughput over the last RTT
//!        │      │                                     (its sender halves: Cubic's β = 0.7)
//!        │      └─ all are                          → switch one off: withhold its ACKs, so
//!        │                                            its sender falls into RTO and stalls
//!        │      cnt += 1, t_dup = t + interval/√cnt
//!        └─ below the target: interval back to 100 ms, cnt = 0; a subflow switched off comes
//!           back on (one ACK released: its sender leaves RTO in slow start), at most one per RTT
//! ```
//!
//! The network's queue is read as `RTT − RTT_min` against the RTT's own mean deviation instead
//! of CoDel's 5 ms, so the target loosens when the path is noisy; a halving by dup-ACKs costs no
//! retransmission delay, because the "lost" segment is already in the reordering buffer. The
//! dissertation's result (Fig. 4.6): from 20 subflows to 3–4 on a static link, delay within
//! 600 ms, utilisation near its maximum more than 80 % of the time.
//!
//! * `codel`: RTT_min, σ_RTT (RFC 6298's RTTVAR) and the inverse-square-root schedule.
//! * `population`: Algorithm 2's sets R_F (in fast recovery by our dup-ACKs) and R_O (switched
//!   off), the per-subflow throughput over one RTT, and which subflow each action picks.
//!
//! The RTT sample is the one a Linux receiver takes from the timestamp option
//! (tcp_rcv_rtt_measure_ts: now − TSecr, at the timestamp clock's 1 ms resolution), as the
//! dissertation measures RTT with "the TCP timestamp option" (seed 003 §6); a segment that
//! echoes nothing yet gives no sample and no decision. [GAP] Which segments give a sample:
//! by default, as Linux, only the first of a subflow that echoes a new TSecr
//! (`rcv_rtt_last_tsecr`): later segments echoing the same TSval left the sender later and
//! would read its idle time as path delay; `rtt_samples = "every"` takes every segment's.
//!
//! Results: time-series columns on the connection's row, `active_subflows` (the connection's
//! subflows, closed ones aside, not switched off; 0 before the first segment arrives),
//! `spc_fast_recovery` (|R_F|), `spc_dupacks`,
//! `spc_turned_off` and `spc_turned_on` (running counts), and their last values in the
//! summary's `receiver_telemetry`.
//!
//! Parameters (`receiver_params`; unknown keys are rejected with this list):
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `interval_ms` | 100 | CoDel's interval: Δ at the start and after the queue clears (§4.4: "starts at 100 ms") |
//! | `control_law` | `"standard"` | [GAP] `"standard"`: Δ = interval/√cnt (RFC 8289, "same with original CoDel"); `"compounding"`: Δ ← Δ/√cnt as Algorithm 2 line 13 is printed |
//! | `min_active` | 1 | [GAP] never switch off below this many active subflows (the dissertation names no floor) |
//! | `rtt_samples` | `"new_echo"` | [GAP] `"new_echo"`: one RTT sample per new TSecr of a subflow (Linux tcp_rcv_rtt_measure_ts); `"every"`: one per segment that echoes a timestamp |
//!
//! Further [GAP] choices (no parameter; each documented where it is made, in `codel` and
//! `population`): statistics updated before the condition is tested; t_dup = t_on = 0 at the
//! start; RTT_min over the whole run; throughput over epochs of one SRTT; ties round robin; the
//! slowest subflow of R_F goes off; the last off comes on first.

mod codel;
mod population;

use super::{ReceiverAction, ReceiverBehaviour, ReceiverView, SegmentArrival};
use codel::{ControlLaw, INTERVAL_NS};
use population::{Act, Arrival, Population};
use rove_sim::Nanos;
use rove_tcp::cc::{params, reject_unknown, ParamError};

const KEYS: &[&str] = &["interval_ms", "control_law", "min_active", "rtt_samples"];

pub struct Spc {
    population: Population,
    /// Sample only a subflow's first segment that echoes a new TSecr (`rtt_samples`).
    new_echo_only: bool,
    /// Per subflow: the TSecr (ms) of its last RTT sample (Linux's rcv_rtt_last_tsecr).
    last_tsecr: [u32; crate::MAX_SUBFLOWS],
}

impl Spc {
    pub fn build(t: &toml::Table) -> Result<Box<dyn ReceiverBehaviour>, ParamError> {
        reject_unknown(t, KEYS)?;
        let interval_ms = params::integer(
            t,
            "interval_ms",
            (INTERVAL_NS / 1_000_000) as u32,
            1,
            10_000,
            "milliseconds",
        )?;
        let law = params::choice(t, "control_law", "standard", ControlLaw::NAMES)?;
        let min_active = params::integer(
            t,
            "min_active",
            1,
            1,
            crate::MAX_SUBFLOWS as u32,
            "subflows",
        )?;
        let samples = params::choice(t, "rtt_samples", "new_echo", &["new_echo", "every"])?;
        Ok(Box::new(Spc {
            population: Population::new(
                interval_ms as Nanos * 1_000_000,
                ControlLaw::from_name(law).expect("a listed name"),
                min_active as usize,
            ),
            new_echo_only: samples == "new_echo",
            last_tsecr: [0; crate::MAX_SUBFLOWS],
        }))
    }

    /// The RTT sample `arrival` gives (module documentation).
    fn rtt_sample(&mut self, arrival: &SegmentArrival) -> Option<Nanos> {
        let rtt = arrival.echo_rtt_ns?;
        if !self.new_echo_only {
            return Some(rtt);
        }
        // TSecr back from the sample: ts_ms(now) − TSecr milliseconds.
        let tsecr = rove_tcp::ts_ms(arrival.now).wrapping_sub((rtt / 1_000_000) as u32);
        let last = &mut self.last_tsecr[arrival.sub];
        if *last == tsecr {
            return None;
        }
        *last = tsecr;
        Some(rtt)
    }

    pub fn population(&self) -> &Population {
        &self.population
    }
}

impl ReceiverBehaviour for Spc {
    fn name(&self) -> &'static str {
        "spc"
    }

    fn on_segment(
        &mut self,
        arrival: &SegmentArrival,
        view: &ReceiverView,
        actions: &mut Vec<ReceiverAction>,
    ) {
        // R: every subflow the connection has and has not closed (joining ones included).
        for sub in 0..view.subflow_count().min(crate::MAX_SUBFLOWS) {
            self.population.set_open(sub, !view.is_closed(sub));
        }
        let rtt_ns = self.rtt_sample(arrival);
        let act = self.population.on_arrival(&Arrival {
            now: arrival.now,
            sub: arrival.sub,
            payload_bytes: arrival.payload_bytes,
            rtt_ns,
            repaired: !view.receiver(arrival.sub).is_holding(),
        });
        if let Some(act) = act {
            actions.push(match act {
                Act::DupAcks(sub) => ReceiverAction::DupAcks { sub },
                Act::Off(sub) => ReceiverAction::Withhold { sub },
                Act::On(sub) => ReceiverAction::Release { sub },
            });
        }
    }

    fn telemetry_names(&self) -> &'static [&'static str] {
        TELEMETRY
    }

    fn telemetry(&self, values: &mut [f64]) {
        let p = &self.population;
        values.copy_from_slice(&[
            p.active() as f64,
            p.fast_recovery.count_ones() as f64,
            p.dup_acks as f64,
            p.turned_off as f64,
            p.turned_on as f64,
        ]);
    }
}

/// The time-series columns (connection row) and the summary's `receiver_telemetry`.
const TELEMETRY: &[&str] = &[
    "active_subflows",
    "spc_fast_recovery",
    "spc_dupacks",
    "spc_turned_off",
    "spc_turned_on",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    #[test]
    fn parameters_are_validated_with_the_accepted_keys() {
        let e = Spc::build(&table("target_ms = 5")).err().unwrap();
        assert_eq!(e.key, "target_ms");
        assert!(
            e.message
                .contains("interval_ms, control_law, min_active, rtt_samples"),
            "{}",
            e.message
        );
        let e = Spc::build(&table("control_law = \"fast\"")).err().unwrap();
        assert_eq!(e.key, "control_law");
        assert!(e.message.contains("standard"), "{}", e.message);
        let e = Spc::build(&table("interval_ms = 0")).err().unwrap();
        assert_eq!(e.key, "interval_ms");
        let e = Spc::build(&table("min_active = 21")).err().unwrap();
        assert!(e.key == "min_active" && e.message.contains("1..=20"), "{}", e.message);
        let e = Spc::build(&table("rtt_samples = \"some\"")).err().unwrap();
        assert_eq!(e.key, "rtt_samples");
        let b = Spc::build(&table("interval_ms = 50\ncontrol_law = \"compounding\"")).unwrap();
        assert_eq!(b.name(), "spc");
        assert_eq!(b.telemetry_names().len(), 5);
    }

    #[test]
    fn one_rtt_sample_per_new_echoed_timestamp() {
        let mut s = Spc {
            population: Population::new(INTERVAL_NS, ControlLaw::Standard, 1),
            new_echo_only: true,
            last_tsecr: [0; crate::MAX_SUBFLOWS],
        };
        let arrival = |now_ms: u64, sub: usize, rtt_ms: u64| SegmentArrival {
            now: now_ms * 1_000_000,
            sub,
            seq: 0,
            in_order: true,
            duplicate: false,
            dsn: 0,
            payload_bytes: 1448,
            sent_at: 0,
            echo_rtt_ns: Some(rtt_ms * 1_000_000),
        };
        // ts_ms(100 ms) = 101; an echo of 50 ms means TSecr 51.
        assert_eq!(s.rtt_sample(&arrival(100, 0, 50)), Some(50_000_000));
        // The same TSecr 1 ms later (a later segment of the same flight): no sample.
        assert_eq!(s.rtt_sample(&arrival(101, 0, 51)), None);
        // Another subflow keeps its own TSecr.
        assert_eq!(s.rtt_sample(&arrival(101, 1, 51)), Some(51_000_000));
        // A new TSecr (52) on subflow 0.
        assert_eq!(s.rtt_sample(&arrival(102, 0, 51)), Some(51_000_000));
        s.new_echo_only = false;
        assert_eq!(s.rtt_sample(&arrival(102, 0, 51)), Some(51_000_000));
    }
}
