//! A congestion-control-only harness on a manual clock (after quiche's `TestSender`).
//!
//! It models just enough of a sender to drive the hooks: segments in flight, an RTT,
//! and the loss reactions of the real sender (ssthresh from `ssthresh_after_loss`,
//! cwnd = ssthresh after fast retransmit, cwnd = 1 MSS after an RTO, RFC 5681 §3.1-3.2).
//! Tests call `send`, `ack_n`, `lose`, `rto` and `advance`.

use super::{AckInfo, CaState, CongestionControl, RateSample, Window};
use crate::time::{SimDuration, SimTime};
use std::collections::VecDeque;

pub struct TestSender {
    pub cc: Box<dyn CongestionControl>,
    pub w: Window,
    pub now: SimTime,
    /// Segments sent and not yet acked or lost.
    pub in_flight: u64,
    pub rtt: SimDuration,
    pub min_rtt: Option<SimDuration>,
    pub state: CaState,
    /// Bytes delivered so far (for rate samples).
    pub delivered: u64,
    /// `delivered` at the time each in-flight segment was sent, oldest first (the
    /// per-packet `P.delivered` of draft-cheng-iccrg-delivery-rate-estimation).
    sent_delivered: VecDeque<u64>,
}

impl TestSender {
    /// A sender with `iw` segments of `mss` bytes, unbounded ssthresh and a 100 ms RTT.
    pub fn new(cc: Box<dyn CongestionControl>, mss: u32, iw: u64, byte_counting: bool) -> Self {
        TestSender {
            cc,
            w: Window::new(iw * mss as u64, u64::MAX, mss, byte_counting, 2),
            now: SimTime(0),
            in_flight: 0,
            rtt: SimDuration::from_millis(100),
            min_rtt: None,
            state: CaState::Open,
            delivered: 0,
            sent_delivered: VecDeque::new(),
        }
    }

    fn mss(&self) -> u64 {
        self.w.mss as u64
    }

    /// Sends `n` segments.
    pub fn send(&mut self, n: u64) {
        for _ in 0..n {
            self.in_flight += 1;
            self.sent_delivered.push_back(self.delivered);
            let inflight = self.in_flight * self.mss();
            self.cc.on_packet_sent(self.now, self.w.mss, inflight);
        }
    }

    /// Sends until cwnd is full.
    pub fn fill(&mut self) {
        let cwnd_segs = self.w.cwnd / self.mss();
        if cwnd_segs > self.in_flight {
            self.send(cwnd_segs - self.in_flight);
        }
    }

    /// One ACK covering `n` segments, with an RTT sample of `self.rtt`.
    pub fn ack_n(&mut self, n: u64) {
        let prior = self.in_flight * self.mss();
        self.in_flight = self.in_flight.saturating_sub(n);
        let acked = n * self.mss();
        // The most recently sent of the acked segments gives the sample's
        // prior_delivered (draft-cheng: the newest acked packet's P.delivered).
        let mut prior_delivered = self.delivered;
        for _ in 0..n {
            match self.sent_delivered.pop_front() {
                Some(d) => prior_delivered = d,
                None => break,
            }
        }
        self.delivered += acked;
        self.min_rtt = Some(self.min_rtt.map_or(self.rtt, |m| m.min(self.rtt)));
        self.cc.on_rtt_sample(self.rtt, self.now);
        let rs = RateSample {
            now: self.now,
            delivered: acked.max(prior),
            interval: self.rtt,
            rtt: Some(self.rtt),
            is_app_limited: false,
            lost: 0,
            prior_in_flight: prior,
            prior_delivered,
            total_delivered: self.delivered,
        };
        self.cc.on_rate_sample(&mut self.w, &rs);
        if self.state == CaState::Open {
            let info = AckInfo {
                now: self.now,
                acked_bytes: acked,
                rtt: Some(self.rtt),
                srtt: Some(self.rtt),
                min_rtt: self.min_rtt,
                in_flight: prior,
                cwnd_limited: true,
            };
            self.cc.on_ack(&mut self.w, &info);
        }
    }

    /// Fills cwnd, advances one RTT, then acks every segment one ACK at a time.
    pub fn round_trip_all(&mut self) {
        self.fill();
        self.advance(self.rtt);
        let n = self.in_flight;
        for _ in 0..n {
            self.ack_n(1);
        }
    }

    /// A loss detected by three duplicate ACKs: ssthresh from the algorithm, cwnd set
    /// to ssthresh, as the sender does on leaving fast recovery (RFC 6582 §3.2 step 3).
    pub fn lose(&mut self) {
        let flight = self.in_flight * self.mss();
        self.set_state(CaState::Recovery);
        self.w.ssthresh = self.cc.ssthresh_after_loss(&self.w, flight);
        self.in_flight = self.in_flight.saturating_sub(1);
        self.sent_delivered.pop_front();
        self.w.cwnd = self.w.ssthresh;
        self.set_state(CaState::Open);
    }

    /// A retransmission timeout: ssthresh from the algorithm, cwnd = 1 MSS
    /// (RFC 5681 §3.1: LossWindow), everything in flight considered lost.
    pub fn rto(&mut self) {
        let flight = self.in_flight * self.mss();
        self.w.ssthresh = self.cc.ssthresh_after_loss(&self.w, flight);
        self.w.cwnd = self.mss();
        self.in_flight = 0;
        self.sent_delivered.clear();
        self.set_state(CaState::Loss);
        self.cc.on_rto(&mut self.w, self.now);
        self.set_state(CaState::Open);
    }

    pub fn advance(&mut self, d: SimDuration) {
        self.now += d;
    }

    fn set_state(&mut self, to: CaState) {
        let from = self.state;
        if from != to {
            self.cc.on_state_change(&mut self.w, from, to, self.now);
            self.state = to;
        }
    }
}
