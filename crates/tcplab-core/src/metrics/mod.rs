//! Results: columnar tables and time series.
//!
//! Summaries (flows, udp, transactions, queues, links) are always produced. Time series are recorded
//! only when the scenario's `record` asks for them, into columns that grow by push
//! (amortised; nothing is allocated per packet when recording is off).
//!
//! Units are in the column names: `_s` seconds, `_bps` bit/s, `_bytes`/`bytes_` bytes,
//! `_pkts` packets. A missing value (a flow that never completed) is `None` (JSON null,
//! NaN in pandas).
//!
//! **Measurement window.** Summaries cover the window [`window_start_s`,
//! `window_end_s`], which every summary table states in those two columns. The window
//! ends at the end of the run, `meta.sim_end_s`: the scenario's `duration` when it
//! sets one (exactly, whenever the last event happened), otherwise the time of the
//! last event processed (the last flow's completion, or `max_duration`). It starts at
//! the scenario's `warmup` (default 0). Windowed: the queue counters, drops and
//! occupancies; the links' transmissions, utilisation, busy sampling and realised
//! PER; TCP goodput (over the flow's part of the window, see `FlowTable`); UDP
//! counts and delays. Not windowed: the TCP flows' event times and per-connection
//! counters (segments, retransmissions, timeouts, final state), UDP jitter (the
//! estimate at the end), the time series, and `Meta`'s run-wide counts.

use serde::Serialize;

pub mod recorder;

/// One row per flow (TCP). See the field docs for units.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowTable {
    pub flow_id: Vec<u32>,
    pub name: Vec<String>,
    pub group: Vec<String>,
    pub cc: Vec<String>,
    pub src: Vec<String>,
    pub dst: Vec<String>,
    /// When the application opened the connection (SYN sent), s.
    pub start_s: Vec<f64>,
    /// When the SYN-ACK arrived, s.
    pub established_s: Vec<Option<f64>>,
    /// When the receiver had every byte and the FIN, s.
    pub completed_s: Vec<Option<f64>>,
    /// completed - start (includes the handshake), s.
    pub elapsed_s: Vec<Option<f64>>,
    pub bytes_target: Vec<Option<u64>>,
    pub bytes_delivered: Vec<u64>,
    /// Bits delivered to the application during [window_start_s, window_end_s]
    /// divided by its length, bit/s; 0 when that span is empty.
    pub goodput_bps: Vec<f64>,
    /// Start of the span goodput covers: the later of the flow's start and the run's
    /// window start (`warmup`), s.
    pub window_start_s: Vec<f64>,
    /// End of that span: the flow's completion, else its stop time, else the end of
    /// the run (never past the run's end, never before `window_start_s`), s. Without
    /// `warmup`, a finite flow's span is its elapsed time and a bulk flow's runs
    /// from its start to its stop or the end of the run.
    pub window_end_s: Vec<f64>,
    pub segs_sent: Vec<u64>,
    pub retransmits: Vec<u64>,
    pub fast_retransmits: Vec<u64>,
    pub rtos: Vec<u64>,
    /// RTOs whose retransmitted segment had not been lost (simulator truth).
    pub spurious_rtos: Vec<u64>,
    pub syn_retransmits: Vec<u64>,
    /// SYN timeouts whose SYN had not been lost (its SYN-ACK was slow or lost).
    pub spurious_syn_rtos: Vec<u64>,
    /// Spurious RTOs detected by F-RTO at the sender.
    pub frto_spurious: Vec<u64>,
    /// Window reductions in response to ECN-Echo (RFC 3168 CWR episodes).
    pub ecn_reductions: Vec<u64>,
    /// Tail loss probes sent (RFC 8985 §7).
    pub tlp_probes: Vec<u64>,
    pub final_cwnd_bytes: Vec<u64>,
    /// ssthresh at the end of the run; `None` while it was never set (unbounded).
    /// RFC 2140 temporal sharing caches this value for the next connection.
    pub final_ssthresh_bytes: Vec<Option<u64>>,
    pub final_srtt_s: Vec<Option<f64>>,
}

/// One row per UDP flow; counts and delays over the measurement window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UdpTable {
    pub flow_id: Vec<u32>,
    pub name: Vec<String>,
    pub group: Vec<String>,
    pub src: Vec<String>,
    pub dst: Vec<String>,
    /// The measurement window the counts cover (the run's), s.
    pub window_start_s: Vec<f64>,
    pub window_end_s: Vec<f64>,
    /// Datagrams sent, delivered and lost in the window (each counted at the instant
    /// it was sent, delivered or dropped).
    pub pkts_sent: Vec<u64>,
    pub pkts_delivered: Vec<u64>,
    /// Dropped by a queue or an error model.
    pub pkts_lost: Vec<u64>,
    /// One-way delay of the datagrams delivered in the window, s.
    pub owd_mean_s: Vec<Option<f64>>,
    pub owd_max_s: Vec<Option<f64>>,
    /// RFC 3550 §6.4.1 interarrival jitter estimate at the end of the run, s.
    pub jitter_s: Vec<Option<f64>>,
    /// Deliveries whose sequence number was not above every earlier one (reordered or
    /// duplicated).
    pub pkts_out_of_order: Vec<u64>,
}

/// One row per request/response transaction (`app::rpc`), in creation order. Every
/// transaction appears: those still open at the end have `state` "open" (response
/// incomplete, `uct_s` null) or "completed" (response in, connection still closing).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TransactionTable {
    /// Creation order over all applications of the run.
    pub txn_id: Vec<u64>,
    /// The application (scenario entry) name.
    pub app: Vec<String>,
    pub group: Vec<String>,
    pub client: Vec<String>,
    pub server: Vec<String>,
    /// Arrival number within the application; a batch's transactions share it.
    pub batch: Vec<u64>,
    /// The server's initial window for the response, segments.
    pub iw_segments: Vec<u32>,
    pub request_bytes: Vec<u64>,
    pub response_bytes: Vec<u64>,
    /// The client's connect (SYN sent), s.
    pub start_s: Vec<f64>,
    /// The SYN-ACK reached the client, s.
    pub established_s: Vec<Option<f64>>,
    /// The last response byte reached the client in order, s.
    pub completed_s: Vec<Option<f64>>,
    /// User completion time: completed - start, s.
    pub uct_s: Vec<Option<f64>>,
    /// Both FINs acknowledged, s.
    pub closed_s: Vec<Option<f64>>,
    /// Response bytes delivered in order to the client.
    pub bytes_delivered: Vec<u64>,
    /// Data segments retransmitted, both directions.
    pub retransmits: Vec<u64>,
    /// Retransmission timeouts on data, both directions.
    pub rtos: Vec<u64>,
    /// Of those, timeouts undone as spurious by Eifel detection (`tcp.timestamps`).
    pub rtos_undone: Vec<u64>,
    /// SYN retransmissions by the client.
    pub syn_retransmits: Vec<u64>,
    /// Packets of the transaction dropped in the network (queues, error models).
    pub drops: Vec<u64>,
    /// "closed", "completed", "open" or "failed" (SYN retries exhausted).
    pub state: Vec<&'static str>,
}

impl TransactionTable {
    /// Appends one record; `app`, `group`, `client` and `server` are its names.
    pub fn push(&mut self, r: &crate::app::TransactionRecord, app: &str, group: &str, client: &str, server: &str) {
        let s = |t: crate::time::SimTime| t.as_secs_f64();
        self.txn_id.push(r.txn_id);
        self.app.push(app.to_owned());
        self.group.push(group.to_owned());
        self.client.push(client.to_owned());
        self.server.push(server.to_owned());
        self.batch.push(r.batch);
        self.iw_segments.push(r.iw_segments);
        self.request_bytes.push(r.request_bytes);
        self.response_bytes.push(r.response_bytes);
        self.start_s.push(s(r.start));
        self.established_s.push(r.established.map(s));
        self.completed_s.push(r.completed.map(s));
        self.uct_s.push(r.completed.map(|c| c.since(r.start).as_secs_f64()));
        self.closed_s.push(r.closed.map(s));
        self.bytes_delivered.push(r.bytes_delivered);
        self.retransmits.push(r.retransmits);
        self.rtos.push(r.rtos);
        self.rtos_undone.push(r.rtos_undone);
        self.syn_retransmits.push(r.syn_retransmits);
        self.drops.push(r.drops);
        self.state.push(r.state);
    }
}

/// One row per link's queue; counts and occupancies over the measurement window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueTable {
    pub link: Vec<String>,
    /// The measurement window the row covers (the same on every row), s.
    pub window_start_s: Vec<f64>,
    pub window_end_s: Vec<f64>,
    pub enq_pkts: Vec<u64>,
    pub enq_bytes: Vec<u64>,
    pub drops_overflow: Vec<u64>,
    pub drops_early: Vec<u64>,
    pub drops_forced: Vec<u64>,
    pub drops_corruption: Vec<u64>,
    /// Packets marked CE (RFC 3168) by the queue instead of dropped.
    pub ce_marks: Vec<u64>,
    /// Time-weighted mean occupancy over the window (waiting packets, not the one in
    /// service).
    pub occ_mean_pkts: Vec<f64>,
    /// Largest occupancy in the window (from the occupancy at its start).
    pub occ_max_pkts: Vec<u32>,
    pub occ_mean_bytes: Vec<f64>,
    pub occ_max_bytes: Vec<u64>,
}

/// One row per link; transmissions and utilisation over the measurement window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkTable {
    pub link: Vec<String>,
    /// The measurement window the row covers (the same on every row), s.
    pub window_start_s: Vec<f64>,
    pub window_end_s: Vec<f64>,
    pub from: Vec<String>,
    pub to: Vec<String>,
    pub rate_bps: Vec<u64>,
    pub delay_s: Vec<f64>,
    pub tx_pkts: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    /// Busy fraction of the transmitter over the window.
    pub utilisation: Vec<f64>,
    /// Fraction of the window's sampling instants with a non-empty queue (seed 001);
    /// `None` when sampling was off.
    pub busy_sample_fraction: Vec<Option<f64>>,
    /// Packet error rate the error model realised in the window; `None` without an
    /// error model.
    pub realised_per: Vec<Option<f64>>,
    /// MAC model and mode (e.g. `dama/rbdc`); `None` without a MAC.
    pub mac: Vec<Option<String>>,
    /// Slots the MAC allocated over the run; `None` without a MAC.
    pub mac_slots_allocated: Vec<Option<u64>>,
    /// Capacity requests the MAC sent (RBDC rates, VBDC volumes); `None` without a MAC.
    pub mac_requests: Vec<Option<u64>>,
    /// Link-layer protocol (e.g. `slacp`); `None` without one. The `ll_*` counters
    /// below are `None` without a link layer.
    pub ll: Vec<Option<&'static str>>,
    /// Data frames sent for the first time.
    pub ll_frames_sent: Vec<Option<u64>>,
    /// Data frames sent again.
    pub ll_frames_retransmitted: Vec<Option<u64>>,
    /// FEC redundancy frames sent.
    pub ll_fec_frames_sent: Vec<Option<u64>>,
    /// FEC blocks formed.
    pub ll_fec_blocks: Vec<Option<u64>>,
    /// FEC blocks in which decoding recovered at least one frame.
    pub ll_fec_blocks_recovered: Vec<Option<u64>>,
    /// Frames recovered by FEC decoding.
    pub ll_frames_recovered: Vec<Option<u64>>,
    /// Frames given up after the persistence limit (IP packets lost).
    pub ll_frames_given_up: Vec<Option<u64>>,
    /// IP packets lost for good per data frame first sent (given up, or lost on a
    /// channel without ARQ).
    pub ll_residual_loss: Vec<Option<f64>>,
    /// Frame transmissions corrupted on the link (any kind).
    pub ll_frames_corrupted: Vec<Option<u64>>,
    /// Link ACKs sent by the receiver.
    pub ll_acks_sent: Vec<Option<u64>>,
}

/// cwnd/ssthresh/srtt/rto/state of TCP senders, one row per change.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CwndSeries {
    pub t_s: Vec<f64>,
    pub flow_id: Vec<u32>,
    pub cwnd_bytes: Vec<u64>,
    /// `None` while ssthresh is unbounded.
    pub ssthresh_bytes: Vec<Option<u64>>,
    pub srtt_s: Vec<Option<f64>>,
    pub rto_s: Vec<f64>,
    /// 0 open, 1 recovery, 2 loss (after an RTO).
    pub state: Vec<u8>,
}

/// Queue occupancy of recorded links, one row per change.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueSeries {
    pub t_s: Vec<f64>,
    pub link: Vec<u32>,
    pub pkts: Vec<u32>,
    pub bytes: Vec<u64>,
}

/// One-way delay of delivered data packets of recorded flows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OwdSeries {
    pub t_s: Vec<f64>,
    pub flow_id: Vec<u32>,
    pub owd_s: Vec<f64>,
}

/// Drop events.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DropSeries {
    pub t_s: Vec<f64>,
    pub link: Vec<u32>,
    pub flow_id: Vec<u32>,
    pub cause: Vec<&'static str>,
    /// The dropped packet's place in its flow: a TCP data-direction segment's sequence
    /// number relative to the ISN (the SYN is 0, the first data byte 1), a UDP
    /// datagram's number from 0; `None` for the ACK direction and for packets of no
    /// flow (link-layer frames). Names which segment a burst of drops took, so a run's
    /// drops can be matched against another's (docs/emulation.md).
    pub seq: Vec<Option<u64>>,
}

/// Goodput of every TCP and UDP flow on a fixed grid of `[record] throughput_interval`
/// (`recorder`): one row per flow and interval, from the interval holding the flow's
/// start to the one holding its completion (or the end of the run), ordered by
/// interval and then flow. Interval k covers (k·interval, (k+1)·interval]; the last
/// one ends with the run. A flow's `bytes` sum to its `bytes_delivered` exactly.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ThroughputSeries {
    /// End of the interval, s.
    pub t_s: Vec<f64>,
    pub flow_id: Vec<u32>,
    /// Length of the interval (the scenario's interval; shorter for a last interval
    /// cut by the end of the run), s.
    pub interval_s: Vec<f64>,
    /// Bytes delivered in order to the receiving application in the interval (TCP
    /// payload; for UDP, whole datagrams of `packet_bytes`).
    pub bytes: Vec<u64>,
    /// bytes · 8 / interval_s, bit/s.
    pub goodput_bps: Vec<f64>,
}

/// Per-packet events of the flows `[record] packets` names (`recorder`), in time
/// order: `enqueue`, `drop`, `transmit` (start of serialization) on a link; `receive`
/// (a data packet at its TCP receiver or UDP sink) and `ack` (a packet of the ACK
/// direction at the TCP sender) at the endpoints.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PacketSeries {
    /// Time of the event, integer ns (exact). The front end adds `t_s` (t_ns · 1e-9),
    /// which the core leaves out to keep the result document small.
    pub t_ns: Vec<u64>,
    pub flow_id: Vec<u32>,
    pub event: Vec<&'static str>,
    /// The link of `enqueue`, `drop` and `transmit` (index into `meta.link_names`);
    /// `None` at the endpoints.
    pub link: Vec<Option<u32>>,
    /// `data` (sender to receiver, and UDP) or `ack` (receiver to sender).
    pub direction: Vec<&'static str>,
    /// TCP: the segment's sequence number relative to the ISN (the SYN is 0, the first
    /// data byte 1); UDP: the datagram's number from 0.
    pub seq: Vec<u64>,
    /// The cumulative ACK number of `ack`-direction packets; `None` on data.
    pub ack: Vec<Option<u64>>,
    /// Size on the wire, IP headers included, bytes.
    pub bytes: Vec<u32>,
    /// TCP payload bytes (0 for a pure ACK, SYN or FIN); UDP: the datagram's size.
    pub payload_bytes: Vec<u32>,
    /// The drop cause (`overflow`, `early`, `forced`, `corruption`) of `drop` rows.
    pub cause: Vec<Option<&'static str>>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Series {
    pub cwnd: CwndSeries,
    pub queue: QueueSeries,
    pub owd: OwdSeries,
    pub drops: DropSeries,
    pub throughput: ThroughputSeries,
    pub packets: PacketSeries,
}

/// Run-level facts. Counts here cover the whole run, not the measurement window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Meta {
    pub name: String,
    pub seed: u64,
    /// End of the run and of the measurement window: the scenario's `duration` if
    /// set, else the time of the last event processed, s.
    pub sim_end_s: f64,
    /// Start of the measurement window: the scenario's `warmup`, or 0, s.
    pub window_start_s: f64,
    pub events: u64,
    /// FNV-1a digest of the delivery/drop trace, hex.
    pub digest: String,
    /// Packets transmitted by the link named `bottleneck` (0 if none).
    pub bottleneck_pkts: u64,
    pub drops: u64,
    /// Timer events handled (delayed ACK, RTO, TLP, pacing, reorder), of `events`.
    pub timer_events: u64,
    /// Most packets alive at once (the pool's high-water mark).
    pub peak_packets: usize,
    /// Bytes of per-flow simulator state at the end of the run, summed over flows
    /// (`Simulation::flow_state_bytes`).
    pub flow_state_bytes: u64,
    /// Names of links, indexed by the `link` columns of the series.
    pub link_names: Vec<String>,
}

/// Everything a run produces.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunResult {
    pub meta: Meta,
    pub flows: FlowTable,
    pub udp: UdpTable,
    pub transactions: TransactionTable,
    pub queues: QueueTable,
    pub links: LinkTable,
    pub series: Series,
}

/// Incremental FNV-1a-style digest over 64-bit words.
#[derive(Clone, Copy, Debug)]
pub struct Digest(pub u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    #[inline]
    pub fn mix(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x0000_0100_0000_01b3);
        self.0 ^= self.0 >> 29;
    }
}
