//! Model-based fuzzing of the TCP sender and receiver, wired back to back through a
//! random channel that drops, delays (so reorders) and duplicates packets in both
//! directions. For every profile and many random channels the invariants are:
//!
//! - no panic;
//! - cwnd >= 1 MSS and ssthresh >= 2 MSS (once set) after every event;
//! - the receiver never delivers more than was sent, and delivers every byte exactly
//!   once: at the end `delivered == bytes` and the FIN is received;
//! - the transfer completes within a bound of simulated time (no deadlock).
//!
//! ECN cases (the `linux` profile with `ecn`, Reno and DCTCP, each PRR variant in
//! turn) also CE-mark a random fraction of the ECN-capable segments.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tcplab_core::cc::{self, CcSpec, Window};
use tcplab_core::net::packet::{Ecn, TcpHeader};
use tcplab_core::rng::RngStream;
use tcplab_core::tcp::config::TcpSpec;
use tcplab_core::tcp::prr::PrrMode;
use tcplab_core::tcp::receiver::TcpReceiver;
use tcplab_core::tcp::sender::{SenderStats, TcpSender};
use tcplab_core::tcp::{Outbox, TimerKind};
use tcplab_core::time::{SimDuration, SimTime};

#[derive(Clone, Copy)]
enum Ev {
    ToReceiver(TcpHeader, Ecn),
    ToSender(TcpHeader),
    SenderTimer(u32),
    PacingTimer(u32),
    ProbeTimer(u32),
    ReorderTimer(u32),
    ReceiverTimer(u32),
}

struct Channel {
    rng: RngStream,
    loss: f64,
    dup: f64,
    jitter_ms: f64,
    /// Probability that an ECN-capable segment arrives CE-marked.
    mark: f64,
}

impl Channel {
    /// Delivery times for one packet: none (lost), one, or two (duplicated).
    fn deliveries(&mut self, now: SimTime) -> Vec<SimTime> {
        if self.rng.bernoulli(self.loss) {
            return vec![];
        }
        let mut v = vec![now + SimDuration::from_secs_f64(0.010 + self.rng.uniform() * self.jitter_ms * 1e-3)];
        if self.rng.bernoulli(self.dup) {
            v.push(now + SimDuration::from_secs_f64(0.010 + self.rng.uniform() * self.jitter_ms * 1e-3));
        }
        v
    }
}

fn fuzz_case(profile: &str, seed: u64) -> (u64, u64, u64) {
    let spec = TcpSpec { profile: Some(profile.into()), ..Default::default() };
    let st = fuzz_case_with(spec, seed, "reno");
    (st.retransmits, st.rtos, st.fast_retransmits)
}

fn fuzz_case_with(spec: TcpSpec, seed: u64, cc_name: &str) -> SenderStats {
    let profile = spec.profile.clone().unwrap_or_default();
    let profile = profile.as_str();
    let ecn = spec.ecn == Some(true);
    let mut rng = RngStream::new(seed, &format!("{profile}{ecn}{cc_name}{}", spec.rack.is_some()));
    let spec = TcpSpec { syn_retries: Some(100), ..spec };
    let cfg = spec.resolve().unwrap();
    let mss = cfg.mss as u64;
    let bytes = rng.uniform_u64(1, 200_000);
    let w = Window::new(cfg.iw.bytes(cfg.mss), u64::MAX, cfg.mss, cfg.byte_counting, cfg.abc_limit);
    let cc = cc::build(&CcSpec { name: cc_name.into(), ..Default::default() }, &w).unwrap();
    let per_packet_ce_echo = cc.needs_ecn();
    let mut sender = TcpSender::new(cfg.clone(), cc, Some(bytes), None);
    let mut receiver = TcpReceiver::new(&cfg);
    receiver.set_per_packet_ce_echo(per_packet_ce_echo);
    let mut chan = Channel {
        loss: rng.uniform() * 0.3,
        dup: rng.uniform() * 0.05,
        jitter_ms: rng.uniform() * 30.0,
        mark: rng.uniform() * 0.3,
        rng,
    };
    let mut heap: BinaryHeap<Reverse<(SimTime, u64, usize)>> = BinaryHeap::new();
    let mut events: Vec<Ev> = Vec::new();
    let mut seq = 0u64;
    let mut out = Outbox::default();
    let mut push = |heap: &mut BinaryHeap<_>, events: &mut Vec<Ev>, t: SimTime, e: Ev| {
        events.push(e);
        heap.push(Reverse((t, seq, events.len() - 1)));
        seq += 1;
    };
    sender.open(SimTime(0), &mut out);
    let mut now = SimTime(0);
    let limit = SimTime(SimDuration::from_secs(20_000).0);
    let mut finished = false;
    loop {
        // Route what the last call produced.
        for (kind, at, gen) in out.timers.drain(..) {
            let e = match kind {
                TimerKind::Rto => Ev::SenderTimer(gen),
                TimerKind::DelAck => Ev::ReceiverTimer(gen),
                TimerKind::Pacing => Ev::PacingTimer(gen),
                TimerKind::LossProbe => Ev::ProbeTimer(gen),
                TimerKind::Reorder => Ev::ReorderTimer(gen),
            };
            push(&mut heap, &mut events, at, e);
        }
        let segs: Vec<_> = out.segments.drain(..).collect();
        for s in segs {
            // Segments with data/SYN from the sender carry tx_id > 0 or flags SYN
            // without ACK; receiver-originated ones have ack set and seq 0 with len 0.
            let to_receiver = s.hdr.tx_id > 0;
            for t in chan.deliveries(now) {
                let ecn = if s.ecn != Ecn::NotEct && chan.rng.bernoulli(chan.mark) { Ecn::Ce } else { s.ecn };
                push(&mut heap, &mut events, t, if to_receiver { Ev::ToReceiver(s.hdr, ecn) } else { Ev::ToSender(s.hdr) });
            }
        }
        if finished && sender.all_acked() {
            break;
        }
        let Some(Reverse((t, _, idx))) = heap.pop() else { break };
        now = t;
        assert!(now < limit, "{profile} seed {seed}: no completion by {limit} (bytes {bytes})");
        match events[idx] {
            Ev::ToReceiver(h, ecn) => {
                let a = receiver.on_segment_ecn(&h, ecn, now, &mut out);
                assert!(receiver.delivered() <= bytes);
                if a.finished {
                    finished = true;
                }
            }
            Ev::ToSender(h) => sender.on_ack(&h, now, &mut out),
            Ev::SenderTimer(g) => {
                sender.on_timer(g, now, &mut out);
            }
            Ev::PacingTimer(g) => sender.on_pacing_timer(g, now, &mut out),
            Ev::ProbeTimer(g) => sender.on_loss_probe_timer(g, now, &mut out),
            Ev::ReorderTimer(g) => sender.on_reorder_timer(g, now, &mut out),
            Ev::ReceiverTimer(g) => receiver.on_timer(g, now, &mut out),
        }
        assert!(sender.w.cwnd >= mss, "{profile} seed {seed}: cwnd {} < MSS", sender.w.cwnd);
        if sender.w.ssthresh != u64::MAX {
            assert!(sender.w.ssthresh >= 2 * mss, "{profile} seed {seed}: ssthresh {}", sender.w.ssthresh);
        }
    }
    assert!(finished, "{profile} seed {seed}: FIN never received");
    assert_eq!(receiver.delivered(), bytes, "{profile} seed {seed}");
    let st = sender.stats();
    assert!(ecn || st.ecn_reductions == 0);
    st
}

#[test]
fn random_loss_reordering_duplication_keep_invariants() {
    for profile in ["linux", "ns2-sack", "reference", "enhanced"] {
        let (mut retx, mut rtos, mut fr) = (0, 0, 0);
        for seed in 0..150 {
            let (a, b, c) = fuzz_case(profile, seed);
            retx += a;
            rtos += b;
            fr += c;
        }
        eprintln!("{profile}: 150 cases, {retx} retransmissions, {rtos} RTOs, {fr} fast retransmits");
        // The channels must really exercise recovery, or the test proves nothing.
        assert!(rtos > 100 && fr > 50, "{profile}: too little recovery exercised");
    }
}

/// ECN marking on top of loss, with each PRR variant in turn.
#[test]
fn ecn_marking_with_loss_keeps_invariants() {
    for cc_name in ["reno", "dctcp"] {
        let (mut rtos, mut reductions) = (0, 0);
        for seed in 0..100 {
            let prr = [PrrMode::Off, PrrMode::Crb, PrrMode::Ssrb, PrrMode::Linux][seed as usize % 4];
            let spec = TcpSpec { profile: Some("linux".into()), ecn: Some(true), prr: Some(prr), ..Default::default() };
            let st = fuzz_case_with(spec, seed, cc_name);
            rtos += st.rtos;
            reductions += st.ecn_reductions;
        }
        eprintln!("linux + ecn, {cc_name}: 100 cases, {rtos} RTOs, {reductions} ECN reductions");
        assert!(rtos > 50 && reductions > 100, "{cc_name}: ECN or recovery barely exercised");
    }
}

/// RACK-TLP with D-SACK and Linux PRR on random channels (loss, reordering,
/// duplication, and for half the cases ECN marking).
#[test]
fn rack_tlp_keep_invariants() {
    let (mut rtos, mut fr, mut probes, mut retx) = (0, 0, 0, 0);
    for seed in 0..200 {
        let spec = TcpSpec {
            profile: Some("linux".into()),
            rack: Some(true),
            tlp: Some(true),
            dsack: Some(true),
            prr: Some(PrrMode::Linux),
            ecn: Some(seed % 2 == 0),
            ..Default::default()
        };
        let st = fuzz_case_with(spec, seed, if seed % 4 == 0 { "cubic" } else { "reno" });
        rtos += st.rtos;
        fr += st.fast_retransmits;
        probes += st.tlp_probes;
        retx += st.retransmits;
    }
    eprintln!("rack-tlp: 200 cases, {retx} retransmissions, {rtos} RTOs, {fr} fast recoveries, {probes} probes");
    assert!(rtos > 50 && fr > 100 && probes > 100, "too little exercised");
}

