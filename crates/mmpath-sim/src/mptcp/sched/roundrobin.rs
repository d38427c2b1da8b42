//! Round-robin: the v0.9x "roundrobin" module (net/mptcp/mptcp_rr.c, `mptcp_rr_next_segment`)
//! with its defaults, num_segments = 1 and cwnd_limited = 1.
//!
//! Rule: every available subflow (established, not pf, not in Loss, room in its cwnd: the
//! `cwnd_limited` test skips subflows without cwnd room instead of queuing behind them) gets a
//! quota of `num_segments` segments per round; a subflow that used its quota waits until every
//! available subflow has, then all quotas restart. The backup flag plays no part (mptcp_rr.c
//! ignores it). Among unused subflows the source keeps the last one its list walk meets; its
//! list is newest first, so that is the oldest (lowest id) unused subflow.
//!
//! Contract: one MSS per decision (`burst_bytes` default); ids in creation order. Reinjected
//! data goes to the oldest available subflow without touching the quotas (rr_get_available_subflow).

use super::minrtt::{ensure_len, is_available, v09x_order};
use super::{ConnView, SchedAction, Scheduler, SubflowView};
use crate::time::Time;

/// mptcp_rr.c module parameter `num_segments` (default 1): consecutive segments per subflow.
const NUM_SEGMENTS: u32 = 1;

#[derive(Debug, Default)]
pub struct RoundRobin {
    /// rrsched_priv::quota per subflow: segments given in the current round.
    quota: Vec<u32>,
}

impl RoundRobin {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Scheduler for RoundRobin {
    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "roundrobin"
    }

    fn select(
        &mut self,
        _now: Time,
        conn: &ConnView,
        sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) -> Option<usize> {
        ensure_len(&mut self.quota, sfs, 0);
        if conn.reinjecting {
            // rr_get_available_subflow: the last available subflow of the walk.
            return v09x_order(sfs).filter(|sf| is_available(sf)).last().map(|sf| sf.id);
        }
        // At most two passes: the second follows a quota reset ("goto retry").
        for _ in 0..2 {
            let mut chosen = None;
            let (mut considered, mut full) = (0, 0);
            for sf in v09x_order(sfs).filter(|sf| is_available(sf)) {
                considered += 1;
                let q = self.quota[sf.id];
                // A subflow in the middle of its burst keeps it (unreachable with 1 segment).
                if q > 0 && q < NUM_SEGMENTS {
                    chosen = Some(sf.id);
                    break;
                }
                if q == 0 {
                    chosen = Some(sf.id);
                }
                if q >= NUM_SEGMENTS {
                    full += 1;
                }
            }
            if let Some(id) = chosen {
                self.quota[id] += 1;
                return Some(id);
            }
            if considered == 0 || considered != full {
                return None;
            }
            // Every available subflow used its quota: new round for them (only them: an
            // unavailable subflow keeps its count).
            for sf in sfs.iter().filter(|sf| is_available(sf)) {
                self.quota[sf.id] = 0;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sf(id: usize) -> SubflowView {
        SubflowView {
            id,
            established: true,
            cwnd: 10,
            mss: 1448,
            srtt_ns: (id as u64 + 1) * 1_000_000,
            ..Default::default()
        }
    }

    fn conn() -> ConnView {
        ConnView { unassigned_bytes: 1 << 20, send_window_free_bytes: 1 << 20, ..Default::default() }
    }

    fn run(s: &mut RoundRobin, sfs: &[SubflowView], n: usize) -> Vec<Option<usize>> {
        (0..n).map(|_| s.select(Time::ZERO, &conn(), sfs, &mut Vec::new())).collect()
    }

    #[test]
    fn cycles_one_segment_each_oldest_first() {
        let mut s = RoundRobin::new();
        let got = run(&mut s, &[sf(0), sf(1), sf(2)], 7);
        assert_eq!(got, [0, 1, 2, 0, 1, 2, 0].map(Some));
    }

    #[test]
    fn ignores_rtt_and_backup_flag() {
        let mut s = RoundRobin::new();
        let slow_backup = SubflowView { backup: true, srtt_ns: 50_000_000, ..sf(1) };
        assert_eq!(run(&mut s, &[sf(0), slow_backup], 4), [0, 1, 0, 1].map(Some));
    }

    #[test]
    fn skips_subflows_without_cwnd_room_or_unusable() {
        let mut s = RoundRobin::new();
        let full = SubflowView { in_flight: 10, ..sf(1) };
        assert_eq!(run(&mut s, &[sf(0), full, sf(2)], 4), [0, 2, 0, 2].map(Some));
        let mut s = RoundRobin::new();
        let pf = SubflowView { pf: true, ..sf(0) };
        let lossy = SubflowView { in_loss: true, ..sf(1) };
        assert_eq!(run(&mut s, &[pf, lossy, sf(2)], 2), [2, 2].map(Some));
        let mut s = RoundRobin::new();
        assert_eq!(run(&mut s, &[pf, lossy], 1), [None]);
    }

    #[test]
    fn a_subflow_back_from_busy_rejoins_the_rotation() {
        let mut s = RoundRobin::new();
        let full = SubflowView { in_flight: 10, ..sf(0) };
        // 0 busy: 1 alone takes every segment.
        assert_eq!(run(&mut s, &[full, sf(1)], 2), [1, 1].map(Some));
        // 0 has room again and an unused quota: it goes next; then both quotas are used, the
        // round restarts and the oldest goes first again.
        assert_eq!(run(&mut s, &[sf(0), sf(1)], 4), [0, 0, 1, 0].map(Some));
    }

    #[test]
    fn reinjection_goes_to_the_oldest_available_without_using_quota() {
        let mut s = RoundRobin::new();
        let sfs = [sf(0), sf(1)];
        assert_eq!(run(&mut s, &sfs, 1), [Some(0)]);
        let re = ConnView { reinjecting: true, ..conn() };
        assert_eq!(s.select(Time::ZERO, &re, &sfs, &mut Vec::new()), Some(0));
        assert_eq!(run(&mut s, &sfs, 1), [Some(1)], "quota untouched by the reinjection");
    }
}
