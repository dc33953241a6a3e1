//! The event scheduler: a binary heap keyed by `(time, insertion sequence)`.
//!
//! Events at the same instant run in the order they were scheduled (FIFO), so the
//! run order never depends on heap internals, and a run is bit-reproducible.
//! Cancellation is lazy: timers carry a generation number and stale events are
//! dropped when popped (see `tcp::LazyTimer`).

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap, we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Scheduler<E> {
    pub fn with_capacity(n: usize) -> Self {
        Scheduler { heap: BinaryHeap::with_capacity(n), next_seq: 0, now: SimTime::ZERO, popped: 0 }
    }
    /// Schedules `event` at `time` (never before now).
    pub fn schedule(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let time = time.max(self.now);
        self.heap.push(Entry { time, seq: self.next_seq, event });
        self.next_seq += 1;
    }
    /// Removes the earliest event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.event))
    }
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Events popped so far.
    pub fn events(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_are_fifo_and_time_ordered() {
        let mut s = Scheduler::with_capacity(8);
        s.schedule(SimTime(5), 'c');
        s.schedule(SimTime(1), 'a');
        s.schedule(SimTime(5), 'd');
        s.schedule(SimTime(1), 'b');
        let order: Vec<char> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(s.now(), SimTime(5));
        assert_eq!(s.events(), 4);
    }
}
