//! The event queue: a binary min-heap keyed on (time, insertion sequence), with FIFO lanes.
//!
//! Equal times pop in the order they were pushed, which makes every run deterministic without
//! relying on the payload's ordering. Every event gets its sequence number when it is pushed,
//! and the queue pops events in exact (time, seq) order however it stores them, so the storage
//! below is free to choose and never changes a result.
//!
//! Most events of a run are packets reaching the far end of a link, and one link hands them out
//! in time order (propagation keeps order). Such events can go to a **lane** ([`push_lane`]):
//! a FIFO whose entries are already sorted, of which only the head sits in the heap. Popping a
//! lane's head puts the lane's next entry in its place (one sift-down, no push). The heap then
//! holds a few dozen entries (lane heads, link services, timers) instead of every packet in
//! flight, and pushing to a lane costs an append. An event that would break its lane's order
//! (a time before the lane's last) goes to the heap on its own, so a lane is only a hint.
//!
//! The heap is binary and compares its key as one `u128` (`time` high, `seq` low): a branch-free
//! two-word compare. (4- and 3-ary heaps cost more instructions on the benchmark: with ~50
//! entries the heap sits in L1 either way.) Payloads are small `Copy` values (8 bytes in the
//! world), so moving an entry is cheap. When an event's handler pushes the next event (a link's
//! next service, a re-armed timer), it takes the slot of the popped root directly: see
//! [`pop`](EventQueue::pop).
//!
//! [`push_lane`]: EventQueue::push_lane

use crate::Nanos;
use std::collections::VecDeque;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: Nanos,
    seq: u64,
    event: E,
    /// The lane whose head this is, or [`NO_LANE`].
    lane: u32,
}

const NO_LANE: u32 = u32::MAX;

/// How far ahead of a lane's head [`EventQueue::pop`] prefetches (in entries of 32 bytes: a
/// few cache lines, some events of lead).
const LANE_PREFETCH_AHEAD: usize = 8;

impl<E> Entry<E> {
    /// The heap order: time first, then insertion order.
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

/// A FIFO of entries in (time, seq) order; its head is in the heap, not here.
struct Lane<E> {
    /// The entries after the head.
    rest: VecDeque<Entry<E>>,
    /// Whether the lane's head is in the heap (the lane is not empty).
    active: bool,
    /// Time of the lane's last entry (valid while `active`).
    last_time: Nanos,
}

pub struct EventQueue<E> {
    /// Heap order: an entry's key is below its children's (`2 * i + 1` and `2 * i + 2`).
    heap: Vec<Entry<E>>,
    lanes: Vec<Lane<E>>,
    next_seq: u64,
    popped: u64,
    len: usize,
    /// The root's entry was popped and its slot not refilled yet (see [`pop`](Self::pop)).
    vacant: bool,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_capacity(1024)
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(capacity),
            lanes: Vec::new(),
            next_seq: 0,
            popped: 0,
            len: 0,
            vacant: false,
        }
    }

    #[inline]
    fn entry(&mut self, time: Nanos, event: E, lane: u32) -> Entry<E> {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.len += 1;
        Entry {
            time,
            seq,
            event,
            lane,
        }
    }

    #[inline]
    pub fn push(&mut self, time: Nanos, event: E) {
        let entry = self.entry(time, event, NO_LANE);
        self.heap_push(entry);
    }

    /// Pushes an event that usually comes at or after the previous one of lane `lane` (a small
    /// number: the world uses one lane per link). Pops exactly as [`push`](Self::push) would.
    #[inline]
    pub fn push_lane(&mut self, lane: usize, time: Nanos, event: E) {
        if lane >= self.lanes.len() {
            self.add_lanes(lane + 1);
        }
        let l = &mut self.lanes[lane];
        if !l.active {
            l.active = true;
            l.last_time = time;
            let entry = self.entry(time, event, lane as u32);
            self.heap_push(entry);
        } else if time >= l.last_time {
            // Later seq and no earlier time: the lane stays sorted.
            l.last_time = time;
            let entry = self.entry(time, event, lane as u32);
            self.lanes[lane].rest.push_back(entry);
        } else {
            self.push(time, event);
        }
    }

    /// The event that follows lane `lane`'s head (the head itself is in the heap), if any: a
    /// look ahead, e.g. to prefetch what that event will touch.
    #[inline]
    pub fn lane_next(&self, lane: usize) -> Option<&E> {
        self.lanes.get(lane)?.rest.front().map(|e| &e.event)
    }

    #[cold]
    fn add_lanes(&mut self, n: usize) {
        self.lanes.resize_with(n, || Lane {
            rest: VecDeque::new(),
            active: false,
            last_time: 0,
        });
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        if !self.vacant {
            return self.heap.first().map(|e| e.time);
        }
        // The next is the smallest of the root's children.
        let children = self.heap.get(1..).unwrap_or_default();
        children
            .iter()
            .take(2)
            .min_by_key(|e| e.key())
            .map(|e| e.time)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.pop_until(Nanos::MAX, true)
    }

    /// Pops the next event if it is due before `end` (or at `end` when `inclusive`): one look
    /// at the root instead of [`peek_time`](Self::peek_time) then [`pop`](Self::pop), which
    /// would each find the smallest entry when the root is vacant. Leaves the queue as it was
    /// when the next event is not due. Pops in exactly the order `pop` does (the heap's layout
    /// may differ, the (time, seq) order cannot).
    #[inline]
    pub fn pop_until(&mut self, end: Nanos, inclusive: bool) -> Option<(Nanos, E)> {
        if self.vacant {
            self.fill_root();
        }
        let &top = self.heap.first()?;
        if top.time > end || (top.time == end && !inclusive) {
            return None;
        }
        self.popped += 1;
        self.len -= 1;
        if top.lane != NO_LANE {
            let lane = &mut self.lanes[top.lane as usize];
            // A lane is read front to back, each entry last touched when it was pushed (a
            // path delay ago, a long way back in a busy lane): fetch a few entries ahead.
            if let Some(ahead) = lane.rest.get(LANE_PREFETCH_AHEAD) {
                crate::prefetch::prefetch(ahead);
            }
            match lane.rest.pop_front() {
                // The lane's next entry takes the head's place.
                Some(next) => {
                    self.sift_down(next);
                    return Some((top.time, top.event));
                }
                None => lane.active = false,
            }
        }
        // The root's slot is refilled lazily: the handler of an event usually pushes the next
        // one (a link's next service, a re-armed timer), which then takes the slot with one
        // sift-down, instead of the last entry sinking from the root and the new one rising.
        self.vacant = true;
        Some((top.time, top.event))
    }

    /// Moves the last entry into the vacant root slot.
    fn fill_root(&mut self) {
        self.vacant = false;
        let last = self.heap.pop().expect("a vacant root is a slot");
        if !self.heap.is_empty() {
            self.sift_down(last);
        }
    }

    /// Number of events popped so far (the "events" figure of a run).
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn heap_push(&mut self, entry: Entry<E>) {
        if self.vacant {
            self.vacant = false;
            self.sift_down(entry);
            return;
        }
        self.heap.push(entry);
        self.sift_up(self.heap.len() - 1, entry);
    }

    /// Moves `entry`, just placed at `hole`, up to where its parent is smaller.
    #[inline]
    fn sift_up(&mut self, mut hole: usize, entry: Entry<E>) {
        let h = &mut self.heap[..];
        let key = entry.key();
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if h[parent].key() < key {
                break;
            }
            h[hole] = h[parent];
            hole = parent;
        }
        h[hole] = entry;
    }

    /// Puts `entry` at the root (whose entry is gone) and moves it down to where its children
    /// are larger. The heap is never empty here (the root's slot is the vacancy).
    ///
    /// Written for few instructions per level: the usual case (both children present) runs in
    /// a loop whose only bounds test is the loop's own (its accesses are unchecked, see the
    /// SAFETY note); the one-child case can only be the last level and is handled once after
    /// it. It runs once per event, about 1.4 levels deep on the benchmark dumbbell.
    #[inline(always)]
    fn sift_down(&mut self, entry: Entry<E>) {
        let h = &mut self.heap[..];
        let len = h.len();
        let key = entry.key();
        let mut hole = 0;
        let mut first = 1;
        while first + 1 < len {
            // SAFETY: `first + 1 < len` (the loop's test), and `hole < first` (hole is the
            // root or the child chosen one level up, `first` its first child), so every index
            // below is in bounds.
            unsafe {
                let (ka, kb) = (
                    h.get_unchecked(first).key(),
                    h.get_unchecked(first + 1).key(),
                );
                let (child, child_key) = if kb < ka {
                    (first + 1, kb)
                } else {
                    (first, ka)
                };
                if key < child_key {
                    *h.get_unchecked_mut(hole) = entry;
                    return;
                }
                *h.get_unchecked_mut(hole) = *h.get_unchecked(child);
                hole = child;
            }
            first = 2 * hole + 1;
        }
        if first + 1 == len && h[first].key() < key {
            h[hole] = h[first];
            hole = first;
        }
        h[hole] = entry;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::default();
        for (t, v) in [(30, 'c'), (10, 'a'), (20, 'b')] {
            q.push(t, v);
        }
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(10, 'a'), (20, 'b'), (30, 'c')]);
        assert_eq!(q.popped(), 3);
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        for v in 0..100u32 {
            q.push(5, v);
        }
        q.push(1, 1000);
        assert_eq!(q.pop(), Some((1, 1000)));
        for v in 0..100u32 {
            assert_eq!(q.pop(), Some((5, v)));
        }
        assert!(q.pop().is_none());
    }

    /// Random pushes (plain and to lanes, in and out of lane order, many at equal times) and
    /// pops, against a sorted reference.
    #[test]
    fn matches_a_reference_order() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut rand = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut q = EventQueue::default();
        let mut reference = std::collections::BTreeMap::new();
        let (mut seq, mut now) = (0u64, 0u64);
        let mut lane_time = [0u64; 3];
        for _ in 0..300_000 {
            let r = rand();
            if r % 10 < 6 {
                let t = match r % 7 {
                    // Mostly in lane order, sometimes not.
                    0..=3 => {
                        let lane = (r >> 8) as usize % 3;
                        let t = lane_time[lane].max(now) + (r >> 16) % 3;
                        lane_time[lane] = t;
                        q.push_lane(lane, t, seq);
                        t
                    }
                    4 => {
                        let t = now + (r >> 16) % 5;
                        q.push_lane((r >> 8) as usize % 3, t, seq);
                        t
                    }
                    _ => {
                        let t = now + (r >> 16) % 50;
                        q.push(t, seq);
                        t
                    }
                };
                reference.insert((t, seq), seq);
                seq += 1;
            } else {
                let want = reference.pop_first().map(|((t, _), v)| (t, v));
                let got = q.pop();
                assert_eq!(got, want);
                if let Some((t, _)) = got {
                    now = t;
                }
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(q.peek_time(), reference.keys().next().map(|k| k.0));
        }
        while let Some(want) = reference.pop_first() {
            assert_eq!(q.pop(), Some((want.0 .0, want.1)));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }
}
