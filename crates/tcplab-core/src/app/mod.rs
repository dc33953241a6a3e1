//! Applications: traffic above TCP that opens connections over time.
//!
//! The floor between congestion control and metrics. An application decides when
//! connections open (`arrivals`), how big its messages are (`sizes`) and what a
//! connection does (`rpc`: request/response transactions over a new connection
//! each, as netperf's `TCP_CRR`). Long-lived bulk flows (iperf-like) are ordinary TCP
//! flows of the scenario and run alongside.
//!
//! `Apps` holds every application of a simulation and all their live transactions.
//! The simulation only dispatches to it: arrivals (`on_arrival`), packets
//! (`on_packet`), timers (`on_timer`) and drops (`on_drop`), and turns its output
//! (`AppOutbox`: segments, timer requests, arrival wake-ups) into packets and events.
//!
//! Addressing: flows `0..first_flow` are the scenario's own TCP/UDP flows. Transaction
//! `g` (numbered in creation order over all applications) owns flow ids
//! `first_flow + 2g` (its client) and `first_flow + 2g + 1` (its server): a packet's
//! flow id names the host that sent it, a timer's the host it belongs to. Live
//! transactions sit in a deque indexed by `g - base`; closed ones are recorded
//! (`TransactionRecord`) and freed, and the deque's head advances past them, so
//! memory follows the transactions in progress, not the run's length. A packet for a
//! freed transaction (a late duplicate) is discarded.

pub mod arrivals;
pub mod rpc;
pub mod sizes;
pub mod workload;

use crate::net::packet::{FlowId, NodeId, TcpHeader};
use crate::tcp::{Outbox, Segment, TimerKind};
use crate::time::SimTime;
use rpc::{RpcApp, Side, State, Transaction};
use std::collections::VecDeque;

/// A segment for the network, from `src` to `dst`, on behalf of flow id `flow`.
#[derive(Clone, Copy, Debug)]
pub struct AppPacket {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    pub seg: Segment,
    /// A sender segment (SYN, data, FIN) rather than a pure ACK of the host's receiver.
    pub data: bool,
}

/// What the applications want done: packets to send, timers, arrival wake-ups.
#[derive(Default)]
pub struct AppOutbox {
    pub packets: Vec<AppPacket>,
    /// (flow id, timer, fire time, generation).
    pub timers: Vec<(FlowId, TimerKind, SimTime, u32)>,
    /// (time, application index): the application's next arrival.
    pub arrivals: Vec<(SimTime, u32)>,
}

/// Live transaction `g`, if it has not been freed.
fn live_mut(live: &mut VecDeque<Option<Box<Transaction>>>, base: u64, g: u64) -> Option<&mut Transaction> {
    let i = g.checked_sub(base)?;
    live.get_mut(i as usize)?.as_deref_mut()
}

/// The flow id of host `side` of transaction `g` (module doc).
fn flow_id(first_flow: FlowId, g: u64, side: Side) -> FlowId {
    let id = first_flow as u64 + 2 * g + side as u64;
    FlowId::try_from(id).expect("more than 2^31 transactions in one run")
}

/// One transaction as the results record it (times in ns of simulated time).
#[derive(Clone, Debug)]
pub struct TransactionRecord {
    /// Creation order over all applications.
    pub txn_id: u64,
    /// Index of the application (`Apps::apps`).
    pub app: u32,
    /// Arrival number within the application (transactions of one batch share it).
    pub batch: u64,
    pub iw_segments: u32,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub start: SimTime,
    pub established: Option<SimTime>,
    pub completed: Option<SimTime>,
    pub closed: Option<SimTime>,
    pub bytes_delivered: u64,
    pub retransmits: u64,
    pub rtos: u64,
    pub rtos_undone: u64,
    pub syn_retransmits: u64,
    pub drops: u64,
    /// "closed", "completed" (response in, still closing at the end), "open" (response
    /// incomplete at the end) or "failed" (the client gave up connecting).
    pub state: &'static str,
}

/// Every application of a simulation and its live transactions (see the module doc).
pub struct Apps {
    pub apps: Vec<RpcApp>,
    first_flow: FlowId,
    live: VecDeque<Option<Box<Transaction>>>,
    /// Transaction number of `live[0]`.
    base: u64,
    /// Transactions created so far.
    created: u64,
    /// Live transactions whose response is incomplete.
    open: usize,
    records: Vec<TransactionRecord>,
    tx: Outbox,
    rx: Outbox,
}

impl Apps {
    pub fn new(apps: Vec<RpcApp>, first_flow: FlowId) -> Apps {
        Apps {
            apps,
            first_flow,
            live: VecDeque::new(),
            base: 0,
            created: 0,
            open: 0,
            records: Vec::new(),
            tx: Outbox::default(),
            rx: Outbox::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.apps.is_empty()
    }

    /// Whether `flow` belongs to a transaction.
    pub fn owns(&self, flow: FlowId) -> bool {
        !self.apps.is_empty() && flow >= self.first_flow
    }

    /// Schedules every application's first arrival.
    pub fn start(&mut self, out: &mut AppOutbox) {
        for (i, app) in self.apps.iter_mut().enumerate() {
            if let Some(t) = app.arrivals.next(SimTime::ZERO) {
                app.pending = true;
                out.arrivals.push((t, i as u32));
            }
        }
    }

    /// No arrival is pending and every response has arrived.
    pub fn done(&self) -> bool {
        self.open == 0 && self.apps.iter().all(|a| !a.pending)
    }

    /// Application `a`'s arrival at `now`: opens its batch and schedules the next one.
    pub fn on_arrival(&mut self, a: u32, now: SimTime, out: &mut AppOutbox) {
        let first_flow = self.first_flow;
        let app = &mut self.apps[a as usize];
        let batch = app.next_batch;
        app.next_batch += 1;
        for _ in 0..app.batch {
            let g = self.created;
            self.created += 1;
            let client_flow = flow_id(first_flow, g, Side::Client);
            let mut t = Box::new(app.transaction(a, g, batch, now));
            t.open(now, &mut self.tx);
            Self::drain(&mut t, Side::Client, client_flow, app.client, app.server, &mut self.tx, &mut self.rx, out);
            self.live.push_back(Some(t));
            self.open += 1;
        }
        app.pending = false;
        if let Some(next) = app.arrivals.next(now) {
            app.pending = true;
            out.arrivals.push((next, a));
        }
    }

    /// A packet of flow id `flow` (sent by one host of a transaction) reached the other.
    pub fn on_packet(&mut self, flow: FlowId, hdr: &TcpHeader, data: bool, now: SimTime, out: &mut AppOutbox) {
        let (g, from) = self.split(flow);
        let at = if from == Side::Client { Side::Server } else { Side::Client };
        let Some(t) = live_mut(&mut self.live, self.base, g) else { return };
        t.on_segment(at, hdr, data, now, &mut self.tx, &mut self.rx);
        self.after(g, at, now, out);
    }

    /// A timer of flow id `flow`'s host fired.
    pub fn on_timer(&mut self, flow: FlowId, kind: TimerKind, gen: u32, now: SimTime, out: &mut AppOutbox) {
        let (g, at) = self.split(flow);
        let Some(t) = live_mut(&mut self.live, self.base, g) else { return };
        t.on_timer(at, kind, gen, now, &mut self.tx, &mut self.rx);
        self.after(g, at, now, out);
    }

    /// A packet sent by flow id `flow`'s host was dropped in the network.
    pub fn on_drop(&mut self, flow: FlowId) {
        let (g, _) = self.split(flow);
        if let Some(t) = live_mut(&mut self.live, self.base, g) {
            t.drops += 1;
        }
    }

    /// Every transaction, in creation order: those closed during the run and those
    /// still live at `end` (as "completed", "open" or "failed").
    pub fn finish(mut self) -> (Vec<RpcApp>, Vec<TransactionRecord>) {
        let live: Vec<Box<Transaction>> = self.live.drain(..).flatten().collect();
        for t in live {
            let state = t.state();
            self.record(&t, state);
        }
        self.records.sort_by_key(|r| r.txn_id);
        (self.apps, self.records)
    }

    fn flow_of(&self, g: u64, side: Side) -> FlowId {
        flow_id(self.first_flow, g, side)
    }

    fn split(&self, flow: FlowId) -> (u64, Side) {
        let k = (flow - self.first_flow) as u64;
        (k / 2, if k % 2 == 0 { Side::Client } else { Side::Server })
    }

    /// Sends what host `at` of transaction `g` produced; records and frees it when done.
    fn after(&mut self, g: u64, at: Side, now: SimTime, out: &mut AppOutbox) {
        let flow = self.flow_of(g, at);
        let i = (g - self.base) as usize;
        let t = self.live[i].as_mut().expect("live transaction");
        let was_open = t.completed.is_none();
        let app = &self.apps[t.app as usize];
        let (src, dst) = match at {
            Side::Client => (app.client, app.server),
            Side::Server => (app.server, app.client),
        };
        Self::drain(t, at, flow, src, dst, &mut self.tx, &mut self.rx, out);
        let state = t.state();
        if was_open && state != State::Open {
            self.open -= 1;
        }
        if matches!(state, State::Closed | State::Failed) {
            if state == State::Closed {
                t.closed = Some(now);
            }
            let t = self.live[i].take().expect("live transaction");
            self.record(&t, state);
            while matches!(self.live.front(), Some(None)) {
                self.live.pop_front();
                self.base += 1;
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn drain(t: &mut Transaction, at: Side, flow: FlowId, src: NodeId, dst: NodeId, tx: &mut Outbox, rx: &mut Outbox,
             out: &mut AppOutbox) {
        t.drain(
            at,
            tx,
            rx,
            |seg, data| out.packets.push(AppPacket { flow, src, dst, seg, data }),
            |kind, at_time, gen| out.timers.push((flow, kind, at_time, gen)),
        );
    }

    fn record(&mut self, t: &Transaction, state: State) {
        let app = &self.apps[t.app as usize];
        let (retransmits, rtos, rtos_undone, syn_retransmits) = t.loss_counts();
        self.records.push(TransactionRecord {
            txn_id: t.index,
            app: t.app,
            batch: t.batch,
            iw_segments: t.iw_segments(&app.cfg),
            request_bytes: t.request_bytes,
            response_bytes: t.response_bytes,
            start: t.start,
            established: t.established,
            completed: t.completed,
            closed: t.closed,
            bytes_delivered: t.delivered(),
            retransmits,
            rtos,
            rtos_undone,
            syn_retransmits,
            drops: t.drops,
            state: match state {
                State::Closed => "closed",
                State::Completed => "completed",
                State::Open => "open",
                State::Failed => "failed",
            },
        });
    }
}
