//! Topology builders: a topology description expanded into named nodes and
//! unidirectional links, with the names checked and indexed.
//!
//! The dumbbell builder expands `Topology::Dumbbell` into that form; an explicit
//! graph is taken as given. The parking-lot builder (`Topology::ParkingLot`, seed
//! 002: "parking lot with 5 routers, 1 Gbps links with 2 MB buffer (15 msec)")
//! lays routers `r0..r{N-1}` on a line; backbone link `bb{i}` runs r_i -> r_{i+1} and
//! `bb{i}_rev` back, so N routers give 2(N-1) backbone links (8 for the seed's 5),
//! and a flow from r_a to r_b crosses |a - b| of them. Each host hangs off one router
//! by `acc_{host}` (host -> router) and `acc_{host}_rev` (router -> host), both with
//! the host's delay and the lot's access rate and queue. Names are chosen so that the
//! `links` table groups by a prefix: `bb` for the backbone, `acc_` for access. Names are indexed in a hash map used only for look-ups
//! (never iterated), so checking and resolving names is O(V + E) and nothing depends
//! on hash order. Routes over the expanded graph are `net::routing`'s.

use crate::scenario::{LinkParams, LinkSpec, ParkingLotSpec, Topology};
use std::collections::HashMap;

/// A topology in explicit form.
#[derive(Clone, Debug)]
pub struct Graph {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
    /// `(from, to)` node indices of each link.
    pub ends: Vec<(u32, u32)>,
    index: HashMap<String, u32>,
}

impl Graph {
    pub fn node_index(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }
}

fn duplex(links: &mut Vec<LinkSpec>, name: &str, a: &str, b: &str, fwd: &LinkParams, rev: &LinkParams) {
    links.push(LinkSpec { name: name.to_string(), from: a.into(), to: b.into(), params: fwd.clone() });
    links.push(LinkSpec { name: format!("{name}_rev"), from: b.into(), to: a.into(), params: rev.clone() });
}

/// Expands a topology description into nodes and links, checking names.
pub fn expand(t: &Topology) -> Result<Graph, String> {
    let g = match t {
        Topology::Graph { nodes, links } => (nodes.clone(), links.clone()),
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
                jitter: None,
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
                    jitter: d.sender_access.jitter.clone(),
                    mac: None,
                    link_layer: None,
                };
                duplex(&mut links, &format!("access_s{i}"), &format!("s{i}"), "r0", &s, &s);
                let r = LinkParams {
                    rate: d.receiver_access.rate,
                    delay: d.receiver_access.delay.get(i),
                    queue: d.receiver_access.queue.clone(),
                    error: None,
                    jitter: d.receiver_access.jitter.clone(),
                    mac: None,
                    link_layer: None,
                };
                duplex(&mut links, &format!("access_d{i}"), "r1", &format!("d{i}"), &r, &r);
            }
            (nodes, links)
        }
        Topology::ParkingLot(p) => parking_lot(p)?,
    };
    // Names must be unique and links must join known nodes.
    let (nodes, links) = g;
    let mut index = HashMap::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        if index.insert(n.clone(), i as u32).is_some() {
            return Err(format!("topology.nodes: duplicate node name '{n}'"));
        }
    }
    let mut link_names = std::collections::HashSet::with_capacity(links.len());
    let mut ends = Vec::with_capacity(links.len());
    for l in &links {
        if !link_names.insert(l.name.as_str()) {
            return Err(format!("topology.links: duplicate link name '{}'", l.name));
        }
        let end = |name: &String| {
            index.get(name).copied().ok_or_else(|| format!("topology.links['{}']: unknown node '{name}'", l.name))
        };
        ends.push((end(&l.from)?, end(&l.to)?));
        if l.params.rate == 0 {
            return Err(format!("topology.links['{}'].rate must be positive", l.name));
        }
    }
    drop(link_names);
    Ok(Graph { nodes, links, ends, index })
}

/// Routers, backbone and access links of a parking lot (module doc).
fn parking_lot(p: &ParkingLotSpec) -> Result<(Vec<String>, Vec<LinkSpec>), String> {
    let n = p.routers;
    if !(2..=64).contains(&n) {
        return Err(format!("topology.routers = {n}: a parking lot needs 2 to 64 routers"));
    }
    if p.access_rate == 0 {
        return Err("topology.access_rate must be positive (bit/s)".into());
    }
    let mut nodes: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
    let mut links = Vec::with_capacity(2 * (n as usize - 1) + 2 * p.hosts.len());
    let rev = p.backbone_reverse.as_ref().unwrap_or(&p.backbone);
    for i in 0..n - 1 {
        duplex(&mut links, &format!("bb{i}"), &format!("r{i}"), &format!("r{}", i + 1), &p.backbone, rev);
    }
    for (k, h) in p.hosts.iter().enumerate() {
        if h.router >= n {
            return Err(format!(
                "topology.hosts[{k}] ('{}').router = {}: accepted 0 to {} (the lot has {n} routers)",
                h.name,
                h.router,
                n - 1
            ));
        }
        let access = LinkParams {
            rate: p.access_rate,
            delay: h.delay,
            queue: p.access_queue.clone(),
            error: None,
            jitter: None,
            mac: None,
            link_layer: None,
        };
        duplex(&mut links, &format!("acc_{}", h.name), &h.name, &format!("r{}", h.router), &access, &access);
        nodes.push(h.name.clone());
    }
    Ok((nodes, links))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{AccessDelay, AccessSpec, DumbbellSpec};
    use crate::time::SimDuration;

    fn link(name: &str, from: &str, to: &str) -> LinkSpec {
        let params = LinkParams { rate: 1_000_000, delay: SimDuration::from_millis(1), queue: None, error: None, jitter: None, mac: None, link_layer: None };
        LinkSpec { name: name.into(), from: from.into(), to: to.into(), params }
    }

    #[test]
    fn dumbbell_expands_to_named_nodes_and_links() {
        let p = LinkParams { rate: 2_000_000, delay: SimDuration::from_millis(70), queue: None, error: None, jitter: None, mac: None, link_layer: None };
        let access = AccessSpec { rate: 100_000_000, delay: AccessDelay::Same(SimDuration::from_millis(11)), queue: None, jitter: None };
        let t = Topology::Dumbbell(DumbbellSpec {
            pairs: 2,
            bottleneck: p,
            bottleneck_reverse: None,
            sender_access: access.clone(),
            receiver_access: access,
        });
        let g = expand(&t).unwrap();
        assert_eq!(g.nodes, ["s0", "s1", "r0", "r1", "d0", "d1"]);
        let names: Vec<_> = g.links.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            ["bottleneck", "bottleneck_rev", "access_s0", "access_s0_rev", "access_d0", "access_d0_rev",
             "access_s1", "access_s1_rev", "access_d1", "access_d1_rev"]
        );
        // access_d1 runs r1 (index 3) -> d1 (index 5).
        assert_eq!(g.ends[8], (3, 5));
        assert_eq!(g.node_index("d1"), Some(5));
        assert_eq!(g.node_index("d2"), None);
    }

    #[test]
    fn bad_names_are_reported() {
        let graph = |nodes: &[&str], links: Vec<LinkSpec>| {
            expand(&Topology::Graph { nodes: nodes.iter().map(|s| s.to_string()).collect(), links }).unwrap_err()
        };
        assert!(graph(&["a", "b", "a"], vec![]).contains("duplicate node name 'a'"));
        let e = graph(&["a", "b"], vec![link("x", "a", "b"), link("x", "b", "a")]);
        assert!(e.contains("duplicate link name 'x'"), "{e}");
        let e = graph(&["a", "b"], vec![link("x", "a", "c")]);
        assert!(e.contains("topology.links['x']: unknown node 'c'"), "{e}");
    }

    #[test]
    fn parking_lot_lines_up_routers_backbone_and_hosts() {
        use crate::scenario::{HostSpec, ParkingLotSpec};
        let bb = LinkParams { rate: 1_000_000_000, delay: SimDuration::from_millis(15), queue: None, error: None, jitter: None, mac: None, link_layer: None };
        let host = |name: &str, router| HostSpec { name: name.into(), router, delay: SimDuration::from_millis(7) };
        let mut p = ParkingLotSpec {
            routers: 5,
            backbone: bb,
            backbone_reverse: None,
            access_rate: 10_000_000_000,
            access_queue: None,
            hosts: vec![host("a", 0), host("b", 4)],
        };
        let g = expand(&Topology::ParkingLot(p.clone())).unwrap();
        assert_eq!(g.nodes, ["r0", "r1", "r2", "r3", "r4", "a", "b"]);
        let names: Vec<_> = g.links.iter().map(|l| l.name.as_str()).collect();
        // 5 routers: 4 backbone hops, 8 backbone links (seed 002), then 2 per host.
        assert_eq!(
            names,
            ["bb0", "bb0_rev", "bb1", "bb1_rev", "bb2", "bb2_rev", "bb3", "bb3_rev", "acc_a", "acc_a_rev", "acc_b", "acc_b_rev"]
        );
        assert_eq!(g.ends[2], (1, 2)); // bb1: r1 -> r2
        assert_eq!(g.ends[7], (4, 3)); // bb3_rev: r4 -> r3
        assert_eq!(g.ends[10], (6, 4)); // acc_b: b -> r4
        assert_eq!(g.links[11].params.delay, SimDuration::from_millis(7));
        assert_eq!(g.links[11].params.rate, 10_000_000_000);
        p.hosts.push(host("c", 5));
        let e = expand(&Topology::ParkingLot(p.clone())).unwrap_err();
        assert!(e.contains("topology.hosts[2] ('c').router = 5: accepted 0 to 4"), "{e}");
        p.hosts.pop();
        p.routers = 1;
        let e = expand(&Topology::ParkingLot(p)).unwrap_err();
        assert!(e.contains("topology.routers = 1"), "{e}");
    }
}
