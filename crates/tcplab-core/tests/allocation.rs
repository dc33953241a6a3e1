//! The hot path allocates nothing per packet: once pools and buffers have grown to
//! their peak, a longer run makes (almost) no more allocations. A counting global
//! allocator measures the allocations of a 10 s and a 40 s run of the same bulk
//! transfer; the extra 30 s move ~250,000 more packets, and the difference in
//! allocations must stay below 1 per 1000 packets (growth of a few Vecs to new
//! high-water marks is allowed; anything per packet would show 250,000+). The same
//! holds for a layered bottleneck (DAMA, SLACP with FEC, 1% frame loss): frames, link
//! ACKs, FEC blocks and timers reuse pooled storage.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

mod common;
use common::*;
use serde_json::json;

fn allocations(secs: u64, layered: bool) -> (u64, u64) {
    let flows: Vec<_> = (0..4).map(|i| tcp_flow(&format!("s{i}"), &format!("d{i}"), None, json!({"profile": "linux"}))).collect();
    let mut topo = dumbbell(4, 100_000_000, 10, 200, 1);
    if layered {
        // A DAMA MAC, SLACP (ARQ + FEC) and 1% frame loss on the bottleneck: frames,
        // link ACKs, FEC blocks and superframe boundaries all run.
        topo["bottleneck"]["mac"] = json!({"kind": "dama", "mode": "cra"});
        topo["bottleneck"]["link_layer"] = json!({"kind": "slacp", "mac_buffer": 150_000});
        topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": 0.01});
    }
    let sc = scenario(topo, flows, json!({"duration": secs * S}));
    let sim = tcplab_core::sim::Simulation::new(&sc, 1).unwrap();
    let before = ALLOCS.load(Ordering::Relaxed);
    let r = sim.run();
    let used = ALLOCS.load(Ordering::Relaxed) - before;
    (used, r.meta.bottleneck_pkts)
}

/// Both cases in one test: the allocation counter is process-wide, so they must not run
/// in parallel.
#[test]
fn no_allocation_per_packet() {
    plain();
    with_dama_and_slacp();
}

fn plain() {
    let (a10, p10) = allocations(10, false);
    let (a40, p40) = allocations(40, false);
    let extra_pkts = p40 - p10;
    let extra_allocs = a40.saturating_sub(a10);
    eprintln!("10 s: {a10} allocations / {p10} pkts; 40 s: {a40} / {p40}; extra {extra_allocs} for {extra_pkts} pkts");
    assert!(extra_pkts > 200_000);
    assert!(extra_allocs * 1000 < extra_pkts, "{extra_allocs} allocations for {extra_pkts} extra packets");
}

fn with_dama_and_slacp() {
    let (a10, p10) = allocations(10, true);
    let (a40, p40) = allocations(40, true);
    let extra_pkts = p40 - p10;
    let extra_allocs = a40.saturating_sub(a10);
    eprintln!("layered: 10 s: {a10} allocations / {p10} frames; 40 s: {a40} / {p40}; extra {extra_allocs} for {extra_pkts} frames");
    assert!(extra_pkts > 150_000);
    assert!(extra_allocs * 1000 < extra_pkts, "{extra_allocs} allocations for {extra_pkts} extra frames");
}
