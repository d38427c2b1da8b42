//! A subflow's RTO and the kernel's failure handling: v0.9x tcp_retransmit_timer ->
//! mptcp_reinject_data (pf at once, the outstanding data back to the meta level). Upstream does
//! nothing MPTCP-specific on a subflow RTO: its stale detection runs on the connection's own
//! retransmission timer (stale.rs). The pre-loss window is kept for MuSher's and AMuSe's
//! restore.

use super::{Connection, SenderSnapshot, Subflow, SubflowIo};
use crate::mptcp::pm::PmEvent;
use crate::scenario::Kernel;
use crate::tcp::cc::CaState;
use crate::time::Time;

impl Connection {
    /// Subflow `j`'s sender timer is due: the sender runs it; on an RTO, the kernel's failure
    /// handling, then a push.
    pub fn on_sender_timer(&mut self, now: Time, j: usize, io: &mut impl SubflowIo) {
        if self.subs[j].closed {
            return;
        }
        let before = self.with_sender(j, io, |s, out| {
            let before = SenderSnapshot::of(s);
            s.on_timer(now, out);
            before
        });
        self.after_sender_timer(now, j, before, io);
    }

    /// After subflow `j`'s sender timer fired (`before`: its state just before).
    fn after_sender_timer(&mut self, now: Time, j: usize, before: SenderSnapshot, io: &mut impl SubflowIo) {
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
        let reinject_now = match self.info.kernel {
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
        if self.pm_hears_transport() {
            self.pm_note(j, |path, subflow| PmEvent::SubflowRto { path, subflow });
        }
        self.pm_flush(now, io);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    /// Five segments on subflow 0 only (subflow 1 joins after they went).
    fn five_on_subflow_0(kernel: Kernel, backup: bool) -> (Connection, Endpoints) {
        let sched = if kernel == Kernel::V09x { SchedName::Minrtt } else { SchedName::Upstream };
        let (mut cn, mut io) = connection(kernel, sched, &[false, backup], 1 << 20);
        write(&mut cn, &mut io, Time::ZERO, 5 * MSS as u64);
        assert_eq!(io.data_on(0).len(), 5);
        cn.subs[1].established = true;
        (cn, io)
    }

    /// v0.9x: an RTO marks the subflow pf and its outstanding data goes to the other subflow
    /// (mptcp_reinject_data) at once.
    #[test]
    fn a_v09x_rto_marks_pf_and_reinjects_on_the_other_subflow() {
        let (mut cn, mut io) = five_on_subflow_0(Kernel::V09x, false);
        rto(&mut cn, &mut io, 0);
        assert!(cn.subs[0].pf);
        // One decision: the five segments fit in half of subflow 1's initial cwnd of 10
        // (mptcp_next_segment's tcp_cwnd_test, sched/mod.rs `next_segment_bytes`).
        assert_eq!(cn.stats.reinjections, 1, "one decision for the whole range");
        assert_eq!(cn.subs[1].reinjected_bytes, 5 * MSS as u64);
        let dsns: Vec<u64> = io.data_on(1).iter().map(|d| d.1).collect();
        assert_eq!(dsns, vec![0, 1000, 2000, 3000, 4000]);
        // A valid ACK clears pf (v0.9x tcp_ack).
        ack(&mut cn, &mut io, ms(500), 0, 1000, 0, 1 << 20);
        assert!(!cn.subs[0].pf);
    }

    /// With no other subflow to take it, v0.9x marks pf but keeps the data where it is.
    #[test]
    fn a_v09x_rto_without_an_alternative_reinjects_nothing() {
        let (mut cn, mut io) = five_on_subflow_0(Kernel::V09x, false);
        cn.subs[1].established = false;
        rto(&mut cn, &mut io, 0);
        assert!(cn.subs[0].pf);
        assert_eq!(cn.stats.reinjections, 0);
        assert!(io.data_on(1).is_empty());
    }

    /// Upstream: a subflow's RTO is plain TCP (staleness is the connection timer's, stale.rs).
    #[test]
    fn an_upstream_rto_is_plain_tcp() {
        let (mut cn, mut io) = five_on_subflow_0(Kernel::Upstream, false);
        rto(&mut cn, &mut io, 0);
        assert!(!cn.subs[0].pf);
        assert_eq!(cn.stats.reinjections, 0);
        assert!(io.data_on(1).is_empty());
    }

    /// v0.9x with subflow 1 a backup: it takes over while subflow 0 is pf, and new data goes
    /// back to subflow 0 once an ACK clears pf.
    #[test]
    fn a_backup_takes_over_and_gives_back() {
        let (mut cn, mut io) = five_on_subflow_0(Kernel::V09x, true);
        write(&mut cn, &mut io, ms(1), 6 * MSS as u64);
        assert_eq!(io.data_on(1).len(), 0, "subflow 0 is up: the backup idles");
        assert_eq!(io.senders[0].app_limit(), 6 * MSS as u64);
        let at = rto(&mut cn, &mut io, 0);
        assert!(cn.subs[0].pf);
        assert_eq!(io.data_on(1).len(), 6, "the backup carries what subflow 0 had");
        write(&mut cn, &mut io, at, 7 * MSS as u64);
        assert_eq!(io.data_on(1).len(), 7, "and new data while subflow 0 is pf");
        // Everything on subflow 0 arrives and is ACKed: pf cleared, out of Loss.
        let nxt = io.senders[0].snd_nxt;
        ack(&mut cn, &mut io, at + ms(5), 0, nxt, 6 * MSS as u64, 1 << 20);
        assert!(!cn.subs[0].pf);
        let before = io.senders[0].app_limit();
        write(&mut cn, &mut io, at + ms(6), 9 * MSS as u64);
        assert_eq!(io.senders[0].app_limit(), before + 2 * MSS as u64, "new data back on subflow 0");
        assert_eq!(io.data_on(1).len(), 7, "none on the backup");
    }
}
