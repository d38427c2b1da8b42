//! minRTT: the out-of-tree multipath-tcp.org kernel's default scheduler (v0.9x,
//! net/mptcp/mptcp_sched.c, `get_available_subflow` / `mptcp_next_segment`), with its
//! penalization and opportunistic retransmission (`mptcp_rcv_buf_optimization`).
//!
//! Rule: the next segment goes to the available non-backup subflow with the lowest srtt;
//! backup subflows only when no non-backup subflow could send at all. When the connection is
//! limited by the peer's data-level window (or by its own full send buffer), the lowest-RTT
//! available subflow retransmits the head-of-line segment held by a slower subflow and that
//! slower subflow's cwnd is halved.
//!
//! This file also holds the v0.9x building blocks that BLEST, ECF, round-robin and redundant
//! reuse (availability tests, iteration order, the minRTT pick and `RbufOpt`), as the kernel
//! exports them from mptcp_sched.c to its other scheduler modules.
//!
//! Contract with the connection:
//! - `select` returns None (wait) after emitting actions when window- or sndbuf-limited.
//! - `Penalize(s)`: v0.9x halves `s`'s cwnd, `max(cwnd / 2, 1)`, and halves ssthresh,
//!   `max(ssthresh / 2, 2)`, only if the prior cwnd was >= ssthresh ("if in slow start, do
//!   not reduce the ssthresh"). The scheduler already limits it to once per RTT of the fast
//!   subflow, as the source does.
//! - `ReinjectHeadOfLine(f)`: resend the oldest data-unACKed data (the meta write queue's head
//!   skb, as much of it as `f`'s cwnd quota allows: connection/actions.rs) on `f`,
//!   outside the data-level window (it is already inside it), unless it was already sent on
//!   `f`; `ConnView::hol_subflow` must name the subflow that carried it.
//! - Optional: call `select` once when nothing is unassigned but the application is blocked on
//!   a full connection send buffer (v0.9x `__mptcp_next_segment`'s SOCK_NOSPACE path); it
//!   returns None and may emit the same actions.
//! - Subflow ids are in creation order (id 0 = the initial subflow).

use super::{ConnView, SchedAction, Scheduler, SubflowView};
use crate::time::Time;

/// mptcp_is_def_unavailable (mptcp_sched.c): the subflow cannot carry data at all: its
/// handshake is not complete (`pre_established`) or it is potentially failed (`tp->pf`).
pub(crate) fn def_unavailable(sf: &SubflowView) -> bool {
    !sf.established || sf.pf
}

/// mptcp_is_temp_unavailable (mptcp_sched.c): busy for now.
/// - In TCP_CA_Loss: with SACK (on, docs/facts.md Linux TCP) the source returns "unavailable" for
///   the whole Loss state; its exception (Reno without SACK, snd_una == high_seq) cannot arise.
/// - cwnd full: nothing more fits beside what is in flight and already queued. The source
///   compares queued bytes `> (cwnd - in_flight) x mss`, which lets one segment more be queued;
///   `has_cwnd_room` (the shared view helper) is stricter by that one segment.
pub(crate) fn temp_unavailable(sf: &SubflowView) -> bool {
    sf.in_loss || !sf.has_cwnd_room()
}

/// mptcp_is_available (mptcp_sched.c).
pub(crate) fn is_available(sf: &SubflowView) -> bool {
    !def_unavailable(sf) && !temp_unavailable(sf)
}

/// v0.9x walks `mpcb->conn_list`, where mptcp_add_sock inserts each new subflow at the head:
/// newest first. With strict `<` comparisons, ties therefore go to the newest subflow.
pub(crate) fn v09x_order(sfs: &[SubflowView]) -> impl Iterator<Item = &SubflowView> {
    sfs.iter().rev()
}

/// The view of subflow `id` (ids normally equal positions; fall back to a search).
pub(crate) fn by_id(sfs: &[SubflowView], id: usize) -> Option<&SubflowView> {
    match sfs.get(id) {
        Some(sf) if sf.id == id => Some(sf),
        _ => sfs.iter().find(|sf| sf.id == id),
    }
}

/// Grows a per-subflow state vector to cover every id in `sfs` (allocates only when a new
/// subflow appears, never in steady state).
pub(crate) fn ensure_len<T: Clone>(v: &mut Vec<T>, sfs: &[SubflowView], fill: T) {
    let need = sfs.iter().map(|sf| sf.id + 1).max().unwrap_or(0);
    if v.len() < need {
        v.resize(need, fill);
    }
}

enum Pick {
    Found(usize),
    /// No usable subflow, but one of the wanted kind is only temporarily unavailable.
    Busy,
    /// No subflow of the wanted kind can send at all.
    Nothing,
}

/// get_subflow_from_selectors (mptcp_sched.c) for new data (empty path_mask, so every subflow
/// counts as "unused"): lowest srtt among available subflows of one kind (backup or not).
fn lowest_srtt(sfs: &[SubflowView], backup: bool) -> Pick {
    let mut best: Option<(u64, usize)> = None;
    let mut busy = false;
    for sf in v09x_order(sfs) {
        if sf.backup != backup || def_unavailable(sf) {
            continue;
        }
        if temp_unavailable(sf) {
            busy = true;
            continue;
        }
        let better = match best {
            None => true,
            Some((rtt, _)) => sf.srtt_ns < rtt,
        };
        if better {
            best = Some((sf.srtt_ns, sf.id));
        }
    }
    match (best, busy) {
        (Some((_, id)), _) => Pick::Found(id),
        (None, true) => Pick::Busy,
        (None, false) => Pick::Nothing,
    }
}

/// get_available_subflow (mptcp_sched.c): the non-backup pick; if every non-backup subflow is
/// definitely unavailable (none, not established or pf), the backup pick. A non-backup
/// subflow that is merely busy (cwnd full, in Loss) makes the scheduler wait rather than use a
/// backup: the source's `force` flag returns NULL in that case.
pub(crate) fn get_available_subflow(sfs: &[SubflowView]) -> Option<usize> {
    match lowest_srtt(sfs, false) {
        Pick::Found(id) => Some(id),
        Pick::Busy => None,
        Pick::Nothing => match lowest_srtt(sfs, true) {
            Pick::Found(id) => Some(id),
            Pick::Busy | Pick::Nothing => None,
        },
    }
}

/// The fastest subflow BLEST and ECF compare against (their "minsk"): lowest srtt among
/// established subflows, whatever their pf, backup or cwnd state (mptcp_blest.c /
/// mptcp_ecf.c first loop: only mptcp_sk_can_send and !pre_established). Subflows without an
/// RTT sample are skipped: in the kernel an established subflow always has one from its
/// handshake, so an unmeasured subflow must not pose as the fastest.
pub(crate) fn fastest_established(sfs: &[SubflowView]) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for sf in v09x_order(sfs) {
        if !sf.established || sf.srtt_ns == 0 {
            continue;
        }
        if best.is_none_or(|(rtt, _)| sf.srtt_ns < rtt) {
            best = Some((sf.srtt_ns, sf.id));
        }
    }
    best.map(|(_, id)| id)
}

/// tcp_snd_wnd_test on the meta socket (mptcp_next_segment): the next new segment,
/// min(unassigned, mss) bytes, must fit in the peer's data-level window.
pub(crate) fn window_limited(conn: &ConnView, sf: &SubflowView) -> bool {
    conn.unassigned_bytes > 0 && conn.send_window_free_bytes < conn.unassigned_bytes.min(sf.mss as u64)
}

/// The SOCK_NOSPACE path of __mptcp_next_segment: nothing left to assign and the application
/// blocked on the send buffer, `sk_stream_wspace < sk_stream_min_wspace`, i.e. free space below
/// half of what is queued (all of it sent and data-unACKed here).
pub(crate) fn sndbuf_blocked(conn: &ConnView) -> bool {
    conn.unassigned_bytes == 0 && !conn.reinjecting && conn.sndbuf_free_bytes < conn.data_in_flight_bytes / 2
}

/// mptcp_rcv_buf_optimization (v0.9x mptcp_sched.c; earlier in mptcp_output.c): penalization
/// of the subflow holding the head-of-line data and opportunistic retransmission of that data
/// on the chosen (faster) subflow. Shared by minRTT, BLEST and ECF, which all use it.
#[derive(Debug, Default)]
pub(crate) struct RbufOpt {
    /// `last_rbuf_opti` per subflow (the one that penalizes): set when the subflow is first
    /// seen (defsched_init stamps it at subflow init) and at each penalization.
    last_penal: Vec<Option<Time>>,
    /// Every entry of `last_penal` is stamped (entries never lose their stamp), so a call
    /// that brings no subflow beyond them has nothing to do: the steady state, checked on every
    /// scheduler decision.
    all_stamped: bool,
}

impl RbufOpt {
    /// Stamps newly seen subflows (defsched_init). Call at the top of every `select`. The
    /// steady-state test is forced inline (the compiler stopped inlining it once: +1.2 % of the
    /// minRTT run), the stamping is out of line.
    #[inline(always)]
    pub(crate) fn observe(&mut self, now: Time, sfs: &[SubflowView]) {
        let known = self.last_penal.len();
        if self.all_stamped && sfs.iter().all(|sf| sf.id < known) {
            return;
        }
        self.stamp_new(now, sfs);
    }

    #[inline(never)]
    fn stamp_new(&mut self, now: Time, sfs: &[SubflowView]) {
        ensure_len(&mut self.last_penal, sfs, None);
        for sf in sfs {
            self.last_penal[sf.id].get_or_insert(now);
        }
        self.all_stamped = self.last_penal.iter().all(Option::is_some);
    }

    /// Runs the optimization for `chosen`, the subflow the scheduler picked. `penal` = the
    /// source's `penal || !sk_stream_memory_free(meta_sk)`: whether penalization is considered
    /// at all. Returns true when it was (BLEST records this as its `retrans_flag`).
    pub(crate) fn run(
        &mut self,
        now: Time,
        chosen: usize,
        penal: bool,
        conn: &ConnView,
        sfs: &[SubflowView],
        act: &mut Vec<SchedAction>,
    ) -> bool {
        // No data-unACKed head (`skb_head` NULL): nothing to do.
        let Some(hol) = conn.hol_subflow else {
            return false;
        };
        let (Some(fast), Some(slow)) = (by_id(sfs, chosen), by_id(sfs, hol)) else {
            return penal;
        };
        // The head already went out on the chosen subflow: the source finds no other carrier to
        // penalize and skips the retransmission ("not yet injected into this path").
        if hol == chosen {
            return penal;
        }
        if penal {
            // "Only penalize again after an RTT has elapsed": RTT of the penalizing subflow.
            let last = self.last_penal.get(chosen).copied().flatten().unwrap_or(Time::ZERO);
            let rtt_elapsed = now.0.saturating_sub(last.0) >= fast.srtt_ns;
            // Only a slower carrier in TCP_CA_Open is halved. The view exposes Loss only, so
            // Recovery/Disorder/CWR count as Open here.
            if rtt_elapsed && fast.srtt_ns < slow.srtt_ns && !slow.in_loss {
                act.push(SchedAction::Penalize(hol));
                if let Some(slot) = self.last_penal.get_mut(chosen) {
                    *slot = Some(now);
                }
            }
        }
        // Retransmit only if the carrier's cwnd is tiny (<= 4) or the chosen subflow's RTT is
        // under a quarter of the carrier's ("4 * tp->srtt_us >= tp_it->srtt_us" = no retrans).
        let do_retrans = slow.cwnd <= 4 || 4 * fast.srtt_ns < slow.srtt_ns;
        if do_retrans && is_available(fast) {
            act.push(SchedAction::ReinjectHeadOfLine(chosen));
        }
        penal
    }
}

/// The v0.9x send path shared by minRTT, BLEST and ECF (mptcp_next_segment): `pick` is the
/// scheduler's get_subflow. Returns the subflow for new data, or None after running the
/// receive-buffer optimization when the data-level window or the send buffer is the limit.
/// The bool is the optimization's "penalization considered" result (BLEST's retrans_flag).
pub(crate) fn next_segment(
    rbuf: &mut RbufOpt,
    now: Time,
    conn: &ConnView,
    sfs: &[SubflowView],
    act: &mut Vec<SchedAction>,
    mut pick: impl FnMut(&[SubflowView]) -> Option<usize>,
) -> (Option<usize>, bool) {
    rbuf.observe(now, sfs);
    if conn.unassigned_bytes == 0 && !conn.reinjecting {
        // Nothing to assign: only the SOCK_NOSPACE optimization may apply. Penalization only
        // if the meta send buffer has no memory free at all (`!sk_stream_memory_free`).
        let mut flag = false;
        if sndbuf_blocked(conn) {
            if let Some(c) = pick(sfs) {
                flag = rbuf.run(now, c, conn.sndbuf_free_bytes == 0, conn, sfs, act);
            }
        }
        return (None, flag);
    }
    let Some(c) = pick(sfs) else {
        return (None, false);
    };
    // Reinjections bypass the window test (`!*reinject &&` in the source).
    if !conn.reinjecting && by_id(sfs, c).is_some_and(|sf| window_limited(conn, sf)) {
        let flag = rbuf.run(now, c, true, conn, sfs, act);
        return (None, flag);
    }
    (Some(c), false)
}

/// The v0.9x default scheduler.
#[derive(Debug, Default)]
pub struct MinRtt {
    rbuf: RbufOpt,
}

impl MinRtt {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Scheduler for MinRtt {
    /// v0.9x's default mptcp_next_segment hands out meta skbs (sched/mod.rs `next_segment_bytes`).
    fn hands_out_skbs(&self) -> bool {
        true
    }

    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "minrtt"
    }

    fn select(&mut self, now: Time, conn: &ConnView, sfs: &[SubflowView], act: &mut Vec<SchedAction>) -> Option<usize> {
        next_segment(&mut self.rbuf, now, conn, sfs, act, get_available_subflow).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// An established, idle subflow with room in its cwnd.
    fn sf(id: usize, srtt_ms: u64) -> SubflowView {
        SubflowView {
            id,
            established: true,
            cwnd: 10,
            ssthresh: 0x7fff_ffff,
            mss: MSS,
            srtt_ns: srtt_ms * 1_000_000,
            link_up: true,
            ..Default::default()
        }
    }

    fn bulk() -> ConnView {
        ConnView {
            unassigned_bytes: 1 << 20,
            send_window_free_bytes: 1 << 20,
            sndbuf_free_bytes: 1 << 20,
            ..Default::default()
        }
    }

    fn pick(sfs: &[SubflowView], conn: &ConnView) -> (Option<usize>, Vec<SchedAction>) {
        let mut s = MinRtt::new();
        // Subflows created long ago: past defsched_init's no-penalty first RTT.
        s.rbuf.observe(Time::ZERO, sfs);
        let mut act = Vec::new();
        let r = s.select(Time::from_secs(1), conn, sfs, &mut act);
        (r, act)
    }

    #[test]
    fn picks_lowest_srtt() {
        assert_eq!(pick(&[sf(0, 5), sf(1, 2)], &bulk()).0, Some(1));
        assert_eq!(pick(&[sf(0, 2), sf(1, 5)], &bulk()).0, Some(0));
    }

    #[test]
    fn ties_go_to_the_newest_subflow() {
        // conn_list is newest-first and the comparison is strict.
        assert_eq!(pick(&[sf(0, 3), sf(1, 3)], &bulk()).0, Some(1));
    }

    #[test]
    fn skips_pf_loss_unestablished_and_full_cwnd() {
        let fast = sf(0, 1);
        let slow = sf(1, 9);
        for broken in [
            SubflowView { pf: true, ..fast },
            SubflowView { in_loss: true, ..fast },
            SubflowView { established: false, ..fast },
            SubflowView { in_flight: 10, ..fast },
            SubflowView { in_flight: 5, queued_bytes: 5 * MSS as u64, ..fast },
        ] {
            assert_eq!(pick(&[broken, slow], &bulk()).0, Some(1), "{broken:?}");
        }
        // One segment of room left: still available.
        assert_eq!(pick(&[SubflowView { in_flight: 9, ..fast }, slow], &bulk()).0, Some(0));
    }

    #[test]
    fn backup_only_when_no_normal_subflow_can_send() {
        let normal = sf(0, 9);
        let backup = SubflowView { backup: true, ..sf(1, 1) };
        // A usable normal subflow wins over a faster backup.
        assert_eq!(pick(&[normal, backup], &bulk()).0, Some(0));
        // Normal subflow pf (definitely unavailable): the backup takes over.
        assert_eq!(pick(&[SubflowView { pf: true, ..normal }, backup], &bulk()).0, Some(1));
        // Normal subflow merely busy (cwnd full / in Loss): wait, do not use the backup.
        assert_eq!(pick(&[SubflowView { in_flight: 10, ..normal }, backup], &bulk()).0, None);
        assert_eq!(pick(&[SubflowView { in_loss: true, ..normal }, backup], &bulk()).0, None);
    }

    #[test]
    fn all_busy_waits() {
        let a = SubflowView { in_flight: 10, ..sf(0, 1) };
        let b = SubflowView { in_loss: true, ..sf(1, 2) };
        assert_eq!(pick(&[a, b], &bulk()), (None, vec![]));
    }

    fn window_limited_conn(hol: usize) -> ConnView {
        ConnView { send_window_free_bytes: 100, data_in_flight_bytes: 1 << 20, hol_subflow: Some(hol), ..bulk() }
    }

    #[test]
    fn window_limited_reinjects_head_and_penalizes_slow_holder() {
        let fast = sf(0, 1);
        let slow = sf(1, 8); // 4 x 1 ms < 8 ms: retransmission worthwhile
        let (r, act) = pick(&[fast, slow], &window_limited_conn(1));
        assert_eq!(r, None, "window-limited: no new data");
        assert_eq!(act, vec![SchedAction::Penalize(1), SchedAction::ReinjectHeadOfLine(0)]);
    }

    #[test]
    fn no_retransmission_when_rtts_are_within_4x_unless_holder_cwnd_tiny() {
        let fast = sf(0, 2);
        let slow = sf(1, 5);
        let (r, act) = pick(&[fast, slow], &window_limited_conn(1));
        assert_eq!(r, None);
        assert_eq!(act, vec![SchedAction::Penalize(1)]);
        let tiny = SubflowView { cwnd: 4, in_flight: 4, ..slow };
        let (_, act) = pick(&[fast, tiny], &window_limited_conn(1));
        assert_eq!(act, vec![SchedAction::Penalize(1), SchedAction::ReinjectHeadOfLine(0)]);
    }

    #[test]
    fn no_penalty_for_a_faster_or_lossy_holder_nor_when_head_is_on_chosen() {
        // Chosen subflow (0) is the slower one because the fast one (1) is cwnd-full.
        let slow = sf(0, 8);
        let fast_full = SubflowView { in_flight: 10, ..sf(1, 1) };
        let (_, act) = pick(&[slow, fast_full], &window_limited_conn(1));
        assert!(!act.contains(&SchedAction::Penalize(1)), "{act:?}");
        // Holder in Loss state: not in CA_Open, not halved.
        let (_, act) = pick(&[sf(0, 1), SubflowView { in_loss: true, ..sf(1, 8) }], &window_limited_conn(1));
        assert_eq!(act, vec![SchedAction::ReinjectHeadOfLine(0)]);
        // Head of line already on the chosen subflow: nothing.
        let (r, act) = pick(&[sf(0, 1), sf(1, 8)], &window_limited_conn(0));
        assert_eq!((r, act), (None, vec![]));
    }

    #[test]
    fn penalization_at_most_once_per_rtt_of_the_fast_subflow() {
        let mut s = MinRtt::new();
        let sfs = [sf(0, 1), sf(1, 8)];
        let conn = window_limited_conn(1);
        let mut act = Vec::new();
        // First sight stamps last_rbuf_opti (defsched_init): no penalty in the first RTT.
        s.select(Time::from_ms(100), &conn, &sfs, &mut act);
        assert_eq!(act, vec![SchedAction::ReinjectHeadOfLine(0)]);
        act.clear();
        s.select(Time::from_ms(101), &conn, &sfs, &mut act);
        assert_eq!(act, vec![SchedAction::Penalize(1), SchedAction::ReinjectHeadOfLine(0)]);
        act.clear();
        s.select(Time::from_us(101_500), &conn, &sfs, &mut act);
        assert_eq!(act, vec![SchedAction::ReinjectHeadOfLine(0)], "within one fast RTT");
        act.clear();
        s.select(Time::from_ms(102), &conn, &sfs, &mut act);
        assert_eq!(act, vec![SchedAction::Penalize(1), SchedAction::ReinjectHeadOfLine(0)]);
    }

    #[test]
    fn window_test_uses_the_last_partial_segment_and_skips_reinjections() {
        let sfs = [sf(0, 1), sf(1, 8)];
        // 100 bytes left to send, 100 bytes of window: it fits.
        let conn = ConnView { unassigned_bytes: 100, ..window_limited_conn(1) };
        assert_eq!(pick(&sfs, &conn).0, Some(0));
        // Reinjected data is not subject to the window test.
        let conn = ConnView { reinjecting: true, ..window_limited_conn(1) };
        assert_eq!(pick(&sfs, &conn), (Some(0), vec![]));
    }

    #[test]
    fn sndbuf_blocked_path_retransmits_and_penalizes_only_without_free_memory() {
        let sfs = [sf(0, 1), sf(1, 8)];
        let blocked = ConnView {
            unassigned_bytes: 0,
            send_window_free_bytes: 1 << 20,
            sndbuf_free_bytes: 0,
            data_in_flight_bytes: 1 << 20,
            hol_subflow: Some(1),
            ..Default::default()
        };
        let (r, act) = pick(&sfs, &blocked);
        assert_eq!(r, None);
        assert_eq!(act, vec![SchedAction::Penalize(1), SchedAction::ReinjectHeadOfLine(0)]);
        // Some memory free (but under half the queued amount): retransmit, no penalty.
        let (_, act) = pick(&sfs, &ConnView { sndbuf_free_bytes: 1000, ..blocked });
        assert_eq!(act, vec![SchedAction::ReinjectHeadOfLine(0)]);
        // Plenty of free buffer: nothing at all.
        let (_, act) = pick(&sfs, &ConnView { sndbuf_free_bytes: 1 << 20, ..blocked });
        assert!(act.is_empty());
    }
}
