//! Independent (Bernoulli) packet losses: each packet is lost with probability `per`,
//! as ns-2's `ErrorModel` with `unit_ pkt` and ns-3's `RateErrorModel` in packet mode.

use super::{ErrorModel, ErrorStats};
use crate::rng::RngStream;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BernoulliParams {
    /// Packet error rate in [0, 1].
    pub per: f64,
}

pub struct Bernoulli {
    per: f64,
    rng: RngStream,
    stats: ErrorStats,
}

impl Bernoulli {
    pub fn new(p: BernoulliParams, rng: RngStream) -> Result<Self, String> {
        if !(0.0..=1.0).contains(&p.per) {
            return Err(format!("error.per must be in [0, 1], got {}", p.per));
        }
        Ok(Bernoulli { per: p.per, rng, stats: ErrorStats::default() })
    }
}

impl ErrorModel for Bernoulli {
    fn is_lost(&mut self, _start: SimTime, _end: SimTime, _size: u32) -> bool {
        let lost = self.rng.bernoulli(self.per);
        self.stats.record(lost)
    }
    fn stats(&self) -> ErrorStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realised_per_matches() {
        let mut m = Bernoulli::new(BernoulliParams { per: 0.01 }, RngStream::new(5, "e")).unwrap();
        for _ in 0..1_000_000 {
            m.is_lost(SimTime(0), SimTime(0), 1500);
        }
        // sd of the estimate: sqrt(0.01*0.99/1e6) = 1e-4; 5 sd tolerance.
        assert!((m.stats().per() - 0.01).abs() < 5e-4, "{}", m.stats().per());
        assert!(Bernoulli::new(BernoulliParams { per: 1.5 }, RngStream::new(0, "e")).is_err());
    }
}
