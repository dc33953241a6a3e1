//! Compound TCP (K. Tan, J. Song, Q. Zhang & M. Sridharan, "A Compound TCP Approach
//! for High-speed and Long Distance Networks", IEEE INFOCOM 2006;
//! draft-sridharan-tcpm-ctcp-02, 2008).
//!
//! The send window is the sum of a loss-based Reno window and a delay-based window:
//!
//! ```text
//! win = cwnd + dwnd                                      [packets]
//! per ACK (avoidance):  cwnd += 1/win                    (Reno part, ~1 packet/RTT)
//! per RTT (avoidance):  diff = (win/baseRTT - win/RTT) * baseRTT = win*(1 - baseRTT/RTT)
//!                       dwnd += (alpha*win^k - 1)+         if diff <  gamma
//!                       dwnd  = (dwnd - zeta*diff)+        if diff >= gamma
//! on loss:              cwnd  = cwnd/2,  dwnd = (win*(1-beta) - cwnd/2)+
//!                       so the new win = max(win*(1-beta), cwnd/2)
//! ```
//!
//! **One window, two parts.** The tcplab sender owns a single cwnd. Compound stores the
//! total `win` in `Window::cwnd` and keeps only `dwnd` (bytes) itself; the loss-based
//! part is always derived as `Window::cwnd - dwnd`. Reno growth (`cwnd += MSS*MSS/win`
//! per ACK, or 1 MSS per `win` bytes with byte counting) is added to `Window::cwnd`
//! and so lands on the loss-based part; a dwnd change moves `Window::cwnd` by the same
//! amount. `ssthresh_after_loss` returns the new total `max(win*(1-beta), cwnd/2)`,
//! which the sender installs as cwnd when recovery ends; the matching dwnd is recorded
//! on entering Recovery and applied on returning to Open, so the split is right
//! whichever order the sender calls the hooks in. Whatever else the sender does to the
//! window (RTO, undo, limits) changes the loss-based part; dwnd is clamped so that the
//! loss-based part keeps at least 1 MSS. An RTO zeroes dwnd; `undo` restores the dwnd
//! from before the reduction.
//!
//! dwnd stays 0 in slow start and is updated once per packet-timed round trip in
//! congestion avoidance, from `baseRTT` (minimum RTT ever seen) and `RTT` = the mean of
//! the RTT samples of the round just ended. Per-round sampling restarts each time the
//! sender re-enters Open.
//!
//! Parameters (`Params`), defaults from the paper/draft:
//! - `alpha` = 0.125, `k` = 0.75: dwnd growth `alpha*win^k - 1` packets per RTT
//!   (binomial increase; with k = 0.75 CTCP scales like HighSpeed TCP);
//! - `beta` = 0.5: multiplicative decrease of win on loss;
//! - `gamma` = 30 packets: backlog above which dwnd shrinks (the upper bound of γ when
//!   auto-tuned);
//! - `zeta` = 1: dwnd shrinks by `zeta*diff` packets per RTT;
//! - `gamma_auto` = false, `gamma_low` = 5 packets: optional γ auto-tuning (below).
//!
//! γ auto-tuning (off by default) follows the idea of CTCP-TUBE (Tan et al., "CTCP:
//! Improving TCP-Friendliness over Low-Buffered Network Links", PFLDnet 2008): the
//! backlog `diff` measured in the last round before each loss estimates the flow's
//! share of the bottleneck buffer, and γ is kept below it. The exact constants here are
//! tcplab's choice, not taken from that paper: Q = EWMA of diff at loss (gain 1/8),
//! γ = clamp(3/4 * Q, gamma_low, gamma).
//!
//! Deviations and choices:
//! - Linux never shipped Compound; there is no kernel reference.
//! - The draft's receiver-window cap `win = min(cwnd + dwnd, awnd)` is the sender's.
//! - RTT of a round = mean of its samples (tcplab choice), baseRTT = all-time minimum.
//! - dwnd growth is skipped when the sender is not cwnd-limited (RFC 2861), as Reno
//!   growth is; dwnd decreases are always applied.
//! - The loss reduction uses the window, not FlightSize (tcplab Reno uses FlightSize),
//!   floored at 2 MSS (RFC 5681).

use super::{
    reno_additive_increase, slow_start, AckInfo, CaState, CcEntry, CongestionControl, ParamInfo,
    RoundCounter, Window,
};
use crate::time::{SimDuration, SimTime};
use serde::Deserialize;

/// EWMA gain for the backlog measured at loss (γ auto-tuning; tcplab choice).
pub const GAMMA_BACKLOG_GAIN: f64 = 0.125;
/// γ as a fraction of the smoothed backlog at loss (γ auto-tuning; tcplab choice).
pub const GAMMA_BACKLOG_FRACTION: f64 = 0.75;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Scale of the dwnd increase `alpha*win^k`; default 0.125.
    pub alpha: f64,
    /// Multiplicative decrease of the whole window on loss; default 0.5.
    pub beta: f64,
    /// Exponent of the dwnd increase; default 0.75.
    pub k: f64,
    /// Backlog threshold, packets; default 30. Upper bound of γ when auto-tuned.
    pub gamma: f64,
    /// dwnd decrease per packet of backlog once diff >= γ; default 1.
    pub zeta: f64,
    /// Auto-tune γ from the backlog measured at losses; default false.
    pub gamma_auto: bool,
    /// Lower bound of an auto-tuned γ, packets; default 5.
    pub gamma_low: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            gamma: 30.0,
            zeta: 1.0,
            gamma_auto: false,
            gamma_low: 5.0,
        }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        let checks: [(&str, f64, bool, &str); 6] = [
            ("alpha", self.alpha, self.alpha >= 0.0, "a finite number >= 0"),
            ("beta", self.beta, self.beta > 0.0 && self.beta < 1.0, "0 < beta < 1"),
            ("k", self.k, self.k >= 0.0 && self.k <= 1.0, "0 <= k <= 1"),
            ("gamma", self.gamma, self.gamma >= 0.0, "a finite number >= 0 (packets)"),
            ("zeta", self.zeta, self.zeta >= 0.0, "a finite number >= 0"),
            (
                "gamma_low",
                self.gamma_low,
                self.gamma_low >= 0.0 && self.gamma_low <= self.gamma,
                "0 <= gamma_low <= gamma (packets)",
            ),
        ];
        for (name, v, ok, accepted) in checks {
            if !v.is_finite() || !ok {
                return Err(format!("cc 'compound' params: {name} = {v}; accepted: {accepted}"));
            }
        }
        Ok(())
    }
}

/// Backlog estimate `diff = win*(1 - baseRTT/RTT)`, packets (draft §3, Expected-Actual).
pub fn backlog(win_pkts: f64, base: SimDuration, rtt: SimDuration) -> f64 {
    win_pkts * (1.0 - base.as_nanos() as f64 / rtt.as_nanos().max(1) as f64)
}

/// The once-per-RTT dwnd rule, all in packets.
pub fn next_dwnd(p: &Params, gamma: f64, win: f64, dwnd: f64, diff: f64) -> f64 {
    if diff < gamma {
        // dwnd(t+1) = dwnd(t) + (alpha*win^k - 1)+
        dwnd + (p.alpha * win.powf(p.k) - 1.0).max(0.0)
    } else {
        // dwnd(t+1) = (dwnd(t) - zeta*diff)+
        (dwnd - p.zeta * diff).max(0.0)
    }
}

/// dwnd after a loss, packets: (win*(1-beta) - cwnd/2)+ with cwnd the loss-based part.
pub fn dwnd_after_loss(p: &Params, win: f64, cwnd: f64) -> f64 {
    (win * (1.0 - p.beta) - cwnd / 2.0).max(0.0)
}

#[derive(Clone, Copy, Debug)]
struct LossEvent {
    /// dwnd to install when the sender is back in Open, bytes.
    dwnd_after: u64,
}

#[derive(Debug)]
pub struct Compound {
    p: Params,
    /// Delay-based window, bytes. The loss-based part is `Window::cwnd - dwnd`.
    dwnd: u64,
    /// dwnd before the last reduction, for `undo`.
    dwnd_before_loss: u64,
    /// A fast-retransmit reduction waiting for the return to Open.
    pending: Option<LossEvent>,
    base_rtt: Option<SimDuration>,
    round_sum_ns: u128,
    round_samples: u32,
    rounds: RoundCounter,
    /// Backlog estimate at the last per-RTT update, packets.
    last_diff: f64,
    /// γ in use, packets.
    gamma: f64,
    /// Smoothed backlog at loss events, packets (γ auto-tuning).
    backlog_at_loss: Option<f64>,
}

impl Compound {
    pub fn new(p: Params) -> Self {
        Compound {
            gamma: p.gamma,
            p,
            dwnd: 0,
            dwnd_before_loss: 0,
            pending: None,
            base_rtt: None,
            round_sum_ns: 0,
            round_samples: 0,
            rounds: RoundCounter::default(),
            last_diff: 0.0,
            backlog_at_loss: None,
        }
    }

    /// Keeps the loss-based part at least 1 MSS whatever the sender did to the window.
    fn clamp_dwnd(&mut self, w: &Window) {
        self.dwnd = self.dwnd.min(w.cwnd.saturating_sub(w.mss as u64));
    }

    fn reset_round(&mut self) {
        self.round_sum_ns = 0;
        self.round_samples = 0;
    }

    /// Per-RTT update of dwnd; `may_grow` is false when the sender is not cwnd-limited.
    fn update_dwnd(&mut self, w: &mut Window, rtt: SimDuration, base: SimDuration, may_grow: bool) {
        let mss = w.mss as f64;
        let win = w.cwnd_segments();
        let diff = backlog(win, base, rtt);
        self.last_diff = diff;
        let dwnd_pkts = self.dwnd as f64 / mss;
        let next = next_dwnd(&self.p, self.gamma, win, dwnd_pkts, diff);
        if next > dwnd_pkts && !may_grow {
            return;
        }
        let loss_part = w.cwnd - self.dwnd;
        self.dwnd = (next * mss) as u64;
        w.cwnd = loss_part + self.dwnd;
    }

    fn on_loss_detected(&mut self, w: &Window) {
        self.clamp_dwnd(w);
        let mss = w.mss as f64;
        let win = w.cwnd_segments();
        let loss_part = (w.cwnd - self.dwnd) as f64 / mss;
        let after = dwnd_after_loss(&self.p, win, loss_part);
        self.dwnd_before_loss = self.dwnd;
        self.pending = Some(LossEvent { dwnd_after: (after * mss) as u64 });
        if self.p.gamma_auto {
            let q = match self.backlog_at_loss {
                None => self.last_diff,
                Some(q) => (1.0 - GAMMA_BACKLOG_GAIN) * q + GAMMA_BACKLOG_GAIN * self.last_diff,
            };
            self.backlog_at_loss = Some(q);
            self.gamma = (GAMMA_BACKLOG_FRACTION * q).clamp(self.p.gamma_low, self.p.gamma);
        }
    }
}

impl CongestionControl for Compound {
    fn name(&self) -> &'static str {
        "compound"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        self.clamp_dwnd(w);
        if self.rounds.on_ack(ack.acked_bytes, ack.in_flight) {
            if let (Some(base), false, true) =
                (self.base_rtt, w.in_slow_start(), self.round_samples > 0)
            {
                let mean = SimDuration((self.round_sum_ns / self.round_samples as u128) as u64);
                self.update_dwnd(w, mean, base, ack.cwnd_limited);
            }
            self.reset_round();
        }
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
        // cwnd += 1/win per ACK (draft §3): Window::cwnd holds win.
        reno_additive_increase(w, acked, 1.0);
    }

    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        // New win = cwnd/2 + (win*(1-beta) - cwnd/2)+ = max(win*(1-beta), cwnd/2).
        let dwnd = self.dwnd.min(w.cwnd.saturating_sub(w.mss as u64));
        let loss_part = w.cwnd - dwnd;
        let reduced = (w.cwnd as f64 * (1.0 - self.p.beta)) as u64;
        reduced.max(loss_part / 2).max(2 * w.mss as u64)
    }

    fn on_rto(&mut self, _w: &mut Window, _now: SimTime) {
        self.dwnd = 0;
        self.pending = None;
    }

    fn on_state_change(&mut self, w: &mut Window, from: CaState, to: CaState, _now: SimTime) {
        match (from, to) {
            (CaState::Open, CaState::Recovery) => self.on_loss_detected(w),
            (_, CaState::Loss) => {
                if from == CaState::Open {
                    self.dwnd_before_loss = self.dwnd;
                }
                self.dwnd = 0;
                self.pending = None;
            }
            (_, CaState::Open) => {
                if let Some(loss) = self.pending.take() {
                    self.dwnd = loss.dwnd_after;
                }
                self.clamp_dwnd(w);
                self.rounds.restart();
                self.reset_round();
            }
            _ => {}
        }
    }

    fn on_rtt_sample(&mut self, rtt: SimDuration, _now: SimTime) {
        let rtt = rtt.max(SimDuration(1));
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.round_sum_ns += rtt.as_nanos() as u128;
        self.round_samples = self.round_samples.saturating_add(1);
    }

    fn undo(&mut self, _w: &Window) -> Option<u64> {
        // The sender restores the pre-reduction window; give dwnd back its share.
        self.pending = None;
        self.dwnd = self.dwnd_before_loss;
        None
    }

    fn trace(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("dwnd_bytes", self.dwnd as f64),
            ("diff_pkts", self.last_diff),
            ("gamma_pkts", self.gamma),
            ("base_rtt_s", self.base_rtt.map_or(f64::NAN, |d| d.as_secs_f64())),
        ]
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    vec![
        ParamInfo {
            name: "alpha",
            unit: "-",
            default: d.alpha,
            doc: "scale of the dwnd increase alpha*win^k",
        },
        ParamInfo {
            name: "beta",
            unit: "fraction",
            default: d.beta,
            doc: "decrease of the whole window on loss",
        },
        ParamInfo { name: "k", unit: "-", default: d.k, doc: "exponent of the dwnd increase" },
        ParamInfo {
            name: "gamma",
            unit: "packets",
            default: d.gamma,
            doc: "backlog above which dwnd shrinks (max when auto)",
        },
        ParamInfo {
            name: "zeta",
            unit: "-",
            default: d.zeta,
            doc: "dwnd decrease per packet of backlog",
        },
        ParamInfo {
            name: "gamma_auto",
            unit: "bool",
            default: 0.0,
            doc: "auto-tune gamma from the backlog at loss",
        },
        ParamInfo {
            name: "gamma_low",
            unit: "packets",
            default: d.gamma_low,
            doc: "lower bound of an auto-tuned gamma",
        },
    ]
}

pub const ENTRY: CcEntry = CcEntry {
    name: "compound",
    summary:
        "Compound TCP: Reno window plus a delay-based dwnd (binomial growth, backs off on queueing)",
    reference: "Tan, Song, Zhang & Sridharan, INFOCOM 2006; draft-sridharan-tcpm-ctcp-02",
    params: param_info,
    build: |v, _w| {
        let p: Params = super::parse_params("compound", v)?;
        p.validate()?;
        Ok(Box::new(Compound::new(p)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u64 = 1000;

    fn traced(t: &TestSender, key: &str) -> f64 {
        t.cc.trace().into_iter().find(|(k, _)| *k == key).unwrap().1
    }

    #[test]
    fn backlog_vectors() {
        // win 100, baseRTT 100 ms: RTT 125 ms -> 100*(1 - 0.8) = 20 packets queued;
        // RTT 200 ms -> 100*(1 - 0.5) = 50; RTT = baseRTT -> 0.
        let ms = SimDuration::from_millis;
        assert!((backlog(100.0, ms(100), ms(125)) - 20.0).abs() < 1e-9);
        assert!((backlog(100.0, ms(100), ms(200)) - 50.0).abs() < 1e-9);
        assert_eq!(backlog(100.0, ms(100), ms(100)), 0.0);
    }

    #[test]
    fn dwnd_rule_vectors() {
        let p = Params::default();
        // diff 20 < 30, win 100: alpha*win^k - 1 = 0.125*100^0.75 - 1 = 0.125*31.6228 - 1
        // = 2.952847 -> dwnd 20 -> 22.952847.
        assert!((next_dwnd(&p, 30.0, 100.0, 20.0, 20.0) - 22.952847).abs() < 1e-6);
        // win 1000: 0.125*1000^0.75 - 1 = 0.125*177.828 - 1 = 21.228 packets per RTT.
        assert!((next_dwnd(&p, 30.0, 1000.0, 0.0, 0.0) - 21.228493).abs() < 1e-6);
        // win 10: 0.125*10^0.75 - 1 = 0.703 - 1 < 0 -> no growth (Reno alone grows).
        assert_eq!(next_dwnd(&p, 30.0, 10.0, 4.0, 0.0), 4.0);
        // diff 50 >= 30: dwnd 80 -> 80 - 1*50 = 30; dwnd 20 -> (20 - 50)+ = 0.
        assert_eq!(next_dwnd(&p, 30.0, 100.0, 80.0, 50.0), 30.0);
        assert_eq!(next_dwnd(&p, 30.0, 100.0, 20.0, 50.0), 0.0);
        // diff exactly gamma counts as congestion: 40 - 30 = 10.
        assert_eq!(next_dwnd(&p, 30.0, 100.0, 40.0, 30.0), 10.0);
    }

    #[test]
    fn loss_split_vectors() {
        let p = Params::default();
        // win 100 = cwnd 60 + dwnd 40: dwnd = (100*0.5 - 60/2)+ = 20, cwnd = 30, win 50.
        assert_eq!(dwnd_after_loss(&p, 100.0, 60.0), 20.0);
        // Pure Reno (dwnd 0): (100*0.5 - 50)+ = 0 -> win 50, Reno's halving.
        assert_eq!(dwnd_after_loss(&p, 100.0, 100.0), 0.0);
        // cwnd 100 + dwnd 10 = 110: (55 - 50)+ = 5 -> win 55 = 110*(1-beta).
        assert_eq!(dwnd_after_loss(&p, 110.0, 100.0), 5.0);
    }

    #[test]
    fn dwnd_grows_once_per_rtt_without_queueing() {
        // Byte counting, CA at win = 100 MSS, RTT 100 ms constant.
        let mut t =
            TestSender::new(Box::new(Compound::new(Params::default())), MSS as u32, 100, true);
        t.w.ssthresh = t.w.cwnd;
        // Flight 1 opens the first round; 100 MSS acked -> Reno part +1 MSS = 101000 B.
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 101_000);
        assert_eq!(traced(&t, "dwnd_bytes"), 0.0);
        // First ACK of flight 2 ends the round: diff = 0 < 30, win = 101 packets:
        // dwnd += 0.125*101^0.75 - 1 = 2.982457 packets = 2982 B -> win = 103982 B.
        // The 101000 B acked in flight 2 stay below one window (103982): no Reno step.
        t.round_trip_all();
        assert_eq!(traced(&t, "dwnd_bytes"), 2982.0);
        assert_eq!(t.w.cwnd, 103_982);
    }

    #[test]
    fn dwnd_backs_off_on_queueing_and_splits_on_loss() {
        let mut c = Compound::new(Params::default());
        c.base_rtt = Some(SimDuration::from_millis(100));
        // win 100 MSS of which dwnd 40 MSS; RTT 200 ms: diff = 100*(1-0.5) = 50 >= 30
        // -> dwnd = 40 - 50 -> 0, win = 60 MSS (the loss-based part).
        let mut w = Window::new(100 * MSS, 10 * MSS, MSS as u32, false, 2);
        c.dwnd = 40 * MSS;
        c.update_dwnd(&mut w, SimDuration::from_millis(200), SimDuration::from_millis(100), true);
        assert_eq!(c.dwnd, 0);
        assert_eq!(w.cwnd, 60 * MSS);
        // Loss at win 100 = 60 + 40 with the harness: ssthresh = max(100*0.5, 60/2) = 50
        // MSS; after recovery dwnd = (50 - 30)+ = 20 MSS and the Reno part = 30 MSS.
        let mut c = Compound::new(Params::default());
        c.dwnd = 40 * MSS;
        let mut t = TestSender::new(Box::new(c), MSS as u32, 100, false);
        t.w.ssthresh = t.w.cwnd;
        t.fill();
        t.lose();
        assert_eq!(t.w.cwnd, 50 * MSS);
        assert_eq!(traced(&t, "dwnd_bytes"), 20_000.0);
    }

    #[test]
    fn rto_zeroes_dwnd_and_undo_restores_it() {
        let mut c = Compound::new(Params::default());
        c.dwnd = 40 * MSS;
        let mut t = TestSender::new(Box::new(c), MSS as u32, 100, false);
        t.w.ssthresh = t.w.cwnd;
        t.fill();
        t.rto();
        assert_eq!(t.w.cwnd, MSS);
        assert_eq!(t.w.ssthresh, 50 * MSS); // max(100*0.5, 60/2)
        assert_eq!(traced(&t, "dwnd_bytes"), 0.0);
        let w = t.w.clone();
        assert_eq!(t.cc.undo(&w), None);
        assert_eq!(traced(&t, "dwnd_bytes"), 40_000.0);
    }

    #[test]
    fn gamma_auto_tracks_backlog_at_loss() {
        // Backlog 12 packets before the first loss: Q = 12, gamma = 0.75*12 = 9.
        // Second loss at backlog 4: Q = 7/8*12 + 1/8*4 = 11, gamma = 8.25.
        // Third at backlog 0 several times: gamma floors at gamma_low = 5.
        let p = Params { gamma_auto: true, ..Params::default() };
        let mut c = Compound::new(p);
        let mut w = Window::new(100 * MSS, 10 * MSS, MSS as u32, false, 2);
        c.last_diff = 12.0;
        c.on_state_change(&mut w, CaState::Open, CaState::Recovery, SimTime(0));
        assert!((c.gamma - 9.0).abs() < 1e-12);
        c.on_state_change(&mut w, CaState::Recovery, CaState::Open, SimTime(0));
        c.last_diff = 4.0;
        c.on_state_change(&mut w, CaState::Open, CaState::Recovery, SimTime(0));
        assert!((c.gamma - 8.25).abs() < 1e-12);
        for _ in 0..20 {
            c.last_diff = 0.0;
            c.on_state_change(&mut w, CaState::Open, CaState::Recovery, SimTime(0));
        }
        assert_eq!(c.gamma, 5.0);
    }

    #[test]
    fn params_are_checked() {
        let w = Window::new(1, 1, 1, false, 2);
        let e = (ENTRY.build)(&serde_json::json!({"beta": 1.5}), &w).err().unwrap();
        assert!(e.contains("beta = 1.5"), "{e}");
        let e = (ENTRY.build)(&serde_json::json!({"lambda": 1}), &w).err().unwrap();
        assert!(e.contains("lambda"), "{e}");
        assert!((ENTRY.build)(&serde_json::json!({"gamma_auto": true}), &w).is_ok());
    }
}
