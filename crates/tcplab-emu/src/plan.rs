//! From a resolved scenario to an emulation plan: which nodes are hosts (network
//! namespaces with a TUN device) and which stay inside the emulator, the addresses and
//! routes of every host, each flow's kernel settings, and every reason the kernel
//! cannot run the scenario. Building the plan touches nothing on the machine, so a
//! refused scenario leaves nothing behind.
//!
//! Hosts are the nodes that are an endpoint of some flow; every other node (the
//! dumbbell's routers) is a forwarding point inside the emulator, routed by the core's
//! own static routes (`net::topology::routes`), so packets cross exactly the links the
//! simulator would send them over.
//!
//! Addresses (RFC 2544's benchmarking block 198.18.0.0/15, which no real network
//! routes): node n has 198.18.0.0 + n + 1; flow f has its own pair, the receiver side
//! 198.19.0.0 + 2f + 1 and the sender side 198.19.0.0 + 2f + 2. Per-flow addresses let
//! route attributes (`initcwnd`, `rto_min`, `quickack`) differ between flows of the
//! same two hosts, and let the emulator tell every packet's flow and direction from its
//! destination address alone.
//!
//! A request/response application (`kind = "rpc"`, core `app::rpc`) is one flow of the
//! plan whose "sender" is the server (it sends the responses) and whose "receiver" is
//! the client; its transactions (`TxnPlan`) are drawn before the run with the core's
//! own generators (`RpcApp`: arrivals from `app:<name>:arrivals`, sizes from
//! `app:<name>:sizes`), so a scenario and a seed give the same transactions in both
//! modes. Each transaction is a connection from the client's flow address and its own
//! port (`txn_port`), which is how the emulator tells transactions apart on the wire.

use crate::kernel::{self, KernelFacts, KernelTcp, Side};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use tcplab_core::net::topology::{self, Graph};
use tcplab_core::app::arrivals::Arrivals;
use tcplab_core::app::rpc::{RpcApp, RpcSpec};
use tcplab_core::scenario::{FlowSpec, Interval, Scenario};
use tcplab_core::time::SimTime;

pub const TCP_PORT: u16 = 5001;
pub const UDP_PORT: u16 = 5002;
/// IPv4 + UDP headers; a UDP datagram of `packet_bytes` carries this much less payload.
pub const UDP_OVERHEAD: u32 = 28;
/// Sequence number and send time at the head of every CBR datagram.
pub const UDP_STAMP: u32 = 16;

pub fn node_addr(n: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(198, 18, 0, 0)) + n as u32 + 1)
}
pub fn flow_dst_addr(f: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(198, 19, 0, 0)) + 2 * f as u32 + 1)
}
pub fn flow_src_addr(f: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(198, 19, 0, 0)) + 2 * f as u32 + 2)
}

/// What a destination address says: the node it belongs to, and for a flow address the
/// flow and whether the packet travels towards its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrInfo {
    pub node: u32,
    pub flow: Option<(u32, bool)>,
}

#[derive(Clone, Debug)]
pub enum FlowKind {
    Tcp { bytes: Option<u64>, kernel: KernelTcp },
    Udp { packet_bytes: u32, interval: Interval },
    /// A request/response application: the flow's source node is the server, its
    /// destination the client; `iw_segments` is the server's initial window.
    Rpc { spec: Box<RpcSpec>, kernel: KernelTcp, iw_segments: u32 },
}

/// One transaction of a request/response application, drawn as the simulator draws it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxnPlan {
    /// Creation order over all applications (the simulator's `txn_id`).
    pub g: u32,
    /// The application's flow index.
    pub flow: usize,
    /// Arrival number within the application (a batch's transactions share it).
    pub batch: u64,
    /// Scheduled connect time, ns of model time.
    pub start_ns: u64,
    pub request_bytes: u64,
    pub response_bytes: u64,
}

/// First client port of a transaction; transaction g connects from `txn_port(g)`.
pub const TXN_PORT_BASE: u16 = 20_000;
/// Ports cycled over (a port is reused after this many transactions).
pub const TXN_PORTS: u32 = 40_000;

/// The client port of transaction `g`.
pub fn txn_port(g: u32) -> u16 {
    TXN_PORT_BASE + (g % TXN_PORTS) as u16
}

#[derive(Clone, Debug)]
pub struct FlowPlan {
    pub id: usize,
    pub name: String,
    pub group: String,
    pub cc_name: String,
    pub src_node: usize,
    pub dst_node: usize,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub kind: FlowKind,
    pub record_owd: bool,
}

#[derive(Clone, Debug)]
pub struct HostPlan {
    pub node: usize,
    pub name: String,
    /// sysctl -> value, for this host's namespace.
    pub sysctls: BTreeMap<String, String>,
    /// `ip -batch` lines run in the namespace once its TUN device exists (`{dev}` is
    /// replaced by the device name).
    pub ip: Vec<String>,
}

pub struct Plan {
    pub name: String,
    pub graph: Graph,
    pub routes: Vec<Vec<Option<u32>>>,
    pub hosts: Vec<HostPlan>,
    /// Host index of each node (None: a router inside the emulator).
    pub host_of_node: Vec<Option<usize>>,
    pub flows: Vec<FlowPlan>,
    /// Device MTU of every host: the largest packet any flow sends (at least 1500).
    pub mtu: u32,
    pub duration_ns: Option<u64>,
    pub max_duration_ns: u64,
    /// The run ends when every finite flow has completed (no duration, no unbounded flow).
    pub stop_when_done: bool,
    pub record_cwnd: bool,
    pub record_queue: Vec<bool>,
    pub record_drops: bool,
    pub busy_sample_ns: Option<u64>,
    /// `[record] throughput_interval`: the sinks bin the bytes their application reads.
    pub throughput_ns: Option<u64>,
    /// Accepted differences from the scenario (kernel behaviour the knob cannot change).
    pub deviations: Vec<String>,
    /// Every transaction of the request/response flows, in creation order (index = g);
    /// filled by `schedule_transactions`.
    pub txns: Vec<TxnPlan>,
}

impl Plan {
    /// What a destination address means, or None for an address outside the plan.
    pub fn lookup(&self, dst: Ipv4Addr) -> Option<AddrInfo> {
        let a = u32::from(dst);
        let base18 = u32::from(Ipv4Addr::new(198, 18, 0, 0));
        let base19 = u32::from(Ipv4Addr::new(198, 19, 0, 0));
        if (base18 + 1..base19).contains(&a) {
            let n = (a - base18 - 1) as usize;
            return (n < self.graph.nodes.len()).then_some(AddrInfo { node: n as u32, flow: None });
        }
        if a > base19 && a < base19 + 0x1_0000 {
            let off = a - base19 - 1;
            let f = (off / 2) as usize;
            let to_receiver = off % 2 == 0;
            let fl = self.flows.get(f)?;
            let node = if to_receiver { fl.dst_node } else { fl.src_node };
            return Some(AddrInfo { node: node as u32, flow: Some((f as u32, to_receiver)) });
        }
        None
    }
}

/// Longest an emulation may run without an explicit `duration` when a flow is unbounded.
pub const MAX_UNBOUNDED_S: u64 = 600;

/// Builds the plan, or returns every reason the kernel cannot run the scenario.
pub fn build(sc: &Scenario, k: &KernelFacts) -> Result<Plan, Vec<String>> {
    let graph = topology::expand(&sc.topology).map_err(|e| vec![e])?;
    let n = graph.nodes.len();
    // Emulated topologies are small: a dense next-hop table from the core's own routes.
    let mut lazy = tcplab_core::net::routing::Routes::new(&graph);
    let routes: Vec<Vec<Option<u32>>> = (0..n)
        .map(|at| {
            (0..n)
                .map(|dst| {
                    lazy.prepare(dst as u32);
                    if at == dst { None } else { lazy.next_hop(at as u32, dst as u32) }
                })
                .collect()
        })
        .collect();
    let node = |field: &str, name: &str| {
        graph.node_index(name).map(|i| i as usize).ok_or_else(|| format!("{field}: unknown node '{name}'"))
    };
    let mut bad = Vec::new();
    // The packet trace's receive and ack rows happen inside the kernel's TCP, which the
    // emulator does not see per segment; a trace of link events alone would be another table.
    if !sc.record.packets.is_empty() {
        bad.push(format!(
            "record.packets ({:?}): the per-packet trace is not recorded in emulate mode (the kernel's TCP receiver \
             and sender are not observable per packet); accepted: [] (run the simulator for it)",
            sc.record.packets
        ));
    }
    if sc.record.throughput_interval.is_some_and(|d| d.0 == 0) {
        bad.push("record.throughput_interval must be positive".into());
    }
    let mut flows = Vec::new();
    let mut unbounded = false;
    let owd_all = sc.record.owd.iter().any(|s| s == "*");
    let mut deviations = Vec::new();
    if sc.flows.len() > 32_767 {
        return Err(vec![format!("{} flows: the emulator addresses at most 32767", sc.flows.len())]);
    }
    for (i, f) in sc.flows.iter().enumerate() {
        let (name, group, src, dst, start, stop) = match f {
            FlowSpec::Tcp(t) => (t.name.clone(), t.group.clone(), &t.src, &t.dst, t.start, t.stop),
            FlowSpec::Udp(u) => (u.name.clone(), u.group.clone(), &u.src, &u.dst, u.start, u.stop),
            FlowSpec::Rpc(r) => (
                Some(r.name.clone().unwrap_or_else(|| format!("rpc{i}"))),
                r.group.clone(),
                &r.server,
                &r.client,
                r.start,
                r.stop,
            ),
        };
        let name = name.unwrap_or_else(|| format!("flow{i}"));
        let ctx = format!("flows[{i}] ('{name}')");
        let (src, dst) = match (node(&format!("{ctx}.src"), src), node(&format!("{ctx}.dst"), dst)) {
            (Ok(s), Ok(d)) => (s, d),
            (a, b) => {
                bad.extend(a.err().into_iter().chain(b.err()));
                continue;
            }
        };
        if src == dst || routes[src][dst].is_none() || routes[dst][src].is_none() {
            bad.push(format!("{ctx}: no route in both directions between '{}' and '{}'", graph.nodes[src], graph.nodes[dst]));
            continue;
        }
        let record_owd = !matches!(f, FlowSpec::Rpc(_)) && (owd_all || sc.record.owd.contains(&name));
        let (kind, cc_name) = match f {
            FlowSpec::Rpc(r) => {
                if !Arrivals::bounded(&r.arrivals, r.stop) {
                    unbounded = true;
                }
                let rate = |link: &str| graph.links.iter().find(|l| l.name == link).map(|l| l.params.rate);
                // Built here once (seed 0) for its checks; the transactions are drawn with
                // the run's seed in `schedule_transactions`.
                if let Err(e) = RpcApp::new(r, name.clone(), &ctx, src as u32, dst as u32, rate, 0) {
                    bad.push(e);
                    continue;
                }
                match r.tcp.resolve() {
                    Err(e) => {
                        bad.push(format!("{ctx}: {e}"));
                        continue;
                    }
                    Ok(cfg) => match kernel::map_tcp(&cfg, &r.cc, k) {
                        Ok(kt) => {
                            for d in &kt.deviations {
                                if !deviations.contains(d) {
                                    deviations.push(d.clone());
                                }
                            }
                            let iw_segments = (cfg.iw.bytes(cfg.mss) / cfg.mss as u64) as u32;
                            (FlowKind::Rpc { spec: Box::new(r.clone()), kernel: kt, iw_segments }, r.cc.name.clone())
                        }
                        Err(es) => {
                            bad.extend(es.into_iter().map(|e| format!("{ctx}: {e}")));
                            continue;
                        }
                    },
                }
            }
            FlowSpec::Tcp(t) => {
                if t.bytes.is_none() && t.stop.is_none() {
                    unbounded = true;
                }
                match t.tcp.resolve() {
                    Err(e) => {
                        bad.push(format!("{ctx}: {e}"));
                        continue;
                    }
                    Ok(cfg) => match kernel::map_tcp(&cfg, &t.cc, k) {
                        Ok(kt) => {
                            for d in &kt.deviations {
                                if !deviations.contains(d) {
                                    deviations.push(d.clone());
                                }
                            }
                            (FlowKind::Tcp { bytes: t.bytes, kernel: kt }, t.cc.name.clone())
                        }
                        Err(es) => {
                            bad.extend(es.into_iter().map(|e| format!("{ctx}: {e}")));
                            continue;
                        }
                    },
                }
            }
            FlowSpec::Udp(u) => {
                if u.stop.is_none() {
                    unbounded = true;
                }
                if u.packet_bytes < UDP_OVERHEAD + UDP_STAMP {
                    bad.push(format!(
                        "{ctx}.packet_bytes = {}: a datagram needs {} bytes of IP/UDP header and {} of sequence number and send time; accepted: >= {}",
                        u.packet_bytes,
                        UDP_OVERHEAD,
                        UDP_STAMP,
                        UDP_OVERHEAD + UDP_STAMP
                    ));
                    continue;
                }
                if u.packet_bytes > 65_535 {
                    bad.push(format!("{ctx}.packet_bytes = {}: larger than an IPv4 packet", u.packet_bytes));
                    continue;
                }
                (FlowKind::Udp { packet_bytes: u.packet_bytes, interval: u.interval.clone() }, String::new())
            }
        };
        flows.push(FlowPlan {
            id: i,
            name,
            group,
            cc_name,
            src_node: src,
            dst_node: dst,
            start_ns: start.0,
            stop_ns: stop.map(|s| s.0),
            kind,
            record_owd,
        });
    }
    if sc.duration.is_none() && unbounded && sc.max_duration.0 > MAX_UNBOUNDED_S * 1_000_000_000 {
        bad.push(format!(
            "duration: a flow runs without end and the scenario has no duration, so the emulation would run max_duration ({} s) in real time; set duration (at most {MAX_UNBOUNDED_S} s without it)",
            sc.max_duration.0 / 1_000_000_000
        ));
    }
    let mut record_queue = vec![false; graph.links.len()];
    for q in &sc.record.queue {
        match graph.links.iter().position(|l| &l.name == q) {
            Some(i) => record_queue[i] = true,
            None => bad.push(format!("record.queue: unknown link '{q}'")),
        }
    }
    if !bad.is_empty() {
        return Err(bad);
    }
    // Hosts, in node order.
    let mut host_of_node = vec![None; n];
    let mut hosts: Vec<HostPlan> = Vec::new();
    for f in &flows {
        for nd in [f.src_node, f.dst_node] {
            if host_of_node[nd].is_none() {
                host_of_node[nd] = Some(usize::MAX);
            }
        }
    }
    for (nd, h) in host_of_node.iter_mut().enumerate() {
        if h.is_some() {
            *h = Some(hosts.len());
            hosts.push(HostPlan { node: nd, name: graph.nodes[nd].clone(), sysctls: BTreeMap::new(), ip: Vec::new() });
        }
    }
    let mut mtu = 1500;
    for f in &flows {
        mtu = mtu.max(match &f.kind {
            FlowKind::Tcp { kernel, .. } | FlowKind::Rpc { kernel, .. } => kernel.packet_bytes,
            FlowKind::Udp { packet_bytes, .. } => *packet_bytes,
        });
    }
    // Per-namespace sysctls: defaults first, then each flow's; conflicts are refused.
    let mut owner: BTreeMap<(usize, String), (String, String)> = BTreeMap::new();
    for h in hosts.iter_mut() {
        h.sysctls.insert("net.ipv6.conf.all.disable_ipv6".into(), "1".into());
        h.sysctls.insert("net.ipv6.conf.default.disable_ipv6".into(), "1".into());
        h.ip.push("link set lo up".into());
        h.ip.push(format!("link set dev {{dev}} mtu {mtu} up"));
        h.ip.push(format!("addr add {}/32 dev {{dev}}", node_addr(h.node)));
        h.ip.push("route add 198.18.0.0/15 dev {dev}".into());
    }
    for f in &flows {
        let (hs, hd) = (host_of_node[f.src_node].unwrap(), host_of_node[f.dst_node].unwrap());
        let (sa, da) = (flow_src_addr(f.id), flow_dst_addr(f.id));
        hosts[hs].ip.push(format!("addr add {sa}/32 dev {{dev}}"));
        hosts[hd].ip.push(format!("addr add {da}/32 dev {{dev}}"));
        let mut fwd = format!("route add {da}/32 dev {{dev}} src {sa}");
        let mut back = format!("route add {sa}/32 dev {{dev}} src {da}");
        if let FlowKind::Tcp { kernel, .. } | FlowKind::Rpc { kernel, .. } = &f.kind {
            // A request/response application sends both ways (request, response): each
            // host's route to the other carries the initial window and rto_min, each
            // host acknowledges at once when delayed ACKs are off, and every sysctl
            // applies to both hosts. The route is per destination address: the server's
            // route to this application's client address gives every response of the
            // application its initial window (docs/emulation.md, "Request/response").
            let both = matches!(f.kind, FlowKind::Rpc { .. });
            fwd += &format!(" initcwnd {}", kernel.initcwnd);
            if both {
                back += &format!(" initcwnd {}", kernel.initcwnd);
            }
            if let Some(ms) = kernel.rto_min_ms {
                fwd += &format!(" rto_min {ms}ms");
                if both {
                    back += &format!(" rto_min {ms}ms");
                }
            }
            if kernel.quickack {
                back += " quickack 1";
                if both {
                    fwd += " quickack 1";
                }
            }
            for (key, value, side) in &kernel.sysctls {
                let on: &[usize] = match (side, both) {
                    (_, true) | (Side::Both, _) => &[hs, hd],
                    (Side::Sender, false) => &[hs],
                    (Side::Receiver, false) => &[hd],
                };
                for &h in on {
                    let k = (h, key.to_string());
                    if let Some((other, v)) = owner.get(&k) {
                        if v != value {
                            bad.push(format!(
                                "flows '{other}' and '{}' need {key} = {v} and = {value} on host '{}': the kernel sets it once per host (network namespace)",
                                f.name, hosts[h].name
                            ));
                        }
                        continue;
                    }
                    owner.insert(k, (f.name.clone(), value.clone()));
                    hosts[h].sysctls.insert(key.to_string(), value.clone());
                }
            }
        }
        hosts[hs].ip.push(fwd);
        hosts[hd].ip.push(back);
    }
    if !bad.is_empty() {
        return Err(bad);
    }
    let stop_when_done = sc.duration.is_none() && !unbounded;
    Ok(Plan {
        name: sc.name.clone(),
        graph,
        routes,
        hosts,
        host_of_node,
        flows,
        mtu,
        duration_ns: sc.duration.map(|d| d.0),
        max_duration_ns: sc.max_duration.0,
        stop_when_done,
        record_cwnd: sc.record.cwnd,
        record_queue,
        record_drops: sc.record.drops,
        busy_sample_ns: sc.record.busy_sample_interval.map(|d| d.0),
        throughput_ns: sc.record.throughput_interval.map(|d| d.0),
        deviations,
        txns: Vec::new(),
    })
}

impl Plan {
    /// Draws every request/response transaction of the run with seed `seed`, as the
    /// simulator does (`app::Apps`): per application, arrivals from its
    /// `app:<name>:arrivals` substream (the first one from time 0, each next one from
    /// the previous), `batch` transactions per arrival, and each transaction's request
    /// then response size from `app:<name>:sizes`. Arrivals after the run's end
    /// (`duration`, else `max_duration`) are not drawn; one exactly at the end is, as the
    /// simulator opens it (it stays "open"). Transactions are numbered in
    /// time order over all applications (ties: scenario order, then batch order).
    pub fn schedule_transactions(&mut self, seed: u64) -> Result<(), String> {
        let end = self.duration_ns.unwrap_or(self.max_duration_ns);
        let mut all = Vec::new();
        for f in &self.flows {
            let FlowKind::Rpc { spec, .. } = &f.kind else { continue };
            let rate = |link: &str| self.graph.links.iter().find(|l| l.name == link).map(|l| l.params.rate);
            let ctx = format!("flows[{}] ('{}')", f.id, f.name);
            let mut app = RpcApp::new(spec, f.name.clone(), &ctx, f.src_node as u32, f.dst_node as u32, rate, seed)?;
            let mut prev = SimTime::ZERO;
            let mut batch = 0;
            while let Some(t) = app.arrivals.next(prev) {
                if t.0 > end {
                    break;
                }
                for _ in 0..app.batch {
                    let (request_bytes, response_bytes) = app.draw_sizes();
                    all.push(TxnPlan { g: 0, flow: f.id, batch, start_ns: t.0, request_bytes, response_bytes });
                }
                batch += 1;
                prev = t;
            }
        }
        if all.len() > u32::MAX as usize / 2 {
            return Err(format!("{} transactions: the emulator numbers at most 2^31", all.len()));
        }
        // Stable: a batch keeps its order, applications their scenario order at ties.
        all.sort_by_key(|t| (t.start_ns, t.flow));
        for (g, t) in all.iter_mut().enumerate() {
            t.g = g as u32;
        }
        self.txns = all;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> KernelFacts {
        KernelFacts { release: "t".into(), available_cc: vec!["reno".into(), "cubic".into()], has_rto_max_sysctl: false }
    }

    fn dumbbell(flows: &str) -> Scenario {
        serde_json::from_str(&format!(
            r#"{{"name": "t", "topology": {{"kind": "dumbbell", "pairs": 2,
                "bottleneck": {{"rate": 10000000, "delay": 20000000}},
                "sender_access": {{"rate": 100000000, "delay": 1000000}},
                "receiver_access": {{"rate": 100000000, "delay": 1000000}}}},
               "flows": {flows}, "duration": 5000000000}}"#
        ))
        .unwrap()
    }

    #[test]
    fn hosts_addresses_and_routes() {
        let sc = dumbbell(
            r#"[{"kind": "tcp", "src": "s0", "dst": "d0", "tcp": {"iw": 3}},
                {"kind": "tcp", "src": "s1", "dst": "d1", "cc": {"name": "cubic"}, "tcp": {"delayed_ack": false}}]"#,
        );
        let p = build(&sc, &facts()).unwrap();
        // Nodes s0 s1 r0 r1 d0 d1: the routers stay in the emulator.
        assert_eq!(p.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["s0", "s1", "d0", "d1"]);
        assert_eq!(p.host_of_node, [Some(0), Some(1), None, None, Some(2), Some(3)]);
        assert_eq!(flow_dst_addr(1), Ipv4Addr::new(198, 19, 0, 3));
        assert!(p.hosts[0].ip.contains(&"route add 198.19.0.1/32 dev {dev} src 198.19.0.2 initcwnd 3".to_string()));
        assert!(p.hosts[3].ip.contains(&"route add 198.19.0.4/32 dev {dev} src 198.19.0.3 quickack 1".to_string()));
        assert_eq!(p.lookup(Ipv4Addr::new(198, 19, 0, 3)), Some(AddrInfo { node: 5, flow: Some((1, true)) }));
        assert_eq!(p.lookup(Ipv4Addr::new(198, 19, 0, 4)), Some(AddrInfo { node: 1, flow: Some((1, false)) }));
        assert_eq!(p.lookup(node_addr(2)), Some(AddrInfo { node: 2, flow: None }));
        assert_eq!(p.lookup(Ipv4Addr::new(10, 0, 0, 1)), None);
        assert_eq!(p.mtu, 1500);
    }

    #[test]
    fn per_host_sysctl_conflicts_are_refused() {
        let sc = dumbbell(
            r#"[{"kind": "tcp", "src": "s0", "dst": "d0"},
                {"kind": "tcp", "name": "nosack", "src": "s0", "dst": "d1", "tcp": {"sack": false}}]"#,
        );
        let e = build(&sc, &facts()).err().expect("refused").join("\n");
        assert!(e.contains("net.ipv4.tcp_sack") && e.contains("host 's0'"), "{e}");
    }

    #[test]
    fn workload_flows_are_the_simulators() {
        // A parking lot with a [workload]: the emulator expands the same flows (names,
        // starts, sizes, CCs) from the run seed as the simulator does.
        let sc: Scenario = serde_json::from_value(serde_json::json!({
            "name": "lot", "duration": 20_000_000_000u64,
            "topology": {"kind": "parking_lot", "routers": 3, "access_rate": 100_000_000u64,
                "backbone": {"rate": 10_000_000u64, "delay": 5_000_000u64}},
            "flows": [],
            "workload": {"rtt_mean": 60_000_000u64, "classes": [
                {"name": "short", "count": 5, "size": {"dist": "pareto", "mean": 20000.0, "shape": 1.2},
                 "interarrival_mean": 1_000_000_000u64, "cc": {"name": "cubic"}, "mix_fraction": 0.4}]}
        }))
        .unwrap();
        let expanded = crate::workload_flows(&sc, 5).unwrap().expect("a workload expands");
        let p = build(&expanded, &facts()).unwrap();
        let sim = tcplab_core::sim::run(&sc, 5).unwrap();
        assert_eq!(p.flows.len(), 5);
        assert_eq!(p.flows.iter().map(|f| f.name.clone()).collect::<Vec<_>>(), sim.flows.name);
        let starts: Vec<f64> = p.flows.iter().map(|f| f.start_ns as f64 * 1e-9).collect();
        assert_eq!(starts, sim.flows.start_s);
        assert_eq!(p.flows.iter().map(|f| f.cc_name.clone()).collect::<Vec<_>>(), sim.flows.cc);
        assert!(sim.flows.cc.iter().any(|c| c == "reno") && sim.flows.cc.iter().any(|c| c == "cubic"));
    }

    #[test]
    fn endless_runs_are_refused() {
        let mut sc = dumbbell(r#"[{"kind": "tcp", "src": "s0", "dst": "d0"}]"#);
        sc.duration = None;
        let e = build(&sc, &facts()).err().expect("refused").join("\n");
        assert!(e.contains("set duration"), "{e}");
    }
    #[test]
    fn rpc_transactions_are_the_simulators() {
        // Two applications (Poisson 30/s with batches of 2; periodic 0.25 s) with
        // exponential response sizes: the emulator's schedule must be the simulator's
        // transactions, draw for draw (same substreams app:<name>:arrivals/sizes).
        let sc = dumbbell(
            r#"[{"kind": "rpc", "name": "web", "server": "s0", "client": "d0", "request": {"dist": "constant", "bytes": 200},
                 "response": {"dist": "exponential", "mean": 20000.0}, "arrivals": {"process": "poisson", "rate": 30.0},
                 "batch": 2, "stop": 2000000000, "tcp": {"iw": 3}},
                {"kind": "rpc", "server": "s1", "client": "d1", "request": {"dist": "constant", "bytes": 300},
                 "response": {"dist": "constant", "bytes": 15000}, "arrivals": {"process": "periodic", "interval": 250000000}}]"#,
        );
        let mut p = build(&sc, &facts()).unwrap();
        p.schedule_transactions(7).unwrap();
        let sim = tcplab_core::sim::run(&sc, 7).unwrap();
        let t = &sim.transactions;
        assert!(t.txn_id.len() > 40, "{} transactions", t.txn_id.len());
        assert_eq!(p.txns.len(), t.txn_id.len());
        for (i, x) in p.txns.iter().enumerate() {
            assert_eq!(x.g as u64, t.txn_id[i]);
            assert_eq!((x.request_bytes, x.response_bytes, x.batch), (t.request_bytes[i], t.response_bytes[i], t.batch[i]), "txn {i}");
            assert!((x.start_ns as f64 * 1e-9 - t.start_s[i]).abs() < 1e-9, "txn {i}: {} vs {}", x.start_ns, t.start_s[i]);
            assert_eq!(p.flows[x.flow].name, t.app[i]);
        }
        // The server's route to the client address carries the IW (and so does the
        // client's route back, for the request); rpc1 keeps the profile's IW10.
        assert!(p.hosts[0].ip.contains(&"route add 198.19.0.1/32 dev {dev} src 198.19.0.2 initcwnd 3".to_string()), "{:?}", p.hosts[0].ip);
        assert!(p.hosts[2].ip.contains(&"route add 198.19.0.2/32 dev {dev} src 198.19.0.1 initcwnd 3".to_string()), "{:?}", p.hosts[2].ip);
        assert!(matches!(p.flows[1].kind, FlowKind::Rpc { iw_segments: 10, .. }));
        assert_eq!(p.flows[1].name, "rpc1");
        // Periodic arrivals without stop run to the duration (5 s): 0, 0.25, ..., 5 s.
        assert_eq!(p.txns.iter().filter(|x| x.flow == 1).count(), 21);
        assert!(!p.stop_when_done);
    }

    #[test]
    fn txn_ports_cycle() {
        assert_eq!((txn_port(0), txn_port(39_999), txn_port(40_000)), (20_000, 59_999, 20_000));
    }
}
