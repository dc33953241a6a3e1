//! F-RTO as Linux runs it (`net.ipv4.tcp_frto`, default 2).
//!
//! Since Linux 3.10 any non-zero `tcp_frto` selects one algorithm: RFC 5682 §3's
//! SACK-enhanced F-RTO as `tcp_process_loss` (net/ipv4/tcp_input.c) implements it.
//! tcplab's other F-RTO (`frto_variant = "rfc5682"`, in `sender.rs`) is RFC 5682 §2's
//! basic algorithm with its conservative response; this module is the kernel's:
//!
//! - Armed by the timeout (`tcp_enter_loss`) only when the timeout starts a new
//!   recovery (the connection was Open, Disorder or CWR) or repeats one
//!   (`icsk_retransmits` > 0): a first timeout out of fast recovery does not arm it.
//! - An ACK that delivers never-retransmitted data, cumulatively or by SACK
//!   (`FLAG_ORIG_SACK_ACKED`), proves the timeout spurious (step 3b): the loss state
//!   is undone (`tcp_try_undo_loss(sk, true)`: cwnd and ssthresh back to at least
//!   their values before the timeout, loss marks cleared, state Open).
//! - Before new data has gone out: the first ACK that advances snd_una without
//!   ending the episode (step 2b) moves the episode's end (`high_seq`) to snd_nxt and
//!   sends new data instead of retransmissions (`REXMIT_NEW`), as far as cwnd (grown
//!   in slow start by that ACK) and the receive window allow; with no new data or no
//!   window it falls back to the conventional recovery (F-RTO off).
//! - After new data has gone out: an ACK that SACKs data or is a duplicate (step 3a)
//!   proves the loss real and turns F-RTO off; any other ACK leaves it armed.
//!
//! Every ACK that does not undo goes on to the conventional RTO recovery
//! (`REXMIT_LOST`), except the step 2b one. The caller keeps snd_una, snd_nxt and
//! the episode's end; this is the decision alone, so that a test can drive it
//! ACK by ACK.

use serde::{Deserialize, Serialize};

/// Which F-RTO the sender runs when `frto` is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrtoVariant {
    /// RFC 5682 §2, the basic algorithm, with the conservative response (§3).
    #[default]
    Rfc5682,
    /// Linux's SACK-enhanced F-RTO (`tcp_process_loss`, `tcp_frto` = 1 or 2).
    Linux,
}

/// What one ACK in the Loss state tells F-RTO (Linux's ACK flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossAck {
    /// snd_una moved (`FLAG_SND_UNA_ADVANCED`).
    pub una_advanced: bool,
    /// Never-retransmitted data was acked or SACKed (`FLAG_ORIG_SACK_ACKED`).
    pub orig_delivered: bool,
    /// The ACK SACKed new data (`FLAG_DATA_SACKED`).
    pub data_sacked: bool,
    /// A duplicate ACK (`num_dupack` > 0).
    pub dupack: bool,
    /// snd_una reached the episode's end (`!before(snd_una, high_seq)`).
    pub recovered: bool,
    /// Unsent data exists and the receive window admits some (`tcp_wnd_end` after
    /// snd_nxt).
    pub can_send_new: bool,
}

/// F-RTO's decision for one ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrtoStep {
    /// The timeout was spurious: undo it (step 3b).
    Undo,
    /// Move the episode's end to snd_nxt and send new data only (step 2b).
    SendNew,
    /// Conventional RTO recovery for this ACK.
    Conventional,
}

/// Linux F-RTO state of one sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxFrto {
    active: bool,
    /// Step 2b sent new data (Linux: snd_nxt is after high_seq).
    new_sent: bool,
}

impl LinuxFrto {
    /// A timeout fired (`tcp_enter_loss`): arm when enabled and the timeout starts a
    /// new recovery or repeats one.
    pub fn on_rto(&mut self, enabled: bool, new_recovery: bool, repeated: bool) {
        self.active = enabled && (new_recovery || repeated);
        self.new_sent = false;
    }

    pub fn is_active(&self) -> bool {
        self.active
    }

    pub fn clear(&mut self) {
        *self = LinuxFrto::default();
    }

    /// One ACK in the Loss state, after any timestamp-based undo (`tcp_process_loss`).
    pub fn on_loss_ack(&mut self, a: &LossAck) -> FrtoStep {
        if !self.active {
            return FrtoStep::Conventional;
        }
        if a.orig_delivered {
            self.clear();
            return FrtoStep::Undo;
        }
        if self.new_sent {
            if a.data_sacked || a.dupack {
                self.active = false; // step 3a: the loss was real
            }
        } else if a.una_advanced && !a.recovered {
            if a.can_send_new {
                self.new_sent = true;
                return FrtoStep::SendNew;
            }
            self.active = false;
        }
        FrtoStep::Conventional
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(f: impl FnOnce(&mut LossAck)) -> LossAck {
        let mut a = LossAck { can_send_new: true, ..Default::default() };
        f(&mut a);
        a
    }

    /// `tcp_enter_loss`: `tp->frto = sysctl_tcp_frto && (new_recovery ||
    /// icsk_retransmits)`. A first timeout out of fast recovery leaves it off.
    #[test]
    fn armed_only_for_new_or_repeated_timeouts() {
        let mut f = LinuxFrto::default();
        f.on_rto(true, true, false);
        assert!(f.is_active());
        f.on_rto(true, false, false);
        assert!(!f.is_active());
        f.on_rto(true, false, true);
        assert!(f.is_active());
        f.on_rto(false, true, true);
        assert!(!f.is_active());
    }

    /// The spurious case (`tcp_process_loss`, step 2b then 3b): the retransmission's
    /// ACK advances snd_una short of high_seq, so new data goes out; the next ACK
    /// delivers never-retransmitted data and the timeout is undone.
    #[test]
    fn spurious_timeout_is_undone_after_new_data() {
        let mut f = LinuxFrto::default();
        f.on_rto(true, true, false);
        assert_eq!(f.on_loss_ack(&ack(|a| a.una_advanced = true)), FrtoStep::SendNew);
        assert!(f.is_active());
        assert_eq!(f.on_loss_ack(&ack(|a| { a.una_advanced = true; a.orig_delivered = true })), FrtoStep::Undo);
        assert!(!f.is_active());
    }

    /// Step 3a: after new data went out, a duplicate ACK or a SACK means the loss was
    /// real; F-RTO turns off and recovery is conventional from then on.
    #[test]
    fn dupack_after_new_data_means_real_loss() {
        for dup in [true, false] {
            let mut f = LinuxFrto::default();
            f.on_rto(true, true, false);
            f.on_loss_ack(&ack(|a| a.una_advanced = true));
            let step = f.on_loss_ack(&ack(|a| if dup { a.dupack = true } else { a.data_sacked = true }));
            assert_eq!(step, FrtoStep::Conventional);
            assert!(!f.is_active());
            // Even an ACK of original data no longer undoes (Linux tests tp->frto).
            assert_eq!(f.on_loss_ack(&ack(|a| a.orig_delivered = true)), FrtoStep::Conventional);
        }
    }

    /// Step 2b's fallback: nothing new to send (or no window), or the ACK already
    /// ends the episode: conventional recovery. A duplicate ACK before new data went
    /// out changes nothing (Linux only checks 3a once snd_nxt is past high_seq).
    #[test]
    fn fallbacks_of_step_2b() {
        let mut f = LinuxFrto::default();
        f.on_rto(true, true, false);
        assert_eq!(f.on_loss_ack(&ack(|a| a.dupack = true)), FrtoStep::Conventional);
        assert!(f.is_active());
        assert_eq!(f.on_loss_ack(&ack(|a| { a.una_advanced = true; a.can_send_new = false })), FrtoStep::Conventional);
        assert!(!f.is_active());
        let mut f = LinuxFrto::default();
        f.on_rto(true, true, false);
        assert_eq!(f.on_loss_ack(&ack(|a| { a.una_advanced = true; a.recovered = true })), FrtoStep::Conventional);
        assert!(f.is_active());
        // A SACK of original data right after the timeout undoes at once (3b).
        assert_eq!(f.on_loss_ack(&ack(|a| { a.data_sacked = true; a.orig_delivered = true })), FrtoStep::Undo);
    }
}
