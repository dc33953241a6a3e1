//! tcplab-emu: emulation mode. The host's real kernel TCP runs in network namespaces,
//! one per host of the scenario, and every packet between them crosses the scenario's
//! links through tcplab-core's own link, queue and error models
//! (`tcplab_core::net::clocked::LinkModel`) in real time.
//!
//! Layout: `plan` (scenario -> hosts, addresses, routes, kernel settings; refusals),
//! `kernel` (TCP knobs -> sysctls, route attributes, socket options), `netns`
//! (namespace lifecycle and stale-resource reclaiming), `sys` (system calls), `engine`
//! (the packet loop), `traffic` (sender/sink programs and TCP_INFO sampling), `timing`
//! (scheduling-error histogram), `packet` (header parsing, packet store), `results`
//! (the simulator's result schema). docs/emulation.md describes the design, the
//! requirements and the limits.

pub mod engine;
pub mod kernel;
pub mod netns;
pub mod packet;
pub mod plan;
pub mod results;
pub mod rpcapp;
pub mod sys;
pub mod timing;
pub mod traffic;

use engine::{Control, Engine, EngineOptions, HostPort, StopReason};
use plan::{FlowKind, Plan};
use std::fs::File;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::ScopedJoinHandle;
use tcplab_core::scenario::Scenario;

/// A flow's receiving-end thread (the server of a request/response application).
enum Sink<'s> {
    Tcp(ScopedJoinHandle<'s, Result<traffic::TcpSinkResult, String>>),
    Udp(ScopedJoinHandle<'s, Result<traffic::UdpSinkResult, String>>),
    Rpc(ScopedJoinHandle<'s, Result<rpcapp::RpcServerResult, String>>),
}

/// A flow's sending-end thread (the client of a request/response application).
enum Sender<'s> {
    Tcp(ScopedJoinHandle<'s, traffic::TcpSenderResult>),
    Udp(ScopedJoinHandle<'s, traffic::UdpSenderResult>),
    Rpc(ScopedJoinHandle<'s, rpcapp::RpcClientResult>),
}

/// Why an emulation did not produce results; `exit_code` is the CLI's.
#[derive(Debug)]
pub enum EmuError {
    /// The kernel cannot run the scenario as asked (nothing was created).
    Refused(Vec<String>),
    /// Privileges or facilities are missing (nothing was created).
    Missing(Vec<String>),
    /// Stopped by a signal after cleaning up.
    Interrupted(i32),
    Failed(String),
}

impl EmuError {
    pub fn exit_code(&self) -> i32 {
        match self {
            EmuError::Refused(_) | EmuError::Missing(_) => 2,
            EmuError::Interrupted(s) => 128 + s,
            EmuError::Failed(_) => 1,
        }
    }
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::Refused(v) => {
                write!(f, "the kernel cannot run this scenario as asked (nothing was started):")?;
                for m in v {
                    write!(f, "\n  - {m}")?;
                }
                Ok(())
            }
            EmuError::Missing(v) => {
                write!(f, "emulation needs privileges this process does not have (nothing was created):")?;
                for m in v {
                    write!(f, "\n  - {m}")?;
                }
                Ok(())
            }
            EmuError::Interrupted(s) => write!(f, "interrupted by signal {s}; namespaces removed"),
            EmuError::Failed(m) => write!(f, "{m}"),
        }
    }
}

impl From<std::io::Error> for EmuError {
    fn from(e: std::io::Error) -> Self {
        EmuError::Failed(e.to_string())
    }
}

/// Options of one emulation run.
#[derive(Clone, Debug)]
pub struct Options {
    /// TCP_INFO sampling interval, ns (at most 5 ms).
    pub sample_ns: u64,
    /// The run is flagged when the p99 scheduling error exceeds this, ns.
    pub late_bound_ns: u64,
    /// Ask for SCHED_FIFO for the packet loop.
    pub realtime: bool,
    /// Test hook: stall the packet loop at model time .0 for .1 ns.
    pub stall: Option<(u64, u64)>,
    /// Print progress to stderr.
    pub verbose: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { sample_ns: 2_000_000, late_bound_ns: 1_000_000, realtime: true, stall: None, verbose: true }
    }
}

/// What is missing for an emulation on this machine (empty: nothing).
pub fn missing_privileges() -> Vec<String> {
    let mut out = Vec::new();
    let caps = sys::effective_caps();
    if caps & (1 << sys::CAP_NET_ADMIN) == 0 {
        out.push("CAP_NET_ADMIN, to create TUN devices and set addresses, routes and sysctls (run as root, or grant the capability)".into());
    }
    if caps & (1 << sys::CAP_SYS_ADMIN) == 0 {
        out.push("CAP_SYS_ADMIN, to create and enter network namespaces (ip netns add, setns)".into());
    }
    if let Err(e) = sys::tun_openable() {
        out.push(format!("/dev/net/tun: {e} (load the tun module, or give the container the device)"));
    }
    let ip_ok = std::process::Command::new("ip").arg("-V").output().is_ok_and(|o| o.status.success());
    if !ip_ok {
        out.push("iproute2's `ip` command in PATH (Debian: apt-get install iproute2)".into());
    }
    out
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_default()
}

/// Checks a scenario against this kernel without touching anything.
pub fn check(sc: &Scenario) -> Result<Plan, EmuError> {
    // Workload generators draw their flows from the run seed; what the kernel must be
    // able to do (CCs, knobs, topology) is the same for every seed.
    let expanded = workload_flows(sc, 1)?;
    plan::build(expanded.as_ref().unwrap_or(sc), &kernel::KernelFacts::read()).map_err(EmuError::Refused)
}

/// The scenario with its `[workload]` expanded into hosts and flows, as the simulator
/// does (`tcplab_core::app::workload::expand`), so both see the same flows.
fn workload_flows(sc: &Scenario, seed: u64) -> Result<Option<Scenario>, EmuError> {
    tcplab_core::app::workload::expand(sc, seed).map_err(|e| EmuError::Refused(vec![e]))
}

/// Runs one emulation and returns the results document (`results::assemble`).
pub fn run(sc: &Scenario, seed: u64, opts: &Options) -> Result<serde_json::Value, EmuError> {
    if opts.sample_ns == 0 || opts.sample_ns > 5_000_000 {
        return Err(EmuError::Refused(vec![format!(
            "TCP_INFO sampling interval {} ns: accepted 1 ns .. 5 ms",
            opts.sample_ns
        )]));
    }
    let expanded = workload_flows(sc, seed)?;
    let sc = expanded.as_ref().unwrap_or(sc);
    let facts = kernel::KernelFacts::read();
    let mut plan = plan::build(sc, &facts).map_err(EmuError::Refused)?;
    plan.schedule_transactions(seed).map_err(|e| EmuError::Refused(vec![e]))?;
    let missing = missing_privileges();
    if !missing.is_empty() {
        return Err(EmuError::Missing(missing));
    }
    let setup_start = sys::mono_ns();
    let reclaimed = netns::reclaim_stale();
    if opts.verbose && !reclaimed.is_empty() {
        eprintln!("tcplab-emu: reclaimed {} stale namespace(s) of dead owners: {}", reclaimed.len(), reclaimed.join(", "));
    }
    let sigfd = sys::block_stop_signals()?;
    let mut nss = netns::Namespaces::new();
    let pid = std::process::id();
    let dev = format!("tcplab{pid}");
    let home = sys::current_netns()?;
    let home_ino = sys::ns_inode(&home)?;
    let mut ns_files: Vec<File> = Vec::new();
    let mut ports = Vec::new();
    for (i, h) in plan.hosts.iter().enumerate() {
        let name = netns::ns_name(pid, i, &h.name);
        let file = nss.create(&name)?;
        // Configure from inside: sysctls resolve against the caller's namespace, and
        // the TUN device is born inside it.
        sys::setns_net(&file)?;
        let inside = sys::current_netns().and_then(|f| sys::ns_inode(&f));
        let setup = (|| -> Result<std::os::fd::OwnedFd, String> {
            if inside.map_err(|e| e.to_string())? == home_ino {
                return Err(format!("setns into {name} left this thread in its own namespace; refusing to configure it"));
            }
            for (k, v) in &h.sysctls {
                sys::write_sysctl(k, v).map_err(|e| e.to_string())?;
            }
            let tun = sys::open_tun(&dev).map_err(|e| format!("{name}: {e}"))?;
            if sys::disable_offloads(&dev).map_err(|e| format!("{name}: {e}"))? {
                return Err(format!("{name}: generic segmentation offload is still on after ETHTOOL_SGSO"));
            }
            Ok(tun)
        })();
        sys::setns_net(&home)?;
        if sys::ns_inode(&sys::current_netns()?)? != home_ino {
            return Err(EmuError::Failed("could not return to the emulator's own namespace".into()));
        }
        let tun = setup.map_err(EmuError::Failed)?;
        let cmds: Vec<String> = h.ip.iter().map(|c| c.replace("{dev}", &dev)).collect();
        nss.ip(&name, &cmds)?;
        ports.push(HostPort { node: h.node, tun });
        ns_files.push(file);
        if let Some(s) = sys::pending_signal(&sigfd) {
            return Err(EmuError::Interrupted(s));
        }
    }
    if opts.verbose {
        eprintln!(
            "tcplab-emu: {} host namespace(s) ({}), kernel {}, {} flow(s)",
            plan.hosts.len(),
            nss.names().join(", "),
            facts.release,
            plan.flows.len()
        );
    }
    let finite = plan.flows.iter().filter(|f| matches!(f.kind, FlowKind::Tcp { bytes: Some(_), .. })).count();
    // Every transaction counts as unfinished until its response is in (or it failed).
    let ctl = Arc::new(Control::new(finite + plan.txns.len()));
    let txn_ports = Arc::new(engine::PortTable::default());
    let all_txns = Arc::new(plan.txns.clone());
    let mut engine = Engine::new(&plan, ports, seed, EngineOptions { late_bound_ns: opts.late_bound_ns, stall: opts.stall }, txn_ports.clone())
        .map_err(EmuError::Failed)?;
    let outcome = std::thread::scope(|scope| -> Result<_, EmuError> {
        let host_ns = |node: usize| -> Result<File, EmuError> {
            Ok(ns_files[plan.host_of_node[node].expect("flow ends are hosts")].try_clone()?)
        };
        // Sinks (and request/response servers) first, bound before the clock starts.
        let mut sinks = Vec::new();
        let mut ready = Vec::new();
        for f in &plan.flows {
            let ns = host_ns(f.dst_node)?;
            let dst = plan::flow_dst_addr(f.id);
            let c = ctl.clone();
            let (tx, rx) = std::sync::mpsc::channel::<Result<(), String>>();
            ready.push(rx);
            let goodput = plan.throughput_ns.map(|interval_ns| traffic::GoodputSpec { interval_ns, start_ns: f.start_ns });
            sinks.push(match &f.kind {
                FlowKind::Tcp { bytes, .. } => {
                    let target = *bytes;
                    Sink::Tcp(std::thread::Builder::new().name(format!("sink-{}", f.id)).spawn_scoped(scope, move || {
                        match traffic::tcp_listen(&ns, dst) {
                            Ok(l) => {
                                let _ = tx.send(Ok(()));
                                Ok(traffic::tcp_sink(l, target, goodput, c))
                            }
                            Err(e) => {
                                let _ = tx.send(Err(e.clone()));
                                Err(e)
                            }
                        }
                    })?)
                }
                &FlowKind::Udp { packet_bytes, .. } => Sink::Udp(std::thread::Builder::new().name(format!("usink-{}", f.id)).spawn_scoped(scope, move || {
                    match traffic::udp_bind(&ns, dst) {
                        Ok(s) => {
                            let _ = tx.send(Ok(()));
                            Ok(traffic::udp_sink(s, packet_bytes, goodput, c))
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e.clone()));
                            Err(e)
                        }
                    }
                })?),
                FlowKind::Rpc { kernel, .. } => {
                    // The server lives on the flow's source node (it sends the responses).
                    let ns = host_ns(f.src_node)?;
                    let spec = rpcapp::RpcSpecs { client: dst, server: plan::flow_src_addr(f.id), cc: kernel.cc.clone(), maxseg: kernel.maxseg };
                    let all = all_txns.clone();
                    let ports = txn_ports.clone();
                    Sink::Rpc(std::thread::Builder::new().name(format!("server-{}", f.id)).spawn_scoped(scope, move || {
                        match rpcapp::rpc_listen(&ns, &spec) {
                            Ok(l) => {
                                let _ = tx.send(Ok(()));
                                Ok(rpcapp::rpc_server(l, all, ports, c))
                            }
                            Err(e) => {
                                let _ = tx.send(Err(e.clone()));
                                Err(e)
                            }
                        }
                    })?)
                }
            });
        }
        let mut setup_err = None;
        for rx in &ready {
            if let Ok(Err(e)) | Err(e) = rx.recv().map_err(|e| e.to_string()) {
                setup_err.get_or_insert(e);
            }
        }
        // The clock starts 50 ms from now: time for the senders to enter their namespaces.
        let t0 = sys::mono_ns() + 50_000_000;
        ctl.set_t0(t0);
        if let Some(e) = setup_err {
            ctl.stop.store(true, Ordering::Release);
            return Err(EmuError::Failed(e));
        }
        let mut senders = Vec::new();
        for f in &plan.flows {
            let c = ctl.clone();
            let (src, dst) = (plan::flow_src_addr(f.id), plan::flow_dst_addr(f.id));
            senders.push(match &f.kind {
                FlowKind::Tcp { bytes, kernel } => {
                    let ns = host_ns(f.src_node)?;
                    let spec = traffic::TcpSenderSpec {
                        src,
                        dst,
                        cc: kernel.cc.clone(),
                        maxseg: kernel.maxseg,
                        bytes: *bytes,
                        start_ns: f.start_ns,
                        stop_ns: f.stop_ns,
                        record: plan.record_cwnd,
                        sample_ns: opts.sample_ns,
                    };
                    Sender::Tcp(std::thread::Builder::new()
                        .name(format!("send-{}", f.id))
                        .spawn_scoped(scope, move || traffic::tcp_sender(ns, spec, t0, c))?)
                }
                FlowKind::Udp { packet_bytes, interval } => {
                    let ns = host_ns(f.src_node)?;
                    let spec = traffic::UdpSenderSpec {
                        name: f.name.clone(),
                        src,
                        dst,
                        packet_bytes: *packet_bytes,
                        interval: interval.clone(),
                        start_ns: f.start_ns,
                        stop_ns: f.stop_ns,
                        seed,
                    };
                    Sender::Udp(std::thread::Builder::new()
                        .name(format!("usend-{}", f.id))
                        .spawn_scoped(scope, move || traffic::udp_sender(ns, spec, t0, c))?)
                }
                FlowKind::Rpc { kernel, .. } => {
                    // The client lives on the flow's destination node (it receives the responses).
                    let ns = host_ns(f.dst_node)?;
                    let spec = rpcapp::RpcSpecs { client: dst, server: src, cc: kernel.cc.clone(), maxseg: kernel.maxseg };
                    let mine: Vec<plan::TxnPlan> = plan.txns.iter().filter(|t| t.flow == f.id).copied().collect();
                    let ports = txn_ports.clone();
                    Sender::Rpc(std::thread::Builder::new()
                        .name(format!("client-{}", f.id))
                        .spawn_scoped(scope, move || rpcapp::rpc_client(ns, spec, mine, ports, t0, c))?)
                }
            });
        }
        // The packet loop runs on this thread, at real-time priority when allowed.
        sys::tight_timer_slack();
        let rt = opts.realtime && sys::realtime(20);
        sys::sleep_until(t0);
        let run = engine.run(t0, &ctl, &sigfd);
        ctl.stop.store(true, Ordering::Release);
        if rt {
            let p = libc::sched_param { sched_priority: 0 };
            // SAFETY: back to SCHED_OTHER for the clean-up.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) };
        }
        let mut outcomes = Vec::new();
        let mut errors = Vec::new();
        let panicked = |what: &str| format!("a {what} thread panicked");
        for (snd, sink) in senders.into_iter().zip(sinks) {
            let joined = match (snd, sink) {
                (Sender::Tcp(s), Sink::Tcp(k)) => {
                    let sender = s.join().map_err(|_| panicked("sender"));
                    let sink = k.join().map_err(|_| panicked("sink")).and_then(|r| r);
                    sender.and_then(|sender| sink.map(|sink| results::FlowOutcome::Tcp { sender, sink }))
                }
                (Sender::Udp(s), Sink::Udp(k)) => {
                    let sender = s.join().map_err(|_| panicked("sender"));
                    let sink = k.join().map_err(|_| panicked("sink")).and_then(|r| r);
                    sender.and_then(|sender| sink.map(|sink| results::FlowOutcome::Udp { sender, sink }))
                }
                (Sender::Rpc(s), Sink::Rpc(k)) => {
                    let client = s.join().map_err(|_| panicked("client"));
                    let server = k.join().map_err(|_| panicked("server")).and_then(|r| r);
                    client.and_then(|client| server.map(|server| results::FlowOutcome::Rpc { client, server }))
                }
                _ => unreachable!("threads are spawned per flow kind"),
            };
            match joined {
                Ok(o) => {
                    let e = match &o {
                        results::FlowOutcome::Tcp { sender, sink } => sender.error.clone().or(sink.error.clone()),
                        results::FlowOutcome::Udp { sender, sink } => sender.error.clone().or(sink.error.clone()),
                        results::FlowOutcome::Rpc { client, server } => client.error.clone().or(server.error.clone()),
                    };
                    errors.extend(e);
                    outcomes.push(o);
                }
                Err(e) => errors.push(e),
            }
        }
        Ok((run, outcomes, errors, rt, t0))
    })?;
    let (run, outcomes, errors, rt, t0) = outcome;
    let (end_ns, stop) = run.map_err(EmuError::Failed)?;
    if let StopReason::Signal(s) = stop {
        return Err(EmuError::Interrupted(s));
    }
    if !errors.is_empty() {
        return Err(EmuError::Failed(format!("traffic: {}", errors.join("; "))));
    }
    engine.finish(end_ns);
    let facts_run = results::RunFacts {
        seed,
        end_ns,
        stop,
        kernel: facts.release.clone(),
        namespaces: nss.names().to_vec(),
        reclaimed,
        realtime: rt,
        sample_ns: opts.sample_ns,
        setup_s: t0.saturating_sub(setup_start) as f64 * 1e-9,
        late_bound_ns: opts.late_bound_ns,
        loadavg: loadavg(),
    };
    let doc = results::assemble(&plan, &engine, outcomes, &facts_run);
    drop(engine);
    drop(ns_files);
    let errs = nss.teardown();
    if !errs.is_empty() {
        return Err(EmuError::Failed(format!("clean-up: {}", errs.join("; "))));
    }
    Ok(doc)
}
