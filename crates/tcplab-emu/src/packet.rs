//! The few IPv4/TCP header fields the emulator reads (RFC 791 §3.1, RFC 9293 §3.1), and
//! the packet store: fixed-size buffers in one slab with a free list, so once it has
//! grown to the peak number of packets inside the models nothing is allocated per
//! packet.

use std::net::Ipv4Addr;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const TCP_SYN: u8 = 0x02;
pub const TCP_ACK: u8 = 0x10;

/// Parsed header fields of an IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    pub total_len: u16,
    pub proto: u8,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub header_len: usize,
}

pub fn ipv4(b: &[u8]) -> Option<Ipv4> {
    if b.len() < 20 || b[0] >> 4 != 4 {
        return None;
    }
    let header_len = (b[0] & 0x0f) as usize * 4;
    if header_len < 20 || b.len() < header_len {
        return None;
    }
    Some(Ipv4 {
        total_len: u16::from_be_bytes([b[2], b[3]]),
        proto: b[9],
        src: Ipv4Addr::new(b[12], b[13], b[14], b[15]),
        dst: Ipv4Addr::new(b[16], b[17], b[18], b[19]),
        header_len,
    })
}

/// TCP header fields of an IPv4 packet whose header is `ip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tcp {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub payload: u32,
}

pub fn tcp(b: &[u8], ip: &Ipv4) -> Option<Tcp> {
    let h = ip.header_len;
    if ip.proto != PROTO_TCP || b.len() < h + 20 {
        return None;
    }
    let t = &b[h..];
    let doff = (t[12] >> 4) as usize * 4;
    let total = (ip.total_len as usize).min(b.len());
    Some(Tcp {
        sport: u16::from_be_bytes([t[0], t[1]]),
        dport: u16::from_be_bytes([t[2], t[3]]),
        seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
        ack: u32::from_be_bytes([t[8], t[9], t[10], t[11]]),
        flags: t[13],
        payload: total.saturating_sub(h + doff) as u32,
    })
}

/// A 32-bit sequence offset `rel` (seq - ISN, modulo 2^32) as the 64-bit offset
/// nearest to `high`, the highest offset seen so far: flows past 4 GiB keep counting
/// (RFC 9293 §3.4: sequence numbers compare modulo 2^32 within half the space).
///
/// ```
/// use tcplab_emu::packet::unwrap_seq;
/// assert_eq!(unwrap_seq(0, 1), 1);
/// assert_eq!(unwrap_seq((1 << 32) - 10, 5), (1 << 32) + 5); // wrapped past 2^32
/// assert_eq!(unwrap_seq((1 << 32) + 5, u32::MAX - 2), (1 << 32) - 3); // a late one before the wrap
/// ```
pub fn unwrap_seq(high: u64, rel: u32) -> u64 {
    let base = high & !0xffff_ffff;
    let c = base | rel as u64;
    let half = 1u64 << 31;
    if c + half < high {
        c + (1 << 32)
    } else if c > high + half && c >= 1 << 32 {
        c - (1 << 32)
    } else {
        c
    }
}

/// Per-packet facts kept beside the bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Meta {
    pub len: u32,
    /// Model time the packet entered the emulator, ns since t0.
    pub ingress_ns: u64,
    pub dst_node: u32,
    /// Flow index, or `u32::MAX` for a packet of no flow.
    pub flow: u32,
    pub to_receiver: bool,
    /// Carries payload (TCP data or a UDP datagram).
    pub data: bool,
    /// Transaction of a request/response flow (`NO_TXN`: none or unknown).
    pub txn: u32,
}

pub const NO_FLOW: u32 = u32::MAX;
pub const NO_TXN: u32 = u32::MAX;

/// Packet buffers of `stride` bytes in one slab.
pub struct Pool {
    stride: usize,
    bytes: Vec<u8>,
    pub meta: Vec<Meta>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
}

impl Pool {
    pub fn new(stride: usize, initial: usize) -> Self {
        Pool {
            stride,
            bytes: vec![0; stride * initial],
            meta: vec![Meta::default(); initial],
            free: (0..initial as u32).rev().collect(),
            live: 0,
            peak: 0,
        }
    }

    /// A free slot (the slab doubles when none is left: amortised, not per packet).
    pub fn alloc(&mut self) -> u32 {
        if self.free.is_empty() {
            let n = self.meta.len();
            let grow = n.max(64);
            self.bytes.resize(self.stride * (n + grow), 0);
            self.meta.resize(n + grow, Meta::default());
            self.free.extend((n as u32..(n + grow) as u32).rev());
        }
        self.live += 1;
        self.peak = self.peak.max(self.live);
        self.free.pop().expect("grown")
    }

    pub fn release(&mut self, id: u32) {
        self.live -= 1;
        self.free.push(id);
    }

    pub fn buf_mut(&mut self, id: u32) -> &mut [u8] {
        let s = id as usize * self.stride;
        &mut self.bytes[s..s + self.stride]
    }

    pub fn packet(&self, id: u32) -> &[u8] {
        let s = id as usize * self.stride;
        &self.bytes[s..s + self.meta[id as usize].len as usize]
    }

    pub fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_tcp_syn() {
        // IPv4, IHL 5, total 60, proto 6, 198.19.0.2 -> 198.19.0.1; TCP doff 10 (40 B), SYN.
        let mut p = [0u8; 60];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&60u16.to_be_bytes());
        p[9] = 6;
        p[12..16].copy_from_slice(&[198, 19, 0, 2]);
        p[16..20].copy_from_slice(&[198, 19, 0, 1]);
        p[24..28].copy_from_slice(&1000u32.to_be_bytes());
        p[32] = 10 << 4;
        p[33] = TCP_SYN;
        let ip = ipv4(&p).unwrap();
        assert_eq!((ip.src, ip.dst, ip.proto), (Ipv4Addr::new(198, 19, 0, 2), Ipv4Addr::new(198, 19, 0, 1), 6));
        let t = tcp(&p, &ip).unwrap();
        assert_eq!((t.seq, t.flags, t.payload), (1000, TCP_SYN, 0));
        assert!(ipv4(&p[..10]).is_none());
    }

    #[test]
    fn pool_reuses_slots() {
        let mut pool = Pool::new(2048, 2);
        let a = pool.alloc();
        let b = pool.alloc();
        let c = pool.alloc(); // grows
        pool.release(b);
        assert_eq!(pool.alloc(), b);
        assert_ne!(a, c);
        assert_eq!(pool.peak(), 3);
    }
}
