//! Dispatch for layered links (`Link::layered`): links with a MAC, a link layer, or a
//! peer link layer's control frames to carry. The mechanisms live in `net/`
//! (`net::mac`, `net::linklayer`, `net::link`); this file only builds them, moves
//! packets and frames between them and schedules their events, the way `sim/mod.rs`
//! does for plain links (whose code path is left untouched).
//!
//! Sending end of a link with a link layer: IP packet -> `LinkLayer::offer` (its IP
//! queues) -> `feed`: while the MAC buffer has room, control frames then
//! `LinkLayer::next_frame` -> MAC buffer -> transmitter (gated by the MAC) -> error
//! model -> `LinkLayer::on_transmitted` -> pipe. Receiving end: `LinkLayer::on_frame`
//! delivers IP packets in order and emits ACKs, which the reverse link sends as
//! control frames; at the sending end they reach `LinkLayer::on_ack`.

use super::{Event, Simulation};
use crate::net::link::Link;
use crate::net::linklayer::{LinkContext, LlOutput};
use crate::net::packet::{LinkFrameKind, LinkId, PacketId, PacketRef, Transport};
use crate::net::queue::{DropCause, EnqueueCtx, Fifo};
use crate::net::topology::Graph;
use crate::scenario::{default_queue, FlowSpec, Scenario};
use crate::time::SimTime;

/// Refuses AQM features on layered links: their path (`layered_enqueue`, the MAC
/// buffer, link-layer frames) neither frees packets a discipline drops from inside its
/// queue nor writes CE marks back, so CoDel, FQ-CoDel and ECN marking stay on plain
/// links for now.
pub(super) fn check_queues(graph: &Graph, links: &[Link]) -> Result<(), String> {
    for (l, link) in graph.links.iter().zip(links) {
        if link.layered && (link.drops_queued || link.marks_ecn || link.hashes_flows) {
            return Err(format!(
                "link '{}' queue: a link with a MAC or a link layer (or carrying a link layer's ACKs) cannot use a \
                 discipline that drops queued packets, hashes flows or marks ECN (codel, fq_codel, ecn = true); \
                 accepted there: drop_tail, red or pie without ecn",
                l.name
            ));
        }
    }
    Ok(())
}

/// Builds the link layers of `links` (after the links themselves), checking what only
/// the whole scenario can: flow names in the channel map, the reverse link for ACKs, and
/// a MAC buffer large enough for the largest frame.
pub(super) fn build_link_layers(sc: &Scenario, graph: &Graph, links: &mut [Link]) -> Result<(), String> {
    if graph.links.iter().all(|l| l.params.link_layer.is_none()) {
        return Ok(());
    }
    // Names in flow-id order: the scenario's TCP and UDP flows. Request/response
    // applications' transaction flows (ids after these) are not mappable by name and
    // ride channel 0.
    let flow_names: Vec<String> = sc
        .flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let name = match f {
                FlowSpec::Tcp(t) => &t.name,
                FlowSpec::Udp(u) => &u.name,
                FlowSpec::Rpc(_) => return None,
            };
            Some(name.clone().unwrap_or_else(|| format!("flow{i}")))
        })
        .collect();
    // The largest IP packet any flow sends (TCP: MSS + headers; UDP: its packet size).
    let largest = sc
        .flows
        .iter()
        .map(|f| match f {
            FlowSpec::Tcp(t) => t.tcp.resolve().map_or(0, |c| c.mss + c.header_bytes),
            FlowSpec::Udp(u) => u.packet_bytes,
            FlowSpec::Rpc(r) => r.tcp.resolve().map_or(0, |c| c.mss + c.header_bytes),
        })
        .max()
        .unwrap_or(0);
    for (i, l) in graph.links.iter().enumerate() {
        let Some(cfg) = &l.params.link_layer else { continue };
        let ctx = |e: String| format!("link '{}' {e}", l.name);
        cfg.validate().map_err(ctx)?;
        let channels = cfg.channel_names();
        let mut flow_channel = vec![0u8; flow_names.len()];
        for (flow, channel) in cfg.map() {
            let f = flow_names.iter().position(|n| n == flow).ok_or_else(|| {
                ctx(format!("link_layer.map: unknown flow '{flow}'; flows: {}", flow_names.join(", ")))
            })?;
            flow_channel[f] = channels.iter().position(|c| c == channel).expect("validated") as u8;
        }
        let frame = largest as u64 + cfg.header_bytes() as u64;
        if cfg.mac_buffer() < frame {
            return Err(ctx(format!(
                "link_layer.mac_buffer ({} B) cannot hold the largest frame ({frame} B: a {largest} B packet and a {} B header); accepted: at least {frame} B",
                cfg.mac_buffer(),
                cfg.header_bytes()
            )));
        }
        let rev = graph
            .links
            .iter()
            .position(|r| r.from == l.to && r.to == l.from)
            .ok_or_else(|| ctx(format!("link_layer: no reverse link from '{}' to '{}' to carry its ACKs", l.to, l.from)))?;
        let mut queue = l.params.queue.clone().unwrap_or_else(default_queue);
        queue.set_link_rate(l.params.rate);
        let link = &mut links[i];
        let ll = cfg.build(LinkContext {
            link: i as LinkId,
            from: link.from,
            to: link.to,
            delay: l.params.delay,
            queue,
            flow_channel,
        });
        link.ll = Some(ll.map_err(|e| ctx(format!("link_layer: {e}")))?);
        let lay = link.layered_mut();
        lay.mac_buffer = Fifo::default();
        lay.mac_buffer_limit = cfg.mac_buffer();
        lay.ack_link = rev as LinkId;
        link.layered = true;
        links[rev].layered = true;
    }
    Ok(())
}

impl Simulation {
    /// An IP packet offered to a layered link at its sending end.
    pub(super) fn layered_enqueue(&mut self, l: LinkId, pkt: PacketRef, now: SimTime) {
        let size = pkt.size;
        let link = &mut self.links[l as usize];
        link.account(now);
        let verdict = match link.ll.as_mut() {
            Some(ll) => {
                // The channel map is per flow: the link layer reads the pooled packet's
                // flow (layered links only; plain forwarding never does).
                let flow = self.pool.get(pkt.id).flow;
                let mut ctx = EnqueueCtx {
                    now,
                    in_service_bytes: None,
                    rng: &mut link.queue_rng,
                    flow_key: 0,
                    dropped: &mut link.aqm_drops,
                };
                ll.offer(pkt, flow, &mut ctx)
            }
            None => link.enqueue(now, pkt, || 0),
        };
        if self.book_verdict(l, pkt, verdict, now) {
            let link = &mut self.links[l as usize];
            if link.ll.is_none() {
                if let Some(mac) = link.mac.as_mut() {
                    mac.on_enqueue(now, size);
                }
            }
            self.feed(l, now);
            self.links[l as usize].note_occupancy_max();
            self.trace_queue(l, now);
        }
    }

    /// Fills a link layer's MAC buffer while it has room (control frames first), then
    /// starts the transmitter if it is free. Without a link layer, only the latter.
    fn feed(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        if link.ll.is_some() {
            link.account(now);
            loop {
                let lay = link.layered_mut();
                let room = lay.mac_buffer_limit.saturating_sub(lay.mac_buffer.bytes());
                let next = match lay.control.front().map(|c| c.size as u64) {
                    Some(size) if size <= room => link.pop_control(),
                    Some(_) => None,
                    None => link.ll.as_mut().and_then(|ll| ll.next_frame(room, now, &mut self.pool)),
                };
                let Some(q) = next else { break };
                if let Some(mac) = link.mac.as_mut() {
                    mac.on_enqueue(now, q.size);
                }
                link.layered_mut().mac_buffer.push(q);
            }
        }
        self.kick(l, now);
    }

    /// Starts the next transmission when the transmitter is free: the MAC buffer with a
    /// link layer; otherwise control frames first, then the queue. Under a MAC the
    /// packet may wait for capacity.
    fn kick(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        if link.in_service.is_some() {
            return;
        }
        let next = if link.ll.is_some() {
            link.layered_mut().mac_buffer.pop()
        } else {
            match link.pop_control() {
                Some(q) => Some(q),
                // Disciplines that drop at dequeue are refused on layered links.
                None => link.dequeue(now),
            }
        };
        if let Some(q) = next {
            // Under a MAC the first bit may wait for a granted slot: the row says when
            // the transmitter took the packet.
            self.rec.transmit(now, l, q, &self.pool);
            if let Some(done) = link.start_tx_gated(q, now) {
                self.sched.schedule(done, Event::TxDone(l));
            }
        }
    }

    fn into_pipe(&mut self, l: LinkId, pkt: PacketRef, now: SimTime) {
        let link = &mut self.links[l as usize];
        let (arrive, first) = link.pipe_push(now, pkt);
        if first {
            self.sched.schedule(arrive, super::arrive_event(&self.routes, l, link.to, pkt));
        }
    }

    /// The last bit of a packet or frame left a layered link's transmitter.
    pub(super) fn layered_tx_done(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        let pkt = link.finish_tx(now);
        let start = link.airtime_start(now, pkt.size);
        let lost = match link.error.as_mut() {
            Some(e) => e.is_lost(start, now, pkt.size),
            None => false,
        };
        link.account(now);
        self.kick(l, now);
        match self.pool.get(pkt.id).transport {
            // A peer link layer's ACK carried by this link.
            Transport::Link(f) if matches!(f.kind, LinkFrameKind::Ack { .. }) => {
                if lost {
                    self.pool.free(pkt.id);
                } else {
                    self.into_pipe(l, pkt, now);
                }
            }
            // One of this link's own link-layer frames.
            Transport::Link(_) => {
                let mut out = std::mem::take(&mut self.ll_out);
                if let Some(ll) = self.links[l as usize].ll.as_mut() {
                    ll.on_transmitted(pkt.id, lost, now, &mut self.pool, &mut out);
                }
                if !lost {
                    self.into_pipe(l, pkt, now);
                }
                self.ll_output(l, out, now);
            }
            _ => {
                if lost {
                    self.links[l as usize].record_drop(DropCause::Corruption);
                    self.on_drop(l, pkt, DropCause::Corruption, now);
                } else {
                    self.into_pipe(l, pkt, now);
                }
            }
        }
        self.feed(l, now);
        self.trace_queue(l, now);
    }

    /// A link-layer frame arrived at the far end of link `l`: data, redundancy and
    /// forward notices go to `l`'s receiver; an ACK goes to the sender of the link it
    /// acknowledges.
    pub(super) fn on_link_frame(&mut self, l: LinkId, pkt: PacketRef, now: SimTime) {
        let pkt = pkt.id;
        let Transport::Link(f) = self.pool.get(pkt).transport else { return };
        let is_ack = matches!(f.kind, LinkFrameKind::Ack { .. });
        let owner = if is_ack { f.link } else { l };
        let mut out = std::mem::take(&mut self.ll_out);
        match self.links[owner as usize].ll.as_mut() {
            Some(ll) if is_ack => ll.on_ack(pkt, now, &mut self.pool, &mut out),
            Some(ll) => ll.on_frame(pkt, now, &mut self.pool, &mut out),
            None => self.pool.free(pkt),
        }
        self.ll_output(owner, out, now);
        if is_ack {
            self.feed(owner, now);
        }
    }

    /// The ACK timer of a link layer's channel.
    pub(super) fn on_ll_timer(&mut self, l: LinkId, channel: u8, gen: u32, now: SimTime) {
        let mut out = std::mem::take(&mut self.ll_out);
        if let Some(ll) = self.links[l as usize].ll.as_mut() {
            ll.on_timer(channel, gen, now, &mut self.pool, &mut out);
        }
        self.ll_output(l, out, now);
    }

    /// The hop-to-hop handle of a pooled IP packet a link layer hands back (it keeps
    /// packet ids only).
    fn packet_ref(&self, id: PacketId) -> PacketRef {
        let p = self.pool.get(id);
        PacketRef::of(id, p)
    }

    /// Acts on what link `l`'s link layer produced: IP deliveries at the far end, IP
    /// losses, ACKs for the reverse link, timers.
    fn ll_output(&mut self, l: LinkId, mut out: LlOutput, now: SimTime) {
        if !out.is_empty() {
            let (to, rev) = {
                let link = &self.links[l as usize];
                (link.to, link.layered_state().map_or(l, |s| s.ack_link))
            };
            for i in 0..out.deliver.len() {
                let p = self.packet_ref(out.deliver[i]);
                self.forward(to, p, now);
            }
            for i in 0..out.lost.len() {
                let p = self.packet_ref(out.lost[i]);
                self.links[l as usize].record_drop(DropCause::Corruption);
                self.on_drop(l, p, DropCause::Corruption, now);
            }
            if !out.acks.is_empty() {
                let r = &mut self.links[rev as usize];
                for a in &out.acks {
                    r.push_control(*a);
                    if r.ll.is_none() {
                        if let Some(mac) = r.mac.as_mut() {
                            mac.on_enqueue(now, a.size);
                        }
                    }
                }
                self.feed(rev, now);
            }
            for &(channel, at, gen) in &out.timers {
                self.sched.schedule_timer(at, Event::LlTimer { link: l, channel, gen });
            }
            out.deliver.clear();
            out.lost.clear();
            out.acks.clear();
            out.timers.clear();
        }
        self.ll_out = out;
    }

    /// A superframe boundary of link `l`'s MAC: new allocation, request, and a paused
    /// transmission resumed.
    pub(super) fn on_mac_tick(&mut self, l: LinkId, now: SimTime) {
        let link = &mut self.links[l as usize];
        let backlog = link.mac_backlog_bytes();
        let Some(mac) = link.mac.as_mut() else { return };
        let next = mac.on_superframe(now, backlog);
        self.sched.schedule_timer(next, Event::MacTick(l));
        if link.tx_paused() {
            if let Some(done) = link.resume_tx(now) {
                self.sched.schedule(done, Event::TxDone(l));
            }
        } else {
            self.kick(l, now);
        }
    }
}
