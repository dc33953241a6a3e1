//! Scale (docs/validation.md, "Scaling with flows"): set-up linear in the topology, and per-flow state that nothing
//! sizes by a window bound.

mod common;
use common::*;
use serde_json::json;
use std::time::Instant;
use tcplab_core::net::routing::Routes;
use tcplab_core::net::topology;
use tcplab_core::scenario::Topology;

/// A 100,000-pair dumbbell (200,002 nodes, 400,002 links) and the routes of its
/// 100,000 flows in both directions. The work is bounded exactly: the 200,000 hosts
/// are stubs, routed through their router, so the two routers form the whole core and
/// there are two trees of two entries, whatever the number of pairs (the dense table
/// this replaced held 200,002² = 4e10 entries). The wall-time bound, 10 s, is >10x
/// what it takes on the shared 2-core machine of docs/validation.md (0.3-0.7 s, ci profile),
/// so it only catches a return to super-linear set-up: the all-pairs table needed
/// more than 300 s for 20,000 pairs.
#[test]
fn routes_of_a_100000_pair_dumbbell_are_linear() {
    let pairs = 100_000u32;
    let t0 = Instant::now();
    let topo: Topology = serde_json::from_value(dumbbell(pairs, 10_000_000_000, 20, 36_667, 1)).unwrap();
    let g = topology::expand(&topo).unwrap();
    let mut routes = Routes::new(&g);
    for i in 0..pairs {
        let (s, d) = (g.node_index(&format!("s{i}")).unwrap(), g.node_index(&format!("d{i}")).unwrap());
        routes.prepare(d);
        routes.prepare(s);
        assert!(routes.reachable(s, d, &g.ends) && routes.reachable(d, s, &g.ends));
    }
    let secs = t0.elapsed().as_secs_f64();
    eprintln!("100,000-pair dumbbell: expand + routes + 200,000 path checks in {secs:.3} s");
    assert_eq!((g.nodes.len(), g.links.len()), (200_002, 400_002));
    assert_eq!(routes.stub_and_core_counts(), (200_000, 2));
    assert_eq!(routes.tree_entries(), 4);
    assert!(secs < 10.0, "set-up took {secs} s");
}

/// Links hold nothing on the heap before their first packet: a 1,000-pair dumbbell's
/// 4,002 links are their records alone. (Each link used to reserve a 64-entry AQM drop
/// list, 1,280 B: 512 MB over a 100,000-pair dumbbell's 400,002 links.)
#[test]
fn idle_links_hold_no_buffers() {
    let flows: Vec<_> = (0..1000).map(|i| tcp_flow(&format!("s{i}"), &format!("d{i}"), None, json!({}))).collect();
    let sim = tcplab_core::sim::Simulation::new(&scenario(dumbbell(1000, 1_000_000_000, 10, 100, 1), flows, json!({})), 1).unwrap();
    let per_link = sim.link_state_bytes() as f64 / 4002.0;
    let record = std::mem::size_of::<tcplab_core::net::link::Link>() as f64;
    eprintln!("bytes per idle link: {per_link} (record {record})");
    assert_eq!(per_link, record);
}

/// Idle flows hold the same state whatever their receive buffer (nothing is sized
/// by it), and little of it. Running, the state grows with what each flow had
/// outstanding: with a 1 GB receive buffer over a ~1 Mbit/s share, a flow holds a
/// few kB (records of the segments outstanding at its peak, slow start's overshoot),
/// not the 1 GB / 1460 B = 735,000 segment records a window-sized board would.
#[test]
fn per_flow_state_does_not_scale_with_the_receive_buffer() {
    let build = |rcv_buffer: u64, secs: u64| {
        let flows: Vec<_> = (0..50)
            .map(|i| tcp_flow(&format!("s{i}"), &format!("d{i}"), None, json!({"profile": "linux", "rcv_buffer": rcv_buffer})))
            .collect();
        scenario(dumbbell(50, 50_000_000, 10, 100, 1), flows, json!({"duration": secs * S}))
    };
    let idle = |rcv| tcplab_core::sim::Simulation::new(&build(rcv, 5), 1).unwrap().flow_state_bytes() / 50;
    let (small, huge) = (idle(65_536), idle(1 << 30));
    eprintln!("idle bytes per flow: {small} (64 kB buffer), {huge} (1 GB buffer)");
    assert_eq!(small, huge);
    assert!(small < 2048, "an idle TCP flow holds {small} bytes");
    let active = |rcv| run(&build(rcv, 5), 1).meta.flow_state_bytes / 50;
    let (small, huge) = (active(65_536), active(1 << 30));
    eprintln!("bytes per flow after 5 s: {small} (64 kB buffer), {huge} (1 GB buffer)");
    // 50 flows share 50 Mbit/s over a 22 ms RTT: ~1 Mbit/s each, a few segments in
    // flight in steady state. A segment costs 24 B on the scoreboard and 56 B in the
    // rate sampler, so 32 kB would be ~350 segments outstanding at once.
    assert!(small < 32_768 && huge < 32_768, "{small} and {huge} bytes per flow");
}
