//! SLACP in whole simulations: exactly-once in-order delivery under Bernoulli and Markov
//! loss (with and without FEC, with and without DAMA), the residual loss of partial
//! reliability against p^(N+1), logical channels, and refused configurations.

mod common;
use common::*;
use serde_json::{json, Value};
use tcplab_core::metrics::RunResult;

/// st -> gw "return" link with the given parameters; gw -> st "forward" link.
fn link_pair(rate: u64, delay_ms: u64, ret_extra: Value) -> Value {
    let mut ret = json!({"name": "return", "from": "st", "to": "gw", "rate": rate, "delay": delay_ms * MS,
                         "queue": {"kind": "drop_tail", "limit": {"bytes": 10_000_000u64}}});
    for (k, v) in ret_extra.as_object().unwrap() {
        ret[k] = v.clone();
    }
    json!({"kind": "graph", "nodes": ["st", "gw"], "links": [
        ret,
        {"name": "forward", "from": "gw", "to": "st", "rate": 4 * rate, "delay": delay_ms * MS},
    ]})
}

fn udp(name: &str, stop: u64, size: u32, gap: u64) -> Value {
    json!({"kind": "udp", "name": name, "src": "st", "dst": "gw", "packet_bytes": size, "stop": stop,
           "interval": {"dist": "constant", "mean": gap}})
}

fn slacp(persistence: u32, fec: bool) -> Value {
    json!({"kind": "slacp", "persistence": persistence,
           "channels": [{"name": "data", "arq": true, "fec": fec}]})
}

fn ret(r: &RunResult) -> usize {
    r.links.link.iter().position(|l| l == "return").unwrap()
}

#[test]
fn everything_reaches_ip_once_and_in_order() {
    // 1000 UDP packets of 1000 B every 100 ms over the 128 kbit/s GEO return link with
    // SLACP and a persistence of 1000 rounds, under 20% Bernoulli frame loss, a bursty
    // per-packet Markov channel (mean burst 3.3 frames, 13% of frames lost) and seed
    // 004's VHigh time series; FEC on and off; without a MAC and under VBDC. Every
    // packet must reach IP exactly once and in order (delivered == sent, no delivery at
    // or below an earlier sequence number), and nothing is given up.
    let errors = [
        json!({"kind": "bernoulli", "per": 0.2}),
        json!({"kind": "markov", "form": "per_packet", "p_gb": 0.05, "p_bg": 0.3}),
        json!({"kind": "markov", "form": "preset", "name": "vhigh"}),
    ];
    for (e, error) in errors.iter().enumerate() {
        for fec in [false, true] {
            for mac in [Value::Null, json!({"kind": "dama", "mode": "vbdc"})] {
                let mut extra = json!({"error": error, "link_layer": slacp(1000, fec)});
                if !mac.is_null() {
                    extra["mac"] = mac.clone();
                }
                let sc = scenario(link_pair(128_000, 250, extra), vec![udp("u", 100 * S, 1000, 100 * MS)],
                                  json!({"duration": 400 * S}));
                let r = run(&sc, 3 + e as u64);
                let i = ret(&r);
                let what = format!("error {e}, fec {fec}, mac {mac}");
                eprintln!("{what}: sent {} delivered {} out of order {} | frames {} retx {} fec {} corrupted {} recovered {} given up {}",
                          r.udp.pkts_sent[0], r.udp.pkts_delivered[0], r.udp.pkts_out_of_order[0],
                          r.links.ll_frames_sent[i].unwrap(), r.links.ll_frames_retransmitted[i].unwrap(),
                          r.links.ll_fec_frames_sent[i].unwrap(), r.links.ll_frames_corrupted[i].unwrap(),
                          r.links.ll_frames_recovered[i].unwrap(), r.links.ll_frames_given_up[i].unwrap());
                assert_eq!(r.udp.pkts_sent[0], 1000, "{what}");
                assert_eq!(r.udp.pkts_delivered[0], 1000, "{what}");
                assert_eq!(r.udp.pkts_out_of_order[0], 0, "{what}");
                assert_eq!(r.links.ll_frames_given_up[i], Some(0), "{what}");
                // Bernoulli: ~250 losses; per-packet Markov ~130 (with retransmissions);
                // VHigh: 3.85% of time bad, ~38.
                assert!(r.links.ll_frames_corrupted[i].unwrap() > 20, "{what}: the channel lost frames");
                assert_eq!(r.links.ll_frames_sent[i], Some(1000), "{what}");
                assert_eq!(r.links.ll_fec_frames_sent[i].unwrap() > 0, fec, "{what}");
                assert_eq!(r.queues.drops_corruption[i], 0, "{what}: no IP packet lost");
            }
        }
    }
}

#[test]
fn residual_loss_matches_p_to_the_n_plus_one() {
    // Independent frame loss p = 0.2, FEC off, persistence N: a frame is given up when its
    // original and its N retransmissions are all lost, probability p^(N+1) = 0.2, 0.04,
    // 0.008 for N = 0, 1, 2. 100 000 frames (200 B every 0.2 ms on a 20 Mbit/s link)
    // give standard errors sqrt(q(1-q)/1e5) = 0.00126, 0.00062, 0.00028; the tolerance
    // is 5 of them.
    for (n, want) in [(0u32, 0.2), (1, 0.04), (2, 0.008)] {
        let extra = json!({"error": {"kind": "bernoulli", "per": 0.2}, "link_layer": slacp(n, false)});
        let sc = scenario(link_pair(20_000_000, 5, extra), vec![udp("u", 20 * S, 200, 200_000)],
                          json!({"duration": 21 * S}));
        let r = run(&sc, 11 + n as u64);
        let i = ret(&r);
        let sent = r.links.ll_frames_sent[i].unwrap() as f64;
        let given_up = r.links.ll_frames_given_up[i].unwrap() as f64;
        let q = given_up / sent;
        let sd = (want * (1.0 - want) / sent).sqrt();
        eprintln!("N = {n}: given up {given_up} of {sent} frames = {q:.5} (p^(N+1) = {want}, sd {sd:.5})");
        assert!(sent >= 99_000.0);
        assert!((q - want).abs() < 5.0 * sd, "N = {n}: {q} vs {want}");
        assert!((r.links.ll_residual_loss[i].unwrap() - q).abs() < 1e-12);
        // The given-up packets are the IP losses: UDP counts them, the link records them.
        assert_eq!(r.udp.pkts_sent[0] - r.udp.pkts_delivered[0], given_up as u64);
        assert_eq!(r.queues.drops_corruption[i], given_up as u64);
        assert_eq!(r.udp.pkts_out_of_order[0], 0);
    }
}

#[test]
fn tcp_over_vbdc_with_slacp_under_huge_losses_completes() {
    // 1 MB of enhanced TCP over the seed's return link: VBDC, SLACP (persistence 3,
    // FEC), 14.4 kB MAC buffer and 14.4 kB IP queue, the Huge time series.
    let extra = json!({"error": {"kind": "markov", "form": "preset", "name": "huge"},
                       "queue": {"kind": "drop_tail", "limit": {"bytes": 14_400}},
                       "mac": {"kind": "dama", "mode": "vbdc"},
                       "link_layer": {"kind": "slacp"}});
    let flows = vec![json!({"kind": "tcp", "src": "st", "dst": "gw", "bytes": 1_000_000,
                             "tcp": {"profile": "enhanced", "mss": 1410}})];
    let r = run(&scenario(link_pair(128_000, 250, extra), flows, json!({})), 5);
    let i = ret(&r);
    eprintln!("elapsed {:?} s, TCP retransmits {}, RTOs {}; frames {} retx {} fec {} blocks {} recovered {} given up {} corrupted {} acks {}",
              r.flows.elapsed_s[0], r.flows.retransmits[0], r.flows.rtos[0], r.links.ll_frames_sent[i].unwrap(),
              r.links.ll_frames_retransmitted[i].unwrap(), r.links.ll_fec_frames_sent[i].unwrap(),
              r.links.ll_fec_blocks[i].unwrap(), r.links.ll_fec_blocks_recovered[i].unwrap(),
              r.links.ll_frames_given_up[i].unwrap(), r.links.ll_frames_corrupted[i].unwrap(),
              r.links.ll_acks_sent[i].unwrap());
    assert_eq!(r.flows.bytes_delivered[0], 1_000_000);
    assert!(r.flows.elapsed_s[0].unwrap() > 1_000_000.0 * 8.0 / 128_000.0);
    assert!(r.links.ll_frames_retransmitted[i].unwrap() > 0);
    assert_eq!(r.links.ll.get(i).copied().flatten(), Some("slacp"));
    // Every TCP segment (and the SYN, which segs_sent leaves out) that got past the IP
    // queue became one original frame.
    let segments = r.flows.segs_sent[0] + 1 + r.flows.syn_retransmits[0];
    assert_eq!(r.links.ll_frames_sent[i].unwrap(), segments - r.queues.drops_overflow[i]);
}

#[test]
fn channels_keep_their_own_arq_and_order() {
    // A 186 B voice stream (every 20 ms) on a channel without ARQ, served first, and a
    // bulk TCP transfer on the ARQ+FEC channel, over a 5% Bernoulli link. Voice frames are
    // never retransmitted: about 5% of them are lost for good, and the rest arrive in
    // order; TCP's frames are repaired by ARQ (nothing given up at persistence 10).
    let extra = json!({"error": {"kind": "bernoulli", "per": 0.05},
                       "link_layer": {"kind": "slacp", "persistence": 10, "channels": [
                           {"name": "bulk", "priority": 1},
                           {"name": "voice", "priority": 0, "arq": false, "fec": false}],
                           "map": {"voice": "voice"}}});
    let flows = vec![
        json!({"kind": "tcp", "name": "bulk", "src": "st", "dst": "gw", "bytes": 300_000,
               "tcp": {"profile": "enhanced", "mss": 1410}}),
        udp("voice", 30 * S, 186, 20 * MS),
    ];
    let r = run(&scenario(link_pair(128_000, 250, extra), flows, json!({"duration": 60 * S})), 2);
    let i = ret(&r);
    let (sent, got) = (r.udp.pkts_sent[0] as f64, r.udp.pkts_delivered[0] as f64);
    let lost = 1.0 - got / sent;
    eprintln!("voice: {sent} sent, lost {lost:.4}; bulk elapsed {:?}", r.flows.elapsed_s[0]);
    // 1500 voice packets: sd of the loss fraction sqrt(0.05 * 0.95 / 1500) = 0.0056; 5 sd.
    assert!((lost - 0.05).abs() < 0.028, "{lost}");
    assert_eq!(r.udp.pkts_out_of_order[0], 0);
    assert_eq!(r.links.ll_frames_given_up[i], Some(0));
    assert_eq!(r.flows.bytes_delivered[0], 300_000);
    assert_eq!(r.queues.drops_corruption[i], (sent - got) as u64);
}

#[test]
fn impossible_link_layer_configurations_are_refused() {
    let one_way = json!({"kind": "graph", "nodes": ["st", "gw"], "links": [
        {"name": "return", "from": "st", "to": "gw", "rate": 128_000, "delay": 250 * MS, "link_layer": {"kind": "slacp"}}]});
    let err = |topo: Value, flows: Vec<Value>| tcplab_core::sim::run(&scenario(topo, flows, json!({})), 1).err().unwrap();
    let e = err(one_way, vec![udp("u", S, 100, MS)]);
    assert!(e.contains("link 'return' link_layer: no reverse link from 'gw' to 'st' to carry its ACKs"), "{e}");
    let mapped = link_pair(128_000, 250, json!({"link_layer": {"kind": "slacp", "map": {"vioce": "default"}}}));
    let e = err(mapped, vec![udp("voice", S, 100, MS)]);
    assert!(e.contains("link_layer.map: unknown flow 'vioce'; flows: voice"), "{e}");
    let small = link_pair(128_000, 250, json!({"link_layer": {"kind": "slacp", "mac_buffer": 1000}}));
    let e = err(small, vec![json!({"kind": "tcp", "src": "st", "dst": "gw", "bytes": 1000, "tcp": {"mss": 1410, "header_bytes": 40}})]);
    assert!(e.contains("link_layer.mac_buffer (1000 B) cannot hold the largest frame (1454 B"), "{e}");
    let nofec = link_pair(128_000, 250, json!({"link_layer": {"kind": "slacp", "channels": [{"name": "x", "arq": false}]}}));
    let e = err(nofec, vec![udp("u", S, 100, MS)]);
    assert!(e.contains("fec = true needs arq = true"), "{e}");
}
