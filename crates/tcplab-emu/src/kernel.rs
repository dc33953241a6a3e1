//! How a flow's resolved TCP configuration and congestion control become settings of
//! the host's real kernel, or why they cannot.
//!
//! Every knob of `tcplab_core::tcp::config::TcpConfig` is handled by exactly one rule
//! below. References are Linux's (`net/ipv4/tcp_*.c`, `Documentation/networking/
//! ip-sysctl.rst`, `ip-route(8)`):
//!
//! | knob | kernel | how |
//! |---|---|---|
//! | cc | `TCP_CONGESTION` | must be listed in `net.ipv4.tcp_available_congestion_control`; parameters of kernel CC modules are global module parameters, so `[cc] params` are refused |
//! | iw | route `initcwnd` | segments (`tcp_init_cwnd`); the RFC 3390 formula must give whole segments |
//! | mss | `TCP_MAXSEG` | only when it differs from what the MTU gives |
//! | header_bytes | `net.ipv4.tcp_timestamps` | 40 = no TCP options on data (timestamps off), 52 = timestamps on (12 option bytes) |
//! | sack | `net.ipv4.tcp_sack` | both hosts (negotiated) |
//! | window_scaling | `net.ipv4.tcp_window_scaling` | both hosts (negotiated) |
//! | rcv_buffer | `net.ipv4.tcp_rmem` | receiver's maximum; Linux advertises part of it (`tcp_win_from_space`) |
//! | min_rto | route `rto_min` | whole milliseconds |
//! | max_rto | `net.ipv4.tcp_rto_max_ms` | 120 s (`TCP_RTO_MAX`) unless the kernel has the sysctl (Linux 6.15) |
//! | syn_retries | `net.ipv4.tcp_syn_retries` | sender |
//! | dupack_threshold | `net.ipv4.tcp_reordering` | sender's initial reordering degree |
//! | frto | `net.ipv4.tcp_frto` | 2 (on) or 0 (off) |
//! | frto_variant | — | any non-zero `tcp_frto` runs Linux's SACK-enhanced F-RTO (`tcp_process_loss`): `linux` is native, `rfc5682` is accepted and noted |
//! | quickack | — | Linux always has quick-ACK mode and the adaptive delayed-ACK timeout (`tcp_event_data_recv`): on is native, off is accepted and noted |
//! | delayed_ack | route `quickack` | off = `quickack 1` on the receiver's route back |
//! | cbi_ssthresh_reuse | `net.ipv4.tcp_no_metrics_save`, `tcp_no_ssthresh_metrics_save` | per-destination metrics cache (RFC 2140's temporal sharing) |
//! | initial_rto | — | fixed at 1 s (`TCP_TIMEOUT_INIT`): anything else is refused |
//! | initial_ssthresh | — | Linux starts at `TCP_INFINITE_SSTHRESH`: a bound is refused |
//! | limited_transmit | — | always on in Linux (`tcp_time_to_recover`): off is refused |
//! | byte_counting, abc_limit | — | Linux counts delivered segments (`tcp_slow_start`): per-ACK counting or another limit is refused |
//! | delack_timeout, delack_segments | — | 40 ms minimum (`TCP_DELACK_MIN`), ACK every 2 full segments (`__tcp_ack_snd_check`): other values are refused |
//! | daass | — | Linux has its own quick-ACK start instead: on is refused |
//! | ecn | `net.ipv4.tcp_ecn` | sender: 1 = request ECN on the SYN, 2 = only accept it (the receiver keeps the default 2: it accepts a request) |
//! | rack | `net.ipv4.tcp_recovery` | sender: 1 = RACK loss detection, 0 = duplicate-ACK counting |
//! | tlp | `net.ipv4.tcp_early_retrans` | sender: 3 = tail loss probes, 0 = none |
//! | dsack | `net.ipv4.tcp_dsack` | both hosts |
//! | prr | — | Linux always reduces with `tcp_cwnd_reduction` (PRR, RFC 9937): `linux` is native, other modes are accepted and noted |
//! | rtt_estimator | — | Linux always runs `tcp_rtt_estimator`: `linux` is native, `rfc6298` is accepted and noted |
//! | ssthresh_from_cwnd | — | Linux's CC modules reduce from cwnd: true is native, false is accepted and noted |
//! | linux_cc | — | the kernel's CC modules are Linux's: true is native, false is accepted and noted |
//! | fin_ignores_cwnd | — | before Linux 6.10, `tcp_cwnd_test` let a last sub-MSS segment carrying the FIN leave beyond cwnd ("IW10 is really IW11"): there, on is native and off is accepted and noted; Linux 6.10 removed the exception ("tcp: remove dubious FIN exception from tcp_cwnd_test()", E. Dumazet, 2024): there, off is native and on is refused |
//!
//! Behaviour the simulator does not model is left at the kernel's defaults and listed
//! in docs/emulation.md (quick-ACK start, receive-buffer autotuning, TCP small queues,
//! HyStart in the kernel's CUBIC).

use tcplab_core::cc::CcSpec;
use tcplab_core::tcp::config::{InitialWindow, TcpConfig};
use tcplab_core::tcp::frto::FrtoVariant;
use tcplab_core::tcp::prr::PrrMode;
use tcplab_core::tcp::rtt::RttEstimatorKind;
use tcplab_core::time::SimDuration;

/// Which host a sysctl must be set on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Sender,
    Receiver,
    Both,
}

/// The kernel settings of one TCP flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelTcp {
    /// `TCP_CONGESTION` name.
    pub cc: String,
    /// Route `initcwnd`, segments.
    pub initcwnd: u32,
    /// Route `rto_min` on the sender's route, when not Linux's 200 ms.
    pub rto_min_ms: Option<u64>,
    /// Route `quickack 1` on the receiver's route back (no delayed ACKs).
    pub quickack: bool,
    /// `TCP_MAXSEG` on the sender (MSS option value, options not subtracted).
    pub maxseg: Option<u32>,
    /// Largest IP packet the flow sends, bytes (sets the MTU).
    pub packet_bytes: u32,
    /// Payload bytes per full segment (for cwnd in bytes).
    pub mss: u32,
    /// `(sysctl, value, side)`.
    pub sysctls: Vec<(&'static str, String, Side)>,
    /// Accepted differences between what the scenario asks and what the kernel does.
    pub deviations: Vec<String>,
}

/// What this kernel offers, read once.
#[derive(Clone, Debug, Default)]
pub struct KernelFacts {
    pub release: String,
    pub available_cc: Vec<String>,
    pub has_rto_max_sysctl: bool,
}

impl KernelFacts {
    /// Whether this kernel still sends a last sub-MSS FIN segment beyond cwnd
    /// (`tcp_cwnd_test`'s FIN exception, removed in Linux 6.10). An unparsable release
    /// counts as a current kernel.
    pub fn fin_exception(&self) -> bool {
        let mut it = self.release.split(|c: char| !c.is_ascii_digit());
        match (it.next().and_then(|m| m.parse::<u32>().ok()), it.next().and_then(|m| m.parse::<u32>().ok())) {
            (Some(major), Some(minor)) => (major, minor) < (6, 10),
            _ => false,
        }
    }
}

impl KernelFacts {
    pub fn read() -> KernelFacts {
        let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
        KernelFacts {
            release: read("/proc/sys/kernel/osrelease"),
            available_cc: read("/proc/sys/net/ipv4/tcp_available_congestion_control")
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            has_rto_max_sysctl: std::path::Path::new("/proc/sys/net/ipv4/tcp_rto_max_ms").exists(),
        }
    }
}

const LINUX_MIN_RTO: SimDuration = SimDuration::from_millis(200);
const LINUX_INIT_RTO: SimDuration = SimDuration::from_secs(1);
const LINUX_MAX_RTO: SimDuration = SimDuration::from_secs(120);

/// Maps one flow's TCP configuration to kernel settings; every knob the kernel cannot
/// honour is one message in the error list (all of them, not just the first).
pub fn map_tcp(cfg: &TcpConfig, cc: &CcSpec, k: &KernelFacts) -> Result<KernelTcp, Vec<String>> {
    let mut bad = Vec::new();
    let mut out = KernelTcp { cc: cc.name.clone(), ..Default::default() };
    if !k.available_cc.iter().any(|c| c == &cc.name) {
        bad.push(format!(
            "cc '{}' is not offered by this kernel ({}); net.ipv4.tcp_available_congestion_control = {}",
            cc.name,
            k.release,
            k.available_cc.join(" ")
        ));
    }
    if cc.params.as_object().is_some_and(|o| !o.is_empty()) {
        bad.push(format!(
            "cc params {} cannot be set per flow: a kernel congestion control's parameters are global module parameters (/sys/module/tcp_{}/parameters)",
            cc.params, cc.name
        ));
    }
    let options = match cfg.header_bytes {
        40 => {
            out.sysctls.push(("net.ipv4.tcp_timestamps", "0".into(), Side::Both));
            0
        }
        52 => {
            out.sysctls.push(("net.ipv4.tcp_timestamps", "1".into(), Side::Both));
            12
        }
        h => {
            bad.push(format!(
                "tcp.header_bytes = {h}: the kernel's data segments carry 40 bytes of IP + TCP header (timestamps off) or 52 (timestamps on); accepted: 40, 52"
            ));
            0
        }
    };
    out.mss = cfg.mss;
    out.packet_bytes = cfg.mss + cfg.header_bytes;
    // The MTU is set from the largest packet; TCP_MAXSEG only when the MSS differs
    // from what that MTU gives (MTU - 40).
    out.maxseg = Some(cfg.mss + options);
    match cfg.iw {
        InitialWindow::Segments(n) => out.initcwnd = n,
        InitialWindow::Formula(_) => {
            let bytes = cfg.iw.bytes(cfg.mss);
            if !bytes.is_multiple_of(cfg.mss as u64) {
                bad.push(format!(
                    "tcp.iw = rfc3390 gives {bytes} bytes with mss {}, not a whole number of segments; route initcwnd counts segments",
                    cfg.mss
                ));
            }
            out.initcwnd = (bytes / cfg.mss as u64) as u32;
        }
    }
    if let Some(ss) = cfg.initial_ssthresh {
        bad.push(format!(
            "tcp.initial_ssthresh = {ss} B: Linux starts every connection at TCP_INFINITE_SSTHRESH; there is no per-connection initial ssthresh"
        ));
    }
    if cfg.initial_rto != LINUX_INIT_RTO {
        bad.push(format!(
            "tcp.initial_rto = {}: Linux's initial RTO is fixed at 1 s (TCP_TIMEOUT_INIT); accepted: \"1s\"",
            fmt_dur(cfg.initial_rto)
        ));
    }
    if cfg.min_rto != LINUX_MIN_RTO {
        if !cfg.min_rto.0.is_multiple_of(1_000_000) || cfg.min_rto.0 == 0 {
            bad.push(format!(
                "tcp.min_rto = {}: the route's rto_min takes whole milliseconds >= 1 ms",
                fmt_dur(cfg.min_rto)
            ));
        } else {
            out.rto_min_ms = Some(cfg.min_rto.0 / 1_000_000);
        }
    }
    if cfg.max_rto != LINUX_MAX_RTO {
        let ms = cfg.max_rto.0 / 1_000_000;
        if k.has_rto_max_sysctl && cfg.max_rto.0.is_multiple_of(1_000_000) && (1000..=120_000).contains(&ms) {
            out.sysctls.push(("net.ipv4.tcp_rto_max_ms", ms.to_string(), Side::Sender));
        } else {
            bad.push(format!(
                "tcp.max_rto = {}: this kernel's maximum RTO is 120 s (TCP_RTO_MAX){}",
                fmt_dur(cfg.max_rto),
                if k.has_rto_max_sysctl { "; net.ipv4.tcp_rto_max_ms accepts whole ms in [1 s, 120 s]" } else { " and it has no net.ipv4.tcp_rto_max_ms" }
            ));
        }
    }
    if !(1..=127).contains(&cfg.syn_retries) {
        bad.push(format!("tcp.syn_retries = {}: net.ipv4.tcp_syn_retries accepts 1..127", cfg.syn_retries));
    }
    out.sysctls.push(("net.ipv4.tcp_syn_retries", cfg.syn_retries.to_string(), Side::Sender));
    out.sysctls.push(("net.ipv4.tcp_sack", (cfg.sack as u8).to_string(), Side::Both));
    out.sysctls.push(("net.ipv4.tcp_reordering", cfg.dupack_threshold.to_string(), Side::Sender));
    if !cfg.limited_transmit {
        bad.push("tcp.limited_transmit = false: Linux always sends new data on the first two duplicate ACKs (RFC 3042); it cannot be turned off".into());
    }
    out.sysctls.push(("net.ipv4.tcp_frto", if cfg.frto { "2" } else { "0" }.into(), Side::Sender));
    if cfg.frto && cfg.frto_variant != FrtoVariant::Linux {
        out.deviations.push("tcp.frto_variant = rfc5682: a non-zero tcp_frto runs Linux's SACK-enhanced F-RTO (tcp_process_loss); the kernel does this regardless".into());
    }
    if cfg.delayed_ack && !cfg.quickack {
        out.deviations.push("tcp.quickack = false: Linux's receiver quick-ACKs (tcp_incr_quickack) and adapts its delayed-ACK timeout (tcp_event_data_recv); the kernel does this regardless".into());
    }
    if !cfg.byte_counting {
        bad.push("tcp.byte_counting = false: Linux grows cwnd by the segments each ACK delivers (tcp_slow_start, tcp_cong_avoid_ai); per-ACK counting has no kernel equivalent".into());
    } else if cfg.abc_limit != 2 {
        bad.push(format!("tcp.abc_limit = {}: only Linux's own behaviour (the linux profile's 2) can be emulated", cfg.abc_limit));
    }
    if cfg.delayed_ack {
        if cfg.delack_timeout != SimDuration::from_millis(40) {
            bad.push(format!(
                "tcp.delack_timeout = {}: Linux's delayed-ACK timer starts at 40 ms (TCP_DELACK_MIN) and adapts; accepted: \"40ms\"",
                fmt_dur(cfg.delack_timeout)
            ));
        }
        if cfg.delack_segments != 2 {
            bad.push(format!(
                "tcp.delack_segments = {}: Linux ACKs every second full-sized segment; accepted: 2",
                cfg.delack_segments
            ));
        }
    } else {
        out.quickack = true;
    }
    if cfg.daass {
        bad.push("tcp.daass = true: Linux has no DAASS (RFC 2760); it quick-ACKs the start of a connection instead (tcp_incr_quickack)".into());
    }
    let rb = cfg.rcv_buffer;
    out.sysctls.push(("net.ipv4.tcp_rmem", format!("4096 {} {}", rb.min(131_072), rb), Side::Receiver));
    out.sysctls.push(("net.ipv4.tcp_window_scaling", (cfg.window_scaling as u8).to_string(), Side::Both));
    if cfg.cbi_ssthresh_reuse {
        out.sysctls.push(("net.ipv4.tcp_no_metrics_save", "0".into(), Side::Sender));
        out.sysctls.push(("net.ipv4.tcp_no_ssthresh_metrics_save", "0".into(), Side::Sender));
    } else {
        out.sysctls.push(("net.ipv4.tcp_no_metrics_save", "1".into(), Side::Sender));
    }
    out.sysctls.push(("net.ipv4.tcp_ecn", if cfg.ecn { "1" } else { "2" }.into(), Side::Sender));
    out.sysctls.push(("net.ipv4.tcp_recovery", (cfg.rack as u8).to_string(), Side::Sender));
    out.sysctls.push(("net.ipv4.tcp_early_retrans", if cfg.tlp { "3" } else { "0" }.into(), Side::Sender));
    out.sysctls.push(("net.ipv4.tcp_dsack", (cfg.dsack as u8).to_string(), Side::Both));
    if cfg.prr != PrrMode::Linux {
        out.deviations.push(format!(
            "tcp.prr = {:?}: Linux always reduces cwnd in recovery with tcp_cwnd_reduction (PRR as RFC 9937); the kernel does this regardless",
            cfg.prr
        ));
    }
    if cfg.rtt_estimator != RttEstimatorKind::Linux {
        out.deviations.push("tcp.rtt_estimator = rfc6298: Linux samples every ACK (tcp_rtt_estimator) and bounds RTO below by SRTT + rto_min; the kernel does this regardless".into());
    }
    if !cfg.ssthresh_from_cwnd {
        out.deviations.push("tcp.ssthresh_from_cwnd = false: Linux's congestion controls reduce from cwnd (tcp_reno_ssthresh), not FlightSize; the kernel does this regardless".into());
    }
    if !cfg.linux_cc {
        out.deviations.push("tcp.linux_cc = false: the kernel's congestion controls are Linux's modules (whole-segment ssthresh, CUBIC's constant Reno-friendly alpha, BBR's own recovery); the kernel does this regardless".into());
    }
    match (cfg.fin_ignores_cwnd, k.fin_exception()) {
        (false, true) => out.deviations.push(format!(
            "tcp.fin_ignores_cwnd = false: Linux {} sends a last sub-MSS segment carrying the FIN even when cwnd is full (tcp_cwnd_test, before 6.10); the kernel does this regardless",
            k.release
        )),
        (true, false) => bad.push(format!(
            "tcp.fin_ignores_cwnd = true: Linux {} keeps a FIN segment within cwnd like any other (6.10 removed tcp_cwnd_test's FIN exception); accepted: false",
            k.release
        )),
        _ => {}
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(bad)
    }
}

fn fmt_dur(d: SimDuration) -> String {
    let ns = d.0;
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// Maps the simulator's congestion state to the kernel's `tcpi_ca_state` codes the
/// series use: 0 open, 1 recovery, 2 loss (`results.py` `CA_STATES`). Linux's Disorder
/// (duplicate ACKs, no reduction yet) is open; CWR (a reduction without loss) counts
/// as recovery.
pub fn ca_state_code(tcpi_ca_state: u8) -> u8 {
    match tcpi_ca_state {
        0 | 1 => 0,
        2 | 3 => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::tcp::config::TcpSpec;

    fn facts() -> KernelFacts {
        KernelFacts { release: "6.x".into(), available_cc: vec!["reno".into(), "cubic".into()], has_rto_max_sysctl: false }
    }

    #[test]
    fn linux_profile_maps_and_ns2_sack_is_refused_with_reasons() {
        let linux = TcpSpec::default().resolve().unwrap();
        let k = map_tcp(&linux, &CcSpec::default(), &facts()).unwrap();
        assert_eq!(k.initcwnd, 10);
        assert!(!k.quickack && k.rto_min_ms.is_none());
        assert!(k.sysctls.contains(&("net.ipv4.tcp_sack", "1".into(), Side::Both)));
        let ns2 = TcpSpec { profile: Some("ns2-sack".into()), ..Default::default() }.resolve().unwrap();
        let e = map_tcp(&ns2, &CcSpec::default(), &facts()).unwrap_err();
        let all = e.join("\n");
        // ns2-sack: initial RTO 3 s, max RTO 60 s (this fake kernel has no
        // tcp_rto_max_ms), no Limited Transmit, per-ACK growth.
        assert!(all.contains("tcp.initial_rto = 3s"), "{all}");
        assert!(all.contains("tcp.max_rto = 60s"), "{all}");
        assert!(all.contains("tcp.limited_transmit = false"), "{all}");
        assert!(all.contains("tcp.byte_counting = false"), "{all}");
        assert_eq!(e.len(), 4, "{all}");
    }

    #[test]
    fn unavailable_cc_and_params_are_refused() {
        let linux = TcpSpec::default().resolve().unwrap();
        let cc = CcSpec { name: "htcp".into(), params: serde_json::json!({"beta": 0.5}) };
        let e = map_tcp(&linux, &cc, &facts()).unwrap_err();
        assert!(e[0].contains("'htcp' is not offered") && e[0].contains("reno cubic"), "{e:?}");
        assert!(e[1].contains("global module parameters"), "{e:?}");
    }

    #[test]
    fn iw_min_rto_and_delayed_ack_become_route_attributes() {
        let spec = TcpSpec {
            iw: Some(InitialWindow::Formula(tcplab_core::tcp::config::IwFormula::Rfc3390)),
            min_rto: Some(SimDuration::from_millis(300)),
            delayed_ack: Some(false),
            mss: Some(1460),
            header_bytes: Some(40),
            ..Default::default()
        };
        let k = map_tcp(&spec.resolve().unwrap(), &CcSpec::default(), &facts()).unwrap();
        // RFC 3390 with MSS 1460: min(5840, max(2920, 4380)) = 4380 B = 3 segments.
        assert_eq!((k.initcwnd, k.rto_min_ms, k.quickack), (3, Some(300), true));
    }
    /// The `linux` profile is the kernel's defaults: timestamps on (`tcp_timestamps =
    /// 1`, MSS 1448 + 12 option bytes as TCP_MAXSEG), `tcp_frto = 2`, and neither its
    /// F-RTO nor its quick-ACK receiver is a deviation; the older settings are noted.
    #[test]
    fn linux_profile_keeps_the_kernel_defaults() {
        let linux = TcpSpec::default().resolve().unwrap();
        let k = map_tcp(&linux, &CcSpec::default(), &facts()).unwrap();
        let sysctl = |n: &str| k.sysctls.iter().find(|s| s.0 == n).map(|s| s.1.clone());
        assert_eq!(sysctl("net.ipv4.tcp_timestamps").as_deref(), Some("1"));
        assert_eq!(sysctl("net.ipv4.tcp_frto").as_deref(), Some("2"));
        assert_eq!((k.mss, k.maxseg), (1448, Some(1460)));
        assert!(!k.deviations.iter().any(|d| d.contains("frto") || d.contains("quickack")), "{:?}", k.deviations);
        let old = TcpSpec { frto_variant: Some(tcplab_core::tcp::frto::FrtoVariant::Rfc5682), quickack: Some(false), ..Default::default() };
        let k = map_tcp(&old.resolve().unwrap(), &CcSpec::default(), &facts()).unwrap();
        assert!(k.deviations.iter().any(|d| d.starts_with("tcp.frto_variant = rfc5682")));
        assert!(k.deviations.iter().any(|d| d.starts_with("tcp.quickack = false")));
    }

    #[test]
    fn fin_exception_follows_the_kernel_release() {
        // tcp_cwnd_test's FIN exception left in Linux 6.10.
        let with = |release: &str| KernelFacts { release: release.into(), ..facts() };
        assert!(with("6.9.12").fin_exception() && with("2.6.35").fin_exception() && with("5.15.0-91-generic").fin_exception());
        assert!(!with("6.10.0").fin_exception() && !with("6.18.44-fc-v669").fin_exception() && !with("7.0").fin_exception());
        let quirk = TcpSpec { fin_ignores_cwnd: Some(true), ..Default::default() }.resolve().unwrap();
        let e = map_tcp(&quirk, &CcSpec::default(), &with("6.18.44")).unwrap_err();
        assert!(e[0].contains("tcp.fin_ignores_cwnd = true") && e[0].contains("6.10"), "{e:?}");
        assert!(map_tcp(&quirk, &CcSpec::default(), &with("6.6.1")).unwrap().deviations.is_empty());
        let plain = TcpSpec::default().resolve().unwrap();
        assert!(map_tcp(&plain, &CcSpec::default(), &with("6.18.44")).unwrap().deviations.is_empty());
        assert!(map_tcp(&plain, &CcSpec::default(), &with("6.6.1")).unwrap().deviations[0].contains("fin_ignores_cwnd = false"));
    }

    #[test]
    fn loss_recovery_knobs_are_sysctls_or_noted() {
        let sysctl = |k: &KernelTcp, name: &str| k.sysctls.iter().find(|s| s.0 == name).map(|s| s.1.clone());
        let linux = map_tcp(&TcpSpec::default().resolve().unwrap(), &CcSpec::default(), &facts()).unwrap();
        assert_eq!(sysctl(&linux, "net.ipv4.tcp_recovery").as_deref(), Some("1"));
        assert_eq!(sysctl(&linux, "net.ipv4.tcp_early_retrans").as_deref(), Some("3"));
        assert_eq!(sysctl(&linux, "net.ipv4.tcp_dsack").as_deref(), Some("1"));
        assert_eq!(sysctl(&linux, "net.ipv4.tcp_ecn").as_deref(), Some("2"));
        // linux-2.6's own 3 s initial RTO is refused (Linux 3.1 fixed it at 1 s); set
        // the kernel's to reach the loss-recovery knobs.
        let old = TcpSpec {
            profile: Some("linux-2.6".into()),
            ecn: Some(true),
            initial_rto: Some(tcplab_core::time::SimDuration::from_secs(1)),
            ..Default::default()
        };
        let k = map_tcp(&old.resolve().unwrap(), &CcSpec::default(), &facts()).unwrap();
        assert_eq!(sysctl(&k, "net.ipv4.tcp_recovery").as_deref(), Some("0"));
        assert_eq!(sysctl(&k, "net.ipv4.tcp_early_retrans").as_deref(), Some("0"));
        assert_eq!(sysctl(&k, "net.ipv4.tcp_ecn").as_deref(), Some("1"));
        let noted = k.deviations.join("\n");
        for knob in ["tcp.prr = Off", "tcp.rtt_estimator = rfc6298", "tcp.ssthresh_from_cwnd = false", "tcp.linux_cc = false"] {
            assert!(noted.contains(knob), "{knob} not in {noted}");
        }
    }
}
