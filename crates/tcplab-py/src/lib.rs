//! `tcplab._core`: the thin PyO3 binding of tcplab-core.
//!
//! No logic lives here: a scenario arrives as JSON (already validated and
//! unit-resolved by the Python front end), runs with the GIL released, and the
//! results go back as a JSON document of column lists that Python turns into pandas
//! DataFrames. JSON keeps the boundary schema-checked by serde on both sides.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The tcplab-core version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The registries (congestion controls with parameters, TCP profiles, queues, error
/// models) as a JSON document, for `tcplab list` and the docs.
#[pyfunction]
fn registry_json() -> String {
    tcplab_core::registry::registry_json()
}

/// Resolves a TCP spec (profile + overrides, JSON) into the full configuration
/// (JSON), or raises ValueError naming the bad field.
#[pyfunction]
fn resolve_tcp(spec_json: &str) -> PyResult<String> {
    tcplab_core::registry::resolve_tcp_json(spec_json).map_err(PyValueError::new_err)
}

/// Runs one simulation of the resolved scenario (JSON) with `seed`; returns the
/// results as JSON. Raises ValueError for a scenario the core rejects. The GIL is
/// released while the simulation runs.
#[pyfunction]
fn run(py: Python<'_>, scenario_json: &str, seed: u64) -> PyResult<String> {
    let json = scenario_json.to_owned();
    py.detach(move || tcplab_core::run_json(&json, seed)).map_err(PyValueError::new_err)
}

/// Peak resident set size of this process in MB (Linux VmHWM), if readable.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Names of the standard benchmark scenarios.
#[pyfunction]
fn bench_scenarios() -> Vec<&'static str> {
    tcplab_core::bench::SCENARIOS.to_vec()
}

/// Runs standard benchmark scenario `name` and returns one JSON object: scenario,
/// wall_s (the simulation alone, without process start-up), sim_s, events,
/// events_per_s, bottleneck_pkts, bottleneck_pkts_per_s, drops, peak_rss_mb.
#[pyfunction]
#[pyo3(name = "bench")]
fn run_bench(py: Python<'_>, name: &str) -> PyResult<String> {
    let sc = tcplab_core::bench::scenario(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown benchmark scenario '{name}'; accepted: {}",
            tcplab_core::bench::SCENARIOS.join(", ")
        ))
    })?;
    let (wall, r) = py.detach(move || {
        let t0 = std::time::Instant::now();
        let r = tcplab_core::sim::run(&sc, 1);
        (t0.elapsed().as_secs_f64(), r)
    });
    let r = r.map_err(PyValueError::new_err)?;
    let m = &r.meta;
    Ok(serde_json::json!({
        "scenario": name,
        "wall_s": wall,
        "sim_s": m.sim_end_s,
        "events": m.events,
        "events_per_s": m.events as f64 / wall,
        "bottleneck_pkts": m.bottleneck_pkts,
        "bottleneck_pkts_per_s": m.bottleneck_pkts as f64 / wall,
        "drops": m.drops,
        "peak_rss_mb": peak_rss_mb(),
    })
    .to_string())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(registry_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_tcp, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scenarios, m)?)?;
    Ok(())
}
