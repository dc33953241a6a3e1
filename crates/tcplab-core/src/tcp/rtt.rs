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
//! Sampling: the sender times one segment per round trip (classic BSD and ns-2
//! `rtt_active_`), which RFC 6298 §3 allows. Linux samples every ACK with its own
//! RTTVAR (mdev) filter; that difference is documented in the `linux` profile. The
//! per-ACK samples congestion controls need are taken by the sender (`tcp::rate`).

use crate::time::SimDuration;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<SimDuration>,
    rttvar: SimDuration,
    rto: SimDuration,
    min_rto: SimDuration,
    max_rto: SimDuration,
    backoffs: u32,
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
        }
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
