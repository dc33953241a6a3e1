//! The two opt-in series that follow packets (`metrics::recorder`): the per-packet
//! event trace (`record.packets`) against hand-worked vectors and the queue table's
//! drop counts, and per-flow goodput at an interval (`record.throughput_interval`)
//! against the link's goodput ceiling and the flows table's byte counts. Recording
//! must not change the run.

mod common;
use common::*;
use serde_json::{json, Value};
use tcplab_core::metrics::{PacketSeries, RunResult};

/// Nodes a and b joined by link `ab` (a -> b, index 0) and `ba` (b -> a, index 1),
/// each `rate` bit/s with a 10 ms propagation delay, drop-tail of `limit` packets.
fn pair(rate: u64, limit: u32) -> Value {
    let q = json!({"kind": "drop_tail", "limit": {"packets": limit}});
    json!({"kind": "graph", "nodes": ["a", "b"], "links": [
        {"name": "ab", "from": "a", "to": "b", "rate": rate, "delay": 10 * MS, "queue": q},
        {"name": "ba", "from": "b", "to": "a", "rate": rate, "delay": 10 * MS, "queue": q}]})
}

/// The trace as (t_ns, event, link, direction, seq, ack, bytes, payload, cause) rows.
type Row = (u64, &'static str, Option<u32>, &'static str, u64, Option<u64>, u32, u32, Option<&'static str>);

fn rows(p: &PacketSeries) -> Vec<Row> {
    (0..p.t_ns.len())
        .map(|i| (p.t_ns[i], p.event[i], p.link[i], p.direction[i], p.seq[i], p.ack[i], p.bytes[i], p.payload_bytes[i], p.cause[i]))
        .collect()
}

/// A 4344-byte transfer (three segments) over a 10 Mbit/s, 10 ms link, `linux`
/// profile with timestamps and quick-ACK mode off: MSS 1460, 40 header bytes, IW10 (all three segments leave at once), an ACK
/// for every second segment, the FIN on the last segment and answered at once.
/// Serialization at 10 Mbit/s: 40 B = 32 us, 1500 B = 1.2 ms, 1464 B = 1.1712 ms.
///
/// - 0: SYN (40 B) enqueued and sent on ab; it reaches b at 0.032 + 10 = 10.032 ms.
/// - 10.032: SYN-ACK on ba; it reaches a at 10.032 + 0.032 + 10 = 20.064 ms (ack 1).
/// - 20.064: three segments queued at once (seq 1, 1461, 2921; the last 1424 B of
///   payload + FIN); they start serializing back to back at 20.064, 21.264, 22.464.
/// - Received at start + serialization + 10 ms: 31.264, 32.464, 33.6352 ms.
/// - 32.464: the second segment makes the receiver ACK 2921; 33.6352: the FIN makes
///   it ACK 4346 (4344 bytes + SYN + FIN) at once. Each reaches a 10.032 ms later.
#[test]
fn three_segment_transfer_gives_the_hand_worked_trace() {
    let mut sc = scenario(pair(10_000_000, 100), vec![tcp_flow("a", "b", Some(4344), json!({"profile": "linux",
        "mss": 1460, "header_bytes": 40, "timestamps": false, "quickack": false}))],
                          json!({"duration": 200 * MS}));
    sc.record.packets = vec!["flow0".into()];
    let r = run(&sc, 1);
    let us = 1_000u64;
    let (ab, ba) = (Some(0), Some(1));
    let expected: Vec<Row> = vec![
        (0, "enqueue", ab, "data", 0, None, 40, 0, None),
        (0, "transmit", ab, "data", 0, None, 40, 0, None),
        (10_032 * us, "receive", None, "data", 0, None, 40, 0, None),
        (10_032 * us, "enqueue", ba, "ack", 0, Some(1), 40, 0, None),
        (10_032 * us, "transmit", ba, "ack", 0, Some(1), 40, 0, None),
        (20_064 * us, "ack", None, "ack", 0, Some(1), 40, 0, None),
        (20_064 * us, "enqueue", ab, "data", 1, None, 1500, 1460, None),
        (20_064 * us, "transmit", ab, "data", 1, None, 1500, 1460, None),
        (20_064 * us, "enqueue", ab, "data", 1461, None, 1500, 1460, None),
        (20_064 * us, "enqueue", ab, "data", 2921, None, 1464, 1424, None),
        (21_264 * us, "transmit", ab, "data", 1461, None, 1500, 1460, None),
        (22_464 * us, "transmit", ab, "data", 2921, None, 1464, 1424, None),
        (31_264 * us, "receive", None, "data", 1, None, 1500, 1460, None),
        (32_464 * us, "receive", None, "data", 1461, None, 1500, 1460, None),
        (32_464 * us, "enqueue", ba, "ack", 0, Some(2921), 40, 0, None),
        (32_464 * us, "transmit", ba, "ack", 0, Some(2921), 40, 0, None),
        (33_635_200, "receive", None, "data", 2921, None, 1464, 1424, None),
        (33_635_200, "enqueue", ba, "ack", 0, Some(4346), 40, 0, None),
        (33_635_200, "transmit", ba, "ack", 0, Some(4346), 40, 0, None),
        (42_496 * us, "ack", None, "ack", 0, Some(2921), 40, 0, None),
        (43_667_200, "ack", None, "ack", 0, Some(4346), 40, 0, None),
    ];
    assert_eq!(rows(&r.series.packets), expected);
    assert!(r.series.packets.flow_id.iter().all(|&f| f == 0));
    assert_eq!(r.meta.link_names, vec!["ab", "ba"]);
}

/// Six 1000-byte UDP datagrams 1 ms apart into a 1 Mbit/s link (8 ms each) whose
/// drop-tail holds 3 waiting packets: datagram 0 starts at once, 1-3 wait, 4 and 5
/// find the queue full (drops at 4 and 5 ms); the link sends 1, 2, 3 at 8, 16, 24 ms
/// and each arrives 8 + 10 ms after it started.
#[test]
fn drop_tail_overflow_gives_drop_rows_by_hand() {
    let udp = json!({"kind": "udp", "name": "u", "src": "a", "dst": "b", "packet_bytes": 1000, "stop": 5_500_000,
                     "interval": {"dist": "constant", "mean": MS}});
    let mut sc = scenario(pair(1_000_000, 3), vec![udp], json!({"duration": 100 * MS}));
    sc.record.packets = vec!["*".into()];
    let r = run(&sc, 1);
    let p = &r.series.packets;
    let of = |ev: &str| -> Vec<(u64, u64)> {
        (0..p.t_ns.len()).filter(|&i| p.event[i] == ev).map(|i| (p.t_ns[i] / MS, p.seq[i])).collect()
    };
    assert_eq!(of("enqueue"), vec![(0, 0), (1, 1), (2, 2), (3, 3)]);
    assert_eq!(of("drop"), vec![(4, 4), (5, 5)]);
    assert_eq!(of("transmit"), vec![(0, 0), (8, 1), (16, 2), (24, 3)]);
    assert_eq!(of("receive"), vec![(18, 0), (26, 1), (34, 2), (42, 3)]);
    let drops: Vec<_> = (0..p.t_ns.len()).filter(|&i| p.event[i] == "drop").collect();
    assert!(drops.iter().all(|&i| p.cause[i] == Some("overflow") && p.link[i] == Some(0)));
    assert_eq!(r.queues.drops_overflow[0], 2);
}

/// Drop rows per link and cause equal the `queues` table's counters (the run has no
/// warm-up, so they cover the same span) and `meta.drops`.
fn assert_drops_match(r: &RunResult) {
    let p = &r.series.packets;
    for (l, name) in r.queues.link.iter().enumerate() {
        for (cause, counted) in [
            ("overflow", r.queues.drops_overflow[l]),
            ("early", r.queues.drops_early[l]),
            ("forced", r.queues.drops_forced[l]),
            ("corruption", r.queues.drops_corruption[l]),
        ] {
            let traced = (0..p.t_ns.len())
                .filter(|&i| p.event[i] == "drop" && p.link[i] == Some(l as u32) && p.cause[i] == Some(cause))
                .count() as u64;
            assert_eq!(traced, counted, "link {name}, cause {cause}");
        }
    }
    assert_eq!(p.event.iter().filter(|e| **e == "drop").count() as u64, r.meta.drops);
}

/// Two bulk TCP flows overflow a 10-packet drop-tail bottleneck many times; with
/// Bernoulli loss on it too, corruption drops appear as well.
#[test]
fn tcp_drops_in_the_trace_match_the_queue_table() {
    let mut topo = dumbbell(2, 10_000_000, 10, 10, 1);
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 0.002});
    let flows = (0..2).map(|i| tcp_flow(&format!("s{i}"), &format!("d{i}"), None, json!({"profile": "linux"}))).collect();
    let mut sc = scenario(topo, flows, json!({"duration": 5 * S}));
    sc.record.packets = vec!["*".into()];
    let r = run(&sc, 7);
    let b = r.queues.link.iter().position(|l| l == "bottleneck").unwrap();
    assert!(r.queues.drops_overflow[b] > 20 && r.queues.drops_corruption[b] > 5, "{:?}", r.queues);
    assert_drops_match(&r);
    // Every transmitted data packet of a link was enqueued there first.
    let p = &r.series.packets;
    let count = |ev: &str| p.event.iter().filter(|e| **e == ev).count();
    assert!(count("transmit") <= count("enqueue"));
    // RED drops early, and the drop rows still match.
    let mut sc = sc.clone();
    let mut topo = dumbbell(2, 10_000_000, 10, 60, 1);
    topo["bottleneck"]["queue"] = json!({"kind": "red", "limit": {"packets": 60}, "q_weight": 0.002, "min_th": 5.0,
        "max_th": 20.0, "max_p": 0.1, "gentle": false, "wait": false, "mean_pktsize": 1500});
    sc.topology = serde_json::from_value(topo).unwrap();
    let r = run(&sc, 7);
    assert!(r.queues.drops_early[b] > 0);
    assert_drops_match(&r);
}

/// On a layered bottleneck (DAMA, SLACP with its ARQ) a data frame's transmission is
/// its IP packet's `transmit` row; frames that carry no IP packet (ACKs, redundancy)
/// belong to no flow. The queue's drops still match the trace.
#[test]
fn layered_links_trace_ip_packets() {
    let mut topo = dumbbell(1, 2_000_000, 10, 20, 1);
    topo["bottleneck"]["mac"] = json!({"kind": "dama", "mode": "cra"});
    topo["bottleneck"]["link_layer"] = json!({"kind": "slacp", "mac_buffer": 150_000});
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 0.01});
    let mut sc = scenario(topo, vec![tcp_flow("s0", "d0", Some(300_000), json!({"profile": "linux"}))],
                          json!({"duration": 10 * S}));
    sc.record.packets = vec!["*".into()];
    let r = run(&sc, 3);
    let p = &r.series.packets;
    let b = r.meta.link_names.iter().position(|l| l == "bottleneck").unwrap() as u32;
    let on_b = |ev: &str| (0..p.t_ns.len()).filter(|&i| p.event[i] == ev && p.link[i] == Some(b)).count();
    // Every packet offered to the link layer was sent at least once (ARQ resends some).
    assert!(on_b("enqueue") > 200 && on_b("transmit") >= on_b("enqueue"), "{} {}", on_b("enqueue"), on_b("transmit"));
    assert!(p.flow_id.iter().all(|&f| f == 0));
    assert_drops_match(&r);
    assert_eq!(r.flows.completed_s[0].is_some(), true);
}

/// A bulk flow on a 10 Mbit/s dumbbell whose receive window (64 kB) keeps the
/// bottleneck busy without ever filling its 100-packet queue: after slow start the
/// link carries 1500-byte packets of 1460 payload bytes back to back, so goodput is
/// 10e6 x 1460 / 1500 = 9.7333 Mbit/s. A 100 ms interval holds 83.3 packet times,
/// so it delivers 83 or 84 segments: each interval lies within one segment's worth
/// (1460 B x 8 / 0.1 s = 116.8 kbit/s) of the ceiling.
#[test]
fn bulk_goodput_saturates_at_the_links_goodput() {
    // 1500-byte packets of 1460 payload bytes: timestamps off.
    let tcp = json!({"profile": "linux", "rcv_buffer": 65_536, "mss": 1460, "header_bytes": 40, "timestamps": false});
    let mut sc = scenario(dumbbell(1, 10_000_000, 10, 100, 1), vec![tcp_flow("s0", "d0", None, tcp)],
                          json!({"duration": 10 * S}));
    sc.record.throughput_interval = Some(tcplab_core::time::SimDuration(100 * MS));
    let r = run(&sc, 1);
    let t = &r.series.throughput;
    assert_eq!(t.t_s.len(), 100, "one row per interval of the 10 s run");
    assert_eq!(r.queues.drops_overflow.iter().sum::<u64>(), 0, "the window keeps the queue from overflowing");
    let ceiling = 10e6 * 1460.0 / 1500.0;
    for i in 1..t.t_s.len() {
        assert!((t.t_s[i] - (i + 1) as f64 * 0.1).abs() < 1e-9 && t.interval_s[i] == 0.1);
        assert!((t.goodput_bps[i] - ceiling).abs() <= 1460.0 * 8.0 / 0.1 + 1e-6, "interval {i}: {}", t.goodput_bps[i]);
        assert_eq!(t.bytes[i] % 1460, 0);
    }
    assert_eq!(t.bytes.iter().sum::<u64>(), r.flows.bytes_delivered[0]);
    // The first interval: nothing is delivered before the handshake (one RTT, 2 x 11
    // ms) and the first segment's trip (11 ms + 1.2 ms), so at most 65.8% of it can
    // run at the ceiling; IW10 doubling each RTT covers the 20-packet BDP well within it.
    assert!(t.goodput_bps[0] > 0.0 && t.goodput_bps[0] <= 0.658 * ceiling, "{}", t.goodput_bps[0]);
}

/// The bins of every flow sum to its bytes delivered, exactly: finite flows that
/// complete (rows end with the completion's interval), a bulk flow, UDP (whole
/// datagrams), losses and reordering included; a 70 ms interval that does not divide
/// the 3 s run leaves a shorter last interval, ending with the run.
#[test]
fn goodput_bins_sum_to_bytes_delivered() {
    let mut topo = dumbbell(3, 5_000_000, 25, 30, 2);
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 0.01});
    let udp = json!({"kind": "udp", "src": "s2", "dst": "d2", "packet_bytes": 186, "start": 100 * MS,
                     "interval": {"dist": "constant", "mean": 20 * MS}});
    let flows = vec![
        tcp_flow("s0", "d0", Some(200_000), json!({"profile": "linux"})),
        tcp_flow("s1", "d1", None, json!({"profile": "reference"})),
        udp,
    ];
    let mut sc = scenario(topo, flows, json!({"duration": 3 * S}));
    sc.record.throughput_interval = Some(tcplab_core::time::SimDuration(70 * MS));
    let r = run(&sc, 5);
    let t = &r.series.throughput;
    let sum = |f: u32| (0..t.t_s.len()).filter(|&i| t.flow_id[i] == f).map(|i| t.bytes[i]).sum::<u64>();
    assert_eq!(sum(0), r.flows.bytes_delivered[0]);
    assert_eq!(sum(1), r.flows.bytes_delivered[1]);
    assert_eq!(sum(2), r.udp.pkts_delivered[0] * 186);
    // Flow 0 completes: its rows stop with the interval holding the completion.
    let done = r.flows.completed_s[0].expect("the 200 kB flow completes");
    let last0 = (0..t.t_s.len()).filter(|&i| t.flow_id[i] == 0).map(|i| t.t_s[i]).fold(0.0, f64::max);
    assert!(last0 >= done && last0 - 0.07 < done, "{last0} {done}");
    // UDP starts at 100 ms: its first interval is (70, 140] ms.
    let first2 = (0..t.t_s.len()).find(|&i| t.flow_id[i] == 2).unwrap();
    assert!((t.t_s[first2] - 0.14).abs() < 1e-12);
    // 3 s = 42 intervals of 70 ms + 60 ms.
    let n1 = (0..t.t_s.len()).filter(|&i| t.flow_id[i] == 1).count();
    assert_eq!(n1, 43);
    let last = t.t_s.len() - 1;
    assert_eq!((t.t_s[last], (t.interval_s[last] * 1e9).round()), (3.0, 60e6));
    // Rows are in time order.
    assert!(t.t_s.windows(2).all(|w| w[0] <= w[1]));
}

/// Recording either series leaves the run as it was: the same trace digest, event
/// count and summaries as without, with RED, Bernoulli loss, UDP and three profiles.
#[test]
fn recording_does_not_change_the_run() {
    let mut topo = dumbbell(3, 5_000_000, 25, 30, 2);
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 0.01});
    topo["bottleneck"]["queue"] = json!({"kind": "red", "limit": {"packets": 60}, "q_weight": 0.002, "min_th": 5.0,
        "max_th": 20.0, "max_p": 0.1, "gentle": false, "wait": false, "mean_pktsize": 1500});
    let flows = vec![
        tcp_flow("s0", "d0", Some(500_000), json!({"profile": "ns2-sack"})),
        tcp_flow("s1", "d1", Some(300_000), json!({"profile": "reference"})),
        tcp_flow("s2", "d2", None, json!({"profile": "linux"})),
        json!({"kind": "udp", "src": "s2", "dst": "d2", "packet_bytes": 186, "stop": 5 * S,
               "interval": {"dist": "normal", "mean": 20 * MS, "sigma": MS}}),
    ];
    let sc = scenario(topo, flows, json!({"duration": 6 * S}));
    let off = run(&sc, 42);
    let mut on = sc.clone();
    on.record.packets = vec!["*".into()];
    on.record.throughput_interval = Some(tcplab_core::time::SimDuration(100 * MS));
    let on = run(&on, 42);
    assert_eq!((&off.meta.digest, off.meta.events), (&on.meta.digest, on.meta.events));
    assert_eq!(off.flows.bytes_delivered, on.flows.bytes_delivered);
    assert!(off.series.packets.t_ns.is_empty() && off.series.throughput.t_s.is_empty());
    assert!(on.series.packets.t_ns.len() > 10_000);
    assert_drops_match(&on);
}

/// Unknown flow names and a zero interval are refused before anything runs, together.
#[test]
fn bad_record_fields_are_refused() {
    let mut sc = scenario(pair(10_000_000, 100), vec![tcp_flow("a", "b", Some(4344), json!({}))], json!({}));
    sc.record.packets = vec!["flow0".into(), "nope".into()];
    sc.record.throughput_interval = Some(tcplab_core::time::SimDuration(0));
    let problems = tcplab_core::sim::Simulation::problems(&sc, 1);
    assert_eq!(
        problems,
        vec![
            "record.throughput_interval must be positive".to_string(),
            "record.packets: unknown flow 'nope'; accepted: \"*\" or the name of a tcp or udp flow".to_string(),
        ]
    );
}
