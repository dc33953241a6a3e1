//! `tcplab._core`: the thin PyO3 binding of tcplab-core.
//!
//! No logic lives here: a scenario arrives as JSON (already validated and
//! unit-resolved by the Python front end), runs with the GIL released, and the
//! results go back as a JSON document of column lists that Python turns into pandas
//! DataFrames. JSON keeps the boundary schema-checked by serde on both sides. A run
//! looks back at Python every 100 ms of wall time (signals, progress), so it can be
//! interrupted.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::time::{Duration, Instant};
use tcplab_core::time::SimTime;

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

/// Wall time between two looks at Python from inside a run: pending signals (Ctrl-C)
/// and the progress callback.
const POLL: Duration = Duration::from_millis(100);

/// Runs one simulation of the resolved scenario (JSON) with `seed`; returns the
/// results as JSON. Raises ValueError for a scenario the core rejects (one line per
/// problem). The GIL is released while the simulation runs; every 100 ms of wall
/// time it is taken back briefly to run Python's signal handlers, so Ctrl-C stops the
/// run within a fraction of a second (the handler's exception, e.g.
/// KeyboardInterrupt, is raised here), and to call `progress(now_s, end_s)` if given:
/// the simulated time so far and the latest end of the run, in seconds. An exception
/// from `progress` stops the run too.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, progress=None))]
fn run(py: Python<'_>, scenario_json: &str, seed: u64, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let json = scenario_json.to_owned();
    let mut watch = PythonWatch::new(progress);
    let out = py.detach(|| tcplab_core::run_json_watched(&json, seed, |now, end| watch.look(now, end)));
    match out {
        Ok(Some(doc)) => Ok(doc),
        Ok(None) => Err(watch.stopped_by.expect("a run stops only on a Python exception")),
        Err(problems) => Err(PyValueError::new_err(problems)),
    }
}

/// A run's look back at Python (see `run`): at most every `POLL` of wall time, with
/// the GIL taken back briefly, pending signals and then the progress callback. The
/// clock is read between slices of the run (about `tcplab_core::sim::WATCH_EVERY` events
/// each), never per event.
struct PythonWatch {
    last: Instant,
    progress: Option<Py<PyAny>>,
    /// The exception that stopped the run (KeyboardInterrupt, or the callback's).
    stopped_by: Option<PyErr>,
}

impl PythonWatch {
    fn new(progress: Option<Py<PyAny>>) -> Self {
        PythonWatch { last: Instant::now(), progress, stopped_by: None }
    }

    /// False to stop the run.
    fn look(&mut self, now: SimTime, end: SimTime) -> bool {
        if self.last.elapsed() < POLL {
            return true;
        }
        self.last = Instant::now();
        Python::attach(|py| {
            let looked = py.check_signals().and_then(|()| match &self.progress {
                Some(cb) => cb.call1(py, (now.as_secs_f64(), end.as_secs_f64())).map(drop),
                None => Ok(()),
            });
            looked.map_err(|e| self.stopped_by = Some(e)).is_ok()
        })
    }
}

/// Every problem that keeps the resolved scenario (JSON) from running, as a list of
/// messages (one line each; empty when it would run), checked as `run` checks it but
/// without running: the core builds the simulation and drops it.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=0))]
fn validate(py: Python<'_>, scenario_json: &str, seed: u64) -> Vec<String> {
    let json = scenario_json.to_owned();
    py.detach(move || tcplab_core::validate_json(&json, seed))
}

/// Peak resident set size of this process in MB (Linux VmHWM), if readable.
/// CPU time this thread has used, s (`/proc/thread-self/schedstat`, nanoseconds on
/// the CPU: independent of how busy other cores are, unlike wall time); `None` where
/// the file is missing. The run happens on the calling thread (`Python::detach` only
/// releases the GIL).
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Names of the standard benchmark scenarios (the rows `tcplab bench` runs).
#[pyfunction]
fn bench_scenarios() -> Vec<&'static str> {
    tcplab_core::bench::SCENARIOS.to_vec()
}

/// Names of the benchmark rows run only on request (`tcplab bench --large`).
#[pyfunction]
fn bench_large_scenarios() -> Vec<&'static str> {
    tcplab_core::bench::LARGE_SCENARIOS.to_vec()
}

/// Raises ValueError, naming what is accepted, unless `name` is a benchmark scenario
/// (a standard or large row, or any `dumbbell-{N}x10G-{S}s`).
#[pyfunction]
fn bench_check(name: &str) -> PyResult<()> {
    tcplab_core::bench::check(name).map_err(PyValueError::new_err)
}

/// Runs benchmark scenario `name` and returns one JSON object: scenario, wall_s
/// (set-up and run, without process start-up), setup_s (building the simulation:
/// topology, routes, flows), sim_s, events, events_per_s and bottleneck_pkts_per_s
/// (over the run, set-up excluded), bottleneck_pkts, drops, bytes_per_flow (per-flow
/// state at the end of the run), bytes_per_idle_flow (after set-up), pkt_hops and
/// pkt_hops_per_s (packets transmitted on every link, over the run), peak_rss_mb,
/// cpu_s (CPU time of the run, set-up excluded), bottleneck_pkts_per_cpu_s,
/// events_per_bottleneck_pkt and timer_events (delayed ACK, RTO, TLP, pacing and
/// reorder timer events among `events`).
#[pyfunction]
#[pyo3(name = "bench")]
fn run_bench(py: Python<'_>, name: &str) -> PyResult<String> {
    tcplab_core::bench::check(name).map_err(PyValueError::new_err)?;
    let sc = tcplab_core::bench::scenario(name).expect("checked");
    // The run is watched as `run` watches it (interruptible), so its figures include that cost.
    let mut watch = PythonWatch::new(None);
    let (setup, run, cpu, idle_bytes, r) = py
        .detach(|| {
            let t0 = std::time::Instant::now();
            let sim = tcplab_core::sim::Simulation::new(&sc, 1)?;
            let setup = t0.elapsed().as_secs_f64();
            let idle_bytes = sim.flow_state_bytes();
            let end = sim.end_time();
            let (t1, c1) = (std::time::Instant::now(), thread_cpu_s());
            let r = sim.run_watched(|now| watch.look(now, end));
            let cpu = thread_cpu_s().zip(c1).map(|(b, a)| b - a);
            Ok::<_, String>((setup, t1.elapsed().as_secs_f64(), cpu, idle_bytes, r))
        })
        .map_err(PyValueError::new_err)?;
    let Some(r) = r else {
        return Err(watch.stopped_by.expect("a run stops only on a Python exception"));
    };
    let m = &r.meta;
    // Flows of the run (a workload's generated flows included).
    let flows = r.flows.name.len().max(1) as f64;
    let pkt_hops: u64 = r.links.tx_pkts.iter().sum();
    Ok(serde_json::json!({
        "scenario": name,
        "wall_s": setup + run,
        "setup_s": setup,
        "sim_s": m.sim_end_s,
        "events": m.events,
        "events_per_s": m.events as f64 / run,
        "bottleneck_pkts": m.bottleneck_pkts,
        "bottleneck_pkts_per_s": m.bottleneck_pkts as f64 / run,
        "drops": m.drops,
        "pkt_hops": pkt_hops,
        "pkt_hops_per_s": pkt_hops as f64 / run,
        "bytes_per_flow": (m.flow_state_bytes as f64 / flows).round(),
        "bytes_per_idle_flow": (idle_bytes as f64 / flows).round(),
        "peak_rss_mb": peak_rss_mb(),
        "cpu_s": cpu,
        "bottleneck_pkts_per_cpu_s": cpu.filter(|&c| c > 0.0).map(|c| m.bottleneck_pkts as f64 / c),
        "events_per_bottleneck_pkt": (m.bottleneck_pkts > 0).then(|| m.events as f64 / m.bottleneck_pkts as f64),
        "timer_events": m.timer_events,
    })
    .to_string())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(registry_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_tcp, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(bench_large_scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(bench_check, m)?)?;
    Ok(())
}
