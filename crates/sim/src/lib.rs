//! rove's engine primitives.
//!
//! - [`event::EventQueue`]: a min-heap of timed events; ties break by insertion order, so a run is
//!   bit-for-bit reproducible.
//! - [`packet::PacketArena`]: every packet in flight lives in one slab and is passed by index; the
//!   hot path never allocates.
//! - [`rng::Stream`]: a seeded random stream per component (a link's loss, a flow's start jitter),
//!   derived from the run's seed and the component's name, so adding a flow never changes the
//!   draws of an unrelated link.
//! - [`link::Link`]: the unidirectional link model (queue discipline, serializer, random loss,
//!   jitter, outages). It does not own a clock: the caller passes `now` and schedules the service
//!   times the link asks for, so the simulator and the kernel backend's emulator drive the very
//!   same code.
//! - [`prefetch::prefetch`]: a cache hint for memory the engine will touch a few events ahead.

pub mod event;
pub mod histogram;
pub mod link;
pub mod packet;
pub mod prefetch;
pub mod rng;

pub use rove_scenario::spec::{Nanos, NS_PER_MS, NS_PER_S};
