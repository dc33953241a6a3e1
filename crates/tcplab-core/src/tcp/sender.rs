//! The TCP sender: connection set-up, transmission, RTO, loss recovery.
//!
//! The sender owns cwnd, ssthresh and the recovery state machine; the congestion
//! control (`cc`) only answers growth and ssthresh questions (Linux
//! `tcp_congestion_ops` split). References, section by section:
//!
//! - Set-up: SYN, SYN retransmission under the initial RTO with exponential backoff
//!   (RFC 6298 §5.5), `syn_retries` attempts. When the SYN was retransmitted and the
//!   initial RTO is below 3 s, the RTO is re-initialised to 3 s for data (RFC 6298
//!   §5.7), and the initial window is one segment (RFC 5681 §3.1).
//! - Initial window: `TcpConfig::iw` (RFC 3390 / RFC 6928 or fixed).
//! - RTO: RFC 6298 (see `rtt`), timer restarted on each ACK of new data (§5.3),
//!   exponential backoff, go-back-N from snd_una with cwnd = 1 MSS (RFC 5681 §3.1,
//!   LossWindow). ssthresh is reduced only on the first timeout of a loss episode
//!   (repeated timeouts of the same data keep it, as Linux `tcp_enter_loss`).
//! - Fast retransmit and NewReno fast recovery (RFC 5681 §3.2, RFC 6582 §3.2 with
//!   cwnd inflation; full ACK sets cwnd = min(ssthresh, max(FlightSize, MSS) + MSS),
//!   option 1 of step 3; the RTO is reset on every partial ACK, "Slow-but-Steady").
//! - SACK loss recovery (RFC 6675, conservative, `scoreboard`): pipe-based
//!   transmission, NextSeg, recovery point HighData.
//! - Limited Transmit (RFC 3042 §2): one new segment for each of the first two
//!   duplicate ACKs.
//! - F-RTO (RFC 5682 §2, basic, non-SACK form): after a timeout, send new data on the
//!   first ACK; a second ACK that advances the window declares the RTO spurious, and
//!   the sender returns to the Open state with cwnd = ssthresh... (see `frto_*`).
//! - F-RTO as Linux runs it (`frto_variant = "linux"`, module `frto`): after a
//!   timeout, the first ACK that advances snd_una sends new data instead of
//!   retransmissions; an ACK or SACK of never-retransmitted data undoes the timeout.
//! - Timestamps (RFC 7323), when `timestamps` is on: every segment carries its send
//!   time (TSval). With the RFC 6298 estimator every ACK of new data gives an RTT
//!   sample `now - TSecr` (RTTM, §4), retransmitted data included (the echo says which
//!   copy arrived), instead of one timed segment per RTT. With Linux's estimator the
//!   ACK's own Karn-clean sample comes first and the echo is used only when the ACK
//!   advanced snd_una over retransmitted data alone, in whole milliseconds of the
//!   timestamp clock, at least 1 ms (`tcp_ack_update_rtt`, `TCP_TS_HZ` = 1000). Eifel detection (RFC 3522;
//!   Linux `tcp_try_undo_loss` when `tcp_packet_delayed`): while in Loss, an ACK of
//!   new data echoing a TSval older than the timeout's first retransmission proves
//!   the original arrived; the timeout is undone as Linux `tcp_undo_cwnd_reduction`
//!   does (cwnd and ssthresh back to at least their values before the timeout, the
//!   loss marks cleared, sending resumes at snd_max: no go-back-N of data in flight).
//! - Spurious-RTO truth: every RTO is reported to the owner with the sequence number
//!   it retransmits and the transmission id; the simulation, which sees the receiver,
//!   judges whether the original had been lost.
//! - ECN (RFC 3168 §6.1): the SYN carries ECE and CWR when `ecn` is set or the CC
//!   needs ECN, and a SYN-ACK with ECE (not CWR) makes the connection ECN-capable
//!   (a retransmitted SYN asks no more, Linux `tcp_ecn_fallback`). New data segments
//!   are then sent ECT(0); retransmissions and pure ACKs Not-ECT (§6.1.5). An ACK with
//!   ECE in the Open state reduces the window once (ssthresh from the CC's
//!   `ssthresh_after_ece`, cwnd = ssthresh) and enters CWR (Linux `tcp_enter_cwr`):
//!   no growth and no further ECE response until snd_una passes `high_seq`, the
//!   snd_max of the reduction (Linux requires strictly past it, so that the CWR
//!   flag, sent on the next new data segment, has reached the receiver). Entering
//!   fast recovery or an RTO also queues a CWR (Linux `tcp_ecn_queue_cwr`). Fast
//!   recovery may begin from CWR and keeps CWR's ssthresh (Linux
//!   `tcp_enter_recovery` from `TCP_CA_CWR`).
//! - Proportional Rate Reduction (`prr`, RFC 6937 / Linux, module `prr`): during SACK
//!   fast recovery and CWR, each ACK sets cwnd = pipe + sndcnt instead of cwnd =
//!   ssthresh at once; the reduction ends with cwnd = ssthresh. PRR covers SACK
//!   recovery only: without SACK, fast recovery stays RFC 6582's (window inflation).
//! - RACK (`rack`, RFC 8985 §6, module `rack`): with SACK, losses are marked by time
//!   (the scoreboard's IsLost() pass is off) and fast recovery starts as soon as a
//!   segment is deemed lost (Linux `tcp_time_to_recover`: `lost_out > 0`); the
//!   duplicate-ACK threshold survives as RACK's zero reordering window once DupThresh
//!   segments are SACKed. The reordering timer re-runs the detection. In the Open and
//!   CWR states the data in flight is RFC 6675's pipe, as Linux's
//!   `tcp_packets_in_flight` (SACKed data leaves the window, so Limited Transmit is
//!   implicit).
//! - Tail Loss Probe (`tlp`, RFC 8985 §7, module `tlp`): the probe timer is re-armed
//!   after new data is sent and on ACKs of new data, in Open and CWR only; a probe
//!   that repaired a loss reduces the window once.
//!
//! Sequence space: SYN = 0, data bytes 1..=N, FIN = N+1 for finite transfers.

use super::config::TcpConfig;
use super::frto::{FrtoStep, FrtoVariant, LinuxFrto, LossAck};
use super::gso;
use super::prr::{Prr, PrrAck, PrrMode};
use super::rack::{has_dsack, Rack};
use super::tlp::{self, ProbeOutcome, Tlp};
use super::rate::RateSampler;
use super::rtt::{tsopt_rtt, RttEstimator, RttEstimatorKind};
use super::scoreboard::Scoreboard;
use super::{LazyTimer, Outbox, Segment, TimerKind};
use crate::cc::{AckInfo, CaState, CongestionControl, EcnAckInfo, Window};
use crate::net::packet::{Ecn, TcpHeader, FLAG_ACK, FLAG_CWR, FLAG_ECE, FLAG_FIN, FLAG_SYN};
use crate::time::{Rate, SimDuration, SimTime};

/// Connection phase of the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not yet opened.
    Idle,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    Established,
    /// Everything (including the FIN) acknowledged, or the connection was abandoned.
    Closed,
}

/// F-RTO progress after a timeout (RFC 5682 §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frto {
    Off,
    /// Retransmitted snd_una; waiting for the first ACK.
    AwaitFirst,
    /// New data sent after the first ACK; waiting for the second.
    AwaitSecond,
}

/// Counters the metrics layer reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub segs_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub rtos: u64,
    pub syn_retransmits: u64,
    pub frto_spurious: u64,
    /// Timeouts undone by Eifel detection.
    pub rto_undos: u64,
    /// Window reductions in response to ECN-Echo (entries into CWR).
    pub ecn_reductions: u64,
    /// Tail loss probes sent, and those that repaired a loss (RFC 8985 §7).
    pub tlp_probes: u64,
    pub tlp_loss_repairs: u64,
}

/// An RTO the sender just took: what it retransmitted, for the spurious verdict.
#[derive(Clone, Copy, Debug)]
pub struct RtoEvent {
    pub seq: u64,
    pub tx_id: u32,
}

pub struct TcpSender {
    cfg: TcpConfig,
    pub cc: Box<dyn CongestionControl>,
    pub w: Window,
    rtt: RttEstimator,
    phase: Phase,
    ca: CaState,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// End of the data (exclusive): 1 + bytes; `u64::MAX` for bulk.
    data_end: u64,
    /// Whether the transfer ends with a FIN (finite transfers).
    has_fin: bool,
    /// Bulk flows stop offering new data after `stop`.
    app_stopped: bool,
    /// The FIN waits for `close` (an application that keeps the connection open after
    /// its data, as a request/response client awaiting the response does).
    fin_held: bool,
    rwnd: u64,
    dupacks: u32,
    /// NewReno/RFC 6675 recovery point; after an RTO, snd_max at the timeout.
    recover: u64,
    timed: Option<(u64, SimTime)>,
    rto_timer: LazyTimer,
    syn_sent_at: SimTime,
    syn_attempts: u32,
    tx_counter: u32,
    scoreboard: Option<Scoreboard>,
    frto: Frto,
    /// Linux's F-RTO (`frto_variant = "linux"`), and its step 2b: this ACK sends new
    /// data only, the count since `frto_new_from` (snd_max at step 2b) in flight when
    /// there is no scoreboard.
    linux_frto: LinuxFrto,
    frto_send_new: bool,
    frto_new_from: u64,
    /// The loss episode's cwnd, ssthresh and first retransmission's TSval, for Eifel.
    undo: Option<(u64, u64, u64)>,
    /// F-RTO step 2b: new data may be sent up to this sequence number (snd_max + 2 MSS
    /// when the first ACK after the timeout arrived).
    frto_limit: u64,
    cwnd_limited: bool,
    /// Delivery-rate estimator (for rate samples to the CC).
    rate: RateSampler,
    pending_rate_sample: Option<crate::cc::RateSample>,
    /// This ACK's Karn-clean RTT sample and the minimum of all such samples.
    ack_rtt: Option<SimDuration>,
    min_rtt: Option<SimDuration>,
    /// The handshake's RTT sample (an unambiguous SYN), which Linux's `tcp_min_rtt`
    /// includes; RACK's min_RTT does too.
    syn_rtt: Option<SimDuration>,
    /// Earliest time the next segment may leave when the CC paces.
    next_send_time: SimTime,
    /// Under `linux_cc`, the paced burst (one GSO skb) being sent now (`tcp::gso`).
    burst: gso::Burst,
    pacing_timer: LazyTimer,
    stats: SenderStats,
    /// ECN was asked for on the first SYN (RFC 3168 §6.1.1).
    ecn_requested: bool,
    /// RFC 7323 TS.Recent: the latest TSval the receiver's ACKs carried.
    ts_recent: u64,
    /// ECN was negotiated: data is sent ECT(0) and ECE is acted on.
    ecn_ok: bool,
    /// Set CWR on the next new data segment (RFC 3168 §6.1.2).
    cwr_pending: bool,
    /// snd_max when the current CWR (or recovery) reduction began (Linux `high_seq`).
    high_seq: u64,
    /// The Proportional Rate Reduction in progress, if PRR is on.
    prr: Option<Prr>,
    /// What the ACK being processed tells PRR, and whether PRR already acted on it.
    prr_ack: PrrAck,
    prr_applied: bool,
    /// RACK loss detection and its reordering timer (SACK connections with `rack`).
    rack: Option<Rack>,
    reo_timer: LazyTimer,
    /// The tail loss probe episode and its timer (SACK connections with `tlp`).
    tlp: Option<Tlp>,
    pto_timer: LazyTimer,
    /// Set when the state an observer traces (cwnd, ssthresh, srtt, rto, ca) changed.
    pub trace_dirty: bool,
}

impl TcpSender {
    /// Asks `line` to load what an ACK reads behind pointers: the first outstanding
    /// segment's scoreboard and rate records, the last ones (the data the ACK
    /// releases is recorded after them) and the congestion control's state. Reads
    /// only this struct's own fields.
    #[inline]
    pub fn prefetch_for_ack(&self, line: impl Fn(*const u8)) {
        line(&*self.cc as *const dyn CongestionControl as *const u8);
        if let Some(sb) = &self.scoreboard {
            sb.prefetch_ends(&line);
        }
        self.rate.prefetch_ends(&line);
    }

    /// Offsets of the fields an ACK reads first (window, sequence numbers, counters and
    /// flags, scoreboard, rate sampler, RTT estimator and timer): the lines worth
    /// prefetching before a cold connection handles one.
    pub const HOT_OFFSETS: [usize; 8] = [
        std::mem::offset_of!(TcpSender, w),
        std::mem::offset_of!(TcpSender, snd_una),
        std::mem::offset_of!(TcpSender, stats),
        std::mem::offset_of!(TcpSender, phase),
        std::mem::offset_of!(TcpSender, scoreboard),
        std::mem::offset_of!(TcpSender, rate),
        std::mem::offset_of!(TcpSender, rtt),
        std::mem::offset_of!(TcpSender, rto_timer),
    ];

    /// A sender for `bytes` of data (`None` = bulk) with initial ssthresh override
    /// `cbi_ssthresh` (RFC 2140 reuse).
    pub fn new(
        cfg: TcpConfig,
        cc: Box<dyn CongestionControl>,
        bytes: Option<u64>,
        cbi_ssthresh: Option<u64>,
    ) -> Self {
        let mss = cfg.mss;
        let ssthresh = cbi_ssthresh.or(cfg.initial_ssthresh).unwrap_or(u64::MAX);
        let mut w = cfg.window(ssthresh);
        // The sender paces whenever the CC gives a rate (Linux internal pacing,
        // `SK_PACING_NEEDED`); otherwise the flow is unpaced (`SK_PACING_NONE`).
        w.paced = cc.pacing_rate().is_some();
        let rtt = RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto);
        let mut scoreboard = cfg.sack.then(|| Scoreboard::new(mss, cfg.dupack_threshold));
        let rack = (cfg.rack && cfg.sack).then(Rack::default);
        if let Some(sb) = scoreboard.as_mut() {
            sb.set_rack_marking(rack.is_some());
        }
        let tlp = (cfg.tlp && cfg.sack).then(Tlp::default);
        let ecn_requested = cfg.ecn || cc.needs_ecn();
        TcpSender {
            cc,
            w,
            rtt,
            phase: Phase::Idle,
            ca: CaState::Open,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_end: bytes.map_or(u64::MAX, |b| 1 + b),
            has_fin: bytes.is_some(),
            app_stopped: false,
            fin_held: false,
            rwnd: u64::MAX,
            dupacks: 0,
            recover: 0,
            timed: None,
            rto_timer: LazyTimer::default(),
            syn_sent_at: SimTime::ZERO,
            syn_attempts: 0,
            tx_counter: 0,
            scoreboard,
            frto: Frto::Off,
            linux_frto: LinuxFrto::default(),
            frto_send_new: false,
            frto_new_from: 0,
            undo: None,
            frto_limit: 0,
            cwnd_limited: true,
            rate: RateSampler::default(),
            pending_rate_sample: None,
            ack_rtt: None,
            min_rtt: None,
            syn_rtt: None,
            next_send_time: SimTime::ZERO,
            pacing_timer: LazyTimer::default(),
            burst: gso::Burst::default(),
            stats: SenderStats::default(),
            ecn_requested,
            ts_recent: 0,
            ecn_ok: false,
            cwr_pending: false,
            high_seq: 0,
            prr: None,
            prr_ack: PrrAck { delivered: 0, pipe: 0, una_advanced: false, newly_lost: false },
            prr_applied: false,
            rack,
            reo_timer: LazyTimer::default(),
            tlp,
            pto_timer: LazyTimer::default(),
            trace_dirty: true,
            cfg,
        }
    }

    /// Heap bytes the sender owns: the congestion control's state, the SACK
    /// scoreboard's and the rate sampler's records.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.cc)
            + self.scoreboard.as_ref().map_or(0, |sb| sb.heap_bytes())
            + self.rate.heap_bytes()
    }
    /// The connection's resolved TCP configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn ca_state(&self) -> CaState {
        self.ca
    }
    pub fn stats(&self) -> SenderStats {
        self.stats
    }
    /// cwnd, ssthresh and the growth counters (read-only).
    pub fn window(&self) -> &Window {
        &self.w
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// ECN was negotiated on this connection.
    pub fn ecn_capable(&self) -> bool {
        self.ecn_ok
    }
    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }
    /// Whether every data byte (and the FIN) is acknowledged.
    pub fn all_acked(&self) -> bool {
        self.has_fin && self.snd_una > self.data_end
    }

    /// Opens the connection: sends the SYN.
    pub fn open(&mut self, now: SimTime, out: &mut Outbox) {
        self.phase = Phase::SynSent;
        self.send_syn(now, out);
    }

    /// The application stops offering new data (bulk flows at their stop time).
    pub fn stop_app(&mut self) {
        self.app_stopped = true;
    }

    /// Holds the FIN back until `close` (call before `open`): the data goes out, the
    /// connection stays open.
    pub fn hold_fin(&mut self) {
        self.fin_held = true;
    }

    /// The application closes the connection: the held FIN goes out when the windows
    /// allow (RFC 9293 §3.10.4, CLOSE in ESTABLISHED).
    pub fn close(&mut self, now: SimTime, out: &mut Outbox) {
        if self.fin_held {
            self.fin_held = false;
            self.try_send(now, out);
        }
    }

    /// Passive open: the peer's SYN was answered and the handshake completed, so the
    /// connection is established without a SYN of this sender's own (the sequence
    /// number of its SYN-ACK is 0, as for an active open). `handshake_rtt` is the
    /// SYN-ACK's round trip when it was sent once (Karn; Linux `tcp_synack_rtt_meas`);
    /// with none the RTO stays at the initial RTO. After more than one SYN-ACK
    /// retransmission the initial window is one segment (Linux `tcp_init_transfer`:
    /// `total_retrans > 1`; RFC 5681 §3.1).
    pub fn open_passive(
        &mut self,
        now: SimTime,
        handshake_rtt: Option<SimDuration>,
        synack_retransmits: u32,
        out: &mut Outbox,
    ) {
        self.phase = Phase::Established;
        self.snd_una = 1;
        self.snd_nxt = 1;
        self.snd_max = 1;
        if let Some(r) = handshake_rtt {
            self.rtt.sample(r);
        }
        self.cc.on_established(&mut self.w, handshake_rtt, now);
        if synack_retransmits > 1 {
            self.w.cwnd = self.w.cwnd.min(self.cfg.mss as u64);
        }
        self.trace_dirty = true;
        self.try_send(now, out);
    }

    fn send_syn(&mut self, now: SimTime, out: &mut Outbox) {
        self.syn_attempts += 1;
        self.syn_sent_at = now;
        self.tx_counter += 1;
        let mut flags = FLAG_SYN;
        if self.ecn_requested && self.syn_attempts == 1 {
            flags |= FLAG_ECE | FLAG_CWR; // RFC 3168 §6.1.1: an ECN-setup SYN
        }
        let hdr = TcpHeader { seq: 0, flags, tx_id: self.tx_counter, ..Default::default() };
        out.segments.push(Segment { hdr, size: self.cfg.header_bytes, ecn: Ecn::NotEct });
        self.snd_max = 1;
        self.snd_nxt = 1;
        self.rto_timer.arm(TimerKind::Rto, now + self.rtt.rto(), out);
    }

    /// Processes an ACK (or SYN-ACK) from the receiver.
    pub fn on_ack(&mut self, hdr: &TcpHeader, now: SimTime, out: &mut Outbox) {
        // RFC 7323 §4.3: TS.Recent from the peer's segments (a pure ACK's SEG.SEQ is
        // always at Last.ACK.sent), echoed in the data segments' TSecr.
        if self.cfg.timestamps && hdr.ts_val > self.ts_recent {
            self.ts_recent = hdr.ts_val;
        }
        match self.phase {
            Phase::SynSent if hdr.is_syn() && hdr.ack >= 1 => self.on_syn_ack(hdr, now, out),
            Phase::Established => self.on_data_ack(hdr, now, out),
            _ => {}
        }
    }

    fn on_syn_ack(&mut self, hdr: &TcpHeader, now: SimTime, out: &mut Outbox) {
        self.phase = Phase::Established;
        // RFC 3168 §6.1.1: an ECN-setup SYN-ACK has ECE set and CWR clear.
        self.ecn_ok = self.ecn_requested && self.syn_attempts == 1 && hdr.is_ece() && !hdr.is_cwr();
        self.snd_una = 1;
        self.snd_nxt = 1;
        self.snd_max = 1;
        if self.syn_attempts == 1 {
            // Karn: only an unambiguous SYN gives a sample.
            match self.cfg.rtt_estimator {
                RttEstimatorKind::Rfc6298 => self.rtt.sample(now - self.syn_sent_at),
                RttEstimatorKind::Linux => self.rtt.sample_linux(now - self.syn_sent_at, 1, 1),
            }
            self.syn_rtt = Some(now - self.syn_sent_at);
        } else {
            // RFC 6298 §5.7 and RFC 5681 §3.1 after a SYN timeout.
            if self.cfg.initial_rto < SimDuration::from_secs(3) {
                self.rtt.reset_rto(SimDuration::from_secs(3));
            }
            self.w.cwnd = self.w.cwnd.min(self.cfg.mss as u64);
        }
        // The handshake's sample, if the SYN was sent once (`syn_rtt` is None otherwise).
        self.cc.on_established(&mut self.w, self.syn_rtt, now);
        self.rto_timer.cancel();
        self.trace_dirty = true;
        self.try_send(now, out);
        self.schedule_loss_probe(now, out);
    }

    fn on_data_ack(&mut self, hdr: &TcpHeader, now: SimTime, out: &mut Outbox) {
        let ack = hdr.ack;
        if ack > self.snd_max {
            return; // acknowledges data never sent: ignore (RFC 9293 §3.10.7.4)
        }
        self.rwnd = hdr.wnd;
        let prior_in_flight = self.flight_size();
        // The rate sample's in-flight count: Linux's `tcp_packets_in_flight` (the
        // pipe: SACKed and lost octets excluded) under linux_cc, which BBR's
        // packet conservation reads; FlightSize otherwise.
        let sample_in_flight = match (&self.scoreboard, self.cfg.linux_cc) {
            (Some(sb), true) => sb.pipe(),
            _ => prior_in_flight,
        };
        let segs_before = self.stats.segs_sent;
        let una_advanced = ack > self.snd_una;
        let mut sack_new = false;
        let (mut newly_delivered, mut newly_lost) = (ack.saturating_sub(self.snd_una), 0);
        let mut upd = None;
        if let Some(sb) = self.scoreboard.as_mut() {
            let u = sb.on_ack(ack, hdr.sack_blocks());
            sack_new = u.new_sack_info;
            newly_delivered = u.delivered;
            newly_lost = u.newly_lost;
            upd = Some(u);
        }
        // A D-SACK leads the blocks (RFC 2883); the newest regular block follows it.
        let dsack = hdr.nsack > 0 && has_dsack(hdr.sack_blocks(), ack);
        let regular = &hdr.sack_blocks()[dsack as usize..];
        // RACK (RFC 8985 §6.2 steps 1-6; min_RTT as of the previous ACK).
        if let (Some(u), true) = (upd, self.rack.is_some()) {
            let snd_una = ack.max(self.snd_una);
            let min_rtt = self.rack_min_rtt();
            let rack = self.rack.as_mut().expect("checked");
            rack.on_ack(&u, now, min_rtt);
            rack.on_dsack(dsack, snd_una, self.snd_max);
            newly_lost += self.rack_detect(now, out);
        }
        // Delivery-rate sample and the per-ACK RTT sample (Karn-clean) for the CC.
        let top_sack = if sack_new { regular.first().map(|b| b.end) } else { None };
        let (rs, ack_rtt) = self.rate.on_ack(
            now,
            ack.max(self.snd_una),
            newly_delivered,
            top_sack,
            self.min_rtt,
            sample_in_flight,
            newly_lost,
        );
        self.pending_rate_sample = rs;
        let ack_rtt = match ack_rtt {
            // Linux `tcp_ack_update_rtt`: the echoed TSval only when the ACK advanced
            // snd_una over retransmitted data alone, in the timestamp clock's whole
            // milliseconds (`TCP_TS_HZ`), at least one.
            None if self.cfg.timestamps
                && self.cfg.rtt_estimator == RttEstimatorKind::Linux
                && una_advanced
                && hdr.ts_ecr > 0 =>
            {
                Some(tsopt_rtt(now, hdr.ts_ecr, 1))
            }
            r => r,
        };
        self.ack_rtt = ack_rtt;
        if self.cfg.prr != PrrMode::Off {
            self.prr_ack = PrrAck { delivered: newly_delivered, pipe: 0, una_advanced, newly_lost: newly_lost > 0 };
            self.prr_applied = false;
        }
        if let Some(r) = ack_rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.cc.on_rtt_sample(r, now);
            if self.cfg.rtt_estimator == RttEstimatorKind::Linux {
                // Linux feeds every ACK's sample to its estimator (tcp_ack_update_rtt).
                self.rtt.sample_linux(r, ack.max(self.snd_una), self.snd_max);
            }
        }
        // The tail loss probe's ACK (RFC 8985 §7.4).
        if let Some(t) = self.tlp.as_mut() {
            if t.on_ack(ack, dsack, una_advanced, sack_new) == ProbeOutcome::LossRepaired {
                self.tlp_reduce(now);
            }
        }
        // ECN-Echo (RFC 3168 §6.1.2): tell the CC (DCTCP's alpha), and reduce once per
        // window of data if nothing else has reduced it.
        let ece = self.ecn_ok && hdr.is_ece();
        if self.ecn_ok {
            self.cc.on_ecn_ack(&EcnAckInfo {
                delivered: newly_delivered,
                ece,
                snd_una: ack.max(self.snd_una),
                snd_nxt: self.snd_max,
            });
        }
        if ece && self.ca == CaState::Open {
            self.enter_cwr(now);
        }
        // Linux F-RTO's ACK flags, from before this ACK moves snd_una and snd_nxt.
        let orig = self.orig_delivered(upd.as_ref(), ack);
        let sacked = upd.is_some_and(|u| u.newly_sacked > 0);
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack;
            }
            if self.cfg.timestamps {
                if hdr.ts_ecr > 0 && self.cfg.rtt_estimator != RttEstimatorKind::Linux {
                    self.rtt.sample(now.since(SimTime(hdr.ts_ecr - 1))); // RFC 7323 §4.2
                }
                if self.ca == CaState::Loss {
                    self.eifel_undo(hdr.ts_ecr, now);
                }
            } else {
                self.take_rtt_sample(ack, now);
            }
            self.linux_frto_ack(true, orig, sacked, false, now);
            self.dupacks = 0;
            if self.rack.is_some() && self.rack_recovery_due() {
                self.enter_recovery(now, out);
            }
            let ca_before = self.ca;
            self.on_new_ack(acked, prior_in_flight, now, out);
            if ca_before != CaState::Open && self.ca == CaState::Open && self.rack_recovery_due() {
                // Linux `tcp_fastretrans_alert` ends the episode (step D) and then,
                // on the same ACK, looks for losses again (step E:
                // `tcp_identify_packet_loss`, `tcp_time_to_recover`): what RACK
                // already deems lost starts the next recovery at once, so the CC
                // (BBR's `prev_ca_state`) never sees the connection open between them.
                self.enter_recovery(now, out);
            }
        } else if ack == self.snd_una && hdr.len == 0 && self.flight_size() > 0 {
            let is_dup = self.scoreboard.is_none() || sack_new;
            self.linux_frto_ack(false, orig, sacked, is_dup, now);
            if is_dup {
                self.dupacks += 1;
                match self.frto {
                    // RFC 5682 §2 step 2a: a duplicate first ACK: conventional recovery.
                    Frto::AwaitFirst => self.frto = Frto::Off,
                    // Step 3a: a duplicate second ACK: the RTO was genuine; cwnd <= 3 MSS
                    // and go back to retransmit from snd_una.
                    Frto::AwaitSecond => {
                        self.frto = Frto::Off;
                        self.w.cwnd = self.w.cwnd.min(3 * self.cfg.mss as u64);
                        self.snd_nxt = self.snd_una;
                    }
                    Frto::Off => self.on_dupack(now, out),
                }
            }
        }
        if ece && self.ca == CaState::Open {
            // This ACK ended a reduction (CWR or recovery) and echoes CE again: the
            // next round trip's reduction starts now (Linux `tcp_try_to_open`).
            self.enter_cwr(now);
        }
        if self.prr.is_some() && matches!(self.ca, CaState::Recovery | CaState::Cwr) && !self.prr_applied {
            self.apply_prr();
        }
        if let Some(rs) = self.pending_rate_sample.take() {
            self.cc.on_rate_sample(&mut self.w, &rs);
            self.w.cwnd = self.w.cwnd.max(self.cfg.mss as u64);
        }
        if self.cfg.linux_cc {
            self.update_pacing_rate();
        }
        self.try_send(now, out);
        self.frto_send_new = false;
        if self.all_acked() {
            self.phase = Phase::Closed;
            self.rto_timer.cancel();
            self.pacing_timer.cancel();
            self.pto_timer.cancel();
            self.reo_timer.cancel();
        } else if self.tlp.is_some() && (una_advanced || self.stats.segs_sent > segs_before) {
            self.schedule_loss_probe(now, out);
        }
        self.trace_dirty = true;
    }

    /// RACK's loss scan now (steps 4-6): marks losses, arms or stops the reordering
    /// timer; returns the octets newly deemed lost.
    fn rack_detect(&mut self, now: SimTime, out: &mut Outbox) -> u64 {
        let min_rtt = self.rack_min_rtt();
        let (Some(rack), Some(sb)) = (self.rack.as_ref(), self.scoreboard.as_mut()) else { return 0 };
        let in_recovery = matches!(self.ca, CaState::Recovery | CaState::Loss);
        let dupthresh_sacked = sb.sacked_bytes() > (self.cfg.dupack_threshold.max(1) as u64 - 1) * self.cfg.mss as u64;
        let reo_wnd = rack.reo_wnd(in_recovery, dupthresh_sacked, min_rtt, self.rtt.srtt());
        let (lost, timeout) = rack.detect_losses(sb, now, reo_wnd);
        match timeout {
            Some(t) => {
                self.reo_timer.arm(TimerKind::Reorder, now + t, out);
                self.pto_timer.cancel();
            }
            None => self.reo_timer.cancel(),
        }
        lost
    }

    /// RACK's min_RTT: the smallest RTT sample, the handshake's included.
    fn rack_min_rtt(&self) -> Option<SimDuration> {
        match (self.min_rtt, self.syn_rtt) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// RACK says fast recovery should start (Linux `tcp_time_to_recover` with RACK:
    /// something is deemed lost). Linux does not wait for snd_una to pass the last
    /// episode's high_seq (RFC 6675's RecoveryPoint) first: after a timeout it undid,
    /// the losses RACK marks again start a recovery at once.
    fn rack_recovery_due(&self) -> bool {
        self.rack.is_some()
            && matches!(self.ca, CaState::Open | CaState::Cwr)
            && self.frto == Frto::Off
            && self.scoreboard.as_ref().is_some_and(|sb| sb.lost_bytes() > 0 && !sb.in_recovery())
    }

    /// The RACK reordering timer event of generation `gen` (RFC 8985 §6.3, Linux
    /// `tcp_rack_reo_timeout`): losses now due start recovery and are retransmitted.
    pub fn on_reorder_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox) {
        if !self.reo_timer.fire(TimerKind::Reorder, gen, now, out) || self.phase != Phase::Established {
            return;
        }
        if self.rack_detect(now, out) > 0 {
            if self.rack_recovery_due() {
                // As Linux: PRR sees one segment delivered, no ACK behind it.
                self.prr_ack = PrrAck { delivered: self.cfg.mss as u64, pipe: 0, una_advanced: false, newly_lost: false };
                self.prr_applied = false;
                self.enter_recovery(now, out);
            }
            self.try_send(now, out);
        }
        self.schedule_loss_probe(now, out);
        self.trace_dirty = true;
    }

    /// Arms the probe timer if a tail loss probe may be sent (RFC 8985 §7.2), or
    /// stops it.
    fn schedule_loss_probe(&mut self, now: SimTime, out: &mut Outbox) {
        if self.tlp.is_none() {
            return;
        }
        let flight = self.flight_size();
        if !matches!(self.ca, CaState::Open | CaState::Cwr)
            || flight == 0
            || self.phase != Phase::Established
            || self.reo_timer.deadline().is_some()
        {
            self.pto_timer.cancel();
            return;
        }
        let rto_left = self.rto_timer.deadline().map_or(self.rtt.rto(), |d| SimDuration(d.0.saturating_sub(now.0)));
        let pto = tlp::pto(self.rtt.srtt(), flight <= self.cfg.mss as u64, rto_left);
        self.pto_timer.arm(TimerKind::LossProbe, now + pto, out);
    }

    /// The probe timer event of generation `gen` (RFC 8985 §7.3, Linux
    /// `tcp_send_loss_probe`): one new segment if allowed, else the highest one again.
    pub fn on_loss_probe_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox) {
        if !self.pto_timer.fire(TimerKind::LossProbe, gen, now, out) {
            return;
        }
        let Some(t) = self.tlp else { return };
        if t.outstanding() || !matches!(self.ca, CaState::Open | CaState::Cwr) || self.flight_size() == 0 || self.phase != Phase::Established {
            return;
        }
        let mss = self.cfg.mss as u64;
        let new_ok = self.has_unsent_data(self.snd_max) && self.snd_max + mss <= self.snd_una.saturating_add(self.rwnd.max(mss));
        let retransmitted = !new_ok;
        if new_ok {
            self.snd_nxt = self.snd_max;
            self.send_segment_at(self.snd_max, now, out);
        } else {
            let seq = self.scoreboard.as_ref().and_then(|sb| sb.last_segment()).map_or(self.snd_una, |(s, _)| s);
            self.retransmit_at(seq, now, out);
        }
        if let Some(t) = self.tlp.as_mut() {
            t.on_probe(self.snd_max, retransmitted);
        }
        self.stats.tlp_probes += 1;
        self.rto_timer.arm(TimerKind::Rto, now + self.rtt.rto(), out);
        self.trace_dirty = true;
    }

    /// A probe repaired a loss: reduce the window once (Linux: enter CWR and end it
    /// at once, cwnd = ssthresh).
    fn tlp_reduce(&mut self, now: SimTime) {
        if !matches!(self.ca, CaState::Open | CaState::Cwr) {
            return;
        }
        let flight = self.flight_size();
        self.w.ssthresh = self.loss_ssthresh(flight);
        self.restart_growth_count();
        if !self.cc_owns_cwnd() {
            self.w.cwnd = self.w.ssthresh;
        }
        self.prr = None;
        self.stats.tlp_loss_repairs += 1;
        self.set_ca(CaState::Cwr, now);
        self.set_ca(CaState::Open, now);
    }

    /// The pacing timer event of generation `gen`: send what is now allowed.
    pub fn on_pacing_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox) {
        if self.pacing_timer.fire(TimerKind::Pacing, gen, now, out) {
            self.try_send(now, out);
            self.schedule_loss_probe(now, out);
        }
    }

    /// The socket's pacing rate after an ACK (`Window::pacing_rate`): the CC's own when
    /// it has one (BBR sets `sk_pacing_rate`), otherwise Linux `tcp_update_pacing_rate`
    /// (called at the end of `tcp_cong_control` for every flow, paced or not):
    /// `max(cwnd, packets_out) / SRTT` times 200 % while cwnd < ssthresh/2
    /// (`tcp_pacing_ss_ratio`), else 120 % (`tcp_pacing_ca_ratio`); unknown (`~0`)
    /// before an RTT sample.
    fn update_pacing_rate(&mut self) {
        self.w.pacing_rate = match (self.cc.pacing_rate(), self.rtt.srtt()) {
            (Some(r), _) => r.0 / 8,
            (None, Some(srtt)) if srtt.as_nanos() > 0 => {
                let ratio = if self.w.cwnd < self.w.ssthresh / 2 { 2.0 } else { 1.2 };
                let bytes = self.w.cwnd.max(self.snd_max - self.snd_una) as f64;
                (ratio * bytes / srtt.as_secs_f64()).min(u64::MAX as f64) as u64
            }
            (None, _) => u64::MAX,
        };
    }

    /// The earliest time the segment after this one (`len` payload octets, sent `now`)
    /// may leave at pacing rate `rate`.
    ///
    /// Under `linux_cc` this is Linux's `tcp_update_skb_after_send`: the gap is the
    /// payload's time at the rate (the skb's length, headers excluded: BBR's rate is
    /// delivered payload, `bbr_rate_bytes_per_sec`), less the lateness of this send up
    /// to half the gap ("take into account OS jitter"), and the first 10 data segments
    /// are not paced (`data_segs_out >= 10`). Linux paces skbs, not segments: new data
    /// opens a GSO burst of `tcp_tso_autosize` segments or joins the one opened at this
    /// instant, and the gap is the whole burst's (`tcp::gso`). A retransmission is an
    /// skb of its own (`tcp_xmit_retransmit_queue` resends the lost skb; under random
    /// loss that is nearly always one segment), so it is a burst of one. Otherwise
    /// the whole packet's time (payload and headers), counted from the later of now
    /// and the scheduled time.
    ///
    /// With MSS 1448 and 52-byte headers the first rule puts 3.6 % more bits on the
    /// wire at one pacing rate than the second.
    fn next_pacing_time(&mut self, rate: Rate, len: u32, retransmission: bool, now: SimTime) -> SimTime {
        if !self.cfg.linux_cc {
            return self.next_send_time.max(now) + rate.tx_time(len + self.cfg.header_bytes);
        }
        if retransmission {
            self.burst.open(now, self.next_send_time, 1);
        } else if !self.burst.is_open(now) {
            let segs = gso::tso_autosize(rate.0 / 8, self.cfg.mss, self.rack_min_rtt(), self.cc.min_tso_segs());
            self.burst.open(now, self.next_send_time, segs);
        }
        let next = self.burst.add(len, rate);
        if self.stats.segs_sent + 1 < 10 {
            // This segment is among the first 10 (it is counted after this call).
            return now;
        }
        next
    }

    /// When the CC paces and the next segment may not leave yet, arms the pacing timer
    /// and returns true (the caller stops sending for now).
    fn pacing_blocks(&mut self, now: SimTime, out: &mut Outbox) -> bool {
        // A burst is only ever opened under `linux_cc` (`next_pacing_time`).
        if self.cc.pacing_rate().is_some() && now < self.next_send_time && !self.burst.is_open(now) {
            if self.pacing_timer.deadline().is_none() {
                self.pacing_timer.arm(TimerKind::Pacing, self.next_send_time, out);
            }
            return true;
        }
        false
    }

    fn take_rtt_sample(&mut self, ack: u64, now: SimTime) {
        if self.cfg.rtt_estimator == RttEstimatorKind::Linux {
            return; // every ACK's sample is taken in on_data_ack
        }
        if let Some((end, sent)) = self.timed {
            if ack >= end {
                // The RTO estimator takes one timed sample per RTT (RFC 6298 §3, ns-2);
                // the CC gets every Karn-clean sample from the rate sampler instead.
                self.rtt.sample(now - sent);
                self.timed = None;
            }
        }
    }

    fn on_new_ack(&mut self, acked: u64, prior_in_flight: u64, now: SimTime, out: &mut Outbox) {
        if self.ca == CaState::Cwr && self.snd_una > self.high_seq {
            // The data sent before the reduction is acked: CWR ends (Linux
            // `tcp_end_cwnd_reduction`, cwnd = ssthresh) and growth resumes.
            self.w.cwnd = self.w.ssthresh;
            self.prr = None;
            self.set_ca(CaState::Open, now);
        }
        let info = AckInfo {
            now,
            acked_bytes: acked,
            rtt: self.ack_rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.min_rtt,
            in_flight: prior_in_flight,
            cwnd_limited: self.cwnd_limited,
        };
        match self.ca {
            CaState::Recovery => {
                if self.snd_una > self.recover {
                    // Full ACK: leave recovery (RFC 6582 §3.2 step 3, option 1; RFC 6675 §5).
                    let flight = self.flight_size();
                    if self.cc_owns_cwnd() {
                        // Linux `tcp_end_cwnd_reduction` returns early: the CC restores.
                    } else if self.scoreboard.is_some() {
                        self.w.cwnd = self.w.ssthresh;
                    } else {
                        self.w.cwnd = self.w.ssthresh.min(flight.max(self.cfg.mss as u64) + self.cfg.mss as u64);
                    }
                    self.prr = None;
                    self.set_ca(CaState::Open, now);
                } else if self.scoreboard.is_none() {
                    // Partial ACK (RFC 6582 §3.2 step 4): retransmit the next hole,
                    // deflate by the amount acked, add back one MSS if >= MSS acked.
                    self.retransmit_at(self.snd_una, now, out);
                    self.w.cwnd = self.w.cwnd.saturating_sub(acked);
                    if acked >= self.cfg.mss as u64 {
                        self.w.cwnd += self.cfg.mss as u64;
                    }
                    self.w.cwnd = self.w.cwnd.max(self.cfg.mss as u64);
                }
            }
            CaState::Loss => {
                match self.frto {
                    Frto::AwaitFirst => {
                        let mss = self.cfg.mss as u64;
                        let can_send_new = self.has_unsent_data(self.snd_max)
                            && self.snd_max + mss <= self.snd_una.saturating_add(self.rwnd.max(mss));
                        if self.snd_una <= self.recover && can_send_new {
                            // RFC 5682 §2 step 2b: send up to two new segments.
                            self.frto = Frto::AwaitSecond;
                            self.snd_nxt = self.snd_max;
                            self.frto_limit = self.snd_max + 2 * mss;
                        } else {
                            // Step 2b's fallback: with no new data (or no window) to send,
                            // skip step 3 and continue the conventional RTO recovery.
                            self.frto = Frto::Off;
                        }
                    }
                    Frto::AwaitSecond => {
                        // Step 3b: the window advanced again: the timeout was spurious.
                        // Response (RFC 5682 §3, the conservative one): keep the halved
                        // ssthresh and continue in congestion avoidance from it instead of
                        // slow-starting from one segment; no go-back-N.
                        self.frto = Frto::Off;
                        self.stats.frto_spurious += 1;
                        self.w.cwnd = self.w.ssthresh.max(2 * self.cfg.mss as u64);
                        if let Some(sb) = self.scoreboard.as_mut() {
                            sb.undo_rto_losses();
                        }
                        self.snd_nxt = self.snd_max;
                        self.set_ca(CaState::Open, now);
                    }
                    Frto::Off => {}
                }
                if self.ca == CaState::Loss {
                    if self.snd_una > self.recover {
                        self.set_ca(CaState::Open, now);
                        if self.scoreboard.is_some() {
                            self.snd_nxt = self.snd_max;
                        }
                    }
                    self.cc.on_ack(&mut self.w, &info);
                }
            }
            CaState::Open => self.cc.on_ack(&mut self.w, &info),
            // No growth while the window is being reduced (Linux `tcp_cong_control`).
            CaState::Cwr => {}
        }
        // RFC 6298 §5.3: restart the timer when new data is acked; stop it when all is.
        if self.flight_size() > 0 {
            self.rto_timer.arm(TimerKind::Rto, now + self.rtt.rto(), out);
        } else {
            self.rto_timer.cancel();
        }
    }

    /// RFC 3522 §2: the ACK echoes `ts_ecr`; older than the first retransmission means
    /// the original was delivered, so the timeout was spurious (module doc).
    fn eifel_undo(&mut self, ts_ecr: u64, now: SimTime) {
        let Some((_, _, first_rexmit)) = self.undo else { return };
        if ts_ecr == 0 || ts_ecr >= first_rexmit {
            return;
        }
        self.stats.rto_undos += 1;
        self.undo_loss(now);
    }

    /// Undoes the timeout (Linux `tcp_undo_cwnd_reduction` with the loss marks
    /// cleared): cwnd and ssthresh back to at least their values before it, when the
    /// episode recorded them; sending resumes at snd_max, state Open.
    fn undo_loss(&mut self, now: SimTime) {
        if let Some((cwnd, ssthresh, _)) = self.undo.take() {
            self.w.cwnd = self.w.cwnd.max(cwnd);
            self.w.ssthresh = self.w.ssthresh.max(ssthresh);
        }
        if let Some(sb) = self.scoreboard.as_mut() {
            sb.undo_rto_losses();
        }
        self.frto = Frto::Off;
        self.linux_frto.clear();
        self.frto_send_new = false;
        self.snd_nxt = self.snd_max;
        self.set_ca(CaState::Open, now);
    }

    /// Never-retransmitted data sent before the episode's end was delivered by this
    /// ACK (Linux `FLAG_ORIG_SACK_ACKED`, set by `tcp_clean_rtx_queue` and
    /// `tcp_sacktag_one` for segments ending by `high_seq`): from the scoreboard; without
    /// one, a cumulative ACK past what the timeout's go-back-N has resent (snd_nxt),
    /// before step 2b only (the sender keeps no per-segment record then).
    fn orig_delivered(&self, upd: Option<&super::scoreboard::AckUpdate>, ack: u64) -> bool {
        match upd {
            Some(u) => u.lowest_clean_end.is_some_and(|e| e <= self.recover + 1),
            None => ack > self.snd_nxt && self.snd_nxt <= self.recover,
        }
    }

    /// Linux's F-RTO on one ACK in the Loss state (module `frto`).
    fn linux_frto_ack(&mut self, una_advanced: bool, orig_delivered: bool, data_sacked: bool, dupack: bool, now: SimTime) {
        if self.ca != CaState::Loss || !self.linux_frto.is_active() {
            return;
        }
        let mss = self.cfg.mss as u64;
        let a = LossAck {
            una_advanced,
            orig_delivered,
            data_sacked,
            dupack,
            recovered: self.snd_una > self.recover,
            can_send_new: self.has_unsent_data(self.snd_max)
                && self.snd_max < self.snd_una.saturating_add(self.rwnd.max(mss)),
        };
        match self.linux_frto.on_loss_ack(&a) {
            FrtoStep::Undo => {
                self.stats.frto_spurious += 1;
                self.undo_loss(now);
            }
            FrtoStep::SendNew => {
                // high_seq = snd_nxt: the episode now ends with the new data.
                self.recover = self.snd_max - 1;
                self.frto_send_new = true;
                self.frto_new_from = self.snd_max;
                self.snd_nxt = self.snd_max;
            }
            FrtoStep::Conventional => {}
        }
    }

    fn on_dupack(&mut self, now: SimTime, out: &mut Outbox) {
        match self.ca {
            CaState::Open | CaState::Cwr if self.rack.is_some() => {
                if self.rack_recovery_due() {
                    self.enter_recovery(now, out);
                }
            }
            CaState::Open | CaState::Cwr => {
                let lost_by_sack = self
                    .scoreboard
                    .as_ref()
                    .is_some_and(|sb| sb.is_lost(self.snd_una));
                // RFC 6582 §3.2 step 2: no new fast retransmit until snd_una passes the
                // previous recovery point (which an RTO also sets).
                if (self.dupacks >= self.cfg.dupack_threshold || lost_by_sack) && self.snd_una > self.recover {
                    self.enter_recovery(now, out);
                }
            }
            CaState::Recovery if self.scoreboard.is_none() => {
                // RFC 6582 §3.2 step 3 (RFC 5681 §3.2 step 4): inflate by one MSS.
                self.w.cwnd += self.cfg.mss as u64;
            }
            _ => {}
        }
    }

    fn enter_recovery(&mut self, now: SimTime, out: &mut Outbox) {
        let flight = self.flight_size();
        if self.ca != CaState::Cwr {
            // From CWR the window was already reduced in this round trip (and PRR,
            // if on, continues the same reduction).
            self.w.ssthresh = self.loss_ssthresh(flight);
            self.restart_growth_count();
            self.prr = if self.scoreboard.is_some() && !self.cc_owns_cwnd() {
                Prr::start(self.cfg.prr, self.w.ssthresh, flight, self.w.cwnd)
            } else {
                None
            };
        }
        self.cwr_pending |= self.ecn_ok;
        self.high_seq = self.snd_max;
        self.recover = self.snd_max - 1;
        if let Some(t) = self.tlp.as_mut() {
            t.clear();
        }
        self.pto_timer.cancel();
        self.stats.fast_retransmits += 1;
        self.set_ca(CaState::Recovery, now);
        self.timed = None;
        if self.scoreboard.is_some() {
            // RFC 6675 §5 step (4): RecoveryPoint = HighData, cwnd = ssthresh (or
            // PRR's first step, which allows at least this retransmission),
            // retransmit the first segment; then transmission is pipe-driven.
            if self.prr.is_some() {
                self.apply_prr();
            } else if !self.cc_owns_cwnd() {
                self.w.cwnd = self.w.ssthresh;
            }
            let sb = self.scoreboard.as_mut().expect("SACK recovery");
            let first = sb.enter_recovery();
            // With RACK and PRR the lost segments go out through NextSeg as PRR
            // allows (Linux retransmits only what is marked lost; PRR's first step
            // allows one segment); otherwise RFC 6675 (4.3) retransmits the first one.
            if let Some((seq, _)) = first {
                if self.rack.is_none() || (self.prr.is_none() && !self.cc_owns_cwnd()) {
                    self.retransmit_at(seq, now, out);
                }
            }
        } else {
            // RFC 6582 §3.2 step 2: retransmit, cwnd = ssthresh + 3 MSS.
            self.prr = None;
            self.retransmit_at(self.snd_una, now, out);
            self.w.cwnd = self.w.ssthresh + self.cfg.dupack_threshold as u64 * self.cfg.mss as u64;
        }
        self.rto_timer.arm(TimerKind::Rto, now + self.rtt.rto(), out);
    }

    /// RFC 3168 §6.1.2 / Linux `tcp_enter_cwr`: reduce the window once for an
    /// ECN-Echo and hold it until the data outstanding now is acked.
    fn enter_cwr(&mut self, now: SimTime) {
        let flight = self.flight_size();
        self.w.ssthresh = self.whole_segments(self.cc.ssthresh_after_ece(&self.w, self.reduction_base(flight)));
        self.prr = if self.cc_owns_cwnd() { None } else { Prr::start(self.cfg.prr, self.w.ssthresh, flight, self.w.cwnd) };
        if self.prr.is_none() && !self.cc_owns_cwnd() {
            self.w.cwnd = self.w.ssthresh;
        }
        self.w.bytes_acked = 0;
        self.high_seq = self.snd_max;
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        if let Some(t) = self.tlp.as_mut() {
            t.clear();
        }
        self.set_ca(CaState::Cwr, now);
    }

    /// What a window reduction starts from: FlightSize (RFC 5681 eq. 4) or cwnd
    /// (Linux, `ssthresh_from_cwnd`).
    fn reduction_base(&self, flight: u64) -> u64 {
        if self.cfg.ssthresh_from_cwnd {
            self.w.cwnd
        } else {
            flight
        }
    }

    /// ssthresh after a loss (recovery, RTO, a repaired tail loss): the CC's, from
    /// the reduction base, in whole segments under `linux_cc`.
    fn loss_ssthresh(&self, flight: u64) -> u64 {
        self.whole_segments(self.cc.ssthresh_after_loss(&self.w, self.reduction_base(flight)))
    }

    /// Under `linux_cc`, a window reduction's result rounded down to whole segments
    /// (at least 2): Linux's CC modules compute ssthresh in packets, e.g.
    /// `tcp_reno_ssthresh` = max(cwnd >> 1, 2) and CUBIC's `bictcp_recalc_ssthresh` =
    /// max(cwnd * beta / 1024, 2), so 21 segments halve to 10, not 10.5.
    fn whole_segments(&self, ssthresh: u64) -> u64 {
        if !self.cfg.linux_cc || ssthresh == u64::MAX {
            return ssthresh;
        }
        let mss = self.cfg.mss as u64;
        (ssthresh / mss).max(2) * mss
    }

    /// Under `linux_cc`, a window reduction restarts congestion avoidance's count of
    /// acked bytes (Linux `tcp_init_cwnd_reduction`: `snd_cwnd_cnt = 0`), so credit
    /// earned at the old window does not grow the new one at once.
    fn restart_growth_count(&mut self) {
        if self.cfg.linux_cc {
            self.w.bytes_acked = 0;
        }
    }

    /// Whether the CC sets cwnd through recovery itself (Linux `cong_control`, under
    /// `linux_cc`); the sender's PRR and its cwnd = ssthresh steps then stand aside.
    fn cc_owns_cwnd(&self) -> bool {
        self.cfg.linux_cc && self.cc.cong_control()
    }

    /// PRR's cwnd for the ACK being processed (once per ACK).
    fn apply_prr(&mut self) {
        self.prr_applied = true;
        let pipe = match self.scoreboard.as_ref() {
            Some(sb) => sb.pipe(),
            None => self.flight_size(),
        };
        let mss = self.cfg.mss as u64;
        if let Some(p) = self.prr.as_mut() {
            if let Some(cwnd) = p.on_ack(&PrrAck { pipe, ..self.prr_ack }, mss) {
                self.w.cwnd = cwnd.max(mss);
            }
        }
    }

    fn set_ca(&mut self, to: CaState, now: SimTime) {
        if self.ca != to {
            let from = self.ca;
            if to == CaState::Open && matches!(from, CaState::Recovery | CaState::Loss) {
                if let Some(r) = self.rack.as_mut() {
                    r.on_recovery_exit();
                }
            }
            self.ca = to;
            self.cc.on_state_change(&mut self.w, from, to, now);
        }
    }

    /// The timer event of generation `gen`. Returns the RTO taken, if one fired.
    pub fn on_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox) -> Option<RtoEvent> {
        if !self.rto_timer.fire(TimerKind::Rto, gen, now, out) {
            return None;
        }
        self.trace_dirty = true;
        match self.phase {
            Phase::SynSent => {
                if self.syn_attempts > self.cfg.syn_retries {
                    self.phase = Phase::Closed;
                    return None;
                }
                self.stats.syn_retransmits += 1;
                self.rtt.backoff();
                self.send_syn(now, out);
                Some(RtoEvent { seq: 0, tx_id: self.tx_counter })
            }
            Phase::Established => {
                self.stats.rtos += 1;
                let first_timeout = self.rtt.backoffs() == 0;
                let episode_start = self.ca != CaState::Loss;
                let new_recovery = matches!(self.ca, CaState::Open | CaState::Cwr);
                let prior = (self.w.cwnd, self.w.ssthresh);
                if first_timeout || self.ca != CaState::Loss {
                    let flight = self.flight_size();
                    self.w.ssthresh = self.loss_ssthresh(flight);
                }
                self.w.cwnd = self.cfg.mss as u64; // LossWindow (RFC 5681 §3.1)
                self.w.bytes_acked = 0;
                self.rtt.backoff();
                self.recover = self.snd_max - 1;
                self.dupacks = 0;
                self.timed = None;
                self.cwr_pending |= self.ecn_ok;
                self.prr = None;
                self.set_ca(CaState::Loss, now);
                self.cc.on_rto(&mut self.w, now);
                let rack_rtt = self.rack.as_ref().map(|r| r.rtt());
                if let Some(sb) = self.scoreboard.as_mut() {
                    match rack_rtt {
                        Some(rtt) => sb.rack_mark_rto_losses(now, rtt),
                        None => sb.mark_all_lost_for_rto(),
                    }
                }
                if let Some(t) = self.tlp.as_mut() {
                    t.clear();
                }
                self.pto_timer.cancel();
                self.reo_timer.cancel();
                // F-RTO in its basic form, also with SACK (as Linux allows): the SACK
                // board's RTO loss marking is undone if the timeout proves spurious.
                let basic = self.cfg.frto_variant == FrtoVariant::Rfc5682;
                self.frto = if self.cfg.frto && basic { Frto::AwaitFirst } else { Frto::Off };
                self.linux_frto.on_rto(self.cfg.frto && !basic, new_recovery, !first_timeout);
                self.frto_send_new = false;
                // Go-back-N from snd_una (RFC 5681 §3.1; RFC 6298 §5.4).
                self.snd_nxt = self.snd_una;
                let seq = self.snd_una;
                self.send_segment_at(seq, now, out);
                if episode_start {
                    self.undo = Some((prior.0, prior.1, now.0 + 1));
                }
                self.rto_timer.arm(TimerKind::Rto, now + self.rtt.rto(), out);
                Some(RtoEvent { seq, tx_id: self.tx_counter })
            }
            _ => None,
        }
    }

    /// Length and FIN flag of the segment starting at `seq`.
    fn segment_at(&self, seq: u64) -> (u32, bool) {
        let mss = self.cfg.mss as u64;
        let has_fin = self.has_fin && !self.fin_held;
        if seq >= self.data_end {
            return (0, has_fin);
        }
        let len = mss.min(self.data_end - seq);
        let fin = has_fin && seq + len == self.data_end;
        (len as u32, fin)
    }

    /// Sends the segment starting at `seq`, new or retransmitted, and advances snd_nxt.
    fn send_segment_at(&mut self, seq: u64, now: SimTime, out: &mut Outbox) {
        let (len, fin) = self.segment_at(seq);
        let end = seq + len as u64 + fin as u64;
        let retransmission = seq < self.snd_max;
        self.tx_counter += 1;
        let mut flags = FLAG_ACK;
        if fin {
            flags |= FLAG_FIN;
        }
        // RFC 3168 §6.1.5: ECT on new data only; CWR on the first new data segment
        // after a reduction (Linux `tcp_ecn_send`).
        let ecn = if self.ecn_ok && len > 0 && !retransmission { Ecn::Ect0 } else { Ecn::NotEct };
        if ecn == Ecn::Ect0 && self.cwr_pending {
            flags |= FLAG_CWR;
            self.cwr_pending = false;
        }
        let hdr = TcpHeader {
            seq,
            ack: 1,
            len,
            flags,
            tx_id: self.tx_counter,
            ss_hint: self.w.in_slow_start(),
            ts_val: if self.cfg.timestamps { now.0 + 1 } else { 0 },
            ts_ecr: if self.cfg.timestamps { self.ts_recent } else { 0 },
            ..Default::default()
        };
        self.rate.on_send(seq, end, now, self.snd_max - self.snd_una);
        if let Some(r) = self.cc.pacing_rate() {
            self.next_send_time = self.next_pacing_time(Rate(r.0.max(1)), len, retransmission, now);
        }
        out.segments.push(Segment { hdr, size: len + self.cfg.header_bytes, ecn });
        if let Some(p) = self.prr.as_mut() {
            p.on_send(len as u64);
        }
        self.stats.segs_sent += 1;
        self.stats.bytes_sent += len as u64;
        if retransmission {
            self.stats.retransmits += 1;
            // Karn: a retransmission invalidates a timed segment it overlaps.
            if self.timed.is_some_and(|(e, _)| e > seq) {
                self.timed = None;
            }
        } else if self.timed.is_none() {
            self.timed = Some((end, now));
        }
        if let Some(sb) = self.scoreboard.as_mut() {
            sb.on_send_at(seq, len + fin as u32, retransmission, now);
        }
        self.snd_nxt = self.snd_nxt.max(end);
        if end > self.snd_max {
            self.snd_max = end;
        }
        self.cc.on_packet_sent(now, len + self.cfg.header_bytes, self.snd_max - self.snd_una);
        if self.rto_timer.deadline().is_none() {
            self.rto_timer.arm(TimerKind::Rto, now + self.rtt.rto(), out);
        }
    }

    /// Retransmits the segment at `seq` without moving snd_nxt.
    fn retransmit_at(&mut self, seq: u64, now: SimTime, out: &mut Outbox) {
        let nxt = self.snd_nxt;
        self.send_segment_at(seq, now, out);
        self.snd_nxt = nxt;
    }

    fn has_unsent_data(&self, seq: u64) -> bool {
        if self.app_stopped && seq >= self.snd_max {
            return false;
        }
        seq < self.data_end || (self.has_fin && !self.fin_held && seq == self.data_end)
    }

    /// Sends what the windows allow.
    fn try_send(&mut self, now: SimTime, out: &mut Outbox) {
        if self.phase != Phase::Established {
            return;
        }
        let mss = self.cfg.mss as u64;
        if self.scoreboard.is_some()
            && matches!(self.ca, CaState::Recovery | CaState::Loss)
            && self.frto != Frto::AwaitSecond
            && !self.frto_send_new
        {
            self.pipe_send(now, out);
            return;
        }
        let mut limited_by_cwnd = false;
        loop {
            let seq = self.snd_nxt;
            if !self.has_unsent_data(seq) {
                if self.snd_nxt >= self.snd_max && self.flight_size() + mss <= self.w.cwnd {
                    // Out of data with room in cwnd: samples are app-limited (§3.4).
                    self.rate.mark_app_limited(self.flight_size());
                }
                break;
            }
            let (len, fin) = self.segment_at(seq);
            let seg = (len as u64).max(1);
            // With RACK, what is in flight is pipe (Linux `tcp_packets_in_flight`).
            // Linux F-RTO's new data (step 2b) counts the pipe as well: the timeout
            // marked the rest lost.
            let in_flight = match (&self.rack, &self.scoreboard) {
                (Some(_), Some(sb)) if self.snd_nxt >= self.snd_max => sb.pipe(),
                (None, Some(sb)) if self.frto_send_new && self.snd_nxt >= self.snd_max => sb.pipe(),
                (_, None) if self.frto_send_new => self.snd_nxt - self.frto_new_from,
                _ => self.snd_nxt - self.snd_una,
            };
            let mut window = self.w.cwnd;
            if self.rack.is_none() && matches!(self.ca, CaState::Open | CaState::Cwr) && self.cfg.limited_transmit && self.dupacks > 0 && self.dupacks < self.cfg.dupack_threshold {
                // RFC 3042 §2: one extra segment per duplicate ACK, new data only.
                if seq >= self.snd_max {
                    window += self.dupacks as u64 * mss;
                }
            }
            if self.frto == Frto::AwaitSecond {
                // RFC 5682 §2 step 2b: up to two new segments beyond the flight at the
                // first ACK (a fixed limit: recomputing it from the growing flight on
                // every segment would let the whole receive window out).
                window = window.max(self.frto_limit.saturating_sub(self.snd_una));
            }
            // Linux quirk (seed 001): the segment carrying the FIN goes out whatever cwnd says.
            let cwnd_ok = in_flight + seg <= window
                || (fin && self.cfg.fin_ignores_cwnd && seq >= self.snd_max);
            let rwnd_ok = seq + seg <= self.snd_una.saturating_add(self.rwnd.max(mss));
            if !cwnd_ok {
                limited_by_cwnd = true;
                break;
            }
            if !rwnd_ok || self.pacing_blocks(now, out) {
                break;
            }
            self.send_segment_at(seq, now, out);
        }
        self.cwnd_limited = limited_by_cwnd || self.snd_nxt - self.snd_una + mss > self.w.cwnd;
    }

    /// RFC 6675 §5 step (C), and §5.1 after an RTO: while cwnd - pipe >= 1 SMSS,
    /// send what NextSeg() chooses (lost segments first, in order, then new data).
    fn pipe_send(&mut self, now: SimTime, out: &mut Outbox) {
        use super::scoreboard::NextSeg;
        let mss = self.cfg.mss as u64;
        let mut head_resent = false;
        loop {
            let new_data_ok = self.has_unsent_data(self.snd_max)
                && self.snd_max + mss <= self.snd_una.saturating_add(self.rwnd.max(mss));
            let sb = self.scoreboard.as_mut().expect("pipe_send without scoreboard");
            if self.w.cwnd < sb.pipe() + mss || self.pacing_blocks(now, out) {
                break;
            }
            let sb = self.scoreboard.as_mut().expect("pipe_send without scoreboard");
            match sb.next_seg(new_data_ok) {
                NextSeg::Retransmit { seq, .. } => {
                    head_resent |= seq == self.snd_una;
                    self.retransmit_at(seq, now, out)
                }
                NextSeg::NewData => {
                    self.snd_nxt = self.snd_max;
                    self.send_segment_at(self.snd_max, now, out);
                }
                NextSeg::Nothing => break,
            }
        }
        // Linux's RTO management (`rtt_estimator = "linux"`): resending the head of the
        // retransmission queue restarts the RTO, unless RACK's reorder timer holds the
        // timer slot (`tcp_xmit_retransmit_queue`'s `rearm_timer`). RFC 6298 restarts
        // it only on an ACK of new data (§5.3), so a lost retransmission of the head
        // whose repair comes back after that deadline times out there.
        if head_resent && self.cfg.rtt_estimator == RttEstimatorKind::Linux && self.reo_timer.deadline().is_none() {
            self.rto_timer.arm(TimerKind::Rto, now + self.rtt.rto(), out);
        }
        self.cwnd_limited = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{reno::Reno, AckInfo};
    use crate::tcp::config::{TcpConfig, TcpSpec};

    /// Reno's window at a fixed pacing rate, with the fewest segments per GSO burst,
    /// to test the sender's pacing alone.
    struct Paced(Reno, Rate, u32);
    impl CongestionControl for Paced {
        fn name(&self) -> &'static str {
            "paced"
        }
        fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
            self.0.on_ack(w, ack)
        }
        fn ssthresh_after_loss(&self, w: &Window, in_flight: u64) -> u64 {
            self.0.ssthresh_after_loss(w, in_flight)
        }
        fn pacing_rate(&self) -> Option<Rate> {
            Some(self.1)
        }
        fn min_tso_segs(&self) -> u32 {
            self.2
        }
    }

    fn established(cc: Box<dyn CongestionControl>, out: &mut Outbox) -> TcpSender {
        let cfg = TcpConfig::profile("ns2-sack").unwrap();
        let mut s = TcpSender::new(cfg, cc, Some(100_000), None);
        s.open(SimTime(0), out);
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        out.clear();
        s.on_ack(&synack, SimTime(1_000_000), out);
        s
    }

    #[test]
    fn frto_step_2b_sends_two_new_segments_and_no_more() {
        // Enhanced profile (F-RTO, SACK), MSS 1460, IW 4 segments (1, 1461, 2921, 4381).
        // The RTO fires and retransmits seq 1; the first ACK after it (ack 1461) advances
        // the window: RFC 5682 step 2b allows exactly two new segments, 5841 and 7301,
        // even though the receive window (1 MiB) and the data (1 MB) allow far more.
        let cfg = TcpConfig::profile("enhanced").unwrap();
        let mut out = Outbox::default();
        let mut s = TcpSender::new(cfg, Box::new(Reno), Some(1_000_000), None);
        s.open(SimTime(0), &mut out);
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 20, ..Default::default() };
        out.clear();
        s.on_ack(&synack, SimTime(1_000_000), &mut out);
        assert_eq!(out.segments.iter().map(|x| x.hdr.seq).collect::<Vec<_>>(), vec![1, 1461, 2921, 4381]);
        let (_, at, gen) = *out.timers.iter().rev().find(|t| t.0 == TimerKind::Rto).unwrap();
        out.clear();
        assert!(s.on_timer(gen, at, &mut out).is_some());
        assert_eq!(out.segments.iter().map(|x| x.hdr.seq).collect::<Vec<_>>(), vec![1]);
        out.clear();
        let ack = TcpHeader { ack: 1461, flags: FLAG_ACK, wnd: 1 << 20, ..Default::default() };
        s.on_ack(&ack, SimTime(at.0 + 1_000_000), &mut out);
        assert_eq!(out.segments.iter().map(|x| x.hdr.seq).collect::<Vec<_>>(), vec![5841, 7301]);
    }

    #[test]
    fn pacing_spaces_segments_by_their_serialization_at_the_pacing_rate() {
        // 1 Mbit/s pacing: a 1500-byte segment takes 12 ms. With IW3 the first segment
        // leaves at once (t = 1 ms), the next when the pacing timer fires at 13 ms,
        // the third at 25 ms.
        let mut out = Outbox::default();
        let mut s = established(Box::new(Paced(Reno, Rate::mbps(1), 2)), &mut out);
        assert_eq!(out.segments.len(), 1);
        let mut t = SimTime(1_000_000);
        for _ in 0..2 {
            let (kind, at, gen) = *out.timers.iter().find(|x| x.0 == TimerKind::Pacing).unwrap();
            assert_eq!(kind, TimerKind::Pacing);
            assert_eq!(at, t + SimDuration::from_millis(12));
            t = at;
            out.clear();
            s.on_pacing_timer(gen, at, &mut out);
            assert_eq!(out.segments.len(), 1, "one segment per pacing slot");
        }
        // Unpaced, the same sender sends the whole initial window at once.
        let mut out2 = Outbox::default();
        established(Box::new(Reno), &mut out2);
        assert_eq!(out2.segments.len(), 3);
        assert!(out2.timers.iter().all(|x| x.0 != TimerKind::Pacing));
    }

    /// A `linux` sender (MSS 1448, IW10) pacing at `rate` with bursts of at least
    /// `min_tso` segments, 10 MB to send, its handshake done at `synack_at` (the
    /// initial window sent).
    fn linux_paced(rate: Rate, min_tso: u32, synack_at: SimTime) -> (TcpSender, Outbox) {
        let cfg = TcpConfig::profile("linux").unwrap();
        assert!(cfg.linux_cc);
        let mut out = Outbox::default();
        let mut s = TcpSender::new(cfg, Box::new(Paced(Reno, rate, min_tso)), Some(10_000_000), None);
        s.open(SimTime(0), &mut out);
        out.clear();
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&synack, synack_at, &mut out);
        (s, out)
    }

    #[test]
    fn linux_pacing_follows_tcp_update_skb_after_send() {
        // `linux` profile (MSS 1448, 52-byte headers, IW10) at 1 Mbit/s pacing, one
        // segment per burst (a floor of 1, a rate under one segment per ms): the gap is
        // the payload's time, 1448 B -> 11.584 ms (the whole packet's 1500 B would take
        // 12 ms); the first 10 data segments are not paced; a late send takes
        // min(gap / 2, lateness) off the next gap. The handshake takes 20 ms, so
        // tcp_min_rtt gives no GSO allowance (`tcp::gso`).
        let mss = 1448;
        let (mut s, mut out) = linux_paced(Rate::mbps(1), 1, SimTime(20_000_000));
        assert_eq!(out.segments.len(), 10, "the initial window leaves at once");
        // The 10th segment (data_segs_out = 10) paces the 11th: 20 ms + 11.584 ms.
        assert_eq!(s.next_send_time, SimTime(31_584_000));
        // An ACK of two segments at 69 ms opens the window: the 11th leaves at once,
        // 37.416 ms late, so the next gap is halved: 69 + 11.584 - 5.792 ms.
        out.clear();
        let ack = TcpHeader { ack: 1 + 2 * mss, flags: FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&ack, SimTime(69_000_000), &mut out);
        assert_eq!(out.segments.len(), 1);
        let pacing = |out: &Outbox| *out.timers.iter().rev().find(|x| x.0 == TimerKind::Pacing).unwrap();
        let (_, at, gen) = pacing(&out);
        assert_eq!(at, SimTime(74_792_000));
        // On time: a full gap.
        out.clear();
        s.on_pacing_timer(gen, at, &mut out);
        assert_eq!(out.segments.len(), 1);
        assert_eq!(s.next_send_time, SimTime(86_376_000));
        // The timer fires 2.624 ms late (less than half a gap): the 13th segment's
        // gap is 11.584 - 2.624 ms.
        let (_, at, gen) = pacing(&out);
        assert_eq!(at, SimTime(86_376_000));
        out.clear();
        s.on_pacing_timer(gen, SimTime(89_000_000), &mut out);
        assert_eq!(out.segments.len(), 1);
        assert_eq!(s.next_send_time, SimTime(89_000_000 + 11_584_000 - 2_624_000));
    }

    #[test]
    fn linux_paces_gso_bursts_of_tcp_tso_autosize_segments() {
        // Linux paces skbs of `tcp_tso_autosize` segments (Linux 6.x tcp_output.c;
        // `tcp::gso`). At 10 Mbit/s of pacing (1,220 B per ms, under one segment) and a
        // 44 ms handshake (no close-peer allowance) that is the floor, 2 segments: they
        // leave together and the next pair waits for both, 2 x 1.1584 ms.
        let mss = 1448;
        let (mut s, mut out) = linux_paced(Rate::mbps(10), 2, SimTime(44_000_000));
        assert_eq!(out.segments.len(), 10);
        // The 5th burst (segments 9 and 10) brings data_segs_out to 10 and is paced.
        assert_eq!(s.next_send_time, SimTime(44_000_000 + 2_316_800));
        // An ACK of all 10 at 90 ms: cwnd 20 has room for 20, pacing for one burst of
        // 2; the send is late, so half the pair's gap is forgiven.
        out.clear();
        let ack = TcpHeader { ack: 1 + 10 * mss, flags: FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&ack, SimTime(90_000_000), &mut out);
        assert_eq!(out.segments.len(), 2, "one burst of 2");
        let pacing = |out: &Outbox| *out.timers.iter().rev().find(|x| x.0 == TimerKind::Pacing).unwrap();
        assert_eq!(pacing(&out).1, SimTime(90_000_000 + 1_158_400));
        for k in 0..3u64 {
            let (_, at, gen) = pacing(&out);
            assert_eq!(at, SimTime(91_158_400 + k * 2_316_800));
            out.clear();
            s.on_pacing_timer(gen, at, &mut out);
            assert_eq!(out.segments.len(), 2, "burst {k}: two segments at one instant");
            assert_eq!(s.next_send_time, SimTime(at.0 + 2_316_800));
        }
    }

    #[test]
    fn linux_paces_a_retransmission_as_a_burst_of_one() {
        // The same 10 Mbit/s sender: the initial window goes out, nothing is ACKed, and
        // the RTO resends the head. A retransmission is its own skb, one segment, so
        // the next departure waits one segment's time (1.1584 ms) less the credit, not
        // a pair's.
        let (mut s, mut out) = linux_paced(Rate::mbps(10), 2, SimTime(44_000_000));
        let (_, at, gen) = *out.timers.iter().rev().find(|t| t.0 == TimerKind::Rto).unwrap();
        out.clear();
        assert!(s.on_timer(gen, at, &mut out).is_some());
        assert_eq!(out.segments.len(), 1);
        assert_eq!(out.segments[0].hdr.seq, 1, "the head");
        // Sent long after its slot: half of one segment's gap is forgiven.
        assert_eq!(s.next_send_time, SimTime(at.0 + 1_158_400 / 2));
        // A second retransmission at the same instant does not join it: it waits for
        // the first's slot and adds its own gap (joining would give at + 1,158,400).
        let second = s.next_pacing_time(Rate::mbps(10), 1448, true, at);
        assert_eq!(second, SimTime(at.0 + 1_158_400 / 2 + 1_158_400));
    }

    /// A SACK sender (ns2-sack: IW3, initial RTO 3 s) with or without timestamps, its IW sent at 1 ms.
    fn eifel_sender(timestamps: bool, out: &mut Outbox) -> TcpSender {
        let mut cfg = TcpConfig::profile("ns2-sack").unwrap();
        cfg.timestamps = timestamps;
        let mut s = TcpSender::new(cfg, Box::new(Reno), Some(100_000), None);
        s.open(SimTime(0), out);
        out.clear();
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&synack, SimTime(1_000_000), out);
        s
    }

    /// Fires the pending RTO and returns it.
    fn fire_rto(s: &mut TcpSender, out: &mut Outbox) -> RtoEvent {
        let (_, at, gen) = *out.timers.iter().rev().find(|x| x.0 == TimerKind::Rto).unwrap();
        out.clear();
        s.on_timer(gen, at, out).expect("the RTO fires")
    }

    #[test]
    fn eifel_undoes_a_spurious_timeout_and_stops_go_back_n() {
        // IW3: segments 1..4381 leave at 1 ms (TSval 1 ms + 1 ns). The handshake sample
        // is 1 ms, so the RTO is the 1 s minimum; the ACKs are late (a queue), the timer
        // fires at 1.001 s: cwnd 3 -> 1 MSS, ssthresh = max(flight/2, 2 MSS) = 2920,
        // segment 1 is retransmitted (TSval 1.001 s + 1 ns).
        let mut out = Outbox::default();
        let mut s = eifel_sender(true, &mut out);
        assert_eq!(out.segments.len(), 3);
        let rto = fire_rto(&mut s, &mut out);
        assert_eq!((rto.seq, rto.tx_id), (1, 5));
        assert_eq!((s.w.cwnd, s.w.ssthresh, s.ca_state()), (1460, 2920, CaState::Loss));
        // The ACK of the original segment 1 echoes its TSval, older than the
        // retransmission's: spurious. cwnd and
        // ssthresh return to 4380 and unbounded, the state to Open, and the next
        // segments sent are new data (4381..), not go-back-N copies of 1461..4380.
        out.clear();
        let ack = TcpHeader { ack: 1461, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr: 1_000_001, ..Default::default() };
        s.on_ack(&ack, SimTime(1_500_000_000), &mut out);
        assert_eq!(s.stats().rto_undos, 1);
        // RTTM: the echo gives the sample 1.5 s - 1 ms = 1.499 s (first sample after
        // the handshake's 1 ms: srtt = 7/8 * 1 ms + 1/8 * 1.499 s).
        let srtt = s.rtt().srtt().unwrap().as_secs_f64();
        assert!((srtt - (0.875 * 0.001 + 0.125 * 1.499)).abs() < 1e-9, "srtt {srtt}");
        assert_eq!(s.ca_state(), CaState::Open);
        assert!(s.w.ssthresh == u64::MAX && s.w.cwnd >= 4380, "cwnd {} ssthresh {}", s.w.cwnd, s.w.ssthresh);
        assert!(!out.segments.is_empty() && out.segments.iter().all(|g| g.hdr.seq >= 4381),
                "sent {:?}", out.segments.iter().map(|g| g.hdr.seq).collect::<Vec<_>>());
        assert_eq!(s.stats().retransmits, 1);
    }

    /// The `linux` profile (MSS 1448, IW10, RACK, timestamps, F-RTO as `tcp_frto =
    /// 2`), its IW (1 .. 14481) sent at 1 ms, the RTO fired; returns the RTO's time.
    fn linux_frto_sender(out: &mut Outbox) -> (TcpSender, SimTime) {
        let cfg = TcpConfig::profile("linux").unwrap();
        assert_eq!((cfg.mss, cfg.header_bytes, cfg.frto, cfg.frto_variant), (1448, 52, true, FrtoVariant::Linux));
        let mut s = TcpSender::new(cfg, Box::new(Reno), Some(1_000_000), None);
        s.open(SimTime(0), out);
        out.clear();
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&synack, SimTime(1_000_000), out);
        assert_eq!(out.segments.iter().filter(|g| g.hdr.len > 0).count(), 10);
        let (_, at, gen) = *out.timers.iter().rev().find(|x| x.0 == TimerKind::Rto).unwrap();
        out.clear();
        let rto = s.on_timer(gen, at, out).expect("the RTO fires");
        assert_eq!((rto.seq, s.ca_state(), s.w.cwnd), (1, CaState::Loss, 1448));
        (s, at)
    }

    /// Linux `tcp_update_pacing_rate`, kept for every flow under `linux_cc` (CUBIC's
    /// HyStart reads it, `hystart_ack_delay`): `max(cwnd, packets_out) / SRTT` at 200 %
    /// while cwnd < ssthresh/2. The `linux` profile's IW10 leaves at 1 ms; the ACK of
    /// the first segment at 41 ms grows cwnd to 11 segments (15928 B > 13032 B
    /// outstanding), so the rate is 2 * 15928 B / SRTT.
    #[test]
    fn linux_keeps_the_pacing_rate_of_tcp_update_pacing_rate() {
        let mut out = Outbox::default();
        let cfg = TcpConfig::profile("linux").unwrap();
        let mut s = TcpSender::new(cfg, Box::new(Reno), Some(1_000_000), None);
        assert!(!s.w.paced, "Reno does not pace: SK_PACING_NONE");
        assert_eq!(s.w.pacing_rate, u64::MAX, "unknown before an ACK (~0UL)");
        s.open(SimTime(0), &mut out);
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&synack, SimTime(1_000_000), &mut out);
        s.on_ack(&TcpHeader { ack: 1449, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr: 1_000_001, ..Default::default() },
                 SimTime(41_000_000), &mut out);
        assert_eq!(s.w.cwnd, 11 * 1448);
        // SRTT = 1 ms (the SYN's sample) + (40 ms - 1 ms) / 8 = 5.875 ms
        // (`tcp_rtt_estimator`), so 2 * 15928 B / 5.875 ms = 5,422,297 B/s.
        assert_eq!(s.rtt.srtt(), Some(SimDuration(5_875_000)));
        assert_eq!(s.w.pacing_rate, 5_422_297);
        // In congestion avoidance (cwnd >= ssthresh/2) the ratio is 120 %.
        s.w.ssthresh = 20 * 1448;
        s.on_ack(&TcpHeader { ack: 2897, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr: 1_000_001, ..Default::default() },
                 SimTime(42_000_000), &mut out);
        let srtt = s.rtt.srtt().unwrap();
        assert_eq!(s.w.pacing_rate, (1.2 * s.w.cwnd as f64 / srtt.as_secs_f64()) as u64);
        // A paced CC gives its own rate (BBR sets sk_pacing_rate) and the flow is paced.
        let cc = Box::new(Paced(Reno, Rate(8_000_000), 2));
        let mut p = TcpSender::new(TcpConfig::profile("linux").unwrap(), cc, Some(100_000), None);
        assert!(p.w.paced);
        p.open(SimTime(0), &mut out);
        p.on_ack(&synack, SimTime(1_000_000), &mut out);
        p.on_ack(&TcpHeader { ack: 1449, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr: 1_000_001, ..Default::default() },
                 SimTime(41_000_000), &mut out);
        assert_eq!(p.w.pacing_rate, 1_000_000, "8 Mbit/s = 1 MB/s");
        // Without linux_cc (linux-2.6) the sender keeps no rate.
        let mut o = TcpSender::new(TcpConfig::profile("linux-2.6").unwrap(), Box::new(Reno), Some(100_000), None);
        o.open(SimTime(0), &mut out);
        o.on_ack(&synack, SimTime(1_000_000), &mut out);
        o.on_ack(&TcpHeader { ack: 1461, flags: FLAG_ACK, wnd: 1 << 30, ..Default::default() },
                 SimTime(41_000_000), &mut out);
        assert_eq!(o.w.pacing_rate, u64::MAX);
    }

    fn sack_ack(ack: u64, blocks: &[(u64, u64)], ts_ecr: u64) -> TcpHeader {
        let mut h = TcpHeader { ack, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr, ..Default::default() };
        for (i, &(start, end)) in blocks.iter().enumerate() {
            h.sack[i] = crate::net::packet::SackBlock { start, end };
        }
        h.nsack = blocks.len() as u8;
        h
    }

    /// Linux `tcp_process_loss` (F-RTO, RFC 5682 §3 SACK-enhanced), worked by hand.
    /// The ACK of the retransmitted segment 1 (its echo is the retransmission's, so
    /// Eifel does not undo) advances snd_una short of high_seq (14481): step 2b sends
    /// new data instead of retransmitting 1449..: cwnd grew 1 -> 2 segments in the Loss
    /// state's slow start and the timeout marked the rest lost (pipe 0), so exactly
    /// 14481 and 15929 go out. Then a SACK of the original segment [2897, 4345), sent
    /// before the timeout and never retransmitted (`FLAG_ORIG_SACK_ACKED`), proves
    /// the timeout spurious: `tcp_try_undo_loss(sk, true)` restores cwnd to at least
    /// its 10 segments and the state to Open.
    #[test]
    fn linux_frto_sends_new_data_then_undoes_a_spurious_timeout() {
        let mut out = Outbox::default();
        let (mut s, at) = linux_frto_sender(&mut out);
        let t1 = SimTime(at.0 + 20_000_000);
        out.clear();
        s.on_ack(&sack_ack(1449, &[], at.0 + 1), t1, &mut out);
        let sent: Vec<u64> = out.segments.iter().filter(|g| g.hdr.len > 0).map(|g| g.hdr.seq).collect();
        assert_eq!(sent, vec![14_481, 15_929]);
        assert_eq!((s.ca_state(), s.stats().retransmits), (CaState::Loss, 1));
        out.clear();
        s.on_ack(&sack_ack(1449, &[(2897, 4345)], 1_000_001), SimTime(t1.0 + 1_000_000), &mut out);
        assert_eq!(s.stats().frto_spurious, 1);
        assert_eq!(s.ca_state(), CaState::Open);
        assert!(s.w.cwnd >= 14_480, "cwnd {}", s.w.cwnd);
        assert_eq!(s.stats().retransmits, 1, "no retransmission after the undo");
    }

    /// Step 3a: after step 2b, a SACK of the new data alone (above high_seq, so not
    /// `FLAG_ORIG_SACK_ACKED`) means the loss was real: no undo, and the conventional
    /// recovery retransmits from 1449. The same SACK before F-RTO's new data would be
    /// a duplicate ACK of step 2a's kind.
    #[test]
    fn linux_frto_keeps_a_genuine_timeout() {
        let mut out = Outbox::default();
        let (mut s, at) = linux_frto_sender(&mut out);
        let t1 = SimTime(at.0 + 20_000_000);
        s.on_ack(&sack_ack(1449, &[], at.0 + 1), t1, &mut out);
        out.clear();
        s.on_ack(&sack_ack(1449, &[(14_481, 15_929)], t1.0 + 1), SimTime(t1.0 + 20_000_000), &mut out);
        assert_eq!((s.stats().frto_spurious, s.ca_state()), (0, CaState::Loss));
        let first = out.segments.iter().find(|g| g.hdr.len > 0).map(|g| g.hdr.seq);
        assert_eq!(first, Some(1449));
        // Off (`tcp_frto = 0`): the first ACK retransmits 1449 at once.
        let mut out = Outbox::default();
        let cfg = TcpSpec { frto: Some(false), ..Default::default() }.resolve().unwrap();
        let mut s = TcpSender::new(cfg, Box::new(Reno), Some(1_000_000), None);
        s.open(SimTime(0), &mut out);
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&synack, SimTime(1_000_000), &mut out);
        let (_, at, gen) = *out.timers.iter().rev().find(|x| x.0 == TimerKind::Rto).unwrap();
        s.on_timer(gen, at, &mut out);
        out.clear();
        s.on_ack(&sack_ack(1449, &[], at.0 + 1), SimTime(at.0 + 20_000_000), &mut out);
        assert_eq!(out.segments.iter().find(|g| g.hdr.len > 0).map(|g| g.hdr.seq), Some(1449));
    }

    /// `tcp_ack_update_rtt` with timestamps: the echo is read in the timestamp clock's
    /// milliseconds (`TCP_TS_HZ` = 1000): sent at 1.0004 s and acked at 1.0219 s is
    /// 1021 - 1000 = 21 ms, not 21.5 ms; a sub-millisecond echo is 1 ms.
    #[test]
    fn linux_timestamp_rtt_is_whole_milliseconds() {
        assert_eq!(tsopt_rtt(SimTime(1_021_900_000), 1_000_400_000 + 1, 1), SimDuration::from_millis(21));
        assert_eq!(tsopt_rtt(SimTime(5_000_300), 5_000_000 + 1, 1), SimDuration::from_millis(1));
    }

    #[test]
    fn eifel_keeps_a_genuine_timeout_and_off_means_go_back_n() {
        // The ACK echoes the retransmission itself: the original was lost, the
        // timeout stands; the sender goes back to 1461 (go-back-N, slow start cwnd 2).
        let mut out = Outbox::default();
        let mut s = eifel_sender(true, &mut out);
        fire_rto(&mut s, &mut out);
        out.clear();
        let ack = TcpHeader { ack: 1461, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr: 1_001_000_001, ..Default::default() };
        s.on_ack(&ack, SimTime(1_500_000_000), &mut out);
        assert_eq!((s.stats().rto_undos, s.ca_state()), (0, CaState::Loss));
        assert_eq!(out.segments.first().map(|g| g.hdr.seq), Some(1461));
        // With timestamps off, the same echo of the original changes nothing either.
        let mut out = Outbox::default();
        let mut s = eifel_sender(false, &mut out);
        fire_rto(&mut s, &mut out);
        out.clear();
        let ack = TcpHeader { ack: 1461, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr: 1_000_001, ..Default::default() };
        s.on_ack(&ack, SimTime(1_500_000_000), &mut out);
        assert_eq!((s.stats().rto_undos, s.ca_state()), (0, CaState::Loss));
        assert_eq!(out.segments.first().map(|g| g.hdr.seq), Some(1461));
    }

    #[test]
    fn ecn_negotiation_ect_and_one_reduction_per_window() {
        // linux-2.6: no PRR, so the reduction is immediate (RFC 3168), and ssthresh
        // comes from FlightSize. IW10 set here (the profile's own is RFC 3390's 3
        // segments): the window arithmetic below is worked from 10 segments.
        let mut cfg = TcpConfig::profile("linux-2.6").unwrap();
        cfg.ecn = true;
        cfg.iw = crate::tcp::config::InitialWindow::Segments(10);
        let mss = cfg.mss as u64;
        let mut s = TcpSender::new(cfg, Box::new(Reno), Some(1_000_000), None);
        let mut out = Outbox::default();
        s.open(SimTime(0), &mut out);
        assert!(out.segments[0].hdr.is_ece() && out.segments[0].hdr.is_cwr(), "ECN-setup SYN");
        out.clear();
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK | FLAG_ECE, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&synack, SimTime(1_000_000), &mut out);
        assert!(s.ecn_capable());
        // IW10, all ECT(0), no CWR yet.
        assert_eq!(out.segments.len(), 10);
        assert!(out.segments.iter().all(|g| g.ecn == Ecn::Ect0 && !g.hdr.is_cwr()));
        out.clear();
        let ack = |k: u64, ece: bool| TcpHeader {
            ack: 1 + k * mss,
            flags: if ece { FLAG_ACK | FLAG_ECE } else { FLAG_ACK },
            wnd: 1 << 30,
            ..Default::default()
        };
        // The first ECE (ACK of 2 segments, FlightSize 10 MSS before it): ssthresh =
        // cwnd = 10/2 = 5 MSS, state CWR (code 3).
        s.on_ack(&ack(2, true), SimTime(2_000_000), &mut out);
        assert_eq!((s.stats().ecn_reductions, s.w.cwnd, s.ca_state()), (1, 5 * mss, CaState::Cwr));
        // More ECE within the window (up to snd_una = high_seq = 1 + 10 MSS): no new
        // reduction, no growth. New data goes out as the flight falls below 5 MSS,
        // the first new segment with CWR.
        for k in 3..=10 {
            s.on_ack(&ack(k, true), SimTime(2_000_000 + k), &mut out);
        }
        assert_eq!((s.stats().ecn_reductions, s.w.cwnd), (1, 5 * mss));
        let cwr: Vec<bool> = out.segments.iter().map(|g| g.hdr.is_cwr()).collect();
        assert!(cwr.len() >= 2 && cwr[0] && cwr[1..].iter().all(|c| !c), "{cwr:?}");
        // An ACK beyond high_seq ends CWR (cwnd = ssthresh); still echoing CE, it
        // starts the next round trip's reduction at once (Linux tcp_try_to_open).
        s.on_ack(&ack(11, true), SimTime(3_000_000), &mut out);
        assert_eq!(s.stats().ecn_reductions, 2);
        assert_eq!(s.ca_state(), CaState::Cwr);
    }

    /// A `linux`-profile Reno sender (MSS 1448, IW10, RACK, timestamps) whose initial
    /// window, segments 1..10, left at 1 ms; returns it and the MSS.
    fn linux_reno_iw10_sent(out: &mut Outbox) -> (TcpSender, u64) {
        let cfg = TcpConfig::profile("linux").unwrap();
        let mss = cfg.mss as u64;
        let mut s = TcpSender::new(cfg, Box::new(Reno), Some(1_000_000), None);
        s.open(SimTime(0), out);
        out.clear();
        let synack = TcpHeader { ack: 1, flags: FLAG_SYN | FLAG_ACK, wnd: 1 << 30, ..Default::default() };
        s.on_ack(&synack, SimTime(1_000_000), out);
        assert_eq!(out.segments.len(), 10);
        (s, mss)
    }

    #[test]
    fn linux_reenters_recovery_on_the_ack_that_ends_the_last_one() {
        // Linux `tcp_fastretrans_alert`: step D ends a recovery when snd_una reaches
        // high_seq, step E then runs `tcp_identify_packet_loss` and
        // `tcp_time_to_recover` on the same ACK, so what RACK deems lost starts the
        // next recovery at once and the CC never sees the connection open.
        // linux profile (IW10, MSS 1448, RACK, PRR), Reno. Segments 1..10 leave at
        // 1 ms; at 50 ms the first is lost and 2..10 are SACKed: recovery, PRR sends
        // the retransmission and new data N1.. at 50 ms. At 100 ms the cumulative ACK
        // reaches high_seq (the end of the 10th segment) and SACKs N2.., not N1: RACK
        // deems N1 lost (sent with N2, before it; reo_wnd 0 in recovery).
        use crate::net::packet::SackBlock;
        let mut out = Outbox::default();
        let (mut s, mss) = linux_reno_iw10_sent(&mut out);
        let high_seq = 1 + 10 * mss;
        let sacks = |a: u64, b: u64| {
            let mut h = TcpHeader { ack: 0, flags: FLAG_ACK, wnd: 1 << 30, nsack: 1, ..Default::default() };
            h.sack[0] = SackBlock { start: a, end: b };
            h
        };
        out.clear();
        let mut first = sacks(1 + mss, high_seq);
        first.ack = 1;
        s.on_ack(&first, SimTime(50_000_000), &mut out);
        assert_eq!((s.ca_state(), s.stats().fast_retransmits), (CaState::Recovery, 1));
        let new: Vec<u64> = out.segments.iter().map(|x| x.hdr.seq).filter(|&q| q >= high_seq).collect();
        assert!(new.len() >= 2 && new[0] == high_seq, "PRR sends new data in recovery: {new:?}");
        out.clear();
        let mut ends = sacks(high_seq + mss, high_seq + new.len() as u64 * mss);
        ends.ack = high_seq;
        s.on_ack(&ends, SimTime(100_000_000), &mut out);
        assert_eq!((s.ca_state(), s.stats().fast_retransmits), (CaState::Recovery, 2), "the next recovery starts on this ACK");
        assert!(out.segments.iter().any(|x| x.hdr.seq == high_seq), "N1 is retransmitted");
    }

    #[test]
    fn linux_restarts_the_rto_when_it_resends_the_head() {
        // Linux `tcp_xmit_retransmit_queue`: resending the first unacknowledged
        // segment restarts the RTO (`rearm_timer`), so a head lost twice is repaired
        // before its timeout. linux profile (IW10, MSS 1448, RACK, PRR), Reno.
        // Segments 1..10 leave at 1 ms; at 50 ms the first is lost and 2..10 are
        // SACKed: recovery, the head is resent at 50 ms with new data N1... At 100 ms
        // the ACK still stands at the head and SACKs N2..: RACK deems the head's
        // retransmission lost (sent with N1, before N2) and resends it at 100 ms,
        // which moves the RTO from 50 ms + RTO to 100 ms + RTO. Under RFC 6298
        // (`rtt_estimator = "rfc6298"`) it stays at 50 ms + RTO.
        use crate::net::packet::SackBlock;
        for linux_rto in [true, false] {
            let mut out = Outbox::default();
            let (mut s, mss) = linux_reno_iw10_sent(&mut out);
            if !linux_rto {
                s.cfg.rtt_estimator = RttEstimatorKind::Rfc6298;
            }
            let high_seq = 1 + 10 * mss;
            let sacks = |a: u64, b: u64| {
                let mut h = TcpHeader { ack: 1, flags: FLAG_ACK, wnd: 1 << 30, nsack: 1, ..Default::default() };
                h.sack[0] = SackBlock { start: a, end: b };
                h
            };
            out.clear();
            s.on_ack(&sacks(1 + mss, high_seq), SimTime(50_000_000), &mut out);
            assert_eq!(s.ca_state(), CaState::Recovery);
            let new: Vec<u64> = out.segments.iter().map(|x| x.hdr.seq).filter(|&q| q >= high_seq).collect();
            assert!(new.len() >= 2, "PRR sends new data in recovery: {new:?}");
            let first_deadline = s.rto_timer.deadline().unwrap();
            out.clear();
            let mut ack = sacks(high_seq + mss, high_seq + new.len() as u64 * mss);
            ack.nsack = 2;
            ack.sack[1] = SackBlock { start: 1 + mss, end: high_seq };
            s.on_ack(&ack, SimTime(100_000_000), &mut out);
            assert!(out.segments.iter().any(|x| x.hdr.seq == 1), "the head is resent at 100 ms");
            let deadline = s.rto_timer.deadline().unwrap();
            if linux_rto {
                assert_eq!(deadline, SimTime(100_000_000) + s.rtt.rto());
            } else {
                assert_eq!(deadline, first_deadline);
            }
        }
    }

    #[test]
    fn linux_recovers_at_once_after_an_undone_timeout() {
        // Linux `tcp_time_to_recover` asks only whether something is marked lost; it
        // does not wait for snd_una to pass the timeout's high_seq (RFC 6675's
        // RecoveryPoint). linux profile (timestamps, RACK), Reno: segments 1..10 leave
        // at 1 ms; the RTO fires and retransmits the first; the original's ACK (its TSval
        // echoed) proves the timeout spurious (Eifel, RFC 3522): Open, snd_una 1449 still
        // below the timeout's snd_max. The next ACK SACKs segments 4..10: RACK deems 2
        // and 3 lost (sent before a delivered segment, reo_wnd 0 with 3 SACKed), and
        // recovery starts on that ACK. Before, the sender waited in Open for the next
        // timeout.
        use crate::net::packet::SackBlock;
        let mut out = Outbox::default();
        let (mut s, mss) = linux_reno_iw10_sent(&mut out);
        let original_ts = out.segments[0].hdr.ts_val;
        let (_, fired_at, _) = *out.timers.iter().rev().find(|x| x.0 == TimerKind::Rto).unwrap();
        let rto = fire_rto(&mut s, &mut out);
        assert_eq!((rto.seq, s.ca_state()), (1, CaState::Loss));
        let late = SimTime(fired_at.0 + 10_000_000);
        out.clear();
        let first = TcpHeader { ack: 1 + mss, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr: original_ts, ..Default::default() };
        s.on_ack(&first, late, &mut out);
        assert_eq!((s.ca_state(), s.stats().rto_undos), (CaState::Open, 1));
        let mut sack = TcpHeader { ack: 1 + mss, flags: FLAG_ACK, wnd: 1 << 30, ts_ecr: original_ts, nsack: 1, ..Default::default() };
        sack.sack[0] = SackBlock { start: 1 + 3 * mss, end: 1 + 10 * mss };
        out.clear();
        s.on_ack(&sack, SimTime(late.0 + 1_000_000), &mut out);
        assert_eq!((s.ca_state(), s.stats().fast_retransmits), (CaState::Recovery, 1));
    }
}
