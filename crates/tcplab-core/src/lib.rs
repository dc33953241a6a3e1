//! tcplab-core: a packet-level, deterministic discrete-event simulator for TCP
//! congestion-control experiments.
//!
//! Pure Rust: no Python, no file or clock I/O. A whole simulation is a value
//! (`sim::Simulation`), so many can run in one process. Time is integer nanoseconds
//! (`time`), randomness comes from named substreams of one seed (`rng`), and the same
//! scenario and seed give a bit-identical trace digest.

pub mod app;
pub mod bench;
pub mod cc;
pub mod metrics;
pub mod net;
pub mod registry;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod time;

/// Runs a scenario given as JSON and returns the results as JSON (the binding's entry).
pub fn run_json(scenario_json: &str, seed: u64) -> Result<String, String> {
    let sc: scenario::Scenario =
        serde_json::from_str(scenario_json).map_err(|e| format!("scenario: {e}"))?;
    let result = sim::run(&sc, seed)?;
    serde_json::to_string(&result).map_err(|e| e.to_string())
}
