//! Topology builders and static shortest-path routes.
//!
//! A topology is a list of named nodes and unidirectional links. The dumbbell builder
//! expands `Topology::Dumbbell` into that form. Routes are static: for every
//! (node, destination) the first link of the path with the least total propagation
//! delay, ties broken by fewer hops and then by the lower link index, so routing is
//! deterministic (Dijkstra over a `Vec`, no hash order involved).

use crate::scenario::{LinkParams, LinkSpec, Topology};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A topology in explicit form.
#[derive(Clone, Debug)]
pub struct Graph {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
}

impl Graph {
    pub fn node_index(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n == name).map(|i| i as u32)
    }
}

fn duplex(links: &mut Vec<LinkSpec>, name: &str, a: &str, b: &str, fwd: &LinkParams, rev: &LinkParams) {
    links.push(LinkSpec { name: name.to_string(), from: a.into(), to: b.into(), params: fwd.clone() });
    links.push(LinkSpec { name: format!("{name}_rev"), from: b.into(), to: a.into(), params: rev.clone() });
}

/// Expands a topology description into nodes and links, checking names.
pub fn expand(t: &Topology) -> Result<Graph, String> {
    let g = match t {
        Topology::Graph { nodes, links } => Graph { nodes: nodes.clone(), links: links.clone() },
        Topology::Dumbbell(d) => {
            let n = d.pairs as usize;
            if n == 0 {
                return Err("topology.pairs must be at least 1".into());
            }
            for (side, a) in [("sender_access", &d.sender_access), ("receiver_access", &d.receiver_access)] {
                if let crate::scenario::AccessDelay::PerPair(v) = &a.delay {
                    if v.len() != n {
                        return Err(format!(
                            "topology.{side}.delay lists {} delays but pairs = {n}",
                            v.len()
                        ));
                    }
                }
            }
            let mut nodes: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
            nodes.push("r0".into());
            nodes.push("r1".into());
            nodes.extend((0..n).map(|i| format!("d{i}")));
            let mut links = Vec::with_capacity(4 * n + 2);
            let rev = d.bottleneck_reverse.clone().unwrap_or(LinkParams {
                rate: d.bottleneck.rate,
                delay: d.bottleneck.delay,
                queue: None,
                error: None,
                mac: None,
                link_layer: None,
            });
            duplex(&mut links, "bottleneck", "r0", "r1", &d.bottleneck, &rev);
            for i in 0..n {
                let s = LinkParams {
                    rate: d.sender_access.rate,
                    delay: d.sender_access.delay.get(i),
                    queue: d.sender_access.queue.clone(),
                    error: None,
                    mac: None,
                    link_layer: None,
                };
                duplex(&mut links, &format!("access_s{i}"), &format!("s{i}"), "r0", &s, &s);
                let r = LinkParams {
                    rate: d.receiver_access.rate,
                    delay: d.receiver_access.delay.get(i),
                    queue: d.receiver_access.queue.clone(),
                    error: None,
                    mac: None,
                    link_layer: None,
                };
                duplex(&mut links, &format!("access_d{i}"), "r1", &format!("d{i}"), &r, &r);
            }
            Graph { nodes, links }
        }
    };
    // Names must be unique and links must join known nodes.
    for (i, n) in g.nodes.iter().enumerate() {
        if g.nodes[..i].contains(n) {
            return Err(format!("topology.nodes: duplicate node name '{n}'"));
        }
    }
    for (i, l) in g.links.iter().enumerate() {
        if g.links[..i].iter().any(|o| o.name == l.name) {
            return Err(format!("topology.links: duplicate link name '{}'", l.name));
        }
        for end in [&l.from, &l.to] {
            if g.node_index(end).is_none() {
                return Err(format!("topology.links['{}']: unknown node '{end}'", l.name));
            }
        }
        if l.params.rate == 0 {
            return Err(format!("topology.links['{}'].rate must be positive", l.name));
        }
    }
    Ok(g)
}

/// `next_hop[node][dst]`: the link a packet at `node` for `dst` takes (`None` at the
/// destination itself or when unreachable).
pub fn routes(g: &Graph) -> Vec<Vec<Option<u32>>> {
    let n = g.nodes.len();
    let from: Vec<u32> = g.links.iter().map(|l| g.node_index(&l.from).unwrap()).collect();
    let to: Vec<u32> = g.links.iter().map(|l| g.node_index(&l.to).unwrap()).collect();
    let mut table = vec![vec![None; n]; n];
    // One reverse Dijkstra per destination: cost to reach dst from each node.
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
                if to[li] != v {
                    continue;
                }
                let u = from[li] as usize;
                let cand = (cost + l.params.delay.0, hops + 1);
                let better = match best[u] {
                    None => true,
                    Some(b) => cand < b,
                };
                let tie_lower_link = best[u] == Some(cand)
                    && table[u][dst].is_some_and(|cur: u32| (li as u32) < cur);
                if better || tie_lower_link {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{AccessDelay, AccessSpec, DumbbellSpec};
    use crate::time::SimDuration;

    #[test]
    fn dumbbell_routes_cross_the_bottleneck() {
        let p = |rate, ms| LinkParams { rate, delay: SimDuration::from_millis(ms), queue: None, error: None, mac: None, link_layer: None };
        let t = Topology::Dumbbell(DumbbellSpec {
            pairs: 2,
            bottleneck: p(2_000_000, 70),
            bottleneck_reverse: None,
            sender_access: AccessSpec { rate: 100_000_000, delay: AccessDelay::Same(SimDuration::from_millis(11)), queue: None },
            receiver_access: AccessSpec { rate: 100_000_000, delay: AccessDelay::Same(SimDuration::ZERO), queue: None },
        });
        let g = expand(&t).unwrap();
        assert_eq!(g.nodes, ["s0", "s1", "r0", "r1", "d0", "d1"]);
        let r = routes(&g);
        let s0 = g.node_index("s0").unwrap() as usize;
        let d1 = g.node_index("d1").unwrap() as usize;
        let r0 = g.node_index("r0").unwrap() as usize;
        assert_eq!(g.links[r[s0][d1].unwrap() as usize].name, "access_s0");
        assert_eq!(g.links[r[r0][d1].unwrap() as usize].name, "bottleneck");
        assert_eq!(g.links[r[d1][s0].unwrap() as usize].name, "access_d1_rev");
        assert!(r[s0][s0].is_none());
    }
}
