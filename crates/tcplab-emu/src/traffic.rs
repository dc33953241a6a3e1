//! The emulator's own traffic programs, each a thread that enters its host's network
//! namespace (`setns`, which moves only the calling thread) before it opens a socket,
//! so its sockets belong to that host's kernel stack:
//!
//! - bulk/finite TCP sender: `TCP_CONGESTION` set before `connect`, bound to the flow's
//!   own source address (whose route carries `initcwnd`), writes its bytes (or without
//!   end until `stop`), then `shutdown(SHUT_WR)`; samples `TCP_INFO` every
//!   `sample_ns` (cwnd, ssthresh, RTT, RTO, CA state) and keeps a row when any changes;
//! - TCP sink: accepts one connection and reads to end of file; completion is the time
//!   the end of file (the FIN after the last byte) is read;
//! - CBR UDP sender: datagrams of the scenario's IP size, each carrying a sequence number
//!   and its monotonic send time, with inter-departure times drawn from the same random
//!   substream as the simulator's (`flow:<name>:interval`);
//! - UDP sink: counts datagrams, one-way delay from the embedded send time (one clock:
//!   every namespace shares the host's CLOCK_MONOTONIC), RFC 3550 §6.4.1 jitter.
//!
//! Every wait is bounded (≤ 5 ms) so each thread sees the shared stop flag promptly.

use crate::plan::{TCP_PORT, UDP_PORT, UDP_STAMP};
use crate::sys;
use std::fs::File;
use std::io::{self, Read};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tcplab_core::metrics::recorder::GoodputBins;
use tcplab_core::rng::RngStream;
use tcplab_core::scenario::Interval;
use tcplab_core::time::{SimDuration, SimTime};

use crate::engine::Control;

/// `struct tcp_info` of `include/uapi/linux/tcp.h` up to `tcpi_total_rto_time`
/// (Linux 6.7); fields a kernel does not fill stay zero.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub app_limited: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time: u32,
}

/// Linux's "no ssthresh yet" (`TCP_INFINITE_SSTHRESH`).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
const TCP_FIN_WAIT2: u8 = 5;
const TCP_TIME_WAIT: u8 = 6;
pub(crate) const TCP_CLOSE: u8 = 7;
/// Bytes of `tcp_info` a kernel must fill for `total_rto` to be present (Linux 6.7+).
pub const TCP_INFO_WITH_RTO: usize = std::mem::size_of::<TcpInfo>();

/// Reads `TCP_INFO`; returns the struct and how many bytes the kernel filled.
pub fn tcp_info(fd: RawFd) -> io::Result<(TcpInfo, usize)> {
    let mut info = TcpInfo::default();
    let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
    // SAFETY: info is a repr(C) struct of len bytes.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, (&mut info as *mut TcpInfo).cast(), &mut len) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((info, len as usize))
}

pub(crate) fn setsockopt_bytes(fd: RawFd, level: i32, opt: i32, v: &[u8], what: &str) -> io::Result<()> {
    // SAFETY: v is valid for v.len() bytes.
    let r = unsafe { libc::setsockopt(fd, level, opt, v.as_ptr().cast(), v.len() as libc::socklen_t) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

pub(crate) fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
        sin_zero: [0; 8],
    }
}

/// Waits up to `timeout_ns` for `events` on `fd`; returns the revents.
fn poll_one(fd: RawFd, events: i16, timeout_ns: u64) -> i16 {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    let ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t, tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long };
    // SAFETY: one valid pollfd, valid timespec, no signal mask change.
    let n = unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
    if n > 0 {
        p.revents
    } else {
        0
    }
}

const SLICE_NS: u64 = 5_000_000;

/// One row of the cwnd series (the simulator's `CwndSeries` columns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CwndRow {
    pub t_ns: u64,
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: Option<u64>,
    pub srtt_s: Option<f64>,
    pub rto_s: f64,
    pub state: u8,
}

impl CwndRow {
    fn from_info(t_ns: u64, i: &TcpInfo) -> CwndRow {
        let mss = i.snd_mss as u64;
        CwndRow {
            t_ns,
            cwnd_bytes: i.snd_cwnd as u64 * mss,
            ssthresh_bytes: (i.snd_ssthresh < INFINITE_SSTHRESH).then_some(i.snd_ssthresh as u64 * mss),
            srtt_s: (i.rtt > 0).then_some(i.rtt as f64 * 1e-6),
            rto_s: i.rto as f64 * 1e-6,
            state: crate::kernel::ca_state_code(i.ca_state),
        }
    }
    fn same_values(&self, o: &CwndRow) -> bool {
        (self.cwnd_bytes, self.ssthresh_bytes, self.srtt_s, self.rto_s, self.state)
            == (o.cwnd_bytes, o.ssthresh_bytes, o.srtt_s, o.rto_s, o.state)
    }
}

pub struct TcpSenderSpec {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub cc: String,
    pub maxseg: Option<u32>,
    pub bytes: Option<u64>,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub record: bool,
    pub sample_ns: u64,
}

#[derive(Debug, Default)]
pub struct TcpSenderResult {
    pub established_ns: Option<u64>,
    pub info: Option<TcpInfo>,
    pub info_len: usize,
    pub series: Vec<CwndRow>,
    pub error: Option<String>,
}

fn fail(ctl: &Control, msg: String) -> String {
    ctl.failed.store(true, Ordering::Release);
    msg
}

/// The TCP sender of one flow; runs until it is done or the run stops.
pub fn tcp_sender(ns: File, s: TcpSenderSpec, t0: u64, ctl: Arc<Control>) -> TcpSenderResult {
    let mut res = TcpSenderResult::default();
    if let Err(e) = tcp_sender_inner(ns, &s, t0, &ctl, &mut res) {
        res.error = Some(fail(&ctl, e));
    }
    res
}

fn tcp_sender_inner(ns: File, s: &TcpSenderSpec, t0: u64, ctl: &Control, res: &mut TcpSenderResult) -> Result<(), String> {
    sys::setns_net(&ns).map_err(|e| e.to_string())?;
    // SAFETY: plain socket call; ownership passes to OwnedFd.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(format!("socket: {}", io::Error::last_os_error()));
    }
    // SAFETY: raw is a fresh descriptor.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    let fd = sock.as_raw_fd();
    setsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, s.cc.as_bytes(), &format!("TCP_CONGESTION {}", s.cc)).map_err(|e| e.to_string())?;
    if let Some(m) = s.maxseg {
        setsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &(m as libc::c_int).to_ne_bytes(), "TCP_MAXSEG").map_err(|e| e.to_string())?;
    }
    let local = sockaddr(SocketAddrV4::new(s.src, 0));
    // SAFETY: valid sockaddr_in.
    if unsafe { libc::bind(fd, (&local as *const libc::sockaddr_in).cast(), std::mem::size_of::<libc::sockaddr_in>() as u32) } < 0 {
        return Err(format!("bind {}: {}", s.src, io::Error::last_os_error()));
    }
    sys::sleep_until(t0 + s.start_ns);
    if ctl.stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let remote = sockaddr(SocketAddrV4::new(s.dst, TCP_PORT));
    // SAFETY: valid sockaddr_in.
    let r = unsafe { libc::connect(fd, (&remote as *const libc::sockaddr_in).cast(), std::mem::size_of::<libc::sockaddr_in>() as u32) };
    if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
        return Err(format!("connect {}: {}", s.dst, io::Error::last_os_error()));
    }
    let mut last: Option<CwndRow> = None;
    let mut sample = |res: &mut TcpSenderResult, now: u64| -> Option<TcpInfo> {
        let (info, len) = tcp_info(fd).ok()?;
        res.info = Some(info);
        res.info_len = len;
        if s.record && info.snd_mss > 0 {
            let row = CwndRow::from_info(now - t0, &info);
            if last.is_none_or(|l| !l.same_values(&row)) {
                res.series.push(row);
                last = Some(row);
            }
        }
        Some(info)
    };
    // Connection set-up (the kernel retransmits the SYN on its own timer).
    loop {
        if ctl.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let ev = poll_one(fd, libc::POLLOUT, SLICE_NS);
        if ev & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) != 0 {
            let mut err: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: reading an int option.
            unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, (&mut err as *mut libc::c_int).cast(), &mut len) };
            if err != 0 {
                return Err(format!("connect {}: {}", s.dst, io::Error::from_raw_os_error(err)));
            }
            res.established_ns = Some(sys::mono_ns() - t0);
            break;
        }
    }
    let chunk = vec![0x5au8; 1 << 16];
    let mut remaining = s.bytes.unwrap_or(u64::MAX);
    let mut shut = false;
    let mut next_sample = sys::mono_ns();
    loop {
        let now = sys::mono_ns();
        if ctl.stop.load(Ordering::Relaxed) {
            break;
        }
        if !shut && (remaining == 0 || s.stop_ns.is_some_and(|st| now >= t0 + st)) {
            // SAFETY: plain syscall on our socket.
            unsafe { libc::shutdown(fd, libc::SHUT_WR) };
            shut = true;
        }
        if now >= next_sample {
            let info = sample(res, now);
            next_sample = (next_sample + s.sample_ns).max(now);
            if shut {
                if let Some(i) = info {
                    // Everything, FIN included, has been acknowledged.
                    if i.unacked == 0 && matches!(i.state, TCP_FIN_WAIT2 | TCP_TIME_WAIT | TCP_CLOSE) {
                        break;
                    }
                }
            }
        }
        if !shut {
            while remaining > 0 {
                let n = remaining.min(chunk.len() as u64) as usize;
                // SAFETY: chunk is valid for n bytes.
                let w = unsafe { libc::send(fd, chunk.as_ptr().cast(), n, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
                if w < 0 {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() == Some(libc::EAGAIN) {
                        break;
                    }
                    return Err(format!("send: {e}"));
                }
                if s.bytes.is_some() {
                    remaining -= w as u64;
                }
            }
        }
        let wait = next_sample.saturating_sub(sys::mono_ns()).min(SLICE_NS);
        poll_one(fd, if shut || remaining == 0 { 0 } else { libc::POLLOUT }, wait);
    }
    sample(res, sys::mono_ns());
    Ok(())
}

#[derive(Debug, Default)]
pub struct TcpSinkResult {
    pub bytes_read: u64,
    /// The application read the end of file (every byte and the FIN arrived).
    pub eof: bool,
    pub completed_ns: Option<u64>,
    /// `tcpi_bytes_received` at the end: bytes received in order (the simulator's
    /// "delivered"), including any the application had not read yet (and the FIN's
    /// sequence number once it arrived).
    pub bytes_received: Option<u64>,
    /// `[record] throughput_interval`: the bytes read, binned by when they were read.
    pub goodput: Option<GoodputBins>,
    pub error: Option<String>,
}

/// What a sink bins its application's bytes into (`[record] throughput_interval`).
#[derive(Clone, Copy, Debug)]
pub struct GoodputSpec {
    pub interval_ns: u64,
    pub start_ns: u64,
}

impl GoodputSpec {
    fn bins(spec: Option<GoodputSpec>) -> Option<GoodputBins> {
        spec.map(|g| GoodputBins::new(SimTime(g.start_ns), g.interval_ns))
    }
}

/// Adds `bytes` read now (run time: since the clock's start `t0`) to `bins`.
fn add_goodput(bins: &mut Option<GoodputBins>, spec: Option<GoodputSpec>, ctl: &Control, bytes: u64) {
    if let (Some(b), Some(g)) = (bins.as_mut(), spec) {
        b.add(SimTime(sys::mono_ns().saturating_sub(ctl.t0())), bytes, g.interval_ns);
    }
}

/// Binds the sink of one flow (in the receiver's namespace) and returns the listener;
/// called before the clock starts so the first SYN finds it listening.
pub fn tcp_listen(ns: &File, dst: Ipv4Addr) -> Result<TcpListener, String> {
    sys::setns_net(ns).map_err(|e| e.to_string())?;
    let l = TcpListener::bind(SocketAddrV4::new(dst, TCP_PORT)).map_err(|e| format!("listen {dst}:{TCP_PORT}: {e}"))?;
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok(l)
}

/// The TCP sink of one flow: reads until end of file or the run stops.
pub fn tcp_sink(listener: TcpListener, target: Option<u64>, goodput: Option<GoodputSpec>, ctl: Arc<Control>) -> TcpSinkResult {
    let mut res = TcpSinkResult { goodput: GoodputSpec::bins(goodput), ..Default::default() };
    let stream = loop {
        if ctl.stop.load(Ordering::Relaxed) {
            return res;
        }
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                poll_one(listener.as_raw_fd(), libc::POLLIN, SLICE_NS);
            }
            Err(e) => {
                res.error = Some(fail(&ctl, format!("accept: {e}")));
                return res;
            }
        }
    };
    let mut stream = stream;
    if let Err(e) = stream.set_nonblocking(true) {
        res.error = Some(fail(&ctl, e.to_string()));
        return res;
    }
    let mut buf = vec![0u8; 1 << 18];
    loop {
        if ctl.stop.load(Ordering::Relaxed) {
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) => {
                res.eof = true;
                if target.is_some_and(|t| res.bytes_read >= t) {
                    res.completed_ns = Some(sys::mono_ns().saturating_sub(ctl.t0()));
                }
                if target.is_some() {
                    ctl.unfinished.fetch_sub(1, Ordering::AcqRel);
                }
                break;
            }
            Ok(n) => {
                res.bytes_read += n as u64;
                add_goodput(&mut res.goodput, goodput, &ctl, n as u64);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                poll_one(stream.as_raw_fd(), libc::POLLIN, SLICE_NS);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                res.error = Some(fail(&ctl, format!("read: {e}")));
                break;
            }
        }
    }
    res.bytes_received = tcp_info(stream.as_raw_fd()).ok().map(|(i, _)| i.bytes_received);
    res
}

pub struct UdpSenderSpec {
    pub name: String,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub packet_bytes: u32,
    pub interval: Interval,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub seed: u64,
}

#[derive(Debug, Default)]
pub struct UdpSenderResult {
    pub sent: u64,
    pub error: Option<String>,
}

/// The CBR (or Normal/exponential) UDP source of one flow, departure times as the
/// simulator's `on_udp_send` draws them.
pub fn udp_sender(ns: File, s: UdpSenderSpec, t0: u64, ctl: Arc<Control>) -> UdpSenderResult {
    let mut res = UdpSenderResult::default();
    let run = || -> Result<u64, String> {
        sys::setns_net(&ns).map_err(|e| e.to_string())?;
        let sock = UdpSocket::bind(SocketAddrV4::new(s.src, 0)).map_err(|e| format!("bind {}: {e}", s.src))?;
        sock.connect(SocketAddrV4::new(s.dst, UDP_PORT)).map_err(|e| format!("connect {}: {e}", s.dst))?;
        let mut rng = RngStream::new(s.seed, &format!("flow:{}:interval", s.name));
        let mut payload = vec![0u8; (s.packet_bytes - crate::plan::UDP_OVERHEAD) as usize];
        let mut t = s.start_ns;
        let mut seq: u64 = 0;
        let mut sent = 0;
        loop {
            if s.stop_ns.is_some_and(|st| t >= st) {
                break;
            }
            sys::sleep_until(t0 + t);
            if ctl.stop.load(Ordering::Relaxed) {
                break;
            }
            payload[..8].copy_from_slice(&seq.to_be_bytes());
            payload[8..UDP_STAMP as usize].copy_from_slice(&sys::mono_ns().to_be_bytes());
            match sock.send(&payload) {
                Ok(_) => sent += 1,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) || e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(format!("send: {e}")),
            }
            seq += 1;
            let gap = match s.interval {
                Interval::Constant { mean } => mean,
                Interval::Normal { mean, sigma } => {
                    SimDuration::from_secs_f64(rng.normal(mean.as_secs_f64(), sigma.as_secs_f64()))
                }
                Interval::Exponential { mean } => SimDuration::from_secs_f64(rng.exponential(mean.as_secs_f64())),
            };
            t += gap.0;
        }
        Ok(sent)
    };
    match run() {
        Ok(n) => res.sent = n,
        Err(e) => res.error = Some(fail(&ctl, e)),
    }
    res
}

#[derive(Debug, Default)]
pub struct UdpSinkResult {
    pub delivered: u64,
    pub owd_sum_s: f64,
    pub owd_max_s: f64,
    pub jitter_s: f64,
    /// Datagrams whose sequence number was not above every earlier one (reordered or
    /// duplicated), as the simulator's `udp.pkts_out_of_order` counts them.
    pub out_of_order: u64,
    /// `[record] throughput_interval`: whole datagrams (their IP size, as the
    /// simulator counts them), binned by when they were read.
    pub goodput: Option<GoodputBins>,
    pub error: Option<String>,
}

pub fn udp_bind(ns: &File, dst: Ipv4Addr) -> Result<UdpSocket, String> {
    sys::setns_net(ns).map_err(|e| e.to_string())?;
    let s = UdpSocket::bind(SocketAddrV4::new(dst, UDP_PORT)).map_err(|e| format!("bind {dst}:{UDP_PORT}: {e}"))?;
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok(s)
}

/// The UDP sink of one flow: counts datagrams and their one-way delays until the run stops.
pub fn udp_sink(sock: UdpSocket, packet_bytes: u32, goodput: Option<GoodputSpec>, ctl: Arc<Control>) -> UdpSinkResult {
    let mut res = UdpSinkResult { goodput: GoodputSpec::bins(goodput), ..Default::default() };
    let mut buf = vec![0u8; 1 << 16];
    let mut last_transit: Option<f64> = None;
    let mut highest_seq: Option<u64> = None;
    loop {
        if ctl.stop.load(Ordering::Relaxed) {
            break;
        }
        match sock.recv(&mut buf) {
            Ok(n) if n >= UDP_STAMP as usize => {
                let now = sys::mono_ns();
                let seq = u64::from_be_bytes(buf[..8].try_into().unwrap());
                let sent = u64::from_be_bytes(buf[8..16].try_into().unwrap());
                if highest_seq.is_some_and(|h| seq <= h) {
                    res.out_of_order += 1;
                } else {
                    highest_seq = Some(seq);
                }
                let owd = now.saturating_sub(sent) as f64 * 1e-9;
                res.delivered += 1;
                add_goodput(&mut res.goodput, goodput, &ctl, packet_bytes as u64);
                res.owd_sum_s += owd;
                res.owd_max_s = res.owd_max_s.max(owd);
                // RFC 3550 §6.4.1: J += (|D| - J)/16.
                if let Some(prev) = last_transit {
                    res.jitter_s += ((owd - prev).abs() - res.jitter_s) / 16.0;
                }
                last_transit = Some(owd);
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                poll_one(sock.as_raw_fd(), libc::POLLIN, SLICE_NS);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                res.error = Some(fail(&ctl, format!("recv: {e}")));
                break;
            }
        }
    }
    res
}
