//! TCP endpoints: configuration and profiles, sender, receiver, RTT estimation, SACK
//! scoreboard, Proportional Rate Reduction, RACK and the Tail Loss Probe.
//!
//! Endpoints do no I/O: each call receives the current time and appends what it
//! wants sent to an `Outbox` (segments, timer requests), which the simulation turns
//! into packets and events.

pub mod config;
pub mod prr;
pub mod rack;
pub mod receiver;
pub mod rate;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod tlp;

use crate::net::packet::{Ecn, TcpHeader};
use crate::time::SimTime;

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
