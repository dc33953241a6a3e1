//! Results: columnar tables and time series.
//!
//! Summaries (flows, udp, queues, links) are always produced. Time series are recorded
//! only when the scenario's `record` asks for them, into columns that grow by push
//! (amortised; nothing is allocated per packet when recording is off).
//!
//! Units are in the column names: `_s` seconds, `_bps` bit/s, `_bytes`/`bytes_` bytes,
//! `_pkts` packets. A missing value (a flow that never completed) is `None` (JSON null,
//! NaN in pandas).

use serde::Serialize;

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
    /// Delivered bits over elapsed time (bulk: over the time from start to the end of
    /// the run or the stop time), bit/s.
    pub goodput_bps: Vec<f64>,
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
    pub final_srtt_s: Vec<Option<f64>>,
}

/// One row per UDP flow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UdpTable {
    pub flow_id: Vec<u32>,
    pub name: Vec<String>,
    pub group: Vec<String>,
    pub src: Vec<String>,
    pub dst: Vec<String>,
    pub pkts_sent: Vec<u64>,
    pub pkts_delivered: Vec<u64>,
    /// Dropped by a queue or an error model.
    pub pkts_lost: Vec<u64>,
    pub owd_mean_s: Vec<Option<f64>>,
    pub owd_max_s: Vec<Option<f64>>,
    /// RFC 3550 §6.4.1 interarrival jitter estimate at the end of the run, s.
    pub jitter_s: Vec<Option<f64>>,
}

/// One row per link's queue.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueTable {
    pub link: Vec<String>,
    pub enq_pkts: Vec<u64>,
    pub enq_bytes: Vec<u64>,
    pub drops_overflow: Vec<u64>,
    pub drops_early: Vec<u64>,
    pub drops_forced: Vec<u64>,
    pub drops_corruption: Vec<u64>,
    /// Packets marked CE (RFC 3168) by the queue instead of dropped.
    pub ce_marks: Vec<u64>,
    /// Time-weighted mean occupancy (waiting packets, not the one in service).
    pub occ_mean_pkts: Vec<f64>,
    pub occ_max_pkts: Vec<u32>,
    pub occ_mean_bytes: Vec<f64>,
    pub occ_max_bytes: Vec<u64>,
}

/// One row per link.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkTable {
    pub link: Vec<String>,
    pub from: Vec<String>,
    pub to: Vec<String>,
    pub rate_bps: Vec<u64>,
    pub delay_s: Vec<f64>,
    pub tx_pkts: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    /// Busy fraction of the transmitter over the run.
    pub utilisation: Vec<f64>,
    /// Fraction of sampling instants with a non-empty queue (seed 001); `None` when
    /// sampling was off.
    pub busy_sample_fraction: Vec<Option<f64>>,
    /// Packet error rate the error model realised; `None` without an error model.
    pub realised_per: Vec<Option<f64>>,
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
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Series {
    pub cwnd: CwndSeries,
    pub queue: QueueSeries,
    pub owd: OwdSeries,
    pub drops: DropSeries,
}

/// Run-level facts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Meta {
    pub name: String,
    pub seed: u64,
    pub sim_end_s: f64,
    pub events: u64,
    /// FNV-1a digest of the delivery/drop trace, hex.
    pub digest: String,
    /// Packets transmitted by the link named `bottleneck` (0 if none).
    pub bottleneck_pkts: u64,
    pub drops: u64,
    /// Most packets alive at once (the pool's high-water mark).
    pub peak_packets: usize,
    /// Names of links, indexed by the `link` columns of the series.
    pub link_names: Vec<String>,
}

/// Everything a run produces.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunResult {
    pub meta: Meta,
    pub flows: FlowTable,
    pub udp: UdpTable,
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
