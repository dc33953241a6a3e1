//! Request/response traffic programs: the kernel-TCP counterpart of the core's
//! `app::rpc` (netperf's `TCP_CRR`: connect, request, response, close; seed 001).
//!
//! - **Client** (one thread per application, in the client's namespace): opens a new
//!   connection per transaction at its scheduled time (`TxnPlan::start_ns`, drawn by
//!   `Plan::schedule_transactions` with the simulator's own generators), from the
//!   application's client address and the transaction's own port (`plan::txn_port`,
//!   published in the `PortTable` before `connect` so the packet loop can attribute
//!   every packet). It sends the request as soon as the connection is established
//!   (the ACK of the SYN-ACK rides on it, as in the simulator), reads the response,
//!   and once it has read the end of file closes its side (`shutdown(SHUT_WR)`: its FIN
//!   acknowledges the server's). `closed` is when `TCP_INFO` shows the socket in
//!   `TCP_CLOSE` (the ACK of the client's FIN arrived), checked every millisecond.
//! - **Server** (one thread per application, in the server's namespace): a listener
//!   on the application's server address with `TCP_CONGESTION` and `TCP_MAXSEG` set
//!   (accepted connections inherit both: `tcp_ca_openreq_child` keeps a congestion
//!   control set by `setsockopt`). For each connection it looks the transaction up by
//!   the client's port, reads the whole request, then writes the response corked
//!   (`TCP_CORK`) and closes its side at once: every segment is full-sized and the FIN
//!   rides on the last data segment (`tcp_send_fin` adds it to an unsent tail), as
//!   the simulator's server sends it. Linux sends a segment carrying the FIN even when
//!   cwnd is full (`tcp_cwnd_test`), the quirk the simulator's `fin_ignores_cwnd` models.
//!
//! The response's initial window is the route's `initcwnd` on the server's route to
//! the application's client address (`plan.rs`): Linux reads it per destination when
//! the connection is set up (`tcp_init_cwnd`, RTAX_INITCWND), so every transaction of
//! the application gets it. A different window per transaction of the same two
//! addresses would need a BPF `sock_ops` program (`TCP_BPF_IW`); the scenario cannot
//! ask for that (an application has one `tcp` configuration).
//!
//! Times are monotonic ns since t0 (model time), read right after the event's wake-up:
//! `start` just before `connect`, `established` when the connect completes, `completed`
//! when the last response byte has been read.

use crate::engine::{Control, PortTable};
use crate::plan::{txn_port, TxnPlan, TCP_PORT};
use crate::sys;
use crate::traffic::{setsockopt_bytes, sockaddr, tcp_info, TCP_CLOSE, TCP_INFO_WITH_RTO};
use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Longest wait of a program's loop, ns (the stop flag is seen at this pace).
const SLICE_NS: u64 = 5_000_000;
/// How often a closing client socket's state is checked, ns.
const CLOSE_CHECK_NS: u64 = 1_000_000;
const CHUNK: usize = 1 << 16;

/// One transaction as the client saw it.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientTxn {
    pub g: u32,
    pub start_ns: Option<u64>,
    pub established_ns: Option<u64>,
    pub completed_ns: Option<u64>,
    pub closed_ns: Option<u64>,
    pub bytes_read: u64,
    /// The connect failed (SYN retries exhausted, refused).
    pub failed: bool,
    /// Client socket's `tcpi_total_retrans` and `tcpi_total_rto` (request direction).
    pub retrans: u32,
    pub rtos: u32,
}

/// One transaction as the server saw it (response direction).
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerTxn {
    pub seen: bool,
    pub retrans: u32,
    pub rtos: u32,
}

#[derive(Debug, Default)]
pub struct RpcClientResult {
    pub txns: Vec<ClientTxn>,
    pub error: Option<String>,
}

#[derive(Debug, Default)]
pub struct RpcServerResult {
    /// Indexed by transaction number g (every transaction of the run; only this
    /// application's are filled).
    pub txns: Vec<ServerTxn>,
    pub error: Option<String>,
}

pub struct RpcSpecs {
    /// The application's client and server addresses.
    pub client: Ipv4Addr,
    pub server: Ipv4Addr,
    pub cc: String,
    pub maxseg: Option<u32>,
}

fn fail(ctl: &Control, msg: String) -> String {
    ctl.failed.store(true, Ordering::Release);
    msg
}

fn last_err(what: &str) -> String {
    format!("{what}: {}", io::Error::last_os_error())
}

fn nb_socket() -> Result<OwnedFd, String> {
    // SAFETY: plain socket call; ownership passes to OwnedFd.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(last_err("socket"));
    }
    // SAFETY: raw is a fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn set_int(fd: RawFd, level: i32, opt: i32, v: libc::c_int, what: &str) -> Result<(), String> {
    setsockopt_bytes(fd, level, opt, &v.to_ne_bytes(), what).map_err(|e| e.to_string())
}

fn tcp_options(fd: RawFd, s: &RpcSpecs) -> Result<(), String> {
    setsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, s.cc.as_bytes(), &format!("TCP_CONGESTION {}", s.cc))
        .map_err(|e| e.to_string())?;
    if let Some(m) = s.maxseg {
        set_int(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, m as libc::c_int, "TCP_MAXSEG")?;
    }
    Ok(())
}

fn bind(fd: RawFd, a: SocketAddrV4) -> Result<(), String> {
    let sa = sockaddr(a);
    // SAFETY: valid sockaddr_in.
    if unsafe { libc::bind(fd, (&sa as *const libc::sockaddr_in).cast(), std::mem::size_of::<libc::sockaddr_in>() as u32) } < 0 {
        return Err(last_err(&format!("bind {a}")));
    }
    Ok(())
}

/// Waits up to `timeout_ns` for the events in `fds`.
fn ppoll(fds: &mut [libc::pollfd], timeout_ns: u64) {
    let ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t, tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long };
    // SAFETY: fds is a valid array of pollfd; valid timespec; no signal mask change.
    unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
}

fn send_nb(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for its length.
    let w = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
    if w < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(w as usize)
    }
}

fn recv_nb(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for its length.
    let r = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

fn would_block(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR))
}

fn losses(fd: RawFd) -> (u32, u32) {
    match tcp_info(fd) {
        Ok((i, len)) => (i.total_retrans, if len >= TCP_INFO_WITH_RTO { i.total_rto as u32 } else { 0 }),
        Err(_) => (0, 0),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CState {
    Connecting,
    Sending(u64),
    Receiving,
    Closing,
}

struct CConn {
    /// Index into this application's transactions.
    i: usize,
    fd: OwnedFd,
    state: CState,
}

/// The client of one application: `txns` are its transactions in start order.
pub fn rpc_client(ns: File, s: RpcSpecs, txns: Vec<TxnPlan>, ports: Arc<PortTable>, t0: u64, ctl: Arc<Control>) -> RpcClientResult {
    let mut res = RpcClientResult { txns: txns.iter().map(|t| ClientTxn { g: t.g, ..Default::default() }).collect(), error: None };
    if let Err(e) = client_loop(ns, &s, &txns, &ports, t0, &ctl, &mut res.txns) {
        res.error = Some(fail(&ctl, e));
    }
    res
}

fn client_loop(ns: File, s: &RpcSpecs, txns: &[TxnPlan], ports: &PortTable, t0: u64, ctl: &Control, out: &mut [ClientTxn]) -> Result<(), String> {
    sys::setns_net(&ns).map_err(|e| e.to_string())?;
    sys::tight_timer_slack();
    let max_req = txns.iter().map(|t| t.request_bytes).max().unwrap_or(0).min(CHUNK as u64) as usize;
    let request = vec![0x51u8; max_req.max(1)];
    let mut buf = vec![0u8; CHUNK];
    let mut live: Vec<CConn> = Vec::new();
    let mut pfds: Vec<libc::pollfd> = Vec::new();
    let mut next = 0;
    let mut last_close_check = 0;
    let done = |ctl: &Control| {
        ctl.unfinished.fetch_sub(1, Ordering::AcqRel);
    };
    loop {
        if ctl.stop.load(Ordering::Relaxed) {
            break;
        }
        let now = sys::mono_ns().saturating_sub(t0);
        // Open every transaction due.
        while next < txns.len() && txns[next].start_ns <= now {
            let t = &txns[next];
            let fd = nb_socket()?;
            let raw = fd.as_raw_fd();
            tcp_options(raw, s)?;
            set_int(raw, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
            let port = txn_port(t.g);
            bind(raw, SocketAddrV4::new(s.client, port))?;
            ports.set(port, t.g);
            let remote = sockaddr(SocketAddrV4::new(s.server, TCP_PORT));
            out[next].start_ns = Some(sys::mono_ns().saturating_sub(t0));
            // SAFETY: valid sockaddr_in.
            let r = unsafe { libc::connect(raw, (&remote as *const libc::sockaddr_in).cast(), std::mem::size_of::<libc::sockaddr_in>() as u32) };
            if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
                return Err(last_err(&format!("connect {}", s.server)));
            }
            live.push(CConn { i: next, fd, state: CState::Connecting });
            next += 1;
        }
        if next == txns.len() && live.is_empty() {
            break;
        }
        pfds.clear();
        let mut closing = false;
        for c in &live {
            let events = match c.state {
                CState::Connecting | CState::Sending(_) => libc::POLLOUT,
                CState::Receiving => libc::POLLIN,
                CState::Closing => {
                    closing = true;
                    0
                }
            };
            pfds.push(libc::pollfd { fd: c.fd.as_raw_fd(), events, revents: 0 });
        }
        let now = sys::mono_ns().saturating_sub(t0);
        let mut wait = SLICE_NS;
        if next < txns.len() {
            wait = wait.min(txns[next].start_ns.saturating_sub(now));
        }
        if closing {
            wait = wait.min((last_close_check + CLOSE_CHECK_NS).saturating_sub(now));
        }
        if wait > 0 {
            ppoll(&mut pfds, wait);
        }
        let now = sys::mono_ns().saturating_sub(t0);
        let check_close = closing && now >= last_close_check + CLOSE_CHECK_NS;
        if check_close {
            last_close_check = now;
        }
        let mut k = 0;
        while k < live.len() {
            let rev = pfds.get(k).map_or(0, |p| p.revents);
            let c = &mut live[k];
            let raw = c.fd.as_raw_fd();
            let o = &mut out[c.i];
            let t = &txns[c.i];
            let mut finished = false;
            if c.state == CState::Connecting && rev != 0 {
                let mut err: libc::c_int = 0;
                let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
                // SAFETY: reading an int option.
                unsafe { libc::getsockopt(raw, libc::SOL_SOCKET, libc::SO_ERROR, (&mut err as *mut libc::c_int).cast(), &mut len) };
                if err != 0 {
                    o.failed = true;
                    done(ctl);
                    finished = true;
                } else {
                    o.established_ns = Some(now);
                    c.state = CState::Sending(0);
                }
            }
            if let CState::Sending(sent) = c.state {
                let mut sent = sent;
                while sent < t.request_bytes {
                    let n = ((t.request_bytes - sent) as usize).min(request.len());
                    match send_nb(raw, &request[..n]) {
                        Ok(w) => sent += w as u64,
                        Err(e) if would_block(&e) => break,
                        Err(e) => return Err(format!("send request: {e}")),
                    }
                }
                c.state = if sent >= t.request_bytes { CState::Receiving } else { CState::Sending(sent) };
            }
            if c.state == CState::Receiving && (rev & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0) {
                loop {
                    match recv_nb(raw, &mut buf) {
                        Ok(0) => {
                            // The server's FIN: close our side (its ACK rides on our FIN).
                            // SAFETY: plain syscall on our socket.
                            unsafe { libc::shutdown(raw, libc::SHUT_WR) };
                            c.state = CState::Closing;
                            break;
                        }
                        Ok(n) => {
                            o.bytes_read += n as u64;
                            if o.completed_ns.is_none() && o.bytes_read >= t.response_bytes {
                                o.completed_ns = Some(sys::mono_ns().saturating_sub(t0));
                                done(ctl);
                            }
                        }
                        Err(e) if would_block(&e) => break,
                        Err(e) if e.raw_os_error() == Some(libc::ECONNRESET) => {
                            c.state = CState::Closing;
                            break;
                        }
                        Err(e) => return Err(format!("read response: {e}")),
                    }
                }
            }
            if c.state == CState::Closing && check_close {
                if let Ok((i, _)) = tcp_info(raw) {
                    if i.state == TCP_CLOSE {
                        o.closed_ns = Some(now);
                        finished = true;
                    }
                }
            }
            if finished {
                (o.retrans, o.rtos) = losses(raw);
                if o.completed_ns.is_none() && !o.failed {
                    // The connection ended without the whole response (reset).
                    done(ctl);
                }
                // pfds holds one entry per live connection, in the same order.
                live.swap_remove(k);
                pfds.swap_remove(k);
                continue;
            }
            k += 1;
        }
    }
    for c in &live {
        let o = &mut out[c.i];
        (o.retrans, o.rtos) = losses(c.fd.as_raw_fd());
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SState {
    Request(u64),
    Response(u64),
    Closing,
}

struct SConn {
    g: u32,
    fd: OwnedFd,
    state: SState,
}

/// Binds and listens on the application's server address (before the clock starts).
pub fn rpc_listen(ns: &File, s: &RpcSpecs) -> Result<OwnedFd, String> {
    sys::setns_net(ns).map_err(|e| e.to_string())?;
    let fd = nb_socket()?;
    let raw = fd.as_raw_fd();
    tcp_options(raw, s)?;
    set_int(raw, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
    bind(raw, SocketAddrV4::new(s.server, TCP_PORT))?;
    // SAFETY: plain syscall on our socket.
    if unsafe { libc::listen(raw, 4096) } < 0 {
        return Err(last_err(&format!("listen {}:{TCP_PORT}", s.server)));
    }
    Ok(fd)
}

/// The server of one application: answers every connection until the run stops.
/// `all` is every transaction of the run, indexed by g.
pub fn rpc_server(listener: OwnedFd, all: Arc<Vec<TxnPlan>>, ports: Arc<PortTable>, ctl: Arc<Control>) -> RpcServerResult {
    let mut res = RpcServerResult { txns: vec![ServerTxn::default(); all.len()], error: None };
    if let Err(e) = server_loop(&listener, &all, &ports, &ctl, &mut res.txns) {
        res.error = Some(fail(&ctl, e));
    }
    res
}

fn server_loop(listener: &OwnedFd, all: &[TxnPlan], ports: &PortTable, ctl: &Control, out: &mut [ServerTxn]) -> Result<(), String> {
    sys::tight_timer_slack();
    let lfd = listener.as_raw_fd();
    let response = vec![0x52u8; CHUNK];
    let mut buf = vec![0u8; CHUNK];
    let mut live: Vec<SConn> = Vec::new();
    let mut pfds: Vec<libc::pollfd> = Vec::new();
    loop {
        if ctl.stop.load(Ordering::Relaxed) {
            break;
        }
        pfds.clear();
        pfds.push(libc::pollfd { fd: lfd, events: libc::POLLIN, revents: 0 });
        for c in &live {
            let events = match c.state {
                SState::Request(_) | SState::Closing => libc::POLLIN,
                SState::Response(_) => libc::POLLOUT,
            };
            pfds.push(libc::pollfd { fd: c.fd.as_raw_fd(), events, revents: 0 });
        }
        ppoll(&mut pfds, SLICE_NS);
        if pfds[0].revents != 0 {
            loop {
                let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
                let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
                // SAFETY: sa is a valid sockaddr_in of len bytes.
                let c = unsafe { libc::accept4(lfd, (&mut sa as *mut libc::sockaddr_in).cast(), &mut len, libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
                if c < 0 {
                    let e = io::Error::last_os_error();
                    if would_block(&e) || e.raw_os_error() == Some(libc::ECONNABORTED) {
                        break;
                    }
                    return Err(format!("accept: {e}"));
                }
                // SAFETY: c is a fresh descriptor.
                let fd = unsafe { OwnedFd::from_raw_fd(c) };
                let port = u16::from_be(sa.sin_port);
                let Some(g) = ports.get(port).filter(|&g| (g as usize) < all.len()) else {
                    return Err(format!("a connection from port {port} that no transaction opened"));
                };
                out[g as usize].seen = true;
                live.push(SConn { g, fd, state: SState::Request(0) });
            }
        }
        let mut k = 0;
        while k < live.len() {
            let rev = pfds.get(k + 1).map_or(0, |p| p.revents);
            let c = &mut live[k];
            let raw = c.fd.as_raw_fd();
            let t = &all[c.g as usize];
            let mut finished = false;
            if rev != 0 {
                if let SState::Request(got) = c.state {
                    let mut got = got;
                    loop {
                        match recv_nb(raw, &mut buf) {
                            Ok(0) => {
                                finished = true;
                                break;
                            }
                            Ok(n) => got += n as u64,
                            Err(e) if would_block(&e) => break,
                            Err(e) if e.raw_os_error() == Some(libc::ECONNRESET) => {
                                finished = true;
                                break;
                            }
                            Err(e) => return Err(format!("read request: {e}")),
                        }
                    }
                    c.state = SState::Request(got);
                    if !finished && got >= t.request_bytes {
                        // Corked: only full segments leave until the FIN is queued.
                        set_int(raw, libc::IPPROTO_TCP, libc::TCP_CORK, 1, "TCP_CORK")?;
                        c.state = SState::Response(0);
                    }
                }
            }
            if let SState::Response(sent) = c.state {
                let mut sent = sent;
                while sent < t.response_bytes {
                    let n = ((t.response_bytes - sent) as usize).min(response.len());
                    match send_nb(raw, &response[..n]) {
                        Ok(w) => sent += w as u64,
                        Err(e) if would_block(&e) => break,
                        Err(e) if e.raw_os_error() == Some(libc::EPIPE) || e.raw_os_error() == Some(libc::ECONNRESET) => {
                            finished = true;
                            break;
                        }
                        Err(e) => return Err(format!("send response: {e}")),
                    }
                }
                if !finished {
                    if sent >= t.response_bytes {
                        // The FIN joins the unsent tail; uncorking pushes what is left.
                        // SAFETY: plain syscall on our socket.
                        unsafe { libc::shutdown(raw, libc::SHUT_WR) };
                        set_int(raw, libc::IPPROTO_TCP, libc::TCP_CORK, 0, "TCP_CORK")?;
                        c.state = SState::Closing;
                    } else {
                        c.state = SState::Response(sent);
                    }
                }
            } else if c.state == SState::Closing && rev != 0 {
                loop {
                    match recv_nb(raw, &mut buf) {
                        Ok(0) => {
                            finished = true;
                            break;
                        }
                        Ok(_) => {}
                        Err(e) if would_block(&e) => break,
                        Err(_) => {
                            finished = true;
                            break;
                        }
                    }
                }
            }
            if finished {
                let o = &mut out[c.g as usize];
                (o.retrans, o.rtos) = losses(raw);
                live.swap_remove(k);
                // Keep pfds aligned with live (entry 0 is the listener).
                let last = pfds.len() - 1;
                pfds.swap(k + 1, last);
                pfds.pop();
                continue;
            }
            k += 1;
        }
    }
    for c in &live {
        let o = &mut out[c.g as usize];
        (o.retrans, o.rtos) = losses(c.fd.as_raw_fd());
    }
    Ok(())
}
