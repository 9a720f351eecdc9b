//! The event queue: a binary heap keyed by `(time, seq)`.
//!
//! `seq` is a global push counter, so equal-time events are FIFO. The heap stores small `Copy`
//! events inline: no allocation per event once the heap has grown to its working size.

use crate::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: Time,
    seq: u64,
    ev: E,
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
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// Counters the engine benchmark reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueStats {
    pub pushed: u64,
    pub popped: u64,
    pub max_len: usize,
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
    stats: QueueStats,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_capacity(1024)
    }

    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), seq: 0, now: 0, stats: QueueStats::default() }
    }

    /// The time of the last popped event: the simulation clock.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `ev` at `time`. Scheduling in the past is a model bug.
    pub fn push(&mut self, time: Time, ev: E) {
        crate::invariant!(time >= self.now, "event scheduled in the past: {} < {}", time, self.now);
        self.heap.push(Entry { time, seq: self.seq, ev });
        self.seq += 1;
        self.stats.pushed += 1;
        if self.heap.len() > self.stats.max_len {
            self.stats.max_len = self.heap.len();
        }
    }

    /// Removes the earliest event and advances the clock to its time.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        crate::invariant!(e.time >= self.now, "clock went back: {} < {}", e.time, self.now);
        self.now = e.time;
        self.stats.popped += 1;
        Some((e.time, e.ev))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn stats(&self) -> QueueStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_push_order() {
        let mut q = EventQueue::new();
        q.push(5, 'a');
        q.push(3, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(3, 'b'), (3, 'd'), (5, 'a'), (5, 'c')]);
    }

    #[test]
    fn clock_advances_with_pops() {
        let mut q = EventQueue::new();
        q.push(10, ());
        assert_eq!(q.now(), 0);
        q.pop();
        assert_eq!(q.now(), 10);
    }

    #[test]
    #[should_panic(expected = "event scheduled in the past")]
    fn scheduling_in_the_past_is_caught() {
        let mut q = EventQueue::new();
        q.push(10, ());
        q.pop();
        q.push(5, ());
    }
}
