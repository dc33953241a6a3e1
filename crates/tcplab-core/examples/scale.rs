//! `cargo run --release --example scale -- PAIRS SECS`: a dumbbell of PAIRS Reno bulk
//! flows at 10 Gbit/s; prints set-up and run wall seconds, events and peak RSS.
use serde_json::json;
use std::time::Instant;

fn peak_rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let l = s.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    l.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() / 1024.0
}

/// CPU time of this thread so far, s (/proc/thread-self/schedstat: ns on CPU).
fn cpu_s() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse::<f64>().unwrap() * 1e-9
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let pairs: u32 = a[1].parse().unwrap();
    let secs: u64 = a[2].parse().unwrap();
    let ms = 1_000_000u64;
    let flows: Vec<_> = (0..pairs)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": format!("d{i}"), "cc": {"name": "reno"}, "tcp": {"profile": "linux"}}))
        .collect();
    let v = json!({
        "name": "scale", "duration": secs * 1000 * ms,
        "topology": {"kind": "dumbbell", "pairs": pairs,
            "bottleneck": {"rate": 10_000_000_000u64, "delay": 20 * ms,
                           "queue": {"kind": "drop_tail", "limit": {"packets": 36667}}},
            "sender_access": {"rate": 100_000_000_000u64, "delay": ms},
            "receiver_access": {"rate": 100_000_000_000u64, "delay": ms}},
        "flows": flows,
    });
    let sc: tcplab_core::scenario::Scenario = serde_json::from_value(v).unwrap();
    let t0 = Instant::now();
    let sim = tcplab_core::sim::Simulation::new(&sc, 1).unwrap();
    let setup = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let c1 = cpu_s();
    let r = sim.run();
    let wall = t1.elapsed().as_secs_f64();
    let cpu = cpu_s() - c1;
    println!(
        "{{\"pairs\": {pairs}, \"setup_s\": {setup:.3}, \"wall_s\": {wall:.3}, \"cpu_s\": {cpu:.3}, \"events\": {}, \"events_per_s\": {:.0}, \"peak_rss_mb\": {:.1}, \"bottleneck_pkts\": {}, \"drops\": {}, \"digest\": \"{}\"}}",
        r.meta.events, r.meta.events as f64 / wall, peak_rss_mb(), r.meta.bottleneck_pkts, r.meta.drops, r.meta.digest
    );
}
