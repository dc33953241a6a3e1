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
/// A scenario the core refuses is an error of one line per problem.
pub fn run_json(scenario_json: &str, seed: u64) -> Result<String, String> {
    run_json_watched(scenario_json, seed, |_, _| true).map(|r| r.expect("never stopped"))
}

/// `run_json` with a watcher: `watch(now, end)` is called about every `sim::WATCH_EVERY`
/// events with the simulated time and the latest end of the run; when it returns
/// false the run stops and the result is `Ok(None)` (see `Simulation::run_watched`).
pub fn run_json_watched(
    scenario_json: &str,
    seed: u64,
    mut watch: impl FnMut(time::SimTime, time::SimTime) -> bool,
) -> Result<Option<String>, String> {
    let sc: scenario::Scenario =
        serde_json::from_str(scenario_json).map_err(|e| format!("scenario: {e}"))?;
    let sim = sim::Simulation::new(&sc, seed)?;
    let end = sim.end_time();
    match sim.run_watched(|now| watch(now, end)) {
        None => Ok(None),
        Some(result) => serde_json::to_string(&result).map(Some).map_err(|e| e.to_string()),
    }
}

/// Every problem that keeps the scenario (JSON) from running, one message each, without
/// running it: the checks of `run_json` (the simulation is built, then dropped). Empty
/// when it would run.
///
/// Example:
///
/// ```
/// let sc = tcplab_core::bench::scenario("dumbbell-10x100M-60s").unwrap();
/// let mut doc = serde_json::to_value(&sc).unwrap();
/// assert!(tcplab_core::validate_json(&doc.to_string(), 0).is_empty());
/// for i in [0, 3] {
///     doc["flows"][i]["cc"] = serde_json::json!({"name": "cubic", "params": {"beta": 7.0}});
/// }
/// let problems = tcplab_core::validate_json(&doc.to_string(), 0);
/// assert_eq!(problems.len(), 2, "{problems:?}");
/// assert!(problems[0].starts_with("flows[0] ('flow0').cc: cc 'cubic' params: beta = 7"));
/// assert!(problems[1].starts_with("flows[3] ('flow3').cc: cc 'cubic' params: beta = 7"));
/// ```
pub fn validate_json(scenario_json: &str, seed: u64) -> Vec<String> {
    match serde_json::from_str::<scenario::Scenario>(scenario_json) {
        Ok(sc) => sim::Simulation::problems(&sc, seed),
        Err(e) => vec![format!("scenario: {e}")],
    }
}
