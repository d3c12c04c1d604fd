//! Changes applied to a running world: scheduled `[[actions]]`, controllers' decisions and the
//! Python stepping API all end here, in [`World::apply`], so each change has one meaning.

use crate::transport::Transport;
use crate::world::{Event, World};
use rove_mp::receiver::ReceiverAction;
use rove_scenario::spec::{ActionSpec, ActionTarget, Change, HandoffSpec};
use rove_sim::link::LinkChange;
use rove_tcp::cc::{self, CcConfig, CongestionControl};
use rove_tcp::Handoff;

// The parser's bound on `samples` is the sender's ring.
const _: () =
    assert!(rove_scenario::spec::HANDOFF_SAMPLES_MAX as usize == rove_tcp::HANDOFF_HISTORY);

impl World {
    /// Schedules the scenario's `[[actions]]` (already in time order).
    pub(crate) fn schedule_actions(&mut self) {
        for (i, a) in self.scenario.actions.iter().enumerate() {
            self.queue.push(a.at_ns, Event::Action(i as u32));
        }
    }

    /// Applies `action` now (its `at` is the caller's business). Errors are what the scenario
    /// parser cannot know in advance (an algorithm's parameters, a subflow closed twice...),
    /// worded for the user.
    pub fn apply(&mut self, action: &ActionSpec) -> Result<(), String> {
        let now = self.now();
        match (action.target, &action.change) {
            (ActionTarget::Link(l), change) => {
                let change = match *change {
                    Change::LinkRate(r) => LinkChange::Rate(r),
                    Change::LinkDelay(d) => LinkChange::Delay(d),
                    Change::LinkLoss(p) => LinkChange::Loss(p),
                    ref other => return Err(format!("{other:?} does not apply to a link")),
                };
                self.links[l].change(now, change)
            }
            (
                ActionTarget::Flow { flow, subflow },
                Change::Cc {
                    name,
                    params,
                    handoff,
                },
            ) => {
                let handoff = match *handoff {
                    HandoffSpec::Keep => Handoff::Keep,
                    HandoffSpec::Set { cwnd, ssthresh } => Handoff::Set { cwnd, ssthresh },
                    HandoffSpec::DelayScaled { samples } => Handoff::DelayScaled { samples },
                };
                let subs: Vec<usize> = match subflow {
                    Some(k) => vec![k],
                    None => (0..self.flows[flow].transport.subflow_count()).collect(),
                };
                for sub in subs {
                    let cc = self.build_cc(flow, sub, name, params)?;
                    // A subflow leaving the coupled algorithms leaves its group too, so that
                    // the group's members stop counting its last published values.
                    if let Some(h) = self.flows[flow]
                        .transport
                        .connection()
                        .and_then(|c| c.coupling.as_ref())
                    {
                        if !cc::coupled::is_coupled(name) && sub < h.len() {
                            h.uncouple(sub);
                        }
                    }
                    self.flows[flow]
                        .transport
                        .sender_mut(sub)
                        .set_congestion_control(cc, handoff);
                }
                Ok(())
            }
            (ActionTarget::Flow { flow, .. }, Change::Rwnd(bytes)) => {
                match &mut self.flows[flow].transport {
                    Transport::Tcp { receiver, .. } => receiver.set_window_clamp(*bytes),
                    Transport::Multipath(c) => c.set_window_clamp(*bytes),
                    Transport::Datagram { .. } => unreachable!("checked above"),
                }
                Ok(())
            }
            (ActionTarget::Flow { flow, .. }, Change::AddSubflow { path, ack_path }) => {
                let f = &self.flows[flow];
                let sub = f.transport.subflow_count();
                if sub >= 8 {
                    return Err(format!("flow {:?} already has 8 subflows", f.name));
                }
                let cc_name = f.cc_name.clone();
                let params = self.scenario.flows[flow].cc_params.clone();
                let cc = self.build_cc(flow, sub, &cc_name, &params)?;
                let routes = self.routes.subflow(path, ack_path);
                self.add_subflow(flow, routes, cc);
                Ok(())
            }
            (ActionTarget::Flow { flow, subflow }, change) => {
                let sub = subflow.ok_or("the action needs a subflow")?;
                let f = &self.flows[flow];
                let Transport::Multipath(c) = &f.transport else {
                    return Err(format!("flow {:?} is not a multipath flow", f.name));
                };
                if c.subflows[sub].closed {
                    return Err(format!(
                        "subflow {sub} of flow {:?} is already removed",
                        f.name
                    ));
                }
                if let Change::CouplingGroup(group) = change {
                    let Some(h) = c.coupling.as_ref() else {
                        return Err(format!(
                            "flow {:?} runs no coupled algorithm ({}): it has no coupling groups",
                            f.name,
                            cc::coupled::NAMES.join(", ")
                        ));
                    };
                    h.subflow_slot(sub); // a subflow that never ran a coupled algorithm gets its slot
                    h.set_group(sub, *group);
                    return Ok(());
                }
                self.with_connection(flow, |c, net| match change {
                    Change::RemoveSubflow => c.remove_subflow(sub, net),
                    Change::PauseSubflow => c.set_paused(sub, true, net),
                    Change::ResumeSubflow => c.set_paused(sub, false, net),
                    Change::DupAcks => {
                        c.apply_receiver_action(ReceiverAction::DupAcks { sub }, net)
                    }
                    Change::WithholdAcks => {
                        c.apply_receiver_action(ReceiverAction::Withhold { sub }, net)
                    }
                    Change::ReleaseAck => {
                        c.apply_receiver_action(ReceiverAction::Release { sub }, net)
                    }
                    _ => unreachable!("flow changes are matched above"),
                });
                Ok(())
            }
        }
    }

    /// Builds algorithm `name` for subflow `sub` of flow `flow`: its own random stream, and
    /// the connection's coupling when the algorithm is a coupled one.
    fn build_cc(
        &self,
        flow: usize,
        sub: usize,
        name: &str,
        params: &toml::Table,
    ) -> Result<Box<dyn CongestionControl>, String> {
        let f = &self.flows[flow];
        let label = format!("flow:{}:subflow:{sub}:cc@{}", f.name, self.now());
        let mut config = CcConfig::new(
            params,
            rove_scenario::stream_seed(self.scenario.seed, &label),
        );
        if let Some(h) = f.transport.connection().and_then(|c| c.coupling.as_ref()) {
            if cc::coupled::is_coupled(name) {
                config = config.with_coupling(h.subflow_slot(sub));
            }
        }
        match cc::build(name, &config) {
            None => Err(format!(
                "unknown congestion control {name:?}; known: {}",
                cc::names().join(", ")
            )),
            Some(Err(e)) => Err(format!("cc_params.{}: {}", e.key, e.message)),
            Some(Ok(cc)) => Ok(cc),
        }
    }
}
