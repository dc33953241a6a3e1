//! SLACP: seed 004's TCP-friendly link layer. Partially reliable, in-order ARQ with
//! cumulative ACKs and selective repeat, incremental Reed-Solomon FEC on retransmitted
//! blocks, and logical channels.
//!
//! References: seed 004, M. Kojo, "On Efficient and TCP/IP Friendly Link Layers for
//! Wireless WANs", FDPW 2005 (every mechanism below is on its slides "TCP/IP-friendly
//! link layer principles" and "SLACP FEC block encoding"); RFC 3366 (link ARQ advice:
//! persistence, in-order delivery, flow control towards IP) and RFC 3819 §8; RFC 3758
//! (PR-SCTP's FORWARD TSN, the model for telling the receiver what was given up);
//! `fec.rs` for the RS(255, k) erasure model.
//!
//! **Sender.** Each channel has its own IP queue (a copy of the link's queue
//! discipline) and holds at most one unsent frame taken from it, so the backlog stays
//! in IP. When the link's MAC buffer has room the link asks for the next frame, in
//! strict priority: for each channel in priority order, a pending forward notice, then
//! retransmissions and FEC redundancy frames; only then new frames, again by channel
//! priority. A frame that does not fit in the room left stops the search (flow control
//! LLC -> MAC; no lower-priority frame overtakes it). Every frame of an ARQ channel is
//! kept (the IP packet stays in the pool) until acknowledged or given up; at most
//! 256 sequence numbers are outstanding per channel (the ACK bitmap's reach).
//!
//! **No retransmission timer at the sender.** A frame is known lost when an ACK
//! reports it missing although its latest transmission left the transmitter at `t_end`
//! with `t_end + delay <= horizon`, where the ACK's horizon is the arrival time of the
//! frame that triggered it (or, for a timer repeat at `t`, `t - 1 ns`): the link is
//! FIFO with a constant propagation delay, so the frame would have arrived and been
//! processed by then. The sender learns `t_end` from its MAC
//! (`on_transmitted`) and the link's delay from its configuration; it acts only on
//! ACKs. Channels without FEC retransmit each lost frame alone; after `persistence`
//! retransmissions a frame still lost is given up (partial reliability) and TCP
//! recovers it. On FEC channels the frames an ACK first shows lost are retransmitted
//! together as a block of k <= `fec_max_block` frames plus
//! `ceil(round * fec_ratio * resent)` redundancy frames of RS(255, k) (the original
//! transmission carries none). Once every frame of a round has left and an ACK shows
//! the block still undecoded, the next round resends the missing members with more new
//! redundancy (incremental: new redundancy indices each round, as long as the longest
//! member); after `persistence` rounds the missing members are given up. Giving up
//! queues a forward notice (`Forward`, repeated when an ACK shows it lost); every frame
//! also carries the sender's lowest outstanding sequence number (`skip_below`).
//!
//! **Receiver.** In-order delivery to IP per ARQ channel: frames above a gap wait;
//! a frame below `skip_below` that never arrived is skipped. A block decodes as soon
//! as the receiver holds k distinct symbols of it (members and redundancy frames), and
//! the missing members are delivered as if received. Every arriving frame triggers a
//! cumulative ACK with a bitmap of the 256 frames above it (selective repeat
//! requests). An ACK timer repeats the latest ACK when no new frame arrives for
//! `ack_timer`: indefinitely while frames wait above a gap, and `ack_repeats` times
//! otherwise (the repeats are what reveals lost retransmissions and lost last frames
//! when the sender has nothing new to send). Channels without ARQ deliver every frame
//! that arrives at once and send no ACKs.
//!
//! Priorities: link ACKs travel as control frames of the reverse link, sent before its
//! queue; retransmissions, redundancy and forward notices go before new frames.
//!
//! Deviations and choices the seed leaves open: one ACK per arriving frame (no ACK
//! aggregation); sizes: `header_bytes` per data and redundancy frame, `ack_bytes` per
//! ACK, `header_bytes + 8` per forward notice; a frame lost on the link is counted in
//! `frames_corrupted`, and only given-up packets (and lost frames of channels without
//! ARQ) are IP losses. A last frame lost while the sender has nothing more to send is
//! found only by the receiver's idle ACK repeats (or by the next frame): the seed's
//! design has no sender timer.

use super::fec::{self, ErasureBlock};
use super::{LinkContext, LinkLayer, LlOutput, LlStats};
use crate::net::packet::{
    BlockRef, Ecn, FlowId, LinkFrame, LinkFrameKind, LinkId, NodeId, Packet, PacketId, PacketPool, Transport, NO_FLOW,
};
use crate::net::queue::{DequeueCtx, EnqueueCtx, QueueDisc, QueuedPacket, Verdict};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Sequence numbers outstanding per channel, and the reach of an ACK's bitmap.
pub const WINDOW: u64 = 256;

fn yes() -> bool {
    true
}
fn d_mac_buffer() -> u64 {
    14_400
}
fn d_persistence() -> u32 {
    3
}
fn d_ack_timer() -> SimDuration {
    SimDuration::from_millis(200)
}
fn d_ack_repeats() -> u32 {
    10
}
fn d_fec_ratio() -> f64 {
    0.25
}
fn d_fec_max_block() -> u32 {
    32
}
fn d_header() -> u32 {
    4
}
fn d_ack_bytes() -> u32 {
    40
}
fn d_channels() -> Vec<ChannelSpec> {
    vec![ChannelSpec { name: "default".into(), priority: 0, arq: true, fec: true }]
}

/// A logical channel: its own IP queue, sequence space, priority and ARQ/FEC switches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelSpec {
    pub name: String,
    /// Lower is served first; ties in declaration order. Default 0.
    #[serde(default)]
    pub priority: u8,
    /// Retransmissions and in-order delivery. Default true.
    #[serde(default = "yes")]
    pub arq: bool,
    /// Incremental RS redundancy on retransmitted blocks (needs `arq`). Default true.
    #[serde(default = "yes")]
    pub fec: bool,
}

/// The serde description of SLACP (`link_layer = { kind = "slacp", ... }`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlacpParams {
    /// Bytes of the MAC buffer the link layer feeds (seed 004: 14.4 kB with SLACP).
    #[serde(default = "d_mac_buffer")]
    pub mac_buffer: u64,
    /// Retransmission rounds before a frame is given up. Default 3.
    #[serde(default = "d_persistence")]
    pub persistence: u32,
    /// Receiver ACK timer: repeat the latest ACK when no frame arrives for this long. Default 200 ms.
    #[serde(default = "d_ack_timer")]
    pub ack_timer: SimDuration,
    /// Idle ACK repeats when no frame waits above a gap. Default 10.
    #[serde(default = "d_ack_repeats")]
    pub ack_repeats: u32,
    /// Redundancy per resent frame in round 1 (round r sends ceil(r * ratio * resent)). Default 0.25.
    #[serde(default = "d_fec_ratio")]
    pub fec_ratio: f64,
    /// Largest FEC block, frames. Default 32.
    #[serde(default = "d_fec_max_block")]
    pub fec_max_block: u32,
    /// Bytes a data or redundancy frame adds to its payload. Default 4.
    #[serde(default = "d_header")]
    pub header_bytes: u32,
    /// Bytes of a link ACK. Default 40.
    #[serde(default = "d_ack_bytes")]
    pub ack_bytes: u32,
    /// The logical channels; the first is where unmapped flows go.
    #[serde(default = "d_channels")]
    pub channels: Vec<ChannelSpec>,
    /// Flow name -> channel name.
    #[serde(default)]
    pub map: BTreeMap<String, String>,
}

impl Default for SlacpParams {
    fn default() -> Self {
        SlacpParams {
            mac_buffer: d_mac_buffer(),
            persistence: d_persistence(),
            ack_timer: d_ack_timer(),
            ack_repeats: d_ack_repeats(),
            fec_ratio: d_fec_ratio(),
            fec_max_block: d_fec_max_block(),
            header_bytes: d_header(),
            ack_bytes: d_ack_bytes(),
            channels: d_channels(),
            map: BTreeMap::new(),
        }
    }
}

impl SlacpParams {
    /// Checks each parameter alone; messages name `link_layer.<field>`.
    pub fn validate(&self) -> Result<(), String> {
        if self.mac_buffer == 0 {
            return Err("link_layer.mac_buffer must be at least 1 byte".into());
        }
        if self.persistence > 1000 {
            return Err(format!("link_layer.persistence must be in [0, 1000] rounds, got {}", self.persistence));
        }
        if self.ack_timer.0 == 0 {
            return Err("link_layer.ack_timer must be positive".into());
        }
        if !(self.fec_ratio.is_finite() && self.fec_ratio > 0.0 && self.fec_ratio <= 8.0) {
            return Err(format!("link_layer.fec_ratio must be in (0, 8], got {}", self.fec_ratio));
        }
        if !(1..=128).contains(&self.fec_max_block) {
            return Err(format!("link_layer.fec_max_block must be in [1, 128] frames, got {}", self.fec_max_block));
        }
        if self.header_bytes > 64 {
            return Err(format!("link_layer.header_bytes must be in [0, 64], got {}", self.header_bytes));
        }
        if !(1..=1500).contains(&self.ack_bytes) {
            return Err(format!("link_layer.ack_bytes must be in [1, 1500], got {}", self.ack_bytes));
        }
        if self.channels.is_empty() || self.channels.len() > 16 {
            return Err(format!("link_layer.channels must list 1 to 16 channels, got {}", self.channels.len()));
        }
        for (i, c) in self.channels.iter().enumerate() {
            if c.name.is_empty() {
                return Err(format!("link_layer.channels[{i}].name must not be empty"));
            }
            if self.channels[..i].iter().any(|o| o.name == c.name) {
                return Err(format!("link_layer.channels[{i}].name: duplicate channel name '{}'", c.name));
            }
            if c.fec && !c.arq {
                return Err(format!(
                    "link_layer.channels[{i}] ('{}'): fec = true needs arq = true (redundancy is added to retransmissions only)",
                    c.name
                ));
            }
        }
        for (flow, ch) in &self.map {
            if !self.channels.iter().any(|c| &c.name == ch) {
                let names: Vec<&str> = self.channels.iter().map(|c| c.name.as_str()).collect();
                return Err(format!("link_layer.map['{flow}']: unknown channel '{ch}'; channels: {}", names.join(", ")));
            }
        }
        Ok(())
    }
}

const NO_BLOCK: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    Pending,
    Acked,
    GivenUp,
}

/// One sequence number at the sender (ARQ channels).
#[derive(Clone, Copy, Debug)]
struct TxSlot {
    pkt: PacketId,
    size: u32,
    /// Transmissions built so far.
    sends: u16,
    /// When the latest transmission left the transmitter (`None` while it is on its way there).
    last_end: Option<SimTime>,
    state: SlotState,
    block: u32,
    member: u16,
}

/// A frame waiting for retransmission priority.
#[derive(Clone, Copy, Debug)]
enum Retx {
    Data { seq: u64, round: u16, block: BlockRef },
    Parity { block: BlockRef, index: u16, round: u16 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fwd {
    Idle,
    Queued,
    InFlight,
    Sent(SimTime),
}

/// An FEC block: sender bookkeeping and the receiver's erasure state.
struct Block {
    gen: u32,
    active: bool,
    channel: u8,
    members: Vec<u64>,
    frame_size: u32,
    parity_sent: u16,
    round: u16,
    /// Frames of the current round not yet transmitted.
    round_pending: u32,
    /// When the last of them left the transmitter.
    round_end: SimTime,
    recovered: bool,
    rx: ErasureBlock,
}

/// The receiver's lazily scheduled ACK timer.
#[derive(Clone, Copy, Debug, Default)]
struct AckTimer {
    deadline: Option<SimTime>,
    pending_at: Option<SimTime>,
    gen: u32,
    idle_repeats: u32,
}

struct Channel {
    priority: u8,
    arq: bool,
    fec: bool,
    queue: Box<dyn QueueDisc>,
    unsent: Option<(PacketId, u32)>,
    // Sender.
    next_seq: u64,
    base: u64,
    window: VecDeque<TxSlot>,
    retx: VecDeque<Retx>,
    fwd: Fwd,
    // Receiver.
    rx_next: u64,
    rx_buf: VecDeque<Option<PacketId>>,
    timer: AckTimer,
}

/// SLACP on one link direction (see the module documentation).
pub struct Slacp {
    p: SlacpParams,
    link: LinkId,
    from: NodeId,
    to: NodeId,
    delay: SimDuration,
    channels: Vec<Channel>,
    /// Channel indices by priority (stable).
    order: Vec<u8>,
    flow_channel: Vec<u8>,
    blocks: Vec<Block>,
    free_blocks: Vec<u32>,
    scratch_lost: Vec<u64>,
    scratch_blocks: Vec<u32>,
    scratch_seqs: Vec<u64>,
    stats: LlStats,
}

impl Slacp {
    pub fn new(p: SlacpParams, ctx: LinkContext) -> Result<Slacp, String> {
        p.validate()?;
        // A channel hands IP packets to frames as soon as they leave its queue and
        // has nowhere to report a packet dropped from inside the queue or a CE mark.
        if ctx.queue.drops_queued_packets() || ctx.queue.marks_ecn() || ctx.queue.hashes_flows() {
            return Err("queue: a link layer's IP queues cannot drop queued packets, hash flows or mark ECN \
                        (codel, fq_codel, ecn = true); accepted: drop_tail, red or pie without ecn"
                .to_string());
        }
        let mut channels = Vec::with_capacity(p.channels.len());
        for spec in &p.channels {
            channels.push(Channel {
                priority: spec.priority,
                arq: spec.arq,
                fec: spec.fec,
                queue: ctx.queue.build(0).map_err(|e| format!("queue: {e}"))?,
                unsent: None,
                next_seq: 0,
                base: 0,
                window: VecDeque::with_capacity(64),
                retx: VecDeque::with_capacity(64),
                fwd: Fwd::Idle,
                rx_next: 0,
                rx_buf: VecDeque::with_capacity(64),
                timer: AckTimer::default(),
            });
        }
        let mut order: Vec<u8> = (0..channels.len() as u8).collect();
        order.sort_by_key(|&c| channels[c as usize].priority);
        if let Some(&bad) = ctx.flow_channel.iter().find(|&&c| c as usize >= channels.len()) {
            return Err(format!("link_layer: channel {bad} out of range"));
        }
        Ok(Slacp {
            p,
            link: ctx.link,
            from: ctx.from,
            to: ctx.to,
            delay: ctx.delay,
            channels,
            order,
            flow_channel: ctx.flow_channel,
            blocks: Vec::new(),
            free_blocks: Vec::new(),
            scratch_lost: Vec::with_capacity(64),
            scratch_blocks: Vec::with_capacity(16),
            scratch_seqs: Vec::with_capacity(64),
            stats: LlStats::default(),
        })
    }

    fn fwd_bytes(&self) -> u32 {
        self.p.header_bytes + 8
    }

    /// A frame in the pool, sender -> receiver.
    fn frame(&self, pool: &mut PacketPool, size: u32, flow: FlowId, sent_at: SimTime, channel: u8, kind: LinkFrameKind) -> QueuedPacket {
        let id = pool.alloc(Packet {
            flow,
            src: self.from,
            dst: self.to,
            size,
            transport: Transport::Link(LinkFrame { link: self.link, channel, kind }),
            ecn: Ecn::NotEct,
            sent_at,
        });
        QueuedPacket::with(id, size, self.to, flow, Ecn::NotEct)
    }

    /// The live block a reference points to.
    fn block_mut(&mut self, r: BlockRef) -> Option<&mut Block> {
        if r.is_none() {
            return None;
        }
        self.blocks.get_mut(r.slot as usize).filter(|b| b.active && b.gen == r.gen)
    }

    fn slot_mut(ch: &mut Channel, seq: u64) -> Option<&mut TxSlot> {
        if seq < ch.base {
            return None;
        }
        ch.window.get_mut((seq - ch.base) as usize)
    }

    /// A frame of a block's current round left the transmitter.
    fn round_frame_done(&mut self, r: BlockRef, round: u16, now: SimTime) {
        if let Some(b) = self.block_mut(r) {
            if b.round == round && b.round_pending > 0 {
                b.round_pending -= 1;
                b.round_end = b.round_end.max(now);
            }
        }
    }

    fn give_up(&mut self, c: usize, seq: u64, out: &mut LlOutput) {
        let ch = &mut self.channels[c];
        let Some(slot) = Self::slot_mut(ch, seq) else { return };
        if slot.state != SlotState::Pending {
            return;
        }
        slot.state = SlotState::GivenUp;
        out.lost.push(slot.pkt);
        self.stats.frames_given_up += 1;
        if matches!(ch.fwd, Fwd::Idle | Fwd::Sent(_)) {
            ch.fwd = Fwd::Queued;
        }
    }

    /// Frames first shown lost on an FEC channel become a block: round 1 resends them
    /// with redundancy.
    fn form_block(&mut self, c: usize, members: &[u64]) {
        let k = members.len() as u16;
        let slot = match self.free_blocks.pop() {
            Some(s) => s,
            None => {
                self.blocks.push(Block {
                    gen: 0,
                    active: false,
                    channel: 0,
                    members: Vec::with_capacity(self.p.fec_max_block as usize),
                    frame_size: 0,
                    parity_sent: 0,
                    round: 0,
                    round_pending: 0,
                    round_end: SimTime::ZERO,
                    recovered: false,
                    rx: ErasureBlock::new(1),
                });
                self.blocks.len() as u32 - 1
            }
        };
        let header = self.p.header_bytes;
        let ch = &mut self.channels[c];
        let mut frame_size = 0;
        for (i, &seq) in members.iter().enumerate() {
            let s = Self::slot_mut(ch, seq).expect("member is outstanding");
            s.block = slot;
            s.member = i as u16;
            s.last_end = None;
            frame_size = frame_size.max(s.size + header);
        }
        let b = &mut self.blocks[slot as usize];
        b.gen = b.gen.wrapping_add(1);
        b.active = true;
        b.channel = c as u8;
        b.members.clear();
        b.members.extend_from_slice(members);
        b.frame_size = frame_size;
        b.round = 1;
        b.round_end = SimTime::ZERO;
        b.recovered = false;
        b.rx = ErasureBlock::new(k);
        let r = fec::redundancy(1, k, self.p.fec_ratio, b.rx.redundancy_left(0));
        b.parity_sent = r;
        b.round_pending = k as u32 + r as u32;
        let bref = BlockRef { slot, gen: b.gen };
        for &seq in members {
            ch.retx.push_back(Retx::Data { seq, round: 1, block: bref });
        }
        for index in 0..r {
            ch.retx.push_back(Retx::Parity { block: bref, index, round: 1 });
        }
        self.stats.fec_blocks += 1;
    }

    /// An ACK shows block `slot` undecoded after its round: the next round, or give up.
    fn next_round(&mut self, c: usize, slot: u32, out: &mut LlOutput) {
        let (members_missing, round) = {
            let b = &self.blocks[slot as usize];
            let ch = &self.channels[c];
            self.scratch_seqs.clear();
            for &seq in &b.members {
                if seq >= ch.base && ch.window[(seq - ch.base) as usize].state == SlotState::Pending {
                    self.scratch_seqs.push(seq);
                }
            }
            (self.scratch_seqs.len() as u16, b.round)
        };
        if members_missing == 0 {
            return;
        }
        if round as u32 >= self.p.persistence {
            for i in 0..self.scratch_seqs.len() {
                let seq = self.scratch_seqs[i];
                self.give_up(c, seq, out);
            }
            return;
        }
        let b = &mut self.blocks[slot as usize];
        b.round += 1;
        let r = fec::redundancy(b.round, members_missing, self.p.fec_ratio, b.rx.redundancy_left(b.parity_sent));
        let bref = BlockRef { slot, gen: b.gen };
        let first = b.parity_sent;
        b.parity_sent += r;
        b.round_pending = members_missing as u32 + r as u32;
        b.round_end = SimTime::ZERO;
        let round = b.round;
        let ch = &mut self.channels[c];
        for &seq in &self.scratch_seqs {
            if let Some(s) = Self::slot_mut(ch, seq) {
                s.last_end = None;
            }
            ch.retx.push_back(Retx::Data { seq, round, block: bref });
        }
        for index in first..first + r {
            ch.retx.push_back(Retx::Parity { block: bref, index, round });
        }
    }

    /// Frees blocks whose members are all acknowledged or given up.
    fn retire_block(&mut self, slot: u32) {
        let b = &self.blocks[slot as usize];
        if !b.active {
            return;
        }
        let ch = &self.channels[b.channel as usize];
        let done = b
            .members
            .iter()
            .all(|&seq| seq < ch.base || ch.window[(seq - ch.base) as usize].state != SlotState::Pending);
        if done {
            self.blocks[slot as usize].active = false;
            self.free_blocks.push(slot);
        }
    }

    // ---------------------------------------------------------------- receiver

    /// Skips every sequence number below `skip_below`, delivering what was held.
    fn apply_skip(&mut self, c: usize, skip_below: u64, out: &mut LlOutput) {
        let ch = &mut self.channels[c];
        while ch.rx_next < skip_below {
            if let Some(Some(p)) = ch.rx_buf.pop_front() {
                out.deliver.push(p);
            }
            ch.rx_next += 1;
        }
    }

    fn deliver_in_order(&mut self, c: usize, out: &mut LlOutput) {
        let ch = &mut self.channels[c];
        while let Some(Some(p)) = ch.rx_buf.front().copied() {
            ch.rx_buf.pop_front();
            out.deliver.push(p);
            ch.rx_next += 1;
        }
    }

    /// Whether the receiver holds `seq` (delivered, skipped, or waiting above a gap).
    fn rx_has(ch: &Channel, seq: u64) -> bool {
        seq < ch.rx_next || ch.rx_buf.get((seq - ch.rx_next) as usize).is_some_and(|x| x.is_some())
    }

    /// Stores a copy of the sender's packet for `seq`; false if the receiver holds it already.
    fn rx_store(&mut self, c: usize, seq: u64, inner: PacketId, pool: &mut PacketPool) -> bool {
        let ch = &mut self.channels[c];
        if Self::rx_has(ch, seq) {
            return false;
        }
        let off = (seq - ch.rx_next) as usize;
        debug_assert!(off < 2 * WINDOW as usize, "frame beyond the window");
        if ch.rx_buf.len() <= off {
            ch.rx_buf.resize(off + 1, None);
        }
        let copy = *pool.get(inner);
        ch.rx_buf[off] = Some(pool.alloc(copy));
        true
    }

    /// Decodes block `r` if the receiver holds k of its symbols.
    fn try_decode(&mut self, r: BlockRef, pool: &mut PacketPool) {
        let Some(b) = self.block_mut(r) else { return };
        if !b.rx.decodable() || b.rx.erased() == 0 {
            return;
        }
        let c = b.channel as usize;
        let mut recovered = 0;
        for i in 0..b.members.len() {
            if self.blocks[r.slot as usize].rx.has_data(i as u16) {
                continue;
            }
            let seq = self.blocks[r.slot as usize].members[i];
            self.blocks[r.slot as usize].rx.data_arrived(i as u16);
            let ch = &self.channels[c];
            let Some(slot) = (seq >= ch.base).then(|| ch.window[(seq - ch.base) as usize]) else { continue };
            if slot.state == SlotState::Pending && self.rx_store(c, seq, slot.pkt, pool) {
                recovered += 1;
            }
        }
        if recovered > 0 {
            self.stats.frames_recovered += recovered;
            let b = &mut self.blocks[r.slot as usize];
            if !b.recovered {
                b.recovered = true;
                self.stats.fec_blocks_recovered += 1;
            }
        }
    }

    /// Sends the current ACK of channel `c`; `horizon` as in `LinkFrameKind::Ack`.
    fn send_ack(&mut self, c: usize, now: SimTime, horizon: SimTime, pool: &mut PacketPool, out: &mut LlOutput) {
        let ch = &self.channels[c];
        let mut bitmap = [0u64; 4];
        for (i, x) in ch.rx_buf.iter().skip(1).take(WINDOW as usize).enumerate() {
            if x.is_some() {
                bitmap[i / 64] |= 1 << (i % 64);
            }
        }
        let id = pool.alloc(Packet {
            flow: NO_FLOW,
            src: self.to,
            dst: self.from,
            size: self.p.ack_bytes,
            transport: Transport::Link(LinkFrame {
                link: self.link,
                channel: c as u8,
                kind: LinkFrameKind::Ack { cum: ch.rx_next, bitmap, horizon },
            }),
            ecn: Ecn::NotEct,
            sent_at: now,
        });
        out.acks.push(QueuedPacket::with(id, self.p.ack_bytes, self.from, NO_FLOW, Ecn::NotEct));
        self.stats.acks_sent += 1;
    }

    fn arm_timer(&mut self, c: usize, at: SimTime, out: &mut LlOutput) {
        let t = &mut self.channels[c].timer;
        t.deadline = Some(at);
        if t.pending_at.is_none_or(|p| p > at) {
            t.gen = t.gen.wrapping_add(1);
            t.pending_at = Some(at);
            out.timers.push((c as u8, at, t.gen));
        }
    }
}

impl LinkLayer for Slacp {
    fn offer(&mut self, pkt: QueuedPacket, flow: FlowId, ctx: &mut EnqueueCtx<'_>) -> Verdict {
        let c = self.flow_channel.get(flow as usize).copied().unwrap_or(0) as usize;
        let ch = &mut self.channels[c];
        let v = ch.queue.enqueue(pkt, ctx);
        if v == Verdict::Enqueued && ch.unsent.is_none() {
            ch.unsent = ch.queue.dequeue(&mut DequeueCtx { now: ctx.now, dropped: ctx.dropped }).map(|q| (q.id, q.size));
        }
        v
    }

    fn next_frame(&mut self, room: u64, now: SimTime, pool: &mut PacketPool) -> Option<QueuedPacket> {
        // Forward notices, retransmissions and redundancy, by channel priority.
        for oi in 0..self.order.len() {
            let c = self.order[oi] as usize;
            if self.channels[c].fwd == Fwd::Queued {
                let size = self.fwd_bytes();
                if size as u64 > room {
                    return None;
                }
                let ch = &mut self.channels[c];
                ch.fwd = Fwd::InFlight;
                let kind = LinkFrameKind::Forward { skip_below: ch.base };
                return Some(self.frame(pool, size, NO_FLOW, now, c as u8, kind));
            }
            while let Some(&item) = self.channels[c].retx.front() {
                match item {
                    Retx::Data { seq, round, block } => {
                        let header = self.p.header_bytes;
                        let ch = &mut self.channels[c];
                        let base = ch.base;
                        let live = Self::slot_mut(ch, seq).filter(|s| s.state == SlotState::Pending).copied();
                        let Some(s) = live else {
                            ch.retx.pop_front();
                            self.round_frame_done(block, round, now);
                            continue;
                        };
                        let size = s.size + header;
                        if size as u64 > room {
                            return None;
                        }
                        ch.retx.pop_front();
                        let slot = Self::slot_mut(ch, seq).unwrap();
                        slot.sends = slot.sends.saturating_add(1);
                        slot.last_end = None;
                        let (flow, sent_at) = {
                            let p = pool.get(s.pkt);
                            (p.flow, p.sent_at)
                        };
                        let kind = LinkFrameKind::Data {
                            seq,
                            inner: s.pkt,
                            owned: false,
                            skip_below: base,
                            block,
                            member: s.member,
                            round,
                        };
                        return Some(self.frame(pool, size, flow, sent_at, c as u8, kind));
                    }
                    Retx::Parity { block, index, round } => {
                        let Some(size) = self.block_mut(block).map(|b| b.frame_size) else {
                            self.channels[c].retx.pop_front();
                            continue;
                        };
                        if size as u64 > room {
                            return None;
                        }
                        let ch = &mut self.channels[c];
                        ch.retx.pop_front();
                        let kind = LinkFrameKind::Parity { block, index, round, skip_below: ch.base };
                        return Some(self.frame(pool, size, NO_FLOW, now, c as u8, kind));
                    }
                }
            }
        }
        // New frames, by channel priority.
        for oi in 0..self.order.len() {
            let c = self.order[oi] as usize;
            let header = self.p.header_bytes;
            let ch = &mut self.channels[c];
            let Some((pkt, size)) = ch.unsent else { continue };
            if ch.arq && ch.next_seq >= ch.base + WINDOW {
                continue;
            }
            let fsize = size + header;
            if fsize as u64 > room {
                return None;
            }
            // Disciplines that drop at dequeue are refused in `new`: nothing lands here.
            let mut none = Vec::new();
            ch.unsent = ch.queue.dequeue(&mut DequeueCtx { now, dropped: &mut none }).map(|q| (q.id, q.size));
            let seq = ch.next_seq;
            ch.next_seq += 1;
            if ch.arq {
                ch.window.push_back(TxSlot {
                    pkt,
                    size,
                    sends: 1,
                    last_end: None,
                    state: SlotState::Pending,
                    block: NO_BLOCK,
                    member: 0,
                });
            } else {
                ch.base = ch.next_seq;
            }
            let (owned, base) = (!ch.arq, ch.base);
            let (flow, sent_at) = {
                let p = pool.get(pkt);
                (p.flow, p.sent_at)
            };
            let kind = LinkFrameKind::Data {
                seq,
                inner: pkt,
                owned,
                skip_below: base,
                block: BlockRef::NONE,
                member: 0,
                round: 0,
            };
            return Some(self.frame(pool, fsize, flow, sent_at, c as u8, kind));
        }
        None
    }

    fn on_transmitted(&mut self, frame: PacketId, lost: bool, now: SimTime, pool: &mut PacketPool, out: &mut LlOutput) {
        let Transport::Link(f) = pool.get(frame).transport else {
            unreachable!("not a link-layer frame")
        };
        let c = f.channel as usize;
        if lost {
            self.stats.frames_corrupted += 1;
        }
        match f.kind {
            LinkFrameKind::Data { seq, inner, owned, block, round, .. } => {
                if round == 0 {
                    self.stats.frames_sent += 1;
                } else {
                    self.stats.frames_retransmitted += 1;
                }
                if owned {
                    if lost {
                        self.stats.frames_lost_unprotected += 1;
                        out.lost.push(inner);
                    }
                } else {
                    if let Some(s) = Self::slot_mut(&mut self.channels[c], seq) {
                        if s.state == SlotState::Pending {
                            s.last_end = Some(now);
                        }
                    }
                    if !block.is_none() {
                        self.round_frame_done(block, round, now);
                    }
                }
            }
            LinkFrameKind::Parity { block, round, .. } => {
                self.stats.fec_frames_sent += 1;
                self.round_frame_done(block, round, now);
            }
            LinkFrameKind::Forward { .. } => {
                let ch = &mut self.channels[c];
                if ch.fwd == Fwd::InFlight {
                    ch.fwd = Fwd::Sent(now);
                }
            }
            LinkFrameKind::Ack { .. } => unreachable!("ACKs travel on the reverse link"),
        }
        if lost {
            pool.free(frame);
        }
    }

    fn on_frame(&mut self, frame: PacketId, now: SimTime, pool: &mut PacketPool, out: &mut LlOutput) {
        let Transport::Link(f) = pool.get(frame).transport else {
            unreachable!("not a link-layer frame")
        };
        pool.free(frame);
        let c = f.channel as usize;
        match f.kind {
            LinkFrameKind::Data { seq, inner, owned: true, .. } => {
                // No ARQ: deliver at once (the link is FIFO, so in order).
                let ch = &mut self.channels[c];
                ch.rx_next = ch.rx_next.max(seq + 1);
                out.deliver.push(inner);
                return;
            }
            LinkFrameKind::Data { seq, inner, skip_below, block, member, .. } => {
                self.apply_skip(c, skip_below, out);
                if !self.rx_store(c, seq, inner, pool) {
                    self.stats.duplicates += 1;
                }
                if let Some(b) = self.block_mut(block) {
                    b.rx.data_arrived(member);
                    self.try_decode(block, pool);
                }
            }
            LinkFrameKind::Parity { block, index, skip_below, .. } => {
                self.apply_skip(c, skip_below, out);
                if let Some(b) = self.block_mut(block) {
                    b.rx.parity_arrived(index);
                    self.try_decode(block, pool);
                }
            }
            LinkFrameKind::Forward { skip_below } => self.apply_skip(c, skip_below, out),
            LinkFrameKind::Ack { .. } => unreachable!("ACKs arrive at the sender"),
        }
        self.deliver_in_order(c, out);
        self.send_ack(c, now, now, pool, out);
        self.channels[c].timer.idle_repeats = 0;
        let at = now + self.p.ack_timer;
        self.arm_timer(c, at, out);
    }

    fn on_ack(&mut self, ack: PacketId, now: SimTime, pool: &mut PacketPool, out: &mut LlOutput) {
        let Transport::Link(LinkFrame { channel, kind: LinkFrameKind::Ack { cum, bitmap, horizon }, .. }) =
            pool.get(ack).transport
        else {
            unreachable!("not a link ACK")
        };
        pool.free(ack);
        let _ = now;
        let c = channel as usize;
        if !self.channels[c].arq {
            return;
        }
        let d = self.delay;
        let shown_lost = |end: Option<SimTime>| end.is_some_and(|e| e + d <= horizon);
        self.scratch_lost.clear();
        self.scratch_blocks.clear();
        // Acknowledgments, and the frames the ACK shows missing.
        {
            let ch = &mut self.channels[c];
            for i in 0..ch.window.len() {
                let seq = ch.base + i as u64;
                let s = &mut ch.window[i];
                if s.state != SlotState::Pending {
                    continue;
                }
                let above = seq.wrapping_sub(cum).wrapping_sub(1);
                let received = seq < cum || (seq > cum && above < WINDOW && bitmap[(above / 64) as usize] & (1 << (above % 64)) != 0);
                if received {
                    s.state = SlotState::Acked;
                    pool.free(s.pkt);
                    continue;
                }
                if seq > cum + WINDOW {
                    continue;
                }
                if s.block == NO_BLOCK {
                    if shown_lost(s.last_end) {
                        self.scratch_lost.push(seq);
                    }
                } else if !self.scratch_blocks.contains(&s.block) {
                    self.scratch_blocks.push(s.block);
                }
            }
        }
        // Frames lost alone: retransmit, give up, or (FEC) gather into new blocks.
        let (fec, persistence) = (self.channels[c].fec, self.p.persistence);
        let lost = std::mem::take(&mut self.scratch_lost);
        if fec && persistence > 0 {
            for chunk in lost.chunks(self.p.fec_max_block as usize) {
                self.form_block(c, chunk);
            }
        } else {
            for &seq in &lost {
                let ch = &mut self.channels[c];
                let s = Self::slot_mut(ch, seq).unwrap();
                if s.sends as u32 > persistence {
                    self.give_up(c, seq, out);
                } else {
                    let round = s.sends;
                    s.last_end = None;
                    ch.retx.push_back(Retx::Data { seq, round, block: BlockRef::NONE });
                }
            }
        }
        self.scratch_lost = lost;
        // Blocks whose round is over and still undecoded: the next round.
        let blocks = std::mem::take(&mut self.scratch_blocks);
        for &slot in &blocks {
            let b = &self.blocks[slot as usize];
            if b.active && b.round_pending == 0 && b.round_end + d <= horizon {
                self.next_round(c, slot, out);
            }
        }
        for &slot in &blocks {
            self.retire_block(slot);
        }
        self.scratch_blocks = blocks;
        // Forget what is settled; keep the receiver informed of what was given up.
        let ch = &mut self.channels[c];
        while ch.window.front().is_some_and(|s| s.state != SlotState::Pending) {
            let s = ch.window.pop_front().unwrap();
            if s.block != NO_BLOCK {
                self.scratch_blocks.push(s.block);
            }
            ch.base += 1;
        }
        if cum < ch.base {
            match ch.fwd {
                Fwd::Idle => ch.fwd = Fwd::Queued,
                Fwd::Sent(e) if e + d <= horizon => ch.fwd = Fwd::Queued,
                _ => {}
            }
        }
        let popped = std::mem::take(&mut self.scratch_blocks);
        for &slot in &popped {
            self.retire_block(slot);
        }
        self.scratch_blocks = popped;
    }

    fn on_timer(&mut self, channel: u8, gen: u32, now: SimTime, pool: &mut PacketPool, out: &mut LlOutput) {
        let c = channel as usize;
        let t = &mut self.channels[c].timer;
        if gen != t.gen {
            return;
        }
        t.pending_at = None;
        match t.deadline {
            None => return,
            Some(d) if d > now => {
                self.arm_timer(c, d, out);
                return;
            }
            Some(_) => t.deadline = None,
        }
        // A frame due at exactly `now` may not have been processed yet.
        self.send_ack(c, now, SimTime(now.0.saturating_sub(1)), pool, out);
        let ch = &mut self.channels[c];
        ch.timer.idle_repeats += 1;
        let holes = !ch.rx_buf.is_empty();
        if holes || ch.timer.idle_repeats < self.p.ack_repeats {
            let at = now + self.p.ack_timer;
            self.arm_timer(c, at, out);
        }
    }

    fn backlog_packets(&self) -> u32 {
        self.channels.iter().map(|c| c.queue.len_packets() + c.unsent.is_some() as u32).sum()
    }

    fn backlog_bytes(&self) -> u64 {
        self.channels.iter().map(|c| c.queue.len_bytes() + c.unsent.map_or(0, |(_, s)| s as u64)).sum()
    }

    fn stats(&self) -> LlStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::{droptail::DropTailParams, Limit, QueueConfig};
    use crate::net::packet::Transport;
    use crate::rng::RngStream;

    const MS: u64 = 1_000_000;
    const DELAY: SimDuration = SimDuration(250 * MS);

    fn slacp(p: SlacpParams) -> Slacp {
        let queue = QueueConfig::DropTail(DropTailParams { limit: Limit::Packets(100), semantics: None, count_in_service: false });
        Slacp::new(p, LinkContext { link: 0, from: 0, to: 1, delay: DELAY, queue, flow_channel: vec![0] }).unwrap()
    }

    fn offer(s: &mut Slacp, pool: &mut PacketPool, seq: u64) -> PacketId {
        let pkt = pool.alloc_ref(Packet { flow: 0, src: 0, dst: 1, size: 1000, transport: Transport::Udp { seq }, sent_at: SimTime::ZERO, ecn: Ecn::NotEct });
        let mut rng = RngStream::new(0, "q");
        let mut dropped = Vec::new();
        let mut ctx = EnqueueCtx { now: SimTime::ZERO, in_service_bytes: None, rng: &mut rng, flow_key: 0, dropped: &mut dropped };
        assert_eq!(s.offer(pkt, 0, &mut ctx), Verdict::Enqueued);
        pkt.id
    }

    fn udp_seq(pool: &PacketPool, p: PacketId) -> u64 {
        match pool.get(p).transport {
            Transport::Udp { seq } => seq,
            _ => panic!("not a UDP packet"),
        }
    }

    fn kind(pool: &PacketPool, f: PacketId) -> LinkFrameKind {
        match pool.get(f).transport {
            Transport::Link(l) => l.kind,
            _ => panic!("not a frame"),
        }
    }

    /// Sends `frames` back to back from `t0` (1 ms each); those in `lose` are corrupted,
    /// the others arrive DELAY later. Returns the ACKs of the last arrival and the time.
    fn transmit(s: &mut Slacp, pool: &mut PacketPool, frames: &[PacketId], lose: &[usize], t0: u64,
                out: &mut LlOutput) -> (Vec<PacketId>, SimTime) {
        let mut arrived = Vec::new();
        for (i, &f) in frames.iter().enumerate() {
            let t = SimTime(t0 + (i as u64 + 1) * MS);
            let lost = lose.contains(&i);
            s.on_transmitted(f, lost, t, pool, out);
            if !lost {
                arrived.push((f, t + DELAY));
            }
        }
        let mut acks = Vec::new();
        let mut last = SimTime(t0);
        for (f, t) in arrived {
            out.acks.clear();
            s.on_frame(f, t, pool, out);
            acks = out.acks.iter().map(|q| q.id).collect();
            last = t;
        }
        (acks, last)
    }

    fn drain(s: &mut Slacp, pool: &mut PacketPool, now: SimTime) -> Vec<PacketId> {
        std::iter::from_fn(|| s.next_frame(u64::MAX, now, pool).map(|q| q.id)).collect()
    }

    #[test]
    fn a_block_decodes_in_round_two_and_delivery_stays_in_order() {
        // Six frames; 1, 2 and 4 are lost. The ACK of frame 5 (generated 250 ms after the
        // losses ended) shows them missing: they form a block, k = 3, with
        // ceil(1 * 0.25 * 3) = 1 redundancy frame. In round 1 members 1 and 2 are lost
        // again; 4 and redundancy 0 arrive: 2 < k symbols. Round 2 resends 1 and 2 with
        // ceil(2 * 0.25 * 2) = 1 new redundancy frame (index 1). Both members are lost a
        // third time, but redundancy 1 arrives: 3 symbols = k, the block decodes, and
        // frames 0..6 reach IP once each, in order.
        let mut pool = PacketPool::with_capacity(64);
        let mut s = slacp(SlacpParams::default());
        let mut out = LlOutput::default();
        let ip: Vec<PacketId> = (0..6).map(|i| offer(&mut s, &mut pool, i)).collect();
        let frames = drain(&mut s, &mut pool, SimTime::ZERO);
        assert_eq!(frames.len(), 6);
        let (acks, t) = transmit(&mut s, &mut pool, &frames, &[1, 2, 4], 0, &mut out);
        assert_eq!(out.deliver.iter().map(|&p| udp_seq(&pool, p)).collect::<Vec<_>>(), vec![0]);
        out.deliver.clear();
        s.on_ack(acks[0], t, &mut pool, &mut out);
        let round1 = drain(&mut s, &mut pool, t);
        let kinds: Vec<String> = round1.iter().map(|&f| match kind(&pool, f) {
            LinkFrameKind::Data { seq, round, .. } => format!("D{seq}r{round}"),
            LinkFrameKind::Parity { index, round, .. } => format!("P{index}r{round}"),
            k => format!("{k:?}"),
        }).collect();
        assert_eq!(kinds, ["D1r1", "D2r1", "D4r1", "P0r1"]);
        let (acks, t) = transmit(&mut s, &mut pool, &round1, &[0, 1], t.0, &mut out);
        assert!(out.deliver.is_empty(), "frame 1 still missing");
        s.on_ack(acks[0], t, &mut pool, &mut out);
        let round2 = drain(&mut s, &mut pool, t);
        let kinds: Vec<String> = round2.iter().map(|&f| match kind(&pool, f) {
            LinkFrameKind::Data { seq, round, .. } => format!("D{seq}r{round}"),
            LinkFrameKind::Parity { index, round, .. } => format!("P{index}r{round}"),
            k => format!("{k:?}"),
        }).collect();
        assert_eq!(kinds, ["D1r2", "D2r2", "P1r2"]);
        let (acks, t) = transmit(&mut s, &mut pool, &round2, &[0, 1], t.0, &mut out);
        let got: Vec<u64> = out.deliver.iter().map(|&p| udp_seq(&pool, p)).collect();
        assert_eq!(got, vec![1, 2, 3, 4, 5]);
        let st = s.stats();
        assert_eq!((st.fec_blocks, st.fec_blocks_recovered, st.frames_recovered), (1, 1, 2));
        assert_eq!((st.frames_sent, st.frames_retransmitted, st.fec_frames_sent), (6, 5, 2));
        assert_eq!(st.frames_given_up, 0);
        // The last ACK acknowledges frames 1 and 2 (0, 3, 5 and 4 were acknowledged by the
        // earlier ACKs): the sender frees its last two copies, and the ACK frame.
        let live = pool.live();
        s.on_ack(acks[0], t, &mut pool, &mut out);
        assert_eq!(pool.live(), live - 2 - 1);
        assert!(s.channels[0].window.is_empty() && s.channels[0].base == 6);
        assert!(drain(&mut s, &mut pool, t).is_empty());
        let _ = ip;
    }

    #[test]
    fn without_fec_a_frame_is_given_up_after_persistence_retransmissions() {
        // persistence 2, FEC off: frame 0 is lost three times (original + 2 retransmissions);
        // the third ACK gives it up, a forward notice tells the receiver to skip it, and
        // frame 1 (held above the gap) is delivered.
        let mut p = SlacpParams::default();
        p.persistence = 2;
        p.channels[0].fec = false;
        let mut pool = PacketPool::with_capacity(64);
        let mut s = slacp(p);
        let mut out = LlOutput::default();
        offer(&mut s, &mut pool, 0);
        offer(&mut s, &mut pool, 1);
        let frames = drain(&mut s, &mut pool, SimTime::ZERO);
        let (acks, mut t) = transmit(&mut s, &mut pool, &frames, &[0], 0, &mut out);
        let mut ack = acks[0];
        for round in 1..=2 {
            s.on_ack(ack, t, &mut pool, &mut out);
            let re = drain(&mut s, &mut pool, t);
            assert_eq!(re.len(), 1, "round {round}");
            assert!(matches!(kind(&pool, re[0]), LinkFrameKind::Data { seq: 0, round: r, .. } if r == round));
            s.on_transmitted(re[0], true, SimTime(t.0 + MS), &mut pool, &mut out);
            // The receiver's ACK timer repeats its ACK 200 ms after the last arrival, and
            // again every 200 ms while frame 1 waits above the gap.
            t = SimTime(t.0 + 200 * MS);
            out.acks.clear();
            out.timers.clear();
            let gen = s.channels[0].timer.gen;
            s.channels[0].timer.deadline = Some(t);
            s.on_timer(0, gen, t, &mut pool, &mut out);
            t = SimTime(t.0 + 200 * MS); // well after the retransmission's arrival time
            ack = out.acks[0].id;
            if let Transport::Link(LinkFrame { kind: LinkFrameKind::Ack { horizon, .. }, .. }) = &mut pool.get_mut(ack).transport {
                *horizon = t;
            }
        }
        assert!(out.deliver.is_empty() || out.deliver.len() == 0);
        s.on_ack(ack, t, &mut pool, &mut out);
        assert_eq!(out.lost.len(), 1);
        assert_eq!(udp_seq(&pool, out.lost[0]), 0);
        let fwd = drain(&mut s, &mut pool, t);
        assert!(matches!(kind(&pool, fwd[0]), LinkFrameKind::Forward { skip_below: 2 }));
        out.deliver.clear();
        s.on_transmitted(fwd[0], false, t, &mut pool, &mut out);
        s.on_frame(fwd[0], t + DELAY, &mut pool, &mut out);
        assert_eq!(out.deliver.iter().map(|&p| udp_seq(&pool, p)).collect::<Vec<_>>(), vec![1]);
        let st = s.stats();
        assert_eq!((st.frames_sent, st.frames_retransmitted, st.frames_given_up), (2, 2, 1));
        assert!((st.residual_loss() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bad_parameters_are_named() {
        let mut p = SlacpParams::default();
        p.channels[0].arq = false;
        assert!(p.validate().unwrap_err().contains("channels[0] ('default'): fec = true needs arq = true"));
        let mut p = SlacpParams::default();
        p.map.insert("voice".into(), "rt".into());
        assert!(p.validate().unwrap_err().contains("link_layer.map['voice']: unknown channel 'rt'; channels: default"));
        let mut p = SlacpParams::default();
        p.fec_ratio = 0.0;
        assert!(p.validate().unwrap_err().contains("link_layer.fec_ratio must be in (0, 8]"));
        let mut p = SlacpParams::default();
        p.channels.push(p.channels[0].clone());
        assert!(p.validate().unwrap_err().contains("duplicate channel name 'default'"));
    }
}
