//! The emulation's results in the simulator's own result schema
//! (`tcplab_core::metrics::RunResult`, columns documented in `metrics/mod.rs` and
//! `python/tcplab/results.py`), so `tcplab emulate` writes the same tables as
//! `tcplab run`. Where the kernel cannot know a value the simulator knows (spurious
//! RTOs judged with simulator truth, F-RTO verdicts), the column is 0 and
//! `meta.emulation.unknown_columns` says so.
//!
//! The goodput series (`[record] throughput_interval`) comes from the sinks' reads,
//! binned as the simulator bins deliveries (`metrics::recorder::goodput_series`); the
//! per-packet trace is refused in `plan.rs`.
//!
//! Extra columns (kept by `results.frame`): `flows.first_flight_pkts` (data segments
//! sent before the first ACK of data reached the sender, seen at the emulator),
//! `flows.emu_behind` and `links.emu_behind` (the run's scheduling-error flag). Extra
//! meta: `meta.emulation` (timing error, kernel, namespaces, deviations, counters).

use crate::engine::{Engine, StopReason};
use crate::plan::{FlowKind, Plan};
use crate::rpcapp::{RpcClientResult, RpcServerResult};
use crate::traffic::{CwndRow, TcpInfo, TcpSenderResult, TcpSinkResult, UdpSenderResult, UdpSinkResult, TCP_INFO_WITH_RTO};
use serde_json::{json, Value};
use tcplab_core::app::TransactionRecord;
use tcplab_core::metrics::recorder::{goodput_series, GoodputBins};
use tcplab_core::metrics::{CwndSeries, Meta, RunResult};
use tcplab_core::time::SimTime;
use tcplab_core::net::clocked::LinkModel;
use tcplab_core::net::queue::DropCause;

/// Linux's `TCP_INFINITE_SSTHRESH`: ssthresh not set yet.
const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// What one flow's threads returned (one value per flow, moved once: size is no concern).
#[allow(clippy::large_enum_variant)]
pub enum FlowOutcome {
    Tcp { sender: TcpSenderResult, sink: TcpSinkResult },
    Udp { sender: UdpSenderResult, sink: UdpSinkResult },
    Rpc { client: RpcClientResult, server: RpcServerResult },
}

/// Run-level facts for `meta.emulation`.
pub struct RunFacts {
    pub seed: u64,
    pub end_ns: u64,
    pub stop: StopReason,
    pub kernel: String,
    pub namespaces: Vec<String>,
    pub reclaimed: Vec<String>,
    pub realtime: bool,
    pub sample_ns: u64,
    pub setup_s: f64,
    pub late_bound_ns: u64,
    pub loadavg: String,
}

pub fn assemble(plan: &Plan, eng: &Engine<'_>, flows: Vec<FlowOutcome>, f: &RunFacts) -> Value {
    let end_s = (f.end_ns as f64 * 1e-9).max(1e-12);
    let mut r = RunResult::default();
    let names = &plan.graph.nodes;
    let mut cwnd_rows: Vec<(u32, CwndRow)> = Vec::new();
    let mut first_flight = Vec::new();
    // `[record] throughput_interval`: each flow's bins and the end of its rows.
    let mut goodput: Vec<(u32, GoodputBins, SimTime)> = Vec::new();
    // Transactions of every request/response flow: (record, app, group, client, server, scheduled).
    let mut txns: Vec<(TransactionRecord, String, String, String, String, u64)> = Vec::new();
    for (fp, out) in plan.flows.iter().zip(flows) {
        let (src, dst) = (names[fp.src_node].clone(), names[fp.dst_node].clone());
        match (&fp.kind, out) {
            (FlowKind::Tcp { bytes, .. }, FlowOutcome::Tcp { sender, sink }) => {
                let t = &mut r.flows;
                let w = eng.wire[fp.id];
                let info: TcpInfo = sender.info.unwrap_or_default();
                t.flow_id.push(fp.id as u32);
                t.name.push(fp.name.clone());
                t.group.push(fp.group.clone());
                t.cc.push(fp.cc_name.clone());
                t.src.push(src);
                t.dst.push(dst);
                t.start_s.push(fp.start_ns as f64 * 1e-9);
                t.established_s.push(sender.established_ns.map(|x| x as f64 * 1e-9));
                t.completed_s.push(sink.completed_ns.map(|x| x as f64 * 1e-9));
                let elapsed = sink.completed_ns.map(|c| c.saturating_sub(fp.start_ns) as f64 * 1e-9);
                t.elapsed_s.push(elapsed);
                t.bytes_target.push(*bytes);
                // After the end of file the bytes read are exact; before it, the kernel's
                // in-order count includes bytes still waiting in the socket.
                let delivered = if sink.eof { sink.bytes_read } else { sink.bytes_received.unwrap_or(0).max(sink.bytes_read) };
                t.bytes_delivered.push(delivered);
                let span = match (elapsed, fp.stop_ns) {
                    (Some(e), _) => e,
                    (None, Some(stop)) => stop.min(f.end_ns).saturating_sub(fp.start_ns) as f64 * 1e-9,
                    (None, None) => f.end_ns.saturating_sub(fp.start_ns) as f64 * 1e-9,
                };
                t.goodput_bps.push(if span > 0.0 { delivered as f64 * 8.0 / span } else { 0.0 });
                // The span goodput covers: the flow's life within the run (no warm-up here).
                let start_s = fp.start_ns as f64 * 1e-9;
                t.window_start_s.push(start_s);
                t.window_end_s.push(start_s + span);
                t.segs_sent.push(w.data_pkts);
                t.retransmits.push(info.total_retrans as u64);
                // The kernel does not split fast retransmits from the others.
                t.fast_retransmits.push(0);
                t.rtos.push(if sender.info_len >= TCP_INFO_WITH_RTO { info.total_rto as u64 } else { 0 });
                t.spurious_rtos.push(0);
                t.syn_retransmits.push(w.syns.saturating_sub(1) as u64);
                t.spurious_syn_rtos.push(0);
                t.frto_spurious.push(0);
                // No CE marks reach a flow: the clocked link refuses ECN-marking queues.
                t.ecn_reductions.push(0);
                // TCP_INFO does not count tail loss probes (only the netns-wide TCPLossProbes).
                t.tlp_probes.push(0);
                t.final_cwnd_bytes.push(info.snd_cwnd as u64 * info.snd_mss as u64);
                // The kernel reports an ssthresh never set as TCP_INFINITE_SSTHRESH (0x7fffffff).
                t.final_ssthresh_bytes.push(
                    (info.snd_ssthresh < TCP_INFINITE_SSTHRESH && info.snd_mss > 0)
                        .then(|| info.snd_ssthresh as u64 * info.snd_mss as u64),
                );
                t.final_srtt_s.push((info.rtt > 0).then_some(info.rtt as f64 * 1e-6));
                first_flight.push(w.first_flight);
                cwnd_rows.extend(sender.series.into_iter().map(|row| (fp.id as u32, row)));
                let last = SimTime(sink.completed_ns.unwrap_or(f.end_ns));
                goodput.extend(sink.goodput.map(|b| (fp.id as u32, b, last)));
            }
            (FlowKind::Udp { .. }, FlowOutcome::Udp { sender, sink }) => {
                let u = &mut r.udp;
                u.flow_id.push(fp.id as u32);
                u.name.push(fp.name.clone());
                u.group.push(fp.group.clone());
                u.src.push(src);
                u.dst.push(dst);
                u.window_start_s.push(0.0);
                u.window_end_s.push(f.end_ns as f64 * 1e-9);
                u.pkts_sent.push(sender.sent);
                u.pkts_delivered.push(sink.delivered);
                u.pkts_lost.push(sender.sent.saturating_sub(sink.delivered));
                let any = sink.delivered > 0;
                u.owd_mean_s.push(any.then(|| sink.owd_sum_s / sink.delivered as f64));
                u.owd_max_s.push(any.then_some(sink.owd_max_s));
                u.jitter_s.push(any.then_some(sink.jitter_s));
                u.pkts_out_of_order.push(sink.out_of_order);
                goodput.extend(sink.goodput.map(|b| (fp.id as u32, b, SimTime(f.end_ns))));
            }
            (FlowKind::Rpc { iw_segments, .. }, FlowOutcome::Rpc { client, server }) => {
                // The flow's source node is the server, its destination the client.
                for c in client.txns {
                    let t = &plan.txns[c.g as usize];
                    let w = eng.txn_wire[c.g as usize];
                    let sv = server.txns.get(c.g as usize).copied().unwrap_or_default();
                    let state = if c.failed {
                        "failed"
                    } else if c.closed_ns.is_some() {
                        "closed"
                    } else if c.completed_ns.is_some() {
                        "completed"
                    } else {
                        "open"
                    };
                    let rec = TransactionRecord {
                        txn_id: c.g as u64,
                        app: fp.id as u32,
                        batch: t.batch,
                        iw_segments: *iw_segments,
                        request_bytes: t.request_bytes,
                        response_bytes: t.response_bytes,
                        start: SimTime(c.start_ns.unwrap_or(t.start_ns)),
                        established: c.established_ns.map(SimTime),
                        completed: c.completed_ns.map(SimTime),
                        closed: c.closed_ns.map(SimTime),
                        bytes_delivered: c.bytes_read,
                        retransmits: (c.retrans + sv.retrans) as u64,
                        rtos: (c.rtos + sv.rtos) as u64,
                        // Eifel undo is the kernel's business: not reported per socket.
                        rtos_undone: 0,
                        syn_retransmits: w.syns.saturating_sub(1) as u64,
                        drops: w.drops,
                        state,
                    };
                    txns.push((rec, fp.name.clone(), fp.group.clone(), dst.clone(), src.clone(), t.start_ns));
                }
            }
            _ => unreachable!("flow kinds match their threads"),
        }
    }
    // Transactions in creation order (the simulator's txn_id order).
    txns.sort_by_key(|t| t.0.txn_id);
    let mut txn_first_flight = Vec::with_capacity(txns.len());
    let mut txn_scheduled = Vec::with_capacity(txns.len());
    for (rec, app, group, client, server, scheduled) in &txns {
        r.transactions.push(rec, app, group, client, server);
        txn_first_flight.push(eng.txn_wire[rec.txn_id as usize].first_flight);
        txn_scheduled.push(*scheduled as f64 * 1e-9);
    }
    // cwnd rows of all flows, in time order (as the simulator emits them).
    cwnd_rows.sort_by_key(|(_, row)| row.t_ns);
    let mut c = CwndSeries::default();
    for (id, row) in cwnd_rows {
        c.t_s.push(row.t_ns as f64 * 1e-9);
        c.flow_id.push(id);
        c.cwnd_bytes.push(row.cwnd_bytes);
        c.ssthresh_bytes.push(row.ssthresh_bytes);
        c.srtt_s.push(row.srtt_s);
        c.rto_s.push(row.rto_s);
        c.state.push(row.state);
    }
    r.series.cwnd = c;
    r.series.queue = eng.queue.clone();
    r.series.owd = eng.owd.clone();
    r.series.drops = eng.drops_series.clone();
    let rows: Vec<(u32, &GoodputBins, SimTime)> = goodput.iter().map(|(id, b, last)| (*id, b, *last)).collect();
    r.series.throughput = goodput_series(plan.throughput_ns.unwrap_or(0), SimTime(f.end_ns), &rows);
    // Links and queues, as sim::Simulation::finish fills them.
    let mut bottleneck_pkts = 0;
    for (i, lm) in eng.links.iter().enumerate() {
        let l = lm.link();
        let q = &mut r.queues;
        q.link.push(l.name.clone());
        q.window_start_s.push(0.0);
        q.window_end_s.push(f.end_ns as f64 * 1e-9);
        q.enq_pkts.push(l.stats.enq_pkts);
        q.enq_bytes.push(l.stats.enq_bytes);
        q.drops_overflow.push(l.stats.drops[DropCause::Overflow as usize]);
        q.drops_early.push(l.stats.drops[DropCause::Early as usize]);
        q.drops_forced.push(l.stats.drops[DropCause::Forced as usize]);
        q.drops_corruption.push(l.stats.drops[DropCause::Corruption as usize]);
        q.ce_marks.push(l.stats.ce_marks);
        let t_ns = f.end_ns.max(1) as f64;
        q.occ_mean_pkts.push(l.stats.occ_pkt_ns as f64 / t_ns);
        q.occ_max_pkts.push(l.stats.occ_max_pkts);
        q.occ_mean_bytes.push(l.stats.occ_byte_ns as f64 / t_ns);
        q.occ_max_bytes.push(l.stats.occ_max_bytes);
        let lt = &mut r.links;
        lt.link.push(l.name.clone());
        lt.window_start_s.push(0.0);
        lt.window_end_s.push(f.end_ns as f64 * 1e-9);
        lt.from.push(names[l.from as usize].clone());
        lt.to.push(names[l.to as usize].clone());
        lt.rate_bps.push(l.rate.0);
        lt.delay_s.push(l.delay.as_secs_f64());
        lt.tx_pkts.push(l.stats.tx_pkts);
        lt.tx_bytes.push(l.stats.tx_bytes);
        lt.utilisation.push(l.busy_ns_at(tcplab_core::time::SimTime(f.end_ns)) as f64 * 1e-9 / end_s);
        let (taken, nonempty) = eng.busy[i];
        lt.busy_sample_fraction.push((taken > 0).then(|| nonempty as f64 / taken as f64));
        lt.realised_per.push(l.error.as_ref().map(|e| e.stats().per()));
        // Layered links (MAC, link layer) are refused by the emulator: no such counters.
        lt.mac.push(None);
        lt.mac_slots_allocated.push(None);
        lt.mac_requests.push(None);
        lt.ll.push(None);
        lt.ll_frames_sent.push(None);
        lt.ll_frames_retransmitted.push(None);
        lt.ll_fec_frames_sent.push(None);
        lt.ll_fec_blocks.push(None);
        lt.ll_fec_blocks_recovered.push(None);
        lt.ll_frames_recovered.push(None);
        lt.ll_frames_given_up.push(None);
        lt.ll_residual_loss.push(None);
        lt.ll_frames_corrupted.push(None);
        lt.ll_acks_sent.push(None);
        if l.name == "bottleneck" {
            bottleneck_pkts = l.stats.tx_pkts;
        }
    }
    let h = &eng.sched;
    let p99 = h.quantile_ns(0.99);
    let behind = p99 > f.late_bound_ns;
    r.meta = Meta {
        name: plan.name.clone(),
        seed: f.seed,
        sim_end_s: f.end_ns as f64 * 1e-9,
        events: eng.events,
        // A real-time run is not reproducible bit for bit: no trace digest.
        digest: String::new(),
        bottleneck_pkts,
        drops: eng.drops,
        // The kernel's timers are not events of the packet loop.
        timer_events: 0,
        peak_packets: eng.peak_packets(),
        link_names: plan.graph.links.iter().map(|l| l.name.clone()).collect(),
        // The kernel's state is not the simulator's: no per-flow byte count; the
        // emulator's summaries cover the whole run.
        flow_state_bytes: 0,
        window_start_s: 0.0,
    };
    let mut doc = serde_json::to_value(&r).expect("serialisable");
    doc["flows"]["first_flight_pkts"] = json!(first_flight);
    doc["flows"]["emu_behind"] = json!(vec![behind; first_flight.len()]);
    doc["links"]["emu_behind"] = json!(vec![behind; eng.links.len()]);
    doc["transactions"]["first_flight_pkts"] = json!(txn_first_flight);
    doc["transactions"]["scheduled_s"] = json!(txn_scheduled);
    let stop = match &f.stop {
        StopReason::Duration => "duration".to_string(),
        StopReason::AllDone => "all flows completed".to_string(),
        StopReason::MaxDuration => "max_duration".to_string(),
        StopReason::Signal(s) => format!("signal {s}"),
        StopReason::TrafficError => "traffic error".to_string(),
    };
    doc["meta"]["mode"] = json!("emulate");
    doc["meta"]["emulation"] = json!({
        "kernel": f.kernel,
        "stop": stop,
        "sched_error": {
            "what": "write time of each packet to its destination host minus the model time it arrived there",
            "count": h.count(),
            "p50_s": h.quantile_ns(0.5) as f64 * 1e-9,
            "p99_s": p99 as f64 * 1e-9,
            "max_s": h.max_ns() as f64 * 1e-9,
            "mean_s": h.mean_ns() * 1e-9,
            "late_pkts": h.late(),
            "late_bound_s": f.late_bound_ns as f64 * 1e-9,
        },
        "behind": behind,
        "realtime_priority": f.realtime,
        "tcp_info_interval_s": f.sample_ns as f64 * 1e-9,
        "setup_s": f.setup_s,
        "loadavg": f.loadavg,
        "namespaces": f.namespaces,
        "reclaimed_stale": f.reclaimed,
        "deviations": plan.deviations,
        // Every sysctl the run wrote, per host namespace (the rest are the kernel's
        // defaults for a new namespace).
        "sysctls": plan.hosts.iter().map(|h| (h.name.clone(), h.sysctls.clone())).collect::<std::collections::BTreeMap<_, _>>(),
        "packets_in": eng.packets_in,
        "packets_out": eng.packets_out,
        "oversize_pkts": eng.oversize,
        "unroutable_pkts": eng.unroutable,
        "host_drops": eng.host_drops,
        "mtu": plan.mtu,
        "unknown_columns": ["flows.fast_retransmits", "flows.spurious_rtos", "flows.spurious_syn_rtos", "flows.frto_spurious", "flows.tlp_probes", "transactions.rtos_undone"],
    });
    doc
}
