//! `kind = "selection"`: seed-002's Option 2 (Table 6.8) on a running flow. The flow sets up
//! with the plan's first algorithm (Option 1: its `cc` must equal `plan[0]`); at each phase
//! boundary of the thesis's time rule where the plan's algorithm changes, the controller
//! switches the flow's algorithm (Linux's `setsockopt(TCP_CONGESTION)`) and hands the window
//! over with Eq. 6.3 (`handoff = "delay_scaled"`, the last 7 samples) or keeps it.
//!
//! Keys, the time rule and the switches are `rove_scenario::selection` (the kernel backend turns
//! the same switches into actions before its run): `flow`, `plan`, `direction`, `speed`,
//! `phases = "time"`, `handoff`, `samples`, `startup`, `constrained`. Algorithm names are
//! checked here against rove's algorithms.
//!
//! It has no `every`: it is called exactly at its switch instants (its cadence is the time to
//! the next one), so a switch lands on the boundary, not on a polling grid.

use super::{Cadence, Controller};
use crate::world::World;
use rove_scenario::component::{ComponentError, ComponentParams};
use rove_scenario::selection::Selection as Schedule;
use rove_scenario::spec::{ActionSpec, Change};
use rove_scenario::Scenario;
use rove_sim::Nanos;

pub struct Selection {
    /// The switches still to make, in time order.
    switches: Vec<ActionSpec>,
    next: usize,
    /// The time of the last call (0 before the first).
    now: Nanos,
}

impl Selection {
    pub fn build(
        p: &ComponentParams,
        scenario: &Scenario,
    ) -> Result<Box<dyn Controller>, ComponentError> {
        let schedule = Schedule::read(p, scenario)?;
        let known = rove_tcp::cc::names();
        if let Some(bad) = schedule.plan.iter().find(|c| !known.contains(&c.as_str())) {
            return Err(ComponentError {
                key: "plan".into(),
                message: format!(
                    "unknown algorithm {bad:?}; algorithms are: {}",
                    known.join(", ")
                ),
            });
        }
        debug_assert!(schedule
            .switches
            .iter()
            .all(|a| matches!(a.change, Change::Cc { .. })));
        Ok(Box::new(Selection {
            switches: schedule.switches,
            next: 0,
            now: 0,
        }))
    }
}

impl Controller for Selection {
    fn kind(&self) -> &'static str {
        "selection"
    }

    /// The time to the next switch; after the last, never again within a run.
    fn cadence(&self) -> Cadence {
        match self.switches.get(self.next) {
            Some(a) => Cadence::Every(a.at_ns.saturating_sub(self.now).max(1)),
            None => Cadence::Every(Nanos::MAX / 4),
        }
    }

    fn tick(&mut self, now: Nanos, _world: &World, actions: &mut Vec<ActionSpec>) {
        self.now = now;
        while let Some(a) = self.switches.get(self.next).filter(|a| a.at_ns <= now) {
            actions.push(a.clone());
            self.next += 1;
        }
    }
}
