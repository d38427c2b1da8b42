//! Redundant: the v0.9x "redundant" module (net/mptcp/mptcp_redundant.c, v0.90+ design by
//! Erbshaeusser and Froemmgen): every segment is sent on every available subflow, trading
//! capacity for the latency of the fastest path.
//!
//! Rule (`select`): the available subflow (established, not pf, not in Loss, cwnd room) with
//! the lowest srtt takes the original; backup subflows only when no non-backup subflow is
//! valid, i.e. established and not pf (redsched_use_subflow: a fresh skb goes to a backup only
//! if `active_valid_sks == 0`). None = wait. The source rotates the starting subflow instead of
//! taking the lowest RTT; since every valid subflow sends every segment anyway, that only
//! changes which copy is the "original".
//!
//! Duplication contract (what the connection must do because `redundant()` is true): for each
//! chunk assigned to the returned subflow, put a copy with the same data sequence mapping on
//! the send queue of every *other* subflow that is established, not pf and not a backup
//! (subflow_is_active && !mptcp_is_def_unavailable); none when the original went to a backup
//! (copies go to active subflows only, and there is none). Each copy leaves as that subflow's
//! own cwnd allows (the source walks each subflow's own pointer through the meta write queue
//! when it is available). A copy whose data is already data-ACKed when its turn comes is
//! dropped, not sent (redsched_correct_skb_pointers skips skbs below meta snd_una). The
//! connection's send window and buffer apply to originals only; copies are old data.

use super::minrtt::{def_unavailable, is_available, v09x_order};
use super::{ConnView, SchedAction, Scheduler, SubflowView};
use crate::time::Time;

#[derive(Debug, Default)]
pub struct Redundant;

impl Redundant {
    pub fn new() -> Self {
        Redundant
    }
}

/// Lowest-srtt available subflow among backups or non-backups (strict `<`, v0.9x list order).
fn lowest_available(sfs: &[SubflowView], backup: bool) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for sf in v09x_order(sfs).filter(|sf| sf.backup == backup && is_available(sf)) {
        if best.is_none_or(|(rtt, _)| sf.srtt_ns < rtt) {
            best = Some((sf.srtt_ns, sf.id));
        }
    }
    best.map(|(_, id)| id)
}

impl Scheduler for Redundant {
    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "redundant"
    }

    fn select(
        &mut self,
        _now: Time,
        _conn: &ConnView,
        sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) -> Option<usize> {
        // redsched_get_active_valid_sks: non-backup subflows that could send at all.
        let active_valid = sfs.iter().any(|sf| !sf.backup && !def_unavailable(sf));
        if active_valid {
            lowest_available(sfs, false)
        } else {
            lowest_available(sfs, true)
        }
    }

    fn redundant(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sf(id: usize, srtt_ms: u64) -> SubflowView {
        SubflowView { id, established: true, cwnd: 10, mss: 1448, srtt_ns: srtt_ms * 1_000_000, ..Default::default() }
    }

    fn pick(sfs: &[SubflowView]) -> Option<usize> {
        let c = ConnView { unassigned_bytes: 1 << 20, send_window_free_bytes: 1 << 20, ..Default::default() };
        Redundant::new().select(Time::ZERO, &c, sfs, &mut Vec::new())
    }

    #[test]
    fn is_redundant_and_picks_the_lowest_rtt_available() {
        assert!(Redundant::new().redundant());
        assert_eq!(pick(&[sf(0, 5), sf(1, 2)]), Some(1));
        assert_eq!(pick(&[sf(0, 2), sf(1, 5)]), Some(0));
        // Fast one cwnd-full: the other takes the original now.
        assert_eq!(pick(&[SubflowView { in_flight: 10, ..sf(0, 2) }, sf(1, 5)]), Some(1));
        // Both busy: wait.
        let busy = |s: SubflowView| SubflowView { in_loss: true, ..s };
        assert_eq!(pick(&[busy(sf(0, 2)), busy(sf(1, 5))]), None);
    }

    #[test]
    fn backup_only_without_a_valid_active_subflow() {
        let backup = SubflowView { backup: true, ..sf(1, 1) };
        assert_eq!(pick(&[sf(0, 9), backup]), Some(0));
        // Active subflow valid but busy: wait rather than send on the backup.
        assert_eq!(pick(&[SubflowView { in_flight: 10, ..sf(0, 9) }, backup]), None);
        // Active subflow pf (not valid): the backup carries the data.
        assert_eq!(pick(&[SubflowView { pf: true, ..sf(0, 9) }, backup]), Some(1));
    }
}
