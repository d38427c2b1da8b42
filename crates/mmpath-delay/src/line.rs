//! The delay line itself, apart from netlink: per queue a FIFO of held packets, each released a
//! fixed time after it arrived. One delay per queue keeps every FIFO sorted by release time, so a
//! release is a look at the queues' heads (there are at most a handful), and packets of one queue
//! leave in the order they came: a constant propagation delay never reorders, as sch_netem's
//! `delay` without jitter does not.
//!
//! Hold windows (a scanning radio off its channel, docs/emulate.md): a queue may have a sorted
//! list of `[start, end)` windows on the same clock. A packet whose due time falls inside one
//! is released at the window's end instead (and if that end lies in the next window, back to
//! back, at that one's end), as a radio off its channel keeps its frames and sends them when it
//! is back. A queue's release times never decrease, so a packet never overtakes an earlier one
//! of its queue. A queue without windows behaves exactly as before.

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
    /// How many hold windows the queue has.
    pub hold_windows: usize,
    /// Packets whose release a hold window (or an earlier held packet) moved later.
    pub held_by_window: u64,
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
    /// Hold windows `[start, end)`, sorted, not overlapping (args.rs checks).
    holds: Vec<(Nanos, Nanos)>,
    /// The first window that can still hold a packet: the ones before it end at or before the
    /// last release time given out (release times of a queue never decrease).
    hold_next: usize,
    /// The latest release time given out in this queue.
    last_due: Nanos,
}

impl<T> Fifo<T> {
    /// When a packet due at `due` leaves: moved to the end of the window it falls in (and on
    /// through windows back to back), never before the queue's previous release. No windows:
    /// `due` itself. Allocation-free; amortized O(1) per packet.
    fn release_time(&mut self, due: Nanos) -> Nanos {
        if self.holds.is_empty() {
            return due;
        }
        let mut t = due.max(self.last_due);
        while let Some(&(start, end)) = self.holds.get(self.hold_next) {
            if end <= t {
                self.hold_next += 1; // over before this packet is due: no later packet can fall in it
            } else if start <= t {
                t = end; // inside: released when the window ends
                self.hold_next += 1;
            } else {
                break;
            }
        }
        if t != due {
            self.stats.held_by_window += 1;
        }
        self.last_due = t;
        t
    }
}

pub struct DelayLine<T> {
    fifos: Vec<Fifo<T>>,
}

const LATE_WARN_NS: Nanos = 1_000_000;

impl<T> DelayLine<T> {
    /// `queues`: (netfilter queue number, one-way delay in ns), numbers distinct.
    #[cfg(test)]
    pub fn new(queues: &[(u16, Nanos)]) -> Self {
        Self::with_holds(queues, &[])
    }

    /// As `new`, with hold windows `[start, end)` for some of the queues: (queue number, its
    /// windows sorted by start, not overlapping; args.rs checks). A window on a queue the line
    /// was not given is ignored.
    pub fn with_holds(queues: &[(u16, Nanos)], holds: &[(u16, Vec<(Nanos, Nanos)>)]) -> Self {
        let fifos = queues
            .iter()
            .map(|&(queue, delay_ns)| {
                let windows: Vec<(Nanos, Nanos)> =
                    holds.iter().filter(|h| h.0 == queue).flat_map(|h| h.1.iter().copied()).collect();
                debug_assert!(windows.iter().all(|w| w.0 < w.1));
                debug_assert!(windows.windows(2).all(|w| w[0].1 <= w[1].0));
                Fifo {
                    held: VecDeque::new(),
                    held_bytes: 0,
                    stats: QueueStats { queue, delay_ns, hold_windows: windows.len(), ..QueueStats::default() },
                    holds: windows,
                    hold_next: 0,
                    last_due: 0,
                }
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
        let due = f.release_time(now.saturating_add(f.stats.delay_ns));
        f.held.push_back(Held { arrived: now, due, bytes, item });
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
    #[cfg(test)]
    pub fn pop_due(&mut self, now: Nanos) -> Option<T> {
        self.pop_due_arrived(now).map(|(item, _)| item)
    }

    /// `pop_due`, with the time the item arrived (a cut window asks: cut.rs).
    pub fn pop_due_arrived(&mut self, now: Nanos) -> Option<(T, Nanos)> {
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
        Some((h.item, h.arrived))
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

    /// Pops everything due by `now`, in release order.
    fn drain<T>(line: &mut DelayLine<T>, now: Nanos) -> Vec<T> {
        std::iter::from_fn(|| line.pop_due(now)).collect()
    }

    #[test]
    fn without_windows_nothing_changes() {
        // The same pushes through `new` and through `with_holds` with no windows (and windows
        // for another queue only): the same release times, items and stats.
        let pushes = [(0u16, 0, "a"), (1, MS / 2, "x"), (0, MS, "b"), (0, 3 * MS, "c"), (1, 4 * MS, "y")];
        let mut plain = DelayLine::new(&[(0, 25 * MS), (1, 5 * MS)]);
        let mut empty = DelayLine::with_holds(&[(0, 25 * MS), (1, 5 * MS)], &[(0, vec![]), (9, vec![(0, MS)])]);
        for line in [&mut plain, &mut empty] {
            for &(q, t, it) in &pushes {
                assert!(line.push(q, t, 100, it).is_none());
            }
        }
        let mut t = 0;
        while plain.held() > 0 {
            assert_eq!(plain.next_due(), empty.next_due());
            t = plain.next_due().unwrap();
            assert_eq!(drain(&mut plain, t), drain(&mut empty, t), "at {t}");
        }
        assert_eq!(t, 28 * MS);
        assert_eq!(empty.held(), 0);
        assert_eq!(plain.stats(), empty.stats());
        assert!(empty.stats().iter().all(|s| s.held_by_window == 0 && s.hold_windows == 0));
    }

    #[test]
    fn a_packet_due_inside_a_window_leaves_at_its_end() {
        // 5 ms delay; held from 10 to 50 ms.
        let mut line = DelayLine::with_holds(&[(0, 5 * MS)], &[(0, vec![(10 * MS, 50 * MS)])]);
        line.push(0, 0, 100, "before"); // due 5: before the window
        line.push(0, 4 * MS, 100, "start"); // due 9: still before
        line.push(0, 5 * MS, 100, "in"); // due 10: the window's first instant
        line.push(0, 40 * MS, 100, "late"); // due 45: inside
        line.push(0, 45 * MS, 100, "after"); // due 50: the window's end is not in it
        assert_eq!(drain(&mut line, 5 * MS), vec!["before"]);
        assert_eq!(drain(&mut line, 9 * MS), vec!["start"]);
        assert_eq!(line.next_due(), Some(50 * MS));
        assert_eq!(drain(&mut line, 50 * MS - 1), Vec::<&str>::new(), "released inside the window");
        assert_eq!(drain(&mut line, 50 * MS), vec!["in", "late", "after"]);
        let s = &line.stats()[0];
        assert_eq!((s.hold_windows, s.held_by_window, s.packets), (1, 2, 5));
        assert_eq!(s.late_max_ns, 0, "lateness counts from the held release time");
    }

    #[test]
    fn fifo_order_is_kept_across_a_window_end() {
        // Two queues; queue 0 held 10-20 ms. A packet of queue 0 due inside the window and the
        // next one due just after it leave in arrival order; queue 1 is not held meanwhile.
        let mut line = DelayLine::with_holds(&[(0, 2 * MS), (1, 2 * MS)], &[(0, vec![(10 * MS, 20 * MS)])]);
        line.push(0, 17 * MS, 100, "held"); // due 19 -> 20
        line.push(1, 12 * MS, 100, "other"); // due 14, not held
        line.push(0, 18 * MS, 100, "next"); // due 20: after the window; must not overtake
        line.push(0, 18 * MS + 1, 100, "third"); // due 20 + 1 ns
        assert_eq!(drain(&mut line, 15 * MS), vec!["other"]);
        assert_eq!(drain(&mut line, 20 * MS), vec!["held", "next"]);
        assert_eq!(drain(&mut line, 21 * MS), vec!["third"]);
        assert_eq!(line.stats()[0].held_by_window, 1);
    }

    #[test]
    fn a_later_packet_never_overtakes_a_held_one() {
        // A window that ends after a later packet's own due time: the later packet (due after
        // the window's start is passed by the cursor) still waits for the held one.
        let mut line = DelayLine::with_holds(&[(0, 0)], &[(0, vec![(10 * MS, 30 * MS), (40 * MS, 50 * MS)])]);
        line.push(0, 12 * MS, 1, "a"); // -> 30
        line.push(0, 25 * MS, 1, "b"); // due 25, inside too -> 30
        line.push(0, 35 * MS, 1, "c"); // free
        line.push(0, 45 * MS, 1, "d"); // second window -> 50
        assert_eq!(drain(&mut line, 29 * MS), Vec::<&str>::new());
        assert_eq!(drain(&mut line, 35 * MS), vec!["a", "b", "c"]);
        assert_eq!(drain(&mut line, 49 * MS), Vec::<&str>::new());
        assert_eq!(drain(&mut line, 50 * MS), vec!["d"]);
        assert_eq!(line.stats()[0].held_by_window, 3);
    }

    #[test]
    fn windows_back_to_back_hold_through_both() {
        // 10-20 and 20-30 ms back to back (a dwell cut at a scan's end and the next scan's
        // first, or dwells without rest): a packet due in the first leaves at 30, not at 20.
        let mut line = DelayLine::with_holds(&[(0, MS)], &[(0, vec![(10 * MS, 20 * MS), (20 * MS, 30 * MS)])]);
        line.push(0, 10 * MS, 1, "a"); // due 11 -> 20 -> 30
        line.push(0, 25 * MS, 1, "b"); // due 26 -> 30
        line.push(0, 29 * MS, 1, "c"); // due 30: free
        assert_eq!(line.next_due(), Some(30 * MS));
        assert_eq!(drain(&mut line, 30 * MS - 1), Vec::<&str>::new());
        assert_eq!(drain(&mut line, 30 * MS), vec!["a", "b", "c"]);
    }
}
