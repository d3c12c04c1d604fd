//! seed 003 Ch. 2's cost metrics of a multipath flow whose paths carry a cost (`paths[].cost`,
//! a_s per Mbit/s: WiFi 1, LTE 10 in its §2.5):
//!
//! * the **path cost** Σ_s a_s·x_s, with x_s the payload that arrived over subflow s per second
//!   of the flow's active time, Mbit/s ("the cost that the user has to pay to download data at
//!   unit rate", §2.4.1): the summary's `path_cost`, and each subflow's `cost`;
//! * each subflow's **peak instantaneous x_s/c_s** (Fig. 2.5): the largest, over windows of
//!   [`RATE_WINDOW_NS`], of the bytes the connection handed the subflow (payload and 52 header
//!   bytes per segment: its sending rate, the dissertation's "traffic allocation to subflow s")
//!   over the bytes the narrowest link of its data path could carry in the window (the link of
//!   least capacity in that window). Above 1 the subflow was given more than its path carries:
//!   its queue grows. The summary's `subflows[].peak_x_over_c`.
//!
//! [GAP] The dissertation does not say over what time its "maximum instantaneous" x/c is taken.
//! Windows are 100 ms (the utilisation windows of issue 18), closed at the time-series sample
//! times (every `sample_interval`), so a window is 100 ms rounded up to whole sample intervals;
//! only windows inside the measurement window count. Nothing here runs for a flow without costs,
//! so other outputs are unchanged.

use crate::transport::Transport;
use crate::world::{Flow, RouteTable};
use rove_sim::link::AnyLink;
use rove_sim::{Nanos, NS_PER_MS};
use rove_tcp::HEADER_BYTES;

/// Length of the windows of x_s/c_s ([GAP], see the module documentation).
pub const RATE_WINDOW_NS: Nanos = 100 * NS_PER_MS;

/// The peak-x/c tracker of one costed multipath flow.
#[derive(Debug, Clone)]
pub struct RatePeaks {
    /// The open window's start (`None` before the first sample) and, at that time, every
    /// link's capacity so far (bytes) and each subflow's bytes handed over (wire bytes).
    start: Option<Nanos>,
    capacity_at_start: Vec<f64>,
    handed_at_start: Vec<u64>,
    /// Per subflow: the largest x/c of a window so far (`None` before one closed).
    pub peak: Vec<Option<f64>>,
    /// The measurement window: windows outside it do not count.
    measure_ns: (Nanos, Nanos),
}

/// Bytes the connection handed subflow `j` so far, on the wire (payload and headers).
fn handed_wire_bytes(t: &Transport, j: usize) -> u64 {
    match t {
        Transport::Multipath(c) => c.subflows.get(j).map_or(0, |sf| {
            sf.bytes_assigned + sf.segs_assigned * HEADER_BYTES as u64
        }),
        _ => 0,
    }
}

impl RatePeaks {
    pub fn new(measure_ns: (Nanos, Nanos)) -> Self {
        RatePeaks {
            start: None,
            capacity_at_start: Vec::new(),
            handed_at_start: Vec::new(),
            peak: Vec::new(),
            measure_ns,
        }
    }

    /// A time-series sample at `now`: closes the open window if it is [`RATE_WINDOW_NS`] old
    /// (updating the peaks when it lies in the measurement window) and opens the next.
    pub fn sample(&mut self, now: Nanos, flow: &Flow, links: &[AnyLink], routes: &RouteTable) {
        let n = flow.transport.subflow_count();
        if let Some(start) = self.start {
            if now < start + RATE_WINDOW_NS {
                return;
            }
            let counts = start >= self.measure_ns.0 && now <= self.measure_ns.1;
            self.peak.resize(n, None);
            for j in 0..n {
                let handed = handed_wire_bytes(&flow.transport, j)
                    - self.handed_at_start.get(j).copied().unwrap_or(0);
                let capacity = routes
                    .get(flow.routes[j].data)
                    .iter()
                    .map(|h| {
                        let l = h.link as usize;
                        links[l].capacity_bytes(now) - self.capacity_at_start[l]
                    })
                    .fold(f64::INFINITY, f64::min);
                if counts && capacity > 0.0 && capacity.is_finite() {
                    let ratio = handed as f64 / capacity;
                    let p = &mut self.peak[j];
                    *p = Some(p.map_or(ratio, |q| q.max(ratio)));
                }
            }
        }
        self.start = Some(now);
        self.capacity_at_start.clear();
        self.capacity_at_start
            .extend(links.iter().map(|l| l.capacity_bytes(now)));
        self.handed_at_start.clear();
        self.handed_at_start
            .extend((0..n).map(|j| handed_wire_bytes(&flow.transport, j)));
    }
}
