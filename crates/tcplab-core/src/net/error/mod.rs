//! Link error models behind one `ErrorModel` trait.
//!
//! A link asks its error model, once per packet as the packet finishes serialization,
//! whether the packet is lost, and tells it the packet's airtime: from its first bit on
//! the air to its last (a time-varying channel corrupts a frame if any of its bits meets
//! a bad spell). Each model owns its own named random substream
//! (`link:<name>:error`), so adding traffic elsewhere never changes its loss pattern,
//! and reports the packet error rate it actually realised.
//!
//! Models: `bernoulli` (independent losses) and `markov` (two-state good/bad
//! Gilbert-Elliott channel, in probability, sojourn-time and seed 004 time-series
//! forms).

pub mod bernoulli;
pub mod markov;

use crate::rng::RngStream;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Counts of packets seen and lost, for the realised packet error rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorStats {
    pub packets: u64,
    pub lost: u64,
}

impl ErrorStats {
    /// Realised packet error rate (0 when no packet was seen).
    pub fn per(&self) -> f64 {
        if self.packets == 0 {
            0.0
        } else {
            self.lost as f64 / self.packets as f64
        }
    }
    pub fn record(&mut self, lost: bool) -> bool {
        self.packets += 1;
        self.lost += lost as u64;
        lost
    }
}

pub trait ErrorModel: Send {
    /// Whether the packet of `size` bytes on the air over `[start, end)` is lost: its
    /// first bit left at `start`, its last leaves at `end` (the call comes at `end`;
    /// `start == end` asks about the instant `end`). Calls come in time order.
    fn is_lost(&mut self, start: SimTime, end: SimTime, size: u32) -> bool;
    fn stats(&self) -> ErrorStats;
}

/// The serde description of an error model, as scenario files give it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ErrorConfig {
    Bernoulli(bernoulli::BernoulliParams),
    Markov(markov::MarkovParams),
}

impl ErrorConfig {
    /// Builds the model on its own substream, or explains which parameter is impossible.
    pub fn build(&self, rng: RngStream) -> Result<Box<dyn ErrorModel>, String> {
        match self {
            ErrorConfig::Bernoulli(p) => Ok(Box::new(bernoulli::Bernoulli::new(p.clone(), rng)?)),
            ErrorConfig::Markov(p) => Ok(Box::new(markov::Markov::new(p.clone(), rng)?)),
        }
    }
}
