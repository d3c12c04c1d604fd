//! `workload = "requests"`: request/response transfers over one persistent connection (HTTP/1.1
//! keep-alive), for the short-flow experiments of seeds 001 (file downloads of 10 KB–10 MB) and
//! 002 (1 MB short flows 0.1 s apart).
//!
//! A closed loop: the client requests a response, waits for all of it, thinks, and requests
//! the next. The flow's sender is the server; the connection stays open, so cwnd carries over
//! from one response to the next, less what slow start after idle takes away
//! (`TcpSender::set_app_writes`).
//!
//! [GAP] The request itself is not simulated as a packet: the server writes the response one
//! request delay after the request, the sum of the propagation delays of the ACK path
//! (subflow 0's for a multipath flow) as the scenario gives them, without queueing or
//! serialisation (a request of a few hundred bytes). A transfer's completion time runs from
//! the request to the in-order delivery of the response's last byte, so it includes that delay.
//! The first request leaves when the connection is established (the client connects first),
//! so no transfer time includes the handshake.

use super::write_log::WriteLog;
use super::AppStats;
use rove_scenario::spec::{RequestSpec, ResponseSizes, ThinkTime};
use rove_sim::rng::Stream;
use rove_sim::Nanos;

pub struct RequestLoop {
    spec: RequestSpec,
    request_delay_ns: Nanos,
    /// Draws of response sizes and of think times (separate, so that one does not shift the
    /// other).
    size_rng: Stream,
    think_rng: Stream,
    /// Time of the request in progress.
    requested_at: Nanos,
    pub log: WriteLog,
    pub stats: AppStats,
}

impl RequestLoop {
    pub fn new(
        spec: RequestSpec,
        request_delay_ns: Nanos,
        size_rng: Stream,
        think_rng: Stream,
    ) -> Self {
        RequestLoop {
            spec,
            request_delay_ns,
            size_rng,
            think_rng,
            requested_at: 0,
            log: WriteLog::default(),
            stats: AppStats::default(),
        }
    }

    pub fn request_delay_ns(&self) -> Nanos {
        self.request_delay_ns
    }

    /// The connection is established: the first request leaves now. Returns when its response
    /// is written.
    pub fn start(&mut self, now: Nanos) -> Option<Nanos> {
        self.request(now)
    }

    /// A request leaves at `at` unless the loop has made all it may.
    fn request(&mut self, at: Nanos) -> Option<Nanos> {
        if self
            .spec
            .max_requests
            .is_some_and(|n| self.stats.writes >= n)
        {
            return None;
        }
        self.requested_at = at;
        Some(at + self.request_delay_ns)
    }

    /// The request reached the server: it writes the response.
    pub fn on_wake(&mut self, _now: Nanos, write: &mut dyn FnMut(u64)) -> Option<Nanos> {
        let bytes = self.response_bytes();
        self.log.write(bytes, self.requested_at);
        self.stats.writes += 1;
        write(bytes);
        None
    }

    /// The transport's in-order point reached `in_order_seg` at `now`. Returns when the
    /// next response is written, once this one is complete.
    pub fn on_delivery(&mut self, now: Nanos, in_order_seg: u64) -> Option<Nanos> {
        let stats = &mut self.stats;
        let mut complete = false;
        self.log.advance(in_order_seg, |w| {
            stats.delay.record(now - w.at);
            stats.delivered += 1;
            complete = true;
        });
        if !complete {
            return None;
        }
        let think = self.think_ns();
        self.request(now + think)
    }

    /// The next response's size.
    fn response_bytes(&mut self) -> u64 {
        let k = self.stats.writes;
        let rng = &mut self.size_rng;
        let draw = match &self.spec.sizes {
            ResponseSizes::List { bytes, random } => {
                let i = if *random {
                    ((rng.uniform() * bytes.len() as f64) as usize).min(bytes.len() - 1)
                } else {
                    (k % bytes.len() as u64) as usize
                };
                return bytes[i];
            }
            ResponseSizes::LogNormal {
                median_bytes,
                sigma,
                max_bytes,
            } => (
                median_bytes * (sigma * rng.standard_normal()).exp(),
                max_bytes,
            ),
            ResponseSizes::Pareto {
                min_bytes,
                alpha,
                max_bytes,
            } => {
                // Inversion: 1 − U is in (0, 1], so the draw is at least x_m.
                (
                    min_bytes * (1.0 - rng.uniform()).powf(-1.0 / alpha),
                    max_bytes,
                )
            }
        };
        let (bytes, max) = draw;
        let b = if bytes.is_finite() {
            bytes.round()
        } else {
            f64::MAX
        };
        let b = (b.min(u64::MAX as f64) as u64).max(1);
        max.map_or(b, |m| b.min(m))
    }

    fn think_ns(&mut self) -> Nanos {
        match self.spec.think {
            ThinkTime::Fixed(ns) => ns,
            ThinkTime::Exponential(mean) => {
                (-(mean as f64) * (1.0 - self.think_rng.uniform()).ln()).round() as Nanos
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(sizes: ResponseSizes, think: ThinkTime, max_requests: Option<u64>) -> RequestLoop {
        RequestLoop::new(
            RequestSpec {
                sizes,
                think,
                max_requests,
            },
            5_000_000,
            Stream::new(3, "sizes"),
            Stream::new(3, "think"),
        )
    }

    #[test]
    fn a_closed_loop_requests_thinks_and_stops_after_its_count() {
        let mut r = make(
            ResponseSizes::List {
                bytes: vec![1_000, 3_000],
                random: false,
            },
            ThinkTime::Fixed(1_000_000_000),
            Some(2),
        );
        // Request at 0; the response is written one request delay (5 ms) later.
        assert_eq!(r.start(0), Some(5_000_000));
        let mut written = Vec::new();
        assert_eq!(r.on_wake(5_000_000, &mut |b| written.push(b)), None);
        // One segment: delivered at 20 ms, a 20 ms transfer. Next request after 1 s of thought.
        assert_eq!(r.on_delivery(20_000_000, 1), Some(1_025_000_000));
        r.on_wake(1_025_000_000, &mut |b| written.push(b));
        assert_eq!(written, [1_000, 3_000]);
        assert_eq!(r.on_delivery(1_030_000_000, 2), None, "not complete yet");
        assert_eq!(
            r.on_delivery(1_060_000_000, 4),
            None,
            "the count is reached"
        );
        assert_eq!((r.stats.writes, r.stats.delivered), (2, 2));
        assert_eq!(r.stats.delay.min(), Some(20_000_000));
        assert_eq!(r.stats.delay.max(), Some(40_000_000));
    }

    #[test]
    fn distributions_have_their_hand_computed_medians_and_floors() {
        let mut r = make(
            ResponseSizes::LogNormal {
                median_bytes: 100_000.0,
                sigma: 1.0,
                max_bytes: None,
            },
            ThinkTime::Fixed(0),
            None,
        );
        let mut v: Vec<u64> = (0..20_001).map(|_| r.response_bytes()).collect();
        v.sort_unstable();
        let median = v[10_000] as f64;
        assert!((median / 100_000.0 - 1.0).abs() < 0.05, "median {median}");
        let mut p = make(
            ResponseSizes::Pareto {
                min_bytes: 10_000.0,
                alpha: 1.5,
                max_bytes: Some(1_000_000),
            },
            ThinkTime::Fixed(0),
            None,
        );
        let v: Vec<u64> = (0..20_000).map(|_| p.response_bytes()).collect();
        assert!(v.iter().all(|&b| (10_000..=1_000_000).contains(&b)));
        // P(X > 2 x_m) = 2^-1.5 = 0.354.
        let above = v.iter().filter(|&&b| b > 20_000).count() as f64 / v.len() as f64;
        assert!((above - 0.354).abs() < 0.02, "{above}");
    }

    #[test]
    fn exponential_think_times_have_their_mean() {
        let mut r = make(
            ResponseSizes::List {
                bytes: vec![1],
                random: true,
            },
            ThinkTime::Exponential(100_000_000),
            None,
        );
        let n = 20_000;
        let mean = (0..n).map(|_| r.think_ns() as f64).sum::<f64>() / n as f64;
        assert!((mean / 1e8 - 1.0).abs() < 0.03, "{mean}");
    }
}
