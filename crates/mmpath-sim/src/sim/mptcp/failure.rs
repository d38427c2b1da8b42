//! A subflow's RTO and the kernel's failure handling: v0.9x tcp_retransmit_timer ->
//! mptcp_reinject_data (pf at once, the outstanding data back to the meta level). Upstream does
//! nothing MPTCP-specific on a subflow RTO: its stale detection runs on the connection's own
//! retransmission timer (stale.rs). The pre-loss window is kept for MuSher's and AMuSe's
//! restore.

use super::{SenderSnapshot, SubState};
use crate::scenario::Kernel;
use crate::sim::Simulation;
use crate::tcp::cc::CaState;
use crate::time::Time;

impl Simulation {
    /// After a subflow's timer event: on an RTO, the kernel's failure handling.
    pub(in crate::sim) fn conn_after_sender_timer(&mut self, now: Time, (c, j): (u16, u8), before: SenderSnapshot) {
        let cn = &mut self.conns[c as usize];
        let st = &mut cn.subs[j as usize];
        let fi = st.flow as usize;
        let s = self.flows[fi].sender.as_ref().expect("tcp");
        if s.stats.rtos == before.rtos {
            return;
        }
        if before.state != CaState::Loss && st.pre_loss.is_none() {
            st.pre_loss = Some((before.cwnd, before.ssthresh));
        }
        let (una, nxt) = (s.snd_una, s.snd_nxt);
        let others_ok = |subs: &[SubState]| {
            subs.iter().enumerate().any(|(k, o)| k != j as usize && o.established && !o.pf && !o.stale)
        };
        let reinject_now = match cn.kernel {
            // v0.9x tcp_retransmit_timer -> mptcp_reinject_data: pf = 1 and the subflow's
            // outstanding data goes back to the meta level at once.
            Kernel::V09x => {
                st.pf = true;
                true
            }
            // Upstream: a subflow's own RTO is plain TCP; staleness is counted by the
            // connection's retransmission timer (stale.rs).
            Kernel::Upstream => false,
        };
        if reinject_now && others_ok(&cn.subs) {
            let st = &cn.subs[j as usize];
            let reinject = &mut cn.reinject;
            st.maps.for_each_range(una, nxt, |d, l| reinject.push(d, l));
            self.reclaim(c, j as usize);
        }
        self.conns[c as usize].sched.on_rto(now, j as usize);
        self.conn_push(now, c);
    }
}
