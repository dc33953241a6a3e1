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
//! 003) and `red` (ns-2 RED, byte mode; seed 000).

pub mod droptail;
pub mod red;

use crate::net::packet::PacketRef;
use crate::rng::RngStream;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use crate::net::head_deque::HeadDeque;

/// A packet waiting in a queue (its pool id, size in bytes and destination).
pub type QueuedPacket = PacketRef;

/// Why a queue refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropCause {
    /// The buffer limit was reached (tail drop, or RED's physical limit).
    Overflow,
    /// RED's probabilistic early drop (min_th <= avg < max_th).
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
    /// The queue's own random substream (RED's drop decisions).
    pub rng: &'a mut RngStream,
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
    fn dequeue(&mut self, now: SimTime) -> Option<QueuedPacket>;
    /// Packets waiting (not counting the one in service).
    fn len_packets(&self) -> u32;
    /// Bytes waiting (not counting the one in service).
    fn len_bytes(&self) -> u64;
    /// Discipline-specific state for traces (RED: the average queue), if any.
    fn average(&self) -> Option<f64> {
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
    fn dequeue(&mut self, now: SimTime) -> Option<QueuedPacket> {
        each_queue!(self, q => q.dequeue(now))
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
}

impl QueueConfig {
    /// Tells rate-aware disciplines (RED's idle-time decay) the link's rate, bit/s.
    pub fn set_link_rate(&mut self, bps: u64) {
        if let QueueConfig::Red(p) = self {
            p.link_rate_bps = bps;
        }
    }

    /// Builds the discipline for a link: drop-tail inline, others boxed.
    pub fn build_for_link(&self) -> Result<LinkQueue, String> {
        match self {
            QueueConfig::DropTail(p) => Ok(LinkQueue::DropTail(droptail::DropTail::new(p.clone())?)),
            _ => Ok(LinkQueue::Boxed(self.build()?)),
        }
    }

    /// Builds the discipline, or explains which parameter is impossible.
    pub fn build(&self) -> Result<Box<dyn QueueDisc>, String> {
        match self {
            QueueConfig::DropTail(p) => Ok(Box::new(droptail::DropTail::new(p.clone())?)),
            QueueConfig::Red(p) => Ok(Box::new(red::Red::new(p.clone())?)),
        }
    }
}
