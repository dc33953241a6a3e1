//! The resolved scenario: what the Python front end hands the core (as JSON).
//!
//! Quantities here are plain SI integers (bit/s, nanoseconds, bytes); the front end
//! parses units (`"2Mbps"`, `"70ms"`) and reports errors with file lines before
//! anything reaches this layer. This module still rejects impossible values with a
//! message naming the field, because the core is also used directly from Rust.
//!
//! Every struct denies unknown fields, so a misspelt key is an error, never a silent
//! default.

use crate::cc::CcSpec;
use crate::net::error::ErrorConfig;
use crate::net::jitter::JitterConfig;
use crate::net::linklayer::LinkLayerConfig;
use crate::net::mac::MacConfig;
use crate::net::queue::{Limit, QueueConfig};
use crate::net::queue::droptail::DropTailParams;
use crate::tcp::config::TcpSpec;
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// A whole experiment: topology, flows and what to record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: String,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    /// Stop time, and the end of the measurement window: the run ends at `duration`
    /// exactly (its `sim_end_s`), and rates and utilisations are computed up to it.
    /// Default: when every finite flow has completed (or at `max_duration`).
    #[serde(default)]
    pub duration: Option<SimDuration>,
    /// Start of the measurement window (needs `duration`, and must be less than it):
    /// summaries (throughput, utilisation, queue occupancy, drops) cover
    /// [warmup, duration], leaving the start-up out. Default: unset, the window
    /// starts at 0.
    #[serde(default)]
    pub warmup: Option<SimDuration>,
    /// Safety cap on simulated time when `duration` is unset. Default 3600 s.
    #[serde(default = "default_max_duration")]
    pub max_duration: SimDuration,
    #[serde(default)]
    pub record: RecordSpec,
    /// Workload generators (`app::workload`): flows drawn from the run seed and
    /// attached to a `parking_lot` topology. Default: none.
    #[serde(default)]
    pub workload: Option<crate::app::workload::WorkloadSpec>,
}

fn default_max_duration() -> SimDuration {
    SimDuration::from_secs(3600)
}

/// One direction of a link: rate, propagation delay, queue and error model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    /// bit/s
    pub rate: u64,
    /// One-way propagation delay.
    pub delay: SimDuration,
    /// Queue at the transmitting end. Default: drop-tail, 1000 packets.
    #[serde(default)]
    pub queue: Option<QueueConfig>,
    #[serde(default)]
    pub error: Option<ErrorConfig>,
    /// Delay variation added to `delay`, packets kept in order (`net/jitter.rs`).
    /// Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterConfig>,
    /// Medium access gating the transmitter (DAMA); default none (the transmitter
    /// sends whenever it has a packet).
    #[serde(default)]
    pub mac: Option<MacConfig>,
    /// Link-layer protocol on this direction (SLACP); its ACKs use the reverse link.
    /// Default none (IP packets go straight to the queue).
    #[serde(default)]
    pub link_layer: Option<LinkLayerConfig>,
}

/// The default queue of a link that names none: drop-tail, 1000 packets (ns-3 and
/// Linux `txqueuelen` both default to about this).
pub fn default_queue() -> QueueConfig {
    QueueConfig::DropTail(DropTailParams {
        limit: Limit::Packets(1000),
        semantics: None,
        count_in_service: false,
    })
}

/// A link as listed in an explicit graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    #[serde(flatten)]
    pub params: LinkParams,
}

/// How the network is built.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    /// N senders -> router `r0` -> bottleneck -> router `r1` -> N receivers.
    ///
    /// Nodes are `s0..s{N-1}`, `r0`, `r1`, `d0..d{N-1}`. Links are named `bottleneck`
    /// (r0->r1), `bottleneck_rev` (r1->r0), `access_s{i}` / `access_s{i}_rev` and
    /// `access_d{i}` / `access_d{i}_rev`.
    Dumbbell(DumbbellSpec),
    /// An explicit list of nodes and unidirectional links.
    Graph { nodes: Vec<String>, links: Vec<LinkSpec> },
    /// Routers `r0..r{N-1}` in a line joined by backbone links in both directions,
    /// with hosts attached to routers by access links (seed 002). Links are named
    /// `bb{i}` (r_i -> r_{i+1}), `bb{i}_rev` (r_{i+1} -> r_i), `acc_{host}` (host ->
    /// its router) and `acc_{host}_rev` (router -> host); see `net::topology`.
    ParkingLot(ParkingLotSpec),
}

fn default_routers() -> u32 {
    5
}

/// A parking lot (`net::topology::expand` builds it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotSpec {
    /// Routers on the line; 2 to 64. Default 5 (seed 002).
    #[serde(default = "default_routers")]
    pub routers: u32,
    /// Every r_i -> r_{i+1} backbone link (seed 002: 1 Gbit/s, 15 ms, 2 MB buffer).
    pub backbone: LinkParams,
    /// Every r_{i+1} -> r_i backbone link; default: the same as `backbone`.
    #[serde(default)]
    pub backbone_reverse: Option<LinkParams>,
    /// Rate of every access link, bit/s (both directions).
    pub access_rate: u64,
    /// Queue of every access link; default drop-tail, 1000 packets.
    #[serde(default)]
    pub access_queue: Option<QueueConfig>,
    /// Hosts given explicitly (a `workload` adds one source and one destination host
    /// per generated flow).
    #[serde(default)]
    pub hosts: Vec<HostSpec>,
}

/// A host of a parking lot: its router and the one-way delay of its access link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub name: String,
    /// Index of the router it hangs off, 0-based.
    pub router: u32,
    /// One-way propagation delay of its access link (both directions).
    pub delay: SimDuration,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    /// Number of sender/receiver pairs.
    pub pairs: u32,
    /// The r0 -> r1 link (downstream).
    pub bottleneck: LinkParams,
    /// The r1 -> r0 link; default: same rate and delay as `bottleneck`, default queue.
    #[serde(default)]
    pub bottleneck_reverse: Option<LinkParams>,
    /// Sender access links, s_i <-> r0 (both directions).
    pub sender_access: AccessSpec,
    /// Receiver access links, r1 <-> d_i (both directions).
    pub receiver_access: AccessSpec,
}

/// Access links of a dumbbell side: one rate, and one delay or one delay per pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessSpec {
    /// bit/s
    pub rate: u64,
    /// One delay for every pair, or a list with one delay per pair.
    pub delay: AccessDelay,
    #[serde(default)]
    pub queue: Option<QueueConfig>,
    /// Delay variation on every access link of this side, both directions. Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterConfig>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AccessDelay {
    Same(SimDuration),
    PerPair(Vec<SimDuration>),
}

impl AccessDelay {
    pub fn get(&self, i: usize) -> SimDuration {
        match self {
            AccessDelay::Same(d) => *d,
            AccessDelay::PerPair(v) => v[i],
        }
    }
}

/// One flow: a TCP connection, a UDP stream, or a request/response application
/// (a new TCP connection per transaction, `app::rpc`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FlowSpec {
    Tcp(TcpFlowSpec),
    Udp(UdpFlowSpec),
    Rpc(crate::app::rpc::RpcSpec),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpFlowSpec {
    /// Label used in tables; default `flow<i>`.
    #[serde(default)]
    pub name: Option<String>,
    /// Group used to aggregate metrics (e.g. "burst1"); default "".
    #[serde(default)]
    pub group: String,
    pub src: String,
    pub dst: String,
    /// When the application opens the connection (the SYN leaves).
    #[serde(default)]
    pub start: SimTime,
    /// Bytes to transfer; `None` is a bulk transfer that runs until `stop` or the end.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// When a bulk sender stops offering new data.
    #[serde(default)]
    pub stop: Option<SimTime>,
    #[serde(default)]
    pub cc: CcSpec,
    #[serde(default)]
    pub tcp: TcpSpec,
}

/// Inter-departure time distribution of a UDP source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Interval {
    Constant { mean: SimDuration },
    /// Normal(mean, sigma), truncated at zero (seed 003: N(20 ms, 1 ms)).
    Normal { mean: SimDuration, sigma: SimDuration },
    Exponential { mean: SimDuration },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpFlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub group: String,
    pub src: String,
    pub dst: String,
    #[serde(default)]
    pub start: SimTime,
    #[serde(default)]
    pub stop: Option<SimTime>,
    /// IP packet size in bytes (seed 003: 186).
    pub packet_bytes: u32,
    pub interval: Interval,
}

/// Which time series to record (summaries are always recorded).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    /// cwnd, ssthresh, srtt, rto and state of every TCP flow, on every change.
    #[serde(default)]
    pub cwnd: bool,
    /// Queue occupancy of the named links at every change.
    #[serde(default)]
    pub queue: Vec<String>,
    /// One-way delay of every delivered packet of the named flows (`"*"` = all).
    #[serde(default)]
    pub owd: Vec<String>,
    /// Every drop event.
    #[serde(default)]
    pub drops: bool,
    /// Interval for the "non-empty queue" sampling of seed 001 (e.g. 1 s); off if unset.
    #[serde(default)]
    pub busy_sample_interval: Option<SimDuration>,
    /// Goodput of every TCP and UDP flow at this interval (`metrics::ThroughputSeries`);
    /// off if unset.
    #[serde(default)]
    pub throughput_interval: Option<SimDuration>,
    /// Flows whose every packet event is recorded (`metrics::PacketSeries`; `"*"` = all).
    #[serde(default)]
    pub packets: Vec<String>,
}
