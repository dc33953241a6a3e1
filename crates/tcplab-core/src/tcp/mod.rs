//! TCP endpoints: configuration and profiles, sender, receiver, RTT estimation, SACK
//! scoreboard, Proportional Rate Reduction, RACK and the Tail Loss Probe.
//!
//! Endpoints do no I/O: each call receives the current time and appends what it
//! wants sent to an `Outbox` (segments, timer requests), which the simulation turns
//! into packets and events.

pub mod config;
pub mod frto;
pub mod gso;
pub mod prr;
pub mod quickack;
pub mod rack;
pub mod receiver;
pub mod rate;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod tlp;

use crate::net::packet::{Ecn, TcpHeader};
use crate::time::SimTime;
use std::collections::VecDeque;

/// `VecDeque::partition_point` (the first index where `pred` turns false; `pred` must
/// be true for a prefix and false after it) that looks at index `guess` first.
///
/// The sender's per-segment records are in sequence order and nearly all one MSS
/// long, so the index of a sequence number is guessed from its distance to the first
/// record: the guess is then exact or one off, and the search reads two records. A
/// binary search reads log2(n) records, one after the other, and with thousands of
/// connections each read is a cache miss (the rate sampler's search was a quarter of
/// `TcpSender::on_ack`'s samples in a profile at 10,000 flows). A wrong guess costs a
/// binary search of the side it missed; the result never depends on it
/// (`tests::partition_point_from_agrees_with_the_std_one`).
pub(crate) fn partition_point_from<T>(v: &VecDeque<T>, guess: usize, pred: impl Fn(&T) -> bool) -> usize {
    let n = v.len();
    if n == 0 {
        return 0;
    }
    let g = guess.min(n - 1);
    // The answer lies in [lo, hi].
    let (mut lo, mut hi) = if pred(&v[g]) {
        if g + 1 == n || !pred(&v[g + 1]) {
            return g + 1;
        }
        (g + 2, n)
    } else {
        if g == 0 || pred(&v[g - 1]) {
            return g;
        }
        (0, g - 1)
    };
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(&v[mid]) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Timers of a TCP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// Retransmission timer (sender).
    Rto,
    /// Delayed-ACK timer (receiver).
    DelAck,
    /// Pacing: the next segment may leave (sender, when the CC paces).
    Pacing,
    /// Tail loss probe timeout (sender, RFC 8985 §7).
    LossProbe,
    /// RACK reordering timer (sender, RFC 8985 §6.3).
    Reorder,
}

/// A segment an endpoint wants to send: the header, its size on the wire and the
/// ECN field of its IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub hdr: TcpHeader,
    pub size: u32,
    pub ecn: Ecn,
}

/// What an endpoint call produced.
#[derive(Default)]
pub struct Outbox {
    pub segments: Vec<Segment>,
    /// (timer, fire time, generation): schedule an event; stale generations are ignored.
    pub timers: Vec<(TimerKind, SimTime, u32)>,
}

impl Outbox {
    pub fn clear(&mut self) {
        self.segments.clear();
        self.timers.clear();
    }
}

/// A timer that is re-armed often but scheduled lazily: at most one event is pending;
/// when it fires early (the deadline moved later), it is re-scheduled at the new
/// deadline. This keeps the event heap free of per-ACK timer churn.
///
/// `NONE` (the end of time) stands for "no deadline" and "nothing pending", so a
/// timer is 24 bytes rather than 40: a connection has five.
#[derive(Clone, Copy, Debug)]
pub struct LazyTimer {
    deadline: SimTime,
    pending_at: SimTime,
    gen: u32,
}

impl Default for LazyTimer {
    fn default() -> Self {
        LazyTimer { deadline: Self::NONE, pending_at: Self::NONE, gen: 0 }
    }
}

impl LazyTimer {
    const NONE: SimTime = SimTime(u64::MAX);

    pub fn deadline(&self) -> Option<SimTime> {
        (self.deadline != Self::NONE).then_some(self.deadline)
    }
    /// Sets the deadline; asks for an event only if none is pending early enough.
    pub fn arm(&mut self, kind: TimerKind, at: SimTime, out: &mut Outbox) {
        debug_assert!(at != Self::NONE, "a timer at the end of time");
        self.deadline = at;
        if self.pending_at > at {
            self.gen = self.gen.wrapping_add(1);
            self.pending_at = at;
            out.timers.push((kind, at, self.gen));
        }
    }
    pub fn cancel(&mut self) {
        self.deadline = Self::NONE;
    }
    /// Handles the event of generation `gen` at `now`: true if the timer really
    /// expired (the caller then acts), false if stale or re-scheduled.
    pub fn fire(&mut self, kind: TimerKind, gen: u32, now: SimTime, out: &mut Outbox) -> bool {
        if gen != self.gen {
            return false;
        }
        self.pending_at = Self::NONE;
        match self.deadline() {
            None => false,
            Some(d) if d > now => {
                self.arm(kind, d, out);
                false
            }
            Some(_) => {
                self.deadline = Self::NONE;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStream;

    #[test]
    fn partition_point_from_agrees_with_the_std_one() {
        let mut rng = RngStream::new(5, "partition-point");
        for _ in 0..2000 {
            let n = rng.uniform_u64(0, 40) as usize;
            let mut v = VecDeque::new();
            let mut end = 0u64;
            for _ in 0..n {
                end += rng.uniform_u64(1, 3);
                v.push_back(end);
            }
            // Deques that wrap around their buffer, too.
            if n > 2 && rng.uniform() < 0.5 {
                v.rotate_left(1);
                let x = v.pop_back().unwrap();
                v.push_front(x);
            }
            for key in 0..=end + 1 {
                let want = v.partition_point(|&e| e <= key);
                for guess in [0, n / 2, n.saturating_sub(1), n + 3, rng.uniform_u64(0, n as u64 + 1) as usize] {
                    assert_eq!(partition_point_from(&v, guess, |&e| e <= key), want, "{v:?} key {key} guess {guess}");
                }
            }
        }
    }
}
