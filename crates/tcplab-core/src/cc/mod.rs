//! Congestion control: the trait, the shared growth helpers and the registry.
//!
//! The split follows Linux `struct tcp_congestion_ops` and ns-3 `TcpCongestionOps`:
//! the sender (`tcp::sender`) owns the recovery state machine, SACK, timers and the
//! window variables; a congestion control only answers narrow questions through the
//! hooks below, each defaulting to a no-op.
//!
//! - `on_ack`: grow `cwnd` for newly acknowledged bytes (called outside fast recovery:
//!   in the Open state and in the Loss state's slow start after an RTO, as Linux calls
//!   `cong_avoid` outside cwnd reduction);
//! - `ssthresh_after_loss`: the new ssthresh on entering recovery (pure, like Linux
//!   `ssthresh`);
//! - `on_rto`: the retransmission timer fired (ssthresh is then set from
//!   `ssthresh_after_loss` by the sender, per RFC 5681 §3.1 eq. 4);
//! - `on_packet_sent`, `on_state_change`, `on_rtt_sample`, `on_rate_sample`,
//!   `undo` (an earlier reduction was spurious), `pacing_rate`, `trace`;
//! - ECN (RFC 3168): `ssthresh_after_ece` (the reduction on an ECN-Echo, by default
//!   the loss reduction, as Linux calls the same `ssthresh` for both), `needs_ecn`
//!   (Linux `TCP_CONG_NEEDS_ECN`: the connection negotiates ECN whatever the knob
//!   says, and the receiver echoes CE per packet, RFC 8257 §3.2), and `on_ecn_ack`
//!   (every ACK with its delivered bytes and ECE flag, Linux `in_ack_event`).
//!
//! Windows are in bytes. Growth can be counted per ACK (`cwnd += MSS*MSS/cwnd`, ns-2)
//! or by bytes acked (RFC 3465 Appropriate Byte Counting, Linux-like); the sender's
//! `TcpConfig::byte_counting` chooses, and the shared helpers `slow_start` and
//! `reno_additive_increase` implement both.

pub mod areno;
pub mod bbr;
pub mod bic;
pub mod compound;
pub mod cubic;
pub mod cubic_linux;
pub mod dctcp;
pub mod highspeed;
pub mod htcp;
pub mod illinois;
pub mod reno;
pub mod testkit;
pub mod scalable;
pub mod vegas;
pub mod westwood;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod fuzz_tests_delay;

use crate::time::{Rate, SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// The window variables a congestion control may read and change.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes (`u64::MAX` = unbounded).
    pub ssthresh: u64,
    /// Sender MSS, bytes.
    pub mss: u32,
    /// Growth by bytes acked (RFC 3465) instead of per ACK.
    pub byte_counting: bool,
    /// RFC 3465 slow-start limit L, segments.
    pub abc_limit: u32,
    /// Bytes acked since cwnd last grew in congestion avoidance (RFC 3465 §2.1).
    pub bytes_acked: u64,
    /// The sender runs with `TcpConfig::linux_cc`: algorithms follow the Linux
    /// module where it departs from the RFC (set by the sender; false in `new`).
    pub linux_cc: bool,
    /// The sender paces this flow (Linux `sk_pacing_status` is not `SK_PACING_NONE`:
    /// the congestion control's own rate, internal pacing). Set by the sender; false
    /// in `new`.
    pub paced: bool,
    /// The socket's pacing rate, bytes/s, as Linux keeps it for every flow, paced or
    /// not (`sk_pacing_rate`: the CC's own rate, else `tcp_update_pacing_rate`'s 200 %
    /// (slow start below ssthresh/2) or 120 % of cwnd/SRTT). `u64::MAX` until known
    /// (Linux starts at `~0UL`). Kept by the sender under `linux_cc` (CUBIC's HyStart
    /// reads it, `hystart_ack_delay`).
    pub pacing_rate: u64,
}

impl Window {
    pub fn new(cwnd: u64, ssthresh: u64, mss: u32, byte_counting: bool, abc_limit: u32) -> Self {
        Window {
            cwnd,
            ssthresh,
            mss,
            byte_counting,
            abc_limit,
            bytes_acked: 0,
            linux_cc: false,
            paced: false,
            pacing_rate: u64::MAX,
        }
    }
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
    /// cwnd in segments (floating), for algorithms written in packets.
    pub fn cwnd_segments(&self) -> f64 {
        self.cwnd as f64 / self.mss as f64
    }
}

/// What an acknowledgment tells the congestion control.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    pub now: SimTime,
    /// Bytes newly acknowledged (cumulatively) by this ACK.
    pub acked_bytes: u64,
    /// The RTT sample this ACK produced, if any (Karn's rule applied).
    pub rtt: Option<SimDuration>,
    /// Smoothed RTT and the minimum RTT seen so far, if any sample exists.
    pub srtt: Option<SimDuration>,
    pub min_rtt: Option<SimDuration>,
    /// Bytes in flight before this ACK was processed.
    pub in_flight: u64,
    /// Whether the sender was limited by cwnd (not by the application) recently; growth
    /// is skipped otherwise, as Linux `tcp_is_cwnd_limited`.
    pub cwnd_limited: bool,
}

/// What every ACK tells an ECN-aware congestion control (DCTCP).
#[derive(Clone, Copy, Debug)]
pub struct EcnAckInfo {
    /// Bytes newly delivered (cumulatively acked or SACKed) by this ACK.
    pub delivered: u64,
    /// The ACK carried ECN-Echo on an ECN-capable connection.
    pub ece: bool,
    /// snd_una after this ACK.
    pub snd_una: u64,
    /// The highest sequence number sent so far (Linux `snd_nxt`).
    pub snd_nxt: u64,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation; Linux
/// `tcp_rate.c`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    pub now: SimTime,
    /// Bytes delivered over `interval`.
    pub delivered: u64,
    pub interval: SimDuration,
    pub rtt: Option<SimDuration>,
    pub is_app_limited: bool,
    /// Bytes newly lost with this ACK.
    pub lost: u64,
    pub prior_in_flight: u64,
    /// Connection-wide delivered count (bytes) recorded when the most recently sent
    /// packet acknowledged by this ACK was transmitted (draft-cheng-iccrg-delivery-rate-
    /// estimation `P.delivered` -> `rs.prior_delivered`; Linux `rs->prior_delivered`).
    /// BBR counts a round trip when this passes the delivered count at round start.
    pub prior_delivered: u64,
    /// Connection-wide delivered count (bytes) after this ACK was processed
    /// (draft-cheng `C.delivered`; Linux `tp->delivered`). The difference between two
    /// consecutive samples is the data newly delivered (acked or SACKed) by this ACK.
    pub total_delivered: u64,
}

impl RateSample {
    /// Delivery rate in bytes per second, if the interval is non-zero.
    pub fn rate_bytes_per_s(&self) -> Option<f64> {
        (self.interval.0 > 0).then(|| self.delivered as f64 / self.interval.as_secs_f64())
    }
}

/// The sender's congestion state, as passed to `on_state_change` (Linux
/// `tcp_ca_state`, reduced to what the sender models).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaState {
    /// Slow start or congestion avoidance, no loss outstanding.
    Open,
    /// Fast recovery after fast retransmit (RFC 6582 / RFC 6675).
    Recovery,
    /// After a retransmission timeout, until the recovery point is acked.
    Loss,
    /// Congestion Window Reduced after an ECN-Echo (RFC 3168 §6.1.2, Linux
    /// `TCP_CA_CWR`), until the data outstanding at the reduction is acked.
    Cwr,
}

impl CaState {
    pub fn code(self) -> u8 {
        match self {
            CaState::Open => 0,
            CaState::Recovery => 1,
            CaState::Loss => 2,
            CaState::Cwr => 3,
        }
    }
}

/// A congestion-control algorithm. Object-safe; every hook but the first three has a
/// no-op default.
pub trait CongestionControl: Send {
    /// Registry name (`reno`, `cubic`, ...).
    fn name(&self) -> &'static str;
    /// Grow the window for an ACK received in the Open state.
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo);
    /// The ssthresh to use after a loss is detected, bytes. `in_flight` is
    /// FlightSize (RFC 5681 §3.1 eq. 4 uses max(FlightSize/2, 2*SMSS)).
    fn ssthresh_after_loss(&self, w: &Window, in_flight: u64) -> u64;
    /// A retransmission timeout fired at `now` (after ssthresh was recomputed).
    fn on_rto(&mut self, _w: &mut Window, _now: SimTime) {}
    /// A segment of `bytes` was sent with `in_flight` bytes outstanding after it.
    fn on_packet_sent(&mut self, _now: SimTime, _bytes: u32, _in_flight: u64) {}
    /// The sender entered `to` from `from`.
    fn on_state_change(&mut self, _w: &mut Window, _from: CaState, _to: CaState, _now: SimTime) {}
    /// Every RTT sample, in any state (Vegas, Compound and HyStart need this).
    fn on_rtt_sample(&mut self, _rtt: SimDuration, _now: SimTime) {}
    /// The handshake completed at `now` (Linux `tcp_init_transfer` ->
    /// `tcp_init_congestion_control`, which runs the module's `init` only then).
    /// `handshake_rtt` is the SYN's (active open) or SYN-ACK's (passive open) round
    /// trip when it was sent once (Karn): by then the only RTT sample Linux's
    /// `tcp_min_rtt` and `srtt` hold. Data ACKs' samples come through `on_rtt_sample`.
    fn on_established(&mut self, _w: &mut Window, _handshake_rtt: Option<SimDuration>, _now: SimTime) {}
    /// A delivery-rate sample, for model-based algorithms (BBR).
    fn on_rate_sample(&mut self, _w: &mut Window, _rs: &RateSample) {}
    /// The last reduction was spurious (F-RTO, DSACK): restore what it changed.
    /// Returns the cwnd to restore, or `None` to keep the sender's default
    /// (the pre-reduction cwnd and ssthresh, RFC 4015 / Linux `tcp_undo_cwnd`).
    fn undo(&mut self, _w: &Window) -> Option<u64> {
        None
    }
    /// The algorithm has a Linux `cong_control` hook (BBR): with `linux_cc` it sets
    /// cwnd on every ACK in every state from `on_rate_sample`, and the sender's
    /// recovery (PRR, cwnd = ssthresh at its ends) leaves cwnd alone (Linux
    /// `tcp_cong_control`, `tcp_end_cwnd_reduction`).
    fn cong_control(&self) -> bool {
        false
    }
    /// Pacing rate, for algorithms that pace (BBR); `None` = no pacing.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// The fewest segments per TSO/GSO burst of a paced sender (Linux
    /// `ca_ops->min_tso_segs`, else `sysctl_tcp_min_tso_segs`; `tcp::gso`).
    fn min_tso_segs(&self) -> u32 {
        crate::tcp::gso::MIN_TSO_SEGS
    }
    /// The ssthresh after an ECN-Echo, bytes (RFC 3168 §6.1.2). Default: the loss
    /// reduction.
    fn ssthresh_after_ece(&self, w: &Window, in_flight: u64) -> u64 {
        self.ssthresh_after_loss(w, in_flight)
    }
    /// The algorithm needs ECN with per-packet CE echo (DCTCP, RFC 8257 §3.2).
    fn needs_ecn(&self) -> bool {
        false
    }
    /// Every ACK of an established connection (Linux `in_ack_event`).
    fn on_ecn_ack(&mut self, _ack: &EcnAckInfo) {}
    /// Internal variables for traces (e.g. `w_max`, `k`).
    fn trace(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Standard slow start (RFC 5681 §3.1): per ACK `cwnd += min(acked, MSS)`, or with
/// byte counting `cwnd += min(acked, L*MSS)` (RFC 3465 §2.2). Never grows beyond
/// ssthresh in one step; returns the acked bytes left over for congestion avoidance
/// (as Linux `tcp_slow_start`).
pub fn slow_start(w: &mut Window, acked: u64) -> u64 {
    let step = if w.byte_counting {
        acked.min(w.abc_limit as u64 * w.mss as u64)
    } else {
        acked.min(w.mss as u64)
    };
    let room = w.ssthresh.saturating_sub(w.cwnd);
    let grow = step.min(room);
    w.cwnd += grow;
    if w.byte_counting { acked.saturating_sub(grow) } else { step.saturating_sub(grow) }
}

/// The common head of a loss-based `on_ack`: no growth unless the sender is
/// cwnd-limited (RFC 7661, Linux `tcp_is_cwnd_limited`), standard slow start below
/// ssthresh (`slow_start`); returns the acked bytes left for congestion avoidance, or
/// `None` when there are none.
pub fn slow_start_then_leftover(w: &mut Window, ack: &AckInfo) -> Option<u64> {
    if !ack.cwnd_limited {
        return None;
    }
    let mut acked = ack.acked_bytes;
    if w.in_slow_start() {
        acked = slow_start(w, acked);
    }
    (acked > 0).then_some(acked)
}

/// Reno additive increase of about one MSS per RTT (RFC 5681 §3.1 eq. 3).
///
/// Per-ACK mode: `cwnd += MSS*MSS/cwnd` (at least 1 byte), the ns-2 and RFC 5681
/// formula. Byte-counting mode: accumulate acked bytes and add `segments_per_cwnd`
/// MSS each time a full cwnd has been acked (RFC 3465 §2.1; Linux `tcp_cong_avoid_ai`
/// with `w = cwnd/segments_per_cwnd`). `segments_per_cwnd` is 1 for Reno; other
/// algorithms pass their own increase.
pub fn reno_additive_increase(w: &mut Window, acked: u64, segments_per_cwnd: f64) {
    if acked == 0 {
        return;
    }
    let mss = w.mss as u64;
    if w.byte_counting {
        let target = ((w.cwnd as f64) / segments_per_cwnd.max(1e-9)).max(mss as f64) as u64;
        cong_avoid_ai(w, acked, target);
    } else {
        let inc = ((mss * mss) as f64 * segments_per_cwnd / w.cwnd.max(1) as f64) as u64;
        w.cwnd += inc.max(1);
    }
}

/// One MSS more for every `target` bytes acked (Linux `tcp_cong_avoid_ai` with
/// `w = target / MSS` packets), counting in `w.bytes_acked`. Under `linux_cc`, credit
/// earned at a larger `target` is applied gently, as Linux does: one segment, and the
/// count restarts.
pub fn cong_avoid_ai(w: &mut Window, acked: u64, target: u64) {
    let mss = w.mss as u64;
    let target = target.max(1);
    if w.linux_cc && w.bytes_acked >= target {
        w.bytes_acked = 0;
        w.cwnd += mss;
    }
    w.bytes_acked += acked;
    if w.bytes_acked >= target {
        let steps = w.bytes_acked / target;
        w.bytes_acked -= steps * target;
        w.cwnd += steps * mss;
    }
}

/// Packet-timed round trips for window-based algorithms that act once per RTT (Vegas,
/// Illinois, Compound).
///
/// Linux marks a round with `snd_nxt` and ends it on the first ACK beyond that mark
/// (`after(ack, end_seq)`). Without sequence numbers the equivalent is: at a round's
/// start remember `acked_total + bytes still outstanding`; the round ends on the first
/// ACK that takes `acked_total` strictly past that mark, i.e. the first ACK for data
/// sent after the round began. Feed it the ACKs seen in the Open state; call `restart`
/// when the algorithm restarts its per-RTT sampling (Linux `vegas_enable`, `rtt_reset`).
#[derive(Clone, Debug, Default)]
pub struct RoundCounter {
    /// Bytes acknowledged through `on_ack` so far.
    acked_total: u64,
    /// `acked_total` beyond which the current round is over; `None` = no round open.
    round_end: Option<u64>,
}

impl RoundCounter {
    /// Records an ACK of `acked` bytes that found `prior_in_flight` bytes outstanding.
    /// Returns `true` when this ACK ends the current round (a new one starts at once).
    /// The first ACK after `new`/`restart` opens a round and returns `false`.
    pub fn on_ack(&mut self, acked: u64, prior_in_flight: u64) -> bool {
        self.acked_total = self.acked_total.saturating_add(acked);
        let ended = matches!(self.round_end, Some(end) if self.acked_total > end);
        if ended || self.round_end.is_none() {
            let outstanding = prior_in_flight.saturating_sub(acked);
            self.round_end = Some(self.acked_total.saturating_add(outstanding));
        }
        ended
    }
    /// Forgets the open round; the next ACK opens a fresh one.
    pub fn restart(&mut self) {
        self.round_end = None;
    }
}

/// Windowed running maximum over a sliding window of `t` units (rounds or
/// nanoseconds), after Kathleen Nichols' three-sample algorithm as in Linux
/// `lib/win_minmax.c` (`minmax_running_max`). O(1) memory and time per sample.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowedMax {
    /// Best, second-best and third-best (time, value) samples, best first.
    s: [(u64, f64); 3],
}

impl WindowedMax {
    /// The current windowed maximum (0 before any sample).
    pub fn get(&self) -> f64 {
        self.s[0].1
    }
    /// Forgets everything and starts over with `(t, v)`.
    pub fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [(t, v); 3];
        v
    }
    /// Adds the sample `v` taken at `t` (non-decreasing) and returns the maximum over
    /// `(t - win, t]`.
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        if v >= self.s[0].1 || t.saturating_sub(self.s[2].0) > win {
            return self.reset(t, v); // new best, or nothing left in the window
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        let dt = t.saturating_sub(self.s[0].0);
        if dt > win {
            // The best aged out: promote the runners-up (twice if the second also did).
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t.saturating_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter window without a new second choice: take one from now.
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half a window without a new third choice.
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

/// RFC 5681 §3.1 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS).
pub fn reno_ssthresh(in_flight: u64, mss: u32) -> u64 {
    (in_flight / 2).max(2 * mss as u64)
}

/// A congestion control chosen by name, with its parameters as a JSON object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcSpec {
    #[serde(default = "default_cc_name")]
    pub name: String,
    #[serde(default = "empty_params")]
    pub params: serde_json::Value,
}

fn default_cc_name() -> String {
    "reno".into()
}
fn empty_params() -> serde_json::Value {
    serde_json::Value::Object(Default::default())
}

impl Default for CcSpec {
    fn default() -> Self {
        CcSpec { name: default_cc_name(), params: empty_params() }
    }
}

/// One parameter of an algorithm, for `tcplab list` and the docs.
#[derive(Clone, Debug, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub unit: &'static str,
    pub default: f64,
    pub doc: &'static str,
}

/// A registry entry: name, reference, parameters and constructor.
pub struct CcEntry {
    pub name: &'static str,
    pub summary: &'static str,
    pub reference: &'static str,
    pub params: fn() -> Vec<ParamInfo>,
    pub build: fn(&serde_json::Value, &Window) -> Result<Box<dyn CongestionControl>, String>,
}

/// Every registered algorithm. Adding one costs its file plus one line here.
pub fn registry() -> &'static [CcEntry] {
    &[
        reno::ENTRY,
        cubic::ENTRY,
        bic::ENTRY,
        highspeed::ENTRY,
        scalable::ENTRY,
        htcp::ENTRY,
        westwood::ENTRY,
        compound::ENTRY,
        areno::ENTRY,
        vegas::ENTRY,
        illinois::ENTRY,
        bbr::ENTRY,
        dctcp::ENTRY,
    ]
}

/// Builds the algorithm `spec.name` with `spec.params`.
pub fn build(spec: &CcSpec, w: &Window) -> Result<Box<dyn CongestionControl>, String> {
    let entry = registry().iter().find(|e| e.name == spec.name).ok_or_else(|| {
        let names: Vec<&str> = registry().iter().map(|e| e.name).collect();
        format!("unknown congestion control '{}'; accepted: {}", spec.name, names.join(", "))
    })?;
    (entry.build)(&spec.params, w)
}

/// Parses an algorithm's parameter object into its `Params` struct, with an error
/// that names the algorithm and the offending field.
pub fn parse_params<P: serde::de::DeserializeOwned>(
    algo: &str,
    v: &serde_json::Value,
) -> Result<P, String> {
    serde_json::from_value(v.clone()).map_err(|e| format!("cc '{algo}' params: {e}"))
}
