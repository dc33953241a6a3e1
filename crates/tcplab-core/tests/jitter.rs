//! Delay variation on links (`net/jitter.rs`), through whole simulations:
//! - a variation of one fixed value is exactly a longer propagation delay, on the
//!   fixed-rate and the general link paths;
//! - an exponential variation adds its mean to packets far apart, and never reorders
//!   packets close together;
//! - the draws come from the link's own substream (same seed, same run);
//! - a bad distribution is refused before anything runs, naming the link and field.

mod common;
use common::*;
use serde_json::{json, Value};
use tcplab_core::metrics::RunResult;
use tcplab_core::scenario::Scenario;
use tcplab_core::sim::Simulation;

/// Two pairs over a 20 Mbit/s, 10 ms, 40-packet bottleneck; Reno (`linux-2.6`) and BBR
/// (`linux`, paced in GSO bursts) in bulk, 6 s. Access links 100 Mbit/s with
/// `access_delay` ns, plus `jitter` on every access link if given.
fn two_flows(access_delay: u64, jitter: Option<Value>) -> Scenario {
    let mut access = json!({"rate": 100_000_000u64, "delay": access_delay});
    if let Some(j) = jitter {
        access["jitter"] = j;
    }
    let topo = json!({"kind": "dumbbell", "pairs": 2,
        "bottleneck": {"rate": 20_000_000u64, "delay": 10 * MS,
                       "queue": {"kind": "drop_tail", "limit": {"packets": 40}}},
        "sender_access": access.clone(), "receiver_access": access});
    let flows = vec![
        json!({"kind": "tcp", "name": "reno", "src": "s0", "dst": "d0", "cc": {"name": "reno"},
               "tcp": {"profile": "linux-2.6"}}),
        json!({"kind": "tcp", "name": "bbr", "src": "s1", "dst": "d1", "start": 50 * MS, "cc": {"name": "bbr"},
               "tcp": {"profile": "linux"}}),
    ];
    scenario(topo, flows, json!({"duration": 6 * S}))
}

fn general(sc: &Scenario, seed: u64) -> RunResult {
    let mut sim = Simulation::new(sc, seed).unwrap();
    sim.use_general_links();
    sim.run()
}

fn flows_equal(a: &RunResult, b: &RunResult, what: &str) {
    assert_eq!(a.flows.bytes_delivered, b.flows.bytes_delivered, "{what}: bytes delivered");
    assert_eq!(a.flows.segs_sent, b.flows.segs_sent, "{what}: segments sent");
    assert_eq!(a.flows.retransmits, b.flows.retransmits, "{what}: retransmissions");
    assert_eq!(a.queues.drops_overflow, b.queues.drops_overflow, "{what}: overflow drops");
}

/// 50 us on every packet of every access link is a 50 us longer access delay: the same
/// bytes, segments, retransmissions and drops, on both link paths. (The digests may
/// differ: an arrival with variation is scheduled at its time, not in the lane of the
/// link's propagation delay, so events at one instant can run in another order.)
#[test]
fn a_fixed_variation_is_a_longer_delay() {
    let fixed = json!({"dist": "uniform", "low": 50_000, "high": 50_000});
    let with = two_flows(MS, Some(fixed));
    let longer = two_flows(MS + 50_000, None);
    let (a, b) = (run(&with, 1), run(&longer, 1));
    assert!(a.queues.drops_overflow.iter().sum::<u64>() > 0, "the case exercises drops");
    flows_equal(&a, &b, "fixed-rate path");
    flows_equal(&general(&with, 1), &general(&longer, 1), "general path");
}

/// A UDP source, one 100-byte datagram every 10 ms over one 10 Mbit/s, 5 ms link
/// (serialization 80 us) for 10 s: 1,000 datagrams, none queued behind another. An
/// exponential variation of mean 200 us raises their mean one-way delay by 200 us,
/// within 5 standard errors (200 us / sqrt(1,000) = 6.3 us each).
#[test]
fn an_exponential_variation_adds_its_mean_to_sparse_packets() {
    let owd = |jitter: Option<Value>| {
        let mut link = json!({"name": "ab", "from": "a", "to": "b", "rate": 10_000_000u64, "delay": 5 * MS});
        if let Some(j) = jitter {
            link["jitter"] = j;
        }
        let topo = json!({"kind": "graph", "nodes": ["a", "b"], "links": [link]});
        let flow = json!({"kind": "udp", "name": "u", "src": "a", "dst": "b", "packet_bytes": 100,
                          "stop": 10 * S - 1, "interval": {"dist": "constant", "mean": 10 * MS}});
        let r = run(&scenario(topo, vec![flow], json!({"duration": 11 * S})), 4);
        assert_eq!(r.udp.pkts_delivered[0], 1_000);
        (r.udp.owd_mean_s[0].unwrap(), r.udp.owd_max_s[0].unwrap())
    };
    let (base, base_max) = owd(None);
    assert!((base - 5.080e-3).abs() < 1e-12 && (base_max - 5.080e-3).abs() < 1e-12, "no variation: 5.08 ms each");
    let (mean, max) = owd(Some(json!({"dist": "exponential", "mean": 200_000})));
    let added = mean - base;
    assert!((added - 200e-6).abs() < 5.0 * 200e-6 / 1_000f64.sqrt(), "added {added} s");
    assert!(max > base + 600e-6, "an exponential tail: max {max} s");
}

/// Datagrams 20 us apart on a 1 Gbit/s link with a 500 us mean variation: most draws
/// would overtake, none does.
#[test]
fn packets_close_together_keep_their_order() {
    let topo = json!({"kind": "graph", "nodes": ["a", "b"], "links": [
        {"name": "ab", "from": "a", "to": "b", "rate": 1_000_000_000u64, "delay": MS,
         "jitter": {"dist": "exponential", "mean": 500_000}}]});
    let flow = json!({"kind": "udp", "name": "u", "src": "a", "dst": "b", "packet_bytes": 100,
                      "stop": S, "interval": {"dist": "constant", "mean": 20_000}});
    let r = run(&scenario(topo, vec![flow], json!({"duration": 2 * S})), 9);
    assert_eq!(r.udp.pkts_delivered[0], 50_000);
    assert_eq!(r.udp.pkts_out_of_order[0], 0);
}

/// The same seed gives the same run; another seed other draws; and the variation
/// changes the run.
#[test]
fn draws_come_from_the_link_substream() {
    let j = json!({"dist": "exponential", "mean": 30_000});
    let sc = two_flows(MS, Some(j));
    let (a, b, c) = (run(&sc, 2), run(&sc, 2), run(&sc, 3));
    assert_eq!(a.meta.digest, b.meta.digest);
    assert_ne!(a.meta.digest, c.meta.digest);
    assert_ne!(a.meta.digest, run(&two_flows(MS, None), 2).meta.digest);
}

#[test]
fn a_bad_distribution_is_refused_naming_the_link() {
    let sc = two_flows(MS, Some(json!({"dist": "uniform", "low": 100, "high": 50})));
    let err = Simulation::new(&sc, 1).err().expect("refused");
    assert!(err.contains("link 'access_s0' jitter.high = 50 ns is below jitter.low = 100 ns"), "{err}");
}
