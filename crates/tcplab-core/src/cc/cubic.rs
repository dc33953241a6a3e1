//! CUBIC congestion control (RFC 9438; Linux `net/ipv4/tcp_cubic.c`), leaving the first
//! slow start with Linux HyStart (Ha & Rhee, "Taming the elephants", 2011; Linux
//! `hystart_update`) or with HyStart++ (RFC 9406).
//!
//! Windows below are in segments, times in seconds.
//!
//! - `W_cubic(t) = C*(t-K)^3 + W_max` (RFC 9438, Eq. 1), where t runs from the start of
//!   the epoch: the first ACK in congestion avoidance after a loss (or after slow start
//!   ended without one).
//! - `K = cbrt((W_max - cwnd_epoch)/C)` (RFC 9438, Eq. 2). After a loss at W_max,
//!   cwnd_epoch = beta*W_max, so K = cbrt(W_max*(1-beta)/C).
//! - Per ACK, `target = W_cubic(t + RTT)` clamped to `[cwnd, 1.5*cwnd]`, and cwnd grows by
//!   `(target - cwnd)/cwnd` per segment acked (RFC 9438 §4.2). W(t) itself holds no RTT;
//!   RTT is the smoothed RTT (RFC 9438 §4.1.2), the minimum RTT when there is none.
//! - Reno-friendly region (RFC 9438 §4.3): `W_est += alpha*segments_acked/cwnd` with
//!   `alpha_cubic = 3*(1-beta)/(1+beta)` (Eq. 4), and alpha = 1 once `W_est >= cwnd_prior`.
//!   While `W_cubic(t) < W_est`, cwnd grows by `W_est - cwnd` per RTT.
//! - Congestion event (RFC 9438 §4.6, §4.7): `ssthresh = max(beta*cwnd, 2 MSS)`.
//!   `W_max = cwnd`, or with fast convergence `cwnd*(1+beta)/2` when cwnd is below the
//!   previous W_max.
//! - Timeout: W_max is updated like any congestion event and then kept (see below).
//!
//! How it fits the sender: `ssthresh_after_loss` returns beta*cwnd. The sender sets
//! cwnd = ssthresh when recovery ends, so the result is Linux's `cwnd = beta*cwnd` (Linux
//! `tcp_end_cwnd_reduction`). W_max is recorded in `on_state_change` when the sender
//! leaves Open, because `ssthresh_after_loss` is pure. The cwnd used there is the larger
//! of `w.cwnd` and the cwnd seen at the last ACK or state change, so it is the pre-loss
//! cwnd even when the sender has already cut cwnd (the RTO path does this).
//!
//! Parameters (`Params`, JSON names):
//! - `beta` = 0.7, dimensionless: multiplicative decrease (RFC 9438 §4.6).
//! - `c` = 0.4, segments/s^3: aggressiveness (RFC 9438 §5.1).
//! - `fast_convergence` = true (RFC 9438 §4.7).
//! - `reno_friendly` = true: the Reno-friendly region (Linux `tcp_friendliness`).
//! - `hystart` = true: Linux HyStart (ACK train and delay increase).
//! - `hystart_plus_plus` = false: RFC 9406 HyStart++ instead of Linux HyStart.
//! - `hystart_low_window` = 16, segments: smallest cwnd at which HyStart acts.
//! - `hystart_ack_delta_us` = 2000, microseconds: largest ACK spacing in an ACK train.
//! - `rto_resets_w_max` = false: forget W_max on RTO, as Linux and RFC 9438 §4.8 do
//!   (under `linux_cc` Linux's reset always runs, whatever this says).
//!
//! Deviations from RFC 9438 or Linux:
//! - Reno-friendly region: cwnd grows towards W_est by `W_est - cwnd` per RTT when that
//!   beats the cubic increase, as Linux does. RFC 9438 §4.3 sets cwnd = W_est at once.
//!   The gap is below one segment, because W_est grows at most 1 segment per RTT.
//! - ssthresh multiplies cwnd, as Linux does, not FlightSize.
//! - Under `linux_cc` (the `linux` profile) congestion avoidance, W_max, ssthresh and
//!   the timeout's reset are Linux's own integer arithmetic (`cc/cubic_linux.rs`:
//!   `bictcp_update`, jiffies, whole packets), and the items below that name Linux do
//!   not apply; HyStart, `delay_min` and the idle shift stay here. Otherwise:
//! - Floating-point W(t) in real time; Linux uses a fixed-point cube root and jiffies.
//!   beta is 0.7, where Linux uses 717/1024. The increase is recomputed on every ACK;
//!   Linux does it at most once per jiffy.
//! - The RTT added to t is the smoothed RTT (RFC 9438 §4.2). Linux adds `delay_min`.
//! - alpha switches to 1 once `W_est >= cwnd_prior` (RFC 9438 §4.3). Linux keeps
//!   alpha_cubic.
//! - Without a known W_max (slow start ended with no loss), K = 0 and W_max = cwnd_epoch,
//!   as RFC 9438 §4.10 says. Linux then also grows at least 5 % per RTT (`cnt` at most
//!   20); tcplab does not.
//! - By default W_max survives an RTO (`rto_resets_w_max` = false). Linux zeroes it in
//!   `bictcp_reset`, and RFC 9438 §4.8 restarts with K = 0. HyStart state and `delay_min`
//!   are reset on RTO, as in Linux.
//! - Idle periods move the epoch start forward (Linux `CA_EVENT_TX_START`, RFC 9438
//!   §5.8). The idle time runs from the ACK that emptied the pipe. Linux counts from the
//!   last send, which also counts the RTT in which the last flight was outstanding.
//! - HyStart's ACK train (Linux `hystart_update`, `hystart_ack_delay`): with `linux_cc`
//!   (the `linux` profile) as Linux 5.7 and later run it: the threshold is `delay_min +
//!   hystart_ack_delay`, halved when the flow is not paced (`SK_PACING_NONE`, the
//!   default without the fq qdisc) and whole when it is (`Window::paced`). The cushion
//!   `hystart_ack_delay` is `min(1 ms, 4 * GSO size / sk_pacing_rate)`, 0 while the
//!   rate is unknown; Linux keeps `sk_pacing_rate` for unpaced flows too
//!   (`tcp_update_pacing_rate`, `Window::pacing_rate`), so an unpaced flow's threshold
//!   is `(delay_min + cushion)/2`. The GSO size is the legacy 64 KB (`GSO_MAX_SIZE`;
//!   Linux 6.3+ reads the device's `gso_max_size` less `MAX_TCP_HEADER + 1`); the 1 ms
//!   cap binds below 262 MB/s of pacing either way. Without `linux_cc` the threshold
//!   is `delay_min/2`, as before Linux 5.7 (and the HyStart paper). Rounds are counted in acked bytes
//!   (`RoundCounter`), not in sequence numbers. RTT samples come from `on_rtt_sample`.
//!   Linux has one per ACK; the delay test needs 8 per round, so it can only fire with a
//!   sender that samples every ACK (the testkit does).
//! - HyStart++: the slow-start cap L is the sender's `abc_limit`, where RFC 9406 §4.3
//!   recommends 8 without pacing. The delay test runs before this ACK's growth, as in
//!   Linux HyStart. HyStart++ is used only in the first slow start (RFC 9406 §4).

use super::cubic_linux::{self, LinuxCubic};
use super::{
    cong_avoid_ai, reno_additive_increase, slow_start, AckInfo, CaState, CcEntry, CongestionControl,
    ParamInfo, RateSample, RoundCounter, Window,
};
use crate::time::{SimDuration, SimTime};
use serde::Deserialize;

/// HyStart: RTT samples per round before the delay test (Linux `HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u32 = 8;
/// Lower clamp of the delay-increase threshold (Linux `HYSTART_DELAY_MIN`, RFC 9406
/// `MIN_RTT_THRESH`).
const DELAY_THRESH_MIN: SimDuration = SimDuration::from_millis(4);
/// Upper clamp of the delay-increase threshold (Linux `HYSTART_DELAY_MAX`, RFC 9406
/// `MAX_RTT_THRESH`).
const DELAY_THRESH_MAX: SimDuration = SimDuration::from_millis(16);
/// The threshold is the base RTT divided by this (Linux `>> 3`, RFC 9406 `MIN_RTT_DIVISOR`).
const DELAY_THRESH_DIVISOR: u64 = 8;
/// Delay samples are ignored this long after an epoch starts (Linux `cubictcp_acked`).
const DELAY_SAMPLE_HOLDOFF: SimDuration = SimDuration::from_secs(1);
/// The GSO size in `hystart_ack_delay`: Linux's legacy `GSO_MAX_SIZE` (64 KB).
const HYSTART_GSO_BYTES: u64 = 65_536;
/// Cap of `hystart_ack_delay` (Linux `USEC_PER_MSEC`).
const HYSTART_ACK_DELAY_MAX: SimDuration = SimDuration::from_millis(1);

/// Linux `hystart_ack_delay`: a cushion for TSO/GRO aggregation, `min(1 ms, 4 *
/// GSO_MAX_SIZE / sk_pacing_rate)` in whole microseconds; 0 when there is no rate.
/// `pacing_rate` in bytes/s, `u64::MAX` when unknown (Linux `~0UL`).
pub fn hystart_ack_delay(pacing_rate: u64) -> SimDuration {
    if pacing_rate == 0 {
        return SimDuration(0);
    }
    let us = (HYSTART_GSO_BYTES as u128 * 4 * 1_000_000 / pacing_rate as u128) as u64;
    SimDuration::from_micros(us).min(HYSTART_ACK_DELAY_MAX)
}

/// The ACK-train threshold of Linux `hystart_update`: ACKs closely spaced for longer
/// than this since the round began end slow start. With `linux_cc` (Linux 5.7+):
/// `delay_min + hystart_ack_delay`, halved unless the flow is paced. Without:
/// `delay_min/2` (Linux before 5.7).
pub fn hystart_ack_train_threshold(delay_min: SimDuration, w: &Window) -> SimDuration {
    if !w.linux_cc {
        return SimDuration(delay_min.0 / 2);
    }
    let t = delay_min + hystart_ack_delay(w.pacing_rate);
    if w.paced { t } else { SimDuration(t.0 / 2) }
}

/// RFC 9406 §4.3: RTT samples per round before a decision.
const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS grows cwnd this many times slower than slow start.
const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: CSS rounds before congestion avoidance.
const CSS_ROUNDS: u32 = 5;

/// CUBIC parameters (JSON object `params` of `{"name": "cubic"}`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// beta_cubic, the multiplicative decrease factor, dimensionless, in (0, 1).
    /// Default 0.7 (RFC 9438 §4.6; Linux `beta` = 717/1024).
    pub beta: f64,
    /// C, segments/s^3, > 0. Default 0.4 (RFC 9438 §5.1; Linux `bic_scale` = 41).
    pub c: f64,
    /// Fast convergence (RFC 9438 §4.7). Default true.
    pub fast_convergence: bool,
    /// Reno-friendly region (RFC 9438 §4.3; Linux `tcp_friendliness`). Default true.
    pub reno_friendly: bool,
    /// Linux HyStart: ACK train and delay increase (Linux `hystart`). Default true.
    pub hystart: bool,
    /// HyStart++ (RFC 9406) instead of Linux HyStart; wins if both are set. Default false.
    pub hystart_plus_plus: bool,
    /// Linux HyStart acts only when cwnd is at least this, segments (Linux
    /// `hystart_low_window`). Default 16.
    pub hystart_low_window: u32,
    /// Largest spacing between ACKs of one ACK train, microseconds (Linux
    /// `hystart_ack_delta_us`). Default 2000.
    pub hystart_ack_delta_us: u64,
    /// Forget W_max on RTO, as Linux `bictcp_reset` and RFC 9438 §4.8 do. Default
    /// false: W_max is kept across an RTO.
    pub rto_resets_w_max: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            beta: 0.7,
            c: 0.4,
            fast_convergence: true,
            reno_friendly: true,
            hystart: true,
            hystart_plus_plus: false,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            rto_resets_w_max: false,
        }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("cc 'cubic' params: beta = {}; accepted: 0 < beta < 1", self.beta));
        }
        if !(self.c > 0.0 && self.c.is_finite()) {
            return Err(format!("cc 'cubic' params: c = {}; accepted: finite c > 0", self.c));
        }
        Ok(())
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    vec![
        ParamInfo { name: "beta", unit: "1", default: d.beta, doc: "multiplicative decrease beta_cubic" },
        ParamInfo { name: "c", unit: "segments/s^3", default: d.c, doc: "cubic scaling constant C" },
        ParamInfo { name: "fast_convergence", unit: "bool", default: flag(d.fast_convergence), doc: "W_max = cwnd*(1+beta)/2 on a loss below the previous W_max" },
        ParamInfo { name: "reno_friendly", unit: "bool", default: flag(d.reno_friendly), doc: "Reno-friendly region (RFC 9438 §4.3)" },
        ParamInfo { name: "hystart", unit: "bool", default: flag(d.hystart), doc: "Linux HyStart: ACK train and delay increase" },
        ParamInfo { name: "hystart_plus_plus", unit: "bool", default: flag(d.hystart_plus_plus), doc: "RFC 9406 HyStart++ instead of Linux HyStart" },
        ParamInfo { name: "hystart_low_window", unit: "segments", default: d.hystart_low_window as f64, doc: "smallest cwnd at which Linux HyStart acts" },
        ParamInfo { name: "hystart_ack_delta_us", unit: "us", default: d.hystart_ack_delta_us as f64, doc: "largest ACK spacing in an ACK train" },
        ParamInfo { name: "rto_resets_w_max", unit: "bool", default: flag(d.rto_resets_w_max), doc: "forget W_max on RTO (RFC 9438 §4.8); the linux profile always does, as Linux" },
    ]
}

/// One congestion-avoidance epoch (RFC 9438 §4.2).
#[derive(Clone, Debug)]
struct Epoch {
    /// Time origin of W_cubic: the first ACK in congestion avoidance, shifted forward
    /// by idle periods.
    start: SimTime,
    /// K, seconds (Eq. 2).
    k: f64,
    /// The plateau W_max of Eq. 1 for this epoch, segments.
    origin: f64,
    /// W_est, segments (RFC 9438 §4.3).
    w_est: f64,
}

impl Epoch {
    fn new(start: SimTime, cwnd_epoch: f64, w_max: Option<f64>, c: f64) -> Self {
        match w_max {
            // K = cbrt((W_max - cwnd_epoch)/C)   (RFC 9438, Eq. 2)
            Some(m) if m > cwnd_epoch => {
                Epoch { start, k: ((m - cwnd_epoch) / c).cbrt(), origin: m, w_est: cwnd_epoch }
            }
            // At or above W_max, or W_max unknown: K = 0, W_max = cwnd_epoch (RFC 9438 §4.10).
            _ => Epoch { start, k: 0.0, origin: cwnd_epoch, w_est: cwnd_epoch },
        }
    }

    /// W_cubic(t) = C*(t-K)^3 + W_max   (RFC 9438, Eq. 1), t in seconds since `start`.
    fn w_cubic(&self, t: f64, c: f64) -> f64 {
        c * (t - self.k).powi(3) + self.origin
    }
}

/// The delay-increase threshold `clamp(base/8, 4 ms, 16 ms)` (Linux
/// `HYSTART_DELAY_THRESH`, RFC 9406 `RttThresh`).
fn delay_threshold(base: SimDuration) -> SimDuration {
    SimDuration(base.0 / DELAY_THRESH_DIVISOR).clamp(DELAY_THRESH_MIN, DELAY_THRESH_MAX)
}

/// Linux HyStart state (`struct bictcp`: `found`, `round_start`, `last_ack`,
/// `curr_rtt`, `sample_cnt`).
#[derive(Clone, Debug, Default)]
struct HyStart {
    found: bool,
    /// Start of the current round; `None` until the first ACK opens one.
    round_start: Option<SimTime>,
    last_ack: SimTime,
    /// Minimum RTT in the current round.
    curr_rtt: Option<SimDuration>,
    sample_cnt: u32,
}

impl HyStart {
    fn start_round(&mut self, now: SimTime) {
        self.round_start = Some(now);
        self.last_ack = now;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// Linux `hystart_update` for one RTT sample; true when slow start must end now.
    fn on_sample(
        &mut self,
        now: SimTime,
        delay: SimDuration,
        delay_min: SimDuration,
        ack_delta: SimDuration,
        train_threshold: SimDuration,
    ) -> bool {
        // ACK train: closely spaced ACKs spanning more than `train_threshold`
        // (`hystart_ack_train_threshold`).
        if now.since(self.last_ack) <= ack_delta {
            self.last_ack = now;
            let round_start = self.round_start.unwrap_or(now);
            if now.since(round_start) > train_threshold {
                self.found = true;
            }
        }
        // Delay increase: the round's minimum RTT exceeds delay_min + clamp(delay_min/8).
        let curr = self.curr_rtt.map_or(delay, |c| c.min(delay));
        self.curr_rtt = Some(curr);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if curr > delay_min + delay_threshold(delay_min) {
            self.found = true;
        }
        self.found
    }
}

/// HyStart++ phases (RFC 9406 §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
enum PlusPlusPhase {
    /// Standard slow start with the delay-increase test.
    SlowStart,
    /// Conservative Slow Start after a delay increase.
    Css { baseline_min_rtt: SimDuration, rounds: u32 },
    /// The first slow start is over; later slow starts are standard (RFC 9406 §4).
    Done,
}

#[derive(Clone, Debug)]
struct HyStartPlusPlus {
    phase: PlusPlusPhase,
    last_round_min_rtt: Option<SimDuration>,
    current_round_min_rtt: Option<SimDuration>,
    rtt_sample_count: u32,
}

impl HyStartPlusPlus {
    fn new() -> Self {
        HyStartPlusPlus {
            phase: PlusPlusPhase::SlowStart,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
        }
    }

    /// The start of a round. Returns true when CSS_ROUNDS rounds of CSS have completed
    /// and congestion avoidance must begin.
    fn start_round(&mut self) -> bool {
        self.last_round_min_rtt = self.current_round_min_rtt.take();
        self.rtt_sample_count = 0;
        if let PlusPlusPhase::Css { rounds, .. } = &mut self.phase {
            *rounds += 1;
            if *rounds >= CSS_ROUNDS {
                self.phase = PlusPlusPhase::Done;
                return true;
            }
        }
        false
    }

    fn on_sample(&mut self, rtt: SimDuration) {
        let current = self.current_round_min_rtt.map_or(rtt, |c| c.min(rtt));
        self.current_round_min_rtt = Some(current);
        self.rtt_sample_count += 1;
        if self.rtt_sample_count < N_RTT_SAMPLE {
            return;
        }
        match self.phase {
            PlusPlusPhase::SlowStart => {
                if let Some(last) = self.last_round_min_rtt {
                    // RttThresh = clamp(lastRoundMinRTT/8, 4 ms, 16 ms)   (RFC 9406 §4.2)
                    if current >= last + delay_threshold(last) {
                        self.phase =
                            PlusPlusPhase::Css { baseline_min_rtt: current, rounds: 0 };
                    }
                }
            }
            PlusPlusPhase::Css { baseline_min_rtt, .. } => {
                // A lower RTT means the exit was spurious: resume slow start.
                if current < baseline_min_rtt {
                    self.phase = PlusPlusPhase::SlowStart;
                }
            }
            PlusPlusPhase::Done => {}
        }
    }
}

/// How slow start ends before ssthresh or a loss.
#[derive(Clone, Debug)]
enum SlowStartExit {
    Standard,
    HyStart(HyStart),
    HyStartPlusPlus(HyStartPlusPlus),
}

/// CUBIC state.
#[derive(Clone, Debug)]
pub struct Cubic {
    p: Params,
    /// alpha_cubic = 3*(1-beta)/(1+beta)   (RFC 9438, Eq. 4)
    alpha_cubic: f64,
    /// W_max, segments; `None` before the first congestion event.
    w_max: Option<f64>,
    /// cwnd at the last congestion event, segments (RFC 9438 `cwnd_prior`).
    cwnd_prior: Option<f64>,
    /// The current congestion-avoidance epoch; `None` until its first ACK.
    epoch: Option<Epoch>,
    exit: SlowStartExit,
    /// Minimum RTT for HyStart (Linux `delay_min`).
    delay_min: Option<SimDuration>,
    /// The RTT sample reported since the last ACK, for HyStart.
    pending_sample: Option<SimDuration>,
    /// Rounds for HyStart (Linux `end_seq`, RFC 9406 `windowEnd`).
    rounds: RoundCounter,
    /// When an ACK emptied the pipe (for the idle shift of the epoch).
    pipe_empty_since: Option<SimTime>,
    /// cwnd at the last ACK or state change, bytes (the pre-loss cwnd at an RTO).
    cwnd_seen: u64,
    /// Under `linux_cc`: Linux's own arithmetic (`cc/cubic_linux.rs`) in place of the
    /// real-valued curve, W_max and W_est above.
    linux: Option<LinuxCubic>,
}

impl Cubic {
    pub fn new(p: Params, w: &Window) -> Self {
        let exit = if p.hystart_plus_plus {
            SlowStartExit::HyStartPlusPlus(HyStartPlusPlus::new())
        } else if p.hystart {
            SlowStartExit::HyStart(HyStart::default())
        } else {
            SlowStartExit::Standard
        };
        let linux = w.linux_cc.then(|| LinuxCubic::new(cubic_linux::Constants::new(p.beta, p.c), p.reno_friendly));
        Cubic {
            alpha_cubic: 3.0 * (1.0 - p.beta) / (1.0 + p.beta),
            p,
            w_max: None,
            cwnd_prior: None,
            epoch: None,
            exit,
            delay_min: None,
            pending_sample: None,
            rounds: RoundCounter::default(),
            pipe_empty_since: None,
            cwnd_seen: w.cwnd,
            linux,
        }
    }

    /// Linux discards delay samples for 1 s after an epoch starts (after recovery).
    fn holding_off(&self, now: SimTime) -> bool {
        match &self.linux {
            Some(l) => l.in_first_second(cubic_linux::jiffies(now)),
            None => self.epoch.as_ref().is_some_and(|e| now.since(e.start) < DELAY_SAMPLE_HOLDOFF),
        }
    }

    /// HyStart / HyStart++ bookkeeping for one ACK; may end slow start by setting
    /// ssthresh = cwnd.
    fn slow_start_exit(
        &mut self,
        w: &mut Window,
        now: SimTime,
        new_round: bool,
        sample: Option<SimDuration>,
    ) {
        let in_slow_start = w.in_slow_start();
        match &mut self.exit {
            SlowStartExit::Standard => {}
            SlowStartExit::HyStart(h) => {
                if new_round || h.round_start.is_none() {
                    h.start_round(now);
                }
                let cwnd_segments = w.cwnd / w.mss as u64;
                if h.found || !in_slow_start || cwnd_segments < self.p.hystart_low_window as u64 {
                    return;
                }
                if let (Some(delay), Some(delay_min)) = (sample, self.delay_min) {
                    let ack_delta = SimDuration::from_micros(self.p.hystart_ack_delta_us);
                    let threshold = hystart_ack_train_threshold(delay_min, w);
                    if h.on_sample(now, delay, delay_min, ack_delta, threshold) {
                        w.ssthresh = w.cwnd;
                    }
                }
            }
            SlowStartExit::HyStartPlusPlus(h) => {
                if h.phase == PlusPlusPhase::Done {
                    return;
                }
                if !in_slow_start {
                    h.phase = PlusPlusPhase::Done;
                    return;
                }
                if new_round && h.start_round() {
                    // CSS_ROUNDS rounds of CSS done: enter congestion avoidance.
                    w.ssthresh = w.cwnd;
                    return;
                }
                if let Some(rtt) = sample {
                    h.on_sample(rtt);
                }
            }
        }
    }

    /// Slow-start growth; returns the acked bytes left for congestion avoidance.
    fn grow_slow_start(&mut self, w: &mut Window, acked: u64) -> u64 {
        if let SlowStartExit::HyStartPlusPlus(h) = &self.exit {
            if matches!(h.phase, PlusPlusPhase::Css { .. }) {
                // cwnd += min(N, L*SMSS) / CSS_GROWTH_DIVISOR   (RFC 9406 §4.2)
                let limit = if w.byte_counting { w.abc_limit as u64 } else { 1 } * w.mss as u64;
                let grow = acked.min(limit) / CSS_GROWTH_DIVISOR;
                w.cwnd = (w.cwnd + grow).min(w.ssthresh);
                return 0;
            }
        }
        slow_start(w, acked)
    }

    fn congestion_avoidance(&mut self, w: &mut Window, ack: &AckInfo, acked: u64) {
        if let Some(l) = self.linux.as_mut() {
            // Linux `cubictcp_cong_avoid`: `bictcp_update`, then `tcp_cong_avoid_ai`
            // with w = cnt packets.
            let mss = w.mss as u64;
            let delay_min_us = self.delay_min.map_or(0, |d| d.as_nanos() / 1000);
            l.update((w.cwnd / mss) as u32, acked.div_ceil(mss) as u32, cubic_linux::jiffies(ack.now), delay_min_us);
            cong_avoid_ai(w, acked, l.cnt as u64 * mss);
            return;
        }
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let c = self.p.c;
        let w_max = self.w_max;
        let epoch = self.epoch.get_or_insert_with(|| Epoch::new(ack.now, cwnd, w_max, c));
        let t = ack.now.since(epoch.start).as_secs_f64();
        let rtt = ack.srtt.or(ack.min_rtt).map_or(0.0, SimDuration::as_secs_f64);
        // target = W_cubic(t + RTT), kept within [cwnd, 1.5*cwnd]   (RFC 9438 §4.2)
        let target = epoch.w_cubic(t + rtt, c).clamp(cwnd, 1.5 * cwnd);
        let mut increase = target - cwnd; // segments per RTT
        if self.p.reno_friendly {
            let segments_acked = if w.byte_counting { acked as f64 / mss } else { 1.0 };
            // RFC 9438 §4.3 switches alpha to 1 once W_est reaches cwnd_prior (Linux
            // keeps 3(1-beta)/(1+beta): `cc/cubic_linux.rs`).
            let alpha = match self.cwnd_prior {
                Some(prior) if epoch.w_est < prior => self.alpha_cubic,
                _ => 1.0,
            };
            // W_est += alpha_cubic * segments_acked / cwnd   (RFC 9438, Eq. 4)
            epoch.w_est += alpha * segments_acked / cwnd;
            if epoch.w_cubic(t, c) < epoch.w_est {
                // Reno-friendly region: approach W_est (Linux `tcp_friendliness`).
                increase = increase.max(epoch.w_est - cwnd);
            }
        }
        // At most +1 segment per 2 acked (Linux `cnt >= 2`), i.e. 1.5*cwnd per RTT.
        let increase = increase.min(0.5 * cwnd);
        if increase > 0.0 {
            reno_additive_increase(w, acked, increase);
        }
    }

    /// A congestion event seen when the sender leaves Open (RFC 9438 §4.6-4.7).
    fn on_congestion_event(&mut self, w: &Window) {
        if let Some(l) = self.linux.as_mut() {
            // Linux `cubictcp_recalc_ssthresh`.
            l.on_window_reduction((w.cwnd.max(self.cwnd_seen) / w.mss as u64) as u32, self.p.fast_convergence);
        }
        let cwnd = w.cwnd.max(self.cwnd_seen) as f64 / w.mss as f64;
        self.w_max = Some(match self.w_max {
            // W_max = cwnd * (1 + beta_cubic) / 2   (RFC 9438 §4.7, fast convergence)
            Some(prev) if self.p.fast_convergence && cwnd < prev => cwnd * (1.0 + self.p.beta) / 2.0,
            _ => cwnd,
        });
        self.cwnd_prior = Some(cwnd);
        self.epoch = None;
        self.pipe_empty_since = None;
        if let SlowStartExit::HyStartPlusPlus(h) = &mut self.exit {
            // A loss ends HyStart++ (RFC 9406 §4.2).
            h.phase = PlusPlusPhase::Done;
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        if ack.in_flight <= ack.acked_bytes {
            self.pipe_empty_since = Some(ack.now);
        }
        let new_round = self.rounds.on_ack(ack.acked_bytes, ack.in_flight);
        // HyStart runs before growth (Linux calls `pkts_acked` before `cong_avoid`), on
        // the sample `on_rtt_sample` delivered for this ACK, after the round check.
        let sample = self.pending_sample.take();
        self.slow_start_exit(w, ack.now, new_round, sample);
        if ack.cwnd_limited {
            let mut acked = ack.acked_bytes;
            if w.in_slow_start() {
                acked = self.grow_slow_start(w, acked);
            }
            if acked > 0 && !w.in_slow_start() {
                self.congestion_avoidance(w, ack, acked);
            }
        }
        self.cwnd_seen = w.cwnd;
    }

    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        if let Some(l) = &self.linux {
            // Linux: cwnd x 717 / 1024 whole packets, at least 2.
            return l.ssthresh((w.cwnd / w.mss as u64) as u32) as u64 * w.mss as u64;
        }
        // ssthresh = cwnd * beta_cubic   (RFC 9438 §4.6; Linux multiplies cwnd too)
        ((w.cwnd as f64 * self.p.beta).round() as u64).max(2 * w.mss as u64)
    }

    fn on_packet_sent(&mut self, now: SimTime, _bytes: u32, _in_flight: u64) {
        // The first send after an ACK emptied the pipe ends an idle period.
        let Some(empty_at) = self.pipe_empty_since.take() else { return };
        if let Some(l) = self.linux.as_mut() {
            // Linux `cubictcp_cwnd_event(CA_EVENT_TX_START)`, in jiffies.
            let now_j = cubic_linux::jiffies(now);
            l.shift_epoch(now_j.wrapping_sub(cubic_linux::jiffies(empty_at)), now_j);
        }
        if let Some(e) = &mut self.epoch {
            // The idle time does not count towards t (RFC 9438 §5.8).
            e.start = (e.start + now.since(empty_at)).min(now);
        }
    }

    fn on_state_change(&mut self, w: &mut Window, from: CaState, to: CaState, now: SimTime) {
        if from == CaState::Open && to != CaState::Open {
            self.on_congestion_event(w);
        }
        if to == CaState::Loss {
            if self.p.rto_resets_w_max {
                self.w_max = None;
            }
            // Linux `cubictcp_state(TCP_CA_Loss)` -> `bictcp_reset`.
            if let Some(l) = self.linux.as_mut() {
                l.reset();
            }
            // Linux `cubictcp_state(TCP_CA_Loss)`: HyStart starts over.
            if let SlowStartExit::HyStart(h) = &mut self.exit {
                *h = HyStart::default();
                h.start_round(now);
            }
            self.delay_min = None;
            self.rounds.restart();
        }
        if to == CaState::Open {
            self.cwnd_seen = w.cwnd;
        }
    }

    fn on_rtt_sample(&mut self, rtt: SimDuration, now: SimTime) {
        // Linux `cubictcp_acked`: no delay samples for 1 s after an epoch starts.
        if !self.holding_off(now) {
            self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
            self.pending_sample = Some(rtt);
        }
    }

    fn on_rate_sample(&mut self, w: &mut Window, _rs: &RateSample) {
        self.cwnd_seen = w.cwnd;
    }

    fn trace(&self) -> Vec<(&'static str, f64)> {
        let mut v = Vec::new();
        if let Some(l) = &self.linux {
            v.push(("w_max", l.last_max_cwnd as f64));
            v.push(("cnt", l.cnt as f64));
            v.push(("k", l.k as f64 / 1024.0));
            v.push(("w_est", l.tcp_cwnd as f64));
        } else if let Some(m) = self.w_max {
            v.push(("w_max", m));
        }
        if let Some(p) = self.cwnd_prior {
            v.push(("cwnd_prior", p));
        }
        if let Some(e) = &self.epoch {
            v.push(("k", e.k));
            v.push(("epoch_start", e.start.as_secs_f64()));
            v.push(("w_est", e.w_est));
        }
        if let Some(d) = self.delay_min {
            v.push(("delay_min", d.as_secs_f64()));
        }
        match &self.exit {
            SlowStartExit::Standard => {}
            SlowStartExit::HyStart(h) => v.push(("hystart_found", if h.found { 1.0 } else { 0.0 })),
            SlowStartExit::HyStartPlusPlus(h) => {
                let phase = match h.phase {
                    PlusPlusPhase::SlowStart => 0.0,
                    PlusPlusPhase::Css { .. } => 1.0,
                    PlusPlusPhase::Done => 2.0,
                };
                v.push(("hystart_pp_phase", phase));
            }
        }
        v
    }
}

pub const ENTRY: CcEntry = CcEntry {
    name: "cubic",
    summary: "CUBIC: cubic window growth in real time, beta 0.7, HyStart or HyStart++",
    reference: "RFC 9438; Linux tcp_cubic.c; HyStart (Ha & Rhee 2011); RFC 9406 (HyStart++)",
    params: param_info,
    build: |v, w| {
        let p: Params = super::parse_params("cubic", v)?;
        p.validate()?;
        Ok(Box::new(Cubic::new(p, w)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u32 = 1460;

    fn cubic(p: Params, iw: u64, byte_counting: bool) -> TestSender {
        let w = Window::new(iw * MSS as u64, u64::MAX, MSS, byte_counting, 2);
        TestSender::new(Box::new(Cubic::new(p, &w)), MSS, iw, byte_counting)
    }

    fn trace(t: &TestSender, key: &str) -> Option<f64> {
        t.cc.trace().into_iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    #[test]
    fn k_and_w_of_t_for_w_max_100() {
        // K = cbrt(W_max*(1-beta)/C) = cbrt(100*0.3/0.4) = cbrt(75) = 4.217 s
        let e = Epoch::new(SimTime::ZERO, 70.0, Some(100.0), 0.4);
        assert!((e.k - 4.217).abs() < 1e-3, "{}", e.k);
        // W(0)  = 0.4*(0-K)^3 + 100 = -0.4*75 + 100 = 70 (the post-loss window)
        // W(K)  = 100 (the plateau)
        // W(2K) = 0.4*(K)^3 + 100 = 0.4*75 + 100 = 130
        assert!((e.w_cubic(0.0, 0.4) - 70.0).abs() < 1e-9);
        assert!((e.w_cubic(e.k, 0.4) - 100.0).abs() < 1e-9);
        assert!((e.w_cubic(2.0 * e.k, 0.4) - 130.0).abs() < 1e-9);
    }

    #[test]
    fn loss_at_100_segments_gives_ssthresh_70_and_k_4_217() {
        let mut t = cubic(Params::default(), 100, true);
        t.w.ssthresh = t.w.cwnd; // congestion avoidance at 100 segments
        t.send(100);
        t.lose();
        // ssthresh = 0.7 * 100 * 1460 = 102200 B = 70 segments; cwnd = ssthresh.
        assert_eq!(t.w.ssthresh, 102_200);
        assert_eq!(t.w.cwnd, 102_200);
        assert_eq!(trace(&t, "w_max"), Some(100.0));
        // The epoch (and K) starts with the first ACK in congestion avoidance.
        assert_eq!(trace(&t, "k"), None);
        t.advance(SimDuration::from_millis(100));
        t.ack_n(1);
        let k = trace(&t, "k").unwrap();
        assert!((k - 4.217).abs() < 1e-3, "{k}");
        assert_eq!(trace(&t, "epoch_start"), Some(0.1));
    }

    #[test]
    fn cwnd_follows_w_of_t_plus_rtt() {
        // Cubic region only (reno_friendly off). After the loss at 100 segments, with a
        // 100 ms RTT and one flight acked per RTT, the epoch starts at the first ACK
        // (t = 0). Round trip i ends at t = 0.1*i and cwnd approaches
        // W(t + RTT) = 0.4*(t + 0.1 - 4.217)^3 + 100:
        //   t = 0.0: W(0.1) = 0.4*(-4.117)^3 + 100 = 72.08
        //   t = 2.0: W(2.1) = 0.4*(-2.117)^3 + 100 = 96.20
        //   t = 4.1: W(4.2) = 100.00 (the plateau at K = 4.217 s)
        //   t = 6.9: W(7.0) = 0.4*(2.783)^3 + 100 = 108.62
        // Byte counting adds whole MSS and a round trip reaches the target only at its
        // end, so cwnd stays within 1.5 segments of W(t + RTT).
        let p = Params { reno_friendly: false, ..Params::default() };
        let mut t = cubic(p, 100, true);
        t.w.ssthresh = t.w.cwnd;
        t.send(100);
        t.lose();
        t.in_flight = 0;
        for i in 0..70 {
            t.round_trip_all();
            let time = 0.1 * i as f64;
            let w_next = 0.4 * (time + 0.1 - 75f64.cbrt()).powi(3) + 100.0;
            let segs = t.w.cwnd as f64 / MSS as f64;
            assert!((segs - w_next).abs() <= 1.5, "t {time}: cwnd {segs} vs W {w_next}");
        }
        assert_eq!(t.w.cwnd, 108 * MSS as u64);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut t = cubic(Params::default(), 100, true);
        t.w.ssthresh = t.w.cwnd;
        t.send(100);
        t.lose(); // W_max = 100
        t.w.cwnd = 90 * MSS as u64; // a second loss below W_max
        t.lose();
        // W_max = W*(1+beta)/2 = 90*1.7/2 = 76.5 segments; ssthresh = 0.7*90 = 63 segments.
        assert!((trace(&t, "w_max").unwrap() - 76.5).abs() < 1e-9);
        assert_eq!(t.w.ssthresh, 63 * MSS as u64);

        let off = Params { fast_convergence: false, ..Params::default() };
        let mut t = cubic(off, 100, true);
        t.w.ssthresh = t.w.cwnd;
        t.lose();
        t.w.cwnd = 90 * MSS as u64;
        t.lose();
        // Without fast convergence W_max = W = 90.
        assert_eq!(trace(&t, "w_max"), Some(90.0));
    }

    /// A loss at cwnd 10 segments (RTT 10 ms), then 20 round trips of ACKs.
    fn loss_at_10_then_20_rtts(p: Params, linux_cc: bool) -> TestSender {
        let mut t = cubic(p, 10, true);
        t.w.linux_cc = linux_cc;
        t.rtt = SimDuration::from_millis(10);
        t.w.ssthresh = t.w.cwnd;
        t.send(10);
        t.lose();
        t.in_flight = 0;
        for _ in 0..20 {
            t.round_trip_all();
        }
        t
    }

    #[test]
    fn reno_friendly_region_dominates_small_window_short_rtt() {
        // Loss at 10 segments with RTT 10 ms: cwnd 7, K = cbrt(10*0.3/0.4) = 1.957 s.
        // After 20 RTTs (t = 0.19 s at the last ACK) the cubic curve is still near 7:
        //   W(0.19 + 0.01) = 0.4*(0.2 - 1.957)^3 + 10 = 0.4*(-5.42) + 10 = 7.83,
        // while W_est grows alpha_cubic = 3*0.3/1.7 = 0.529 per RTT up to cwnd_prior = 10
        // ((10-7)/0.529 = 5.7 RTTs), then 1 per RTT: 10 + (20 - 5.7) = 24.3 segments.
        let run = |reno_friendly: bool| {
            let t = loss_at_10_then_20_rtts(Params { reno_friendly, ..Params::default() }, false);
            (t.w.cwnd as f64 / MSS as f64, trace(&t, "w_est").unwrap())
        };
        let alpha_cubic: f64 = 3.0 * (1.0 - 0.7) / (1.0 + 0.7);
        assert!((alpha_cubic - 0.5294).abs() < 1e-4);
        let (friendly, w_est) = run(true);
        assert!((23.0..=25.5).contains(&w_est), "W_est {w_est}");
        // cwnd trails W_est by about one RTT of W_est growth (at most 1 segment).
        assert!(friendly >= w_est - 1.5 && friendly <= w_est, "cwnd {friendly} W_est {w_est}");
        // Cubic alone: W(t + RTT) = 7.83, which byte counting rounds up to 8 segments
        // (acked bytes accumulate across the rising per-RTT targets, as in Linux).
        let (cubic_only, _) = run(false);
        assert!((7.0..=8.0).contains(&cubic_only), "cubic-only cwnd {cubic_only}");
    }

    #[test]
    fn linux_arithmetic_keeps_alpha_cubic_beyond_cwnd_prior() {
        // The same run as above with a `linux_cc` window from the start, so the CUBIC
        // is Linux's (`cc/cubic_linux.rs`): ssthresh 10 x 717 / 1024 = 7, W_max 10,
        // K = 2004/1024 s; over 20 RTTs (0.2 s) the curve's whole-packet target stays at
        // 7-8, and the friendly estimate grows one packet per (cwnd x 15) >> 3 acked,
        // about 0.53 per RTT, never switching to 1 past cwnd_prior as RFC 9438 §4.3
        // does (24.3 there): at most 7 + 20 x 0.53 = 17.7 segments. The `HZ / 32`
        // hold (7 jiffies, 2.8 RTTs here) delays each cnt update, so less.
        let mut w = Window::new(10 * MSS as u64, u64::MAX, MSS, true, 2);
        w.linux_cc = true;
        let mut t = TestSender::new(Box::new(Cubic::new(Params::default(), &w)), MSS, 10, true);
        t.w.linux_cc = true;
        t.rtt = SimDuration::from_millis(10);
        t.w.ssthresh = t.w.cwnd;
        t.send(10);
        t.lose();
        assert_eq!(t.w.ssthresh, 7 * MSS as u64);
        assert_eq!(trace(&t, "w_max"), Some(10.0));
        t.in_flight = 0;
        for _ in 0..20 {
            t.round_trip_all();
        }
        let cwnd = t.w.cwnd as f64 / MSS as f64;
        assert!((13.0..=17.7).contains(&cwnd), "Linux cwnd {cwnd}");
        assert_eq!(t.w.cwnd % MSS as u64, 0, "whole segments");
    }

    #[test]
    fn w_max_is_kept_across_rto() {
        let mut t = cubic(Params { hystart: false, ..Params::default() }, 100, true);
        t.w.ssthresh = t.w.cwnd;
        t.send(100);
        t.rto();
        // ssthresh = 0.7*100 = 70 segments, cwnd = 1 MSS, W_max = 100 (the pre-RTO cwnd).
        assert_eq!(t.w.ssthresh, 70 * MSS as u64);
        assert_eq!(t.w.cwnd, MSS as u64);
        assert_eq!(trace(&t, "w_max"), Some(100.0));
        // Slow start back to 70 (1, 2, 4, ... 64, 70), then the first CA ACK starts an
        // epoch with K = cbrt((100 - 70)/0.4) = 4.217 s.
        while t.w.in_slow_start() {
            t.round_trip_all();
        }
        t.send(1);
        t.ack_n(1);
        let k = trace(&t, "k").unwrap();
        assert!((k - 4.217).abs() < 1e-3, "{k}");

        // With rto_resets_w_max (Linux, RFC 9438 §4.8) the next epoch has K = 0.
        let p = Params { hystart: false, rto_resets_w_max: true, ..Params::default() };
        let mut t = cubic(p, 100, true);
        t.w.ssthresh = t.w.cwnd;
        t.send(100);
        t.rto();
        assert_eq!(trace(&t, "w_max"), None);
        while t.w.in_slow_start() {
            t.round_trip_all();
        }
        t.send(1);
        t.ack_n(1);
        assert_eq!(trace(&t, "k"), Some(0.0));
    }

    #[test]
    fn hystart_delay_increase_ends_slow_start() {
        // IW 16 (= hystart_low_window), one ACK per segment, RTT 100 ms.
        let mut t = cubic(Params::default(), 16, false);
        t.round_trip_all(); // round 1: delay_min = 100 ms, cwnd 16 -> 32
        assert_eq!(t.w.cwnd, 32 * MSS as u64);
        assert_eq!(t.w.ssthresh, u64::MAX);
        // Round 2 at 113 ms. Threshold = clamp(100/8, 4, 16) = 12.5 ms, and
        // 113 > 100 + 12.5. The test runs once 8 samples are in (the 9th ACK), before
        // that ACK's growth: cwnd = 32 + 8 = 40 segments becomes ssthresh.
        t.rtt = SimDuration::from_millis(113);
        t.fill();
        t.advance(t.rtt);
        for _ in 0..8 {
            t.ack_n(1);
        }
        assert_eq!(t.w.ssthresh, u64::MAX);
        t.ack_n(1);
        assert_eq!(t.w.ssthresh, 40 * MSS as u64);
        assert_eq!(trace(&t, "hystart_found"), Some(1.0));
        // That ACK already grows cwnd in congestion avoidance, by a few bytes at most.
        assert!(t.w.cwnd >= 40 * MSS as u64 && t.w.cwnd < 40 * MSS as u64 + 10);
    }

    #[test]
    fn hystart_keeps_slow_start_when_delay_is_flat_or_below_threshold() {
        let mut t = cubic(Params::default(), 16, false);
        t.round_trip_all();
        t.rtt = SimDuration::from_millis(112); // 112 < 100 + 12.5: no exit
        t.round_trip_all();
        t.round_trip_all();
        assert_eq!(t.w.ssthresh, u64::MAX);
        assert_eq!(t.w.cwnd, 128 * MSS as u64);
        // hystart = false: the same delay jump that ends slow start above is ignored.
        let mut t = cubic(Params { hystart: false, ..Params::default() }, 16, false);
        t.round_trip_all();
        t.rtt = SimDuration::from_millis(113);
        t.round_trip_all();
        assert_eq!(t.w.ssthresh, u64::MAX);
    }

    #[test]
    fn hystart_ack_train_ends_slow_start() {
        // delay_min = 100 ms. In round 2, 16 ACKs arrive 2 ms apart (ack_delta_us = 2000),
        // so the train spans 30 ms at the 16th ACK; 16 more spaced 2 ms reach 62 ms at
        // the 32nd ACK. The train test fires at the first ACK more than delay_min/2 =
        // 50 ms after the round start: the 27th ACK (26*2 = 52 ms). cwnd = 32 + 26 = 58.
        let mut t = cubic(Params::default(), 16, false);
        t.round_trip_all();
        t.fill();
        t.advance(t.rtt);
        let mut acks = 0;
        while t.w.ssthresh == u64::MAX {
            if acks > 0 {
                t.advance(SimDuration::from_millis(2));
            }
            t.ack_n(1);
            acks += 1;
        }
        assert_eq!(acks, 27);
        assert_eq!(t.w.ssthresh, 58 * MSS as u64);
    }

    #[test]
    fn hystart_ack_delay_and_threshold_follow_linux_hystart_update() {
        // Linux tcp_cubic.c `hystart_ack_delay`: min(1 ms, GSO_MAX_SIZE * 4 / rate)
        // in whole microseconds, 0 without a rate. 1 GB/s: 65536 * 4 / 1e9 s =
        // 262.144 us -> 262 us; 10 MB/s: 26.2 ms -> capped at 1 ms; rate unknown
        // (~0): 0.
        assert_eq!(hystart_ack_delay(1_000_000_000), SimDuration::from_micros(262));
        assert_eq!(hystart_ack_delay(10_000_000), SimDuration::from_millis(1));
        assert_eq!(hystart_ack_delay(u64::MAX), SimDuration(0));
        assert_eq!(hystart_ack_delay(0), SimDuration(0));
        // `hystart_update`'s threshold, delay_min = 100 ms at 1 GB/s:
        let mut w = Window::new(16 * MSS as u64, u64::MAX, MSS, true, 2);
        w.pacing_rate = 1_000_000_000;
        let dmin = SimDuration::from_millis(100);
        // before Linux 5.7 (no linux_cc): delay_min/2 = 50 ms;
        assert_eq!(hystart_ack_train_threshold(dmin, &w), SimDuration::from_millis(50));
        // unpaced (SK_PACING_NONE): (100 ms + 262 us) >> 1 = 50.131 ms;
        w.linux_cc = true;
        assert_eq!(hystart_ack_train_threshold(dmin, &w), SimDuration::from_micros(50_131));
        // paced (fq or internal pacing): not halved, 100.262 ms.
        w.paced = true;
        assert_eq!(hystart_ack_train_threshold(dmin, &w), SimDuration::from_micros(100_262));
    }

    /// The ACK-train exit of `hystart_update` in round 2 with delay_min = 10 ms and
    /// ACKs 0.5 ms apart (within hystart_ack_delta_us = 2 ms); returns the exit cwnd in
    /// segments. Round 1 takes cwnd 16 -> 32; the train fires at the first ACK whose
    /// distance from the round's first ACK, (k-1) * 0.5 ms, exceeds the threshold,
    /// before that ACK's growth: ssthresh = 32 + (k-1).
    fn ack_train_exit(linux_cc: bool, paced: bool, pacing_rate: u64) -> u64 {
        let mut t = cubic(Params::default(), 16, false);
        t.w.linux_cc = linux_cc;
        t.w.paced = paced;
        t.w.pacing_rate = pacing_rate;
        t.rtt = SimDuration::from_millis(10);
        t.round_trip_all();
        t.fill();
        t.advance(t.rtt);
        let mut acks = 0;
        while t.w.ssthresh == u64::MAX && acks < 32 {
            if acks > 0 {
                t.advance(SimDuration::from_micros(500));
            }
            t.ack_n(1);
            acks += 1;
        }
        t.w.ssthresh / MSS as u64
    }

    #[test]
    fn hystart_ack_train_unpaced_halves_and_paced_does_not() {
        // Pacing rate 10 MB/s: hystart_ack_delay = 1 ms (the cap).
        // Before Linux 5.7: threshold 10/2 = 5 ms, first exceeded at 5.5 ms (k-1 = 11).
        assert_eq!(ack_train_exit(false, false, 10_000_000), 43);
        // Linux 5.7+, unpaced: (10 + 1)/2 = 5.5 ms, first exceeded at 6 ms (k-1 = 12).
        assert_eq!(ack_train_exit(true, false, 10_000_000), 44);
        // Rate unknown (no RTT sample yet at the sender): no cushion, 5 ms as before.
        assert_eq!(ack_train_exit(true, false, u64::MAX), 43);
        // Paced: 10 + 1 = 11 ms, first exceeded at 11.5 ms (k-1 = 23).
        assert_eq!(ack_train_exit(true, true, 10_000_000), 55);
    }

    #[test]
    fn hystart_plus_plus_enters_css_then_congestion_avoidance() {
        let p = Params { hystart_plus_plus: true, ..Params::default() };
        let mut t = cubic(p, 16, false);
        t.round_trip_all(); // round 1: lastRoundMinRTT will be 100 ms; cwnd 32
        // Round 2 at 113 ms >= 100 + clamp(100/8, 4, 16) = 112.5 ms: CSS at the 8th
        // sample, before that ACK's growth. ACKs 1-7 grow 1 MSS each (cwnd 39), then
        // every ACK grows MSS/4 = 365 B: 25 ACKs -> 39*1460 + 25*365 = 66065 B.
        t.rtt = SimDuration::from_millis(113);
        t.round_trip_all();
        assert_eq!(trace(&t, "hystart_pp_phase"), Some(1.0));
        assert_eq!(t.w.cwnd, 39 * 1460 + 25 * 365);
        assert_eq!(t.w.ssthresh, u64::MAX);
        // Rounds 3-6 stay in CSS (RTT not below the 113 ms baseline).
        for _ in 0..4 {
            t.round_trip_all();
        }
        assert_eq!(t.w.ssthresh, u64::MAX);
        // The first ACK of round 7 completes CSS_ROUNDS = 5 rounds: ssthresh = cwnd.
        let cwnd = t.w.cwnd;
        t.fill();
        t.advance(t.rtt);
        t.ack_n(1);
        assert_eq!(t.w.ssthresh, cwnd);
        assert_eq!(trace(&t, "hystart_pp_phase"), Some(2.0));
    }

    #[test]
    fn hystart_plus_plus_resumes_slow_start_after_spurious_exit() {
        let p = Params { hystart_plus_plus: true, ..Params::default() };
        let mut t = cubic(p, 16, false);
        t.round_trip_all();
        t.rtt = SimDuration::from_millis(113);
        t.round_trip_all(); // CSS, baseline 113 ms
        // The next round's minimum RTT (100 ms) is below the baseline: after 8 samples
        // HyStart++ resumes slow start (RFC 9406 §4.2).
        t.rtt = SimDuration::from_millis(100);
        t.round_trip_all();
        assert_eq!(trace(&t, "hystart_pp_phase"), Some(0.0));
    }

    #[test]
    fn idle_time_does_not_advance_the_curve() {
        let mut t = cubic(Params::default(), 100, true);
        t.w.ssthresh = t.w.cwnd;
        t.send(100);
        t.lose();
        t.in_flight = 0;
        t.round_trip_all(); // epoch starts at 0.1 s; the pipe empties at the last ACK
        assert_eq!(trace(&t, "epoch_start"), Some(0.1));
        // 10 s of idleness, then a new flight: the epoch start moves by 10 s.
        t.advance(SimDuration::from_secs(10));
        t.send(1);
        let start = trace(&t, "epoch_start").unwrap();
        assert!((start - 10.1).abs() < 1e-9, "{start}");
        // A flight sent right after the pipe empties is not idle (testkit round trips).
        t.ack_n(1);
        t.send(1);
        assert!((trace(&t, "epoch_start").unwrap() - 10.1).abs() < 1e-9);
    }

    #[test]
    fn params_are_validated_and_unknown_fields_rejected() {
        let w = Window::new(14600, u64::MAX, 1460, true, 2);
        let bad = serde_json::json!({"beta": 1.5});
        let err = (ENTRY.build)(&bad, &w).err().unwrap();
        assert!(err.contains("beta = 1.5"), "{err}");
        let unknown = serde_json::json!({"betta": 0.5});
        let err = (ENTRY.build)(&unknown, &w).err().unwrap();
        assert!(err.contains("betta"), "{err}");
        assert!((ENTRY.build)(&serde_json::json!({"hystart_plus_plus": true}), &w).is_ok());
    }
}
