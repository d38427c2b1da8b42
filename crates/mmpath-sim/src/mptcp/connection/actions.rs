//! The side effects a scheduler asks for (`SchedAction`): v0.9x mptcp_rcv_buf_optimization's
//! penalty and opportunistic retransmission of the head-of-line data (net/mptcp/mptcp_sched.c),
//! clearing pf, MuSher's and AMuSe's restoring of the pre-loss window when the link comes back
//! (seed papers), and taking a subflow's unsent queue back to the connection for reinjection.

use super::{Connection, SubflowIo};
use crate::mptcp::sched::SchedAction;
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
    fn reinject_hol(&mut self, now: Time, j: usize, io: &mut impl SubflowIo) {
        if self.data_una >= self.data_nxt || j >= self.subs.len() {
            return;
        }
        // The chunk holding data_una, unless subflow j already carries it (v0.9x path_mask).
        let mut range = None;
        let mut on_j = false;
        let (una, mss) = (self.data_una, self.subs[j].mss as u64);
        for (k, st) in self.subs.iter().enumerate() {
            let s = io.sender(st.flow);
            st.maps.for_each_range(s.snd_una, s.app_limit(), |d, l| {
                if d <= una && una < d + l {
                    on_j |= k == j;
                    if range.is_none() {
                        range = Some((una, (d + l - una).min(mss)));
                    }
                }
            });
        }
        let Some((d, l)) = range.filter(|_| !on_j) else { return };
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
