//! The event scheduler: a 4-ary min-heap keyed by `(time, insertion sequence)`, fed
//! by a timing wheel that holds far-off timers until their time slot comes up, and
//! FIFO lanes for events scheduled a fixed delay after now.
//!
//! Events at the same instant run in the order they were scheduled (FIFO), so the
//! run order never depends on the data structures, and a run is bit-reproducible.
//! Cancellation is lazy: timers carry a generation number and stale events are
//! dropped when popped (see `tcp::LazyTimer`).
//!
//! - **Heap.** A 4-ary heap (d-ary heaps: Johnson 1975; LaMarca & Ladner 1996, "The
//!   influence of caches on the performance of heaps"): half the levels of a binary
//!   heap, and a node's four children are adjacent in memory.
//! - **Timing wheel** (Varghese & Lauck 1987, "Hashed and hierarchical timing wheels",
//!   scheme 4). With 10,000 flows nearly every pending event is a per-flow timer (a
//!   retransmission timer per flow, ~10,000; delayed-ACK timers, ~3,000) and only
//!   ~1,000 are link transmissions and arrivals, so a single heap is ~15,000 deep and
//!   every pop walks it. Events scheduled with `schedule_timer` for a later time slot
//!   (`SLOT_NS` wide) wait in that slot's bucket instead; when the heap's earliest
//!   event reaches a slot, the slot's bucket is moved into the heap first. The heap
//!   then holds the link events and the current slot's timers.
//!
//! Exactness: every event keeps the sequence number it got when scheduled, and a
//! bucket is moved into the heap before any event of its slot or a later one is
//! popped, so pops come out in exactly `(time, seq)` order, as from a single heap
//! (`tests::pops_in_time_then_fifo_order_like_a_sort` checks this against a sort).
//! Timers beyond the wheel's horizon (`SLOTS` slots) go straight into the heap.
//!
//! - **Delay lanes.** Most events are scheduled a fixed delay after now: a
//!   transmission ends `size / rate` after it starts, a packet arrives `delay` after
//!   it leaves. Events scheduled the same offset `d` after now come due in the order
//!   they were scheduled (now only grows, and so does the sequence number), so a
//!   plain FIFO per offset holds them in `(time, seq)` order and needs no sifting.
//!   `schedule_after` puts an event in the lane of its offset, or in an empty lane it
//!   then claims; the heap only takes such events when all `LANES` lanes hold other
//!   offsets. With 10,000 flows the heap held 300-1,000 arrivals on the access links,
//!   nearly all scheduled on the link's fixed propagation delay; now they wait in
//!   one lane.
//!
//!   The next arrival from a pipe is scheduled when the one before it arrives, and
//!   comes one serialization time later when the two left back to back: the delay of
//!   the link's `TxDone` lane. `schedule_after_if_lane` joins that lane if it exists
//!   and otherwise uses the heap, so gaps after idle periods claim no lane. With
//!   10,000 flows this took pipe arrivals (7.5 M of 17.7 M events) off the heap.
//!
//! Exactness with lanes: a pop takes the smallest `(time, seq)` among the heap's top
//! and the lanes' fronts, each of which is its own structure's smallest; the order is
//! therefore exactly a single heap's (`tests::pops_in_time_then_fifo_order_like_a_sort`
//! schedules with random offsets, repeated ones included).

use crate::time::SimTime;
use std::collections::VecDeque;

/// Children per heap node (`sift_down_from_root` unrolls for exactly four).
const ARITY: usize = 4;
/// Slot width: 2^19 ns = 524 µs.
const SLOT_SHIFT: u32 = 19;
/// Slots in the wheel (a power of two): 8192 slots of 524 µs = 4.29 s ahead.
const SLOTS: u64 = 8192;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn key(&self) -> u128 {
        // (time, seq) as one integer: one comparison, which compiles to a
        // conditional move rather than a branch the CPU would mispredict half the time.
        ((self.time.0 as u128) << 64) | self.seq as u128
    }
}

#[inline(always)]
fn slot_of(t: SimTime) -> u64 {
    t.0 >> SLOT_SHIFT
}

/// End of a bucket's list / of the free list.
const NIL: u32 = u32::MAX;
/// Delay lanes. A dumbbell uses 5-8 offsets at once (two propagation delays, data
/// and ACK serialization at two rates, back-to-back arrivals); every pop compares the
/// lanes' fronts, so more lanes cost every event.
const LANES: usize = 8;
/// Key of an empty lane: above every event's.
const EMPTY: u128 = u128::MAX;

pub struct Scheduler<E> {
    heap: Vec<Entry<E>>,
    /// `heads[s % SLOTS]` starts the list of the timers of absolute slot `s`, for
    /// `cursor < s <= cursor + SLOTS`. The lists are threaded through `slab`, whose
    /// free cells form another list: once the slab has grown to the most timers ever
    /// waiting at once, the wheel allocates nothing.
    heads: Vec<u32>,
    slab: Vec<(Entry<E>, u32)>,
    free: u32,
    /// Every slot up to and including `cursor` has been moved into the heap.
    cursor: u64,
    /// Timers waiting in buckets.
    in_wheel: usize,
    /// `lanes[i]` holds events scheduled `lane_offset[i]` ns after the then current
    /// time, in `(time, seq)` order; `lane_front[i]` is its front's key (`EMPTY`).
    lanes: Vec<VecDeque<Entry<E>>>,
    lane_offset: [u64; LANES],
    lane_front: [u128; LANES],
    /// The lane with the earliest front and that key (`EMPTY` when all are empty).
    lane_min: (usize, u128),
    in_lanes: usize,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E: Copy> Scheduler<E> {
    pub fn with_capacity(n: usize) -> Self {
        Scheduler {
            heap: Vec::with_capacity(n),
            heads: Vec::new(),
            slab: Vec::new(),
            free: NIL,
            cursor: 0,
            in_wheel: 0,
            lanes: (0..LANES).map(|_| VecDeque::new()).collect(),
            lane_offset: [u64::MAX; LANES],
            lane_front: [EMPTY; LANES],
            lane_min: (0, EMPTY),
            in_lanes: 0,
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    fn entry(&mut self, time: SimTime, event: E) -> Entry<E> {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let e = Entry { time: time.max(self.now), seq: self.next_seq, event };
        self.next_seq += 1;
        e
    }

    /// Schedules `event` at `time` (never before now).
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let e = self.entry(time, event);
        self.push_heap(e);
    }

    /// Schedules `event` `delay` after now, for delays that repeat because the model
    /// fixes them (a serialization time, a propagation delay): in the lane of that
    /// delay, in an empty lane it claims for it, or else in the heap. Any delay is
    /// correct; one-off delays would only hold lanes that repeating ones could use
    /// (with 10,000 flows, arrivals queued behind others in a pipe took 6 of 8 lanes
    /// and sent 37% of events to the heap when every event was offered a lane).
    pub fn schedule_after(&mut self, delay: crate::time::SimDuration, event: E) {
        let lane = self.lane_of(delay.0).or_else(|| {
            let free = self.lane_front.iter().position(|&k| k == EMPTY)?;
            self.lane_offset[free] = delay.0;
            Some(free)
        });
        let e = self.entry(self.now + delay, event);
        self.push_to(lane, e);
    }

    /// Schedules `event` `delay` after now in the lane that already holds that delay,
    /// or else in the heap; it claims no lane. For delays that are often, but not
    /// always, one the model fixes: the next arrival from a pipe comes one
    /// serialization time after the current one when the two left back to back (the
    /// lane of the link's `TxDone` events), and after any gap otherwise, which should
    /// not hold a lane until it comes due.
    pub fn schedule_after_if_lane(&mut self, delay: crate::time::SimDuration, event: E) {
        let lane = self.lane_of(delay.0);
        let e = self.entry(self.now + delay, event);
        self.push_to(lane, e);
    }

    /// The lane that holds events scheduled `offset` ns after their time.
    #[inline(always)]
    fn lane_of(&self, offset: u64) -> Option<usize> {
        self.lane_offset.iter().position(|&o| o == offset)
    }

    /// Puts `e` in `lane`, or in the heap if there is none.
    #[inline(always)]
    fn push_to(&mut self, lane: Option<usize>, e: Entry<E>) {
        match lane {
            Some(lane) => self.push_lane(lane, e),
            None => self.push_heap(e),
        }
    }

    #[inline(always)]
    fn push_lane(&mut self, lane: usize, e: Entry<E>) {
        if self.lane_front[lane] == EMPTY {
            let k = e.key();
            self.lane_front[lane] = k;
            if k < self.lane_min.1 {
                self.lane_min = (lane, k);
            }
        }
        self.lanes[lane].push_back(e);
        self.in_lanes += 1;
    }

    /// Finds the lane with the earliest front again (after that front was popped).
    #[inline(always)]
    fn update_lane_min(&mut self) {
        let mut best = (0, self.lane_front[0]);
        for i in 1..LANES {
            let k = self.lane_front[i];
            if k < best.1 {
                best = (i, k);
            }
        }
        self.lane_min = best;
    }

    /// Schedules a timer-like `event` at `time`: the same order as `schedule`, but an
    /// event for a later time slot waits in the wheel rather than in the heap.
    pub fn schedule_timer(&mut self, time: SimTime, event: E) {
        let e = self.entry(time, event);
        let slot = slot_of(e.time);
        if slot <= self.cursor || slot > self.cursor + SLOTS {
            self.push_heap(e);
            return;
        }
        if self.heads.is_empty() {
            self.heads = vec![NIL; SLOTS as usize];
        }
        let head = &mut self.heads[(slot % SLOTS) as usize];
        let cell = if self.free != NIL {
            let c = self.free;
            self.free = self.slab[c as usize].1;
            self.slab[c as usize] = (e, *head);
            c
        } else {
            self.slab.push((e, *head));
            self.slab.len() as u32 - 1
        };
        *head = cell;
        self.in_wheel += 1;
    }

    /// The key of the earliest pending event (`EMPTY` if none), after moving buckets
    /// into the heap until the earliest event of the heap and the lanes lies before
    /// the next unmoved slot (or the wheel is empty): then it is the earliest of all.
    #[inline(always)]
    fn settle(&mut self) -> u128 {
        let first = |s: &Self| s.lane_min.1.min(s.heap.first().map_or(EMPTY, Entry::key));
        let mut k = first(self);
        // A key's slot is its time's: the top 64 bits shifted by SLOT_SHIFT.
        while self.in_wheel > 0 && (k >> (64 + SLOT_SHIFT)) as u64 > self.cursor {
            self.move_next_bucket();
            k = first(self);
        }
        k
    }

    /// Moves the wheel's next slot into the heap.
    #[inline(never)]
    fn move_next_bucket(&mut self) {
        self.cursor += 1;
        let b = (self.cursor % SLOTS) as usize;
        let mut cell = std::mem::replace(&mut self.heads[b], NIL);
        while cell != NIL {
            let (e, next) = self.slab[cell as usize];
            self.slab[cell as usize].1 = self.free;
            self.free = cell;
            self.in_wheel -= 1;
            self.push_heap(e);
            cell = next;
        }
    }

    fn push_heap(&mut self, e: Entry<E>) {
        // Sift up: move parents down until e's slot is found.
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() <= e.key() {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// Removes the earliest event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_before(SimTime(u64::MAX))
    }

    /// Removes the earliest event if it is due before `limit`, and advances the clock
    /// to it.
    #[inline]
    pub fn pop_before(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let k = self.settle();
        if k == EMPTY || (k >> 64) as u64 >= limit.0 {
            return None;
        }
        if k == self.lane_min.1 {
            let lane = self.lane_min.0;
            let q = &mut self.lanes[lane];
            let top = q.pop_front().expect("a lane with a front");
            self.lane_front[lane] = q.front().map_or(EMPTY, Entry::key);
            self.update_lane_min();
            self.in_lanes -= 1;
            self.now = top.time;
            self.popped += 1;
            return Some((top.time, top.event));
        }
        let last = self.heap.pop()?;
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = self.heap[0];
            self.sift_down_from_root(last);
            top
        };
        self.now = top.time;
        self.popped += 1;
        Some((top.time, top.event))
    }

    /// Places `e` at the root and sifts it down: the smallest child moves up while it
    /// is smaller than `e`.
    #[inline]
    fn sift_down_from_root(&mut self, e: Entry<E>) {
        let n = self.heap.len();
        let key = e.key();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            let (best, best_key) = if let Some(kids) = self.heap.get(first..first + ARITY) {
                // A full node (nearly every one with 1,000 events pending): the smallest
                // of four as a two-round tournament, two independent comparisons and
                // then one, with one bounds check for all four.
                let k = [kids[0].key(), kids[1].key(), kids[2].key(), kids[3].key()];
                let (a, ka) = if k[1] < k[0] { (1, k[1]) } else { (0, k[0]) };
                let (b, kb) = if k[3] < k[2] { (3, k[3]) } else { (2, k[2]) };
                if kb < ka { (first + b, kb) } else { (first + a, ka) }
            } else {
                if first >= n {
                    break;
                }
                let mut best = first;
                let mut best_key = self.heap[first].key();
                for c in first + 1..n {
                    let k = self.heap[c].key();
                    let smaller = k < best_key;
                    best = if smaller { c } else { best };
                    best_key = if smaller { k } else { best_key };
                }
                (best, best_key)
            };
            if best_key >= key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = e;
    }

    /// The earliest event in the heap or a lane, which is (almost always) the next one
    /// to pop: a hint for prefetching, nothing more.
    #[inline]
    pub fn next_hint(&self) -> Option<&E> {
        let (lane, lane_key) = self.lane_min;
        match self.heap.first() {
            Some(top) if top.key() < lane_key => Some(&top.event),
            _ => self.lanes[lane].front().map(|e| &e.event),
        }
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        let k = self.settle();
        (k != EMPTY).then_some(SimTime((k >> 64) as u64))
    }
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Events popped so far.
    pub fn events(&self) -> u64 {
        self.popped
    }
    /// Events pending (in the heap, the lanes and the wheel).
    pub fn len(&self) -> usize {
        self.heap.len() + self.in_lanes + self.in_wheel
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Events pending in the heap itself (the rest wait in lanes or the wheel).
    pub fn heap_len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStream;

    #[test]
    fn ties_are_fifo_and_time_ordered() {
        let mut s = Scheduler::with_capacity(8);
        s.schedule(SimTime(5), 'c');
        s.schedule_timer(SimTime(1), 'a');
        s.schedule(SimTime(5), 'd');
        s.schedule(SimTime(1), 'b');
        let order: Vec<char> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(s.now(), SimTime(5));
        assert_eq!(s.events(), 4);
    }

    #[test]
    fn a_timer_in_a_later_slot_waits_in_the_wheel_and_keeps_its_place() {
        let slot = 1u64 << SLOT_SHIFT;
        let mut s = Scheduler::with_capacity(8);
        s.schedule_timer(SimTime(3 * slot + 7), "t1"); // slot 3: waits in the wheel
        s.schedule(SimTime(3 * slot + 7), "e"); // same instant, scheduled later
        s.schedule_timer(SimTime(3 * slot + 7), "t2");
        s.schedule_timer(SimTime((SLOTS + 5) * slot), "far"); // beyond the horizon: heap
        assert_eq!((s.heap_len(), s.len()), (2, 4));
        let order: Vec<&str> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["t1", "e", "t2", "far"]);
    }

    #[test]
    fn repeated_delays_wait_in_lanes_and_others_in_the_heap() {
        use crate::time::SimDuration;
        let mut s = Scheduler::with_capacity(8);
        let n = LANES as u64 + 2;
        for d in 1..=n {
            s.schedule_after(SimDuration(d * 10), d); // one lane per delay, then the heap
        }
        s.schedule_after(SimDuration(10), 100); // the first delay again: its lane
        assert_eq!((s.heap_len(), s.len()), (2, n as usize + 1));
        let order: Vec<u64> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        let mut want = vec![1, 100];
        want.extend(2..=n);
        assert_eq!(order, want);
        // Once a lane is empty another delay may claim it.
        s.schedule_after(SimDuration(7), 7);
        assert_eq!(s.heap_len(), 0);
        // `schedule_after_if_lane` joins a lane that holds its delay and claims none.
        s.schedule_after_if_lane(SimDuration(7), 8);
        s.schedule_after_if_lane(SimDuration(9), 9);
        assert_eq!((s.heap_len(), s.len()), (1, 3));
        let order: Vec<u64> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![7, 8, 9]);
        s.schedule_after_if_lane(SimDuration(7), 10); // the lane of 7 is empty but kept
        s.schedule_after_if_lane(SimDuration(5), 11);
        assert_eq!(s.heap_len(), 1);
    }

    /// Against a sort by (time, seq): random interleavings of schedules (to the heap
    /// and to the wheel, near and beyond its horizon) and pops, with many equal
    /// times, as the simulation does (never scheduling before now).
    #[test]
    fn pops_in_time_then_fifo_order_like_a_sort() {
        let mut rng = RngStream::new(3, "scheduler-test");
        let slot = 1u64 << SLOT_SHIFT;
        for round in 0..60 {
            let mut s = Scheduler::with_capacity(0);
            let mut reference: Vec<(u64, u64)> = Vec::new(); // (time, seq) pending
            let mut seq = 0u64;
            let spread = [3, 50, 10_000, 3 * slot, 40 * slot, 2 * SLOTS * slot][round % 6];
            // Offsets the simulation repeats (serialization times, propagation delays),
            // more of them than there are lanes, mixed with arbitrary ones.
            let fixed: Vec<u64> = (0..LANES as u64 + 4).map(|i| i * spread / 7).collect();
            for _ in 0..3000 {
                if rng.uniform() < 0.55 || reference.is_empty() {
                    let offset = if rng.uniform() < 0.6 {
                        fixed[rng.uniform_u64(0, fixed.len() as u64 - 1) as usize]
                    } else {
                        rng.uniform_u64(0, spread)
                    };
                    let t = s.now().0 + offset;
                    match rng.uniform_u64(0, 3) {
                        0 => s.schedule_timer(SimTime(t), seq),
                        1 => s.schedule(SimTime(t), seq),
                        2 => s.schedule_after(crate::time::SimDuration(offset), seq),
                        _ => s.schedule_after_if_lane(crate::time::SimDuration(offset), seq),
                    }
                    reference.push((t, seq));
                    seq += 1;
                } else {
                    let (i, &min) = reference.iter().enumerate().min_by_key(|(_, v)| **v).unwrap();
                    reference.swap_remove(i);
                    assert_eq!(s.pop(), Some((SimTime(min.0), min.1)));
                }
                assert_eq!(s.len(), reference.len());
            }
            reference.sort();
            for (t, q) in reference {
                assert_eq!(s.peek_time(), Some(SimTime(t)));
                assert_eq!(s.pop(), Some((SimTime(t), q)));
            }
            assert!(s.pop().is_none());
        }
    }
}
