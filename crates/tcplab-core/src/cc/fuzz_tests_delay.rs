//! Model-based fuzzing of the delay-aware batch (after s2n-quic's congestion-control
//! fuzz tests): compound, areno, vegas, illinois and bbr are driven through the
//! `TestSender` by random sequences of send / ack_n / round_trip_all / lose / rto /
//! advance / RTT-change operations.
//!
//! Invariants checked after every operation:
//! - no panic;
//! - cwnd >= 1 MSS (BBR: >= 4 MSS) and below 2^48 bytes (no overflow or NaN/inf cast);
//!   ssthresh >= 2 MSS; trace values never infinite; BBR always has a pacing rate > 0;
//! - for the loss-based algorithms with a delay signal (compound, areno, vegas,
//!   illinois) a loss (fast retransmit or RTO) never raises cwnd, beyond the RFC 5681
//!   floor of 2 MSS for ssthresh (a flow at 1 MSS may go to 2 MSS);
//! - the same seed replays the identical sequence of windows and final trace.
//!
//! A coverage check makes sure the cases reach the states the delay machinery lives in
//! (Compound's dwnd > 0, AReno's c > 0, Vegas' Diff > beta, Illinois' alpha > 1, BBR's
//! ProbeRTT): half the cases are "calm" (rare losses, a slowly drifting RTT) so windows
//! grow, half are "lossy" (frequent losses and RTOs, RTT jumps in 1 ms..1 s).
//!
//! Sends are cwnd-limited, as a real sender's are. 500 cases x 2000 operations per
//! algorithm, each run twice; the generator is an inline xorshift64* so the cases never
//! change.

use super::testkit::TestSender;
use super::{build, CcSpec, Window};
use crate::time::SimDuration;
use std::collections::BTreeMap;

const CASES: u64 = 500;
const OPS: usize = 2000;
const ALGORITHMS: [&str; 5] = ["compound", "areno", "vegas", "illinois", "bbr"];
/// Loss-based algorithms with a delay signal: a loss must never raise cwnd.
const LOSS_NEVER_RAISES: [&str; 4] = ["compound", "areno", "vegas", "illinois"];

/// xorshift64* (Vigna 2016).
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        XorShift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in lo..=hi.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// What a case produced, compared between two runs of the same seed.
#[derive(Debug)]
struct Outcome {
    windows: Vec<(u64, u64)>,
    trace_bits: Vec<(&'static str, u64)>,
    pacing: Option<u64>,
    /// Largest value each trace variable took during the case (coverage).
    peaks: BTreeMap<&'static str, f64>,
}

fn run_case(name: &str, seed: u64) -> Outcome {
    let mut rng = XorShift::new(seed ^ (name.len() as u64) << 56);
    let mss = [536u32, 1000, 1460, 9000][rng.range(0, 3) as usize];
    let min_iw = if name == "bbr" { 4 } else { 1 };
    let iw = rng.range(min_iw, 16);
    let byte_counting = rng.chance(50);
    // Half the cases are calm (rare losses, steady RTT) so windows grow large enough
    // for the delay machinery (dwnd, Illinois' alpha, BBR's ProbeBW) to engage.
    let calm = rng.chance(50);
    let params = match name {
        "compound" => serde_json::json!({ "gamma_auto": rng.chance(50) }),
        "bbr" if rng.chance(50) => serde_json::json!({ "cycle_start": rng.range(0, 7) }),
        "bbr" => serde_json::json!({ "seed": rng.next() }),
        _ => serde_json::json!({}),
    };
    let w0 = Window::new(iw * mss as u64, u64::MAX, mss, byte_counting, 2);
    let cc = build(&CcSpec { name: name.into(), params }, &w0).expect("builds");
    let mut t = TestSender::new(cc, mss, iw, byte_counting);
    t.rtt = SimDuration::from_millis(rng.range(1, 500));
    let mss = mss as u64;
    let floor = if name == "bbr" { 4 * mss } else { mss };
    let loss_checked = LOSS_NEVER_RAISES.contains(&name);
    let mut windows = Vec::with_capacity(OPS);
    let mut peaks = BTreeMap::new();

    for op in 0..OPS {
        let before = t.w.cwnd;
        let mut was_loss = false;
        match rng.range(0, 99) {
            // Send up to the window (cwnd-limited).
            0..=19 => {
                let room = (t.w.cwnd / mss).saturating_sub(t.in_flight);
                if room > 0 {
                    t.send(rng.range(1, room.min(64)));
                }
            }
            // One ACK for 1..=4 segments (delayed/stretch ACKs).
            20..=59 => {
                if t.in_flight > 0 {
                    let n = rng.range(1, t.in_flight.min(4));
                    t.ack_n(n);
                }
            }
            // A whole round trip, kept small so a case runs in milliseconds.
            60..=63 => {
                if t.w.cwnd / mss <= 256 {
                    t.round_trip_all();
                }
            }
            64..=70 => {
                if t.in_flight > 0 && (!calm || rng.chance(3)) {
                    t.lose();
                    was_loss = true;
                }
            }
            71..=73 => {
                if !calm || rng.chance(3) {
                    t.rto();
                    was_loss = true;
                }
            }
            // Time passes: usually within an RTT, sometimes past BBR's 10 s window.
            74..=89 => {
                let ms = if rng.chance(5) { rng.range(1_000, 12_000) } else { rng.range(0, 300) };
                t.advance(SimDuration::from_millis(ms));
            }
            // The path's RTT changes (queue builds or drains, route change).
            _ => {
                if !calm || rng.chance(10) {
                    t.rtt = SimDuration::from_millis(rng.range(1, 1000));
                } else {
                    // A calm path: the RTT drifts within 1.5x of its value.
                    let base = t.rtt.as_nanos();
                    let drift = rng.range(base * 2 / 3, base * 3 / 2);
                    t.rtt = SimDuration(drift.clamp(1_000_000, 2_000_000_000));
                }
            }
        }

        let ctx = || format!("{name} seed {seed} op {op}: cwnd {} (was {before})", t.w.cwnd);
        assert!(t.w.cwnd >= floor, "cwnd below floor, {}", ctx());
        assert!(t.w.cwnd < 1 << 48, "cwnd runaway, {}", ctx());
        assert!(t.w.ssthresh >= 2 * mss, "ssthresh {} < 2 MSS, {}", t.w.ssthresh, ctx());
        if was_loss && loss_checked {
            assert!(t.w.cwnd <= before.max(2 * mss), "a loss raised cwnd, {}", ctx());
        }
        for (k, v) in t.cc.trace() {
            assert!(!v.is_infinite(), "trace {k} = {v}, {}", ctx());
            let peak = peaks.entry(k).or_insert(f64::NEG_INFINITY);
            *peak = peak.max(v);
        }
        if name == "bbr" {
            assert!(t.cc.pacing_rate().is_some_and(|r| r.0 > 0), "no pacing rate, {}", ctx());
        }
        windows.push((t.w.cwnd, t.w.ssthresh));
    }
    Outcome {
        windows,
        trace_bits: t.cc.trace().into_iter().map(|(k, v)| (k, v.to_bits())).collect(),
        pacing: t.cc.pacing_rate().map(|r| r.0),
        peaks,
    }
}

fn case_seed(case: u64) -> u64 {
    0xdecade ^ case.wrapping_mul(0x0100_0000_01b3)
}

#[test]
fn fuzz_delay_batch_invariants_and_replay() {
    for name in ALGORITHMS {
        let mut peaks: BTreeMap<&'static str, f64> = BTreeMap::new();
        for case in 0..CASES {
            let seed = case_seed(case);
            let first = run_case(name, seed);
            // Replay every case: same seed, same windows, same final state.
            let again = run_case(name, seed);
            assert_eq!(first.windows, again.windows, "{name} seed {seed} does not replay");
            assert_eq!(first.trace_bits, again.trace_bits, "{name} seed {seed}: trace differs");
            assert_eq!(first.pacing, again.pacing, "{name} seed {seed}: pacing differs");
            for (k, v) in first.peaks {
                let p = peaks.entry(k).or_insert(f64::NEG_INFINITY);
                *p = p.max(v);
            }
        }
        // Coverage: the cases reach the states the delay machinery lives in.
        let peak = |k: &str| peaks.get(k).copied().unwrap_or(f64::NAN);
        match name {
            "compound" => assert!(peak("dwnd_bytes") > 0.0, "compound never grew dwnd"),
            "areno" => assert!(peak("c") > 0.0, "areno never saw c > 0"),
            "vegas" => assert!(peak("diff_pkts") > 4.0, "vegas never saw diff > beta"),
            "illinois" => assert!(peak("alpha") > 1.0, "illinois never left alpha = 1"),
            "bbr" => assert_eq!(peak("mode"), 3.0, "bbr never reached ProbeRTT"),
            _ => unreachable!(),
        }
    }
}

#[test]
fn fuzz_cases_differ_between_seeds() {
    // Guards the harness itself: distinct seeds must explore distinct paths.
    for name in ALGORITHMS {
        assert_ne!(run_case(name, 1).windows, run_case(name, 2).windows, "{name}");
    }
}
