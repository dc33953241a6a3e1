//! TCP knobs and the named profiles that set them together.
//!
//! Every knob is individually overridable: a scenario names a `profile` and any field
//! it sets wins over the profile's value (`TcpSpec::resolve`). The profiles:
//!
//! - `linux`: a Linux 6.x kernel's defaults: IW10 (RFC 6928), initial RTO 1 s,
//!   delayed ACK of at most 40 ms or 2 segments, byte-counted growth, SACK with D-SACK
//!   (`tcp_sack`, `tcp_dsack`), RACK-TLP loss detection (`tcp_recovery = 1`,
//!   `tcp_early_retrans = 3`), PRR (`tcp_cwnd_reduction`), Linux's RTT estimator (every ACK sampled,
//!   mdev/rttvar, RTO = SRTT + 4 RTTVAR with RTTVAR's term at least the 200 ms minimum
//!   RTO), window reductions computed from cwnd (`tcp_reno_ssthresh` = cwnd/2), no
//!   initial ssthresh bound, congestion controls as the Linux modules compute them
//!   (`linux_cc`: whole-segment ssthresh, CUBIC's constant Reno-friendly alpha, BBR's
//!   own recovery window and its ACK-aggregation allowance `bbr_update_ack_aggregation`,
//!   CUBIC's HyStart ACK-train threshold as `hystart_update` sets it for an unpaced or
//!   a paced flow). ECN is not requested (`tcp_ecn = 2`: accepted when asked).
//!   Timestamps on (`tcp_timestamps = 1`): 12 option bytes in every segment (52-byte
//!   headers), so MSS 1448 at MTU 1500 (`tcp_mss_to_mtu`), RTT samples as
//!   `tcp_ack_update_rtt` takes them (the ACKed segment's own time first, the echoed
//!   TSval in milliseconds when only retransmitted data was acked) and the Eifel undo
//!   (`tcp_try_undo_loss`). F-RTO on as `tcp_frto = 2` (`frto_variant = "linux"`,
//!   `tcp/frto.rs`: `tcp_process_loss`'s SACK-enhanced algorithm). The receiver's
//!   quick-ACK mode and adaptive delayed-ACK timeout (`quickack`, `tcp/quickack.rs`).
//! - `linux-2.6`: Linux 2.6.2x-2.6.35 as seeds 001 and 003 ran it: RFC 3390's initial
//!   window, initial RTO 3 s, minimum RTO 200 ms as an RFC 6298 floor with one timed
//!   segment per RTT, delayed ACK 40 ms/2 segments, byte counting, SACK with RFC 6675
//!   recovery and Limited Transmit, reductions from FlightSize. Those kernels had
//!   neither PRR (3.2) nor RACK (4.4), nor today's start-up defaults: IW10 came in
//!   2.6.39 (commit "tcp: Increase the initial congestion window to 10", RFC 6928) and
//!   the 1 s initial RTO in 3.1 (RFC 6298 §2.1; `TCP_TIMEOUT_INIT` was 3 s, RFC 2988
//!   §2.1, before). Their `tcp_init_cwnd` gave 4 segments for MSS <= 1095, 3 up to
//!   1460 and 2 above: the whole segments RFC 3390's byte formula admits (3 at MSS 1448
//!   and 1460, 4380 B). A scenario that runs IW10 or a 1 s initial RTO on this profile
//!   (seed 001's IW10 arm) sets them. `fin_ignores_cwnd` is off in both Linux profiles;
//!   turn it on for the "IW10 is really IW11" quirk of seed 001.
//! - `ns2-sack`: ns-2's one-way `Agent/TCP/Sack1` with a `TCPSink/Sack1` receiver, as
//!   seed 000 used: SACK (RFC 6675-style pipe recovery), per-ACK growth
//!   `cwnd += MSS*MSS/cwnd`, no delayed ACKs, initial RTO 3 s, minimum RTO 1 s (RFC
//!   6298 §2.4). ns-2's one-way agent has no handshake; tcplab adds the SYN exchange
//!   because seed 000 studies the initial RTO, which governs the SYN.
//! - `reference`: seed 004's reference TCP: IW1, RFC 2581 congestion control, NewReno
//!   (RFC 2582), 200 ms delayed-ACK timer, no SACK.
//! - `enhanced`: seed 004's enhanced TCP: IW4, window scaling, SACK with RFC 3517
//!   conservative recovery, Limited Transmit (RFC 3042), F-RTO (RFC 5682), DAASS (RFC
//!   2760). CBI ssthresh reuse (RFC 2140) is a separate knob. The IW is the seed's
//!   words, "Initial window of 4 segments (RFC 3390)": 4 whole segments, not RFC
//!   3390's byte formula. The two differ at the seed's MTU: RFC 3390 §1 caps the IW at
//!   min(4*MSS, max(2*MSS, 4380 B)), which is 4 segments only when MSS <= 1095 B
//!   (4380 / 4); at MTU 1450 (MSS 1410) it is 4380 B = 3.1 segments, i.e. 3 full
//!   ones. The seed names 4 segments, so the profile sends 4 (5640 B at MSS 1410);
//!   `iw = "rfc3390"` gives the byte formula.

use super::frto::FrtoVariant;
use super::prr::PrrMode;
use super::rtt::RttEstimatorKind;
use crate::cc::Window;
use crate::time::SimDuration;
use serde::{Deserialize, Serialize};

/// The initial window: a fixed segment count or the RFC 3390 formula
/// `min(4*MSS, max(2*MSS, 4380 bytes))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InitialWindow {
    Segments(u32),
    Formula(IwFormula),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IwFormula {
    Rfc3390,
}

impl InitialWindow {
    /// Initial window in bytes for the given MSS.
    pub fn bytes(self, mss: u32) -> u64 {
        let mss = mss as u64;
        match self {
            InitialWindow::Segments(n) => n as u64 * mss,
            // RFC 3390 §1: min (4*MSS, max (2*MSS, 4380 bytes))
            InitialWindow::Formula(IwFormula::Rfc3390) => (4 * mss).min((2 * mss).max(4380)),
        }
    }

    /// Full-sized segments the first flight holds: the sender sends whole segments
    /// while they fit in cwnd (RFC 3390 §1 bounds bytes; Linux's `tcp_init_cwnd`
    /// counts the same whole segments).
    pub fn segments(self, mss: u32) -> u64 {
        self.bytes(mss) / mss.max(1) as u64
    }
}

/// Fully resolved TCP configuration of one connection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Sender maximum segment size, payload bytes.
    pub mss: u32,
    /// IP + TCP header bytes added to every segment (40 without options).
    pub header_bytes: u32,
    /// Initial congestion window.
    pub iw: InitialWindow,
    /// Initial ssthresh in bytes; `None` is "arbitrarily high" (RFC 5681 §3.1).
    pub initial_ssthresh: Option<u64>,
    /// Initial retransmission timeout, also for the SYN (RFC 6298 §2.1).
    pub initial_rto: SimDuration,
    /// Lower bound on the RTO (RFC 6298 §2.4: 1 s; Linux: 200 ms).
    pub min_rto: SimDuration,
    /// Upper bound on the RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto: SimDuration,
    /// SYN retransmissions before the connection is abandoned.
    pub syn_retries: u32,
    /// SACK (RFC 2018) with RFC 6675 loss recovery; off means NewReno (RFC 6582).
    pub sack: bool,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2).
    pub dupack_threshold: u32,
    /// Limited Transmit (RFC 3042).
    pub limited_transmit: bool,
    /// F-RTO spurious-RTO detection (`frto_variant` says which algorithm).
    pub frto: bool,
    /// `rfc5682`: RFC 5682 §2's basic algorithm with the conservative response;
    /// `linux`: the kernel's SACK-enhanced F-RTO (`tcp_process_loss`, `tcp/frto.rs`).
    #[serde(default)]
    pub frto_variant: FrtoVariant,
    /// Appropriate Byte Counting (RFC 3465): growth by bytes acked, not ACKs counted.
    pub byte_counting: bool,
    /// ABC limit L in segments for slow start (RFC 3465 §2.2; Linux uses 2).
    pub abc_limit: u32,
    /// Receiver delays ACKs (RFC 5681 §4.2, RFC 1122 §4.2.3.2).
    pub delayed_ack: bool,
    /// Delayed-ACK timer.
    pub delack_timeout: SimDuration,
    /// Full-sized segments that force an ACK (2 per RFC 5681 §4.2).
    pub delack_segments: u32,
    /// Linux's receiver ACK timing (`tcp/quickack.rs`): quick-ACK mode
    /// (`tcp_enter_quickack_mode`, `tcp_incr_quickack`) and the adaptive delayed-ACK
    /// timeout (`tcp_event_data_recv`, `tcp_send_delayed_ack`), with `delack_timeout`
    /// as `TCP_ATO_MIN`. Off: RFC 5681 §4.2's fixed timer.
    #[serde(default)]
    pub quickack: bool,
    /// DAASS: no delayed ACKs while the sender is in slow start (RFC 2760 §5.1). The
    /// receiver infers slow start from the sender's segment flag, which tcplab
    /// sets truthfully (the simulator knows the sender's state).
    pub daass: bool,
    /// Receiver buffer advertised as the window, bytes.
    pub rcv_buffer: u64,
    /// Window scaling (RFC 7323 §2); without it the window is capped at 65 535 bytes.
    pub window_scaling: bool,
    /// Reuse ssthresh learnt by earlier connections to the same destination
    /// (RFC 2140 §2.2, temporal sharing).
    pub cbi_ssthresh_reuse: bool,
    /// Linux sends a FIN even when cwnd is full ("IW10 is really IW11", seed 001).
    pub fin_ignores_cwnd: bool,
    /// The timestamp option (RFC 7323), as Linux uses it (`tcp_timestamps`): an RTT
    /// sample from the echo of every ACK of new data (RTTM, §4; Linux
    /// `tcp_ack_saw_tstamp`) and Eifel detection of spurious timeouts (RFC 3522;
    /// Linux `tcp_try_undo_loss` / `tcp_packet_delayed`). On in `linux` only; the
    /// option's 12 bytes are for `header_bytes` (and `mss`) to include.
    #[serde(default)]
    pub timestamps: bool,
    /// Request ECN on the SYN (RFC 3168 §6.1.1; Linux `net.ipv4.tcp_ecn = 1`). The
    /// receiver always accepts a request (Linux's default `tcp_ecn = 2`), and a
    /// congestion control that needs ECN (DCTCP) requests it regardless.
    #[serde(default)]
    pub ecn: bool,
    /// Proportional Rate Reduction during SACK fast recovery and CWR (RFC 6937;
    /// `linux` = Linux `tcp_cwnd_reduction`, RFC 9937). `off`: cwnd = ssthresh at once.
    #[serde(default)]
    pub prr: PrrMode,
    /// RACK time-based loss detection (RFC 8985 §6; Linux `tcp_recovery = 1`). Needs
    /// SACK; the duplicate-ACK threshold then acts through RACK's reordering window.
    #[serde(default)]
    pub rack: bool,
    /// Tail Loss Probe (RFC 8985 §7; Linux `tcp_early_retrans = 3`). Needs SACK.
    #[serde(default)]
    pub tlp: bool,
    /// The receiver reports duplicate segments with D-SACK (RFC 2883; Linux
    /// `tcp_dsack = 1`).
    #[serde(default)]
    pub dsack: bool,
    /// RTT estimator and RTO rule: `rfc6298` (one timed segment per RTT, RTO >=
    /// min_rto) or `linux` (`tcp_rtt_estimator`: every ACK, mdev/rttvar, RTO >= SRTT +
    /// min_rto).
    #[serde(default)]
    pub rtt_estimator: RttEstimatorKind,
    /// The loss and ECN reductions start from cwnd (Linux: every congestion
    /// control's `ssthresh` reads `tcp_snd_cwnd`, e.g. `tcp_reno_ssthresh` = cwnd/2)
    /// instead of FlightSize (RFC 5681 §3.1 eq. 4).
    #[serde(default)]
    pub ssthresh_from_cwnd: bool,
    /// Congestion controls follow the Linux modules where the kernel departs from
    /// their RFCs (docs/validation.md, the loss grid): whole-segment ssthresh (`tcp_reno_ssthresh`,
    /// `bictcp_recalc_ssthresh` work in packets); CUBIC keeps its Reno-friendly
    /// alpha = 3(1-beta)/(1+beta) (`bictcp_update`; RFC 9438 §4.3 switches to 1); a CC
    /// with its own `cong_control` (BBR) sets cwnd during recovery itself, without PRR
    /// (`tcp_cong_control`, `bbr_set_cwnd_to_recover_or_restore`) and adds its
    /// ACK-aggregation allowance (`bbr_update_ack_aggregation`); CUBIC's HyStart takes
    /// Linux 5.7+'s ACK-train threshold (`hystart_update`, `hystart_ack_delay`), from
    /// the pacing rate the sender keeps as `tcp_update_pacing_rate` does; a paced
    /// sender sends GSO bursts of `tcp_tso_autosize` segments, paced as one skb
    /// (`tcp::gso`).
    #[serde(default)]
    pub linux_cc: bool,
}

/// A scenario's TCP settings: a profile name plus per-knob overrides.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// One of `PROFILES`; default `linux`.
    pub profile: Option<String>,
    pub mss: Option<u32>,
    pub header_bytes: Option<u32>,
    pub iw: Option<InitialWindow>,
    pub initial_ssthresh: Option<u64>,
    pub initial_rto: Option<SimDuration>,
    pub min_rto: Option<SimDuration>,
    pub max_rto: Option<SimDuration>,
    pub syn_retries: Option<u32>,
    pub sack: Option<bool>,
    pub dupack_threshold: Option<u32>,
    pub limited_transmit: Option<bool>,
    pub frto: Option<bool>,
    pub frto_variant: Option<FrtoVariant>,
    pub byte_counting: Option<bool>,
    pub abc_limit: Option<u32>,
    pub delayed_ack: Option<bool>,
    pub delack_timeout: Option<SimDuration>,
    pub delack_segments: Option<u32>,
    pub quickack: Option<bool>,
    pub daass: Option<bool>,
    pub rcv_buffer: Option<u64>,
    pub window_scaling: Option<bool>,
    pub cbi_ssthresh_reuse: Option<bool>,
    pub fin_ignores_cwnd: Option<bool>,
    pub timestamps: Option<bool>,
    pub ecn: Option<bool>,
    pub prr: Option<PrrMode>,
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub dsack: Option<bool>,
    pub rtt_estimator: Option<RttEstimatorKind>,
    pub ssthresh_from_cwnd: Option<bool>,
    pub linux_cc: Option<bool>,
}

/// Names of the built-in profiles, in the order `tcplab list` shows them.
pub const PROFILES: [&str; 5] = ["linux", "ns2-sack", "reference", "enhanced", "linux-2.6"];
pub const DEFAULT_PROFILE: &str = "linux";

/// One-line descriptions for `tcplab list`.
pub fn profile_description(name: &str) -> &'static str {
    match name {
        "linux" => "Linux 6.x: timestamps (MSS 1448, 52 B headers), IW10, initial RTO 1 s, Linux RTT estimator (RTO >= SRTT + 200 ms), delayed ACK 2 segments with quick-ACK mode and adaptive ato from 40 ms, ABC, SACK + D-SACK, RACK-TLP, F-RTO (tcp_frto = 2), PRR, reductions from cwnd, Linux CC modules' arithmetic (BBR's extra_acked, HyStart by pacing), paced segments in GSO bursts (tcp_tso_autosize)",
        "linux-2.6" => "Linux 2.6.2x-2.6.35 (seeds 001, 003; before PRR, RACK, IW10 and the 1 s initial RTO): IW per RFC 3390 (3 segments at MSS 1460), initial RTO 3 s (RFC 2988), RFC 6298 RTO >= 200 ms, delayed ACK 40 ms/2 segments, ABC, SACK/RFC 6675, Limited Transmit",
        "ns2-sack" => "ns-2 Agent/TCP/Sack1 as in seed 000: IW3, initial RTO 3 s, min RTO 1 s, per-ACK growth, no delayed ACK, SACK",
        "reference" => "seed 004 reference TCP: IW1, RFC 2581 + NewReno (RFC 2582), 200 ms delayed ACK, no SACK",
        "enhanced" => "seed 004 enhanced TCP: IW 4 segments (the seed's words; RFC 3390's 4380 B cap is 3 segments at MSS 1410), window scaling, SACK/RFC 3517, Limited Transmit, F-RTO, DAASS",
        _ => "",
    }
}

impl TcpConfig {
    /// The congestion window state a sender with this configuration starts from:
    /// the initial window, `ssthresh` (`u64::MAX` = none yet), and the profile's
    /// arithmetic (`linux_cc`). The sender's own window and the one a congestion
    /// control is built against come from here, so they agree.
    pub fn window(&self, ssthresh: u64) -> Window {
        let mut w = Window::new(self.iw.bytes(self.mss), ssthresh, self.mss, self.byte_counting, self.abc_limit);
        w.linux_cc = self.linux_cc;
        w
    }

    /// The named profile, or an error listing the accepted names.
    pub fn profile(name: &str) -> Result<TcpConfig, String> {
        let linux26 = TcpConfig {
            mss: 1460,
            header_bytes: 40,
            // Linux before 2.6.39: `tcp_init_cwnd`, RFC 3390 in whole segments.
            iw: InitialWindow::Formula(IwFormula::Rfc3390),
            initial_ssthresh: None,
            // Linux before 3.1: `TCP_TIMEOUT_INIT` = 3 s (RFC 2988 §2.1).
            initial_rto: SimDuration::from_secs(3),
            min_rto: SimDuration::from_millis(200),
            max_rto: SimDuration::from_secs(120),
            syn_retries: 6,
            sack: true,
            dupack_threshold: 3,
            limited_transmit: true,
            frto: false,
            frto_variant: FrtoVariant::Rfc5682,
            byte_counting: true,
            abc_limit: 2,
            delayed_ack: true,
            delack_timeout: SimDuration::from_millis(40),
            delack_segments: 2,
            quickack: false,
            daass: false,
            rcv_buffer: 6 * 1024 * 1024,
            window_scaling: true,
            cbi_ssthresh_reuse: false,
            fin_ignores_cwnd: false,
            timestamps: false,
            ecn: false,
            prr: PrrMode::Off,
            rack: false,
            tlp: false,
            dsack: false,
            rtt_estimator: RttEstimatorKind::Rfc6298,
            ssthresh_from_cwnd: false,
            linux_cc: false,
        };
        let linux = TcpConfig {
            // `tcp_timestamps = 1`: 12 option bytes (RFC 7323 §3: 10, padded to 12), so
            // MTU 1500 carries 1448 payload bytes.
            mss: 1448,
            header_bytes: 52,
            timestamps: true,
            // `tcp_frto = 2`.
            frto: true,
            quickack: true,
            frto_variant: FrtoVariant::Linux,
            // RFC 6928 (Linux 2.6.39) and RFC 6298 §2.1 (Linux 3.1).
            iw: InitialWindow::Segments(10),
            initial_rto: SimDuration::from_secs(1),
            dsack: true,
            prr: PrrMode::Linux,
            rack: true,
            tlp: true,
            rtt_estimator: RttEstimatorKind::Linux,
            ssthresh_from_cwnd: true,
            linux_cc: true,
            ..linux26.clone()
        };
        Ok(match name {
            "linux" => linux,
            "linux-2.6" => linux26,
            "ns2-sack" => TcpConfig {
                iw: InitialWindow::Segments(3),
                initial_rto: SimDuration::from_secs(3),
                min_rto: SimDuration::from_secs(1),
                max_rto: SimDuration::from_secs(60),
                limited_transmit: false,
                byte_counting: false,
                delayed_ack: false,
                rcv_buffer: 1 << 30,
                ..linux26.clone()
            },
            "reference" => TcpConfig {
                iw: InitialWindow::Segments(1),
                initial_rto: SimDuration::from_secs(3),
                min_rto: SimDuration::from_secs(1),
                max_rto: SimDuration::from_secs(60),
                sack: false,
                limited_transmit: false,
                byte_counting: false,
                delack_timeout: SimDuration::from_millis(200),
                rcv_buffer: 65_535,
                window_scaling: false,
                ..linux26.clone()
            },
            "enhanced" => TcpConfig {
                // Seed 004: "Initial window of 4 segments (RFC 3390)" (module doc).
                iw: InitialWindow::Segments(4),
                initial_rto: SimDuration::from_secs(3),
                min_rto: SimDuration::from_secs(1),
                max_rto: SimDuration::from_secs(60),
                frto: true,
                byte_counting: false,
                delack_timeout: SimDuration::from_millis(200),
                daass: true,
                rcv_buffer: 1 << 20,
                ..linux26.clone()
            },
            other => {
                return Err(format!(
                    "unknown TCP profile '{other}'; accepted: {}",
                    PROFILES.join(", ")
                ))
            }
        })
    }

    /// Checks values that would make a connection impossible.
    pub fn validate(&self) -> Result<(), String> {
        if self.mss == 0 {
            return Err("tcp.mss must be at least 1 byte".into());
        }
        if self.iw == InitialWindow::Segments(0) {
            return Err("tcp.iw must be at least 1 segment".into());
        }
        if self.min_rto > self.max_rto {
            return Err("tcp.min_rto must not exceed tcp.max_rto".into());
        }
        if self.dupack_threshold == 0 {
            return Err("tcp.dupack_threshold must be at least 1".into());
        }
        if self.delack_segments == 0 {
            return Err("tcp.delack_segments must be at least 1".into());
        }
        if self.rcv_buffer < self.mss as u64 {
            return Err("tcp.rcv_buffer must hold at least one segment".into());
        }
        Ok(())
    }

    /// The advertised window this configuration allows, bytes.
    pub fn advertised_window(&self) -> u64 {
        if self.window_scaling {
            self.rcv_buffer
        } else {
            self.rcv_buffer.min(65_535)
        }
    }
}

impl TcpSpec {
    /// The profile with this spec's overrides applied, validated.
    pub fn resolve(&self) -> Result<TcpConfig, String> {
        let mut c = TcpConfig::profile(self.profile.as_deref().unwrap_or(DEFAULT_PROFILE))?;
        macro_rules! over {
            ($($f:ident),*) => { $( if let Some(v) = self.$f { c.$f = v; } )* };
        }
        over!(
            mss, header_bytes, iw, initial_rto, min_rto, max_rto, syn_retries, sack,
            dupack_threshold, limited_transmit, frto, frto_variant, byte_counting, abc_limit, delayed_ack,
            delack_timeout, delack_segments, quickack, daass, rcv_buffer, window_scaling,
            cbi_ssthresh_reuse, fin_ignores_cwnd, timestamps, ecn, prr, rack, tlp, dsack,
            rtt_estimator, ssthresh_from_cwnd, linux_cc
        );
        if self.initial_ssthresh.is_some() {
            c.initial_ssthresh = self.initial_ssthresh;
        }
        c.validate()?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3390_formula() {
        // min(4*1460, max(2*1460, 4380)) = min(5840, 4380) = 4380 bytes (3 segments)
        assert_eq!(InitialWindow::Formula(IwFormula::Rfc3390).bytes(1460), 4380);
        // MSS 1000: min(4000, max(2000, 4380)) = 4000 (4 segments)
        assert_eq!(InitialWindow::Formula(IwFormula::Rfc3390).bytes(1000), 4000);
        // MSS 2500: min(10000, max(5000, 4380)) = 5000 (2 segments)
        assert_eq!(InitialWindow::Formula(IwFormula::Rfc3390).bytes(2500), 5000);
    }

    /// `linux-2.6` starts as Linux 2.6.2x-2.6.35 did (seeds 001 and 003: "2.6.26 &
    /// 2.6.35 kernels"): RFC 3390's initial window, min(4*MSS, max(2*MSS, 4380 B)),
    /// which Linux's `tcp_init_cwnd` took as 3 segments for 1095 < MSS <= 1460, and the
    /// 3 s initial RTO of RFC 2988 §2.1 (`TCP_TIMEOUT_INIT` until Linux 3.1). IW10
    /// (Linux 2.6.39) and the 1 s initial RTO (Linux 3.1, RFC 6298) stay the `linux`
    /// profile's. Exact: these are integer byte counts and nanoseconds.
    #[test]
    fn linux_2_6_starts_with_rfc3390_and_a_3s_rto() {
        let old = TcpConfig::profile("linux-2.6").unwrap();
        assert_eq!(old.iw, InitialWindow::Formula(IwFormula::Rfc3390));
        // MSS 1460: min(5840, max(2920, 4380)) = 4380 B = 3 segments exactly.
        assert_eq!((old.iw.bytes(1460), old.iw.segments(1460)), (4380, 3));
        // MSS 1448 (timestamps): min(5792, max(2896, 4380)) = 4380 B, 3 whole segments
        // (4344 B): Linux's 3.
        assert_eq!((old.iw.bytes(1448), old.iw.segments(1448)), (4380, 3));
        assert_eq!(old.initial_rto, SimDuration::from_secs(3));
        assert_eq!(old.min_rto, SimDuration::from_millis(200));
        let new = TcpConfig::profile("linux").unwrap();
        assert_eq!((new.iw.bytes(1460), new.iw.segments(1448)), (14_600, 10));
        assert_eq!(new.initial_rto, SimDuration::from_secs(1));
        assert!(profile_description("linux-2.6").contains("RFC 3390"));
        assert!(profile_description("linux-2.6").contains("initial RTO 3 s"));
    }

    /// Seed 004's enhanced TCP: "Initial window of 4 segments (RFC 3390)", at its "MTU
    /// Size: 1450 bytes" (MSS 1410 with 40 B of headers). Four whole segments, 5640 B;
    /// RFC 3390's byte formula would give 4380 B, 3 segments, because it reaches 4
    /// segments only for MSS <= 1095 B. Exact (integer bytes).
    #[test]
    fn enhanced_starts_with_4_segments_as_seed_004_says() {
        let c = TcpSpec { profile: Some("enhanced".into()), mss: Some(1410), ..Default::default() }.resolve().unwrap();
        assert_eq!(c.iw, InitialWindow::Segments(4));
        assert_eq!((c.iw.bytes(1410), c.iw.segments(1410)), (5640, 4));
        let rfc = InitialWindow::Formula(IwFormula::Rfc3390);
        assert_eq!((rfc.bytes(1410), rfc.segments(1410)), (4380, 3));
        assert_eq!((rfc.bytes(1095), rfc.segments(1095)), (4380, 4));
        assert_eq!(rfc.segments(1096), 3);
    }

    #[test]
    fn overrides_win_over_profile() {
        let spec = TcpSpec {
            profile: Some("ns2-sack".into()),
            iw: Some(InitialWindow::Segments(10)),
            initial_rto: Some(SimDuration::from_secs(1)),
            ..Default::default()
        };
        let c = spec.resolve().unwrap();
        assert_eq!(c.iw, InitialWindow::Segments(10));
        assert_eq!(c.initial_rto, SimDuration::from_secs(1));
        assert_eq!(c.min_rto, SimDuration::from_secs(1)); // from the profile
        assert!(!c.delayed_ack);
    }

    #[test]
    fn bad_values_are_named() {
        let e = TcpSpec { iw: Some(InitialWindow::Segments(0)), ..Default::default() }.resolve();
        assert!(e.unwrap_err().contains("tcp.iw"));
        let e = TcpSpec { profile: Some("bsd".into()), ..Default::default() }.resolve();
        assert!(e.unwrap_err().contains("ns2-sack"));
    }
}
