//! Path elements: middleboxes that sit at the entry of a link and may read and rewrite the
//! packets that cross it, or decide their fate (drop one, hold it back for a while). This is
//! where an access point's receive-window enforcement or a TCP-aware middlebox acts.
//!
//! A scenario places one with
//!
//! ```toml
//! [[elements]]
//! kind = "rwnd"        # from REGISTRY
//! link = "up"          # the link at whose entry it acts
//! ...                  # its own keys
//! ```
//!
//! To add one: write `element/NAME.rs` with a type implementing [`PathElement`] and a builder,
//! and add one line to [`REGISTRY`].

mod rwnd;

use rove_scenario::component::{build_components, ComponentError, ComponentParams};
use rove_scenario::Scenario;
use rove_sim::packet::Packet;
use rove_sim::Nanos;

/// What happens to a packet after an element saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// On to the link (possibly rewritten).
    Pass,
    /// Gone.
    Drop,
    /// Offered to the link at this later time (not shown to the element again).
    Hold(Nanos),
}

pub trait PathElement: Send + Sync {
    fn kind(&self) -> &'static str;

    /// `packet` is about to enter the element's link at `now`.
    fn on_packet(&mut self, now: Nanos, packet: &mut Packet) -> Fate;
}

/// A built element and the link it acts on.
pub struct Placed {
    pub link: usize,
    pub element: Box<dyn PathElement>,
}

type Builder = fn(&ComponentParams, &Scenario) -> Result<Placed, ComponentError>;

/// Every path element rove knows: (kind, constructor).
pub const REGISTRY: &[(&str, Builder)] = &[("rwnd", rwnd::RwndRewrite::build)];

pub fn kinds() -> Vec<&'static str> {
    REGISTRY.iter().map(|(k, _)| *k).collect()
}

/// Builds the scenario's `[[elements]]`; errors name the element's key.
pub fn build_all(scenario: &Scenario) -> Result<Vec<Placed>, rove_scenario::ScenarioError> {
    build_components(&scenario.elements, scenario, REGISTRY)
}
