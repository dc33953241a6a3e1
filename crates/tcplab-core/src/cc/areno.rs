//! TCP-AdaptiveReno (AReno), with the equations of seed 002 (slides by Shimonishi,
//! Murase & Sanadidi, "Assessing Interactions among Legacy and High-Speed TCPs",
//! PFLDnet); the algorithm is from H. Shimonishi, T. Hama & T. Murase, "TCP-Adaptive
//! Reno for improving efficiency-friendliness tradeoffs of TCP congestion control
//! algorithm", PFLDnet 2006.
//!
//! Loss-based AIMD plus a window increase steered by a delay-based congestion level:
//!
//! ```text
//! c = (RTT - RTT_min) / (RTT_cong - RTT_min), clamped to [0, 1]
//! per ACK in avoidance:  W      += (alpha*(B/R)*RTT*e^c - beta*W*c) / W
//!                        W_reno += 1 / W_reno                         (Reno)
//!                        W       = max(W, W_reno)
//! on loss:               W = W/(1+c),  W_reno = W_reno/(1+c)
//! ```
//!
//! W and W_reno are in packets, RTT in seconds, B (estimated link capacity) and R
//! (achieved rate = W/RTT) in the same unit, so `alpha` is in packets per second and
//! the increase per RTT is `alpha*(B/R)*RTT*e^c` packets (time-based growth, hence
//! RTT-fair; scaled by B/R so a flow far below capacity grows fast). The equilibrium
//! is `R = sqrt(B*alpha*e^c/(beta*c))` (seed). Slow start is standard, with W_reno
//! following cwnd; W is `Window::cwnd` (a fractional part is kept here).
//!
//! **Estimators.** The PFLDnet 2006 paper could not be consulted while writing this;
//! the estimators below are tcplab's stated assumptions (the seed's brief suggests
//! them, and public re-implementations take the same line):
//! - `RTT` is the latest RTT sample; `RTT_min` the minimum sample ever seen.
//! - `RTT_cong` is an EWMA of the RTT observed when a loss is detected (the latest
//!   sample at the moment the sender leaves Open): `RTT_cong <- (1-g)*RTT_cong + g*RTT`,
//!   `g = rtt_cong_gain`, initialised by the first loss. The update is made before c
//!   is computed for that loss, so the first loss of a flow with any queueing sees
//!   c = 1 (a Reno halving). Before any loss c = 0. If RTT_cong <= RTT_min, c is 1
//!   when RTT > RTT_min and 0 otherwise.
//! - `B` is the windowed maximum, over `capacity_window_s`, of achieved-rate samples:
//!   the delivery rate of each non-app-limited `RateSample` (draft-cheng-iccrg-
//!   delivery-rate-estimation) or, if the sender supplies no rate samples, cwnd/RTT
//!   at each ACK. Before any sample B/R = 1.
//!
//! Parameters (`Params`), tcplab defaults (the seed gives no values):
//! - `alpha` = 10 packets/s: at B/R = 1, c = 0 and RTT = 100 ms the increase is 1
//!   packet per RTT, Reno's rate at the seed's typical RTT (~100-130 ms);
//! - `beta` = 0.1: at c = 1 the delay term removes 10% of W per RTT, so about 7 RTTs
//!   of full congestion (0.9^7 = 0.48) cost as much as a Reno halving and W settles on
//!   the W_reno floor, which keeps AReno friendly to Reno at high delay;
//! - `rtt_cong_gain` = 0.125 (the RFC 6298 SRTT gain);
//! - `capacity_window_s` = 10 s (as BBR's min-RTT window; long enough to remember the
//!   rate before a loss, short enough to follow a route change).
//!
//! Deviations and choices: c is clamped to [0, 1]; the increase applies per ACK (per
//! acked segment with byte counting); W never drops below W_reno nor 1 MSS; growth is
//! skipped when the sender is not cwnd-limited (RFC 2861). There is no Linux module.
//!
//! **Growth is capped at slow start's rate: one packet per acked segment.** Taken
//! literally the equation has no bound. With R = W/RTT the increase per RTT is
//! `alpha*B*RTT^2*e^c/W` (B in packets/s), which overshoots the capacity target
//! `B*RTT` by about `alpha*RTT/W` when W is far below it: after a collapse to a few
//! packets, with an RTT of seconds behind full multi-hop buffers, one ACK adds
//! thousands of packets. Measured on the highspeed study's sessions (tiny scale,
//! 300 s, 10 long-lived sessions, before this cap): W = 3 packets, RTT 5.47 s,
//! B/R = 267 and a 28-segment ACK gave W = 370,881 packets; cwnd reached 5.5e10 B,
//! and the long-lived flows spent 2,115 of 2,672 flow-seconds in RTO recovery. Every
//! window rule Linux runs grows through `tcp_slow_start` or `tcp_cong_avoid_ai`,
//! neither faster than one segment per segment acked (RFC 5681 §3.1 bounds slow
//! start the same way); the cap applies that bound here. Below it the seed's
//! equation is unchanged.

use super::{
    slow_start, AckInfo, CaState, CcEntry, CongestionControl, ParamInfo, RateSample, Window,
    WindowedMax,
};
use crate::time::{SimDuration, SimTime};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Increase scale, packets per second (per unit of B/R); default 10.
    pub alpha: f64,
    /// Delay-driven decrease per RTT, fraction of W at c = 1; default 0.1.
    pub beta: f64,
    /// EWMA gain of RTT_cong over RTTs seen at losses; default 0.125.
    pub rtt_cong_gain: f64,
    /// Window of the capacity (max achieved rate) filter, seconds; default 10.
    pub capacity_window_s: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params { alpha: 10.0, beta: 0.1, rtt_cong_gain: 0.125, capacity_window_s: 10.0 }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        let checks: [(&str, f64, bool, &str); 4] = [
            ("alpha", self.alpha, self.alpha >= 0.0, "a finite number >= 0 (packets/s)"),
            ("beta", self.beta, self.beta >= 0.0, "a finite number >= 0"),
            (
                "rtt_cong_gain",
                self.rtt_cong_gain,
                self.rtt_cong_gain > 0.0 && self.rtt_cong_gain <= 1.0,
                "0 < rtt_cong_gain <= 1",
            ),
            (
                "capacity_window_s",
                self.capacity_window_s,
                self.capacity_window_s > 0.0,
                "a finite number > 0 (seconds)",
            ),
        ];
        for (name, v, ok, accepted) in checks {
            if !v.is_finite() || !ok {
                return Err(format!("cc 'areno' params: {name} = {v}; accepted: {accepted}"));
            }
        }
        Ok(())
    }
}

/// Congestion level c = (RTT - RTT_min)/(RTT_cong - RTT_min), clamped to [0, 1];
/// 0 while RTT_cong is unknown. Times in seconds.
pub fn congestion_level(rtt: f64, rtt_min: f64, rtt_cong: Option<f64>) -> f64 {
    let Some(cong) = rtt_cong else { return 0.0 };
    let queueing = rtt - rtt_min;
    let span = cong - rtt_min;
    if span <= 0.0 {
        return if queueing > 0.0 { 1.0 } else { 0.0 };
    }
    (queueing / span).clamp(0.0, 1.0)
}

/// The seed's per-ACK change of W, packets: (alpha*(B/R)*RTT*e^c - beta*W*c)/W.
pub fn window_increment(p: &Params, w_pkts: f64, b_over_r: f64, rtt_s: f64, c: f64) -> f64 {
    (p.alpha * b_over_r * rtt_s * c.exp() - p.beta * w_pkts * c) / w_pkts
}

/// A loss waiting for the sender's return to Open.
#[derive(Clone, Copy, Debug)]
struct LossEvent {
    c: f64,
    rtt_cong: f64,
}

#[derive(Debug)]
pub struct AReno {
    p: Params,
    /// W in bytes, with the fraction `Window::cwnd` cannot hold.
    w_bytes: f64,
    /// W_reno in bytes.
    w_reno_bytes: f64,
    rtt_min: Option<SimDuration>,
    last_rtt: Option<SimDuration>,
    /// RTT_cong, seconds.
    rtt_cong: Option<f64>,
    /// B: windowed max of achieved rate, bytes/s, keyed by time in ns.
    capacity: WindowedMax,
    /// Whether the sender supplies rate samples (else B comes from cwnd/RTT).
    rate_samples_seen: bool,
    pending: Option<LossEvent>,
    /// c at the last ACK (for traces).
    last_c: f64,
}

impl AReno {
    pub fn new(p: Params, w: &Window) -> Self {
        AReno {
            p,
            w_bytes: w.cwnd as f64,
            w_reno_bytes: w.cwnd as f64,
            rtt_min: None,
            last_rtt: None,
            rtt_cong: None,
            capacity: WindowedMax::default(),
            rate_samples_seen: false,
            pending: None,
            last_c: 0.0,
        }
    }

    fn window_ns(&self) -> u64 {
        SimDuration::from_secs_f64(self.p.capacity_window_s).as_nanos()
    }

    /// c and the updated RTT_cong for a loss detected now.
    fn loss_event(&self) -> Option<LossEvent> {
        let rtt = self.last_rtt?.as_secs_f64();
        let rtt_min = self.rtt_min?.as_secs_f64();
        let g = self.p.rtt_cong_gain;
        let rtt_cong = self.rtt_cong.map_or(rtt, |old| (1.0 - g) * old + g * rtt);
        Some(LossEvent { c: congestion_level(rtt, rtt_min, Some(rtt_cong)), rtt_cong })
    }

    /// Takes the sender's cwnd as W unless it is our own (floored) value.
    fn sync(&mut self, w: &Window) {
        if self.w_bytes as u64 != w.cwnd {
            self.w_bytes = w.cwnd as f64;
        }
    }

    fn apply_loss(&mut self, loss: LossEvent, w: &Window) {
        self.rtt_cong = Some(loss.rtt_cong);
        self.w_reno_bytes = (self.w_reno_bytes / (1.0 + loss.c)).min(w.cwnd as f64);
        self.w_bytes = w.cwnd as f64;
    }
}

impl CongestionControl for AReno {
    fn name(&self) -> &'static str {
        "areno"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        self.sync(w);
        let mss = w.mss as f64;
        let rtt = ack.rtt.or(self.last_rtt).or(ack.srtt);
        if !self.rate_samples_seen {
            if let Some(rtt) = rtt.filter(|r| r.as_nanos() > 0) {
                let rate = w.cwnd as f64 / rtt.as_secs_f64();
                self.capacity.update(self.window_ns(), ack.now.0, rate);
            }
        }
        if !ack.cwnd_limited {
            return;
        }
        let mut acked = ack.acked_bytes;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            self.w_bytes = w.cwnd as f64;
            self.w_reno_bytes = self.w_bytes;
            if acked == 0 {
                return;
            }
        }
        // Acked segments this ACK counts for (one per ACK without byte counting).
        let n = if w.byte_counting { acked as f64 / mss } else { 1.0 };
        let w_pkts = self.w_bytes / mss;
        let w_reno = (self.w_reno_bytes / mss).max(1.0);
        // W_reno += 1/W_reno per segment (Reno).
        let w_reno_next = w_reno + n / w_reno;
        let mut w_next = w_pkts;
        if let (Some(rtt), Some(rtt_min)) = (rtt.filter(|r| r.as_nanos() > 0), self.rtt_min) {
            let rtt_s = rtt.as_secs_f64();
            let c = congestion_level(rtt_s, rtt_min.as_secs_f64(), self.rtt_cong);
            self.last_c = c;
            let achieved = self.w_bytes / rtt_s; // R = W/RTT, bytes/s
            let b = self.capacity.get();
            let b_over_r = if b > 0.0 && achieved > 0.0 { b / achieved } else { 1.0 };
            // W += (alpha*(B/R)*RTT*e^c - beta*W*c)/W   (seed 002), at most one
            // packet per acked segment: no faster than slow start (module doc).
            w_next += (n * window_increment(&self.p, w_pkts, b_over_r, rtt_s, c)).min(n);
        }
        // W = max(W, W_reno)   (seed 002)
        let w_next = w_next.max(w_reno_next).max(1.0);
        self.w_reno_bytes = w_reno_next * mss;
        self.w_bytes = w_next * mss;
        w.cwnd = self.w_bytes as u64;
    }

    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        // W = W/(1+c); pending (if the sender announced the loss first) holds the same c.
        let c = self.pending.or_else(|| self.loss_event()).map_or(1.0, |l| l.c);
        ((w.cwnd as f64 / (1.0 + c)) as u64).max(2 * w.mss as u64)
    }

    fn on_state_change(&mut self, w: &mut Window, from: CaState, to: CaState, _now: SimTime) {
        match (from, to) {
            (CaState::Open, CaState::Recovery) => self.pending = self.loss_event(),
            (_, CaState::Loss) => {
                // RTO: slow start follows; only RTT_cong and W_reno keep the loss.
                if let Some(loss) = self.pending.take().or_else(|| {
                    if from == CaState::Open {
                        self.loss_event()
                    } else {
                        None
                    }
                }) {
                    self.rtt_cong = Some(loss.rtt_cong);
                }
                self.w_reno_bytes = w.cwnd as f64;
                self.w_bytes = w.cwnd as f64;
            }
            (_, CaState::Open) => {
                if let Some(loss) = self.pending.take() {
                    self.apply_loss(loss, w);
                }
                self.w_bytes = w.cwnd as f64;
            }
            _ => {}
        }
    }

    fn on_rtt_sample(&mut self, rtt: SimDuration, _now: SimTime) {
        self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
        self.last_rtt = Some(rtt);
    }

    fn on_rate_sample(&mut self, _w: &mut Window, rs: &RateSample) {
        if rs.is_app_limited {
            return;
        }
        if let Some(rate) = rs.rate_bytes_per_s() {
            self.rate_samples_seen = true;
            self.capacity.update(self.window_ns(), rs.now.0, rate);
        }
    }

    fn undo(&mut self, w: &Window) -> Option<u64> {
        self.pending = None;
        self.w_bytes = w.cwnd as f64;
        None
    }

    fn trace(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("c", self.last_c),
            ("w_reno_bytes", self.w_reno_bytes),
            ("rtt_cong_s", self.rtt_cong.unwrap_or(f64::NAN)),
            ("rtt_min_s", self.rtt_min.map_or(f64::NAN, |d| d.as_secs_f64())),
            ("capacity_bytes_per_s", self.capacity.get()),
        ]
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    vec![
        ParamInfo {
            name: "alpha",
            unit: "packets/s",
            default: d.alpha,
            doc: "increase scale: alpha*(B/R)*RTT*e^c packets per RTT",
        },
        ParamInfo {
            name: "beta",
            unit: "-",
            default: d.beta,
            doc: "delay-driven decrease: beta*W*c packets per RTT",
        },
        ParamInfo {
            name: "rtt_cong_gain",
            unit: "-",
            default: d.rtt_cong_gain,
            doc: "EWMA gain of RTT_cong (RTT at loss)",
        },
        ParamInfo {
            name: "capacity_window_s",
            unit: "s",
            default: d.capacity_window_s,
            doc: "window of the max-rate filter giving B",
        },
    ]
}

pub const ENTRY: CcEntry = CcEntry {
    name: "areno",
    summary: "TCP-AdaptiveReno: Reno floor plus delay-steered increase, loss cut W/(1+c)",
    reference: "Shimonishi, Hama & Murase, PFLDnet 2006; equations as in seed 002; growth capped at one packet per acked segment (slow start's rate; `cc/areno.rs`)",
    params: param_info,
    build: |v, w| {
        let p: Params = super::parse_params("areno", v)?;
        p.validate()?;
        Ok(Box::new(AReno::new(p, w)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u64 = 1000;

    fn traced(c: &dyn CongestionControl, key: &str) -> f64 {
        c.trace().into_iter().find(|(k, _)| *k == key).unwrap().1
    }

    #[test]
    fn increment_at_c_0_half_1() {
        // alpha = 10 pkt/s, beta = 0.1, W = 100, B/R = 2, RTT = 0.1 s:
        //   c = 0:   (10*2*0.1*e^0 - 0.1*100*0)/100   = (2 - 0)/100          = +0.02
        //   c = 0.5: (2*e^0.5 - 0.1*100*0.5)/100      = (3.297443 - 5)/100   = -0.01702557
        //   c = 1:   (2*e - 0.1*100*1)/100            = (5.436564 - 10)/100  = -0.04563436
        let p = Params::default();
        assert!((window_increment(&p, 100.0, 2.0, 0.1, 0.0) - 0.02).abs() < 1e-12);
        assert!((window_increment(&p, 100.0, 2.0, 0.1, 0.5) + 0.01702557).abs() < 1e-8);
        assert!((window_increment(&p, 100.0, 2.0, 0.1, 1.0) + 0.04563436).abs() < 1e-8);
    }

    #[test]
    fn congestion_level_vectors() {
        // RTT_min 100 ms, RTT_cong 200 ms: RTT 100 -> 0, 150 -> 0.5, 200 -> 1, 250 -> 1.
        assert_eq!(congestion_level(0.100, 0.100, Some(0.200)), 0.0);
        assert!((congestion_level(0.150, 0.100, Some(0.200)) - 0.5).abs() < 1e-12);
        assert!((congestion_level(0.200, 0.100, Some(0.200)) - 1.0).abs() < 1e-12);
        assert_eq!(congestion_level(0.250, 0.100, Some(0.200)), 1.0);
        // Unknown RTT_cong: 0. Degenerate RTT_cong = RTT_min: 1 with queueing, else 0.
        assert_eq!(congestion_level(0.150, 0.100, None), 0.0);
        assert_eq!(congestion_level(0.150, 0.100, Some(0.100)), 1.0);
        assert_eq!(congestion_level(0.100, 0.100, Some(0.100)), 0.0);
    }

    /// One ACK of one segment with an RTT sample, as the sender would deliver it.
    fn ack(c: &mut AReno, w: &mut Window, now: SimTime, rtt_ms: u64, rate_pkts_per_s: f64) {
        let rtt = SimDuration::from_millis(rtt_ms);
        c.on_rtt_sample(rtt, now);
        let rs = RateSample {
            now,
            delivered: (rate_pkts_per_s * MSS as f64 * rtt.as_secs_f64()) as u64,
            interval: rtt,
            rtt: Some(rtt),
            ..RateSample::default()
        };
        c.on_rate_sample(w, &rs);
        let info = AckInfo {
            now,
            acked_bytes: MSS,
            rtt: Some(rtt),
            srtt: Some(rtt),
            min_rtt: None,
            in_flight: w.cwnd,
            cwnd_limited: true,
        };
        c.on_ack(w, &info);
    }

    #[test]
    fn per_ack_update_takes_max_with_reno() {
        // W = W_reno = 50 MSS in avoidance, RTT_min = RTT = 100 ms, B = 1000 pkt/s
        // (the rate before a halving), R = 50/0.1 = 500 pkt/s -> B/R = 2, c = 0
        // (no loss yet): W += 10*2*0.1*1/50 = 0.04 pkt = 40 B; W_reno += 1/50 = 20 B;
        // max -> W = 50040 B.
        let mut w = Window::new(50 * MSS, 50 * MSS, MSS as u32, false, 2);
        let mut c = AReno::new(Params::default(), &w);
        ack(&mut c, &mut w, SimTime(0), 100, 1000.0);
        assert_eq!(w.cwnd, 50_040);
        assert!((traced(&c, "w_reno_bytes") - 50_020.0).abs() < 1e-6);
        // With c = 0.5 the delay term dominates and the Reno floor binds. RTT_cong =
        // 200 ms, RTT 150 ms; B/R = 1000*1000/(50040/0.15) = 2.9976 (R = W/RTT):
        // W += (10*2.9976*0.15*e^0.5 - 0.1*50.04*0.5)/50.04 = (7.4134 - 2.502)/50.04
        //    = +0.0981 pkt -> 50138 B; W_reno += 1/50.02 -> 50040 B; W = 50138 B.
        c.rtt_cong = Some(0.2);
        ack(&mut c, &mut w, SimTime(1), 150, 100.0);
        assert!((traced(&c, "c") - 0.5).abs() < 1e-12);
        assert_eq!(w.cwnd, 50_138);
        // c = 1 (RTT 200 ms) with beta raised to 2 so that the delay term wins:
        // W = 50.138148 pkt, B/R = 1000/(50.138148/0.2) = 3.98898,
        // W += (10*3.98898*0.2*e - 2*50.138*1)/50.138 = (21.686 - 100.276)/50.138
        //    = -1.5675 pkt -> 48.57 pkt, below W_reno = 50.039992 + 1/50.039992
        //    = 50.059976 pkt, so W = W_reno = 50059.98 B (cwnd 50059 B).
        c.p.beta = 2.0;
        ack(&mut c, &mut w, SimTime(2), 200, 100.0);
        assert!((traced(&c, "c") - 1.0).abs() < 1e-12);
        assert_eq!(w.cwnd, 50_059);
        assert!((traced(&c, "w_reno_bytes") - 50_059.98).abs() < 0.01);
    }

    #[test]
    fn growth_is_capped_at_one_packet_per_acked_segment() {
        // The collapse measured on the highspeed sessions: W = W_reno = 3 MSS in
        // avoidance, RTT_min 470 ms, an RTT of 5.47 s, B = 214 pkt/s (10 s max), c = 0.
        // R = 3/5.47 = 0.548 pkt/s, so B/R = 390 and one segment would add
        // 10*390*5.47/3 = 7,115 packets. Capped: +1 per acked segment.
        let mut w = Window::new(3 * MSS, 3 * MSS, MSS as u32, false, 2);
        let mut c = AReno::new(Params::default(), &w);
        c.on_rtt_sample(SimDuration::from_millis(470), SimTime(0));
        ack(&mut c, &mut w, SimTime(1), 5_470, 214.0);
        assert_eq!(w.cwnd, 4 * MSS);
        // A stretch ACK of 28 segments with byte counting: at most +28.
        let mut w = Window::new(3 * MSS, 3 * MSS, MSS as u32, true, 2);
        let mut c = AReno::new(Params::default(), &w);
        c.on_rtt_sample(SimDuration::from_millis(470), SimTime(0));
        ack(&mut c, &mut w, SimTime(1), 5_470, 214.0);
        let info = AckInfo {
            now: SimTime(2),
            acked_bytes: 28 * MSS,
            rtt: Some(SimDuration::from_millis(5_470)),
            srtt: Some(SimDuration::from_millis(5_470)),
            min_rtt: None,
            in_flight: w.cwnd,
            cwnd_limited: true,
        };
        let before = w.cwnd;
        c.on_ack(&mut w, &info);
        assert_eq!(w.cwnd, before + 28 * MSS);
        // Near capacity the equation is below the cap and unchanged: W = 50, B/R = 2,
        // RTT 100 ms: +0.04 per segment (`per_ack_update_takes_max_with_reno`).
        let mut w = Window::new(50 * MSS, 50 * MSS, MSS as u32, true, 2);
        let mut c = AReno::new(Params::default(), &w);
        ack(&mut c, &mut w, SimTime(0), 100, 1000.0);
        assert_eq!(w.cwnd, 50_040);
    }

    #[test]
    fn loss_divides_by_one_plus_c() {
        // RTT_min 100 ms. First loss at RTT 150 ms: RTT_cong = 150 ms (first sample),
        // c = (150-100)/(150-100) = 1 -> W = 100/2 = 50 MSS.
        let mut t = TestSender::new(
            Box::new(AReno::new(
                Params::default(),
                &Window::new(100 * MSS, 0, MSS as u32, false, 2),
            )),
            MSS as u32,
            100,
            false,
        );
        t.w.ssthresh = t.w.cwnd;
        t.round_trip_all(); // RTT_min = 100 ms
        let w0 = t.w.cwnd;
        t.rtt = SimDuration::from_millis(150);
        t.send(1);
        t.ack_n(1); // latest RTT sample 150 ms
        let w1 = t.w.cwnd;
        t.lose();
        assert_eq!(t.w.cwnd, w1 / 2);
        assert!((traced(t.cc.as_ref(), "rtt_cong_s") - 0.150).abs() < 1e-12);
        // Second loss at RTT 125 ms: RTT_cong = 7/8*150 + 1/8*125 = 146.875 ms,
        // c = 25/46.875 = 0.53333 -> W = W/1.53333.
        t.rtt = SimDuration::from_millis(125);
        t.send(1);
        t.ack_n(1);
        let w2 = t.w.cwnd;
        t.lose();
        assert_eq!(t.w.cwnd, (w2 as f64 / (1.0 + 25.0 / 46.875)) as u64);
        assert!((traced(t.cc.as_ref(), "rtt_cong_s") - 0.146875).abs() < 1e-12);
        // A loss without queueing (RTT = RTT_min, c = 0) keeps W: 100/(1+0).
        t.rtt = SimDuration::from_millis(100);
        t.send(1);
        t.ack_n(1);
        let w3 = t.w.cwnd;
        t.lose();
        assert_eq!(t.w.cwnd, w3);
        assert!(w0 > 0);
    }

    #[test]
    fn params_are_checked() {
        let w = Window::new(1, 1, 1, false, 2);
        let e = (ENTRY.build)(&serde_json::json!({"rtt_cong_gain": 0}), &w).err().unwrap();
        assert!(e.contains("rtt_cong_gain = 0"), "{e}");
        let e = (ENTRY.build)(&serde_json::json!({"gamma": 1}), &w).err().unwrap();
        assert!(e.contains("gamma"), "{e}");
    }
}
