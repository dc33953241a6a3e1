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
//!   at `TCP_DEFAULT_INIT_RCVWND` = 10 segments (`tcp_select_initial_window`). Each
//!   in-order segment of 128 bytes or more, while `room` = min(`window_clamp`,
//!   `tcp_space`) - `rcv_ssthresh` is positive, adds min(room, max(2 advmss, 2 len)) and
//!   sets `quick |= 1`: while the window grows, every segment is ACKed at once. In slow
//!   start that halves the ACK spacing, which is what lets CUBIC's HyStart ACK train
//!   (2 ms `hystart_ack_delta_us`) fire at 10 Mbit/s: delayed ACKs two segments apart
//!   are 2.4 ms apart.
//! - **Receive-buffer autotuning** (dynamic right-sizing, `tcp_rcv_space_adjust` and
//!   `tcp_rcvbuf_grow` of Linux 6.x): the buffer starts at `tcp_rmem[1]` = 128 KB.
//!   Once per receiver RTT, if the bytes delivered to the application in the last RTT
//!   (`copied`) exceed the previous measurement (`space`), rcvwin = 2 copied + 4 copied
//!   (copied - space) / space, plus the bytes from rcv_nxt to the end of the
//!   out-of-order queue, and the buffer becomes max(buffer, min(2 rcvwin, `tcp_rmem[2]`
//!   = 6 MB)). `window_clamp` = buffer / 2 (`tcp_win_from_space`); `tcp_space` = (buffer
//!   - the out-of-order queue's memory) / 2. The application reads every in-order byte
//!   at once, so only out-of-order data occupies the buffer.
//!
//! Choices of tcplab's, named: window bytes are half of buffer bytes both ways
//! (`scaling_ratio` = 128/256, the `TCP_DEFAULT_SCALING_RATIO` of Linux 6.5; Linux
//! then measures len/truesize, about 0.55 for 1448-byte segments in 2 KB buffers);
//! the receiver's RTT for autotuning is its handshake sample (Linux refines it from
//! timestamps, `tcp_rcv_rtt_measure_ts`, so its RTT includes queueing); the window
//! never exceeds the profile's advertised window (`rcv_buffer`).
//!
//! Left out: SACK compression (`tcp_sack_compress`: past the third duplicate ACK for
//! one rcv_nxt, out-of-order ACKs are held up to min(RTT/20, 1 ms)); the window's
//! growth on out-of-order segments (`tcp_data_queue_ofo`, which does not set quick);
//! ping-pong (interactive) mode, which a one-way transfer never enters.

use crate::time::{SimDuration, SimTime};

/// `TCP_MAX_QUICKACKS`.
pub const TCP_MAX_QUICKACKS: u32 = 16;
/// `TCP_DELACK_MAX` (HZ/5), ms.
const DELACK_MAX_MS: u64 = 200;
/// `TCP_RTO_MIN` (HZ/5), ms.
const RTO_MIN_MS: u64 = 200;
/// `TCP_MSS_DEFAULT`.
const MSS_DEFAULT: u64 = 536;
/// `TCP_DEFAULT_INIT_RCVWND`, segments.
const INIT_RCVWND: u64 = 10;
/// `tcp_rmem[1]`: the receive buffer a connection starts with, bytes.
const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`: the largest buffer autotuning gives, bytes.
const RMEM_MAX: u64 = 6_291_456;

/// `tcp_win_from_space` with `scaling_ratio` = 1/2 (see the module doc).
fn win_from_space(space: u64) -> u64 {
    space / 2
}

/// `tcp_space_from_win`, its inverse.
fn space_from_win(win: u64) -> u64 {
    win * 2
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
    max_wnd: u64,
    /// `sk_rcvbuf`, bytes.
    rcvbuf: u64,
    /// `rcvq_space`: bytes delivered in the last measured RTT, the delivered count and
    /// the time (ms) the current measurement began.
    space: u64,
    space_seq: u64,
    space_time_ms: u64,
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
            rcv_wnd: (INIT_RCVWND * advmss).min(max_wnd),
            max_wnd,
            rcvbuf: RMEM_DEFAULT,
            // tcp_init_buffer_space: min(rcv_ssthresh, rcv_wnd, TCP_INIT_CWND * advmss).
            space: (INIT_RCVWND * advmss).min(max_wnd),
            space_seq: 0,
            space_time_ms: 0,
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
        let mut q = (self.rcv_wnd / (2 * self.rcv_mss)) as u32;
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
            self.space_time_ms = now_ms;
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
        self.space_adjust(now_ms, delivered, ooo_reach);
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

    /// `tcp_rcv_space_adjust` with `tcp_rcvbuf_grow`, once per receiver RTT.
    fn space_adjust(&mut self, now_ms: u64, delivered: u64, ooo_reach: u64) {
        let Some(rtt) = self.srtt_ms else { return };
        if now_ms.saturating_sub(self.space_time_ms) < rtt {
            return;
        }
        let copied = delivered.saturating_sub(self.space_seq);
        if copied > self.space {
            let old = self.space.max(1);
            self.space = copied;
            // "DRS is always one RTT late", and slow start may double the rate.
            let mut rcvwin = copied << 1;
            rcvwin += ((rcvwin as u128 * 2 * (copied - old) as u128) / old as u128) as u64;
            rcvwin += ooo_reach;
            let rcvbuf = space_from_win(rcvwin).min(RMEM_MAX);
            self.rcvbuf = self.rcvbuf.max(rcvbuf);
        }
        self.space_seq = delivered;
        self.space_time_ms = now_ms;
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

    /// `tcp_event_data_recv` on the first segment: `tcp_incr_quickack(16)` with
    /// rcv_wnd = 10 * 1448 (`TCP_DEFAULT_INIT_RCVWND`) and rcv_mss = 1448 (measured
    /// from the segment first): 14480 / 2896 = 5 quick ACKs; ato = 40 ms. Each ACK
    /// sent lowers `quick`; the fifth leaves quick-ACK mode.
    #[test]
    fn first_segment_quickacks_follow_rcv_wnd_over_2_rcv_mss() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_rtt_sample(SimDuration::from_millis(40));
        a.on_data(1448, t(100), 0, 0, 0);
        assert_eq!((a.quick(), a.ato()), (5, SimDuration::from_millis(40)));
        for left in (0..5).rev() {
            assert!(a.in_quickack_mode());
            a.on_ack_sent();
            assert_eq!(a.quick(), left);
        }
        assert!(!a.in_quickack_mode());
        // The window grew 2 * 1448 per segment: after 6 more, rcv_wnd = 14480 +
        // 7 * 2896 = 34752, so a duplicate (tcp_enter_quickack_mode(16)) gives
        // min(34752 / 2896, 16) = 12.
        for k in 0..6 {
            a.on_data(1448, t(101 + k), 0, 0, 0);
        }
        a.enter_quickack_mode(TCP_MAX_QUICKACKS);
        assert_eq!(a.quick(), 12);
        // Much later the bound is TCP_MAX_QUICKACKS.
        for k in 0..100 {
            a.on_data(1448, t(200 + k), 0, 0, 0);
        }
        a.quick = 0;
        a.enter_quickack_mode(TCP_MAX_QUICKACKS);
        assert_eq!(a.quick(), 16);
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
        // A silence longer than the RTO (300 ms > 240 ms) re-enters quick-ACK mode.
        assert_eq!(a.quick(), 5);
        a.quick = 0;
        a.on_data(1448, t(340), 0, 0, 0);
        assert!(a.quick() > 0);
    }

    /// `tcp_grow_window`: rcv_ssthresh starts at 10 * 1448 = 14480 and grows 2 * 1448
    /// per segment while it is below min(window_clamp, tcp_space) = 131072 / 2 = 65536:
    /// 17 segments take it to 14480 + 17 * 2896 = 63712, the 18th adds the last 1824.
    /// Each growing segment sets `quick |= 1`, so the 5 quick ACKs of the first segment
    /// never run out while the window grows (5 -> ack -> 4 -> |1 -> 5 ...); after
    /// the window stops, the 4 left are spent and the receiver delays again.
    #[test]
    fn window_growth_keeps_quickack_until_the_buffer_is_reached() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_rtt_sample(SimDuration::from_millis(40));
        for k in 1..=17u64 {
            a.on_data(1448, t(100 + k), 0, 0, 0);
            assert!(a.in_quickack_mode(), "segment {k}");
            a.on_ack_sent();
        }
        assert_eq!(a.rcv_ssthresh(), 14480 + 17 * 2896);
        a.on_data(1448, t(118), 0, 0, 0);
        assert_eq!(a.rcv_ssthresh(), 65536);
        assert_eq!(a.quick(), 5);
        a.on_ack_sent();
        for k in 0..4u64 {
            a.on_data(1448, t(119 + k), 0, 0, 0);
            assert_eq!(a.rcv_ssthresh(), 65536);
            assert!(a.in_quickack_mode());
            a.on_ack_sent();
        }
        a.on_data(1448, t(123), 0, 0, 0);
        assert!(!a.in_quickack_mode());
    }

    /// Out-of-order data occupies the buffer: with 20000 bytes held (40000 of buffer
    /// at truesize = 2 * len), tcp_space = (131072 - 40000) / 2 = 45536 caps the growth.
    #[test]
    fn out_of_order_memory_limits_the_growth() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_rtt_sample(SimDuration::from_millis(40));
        for k in 0..30u64 {
            a.on_data(1448, t(100 + k), 0, 20_000, 30_000);
        }
        assert_eq!(a.rcv_ssthresh(), 45536);
    }

    /// `tcp_rcv_space_adjust` / `tcp_rcvbuf_grow`, by hand, receiver RTT 40 ms. The
    /// first segment (t = 0) opens the measurement with space = 14480. At t = 40 ms,
    /// 28960 bytes were delivered: rcvwin = 2 * 28960 = 57920, plus the slow-start term
    /// 2 * 57920 * (28960 - 14480) / 14480 = 115840, = 173760; the buffer becomes
    /// 2 * 173760 = 347520 and the window may grow to 173760. A smaller RTT's worth
    /// (20000 <= 28960) changes nothing; the buffer never exceeds tcp_rmem[2]; the
    /// window follows it one segment at a time.
    #[test]
    fn autotuning_follows_tcp_rcvbuf_grow() {
        let mut a = LinuxAckTiming::new(1448, 6 << 20, SimDuration::from_millis(40));
        a.on_rtt_sample(SimDuration::from_millis(40));
        a.on_data(1448, t(0), 1448, 0, 0);
        assert_eq!(a.rcvbuf(), 131_072);
        a.on_data(1448, t(39), 20_000, 0, 0); // within the RTT: no measurement
        assert_eq!(a.rcvbuf(), 131_072);
        a.on_data(1448, t(40), 28_960, 0, 0);
        assert_eq!(a.rcvbuf(), 347_520);
        a.on_data(1448, t(80), 48_960, 0, 0);
        assert_eq!(a.rcvbuf(), 347_520);
        a.on_data(1448, t(120), 48_960 + 4_000_000, 0, 0);
        assert_eq!(a.rcvbuf(), RMEM_MAX);
        // The window follows at 2 * 1448 per segment: 14480 + 205 * 2896 after 205.
        for k in 0..200u64 {
            a.on_data(1448, t(121 + k), 0, 0, 0);
        }
        assert_eq!(a.rcv_ssthresh(), 14480 + 205 * 2896);
    }
}
