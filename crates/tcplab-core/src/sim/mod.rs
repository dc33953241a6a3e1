//! The simulation: owns the scheduler, packets, links, routes and flows, and runs the
//! event loop. No globals: many `Simulation`s can run in one process.
//!
//! Event flow: an endpoint emits a segment → the packet is routed hop by hop; at each
//! hop it is offered to the outgoing link's queue → serialized (`TxDone`) → checked by
//! the error model → propagates (`Arrive`) → next hop or the destination endpoint.
//! On a fixed-rate link (drop-tail or RED, no MAC, no link layer: `fixed_rate.rs`) the
//! serialization and the error model's verdict are decided at enqueue and the packet
//! enters the pipe at once: no `TxDone`.

mod fixed_rate;
mod layered;
pub mod scheduler;

use crate::app::{rpc::RpcApp, AppOutbox, Apps};
use crate::cc;
use crate::metrics::recorder::Recorder;
use crate::metrics::{Digest, RunResult};
use crate::net::error::ErrorModel;
use crate::net::head_deque::prefetch;
use crate::net::jitter::LinkJitter;
use crate::net::link::Link;
use crate::net::packet::{Ecn, FlowId, LinkId, NodeId, Packet, PacketId, PacketPool, PacketRef, Transport};
use crate::net::queue::{DropCause, Verdict};
use crate::net::routing::Routes;
use crate::net::topology;
use crate::rng::RngStream;
use crate::scenario::{default_queue, FlowSpec, Interval, Scenario};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::{Phase, RtoEvent, TcpSender};
use crate::tcp::{Outbox, TimerKind};
use crate::time::{SimDuration, SimTime};
use scheduler::Scheduler;


#[derive(Clone, Copy, Debug)]
enum Event {
    TxDone(LinkId),
    /// The head of a fixed-rate link's corrupted frames leaves: it is dropped.
    Corrupt(LinkId),
    /// The head of a link's pipe arrives at its destination host. `pkt` and `flow`
    /// only say what to prefetch: the handler takes the packet from the pipe.
    ArriveHost { link: LinkId, pkt: PacketId, flow: FlowId },
    /// The head of a link's pipe arrives at a router, to leave on `next_link` (a
    /// prefetch hint as well).
    ArriveHop { link: LinkId, next_link: LinkId },
    FlowStart(FlowId),
    AppStop(FlowId),
    /// `lead`: how long before it fires the timer was set, ns, saturating
    /// (`fixed_rate::lead`); the fixed-rate path orders ties by it.
    Timer { flow: FlowId, kind: TimerKind, gen: u32, lead: u32 },
    UdpSend { flow: FlowId, lead: u32 },
    BusySample,
    /// An application's next arrival (`app`).
    AppArrival { app: u32, lead: u32 },
    /// A superframe boundary of a link's MAC.
    MacTick(LinkId),
    /// The receiver ACK timer of a link layer's channel.
    LlTimer { link: LinkId, channel: u8, gen: u32 },
}

// Events fill the scheduler's heap and lanes: keep them at 16 bytes.
const _: () = assert!(std::mem::size_of::<Event>() == 16);

struct TcpFlow {
    name: String,
    group: String,
    src: NodeId,
    dst: NodeId,
    start: SimTime,
    stop: Option<SimTime>,
    bytes: Option<u64>,
    cc_name: String,
    sender: TcpSender,
    receiver: TcpReceiver,
    established: Option<SimTime>,
    completed: Option<SimTime>,
    /// RTOs whose verdict (spurious or not) awaits the original's fate.
    pending_rtos: Vec<RtoEvent>,
    spurious_rtos: u64,
    spurious_syn_rtos: u64,
    last_trace: (u64, u64, u8, u64),
    record_owd: bool,
    /// Bytes delivered when the measurement window opened.
    delivered_at_window: u64,
}

struct UdpFlow {
    name: String,
    group: String,
    src: NodeId,
    dst: NodeId,
    start: SimTime,
    stop: Option<SimTime>,
    size: u32,
    interval: Interval,
    rng: RngStream,
    seq: u64,
    sent: u64,
    delivered: u64,
    lost: u64,
    owd_sum: f64,
    owd_max: f64,
    /// RFC 3550 §6.4.1 jitter state: last transit time and the estimate J.
    last_transit: Option<f64>,
    jitter: f64,
    record_owd: bool,
    /// Highest sequence number delivered so far, and deliveries not above it.
    max_seq: Option<u64>,
    out_of_order: u64,
}

impl TcpFlow {
    /// Offsets of the fields `deliver` and `flush_tcp` read (besides the endpoints).
    const HOT_OFFSETS: [usize; 3] = [
        std::mem::offset_of!(TcpFlow, pending_rtos),
        std::mem::offset_of!(TcpFlow, completed),
        std::mem::offset_of!(TcpFlow, src),
    ];
}

enum Flow {
    Tcp(Box<TcpFlow>),
    Udp(Box<UdpFlow>),
}

/// Events between two calls of a run's watcher (`Simulation::run_watched`), on
/// average: a few milliseconds of wall time at the event rates of `tcplab bench`.
pub const WATCH_EVERY: u32 = 1 << 14;

/// How a stretch of the event loop ended.
enum Progress {
    /// Every event before the limit was handled.
    Reached,
    /// Every finite flow completed and nothing else keeps the run going.
    Over,
    /// The watcher asked to stop.
    Stopped,
}

/// A simulation ready to run (or running).
pub struct Simulation {
    name: String,
    seed: u64,
    sched: Scheduler<Event>,
    pool: PacketPool,
    links: Vec<Link>,
    /// For each link into a host, the host's uplink (else `LinkId::MAX`): where the
    /// host's response to an arriving packet leaves, to prefetch it.
    reply_link: Vec<LinkId>,
    routes: Routes,
    node_names: Vec<String>,
    flows: Vec<Flow>,
    outbox: Outbox,
    end: SimTime,
    /// `duration` was given: the run ends at `end` exactly.
    fixed_end: bool,
    /// Start of the measurement window (`warmup`, or 0).
    window_start: SimTime,
    stop_when_done: bool,
    unfinished: usize,
    digest: Digest,
    record_cwnd: bool,
    record_queue: Vec<bool>,
    record_drops: bool,
    busy_interval: Option<SimDuration>,
    /// The series that follow packets: goodput bins and the packet trace (`metrics::recorder`).
    rec: Recorder,
    /// RFC 2140 ssthresh cache per destination node.
    cbi_cache: Vec<Option<u64>>,
    /// Each link's MAC label for the `links` table (`None` without a MAC).
    mac_labels: Vec<Option<String>>,
    /// Reused buffers of link-layer calls.
    ll_out: crate::net::linklayer::LlOutput,
    /// Each link's link-layer label for the `links` table.
    ll_labels: Vec<Option<&'static str>>,
    drops: u64,
    /// Timer events handled (delayed ACK, RTO, TLP, pacing, reorder), for `meta`.
    timer_events: u64,
    /// What the fixed-rate links' path keeps between events (`fixed_rate.rs`).
    fixed: fixed_rate::FixedState,
    result: RunResult,
    /// Request/response applications and their transactions (`app`).
    apps: Apps,
    app_out: AppOutbox,
}

impl Simulation {
    /// Builds a simulation, rejecting impossible scenarios with one line per problem
    /// (lines joined by `'\n'`), each naming the field: every link and every flow is
    /// checked, so a scenario with several problems reports them all at once.
    pub fn new(sc: &Scenario, seed: u64) -> Result<Simulation, String> {
        Self::build(sc, seed).map_err(|problems| problems.join("\n"))
    }

    /// Every problem that keeps `sc` from running, one message each (empty: it runs).
    /// The checks are those of `new`, which builds everything but runs nothing.
    pub fn problems(sc: &Scenario, seed: u64) -> Vec<String> {
        Self::build(sc, seed).err().unwrap_or_default()
    }

    fn build(sc: &Scenario, seed: u64) -> Result<Simulation, Vec<String>> {
        // Workload generators become hosts and flows first (`app::workload`).
        let expanded = crate::app::workload::expand(sc, seed).map_err(|e| vec![e])?;
        let sc = expanded.as_ref().unwrap_or(sc);
        let graph = topology::expand(&sc.topology).map_err(|e| vec![e])?;
        if graph.nodes.len() > crate::net::packet::MAX_NODES {
            return Err(vec![format!(
                "topology: {} nodes, at most {} are supported",
                graph.nodes.len(),
                crate::net::packet::MAX_NODES
            )]);
        }
        // Problems found so far: each link and each flow is checked before giving up.
        let mut problems: Vec<String> = Vec::new();
        let mut routes = Routes::new(&graph);
        let mut links = Vec::with_capacity(graph.links.len());
        for (i, l) in graph.links.iter().enumerate() {
            let mut qcfg = l.params.queue.clone().unwrap_or_else(default_queue);
            qcfg.set_link_rate(l.params.rate);
            let hash_seed = RngStream::new(seed, &format!("link:{}:flow_hash", l.name)).next_u64();
            let queue = qcfg.build_for_link(hash_seed).map_err(|e| format!("link '{}' queue: {e}", l.name));
            let error = l.params.error.as_ref().map(|e| {
                e.build(RngStream::new(seed, &format!("link:{}:error", l.name)))
                    .map_err(|m| format!("link '{}' error: {m}", l.name))
            });
            let mac = l.params.mac.as_ref().map(|m| m.build(l.params.rate).map_err(|e| format!("link '{}' {e}", l.name)));
            let jitter = LinkJitter::build(l.params.jitter.as_ref(), &l.name, seed);
            let (queue, error, mac, jitter): (_, Option<Box<dyn ErrorModel>>, _, _) =
                match (queue, error.transpose(), mac.transpose(), jitter) {
                    (Ok(q), Ok(e), Ok(m), Ok(j)) => (q, e, m, j),
                    (q, e, m, j) => {
                        problems.extend([q.err(), e.err(), m.err(), j.err()].into_iter().flatten());
                        continue;
                    }
                };
            let mut link = Link::new(
                i as LinkId,
                l.name.clone(),
                graph.ends[i].0,
                graph.ends[i].1,
                crate::time::Rate(l.params.rate),
                l.params.delay,
                queue,
                error,
                RngStream::new(seed, &format!("link:{}:queue", l.name)),
            );
            link.jitter = jitter;
            if let Some(m) = mac {
                link.mac = Some(m);
                link.layered = true;
            }
            link.hashes_flows = qcfg.hashes_flows();
            link.drops_queued = qcfg.drops_queued_packets();
            link.marks_ecn = qcfg.marks_ecn();
            links.push(link);
        }
        if problems.is_empty() {
            // Link layers and their queues need every link built.
            if let Err(e) = layered::build_link_layers(sc, &graph, &mut links).and_then(|()| layered::check_queues(&graph, &links)) {
                problems.push(e);
            }
            // The path of each link, once, from its configuration.
            for (l, g) in links.iter_mut().zip(&graph.links) {
                let q = g.params.queue.clone().unwrap_or_else(default_queue);
                l.fixed_rate = fixed_rate::fixed_rate_eligible(&q, l);
            }
        }
        let node = |field: &str, name: &str| {
            graph.node_index(name).ok_or_else(|| {
                let shown = graph.nodes.iter().take(20).map(String::as_str).collect::<Vec<_>>().join(", ");
                let more = if graph.nodes.len() > 20 { format!(", ... ({} nodes)", graph.nodes.len()) } else { String::new() };
                format!("{field}: unknown node '{name}'; nodes: {shown}{more}")
            })
        };
        let owd_all = sc.record.owd.iter().any(|s| s == "*");
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut unfinished = 0;
        let mut unbounded = false;
        let mut rpc_specs = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            match f {
                FlowSpec::Rpc(r) => rpc_specs.push((i, r)),
                FlowSpec::Tcp(t) => {
                    let name = t.name.clone().unwrap_or_else(|| format!("flow{i}"));
                    let ctx = format!("flows[{i}] ('{name}')");
                    let ends = match (node(&format!("{ctx}.src"), &t.src), node(&format!("{ctx}.dst"), &t.dst)) {
                        (Ok(src), Ok(dst)) if src == dst => Err(format!("{ctx}: src and dst are the same node")),
                        (Ok(src), Ok(dst)) => {
                            routes.prepare(dst);
                            routes.prepare(src);
                            if !routes.reachable(src, dst, &graph.ends) || !routes.reachable(dst, src, &graph.ends) {
                                Err(format!("{ctx}: no route between '{}' and '{}'", t.src, t.dst))
                            } else {
                                Ok((src, dst))
                            }
                        }
                        (a, b) => {
                            problems.extend([a.err(), b.err()].into_iter().flatten());
                            Err(String::new())
                        }
                    };
                    let times = match t.stop {
                        Some(stop) if stop <= t.start => Err(format!(
                            "{ctx}.stop ({} s) must come after start ({} s): the flow would send nothing",
                            stop.as_secs_f64(),
                            t.start.as_secs_f64()
                        )),
                        _ => Ok(()),
                    };
                    let bytes = if t.bytes == Some(0) { Err(format!("{ctx}.bytes must be at least 1")) } else { Ok(()) };
                    let cfg = t.tcp.resolve().map_err(|e| format!("{ctx}: {e}"));
                    let cc = cfg.as_ref().ok().map(|cfg| {
                        cc::build(&t.cc, &cfg.window(u64::MAX)).map_err(|e| format!("{ctx}.cc: {e}"))
                    });
                    let (src, dst, cfg, cc) = match (ends, times, bytes, cfg, cc) {
                        (Ok((src, dst)), Ok(()), Ok(()), Ok(cfg), Some(Ok(cc))) => (src, dst, cfg, cc),
                        (ends, times, bytes, cfg, cc) => {
                            let cc = cc.and_then(|c| c.err());
                            problems.extend(
                                [ends.err(), times.err(), bytes.err(), cfg.err(), cc]
                                    .into_iter()
                                    .flatten()
                                    .filter(|m| !m.is_empty()),
                            );
                            continue;
                        }
                    };
                    let per_packet_ce_echo = cc.needs_ecn();
                    let mut receiver = TcpReceiver::new(&cfg);
                    let sender = TcpSender::new(cfg, cc, t.bytes, None);
                    receiver.set_per_packet_ce_echo(per_packet_ce_echo);
                    if t.bytes.is_some() {
                        unfinished += 1;
                    } else if t.stop.is_none() {
                        unbounded = true;
                    }
                    let record_owd = owd_all || sc.record.owd.contains(&name);
                    flows.push(Flow::Tcp(Box::new(TcpFlow {
                        name,
                        group: t.group.clone(),
                        src,
                        dst,
                        start: t.start,
                        stop: t.stop,
                        bytes: t.bytes,
                        cc_name: t.cc.name.clone(),
                        sender,
                        receiver,
                        established: None,
                        completed: None,
                        pending_rtos: Vec::new(),
                        spurious_rtos: 0,
                        spurious_syn_rtos: 0,
                        last_trace: (u64::MAX, 0, 0, 0),
                        record_owd,
                        delivered_at_window: 0,
                    })));
                }
                FlowSpec::Udp(u) => {
                    let name = u.name.clone().unwrap_or_else(|| format!("flow{i}"));
                    let ctx = format!("flows[{i}] ('{name}')");
                    let ends = match (node(&format!("{ctx}.src"), &u.src), node(&format!("{ctx}.dst"), &u.dst)) {
                        (Ok(src), Ok(dst)) => {
                            routes.prepare(dst);
                            if !routes.reachable(src, dst, &graph.ends) {
                                Err(format!("{ctx}: no route from '{}' to '{}'", u.src, u.dst))
                            } else {
                                Ok((src, dst))
                            }
                        }
                        (a, b) => {
                            problems.extend([a.err(), b.err()].into_iter().flatten());
                            Err(String::new())
                        }
                    };
                    let mean = match u.interval {
                        Interval::Constant { mean } | Interval::Normal { mean, .. } | Interval::Exponential { mean } => mean,
                    };
                    let checks = [
                        (u.packet_bytes == 0).then(|| format!("{ctx}.packet_bytes must be at least 1")),
                        (mean.0 == 0).then(|| format!("{ctx}.interval.mean must be positive")),
                        u.stop.filter(|&stop| stop <= u.start).map(|stop| {
                            format!(
                                "{ctx}.stop ({} s) must come after start ({} s): the flow would send nothing",
                                stop.as_secs_f64(),
                                u.start.as_secs_f64()
                            )
                        }),
                    ];
                    let (src, dst) = match ends {
                        Ok(ends) if checks.iter().all(Option::is_none) => ends,
                        ends => {
                            problems.extend(ends.err().into_iter().chain(checks.into_iter().flatten()).filter(|m| !m.is_empty()));
                            continue;
                        }
                    };
                    if u.stop.is_none() {
                        unbounded = true;
                    }
                    let record_owd = owd_all || sc.record.owd.contains(&name);
                    flows.push(Flow::Udp(Box::new(UdpFlow {
                        rng: RngStream::new(seed, &format!("flow:{name}:interval")),
                        name,
                        group: u.group.clone(),
                        src,
                        dst,
                        start: u.start,
                        stop: u.stop,
                        size: u.packet_bytes,
                        interval: u.interval.clone(),
                        seq: 0,
                        sent: 0,
                        delivered: 0,
                        lost: 0,
                        owd_sum: 0.0,
                        owd_max: 0.0,
                        last_transit: None,
                        jitter: 0.0,
                        record_owd,
                        max_seq: None,
                        out_of_order: 0,
                    })));
                }
            }
        }
        let mut rpc_apps = Vec::with_capacity(rpc_specs.len());
        for (i, r) in rpc_specs {
            let name = r.name.clone().unwrap_or_else(|| format!("rpc{i}"));
            let ctx = format!("flows[{i}] ('{name}')");
            let (server, client) = match (node(&format!("{ctx}.server"), &r.server), node(&format!("{ctx}.client"), &r.client)) {
                (Ok(server), Ok(client)) => (server, client),
                (a, b) => {
                    problems.extend([a.err(), b.err()].into_iter().flatten());
                    continue;
                }
            };
            if server == client {
                problems.push(format!("{ctx}: server and client are the same node"));
                continue;
            }
            routes.prepare(server);
            routes.prepare(client);
            if !routes.reachable(client, server, &graph.ends) || !routes.reachable(server, client, &graph.ends) {
                problems.push(format!("{ctx}: no route between '{}' and '{}'", r.server, r.client));
                continue;
            }
            if let Some(stop) = r.stop.filter(|&stop| stop <= r.start) {
                problems.push(format!(
                    "{ctx}.stop ({} s) must come after start ({} s): no transaction would arrive",
                    stop.as_secs_f64(),
                    r.start.as_secs_f64()
                ));
                continue;
            }
            if !crate::app::arrivals::Arrivals::bounded(&r.arrivals, r.stop) {
                unbounded = true;
            }
            let rate = |link: &str| graph.links.iter().find(|l| l.name == link).map(|l| l.params.rate);
            match RpcApp::new(r, name, &ctx, server, client, rate, seed) {
                Ok(app) => rpc_apps.push(app),
                Err(e) => problems.push(e),
            }
        }
        let mut record_queue = vec![false; graph.links.len()];
        for q in &sc.record.queue {
            match graph.links.iter().position(|l| &l.name == q) {
                Some(idx) => record_queue[idx] = true,
                None => problems.push(format!("record.queue: unknown link '{q}'")),
            }
        }
        let end = SimTime(sc.duration.unwrap_or(sc.max_duration).0);
        let window_start = match (sc.warmup, sc.duration) {
            (None, _) => SimTime::ZERO,
            (Some(w), None) => {
                problems.push(format!(
                    "warmup ({} s) needs duration: the measurement window is [warmup, duration]",
                    w.as_secs_f64()
                ));
                SimTime::ZERO
            }
            (Some(w), Some(d)) if w >= d => {
                problems.push(format!(
                    "warmup ({} s) must be less than duration ({} s)",
                    w.as_secs_f64(),
                    d.as_secs_f64()
                ));
                SimTime::ZERO
            }
            (Some(w), Some(_)) => SimTime(w.0),
        };
        if sc.record.busy_sample_interval.is_some_and(|iv| iv.0 == 0) {
            problems.push("record.busy_sample_interval must be positive".into());
        }
        if sc.record.throughput_interval.is_some_and(|iv| iv.0 == 0) {
            problems.push("record.throughput_interval must be positive".into());
        }
        fn flow_name(f: &Flow) -> &str {
            match f {
                Flow::Tcp(t) => &t.name,
                Flow::Udp(u) => &u.name,
            }
        }
        let trace_all = sc.record.packets.iter().any(|s| s == "*");
        for p in sc.record.packets.iter().filter(|p| *p != "*") {
            if !flows.iter().any(|f| flow_name(f) == p) {
                problems.push(format!("record.packets: unknown flow '{p}'; accepted: \"*\" or the name of a tcp or udp flow"));
            }
        }
        let rec = Recorder::new(
            sc.record.throughput_interval,
            &flows.iter().map(|f| match f {
                Flow::Tcp(t) => t.start,
                Flow::Udp(u) => u.start,
            }).collect::<Vec<_>>(),
            flows.iter().map(|f| trace_all || sc.record.packets.iter().any(|p| p == flow_name(f))).collect(),
        );
        if !problems.is_empty() {
            return Err(problems);
        }
        let apps = Apps::new(rpc_apps, flows.len() as FlowId);
        let mut sim = Simulation {
            name: sc.name.clone(),
            seed,
            sched: Scheduler::with_capacity(1024),
            pool: PacketPool::with_capacity(4096),
            reply_link: links.iter().map(|l: &Link| routes.uplink(l.to).unwrap_or(LinkId::MAX)).collect(),
            routes,
            node_names: graph.nodes.clone(),
            cbi_cache: vec![None; graph.nodes.len()],
            mac_labels: graph.links.iter().map(|l| l.params.mac.as_ref().map(|m| m.label())).collect(),
            ll_out: Default::default(),
            ll_labels: graph.links.iter().map(|l| l.params.link_layer.as_ref().map(|x| x.label())).collect(),
            links,
            flows,
            outbox: Outbox::default(),
            end,
            fixed_end: sc.duration.is_some(),
            window_start,
            stop_when_done: sc.duration.is_none() && !unbounded,
            unfinished,
            digest: Digest::default(),
            record_cwnd: sc.record.cwnd,
            record_queue,
            record_drops: sc.record.drops,
            busy_interval: sc.record.busy_sample_interval,
            rec,
            drops: 0,
            timer_events: 0,
            fixed: fixed_rate::FixedState::default(),
            result: RunResult::default(),
            apps,
            app_out: AppOutbox::default(),
        };
        for (i, f) in sim.flows.iter().enumerate() {
            let (start, stop) = match f {
                Flow::Tcp(t) => (t.start, t.stop),
                Flow::Udp(u) => (u.start, u.stop),
            };
            sim.sched.schedule_timer(start, Event::FlowStart(i as FlowId));
            if let (Flow::Tcp(_), Some(stop)) = (f, stop) {
                sim.sched.schedule_timer(stop, Event::AppStop(i as FlowId));
            }
        }
        if let Some(iv) = sim.busy_interval {
            sim.sched.schedule_timer(SimTime(iv.0), Event::BusySample);
        }
        sim.apps.start(&mut sim.app_out);
        sim.flush_app(SimTime::ZERO);
        for (i, l) in sim.links.iter().enumerate() {
            if l.mac.is_some() {
                sim.sched.schedule_timer(SimTime::ZERO, Event::MacTick(i as LinkId));
            }
        }
        Ok(sim)
    }

    /// Bytes of per-flow state over all flows: each flow's slot and record (sender,
    /// receiver, timers, counters, names) and what they own on the heap (congestion
    /// control, SACK scoreboard, rate sampler, reassembly list). Requested bytes, not
    /// counting the allocator's per-allocation overhead.
    pub fn flow_state_bytes(&self) -> usize {
        self.flows
            .iter()
            .map(|f| {
                std::mem::size_of::<Flow>()
                    + match f {
                        Flow::Tcp(t) => {
                            std::mem::size_of::<TcpFlow>()
                                + t.name.capacity()
                                + t.group.capacity()
                                + t.cc_name.capacity()
                                + t.pending_rtos.capacity() * std::mem::size_of::<RtoEvent>()
                                + t.sender.heap_bytes()
                                + t.receiver.heap_bytes()
                        }
                        Flow::Udp(u) => std::mem::size_of::<UdpFlow>() + u.name.capacity() + u.group.capacity(),
                    }
            })
            .sum()
    }

    /// Bytes of link state over all links: each `Link` record and the buffers it owns
    /// (`Link::heap_bytes`), not counting the allocator's per-allocation overhead.
    pub fn link_state_bytes(&self) -> usize {
        self.links.iter().map(|l| std::mem::size_of::<Link>() + l.heap_bytes()).sum()
    }

    /// Runs to the end and returns the results.
    pub fn run(self) -> RunResult {
        self.run_watched(|_| true).expect("a watcher that never stops the run")
    }

    /// The simulated time at which the run ends at the latest: `duration`, or
    /// `max_duration` when it may end earlier (every finite flow completed).
    pub fn end_time(&self) -> SimTime {
        self.end
    }

    /// Runs to the end like `run`, calling `watch(now)` about every `WATCH_EVERY`
    /// events with the simulated time; stops and returns `None` as soon as `watch`
    /// returns false (an interrupt), `Some(results)` otherwise. The watcher sees the
    /// run, it cannot change it: the results are those of `run`, bit for bit.
    ///
    /// The event loop pays nothing per event for it: the run goes in slices of
    /// simulated time, each the existing `pop_before` bound of the loop, and the
    /// watcher is called between slices. A slice doubles while it holds fewer than
    /// `WATCH_EVERY / 2` events and shrinks in proportion when it held more than
    /// `2 * WATCH_EVERY`; a stretch without events is skipped. Events keep their
    /// order: every event before a slice's end is handled before any after it, as in
    /// one pass. What the watcher does, e.g. reading the clock and
    /// checking for Ctrl-C every 100 ms of wall time (`crates/tcplab-py`), is its own.
    ///
    /// Example:
    ///
    /// ```
    /// # let sc = tcplab_core::bench::scenario("dumbbell-10x100M-60s").unwrap();
    /// let sim = tcplab_core::sim::Simulation::new(&sc, 1).unwrap();
    /// let mut calls = 0;
    /// let stopped = sim.run_watched(|now| { calls += 1; now.as_secs_f64() < 1.0 });
    /// assert!(stopped.is_none() && calls > 0);
    /// ```
    pub fn run_watched(mut self, mut watch: impl FnMut(SimTime) -> bool) -> Option<RunResult> {
        let mut slice = SimDuration(1_000_000); // 1 ms to start with; adapts to the event rate
        // Events at the warm-up instant itself belong to the window.
        if self.window_start > SimTime::ZERO {
            match self.run_sliced(self.window_start, &mut slice, &mut watch) {
                Progress::Over => return Some(self.finish()),
                Progress::Stopped => return None,
                Progress::Reached => {}
            }
            self.open_window();
        }
        match self.run_sliced(SimTime(self.end.0.saturating_add(1)), &mut slice, &mut watch) {
            Progress::Stopped => None,
            Progress::Over | Progress::Reached => Some(self.finish()),
        }
    }

    /// Processes the events before `limit` in slices of simulated time, calling
    /// `watch` with the end of each slice but the last. A stretch without events is
    /// skipped (the next slice starts at the next event), so slices follow how dense
    /// the events are, not idle time; one that held too many shrinks in proportion.
    fn run_sliced(&mut self, limit: SimTime, slice: &mut SimDuration, watch: &mut impl FnMut(SimTime) -> bool) -> Progress {
        loop {
            let from = match self.sched.peek_time() {
                Some(next) if next < limit => next,
                _ => return Progress::Reached, // nothing due before the limit
            };
            let to = SimTime(from.0.saturating_add(slice.0).min(limit.0));
            let before = self.sched.events();
            if !self.run_before(to) {
                return Progress::Over;
            }
            if to >= limit {
                return Progress::Reached;
            }
            let events = self.sched.events() - before;
            let target = u64::from(WATCH_EVERY);
            if events < target / 2 {
                slice.0 = slice.0.saturating_mul(2);
            } else if events > 2 * target {
                slice.0 = ((u128::from(slice.0) * u128::from(target) / u128::from(events)) as u64).max(1);
            }
            if !watch(to) {
                return Progress::Stopped;
            }
        }
    }

    /// Processes the events before `limit`; false if the run is over (every finite
    /// flow completed and nothing else keeps it going).
    fn run_before(&mut self, limit: SimTime) -> bool {
        while let Some((now, ev)) = self.sched.pop_before(limit) {
            self.prefetch_next();
            self.handle(now, ev);
            if self.stop_when_done && self.unfinished == 0 && self.apps.done() {
                return false;
            }
        }
        true
    }

    /// Asks the CPU to start loading the state the next event will touch (its link or
    /// its flow) while this one is handled: with thousands of links and flows that
    /// state is rarely in cache, and the load then overlaps useful work.
    #[inline(always)]
    fn prefetch_next(&self) {
        let line = prefetch;
        match self.sched.next_hint() {
            Some(&Event::TxDone(l)) => self.prefetch_link(l, Link::HOT_BYTES, line),
            Some(&Event::ArriveHop { link, next_link }) => {
                self.prefetch_link(link, Link::ARRIVAL_BYTES, line);
                self.prefetch_link(next_link, Link::HOT_BYTES, line);
            }
            Some(&Event::ArriveHost { link, pkt, flow }) => {
                self.prefetch_link(link, Link::ARRIVAL_BYTES, line);
                let p = self.pool.slot_ptr(pkt) as *const u8;
                for off in (0..std::mem::size_of::<Packet>()).step_by(64) {
                    line(p.wrapping_add(off));
                }
                if let Some(Flow::Tcp(t)) = self.flows.get(flow as usize) {
                    // The connection's fields either end reads: its own few, the
                    // receiver's (a data segment) and the sender's first (an ACK).
                    let p = &**t as *const TcpFlow as *const u8;
                    for off in TcpFlow::HOT_OFFSETS {
                        line(p.wrapping_add(off));
                    }
                    let r = std::mem::offset_of!(TcpFlow, receiver);
                    for off in (0..std::mem::size_of::<TcpReceiver>()).step_by(64) {
                        line(p.wrapping_add(r + off));
                    }
                    let s = std::mem::offset_of!(TcpFlow, sender);
                    for off in TcpSender::HOT_OFFSETS {
                        line(p.wrapping_add(s + off));
                    }
                }
            }
            Some(&Event::Timer { flow, .. }) => {
                if let Some(Flow::Tcp(t)) = self.flows.get(flow as usize) {
                    line(&**t as *const TcpFlow as *const u8);
                }
            }
            _ => {}
        }
    }

    /// Prefetches the first `bytes` of link `l`: `Link::HOT_BYTES` for a link that
    /// will queue or transmit, `Link::ARRIVAL_BYTES` for one a packet arrives from.
    #[inline(always)]
    fn prefetch_link(&self, l: LinkId, bytes: usize, line: impl Fn(*const u8)) {
        if let Some(link) = self.links.get(l as usize) {
            let p = link as *const Link as *const u8;
            for off in (0..bytes).step_by(64) {
                line(p.wrapping_add(off));
            }
        }
    }

    /// Starts the measurement window at `window_start`: link, queue and UDP counters
    /// restart, and each TCP flow notes the bytes delivered so far. Once per run.
    fn open_window(&mut self) {
        let now = self.window_start;
        self.fixed_open_window(now);
        for l in self.links.iter_mut() {
            l.open_window(now);
        }
        for f in self.flows.iter_mut() {
            match f {
                Flow::Tcp(t) => t.delivered_at_window = t.receiver.delivered(),
                Flow::Udp(u) => {
                    (u.sent, u.delivered, u.lost) = (0, 0, 0);
                    (u.owd_sum, u.owd_max) = (0.0, 0.0);
                }
            }
        }
    }

    fn handle(&mut self, now: SimTime, ev: Event) {
        self.fixed.new_event();
        match ev {
            Event::TxDone(l) => self.on_tx_done(l, now),
            Event::Corrupt(l) => self.on_fixed_corrupt(l, now),
            Event::ArriveHost { link, .. } => self.on_arrive(link, None, now),
            Event::ArriveHop { link, next_link } => self.on_arrive(link, Some(next_link), now),
            Event::FlowStart(f) => self.on_flow_start(f, now),
            Event::AppStop(f) => {
                if let Flow::Tcp(t) = &mut self.flows[f as usize] {
                    t.sender.stop_app();
                }
            }
            Event::Timer { flow, kind, gen, lead } => {
                self.timer_events += 1;
                self.fixed.timer_fired(now, lead);
                self.on_timer(flow, kind, gen, now)
            }
            Event::UdpSend { flow, lead } => {
                self.fixed.timer_fired(now, lead);
                self.on_udp_send(flow, now)
            }
            Event::AppArrival { app, lead } => {
                self.fixed.timer_fired(now, lead);
                self.apps.on_arrival(app, now, &mut self.app_out);
                self.flush_app(now);
            }
            Event::MacTick(l) => self.on_mac_tick(l, now),
            Event::LlTimer { link, channel, gen } => self.on_ll_timer(link, channel, gen, now),
            Event::BusySample => {
                self.fixed_sync_all(SimTime(now.0 + 1));
                for l in self.links.iter_mut() {
                    l.stats.busy_samples += 1;
                    l.stats.nonempty_samples += (l.backlog_packets() > 0) as u64;
                }
                if let Some(iv) = self.busy_interval {
                    self.sched.schedule_timer(now + iv, Event::BusySample);
                }
            }
        }
    }

    // ---------------------------------------------------------------- network

    /// Hands `pkt`, now at `node`, to its destination endpoint or to its next link.
    /// Reads only the `PacketRef`, not the pooled packet.
    fn forward(&mut self, node: NodeId, pkt: PacketRef, now: SimTime) {
        if pkt.dst() == node {
            self.deliver(pkt.id, now);
            return;
        }
        match self.routes.next_hop(node, pkt.dst()) {
            Some(l) => self.enqueue(l, pkt, now),
            None => self.pool.free(pkt.id), // unreachable: validated at build time
        }
    }

    fn enqueue(&mut self, l: LinkId, pkt: PacketRef, now: SimTime) {
        let link = &self.links[l as usize];
        if link.fixed_rate {
            return self.fixed_enqueue(l, pkt, now);
        }
        if link.layered {
            return self.layered_enqueue(l, pkt, now);
        }
        let pool = &self.pool;
        let link = &mut self.links[l as usize];
        link.account(now);
        // The flow key stands for the 5-tuple: the flow id (addresses and ports) and
        // the direction; only flow-hashing disciplines ask for it.
        let verdict = link.enqueue(now, pkt, || {
            let p = pool.get(pkt.id);
            (p.flow << 1) | (p.src > p.dst) as u32
        });
        if self.book_verdict(l, pkt, verdict, now) {
            if self.links[l as usize].in_service.is_none() {
                self.start_next_tx(l, now);
            }
            self.links[l as usize].note_occupancy_max();
            self.trace_queue(l, now);
        }
        self.flush_aqm_drops(l, now);
    }

    /// Books a queue's verdict on `pkt` offered to link `l` (every link path): a drop
    /// is counted and handled, an acceptance counted and recorded. True when accepted.
    #[inline(always)]
    fn book_verdict(&mut self, l: LinkId, pkt: PacketRef, verdict: Verdict, now: SimTime) -> bool {
        let link = &mut self.links[l as usize];
        match verdict {
            Verdict::Dropped(cause) => {
                link.record_drop(cause);
                self.on_drop(l, pkt, cause, now);
                false
            }
            Verdict::Enqueued => {
                link.stats.enq_pkts += 1;
                link.stats.enq_bytes += pkt.size as u64;
                self.rec.enqueue(now, l, pkt, &self.pool);
                true
            }
        }
    }

    /// Takes the link's next packet from its queue and starts serializing it. A CE
    /// mark the queue set is written into the packet (and counted once).
    #[inline(always)]
    fn start_next_tx(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        if let Some(q) = link.dequeue(now) {
            if link.marks_ecn && q.ecn() == Ecn::Ce {
                let p = self.pool.get_mut(q.id);
                if p.ecn != Ecn::Ce {
                    p.ecn = Ecn::Ce;
                    link.stats.ce_marks += 1;
                }
            }
            let done = link.start_tx(q, now);
            self.rec.transmit(now, l, q, &self.pool);
            // The serialization time: a few values per link (data and ACK sizes).
            self.sched.schedule_after(done - now, Event::TxDone(l));
        }
    }

    /// Frees and records the packets a queue dropped besides an arriving one.
    #[inline(always)]
    fn flush_aqm_drops(&mut self, l: LinkId, now: SimTime) {
        let link = &self.links[l as usize];
        if link.drops_queued && !link.aqm_drops.is_empty() {
            self.free_aqm_drops(l, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn free_aqm_drops(&mut self, l: LinkId, now: SimTime) {
        let mut drops = std::mem::take(&mut self.links[l as usize].aqm_drops);
        for (p, cause) in drops.drain(..) {
            self.links[l as usize].record_drop(cause);
            self.on_drop(l, p, cause, now);
        }
        self.links[l as usize].aqm_drops = drops;
    }

    fn on_tx_done(&mut self, l: LinkId, now: SimTime) {
        if self.links[l as usize].layered {
            return self.layered_tx_done(l, now);
        }
        let link = &mut self.links[l as usize];
        let pkt = link.finish_tx(now);
        let lost = match link.error.as_mut() {
            // Airtime [now - serialization, now): a plain link sends without pause.
            Some(e) => e.is_lost(SimTime(now.0 - link.rate.tx_time(pkt.size).0), now, pkt.size),
            None => false,
        };
        link.account(now);
        self.start_next_tx(l, now);
        let link = &mut self.links[l as usize];
        if lost {
            link.record_drop(DropCause::Corruption);
            self.on_drop(l, pkt, DropCause::Corruption, now);
        } else {
            let (arrive, first) = link.pipe_push(now, pkt);
            if first {
                let ev = arrive_event(&self.routes, l, link.to, pkt);
                if link.jitter.is_none() {
                    // The propagation delay: one value per link, so a lane.
                    self.sched.schedule_after(link.delay, ev);
                } else {
                    self.sched.schedule(arrive, ev);
                }
            }
        }
        self.flush_aqm_drops(l, now);
        self.trace_queue(l, now);
    }

    /// The head of link `l`'s pipe arrives; `next_link` is the route its event found
    /// when it was scheduled (routes do not change during a run), to a router.
    fn on_arrive(&mut self, l: LinkId, next_link: Option<LinkId>, now: SimTime) {
        let link = &mut self.links[l as usize];
        let (pkt, left) = link.pipe_pop().expect("arrival from an empty pipe");
        let to = link.to;
        self.fixed.pipe_arrival(link, left, now);
        if let Some(&(next, head)) = link.pipe.front() {
            // Back to back with the one arriving now, it comes a serialization time
            // later: the offset of this link's `TxDone` lane. A fixed-rate link has no
            // `TxDone` events, so there its arrivals claim that lane.
            let ev = arrive_event(&self.routes, l, to, head);
            if link.fixed_rate && next - now == link.rate.tx_time(head.size) {
                self.sched.schedule_after(next - now, ev);
            } else {
                self.sched.schedule_after_if_lane(next - now, ev);
            }
        }
        if link.layered && matches!(self.pool.get(pkt.id).transport, Transport::Link(_)) {
            return self.on_link_frame(l, pkt, now);
        }
        if pkt.dst() == to {
            // The host's answer (an ACK, or the data an ACK releases) leaves on its
            // uplink after the endpoint's work: start loading that link now.
            if let Some(&up) = self.reply_link.get(l as usize) {
                self.prefetch_link(up, Link::HOT_BYTES, prefetch);
            }
            // An ACK: the sender's records sit behind pointers the previous event's
            // prefetch brought in; ask for them now, together, rather than one after
            // the other as `on_ack` reaches them.
            if let Some(Flow::Tcp(t)) = self.flows.get(pkt.flow as usize) {
                if t.src == to {
                    t.sender.prefetch_for_ack(prefetch);
                }
            }
        }
        match next_link {
            // Looked up once per hop, when the arrival was scheduled (`arrive_event`
            // makes an `ArriveHop` only for a packet not yet at its destination).
            Some(next) if next != LinkId::MAX => {
                debug_assert_ne!(pkt.dst(), to, "a router arrival at the destination");
                self.enqueue(next, pkt, now)
            }
            _ => self.forward(to, pkt, now),
        }
    }

    fn on_drop(&mut self, l: LinkId, pkt: PacketRef, cause: DropCause, now: SimTime) {
        let p = pkt;
        self.rec.drop(now, l, pkt, cause, &self.pool);
        if self.record_drops {
            let seq = self.pool.get(pkt.id).data_seq();
            self.result.series.drops.seq.push(seq);
        }
        self.pool.free(pkt.id);
        self.drops += 1;
        self.digest.mix(now.0 ^ ((l as u64) << 48) ^ ((cause as u64) << 40) ^ p.flow as u64);
        if self.apps.owns(p.flow) {
            self.apps.on_drop(p.flow);
        } else if let Flow::Udp(u) = &mut self.flows[p.flow as usize] {
            u.lost += 1;
        }
        if self.record_drops {
            let d = &mut self.result.series.drops;
            d.t_s.push(now.as_secs_f64());
            d.link.push(l);
            d.flow_id.push(p.flow);
            d.cause.push(cause.name());
        }
    }

    #[inline(always)]
    fn trace_queue(&mut self, l: LinkId, now: SimTime) {
        if self.record_queue[l as usize] {
            self.record_queue_row(l, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn record_queue_row(&mut self, l: LinkId, now: SimTime) {
        let link = &self.links[l as usize];
        let q = &mut self.result.series.queue;
        q.t_s.push(now.as_secs_f64());
        q.link.push(l);
        q.pkts.push(link.backlog_packets());
        q.bytes.push(link.backlog_bytes());
    }

    // ---------------------------------------------------------------- endpoints

    fn on_flow_start(&mut self, f: FlowId, now: SimTime) {
        match &mut self.flows[f as usize] {
            Flow::Tcp(t) => {
                if t.sender.config().cbi_ssthresh_reuse {
                    if let Some(ss) = self.cbi_cache[t.dst as usize] {
                        t.sender.w.ssthresh = ss;
                    }
                }
                t.sender.open(now, &mut self.outbox);
                self.flush_tcp(f, true, now);
            }
            Flow::Udp(_) => self.on_udp_send(f, now),
        }
    }

    fn on_timer(&mut self, f: FlowId, kind: TimerKind, gen: u32, now: SimTime) {
        if self.apps.owns(f) {
            self.apps.on_timer(f, kind, gen, now, &mut self.app_out);
            self.flush_app(now);
            return;
        }
        let Flow::Tcp(t) = &mut self.flows[f as usize] else { return };
        match kind {
            TimerKind::Rto => {
                if let Some(rto) = t.sender.on_timer(gen, now, &mut self.outbox) {
                    // Judge the timeout with the simulator's knowledge: if the receiver
                    // already holds the segment, its original was not lost.
                    let syn = rto.seq == 0;
                    let already = if syn { t.receiver.syn_received() } else { t.receiver.has_received(rto.seq) };
                    if already {
                        if syn { t.spurious_syn_rtos += 1 } else { t.spurious_rtos += 1 }
                    } else {
                        t.pending_rtos.push(rto);
                    }
                }
                self.flush_tcp(f, true, now);
            }
            TimerKind::DelAck => {
                t.receiver.on_timer(gen, now, &mut self.outbox);
                self.flush_tcp(f, false, now);
            }
            TimerKind::Pacing => {
                t.sender.on_pacing_timer(gen, now, &mut self.outbox);
                self.flush_tcp(f, true, now);
            }
            TimerKind::LossProbe => {
                t.sender.on_loss_probe_timer(gen, now, &mut self.outbox);
                self.flush_tcp(f, true, now);
            }
            TimerKind::Reorder => {
                t.sender.on_reorder_timer(gen, now, &mut self.outbox);
                self.flush_tcp(f, true, now);
            }
        }
    }

    /// Turns the outbox into packets: `data_dir` true for sender → receiver.
    fn flush_tcp(&mut self, f: FlowId, data_dir: bool, now: SimTime) {
        let Flow::Tcp(t) = &mut self.flows[f as usize] else { return };
        let (from, to) = if data_dir { (t.src, t.dst) } else { (t.dst, t.src) };
        if self.record_cwnd && t.sender.trace_dirty {
            t.sender.trace_dirty = false;
            let s = &t.sender;
            let row = (
                s.w.cwnd,
                s.w.ssthresh,
                s.ca_state().code(),
                s.rtt().srtt().map_or(0, |d| d.0) ^ s.rtt().rto().0.rotate_left(32),
            );
            if row != t.last_trace {
                t.last_trace = row;
                let c = &mut self.result.series.cwnd;
                c.t_s.push(now.as_secs_f64());
                c.flow_id.push(f);
                c.cwnd_bytes.push(s.w.cwnd);
                c.ssthresh_bytes.push((s.w.ssthresh != u64::MAX).then_some(s.w.ssthresh));
                c.srtt_s.push(s.rtt().srtt().map(|d| d.as_secs_f64()));
                c.rto_s.push(s.rtt().rto().as_secs_f64());
                c.state.push(s.ca_state().code());
            }
        }
        let mut out = std::mem::take(&mut self.outbox);
        for (kind, at, gen) in out.timers.drain(..) {
            self.sched.schedule_timer(at, Event::Timer { flow: f, kind, gen, lead: fixed_rate::lead(now, at) });
        }
        for seg in out.segments.drain(..) {
            let pkt = self.pool.alloc_ref(Packet {
                flow: f,
                src: from,
                dst: to,
                size: seg.size,
                transport: Transport::Tcp { hdr: seg.hdr, to_receiver: data_dir },
                sent_at: now,
                ecn: seg.ecn,
            });
            self.forward(from, pkt, now);
        }
        self.outbox = out;
    }

    /// Turns the applications' output into packets, timer events and arrival events.
    fn flush_app(&mut self, now: SimTime) {
        let mut out = std::mem::take(&mut self.app_out);
        for (flow, kind, at, gen) in out.timers.drain(..) {
            self.sched.schedule(at, Event::Timer { flow, kind, gen, lead: fixed_rate::lead(now, at) });
        }
        for (at, a) in out.arrivals.drain(..) {
            self.sched.schedule(at, Event::AppArrival { app: a, lead: fixed_rate::lead(now, at) });
        }
        for p in out.packets.drain(..) {
            let pkt = self.pool.alloc_ref(Packet {
                flow: p.flow,
                src: p.src,
                dst: p.dst,
                size: p.seg.size,
                transport: Transport::Tcp { hdr: p.seg.hdr, to_receiver: p.data },
                sent_at: now,
                ecn: Ecn::NotEct,
            });
            self.forward(p.src, pkt, now);
        }
        self.app_out = out;
    }

    fn deliver(&mut self, pkt: PacketId, now: SimTime) {
        let p = *self.pool.get(pkt);
        self.pool.free(pkt);
        if self.apps.owns(p.flow) {
            if let Transport::Tcp { hdr, to_receiver } = p.transport {
                self.digest.mix(now.0 ^ ((p.flow as u64) << 44) ^ hdr.seq.rotate_left(20) ^ hdr.ack.rotate_left(40));
                self.apps.on_packet(p.flow, &hdr, to_receiver, now, &mut self.app_out);
                self.flush_app(now);
            }
            return;
        }
        match (&mut self.flows[p.flow as usize], p.transport) {
            (Flow::Tcp(t), Transport::Tcp { hdr, to_receiver: true }) => {
                self.digest.mix(now.0 ^ ((p.flow as u64) << 44) ^ hdr.seq.rotate_left(20));
                // A copy older than an RTO's retransmission arrived: that RTO was spurious.
                if !t.pending_rtos.is_empty() {
                    let end = hdr.seq + hdr.len as u64 + (hdr.is_fin() || hdr.is_syn()) as u64;
                    let (mut sp, mut sp_syn) = (0, 0);
                    t.pending_rtos.retain(|r| {
                        let covers = (hdr.is_syn() && r.seq == 0) || (r.seq >= hdr.seq && r.seq < end);
                        if covers && hdr.tx_id < r.tx_id {
                            if r.seq == 0 { sp_syn += 1 } else { sp += 1 }
                            false
                        } else {
                            !covers
                        }
                    });
                    t.spurious_rtos += sp;
                    t.spurious_syn_rtos += sp_syn;
                }
                if t.record_owd && hdr.len > 0 {
                    let o = &mut self.result.series.owd;
                    o.t_s.push(now.as_secs_f64());
                    o.flow_id.push(p.flow);
                    o.owd_s.push(now.since(p.sent_at).as_secs_f64());
                }
                let before = t.receiver.delivered();
                let arrival = t.receiver.on_segment_ecn(&hdr, p.ecn, now, &mut self.outbox);
                self.rec.receive(now, &p, t.receiver.delivered() - before);
                if arrival.finished && t.completed.is_none() {
                    t.completed = Some(now);
                    self.unfinished -= 1;
                    if t.sender.config().cbi_ssthresh_reuse && t.sender.w.ssthresh != u64::MAX {
                        self.cbi_cache[t.dst as usize] = Some(t.sender.w.ssthresh);
                    }
                }
                self.flush_tcp(p.flow, false, now);
            }
            (Flow::Tcp(t), Transport::Tcp { hdr, to_receiver: false }) => {
                self.digest.mix(now.0 ^ ((p.flow as u64) << 44) ^ hdr.ack.rotate_left(40) ^ 1);
                self.rec.ack(now, &p);
                let was = t.sender.phase();
                t.sender.on_ack(&hdr, now, &mut self.outbox);
                if was == Phase::SynSent && t.sender.phase() == Phase::Established {
                    t.established = Some(now);
                }
                self.flush_tcp(p.flow, true, now);
            }
            (Flow::Udp(u), Transport::Udp { seq }) => {
                self.digest.mix(now.0 ^ ((p.flow as u64) << 44) ^ seq);
                self.rec.receive(now, &p, p.size as u64);
                u.delivered += 1;
                if u.max_seq.is_some_and(|m| seq <= m) {
                    u.out_of_order += 1;
                } else {
                    u.max_seq = Some(seq);
                }
                let owd = now.since(p.sent_at).as_secs_f64();
                u.owd_sum += owd;
                u.owd_max = u.owd_max.max(owd);
                // RFC 3550 §6.4.1: J += (|D| - J)/16 with D the change in transit time.
                if let Some(prev) = u.last_transit {
                    u.jitter += ((owd - prev).abs() - u.jitter) / 16.0;
                }
                u.last_transit = Some(owd);
                if u.record_owd {
                    let o = &mut self.result.series.owd;
                    o.t_s.push(now.as_secs_f64());
                    o.flow_id.push(p.flow);
                    o.owd_s.push(owd);
                }
            }
            _ => {}
        }
    }

    fn on_udp_send(&mut self, f: FlowId, now: SimTime) {
        let Flow::Udp(u) = &mut self.flows[f as usize] else { return };
        if u.stop.is_some_and(|s| now >= s) {
            return;
        }
        let pkt = self.pool.alloc_ref(Packet {
            flow: f,
            src: u.src,
            dst: u.dst,
            size: u.size,
            transport: Transport::Udp { seq: u.seq },
            sent_at: now,
            ecn: Ecn::NotEct,
        });
        u.seq += 1;
        u.sent += 1;
        let gap = match u.interval {
            Interval::Constant { mean } => mean,
            Interval::Normal { mean, sigma } => {
                // Truncated at zero: a negative draw means back-to-back.
                SimDuration::from_secs_f64(u.rng.normal(mean.as_secs_f64(), sigma.as_secs_f64()))
            }
            Interval::Exponential { mean } => SimDuration::from_secs_f64(u.rng.exponential(mean.as_secs_f64())),
        };
        let src = u.src;
        self.sched.schedule_timer(now + gap, Event::UdpSend { flow: f, lead: fixed_rate::lead(now, now + gap) });
        self.forward(src, pkt, now);
    }

    // ---------------------------------------------------------------- results

    fn finish(mut self) -> RunResult {
        // With `duration` the run ends there, whenever its last event was; without
        // it, at the last event processed (the last completion, or the safety cap).
        let end = if self.fixed_end { self.end } else { self.sched.now().min(self.end) };
        self.fixed_finish(end);
        let (window_start, window_end) = (self.window_start.as_secs_f64(), end.as_secs_f64());
        let window_ns = end.since(self.window_start).0;
        let mut r = std::mem::take(&mut self.result);
        let names = &self.node_names;
        for (i, f) in self.flows.iter().enumerate() {
            match f {
                Flow::Tcp(t) => {
                    let ft = &mut r.flows;
                    let s = t.sender.stats();
                    ft.flow_id.push(i as u32);
                    ft.name.push(t.name.clone());
                    ft.group.push(t.group.clone());
                    ft.cc.push(t.cc_name.clone());
                    ft.src.push(names[t.src as usize].clone());
                    ft.dst.push(names[t.dst as usize].clone());
                    ft.start_s.push(t.start.as_secs_f64());
                    ft.established_s.push(t.established.map(|x| x.as_secs_f64()));
                    ft.completed_s.push(t.completed.map(|x| x.as_secs_f64()));
                    let elapsed = t.completed.map(|c| c.since(t.start).as_secs_f64());
                    ft.elapsed_s.push(elapsed);
                    ft.bytes_target.push(t.bytes);
                    let delivered = t.receiver.delivered();
                    ft.bytes_delivered.push(delivered);
                    // Goodput over the flow's part of the window: from its start (or
                    // the warm-up) to its completion (or its stop, or the end).
                    let from = t.start.max(self.window_start);
                    let to = t.completed.or(t.stop).map_or(end, |x| x.min(end)).max(from);
                    let before = if t.start >= self.window_start { 0 } else { t.delivered_at_window };
                    let span = to.since(from).as_secs_f64();
                    let bits = (delivered - before) as f64 * 8.0;
                    ft.goodput_bps.push(if span > 0.0 { bits / span } else { 0.0 });
                    ft.window_start_s.push(from.as_secs_f64());
                    ft.window_end_s.push(to.as_secs_f64());
                    ft.segs_sent.push(s.segs_sent);
                    ft.retransmits.push(s.retransmits);
                    ft.fast_retransmits.push(s.fast_retransmits);
                    ft.rtos.push(s.rtos);
                    ft.spurious_rtos.push(t.spurious_rtos);
                    ft.syn_retransmits.push(s.syn_retransmits);
                    ft.spurious_syn_rtos.push(t.spurious_syn_rtos);
                    ft.frto_spurious.push(s.frto_spurious);
                    ft.ecn_reductions.push(s.ecn_reductions);
                    ft.tlp_probes.push(s.tlp_probes);
                    ft.final_cwnd_bytes.push(t.sender.w.cwnd);
                    ft.final_ssthresh_bytes.push((t.sender.w.ssthresh != u64::MAX).then_some(t.sender.w.ssthresh));
                    ft.final_srtt_s.push(t.sender.rtt().srtt().map(|d| d.as_secs_f64()));
                }
                Flow::Udp(u) => {
                    let ut = &mut r.udp;
                    ut.flow_id.push(i as u32);
                    ut.name.push(u.name.clone());
                    ut.group.push(u.group.clone());
                    ut.src.push(names[u.src as usize].clone());
                    ut.dst.push(names[u.dst as usize].clone());
                    ut.window_start_s.push(window_start);
                    ut.window_end_s.push(window_end);
                    ut.pkts_sent.push(u.sent);
                    ut.pkts_delivered.push(u.delivered);
                    ut.pkts_lost.push(u.lost);
                    let any = u.delivered > 0;
                    ut.owd_mean_s.push(any.then(|| u.owd_sum / u.delivered as f64));
                    ut.owd_max_s.push(any.then_some(u.owd_max));
                    ut.jitter_s.push(any.then_some(u.jitter));
                    ut.pkts_out_of_order.push(u.out_of_order);
                }
            }
        }
        // Goodput rows run to each flow's completion, else to the end of the run.
        let last: Vec<SimTime> = self
            .flows
            .iter()
            .map(|f| match f {
                Flow::Tcp(t) => t.completed.unwrap_or(end),
                Flow::Udp(_) => end,
            })
            .collect();
        r.series.throughput = self.rec.throughput(end, &last);
        r.series.packets = self.rec.take_packets();
        let (apps, records) = std::mem::replace(&mut self.apps, Apps::new(Vec::new(), 0)).finish();
        for rec in &records {
            let a = &apps[rec.app as usize];
            r.transactions.push(rec, &a.name, &a.group, &names[a.client as usize], &names[a.server as usize]);
        }
        let mut bottleneck_pkts = 0;
        let window_s = window_ns as f64 * 1e-9;
        for l in self.links.iter_mut() {
            l.account(end);
            let q = &mut r.queues;
            q.link.push(l.name.clone());
            q.window_start_s.push(window_start);
            q.window_end_s.push(window_end);
            q.enq_pkts.push(l.stats.enq_pkts);
            q.enq_bytes.push(l.stats.enq_bytes);
            q.drops_overflow.push(l.stats.drops[DropCause::Overflow as usize]);
            q.drops_early.push(l.stats.drops[DropCause::Early as usize]);
            q.drops_forced.push(l.stats.drops[DropCause::Forced as usize]);
            q.drops_corruption.push(l.stats.drops[DropCause::Corruption as usize]);
            q.ce_marks.push(l.stats.ce_marks);
            let t_ns = window_ns.max(1) as f64;
            q.occ_mean_pkts.push(l.stats.occ_pkt_ns as f64 / t_ns);
            q.occ_max_pkts.push(l.stats.occ_max_pkts);
            q.occ_mean_bytes.push(l.stats.occ_byte_ns as f64 / t_ns);
            q.occ_max_bytes.push(l.stats.occ_max_bytes);
            let lt = &mut r.links;
            lt.link.push(l.name.clone());
            lt.window_start_s.push(window_start);
            lt.window_end_s.push(window_end);
            lt.from.push(names[l.from as usize].clone());
            lt.to.push(names[l.to as usize].clone());
            lt.rate_bps.push(l.rate.0);
            lt.delay_s.push(l.delay.as_secs_f64());
            lt.tx_pkts.push(l.stats.tx_pkts);
            lt.tx_bytes.push(l.stats.tx_bytes);
            lt.utilisation.push(if window_ns > 0 { l.busy_ns_at(end) as f64 * 1e-9 / window_s } else { 0.0 });
            lt.busy_sample_fraction.push(
                (l.stats.busy_samples > 0).then(|| l.stats.nonempty_samples as f64 / l.stats.busy_samples as f64),
            );
            lt.realised_per.push(l.error_stats().map(|e| e.per()));
            let mac = l.mac_stats();
            lt.mac.push(self.mac_labels[l.id as usize].clone());
            lt.mac_slots_allocated.push(mac.map(|m| m.slots_allocated));
            lt.mac_requests.push(mac.map(|m| m.requests));
            let ll = l.ll_stats();
            lt.ll.push(self.ll_labels[l.id as usize]);
            lt.ll_frames_sent.push(ll.map(|s| s.frames_sent));
            lt.ll_frames_retransmitted.push(ll.map(|s| s.frames_retransmitted));
            lt.ll_fec_frames_sent.push(ll.map(|s| s.fec_frames_sent));
            lt.ll_fec_blocks.push(ll.map(|s| s.fec_blocks));
            lt.ll_fec_blocks_recovered.push(ll.map(|s| s.fec_blocks_recovered));
            lt.ll_frames_recovered.push(ll.map(|s| s.frames_recovered));
            lt.ll_frames_given_up.push(ll.map(|s| s.frames_given_up));
            lt.ll_residual_loss.push(ll.map(|s| s.residual_loss()));
            lt.ll_frames_corrupted.push(ll.map(|s| s.frames_corrupted));
            lt.ll_acks_sent.push(ll.map(|s| s.acks_sent));
            if l.name == "bottleneck" {
                bottleneck_pkts = l.tx_pkts_before_window + l.stats.tx_pkts;
            }
        }
        r.meta = crate::metrics::Meta {
            name: self.name.clone(),
            seed: self.seed,
            sim_end_s: end.as_secs_f64(),
            window_start_s: window_start,
            events: self.sched.events(),
            digest: format!("{:016x}", self.digest.0),
            bottleneck_pkts,
            drops: self.drops,
            timer_events: self.timer_events,
            peak_packets: self.pool.capacity_used(),
            flow_state_bytes: self.flow_state_bytes() as u64,
            link_names: self.links.iter().map(|l| l.name.clone()).collect(),
        };
        r
    }
}

/// The event for `pkt`, at the head of link `link`'s pipe, reaching node `to`.
#[inline]
fn arrive_event(routes: &Routes, link: LinkId, to: NodeId, pkt: PacketRef) -> Event {
    if pkt.dst() == to {
        return Event::ArriveHost { link, pkt: pkt.id, flow: pkt.flow };
    }
    // Unreachable destinations are rejected at build time; LinkId::MAX just names no link.
    Event::ArriveHop { link, next_link: routes.next_hop(to, pkt.dst()).unwrap_or(LinkId::MAX) }
}

/// Builds and runs a scenario.
pub fn run(sc: &Scenario, seed: u64) -> Result<RunResult, String> {
    Ok(Simulation::new(sc, seed)?.run())
}
