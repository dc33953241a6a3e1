//! RACK, time-based loss detection (RFC 8985 §6; Linux `net/ipv4/tcp_recovery.c`).
//!
//! A segment is lost when a segment sent after it has been delivered and it has not
//! been, RACK.rtt + RACK.reo_wnd after it was sent. On every ACK (RFC 8985 §6.2):
//!
//! 1. RACK.min_RTT is the sender's minimum RTT.
//! 2. Among the segments this ACK newly delivered (cumulatively acked or SACKed),
//!    the most recently sent one becomes the RACK segment if it was sent after the
//!    current one: RACK.xmit_ts, RACK.end_seq, and RACK.rtt = now - its transmission
//!    time. A retransmitted segment whose RTT would be below min_RTT is skipped: its
//!    ACK is likely for an earlier transmission (Linux `tcp_rack_advance`).
//! 3. Reordering is seen when a never-retransmitted segment is delivered below the
//!    highest sequence delivered before (the scoreboard reports it).
//! 4. The reordering window (`RACK_update_reo_wnd`): 0 while no reordering has been
//!    seen and the sender is in recovery, or at least DupThresh segments are SACKed
//!    (the duplicate-ACK threshold kept as a fallback); otherwise
//!    `min(reo_wnd_mult * min_RTT / 4, SRTT)`. A D-SACK (RFC 2883) widens it: once per
//!    round trip (`dsack_round`, until snd_una passes the snd_nxt of the D-SACK)
//!    `reo_wnd_mult += 1`, kept for 16 recoveries (`reo_wnd_persist`), after which it
//!    returns to 1.
//! 5. Losses are marked by the scoreboard's scan in transmission order
//!    (`Scoreboard::rack_detect_losses`, RFC 8985 `RACK_detect_loss`), which also
//!    returns the time until the last candidate not yet due.
//! 6. The caller arms the reordering timer for that time; when it fires the scan runs
//!    again (§6.3, Linux `tcp_rack_reo_timeout`).
//!
//! Choices and deviations:
//! - A D-SACK sets `reordering_seen`. RFC 8985 widens the window on D-SACKs but
//!   applies the window only once reordering has been seen, and in the common case of
//!   a spurious fast retransmit the late original is itself a retransmitted segment,
//!   which step 3 does not count; the D-SACK is the evidence. (Linux reaches
//!   `reord_seen` for D-SACKs of SACKed retransmissions in `tcp_sacktag_one`, and
//!   through the partial-ACK undo, not for a D-SACK below snd_una.)
//! - Among retransmitted delivered segments only the most recently sent is
//!   considered for step 2 (an older one could pass the min_RTT test when the newest
//!   does not; Linux examines each).
//! - The duplicate-ACK fallback counts SACKed octets: more than (DupThresh - 1) SMSS,
//!   RFC 6675's byte rule (Linux: `sacked_out >= reordering` packets).

use super::scoreboard::{AckUpdate, Scoreboard};
use crate::time::{SimDuration, SimTime};

/// Recoveries without D-SACK after which the widened window resets (RFC 8985 §6.2).
const REO_WND_PERSIST: i32 = 16;

/// The RACK state of one sender.
#[derive(Clone, Debug)]
pub struct Rack {
    /// The most recently sent delivered segment: transmission time and end.
    xmit_ts: Option<SimTime>,
    end_seq: u64,
    /// RTT of that segment's delivery.
    rtt: SimDuration,
    reordering_seen: bool,
    reo_wnd_mult: u32,
    reo_wnd_persist: i32,
    /// While D-SACKs of this round are seen: the snd_nxt when the first came.
    dsack_round: Option<u64>,
}

impl Default for Rack {
    fn default() -> Self {
        Rack { xmit_ts: None, end_seq: 0, rtt: SimDuration::ZERO, reordering_seen: false, reo_wnd_mult: 1, reo_wnd_persist: 0, dsack_round: None }
    }
}

impl Rack {
    /// RACK.rtt (0 before the first delivery).
    pub fn rtt(&self) -> SimDuration {
        self.rtt
    }
    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }
    pub fn reo_wnd_mult(&self) -> u32 {
        self.reo_wnd_mult
    }

    /// Steps 2-3 for one ACK's scoreboard update.
    pub fn on_ack(&mut self, up: &AckUpdate, now: SimTime, min_rtt: Option<SimDuration>) {
        let mut best = up.newest_clean;
        if let Some((t, e)) = up.newest_retransmitted {
            // Ambiguous unless the RTT it implies is at least min_RTT.
            if min_rtt.is_some_and(|m| now.since(t) >= m) && best.is_none_or(|b| (t, e) > b) {
                best = Some((t, e));
            }
        }
        if let Some((t, e)) = best {
            self.rtt = now.since(t);
            if self.xmit_ts.is_none_or(|x| (t, e) > (x, self.end_seq)) {
                self.xmit_ts = Some(t);
                self.end_seq = e;
            }
        }
        self.reordering_seen |= up.reordering;
    }

    /// Step 4's D-SACK adaptation, for an ACK that moved snd_una to `snd_una` and
    /// carried a D-SACK or not; `snd_nxt` is the highest sequence sent. A D-SACK also
    /// counts as reordering seen: it says a retransmission was needless, the original
    /// having arrived late (see the module notes).
    pub fn on_dsack(&mut self, dsack: bool, snd_una: u64, snd_nxt: u64) {
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
        self.reordering_seen |= dsack;
        if dsack && self.dsack_round.is_none() {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult = self.reo_wnd_mult.saturating_add(1);
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
    }

    /// The sender left fast recovery or RTO recovery (step 4's persistence count).
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist -= 1;
        if self.reo_wnd_persist <= 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// RACK.reo_wnd (step 4). `dupthresh_sacked`: at least DupThresh segments are
    /// SACKed.
    pub fn reo_wnd(&self, in_recovery: bool, dupthresh_sacked: bool, min_rtt: Option<SimDuration>, srtt: Option<SimDuration>) -> SimDuration {
        if !self.reordering_seen && (in_recovery || dupthresh_sacked) {
            return SimDuration::ZERO;
        }
        let quarter = min_rtt.map_or(0, |m| m.0 / 4);
        let w = SimDuration(quarter.saturating_mul(self.reo_wnd_mult as u64));
        match srtt {
            Some(s) => w.min(s),
            None => w,
        }
    }

    /// Step 5: marks the losses; returns the octets newly deemed lost and the time
    /// until the reordering timer should fire, if any.
    pub fn detect_losses(&self, sb: &mut Scoreboard, now: SimTime, reo_wnd: SimDuration) -> (u64, Option<SimDuration>) {
        match self.xmit_ts {
            Some(t) => sb.rack_detect_losses(t, self.end_seq, now, self.rtt + reo_wnd),
            None => (0, None),
        }
    }
}

/// Whether an ACK's first SACK block reports a duplicate (D-SACK, RFC 2883 §4): it
/// lies below the cumulative ACK, or inside the second block (Linux `tcp_check_dsack`).
pub fn has_dsack(blocks: &[crate::net::packet::SackBlock], cum_ack: u64) -> bool {
    match blocks {
        [first, rest @ ..] => first.start < cum_ack || rest.first().is_some_and(|b| first.start >= b.start && first.end <= b.end),
        [] => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::SackBlock;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    #[test]
    fn reo_wnd_is_zero_until_reordering_then_a_quarter_min_rtt_widened_by_dsack() {
        let mut r = Rack::default();
        let (min, srtt) = (Some(ms(40)), Some(ms(50)));
        // No reordering seen: 0 in recovery or with DupThresh SACKed, else min_RTT/4.
        assert_eq!(r.reo_wnd(true, false, min, srtt), SimDuration::ZERO);
        assert_eq!(r.reo_wnd(false, true, min, srtt), SimDuration::ZERO);
        assert_eq!(r.reo_wnd(false, false, min, srtt), ms(10));
        r.reordering_seen = true;
        assert_eq!(r.reo_wnd(true, true, min, srtt), ms(10));
        // A D-SACK at snd_nxt 5000: mult 2 -> 20 ms; more D-SACKs before snd_una
        // reaches 5000 do not widen it again; after, one does (mult 3 -> 30 ms). The
        // window is capped at SRTT (50 ms): mult 6 gives 60 -> 50 ms.
        r.on_dsack(true, 1000, 5000);
        assert_eq!(r.reo_wnd(false, false, min, srtt), ms(20));
        r.on_dsack(true, 3000, 6000);
        assert_eq!(r.reo_wnd_mult(), 2);
        r.on_dsack(true, 5000, 9000);
        assert_eq!(r.reo_wnd_mult(), 3);
        r.reo_wnd_mult = 6;
        assert_eq!(r.reo_wnd(false, false, min, srtt), ms(50));
        // 16 recoveries without D-SACK reset it.
        for _ in 0..16 {
            r.on_recovery_exit();
        }
        assert_eq!(r.reo_wnd_mult(), 1);
    }

    #[test]
    fn rack_segment_is_the_newest_unambiguous_delivery() {
        let mut r = Rack::default();
        let t = |x: u64| SimTime(x * 1_000_000);
        // A clean segment sent at 10 ms delivered at 60 ms: RACK.rtt 50 ms.
        let up = AckUpdate { newest_clean: Some((t(10), 2000)), ..Default::default() };
        r.on_ack(&up, t(60), Some(ms(40)));
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt), (Some(t(10)), 2000, ms(50)));
        // A retransmission sent at 70 ms SACKed at 80 ms: 10 ms < min_RTT 40 ms, so
        // its ACK is probably for the original: ignored.
        let up = AckUpdate { newest_retransmitted: Some((t(70), 1000)), ..Default::default() };
        r.on_ack(&up, t(80), Some(ms(40)));
        assert_eq!((r.xmit_ts, r.rtt), (Some(t(10)), ms(50)));
        // The same at 120 ms (50 ms >= 40): taken.
        r.on_ack(&up, t(120), Some(ms(40)));
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt), (Some(t(70)), 1000, ms(50)));
        // An older clean segment updates RACK.rtt but not the RACK segment.
        let up = AckUpdate { newest_clean: Some((t(20), 3000)), reordering: true, ..Default::default() };
        r.on_ack(&up, t(130), Some(ms(40)));
        assert_eq!((r.xmit_ts, r.rtt), (Some(t(70)), ms(110)));
        assert!(r.reordering_seen());
    }

    #[test]
    fn dsack_detection() {
        let b = |s, e| SackBlock { start: s, end: e };
        assert!(has_dsack(&[b(100, 200)], 300));
        assert!(has_dsack(&[b(500, 600), b(400, 700)], 300));
        assert!(!has_dsack(&[b(500, 600), b(800, 900)], 300));
        assert!(!has_dsack(&[], 300));
    }
}
