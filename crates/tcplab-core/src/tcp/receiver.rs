//! The TCP receiver: handshake reply, in-order delivery, ACK policy and SACK blocks.
//!
//! - Handshake: a SYN is answered with a SYN-ACK; a repeated SYN (the SYN-ACK was lost
//!   or slow) is answered again. The receiver keeps no SYN-ACK timer of its own: the
//!   sender's SYN retransmission recovers a lost SYN-ACK (deviation from RFC 9293
//!   §3.8.1, harmless for one-way transfers).
//! - In-order delivery: bytes are handed to the application exactly once and in
//!   order; out-of-order data is buffered as disjoint ranges above `rcv_nxt`.
//! - ACK policy (RFC 5681 §4.2, RFC 1122 §4.2.3.2): with delayed ACKs, an ACK is sent
//!   for every `delack_segments` full-sized segments or when the delayed-ACK timer
//!   fires; an immediate ACK is sent for an out-of-order segment, a duplicate, or a
//!   segment that fills (part of) a gap. DAASS (RFC 2760 §5.1): no delaying while the
//!   sender is in slow start.
//! - SACK (RFC 2018 §4): up to 3 blocks (the room left by the timestamp option, as
//!   Linux and ns-2's default `max_sack_blocks_`); the first block holds the most
//!   recently received segment, the rest repeat the most recently reported blocks.
//! - The advertised window is the receive buffer less the out-of-order bytes held,
//!   capped at 65 535 bytes without window scaling (RFC 7323 §2).
//! - Timestamp echo (RFC 7323 §4.3): every ACK echoes TS.Recent, taken from a segment
//!   with SEG.SEQ <= Last.ACK.sent, so a delayed ACK echoes the earliest segment it
//!   acknowledges and a duplicate ACK the last in-order one. TSval is the send time
//!   (a clock of nanosecond resolution); only senders with `timestamps` read it.

use super::config::TcpConfig;
use super::{LazyTimer, Outbox, Segment, TimerKind};
use crate::net::packet::{SackBlock, TcpHeader, FLAG_ACK, FLAG_SYN};
use crate::time::{SimDuration, SimTime};

/// SACK blocks per ACK.
pub const SACK_BLOCKS_PER_ACK: usize = 3;

/// What one arriving segment changed at the receiver.
#[derive(Clone, Copy, Debug, Default)]
pub struct Arrival {
    /// Payload bytes newly delivered in order to the application.
    pub delivered: u64,
    /// The FIN has been received in order: the transfer is complete.
    pub finished: bool,
}

pub struct TcpReceiver {
    header_bytes: u32,
    delayed_ack: bool,
    delack_timeout: SimDuration,
    delack_segments: u32,
    daass: bool,
    sack: bool,
    adv_window: u64,
    syn_received: bool,
    /// Next sequence number expected (cumulative ACK value).
    rcv_nxt: u64,
    /// Out-of-order ranges above rcv_nxt, sorted and disjoint.
    ooo: Vec<SackBlock>,
    ooo_bytes: u64,
    /// Blocks in the order they will be reported (most recent first).
    sack_order: Vec<SackBlock>,
    unacked_segments: u32,
    delack: LazyTimer,
    fin_received: bool,
    /// Sequence number of the FIN once any segment carrying it arrived (in order or not).
    fin_seq: Option<u64>,
    delivered: u64,
    acks_sent: u64,
    /// RFC 7323 TS.Recent (a `ts_val`) and Last.ACK.sent.
    ts_recent: u64,
    last_ack_sent: u64,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig) -> Self {
        TcpReceiver {
            header_bytes: cfg.header_bytes,
            delayed_ack: cfg.delayed_ack,
            delack_timeout: cfg.delack_timeout,
            delack_segments: cfg.delack_segments,
            daass: cfg.daass,
            sack: cfg.sack,
            adv_window: cfg.advertised_window(),
            syn_received: false,
            rcv_nxt: 0,
            ooo: Vec::new(),
            ooo_bytes: 0,
            sack_order: Vec::new(),
            unacked_segments: 0,
            delack: LazyTimer::default(),
            fin_received: false,
            fin_seq: None,
            delivered: 0,
            acks_sent: 0,
            ts_recent: 0,
            last_ack_sent: 0,
        }
    }

    /// Heap bytes held: the out-of-order ranges and the SACK report order, each
    /// grown to its peak length (nothing is sized by the receive buffer).
    pub fn heap_bytes(&self) -> usize {
        (self.ooo.capacity() + self.sack_order.capacity()) * std::mem::size_of::<SackBlock>()
    }
    /// Next byte expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    /// Whether sequence number `seq` has been received (in order or buffered).
    pub fn has_received(&self, seq: u64) -> bool {
        seq < self.rcv_nxt || self.ooo.iter().any(|b| b.start <= seq && seq < b.end)
    }
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }
    pub fn syn_received(&self) -> bool {
        self.syn_received
    }
    /// The window this receiver advertises now, bytes.
    pub fn window(&self) -> u64 {
        self.adv_window.saturating_sub(self.ooo_bytes)
    }

    /// The peer's SYN arrived as the SYN-ACK of a connection this host opened: the
    /// peer's data starts at sequence number 1. Nothing is sent (the host's own
    /// segments acknowledge the SYN).
    pub fn on_peer_syn(&mut self) {
        self.syn_received = true;
        self.rcv_nxt = self.rcv_nxt.max(1);
    }

    /// A data segment of the host's own sender carried this receiver's ACK
    /// (piggybacking, RFC 9293 §3.10.7.4): the pending ACK and its delayed-ACK timer
    /// are no longer needed.
    pub fn note_ack_piggybacked(&mut self) {
        self.unacked_segments = 0;
        self.delack.cancel();
        self.last_ack_sent = self.rcv_nxt;
    }

    /// TS.Recent: the timestamp an ACK sent now would echo.
    pub fn ts_recent(&self) -> u64 {
        self.ts_recent
    }

    /// Processes an arriving segment from the sender.
    pub fn on_segment(&mut self, hdr: &TcpHeader, now: SimTime, out: &mut Outbox) -> Arrival {
        let mut arrival = Arrival::default();
        if hdr.is_syn() {
            // SYN occupies sequence number 0; answer (again) with a SYN-ACK.
            self.syn_received = true;
            self.rcv_nxt = self.rcv_nxt.max(1);
            self.send_ack(FLAG_SYN | FLAG_ACK, out);
            return arrival;
        }
        let start = hdr.seq;
        let end = hdr.seq + hdr.len as u64 + hdr.is_fin() as u64;
        if start <= self.last_ack_sent && hdr.ts_val >= self.ts_recent {
            self.ts_recent = hdr.ts_val; // RFC 7323 §4.3 (2)
        }
        if end <= self.rcv_nxt {
            // Entirely old: a duplicate (spurious retransmission). ACK at once so the
            // sender learns the state (RFC 5681 §4.2).
            self.send_ack(FLAG_ACK, out);
            return arrival;
        }
        if hdr.is_fin() {
            self.fin_seq = Some(end - 1);
        }
        let had_gap = !self.ooo.is_empty();
        if start <= self.rcv_nxt {
            let before = self.rcv_nxt;
            self.rcv_nxt = end;
            // Pull in buffered ranges that are now contiguous.
            while let Some(b) = self.ooo.first().copied() {
                if b.start > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b.end);
                self.ooo_bytes -= b.end - b.start;
                self.ooo.remove(0);
            }
            // Data bytes are [1, fin_seq); the FIN's own sequence number carries none,
            // wherever it arrived (it may have been buffered out of order).
            let data_end = |x: u64| self.fin_seq.map_or(x, |f| x.min(f));
            let newly = data_end(self.rcv_nxt) - data_end(before);
            if !self.fin_received && self.fin_seq.is_some_and(|f| self.rcv_nxt > f) {
                self.fin_received = true;
                arrival.finished = true;
            }
            self.delivered += newly;
            arrival.delivered = newly;
            self.prune_sack_order();
            // Every in-order segment counts towards the ACK threshold, full-sized or
            // not (ns-2 DelAck and Linux both count segments).
            self.unacked_segments += 1;
            let immediate = had_gap
                || !self.delayed_ack
                || (self.daass && hdr.ss_hint)
                || self.fin_received
                || self.unacked_segments >= self.delack_segments;
            if immediate {
                self.send_ack(FLAG_ACK, out);
            } else if self.delack.deadline().is_none() {
                self.delack.arm(TimerKind::DelAck, now + self.delack_timeout, out);
            }
        } else {
            // Out of order: buffer, ACK immediately with SACK (RFC 5681 §4.2, RFC 2018 §4).
            let blk = self.insert_ooo(SackBlock { start, end });
            self.note_recent(blk);
            self.send_ack(FLAG_ACK, out);
        }
        arrival
    }

    /// The delayed-ACK timer event of generation `gen`.
    pub fn on_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox) {
        if self.delack.fire(TimerKind::DelAck, gen, now, out) && self.unacked_segments > 0 {
            self.send_ack(FLAG_ACK, out);
        }
    }

    fn insert_ooo(&mut self, mut b: SackBlock) -> SackBlock {
        // Merge with every overlapping or adjacent range; keep the list sorted.
        let mut i = 0;
        while i < self.ooo.len() {
            let o = self.ooo[i];
            if o.end < b.start {
                i += 1;
                continue;
            }
            if o.start > b.end {
                break;
            }
            b.start = b.start.min(o.start);
            b.end = b.end.max(o.end);
            self.ooo_bytes -= o.end - o.start;
            self.ooo.remove(i);
        }
        self.ooo_bytes += b.end - b.start;
        self.ooo.insert(i, b);
        b
    }

    fn note_recent(&mut self, blk: SackBlock) {
        // RFC 2018 §4: the first block reports the segment just received; later blocks
        // repeat earlier reports, dropping those now covered by the first.
        self.sack_order.retain(|o| o.end < blk.start || o.start > blk.end);
        self.sack_order.insert(0, blk);
        self.sack_order.truncate(SACK_BLOCKS_PER_ACK);
    }

    fn prune_sack_order(&mut self) {
        let rcv_nxt = self.rcv_nxt;
        let ooo = &self.ooo;
        self.sack_order.retain(|o| o.end > rcv_nxt);
        for o in self.sack_order.iter_mut() {
            // Re-read the current extent of each reported block.
            if let Some(cur) = ooo.iter().find(|c| c.start <= o.start && o.start < c.end) {
                *o = *cur;
            }
        }
    }

    fn send_ack(&mut self, flags: u8, out: &mut Outbox) {
        self.unacked_segments = 0;
        self.delack.cancel();
        self.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        let mut hdr = TcpHeader {
            seq: 0,
            ack: self.rcv_nxt,
            len: 0,
            flags,
            wnd: self.adv_window.saturating_sub(self.ooo_bytes),
            ts_ecr: self.ts_recent,
            ..Default::default()
        };
        if self.sack && flags & FLAG_SYN == 0 {
            let n = self.sack_order.len().min(SACK_BLOCKS_PER_ACK);
            hdr.sack[..n].copy_from_slice(&self.sack_order[..n]);
            hdr.nsack = n as u8;
        }
        // SACK option: kind + length (2 bytes) + 8 bytes per block, padded to 4 bytes.
        let opt = if hdr.nsack > 0 { (2 + 8 * hdr.nsack as u32).div_ceil(4) * 4 } else { 0 };
        out.segments.push(Segment { hdr, size: self.header_bytes + opt });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::FLAG_FIN;
    use crate::tcp::config::TcpConfig;

    fn data(seq: u64, len: u32) -> TcpHeader {
        TcpHeader { seq, len, flags: FLAG_ACK, ..Default::default() }
    }

    fn rx(profile: &str) -> (TcpReceiver, Outbox) {
        let mut r = TcpReceiver::new(&TcpConfig::profile(profile).unwrap());
        let mut out = Outbox::default();
        let syn = TcpHeader { flags: FLAG_SYN, ..Default::default() };
        r.on_segment(&syn, SimTime(0), &mut out);
        assert!(out.segments[0].hdr.is_syn() && out.segments[0].hdr.ack == 1);
        out.clear();
        (r, out)
    }

    #[test]
    fn delayed_ack_every_second_segment_and_timer() {
        let (mut r, mut out) = rx("linux");
        r.on_segment(&data(1, 1460), SimTime(0), &mut out);
        assert!(out.segments.is_empty());
        let (_, first_at, first_gen) = out.timers[0]; // 40 ms delayed-ACK timer armed
        assert_eq!(first_at, SimTime(0) + SimDuration::from_millis(40));
        r.on_segment(&data(1461, 1460), SimTime(1), &mut out);
        assert_eq!(out.segments.len(), 1);
        assert_eq!(out.segments[0].hdr.ack, 2921);
        out.clear();
        // The third segment re-arms the timer for 2 ns + 40 ms; the event already
        // pending for 40 ms is reused (lazy timer), so nothing new is scheduled yet.
        r.on_segment(&data(2921, 1460), SimTime(2), &mut out);
        assert!(out.segments.is_empty() && out.timers.is_empty());
        // At 40 ms the old event finds the deadline later and re-schedules itself.
        r.on_timer(first_gen, first_at, &mut out);
        assert!(out.segments.is_empty());
        let (_, at, gen) = out.timers[0];
        assert_eq!(at, SimTime(2) + SimDuration::from_millis(40));
        out.clear();
        r.on_timer(gen, at, &mut out);
        assert_eq!(out.segments[0].hdr.ack, 4381);
    }

    #[test]
    fn out_of_order_gets_immediate_ack_with_sack_blocks() {
        let (mut r, mut out) = rx("linux");
        r.on_segment(&data(1, 100), SimTime(0), &mut out);
        out.clear();
        // Hole at [101, 201); receive [201,301) then [401,501).
        r.on_segment(&data(201, 100), SimTime(1), &mut out);
        r.on_segment(&data(401, 100), SimTime(2), &mut out);
        let last = out.segments.last().unwrap().hdr;
        assert_eq!(last.ack, 101);
        // Most recent block first (RFC 2018 §4).
        assert_eq!(last.sack_blocks(), &[SackBlock { start: 401, end: 501 }, SackBlock { start: 201, end: 301 }]);
        // SACK option with 2 blocks: 2 + 16 = 18 -> 20 bytes.
        assert_eq!(out.segments.last().unwrap().size, 40 + 20);
        out.clear();
        // Filling the hole delivers 101..301 and ACKs at once.
        let a = r.on_segment(&data(101, 100), SimTime(3), &mut out);
        assert_eq!(a.delivered, 200);
        assert_eq!(out.segments[0].hdr.ack, 301);
        assert_eq!(out.segments[0].hdr.sack_blocks(), &[SackBlock { start: 401, end: 501 }]);
        assert!(r.has_received(450) && !r.has_received(350));
    }

    #[test]
    fn fin_completes_and_duplicates_are_acked() {
        let (mut r, mut out) = rx("ns2-sack");
        let mut last = data(1, 500);
        last.flags |= FLAG_FIN;
        let a = r.on_segment(&last, SimTime(0), &mut out);
        assert!(a.finished);
        assert_eq!(a.delivered, 500);
        assert_eq!(out.segments[0].hdr.ack, 502);
        out.clear();
        let a = r.on_segment(&data(1, 500), SimTime(1), &mut out);
        assert_eq!(a.delivered, 0);
        assert_eq!(out.segments.len(), 1);
        assert_eq!(r.delivered(), 500);
    }

    #[test]
    fn out_of_order_fin_is_not_counted_as_data() {
        let (mut r, mut out) = rx("ns2-sack");
        let mut last = data(501, 500);
        last.flags |= FLAG_FIN; // data 501..1000, FIN at 1001
        let a = r.on_segment(&last, SimTime(0), &mut out);
        assert!(!a.finished && a.delivered == 0);
        let a = r.on_segment(&data(1, 500), SimTime(1), &mut out);
        assert!(a.finished);
        assert_eq!(a.delivered, 1000);
        assert_eq!(r.delivered(), 1000);
        assert_eq!(out.segments.last().unwrap().hdr.ack, 1002);
    }

    #[test]
    fn daass_acks_every_segment_in_slow_start() {
        let (mut r, mut out) = rx("enhanced");
        let mut h = data(1, 1460);
        h.ss_hint = true;
        r.on_segment(&h, SimTime(0), &mut out);
        assert_eq!(out.segments.len(), 1);
    }

    #[test]
    fn timestamp_echo_follows_rfc7323_ts_recent() {
        // RFC 7323 §4.3: a delayed ACK for segments stamped 7 and 8 echoes 7 (the
        // earliest); an out-of-order segment (10) does not update TS.Recent: its
        // duplicate ACK echoes 9, the last in-order one.
        let (mut r, mut out) = rx("linux");
        let seg = |seq, ts_val| TcpHeader { seq, len: 1460, flags: FLAG_ACK, ts_val, ..Default::default() };
        r.on_segment(&seg(1, 7), SimTime(0), &mut out);
        r.on_segment(&seg(1461, 8), SimTime(1), &mut out);
        assert_eq!(out.segments.last().unwrap().hdr.ts_ecr, 7);
        r.on_segment(&seg(2921, 9), SimTime(2), &mut out);
        r.on_segment(&seg(5841, 10), SimTime(3), &mut out);
        let dup = out.segments.last().unwrap().hdr;
        assert_eq!((dup.ack, dup.ts_ecr), (4381, 9));
    }
}
