//! Standard benchmark scenarios, shared by `cargo bench` and `tcplab bench`.
//!
//! - `dumbbell-10x100M-60s`: 10 NewReno bulk flows with SACK and MSS 1448,
//!   a 100 Mbit/s bottleneck with 20 ms one-way delay, 1 Gbit/s access links with
//!   1 ms, a drop-tail queue of 1 BDP in packets, 60 s simulated. For reference,
//!   ns-3.44 takes about 31.7 s here (~15,500 bottleneck packets per wall-second).
//!
//! RTT = 2 * (20 + 1 + 1) ms = 44 ms; BDP = 100e6 * 0.044 / 8 / 1500 = 367 packets.
//!
//! - `dumbbell-100x1G-10s`: 100 CUBIC bulk flows, a 1 Gbit/s
//!   bottleneck with 20 ms one-way delay, 10 Gbit/s access links with 1 ms, drop-tail
//!   of 1 BDP (RTT 44 ms: 1e9 * 0.044 / 8 / 1500 = 3667 packets), 10 s simulated.
//!   ns-3.44 takes about 92 s here (~8,500 bottleneck packets per wall-second).
//!
//! - `dumbbell-{N}x10G-{S}s` for any N in 1..=100,000 pairs and S in
//!   1..=3600 s: N Reno bulk flows (linux-2.6 profile with IW10 and a 1 s initial RTO:
//!   SACK, delayed ACKs), one per
//!   pair, all opening at t = 0; a 10 Gbit/s bottleneck with 20 ms one-way delay,
//!   100 Gbit/s access links with 1 ms, drop-tail of 1 BDP (RTT 44 ms: 10e9 * 0.044
//!   / 8 / 1500 = 36,667 packets), S seconds simulated. The standard rows are
//!   `dumbbell-10000x10G-2s` and, opt-in (`tcplab bench --large`) because it needs
//!   ~0.9 GB and 5-20 s, `dumbbell-100000x10G-1s`; other sizes measure how cost
//!   scales with flows (docs/validation.md, "Scaling with flows").
//!
//! - `parkinglot-1G`: seed 002 at full scale, one run of `tcplab study
//!   highspeed --set scale=full` (examples/highspeed/parking_lot.toml): a parking lot of
//!   5 routers, 8 backbone links of 1 Gbit/s, 15 ms, 2 MB drop-tail; 10 Gbit/s access
//!   links; a `workload` of 10 long-lived flows (4.7 GB, 2 min exponential
//!   inter-arrivals) and 100 short-lived ones (Pareto 1.2, mean 1 MB, 1 s), mean RTT
//!   130 ms; CUBIC, linux-2.6 profile with a 64 MB receive buffer; 1800 s simulated
//!   (10 x 2 min + 10 min), seed 1.

use crate::scenario::Scenario;
use serde_json::json;

/// The rows `tcplab bench` and `make bench` run by default.
pub const SCENARIOS: [&str; 4] =
    ["dumbbell-10x100M-60s", "dumbbell-100x1G-10s", "dumbbell-10000x10G-2s", "parkinglot-1G"];
/// Rows run only on request (`tcplab bench --large`).
pub const LARGE_SCENARIOS: [&str; 1] = ["dumbbell-100000x10G-1s"];

/// Largest N and S of the `dumbbell-{N}x10G-{S}s` family.
const MAX_PAIRS: u32 = 100_000;
const MAX_SECS: u64 = 3600;

/// Parses `dumbbell-{N}x10G-{S}s` into (N, S).
fn parse_10g(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix("dumbbell-")?.strip_suffix("s")?;
    let (pairs, secs) = rest.split_once("x10G-")?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && !t.starts_with('0');
    if !digits(pairs) || !digits(secs) {
        return None;
    }
    let (pairs, secs) = (pairs.parse().ok()?, secs.parse().ok()?);
    (pairs <= MAX_PAIRS && secs <= MAX_SECS).then_some((pairs, secs))
}

/// Why `name` is not a benchmark scenario, or `Ok` if it is one.
pub fn check(name: &str) -> Result<(), String> {
    if scenario_json(name).is_some() {
        return Ok(());
    }
    Err(format!(
        "unknown benchmark scenario '{name}'; accepted: {}, {}, or dumbbell-{{N}}x10G-{{S}}s with N in 1..={MAX_PAIRS} pairs and S in 1..={MAX_SECS} s",
        SCENARIOS.join(", "),
        LARGE_SCENARIOS.join(", ")
    ))
}

/// The profile of the standard benchmark workload.
pub const BENCH_PROFILE: &str = "linux-2.6";

/// The dumbbells' TCP settings: `BENCH_PROFILE` with IW10 and a 1 s initial RTO, the
/// start-up that profile had when these figures were first measured (it now starts as
/// Linux 2.6.2x-2.6.35 did: RFC 3390's IW, 3 s).
fn bench_tcp() -> serde_json::Value {
    json!({"profile": BENCH_PROFILE, "iw": 10, "initial_rto": 1_000_000_000u64})
}

/// A dumbbell of `pairs` bulk flows running `cc` with `bench_tcp` (plus `tcp`
/// overrides), a drop-tail bottleneck of `limit` packets, for `secs` seconds.
///
/// The workload is the one these benchmarks have measured since they were written
/// (the `linux` profile of that time, now `linux-2.6` with IW10 and a 1 s initial
/// RTO), so that the figures stay comparable; `scenario_with_profile` runs them with
/// another profile (the current `linux`: RACK-TLP, PRR, D-SACK, Linux RTT estimator)
/// to measure what that costs.
#[allow(clippy::too_many_arguments)]
fn bulk_dumbbell(
    name: &str,
    pairs: u32,
    cc: &str,
    tcp: serde_json::Value,
    bottleneck_bps: u64,
    limit: u32,
    access_bps: u64,
    secs: u64,
) -> serde_json::Value {
    let ms = 1_000_000u64;
    let mut tcp_spec = bench_tcp();
    if let (Some(base), Some(extra)) = (tcp_spec.as_object_mut(), tcp.as_object()) {
        base.extend(extra.clone());
    }
    let flows: Vec<_> = (0..pairs)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": format!("d{i}"), "cc": {"name": cc}, "tcp": tcp_spec}))
        .collect();
    json!({
        "name": name,
        "duration": secs * 1_000 * ms,
        "topology": {"kind": "dumbbell", "pairs": pairs,
            "bottleneck": {"rate": bottleneck_bps, "delay": 20 * ms,
                           "queue": {"kind": "drop_tail", "limit": {"packets": limit}}},
            "sender_access": {"rate": access_bps, "delay": ms},
            "receiver_access": {"rate": access_bps, "delay": ms}},
        "flows": flows,
    })
}

/// Seed 002's parking lot at full scale (module doc), on the study's TCP settings (the
/// profile's own start-up, as `examples/highspeed/parking_lot.toml` runs it).
fn parking_lot_1g(name: &str) -> serde_json::Value {
    let (ms, s) = (1_000_000u64, 1_000_000_000u64);
    let tcp = json!({"profile": BENCH_PROFILE, "rcv_buffer": 64_000_000u64});
    json!({
        "name": name,
        "duration": 1800 * s,
        "topology": {"kind": "parking_lot", "routers": 5,
            "backbone": {"rate": 1_000_000_000u64, "delay": 15 * ms,
                         "queue": {"kind": "drop_tail", "limit": {"bytes": 2_000_000u64}}},
            "access_rate": 10_000_000_000u64},
        "flows": [],
        "workload": {"rtt_mean": 130 * ms, "classes": [
            {"name": "long", "count": 10, "size": {"dist": "constant", "bytes": 4_700_000_000u64},
             "interarrival_mean": 120 * s, "cc": {"name": "cubic"}, "tcp": tcp},
            {"name": "short", "count": 100, "size": {"dist": "pareto", "mean": 1e6, "shape": 1.2},
             "interarrival_mean": s, "cc": {"name": "cubic"}, "tcp": tcp}]},
    })
}

/// The named benchmark scenario (see `check` for the accepted names).
pub fn scenario(name: &str) -> Option<Scenario> {
    scenario_with_profile(name, BENCH_PROFILE)
}

/// The named benchmark scenario with every flow on TCP profile `profile`.
pub fn scenario_with_profile(name: &str, profile: &str) -> Option<Scenario> {
    let mut sc = scenario_json(name)?;
    for f in sc["flows"].as_array_mut()? {
        f["tcp"]["profile"] = json!(profile);
    }
    Some(serde_json::from_value(sc).expect("built-in scenario is valid"))
}

fn scenario_json(name: &str) -> Option<serde_json::Value> {
    if let Some((pairs, secs)) = parse_10g(name) {
        return Some(bulk_dumbbell(name, pairs, "reno", json!({}), 10_000_000_000, 36_667, 100_000_000_000, secs));
    }
    let v = match name {
        "dumbbell-10x100M-60s" => bulk_dumbbell(
            name, 10, "reno", json!({"mss": 1448, "header_bytes": 52}), 100_000_000, 367, 1_000_000_000, 60,
        ),
        "dumbbell-100x1G-10s" => bulk_dumbbell(name, 100, "cubic", json!({}), 1_000_000_000, 3667, 10_000_000_000, 10),
        "parkinglot-1G" => parking_lot_1g(name),
        _ => return None,
    };
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_10g_family() {
        assert_eq!(parse_10g("dumbbell-10000x10G-2s"), Some((10_000, 2)));
        assert_eq!(parse_10g("dumbbell-100000x10G-1s"), Some((100_000, 1)));
        for bad in ["dumbbell-0x10G-2s", "dumbbell-100001x10G-1s", "dumbbell-10x10G-0s", "dumbbell-010x10G-2s",
                    "dumbbell-10x10G-2", "dumbbell-x10G-2s", "dumbbell-10x1G-2s", "dumbbell-+5x10G-2s"] {
            assert_eq!(parse_10g(bad), None, "{bad}");
            assert!(check(bad).unwrap_err().contains("dumbbell-{N}x10G-{S}s"));
        }
        for name in SCENARIOS.iter().chain(LARGE_SCENARIOS.iter()) {
            assert!(check(name).is_ok(), "{name}");
        }
        // The parking lot's workload expands and routes (the run itself is `tcplab bench`'s).
        let lot = scenario("parkinglot-1G").unwrap();
        assert!(lot.flows.is_empty() && lot.workload.is_some());
        crate::sim::Simulation::new(&lot, 1).unwrap();
        let sc = scenario("dumbbell-3x10G-2s").unwrap();
        assert_eq!(sc.flows.len(), 3);
        assert_eq!(sc.duration, Some(crate::time::SimDuration::from_secs(2)));
    }
}
