//! BIC-TCP, Binary Increase Congestion control (Xu, Harfoush & Rhee, "Binary Increase
//! Congestion Control for Fast, Long Distance Networks", INFOCOM 2004), as in Linux
//! `net/ipv4/tcp_bic.c`.
//!
//! The arithmetic is Linux's: integer segments and the increase expressed as `cnt`, the
//! segments acked per +1 segment of cwnd (Linux `bictcp_update`). With W_max the cwnd
//! at the last loss and B = 4 (Linux `BICTCP_B`):
//!
//! - cwnd <= low_window: cnt = cwnd (Reno, +1 segment per RTT).
//! - cwnd < W_max, binary search: dist = (W_max - cwnd)/B. If dist > max_increment,
//!   cnt = cwnd/max_increment (+max_increment per RTT). If dist <= 1,
//!   cnt = cwnd*smooth_part/B (+B/smooth_part = +0.2 per RTT). Otherwise cnt = cwnd/dist
//!   (+dist per RTT), so each RTT closes a quarter of the distance to W_max.
//! - cwnd >= W_max, max probing: below W_max + B, cnt = cwnd*smooth_part/B. Below
//!   W_max + max_increment*(B-1), cnt = cwnd*(B-1)/(cwnd - W_max), a slow start away from
//!   W_max. Otherwise cnt = cwnd/max_increment.
//! - W_max unknown (no loss yet): cnt = min(cnt, 20), at least +5 % per RTT.
//! - Loss: W_max = cwnd, or with fast convergence `cwnd*(1+beta)/2` when cwnd < W_max.
//!   ssthresh = max(cwnd*beta, 2 MSS), or max(cwnd/2, 2 MSS) when cwnd <= low_window.
//! - RTO: W_max is forgotten (Linux `bictcp_reset` on `TCP_CA_Loss`).
//!
//! How it fits the sender: cwnd = ssthresh when recovery ends, so cwnd = beta*cwnd as in
//! Linux. W_max is recorded in `on_state_change` when the sender leaves Open, from the
//! pre-loss cwnd (the larger of `w.cwnd` and the cwnd seen at the last ACK).
//!
//! Parameters (`Params`, JSON names):
//! - `beta` = 819/1024 = 0.7998, dimensionless: multiplicative decrease (Linux `beta`).
//! - `max_increment` = 16, segments per RTT: the largest increase (Linux `max_increment`).
//! - `low_window` = 14, segments: Reno behaviour at or below (Linux `low_window`).
//! - `smooth_part` = 20, RTTs: the increase near W_max (Linux `smooth_part`).
//! - `fast_convergence` = true (Linux `fast_convergence`).
//!
//! Deviations from Linux:
//! - ssthresh is computed in bytes (`cwnd * beta`, rounded). Linux floors to whole
//!   segments.
//! - No delayed-ACK ratio (Linux `delayed_ack`, which divides cnt by the packets per ACK).
//!   Linux's `tcp_cong_avoid_ai` already counts acked packets, so the ratio makes Linux
//!   grow about twice as fast with delayed ACKs. tcplab counts bytes (byte counting) or
//!   ACKs (per-ACK growth), as for every algorithm.
//! - cnt is recomputed on every ACK. Linux skips the update within HZ/32 while cwnd is
//!   unchanged, which gives the same cnt.
//! - `initial_ssthresh` is the sender's `TcpConfig::initial_ssthresh`, not a BIC
//!   parameter.

use super::{
    reno_additive_increase, slow_start, AckInfo, CaState, CcEntry, CongestionControl,
    ParamInfo, RateSample, Window,
};
use crate::time::SimTime;
use serde::Deserialize;

/// The binary search goes to (W_max - cwnd)/B per RTT (Linux `BICTCP_B`).
const BICTCP_B: u64 = 4;
/// With W_max unknown, +1 segment at least every this many segments acked (Linux).
const UNKNOWN_MAX_CNT: u64 = 20;

/// BIC parameters (JSON object `params` of `{"name": "bic"}`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Multiplicative decrease factor, dimensionless, in (0, 1). Default 819/1024 =
    /// 0.7998046875 (Linux `beta`).
    pub beta: f64,
    /// Largest increase per RTT, segments, >= 1. Default 16 (Linux `max_increment`).
    pub max_increment: u64,
    /// At or below this cwnd BIC behaves like Reno, segments. Default 14 (Linux
    /// `low_window`).
    pub low_window: u64,
    /// RTTs spent growing from W_max - B to W_max, >= 1. Default 20 (Linux `smooth_part`).
    pub smooth_part: u64,
    /// Fast convergence: W_max = cwnd*(1+beta)/2 on a loss below W_max. Default true.
    pub fast_convergence: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            beta: 819.0 / 1024.0,
            max_increment: 16,
            low_window: 14,
            smooth_part: 20,
            fast_convergence: true,
        }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("cc 'bic' params: beta = {}; accepted: 0 < beta < 1", self.beta));
        }
        if self.max_increment == 0 {
            return Err("cc 'bic' params: max_increment = 0; accepted: >= 1".into());
        }
        if self.smooth_part == 0 {
            return Err("cc 'bic' params: smooth_part = 0; accepted: >= 1".into());
        }
        Ok(())
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    vec![
        ParamInfo { name: "beta", unit: "1", default: d.beta, doc: "multiplicative decrease (819/1024)" },
        ParamInfo { name: "max_increment", unit: "segments/RTT", default: d.max_increment as f64, doc: "largest increase per RTT" },
        ParamInfo { name: "low_window", unit: "segments", default: d.low_window as f64, doc: "Reno at or below this cwnd" },
        ParamInfo { name: "smooth_part", unit: "RTTs", default: d.smooth_part as f64, doc: "RTTs from W_max - B to W_max" },
        ParamInfo { name: "fast_convergence", unit: "bool", default: if d.fast_convergence { 1.0 } else { 0.0 }, doc: "W_max = cwnd*(1+beta)/2 on a loss below W_max" },
    ]
}

/// BIC state.
#[derive(Clone, Debug)]
pub struct Bic {
    p: Params,
    /// W_max, segments (Linux `last_max_cwnd`); `None` before the first loss and after
    /// an RTO.
    last_max_cwnd: Option<u64>,
    /// cwnd at the last ACK or state change, bytes (the pre-loss cwnd at an RTO).
    cwnd_seen: u64,
}

impl Bic {
    pub fn new(p: Params, w: &Window) -> Self {
        Bic { p, last_max_cwnd: None, cwnd_seen: w.cwnd }
    }

    /// Segments acked per +1 segment of cwnd (Linux `bictcp_update`, `ca->cnt`).
    fn cnt(&self, cwnd: u64) -> u64 {
        let p = &self.p;
        if cwnd <= p.low_window {
            return cwnd.max(1);
        }
        let mut cnt = match self.last_max_cwnd {
            // Binary search towards W_max.
            Some(max) if cwnd < max => {
                let dist = (max - cwnd) / BICTCP_B;
                if dist > p.max_increment {
                    cwnd / p.max_increment // linear increase
                } else if dist <= 1 {
                    cwnd * p.smooth_part / BICTCP_B
                } else {
                    cwnd / dist
                }
            }
            // Max probing above W_max (W_max unknown counts as 0, as in Linux).
            max => {
                let max = max.unwrap_or(0);
                if cwnd < max + BICTCP_B {
                    cwnd * p.smooth_part / BICTCP_B
                } else if cwnd < max + p.max_increment * (BICTCP_B - 1) {
                    cwnd * (BICTCP_B - 1) / (cwnd - max)
                } else {
                    cwnd / p.max_increment
                }
            }
        };
        if self.last_max_cwnd.is_none() {
            cnt = cnt.min(UNKNOWN_MAX_CNT);
        }
        cnt.max(1)
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        if ack.cwnd_limited {
            let mut acked = ack.acked_bytes;
            if w.in_slow_start() {
                acked = slow_start(w, acked);
            }
            if acked > 0 && !w.in_slow_start() {
                let mss = w.mss as u64;
                let cnt = self.cnt(w.cwnd / mss);
                // +1 MSS per cnt segments acked: a cwnd of bytes adds cwnd/(cnt*MSS) MSS.
                reno_additive_increase(w, acked, w.cwnd as f64 / (cnt * mss) as f64);
            }
        }
        self.cwnd_seen = w.cwnd;
    }

    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        let mss = w.mss as u64;
        let reduced = if w.cwnd / mss <= self.p.low_window {
            w.cwnd / 2
        } else {
            (w.cwnd as f64 * self.p.beta).round() as u64
        };
        reduced.max(2 * mss)
    }

    fn on_state_change(&mut self, w: &mut Window, from: CaState, to: CaState, _now: SimTime) {
        if from == CaState::Open && to != CaState::Open {
            let cwnd = w.cwnd.max(self.cwnd_seen) / w.mss as u64;
            self.last_max_cwnd = Some(match self.last_max_cwnd {
                // W_max = cwnd * (1 + beta) / 2   (fast convergence)
                Some(max) if self.p.fast_convergence && cwnd < max => {
                    (cwnd as f64 * (1.0 + self.p.beta) / 2.0) as u64
                }
                _ => cwnd,
            });
        }
        if to == CaState::Loss {
            self.last_max_cwnd = None; // Linux `bictcp_reset`
        }
        if to == CaState::Open {
            self.cwnd_seen = w.cwnd;
        }
    }

    fn on_rate_sample(&mut self, w: &mut Window, _rs: &RateSample) {
        self.cwnd_seen = w.cwnd;
    }

    fn trace(&self) -> Vec<(&'static str, f64)> {
        match self.last_max_cwnd {
            Some(m) => vec![("w_max", m as f64)],
            None => Vec::new(),
        }
    }
}

pub const ENTRY: CcEntry = CcEntry {
    name: "bic",
    summary: "BIC-TCP: binary search towards the last maximum, then max probing",
    reference: "Xu, Harfoush & Rhee, INFOCOM 2004; Linux tcp_bic.c",
    params: param_info,
    build: |v, w| {
        let p: Params = super::parse_params("bic", v)?;
        p.validate()?;
        Ok(Box::new(Bic::new(p, w)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u32 = 1000;

    fn bic_with_max(w_max: Option<u64>) -> Bic {
        let w = Window::new(10 * MSS as u64, u64::MAX, MSS, true, 2);
        Bic { last_max_cwnd: w_max, ..Bic::new(Params::default(), &w) }
    }

    #[test]
    fn cnt_follows_linux_bictcp_update() {
        let b = bic_with_max(Some(100));
        // Binary search, W_max = 100:
        // cwnd 80: dist = (100-80)/4 = 5  -> cnt = 80/5 = 16 (+5 per RTT)
        assert_eq!(b.cnt(80), 16);
        // cwnd 85: dist = 15/4 = 3        -> cnt = 85/3 = 28 (+3 per RTT)
        assert_eq!(b.cnt(85), 28);
        // cwnd 96: dist = 4/4 = 1 <= 1    -> cnt = 96*20/4 = 480 (+0.2 per RTT)
        assert_eq!(b.cnt(96), 480);
        // Max probing: cwnd 102 < 100+4   -> cnt = 102*20/4 = 510
        assert_eq!(b.cnt(102), 510);
        // cwnd 120 < 100+16*3 = 148       -> cnt = 120*3/(120-100) = 18
        assert_eq!(b.cnt(120), 18);
        // cwnd 160 >= 148                 -> cnt = 160/16 = 10 (+16 per RTT)
        assert_eq!(b.cnt(160), 10);
        // Far below W_max: W_max 200, cwnd 100: dist = 25 > 16 -> cnt = 100/16 = 6
        assert_eq!(bic_with_max(Some(200)).cnt(100), 6);
        // At or below low_window 14: Reno, cnt = cwnd.
        assert_eq!(b.cnt(14), 14);
        // W_max unknown counts as 0 (max probing from 0), and cnt is capped at 20:
        // cwnd 15 < 0 + 16*3: cnt = 15*3/15 = 3; cwnd 100 >= 48: 100/16 = 6;
        // cwnd 400: 400/16 = 25 -> capped at 20 (+5 % per RTT).
        let u = bic_with_max(None);
        assert_eq!(u.cnt(15), 3);
        assert_eq!(u.cnt(100), 6);
        assert_eq!(u.cnt(400), 20);
    }

    #[test]
    fn binary_search_steps_by_hand() {
        // W_max = 100, cwnd 80 segments of 1000 B, byte counting, one ACK per segment.
        // cwnd 80: cnt 16 -> +1 after 16 segments acked
        // cwnd 81: dist 19/4 = 4, cnt 81/4 = 20 -> +1 after 20 more
        // cwnd 82: dist 18/4 = 4, cnt 82/4 = 20 -> +1 after 20 more
        // cwnd 83: dist 17/4 = 4, cnt 83/4 = 20 -> +1 after 20 more
        // cwnd 84: dist 16/4 = 4, cnt 84/4 = 21 -> +1 after 21 more
        // cwnd 85: dist 15/4 = 3, cnt 85/3 = 28
        let mut t = TestSender::new(Box::new(bic_with_max(Some(100))), MSS, 80, true);
        t.w.ssthresh = t.w.cwnd;
        let mut acks_per_step = Vec::new();
        let mut n = 0;
        while t.w.cwnd < 85 * MSS as u64 {
            let before = t.w.cwnd;
            t.send(1);
            t.ack_n(1);
            n += 1;
            if t.w.cwnd > before {
                assert_eq!(t.w.cwnd, before + MSS as u64);
                acks_per_step.push(n);
                n = 0;
            }
        }
        assert_eq!(acks_per_step, vec![16, 20, 20, 20, 21]);
    }

    #[test]
    fn loss_sets_w_max_with_fast_convergence() {
        let w = Window::new(100 * MSS as u64, u64::MAX, MSS, true, 2);
        let mut t = TestSender::new(Box::new(Bic::new(Params::default(), &w)), MSS, 100, true);
        t.w.ssthresh = t.w.cwnd;
        t.lose();
        // ssthresh = 100000 * 819/1024 = 79980.47 -> 79980 B; W_max = 100.
        assert_eq!(t.w.ssthresh, 79_980);
        assert_eq!(t.cc.trace(), vec![("w_max", 100.0)]);
        // A loss at 90 < W_max: W_max = 90*(1024+819)/2048 = 80.99 -> 80 (Linux, integer).
        t.w.cwnd = 90 * MSS as u64;
        t.lose();
        assert_eq!(t.cc.trace(), vec![("w_max", 80.0)]);
        // At or below low_window (14): halve. cwnd 12 -> ssthresh 6 segments.
        t.w.cwnd = 12 * MSS as u64;
        assert_eq!(t.cc.ssthresh_after_loss(&t.w, 0), 6 * MSS as u64);
        // An RTO forgets W_max (Linux bictcp_reset).
        t.send(4);
        t.rto();
        assert!(t.cc.trace().is_empty());
    }
}
