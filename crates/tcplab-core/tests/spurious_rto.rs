//! Spurious-RTO verdicts use the simulator's truth: an RTO is spurious when the
//! segment it retransmitted had not been lost (seed 000's definition).
//!
//! Two cases with a known answer:
//! - no packet is dropped anywhere, yet queueing delay outgrows the RTO: every RTO
//!   (data and SYN) must be judged spurious;
//! - a short flow whose tail is dropped by a one-packet buffer and which has no later
//!   data to raise duplicate ACKs: its RTO is genuine.

mod common;
use common::*;
use serde_json::json;

#[test]
fn rtos_without_any_drop_are_all_spurious() {
    // EDGE 160 kbit/s, 250 ms, a 1000-packet FIFO: six IW10 flows queue 60 packets
    // (4.5 s of queueing at 75 ms per packet) behind an RTO learnt from a ~0.52 s SYN
    // exchange (RTO = max(1 s, 0.52 + 4 * 0.26) = 1.57 s). Initial RTO 1 s.
    let flows: Vec<_> = (0..6)
        .map(|i| tcp_flow(&format!("s{i}"), &format!("d{i}"), Some(30_000), json!({"profile": "ns2-sack", "iw": 10, "initial_rto": S})))
        .collect();
    let sc = scenario(dumbbell(6, 160_000, 250, 1000, 11), flows, json!({}));
    let r = run(&sc, 1);
    assert_eq!(r.meta.drops, 0);
    let rtos: u64 = r.flows.rtos.iter().sum();
    let spurious: u64 = r.flows.spurious_rtos.iter().sum();
    eprintln!("RTOs {rtos}, spurious {spurious}");
    assert!(rtos > 0, "the scenario should provoke timeouts");
    assert_eq!(spurious, rtos);
    assert!(r.flows.completed_s.iter().all(|c| c.is_some()));
}

#[test]
fn syn_timeout_on_a_long_path_is_spurious() {
    // One-way 250 ms + 400 ms access: RTT 1.3 s > initial RTO 1 s, nothing is lost.
    let sc = scenario(
        dumbbell(1, 160_000, 250, 50, 400),
        vec![tcp_flow("s0", "d0", Some(10_000), json!({"profile": "ns2-sack", "initial_rto": S}))],
        json!({}),
    );
    let r = run(&sc, 1);
    assert_eq!(r.flows.syn_retransmits[0], 1);
    assert_eq!(r.flows.spurious_syn_rtos[0], 1);
    // RFC 6298 §5.7: after the SYN timeout the data RTO restarts at 3 s, so data
    // (RTT 1.3 s) sees no further timeout.
    assert_eq!(r.flows.rtos[0], 0);
}

#[test]
fn tail_drop_timeout_is_genuine() {
    // Three segments leave back to back at 1 Gbit/s into a 1-packet buffer in front of
    // a 1 Mbit/s link: segments 2 and 3 are dropped (the first is in service, the
    // second... see the drop count), no later data can raise duplicate ACKs, so the
    // sender must time out, and the retransmitted segment really was lost.
    let sc = scenario(
        dumbbell(1, 1_000_000, 20, 1, 1),
        vec![tcp_flow("s0", "d0", Some(3 * 1460), json!({"profile": "ns2-sack", "iw": 3}))],
        json!({}),
    );
    let r = run(&sc, 1);
    assert!(r.meta.drops >= 1);
    assert!(r.flows.rtos[0] >= 1);
    assert_eq!(r.flows.spurious_rtos[0], 0);
    assert_eq!(r.flows.bytes_delivered[0], 3 * 1460);
}
