//! Link-layer protocols on one link direction, behind one `LinkLayer` trait.
//!
//! A link layer sits between IP and a link's MAC buffer at the sending end, and between
//! the link and IP at the receiving end. Its frames are pool packets with
//! `Transport::Link` that never leave the link; its ACKs travel as control frames on
//! the reverse link (which sends them before its own queue). The simulation
//! (`sim/layered.rs`) moves frames and calls these methods; the protocol is entirely
//! here.
//!
//! Sending end: IP packets are `offer`ed (into per-channel IP queues, where the backlog
//! and any overflow stay); the link asks for the `next_frame` whenever its MAC buffer
//! has room (flow control LLC -> MAC) and reports each frame's end of transmission
//! (`on_transmitted`); link ACKs come back through `on_ack`. Receiving end: `on_frame`
//! and the ACK timer (`on_timer`). Results go to an `LlOutput`: packets to deliver to
//! IP in order, packets lost for good, ACK frames to send, timers to schedule.
//!
//! Protocols: `slacp` (seed 004's TCP-friendly link layer: partially reliable in-order
//! ARQ with incremental RS-FEC, logical channels), with `fec` (RS(255, k) erasure model).

pub mod fec;
pub mod slacp;

use crate::net::packet::{FlowId, LinkId, PacketId, PacketPool};
use crate::net::queue::{EnqueueCtx, QueueConfig, QueuedPacket, Verdict};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// What a link-layer call produced (buffers are reused between calls).
#[derive(Default)]
pub struct LlOutput {
    /// IP packets for IP at the receiving end, in order.
    pub deliver: Vec<PacketId>,
    /// IP packets lost for good (given up, or lost on a channel without ARQ).
    pub lost: Vec<PacketId>,
    /// Link ACK frames for the reverse link.
    pub acks: Vec<QueuedPacket>,
    /// Timers to schedule: (channel, time, generation).
    pub timers: Vec<(u8, SimTime, u32)>,
}

impl LlOutput {
    pub fn is_empty(&self) -> bool {
        self.deliver.is_empty() && self.lost.is_empty() && self.acks.is_empty() && self.timers.is_empty()
    }
}

/// Counters of a link layer, for the `links` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LlStats {
    /// Data frames sent for the first time (counted at the end of transmission).
    pub frames_sent: u64,
    /// Data frames sent again.
    pub frames_retransmitted: u64,
    /// FEC redundancy frames sent.
    pub fec_frames_sent: u64,
    /// FEC blocks formed (one per group of frames first retransmitted together).
    pub fec_blocks: u64,
    /// Blocks in which decoding recovered at least one frame.
    pub fec_blocks_recovered: u64,
    /// Frames recovered by decoding (not received themselves).
    pub frames_recovered: u64,
    /// Frames of ARQ channels given up after the persistence limit.
    pub frames_given_up: u64,
    /// Frames of channels without ARQ lost on the link.
    pub frames_lost_unprotected: u64,
    /// Frame transmissions (any kind) corrupted by the link.
    pub frames_corrupted: u64,
    /// Link ACKs sent by the receiver (timer repeats included).
    pub acks_sent: u64,
    /// Duplicate data frames discarded by the receiver.
    pub duplicates: u64,
}

impl LlStats {
    /// The counts since `base` (an earlier snapshot of the same link layer): the
    /// measurement window's share when `base` was taken as it opened. Frames in flight
    /// at that instant count where their event falls (e.g. sent before, given up after).
    pub fn since(&self, base: &LlStats) -> LlStats {
        LlStats {
            frames_sent: self.frames_sent - base.frames_sent,
            frames_retransmitted: self.frames_retransmitted - base.frames_retransmitted,
            fec_frames_sent: self.fec_frames_sent - base.fec_frames_sent,
            fec_blocks: self.fec_blocks - base.fec_blocks,
            fec_blocks_recovered: self.fec_blocks_recovered - base.fec_blocks_recovered,
            frames_recovered: self.frames_recovered - base.frames_recovered,
            frames_given_up: self.frames_given_up - base.frames_given_up,
            frames_lost_unprotected: self.frames_lost_unprotected - base.frames_lost_unprotected,
            frames_corrupted: self.frames_corrupted - base.frames_corrupted,
            acks_sent: self.acks_sent - base.acks_sent,
            duplicates: self.duplicates - base.duplicates,
        }
    }

    /// IP packets lost for good per data frame first sent.
    pub fn residual_loss(&self) -> f64 {
        if self.frames_sent == 0 {
            0.0
        } else {
            (self.frames_given_up + self.frames_lost_unprotected) as f64 / self.frames_sent as f64
        }
    }
}

/// A link-layer protocol on one link direction (see the module documentation).
pub trait LinkLayer: Send {
    /// An IP packet of `flow` offered at the sending end.
    fn offer(&mut self, pkt: QueuedPacket, flow: FlowId, ctx: &mut EnqueueCtx<'_>) -> Verdict;
    /// The next frame for the MAC buffer if one is ready and fits in `room` bytes.
    fn next_frame(&mut self, room: u64, now: SimTime, pool: &mut PacketPool) -> Option<QueuedPacket>;
    /// One of this link layer's frames left the transmitter (`lost`: corrupted).
    fn on_transmitted(&mut self, frame: PacketId, lost: bool, now: SimTime, pool: &mut PacketPool, out: &mut LlOutput);
    /// One of this link layer's frames arrived at the receiving end.
    fn on_frame(&mut self, frame: PacketId, now: SimTime, pool: &mut PacketPool, out: &mut LlOutput);
    /// A link ACK arrived back at the sending end.
    fn on_ack(&mut self, ack: PacketId, now: SimTime, pool: &mut PacketPool, out: &mut LlOutput);
    /// The receiver's ACK timer of `channel` (generation `gen`) fired.
    fn on_timer(&mut self, channel: u8, gen: u32, now: SimTime, pool: &mut PacketPool, out: &mut LlOutput);
    /// IP packets waiting at the sending end (IP queues and unsent frames).
    fn backlog_packets(&self) -> u32;
    /// Bytes of IP packets waiting at the sending end.
    fn backlog_bytes(&self) -> u64;
    fn stats(&self) -> LlStats;
}

/// Where a link layer runs: the facts about its link it needs.
#[derive(Clone, Debug)]
pub struct LinkContext {
    pub link: LinkId,
    pub from: crate::net::packet::NodeId,
    pub to: crate::net::packet::NodeId,
    /// One-way propagation delay: a frame that left the transmitter at t arrives at t + delay.
    pub delay: SimDuration,
    /// The IP queue discipline, built once per channel.
    pub queue: QueueConfig,
    /// Each flow's channel (indexed by flow id).
    pub flow_channel: Vec<u8>,
}

/// The serde description of a link layer (`link_layer = { kind = "slacp", ... }`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LinkLayerConfig {
    Slacp(slacp::SlacpParams),
}

impl LinkLayerConfig {
    /// Bytes of the buffer between the link layer and the MAC.
    pub fn mac_buffer(&self) -> u64 {
        match self {
            LinkLayerConfig::Slacp(p) => p.mac_buffer,
        }
    }
    /// Bytes a frame adds to an IP packet.
    pub fn header_bytes(&self) -> u32 {
        match self {
            LinkLayerConfig::Slacp(p) => p.header_bytes,
        }
    }
    /// Channel names, in declaration order (index = channel number).
    pub fn channel_names(&self) -> Vec<String> {
        match self {
            LinkLayerConfig::Slacp(p) => p.channels.iter().map(|c| c.name.clone()).collect(),
        }
    }
    /// The flow -> channel map (flow names to channel names).
    pub fn map(&self) -> &std::collections::BTreeMap<String, String> {
        match self {
            LinkLayerConfig::Slacp(p) => &p.map,
        }
    }
    /// Checks the parameters alone (names fields as `link_layer.<field>`).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            LinkLayerConfig::Slacp(p) => p.validate(),
        }
    }
    /// Builds the protocol for its link.
    pub fn build(&self, ctx: LinkContext) -> Result<Box<dyn LinkLayer>, String> {
        match self {
            LinkLayerConfig::Slacp(p) => Ok(Box::new(slacp::Slacp::new(p.clone(), ctx)?)),
        }
    }
    /// Short name for the `links` table.
    pub fn label(&self) -> &'static str {
        match self {
            LinkLayerConfig::Slacp(_) => "slacp",
        }
    }
}
