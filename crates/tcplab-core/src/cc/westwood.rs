//! TCP Westwood+ (Mascolo, Casetti, Gerla, Sanadidi & Wang, "TCP Westwood: Bandwidth
//! estimation for enhanced transport over wireless links", MobiCom 2001; Grieco &
//! Mascolo, "Performance evaluation and comparison of Westwood+, New Reno and Vegas TCP
//! congestion control", ACM CCR 34(2), 2004), as in Linux `net/ipv4/tcp_westwood.c`.
//!
//! - Growth is Reno's (slow start, +1 MSS per RTT).
//! - Bandwidth estimate (Westwood+): acked bytes are summed over windows of one RTT, at
//!   least 50 ms (Linux `TCP_WESTWOOD_RTT_MIN`). A window closes at the first ACK after
//!   it has lasted longer than that. Its sample `b = bytes/duration` goes through two
//!   cascaded low-pass filters (Linux `westwood_filter`):
//!   `bw_ns = (7*bw_ns + b)/8` and `BWE = (7*BWE + bw_ns)/8`. The first sample fills both.
//! - After a loss: `ssthresh = max(BWE * RTT_min, 2 MSS)`, capped at the pre-loss cwnd
//!   for fast recovery. The sender sets cwnd = ssthresh when recovery ends, which is the
//!   paper's "cwnd = min(cwnd, ssthresh)". After an RTO, ssthresh is set without the cap
//!   (Linux `CA_EVENT_LOSS`), and RTT_min restarts from the next RTT sample.
//! - RTT_min is the smallest RTT sample; the window length is the latest sample.
//!
//! Parameters: none (`{}`). The 7/8 filter gain and the 50 ms minimum window are Linux
//! constants.
//!
//! Deviations from Linux:
//! - Linux's `ssthresh` hook is Reno's (cwnd/2); at the end of recovery
//!   (`CA_EVENT_COMPLETE_CWR`) it sets `cwnd = ssthresh = BWE*RTT_min`, even when that
//!   is above the pre-loss cwnd. tcplab computes `BWE*RTT_min` when recovery starts,
//!   because `ssthresh_after_loss` is what the sender asks, and caps it at cwnd so that
//!   a loss never raises the window (Westwood paper: cwnd = min(cwnd, ssthresh)).
//! - Bytes are counted only for the ACKs `on_ack` sees (Open, and Loss after an RTO).
//!   Linux also counts ACKs during fast recovery, with duplicate ACKs as one MSS each
//!   (`westwood_acked_count`). A window that spans a recovery therefore underestimates.
//! - Floating-point bytes per second. Linux works in bytes per jiffy and floors the
//!   result to whole segments.
//! - Like Linux, a loss before the first bandwidth sample gives ssthresh = 2 MSS.

use super::{
    reno_additive_increase, AckInfo, CcEntry, CongestionControl,
    ParamInfo, Window,
};
use crate::time::{SimDuration, SimTime};
use serde::Deserialize;

/// Shortest bandwidth-sampling window (Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20).
const SAMPLE_WINDOW_MIN: SimDuration = SimDuration::from_millis(50);

/// Westwood+ has no parameters; `{}` is the only accepted object.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// The two cascaded low-pass filters of Westwood+, bytes per second.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bandwidth {
    /// First stage (Linux `bw_ns_est`).
    bw_ns: f64,
    /// The estimate BWE (Linux `bw_est`).
    bwe: f64,
}

/// Westwood+ state.
#[derive(Clone, Debug, Default)]
pub struct Westwood {
    /// `None` until the first sample, and again if both filters are zero (Linux
    /// refills the filter in that case).
    bandwidth: Option<Bandwidth>,
    /// Start of the current sampling window (Linux `rtt_win_sx`); `None` before the
    /// first hook.
    window_start: Option<SimTime>,
    /// Bytes acked in the current window (Linux `bk`).
    window_bytes: u64,
    /// The latest RTT sample (Linux `rtt`).
    rtt: Option<SimDuration>,
    rtt_min: Option<SimDuration>,
    /// Take RTT_min from the next sample (after an RTO; Linux `reset_rtt_min`).
    reset_rtt_min: bool,
}

impl Westwood {
    pub fn new() -> Self {
        Westwood::default()
    }

    /// BWE * RTT_min in bytes, or 0 without an estimate (Linux `tcp_westwood_bw_rttmin`).
    fn bw_rtt_min(&self) -> u64 {
        match (self.bandwidth, self.rtt_min) {
            (Some(b), Some(rtt)) => (b.bwe * rtt.as_secs_f64()).round() as u64,
            _ => 0,
        }
    }

    /// Closes the sampling window if it has lasted more than max(RTT, 50 ms) (Linux
    /// `westwood_update_window`).
    fn update_window(&mut self, now: SimTime) {
        let start = *self.window_start.get_or_insert(now);
        let Some(rtt) = self.rtt else { return };
        let elapsed = now.since(start);
        if elapsed > rtt.max(SAMPLE_WINDOW_MIN) {
            let sample = self.window_bytes as f64 / elapsed.as_secs_f64();
            self.bandwidth = match self.bandwidth {
                None => Some(Bandwidth { bw_ns: sample, bwe: sample }),
                Some(b) => {
                    // bw_ns = (7*bw_ns + b)/8;  BWE = (7*BWE + bw_ns)/8   (Linux westwood_do_filter)
                    let bw_ns = (7.0 * b.bw_ns + sample) / 8.0;
                    let bwe = (7.0 * b.bwe + bw_ns) / 8.0;
                    Some(Bandwidth { bw_ns, bwe })
                }
            }
            .filter(|b| b.bw_ns > 0.0 || b.bwe > 0.0);
            self.window_bytes = 0;
            self.window_start = Some(now);
        }
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        // The window check runs before this ACK's bytes are added (Linux westwood_fast_bw).
        self.update_window(ack.now);
        self.window_bytes += ack.acked_bytes;
        let Some(acked) = super::slow_start_then_leftover(w, ack) else { return };
        reno_additive_increase(w, acked, 1.0);
    }

    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        // ssthresh = BWE * RTT_min, capped at cwnd, at least 2 MSS
        self.bw_rtt_min().min(w.cwnd).max(2 * w.mss as u64)
    }

    fn on_rto(&mut self, w: &mut Window, _now: SimTime) {
        // Linux CA_EVENT_LOSS: ssthresh = BWE*RTT_min (no cap), RTT_min from the next sample.
        w.ssthresh = self.bw_rtt_min().max(2 * w.mss as u64);
        self.reset_rtt_min = true;
    }

    fn on_packet_sent(&mut self, now: SimTime, _bytes: u32, _in_flight: u64) {
        self.window_start.get_or_insert(now);
    }

    fn on_rtt_sample(&mut self, rtt: SimDuration, _now: SimTime) {
        self.rtt = Some(rtt);
        // Linux update_rtt_min
        self.rtt_min = match self.rtt_min {
            Some(m) if !self.reset_rtt_min => Some(m.min(rtt)),
            _ => Some(rtt),
        };
        self.reset_rtt_min = false;
    }

    fn trace(&self) -> Vec<(&'static str, f64)> {
        let mut v = Vec::new();
        if let Some(b) = self.bandwidth {
            v.push(("bwe", b.bwe));
            v.push(("bw_ns", b.bw_ns));
        }
        if let Some(m) = self.rtt_min {
            v.push(("rtt_min", m.as_secs_f64()));
        }
        v
    }
}

pub const ENTRY: CcEntry = CcEntry {
    name: "westwood",
    summary: "Westwood+: Reno growth, ssthresh = bandwidth estimate * RTT_min after loss",
    reference: "Mascolo et al., MobiCom 2001; Grieco & Mascolo, CCR 2004; Linux tcp_westwood.c",
    params: Vec::<ParamInfo>::new,
    build: |v, _w| {
        let _: Params = super::parse_params("westwood", v)?;
        Ok(Box::new(Westwood::new()))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u32 = 1000;

    fn trace(t: &TestSender, key: &str) -> Option<f64> {
        t.cc.trace().into_iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// 10 segments sent at each RTT boundary and acked by one ACK one RTT later.
    fn flights(t: &mut TestSender, n: usize) {
        for _ in 0..n {
            t.send(10);
            t.advance(t.rtt);
            t.ack_n(10);
        }
    }

    #[test]
    fn bandwidth_is_sampled_once_per_rtt_and_filtered() {
        // RTT 100 ms, 10 000 B per RTT (100 000 B/s). The window opens at the first send
        // (t = 0) and closes at the first ACK more than 100 ms later:
        // t = 0.1: 100 ms, not > 100 ms; bk = 10 000
        // t = 0.2: 200 ms -> b = 10 000/0.2 = 50 000 B/s; bw_ns = BWE = 50 000; bk = 10 000
        // t = 0.3: 100 ms, not > 100 ms; bk = 20 000
        // t = 0.4: 200 ms -> b = 20 000/0.2 = 100 000;
        //          bw_ns = (7*50 000 + 100 000)/8 = 56 250; BWE = (7*50 000 + 56 250)/8 = 50 781.25
        let mut t = TestSender::new(Box::new(Westwood::new()), MSS, 10, true);
        t.w.ssthresh = 100 * MSS as u64;
        flights(&mut t, 2);
        assert_eq!(trace(&t, "bwe"), Some(50_000.0));
        flights(&mut t, 2);
        assert_eq!(trace(&t, "bw_ns"), Some(56_250.0));
        assert_eq!(trace(&t, "bwe"), Some(50_781.25));
        // ssthresh = BWE * RTT_min = 50 781.25 * 0.1 = 5078 B (below cwnd, 18 segments
        // after slow start at +2 MSS per ACK, so no cap).
        t.lose();
        assert_eq!(t.w.ssthresh, 5078);
        assert_eq!(t.w.cwnd, 5078);
    }

    #[test]
    fn ssthresh_is_capped_at_cwnd_and_floored_at_two_mss() {
        let mut t = TestSender::new(Box::new(Westwood::new()), MSS, 10, true);
        // No bandwidth sample yet: 2 MSS, as Linux.
        assert_eq!(t.cc.ssthresh_after_loss(&t.w, 0), 2 * MSS as u64);
        t.w.ssthresh = 100 * MSS as u64;
        flights(&mut t, 4); // BWE = 50 781.25 B/s, RTT_min 100 ms -> 5078 B
        t.w.cwnd = 4 * MSS as u64;
        // 5078 > cwnd 4000: the loss keeps cwnd (paper: cwnd = min(cwnd, ssthresh)).
        assert_eq!(t.cc.ssthresh_after_loss(&t.w, 0), 4 * MSS as u64);
    }

    #[test]
    fn rto_sets_uncapped_ssthresh_and_resets_rtt_min() {
        let mut t = TestSender::new(Box::new(Westwood::new()), MSS, 10, true);
        t.w.ssthresh = 100 * MSS as u64;
        flights(&mut t, 4);
        t.w.cwnd = 4 * MSS as u64;
        t.send(4);
        t.rto();
        // ssthresh = BWE*RTT_min = 5078 B even though the pre-RTO cwnd was 4000 B.
        assert_eq!(t.w.ssthresh, 5078);
        assert_eq!(t.w.cwnd, MSS as u64);
        // RTT_min restarts from the next sample, even a larger one.
        t.rtt = SimDuration::from_millis(150);
        flights(&mut t, 1);
        assert!((trace(&t, "rtt_min").unwrap() - 0.15).abs() < 1e-12);
    }
}
