//! Random Early Detection (RED) with ns-2 semantics.
//!
//! Reference: S. Floyd and V. Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993; and the behaviour of ns-2's
//! `Queue/RED` (`queue/red.cc`, ns-2.35, with the defaults of `ns-default.tcl`).
//! Seed 000 uses it as the "EDGE RED" bottleneck (w_q 0.002, max_p 0.1, thresholds
//! 3/9 packets, byte mode, mean_pktsize 1500).
//!
//! What happens on each arrival (in this order, as in ns-2's `REDQueue::enque`):
//!
//! 1. Idle correction. If the queue went idle (a `dequeue` found it empty) the
//!    average decays as if `m` empty-queue arrivals had happened:
//!    `avg *= (1 - w_q)^m`, `m = idle_seconds * link_rate_bps / (8 * idle_pktsize)`.
//! 2. EWMA: `avg = (1 - w_q) * avg + w_q * q`, with `q` the waiting queue (the packet
//!    in service excluded) before this arrival, in packets, or in bytes when
//!    `queue_in_bytes`.
//! 3. `count += 1`, `count_bytes += size`.
//! 4. If `avg >= min_th` and the instantaneous queue `q > 1` (packets, or bytes when
//!    `queue_in_bytes`):
//!    - `avg >= max_th` (not gentle) or `avg >= 2 max_th` (gentle): forced drop;
//!    - else, on the first such arrival after the average was below `min_th` (ns-2's
//!      `old_ == 0`): no drop, `count = 1`, `count_bytes = size`;
//!    - else an early drop with probability `p_a` (one `uniform()` draw), see below.
//!
//!    Otherwise (below `min_th`, or `q <= 1`) nothing is dropped and the "first
//!    arrival" flag is re-armed.
//! 5. Physical limit: drop (`Overflow`) if occupancy `>= limit`, occupancy being the
//!    waiting packets (or bytes), plus the packet in service when
//!    `count_in_service`. This is ns-2's `qlen >= qlim` test, so with a byte limit
//!    the buffer may overshoot by less than one packet. It overrides an early drop.
//! 6. Any drop resets `count = count_bytes = 0` (ns-2 without `ns1_compat_`).
//!
//! Drop probability (`calculate_p_new` then `modify_p`):
//! - `p_b = max_p (avg - min_th) / (max_th - min_th)` for `min_th <= avg < max_th`;
//!   gentle, `max_th <= avg < 2 max_th`: `p_b = max_p + (1 - max_p)(avg - max_th) / max_th`.
//! - `c = count`, or `floor(count_bytes / mean_pktsize)` in byte mode (integer
//!   division, as ns-2).
//! - without `wait`: `p_a = p_b / (1 - c p_b)` if `c p_b < 1`, else 1;
//! - with `wait`: `p_a = 0` if `c p_b < 1`, `p_b / (2 - c p_b)` if `c p_b < 2`, else 1;
//! - byte mode and `p_a < 1`: `p_a *= size / mean_pktsize`; finally `p_a = min(p_a, 1)`.
//!
//! The "count" of the paper starts at -1 below `min_th` and makes the first arrival
//! above `min_th` droppable with `p_b`. ns-2 instead exempts that first arrival and
//! sets `count = 1`, so its count is the paper's plus one until the first drop; after
//! a drop both agree. This follows ns-2.
//!
//! Parameters (serde name, then the ns-2 name and default in parentheses):
//! - `limit` (`limit_`, 50 packets): physical buffer, packets or bytes; required.
//! - `count_in_service` (none; ns-2 excludes it): default false.
//! - `bytes` (`bytes_`, true): byte mode, p_a scaled by size / mean_pktsize.
//! - `queue_in_bytes` (`queue_in_bytes_`, true): avg and thresholds in bytes.
//! - `mean_pktsize` (`mean_pktsize_`, 500 bytes).
//! - `idle_pktsize` (`idle_pktsize_`, 100 bytes): default here: `mean_pktsize`.
//! - `q_weight` (`q_weight_`, -1 = automatic): default here 0.002.
//! - `min_th` (`thresh_`, 0 = automatic: max(5, targetdelay_ * ptc / 2) packets with
//!   targetdelay_ = 5 ms): default automatic, same rule.
//! - `max_th` (`maxthresh_`, 0 = automatic: 3 min_th): default automatic, same rule.
//! - `max_p` (`1 / linterm_`, linterm_ 10, so 0.1).
//! - `gentle` (`gentle_`, true), `wait` (`wait_`, true).
//! - `link_rate_bps` (the link's bandwidth): filled in by the link.
//! - `idle_integer_m` (none): default false; true truncates m as ns-2 does.
//!
//! Deviations from ns-2:
//! - Idle decay uses a fractional `m` and `idle_pktsize` (falling back on
//!   `mean_pktsize`). ns-2 uses `m = int(ptc * idle)` with `ptc` from `mean_pktsize`,
//!   and reads `idle_pktsize_` only when `cautious_ = 3`. Leaving `idle_pktsize` unset
//!   and setting `idle_integer_m` gives ns-2's default idle rule.
//! - An early drop happens when `u < p_a` with `u` in [0, 1); ns-2 tests `u <= p_a`,
//!   which differs only when `u` is exactly `p_a`.
//! - Above the forced threshold every arrival is a `Forced` drop. ns-2.35 with its
//!   default `use_mark_p_ = true` sends these through `drop_early` with p = 1, which
//!   drops nearly always but counts them as unforced.
//! - ECN (`ecn`, RFC 3168 §7): an ECN-capable packet that would be an early or a forced
//!   drop is marked CE and queued instead, and the count restarts as after a drop
//!   (Linux `red ... ecn` without `harddrop`; ns-2's `setbit_` marks early drops
//!   only and always drops forced ones). Overflow always drops. With `q_weight` 1 and
//!   thresholds K and K + 0.5 packets (not gentle) this is the step marking at an
//!   instantaneous queue above K packets that DCTCP expects (RFC 8257 §3.1).
//! - Not modelled: adaptive RED (`adaptive_`,
//!   `feng_adaptive_`), `cautious_`, `drop_front_` / `drop_rand_` (the arriving packet
//!   is always the victim, as ns-2's default `drop_tail_`), and the automatic
//!   `q_weight_` values (-1 needs the link delay).
//! - Idle begins the first time `dequeue` finds the queue empty. Further empty
//!   dequeues do not restart it. ns-2 restarts it on every empty `deque()`, but its
//!   link calls `deque()` only once per idle period.

use super::{DequeueCtx, DropCause, EnqueueCtx, Fifo, Limit, QueueDisc, QueuedPacket, Verdict};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// ns-2's `targetdelay_` (seconds), used by the automatic `min_th`.
const TARGET_DELAY_S: f64 = 0.005;

fn yes() -> bool {
    true
}
fn default_mean_pktsize() -> u32 {
    500
}
fn default_q_weight() -> f64 {
    0.002
}
fn default_max_p() -> f64 {
    0.1
}

/// RED parameters as scenario files give them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    /// Physical buffer in packets or bytes (ns-2 `limit_`, default 50 packets). Drops
    /// there are `Overflow`. Required.
    pub limit: Limit,
    /// Whether the packet in service counts towards `limit` (not towards the average).
    /// Default false (ns-2 counts only waiting packets).
    #[serde(default)]
    pub count_in_service: bool,
    /// Byte mode (ns-2 `bytes_`, default true): the early-drop probability is scaled by
    /// packet size / `mean_pktsize`, and `count` is measured in mean-sized packets.
    #[serde(default = "yes")]
    pub bytes: bool,
    /// Measure the queue, the average and the thresholds in bytes (ns-2
    /// `queue_in_bytes_`, default true). Thresholds are then `min_th * mean_pktsize`
    /// and `max_th * mean_pktsize` bytes.
    #[serde(default = "yes")]
    pub queue_in_bytes: bool,
    /// Mean packet size in bytes (ns-2 `mean_pktsize_`, default 500). Scenarios set 1500.
    #[serde(default = "default_mean_pktsize")]
    pub mean_pktsize: u32,
    /// Packet size in bytes for the idle decay rate (ns-2 `idle_pktsize_`, default
    /// 100, used by ns-2 only when `cautious_ = 3`). Unset: `mean_pktsize`, which is
    /// ns-2's default behaviour.
    #[serde(default)]
    pub idle_pktsize: Option<u32>,
    /// EWMA weight w_q in (0, 1] (ns-2 `q_weight_`, default -1 = automatic from the
    /// link delay, not supported). Default here 0.002 (the paper's and ns-2's before 2002).
    #[serde(default = "default_q_weight")]
    pub q_weight: f64,
    /// Minimum threshold in packets (ns-2 `thresh_`, default 0 = automatic). Unset:
    /// ns-2's automatic value max(5, 0.005 s * ptc / 2), ptc = link_rate_bps / (8 mean_pktsize).
    #[serde(default)]
    pub min_th: Option<f64>,
    /// Maximum threshold in packets (ns-2 `maxthresh_`, default 0 = automatic).
    /// Unset: 3 * min_th, as ns-2.
    #[serde(default)]
    pub max_th: Option<f64>,
    /// Early-drop probability at max_th, in (0, 1]. ns-2 gives it as `linterm_` =
    /// 1 / max_p (default linterm_ 10, so max_p 0.1).
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// Gentle RED (ns-2 `gentle_`, default true): p_b rises linearly from max_p to 1
    /// between max_th and 2 max_th, and forced drops start at 2 max_th.
    #[serde(default = "yes")]
    pub gentle: bool,
    /// Wait between drops (ns-2 `wait_`, default true): p_a = 0 while count * p_b < 1,
    /// p_b / (2 - count * p_b) while < 2, then 1.
    #[serde(default = "yes")]
    pub wait: bool,
    /// Rate of the link this queue feeds, in bit/s (ns-2 reads the link bandwidth).
    /// The link fills it in; it sets the idle decay and the automatic min_th. Must be
    /// positive when the queue is built.
    #[serde(default)]
    pub link_rate_bps: u64,
    /// Truncate the idle count m to an integer, as ns-2 does (`int(ptc * idle)`).
    /// Default false (fractional m). No ns-2 equivalent.
    #[serde(default)]
    pub idle_integer_m: bool,
    /// Mark ECN-capable packets CE instead of early and forced drops (RFC 3168 §7).
    /// Default false.
    #[serde(default)]
    pub ecn: bool,
}

impl RedParams {
    /// The same parameters with the link rate filled in (for the link to call).
    pub fn with_link_rate(mut self, bps: u64) -> Self {
        self.link_rate_bps = bps;
        self
    }
}

/// A RED queue (see the module documentation).
pub struct Red {
    fifo: Fifo,
    limit: Limit,
    count_in_service: bool,
    bytes: bool,
    queue_in_bytes: bool,
    mean_pktsize: u32,
    q_w: f64,
    /// Thresholds in the queue's unit (bytes when `queue_in_bytes`).
    th_min: f64,
    th_max: f64,
    max_p: f64,
    gentle: bool,
    wait: bool,
    ecn: bool,
    /// Empty-queue "arrivals" per second of idle time.
    idle_rate: f64,
    idle_integer_m: bool,
    avg: f64,
    count: u64,
    count_bytes: u64,
    /// ns-2 `old_`: an arrival has already been above min_th with a nonempty queue.
    old: bool,
    idle: bool,
    idle_since: SimTime,
    /// Last p_a computed (ns-2 `v_prob`), 0 outside the early-drop region.
    last_p: f64,
}

impl Red {
    pub fn new(p: RedParams) -> Result<Red, String> {
        match p.limit {
            Limit::Packets(0) | Limit::Bytes(0) => {
                return Err("red.limit must be at least 1".into());
            }
            _ => {}
        }
        if p.link_rate_bps == 0 {
            return Err("red.link_rate_bps must be positive (the link fills it in)".into());
        }
        if p.mean_pktsize == 0 {
            return Err("red.mean_pktsize must be at least 1 byte".into());
        }
        let idle_pktsize = p.idle_pktsize.unwrap_or(p.mean_pktsize);
        if idle_pktsize == 0 {
            return Err("red.idle_pktsize must be at least 1 byte".into());
        }
        if !(p.q_weight > 0.0 && p.q_weight <= 1.0) {
            return Err(format!(
                "red.q_weight must be in (0, 1], got {}",
                p.q_weight
            ));
        }
        if !(p.max_p > 0.0 && p.max_p <= 1.0) {
            return Err(format!(
                "red.max_p must be in (0, 1] (max_p = 1/linterm), got {}",
                p.max_p
            ));
        }
        let ptc = p.link_rate_bps as f64 / (8.0 * p.mean_pktsize as f64);
        let min_th = p
            .min_th
            .unwrap_or_else(|| (TARGET_DELAY_S * ptc / 2.0).max(5.0));
        if !(min_th.is_finite() && min_th >= 0.0) {
            return Err(format!(
                "red.min_th must be a finite number of packets >= 0, got {min_th}"
            ));
        }
        let max_th = p.max_th.unwrap_or(3.0 * min_th);
        if !max_th.is_finite() {
            return Err(format!("red.max_th must be finite, got {max_th}"));
        }
        if max_th <= min_th {
            return Err(format!(
                "red.max_th must exceed red.min_th (got max_th {max_th}, min_th {min_th})"
            ));
        }
        let unit = if p.queue_in_bytes {
            p.mean_pktsize as f64
        } else {
            1.0
        };
        Ok(Red {
            fifo: Fifo::default(),
            limit: p.limit,
            count_in_service: p.count_in_service,
            bytes: p.bytes,
            queue_in_bytes: p.queue_in_bytes,
            mean_pktsize: p.mean_pktsize,
            q_w: p.q_weight,
            th_min: min_th * unit,
            th_max: max_th * unit,
            max_p: p.max_p,
            gentle: p.gentle,
            wait: p.wait,
            ecn: p.ecn,
            idle_rate: p.link_rate_bps as f64 / (8.0 * idle_pktsize as f64),
            idle_integer_m: p.idle_integer_m,
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            idle: true,
            idle_since: SimTime::ZERO,
            last_p: 0.0,
        })
    }

    /// The thresholds in the queue's unit (bytes when `queue_in_bytes`).
    pub fn thresholds(&self) -> (f64, f64) {
        (self.th_min, self.th_max)
    }

    /// The last early-drop probability p_a computed (0 outside the early region).
    pub fn last_drop_probability(&self) -> f64 {
        self.last_p
    }

    /// Waiting queue in the averaging unit.
    fn q_now(&self) -> f64 {
        if self.queue_in_bytes {
            self.fifo.bytes() as f64
        } else {
            self.fifo.len() as f64
        }
    }

    /// Initial drop probability p_b for an average `avg` (ns-2 `calculate_p_new`).
    fn p_b(&self, avg: f64) -> f64 {
        let p = if avg >= self.th_max {
            if self.gentle {
                self.max_p + (1.0 - self.max_p) * (avg - self.th_max) / self.th_max
            } else {
                1.0
            }
        } else {
            self.max_p * (avg - self.th_min) / (self.th_max - self.th_min)
        };
        p.clamp(0.0, 1.0)
    }

    /// Actual drop probability p_a from p_b, the count and the packet size (ns-2
    /// `modify_p`).
    fn p_a(&self, p_b: f64, size: u32) -> f64 {
        let c = if self.bytes {
            (self.count_bytes / self.mean_pktsize as u64) as f64
        } else {
            self.count as f64
        };
        let cp = c * p_b;
        let mut p = if self.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        if self.bytes && p < 1.0 {
            p = p * size as f64 / self.mean_pktsize as f64;
        }
        p.min(1.0)
    }

    fn over_limit(&self, in_service: Option<u32>) -> bool {
        let in_service = if self.count_in_service {
            in_service
        } else {
            None
        };
        match self.limit {
            Limit::Packets(n) => self.fifo.len() as u64 + in_service.is_some() as u64 >= n as u64,
            Limit::Bytes(b) => self.fifo.bytes() + in_service.unwrap_or(0) as u64 >= b,
        }
    }
}

impl QueueDisc for Red {
    fn enqueue(&mut self, mut pkt: QueuedPacket, ctx: &mut EnqueueCtx<'_>) -> Verdict {
        // 1-2: idle correction and EWMA.
        let mut m = 0.0;
        if self.idle {
            self.idle = false;
            m = ctx.now.since(self.idle_since).as_secs_f64() * self.idle_rate;
            if self.idle_integer_m {
                m = m.floor();
            }
        }
        let q = self.q_now();
        if m > 0.0 {
            self.avg *= (1.0 - self.q_w).powf(m);
        }
        self.avg = (1.0 - self.q_w) * self.avg + self.q_w * q;

        // 3-4: count and the RED decision.
        self.count += 1;
        self.count_bytes += pkt.size as u64;
        let mut cause = None;
        if self.avg >= self.th_min && q > 1.0 {
            let forced_at = if self.gentle {
                2.0 * self.th_max
            } else {
                self.th_max
            };
            if self.avg >= forced_at {
                cause = Some(DropCause::Forced);
            } else if !self.old {
                self.old = true;
                self.count = 1;
                self.count_bytes = pkt.size as u64;
            } else {
                let p_a = self.p_a(self.p_b(self.avg), pkt.size);
                self.last_p = p_a;
                if ctx.rng.uniform() < p_a {
                    cause = Some(DropCause::Early);
                }
            }
        } else {
            self.last_p = 0.0;
            self.old = false;
        }

        // 5: the physical buffer.
        if self.over_limit(ctx.in_service_bytes) {
            cause = Some(DropCause::Overflow);
        }

        // ECN: mark instead of an early or forced drop; the count restarts as on a drop.
        if self.ecn && matches!(cause, Some(DropCause::Early | DropCause::Forced)) && pkt.try_mark_ce() {
            self.count = 0;
            self.count_bytes = 0;
            cause = None;
        }
        // 6: any drop restarts the count.
        match cause {
            Some(c) => {
                self.count = 0;
                self.count_bytes = 0;
                Verdict::Dropped(c)
            }
            None => {
                self.fifo.push(pkt);
                Verdict::Enqueued
            }
        }
    }

    fn dequeue(&mut self, ctx: &mut DequeueCtx<'_>) -> Option<QueuedPacket> {
        let now = ctx.now;
        let p = self.fifo.pop();
        if p.is_some() {
            self.idle = false;
        } else if !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
        p
    }

    fn len_packets(&self) -> u32 {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    /// The average queue, in bytes when `queue_in_bytes`, else in packets.
    fn average(&self) -> Option<f64> {
        Some(self.avg)
    }

    fn last_enqueued(&self) -> Option<QueuedPacket> {
        self.fifo.back().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Ecn, PacketId};
    use crate::net::queue::QueueConfig;
    use crate::rng::RngStream;

    /// Packet-mode parameters: w_q 0.002, thresholds 5/15 packets, max_p 0.1, 2 Mbit/s.
    fn pkt_params() -> RedParams {
        RedParams {
            limit: Limit::Packets(1000),
            count_in_service: false,
            bytes: false,
            queue_in_bytes: false,
            mean_pktsize: 1500,
            idle_pktsize: Some(1500),
            q_weight: 0.002,
            min_th: Some(5.0),
            max_th: Some(15.0),
            max_p: 0.1,
            gentle: false,
            wait: false,
            link_rate_bps: 2_000_000,
            idle_integer_m: false,
            ecn: false,
        }
    }

    /// Seed 000's EDGE RED: w_q 0.002, max_p 0.1, thresholds 3/9 packets, byte mode,
    /// queue in bytes, mean_pktsize 1500 (other fields: ns-2 defaults).
    fn edge_params() -> RedParams {
        RedParams {
            limit: Limit::Packets(50),
            bytes: true,
            queue_in_bytes: true,
            mean_pktsize: 1500,
            idle_pktsize: Some(1500),
            q_weight: 0.002,
            min_th: Some(3.0),
            max_th: Some(9.0),
            max_p: 0.1,
            gentle: true,
            wait: true,
            ..pkt_params()
        }
    }

    fn offer(q: &mut Red, size: u32, now: SimTime, rng: &mut RngStream) -> Verdict {
        let mut dropped = Vec::new();
        let mut ctx = EnqueueCtx {
            now,
            in_service_bytes: None,
            rng,
            flow_key: 0,
            dropped: &mut dropped,
        };
        q.enqueue(
            QueuedPacket::new(PacketId(0), size),
            &mut ctx,
        )
    }

    /// Fills the queue with `n` packets of `size` without touching avg or count.
    fn prefill(q: &mut Red, n: u32, size: u32) {
        for _ in 0..n {
            q.fifo.push(QueuedPacket::new(PacketId(0), size));
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn ewma_after_a_few_arrivals() {
        // All at t = 0 (idle since 0, so m = 0). The queue grows 0, 1, 2, 3 packets.
        // avg1 = 0.998*0 + 0.002*0 = 0
        // avg2 = 0.998*0 + 0.002*1 = 0.002
        // avg3 = 0.998*0.002 + 0.002*2 = 0.001996 + 0.004 = 0.005996
        // avg4 = 0.998*0.005996 + 0.002*3 = 0.005984008 + 0.006 = 0.011984008
        let mut q = Red::new(pkt_params()).unwrap();
        let mut rng = RngStream::new(1, "red");
        let want = [0.0, 0.002, 0.005996, 0.011984008];
        for w in want {
            assert_eq!(
                offer(&mut q, 1500, SimTime::ZERO, &mut rng),
                Verdict::Enqueued
            );
            assert!(
                close(q.average().unwrap(), w, 1e-15),
                "{} vs {w}",
                q.average().unwrap()
            );
        }
    }

    #[test]
    fn idle_decay() {
        // w_q 0.002, 2 Mbit/s, idle_pktsize 1500: 2e6 / (8*1500) = 166.67 packets/s.
        // 10 ms idle: m = 0.01 * 166.67 = 1.6667.
        // avg = 5 * 0.998^1.6667 (idle) then * 0.998 + 0.002 * 0 (the arrival, q = 0):
        // 0.998^1.6667 = exp(1.6667 * ln 0.998) = exp(-0.0033367) = 0.9966689
        // -> 5 * 0.9966689 * 0.998 = 4.973378.
        for integer in [false, true] {
            let mut q = Red::new(RedParams {
                idle_integer_m: integer,
                ..pkt_params()
            })
            .unwrap();
            let mut rng = RngStream::new(1, "red");
            offer(&mut q, 1500, SimTime::ZERO, &mut rng);
            assert!(q.dequeue(&mut DequeueCtx { now: SimTime::ZERO, dropped: &mut Vec::new() }).is_some());
            q.avg = 5.0;
            // The transmitter goes idle at t = 1 ms (a second empty poll does not
            // restart the idle period).
            assert!(q.dequeue(&mut DequeueCtx { now: SimTime(1_000_000), dropped: &mut Vec::new() }).is_none());
            assert!(q.dequeue(&mut DequeueCtx { now: SimTime(5_000_000), dropped: &mut Vec::new() }).is_none());
            offer(&mut q, 1500, SimTime(11_000_000), &mut rng);
            let got = q.average().unwrap();
            if integer {
                // ns-2: m = int(1.6667) = 1 -> 5 * 0.998^2 = 4.98002.
                assert!(close(got, 4.98002, 1e-9), "{got}");
            } else {
                let exact = 5.0 * 0.998f64.powf(0.01 * 2e6 / 12_000.0) * 0.998;
                assert!(close(got, exact, 1e-12));
                assert!(close(got, 4.973378, 1e-6), "{got}");
            }
        }
    }

    #[test]
    fn p_b_halfway_is_half_max_p() {
        // Thresholds 5/15 packets, avg 10: p_b = 0.1 * (10 - 5) / (15 - 5) = 0.05.
        let q = Red::new(pkt_params()).unwrap();
        assert!(close(q.p_b(10.0), 0.05, 1e-15));
        assert_eq!(q.p_b(5.0), 0.0);
        // Queue in bytes, mean 1500: thresholds 7500/22500 B; halfway 15000 B -> 0.05.
        let qb = Red::new(RedParams {
            queue_in_bytes: true,
            ..pkt_params()
        })
        .unwrap();
        assert_eq!(qb.thresholds(), (7500.0, 22500.0));
        assert!(close(qb.p_b(15000.0), 0.05, 1e-15));
    }

    #[test]
    fn p_a_with_count_5() {
        // p_b = 0.05, count 5.
        // No wait: p_a = 0.05 / (1 - 5*0.05) = 0.05 / 0.75 = 0.0666667.
        let mut q = Red::new(pkt_params()).unwrap();
        q.count = 5;
        assert!(close(q.p_a(0.05, 1500), 0.05 / 0.75, 1e-15));
        // count 20: 20*0.05 = 1 -> certain drop.
        q.count = 20;
        assert_eq!(q.p_a(0.05, 1500), 1.0);
        // Wait: count*p_b = 0.25 < 1 -> 0; count 25: 1.25 -> 0.05 / (2 - 1.25) = 0.0666667;
        // count 40: 2.0 -> 1.
        let mut w = Red::new(RedParams {
            wait: true,
            ..pkt_params()
        })
        .unwrap();
        w.count = 5;
        assert_eq!(w.p_a(0.05, 1500), 0.0);
        w.count = 25;
        assert!(close(w.p_a(0.05, 1500), 0.05 / 0.75, 1e-15));
        w.count = 40;
        assert_eq!(w.p_a(0.05, 1500), 1.0);
    }

    #[test]
    fn byte_mode_scales_by_size() {
        // Byte mode, mean 1500, no wait. count_bytes 7600 -> c = 7600 / 1500 = 5
        // (integer division). p_a(1500 B) = 0.05 / 0.75 = 0.0666667;
        // p_a(186 B) = 0.0666667 * 186 / 1500 = 0.0082667.
        let mut q = Red::new(RedParams {
            bytes: true,
            ..pkt_params()
        })
        .unwrap();
        q.count_bytes = 7600;
        q.count = 99; // ignored in byte mode
        let full = q.p_a(0.05, 1500);
        assert!(close(full, 0.0666667, 1e-6));
        assert!(close(q.p_a(0.05, 186), 0.0082667, 1e-6));
        assert!(close(q.p_a(0.05, 186), full * 186.0 / 1500.0, 1e-15));
        // A certain drop (c p_b >= 1) is not scaled down: 20 * 0.05 = 1.
        q.count_bytes = 30_000;
        assert_eq!(q.p_a(0.05, 186), 1.0);
    }

    #[test]
    fn forced_drop_above_max_th() {
        let mut q = Red::new(pkt_params()).unwrap();
        let mut rng = RngStream::new(1, "red");
        prefill(&mut q, 20, 1500);
        q.avg = 15.5; // >= max_th 15, not gentle
        q.count = 7;
        assert_eq!(
            offer(&mut q, 1500, SimTime::ZERO, &mut rng),
            Verdict::Dropped(DropCause::Forced)
        );
        assert_eq!(q.count, 0);
        assert_eq!(q.len_packets(), 20);
        // No forced drop when the instantaneous queue holds at most one packet (ns-2's
        // qlen > 1): avg stays high, but the arrival is admitted.
        let mut e = Red::new(pkt_params()).unwrap();
        prefill(&mut e, 1, 1500);
        e.avg = 30.0;
        assert_eq!(
            offer(&mut e, 1500, SimTime::ZERO, &mut rng),
            Verdict::Enqueued
        );
    }

    #[test]
    fn gentle_region() {
        // Gentle, thresholds 5/15, max_p 0.1. avg 22.5 (halfway between 15 and 30):
        // p_b = 0.1 + 0.9 * (22.5 - 15) / 15 = 0.55. At 15: 0.1; at 30: 1.
        let mut q = Red::new(RedParams {
            gentle: true,
            ..pkt_params()
        })
        .unwrap();
        assert!(close(q.p_b(22.5), 0.55, 1e-12));
        assert!(close(q.p_b(15.0), 0.1, 1e-12));
        assert!(close(q.p_b(30.0), 1.0, 1e-12));
        // Between max_th and 2 max_th drops are early (random); at 2 max_th forced.
        let mut rng = RngStream::new(1, "red");
        prefill(&mut q, 40, 1500);
        q.q_w = 0.0; // freeze the average
        q.avg = 22.5;
        q.old = true;
        let mut early = 0;
        for _ in 0..100 {
            match offer(&mut q, 1500, SimTime::ZERO, &mut rng) {
                Verdict::Dropped(DropCause::Early) => early += 1,
                Verdict::Enqueued => {
                    q.fifo.pop();
                }
                v => panic!("{v:?}"),
            }
        }
        // Without wait, count >= 1 at every decision, so
        // p_a = min(1, 0.55 / (1 - 0.55)) = 1: every arrival is dropped (as Early).
        assert_eq!(early, 100);
        q.avg = 30.0;
        assert_eq!(
            offer(&mut q, 1500, SimTime::ZERO, &mut rng),
            Verdict::Dropped(DropCause::Forced)
        );
    }

    #[test]
    fn first_arrival_above_min_th_is_exempt() {
        // ns-2's old_ flag: the first arrival with avg >= min_th and q > 1 is never
        // dropped and sets count = 1; falling below min_th re-arms it.
        let mut q = Red::new(RedParams {
            max_p: 1.0,
            ..pkt_params()
        })
        .unwrap();
        let mut rng = RngStream::new(1, "red");
        prefill(&mut q, 20, 1500);
        q.q_w = 0.0;
        q.avg = 14.9; // p_b = 0.99
        assert_eq!(
            offer(&mut q, 1500, SimTime::ZERO, &mut rng),
            Verdict::Enqueued
        );
        assert!(q.old);
        assert_eq!(q.count, 1);
        // Now count 2: p_a = 1 (2 * 0.99 >= 1).
        assert_eq!(
            offer(&mut q, 1500, SimTime::ZERO, &mut rng),
            Verdict::Dropped(DropCause::Early)
        );
        q.avg = 1.0;
        assert_eq!(
            offer(&mut q, 1500, SimTime::ZERO, &mut rng),
            Verdict::Enqueued
        );
        assert!(!q.old);
    }

    #[test]
    fn physical_limit_overflows() {
        let mut q = Red::new(RedParams {
            limit: Limit::Packets(3),
            ..pkt_params()
        })
        .unwrap();
        let mut rng = RngStream::new(1, "red");
        for _ in 0..3 {
            assert_eq!(
                offer(&mut q, 1500, SimTime::ZERO, &mut rng),
                Verdict::Enqueued
            );
        }
        assert_eq!(
            offer(&mut q, 1500, SimTime::ZERO, &mut rng),
            Verdict::Dropped(DropCause::Overflow)
        );
        // Counting the packet in service leaves room for limit - 1 waiting.
        let mut c = Red::new(RedParams {
            limit: Limit::Packets(3),
            count_in_service: true,
            ..pkt_params()
        })
        .unwrap();
        let mut dropped = Vec::new();
        let mut ctx = EnqueueCtx {
            now: SimTime::ZERO,
            in_service_bytes: Some(1500),
            rng: &mut rng,
            flow_key: 0,
            dropped: &mut dropped,
        };
        let pkt = QueuedPacket::new(PacketId(0), 1500);
        assert_eq!(c.enqueue(pkt, &mut ctx), Verdict::Enqueued);
        assert_eq!(c.enqueue(pkt, &mut ctx), Verdict::Enqueued);
        assert_eq!(
            c.enqueue(pkt, &mut ctx),
            Verdict::Dropped(DropCause::Overflow)
        );
        // Byte limit, ns-2's rule (drop when occupancy >= limit): with 3000 B the
        // arrivals are admitted while fewer than 3000 B wait (1500, 1499, 1), then
        // the next one is dropped.
        let mut b = Red::new(RedParams {
            limit: Limit::Bytes(3000),
            ..pkt_params()
        })
        .unwrap();
        assert_eq!(
            offer(&mut b, 1500, SimTime::ZERO, &mut rng),
            Verdict::Enqueued
        );
        assert_eq!(
            offer(&mut b, 1499, SimTime::ZERO, &mut rng),
            Verdict::Enqueued
        );
        assert_eq!(offer(&mut b, 1, SimTime::ZERO, &mut rng), Verdict::Enqueued);
        assert_eq!(
            offer(&mut b, 1, SimTime::ZERO, &mut rng),
            Verdict::Dropped(DropCause::Overflow)
        );
    }

    /// Offers `n` packets of `size` at a frozen average and a constant queue; returns
    /// (early drops, sum of the p_a used, sum of p_a (1 - p_a)).
    fn run_frozen(q: &mut Red, n: u32, size: u32, rng: &mut RngStream) -> (u32, f64, f64) {
        let (mut drops, mut sum_p, mut var) = (0, 0.0, 0.0);
        for _ in 0..n {
            let v = offer(q, size, SimTime::ZERO, rng);
            let p = q.last_drop_probability();
            sum_p += p;
            var += p * (1.0 - p);
            match v {
                Verdict::Dropped(DropCause::Early) => drops += 1,
                Verdict::Enqueued => {
                    q.fifo.pop();
                }
                v => panic!("{v:?}"),
            }
        }
        (drops, sum_p, var)
    }

    #[test]
    fn early_drop_fraction_matches_p_a() {
        // Frozen avg 10 (p_b 0.05), 10 packets waiting, 200000 arrivals.
        // Each arrival is dropped with the p_a computed for it, so drops - sum(p_a)
        // is a martingale with variance sum p_a (1 - p_a): tolerance 5 sd.
        // Without wait, ns-2's count makes the gaps between drops uniform on
        // 1..(1/p_b - 1) = 1..19, mean 10 arrivals, so the fraction is 0.1
        // (sd of the fraction about 0.1 * sqrt(var(gap)=30) / 10 / sqrt(20000) ~ 0.0004;
        // tolerance 0.003).
        for wait in [false, true] {
            let mut q = Red::new(RedParams {
                wait,
                ..pkt_params()
            })
            .unwrap();
            let mut rng = RngStream::new(42, "red:stat");
            prefill(&mut q, 10, 1500);
            q.q_w = 0.0;
            q.avg = 10.0;
            let n = 200_000;
            let (drops, sum_p, var) = run_frozen(&mut q, n, 1500, &mut rng);
            let sd = var.sqrt();
            assert!(
                (drops as f64 - sum_p).abs() < 5.0 * sd,
                "wait={wait}: drops {drops} vs expected {sum_p:.1} (sd {sd:.1})"
            );
            let frac = drops as f64 / n as f64;
            if !wait {
                assert!(close(frac, 0.1, 0.003), "{frac}");
            } else {
                // With wait, p_a = 0 for count < 20 and 0.05 / (2 - 0.05 count)
                // after, so the gap is uniform on 20..39 (mean 29.5): fraction
                // 1/29.5 = 0.0339 (sd ~ 0.0339 * sqrt(33.25) / 29.5 / sqrt(6780)
                // ~ 0.00008; tolerance 0.002).
                assert!(close(frac, 1.0 / 29.5, 0.002), "{frac}");
            }
        }
    }

    #[test]
    fn edge_red_of_seed_000() {
        // EDGE RED: thresholds 3/9 packets -> 4500/13500 B; gentle, wait, byte mode
        // (ns-2 defaults). A standing queue of 6 full-size packets (9000 B) drives
        // avg to 9000 (1 - 0.998^n): after 6000 arrivals the gap is 9000 * e^-12 < 0.1 B.
        // At 9000 B: p_b = 0.1 * (9000 - 4500) / 9000 = 0.05.
        let mut q = Red::new(edge_params()).unwrap();
        assert_eq!(q.thresholds(), (4500.0, 13500.0));
        let mut rng = RngStream::new(7, "red:edge");
        prefill(&mut q, 6, 1500);
        run_frozen(&mut q, 6000, 1500, &mut rng);
        let avg = q.average().unwrap();
        assert!(close(avg, 9000.0, 0.1), "{avg}");
        assert!(close(q.p_b(avg), 0.05, 1e-5));
        // Freeze the average there and compare early drops with sum(p_a), 5 sd, for
        // full-size packets and for 186-byte packets (p_a scaled by 186/1500 and the
        // byte count rising 186 per arrival, so about 8x fewer drops per packet).
        q.q_w = 0.0;
        let (d_full, s_full, v_full) = run_frozen(&mut q, 200_000, 1500, &mut rng);
        assert!(
            (d_full as f64 - s_full).abs() < 5.0 * v_full.sqrt(),
            "{d_full} vs {s_full}"
        );
        let (d_small, s_small, v_small) = run_frozen(&mut q, 200_000, 186, &mut rng);
        assert!(
            (d_small as f64 - s_small).abs() < 5.0 * v_small.sqrt(),
            "{d_small} vs {s_small}"
        );
        assert!(d_small * 4 < d_full, "{d_small} vs {d_full}");
        // The average stays below 2 max_th = 27000 B, so no drop was forced.
    }

    #[test]
    fn automatic_thresholds_and_validation() {
        // ns-2 automatic min_th: max(5, 0.005 s * ptc / 2). At 2 Mbit/s, 1500 B:
        // ptc = 166.7 -> 0.42 -> 5 packets; max_th = 15.
        let q = Red::new(RedParams {
            min_th: None,
            max_th: None,
            ..pkt_params()
        })
        .unwrap();
        assert_eq!(q.thresholds(), (5.0, 15.0));
        // At 10 Gbit/s: ptc = 833333 -> min_th = 2083.3 packets.
        let q = Red::new(RedParams {
            min_th: None,
            max_th: None,
            link_rate_bps: 10_000_000_000,
            ..pkt_params()
        })
        .unwrap();
        assert!(close(q.thresholds().0, 2083.333, 1e-3));

        let err = |p: RedParams| Red::new(p).err().unwrap();
        assert!(err(RedParams {
            max_th: Some(5.0),
            ..pkt_params()
        })
        .contains("red.max_th must exceed red.min_th"));
        assert!(err(RedParams {
            q_weight: 0.0,
            ..pkt_params()
        })
        .contains("red.q_weight"));
        assert!(err(RedParams {
            max_p: 1.5,
            ..pkt_params()
        })
        .contains("red.max_p"));
        assert!(err(RedParams {
            link_rate_bps: 0,
            ..pkt_params()
        })
        .contains("red.link_rate_bps"));
        assert!(err(RedParams {
            limit: Limit::Packets(0),
            ..pkt_params()
        })
        .contains("red.limit"));
        assert!(err(RedParams {
            mean_pktsize: 0,
            ..pkt_params()
        })
        .contains("red.mean_pktsize"));
    }

    #[test]
    fn ecn_step_marking_above_k() {
        // DCTCP's step marking (RFC 8257 §3.1) as RED: q_weight 1 (avg = the queue
        // before the arrival), min_th K = 5, max_th 5.5 packets, not gentle, ECN on.
        // An arrival finding 5 queued: avg 5 in [min_th, max_th), p_b = 0 -> queued
        // unmarked. Finding 6: avg >= max_th -> forced: ECT marked and queued, Not-ECT
        // dropped.
        let mut q = Red::new(RedParams {
            q_weight: 1.0,
            min_th: Some(5.0),
            max_th: Some(5.5),
            ecn: true,
            ..pkt_params()
        })
        .unwrap();
        let mut rng = RngStream::new(3, "red:ecn");
        let mut dropped = Vec::new();
        let mut offer_ecn = |q: &mut Red, ecn: Ecn| {
            let mut ctx = EnqueueCtx { now: SimTime::ZERO, in_service_bytes: None, rng: &mut rng, flow_key: 0, dropped: &mut dropped };
            let mut p = QueuedPacket::new(PacketId(0), 1500);
            p.set_ecn(ecn);
            q.enqueue(p, &mut ctx)
        };
        for _ in 0..6 {
            assert_eq!(offer_ecn(&mut q, Ecn::Ect0), Verdict::Enqueued);
        }
        assert!(q.fifo.q.iter().all(|p| p.ecn() == Ecn::Ect0), "no mark up to K queued");
        assert_eq!(offer_ecn(&mut q, Ecn::Ect0), Verdict::Enqueued);
        assert_eq!(q.fifo.q.back().unwrap().ecn(), Ecn::Ce);
        assert_eq!(offer_ecn(&mut q, Ecn::NotEct), Verdict::Dropped(DropCause::Forced));
    }

    #[test]
    fn serde_defaults_and_unknown_fields() {
        let cfg: QueueConfig = serde_json::from_str(
            r#"{"kind": "red", "limit": {"packets": 50}, "min_th": 3, "max_th": 9,
                "mean_pktsize": 1500, "link_rate_bps": 2000000}"#,
        )
        .unwrap();
        let QueueConfig::Red(p) = &cfg else { panic!() };
        assert!(p.bytes && p.queue_in_bytes && p.gentle && p.wait);
        assert_eq!((p.q_weight, p.max_p, p.idle_pktsize), (0.002, 0.1, None));
        assert!(cfg.build(0).is_ok());
        let bad = serde_json::from_str::<QueueConfig>(
            r#"{"kind": "red", "limit": {"packets": 50}, "linterm": 10}"#,
        );
        assert!(bad.is_err());
        // Without the link rate the build explains what is missing.
        let cfg: QueueConfig =
            serde_json::from_str(r#"{"kind": "red", "limit": {"packets": 50}}"#).unwrap();
        assert!(cfg.build(0).err().unwrap().contains("link_rate_bps"));
    }
}
