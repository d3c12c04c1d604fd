//! Redundant (multipath-tcp.org `mptcp_redundant.c`): every segment goes out on every usable
//! subflow. Each subflow walks the send queue on its own (a cursor per subflow): when it has
//! cwnd space it sends the next DSN it has not sent yet, skipping DSNs already DATA_ACKed; new
//! data is created when the subflow furthest ahead has space, and is sent at once on every
//! subflow that is caught up and has space.

use super::{Pick, SchedContext, Scheduler};
use crate::SubflowMask;

#[derive(Default)]
pub struct Redundant {
    /// Per subflow: the next DSN it would send.
    cursor: Vec<u64>,
}

impl Scheduler for Redundant {
    fn name(&self) -> &'static str {
        "redundant"
    }

    /// mptcp_redundant.c has its own next-segment logic, without it.
    fn uses_receive_buffer_optimization(&self) -> bool {
        false
    }

    fn pick(&mut self, cx: &SchedContext) -> Pick {
        if self.cursor.len() < cx.subflows.len() {
            self.cursor.resize(cx.subflows.len(), 0);
        }
        // A subflow behind the others catches up on DSNs not yet DATA_ACKed.
        for (s, info) in cx.subflows.iter().enumerate() {
            let c = self.cursor[s].max(cx.data_una);
            if info.available() && c < cx.dsn_next {
                self.cursor[s] = c + 1;
                return Pick::Existing { sub: s, dsn: c };
            }
        }
        if !cx.can_send_new {
            return Pick::Wait;
        }
        let mut mask: SubflowMask = 0;
        for (s, info) in cx.subflows.iter().enumerate() {
            if info.available() {
                mask |= 1 << s;
                self.cursor[s] = cx.dsn_next + 1;
            }
        }
        if mask == 0 {
            Pick::Wait
        } else {
            Pick::New(mask)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_support::{cx, sub};

    #[test]
    fn duplicates_new_data_and_lets_a_lagging_subflow_catch_up() {
        let mut r = Redundant::default();
        let subs = [sub(40, 10, 0), sub(90, 10, 10)];
        let mut c = cx(&subs);
        assert_eq!(r.pick(&c), Pick::New(0b01), "only subflow 0 has space");
        c.dsn_next = 1;
        let subs2 = [sub(40, 10, 0), sub(90, 10, 0)];
        c.subflows = &subs2;
        assert_eq!(
            r.pick(&c),
            Pick::Existing { sub: 1, dsn: 0 },
            "subflow 1 catches up on DSN 0"
        );
        assert_eq!(r.pick(&c), Pick::New(0b11), "then both send DSN 1");
        c.data_una = 5;
        c.dsn_next = 6;
        assert_eq!(
            r.pick(&c),
            Pick::Existing { sub: 0, dsn: 5 },
            "DATA_ACKed DSNs are skipped"
        );
    }
}
