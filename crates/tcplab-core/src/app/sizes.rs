//! Message sizes of applications: constant, or drawn from a distribution.
//!
//! A request or response size is an integer number of bytes, at least 1. Continuous
//! distributions are discretised by rounding up, `S = max(1, ceil(X))`, which keeps
//! the survival function exact at integers: for an integer `n >= 0`,
//! `P(S > n) = P(X > n)` (because `ceil(X) > n` exactly when `X > n`). That makes the
//! moments the offered-load arithmetic needs (`arrivals.rs`) exact sums of the
//! continuous survival function:
//!
//! - `E[S] = sum_{n >= 0} P(X > n)`;
//! - `E[ceil(S / M)] = sum_{j >= 0} P(X > j M)` (segments of MSS `M`), since
//!   `ceil(S/M) = #{j >= 0 : jM < S}`.
//!
//! Distributions (JSON tag `dist`):
//! - `constant {bytes}`;
//! - `uniform {min, max}`: integers, both ends included;
//! - `exponential {mean}`: `X ~ Exp(1/mean)` (ns-2 `ExponentialRandomVariable`);
//!   closed forms `E[S] = 1/(1 - e^{-1/mean})`, `E[ceil(S/M)] = 1/(1 - e^{-M/mean})`;
//! - `pareto {mean, shape}`: Pareto type I with shape `a > 1` and scale
//!   `x_m = mean (a-1)/a` (ns-2 `ParetoRandomVariable`, seed 002's flow sizes); the
//!   sums are evaluated term by term up to 2^20 terms past the scale and the tail
//!   `sum_{j > J} c j^-a` is closed by the midpoint integral
//!   `c (J + 1/2)^(1-a) / (a - 1)`, whose error is below the last term summed
//!   (checked in the tests against a brute-force sum to 1e-6 relative).
//!
//! Deviation: `E[S]` of the discretised distribution is the integer rounding's, about
//! half a byte above the continuous mean; the docs call `mean` the continuous mean.

use crate::rng::RngStream;
use serde::{Deserialize, Serialize};

/// A size distribution (bytes); see the module doc.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeDist {
    Constant { bytes: u64 },
    Uniform { min: u64, max: u64 },
    Exponential { mean: f64 },
    Pareto { mean: f64, shape: f64 },
}

impl SizeDist {
    /// Checks the parameters; `field` names the scenario field in the message.
    pub fn validate(&self, field: &str) -> Result<(), String> {
        match *self {
            SizeDist::Constant { bytes } if bytes == 0 => {
                Err(format!("{field}.bytes must be at least 1 byte; got 0"))
            }
            SizeDist::Uniform { min, max } if min == 0 || max < min => Err(format!(
                "{field}: uniform sizes need 1 <= min <= max; got min = {min}, max = {max}"
            )),
            SizeDist::Exponential { mean } if !(mean.is_finite() && mean >= 1.0) => {
                Err(format!("{field}.mean must be a finite size of at least 1 byte; got {mean}"))
            }
            SizeDist::Pareto { mean, shape } if !(mean.is_finite() && mean >= 1.0) => {
                Err(format!("{field}.mean must be a finite size of at least 1 byte; got {mean} (shape {shape})"))
            }
            SizeDist::Pareto { shape, .. } if !(shape.is_finite() && shape > 1.0) => Err(format!(
                "{field}.shape must be above 1 (a finite mean); got {shape}"
            )),
            _ => Ok(()),
        }
    }

    /// One size in bytes (at least 1).
    pub fn sample(&self, rng: &mut RngStream) -> u64 {
        let x = match *self {
            SizeDist::Constant { bytes } => return bytes,
            SizeDist::Uniform { min, max } => return rng.uniform_u64(min, max),
            SizeDist::Exponential { mean } => rng.exponential(mean),
            SizeDist::Pareto { mean, shape } => rng.pareto_with_mean(shape, mean),
        };
        (x.ceil() as u64).max(1)
    }

    /// Whether every draw is the same (no random numbers are used).
    pub fn is_constant(&self) -> bool {
        matches!(self, SizeDist::Constant { .. })
    }

    /// `E[S]`, bytes (exact for the discretised distribution; see the module doc).
    pub fn mean_bytes(&self) -> f64 {
        self.mean_blocks(1)
    }

    /// `E[ceil(S / mss)]`: the mean number of segments of at most `mss` bytes.
    pub fn mean_segments(&self, mss: u32) -> f64 {
        self.mean_blocks(mss.max(1) as u64)
    }

    /// `sum_{j >= 0} P(S > j m)`.
    fn mean_blocks(&self, m: u64) -> f64 {
        match *self {
            SizeDist::Constant { bytes } => bytes.div_ceil(m) as f64,
            SizeDist::Uniform { min, max } => {
                // Count the sizes in [min, max] that need j blocks, block by block.
                let n = (max - min + 1) as f64;
                let mut total = 0.0;
                let mut j = min.div_ceil(m);
                while (j - 1) * m < max {
                    let lo = min.max((j - 1) * m + 1);
                    let hi = max.min(j * m);
                    total += j as f64 * (hi - lo + 1) as f64;
                    j += 1;
                }
                total / n
            }
            SizeDist::Exponential { mean } => 1.0 / (1.0 - (-(m as f64) / mean).exp()),
            SizeDist::Pareto { mean, shape } => {
                let xm = mean * (shape - 1.0) / shape;
                let m = m as f64;
                // Terms j with j*m <= xm have P = 1 (j = 0 included).
                let first = (xm / m).floor() as u64 + 1;
                let mut sum = first as f64;
                let last = first + (1 << 20);
                let term = |j: u64| (xm / (j as f64 * m)).powf(shape);
                for j in first..=last {
                    sum += term(j);
                }
                let c = (xm / m).powf(shape);
                sum + c * (last as f64 + 0.5).powf(1.0 - shape) / (shape - 1.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_and_uniform_moments_by_hand() {
        // 15 000 B in MSS 1460: 10 full segments + 400 B = 11 segments.
        let c = SizeDist::Constant { bytes: 15_000 };
        assert_eq!(c.mean_segments(1460), 11.0);
        assert_eq!(c.mean_bytes(), 15_000.0);
        // Uniform 1..=4 with M = 2: blocks 1,1,2,2 -> 1.5; mean size 2.5.
        let u = SizeDist::Uniform { min: 1, max: 4 };
        assert_eq!(u.mean_segments(2), 1.5);
        assert_eq!(u.mean_bytes(), 2.5);
        // Uniform 1000..=2000 in 1460-byte segments: 461 sizes need 1, 540 need 2.
        let u = SizeDist::Uniform { min: 1000, max: 2000 };
        assert!((u.mean_segments(1460) - (461.0 + 2.0 * 540.0) / 1001.0).abs() < 1e-12);
    }

    #[test]
    fn exponential_closed_form_matches_a_brute_force_sum() {
        let d = SizeDist::Exponential { mean: 5000.0 };
        let brute: f64 = (0..200_000u64).map(|j| (-((j * 1460) as f64) / 5000.0).exp()).sum();
        assert!((d.mean_segments(1460) - brute).abs() < 1e-9);
        // E[ceil X] = E[X] + ~1/2 for a mean far above 1 byte.
        assert!((d.mean_bytes() - 5000.5).abs() < 0.01, "{}", d.mean_bytes());
    }

    #[test]
    fn pareto_tail_closure_matches_a_long_sum() {
        for (mean, shape) in [(1e6, 1.2), (15_000.0, 2.5), (3000.0, 1.05)] {
            let d = SizeDist::Pareto { mean, shape };
            let xm = mean * (shape - 1.0) / shape;
            let brute: f64 = (0..4_000_000u64)
                .map(|j| if j == 0 { 1.0 } else { (xm / (j as f64 * 1460.0)).powf(shape).min(1.0) })
                .sum::<f64>()
                + (xm / 1460.0).powf(shape) * (4_000_000f64 - 0.5).powf(1.0 - shape) / (shape - 1.0);
            let got = d.mean_segments(1460);
            assert!((got - brute).abs() / brute < 1e-6, "mean {mean} shape {shape}: {got} vs {brute}");
        }
    }

    #[test]
    fn samples_have_the_stated_means() {
        // 200 000 draws; standard error of the mean = sd/sqrt(n): exponential
        // 5000/447 = 11 B (5 sigma: 56 B); the mean segment count is checked the same way.
        let mut rng = RngStream::new(1, "sizes");
        let d = SizeDist::Exponential { mean: 5000.0 };
        let n = 200_000;
        let (mut s, mut segs) = (0.0, 0.0);
        for _ in 0..n {
            let x = d.sample(&mut rng);
            assert!(x >= 1);
            s += x as f64;
            segs += x.div_ceil(1460) as f64;
        }
        assert!((s / n as f64 - d.mean_bytes()).abs() < 56.0, "{}", s / n as f64);
        assert!((segs / n as f64 - d.mean_segments(1460)).abs() < 0.02);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = SizeDist::Pareto { mean: 1000.0, shape: 1.0 }.validate("flows[0].response");
        assert!(e.unwrap_err().contains("flows[0].response.shape"));
        let e = SizeDist::Uniform { min: 5, max: 2 }.validate("flows[0].request");
        assert!(e.unwrap_err().contains("min = 5, max = 2"));
        assert!(SizeDist::Constant { bytes: 0 }.validate("x").is_err());
    }
}
