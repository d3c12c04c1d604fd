//! minRTT (lowest-RTT-first): the default scheduler of Linux MPTCP (multipath-tcp.org
//! `mptcp_sched.c` "default", get_available_subflow; upstream `mptcp_subflow_get_send`):
//! among the usable subflows with cwnd space, the one with the lowest smoothed RTT.

use super::{lowest_rtt, Pick, SchedContext, Scheduler};

#[derive(Default)]
pub struct MinRtt;

impl Scheduler for MinRtt {
    fn name(&self) -> &'static str {
        "minrtt"
    }

    fn pick(&mut self, cx: &SchedContext) -> Pick {
        if !cx.can_send_new {
            return Pick::Wait;
        }
        match lowest_rtt(cx.subflows, true) {
            Some(s) => Pick::New(1 << s),
            None => Pick::Wait,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_support::{cx, sub};

    #[test]
    fn lowest_srtt_with_space_wins() {
        let subs = [sub(40, 10, 3), sub(90, 10, 0)];
        assert_eq!(MinRtt.pick(&cx(&subs)), Pick::New(0b01));
        let subs = [sub(40, 10, 10), sub(90, 10, 0)];
        assert_eq!(
            MinRtt.pick(&cx(&subs)),
            Pick::New(0b10),
            "the fast subflow is cwnd-limited"
        );
        let subs = [sub(40, 10, 10), sub(90, 10, 10)];
        assert_eq!(MinRtt.pick(&cx(&subs)), Pick::Wait);
        let mut failed = sub(10, 10, 0);
        failed.usable = false;
        let subs = [failed, sub(90, 10, 0)];
        assert_eq!(
            MinRtt.pick(&cx(&subs)),
            Pick::New(0b10),
            "a potentially failed subflow is skipped"
        );
    }
}
