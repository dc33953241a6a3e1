//! Simulated time and link rates.
//!
//! Time is an integer count of nanoseconds (`SimTime`), so that event order never
//! depends on floating-point rounding and the same scenario replays bit-identically.
//! A transmission time is `ceil(bytes * 8e9 / rate)` computed in `u128`, so two
//! back-to-back packets on a link never overlap (ARCHITECTURE.md, "Rules of the core").

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time elapsed since `earlier`, saturating at zero.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative and NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            SimDuration(0)
        } else {
            SimDuration((s * 1e9).round().min(u64::MAX as f64) as u64)
        }
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn saturating_mul(self, k: u64) -> Self {
        SimDuration(self.0.saturating_mul(k))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, o: SimTime) -> SimDuration {
        SimDuration(self.0 - o.0)
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(o.0))
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(o.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(b: u64) -> Rate {
        Rate(b)
    }
    pub const fn kbps(k: u64) -> Rate {
        Rate(k * 1_000)
    }
    pub const fn mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    /// Serialization time of `bytes` at this rate: `ceil(bytes * 8e9 / bps)` ns.
    #[inline]
    pub fn tx_time(self, bytes: u32) -> SimDuration {
        // Every packet (up to 2^31 bytes) fits a 64-bit numerator: a 64-bit division,
        // a fraction of the 128-bit one's cost, with the same result.
        if bytes < 1 << 31 {
            return SimDuration((bytes as u64 * 8_000_000_000).div_ceil(self.0.max(1)));
        }
        let num = bytes as u128 * 8 * 1_000_000_000;
        let den = self.0.max(1) as u128;
        SimDuration(num.div_ceil(den) as u64)
    }
    /// Bytes that fit in `d` at this rate (floor).
    pub fn bytes_in(self, d: SimDuration) -> u64 {
        (self.0 as u128 * d.0 as u128 / 8_000_000_000) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_rounds_up() {
        // 1500 B at 160 kbit/s = 12000 bit / 160000 bit/s = 75 ms exactly.
        assert_eq!(Rate::kbps(160).tx_time(1500), SimDuration::from_millis(75));
        // 1500 B at 3 bit/s = 4000 s exactly; 1 B at 3 bit/s = 8/3 s -> rounds up.
        assert_eq!(Rate::bps(3).tx_time(1).0, 2_666_666_667);
        // Both sides of the 64-bit path agree with the exact quotient.
        for bytes in [1u32, 1500, (1 << 31) - 1, 1 << 31, u32::MAX] {
            let exact = (bytes as u128 * 8_000_000_000).div_ceil(999_999_937) as u64;
            assert_eq!(Rate(999_999_937).tx_time(bytes).0, exact, "{bytes}");
        }
    }

    #[test]
    fn bytes_in_inverts_tx_time() {
        let r = Rate::mbps(2);
        // 70 ms at 2 Mbit/s = 17500 B.
        assert_eq!(r.bytes_in(SimDuration::from_millis(70)), 17_500);
    }
}
