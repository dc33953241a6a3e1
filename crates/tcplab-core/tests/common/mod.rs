//! Scenario builders shared by the integration tests.
#![allow(dead_code)]

use serde_json::{json, Value};
use tcplab_core::metrics::RunResult;
use tcplab_core::scenario::Scenario;

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// A dumbbell: `pairs` pairs, bottleneck `rate` bit/s and `delay_ms`, drop-tail of
/// `limit_pkts` packets, access links 1 Gbit/s with `access_ms` on the sender side.
pub fn dumbbell(pairs: u32, rate: u64, delay_ms: u64, limit_pkts: u32, access_ms: u64) -> Value {
    json!({
        "kind": "dumbbell",
        "pairs": pairs,
        "bottleneck": {"rate": rate, "delay": delay_ms * MS,
                       "queue": {"kind": "drop_tail", "limit": {"packets": limit_pkts}}},
        "sender_access": {"rate": 1_000_000_000u64, "delay": access_ms * MS},
        "receiver_access": {"rate": 1_000_000_000u64, "delay": 0},
    })
}

pub fn tcp_flow(src: &str, dst: &str, bytes: Option<u64>, tcp: Value) -> Value {
    let mut f = json!({"kind": "tcp", "src": src, "dst": dst, "tcp": tcp});
    if let Some(b) = bytes {
        f["bytes"] = json!(b);
    }
    f
}

pub fn scenario(topology: Value, flows: Vec<Value>, extra: Value) -> Scenario {
    let mut v = json!({"topology": topology, "flows": flows});
    if let Value::Object(m) = extra {
        for (k, x) in m {
            v[k] = x;
        }
    }
    serde_json::from_value(v).expect("valid scenario")
}

pub fn run(sc: &Scenario, seed: u64) -> RunResult {
    tcplab_core::sim::run(sc, seed).expect("scenario runs")
}
