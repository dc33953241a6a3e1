//! RACK-TLP (RFC 8985) through the real sender and receiver, wired by a deterministic
//! channel: a FIFO bottleneck (12 Mbit/s, so a 1500-byte packet takes 1 ms), fixed
//! propagation each way, and scripted perturbations of chosen segments' first
//! transmissions (extra delay, which reorders them past later ones, or a drop).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use tcplab_core::cc::{reno::Reno, CongestionControl};
use tcplab_core::net::packet::{Ecn, TcpHeader};
use tcplab_core::tcp::config::TcpConfig;
use tcplab_core::tcp::prr::PrrMode;
use tcplab_core::tcp::receiver::TcpReceiver;
use tcplab_core::tcp::sender::{SenderStats, TcpSender};
use tcplab_core::tcp::{Outbox, TimerKind};
use tcplab_core::time::{Rate, SimDuration, SimTime};

const MSS: u64 = 1460;

/// What the channel does to the first transmission of the segment starting at a
/// given sequence number.
#[derive(Clone, Copy)]
enum Perturb {
    Delay(SimDuration),
    Drop,
}

#[derive(Clone, Copy)]
enum Ev {
    ToReceiver(TcpHeader),
    ToSender(TcpHeader),
    Timer(TimerKind, u32),
    RxTimer(u32),
}

struct Outcome {
    stats: SenderStats,
    completed: SimTime,
    /// (time, sequence) of every data transmission.
    sends: Vec<(SimTime, u64)>,
    /// Arrival times of the ACKs at the sender.
    acks: Vec<SimTime>,
    srtt: SimDuration,
}

/// Transfers `segments` full segments with `cfg` over a path of one-way delay
/// `owd`, applying `perturb(k)` to the first transmission of segment k (0-based).
fn transfer(cfg: TcpConfig, segments: u64, owd: SimDuration, perturb: &dyn Fn(u64) -> Option<Perturb>) -> Outcome {
    let rate = Rate::mbps(12);
    let cc: Box<dyn CongestionControl> = Box::new(Reno);
    let mut sender = TcpSender::new(cfg.clone(), cc, Some(segments * MSS), None);
    let mut receiver = TcpReceiver::new(&cfg);
    let mut heap: BinaryHeap<Reverse<(SimTime, u64, usize)>> = BinaryHeap::new();
    let mut events: Vec<Ev> = Vec::new();
    let mut counter = 0u64;
    let mut out = Outbox::default();
    let mut link_free = SimTime::ZERO;
    let mut seen: HashSet<u64> = HashSet::new();
    let mut sends = Vec::new();
    let mut acks = Vec::new();
    let mut completed = None;
    sender.open(SimTime::ZERO, &mut out);
    let mut now = SimTime::ZERO;
    loop {
        for (kind, at, gen) in out.timers.drain(..) {
            let e = if kind == TimerKind::DelAck { Ev::RxTimer(gen) } else { Ev::Timer(kind, gen) };
            events.push(e);
            heap.push(Reverse((at, counter, events.len() - 1)));
            counter += 1;
        }
        for seg in out.segments.drain(..).collect::<Vec<_>>() {
            let (at, e) = if seg.hdr.tx_id > 0 {
                // Sender -> receiver through the FIFO bottleneck.
                let start = link_free.max(now);
                link_free = start + rate.tx_time(seg.size);
                let mut at = link_free + owd;
                if seg.hdr.len > 0 {
                    sends.push((now, seg.hdr.seq));
                    let k = (seg.hdr.seq - 1) / MSS;
                    if seen.insert(seg.hdr.seq) {
                        match perturb(k) {
                            Some(Perturb::Drop) => continue,
                            Some(Perturb::Delay(d)) => at = at + d,
                            None => {}
                        }
                    }
                }
                (at, Ev::ToReceiver(seg.hdr))
            } else {
                (now + owd, Ev::ToSender(seg.hdr))
            };
            events.push(e);
            heap.push(Reverse((at, counter, events.len() - 1)));
            counter += 1;
        }
        if completed.is_some() && sender.all_acked() {
            break;
        }
        let Some(Reverse((t, _, idx))) = heap.pop() else { break };
        now = t;
        assert!(now < SimTime(60_000_000_000), "no completion");
        match events[idx] {
            Ev::ToReceiver(h) => {
                if receiver.on_segment_ecn(&h, Ecn::NotEct, now, &mut out).finished {
                    completed = Some(now);
                }
            }
            Ev::ToSender(h) => {
                acks.push(now);
                sender.on_ack(&h, now, &mut out);
            }
            Ev::Timer(TimerKind::Rto, g) => {
                sender.on_timer(g, now, &mut out);
            }
            Ev::Timer(TimerKind::Pacing, g) => sender.on_pacing_timer(g, now, &mut out),
            Ev::Timer(TimerKind::LossProbe, g) => sender.on_loss_probe_timer(g, now, &mut out),
            Ev::Timer(TimerKind::Reorder, g) => sender.on_reorder_timer(g, now, &mut out),
            Ev::Timer(TimerKind::DelAck, _) => unreachable!(),
            Ev::RxTimer(g) => receiver.on_timer(g, now, &mut out),
        }
    }
    Outcome { stats: sender.stats(), completed: completed.expect("transfer completed"), sends, acks, srtt: sender.rtt().srtt().unwrap() }
}

/// The linux profile with RACK-TLP, D-SACK and Linux PRR, or RFC 6675 alone. The
/// receive window (40 segments) keeps the rate below the bottleneck's, so that no
/// queue builds and the RTT stays at the propagation delay (plus 1-2 ms).
fn config(rack_tlp: bool) -> TcpConfig {
    let mut c = TcpConfig::profile("linux").unwrap();
    // The vectors are worked for 1460-byte segments without options, an RFC 5681
    // receiver and no F-RTO (the RTO-only arm times the plain timeout).
    c.mss = MSS as u32;
    c.header_bytes = 40;
    c.timestamps = false;
    c.frto = false;
    c.quickack = false;
    c.rcv_buffer = 40 * MSS;
    c.prr = PrrMode::Linux;
    c.dsack = true;
    c.rack = rack_tlp;
    c.tlp = rack_tlp;
    c
}

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// Reordering by less than RACK's window triggers no fast retransmit; the classic
/// duplicate-ACK threshold retransmits spuriously.
///
/// Reference: RFC 8985 §6.2 step 4 and §3.4: once reordering has been seen the
/// reordering window is min_RTT / 4, and a segment is deemed lost only RACK.rtt +
/// reo_wnd after it was sent. Setup: RTT 100 ms, 300 segments. Segment 20 is
/// delayed 2 ms (one segment SACKed above it, so the duplicate-ACK rule does not
/// apply): the cumulative ACK then delivers it below what was SACKed, and RACK sees
/// reordering. Segment 150 is delayed 15 ms, less than reo_wnd = 100/4 = 25 ms,
/// while about 10 later segments (1 ms each) are SACKed: with RACK no fast
/// retransmit (exact); with RFC 6675 alone the third SACK triggers one, which the
/// receiver's D-SACK later shows to be spurious.
#[test]
fn reordering_within_the_window_is_not_a_loss() {
    let perturb = |k: u64| match k {
        20 => Some(Perturb::Delay(ms(2))),
        150 => Some(Perturb::Delay(ms(15))),
        _ => None,
    };
    let rack = transfer(config(true), 300, ms(50), &perturb);
    let dupthresh = transfer(config(false), 300, ms(50), &perturb);
    eprintln!(
        "reordering 15 ms: RACK {} fast retransmits, {} retransmissions; RFC 6675 {} fast retransmits, {} retransmissions",
        rack.stats.fast_retransmits, rack.stats.retransmits, dupthresh.stats.fast_retransmits, dupthresh.stats.retransmits
    );
    assert_eq!((rack.stats.fast_retransmits, rack.stats.retransmits), (0, 0));
    assert_eq!(dupthresh.stats.fast_retransmits, 1);
}

/// A D-SACK widens the reordering window (RFC 8985 §6.2 step 4: reo_wnd_mult + 1
/// per round trip with D-SACKs).
///
/// Setup as above, with segment 100 and then segment 250 delayed 40 ms (more than
/// reo_wnd = 25 ms, less than 2 x 25 ms). The first delay is taken for a loss: one
/// fast retransmit, whose duplicate the receiver reports with a D-SACK, so
/// reo_wnd_mult becomes 2 (50 ms). The second, equal delay is then tolerated: still
/// one fast retransmit in total (exact).
#[test]
fn a_dsack_widens_the_reordering_window() {
    let perturb = |k: u64| match k {
        20 => Some(Perturb::Delay(ms(2))),
        100 | 250 => Some(Perturb::Delay(ms(40))),
        _ => None,
    };
    let r = transfer(config(true), 400, ms(50), &perturb);
    // Without the D-SACK (receiver not sending them) both delays cost a retransmit.
    let mut no_dsack = config(true);
    no_dsack.dsack = false;
    let n = transfer(no_dsack, 400, ms(50), &perturb);
    eprintln!(
        "reordering 40 ms twice: with D-SACK {} fast retransmits; without {}",
        r.stats.fast_retransmits, n.stats.fast_retransmits
    );
    assert_eq!(r.stats.fast_retransmits, 1);
    assert_eq!(n.stats.fast_retransmits, 2);
}

/// A lost tail is repaired by a probe about 2 SRTT after the last ACK, not by an RTO.
///
/// Reference: RFC 8985 §7 (TLP): PTO = 2 SRTT (+ 2 ms in Linux) while more than one
/// segment is in flight; the probe (the last segment again, no new data being
/// available) draws a SACK, RACK deems the other tail segment lost and fast recovery
/// repairs it. Setup: RTT 20 ms, 30 segments, the last two dropped. Tolerances: with
/// TLP no RTO, one probe; the probe leaves 2 SRTT + 2 ms after the last ACK before
/// it, within 3 ms (SRTT moves by less over the last ACKs); the transfer completes
/// at least 100 ms sooner than without TLP, which waits for the 200 ms minimum RTO.
#[test]
fn tail_loss_probe_repairs_a_lost_tail_before_the_rto() {
    let drop_tail = |k: u64| (k >= 28).then_some(Perturb::Drop);
    let tlp = transfer(config(true), 30, ms(10), &drop_tail);
    let mut no_tlp_cfg = config(true);
    no_tlp_cfg.tlp = false;
    let rto = transfer(no_tlp_cfg, 30, ms(10), &drop_tail);
    // The probe: the first retransmission of the last segment.
    let last = 1 + 29 * MSS;
    let sends_of_last: Vec<SimTime> = tlp.sends.iter().filter(|(_, s)| *s == last).map(|(t, _)| *t).collect();
    let probe = sends_of_last[1];
    let last_ack = *tlp.acks.iter().filter(|&&t| t < probe).last().unwrap();
    let pto_ms = probe.since(last_ack).as_secs_f64() * 1e3;
    let expect_ms = 2.0 * tlp.srtt.as_secs_f64() * 1e3 + 2.0;
    eprintln!(
        "tail loss: TLP completes at {:.1} ms ({} probes, {} RTOs, probe {pto_ms:.1} ms after the last ACK, 2 SRTT + 2 = {expect_ms:.1}); RTO only: {:.1} ms ({} RTOs)",
        tlp.completed.as_secs_f64() * 1e3,
        tlp.stats.tlp_probes,
        tlp.stats.rtos,
        rto.completed.as_secs_f64() * 1e3,
        rto.stats.rtos
    );
    assert_eq!((tlp.stats.rtos, tlp.stats.tlp_probes), (0, 1));
    assert!(rto.stats.rtos >= 1);
    assert!(rto.completed.since(tlp.completed) >= ms(100), "TLP gains too little");
    assert!((pto_ms - expect_ms).abs() <= 3.0, "probe {pto_ms:.1} ms after the last ACK");
}

