//! The fixed-rate link path: one event per packet per hop on work-conserving links.
//!
//! A link whose queue is drop-tail or RED, with no MAC and no link layer, serves its
//! queue first in, first out at a fixed rate and never pauses: a packet accepted at
//! `now` starts serializing when the transmitter frees up (`Link::tx_end`, or `now`
//! when idle) and its last bit leaves `rate.tx_time(size)` later. Everything that
//! happens to it on the link is therefore known at enqueue, as in the analytical FIFO
//! queue of the Lindley recursion (D. V. Lindley, "The theory of queues with a single
//! server", Proc. Cambridge Phil. Soc. 48(2), 1952: a departure is the later of the
//! arrival and the previous departure, plus the service time). So at enqueue this
//! path decides the drop, asks the error model about the frame's airtime
//! `[start, departure)` (as the general path does when the frame ends: the calls come
//! in the same order with the same arguments), and puts the packet straight into the
//! propagation pipe at `departure + delay`. Only the pipe's head has an event: the
//! arrival at the next hop. There is no transmission-end event and no separate pipe
//! arrival; a corrupted frame gets one event, its drop when its last bit leaves.
//!
//! **The queue the drops see.** The link keeps its queue discipline object (the
//! drop-tail FIFO or RED) with the packets still waiting, and the packet in service
//! with its departure (`Link::svc_end`); the waiting packets leave back to back, so
//! the departure of each is the one before plus its serialization time. Before a
//! packet is offered, `sync` replays the departures up to `now` in order, exactly as
//! the general path's transmission-end events would: the counters, the occupancy
//! integral (`Link::account` at each departure), the busy time, and a dequeue at the
//! departure time, which is where RED notes that its queue went idle (ns-2's
//! `idle_`/`idle_time_`). Drop-tail's occupancy (packets or bytes, the packet in
//! service counted or not) and RED's average, count and idle decay are then computed
//! from the same state at the same times as on the general path. The queue's FIFO is
//! the ordered store of pending departures: it grows to the link's high-water mark,
//! so nothing is allocated per packet.
//!
//! **What may differ.** A departure at the very instant of an arrival counts as done
//! (`d <= now`); on the general path the order of the two events at that instant
//! follows when each was scheduled, either way. Arrivals at the next hop are scheduled
//! earlier (at enqueue), so among events at one instant they may run in another
//! order. Queue-trace rows at departures are written when the link is next synced and
//! put in time order when the run finishes (`sort_queue_rows`); the packet trace's
//! `transmit` rows carry their start time (the recorder orders by time). A CE mark
//! RED sets is written into the packet at enqueue (the general path writes it when
//! the packet starts serializing; the packet is the same).
//!
//! Which links take this path is decided once, when the simulation is built
//! (`Simulation::build`, `fixed_rate_eligible`); `Simulation::use_general_links` puts
//! every link back on the general path (the tests compare the two).

use super::{arrive_event, Event, Simulation};
use crate::net::link::Link;
use crate::net::packet::{Ecn, LinkId, PacketRef};
use crate::net::queue::{DropCause, QueueConfig, QueueDisc};
use crate::time::SimTime;

/// Whether a link built from queue `q` can take the fixed-rate path: drop-tail or RED
/// (they decide at enqueue and serve FIFO), on a link with no MAC and no link layer.
pub(super) fn fixed_rate_eligible(q: &QueueConfig, link: &Link) -> bool {
    matches!(q, QueueConfig::DropTail(_) | QueueConfig::Red(_)) && !link.layered && link.mac.is_none() && link.ll.is_none()
}

/// What the fixed-rate path keeps between events: when the general path would have
/// scheduled the event being handled, for the order of a departure and an arrival at
/// one instant (`Simulation::fixed_enqueue`), and whether queue-trace rows were
/// written late (`Simulation::sort_queue_rows`).
#[derive(Debug, Default)]
pub(super) struct FixedState {
    /// When the general path scheduled the event being handled: a pipe arrival's (see
    /// [`Self::pipe_arrival`]), a timer's arming ([`Self::timer_fired`]); the start of
    /// time for an event scheduled when the simulation was built.
    cause_sched: SimTime,
    /// The pipe arrival being handled was scheduled when the one before it arrived
    /// (not when it left).
    cause_queued: bool,
    /// A fixed-rate link wrote queue-trace rows late.
    rows_late: bool,
}

/// How long before `at` a timer set at `now` fires, for [`FixedState::timer_fired`]:
/// ns, saturating at `u32::MAX` so that a timer event stays 16 bytes.
pub(super) fn lead(now: SimTime, at: SimTime) -> u32 {
    (at.0.saturating_sub(now.0)).min(u32::MAX as u64) as u32
}

impl FixedState {
    /// A new event is being handled: not a pipe arrival until [`Self::pipe_arrival`] says so.
    pub(super) fn new_event(&mut self) {
        self.cause_sched = SimTime::ZERO;
        self.cause_queued = false;
    }

    /// A timer set `lead` ns before `now` fires: the general path scheduled it then.
    /// A lead saturated at `u32::MAX` (4.29 s) puts the arming that long ago, which
    /// orders it the same way: before any service start on a link whose packets take
    /// less than 4.29 s to serialize.
    pub(super) fn timer_fired(&mut self, now: SimTime, lead: u32) {
        self.cause_sched = SimTime(now.0.saturating_sub(lead as u64));
    }

    /// The head of `link`'s pipe, which left its transmitter at `left`, arrives at
    /// `now`. The general path scheduled this arrival when the packet left (its pipe
    /// was then empty) or when the one before it arrived.
    pub(super) fn pipe_arrival(&mut self, link: &mut Link, left: SimTime, now: SimTime) {
        self.cause_sched = left.max(link.last_arrival);
        self.cause_queued = link.last_arrival > left;
        link.last_arrival = now;
    }
}

impl Simulation {
    /// Puts every link on the general path (transmission-end events), whatever its
    /// configuration; call before the run. The results are those of the fixed-rate
    /// path but for the order of events at equal times (module doc).
    pub fn use_general_links(&mut self) {
        for l in self.links.iter_mut() {
            l.fixed_rate = false;
        }
    }

    /// Offers `pkt` to fixed-rate link `l` at `now` (the general path's
    /// `Simulation::enqueue`, with the transmission decided here).
    pub(super) fn fixed_enqueue(&mut self, l: LinkId, pkt: PacketRef, now: SimTime) {
        self.fixed_sync(l, now);
        // A departure at this very instant: on the general path its transmission-end
        // event, scheduled when the packet started serializing (at `s`), runs before
        // the event that brings this packet if that one was scheduled later
        // (`cause_sched`). Both scheduled at `s`: the arrival came first if the one
        // before it on its pipe arrived at `s` and was enqueued here at `s` on an idle
        // transmitter, or ahead of the departure at `s` (`last_enq_first`).
        let link = &mut self.links[l as usize];
        let departure_first = match link.in_service {
            Some(p) if link.svc_end == now => {
                let s = SimTime(now.0 - link.rate.tx_time(p.size).0);
                match s.cmp(&self.fixed.cause_sched) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Greater => false,
                    std::cmp::Ordering::Equal => !(self.fixed.cause_queued && link.last_enq == s && link.last_enq_first),
                }
            }
            _ => false,
        };
        link.last_enq = now;
        link.last_enq_first = !departure_first;
        if departure_first {
            self.fixed_sync(l, SimTime(now.0 + 1));
        }
        let link = &mut self.links[l as usize];
        link.account(now);
        // Drop-tail and RED hash no flows: no flow key.
        let verdict = link.enqueue(now, pkt, || 0);
        if !self.book_verdict(l, pkt, verdict, now) {
            return;
        }
        let pool = &mut self.pool;
        let link = &mut self.links[l as usize];
        let mut pkt = pkt;
        if link.marks_ecn {
            // RED marks the copy it stores; the packet carries the mark from here.
            if let Some(q) = link.queue.last_enqueued().filter(|q| q.ecn() == Ecn::Ce) {
                let p = pool.get_mut(q.id);
                if p.ecn != Ecn::Ce {
                    p.ecn = Ecn::Ce;
                    link.stats.ce_marks += 1;
                }
                pkt = q;
            }
        }
        let idle = link.in_service.is_none();
        let start = if idle {
            // The transmitter takes it at once (the queue held nothing else).
            let q = link.dequeue(now).expect("the packet just accepted");
            debug_assert_eq!(q.id, pkt.id);
            link.svc_end = link.start_tx(q, now);
            now
        } else {
            link.tx_end
        };
        let end = start + link.rate.tx_time(pkt.size);
        link.tx_end = end;
        self.rec.transmit(start, l, pkt, pool);
        let lost = match link.error.as_mut() {
            Some(e) => e.is_lost(start, end, pkt.size),
            None => false,
        };
        if lost {
            if link.corrupt.is_empty() {
                self.sched.schedule(end, Event::Corrupt(l));
            }
            link.corrupt.push_back((end, pkt));
        } else {
            let (arrive, first) = link.pipe_push(end, pkt);
            if first {
                let ev = arrive_event(&self.routes, l, link.to, pkt);
                if idle && link.jitter.is_none() {
                    // Serialization plus propagation: a few values per link.
                    self.sched.schedule_after(arrive - now, ev);
                } else {
                    self.sched.schedule(arrive, ev);
                }
            }
        }
        link.note_occupancy_max();
        self.trace_queue(l, now);
    }

    /// Replays fixed-rate link `l`'s departures before `before` (the general path's
    /// transmission ends): counters, busy time, occupancy integral, the dequeue of the
    /// next packet at each departure, and a queue-trace row at each if recorded.
    #[inline]
    pub(super) fn fixed_sync(&mut self, l: LinkId, before: SimTime) {
        let link = &mut self.links[l as usize];
        if link.in_service.is_none() || link.svc_end >= before {
            return;
        }
        self.fixed_replay(l, before);
    }

    fn fixed_replay(&mut self, l: LinkId, before: SimTime) {
        let record = self.record_queue[l as usize];
        loop {
            let link = &mut self.links[l as usize];
            if link.in_service.is_none() || link.svc_end >= before {
                return;
            }
            let d = link.svc_end;
            link.finish_tx(d);
            link.account(d);
            if let Some(q) = link.dequeue(d) {
                link.svc_end = link.start_tx(q, d);
            }
            if record {
                self.fixed.rows_late = true;
                self.record_queue_row(l, d);
            }
        }
    }

    /// Replays every fixed-rate link's departures before `before`.
    pub(super) fn fixed_sync_all(&mut self, before: SimTime) {
        for l in 0..self.links.len() {
            if self.links[l].fixed_rate {
                self.fixed_sync(l as LinkId, before);
            }
        }
    }

    /// The head of fixed-rate link `l`'s corrupted frames leaves now: it is dropped.
    pub(super) fn on_fixed_corrupt(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        let (_, pkt) = link.corrupt.pop_front().expect("a corrupted frame");
        if let Some(&(next, _)) = link.corrupt.front() {
            self.sched.schedule(next, Event::Corrupt(l));
        }
        link.record_drop(DropCause::Corruption);
        self.on_drop(l, pkt, DropCause::Corruption, now);
    }

    /// At the start of the measurement window: the departures before it are replayed,
    /// and the error model's judgements of packets still to leave (made at enqueue)
    /// count in the window, as they do on the general path.
    pub(super) fn fixed_open_window(&mut self, now: SimTime) {
        self.fixed_sync_all(now);
        self.shift_judged(true);
    }

    /// At the end of the run (`end`): the departures up to it are replayed, and the
    /// judgements of packets still to leave are left out of the error model's counts.
    pub(super) fn fixed_finish(&mut self, end: SimTime) {
        self.fixed_sync_all(SimTime(end.0 + 1));
        self.shift_judged(false);
        self.sort_queue_rows();
    }

    fn shift_judged(&mut self, into_window: bool) {
        for link in self.links.iter_mut().filter(|l| l.fixed_rate && l.error.is_some()) {
            let pending = link.backlog_packets() as u64 + link.in_service.is_some() as u64;
            let lost = link.corrupt.len() as u64;
            link.shift_judged(pending, lost, into_window);
        }
    }

    /// Puts the queue-trace rows in time order (stable: rows of one instant keep the
    /// order they were written in), if a fixed-rate link wrote rows late.
    pub(super) fn sort_queue_rows(&mut self) {
        if !self.fixed.rows_late {
            return;
        }
        let q = &mut self.result.series.queue;
        let mut order: Vec<usize> = (0..q.t_s.len()).collect();
        order.sort_by(|&a, &b| q.t_s[a].total_cmp(&q.t_s[b]));
        q.t_s = order.iter().map(|&i| q.t_s[i]).collect();
        q.link = order.iter().map(|&i| q.link[i]).collect();
        q.pkts = order.iter().map(|&i| q.pkts[i]).collect();
        q.bytes = order.iter().map(|&i| q.bytes[i]).collect();
    }
}
