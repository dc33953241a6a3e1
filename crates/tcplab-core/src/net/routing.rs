//! Static shortest-delay routes, computed only for the destinations flows use.
//!
//! The route from a node towards a destination is the first link of the path with
//! the least total propagation delay; ties go to fewer hops and then to the lower
//! link index, so routing is deterministic. Paths are found by Dijkstra's algorithm
//! run in reverse from the destination, with `(delay, hops)` as the path cost
//! (Dijkstra 1959; positive hop counts make the cost strictly increase along a path
//! even over zero-delay links). Nothing iterates a hash map.
//!
//! Set-up is linear in the topology, not quadratic in it:
//!
//! - **Stub nodes** (hosts). A node whose links all join one neighbour `p`, where `p`
//!   has other neighbours too, is a stub attached to `p`. Every path to a stub ends
//!   with a link `p -> stub` and every path from it starts with a link `stub -> p`,
//!   so its routes are `p`'s plus one link (the least-delay one, then the lowest
//!   index). This is the second stage of OSPF's routing-table calculation (RFC 2328
//!   §16.1: stub networks are added to the tree after the tree over the transit
//!   vertices is built). A dumbbell's senders and receivers are stubs of `r0`/`r1`.
//! - **Core nodes** (the rest) get one shortest-path tree per destination, built by
//!   a reverse Dijkstra over the core alone, and only for the core destinations (or
//!   stub attachment points) that some flow needs (`Routes::prepare`).
//!
//! Cost: O(V + E) time and memory to classify nodes and index the core's in-links,
//! then O((Vc + Ec) log Vc) time and O(Vc) memory per prepared core destination
//! (Vc, Ec: core nodes and links). A dumbbell of N pairs has a core of the two
//! routers, so its routes cost O(N) whatever the number of flows; the dense
//! all-pairs table this replaces was O(V²) memory and O(V² E) time.
//!
//! Exactness: a shortest path never passes through a stub (it would enter and leave
//! over the same neighbour, adding hops), so searching the core alone and adding a
//! stub's link at either end gives the same first links as an all-pairs search, ties
//! included. `tests::matches_all_pairs_reference` checks this on random graphs
//! (parallel links, zero delays, equal-cost ties, unreachable parts) against the
//! dense all-pairs computation.

use super::packet::{LinkId, NodeId};
use super::topology::Graph;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// "No such link / node / tree".
const NONE: u32 = u32::MAX;
/// Neighbour-set state while classifying: more than one distinct neighbour.
const MANY: u32 = u32::MAX - 1;

/// What routing knows about one node.
#[derive(Clone, Copy, Debug)]
struct NodeRoute {
    /// The node a stub is attached to; `NONE` for a core node.
    parent: u32,
    /// Stub: the best link stub -> parent (`NONE` if it has none).
    up: u32,
    /// Stub: the best link parent -> stub (`NONE` if it has none).
    down: u32,
    /// Core: index among core nodes; stub: `NONE`.
    core: u32,
}

/// The routes of one graph. Build with `new`, call `prepare` for every destination a
/// flow sends to, then ask `next_hop`.
#[derive(Clone, Debug)]
pub struct Routes {
    nodes: Vec<NodeRoute>,
    /// Core node index -> node id.
    core_nodes: Vec<u32>,
    /// In-links of each core node from other core nodes, as CSR: the in-links of core
    /// node `c` are `in_links[in_start[c]..in_start[c + 1]]`: (link, from core, delay ns).
    in_start: Vec<u32>,
    in_links: Vec<(u32, u32, u64)>,
    /// Core destination -> index of its tree (`NONE` until prepared).
    tree_of: Vec<u32>,
    /// Trees, each `core_nodes.len()` long: the next link from each core node.
    trees: Vec<u32>,
}

impl Routes {
    /// Classifies nodes and indexes the core: O(V + E). No tree is built yet.
    pub fn new(g: &Graph) -> Routes {
        let n = g.nodes.len();
        // Distinct neighbours of each node (either link direction, self-loops ignored):
        // NONE, one node id, or MANY.
        let mut nb = vec![NONE; n];
        let mut note = |x: u32, y: u32| {
            let s = &mut nb[x as usize];
            *s = match *s {
                NONE => y,
                z if z == y => y,
                _ => MANY,
            };
        };
        for &(a, b) in &g.ends {
            if a != b {
                note(a, b);
                note(b, a);
            }
        }
        let mut nodes: Vec<NodeRoute> = (0..n)
            .map(|x| {
                let p = nb[x];
                let stub = p != NONE && p != MANY && nb[p as usize] == MANY;
                NodeRoute { parent: if stub { p } else { NONE }, up: NONE, down: NONE, core: NONE }
            })
            .collect();
        // A stub's up and down links: least delay, then lowest index (links are visited
        // in index order, so only a strictly smaller delay replaces the current one).
        let delay = |l: u32| g.links[l as usize].params.delay.0;
        for (li, &(a, b)) in g.ends.iter().enumerate() {
            let li = li as u32;
            if nodes[a as usize].parent == b && (nodes[a as usize].up == NONE || delay(li) < delay(nodes[a as usize].up)) {
                nodes[a as usize].up = li;
            }
            if nodes[b as usize].parent == a && (nodes[b as usize].down == NONE || delay(li) < delay(nodes[b as usize].down)) {
                nodes[b as usize].down = li;
            }
        }
        let mut core_nodes = Vec::new();
        for (x, r) in nodes.iter_mut().enumerate() {
            if r.parent == NONE {
                r.core = core_nodes.len() as u32;
                core_nodes.push(x as u32);
            }
        }
        // CSR of the in-links between core nodes, in link-index order per node.
        let vc = core_nodes.len();
        let mut in_start = vec![0u32; vc + 1];
        let core_link = |&(a, b): &(u32, u32)| {
            let (ca, cb) = (nodes[a as usize].core, nodes[b as usize].core);
            (ca != NONE && cb != NONE).then_some((ca, cb))
        };
        for e in &g.ends {
            if let Some((_, cb)) = core_link(e) {
                in_start[cb as usize + 1] += 1;
            }
        }
        for c in 0..vc {
            in_start[c + 1] += in_start[c];
        }
        let mut fill = in_start.clone();
        let mut in_links = vec![(0u32, 0u32, 0u64); in_start[vc] as usize];
        for (li, e) in g.ends.iter().enumerate() {
            if let Some((ca, cb)) = core_link(e) {
                let slot = &mut fill[cb as usize];
                in_links[*slot as usize] = (li as u32, ca, delay(li as u32));
                *slot += 1;
            }
        }
        Routes { nodes, core_nodes, in_start, in_links, tree_of: vec![NONE; vc], trees: Vec::new() }
    }

    /// Makes `next_hop(_, dst)` answerable: builds the shortest-path tree towards
    /// `dst` (or towards its attachment point, for a stub) unless it exists.
    pub fn prepare(&mut self, dst: NodeId) {
        let d = self.nodes[dst as usize];
        let target = if d.parent != NONE { self.nodes[d.parent as usize].core } else { d.core };
        if self.tree_of[target as usize] != NONE {
            return;
        }
        let vc = self.core_nodes.len();
        let base = self.trees.len();
        self.tree_of[target as usize] = (base / vc.max(1)) as u32;
        self.trees.resize(base + vc, NONE);
        let next = &mut self.trees[base..];
        let mut best = vec![(u64::MAX, u32::MAX); vc];
        best[target as usize] = (0, 0);
        let mut heap = BinaryHeap::new();
        heap.push(Reverse((0u64, 0u32, target)));
        while let Some(Reverse((cost, hops, v))) = heap.pop() {
            if best[v as usize] != (cost, hops) {
                continue; // stale entry
            }
            let (lo, hi) = (self.in_start[v as usize] as usize, self.in_start[v as usize + 1] as usize);
            for &(li, u, delay) in &self.in_links[lo..hi] {
                let cand = (cost + delay, hops + 1);
                let u = u as usize;
                if cand < best[u] {
                    best[u] = cand;
                    next[u] = li;
                    heap.push(Reverse((cand.0, cand.1, u as u32)));
                } else if cand == best[u] && li < next[u] {
                    next[u] = li; // equal cost and hops: the lower link index wins
                }
            }
        }
    }

    /// The link a stub node (a host) sends everything on, if it is a stub with one.
    pub fn uplink(&self, node: NodeId) -> Option<LinkId> {
        let n = self.nodes.get(node as usize)?;
        (n.parent != NONE && n.up != NONE).then_some(n.up)
    }

    /// The link a packet at `at` bound for `dst` leaves on; `None` at the destination
    /// itself or when `dst` is unreachable from `at`. `prepare(dst)` must have run.
    #[inline]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        if at == dst {
            return None;
        }
        let d = self.nodes[dst as usize];
        let target = if d.parent != NONE {
            if at == d.parent || d.down == NONE {
                return (d.down != NONE).then_some(d.down);
            }
            d.parent
        } else {
            dst
        };
        let a = self.nodes[at as usize];
        let from = if a.parent != NONE {
            if a.up == NONE {
                return None;
            }
            if a.parent == target {
                return Some(a.up);
            }
            a.parent
        } else {
            at
        };
        let tree = self.tree_of[self.nodes[target as usize].core as usize];
        debug_assert!(tree != NONE, "next_hop towards node {dst} before prepare({dst})");
        let vc = self.core_nodes.len();
        let hop = self.trees[tree as usize * vc + self.nodes[from as usize].core as usize];
        match hop {
            NONE => None,
            _ if a.parent != NONE => Some(a.up),
            _ => Some(hop),
        }
    }

    /// Whether a packet from `src` reaches `dst` by following `next_hop` (prepared).
    pub fn reachable(&self, src: NodeId, dst: NodeId, ends: &[(u32, u32)]) -> bool {
        let mut at = src;
        // A shortest path visits each node at most once.
        for _ in 0..self.nodes.len() {
            if at == dst {
                return true;
            }
            match self.next_hop(at, dst) {
                Some(l) => at = ends[l as usize].1,
                None => return false,
            }
        }
        at == dst
    }

    /// Nodes routed as stubs and as core nodes.
    pub fn stub_and_core_counts(&self) -> (usize, usize) {
        (self.nodes.len() - self.core_nodes.len(), self.core_nodes.len())
    }

    /// Next-hop entries held in the prepared trees.
    pub fn tree_entries(&self) -> usize {
        self.trees.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::expand;
    use crate::rng::RngStream;
    use crate::scenario::{AccessDelay, AccessSpec, DumbbellSpec, LinkParams, LinkSpec, Topology};
    use crate::time::SimDuration;

    /// The dense all-pairs table the simulator used before (one reverse Dijkstra per
    /// destination over the whole graph): the reference the lazy routes must match.
    fn dense_reference(g: &Graph) -> Vec<Vec<Option<u32>>> {
        let n = g.nodes.len();
        let mut table = vec![vec![None; n]; n];
        for dst in 0..n {
            let mut best: Vec<Option<(u64, u32)>> = vec![None; n];
            best[dst] = Some((0, 0));
            let mut heap = BinaryHeap::new();
            heap.push(Reverse((0u64, 0u32, dst as u32)));
            while let Some(Reverse((cost, hops, v))) = heap.pop() {
                if best[v as usize] != Some((cost, hops)) {
                    continue;
                }
                for (li, l) in g.links.iter().enumerate() {
                    let (u, to) = g.ends[li];
                    if to != v {
                        continue;
                    }
                    let u = u as usize;
                    let cand = (cost + l.params.delay.0, hops + 1);
                    let better = best[u].is_none_or(|b| cand < b);
                    let tie = best[u] == Some(cand) && table[u][dst].is_some_and(|cur: u32| (li as u32) < cur);
                    if better || tie {
                        best[u] = Some(cand);
                        table[u][dst] = Some(li as u32);
                        if better {
                            heap.push(Reverse((cand.0, cand.1, u as u32)));
                        }
                    }
                }
            }
        }
        table
    }

    fn dumbbell(pairs: u32) -> Graph {
        let p = LinkParams { rate: 2_000_000, delay: SimDuration::from_millis(70), queue: None, error: None, jitter: None, mac: None, link_layer: None };
        expand(&Topology::Dumbbell(DumbbellSpec {
            pairs,
            bottleneck: p,
            bottleneck_reverse: None,
            sender_access: AccessSpec { rate: 100_000_000, delay: AccessDelay::Same(SimDuration::from_millis(11)), queue: None, jitter: None },
            receiver_access: AccessSpec { rate: 100_000_000, delay: AccessDelay::Same(SimDuration::ZERO), queue: None, jitter: None },
        }))
        .unwrap()
    }

    #[test]
    fn dumbbell_routes_cross_the_bottleneck() {
        let g = dumbbell(2);
        let mut r = Routes::new(&g);
        assert_eq!(r.stub_and_core_counts(), (4, 2));
        let ix = |n: &str| g.node_index(n).unwrap();
        let name = |l: Option<u32>| l.map(|l| g.links[l as usize].name.as_str());
        for n in ["s0", "d1"] {
            r.prepare(ix(n));
        }
        assert_eq!(name(r.next_hop(ix("s0"), ix("d1"))), Some("access_s0"));
        assert_eq!(name(r.next_hop(ix("r0"), ix("d1"))), Some("bottleneck"));
        assert_eq!(name(r.next_hop(ix("r1"), ix("d1"))), Some("access_d1"));
        assert_eq!(name(r.next_hop(ix("d1"), ix("s0"))), Some("access_d1_rev"));
        assert_eq!(name(r.next_hop(ix("r1"), ix("s0"))), Some("bottleneck_rev"));
        assert_eq!(r.next_hop(ix("s0"), ix("s0")), None);
        assert!(r.reachable(ix("s0"), ix("d1"), &g.ends));
        // Both destinations hang off the two routers: two trees of two entries.
        assert_eq!(r.tree_entries(), 4);
    }

    /// A random graph: `n` nodes, a few routers joined at random (parallel links,
    /// equal and zero delays, one-way links, unreachable parts), hosts hanging off them.
    fn random_graph(rng: &mut RngStream, n: usize) -> Graph {
        let nodes: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        let routers = (2 + rng.uniform_u64(0, (n / 2) as u64) as usize).min(n);
        let mut links = Vec::new();
        let mut add = |a: usize, b: usize, rng: &mut RngStream| {
            // Delays from a small set so that equal-cost paths are common.
            let ms = [0, 1, 1, 2, 3][rng.uniform_u64(0, 4) as usize];
            let params = LinkParams { rate: 1_000_000, delay: SimDuration::from_millis(ms), queue: None, error: None, jitter: None, mac: None, link_layer: None };
            let name = format!("l{}", links.len());
            links.push(LinkSpec { name, from: nodes[a].clone(), to: nodes[b].clone(), params });
        };
        for _ in 0..routers * 2 {
            let (a, b) = (rng.uniform_u64(0, routers as u64 - 1) as usize, rng.uniform_u64(0, routers as u64 - 1) as usize);
            add(a, b, rng);
            if rng.uniform() < 0.8 {
                add(b, a, rng);
            }
        }
        for h in routers..n {
            let r = rng.uniform_u64(0, routers as u64 - 1) as usize;
            match rng.uniform_u64(0, 9) {
                0 => add(h, r, rng),    // send-only host
                1 => add(r, h, rng),    // receive-only host
                2 => {}                 // isolated host
                3 => {
                    // a host on two routers (not a stub)
                    add(h, r, rng);
                    add(r, h, rng);
                    add(h, (r + 1) % routers, rng);
                }
                _ => {
                    add(h, r, rng);
                    add(r, h, rng);
                    if rng.uniform() < 0.3 {
                        add(r, h, rng); // a parallel link
                    }
                }
            }
        }
        expand(&Topology::Graph { nodes, links }).unwrap()
    }

    #[test]
    fn matches_all_pairs_reference() {
        let mut rng = RngStream::new(7, "routing-test");
        let mut stubs = 0;
        for case in 0..300 {
            let n = 2 + case % 14;
            let g = random_graph(&mut rng, n);
            let reference = dense_reference(&g);
            let mut r = Routes::new(&g);
            stubs += r.stub_and_core_counts().0;
            for dst in 0..n as u32 {
                r.prepare(dst);
            }
            for (at, row) in reference.iter().enumerate() {
                for (dst, &want) in row.iter().enumerate() {
                    assert_eq!(
                        r.next_hop(at as u32, dst as u32),
                        want,
                        "case {case}: next hop from n{at} to n{dst}; links {:?}",
                        g.links.iter().map(|l| (&l.from, &l.to, l.params.delay.0 / 1_000_000)).collect::<Vec<_>>()
                    );
                }
            }
        }
        assert!(stubs > 500, "the random graphs must exercise stubs ({stubs})");
    }
}
