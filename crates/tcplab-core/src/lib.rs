//! tcplab-core: a packet-level, deterministic discrete-event simulator for TCP
//! congestion-control experiments.
//!
//! Pure Rust: no Python, no file or clock I/O. A whole simulation is a value
//! (`sim::Simulation`), so many can run in one process. Time is integer nanoseconds
//! (`time`), randomness comes from named substreams of one seed (`rng`), and the same
//! scenario and seed give a bit-identical trace digest.

pub mod cc;
pub mod net;
pub mod registry;
pub mod rng;
pub mod scenario;
pub mod tcp;
pub mod time;
