//! Linux CUBIC's own arithmetic (`net/ipv4/tcp_cubic.c`: `bictcp_update`,
//! `cubictcp_recalc_ssthresh`, `bictcp_reset`, `cubictcp_cwnd_event`), which
//! `cc/cubic.rs` runs under `linux_cc` (the `linux` profile) in place of RFC 9438's
//! real-valued curve.
//!
//! Units are Linux's: windows in whole packets, time in jiffies (`HZ` per second) and
//! in 1/1024 s for the curve (`BICTCP_HZ` = 10), beta = 717/1024, C = 41 x 10 / 1024
//! (`bic_scale`). What differs from RFC 9438 and shows at small windows:
//!
//! - `cnt`, the packets acked per cwnd increment, is recomputed at most once per jiffy,
//!   and not at all while cwnd is unchanged and less than `HZ / 32` jiffies have passed
//!   since the last recomputation; in between, the last `cnt` holds.
//! - The curve's target is a whole packet count: below one packet above cwnd, `cnt` is
//!   `100 x cwnd` (almost no growth).
//! - The Reno-friendly estimate `tcp_cwnd` grows one packet per
//!   `cwnd x beta_scale >> 3` packets acked (`beta_scale` = 15: 8 x 1741 / 3 / 307 in
//!   integers), so 7 acks at cwnd 4, 9 at cwnd 5; when it is ahead of cwnd by d
//!   packets, `cnt` is at most `cwnd / d`.
//! - `t` is the time since the epoch began plus `delay_min`, in jiffies.
//! - A timeout (`TCP_CA_Loss`) zeroes the state, `last_max_cwnd` and `delay_min`
//!   included (`bictcp_reset`), so the next epoch starts with K = 0 and `cnt` at most
//!   20 (5 % per RTT).
//!
//! `beta` and `c` are CUBIC's parameters rounded to Linux's module parameters (`beta`
//! in 1/1024, `bic_scale` = C x 1024 / 10): 0.7 and 0.4 give Linux's 717 and 41.
//!
//! Where Linux's 64-bit (t - K)^3 would wrap, more than 342 s from K, the target
//! saturates instead (`cnt` then 2).
//!
//! `HZ` is 250: `CONFIG_HZ_250`, the configuration of the kernel the loss-fidelity grid
//! compares against (Linux 6.18, docs/validation.md); kernels built with 1000 have
//! 1 ms jiffies. The cube root is exact (rounded down) where Linux uses a table and one
//! Newton step (average error 0.2 %).

use crate::time::SimTime;

/// Jiffies per second (`CONFIG_HZ`).
pub const HZ: u64 = 250;
/// `BICTCP_BETA_SCALE`: beta is in 1/1024.
const BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: the curve's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// `cnt` while the curve has no target (no loss seen yet) is at most this (5 % per RTT).
const CNT_CAP_NO_W_MAX: u32 = 20;

/// The module's parameters and what `cubictcp_register` derives from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    /// `beta` in 1/1024 (717 for 0.7).
    pub beta: u32,
    /// `cube_rtt_scale` = `bic_scale` x 10, C in 1/1024 (410 for 0.4).
    cube_rtt_scale: u64,
    /// `cube_factor` = 2^40 / `cube_rtt_scale`: K = cbrt(cube_factor x (W_max - cwnd)).
    cube_factor: u64,
    /// `beta_scale` = 8 (1024 + beta) / 3 / (1024 - beta), in integers (15 for 717).
    friendly_scale: u32,
}

impl Constants {
    /// From CUBIC's `beta` (dimensionless) and `c` (segments/s^3), rounded to Linux's
    /// `beta` (1/1024) and `bic_scale` (C x 1024 / 10): 0.7 -> 717, 0.4 -> 41.
    pub fn new(beta: f64, c: f64) -> Self {
        let beta = ((beta * BETA_SCALE as f64).round() as u32).clamp(1, BETA_SCALE - 1);
        let bic_scale = ((c * BETA_SCALE as f64 / 10.0).round() as u64).max(1);
        let cube_rtt_scale = bic_scale * 10;
        Constants {
            beta,
            cube_rtt_scale,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale,
            friendly_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
        }
    }
}

/// Nanoseconds per jiffy (`HZ` divides 10^9).
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ;
const _: () = assert!(1_000_000_000 % HZ == 0, "HZ must divide 10^9");

/// The jiffies counter at `now` (32 bits, wrapping, as `tcp_jiffies32`).
pub fn jiffies(now: SimTime) -> u32 {
    (now.0 / NS_PER_JIFFY) as u32
}

/// `usecs_to_jiffies`: rounded up.
fn usecs_to_jiffies(us: u64) -> u64 {
    (us * HZ).div_ceil(1_000_000)
}

/// The integer cube root, rounded down.
fn cube_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    while x > 0 && x.saturating_mul(x).saturating_mul(x) > a {
        x -= 1;
    }
    while (x + 1).saturating_mul(x + 1).saturating_mul(x + 1) <= a {
        x += 1;
    }
    x
}

/// Linux's `struct bictcp` (the CUBIC part; HyStart stays in `cc/cubic.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinuxCubic {
    /// The module's parameters.
    consts: Constants,
    /// Packets acked per cwnd increment (`cnt`).
    pub cnt: u32,
    /// W_max, packets (`last_max_cwnd`); 0 = none.
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    /// The curve's plateau, packets (`bic_origin_point`).
    pub origin: u32,
    /// K in 2^-10 s (`bic_K`).
    pub k: u32,
    /// The epoch's first jiffy; `None` between a window reduction and the next
    /// update (Linux uses 0).
    pub epoch_start: Option<u32>,
    ack_cnt: u32,
    /// The Reno-friendly estimate, packets (`tcp_cwnd`).
    pub tcp_cwnd: u32,
    /// `tcp_friendliness`.
    friendly: bool,
}

impl LinuxCubic {
    /// A fresh state (`bictcp_reset`) with the module's constants.
    pub fn new(consts: Constants, friendly: bool) -> Self {
        LinuxCubic {
            consts,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin: 0,
            k: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            friendly,
        }
    }

    /// `bictcp_update`: account `acked` packets at window `cwnd` (packets) at jiffy
    /// `now`, with the flow's minimum RTT `delay_min_us` (0 when unknown), and
    /// recompute `cnt` when Linux would.
    pub fn update(&mut self, cwnd: u32, acked: u32, now: u32, delay_min_us: u64) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }
        // The curve moves at most once per jiffy; the Reno-friendly part still runs.
        if !(self.epoch_start.is_some() && now == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let start = match self.epoch_start {
                Some(s) => s,
                None => {
                    self.epoch_start = Some(now);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0;
                        self.origin = cwnd;
                    } else {
                        self.k = cube_root(self.consts.cube_factor * (self.last_max_cwnd - cwnd) as u64) as u32;
                        self.origin = self.last_max_cwnd;
                    }
                    now
                }
            };
            // t = (now - epoch start + delay_min) in 2^-10 s.
            let elapsed = now.wrapping_sub(start) as i32 as i64 as u64;
            let t = ((elapsed + usecs_to_jiffies(delay_min_us)) << BICTCP_HZ) / HZ;
            let k = self.k as u64;
            let offs = t.abs_diff(k);
            // Saturating where Linux's u64 would wrap (more than 342 s from K).
            let cube = self.consts.cube_rtt_scale.saturating_mul(offs).saturating_mul(offs).saturating_mul(offs);
            let delta = (cube >> (10 + 3 * BICTCP_HZ)).min(u32::MAX as u64) as u32;
            let target = if t < k { self.origin.saturating_sub(delta) } else { self.origin.saturating_add(delta) };
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.saturating_mul(100) };
            if self.last_max_cwnd == 0 && self.cnt > CNT_CAP_NO_W_MAX {
                self.cnt = CNT_CAP_NO_W_MAX;
            }
        }
        if self.friendly {
            // Reno-friendly region (`tcp_friendliness`).
            let per_packet = ((cwnd as u64 * self.consts.friendly_scale as u64) >> 3).min(u32::MAX as u64) as u32;
            if per_packet > 0 {
                while self.ack_cnt > per_packet {
                    self.ack_cnt -= per_packet;
                    self.tcp_cwnd += 1;
                }
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        // At most one packet per two acked: 1.5 x cwnd per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// `cubictcp_recalc_ssthresh` at a window reduction from `cwnd` packets: the epoch
    /// ends, W_max is cwnd (or, with fast convergence below the last W_max,
    /// cwnd x (1024 + 717) / 2048); returns ssthresh, cwnd x 717 / 1024, at least 2.
    pub fn on_window_reduction(&mut self, cwnd: u32, fast_convergence: bool) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && fast_convergence {
            (cwnd as u64 * (BETA_SCALE + self.consts.beta) as u64 / (2 * BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        self.ssthresh(cwnd)
    }

    /// ssthresh after a reduction from `cwnd` packets: cwnd x beta / 1024, at least 2.
    pub fn ssthresh(&self, cwnd: u32) -> u32 {
        ((cwnd as u64 * self.consts.beta as u64 / BETA_SCALE as u64) as u32).max(2)
    }

    /// `bictcp_reset` (on a timeout): everything starts over.
    pub fn reset(&mut self) {
        *self = LinuxCubic::new(self.consts, self.friendly);
    }

    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`: `idle` jiffies without sending move
    /// the epoch's start forward, never past `now`.
    pub fn shift_epoch(&mut self, idle: u32, now: u32) {
        if let Some(s) = self.epoch_start.as_mut() {
            if idle as i32 > 0 {
                *s = s.wrapping_add(idle);
                if (s.wrapping_sub(now) as i32) > 0 {
                    *s = now;
                }
            }
        }
    }

    /// Whether the epoch began less than a second ago (`cubictcp_acked` then discards
    /// delay samples).
    pub fn in_first_second(&self, now: u32) -> bool {
        self.epoch_start.is_some_and(|s| (now.wrapping_sub(s) as i32) < HZ as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux(last_max_cwnd: u32) -> LinuxCubic {
        LinuxCubic { last_max_cwnd, ..LinuxCubic::new(Constants::new(0.7, 0.4), true) }
    }

    #[test]
    fn constants_are_linux_module_init_values() {
        let k = Constants::new(0.7, 0.4);
        assert_eq!((k.beta, k.cube_rtt_scale, k.friendly_scale), (717, 410, 15));
        assert_eq!(k.cube_factor, 2_681_735_677);
        assert_eq!(jiffies(SimTime(3_999_999)), 0);
        assert_eq!(jiffies(SimTime(4_000_000)), 1);
        assert_eq!(usecs_to_jiffies(44_000), 11);
        assert_eq!(usecs_to_jiffies(44_001), 12);
        assert_eq!(cube_root(26), 2);
        assert_eq!(cube_root(27), 3);
        assert_eq!(linux(0).ssthresh(10), 7);
        assert_eq!(linux(0).ssthresh(2), 2);
    }

    #[test]
    fn small_window_reaches_w_max_at_once_then_waits_for_the_friendly_estimate() {
        // W_max 5, cwnd 4 at the epoch's first ACK (jiffy 1000; delay_min 44 ms = 11
        // jiffies): K = cbrt(2^40 / 410 x 1) = 1389 (1.36 s), t = 11 x 1024 / 250 = 45,
        // 410 x (1389 - 45)^3 >> 40 = 0, so the target is the whole 5 packets, one above
        // cwnd: cnt = 4 / 1 (one RTT to W_max).
        let mut c = linux(5);
        c.update(4, 1, 1000, 44_000);
        assert_eq!((c.epoch_start, c.k, c.origin, c.tcp_cwnd, c.cnt), (Some(1000), 1389, 5, 4, 4));
        // At cwnd 5 the target is no longer above cwnd: cnt = 100 x 5.
        c.update(5, 1, 1002, 44_000);
        assert_eq!((c.tcp_cwnd, c.cnt), (4, 500));
        // The friendly estimate moves one packet per (5 x 15) >> 3 = 9 acked (strictly
        // more than 9 counted): 5 after 8 more ACKs, 6 after 9 more; only then is it
        // ahead of cwnd, and cnt = 5 / 1.
        for j in 1..=16 {
            c.update(5, 1, 1002 + 8 * j, 44_000);
            assert_eq!(c.cnt, 500, "ack {j}");
        }
        assert_eq!(c.tcp_cwnd, 5);
        c.update(5, 1, 1002 + 8 * 17, 44_000);
        assert_eq!((c.tcp_cwnd, c.cnt), (6, 5));
    }

    #[test]
    fn cnt_is_held_within_hz_over_32_of_the_last_update() {
        // cwnd unchanged and at most 250 / 32 = 7 jiffies since the last update: the
        // update returns early (the acks are still counted), so cnt keeps its value
        // although 10 acks have put the friendly estimate ahead of cwnd.
        let mut c = linux(5);
        c.update(5, 1, 1000, 44_000);
        assert_eq!((c.tcp_cwnd, c.cnt), (5, 500));
        c.update(5, 9, 1007, 44_000);
        assert_eq!((c.tcp_cwnd, c.cnt), (5, 500), "held: 7 jiffies after the last update");
        c.update(5, 0, 1008, 44_000);
        assert_eq!((c.tcp_cwnd, c.cnt), (6, 5), "8 jiffies: recomputed with the 10 acks counted");
    }

    #[test]
    fn curve_above_w_max_and_no_w_max_cap() {
        // No loss yet (last_max_cwnd 0): K = 0, origin = cwnd, and cnt is at most 20.
        let mut c = linux(0);
        c.update(100, 1, 5000, 100_000);
        assert_eq!((c.k, c.origin, c.cnt), (0, 100, 20));
        // 4 s into the epoch (1000 jiffies) with delay_min 100 ms (25 jiffies):
        // t = 1025 x 1024 / 250 = 4198; 410 x 4198^3 >> 40 = 27 packets above 100, so
        // cnt = 100 / 27 = 3.
        c.update(101, 1, 6000, 100_000);
        assert_eq!(c.cnt, 3);
    }

    #[test]
    fn an_hour_long_epoch_saturates_instead_of_wrapping() {
        let mut c = linux(0);
        c.update(1000, 1, 0, 100_000);
        c.update(1001, 1, 3600 * HZ as u32, 100_000);
        assert_eq!(c.cnt, 2);
    }

    #[test]
    fn window_reduction_and_timeout_follow_recalc_ssthresh_and_reset() {
        let mut c = LinuxCubic { epoch_start: Some(7), ..linux(100) };
        // Below the last W_max with fast convergence: 80 x 1741 / 2048 = 68.
        assert_eq!(c.on_window_reduction(80, true), 56);
        assert_eq!((c.last_max_cwnd, c.epoch_start), (68, None));
        assert_eq!(c.on_window_reduction(90, true), 63);
        assert_eq!(c.last_max_cwnd, 90);
        c.update(63, 1, 2000, 44_000);
        c.reset();
        assert_eq!(c, linux(0));
    }

    #[test]
    fn idle_shifts_the_epoch_but_not_past_now() {
        let mut c = LinuxCubic { epoch_start: Some(1000), ..linux(0) };
        c.shift_epoch(50, 2000);
        assert_eq!(c.epoch_start, Some(1050));
        c.shift_epoch(5000, 2000);
        assert_eq!(c.epoch_start, Some(2000));
        assert!(c.in_first_second(2249));
        assert!(!c.in_first_second(2250));
    }
}
