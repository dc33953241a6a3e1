//! Linux's receiver ACK timing: quick-ACK mode and the adaptive delayed-ACK timeout.
//!
//! With `quickack` (the `linux` profile) the receiver follows net/ipv4/tcp_input.c,
//! tcp_output.c and tcp_timer.c of Linux 6.x, in jiffies of 1 ms (`HZ` = 1000):
//!
//! - **Quick-ACK mode** (`tcp_in_quickack_mode`): while `quick` > 0 every data segment
//!   is ACKed at once, and each ACK sent for data lowers `quick` by one
//!   (`tcp_dec_quickack_mode`); leaving the mode resets ato to `TCP_ATO_MIN`.
//!   `tcp_incr_quickack(max)` raises `quick` to `rcv_wnd / (2 * rcv_mss)` (2 if that
//!   is 0), at most `max`; `tcp_enter_quickack_mode(max)` does that and resets ato.
//!   It is entered with `TCP_MAX_QUICKACKS` = 16 on the first data segment
//!   (`tcp_event_data_recv`, ato still 0), after a silence longer than the receiver's
//!   RTO, and when a duplicate segment arrives (`tcp_data_queue`'s "retransmit"
//!   case).
//! - **Adaptive ato** (`tcp_event_data_recv`): with m the time since the last data
//!   segment, m <= `TCP_ATO_MIN`/2 gives ato = ato/2 + `TCP_ATO_MIN`/2; m < ato gives
//!   ato = ato/2 + m, at most the RTO. A delayed-ACK timer that fires with an ACK
//!   due doubles ato, at most the RTO (`tcp_delack_timer_handler`).
//! - **The timer** (`tcp_send_delayed_ack`): ato, and when ato exceeds
//!   `TCP_DELACK_MIN` no more than max(SRTT, `TCP_DELACK_MIN`) nor `HZ/2`, and never
//!   more than `TCP_DELACK_MAX` = 200 ms. An earlier deadline already set stands; one
//!   within ato/4 of now sends the ACK at once.
//!
//! `TCP_ATO_MIN` = `TCP_DELACK_MIN` = 40 ms is the profile's `delack_timeout`. The
//! receiver's RTO and SRTT come from its one RTT sample, SYN-ACK to the first
//! segment (`tcp_synack_rtt_meas`; `tcp_rtt_estimator`'s first sample gives SRTT = m,
//! RTO = m + max(2m, 200 ms)). `rcv_mss` starts at `TCP_MSS_DEFAULT` = 536 and follows
//! the largest segment seen (`tcp_initialize_rcv_mss`, `tcp_measure_rcv_mss`).
//!
//! - **The window's growth sets quick-ACK** (`tcp_grow_window`): `rcv_ssthresh` starts
//!   at the SYN-ACK's window, 65,160 bytes (`tcp_select_initial_window`: half the
//!   128 KB buffer, in whole segments; Linux 6.18 measured: 70,952 after two
//!   segments). Each in-order segment of 128 bytes or more, while `room` = min(`window_clamp`,
//!   `tcp_space`) - `rcv_ssthresh` is positive, adds min(room, max(2 advmss, 2 len)) and
//!   sets `quick |= 1`: while the window grows, every segment is ACKed at once. In slow
//!   start that halves the ACK spacing, which is what lets CUBIC's HyStart ACK train
//!   (2 ms `hystart_ack_delta_us`) fire at 10 Mbit/s: delayed ACKs two segments apart
//!   are 2.4 ms apart.
//! - **Receive-buffer autotuning** (dynamic right-sizing, `tcp_rcv_space_adjust` and
//!   `tcp_rcvbuf_grow` of Linux 6.18): the buffer starts at `tcp_rmem[1]` = 128 KB.
//!   Once per receiver RTT, if the bytes delivered to the application in the last RTT
//!   (`copied`) exceed the previous measurement (`space`), rcvwin = 2 copied + 4 copied
//!   (copied - space) / space, plus the bytes from rcv_nxt to the end of the
//!   out-of-order queue, and the buffer becomes max(buffer, min(rcvwin's buffer,
//!   `tcp_rmem[2]` = 6 MB)). `window_clamp` = the buffer's window
//!   (`tcp_win_from_space`); `tcp_space` = the window of the buffer less the
//!   out-of-order queue's memory. The application reads every in-order byte at once,
//!   so only out-of-order data occupies the buffer.
//! - **The receiver's RTT** (`tcp_rcv_rtt_measure_ts`, `tcp_rcv_rtt_update`): with
//!   timestamps, each data segment of at least `rcv_mss` that echoes a new TSval of
//!   the receiver's gives the sample now - TSecr (1 ms clock; under 1 ms is no sample).
//!   A smaller sample is taken at once, a larger one moves the estimate by 1/8. The
//!   sample includes the queueing the data met, so in slow start each autotuning
//!   measurement covers more than the base RTT: on the loss grid's 44 ms path the
//!   estimate reaches 104 ms as the 50-packet queue fills, as the kernel's `rcv_rtt`
//!   does (`docs/validation.md`, "The receiver's RTT from timestamps"). Without
//!   timestamps the handshake's RTT stands in (Linux then times a window's worth of
//!   data, `tcp_rcv_rtt_measure`, left out).
//! - **Out-of-order segments grow the window and the buffer** (`tcp_data_queue_ofo`
//!   calls `tcp_grow_window` on SACK connections, then, on every connection,
//!   `tcp_rcvbuf_grow(sk, rcvq_space.space)`: since Linux 6.16 the buffer is
//!   provisioned for twice the last measurement plus the out-of-order queue's reach
//!   at every out-of-order arrival, not only at the once-per-RTT measurement, which
//!   a stalled rcv_nxt never reaches). During a long recovery the window therefore
//!   keeps pace with the data the sender has out; where the buffer is capped (the
//!   profile's advertised window) the queue's memory leaves no room and the right edge
//!   stays put, so the sender stops (`tcp_select_window`, next).
//! - **The offered window** (`tcp_select_window`): the free space, at most
//!   `rcv_ssthresh`, rounded up to the window scale's unit (2^7); its right edge never
//!   moves back. Free space under half the buffer's window ends quick-ACK mode.
//!   Quick-ACK mode's length divides this offered window by 2 `rcv_mss`
//!   (`tcp_incr_quickack`); Linux's zero window (free space under 1/16 of the buffer or
//!   one MSS) is left out.
//!
//! Choices of tcplab's, named: window bytes are 157/256 of buffer bytes both ways
//! once data arrives (`scaling_ratio`: Linux measures len/truesize per segment; on the
//! emulator's path Linux 6.18 showed 157/256 at the start, 80,480 of 131,072, and
//! about 0.52 at 6 MB later); the SYN-ACK's window uses the default 128/256
//! (`TCP_DEFAULT_SCALING_RATIO`);
//! the window never exceeds the profile's advertised window (`rcv_buffer`); the
//! application reads each byte the moment it is in order (Linux's reader wakes later,
//! and `tcp_rcv_space_adjust` counts only what it has copied).
//!
//! Left out: SACK compression (`tcp_sack_compress`: past the third duplicate ACK for
//! one rcv_nxt, out-of-order ACKs are held up to min(RTT/20, 1 ms)); ping-pong
//! (interactive) mode, which a one-way transfer never enters.

use super::rtt::tsopt_rtt;
use crate::time::{SimDuration, SimTime};

/// `TCP_MAX_QUICKACKS`.
pub const TCP_MAX_QUICKACKS: u32 = 16;
/// `TCP_DELACK_MAX` (HZ/5), ms.
const DELACK_MAX_MS: u64 = 200;
/// `TCP_RTO_MIN` (HZ/5), ms.
const RTO_MIN_MS: u64 = 200;
/// `TCP_MSS_DEFAULT`.
const MSS_DEFAULT: u64 = 536;
/// `TCP_INIT_CWND`, segments: the first autotuning measurement is at most this many
/// (`tcp_init_buffer_space`).
const INIT_RCVWND: u64 = 10;
/// `tcp_rmem[1]`: the receive buffer a connection starts with, bytes.
const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`: the largest buffer autotuning gives, bytes.
const RMEM_MAX: u64 = 6_291_456;

/// `rcv_wscale`: the smallest shift that lets `tcp_rmem[2]` fit the 16-bit window field
/// (`tcp_select_initial_window`); advertised windows are whole multiples of 2^7 bytes.
const RCV_WSCALE: u32 = 7;

/// `TCP_DEFAULT_SCALING_RATIO`, in 1/256: the ratio of window to buffer bytes before
/// the receiver has measured a segment (the SYN-ACK's window).
const DEFAULT_SCALING_RATIO: u64 = 128;
/// `scaling_ratio` once segments arrive (`tcp_measure_rcv_mss`: len / truesize, in
/// 1/256): 157 is what Linux 6.18 measured on the emulator's path for 1448-byte
/// segments (its first window clamp, 80,480 of a 131,072-byte buffer); a choice of
/// tcplab's, since the ratio depends on the driver's buffers (module doc).
const SCALING_RATIO: u64 = 157;

/// `tcp_win_from_space` with `scaling_ratio` = 157/256.
fn win_from_space(space: u64) -> u64 {
    space * SCALING_RATIO / 256
}

/// `tcp_space_from_win`, its inverse.
fn space_from_win(win: u64) -> u64 {
    (win * 256).div_ceil(SCALING_RATIO)
}

/// The SYN-ACK's window (`tcp_select_initial_window`): the starting buffer's window at
/// the default ratio, rounded down to whole segments, at most 65,535 (a SYN's window
/// is not scaled). 131,072 / 2 = 65,536 gives 45 segments of 1448, 65,160 bytes.
fn initial_offer(advmss: u64, max_wnd: u64) -> u64 {
    let space = (RMEM_DEFAULT * DEFAULT_SCALING_RATIO / 256).min(max_wnd);
    let w = if space > advmss { space / advmss * advmss } else { space };
    w.min(65_535)
}

/// Linux receiver ACK state of one connection.
#[derive(Clone, Debug)]
pub struct LinuxAckTiming {
    /// `TCP_ATO_MIN` (= `TCP_DELACK_MIN`), ms.
    ato_min: u64,
    /// Current ato, ms; 0 until the first data segment.
    ato: u64,
    lrcvtime_ms: u64,
    quick: u32,
    /// `rcv_ssthresh`: the window the receiver lets grow (bytes).
    rcv_wnd: u64,
    /// Linux `rcv_wnd` and `rcv_wup`: the window last offered (bytes) and the rcv_nxt
    /// it was offered from, so its right edge is `offered_from + offered`.
    offered: u64,
    offered_from: u64,
    max_wnd: u64,
    /// `sk_rcvbuf`, bytes.
    rcvbuf: u64,
    /// `rcvq_space`: bytes delivered in the last measured RTT, the delivered count and
    /// the time (us) the current measurement began.
    space: u64,
    space_seq: u64,
    space_time_us: u64,
    /// `rcv_rtt_est.rtt_us` (eight times the receiver's RTT estimate, us; 0 before a
    /// sample) and `rcv_rtt_last_tsecr`.
    rcv_rtt_us8: u64,
    rcv_rtt_last_tsecr: u64,
    rcv_mss: u64,
    advmss: u64,
    /// The receiver's RTO and SRTT, ms (1 s and none before the handshake sample).
    rto_ms: u64,
    srtt_ms: Option<u64>,
}

fn ms(t: SimTime) -> u64 {
    t.0 / 1_000_000
}

impl LinuxAckTiming {
    /// `advmss`: the MSS the receiver advertises; `max_wnd`: the largest window it
    /// advertises; `ato_min`: `TCP_ATO_MIN`.
    pub fn new(advmss: u32, max_wnd: u64, ato_min: SimDuration) -> Self {
        let advmss = advmss as u64;
        LinuxAckTiming {
            ato_min: (ato_min.0 / 1_000_000).max(1),
            ato: 0,
            lrcvtime_ms: 0,
            quick: 0,
            rcv_wnd: initial_offer(advmss, max_wnd),
            offered: initial_offer(advmss, max_wnd),
            offered_from: 1,
            max_wnd,
            rcvbuf: RMEM_DEFAULT,
            // tcp_init_buffer_space: min(rcv_ssthresh, rcv_wnd, TCP_INIT_CWND * advmss).
            space: (INIT_RCVWND * advmss).min(max_wnd),
            space_seq: 0,
            space_time_us: 0,
            rcv_rtt_us8: 0,
            rcv_rtt_last_tsecr: 0,
            rcv_mss: MSS_DEFAULT.min(advmss),
            advmss,
            rto_ms: 1000,
            srtt_ms: None,
        }
    }

    /// The handshake's RTT sample (`tcp_synack_rtt_meas`, first sample of
    /// `tcp_rtt_estimator`: SRTT = m, RTO = m + max(2m, `TCP_RTO_MIN`)).
    pub fn on_rtt_sample(&mut self, m: SimDuration) {
        let m_ms = m.0.div_ceil(1_000_000).max(1);
        self.srtt_ms = Some(m_ms);
        self.rto_ms = m_ms + (2 * m_ms).max(RTO_MIN_MS);
    }

    pub fn quick(&self) -> u32 {
        self.quick
    }

    pub fn ato(&self) -> SimDuration {
        SimDuration::from_millis(self.ato)
    }

    /// `tcp_in_quickack_mode`.
    pub fn in_quickack_mode(&self) -> bool {
        self.quick > 0
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self, max: u32) {
        // Linux divides the window last offered (`tp->rcv_wnd`), not rcv_ssthresh.
        let mut q = (self.offered / (2 * self.rcv_mss)) as u32;
        if q == 0 {
            q = 2;
        }
        self.quick = self.quick.max(q.min(max));
    }

    /// `tcp_enter_quickack_mode`.
    pub fn enter_quickack_mode(&mut self, max: u32) {
        self.incr_quickack(max);
        self.ato = self.ato_min;
    }

    /// An in-order data segment of `len` bytes (`tcp_event_data_recv`), after which
    /// `delivered` bytes in all have reached the application and `ooo_bytes` wait out
    /// of order, the last of them `ooo_reach` bytes beyond rcv_nxt.
    pub fn on_data(&mut self, len: u64, now: SimTime, delivered: u64, ooo_bytes: u64, ooo_reach: u64) {
        // tcp_measure_rcv_mss (full-sized segments).
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(self.advmss).max(self.rcv_mss);
        }
        let now_ms = ms(now);
        if self.ato == 0 {
            self.incr_quickack(TCP_MAX_QUICKACKS);
            self.ato = self.ato_min;
            // The first data segment opens the first autotuning measurement.
            self.space_time_us = now.0 / 1000;
        } else {
            let m = now_ms - self.lrcvtime_ms;
            if m <= self.ato_min / 2 {
                self.ato = (self.ato >> 1) + self.ato_min / 2;
            } else if m < self.ato {
                self.ato = ((self.ato >> 1) + m).min(self.rto_ms);
            } else if m > self.rto_ms {
                self.incr_quickack(TCP_MAX_QUICKACKS);
            }
        }
        self.lrcvtime_ms = now_ms;
        if len >= 128 {
            self.grow_window(len, ooo_bytes);
        }
        // The application reads the segment: tcp_recvmsg -> tcp_rcv_space_adjust.
        self.space_adjust(now, delivered, ooo_reach);
    }

    /// An out-of-order segment of `len` bytes was queued, after which `ooo_bytes` wait
    /// out of order, the last of them `ooo_reach` bytes beyond rcv_nxt
    /// (`tcp_data_queue_ofo`). On SACK connections the window grows as for an in-order
    /// segment, whatever its length, while the buffer, less the out-of-order queue's
    /// memory, has room (`tcp_grow_window`). Then, on every connection, the buffer
    /// grows to hold twice the last measurement plus the queue's reach
    /// (`tcp_rcvbuf_grow(sk, rcvq_space.space)`, Linux 6.16 and later), so that a long
    /// recovery does not close the window while the hole is being repaired.
    pub fn on_out_of_order(&mut self, len: u64, ooo_bytes: u64, ooo_reach: u64, sack: bool) {
        if sack {
            self.grow_window(len, ooo_bytes);
        }
        self.rcvbuf_grow(self.space, ooo_reach);
    }

    /// `tcp_grow_window`: the window grows while the buffer has room, and every
    /// segment that grows it asks for an immediate ACK.
    fn grow_window(&mut self, len: u64, ooo_bytes: u64) {
        let window_clamp = win_from_space(self.rcvbuf).min(self.max_wnd);
        let tcp_space = win_from_space(self.rcvbuf.saturating_sub(space_from_win(ooo_bytes)));
        let room = window_clamp.min(tcp_space).saturating_sub(self.rcv_wnd);
        if room > 0 {
            self.rcv_wnd += room.min((2 * self.advmss).max(2 * len));
            self.quick |= 1;
        }
    }

    /// `tcp_rcv_space_adjust` with `tcp_rcvbuf_grow`, once per receiver RTT: the
    /// timestamp estimate (`rcv_rtt_est`, `on_ts_echo`) or, before its first sample
    /// (a connection without timestamps), the handshake's RTT.
    fn space_adjust(&mut self, now: SimTime, delivered: u64, ooo_reach: u64) {
        let rtt_us = match (self.rcv_rtt_us8, self.srtt_ms) {
            (r, _) if r > 0 => r >> 3,
            (_, Some(s)) => s * 1000,
            _ => return,
        };
        let now_us = now.0 / 1000;
        if now_us.saturating_sub(self.space_time_us) < rtt_us {
            return;
        }
        let copied = delivered.saturating_sub(self.space_seq);
        if copied > self.space {
            self.rcvbuf_grow(copied, ooo_reach);
        }
        self.space_seq = delivered;
        self.space_time_us = now_us;
    }

    /// A data segment of `len` bytes echoed `ts_ecr`, a TSval this receiver sent
    /// (`tcp_rcv_rtt_measure_ts`, Linux 6.16+): once per echoed value, a segment of at
    /// least `rcv_mss` gives the sample now - TSecr on the millisecond timestamp clock,
    /// kept only if positive (`tcp_rtt_tsopt_us(tp, 0)`). The sample includes the
    /// queueing the data met, so during slow start the receiver's RTT, and with it
    /// each autotuning measurement, grows with the queue.
    pub fn on_ts_echo(&mut self, now: SimTime, ts_ecr: u64, len: u64) {
        if ts_ecr == self.rcv_rtt_last_tsecr {
            return;
        }
        self.rcv_rtt_last_tsecr = ts_ecr;
        if len < self.rcv_mss {
            return;
        }
        let delta = tsopt_rtt(now, ts_ecr, 0);
        if delta.0 > 0 {
            self.rcv_rtt_update(delta.0 / 1000);
        }
    }

    /// `tcp_rcv_rtt_update(tp, sample, 0)` (Linux 6.16+): a smaller sample is taken at
    /// once; a larger one moves the estimate 1/8 of the way.
    fn rcv_rtt_update(&mut self, sample_us: u64) {
        let m = sample_us << 3;
        let old = self.rcv_rtt_us8;
        self.rcv_rtt_us8 = if old == 0 || m < old { m } else { old - (old >> 3) + sample_us };
    }

    /// The receiver's RTT estimate from timestamps (`rcv_rtt_est.rtt_us >> 3`), if
    /// it has a sample.
    pub fn rcv_rtt(&self) -> Option<SimDuration> {
        (self.rcv_rtt_us8 > 0).then(|| SimDuration((self.rcv_rtt_us8 >> 3) * 1000))
    }

    /// `tcp_rcvbuf_grow(sk, newval)` (Linux 6.18): the measurement becomes `newval`;
    /// "DRS is always one RTT late", so the window is twice it, plus twice its growth
    /// over the last measurement (slow start may double the rate), plus the reach of
    /// the out-of-order queue; the buffer never shrinks.
    fn rcvbuf_grow(&mut self, newval: u64, ooo_reach: u64) {
        let old = self.space.max(1);
        self.space = newval;
        let mut rcvwin = newval << 1;
        let grow = (rcvwin as u128 * newval.saturating_sub(old) as u128 / old as u128) as u64;
        rcvwin += grow << 1;
        rcvwin += ooo_reach;
        let rcvbuf = space_from_win(rcvwin).min(RMEM_MAX);
        self.rcvbuf = self.rcvbuf.max(rcvbuf);
    }

    /// The SYN-ACK's window (`tcp_select_initial_window`): the starting buffer's
    /// window, rounded down to whole segments, at most 65,535 (a SYN's window is not
    /// scaled); `rcv_nxt` is the sequence number after the SYN.
    pub fn initial_window(&mut self, rcv_nxt: u64) -> u64 {
        self.offered = initial_offer(self.advmss, self.max_wnd);
        self.offered_from = rcv_nxt;
        self.offered
    }

    /// The window an ACK offers (`tcp_select_window`, `__tcp_select_window`): the
    /// buffer's free space (`tcp_space`: the out-of-order queue's memory taken out),
    /// at most `rcv_ssthresh`, rounded up to the window scale's unit; never less than
    /// what the last offer still leaves (the right edge does not move back). Free
    /// space under half the buffer's window ends quick-ACK mode (`icsk_ack.quick = 0`).
    /// Left out: the zero window Linux offers when the free space is under 1/16 of the
    /// buffer or one MSS.
    pub fn select_window(&mut self, rcv_nxt: u64, ooo_bytes: u64) -> u64 {
        let full = win_from_space(self.rcvbuf).min(self.max_wnd);
        let free = win_from_space(self.rcvbuf.saturating_sub(space_from_win(ooo_bytes)));
        if free < full / 2 {
            self.quick = 0;
        }
        let unit = 1u64 << RCV_WSCALE;
        let new = free.min(self.rcv_wnd).div_ceil(unit) * unit;
        let left = (self.offered_from + self.offered).saturating_sub(rcv_nxt);
        self.offered = new.max(left).min(self.max_wnd);
        self.offered_from = rcv_nxt;
        self.offered
    }

    /// `sk_rcvbuf`, bytes.
    pub fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }

    /// `rcv_ssthresh`, bytes.
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_wnd
    }

    /// An ACK for received data went out (`tcp_dec_quickack_mode`).
    pub fn on_ack_sent(&mut self) {
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.ato_min;
            }
        }
    }

    /// The delayed-ACK timeout to arm now (`tcp_send_delayed_ack`).
    pub fn delack_timeout(&self) -> SimDuration {
        let mut ato = self.ato.max(1);
        if ato > self.ato_min {
            let mut max_ato = 500; // HZ / 2
            if let Some(srtt) = self.srtt_ms {
                max_ato = max_ato.min(srtt.max(self.ato_min));
            }
            ato = ato.min(max_ato);
        }
        SimDuration::from_millis(ato.min(DELACK_MAX_MS))
    }

    /// With a deadline already set: send at once if it is within ato/4 of now
    /// (`tcp_send_delayed_ack`: "If delack timer is about to expire, send ACK now").
    pub fn about_to_expire(&self, deadline: SimTime, now: SimTime) -> bool {
        deadline <= now + SimDuration(self.delack_timeout().0 / 4)
    }

    /// The delayed-ACK timer fired with an ACK due: ato doubles, at most the RTO
    /// (`tcp_delack_timer_handler`).
    pub fn on_delack_timer(&mut self) {
        self.ato = (self.ato << 1).min(self.rto_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    /// `tcp_event_data_recv` on the first segment: `tcp_incr_quickack(16)` divides the
    /// window offered in the SYN-ACK (65,160 = 45 * 1448) by 2 rcv_mss (1448, measured
    /// from the segment first): min(22, 16) = 16; the segment also grows rcv_ssthresh
    /// (65,160 < the clamp 131,072 * 157 / 256 = 80,384), so `quick |= 1` makes it 17;
    /// ato = 40 ms. Each ACK sent lowers `quick`; the 17th leaves quick-ACK mode. With
    /// a 20,000-byte window the SYN-ACK offers 13 segments (18,824 bytes): 18,824 / 2896
    /// = 6 quick ACKs, 7 with the growth to the 20,000 clamp.
    #[test]
    fn first_segment_quickacks_follow_the_offered_window_over_2_rcv_mss() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        assert_eq!(a.initial_window(1), 65_160);
        a.on_rtt_sample(SimDuration::from_millis(40));
        a.on_data(1448, t(100), 0, 0, 0);
        assert_eq!((a.quick(), a.ato(), a.rcv_ssthresh()), (17, SimDuration::from_millis(40), 65_160 + 2896));
        for left in (0..17).rev() {
            assert!(a.in_quickack_mode());
            a.on_ack_sent();
            assert_eq!(a.quick(), left);
        }
        assert!(!a.in_quickack_mode());
        let mut small = LinuxAckTiming::new(1448, 20_000, SimDuration::from_millis(40));
        assert_eq!(small.initial_window(1), 18_824);
        small.on_data(1448, t(100), 0, 0, 0);
        assert_eq!((small.quick(), small.rcv_ssthresh()), (7, 20_000));
    }

    /// `tcp_select_window`: the offer is min(free space, rcv_ssthresh) rounded up to
    /// 128 bytes, and the right edge never moves back. From rcv_nxt 1 the SYN-ACK
    /// offered 65,160. After one segment rcv_ssthresh is 68,056: offered 68,096 from
    /// rcv_nxt 1449 (right edge 69,545). With 45,000 bytes out of order (73,376 of
    /// buffer) the free space is (131,072 - 73,376) * 157 / 256 = 35,383 < 80,384 / 2:
    /// quick-ACK mode ends, and the offer is what the last one leaves, 69,545 - 1449.
    #[test]
    fn the_offered_window_follows_rcv_ssthresh_and_never_retreats() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        assert_eq!(a.initial_window(1), 65_160);
        a.on_data(1448, t(100), 1448, 0, 0);
        assert_eq!(a.select_window(1449, 0), 68_096);
        assert!(a.in_quickack_mode());
        assert_eq!(a.select_window(1449, 45_000), 68_096);
        assert_eq!(a.quick(), 0);
        assert_eq!(a.select_window(1449 + 1448, 45_000), 68_096 - 1448);
    }

    /// `tcp_event_data_recv`'s ato rules, by hand. SRTT 40 ms gives the receiver's
    /// RTO 40 + max(80, 200) = 240 ms.
    #[test]
    fn ato_adapts_to_the_interarrival_time() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_rtt_sample(SimDuration::from_millis(40));
        a.on_data(1448, t(0), 0, 0, 0);
        // Delayed ACK missed: ato 40 -> 80 ms.
        a.on_delack_timer();
        assert_eq!(a.ato(), SimDuration::from_millis(80));
        // m = 30 ms < ato: ato = 80/2 + 30 = 70 ms.
        a.on_data(1448, t(30), 0, 0, 0);
        assert_eq!(a.ato(), SimDuration::from_millis(70));
        // The timer is bounded by SRTT (40 ms) once ato exceeds 40 ms.
        assert_eq!(a.delack_timeout(), SimDuration::from_millis(40));
        // m = 10 ms <= 20: ato = 70/2 + 20 = 55 ms.
        a.on_data(1448, t(40), 0, 0, 0);
        assert_eq!(a.ato(), SimDuration::from_millis(55));
        // Doubling stops at the RTO: 110, 220, 240.
        a.on_delack_timer();
        a.on_delack_timer();
        a.on_delack_timer();
        assert_eq!(a.ato(), SimDuration::from_millis(240));
        // A silence longer than the RTO (300 ms > 240 ms) re-enters quick-ACK mode
        // (the first segment's 17 were never spent here).
        assert_eq!(a.quick(), 17);
        a.quick = 0;
        a.on_data(1448, t(340), 0, 0, 0);
        assert!(a.quick() > 0);
    }

    /// `tcp_grow_window`: rcv_ssthresh starts at the SYN-ACK's 65,160 and grows 2 * 1448
    /// per segment while it is below min(window_clamp, tcp_space) = 131,072 * 157 / 256
    /// = 80,384: 5 segments take it to 65,160 + 5 * 2896 = 79,640, the 6th adds the last
    /// 744. Each growing segment sets `quick |= 1`, so the first segment's quick ACKs
    /// never run out while the window grows (17 -> ack -> 16 -> |1 -> 17 ...); after
    /// the window stops, the 16 left are spent and the receiver delays again.
    #[test]
    fn window_growth_keeps_quickack_until_the_buffer_is_reached() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_rtt_sample(SimDuration::from_millis(40));
        for k in 1..=5u64 {
            a.on_data(1448, t(100 + k), 0, 0, 0);
            assert!(a.in_quickack_mode(), "segment {k}");
            a.on_ack_sent();
        }
        assert_eq!(a.rcv_ssthresh(), 65_160 + 5 * 2896);
        a.on_data(1448, t(106), 0, 0, 0);
        assert_eq!((a.rcv_ssthresh(), a.quick()), (80_384, 17));
        a.on_ack_sent();
        for k in 0..16u64 {
            a.on_data(1448, t(107 + k), 0, 0, 0);
            assert_eq!(a.rcv_ssthresh(), 80_384);
            assert!(a.in_quickack_mode());
            a.on_ack_sent();
        }
        a.on_data(1448, t(123), 0, 0, 0);
        assert!(!a.in_quickack_mode());
    }

    /// Out-of-order data occupies the buffer at truesize = len * 256 / 157: 5000 bytes
    /// held take 8153, so tcp_space = (131,072 - 8153) * 157 / 256 = 75,383 caps the
    /// growth below the clamp (80,384): 65,160 + 3 * 2896 = 73,848, then 1535 more.
    /// Segments that arrive out of order grow the window the same way
    /// (`tcp_data_queue_ofo`).
    #[test]
    fn out_of_order_memory_limits_the_growth() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_rtt_sample(SimDuration::from_millis(40));
        for k in 0..30u64 {
            a.on_data(1448, t(100 + k), 0, 5_000, 30_000);
        }
        assert_eq!(a.rcv_ssthresh(), 75_383);
        let mut b = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        b.on_out_of_order(1448, 1448, 1448, true);
        assert_eq!(b.rcv_ssthresh(), 65_160 + 2896);
    }

    /// `tcp_rcv_rtt_measure_ts` / `tcp_rcv_rtt_update(tp, sample, 0)` (Linux 6.16+),
    /// by hand. TSvals are send times + 1 ns, read in whole milliseconds. A full
    /// segment at 100 ms echoing a TSval of 55 ms: first sample, 45 ms. The same echo
    /// again gives nothing. An echo of 100 ms at 205 ms: 105 ms, larger, so the
    /// estimate moves 1/8 of the way: 8 * 45,000 - 45,000 + 105,000 = 420,000 us/8 =
    /// 52.5 ms. A segment under `rcv_mss` (536 before one is measured) takes its echo
    /// without a sample; an echo under 1 ms old is no sample (`tcp_rtt_tsopt_us(tp, 0)`);
    /// a smaller sample (30 ms) is taken at once. The autotuning measurement then
    /// waits one such RTT: 14,480 bytes delivered in 20 ms change nothing until 30 ms
    /// have passed.
    #[test]
    fn receiver_rtt_follows_tcp_rcv_rtt_measure_ts() {
        let ecr = |ms: u64| ms * 1_000_000 + 1;
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_ts_echo(t(100), ecr(55), 1448);
        assert_eq!(a.rcv_rtt(), Some(SimDuration::from_millis(45)));
        a.on_ts_echo(t(200), ecr(55), 1448);
        assert_eq!(a.rcv_rtt(), Some(SimDuration::from_millis(45)));
        a.on_ts_echo(t(205), ecr(100), 1448);
        assert_eq!(a.rcv_rtt(), Some(SimDuration::from_micros(52_500)));
        a.on_ts_echo(t(300), ecr(150), 100);
        a.on_ts_echo(t(301), ecr(150), 1448);
        assert_eq!(a.rcv_rtt(), Some(SimDuration::from_micros(52_500)));
        a.on_ts_echo(SimTime(400_900_000), ecr(400), 1448);
        assert_eq!(a.rcv_rtt(), Some(SimDuration::from_micros(52_500)));
        a.on_ts_echo(t(431), ecr(401), 1448);
        assert_eq!(a.rcv_rtt(), Some(SimDuration::from_millis(30)));
        a.on_rtt_sample(SimDuration::from_millis(40));
        a.on_data(1448, t(1000), 1448, 0, 0);
        a.on_data(1448, t(1020), 1448 + 60_000, 0, 0);
        assert_eq!(a.rcvbuf(), 131_072);
        a.on_data(1448, t(1030), 1448 + 60_000, 0, 0);
        assert!(a.rcvbuf() > 131_072);
    }

    /// `tcp_data_queue_ofo` ends with `tcp_rcvbuf_grow(sk, tp->rcvq_space.space)`
    /// (Linux 6.16+; 6.18's form): with the first measurement's space (10 * 1448 =
    /// 14,480) and the out-of-order queue reaching 200,000 bytes past rcv_nxt, rcvwin =
    /// 2 * 14,480 + 200,000 = 228,960 (no slow-start term: the measurement did not
    /// change), so the buffer becomes ceil(228,960 * 256 / 157) = 373,337 bytes, on a
    /// connection without SACK too (only `tcp_grow_window` needs SACK). A shorter
    /// reach later leaves it as it is: the buffer never shrinks.
    #[test]
    fn out_of_order_arrivals_provision_the_buffer() {
        for sack in [true, false] {
            let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
            a.on_rtt_sample(SimDuration::from_millis(40));
            a.on_out_of_order(1448, 1448, 200_000, sack);
            assert_eq!(a.rcvbuf(), 373_337);
            assert_eq!(a.rcv_ssthresh(), if sack { 65_160 + 2896 } else { 65_160 });
            a.on_out_of_order(1448, 2896, 100_000, sack);
            assert_eq!(a.rcvbuf(), 373_337);
        }
    }

    /// `tcp_rcv_space_adjust` / `tcp_rcvbuf_grow`, by hand, receiver RTT 40 ms. The
    /// first segment (t = 0) opens the measurement with space = 14480. At t = 40 ms,
    /// 28960 bytes were delivered: rcvwin = 2 * 28960 = 57920, plus the slow-start term
    /// 2 * 57920 * (28960 - 14480) / 14480 = 115840, = 173760; the buffer becomes
    /// 173760 * 256 / 157 = 283,329 (rounded up) and the window may grow to 173760. A
    /// smaller RTT's worth (20000 <= 28960) changes nothing; the buffer never exceeds
    /// tcp_rmem[2]; the window follows it one segment at a time.
    #[test]
    fn autotuning_follows_tcp_rcvbuf_grow() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_rtt_sample(SimDuration::from_millis(40));
        a.on_data(1448, t(0), 1448, 0, 0);
        assert_eq!(a.rcvbuf(), 131_072);
        a.on_data(1448, t(39), 20_000, 0, 0); // within the RTT: no measurement
        assert_eq!(a.rcvbuf(), 131_072);
        a.on_data(1448, t(40), 28_960, 0, 0);
        assert_eq!(a.rcvbuf(), 283_329);
        a.on_data(1448, t(80), 48_960, 0, 0);
        assert_eq!(a.rcvbuf(), 283_329);
        a.on_data(1448, t(120), 48_960 + 4_000_000, 0, 0);
        assert_eq!(a.rcvbuf(), RMEM_MAX);
        // The window follows at 2 * 1448 per segment: 65160 + 205 * 2896 after 205.
        for k in 0..200u64 {
            a.on_data(1448, t(121 + k), 0, 0, 0);
        }
        assert_eq!(a.rcv_ssthresh(), 65_160 + 205 * 2896);
    }
}
