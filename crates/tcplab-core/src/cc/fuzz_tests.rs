//! Model-based fuzzing of every registered congestion control (after s2n-quic's
//! congestion-controller fuzz tests), through the testkit's `TestSender`.
//!
//! Each case draws a sender from a seeded xorshift generator: MSS, IW, per-ACK or byte
//! counting, ABC limit L, RTT, and one of the algorithm's parameter variants. It then
//! runs `OPS` random operations:
//! - send within cwnd (at most 64 segments);
//! - `ack_n` of 1-16 segments in flight;
//! - `lose`, only with at least 4 segments in flight (fast retransmit needs 3 duplicate
//!   ACKs);
//! - `rto` with data in flight;
//! - advance the clock (up to 2 RTT, sometimes an idle 10 s);
//! - change the RTT (1 ms to 1 s);
//! - `fill`.
//!
//! The loss and RTO rates are drawn per case (1, 10 or 60 losses per 1000 operations),
//! so some cases reach large windows and others stay small and loss-heavy.
//!
//! Invariants:
//! - no panic;
//! - after every operation, MSS <= cwnd < 2^48 bytes (a NaN or infinite f64 cast to u64
//!   gives 0 or u64::MAX) and no `trace()` value is infinite (NaN marks an unset
//!   variable in some algorithms' traces);
//! - after `lose` and `rto`, cwnd has not grown and ssthresh >= 2 MSS;
//! - replaying a seed gives the same cwnd trajectory.
//!
//! A coverage check makes sure the cases reach what is being tested: some case passes
//! 1000 segments of 536 B, and each algorithm's own states are visited (CUBIC: an
//! epoch with K > 0, a HyStart exit, HyStart++ CSS; BIC: W_max; H-TCP: an RTT-ratio
//! backoff above 0.5 and a throughput sample; Westwood+: a bandwidth estimate).
//!
//! `CASES` x `OPS` = 500 x 2000 per algorithm; the algorithms run on parallel threads.

use super::testkit::TestSender;
use super::{registry, CcEntry, Window};
use crate::time::SimDuration;
use serde_json::{json, Value};

const CASES: u64 = 500;
const OPS: usize = 2000;
/// Largest plausible cwnd, bytes; above it a float overflowed on the way to u64.
const CWND_SANITY_LIMIT: u64 = 1 << 48;

/// xorshift64 (Marsaglia 2003), seeded per case through SplitMix64 so that nearby seeds
/// give unrelated streams; inline so the test owns its stream.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        XorShift((z ^ (z >> 31)) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// Uniform-ish in [0, n) (modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Parameter objects each algorithm is fuzzed with; `{}` (the defaults) first.
fn variants(name: &str) -> Vec<Value> {
    let mut v = vec![json!({})];
    match name {
        "cubic" => v.extend([
            json!({"hystart_plus_plus": true}),
            json!({"hystart": false, "fast_convergence": false, "reno_friendly": false}),
            json!({"rto_resets_w_max": true, "hystart_low_window": 2}),
        ]),
        "bic" => v.push(json!({"fast_convergence": false, "low_window": 2})),
        "highspeed" => v.push(json!({"low_window": 2.0})),
        "scalable" => v.push(json!({"low_window": 100})),
        "htcp" => v.push(json!({"use_rtt_scaling": false, "use_bandwidth_switch": false})),
        _ => {}
    }
    v
}

/// A state the fuzz must reach in at least one case of an algorithm: a trace value
/// satisfying a predicate, seen after some operation.
type Coverage = (&'static str, fn(f64) -> bool);

/// The states that show a case exercised an algorithm's own machinery.
fn coverage(name: &str) -> Vec<Coverage> {
    match name {
        "cubic" => vec![
            ("k", |k| k > 0.0),                   // an epoch that starts below W_max
            ("hystart_found", |f| f == 1.0),      // HyStart ended a slow start
            ("hystart_pp_phase", |p| p == 1.0),   // HyStart++ in CSS
        ],
        "bic" => vec![("w_max", |m| m > 0.0)],
        "htcp" => vec![("beta", |b| b > 0.5), ("max_b", |b| b > 0.0)],
        "westwood" => vec![("bwe", |b| b > 0.0)],
        _ => Vec::new(),
    }
}

/// What one case produced.
struct Outcome {
    /// cwnd after every operation.
    cwnds: Vec<u64>,
    /// Which of `coverage(name)` the case reached.
    covered: Vec<bool>,
}

/// Runs one case.
fn run_case(entry: &CcEntry, seed: u64) -> Outcome {
    let mut rng = XorShift::new(seed);
    let variants = variants(entry.name);
    let params = &variants[rng.below(variants.len() as u64) as usize];
    let mss = [536u32, 1000, 1460, 8960][rng.below(4) as usize];
    let byte_counting = rng.below(2) == 0;
    let iw = 1 + rng.below(10);
    let abc_limit = 1 + rng.below(3) as u32;
    let w = Window::new(iw * mss as u64, u64::MAX, mss, byte_counting, abc_limit);
    let cc = (entry.build)(params, &w)
        .unwrap_or_else(|e| panic!("{} {params}: {e}", entry.name));
    let mut t = TestSender::new(cc, mss, iw, byte_counting);
    t.w.abc_limit = abc_limit;
    t.rtt = SimDuration::from_micros(1_000 + rng.below(500_000));
    let mss = mss as u64;
    let ctx = |op: usize| format!("{} seed {seed} op {op} params {params}", entry.name);
    // "A loss never raises cwnd" holds for loss-based algorithms; BBR is model-based
    // and keeps cwnd >= 4 packets even after a timeout.
    let loss_based = entry.name != "bbr";

    // Per-case loss and RTO rates (per 1000 operations), so that some cases reach large
    // windows (HighSpeed, Scalable and CUBIC's convex region, HyStart) and others stay
    // in the small-window, loss-heavy corner.
    let lose_rate = [1, 10, 60][rng.below(3) as usize];
    let rto_rate = lose_rate + [0, 2, 20][rng.below(3) as usize];

    let wanted = coverage(entry.name);
    let mut covered = vec![false; wanted.len()];
    let mut cwnds = Vec::with_capacity(OPS);
    for op in 0..OPS {
        let room = (t.w.cwnd / mss).saturating_sub(t.in_flight);
        match rng.below(1000) {
            r if r < lose_rate => {
                if t.in_flight >= 4 {
                    let before = t.w.cwnd;
                    t.lose();
                    assert!(!loss_based || t.w.cwnd <= before, "{}: lose raised cwnd {before} -> {}", ctx(op), t.w.cwnd);
                    assert!(t.w.ssthresh >= 2 * mss, "{}: ssthresh {} after lose", ctx(op), t.w.ssthresh);
                }
            }
            r if r < rto_rate => {
                if t.in_flight > 0 {
                    let before = t.w.cwnd;
                    t.rto();
                    assert!(!loss_based || t.w.cwnd <= before, "{}: rto raised cwnd {before} -> {}", ctx(op), t.w.cwnd);
                    assert!(t.w.ssthresh >= 2 * mss, "{}: ssthresh {} after rto", ctx(op), t.w.ssthresh);
                }
            }
            r if r < 400 => {
                if room > 0 {
                    t.send(1 + rng.below(room.min(64)));
                }
            }
            r if r < 800 => {
                if t.in_flight > 0 {
                    t.ack_n(1 + rng.below(t.in_flight.min(16)));
                }
            }
            r if r < 950 => {
                let dt = if rng.below(50) == 0 {
                    SimDuration::from_secs(10)
                } else {
                    SimDuration(rng.below(2 * t.rtt.0 + 1))
                };
                t.advance(dt);
            }
            r if r < 980 => t.rtt = SimDuration::from_micros(1_000 + rng.below(999_000)),
            _ => {
                if room <= 256 {
                    t.fill();
                }
            }
        }
        assert!(t.w.cwnd >= mss, "{}: cwnd {} < MSS", ctx(op), t.w.cwnd);
        assert!(t.w.cwnd < CWND_SANITY_LIMIT, "{}: cwnd {}", ctx(op), t.w.cwnd);
        for (k, v) in t.cc.trace() {
            assert!(!v.is_infinite(), "{}: trace {k} = {v}", ctx(op));
            for (i, (key, pred)) in wanted.iter().enumerate() {
                covered[i] |= *key == k && pred(v);
            }
        }
        cwnds.push(t.w.cwnd);
    }
    Outcome { cwnds, covered }
}

#[test]
fn every_algorithm_survives_random_operations_and_replays() {
    std::thread::scope(|s| {
        for entry in registry() {
            s.spawn(move || {
                let wanted = coverage(entry.name);
                let mut covered = vec![false; wanted.len()];
                let mut largest_cwnd = 0;
                for case in 0..CASES {
                    let seed = 0x5eed_0000 + case;
                    let first = run_case(entry, seed);
                    let replay = run_case(entry, seed);
                    assert_eq!(first.cwnds, replay.cwnds, "{} seed {seed}: replay differs", entry.name);
                    for (c, hit) in covered.iter_mut().zip(&first.covered) {
                        *c |= hit;
                    }
                    largest_cwnd = largest_cwnd.max(*first.cwnds.iter().max().unwrap());
                }
                // Coverage: the cases reach large windows (HighSpeed's a(w) > 1, Scalable's
                // 0.01 regime, CUBIC's convex region) and each algorithm's own states.
                assert!(largest_cwnd >= 1000 * 536, "{}: largest cwnd {largest_cwnd} B", entry.name);
                for ((key, _), hit) in wanted.iter().zip(&covered) {
                    assert!(hit, "{}: no case reached the {key} state", entry.name);
                }
            });
        }
    });
}

#[test]
fn registry_params_are_consistent() {
    let w = Window::new(14_600, u64::MAX, 1460, true, 2);
    let mut names: Vec<&str> = registry().iter().map(|e| e.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), registry().len(), "duplicate registry names");
    for entry in registry() {
        // Every documented parameter is accepted at its default value.
        for p in (entry.params)() {
            let value = if p.unit == "bool" {
                json!(p.default != 0.0)
            } else if p.default.fract() == 0.0 {
                json!(p.default as i64) // integer fields reject 16.0
            } else {
                json!(p.default)
            };
            let obj = json!({ p.name: value });
            assert!((entry.build)(&obj, &w).is_ok(), "{}: {obj} rejected", entry.name);
        }
        // Unknown fields are rejected, naming the field.
        let err = (entry.build)(&json!({"no_such_param": 1}), &w).err().unwrap();
        assert!(err.contains("no_such_param"), "{}: {err}", entry.name);
    }
}
