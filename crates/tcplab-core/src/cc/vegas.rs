//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on a
//! Global Internet", IEEE JSAC 13(8), 1995), as restructured by Linux `tcp_vegas.c`.
//!
//! Once per packet-timed round trip, with `RTT` the minimum RTT sample of the last
//! round and `baseRTT` the minimum RTT ever seen:
//!
//! ```text
//! Expected = cwnd/baseRTT,  Actual = cwnd/RTT
//! Diff = (Expected - Actual) * baseRTT = cwnd * (1 - baseRTT/RTT)     [packets]
//! slow start:  Diff > gamma  -> cwnd = min(cwnd, floor(cwnd*baseRTT/RTT) + 1),
//!                               ssthresh = min(ssthresh, cwnd)   (leave slow start)
//! avoidance:   Diff > beta   -> cwnd -= 1 MSS, ssthresh = min(ssthresh, cwnd)
//!              Diff < alpha  -> cwnd += 1 MSS
//!              otherwise        hold
//! ```
//!
//! cwnd never falls below 2 MSS through the Vegas rule. Between round ends, slow start
//! grows per ACK like Reno and congestion avoidance does not grow at all. A round with
//! at most 2 RTT samples (probably delayed ACKs only) falls back to Reno growth, and so
//! does any ACK while Vegas sampling is disabled (outside the Open state; Linux
//! `vegas_disable`). Sampling restarts, with a fresh round, each time the sender
//! re-enters Open (Linux `tcp_vegas_state` -> `vegas_enable`). On loss: ssthresh =
//! max(min(FlightSize, cwnd)/2, 2 MSS): RFC 5681 eq. 4 as tcplab Reno, but with
//! FlightSize capped at cwnd, because a Vegas decrease can leave more data in flight
//! than cwnd and a loss must never raise the window (Linux `tcp_reno_ssthresh` halves
//! cwnd).
//!
//! Parameters (`Params`):
//! - `alpha` = 2 packets: below this many queued packets, cwnd += 1 MSS per RTT;
//! - `beta` = 4 packets: above this many, cwnd -= 1 MSS per RTT;
//! - `gamma` = 1 packet: slow start ends when Diff exceeds it.
//!
//! Deviations:
//! - Diff is the paper's `cwnd*(1 - baseRTT/RTT)`. Linux computes
//!   `cwnd*(RTT - baseRTT)/baseRTT`, which is larger by the factor RTT/baseRTT, and in
//!   integer packets (truncated). Here Diff is a real number.
//! - From the paper: Linux keeps growing every RTT in slow start (the paper grows every
//!   other RTT), measures "Actual" from the ACK rate, and sets cwnd to the actual rate
//!   on leaving slow start; tcplab follows Linux in all three.
//! - Linux adds 1 µs to every RTT sample to avoid zero; tcplab floors samples at 1 ns.
//! - Linux lowers ssthresh to cwnd before flooring cwnd at 2 packets, so its ssthresh
//!   can reach 1 packet; tcplab floors cwnd first, keeping ssthresh >= 2 MSS.
//! - Linux re-initialises Vegas (including baseRTT) when a sender restarts after idle
//!   (`CA_EVENT_TX_START`); the tcplab trait has no idle event, so baseRTT is kept.

use super::{
    reno::Reno, reno_ssthresh, slow_start, AckInfo, CaState, CcEntry, CongestionControl, ParamInfo,
    RoundCounter, Window,
};
use crate::time::{SimDuration, SimTime};
use serde::Deserialize;

/// Vegas thresholds, in packets (Linux module parameters of the same names).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Lower bound of packets queued in the network; default 2 packets.
    pub alpha: f64,
    /// Upper bound of packets queued in the network; default 4 packets.
    pub beta: f64,
    /// Slow-start exit threshold on Diff; default 1 packet.
    pub gamma: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params { alpha: 2.0, beta: 4.0, gamma: 1.0 }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta), ("gamma", self.gamma)] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!(
                    "cc 'vegas' params: {name} = {v}; accepted: a finite number >= 0 (packets)"
                ));
            }
        }
        if self.alpha > self.beta {
            return Err(format!(
                "cc 'vegas' params: alpha = {} exceeds beta = {}; accepted: alpha <= beta",
                self.alpha, self.beta
            ));
        }
        Ok(())
    }
}

/// Whether Vegas samples are being taken (Linux `doing_vegas_now`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// In the Open state: per-RTT Vegas decisions.
    Vegas,
    /// In Recovery or Loss: plain Reno growth, no decisions.
    Reno,
}

#[derive(Debug)]
pub struct Vegas {
    p: Params,
    mode: Mode,
    /// Minimum RTT ever seen (propagation-delay estimate).
    base_rtt: Option<SimDuration>,
    /// Minimum RTT sample in the current round (propagation + queueing).
    round_min_rtt: Option<SimDuration>,
    /// RTT samples in the current round (Linux `cntRTT`).
    round_samples: u32,
    rounds: RoundCounter,
    /// Diff at the last decision, packets (for traces).
    last_diff: f64,
}

impl Vegas {
    pub fn new(p: Params) -> Self {
        Vegas {
            p,
            mode: Mode::Vegas,
            base_rtt: None,
            round_min_rtt: None,
            round_samples: 0,
            rounds: RoundCounter::default(),
            last_diff: 0.0,
        }
    }

    fn enable(&mut self) {
        self.mode = Mode::Vegas;
        self.rounds.restart();
        self.reset_round();
    }

    fn reset_round(&mut self) {
        self.round_samples = 0;
        self.round_min_rtt = None;
    }

    /// The once-per-RTT decision (Linux `tcp_vegas_cong_avoid`, round-end branch).
    fn decide(&mut self, w: &mut Window, acked: u64, base: SimDuration, rtt: SimDuration) {
        let mss = w.mss as u64;
        let cwnd_pkts = w.cwnd_segments();
        let ratio = base.as_nanos() as f64 / rtt.as_nanos() as f64;
        // Diff = cwnd * (1 - baseRTT/RTT)   (Brakmo & Peterson 1995, section 3.2)
        let diff = cwnd_pkts * (1.0 - ratio);
        self.last_diff = diff;
        // Linux clamps cwnd to >= 2 after lowering ssthresh to it; tcplab clamps first
        // so that ssthresh also keeps RFC 5681's 2-MSS floor.
        if diff > self.p.gamma && w.in_slow_start() {
            // Going too fast: set cwnd to the actual rate times baseRTT, +1 for truncation.
            let target_pkts = (cwnd_pkts * ratio).floor() as u64 + 1;
            w.cwnd = w.cwnd.min(target_pkts * mss).max(2 * mss);
            w.ssthresh = w.ssthresh.min(w.cwnd);
        } else if w.in_slow_start() {
            slow_start(w, acked);
        } else if diff > self.p.beta {
            w.cwnd = w.cwnd.saturating_sub(mss).max(2 * mss);
            w.ssthresh = w.ssthresh.min(w.cwnd);
        } else if diff < self.p.alpha {
            w.cwnd += mss;
        }
        w.cwnd = w.cwnd.max(2 * mss);
        // Linux then sets ssthresh = tcp_current_ssthresh() = max(ssthresh, 3/4 cwnd).
        w.ssthresh = w.ssthresh.max(w.cwnd / 2 + w.cwnd / 4);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        if self.mode == Mode::Reno {
            Reno.on_ack(w, ack);
            return;
        }
        if self.rounds.on_ack(ack.acked_bytes, ack.in_flight) {
            match (self.base_rtt, self.round_min_rtt) {
                (Some(base), Some(rtt)) if self.round_samples > 2 => {
                    self.decide(w, ack.acked_bytes, base, rtt)
                }
                // Too few samples to trust (delayed ACKs): behave like Reno.
                _ => Reno.on_ack(w, ack),
            }
            self.reset_round();
        } else if w.in_slow_start() {
            slow_start(w, ack.acked_bytes);
        }
    }

    fn ssthresh_after_loss(&self, w: &Window, in_flight: u64) -> u64 {
        // max(min(FlightSize, cwnd)/2, 2*SMSS)   (RFC 5681 eq. 4, FlightSize capped)
        reno_ssthresh(in_flight.min(w.cwnd), w.mss)
    }

    fn on_state_change(&mut self, _w: &mut Window, _from: CaState, to: CaState, _now: SimTime) {
        if to == CaState::Open {
            self.enable();
        } else {
            self.mode = Mode::Reno;
        }
    }

    fn on_rtt_sample(&mut self, rtt: SimDuration, _now: SimTime) {
        let rtt = rtt.max(SimDuration(1));
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.round_samples = self.round_samples.saturating_add(1);
    }

    fn trace(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("base_rtt_s", self.base_rtt.map_or(f64::NAN, |d| d.as_secs_f64())),
            ("round_min_rtt_s", self.round_min_rtt.map_or(f64::NAN, |d| d.as_secs_f64())),
            ("diff_pkts", self.last_diff),
            ("vegas_enabled", (self.mode == Mode::Vegas) as u8 as f64),
        ]
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    vec![
        ParamInfo {
            name: "alpha",
            unit: "packets",
            default: d.alpha,
            doc: "below this many queued packets, cwnd += 1 MSS per RTT",
        },
        ParamInfo {
            name: "beta",
            unit: "packets",
            default: d.beta,
            doc: "above this many queued packets, cwnd -= 1 MSS per RTT",
        },
        ParamInfo {
            name: "gamma",
            unit: "packets",
            default: d.gamma,
            doc: "slow start ends when Diff exceeds this",
        },
    ]
}

pub const ENTRY: CcEntry = CcEntry {
    name: "vegas",
    summary: "Vegas: hold alpha..beta packets queued, +-1 MSS per RTT by delay",
    reference: "Brakmo & Peterson, IEEE JSAC 13(8) 1995; Linux tcp_vegas.c",
    params: param_info,
    build: |v, _w| {
        let p: Params = super::parse_params("vegas", v)?;
        p.validate()?;
        Ok(Box::new(Vegas::new(p)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u64 = 1000;

    fn sender(iw: u64, in_ca: bool) -> TestSender {
        let mut t = TestSender::new(Box::new(Vegas::new(Params::default())), MSS as u32, iw, false);
        if in_ca {
            t.w.ssthresh = t.w.cwnd;
        }
        t
    }

    #[test]
    fn decision_table_in_congestion_avoidance() {
        // cwnd = 20 packets, baseRTT = 100 ms. Diff = 20*(1 - 100/RTT):
        //   RTT 105 ms: 20*(5/105)  = 0.952 < alpha=2  -> 21 packets
        //   RTT 110 ms: 20*(10/110) = 1.818 < 2        -> 21
        //   RTT 115 ms: 20*(15/115) = 2.609 in [2, 4]  -> 20 (hold)
        //   RTT 125 ms: 20*(25/125) = 4.000, not > 4   -> 20 (hold)
        //   RTT 130 ms: 20*(30/130) = 4.615 > beta=4   -> 19
        for (rtt_ms, want_pkts) in [(105, 21), (110, 21), (115, 20), (125, 20), (130, 19)] {
            let mut v = Vegas::new(Params::default());
            let mut w = Window::new(20 * MSS, 20 * MSS, MSS as u32, false, 2);
            v.decide(&mut w, MSS, SimDuration::from_millis(100), SimDuration::from_millis(rtt_ms));
            assert_eq!(w.cwnd, want_pkts * MSS, "RTT {rtt_ms} ms");
        }
    }

    #[test]
    fn slow_start_exit_sets_cwnd_to_actual_rate() {
        // cwnd = 20, baseRTT 100 ms, RTT 125 ms: Diff = 20*0.2 = 4 > gamma = 1, so
        // cwnd = min(20, floor(20*100/125) + 1) = min(20, 16 + 1) = 17 packets and
        // ssthresh = min(inf, 17) = 17, then max(17, 3/4*17 = 12.75) = 17.
        let mut v = Vegas::new(Params::default());
        let mut w = Window::new(20 * MSS, u64::MAX, MSS as u32, false, 2);
        v.decide(&mut w, MSS, SimDuration::from_millis(100), SimDuration::from_millis(125));
        assert_eq!(w.cwnd, 17 * MSS);
        assert_eq!(w.ssthresh, 17 * MSS);
        assert!(!w.in_slow_start());
        // Diff = 20*(1 - 100/110) = 1.82 > 1 also exits: floor(18.18) + 1 = 19 packets.
        let mut w = Window::new(20 * MSS, u64::MAX, MSS as u32, false, 2);
        v.decide(&mut w, MSS, SimDuration::from_millis(100), SimDuration::from_millis(110));
        assert_eq!(w.cwnd, 19 * MSS);
        // Diff = 20*(1 - 100/104) = 0.77 <= 1: stay in slow start, +1 MSS for this ACK.
        let mut w = Window::new(20 * MSS, u64::MAX, MSS as u32, false, 2);
        v.decide(&mut w, MSS, SimDuration::from_millis(100), SimDuration::from_millis(104));
        assert_eq!(w.cwnd, 21 * MSS);
    }

    #[test]
    fn one_adjustment_per_round_trip_with_the_harness() {
        // CA at 20 packets, RTT 100 ms throughout: no growth inside a round; each
        // round end (first ACK of the next flight) sees Diff = 0 < 2 and adds 1 MSS.
        let mut t = sender(20, true);
        t.round_trip_all(); // opens the first round; no decision yet
        assert_eq!(t.w.cwnd, 20 * MSS);
        t.round_trip_all(); // ends round 1 at its first ACK: 21
        assert_eq!(t.w.cwnd, 21 * MSS);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 22 * MSS);
        // Queueing: RTT 130 ms. The next round end still uses round 3's 100 ms
        // samples (+1 -> 23); the one after sees only 130 ms samples:
        // Diff = 23*(1 - 100/130) = 5.31 > 4 -> 22.
        t.rtt = SimDuration::from_millis(130);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 23 * MSS);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 22 * MSS);
    }

    #[test]
    fn slow_start_exits_on_queueing_with_the_harness() {
        // IW 10, slow start, RTT 100 ms: per-ACK slow start doubles each flight (round
        // ends grow through slow start too, as in Linux): 10 -> 20 -> 40.
        let mut t = sender(10, false);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 20 * MSS);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 40 * MSS);
        // RTT becomes 150 ms. The round that ends on this flight's first ACK still holds
        // the previous flight's 100 ms samples (min = 100 ms, Diff = 0): 40 -> 80.
        t.rtt = SimDuration::from_millis(150);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 80 * MSS);
        assert!(t.w.in_slow_start());
        // Next round end: min RTT 150 ms, Diff = 80*(1 - 100/150) = 26.7 > gamma = 1 ->
        // cwnd = min(80, floor(80*100/150) + 1) = floor(53.3) + 1 = 54 packets,
        // ssthresh = 54; the rest of the flight is congestion avoidance (no growth).
        t.round_trip_all();
        assert!(!t.w.in_slow_start());
        assert_eq!(t.w.cwnd, 54 * MSS);
        assert_eq!(t.w.ssthresh, 54 * MSS);
    }

    #[test]
    fn few_samples_fall_back_to_reno() {
        // Stretch ACKs of 10 segments. The RTT sample of an ACK is counted before the
        // ACK is processed, as Linux calls pkts_acked before cong_avoid.
        let mut t = sender(20, true);
        t.send(20);
        t.ack_n(10); // opens a round ending after 10 + 10 outstanding = 20 segments; 1 sample
        t.ack_n(10); // 20 acked, not past the mark; 2 samples
        t.send(20);
        t.ack_n(10); // 30 > 20 ends the round with 3 samples: Diff = 0 < 2 -> 21 MSS
        assert_eq!(t.w.cwnd, 21 * MSS);
        t.ack_n(10); // new round (mark 30 + 10 = 40): 40 not past it; 1 sample
        t.send(20);
        t.ack_n(10); // 50 > 40 ends it with only 2 samples -> Reno:
                     // +MSS*MSS/cwnd = 1000*1000/21000 = 47 B
        assert_eq!(t.w.cwnd, 21 * MSS + 47);
    }

    #[test]
    fn loss_halves_flight_capped_at_cwnd_and_reenables_vegas() {
        let mut t = sender(20, true);
        t.fill();
        assert_eq!(t.cc.ssthresh_after_loss(&t.w, 20 * MSS), 10 * MSS);
        // 30 MSS in flight after a Vegas decrease to 20: min(30, 20)/2 = 10 MSS, not 15.
        assert_eq!(t.cc.ssthresh_after_loss(&t.w, 30 * MSS), 10 * MSS);
        t.lose(); // FlightSize 20 MSS -> ssthresh = cwnd = 10 MSS
        assert_eq!(t.w.cwnd, 10 * MSS);
        // Back in Open, Vegas sampling is enabled again with a fresh round.
        assert!(t.cc.trace().contains(&("vegas_enabled", 1.0)));
    }

    #[test]
    fn params_reject_alpha_above_beta() {
        let e = (ENTRY.build)(
            &serde_json::json!({"alpha": 5, "beta": 4}),
            &Window::new(1, 1, 1, false, 2),
        );
        assert!(e.err().unwrap().contains("alpha"));
        let e = (ENTRY.build)(&serde_json::json!({"delta": 1}), &Window::new(1, 1, 1, false, 2));
        assert!(e.err().unwrap().contains("delta"));
    }
}
