//! CoDel, Controlled Delay AQM (RFC 8289; K. Nichols and V. Jacobson, "Controlling
//! Queue Delay", ACM Queue 10(5), 2012), as the Linux `codel` qdisc runs it
//! (`net/sched/sch_codel.c`, `include/net/codel_impl.h`).
//!
//! CoDel timestamps each packet on arrival and judges the *sojourn time* (time spent
//! queued) of the packet at the head when it is dequeued:
//!
//! - `ok_to_drop` (RFC 8289 §5.5 `dodequeue`): the sojourn time has stayed at or above
//!   `target` for at least `interval` while more than one MTU was queued. The first
//!   sojourn above target arms `first_above_time = now + interval`; a sojourn below
//!   target, or a backlog (after this dequeue) of at most `mtu` bytes, disarms it.
//! - State machine (§5.6 `dequeue`): when `ok_to_drop` first holds, CoDel drops the
//!   head packet, enters the dropping state and schedules the next drop at
//!   `drop_next = now + interval / sqrt(count)` (the control law, §5.6). In the
//!   dropping state, each dequeue at or after `drop_next` drops, increments `count`
//!   and moves `drop_next = drop_next + interval / sqrt(count)`, so drops speed up as
//!   the square root of their number until the sojourn time falls below target, which
//!   ends the dropping state.
//! - Re-entry (§5.6): if the dropping state is re-entered within 16 intervals of the
//!   last scheduled drop and more than one drop happened last time, `count` resumes at
//!   `count - lastcount` instead of 1 (a good starting point for the same load).
//! - ECN (`ecn = true`, Linux `codel_dequeue`): an ECN-capable head packet is marked CE
//!   instead of dropped, and it is sent (the loop of the dropping state stops there).
//! - `ce_threshold` (Linux option, used for DCTCP-style marking): any ECN-capable packet
//!   leaving with a sojourn time above it is marked CE, independently of the above.
//! - Tail drop when `limit` packets are queued (Linux: `qlen < limit` admits).
//!
//! Linux qdisc defaults: `limit` 1000 packets, `target` 5 ms, `interval` 100 ms, `ecn`
//! off, `ce_threshold` off, `mtu` = `psched_mtu` = 1514 bytes on Ethernet.
//!
//! Deviations: time is exact nanoseconds (Linux keeps CoDel time in 1024 ns units), and
//! `interval / sqrt(count)` is computed in floating point and rounded down to a
//! nanosecond, where Linux keeps `1/sqrt(count)` in Q0.32 and refines it with one
//! Newton step per change of `count` (within 0.1% once `count` has moved a few steps).
//! Comparisons follow the RFC's pseudocode (`now >= first_above_time`); Linux tests
//! `now > first_above_time`, which differs only when the two are equal to the
//! nanosecond.

use super::{DequeueCtx, DropCause, EnqueueCtx, QueueDisc, QueuedPacket, TimedFifo, Verdict};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

fn default_limit() -> u32 {
    1000
}
pub(crate) fn default_target() -> SimDuration {
    SimDuration::from_millis(5)
}
pub(crate) fn default_interval() -> SimDuration {
    SimDuration::from_millis(100)
}
pub(crate) fn default_mtu() -> u32 {
    1514
}

/// CoDel parameters as scenario files give them (Linux `tc qdisc ... codel`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelParams {
    /// Queue limit in packets; arrivals beyond it are tail-dropped (`overflow`).
    /// Linux default 1000.
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Acceptable standing sojourn time (RFC 8289 §4.4: 5 ms).
    #[serde(default = "default_target")]
    pub target: SimDuration,
    /// Window over which the sojourn time must stay above target before dropping, and
    /// the base of the control law (RFC 8289 §4.3: 100 ms).
    #[serde(default = "default_interval")]
    pub interval: SimDuration,
    /// Mark ECN-capable packets CE instead of dropping them (Linux default off).
    #[serde(default)]
    pub ecn: bool,
    /// Mark ECN-capable packets CE whenever their sojourn time exceeds this (Linux
    /// `ce_threshold`; unset = off).
    #[serde(default)]
    pub ce_threshold: Option<SimDuration>,
    /// Bytes: no drop while the backlog is at most this (RFC 8289 MAXPACKET; Linux
    /// `psched_mtu`, 1514 on Ethernet).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            limit: default_limit(),
            target: default_target(),
            interval: default_interval(),
            ecn: false,
            ce_threshold: None,
            mtu: default_mtu(),
        }
    }
}

/// The constants of one CoDel instance.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodelConfig {
    pub target: SimDuration,
    pub interval: SimDuration,
    pub ecn: bool,
    pub ce_threshold: Option<SimDuration>,
    pub mtu: u64,
}

impl CodelConfig {
    pub(crate) fn checked(
        kind: &str,
        target: SimDuration,
        interval: SimDuration,
        ecn: bool,
        ce_threshold: Option<SimDuration>,
        mtu: u32,
    ) -> Result<Self, String> {
        if target.0 == 0 {
            return Err(format!("{kind}.target must be positive (a time such as \"5ms\"), got 0"));
        }
        if interval.0 == 0 {
            return Err(format!("{kind}.interval must be positive (a time such as \"100ms\"), got 0"));
        }
        if mtu == 0 {
            return Err(format!("{kind}.mtu must be at least 1 byte, got 0"));
        }
        // RFC 8289 §4.4: target is 5-10% of interval; above interval, CoDel could never
        // see a standing queue last an interval before the sojourn time fell again.
        if target > interval {
            return Err(format!(
                "{kind}.target must not exceed {kind}.interval ({} s), got {} s",
                interval.as_secs_f64(),
                target.as_secs_f64()
            ));
        }
        Ok(CodelConfig { target, interval, ecn, ce_threshold, mtu: mtu as u64 })
    }

    /// The control law (RFC 8289 §5.6): `t + interval / sqrt(count)`.
    pub(crate) fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        let step = self.interval.0 as f64 / (count.max(1) as f64).sqrt();
        t + SimDuration(step as u64)
    }
}

/// Where CoDel takes packets from: a FIFO with arrival times, and the backlog its "at
/// most one MTU" test reads (the whole qdisc's backlog, also for FQ-CoDel's per-flow
/// instances).
pub(crate) trait CodelSource {
    /// Removes the head packet of this CoDel instance's queue, with its arrival time.
    fn pop(&mut self) -> Option<(QueuedPacket, SimTime)>;
    /// Bytes queued in the whole qdisc, after the last `pop`.
    fn backlog(&self) -> u64;
}

impl CodelSource for TimedFifo {
    fn pop(&mut self) -> Option<(QueuedPacket, SimTime)> {
        TimedFifo::pop(self)
    }
    fn backlog(&self) -> u64 {
        self.bytes()
    }
}

/// The per-queue CoDel state (RFC 8289 §5; Linux `struct codel_vars`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CodelVars {
    /// Drops (or marks) in the current dropping state.
    pub count: u32,
    /// `count` when the last dropping state began.
    pub lastcount: u32,
    pub dropping: bool,
    /// When the sojourn time will have been above target for an interval (`None`:
    /// below target, RFC's 0).
    pub first_above_time: Option<SimTime>,
    /// When the next drop is due in the dropping state.
    pub drop_next: SimTime,
    /// Sojourn time of the last packet examined.
    pub ldelay: SimDuration,
}

impl CodelVars {
    /// RFC 8289 §5.5 `dodequeue`'s test, on a packet already removed from the queue:
    /// may CoDel drop it? Updates `first_above_time`.
    fn should_drop(&mut self, cfg: &CodelConfig, pkt: Option<&(QueuedPacket, SimTime)>, backlog: u64, now: SimTime) -> bool {
        let Some((_, arrived)) = pkt else {
            self.first_above_time = None;
            return false;
        };
        self.ldelay = now.since(*arrived);
        if self.ldelay < cfg.target || backlog <= cfg.mtu {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + cfg.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// RFC 8289 §5.6 `dequeue` (with Linux's ECN and `ce_threshold` marking): the next
    /// packet to send, appending dropped ones to `dropped`.
    pub(crate) fn dequeue<S: CodelSource>(
        &mut self,
        cfg: &CodelConfig,
        src: &mut S,
        now: SimTime,
        dropped: &mut Vec<(QueuedPacket, DropCause)>,
    ) -> Option<QueuedPacket> {
        let mut pkt = src.pop();
        if pkt.is_none() {
            self.dropping = false;
            self.first_above_time = None;
            return None;
        }
        let mut ok_to_drop = self.should_drop(cfg, pkt.as_ref(), src.backlog(), now);
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            } else {
                while self.dropping && now >= self.drop_next {
                    self.count = self.count.saturating_add(1);
                    let (p, _) = pkt.as_mut().expect("a packet is examined in the loop");
                    if cfg.ecn && p.try_mark_ce() {
                        self.drop_next = cfg.control_law(self.drop_next, self.count);
                        return self.finish(cfg, pkt);
                    }
                    dropped.push((*p, DropCause::Early));
                    pkt = src.pop();
                    ok_to_drop = self.should_drop(cfg, pkt.as_ref(), src.backlog(), now);
                    if !ok_to_drop {
                        self.dropping = false;
                    } else {
                        self.drop_next = cfg.control_law(self.drop_next, self.count);
                    }
                }
            }
        } else if ok_to_drop {
            let (p, _) = pkt.as_mut().expect("ok_to_drop implies a packet");
            if !(cfg.ecn && p.try_mark_ce()) {
                dropped.push((*p, DropCause::Early));
                pkt = src.pop();
                self.should_drop(cfg, pkt.as_ref(), src.backlog(), now);
            }
            self.dropping = true;
            // Re-entering soon after the last dropping state: resume near its rate.
            let delta = self.count.saturating_sub(self.lastcount);
            let since_next = now.0 as i128 - self.drop_next.0 as i128;
            let recent = since_next < 16 * cfg.interval.0 as i128;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.lastcount = self.count;
            self.drop_next = cfg.control_law(now, self.count);
        }
        self.finish(cfg, pkt)
    }

    /// Linux's `ce_threshold` marking of the packet leaving.
    fn finish(&self, cfg: &CodelConfig, pkt: Option<(QueuedPacket, SimTime)>) -> Option<QueuedPacket> {
        let (mut p, _) = pkt?;
        if cfg.ce_threshold.is_some_and(|th| self.ldelay > th) {
            p.try_mark_ce();
        }
        Some(p)
    }
}

/// The `codel` queue discipline: one FIFO under one CoDel instance.
pub struct Codel {
    fifo: TimedFifo,
    limit: u32,
    cfg: CodelConfig,
    vars: CodelVars,
}

impl Codel {
    pub fn new(p: &CodelParams) -> Result<Codel, String> {
        if p.limit == 0 {
            return Err("codel.limit must be at least 1 packet, got 0".into());
        }
        let cfg = CodelConfig::checked("codel", p.target, p.interval, p.ecn, p.ce_threshold, p.mtu)?;
        Ok(Codel {
            fifo: TimedFifo::with_capacity(p.limit.min(4096) as usize),
            limit: p.limit,
            cfg,
            vars: CodelVars::default(),
        })
    }

    /// (count, dropping, drop_next) for tests and traces.
    pub fn state(&self) -> (u32, bool, SimTime) {
        (self.vars.count, self.vars.dropping, self.vars.drop_next)
    }
}

impl QueueDisc for Codel {
    fn enqueue(&mut self, pkt: QueuedPacket, ctx: &mut EnqueueCtx<'_>) -> Verdict {
        if self.fifo.len() >= self.limit {
            return Verdict::Dropped(DropCause::Overflow);
        }
        self.fifo.push(pkt, ctx.now);
        Verdict::Enqueued
    }
    fn dequeue(&mut self, ctx: &mut DequeueCtx<'_>) -> Option<QueuedPacket> {
        self.vars.dequeue(&self.cfg, &mut self.fifo, ctx.now, ctx.dropped)
    }
    fn len_packets(&self) -> u32 {
        self.fifo.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::net::packet::{Ecn, PacketId};
    use crate::rng::RngStream;

    pub(crate) fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// A 1500-byte packet arriving at `at`.
    pub(crate) fn pkt(id: u32, at: SimTime, ecn: Ecn) -> (QueuedPacket, SimTime) {
        (QueuedPacket::with(PacketId(id), 1500, 0, 0, ecn), at)
    }

    fn offer(q: &mut dyn QueueDisc, (p, at): (QueuedPacket, SimTime)) -> Verdict {
        let mut rng = RngStream::new(0, "t");
        let mut dropped = Vec::new();
        let mut ctx = EnqueueCtx { now: at, in_service_bytes: None, rng: &mut rng, flow_key: 0, dropped: &mut dropped };
        q.enqueue(p, &mut ctx)
    }

    fn take(q: &mut dyn QueueDisc, now: SimTime, dropped: &mut Vec<(QueuedPacket, DropCause)>) -> Option<QueuedPacket> {
        let mut ctx = DequeueCtx { now, dropped };
        q.dequeue(&mut ctx)
    }

    /// A standing queue served at a fixed rate: 1000 packets all enqueued at t = 0 and
    /// one dequeue every `gap`; returns the times of the drops.
    fn drain_standing_queue(q: &mut Codel, n: u32, gap_us: u64) -> (Vec<SimTime>, Vec<SimTime>) {
        for i in 0..n {
            assert_eq!(offer(q, pkt(i, SimTime::ZERO, Ecn::NotEct)), Verdict::Enqueued);
        }
        let mut drops = Vec::new();
        let mut sent = Vec::new();
        let mut dropped = Vec::new();
        let mut t = SimTime::ZERO;
        while q.len_packets() > 0 {
            t = t + SimDuration::from_micros(gap_us);
            if take(q, t, &mut dropped).is_some() {
                sent.push(t);
            }
            drops.extend(dropped.drain(..).map(|_| t));
        }
        (drops, sent)
    }

    #[test]
    fn first_drop_after_one_interval_above_target_then_interval_over_sqrt_count() {
        // 1000 packets queued at t = 0, served one per ms: every sojourn time exceeds
        // 5 ms from t = 5 ms. The first dequeue at 1 ms sees 1 ms < target; the one at
        // 5 ms arms first_above_time = 5 + 100 = 105 ms; the dequeue at 105 ms may drop
        // (now >= first_above_time): first drop at 105 ms, count 1, drop_next =
        // 105 + 100/sqrt(1) = 205 ms. Then drops at drop_next + 100/sqrt(count):
        // 205 (count 2, next 205 + 70.71 = 275.71), 276 (count 3, next 275.71 + 57.74
        // = 333.45), 334, ... Each drop removes the head and sends the next packet in
        // the same dequeue, so dequeue times stay on the 1 ms grid.
        let mut q = Codel::new(&CodelParams::default()).unwrap();
        let (drops, _) = drain_standing_queue(&mut q, 1000, 1000);
        assert_eq!(&drops[..4], &[ms(105), ms(205), ms(276), ms(334)]);
        // Spacing interval/sqrt(count) (to within the 1 ms service grid) over the first
        // 20 drops: the k-th gap (k >= 1) is 100/sqrt(k) ms.
        let mut expected = ms(105).0 as f64;
        for (k, d) in drops.iter().enumerate().take(20).skip(1) {
            expected += 100e6 / (k as f64).sqrt();
            let err = d.0 as f64 - expected;
            assert!((-100.0..1e6 + 1.0).contains(&err), "drop {k} at {d:?}, control law says {expected} ns");
        }
    }

    #[test]
    fn dropping_state_ends_below_target_and_resumes_at_count_minus_lastcount() {
        // A queue of 300 packets, served every 1 ms, enters the dropping state at
        // 105 ms. Once the queue has drained to where sojourn < target the state ends.
        let mut q = Codel::new(&CodelParams::default()).unwrap();
        let (drops, _) = drain_standing_queue(&mut q, 300, 1000);
        let (count, dropping, drop_next) = q.state();
        assert!(!dropping);
        assert_eq!(count as usize, drops.len());
        // Re-enter within 16 intervals of drop_next: count resumes at count - lastcount
        // (lastcount was 1, the count at entry).
        let t0 = drop_next;
        for i in 0..300 {
            offer(&mut q, pkt(i, t0, Ecn::NotEct));
        }
        let mut dropped = Vec::new();
        let mut t = t0;
        while !q.state().1 {
            t = t + SimDuration::from_millis(1);
            take(&mut q, t, &mut dropped);
        }
        assert_eq!(q.state().0, count - 1);
    }

    #[test]
    fn ecn_marks_instead_of_dropping_and_small_backlog_never_drops() {
        // Same standing queue, ECT(0) packets, ecn on: no drops, and marks where the
        // drops were (the first at 105 ms).
        let mut q = Codel::new(&CodelParams { ecn: true, ..Default::default() }).unwrap();
        for i in 0..400 {
            offer(&mut q, pkt(i, SimTime::ZERO, Ecn::Ect0));
        }
        let mut dropped = Vec::new();
        let mut marks = Vec::new();
        let mut t = SimTime::ZERO;
        while q.len_packets() > 0 {
            t = t + SimDuration::from_millis(1);
            let p = take(&mut q, t, &mut dropped).unwrap();
            if p.ecn() == Ecn::Ce {
                marks.push(t);
            }
        }
        assert!(dropped.is_empty());
        // Marks follow the same law: 105, 205, 275.71 -> the dequeue at 276 ms.
        assert_eq!(&marks[..3], &[ms(105), ms(205), ms(276)]);
        // Two packets with a huge sojourn: after the first leaves, the backlog is one
        // packet (1500 <= mtu 1514): never dropped.
        let mut q = Codel::new(&CodelParams::default()).unwrap();
        offer(&mut q, pkt(0, SimTime::ZERO, Ecn::NotEct));
        offer(&mut q, pkt(1, SimTime::ZERO, Ecn::NotEct));
        assert!(take(&mut q, ms(500), &mut dropped).is_some());
        assert!(take(&mut q, ms(900), &mut dropped).is_some());
        assert!(dropped.is_empty());
    }

    #[test]
    fn ce_threshold_marks_by_sojourn_and_limit_tail_drops() {
        let mut q = Codel::new(&CodelParams {
            ce_threshold: Some(SimDuration::from_millis(1)),
            limit: 2,
            ..Default::default()
        })
        .unwrap();
        offer(&mut q, pkt(0, SimTime::ZERO, Ecn::Ect0));
        offer(&mut q, pkt(1, SimTime::ZERO, Ecn::NotEct));
        assert_eq!(offer(&mut q, pkt(2, SimTime::ZERO, Ecn::Ect0)), Verdict::Dropped(DropCause::Overflow));
        let mut dropped = Vec::new();
        // Sojourn 2 ms > 1 ms: the ECT packet is marked, the Not-ECT one is not.
        assert_eq!(take(&mut q, ms(2), &mut dropped).unwrap().ecn(), Ecn::Ce);
        assert_eq!(take(&mut q, ms(2), &mut dropped).unwrap().ecn(), Ecn::NotEct);
    }

    #[test]
    fn serde_defaults_and_validation() {
        let cfg: super::super::QueueConfig = serde_json::from_str(r#"{"kind": "codel"}"#).unwrap();
        let super::super::QueueConfig::Codel(p) = &cfg else { panic!() };
        assert_eq!(*p, CodelParams::default());
        assert_eq!((p.limit, p.target, p.interval, p.mtu), (1000, SimDuration::from_millis(5), SimDuration::from_millis(100), 1514));
        assert!(cfg.build(0).is_ok());
        let e = Codel::new(&CodelParams { target: SimDuration::ZERO, ..Default::default() }).err().unwrap();
        assert!(e.contains("codel.target"), "{e}");
        assert!(serde_json::from_str::<super::super::QueueConfig>(r#"{"kind": "codel", "targt": 5}"#).is_err());
    }
}
