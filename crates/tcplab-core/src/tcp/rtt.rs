//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! - §2.2 first sample R: SRTT = R, RTTVAR = R/2.
//! - §2.3 later samples: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|; SRTT = 7/8 SRTT + 1/8 R
//!   (RTTVAR first, with the old SRTT).
//! - RTO = SRTT + max(G, 4 RTTVAR), G = 0 here (the simulator clock is exact; the
//!   minimum RTO covers what G protects against), then clamped to [min_rto, max_rto]
//!   (§2.4, §2.5).
//! - §5.5 backoff: RTO doubles (up to max_rto) each time the timer expires; §5.7: a new
//!   valid sample recomputes the RTO from SRTT/RTTVAR, ending the backoff.
//! - Karn's algorithm (§3): samples only from segments that were not retransmitted —
//!   the sender enforces this by never timing a retransmitted segment.
//!
//! Sampling: with `RttEstimatorKind::Rfc6298` the sender times one segment per round
//! trip (classic BSD and ns-2 `rtt_active_`), which RFC 6298 §3 allows.
//!
//! `RttEstimatorKind::Linux` is Linux's `tcp_rtt_estimator` and `__tcp_set_rto`, fed
//! with every ACK's RTT sample:
//!
//! - first sample m: SRTT = m, mdev = m/2, RTTVAR = max(mdev, min_rto / 4) in RFC
//!   units (the first RTO is max(3 m, m + min_rto));
//! - later: err = m - SRTT, SRTT += err/8. mdev moves by (|err| - mdev)/4, except that
//!   a sample below SRTT whose |err| exceeds mdev moves it 8 times slower (Linux's
//!   Eifel-like damping). `mdev_max`, the largest mdev seen in the current round
//!   trip, raises RTTVAR at once; once per round trip (when snd_una passes the
//!   snd_nxt of the round's start) RTTVAR decays a quarter of the way down to
//!   `mdev_max`, and `mdev_max` restarts at min_rto;
//! - RTO = SRTT + 4 RTTVAR in RFC terms (Linux keeps mdev and rttvar scaled by 4), at
//!   most max_rto. The minimum RTO bounds RTTVAR's term, not the sum: RTO >= SRTT +
//!   min_rto (200 ms in Linux), where RFC 6298 §2.4 bounds the sum.
//!
//! Times are exact nanoseconds (Linux: microseconds, RTO in jiffies).

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// The RTT read from an echoed TSval (Linux `tcp_rtt_tsopt_us(tp, min_delta)`): the
/// timestamp clock ticks in milliseconds (`TCP_TS_HZ` = 1000), so the sample is the
/// difference of the two clock readings in whole milliseconds, and a difference of 0
/// reads as `min_delta_ms` (the sender's `tcp_ack_update_rtt` passes 1, the
/// receiver's `tcp_rcv_rtt_measure_ts` 0, which it then discards). tcplab's TSval is
/// the send time in nanoseconds plus one (0 means no echo).
pub fn tsopt_rtt(now: SimTime, ts_ecr: u64, min_delta_ms: u64) -> SimDuration {
    let sent_ms = ts_ecr.saturating_sub(1) / 1_000_000;
    let now_ms = now.0 / 1_000_000;
    SimDuration::from_millis(now_ms.saturating_sub(sent_ms).max(min_delta_ms))
}

/// Which RTT estimator and RTO rule a sender uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttEstimatorKind {
    /// RFC 6298, one timed segment per round trip, RTO floored at min_rto.
    #[default]
    Rfc6298,
    /// Linux `tcp_rtt_estimator`: every ACK's sample, mdev/mdev_max/rttvar,
    /// RTO = SRTT + 4 RTTVAR with RTTVAR's term at least min_rto.
    Linux,
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<SimDuration>,
    rttvar: SimDuration,
    rto: SimDuration,
    min_rto: SimDuration,
    max_rto: SimDuration,
    backoffs: u32,
    /// Linux only: 8 SRTT (Linux `srtt_us`), 4 mdev, 4 mdev_max and 4 RTTVAR (Linux
    /// `mdev_us`, `mdev_max_us`, `rttvar_us`), in ns, and `rtt_seq`.
    srtt8: u64,
    mdev4: u64,
    mdev_max4: u64,
    rttvar4: u64,
    rtt_seq: u64,
}

impl RttEstimator {
    pub fn new(initial_rto: SimDuration, min_rto: SimDuration, max_rto: SimDuration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: SimDuration::ZERO,
            rto: initial_rto.min(max_rto),
            min_rto,
            max_rto,
            backoffs: 0,
            srtt8: 0,
            mdev4: 0,
            mdev_max4: 0,
            rttvar4: 0,
            rtt_seq: 0,
        }
    }

    /// Linux `tcp_rtt_estimator` + `tcp_set_rto` for one sample `m`, with snd_una and
    /// snd_nxt after the ACK (for the once-per-round-trip RTTVAR decay).
    pub fn sample_linux(&mut self, m: SimDuration, snd_una: u64, snd_nxt: u64) {
        let m = m.0;
        let rto_min = self.min_rto.0;
        if self.srtt.is_none() {
            self.srtt8 = m << 3;
            self.mdev4 = m << 1; // mdev = m/2, so that the first RTO is 3 m
            self.rttvar4 = self.mdev4.max(rto_min);
            self.mdev_max4 = self.rttvar4;
            self.rtt_seq = snd_nxt;
        } else {
            let err = m as i128 - (self.srtt8 >> 3) as i128;
            self.srtt8 = (self.srtt8 as i128 + err) as u64;
            let quarter = (self.mdev4 >> 2) as i128;
            let step = if err < 0 {
                let e = -err - quarter;
                // A falling RTT moves mdev up only with gain 1/32 (alpha * beta).
                if e > 0 { e >> 3 } else { e }
            } else {
                err - quarter
            };
            self.mdev4 = (self.mdev4 as i128 + step).max(0) as u64;
            if self.mdev4 > self.mdev_max4 {
                self.mdev_max4 = self.mdev4;
                self.rttvar4 = self.rttvar4.max(self.mdev_max4);
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max4 < self.rttvar4 {
                    self.rttvar4 -= (self.rttvar4 - self.mdev_max4) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max4 = rto_min;
            }
        }
        self.srtt8 = self.srtt8.max(1);
        self.srtt = Some(SimDuration(self.srtt8 >> 3));
        self.rttvar = SimDuration(self.rttvar4 / 4);
        self.backoffs = 0;
        self.rto = SimDuration((self.srtt8 >> 3) + self.rttvar4).min(self.max_rto);
    }

    /// Feeds one valid (Karn-clean) RTT sample.
    pub fn sample(&mut self, r: SimDuration) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = SimDuration(r.0 / 2);
            }
            Some(srtt) => {
                let err = srtt.0.abs_diff(r.0);
                // Integer arithmetic in ns: (3*rttvar + err)/4 and (7*srtt + r)/8.
                self.rttvar = SimDuration((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(SimDuration((7 * srtt.0 + r.0) / 8));
            }
        }
        self.backoffs = 0;
        self.rto = self.computed_rto();
    }

    fn computed_rto(&self) -> SimDuration {
        let srtt = self.srtt.unwrap_or(SimDuration::ZERO);
        let rto = srtt + SimDuration(4 * self.rttvar.0);
        rto.max(self.min_rto).min(self.max_rto)
    }

    /// The timer expired: double the RTO (RFC 6298 §5.5), capped at max_rto.
    pub fn backoff(&mut self) {
        self.backoffs += 1;
        self.rto = SimDuration(self.rto.0.saturating_mul(2)).min(self.max_rto);
    }

    /// Re-initialises the RTO (RFC 6298 §5.7: to 3 s when the SYN timed out and the
    /// initial RTO was shorter, until a sample arrives).
    pub fn reset_rto(&mut self, rto: SimDuration) {
        if self.srtt.is_none() {
            self.rto = rto.min(self.max_rto);
        }
    }

    pub fn rto(&self) -> SimDuration {
        self.rto
    }
    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt
    }
    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    #[test]
    fn rfc6298_first_and_second_sample() {
        let mut e = RttEstimator::new(SimDuration::from_secs(1), ms(200), SimDuration::from_secs(60));
        assert_eq!(e.rto(), SimDuration::from_secs(1));
        // R = 100 ms: SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300 ms.
        e.sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rto(), ms(300));
        // R = 200 ms: RTTVAR = 3/4*50 + 1/4*|100-200| = 37.5 + 25 = 62.5 ms;
        // SRTT = 7/8*100 + 1/8*200 = 112.5 ms; RTO = 112.5 + 250 = 362.5 ms.
        e.sample(ms(200));
        assert_eq!(e.rttvar(), SimDuration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(112_500)));
        assert_eq!(e.rto(), SimDuration::from_micros(362_500));
    }

    #[test]
    fn linux_estimator_by_hand() {
        // min_rto 200 ms. First sample 100 ms: SRTT 100, mdev*4 = 200, RTTVAR*4 =
        // max(200, 200) = 200 ms: RTO = 100 + 200 = 300 ms (Linux: "rto = 3 rtt").
        let mut e = RttEstimator::new(SimDuration::from_secs(1), ms(200), SimDuration::from_secs(120));
        e.sample_linux(ms(100), 1, 1000);
        assert_eq!((e.srtt(), e.rto()), (Some(ms(100)), ms(300)));
        // 120 ms within the round (snd_una 500 < rtt_seq 1000): err = +20 ms, SRTT =
        // 102.5 ms; mdev*4 += 20 - 200/4 = -30 -> 170; mdev_max*4 stays 200, RTTVAR*4
        // 200: RTO = 102.5 + 200 = 302.5 ms.
        e.sample_linux(ms(120), 500, 1000);
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(102_500)));
        assert_eq!(e.rto(), SimDuration::from_micros(302_500));
        // 20 ms, below SRTT, in the next round (snd_una 1001 > 1000): err = -82.5 ms;
        // SRTT = 102.5 - 10.3125 = 92.1875 ms; e = 82.5 - 170/4 = 40 > 0 -> 40/8 = 5
        // -> mdev*4 = 175. Round ended: mdev_max*4 (200) < RTTVAR*4 (200) no; decay
        // nothing; mdev_max*4 <- min_rto. RTO = 92.1875 + 200 ms: never below SRTT +
        // min_rto, where RFC 6298's floor would allow 200 ms.
        e.sample_linux(ms(20), 1001, 2000);
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(92_187) + SimDuration(500)));
        assert_eq!(e.rto(), SimDuration::from_micros(292_187) + SimDuration(500));
        assert_eq!(e.backoffs(), 0);
    }

    #[test]
    fn min_rto_floor_and_backoff_cap() {
        let mut e = RttEstimator::new(SimDuration::from_secs(3), SimDuration::from_secs(1), SimDuration::from_secs(60));
        // R = 10 ms: 10 + 4*5 = 30 ms, floored to the 1 s minimum (§2.4).
        e.sample(ms(10));
        assert_eq!(e.rto(), SimDuration::from_secs(1));
        for _ in 0..10 {
            e.backoff();
        }
        // 1 s * 2^10 = 1024 s, capped at 60 s (§5.5, §2.5).
        assert_eq!(e.rto(), SimDuration::from_secs(60));
        // A new sample ends the backoff (§5.7).
        e.sample(ms(10));
        assert_eq!(e.rto(), SimDuration::from_secs(1));
        assert_eq!(e.backoffs(), 0);
    }
}
