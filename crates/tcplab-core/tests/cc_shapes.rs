//! Whole-simulation shape checks of congestion controls.

mod common;
use common::*;
use serde_json::json;

/// BBR v1 on a 100 Mbit/s, 50 ms RTT single-flow dumbbell with a 2-BDP buffer:
/// - the steady-state queue stays below 1 BDP (BBR aims at cwnd = 2 BDP in flight,
///   i.e. at most 1 BDP queued; draft-cardwell-iccrg-bbr §4.2.3);
/// - ProbeRTT dips (cwnd down to 4 packets) recur about every 10 s (§4.3.4).
///
/// RTT = 2 * (24 + 1) ms = 50 ms; BDP = 100e6 * 0.05 / 8 / 1500 = 417 packets.
#[test]
fn bbr_keeps_queue_below_bdp_and_probes_rtt_every_10s() {
    let bdp = 417u32;
    let sc = scenario(
        dumbbell(1, 100_000_000, 24, 2 * bdp, 1),
        vec![{
            let mut f = tcp_flow("s0", "d0", None, json!({"profile": "linux"}));
            f["cc"] = json!({"name": "bbr"});
            f
        }],
        json!({"duration": 45 * S, "record": {"cwnd": true, "queue": ["bottleneck"]}}),
    );
    let r = run(&sc, 1);
    let util = r.links.utilisation[r.links.link.iter().position(|l| l == "bottleneck").unwrap()];
    // Queue after start-up (t > 5 s): below 1 BDP.
    let q = &r.series.queue;
    let max_q = q.t_s.iter().zip(&q.pkts).filter(|(t, _)| **t > 5.0).map(|(_, p)| *p).max().unwrap();
    // ProbeRTT dips: cwnd at 4 packets in the Open state (state 0; a timeout's
    // cwnd of 1 MSS during start-up overshoot is state 2); start time of each dip.
    let c = &r.series.cwnd;
    let mut dips = Vec::new();
    for k in 1..c.t_s.len() {
        if c.cwnd_bytes[k] <= 4 * 1460 && c.cwnd_bytes[k - 1] > 4 * 1460 && c.state[k] == 0 {
            dips.push(c.t_s[k]);
        }
    }
    eprintln!("utilisation {util:.3}, max queue after 5 s {max_q} pkts (BDP {bdp}), ProbeRTT dips at {dips:?}");
    assert!(util > 0.9, "BBR should fill the pipe: {util}");
    assert!(max_q < bdp, "queue {max_q} >= BDP {bdp}");
    assert!(dips.len() >= 3, "expected ProbeRTT dips every ~10 s in 45 s: {dips:?}");
    for w in dips.windows(2) {
        let gap = w[1] - w[0];
        // 10 s min-RTT window + 200 ms ProbeRTT hold + about one RTT = 10.25 s; the
        // window restarts only on a strictly lower RTT (Linux), which a steady path
        // does not produce. Tolerance +-0.5 s.
        assert!((9.75..10.75).contains(&gap), "ProbeRTT gap {gap:.2} s");
    }
}

/// Long-run goodput of one bulk flow with algorithm `cc` under Bernoulli loss `p` on
/// a 1 Gbit/s, 100 ms RTT path (never the bottleneck at these windows).
fn loss_limited_goodput(cc: serde_json::Value, p: f64, secs: u64) -> f64 {
    let mut topo = dumbbell(1, 1_000_000_000, 49, 100_000, 1);
    topo["bottleneck"]["error"] = json!({"kind": "bernoulli", "per": p});
    let mut f = tcp_flow("s0", "d0", None,
        json!({"profile": "ns2-sack", "min_rto": 200 * MS, "limited_transmit": true, "rcv_buffer": 1u64 << 32}));
    f["cc"] = cc;
    let sc = scenario(topo, vec![f], json!({"duration": secs * S}));
    let mut sum = 0.0;
    for seed in 1..=2 {
        sum += run(&sc, seed).flows.goodput_bps[0];
    }
    sum / 2.0
}

/// Response functions (window in segments vs loss rate p) in whole simulations,
/// within 25% (the tolerance; the formulas are steady-state averages that
/// ignore recovery episodes). RTT 100 ms (+ serialization), ACK per segment, the
/// 200 ms Linux minimum RTO so that timeouts (outside every formula) stay cheap.
///
/// - HighSpeed, RFC 3649 §5: w = 0.12 / p^0.835 above Low_Window = 38 segments; at or
///   below it HighSpeed is standard TCP (RFC 3649 §4), w = sqrt(3 / (2 p)).
/// - Scalable (Kelly 2003): per-RTT increase a*w, decrease b*w per loss, so
///   a*w = b*w * p*w, w = a / (b p) = 0.01 / (0.125 p) = 0.08 / p, above its low
///   window (50); below it the increase is Reno's 1 per RTT with the decrease still
///   1/8, i.e. AIMD(1, 0.125), whose average window is sqrt(a (2 - b) / (2 b p))
///   (Floyd, Handley, Padhye 2000).
/// - CUBIC, RFC 9438 §5: the average window is the larger of
///   AVG_W_cubic = (C (3 + beta) / (4 (1 - beta)))^(1/4) * RTT^(3/4) / p^(3/4)
///   and the Reno-friendly AVG_W_est = sqrt(3 / (2 p)) (alpha_cubic keeps Reno's rate).
#[test]
fn response_functions_match_published_formulas() {
    let rtt = 0.100 + 1500.0 * 8.0 / 1e9 * 3.0;
    let seg_rate = |w: f64| w * 1460.0 * 8.0 / rtt;
    let cubic_w = |p: f64| {
        let (c, beta) = (0.4f64, 0.7f64);
        let cubic = (c * (3.0 + beta) / (4.0 * (1.0 - beta))).powf(0.25) * rtt.powf(0.75) / p.powf(0.75);
        cubic.max((1.5 / p).sqrt())
    };
    let aimd = |a: f64, b: f64, p: f64| (a * (2.0 - b) / (2.0 * b * p)).sqrt();
    let highspeed_w = |p: f64| {
        let w = 0.12 / p.powf(0.835);
        if w > 38.0 { w } else { aimd(1.0, 0.5, p) }
    };
    let scalable_w = |p: f64| {
        let w = 0.08 / p;
        if w > 50.0 { w } else { aimd(1.0, 0.125, p) }
    };
    let cases: Vec<(&str, f64, f64)> = vec![
        ("highspeed", 1e-4, highspeed_w(1e-4)),
        ("highspeed", 1e-3, highspeed_w(1e-3)),
        ("highspeed", 1e-2, highspeed_w(1e-2)),
        ("scalable", 1e-4, scalable_w(1e-4)),
        ("scalable", 1e-3, scalable_w(1e-3)),
        ("scalable", 1e-2, scalable_w(1e-2)),
        ("cubic", 1e-4, cubic_w(1e-4)),
        ("cubic", 1e-3, cubic_w(1e-3)),
        ("cubic", 1e-2, cubic_w(1e-2)),
    ];
    let mut failures = Vec::new();
    for (cc, p, w) in cases {
        // Enough simulated time for >= ~300 loss events: w/RTT segments per second.
        let secs = ((300.0 / p) / (w / rtt)).clamp(60.0, 600.0) as u64;
        let got = loss_limited_goodput(json!({"name": cc}), p, secs);
        let model = seg_rate(w);
        let err = (got - model) / model;
        eprintln!("{cc} p={p}: goodput {got:.0} bit/s, model {model:.0} bit/s (w={w:.1}), error {:+.1}% ({secs} s)", err * 100.0);
        if err.abs() > 0.25 {
            failures.push(format!("{cc} p={p}: {:+.1}%", err * 100.0));
        }
    }
    assert!(failures.is_empty(), "outside 25%: {failures:?}");
}

/// CUBIC after a loss on a 100 Mbit/s, 50 ms RTT single-flow dumbbell (1-BDP buffer):
/// the window follows W(t) = C (t - K)^3 + W_max (RFC 9438 §4.2, Eq. 1) from the end of
/// recovery: concave growth that flattens into a plateau at W_max after
/// K = cbrt(W_max (1 - beta) / C) seconds (Eq. 2). Fast convergence is off so W_max
/// is the window at the loss.
///
/// RTT = 2 * (24 + 1) ms = 50 ms; BDP = 417 packets; W_max ~ 2 BDP = 834 packets
/// -> K = cbrt(834 * 0.3 / 0.4) = 8.55 s.
///
/// Checks, per loss epoch: cwnd at K/4, K/2 and 3K/4 within 10% of the cubic curve's
/// *growth* (this pins the timescale K), the plateau at t = 0.8 K (where the curve is
/// 0.4 * (0.2 K)^3 = 2 packets below W_max) within 2% of W_max, and more growth in the
/// first half of K than in the second (concave). With a drop-tail buffer the path
/// saturates one packet below W_max, which the curve reaches cbrt(1 / C) = 1.36 s
/// before K, so the next loss comes at about 0.84 K: measured epochs last 7.2-7.9 s
/// for K = 8.56 s, as the curve predicts.
#[test]
fn cubic_follows_the_cubic_curve_to_w_max_at_k() {
    let mut f = tcp_flow("s0", "d0", None, json!({"profile": "linux"}));
    f["cc"] = json!({"name": "cubic", "params": {"fast_convergence": false}});
    let sc = scenario(dumbbell(1, 100_000_000, 24, 417, 1), vec![f],
        json!({"duration": 80 * S, "record": {"cwnd": true}}));
    let r = run(&sc, 1);
    let c = &r.series.cwnd;
    let seg = |k: usize| c.cwnd_bytes[k] as f64 / 1460.0;
    // Loss epochs: entries into recovery (state 1) after the start-up.
    let losses: Vec<usize> = (1..c.t_s.len()).filter(|&k| c.state[k] == 1 && c.state[k - 1] == 0 && c.t_s[k] > 5.0).collect();
    assert!(losses.len() >= 3, "too few loss epochs: {}", losses.len());
    let mut checked = 0;
    for w in losses.windows(2) {
        let (k0, k1) = (w[0], w[1]);
        let w_max = seg(k0 - 1);
        let k_s = (w_max * 0.3 / 0.4).cbrt();
        // End of recovery: the first Open row after k0 (the cubic epoch starts there).
        let Some(open) = (k0..k1).find(|&k| c.state[k] == 0) else { continue };
        let t0 = c.t_s[open];
        eprintln!("epoch: loss at {:.2}, open at {t0:.2}, next loss {:.2}, W_max {w_max:.0}, K {k_s:.2}", c.t_s[k0], c.t_s[k1]);
        if c.t_s[k1] < t0 + 0.8 * k_s {
            continue; // the next loss came before the plateau
        }
        // Last recorded cwnd at or before time t.
        let at = |t: f64| (open..k1).take_while(|&k| c.t_s[k] <= t).last().map(seg).unwrap();
        let w0 = seg(open);
        let model = |t: f64| 0.4 * (t - k_s).powi(3) + w_max;
        for frac in [0.25, 0.5, 0.75] {
            let t = frac * k_s;
            let (got, want) = (at(t0 + t) - w0, model(t) - w0);
            eprintln!("W_max {w_max:.0}, K {k_s:.2} s: growth at {frac}K {got:.0} pkts, cubic curve {want:.0}");
            assert!((got - want).abs() <= 0.10 * want, "growth at {frac}K: {got:.0} vs {want:.0}");
        }
        let plateau = at(t0 + 0.8 * k_s);
        assert!((plateau - w_max).abs() <= 0.02 * w_max, "plateau {plateau:.0} vs W_max {w_max:.0}");
        let (wh, wk) = (at(t0 + k_s / 2.0), plateau);
        assert!(wh - w0 > wk - wh, "not concave");
        checked += 1;
    }
    assert!(checked >= 2, "only {checked} epochs reached the plateau");
}

/// CUBIC against Reno at low BDP (10 Mbit/s, 20 ms one-way): CUBIC's Reno-friendly
/// region (RFC 9438 §4.3) keeps the throughput ratio below 2.
#[test]
fn cubic_is_friendly_to_reno_at_low_bdp() {
    let mut a = tcp_flow("s0", "d0", None, json!({"profile": "linux"}));
    a["cc"] = json!({"name": "cubic"});
    let b = tcp_flow("s1", "d1", None, json!({"profile": "linux"}));
    let sc = scenario(dumbbell(2, 10_000_000, 20, 35, 1), vec![a, b], json!({"duration": 120 * S}));
    let r = run(&sc, 3);
    let ratio = r.flows.goodput_bps[0] / r.flows.goodput_bps[1];
    eprintln!("cubic {:.0} bit/s, reno {:.0} bit/s, ratio {ratio:.2}", r.flows.goodput_bps[0], r.flows.goodput_bps[1]);
    assert!(ratio < 2.0, "CUBIC/Reno = {ratio:.2}");
}
