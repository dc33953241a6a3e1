//! Standard benchmark scenarios, shared by `cargo bench` and `tcplab bench`.
//!
//! - `dumbbell-10x100M-60s` (issue 2): 10 NewReno bulk flows with SACK and MSS 1448,
//!   a 100 Mbit/s bottleneck with 20 ms one-way delay, 1 Gbit/s access links with
//!   1 ms, a drop-tail queue of 1 BDP in packets, 60 s simulated. For reference,
//!   ns-3.44 takes about 31.7 s here (~15,500 bottleneck packets per wall-second).
//!
//! RTT = 2 * (20 + 1 + 1) ms = 44 ms; BDP = 100e6 * 0.044 / 8 / 1500 = 367 packets.

use crate::scenario::Scenario;
use serde_json::json;

pub const SCENARIOS: [&str; 1] = ["dumbbell-10x100M-60s"];

/// The named standard scenario.
pub fn scenario(name: &str) -> Option<Scenario> {
    let ms = 1_000_000u64;
    let v = match name {
        "dumbbell-10x100M-60s" => {
            let flows: Vec<_> = (0..10)
                .map(|i| {
                    json!({"kind": "tcp", "src": format!("s{i}"), "dst": format!("d{i}"),
                           "cc": {"name": "reno"},
                           "tcp": {"profile": "linux", "mss": 1448, "header_bytes": 52}})
                })
                .collect();
            json!({
                "name": name,
                "duration": 60_000 * ms,
                "topology": {"kind": "dumbbell", "pairs": 10,
                    "bottleneck": {"rate": 100_000_000u64, "delay": 20 * ms,
                                   "queue": {"kind": "drop_tail", "limit": {"packets": 367}}},
                    "sender_access": {"rate": 1_000_000_000u64, "delay": ms},
                    "receiver_access": {"rate": 1_000_000_000u64, "delay": ms}},
                "flows": flows,
            })
        }
        _ => return None,
    };
    Some(serde_json::from_value(v).expect("built-in scenario is valid"))
}
