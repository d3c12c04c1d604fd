//! `kind = "rwnd"`: rewrites the receive window advertised in one flow's ACKs as they cross a
//! link, the way an access point enforces a rate on unmodified senders (seed-004's OAL, and
//! receive-window middleboxes generally). The window becomes `scale` times what the receiver
//! advertised, or at most `clamp` bytes, or both.
//!
//! Keys: `link` (where the ACKs enter), `flow` (whose ACKs), `scale` (0 < scale ≤ 1),
//! `clamp` (a size). At least one of `scale` and `clamp`.

use super::{Fate, PathElement, Placed};
use rove_scenario::component::{ComponentError, ComponentParams};
use rove_scenario::Scenario;
use rove_sim::packet::{Direction, Packet};
use rove_sim::Nanos;

pub struct RwndRewrite {
    flow: u32,
    scale: f64,
    clamp_bytes: u64,
}

impl RwndRewrite {
    pub fn build(p: &ComponentParams, scenario: &Scenario) -> Result<Placed, ComponentError> {
        let link = p.link("link", scenario)?;
        let flow = p.flow("flow", scenario)? as u32;
        let scale = p.number("scale")?;
        let clamp = p.size("clamp")?;
        if let Some(s) = scale {
            if !(s > 0.0 && s <= 1.0) {
                return Err(ComponentError {
                    key: "scale".into(),
                    message: format!(
                        "{s} is not in (0, 1]: an element can shrink the window, not grow it"
                    ),
                });
            }
        }
        if scale.is_none() && clamp.is_none() {
            return Err(ComponentError {
                key: "scale".into(),
                message: "give scale = F (0 < F <= 1) or clamp = \"SIZE\", or both".into(),
            });
        }
        Ok(Placed {
            link,
            element: Box::new(RwndRewrite {
                flow,
                scale: scale.unwrap_or(1.0),
                clamp_bytes: clamp.unwrap_or(u64::MAX),
            }),
        })
    }
}

impl PathElement for RwndRewrite {
    fn kind(&self) -> &'static str {
        "rwnd"
    }

    fn on_packet(&mut self, _now: Nanos, p: &mut Packet) -> Fate {
        if p.flow == self.flow && p.direction == Direction::Ack {
            let scaled = (p.rwnd_bytes as f64 * self.scale) as u64;
            p.rwnd_bytes = scaled.min(self.clamp_bytes);
        }
        Fate::Pass
    }
}
