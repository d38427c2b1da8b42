//! CoDel, the controlled-delay AQM, as a clock-free state machine: what it decides for each
//! packet its queue hands out, given when it was queued and when it leaves.
//!
//! The Netgear X10's kernel attaches fq_codel as the root qdisc of every interface that has a
//! transmit queue (docs/facts.md, "Transmit ring"); a single bulk flow has one of its sub-queues
//! to itself, so what it meets is CoDel on that queue. This follows Linux's `codel_dequeue` /
//! `codel_should_drop` (include/net/codel.h of the X10's kernel, 3.10) and RFC 8289 section 5:
//! - a packet's sojourn time is measured when it is dequeued;
//! - below `target` (or with no more than one packet's bytes left behind it) the queue is fine;
//! - above it for a whole `interval`, CoDel drops the packet and enters its dropping state, in
//!   which it drops the next one `interval / sqrt(count)` after the last, `count` growing by one
//!   a drop, until a dequeued packet's sojourn time is below `target` again;
//! - re-entering soon after leaving (within 16 intervals) resumes from the drop rate that
//!   controlled the queue last time (`count - lastcount`).
//!
//! The control law uses an exact square root where Linux keeps a Newton-iterated reciprocal
//! (`codel_Newton_step`): RFC 8289's reference form. ECN marking is not modelled: the flows of
//! the papers' experiments do not negotiate ECN (Linux's default `tcp_ecn = 2` only answers a
//! peer that asks), so CoDel drops.

use crate::time::Time;

/// fq_codel's defaults (Linux codel.h `codel_params_init`: 5 ms target, 100 ms interval;
/// RFC 8289 4.3-4.4).
pub const TARGET: Time = Time::from_ms(5);
pub const INTERVAL: Time = Time::from_ms(100);

/// One queue's CoDel state.
#[derive(Debug, Clone, Copy)]
pub struct Codel {
    target: Time,
    interval: Time,
    /// When the sojourn time will have been above target for a whole interval (None: below).
    first_above: Option<Time>,
    /// In the dropping state.
    dropping: bool,
    /// Drops since entering the dropping state (with the carry-over of a quick re-entry).
    count: u32,
    lastcount: u32,
    /// When the next drop is due while dropping.
    drop_next: Time,
    /// The largest packet seen, bytes (Linux `maxpacket`): a queue holding no more than this
    /// after the dequeue is never dropped from.
    maxpacket: u64,
    /// Packets dropped.
    pub drops: u64,
}

impl Default for Codel {
    fn default() -> Self {
        Codel::new(TARGET, INTERVAL)
    }
}

impl Codel {
    pub fn new(target: Time, interval: Time) -> Codel {
        Codel {
            target,
            interval,
            first_above: None,
            dropping: false,
            count: 0,
            lastcount: 0,
            drop_next: Time::ZERO,
            maxpacket: 0,
            drops: 0,
        }
    }

    /// `codel_should_drop`: a packet of `bytes` queued at `queued` leaves at `now`, leaving
    /// `backlog` bytes behind it. Whether it may be dropped.
    fn ok_to_drop(&mut self, queued: Time, now: Time, bytes: u64, backlog: u64) -> bool {
        self.maxpacket = self.maxpacket.max(bytes);
        let sojourn = now.saturating_sub(queued);
        if sojourn < self.target || backlog <= self.maxpacket {
            // Went below: stay below for at least an interval before dropping again.
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.interval);
                false
            }
            Some(t) => now > t,
        }
    }

    /// The time of the next drop: `t + interval / sqrt(count)` (RFC 8289 5.5, `control_law`).
    fn control_law(&self, t: Time) -> Time {
        let gap = self.interval.ns() as f64 / (self.count.max(1) as f64).sqrt();
        t + Time::from_ns(gap as u64)
    }

    /// The queue's empty when asked for a packet: CoDel leaves its dropping state.
    pub fn on_empty(&mut self) {
        self.dropping = false;
        self.first_above = None;
    }

    /// The queue's head packet (`bytes`, queued at `queued`) is dequeued at `now`, `backlog`
    /// bytes behind it: true if CoDel drops it (the caller then offers the next head, at the
    /// same `now`), false if it goes on to the driver.
    pub fn drop_head(&mut self, queued: Time, now: Time, bytes: u64, backlog: u64) -> bool {
        let ok = self.ok_to_drop(queued, now, bytes, backlog);
        if self.dropping {
            if !ok {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
                return false;
            }
            if now >= self.drop_next {
                // Time for the next drop; the one after is scheduled from this one's due time.
                self.count = self.count.saturating_add(1);
                self.drop_next = self.control_law(self.drop_next);
                self.drops += 1;
                return true;
            }
            return false;
        }
        if !ok {
            return false;
        }
        // Enter the dropping state with this packet. Re-entering shortly after the last
        // dropping state resumes its drop rate (Linux: `delta > 1` within 16 intervals).
        let delta = self.count.saturating_sub(self.lastcount);
        let recent = now.saturating_sub(self.drop_next) < Time::from_ns(16 * self.interval.ns());
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.lastcount = self.count;
        self.dropping = true;
        self.drop_next = self.control_law(now);
        self.drops += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1500;
    const BACKLOG: u64 = 100 * MTU;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    #[test]
    fn a_queue_below_target_is_never_dropped_from() {
        let mut c = Codel::default();
        for t in 0..10_000 {
            // 4.9 ms of sojourn, every 0.1 ms for 1 s, with a large backlog.
            let now = Time::from_us(5_000 + t * 100);
            assert!(!c.drop_head(now - Time::from_us(4_900), now, MTU, BACKLOG));
        }
        assert_eq!(c.drops, 0);
    }

    #[test]
    fn above_target_it_waits_one_interval_then_drops() {
        let mut c = Codel::default();
        // 6 ms sojourn from t = 10 ms on: first above at 10 ms, so no drop until after 110 ms.
        let mut first_drop = None;
        for t in 10..300 {
            let now = ms(t);
            if c.drop_head(now - ms(6), now, MTU, BACKLOG) {
                first_drop.get_or_insert(t);
            }
        }
        assert_eq!(first_drop, Some(111));
    }

    #[test]
    fn while_dropping_the_gaps_shrink_as_one_over_sqrt_count() {
        let mut c = Codel::default();
        let mut drops = Vec::new();
        for t in 0..2_000_000u64 {
            // A standing 20 ms queue, a packet every 10 us, for 20 s.
            let now = Time::from_us(20_000 + t * 10);
            if c.drop_head(now - ms(20), now, MTU, BACKLOG) {
                drops.push(now);
            }
        }
        // The first drop after one interval, then drop n + 1 100 ms / sqrt(n) after drop n:
        // 100, 70.7, 57.7, 50 ms ...
        let gap = |i: usize| (drops[i + 1] - drops[i]).ms_f64();
        assert!((gap(0) - 100.0).abs() < 0.02, "{}", gap(0));
        assert!((gap(1) - 70.71).abs() < 0.02, "{}", gap(1));
        assert!((gap(2) - 57.74).abs() < 0.02, "{}", gap(2));
        assert!((gap(3) - 50.0).abs() < 0.02, "{}", gap(3));
        assert!(gap(200) < 7.1 && gap(200) > 7.0, "{}", gap(200));
        assert_eq!(c.drops as usize, drops.len());
    }

    #[test]
    fn it_leaves_the_dropping_state_when_the_sojourn_falls_below_target() {
        let mut c = Codel::default();
        let mut now = ms(0);
        while !c.drop_head(now.saturating_sub(ms(10)), now, MTU, BACKLOG) {
            now += ms(1);
        }
        now += ms(1);
        assert!(!c.drop_head(now - ms(1), now, MTU, BACKLOG), "below target: no drop");
        // Above again: it waits a full interval before the next drop (a fresh first_above).
        let back = now + ms(1);
        let mut next = None;
        for t in 0..500 {
            let at = back + ms(t);
            if c.drop_head(at - ms(10), at, MTU, BACKLOG) {
                next = Some(at - back);
                break;
            }
        }
        assert_eq!(next, Some(ms(101)));
    }

    #[test]
    fn a_queue_of_one_packet_is_never_dropped_from() {
        let mut c = Codel::default();
        for t in 0..1000 {
            let now = ms(t);
            assert!(!c.drop_head(now - ms(50), now, MTU, MTU));
        }
    }
}
