//! Thin, checked wrappers over the Linux system calls the emulator needs: the
//! monotonic clock, network-namespace switching (`setns(2)`), TUN devices
//! (`Documentation/networking/tuntap.rst`), the ethtool ioctl that turns segment
//! merging off (`ETHTOOL_SGSO`, `ETHTOOL_SGRO`, `ETHTOOL_STSO`, `linux/ethtool.h`),
//! epoll with a nanosecond timeout (`epoll_pwait2(2)`, Linux 5.11), signalfd, and
//! scheduling (`sched_setscheduler(2)`, `PR_SET_TIMERSLACK`).
//!
//! Every wrapper returns `io::Result` with the call named in the error; nothing here
//! knows about scenarios.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn check(ret: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if ret < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(ret)
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the clock of every model and measurement).
#[inline]
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until the monotonic time `t_ns` (absolute, so no drift accumulates).
pub fn sleep_until(t_ns: u64) {
    let ts = libc::timespec { tv_sec: (t_ns / 1_000_000_000) as libc::time_t, tv_nsec: (t_ns % 1_000_000_000) as libc::c_long };
    loop {
        // SAFETY: valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        if r != libc::EINTR {
            return;
        }
    }
}

/// The calling thread's network namespace, as an open file (to return to it).
pub fn current_netns() -> io::Result<File> {
    File::open("/proc/thread-self/ns/net").map_err(|e| io::Error::new(e.kind(), format!("open /proc/thread-self/ns/net: {e}")))
}

/// Inode of a namespace file: equal inodes mean the same namespace.
pub fn ns_inode(f: &File) -> io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    Ok(f.metadata()?.ino())
}

/// Moves the calling thread into the network namespace `ns` (only this thread).
pub fn setns_net(ns: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: plain syscall on an fd we own.
    check(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) }, "setns(CLONE_NEWNET)")?;
    Ok(())
}

fn ifreq_named(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("interface name '{name}' must be 1-15 bytes")));
    }
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(ifr)
}

/// Opens a TUN device named `name` in the calling thread's network namespace: layer 3
/// (`IFF_TUN`), no packet-information header (`IFF_NO_PI`), non-blocking. Without
/// `IFF_VNET_HDR` and `TUNSETOFFLOAD` the device offers no TSO or checksum offload, so
/// every read is one complete, checksummed IP packet.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    let path = CString::new("/dev/net/tun").unwrap();
    // SAFETY: valid C string.
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) }, "open /dev/net/tun")?;
    // SAFETY: fd was just returned by open.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut ifr = ifreq_named(name)?;
    ifr.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF takes a pointer to an ifreq.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut ifr) }, "ioctl(TUNSETIFF)")?;
    Ok(fd)
}

/// Checks that /dev/net/tun can be opened (creates nothing: a TUN device exists only
/// after TUNSETIFF).
pub fn tun_openable() -> io::Result<()> {
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/net/tun").map(|_| ())
}

const ETHTOOL_GGSO: u32 = 0x23;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_SGRO: u32 = 0x2c;

#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

fn ethtool(sock: RawFd, name: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let mut v = EthtoolValue { cmd, data };
    let mut ifr = ifreq_named(name)?;
    ifr.ifr_ifru.ifru_data = (&mut v as *mut EthtoolValue).cast();
    // SAFETY: SIOCETHTOOL takes an ifreq whose data points at an ethtool_value.
    check(unsafe { libc::ioctl(sock, libc::SIOCETHTOOL as _, &mut ifr) }, &format!("ethtool cmd {cmd:#x} on {name}"))?;
    Ok(v.data)
}

/// Turns generic segmentation offload, TSO and GRO off on `name` (in the calling
/// thread's namespace), so TCP builds one skb per wire-sized segment and nothing merges
/// received segments. Returns the GSO state read back (false = off).
pub fn disable_offloads(name: &str) -> io::Result<bool> {
    // SAFETY: plain socket call; closed below by OwnedFd.
    let s = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) }, "socket for ethtool")?;
    // SAFETY: s was just returned by socket.
    let s = unsafe { OwnedFd::from_raw_fd(s) };
    ethtool(s.as_raw_fd(), name, ETHTOOL_SGSO, 0)?;
    // TSO is already off on a TUN without TUNSETOFFLOAD; GRO does not apply to a TUN
    // without IFF_NAPI. Both are asked anyway and their refusal is not an error.
    let _ = ethtool(s.as_raw_fd(), name, ETHTOOL_STSO, 0);
    let _ = ethtool(s.as_raw_fd(), name, ETHTOOL_SGRO, 0);
    Ok(ethtool(s.as_raw_fd(), name, ETHTOOL_GGSO, 0)? != 0)
}

/// Non-blocking read of one packet; `Ok(None)` when none is waiting.
#[inline]
pub fn read_nb(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(n as usize))
}

/// Writes one packet; returns false if the kernel refused it for lack of room (counted
/// by the caller as a host drop).
#[inline]
pub fn write_pkt(fd: RawFd, buf: &[u8]) -> io::Result<bool> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::ENOMEM) => Ok(false),
            _ => Err(e),
        };
    }
    Ok(true)
}

/// An epoll instance whose events carry a caller-chosen u64.
pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll_create1")?;
        // SAFETY: fd was just returned.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token };
        // SAFETY: valid epoll_event.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) }, "epoll_ctl(ADD)")?;
        Ok(())
    }
    /// Waits for readiness or `timeout_ns` (None: forever); returns the ready count.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ns: Option<u64>) -> io::Result<usize> {
        let ts = timeout_ns.map(|t| libc::timespec { tv_sec: (t / 1_000_000_000) as libc::time_t, tv_nsec: (t % 1_000_000_000) as libc::c_long });
        let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: events is a valid buffer of events.len() entries; tsp null or valid.
        let n = unsafe {
            libc::epoll_pwait2(self.0.as_raw_fd(), events.as_mut_ptr(), events.len() as libc::c_int, tsp, std::ptr::null())
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                return Ok(0);
            }
            return Err(io::Error::new(e.kind(), format!("epoll_pwait2: {e}")));
        }
        Ok(n as usize)
    }
}

/// The signals that end an emulation cleanly.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn stop_sigset() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local value.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in STOP_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks SIGINT/SIGTERM/SIGHUP in the calling thread (threads spawned later inherit
/// the mask) and returns a signalfd that reports them: a Ctrl-C during set-up waits
/// until the emulator can clean up.
pub fn block_stop_signals() -> io::Result<OwnedFd> {
    let set = stop_sigset();
    // SAFETY: valid sigset.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    // SAFETY: valid sigset.
    let fd = check(unsafe { libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) }, "signalfd")?;
    // SAFETY: fd was just returned.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads a pending stop signal from the signalfd, if any.
pub fn pending_signal(fd: &OwnedFd) -> Option<i32> {
    // SAFETY: signalfd_siginfo is plain old data.
    let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::signalfd_siginfo>();
    // SAFETY: reading into a buffer of the right size.
    let n = unsafe { libc::read(fd.as_raw_fd(), (&mut info as *mut libc::signalfd_siginfo).cast(), size) };
    (n as usize == size).then_some(info.ssi_signo as i32)
}

/// Asks for SCHED_FIFO at `prio` for the calling thread; returns whether it was granted.
pub fn realtime(prio: i32) -> bool {
    let p = libc::sched_param { sched_priority: prio };
    // SAFETY: valid sched_param; pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// Sets the calling thread's timer slack to 1 ns (the default 50 µs would be added to
/// every timed wait of a normal-priority thread).
pub fn tight_timer_slack() {
    // SAFETY: plain prctl.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Effective capability set of this process (bit i = capability i), from /proc.
pub fn effective_caps() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("CapEff:").map(|v| u64::from_str_radix(v.trim(), 16).ok())))
        .flatten()
        .unwrap_or(0)
}

pub const CAP_NET_ADMIN: u32 = 12;
pub const CAP_SYS_ADMIN: u32 = 21;

/// Whether process `pid` exists and runs a program whose name is `comm`.
pub fn process_is(pid: u32, comm: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim_end() == comm)
}

/// Writes a sysctl of the calling thread's network namespace (`/proc/sys/net/...`
/// resolves against the opener's namespace).
pub fn write_sysctl(key: &str, value: &str) -> io::Result<()> {
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    std::fs::write(&path, value).map_err(|e| io::Error::new(e.kind(), format!("write {path} = {value}: {e}")))
}

pub fn read_sysctl(key: &str) -> io::Result<String> {
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    std::fs::read_to_string(&path).map(|s| s.trim().to_string())
}
