//! The event queue and the seeded random streams.
//!
//! Events are ordered by (time, insertion sequence) so that two events at the same instant run
//! in the order they were scheduled: this is what makes runs deterministic. Components never
//! own the clock; the engine pops an event and hands `now` to whoever it is for.
//!
//! Timers that move often (TCP's RTO, the delayed-ACK timer) are *lazy*: the component keeps its
//! real deadline and the queue may hold a stale entry; when a stale entry fires, the component
//! re-arms to its real deadline. That keeps the heap at a handful of entries per flow instead of
//! one push per ACK.

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::time::Time;

/// A scheduled event. 16 bytes for the simulator's 4-byte events (time, a 32-bit sequence, the
/// event), so the heap moves a third less memory than with a 64-bit sequence.
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    time: Time,
    /// Insertion order, wrapping: two entries compare by the signed difference of their
    /// sequences, which orders them correctly as long as the entries of one instant were
    /// scheduled fewer than 2^31 events apart (a heap holds a few entries per flow).
    seq: u32,
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
    /// Reversed (BinaryHeap is a max-heap): the earliest time, then the earliest sequence, is
    /// the greatest.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| (self.seq.wrapping_sub(o.seq) as i32).cmp(&0).reverse())
    }
}

/// Entries the sorted `near` list holds at most; when full, its later half moves to the heap.
/// The simulator keeps about twenty pending entries (a few per link, medium and flow), so the
/// heap is the fallback for large scenarios, not the common path.
const NEAR_CAP: usize = 64;

pub struct EventQueue<E> {
    /// The earliest pending entries, sorted latest first: the next one to run is the last.
    /// Most events are scheduled a few microseconds ahead (a frame's end, the next arrival),
    /// so an insertion lands near the end of the list and costs a short scan and move, and a
    /// pop costs nothing: cheaper than a binary heap's sifts at these sizes. Entries of one
    /// instant are kept in schedule order (an insertion goes before, i.e. runs after, every
    /// entry of its own time), which is the (time, sequence) order.
    near: Vec<Entry<E>>,
    /// Entries later (by time, then sequence) than every entry in `near`: the overflow when
    /// `near` is full, and what is scheduled at or after the heap's earliest entry.
    far: BinaryHeap<Entry<E>>,
    /// Events scheduled for the current instant while it runs (about a quarter of all events:
    /// a packet handed on, a medium woken), in the order they were scheduled. They bypass the
    /// sorted entries without changing the order: every entry due now was scheduled before
    /// them (anything scheduled at `now` lands here), so the entries at `now` go first, then
    /// these, and none is left when the clock moves on.
    due_now: VecDeque<E>,
    next_seq: u32,
    now: Time,
    processed: u64,
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            near: Vec::with_capacity(NEAR_CAP + 1),
            far: BinaryHeap::with_capacity(1024),
            due_now: VecDeque::with_capacity(64),
            next_seq: 0,
            now: Time::ZERO,
            processed: 0,
        }
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn len(&self) -> usize {
        self.near.len() + self.far.len() + self.due_now.len()
    }

    pub fn is_empty(&self) -> bool {
        self.near.is_empty() && self.far.is_empty() && self.due_now.is_empty()
    }

    /// Schedules `event` at `time` (never earlier than now).
    ///
    /// The common paths (an event due now, an entry landing in `near`) make no call: whatever
    /// may grow a buffer, spill `near` or go to the heap is a tail call to an out-of-line
    /// function. So this needs no callee-saved registers, and the checks it makes tell the
    /// compiler that the push it does cannot reallocate.
    pub fn schedule(&mut self, time: Time, event: E) {
        if time <= self.now {
            if self.due_now.len() == self.due_now.capacity() {
                return self.push_due_now_growing(event);
            }
            self.due_now.push_back(event);
            return;
        }
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        let e = Entry { time, seq, event };
        // (`near` is allocated for NEAR_CAP + 1 entries; the capacity test only lets the
        // compiler see that the push below does not grow it.)
        let room = self.near.len() < NEAR_CAP && self.near.len() < self.near.capacity();
        // The new entry has the newest sequence, so it is later than the heap's earliest entry
        // exactly when its time is not earlier: then it belongs to the heap.
        if !room || self.far.peek().is_some_and(|f| time >= f.time) {
            return self.schedule_rare(e);
        }
        self.insert_near(e);
    }

    /// Its place in `near`: before (i.e. running after) every entry of an earlier or the same
    /// time. An insertion-sort step from the end, where near-future entries land: usually no
    /// entry or one moves. (Walking slots with `iter_mut` needs no bounds checks.)
    #[inline]
    fn insert_near(&mut self, e: Entry<E>) {
        self.near.push(e);
        let mut slots = self.near.iter_mut().rev();
        let mut hole = slots.next().expect("just pushed");
        for prev in slots {
            if prev.time > e.time {
                break;
            }
            *hole = *prev;
            hole = prev;
        }
        *hole = e;
    }

    /// `schedule` of an entry when `near` is full or the entry is not earlier than the heap's
    /// earliest: spill `near` if full, then the entry goes to the heap or `near` as it belongs.
    #[cold]
    #[inline(never)]
    fn schedule_rare(&mut self, e: Entry<E>) {
        if self.near.len() == NEAR_CAP {
            self.spill();
        }
        if self.far.peek().is_some_and(|f| e.time >= f.time) {
            self.far.push(e);
        } else {
            self.insert_near(e);
        }
    }

    /// `due_now` is full: grow it (rare: its capacity soon covers the longest instant).
    #[cold]
    #[inline(never)]
    fn push_due_now_growing(&mut self, event: E) {
        self.due_now.push_back(event);
    }

    /// `near` is full: its later half goes to the heap (each of those is earlier than
    /// everything already there, so the heap stays later than all of `near`).
    #[cold]
    #[inline(never)]
    fn spill(&mut self) {
        self.far.extend(self.near.drain(..NEAR_CAP / 2));
    }

    /// Moves the heap's earliest entries (up to half the list) into the empty `near`, so the
    /// list takes over again once a burst has passed (otherwise everything scheduled after the
    /// heap's earliest entry would keep going to the heap).
    fn refill(&mut self) {
        debug_assert!(self.near.is_empty());
        while self.near.len() < NEAR_CAP / 2 {
            let Some(e) = self.far.pop() else { break };
            self.near.push(e);
        }
        // Popped earliest first; the list runs from its end.
        self.near.reverse();
    }

    /// The earliest pending entry's time, `near` first (everything in `far` is later).
    fn next_time(&self) -> Option<Time> {
        match self.near.last() {
            Some(e) => Some(e.time),
            None => self.far.peek().map(|e| e.time),
        }
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        if !self.due_now.is_empty() {
            return Some(self.now);
        }
        self.next_time()
    }

    /// Pops the earliest event if it is due at or before `until`, advancing the clock to it.
    /// Inlined into the run loop, its only caller, whatever the rest of the crate's size does to
    /// the compiler's heuristics (the loop pays a call per event otherwise: 2.7 % more
    /// instructions in bench/mptcp_bench.py when link/ was reorganised).
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, E)> {
        let next = self.next_time();
        let sorted_now = next.is_some_and(|t| t <= self.now);
        if !sorted_now && self.now <= until {
            if let Some(ev) = self.due_now.pop_front() {
                self.processed += 1;
                return Some((self.now, ev));
            }
        }
        match next {
            Some(t) if t <= until => {
                if self.near.is_empty() {
                    self.refill();
                }
                let e = self.near.pop().expect("peeked");
                self.now = e.time;
                self.processed += 1;
                Some((e.time, e.event))
            }
            _ => None,
        }
    }

    /// Moves the clock forward to `t` when no event remains before it.
    pub fn advance_to(&mut self, t: Time) {
        if t > self.now && self.due_now.is_empty() {
            self.now = t;
        }
    }
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// An owned, seeded random stream. Each component that needs randomness gets its own stream,
/// derived from the run seed and a fixed stream label, so adding a random draw in one component
/// never shifts the numbers another component sees.
pub struct RngStream {
    rng: Xoshiro256PlusPlus,
}

impl RngStream {
    /// `label` names the stream (e.g. path index); the same (seed, label) gives the same numbers.
    pub fn new(seed: u64, label: u64) -> Self {
        // SplitMix-style mixing of seed and label so that nearby labels give unrelated streams.
        let mut z = seed ^ label.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        RngStream { rng: Xoshiro256PlusPlus::seed_from_u64(z) }
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        // 53 random bits -> exactly representable doubles in [0, 1).
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller; one of the pair, so each call costs two uniforms).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]: ln is finite
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// True with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_run_in_schedule_order() {
        let mut q: EventQueue<u32> = EventQueue::new();
        q.schedule(Time::from_us(5), 1);
        q.schedule(Time::from_us(3), 2);
        q.schedule(Time::from_us(5), 3);
        q.schedule(Time::from_us(3), 4);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_until(Time::MAX).map(|(_, e)| e)).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(q.now(), Time::from_us(5));
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn schedule_order_survives_the_sequence_wrapping() {
        let mut q: EventQueue<u32> = EventQueue::new();
        q.next_seq = u32::MAX - 1;
        for e in 0..5 {
            q.schedule(Time::from_us(7), e);
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_until(Time::MAX).map(|(_, e)| e)).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
    }

    /// Events scheduled for the running instant bypass the heap but keep the (time, sequence)
    /// order: the heap's entries due now first (scheduled earlier), then those, then later ones.
    #[test]
    fn events_for_the_running_instant_keep_the_order() {
        let mut q: EventQueue<u32> = EventQueue::new();
        q.schedule(Time::from_us(2), 1);
        q.schedule(Time::from_us(2), 2);
        q.schedule(Time::from_us(4), 9);
        assert_eq!(q.pop_until(Time::MAX), Some((Time::from_us(2), 1)));
        // Running event 1 at 2 us schedules two more for 2 us (and one in the past, clamped).
        q.schedule(Time::from_us(2), 3);
        q.schedule(Time::from_us(1), 4);
        assert_eq!(q.len(), 4);
        assert_eq!(q.peek_time(), Some(Time::from_us(2)));
        assert_eq!(q.pop_until(Time::MAX), Some((Time::from_us(2), 2)));
        q.schedule(Time::from_us(2), 5);
        let rest: Vec<(Time, u32)> = std::iter::from_fn(|| q.pop_until(Time::MAX)).collect();
        let us = Time::from_us;
        assert_eq!(rest, vec![(us(2), 3), (us(2), 4), (us(2), 5), (us(4), 9)]);
        assert_eq!(q.processed(), 6);
        // Due now but past the horizon: nothing pops.
        let mut q: EventQueue<u32> = EventQueue::new();
        q.schedule(Time::from_us(5), 1);
        assert!(q.pop_until(Time::MAX).is_some());
        q.schedule(Time::from_us(5), 2);
        assert!(q.pop_until(Time::from_us(4)).is_none());
        assert!(q.pop_until(Time::from_us(5)).is_some());
        assert!(q.is_empty());
    }

    /// The sorted list, its overflow into the heap and the heap's entries coming back all keep
    /// the (time, schedule order) order: checked against a plain sort on a random workload with
    /// ties, far-future entries, hundreds pending (past NEAR_CAP) and events for the running
    /// instant.
    #[test]
    fn order_matches_a_sorted_model_past_the_list_capacity() {
        let mut rng = RngStream::new(3, 9);
        let mut q: EventQueue<u32> = EventQueue::new();
        // The model: (time, id) pending, ids in schedule order.
        let mut model: Vec<(Time, u32)> = Vec::new();
        let mut id = 0u32;
        let mut popped = 0;
        for round in 0..4000 {
            // Bursts of schedules, growing the queue to a few hundred entries, then draining.
            let n = if round % 1000 < 600 { 3 } else { 1 };
            for _ in 0..n {
                let now = q.now();
                let dt = match rng.next_u64() % 6 {
                    0 => 0,                              // the running instant
                    1 => rng.next_u64() % 3,             // ties
                    2 => 1_000_000 + rng.next_u64() % 7, // far future
                    _ => rng.next_u64() % 5_000,
                };
                let t = Time(now.ns() + dt);
                q.schedule(t, id);
                // Events for the running instant run after every entry already due then.
                model.push((t.max(now), id));
                id += 1;
            }
            if round % 1000 >= 600 || round % 2 == 0 {
                let want = model.iter().copied().min_by_key(|&(t, i)| (t, i));
                let got = q.pop_until(Time::MAX);
                assert_eq!(got, want, "pop {popped}");
                if let Some(w) = want {
                    model.retain(|&e| e != w);
                }
                popped += 1;
            }
            assert_eq!(q.len(), model.len());
        }
        while let Some(got) = q.pop_until(Time::MAX) {
            let want = model.iter().copied().min_by_key(|&(t, i)| (t, i)).expect("model has it");
            assert_eq!(got, want);
            model.retain(|&e| e != want);
        }
        assert!(model.is_empty());
    }

    #[test]
    fn pop_until_stops_at_horizon() {
        let mut q: EventQueue<u32> = EventQueue::new();
        q.schedule(Time::from_ms(1), 1);
        q.schedule(Time::from_ms(3), 2);
        assert!(q.pop_until(Time::from_ms(2)).is_some());
        assert!(q.pop_until(Time::from_ms(2)).is_none());
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn rng_streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = RngStream::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = RngStream::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = RngStream::new(7, 2);
                move |_| r.next_u64()
            })
            .collect();
        let d: Vec<u64> = (0..4)
            .map({
                let mut r = RngStream::new(8, 1);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        let mut r = RngStream::new(1, 1);
        let mean = (0..10_000).map(|_| r.uniform()).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    }
}
