//! Queue disciplines behind one `QueueDisc` trait.
//!
//! A link owns one queue for its transmit side. The link asks the queue to admit each
//! arriving packet (`enqueue`) and to hand over the next packet whenever the
//! transmitter falls idle (`dequeue`). The packet being serialized has already left the
//! queue; whether it still counts towards the limit is each discipline's option
//! (`count_in_service`), because implementations differ (ns-2's DropTail counts the
//! arriving packet against `qlim_`, which amounts to counting the one in service).
//!
//! Disciplines: `droptail` (packet-slot, fixed-byte strict, fixed-byte loose; seed
//! 003), `red` (ns-2 RED, byte mode; seed 000), and the AQMs of a current Linux
//! kernel: `codel` (RFC 8289), `fq_codel` (RFC 8290) and `pie` (RFC 8033).
//!
//! Active queue management may act at dequeue (CoDel drops from the head) and may drop
//! packets other than the arriving one (FQ-CoDel drops from its fattest flow when
//! full). Both contexts therefore carry a `dropped` list the discipline appends to;
//! the link frees those packets and counts them. ECN marking (RFC 3168 §5) sets the
//! `ecn` field of the stored `QueuedPacket` to CE; the link copies it into the packet
//! when it leaves the queue.

pub mod codel;
pub mod droptail;
pub mod fq_codel;
pub mod pie;
pub mod red;

use crate::net::packet::PacketRef;
use crate::rng::RngStream;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use crate::net::head_deque::HeadDeque;
use std::collections::VecDeque;

/// A packet waiting in a queue: the hop-to-hop handle (pool id, size in bytes,
/// destination, flow) with its IP ECN field; a discipline that marks sets `ecn` to
/// `Ecn::Ce` (`PacketRef::try_mark_ce`) and the link writes it back into the packet
/// when it leaves the queue. Disciplines that need arrival times keep them beside the
/// packets (`TimedFifo`); the flow key comes with the arrival (`EnqueueCtx::flow_key`).
pub type QueuedPacket = PacketRef;

/// Why a queue refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropCause {
    /// The buffer limit was reached (tail drop, or RED's physical limit).
    Overflow,
    /// An AQM's early drop: RED's probabilistic drop (min_th <= avg < max_th),
    /// CoDel's control-law drop at dequeue, PIE's random drop.
    Early,
    /// RED's forced drop (avg >= max_th, or >= 2 max_th when gentle).
    Forced,
    /// The link's error model corrupted the packet (recorded by the link, not a queue).
    Corruption,
}

impl DropCause {
    pub const ALL: [DropCause; 4] = [
        DropCause::Overflow,
        DropCause::Early,
        DropCause::Forced,
        DropCause::Corruption,
    ];
    pub fn name(self) -> &'static str {
        match self {
            DropCause::Overflow => "overflow",
            DropCause::Early => "early",
            DropCause::Forced => "forced",
            DropCause::Corruption => "corruption",
        }
    }
}

/// What the link tells a queue about an arriving packet.
pub struct EnqueueCtx<'a> {
    pub now: SimTime,
    /// Size of the packet the link is serializing right now, if any.
    pub in_service_bytes: Option<u32>,
    /// The queue's own random substream (RED's and PIE's drop decisions).
    pub rng: &'a mut RngStream,
    /// The packet's transport flow and direction (the simulator's 5-tuple: twice the
    /// flow id, plus one from the higher-numbered node), for flow-queuing
    /// disciplines; 0 when the link's discipline does not hash flows.
    pub flow_key: u32,
    /// Packets already queued that the discipline drops to make room (FQ-CoDel's
    /// fattest-flow drop), with the cause. The arriving packet's own fate is the
    /// `Verdict`, unless it is itself in this list.
    pub dropped: &'a mut Vec<(QueuedPacket, DropCause)>,
}

/// What the link tells a queue when it asks for the next packet.
pub struct DequeueCtx<'a> {
    pub now: SimTime,
    /// Packets the discipline drops at dequeue (CoDel's head drops), with the cause.
    pub dropped: &'a mut Vec<(QueuedPacket, DropCause)>,
}

/// The result of offering a packet to a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueued,
    Dropped(DropCause),
}

/// A queue discipline. Implementations keep FIFO order unless documented otherwise.
pub trait QueueDisc: Send {
    /// Offers a packet; the queue either stores it or says why it dropped it.
    fn enqueue(&mut self, pkt: QueuedPacket, ctx: &mut EnqueueCtx<'_>) -> Verdict;
    /// Hands over the next packet, or `None` when empty (the link is then idle).
    fn dequeue(&mut self, ctx: &mut DequeueCtx<'_>) -> Option<QueuedPacket>;
    /// Packets waiting (not counting the one in service).
    fn len_packets(&self) -> u32;
    /// Bytes waiting (not counting the one in service).
    fn len_bytes(&self) -> u64;
    /// Discipline-specific state for traces (RED: the average queue), if any.
    fn average(&self) -> Option<f64> {
        None
    }
    /// The packet enqueued last, as stored (with a CE mark the discipline set), for
    /// FIFO disciplines that keep it at the tail; `None` otherwise. The fixed-rate
    /// link path (`sim/fixed_rate.rs`) reads a mark there at enqueue.
    fn last_enqueued(&self) -> Option<QueuedPacket> {
        None
    }
}

/// A link's queue. Drop-tail, the default and by far the most common discipline, is
/// stored inline in the link; any other sits behind the trait object. With 40,000
/// access links (a 10,000-pair dumbbell) a boxed queue is a separate allocation that
/// is cold at nearly every packet, one cache miss more per hop.
pub enum LinkQueue {
    DropTail(droptail::DropTail),
    Boxed(Box<dyn QueueDisc>),
}

macro_rules! each_queue {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            LinkQueue::DropTail($q) => $e,
            LinkQueue::Boxed($q) => $e,
        }
    };
}

impl QueueDisc for LinkQueue {
    #[inline]
    fn enqueue(&mut self, pkt: QueuedPacket, ctx: &mut EnqueueCtx<'_>) -> Verdict {
        each_queue!(self, q => q.enqueue(pkt, ctx))
    }
    #[inline]
    fn dequeue(&mut self, ctx: &mut DequeueCtx<'_>) -> Option<QueuedPacket> {
        each_queue!(self, q => q.dequeue(ctx))
    }
    #[inline]
    fn len_packets(&self) -> u32 {
        each_queue!(self, q => q.len_packets())
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        each_queue!(self, q => q.len_bytes())
    }
    fn average(&self) -> Option<f64> {
        each_queue!(self, q => q.average())
    }
    fn last_enqueued(&self) -> Option<QueuedPacket> {
        each_queue!(self, q => q.last_enqueued())
    }
}

impl LinkQueue {
    /// Heap bytes the queue holds: a drop-tail queue's overflow buffer, or a boxed
    /// discipline's own record (not what that discipline allocates in turn).
    pub fn heap_bytes(&self) -> usize {
        match self {
            LinkQueue::DropTail(q) => q.heap_bytes(),
            LinkQueue::Boxed(q) => std::mem::size_of_val(&**q),
        }
    }
}

/// The limit of a buffer: in packets or in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

/// A plain FIFO with byte accounting, shared by the disciplines. It holds its first
/// packet inline and grows its buffer (by doubling) to the link's high-water mark,
/// never to its limit up front: a 100,000-pair dumbbell has 400,000 access queues that
/// mostly hold no packet or one (`net::head_deque`).
#[derive(Clone, Debug, Default)]
pub struct Fifo {
    q: HeadDeque<QueuedPacket>,
    bytes: u64,
}

impl Fifo {
    pub fn push(&mut self, p: QueuedPacket) {
        self.bytes += p.size as u64;
        self.q.push_back(p);
    }
    pub fn pop(&mut self) -> Option<QueuedPacket> {
        let p = self.q.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }
    /// The packet at the tail (the one pushed last), without removing it.
    pub fn back(&self) -> Option<&QueuedPacket> {
        self.q.back()
    }
    /// The packet at the head, without removing it.
    pub fn front(&self) -> Option<&QueuedPacket> {
        self.q.front()
    }
    pub fn len(&self) -> u32 {
        self.q.len() as u32
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// Heap bytes held by packets beyond the inline first one.
    pub fn heap_bytes(&self) -> usize {
        self.q.heap_bytes()
    }
}

/// A FIFO that also keeps each packet's arrival time (CoDel's and PIE's timestamps).
#[derive(Clone, Debug, Default)]
pub struct TimedFifo {
    q: VecDeque<(QueuedPacket, SimTime)>,
    bytes: u64,
}

impl TimedFifo {
    pub fn with_capacity(n: usize) -> Self {
        TimedFifo { q: VecDeque::with_capacity(n), bytes: 0 }
    }
    /// Appends `p`, which arrived at `at`.
    pub fn push(&mut self, p: QueuedPacket, at: SimTime) {
        self.bytes += p.size as u64;
        self.q.push_back((p, at));
    }
    /// Removes the head packet and its arrival time.
    pub fn pop(&mut self) -> Option<(QueuedPacket, SimTime)> {
        let e = self.q.pop_front()?;
        self.bytes -= e.0.size as u64;
        Some(e)
    }
    pub fn len(&self) -> u32 {
        self.q.len() as u32
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The serde description of a queue, as scenario files give it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueConfig {
    DropTail(droptail::DropTailParams),
    Red(red::RedParams),
    Codel(codel::CodelParams),
    FqCodel(fq_codel::FqCodelParams),
    Pie(pie::PieParams),
}

impl QueueConfig {
    /// Tells rate-aware disciplines (RED's idle-time decay) the link's rate, bit/s.
    pub fn set_link_rate(&mut self, bps: u64) {
        if let QueueConfig::Red(p) = self {
            p.link_rate_bps = bps;
        }
    }

    /// Builds the discipline for a link: drop-tail inline, others boxed.
    /// `hash_seed` keys flow-hashing disciplines (FQ-CoDel), see `build`.
    pub fn build_for_link(&self, hash_seed: u64) -> Result<LinkQueue, String> {
        match self {
            QueueConfig::DropTail(p) => Ok(LinkQueue::DropTail(droptail::DropTail::new(p.clone())?)),
            _ => Ok(LinkQueue::Boxed(self.build(hash_seed)?)),
        }
    }

    /// Whether the discipline hashes flows (the link then computes each packet's
    /// flow key).
    pub fn hashes_flows(&self) -> bool {
        matches!(self, QueueConfig::FqCodel(_))
    }

    /// Whether the discipline may drop packets other than an arriving one, at
    /// enqueue or at dequeue (CoDel, FQ-CoDel).
    pub fn drops_queued_packets(&self) -> bool {
        matches!(self, QueueConfig::Codel(_) | QueueConfig::FqCodel(_))
    }

    /// Whether the discipline may mark packets CE.
    pub fn marks_ecn(&self) -> bool {
        match self {
            QueueConfig::DropTail(_) => false,
            QueueConfig::Red(p) => p.ecn,
            QueueConfig::Codel(p) => p.ecn || p.ce_threshold.is_some(),
            QueueConfig::FqCodel(p) => p.ecn || p.ce_threshold.is_some(),
            QueueConfig::Pie(p) => p.ecn,
        }
    }

    /// Builds the discipline, or explains which parameter is impossible.
    /// `hash_seed` perturbs flow hashing (FQ-CoDel); the link derives it from the
    /// run seed so that results are reproducible.
    pub fn build(&self, hash_seed: u64) -> Result<Box<dyn QueueDisc>, String> {
        match self {
            QueueConfig::DropTail(p) => Ok(Box::new(droptail::DropTail::new(p.clone())?)),
            QueueConfig::Red(p) => Ok(Box::new(red::Red::new(p.clone())?)),
            QueueConfig::Codel(p) => Ok(Box::new(codel::Codel::new(p)?)),
            QueueConfig::FqCodel(p) => Ok(Box::new(fq_codel::FqCodel::new(p, hash_seed)?)),
            QueueConfig::Pie(p) => Ok(Box::new(pie::Pie::new(p)?)),
        }
    }
}
