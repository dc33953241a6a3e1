//! `cargo bench --bench engine [-- NAME...]`: runs the standard scenarios (or the
//! named ones, see `bench::check`) and prints one JSON line each: set-up and total
//! wall seconds, events/s and bottleneck packets per wall-second of the run, and the
//! per-flow state bytes. The standard rows run first with their own profile
//! (`linux-2.6`; the dumbbells with IW10 and a 1 s initial RTO) and then with the current `linux` profile (RACK-TLP, PRR, D-SACK,
//! Linux RTT estimator) to show what those cost; then the per-ACK cost of each
//! registered congestion control on the test kit (only when no names are given).
//!
//! `--record-packets` records every flow's packet trace (`record.packets = ["*"]`) and
//! `--record-throughput` the 100 ms goodput series, to measure what they cost
//! (`metrics::recorder`; the rows' count is printed as `trace_rows`).

use std::time::Instant;
use tcplab_core::{bench, cc, sim};

fn main() {
    let names: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let standard = names.is_empty();
    let flag = |f: &str| std::env::args().any(|a| a == f);
    let (packets, throughput) = (flag("--record-packets"), flag("--record-throughput"));
    let names: Vec<String> = if standard { bench::SCENARIOS.iter().map(|s| s.to_string()).collect() } else { names };
    for name in &names {
        if let Err(e) = bench::check(name) {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
    let mut runs: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), bench::BENCH_PROFILE)).collect();
    if standard {
        runs.extend(names.iter().map(|n| (n.as_str(), "linux")));
    }
    for (name, profile) in runs {
        let mut sc = bench::scenario_with_profile(name, profile).unwrap();
        if packets {
            sc.record.packets = vec!["*".into()];
        }
        if throughput {
            sc.record.throughput_interval = Some(tcplab_core::time::SimDuration(100_000_000));
        }
        let t0 = Instant::now();
        let sim = sim::Simulation::new(&sc, 1).expect("benchmark scenario builds");
        let setup = t0.elapsed().as_secs_f64();
        let idle_bytes = sim.flow_state_bytes() as f64 / sc.flows.len() as f64;
        let t1 = Instant::now();
        let r = sim.run();
        let run = t1.elapsed().as_secs_f64();
        println!(
            "{{\"scenario\": \"{name}\", \"profile\": \"{profile}\", \"wall_s\": {:.4}, \"setup_s\": {setup:.4}, \"sim_s\": {:.1}, \"events\": {}, \"events_per_s\": {:.0}, \"bottleneck_pkts\": {}, \"bottleneck_pkts_per_s\": {:.0}, \"drops\": {}, \"bytes_per_flow\": {:.0}, \"bytes_per_idle_flow\": {idle_bytes:.0}, \"trace_rows\": {}, \"goodput_rows\": {}}}",
            setup + run,
            r.meta.sim_end_s,
            r.meta.events,
            r.meta.events as f64 / run,
            r.meta.bottleneck_pkts,
            r.meta.bottleneck_pkts as f64 / run,
            r.meta.drops,
            r.meta.flow_state_bytes as f64 / sc.flows.len() as f64,
            r.series.packets.t_ns.len(),
            r.series.throughput.t_s.len(),
        );
    }
    if !standard {
        return;
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
