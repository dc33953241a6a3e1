//! Whole-simulation checks of ECN (RFC 3168) and DCTCP (RFC 8257). Each test states
//! its reference and tolerance; figures are printed with `--nocapture`.

mod common;
use common::*;
use serde_json::{json, Value};
use tcplab_core::metrics::RunResult;

fn bottleneck(r: &RunResult) -> usize {
    r.links.link.iter().position(|l| l == "bottleneck").unwrap()
}

/// Time-weighted mean and the maximum of the bottleneck queue in packets over
/// [t0, end], from the queue series.
fn queue_stats_after(r: &RunResult, t0: f64) -> (f64, u32) {
    let q = &r.series.queue;
    let link = r.meta.link_names.iter().position(|n| n == "bottleneck").unwrap() as u32;
    let (mut area, mut last_t, mut last_p, mut max) = (0.0, t0, 0.0, 0);
    for k in 0..q.t_s.len() {
        if q.link[k] != link {
            continue;
        }
        if q.t_s[k] > t0 {
            area += last_p * (q.t_s[k] - last_t);
            last_t = q.t_s[k];
            max = max.max(q.pkts[k]);
        }
        last_p = q.pkts[k] as f64;
    }
    area += last_p * (r.meta.sim_end_s - last_t);
    (area / (r.meta.sim_end_s - t0), max)
}

/// RED as DCTCP's step marker (RFC 8257 §3.1): mark ECT packets when the queue an
/// arrival finds exceeds `k` packets (q_weight 1, thresholds k and k + 0.5).
fn step_marking(k: u32, limit: u32) -> Value {
    json!({"kind": "red", "limit": {"packets": limit}, "bytes": false, "queue_in_bytes": false,
           "q_weight": 1.0, "min_th": k as f64, "max_th": k as f64 + 0.5, "gentle": false,
           "wait": false, "mean_pktsize": 1500, "ecn": true})
}

/// Times at which a flow's window was reduced for ECN: rows of the cwnd series in the
/// CWR state (code 3) with a new ssthresh. (An ACK that ends one CWR episode and
/// starts the next shows no Open row in between, so state changes alone miss it.)
fn cwr_entries(r: &RunResult, flow: u32) -> Vec<f64> {
    let c = &r.series.cwnd;
    let mut out = Vec::new();
    let mut prev = None;
    for k in 0..c.t_s.len() {
        if c.flow_id[k] != flow {
            continue;
        }
        if c.state[k] == 3 && c.ssthresh_bytes[k] != prev {
            out.push(c.t_s[k]);
        }
        prev = c.ssthresh_bytes[k];
    }
    out
}

/// An ECN-capable Reno flow through a marking queue loses nothing and reduces its
/// window at most once per round trip.
///
/// Reference: RFC 3168 §6.1.2: the sender reacts to ECN-Echo as to a loss, "at most
/// once per window of data" (once per RTT), and marking replaces dropping (§5). Step
/// marking at K = 10 packets marks many packets of each window (the queue stays above
/// K for a while after each reduction). Tolerances (exact): no drop and no
/// retransmission; consecutive CWR entries at least one minimum RTT (44 ms
/// propagation plus serialization) apart; fewer reductions than marks.
#[test]
fn marked_flow_loses_nothing_and_reduces_once_per_rtt() {
    let mut topo = dumbbell(1, 10_000_000, 20, 1000, 2);
    topo["bottleneck"]["queue"] = step_marking(10, 1000);
    let sc = scenario(
        topo,
        vec![tcp_flow("s0", "d0", None, json!({"profile": "linux", "ecn": true}))],
        json!({"duration": 20 * S, "record": {"cwnd": true}}),
    );
    let r = run(&sc, 1);
    let b = bottleneck(&r);
    let drops: u64 = r.meta.drops;
    let marks = r.queues.ce_marks[b];
    let reductions = r.flows.ecn_reductions[0];
    let entries = cwr_entries(&r, 0);
    let min_gap = entries.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
    eprintln!(
        "ecn: {marks} CE marks, {reductions} reductions, {drops} drops, {} retransmits, min gap between reductions {:.1} ms, goodput {:.2} Mbit/s",
        r.flows.retransmits[0],
        min_gap * 1e3,
        r.flows.goodput_bps[0] / 1e6
    );
    assert_eq!(drops, 0);
    assert_eq!(r.flows.retransmits[0], 0);
    assert!(reductions >= 10 && marks > reductions, "{marks} marks, {reductions} reductions");
    assert_eq!(entries.len() as u64, reductions);
    assert!(min_gap >= 0.044, "two reductions {:.1} ms apart", min_gap * 1e3);
}

/// Without ECN the same flow loses packets at the marking queue's forced threshold.
#[test]
fn the_same_flow_without_ecn_is_dropped_instead() {
    let mut topo = dumbbell(1, 10_000_000, 20, 1000, 2);
    topo["bottleneck"]["queue"] = step_marking(10, 1000);
    let sc = scenario(topo, vec![tcp_flow("s0", "d0", None, json!({"profile": "linux"}))], json!({"duration": 20 * S}));
    let r = run(&sc, 1);
    let b = bottleneck(&r);
    assert_eq!(r.queues.ce_marks[b], 0);
    assert!(r.queues.drops_forced[b] > 0 && r.flows.retransmits[0] > 0);
    assert_eq!(r.flows.ecn_reductions[0], 0);
}

/// DCTCP holds the queue near the marking threshold K at full utilisation.
///
/// Reference: RFC 8257 §3 and Alizadeh et al. (SIGCOMM 2010) §3.3: with step marking
/// at K and K > C x RTT / 7, DCTCP's sawtooth keeps the queue oscillating just above K
/// (amplitude about sqrt(2 N (C RTT + K)) / 2 packets for N flows; §3.3 eq. 8-9)
/// without draining it, so throughput stays at line rate. Setup: 2 DCTCP flows, 100
/// Mbit/s, RTT 2 * (0.5 + 0.05) ms plus queueing (BDP 9 packets), K = 20 packets.
/// Tolerances: time-weighted mean queue within [K/2, 1.5 K] after 1 s; utilisation
/// >= 95%; no drop (marking replaces it). Reno with the same ECN marking, for
/// contrast, halves per mark round and drains the queue more.
#[test]
fn dctcp_queue_oscillates_around_k_at_full_utilisation() {
    let k = 20;
    let run_with = |cc: &str| {
        let mut topo = json!({
            "kind": "dumbbell", "pairs": 2,
            "bottleneck": {"rate": 100_000_000u64, "delay": 500_000u64, "queue": step_marking(k, 1000)},
            "sender_access": {"rate": 1_000_000_000u64, "delay": 50_000u64},
            "receiver_access": {"rate": 1_000_000_000u64, "delay": 0},
        });
        topo["bottleneck_reverse"] = json!({"rate": 100_000_000u64, "delay": 500_000u64});
        let flows = (0..2)
            .map(|i| {
                let mut f = tcp_flow(&format!("s{i}"), &format!("d{i}"), None, json!({"profile": "linux", "ecn": true}));
                f["cc"] = json!({"name": cc});
                f
            })
            .collect();
        run(&scenario(topo, flows, json!({"duration": 5 * S, "record": {"queue": ["bottleneck"]}})), 1)
    };
    let r = run_with("dctcp");
    let b = bottleneck(&r);
    let (mean, max) = queue_stats_after(&r, 1.0);
    let util = r.links.utilisation[b];
    let reno = run_with("reno");
    let (reno_mean, _) = queue_stats_after(&reno, 1.0);
    eprintln!(
        "dctcp: mean queue {mean:.1} pkts (K = {k}), max {max}, utilisation {util:.4}, {} marks, {} drops; reno+ecn: mean {reno_mean:.1} pkts, utilisation {:.4}",
        r.queues.ce_marks[b], r.meta.drops, reno.links.utilisation[b]
    );
    assert!((k as f64 / 2.0..=1.5 * k as f64).contains(&mean), "mean queue {mean:.1} vs K = {k}");
    assert!(util >= 0.95, "utilisation {util:.4}");
    assert_eq!(r.meta.drops, 0);
}
