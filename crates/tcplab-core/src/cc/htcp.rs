//! H-TCP (Leith & Shorten, "H-TCP: TCP for high-speed and long-distance networks",
//! PFLDnet 2004), as in Linux `net/ipv4/tcp_htcp.c`.
//!
//! With Δ the time since the last congestion event ended (seconds) and Δ_L = 1 s:
//!
//! - `α(Δ) = 1` for Δ <= Δ_L, else `1 + 10(Δ - Δ_L) + ((Δ - Δ_L)/2)^2`.
//! - RTT scaling (Linux `use_rtt_scaling`): `α(Δ) *= RTT_min/RTT_ref`, with
//!   RTT_ref = 100 ms, the ratio clamped to [0.1, 2] and the result to >= 1.
//! - `α = 2(1 - β)α(Δ)`, and `cwnd += α/cwnd` per segment acked.
//! - Adaptive backoff at each congestion event: `β = RTT_min/RTT_max` clamped to
//!   [0.5, 0.8]. β is 0.5 at the first event (Linux `modeswitch`) and when RTT_min is
//!   10 ms or less. With the bandwidth switch (Linux `use_bandwidth_switch`), β is also
//!   0.5 when the maximum throughput B_max moved by more than 20 % since the previous
//!   event.
//! - `ssthresh = max(β*cwnd, 2 MSS)`; the sender sets cwnd = ssthresh when recovery ends.
//! - RTT_max only follows samples within 20 ms of it and fades towards RTT_min by 5 % at
//!   each event. B is measured once per cwnd of ACKs: `B_i = (3B_i + B)/4`, reset in the
//!   first three RTTs after an event (Linux `measure_achieved_throughput`).
//!
//! How it fits the sender: Linux updates β inside `ssthresh` (`htcp_param_update`).
//! Here `ssthresh_after_loss` is pure. It computes the β this event will get, and
//! `on_state_change` applies the update when the sender leaves Open. Either call may come
//! first; while not in Open, `ssthresh_after_loss` uses the β already applied. Δ starts
//! again when the sender returns to Open (Linux `htcp_state(TCP_CA_Open)`).
//!
//! Parameters (`Params`, JSON names):
//! - `use_rtt_scaling` = true, `use_bandwidth_switch` = true (Linux module parameters).
//! - `delta_l` = 1 s: Δ_L, the low-speed period after an event.
//! - `rtt_ref` = 0.1 s: RTT_ref of the RTT scaling.
//! - `beta_min` = 0.5, `beta_max` = 0.8: bounds of the adaptive β.
//!
//! Deviations from Linux:
//! - Floating point. Linux computes α(Δ) in integer jiffies and floors it (Δ = 2 s gives
//!   11, not 11.25).
//! - α is recomputed on every ACK from the current Δ. Linux updates it after each +1
//!   segment and at each event.
//! - Undo restores Δ's origin, RTT_max and the old B_max as they were before the event.
//!   Linux saves them in `htcp_reset`, after `htcp_param_update` has already changed them.
//! - B counts only the ACKs `on_ack` sees in Open. Linux also counts Disorder, which the
//!   sender does not report. ACKs in fast recovery never reach `on_ack`, so the
//!   measurement restarts on return to Open, not at each ACK in recovery.
//! - `build` has no clock, so Δ starts at the first ACK or send. Linux starts it at
//!   `htcp_init`.

use super::{
    reno_additive_increase, slow_start, AckInfo, CaState, CcEntry, CongestionControl,
    ParamInfo, Window,
};
use crate::time::{SimDuration, SimTime};
use serde::Deserialize;

/// RTT_max follows only samples within this of it (Linux `msecs_to_jiffies(20)`).
const MAX_RTT_JUMP: SimDuration = SimDuration::from_millis(20);
/// The RTT-ratio β needs RTT_min above this (Linux `msecs_to_jiffies(10)`).
const MIN_RTT_FOR_RATIO: SimDuration = SimDuration::from_millis(10);
/// RTT_max fades towards RTT_min by this factor at each event (Linux 95/100).
const MAX_RTT_FADE: f64 = 0.95;
/// B is reset rather than averaged within this many RTT_min of an event (Linux).
const BANDWIDTH_RESET_RTTS: f64 = 3.0;

/// H-TCP parameters (JSON object `params` of `{"name": "htcp"}`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Scale α(Δ) by RTT_min/RTT_ref (Linux `use_rtt_scaling`). Default true.
    pub use_rtt_scaling: bool,
    /// β = 0.5 when B_max moved by more than 20 % (Linux `use_bandwidth_switch`).
    /// Default true.
    pub use_bandwidth_switch: bool,
    /// Δ_L, seconds, >= 0. Default 1.
    pub delta_l: f64,
    /// RTT_ref, seconds, > 0. Default 0.1.
    pub rtt_ref: f64,
    /// Lower bound of β, in (0, beta_max]. Default 0.5 (Linux `BETA_MIN`).
    pub beta_min: f64,
    /// Upper bound of β, in [beta_min, 1). Default 0.8 (Linux `BETA_MAX` = 102/128).
    pub beta_max: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            use_rtt_scaling: true,
            use_bandwidth_switch: true,
            delta_l: 1.0,
            rtt_ref: 0.1,
            beta_min: 0.5,
            beta_max: 0.8,
        }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        let e = |field: &str, value: f64, accepted: &str| {
            Err(format!("cc 'htcp' params: {field} = {value}; accepted: {accepted}"))
        };
        if !(self.delta_l >= 0.0 && self.delta_l.is_finite()) {
            return e("delta_l", self.delta_l, "finite delta_l >= 0");
        }
        if !(self.rtt_ref > 0.0 && self.rtt_ref.is_finite()) {
            return e("rtt_ref", self.rtt_ref, "finite rtt_ref > 0");
        }
        if !(self.beta_min > 0.0 && self.beta_min <= self.beta_max) {
            return e("beta_min", self.beta_min, "0 < beta_min <= beta_max");
        }
        if !(self.beta_min..1.0).contains(&self.beta_max) {
            return e("beta_max", self.beta_max, "beta_min <= beta_max < 1");
        }
        Ok(())
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    vec![
        ParamInfo { name: "use_rtt_scaling", unit: "bool", default: flag(d.use_rtt_scaling), doc: "scale alpha by RTT_min/RTT_ref" },
        ParamInfo { name: "use_bandwidth_switch", unit: "bool", default: flag(d.use_bandwidth_switch), doc: "beta = beta_min when B_max moved > 20 %" },
        ParamInfo { name: "delta_l", unit: "s", default: d.delta_l, doc: "low-speed period after a congestion event" },
        ParamInfo { name: "rtt_ref", unit: "s", default: d.rtt_ref, doc: "reference RTT of the RTT scaling" },
        ParamInfo { name: "beta_min", unit: "1", default: d.beta_min, doc: "lower bound of the adaptive backoff" },
        ParamInfo { name: "beta_max", unit: "1", default: d.beta_max, doc: "upper bound of the adaptive backoff" },
    ]
}

/// The outcome of a congestion event's parameter update (Linux `htcp_beta_update`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct BetaUpdate {
    beta: f64,
    modeswitch: bool,
    old_max_b: f64,
}

/// What undo restores (Linux `undo_last_cong`, `undo_maxRTT`, `undo_old_maxB`).
#[derive(Clone, Copy, Debug)]
struct Undo {
    last_cong: SimTime,
    max_rtt: Option<SimDuration>,
    old_max_b: f64,
}

/// Achieved-throughput estimate, segments per second (Linux `Bi`, `minB`, `maxB`).
#[derive(Clone, Copy, Debug, Default)]
struct Throughput {
    bi: f64,
    min_b: f64,
    max_b: f64,
}

/// H-TCP state.
#[derive(Clone, Debug)]
pub struct Htcp {
    p: Params,
    beta: f64,
    /// Use the RTT ratio for β at the next event (Linux `modeswitch`).
    modeswitch: bool,
    /// Δ's origin: the end of the last congestion event; `None` before the first hook.
    last_cong: Option<SimTime>,
    undo: Option<Undo>,
    min_rtt: Option<SimDuration>,
    max_rtt: Option<SimDuration>,
    throughput: Throughput,
    old_max_b: f64,
    /// Segments acked since `lasttime` (Linux `packetcount`).
    packet_count: f64,
    lasttime: Option<SimTime>,
    /// The sender's state as last reported (Linux reads `icsk_ca_state`).
    state: CaState,
}

impl Htcp {
    pub fn new(p: Params) -> Self {
        Htcp {
            beta: p.beta_min,
            p,
            modeswitch: false,
            last_cong: None,
            undo: None,
            min_rtt: None,
            max_rtt: None,
            throughput: Throughput::default(),
            old_max_b: 0.0,
            packet_count: 0.0,
            lasttime: None,
            state: CaState::Open,
        }
    }

    /// Δ, seconds since the last congestion event ended.
    fn delta(&self, now: SimTime) -> f64 {
        self.last_cong.map_or(0.0, |t| now.since(t).as_secs_f64())
    }

    /// α(Δ) = 1 + 10(Δ-Δ_L) + ((Δ-Δ_L)/2)^2 for Δ > Δ_L, else 1 (Leith & Shorten).
    pub fn alpha_of_delta(delta: f64, delta_l: f64) -> f64 {
        if delta > delta_l {
            let d = delta - delta_l;
            1.0 + 10.0 * d + (d / 2.0).powi(2)
        } else {
            1.0
        }
    }

    /// α = 2(1-β)α(Δ), with the RTT scaling (Linux `htcp_alpha_update`).
    fn alpha(&self, now: SimTime) -> f64 {
        let mut factor = Self::alpha_of_delta(self.delta(now), self.p.delta_l);
        if self.p.use_rtt_scaling {
            if let Some(min_rtt) = self.min_rtt {
                // factor *= RTT_min/RTT_ref, the ratio within [0.1, 2], the result >= 1
                let ratio = (min_rtt.as_secs_f64() / self.p.rtt_ref).clamp(0.1, 2.0);
                factor = (factor * ratio).max(1.0);
            }
        }
        2.0 * factor * (1.0 - self.beta)
    }

    /// The β the next congestion event sets (Linux `htcp_beta_update`), without
    /// applying it.
    fn next_beta(&self) -> BetaUpdate {
        let max_b = self.throughput.max_b;
        if self.p.use_bandwidth_switch {
            // between(5*maxB, 4*old_maxB, 6*old_maxB): B_max within +-20 % of its old value
            let old = self.old_max_b;
            if !(4.0 * old <= 5.0 * max_b && 5.0 * max_b <= 6.0 * old) {
                return BetaUpdate { beta: self.p.beta_min, modeswitch: false, old_max_b: max_b };
            }
        }
        match (self.min_rtt, self.max_rtt) {
            (Some(min), Some(max)) if self.modeswitch && min > MIN_RTT_FOR_RATIO => {
                // β = RTT_min/RTT_max within [beta_min, beta_max]
                let beta = (min.as_secs_f64() / max.as_secs_f64())
                    .clamp(self.p.beta_min, self.p.beta_max);
                BetaUpdate { beta, modeswitch: true, old_max_b: max_b }
            }
            _ => BetaUpdate { beta: self.p.beta_min, modeswitch: true, old_max_b: max_b },
        }
    }

    /// Linux `htcp_param_update`, at a congestion event.
    fn param_update(&mut self) {
        let u = self.next_beta();
        self.beta = u.beta;
        self.modeswitch = u.modeswitch;
        self.old_max_b = u.old_max_b;
        // Slowly fading memory of RTT_max: RTT_max = RTT_min + 0.95*(RTT_max - RTT_min)
        if let (Some(min), Some(max)) = (self.min_rtt, self.max_rtt) {
            if max > min {
                let faded = min.as_secs_f64() + MAX_RTT_FADE * (max - min).as_secs_f64();
                self.max_rtt = Some(SimDuration::from_secs_f64(faded));
            }
        }
    }

    /// Linux `measure_achieved_throughput` for one ACK in Open.
    fn measure_throughput(&mut self, w: &Window, ack: &AckInfo) {
        let now = ack.now;
        let lasttime = *self.lasttime.get_or_insert(now);
        self.packet_count += ack.acked_bytes as f64 / w.mss as f64;
        let Some(min_rtt) = self.min_rtt else { return };
        let alpha_segments = self.alpha(now).floor().max(1.0);
        let elapsed = now.since(lasttime);
        if self.packet_count >= w.cwnd_segments() - alpha_segments
            && elapsed >= min_rtt
            && elapsed > SimDuration::ZERO
        {
            let cur = self.packet_count / elapsed.as_secs_f64();
            let just_after_backoff =
                self.delta(now) / min_rtt.as_secs_f64() <= BANDWIDTH_RESET_RTTS;
            let tp = &mut self.throughput;
            if just_after_backoff {
                // just after backoff
                *tp = Throughput { bi: cur, min_b: cur, max_b: cur };
            } else {
                tp.bi = (3.0 * tp.bi + cur) / 4.0;
                tp.max_b = tp.max_b.max(tp.bi);
                tp.min_b = tp.min_b.min(tp.max_b);
            }
            self.packet_count = 0.0;
            self.lasttime = Some(now);
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        self.last_cong.get_or_insert(ack.now);
        if self.state != CaState::Open {
            // Linux counts only Open (and Disorder) ACKs and restarts the measurement.
            self.packet_count = 0.0;
            self.lasttime = Some(ack.now);
        } else if self.p.use_bandwidth_switch {
            self.measure_throughput(w, ack);
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
        // cwnd += α/cwnd per segment acked: α segments per cwnd of bytes acked.
        reno_additive_increase(w, acked, self.alpha(ack.now));
    }

    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        let beta = if self.state == CaState::Open { self.next_beta().beta } else { self.beta };
        ((w.cwnd as f64 * beta).round() as u64).max(2 * w.mss as u64)
    }

    fn on_packet_sent(&mut self, now: SimTime, _bytes: u32, _in_flight: u64) {
        self.last_cong.get_or_insert(now);
    }

    fn on_state_change(&mut self, _w: &mut Window, from: CaState, to: CaState, now: SimTime) {
        self.state = to;
        if to == CaState::Open {
            // Linux htcp_state(TCP_CA_Open): Δ restarts when the event ends (unless undone).
            if self.undo.take().is_some() {
                self.last_cong = Some(now);
            }
            self.packet_count = 0.0;
            self.lasttime = Some(now);
            return;
        }
        // Recovery or Loss: Linux htcp_reset, after the parameter update on a new event.
        let before = Undo {
            last_cong: self.last_cong.unwrap_or(now),
            max_rtt: self.max_rtt,
            old_max_b: self.old_max_b,
        };
        if from == CaState::Open {
            self.param_update();
        }
        self.undo = Some(before);
        self.last_cong = Some(now);
    }

    fn on_rtt_sample(&mut self, rtt: SimDuration, _now: SimTime) {
        // Linux measure_rtt
        let min = self.min_rtt.map_or(rtt, |m| m.min(rtt));
        self.min_rtt = Some(min);
        if self.state == CaState::Open {
            let mut max = self.max_rtt.map_or(min, |m| m.max(min));
            if rtt > max && rtt <= max + MAX_RTT_JUMP {
                max = rtt;
            }
            self.max_rtt = Some(max);
        }
    }

    fn undo(&mut self, _w: &Window) -> Option<u64> {
        // Linux htcp_cwnd_undo: restore Δ's origin, RTT_max and B_max's history; the
        // sender restores cwnd and ssthresh.
        if let Some(u) = self.undo.take() {
            self.last_cong = Some(u.last_cong);
            self.max_rtt = u.max_rtt;
            self.old_max_b = u.old_max_b;
        }
        None
    }

    fn trace(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![("beta", self.beta), ("max_b", self.throughput.max_b)];
        if let Some(m) = self.min_rtt {
            v.push(("min_rtt", m.as_secs_f64()));
        }
        if let Some(m) = self.max_rtt {
            v.push(("max_rtt", m.as_secs_f64()));
        }
        v
    }
}

pub const ENTRY: CcEntry = CcEntry {
    name: "htcp",
    summary: "H-TCP: increase grows with time since the last loss, adaptive backoff",
    reference: "Leith & Shorten, PFLDnet 2004; Linux tcp_htcp.c",
    params: param_info,
    build: |v, _w| {
        let p: Params = super::parse_params("htcp", v)?;
        p.validate()?;
        Ok(Box::new(Htcp::new(p)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u32 = 1000;

    fn trace(t: &TestSender, key: &str) -> Option<f64> {
        t.cc.trace().into_iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    #[test]
    fn alpha_of_delta_by_hand() {
        // Δ = 1 s: not above Δ_L            -> α(Δ) = 1
        // Δ = 2 s: 1 + 10*1 + (1/2)^2       = 1 + 10 + 0.25 = 11.25
        // Δ = 5 s: 1 + 10*4 + (4/2)^2       = 1 + 40 + 4    = 45
        assert_eq!(Htcp::alpha_of_delta(1.0, 1.0), 1.0);
        assert_eq!(Htcp::alpha_of_delta(2.0, 1.0), 11.25);
        assert_eq!(Htcp::alpha_of_delta(5.0, 1.0), 45.0);
    }

    #[test]
    fn alpha_with_beta_and_rtt_scaling() {
        let mut h = Htcp::new(Params::default());
        h.last_cong = Some(SimTime::ZERO);
        let at = |s: u64| SimTime(s * 1_000_000_000);
        // No RTT sample yet: no scaling. β = 0.5: α = 2*(1-0.5)*α(Δ) = α(Δ).
        assert_eq!(h.alpha(at(1)), 1.0);
        assert_eq!(h.alpha(at(2)), 11.25);
        assert_eq!(h.alpha(at(5)), 45.0);
        // β = 0.8: α = 2*0.2*11.25 = 4.5 at Δ = 2 s.
        h.beta = 0.8;
        assert!((h.alpha(at(2)) - 4.5).abs() < 1e-12);
        // RTT scaling, β = 0.5: RTT_min 200 ms -> ratio 2 -> α = 22.5 at Δ = 2 s;
        // RTT_min 10 ms -> ratio 0.1 -> 11.25*0.1 = 1.125; at Δ = 1 s, 1*0.1 -> floor 1.
        h.beta = 0.5;
        h.min_rtt = Some(SimDuration::from_millis(200));
        assert_eq!(h.alpha(at(2)), 22.5);
        h.min_rtt = Some(SimDuration::from_millis(10));
        assert!((h.alpha(at(2)) - 1.125).abs() < 1e-12);
        assert_eq!(h.alpha(at(1)), 1.0);
    }

    #[test]
    fn adaptive_backoff_uses_rtt_ratio_after_first_event() {
        let p = Params { use_bandwidth_switch: false, ..Params::default() };
        let mut t = TestSender::new(Box::new(Htcp::new(p)), MSS, 100, true);
        t.w.ssthresh = t.w.cwnd;
        // RTT samples 80 ms then 100 ms (100 <= 80 + 20): RTT_min 80, RTT_max 100.
        t.rtt = SimDuration::from_millis(80);
        t.send(2);
        t.ack_n(1);
        t.rtt = SimDuration::from_millis(100);
        t.ack_n(1);
        // First event: modeswitch is off, so β = 0.5: ssthresh = 50 segments.
        t.lose();
        assert_eq!(t.w.ssthresh, 50 * MSS as u64);
        // RTT_max faded: 80 + 0.95*(100-80) = 99 ms.
        assert!((trace(&t, "max_rtt").unwrap() - 0.099).abs() < 1e-9);
        // Second event: β = RTT_min/RTT_max = 80/99 = 0.808 -> clamped to 0.8.
        t.w.cwnd = 100 * MSS as u64;
        t.lose();
        assert_eq!(trace(&t, "beta"), Some(0.8));
        assert_eq!(t.w.ssthresh, 80 * MSS as u64);
        // Third: RTT_max faded to 80 + 0.95*19 = 98.05 ms; a 160 ms sample is a jump of
        // more than 20 ms and is ignored, a 110 ms one is kept: β = 80/110 = 0.727.
        t.rtt = SimDuration::from_millis(160);
        t.send(2);
        t.ack_n(1);
        t.rtt = SimDuration::from_millis(110);
        t.ack_n(1);
        assert!((trace(&t, "max_rtt").unwrap() - 0.110).abs() < 1e-9);
        t.w.cwnd = 110 * MSS as u64;
        t.lose();
        // ssthresh = 0.72727 * 110 segments = 80 segments.
        assert!((trace(&t, "beta").unwrap() - 80.0 / 110.0).abs() < 1e-12);
        assert_eq!(t.w.ssthresh, 80 * MSS as u64);
    }

    #[test]
    fn bandwidth_switch_forces_beta_min() {
        let mut h = Htcp::new(Params::default());
        h.modeswitch = true;
        h.min_rtt = Some(SimDuration::from_millis(80));
        h.max_rtt = Some(SimDuration::from_millis(100));
        // B_max 1000 seg/s against an old 1000: within 20 % -> RTT ratio 0.8.
        h.old_max_b = 1000.0;
        h.throughput.max_b = 1000.0;
        assert!((h.next_beta().beta - 0.8).abs() < 1e-12);
        // B_max 1250 (+25 %): 5*1250 = 6250 > 6*1000 -> β = 0.5, modeswitch off.
        h.throughput.max_b = 1250.0;
        assert_eq!(h.next_beta(), BetaUpdate { beta: 0.5, modeswitch: false, old_max_b: 1250.0 });
        // B_max 1200 (+20 %): 6000 <= 6000 -> still the ratio.
        h.throughput.max_b = 1200.0;
        assert!((h.next_beta().beta - 0.8).abs() < 1e-12);
    }

    #[test]
    fn growth_follows_alpha_of_time_since_loss() {
        // 100 ms RTT (ratio 1), β = 0.5 after the first event. Δ restarts at the end of
        // recovery (t = 0). One round trip ending at Δ = 2.0 s grows by α ~ 11.25
        // segments (byte counting: +1 MSS per cwnd/α bytes acked).
        let p = Params { use_bandwidth_switch: false, ..Params::default() };
        let mut t = TestSender::new(Box::new(Htcp::new(p)), MSS, 100, true);
        t.w.ssthresh = t.w.cwnd;
        t.send(100);
        t.lose(); // cwnd 50 segments
        t.in_flight = 0;
        t.fill();
        t.advance(SimDuration::from_millis(2000));
        let before = t.w.cwnd;
        let n = t.in_flight;
        for _ in 0..n {
            t.ack_n(1);
        }
        // Going from cwnd c to c+1 takes c/α segments acked (α = 11.25): the 10 steps
        // from 50 to 60 take (50+...+59)/11.25 = 545/11.25 = 48.4 of the 50 segments
        // acked; the 11th would need 60/11.25 = 5.3 more.
        assert_eq!(t.w.cwnd - before, 10 * MSS as u64);
    }

    #[test]
    fn undo_restores_time_origin() {
        // A spurious event at t = 3 s, then one round trip at cwnd 100 segments, RTT
        // 100 ms (RTT scaling ratio 1, β = 0.5 so α = α(Δ)).
        let run = |undo: bool| {
            let mut t = TestSender::new(Box::new(Htcp::new(Params::default())), MSS, 100, true);
            t.send(1);
            t.advance(SimDuration::from_secs(3));
            t.cc.on_state_change(&mut t.w, CaState::Open, CaState::Recovery, t.now);
            if undo {
                assert!(t.cc.undo(&t.w).is_none()); // the sender restores cwnd itself
            }
            t.cc.on_state_change(&mut t.w, CaState::Recovery, CaState::Open, t.now);
            t.w.ssthresh = t.w.cwnd;
            t.round_trip_all();
            t.w.cwnd / MSS as u64 - 100
        };
        // Not undone: Δ restarts at 3 s and is 0.1 s at the ACKs: α = 1, +1 segment.
        assert_eq!(run(false), 1);
        // Undone: Δ keeps its origin at 0 and is 3.1 s: α = 1 + 10*2.1 + 1.05^2 = 23.1025.
        // Going from cwnd c to c+1 takes c/α segments acked, so the 21 steps from 100 to
        // 121 take (100+101+...+120)/α = 2310/23.1025 = 99.99 segments: the 100 acked
        // segments add 21 (the 22nd would need 121/α = 5.2 more).
        assert_eq!(run(true), 21);
    }
}
