//! Dispatch for layered links (`Link::layered`): links with a MAC, a link layer, or
//! link-layer control frames to carry. The mechanisms live in `net/` (`net::mac`,
//! `net::link`); this file only moves packets between them and schedules events, the
//! way `sim/mod.rs` does for plain links (whose code path is left untouched).

use super::{Event, Simulation};
use crate::net::packet::{LinkId, PacketId};
use crate::net::queue::{DropCause, EnqueueCtx, QueuedPacket, Verdict};
use crate::time::SimTime;

impl Simulation {
    /// An IP packet offered to a layered link at its sending end.
    pub(super) fn layered_enqueue(&mut self, l: LinkId, pkt: PacketId, now: SimTime) {
        let size = self.pool.get(pkt).size;
        let link = &mut self.links[l as usize];
        link.account(now);
        let mut ctx = EnqueueCtx {
            now,
            in_service_bytes: link.in_service.map(|(_, s)| s),
            rng: &mut link.queue_rng,
        };
        match link.queue.enqueue(QueuedPacket { id: pkt, size }, &mut ctx) {
            Verdict::Dropped(cause) => {
                link.record_drop(cause);
                self.on_drop(l, pkt, cause, now);
            }
            Verdict::Enqueued => {
                link.stats.enq_pkts += 1;
                link.stats.enq_bytes += size as u64;
                if let Some(mac) = link.mac.as_mut() {
                    mac.on_enqueue(now, size);
                }
                self.kick(l, now);
                let link = &mut self.links[l as usize];
                link.note_occupancy_max();
                self.trace_queue(l, now);
            }
        }
    }

    /// Starts the next transmission when the transmitter is free: control frames
    /// first, then the queue. Under a MAC the packet may wait for capacity.
    fn kick(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        if link.in_service.is_some() {
            return;
        }
        let next = match link.pop_control() {
            Some(q) => Some(q),
            None => link.queue.dequeue(now),
        };
        if let Some(q) = next {
            if let Some(done) = link.start_tx_gated(q.id, q.size, now) {
                self.sched.schedule(done, Event::TxDone(l));
            }
        }
    }

    /// The last bit of a packet left a layered link's transmitter.
    pub(super) fn layered_tx_done(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        let (pkt, size) = link.finish_tx(now);
        let lost = match link.error.as_mut() {
            Some(e) => e.is_lost(now, size),
            None => false,
        };
        link.account(now);
        self.kick(l, now);
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
        self.trace_queue(l, now);
    }

    /// A superframe boundary of link `l`'s MAC: new allocation, request, and a paused
    /// transmission resumed.
    pub(super) fn on_mac_tick(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        let backlog = link.queue.len_bytes() + link.control_bytes() + link.unsent_in_service_bytes();
        let Some(mac) = link.mac.as_mut() else { return };
        let next = mac.on_superframe(now, backlog);
        self.sched.schedule(next, Event::MacTick(l));
        if link.tx_paused() {
            if let Some(done) = link.resume_tx(now) {
                self.sched.schedule(done, Event::TxDone(l));
            }
        } else {
            self.kick(l, now);
        }
    }
}
