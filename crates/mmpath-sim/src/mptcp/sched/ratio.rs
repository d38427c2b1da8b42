//! The round logic shared by the ratio schedulers (FixedRatio, MuSher, AMuSe).
//!
//! Source: the authors' public code, swetanksaha/mptcp-musher `net/mptcp/mptcp_ratio.c`
//! (`mptcp_ratio_next_segment`, `choose_subflow`, `mptcp_ratio_is_available`), the scheduler
//! seed 002 calls FixedRatio and MuSher builds on. Read for its rules; the code here is ours.
//!
//! Rules taken from it:
//! - A round is `num_segments` = 100 segments. The first subflow gets `r` of them, the other
//!   `100 - r` (the source alternates r / 100 - r by list position; with the two subflows the
//!   papers use that is "subflow 0 gets r"; here every subflow other than 0 gets 100 - r).
//! - Each subflow counts the segments it got this round (`quota`). The scheduler keeps feeding
//!   a subflow that is part way through its share; otherwise it starts an unused one (the
//!   source's loop keeps the *last* unused subflow in list order, so we do too).
//! - When every *available* subflow has used its share, the round restarts: the quotas of the
//!   available subflows go back to 0 and the ratio is re-read (`num_segments_flow_one =
//!   sysctl_num_segments_flow_one`), so a new ratio takes effect at a round boundary.
//! - Unavailable subflows (not established, pf, in the Loss state) are skipped entirely, so a
//!   round completes with the available ones alone: one subflow down never stalls the other.
//! - The cwnd is NOT looked at while choosing (`cwnd_limited` module parameter defaults to 0).
//!   Only after the choice is the chosen subflow's cwnd tested (`mptcp_ratio_is_available(...,
//!   cwnd_test = true)`), and if it has no room the source returns NULL: the segment WAITS for
//!   that subflow; it is not handed to another one. This is what makes the split exactly r :
//!   100 - r whatever the paths' speeds, so throughput = min(C0 / r, C1 / (1 - r)) with its
//!   single peak at r = C0 / (C0 + C1), the shape of seed 002's ratio sweep. A work-conserving
//!   "skip to the other subflow" rule would instead give a flat sweep (the fast path takes the
//!   slack whatever r is), which is not what seed 002 measured.
//! - Reinjected data (of a failed subflow) does not count against the round: it goes to an
//!   available subflow with cwnd room (`ratio_get_available_subflow`, which keeps the last match
//!   in list order).
//!
//! Deviation (documented): if every available subflow has a zero share (e.g. ratio 100:0 and the
//! 11ad subflow is pf), the source would loop in its `retry` forever; here the data goes to the
//! first available subflow with room, outside the round, so the connection keeps moving.

use super::{LinkEvent, SchedAction, SubflowView};

/// Segments per round (mptcp_ratio.c `num_segments` default 100; seed 002 "for every 100 packets").
pub const ROUND_SEGMENTS: u32 = 100;

/// Why `RatioRounds::select` returned None, for schedulers that learn from it (AMuSe).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The subflow whose turn it is has no cwnd room.
    NoRoom(usize),
    /// No subflow is available at all.
    NoneAvailable,
}

/// The share of segments for subflow 0 that gives it `byte_share` percent of the bytes.
///
/// The rounds count segments (mptcp_ratio.c), so where the subflows' MSS differ (11ad at MTU
/// 7912 beside 11ac at 1500: 7860 vs 1448 bytes here) a share derived from rates, which are in
/// bytes, must be converted before the rounds use it: 70 % of the bytes on 11ad is 30 segments
/// in 100. Equal MSS leave the share as it is; 0 and 100 stay put.
pub fn segment_share(byte_share: f64, mss: [u32; 2]) -> u32 {
    let b = byte_share.clamp(0.0, 100.0);
    let s0 = b / mss[0].max(1) as f64;
    let s1 = (100.0 - b) / mss[1].max(1) as f64;
    if s0 + s1 <= 0.0 {
        return b.round() as u32;
    }
    (100.0 * s0 / (s0 + s1)).round() as u32
}

/// Round state of a ratio scheduler.
#[derive(Debug, Clone)]
pub struct RatioRounds {
    /// Share of subflow 0 in the current round.
    active: u32,
    /// Share to use from the next round on (the source's sysctl, re-read at each round reset).
    configured: u32,
    /// Segments each subflow got in the current round, by subflow id. Grows only when a
    /// subflow id is seen for the first time (never per segment).
    quota: Vec<u32>,
    /// The last reason for a None, if the last call returned None.
    pub last_wait: Option<Wait>,
}

impl RatioRounds {
    pub fn new(ratio: u32) -> Self {
        let r = ratio.min(ROUND_SEGMENTS);
        RatioRounds { active: r, configured: r, quota: Vec::with_capacity(4), last_wait: None }
    }

    /// The ratio in force for new rounds (what MuSher / AMuSe last set).
    pub fn ratio(&self) -> u32 {
        self.configured
    }

    /// The ratio of the round in progress.
    pub fn active_ratio(&self) -> u32 {
        self.active
    }

    /// Sets the ratio; it takes effect at the next round boundary, as in the source.
    pub fn set_ratio(&mut self, ratio: u32) {
        self.configured = ratio.min(ROUND_SEGMENTS);
    }

    /// Segments assigned to subflow `id` in the current round.
    pub fn quota(&self, id: usize) -> u32 {
        self.quota.get(id).copied().unwrap_or(0)
    }

    fn share(&self, id: usize) -> u32 {
        if id == 0 {
            self.active
        } else {
            ROUND_SEGMENTS - self.active
        }
    }

    /// One decision. `available` says whether a subflow may carry data at all (the caller's
    /// notion: established, not pf, not in Loss, plus AMuSe's scan exclusion).
    pub fn select(
        &mut self,
        sfs: &[SubflowView],
        reinjecting: bool,
        available: impl Fn(&SubflowView) -> bool,
    ) -> Option<usize> {
        if let Some(max_id) = sfs.iter().map(|s| s.id).max() {
            if self.quota.len() <= max_id {
                self.quota.resize(max_id + 1, 0);
            }
        }
        self.last_wait = None;

        if reinjecting {
            // ratio_get_available_subflow: last available subflow with cwnd room; no quota.
            let pick = sfs.iter().rev().find(|s| available(s) && s.has_cwnd_room()).map(|s| s.id);
            if pick.is_none() {
                self.last_wait = Some(Wait::NoneAvailable);
            }
            return pick;
        }

        // At most two passes: the second one after a round reset (the source's `goto retry`).
        for pass in 0..2 {
            let mut chosen: Option<&SubflowView> = None;
            let mut considered = 0u32;
            let mut full = 0u32;
            for sf in sfs {
                if !available(sf) {
                    continue;
                }
                considered += 1;
                let share = self.share(sf.id);
                let q = self.quota[sf.id];
                if share == 0 {
                    full += 1;
                    continue;
                }
                if q > 0 && q < share {
                    // Part way through its share: keep feeding it.
                    chosen = Some(sf);
                    break;
                }
                if q == 0 {
                    // Unused this round; a later unused subflow overrides (source order).
                    chosen = Some(sf);
                }
                if q >= share {
                    full += 1;
                }
            }
            if let Some(sf) = chosen {
                if !sf.has_cwnd_room() {
                    // The source returns NULL: wait for this subflow, never give its turn away.
                    self.last_wait = Some(Wait::NoRoom(sf.id));
                    return None;
                }
                self.quota[sf.id] += 1;
                return Some(sf.id);
            }
            if considered == 0 {
                self.last_wait = Some(Wait::NoneAvailable);
                return None;
            }
            if considered == full && pass == 0 {
                // Every available subflow used its share: new round, re-read the ratio.
                for sf in sfs {
                    if available(sf) {
                        self.quota[sf.id] = 0;
                    }
                }
                self.active = self.configured;
                continue;
            }
            break;
        }
        // Every available subflow has a zero share (the subflow with the whole share is down):
        // keep the data moving on the first available subflow with room (see module docs).
        let pick = sfs.iter().find(|s| available(s) && s.has_cwnd_room()).map(|s| s.id);
        if pick.is_none() {
            self.last_wait = Some(Wait::NoneAvailable);
        }
        pick
    }
}

/// mptcp_ratio_is_available without the cwnd test: established (not pre_established), not pf,
/// not in Loss (SACK is on, so the source's Reno exception does not apply).
pub fn ratio_available(sf: &SubflowView) -> bool {
    sf.established && !sf.pf && !sf.in_loss
}

/// Blockage recovery shared by MuSher (paper: clear pf when the interface is back, restore
/// cwnd / ssthresh to their pre-loss values, probe) and AMuSe-BLOCKAGE (seed 004: "resetting the
/// pf flag" and "restore the cwnd to the value just before the loss event"). The authors' code
/// (multipath-tcp/mptcp net/mptcp/mptcp_ratio.c, the commented "shivanga" block in
/// mptcp_ratio_is_available) does it when the device is up again *and* the subflow is pf: pf = 0,
/// cwnd = undo_cwnd, ssthresh = prior_ssthresh, then write_wakeup (the probe). We act when the
/// subflow is pf or still in Loss (an RTO happened during the outage); after a blockage short
/// enough to end before any RTO there is nothing to undo.
pub fn blockage_recovery(sf: usize, ev: LinkEvent, sfs: &[SubflowView], act: &mut Vec<SchedAction>) {
    if ev != LinkEvent::Up {
        return;
    }
    let Some(v) = sfs.iter().find(|s| s.id == sf) else {
        return;
    };
    if v.pf || v.in_loss {
        act.push(SchedAction::ClearPf(sf));
        act.push(SchedAction::RestoreCwnd(sf));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A subflow with plenty of cwnd room.
    pub fn sf(id: usize) -> SubflowView {
        SubflowView {
            id,
            path: id as u16,
            established: true,
            cwnd: 1000,
            ssthresh: 1000,
            mss: 1448,
            srtt_ns: 1_000_000,
            link_up: true,
            ..Default::default()
        }
    }

    /// A subflow whose cwnd is full.
    pub fn full(id: usize) -> SubflowView {
        let mut s = sf(id);
        s.in_flight = s.cwnd;
        s
    }

    #[test]
    fn segment_share_converts_bytes_to_segments_by_mss() {
        // Equal MSS: unchanged.
        for b in [0.0, 5.0, 66.0, 73.0, 100.0] {
            assert_eq!(segment_share(b, [1448, 1448]), b as u32);
        }
        // 70 % of the bytes on a 7860-byte MSS beside 1448: 0.7 / 7860 vs 0.3 / 1448 per byte,
        // 100 x 8.906e-5 / (8.906e-5 + 2.0718e-4) = 30.06 -> 30 segments in 100.
        assert_eq!(segment_share(70.0, [7860, 1448]), 30);
        // And back: 30 segments of 7860 against 70 of 1448 carry 235800 : 101360 bytes (70 : 30).
        assert_eq!(segment_share(30.0, [1448, 7860]), 70);
        assert_eq!(segment_share(0.0, [7860, 1448]), 0);
        assert_eq!(segment_share(100.0, [7860, 1448]), 100);
    }

    #[test]
    fn split_over_a_round_is_exactly_r_to_100_minus_r() {
        for r in [0u32, 5, 27, 50, 73, 95, 100] {
            let mut rr = RatioRounds::new(r);
            let sfs = [sf(0), sf(1)];
            let mut n = [0u32; 2];
            for _ in 0..(3 * ROUND_SEGMENTS) {
                let id = rr.select(&sfs, false, ratio_available).unwrap();
                n[id] += 1;
            }
            assert_eq!(n, [3 * r, 3 * (ROUND_SEGMENTS - r)], "ratio {r}");
        }
    }

    #[test]
    fn round_order_follows_the_source() {
        // Both unused at the start of a round: the last unused (subflow 1) starts, finishes its
        // share, then subflow 0 gets its share.
        let mut rr = RatioRounds::new(73);
        let sfs = [sf(0), sf(1)];
        let seq: Vec<usize> = (0..100).map(|_| rr.select(&sfs, false, ratio_available).unwrap()).collect();
        assert!(seq[..27].iter().all(|&i| i == 1));
        assert!(seq[27..].iter().all(|&i| i == 0));
    }

    #[test]
    fn turn_subflow_without_room_means_wait_not_skip() {
        let mut rr = RatioRounds::new(50);
        // Subflow 1 starts the round (last unused); give it 10 segments.
        let sfs = [sf(0), sf(1)];
        for _ in 0..10 {
            assert_eq!(rr.select(&sfs, false, ratio_available), Some(1));
        }
        // Now subflow 1's cwnd is full while subflow 0 has room: the scheduler waits.
        let sfs = [sf(0), full(1)];
        assert_eq!(rr.select(&sfs, false, ratio_available), None);
        assert_eq!(rr.last_wait, Some(Wait::NoRoom(1)));
        assert_eq!(rr.quota(0), 0, "subflow 0 must not get subflow 1's turn");
        // Room again: subflow 1 continues its share.
        let sfs = [sf(0), sf(1)];
        assert_eq!(rr.select(&sfs, false, ratio_available), Some(1));
        assert_eq!(rr.quota(1), 11);
    }

    #[test]
    fn a_down_subflow_does_not_stall_the_round() {
        let mut rr = RatioRounds::new(73);
        let mut down = sf(0);
        down.pf = true;
        let sfs = [down, sf(1)];
        // Subflow 1 alone gets every segment, round after round.
        for _ in 0..500 {
            assert_eq!(rr.select(&sfs, false, ratio_available), Some(1));
        }
        let mut not_est = sf(1);
        not_est.established = false;
        let sfs = [sf(0), not_est];
        for _ in 0..500 {
            assert_eq!(rr.select(&sfs, false, ratio_available), Some(0));
        }
    }

    #[test]
    fn zero_share_survivor_still_carries_data() {
        // 100:0 and the 11ad subflow is in Loss: data goes to subflow 1 instead of stalling.
        let mut rr = RatioRounds::new(100);
        let mut lost = sf(0);
        lost.in_loss = true;
        let sfs = [lost, sf(1)];
        assert_eq!(rr.select(&sfs, false, ratio_available), Some(1));
        // Nothing available at all: wait.
        let mut lost1 = sf(1);
        lost1.pf = true;
        assert_eq!(rr.select(&[lost, lost1], false, ratio_available), None);
        assert_eq!(rr.last_wait, Some(Wait::NoneAvailable));
    }

    #[test]
    fn new_ratio_applies_at_the_round_boundary() {
        let mut rr = RatioRounds::new(50);
        let sfs = [sf(0), sf(1)];
        for _ in 0..10 {
            rr.select(&sfs, false, ratio_available);
        }
        rr.set_ratio(80);
        assert_eq!(rr.active_ratio(), 50);
        let mut n = [0u32; 2];
        for _ in 0..90 {
            n[rr.select(&sfs, false, ratio_available).unwrap()] += 1;
        }
        assert_eq!(n, [50, 40], "the rest of the old round keeps 50:50");
        let mut n = [0u32; 2];
        for _ in 0..100 {
            n[rr.select(&sfs, false, ratio_available).unwrap()] += 1;
        }
        assert_eq!(n, [80, 20]);
        assert_eq!(rr.active_ratio(), 80);
    }

    #[test]
    fn reinjection_bypasses_the_round() {
        let mut rr = RatioRounds::new(100);
        let sfs = [full(0), sf(1)];
        assert_eq!(rr.select(&sfs, true, ratio_available), Some(1));
        assert_eq!(rr.quota(1), 0);
        assert_eq!(rr.quota(0), 0);
    }

    #[test]
    fn blockage_recovery_only_after_an_rto() {
        let mut act = Vec::new();
        let mut s0 = sf(0);
        blockage_recovery(0, LinkEvent::Up, &[s0, sf(1)], &mut act);
        assert!(act.is_empty(), "no RTO during the outage: nothing to undo");
        s0.pf = true;
        blockage_recovery(0, LinkEvent::Down, &[s0, sf(1)], &mut act);
        assert!(act.is_empty());
        blockage_recovery(0, LinkEvent::Up, &[s0, sf(1)], &mut act);
        assert_eq!(act, vec![SchedAction::ClearPf(0), SchedAction::RestoreCwnd(0)]);
    }
}
