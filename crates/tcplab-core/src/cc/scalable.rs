//! Scalable TCP (T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
//! Networks", ACM CCR 33(2), 2003), as in Linux `net/ipv4/tcp_scalable.c`.
//!
//! - Congestion avoidance above `low_window`: `cwnd += a` per segment acked, a = 0.01
//!   (+1 segment per 100 segments acked). The increase per RTT is proportional to cwnd,
//!   so the time to recover from a loss does not depend on the window.
//! - At or below `low_window`: Reno, `cwnd += 1/cwnd` per segment acked.
//! - Loss: `ssthresh = max(cwnd*(1-b), 2 MSS)` with b = 0.125, i.e. 0.875*cwnd. The
//!   sender sets cwnd = ssthresh when recovery ends.
//! - Slow start is unchanged.
//!
//! Parameters (`Params`, JSON names):
//! - `ai` = 0.01, segments per segment acked: additive increase a.
//! - `md` = 0.125, dimensionless: multiplicative decrease b.
//! - `low_window` = 50, segments: Reno growth at or below.
//!
//! Deviations from Linux:
//! - Linux has no separate low-window constant. It calls
//!   `tcp_cong_avoid_ai(tp, min(cwnd, TCP_SCALABLE_AI_CNT), acked)`, which is +1 segment
//!   per min(cwnd, AI_CNT) segments acked. That is Reno below AI_CNT and 1/AI_CNT above.
//!   Current Linux uses AI_CNT = 100 (a = 0.01), so the two regimes meet at 100 segments.
//!   Linux 2.6 and ns-3 (`AIFactor`) use 50, counted per ACK to allow for delayed ACKs.
//!   tcplab's default `low_window` = 50 keeps a = 0.01 above 50 segments, so the
//!   increase drops from 1/50 to 1/100 per segment at the switch. Set `low_window` = 100
//!   to reproduce current Linux exactly.
//! - The decrease 0.875 applies at every window, as in Linux. Kelly's legacy regime
//!   would halve below the low window.

use super::{
    reno_additive_increase, AckInfo, CcEntry, CongestionControl, ParamInfo,
    Window,
};
use serde::Deserialize;

/// Scalable TCP parameters (JSON object `params` of `{"name": "scalable"}`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Additive increase a, segments per segment acked, > 0. Default 0.01 (Kelly 2003).
    pub ai: f64,
    /// Multiplicative decrease b, dimensionless, in (0, 1). Default 0.125: ssthresh =
    /// 0.875*cwnd (Kelly 2003, Linux `TCP_SCALABLE_MD_SCALE` = 3).
    pub md: f64,
    /// Reno growth at or below this cwnd, segments. Default 50.
    pub low_window: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params { ai: 0.01, md: 0.125, low_window: 50 }
    }
}

impl Params {
    fn validate(&self) -> Result<(), String> {
        if !(self.ai > 0.0 && self.ai.is_finite()) {
            return Err(format!("cc 'scalable' params: ai = {}; accepted: finite ai > 0", self.ai));
        }
        if !(self.md > 0.0 && self.md < 1.0) {
            return Err(format!("cc 'scalable' params: md = {}; accepted: 0 < md < 1", self.md));
        }
        Ok(())
    }
}

fn param_info() -> Vec<ParamInfo> {
    let d = Params::default();
    vec![
        ParamInfo { name: "ai", unit: "segments/segment acked", default: d.ai, doc: "additive increase a above low_window" },
        ParamInfo { name: "md", unit: "1", default: d.md, doc: "multiplicative decrease b (ssthresh = (1-b)*cwnd)" },
        ParamInfo { name: "low_window", unit: "segments", default: d.low_window as f64, doc: "Reno growth at or below this cwnd" },
    ]
}

/// Scalable TCP (stateless apart from its parameters).
#[derive(Clone, Debug)]
pub struct Scalable {
    p: Params,
}

impl Scalable {
    pub fn new(p: Params) -> Self {
        Scalable { p }
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        let Some(acked) = super::slow_start_then_leftover(w, ack) else { return };
        let cwnd_segments = w.cwnd_segments();
        if cwnd_segments <= self.p.low_window as f64 {
            reno_additive_increase(w, acked, 1.0);
        } else {
            // cwnd += a per segment acked: a*cwnd segments per cwnd of bytes acked.
            reno_additive_increase(w, acked, self.p.ai * cwnd_segments);
        }
    }

    fn ssthresh_after_loss(&self, w: &Window, _in_flight: u64) -> u64 {
        // ssthresh = cwnd - b*cwnd = 0.875*cwnd
        ((w.cwnd as f64 * (1.0 - self.p.md)).round() as u64).max(2 * w.mss as u64)
    }
}

pub const ENTRY: CcEntry = CcEntry {
    name: "scalable",
    summary: "Scalable TCP: +0.01 segment per segment acked, ssthresh = 0.875*cwnd",
    reference: "Kelly, ACM CCR 33(2) 2003; Linux tcp_scalable.c",
    params: param_info,
    build: |v, _w| {
        let p: Params = super::parse_params("scalable", v)?;
        p.validate()?;
        Ok(Box::new(Scalable::new(p)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::TestSender;

    const MSS: u32 = 1000;

    fn scalable(iw: u64, byte_counting: bool) -> TestSender {
        let mut t = TestSender::new(Box::new(Scalable::new(Params::default())), MSS, iw, byte_counting);
        t.w.ssthresh = t.w.cwnd; // congestion avoidance
        t
    }

    #[test]
    fn per_ack_growth_is_one_hundredth_of_a_segment_above_low_window() {
        // Byte counting, cwnd 200 segments: +a = 0.01 segment per segment acked, so
        // +1 MSS exactly after 100 single-segment ACKs and not before.
        let mut t = scalable(200, true);
        t.send(100);
        for _ in 0..99 {
            t.ack_n(1);
        }
        assert_eq!(t.w.cwnd, 200 * MSS as u64);
        t.ack_n(1);
        assert_eq!(t.w.cwnd, 201 * MSS as u64);
        // Per-ACK counting, cwnd 100 segments: each ACK adds
        // MSS*MSS*(0.01*cwnd/MSS)/cwnd = 0.01*MSS = 10 B.
        let mut t = scalable(100, false);
        t.send(1);
        t.ack_n(1);
        assert_eq!(t.w.cwnd, 100 * MSS as u64 + 10);
    }

    #[test]
    fn growth_per_rtt_is_proportional_to_cwnd() {
        // One RTT at 1000 segments acks 1000 segments: +0.01*1000 = +10 segments.
        // At 2000 segments: +20. (Reno would add 1 in both cases.)
        for (w, grow) in [(1000, 10), (2000, 20)] {
            let mut t = scalable(w, true);
            t.round_trip_all();
            assert_eq!(t.w.cwnd, (w + grow) * MSS as u64, "cwnd {w}");
        }
    }

    #[test]
    fn reno_at_or_below_low_window() {
        // cwnd 40 <= 50: Reno adds 1 MSS per 40 segments acked.
        let mut t = scalable(40, true);
        t.round_trip_all();
        assert_eq!(t.w.cwnd, 41 * MSS as u64);
    }

    #[test]
    fn loss_keeps_seven_eighths() {
        // ssthresh = 0.875 * 200 segments = 175 segments; floor 2 MSS.
        let t = scalable(200, true);
        assert_eq!(t.cc.ssthresh_after_loss(&t.w, 0), 175 * MSS as u64);
        let small = scalable(2, true);
        assert_eq!(small.cc.ssthresh_after_loss(&small.w, 0), 2 * MSS as u64);
    }
}
