//! Everything selectable by name, described for `tcplab list` and the scenario docs:
//! congestion controls with their parameters, TCP profiles with their knobs, queue
//! disciplines (with the default parameters of those that have defaults for all of
//! them, times in ns) and error models. The Python front end reads this instead of keeping
//! its own copy.

use crate::cc;
use crate::net::queue::codel::CodelParams;
use crate::net::queue::fq_codel::FqCodelParams;
use crate::net::queue::pie::PieParams;
use crate::tcp::config::{profile_description, TcpConfig, TcpSpec, PROFILES};
use serde_json::{json, Value};

/// The registry as a JSON value.
pub fn registry() -> Value {
    let ccs: Vec<Value> = cc::registry()
        .iter()
        .map(|e| json!({"name": e.name, "summary": e.summary, "reference": e.reference, "params": (e.params)()}))
        .collect();
    let profiles: Vec<Value> = PROFILES
        .iter()
        .map(|p| {
            let cfg = TcpConfig::profile(p).expect("built-in profile");
            json!({"name": p, "summary": profile_description(p), "config": cfg})
        })
        .collect();
    json!({
        "congestion_controls": ccs,
        "tcp_profiles": profiles,
        "queues": [
            {"name": "drop_tail", "summary": "FIFO tail drop: slot (packets), byte_strict or byte_loose (bytes) semantics", "reference": "seed 003 (Stewart et al.)"},
            {"name": "red", "summary": "RED with ns-2 semantics: byte mode, idle decay, gentle, wait, count-based p_a", "reference": "Floyd & Jacobson 1993; ns-2 queue/red.cc"},
            {"name": "codel", "summary": "CoDel: drop (or ECN-mark) at dequeue once the sojourn time stays above target for an interval; control law interval/sqrt(count)", "reference": "RFC 8289; Linux sch_codel",
             "defaults": CodelParams::default()},
            {"name": "fq_codel", "summary": "FQ-CoDel: seeded flow hashing into DRR queues (new/old lists), CoDel per queue, fattest-flow drop when full; ECN on", "reference": "RFC 8290; Linux sch_fq_codel",
             "defaults": FqCodelParams::default()},
            {"name": "pie", "summary": "PIE: drop probability from a PI controller on queueing delay every tupdate, burst allowance, de-randomised drops", "reference": "RFC 8033; Linux sch_pie",
             "defaults": PieParams::default()},
        ],
        "link_presets": link_presets(),
        "macs": [
            {"name": "dama", "summary": "DVB-RCS-like demand assignment in superframes of slots: mode cra (constant rate), rbdc (requested arrival rate, one allocation delay later, until a timeout), vbdc (requested backlog volume, one allocation delay later)", "reference": "ETSI EN 301 790; CNES OpenSAND defaults; seed 004 (Kojo)"},
        ],
        "link_layers": [
            {"name": "slacp", "summary": "TCP-friendly link layer: partially reliable in-order ARQ (cumulative ACK + selective repeat, receiver ACK timer, persistence limit), incremental RS(255,k) FEC on retransmitted blocks, logical channels with ARQ/FEC switches and priorities", "reference": "seed 004 (Kojo, FDPW 2005); RFC 3366"},
        ],
        "error_models": [
            {"name": "bernoulli", "summary": "independent packet losses with probability per", "reference": "ns-2 ErrorModel, unit pkt"},
            {"name": "markov", "summary": "two-state good/bad channel: transition probabilities, mean sojourn times, or seed 004 time series", "reference": "Gilbert-Elliott; seed 004 (Kojo)",
             "presets": markov_presets()},
        ],
    })
}

/// Link presets from the seeds: (name, rate bit/s, one-way delay ns if the seed fixes
/// it, source). A scenario link may name one and override either value.
pub const LINK_PRESETS: [(&str, u64, Option<u64>, &str); 11] = [
    ("edge", 160_000, Some(250_000_000), "seed 000: EDGE 160 kbit/s, 250 ms"),
    ("hspa", 2_000_000, Some(70_000_000), "seed 000: HSPA 2 Mbit/s, 70 ms"),
    ("lte", 50_000_000, Some(15_000_000), "seed 000: LTE 50 Mbit/s, 15 ms"),
    ("testbed-64k", 64_000, None, "seed 001: 64 kbit/s HTB bottleneck (40-packet queue)"),
    ("testbed-20m", 20_000_000, None, "seed 001: 20 Mbit/s HTB bottleneck (500-packet queue)"),
    ("adsl1-down", 1_500_000, None, "seed 003: ADSL1 downstream 1500 kbit/s"),
    ("adsl1-up", 256_000, None, "seed 003: ADSL1 upstream 256 kbit/s"),
    ("adsl2-down", 24_000_000, None, "seed 003: ADSL2 downstream 24 Mbit/s"),
    ("adsl2-up", 1_000_000, None, "seed 003: ADSL2 upstream 1 Mbit/s"),
    ("geo-return", 128_000, Some(250_000_000), "seed 004: GEO return link 128 kbit/s, 250 ms"),
    ("geo-forward", 512_000, Some(250_000_000), "seed 004: GEO forward link 512 kbit/s, 250 ms"),
];

fn link_presets() -> Vec<Value> {
    LINK_PRESETS
        .iter()
        .map(|(name, rate, delay, source)| json!({"name": name, "summary": source, "rate": rate, "delay": delay}))
        .collect()
}

/// Seed 004's error-model presets with their parameters and expected loss fraction.
fn markov_presets() -> Vec<Value> {
    ["low", "medium", "high", "vhigh", "huge"]
        .iter()
        .filter_map(|n| {
            let p = crate::net::error::markov::preset(n)?;
            Some(json!({"name": n, "params": p, "expected_per": p.expected_per()}))
        })
        .collect()
}

pub fn registry_json() -> String {
    registry().to_string()
}

/// Resolves a `TcpSpec` JSON into the full `TcpConfig` JSON.
pub fn resolve_tcp_json(spec: &str) -> Result<String, String> {
    let spec: TcpSpec = serde_json::from_str(spec).map_err(|e| format!("tcp: {e}"))?;
    let cfg = spec.resolve()?;
    serde_json::to_string(&cfg).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_queue_kind_is_listed_and_defaults_build() {
        let reg = registry();
        let names: Vec<&str> = reg["queues"].as_array().unwrap().iter().map(|q| q["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["drop_tail", "red", "codel", "fq_codel", "pie"]);
        for q in reg["queues"].as_array().unwrap() {
            if let Some(d) = q.get("defaults") {
                let mut cfg = d.clone();
                cfg["kind"] = q["name"].clone();
                let qc: crate::net::queue::QueueConfig = serde_json::from_value(cfg).unwrap();
                assert!(qc.build(0).is_ok(), "{}", q["name"]);
            }
        }
    }
}
