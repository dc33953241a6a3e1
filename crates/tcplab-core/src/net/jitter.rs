//! Delay variation on a link: each packet reaches the far end a random time after its
//! fixed propagation delay, without overtaking the packet ahead of it.
//!
//! The variation is one-way delay variation in the sense of RFC 3393 (IPDV), added to
//! the link's propagation delay. Packets keep their order: a packet whose draw would
//! bring it before its predecessor arrives with it instead, as on a path whose
//! variation comes from a FIFO stage (an emulator's or a host's late hand-off, a
//! driver's interrupt moderation). Linux netem, by contrast, reorders packets when it
//! adds jitter without a rate (tc-netem(8), "delay ... jitter"); tcplab does not
//! model reordering here.
//!
//! Draws come from the link's own substream (`link:<name>:jitter`), so the same seed
//! gives the same variation whatever else the scenario changes.
//!
//! ```
//! use tcplab_core::net::jitter::{JitterConfig, LinkJitter};
//! use tcplab_core::rng::RngStream;
//! use tcplab_core::time::{SimDuration, SimTime};
//! // A fixed extra 30 us (uniform over one value) is a 30 us longer delay.
//! let cfg = JitterConfig::Uniform { low: SimDuration(30_000), high: SimDuration(30_000) };
//! let mut j = LinkJitter::new(&cfg, RngStream::new(1, "link:l:jitter"));
//! assert_eq!(j.arrival(SimTime(1_000_000)), SimTime(1_030_000));
//! ```

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};

/// The distribution of the extra delay, per packet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum JitterConfig {
    /// Uniform over [low, high], in whole nanoseconds.
    Uniform { low: SimDuration, high: SimDuration },
    /// Exponential with the given mean (a few long delays among many short ones, the
    /// shape of a scheduler's wake-up lateness).
    Exponential { mean: SimDuration },
}

impl JitterConfig {
    /// Checks the parameters; the message names the field and what is accepted.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            JitterConfig::Uniform { low, high } if high < low => Err(format!(
                "jitter.high = {} ns is below jitter.low = {} ns: accepted high >= low",
                high.0, low.0
            )),
            _ => Ok(()),
        }
    }
}

/// A link's delay variation: its distribution, its substream, the latest arrival
/// handed out, which no later packet may precede, and the departures of the packets
/// still propagating (an arrival no longer tells its departure).
#[derive(Debug)]
pub struct LinkJitter {
    cfg: JitterConfig,
    rng: RngStream,
    last: SimTime,
    departures: VecDeque<SimTime>,
}

impl LinkJitter {
    pub fn new(cfg: &JitterConfig, rng: RngStream) -> Self {
        LinkJitter { cfg: cfg.clone(), rng, last: SimTime::ZERO, departures: VecDeque::new() }
    }

    /// Link `name`'s variation from its configuration, on substream
    /// `link:<name>:jitter` of `seed` (the simulator and the emulator build it alike);
    /// an error names the link.
    pub fn build(cfg: Option<&JitterConfig>, name: &str, seed: u64) -> Result<Option<Box<Self>>, String> {
        let Some(cfg) = cfg else { return Ok(None) };
        cfg.validate().map_err(|e| format!("link '{name}' {e}"))?;
        Ok(Some(Box::new(LinkJitter::new(cfg, RngStream::new(seed, &format!("link:{name}:jitter"))))))
    }

    /// When a packet due at `nominal` (its departure plus the propagation delay)
    /// arrives: `nominal` plus a draw, but never before the previous packet.
    pub fn arrival(&mut self, nominal: SimTime) -> SimTime {
        let extra = match self.cfg {
            JitterConfig::Uniform { low, high } => self.rng.uniform_u64(low.0, high.0),
            JitterConfig::Exponential { mean } => self.rng.exponential(mean.0 as f64) as u64,
        };
        let at = SimTime(nominal.0 + extra).max(self.last);
        self.last = at;
        at
    }

    /// A packet leaves the transmitter at `departure` onto a pipe of propagation delay
    /// `delay`: its arrival ([`Self::arrival`]), with the departure kept for
    /// [`Self::leave`].
    pub fn admit(&mut self, departure: SimTime, delay: SimDuration) -> SimTime {
        self.departures.push_back(departure);
        self.arrival(departure + delay)
    }

    /// The departure of the oldest packet admitted and not yet left the pipe, which
    /// leaves now (packets leave in the order they were admitted).
    pub fn leave(&mut self) -> SimTime {
        self.departures.pop_front().expect("a packet in the pipe")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(cfg: JitterConfig) -> LinkJitter {
        LinkJitter::new(&cfg, RngStream::new(7, "link:test:jitter"))
    }

    /// Packets never overtake: with a mean far above their spacing most arrivals are
    /// held by the one ahead, and the sequence of arrivals never decreases.
    #[test]
    fn keeps_order_and_never_arrives_early() {
        let mut j = link(JitterConfig::Exponential { mean: SimDuration(100_000) });
        let mut prev = SimTime::ZERO;
        for k in 0..10_000u64 {
            let nominal = SimTime(1_000_000 + k * 10_000); // 10 us apart
            let at = j.arrival(nominal);
            assert!(at >= nominal, "packet {k} arrived before its propagation delay");
            assert!(at >= prev, "packet {k} overtook the one ahead");
            prev = at;
        }
    }

    /// Each packet leaves the pipe with the departure it was admitted with, in order,
    /// also where the variation or the packet ahead made its arrival less the delay
    /// another time: 50 packets 1 us apart under a 10 us delay and 0-100 us of extra
    /// delay, most of them held back by the one ahead.
    #[test]
    fn departures_leave_in_order_with_their_packets() {
        let mut j = link(JitterConfig::Uniform { low: SimDuration(0), high: SimDuration(100_000) });
        let delay = SimDuration(10_000);
        let departures: Vec<SimTime> = (0..50).map(|k| SimTime(k * 1_000)).collect();
        let arrivals: Vec<SimTime> = departures.iter().map(|&d| j.admit(d, delay)).collect();
        let held = arrivals.windows(2).filter(|w| w[1] == w[0]).count();
        assert!(held > 10, "{held} packets held back by the one ahead");
        let left: Vec<SimTime> = (0..departures.len()).map(|_| j.leave()).collect();
        assert_eq!(left, departures);
        assert!(left.iter().zip(&arrivals).any(|(&d, &a)| a.0 - delay.0 != d.0));
    }

    /// Far-apart packets (1 ms, against a 30 us mean) see the distribution itself: the
    /// sample mean of 20,000 exponential draws lies within 5 standard errors
    /// (30 us / sqrt(20,000) = 0.21 us each) of 30 us.
    #[test]
    fn exponential_mean_for_sparse_packets() {
        let mut j = link(JitterConfig::Exponential { mean: SimDuration(30_000) });
        let n = 20_000u64;
        let sum: u64 = (0..n).map(|k| j.arrival(SimTime(k * 1_000_000)).0 - k * 1_000_000).sum();
        let mean = sum as f64 / n as f64;
        assert!((mean - 30_000.0).abs() < 5.0 * 30_000.0 / (n as f64).sqrt(), "mean {mean} ns");
    }

    /// Uniform draws stay inside [low, high] and reach both ends.
    #[test]
    fn uniform_bounds() {
        let mut j = link(JitterConfig::Uniform { low: SimDuration(10), high: SimDuration(13) });
        let extras: Vec<u64> = (0..1_000u64).map(|k| j.arrival(SimTime(k * 1_000)).0 - k * 1_000).collect();
        assert_eq!(extras.iter().min(), Some(&10));
        assert_eq!(extras.iter().max(), Some(&13));
    }

    #[test]
    fn validate_names_the_fields() {
        let bad = JitterConfig::Uniform { low: SimDuration(5), high: SimDuration(4) };
        let msg = bad.validate().unwrap_err();
        assert!(msg.contains("jitter.high") && msg.contains("jitter.low"), "{msg}");
        assert_eq!(JitterConfig::Exponential { mean: SimDuration(1) }.validate(), Ok(()));
    }
}
