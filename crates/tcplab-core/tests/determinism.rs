//! Determinism: the same scenario and seed give a bit-identical trace digest, and a
//! different seed gives a different one. The golden digest pins the whole pipeline
//! (RNG, scheduler order, TCP, queues): a change to it must be deliberate, and the
//! commit that changes it says why.

mod common;
use common::*;
use serde_json::json;

/// The classic profiles and linux-2.6 with RED, Bernoulli loss and a UDP stream. Its
/// digest held from before PRR, RACK-TLP, ECN and the AQMs were added (they must not
/// disturb it when off) until `linux-2.6` took its kernels' start-up defaults (RFC
/// 3390's IW, 3 s initial RTO): `GOLDEN_LINUX_2_6_IW10` pins the earlier digest with
/// those two set back by hand.
fn mixed_scenario() -> tcplab_core::scenario::Scenario {
    mixed_scenario_with("linux-2.6")
}

fn mixed_scenario_with(third_profile: &str) -> tcplab_core::scenario::Scenario {
    mixed_scenario_tcp(json!({"profile": third_profile}))
}

fn mixed_scenario_tcp(third_tcp: serde_json::Value) -> tcplab_core::scenario::Scenario {
    let mut topo = dumbbell(3, 5_000_000, 25, 30, 2);
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 0.01});
    topo["bottleneck"]["queue"] = json!({"kind": "red", "limit": {"packets": 60},
        "q_weight": 0.002, "min_th": 5.0, "max_th": 20.0, "max_p": 0.1,
        "gentle": false, "wait": false, "mean_pktsize": 1500});
    scenario(
        topo,
        vec![
            tcp_flow("s0", "d0", Some(500_000), json!({"profile": "ns2-sack"})),
            tcp_flow("s1", "d1", Some(300_000), json!({"profile": "reference"})),
            tcp_flow("s2", "d2", None, third_tcp),
            json!({"kind": "udp", "src": "s2", "dst": "d2", "packet_bytes": 186, "stop": 5 * S,
                   "interval": {"dist": "normal", "mean": 20 * MS, "sigma": MS}}),
        ],
        json!({"duration": 6 * S}),
    )
}

#[test]
fn same_seed_same_digest_different_seed_different_digest() {
    let sc = mixed_scenario();
    let a = run(&sc, 42);
    let b = run(&sc, 42);
    let c = run(&sc, 43);
    assert_eq!(a.meta.digest, b.meta.digest);
    assert_eq!(a.meta.events, b.meta.events);
    assert_eq!(a.flows.goodput_bps, b.flows.goodput_bps);
    assert_ne!(a.meta.digest, c.meta.digest);
}

#[test]
fn golden_digest() {
    let r = run(&mixed_scenario(), 42);
    eprintln!("digest {} events {}", r.meta.digest, r.meta.events);
    assert_eq!(r.meta.digest, GOLDEN, "trace digest changed: if intended, update GOLDEN and say why in the commit");
}

/// eb9a291438f493b6 until `linux-2.6` started with RFC 3390's IW (3 segments at MSS
/// 1460, was IW10) and a 3 s initial RTO (was 1 s), as Linux 2.6.2x-2.6.35 did: the
/// third flow's first flights are smaller, so its whole trace moved.
const GOLDEN: &str = "052c268fa4218db1";

/// The earlier golden scenario: `linux-2.6` with IW10 and the 1 s initial RTO set
/// explicitly gives the digest it gave when they were the profile's defaults, so the
/// profile change touched nothing but those two values.
#[test]
fn golden_digest_linux_2_6_with_iw10_and_1s_rto() {
    let ns = 1_000_000_000u64;
    let r = run(&mixed_scenario_tcp(json!({"profile": "linux-2.6", "iw": 10, "initial_rto": ns})), 42);
    eprintln!("linux-2.6 + IW10 + 1 s digest {} events {}", r.meta.digest, r.meta.events);
    assert_eq!(r.meta.digest, GOLDEN_LINUX_2_6_IW10);
}

const GOLDEN_LINUX_2_6_IW10: &str = "eb9a291438f493b6";

/// The same scenario with the current `linux` profile (RACK-TLP, PRR, D-SACK, the
/// Linux RTT estimator, linux_cc) for the third flow. 12629dd7e96076b3 before linux_cc
/// (linux_cc: whole-segment ssthresh and the growth count restarted at each reduction
/// change this Reno flow's window).
#[test]
fn golden_digest_linux() {
    let r = run(&mixed_scenario_with("linux"), 42);
    eprintln!("linux digest {} events {}", r.meta.digest, r.meta.events);
    assert_eq!(r.meta.digest, GOLDEN_LINUX, "trace digest changed: if intended, update GOLDEN_LINUX and say why in the commit");
}

/// 7810c77edd26ab15 until `linux` took Linux 6.x's defaults for timestamps (52-byte
/// headers, MSS 1448: every segment and its timing moved), F-RTO (`tcp_frto = 2`) and
/// the receiver's quick-ACK mode and adaptive delayed-ACK timeout (the first segments
/// are each ACKed): `GOLDEN_LINUX_BEFORE_DEFAULTS` pins the earlier digest with those
/// set back by hand. 100ec8640115fe94 until the receiver modelled `tcp_grow_window`'s
/// `quick |= 1` with receive-buffer autotuning (`tcp/quickack.rs`): the window's first
/// 18 segments and every later growth are ACKed at once. b29cbd17b6ee8c99 until the
/// receiver offered Linux's window (`tcp_select_window`, `rcv_ssthresh` from the
/// SYN-ACK's 65,160 bytes, the 157/256 scaling ratio, growth on out-of-order segments)
/// and RACK's recovery stopped waiting for the last timeout's high_seq.
/// ccd15441c1c7ad70 until the receiver timed its autotuning by its RTT from timestamps
/// (`tcp_rcv_rtt_measure_ts`: it grows with the queue the data meets, so each
/// measurement covers more bytes) and provisioned its buffer at each out-of-order
/// arrival (`tcp_rcvbuf_grow` from `tcp_data_queue_ofo`): this flow's offered window
/// grows faster.
const GOLDEN_LINUX: &str = "aa055a1f543aa21e";

/// The `linux` flow with timestamps, F-RTO and quick-ACK off, and MSS 1460 with
/// 40-byte headers, gives the digest the profile gave before they became its
/// defaults: the change touched nothing else.
#[test]
fn golden_digest_linux_before_defaults() {
    let r = run(&mixed_scenario_tcp(json!({"profile": "linux", "timestamps": false, "header_bytes": 40,
        "mss": 1460, "frto": false, "quickack": false})), 42);
    eprintln!("linux before defaults digest {} events {}", r.meta.digest, r.meta.events);
    assert_eq!(r.meta.digest, GOLDEN_LINUX_BEFORE_DEFAULTS);
}

const GOLDEN_LINUX_BEFORE_DEFAULTS: &str = "7810c77edd26ab15";
