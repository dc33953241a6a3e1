//! FQ-CoDel, the Flow Queue CoDel packet scheduler and AQM (RFC 8290), as the Linux
//! `fq_codel` qdisc runs it (`net/sched/sch_fq_codel.c`).
//!
//! - Classification (RFC 8290 §4.1.1): each packet's flow key (the simulator's
//!   5-tuple: flow id, source and destination node) is hashed into one of `flows`
//!   queues (Linux: `reciprocal_scale(skb_get_hash(skb), flows_cnt)`, a Jenkins hash
//!   with a per-boot random key). tcplab mixes the key with a seed derived from the
//!   run seed (SplitMix64 finaliser), so the assignment, and any collision, is
//!   reproducible run to run and differs between seeds as it would between boots.
//! - Enqueue (§4.1.2): the packet is timestamped and appended to its queue; a queue
//!   that was not on either list joins the tail of the *new* list with `deficit =
//!   quantum`. If the qdisc now holds more than `limit` packets, the *fattest* queue
//!   (most bytes) loses packets from its head until half its bytes or
//!   `drop_batch_size` packets are gone (Linux `fq_codel_drop`), and its CoDel
//!   `count` rises by the number dropped.
//! - Dequeue (§4.1.3, deficit round robin): take the first queue of the new list, or
//!   else of the old list. If its deficit is exhausted (<= 0), add `quantum` and move
//!   it to the tail of the old list, and look again. Otherwise run CoDel on it
//!   (`codel.rs`, with the whole qdisc's backlog for the "at most one MTU" test, as
//!   Linux passes `sch->qstats.backlog`). If CoDel returns nothing the queue is empty:
//!   a queue from the new list moves to the old list if that is non-empty (so a new
//!   flow that empties cannot starve old ones, §4.1.3), otherwise it leaves the lists.
//!   The packet's size is charged to the deficit.
//! - Sparse flows (a voice stream) keep re-entering the new list with a fresh quantum
//!   and so are served ahead of the bulk flows' backlogs.
//!
//! Linux qdisc defaults: `limit` 10240 packets, `flows` 1024, `quantum` 1514 bytes
//! (`psched_mtu`), `target` 5 ms, `interval` 100 ms, `ecn` on, `ce_threshold` off,
//! `drop_batch_size` 64, `memory_limit` 32 MB.
//!
//! Deviations: `memory_limit` is not modelled (tcplab has no skb truesize; with the
//! default 32 MB the packet limit binds first below about 14,000 full-size packets).
//! The hash is not Jenkins' (see above). CoDel deviations are listed in `codel.rs`.

use super::codel::{self, CodelConfig, CodelSource, CodelVars};
use super::{DequeueCtx, DropCause, EnqueueCtx, QueueDisc, QueuedPacket, TimedFifo, Verdict};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

fn default_limit() -> u32 {
    10_240
}
fn default_flows() -> u32 {
    1024
}
fn default_quantum() -> u32 {
    1514
}
fn default_drop_batch() -> u32 {
    64
}
fn yes() -> bool {
    true
}

/// FQ-CoDel parameters as scenario files give them (Linux `tc qdisc ... fq_codel`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelParams {
    /// Packets in the whole qdisc before the fattest flow is trimmed. Linux 10240.
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Number of flow queues (hash buckets), 1..=65536. Linux 1024.
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// DRR quantum in bytes (Linux `psched_mtu`, 1514; at least 256).
    #[serde(default = "default_quantum")]
    pub quantum: u32,
    /// CoDel target sojourn time per queue (RFC 8290 §5.2.3: 5 ms).
    #[serde(default = "codel::default_target")]
    pub target: SimDuration,
    /// CoDel interval (100 ms).
    #[serde(default = "codel::default_interval")]
    pub interval: SimDuration,
    /// Mark ECN-capable packets CE instead of dropping (Linux default on).
    #[serde(default = "yes")]
    pub ecn: bool,
    /// Mark ECN-capable packets whose sojourn exceeds this (Linux `ce_threshold`).
    #[serde(default)]
    pub ce_threshold: Option<SimDuration>,
    /// Most packets dropped from the fattest flow per overflow (Linux 64).
    #[serde(default = "default_drop_batch")]
    pub drop_batch_size: u32,
    /// Bytes: CoDel never drops while the qdisc holds at most this (1514).
    #[serde(default = "codel::default_mtu")]
    pub mtu: u32,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            limit: default_limit(),
            flows: default_flows(),
            quantum: default_quantum(),
            target: codel::default_target(),
            interval: codel::default_interval(),
            ecn: true,
            ce_threshold: None,
            drop_batch_size: default_drop_batch(),
            mtu: codel::default_mtu(),
        }
    }
}

/// Which DRR list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct FlowQueue {
    fifo: TimedFifo,
    deficit: i64,
    cvars: CodelVars,
    list: List,
}

/// The `fq_codel` queue discipline.
pub struct FqCodel {
    flows: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    limit: u32,
    quantum: i64,
    drop_batch: u32,
    cfg: CodelConfig,
    hash_seed: u64,
    qlen: u32,
    backlog: u64,
}

/// CoDel's view of one flow queue inside the qdisc (Linux `dequeue_func`).
struct FlowSource<'a> {
    fifo: &'a mut TimedFifo,
    qlen: &'a mut u32,
    backlog: &'a mut u64,
}

impl CodelSource for FlowSource<'_> {
    fn pop(&mut self) -> Option<(QueuedPacket, SimTime)> {
        let e = self.fifo.pop()?;
        *self.qlen -= 1;
        *self.backlog -= e.0.size as u64;
        Some(e)
    }
    fn backlog(&self) -> u64 {
        *self.backlog
    }
}

/// SplitMix64's finaliser: a bijective 64-bit mix (Steele, Lea, Flood 2014).
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FqCodel {
    pub fn new(p: &FqCodelParams, hash_seed: u64) -> Result<FqCodel, String> {
        if p.limit == 0 {
            return Err("fq_codel.limit must be at least 1 packet, got 0".into());
        }
        if p.flows == 0 || p.flows > 65_536 {
            return Err(format!("fq_codel.flows must be in 1..=65536, got {}", p.flows));
        }
        if p.quantum < 256 {
            return Err(format!("fq_codel.quantum must be at least 256 bytes (Linux minimum), got {}", p.quantum));
        }
        if p.drop_batch_size == 0 {
            return Err("fq_codel.drop_batch_size must be at least 1 packet, got 0".into());
        }
        let cfg = CodelConfig::checked("fq_codel", p.target, p.interval, p.ecn, p.ce_threshold, p.mtu)?;
        let flows = (0..p.flows)
            .map(|_| FlowQueue { fifo: TimedFifo::default(), deficit: 0, cvars: CodelVars::default(), list: List::None })
            .collect();
        Ok(FqCodel {
            flows,
            new_flows: VecDeque::with_capacity(64),
            old_flows: VecDeque::with_capacity(64),
            limit: p.limit,
            quantum: p.quantum as i64,
            drop_batch: p.drop_batch_size,
            cfg,
            hash_seed,
            qlen: 0,
            backlog: 0,
        })
    }

    /// The queue index of a flow key: the mixed key scaled onto `0..flows` (Linux
    /// `reciprocal_scale`).
    pub fn bucket(&self, flow_key: u32) -> usize {
        let h = mix64(flow_key as u64 ^ self.hash_seed) >> 32;
        ((h * self.flows.len() as u64) >> 32) as usize
    }

    /// Drops from the head of the fattest queue until half its bytes or
    /// `drop_batch` packets are gone (Linux `fq_codel_drop`); returns its index.
    fn drop_from_fattest(&mut self, dropped: &mut Vec<(QueuedPacket, DropCause)>) -> usize {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes() > max {
                max = f.fifo.bytes();
                idx = i;
            }
        }
        let threshold = max / 2;
        let f = &mut self.flows[idx];
        let (mut len, mut n) = (0u64, 0u32);
        while let Some((p, _)) = f.fifo.pop() {
            len += p.size as u64;
            n += 1;
            dropped.push((p, DropCause::Overflow));
            if n >= self.drop_batch || len >= threshold {
                break;
            }
        }
        f.cvars.count = f.cvars.count.saturating_add(n);
        self.qlen -= n;
        self.backlog -= len;
        idx
    }

    /// Flows on the new and old lists (for tests and traces).
    pub fn list_lengths(&self) -> (usize, usize) {
        (self.new_flows.len(), self.old_flows.len())
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, pkt: QueuedPacket, ctx: &mut EnqueueCtx<'_>) -> Verdict {
        let idx = self.bucket(ctx.flow_key);
        let f = &mut self.flows[idx];
        f.fifo.push(pkt, ctx.now);
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum;
            self.new_flows.push_back(idx as u32);
        }
        self.qlen += 1;
        self.backlog += pkt.size as u64;
        if self.qlen <= self.limit {
            return Verdict::Enqueued;
        }
        // Over the limit: trim the fattest flow. If that removed the arriving packet
        // itself (its flow was the fattest and the batch reached its tail), report it
        // as this packet's drop rather than as another packet's.
        let before = ctx.dropped.len();
        self.drop_from_fattest(ctx.dropped);
        if let Some(k) = ctx.dropped[before..].iter().position(|(p, _)| p.id == pkt.id) {
            ctx.dropped.remove(before + k);
            return Verdict::Dropped(DropCause::Overflow);
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut DequeueCtx<'_>) -> Option<QueuedPacket> {
        loop {
            let (from_new, idx) = match self.new_flows.front() {
                Some(&i) => (true, i),
                None => (false, *self.old_flows.front()?),
            };
            let f = &mut self.flows[idx as usize];
            if f.deficit <= 0 {
                f.deficit += self.quantum;
                f.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(idx);
                continue;
            }
            let mut src = FlowSource { fifo: &mut f.fifo, qlen: &mut self.qlen, backlog: &mut self.backlog };
            let pkt = f.cvars.dequeue(&self.cfg, &mut src, ctx.now, ctx.dropped);
            match pkt {
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                    } else {
                        self.old_flows.pop_front();
                    }
                    // A new flow that emptied passes through the old list (if any old
                    // flow waits) so that it cannot starve them.
                    if from_new && !self.old_flows.is_empty() {
                        f.list = List::Old;
                        self.old_flows.push_back(idx);
                    } else {
                        f.list = List::None;
                    }
                }
                Some(p) => {
                    f.deficit -= p.size as i64;
                    return Some(p);
                }
            }
        }
    }

    fn len_packets(&self) -> u32 {
        self.qlen
    }
    fn len_bytes(&self) -> u64 {
        self.backlog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::PacketId;
    use crate::net::queue::QueueConfig;
    use crate::rng::RngStream;
    use crate::time::SimTime;

    /// A packet of flow `flow`.
    fn pkt(id: u32, flow: u32, size: u32) -> (QueuedPacket, u32) {
        (QueuedPacket::new(PacketId(id), size), flow)
    }

    fn offer(q: &mut FqCodel, (p, flow): (QueuedPacket, u32), dropped: &mut Vec<(QueuedPacket, DropCause)>) -> Verdict {
        let mut rng = RngStream::new(0, "t");
        let mut ctx = EnqueueCtx { now: SimTime::ZERO, in_service_bytes: None, rng: &mut rng, flow_key: flow, dropped };
        q.enqueue(p, &mut ctx)
    }

    /// Two flow keys that land in different buckets under this seed.
    fn two_flows(q: &FqCodel) -> (u32, u32) {
        let a = 1u32;
        let b = (2..100).find(|&k| q.bucket(k) != q.bucket(a)).unwrap();
        (a, b)
    }

    #[test]
    fn drr_serves_bytes_fairly_and_a_sparse_flow_jumps_the_queue() {
        // Flow A queues 10 packets of 1500 B, flow B 10 packets of 500 B. Quantum 1514:
        // A (first on the new list) sends 1500 (deficit 14), sends again (-1486),
        // then has to wait; B sends 500, 500, 500, 500 (deficit 1514 -> -486); the
        // rounds then alternate with equal bytes per round on average.
        let mut q = FqCodel::new(&FqCodelParams::default(), 7).unwrap();
        let (a, b) = two_flows(&q);
        let mut dropped = Vec::new();
        for i in 0..10 {
            offer(&mut q, pkt(i, a, 1500), &mut dropped);
        }
        for i in 10..20 {
            offer(&mut q, pkt(i, b, 500), &mut dropped);
        }
        // Ids 0..10 are A's, 10..20 B's, 99 C's.
        let flow_of = |p: QueuedPacket| match p.id.0 {
            0..10 => a,
            10..20 => b,
            _ => 0,
        };
        let mut order = Vec::new();
        let mut ctx = DequeueCtx { now: SimTime(1), dropped: &mut dropped };
        for _ in 0..8 {
            order.push(flow_of(q.dequeue(&mut ctx).unwrap()));
        }
        assert_eq!(order, [a, a, b, b, b, b, a, b]);
        // A sparse packet of flow C arriving now is sent next: C joins the new list
        // while A and B are on the old list.
        let c = (100..200).find(|&k| q.bucket(k) != q.bucket(a) && q.bucket(k) != q.bucket(b)).unwrap();
        offer(&mut q, pkt(99, c, 200), &mut dropped);
        let mut ctx = DequeueCtx { now: SimTime(2), dropped: &mut dropped };
        assert_eq!(q.dequeue(&mut ctx).unwrap().id.0, 99);
        // The next dequeue finds C empty at the head of the new list and moves it to
        // the old list (old flows are waiting), then serves B (deficit 528 left).
        assert_eq!(flow_of(q.dequeue(&mut ctx).unwrap()), b);
        assert_eq!(q.list_lengths(), (0, 3));
    }

    #[test]
    fn overflow_trims_half_the_fattest_flow_from_its_head() {
        // limit 20: flow A holds 16 packets, B 4; the 21st arrival (B) overflows.
        // The fattest is A (24000 B): drop from its head until >= 12000 B are gone,
        // i.e. 8 packets (ids 0..7); B's arrival is kept.
        let mut q = FqCodel::new(&FqCodelParams { limit: 20, ..Default::default() }, 3).unwrap();
        let (a, b) = two_flows(&q);
        let mut dropped = Vec::new();
        for i in 0..16 {
            offer(&mut q, pkt(i, a, 1500), &mut dropped);
        }
        for i in 16..20 {
            offer(&mut q, pkt(i, b, 1500), &mut dropped);
        }
        assert!(dropped.is_empty());
        assert_eq!(offer(&mut q, pkt(20, b, 1500), &mut dropped), Verdict::Enqueued);
        let ids: Vec<u32> = dropped.iter().map(|(p, _)| p.id.0).collect();
        assert_eq!(ids, (0..8).collect::<Vec<_>>());
        assert!(dropped.iter().all(|(_, c)| *c == DropCause::Overflow));
        assert_eq!((q.len_packets(), q.len_bytes()), (13, 13 * 1500));
        // A single flow over the limit loses its own arrival only if the batch reaches
        // it: limit 1, two packets of one flow: the fattest (that flow) loses the head.
        let mut q = FqCodel::new(&FqCodelParams { limit: 1, ..Default::default() }, 3).unwrap();
        let mut dropped = Vec::new();
        offer(&mut q, pkt(0, a, 1500), &mut dropped);
        assert_eq!(offer(&mut q, pkt(1, a, 1500), &mut dropped), Verdict::Enqueued);
        assert_eq!(dropped[0].0.id, PacketId(0));
    }

    #[test]
    fn hashing_is_deterministic_and_seeded() {
        let q1 = FqCodel::new(&FqCodelParams::default(), 1).unwrap();
        let q2 = FqCodel::new(&FqCodelParams::default(), 1).unwrap();
        let q3 = FqCodel::new(&FqCodelParams::default(), 2).unwrap();
        let keys: Vec<u32> = (0..64).collect();
        let b1: Vec<usize> = keys.iter().map(|&k| q1.bucket(k)).collect();
        let b2: Vec<usize> = keys.iter().map(|&k| q2.bucket(k)).collect();
        let b3: Vec<usize> = keys.iter().map(|&k| q3.bucket(k)).collect();
        assert_eq!(b1, b2);
        assert_ne!(b1, b3);
        assert!(b1.iter().all(|&b| b < 1024));
        // 64 keys in 1024 buckets: expected distinct ~ 1024 (1 - (1 - 1/1024)^64) = 62.1.
        let mut d = b1.clone();
        d.sort();
        d.dedup();
        assert!(d.len() >= 58, "{} distinct buckets", d.len());
    }

    #[test]
    fn serde_defaults_and_validation() {
        let cfg: QueueConfig = serde_json::from_str(r#"{"kind": "fq_codel"}"#).unwrap();
        let QueueConfig::FqCodel(p) = &cfg else { panic!() };
        assert_eq!(*p, FqCodelParams::default());
        assert!(p.ecn && p.limit == 10_240 && p.flows == 1024 && p.quantum == 1514);
        assert!(cfg.build(0).is_ok());
        let e = FqCodel::new(&FqCodelParams { quantum: 100, ..Default::default() }, 0).err().unwrap();
        assert!(e.contains("fq_codel.quantum"), "{e}");
        let e = FqCodel::new(&FqCodelParams { flows: 0, ..Default::default() }, 0).err().unwrap();
        assert!(e.contains("fq_codel.flows"), "{e}");
    }
}
