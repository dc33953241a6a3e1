//! Two-state good/bad (Gilbert-Elliott) packet loss.
//!
//! References: E. N. Gilbert, "Capacity of a burst-noise channel", Bell Syst. Tech. J.
//! 39, 1960; E. O. Elliott, "Estimates of error rates for codes on burst-noise
//! channels", BSTJ 42, 1963; ns-2's two-state `ErrorModel/TwoState` (time-driven
//! sojourns) for the time forms; seed 004's error time series (loss bursts of a given
//! length separated by loss-free gaps) for `time_series` and the presets.
//!
//! The channel is in a good or a bad state; a packet is lost with probability
//! `loss_good` or `loss_bad` according to the state it meets. Three forms (serde tag
//! `form`):
//!
//! - `per_packet`: a Markov chain stepped once per packet. The packet sees the current
//!   state, then the chain moves good->bad with `p_gb` and bad->good with `p_bg`.
//!   Stationary bad fraction p_gb / (p_gb + p_bg); mean burst 1 / p_bg packets.
//! - `sojourn`: time-driven, state durations exponential with means `mean_good`,
//!   `mean_bad` (a continuous-time Markov chain).
//! - `time_series`: time-driven, good durations uniform in [good_min, good_max] and
//!   bad durations uniform in [bad_min, bad_max] (integer nanoseconds, inclusive).
//! - `preset`: `{"form": "preset", "name": "medium"}`, one of seed 004's rows (below).
//!
//! Parameters and defaults: `p_gb`, `p_bg` (probabilities, required); `mean_good`,
//! `mean_bad`, `good_min`, `good_max`, `bad_min`, `bad_max` (durations, plain integer
//! nanoseconds, required); `loss_good` (default 0) and `loss_bad` (default 1) in every
//! form except `preset` (always 0 and 1).
//!
//! Time-driven forms start in the good state at t = 0 with the first good duration
//! already drawn. A state holds over [start, end). A frame on the air over
//! `[first bit, last bit)` (`is_lost(start, end)`) meets every state that overlaps that
//! interval, and each of them corrupts it with its own loss probability: with
//! loss_bad = 1, a frame is lost if any part of its airtime falls in a bad state. A
//! fade corrupts the bits sent during it, and one corrupted bit loses the frame; ns-2's
//! `TwoStateErrorModel` (`errmodel.cc`) loses a packet whose transmission overlaps a
//! bad period at any point the same way. A zero-length airtime (`start == end`) meets
//! the state at that instant only. The machine is advanced lazily to `end`. Durations
//! are drawn only at state changes, from a substream of their own, and in-state loss
//! draws (only when 0 < loss < 1) come from a second substream. So the state timeline
//! is a pure function of the seed and time, not of the traffic. Both substreams are
//! seeded from the `RngStream` handed to `new`. If `start` goes backwards, the current
//! state is used from there.
//!
//! For the time-driven forms the expected fraction of time in the bad state is
//! E[bad] / (E[good] + E[bad]): the expected PER of instantaneous packets arriving
//! independently of the channel (loss_good = 0, loss_bad = 1). A frame with airtime
//! `a` escapes only if it lies wholly inside a good period, so its expected loss is
//! 1 - E[(good - a)+] / (E[good] + E[bad]) (`expected_frame_loss`): each burst is
//! lengthened by about one airtime. On seed 004's return link (128 kbit/s, 1450 B
//! frames, a = 90.625 ms, as long as the bursts), for the presets (all with
//! loss_bad = 1):
//!
//! | name   | seed avg PER | good (gap) | bad (burst) | time fraction | frames of 90.625 ms |
//! |--------|--------------|------------|-------------|---------------|---------------------|
//! | low    | 1-1.5%       | 10-30 s    | 60-60 ms    | 0.299%        | 0.751%              |
//! | medium | 3-4%         | 5-15 s     | 100-300 ms  | 1.96%         | 2.85%               |
//! | high   | 5-6%         | 2-10 s     | 100-300 ms  | 3.23%         | 4.69%               |
//! | vhigh  | 7-8%         | 0-10 s     | 100-300 ms  | 3.85%         | 5.58%               |
//! | huge   | 13-15%       | 0-7 s      | 100-100 ms  | 2.78%         | 5.28%               |
//!
//! The seed's PER column stays above what its own duration ranges give, and its Huge
//! row is out of line with the others: to reach the column's midpoints each burst would
//! have to cost about 140-190 ms of frames beyond its own length on Low to VHigh (about
//! two airtimes), but about 400 ms on Huge. No single frame-loss rule meets all five
//! rows, so the presets reproduce the duration ranges, and the PER column is kept as
//! documentation (docs/validation.md has the realised values).
//!
//! Deviations from ns-2's `TwoStateErrorModel`, which also starts in the error-free
//! state:
//! - ns-2 draws sojourns from two `RandomVariable`s in seconds (or packets/bytes).
//!   Here durations are integer ns (exponential draws rounded to the nearest ns).
//! - ns-2 loses every packet in the bad state; here each state has a loss probability.

use super::{ErrorModel, ErrorStats};
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

fn one() -> f64 {
    1.0
}

/// The serde description of a two-state model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case", deny_unknown_fields)]
pub enum MarkovParams {
    /// Markov chain stepped once per packet.
    PerPacket {
        /// Probability of moving good -> bad after a packet, in [0, 1].
        p_gb: f64,
        /// Probability of moving bad -> good after a packet, in [0, 1].
        p_bg: f64,
        /// Loss probability in the good state, in [0, 1]. Default 0.
        #[serde(default)]
        loss_good: f64,
        /// Loss probability in the bad state, in [0, 1]. Default 1.
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Exponentially distributed sojourn times (time-driven).
    Sojourn {
        /// Mean good-state duration in ns (> 0).
        mean_good: SimDuration,
        /// Mean bad-state duration in ns (> 0).
        mean_bad: SimDuration,
        /// Loss probability in the good state, in [0, 1]. Default 0.
        #[serde(default)]
        loss_good: f64,
        /// Loss probability in the bad state, in [0, 1]. Default 1.
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Uniformly distributed sojourn times (time-driven, seed 004's time series).
    TimeSeries {
        /// Shortest good-state duration (gap between bursts), ns.
        good_min: SimDuration,
        /// Longest good-state duration, ns (>= good_min).
        good_max: SimDuration,
        /// Shortest bad-state duration (burst length), ns.
        bad_min: SimDuration,
        /// Longest bad-state duration, ns (>= bad_min).
        bad_max: SimDuration,
        /// Loss probability in the good state, in [0, 1]. Default 0.
        #[serde(default)]
        loss_good: f64,
        /// Loss probability in the bad state, in [0, 1]. Default 1 (seed 004).
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// One of seed 004's rows by name: low, medium, high, vhigh, huge.
    Preset {
        /// Lowercase preset name.
        name: String,
    },
}

/// Seed 004's time series by name (low, medium, high, vhigh, huge), with loss_bad 1.
pub fn preset(name: &str) -> Option<MarkovParams> {
    let s = SimDuration::from_secs;
    let ms = SimDuration::from_millis;
    let (good_min, good_max, bad_min, bad_max) = match name {
        "low" => (s(10), s(30), ms(60), ms(60)),
        "medium" => (s(5), s(15), ms(100), ms(300)),
        "high" => (s(2), s(10), ms(100), ms(300)),
        "vhigh" => (s(0), s(10), ms(100), ms(300)),
        "huge" => (s(0), s(7), ms(100), ms(100)),
        _ => return None,
    };
    Some(MarkovParams::TimeSeries {
        good_min,
        good_max,
        bad_min,
        bad_max,
        loss_good: 0.0,
        loss_bad: 1.0,
    })
}

impl MarkovParams {
    /// The explicit form of a preset (other forms unchanged), or an error naming the
    /// unknown preset.
    pub fn resolve(&self) -> Result<MarkovParams, String> {
        match self {
            MarkovParams::Preset { name } => preset(name).ok_or_else(|| {
                format!("error.name: unknown markov preset '{name}' (expected low, medium, high, vhigh or huge)")
            }),
            p => Ok(p.clone()),
        }
    }

    /// Stationary fraction of packets (per-packet form) or of time (time forms) in
    /// the bad state; `None` for an unknown preset or a chain that never moves.
    pub fn bad_fraction(&self) -> Option<f64> {
        let mid = |a: SimDuration, b: SimDuration| (a.0 as f64 + b.0 as f64) / 2.0;
        let (g, b) = match self.resolve().ok()? {
            MarkovParams::PerPacket { p_gb, p_bg, .. } => (p_bg, p_gb),
            MarkovParams::Sojourn {
                mean_good,
                mean_bad,
                ..
            } => (mean_good.0 as f64, mean_bad.0 as f64),
            MarkovParams::TimeSeries {
                good_min,
                good_max,
                bad_min,
                bad_max,
                ..
            } => (mid(good_min, good_max), mid(bad_min, bad_max)),
            MarkovParams::Preset { .. } => return None,
        };
        if g + b > 0.0 {
            Some(b / (g + b))
        } else {
            None
        }
    }

    /// Expected loss of frames on the air for `airtime` each, placed independently of
    /// a time-driven channel with loss_good = 0 and loss_bad = 1: a frame escapes only
    /// when it lies wholly inside one good period, so the loss is
    /// 1 - E[(good - airtime)+] / (E[good] + E[bad]) (renewal-reward: the start of
    /// the frame is uniform over a cycle). `None` for the per-packet form, other loss
    /// probabilities, or an unknown preset.
    pub fn expected_frame_loss(&self, airtime: SimDuration) -> Option<f64> {
        let a = airtime.0 as f64;
        let (escape, cycle) = match self.resolve().ok()? {
            MarkovParams::Sojourn { mean_good, mean_bad, loss_good, loss_bad } if loss_good == 0.0 && loss_bad == 1.0 => {
                // Exponential good periods: E[(G - a)+] = mean * exp(-a / mean).
                let g = mean_good.0 as f64;
                (g * (-a / g).exp(), g + mean_bad.0 as f64)
            }
            MarkovParams::TimeSeries { good_min, good_max, bad_min, bad_max, loss_good, loss_bad }
                if loss_good == 0.0 && loss_bad == 1.0 =>
            {
                // Uniform good periods on [lo, hi]: E[(G - a)+] is the mean less a when
                // a <= lo, else (hi - a)^2 / (2 (hi - lo)) (0 when a >= hi).
                let (lo, hi) = (good_min.0 as f64, good_max.0 as f64);
                let escape = if a <= lo {
                    (lo + hi) / 2.0 - a
                } else if a >= hi {
                    0.0
                } else {
                    (hi - a) * (hi - a) / (2.0 * (hi - lo))
                };
                (escape, (lo + hi + bad_min.0 as f64 + bad_max.0 as f64) / 2.0)
            }
            _ => return None,
        };
        (cycle > 0.0).then(|| 1.0 - escape / cycle)
    }

    /// Expected packet error rate for instantaneous packets that arrive independently
    /// of the channel state: bad_fraction * loss_bad + (1 - bad_fraction) * loss_good.
    pub fn expected_per(&self) -> Option<f64> {
        let f = self.bad_fraction()?;
        let (lg, lb) = match self.resolve().ok()? {
            MarkovParams::PerPacket {
                loss_good,
                loss_bad,
                ..
            }
            | MarkovParams::Sojourn {
                loss_good,
                loss_bad,
                ..
            }
            | MarkovParams::TimeSeries {
                loss_good,
                loss_bad,
                ..
            } => (loss_good, loss_bad),
            MarkovParams::Preset { .. } => return None,
        };
        Some(f * lb + (1.0 - f) * lg)
    }
}

/// How the state changes.
#[derive(Clone, Copy, Debug)]
enum Driver {
    PerPacket {
        p_gb: f64,
        p_bg: f64,
    },
    /// Means in ns.
    Exponential {
        mean_good: f64,
        mean_bad: f64,
    },
    /// Inclusive ranges in ns.
    Uniform {
        good: (u64, u64),
        bad: (u64, u64),
    },
}

/// A two-state good/bad error model (see the module documentation).
pub struct Markov {
    driver: Driver,
    loss_good: f64,
    loss_bad: f64,
    bad: bool,
    /// End of the current state (time-driven forms).
    state_end: SimTime,
    state_rng: RngStream,
    loss_rng: RngStream,
    stats: ErrorStats,
}

fn check_prob(name: &str, p: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(format!("error.{name} must be in [0, 1], got {p}"))
    }
}

fn check_range(what: &str, lo: SimDuration, hi: SimDuration) -> Result<(), String> {
    if lo > hi {
        Err(format!(
            "error.{what}_min must not exceed error.{what}_max (got {} > {} ns)",
            lo.0, hi.0
        ))
    } else {
        Ok(())
    }
}

impl Markov {
    pub fn new(p: MarkovParams, mut rng: RngStream) -> Result<Self, String> {
        let (driver, loss_good, loss_bad) = match p.resolve()? {
            MarkovParams::PerPacket {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => {
                check_prob("p_gb", p_gb)?;
                check_prob("p_bg", p_bg)?;
                (Driver::PerPacket { p_gb, p_bg }, loss_good, loss_bad)
            }
            MarkovParams::Sojourn {
                mean_good,
                mean_bad,
                loss_good,
                loss_bad,
            } => {
                if mean_good.0 == 0 {
                    return Err("error.mean_good must be positive".into());
                }
                if mean_bad.0 == 0 {
                    return Err("error.mean_bad must be positive".into());
                }
                let d = Driver::Exponential {
                    mean_good: mean_good.0 as f64,
                    mean_bad: mean_bad.0 as f64,
                };
                (d, loss_good, loss_bad)
            }
            MarkovParams::TimeSeries {
                good_min,
                good_max,
                bad_min,
                bad_max,
                loss_good,
                loss_bad,
            } => {
                check_range("good", good_min, good_max)?;
                check_range("bad", bad_min, bad_max)?;
                if good_max.0 == 0 && bad_max.0 == 0 {
                    return Err("error.good_max and error.bad_max cannot both be zero".into());
                }
                let d = Driver::Uniform {
                    good: (good_min.0, good_max.0),
                    bad: (bad_min.0, bad_max.0),
                };
                (d, loss_good, loss_bad)
            }
            MarkovParams::Preset { .. } => unreachable!("resolve() expands presets"),
        };
        check_prob("loss_good", loss_good)?;
        check_prob("loss_bad", loss_bad)?;
        let state_rng = RngStream::new(rng.next_u64(), "markov:state");
        let loss_rng = RngStream::new(rng.next_u64(), "markov:loss");
        let mut m = Markov {
            driver,
            loss_good,
            loss_bad,
            bad: false,
            state_end: SimTime::ZERO,
            state_rng,
            loss_rng,
            stats: ErrorStats::default(),
        };
        if !matches!(driver, Driver::PerPacket { .. }) {
            m.state_end = SimTime::ZERO + m.draw_duration(false);
        }
        Ok(m)
    }

    /// Whether the channel is in the bad state (as of the last `is_lost`).
    pub fn is_bad(&self) -> bool {
        self.bad
    }

    fn draw_duration(&mut self, bad: bool) -> SimDuration {
        match self.driver {
            Driver::Exponential {
                mean_good,
                mean_bad,
            } => {
                let mean = if bad { mean_bad } else { mean_good };
                // `as` saturates; NaN cannot occur (mean > 0, ln of (0, 1]).
                SimDuration(self.state_rng.exponential(mean).round() as u64)
            }
            Driver::Uniform { good, bad: b } => {
                let (lo, hi) = if bad { b } else { good };
                SimDuration(self.state_rng.uniform_u64(lo, hi))
            }
            Driver::PerPacket { .. } => SimDuration::ZERO,
        }
    }

    /// Advances a time-driven machine so that `now` lies in the current state.
    fn advance_to(&mut self, now: SimTime) {
        while now >= self.state_end && self.state_end < SimTime::MAX {
            self.next_state();
        }
    }

    /// Enters the next state of a time-driven machine.
    fn next_state(&mut self) {
        self.bad = !self.bad;
        let d = self.draw_duration(self.bad);
        self.state_end += d;
    }

    fn loss_now(&self) -> f64 {
        if self.bad {
            self.loss_bad
        } else {
            self.loss_good
        }
    }

    fn lose(&mut self, p: f64) -> bool {
        if p >= 1.0 {
            true
        } else if p <= 0.0 {
            false
        } else {
            self.loss_rng.uniform() < p
        }
    }
}

impl ErrorModel for Markov {
    fn is_lost(&mut self, start: SimTime, end: SimTime, _size: u32) -> bool {
        let lost = match self.driver {
            Driver::PerPacket { p_gb, p_bg } => {
                let lost = self.lose(self.loss_now());
                let flip = if self.bad { p_bg } else { p_gb };
                if self.state_rng.bernoulli(flip) {
                    self.bad = !self.bad;
                }
                lost
            }
            _ => {
                // The state at the first bit, then every state that begins before the
                // last bit leaves (module doc): each may corrupt the frame.
                self.advance_to(start);
                let mut lost = self.lose(self.loss_now());
                while self.state_end < end && self.state_end < SimTime::MAX {
                    self.next_state();
                    lost |= self.lose(self.loss_now());
                }
                lost
            }
        };
        self.stats.record(lost)
    }

    fn stats(&self) -> ErrorStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::error::ErrorConfig;

    /// Poisson packet stream (mean gap 12 ms = one 1500 B packet time at 1 Mbit/s)
    /// over `secs` seconds; returns the realised PER.
    fn run_poisson(m: &mut Markov, secs: u64, seed: u64) -> f64 {
        let mut arrivals = RngStream::new(seed, "arrivals");
        let end = SimTime(SimDuration::from_secs(secs).0);
        let mut t = SimTime::ZERO;
        loop {
            t += SimDuration::from_secs_f64(arrivals.exponential(0.012));
            if t >= end {
                break;
            }
            m.is_lost(t, t, 1500);
        }
        m.stats().per()
    }

    #[test]
    fn presets_match_time_fraction() {
        // 10000 s of Poisson arrivals (~833000 packets). Error of the realised PER is
        // dominated by the number of good/bad cycles (renewal counting: relative sd
        // of the cycle count ~ sqrt(var(cycle) / (T * mean(cycle)))) plus the Poisson
        // noise of packets in bursts. Worst case is `low` (500 cycles of 20 s with
        // sd 5.8 s, 5 packets per burst): ~1.3% + ~2% -> ~2.4% relative. Over 200
        // seeds the relative sd measured 2.4% (low), 1.6% (medium), 1.4% (high),
        // 1.5% (vhigh), 1.2% (huge), bias < 0.2%. 10% relative tolerance is
        // >= 4 sd for every preset.
        let expected = [
            ("low", 0.06 / 20.06),
            ("medium", 0.2 / 10.2),
            ("high", 0.2 / 6.2),
            ("vhigh", 0.2 / 5.2),
            ("huge", 0.1 / 3.6),
        ];
        for (i, (name, want)) in expected.into_iter().enumerate() {
            let p = preset(name).unwrap();
            assert!((p.bad_fraction().unwrap() - want).abs() < 1e-12);
            let mut m = Markov::new(p, RngStream::new(11, "link:bottleneck:error")).unwrap();
            let per = run_poisson(&mut m, 10_000, 100 + i as u64);
            eprintln!(
                "preset {name}: realised PER {:.4}% vs time fraction {:.4}%",
                per * 100.0,
                want * 100.0
            );
            assert!((per / want - 1.0).abs() < 0.10, "{name}: {per} vs {want}");
        }
        assert!(preset("extreme").is_none());
    }

    #[test]
    fn per_packet_stationary_loss() {
        // p_gb 0.01, p_bg 0.1: bad fraction 0.01 / 0.11 = 0.0909. The chain's lag-1
        // correlation is 1 - 0.11 = 0.89, so the variance of the mean of n packets
        // is pi(1 - pi)(1 + 0.89)/(1 - 0.89)/n = 0.0826 * 17.2 / 2e6 -> sd 0.00084;
        // tolerance 0.0042 (5 sd).
        let p = MarkovParams::PerPacket {
            p_gb: 0.01,
            p_bg: 0.1,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let want = p.expected_per().unwrap();
        assert!((want - 0.01 / 0.11).abs() < 1e-15);
        let mut m = Markov::new(p, RngStream::new(3, "e")).unwrap();
        for _ in 0..2_000_000 {
            m.is_lost(SimTime::ZERO, SimTime::ZERO, 1500);
        }
        let per = m.stats().per();
        assert!((per - want).abs() < 0.0042, "{per} vs {want}");
    }

    #[test]
    fn sojourn_form_time_fraction() {
        // Exponential means 900 ms good, 100 ms bad, loss 1% good / 50% bad:
        // PER = 0.9 * 0.01 + 0.1 * 0.5 = 0.059. 10000 s = 10000 cycles of mean 1 s
        // and sd ~0.906 s: relative sd of the bad-time total ~1.4%, plus the loss
        // draws; tolerance 8% relative (>= 4 sd).
        let p = MarkovParams::Sojourn {
            mean_good: SimDuration::from_millis(900),
            mean_bad: SimDuration::from_millis(100),
            loss_good: 0.01,
            loss_bad: 0.5,
        };
        let want = p.expected_per().unwrap();
        assert!((want - 0.059).abs() < 1e-12);
        let mut m = Markov::new(p, RngStream::new(4, "e")).unwrap();
        let per = run_poisson(&mut m, 10_000, 9);
        assert!((per / want - 1.0).abs() < 0.08, "{per} vs {want}");
    }

    #[test]
    fn same_seed_same_losses_and_traffic_independent_timeline() {
        let mk =
            || Markov::new(preset("huge").unwrap(), RngStream::new(5, "link:x:error")).unwrap();
        // Same seed, same arrivals -> identical loss sequences.
        let (mut a, mut b) = (mk(), mk());
        for k in 0..200_000u64 {
            let t = SimTime(k * 1_000_000);
            assert_eq!(a.is_lost(t, t, 1500), b.is_lost(t, t, 1500));
        }
        assert!(a.stats().lost > 0);
        // A dense stream (every 1 ms) and a sparse one (every 7 ms) see the same
        // channel at their common instants: durations are drawn only at state changes.
        let (mut dense, mut sparse) = (mk(), mk());
        for k in 0..1_400_000u64 {
            let t = SimTime(k * 1_000_000);
            let d = dense.is_lost(t, t, 1500);
            if k % 7 == 0 {
                assert_eq!(d, sparse.is_lost(t, t, 40), "at {t}");
            }
        }
        // A different seed gives a different pattern.
        let mut c =
            Markov::new(preset("huge").unwrap(), RngStream::new(6, "link:x:error")).unwrap();
        let mut differ = false;
        let mut a2 = mk();
        for k in 0..200_000u64 {
            let t = SimTime(k * 1_000_000);
            differ |= a2.is_lost(t, t, 1500) != c.is_lost(t, t, 1500);
        }
        assert!(differ);
    }

    #[test]
    fn starts_good_and_switches_at_state_end() {
        // good exactly 2 s, bad exactly 100 ms: good [0, 2 s), bad [2 s, 2.1 s), ...
        let p = MarkovParams::TimeSeries {
            good_min: SimDuration::from_secs(2),
            good_max: SimDuration::from_secs(2),
            bad_min: SimDuration::from_millis(100),
            bad_max: SimDuration::from_millis(100),
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut m = Markov::new(p, RngStream::new(0, "e")).unwrap();
        assert!(!m.is_lost(SimTime(0), SimTime(0), 1500));
        assert!(!m.is_lost(SimTime(1_999_999_999), SimTime(1_999_999_999), 1500));
        assert!(m.is_lost(SimTime(2_000_000_000), SimTime(2_000_000_000), 1500));
        assert!(m.is_lost(SimTime(2_099_999_999), SimTime(2_099_999_999), 1500));
        assert!(!m.is_lost(SimTime(2_100_000_000), SimTime(2_100_000_000), 1500));
        // Jumping over many cycles (each 2.1 s): bursts at [2.0, 2.1), [4.1, 4.2), [6.2, 6.3), [8.3, 8.4),
        // [10.4, 10.5). 10.45 s is bad; 10.5 s is good.
        assert!(m.is_lost(SimTime(10_450_000_000), SimTime(10_450_000_000), 1500));
        assert!(!m.is_lost(SimTime(10_500_000_000), SimTime(10_500_000_000), 1500));
        assert_eq!(
            m.stats(),
            ErrorStats {
                packets: 7,
                lost: 3
            }
        );
    }

    /// ns-2 `TwoStateErrorModel`: a packet whose transmission overlaps a bad period
    /// at any point is lost. Good [0, 2 s), bad [2 s, 2.1 s), good [2.1 s, 4.1 s), ...
    #[test]
    fn a_frame_is_lost_if_any_of_its_airtime_meets_a_bad_state() {
        let p = MarkovParams::TimeSeries {
            good_min: SimDuration::from_secs(2),
            good_max: SimDuration::from_secs(2),
            bad_min: SimDuration::from_millis(100),
            bad_max: SimDuration::from_millis(100),
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut m = Markov::new(p, RngStream::new(0, "e")).unwrap();
        let ms = |x: u64| SimTime(x * 1_000_000);
        // Its last bit leaves as the burst starts: every bit was sent in the good state.
        assert!(!m.is_lost(ms(1_900), ms(2_000), 1500));
        // Its last bit is in the burst.
        assert!(m.is_lost(SimTime(1_950_000_000), SimTime(2_000_000_001), 1500));
        // Starts in the burst and ends after it: lost, where judging the instant the
        // frame ends (the earlier rule) kept it.
        assert!(m.is_lost(ms(2_050), ms(2_140), 1500));
        // Starts as the burst ends.
        assert!(!m.is_lost(ms(2_100), ms(2_190), 1500));
        // Spans the whole next burst ([4.1, 4.2)) from good to good: lost (the earlier
        // rule kept it too).
        assert!(m.is_lost(ms(4_050), ms(4_250), 1500));
        assert!(!m.is_lost(ms(4_250), ms(6_100), 1500));
        assert_eq!(m.stats(), ErrorStats { packets: 6, lost: 3 });
    }

    /// Back-to-back frames of `airtime` (a saturated link) over `secs`; realised PER.
    fn run_saturated(m: &mut Markov, secs: u64, airtime: SimDuration) -> f64 {
        let end = SimTime(SimDuration::from_secs(secs).0);
        let mut t = SimTime::ZERO;
        while t + airtime <= end {
            m.is_lost(t, t + airtime, 1450);
            t += airtime;
        }
        m.stats().per()
    }

    /// Seed 004's return link: 128 kbit/s, MTU 1450 B, so a frame is on the air for
    /// 1450 * 8 / 128000 = 90.625 ms, as long as a burst. A frame escapes only inside
    /// a good period, so a saturated link loses 1 - E[(good - a)+] / E[cycle]
    /// (`expected_frame_loss`), not the time fraction in the bad state that the
    /// end-instant rule gave (0.30, 1.96, 3.23, 3.85, 2.78%): 0.751, 2.85, 4.69,
    /// 5.58, 5.28%. The seed's "Avg PER" column (1-1.5, 3-4, 5-6, 7-8, 13-15%) stays
    /// above both; the module doc says why no frame rule meets it.
    /// 200 000 s per preset (2.2 million frames; 10 000 to 55 000 good/bad cycles).
    /// The realised PER is a renewal-reward ratio whose error falls as 1/sqrt(cycles);
    /// over 20 seeds its relative sd measured 0.42 (low), 0.27, 0.21, 0.29 and 0.19%
    /// (huge), bias under 0.12%. Tolerance 2.5% relative: 6 sd for low, more for the
    /// others, while the end-instant rule's values lie 31-60% below.
    #[test]
    fn presets_lose_frames_by_their_airtime_on_the_seed_004_return_link() {
        let a = SimDuration(90_625_000);
        assert_eq!(crate::time::Rate(128_000).tx_time(1450), a);
        let expected = [("low", 0.00751), ("medium", 0.0285), ("high", 0.0469), ("vhigh", 0.0558), ("huge", 0.0528)];
        for (i, (name, table)) in expected.into_iter().enumerate() {
            let p = preset(name).unwrap();
            let want = p.expected_frame_loss(a).unwrap();
            assert!((want - table).abs() < 0.00006, "{name}: closed form {want} vs the module doc's {table}");
            let mut m = Markov::new(p.clone(), RngStream::new(21 + i as u64, "link:return:error")).unwrap();
            let per = run_saturated(&mut m, 200_000, a);
            eprintln!(
                "preset {name}: realised PER {:.3}% (closed form {:.3}%, time fraction {:.3}%)",
                per * 100.0,
                want * 100.0,
                p.bad_fraction().unwrap() * 100.0
            );
            assert!((per / want - 1.0).abs() < 0.025, "{name}: {per} vs {want}");
        }
    }

    #[test]
    fn bad_params_are_rejected() {
        let e = |p: MarkovParams| Markov::new(p, RngStream::new(0, "e")).err().unwrap();
        let ts = |gmin: u64, gmax: u64, bmin: u64, bmax: u64| MarkovParams::TimeSeries {
            good_min: SimDuration(gmin),
            good_max: SimDuration(gmax),
            bad_min: SimDuration(bmin),
            bad_max: SimDuration(bmax),
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        assert!(e(ts(5, 4, 1, 1)).contains("error.good_min must not exceed error.good_max"));
        assert!(e(ts(1, 4, 3, 2)).contains("error.bad_min must not exceed error.bad_max"));
        assert!(e(ts(0, 0, 0, 0)).contains("cannot both be zero"));
        let pp = |p_gb, p_bg, loss_bad| MarkovParams::PerPacket {
            p_gb,
            p_bg,
            loss_good: 0.0,
            loss_bad,
        };
        assert!(e(pp(1.2, 0.1, 1.0)).contains("error.p_gb"));
        assert!(e(pp(0.1, -0.1, 1.0)).contains("error.p_bg"));
        assert!(e(pp(0.1, f64::NAN, 1.0)).contains("error.p_bg"));
        assert!(e(pp(0.1, 0.1, 1.01)).contains("error.loss_bad"));
        assert!(e(MarkovParams::Sojourn {
            mean_good: SimDuration(0),
            mean_bad: SimDuration(1),
            loss_good: 0.0,
            loss_bad: 1.0
        })
        .contains("error.mean_good"));
        assert!(e(MarkovParams::Preset {
            name: "Medium".into()
        })
        .contains("unknown markov preset"));
    }

    #[test]
    fn serde_forms() {
        let cfg: ErrorConfig = serde_json::from_str(
            r#"{"kind": "markov", "form": "time_series", "good_min": 5000000000,
                "good_max": 15000000000, "bad_min": 100000000, "bad_max": 300000000}"#,
        )
        .unwrap();
        assert_eq!(cfg, ErrorConfig::Markov(preset("medium").unwrap()));
        assert!(cfg.build(RngStream::new(0, "e")).is_ok());
        let cfg: ErrorConfig =
            serde_json::from_str(r#"{"kind": "markov", "form": "preset", "name": "vhigh"}"#)
                .unwrap();
        assert!(cfg.build(RngStream::new(0, "e")).is_ok());
        let cfg: ErrorConfig = serde_json::from_str(
            r#"{"kind": "markov", "form": "per_packet", "p_gb": 0.01, "p_bg": 0.5}"#,
        )
        .unwrap();
        let ErrorConfig::Markov(MarkovParams::PerPacket {
            loss_good,
            loss_bad,
            ..
        }) = cfg
        else {
            panic!()
        };
        assert_eq!((loss_good, loss_bad), (0.0, 1.0));
        // Unknown fields are refused.
        assert!(serde_json::from_str::<ErrorConfig>(
            r#"{"kind": "markov", "form": "per_packet", "p_gb": 0.01, "p_bg": 0.5, "pgb": 1}"#
        )
        .is_err());
        // Round trip.
        let p = preset("huge").unwrap();
        let s = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<MarkovParams>(&s).unwrap(), p);
    }
}
