//! A `drop` outage as the delay line sees it: the path cut at the client's end at one instant
//! (docs/emulate.md, "drop"; the simulator's link/wire.rs `toward_cut`). A cut window
//! `[start, end)` of a queue loses, of that queue's packets:
//!
//! - one from the client that reaches the line inside the window: sent after the client's end
//!   was cut, it never left (what the client sent before the cut arrives, however long it
//!   takes);
//! - one toward the client that is in the line at any time inside the window, arriving before
//!   its end and due at or after its start: on its way to an interface that went, it is lost
//!   with it.
//!
//! The line decides at the packet's arrival (from the client) and at its release (toward the
//! client), so the cut is as sharp as the line's polling, ~0.1 ms, where the emulator's nft set
//! and `ip link set down` take effect some milliseconds after the planned instant. Kept apart
//! from line.rs: holding (a scan) and cutting (a drop) are different outages of the same line.

use crate::line::Nanos;

/// One queue's cut windows, sorted and not overlapping (args.rs checks).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cuts {
    windows: Vec<(Nanos, Nanos)>,
}

impl Cuts {
    pub fn new(windows: Vec<(Nanos, Nanos)>) -> Self {
        debug_assert!(windows.windows(2).all(|w| w[0].1 <= w[1].0) && windows.iter().all(|w| w.0 < w.1));
        Cuts { windows }
    }

    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    pub fn len(&self) -> usize {
        self.windows.len()
    }

    /// A packet from the client arriving at `t`: lost if `t` is inside a window.
    pub fn loses_from_client(&self, t: Nanos) -> bool {
        self.windows.iter().any(|&(a, b)| a <= t && t < b)
    }

    /// A packet toward the client that arrived at `arrived` and is released at `released`:
    /// lost if it was in the line at some time inside a window.
    pub fn loses_toward_client(&self, arrived: Nanos, released: Nanos) -> bool {
        self.windows.iter().any(|&(a, b)| arrived < b && released >= a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn cut() -> Cuts {
        Cuts::new(vec![(10 * MS, 20 * MS), (40 * MS, 50 * MS)])
    }

    #[test]
    fn from_the_client_only_what_arrives_inside_a_window_is_lost() {
        let c = cut();
        let lost: Vec<Nanos> =
            [0, 9, 10, 15, 19, 20, 30, 40, 49, 50, 60].into_iter().filter(|&t| c.loses_from_client(t * MS)).collect();
        assert_eq!(lost, vec![10, 15, 19, 40, 49]);
        assert!(!Cuts::default().loses_from_client(15 * MS), "no windows: nothing is lost");
    }

    #[test]
    fn toward_the_client_what_is_in_flight_at_the_cut_or_arrives_during_it_is_lost() {
        let c = cut();
        // In flight across the cut's start (sent before, due after): lost.
        assert!(c.loses_toward_client(8 * MS, 13 * MS));
        // Due just before the cut: delivered; due at its instant: lost.
        assert!(!c.loses_toward_client(4 * MS, 10 * MS - 1));
        assert!(c.loses_toward_client(5 * MS, 10 * MS));
        // Arriving inside, due after the end: lost; arriving at the end: delivered.
        assert!(c.loses_toward_client(19 * MS, 24 * MS));
        assert!(!c.loses_toward_client(20 * MS, 25 * MS));
        // Between the windows, and a long delay spanning the second window: lost only then.
        assert!(!c.loses_toward_client(21 * MS, 30 * MS));
        assert!(c.loses_toward_client(30 * MS, 60 * MS));
    }
}
