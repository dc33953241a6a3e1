//! The packet engine: reads packets from the hosts' TUN devices, carries them over the
//! scenario's links through tcplab-core's models (`LinkModel`), and writes them to the
//! destination host's TUN device when the model says they arrive.
//!
//! One thread, one loop (docs/emulation.md, "Design"):
//!
//! 1. `now` = monotonic clock − t0 (model time in ns);
//! 2. every model event due by `now` is processed in time order across all links, each
//!    at its own model time; a packet arriving at an intermediate node is offered to the
//!    next link (the core's static routes) at that model time; one arriving at its
//!    destination host is written to the host's TUN device and its scheduling error
//!    (write time − model time) recorded (`timing.rs`);
//! 3. packets waiting in the TUN devices that epoll reported are read and offered to
//!    their first link at `now`;
//! 4. epoll waits (nanosecond timeout, `epoll_pwait2`) until the next model event or
//!    the next TUN packet.
//!
//! Offers reach each link in non-decreasing time: events processed in step 2 are all
//! later than the previous iteration's `now` (a transmission takes at least 1 ns), and
//! reads are offered at `now` after them.

use crate::packet::{self, Meta, Pool, NO_FLOW, NO_TXN, PROTO_UDP, TCP_ACK, TCP_SYN};
use crate::plan::{FlowKind, Plan};
use crate::sys;
use crate::timing::Histogram;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tcplab_core::metrics::{DropSeries, OwdSeries, QueueSeries};
use tcplab_core::net::clocked::{ClockedLink, LinkModel, Step};
use tcplab_core::net::packet::PacketId;
use tcplab_core::net::queue::{DropCause, QueueDisc, Verdict};
use tcplab_core::time::SimTime;

/// A host as the engine sees it: its node and its TUN device.
pub struct HostPort {
    pub node: usize,
    pub tun: OwnedFd,
}

/// What the emulator saw of one TCP flow on the wire.
#[derive(Clone, Copy, Debug, Default)]
pub struct WireFlow {
    /// SYNs (without ACK) the sender sent; SYN retransmissions = syns - 1.
    pub syns: u32,
    pub isn: Option<u32>,
    /// The highest data sequence number seen from the sender, relative to `isn` and
    /// unwrapped past 2^32 (`packet::unwrap_seq`); kept only when drops are recorded,
    /// the one reader.
    pub seq_high: u64,
    /// Data segments that entered the emulator from the sender.
    pub data_pkts: u64,
    /// Data segments sent before the first ACK of data reached the sender.
    pub first_flight: u32,
    pub first_flight_closed: bool,
}

/// What the emulator saw of one request/response transaction on the wire.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxnWire {
    /// SYNs the client sent; SYN retransmissions = syns - 1.
    pub syns: u32,
    /// The server's initial sequence number (from its SYN-ACK).
    pub server_isn: Option<u32>,
    /// Response data segments that entered the emulator from the server.
    pub resp_pkts: u64,
    /// Response data segments sent before the first ACK of response data reached the
    /// server: the response's first flight.
    pub first_flight: u32,
    pub first_flight_closed: bool,
    /// Packets of the transaction dropped by the models (either direction).
    pub drops: u64,
}

/// Which transaction owns each client port right now: the client program writes
/// `g + 1` for port `txn_port(g)` before it connects, the packet loop reads it for every
/// packet of a request/response flow (0: no transaction).
pub struct PortTable(Vec<AtomicU32>);

impl Default for PortTable {
    fn default() -> Self {
        PortTable((0..=u16::MAX as usize).map(|_| AtomicU32::new(0)).collect())
    }
}

impl PortTable {
    pub fn set(&self, port: u16, g: u32) {
        self.0[port as usize].store(g + 1, Ordering::Release);
    }
    pub fn get(&self, port: u16) -> Option<u32> {
        self.0[port as usize].load(Ordering::Acquire).checked_sub(1)
    }
}

/// Why the loop ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    Duration,
    AllDone,
    MaxDuration,
    Signal(i32),
    TrafficError,
}

/// Flags shared with the traffic threads.
pub struct Control {
    pub stop: AtomicBool,
    /// Finite TCP flows whose sink has not read the end of file yet.
    pub unfinished: AtomicUsize,
    pub failed: AtomicBool,
    t0: AtomicU64,
}

impl Control {
    pub fn new(unfinished: usize) -> Self {
        Control { stop: AtomicBool::new(false), unfinished: AtomicUsize::new(unfinished), failed: AtomicBool::new(false), t0: AtomicU64::new(0) }
    }
    /// The monotonic time (ns) that is model time 0.
    pub fn t0(&self) -> u64 {
        self.t0.load(Ordering::Acquire)
    }
    pub fn set_t0(&self, t0: u64) {
        self.t0.store(t0, Ordering::Release);
    }
}

pub struct EngineOptions {
    /// A packet written later than this after its model time counts as late.
    pub late_bound_ns: u64,
    /// Test hook: at model time `.0` the loop sleeps `.1` ns, as if descheduled.
    pub stall: Option<(u64, u64)>,
}

pub struct Engine<'p> {
    plan: &'p Plan,
    pub links: Vec<ClockedLink>,
    hosts: Vec<HostPort>,
    pool: Pool,
    t0: u64,
    pub sched: Histogram,
    pub wire: Vec<WireFlow>,
    pub queue: QueueSeries,
    pub drops_series: DropSeries,
    pub owd: OwdSeries,
    pub drops: u64,
    pub events: u64,
    pub packets_in: u64,
    pub packets_out: u64,
    /// Packets longer than the MTU (segments a host merged; must stay 0).
    pub oversize: u64,
    /// Packets with a destination outside the plan, or not IPv4.
    pub unroutable: u64,
    /// Writes the destination host's kernel refused (its receive queue full).
    pub host_drops: u64,
    /// Busy-sample utilisation per link (samples taken, samples with a non-empty
    /// queue; seed 001's metric), and the next sampling time.
    pub busy: Vec<(u64, u64)>,
    busy_next: Option<u64>,
    opts: EngineOptions,
    /// Per transaction (index g), what the wire showed.
    pub txn_wire: Vec<TxnWire>,
    /// Whether each flow is a request/response application.
    rpc_flow: Vec<bool>,
    ports: Arc<PortTable>,
}

impl<'p> Engine<'p> {
    pub fn new(plan: &'p Plan, hosts: Vec<HostPort>, seed: u64, opts: EngineOptions, ports: Arc<PortTable>) -> Result<Self, String> {
        let mut links = Vec::with_capacity(plan.graph.links.len());
        for (i, l) in plan.graph.links.iter().enumerate() {
            let from = plan.graph.node_index(&l.from).expect("validated");
            let to = plan.graph.node_index(&l.to).expect("validated");
            links.push(ClockedLink::build(i as u32, &l.name, from, to, &l.params, seed)?);
        }
        // One slot per packet, wide enough for the MTU plus a margin that reveals merging.
        let stride = (plan.mtu as usize + 256).next_power_of_two();
        Ok(Engine {
            plan,
            links,
            hosts,
            pool: Pool::new(stride, 4096),
            t0: 0,
            sched: Histogram::new(opts.late_bound_ns),
            wire: vec![WireFlow::default(); plan.flows.len()],
            queue: QueueSeries::default(),
            drops_series: DropSeries::default(),
            owd: OwdSeries::default(),
            drops: 0,
            events: 0,
            packets_in: 0,
            packets_out: 0,
            oversize: 0,
            unroutable: 0,
            host_drops: 0,
            busy: vec![(0, 0); plan.graph.links.len()],
            busy_next: plan.busy_sample_ns,
            opts,
            txn_wire: vec![TxnWire::default(); plan.txns.len()],
            rpc_flow: plan.flows.iter().map(|f| matches!(f.kind, FlowKind::Rpc { .. })).collect(),
            ports,
        })
    }

    pub fn peak_packets(&self) -> usize {
        self.pool.peak()
    }

    /// Runs from `t0` (monotonic ns) until a stop condition; returns the model end time.
    pub fn run(&mut self, t0: u64, ctl: &Control, sigfd: &OwnedFd) -> Result<(u64, StopReason), String> {
        self.t0 = t0;
        let ep = sys::Epoll::new().map_err(|e| e.to_string())?;
        for (h, host) in self.hosts.iter().enumerate() {
            ep.add(host.tun.as_raw_fd(), h as u64).map_err(|e| e.to_string())?;
        }
        const SIGNAL: u64 = u64::MAX;
        ep.add(sigfd.as_raw_fd(), SIGNAL).map_err(|e| e.to_string())?;
        let end_bound = self.plan.duration_ns.unwrap_or(self.plan.max_duration_ns);
        let mut ready = vec![false; self.hosts.len()];
        let mut evs = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
        let mut signalled = false;
        let mut stalled = false;
        loop {
            let now = sys::mono_ns().saturating_sub(t0);
            if let Some((at, dur)) = self.opts.stall {
                if !stalled && now >= at {
                    stalled = true;
                    sys::sleep_until(sys::mono_ns() + dur);
                    continue;
                }
            }
            let upto = now.min(end_bound);
            self.process_due(upto)?;
            if signalled {
                if let Some(s) = sys::pending_signal(sigfd) {
                    return Ok((upto, StopReason::Signal(s)));
                }
                signalled = false;
            }
            if ctl.failed.load(Ordering::Relaxed) {
                return Ok((upto, StopReason::TrafficError));
            }
            if now >= end_bound {
                let why = if self.plan.duration_ns.is_some() { StopReason::Duration } else { StopReason::MaxDuration };
                return Ok((end_bound, why));
            }
            if self.plan.stop_when_done && ctl.unfinished.load(Ordering::Acquire) == 0 {
                return Ok((now, StopReason::AllDone));
            }
            for (h, r) in ready.iter_mut().enumerate() {
                if std::mem::take(r) {
                    self.read_host(h, now)?;
                }
            }
            // Wait for the next model event, a packet, a signal, or at most 5 ms (the
            // traffic threads' completion flags are polled at that pace).
            let mut next = end_bound.min(now + 5_000_000);
            if let Some(t) = self.links.iter().filter_map(|l| l.next_event()).map(|t| t.0).min() {
                next = next.min(t);
            }
            if let Some(b) = self.busy_next {
                next = next.min(b);
            }
            let timeout = (t0 + next).saturating_sub(sys::mono_ns());
            let n = ep.wait(&mut evs, Some(timeout)).map_err(|e| e.to_string())?;
            for e in &evs[..n] {
                let token = e.u64;
                if token == SIGNAL {
                    signalled = true;
                } else {
                    ready[token as usize] = true;
                }
            }
        }
    }

    /// Processes every link event (and busy sample) due at or before `now`, in time order.
    fn process_due(&mut self, now: u64) -> Result<(), String> {
        loop {
            let mut best: Option<(u64, usize)> = None;
            for (i, l) in self.links.iter().enumerate() {
                if let Some(t) = l.next_event() {
                    if t.0 <= now && best.is_none_or(|(bt, _)| t.0 < bt) {
                        best = Some((t.0, i));
                    }
                }
            }
            if let Some(b) = self.busy_next {
                if b <= now && best.is_none_or(|(bt, _)| b <= bt) {
                    for (i, l) in self.links.iter().enumerate() {
                        self.busy[i].0 += 1;
                        self.busy[i].1 += (l.link().queue.len_packets() > 0) as u64;
                    }
                    self.busy_next = Some(b + self.plan.busy_sample_ns.expect("set"));
                    continue;
                }
            }
            let Some((_, li)) = best else { return Ok(()) };
            let (t, step) = self.links[li].step(SimTime(now)).expect("an event was due");
            self.events += 1;
            match step {
                Step::Internal => self.trace_queue(li, t.0),
                Step::Lost(p, cause) => {
                    self.trace_queue(li, t.0);
                    self.drop_packet(p.0, li, cause, t.0);
                }
                Step::Delivered(p) => {
                    let to = self.links[li].link().to as usize;
                    self.arrive(to, p.0, t.0)?;
                }
            }
        }
    }

    /// A packet reaches `node` at model time `t`: delivered or offered to the next link.
    fn arrive(&mut self, node: usize, p: u32, t: u64) -> Result<(), String> {
        let m = self.pool.meta[p as usize];
        if m.dst_node as usize == node {
            return self.deliver(node, p, t);
        }
        match self.plan.routes[node][m.dst_node as usize] {
            Some(l) => {
                self.offer(l as usize, p, t);
                Ok(())
            }
            None => {
                self.unroutable += 1;
                self.pool.release(p);
                Ok(())
            }
        }
    }

    fn offer(&mut self, li: usize, p: u32, t: u64) {
        let len = self.pool.meta[p as usize].len;
        self.events += 1;
        match self.links[li].offer(SimTime(t), PacketId(p), len) {
            Verdict::Enqueued => self.trace_queue(li, t),
            Verdict::Dropped(cause) => self.drop_packet(p, li, cause, t),
        }
    }

    fn drop_packet(&mut self, p: u32, li: usize, cause: DropCause, t: u64) {
        let m = self.pool.meta[p as usize];
        self.drops += 1;
        if m.txn != NO_TXN {
            self.txn_wire[m.txn as usize].drops += 1;
        }
        if self.plan.record_drops {
            let seq = self.data_seq(p, m);
            let d = &mut self.drops_series;
            d.t_s.push(t as f64 * 1e-9);
            d.link.push(li as u32);
            d.flow_id.push(if m.flow == NO_FLOW { u32::MAX } else { self.plan.flows[m.flow as usize].id as u32 });
            d.cause.push(cause.name());
            d.seq.push(seq);
        }
        self.pool.release(p);
    }

    /// Where dropped packet `p` sits in its flow, as the simulator's drop series has it
    /// (`metrics::DropSeries::seq`): a bulk TCP flow's data segment relative to the
    /// sender's ISN (from its SYN), a UDP datagram's number (the first 8 payload bytes,
    /// `traffic::udp_sender`); `None` for the ACK direction, request/response flows
    /// (whose connections are many) and packets of no flow.
    fn data_seq(&self, p: u32, m: Meta) -> Option<u64> {
        if m.flow == NO_FLOW || !m.to_receiver || !m.data || self.rpc_flow[m.flow as usize] {
            return None;
        }
        let b = self.pool.packet(p);
        let ip = packet::ipv4(b)?;
        if ip.proto == PROTO_UDP {
            let at = ip.header_len + 8;
            return b.get(at..at + 8).map(|s| u64::from_be_bytes(s.try_into().expect("8 bytes")));
        }
        let tcp = packet::tcp(b, &ip)?;
        let w = &self.wire[m.flow as usize];
        w.isn.map(|isn| packet::unwrap_seq(w.seq_high, tcp.seq.wrapping_sub(isn)))
    }

    fn trace_queue(&mut self, li: usize, t: u64) {
        if self.plan.record_queue[li] {
            let q = &self.links[li].link().queue;
            let s = &mut self.queue;
            s.t_s.push(t as f64 * 1e-9);
            s.link.push(li as u32);
            s.pkts.push(q.len_packets());
            s.bytes.push(q.len_bytes());
        }
    }

    /// Writes packet `p` to the TUN device of the host at `node`; records the error.
    fn deliver(&mut self, node: usize, p: u32, t: u64) -> Result<(), String> {
        let h = self.plan.host_of_node[node].expect("only hosts are destinations");
        let m = self.pool.meta[p as usize];
        if m.txn != NO_TXN && !m.to_receiver {
            // An ACK of response data reaching the server closes the response's first flight.
            let w = &mut self.txn_wire[m.txn as usize];
            if !w.first_flight_closed {
                let b = self.pool.packet(p);
                if let Some(ip) = packet::ipv4(b) {
                    if let (Some(tcp), Some(isn)) = (packet::tcp(b, &ip), w.server_isn) {
                        if tcp.flags & TCP_ACK != 0 && (tcp.ack.wrapping_sub(isn) as i32) > 1 {
                            w.first_flight_closed = true;
                        }
                    }
                }
            }
        } else if m.flow != NO_FLOW && !m.to_receiver {
            // An ACK of data reaching the sender closes its first flight.
            let w = &mut self.wire[m.flow as usize];
            if !w.first_flight_closed {
                let b = self.pool.packet(p);
                if let Some(ip) = packet::ipv4(b) {
                    if let (Some(tcp), Some(isn)) = (packet::tcp(b, &ip), w.isn) {
                        if tcp.flags & TCP_ACK != 0 && (tcp.ack.wrapping_sub(isn) as i32) > 1 {
                            w.first_flight_closed = true;
                        }
                    }
                }
            }
        }
        let ok = sys::write_pkt(self.hosts[h].tun.as_raw_fd(), self.pool.packet(p)).map_err(|e| format!("write to host '{}': {e}", self.plan.hosts[h].name))?;
        let actual = sys::mono_ns().saturating_sub(self.t0);
        self.sched.record(actual.saturating_sub(t));
        if ok {
            self.packets_out += 1;
        } else {
            self.host_drops += 1;
        }
        if m.data && m.to_receiver && m.flow != NO_FLOW && self.plan.flows[m.flow as usize].record_owd {
            let o = &mut self.owd;
            o.t_s.push(actual as f64 * 1e-9);
            o.flow_id.push(self.plan.flows[m.flow as usize].id as u32);
            o.owd_s.push(actual.saturating_sub(m.ingress_ns) as f64 * 1e-9);
        }
        self.pool.release(p);
        Ok(())
    }

    /// Reads up to 256 packets waiting at host `h` and offers them at model time `now`.
    fn read_host(&mut self, h: usize, now: u64) -> Result<(), String> {
        let fd = self.hosts[h].tun.as_raw_fd();
        let src_node = self.hosts[h].node;
        let mtu = self.plan.mtu as usize;
        for _ in 0..256 {
            let p = self.pool.alloc();
            let n = match sys::read_nb(fd, self.pool.buf_mut(p)) {
                Ok(Some(n)) => n,
                Ok(None) => {
                    self.pool.release(p);
                    return Ok(());
                }
                Err(e) => {
                    self.pool.release(p);
                    return Err(format!("read from host '{}': {e}", self.plan.hosts[h].name));
                }
            };
            self.packets_in += 1;
            if n > mtu {
                self.oversize += 1;
            }
            let b = &self.pool.buf_mut(p)[..n];
            let Some(ip) = packet::ipv4(b) else {
                self.unroutable += 1;
                self.pool.release(p);
                continue;
            };
            let Some(info) = self.plan.lookup(ip.dst) else {
                self.unroutable += 1;
                self.pool.release(p);
                continue;
            };
            let mut meta = Meta { len: n as u32, ingress_ns: now, dst_node: info.node, flow: NO_FLOW, to_receiver: false, data: false, txn: NO_TXN };
            if let Some((f, to_receiver)) = info.flow {
                meta.flow = f;
                meta.to_receiver = to_receiver;
                if ip.proto == PROTO_UDP {
                    meta.data = true;
                } else if let Some(tcp) = packet::tcp(b, &ip) {
                    meta.data = tcp.payload > 0;
                    if self.rpc_flow[f as usize] {
                        // The client's port names the transaction: the destination
                        // port towards the client, the source port towards the server.
                        let port = if to_receiver { tcp.dport } else { tcp.sport };
                        if let Some(g) = self.ports.get(port).filter(|&g| (g as usize) < self.txn_wire.len()) {
                            meta.txn = g;
                            let w = &mut self.txn_wire[g as usize];
                            if to_receiver {
                                if tcp.flags & TCP_SYN != 0 {
                                    w.server_isn = Some(tcp.seq);
                                }
                                if meta.data {
                                    w.resp_pkts += 1;
                                    if !w.first_flight_closed {
                                        w.first_flight += 1;
                                    }
                                }
                            } else if tcp.flags & TCP_SYN != 0 && tcp.flags & TCP_ACK == 0 {
                                w.syns += 1;
                            }
                        }
                    } else if to_receiver {
                        let w = &mut self.wire[f as usize];
                        if tcp.flags & TCP_SYN != 0 && tcp.flags & TCP_ACK == 0 {
                            w.syns += 1;
                            w.isn = Some(tcp.seq);
                        }
                        if meta.data {
                            if let Some(isn) = w.isn.filter(|_| self.plan.record_drops) {
                                w.seq_high = w.seq_high.max(packet::unwrap_seq(w.seq_high, tcp.seq.wrapping_sub(isn)));
                            }
                            w.data_pkts += 1;
                            if !w.first_flight_closed {
                                w.first_flight += 1;
                            }
                        }
                    }
                }
            }
            self.pool.meta[p as usize] = meta;
            if info.node as usize == src_node {
                self.unroutable += 1;
                self.pool.release(p);
                continue;
            }
            match self.plan.routes[src_node][info.node as usize] {
                Some(l) => self.offer(l as usize, p, now),
                None => {
                    self.unroutable += 1;
                    self.pool.release(p);
                }
            }
        }
        Ok(())
    }

    /// Closes the links' occupancy integrals at the end of the run.
    pub fn finish(&mut self, end: u64) {
        for l in &mut self.links {
            l.finish(SimTime(end));
        }
    }
}
