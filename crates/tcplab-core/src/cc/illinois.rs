//! TCP-Illinois (Liu, Başar & Srikant, "TCP-Illinois: A loss- and delay-based
//! congestion control algorithm for high-speed networks", Performance Evaluation
//! 65(6-7), 2008; VALUETOOLS 2006), following Linux `tcp_illinois.c`.
//!
//! Loss-based AIMD whose increase α and decrease β are set once per RTT from the
//! average queueing delay `d_a = avg RTT of the round - baseRTT` relative to the
//! maximum queueing delay seen, `d_m = maxRTT - baseRTT`:
//!
//! ```text
//! congestion avoidance: cwnd += α/cwnd per packet acked (about α packets per RTT)
//! on loss:              ssthresh = max(cwnd - β*cwnd, 2 MSS)
//! α(d_a) = α_max                               if d_a <= d1 = 0.01 d_m
//!        = k1/(k2 + d_a)                         otherwise, with k1, k2 such that
//!          α(d1) = α_max and α(d_m) = α_min    (paper Eq. 2; Linux `alpha()`)
//! β(d_a) = β_min                               if d_a <= d2 = 0.1 d_m
//!        = β_min + (β_max-β_min)(d_a-d2)/(d3-d2) if d2 < d_a < d3 = 0.8 d_m
//!        = β_max                               if d_a >= d3   (paper Eq. 3; Linux `beta()`)
//! ```
//!
//! Once the delay has left the low zone (d_a > d1), α returns to α_max only after
//! `theta` rounds with d_a <= d1 (Linux counts them without resetting
//! the count on a high round in between; tcplab does the same). Below `win_thresh`
//! packets, α = 1 and β = 1/2 (Reno). An RTO (entering Loss) resets α = 1, β = 1/2
//! and the per-round samples. Slow start is standard.
//!
//! Parameters (`Params`), Linux defaults:
//! - `alpha_min` = 0.3, `alpha_max` = 10.0 (packets per RTT);
//! - `beta_min` = 0.125, `beta_max` = 0.5 (fraction of cwnd);
//! - `theta` = 5 rounds with low delay before α may return to α_max;
//! - `win_thresh` = 15 packets: below it, Reno's α = 1, β = 1/2.
//!
//! Deviations from Linux:
//! - α and β are real numbers; Linux holds them in fixed point (α in 1/128, β in
//!   1/64), so its values differ by at most one such step.
//! - Linux caps RTT samples at 3.3 s only to keep its fixed-point arithmetic from
//!   overflowing; tcplab needs no cap.
//! - Linux drops the bytes left over when slow start reaches ssthresh on an ACK;
//!   tcplab applies them to congestion avoidance, as tcplab Reno does.
//! - Linux ignores `acked` after the first ACK of a stretch (`ca->acked = 1`); tcplab
//!   grows by the acked bytes through `reno_additive_increase`.
//! - ssthresh uses cwnd, as Linux does (tcplab Reno uses FlightSize).

use super::{
    reno_additive_increase, slow_start, AckInfo, CaState, CcEntry, CongestionControl, ParamInfo,
    RoundCounter, Window,
};
use crate::time::{SimDuration, SimTime};
use serde::Deserialize;

/// α and β while the window is small or after an RTO (Linux `ALPHA_BASE`, `BETA_BASE`).
pub const ALPHA_BASE: f64 = 1.0;
pub const BETA_BASE: f64 = 0.5;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Smallest additive increase, packets per RTT; default 0.3 (Linux `ALPHA_MIN`).
    pub alpha_min: f64,
    /// Largest additive increase, packets per RTT; default 10 (Linux `ALPHA_MAX`).
    pub alpha_max: f64,
    /// Smallest multiplicative decrease, fraction of cwnd; default 0.125 (`BETA_MIN`).
    pub beta_min: f64,
    /// Largest multiplicative decrease, fraction of cwnd; default 0.5 (`BETA_MAX`).
    pub beta_max: f64,
    /// Rounds with low delay before α may rise back to α_max; default 5 (Linux `theta`).
    pub theta: u32,
    /// Window below which α = 1 and β = 1/2, packets; default 15 (Linux `win_thresh`).
    pub win_thresh: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha_min: 0.3,
            alpha_max: 10.0,
            beta_min: 0.125,
            beta_max: 0.5,
            theta: 5,
            win_thresh: 15.0,
        }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        let err = |f: &str, v: f64, ok: &str| {
            Err(format!("cc 'illinois' params: {f} = {v}; accepted: {ok}"))
        };
        if !(self.alpha_min.is_finite() && self.alpha_min > 0.0) {
            return err("alpha_min", self.alpha_min, "a finite number > 0");
        }
        if !(self.alpha_max.is_finite() && self.alpha_max >= self.alpha_min) {
            return err("alpha_max", self.alpha_max, "a finite number >= alpha_min");
        }
        if !(self.beta_min >= 0.0 && self.beta_min < 1.0) {
            return err("beta_min", self.beta_min, "0 <= beta_min < 1");
        }
        if !(self.beta_max >= self.beta_min && self.beta_max < 1.0) {
            return err("beta_max", self.beta_max, "beta_min <= beta_max < 1");
        }
        if !(self.win_thresh.is_finite() && self.win_thresh >= 0.0) {
            return err("win_thresh", self.win_thresh, "a finite number >= 0 (packets)");
        }
        Ok(())
    }
}

/// Whether the average delay has left the low zone since α was last at α_max
/// (Linux `rtt_above` / `rtt_low`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayZone {
    /// d_a has stayed <= d1: α = α_max immediately.
    Low,
    /// d_a went above d1; `low_rounds` rounds with d_a <= d1 have been seen since.
    LeftLow { low_rounds: u32 },
}

#[derive(Debug)]
pub struct Illinois {
    p: Params,
    alpha: f64,
    beta: f64,
    zone: DelayZone,
    base_rtt: Option<SimDuration>,
    max_rtt: Option<SimDuration>,
    /// Sum and count of RTT samples in the current round, nanoseconds.
    sum_rtt_ns: u128,
    cnt_rtt: u32,
    rounds: RoundCounter,
}

/// α for an average queueing delay `da` above d1 = dm/100 (paper Eq. 2), in the form
/// Linux evaluates: α = (dm-d1)·α_max / ((dm-d1) + (da-d1)(α_max-α_min)/α_min).
pub fn alpha_curve(p: &Params, da: f64, dm: f64) -> f64 {
    let d1 = dm / 100.0;
    let (dm1, da1) = (dm - d1, (da - d1).max(0.0));
    let den = dm1 + da1 * (p.alpha_max - p.alpha_min) / p.alpha_min;
    if den <= 0.0 {
        p.alpha_max
    } else {
        (dm1 * p.alpha_max / den).clamp(p.alpha_min, p.alpha_max)
    }
}

/// β for average queueing delay `da` and maximum `dm` (paper Eq. 3; Linux `beta()`).
pub fn beta_curve(p: &Params, da: f64, dm: f64) -> f64 {
    let d2 = dm / 10.0;
    if da <= d2 {
        return p.beta_min;
    }
    let d3 = 0.8 * dm;
    if da >= d3 || d3 <= d2 {
        return p.beta_max;
    }
    p.beta_min + (p.beta_max - p.beta_min) * (da - d2) / (d3 - d2)
}

impl Illinois {
    pub fn new(p: Params) -> Self {
        Illinois {
            alpha: p.alpha_max,
            beta: BETA_BASE,
            p,
            zone: DelayZone::Low,
            base_rtt: None,
            max_rtt: None,
            sum_rtt_ns: 0,
            cnt_rtt: 0,
            rounds: RoundCounter::default(),
        }
    }

    fn reset_samples(&mut self) {
        self.sum_rtt_ns = 0;
        self.cnt_rtt = 0;
    }

    /// Linux `alpha()`: the α_max shortcut and the `theta` hold, then `alpha_curve`.
    fn next_alpha(&mut self, da: f64, dm: f64) -> f64 {
        if da <= dm / 100.0 {
            return match self.zone {
                DelayZone::Low => self.p.alpha_max,
                DelayZone::LeftLow { low_rounds } if low_rounds + 1 < self.p.theta => {
                    // Wait for `theta` good rounds before allowing α to jump to α_max.
                    self.zone = DelayZone::LeftLow { low_rounds: low_rounds + 1 };
                    self.alpha
                }
                DelayZone::LeftLow { .. } => {
                    self.zone = DelayZone::Low;
                    self.p.alpha_max
                }
            };
        }
        if self.zone == DelayZone::Low {
            self.zone = DelayZone::LeftLow { low_rounds: 0 };
        }
        alpha_curve(&self.p, da, dm)
    }

    /// Once per RTT (Linux `update_params`).
    fn update_params(&mut self, w: &Window) {
        if w.cwnd_segments() < self.p.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if let (true, Some(base), Some(max)) =
            (self.cnt_rtt > 0, self.base_rtt, self.max_rtt)
        {
            let base = base.as_nanos() as f64;
            let dm = max.as_nanos() as f64 - base;
            let avg = self.sum_rtt_ns as f64 / self.cnt_rtt as f64;
            let da = (avg - base).max(0.0);
            self.alpha = self.next_alpha(da, dm);
            self.beta = beta_curve(&self.p, da, dm);
        }
        self.reset_samples();
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        if self.rounds.on_ack(ack.acked_bytes, ack.in_flight) {
            self.update_params(w);
        }
        // RFC 2861: only grow when cwnd limits the sender.
        if !ack.cwnd_limited {
            return;
        }
        let mut acked = ack.acked_bytes;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        // cwnd += α/cwnd per packet (Linux: snd_cwnd_cnt * α >= cwnd -> +1).
        reno_additive_increase(w, acked, self.alpha);
    }

    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        // ssthresh = cwnd - β*cwnd, at least 2 segments (Linux tcp_illinois_ssthresh).
        let cut = (w.cwnd as f64 * self.beta) as u64;
        w.cwnd.saturating_sub(cut).max(2 * w.mss as u64)
    }

    fn on_state_change(&mut self, _w: &mut Window, _from: CaState, to: CaState, _now: SimTime) {
        if to == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.zone = DelayZone::Low;
            self.rounds.restart();
            self.reset_samples();
        }
    }

    fn on_rtt_sample(&mut self, rtt: SimDuration, _now: SimTime) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.max_rtt = Some(self.max_rtt.map_or(rtt, |m| m.max(rtt)));
        self.sum_rtt_ns += rtt.as_nanos() as u128;
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
    }

    fn trace(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("base_rtt_s", self.base_rtt.map_or(f64::NAN, |d| d.as_secs_f64())),
            ("max_rtt_s", self.max_rtt.map_or(f64::NAN, |d| d.as_secs_f64())),
        ]
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    vec![
        ParamInfo {
            name: "alpha_min",
            unit: "packets/RTT",
            default: d.alpha_min,
            doc: "smallest additive increase",
        },
        ParamInfo {
            name: "alpha_max",
            unit: "packets/RTT",
            default: d.alpha_max,
            doc: "largest additive increase",
        },
        ParamInfo {
            name: "beta_min",
            unit: "fraction",
            default: d.beta_min,
            doc: "smallest multiplicative decrease",
        },
        ParamInfo {
            name: "beta_max",
            unit: "fraction",
            default: d.beta_max,
            doc: "largest multiplicative decrease",
        },
        ParamInfo {
            name: "theta",
            unit: "rounds",
            default: d.theta as f64,
            doc: "low-delay rounds before alpha returns to alpha_max",
        },
        ParamInfo {
            name: "win_thresh",
            unit: "packets",
            default: d.win_thresh,
            doc: "below this window alpha = 1, beta = 1/2",
        },
    ]
}

pub const ENTRY: CcEntry = CcEntry {
    name: "illinois",
    summary: "Illinois: AIMD with alpha in [0.3, 10] and beta in [1/8, 1/2] set by queueing delay",
    reference: "Liu, Basar & Srikant, Perf. Eval. 65(6-7) 2008; Linux tcp_illinois.c",
    params: param_info,
    build: |v, _w| {
        let p: Params = super::parse_params("illinois", v)?;
        p.validate()?;
        Ok(Box::new(Illinois::new(p)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u64 = 1000;
    const MS: f64 = 1e6; // nanoseconds per millisecond

    fn traced(t: &TestSender, key: &str) -> f64 {
        t.cc.trace().into_iter().find(|(k, _)| *k == key).unwrap().1
    }

    #[test]
    fn alpha_curve_vectors() {
        // d_m = 100 ms, so d1 = 1 ms. k1/(k2+d_a) in Linux form:
        //   α = (dm-d1)·α_max / ((dm-d1) + (da-d1)(α_max-α_min)/α_min)
        //   d_a = 1 ms (= d1):  99*10 / 99 = 10 = α_max
        //   d_a = 50 ms: 990 / (99 + 49*(9.7/0.3)) = 990 / (99 + 1584.333) = 0.588119
        //   d_a = 100 ms (= d_m): 990 / (99 + 99*32.333) = 990/3300 = 0.3 = α_min
        let p = Params::default();
        assert!((alpha_curve(&p, 1.0 * MS, 100.0 * MS) - 10.0).abs() < 1e-9);
        assert!((alpha_curve(&p, 50.0 * MS, 100.0 * MS) - 0.588119).abs() < 1e-6);
        assert!((alpha_curve(&p, 100.0 * MS, 100.0 * MS) - 0.3).abs() < 1e-9);
    }

    #[test]
    fn beta_curve_vectors() {
        // d_m = 100 ms: d2 = 10 ms, d3 = 80 ms.
        //   d_a =  5 ms <= d2            -> β_min = 0.125
        //   d_a = 45 ms: 0.125 + 0.375*(45-10)/(80-10) = 0.125 + 0.1875 = 0.3125
        //   d_a = 80 ms >= d3            -> β_max = 0.5
        let p = Params::default();
        assert_eq!(beta_curve(&p, 5.0 * MS, 100.0 * MS), 0.125);
        assert!((beta_curve(&p, 45.0 * MS, 100.0 * MS) - 0.3125).abs() < 1e-12);
        assert_eq!(beta_curve(&p, 80.0 * MS, 100.0 * MS), 0.5);
    }

    #[test]
    fn ssthresh_is_cwnd_minus_beta_cwnd() {
        // cwnd 100 MSS: β = 0.3125 -> 100000 - 31250 = 68750 B; β = 0.5 -> 50000 B;
        // cwnd 3 MSS, β = 0.5 -> 1500 B, floored at 2 MSS = 2000 B.
        let mut c = Illinois::new(Params::default());
        let w = Window::new(100 * MSS, 50 * MSS, MSS as u32, false, 2);
        c.beta = 0.3125;
        assert_eq!(c.ssthresh_after_loss(&w, 0), 68_750);
        c.beta = 0.5;
        assert_eq!(c.ssthresh_after_loss(&w, 0), 50_000);
        let w = Window::new(3 * MSS, 50 * MSS, MSS as u32, false, 2);
        assert_eq!(c.ssthresh_after_loss(&w, 0), 2 * MSS);
    }

    #[test]
    fn small_windows_behave_like_reno() {
        // Linux starts with α = α_max, so the first flight of 5 segments grows cwnd by
        // 1000*1000*10/cwnd per ACK: 5000 -> 7000 -> 8428 -> 9614 -> 10654 -> 11592 B.
        // At the round end cwnd = 11.6 MSS < win_thresh = 15: α = 1, β = 1/2.
        let mut t =
            TestSender::new(Box::new(Illinois::new(Params::default())), MSS as u32, 5, false);
        t.w.ssthresh = t.w.cwnd;
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 11_592);
        t.round_trip_all();
        assert_eq!(traced(&t, "alpha"), 1.0);
        assert_eq!(traced(&t, "beta"), 0.5);
    }

    #[test]
    fn theta_rounds_before_alpha_returns_to_max() {
        // cwnd 20 >= 15, congestion avoidance. Rounds end on the first ACK of the next
        // flight, so a round holds that flight's RTT samples plus one of the next.
        let mut t =
            TestSender::new(Box::new(Illinois::new(Params::default())), MSS as u32, 20, false);
        t.w.ssthresh = t.w.cwnd;
        t.round_trip_all(); // flight 1 at 100 ms: opens the first round
        t.rtt = SimDuration::from_millis(200);
        t.round_trip_all(); // round 1: 20x100 + 1x200 ms, avg 104.76, d_a = 4.76 > d1 = 1
        t.rtt = SimDuration::from_millis(100);
        t.round_trip_all();
        // Flight 1 grew cwnd at α = 10 to 28.x MSS; round 1 gave α = 4.49. Round 2 holds
        // flight 2's 28 samples but its first (27 at 200 ms) plus one at 100 ms:
        // avg = (27*200 + 100)/28 = 196.43 ms, d_a = 96.43 ms, d_m = 100 ms ->
        // α = 990/(99 + 95.43*32.333) = 990/3184.5 = 0.3109, β = β_max (d_a >= d3 = 80).
        assert!((traced(&t, "alpha") - 0.3109).abs() < 1e-4, "{}", traced(&t, "alpha"));
        assert_eq!(traced(&t, "beta"), 0.5);
        let low_alpha = traced(&t, "alpha");
        // Rounds 3..6 have d_a = 0 <= d1: the first 4 keep α (theta = 5), the 5th
        // restores α_max = 10.
        for _ in 0..4 {
            t.round_trip_all();
            assert_eq!(traced(&t, "alpha"), low_alpha);
            assert_eq!(traced(&t, "beta"), 0.125);
        }
        t.round_trip_all();
        assert_eq!(traced(&t, "alpha"), 10.0);
    }

    #[test]
    fn rto_resets_alpha_and_beta() {
        let mut t =
            TestSender::new(Box::new(Illinois::new(Params::default())), MSS as u32, 20, false);
        t.w.ssthresh = t.w.cwnd;
        t.round_trip_all();
        t.round_trip_all();
        assert_eq!(traced(&t, "alpha"), 10.0); // no queueing: d_a = 0
        assert_eq!(traced(&t, "beta"), 0.125);
        t.fill();
        t.rto();
        assert_eq!(traced(&t, "alpha"), ALPHA_BASE);
        assert_eq!(traced(&t, "beta"), BETA_BASE);
        assert_eq!(t.w.cwnd, MSS);
    }

    #[test]
    fn alpha_max_grows_about_ten_packets_per_rtt() {
        // α = 10 with byte counting: +1 MSS per cwnd/10 bytes acked, so one flight of
        // 20 segments (20000 B) at cwnd 20..30 MSS adds about 20000/(cwnd/10) = 7..10 MSS.
        let mut t =
            TestSender::new(Box::new(Illinois::new(Params::default())), MSS as u32, 20, true);
        t.w.ssthresh = t.w.cwnd;
        t.round_trip_all();
        t.round_trip_all(); // α = 10 from the first ACK of this flight on
        let before = t.w.cwnd;
        t.round_trip_all();
        let grown = (t.w.cwnd - before) / MSS;
        assert!((7..=10).contains(&grown), "grew {grown} MSS in one RTT");
    }
}
