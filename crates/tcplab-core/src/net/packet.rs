//! Packets and the packet pool.
//!
//! A packet carries its size on the wire (IP level, headers included), the TCP or UDP
//! header the endpoints need, and the time it left its sender (for one-way delay).
//! Packets live in a `PacketPool` slab and are passed around by `PacketId`, so the hot
//! path allocates nothing per packet once the pool has grown to the peak in-flight
//! count.
//!
//! TCP sequence numbers are 64-bit byte offsets from the initial sequence number, so
//! they never wrap; real TCP's 32-bit modular arithmetic (RFC 9293 §3.4) is not
//! modelled because no simulated transfer approaches 4 GiB per RTT.

use crate::time::SimTime;

pub type NodeId = u32;
pub type FlowId = u32;
/// The `flow` of packets that belong to no flow (link-layer ACKs, forward notices,
/// redundancy; packets injected by the emulator).
pub const NO_FLOW: FlowId = u32::MAX;
pub type LinkId = u32;

/// Index of a packet in the `PacketPool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PacketId(pub u32);

/// What the network carries of a packet from hop to hop: its pool id, its size on the
/// wire, its destination node, its flow and its IP ECN field. Queues, transmitters and
/// propagation pipes hold this, so forwarding never reads the packet itself (its headers
/// sit in the pool, usually out of cache by the time the packet reaches the next hop);
/// only the endpoints do. It is 16 bytes, so it travels in two registers: the ECN field
/// takes the top two bits of the destination (node ids stay below `MAX_NODES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRef {
    pub id: PacketId,
    /// Bytes on the wire.
    pub size: u32,
    /// The destination node, and in the top two bits the IP ECN field as the packet
    /// entered the current hop's queue; a queue that marks sets it to CE and the link
    /// writes that back into the pooled packet.
    dst_ecn: u32,
    pub flow: FlowId,
}

/// Node ids must stay below this (the top two bits of `PacketRef`'s destination carry
/// the ECN field).
pub const MAX_NODES: usize = 1 << 30;

impl PacketRef {
    /// A Not-ECT packet of `size` bytes, to node 0, of flow 0: what queue tests offer.
    pub fn new(id: PacketId, size: u32) -> Self {
        PacketRef { id, size, dst_ecn: 0, flow: 0 }
    }

    /// A reference with every field given.
    #[inline]
    pub fn with(id: PacketId, size: u32, dst: NodeId, flow: FlowId, ecn: Ecn) -> Self {
        debug_assert!((dst as usize) < MAX_NODES);
        PacketRef { id, size, dst_ecn: dst | ((ecn as u32) << 30), flow }
    }

    /// The reference of packet `id` (stored as `p`).
    #[inline]
    pub fn of(id: PacketId, p: &Packet) -> Self {
        Self::with(id, p.size, p.dst, p.flow, p.ecn)
    }

    #[inline]
    pub fn dst(&self) -> NodeId {
        self.dst_ecn & (MAX_NODES as u32 - 1)
    }

    #[inline]
    pub fn ecn(&self) -> Ecn {
        match self.dst_ecn >> 30 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    #[inline]
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.dst_ecn = self.dst() | ((ecn as u32) << 30);
    }

    /// RFC 3168 §5: marks CE if the packet is ECN-capable (ECT(0), ECT(1) or already
    /// CE) and returns whether it is now CE; a Not-ECT packet must be dropped instead.
    /// Linux `INET_ECN_set_ce`.
    pub fn try_mark_ce(&mut self) -> bool {
        if self.ecn() == Ecn::NotEct {
            return false;
        }
        self.set_ecn(Ecn::Ce);
        true
    }
}

/// A SACK block [start, end) in sequence space (RFC 2018 §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// Most SACK blocks an ACK carries: 4 without timestamps, 3 with (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 4;

pub const FLAG_SYN: u8 = 0x01;
pub const FLAG_ACK: u8 = 0x02;
pub const FLAG_FIN: u8 = 0x04;
/// ECN-Echo (RFC 3168 §6.1): on an ACK, "a CE packet was received"; on a SYN,
/// together with CWR, "I want ECN".
pub const FLAG_ECE: u8 = 0x08;
/// Congestion Window Reduced (RFC 3168 §6.1.2): the sender has reduced its window.
pub const FLAG_CWR: u8 = 0x10;

/// The ECN field of the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// 00: the transport is not ECN-capable; an AQM must drop, not mark.
    #[default]
    NotEct = 0,
    /// 01: ECN-capable transport, codepoint ECT(1) (L4S, RFC 9331).
    Ect1 = 1,
    /// 10: ECN-capable transport, codepoint ECT(0) (what RFC 3168 senders set).
    Ect0 = 2,
    /// 11: Congestion Experienced, set by a queue instead of dropping.
    Ce = 3,
}

/// The TCP header fields the simulator models.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpHeader {
    /// First payload byte's sequence number (SYN and FIN each occupy one number).
    pub seq: u64,
    /// Cumulative acknowledgment: next byte expected.
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    pub flags: u8,
    /// Advertised receive window in bytes, after window scaling is applied.
    pub wnd: u64,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub nsack: u8,
    /// Sender's transmission counter for this segment, used by the simulator (not
    /// TCP) to tell an original from a retransmission when judging spurious RTOs.
    pub tx_id: u32,
    /// The data segment that caused this ACK was a retransmission (simulator truth,
    /// used only by F-RTO's tests and traces; the sender never reads it).
    pub echo_retx: bool,
    /// The sender was in slow start when it sent this segment (simulator truth, read
    /// by a DAASS receiver, RFC 2760 §5.1, in place of a heuristic).
    pub ss_hint: bool,
    /// RFC 7323 timestamp value: the sender's clock when the segment left, ns + 1
    /// (0: none). Read only by senders with `timestamps` on.
    pub ts_val: u64,
    /// RFC 7323 timestamp echo on an ACK: the `ts_val` the receiver echoes (0: none).
    pub ts_ecr: u64,
}

impl TcpHeader {
    pub fn is_syn(&self) -> bool {
        self.flags & FLAG_SYN != 0
    }
    pub fn is_fin(&self) -> bool {
        self.flags & FLAG_FIN != 0
    }
    pub fn has_ack(&self) -> bool {
        self.flags & FLAG_ACK != 0
    }
    pub fn is_ece(&self) -> bool {
        self.flags & FLAG_ECE != 0
    }
    pub fn is_cwr(&self) -> bool {
        self.flags & FLAG_CWR != 0
    }
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.nsack as usize]
    }
}

/// Transport payload of a packet.
#[derive(Clone, Copy, Debug)]
pub enum Transport {
    /// Data or ACK of a TCP connection. `to_receiver` is true for the data direction.
    Tcp { hdr: TcpHeader, to_receiver: bool },
    /// A UDP datagram with its per-flow sequence number.
    Udp { seq: u64 },
    /// A link-layer frame (`net::linklayer`): it lives on one link and is never routed.
    Link(LinkFrame),
}

/// A reference to an FEC block of a link layer: its slot and the slot's generation
/// (a reused slot has a new generation, so stale frames are recognised).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockRef {
    pub slot: u32,
    pub gen: u32,
}

impl BlockRef {
    pub const NONE: BlockRef = BlockRef { slot: u32::MAX, gen: 0 };
    pub fn is_none(self) -> bool {
        self.slot == u32::MAX
    }
}

/// A link-layer frame's header (SLACP). Data frames carry an IP packet by reference:
/// the packet stays in the pool, owned by the sender (ARQ channels: until acknowledged
/// or given up; the receiver delivers a copy) or by the frame itself (`owned`:
/// channels without ARQ).
#[derive(Clone, Copy, Debug)]
pub struct LinkFrame {
    /// The link whose link layer sent the data (for ACKs: the link they acknowledge).
    pub link: LinkId,
    pub channel: u8,
    pub kind: LinkFrameKind,
}

#[derive(Clone, Copy, Debug)]
pub enum LinkFrameKind {
    /// An IP packet, sequence number `seq` of its channel; `block`/`member` when it is
    /// retransmitted as part of an FEC block, in that block's round `round`.
    Data { seq: u64, inner: PacketId, owned: bool, skip_below: u64, block: BlockRef, member: u16, round: u16 },
    /// Redundancy frame `index` of an FEC block, sent in round `round`.
    Parity { block: BlockRef, index: u16, round: u16, skip_below: u64 },
    /// Tells the receiver that every sequence number below `skip_below` is either
    /// acknowledged or given up.
    Forward { skip_below: u64 },
    /// Cumulative ACK (`cum`: next expected) with the frames received above it
    /// (bit i: `cum + 1 + i`). `horizon`: every frame due to arrive at or before this
    /// instant had been processed when the ACK was generated.
    Ack { cum: u64, bitmap: [u64; 4], horizon: SimTime },
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Bytes on the wire at the IP level (payload + TCP/UDP + IP headers).
    pub size: u32,
    pub transport: Transport,
    /// When the sender handed the packet to its first link (for one-way delay).
    pub sent_at: SimTime,
    /// The IP ECN field (RFC 3168 §5): set by the sender, CE-marked by queues.
    pub ecn: Ecn,
}

impl Packet {
    pub fn tcp(&self) -> Option<&TcpHeader> {
        match &self.transport {
            Transport::Tcp { hdr, .. } => Some(hdr),
            Transport::Udp { .. } | Transport::Link(_) => None,
        }
    }

    /// The packet's place in its flow's data direction: a TCP data-direction segment's
    /// sequence number (the simulator's ISN is 0: the SYN is 0, the first data byte
    /// 1), a UDP datagram's number; `None` for ACK-direction segments and link frames.
    pub fn data_seq(&self) -> Option<u64> {
        match self.transport {
            Transport::Tcp { hdr, to_receiver: true } => Some(hdr.seq),
            Transport::Udp { seq } => Some(seq),
            Transport::Tcp { to_receiver: false, .. } | Transport::Link(_) => None,
        }
    }
}

/// A slab of packets with a free list. `alloc` reuses freed slots, so the pool stops
/// growing once it holds the peak number of packets alive at once.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: usize,
}

impl PacketPool {
    pub fn with_capacity(n: usize) -> Self {
        PacketPool {
            slots: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
            live: 0,
        }
    }
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            PacketId(i)
        } else {
            self.slots.push(p);
            PacketId(self.slots.len() as u32 - 1)
        }
    }
    /// Stores `p` and returns the reference the network carries.
    pub fn alloc_ref(&mut self, p: Packet) -> PacketRef {
        let (size, dst, flow, ecn) = (p.size, p.dst, p.flow, p.ecn);
        PacketRef::with(self.alloc(p), size, dst, flow, ecn)
    }
    pub fn free(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id.0);
    }
    /// Where packet `id` is stored (for prefetching; may point past the end).
    pub fn slot_ptr(&self, id: PacketId) -> *const Packet {
        self.slots.as_ptr().wrapping_add(id.0 as usize)
    }
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }
    /// Packets allocated and not yet freed.
    pub fn live(&self) -> usize {
        self.live
    }
    /// Slots ever allocated (the pool's high-water mark).
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}
