//! Random loss on entry, and propagation delay with optional jitter.

use crate::rng::Stream;
use crate::Nanos;
use rove_scenario::spec::{JitterDistribution, JitterSpec, LossSpec};

pub struct Loss {
    spec: LossSpec,
    rng: Stream,
    /// Gilbert-Elliott state: true while in the bad state.
    bad: bool,
}

impl Loss {
    pub fn new(spec: LossSpec, rng: Stream) -> Self {
        Loss {
            spec,
            rng,
            bad: false,
        }
    }

    /// Replaces the loss model from now on (the Gilbert-Elliott state starts good).
    pub fn set(&mut self, spec: LossSpec) {
        self.spec = spec;
        self.bad = false;
    }

    /// Whether the next packet offered to the link is lost.
    #[inline]
    pub fn drops_next(&mut self) -> bool {
        match self.spec {
            LossSpec::None => false,
            LossSpec::Bernoulli { p } => self.rng.chance(p),
            LossSpec::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                // Step the chain, then draw the loss in the new state (netem's gemodel order).
                let flip = if self.bad {
                    p_bad_to_good
                } else {
                    p_good_to_bad
                };
                if self.rng.chance(flip) {
                    self.bad = !self.bad;
                }
                self.rng
                    .chance(if self.bad { loss_in_bad } else { loss_in_good })
            }
        }
    }
}

/// Propagation delay plus jitter, after serialization.
pub struct Propagation {
    delay_ns: Nanos,
    jitter: Option<JitterSpec>,
    rng: Stream,
    /// Latest arrival handed out, to keep order when jitter may not reorder.
    last_arrival: Nanos,
}

impl Propagation {
    pub fn new(delay_ns: Nanos, jitter: Option<JitterSpec>, rng: Stream) -> Self {
        Propagation {
            delay_ns,
            jitter,
            rng,
            last_arrival: 0,
        }
    }

    /// A new one-way delay for packets that leave from now on. A packet never overtakes one
    /// that left before it (a shorter delay holds it back), as on a real path whose delay fell.
    pub fn set_delay(&mut self, delay_ns: Nanos) {
        self.delay_ns = delay_ns;
    }

    /// When a packet whose last bit left the serializer at `departs` reaches the far end.
    #[inline]
    pub fn arrival(&mut self, departs: Nanos) -> Nanos {
        let Some(j) = self.jitter else {
            // Without jitter arrivals follow departures, unless the delay was just lowered.
            let at = (departs + self.delay_ns).max(self.last_arrival);
            self.last_arrival = at;
            return at;
        };
        let spread = j.amount_ns as f64;
        let offset = match j.distribution {
            JitterDistribution::Gaussian => spread * self.rng.standard_normal(),
            JitterDistribution::Uniform => spread * (2.0 * self.rng.uniform() - 1.0),
        };
        // delay + offset, clamped so the total delay is never negative.
        let delay = (self.delay_ns as f64 + offset).max(0.0).round() as Nanos;
        let mut at = departs + delay;
        if !j.reorder {
            at = at.max(self.last_arrival);
        }
        self.last_arrival = self.last_arrival.max(at);
        at
    }
}
