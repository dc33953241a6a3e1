//! `cargo run --release --example scale -- NAME...`: runs benchmark scenarios (see
//! `bench::check`) and prints, per scenario, set-up and run seconds both as wall time
//! and as this thread's CPU time (steadier than wall time on a shared machine),
//! events per CPU-second of the run, peak RSS and the trace digest. The run is
//! watched as the Python binding watches it (`Simulation::run_watched`, the clock
//! read between slices of about `WATCH_EVERY` events and compared with a 100 ms period), so the figures
//! include what makes a run interruptible.
use std::time::Instant;

fn peak_rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// CPU time of this thread so far, s (/proc/thread-self/schedstat: ns on CPU).
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns * 1e-9)
}

fn main() {
    for name in std::env::args().skip(1) {
        if let Err(e) = tcplab_core::bench::check(&name) {
            eprintln!("{e}");
            std::process::exit(2);
        }
        let sc = tcplab_core::bench::scenario(&name).unwrap();
        let (t0, c0) = (Instant::now(), cpu_s());
        let sim = tcplab_core::sim::Simulation::new(&sc, 1).unwrap();
        let (setup, setup_cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
        let (t1, c1) = (Instant::now(), cpu_s());
        let mut last = Instant::now();
        let mut looks = 0u64;
        let r = sim
            .run_watched(|_| {
                if last.elapsed() >= std::time::Duration::from_millis(100) {
                    last = Instant::now();
                    looks += 1;
                }
                true
            })
            .expect("never stopped");
        std::hint::black_box(looks);
        let (wall, cpu) = (t1.elapsed().as_secs_f64(), cpu_s() - c1);
        println!(
            "{{\"scenario\": \"{name}\", \"setup_s\": {setup:.3}, \"setup_cpu_s\": {setup_cpu:.3}, \"wall_s\": {wall:.3}, \"cpu_s\": {cpu:.3}, \"events\": {}, \"events_per_cpu_s\": {:.0}, \"peak_rss_mb\": {:.1}, \"digest\": \"{}\"}}",
            r.meta.events,
            r.meta.events as f64 / cpu,
            peak_rss_mb(),
            r.meta.digest
        );
    }
}
