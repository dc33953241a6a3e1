//! A FIFO that keeps its first `N` elements inline, for the queues and propagation
//! pipes of links that mostly hold zero, one or a few packets.
//!
//! A dumbbell with 10,000 pairs has 40,000 access links, each carrying one flow's
//! packets: most of the time their queue is empty and their pipe holds one packet, or
//! the two or three a sender emits back to back on an ACK. With a plain `VecDeque`,
//! every packet then touches the deque's separate buffer (a cache miss: 40,000
//! buffers do not stay in cache), on the way in and on the way out. Here the first `N`
//! elements live in a ring inside the deque itself, next to the fields the link reads
//! anyway, and the buffer is only used from element `N + 1` on.
//!
//! Order and contents are exactly a `VecDeque`'s (`tests::behaves_like_a_vecdeque`).

use std::collections::VecDeque;
use std::mem::MaybeUninit;

/// Invariant: `rest` holds elements only while the ring is full (`len == N`), and they
/// come after the ring's.
#[derive(Clone)]
pub struct HeadDeque<T: Copy, const N: usize = 1> {
    ring: [MaybeUninit<T>; N],
    /// Ring index of the front element, and elements in the ring.
    start: u8,
    len: u8,
    rest: VecDeque<T>,
}

impl<T: Copy, const N: usize> Default for HeadDeque<T, N> {
    fn default() -> Self {
        const { assert!(N >= 1 && N <= 128) };
        HeadDeque { ring: [MaybeUninit::uninit(); N], start: 0, len: 0, rest: VecDeque::new() }
    }
}

impl<T: Copy + std::fmt::Debug, const N: usize> std::fmt::Debug for HeadDeque<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Hints the CPU to load the cache line at `p`; never faults. Also the event loop's
/// (`sim`) prefetch of the next event's state.
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl<T: Copy, const N: usize> HeadDeque<T, N> {
    /// How far ahead in the overflow `pop_front` prefetches: about four cache lines.
    const AHEAD: usize = 256 / std::mem::size_of::<T>() + 1;

    #[inline(always)]
    fn slot(&self, i: usize) -> &T {
        debug_assert!(i < self.len as usize);
        // SAFETY: ring slots start..start+len (mod N) are initialised (push_back writes
        // a slot before counting it; pop_front stops counting before it is reused).
        unsafe { self.ring[(self.start as usize + i) % N].assume_init_ref() }
    }
    #[inline]
    pub fn push_back(&mut self, x: T) {
        if (self.len as usize) < N {
            self.ring[(self.start as usize + self.len as usize) % N] = MaybeUninit::new(x);
            self.len += 1;
        } else {
            self.rest.push_back(x);
        }
    }
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let h = *self.slot(0);
        let s = self.start as usize;
        self.start = ((s + 1) % N) as u8;
        if self.rest.is_empty() {
            self.len -= 1;
        } else {
            // The ring stays full: the overflow's first element takes the freed slot,
            // which is now the ring's back.
            self.ring[s] = MaybeUninit::new(self.rest.pop_front().expect("non-empty"));
            // A long overflow (a bottleneck's pipe or queue) is read front to back, long
            // after it was written and evicted: ask for the line a few ahead.
            if let Some(ahead) = self.rest.get(Self::AHEAD) {
                prefetch(ahead as *const T as *const u8);
            }
        }
        Some(h)
    }
    #[inline]
    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| self.slot(0))
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize + self.rest.len()
    }
    /// The elements front to back.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        (0..self.len as usize).map(move |i| self.slot(i)).chain(self.rest.iter())
    }
    /// The last element.
    pub fn back(&self) -> Option<&T> {
        self.rest.back().or((self.len > 0).then(|| self.slot(self.len as usize - 1)))
    }
    /// Heap bytes held by the overflow buffer.
    pub fn heap_bytes(&self) -> usize {
        self.rest.capacity() * std::mem::size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStream;

    #[test]
    fn behaves_like_a_vecdeque() {
        check::<1>();
        check::<3>();
        check::<4>();
    }

    fn check<const N: usize>() {
        let mut rng = RngStream::new(1, "head-deque");
        let (mut a, mut b) = (HeadDeque::<u32, N>::default(), VecDeque::new());
        for i in 0..20_000u32 {
            // Bursts of pushes and pops so that lengths 0, 1 and many all occur.
            if rng.uniform() < if (i / 500) % 2 == 0 { 0.6 } else { 0.4 } {
                a.push_back(i);
                b.push_back(i);
            } else {
                assert_eq!(a.pop_front(), b.pop_front());
            }
            assert_eq!((a.front(), a.back(), a.len(), a.is_empty()), (b.front(), b.back(), b.len(), b.is_empty()));
            assert!(a.iter().eq(b.iter()));
        }
    }
}
