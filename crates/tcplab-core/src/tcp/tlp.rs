//! Tail Loss Probe (RFC 8985 §7; Linux `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`).
//!
//! When the last segments of a flight are lost no ACK comes back to trigger RACK, and
//! only the RTO would recover them. TLP sends a probe a little after the ACKs should
//! have come: the probe's ACK (with SACK) lets RACK see the loss and start fast
//! recovery.
//!
//! - Scheduling (§7.2): in the Open or CWR state, with data outstanding, SACK on and
//!   no reordering timer pending, the probe timeout after sending new data or after an
//!   ACK that acknowledges new data is `PTO = 2 SRTT`, plus the worst-case delayed-ACK
//!   time (`max_ack_delay`, 200 ms, Linux `TCP_RTO_MIN`) when one segment is in
//!   flight, else plus 2 ms (Linux `TCP_TIMEOUT_MIN`, two jiffies at HZ = 1000); 1 s
//!   without an RTT sample; never later than the RTO would fire.
//! - The probe (§7.3): one new segment if the application and the receive window
//!   allow (cwnd does not count), else a retransmission of the highest segment sent.
//!   At most one probe is outstanding (`tlp_high_seq` = snd_nxt at the probe); then
//!   the RTO is re-armed from now.
//! - Its ACK (§7.4): once the cumulative ACK reaches `tlp_high_seq` the episode ends.
//!   If the probe was new data, or a D-SACK says the original arrived too, or a
//!   duplicate ACK shows both arrived, nothing was lost. If the cumulative ACK passes
//!   `tlp_high_seq` without such evidence the probe repaired a loss, and the sender
//!   reduces its window once (Linux: enter CWR and end it at once, cwnd = ssthresh).

use crate::time::SimDuration;

/// Linux `TCP_RTO_MIN`: the worst-case delayed-ACK time TLP waits for a lone segment.
pub const MAX_ACK_DELAY: SimDuration = SimDuration(200_000_000);
/// Linux `TCP_TIMEOUT_MIN`, two jiffies at HZ = 1000.
pub const TIMEOUT_MIN: SimDuration = SimDuration(2_000_000);
/// Linux `TCP_TIMEOUT_INIT`: the PTO before any RTT sample.
pub const PTO_NO_RTT: SimDuration = SimDuration(1_000_000_000);

/// The PTO (§7.2): `srtt` the smoothed RTT (if any), `one_segment` whether a single
/// segment is in flight, `rto_left` the time until the RTO would fire.
pub fn pto(srtt: Option<SimDuration>, one_segment: bool, rto_left: SimDuration) -> SimDuration {
    let t = match srtt {
        Some(s) => SimDuration(2 * s.0) + if one_segment { MAX_ACK_DELAY } else { TIMEOUT_MIN },
        None => PTO_NO_RTT,
    };
    t.min(rto_left)
}

/// What a probe's ACK means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The episode is not over yet (or none is open).
    Pending,
    /// Nothing was lost.
    NoLoss,
    /// The probe repaired a loss: reduce the window once.
    LossRepaired,
}

/// The tail-loss-probe episode of one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tlp {
    /// snd_nxt when the outstanding probe was sent (Linux `tlp_high_seq`).
    high_seq: Option<u64>,
    /// The outstanding probe was a retransmission.
    retransmitted: bool,
}

impl Tlp {
    /// A probe is outstanding.
    pub fn outstanding(&self) -> bool {
        self.high_seq.is_some()
    }
    /// A probe went out; `snd_nxt` after it.
    pub fn on_probe(&mut self, snd_nxt: u64, retransmitted: bool) {
        self.high_seq = Some(snd_nxt);
        self.retransmitted = retransmitted;
    }
    /// Forget the episode (a window reduction or an RTO started).
    pub fn clear(&mut self) {
        self.high_seq = None;
    }
    /// §7.4 / Linux `tcp_process_tlp_ack` for an ACK: cumulative `ack`, whether it
    /// carried a D-SACK, moved snd_una, or brought new SACK information.
    pub fn on_ack(&mut self, ack: u64, dsack: bool, una_advanced: bool, new_sack: bool) -> ProbeOutcome {
        let Some(high) = self.high_seq else { return ProbeOutcome::Pending };
        if ack < high {
            return ProbeOutcome::Pending;
        }
        let outcome = if !self.retransmitted || dsack {
            ProbeOutcome::NoLoss
        } else if ack > high {
            ProbeOutcome::LossRepaired
        } else if !una_advanced && !new_sack {
            // A pure duplicate ACK: both the original and the probe arrived.
            ProbeOutcome::NoLoss
        } else {
            return ProbeOutcome::Pending;
        };
        self.high_seq = None;
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pto_by_hand() {
        let ms = SimDuration::from_millis;
        // SRTT 50 ms, several segments: 2 * 50 + 2 = 102 ms; one segment: 100 + 200.
        assert_eq!(pto(Some(ms(50)), false, ms(1000)), ms(102));
        assert_eq!(pto(Some(ms(50)), true, ms(1000)), ms(300));
        // Never after the RTO, and 1 s without an RTT sample.
        assert_eq!(pto(Some(ms(50)), true, ms(250)), ms(250));
        assert_eq!(pto(None, false, ms(3000)), ms(1000));
    }

    #[test]
    fn probe_outcomes() {
        let mut t = Tlp::default();
        assert_eq!(t.on_ack(100, false, true, false), ProbeOutcome::Pending);
        // A retransmitted probe at snd_nxt 1000: the ACK of 1000 advancing snd_una is
        // not yet conclusive; an ACK beyond it (new data sent since) is: loss repaired.
        t.on_probe(1000, true);
        assert_eq!(t.on_ack(900, false, true, false), ProbeOutcome::Pending);
        assert_eq!(t.on_ack(1000, false, true, false), ProbeOutcome::Pending);
        assert_eq!(t.on_ack(1500, false, true, false), ProbeOutcome::LossRepaired);
        assert!(!t.outstanding());
        // With a D-SACK the original had arrived: no loss.
        t.on_probe(1000, true);
        assert_eq!(t.on_ack(1000, true, false, false), ProbeOutcome::NoLoss);
        // A new-data probe ends the episode when acked.
        t.on_probe(2000, false);
        assert_eq!(t.on_ack(2000, false, true, false), ProbeOutcome::NoLoss);
    }
}
