//! Reno / NewReno congestion control (RFC 5681 §3.1; NewReno's recovery, RFC 6582,
//! lives in the sender because it is loss recovery, not window policy).
//!
//! - Slow start while cwnd < ssthresh: +1 MSS per ACK, or with byte counting
//!   +min(acked, L*MSS) (RFC 3465 §2.2).
//! - Congestion avoidance: `cwnd += MSS*MSS/cwnd` per ACK (RFC 5681 eq. 3, ns-2), or
//!   +1 MSS per cwnd of bytes acked (RFC 3465 §2.1, Linux `tcp_reno_cong_avoid`).
//! - On loss: ssthresh = max(FlightSize/2, 2*MSS) (RFC 5681 eq. 4).
//!
//! Parameters: none. Deviation from Linux: Linux halves cwnd, not FlightSize
//! (`tcp_reno_ssthresh` uses `tcp_snd_cwnd`); tcplab follows the RFC.

use super::{
    reno_additive_increase, reno_ssthresh, AckInfo, CcEntry, CongestionControl,
    ParamInfo, Window,
};
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

#[derive(Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        let Some(acked) = super::slow_start_then_leftover(w, ack) else { return };
        reno_additive_increase(w, acked, 1.0);
    }
    fn ssthresh_after_loss(&self, w: &Window, in_flight: u64) -> u64 {
        reno_ssthresh(in_flight, w.mss)
    }
}

pub const ENTRY: CcEntry = CcEntry {
    name: "reno",
    summary: "Reno/NewReno AIMD: slow start, +1 MSS per RTT, halve on loss",
    reference: "RFC 5681 §3.1, RFC 3465 (byte counting), RFC 6582 (NewReno recovery)",
    params: Vec::<ParamInfo>::new,
    build: |v, _w| {
        let _: Params = super::parse_params("reno", v)?;
        Ok(Box::new(Reno))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    #[test]
    fn slow_start_doubles_per_rtt_per_ack_counting() {
        // IW 3, one ACK per segment: after one RTT cwnd = 6 MSS, after two 12 MSS.
        let mut t = TestSender::new(Box::new(Reno), 1460, 3, false);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 6 * 1460);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 12 * 1460);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_mss_per_rtt() {
        // cwnd = ssthresh = 10 MSS; ten ACKs of 1 MSS each add MSS*MSS/cwnd each:
        // 1460*1460/14600 = 146 B, then slightly less as cwnd grows:
        // sum_{k<10} floor(1460^2 / cwnd_k) = 146+144+143+...+134 = 1395 B (~0.96 MSS).
        let mut t = TestSender::new(Box::new(Reno), 1460, 10, false);
        t.w.ssthresh = t.w.cwnd;
        t.round_trip_all();
        let grown = t.w.cwnd - 14600;
        assert_eq!(grown, 1395);
        // Byte counting: exactly one MSS after one cwnd of bytes.
        let mut b = TestSender::new(Box::new(Reno), 1460, 10, true);
        b.w.ssthresh = b.w.cwnd;
        b.round_trip_all();
        assert_eq!(b.w.cwnd, 14600 + 1460);
    }

    #[test]
    fn delayed_acks_with_byte_counting_keep_one_mss_per_rtt() {
        // RFC 3465 §2.1: with an ACK every 2 segments, CA still adds 1 MSS per RTT.
        let mut b = TestSender::new(Box::new(Reno), 1460, 10, true);
        b.w.ssthresh = b.w.cwnd;
        for _ in 0..5 {
            b.ack_n(2);
        }
        assert_eq!(b.w.cwnd, 14600 + 1460);
    }

    #[test]
    fn loss_halves_flight() {
        // FlightSize 20 MSS -> ssthresh 10 MSS; tiny flight floors at 2 MSS.
        let t = TestSender::new(Box::new(Reno), 1460, 20, false);
        assert_eq!(t.cc.ssthresh_after_loss(&t.w, 20 * 1460), 10 * 1460);
        assert_eq!(t.cc.ssthresh_after_loss(&t.w, 1460), 2 * 1460);
    }
}
