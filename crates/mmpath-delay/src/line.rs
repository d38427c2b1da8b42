//! The delay line itself, apart from netlink: per queue a FIFO of held packets, each released a
//! fixed time after it arrived. One delay per queue keeps every FIFO sorted by release time, so a
//! release is a look at the queues' heads (there are at most a handful), and packets of one queue
//! leave in the order they came: a constant propagation delay never reorders, as sch_netem's
//! `delay` without jitter does not.

use std::collections::VecDeque;

/// Times are nanoseconds on the caller's monotonic clock.
pub type Nanos = u64;

struct Held<T> {
    arrived: Nanos,
    due: Nanos,
    bytes: u64,
    item: T,
}

/// What one queue did, for the emulator's emu.json (`delay_line`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueStats {
    pub queue: u16,
    pub delay_ns: Nanos,
    pub packets: u64,
    pub bytes: u64,
    pub max_held_packets: usize,
    pub max_held_bytes: u64,
    /// Release time minus due time: how late the polling loop let packets go.
    pub late_max_ns: Nanos,
    pub late_sum_ns: u128,
    /// Releases more than 1 ms late (a loop that could not keep up).
    pub late_over_1ms: u64,
}

impl QueueStats {
    pub fn late_mean_ns(&self) -> f64 {
        if self.packets == 0 {
            0.0
        } else {
            self.late_sum_ns as f64 / self.packets as f64
        }
    }
}

struct Fifo<T> {
    held: VecDeque<Held<T>>,
    held_bytes: u64,
    stats: QueueStats,
}

pub struct DelayLine<T> {
    fifos: Vec<Fifo<T>>,
}

const LATE_WARN_NS: Nanos = 1_000_000;

impl<T> DelayLine<T> {
    /// `queues`: (netfilter queue number, one-way delay in ns), numbers distinct.
    pub fn new(queues: &[(u16, Nanos)]) -> Self {
        let fifos = queues
            .iter()
            .map(|&(queue, delay_ns)| Fifo {
                held: VecDeque::new(),
                held_bytes: 0,
                stats: QueueStats { queue, delay_ns, ..QueueStats::default() },
            })
            .collect();
        DelayLine { fifos }
    }

    /// Holds `item`, which arrived at `now` on `queue`. An item of a queue the line was not
    /// given comes straight back (to be let through at once).
    pub fn push(&mut self, queue: u16, now: Nanos, bytes: u64, item: T) -> Option<T> {
        let Some(f) = self.fifos.iter_mut().find(|f| f.stats.queue == queue) else {
            return Some(item);
        };
        f.held.push_back(Held { arrived: now, due: now.saturating_add(f.stats.delay_ns), bytes, item });
        f.held_bytes += bytes;
        f.stats.max_held_packets = f.stats.max_held_packets.max(f.held.len());
        f.stats.max_held_bytes = f.stats.max_held_bytes.max(f.held_bytes);
        None
    }

    /// The earliest release time of anything held.
    pub fn next_due(&self) -> Option<Nanos> {
        self.fifos.iter().filter_map(|f| f.held.front().map(|h| h.due)).min()
    }

    /// The held item with the earliest release time, if that time has come by `now`.
    pub fn pop_due(&mut self, now: Nanos) -> Option<T> {
        let f = self
            .fifos
            .iter_mut()
            .filter(|f| f.held.front().is_some_and(|h| h.due <= now))
            .min_by_key(|f| f.held.front().map(|h| h.due))?;
        let h = f.held.pop_front()?;
        f.held_bytes -= h.bytes;
        let late = now - h.due;
        let s = &mut f.stats;
        s.packets += 1;
        s.bytes += h.bytes;
        s.late_max_ns = s.late_max_ns.max(late);
        s.late_sum_ns += u128::from(late);
        s.late_over_1ms += u64::from(late > LATE_WARN_NS);
        debug_assert!(now >= h.arrived + s.delay_ns);
        Some(h.item)
    }

    pub fn held(&self) -> usize {
        self.fifos.iter().map(|f| f.held.len()).sum()
    }

    pub fn stats(&self) -> Vec<QueueStats> {
        self.fifos.iter().map(|f| f.stats.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn holds_each_packet_for_its_queues_delay_in_arrival_order() {
        let mut line = DelayLine::new(&[(0, 25 * MS)]);
        assert!(line.push(0, 0, 1500, "a").is_none());
        assert!(line.push(0, MS, 1500, "b").is_none());
        assert_eq!(line.next_due(), Some(25 * MS));
        assert_eq!(line.pop_due(25 * MS - 1), None, "released early");
        assert_eq!(line.pop_due(25 * MS), Some("a"));
        assert_eq!(line.pop_due(25 * MS), None, "b is due 1 ms later");
        assert_eq!(line.pop_due(27 * MS), Some("b"));
        let s = &line.stats()[0];
        assert_eq!((s.packets, s.bytes, s.max_held_packets, s.max_held_bytes), (2, 3000, 2, 3000));
        assert_eq!(s.late_max_ns, MS, "b went 1 ms after its time");
        assert_eq!(s.late_over_1ms, 0, "exactly 1 ms is not over");
        assert_eq!(line.held(), 0);
    }

    #[test]
    fn queues_with_different_delays_release_by_due_time_not_by_queue() {
        // Path 0 with 25 ms one way, path 1 with 5 ms: a later packet on the short queue
        // overtakes an earlier one on the long one, as on two links of different lengths.
        let mut line = DelayLine::new(&[(0, 25 * MS), (1, 5 * MS)]);
        line.push(0, 0, 100, "long");
        line.push(1, 2 * MS, 100, "short");
        assert_eq!(line.next_due(), Some(7 * MS));
        assert_eq!(line.pop_due(30 * MS), Some("short"));
        assert_eq!(line.pop_due(30 * MS), Some("long"));
        assert_eq!(line.pop_due(30 * MS), None);
        let s = line.stats();
        assert_eq!((s[0].late_max_ns, s[1].late_max_ns), (5 * MS, 23 * MS));
        assert_eq!(s[1].late_over_1ms, 1);
        assert!((s[1].late_mean_ns() - 23e6).abs() < 1.0);
    }

    #[test]
    fn an_unknown_queue_is_let_through() {
        let mut line: DelayLine<u32> = DelayLine::new(&[(3, MS)]);
        assert_eq!(line.push(4, 0, 60, 7), Some(7));
        assert_eq!(line.held(), 0);
        assert_eq!(line.next_due(), None);
    }
}
