//! The event queue, ordered by `(time, seq)`.
//!
//! `seq` is a global push counter, so equal-time events pop in push order (FIFO), never in hash or
//! address order. Two structures hold the pending events:
//!
//! * **Slots**: one per serial executor (a CPU), for the events that supersede each other: a CPU
//!   has at most one "next step" outstanding, and a newer one makes the older stale (the model
//!   guards them with a generation number). [`EventQueue::push_slot`] replaces the slot's entry,
//!   so a superseded step is dropped instead of being popped and ignored. The slots form a
//!   tournament (winner) tree: the earliest slot is at the root, and an update walks one
//!   leaf-to-root path, `log2(slots)` comparisons of 64-bit keys held in flat arrays.
//! * **A binary heap** for everything else (IPIs, ticks, timers, spawns).
//!
//! Dropping a superseded slot entry changes no result: it would have been popped and ignored.
//! The one thing its pop did was move the clock, which matters only after the last live event:
//! so the latest superseded entry is kept aside and popped when nothing else is left.
//!
//! Measured against the monotone radix heap with 128-bit keys it replaced: see
//! docs/engine-speed.md.

use crate::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Counters the engine benchmark reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueStats {
    pub pushed: u64,
    pub popped: u64,
    /// Superseded slot entries dropped unpopped.
    pub superseded: u64,
    pub max_len: usize,
}

/// A heap entry: ordered by (time, seq) only, earliest first in a max-heap.
struct Entry<E> {
    time: Time,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.seq) == (o.time, o.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// A slot key: time in the high 64 bits, push order in the low ones (compared branch-free).
type Key = u128;
const EMPTY_KEY: Key = Key::MAX;

#[inline]
fn key(time: Time, seq: u64) -> Key {
    ((time as Key) << 64) | seq as Key
}

/// The slots' tournament tree. Leaves are slots `0..n` padded to a power of two. Node `i`
/// (root 1, children `2i` and `2i+1`, leaf of slot `s` at `leaves + s`) holds the key of the
/// earliest slot below it and that slot, inline, so a leaf-to-root update reads one sibling per
/// level and follows no index.
///
/// A pop leaves the popped slot's path stale until the next operation (`taken`): the model's
/// next step for the same CPU usually follows at once, and then one walk serves both.
struct SlotTree<E> {
    key: Vec<Key>,
    slot: Vec<u32>,
    ev: Vec<Option<E>>,
    leaves: usize,
    len: usize,
    taken: Option<usize>,
}

impl<E: Copy> SlotTree<E> {
    fn new(n: usize) -> Self {
        let leaves = n.max(1).next_power_of_two();
        let mut slot = vec![0u32; 2 * leaves];
        for i in 0..leaves {
            slot[leaves + i] = i as u32;
        }
        for i in (1..leaves).rev() {
            slot[i] = slot[2 * i];
        }
        SlotTree { key: vec![EMPTY_KEY; 2 * leaves], slot, ev: vec![None; leaves], leaves, len: 0, taken: None }
    }

    /// Writes `k` at slot `s`'s leaf and recomputes its path to the root.
    #[inline]
    fn walk(&mut self, s: usize, k: Key) {
        let mut i = self.leaves + s;
        let (mut k, mut w) = (k, s as u32);
        self.key[i] = k;
        while i > 1 {
            let sib = i ^ 1;
            let ks = self.key[sib];
            // Keys are unique (seq), except between empty slots, where either will do.
            let take = ks < k;
            k = if take { ks } else { k };
            w = if take { self.slot[sib] } else { w };
            i /= 2;
            self.key[i] = k;
            self.slot[i] = w;
        }
    }

    /// Finishes a pop's removal, if one is pending.
    #[inline]
    fn settle(&mut self) {
        if let Some(s) = self.taken.take() {
            self.walk(s, EMPTY_KEY);
        }
    }

    /// Sets slot `s` to (`k`, `ev`); returns what it held.
    #[inline]
    fn set(&mut self, s: usize, k: Key, ev: E) -> Option<(Key, E)> {
        if self.taken != Some(s) {
            self.settle();
        }
        self.taken = None;
        let old = self.ev[s].map(|e| (self.key[self.leaves + s], e));
        self.len += old.is_none() as usize;
        self.ev[s] = Some(ev);
        self.walk(s, k);
        old
    }

    /// The earliest slot's key, or `EMPTY_KEY`.
    #[inline]
    fn min_key(&mut self) -> Key {
        self.settle();
        self.key[1]
    }

    /// Removes the earliest slot (which must be set) and returns it.
    #[inline]
    fn take_min(&mut self) -> (Key, E) {
        let s = self.slot[1] as usize;
        let ev = self.ev[s].take().expect("the earliest slot is set");
        self.len -= 1;
        self.taken = Some(s);
        (self.key[1], ev)
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    slots: SlotTree<E>,
    /// The latest superseded slot entry (its pop would have been the last clock move).
    last_superseded: Option<(Time, u64, E)>,
    seq: u64,
    now: Time,
    stats: QueueStats,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// A queue without slots (`push_slot` then panics).
    pub fn new() -> Self {
        Self::with_slots(0)
    }

    /// A queue with `slots` superseding slots (one per CPU).
    pub fn with_slots(slots: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(64 + 4 * slots),
            slots: SlotTree::new(slots),
            last_superseded: None,
            seq: 0,
            now: 0,
            stats: QueueStats::default(),
        }
    }

    /// The time of the last popped event: the simulation clock.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    fn next_seq(&mut self, time: Time) -> u64 {
        crate::invariant!(time >= self.now, "event scheduled in the past: {} < {}", time, self.now);
        let s = self.seq;
        self.seq += 1;
        self.stats.pushed += 1;
        s
    }

    #[inline]
    fn note_len(&mut self) {
        let len = self.len();
        if len > self.stats.max_len {
            self.stats.max_len = len;
        }
    }

    /// Schedules `ev` at `time`. Scheduling in the past is a model bug.
    pub fn push(&mut self, time: Time, ev: E) {
        let seq = self.next_seq(time);
        self.heap.push(Entry { time, seq, ev });
        self.note_len();
    }

    /// Schedules `ev` at `time` in slot `slot`, superseding the event the slot held: the caller
    /// guarantees that event is stale (it would be popped and ignored).
    pub fn push_slot(&mut self, slot: usize, time: Time, ev: E) {
        let seq = self.next_seq(time);
        if let Some((k, old)) = self.slots.set(slot, key(time, seq), ev) {
            self.stats.superseded += 1;
            let old = ((k >> 64) as Time, k as u64, old);
            if self.last_superseded.is_none_or(|l| (old.0, old.1) > (l.0, l.1)) {
                self.last_superseded = Some(old);
            }
        }
        self.note_len();
    }

    /// Removes the earliest event and advances the clock to its time.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let sk = self.slots.min_key();
        let from_heap = match self.heap.peek() {
            Some(h) => key(h.time, h.seq) < sk,
            None => false,
        };
        let (time, ev) = if from_heap {
            let e = self.heap.pop().expect("peeked");
            (e.time, e.ev)
        } else if sk != EMPTY_KEY {
            let (k, ev) = self.slots.take_min();
            ((k >> 64) as Time, ev)
        } else {
            // Nothing live is left: the superseded entries would pop now; the latest of them
            // leaves the clock where they would have.
            let (t, _, ev) = self.last_superseded.take().filter(|l| l.0 >= self.now)?;
            (t, ev)
        };
        crate::invariant!(time >= self.now, "clock went back: {} < {}", time, self.now);
        self.now = time;
        self.stats.popped += 1;
        Some((time, ev))
    }

    /// Pending events (slot entries and heap entries; superseded ones not counted).
    pub fn len(&self) -> usize {
        self.heap.len() + self.slots.len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
    fn slots_and_heap_interleave_in_time_then_push_order() {
        let mut q = EventQueue::with_slots(3);
        q.push_slot(2, 5, 'a');
        q.push(5, 'b');
        q.push_slot(0, 5, 'c');
        q.push(1, 'd');
        q.push_slot(1, 9, 'e');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(1, 'd'), (5, 'a'), (5, 'b'), (5, 'c'), (9, 'e')]);
    }

    #[test]
    fn a_slot_push_supersedes_the_slot_entry() {
        let mut q = EventQueue::with_slots(2);
        q.push_slot(1, 10, 'a');
        q.push_slot(1, 4, 'b');
        q.push_slot(0, 6, 'c');
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some((4, 'b')));
        assert_eq!(q.pop(), Some((6, 'c')));
        assert_eq!(q.stats().superseded, 1);
        // The superseded entry still moves the clock last, where its own pop would have.
        assert_eq!(q.pop(), Some((10, 'a')));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_superseded_entry_already_passed_does_not_pop() {
        let mut q = EventQueue::with_slots(1);
        q.push_slot(0, 3, 'a');
        q.push_slot(0, 8, 'b');
        assert_eq!(q.pop(), Some((8, 'b')));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn many_slots_pop_in_key_order() {
        let n = 37;
        let mut q = EventQueue::with_slots(n);
        let mut want = Vec::new();
        for i in 0..n {
            let t = ((i * 7919) % 101) as Time;
            q.push_slot(i, t, i);
            want.push((t, i));
        }
        want.sort();
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, want);
    }

    /// Fuzzed against a plain list ordered by (time, push order): slots superseding each
    /// other, heap entries, and many equal times (the slot tree's tie rule).
    #[test]
    fn random_pushes_and_pops_follow_time_then_push_order() {
        for seed in 0..40 {
            let mut rng = crate::rng::RngStream::new(seed, 1, 0);
            let n = 1 + rng.below(70) as usize;
            let mut q = EventQueue::with_slots(n);
            // (time, seq, slot or usize::MAX, id)
            let mut live: Vec<(Time, u64, usize, u32)> = Vec::new();
            let (mut seq, mut id) = (0u64, 0u32);
            for _ in 0..3000 {
                let now = q.now();
                if rng.below(3) == 0 {
                    let want = live.iter().copied().min_by_key(|e| (e.0, e.1));
                    let got = q.pop();
                    match want {
                        Some(w) => {
                            live.retain(|e| e.1 != w.1);
                            assert_eq!(got, Some((w.0, w.3)), "seed {seed}");
                        }
                        None => break,
                    }
                    continue;
                }
                // Few distinct times, so that ties are common.
                let t = now + rng.below(4) * 5;
                if rng.below(2) == 0 {
                    let s = rng.below(n as u64) as usize;
                    live.retain(|e| e.2 != s);
                    live.push((t, seq, s, id));
                    q.push_slot(s, t, id);
                } else {
                    live.push((t, seq, usize::MAX, id));
                    q.push(t, id);
                }
                seq += 1;
                id += 1;
            }
        }
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
    #[cfg(any(debug_assertions, feature = "invariants"))]
    #[should_panic(expected = "event scheduled in the past")]
    fn scheduling_in_the_past_is_caught() {
        let mut q = EventQueue::new();
        q.push(10, ());
        q.pop();
        q.push(5, ());
    }
}
