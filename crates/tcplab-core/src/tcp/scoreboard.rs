//! The sender's SACK scoreboard: RFC 6675 ("A Conservative Loss Recovery Algorithm
//! Based on Selective Acknowledgment (SACK) for TCP"), which obsoletes RFC 3517 (the
//! "conservative SACK recovery, RFC 3517" of seed 004). SACK blocks are RFC 2018's.
//!
//! The board holds the segments in [snd_una, snd_max) (RFC 6675's HighACK..HighData) in
//! sequence order, which of their octets have been SACKed, which segments have been
//! retransmitted, and the per-recovery variables HighRxt, RescueRxt and RecoveryPoint
//! that NextSeg() needs. The sender keeps everything else (DupAcks, cwnd, ssthresh, the
//! timers) and drives the board like this:
//!
//! ```text
//! transmit:  sb.on_send(seq, len, is_retransmission)
//! ACK:       let up = sb.on_ack(hdr.ack, hdr.sack_blocks());   // Update() + loss marking
//!            if up.new_sack_info { dupacks += 1 }              // §2 "duplicate acknowledgment"
//!            if !sb.in_recovery() && sb.may_enter_recovery()
//!                && (dupacks >= DupThresh || sb.is_lost(sb.snd_una())) {     // §5 (1), (2)
//!                ssthresh = cwnd = FlightSize / 2;                           // (4.2)
//!                let (s, l) = sb.enter_recovery().unwrap();                  // (4.1), (4.3)
//!                send(s, l); sb.on_send(s, l, true);
//!            }
//!            if sb.in_recovery() {
//!                while cwnd - sb.pipe() >= SMSS {                            // (C), (C.5)
//!                    match sb.next_seg(have_unsent_data && rwnd_allows) {    // (C.1)
//!                        NextSeg::Retransmit { seq, len, .. } => {
//!                            send(seq, len); sb.on_send(seq, len, true) }
//!                        NextSeg::NewData => { send new; sb.on_send(sb.snd_max(), len, false) }
//!                        NextSeg::Nothing => break,
//!                    }
//!                }
//!            }
//! RTO:       sb.mark_all_lost_for_rto(); then go-back-N with next_seg() as above (§5.1)
//! ```
//!
//! `on_send` does (C.2)-(C.4): HighRxt, HighData and pipe follow from what was sent.
//! `on_ack` ends the recovery itself when the cumulative ACK covers RecoveryPoint (§5
//! (A)) and says so in `AckUpdate::recovery_ended`.
//!
//! # What is implemented
//!
//! - Update() (§4): the cumulative ACK drops everything below it; SACK blocks may come in
//!   any order, overlap, repeat or reach below snd_una (D-SACK, RFC 2883) or above
//!   snd_max: only their parts inside [snd_una, snd_max) count, once each.
//! - SACK state is octet-exact, as RFC 6675 is: SACKed octets are kept as a sorted
//!   list of disjoint, non-adjacent runs, and each segment counts its SACKed octets, so
//!   a block covering part of a segment is honoured for exactly the octets it covers.
//! - IsLost() (§4) with RFC 6675's threshold: more than (DupThresh - 1) * SMSS SACKed
//!   octets above, or DupThresh discontiguous SACKed runs above.
//! - SetPipe() (§4) as a maintained counter; `pipe()` is O(1).
//! - NextSeg() (§4) rules (1)-(4), including the rescue retransmission of rule (4).
//! - Loss recovery entry (4.1)/(4.3), HighRxt per (C.2), exit per (A), and the RTO
//!   rules of §5.1 (RecoveryPoint = HighData; no new recovery until HighACK reaches it).
//! - Reporting for the sender and rate samples: newly acked, newly SACKed, delivered
//!   and newly lost bytes per ACK; `lost_bytes()`, `retransmitted_bytes()`.
//!
//! # Ambiguities resolved, and deviations
//!
//! 1. "DupThresh discontiguous SACKed sequences above SeqNum" counts maximal runs of
//!    SACKed octets lying above SeqNum. Contiguous SACKed segments form one run and
//!    count through the byte rule instead: SACKs of segments 2, 3, 4 over a hole at 1
//!    are one run but 3 * SMSS > 2 * SMSS bytes, so 1 is lost.
//! 2. RFC 3517's IsLost() asked for DupThresh * SMSS SACKed bytes above SeqNum; RFC
//!    6675 asks for more than (DupThresh - 1) * SMSS. We follow RFC 6675 for both seeds.
//!    The two agree while every SACKed segment is full-sized, and differ only once a
//!    shorter one (the last of a transfer) or a partial block is SACKed.
//! 3. The RFC's variables name octets (HighACK = the highest octet acknowledged,
//!    HighRxt = the highest octet retransmitted); this board stores exclusive ends:
//!    `snd_una`, `snd_max`, `high_rxt` (one past the last octet retransmitted),
//!    `highest_sacked()` (one past the highest SACKed octet), `recovery_point()` (snd_max
//!    at entry). Hence rule (1.a) "S2 > HighRxt" is `s2 >= high_rxt`, (1.b) is
//!    `s2 < highest_sacked`, and (A) is `snd_una >= recovery_point`. Rule (4)'s
//!    condition "HighACK > RescueRxt" becomes `snd_una >= rescue_rxt`: the ACK for the
//!    fast retransmission itself (snd_una reaching the end of that segment) permits the
//!    rescue. Read octet by octet it would need one more octet acknowledged, which a
//!    partial ACK stopping at the next hole never provides.
//! 4. IsLost(S) is monotone in S (both counts above S only grow as S falls), so at any
//!    moment the lost octets are the unSACKed octets of a prefix [snd_una, lost_end).
//!    The board keeps `lost_end` instead of per-segment lost flags and moves it on each
//!    ACK that brings new SACK information (the "update, then mark losses" pass);
//!    `is_lost(s)` is "s unSACKed, snd_una <= s < lost_end", false for SACKed octets and
//!    outside the window.
//! 5. Losses are latched: `lost_end` never moves down, so an octet once deemed lost stays
//!    lost until it is SACKed or acked (Linux's lost marks behave the same way). The
//!    RFC's IsLost() is a pure function of the current scoreboard and can turn false
//!    again in one case: SACKed runs above the octet merge (the holes between them get
//!    SACKed) while their octets stay at or under (DupThresh - 1) * SMSS, so the run
//!    count falls below DupThresh and the byte rule does not take over. That needs
//!    SACKed runs shorter than SMSS (tiny segments or partial blocks): with
//!    full-sized segments DupThresh runs already hold more than (DupThresh - 1) * SMSS
//!    octets and the byte rule, which only grows, agrees with the latch. Merging runs
//!    means more data arrived above the hole, not less, so un-losing it would be wrong.
//! 6. SetPipe() step (b) adds an octet "if S1 <= HighRxt"; the board adds it if S1's
//!    segment has been retransmitted (since it was sent, or since the last RTO). For
//!    retransmissions chosen by NextSeg within one recovery the two agree (rules (1) and
//!    (3) take the lowest unSACKed octet above HighRxt, so every unSACKed octet below
//!    HighRxt has been resent), except for the rescue retransmission, which may not move
//!    HighRxt and so never counts in the RFC's pipe. We count it, as Linux's
//!    `retrans_out` does: it is in flight, and counting it is the conservative choice.
//!    The flags also keep pipe right outside recovery (go-back-N after an RTO), where
//!    HighRxt is not defined.
//! 7. Retransmissions reuse the original segment boundaries (tcplab never resegments):
//!    NextSeg returns the whole segment containing the chosen octet, SACKed octets of a
//!    partially SACKed segment included. Pipe counts only its unSACKed octets. The one
//!    exception is the segment at snd_una after a cumulative ACK that ended inside it,
//!    which is trimmed to start at snd_una.
//! 8. RTO (§5.1): RFC 2018 §8 says the sender SHOULD turn off its SACKed bits after an
//!    RTO because the receiver may have reneged. RFC 6675 §5.1 does not change that, but
//!    notes the view that SACK information may be kept across an RTO where reneging is
//!    detected robustly. Like Linux (which discards it only when it suspects reneging),
//!    the board keeps the SACK information, marks every unSACKed octet lost, clears the
//!    retransmitted flags (pipe drops to 0, and go-back-N retransmissions count once
//!    each), sets HighRxt = snd_una and RecoveryPoint = snd_max, and leaves recovery.
//!    NextSeg rule (1) then returns the unSACKed segments in order, the plain "fill in
//!    the holes" selection §5.1 considers reasonable after an RTO. The segment at
//!    snd_una is never SACKed (its SACK would have moved the cumulative ACK unless the
//!    receiver reneged), so RFC 2018's "MUST retransmit the left edge" holds. Reneging
//!    itself is not detected.
//! 9. Rules (3) and (4) apply only inside a recovery (they exist to keep its ACK clock
//!    going); rule (1) also applies outside, for the post-RTO go-back-N. Limited
//!    Transmit ((3) of §5) sends new data directly and needs no NextSeg.
//! 10. The board tracks payload octets only: a cumulative ACK beyond snd_max (a FIN's
//!     sequence number) is clamped to snd_max, and zero-length sends are ignored. The
//!     first send on an empty board starts it at that sequence number.
//!
//! # Time-based loss marking (RACK, RFC 8985)
//!
//! With `set_rack_marking(true)` the IsLost() pass is off: losses are marked per
//! segment by the sender's RACK (`tcp::rack`), which asks the board to scan the
//! segments in transmission order (`rack_detect_losses`). Each segment keeps the time
//! of its last transmission; originals are in sequence order, which is their sending
//! order, and retransmissions are queued in the order they were sent, so the scan
//! needs neither sorting nor a search of the whole window. A lost segment that was
//! retransmitted may be marked lost again (its retransmission was lost); marking
//! clears its retransmitted flag, so pipe stops counting it and NextSeg() rule (1)
//! picks it again. In this mode NextSeg() uses rules (1) and (2) only, as Linux
//! (`tcp_xmit_retransmit_queue`) does: the rescue and the "not yet lost" retransmission
//! of rules (3) and (4) are left to the tail loss probe. An RTO marks the head and
//! every segment sent at least one RACK RTT ago (Linux `tcp_timeout_mark_lost`).
//!
//! # Complexity
//!
//! With n segments and h SACKed runs (one more than the holes) on the board:
//! - `on_send`: O(1) for new data (a `VecDeque` push), O(log n) for a retransmission.
//! - `on_ack`: O(log n + log h) per SACK block, plus O(1) per newly SACKed segment, per
//!   segment and run dropped by the cumulative ACK, and per run the loss boundary passes;
//!   each of those happens once per segment/run lifetime, so the amortised cost is
//!   O(B (log n + log h) + DupThresh) for an ACK with B blocks. A new run is inserted into
//!   the run list at its position: O(1) at either end (the usual case, new SACKs arrive
//!   at the top), O(min(i, h - i)) moves in the middle.
//! - Loss marking walks the runs from the highest SACK down and stops after at most
//!   DupThresh runs: once DupThresh runs lie above an octet it is lost.
//! - `pipe()`, `sacked_bytes()`, `lost_bytes()`, `highest_sacked()`: O(1);
//!   `is_sacked`, `is_lost`: O(log h); `next_seg`: O(log n + log h).
//! - `mark_all_lost_for_rto`: O(n) (clears the retransmitted flags; RTOs are rare).
//!
//! Storage is two `VecDeque`s reused for the life of the connection (and across
//! `reset`), so the steady state allocates nothing; a 10,000-segment window costs
//! 240 KB of segment records.

use crate::net::packet::SackBlock;
use crate::time::{SimDuration, SimTime};
use std::collections::VecDeque;

/// One transmitted segment: [seq, seq + len).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seg {
    seq: u64,
    len: u32,
    /// Octets of the segment covered by SACK blocks.
    sacked: u32,
    /// Retransmitted since first sent (or since the last RTO).
    retx: bool,
    /// Ever retransmitted (its delivery says nothing about reordering, and its RTT is
    /// ambiguous).
    ever_retx: bool,
    /// Marked lost by RACK (time-based marking only).
    lost: bool,
    /// When it was last transmitted.
    xmit: SimTime,
}

impl Seg {
    fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    fn unsacked(&self) -> u64 {
        (self.len - self.sacked) as u64
    }
}

/// A run of SACKed octets [start, end).
type Run = SackBlock;

/// What one ACK changed on the board.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckUpdate {
    /// Octets newly acknowledged cumulatively (how far snd_una moved).
    pub newly_acked: u64,
    /// Octets newly SACKed (inside [snd_una, snd_max) after the cumulative ACK).
    pub newly_sacked: u64,
    /// Octets newly known delivered: the newly acked octets that had not been SACKed
    /// before, plus the newly SACKed ones (for rate samples).
    pub delivered: u64,
    /// Octets newly deemed lost by IsLost() because of this ACK's SACK information.
    pub newly_lost: u64,
    /// The ACK SACKed octets between HighACK and HighData that were neither acked nor
    /// SACKed before: RFC 6675 §2's "duplicate acknowledgment", which counts even if the
    /// ACK also moved the cumulative ACK, changed the window or carried data.
    pub new_sack_info: bool,
    /// The cumulative ACK reached RecoveryPoint and ended the loss recovery (§5 (A)).
    pub recovery_ended: bool,
    /// The most recently sent never-retransmitted segment this ACK newly delivered
    /// (fully SACKed or acked): its last transmission time and end (RACK).
    pub newest_clean: Option<(SimTime, u64)>,
    /// The same among retransmitted segments (whose RTT is ambiguous).
    pub newest_retransmitted: Option<(SimTime, u64)>,
    /// The lowest end of a never-retransmitted segment this ACK newly delivered
    /// (Linux F-RTO's `FLAG_ORIG_SACK_ACKED` counts those ending by `high_seq`).
    pub lowest_clean_end: Option<u64>,
    /// A never-retransmitted segment was delivered below the highest sequence
    /// delivered before this ACK: the network reordered (RFC 8985 §6.2 step 3).
    pub reordering: bool,
}

/// Why NextSeg() chose a retransmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetransmitRule {
    /// Rule (1): the lowest unSACKed segment above HighRxt that IsLost() says is lost
    /// (after an RTO: every unSACKed segment, in order).
    Lost,
    /// Rule (3): the lowest unSACKed segment above HighRxt and below the highest SACK,
    /// not (yet) deemed lost.
    NotLost,
    /// Rule (4): the rescue retransmission of the segment holding the highest unSACKed
    /// octet, once per recovery. It does not move HighRxt.
    Rescue,
}

/// NextSeg()'s answer (RFC 6675 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Retransmit [seq, seq + len), then call `on_send(seq, len, true)`.
    Retransmit { seq: u64, len: u32, rule: RetransmitRule },
    /// Rule (2): send up to SMSS of new data at `snd_max()`, then call
    /// `on_send(snd_max, len, false)`.
    NewData,
    /// Nothing to send.
    Nothing,
}

/// The SACK scoreboard of one sender. See the module documentation.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    mss: u32,
    dupthresh: u32,
    /// Segments of [una, max), contiguous and in order.
    segs: VecDeque<Seg>,
    /// SACKed runs inside [una, max): sorted, disjoint and non-adjacent.
    runs: VecDeque<Run>,
    una: u64,
    max: u64,
    /// Octets covered by `runs`.
    sacked_bytes: u64,
    /// IsLost(s) iff una <= s < lost_end and s is not SACKed. lost_end >= una.
    lost_end: u64,
    /// UnSACKed octets in [una, lost_end).
    lost_bytes: u64,
    /// UnSACKed octets of retransmitted segments.
    retx_bytes: u64,
    /// One past the highest octet retransmitted in this recovery (or since the RTO).
    high_rxt: u64,
    in_recovery: bool,
    /// snd_max when the last recovery began or the last RTO fired.
    recovery_point: u64,
    /// A rescue is allowed once snd_una >= rescue_rxt (`None`: undefined).
    rescue_rxt: Option<u64>,
    /// Start of the rescue segment NextSeg just returned, so that its `on_send` leaves
    /// HighRxt alone (C.2).
    pending_rescue: Option<u64>,
    /// Losses are marked by RACK (`rack_detect_losses`) instead of IsLost().
    rack_marking: bool,
    /// One past the highest octet delivered (SACKed or acked) so far (RACK's fack).
    fack: u64,
    /// RACK: originals (never retransmitted) below this are SACKed, lost or
    /// retransmitted, so no longer loss candidates.
    rack_scan_from: u64,
    /// RACK: retransmissions in the order sent, (segment start, transmission time).
    retx_order: VecDeque<(u64, SimTime)>,
    /// RACK: no lost, unretransmitted, unSACKed segment starts below this.
    rtx_hint: u64,
}

impl Scoreboard {
    /// A board for sender MSS `mss` (SMSS, bytes) and duplicate-ACK threshold
    /// `dupthresh` (RFC 6675's DupThresh, normally 3; 0 is treated as 1).
    pub fn new(mss: u32, dupthresh: u32) -> Self {
        Self::with_capacity(mss, dupthresh, 0)
    }

    /// As `new`, with room for `segments` segments reserved up front.
    pub fn with_capacity(mss: u32, dupthresh: u32, segments: usize) -> Self {
        assert!(mss > 0, "scoreboard: MSS must be positive");
        Scoreboard {
            mss,
            dupthresh: dupthresh.max(1),
            segs: VecDeque::with_capacity(segments),
            runs: VecDeque::with_capacity(segments.min(64)),
            una: 0,
            max: 0,
            sacked_bytes: 0,
            lost_end: 0,
            lost_bytes: 0,
            retx_bytes: 0,
            high_rxt: 0,
            in_recovery: false,
            recovery_point: 0,
            rescue_rxt: None,
            pending_rescue: None,
            rack_marking: false,
            fack: 0,
            rack_scan_from: 0,
            retx_order: VecDeque::new(),
            rtx_hint: u64::MAX,
        }
    }

    /// Time-based loss marking by RACK instead of RFC 6675's IsLost() (see the module
    /// documentation). Set before the first send.
    pub fn set_rack_marking(&mut self, on: bool) {
        self.rack_marking = on;
    }

    /// Forget everything (keeping the allocations): the board is as from `new`.
    pub fn reset(&mut self) {
        self.segs.clear();
        self.runs.clear();
        self.una = 0;
        self.max = 0;
        self.sacked_bytes = 0;
        self.lost_end = 0;
        self.lost_bytes = 0;
        self.retx_bytes = 0;
        self.high_rxt = 0;
        self.in_recovery = false;
        self.recovery_point = 0;
        self.rescue_rxt = None;
        self.pending_rescue = None;
        self.fack = 0;
        self.rack_scan_from = 0;
        self.retx_order.clear();
        self.rtx_hint = u64::MAX;
    }

    // ----- queries -----

    /// Heap bytes the board holds (its segment and run records' capacity): it grows
    /// with the most data ever outstanding, never with a window bound.
    pub fn heap_bytes(&self) -> usize {
        self.segs.capacity() * std::mem::size_of::<Seg>() + self.runs.capacity() * std::mem::size_of::<Run>()
    }

    pub fn mss(&self) -> u32 {
        self.mss
    }
    pub fn dupthresh(&self) -> u32 {
        self.dupthresh
    }
    /// HighACK + 1: the lowest unacknowledged octet.
    pub fn snd_una(&self) -> u64 {
        self.una
    }
    /// HighData + 1: one past the highest octet sent.
    pub fn snd_max(&self) -> u64 {
        self.max
    }
    /// Octets sent and not cumulatively acknowledged (FlightSize).
    pub fn outstanding(&self) -> u64 {
        self.max - self.una
    }
    /// Nothing outstanding.
    pub fn is_empty(&self) -> bool {
        self.max == self.una
    }
    /// Segments on the board.
    pub fn segment_count(&self) -> usize {
        self.segs.len()
    }
    /// Octets in [snd_una, snd_max) covered by SACK blocks.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    /// UnSACKed octets IsLost() deems lost.
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }
    /// UnSACKed octets of retransmitted segments (each counted once however often it
    /// was retransmitted).
    pub fn retransmitted_bytes(&self) -> u64 {
        self.retx_bytes
    }
    /// The highest segment on the board, as (seq, len).
    pub fn last_segment(&self) -> Option<(u64, u32)> {
        self.segs.back().map(|g| (g.seq, g.len))
    }
    /// One past the highest SACKed octet, if any octet in [snd_una, snd_max) is SACKed.
    pub fn highest_sacked(&self) -> Option<u64> {
        self.runs.back().map(|r| r.end)
    }
    /// One past the highest octet retransmitted in this recovery (never below snd_una).
    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }
    /// Inside an RFC 6675 loss recovery (from `enter_recovery` to the ACK of
    /// RecoveryPoint, an RTO or `exit_recovery`).
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// snd_max when the last recovery began or the last RTO fired.
    pub fn recovery_point(&self) -> u64 {
        self.recovery_point
    }
    /// A new recovery may begin: not in one, and snd_una has reached the RecoveryPoint
    /// of the last recovery or RTO (§5, §5.1).
    pub fn may_enter_recovery(&self) -> bool {
        !self.in_recovery && self.una >= self.recovery_point
    }

    /// `seq` lies in [snd_una, snd_max) and has been SACKed.
    pub fn is_sacked(&self, seq: u64) -> bool {
        let i = self.runs.partition_point(|r| r.end <= seq);
        i < self.runs.len() && self.runs[i].start <= seq
    }

    /// RFC 6675 IsLost(seq) for an octet in [snd_una, snd_max): DupThresh discontiguous
    /// SACKed runs above it, or more than (DupThresh - 1) * SMSS SACKed octets above it
    /// (or an RTO since it was sent). False for SACKed octets and outside the window.
    pub fn is_lost(&self, seq: u64) -> bool {
        if seq < self.una || seq >= self.max || self.is_sacked(seq) {
            return false;
        }
        seq < self.lost_end || (self.rack_marking && self.segs[self.seg_index(seq)].lost)
    }

    /// RFC 6675 SetPipe(): over the unSACKed octets of [snd_una, snd_max), one for each
    /// not deemed lost plus one for each in a retransmitted segment.
    pub fn pipe(&self) -> u64 {
        self.outstanding() - self.sacked_bytes - self.lost_bytes + self.retx_bytes
    }

    // ----- events -----

    /// The sender transmitted [seq, seq + len). Octets below snd_max are a
    /// retransmission: the segments they fall in are marked retransmitted and HighRxt
    /// moves up to the end of the range (C.2), unless this is the rescue segment
    /// NextSeg just returned. Octets from snd_max up are new data and extend the board;
    /// `seq` must not be above snd_max unless the board is empty.
    /// `is_retransmission` is checked (in debug builds) against the board.
    pub fn on_send(&mut self, seq: u64, len: u32, is_retransmission: bool) {
        self.on_send_at(seq, len, is_retransmission, SimTime::ZERO);
    }

    /// `on_send` for a transmission at `now` (the time RACK reads).
    pub fn on_send_at(&mut self, seq: u64, len: u32, is_retransmission: bool, now: SimTime) {
        if len == 0 {
            return;
        }
        let end = seq + len as u64;
        if self.is_empty() && seq >= self.max {
            // First data, or first data after everything was acked: start here.
            self.una = seq;
            self.max = seq;
            self.lost_end = seq;
            self.high_rxt = seq;
        }
        let lo = seq.max(self.una);
        let hi = end.min(self.max);
        if lo < hi {
            debug_assert!(
                is_retransmission,
                "on_send: [{seq}, {end}) resends data but is not flagged as a retransmission"
            );
            self.mark_retransmitted(lo, hi, now);
            if self.pending_rescue == Some(seq) {
                self.pending_rescue = None;
            } else {
                self.high_rxt = self.high_rxt.max(hi);
            }
        }
        if end > self.max {
            assert!(
                seq <= self.max,
                "on_send: new data at {seq} leaves a gap after snd_max {}",
                self.max
            );
            debug_assert!(
                !is_retransmission || seq < self.max,
                "on_send: [{seq}, {end}) is new data flagged as a retransmission"
            );
            let start = seq.max(self.max);
            self.segs.push_back(Seg {
                seq: start,
                len: (end - start) as u32,
                sacked: 0,
                retx: false,
                ever_retx: false,
                lost: false,
                xmit: now,
            });
            self.max = end;
        }
    }

    /// Process an ACK: the cumulative ACK `cum_ack` (clamped to snd_max; an old one
    /// changes nothing) and then the SACK blocks, then mark losses (RFC 6675 Update()
    /// followed by the IsLost() pass). Ends the recovery if the cumulative ACK reaches
    /// RecoveryPoint.
    pub fn on_ack(&mut self, cum_ack: u64, blocks: &[SackBlock]) -> AckUpdate {
        let mut up = AckUpdate::default();
        let prior_fack = self.fack;
        let cum = cum_ack.min(self.max);
        if cum > self.una {
            up.newly_acked = cum - self.una;
            up.delivered = up.newly_acked - self.advance_una(cum, prior_fack, &mut up);
        }
        for b in blocks {
            let (a, e) = (b.start.max(self.una), b.end.min(self.max));
            if a < e {
                up.newly_sacked += self.add_sack(a, e, prior_fack, &mut up);
            }
        }
        if up.newly_sacked > 0 {
            up.delivered += up.newly_sacked;
            up.new_sack_info = true;
            if !self.rack_marking {
                up.newly_lost = self.mark_losses();
            }
        }
        if self.in_recovery && self.una >= self.recovery_point {
            self.exit_recovery();
            up.recovery_ended = true;
        }
        up
    }

    /// RFC 6675 §5 step (4): enter loss recovery (only when `may_enter_recovery()`). RecoveryPoint = HighData (4.1);
    /// returns the segment at HighACK + 1 that (4.3) retransmits, and sets RescueRxt
    /// to its end (HighRxt follows when the caller reports the retransmission with
    /// `on_send(seq, len, true)`). `None` if nothing is outstanding.
    pub fn enter_recovery(&mut self) -> Option<(u64, u32)> {
        debug_assert!(!self.in_recovery, "enter_recovery: already in loss recovery");
        let first = *self.segs.front()?;
        self.in_recovery = true;
        self.recovery_point = self.max;
        self.high_rxt = self.una;
        self.rescue_rxt = Some(first.end());
        self.pending_rescue = None;
        Some((first.seq, first.len))
    }

    /// Leave loss recovery early (the sender's decision, e.g. an undo). `on_ack` does
    /// this by itself when the cumulative ACK reaches RecoveryPoint.
    pub fn exit_recovery(&mut self) {
        self.in_recovery = false;
        self.high_rxt = self.una;
        self.rescue_rxt = None;
        self.pending_rescue = None;
    }

    /// RFC 6675 NextSeg(). `new_data_ok`: unsent data exists and the receiver's window
    /// allows one more segment (rule (2)); the caller checks cwnd - pipe >= SMSS before
    /// asking (C.5). Returns, in order of preference: rule (1) a lost segment above
    /// HighRxt; rule (2) `NewData`; inside a recovery, rule (3) an unSACKed segment above
    /// HighRxt below the highest SACK, then rule (4) one rescue retransmission of the
    /// segment holding the highest unSACKed octet once snd_una has passed RescueRxt
    /// (RescueRxt then becomes RecoveryPoint). Call it only to send what it returns
    /// (it records the rescue).
    pub fn next_seg(&mut self, new_data_ok: bool) -> NextSeg {
        self.pending_rescue = None;
        if self.rack_marking {
            return self.next_seg_rack(new_data_ok);
        }
        let s = self.first_unsacked_from(self.high_rxt.max(self.una));
        if let Some(s) = s {
            if s < self.lost_end {
                let (seq, len) = self.segment_at(s);
                return NextSeg::Retransmit { seq, len, rule: RetransmitRule::Lost };
            }
        }
        if new_data_ok {
            return NextSeg::NewData;
        }
        if !self.in_recovery {
            return NextSeg::Nothing;
        }
        if let (Some(s), Some(top)) = (s, self.highest_sacked()) {
            if s < top {
                let (seq, len) = self.segment_at(s);
                return NextSeg::Retransmit { seq, len, rule: RetransmitRule::NotLost };
            }
        }
        if self.rescue_rxt.is_none_or(|r| self.una >= r) {
            if let Some(h) = self.highest_unsacked() {
                let (seq, len) = self.segment_at(h);
                self.rescue_rxt = Some(self.recovery_point);
                self.pending_rescue = Some(seq);
                return NextSeg::Retransmit { seq, len, rule: RetransmitRule::Rescue };
            }
        }
        NextSeg::Nothing
    }

    /// Retransmission timeout (RFC 6675 §5.1): keep the SACK information, deem every
    /// unSACKed octet lost, clear the retransmitted flags, HighRxt = snd_una,
    /// RecoveryPoint = HighData, and leave any recovery. `next_seg` then returns the
    /// unSACKed segments in order. O(segments).
    pub fn mark_all_lost_for_rto(&mut self) {
        self.lost_end = self.max;
        self.lost_bytes = self.outstanding() - self.sacked_bytes;
        for s in self.segs.iter_mut() {
            s.retx = false;
        }
        self.retx_bytes = 0;
        self.high_rxt = self.una;
        self.in_recovery = false;
        self.recovery_point = self.max;
        self.rescue_rxt = None;
        self.pending_rescue = None;
    }

    /// Undoes `mark_all_lost_for_rto` after the timeout proved spurious (F-RTO,
    /// RFC 5682 §3 step 3b): the losses are re-derived from the SACK information alone
    /// by the IsLost() pass. Retransmitted flags set since the RTO stay (those
    /// segments are in flight).
    pub fn undo_rto_losses(&mut self) {
        self.lost_end = self.una;
        self.lost_bytes = 0;
        if self.rack_marking {
            // RACK re-derives the losses on the next ACK.
            for s in self.segs.iter_mut() {
                s.lost = false;
            }
            self.rtx_hint = u64::MAX;
            self.rack_scan_from = self.una;
            return;
        }
        self.mark_losses();
    }

    // ----- RACK (time-based marking) -----

    /// RFC 8985 §6.2 step 5 (`RACK_detect_loss`): every segment not yet delivered or
    /// deemed lost that was sent before the RACK segment (`rack_xmit`, `rack_end`;
    /// earlier time, or the same time and a lower end) is lost if it was sent at least
    /// `wait` (RACK.rtt + RACK.reo_wnd) ago. Returns the octets newly deemed lost and,
    /// if some candidates are not yet due, the time until the last of them is (the
    /// RFC's maximum `remaining`).
    pub fn rack_detect_losses(&mut self, rack_xmit: SimTime, rack_end: u64, now: SimTime, wait: SimDuration) -> (u64, Option<SimDuration>) {
        let before = |xmit: SimTime, end: u64| xmit < rack_xmit || (xmit == rack_xmit && end < rack_end);
        let due = |xmit: SimTime| now.0.saturating_sub(xmit.0) >= wait.0;
        let remaining = |xmit: SimTime| SimDuration((xmit.0 + wait.0).saturating_sub(now.0));
        let mut newly = 0;
        let mut last_pending: Option<SimTime> = None;
        // Originals, in sequence (= sending) order from the scan point.
        let mut k = self.seg_index(self.rack_scan_from.max(self.una));
        while k < self.segs.len() {
            let g = self.segs[k];
            if g.ever_retx || g.lost || g.sacked == g.len {
                if g.seq <= self.rack_scan_from.max(self.una) {
                    self.rack_scan_from = g.end();
                }
                k += 1;
                continue;
            }
            if !before(g.xmit, g.end()) {
                break;
            }
            if !due(g.xmit) {
                // Later originals were sent later: none of them is due either. The
                // last one sent before the RACK segment sets the timeout.
                last_pending = self.last_original_before(k, &before).or(Some(g.xmit));
                break;
            }
            newly += self.rack_mark_lost(k);
            self.rack_scan_from = g.end();
            k += 1;
        }
        // Retransmissions, in sending order; drop stale entries at the front.
        let mut i = 0;
        while i < self.retx_order.len() {
            let (seq, xmit) = self.retx_order[i];
            let live = self.live_retransmission(seq, xmit);
            if live.is_none() {
                if i == 0 {
                    self.retx_order.pop_front();
                } else {
                    i += 1;
                }
                continue;
            }
            let k = live.unwrap();
            if !before(xmit, self.segs[k].end()) {
                break;
            }
            if !due(xmit) {
                // The last live retransmission sent before the RACK segment.
                let j = self.retx_order.partition_point(|&(s, t)| before(t, s + 1));
                let last = (i..j).rev().find_map(|m| {
                    let (s, t) = self.retx_order[m];
                    self.live_retransmission(s, t).map(|_| t)
                });
                last_pending = last_pending.max(last.or(Some(xmit)));
                break;
            }
            newly += self.rack_mark_lost(k);
            if i == 0 {
                self.retx_order.pop_front();
            } else {
                i += 1;
            }
        }
        (newly, last_pending.map(remaining))
    }

    /// RTO with RACK (Linux `tcp_timeout_mark_lost`): the head and every unSACKed
    /// segment sent at least `rack_rtt` ago are lost; the recovery state is left as
    /// `mark_all_lost_for_rto` leaves it.
    pub fn rack_mark_rto_losses(&mut self, now: SimTime, rack_rtt: SimDuration) {
        for k in 0..self.segs.len() {
            let g = self.segs[k];
            if k == 0 || now.0.saturating_sub(g.xmit.0) >= rack_rtt.0 {
                self.rack_mark_lost(k);
            }
        }
        self.high_rxt = self.una;
        self.in_recovery = false;
        self.recovery_point = self.max;
        self.rescue_rxt = None;
        self.pending_rescue = None;
    }

    /// Marks segment `k` lost, or its retransmission lost if it was lost before
    /// (Linux `tcp_mark_skb_lost`): the segment leaves pipe and waits for NextSeg()
    /// rule (1) again. Returns the octets that left pipe.
    fn rack_mark_lost(&mut self, k: usize) -> u64 {
        let g = &mut self.segs[k];
        if g.sacked == g.len || (g.lost && !g.retx) {
            return 0;
        }
        let unsacked = g.unsacked();
        if g.retx {
            g.retx = false;
            self.retx_bytes -= unsacked;
        }
        if !g.lost {
            g.lost = true;
            self.lost_bytes += unsacked;
        }
        self.rtx_hint = self.rtx_hint.min(g.seq);
        unsacked
    }

    /// The index of the segment holding the live retransmission `(seq, xmit)` (its
    /// latest, still in flight: neither delivered nor deemed lost), if it is one.
    fn live_retransmission(&self, seq: u64, xmit: SimTime) -> Option<usize> {
        if seq < self.una {
            return None;
        }
        let k = self.seg_index(seq);
        let g = self.segs.get(k)?;
        (g.seq == seq && g.retx && g.sacked < g.len && g.xmit == xmit).then_some(k)
    }

    /// The transmission time of the last original loss candidate sent before the RACK
    /// segment, searching from index `from` (a candidate that is sent before it).
    fn last_original_before(&self, from: usize, before: &dyn Fn(SimTime, u64) -> bool) -> Option<SimTime> {
        // Originals' first transmissions are in sequence order, so the candidates
        // sent before the RACK segment end where an original is not; scan to there.
        let mut last = None;
        for g in self.segs.range(from..) {
            if g.ever_retx || g.lost || g.sacked == g.len {
                continue;
            }
            if !before(g.xmit, g.end()) {
                break;
            }
            last = Some(g.xmit);
        }
        last
    }

    /// NextSeg() with RACK marking: rule (1) the lowest lost, unretransmitted,
    /// unSACKed segment; rule (2) new data.
    fn next_seg_rack(&mut self, new_data_ok: bool) -> NextSeg {
        let mut k = self.seg_index(self.rtx_hint.max(self.una));
        while k < self.segs.len() {
            let g = self.segs[k];
            if g.lost && !g.retx && g.sacked < g.len {
                self.rtx_hint = g.seq;
                return NextSeg::Retransmit { seq: g.seq, len: g.len, rule: RetransmitRule::Lost };
            }
            k += 1;
        }
        self.rtx_hint = u64::MAX;
        if new_data_ok {
            NextSeg::NewData
        } else {
            NextSeg::Nothing
        }
    }

    /// Asks `line` to load the first and the last segment's records.
    pub fn prefetch_ends(&self, line: impl Fn(*const u8)) {
        if let (Some(f), Some(b)) = (self.segs.front(), self.segs.back()) {
            line(f as *const Seg as *const u8);
            line(b as *const Seg as *const u8);
        }
    }

    /// Index of the segment holding octet `s` (or `segs.len()` past the end). The
    /// segments are contiguous and nearly all `mss` long, which gives the guess.
    fn seg_index(&self, s: u64) -> usize {
        let guess = self.segs.front().map_or(0, |f| (s.saturating_sub(f.seq) / self.mss.max(1) as u64) as usize);
        super::partition_point_from(&self.segs, guess, |g| g.end() <= s)
    }

    // ----- internals -----

    /// Move snd_una up to `cum` (una < cum <= max). Returns the octets of [una, cum)
    /// that had been SACKed.
    fn advance_una(&mut self, cum: u64, prior_fack: u64, up: &mut AckUpdate) -> u64 {
        let old = self.una;
        let sacked_below = self.sacked_in(old, cum);
        let lost_hi = cum.min(self.lost_end);
        if lost_hi > old {
            self.lost_bytes -= (lost_hi - old) - self.sacked_in(old, lost_hi);
        }
        while let Some(&f) = self.segs.front() {
            if f.end() <= cum {
                if f.retx {
                    self.retx_bytes -= f.unsacked();
                }
                if f.lost {
                    self.lost_bytes -= f.unsacked();
                }
                if self.rack_marking && f.sacked < f.len {
                    Self::note_delivered(&f, prior_fack, up);
                }
                self.segs.pop_front();
            } else {
                if f.seq < cum {
                    // The ACK ends inside this segment: trim it.
                    let cut = (cum - f.seq) as u32;
                    let cut_sacked = self.sacked_in(f.seq, cum) as u32;
                    if f.retx {
                        self.retx_bytes -= (cut - cut_sacked) as u64;
                    }
                    if f.lost {
                        self.lost_bytes -= (cut - cut_sacked) as u64;
                    }
                    let g = &mut self.segs[0];
                    g.seq = cum;
                    g.len -= cut;
                    g.sacked -= cut_sacked;
                }
                break;
            }
        }
        while let Some(r) = self.runs.front_mut() {
            if r.end <= cum {
                self.runs.pop_front();
            } else {
                r.start = r.start.max(cum);
                break;
            }
        }
        self.sacked_bytes -= sacked_below;
        self.una = cum;
        self.lost_end = self.lost_end.max(cum);
        self.high_rxt = self.high_rxt.max(cum);
        self.fack = self.fack.max(cum);
        sacked_below
    }

    /// RACK's view of a newly delivered segment: the most recent transmissions and
    /// reordering (a never-retransmitted segment below what was delivered before).
    fn note_delivered(g: &Seg, prior_fack: u64, up: &mut AckUpdate) {
        let slot = if g.ever_retx { &mut up.newest_retransmitted } else { &mut up.newest_clean };
        if slot.is_none_or(|(t, e)| (g.xmit, g.end()) > (t, e)) {
            *slot = Some((g.xmit, g.end()));
        }
        if !g.ever_retx && g.seq < prior_fack {
            up.reordering = true;
        }
        if !g.ever_retx && up.lowest_clean_end.is_none_or(|e| g.end() < e) {
            up.lowest_clean_end = Some(g.end());
        }
    }

    /// SACK [a, b) (una <= a < b <= max); returns the octets not SACKed before.
    fn add_sack(&mut self, a: u64, b: u64, prior_fack: u64, up: &mut AckUpdate) -> u64 {
        // Runs overlapping or touching [a, b) are runs[i..j]; they merge with it.
        let i = self.runs.partition_point(|r| r.end < a);
        let mut j = i;
        let mut cursor = a;
        let mut newly = 0;
        let (mut lo, mut hi) = (a, b);
        while j < self.runs.len() && self.runs[j].start <= b {
            let r = self.runs[j];
            if r.start > cursor {
                newly += self.mark_sacked(cursor, r.start, prior_fack, up);
            }
            cursor = cursor.max(r.end);
            lo = lo.min(r.start);
            hi = hi.max(r.end);
            j += 1;
        }
        if cursor < b {
            newly += self.mark_sacked(cursor, b, prior_fack, up);
        }
        let merged = Run { start: lo, end: hi };
        if j == i {
            self.runs.insert(i, merged);
        } else {
            self.runs[i] = merged;
            if j > i + 1 {
                self.runs.drain(i + 1..j);
            }
        }
        newly
    }

    /// Account for the newly SACKed octets [a, b), none of them SACKed before.
    fn mark_sacked(&mut self, a: u64, b: u64, prior_fack: u64, up: &mut AckUpdate) -> u64 {
        self.sacked_bytes += b - a;
        self.fack = self.fack.max(b);
        let lost_hi = b.min(self.lost_end);
        if lost_hi > a {
            self.lost_bytes -= lost_hi - a;
        }
        let mut k = self.seg_index(a);
        while k < self.segs.len() {
            let s = &mut self.segs[k];
            if s.seq >= b {
                break;
            }
            let ov = s.end().min(b) - s.seq.max(a);
            s.sacked += ov as u32;
            if s.retx {
                self.retx_bytes -= ov;
            }
            if s.lost {
                self.lost_bytes -= ov;
            }
            if self.rack_marking && s.sacked == s.len {
                let g = *s;
                Self::note_delivered(&g, prior_fack, up);
            }
            k += 1;
        }
        b - a
    }

    /// Mark the segments overlapping [a, b) retransmitted.
    fn mark_retransmitted(&mut self, a: u64, b: u64, now: SimTime) {
        let mut k = self.seg_index(a);
        while k < self.segs.len() {
            let s = &mut self.segs[k];
            if s.seq >= b {
                break;
            }
            if !s.retx {
                s.retx = true;
                self.retx_bytes += s.unsacked();
            }
            s.ever_retx = true;
            s.xmit = now;
            if self.rack_marking {
                self.retx_order.push_back((s.seq, now));
            }
            k += 1;
        }
    }

    /// The IsLost() pass: walk the runs from the highest down until DupThresh runs or
    /// more than (DupThresh - 1) * SMSS octets lie above the next run's start; every
    /// unSACKed octet below that start is lost. Returns the octets newly deemed lost.
    fn mark_losses(&mut self) -> u64 {
        let limit = (self.dupthresh as u64 - 1) * self.mss as u64;
        let mut bytes = 0;
        let mut boundary = None;
        for (i, r) in self.runs.iter().rev().enumerate() {
            if r.start <= self.lost_end {
                break; // any boundary found further down could not raise lost_end
            }
            bytes += r.end - r.start;
            if i + 1 >= self.dupthresh as usize || bytes > limit {
                boundary = Some(r.start);
                break;
            }
        }
        let Some(c) = boundary else { return 0 };
        let newly = (c - self.lost_end) - self.sacked_in(self.lost_end, c);
        self.lost_bytes += newly;
        self.lost_end = c;
        newly
    }

    /// SACKed octets in [a, b).
    fn sacked_in(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let mut i = self.runs.partition_point(|r| r.end <= a);
        let mut n = 0;
        while i < self.runs.len() {
            let r = self.runs[i];
            if r.start >= b {
                break;
            }
            n += r.end.min(b) - r.start.max(a);
            i += 1;
        }
        n
    }

    /// The lowest unSACKed octet at or above `x` and below snd_max.
    fn first_unsacked_from(&self, x: u64) -> Option<u64> {
        let i = self.runs.partition_point(|r| r.end <= x);
        // Runs are non-adjacent, so the end of the run holding x is unSACKed.
        let s = if i < self.runs.len() && self.runs[i].start <= x { self.runs[i].end } else { x };
        (s < self.max).then_some(s)
    }

    /// The highest unSACKed octet in [snd_una, snd_max).
    fn highest_unsacked(&self) -> Option<u64> {
        if self.sacked_bytes == self.outstanding() {
            return None;
        }
        match self.runs.back() {
            Some(r) if r.end == self.max => Some(r.start - 1),
            _ => Some(self.max - 1),
        }
    }

    /// The segment holding octet `s` (una <= s < max), as (seq, len).
    fn segment_at(&self, s: u64) -> (u64, u32) {
        let g = self.segs[self.seg_index(s)];
        (g.seq, g.len)
    }
}

#[cfg(test)]
impl Scoreboard {
    /// Recompute every maintained counter from the segment and run lists.
    fn check_invariants(&self) {
        assert!(self.una <= self.max);
        assert!(self.una <= self.lost_end && self.lost_end <= self.max.max(self.una));
        assert!(self.high_rxt >= self.una);
        let mut at = self.una;
        for s in &self.segs {
            assert_eq!(s.seq, at, "segments not contiguous");
            assert!(s.len > 0);
            assert_eq!(
                s.sacked as u64,
                self.sacked_in(s.seq, s.end()),
                "per-segment SACKed octets"
            );
            at = s.end();
        }
        assert_eq!(at, self.max, "segments do not end at snd_max");
        let mut total = 0;
        for (i, r) in self.runs.iter().enumerate() {
            assert!(r.start < r.end && r.start >= self.una && r.end <= self.max);
            if i > 0 {
                assert!(self.runs[i - 1].end < r.start, "runs overlap or touch");
            }
            total += r.end - r.start;
        }
        assert_eq!(total, self.sacked_bytes);
        let retx: u64 = self.segs.iter().filter(|s| s.retx).map(|s| s.unsacked()).sum();
        assert_eq!(retx, self.retx_bytes);
        let prefix = (self.lost_end - self.una) - self.sacked_in(self.una, self.lost_end);
        let flagged: u64 = self.segs.iter().filter(|s| s.lost && s.seq >= self.lost_end).map(|s| s.unsacked()).sum();
        assert_eq!(prefix + flagged, self.lost_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blk(start: u64, end: u64) -> SackBlock {
        SackBlock { start, end }
    }

    /// A board with `n` full segments of 1000 octets at 0, 1000, ... ("segment k" in the
    /// comments is the 1-based k-th: [(k-1)*1000, k*1000)).
    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(1000, 3);
        for k in 0..n {
            sb.on_send(k * 1000, 1000, false);
        }
        sb.check_invariants();
        sb
    }

    fn retx(seq: u64, len: u32, rule: RetransmitRule) -> NextSeg {
        NextSeg::Retransmit { seq, len, rule }
    }

    // RFC 6675 §4/§5 with one loss: segment 1 dropped, 2, 3, 4 SACKed one ACK at a time.
    // SMSS = 1000, DupThresh = 3, so the byte rule needs more than 2 * 1000 SACKed
    // octets above an octet. 2, 3, 4 form a single SACKed run, so the run rule (3 runs)
    // never fires here: the bytes do.
    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// A RACK board with `n` segments of 1000 octets, segment k sent at k ms.
    fn rack_board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(1000, 3);
        sb.set_rack_marking(true);
        for k in 0..n {
            sb.on_send_at(k * 1000, 1000, false, ms(k));
        }
        sb
    }

    #[test]
    fn rack_marks_by_time_and_detects_lost_retransmissions() {
        // 10 segments sent at 0..9 ms. At 100 ms the ACK SACKs segment 5 ([4000,
        // 5000), sent at 4 ms): RACK segment (4 ms, 5000); no IsLost() marking.
        let mut sb = rack_board(10);
        let up = sb.on_ack(0, &[blk(4000, 5000)]);
        assert_eq!((up.newest_clean, up.newly_lost, up.reordering), (Some((ms(4), 5000)), 0, false));
        assert_eq!(sb.lost_bytes(), 0);
        // wait = RACK.rtt 96 ms + reo_wnd 2 ms = 98 ms. At 100 ms segments sent at 0,
        // 1, 2 ms are due (elapsed >= 98), the one sent at 3 ms is not: 1 ms remains.
        let (lost, timeout) = sb.rack_detect_losses(ms(4), 5000, ms(100), SimDuration::from_millis(98));
        assert_eq!((lost, timeout), (3000, Some(SimDuration::from_millis(1))));
        sb.check_invariants();
        assert_eq!(sb.pipe(), 10_000 - 1000 - 3000);
        // At 101 ms the timer fires: the 4th is due too.
        let (lost, timeout) = sb.rack_detect_losses(ms(4), 5000, ms(101), SimDuration::from_millis(98));
        assert_eq!((lost, timeout), (1000, None));
        // NextSeg: the lost ones in order. Retransmit segment 1 at 110 ms.
        assert_eq!(sb.next_seg(false), retx(0, 1000, RetransmitRule::Lost));
        sb.on_send_at(0, 1000, true, ms(110));
        assert_eq!(sb.next_seg(false), retx(1000, 1000, RetransmitRule::Lost));
        // New data at 120 ms; its SACK at 220 ms (RACK.rtt 100 ms): the retransmission
        // of segment 1 (sent at 110 ms, before 120 ms) is due with reo_wnd 0: lost
        // again, and it is the first to retransmit once more.
        sb.on_send_at(10_000, 1000, false, ms(120));
        let up = sb.on_ack(0, &[blk(10_000, 11_000)]);
        assert_eq!(up.newest_clean, Some((ms(120), 11_000)));
        let (lost, _) = sb.rack_detect_losses(ms(120), 11_000, ms(220), SimDuration::from_millis(100));
        // Segments 6..10 (sent 5..9 ms, before 120 ms) are due as well: 5 + 1 segments.
        assert_eq!(lost, 6000);
        assert_eq!(sb.next_seg(false), retx(0, 1000, RetransmitRule::Lost));
        sb.check_invariants();
    }

    #[test]
    fn rack_reordering_rto_marking_and_undo() {
        let mut sb = rack_board(6);
        // SACK segment 5 first, then the cumulative ACK covers 1..3, never
        // retransmitted and below what was delivered: reordering.
        let up = sb.on_ack(0, &[blk(4000, 5000)]);
        assert!(!up.reordering);
        let up = sb.on_ack(3000, &[blk(4000, 5000)]);
        assert!(up.reordering);
        assert_eq!(up.newest_clean, Some((ms(2), 3000)));
        // RTO at 10 ms with RACK.rtt 8 ms: the head (segment 4, sent 3 ms, 7 ms ago)
        // is lost whatever its age; segment 6 (sent 5 ms) is not; 5 is SACKed.
        sb.rack_mark_rto_losses(ms(10), SimDuration::from_millis(8));
        assert!(sb.is_lost(3000) && !sb.is_lost(5000) && !sb.is_lost(4500));
        sb.check_invariants();
        sb.undo_rto_losses();
        assert_eq!(sb.lost_bytes(), 0);
        sb.check_invariants();
    }

    #[test]
    fn undo_rto_losses_rederives_from_sacks() {
        let mut b = board(10);
        // SACK segment 5 only: one run of 1 MSS, not enough for IsLost anywhere.
        b.on_ack(0, &[blk(5 * 1000, 6 * 1000)]);
        assert_eq!(b.lost_bytes(), 0);
        b.mark_all_lost_for_rto();
        assert_eq!(b.lost_bytes(), 9 * 1000);
        b.undo_rto_losses();
        assert_eq!(b.lost_bytes(), 0);
        assert_eq!(b.pipe(), 9 * 1000);
    }

    #[test]
    fn rfc6675_single_loss() {
        let mut sb = board(10);
        assert_eq!(sb.pipe(), 10_000); // 10 segments, none SACKed or lost

        // SACK 2: 1 run, 1000 octets above segment 1 -> not lost. pipe = 10000 - 1000.
        let up = sb.on_ack(0, &[blk(1000, 2000)]);
        assert_eq!(
            (up.newly_acked, up.newly_sacked, up.delivered, up.newly_lost),
            (0, 1000, 1000, 0)
        );
        assert!(up.new_sack_info);
        assert!(!sb.is_lost(0));
        assert_eq!(sb.pipe(), 9000);

        // SACK 2-3: 2000 octets above, not MORE than 2000 -> not lost. pipe = 10000 - 2000.
        let up = sb.on_ack(0, &[blk(1000, 3000)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (1000, 0));
        assert!(!sb.is_lost(999));
        assert_eq!(sb.pipe(), 8000);

        // SACK 2-4: 3000 > 2000 -> segment 1 lost. pipe = 10000 - 3000 SACKed - 1000 lost.
        let up = sb.on_ack(0, &[blk(1000, 4000)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (1000, 1000));
        assert!(sb.is_lost(0) && sb.is_lost(999));
        assert!(!sb.is_lost(1000)); // SACKed
        assert!(!sb.is_lost(4000)); // nothing SACKed above it
        assert_eq!(
            (sb.sacked_bytes(), sb.lost_bytes(), sb.highest_sacked()),
            (3000, 1000, Some(4000))
        );
        assert_eq!(sb.pipe(), 6000);
        sb.check_invariants();

        // Enter recovery (4.3): retransmit segment 1. It is lost (+0) and retransmitted
        // (+1000): pipe = 7000. HighRxt = 1000.
        assert!(sb.may_enter_recovery());
        assert_eq!(sb.enter_recovery(), Some((0, 1000)));
        sb.on_send(0, 1000, true);
        assert_eq!((sb.pipe(), sb.high_rxt(), sb.recovery_point()), (7000, 1000, 10_000));

        // NextSeg: nothing lost above HighRxt -> rule (2) new data. Without new data:
        // rule (3) needs an unSACKed octet above HighRxt below the highest SACK (4000),
        // there is none; rule (4) waits for snd_una >= RescueRxt = 1000 -> nothing.
        assert_eq!(sb.next_seg(true), NextSeg::NewData);
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);
        sb.on_send(10_000, 1000, false); // segment 11
        assert_eq!(sb.pipe(), 8000);

        // The retransmission arrives: cum ACK 4000. 4000 octets acked, of which 3000 had
        // been SACKed -> delivered 1000. Left: segments 5-11 = 7000, nothing SACKed/lost.
        let up = sb.on_ack(4000, &[]);
        assert_eq!((up.newly_acked, up.newly_sacked, up.delivered), (4000, 0, 1000));
        assert!(!up.new_sack_info && !up.recovery_ended);
        assert_eq!((sb.pipe(), sb.sacked_bytes(), sb.lost_bytes()), (7000, 0, 0));
        assert!(sb.in_recovery()); // RecoveryPoint 10000 not reached

        // Full ACK of RecoveryPoint ends the recovery (§5 (A)).
        let up = sb.on_ack(10_000, &[]);
        assert!(up.recovery_ended && !sb.in_recovery());
        assert_eq!(sb.pipe(), 1000); // segment 11
        sb.check_invariants();
    }

    // The run rule: segments of 100 octets (SMSS 1000), so SACKed octets never exceed
    // (3 - 1) * 1000 and only "DupThresh discontiguous SACKed sequences" can mark a loss
    // (the case §5 step (1)'s note is about). Segment k = [(k-1)*100, k*100).
    #[test]
    fn discontiguous_runs_rule_small_segments() {
        let mut sb = Scoreboard::new(1000, 3);
        for k in 0..10 {
            sb.on_send(k * 100, 100, false);
        }
        // SACK 2, 4, 6 (given in reverse order): 3 runs above segment 1 -> lost;
        // above 3: runs {4}, {6} = 2, 200 octets -> not lost; above 5: 1 run.
        let up = sb.on_ack(0, &[blk(500, 600), blk(300, 400), blk(100, 200)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (300, 100));
        assert!(sb.is_lost(0) && sb.is_lost(99));
        assert!(!sb.is_lost(100) && !sb.is_lost(200) && !sb.is_lost(400));
        // pipe = 1000 - 300 SACKed - 100 lost
        assert_eq!(sb.pipe(), 600);

        // SACK 8 as well: above 3 there are now 3 runs ({4}, {6}, {8}) -> lost.
        // lost = segments 1 and 3 = 200; pipe = 1000 - 400 - 200 = 400.
        let up = sb.on_ack(0, &[blk(700, 800)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (100, 100));
        assert!(sb.is_lost(200) && !sb.is_lost(400));
        assert_eq!((sb.lost_bytes(), sb.pipe()), (200, 400));
        sb.check_invariants();
    }

    // Losses are latched (module doc, item 5). 100-octet segments, SMSS 1000.
    #[test]
    fn losses_are_latched_when_runs_merge() {
        let mut sb = Scoreboard::new(1000, 3);
        for k in 0..10 {
            sb.on_send(k * 100, 100, false);
        }
        // Three partial blocks inside segment 2: 3 runs above segment 1 -> lost.
        // pipe = 1000 - 60 SACKed - 100 lost = 840.
        let up = sb.on_ack(0, &[blk(100, 120), blk(140, 160), blk(180, 200)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (60, 100));
        assert_eq!(sb.pipe(), 840);
        // Segment 2 complete: the runs merge into one of 100 octets, so the RFC's
        // IsLost(0) would now be false (1 run, 100 <= 2000 octets). It stays lost:
        // pipe = 1000 - 100 - 100 = 800 (the RFC's pure function would give 900).
        let up = sb.on_ack(0, &[blk(100, 200)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (40, 0));
        assert!(sb.is_lost(0));
        assert_eq!(sb.pipe(), 800);
        sb.check_invariants();
    }

    // Two holes (segments 1 and 3), then recovery with a partial ACK and the rescue.
    #[test]
    fn two_holes_and_rescue() {
        let mut sb = board(10);
        // SACK 2 and 4. Above segment 3: 1 run of 1000. Above segment 1: 2 runs, 2000
        // octets (not more than 2000) -> nothing lost. pipe = 10000 - 2000.
        sb.on_ack(0, &[blk(1000, 2000), blk(3000, 4000)]);
        assert_eq!((sb.lost_bytes(), sb.pipe()), (0, 8000));

        // SACK 4-5 (and 2 again). Above 3: 2000, no. Above 1: 2 runs, 3000 > 2000 ->
        // lost. pipe = 10000 - 3000 - 1000.
        let up = sb.on_ack(0, &[blk(3000, 5000), blk(1000, 2000)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (1000, 1000));
        assert!(sb.is_lost(0) && !sb.is_lost(2000));
        assert_eq!(sb.pipe(), 6000);

        // SACK 4-6. Above 3: 3000 > 2000 -> lost. pipe = 10000 - 4000 - 2000 = 4000
        // (segments 7-10).
        let up = sb.on_ack(0, &[blk(3000, 6000), blk(1000, 2000)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (1000, 1000));
        assert_eq!((sb.lost_bytes(), sb.pipe()), (2000, 4000));

        // Recovery: (4.3) segment 1, then NextSeg rule (1) segment 3, then new data.
        assert_eq!(sb.enter_recovery(), Some((0, 1000)));
        sb.on_send(0, 1000, true);
        assert_eq!(sb.pipe(), 5000);
        assert_eq!(sb.next_seg(true), retx(2000, 1000, RetransmitRule::Lost));
        sb.on_send(2000, 1000, true);
        assert_eq!((sb.pipe(), sb.high_rxt()), (6000, 3000));
        assert_eq!(sb.next_seg(true), NextSeg::NewData);
        // No new data: rule (3) finds nothing unSACKed in [3000, 6000); rule (4) waits
        // for snd_una >= RescueRxt = 1000.
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);

        // Partial ACK 2000 (segment 1's retransmission): 2000 acked, 1000 of them
        // SACKed before -> delivered 1000. Outstanding [2000, 10000) = 8000, SACKed
        // 3000, segment 3 lost (-1000) but retransmitted (+1000): pipe = 5000.
        let up = sb.on_ack(2000, &[blk(3000, 6000)]);
        assert_eq!((up.newly_acked, up.delivered, up.newly_sacked), (2000, 1000, 0));
        assert!(!up.new_sack_info);
        assert_eq!(sb.pipe(), 5000);

        // Now snd_una 2000 >= RescueRxt 1000: rule (4) resends the segment holding the
        // highest unSACKed octet (9999: segment 10). HighRxt stays at 3000, RescueRxt
        // becomes RecoveryPoint (10000), so there is no second rescue. pipe + 1000.
        assert_eq!(sb.next_seg(false), retx(9000, 1000, RetransmitRule::Rescue));
        sb.on_send(9000, 1000, true);
        assert_eq!((sb.high_rxt(), sb.pipe()), (3000, 6000));
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);

        let up = sb.on_ack(10_000, &[]);
        assert!(up.recovery_ended);
        assert_eq!((up.newly_acked, up.delivered), (8000, 5000)); // 3000 were SACKed
        assert_eq!(sb.pipe(), 0);
        assert!(sb.is_empty() && sb.may_enter_recovery());
        sb.check_invariants();
    }

    // Blocks covering parts of segments count exactly the octets they cover.
    #[test]
    fn partial_coverage() {
        let mut sb = board(10);
        // [1500, 2500): the second half of segment 2, the first half of segment 3.
        let up = sb.on_ack(0, &[blk(1500, 2500)]);
        assert_eq!(up.newly_sacked, 1000);
        assert!(
            !sb.is_sacked(1499) && sb.is_sacked(1500) && sb.is_sacked(2499) && !sb.is_sacked(2500)
        );
        assert_eq!(sb.pipe(), 9000);

        // [2500, 3000) merges: run [1500, 3000) = 1500 octets, not > 2000.
        let up = sb.on_ack(0, &[blk(2500, 3000)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (500, 0));
        assert_eq!((sb.sacked_bytes(), sb.pipe()), (1500, 8500));

        // [3000, 3600): run [1500, 3600) = 2100 > 2000 -> the 1500 unSACKed octets
        // below 1500 are lost (segment 1 and the first half of segment 2).
        // pipe = 10000 - 2100 - 1500 = 6400.
        let up = sb.on_ack(0, &[blk(3000, 3600)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (600, 1500));
        assert!(sb.is_lost(1499) && !sb.is_lost(1500) && !sb.is_lost(3600));
        assert_eq!(sb.pipe(), 6400);

        // Recovery: segment 1 (+1000), then rule (1) gives all of segment 2 (its first
        // unSACKed octet 1000 is lost); only its 500 unSACKed octets count: +500.
        assert_eq!(sb.enter_recovery(), Some((0, 1000)));
        sb.on_send(0, 1000, true);
        assert_eq!(sb.pipe(), 7400);
        assert_eq!(sb.next_seg(false), retx(1000, 1000, RetransmitRule::Lost));
        sb.on_send(1000, 1000, true);
        assert_eq!((sb.pipe(), sb.retransmitted_bytes()), (7900, 1500));
        // Next unSACKed octet above HighRxt (2000) is 3600, the top of the SACKed run:
        // not lost, not below the highest SACK -> nothing.
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);

        // [3600, 4000) completes segment 4: -400. pipe = 10000 - 2500 - 1500 + 1500.
        sb.on_ack(0, &[blk(3600, 4000)]);
        assert_eq!(sb.pipe(), 7500);
        sb.check_invariants();
    }

    // Blocks in any order, overlapping, duplicated, empty or inverted.
    #[test]
    fn blocks_unordered_overlapping_duplicate() {
        let mut sb = board(10);
        let blocks = [
            blk(5000, 6000),
            blk(2000, 3000),
            blk(2500, 4000),
            blk(2000, 3000),
            blk(5500, 5800),
            blk(7000, 7000),
            blk(8000, 7500),
        ];
        // Union: [2000, 4000) + [5000, 6000) = 3000 octets, two runs. Below 2000 there
        // are 2 runs and 3000 > 2000 octets above: [0, 2000) is lost. [4000, 5000) has
        // 1 run of 1000 above: not lost. pipe = 10000 - 3000 - 2000.
        let up = sb.on_ack(0, &blocks);
        assert_eq!((up.newly_sacked, up.delivered, up.newly_lost), (3000, 3000, 2000));
        assert_eq!((sb.sacked_bytes(), sb.highest_sacked()), (3000, Some(6000)));
        assert!(sb.is_lost(1999) && !sb.is_lost(4000));
        assert_eq!(sb.pipe(), 5000);
        sb.check_invariants();
        // The same ACK again carries nothing new: not a duplicate ACK under RFC 6675 §2.
        let up = sb.on_ack(0, &blocks);
        assert_eq!(up, AckUpdate::default());
        // [4000, 5000) joins the two runs into [2000, 6000): the loss boundary stays at
        // 2000. pipe = 10000 - 4000 - 2000.
        let up = sb.on_ack(0, &[blk(4000, 5000)]);
        assert_eq!((up.newly_sacked, up.newly_lost), (1000, 0));
        assert_eq!(sb.runs.len(), 1);
        assert_eq!(sb.pipe(), 4000);
        sb.check_invariants();
    }

    // Parts of blocks below the cumulative ACK (D-SACKs) or above snd_max are ignored.
    #[test]
    fn blocks_below_cum_ack_ignored() {
        let mut sb = board(10);
        // D-SACK [1000, 2000) below the ACK of 3000: only the cumulative ACK counts.
        let up = sb.on_ack(3000, &[blk(1000, 2000)]);
        assert_eq!((up.newly_acked, up.newly_sacked, up.delivered), (3000, 0, 3000));
        assert!(!up.new_sack_info);
        // [2500, 4000) straddles snd_una: only [3000, 4000) is new.
        let up = sb.on_ack(3000, &[blk(2500, 4000)]);
        assert_eq!(up.newly_sacked, 1000);
        // An old cumulative ACK changes nothing.
        let up = sb.on_ack(1000, &[]);
        assert_eq!(up, AckUpdate::default());
        // [0, 20000) is clipped to [3000, 10000): 7000 octets, 1000 already SACKed.
        let up = sb.on_ack(3000, &[blk(0, 20_000)]);
        assert_eq!(up.newly_sacked, 6000);
        assert_eq!((sb.sacked_bytes(), sb.outstanding(), sb.pipe()), (7000, 7000, 0));
        // A cumulative ACK beyond snd_max (a FIN's sequence number) is clamped.
        let up = sb.on_ack(10_001, &[]);
        assert_eq!((up.newly_acked, up.delivered), (7000, 0));
        assert!(sb.is_empty());
        sb.check_invariants();
    }

    // A retransmission adds its unSACKed octets to pipe once, until acked or SACKed.
    #[test]
    fn retransmission_counts_in_pipe_until_acked() {
        let mut sb = board(10);
        // Resend segment 3 (nothing lost): its octets now count twice. pipe 11000.
        sb.on_send(2000, 1000, true);
        assert_eq!(sb.pipe(), 11_000);
        // Resending it again does not count it a third time.
        sb.on_send(2000, 1000, true);
        assert_eq!(sb.pipe(), 11_000);
        // SACK of segment 3 removes both its counts: 11000 - 2000.
        sb.on_ack(0, &[blk(2000, 3000)]);
        assert_eq!(sb.pipe(), 9000);
        // Resend segment 5 (+1000), then SACK its first half: -500 twice.
        sb.on_send(4000, 1000, true);
        assert_eq!(sb.pipe(), 10_000);
        sb.on_ack(0, &[blk(4000, 4500)]);
        assert_eq!((sb.pipe(), sb.retransmitted_bytes()), (9000, 500));
        // Cum ACK 5000: what remains is segments 6-10.
        sb.on_ack(5000, &[]);
        assert_eq!((sb.pipe(), sb.retransmitted_bytes()), (5000, 0));
        sb.check_invariants();
    }

    // A cumulative ACK inside a segment trims it; a retransmission keeps counting its
    // unacked, unSACKed rest.
    #[test]
    fn cum_ack_inside_a_segment() {
        let mut sb = board(10);
        sb.on_send(0, 1000, true); // resend segment 1: pipe 11000
        sb.on_ack(500, &[]);
        // [500, 10000) outstanding = 9500, plus the 500 retransmitted octets left.
        assert_eq!(sb.pipe(), 10_000);
        // SACK [700, 1000): -300 original, -300 retransmitted.
        sb.on_ack(500, &[blk(700, 1000)]);
        assert_eq!(sb.pipe(), 9400);
        assert_eq!(sb.enter_recovery(), Some((500, 500)));
        sb.check_invariants();
    }

    // RTO: SACK information kept, everything unSACKed lost and resent in order.
    #[test]
    fn rto_marks_all_unsacked_lost() {
        let mut sb = board(10);
        // SACK 3 and 6: 2 runs, 2000 octets -> nothing lost; pipe 8000.
        sb.on_ack(0, &[blk(2000, 3000), blk(5000, 6000)]);
        assert_eq!((sb.lost_bytes(), sb.pipe()), (0, 8000));
        assert_eq!(sb.enter_recovery(), Some((0, 1000)));
        sb.on_send(0, 1000, true);
        assert_eq!(sb.pipe(), 9000);

        // RTO: 8000 unSACKed octets lost, retransmitted flags cleared -> pipe 0.
        sb.mark_all_lost_for_rto();
        assert_eq!((sb.lost_bytes(), sb.sacked_bytes(), sb.pipe()), (8000, 2000, 0));
        assert!(!sb.in_recovery() && !sb.may_enter_recovery());
        assert_eq!(sb.recovery_point(), 10_000);
        assert!(sb.is_lost(0) && sb.is_lost(9999) && !sb.is_lost(2000));

        // Go-back-N: NextSeg rule (1) returns segments 1, 2, 4, 5, 7, 8, 9, 10 in order
        // (new data would be allowed but comes after the losses); each adds 1000.
        let mut pipe = 0;
        for k in [1u64, 2, 4, 5, 7, 8, 9, 10] {
            let seq = (k - 1) * 1000;
            assert_eq!(sb.next_seg(true), retx(seq, 1000, RetransmitRule::Lost));
            sb.on_send(seq, 1000, true);
            pipe += 1000;
            assert_eq!(sb.pipe(), pipe);
        }
        assert_eq!(sb.next_seg(true), NextSeg::NewData);
        assert_eq!(sb.next_seg(false), NextSeg::Nothing); // no rules (3)/(4) outside recovery
        sb.check_invariants();

        // No new recovery before snd_una reaches the RTO's RecoveryPoint (§5.1).
        sb.on_ack(4000, &[blk(5000, 6000)]);
        assert!(!sb.may_enter_recovery());
        sb.on_ack(10_000, &[]);
        assert!(sb.may_enter_recovery() && sb.is_empty());
        sb.check_invariants();
    }

    // A short last segment is handled like any other.
    #[test]
    fn short_last_segment() {
        let mut sb = Scoreboard::new(1000, 3);
        for k in 0..3 {
            sb.on_send(k * 1000, 1000, false);
        }
        // Segment 4 = [3000, 3300) is the short last one.
        sb.on_send(3000, 300, false);
        // SACK 2 and 4: 2 runs, 1300 octets -> nothing lost. pipe = 3300 - 1300.
        sb.on_ack(0, &[blk(1000, 2000), blk(3000, 3300)]);
        assert_eq!(sb.pipe(), 2000);
        // SACK 3 too: one run [1000, 3300) = 2300 > 2000 -> segment 1 lost. pipe 0.
        sb.on_ack(0, &[blk(1000, 3300)]);
        assert_eq!((sb.lost_bytes(), sb.pipe()), (1000, 0));
        sb.check_invariants();
    }

    // A 20,000-segment window (1448-octet segments, every 100th lost) SACKed one ACK per
    // arriving segment: fast, and the allocations settle.
    #[test]
    fn large_window() {
        const N: u64 = 20_000;
        const MSS: u64 = 1448;
        let mut sb = Scoreboard::new(MSS as u32, 3);
        let mut caps = (0, 0);
        for round in 0..3u64 {
            let base = sb.snd_max();
            for k in 0..N {
                sb.on_send(base + k * MSS, MSS as u32, false);
            }
            let mut recent: [SackBlock; 4] = Default::default();
            for k in 0..N {
                if k % 100 == 0 {
                    continue; // dropped
                }
                // The receiver reports the run holding k first, then older runs.
                let run_start = base + (k - k % 100 + 1) * MSS;
                let b = blk(run_start, base + (k + 1) * MSS);
                if recent[0].start != run_start {
                    recent.rotate_right(1);
                }
                recent[0] = b;
                sb.on_ack(base, &recent);
            }
            // 200 holes of one segment, all below the top run (99 segments > 2 * MSS).
            assert_eq!(sb.lost_bytes(), 200 * MSS);
            assert_eq!(sb.pipe(), 0);
            assert_eq!(sb.runs.len(), 200);
            sb.check_invariants();
            // Recovery resends the 200 holes in order.
            let first = sb.enter_recovery().unwrap();
            sb.on_send(first.0, first.1, true);
            for h in 1..200 {
                assert_eq!(
                    sb.next_seg(false),
                    retx(base + h * 100 * MSS, MSS as u32, RetransmitRule::Lost)
                );
                sb.on_send(base + h * 100 * MSS, MSS as u32, true);
            }
            assert_eq!(sb.pipe(), 200 * MSS);
            let up = sb.on_ack(base + N * MSS, &[]);
            assert!(up.recovery_ended && sb.is_empty());
            assert_eq!(up.delivered, 200 * MSS);
            if round == 0 {
                caps = (sb.segs.capacity(), sb.runs.capacity());
            } else {
                assert_eq!(
                    caps,
                    (sb.segs.capacity(), sb.runs.capacity()),
                    "steady state reallocated"
                );
            }
        }
    }

    #[test]
    fn reset_empties_the_board() {
        let mut sb = board(10);
        sb.on_ack(0, &[blk(1000, 5000)]);
        sb.enter_recovery();
        sb.reset();
        assert!(sb.is_empty() && !sb.in_recovery());
        assert_eq!(
            (sb.pipe(), sb.sacked_bytes(), sb.lost_bytes(), sb.highest_sacked()),
            (0, 0, 0, None)
        );
        sb.on_send(5000, 1000, false); // a fresh board starts at its first send
        assert_eq!((sb.snd_una(), sb.snd_max(), sb.pipe()), (5000, 6000, 1000));
        sb.check_invariants();
    }

    // ----- randomized check against a per-octet model of RFC 6675 -----

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // xorshift64
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
        fn below(&mut self, n: u64) -> u64 {
            if n == 0 {
                0
            } else {
                self.next() % n
            }
        }
        fn pct(&mut self, p: u64) -> bool {
            self.below(100) < p
        }
    }

    /// Per-octet truth: what was sent, SACKed, retransmitted, and received.
    struct Model {
        mss: u64,
        dupthresh: u64,
        segs: Vec<(u64, u64)>, // original [seq, end)
        sacked: Vec<bool>,
        retx: Vec<bool>,
        received: Vec<bool>,
        una: u64,
        max: u64,
        rto_end: u64,
        /// One past the highest octet RFC IsLost() has declared lost at any ACK.
        latch: u64,
        loss_pct: u64,
    }

    impl Model {
        /// RFC 6675 IsLost() octet by octet, straight from the text, on the current
        /// SACK information: DupThresh discontiguous SACKed runs, or more than
        /// (DupThresh - 1) * SMSS SACKed octets, above an unSACKed octet.
        fn rfc_is_lost(&self) -> Vec<bool> {
            let mut lost = vec![false; self.max as usize];
            let (mut runs, mut bytes) = (0, 0);
            for s in (self.una..self.max).rev() {
                let i = s as usize;
                if self.sacked[i] {
                    bytes += 1;
                    if s + 1 == self.max || !self.sacked[i + 1] {
                        runs += 1; // entering a new SACKed run from above
                    }
                } else {
                    lost[i] = runs >= self.dupthresh || bytes > (self.dupthresh - 1) * self.mss;
                }
            }
            lost
        }

        /// The loss-marking pass of an ACK: latch what IsLost() says now.
        fn latch_losses(&mut self) {
            let rfc = self.rfc_is_lost();
            if let Some(h) = (self.una..self.max).rev().find(|&s| rfc[s as usize]) {
                self.latch = self.latch.max(h + 1);
            }
        }

        /// Lost flags (IsLost() now, latched, or RTO), SetPipe() per octet, lost octets.
        fn brute(&self) -> (Vec<bool>, u64, u64) {
            let rfc = self.rfc_is_lost();
            let mut lost = vec![false; self.max as usize];
            let (mut pipe, mut nlost) = (0, 0);
            for s in self.una..self.max {
                let i = s as usize;
                if self.sacked[i] {
                    continue;
                }
                lost[i] = rfc[i] || s < self.latch || s < self.rto_end;
                if lost[i] {
                    nlost += 1;
                } else {
                    pipe += 1; // SetPipe (a)
                }
                if self.retx[i] {
                    pipe += 1; // SetPipe (b)
                }
            }
            (lost, pipe, nlost)
        }

        fn transmit(&mut self, rng: &mut Rng, a: u64, b: u64) {
            if !rng.pct(self.loss_pct) {
                for s in a..b {
                    self.received[s as usize] = true;
                }
            }
        }

        fn mark_retx(&mut self, a: u64, b: u64) {
            let (a, b) = (a.max(self.una), b.min(self.max));
            for &(s, e) in &self.segs {
                if s < b && e > a {
                    for o in s..e {
                        self.retx[o as usize] = true;
                    }
                }
            }
        }

        fn rcv_nxt(&self) -> u64 {
            (0..self.max).find(|&s| !self.received[s as usize]).unwrap_or(self.max)
        }

        /// An ACK as a receiver holding `received` could send, with some noise.
        fn make_ack(&self, rng: &mut Rng) -> (u64, Vec<SackBlock>) {
            let nxt = self.rcv_nxt();
            let cum = match rng.below(10) {
                0 => rng.below(nxt + 1),                                          // stale
                1 if nxt >= self.una => self.una + rng.below(nxt - self.una + 1), // mid-segment
                _ => nxt,
            };
            let mut islands = Vec::new();
            let mut s = nxt;
            while s < self.max {
                if self.received[s as usize] {
                    let a = s;
                    while s < self.max && self.received[s as usize] {
                        s += 1;
                    }
                    islands.push((a, s));
                } else {
                    s += 1;
                }
            }
            let mut blocks = Vec::new();
            for _ in 0..rng.below(5) {
                if islands.is_empty() {
                    break;
                }
                let (a, b) = islands[rng.below(islands.len() as u64) as usize];
                if rng.pct(25) {
                    let x = a + rng.below(b - a);
                    blocks.push(blk(x, x + 1 + rng.below(b - x)));
                } else {
                    blocks.push(blk(a, b));
                }
            }
            if rng.pct(15) && nxt > 0 {
                let x = rng.below(nxt);
                blocks.insert(0, blk(x, x + 1 + rng.below(nxt - x))); // D-SACK-like
            }
            if rng.pct(5) {
                blocks.push(blk(rng.below(self.max + 10), rng.below(self.max + 10)));
                // junk
            }
            (cum, blocks)
        }
    }

    /// Check the board against the model after every step.
    fn compare(sb: &Scoreboard, m: &Model) -> Vec<bool> {
        sb.check_invariants();
        let (lost, pipe, nlost) = m.brute();
        assert_eq!((sb.snd_una(), sb.snd_max()), (m.una, m.max));
        assert_eq!(sb.pipe(), pipe, "pipe");
        assert_eq!(sb.lost_bytes(), nlost, "lost bytes");
        let sacked = (m.una..m.max).filter(|&s| m.sacked[s as usize]).count() as u64;
        assert_eq!(sb.sacked_bytes(), sacked);
        assert!(sb.sacked_bytes() <= sb.outstanding());
        for s in m.una..m.max {
            assert_eq!(sb.is_sacked(s), m.sacked[s as usize], "is_sacked({s})");
            assert_eq!(sb.is_lost(s), lost[s as usize], "is_lost({s})");
        }
        lost
    }

    /// `(seq, len)` is the model segment holding `s`, trimmed at snd_una.
    fn is_segment_holding(m: &Model, seq: u64, len: u32, s: u64) {
        let &(a, b) = m.segs.iter().find(|&&(a, b)| a <= s && s < b).expect("octet in a segment");
        assert_eq!((seq, seq + len as u64), (a.max(m.una), b), "segment holding {s}");
    }

    /// How often each interesting path ran (to show the cases are not vacuous).
    #[derive(Default, Debug)]
    struct Coverage {
        rule1: u32,
        rule2: u32,
        rule3: u32,
        rescue: u32,
        nothing: u32,
        rto: u32,
        latched_beyond_rfc: u32,
        partial_segments_sacked: u32,
        mid_segment_acks: u32,
        recoveries_ended: u32,
    }

    fn random_case(
        sb: &mut Scoreboard,
        rng: &mut Rng,
        mss: u64,
        dupthresh: u64,
        cov: &mut Coverage,
    ) {
        const CAP: usize = 40;
        let mut m = Model {
            mss,
            dupthresh,
            segs: Vec::new(),
            sacked: vec![false; CAP * mss as usize + 1],
            retx: vec![false; CAP * mss as usize + 1],
            received: vec![false; CAP * mss as usize + 1],
            una: 0,
            max: 0,
            rto_end: 0,
            latch: 0,
            loss_pct: rng.below(50),
        };
        let trace = std::env::var_os("SB_TRACE").is_some();
        // The model's lost flags as of the last comparison.
        let mut lost = compare(sb, &m);
        for _ in 0..150 {
            let op = rng.below(100);
            if trace {
                eprintln!(
                    "op {op} una {} max {} board {:?} {:?} lost_end {} high_rxt {}",
                    m.una, m.max, sb.segs, sb.runs, sb.lost_end, sb.high_rxt
                );
            }
            if op < 30 {
                if m.segs.len() < CAP {
                    let len = if rng.pct(15) { 1 + rng.below(mss) } else { mss };
                    let seq = m.max;
                    sb.on_send(seq, len as u32, false);
                    m.segs.push((seq, seq + len));
                    m.max += len;
                    m.transmit(rng, seq, seq + len);
                }
            } else if op < 65 {
                let lost_before = std::mem::take(&mut lost);
                let (cum, blocks) = m.make_ack(rng);
                let was_in_recovery = sb.in_recovery();
                if trace {
                    eprintln!("ack {cum} {blocks:?}");
                }
                let up = sb.on_ack(cum, &blocks);
                if trace {
                    eprintln!(
                        "after: {:?} {:?} lost_end {} lost {} retx {} sacked {}",
                        sb.segs,
                        sb.runs,
                        sb.lost_end,
                        sb.lost_bytes,
                        sb.retx_bytes,
                        sb.sacked_bytes
                    );
                    let (_, p, nl) = m.brute();
                    eprintln!("model(before sack update) pipe {p} lost {nl}");
                }
                let old = m.una;
                let una = m.una.max(cum.min(m.max));
                let sacked_acked = (old..una).filter(|&s| m.sacked[s as usize]).count() as u64;
                m.una = una;
                let mut newly = 0;
                for b in &blocks {
                    for s in b.start.max(una)..b.end.min(m.max) {
                        if !m.sacked[s as usize] {
                            m.sacked[s as usize] = true;
                            newly += 1;
                        }
                    }
                }
                m.latch_losses();
                let rfc = m.rfc_is_lost();
                if (m.una..m.max).any(|o| {
                    !m.sacked[o as usize] && o < m.latch && o >= m.rto_end && !rfc[o as usize]
                }) {
                    cov.latched_beyond_rfc += 1;
                }
                if sb.segs.iter().any(|g| g.sacked > 0 && g.sacked < g.len) {
                    cov.partial_segments_sacked += 1;
                }
                if sb.segs.front().is_some_and(|g| !m.segs.iter().any(|&(a, _)| a == g.seq)) {
                    cov.mid_segment_acks += 1;
                }
                cov.recoveries_ended += up.recovery_ended as u32;
                lost = compare(sb, &m);
                let newly_lost = (una..m.max)
                    .filter(|&s| lost[s as usize] && !lost_before[s as usize])
                    .count() as u64;
                assert_eq!(up.newly_acked, una - old);
                assert_eq!(up.newly_sacked, newly);
                assert_eq!(up.delivered, una - old - sacked_acked + newly);
                assert_eq!(up.new_sack_info, newly > 0);
                assert_eq!(up.newly_lost, newly_lost);
                assert_eq!(up.recovery_ended, was_in_recovery && una >= sb.recovery_point());
                continue;
            } else if op < 85 {
                for _ in 0..3 {
                    let new_ok = m.segs.len() < CAP && rng.pct(50);
                    let x = sb.high_rxt().max(m.una);
                    let s = (x..m.max).find(|&o| !m.sacked[o as usize]);
                    let top = (m.una..m.max).rev().find(|&o| m.sacked[o as usize]).map(|o| o + 1);
                    let high_rxt = sb.high_rxt();
                    match sb.next_seg(new_ok) {
                        NextSeg::Retransmit { seq, len, rule } => {
                            match rule {
                                RetransmitRule::Lost => cov.rule1 += 1,
                                RetransmitRule::NotLost => cov.rule3 += 1,
                                RetransmitRule::Rescue => cov.rescue += 1,
                            }
                            match rule {
                                RetransmitRule::Lost => {
                                    let s = s.expect("rule (1) without an unSACKed octet");
                                    assert!(lost[s as usize]);
                                    is_segment_holding(&m, seq, len, s);
                                }
                                RetransmitRule::NotLost => {
                                    let s = s.expect("rule (3) without an unSACKed octet");
                                    assert!(!lost[s as usize] && !new_ok && sb.in_recovery());
                                    assert!(s < top.unwrap());
                                    is_segment_holding(&m, seq, len, s);
                                }
                                RetransmitRule::Rescue => {
                                    assert!(!new_ok && sb.in_recovery());
                                    assert!(s.is_none_or(
                                        |s| !lost[s as usize] && top.is_none_or(|t| s >= t)
                                    ));
                                    let h = (m.una..m.max)
                                        .rev()
                                        .find(|&o| !m.sacked[o as usize])
                                        .unwrap();
                                    is_segment_holding(&m, seq, len, h);
                                }
                            }
                            sb.on_send(seq, len, true);
                            m.mark_retx(seq, seq + len as u64);
                            m.transmit(rng, seq, seq + len as u64);
                            if rule == RetransmitRule::Rescue {
                                assert_eq!(sb.high_rxt(), high_rxt, "rescue moved HighRxt");
                            } else {
                                assert_eq!(sb.high_rxt(), high_rxt.max(seq + len as u64));
                            }
                        }
                        NextSeg::NewData => {
                            cov.rule2 += 1;
                            assert!(new_ok && s.is_none_or(|s| !lost[s as usize]));
                            let seq = m.max;
                            sb.on_send(seq, mss as u32, false);
                            m.segs.push((seq, seq + mss));
                            m.max += mss;
                            m.transmit(rng, seq, seq + mss);
                        }
                        NextSeg::Nothing => {
                            cov.nothing += 1;
                            assert!(!new_ok && s.is_none_or(|s| !lost[s as usize]));
                            if sb.in_recovery() {
                                assert!(s.is_none_or(|s| top.is_none_or(|t| s >= t)));
                            }
                            continue; // nothing changed
                        }
                    }
                    lost = compare(sb, &m);
                }
                continue;
            } else if op < 90 {
                if sb.may_enter_recovery() && !sb.is_empty() && rng.pct(50) {
                    let (seq, len) = sb.enter_recovery().unwrap();
                    assert_eq!(seq, m.una);
                    sb.on_send(seq, len, true);
                    m.mark_retx(seq, seq + len as u64);
                    m.transmit(rng, seq, seq + len as u64);
                }
            } else if op < 93 {
                sb.mark_all_lost_for_rto();
                cov.rto += 1;
                m.rto_end = m.max;
                m.retx.iter_mut().for_each(|r| *r = false);
                assert_eq!(sb.pipe(), 0);
            } else if op < 98 {
                // An arbitrary resend of an outstanding segment (e.g. a sender bug or an
                // extra probe): counted once, never breaks the counters.
                let out: Vec<_> = m.segs.iter().copied().filter(|&(_, e)| e > m.una).collect();
                if !out.is_empty() {
                    let (a, b) = out[rng.below(out.len() as u64) as usize];
                    sb.on_send(a, (b - a) as u32, true);
                    m.mark_retx(a, b);
                    m.transmit(rng, a, b);
                }
            } else {
                // Everything the receiver has is acked in one go.
                let nxt = m.rcv_nxt();
                sb.on_ack(nxt, &[]);
                m.una = m.una.max(nxt);
            }
            lost = compare(sb, &m);
        }
        sb.reset();
        assert!(sb.is_empty() && sb.pipe() == 0 && sb.highest_sacked().is_none());
    }

    #[test]
    fn randomized_against_per_octet_model() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut sb = Scoreboard::new(1, 3);
        let mut cov = Coverage::default();
        for case in 0..2000 {
            let mss = [1u64, 2, 3, 5, 8, 12][rng.below(6) as usize];
            let dupthresh = 1 + rng.below(4);
            // A fresh board for a new (mss, DupThresh); otherwise reuse the reset one.
            if case % 7 == 0 || sb.mss() as u64 != mss || sb.dupthresh() as u64 != dupthresh {
                sb = Scoreboard::new(mss as u32, dupthresh as u32);
            }
            if std::env::var_os("SB_TRACE").is_some() {
                eprintln!("case {case} mss {mss} dupthresh {dupthresh}");
            }
            random_case(&mut sb, &mut rng, mss, dupthresh, &mut cov);
        }
        // Every path must have run many times (the counts are deterministic).
        let c = &cov;
        for (name, n) in [
            ("rule (1)", c.rule1),
            ("rule (2)", c.rule2),
            ("rule (3)", c.rule3),
            ("rule (4)", c.rescue),
            ("nothing", c.nothing),
            ("RTO", c.rto),
            ("latched loss", c.latched_beyond_rfc),
            ("partially SACKed segment", c.partial_segments_sacked),
            ("ACK inside a segment", c.mid_segment_acks),
            ("recovery ended", c.recoveries_ended),
        ] {
            assert!(n >= 5, "{name} ran only {n} times: {cov:?}");
        }
        if std::env::var_os("SB_TRACE").is_some() {
            eprintln!("{cov:?}");
        }
    }
}
