//! A FIFO that keeps its first element inline, for the queues and propagation pipes
//! of links that mostly hold zero or one packet.
//!
//! A dumbbell with 10,000 pairs has 40,000 access links, each carrying one flow's
//! packets: most of the time their queue is empty and their pipe holds one packet.
//! With a plain `VecDeque`, every packet then touches the deque's separate buffer (a
//! cache miss: 40,000 buffers do not stay in cache), on the way in and on the way
//! out. Here the first element lives in the deque itself, next to the fields the link
//! reads anyway, and the buffer is only used from the second element on.
//!
//! Order and contents are exactly a `VecDeque`'s (`tests::behaves_like_a_vecdeque`).

use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct HeadDeque<T> {
    head: Option<T>,
    rest: VecDeque<T>,
}

impl<T> Default for HeadDeque<T> {
    fn default() -> Self {
        HeadDeque { head: None, rest: VecDeque::new() }
    }
}

impl<T> HeadDeque<T> {
    #[inline]
    pub fn push_back(&mut self, x: T) {
        if self.head.is_none() {
            self.head = Some(x);
        } else {
            self.rest.push_back(x);
        }
    }
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        let h = self.head.take()?;
        if !self.rest.is_empty() {
            self.head = self.rest.pop_front();
        }
        Some(h)
    }
    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.head.as_ref()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.head.is_some() as usize + self.rest.len()
    }
    /// The elements front to back.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.head.iter().chain(self.rest.iter())
    }
    /// The last element.
    pub fn back(&self) -> Option<&T> {
        self.rest.back().or(self.head.as_ref())
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
        let mut rng = RngStream::new(1, "head-deque");
        let (mut a, mut b) = (HeadDeque::default(), VecDeque::new());
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
