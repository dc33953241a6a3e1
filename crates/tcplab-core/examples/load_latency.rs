//! `cargo run --release --example load_latency -- [MB...]`: the time of one dependent
//! load from a working set of each size (default 1, 4, 16, 64, 256 MB): a pointer
//! chase through one random cycle over 64-byte cells, so every load waits for the
//! previous one and neither the hardware prefetcher nor out-of-order execution can
//! overlap them (memory latency as lmbench's `lat_mem_rd` measures it, with a random
//! order of cells instead of a fixed stride).
//!
//! It is the yardstick for the event loop at scale: with 10,000 flows the simulation's
//! state (about 200 MB) does not fit in any cache level a core owns, and an event
//! whose state was not prefetched in time waits about this long per load.
use std::time::Instant;

/// One cache line: the index of the next cell, padded to 64 bytes.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Cell {
    next: usize,
    _pad: [usize; 7],
}

fn ns_per_load(mb: usize) -> f64 {
    let n = (mb << 20) / std::mem::size_of::<Cell>();
    // All cells in a random order (Fisher-Yates), each pointing to the next in that
    // order and the last to the first: one cycle through every cell.
    let mut rng = tcplab_core::rng::RngStream::new(1, "load-latency");
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.uniform_u64(0, i as u64) as usize;
        order.swap(i, j);
    }
    let mut cells = vec![Cell { next: 0, _pad: [0; 7] }; n];
    for i in 0..n {
        cells[order[i]].next = order[(i + 1) % n];
    }
    let loads = 20_000_000usize.max(2 * n);
    let mut at = order[0];
    // One lap first, so that page faults and the first touch are not timed.
    for _ in 0..n {
        at = cells[at].next;
    }
    let t = Instant::now();
    for _ in 0..loads {
        at = cells[at].next;
    }
    let ns = t.elapsed().as_secs_f64() * 1e9 / loads as f64;
    std::hint::black_box(at);
    ns
}

fn main() {
    let mut sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![1, 4, 16, 64, 256];
    }
    for mb in sizes {
        println!("{{\"working_set_mb\": {mb}, \"ns_per_dependent_load\": {:.1}}}", ns_per_load(mb));
    }
}
