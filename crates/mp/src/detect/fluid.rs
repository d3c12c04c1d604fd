//! A small fluid model of two BBR-like subflows, behind one shared bottleneck or two disjoint
//! ones, for the detectors' tests. Not a simulator of BBR: just enough of it to make the
//! signals the detectors read.
//!
//! * Links: capacity C, a fluid queue q (bytes) with a buffer of `buffer_bdp` BDPs (Table I:
//!   1 BDP); q grows by (arrivals − C)·dt. A full buffer drops: every subflow sending into it
//!   then has a loss event.
//! * Subflows: paced at gain·bw, bw = the subflow's share (C/2 each when shared, C when alone),
//!   cycling through BBR's eight PROBE_BW gains [1.25, 0.75, 1 × 6] of one RTprop each, from a
//!   random phase (never the 0.75 one). The sender's rate reaches the bottleneck RTprop/4 later;
//!   an ACK (one per 1500-byte packet) carries RTT = RTprop, plus the queue delay the packet
//!   met, plus uniform noise in [0, `jitter_ms`); a random loss (per packet, `loss`) starts a loss
//!   event unless one started within the last srtt.
//! * min_rtt: lowered by a strictly smaller sample, re-taken after 10 s, which also enters
//!   PROBE_RTT (4 packets per RTprop for 200 ms + RTprop, then min_rtt's stamp is refreshed
//!   and PROBE_BW resumes at a random phase), as tcp_bbr.c does.
//! * Competing BBR flows keep a standing queue (each one's cwnd is 2 BDP of its own estimate):
//!   while two started subflows share a bottleneck, each one in PROBE_BW adds
//!   `standing_ms / 2` of queue delay there (outside the fluid queue, which holds the probes).
//!   A subflow in PROBE_RTT (4 packets) holds none, so the other sees a lower RTT and restarts
//!   its min_rtt timer: the PROBE_RTT synchronisation S2 relies on (seed-001 §2.3) follows.
//! * The topology may switch (shared ↔ disjoint) once, at `switch_ms`.

use super::{same_partition, AckObservation, Detector};
use rove_sim::rng::Stream;
use rove_sim::Nanos;
use rove_tcp::cc::{ModelPhase, PathModel};

/// BBR's PROBE_BW pacing gains (tcp_bbr.c bbr_pacing_gain).
const GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const PACKET_BYTES: f64 = 1500.0;
const DT_MS: f64 = 0.5;
/// tcp_bbr.c: bbr_min_rtt_win_sec, bbr_probe_rtt_mode_ms, bbr_cwnd_min_target.
const MIN_RTT_WIN_MS: f64 = 10_000.0;
const PROBE_RTT_MS: f64 = 200.0;
const PROBE_RTT_PACKETS: f64 = 4.0;

#[derive(Debug, Clone, Copy)]
pub struct FluidConfig {
    /// Topology at the start: one shared bottleneck (link 0) or one link per subflow.
    pub shared: bool,
    /// When the topology switches to the other one, ms.
    pub switch_ms: Option<f64>,
    /// Capacity of link 0 and link 1, Mbit/s (the shared bottleneck is link 0).
    pub cap_mbps: [f64; 2],
    pub rtprop_ms: [f64; 2],
    pub start_ms: [f64; 2],
    pub loss: f64,
    pub jitter_ms: f64,
    pub buffer_bdp: f64,
    /// Standing queue delay of two competing subflows, ms.
    pub standing_ms: f64,
    pub duration_ms: f64,
    pub seed: u64,
}

impl Default for FluidConfig {
    /// Seed-001 Table I's shared case: 10 Mbit/s, 1 BDP of buffer, 0.1 % loss; RTprops 20 and
    /// 40 ms (link delays 10 and 20 ms).
    fn default() -> Self {
        FluidConfig {
            shared: true,
            switch_ms: None,
            cap_mbps: [10.0, 10.0],
            rtprop_ms: [20.0, 40.0],
            start_ms: [0.0, 700.0],
            loss: 0.001,
            jitter_ms: 0.5,
            buffer_bdp: 1.0,
            standing_ms: 10.0,
            duration_ms: 60_000.0,
            seed: 1,
        }
    }
}

/// One 100 ms sample of a run: the detector's partition and the true one.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub t_ms: f64,
    pub groups: [u32; 2],
    pub shared: bool,
}

impl Sample {
    pub fn correct(&self) -> bool {
        same_partition(&self.groups, if self.shared { &[0, 0] } else { &[0, 1] })
    }
}

/// Fraction of `samples` in `[from_ms, to_ms)` equal to the true partition.
pub fn accuracy(samples: &[Sample], from_ms: f64, to_ms: f64) -> f64 {
    let window: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.t_ms >= from_ms && s.t_ms < to_ms)
        .collect();
    window.iter().filter(|s| s.correct()).count() as f64 / window.len().max(1) as f64
}

struct Flow {
    rtprop: f64,
    start: f64,
    probe_rtt: bool,
    probe_rtt_end: f64,
    cycle_idx: usize,
    phase_start: f64,
    min_rtt: f64,
    min_stamp: f64,
    srtt: f64,
    last_loss: f64,
    /// Packets sent and not yet acknowledged by the model (fractional).
    credit: f64,
    /// Sending rate of past steps (bytes/ms), newest at `step`.
    rates: Vec<f64>,
    rng: Stream,
}

impl Flow {
    fn gain(&self) -> f64 {
        if self.probe_rtt {
            1.0
        } else {
            GAINS[self.cycle_idx]
        }
    }

    fn random_phase(&mut self) -> usize {
        // Any phase but the 0.75 one (tcp_bbr.c bbr_reset_probe_bw_mode).
        let k = (self.rng.uniform() * 7.0) as usize;
        if k == 0 {
            0
        } else {
            k + 1
        }
    }
}

/// Runs the model for `cfg.duration_ms`, feeding `det` and sampling its partition every 100 ms
/// once both subflows have started.
pub fn run(cfg: &FluidConfig, det: &mut dyn Detector) -> Vec<Sample> {
    let steps = (cfg.duration_ms / DT_MS) as usize;
    let hist = (cfg.rtprop_ms[0].max(cfg.rtprop_ms[1]) / DT_MS) as usize + 4;
    let cap = cfg.cap_mbps.map(|m| m * 1e6 / 8.0 / 1000.0); // bytes per ms
    let mut flows: Vec<Flow> = (0..2)
        .map(|i| Flow {
            rtprop: cfg.rtprop_ms[i],
            start: cfg.start_ms[i],
            probe_rtt: false,
            probe_rtt_end: 0.0,
            cycle_idx: 0,
            phase_start: cfg.start_ms[i],
            min_rtt: f64::INFINITY,
            min_stamp: cfg.start_ms[i],
            srtt: 0.0,
            last_loss: f64::NEG_INFINITY,
            credit: 0.0,
            rates: vec![0.0; hist],
            rng: Stream::new(cfg.seed, &format!("fluid:flow{i}")),
        })
        .collect();
    for f in flows.iter_mut() {
        f.cycle_idx = f.random_phase();
    }
    let mut queue = [0.0f64; 2];
    // Queue delay (ms) of each link at past steps.
    let mut qdelay = vec![[0.0f64; 2]; hist];
    let mut samples = Vec::new();
    for step in 0..steps {
        let t = step as f64 * DT_MS;
        let slot = step % hist;
        let shared = cfg.shared ^ cfg.switch_ms.is_some_and(|s| t >= s);
        let link = |i: usize| if shared { 0 } else { i };
        // Senders: state machine and rate.
        for (i, f) in flows.iter_mut().enumerate() {
            let rate = if t < f.start {
                0.0
            } else {
                if f.probe_rtt && t >= f.probe_rtt_end {
                    f.probe_rtt = false;
                    f.min_stamp = t;
                    f.cycle_idx = f.random_phase();
                    f.phase_start = t;
                }
                if !f.probe_rtt && t - f.phase_start >= f.rtprop {
                    f.cycle_idx = (f.cycle_idx + 1) % GAINS.len();
                    f.phase_start = t;
                }
                let bw = if shared { cap[0] / 2.0 } else { cap[i] };
                if f.probe_rtt {
                    PROBE_RTT_PACKETS * PACKET_BYTES / f.rtprop
                } else {
                    f.gain() * bw
                }
            };
            f.rates[slot] = rate;
        }
        // Bottlenecks: arrivals are what the senders sent RTprop/4 ago.
        let mut overflow = [false; 2];
        for (l, q) in queue.iter_mut().enumerate() {
            let arrivals: f64 = (0..2)
                .filter(|&i| link(i) == l)
                .map(|i| {
                    let lag = (flows[i].rtprop / 4.0 / DT_MS) as usize;
                    flows[i].rates[(step + hist - lag) % hist]
                })
                .sum();
            let buffer = cfg.buffer_bdp * cap[l] * cfg.rtprop_ms[0].max(cfg.rtprop_ms[1]);
            *q += (arrivals - cap[l]) * DT_MS;
            if *q > buffer {
                *q = buffer;
                overflow[l] = true;
            }
            *q = q.max(0.0);
            qdelay[slot][l] = *q / cap[l];
        }
        // Standing queue of competing subflows: each one in PROBE_BW holds half of it.
        let competing = shared && flows.iter().all(|f| t >= f.start);
        let standing: f64 = if competing {
            flows.iter().filter(|f| !f.probe_rtt).count() as f64 * cfg.standing_ms / 2.0
        } else {
            0.0
        };
        // ACKs: one per packet sent, carrying the queue delay the packet met.
        let now = (t * 1e6) as Nanos;
        for i in 0..2 {
            let l = link(i);
            let f = &mut flows[i];
            if t < f.start {
                continue;
            }
            f.credit += f.rates[slot] * DT_MS / PACKET_BYTES;
            let back = ((f.rtprop * 0.75) / DT_MS) as usize;
            while f.credit >= 1.0 {
                f.credit -= 1.0;
                let rtt = f.rtprop
                    + standing
                    + qdelay[(step + hist - back) % hist][l]
                    + cfg.jitter_ms * f.rng.uniform();
                f.srtt = if f.srtt == 0.0 {
                    rtt
                } else {
                    f.srtt + (rtt - f.srtt) / 8.0
                };
                let expired = t > f.min_stamp + MIN_RTT_WIN_MS;
                if rtt < f.min_rtt || expired {
                    f.min_rtt = rtt;
                    f.min_stamp = t;
                }
                if expired && !f.probe_rtt {
                    f.probe_rtt = true;
                    f.probe_rtt_end = t + PROBE_RTT_MS + f.rtprop;
                }
                let lost = f.rng.chance(cfg.loss) || overflow[l];
                let loss_event = lost && t - f.last_loss >= f.srtt;
                if loss_event {
                    f.last_loss = t;
                }
                let obs = AckObservation {
                    now,
                    sent_at: now,
                    rtt_us: Some((rtt * 1e3) as u64),
                    srtt_us: (f.srtt * 1e3) as u64,
                    model: Some(PathModel {
                        bw_bps: if shared { cap[0] / 2.0 } else { cap[i] } * 8e3,
                        min_rtt_us: Some((f.min_rtt * 1e3) as u32),
                        phase: if f.probe_rtt {
                            ModelPhase::ProbeRtt
                        } else {
                            ModelPhase::ProbeBw
                        },
                        pacing_gain: f.gain(),
                    }),
                };
                det.on_ack(i, &obs);
                if loss_event {
                    det.on_loss_event(i, now);
                }
            }
        }
        if step % (100.0 / DT_MS) as usize == 0 && t >= cfg.start_ms[0].max(cfg.start_ms[1]) {
            let mut groups = [0u32; 2];
            det.partition(now, &mut groups);
            samples.push(Sample {
                t_ms: t,
                groups,
                shared,
            });
        }
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::bccps::{Bccps, BccpsParams, Couple};
    use crate::detect::dwc::{Dwc, DwcParams};
    use crate::detect::Common;

    /// The topologies: seed-001 Table I (10 Mbit/s shared bottleneck, subflow delays 10/10 and
    /// 10/20 ms; non-shared 10 and 20 Mbit/s, delays 10 to 50 ms), 1 BDP buffers, 0.1 % loss.
    fn topologies() -> Vec<(&'static str, FluidConfig)> {
        let d = FluidConfig::default();
        vec![
            (
                "shared 20/20 ms",
                FluidConfig {
                    rtprop_ms: [20.0, 20.0],
                    ..d
                },
            ),
            (
                "shared 20/40 ms",
                FluidConfig {
                    rtprop_ms: [20.0, 40.0],
                    ..d
                },
            ),
            (
                "disjoint 20/20 ms",
                FluidConfig {
                    shared: false,
                    rtprop_ms: [20.0, 20.0],
                    ..d
                },
            ),
            (
                "disjoint 20/60 ms",
                FluidConfig {
                    shared: false,
                    cap_mbps: [10.0, 20.0],
                    rtprop_ms: [20.0, 60.0],
                    ..d
                },
            ),
        ]
    }

    type Make = fn() -> Box<dyn Detector>;

    fn detectors() -> Vec<(&'static str, Make)> {
        vec![
            ("bccps", || {
                Box::new(Bccps::new(BccpsParams::default(), Common::default(), 2))
            }),
            ("bccps/candidate", || {
                let p = BccpsParams {
                    couple: Couple::Candidate,
                    ..BccpsParams::default()
                };
                Box::new(Bccps::new(p, Common::default(), 2))
            }),
            ("dwc", || {
                Box::new(Dwc::new(DwcParams::default(), Common::default()))
            }),
        ]
    }

    /// Accuracy (fraction of 100 ms samples equal to the true partition, from the second
    /// subflow's start) of each detector on each topology, five seeds of 60 s.
    fn measure(cfg: &FluidConfig, make: Make, from_ms: f64) -> f64 {
        let runs: Vec<f64> = (1..=5u64)
            .map(|seed| {
                let cfg = FluidConfig { seed, ..*cfg };
                accuracy(&run(&cfg, make().as_mut()), from_ms, f64::INFINITY)
            })
            .collect();
        runs.iter().sum::<f64>() / runs.len() as f64
    }

    /// What is asserted, and why it is robust in this model:
    /// * bccps on disjoint paths ≥ 0.9: a false group needs S1's candidacy *and* PROBE_RTT
    ///   entries that coincide by chance (±260 ms in ~10 s), which the timers of independent
    ///   paths rarely do (measured 1.00 and 0.97).
    /// * bccps on a shared bottleneck after 35 s ≥ 0.9: the model's PROBE_RTT timers align by
    ///   the 2nd or 3rd episode (20-30 s) and S2 confirms then (measured 1.00); over the whole
    ///   run nothing is confirmed before that, so only ≥ 0.4 (measured 0.60, 0.63).
    /// * S2 is what makes bccps right on disjoint paths: S1 alone (couple = "candidate") is
    ///   worse there (measured 0.41, 0.49: ±1 RTprop of the larger RTprop over probes every
    ///   8 RTprop of the smaller matches by chance).
    /// * dwc on disjoint 20/60 ms < 0.5: BBR's probes are delay signals at half the time a
    ///   random loss strikes, so it groups independent paths (measured 0.29).
    #[test]
    fn detection_accuracy_on_the_fluid_model() {
        let mut overall = vec![0.0; detectors().len()];
        for (tname, cfg) in topologies() {
            for (k, (dname, make)) in detectors().into_iter().enumerate() {
                let whole = measure(&cfg, make, 0.0);
                let late = measure(&cfg, make, 35_000.0);
                overall[k] += whole / topologies().len() as f64;
                println!("{tname:18} {dname:16} accuracy {whole:.3} (after 35 s {late:.3})");
                match (cfg.shared, dname) {
                    (false, "bccps") => assert!(whole >= 0.9, "{tname} {dname}"),
                    (true, "bccps") => assert!(whole >= 0.4 && late >= 0.9, "{tname} {dname}"),
                    (false, "bccps/candidate") => {
                        assert!(whole < measure(&cfg, detectors()[0].1, 0.0), "{tname}")
                    }
                    _ => {}
                }
                if tname == "disjoint 20/60 ms" && dname == "dwc" {
                    assert!(whole < 0.5);
                }
            }
        }
        for (k, (dname, _)) in detectors().into_iter().enumerate() {
            println!(
                "mean over the four topologies: {dname:16} {:.3}",
                overall[k]
            );
        }
    }
}
