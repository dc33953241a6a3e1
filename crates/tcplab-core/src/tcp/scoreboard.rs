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
//!                        NextSeg::Retransmit { seq, len, .. } => { send; sb.on_send(seq, len, true) }
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
//! 2. RFC 3517 used "(DupThresh * SMSS) bytes"; RFC 6675 "more than (DupThresh - 1) *
//!    SMSS bytes". We follow RFC 6675 for both seeds; the two agree whenever SACKed
//!    segments are full-sized, and differ only for runs of sub-MSS segments.
//! 3. The RFC's variables name octets (HighACK = the highest octet acknowledged,
//!    HighRxt = the highest octet retransmitted); this board stores exclusive ends:
//!    `snd_una`, `snd_max`, `high_rxt` (one past the last octet retransmitted),
//!    `highest_sacked()` (one past the highest SACKed octet), `recovery_point()` (snd_max
//!    at entry). Hence rule (1.a) "S2 > HighRxt" is `s2 >= high_rxt`, (1.b) is
//!    `s2 < highest_sacked`, (A) is `snd_una >= recovery_point`, and rule (4)'s "HighACK
//!    > RescueRxt" is `snd_una >= rescue_rxt`: the ACK for the fast retransmission
//!    itself (snd_una reaching the end of that segment) permits the rescue; a literal
//!    octet reading would need one more octet acknowledged, which a partial ACK that
//!    stops at the next hole never provides.
//! 4. IsLost(S) can only become true for lower S (both counts above S only grow as S
//!    falls) and only more true over time (SACK information only grows), so the lost
//!    octets are always the unSACKed octets of a prefix [snd_una, lost_end). The board
//!    keeps `lost_end` instead of per-segment lost flags; `is_lost(s)` is "s unSACKed and
//!    below lost_end". For a SACKed or out-of-window `s` it is false.
//! 5. SetPipe() step (b) adds an octet "if S1 <= HighRxt"; the board adds it if S1's
//!    segment has been retransmitted (since it was sent, or since the last RTO). Within
//!    one recovery the two agree (retransmissions run in sequence order above HighRxt),
//!    except for the rescue retransmission, which RFC 6675 does not let move HighRxt and
//!    so never counts in pipe; we count it, like Linux's `retrans_out`, which is the
//!    conservative choice. The flag also makes pipe right outside recovery (go-back-N
//!    after an RTO), where HighRxt is not defined.
//! 6. Retransmissions reuse the original segment boundaries (tcplab never resegments):
//!    NextSeg returns the whole segment containing the chosen octet, SACKed octets of a
//!    partially SACKed segment included. Pipe counts only its unSACKed octets. The one
//!    exception is the segment at snd_una after a cumulative ACK that ended inside it,
//!    which is trimmed to start at snd_una.
//! 7. RTO (§5.1): RFC 2018 §8 says the sender SHOULD turn off its SACKed bits after an
//!    RTO because the receiver may have reneged, and RFC 6675 §5.1 leaves that in place
//!    while noting that keeping SACK information is reasonable given reneging detection.
//!    Like Linux (which discards it only when it suspects reneging), the board keeps the
//!    SACK information, marks every unSACKed octet lost, clears the retransmitted flags
//!    (pipe drops to 0, and go-back-N retransmissions count once each), sets HighRxt =
//!    snd_una and RecoveryPoint = snd_max, and leaves recovery. NextSeg rule (1) then
//!    returns the unSACKed segments in order: the "fill in the holes" selection §5.1
//!    suggests after an RTO. The segment at snd_una is never SACKed (its SACK would have
//!    moved the cumulative ACK unless the receiver reneged), so RFC 2018's "MUST
//!    retransmit the left edge" holds. Reneging itself is not detected.
//! 8. Rules (3) and (4) apply only inside a recovery (they exist to keep its ACK clock
//!    going); rule (1) also applies outside, for the post-RTO go-back-N. Limited
//!    Transmit ((3) of §5) sends new data directly and needs no NextSeg.
//! 9. The board tracks payload octets only: a cumulative ACK beyond snd_max (a FIN's
//!    sequence number) is clamped to snd_max, and zero-length sends are ignored. The
//!    first send on an empty board starts it at that sequence number.
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
        }
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
    }

    // ----- queries -----

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
        seq >= self.una && seq < self.lost_end && !self.is_sacked(seq)
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
            debug_assert!(is_retransmission, "on_send: [{seq}, {end}) resends data but is not flagged as a retransmission");
            self.mark_retransmitted(lo, hi);
            if self.pending_rescue == Some(seq) {
                self.pending_rescue = None;
            } else {
                self.high_rxt = self.high_rxt.max(hi);
            }
        }
        if end > self.max {
            assert!(seq <= self.max, "on_send: new data at {seq} leaves a gap after snd_max {}", self.max);
            debug_assert!(!is_retransmission || seq < self.max, "on_send: [{seq}, {end}) is new data flagged as a retransmission");
            let start = seq.max(self.max);
            self.segs.push_back(Seg { seq: start, len: (end - start) as u32, sacked: 0, retx: false });
            self.max = end;
        }
    }

    /// Process an ACK: the cumulative ACK `cum_ack` (clamped to snd_max; an old one
    /// changes nothing) and then the SACK blocks, then mark losses (RFC 6675 Update()
    /// followed by the IsLost() pass). Ends the recovery if the cumulative ACK reaches
    /// RecoveryPoint.
    pub fn on_ack(&mut self, cum_ack: u64, blocks: &[SackBlock]) -> AckUpdate {
        let mut up = AckUpdate::default();
        let cum = cum_ack.min(self.max);
        if cum > self.una {
            up.newly_acked = cum - self.una;
            up.delivered = up.newly_acked - self.advance_una(cum);
        }
        for b in blocks {
            let (a, e) = (b.start.max(self.una), b.end.min(self.max));
            if a < e {
                up.newly_sacked += self.add_sack(a, e);
            }
        }
        if up.newly_sacked > 0 {
            up.delivered += up.newly_sacked;
            up.new_sack_info = true;
            up.newly_lost = self.mark_losses();
        }
        if self.in_recovery && self.una >= self.recovery_point {
            self.exit_recovery();
            up.recovery_ended = true;
        }
        up
    }

    /// RFC 6675 §5 step (4): enter loss recovery. RecoveryPoint = HighData (4.1);
    /// returns the segment at HighACK + 1 that (4.3) retransmits, and sets RescueRxt
    /// to its end (HighRxt follows when the caller reports the retransmission with
    /// `on_send(seq, len, true)`). `None` if nothing is outstanding.
    pub fn enter_recovery(&mut self) -> Option<(u64, u32)> {
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

    // ----- internals -----

    /// Move snd_una up to `cum` (una < cum <= max). Returns the octets of [una, cum)
    /// that had been SACKed.
    fn advance_una(&mut self, cum: u64) -> u64 {
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
                self.segs.pop_front();
            } else {
                if f.seq < cum {
                    // The ACK ends inside this segment: trim it.
                    let cut = (cum - f.seq) as u32;
                    let cut_sacked = self.sacked_in(f.seq, cum) as u32;
                    if f.retx {
                        self.retx_bytes -= (cut - cut_sacked) as u64;
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
        sacked_below
    }

    /// SACK [a, b) (una <= a < b <= max); returns the octets not SACKed before.
    fn add_sack(&mut self, a: u64, b: u64) -> u64 {
        // Runs overlapping or touching [a, b) are runs[i..j]; they merge with it.
        let i = self.runs.partition_point(|r| r.end < a);
        let mut j = i;
        let mut cursor = a;
        let mut newly = 0;
        let (mut lo, mut hi) = (a, b);
        while j < self.runs.len() && self.runs[j].start <= b {
            let r = self.runs[j];
            if r.start > cursor {
                newly += self.mark_sacked(cursor, r.start);
            }
            cursor = cursor.max(r.end);
            lo = lo.min(r.start);
            hi = hi.max(r.end);
            j += 1;
        }
        if cursor < b {
            newly += self.mark_sacked(cursor, b);
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
    fn mark_sacked(&mut self, a: u64, b: u64) -> u64 {
        self.sacked_bytes += b - a;
        let lost_hi = b.min(self.lost_end);
        if lost_hi > a {
            self.lost_bytes -= lost_hi - a;
        }
        let mut k = self.segs.partition_point(|s| s.end() <= a);
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
            k += 1;
        }
        b - a
    }

    /// Mark the segments overlapping [a, b) retransmitted.
    fn mark_retransmitted(&mut self, a: u64, b: u64) {
        let mut k = self.segs.partition_point(|s| s.end() <= a);
        while k < self.segs.len() {
            let s = &mut self.segs[k];
            if s.seq >= b {
                break;
            }
            if !s.retx {
                s.retx = true;
                self.retx_bytes += s.unsacked();
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
        let k = self.segs.partition_point(|g| g.end() <= s);
        let g = self.segs[k];
        (g.seq, g.len)
    }
}
