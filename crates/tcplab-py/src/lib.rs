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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(registry_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_tcp, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
