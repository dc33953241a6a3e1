//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02; Linux
//! `net/ipv4/tcp_rate.c`).
//!
//! Each transmission records the connection's delivery state (`P.delivered`,
//! `P.delivered_time`, `P.first_sent_time`, app-limited flag). When an ACK newly
//! delivers data, the sample is taken from the most recently *sent* of the newly
//! delivered segments:
//!
//! ```text
//! delivered  = C.delivered - P.delivered
//! send_elapsed = P.sent_time - P.first_sent_time
//! ack_elapsed  = C.delivered_time - P.delivered_time
//! interval   = max(send_elapsed, ack_elapsed)        (draft §3.3)
//! ```
//!
//! A sample whose interval is shorter than the minimum RTT is discarded (§3.3: it
//! would overestimate the rate after ACK compression).
//!
//! Deviation: with SACK the draft inspects every newly SACKed segment; tcplab
//! considers the segment at the top of the first SACK block (the receiver's most
//! recent arrival, RFC 2018 §4) and the highest cumulatively acked segment, and takes
//! whichever was sent last. This keeps the per-ACK cost O(log n) at large windows.

use crate::cc::RateSample;
use crate::time::{SimDuration, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct TxRecord {
    seq: u64,
    end: u64,
    sent_time: SimTime,
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    app_limited: bool,
    /// Sent more than once: its RTT is ambiguous (Karn).
    retransmitted: bool,
}

/// The sender-side delivery-rate estimator.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    /// Outstanding transmissions in sequence order (one record per segment).
    tx: VecDeque<TxRecord>,
    /// C.delivered: bytes delivered (acked or SACKed) so far.
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    /// C.app_limited: the delivered count at which the app-limited phase ends (0: off).
    app_limited_until: u64,
}

impl RateSampler {
    /// Heap bytes held (one record per outstanding transmission, at its peak count).
    pub fn heap_bytes(&self) -> usize {
        self.tx.capacity() * std::mem::size_of::<TxRecord>()
    }
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Records a transmission of [seq, end) at `now`; `in_flight` before this send.
    pub fn on_send(&mut self, seq: u64, end: u64, now: SimTime, in_flight: u64) {
        if in_flight == 0 {
            // §3.2: restart the send and delivery clocks after an idle period.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let rec = TxRecord {
            seq,
            end,
            sent_time: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited_until != 0,
            retransmitted: false,
        };
        match self.tx.back() {
            Some(b) if b.seq >= seq => {
                // A retransmission: refresh the record of that segment.
                let i = self.index_near(seq, |r| r.seq < seq);
                if self.tx.get(i).is_some_and(|r| r.seq == seq) {
                    self.tx[i] = TxRecord { end: self.tx[i].end.max(end), retransmitted: true, ..rec };
                }
            }
            _ => self.tx.push_back(rec),
        }
    }

    /// Asks `line` to load the first and the last transmission's records.
    pub fn prefetch_ends(&self, line: impl Fn(*const u8)) {
        if let (Some(f), Some(b)) = (self.tx.front(), self.tx.back()) {
            line(f as *const TxRecord as *const u8);
            line(b as *const TxRecord as *const u8);
        }
    }

    /// The first record for which `pred` is false (`pred` true for a prefix), guessing
    /// from `seq`'s distance to the first record that the records are as long as it
    /// (they are one per segment, nearly all MSS-sized).
    fn index_near(&self, seq: u64, pred: impl Fn(&TxRecord) -> bool) -> usize {
        let guess = self.tx.front().map_or(0, |f| (seq.saturating_sub(f.seq) / (f.end - f.seq).max(1)) as usize);
        super::partition_point_from(&self.tx, guess, pred)
    }

    /// The sender ran out of data with room in cwnd: mark the pipe app-limited (§3.4).
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    /// Processes an ACK: `cum_ack` the new cumulative ACK, `newly_delivered` the bytes
    /// this ACK newly acked or SACKed (without double counting), `top_sack` the end of
    /// the first SACK block if it carried new information. Returns the rate sample if
    /// valid, and the RTT of the newest delivered segment if it was never retransmitted
    /// (Karn): one RTT sample per ACK, as Linux gives its congestion controls.
    pub fn on_ack(
        &mut self,
        now: SimTime,
        cum_ack: u64,
        newly_delivered: u64,
        top_sack: Option<u64>,
        min_rtt: Option<SimDuration>,
        prior_in_flight: u64,
        lost: u64,
    ) -> (Option<RateSample>, Option<SimDuration>) {
        if newly_delivered == 0 {
            return (None, None);
        }
        self.delivered += newly_delivered;
        self.delivered_time = now;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        // Candidates: the last cumulatively acked record and the SACKed top segment.
        let mut newest: Option<TxRecord> = None;
        while let Some(r) = self.tx.front() {
            if r.end > cum_ack {
                break;
            }
            let r = self.tx.pop_front().unwrap();
            if newest.is_none_or(|n| r.sent_time >= n.sent_time) {
                newest = Some(r);
            }
        }
        if let Some(top) = top_sack {
            let i = self.index_near(top.saturating_sub(1), |r| r.end < top);
            if let Some(r) = self.tx.get(i).copied() {
                if r.seq < top && newest.is_none_or(|n| r.sent_time >= n.sent_time) {
                    newest = Some(r);
                }
            }
        }
        let Some(p) = newest else { return (None, None) };
        let rtt = (!p.retransmitted).then(|| now.since(p.sent_time));
        // §3.3: the next sample's send clock starts at this packet's send time.
        self.first_sent_time = p.sent_time;
        let send_elapsed = p.sent_time.since(p.first_sent_time);
        let ack_elapsed = now.since(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        if interval.0 == 0 || min_rtt.is_some_and(|m| interval < m) {
            return (None, rtt);
        }
        let sample = RateSample {
            now,
            delivered: self.delivered - p.delivered,
            interval,
            rtt,
            is_app_limited: p.app_limited,
            lost,
            prior_in_flight,
            prior_delivered: p.delivered,
            total_delivered: self.delivered,
        };
        (Some(sample), rtt)
    }

    /// After an RTO everything outstanding may be resent; keep the records (their
    /// retransmissions refresh them).
    pub fn clear(&mut self) {
        self.tx.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_ack_clock_gives_the_bottleneck_rate() {
        // 10 segments of 1000 B sent back to back at t = 0; the bottleneck releases one
        // every 1 ms, RTT 100 ms: the ACK of segment k arrives at 100 + k ms.
        let mut r = RateSampler::default();
        for k in 0..10u64 {
            r.on_send(k * 1000, (k + 1) * 1000, SimTime(0), k * 1000);
        }
        let ms = |x: u64| SimTime(x * 1_000_000);
        let mut last = None;
        for k in 0..10u64 {
            last = r.on_ack(ms(100 + k), (k + 1) * 1000, 1000, None, Some(SimDuration::from_millis(100)), 0, 0).0;
        }
        // Last sample: P = segment 9, sent when nothing was delivered (P.delivered = 0,
        // P.delivered_time = 0): delivered = 10000 B, interval = max(send_elapsed 0,
        // ack_elapsed 109 ms) = 109 ms.
        let s = last.unwrap();
        assert_eq!(s.delivered, 10_000);
        assert_eq!(s.interval, SimDuration::from_millis(109));
        assert_eq!(s.prior_delivered, 0);
        assert_eq!(s.total_delivered, 10_000);
    }

    #[test]
    fn sacked_top_segment_sent_last_gives_the_sample() {
        // Segments 0..4 (1000 B) sent at 0 ms. ACK at 100 ms acks segment 0. Segment 4
        // is sent at 100 ms (P.delivered = 1000, P.delivered_time = 100 ms,
        // P.first_sent_time = 0 ms, set from segment 0's send time by the first sample).
        // Segment 1 is lost; at 200 ms an ACK SACKs segment 4 (top of the first block):
        // delivered = 2000 - 1000 = 1000 B; send_elapsed = 100 - 0 = 100 ms;
        // ack_elapsed = 200 - 100 = 100 ms; interval = 100 ms -> 10 kB/s.
        let ms = |x: u64| SimTime(x * 1_000_000);
        let mut r = RateSampler::default();
        for k in 0..4u64 {
            r.on_send(k * 1000, (k + 1) * 1000, ms(0), k * 1000);
        }
        assert!(r.on_ack(ms(100), 1000, 1000, None, None, 4000, 0).0.is_some());
        r.on_send(4000, 5000, ms(100), 3000);
        let s = r.on_ack(ms(200), 1000, 1000, Some(5000), None, 4000, 0).0.unwrap();
        assert_eq!(s.prior_delivered, 1000);
        assert_eq!(s.delivered, 1000);
        assert_eq!(s.interval, SimDuration::from_millis(100));
        assert_eq!(s.rtt, Some(SimDuration::from_millis(100)));
        assert!((s.rate_bytes_per_s().unwrap() - 10_000.0).abs() < 1e-9);
    }

    #[test]
    fn retransmitted_segments_give_no_rtt_sample() {
        // Karn: segment sent at 0 ms, retransmitted at 300 ms, acked at 350 ms: the
        // RTT is ambiguous (50 or 350 ms), so no sample.
        let ms = |x: u64| SimTime(x * 1_000_000);
        let mut r = RateSampler::default();
        r.on_send(0, 1000, ms(0), 0);
        r.on_send(0, 1000, ms(300), 1000);
        let (_, rtt) = r.on_ack(ms(350), 1000, 1000, None, None, 1000, 0);
        assert_eq!(rtt, None);
    }

    #[test]
    fn short_interval_samples_are_discarded() {
        let mut r = RateSampler::default();
        r.on_send(0, 1000, SimTime(0), 0);
        // ACK after 1 ms with min RTT 10 ms: interval 1 ms < min RTT -> no sample.
        let (s, rtt) = r.on_ack(SimTime(1_000_000), 1000, 1000, None, Some(SimDuration::from_millis(10)), 1000, 0);
        assert!(s.is_none());
        assert_eq!(rtt, Some(SimDuration::from_millis(1))); // the RTT sample still counts
        assert_eq!(r.delivered(), 1000);
    }
}
