//! `cargo bench --bench engine`: runs the standard scenarios and prints one JSON line
//! each (events/s and bottleneck packets per wall-second), first with their own
//! profile (`linux-2.6`) and then with the current `linux` profile (RACK-TLP, PRR,
//! D-SACK, Linux RTT estimator) to show what those cost, plus the per-ACK cost of each
//! registered congestion control on the test kit.

use std::time::Instant;
use tcplab_core::{bench, cc, sim};

fn main() {
    let runs = bench::SCENARIOS.iter().map(|n| (*n, bench::BENCH_PROFILE)).chain(bench::SCENARIOS.iter().map(|n| (*n, "linux")));
    for (name, profile) in runs {
        let sc = bench::scenario_with_profile(name, profile).unwrap();
        let t0 = Instant::now();
        let r = sim::run(&sc, 1).expect("benchmark scenario runs");
        let wall = t0.elapsed().as_secs_f64();
        println!(
            "{{\"scenario\": \"{name}\", \"profile\": \"{profile}\", \"wall_s\": {wall:.4}, \"sim_s\": {:.1}, \"events\": {}, \"events_per_s\": {:.0}, \"bottleneck_pkts\": {}, \"bottleneck_pkts_per_s\": {:.0}, \"drops\": {}}}",
            r.meta.sim_end_s,
            r.meta.events,
            r.meta.events as f64 / wall,
            r.meta.bottleneck_pkts,
            r.meta.bottleneck_pkts as f64 / wall,
            r.meta.drops
        );
    }
    for e in cc::registry() {
        let w = cc::Window::new(14600, u64::MAX, 1460, false, 2);
        let algo = (e.build)(&serde_json::json!({}), &w).unwrap();
        let mut t = cc::testkit::TestSender::new(algo, 1460, 10, false);
        let n = 2_000_000u64;
        let t0 = Instant::now();
        for i in 0..n {
            if t.in_flight < 2 {
                t.fill();
            }
            t.ack_n(1);
            if i % 5000 == 4999 {
                t.lose();
            }
        }
        let ns = t0.elapsed().as_nanos() as f64 / n as f64;
        println!("{{\"cc\": \"{}\", \"ns_per_ack\": {ns:.1}}}", e.name);
    }
}
