//! A unidirectional point-to-point link: a transmitter with a queue, a rate, an error
//! model and a propagation delay.
//!
//! A packet is offered to the queue; when the transmitter is idle it takes the next
//! packet and serializes it for `rate.tx_time(size)`. At the end of serialization the
//! error model decides whether the packet is corrupted (dropped, cause `corruption`);
//! otherwise it enters the propagation pipe and arrives `delay` later. Because the
//! delay is constant and the transmitter is FIFO, arrivals leave the pipe in order, so
//! only the head of the pipe needs an event (the heap holds one event per link, not
//! one per packet in flight). The two directions of a cable are two `Link`s, which is
//! how asymmetric links (ADSL 1500/256 kbit/s) are built.

use super::error::ErrorModel;
use super::packet::{LinkId, NodeId, PacketId};
use super::queue::{DropCause, QueueDisc, QueuedPacket};
use crate::rng::RngStream;
use crate::time::{Rate, SimDuration, SimTime};
use std::collections::VecDeque;

/// Per-link and per-queue counters, with time-weighted occupancy.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    pub drops: [u64; 4],
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Integral of busy time, ns.
    pub busy_ns: u64,
    /// Integrals of occupancy over time (packet·ns, byte·ns).
    pub occ_pkt_ns: u128,
    pub occ_byte_ns: u128,
    pub occ_max_pkts: u32,
    pub occ_max_bytes: u64,
    pub last_change: SimTime,
    /// Samples taken and samples with a non-empty queue (seed 001's metric).
    pub busy_samples: u64,
    pub nonempty_samples: u64,
    /// Packets this link's queue marked CE (RFC 3168) instead of dropping.
    pub ce_marks: u64,
}

pub struct Link {
    pub id: LinkId,
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate: Rate,
    pub delay: SimDuration,
    pub queue: Box<dyn QueueDisc>,
    pub error: Option<Box<dyn ErrorModel>>,
    pub queue_rng: RngStream,
    /// Packet being serialized and its size.
    pub in_service: Option<(PacketId, u32)>,
    busy_since: SimTime,
    /// Packets propagating: (arrival time, packet).
    pub pipe: VecDeque<(SimTime, PacketId)>,
    pub stats: LinkStats,
    /// Packets the queue dropped other than an arriving one (AQM head drops), kept
    /// between calls so that dropping allocates nothing.
    pub aqm_drops: Vec<(QueuedPacket, DropCause)>,
    /// What the queue needs from the link, so that drop-tail pays for none of it:
    /// flow keys, draining `aqm_drops`, writing CE marks back.
    pub hashes_flows: bool,
    pub drops_queued: bool,
    pub marks_ecn: bool,
}

impl Link {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: LinkId,
        name: String,
        from: NodeId,
        to: NodeId,
        rate: Rate,
        delay: SimDuration,
        queue: Box<dyn QueueDisc>,
        error: Option<Box<dyn ErrorModel>>,
        queue_rng: RngStream,
    ) -> Self {
        Link {
            id,
            name,
            from,
            to,
            rate,
            delay,
            queue,
            error,
            queue_rng,
            in_service: None,
            busy_since: SimTime::ZERO,
            pipe: VecDeque::with_capacity(64),
            stats: LinkStats::default(),
            aqm_drops: Vec::with_capacity(64),
            hashes_flows: false,
            drops_queued: false,
            marks_ecn: false,
        }
    }

    /// Accumulates the occupancy integral up to `now` (call before any change).
    pub fn account(&mut self, now: SimTime) {
        let dt = now.0 - self.stats.last_change.0;
        if dt > 0 {
            self.stats.occ_pkt_ns += self.queue.len_packets() as u128 * dt as u128;
            self.stats.occ_byte_ns += self.queue.len_bytes() as u128 * dt as u128;
            self.stats.last_change = now;
        }
    }

    pub fn note_occupancy_max(&mut self) {
        self.stats.occ_max_pkts = self.stats.occ_max_pkts.max(self.queue.len_packets());
        self.stats.occ_max_bytes = self.stats.occ_max_bytes.max(self.queue.len_bytes());
    }

    pub fn record_drop(&mut self, cause: DropCause) {
        self.stats.drops[cause as usize] += 1;
    }

    /// Starts serializing `pkt`; returns when it finishes.
    pub fn start_tx(&mut self, pkt: PacketId, size: u32, now: SimTime) -> SimTime {
        self.in_service = Some((pkt, size));
        self.busy_since = now;
        now + self.rate.tx_time(size)
    }

    /// Ends the current transmission; returns the packet.
    pub fn finish_tx(&mut self, now: SimTime) -> (PacketId, u32) {
        let (pkt, size) = self.in_service.take().expect("tx done on an idle link");
        self.stats.busy_ns += now.0 - self.busy_since.0;
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += size as u64;
        (pkt, size)
    }

    /// Busy time including a transmission in progress at `now`.
    pub fn busy_ns_at(&self, now: SimTime) -> u64 {
        self.stats.busy_ns + self.in_service.map_or(0, |_| now.0 - self.busy_since.0)
    }
}
