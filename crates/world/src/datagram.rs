//! Unresponsive flows (`workload = "cbr" | "poisson" | "onoff"`): a UDP-like source that sends
//! packets on its own schedule, whatever the network does, and a sink that counts what arrives
//! and how long it took. They load a link or a cell in the background, or flood a queue that a
//! responsive flow shares. Nothing is acknowledged or retransmitted.

use rove_scenario::spec::Process;
use rove_sim::histogram::Histogram;
use rove_sim::packet::{Kind, Packet};
use rove_sim::rng::Stream;
use rove_sim::{Nanos, NS_PER_S};

/// IPv4 (20) and UDP (8) headers: what a datagram carries besides its payload.
pub const UDP_HEADER_BYTES: u32 = 28;

pub struct DatagramSource {
    process: Process,
    packet_bytes: u32,
    /// Mean gap between packets, ns (packet_bytes·8 / rate), kept fractional so a CBR source
    /// holds its rate exactly over any length of run.
    gap_ns: f64,
    rng: Stream,
    start_ns: Nanos,
    /// Send no more than this many bytes on the wire (`size`), if finite.
    limit_bytes: Option<u64>,
    /// When the next packet leaves, ns (fractional).
    next_ns: f64,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
}

/// What arrived at the far end.
#[derive(Debug, Default)]
pub struct DatagramSink {
    pub received_pkts: u64,
    /// Payload bytes received.
    pub payload_bytes: u64,
    /// One-way delay of every packet received (a bounded histogram).
    pub owd: Histogram,
    pub last_arrival: Option<Nanos>,
}

impl DatagramSource {
    pub fn new(
        process: Process,
        rate_bps: u64,
        packet_bytes: u32,
        start_ns: Nanos,
        limit_bytes: Option<u64>,
        rng: Stream,
    ) -> Self {
        DatagramSource {
            process,
            packet_bytes,
            gap_ns: packet_bytes as f64 * 8.0 * NS_PER_S as f64 / rate_bps as f64,
            rng,
            start_ns,
            limit_bytes,
            next_ns: start_ns as f64,
            sent_pkts: 0,
            sent_bytes: 0,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self.process {
            Process::Cbr => "cbr",
            Process::Poisson => "poisson",
            Process::OnOff { .. } => "onoff",
        }
    }

    /// Has sent everything it was asked to.
    pub fn is_complete(&self) -> bool {
        self.limit_bytes
            .is_some_and(|l| self.sent_bytes + self.packet_bytes as u64 > l)
    }

    /// The packet due now (the caller transmits it), or `None` when the source is done; then
    /// the time of the next one.
    pub fn emit(&mut self, now: Nanos) -> (Option<Packet>, Option<Nanos>) {
        if self.is_complete() {
            return (None, None);
        }
        let p = Packet {
            kind: Kind::Segment,
            wire_bytes: self.packet_bytes,
            payload_bytes: self.packet_bytes - UDP_HEADER_BYTES,
            seq: self.sent_pkts,
            sent_at: now,
            ..Default::default()
        };
        self.sent_pkts += 1;
        self.sent_bytes += self.packet_bytes as u64;
        self.advance();
        let next = (!self.is_complete()).then(|| (self.next_ns.round() as Nanos).max(now));
        (Some(p), next)
    }

    /// Moves `next_ns` to the following packet's time.
    fn advance(&mut self) {
        match self.process {
            Process::Cbr => self.next_ns += self.gap_ns,
            Process::Poisson => {
                // Exponential gap by inversion; 1 - u is in (0, 1].
                self.next_ns += -self.gap_ns * (1.0 - self.rng.uniform()).ln();
            }
            Process::OnOff { on_ns, off_ns } => {
                self.next_ns += self.gap_ns;
                let period = (on_ns + off_ns) as f64;
                let phase = (self.next_ns - self.start_ns as f64) % period;
                if phase >= on_ns as f64 {
                    self.next_ns += period - phase; // the next on period
                }
            }
        }
    }

    /// When the first packet leaves.
    pub fn first_at(&self) -> Nanos {
        self.start_ns
    }
}

impl DatagramSink {
    pub fn on_packet(&mut self, p: &Packet, now: Nanos) {
        self.received_pkts += 1;
        self.payload_bytes += p.payload_bytes as u64;
        self.owd.record(now - p.sent_at);
        self.last_arrival = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(process: Process, rate_bps: u64) -> DatagramSource {
        DatagramSource::new(process, rate_bps, 1500, 0, None, Stream::new(1, "t"))
    }

    fn times(s: &mut DatagramSource, until: Nanos) -> Vec<Nanos> {
        let mut t = s.first_at();
        let mut out = vec![];
        while t < until {
            let (p, next) = s.emit(t);
            assert!(p.is_some());
            out.push(t);
            match next {
                Some(n) => t = n,
                None => break,
            }
        }
        out
    }

    #[test]
    fn cbr_sends_at_its_rate_exactly() {
        // 12 Mbit/s of 1500-byte packets: one per millisecond.
        let t = times(&mut source(Process::Cbr, 12_000_000), NS_PER_S);
        assert_eq!(t.len(), 1000);
        assert!(t.windows(2).all(|w| w[1] - w[0] == 1_000_000));
        // A rate that is not a whole number of ns per packet keeps its average.
        let t = times(&mut source(Process::Cbr, 7_000_000), 10 * NS_PER_S);
        assert_eq!(t.len(), 5834); // 7e6 * 10 / 12000 = 5833.3
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_mean_gap() {
        let t = times(&mut source(Process::Poisson, 12_000_000), 100 * NS_PER_S);
        let n = t.len() as f64;
        assert!((n - 100_000.0).abs() < 1000.0, "{n} packets (mean 100000)");
        let gaps: Vec<f64> = t.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        // Exponential: standard deviation equals the mean.
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.02,
            "cv {}",
            var.sqrt() / mean
        );
    }

    #[test]
    fn onoff_sends_only_in_its_on_periods() {
        let on_ns = 200_000_000;
        let off_ns = 300_000_000;
        let t = times(
            &mut source(Process::OnOff { on_ns, off_ns }, 12_000_000),
            NS_PER_S,
        );
        assert_eq!(t.len(), 400, "2 on periods of 200 packets");
        assert!(t.iter().all(|&x| x % (on_ns + off_ns) < on_ns));
        assert_eq!(t[200], on_ns + off_ns, "the second period starts on time");
    }

    #[test]
    fn a_finite_source_stops_at_its_size() {
        let mut s = DatagramSource::new(
            Process::Cbr,
            12_000_000,
            1500,
            0,
            Some(15_000),
            Stream::new(1, "t"),
        );
        let t = times(&mut s, NS_PER_S);
        assert_eq!(t.len(), 10);
        assert!(s.is_complete());
        assert!(matches!(s.emit(10_000_000), (None, None)));
    }
}
