//! The simulation: owns the scheduler, packets, links, routes and flows, and runs the
//! event loop. No globals: many `Simulation`s can run in one process.
//!
//! Event flow: an endpoint emits a segment → the packet is routed hop by hop; at each
//! hop it is offered to the outgoing link's queue → serialized (`TxDone`) → checked by
//! the error model → propagates (`Arrive`) → next hop or the destination endpoint.

pub mod scheduler;

use crate::cc::{self, Window};
use crate::metrics::{Digest, RunResult};
use crate::net::error::ErrorModel;
use crate::net::link::Link;
use crate::net::packet::{Ecn, FlowId, LinkId, NodeId, Packet, PacketId, PacketPool, Transport};
use crate::net::queue::{DequeueCtx, DropCause, EnqueueCtx, QueuedPacket, Verdict};
use crate::net::topology;
use crate::rng::RngStream;
use crate::scenario::{default_queue, FlowSpec, Interval, Scenario};
use crate::tcp::config::TcpConfig;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::{Phase, RtoEvent, TcpSender};
use crate::tcp::{Outbox, TimerKind};
use crate::time::{SimDuration, SimTime};
use scheduler::Scheduler;

#[derive(Clone, Copy, Debug)]
enum Event {
    TxDone(LinkId),
    Arrive(LinkId),
    FlowStart(FlowId),
    AppStop(FlowId),
    Timer { flow: FlowId, kind: TimerKind, gen: u32 },
    UdpSend(FlowId),
    BusySample,
}

struct TcpFlow {
    name: String,
    group: String,
    src: NodeId,
    dst: NodeId,
    start: SimTime,
    stop: Option<SimTime>,
    bytes: Option<u64>,
    cc_name: String,
    cfg: TcpConfig,
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
}

enum Flow {
    Tcp(Box<TcpFlow>),
    Udp(Box<UdpFlow>),
}

/// A simulation ready to run (or running).
pub struct Simulation {
    name: String,
    seed: u64,
    sched: Scheduler<Event>,
    pool: PacketPool,
    links: Vec<Link>,
    routes: Vec<Vec<Option<u32>>>,
    node_names: Vec<String>,
    flows: Vec<Flow>,
    outbox: Outbox,
    end: SimTime,
    stop_when_done: bool,
    unfinished: usize,
    digest: Digest,
    record_cwnd: bool,
    record_queue: Vec<bool>,
    record_drops: bool,
    busy_interval: Option<SimDuration>,
    /// RFC 2140 ssthresh cache per destination node.
    cbi_cache: Vec<Option<u64>>,
    drops: u64,
    result: RunResult,
}

impl Simulation {
    /// Builds a simulation, rejecting impossible scenarios with a message naming the field.
    pub fn new(sc: &Scenario, seed: u64) -> Result<Simulation, String> {
        let graph = topology::expand(&sc.topology)?;
        let routes = topology::routes(&graph);
        let mut links = Vec::with_capacity(graph.links.len());
        for (i, l) in graph.links.iter().enumerate() {
            let mut qcfg = l.params.queue.clone().unwrap_or_else(default_queue);
            qcfg.set_link_rate(l.params.rate);
            let hash_seed = RngStream::new(seed, &format!("link:{}:flow_hash", l.name)).next_u64();
            let queue = qcfg.build(hash_seed).map_err(|e| format!("link '{}' queue: {e}", l.name))?;
            let error: Option<Box<dyn ErrorModel>> = match &l.params.error {
                None => None,
                Some(e) => Some(
                    e.build(RngStream::new(seed, &format!("link:{}:error", l.name)))
                        .map_err(|m| format!("link '{}' error: {m}", l.name))?,
                ),
            };
            let mut link = Link::new(
                i as LinkId,
                l.name.clone(),
                graph.node_index(&l.from).unwrap(),
                graph.node_index(&l.to).unwrap(),
                crate::time::Rate(l.params.rate),
                l.params.delay,
                queue,
                error,
                RngStream::new(seed, &format!("link:{}:queue", l.name)),
            );
            link.hashes_flows = qcfg.hashes_flows();
            link.drops_queued = qcfg.drops_queued_packets();
            link.marks_ecn = qcfg.marks_ecn();
            links.push(link);
        }
        let node = |field: &str, name: &str| {
            graph.node_index(name).ok_or_else(|| {
                format!("{field}: unknown node '{name}'; nodes: {}", graph.nodes.join(", "))
            })
        };
        let owd_all = sc.record.owd.iter().any(|s| s == "*");
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut unfinished = 0;
        let mut unbounded = false;
        for (i, f) in sc.flows.iter().enumerate() {
            match f {
                FlowSpec::Tcp(t) => {
                    let name = t.name.clone().unwrap_or_else(|| format!("flow{i}"));
                    let ctx = format!("flows[{i}] ('{name}')");
                    let src = node(&format!("{ctx}.src"), &t.src)?;
                    let dst = node(&format!("{ctx}.dst"), &t.dst)?;
                    if src == dst {
                        return Err(format!("{ctx}: src and dst are the same node"));
                    }
                    if routes[src as usize][dst as usize].is_none() || routes[dst as usize][src as usize].is_none() {
                        return Err(format!("{ctx}: no route between '{}' and '{}'", t.src, t.dst));
                    }
                    if t.bytes == Some(0) {
                        return Err(format!("{ctx}.bytes must be at least 1"));
                    }
                    let cfg = t.tcp.resolve().map_err(|e| format!("{ctx}: {e}"))?;
                    let w = Window::new(cfg.iw.bytes(cfg.mss), u64::MAX, cfg.mss, cfg.byte_counting, cfg.abc_limit);
                    let cc = cc::build(&t.cc, &w).map_err(|e| format!("{ctx}.cc: {e}"))?;
                    let per_packet_ce_echo = cc.needs_ecn();
                    let sender = TcpSender::new(cfg.clone(), cc, t.bytes, None);
                    let mut receiver = TcpReceiver::new(&cfg);
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
                        cfg,
                        sender,
                        receiver,
                        established: None,
                        completed: None,
                        pending_rtos: Vec::new(),
                        spurious_rtos: 0,
                        spurious_syn_rtos: 0,
                        last_trace: (u64::MAX, 0, 0, 0),
                        record_owd,
                    })));
                }
                FlowSpec::Udp(u) => {
                    let name = u.name.clone().unwrap_or_else(|| format!("flow{i}"));
                    let ctx = format!("flows[{i}] ('{name}')");
                    let src = node(&format!("{ctx}.src"), &u.src)?;
                    let dst = node(&format!("{ctx}.dst"), &u.dst)?;
                    if routes[src as usize][dst as usize].is_none() {
                        return Err(format!("{ctx}: no route from '{}' to '{}'", u.src, u.dst));
                    }
                    if u.packet_bytes == 0 {
                        return Err(format!("{ctx}.packet_bytes must be at least 1"));
                    }
                    let mean = match u.interval {
                        Interval::Constant { mean } | Interval::Normal { mean, .. } | Interval::Exponential { mean } => mean,
                    };
                    if mean.0 == 0 {
                        return Err(format!("{ctx}.interval.mean must be positive"));
                    }
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
                    })));
                }
            }
        }
        let mut record_queue = vec![false; links.len()];
        for q in &sc.record.queue {
            let idx = links.iter().position(|l| &l.name == q).ok_or_else(|| {
                format!("record.queue: unknown link '{q}'")
            })?;
            record_queue[idx] = true;
        }
        let end = SimTime(sc.duration.unwrap_or(sc.max_duration).0);
        let mut sim = Simulation {
            name: sc.name.clone(),
            seed,
            sched: Scheduler::with_capacity(1024),
            pool: PacketPool::with_capacity(4096),
            routes,
            node_names: graph.nodes.clone(),
            cbi_cache: vec![None; graph.nodes.len()],
            links,
            flows,
            outbox: Outbox::default(),
            end,
            stop_when_done: sc.duration.is_none() && !unbounded,
            unfinished,
            digest: Digest::default(),
            record_cwnd: sc.record.cwnd,
            record_queue,
            record_drops: sc.record.drops,
            busy_interval: sc.record.busy_sample_interval,
            drops: 0,
            result: RunResult::default(),
        };
        for (i, f) in sim.flows.iter().enumerate() {
            let (start, stop) = match f {
                Flow::Tcp(t) => (t.start, t.stop),
                Flow::Udp(u) => (u.start, u.stop),
            };
            sim.sched.schedule(start, Event::FlowStart(i as FlowId));
            if let (Flow::Tcp(_), Some(stop)) = (f, stop) {
                sim.sched.schedule(stop, Event::AppStop(i as FlowId));
            }
        }
        if let Some(iv) = sim.busy_interval {
            if iv.0 == 0 {
                return Err("record.busy_sample_interval must be positive".into());
            }
            sim.sched.schedule(SimTime(iv.0), Event::BusySample);
        }
        Ok(sim)
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> RunResult {
        while let Some(t) = self.sched.peek_time() {
            if t > self.end {
                break;
            }
            let (now, ev) = self.sched.pop().expect("peeked");
            self.handle(now, ev);
            if self.stop_when_done && self.unfinished == 0 {
                break;
            }
        }
        self.finish()
    }

    fn handle(&mut self, now: SimTime, ev: Event) {
        match ev {
            Event::TxDone(l) => self.on_tx_done(l, now),
            Event::Arrive(l) => self.on_arrive(l, now),
            Event::FlowStart(f) => self.on_flow_start(f, now),
            Event::AppStop(f) => {
                if let Flow::Tcp(t) = &mut self.flows[f as usize] {
                    t.sender.stop_app();
                }
            }
            Event::Timer { flow, kind, gen } => self.on_timer(flow, kind, gen, now),
            Event::UdpSend(f) => self.on_udp_send(f, now),
            Event::BusySample => {
                for l in self.links.iter_mut() {
                    l.stats.busy_samples += 1;
                    l.stats.nonempty_samples += (l.queue.len_packets() > 0) as u64;
                }
                if let Some(iv) = self.busy_interval {
                    self.sched.schedule(now + iv, Event::BusySample);
                }
            }
        }
    }

    // ---------------------------------------------------------------- network

    fn forward(&mut self, node: NodeId, pkt: PacketId, now: SimTime) {
        let dst = self.pool.get(pkt).dst;
        if dst == node {
            self.deliver(pkt, now);
            return;
        }
        match self.routes[node as usize][dst as usize] {
            Some(l) => self.enqueue(l, pkt, now),
            None => self.pool.free(pkt), // unreachable: validated at build time
        }
    }

    fn enqueue(&mut self, l: LinkId, pkt: PacketId, now: SimTime) {
        let p = self.pool.get(pkt);
        let link = &mut self.links[l as usize];
        // The flow key stands for the 5-tuple: the flow id (addresses and ports) and
        // the direction.
        let flow_key = if link.hashes_flows { (p.flow << 1) | (p.src > p.dst) as u32 } else { 0 };
        let queued = QueuedPacket { id: pkt, size: p.size, ecn: p.ecn };
        link.account(now);
        let mut ctx = EnqueueCtx {
            now,
            in_service_bytes: link.in_service.map(|(_, s)| s),
            rng: &mut link.queue_rng,
            flow_key,
            dropped: &mut link.aqm_drops,
        };
        match link.queue.enqueue(queued, &mut ctx) {
            Verdict::Dropped(cause) => {
                link.record_drop(cause);
                self.on_drop(l, pkt, cause, now);
            }
            Verdict::Enqueued => {
                link.stats.enq_pkts += 1;
                link.stats.enq_bytes += queued.size as u64;
                if link.in_service.is_none() {
                    self.start_next_tx(l, now);
                }
                self.links[l as usize].note_occupancy_max();
                self.trace_queue(l, now);
            }
        }
        self.flush_aqm_drops(l, now);
    }

    /// Takes the link's next packet from its queue and starts serializing it. A CE
    /// mark the queue set is written into the packet (and counted once).
    #[inline(always)]
    fn start_next_tx(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        let mut ctx = DequeueCtx { now, dropped: &mut link.aqm_drops };
        if let Some(q) = link.queue.dequeue(&mut ctx) {
            if link.marks_ecn && q.ecn == Ecn::Ce {
                let p = self.pool.get_mut(q.id);
                if p.ecn != Ecn::Ce {
                    p.ecn = Ecn::Ce;
                    link.stats.ce_marks += 1;
                }
            }
            let done = link.start_tx(q.id, q.size, now);
            self.sched.schedule(done, Event::TxDone(l));
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
            self.on_drop(l, p.id, cause, now);
        }
        self.links[l as usize].aqm_drops = drops;
    }

    fn on_tx_done(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        let (pkt, size) = link.finish_tx(now);
        let lost = match link.error.as_mut() {
            Some(e) => e.is_lost(now, size),
            None => false,
        };
        link.account(now);
        self.start_next_tx(l, now);
        let link = &mut self.links[l as usize];
        if lost {
            link.record_drop(DropCause::Corruption);
            self.on_drop(l, pkt, DropCause::Corruption, now);
        } else {
            let arrive = now + link.delay;
            if link.pipe.is_empty() {
                self.sched.schedule(arrive, Event::Arrive(l));
            }
            link.pipe.push_back((arrive, pkt));
        }
        self.flush_aqm_drops(l, now);
        self.trace_queue(l, now);
    }

    fn on_arrive(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        let (_, pkt) = link.pipe.pop_front().expect("arrival from an empty pipe");
        if let Some(&(next, _)) = link.pipe.front() {
            self.sched.schedule(next, Event::Arrive(l));
        }
        let to = link.to;
        self.forward(to, pkt, now);
    }

    fn on_drop(&mut self, l: LinkId, pkt: PacketId, cause: DropCause, now: SimTime) {
        let p = *self.pool.get(pkt);
        self.pool.free(pkt);
        self.drops += 1;
        self.digest.mix(now.0 ^ ((l as u64) << 48) ^ ((cause as u64) << 40) ^ p.flow as u64);
        if let Flow::Udp(u) = &mut self.flows[p.flow as usize] {
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

    fn trace_queue(&mut self, l: LinkId, now: SimTime) {
        if self.record_queue[l as usize] {
            let link = &self.links[l as usize];
            let q = &mut self.result.series.queue;
            q.t_s.push(now.as_secs_f64());
            q.link.push(l);
            q.pkts.push(link.queue.len_packets());
            q.bytes.push(link.queue.len_bytes());
        }
    }

    // ---------------------------------------------------------------- endpoints

    fn on_flow_start(&mut self, f: FlowId, now: SimTime) {
        match &mut self.flows[f as usize] {
            Flow::Tcp(t) => {
                if t.cfg.cbi_ssthresh_reuse {
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
            self.sched.schedule(at, Event::Timer { flow: f, kind, gen });
        }
        for seg in out.segments.drain(..) {
            let pkt = self.pool.alloc(Packet {
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

    fn deliver(&mut self, pkt: PacketId, now: SimTime) {
        let p = *self.pool.get(pkt);
        self.pool.free(pkt);
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
                let arrival = t.receiver.on_segment_ecn(&hdr, p.ecn, now, &mut self.outbox);
                if arrival.finished && t.completed.is_none() {
                    t.completed = Some(now);
                    self.unfinished -= 1;
                    if t.cfg.cbi_ssthresh_reuse && t.sender.w.ssthresh != u64::MAX {
                        self.cbi_cache[t.dst as usize] = Some(t.sender.w.ssthresh);
                    }
                }
                self.flush_tcp(p.flow, false, now);
            }
            (Flow::Tcp(t), Transport::Tcp { hdr, to_receiver: false }) => {
                self.digest.mix(now.0 ^ ((p.flow as u64) << 44) ^ hdr.ack.rotate_left(40) ^ 1);
                let was = t.sender.phase();
                t.sender.on_ack(&hdr, now, &mut self.outbox);
                if was == Phase::SynSent && t.sender.phase() == Phase::Established {
                    t.established = Some(now);
                }
                self.flush_tcp(p.flow, true, now);
            }
            (Flow::Udp(u), Transport::Udp { seq }) => {
                self.digest.mix(now.0 ^ ((p.flow as u64) << 44) ^ seq);
                u.delivered += 1;
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
        let pkt = self.pool.alloc(Packet {
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
        self.sched.schedule(now + gap, Event::UdpSend(f));
        self.forward(src, pkt, now);
    }

    // ---------------------------------------------------------------- results

    fn finish(mut self) -> RunResult {
        let end = self.sched.now().min(self.end);
        let end_s = end.as_secs_f64().max(1e-12);
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
                    let span = match (elapsed, t.stop) {
                        (Some(e), _) => e,
                        (None, Some(stop)) => stop.min(end).since(t.start).as_secs_f64(),
                        (None, None) => end.since(t.start).as_secs_f64(),
                    };
                    ft.goodput_bps.push(if span > 0.0 { delivered as f64 * 8.0 / span } else { 0.0 });
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
                    ft.final_srtt_s.push(t.sender.rtt().srtt().map(|d| d.as_secs_f64()));
                }
                Flow::Udp(u) => {
                    let ut = &mut r.udp;
                    ut.flow_id.push(i as u32);
                    ut.name.push(u.name.clone());
                    ut.group.push(u.group.clone());
                    ut.src.push(names[u.src as usize].clone());
                    ut.dst.push(names[u.dst as usize].clone());
                    ut.pkts_sent.push(u.sent);
                    ut.pkts_delivered.push(u.delivered);
                    ut.pkts_lost.push(u.lost);
                    let any = u.delivered > 0;
                    ut.owd_mean_s.push(any.then(|| u.owd_sum / u.delivered as f64));
                    ut.owd_max_s.push(any.then_some(u.owd_max));
                    ut.jitter_s.push(any.then_some(u.jitter));
                }
            }
        }
        let mut bottleneck_pkts = 0;
        for l in self.links.iter_mut() {
            l.account(end);
            let q = &mut r.queues;
            q.link.push(l.name.clone());
            q.enq_pkts.push(l.stats.enq_pkts);
            q.enq_bytes.push(l.stats.enq_bytes);
            q.drops_overflow.push(l.stats.drops[DropCause::Overflow as usize]);
            q.drops_early.push(l.stats.drops[DropCause::Early as usize]);
            q.drops_forced.push(l.stats.drops[DropCause::Forced as usize]);
            q.drops_corruption.push(l.stats.drops[DropCause::Corruption as usize]);
            q.ce_marks.push(l.stats.ce_marks);
            let t_ns = end.0.max(1) as f64;
            q.occ_mean_pkts.push(l.stats.occ_pkt_ns as f64 / t_ns);
            q.occ_max_pkts.push(l.stats.occ_max_pkts);
            q.occ_mean_bytes.push(l.stats.occ_byte_ns as f64 / t_ns);
            q.occ_max_bytes.push(l.stats.occ_max_bytes);
            let lt = &mut r.links;
            lt.link.push(l.name.clone());
            lt.from.push(names[l.from as usize].clone());
            lt.to.push(names[l.to as usize].clone());
            lt.rate_bps.push(l.rate.0);
            lt.delay_s.push(l.delay.as_secs_f64());
            lt.tx_pkts.push(l.stats.tx_pkts);
            lt.tx_bytes.push(l.stats.tx_bytes);
            lt.utilisation.push(l.busy_ns_at(end) as f64 * 1e-9 / end_s);
            lt.busy_sample_fraction.push(
                (l.stats.busy_samples > 0).then(|| l.stats.nonempty_samples as f64 / l.stats.busy_samples as f64),
            );
            lt.realised_per.push(l.error.as_ref().map(|e| e.stats().per()));
            if l.name == "bottleneck" {
                bottleneck_pkts = l.stats.tx_pkts;
            }
        }
        r.meta = crate::metrics::Meta {
            name: self.name.clone(),
            seed: self.seed,
            sim_end_s: end.as_secs_f64(),
            events: self.sched.events(),
            digest: format!("{:016x}", self.digest.0),
            bottleneck_pkts,
            drops: self.drops,
            peak_packets: self.pool.capacity_used(),
            link_names: self.links.iter().map(|l| l.name.clone()).collect(),
        };
        r
    }
}

/// Builds and runs a scenario.
pub fn run(sc: &Scenario, seed: u64) -> Result<RunResult, String> {
    Ok(Simulation::new(sc, seed)?.run())
}
