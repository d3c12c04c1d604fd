//! `[[actions]]`: changes scheduled at a time of the run (the shape scripts outside the project
//! write; see docs/scenario-format.md#actions). One parser serves the scenario file and the
//! Python stepping API ([`parse_action`]), so both accept and reject exactly the same things.

use super::*;
use crate::spec::{ActionSpec, ActionTarget, Change, ComponentSpec, HandoffSpec, Serializer};

const ACTION_KEYS: &[&str] = &[
    "at",
    "flow",
    "subflow",
    "link",
    "cc",
    "cc_params",
    "handoff",
    "cwnd",
    "ssthresh",
    "samples",
    "rwnd",
    "add_subflow",
    "remove",
    "pause",
    "resume",
    "coupling_group",
    "dupacks",
    "withhold_acks",
    "release_ack",
    "rate",
    "delay",
    "loss",
];
const FLOW_CHANGES: &[&str] = &[
    "cc",
    "rwnd",
    "add_subflow",
    "remove",
    "pause",
    "resume",
    "coupling_group",
    "dupacks",
    "withhold_acks",
    "release_ack",
];
const LINK_CHANGES: &[&str] = &["rate", "delay", "loss"];

impl Validator<'_> {
    /// `[[elements]]` or `[[controllers]]` (`key`): tables with a known `kind`; the engine's
    /// registry reads the rest.
    pub(super) fn components(
        &self,
        doc: &Table,
        key: &str,
        known: &[&str],
    ) -> Res<Vec<ComponentSpec>> {
        let items = match doc.get(key) {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.err(
                    key,
                    format!(
                        "expected an array of tables [[{key}]], got {}",
                        describe(other)
                    ),
                ))
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let path = index(key, i);
            let Value::Table(t) = item else {
                return Err(self.err(
                    path,
                    format!("expected a table [[{key}]], got {}", describe(item)),
                ));
            };
            let kind = self.require(t, &path, "kind", read_string, "the component's kind")?;
            if !known.is_empty() && !known.contains(&kind.as_str()) {
                return Err(self.err(
                    join(&path, "kind"),
                    format!("unknown kind {kind:?}; known: {}", known.join(", ")),
                ));
            }
            let mut params = t.clone();
            params.remove("kind");
            out.push(ComponentSpec {
                kind,
                params,
                location: path,
            });
        }
        Ok(out)
    }

    pub(super) fn actions(
        &self,
        doc: &Table,
        links: &[LinkSpec],
        flows: &[FlowSpec],
        duration_ns: Nanos,
    ) -> Res<Vec<ActionSpec>> {
        let items = match doc.get("actions") {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.err(
                    "actions",
                    format!(
                        "expected an array of tables [[actions]], got {}",
                        describe(other)
                    ),
                ))
            }
        };
        let mut actions = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let path = index("actions", i);
            let Value::Table(t) = item else {
                return Err(self.err(
                    path,
                    format!("expected a table [[actions]], got {}", describe(item)),
                ));
            };
            let at_ns = self.require(t, &path, "at", read_time, r#"a time like "10s""#)?;
            if at_ns > duration_ns {
                return Err(self.err(
                    join(&path, "at"),
                    format!(
                        "{} is after the end of the run ({})",
                        format_time(at_ns),
                        format_time(duration_ns)
                    ),
                ));
            }
            actions.push((
                path,
                self.action(t, &index("actions", i), at_ns, links, flows)?,
            ));
        }
        // Apply in time order (ties in the file's order), counting the subflows each multipath
        // flow has by then, so `subflow = k` can name one an earlier action added.
        actions.sort_by_key(|(_, a)| a.at_ns);
        let mut subflows: Vec<usize> = flows
            .iter()
            .map(|f| f.multipath.as_ref().map_or(1, |m| m.paths.len()))
            .collect();
        for (path, a) in &actions {
            let ActionTarget::Flow { flow, subflow } = a.target else {
                continue;
            };
            if let Some(k) = subflow {
                if k >= subflows[flow] {
                    return Err(self.err(
                        join(path, "subflow"),
                        format!(
                            "flow {:?} has {} subflow(s) at {} (0 to {}); add one first with add_subflow",
                            flows[flow].name,
                            subflows[flow],
                            format_time(a.at_ns),
                            subflows[flow] - 1
                        ),
                    ));
                }
            }
            if matches!(a.change, Change::AddSubflow { .. }) {
                subflows[flow] += 1;
                if subflows[flow] > MAX_SUBFLOWS {
                    return Err(self.err(
                        join(path, "add_subflow"),
                        format!("a multipath flow has at most {MAX_SUBFLOWS} subflows"),
                    ));
                }
            }
        }
        Ok(actions.into_iter().map(|(_, a)| a).collect())
    }

    /// One action table at key path `path`.
    pub(super) fn action(
        &self,
        t: &Table,
        path: &str,
        at_ns: Nanos,
        links: &[LinkSpec],
        flows: &[FlowSpec],
    ) -> Res<ActionSpec> {
        self.keys(t, path, ACTION_KEYS)?;
        let present = |keys: &[&'static str]| -> Vec<&'static str> {
            keys.iter()
                .copied()
                .filter(|k| t.contains_key(*k))
                .collect()
        };
        let flow_changes = present(FLOW_CHANGES);
        let link_changes = present(LINK_CHANGES);
        let (target, key) = match (t.contains_key("flow"), t.contains_key("link")) {
            (true, true) => return Err(self.err(join(path, "link"), "an action names either a flow or a link, not both")),
            (false, false) => {
                return Err(self.err(path, "an action needs flow = \"NAME\" (with cc, rwnd, add_subflow, remove, pause or resume) or link = \"NAME\" (with rate, delay or loss)"))
            }
            (true, false) => {
                if let Some(k) = link_changes.first() {
                    return Err(self.err(join(path, k), format!("{k:?} changes a link: name it with link = \"NAME\" instead of flow")));
                }
                let target = self.action_flow(t, path, flows)?;
                (target, flow_changes)
            }
            (false, true) => {
                if let Some(k) = flow_changes.first() {
                    return Err(self.err(join(path, k), format!("{k:?} changes a flow: name it with flow = \"NAME\" instead of link")));
                }
                if t.contains_key("subflow") {
                    return Err(self.err(join(path, "subflow"), "subflow selects a subflow of a flow, not of a link"));
                }
                let name = self.require(t, path, "link", read_string, "a link name")?;
                let Some(l) = links.iter().position(|l| l.name == name) else {
                    let names: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
                    return Err(self.err(join(path, "link"), format!("unknown link {name:?}; links are: {}", names.join(", "))));
                };
                (ActionTarget::Link(l), link_changes)
            }
        };
        let key = match key.as_slice() {
            [k] => *k,
            [] => return Err(self.err(path, "the action changes nothing: give one of cc, rwnd, add_subflow, remove, pause, resume, coupling_group, dupacks, withhold_acks, release_ack (flows) or rate, delay, loss (links)")),
            [a, b, ..] => return Err(self.err(join(path, b), format!("one change per action: {a:?} and {b:?} are both given; write two [[actions]]"))),
        };
        for (k, needs) in [
            ("cc_params", "cc"),
            ("handoff", "cc"),
            ("cwnd", "handoff = \"set\""),
            ("ssthresh", "handoff = \"set\""),
            ("samples", "handoff = \"delay_scaled\""),
        ] {
            if t.contains_key(k) && key != "cc" {
                return Err(self.err(join(path, k), format!("{k:?} goes with {needs}")));
            }
        }
        let change = match key {
            "cc" => self.cc_change(t, path)?,
            "rwnd" => {
                let bytes = self.require(t, path, "rwnd", read_size, r#"a size like "64KB""#)?;
                Change::Rwnd(self.positive(bytes, || join(path, "rwnd"))?)
            }
            "add_subflow" => {
                let p = join(path, "add_subflow");
                let Some(Value::Table(st)) = t.get("add_subflow") else {
                    return Err(self.err(
                        &p,
                        r#"expected a table like { path = ["wifi"], ack_path = ["up"] }"#,
                    ));
                };
                self.keys(st, &p, SUBFLOW_PATH_KEYS)?;
                Change::AddSubflow {
                    path: self.link_list(st, &p, "path", links)?,
                    ack_path: self.link_list(st, &p, "ack_path", links)?,
                }
            }
            "remove" | "pause" | "resume" | "dupacks" | "withhold_acks" | "release_ack" => {
                if !self.require(t, path, key, read_bool, "true")? {
                    return Err(self.err(
                        join(path, key),
                        format!("only {key} = true is meaningful; leave the key out otherwise"),
                    ));
                }
                match key {
                    "remove" => Change::RemoveSubflow,
                    "pause" => Change::PauseSubflow,
                    "dupacks" => Change::DupAcks,
                    "withhold_acks" => Change::WithholdAcks,
                    "release_ack" => Change::ReleaseAck,
                    _ => Change::ResumeSubflow,
                }
            }
            "coupling_group" => {
                let group = self.require(t, path, key, read_count, "a group number like 1")?;
                if group > u32::MAX as u64 / 2 {
                    return Err(self.err(
                        join(path, key),
                        format!(
                            "{group} is too large; groups are numbered 0 to {}",
                            u32::MAX / 2
                        ),
                    ));
                }
                Change::CouplingGroup(group as u32)
            }
            "rate" => {
                let ActionTarget::Link(l) = target else {
                    unreachable!()
                };
                if !matches!(links[l].serializer, Serializer::Rate { .. }) {
                    return Err(self.err(
                        join(path, "rate"),
                        format!(
                            "link {:?} is trace-driven; only a fixed-rate link's rate can change",
                            links[l].name
                        ),
                    ));
                }
                let rate = self.require(t, path, "rate", read_rate, r#"a rate like "10Mbps""#)?;
                Change::LinkRate(self.positive(rate, || join(path, "rate"))?)
            }
            "delay" => Change::LinkDelay(self.require(
                t,
                path,
                "delay",
                read_time,
                r#"a time like "20ms""#,
            )?),
            _ => Change::LinkLoss(self.require(
                t,
                path,
                "loss",
                read_probability,
                "a probability from 0 to 1",
            )?),
        };
        if let ActionTarget::Flow { flow, subflow } = target {
            if !flows[flow].workload.is_tcp() {
                return Err(self.err(
                    join(path, key),
                    format!(
                        "flow {:?} is an unresponsive source (workload = {:?}): it has no congestion control, window or subflows to change",
                        flows[flow].name,
                        flows[flow].workload.name()
                    ),
                ));
            }
            let multipath = flows[flow].multipath.is_some();
            let subflow_op = matches!(
                change,
                Change::AddSubflow { .. }
                    | Change::RemoveSubflow
                    | Change::PauseSubflow
                    | Change::ResumeSubflow
                    | Change::CouplingGroup(_)
                    | Change::DupAcks
                    | Change::WithholdAcks
                    | Change::ReleaseAck
            );
            if subflow_op && !multipath {
                return Err(self.err(
                    join(path, key),
                    format!(
                        "{key:?} applies to multipath flows only; flow {:?} has one path",
                        flows[flow].name
                    ),
                ));
            }
            let needs_subflow = matches!(
                change,
                Change::RemoveSubflow
                    | Change::PauseSubflow
                    | Change::ResumeSubflow
                    | Change::CouplingGroup(_)
                    | Change::DupAcks
                    | Change::WithholdAcks
                    | Change::ReleaseAck
            );
            if needs_subflow && subflow.is_none() {
                return Err(self.err(
                    join(path, "subflow"),
                    format!("{key:?} needs subflow = K, the subflow's index"),
                ));
            }
            if subflow.is_some() && matches!(change, Change::AddSubflow { .. } | Change::Rwnd(_)) {
                return Err(self.err(
                    join(path, "subflow"),
                    format!("{key:?} applies to the whole connection; leave subflow out"),
                ));
            }
        }
        Ok(ActionSpec {
            at_ns,
            target,
            change,
        })
    }

    fn action_flow(&self, t: &Table, path: &str, flows: &[FlowSpec]) -> Res<ActionTarget> {
        let name = self.require(t, path, "flow", read_string, "a flow name")?;
        let Some(flow) = flows.iter().position(|f| f.name == name) else {
            let mut names: Vec<&str> = flows.iter().map(|f| f.name.as_str()).collect();
            names.truncate(20);
            return Err(self.err(
                join(path, "flow"),
                format!("unknown flow {name:?}; flows are: {} (a flow with count = N is named NAME.1 ... NAME.N)", names.join(", ")),
            ));
        };
        let subflow = self.get(t, path, "subflow", |v| match v {
            Value::Integer(k) if *k >= 0 => Ok(*k as usize),
            other => Err(format!(
                "expected a subflow index (0, 1, ...), got {}",
                describe(other)
            )),
        })?;
        if subflow.is_some() && flows[flow].multipath.is_none() {
            return Err(self.err(
                join(path, "subflow"),
                format!(
                    "flow {name:?} has one path; subflow selects a subflow of a multipath flow"
                ),
            ));
        }
        Ok(ActionTarget::Flow { flow, subflow })
    }

    fn cc_change(&self, t: &Table, path: &str) -> Res<Change> {
        let name = self.require(t, path, "cc", read_string, "an algorithm name")?;
        self.known_cc(&name, path)?;
        let params = self.cc_params(t, path)?;
        let packets = |key: &str| -> Res<Option<u32>> {
            match self.get(t, path, key, read_count)? {
                None => Ok(None),
                Some(n) if n == 0 || n > u32::MAX as u64 => {
                    Err(self.err(join(path, key), "a window in packets, from 1 to 4294967295"))
                }
                Some(n) => Ok(Some(n as u32)),
            }
        };
        let handoff_name = self.get(t, path, "handoff", read_string)?;
        if t.contains_key("samples") && handoff_name.as_deref() != Some("delay_scaled") {
            return Err(self.err(
                join(path, "samples"),
                "\"samples\" goes with handoff = \"delay_scaled\"",
            ));
        }
        let handoff =
            match handoff_name.as_deref() {
                None | Some("keep") => {
                    for k in ["cwnd", "ssthresh"] {
                        if t.contains_key(k) {
                            return Err(self
                                .err(join(path, k), format!("{k:?} goes with handoff = \"set\"")));
                        }
                    }
                    HandoffSpec::Keep
                }
                Some("set") => HandoffSpec::Set {
                    cwnd: packets("cwnd")?.ok_or_else(|| {
                        self.err(
                            join(path, "cwnd"),
                            "handoff = \"set\" needs cwnd = N (packets)",
                        )
                    })?,
                    ssthresh: packets("ssthresh")?,
                },
                Some("delay_scaled") => {
                    for k in ["cwnd", "ssthresh"] {
                        if t.contains_key(k) {
                            return Err(self
                                .err(join(path, k), format!("{k:?} goes with handoff = \"set\"")));
                        }
                    }
                    let samples = self.get(t, path, "samples", read_handoff_samples)?;
                    HandoffSpec::DelayScaled {
                        samples: samples.unwrap_or(crate::spec::HANDOFF_SAMPLES_DEFAULT),
                    }
                }
                Some(other) => {
                    return Err(self.err(
                        join(path, "handoff"),
                        format!("unknown handoff {other:?}; accepted: keep, set, delay_scaled"),
                    ))
                }
            };
        Ok(Change::Cc {
            name,
            params,
            handoff,
        })
    }
}

/// `samples` of `handoff = "delay_scaled"`: 1..=HANDOFF_SAMPLES_MAX (the sender's ring).
fn read_handoff_samples(value: &Value) -> Result<u32, String> {
    let max = crate::spec::HANDOFF_SAMPLES_MAX;
    match value {
        Value::Integer(i) if (1..=max as i64).contains(i) => Ok(*i as u32),
        other => Err(format!(
            "the number of (cwnd, RTT) samples averaged: a whole number from 1 to {max}, got {}",
            describe(other)
        )),
    }
}

/// Parses one action table (the stepping API's `{"flow": "a", "cc": "bbr", ...}`) against a
/// parsed scenario; `at` defaults to `now_ns`.
pub fn parse_action(
    table: &Table,
    scenario: &Scenario,
    now_ns: Nanos,
    opts: &ParseOptions,
) -> Result<ActionSpec, ScenarioError> {
    let v = Validator::new(opts);
    let at_ns = v.get(table, "action", "at", read_time)?.unwrap_or(now_ns);
    if at_ns < now_ns {
        return Err(v.err(
            "action.at",
            format!(
                "{} is in the past (now is {})",
                format_time(at_ns),
                format_time(now_ns)
            ),
        ));
    }
    let mut a = v.action(table, "action", at_ns, &scenario.links, &scenario.flows)?;
    a.at_ns = at_ns;
    Ok(a)
}
