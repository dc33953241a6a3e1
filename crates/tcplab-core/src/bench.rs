//! Standard benchmark scenarios, shared by `cargo bench` and `tcplab bench`.
//!
//! - `dumbbell-10x100M-60s` (issue 2): 10 NewReno bulk flows with SACK and MSS 1448,
//!   a 100 Mbit/s bottleneck with 20 ms one-way delay, 1 Gbit/s access links with
//!   1 ms, a drop-tail queue of 1 BDP in packets, 60 s simulated. For reference,
//!   ns-3.44 takes about 31.7 s here (~15,500 bottleneck packets per wall-second).
//!
//! RTT = 2 * (20 + 1 + 1) ms = 44 ms; BDP = 100e6 * 0.044 / 8 / 1500 = 367 packets.
//!
//! - `dumbbell-100x1G-10s` (issue 5): 100 CUBIC bulk flows, a 1 Gbit/s
//!   bottleneck with 20 ms one-way delay, 10 Gbit/s access links with 1 ms, drop-tail
//!   of 1 BDP (RTT 44 ms: 1e9 * 0.044 / 8 / 1500 = 3667 packets), 10 s simulated.
//!   ns-3.44 takes about 92 s here (~8,500 bottleneck packets per wall-second).

use crate::scenario::Scenario;
use serde_json::json;

pub const SCENARIOS: [&str; 2] = ["dumbbell-10x100M-60s", "dumbbell-100x1G-10s"];

/// The profile of the standard benchmark workload.
pub const BENCH_PROFILE: &str = "linux-2.6";

/// A dumbbell of `pairs` bulk flows running `cc` with the `linux-2.6` profile (plus
/// `tcp` overrides), a drop-tail bottleneck of `limit` packets, for `secs` seconds.
///
/// The workload is the one these benchmarks have measured since they were written
/// (the `linux` profile of that time, now `linux-2.6`), so that the figures stay
/// comparable; `scenario_with_profile` runs them with another profile (the current
/// `linux`: RACK-TLP, PRR, D-SACK, Linux RTT estimator) to measure what that costs.
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
    let mut tcp_spec = json!({"profile": BENCH_PROFILE});
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

/// The named standard scenario.
pub fn scenario(name: &str) -> Option<Scenario> {
    scenario_with_profile(name, BENCH_PROFILE)
}

/// The named standard scenario with every flow on TCP profile `profile`.
pub fn scenario_with_profile(name: &str, profile: &str) -> Option<Scenario> {
    let mut sc = scenario_json(name)?;
    for f in sc["flows"].as_array_mut()? {
        f["tcp"]["profile"] = json!(profile);
    }
    Some(serde_json::from_value(sc).expect("built-in scenario is valid"))
}

fn scenario_json(name: &str) -> Option<serde_json::Value> {
    let v = match name {
        "dumbbell-10x100M-60s" => bulk_dumbbell(
            name, 10, "reno", json!({"mss": 1448, "header_bytes": 52}), 100_000_000, 367, 1_000_000_000, 60,
        ),
        "dumbbell-100x1G-10s" => bulk_dumbbell(name, 100, "cubic", json!({}), 1_000_000_000, 3667, 10_000_000_000, 10),
        _ => return None,
    };
    Some(v)
}
