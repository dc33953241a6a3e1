//! Proportional Rate Reduction (PRR; RFC 6937, and Linux `tcp_cwnd_reduction`, which
//! follows its revision RFC 9937): how much to send on each ACK while the window is
//! being reduced, in fast recovery and in ECN's CWR state.
//!
//! At the start of a reduction (RFC 6937 §3):
//!
//! ```text
//! ssthresh = CongCtrlAlg()       prr_delivered = 0       prr_out = 0
//! RecoverFS = snd.nxt - snd.una  (Linux: the cwnd before the reduction)
//! ```
//!
//! On every ACK, with DeliveredData the bytes it newly acked or SACKed:
//!
//! ```text
//! prr_delivered += DeliveredData
//! if pipe > ssthresh:   sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
//! else (reduction bound):
//!     crb:   limit = prr_delivered - prr_out                               (RFC 6937)
//!     ssrb:  limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS      (RFC 6937)
//!     linux: limit = MAX(prr_delivered - prr_out, DeliveredData)
//!                    + MSS if the ACK advanced snd.una and reported no new loss
//!     sndcnt = MIN(ssthresh - pipe, limit)
//! sndcnt = MAX(sndcnt, MSS if prr_out == 0)   // Linux: force the fast retransmit
//! cwnd = pipe + sndcnt
//! ```
//!
//! and every transmission adds its bytes to `prr_out`. PRR spreads the window
//! reduction over the round trip (one segment per two ACKs for a halving), where RFC
//! 6675 alone sends nothing for the first half of it; the reduction bound keeps a
//! burst of losses from collapsing the window (PRR-SSRB re-opens it by one segment
//! per ACK, like slow start).
//!
//! Linux's variant (`mode = linux`) adds the extra segment only on an ACK that
//! advances snd.una without revealing a new loss ("SafeACK" of RFC 9937), and takes
//! RecoverFS from the cwnd at the start (`prior_cwnd`); the RFC 6937 modes take the
//! FlightSize. Bytes throughout (Linux counts packets), with the proportional
//! target's ceiling taken in whole segments, so that full-sized segments give the
//! segment arithmetic of RFC 6937 §3.1 and Linux.

use serde::{Deserialize, Serialize};

/// Which PRR, if any, reduces the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrrMode {
    /// No PRR: cwnd = ssthresh at once (RFC 6675 §5; RFC 3168 for ECN).
    #[default]
    Off,
    /// RFC 6937 with the conservative reduction bound (PRR-CRB).
    Crb,
    /// RFC 6937 with the slow-start reduction bound (PRR-SSRB).
    Ssrb,
    /// Linux `tcp_cwnd_reduction` (RFC 9937): SSRB's extra segment only on an ACK
    /// that advances snd.una and shows no new loss; RecoverFS = cwnd at the start.
    Linux,
}

/// The state of one reduction.
#[derive(Clone, Copy, Debug)]
pub struct Prr {
    mode: PrrMode,
    ssthresh: u64,
    recover_fs: u64,
    delivered: u64,
    out: u64,
}

/// What an ACK tells PRR.
#[derive(Clone, Copy, Debug)]
pub struct PrrAck {
    /// Bytes newly acked or SACKed (DeliveredData).
    pub delivered: u64,
    /// RFC 6675 pipe after the ACK was processed, bytes.
    pub pipe: u64,
    /// The ACK moved snd.una.
    pub una_advanced: bool,
    /// The ACK made the sender deem more data lost.
    pub newly_lost: bool,
}

impl Prr {
    /// Starts a reduction to `ssthresh`. `flight` is snd.nxt - snd.una and `cwnd` the
    /// window just before the reduction (RecoverFS per mode).
    pub fn start(mode: PrrMode, ssthresh: u64, flight: u64, cwnd: u64) -> Option<Prr> {
        let recover_fs = match mode {
            PrrMode::Off => return None,
            PrrMode::Linux => cwnd,
            PrrMode::Crb | PrrMode::Ssrb => flight,
        };
        Some(Prr { mode, ssthresh, recover_fs: recover_fs.max(1), delivered: 0, out: 0 })
    }

    /// Counts `bytes` sent (new data or retransmission) during the reduction.
    pub fn on_send(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// The cwnd for this ACK (`pipe + sndcnt`), or `None` when the ACK delivered
    /// nothing (Linux leaves cwnd alone then).
    pub fn on_ack(&mut self, ack: &PrrAck, mss: u64) -> Option<u64> {
        if ack.delivered == 0 {
            return None;
        }
        self.delivered += ack.delivered;
        let sndcnt = if ack.pipe > self.ssthresh {
            // CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out, the ceiling taken
            // in whole segments (RFC 6937's examples and Linux count segments; a
            // byte ceiling would hold a partial segment back for one more ACK).
            let target = (self.delivered as u128 * self.ssthresh as u128).div_ceil(self.recover_fs as u128) as u64;
            target.div_ceil(mss).saturating_mul(mss).saturating_sub(self.out)
        } else {
            let banked = self.delivered.saturating_sub(self.out);
            let limit = match self.mode {
                PrrMode::Crb => banked,
                PrrMode::Ssrb => banked.max(ack.delivered) + mss,
                PrrMode::Linux => {
                    let safe_ack = ack.una_advanced && !ack.newly_lost;
                    banked.max(ack.delivered) + if safe_ack { mss } else { 0 }
                }
                PrrMode::Off => unreachable!("no PRR state when off"),
            };
            (self.ssthresh - ack.pipe).min(limit)
        };
        let sndcnt = if self.out == 0 { sndcnt.max(mss) } else { sndcnt };
        Some(ack.pipe + sndcnt)
    }

    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Drives PRR through the first round trip after a loss, RFC 6937 §3.1's setting:
    /// cwnd = FlightSize = 20 segments, ssthresh 10, and the ACKs of segments 1..19
    /// each SACK one segment. `lost` segments at the front are lost (their ACKs never
    /// come); recovery starts on the third duplicate ACK, after Limited Transmit sent
    /// one new segment on each of the first two. Returns the segments sent on each ACK
    /// from the third duplicate on.
    fn first_round(mode: PrrMode, lost: u64) -> Vec<u64> {
        // RFC 6675 pipe: the 20 original segments plus the 2 Limited Transmit ones,
        // minus SACKed ones, minus the `lost` ones once deemed lost (at recovery),
        // plus retransmissions.
        let mut pipe = 22 - 3 - lost;
        let mut prr = Prr::start(mode, 10 * MSS, 20 * MSS, 20 * MSS).unwrap();
        let mut sent = Vec::new();
        for k in (lost + 2)..20 {
            if k > lost + 2 {
                pipe -= 1; // this ACK SACKs one more segment
            }
            let cwnd = prr
                .on_ack(&PrrAck { delivered: MSS, pipe: pipe * MSS, una_advanced: false, newly_lost: k == lost + 2 }, MSS)
                .unwrap();
            let n = (cwnd - pipe * MSS) / MSS;
            prr.on_send(n * MSS);
            pipe += n;
            sent.push(n);
        }
        sent
    }

    #[test]
    fn rfc6937_single_loss_sends_on_every_other_ack_down_to_ssthresh() {
        // Segment 0 lost. Recovery starts at the ACK of segment 3 (the 3rd dupack):
        // prr_delivered = 1, pipe 18 > 10: CEIL(1 * 10 / 20) - 0 = 1 -> the fast
        // retransmit. Then on the ACK of segment k: prr_delivered = k - 2, and
        // sndcnt = CEIL((k - 2) / 2) - prr_out = 1 on odd k, 0 on even k, while
        // pipe > ssthresh: 18 -> 18 -> 17 -> 17 ... -> the ACK of 17 sends the 8th
        // segment; the ACK of 18 finds pipe 11 and prr_out = CEIL(16/2) = 8: 0; the
        // ACK of 19 finds pipe 10 = ssthresh: MIN(10 - 10, limit) = 0. The window
        // ends the round at exactly ssthresh (RFC 6937 §4: PRR converges to the
        // target window), having sent one segment per two ACKs.
        //
        // RFC 6937 §3.1's figure shows sends at the ACKs of 3, 5, ..., 15, 18 and 19
        // (9 instead of 8, its pipe row reads 18 at the ACK of 5 where the
        // algorithm's arithmetic gives 17); the figure's own pipe ends at 10 too.
        for mode in [PrrMode::Crb, PrrMode::Ssrb] {
            let sent = first_round(mode, 1);
            assert_eq!(sent, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0], "{mode:?}");
            assert_eq!(sent.iter().sum::<u64>(), 8);
        }
    }

    #[test]
    fn rfc6937_burst_of_15_losses() {
        // Segments 0..14 lost: only the ACKs of 15..19 return. At the ACK of 17
        // (3rd dupack) pipe = 22 - 3 - 15 = 4 < ssthresh 10 -> reduction bound.
        // PRR-CRB: limit = prr_delivered - prr_out = 1, 1, 1 -> one retransmission
        // per ACK ("R R R" in RFC 6937 §3.1).
        assert_eq!(first_round(PrrMode::Crb, 15), [1, 1, 1]);
        // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS = 2 per
        // ACK: "2R 2R 2R", pipe 4 -> 6 -> 7 -> 8 (the figure's 4, 5, 6 are before
        // sending).
        assert_eq!(first_round(PrrMode::Ssrb, 15), [2, 2, 2]);
        // Linux: the extra segment needs an ACK advancing snd.una without new loss,
        // and duplicate ACKs do not advance it: like CRB here.
        assert_eq!(first_round(PrrMode::Linux, 15), [1, 1, 1]);
    }

    #[test]
    fn linux_adds_a_segment_on_a_safe_ack_and_forces_the_retransmit() {
        // pipe 4 MSS <= ssthresh 10: banked 0, DeliveredData 2 MSS, a cumulative ACK
        // with no new loss: MIN(10 - 4, MAX(0 + 2, 2) + 1) = 3 segments.
        let mut p = Prr::start(PrrMode::Linux, 10 * MSS, 20 * MSS, 20 * MSS).unwrap();
        p.on_send(2 * MSS); // prr_out = 2, so no forced segment
        let cwnd = p.on_ack(&PrrAck { delivered: 2 * MSS, pipe: 4 * MSS, una_advanced: true, newly_lost: false }, MSS);
        assert_eq!(cwnd, Some(7 * MSS));
        // The first ACK of a reduction always allows one segment (Linux forces the
        // fast retransmit): pipe 19 > 10, CEIL(1 * 10 / 20) = 1 anyway; with a tiny
        // delivery CEIL(100 * 10000 / 20000) = 50 B, one segment once rounded up
        // (and forced to at least one segment anyway).
        let mut p = Prr::start(PrrMode::Linux, 10 * MSS, 20 * MSS, 20 * MSS).unwrap();
        let cwnd = p.on_ack(&PrrAck { delivered: 100, pipe: 19 * MSS, una_advanced: false, newly_lost: true }, MSS);
        assert_eq!(cwnd, Some(20 * MSS));
        assert_eq!(p.on_ack(&PrrAck { delivered: 0, pipe: 19 * MSS, una_advanced: false, newly_lost: false }, MSS), None);
        assert!(Prr::start(PrrMode::Off, 1, 1, 1).is_none());
    }
}
