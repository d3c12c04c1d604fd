//! The link-model interface both backends drive, and the registry of link models.
//!
//! A link model is clock-free: the driver offers it packets and calls `service` at the times it
//! asks for; it answers with deliveries and drops in a caller-owned buffer. The simulator's
//! event loop and the kernel backend's emulator (real clock, real packets) drive the same
//! models, so every model runs on both backends.
//!
//! A model may serve several destinations (**ports**: an access point's stations, a cell's UEs)
//! and schedule among them; a packet names its port, resolved from the scenario once
//! ([`LinkModel::port`]). A point-to-point link has the single port 0.
//!
//! To add a link model: write `link/NAME/` with a type implementing [`LinkModel`], a builder
//! and a [`LinkKind`] (the common link keys it takes, its own keys and their check, which
//! returns its ports), and add one line to [`REGISTRY`]; scenarios select it with
//! `kind = "NAME"`, its keys are checked when the scenario is parsed (`links.NAME.KEY` errors),
//! and the built model reads them from `LinkSpec::model`.

use super::{LinkOutput, LinkStats};
use crate::packet::PacketId;
use crate::Nanos;
use rove_scenario::spec::{LinkKind, LinkSpec, ModelShape};

/// What a link model is told about a packet offered to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    pub id: PacketId,
    /// Bytes on the wire.
    pub bytes: u32,
    /// The destination port within the link (0 on a point-to-point link).
    pub port: u16,
    /// The flow (connection) the packet belongs to, for models that keep per-flow state.
    pub flow: u32,
}

/// A parameter change of a link during a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinkChange {
    /// Serializer rate, bits per second.
    Rate(u64),
    /// One-way propagation delay.
    Delay(Nanos),
    /// Random (Bernoulli) loss probability.
    Loss(f64),
}

pub trait LinkModel: Send + Sync {
    fn name(&self) -> &str;

    /// The model's scenario kind (`links.NAME.kind`).
    fn kind(&self) -> &'static str;

    /// Offers a packet at `now`. Drops are pushed to `out`. Returns the time at which the driver
    /// must call `service`, when the model was idle and now has work.
    fn offer(&mut self, now: Nanos, packet: Offer, out: &mut Vec<LinkOutput>) -> Option<Nanos>;

    /// Runs the model at `now` (a time it asked for); returns the next time it needs, if any.
    /// A model may ask from `offer` for a time earlier than one it asked for before (a radio
    /// cell whose idle station gets a frame); it then ignores the call at the superseded time.
    fn service(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) -> Option<Nanos>;

    fn stats(&self) -> &LinkStats;

    /// For a driver that consumes samples as it goes (the recorders take the sojourn interval).
    fn stats_mut(&mut self) -> &mut LinkStats;

    fn backlog_bytes(&self) -> u64;

    fn backlog_packets(&self) -> usize;

    /// A radio cell's counters for `radio.parquet` and the summary; `None` for other links.
    fn radio(&self) -> Option<&dyn super::wifi::counters::RadioCounters> {
        None
    }

    /// Bytes the link could have carried in `[0, until]` (its offered capacity).
    fn capacity_bytes(&self, until: Nanos) -> f64;

    /// Bytes already counted in `stats().departed_bytes` whose serialization has not finished
    /// at `now` (utilisation subtracts them; a model counting packets when they finish has
    /// none).
    fn unsent_bytes(&self, _now: Nanos) -> f64 {
        0.0
    }

    /// Changes a parameter from `now` on (scheduled actions, controllers). Models say what
    /// they do not support.
    fn change(&mut self, _now: Nanos, change: LinkChange) -> Result<(), String> {
        Err(format!(
            "link kind {:?} does not support changing {change:?}",
            self.kind()
        ))
    }

    /// The port a path entry `"LINK:NAME"` names; `None` for an unknown name (a point-to-point
    /// link has no named ports).
    fn port(&self, _name: &str) -> Option<u16> {
        None
    }

    /// Names of the ports [`port`](Self::port) accepts, for error messages.
    fn port_names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A built link model, as the drivers hold it. The point-to-point link, which carries nearly
/// every packet of every scenario, is held by value so that its per-packet calls inline (a
/// trait-object call per offer and per service cost the 10-flow dumbbell ~2 % of its
/// instructions); every other model is a trait object. Everything but `offer` and `service`
/// goes through the trait (`Deref`).
pub enum AnyLink {
    P2p(super::Link),
    Model(Box<dyn LinkModel>),
}

impl AnyLink {
    #[inline]
    pub fn offer(&mut self, now: Nanos, packet: Offer, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        match self {
            AnyLink::P2p(l) => LinkModel::offer(l, now, packet, out),
            AnyLink::Model(m) => m.offer(now, packet, out),
        }
    }

    #[inline]
    pub fn service(&mut self, now: Nanos, out: &mut Vec<LinkOutput>) -> Option<Nanos> {
        match self {
            AnyLink::P2p(l) => LinkModel::service(l, now, out),
            AnyLink::Model(m) => m.service(now, out),
        }
    }
}

impl std::ops::Deref for AnyLink {
    type Target = dyn LinkModel;

    fn deref(&self) -> &Self::Target {
        match self {
            AnyLink::P2p(l) => l,
            AnyLink::Model(m) => m.as_ref(),
        }
    }
}

impl std::ops::DerefMut for AnyLink {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            AnyLink::P2p(l) => l,
            AnyLink::Model(m) => m.as_mut(),
        }
    }
}

type Builder = fn(&LinkSpec, u64) -> AnyLink;

/// The point-to-point link takes every common link key and has none of its own.
const P2P: LinkKind = LinkKind {
    kind: "p2p",
    common_keys: None,
    own_keys: &[],
    check: |_| Ok(ModelShape::default()),
};

/// Every link model rove knows: (what the scenario parser needs to know of it: its kind, the
/// common keys it takes, its own keys and their check; constructor from the spec and the run's
/// seed). A new model's line builds `AnyLink::Model(Box::new(...))`.
pub const REGISTRY: &[(LinkKind, Builder)] = &[
    (P2P, |spec, seed| AnyLink::P2p(super::Link::new(spec, seed))),
    (super::wifi::KIND, |spec, seed| {
        AnyLink::Model(Box::new(super::wifi::Wifi::new(spec, seed)))
    }),
    (super::lte::KIND, |spec, seed| {
        AnyLink::Model(Box::new(super::lte::Lte::new(spec, seed)))
    }),
];

/// The link kinds, as `ParseOptions::known_link_kinds` takes them.
pub fn kinds() -> Vec<LinkKind> {
    REGISTRY.iter().map(|(k, _)| *k).collect()
}

/// Builds the model `spec.kind` names (validated against [`kinds`] when the scenario was
/// parsed).
pub fn build(spec: &LinkSpec, run_seed: u64) -> AnyLink {
    let (_, builder) = REGISTRY
        .iter()
        .find(|(k, _)| k.kind == spec.kind)
        .unwrap_or_else(|| panic!("link kind {:?} not in the registry", spec.kind));
    builder(spec, run_seed)
}
