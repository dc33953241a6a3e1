//! A link model driven by an outside monotonic clock (the emulator's contract).
//!
//! The simulator drives links from its own event heap (`sim/mod.rs`: `enqueue`,
//! `on_tx_done`, `on_arrive`). The emulator (`crates/tcplab-emu`) has no heap of its
//! own: it reads the host's monotonic clock and asks each link two questions, "when is
//! your next event?" and "process your next event if it is due by now". `LinkModel`
//! is that contract, and `ClockedLink` implements it for `Link` (queue discipline,
//! transmitter, error model, propagation pipe) with the simulator's semantics:
//!
//! 1. `offer(t)`: the queue discipline admits or drops the packet (`QueueDisc::enqueue`,
//!    told the size of the packet in service); an idle transmitter takes the head of
//!    the queue at once and finishes it `rate.tx_time(size)` later.
//! 2. end of serialization at `t`: the error model judges the packet (`ErrorModel::is_lost`
//!    at `t`), the transmitter takes the next packet at `t`, and a packet that survived
//!    enters the pipe to arrive at `t + delay`.
//! 3. arrival at `t`: the packet leaves the link.
//!
//! On equal times the end of a serialization comes before an arrival, so a zero-delay
//! link hands a packet on at the instant its last bit leaves. Every event is processed
//! at its own model time, never at the (later) time the caller gets round to it: a late
//! caller delays what it does with the output, not the model. An emulator that hands a
//! packet to the real world at real time `r` for model time `t` therefore measures its
//! own scheduling error as `r - t`.
//!
//! Later link models (MACs such as DAMA and link layers such as SLACP) plug into the
//! emulator by implementing this trait: an input port (`offer`), a next-event time and
//! a `step` that reports what left the model. AQMs are `QueueDisc`s inside `Link`:
//! CoDel's head drops at dequeue (and any queued packet a discipline drops) leave
//! through `step` as `Step::Lost` at the time of the drop. Two AQM features are not
//! emulated and are refused when the link is built: flow hashing (FQ-CoDel; the
//! emulator does not hand the queue a 5-tuple key) and ECN marking (it would have to
//! rewrite the real packet's IP header).
//!
//! Deviation from `sim/mod.rs`: none intended; `tests::matches_the_simulator` runs the
//! same arrivals through both and compares every counter.

use super::error::ErrorModel;
use super::jitter::LinkJitter;
use super::link::Link;
use super::packet::{LinkId, NodeId, PacketId, NO_FLOW};
use super::queue::{DropCause, QueuedPacket, Verdict};
use std::collections::VecDeque;
use crate::rng::RngStream;
use crate::scenario::{default_queue, LinkParams};
use crate::time::{Rate, SimTime};

/// What one processed event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// An internal event (a serialization ended and the packet entered the pipe).
    Internal,
    /// The packet reached the far end of the link.
    Delivered(PacketId),
    /// The packet was lost on the link: the error model, or a discipline dropping a
    /// packet it had queued (AQM). An arriving packet's drop is `offer`'s verdict.
    Lost(PacketId, DropCause),
}

/// A link model driven by an outside clock; times never go backwards between calls.
pub trait LinkModel: Send {
    /// A packet of `size` bytes enters the link at `now`: queued (or sent at once) or dropped.
    fn offer(&mut self, now: SimTime, pkt: PacketId, size: u32) -> Verdict;
    /// Model time of the next event, if any.
    fn next_event(&self) -> Option<SimTime>;
    /// Processes the next event if it is due at or before `now`, returning its model
    /// time and what it did; `None` when nothing is due.
    fn step(&mut self, now: SimTime) -> Option<(SimTime, Step)>;
    /// The link's description and counters (for the `links` and `queues` tables).
    fn link(&self) -> &Link;
    /// Closes the occupancy integrals at `end` (call once, before reading the counters).
    fn finish(&mut self, end: SimTime);
}

/// `Link` driven through `LinkModel`: the simulator's link semantics, clocked from outside.
pub struct ClockedLink {
    link: Link,
    /// When the packet in service finishes serialization.
    tx_done: Option<SimTime>,
    /// Queued packets the discipline dropped (AQM), reported by `step` in order.
    lost: VecDeque<(SimTime, PacketId, DropCause)>,
}

impl ClockedLink {
    /// Wraps a built link.
    pub fn new(link: Link) -> Self {
        ClockedLink { link, tx_done: None, lost: VecDeque::new() }
    }

    /// Builds a link as `sim::Simulation::new` does: the default queue when none is
    /// given, the rate told to rate-aware queues, and the random substreams
    /// `link:<name>:queue` and `link:<name>:error` of `seed`, so the same seed draws
    /// the same queue and loss decisions in simulation and emulation.
    pub fn build(id: LinkId, name: &str, from: NodeId, to: NodeId, p: &LinkParams, seed: u64) -> Result<Self, String> {
        // Layered links (a MAC or a link layer, sim/layered.rs) are not driven by a clock yet.
        if p.mac.is_some() || p.link_layer.is_some() {
            return Err(format!("link '{name}': MAC and link-layer models are not emulated yet"));
        }
        let mut qcfg = p.queue.clone().unwrap_or_else(default_queue);
        qcfg.set_link_rate(p.rate);
        if qcfg.hashes_flows() || qcfg.marks_ecn() {
            return Err(format!(
                "link '{name}' queue: flow queuing (fq_codel) and ECN marking are not emulated yet (the emulator \
                 gives the queue no 5-tuple key and does not rewrite IP ECN fields); accepted here: drop_tail, red, \
                 codel and pie, without ecn"
            ));
        }
        let queue = qcfg.build_for_link(0).map_err(|e| format!("link '{name}' queue: {e}"))?;
        let error: Option<Box<dyn ErrorModel>> = match &p.error {
            None => None,
            Some(e) => Some(
                e.build(RngStream::new(seed, &format!("link:{name}:error")))
                    .map_err(|m| format!("link '{name}' error: {m}"))?,
            ),
        };
        let mut link = Link::new(
            id,
            name.to_string(),
            from,
            to,
            Rate(p.rate),
            p.delay,
            queue,
            error,
            RngStream::new(seed, &format!("link:{name}:queue")),
        );
        link.jitter = LinkJitter::build(p.jitter.as_ref(), name, seed)?;
        Ok(ClockedLink::new(link))
    }

    fn start_next(&mut self, now: SimTime) {
        if let Some(q) = self.link.dequeue(now) {
            self.tx_done = Some(self.link.start_tx(q, now));
        }
        self.take_aqm_drops(now);
    }

    /// Counts the packets the discipline just dropped and queues their `Step::Lost`.
    fn take_aqm_drops(&mut self, now: SimTime) {
        let mut drops = std::mem::take(&mut self.link.aqm_drops);
        for (q, cause) in drops.drain(..) {
            self.link.record_drop(cause);
            self.lost.push_back((now, q.id, cause));
        }
        self.link.aqm_drops = drops;
    }
}

impl LinkModel for ClockedLink {
    fn offer(&mut self, now: SimTime, pkt: PacketId, size: u32) -> Verdict {
        let link = &mut self.link;
        link.account(now);
        let mut queued = QueuedPacket::new(pkt, size);
        queued.flow = NO_FLOW;
        let verdict = link.enqueue(now, queued, || 0);
        match verdict {
            Verdict::Dropped(cause) => link.record_drop(cause),
            Verdict::Enqueued => {
                link.stats.enq_pkts += 1;
                link.stats.enq_bytes += size as u64;
                if link.in_service.is_none() {
                    self.start_next(now);
                }
                self.link.note_occupancy_max();
            }
        }
        self.take_aqm_drops(now);
        verdict
    }

    fn next_event(&self) -> Option<SimTime> {
        if let Some(&(t, _, _)) = self.lost.front() {
            return Some(t);
        }
        let arrival = self.link.pipe.front().map(|&(t, _)| t);
        match (self.tx_done, arrival) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn step(&mut self, now: SimTime) -> Option<(SimTime, Step)> {
        // A drop already happened at its own time (at or before the caller's `now`).
        if let Some((t, pkt, cause)) = self.lost.pop_front() {
            return Some((t, Step::Lost(pkt, cause)));
        }
        let arrival = self.link.pipe.front().map(|&(t, _)| t);
        match (self.tx_done, arrival) {
            (Some(t), a) if t <= now && a.is_none_or(|a| t <= a) => {
                self.tx_done = None;
                let pref = self.link.finish_tx(t);
                let (pkt, size) = (pref.id, pref.size);
                let start = self.link.airtime_start(t, size);
                let lost = match self.link.error.as_mut() {
                    Some(e) => e.is_lost(start, t, size),
                    None => false,
                };
                self.link.account(t);
                self.start_next(t);
                if lost {
                    self.link.record_drop(DropCause::Corruption);
                    Some((t, Step::Lost(pkt, DropCause::Corruption)))
                } else {
                    self.link.pipe_push(t, pref);
                    Some((t, Step::Internal))
                }
            }
            (_, Some(a)) if a <= now => {
                let (pkt, _) = self.link.pipe_pop().expect("front was seen");
                Some((a, Step::Delivered(pkt.id)))
            }
            _ => None,
        }
    }

    fn link(&self) -> &Link {
        &self.link
    }

    fn finish(&mut self, end: SimTime) {
        self.link.account(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::error::bernoulli::BernoulliParams;
    use crate::net::error::ErrorConfig;
    use crate::net::queue::droptail::{DropTailParams, DropTailSemantics};
    use crate::net::queue::red::RedParams;
    use crate::net::queue::{Limit, QueueConfig};
    use crate::scenario::{FlowSpec, Interval, LinkSpec, RecordSpec, Scenario, Topology, UdpFlowSpec};
    use crate::time::SimDuration;

    /// Runs `n` packets of `size` bytes offered every `gap` through a `ClockedLink`,
    /// stepping it up to each offer (as the emulator does), then to the end. Returns
    /// the link, the packets delivered, the last event's time and the delivered
    /// packets' summed one-way delay in ns.
    fn drive(p: &LinkParams, seed: u64, gap: SimDuration, size: u32, n: u64) -> (ClockedLink, u64, SimTime, u64) {
        let mut l = ClockedLink::build(0, "ab", 0, 1, p, seed).unwrap();
        let (mut delivered, mut owd_ns) = (0, 0);
        let mut last = SimTime::ZERO;
        let run_to = |l: &mut ClockedLink, now: SimTime, delivered: &mut u64, owd_ns: &mut u64, last: &mut SimTime| {
            while let Some((t, s)) = l.step(now) {
                assert!(t <= now && t >= *last, "events in time order");
                *last = t;
                if let Step::Delivered(id) = s {
                    *delivered += 1;
                    *owd_ns += t.0 - id.0 as u64 * gap.0;
                }
            }
        };
        for i in 0..n {
            let now = SimTime(i * gap.0);
            run_to(&mut l, now, &mut delivered, &mut owd_ns, &mut last);
            l.offer(now, PacketId(i as u32), size);
        }
        run_to(&mut l, SimTime::MAX, &mut delivered, &mut owd_ns, &mut last);
        (l, delivered, last, owd_ns)
    }

    fn simulate(p: &LinkParams, seed: u64, gap: SimDuration, size: u32, n: u64) -> crate::metrics::RunResult {
        let sc = Scenario {
            name: "x".into(),
            topology: Topology::Graph {
                nodes: vec!["a".into(), "b".into()],
                links: vec![LinkSpec { name: "ab".into(), from: "a".into(), to: "b".into(), params: p.clone() }],
            },
            flows: vec![FlowSpec::Udp(UdpFlowSpec {
                name: Some("u".into()),
                group: String::new(),
                src: "a".into(),
                dst: "b".into(),
                start: SimTime::ZERO,
                // The n-th send would be at n*gap; stop just before it.
                stop: Some(SimTime(n * gap.0 - 1)),
                packet_bytes: size,
                interval: Interval::Constant { mean: gap },
            })],
            duration: Some(SimDuration::from_secs(1000)),
            warmup: None,
            max_duration: SimDuration::from_secs(1000),
            record: RecordSpec::default(),
            workload: None,
        };
        crate::sim::run(&sc, seed).unwrap()
    }

    /// The same arrivals through the simulator and through `ClockedLink` give the same
    /// counters, exactly: both use `Link`, the queue and error models and the same
    /// random substreams. Four links: drop-tail slot (overload 1.2 ms service per 1 ms
    /// arrival), RED in byte mode, a Bernoulli 5% error model, and drop-tail with
    /// exponential delay variation (`net/jitter.rs`), where the mean one-way delay
    /// shows the same draws on both.
    #[test]
    fn matches_the_simulator() {
        let dt = |limit, sem| {
            Some(QueueConfig::DropTail(DropTailParams { limit, semantics: Some(sem), count_in_service: false }))
        };
        let red: RedParams = serde_json::from_str(
            r#"{"limit": {"packets": 30}, "min_th": 3, "max_th": 9, "max_p": 0.1, "mean_pktsize": 1500}"#,
        )
        .unwrap();
        let cases = [
            LinkParams {
                rate: 10_000_000,
                delay: SimDuration::from_millis(5),
                queue: dt(Limit::Packets(5), DropTailSemantics::Slot),
                error: None,
                jitter: None,
                mac: None,
                link_layer: None,
            },
            LinkParams {
                rate: 10_000_000,
                delay: SimDuration::from_millis(20),
                queue: Some(QueueConfig::Red(red)),
                error: None,
                jitter: None,
                mac: None,
                link_layer: None,
            },
            LinkParams {
                rate: 20_000_000,
                delay: SimDuration::ZERO,
                queue: dt(Limit::Bytes(6000), DropTailSemantics::ByteLoose),
                error: Some(ErrorConfig::Bernoulli(BernoulliParams { per: 0.05 })),
                jitter: None,
                mac: None,
                link_layer: None,
            },
            // Delay variation above the packets' spacing, so order keeping binds too.
            LinkParams {
                rate: 10_000_000,
                delay: SimDuration::from_millis(5),
                queue: dt(Limit::Packets(5), DropTailSemantics::Slot),
                error: None,
                jitter: Some(crate::net::jitter::JitterConfig::Exponential { mean: SimDuration::from_micros(800) }),
                mac: None,
                link_layer: None,
            },
        ];
        for (k, p) in cases.iter().enumerate() {
            // Every 6 ms an offer falls on a departure's instant. This link takes the
            // departure first, as the simulator does for a send whose timer was set
            // after the departing packet started serializing (here 1 ms < 1.2 ms).
            let (gap, n) = (SimDuration::from_millis(1), 2000);
            let sim = simulate(p, 7, gap, 1500, n);
            let (mut cl, delivered, last, owd_ns) = drive(p, 7, gap, 1500, n);
            cl.finish(last);
            let s = &cl.link().stats;
            let q = &sim.queues;
            assert_eq!(sim.udp.pkts_sent[0], n, "case {k}");
            assert_eq!(sim.udp.pkts_delivered[0], delivered, "case {k}: delivered");
            assert_eq!(q.enq_pkts[0], s.enq_pkts, "case {k}: enqueued");
            for c in DropCause::ALL {
                let col = match c {
                    DropCause::Overflow => &q.drops_overflow,
                    DropCause::Early => &q.drops_early,
                    DropCause::Forced => &q.drops_forced,
                    DropCause::Corruption => &q.drops_corruption,
                };
                assert_eq!(col[0], s.drops[c as usize], "case {k}: drops {}", c.name());
            }
            assert_eq!(q.occ_max_pkts[0], s.occ_max_pkts, "case {k}: max occupancy");
            assert_eq!(sim.links.tx_pkts[0], s.tx_pkts, "case {k}: transmitted");
            assert!(s.drops.iter().sum::<u64>() > 0, "case {k} exercises drops");
            // The same arrival times, so the same mean one-way delay (to float rounding).
            let owd = sim.udp.owd_mean_s[0].expect("delivered packets");
            assert!((owd - owd_ns as f64 / delivered as f64 / 1e9).abs() < 1e-12, "case {k}: owd {owd} s against {} s", owd_ns as f64 / delivered as f64 / 1e9);
        }
    }

    /// Hand-worked: 10 Mbit/s, 1500 B = 1.2 ms per packet, 5 ms delay. Two packets at
    /// t = 0: the first finishes at 1.2 ms and arrives at 6.2 ms, the second finishes at
    /// 2.4 ms and arrives at 7.4 ms. A caller asking late (at 10 ms) still sees the
    /// model times.
    #[test]
    fn events_keep_model_time_when_polled_late() {
        let p = LinkParams { rate: 10_000_000, delay: SimDuration::from_millis(5), queue: None, error: None, jitter: None, mac: None, link_layer: None };
        let mut l = ClockedLink::build(0, "ab", 0, 1, &p, 0).unwrap();
        assert_eq!(l.offer(SimTime::ZERO, PacketId(1), 1500), Verdict::Enqueued);
        assert_eq!(l.offer(SimTime::ZERO, PacketId(2), 1500), Verdict::Enqueued);
        assert_eq!(l.next_event(), Some(SimTime(1_200_000)));
        assert_eq!(l.step(SimTime(1_000_000)), None);
        let late = SimTime(10_000_000);
        let mut seen = Vec::new();
        while let Some(e) = l.step(late) {
            seen.push(e);
        }
        assert_eq!(
            seen,
            vec![
                (SimTime(1_200_000), Step::Internal),
                (SimTime(2_400_000), Step::Internal),
                (SimTime(6_200_000), Step::Delivered(PacketId(1))),
                (SimTime(7_400_000), Step::Delivered(PacketId(2))),
            ]
        );
        assert_eq!(l.next_event(), None);
    }
}
