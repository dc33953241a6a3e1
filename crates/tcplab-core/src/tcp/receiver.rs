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
//! - Linux's ACK timing, with `quickack` (module `quickack`): quick-ACK mode ACKs
//!   every in-order segment for a while after the first data, a long silence or a
//!   duplicate segment, and the delayed-ACK timer adapts to the inter-arrival time.
//! - SACK (RFC 2018 §4): up to 3 blocks (the room left by the timestamp option, as
//!   Linux and ns-2's default `max_sack_blocks_`); the first block holds the most
//!   recently received segment, the rest repeat the most recently reported blocks.
//! - The advertised window is the receive buffer less the out-of-order bytes held,
//!   capped at 65 535 bytes without window scaling (RFC 7323 §2).
//! - Timestamp echo (RFC 7323 §4.3): every ACK echoes TS.Recent, taken from a segment
//!   with SEG.SEQ <= Last.ACK.sent, so a delayed ACK echoes the earliest segment it
//!   acknowledges and a duplicate ACK the last in-order one. TSval is the send time
//!   (a clock of nanosecond resolution); only senders with `timestamps` read it.
//! - ECN (RFC 3168 §6.1.1, §6.1.3): a SYN with ECE and CWR is answered with ECE (the
//!   receiver accepts ECN, Linux `tcp_ecn = 2`). On an ECN-capable connection a
//!   CE-marked data segment makes every following ACK carry ECE until a data segment
//!   with CWR arrives; the first CE of such a run is ACKed at once, and the next
//!   segment too (Linux `tcp_enter_quickack_mode(sk, 2)`), and a segment with CWR is
//!   ACKed at once (Linux `tcp_ecn_accept_cwr`).
//! - D-SACK (RFC 2883), with `dsack`: a segment that brings data already received (all
//!   or part of it, below rcv_nxt or inside an out-of-order block) is reported in the
//!   first SACK block of the next ACK, once; when the duplicate lies inside an
//!   out-of-order block, that block comes second (RFC 2883 §4). The D-SACK takes one
//!   of the 3 blocks (Linux `tcp_dsack_set`, `tcp_dsack_extend`).
//! - DCTCP feedback (RFC 8257 §3.2, Linux `dctcp_ece_ack_update`), when the flow's
//!   congestion control needs ECN: ECE reflects the CE state of the latest data
//!   segment exactly. When that state changes, an ACK delayed so far is sent first
//!   with the old ECE value, and the segment that changed it is ACKed at once.

use super::config::TcpConfig;
use super::quickack::{LinuxAckTiming, TCP_MAX_QUICKACKS};
use super::{LazyTimer, Outbox, Segment, TimerKind};
use crate::net::packet::{Ecn, SackBlock, TcpHeader, FLAG_ACK, FLAG_ECE, FLAG_SYN};
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
    /// ECN negotiated (the SYN asked for it).
    ecn_ok: bool,
    /// Echo ECE on every ACK (RFC 3168 `TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// Segments still to ACK at once after a CE (Linux quick-ACK mode).
    quick_acks: u32,
    /// DCTCP per-packet CE echo (RFC 8257 §3.2) and the CE state of the last segment.
    per_packet_ce_echo: bool,
    ce_state: bool,
    /// Report duplicates with D-SACK (RFC 2883), and the range to report next.
    dsack: bool,
    pending_dsack: Option<SackBlock>,
    /// Linux's quick-ACK mode and adaptive ato (`quickack`), and when the SYN-ACK
    /// left (its RTT sample, once, for a SYN answered once).
    linux_ack: Option<LinuxAckTiming>,
    synack_at: Option<SimTime>,
    synacks: u32,
    /// Under the `linux` ACK timing with timestamps, ACKs carry a TSval (the time they
    /// leave + 1 ns) for the sender to echo (`tcp_rcv_rtt_measure_ts`).
    send_ts: bool,
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
            ecn_ok: false,
            demand_cwr: false,
            quick_acks: 0,
            per_packet_ce_echo: false,
            ce_state: false,
            dsack: cfg.dsack && cfg.sack,
            pending_dsack: None,
            linux_ack: cfg
                .quickack
                .then(|| LinuxAckTiming::new(cfg.mss, cfg.advertised_window(), cfg.delack_timeout)),
            synack_at: None,
            synacks: 0,
            send_ts: cfg.quickack && cfg.timestamps,
        }
    }

    /// Heap bytes held: the out-of-order ranges and the SACK report order, each
    /// grown to its peak length (nothing is sized by the receive buffer).
    pub fn heap_bytes(&self) -> usize {
        (self.ooo.capacity() + self.sack_order.capacity()) * std::mem::size_of::<SackBlock>()
    }

    /// Echo CE per packet (DCTCP, RFC 8257 §3.2) instead of RFC 3168's latch.
    pub fn set_per_packet_ce_echo(&mut self, on: bool) {
        self.per_packet_ce_echo = on;
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

    /// The peer's SYN arrived as the SYN-ACK of a connection this host opened: the
    /// peer's data starts at sequence number 1. Nothing is sent (the host's own
    /// segments acknowledge the SYN).
    pub fn on_peer_syn(&mut self) {
        self.syn_received = true;
        self.rcv_nxt = self.rcv_nxt.max(1);
    }

    /// A data segment of the host's own sender carries this receiver's ACK
    /// (piggybacking, RFC 9293 §3.10.7.4): the ACK number, the window and the echoed
    /// timestamp to write in its header. The pending ACK and its delayed-ACK timer are
    /// no longer needed. The window is chosen as for a pure ACK ([`Self::offered_window`]),
    /// and under the `linux` ACK timing the segment counts against quick-ACK mode, as
    /// every segment with ACK set does in Linux (`__tcp_transmit_skb` calls
    /// `tcp_select_window`, then `tcp_event_ack_sent`).
    pub fn piggyback_ack(&mut self) -> (u64, u64, u64) {
        let wnd = self.offered_window();
        if let Some(a) = self.linux_ack.as_mut() {
            a.on_ack_sent();
        }
        self.unacked_segments = 0;
        self.delack.cancel();
        self.last_ack_sent = self.rcv_nxt;
        (self.rcv_nxt, wnd, self.ts_recent)
    }

    /// The window a segment acknowledging data offers now, bytes: Linux's
    /// `tcp_select_window` under the `linux` ACK timing (tcp/quickack.rs), else the
    /// buffer less the out-of-order bytes it holds.
    fn offered_window(&mut self) -> u64 {
        match self.linux_ack.as_mut() {
            Some(a) => a.select_window(self.rcv_nxt, self.ooo_bytes),
            None => self.adv_window.saturating_sub(self.ooo_bytes),
        }
    }

    /// Processes an arriving segment from the sender (a Not-ECT packet).
    pub fn on_segment(&mut self, hdr: &TcpHeader, now: SimTime, out: &mut Outbox) -> Arrival {
        self.on_segment_ecn(hdr, Ecn::NotEct, now, out)
    }

    /// Processes an arriving segment whose IP header carried `ecn`.
    pub fn on_segment_ecn(&mut self, hdr: &TcpHeader, ecn: Ecn, now: SimTime, out: &mut Outbox) -> Arrival {
        let mut arrival = Arrival::default();
        if hdr.is_syn() {
            // SYN occupies sequence number 0; answer (again) with a SYN-ACK, with ECE
            // if the SYN asked for ECN (RFC 3168 §6.1.1).
            self.syn_received = true;
            self.rcv_nxt = self.rcv_nxt.max(1);
            self.ecn_ok = hdr.is_ece() && hdr.is_cwr();
            let flags = if self.ecn_ok { FLAG_SYN | FLAG_ACK | FLAG_ECE } else { FLAG_SYN | FLAG_ACK };
            self.send_ack(flags, now, out);
            self.synack_at = Some(now);
            self.synacks += 1;
            return arrival;
        }
        // ECN feedback (and the quick ACKs after a CE) only on ECN-capable connections.
        let ack_now = self.ecn_ok && (self.on_ecn(hdr, ecn, now, out) || self.quick_acks > 0);
        let start = hdr.seq;
        let end = hdr.seq + hdr.len as u64 + hdr.is_fin() as u64;
        if start <= self.last_ack_sent && hdr.ts_val >= self.ts_recent {
            self.ts_recent = hdr.ts_val; // RFC 7323 §4.3 (2)
        }
        if let (Some(a), true) = (self.linux_ack.as_mut(), hdr.len > 0 && hdr.ts_ecr > 0) {
            a.on_ts_echo(now, hdr.ts_ecr, hdr.len as u64);
        }
        if let (Some(a), Some(at)) = (self.linux_ack.as_mut(), self.synack_at.take()) {
            if self.synacks == 1 {
                a.on_rtt_sample(now - at); // tcp_synack_rtt_meas
            }
        }
        if end <= self.rcv_nxt {
            // Entirely old: a duplicate (spurious retransmission). ACK at once so the
            // sender learns the state (RFC 5681 §4.2); Linux also enters quick-ACK
            // mode (`tcp_data_queue`).
            if end > start {
                self.note_dsack(start, end);
                if let Some(a) = self.linux_ack.as_mut() {
                    a.enter_quickack_mode(TCP_MAX_QUICKACKS);
                }
            }
            self.send_ack(FLAG_ACK, now, out);
            return arrival;
        }
        if hdr.is_fin() {
            self.fin_seq = Some(end - 1);
        }
        let had_gap = !self.ooo.is_empty();
        // Parts of this segment already held out of order are duplicates (D-SACK).
        // The held ranges are sorted and disjoint: the first that ends above `start`
        // is the only candidate for the first overlap.
        if self.dsack {
            let k = self.ooo.partition_point(|o| o.end <= start);
            if let Some(o) = self.ooo.get(k).filter(|o| o.start < end) {
                self.note_dsack(start.max(o.start), end.min(o.end));
            }
        }
        if start <= self.rcv_nxt {
            if self.dsack && start < self.rcv_nxt {
                self.note_dsack(start, self.rcv_nxt);
            }
            let before = self.rcv_nxt;
            self.rcv_nxt = end;
            // Pull in buffered ranges that are now contiguous (removed together: one
            // shift of the list, not one per range).
            let mut pulled = 0;
            for b in &self.ooo {
                if b.start > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b.end);
                self.ooo_bytes -= b.end - b.start;
                pulled += 1;
            }
            self.ooo.drain(..pulled);
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
            let mut quick = false;
            if let Some(a) = self.linux_ack.as_mut() {
                if hdr.len > 0 {
                    let ooo_reach = self.ooo.last().map_or(0, |o| o.end.saturating_sub(self.rcv_nxt));
                    a.on_data(hdr.len as u64, now, self.delivered, self.ooo_bytes, ooo_reach);
                }
                quick = a.in_quickack_mode();
            }
            let immediate = had_gap
                || quick
                || ack_now
                || !self.delayed_ack
                || (self.daass && hdr.ss_hint)
                || self.fin_received
                || self.unacked_segments >= self.delack_segments;
            if immediate {
                self.send_ack(FLAG_ACK, now, out);
            } else if let Some(a) = self.linux_ack.as_ref() {
                match self.delack.deadline() {
                    Some(d) if a.about_to_expire(d, now) => self.send_ack(FLAG_ACK, now, out),
                    Some(_) => {}
                    None => {
                        let ato = a.delack_timeout();
                        self.delack.arm(TimerKind::DelAck, now + ato, out);
                    }
                }
            } else if self.delack.deadline().is_none() {
                self.delack.arm(TimerKind::DelAck, now + self.delack_timeout, out);
            }
        } else {
            // Out of order: buffer, ACK immediately with SACK (RFC 5681 §4.2, RFC 2018 §4).
            let blk = self.insert_ooo(SackBlock { start, end });
            self.note_recent(blk);
            if let Some(a) = self.linux_ack.as_mut() {
                let ooo_reach = self.ooo.last().map_or(0, |o| o.end.saturating_sub(self.rcv_nxt));
                a.on_out_of_order(hdr.len as u64, self.ooo_bytes, ooo_reach, self.sack);
            }
            self.send_ack(FLAG_ACK, now, out);
        }
        arrival
    }

    /// The ECN feedback of an arriving data segment; true if it must be ACKed at once.
    fn on_ecn(&mut self, hdr: &TcpHeader, ecn: Ecn, now: SimTime, out: &mut Outbox) -> bool {
        let has_data = hdr.len > 0 || hdr.is_fin();
        let ce = ecn == Ecn::Ce;
        if self.per_packet_ce_echo {
            if !has_data || ce == self.ce_state {
                return false;
            }
            // The CE state changed: ACK what was held with the old ECE value first.
            if self.unacked_segments > 0 {
                self.send_ack(FLAG_ACK, now, out);
            }
            self.ce_state = ce;
            self.demand_cwr = ce;
            return true;
        }
        let mut now = false;
        if hdr.is_cwr() {
            // The sender reduced its window: stop echoing (RFC 3168 §6.1.3).
            self.demand_cwr = false;
            now = has_data;
        }
        if ce {
            if !self.demand_cwr {
                self.quick_acks = 2;
                now = true;
            }
            self.demand_cwr = true;
        }
        now
    }

    /// The delayed-ACK timer event of generation `gen`.
    pub fn on_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox) {
        if self.delack.fire(TimerKind::DelAck, gen, now, out) && self.unacked_segments > 0 {
            if let Some(a) = self.linux_ack.as_mut() {
                a.on_delack_timer();
            }
            self.send_ack(FLAG_ACK, now, out);
        }
    }

    fn insert_ooo(&mut self, mut b: SackBlock) -> SackBlock {
        // Merge with every overlapping or adjacent range; keep the list sorted. Ranges
        // ending before `b` starts stay as they are: skip them by binary search (with
        // large windows and many holes the list is long, and new data lands at its end).
        let i = self.ooo.partition_point(|o| o.end < b.start);
        while i < self.ooo.len() {
            let o = self.ooo[i];
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

    /// Remembers [start, end) as duplicate data for the next ACK's D-SACK block,
    /// extending a pending one it touches (Linux `tcp_dsack_extend`).
    fn note_dsack(&mut self, start: u64, end: u64) {
        if !self.dsack || start >= end {
            return;
        }
        self.pending_dsack = Some(match self.pending_dsack {
            Some(d) if d.start <= end && start <= d.end => SackBlock { start: d.start.min(start), end: d.end.max(end) },
            Some(d) => d,
            None => SackBlock { start, end },
        });
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
            // Re-read the current extent of each reported block: the held range (sorted,
            // disjoint) that contains its start, if any.
            let k = ooo.partition_point(|c| c.end <= o.start);
            if let Some(cur) = ooo.get(k).filter(|c| c.start <= o.start) {
                *o = *cur;
            }
        }
    }

    fn send_ack(&mut self, mut flags: u8, now: SimTime, out: &mut Outbox) {
        if self.ecn_ok {
            if flags & FLAG_SYN == 0 && self.demand_cwr {
                flags |= FLAG_ECE;
            }
            self.quick_acks = self.quick_acks.saturating_sub(1);
        }
        // The window is chosen as the header is built (Linux `tcp_select_window` in
        // `__tcp_transmit_skb`), before the ACK counts against quick-ACK mode.
        let wnd = match self.linux_ack.as_mut() {
            Some(a) if flags & FLAG_SYN != 0 => a.initial_window(self.rcv_nxt),
            _ => self.offered_window(),
        };
        if flags & FLAG_SYN == 0 {
            if let Some(a) = self.linux_ack.as_mut() {
                a.on_ack_sent();
            }
        }
        self.unacked_segments = 0;
        self.delack.cancel();
        self.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        let mut hdr = TcpHeader {
            seq: 0,
            ack: self.rcv_nxt,
            len: 0,
            flags,
            wnd,
            ts_ecr: self.ts_recent,
            ts_val: if self.send_ts { now.0 + 1 } else { 0 },
            ..Default::default()
        };
        if self.sack && flags & FLAG_SYN == 0 && self.pending_dsack.is_none() {
            let n = self.sack_order.len().min(SACK_BLOCKS_PER_ACK);
            hdr.sack[..n].copy_from_slice(&self.sack_order[..n]);
            hdr.nsack = n as u8;
        } else if self.sack && flags & FLAG_SYN == 0 {
            let mut n = 0;
            let mut containing = None;
            if let Some(d) = self.pending_dsack.take() {
                // RFC 2883 §4: the D-SACK first, then the block containing it if any.
                hdr.sack[0] = d;
                n = 1;
                containing = self.ooo.iter().find(|o| o.start <= d.start && d.end <= o.end).copied();
                if let Some(c) = containing {
                    hdr.sack[1] = c;
                    n = 2;
                }
            }
            for b in &self.sack_order {
                if n == SACK_BLOCKS_PER_ACK {
                    break;
                }
                if containing == Some(*b) {
                    continue;
                }
                hdr.sack[n] = *b;
                n += 1;
            }
            hdr.nsack = n as u8;
        }
        // SACK option: kind + length (2 bytes) + 8 bytes per block, padded to 4 bytes.
        let opt = if hdr.nsack > 0 { (2 + 8 * hdr.nsack as u32).div_ceil(4) * 4 } else { 0 };
        out.segments.push(Segment { hdr, size: self.header_bytes + opt, ecn: Ecn::NotEct });
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

    /// A profile's receiver; `linux` here is the RFC 5681 receiver these tests work
    /// by hand (a fixed delayed-ACK timer, 40-byte headers): its quick-ACK mode and
    /// timestamps are off (`quickack`'s own tests are in `tests_quickack`).
    fn cfg_of(profile: &str) -> TcpConfig {
        let mut cfg = TcpConfig::profile(profile).unwrap();
        if profile == "linux" {
            cfg.quickack = false;
            cfg.header_bytes = 40;
            cfg.mss = 1460;
        }
        cfg
    }

    fn rx(profile: &str) -> (TcpReceiver, Outbox) {
        let mut r = TcpReceiver::new(&cfg_of(profile));
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

    fn ecn_rx(per_packet: bool) -> (TcpReceiver, Outbox) {
        let mut r = TcpReceiver::new(&cfg_of("linux"));
        r.set_per_packet_ce_echo(per_packet);
        let mut out = Outbox::default();
        let syn = TcpHeader { flags: FLAG_SYN | crate::net::packet::FLAG_ECE | crate::net::packet::FLAG_CWR, ..Default::default() };
        r.on_segment(&syn, SimTime(0), &mut out);
        // RFC 3168 §6.1.1: the SYN-ACK of an ECN-setup SYN carries ECE, not CWR.
        assert!(out.segments[0].hdr.is_ece() && !out.segments[0].hdr.is_cwr());
        out.clear();
        (r, out)
    }

    #[test]
    fn ce_is_echoed_until_cwr() {
        // Delayed ACKs (linux profile). Segment 1 CE: ACKed at once with ECE (quick
        // ACK). Segment 2 (not CE): still in quick-ACK mode, ACKed at once, ECE.
        // Segments 3-4: one delayed ACK for both, ECE still latched. Segment 5 with
        // CWR: ACKed at once, no ECE.
        let (mut r, mut out) = ecn_rx(false);
        let mss = 1000;
        let seg = |k: u64| data(1 + k * mss, mss as u32);
        r.on_segment_ecn(&seg(0), Ecn::Ce, SimTime(1), &mut out);
        r.on_segment_ecn(&seg(1), Ecn::Ect0, SimTime(2), &mut out);
        assert_eq!(out.segments.len(), 2);
        assert!(out.segments.iter().all(|s| s.hdr.is_ece()));
        out.clear();
        r.on_segment_ecn(&seg(2), Ecn::Ect0, SimTime(3), &mut out);
        assert!(out.segments.is_empty());
        r.on_segment_ecn(&seg(3), Ecn::Ect0, SimTime(4), &mut out);
        assert!(out.segments.len() == 1 && out.segments[0].hdr.is_ece());
        out.clear();
        let mut cwr = seg(4);
        cwr.flags |= crate::net::packet::FLAG_CWR;
        r.on_segment_ecn(&cwr, Ecn::Ect0, SimTime(5), &mut out);
        assert!(out.segments.len() == 1 && !out.segments[0].hdr.is_ece());
    }

    #[test]
    fn dctcp_echo_follows_each_packet_and_flushes_on_change() {
        // RFC 8257 §3.2: segments 1 (not CE) is held by the delayed ACK; segment 2
        // (CE) changes the state: the held ACK (ack 1001) goes out without ECE, then
        // segment 2 is ACKed at once (ack 2001) with ECE. Segment 3 (CE) is held;
        // segment 4 (not CE) flushes it with ECE (ack 3001), then ACKs itself without.
        let (mut r, mut out) = ecn_rx(true);
        let seg = |k: u64| data(1 + k * 1000, 1000);
        r.on_segment_ecn(&seg(0), Ecn::Ect0, SimTime(1), &mut out);
        assert!(out.segments.is_empty());
        r.on_segment_ecn(&seg(1), Ecn::Ce, SimTime(2), &mut out);
        let got: Vec<(u64, bool)> = out.segments.iter().map(|s| (s.hdr.ack, s.hdr.is_ece())).collect();
        assert_eq!(got, [(1001, false), (2001, true)]);
        out.clear();
        r.on_segment_ecn(&seg(2), Ecn::Ce, SimTime(3), &mut out);
        assert!(out.segments.is_empty());
        r.on_segment_ecn(&seg(3), Ecn::Ect0, SimTime(4), &mut out);
        let got: Vec<(u64, bool)> = out.segments.iter().map(|s| (s.hdr.ack, s.hdr.is_ece())).collect();
        assert_eq!(got, [(3001, true), (4001, false)]);
    }

    /// Random arrivals (reordered, duplicated, overlapping) against a byte map: rcv_nxt
    /// is the first byte not received, the held ranges are exactly the maximal runs of
    /// bytes received above it (so sorted, disjoint and apart) and add up to the
    /// buffered count, and each ACK's SACK blocks (after a D-SACK block, if any) are
    /// held ranges, the first holding the segment that triggered it (RFC 2018 §4).
    #[test]
    fn out_of_order_ranges_match_a_byte_map() {
        let mut rng = crate::rng::RngStream::new(11, "receiver-ooo");
        for _ in 0..200 {
            let mut cfg = TcpConfig::profile("linux").unwrap();
            cfg.dsack = rng.uniform() < 0.5;
            let mut r = TcpReceiver::new(&cfg);
            let mut out = Outbox::default();
            r.on_segment(&TcpHeader { flags: FLAG_SYN, ..Default::default() }, SimTime(0), &mut out);
            let span = 400u64;
            let mut got = vec![false; span as usize + 200];
            got[0] = true; // the SYN's sequence number
            for t in 1..300u64 {
                let seq = rng.uniform_u64(1, span);
                let len = rng.uniform_u64(1, 30);
                out.clear();
                r.on_segment(&data(seq, len as u32), SimTime(t), &mut out);
                for b in seq..seq + len {
                    got[b as usize] = true;
                }
                let rcv_nxt = got.iter().position(|&g| !g).unwrap() as u64;
                assert_eq!(r.rcv_nxt, rcv_nxt);
                // The held ranges: exactly the received bytes above rcv_nxt, as maximal runs.
                let mut want = Vec::new();
                let mut b = rcv_nxt;
                while b < got.len() as u64 {
                    if got[b as usize] {
                        let e = (b..got.len() as u64).find(|&x| !got[x as usize]).unwrap();
                        want.push(SackBlock { start: b, end: e });
                        b = e;
                    } else {
                        b += 1;
                    }
                }
                assert_eq!(r.ooo, want);
                assert_eq!(r.ooo_bytes, want.iter().map(|o| o.end - o.start).sum::<u64>());
                let Some(ack) = out.segments.last().map(|s| s.hdr) else { continue };
                let blocks = ack.sack_blocks();
                let skip_dsack = blocks.first().is_some_and(|d| d.end <= ack.ack || blocks.get(1).is_some_and(|n| n.start <= d.start && d.end <= n.end));
                let sack = if skip_dsack { &blocks[1..] } else { blocks };
                for blk in sack {
                    assert!(want.contains(blk), "{blk:?} not a held range {want:?}");
                }
                if seq > rcv_nxt && !sack.is_empty() {
                    assert!(sack[0].start <= seq && seq < sack[0].end);
                }
            }
        }
    }

    #[test]
    fn dsack_reports_duplicates_once() {
        let mut cfg = TcpConfig::profile("ns2-sack").unwrap();
        cfg.dsack = true;
        let mut r = TcpReceiver::new(&cfg);
        let mut out = Outbox::default();
        r.on_segment(&TcpHeader { flags: FLAG_SYN, ..Default::default() }, SimTime(0), &mut out);
        out.clear();
        r.on_segment(&data(1, 100), SimTime(1), &mut out);
        // A duplicate below rcv_nxt: the next ACK's first block is it (ack 101).
        r.on_segment(&data(1, 100), SimTime(2), &mut out);
        let h = out.segments.last().unwrap().hdr;
        assert_eq!((h.ack, h.sack_blocks()), (101, &[SackBlock { start: 1, end: 101 }][..]));
        // Out of order [201, 301), then a duplicate of it: D-SACK, then the block
        // holding it; the following ACK has no D-SACK any more.
        r.on_segment(&data(201, 100), SimTime(3), &mut out);
        r.on_segment(&data(201, 100), SimTime(4), &mut out);
        let h = out.segments.last().unwrap().hdr;
        assert_eq!(h.sack_blocks(), &[SackBlock { start: 201, end: 301 }, SackBlock { start: 201, end: 301 }]);
        r.on_segment(&data(401, 100), SimTime(5), &mut out);
        let h = out.segments.last().unwrap().hdr;
        assert_eq!(h.sack_blocks(), &[SackBlock { start: 401, end: 501 }, SackBlock { start: 201, end: 301 }]);
        // Without the knob (ns2-sack's default) no D-SACK.
        let (mut r, mut out) = rx("ns2-sack");
        r.on_segment(&data(1, 100), SimTime(1), &mut out);
        r.on_segment(&data(1, 100), SimTime(2), &mut out);
        assert_eq!(out.segments.last().unwrap().hdr.nsack, 0);
    }
}

#[cfg(test)]
mod tests_quickack {
    use super::*;
    use crate::tcp::config::TcpConfig;

    fn seg(seq: u64) -> TcpHeader {
        TcpHeader { seq, len: 1448, flags: FLAG_ACK, ..Default::default() }
    }

    /// The `linux` receiver: SYN at 0, SYN-ACK then; the first segment arrives 40 ms
    /// later (the handshake RTT: receiver RTO 40 + max(80, 200) = 240 ms). Linux
    /// `tcp_event_data_recv` enters quick-ACK mode with min(rcv_wnd / (2 rcv_mss), 16)
    /// = 14480 / 2896 = 5 ACKs, and each segment that grows the window (the first 18
    /// at the 128 KB initial buffer, `tcp_grow_window`) sets `quick |= 1`: segments 1-8
    /// are each ACKed at once. An RFC 5681 receiver (`quickack` off) ACKs segments 2, 4,
    /// 6 and 8 only.
    #[test]
    fn first_segments_are_each_acked_then_every_second() {
        for quick in [true, false] {
            let mut cfg = TcpConfig::profile("linux").unwrap();
            cfg.quickack = quick;
            let mut r = TcpReceiver::new(&cfg);
            let mut out = Outbox::default();
            r.on_segment(&TcpHeader { flags: FLAG_SYN, ..Default::default() }, SimTime(0), &mut out);
            out.clear();
            let mut acked = vec![];
            for k in 0..8u64 {
                let n = out.segments.len();
                r.on_segment(&seg(1 + k * 1448), SimTime(40_000_000 + k * 100_000), &mut out);
                if out.segments.len() > n {
                    acked.push(k + 1);
                }
            }
            if quick {
                assert_eq!(acked, vec![1, 2, 3, 4, 5, 6, 7, 8]);
            } else {
                assert_eq!(acked, vec![2, 4, 6, 8]);
            }
        }
    }

    /// An ACK carried on a data segment (the RPC application's responses) offers the
    /// window a pure ACK would offer in the same state, and counts against quick-ACK
    /// mode like one: Linux builds both headers in `__tcp_transmit_skb`, which calls
    /// `tcp_select_window`, then `tcp_event_ack_sent`. Segments 1-2 arrive in order and
    /// 4 out of order; rcv_ssthresh grows from the SYN-ACK's 65,160 by 2 x 1448 per
    /// segment (`tcp_grow_window`; 70,952 after two, as measured on the kernel) to
    /// 73,848, offered rounded up to 128 B: 73,856, not the buffer less the
    /// out-of-order bytes.
    #[test]
    fn a_piggybacked_ack_offers_the_window_of_a_pure_ack() {
        let cfg = TcpConfig::profile("linux").unwrap();
        let fed = || {
            let mut r = TcpReceiver::new(&cfg);
            let mut out = Outbox::default();
            r.on_segment(&TcpHeader { flags: FLAG_SYN, ..Default::default() }, SimTime(0), &mut out);
            for (k, seq) in [1, 1 + 1448, 1 + 3 * 1448].into_iter().enumerate() {
                r.on_segment(&seg(seq), SimTime(40_000_000 + k as u64 * 100_000), &mut out);
            }
            r
        };
        let (mut pure, mut carried) = (fed(), fed());
        let mut out = Outbox::default();
        pure.send_ack(FLAG_ACK, SimTime(40_300_000), &mut out);
        let (ack, wnd, _) = carried.piggyback_ack();
        assert_eq!((ack, wnd), (out.segments[0].hdr.ack, out.segments[0].hdr.wnd));
        assert_eq!(ack, 1 + 2 * 1448);
        assert_eq!(wnd, 73_856);
        assert!(wnd < carried.adv_window - carried.ooo_bytes);
        let quick = |r: &TcpReceiver| r.linux_ack.as_ref().unwrap().quick();
        assert_eq!(quick(&carried), quick(&pure));
    }

    /// A duplicate segment (`tcp_data_queue`'s retransmit case) enters quick-ACK
    /// mode with `TCP_MAX_QUICKACKS`, bounded by rcv_wnd / (2 rcv_mss): after 20
    /// segments the window stopped at 65536 B (the initial buffer's half, reached on
    /// the 18th), so 22, capped at 16. Of the first segment's 5 quick ACKs, kept at 5
    /// while the window grew, 2 are left after segments 19 and 20.
    #[test]
    fn a_duplicate_enters_quickack_mode() {
        let cfg = TcpConfig::profile("linux").unwrap();
        let mut r = TcpReceiver::new(&cfg);
        let mut out = Outbox::default();
        r.on_segment(&TcpHeader { flags: FLAG_SYN, ..Default::default() }, SimTime(0), &mut out);
        for k in 0..20u64 {
            r.on_segment(&seg(1 + k * 1448), SimTime(40_000_000 + k * 100_000), &mut out);
        }
        assert_eq!(r.linux_ack.as_ref().unwrap().quick(), 2);
        r.on_segment(&seg(1), SimTime(50_000_000), &mut out);
        assert_eq!(r.linux_ack.as_ref().unwrap().quick(), 15, "16, less the duplicate's own ACK");
        out.clear();
        for k in 20..36u64 {
            r.on_segment(&seg(1 + k * 1448), SimTime(50_000_000 + k * 100_000), &mut out);
        }
        // 15 segments each ACKed at once, then every second.
        assert_eq!(out.segments.len(), 15);
    }
}
