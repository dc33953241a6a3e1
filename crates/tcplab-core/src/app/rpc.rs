//! Request/response transactions over a new TCP connection each, as netperf's
//! `TCP_CRR` test (connect, request, response, close) emulates web transactions
//! (seed 001: a 200 B request, a 15 kB response; Chu & Wang, "A testbed study on
//! IW10 vs IW3", IETF 79).
//!
//! One transaction, on the wire:
//!
//! 1. the client connects: SYN; the server answers SYN-ACK;
//! 2. the client sends the request (the ACK of the SYN-ACK rides on it) and keeps
//!    the connection open (its FIN is held, `TcpSender::hold_fin`);
//! 3. when the whole request has arrived, the server's response sender opens
//!    passively (`TcpSender::open_passive`) with the handshake's RTT sample and sends
//!    the response, then closes: the FIN rides on the last data segment, which with
//!    Linux's quirk (`fin_ignores_cwnd`) leaves whatever cwnd says ("IW10 is really
//!    IW11": 15 kB = 11 segments of 1460 B fit in one IW10 flight);
//! 4. the client reads to the end of the response, then closes: its FIN carries the
//!    ACK of the server's FIN; the server ACKs the client's FIN.
//!
//! Each direction is one of tcplab's one-way halves: the request half (client sender,
//! server receiver) and the response half (server sender, client receiver). A host's
//! sender segments carry its receiver's cumulative ACK and window (piggybacking,
//! RFC 9293 §3.10.7.4); a pure ACK the host's receiver emitted in the same instant is
//! then not sent, and a pending delayed ACK is cancelled. So the ACK of the request
//! rides on the first response segment and the ACK of the server's FIN on the
//! client's FIN, as in Linux.
//!
//! **User completion time (UCT)** runs from the client's connect (the SYN leaves) to
//! the in-order arrival of the last response byte at the client. The server's IW,
//! SACK and profile govern the response; the entry's `tcp` and `cc` apply to both
//! hosts.
//!
//! Deviations:
//! - The handshake RTT sample is taken when the first segment acknowledging the
//!   SYN-ACK arrives, which is the request segment (Linux sends a pure ACK first; on
//!   a 64 kbit/s uplink the 240-byte request adds 30 ms to the sample over the pure
//!   ACK's 5 ms). Karn's rule: no sample when the SYN-ACK was sent more than once.
//! - The server keeps no SYN-ACK timer; a lost SYN-ACK is recovered by the client's
//!   SYN retransmission (as for tcplab's one-way flows).
//! - Piggybacked segments carry no SACK blocks (SACK information travels on pure
//!   ACKs, which is where the receivers of these transfers emit it).
//! - A duplicate SYN-ACK at an established client is ignored (Linux re-ACKs it; the
//!   server here needs no such ACK).
//! - No TIME_WAIT: a transaction's state is freed once both FINs are acknowledged;
//!   a packet arriving for a freed transaction is discarded.
//! - RFC 2140 ssthresh reuse (`cbi_ssthresh_reuse`) does not apply to transactions.

use super::arrivals::{ArrivalSpec, Arrivals, LoadBasis};
use super::sizes::SizeDist;
use crate::cc::{self, CcSpec};
use crate::net::packet::{NodeId, TcpHeader, FLAG_ACK, FLAG_SYN};
use crate::rng::RngStream;
use crate::tcp::config::{TcpConfig, TcpSpec};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::{Phase, TcpSender};
use crate::tcp::{Outbox, TimerKind};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// A request/response application between one client and one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RpcSpec {
    /// Label used in tables; default `rpc<i>`.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub group: String,
    /// The node that accepts connections and sends the responses.
    pub server: String,
    /// The node that opens a connection per transaction and receives the responses.
    pub client: String,
    /// Arrivals begin.
    #[serde(default)]
    pub start: SimTime,
    /// No arrival at or after this time; default: arrivals run to the end.
    #[serde(default)]
    pub stop: Option<SimTime>,
    /// Request size (bytes, client to server).
    pub request: SizeDist,
    /// Response size (bytes, server to client).
    pub response: SizeDist,
    pub arrivals: ArrivalSpec,
    /// Transactions opened at once per arrival (seed 001: 1 or 5).
    #[serde(default = "one")]
    pub batch: u32,
    #[serde(default)]
    pub cc: CcSpec,
    #[serde(default)]
    pub tcp: TcpSpec,
}

fn one() -> u32 {
    1
}

/// A built application: its settings, arrival process and size stream.
pub struct RpcApp {
    pub name: String,
    pub group: String,
    pub server: NodeId,
    pub client: NodeId,
    pub cfg: TcpConfig,
    cc: CcSpec,
    request: SizeDist,
    response: SizeDist,
    pub batch: u32,
    pub arrivals: Arrivals,
    sizes: RngStream,
    /// Arrivals so far (the batch number of the next one).
    pub next_batch: u64,
    /// Whether an arrival is scheduled.
    pub pending: bool,
}

impl RpcApp {
    /// Builds entry `spec` (scenario position `ctx`, e.g. "flows[3] ('web')").
    /// `link_rate` looks up a link's rate by name for the offered-load arithmetic.
    pub fn new(
        spec: &RpcSpec,
        name: String,
        ctx: &str,
        server: NodeId,
        client: NodeId,
        link_rate: impl Fn(&str) -> Option<u64>,
        seed: u64,
    ) -> Result<RpcApp, String> {
        let cfg = spec.tcp.resolve().map_err(|e| format!("{ctx}: {e}"))?;
        let probe = cc::build(&spec.cc, &cfg.window(u64::MAX))
            .map_err(|e| format!("{ctx}.cc: {e}"))?;
        // A transaction's endpoints do not negotiate ECN (the passive server side and
        // the receivers' CE echo are not wired); refuse rather than ignore the marks.
        if cfg.ecn || probe.needs_ecn() {
            return Err(format!(
                "{ctx}: ECN (tcp.ecn = true, or an ECN congestion control such as dctcp) is not supported for \
                 rpc applications yet; accepted: tcp.ecn = false with a loss-based congestion control"
            ));
        }
        spec.request.validate(&format!("{ctx}.request"))?;
        spec.response.validate(&format!("{ctx}.response"))?;
        if spec.batch == 0 {
            return Err(format!("{ctx}.batch must be at least 1 transaction per arrival; got 0"));
        }
        let wire = spec.response.mean_bytes() + cfg.header_bytes as f64 * spec.response.mean_segments(cfg.mss);
        let basis = |link: Option<&str>| {
            let link = link.unwrap_or("bottleneck");
            let bps = link_rate(link).ok_or_else(|| {
                format!("{ctx}.arrivals.link: no link named '{link}' to measure the offered load against")
            })?;
            Ok(LoadBasis { link_bps: bps, response_wire_bytes: wire, batch: spec.batch })
        };
        let arrivals = Arrivals::new(
            &spec.arrivals,
            spec.start,
            spec.stop,
            basis,
            RngStream::new(seed, &format!("app:{name}:arrivals")),
            &format!("{ctx}.arrivals"),
        )?;
        Ok(RpcApp {
            sizes: RngStream::new(seed, &format!("app:{name}:sizes")),
            name,
            group: spec.group.clone(),
            server,
            client,
            cfg,
            cc: spec.cc.clone(),
            request: spec.request.clone(),
            response: spec.response.clone(),
            batch: spec.batch,
            arrivals,
            next_batch: 0,
            pending: false,
        })
    }

    /// The next transaction's (request, response) sizes, bytes. Request first, then
    /// response: one draw each per transaction, in a fixed order, so the sizes depend
    /// only on the seed and the transaction's position in its application (the
    /// emulator, tcplab-emu, draws them here too, so both modes run the same
    /// transactions).
    pub fn draw_sizes(&mut self) -> (u64, u64) {
        let request_bytes = self.request.sample(&mut self.sizes);
        let response_bytes = self.response.sample(&mut self.sizes);
        (request_bytes, response_bytes)
    }

    /// A new transaction of this application, connecting at `now`.
    pub fn transaction(&mut self, app: u32, index: u64, batch: u64, now: SimTime) -> Transaction {
        let (request_bytes, response_bytes) = self.draw_sizes();
        let sender = |bytes| {
            let cc = cc::build(&self.cc, &self.cfg.window(u64::MAX)).expect("checked when the application was built");
            TcpSender::new(self.cfg.clone(), cc, Some(bytes), None)
        };
        let mut client_tx = sender(request_bytes);
        client_tx.hold_fin();
        Transaction {
            app,
            index,
            batch,
            start: now,
            request_bytes,
            response_bytes,
            client_tx,
            client_rx: TcpReceiver::new(&self.cfg),
            server_rx: TcpReceiver::new(&self.cfg),
            server_tx: sender(response_bytes),
            synacks: 0,
            synack_sent_at: SimTime::ZERO,
            handshake_rtt: None,
            handshake_done: false,
            server_open: false,
            established: None,
            completed: None,
            closed: None,
            drops: 0,
        }
    }
}

/// The two hosts of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client = 0,
    Server = 1,
}

/// Where a transaction stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// The response has not fully arrived.
    Open,
    /// The response arrived (UCT known); the connection is closing.
    Completed,
    /// Both FINs acknowledged.
    Closed,
    /// The client gave up connecting (SYN retries exhausted).
    Failed,
}

/// One transaction: the four endpoints of its two halves and its milestones.
pub struct Transaction {
    pub app: u32,
    pub index: u64,
    pub batch: u64,
    pub start: SimTime,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// Request half: SYN, request, FIN on close.
    client_tx: TcpSender,
    /// Response half, at the client.
    client_rx: TcpReceiver,
    /// Request half, at the server.
    server_rx: TcpReceiver,
    /// Response half: opened passively when the request is complete.
    server_tx: TcpSender,
    synacks: u32,
    synack_sent_at: SimTime,
    handshake_rtt: Option<SimDuration>,
    handshake_done: bool,
    server_open: bool,
    pub established: Option<SimTime>,
    pub completed: Option<SimTime>,
    pub closed: Option<SimTime>,
    /// Packets of this transaction dropped in the network (either direction).
    pub drops: u64,
}

/// The ACK part of a segment that carries data the other way, as the host's sender
/// sees it. `len` is kept, so it is never taken for a duplicate ACK.
fn ack_part(hdr: &TcpHeader) -> TcpHeader {
    TcpHeader { ack: hdr.ack, wnd: hdr.wnd, len: hdr.len.max(1), flags: FLAG_ACK, ts_ecr: hdr.ts_ecr, ..Default::default() }
}

impl Transaction {
    /// Where the transaction stands.
    pub fn state(&self) -> State {
        if self.client_tx.phase() == Phase::Closed && self.established.is_none() {
            State::Failed
        } else if self.client_tx.phase() == Phase::Closed && self.server_tx.phase() == Phase::Closed {
            State::Closed
        } else if self.completed.is_some() {
            State::Completed
        } else {
            State::Open
        }
    }

    /// The client connects: the SYN leaves.
    pub fn open(&mut self, now: SimTime, tx: &mut Outbox) {
        self.client_tx.open(now, tx);
    }

    /// A segment arrives at `at`. `data` is true for a sender segment of the other
    /// host (SYN, data, FIN, with a piggybacked ACK when FLAG_ACK is set), false for
    /// a pure ACK (or SYN-ACK) of its receiver. Output goes to `tx` (this host's
    /// sender) and `rx` (this host's receiver); `drain` then sends it.
    pub fn on_segment(&mut self, at: Side, hdr: &TcpHeader, data: bool, now: SimTime, tx: &mut Outbox, rx: &mut Outbox) {
        match (at, data) {
            (Side::Server, true) => {
                if hdr.is_syn() {
                    self.server_rx.on_segment(hdr, now, rx);
                    self.synacks += 1;
                    self.synack_sent_at = now;
                    return;
                }
                if hdr.has_ack() {
                    if !self.handshake_done {
                        // The first segment acknowledging the SYN-ACK ends the handshake.
                        self.handshake_done = true;
                        if self.synacks == 1 {
                            self.handshake_rtt = Some(now.since(self.synack_sent_at));
                        }
                    }
                    if self.server_open && hdr.ack > self.server_tx.snd_una() {
                        self.server_tx.on_ack(&ack_part(hdr), now, tx);
                    }
                }
                self.server_rx.on_segment(hdr, now, rx);
                if !self.server_open && self.server_rx.delivered() >= self.request_bytes {
                    self.server_open = true;
                    self.server_tx.open_passive(now, self.handshake_rtt, self.synacks.saturating_sub(1), tx);
                }
            }
            (Side::Server, false) => {
                if self.server_open {
                    self.server_tx.on_ack(hdr, now, tx);
                }
            }
            (Side::Client, true) => {
                if hdr.has_ack() && hdr.ack > self.client_tx.snd_una() {
                    self.client_tx.on_ack(&ack_part(hdr), now, tx);
                }
                let arrival = self.client_rx.on_segment(hdr, now, rx);
                if self.completed.is_none() && self.client_rx.delivered() >= self.response_bytes {
                    self.completed = Some(now);
                }
                if arrival.finished {
                    // End of the response: the client closes its side.
                    self.client_tx.close(now, tx);
                }
            }
            (Side::Client, false) => {
                if hdr.is_syn() {
                    if self.client_tx.phase() == Phase::SynSent {
                        self.client_rx.on_peer_syn();
                        self.client_tx.on_ack(hdr, now, tx);
                        self.established = Some(now);
                    }
                } else {
                    self.client_tx.on_ack(hdr, now, tx);
                }
            }
        }
    }

    /// A timer of host `at` fired (generation `gen`).
    pub fn on_timer(&mut self, at: Side, kind: TimerKind, gen: u32, now: SimTime, tx: &mut Outbox, rx: &mut Outbox) {
        match (at, kind) {
            (Side::Client, TimerKind::DelAck) => self.client_rx.on_timer(gen, now, rx),
            (Side::Server, TimerKind::DelAck) => self.server_rx.on_timer(gen, now, rx),
            (Side::Client, TimerKind::Rto) => {
                self.client_tx.on_timer(gen, now, tx);
            }
            (Side::Server, TimerKind::Rto) => {
                self.server_tx.on_timer(gen, now, tx);
            }
            (Side::Client, TimerKind::Pacing) => self.client_tx.on_pacing_timer(gen, now, tx),
            (Side::Server, TimerKind::Pacing) => self.server_tx.on_pacing_timer(gen, now, tx),
            (Side::Client, TimerKind::LossProbe) => self.client_tx.on_loss_probe_timer(gen, now, tx),
            (Side::Server, TimerKind::LossProbe) => self.server_tx.on_loss_probe_timer(gen, now, tx),
            (Side::Client, TimerKind::Reorder) => self.client_tx.on_reorder_timer(gen, now, tx),
            (Side::Server, TimerKind::Reorder) => self.server_tx.on_reorder_timer(gen, now, tx),
        }
    }

    /// Hands host `at`'s output to `emit(segment, data)`: sender segments carry the
    /// receiver's ACK and window; then the receiver's pure ACKs, unless a sender
    /// segment carried the ACK. Timers go to `timer`. Both outboxes are left empty.
    pub fn drain(
        &mut self,
        at: Side,
        tx: &mut Outbox,
        rx: &mut Outbox,
        mut emit: impl FnMut(crate::tcp::Segment, bool),
        mut timer: impl FnMut(TimerKind, SimTime, u32),
    ) {
        let receiver = match at {
            Side::Client => &mut self.client_rx,
            Side::Server => &mut self.server_rx,
        };
        let mut piggybacked = false;
        for mut seg in tx.segments.drain(..) {
            if seg.hdr.has_ack() && receiver.syn_received() {
                (seg.hdr.ack, seg.hdr.wnd, seg.hdr.ts_ecr) = receiver.piggyback_ack();
                piggybacked = true;
            }
            emit(seg, true);
        }
        for seg in rx.segments.drain(..) {
            if !(piggybacked && seg.hdr.flags & FLAG_SYN == 0) {
                emit(seg, false);
            }
        }
        for (kind, t, gen) in tx.timers.drain(..).chain(rx.timers.drain(..)) {
            timer(kind, t, gen);
        }
    }

    /// Response bytes delivered in order at the client.
    pub fn delivered(&self) -> u64 {
        self.client_rx.delivered()
    }

    /// Data retransmissions, data RTOs, RTOs undone by Eifel detection (both
    /// directions) and SYN retransmissions.
    pub fn loss_counts(&self) -> (u64, u64, u64, u64) {
        let (c, s) = (self.client_tx.stats(), self.server_tx.stats());
        (c.retransmits + s.retransmits, c.rtos + s.rtos, c.rto_undos + s.rto_undos, c.syn_retransmits)
    }

    /// The response's server-side initial window, segments.
    pub fn iw_segments(&self, cfg: &TcpConfig) -> u32 {
        (cfg.iw.bytes(cfg.mss) / cfg.mss as u64) as u32
    }
}
