//! Drop-tail FIFO in the three semantics compared by seed 003 (Stewart et al.,
//! "Multimedia-unfriendly TCP congestion control and home gateway queue management"):
//!
//! - `slot` (packet-slot, PS): drop if occupancy >= limit packets;
//! - `byte_strict` (fixed-byte strict, FB-strict): drop if occupancy + packet >= limit bytes;
//! - `byte_loose` (fixed-byte loose, FB-loose, dummynet): drop if occupancy > limit bytes.
//!
//! Occupancy is the waiting packets, plus the packet in service when
//! `count_in_service` is set. ns-2's `Queue/DropTail` drops when
//! `length + 1 >= qlim_`, which equals `slot` with `count_in_service = true` while the
//! link is busy; Linux `pfifo`/`bfifo` and dummynet count only waiting packets
//! (`count_in_service = false`, the default).

use super::{DequeueCtx, DropCause, EnqueueCtx, Fifo, Limit, QueueDisc, QueuedPacket, Verdict};
use serde::{Deserialize, Serialize};

/// How the limit is compared with the occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropTailSemantics {
    /// Packet-slot: drop if occupancy >= limit (packets).
    Slot,
    /// Fixed-byte strict: drop if occupancy + packet >= limit (bytes).
    ByteStrict,
    /// Fixed-byte loose: drop if occupancy > limit (bytes), as dummynet does.
    ByteLoose,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailParams {
    /// Buffer limit; packets for `slot`, bytes for the byte semantics.
    pub limit: Limit,
    /// Comparison rule. Default: `slot` for a packet limit, `byte_strict` for bytes.
    #[serde(default)]
    pub semantics: Option<DropTailSemantics>,
    /// Whether the packet being transmitted counts towards the occupancy. Default false.
    #[serde(default)]
    pub count_in_service: bool,
}

pub struct DropTail {
    fifo: Fifo,
    limit: u64,
    semantics: DropTailSemantics,
    count_in_service: bool,
}

impl DropTail {
    pub fn new(p: DropTailParams) -> Result<Self, String> {
        let semantics = p.semantics.unwrap_or(match p.limit {
            Limit::Packets(_) => DropTailSemantics::Slot,
            Limit::Bytes(_) => DropTailSemantics::ByteStrict,
        });
        let limit = match (semantics, p.limit) {
            (DropTailSemantics::Slot, Limit::Packets(n)) => n as u64,
            (DropTailSemantics::Slot, Limit::Bytes(_)) => {
                return Err("drop-tail semantics 'slot' needs a limit in packets (e.g. \"48pkt\")".into())
            }
            (_, Limit::Bytes(b)) => b,
            (_, Limit::Packets(_)) => {
                return Err("drop-tail byte semantics need a limit in bytes (e.g. \"40kB\")".into())
            }
        };
        if limit == 0 {
            return Err("drop-tail limit must be at least 1".into());
        }
        Ok(DropTail {
            fifo: Fifo::default(),
            limit,
            semantics,
            count_in_service: p.count_in_service,
        })
    }

    /// Heap bytes held by the FIFO's overflow buffer.
    pub fn heap_bytes(&self) -> usize {
        self.fifo.heap_bytes()
    }
}

impl DropTail {
    /// Offers a packet; `in_service_bytes` is the size of the packet the link is
    /// serializing, if any. Drop-tail needs nothing else of `EnqueueCtx`, so links call
    /// this directly and build no context.
    #[inline]
    pub fn offer(&mut self, pkt: QueuedPacket, in_service_bytes: Option<u32>) -> Verdict {
        let in_service = if self.count_in_service { in_service_bytes } else { None };
        let drop = match self.semantics {
            DropTailSemantics::Slot => {
                self.fifo.len() as u64 + in_service.is_some() as u64 >= self.limit
            }
            DropTailSemantics::ByteStrict => {
                self.fifo.bytes() + in_service.unwrap_or(0) as u64 + pkt.size as u64 >= self.limit
            }
            DropTailSemantics::ByteLoose => {
                self.fifo.bytes() + in_service.unwrap_or(0) as u64 > self.limit
            }
        };
        if drop {
            Verdict::Dropped(DropCause::Overflow)
        } else {
            self.fifo.push(pkt);
            Verdict::Enqueued
        }
    }

    /// The next packet, or `None` when empty (drop-tail never drops at dequeue).
    #[inline]
    pub fn take(&mut self) -> Option<QueuedPacket> {
        self.fifo.pop()
    }
}

impl QueueDisc for DropTail {
    fn enqueue(&mut self, pkt: QueuedPacket, ctx: &mut EnqueueCtx<'_>) -> Verdict {
        self.offer(pkt, ctx.in_service_bytes)
    }
    fn dequeue(&mut self, _ctx: &mut DequeueCtx<'_>) -> Option<QueuedPacket> {
        self.take()
    }
    fn len_packets(&self) -> u32 {
        self.fifo.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn last_enqueued(&self) -> Option<QueuedPacket> {
        self.fifo.back().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::PacketId;
    use crate::rng::RngStream;
    use crate::time::SimTime;

    fn offer(q: &mut DropTail, size: u32, in_service: Option<u32>) -> Verdict {
        let mut rng = RngStream::new(0, "t");
        let mut dropped = Vec::new();
        let mut ctx = EnqueueCtx { now: SimTime(0), in_service_bytes: in_service, rng: &mut rng, flow_key: 0, dropped: &mut dropped };
        q.enqueue(QueuedPacket::new(PacketId(0), size), &mut ctx)
    }

    fn q(limit: Limit, s: DropTailSemantics, cis: bool) -> DropTail {
        DropTail::new(DropTailParams { limit, semantics: Some(s), count_in_service: cis }).unwrap()
    }

    #[test]
    fn slot_holds_exactly_limit_packets() {
        let mut d = q(Limit::Packets(3), DropTailSemantics::Slot, false);
        for _ in 0..3 {
            assert_eq!(offer(&mut d, 1500, Some(1500)), Verdict::Enqueued);
        }
        assert_eq!(offer(&mut d, 40, Some(1500)), Verdict::Dropped(DropCause::Overflow));
        // Counting the packet in service leaves room for limit-1 waiting (ns-2 DropTail).
        let mut n = q(Limit::Packets(3), DropTailSemantics::Slot, true);
        assert_eq!(offer(&mut n, 1500, Some(1500)), Verdict::Enqueued);
        assert_eq!(offer(&mut n, 1500, Some(1500)), Verdict::Enqueued);
        assert_eq!(offer(&mut n, 1500, Some(1500)), Verdict::Dropped(DropCause::Overflow));
    }

    #[test]
    fn byte_strict_vs_loose_on_the_same_arrivals() {
        // Limit 3000 B. After two 1500 B packets (3000 B waiting):
        // strict: 3000 + 186 >= 3000 -> drop; loose: 3000 > 3000 false -> admit.
        let mut s = q(Limit::Bytes(3000), DropTailSemantics::ByteStrict, false);
        let mut l = q(Limit::Bytes(3000), DropTailSemantics::ByteLoose, false);
        // strict admits the first (0+1500 >= 3000 false) but not the second (1500+1500 >= 3000).
        assert_eq!(offer(&mut s, 1500, None), Verdict::Enqueued);
        assert_eq!(offer(&mut s, 1500, None), Verdict::Dropped(DropCause::Overflow));
        assert_eq!(offer(&mut s, 186, None), Verdict::Enqueued); // 1500+186 < 3000
        for _ in 0..2 {
            assert_eq!(offer(&mut l, 1500, None), Verdict::Enqueued);
        }
        assert_eq!(offer(&mut l, 186, None), Verdict::Enqueued); // 3000 > 3000 is false
        assert_eq!(offer(&mut l, 186, None), Verdict::Dropped(DropCause::Overflow)); // 3186 > 3000
        assert_eq!(l.len_bytes(), 3186);
    }

    #[test]
    fn wrong_limit_kind_is_rejected() {
        let e = DropTail::new(DropTailParams {
            limit: Limit::Bytes(1000),
            semantics: Some(DropTailSemantics::Slot),
            count_in_service: false,
        });
        assert!(e.err().unwrap().contains("packets"));
    }
}
