//! Recording hooks for the two opt-in series that follow packets: per-flow goodput at
//! a fixed interval (`[record] throughput_interval`) and the per-packet event trace of
//! chosen flows (`[record] packets`).
//!
//! The simulation calls one hook at each point a packet passes, whatever path carries
//! it (plain links in `sim/mod.rs`, layered links in `sim/layered.rs`, or any other
//! link path that serializes packets):
//!
//! | hook | where | row `event` |
//! |---|---|---|
//! | [`Recorder::enqueue`] | the link's queue (or link layer) accepted the packet | `enqueue` |
//! | [`Recorder::drop`] | a queue, an AQM or an error model discarded it | `drop` (with `cause`) |
//! | [`Recorder::transmit`] | its first bit starts to serialize | `transmit` |
//! | [`Recorder::receive`] | a data packet reached its TCP receiver (or UDP sink) | `receive` |
//! | [`Recorder::ack`] | a packet of the ACK direction reached the TCP sender | `ack` |
//!
//! Each hook takes the event's time explicitly, so a path that knows a departure time
//! in advance (a transmission computed at enqueue) may report it early: `finish`
//! orders the trace by time, keeping the order of the calls among equal times.
//!
//! **Cost.** Off (the default), every hook is one predictable branch on a flag the
//! recorder owns, and nothing is allocated. The packet trace, when on, reads the
//! pooled packet and appends one row to columns that grow by doubling (amortised, no
//! allocation per packet); goodput, when on, adds to a per-flow vector of interval
//! bins that grows once per interval, not per packet. Measured with `cargo bench
//! --bench engine -- dumbbell-10x100M-60s [--record-packets | --record-throughput]`
//! (2 shared cores at load 11, so ±20% from run to run; medians of 4-5 interleaved
//! runs): off, 7.19 M events/s against 7.14 M before these hooks (the same 4,578,144
//! events); 100 ms goodput, no change beyond that noise (6,000 rows); every flow's
//! packets, 3.0 M against 5.7 M events/s in the same period: 5.32 M rows (1.16 per
//! event), about 130 ns and 100 B each (524 MB peak). Through `tcplab.run` the JSON
//! and the DataFrames add about 3 us per row.
//!
//! **Goodput bins** follow a fixed grid of `interval` from time 0: bin `k` covers
//! (k·interval, (k+1)·interval], so a delivery exactly on a boundary belongs to the
//! interval that ends there, and the last bin ends with the run. Bytes are counted
//! when the receiver delivers them in order to the application (the quantity of the
//! `flows` table's `bytes_delivered`, RFC 9293 §3.10.7.4's "delivered to the user"),
//! so the bins of a flow sum to its `bytes_delivered` exactly. This is goodput, not
//! the link throughput: retransmissions, headers and out-of-order data not yet
//! delivered do not count (RFC 6349 §2.3 calls the application-level rate "TCP
//! throughput"; the `links` table has the wire's).

use super::{PacketSeries, ThroughputSeries};
use crate::net::packet::{FlowId, LinkFrameKind, LinkId, Packet, PacketPool, PacketRef, Transport};
use crate::net::queue::DropCause;
use crate::time::{SimDuration, SimTime};

/// What happened to a packet (the `event` column of the packet trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketEvent {
    Enqueue,
    Drop(DropCause),
    Transmit,
    Receive,
    Ack,
}

impl PacketEvent {
    pub fn name(self) -> &'static str {
        match self {
            PacketEvent::Enqueue => "enqueue",
            PacketEvent::Drop(_) => "drop",
            PacketEvent::Transmit => "transmit",
            PacketEvent::Receive => "receive",
            PacketEvent::Ack => "ack",
        }
    }
}

/// One flow's goodput bins on the grid of `interval_ns`: `bins[i]` holds the bytes
/// delivered in grid interval `first + i`, interval k being (k·iv, (k+1)·iv]. The
/// emulator's sinks fill the same bins from the clock (`crates/tcplab-emu`).
#[derive(Clone, Debug, Default)]
pub struct GoodputBins {
    first: u64,
    bins: Vec<u64>,
}

impl GoodputBins {
    /// Empty bins for a flow that starts at `start`: a delivery comes after it, so in
    /// an interval from `start / iv` on.
    pub fn new(start: SimTime, interval_ns: u64) -> Self {
        GoodputBins { first: start.0 / interval_ns.max(1), bins: Vec::new() }
    }

    /// Adds `bytes` delivered at `t` (grows once per interval, not per call).
    #[inline]
    pub fn add(&mut self, t: SimTime, bytes: u64, interval_ns: u64) {
        let k = t.0.saturating_sub(1) / interval_ns;
        let i = (k - self.first.min(k)) as usize;
        if i >= self.bins.len() {
            self.bins.resize(i + 1, 0);
        }
        self.bins[i] += bytes;
    }

    /// The first grid interval and the bytes of each from it.
    pub fn bins(&self) -> (u64, &[u64]) {
        (self.first, &self.bins)
    }
}

/// The goodput series of `flows` (each its flow id, its bins and the time its rows
/// end: its completion, or `end`; in flow-id order) up to the run's `end`: for each
/// flow one row per grid interval from the one holding its start to the one holding
/// its last time, ordered by interval and then flow id. The last interval ends at `end`.
pub fn goodput_series(interval_ns: u64, end: SimTime, flows: &[(u32, &GoodputBins, SimTime)]) -> ThroughputSeries {
    let mut s = ThroughputSeries::default();
    let iv = interval_ns;
    if iv == 0 || flows.is_empty() {
        return s;
    }
    let interval_of = |t: SimTime| t.0.saturating_sub(1) / iv;
    let end_k = interval_of(end);
    let span: Vec<(u64, u64)> =
        flows.iter().map(|(_, b, last)| (b.first, interval_of((*last).min(end)).max(b.first).min(end_k))).collect();
    let (Some(lo), Some(hi)) = (span.iter().map(|s| s.0).min(), span.iter().map(|s| s.1).max()) else { return s };
    for k in lo..=hi {
        let t_end = ((k + 1) * iv).min(end.0.max(k * iv + 1));
        let len = t_end - k * iv;
        for (f, (id, b, _)) in flows.iter().enumerate() {
            if k < span[f].0 || k > span[f].1 {
                continue;
            }
            let bytes = b.bins.get((k - b.first) as usize).copied().unwrap_or(0);
            s.t_s.push(t_end as f64 * 1e-9);
            s.flow_id.push(*id);
            s.interval_s.push(len as f64 * 1e-9);
            s.bytes.push(bytes);
            s.goodput_bps.push(bytes as f64 * 8.0 / (len as f64 * 1e-9));
        }
    }
    s
}

/// The opt-in series that follow packets, and their hooks (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Goodput interval, ns; 0 when off.
    interval_ns: u64,
    /// Per flow id: its goodput bins (empty when off).
    bins: Vec<GoodputBins>,
    /// Whether any flow's packets are traced: the one test every hook makes.
    trace_on: bool,
    /// Per flow id: whether its packets are traced.
    traced: Vec<bool>,
    trace: PacketSeries,
}

impl Recorder {
    /// A recorder for flows `0..starts.len()` (the scenario's TCP and UDP flows, by
    /// id) starting at `starts`: goodput every `interval` (if any), and the packet
    /// trace of the flows with `traced[id]` true.
    pub fn new(interval: Option<SimDuration>, starts: &[SimTime], traced: Vec<bool>) -> Recorder {
        let interval_ns = interval.map_or(0, |d| d.0);
        let bins = if interval_ns > 0 { starts.iter().map(|&s| GoodputBins::new(s, interval_ns)).collect() } else { Vec::new() };
        Recorder { interval_ns, bins, trace_on: traced.iter().any(|&t| t), traced, trace: PacketSeries::default() }
    }

    /// `pkt` was accepted by link `link`'s queue (or link layer) at `now`.
    #[inline(always)]
    pub fn enqueue(&mut self, now: SimTime, link: LinkId, pkt: PacketRef, pool: &PacketPool) {
        if self.trace_on {
            self.link_row(now, PacketEvent::Enqueue, link, pkt, pool);
        }
    }

    /// `pkt` was discarded on link `link` at `now` (call before it is freed).
    #[inline(always)]
    pub fn drop(&mut self, now: SimTime, link: LinkId, pkt: PacketRef, cause: DropCause, pool: &PacketPool) {
        if self.trace_on {
            self.link_row(now, PacketEvent::Drop(cause), link, pkt, pool);
        }
    }

    /// Link `link` starts serializing `pkt` at `at` (a link-layer data frame counts as
    /// its IP packet; other link-layer frames belong to no flow).
    #[inline(always)]
    pub fn transmit(&mut self, at: SimTime, link: LinkId, pkt: PacketRef, pool: &PacketPool) {
        if self.trace_on {
            self.link_row(at, PacketEvent::Transmit, link, pkt, pool);
        }
    }

    /// Data packet `p` reached its receiver at `now`, which delivered `delivered`
    /// bytes to the application on it (0 when it fills no hole at the front).
    #[inline(always)]
    pub fn receive(&mut self, now: SimTime, p: &Packet, delivered: u64) {
        if self.interval_ns > 0 && delivered > 0 {
            self.add_goodput(now, p.flow, delivered);
        }
        if self.trace_on {
            self.endpoint_row(now, PacketEvent::Receive, p);
        }
    }

    /// Packet `p` of the ACK direction reached its TCP sender at `now`.
    #[inline(always)]
    pub fn ack(&mut self, now: SimTime, p: &Packet) {
        if self.trace_on {
            self.endpoint_row(now, PacketEvent::Ack, p);
        }
    }

    #[cold]
    #[inline(never)]
    fn add_goodput(&mut self, now: SimTime, flow: FlowId, bytes: u64) {
        if let Some(b) = self.bins.get_mut(flow as usize) {
            b.add(now, bytes, self.interval_ns);
        }
    }

    #[cold]
    #[inline(never)]
    fn link_row(&mut self, t: SimTime, ev: PacketEvent, link: LinkId, pkt: PacketRef, pool: &PacketPool) {
        let mut p = pool.get(pkt.id);
        if let Transport::Link(f) = p.transport {
            match f.kind {
                LinkFrameKind::Data { inner, .. } => p = pool.get(inner),
                _ => return,
            }
        }
        self.row(t, ev, Some(link), p);
    }

    #[cold]
    #[inline(never)]
    fn endpoint_row(&mut self, t: SimTime, ev: PacketEvent, p: &Packet) {
        self.row(t, ev, None, p);
    }

    fn row(&mut self, t: SimTime, ev: PacketEvent, link: Option<LinkId>, p: &Packet) {
        if !self.traced.get(p.flow as usize).copied().unwrap_or(false) {
            return;
        }
        let (direction, seq, ack, payload) = match p.transport {
            Transport::Tcp { hdr, to_receiver: true } => ("data", hdr.seq, None, hdr.len),
            Transport::Tcp { hdr, to_receiver: false } => ("ack", hdr.seq, Some(hdr.ack), hdr.len),
            Transport::Udp { seq } => ("data", seq, None, p.size),
            Transport::Link(_) => return,
        };
        let r = &mut self.trace;
        r.t_ns.push(t.0);
        r.flow_id.push(p.flow);
        r.event.push(ev.name());
        r.link.push(link);
        r.direction.push(direction);
        r.seq.push(seq);
        r.ack.push(ack);
        r.bytes.push(p.size);
        r.payload_bytes.push(payload);
        r.cause.push(match ev {
            PacketEvent::Drop(c) => Some(c.name()),
            _ => None,
        });
    }

    /// The goodput series up to the run's `end`: for each flow, one row per grid
    /// interval from the one holding its start to the one holding `last[id]` (its
    /// completion, or `end`), ordered by interval and then flow id. Empty when off.
    pub fn throughput(&self, end: SimTime, last: &[SimTime]) -> ThroughputSeries {
        let flows: Vec<(u32, &GoodputBins, SimTime)> =
            self.bins.iter().zip(last.iter().copied()).enumerate().map(|(i, (b, l))| (i as u32, b, l)).collect();
        goodput_series(self.interval_ns, end, &flows)
    }

    /// The packet trace, ordered by time (stably: rows of one instant keep the order
    /// their hooks were called in). Empty when off.
    pub fn take_packets(&mut self) -> PacketSeries {
        let mut t = std::mem::take(&mut self.trace);
        if t.t_ns.windows(2).all(|w| w[0] <= w[1]) {
            return t;
        }
        let mut order: Vec<usize> = (0..t.t_ns.len()).collect();
        order.sort_by_key(|&i| t.t_ns[i]);
        fn permute<T: Copy>(v: &mut Vec<T>, order: &[usize]) {
            *v = order.iter().map(|&i| v[i]).collect();
        }
        permute(&mut t.t_ns, &order);
        permute(&mut t.flow_id, &order);
        permute(&mut t.event, &order);
        permute(&mut t.link, &order);
        permute(&mut t.direction, &order);
        permute(&mut t.seq, &order);
        permute(&mut t.ack, &order);
        permute(&mut t.bytes, &order);
        permute(&mut t.payload_bytes, &order);
        permute(&mut t.cause, &order);
        t
    }

    /// Bins of flow `flow` (for tests): the first grid interval and the bytes of each.
    pub fn bins_of(&self, flow: FlowId) -> Option<(u64, &[u64])> {
        self.bins.get(flow as usize).map(GoodputBins::bins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Ecn, TcpHeader};

    const MS: u64 = 1_000_000;

    fn data(flow: FlowId, seq: u64, len: u32) -> Packet {
        Packet {
            flow,
            src: 0,
            dst: 1,
            size: len + 52,
            transport: Transport::Tcp { hdr: TcpHeader { seq, len, ..Default::default() }, to_receiver: true },
            sent_at: SimTime::ZERO,
            ecn: Ecn::NotEct,
        }
    }

    /// Bins are (k·iv, (k+1)·iv]: a delivery on a boundary counts in the interval that
    /// ends there; the last row ends with the run, and rows span start to last.
    #[test]
    fn goodput_bins_on_a_half_open_grid() {
        let iv = SimDuration(100 * MS);
        let mut r = Recorder::new(Some(iv), &[SimTime(150 * MS), SimTime::ZERO], vec![false, false]);
        r.receive(SimTime(200 * MS), &data(0, 1, 1000), 1000); // boundary: bin 1, (100, 200]
        r.receive(SimTime(200 * MS + 1), &data(0, 1001, 1000), 1000); // bin 2
        r.receive(SimTime(250 * MS), &data(0, 2001, 1000), 0); // out of order: nothing delivered
        r.receive(SimTime(10 * MS), &data(1, 1, 500), 500); // bin 0
        assert_eq!(r.bins_of(0), Some((1, &[1000, 1000][..])));
        let s = r.throughput(SimTime(350 * MS), &[SimTime(350 * MS), SimTime(350 * MS)]);
        // Flow 1 from bin 0, flow 0 from bin 1 (its start, 150 ms), both to bin 3 = (300, 350].
        assert_eq!(s.flow_id, vec![1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(s.bytes, vec![500, 1000, 0, 1000, 0, 0, 0]);
        let ends: Vec<u64> = s.t_s.iter().map(|t| (t * 1e3).round() as u64).collect();
        assert_eq!(ends, vec![100, 200, 200, 300, 300, 350, 350]);
        assert_eq!(s.interval_s.last().copied(), Some(0.05));
        assert_eq!(s.goodput_bps[1], 1000.0 * 8.0 / 0.1);
        assert_eq!(s.bytes.iter().sum::<u64>(), 2500);
    }

    /// Off: no rows, and no bins allocated.
    #[test]
    fn off_records_nothing() {
        let mut r = Recorder::new(None, &[SimTime::ZERO], vec![false]);
        r.receive(SimTime(5), &data(0, 1, 10), 10);
        r.ack(SimTime(6), &data(0, 1, 10));
        assert!(r.bins.is_empty());
        assert!(r.take_packets().t_ns.is_empty());
        assert!(r.throughput(SimTime(10), &[SimTime(10)]).t_s.is_empty());
    }

    /// Rows reported ahead of time come out in time order, ties in call order.
    #[test]
    fn trace_is_ordered_by_time_stably() {
        let mut r = Recorder::new(None, &[SimTime::ZERO, SimTime::ZERO], vec![true, false]);
        r.receive(SimTime(30), &data(0, 1, 10), 10);
        r.receive(SimTime(10), &data(1, 1, 10), 10); // not traced
        r.ack(SimTime(10), &data(0, 2, 0));
        r.receive(SimTime(10), &data(0, 3, 0), 0);
        let t = r.take_packets();
        assert_eq!(t.t_ns, vec![10, 10, 30]);
        assert_eq!(t.seq, vec![2, 3, 1]);
        assert_eq!(t.event, vec!["ack", "receive", "receive"]);
    }
}
