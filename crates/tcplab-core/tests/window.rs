//! The measurement window (docs/architecture.md): with `duration` a run ends at that duration and
//! rates are computed over it; `warmup` starts the window later, leaving the start-up
//! out of every summary.

mod common;
use common::*;
use serde_json::json;
use tcplab_core::metrics::RunResult;

fn link(r: &RunResult, name: &str) -> usize {
    r.links.link.iter().position(|l| l == name).unwrap()
}

/// Issue 15's example: a 100 kB transfer in a 10 s scenario. The run ends at 10 s
/// (not at the last event, nor at the completion), and the bottleneck's utilisation
/// is its busy time over those 10 s. At 10 Mbit/s a packet of b bytes takes exactly
/// b * 800 ns, so busy time = tx_bytes * 800 ns and utilisation = tx_bytes * 800e-9 / 10.
/// Before the window semantics, sim_end_s was the last event's time (1.0 s here, a
/// stale retransmission-timer event) and the utilisation ten times too high.
#[test]
fn a_run_with_duration_ends_at_the_duration() {
    let topo = dumbbell(1, 10_000_000, 20, 100, 1);
    let flows = vec![tcp_flow("s0", "d0", Some(100_000), json!({"profile": "linux"}))];
    let r = run(&scenario(topo.clone(), flows.clone(), json!({"duration": 10 * S})), 1);
    assert_eq!(r.meta.sim_end_s, 10.0);
    assert_eq!(r.meta.window_start_s, 0.0);
    let b = link(&r, "bottleneck");
    assert_eq!((r.links.window_start_s[b], r.links.window_end_s[b]), (0.0, 10.0));
    assert_eq!((r.queues.window_start_s[b], r.queues.window_end_s[b]), (0.0, 10.0));
    let expected = r.links.tx_bytes[b] as f64 * 800e-9 / 10.0;
    eprintln!("utilisation {:.5} (expected {expected:.5}), completed at {:?} s", r.links.utilisation[b], r.flows.completed_s[0]);
    assert!((r.links.utilisation[b] - expected).abs() < 1e-12);
    assert!(r.links.utilisation[b] < 0.01, "100 kB at 10 Mbit/s over 10 s is under 1%");
    // The finite flow's goodput still spans its own transfer (start to completion).
    let done = r.flows.completed_s[0].unwrap();
    assert_eq!((r.flows.window_start_s[0], r.flows.window_end_s[0]), (0.0, done));
    assert!((r.flows.goodput_bps[0] - 800_000.0 / done).abs() < 1e-6);

    // Without `duration` the run stops when the transfer completes.
    let r = run(&scenario(topo, flows, json!({})), 1);
    assert_eq!(r.meta.sim_end_s, r.flows.completed_s[0].unwrap());
}

/// A congested dumbbell (drops, a UDP stream, an error model), run three ways:
/// C over [0, 10 s]; A with duration = 2 s - 1 ns (the events before 2 s, the same
/// events as C's, since runs are deterministic); B over [0, 10 s] with warmup 2 s.
/// B's counts must be exactly C's minus A's, and its rates C's totals minus A's over
/// the 8 s window (to 1 ns of busy time / occupancy at the boundary).
#[test]
fn warmup_leaves_the_start_up_out_of_every_summary() {
    let mut topo = dumbbell(3, 10_000_000, 20, 40, 5);
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 0.002});
    let flows = vec![
        tcp_flow("s0", "d0", None, json!({"profile": "linux"})),
        tcp_flow("s1", "d1", None, json!({"profile": "reference"})),
        json!({"kind": "tcp", "src": "s2", "dst": "d2", "bytes": 3_000_000, "start": S,
               "tcp": {"profile": "linux"}}),
        json!({"kind": "udp", "src": "s2", "dst": "d2", "packet_bytes": 200, "stop": 9 * S,
               "interval": {"dist": "exponential", "mean": 5 * MS}}),
    ];
    let warmup = 2 * S;
    let c = run(&scenario(topo.clone(), flows.clone(), json!({"duration": 10 * S})), 7);
    let a = run(&scenario(topo.clone(), flows.clone(), json!({"duration": warmup - 1})), 7);
    let b = run(&scenario(topo, flows, json!({"duration": 10 * S, "warmup": warmup})), 7);
    assert_eq!(b.meta.digest, c.meta.digest, "the window changes no event");
    assert_eq!((b.meta.window_start_s, b.meta.sim_end_s), (2.0, 10.0));
    let bn = link(&b, "bottleneck");
    assert!(a.queues.drops_overflow[bn] > 0 && b.queues.drops_overflow[bn] > 0, "drops on both sides of 2 s");
    for i in 0..b.links.link.len() {
        assert_eq!((b.links.window_start_s[i], b.links.window_end_s[i]), (2.0, 10.0));
        assert_eq!(b.links.tx_pkts[i], c.links.tx_pkts[i] - a.links.tx_pkts[i]);
        assert_eq!(b.links.tx_bytes[i], c.links.tx_bytes[i] - a.links.tx_bytes[i]);
        assert_eq!(b.queues.enq_pkts[i], c.queues.enq_pkts[i] - a.queues.enq_pkts[i]);
        assert_eq!(b.queues.enq_bytes[i], c.queues.enq_bytes[i] - a.queues.enq_bytes[i]);
        assert_eq!(b.queues.drops_overflow[i], c.queues.drops_overflow[i] - a.queues.drops_overflow[i]);
        assert_eq!(b.queues.drops_corruption[i], c.queues.drops_corruption[i] - a.queues.drops_corruption[i]);
        let busy = |r: &RunResult, secs: f64| r.links.utilisation[i] * secs;
        assert!((busy(&b, 8.0) - (busy(&c, 10.0) - busy(&a, 2.0 - 1e-9))).abs() < 2e-9, "link {i} busy time");
        let occ = |r: &RunResult, secs: f64| r.queues.occ_mean_pkts[i] * secs;
        // Occupancy integrals agree but for the 1 ns between A's end and 2 s (at most
        // the queue limit, 40 packets, for 1 ns).
        assert!((occ(&b, 8.0) - (occ(&c, 10.0) - occ(&a, 2.0 - 1e-9))).abs() < 41e-9, "link {i} occupancy");
        assert!(b.queues.occ_max_pkts[i] <= c.queues.occ_max_pkts[i]);
    }
    assert!(b.links.realised_per[bn].unwrap() > 0.0);
    // TCP: goodput over each flow's part of the window; flow 2 starts at 1 s and
    // finishes inside the window.
    for f in 0..3 {
        let delivered = c.flows.bytes_delivered[f] - a.flows.bytes_delivered[f];
        let (from, to) = (b.flows.window_start_s[f], b.flows.window_end_s[f]);
        assert_eq!(from, 2.0);
        let expected = delivered as f64 * 8.0 / (to - from);
        assert!((b.flows.goodput_bps[f] - expected).abs() < 1e-6 * expected, "flow {f}: {} vs {expected}", b.flows.goodput_bps[f]);
        assert_eq!(b.flows.bytes_delivered[f], c.flows.bytes_delivered[f], "bytes_delivered is the whole transfer");
    }
    assert_eq!(b.flows.window_end_s[0], 10.0);
    assert_eq!(b.flows.window_end_s[2], b.flows.completed_s[2].unwrap());
    // UDP: counts in the window.
    assert_eq!(b.udp.pkts_sent[0], c.udp.pkts_sent[0] - a.udp.pkts_sent[0]);
    assert_eq!(b.udp.pkts_delivered[0], c.udp.pkts_delivered[0] - a.udp.pkts_delivered[0]);
    assert_eq!(b.udp.pkts_lost[0], c.udp.pkts_lost[0] - a.udp.pkts_lost[0]);
    // Run-wide facts stay run-wide.
    assert_eq!(b.meta.drops, c.meta.drops);
    assert_eq!(b.meta.bottleneck_pkts, c.meta.bottleneck_pkts);
}

/// What warm-up is for: a bulk Reno flow (linux profile, SACK) over a 200 ms RTT needs seconds of slow
/// start and its first loss recovery before it fills a 10 Mbit/s bottleneck. Over
/// [0, 30 s] the utilisation includes that start-up; over [10 s, 30 s] it is the
/// steady state, which a buffer of one BDP (10e6 * 0.2 / 8 / 1500 = 167 packets)
/// keeps at the full rate within a few percent (Reno halves a window of at most
/// 2 BDP, so the queue just drains).
#[test]
fn warmup_measures_the_steady_state() {
    let topo = dumbbell(1, 10_000_000, 99, 167, 1);
    let flows = vec![json!({"kind": "tcp", "src": "s0", "dst": "d0", "cc": {"name": "reno"}, "tcp": {"profile": "linux"}})];
    let whole = run(&scenario(topo.clone(), flows.clone(), json!({"duration": 30 * S})), 1);
    let steady = run(&scenario(topo, flows, json!({"duration": 30 * S, "warmup": 10 * S})), 1);
    let b = link(&whole, "bottleneck");
    let (u_whole, u_steady) = (whole.links.utilisation[b], steady.links.utilisation[b]);
    eprintln!("utilisation over [0, 30 s] {u_whole:.4}, over [10 s, 30 s] {u_steady:.4}");
    assert!(u_steady > 0.97, "steady state {u_steady}");
    assert!(u_steady - u_whole > 0.02, "the start-up lowers the whole-run figure ({u_whole} vs {u_steady})");
}

#[test]
fn warmup_needs_a_duration_beyond_it() {
    let topo = dumbbell(1, 10_000_000, 20, 100, 1);
    let flows = vec![tcp_flow("s0", "d0", Some(100_000), json!({}))];
    let err = |extra| tcplab_core::sim::run(&scenario(topo.clone(), flows.clone(), extra), 1).unwrap_err();
    let e = err(json!({"warmup": S}));
    assert!(e.contains("warmup (1 s) needs duration"), "{e}");
    let e = err(json!({"warmup": 2 * S, "duration": 2 * S}));
    assert!(e.contains("warmup (2 s) must be less than duration (2 s)"), "{e}");
}
