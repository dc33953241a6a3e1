//! Workload generators: classes of TCP flows drawn from the run seed and attached to a
//! parking lot (seed 002, Shimonishi, Murase & Sanadidi, "Assessing interactions among
//! legacy and high-speed TCPs", PFLDnet 2007: "100 short-lived flows, 1-40 long-lived
//! flows; short-lived: 1MB file (Pareto), 1sec inter-arrival time (exponential);
//! long-lived: 4.7GB file (fixed), 2min inter-arrival time (exponential); average round
//! trip delay of a flow = 130msec (exponential)").
//!
//! `expand` turns a scenario with a `workload` into an ordinary one before the
//! simulation is built: each generated flow gets a source host and a destination host
//! (`net::topology`'s parking-lot hosts, so its own access links) and becomes a plain
//! `tcp` flow. The simulation never sees the generator.
//!
//! Draws (common random numbers, `rng.rs`). Class `c`'s flow `k` draws from its own
//! substream `workload:{c}:{k}`, always in this order and always all of them:
//! 1. its path: an ordered pair of distinct routers, uniform over the N(N-1) pairs
//!    (so with 5 routers 8/20 of the flows cross 1 hop, 6/20 2, 4/20 3 and 2/20 4);
//! 2. its RTT excess `X` (below);
//! 3. its mix key `u`, uniform in [0, 1) (below);
//! 4. its size, from the class's `SizeDist`.
//!
//! Start times come from the class's substream `workload:{c}:arrivals`:
//! `t_k = t_{k-1} + E_k`, `E_k ~ Exp(interarrival_mean)`, `t_{-1} = 0` (a Poisson
//! process from time 0). Nothing drawn depends on the congestion control, the mix or
//! the class size, so every protocol run sees the same flows (seed 002's "same set of
//! flows"), and the first 10 flows of a 40-flow class are the 10 flows of a 10-flow
//! class.
//!
//! RTT construction. A flow crossing `h` backbone hops of one-way delay `d` (forward
//! and reverse backbone delays averaged) has the propagation floor `F_h = 2 h d`. Its
//! base RTT (propagation only) is `R = F_h + X`, `X ~ Exp(rtt_mean - F_h)`, so
//! `E[R] = rtt_mean` for every hop count and `R >= F_h`; `X` is split equally over
//! the four access-link traversals: each access link's one-way delay is
//! `round(X / 4)` ns. Seed 002 gives only "130 ms (exponential)": this is a
//! shifted exponential per hop count, so the mixture over hop counts has mean
//! exactly `rtt_mean` but is not itself exponential (no exponential law can respect a
//! positive floor). `rtt_mean` must exceed the largest floor: with 5 routers and 15
//! ms, `F_4 = 120 ms < 130 ms`.
//!
//! Mixes. With `mix_fraction = f` and `N` flows in the class, the `m = round(f N)`
//! flows with the smallest mix keys run `mix_cc` (e.g. Reno) and the others `cc`. The
//! keys are per flow, so the assignment is fixed per flow across runs and protocols.
//!
//! Names. Flow `k` of class `c` is `{c}{k:03}` with group `{c}_h{h}` (class and hop
//! count, for grouping); its hosts are `{c}{k:03}_s` (at the entry router) and
//! `{c}{k:03}_d` (at the exit router), so its access links are
//! `acc_{c}{k:03}_s[_rev]` and `acc_{c}{k:03}_d[_rev]`.

use crate::app::sizes::SizeDist;
use crate::cc::CcSpec;
use crate::rng::RngStream;
use crate::scenario::{FlowSpec, HostSpec, Scenario, TcpFlowSpec, Topology};
use crate::tcp::config::TcpSpec;
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// The generators of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Mean base RTT of a generated flow (seed 002: 130 ms); see the module doc.
    pub rtt_mean: SimDuration,
    /// How `rtt_mean` is read (module doc, "RTT construction"); default `equal_per_hop`.
    #[serde(default)]
    pub rtt_reading: RttReading,
    pub classes: Vec<FlowClass>,
}

/// The two readings of seed 002's "Average round trip delay of a flow = 130msec
/// (exponential)" (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttReading {
    /// Every hop count has the mean RTT `rtt_mean` (the excess's mean depends on the
    /// hop count).
    #[default]
    EqualPerHop,
    /// One excess law for every flow, `Exp(rtt_mean - E[F])`, so the RTT grows with
    /// the hop count and the mean over all flows is `rtt_mean`.
    CommonExcess,
}

/// What a class's `count` counts (module doc, "Sessions").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassMode {
    /// `count` files, one Poisson stream for the whole class.
    #[default]
    Files,
    /// `count` sessions, each fetching objects with its own Poisson arrivals until
    /// the run's `duration`.
    Sessions,
}

/// A class of flows: how many, how big, how often, and with which TCP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowClass {
    /// Name prefix of its flows and hosts, and of its substreams.
    pub name: String,
    /// Files (`mode = files`) or sessions (`mode = sessions`).
    pub count: u32,
    #[serde(default)]
    pub mode: ClassMode,
    /// Transfer size, bytes.
    pub size: SizeDist,
    /// Mean of the exponential inter-arrival time.
    pub interarrival_mean: SimDuration,
    #[serde(default)]
    pub cc: CcSpec,
    #[serde(default)]
    pub tcp: TcpSpec,
    /// Fraction of the class's flows that run `mix_cc` instead of `cc`, 0 to 1.
    #[serde(default)]
    pub mix_fraction: f64,
    /// The congestion control of the mixed-in flows; default `reno`.
    #[serde(default)]
    pub mix_cc: CcSpec,
}

/// One generated flow, before it becomes a `tcp` flow.
#[derive(Clone, Debug, PartialEq)]
pub struct DrawnFlow {
    pub entry: u32,
    pub exit: u32,
    pub hops: u32,
    /// Base RTT: backbone floor plus access delays (exactly `floor + 4 * access`).
    pub rtt: SimDuration,
    pub access_delay: SimDuration,
    pub start: SimTime,
    pub bytes: u64,
    pub mixed: bool,
    /// The source it belongs to: the flow itself (files) or its session.
    pub source: u32,
    /// Its object number within the session (0 for files).
    pub object: u32,
}

/// Mean propagation floor `E[F]` over the uniform ordered router pairs: `2 d E[h]`,
/// with `E[h] = (N + 1) / 3` for `N` routers on a line.
pub fn mean_floor(routers: u32, hop_delay: SimDuration) -> f64 {
    2.0 * hop_delay.0 as f64 * (routers as f64 + 1.0) / 3.0
}

/// One source's endpoints and RTT, from its own substream (draws 1 and 2 of the
/// module doc): (entry, exit, hops, floor ns, access delay ns).
fn draw_endpoints(
    rng: &mut RngStream,
    routers: u32,
    hop_delay: SimDuration,
    rtt_mean: SimDuration,
    reading: RttReading,
) -> (u32, u32, u32, u64, u64) {
    let pairs = (routers as u64) * (routers as u64 - 1);
    let p = rng.uniform_u64(0, pairs - 1);
    let entry = (p / (routers as u64 - 1)) as u32;
    let mut exit = (p % (routers as u64 - 1)) as u32;
    if exit >= entry {
        exit += 1; // skip the entry router itself
    }
    let hops = entry.abs_diff(exit);
    let floor = 2 * hops as u64 * hop_delay.0;
    let excess_mean = match reading {
        RttReading::EqualPerHop => (rtt_mean.0 - floor) as f64,
        RttReading::CommonExcess => rtt_mean.0 as f64 - mean_floor(routers, hop_delay),
    };
    let excess = rng.exponential(excess_mean);
    (entry, exit, hops, floor, (excess / 4.0).round() as u64)
}

/// The flows of class `c` (module doc), for a lot of `routers` routers whose backbone
/// hop has the one-way delay `hop_delay`. Sessions fetch objects until `horizon`.
pub fn draw_class(
    c: &FlowClass,
    routers: u32,
    hop_delay: SimDuration,
    rtt_mean: SimDuration,
    reading: RttReading,
    horizon: SimTime,
    seed: u64,
) -> Vec<DrawnFlow> {
    let mut arrivals = RngStream::new(seed, &format!("workload:{}:arrivals", c.name));
    let mut t = 0u64;
    let mut keys = Vec::with_capacity(c.count as usize);
    let mut out: Vec<DrawnFlow> = Vec::new();
    for k in 0..c.count {
        let mut rng = RngStream::new(seed, &format!("workload:{}:{k}", c.name));
        let (entry, exit, hops, floor, access) = draw_endpoints(&mut rng, routers, hop_delay, rtt_mean, reading);
        keys.push(rng.uniform());
        let flow = |start: u64, bytes: u64, object: u32| DrawnFlow {
            entry,
            exit,
            hops,
            rtt: SimDuration(floor + 4 * access),
            access_delay: SimDuration(access),
            start: SimTime(start),
            bytes,
            mixed: false,
            source: k,
            object,
        };
        match c.mode {
            ClassMode::Files => {
                t += arrivals.exponential(c.interarrival_mean.0 as f64).round() as u64;
                out.push(flow(t, c.size.sample(&mut rng), 0));
            }
            ClassMode::Sessions => {
                // Object starts: a Poisson process from time 0 (gaps between starts,
                // the seed's "inter-arrival time"), each object's size from its own
                // substream, so neither depends on what the network did.
                let mut gaps = RngStream::new(seed, &format!("workload:{}:{k}:gaps", c.name));
                let mut s = 0u64;
                for j in 0u32.. {
                    s += gaps.exponential(c.interarrival_mean.0 as f64).round() as u64;
                    if s >= horizon.0 {
                        break;
                    }
                    let mut obj = RngStream::new(seed, &format!("workload:{}:{k}:{j}", c.name));
                    out.push(flow(s, c.size.sample(&mut obj), j));
                }
            }
        }
    }
    let m = (c.mix_fraction * c.count as f64).round() as usize;
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]).then(a.cmp(&b)));
    let mixed: std::collections::HashSet<u32> = order.iter().take(m).map(|&i| i as u32).collect();
    for f in &mut out {
        f.mixed = mixed.contains(&f.source);
    }
    out
}

/// The name of a drawn flow: `{c}{k:03}` for files, `{c}{k:03}.{j:04}` for object `j`
/// of session `k`.
pub fn flow_name(c: &FlowClass, f: &DrawnFlow) -> String {
    match c.mode {
        ClassMode::Files => format!("{}{:03}", c.name, f.source),
        ClassMode::Sessions => format!("{}{:03}.{:04}", c.name, f.source, f.object),
    }
}

/// The scenario with its workload expanded into hosts and `tcp` flows, or `None` when
/// it has no workload. Errors name the field, the value and what is accepted.
pub fn expand(sc: &Scenario, seed: u64) -> Result<Option<Scenario>, String> {
    let Some(w) = &sc.workload else { return Ok(None) };
    let Topology::ParkingLot(lot) = &sc.topology else {
        return Err("workload: needs topology.kind = \"parking_lot\" (its flows attach to the lot's routers)".into());
    };
    if !(2..=64).contains(&lot.routers) {
        return Err(format!("topology.routers = {}: a parking lot needs 2 to 64 routers", lot.routers));
    }
    let rev = lot.backbone_reverse.as_ref().unwrap_or(&lot.backbone);
    let hop_delay = SimDuration((lot.backbone.delay.0 + rev.delay.0) / 2);
    let max_floor = 2 * (lot.routers as u64 - 1) * hop_delay.0;
    if w.rtt_reading == RttReading::EqualPerHop && w.rtt_mean.0 <= max_floor {
        return Err(format!(
            "workload.rtt_mean = {} s: must exceed the largest backbone floor, 2 x {} hops x {} s = {} s",
            w.rtt_mean.0 as f64 / 1e9,
            lot.routers - 1,
            hop_delay.0 as f64 / 1e9,
            max_floor as f64 / 1e9
        ));
    }
    if w.rtt_reading == RttReading::CommonExcess && (w.rtt_mean.0 as f64) <= mean_floor(lot.routers, hop_delay) {
        return Err(format!(
            "workload.rtt_mean = {} s: with rtt_reading = \"common_excess\" it must exceed the mean backbone floor, {} s",
            w.rtt_mean.0 as f64 / 1e9,
            mean_floor(lot.routers, hop_delay) / 1e9
        ));
    }
    let mut out = sc.clone();
    out.workload = None;
    let Topology::ParkingLot(lot_out) = &mut out.topology else { unreachable!() };
    for (ci, c) in w.classes.iter().enumerate() {
        let ctx = format!("workload.classes[{ci}] ('{}')", c.name);
        if c.name.is_empty() || !c.name.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-') {
            return Err(format!("{ctx}.name: accepted a non-empty name of letters, digits and '-'"));
        }
        if w.classes[..ci].iter().any(|o| o.name == c.name) {
            return Err(format!("{ctx}.name: duplicate class name"));
        }
        if c.interarrival_mean.0 == 0 {
            return Err(format!("{ctx}.interarrival_mean must be positive"));
        }
        if !(0.0..=1.0).contains(&c.mix_fraction) {
            return Err(format!("{ctx}.mix_fraction = {}: accepted 0 to 1", c.mix_fraction));
        }
        c.size.validate(&format!("{ctx}.size"))?;
        let horizon = match (c.mode, sc.duration) {
            (ClassMode::Files, _) => SimTime::ZERO,
            (ClassMode::Sessions, Some(d)) => SimTime(d.0),
            (ClassMode::Sessions, None) => {
                return Err(format!("{ctx}.mode = \"sessions\": needs the scenario's duration (sessions fetch until it)"))
            }
        };
        let mut last_source = None;
        for f in draw_class(c, lot.routers, hop_delay, w.rtt_mean, w.rtt_reading, horizon, seed) {
            let name = flow_name(c, &f);
            let host = format!("{}{:03}", c.name, f.source);
            let (src, dst) = (format!("{host}_s"), format!("{host}_d"));
            if last_source != Some(f.source) {
                lot_out.hosts.push(HostSpec { name: src.clone(), router: f.entry, delay: f.access_delay });
                lot_out.hosts.push(HostSpec { name: dst.clone(), router: f.exit, delay: f.access_delay });
                last_source = Some(f.source);
            }
            out.flows.push(FlowSpec::Tcp(TcpFlowSpec {
                group: format!("{}_h{}", c.name, f.hops),
                name: Some(name),
                src,
                dst,
                start: f.start,
                bytes: Some(f.bytes),
                stop: None,
                cc: if f.mixed { c.mix_cc.clone() } else { c.cc.clone() },
                tcp: c.tcp.clone(),
            }));
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lot_scenario(long: u32, cc: &str, mix: f64) -> Scenario {
        serde_json::from_value(serde_json::json!({
            "topology": {"kind": "parking_lot", "access_rate": 10_000_000_000u64,
                "backbone": {"rate": 1_000_000_000u64, "delay": 15_000_000u64}},
            "flows": [],
            "workload": {"rtt_mean": 130_000_000u64, "classes": [
                {"name": "long", "count": long, "size": {"dist": "constant", "bytes": 4_700_000_000u64},
                 "interarrival_mean": 120_000_000_000u64, "cc": {"name": cc}, "mix_fraction": mix},
                {"name": "short", "count": 100, "size": {"dist": "pareto", "mean": 1e6, "shape": 1.2},
                 "interarrival_mean": 1_000_000_000u64, "cc": {"name": cc}}]}
        }))
        .unwrap()
    }

    fn tcp(f: &FlowSpec) -> &TcpFlowSpec {
        match f {
            FlowSpec::Tcp(t) => t,
            _ => panic!("workload flows are tcp"),
        }
    }

    #[test]
    fn the_same_flows_for_every_protocol_and_a_prefix_for_fewer_flows() {
        let a = expand(&lot_scenario(40, "cubic", 0.5), 7).unwrap().unwrap();
        let b = expand(&lot_scenario(40, "scalable", 0.5), 7).unwrap().unwrap();
        let c = expand(&lot_scenario(10, "cubic", 0.0), 7).unwrap().unwrap();
        assert_eq!(a.topology, b.topology); // hosts, routers and access delays
        assert_eq!(a.flows.len(), 140);
        for (fa, fb) in a.flows.iter().zip(&b.flows) {
            let (fa, fb) = (tcp(fa), tcp(fb));
            assert_eq!((&fa.name, &fa.src, &fa.dst, fa.start, fa.bytes), (&fb.name, &fb.src, &fb.dst, fb.start, fb.bytes));
            // Mixed flows are the same flows in both runs.
            assert_eq!(fa.cc.name == "reno", fb.cc.name == "reno");
        }
        let reno = a.flows[..40].iter().filter(|f| tcp(f).cc.name == "reno").count();
        assert_eq!(reno, 20); // round(0.5 * 40)
        // The 10-flow class is the first 10 flows of the 40-flow one.
        for k in 0..10 {
            assert_eq!(tcp(&a.flows[k]).start, tcp(&c.flows[k]).start);
            assert_eq!(tcp(&a.flows[k]).group, tcp(&c.flows[k]).group);
        }
        let d = expand(&lot_scenario(40, "cubic", 0.5), 8).unwrap().unwrap();
        assert_ne!(tcp(&a.flows[0]).start, tcp(&d.flows[0]).start, "another seed, other flows");
    }

    #[test]
    fn rtts_have_their_floor_and_the_stated_mean() {
        // 20,000 flows: E[R] = 130 ms for each hop count. Std of X is at most 100 ms
        // (1 hop), so the standard error of the overall mean is below 100/sqrt(20000)
        // = 0.71 ms; tolerance 3 ms (> 4 standard errors). Hop shares 8:6:4:2 / 20,
        // each within 0.02 (binomial std < 0.0035).
        let c = FlowClass {
            name: "x".into(),
            count: 20_000,
            size: SizeDist::Constant { bytes: 1 },
            interarrival_mean: SimDuration::from_secs(1),
            cc: CcSpec::default(),
            tcp: TcpSpec::default(),
            mix_fraction: 0.0,
            mix_cc: CcSpec::default(),
            mode: ClassMode::Files,
        };
        let d = SimDuration::from_millis(15);
        let flows = draw_class(&c, 5, d, SimDuration::from_millis(130), RttReading::EqualPerHop, SimTime::ZERO, 1);
        let mut hops = [0usize; 5];
        let mut sum = 0.0;
        for f in &flows {
            assert!(f.rtt.0 >= 2 * f.hops as u64 * d.0, "floor");
            assert_eq!(f.rtt.0, 2 * f.hops as u64 * d.0 + 4 * f.access_delay.0);
            hops[f.hops as usize] += 1;
            sum += f.rtt.as_secs_f64();
        }
        let mean_ms = sum / flows.len() as f64 * 1e3;
        assert!((mean_ms - 130.0).abs() < 3.0, "mean RTT {mean_ms} ms");
        for (h, share) in [(1, 0.4), (2, 0.3), (3, 0.2), (4, 0.1)] {
            let got = hops[h] as f64 / flows.len() as f64;
            assert!((got - share).abs() < 0.02, "{h} hops: {got}");
        }
        // Arrivals: mean gap 1 s; the last of 20,000 near 20,000 s (std 141 s).
        let last = flows.last().unwrap().start.0 as f64 / 1e9;
        assert!((last - 20_000.0).abs() < 600.0, "{last}");
    }

    #[test]
    fn expansion_names_hosts_and_flows_and_checks_fields() {
        let sc = expand(&lot_scenario(2, "cubic", 0.0), 1).unwrap().unwrap();
        let f = tcp(&sc.flows[1]);
        assert_eq!(f.name.as_deref(), Some("long001"));
        assert_eq!((f.src.as_str(), f.dst.as_str()), ("long001_s", "long001_d"));
        assert!(f.group.starts_with("long_h"));
        assert_eq!(tcp(&sc.flows[2]).name.as_deref(), Some("short000"));
        let Topology::ParkingLot(lot) = &sc.topology else { panic!() };
        assert_eq!(lot.hosts.len(), 2 * 102);
        assert_eq!(lot.hosts[2].name, "long001_s");
        let mut bad = lot_scenario(2, "cubic", 0.0);
        bad.workload.as_mut().unwrap().rtt_mean = SimDuration::from_millis(120);
        let e = expand(&bad, 1).unwrap_err();
        assert!(e.contains("workload.rtt_mean = 0.12 s: must exceed the largest backbone floor"), "{e}");
        let mut bad = lot_scenario(2, "cubic", 0.0);
        bad.workload.as_mut().unwrap().classes[0].mix_fraction = 1.5;
        let e = expand(&bad, 1).unwrap_err();
        assert!(e.contains("workload.classes[0] ('long').mix_fraction = 1.5: accepted 0 to 1"), "{e}");
        // The whole expanded scenario builds and routes.
        crate::sim::Simulation::new(&lot_scenario(2, "cubic", 0.0), 1).unwrap();
    }
    fn session_class(count: u32, gap_s: u64) -> FlowClass {
        FlowClass {
            name: "s".into(),
            count,
            size: SizeDist::Constant { bytes: 1 },
            interarrival_mean: SimDuration::from_secs(gap_s),
            cc: CcSpec::default(),
            tcp: TcpSpec::default(),
            mix_fraction: 0.5,
            mix_cc: CcSpec::default(),
            mode: ClassMode::Sessions,
        }
    }

    #[test]
    fn sessions_fetch_at_their_rate_for_the_whole_run() {
        // 100 sessions, 1 s mean gap between object starts, 1800 s: the count per
        // session is Poisson(1800) (std 42.4); the mean over 100 sessions has std 4.2,
        // tolerance 20 objects (> 4.7 std). Each session's own count is within 5 std
        // (212) of 1800. Objects keep arriving: every 100 s window of the run holds
        // 100 x 100 objects on average (std 100); each within 600.
        let c = session_class(100, 1);
        let d = SimDuration::from_millis(15);
        let horizon = SimTime(1800 * 1_000_000_000);
        let flows = draw_class(&c, 5, d, SimDuration::from_millis(130), RttReading::EqualPerHop, horizon, 3);
        let mut per = [0usize; 100];
        let mut windows = [0usize; 18];
        for f in &flows {
            per[f.source as usize] += 1;
            assert!(f.start.0 < horizon.0);
            windows[(f.start.0 / 100_000_000_000) as usize] += 1;
        }
        let mean = flows.len() as f64 / 100.0;
        assert!((mean - 1800.0).abs() < 20.0, "mean objects per session {mean}");
        for (k, n) in per.iter().enumerate() {
            assert!((*n as f64 - 1800.0).abs() < 212.0, "session {k}: {n} objects");
        }
        for (i, n) in windows.iter().enumerate() {
            assert!((*n as f64 - 10_000.0).abs() < 600.0, "window {i}: {n} objects");
        }
        // A session keeps its path, RTT and mix for all its objects; objects in order.
        for w in flows.windows(2) {
            if w[0].source == w[1].source {
                assert_eq!((w[0].entry, w[0].exit, w[0].rtt, w[0].mixed), (w[1].entry, w[1].exit, w[1].rtt, w[1].mixed));
                assert_eq!(w[1].object, w[0].object + 1);
                assert!(w[1].start >= w[0].start);
            }
        }
        let mixed: std::collections::HashSet<u32> = flows.iter().filter(|f| f.mixed).map(|f| f.source).collect();
        assert_eq!(mixed.len(), 50);
    }

    #[test]
    fn sessions_are_the_same_for_every_protocol_and_a_longer_run_extends_them() {
        let mut sc = lot_scenario(10, "cubic", 0.5);
        sc.duration = Some(SimDuration::from_secs(600));
        for c in &mut sc.workload.as_mut().unwrap().classes {
            c.mode = ClassMode::Sessions;
        }
        let mut other = sc.clone();
        other.workload.as_mut().unwrap().classes.iter_mut().for_each(|c| c.cc = CcSpec { name: "scalable".into(), ..c.cc.clone() });
        let a = expand(&sc, 5).unwrap().unwrap();
        let b = expand(&other, 5).unwrap().unwrap();
        assert_eq!(a.topology, b.topology);
        assert_eq!(a.flows.len(), b.flows.len());
        for (fa, fb) in a.flows.iter().zip(&b.flows) {
            let (fa, fb) = (tcp(fa), tcp(fb));
            assert_eq!((&fa.name, &fa.src, &fa.dst, fa.start, fa.bytes), (&fb.name, &fb.src, &fb.dst, fb.start, fb.bytes));
            assert_eq!(fa.cc.name == "reno", fb.cc.name == "reno");
        }
        // One pair of hosts per session, shared by its objects.
        let Topology::ParkingLot(lot) = &a.topology else { panic!() };
        assert_eq!(lot.hosts.len(), 2 * 110);
        let short: Vec<_> = a.flows.iter().map(tcp).filter(|f| f.src == "short007_s").collect();
        assert!(short.len() > 400, "{} objects in 600 s", short.len());
        assert_eq!(short[3].name.as_deref(), Some("short007.0003"));
        // A longer run: the same objects first, then more.
        let mut long = sc.clone();
        long.duration = Some(SimDuration::from_secs(1200));
        let c = expand(&long, 5).unwrap().unwrap();
        let names = |s: &Scenario| -> Vec<(String, SimTime, Option<u64>)> {
            s.flows.iter().map(tcp).map(|f| (f.name.clone().unwrap(), f.start, f.bytes)).collect()
        };
        let (na, nc) = (names(&a), names(&c));
        assert!(na.iter().all(|x| nc.contains(x)));
        assert!(nc.len() > na.len());
        let mut none = sc.clone();
        none.duration = None;
        assert!(expand(&none, 5).unwrap_err().contains("mode = \"sessions\": needs the scenario's duration"));
    }

    #[test]
    fn the_common_excess_reading_makes_rtt_grow_with_hops() {
        // E[F] = 2 x 15 ms x (5 + 1) / 3 = 60 ms, excess mean 70 ms for every flow:
        // E[RTT | h] = 30 h + 70 ms (100, 130, 160, 190), overall 130 ms. 20,000 flows,
        // std of X 70 ms: tolerance 3 ms overall, 6 ms per hop count (the 4-hop bin
        // has about 2,000 flows, standard error 1.6 ms).
        let mut c = session_class(20_000, 1);
        c.mode = ClassMode::Files;
        let d = SimDuration::from_millis(15);
        assert_eq!(mean_floor(5, d), 60e6);
        let flows = draw_class(&c, 5, d, SimDuration::from_millis(130), RttReading::CommonExcess, SimTime::ZERO, 2);
        let mut sum = [0.0f64; 5];
        let mut n = [0usize; 5];
        for f in &flows {
            sum[f.hops as usize] += f.rtt.as_secs_f64() * 1e3;
            n[f.hops as usize] += 1;
        }
        let overall = sum.iter().sum::<f64>() / flows.len() as f64;
        assert!((overall - 130.0).abs() < 3.0, "{overall}");
        for h in 1..5 {
            let m = sum[h] / n[h] as f64;
            assert!((m - (30.0 * h as f64 + 70.0)).abs() < 6.0, "{h} hops: {m} ms");
        }
    }
}
