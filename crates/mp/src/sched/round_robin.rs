//! Round-robin (multipath-tcp.org `mptcp_rr.c`, with its defaults `cwnd_limited = true` and
//! `num_segments = 1`): subflows take turns, one segment each, in index order; a subflow
//! without cwnd space is skipped.

use super::{Pick, SchedContext, Scheduler};

#[derive(Default)]
pub struct RoundRobin {
    /// The subflow that sent last.
    last: Option<usize>,
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "roundrobin"
    }

    fn pick(&mut self, cx: &SchedContext) -> Pick {
        if !cx.can_send_new {
            return Pick::Wait;
        }
        let n = cx.subflows.len();
        let first = self.last.map_or(0, |l| l + 1);
        for k in 0..n {
            let s = (first + k) % n;
            if cx.subflows[s].available() {
                self.last = Some(s);
                return Pick::New(1 << s);
            }
        }
        Pick::Wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_support::{cx, sub};

    #[test]
    fn takes_turns_and_skips_full_subflows() {
        let mut rr = RoundRobin::default();
        let subs = [sub(40, 10, 0), sub(90, 10, 0), sub(60, 10, 10)];
        let picks: Vec<Pick> = (0..4).map(|_| rr.pick(&cx(&subs))).collect();
        assert_eq!(
            picks,
            [Pick::New(1), Pick::New(2), Pick::New(1), Pick::New(2)]
        );
    }
}
