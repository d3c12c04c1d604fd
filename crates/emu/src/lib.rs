//! rove's kernel backend: real Linux TCP over links emulated by rove's own link model.
//!
//! - [`link_emu`]: the link emulator (binary `rove-emu`): packets from TUN devices through
//!   `rove_sim::link::Link` on the real clock, so both backends share one link model.
//! - [`topology`] and [`netns`]: the namespaces, TUN devices, addresses and routes of a run,
//!   removed when the run ends, fails or is interrupted.
//! - [`orchestrate`]: `rove-kernel run`: topology, emulator, traffic generators, raw results.
//! - [`record`]: the emulator's output files; [`rtt`]: per-ACK RTT samples at the sender's side;
//!   [`netstat`]: the namespaces' MIB counters at the end of a run.
//! - [`traffic`]: the traffic generator (binary `rove-traffic`): real sockets with
//!   `TCP_CONGESTION` per flow, bulk and sized transfers, `TCP_INFO` (and MPTCP subflow) samples.
//!
//! - [`bpf_cc`]: rove's algorithms the kernel lacks, loaded as eBPF `struct_ops` for a run.
//! - [`oal`]: the OAL controller (the simulator's) on the real clock, rewriting real ACKs'
//!   windows at an emulated WiFi cell; [`tcp_header`]: header fields, options, checksums.
//!
//! `python/rove/kernel.py` turns a run's raw files into the simulator's results schema.

pub mod args;
pub mod bpf_cc;
pub mod bpf_params;
pub mod dupack;
pub mod isolate;
pub mod link_emu;
pub mod netns;
pub mod netstat;
pub mod oal;
pub mod orchestrate;
pub mod procs;
pub mod record;
pub mod rtt;
pub mod sys;
pub mod tcp_header;
pub mod topology;
pub mod traffic;
pub mod tun;
