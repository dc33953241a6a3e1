//! Arrival processes: when an application starts its transactions.
//!
//! An arrival opens `batch` transactions at once (seed 001's "5 simultaneous opens",
//! as a browser opens several connections for one page). Processes (JSON tag
//! `process`), each behind the `ArrivalProcess` trait:
//!
//! - `poisson`: exponential gaps of mean `1/rate` (a Poisson process of intensity
//!   `rate`, in arrivals per second); the first arrival comes one gap after `start`,
//!   as in a stationary process. The rate is given, or derived from an **offered
//!   load** `rho` of a link (seed 001: "requests arrival rate (Poisson)", loads 72 %,
//!   75 %, 96 %, 97.5 %):
//!
//!   `rate = rho * C / (8 * k * W)` arrivals/s,
//!
//!   with `C` the link's rate (bit/s), `k` the batch size and `W` the mean bytes on
//!   the wire of one response: `W = E[S] + H * E[ceil(S / MSS)]` for response size
//!   `S`, `H` header bytes per segment and the server's MSS (the FIN rides on the
//!   last data segment; the SYN-ACK and pure ACKs are not counted). Seed 001 at
//!   20 Mbit/s, rho = 0.96, k = 1, S = 15 000 B, MSS 1460 B, H = 40 B:
//!   `W = 15 000 + 40 * 11 = 15 440 B`, `rate = 0.96 * 20e6 / (8 * 15 440) =
//!   155.44 /s`.
//! - `periodic`: one arrival every `interval`, the first at `start`.
//! - `times`: arrivals at the listed times (sorted; those before `start` are skipped).
//!
//! Arrivals stop at `stop` (none at or after it). Draws come from the application's
//! own named substream (`rng.rs`), so another component's randomness never shifts
//! them (common random numbers across TCP variants).

use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// An arrival process as a scenario gives it; see the module doc.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "process", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArrivalSpec {
    /// Exactly one of `rate` (arrivals/s) and `load` (offered load of `link`, default
    /// the link named `bottleneck`).
    Poisson {
        #[serde(default)]
        rate: Option<f64>,
        #[serde(default)]
        load: Option<f64>,
        #[serde(default)]
        link: Option<String>,
    },
    Periodic { interval: SimDuration },
    Times { at: Vec<SimTime> },
}

/// What the offered load of a Poisson process is measured against.
#[derive(Clone, Copy, Debug)]
pub struct LoadBasis {
    /// The link's rate, bit/s.
    pub link_bps: u64,
    /// Mean bytes on the wire of one response (`W` in the module doc).
    pub response_wire_bytes: f64,
    /// Transactions per arrival.
    pub batch: u32,
}

/// `rate = load * C / (8 * k * W)`, arrivals per second (module doc).
///
/// ```
/// use tcplab_core::app::arrivals::{rate_for_load, LoadBasis};
/// let b = LoadBasis { link_bps: 20_000_000, response_wire_bytes: 15_440.0, batch: 1 };
/// assert!((rate_for_load(0.96, b) - 155.440).abs() < 1e-3);
/// ```
pub fn rate_for_load(load: f64, basis: LoadBasis) -> f64 {
    load * basis.link_bps as f64 / (8.0 * basis.batch as f64 * basis.response_wire_bytes)
}

/// Arrival times, one after another.
pub trait ArrivalProcess {
    /// The first arrival at or after `start`, if any.
    fn first(&mut self, start: SimTime, rng: &mut RngStream) -> Option<SimTime>;
    /// The arrival after the one at `prev`, if any.
    fn next(&mut self, prev: SimTime, rng: &mut RngStream) -> Option<SimTime>;
}

/// Exponential gaps of mean `1/rate`.
pub struct Poisson {
    mean_gap_s: f64,
}

impl ArrivalProcess for Poisson {
    fn first(&mut self, start: SimTime, rng: &mut RngStream) -> Option<SimTime> {
        self.next(start, rng)
    }
    fn next(&mut self, prev: SimTime, rng: &mut RngStream) -> Option<SimTime> {
        Some(prev + SimDuration::from_secs_f64(rng.exponential(self.mean_gap_s)))
    }
}

/// A fixed interval.
pub struct Periodic {
    interval: SimDuration,
}

impl ArrivalProcess for Periodic {
    fn first(&mut self, start: SimTime, _: &mut RngStream) -> Option<SimTime> {
        Some(start)
    }
    fn next(&mut self, prev: SimTime, _: &mut RngStream) -> Option<SimTime> {
        Some(prev + self.interval)
    }
}

/// A list of times.
pub struct Times {
    at: Vec<SimTime>,
    i: usize,
}

impl ArrivalProcess for Times {
    fn first(&mut self, start: SimTime, _: &mut RngStream) -> Option<SimTime> {
        self.i = self.at.partition_point(|t| *t < start);
        self.at.get(self.i).copied()
    }
    fn next(&mut self, _: SimTime, _: &mut RngStream) -> Option<SimTime> {
        self.i += 1;
        self.at.get(self.i).copied()
    }
}

/// A process with its window `[start, stop)` and random stream.
pub struct Arrivals {
    process: Box<dyn ArrivalProcess>,
    start: SimTime,
    stop: Option<SimTime>,
    rng: RngStream,
    /// Arrivals per second (`None` for `times`), after the load arithmetic.
    pub rate: Option<f64>,
    started: bool,
}

impl Arrivals {
    /// Builds the process; `basis` is needed only for `load`. `field` names the
    /// scenario field in errors.
    pub fn new(
        spec: &ArrivalSpec,
        start: SimTime,
        stop: Option<SimTime>,
        basis: impl FnOnce(Option<&str>) -> Result<LoadBasis, String>,
        rng: RngStream,
        field: &str,
    ) -> Result<Arrivals, String> {
        let (process, rate): (Box<dyn ArrivalProcess>, Option<f64>) = match spec {
            ArrivalSpec::Poisson { rate, load, link } => {
                let rate = match (rate, load) {
                    (Some(r), None) => {
                        if link.is_some() {
                            return Err(format!("{field}.link only applies with load, not rate"));
                        }
                        *r
                    }
                    (None, Some(l)) => {
                        if !(l.is_finite() && *l > 0.0) {
                            return Err(format!("{field}.load must be a positive fraction of the link rate; got {l}"));
                        }
                        rate_for_load(*l, basis(link.as_deref())?)
                    }
                    _ => {
                        return Err(format!(
                            "{field}: a poisson process needs exactly one of rate (arrivals/s) and load (fraction)"
                        ))
                    }
                };
                if !(rate.is_finite() && rate > 0.0) {
                    return Err(format!("{field}.rate must be a positive number of arrivals per second; got {rate}"));
                }
                (Box::new(Poisson { mean_gap_s: 1.0 / rate }), Some(rate))
            }
            ArrivalSpec::Periodic { interval } => {
                if interval.0 == 0 {
                    return Err(format!("{field}.interval must be positive"));
                }
                (Box::new(Periodic { interval: *interval }), Some(1.0 / interval.as_secs_f64()))
            }
            ArrivalSpec::Times { at } => {
                if at.windows(2).any(|w| w[1] < w[0]) {
                    return Err(format!("{field}.at must be sorted in time"));
                }
                (Box::new(Times { at: at.clone(), i: 0 }), None)
            }
        };
        Ok(Arrivals { process, start, stop, rng, rate, started: false })
    }

    /// The next arrival time: the first one on the first call. `None` once the process
    /// is exhausted or past `stop`.
    pub fn next(&mut self, prev: SimTime) -> Option<SimTime> {
        let t = if self.started {
            self.process.next(prev, &mut self.rng)
        } else {
            self.started = true;
            self.process.first(self.start, &mut self.rng)
        }?;
        match self.stop {
            Some(s) if t >= s => None,
            _ => Some(t),
        }
    }

    /// Whether arrivals end on their own (a `stop` time or a finite list).
    pub fn bounded(spec: &ArrivalSpec, stop: Option<SimTime>) -> bool {
        stop.is_some() || matches!(spec, ArrivalSpec::Times { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poisson(rate: f64) -> Arrivals {
        let spec = ArrivalSpec::Poisson { rate: Some(rate), load: None, link: None };
        Arrivals::new(&spec, SimTime::ZERO, None, |_| unreachable!(), RngStream::new(7, "app:x:arrivals"), "a").unwrap()
    }

    /// Kolmogorov-Smirnov statistic of `xs` against Exp(rate).
    fn ks_exponential(xs: &mut [f64], rate: f64) -> f64 {
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = xs.len() as f64;
        let mut d: f64 = 0.0;
        for (i, x) in xs.iter().enumerate() {
            let f = 1.0 - (-rate * x).exp();
            d = d.max((f - i as f64 / n).abs()).max(((i + 1) as f64 / n - f).abs());
        }
        d
    }

    #[test]
    fn poisson_rate_and_exponential_gaps() {
        // 20 000 gaps at 5 /s. Rate: the count in T = 4000 s is Poisson(20 000), sd
        // 141: within 5 sd. KS: the 0.1 % critical value is 1.949/sqrt(n) = 0.0138.
        let mut a = poisson(5.0);
        let mut prev = SimTime::ZERO;
        let mut gaps = Vec::new();
        let mut count = 0;
        while let Some(t) = a.next(prev) {
            if t.as_secs_f64() > 4000.0 {
                break;
            }
            gaps.push(t.since(prev).as_secs_f64());
            prev = t;
            count += 1;
        }
        assert!((count as f64 - 20_000.0).abs() < 5.0 * 141.4, "{count} arrivals in 4000 s");
        let d = ks_exponential(&mut gaps, 5.0);
        assert!(d < 1.949 / (count as f64).sqrt(), "KS D = {d}");
        // A wrong rate is rejected by the same test (it can fail).
        let d_wrong = ks_exponential(&mut gaps, 5.5);
        assert!(d_wrong > 1.949 / (count as f64).sqrt(), "KS D vs Exp(5.5) = {d_wrong}");
    }

    #[test]
    fn offered_load_arithmetic_of_seed_001() {
        // 64 kbit/s at 75 %, batch 5: 0.75 * 64 000 / (8 * 5 * 15 440) = 0.077720 /s.
        let b = LoadBasis { link_bps: 64_000, response_wire_bytes: 15_440.0, batch: 5 };
        assert!((rate_for_load(0.75, b) - 0.077_720).abs() < 1e-6);
        let spec = ArrivalSpec::Poisson { rate: None, load: Some(0.75), link: None };
        let a = Arrivals::new(&spec, SimTime::ZERO, None, |_| Ok(b), RngStream::new(1, "x"), "a").unwrap();
        assert!((a.rate.unwrap() - 0.077_720).abs() < 1e-6);
    }

    #[test]
    fn periodic_times_and_stop() {
        let spec = ArrivalSpec::Periodic { interval: SimDuration::from_secs(2) };
        let mut a = Arrivals::new(&spec, SimTime(1), Some(SimTime(5_000_000_001)), |_| unreachable!(),
                                  RngStream::new(1, "x"), "a").unwrap();
        let mut got = vec![];
        let mut prev = SimTime::ZERO;
        while let Some(t) = a.next(prev) {
            got.push(t.0);
            prev = t;
        }
        assert_eq!(got, vec![1, 2_000_000_001, 4_000_000_001]);
        let spec = ArrivalSpec::Times { at: vec![SimTime(0), SimTime(10), SimTime(20)] };
        let mut a = Arrivals::new(&spec, SimTime(5), None, |_| unreachable!(), RngStream::new(1, "x"), "a").unwrap();
        assert_eq!(a.next(SimTime::ZERO), Some(SimTime(10)));
        assert_eq!(a.next(SimTime(10)), Some(SimTime(20)));
        assert_eq!(a.next(SimTime(20)), None);
    }

    #[test]
    fn bad_specs_are_named() {
        let both = ArrivalSpec::Poisson { rate: Some(1.0), load: Some(0.5), link: None };
        let e = Arrivals::new(&both, SimTime::ZERO, None, |_| unreachable!(), RngStream::new(1, "x"), "flows[2].arrivals");
        assert!(e.err().unwrap().contains("flows[2].arrivals: a poisson process needs exactly one"));
        let neg = ArrivalSpec::Poisson { rate: None, load: Some(-1.0), link: None };
        let e = Arrivals::new(&neg, SimTime::ZERO, None, |_| unreachable!(), RngStream::new(1, "x"), "f");
        assert!(e.err().unwrap().contains("f.load must be a positive fraction"));
    }
}
