//! Checking without running, and runs that can be stopped.
//!
//! `Simulation::problems` (the core of `tcplab check`, through `validate_json`) reports
//! every problem of a scenario at once, with the same messages `Simulation::new`
//! (`tcplab run`) joins, one per line. `Simulation::run_watched` calls its watcher
//! between slices of simulated time of about `WATCH_EVERY` events, stops when it says
//! so, and otherwise gives the results of `run` bit for bit.

mod common;
use common::*;
use serde_json::json;
use tcplab_core::sim::{Simulation, WATCH_EVERY};

fn cc_flow(src: &str, dst: &str, cc: serde_json::Value) -> serde_json::Value {
    let mut f = tcp_flow(src, dst, Some(100_000), json!({}));
    f["cc"] = cc;
    f
}

#[test]
fn every_problem_is_reported_at_once_and_run_refuses_the_same() {
    let mut topo = dumbbell(3, 10_000_000, 10, 50, 1);
    topo["bottleneck"]["queue"] = json!({"kind": "fq_codel", "target": 200 * MS, "interval": 100 * MS});
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 2.0});
    let mut late = tcp_flow("s2", "d2", None, json!({}));
    late["start"] = json!(2 * S);
    late["stop"] = json!(S);
    let sc = scenario(
        topo,
        vec![
            cc_flow("s0", "d0", json!({"name": "cubic", "params": {"beta": 7.0}})),
            cc_flow("s1", "d1", json!({"name": "bbr", "params": {"cycle_start": 9}})),
            late,
            cc_flow("s0", "x9", json!({"name": "reno"})),
        ],
        json!({"duration": S, "record": {"queue": ["nowhere"]}}),
    );
    let problems = Simulation::problems(&sc, 1);
    let expected = [
        "link 'bottleneck' queue: fq_codel.target must not exceed fq_codel.interval (0.1 s), got 0.2 s",
        "link 'bottleneck' error: error.per must be in [0, 1], got 2",
        "flows[0] ('flow0').cc: cc 'cubic' params: beta = 7; accepted: 0 < beta < 1",
        "flows[1] ('flow1').cc: cc 'bbr' params: cycle_start = 9; accepted: 0..=7",
        "flows[2] ('flow2').stop (1 s) must come after start (2 s): the flow would send nothing",
        "flows[3] ('flow3').dst: unknown node 'x9'",
        "record.queue: unknown link 'nowhere'",
    ];
    assert_eq!(problems.len(), expected.len(), "{problems:#?}");
    for (got, want) in problems.iter().zip(expected) {
        assert!(got.starts_with(want), "{got}\n  does not start with\n{want}");
    }
    let refused = Simulation::new(&sc, 1).err().expect("refused");
    assert_eq!(refused, problems.join("\n"));
    let json = serde_json::to_string(&sc).unwrap();
    assert_eq!(tcplab_core::validate_json(&json, 1), problems);
    assert_eq!(tcplab_core::run_json(&json, 1).unwrap_err(), refused);
}

#[test]
fn a_scenario_that_runs_has_no_problem_and_a_unrouted_flow_is_one() {
    let sc = scenario(dumbbell(1, 10_000_000, 10, 50, 1), vec![tcp_flow("s0", "d0", Some(10_000), json!({}))], json!({}));
    assert!(Simulation::problems(&sc, 0).is_empty());
    let graph = json!({"kind": "graph", "nodes": ["a", "b", "c"], "links": [
        {"name": "ab", "from": "a", "to": "b", "rate": 10_000_000, "delay": MS},
        {"name": "ba", "from": "b", "to": "a", "rate": 10_000_000, "delay": MS}]});
    let sc = scenario(graph, vec![tcp_flow("a", "c", Some(10_000), json!({}))], json!({}));
    assert_eq!(Simulation::problems(&sc, 0), vec!["flows[0] ('flow0'): no route between 'a' and 'c'".to_string()]);
}

#[test]
fn codel_target_may_equal_its_interval_not_exceed_it() {
    let mut topo = dumbbell(1, 10_000_000, 10, 50, 1);
    topo["bottleneck"]["queue"] = json!({"kind": "codel", "target": 100 * MS, "interval": 100 * MS});
    let flows = vec![tcp_flow("s0", "d0", Some(10_000), json!({}))];
    assert!(Simulation::problems(&scenario(topo.clone(), flows.clone(), json!({})), 0).is_empty());
    topo["bottleneck"]["queue"]["target"] = json!(100 * MS + 1);
    let problems = Simulation::problems(&scenario(topo, flows, json!({})), 0);
    assert_eq!(problems.len(), 1);
    assert!(problems[0].contains("codel.target must not exceed codel.interval"), "{problems:?}");
}

/// Something like the scenario of `determinism.rs`'s golden digest (loss, a warm-up,
/// UDP), with enough events for a few calls of the watcher (20 s: its drop-tail links
/// take one event per packet per hop, `sim/fixed_rate.rs`, and 8 s left the slices'
/// first doublings, from 1 ms, too large a share of the calls).
fn busy() -> tcplab_core::scenario::Scenario {
    let mut topo = dumbbell(3, 100_000_000, 25, 200, 2);
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 0.01});
    scenario(
        topo,
        vec![
            tcp_flow("s0", "d0", None, json!({"profile": "ns2-sack"})),
            tcp_flow("s1", "d1", None, json!({"profile": "linux"})),
            json!({"kind": "udp", "src": "s2", "dst": "d2", "packet_bytes": 186, "stop": 3 * S,
                   "interval": {"dist": "normal", "mean": 20 * MS, "sigma": MS}}),
        ],
        json!({"duration": 20 * S, "warmup": S}),
    )
}

#[test]
fn a_watched_run_gives_the_results_of_run_bit_for_bit() {
    let plain = run(&busy(), 7);
    let mut calls = Vec::new();
    let watched = Simulation::new(&busy(), 7)
        .unwrap()
        .run_watched(|now| {
            calls.push(now);
            true
        })
        .expect("not stopped");
    assert_eq!(watched.meta.digest, plain.meta.digest);
    assert_eq!(watched.meta.events, plain.meta.events);
    assert_eq!(watched.flows.goodput_bps, plain.flows.goodput_bps);
    // About once per WATCH_EVERY events (the slices adapt to the event rate), with the
    // simulated time going forward.
    let per_call = plain.meta.events as f64 / calls.len() as f64;
    assert!(calls.len() >= 2, "{} events, {} calls", plain.meta.events, calls.len());
    assert!(per_call > WATCH_EVERY as f64 / 8.0 && per_call < WATCH_EVERY as f64 * 4.0, "{per_call} events per call");
    assert!(calls.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_watcher_stops_the_run_at_its_next_call() {
    let sim = Simulation::new(&busy(), 7).unwrap();
    assert_eq!(sim.end_time().as_secs_f64(), 20.0);
    let mut seen = Vec::new();
    let stopped = sim.run_watched(|now| {
        seen.push(now);
        seen.len() < 2
    });
    assert!(stopped.is_none());
    assert_eq!(seen.len(), 2);
    assert!(seen[1].as_secs_f64() < 20.0, "stopped before the end: {seen:?}");
}

#[test]
fn a_quiet_stretch_does_not_stretch_the_slices_over_the_busy_one_after_it() {
    // 100 s with one short transfer, then 50 bulk flows at 1 Gbit/s: a slice sized by
    // the quiet stretch would cover the busy one whole, and Ctrl-C would wait for it.
    let mut flows = vec![tcp_flow("s0", "d0", Some(10_000), json!({}))];
    for i in 0..50 {
        let mut f = tcp_flow(&format!("s{i}"), &format!("d{i}"), None, json!({}));
        f["start"] = json!(100 * S);
        flows.push(f);
    }
    let sc = scenario(dumbbell(50, 1_000_000_000, 10, 1000, 1), flows, json!({"duration": 102 * S}));
    let mut busy_calls = 0u64;
    let r = Simulation::new(&sc, 1).unwrap().run_watched(|now| {
        busy_calls += u64::from(now.as_secs_f64() > 100.0);
        true
    });
    let events = r.unwrap().meta.events;
    assert!(events > 20 * u64::from(WATCH_EVERY), "{events} events");
    assert!(busy_calls >= events / (4 * u64::from(WATCH_EVERY)), "{busy_calls} calls in the busy stretch, {events} events");
}
