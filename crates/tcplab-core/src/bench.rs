//! Standard benchmark scenarios, shared by `cargo bench` and `tcplab bench`.
//!
//! - `dumbbell-10x100M-60s` (issue 2): 10 NewReno bulk flows with SACK and MSS 1448,
//!   a 100 Mbit/s bottleneck with 20 ms one-way delay, 1 Gbit/s access links with
//!   1 ms, a drop-tail queue of 1 BDP in packets, 60 s simulated. For reference,
//!   ns-3.44 takes about 31.7 s here (~15,500 bottleneck packets per wall-second).
//!
//! RTT = 2 * (20 + 1 + 1) ms = 44 ms; BDP = 100e6 * 0.044 / 8 / 1500 = 367 packets.
//!
//! - `dumbbell-100x1G-10s` (issue 5): 100 CUBIC bulk flows (linux profile), a 1 Gbit/s
//!   bottleneck with 20 ms one-way delay, 10 Gbit/s access links with 1 ms, drop-tail
//!   of 1 BDP (RTT 44 ms: 1e9 * 0.044 / 8 / 1500 = 3667 packets), 10 s simulated.
//!   ns-3.44 takes about 92 s here (~8,500 bottleneck packets per wall-second).

use crate::scenario::Scenario;
use serde_json::json;

pub const SCENARIOS: [&str; 2] = ["dumbbell-10x100M-60s", "dumbbell-100x1G-10s"];

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
        "dumbbell-100x1G-10s" => {
            let flows: Vec<_> = (0..100)
                .map(|i| {
                    json!({"kind": "tcp", "src": format!("s{i}"), "dst": format!("d{i}"),
                           "cc": {"name": "cubic"}, "tcp": {"profile": "linux"}})
                })
                .collect();
            json!({
                "name": name,
                "duration": 10_000 * ms,
                "topology": {"kind": "dumbbell", "pairs": 100,
                    "bottleneck": {"rate": 1_000_000_000u64, "delay": 20 * ms,
                                   "queue": {"kind": "drop_tail", "limit": {"packets": 3667}}},
                    "sender_access": {"rate": 10_000_000_000u64, "delay": ms},
                    "receiver_access": {"rate": 10_000_000_000u64, "delay": ms}},
                "flows": flows,
            })
        }
        _ => return None,
    };
    Some(serde_json::from_value(v).expect("built-in scenario is valid"))
}
