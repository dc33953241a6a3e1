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
//!
//! Counters and time integrals cover the measurement window: they start at zero and
//! `open_window` restarts them at the warm-up time (a transmission in progress then
//! counts its busy time from that instant, and the occupancy maximum restarts from
//! the occupancy at that instant). The MAC's and link layer's counters (their own
//! `stats()`) cover the whole run; `open_window` records them so the `links` table
//! reports their window share too (`mac_stats`, `ll_stats`).
//!
//! Optional layers make a link *layered* (`layered = true`; the simulation then drives
//! it through `sim/layered.rs`): a MAC (`mac`, e.g. DAMA) that lets the transmitter
//! serialize only in the capacity it grants, pausing a packet at a superframe boundary
//! and resuming it at the next (`start_tx_gated`, `resume_tx`); a link layer (`ll`,
//! e.g. SLACP) that takes the IP packets, holds the backlog in its own IP queues and
//! feeds the MAC buffer (`mac_buffer`) only while it has room; and a FIFO of
//! link-layer control frames (`control`, a peer link layer's ACKs) served first.

use super::error::{ErrorModel, ErrorStats};
use super::jitter::LinkJitter;
use super::linklayer::{LinkLayer, LlStats};
use super::mac::{Gate, Mac, MacStats};
use super::packet::{LinkId, NodeId, PacketRef};
use super::queue::{DequeueCtx, DropCause, EnqueueCtx, Fifo, LinkQueue, QueueDisc, QueuedPacket, Verdict};
use crate::rng::RngStream;
use crate::time::{Rate, SimDuration, SimTime};
use super::head_deque::HeadDeque;

/// Per-link and per-queue counters, with time-weighted occupancy. The fields every
/// packet updates come first (`repr(C)` keeps the order; see `Link`).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct LinkStats {
    /// Integrals of occupancy over time (packet·ns, byte·ns).
    pub occ_pkt_ns: u128,
    pub occ_byte_ns: u128,
    pub last_change: SimTime,
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Integral of busy time, ns.
    pub busy_ns: u64,
    pub occ_max_bytes: u64,
    pub occ_max_pkts: u32,
    pub drops: [u64; 4],
    /// Samples taken and samples with a non-empty queue (seed 001's metric).
    pub busy_samples: u64,
    pub nonempty_samples: u64,
    /// Packets this link's queue marked CE (RFC 3168) instead of dropping.
    pub ce_marks: u64,
}

/// Packets a link's pipe holds inline (`HeadDeque`).
pub const PIPE_INLINE: usize = 3;

/// A link. With 10,000 flows a dumbbell has 40,000 of them and nearly every packet
/// finds its access links out of cache, so the fields a packet touches come first and
/// the struct starts on a cache line (`repr(C, align(64))`): the event loop prefetches
/// only those lines (`Link::HOT_BYTES`), not the whole link.
#[repr(C, align(64))]
pub struct Link {
    // Hot: read or written for every packet. An arrival reads only the fields up to
    // `queue` (`ARRIVAL_BYTES`).
    pub to: NodeId,
    /// Whether the simulation drives this link through its layered path.
    pub layered: bool,
    /// What the queue needs from the link, so that drop-tail pays for none of it:
    /// flow keys, draining `aqm_drops`, writing CE marks back.
    pub hashes_flows: bool,
    pub drops_queued: bool,
    pub marks_ecn: bool,
    /// Whether the simulation drives this link on the fixed-rate path
    /// (`sim/fixed_rate.rs`): departures computed at enqueue, no transmission events.
    pub fixed_rate: bool,
    /// Packets propagating: (arrival time, packet). The first `PIPE_INLINE` sit in the
    /// link itself (a sender's back-to-back segments on an access link).
    pub pipe: HeadDeque<(SimTime, PacketRef), PIPE_INLINE>,
    pub queue: LinkQueue,
    /// Packet being serialized.
    pub in_service: Option<PacketRef>,
    pub rate: Rate,
    pub delay: SimDuration,
    busy_since: SimTime,
    /// Fixed-rate path only: when the packet in service leaves (its last bit), and
    /// when the last packet accepted leaves (the transmitter frees up then).
    pub svc_end: SimTime,
    pub tx_end: SimTime,
    /// When the last packet left the pipe (arrived at `to`).
    pub last_arrival: SimTime,
    /// Fixed-rate path only: the time of the last enqueue, and whether the general
    /// path would have run that arrival before a departure at the same instant (or
    /// found the transmitter idle), for the order of the next ties.
    pub last_enq: SimTime,
    pub last_enq_first: bool,
    pub error: Option<Box<dyn ErrorModel>>,
    /// Delay variation added to `delay`, order kept (`net/jitter.rs`); none by default.
    pub jitter: Option<Box<LinkJitter>>,
    /// Medium access gating the transmitter, if any.
    pub mac: Option<Box<dyn Mac>>,
    /// Link-layer protocol on this direction, if any.
    pub ll: Option<Box<dyn LinkLayer>>,
    pub stats: LinkStats,
    // Cold from here on (`HOT_END`).
    pub id: LinkId,
    pub from: NodeId,
    pub name: String,
    pub queue_rng: RngStream,
    /// The error model's counts when the measurement window opened.
    error_base: ErrorStats,
    /// Packets transmitted before the measurement window opened.
    pub tx_pkts_before_window: u64,
    /// What only a link with a MAC or a link layer uses (`Link::layered_mut`).
    lay: Option<Box<LayeredState>>,
    /// Packets the queue dropped other than an arriving one (AQM head drops), kept
    /// between calls so that dropping allocates nothing.
    pub aqm_drops: Vec<(QueuedPacket, DropCause)>,
    /// Fixed-rate path only: packets the error model corrupts, with the time their
    /// last bit leaves (when they are dropped), in that order. Empty and unallocated
    /// on a link without an error model.
    pub corrupt: std::collections::VecDeque<(SimTime, PacketRef)>,
}

/// The state of a link with a MAC or a link layer (`sim::layered`), boxed so that plain
/// links do not carry its 304 bytes (over 100 MB over a 100,000-pair dumbbell's links).
#[derive(Default)]
pub struct LayeredState {
    /// Transmitter time the MAC still owes the packet in service after a pause, ns.
    pub tx_left: u64,
    /// When the first bit of the packet in service went on the air under a MAC (the
    /// start of the first granted slot it used); the end of time before it has (8 B
    /// where an `Option` takes 16).
    tx_first: SimTime,
    /// Link-layer control frames (a peer link layer's ACKs), sent before the queue.
    pub control: HeadDeque<QueuedPacket>,
    control_bytes: u64,
    /// Frames between the link layer and the transmitter (only with a link layer).
    pub mac_buffer: Fifo,
    /// The MAC buffer's size, bytes.
    pub mac_buffer_limit: u64,
    /// The reverse link that carries this link layer's ACKs.
    pub ack_link: LinkId,
    /// The MAC's and link layer's counts when the measurement window opened.
    mac_base: Option<MacStats>,
    ll_base: Option<LlStats>,
}

impl Link {
    /// Bytes from the start of a link that a drop-tail packet touches (its queue, pipe,
    /// transmitter and counters up to `drops`): what is worth prefetching.
    pub const HOT_BYTES: usize = std::mem::offset_of!(Link, stats) + std::mem::offset_of!(LinkStats, drops);
    /// Bytes from the start of a link that an arrival reads (its pipe, `to`, `layered`).
    pub const ARRIVAL_BYTES: usize = std::mem::offset_of!(Link, queue);

    /// Puts `pkt`, whose last bit leaves at `departure`, into the propagation pipe: it
    /// reaches the far end the propagation delay later, plus the link's delay variation
    /// if it has one. Returns that arrival and whether the pipe was empty (then the
    /// arrival needs an event).
    #[inline]
    pub fn pipe_push(&mut self, departure: SimTime, pkt: PacketRef) -> (SimTime, bool) {
        let arrive = match self.jitter.as_mut() {
            None => departure + self.delay,
            Some(j) => j.admit(departure, self.delay),
        };
        let first = self.pipe.is_empty();
        self.pipe.push_back((arrive, pkt));
        (arrive, first)
    }

    /// Takes the pipe's head: its packet and when that packet left the transmitter
    /// (the arrival less the propagation delay, or with a delay variation the
    /// departure the variation kept).
    #[inline]
    pub fn pipe_pop(&mut self) -> Option<(PacketRef, SimTime)> {
        let (arrive, pkt) = self.pipe.pop_front()?;
        let left = match self.jitter.as_mut() {
            None => SimTime(arrive.0 - self.delay.0),
            Some(j) => j.leave(),
        };
        Some((pkt, left))
    }

    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: LinkId,
        name: String,
        from: NodeId,
        to: NodeId,
        rate: Rate,
        delay: SimDuration,
        queue: LinkQueue,
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
            jitter: None,
            queue_rng,
            in_service: None,
            busy_since: SimTime::ZERO,
            pipe: HeadDeque::default(),
            stats: LinkStats::default(),
            error_base: ErrorStats::default(),
            tx_pkts_before_window: 0,
            mac: None,
            layered: false,
            ll: None,
            lay: None,
            // Grown on a first AQM drop and kept: nothing up front for the drop-tail
            // links that never use it (64 entries were 1.25 kB on each of 400,000 links).
            aqm_drops: Vec::new(),
            corrupt: std::collections::VecDeque::new(),
            svc_end: SimTime::ZERO,
            tx_end: SimTime::ZERO,
            last_arrival: SimTime::ZERO,
            last_enq: SimTime::MAX,
            last_enq_first: false,
            fixed_rate: false,
            hashes_flows: false,
            drops_queued: false,
            marks_ecn: false,
        }
    }

    /// Restarts the counters and integrals at `now`, the start of the measurement
    /// window: what happened before (the warm-up) is left out of the summaries.
    pub fn open_window(&mut self, now: SimTime) {
        self.account(now);
        self.tx_pkts_before_window += self.stats.tx_pkts;
        self.stats = LinkStats {
            occ_max_pkts: self.backlog_packets(),
            occ_max_bytes: self.backlog_bytes(),
            last_change: now,
            ..LinkStats::default()
        };
        if self.in_service.is_some() {
            self.busy_since = now;
        }
        self.error_base = self.error.as_ref().map_or_else(ErrorStats::default, |e| e.stats());
        let (mac_base, ll_base) = (self.mac.as_ref().map(|m| m.stats()), self.ll.as_ref().map(|l| l.stats()));
        if let Some(lay) = self.lay.as_mut() {
            (lay.mac_base, lay.ll_base) = (mac_base, ll_base);
        }
    }

    /// Moves packets the fixed-rate path judged at enqueue into the window of their
    /// departure, where the general path judges them: `packets` of them (`lost`
    /// corrupted) judged before the window opened but leaving after it count in it
    /// (`into_window`), and those still to leave when the run ends do not.
    pub fn shift_judged(&mut self, packets: u64, lost: u64, into_window: bool) {
        let b = &mut self.error_base;
        if into_window {
            b.packets -= packets.min(b.packets);
            b.lost -= lost.min(b.lost);
        } else {
            b.packets += packets;
            b.lost += lost;
        }
    }

    /// The layered-link state, created (with the link itself as `ack_link`) on first
    /// use: `sim` calls it when it gives the link a MAC or a link layer.
    pub fn layered_mut(&mut self) -> &mut LayeredState {
        let id = self.id;
        self.lay.get_or_insert_with(|| Box::new(LayeredState { ack_link: id, ..Default::default() }))
    }

    /// The layered-link state, if the link has one.
    pub fn layered_state(&self) -> Option<&LayeredState> {
        self.lay.as_deref()
    }

    fn tx_left(&self) -> u64 {
        self.lay.as_ref().map_or(0, |l| l.tx_left)
    }

    /// The error model's counts over the measurement window.
    pub fn error_stats(&self) -> Option<ErrorStats> {
        self.error.as_ref().map(|e| {
            let s = e.stats();
            ErrorStats { packets: s.packets - self.error_base.packets, lost: s.lost - self.error_base.lost }
        })
    }

    /// The MAC's counts over the measurement window; `None` without a MAC.
    pub fn mac_stats(&self) -> Option<MacStats> {
        let s = self.mac.as_ref()?.stats();
        Some(match self.lay.as_ref().and_then(|l| l.mac_base) {
            Some(b) => s.since(&b),
            None => s,
        })
    }

    /// The link layer's counts over the measurement window; `None` without one.
    pub fn ll_stats(&self) -> Option<LlStats> {
        let s = self.ll.as_ref()?.stats();
        Some(match self.lay.as_ref().and_then(|l| l.ll_base) {
            Some(b) => s.since(&b),
            None => s,
        })
    }

    /// IP packets waiting to be sent: the queue, or with a link layer its IP queues.
    pub fn backlog_packets(&self) -> u32 {
        match &self.ll {
            Some(ll) => ll.backlog_packets(),
            None => self.queue.len_packets(),
        }
    }

    /// Bytes of IP packets waiting to be sent (see `backlog_packets`).
    pub fn backlog_bytes(&self) -> u64 {
        match &self.ll {
            Some(ll) => ll.backlog_bytes(),
            None => self.queue.len_bytes(),
        }
    }

    /// Bytes the MAC must still carry: its buffer (the queue, or with a link layer the
    /// MAC buffer), control frames, and the unsent part of the packet in service.
    pub fn mac_backlog_bytes(&self) -> u64 {
        let (mac_buffer, control) = self.lay.as_ref().map_or((0, 0), |l| (l.mac_buffer.bytes(), l.control_bytes));
        let buffer = match &self.ll {
            Some(_) => mac_buffer,
            None => self.queue.len_bytes(),
        };
        buffer + control + self.unsent_in_service_bytes()
    }

    /// Accumulates the occupancy integral up to `now` (call before any change).
    pub fn account(&mut self, now: SimTime) {
        let dt = now.0 - self.stats.last_change.0;
        if dt > 0 {
            self.stats.occ_pkt_ns += self.backlog_packets() as u128 * dt as u128;
            self.stats.occ_byte_ns += self.backlog_bytes() as u128 * dt as u128;
            self.stats.last_change = now;
        }
    }

    /// Offers `pkt` to the link's queue discipline at `now` (after [`Link::account`]).
    /// Drop-tail (nearly every link) takes it with no AQM context: no flow key, RNG or
    /// drop list. Other disciplines get the context; `flow_key` (the packet's 5-tuple)
    /// is asked for only where the discipline hashes flows (FQ-CoDel), and packets an
    /// AQM drops from its queue land in `aqm_drops`.
    #[inline(always)]
    pub fn enqueue(&mut self, now: SimTime, pkt: QueuedPacket, flow_key: impl FnOnce() -> u32) -> Verdict {
        match &mut self.queue {
            LinkQueue::DropTail(q) => q.offer(pkt, self.in_service.map(|p| p.size)),
            LinkQueue::Boxed(_) => self.enqueue_aqm(now, pkt, flow_key),
        }
    }

    #[inline(never)]
    fn enqueue_aqm(&mut self, now: SimTime, pkt: QueuedPacket, flow_key: impl FnOnce() -> u32) -> Verdict {
        let mut ctx = EnqueueCtx {
            now,
            in_service_bytes: self.in_service.map(|p| p.size),
            rng: &mut self.queue_rng,
            flow_key: if self.hashes_flows { flow_key() } else { 0 },
            dropped: &mut self.aqm_drops,
        };
        self.queue.enqueue(pkt, &mut ctx)
    }

    /// The next packet to serialize from the queue: drop-tail's head, or what an AQM
    /// dequeues at `now` (it may drop packets into `aqm_drops` first, or hand back a
    /// packet it marked CE).
    #[inline(always)]
    pub fn dequeue(&mut self, now: SimTime) -> Option<QueuedPacket> {
        match &mut self.queue {
            LinkQueue::DropTail(q) => q.take(),
            LinkQueue::Boxed(q) => q.dequeue(&mut DequeueCtx { now, dropped: &mut self.aqm_drops }),
        }
    }

    pub fn note_occupancy_max(&mut self) {
        self.stats.occ_max_pkts = self.stats.occ_max_pkts.max(self.backlog_packets());
        self.stats.occ_max_bytes = self.stats.occ_max_bytes.max(self.backlog_bytes());
    }

    pub fn record_drop(&mut self, cause: DropCause) {
        self.stats.drops[cause as usize] += 1;
    }

    /// Starts serializing `pkt`; returns when it finishes.
    pub fn start_tx(&mut self, pkt: PacketRef, now: SimTime) -> SimTime {
        self.in_service = Some(pkt);
        self.busy_since = now;
        now + self.rate.tx_time(pkt.size)
    }

    /// Starts serializing `pkt` under the MAC (if any): `Some(done)` when the capacity
    /// granted so far carries it, `None` when the MAC paused it (see `resume_tx`).
    pub fn start_tx_gated(&mut self, pkt: PacketRef, now: SimTime) -> Option<SimTime> {
        let Some(mac) = self.mac.as_mut() else {
            return Some(self.start_tx(pkt, now));
        };
        self.in_service = Some(pkt);
        self.busy_since = now;
        let need = self.rate.tx_time(pkt.size).0;
        let gate = mac.transmit(now, need);
        let lay = self.layered_mut();
        match gate {
            Gate::Done { first, end } => {
                lay.tx_first = first;
                Some(end)
            }
            Gate::Paused { sent_ns, first } => {
                lay.tx_first = first.unwrap_or(SimTime::MAX);
                lay.tx_left = need - sent_ns;
                None
            }
        }
    }

    /// Continues a paused transmission at a superframe boundary: `Some(done)` once the
    /// granted capacity carries the rest.
    pub fn resume_tx(&mut self, now: SimTime) -> Option<SimTime> {
        let tx_left = self.tx_left();
        if self.in_service.is_none() || tx_left == 0 {
            return None;
        }
        let gate = self.mac.as_mut()?.transmit(now, tx_left);
        let lay = self.layered_mut();
        match gate {
            Gate::Done { first, end } => {
                lay.tx_first = lay.tx_first.min(first);
                lay.tx_left = 0;
                Some(end)
            }
            Gate::Paused { sent_ns, first } => {
                lay.tx_first = lay.tx_first.min(first.unwrap_or(SimTime::MAX));
                lay.tx_left -= sent_ns;
                None
            }
        }
    }

    /// When the first bit of the packet whose last bit leaves at `end` went on the air:
    /// under a MAC, the start of the first granted slot it used (it may have waited for
    /// capacity since it was taken from the buffer); otherwise one serialization time
    /// before `end`. With `end`, the airtime an error model judges. Under a MAC that
    /// interval includes the gaps between the frame's slots, where a bad spell does not
    /// touch its bits. A spell longer than the longest such gap meets one of its slots
    /// all the same (seed 004's spells last 60 ms or more; with a slot granted in every
    /// superframe the gaps are under 26.5 ms), so mostly spells that fall within a gap
    /// are judged too harshly.
    pub fn airtime_start(&self, end: SimTime, size: u32) -> SimTime {
        match (&self.mac, self.lay.as_ref().map(|l| l.tx_first)) {
            (Some(_), Some(first)) if first <= end => first,
            _ => SimTime(end.0.saturating_sub(self.rate.tx_time(size).0)),
        }
    }

    /// Whether the packet in service is waiting for MAC capacity.
    pub fn tx_paused(&self) -> bool {
        self.in_service.is_some() && self.tx_left() > 0
    }

    /// Bytes of the packet in service not yet serialized (all of it when unstarted).
    pub fn unsent_in_service_bytes(&self) -> u64 {
        match self.in_service {
            None => 0,
            Some(_) if self.tx_left() == 0 => 0,
            Some(_) => (self.tx_left() as u128 * self.rate.0 as u128).div_ceil(8_000_000_000) as u64,
        }
    }

    /// Queues a control frame ahead of everything else.
    pub fn push_control(&mut self, pkt: QueuedPacket) {
        let lay = self.layered_mut();
        lay.control_bytes += pkt.size as u64;
        lay.control.push_back(pkt);
    }

    /// The next control frame, if any.
    pub fn pop_control(&mut self) -> Option<QueuedPacket> {
        let lay = self.lay.as_mut()?;
        let q = lay.control.pop_front()?;
        lay.control_bytes -= q.size as u64;
        Some(q)
    }

    /// Heap bytes the link holds besides its own record: the overflow of its pipe and
    /// queue, its AQM drop list and, on a layered link, that state and its control and
    /// MAC buffers (nothing up front on a plain link).
    pub fn heap_bytes(&self) -> usize {
        self.pipe.heap_bytes()
            + self.queue.heap_bytes()
            + self.corrupt.capacity() * std::mem::size_of::<(SimTime, PacketRef)>()
            + self.aqm_drops.capacity() * std::mem::size_of::<(QueuedPacket, DropCause)>()
            + self.lay.as_ref().map_or(0, |l| {
                std::mem::size_of::<LayeredState>() + l.control.heap_bytes() + l.mac_buffer.heap_bytes()
            })
    }

    /// Bytes of control frames waiting.
    pub fn control_bytes(&self) -> u64 {
        self.lay.as_ref().map_or(0, |l| l.control_bytes)
    }

    /// Ends the current transmission; returns the packet.
    pub fn finish_tx(&mut self, now: SimTime) -> PacketRef {
        let pkt = self.in_service.take().expect("tx done on an idle link");
        // Under a MAC the transmitter was busy only in granted slots: its serialization time.
        self.stats.busy_ns += match self.mac {
            Some(_) => self.rate.tx_time(pkt.size).0,
            None => now.0 - self.busy_since.0,
        };
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += pkt.size as u64;
        pkt
    }

    /// Busy time including a transmission in progress at `now`.
    pub fn busy_ns_at(&self, now: SimTime) -> u64 {
        match (&self.mac, self.in_service) {
            (Some(_), Some(p)) => self.stats.busy_ns + self.rate.tx_time(p.size).0.saturating_sub(self.tx_left()),
            _ => self.stats.busy_ns + self.in_service.map_or(0, |_| now.0 - self.busy_since.0),
        }
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn hot_fields_fit_in_few_cache_lines() {
        eprintln!(
            "Link: {} B, hot {} B, arrival {} B, layered state {} B",
            std::mem::size_of::<Link>(),
            Link::HOT_BYTES,
            Link::ARRIVAL_BYTES,
            std::mem::size_of::<LayeredState>()
        );
        assert!(Link::ARRIVAL_BYTES <= 2 * 64, "{}", Link::ARRIVAL_BYTES);
        assert!(Link::HOT_BYTES <= 7 * 64, "{}", Link::HOT_BYTES);
    }
}
