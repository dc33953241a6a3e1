//! How many segments a paced Linux sender puts on the wire back to back: the size of
//! its TSO/GSO bursts (Linux 6.x `tcp_tso_segs` -> `tcp_tso_autosize`,
//! net/ipv4/tcp_output.c).
//!
//! Linux builds each transmitted skb of up to `tcp_tso_autosize` segments and paces
//! skbs, not segments (`tcp_update_skb_after_send` spaces them by the skb's length at
//! the pacing rate). A TCP socket always has GSO (`sk_setup_caps`), so on a device
//! without TSO, such as the emulator's TUN devices, the skb is cut into segments just
//! before the device and they leave one right after the other. The autosizing goal:
//! - about 1 ms of the pacing rate, `sk_pacing_rate >> sk_pacing_shift` (shift 10);
//! - plus, for close peers, `sk_gso_max_size >> (tcp_min_rtt / 2^tcp_tso_rtt_log)`
//!   (`tcp_tso_rtt_log` = 9: the allowance halves for every 512 µs of min RTT and is
//!   gone from 16.4 ms);
//! - at most `sk_gso_max_size`, in whole segments, at least the CC's `min_tso_segs`
//!   (`sysctl_tcp_min_tso_segs` = 2, or BBR's `bbr_min_tso_segs`: 1 below 1.2 Mbit/s
//!   of pacing, else 2).
//!
//! Only paced flows are affected in the model: an unpaced sender already sends all its
//! window allows at one instant. Linux's TSO deferral (`tcp_tso_should_defer`, which
//! can hold back a send that cwnd cuts below a full burst) is not modelled.

use crate::time::{Rate, SimDuration, SimTime};

/// `sk_gso_max_size` on a device with the default GSO limit (`GSO_LEGACY_MAX_SIZE`,
/// 65,536) less `MAX_TCP_HEADER + 1` (320 + 1 on x86-64), bytes.
pub const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// `sysctl_tcp_tso_rtt_log`: the min-RTT allowance halves every 2^9 µs.
pub const TSO_RTT_LOG: u32 = 9;
/// `sysctl_tcp_min_tso_segs`, the default floor when the CC sets none.
pub const MIN_TSO_SEGS: u32 = 2;

/// Segments per skb for a sender pacing at `pacing_rate` bytes/s with `mss`-byte
/// segments and `tcp_min_rtt` (`None` before any sample: Linux's `~0U`, no
/// allowance), at least `min_tso_segs` (Linux `tcp_tso_autosize`).
///
/// ```
/// use tcplab_core::tcp::gso::tso_autosize;
/// use tcplab_core::time::SimDuration;
/// // 10 Mbit/s of BBR pacing, 1448-byte segments, 44 ms min RTT: 1,220 B per ms is
/// // under one segment, so BBR's floor of 2 decides.
/// assert_eq!(tso_autosize(1_250_000, 1448, Some(SimDuration::from_millis(44)), 2), 2);
/// // 1 Gbit/s: 122,070 B per ms, capped at 65,215 B = 45 segments.
/// assert_eq!(tso_autosize(125_000_000, 1448, Some(SimDuration::from_millis(44)), 2), 45);
/// ```
pub fn tso_autosize(pacing_rate: u64, mss: u32, tcp_min_rtt: Option<SimDuration>, min_tso_segs: u32) -> u32 {
    let mut bytes = pacing_rate >> 10;
    if let Some(rtt) = tcp_min_rtt {
        let r = (rtt.as_nanos() / 1_000) >> TSO_RTT_LOG;
        if r < 32 {
            bytes += GSO_MAX_BYTES >> r;
        }
    }
    let segs = bytes.min(GSO_MAX_BYTES) / mss.max(1) as u64;
    (segs as u32).max(min_tso_segs)
}

/// The skb being sent at one instant, as the run of segments it becomes: Linux paces
/// skbs (`tcp_update_skb_after_send`), so the segments of one burst leave back to
/// back and the next burst waits for the whole skb's payload time at the pacing rate,
/// less the send's lateness up to half that time ("OS jitter").
#[derive(Clone, Copy, Debug, Default)]
pub struct Burst {
    /// When the burst opened; it takes segments only at that instant.
    at: SimTime,
    /// Segments it may still take.
    left: u32,
    /// Linux `tcp_wstamp_ns` once the skb is sent: the later of the scheduled
    /// departure and `at`.
    base: SimTime,
    /// How late the send was against the scheduled departure, ns.
    credit: u64,
    /// Payload octets so far.
    bytes: u32,
}

impl Burst {
    /// Whether a segment sent at `now` joins this burst.
    pub fn is_open(&self, now: SimTime) -> bool {
        self.left > 0 && self.at == now
    }

    /// Opens a burst of at most `segs` segments at `now`; the previous burst allowed
    /// departures from `scheduled`.
    pub fn open(&mut self, now: SimTime, scheduled: SimTime, segs: u32) {
        *self = Burst { at: now, left: segs.max(1), base: scheduled.max(now), credit: now.0.saturating_sub(scheduled.0), bytes: 0 };
    }

    /// Adds a segment of `len` payload octets; returns when the next burst may leave
    /// at `rate`.
    pub fn add(&mut self, len: u32, rate: Rate) -> SimTime {
        self.left = self.left.saturating_sub(1);
        self.bytes += len;
        let gap = rate.tx_time(self.bytes).as_nanos();
        SimTime(self.base.0 + gap - self.credit.min(gap / 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autosize_by_hand() {
        let mss = 1448;
        let ms = SimDuration::from_millis;
        // The loss grid's BBR in ProbeBW: 10 Mbit/s = 1,250,000 B/s >> 10 = 1,220 B,
        // 0 segments, so BBR's floor: bursts of 2.
        assert_eq!(tso_autosize(1_250_000, mss, Some(ms(44)), 2), 2);
        // BBR below 1.2 Mbit/s of pacing has a floor of 1.
        assert_eq!(tso_autosize(100_000, mss, Some(ms(44)), 1), 1);
        // 100 Mbit/s: 12,207 B = 8 segments (the RTT allowance is gone: 44,000 µs >> 9
        // = 85 >= 32).
        assert_eq!(tso_autosize(12_500_000, mss, Some(ms(44)), 2), 8);
        // A close peer: 1 ms min RTT, 1000 >> 9 = 1, so 65,215 >> 1 = 32,607 B more:
        // (12,207 + 32,607) / 1448 = 30 segments.
        assert_eq!(tso_autosize(12_500_000, mss, Some(ms(1)), 2), 30);
        // 100 µs: r = 0, the whole 65,215 B; with the rate's share, capped: 45.
        assert_eq!(tso_autosize(12_500_000, mss, Some(SimDuration::from_micros(100)), 2), 45);
        // The allowance's last step: 16,383 µs >> 9 = 31 -> 65,215 >> 31 = 0 B.
        assert_eq!(tso_autosize(1_250_000, mss, Some(SimDuration::from_micros(16_383)), 2), 2);
        // No RTT sample yet: no allowance.
        assert_eq!(tso_autosize(12_500_000, mss, None, 2), 8);
    }

    #[test]
    fn a_burst_is_paced_as_one_skb() {
        // 10 Mbit/s: a 1448-byte segment takes 1,158,400 ns at the rate.
        let rate = Rate::mbps(10);
        let mut b = Burst::default();
        // On time (scheduled = now = 1 s): two segments leave together, and the next
        // burst waits for both, 2,316,800 ns.
        b.open(SimTime(1_000_000_000), SimTime(1_000_000_000), 2);
        assert!(b.is_open(SimTime(1_000_000_000)));
        assert_eq!(b.add(1448, rate), SimTime(1_001_158_400));
        assert!(b.is_open(SimTime(1_000_000_000)));
        assert_eq!(b.add(1448, rate), SimTime(1_002_316_800));
        assert!(!b.is_open(SimTime(1_000_000_000)), "full");
        // 0.5 ms late: the credit is taken off the whole skb's gap, 2,316,800 - 500,000.
        b.open(SimTime(1_003_000_000), SimTime(1_002_500_000), 2);
        b.add(1448, rate);
        assert_eq!(b.add(1448, rate), SimTime(1_003_000_000 + 2_316_800 - 500_000));
        // 2 ms late: at most half the gap is forgiven.
        b.open(SimTime(1_010_000_000), SimTime(1_008_000_000), 2);
        b.add(1448, rate);
        assert_eq!(b.add(1448, rate), SimTime(1_010_000_000 + 1_158_400));
        // A burst takes segments at its own instant only.
        b.open(SimTime(2_000_000_000), SimTime(2_000_000_000), 2);
        b.add(1448, rate);
        assert!(!b.is_open(SimTime(2_000_000_001)));
    }
}
