//! The side effects a scheduler asks for (`SchedAction`): v0.9x mptcp_rcv_buf_optimization's
//! penalty and opportunistic retransmission of the head-of-line data (net/mptcp/mptcp_sched.c),
//! clearing pf, MuSher's and AMuSe's restoring of the pre-loss window when the link comes back
//! (seed papers), and taking a subflow's unsent queue back to the connection for reinjection.

use super::{Connection, SubflowIo};
use crate::mptcp::sched::{next_segment_bytes, SchedAction};
use crate::tcp::cc::INFINITE_SSTHRESH;
use crate::time::Time;

impl Connection {
    /// Applies the scheduler's requested side effects; true if any changed a subflow.
    pub(super) fn apply_actions(&mut self, now: Time, io: &mut impl SubflowIo) -> bool {
        if self.actions.is_empty() {
            return false;
        }
        let mut actions = std::mem::take(&mut self.actions);
        let any = !actions.is_empty();
        for a in actions.drain(..) {
            match a {
                SchedAction::Penalize(j) => self.penalize(j, io),
                SchedAction::ReinjectHeadOfLine(j) => self.reinject_hol(now, j, io),
                SchedAction::ClearPf(j) => {
                    if let Some(st) = self.subs.get_mut(j) {
                        st.pf = false;
                        st.stale = false;
                        st.stale_count = 0;
                    }
                }
                SchedAction::RestoreCwnd(j) => self.restore_cwnd(now, j, io),
                SchedAction::Reclaim(j) => self.reclaim(j, io),
            }
        }
        self.actions = actions;
        any
    }

    /// v0.9x mptcp_rcv_buf_optimization's penalty: halve the slow subflow's cwnd. How often
    /// is the scheduler's call: the source's only guard is per penalizing (fast) subflow, once
    /// per *its* RTT (`dsp->last_rbuf_opti`, net/mptcp/mptcp_sched.c); the slow subflow may be
    /// halved again within its own RTT (no per-slow-subflow guard since v0.90).
    fn penalize(&mut self, j: usize, io: &mut impl SubflowIo) {
        let Some(st) = self.subs.get(j) else { return };
        let s = io.sender_out(st.flow).0;
        // mptcp_rcv_buf_optimization: ssthresh follows only if cwnd was at or above it.
        let old = s.w.cwnd;
        s.w.cwnd = (old / 2).max(1);
        if old >= s.w.ssthresh && s.w.ssthresh != INFINITE_SSTHRESH {
            s.w.ssthresh = (s.w.ssthresh / 2).max(2);
        }
        self.stats.penalizations += 1;
    }

    /// Opportunistic retransmission: the head-of-line data goes out again on subflow `j`.
    ///
    /// What goes: v0.9x's mptcp_rcv_buf_optimization returns the meta write queue's head skb
    /// (from the data ACK to the end of the chunk it was handed out in: mptcp_fragment cut the
    /// meta skb there), and mptcp_next_segment / mptcp_write_xmit send it on `j` as they send
    /// new data: for minRTT and its kin as much as `j`'s cwnd quota allows
    /// (`next_segment_bytes`), the whole rest when the quota covers it; for a scheduler that
    /// hands out one MSS, one MSS.
    fn reinject_hol(&mut self, now: Time, j: usize, io: &mut impl SubflowIo) {
        if self.data_una >= self.data_nxt || j >= self.subs.len() {
            return;
        }
        // The chunk holding data_una, unless subflow j already carries it (v0.9x path_mask).
        let mut range = None;
        let mut on_j = false;
        let una = self.data_una;
        for (k, st) in self.subs.iter().enumerate() {
            let s = io.sender(st.flow);
            st.maps.for_each_range(s.snd_una, s.app_limit(), |d, l| {
                if d <= una && una < d + l {
                    on_j |= k == j;
                    if range.is_none() {
                        range = Some((una, d + l - una));
                    }
                }
            });
        }
        let Some((d, rest)) = range.filter(|_| !on_j) else { return };
        // The head skb ends where its chunk ended (the carriers' record), within the mapping.
        let chunk_end = self.carriers.front().map_or(d + rest, |&(e, _)| e.max(d + 1));
        let rest = rest.min(chunk_end - d);
        let mss = self.subs[j].mss as u64;
        let l = match self.views.get(j) {
            // The quota, or the whole rest when the quota covers it (kernel: max_len vs needed).
            Some(v) if self.sched.hands_out_skbs() => next_segment_bytes(v, u64::MAX).min(rest),
            _ => rest.min(mss),
        };
        self.stats.opportunistic_retransmits += 1;
        self.stats.reinjected_bytes += l;
        self.subs[j].reinjected_bytes += l;
        self.give(now, j, d, l, io);
    }

    /// Puts the subflow's pre-loss window back and retransmits now instead of waiting for
    /// the backed-off RTO (MuSher's and AMuSe's blockage handling).
    fn restore_cwnd(&mut self, now: Time, j: usize, io: &mut impl SubflowIo) {
        let Some(st) = self.subs.get_mut(j) else { return };
        let Some((cwnd, ssthresh)) = st.pre_loss.take() else { return };
        st.pf = false;
        self.with_sender(j, io, |s, out| s.restore_window(now, cwnd, ssthresh, out));
    }

    /// Takes the subflow's unsent queue back to the connection (to be sent elsewhere first).
    pub(super) fn reclaim(&mut self, j: usize, io: &mut impl SubflowIo) {
        let Some(st) = self.subs.get_mut(j) else { return };
        let s = io.sender_out(st.flow).0;
        let nxt = s.snd_nxt;
        if s.app_limit() <= nxt {
            return;
        }
        let reinject = &mut self.reinject;
        let mut back = 0;
        st.maps.truncate(nxt, |d, l| {
            reinject.push(d, l);
            back += l;
        });
        st.scheduled_bytes -= back.min(st.scheduled_bytes);
        s.drop_boundaries_from(nxt);
        s.set_app_limit(nxt);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use crate::mptcp::sched::SchedAction;

    /// Five segments handed to subflow 0 in one decision, then subflow 1 joins; the
    /// scheduler asks for the head of line on subflow 1.
    fn head_on_0(sched: SchedName) -> (Connection, Endpoints) {
        let (mut cn, mut io) = connection(Kernel::V09x, sched, &[false, false], 1 << 20);
        cn.subs[1].established = false;
        write(&mut cn, &mut io, Time::ZERO, 5 * MSS as u64);
        assert_eq!(io.data_on(0).len(), 5);
        cn.subs[1].established = true;
        cn.fill_views(&mut io);
        cn.actions.push(SchedAction::ReinjectHeadOfLine(1));
        cn.apply_actions(ms(1), &mut io);
        // As the push that ran the scheduler ends (its flush).
        cn.effects.push(Effect::Push);
        settle(&mut cn, &mut io, ms(1));
        (cn, io)
    }

    /// minRTT's opportunistic retransmission resends the meta write queue's head skb (the
    /// five-segment chunk, within half of subflow 1's initial cwnd of 10), not one segment.
    #[test]
    fn minrtt_resends_the_head_skb() {
        let (cn, io) = head_on_0(SchedName::Minrtt);
        assert_eq!(cn.stats.opportunistic_retransmits, 1);
        assert_eq!(cn.subs[1].reinjected_bytes, 5 * MSS as u64);
        let dsns: Vec<u64> = io.data_on(1).iter().map(|d| d.1).collect();
        assert_eq!(dsns, vec![0, 1000, 2000, 3000, 4000]);
    }

    /// A scheduler that hands out one MSS per decision resends one.
    #[test]
    fn a_one_segment_scheduler_resends_one_segment() {
        let (cn, _) = head_on_0(SchedName::Roundrobin);
        assert_eq!(cn.subs[1].reinjected_bytes, MSS as u64);
    }
}
