//! Whole-simulation checks against analytical results. Each test states its reference
//! and its tolerance.

mod common;
use common::*;
use serde_json::json;

/// Jain's fairness index (Jain, Chiu, Hawe 1984): (sum x)^2 / (n sum x^2).
fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// One Reno bulk flow over 10 Mbit/s with a drop-tail buffer of 1 BDP.
///
/// RTT = 2 * (20 + 1) ms = 42 ms; BDP = 10e6 * 0.042 / 8 / 1500 = 35 packets.
/// Reference: with a buffer >= BDP, Reno's halved window (BDP + buffer)/2 >= BDP still
/// fills the pipe, so the link never idles in steady state (Villamizar & Song 1994;
/// Appenzeller et al. 2004). The sawtooth peaks at BDP + buffer (+1 for the packet in
/// service) and halves on each loss.
#[test]
fn reno_with_bdp_buffer_keeps_link_busy_and_sawtooth_is_bounded() {
    let bdp = 35;
    let sc = scenario(
        dumbbell(1, 10_000_000, 20, bdp, 1),
        vec![tcp_flow("s0", "d0", None, json!({"profile": "ns2-sack"}))],
        json!({"duration": 60 * S, "record": {"cwnd": true}}),
    );
    let r = run(&sc, 1);
    let i = r.links.link.iter().position(|l| l == "bottleneck").unwrap();
    // Utilisation over the whole run includes the first slow start; measure the
    // steady state from the delivered bytes after 10 s instead via cwnd samples and
    // the busy fraction over the run (first 10 s are < 2% of the run at full speed).
    let util = r.links.utilisation[i];
    assert!(util >= 0.98, "bottleneck utilisation {util:.4} < 0.98");
    // Sawtooth: every peak cwnd (before a reduction) after the first 10 s lies within
    // [BDP + buffer - 3, BDP + buffer + 3] packets; the 3-packet slack covers the
    // packet in service and per-ACK growth granularity.
    let c = &r.series.cwnd;
    let mss = 1460.0;
    let mut peaks = Vec::new();
    for k in 1..c.t_s.len() {
        if c.t_s[k] > 10.0 && c.cwnd_bytes[k] < c.cwnd_bytes[k - 1] && c.state[k] == 1 {
            peaks.push((c.cwnd_bytes[k - 1] as f64 / mss, c.ssthresh_bytes[k].unwrap() as f64 / mss));
        }
    }
    assert!(peaks.len() >= 5, "only {} loss events", peaks.len());
    let target = 2.0 * bdp as f64;
    for (peak, ssthresh) in &peaks {
        assert!((peak - target).abs() <= 3.0, "peak {peak:.1} pkts vs BDP+buffer {target}");
        // Halving: ssthresh = FlightSize/2 (RFC 5681 eq. 4), FlightSize ~ peak.
        assert!((ssthresh - peak / 2.0).abs() <= 1.5, "ssthresh {ssthresh:.1} vs peak/2 {:.1}", peak / 2.0);
    }
    assert_eq!(r.flows.rtos[0], 0, "steady-state Reno should never time out here");
}

/// Long-run goodput of one bulk flow with Bernoulli loss on the data path.
fn lossy_goodput(p: f64, secs: u64, tcp: serde_json::Value) -> (f64, u64) {
    let mut topo = dumbbell(1, 100_000_000, 50, 10_000, 1);
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": p});
    let sc = scenario(topo, vec![tcp_flow("s0", "d0", None, tcp)], json!({"duration": secs * S}));
    let (mut sum, mut rtos) = (0.0, 0);
    for seed in 1..=3 {
        let r = run(&sc, seed);
        sum += r.flows.goodput_bps[0];
        rtos += r.flows.rtos[0];
    }
    (sum / 3.0, rtos)
}

/// RTT of the lossy path: 2 * (50 + 1) ms propagation + one 1500 B serialization.
const LOSSY_RTT: f64 = 0.102 + 1500.0 * 8.0 / 100e6;

/// Mathis, Semke, Mahdavi, Ott (1997): rate = (MSS / RTT) * sqrt(3 / (2 b p)), b the
/// segments per ACK.
fn mathis(p: f64, b: f64) -> f64 {
    1460.0 * 8.0 / LOSSY_RTT * (3.0 / (2.0 * b * p)).sqrt()
}

/// Throughput under Bernoulli loss vs the Mathis model, for both ACK strategies:
/// an ACK per segment (ns-2 sink, b = 1, C = sqrt(3/2) = 1.22) and delayed ACKs
/// (b = 2, C = sqrt(3/4) = 0.87).
///
/// Path: 100 Mbit/s (never the bottleneck: loss-limited windows stay far below the
/// ~850-packet BDP), RTT 102 ms, ample buffer, loss on the data direction only,
/// 3 seeds. The model describes the congestion-avoidance sawtooth and assumes no
/// timeouts, so the test keeps timeouts cheap: Linux's 200 ms minimum RTO and Limited
/// Transmit (RFC 3042). Tolerance 20% (the issue's); measured errors are printed.
#[test]
fn mathis_throughput_under_random_loss() {
    for (label, b, tcp) in [
        ("ack-every-segment", 1.0, json!({"profile": "ns2-sack", "min_rto": 200 * MS, "limited_transmit": true})),
        ("delayed-ack", 2.0, json!({"profile": "ns2-sack", "delayed_ack": true, "delack_timeout": 200 * MS,
                                    "min_rto": 200 * MS, "limited_transmit": true})),
    ] {
        for (p, secs) in [(0.001f64, 600u64), (0.01, 300), (0.03, 300)] {
            let (got, _) = lossy_goodput(p, secs, tcp.clone());
            let model = mathis(p, b);
            let err = (got - model) / model;
            eprintln!("{label} p={p}: goodput {got:.0} bit/s, Mathis {model:.0} bit/s, error {:+.1}%", err * 100.0);
            assert!(err.abs() <= 0.20, "{label} p={p}: {got:.0} vs Mathis {model:.0} ({:+.1}%)", err * 100.0);
        }
    }
}

/// With RFC 6298's 1 s minimum RTO at p = 3%, timeouts (which Mathis ignores) cost a
/// large share of the time. The goodput must then fall between the PFTK model
/// (Padhye, Firoiu, Towsley, Kurose 1998, eq. 30, which charges every timeout in
/// full, for Reno without SACK) and Mathis: SACK avoids part of Reno's timeouts.
#[test]
fn rfc_min_rto_at_high_loss_lies_between_pftk_and_mathis() {
    let p = 0.03f64;
    let (got, rtos) = lossy_goodput(p, 300, json!({"profile": "ns2-sack"}));
    let b = 1.0;
    let t0 = 1.0; // RTO = max(1 s, SRTT + 4 RTTVAR) = 1 s on this path
    let pftk_pkts = 1.0
        / (LOSSY_RTT * (2.0 * b * p / 3.0).sqrt()
            + t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p));
    let pftk = pftk_pkts * 1460.0 * 8.0;
    eprintln!("p=3% RFC min RTO: goodput {got:.0}, PFTK {pftk:.0}, Mathis {:.0}, RTOs {rtos}", mathis(p, b));
    assert!(rtos > 0);
    assert!(got > pftk && got < mathis(p, b), "{got:.0} not in ({pftk:.0}, {:.0})", mathis(p, b));
}

/// Two identical Reno flows sharing a 10 Mbit/s bottleneck for 60 s reach a Jain
/// index above 0.95 (the bound; AIMD converges to fairness, Chiu & Jain 1989).
#[test]
fn two_identical_flows_are_fair() {
    let sc = scenario(
        dumbbell(2, 10_000_000, 20, 35, 1),
        vec![
            tcp_flow("s0", "d0", None, json!({"profile": "ns2-sack"})),
            tcp_flow("s1", "d1", None, json!({"profile": "ns2-sack"})),
        ],
        json!({"duration": 60 * S}),
    );
    let r = run(&sc, 7);
    let j = jain(&r.flows.goodput_bps);
    eprintln!("goodputs {:?}, Jain {j:.4}", r.flows.goodput_bps);
    assert!(j > 0.95, "Jain index {j:.4}");
}

/// Every byte is delivered exactly once and in order under heavy random loss in both
/// directions, with SACK and with NewReno. The receiver delivers only in order by
/// construction; the check is that the count is exact and the transfer completes.
#[test]
fn data_integrity_under_heavy_loss() {
    for profile in ["ns2-sack", "reference", "linux", "enhanced"] {
        for per in [0.05, 0.15] {
            let mut topo = dumbbell(1, 2_000_000, 30, 50, 1);
            topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": per});
            topo["bottleneck_reverse"] = json!({"rate": 2_000_000, "delay": 30 * MS,
                                                 "error": {"kind": "bernoulli", "per": per}});
            let bytes = 300_000;
            let sc = scenario(
                topo,
                vec![tcp_flow("s0", "d0", Some(bytes), json!({"profile": profile, "syn_retries": 50}))],
                json!({}),
            );
            for seed in 1..=4 {
                let r = run(&sc, seed);
                assert_eq!(r.flows.bytes_delivered[0], bytes, "{profile} per={per} seed={seed}");
                assert!(r.flows.completed_s[0].is_some(), "{profile} per={per} seed={seed} did not complete");
                assert!(r.flows.retransmits[0] > 0);
            }
        }
    }
}
