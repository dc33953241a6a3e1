//! PIE, Proportional Integral controller Enhanced (RFC 8033), as the Linux `pie`
//! qdisc runs it (`net/sched/sch_pie.c`, `include/net/pie.h`, which follow RFC 8033
//! since Linux 5.1).
//!
//! - Every `tupdate` (RFC 8033 §4.2, `calculate_drop_prob`) the drop probability p is
//!   moved by `alpha * (qdelay - target) + beta * (qdelay - qdelay_old)`, with
//!   alpha and beta in Hz and the delays in seconds. While p is small the step is
//!   scaled down (§4.2 auto-tuning): by 1/2 below 10%, and by a further 1/4 per decade
//!   below 1%, to 1/2048 below 0.0001%. Above 10% one step adds at most 2%; a delay
//!   above 250 ms adds 2% more (Linux's non-linear drop). When the delay was zero for
//!   two updates p decays by 1/64 (§4.2: 98.4%). p is bounded to [0, 1]. With delay
//!   below target/2 for two updates and p = 0, the state restarts (§4.4: the burst
//!   allowance is refilled to `max_burst`).
//! - `qdelay` is the sojourn time of the last packet dequeued, 0 when the queue
//!   emptied (Linux default, per-packet timestamps; RFC 8033 §5.3 allows it), or with
//!   `dq_rate_estimator` the backlog divided by a departure rate measured over
//!   16384-byte cycles and averaged with weight 1/8 (RFC 8033 §4.3, Little's law).
//! - On arrival (§4.1, Linux `pie_drop_early`): tail drop at `limit` packets;
//!   otherwise no early drop while burst allowance remains, while the delay is below
//!   target/2 and p < 20%, or while fewer than two MTUs are queued. Else the
//!   de-randomised drop of §5.1 (Linux): the probabilities of the arrivals are
//!   accumulated, no drop below a sum of 0.85, certain drop at 8.5, and in between a
//!   drop with probability p (reset to 0 after a drop). `bytemode` scales p by
//!   size / MTU. With `ecn`, an ECN-capable packet is marked CE instead of dropped
//!   while p <= 10% (§5.1).
//! - The burst allowance (§4.4, `max_burst` 150 ms) is consumed by the time between
//!   dequeues (Linux), or by each rate-measurement interval.
//!
//! Linux qdisc defaults: `limit` 1000 packets, `target` 15 ms, `tupdate` 15 ms,
//! `alpha` 2 and `beta` 20 in units of 1/16 Hz (0.125 Hz and 1.25 Hz), `ecn` off,
//! `bytemode` off, `dq_rate_estimator` off; burst allowance 150 ms and MTU 1514 bytes
//! (`psched_mtu`) are not configurable in Linux either.
//!
//! Timer: Linux updates p from a kernel timer. Between packet events the queue does
//! not change, so tcplab runs the updates due (at k * tupdate, k >= 1) lazily, before
//! each arrival or departure, which gives the same values; once an update leaves the
//! state unchanged on an empty queue, the remaining idle updates are skipped.
//!
//! Deviations: p is a binary64 in [0, 1] where Linux uses a 56-bit fixed-point value
//! (which can exceed its maximum after a 2% step near 1); the first update is at
//! `tupdate` (Linux: 500 ms after the qdisc is created).

use super::{DequeueCtx, DropCause, EnqueueCtx, QueueDisc, QueuedPacket, TimedFifo, Verdict};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// Linux `QUEUE_THRESHOLD`: bytes per departure-rate measurement cycle.
const DQ_THRESHOLD: u64 = 16_384;
/// RFC 8033 MAX_BURST, Linux's fixed burst allowance.
const MAX_BURST: SimDuration = SimDuration(150_000_000);
/// Linux `psched_mtu` on Ethernet.
const MTU: u64 = 1514;

fn default_limit() -> u32 {
    1000
}
fn default_target() -> SimDuration {
    SimDuration::from_millis(15)
}
fn default_tupdate() -> SimDuration {
    SimDuration::from_millis(15)
}
fn default_alpha() -> f64 {
    0.125
}
fn default_beta() -> f64 {
    1.25
}

/// PIE parameters as scenario files give them (Linux `tc qdisc ... pie`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieParams {
    /// Queue limit in packets (tail drop). Linux 1000.
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Target queueing delay (RFC 8033 QDELAY_REF, 15 ms).
    #[serde(default = "default_target")]
    pub target: SimDuration,
    /// Interval between drop-probability updates (RFC 8033 T_UPDATE, 15 ms).
    #[serde(default = "default_tupdate")]
    pub tupdate: SimDuration,
    /// Weight of the delay error, Hz (RFC 8033: 0.125; Linux alpha 2 = 2/16).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Weight of the delay trend, Hz (RFC 8033: 1.25; Linux beta 20 = 20/16).
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// Mark ECN-capable packets CE instead of dropping while p <= 10% (Linux off).
    #[serde(default)]
    pub ecn: bool,
    /// Scale the drop probability by packet size / MTU (Linux off).
    #[serde(default)]
    pub bytemode: bool,
    /// Estimate the delay from the departure rate (Little's law) instead of packet
    /// timestamps (Linux off since 5.1).
    #[serde(default)]
    pub dq_rate_estimator: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            limit: default_limit(),
            target: default_target(),
            tupdate: default_tupdate(),
            alpha: default_alpha(),
            beta: default_beta(),
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
        }
    }
}

/// The controller's state (Linux `struct pie_vars`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct PieVars {
    prob: f64,
    accu_prob: f64,
    qdelay: SimDuration,
    qdelay_old: SimDuration,
    burst_time: SimDuration,
    dq_tstamp: Option<SimTime>,
    /// Bytes dequeued in the current rate-measurement cycle (`None`: no cycle).
    dq_count: Option<u64>,
    /// Average departure rate, bytes per ns (0: none yet).
    avg_dq_rate: f64,
}

impl PieVars {
    fn new() -> Self {
        PieVars {
            prob: 0.0,
            accu_prob: 0.0,
            qdelay: SimDuration::ZERO,
            qdelay_old: SimDuration::ZERO,
            burst_time: MAX_BURST,
            dq_tstamp: None,
            dq_count: None,
            avg_dq_rate: 0.0,
        }
    }
    /// Linux `pie_vars_init`: a new measurement cycle (p and the delays are kept).
    fn restart(&mut self) {
        self.burst_time = MAX_BURST;
        self.dq_tstamp = None;
        self.accu_prob = 0.0;
        self.dq_count = None;
        self.avg_dq_rate = 0.0;
    }
}

/// The `pie` queue discipline.
pub struct Pie {
    fifo: TimedFifo,
    p: PieParams,
    vars: PieVars,
    next_update: SimTime,
}

impl Pie {
    pub fn new(p: &PieParams) -> Result<Pie, String> {
        if p.limit == 0 {
            return Err("pie.limit must be at least 1 packet, got 0".into());
        }
        if p.target.0 == 0 {
            return Err("pie.target must be positive (a time such as \"15ms\"), got 0".into());
        }
        if p.tupdate.0 == 0 {
            return Err("pie.tupdate must be positive (a time such as \"15ms\"), got 0".into());
        }
        for (name, v) in [("alpha", p.alpha), ("beta", p.beta)] {
            if !(v.is_finite() && (0.0..=2.0).contains(&v)) {
                return Err(format!("pie.{name} must be in [0, 2] Hz (Linux 0..32 sixteenths), got {v}"));
            }
        }
        Ok(Pie {
            fifo: TimedFifo::with_capacity(p.limit.min(4096) as usize),
            p: p.clone(),
            vars: PieVars::new(),
            next_update: SimTime::ZERO + p.tupdate,
        })
    }

    /// The current drop probability.
    pub fn probability(&self) -> f64 {
        self.vars.prob
    }

    /// The current queueing-delay estimate.
    pub fn qdelay(&self) -> SimDuration {
        self.vars.qdelay
    }

    /// Runs the probability updates due at or before `now`.
    fn run_updates(&mut self, now: SimTime) {
        while self.next_update <= now {
            let before = self.vars;
            self.calculate_probability();
            self.next_update = self.next_update + self.p.tupdate;
            if self.vars == before && self.fifo.is_empty() && self.next_update <= now {
                // A fixed point on an empty queue: the remaining updates change nothing.
                let behind = (now.0 - self.next_update.0) / self.p.tupdate.0 + 1;
                self.next_update = SimTime(self.next_update.0 + behind * self.p.tupdate.0);
            }
        }
    }

    /// RFC 8033 §4.2 / Linux `pie_calculate_probability`.
    fn calculate_probability(&mut self) {
        let v = &mut self.vars;
        let backlog = self.fifo.bytes();
        let target = self.p.target;
        let (qdelay, qdelay_old) = if self.p.dq_rate_estimator {
            let old = v.qdelay;
            v.qdelay_old = v.qdelay;
            let q = if v.avg_dq_rate > 0.0 { SimDuration((backlog as f64 / v.avg_dq_rate) as u64) } else { SimDuration::ZERO };
            (q, old)
        } else {
            (v.qdelay, v.qdelay_old)
        };
        // A zero delay with a backlog means a very small queue: no update this round.
        let mut update_prob = !(qdelay.0 == 0 && backlog != 0);
        let (mut alpha, mut beta) = (self.p.alpha, self.p.beta);
        if v.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100.0;
            while v.prob < 1.0 / power && power <= 1e6 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10.0;
            }
        }
        let secs = |d: SimDuration| d.0 as f64 * 1e-9;
        let mut delta = alpha * (secs(qdelay) - secs(target)) + beta * (secs(qdelay) - secs(qdelay_old));
        if delta > 0.02 && v.prob >= 0.1 {
            delta = 0.02;
        }
        if qdelay > SimDuration::from_millis(250) {
            delta += 0.02;
        }
        v.prob += delta;
        if v.prob > 1.0 {
            v.prob = 1.0;
            update_prob = false;
        } else if v.prob < 0.0 {
            v.prob = 0.0;
        }
        if qdelay.0 == 0 && qdelay_old.0 == 0 && update_prob {
            v.prob -= v.prob / 64.0;
        }
        v.qdelay = qdelay;
        let half = SimDuration(target.0 / 2);
        if v.qdelay < half && v.qdelay_old < half && v.prob == 0.0 && (!self.p.dq_rate_estimator || v.avg_dq_rate > 0.0) {
            v.restart();
        }
        if !self.p.dq_rate_estimator {
            v.qdelay_old = qdelay;
        }
    }

    /// RFC 8033 §4.1 / Linux `pie_drop_early`, for a packet of `size` bytes arriving
    /// at a backlog of `backlog` bytes.
    fn drop_early(&mut self, backlog: u64, size: u32, rng: &mut crate::rng::RngStream) -> bool {
        let v = &mut self.vars;
        if v.burst_time.0 > 0 {
            return false;
        }
        if v.qdelay < SimDuration(self.p.target.0 / 2) && v.prob < 0.2 {
            return false;
        }
        if backlog < 2 * MTU {
            return false;
        }
        let local = if self.p.bytemode && size as u64 <= MTU { v.prob * size as f64 / MTU as f64 } else { v.prob };
        if local == 0.0 {
            v.accu_prob = 0.0;
        } else {
            v.accu_prob += local;
        }
        if v.accu_prob < 0.85 {
            return false;
        }
        if v.accu_prob >= 8.5 {
            return true;
        }
        if rng.uniform() < local {
            v.accu_prob = 0.0;
            return true;
        }
        false
    }

    /// Linux `pie_process_dequeue`: the delay sample and the burst allowance.
    fn process_dequeue(&mut self, pkt: &QueuedPacket, arrived: SimTime, now: SimTime) {
        let backlog = self.fifo.bytes();
        let v = &mut self.vars;
        let dtime;
        if !self.p.dq_rate_estimator {
            v.qdelay = now.since(arrived);
            dtime = v.dq_tstamp.map_or(SimDuration::ZERO, |t| now.since(t));
            v.dq_tstamp = Some(now);
            if backlog == 0 {
                v.qdelay = SimDuration::ZERO;
            }
            if dtime.0 == 0 {
                return;
            }
        } else {
            if backlog >= DQ_THRESHOLD && v.dq_count.is_none() {
                v.dq_tstamp = Some(now);
                v.dq_count = Some(0);
            }
            let Some(count) = v.dq_count.as_mut() else { return };
            *count += pkt.size as u64;
            if *count < DQ_THRESHOLD {
                return;
            }
            dtime = now.since(v.dq_tstamp.unwrap_or(now));
            if dtime.0 == 0 {
                return;
            }
            let rate = *count as f64 / dtime.0 as f64;
            v.avg_dq_rate = if v.avg_dq_rate == 0.0 { rate } else { v.avg_dq_rate * 7.0 / 8.0 + rate / 8.0 };
            if backlog < DQ_THRESHOLD {
                v.dq_count = None;
            } else {
                v.dq_count = Some(0);
                v.dq_tstamp = Some(now);
            }
        }
        v.burst_time = SimDuration(v.burst_time.0.saturating_sub(dtime.0));
    }
}

impl QueueDisc for Pie {
    fn enqueue(&mut self, pkt: QueuedPacket, ctx: &mut EnqueueCtx<'_>) -> Verdict {
        self.run_updates(ctx.now);
        if self.fifo.len() >= self.p.limit {
            self.vars.accu_prob = 0.0;
            return Verdict::Dropped(DropCause::Overflow);
        }
        let mut pkt = pkt;
        let admit = if !self.drop_early(self.fifo.bytes(), pkt.size, ctx.rng) {
            true
        } else {
            self.p.ecn && self.vars.prob <= 0.1 && pkt.try_mark_ce()
        };
        if !admit {
            self.vars.accu_prob = 0.0;
            return Verdict::Dropped(DropCause::Early);
        }
        self.fifo.push(pkt, ctx.now);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut DequeueCtx<'_>) -> Option<QueuedPacket> {
        self.run_updates(ctx.now);
        let (p, arrived) = self.fifo.pop()?;
        self.process_dequeue(&p, arrived, ctx.now);
        Some(p)
    }

    fn len_packets(&self) -> u32 {
        self.fifo.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    /// The drop probability.
    fn average(&self) -> Option<f64> {
        Some(self.vars.prob)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Ecn, PacketId};
    use crate::net::queue::QueueConfig;
    use crate::rng::RngStream;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn one_update_by_hand() {
        // A 30 ms delay sample, previous 0, p = 0: alpha, beta are first halved (p <
        // 10%) then quartered 5 times (p < 1%, 0.1%, ..., 0.0001%): 0.125 / 2048 and
        // 1.25 / 2048. delta = (0.125 * (0.030 - 0.015) + 1.25 * 0.030) / 2048
        // = (0.001875 + 0.0375) / 2048 = 1.92261e-5.
        let mut q = Pie::new(&PieParams::default()).unwrap();
        q.vars.qdelay = SimDuration::from_millis(30);
        q.fifo.push(QueuedPacket::new(PacketId(0), 1500), SimTime::ZERO);
        q.calculate_probability();
        assert!((q.vars.prob - 0.039375 / 2048.0).abs() < 1e-12, "{}", q.vars.prob);
        // At p = 0.15 the same error gives 0.125 * 0.015 + 1.25 * 0 (qdelay_old is now
        // 30 ms) = 0.001875 unscaled.
        q.vars.prob = 0.15;
        q.calculate_probability();
        assert!((q.vars.prob - (0.15 + 0.001875)).abs() < 1e-12, "{}", q.vars.prob);
        // A step above 2% at p >= 10% is capped at 2%; 300 ms (> 250 ms) adds 2% more.
        q.vars.qdelay = SimDuration::from_millis(300);
        let before = q.vars.prob;
        q.calculate_probability();
        assert!((q.vars.prob - (before + 0.04)).abs() < 1e-12, "{}", q.vars.prob);
    }

    #[test]
    fn idle_decay_and_restart() {
        // p = 0.5 on an empty queue: each update has qdelay = qdelay_old = 0, so
        // delta = -0.125 * 0.015 = -0.001875 then p -= p/64.
        let mut q = Pie::new(&PieParams::default()).unwrap();
        q.vars.prob = 0.5;
        q.vars.burst_time = SimDuration::ZERO;
        q.run_updates(ms(15));
        let p1 = (0.5 - 0.001875) * (1.0 - 1.0 / 64.0);
        assert!((q.vars.prob - p1).abs() < 1e-12);
        // After a long idle period p has decayed to 0 and the burst allowance is back.
        q.run_updates(ms(60_000));
        assert_eq!(q.vars.prob, 0.0);
        assert_eq!(q.vars.burst_time, MAX_BURST);
        assert_eq!(q.next_update, ms(60_015));
    }

    #[test]
    fn burst_allowance_then_early_drops_and_ecn_marks() {
        // Arrivals during the burst allowance are never dropped early.
        let mut q = Pie::new(&PieParams { ecn: true, ..Default::default() }).unwrap();
        let mut rng = RngStream::new(1, "pie");
        let mut dropped = Vec::new();
        q.vars.prob = 0.05;
        q.vars.qdelay = SimDuration::from_millis(40);
        q.next_update = SimTime(u64::MAX);
        for i in 0..20 {
            let mut ctx = EnqueueCtx { now: ms(1), in_service_bytes: None, rng: &mut rng, flow_key: 0, dropped: &mut dropped };
            assert_eq!(q.enqueue(QueuedPacket::new(PacketId(i), 1500), &mut ctx), Verdict::Enqueued);
        }
        // With the allowance spent, p = 5% <= 10%: an arrival the controller picks is
        // marked if ECT, dropped if not. De-randomisation: after a pick the sum
        // restarts at 0; arrivals 1..16 bring it to 0.80 (no pick), from the 17th each
        // arrival is picked with p = 5%: one pick per 16 + 1/0.05 = 36 arrivals on
        // average, so 2000 arrivals give about 55.6 picks (renewal count sd about 4),
        // half of them on ECT packets (every other arrival).
        q.vars.burst_time = SimDuration::ZERO;
        let (mut marks, mut drops) = (0, 0);
        for i in 0..2000u32 {
            let mut p = QueuedPacket::new(PacketId(100 + i), 1500);
            p.set_ecn(if i % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct });
            let mut ctx = EnqueueCtx { now: ms(2), in_service_bytes: None, rng: &mut rng, flow_key: 0, dropped: &mut dropped };
            match q.enqueue(p, &mut ctx) {
                Verdict::Enqueued => {
                    if q.fifo.q.back().unwrap().0.ecn() == Ecn::Ce {
                        marks += 1;
                    }
                    q.fifo.pop(); // keep the backlog at 20 packets
                }
                Verdict::Dropped(c) => {
                    assert_eq!((c, p.ecn()), (DropCause::Early, Ecn::NotEct));
                    drops += 1;
                }
            }
        }
        assert!((40..72).contains(&(marks + drops)), "{marks} marks + {drops} drops");
        assert!((12..45).contains(&drops) && (12..45).contains(&marks), "{marks} marks, {drops} drops");
    }

    #[test]
    fn serde_defaults_and_validation() {
        let cfg: QueueConfig = serde_json::from_str(r#"{"kind": "pie"}"#).unwrap();
        let QueueConfig::Pie(p) = &cfg else { panic!() };
        assert_eq!(*p, PieParams::default());
        assert_eq!((p.target, p.tupdate, p.alpha, p.beta), (SimDuration::from_millis(15), SimDuration::from_millis(15), 0.125, 1.25));
        assert!(cfg.build(0).is_ok());
        let e = Pie::new(&PieParams { alpha: 3.0, ..Default::default() }).err().unwrap();
        assert!(e.contains("pie.alpha"), "{e}");
    }
}
