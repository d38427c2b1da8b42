//! A subflow's RTO and the kernel's failure handling: v0.9x tcp_retransmit_timer ->
//! mptcp_reinject_data (pf at once, the outstanding data back to the meta level). Upstream does
//! nothing MPTCP-specific on a subflow RTO: its stale detection runs on the connection's own
//! retransmission timer (stale.rs). The pre-loss window is kept for MuSher's and AMuSe's
//! restore.

use super::{Connection, SenderSnapshot, Subflow, SubflowIo};
use crate::scenario::Kernel;
use crate::tcp::cc::CaState;
use crate::time::Time;

impl Connection {
    /// After subflow `j`'s sender timer fired (`before`: its state just before): on an RTO,
    /// the kernel's failure handling, then a push.
    pub fn after_sender_timer(&mut self, now: Time, j: usize, before: SenderSnapshot, io: &mut impl SubflowIo) {
        let st = &mut self.subs[j];
        let s = io.sender(st.flow);
        if s.stats.rtos == before.rtos {
            return;
        }
        if before.state != CaState::Loss && st.pre_loss.is_none() {
            st.pre_loss = Some((before.cwnd, before.ssthresh));
        }
        let (una, nxt) = (s.snd_una, s.snd_nxt);
        let others_ok =
            |subs: &[Subflow]| subs.iter().enumerate().any(|(k, o)| k != j && o.established && !o.pf && !o.stale);
        let reinject_now = match self.kernel {
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
        if reinject_now && others_ok(&self.subs) {
            let st = &self.subs[j];
            let reinject = &mut self.reinject;
            st.maps.for_each_range(una, nxt, |d, l| reinject.push(d, l));
            self.reclaim(j, io);
        }
        self.sched.on_rto(now, j);
        self.push(now, io);
    }
}
