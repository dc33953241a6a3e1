//! Slow start on a lossless path: the completion time of a transfer matches the
//! round-trip arithmetic of RFC 5681 §3.1 (cwnd doubles each RTT with an ACK per
//! segment), within one serialization time.
//!
//! Path: 10 Mbit/s bottleneck, 50 ms one-way, 1 ms sender access, ample buffer, no
//! loss; ns2-sack profile (ACK every segment, per-ACK growth). With IW w the sender
//! sends w, 2w, 4w, ... segments per round, so N segments need k rounds where
//! w(2^k - 1) >= N. Elapsed = handshake RTT + k RTTs + the serialization of the last
//! round's data at the bottleneck (the last round's segments are spaced by it) + the
//! data's one-way delay already counted in the RTT rounds.

mod common;
use common::*;
use serde_json::json;

fn elapsed(iw: u32, segments: u64) -> f64 {
    let bytes = segments * 1460;
    let sc = scenario(
        dumbbell(1, 10_000_000, 50, 1000, 1),
        vec![tcp_flow("s0", "d0", Some(bytes), json!({"profile": "ns2-sack", "iw": iw}))],
        json!({}),
    );
    let r = run(&sc, 1);
    assert_eq!(r.flows.bytes_delivered[0], bytes);
    assert_eq!(r.flows.retransmits[0], 0);
    r.flows.elapsed_s[0].unwrap()
}

/// Expected elapsed time: rounds of RTT plus queueing of each round's burst.
fn expected(iw: u64, segments: u64) -> (f64, f64) {
    let tx = 1500.0 * 8.0 / 10e6; // 1.2 ms per data packet at the bottleneck
    let ack_tx = 40.0 * 8.0 / 10e6; // the SYN/ACK serialization, 32 us
    let acc = 1500.0 * 8.0 / 1e9 + 40.0 * 8.0 / 1e9; // access-link serialization
    let base_rtt = 2.0 * (0.050 + 0.001); // propagation only
    // Handshake: SYN out, SYN-ACK back.
    let mut t = base_rtt + 2.0 * ack_tx + 2.0 * 40.0 * 8.0 / 1e9;
    let mut sent = 0;
    let mut cwnd = iw;
    let mut rounds = 0;
    let mut last_burst = 0;
    while sent < segments {
        let burst = cwnd.min(segments - sent);
        sent += burst;
        last_burst = burst;
        rounds += 1;
        cwnd *= 2;
    }
    // Each full round costs one RTT (ACK clock), the final one ends when its last
    // segment reaches the receiver: one-way delay + burst serialization.
    t += (rounds - 1) as f64 * (base_rtt + tx + ack_tx + acc);
    t += base_rtt / 2.0 + last_burst as f64 * tx + acc;
    (t, tx)
}

#[test]
fn iw3_and_iw10_completion_matches_round_arithmetic() {
    for (iw, segs) in [(3u32, 1u64), (3, 3), (3, 21), (10, 10), (10, 70), (3, 100), (10, 100)] {
        let got = elapsed(iw, segs);
        let (want, tx) = expected(iw as u64, segs);
        // Tolerance: one data-packet serialization at the bottleneck (1.2 ms); the
        // arithmetic ignores the ACKs' access-link serialization (0.3 us each).
        eprintln!("IW{iw} {segs}: elapsed {got:.6} s, arithmetic {want:.6} s");
        assert!(
            (got - want).abs() <= tx,
            "IW{iw}, {segs} segments: elapsed {got:.6} s, round arithmetic {want:.6} s"
        );
    }
}

#[test]
fn iw10_saves_rounds_over_iw3() {
    // 100 segments: IW3 needs 6 rounds (3+6+12+24+48+96 >= 100), IW10 needs 4
    // (10+20+40+80 >= 100): two RTTs (2 * 102 ms) saved, less the serialization
    // difference of the last burst.
    let d = elapsed(3, 100) - elapsed(10, 100);
    assert!((d - 0.204).abs() < 0.03, "saved {d:.4} s");
}
