//! FixedRatio (seed 002, from the authors' MuSher work): rounds of 100 segments, `r` to the
//! first subflow (the 11ad one by convention), `100 - r` to the other.
//!
//! The round logic, and why a subflow without cwnd room makes the scheduler wait instead of
//! giving its turn to the other subflow, is in `ratio.rs` (it follows the authors' public
//! `mptcp_ratio.c`). Seed 002: "assigns packets to the two interfaces based on a user-defined
//! ratio"; the throughput-optimal ratio equals the ratio of the path throughputs (73:27 down).

use super::ratio::{ratio_available, RatioRounds};
use super::{ConnView, SchedAction, Scheduler, SubflowView};
use crate::time::Time;

pub struct FixedRatio {
    rounds: RatioRounds,
}

impl FixedRatio {
    /// `ratio`: segments per 100 for subflow 0 (values above 100 are clamped to 100).
    pub fn new(ratio: u32) -> Self {
        FixedRatio { rounds: RatioRounds::new(ratio) }
    }
}

impl Scheduler for FixedRatio {
    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "fixedratio"
    }

    fn select(
        &mut self,
        _now: Time,
        conn: &ConnView,
        sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) -> Option<usize> {
        self.rounds.select(sfs, conn.reinjecting, ratio_available)
    }

    fn metric(&self) -> f64 {
        self.rounds.ratio() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::ratio::tests::{full, sf};
    use super::*;

    fn run(s: &mut FixedRatio, sfs: &[SubflowView], n: usize) -> [u32; 2] {
        let mut got = [0u32; 2];
        let mut act = Vec::new();
        for _ in 0..n {
            if let Some(i) = s.select(Time::ZERO, &ConnView::default(), sfs, &mut act) {
                got[i] += 1;
            }
        }
        assert!(act.is_empty(), "FixedRatio asks for no side effects");
        got
    }

    #[test]
    fn splits_73_27_per_round() {
        let mut s = FixedRatio::new(73);
        assert_eq!(run(&mut s, &[sf(0), sf(1)], 1000), [730, 270]);
        assert_eq!(s.metric(), 73.0);
    }

    #[test]
    fn waits_for_the_full_subflow() {
        // Subflow 0's turn comes after subflow 1's 27; with subflow 0's cwnd full the
        // scheduler waits rather than send subflow 0's share on subflow 1.
        let mut s = FixedRatio::new(73);
        assert_eq!(run(&mut s, &[sf(0), sf(1)], 27), [0, 27]);
        assert_eq!(run(&mut s, &[full(0), sf(1)], 50), [0, 0]);
        assert_eq!(run(&mut s, &[sf(0), sf(1)], 73), [73, 0]);
    }

    #[test]
    fn pf_subflow_is_skipped() {
        let mut s = FixedRatio::new(73);
        let mut blocked = sf(0);
        blocked.pf = true;
        assert_eq!(run(&mut s, &[blocked, sf(1)], 300), [0, 300]);
    }
}
