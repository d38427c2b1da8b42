//! MP_PRIO from the path manager (RFC 8684 3.3.8), as Linux sends and receives it.
//!
//! - Sending: the `mmpath-pm` daemon's SET_FLAGS for a subflow (pm_userspace.c ->
//!   mptcp_pm_mp_prio_send_ack -> __mptcp_pm_send_ack, net/mptcp/pm.c) sets the client's own
//!   flag for it at once (subflow->request_bkup) and sends one pure ACK carrying MP_PRIO on that
//!   subflow (__mptcp_subflow_send_ack). A pure ACK is never retransmitted: one sent while the
//!   subflow's path is down is lost, and the peer keeps its flag.
//! - Receiving: the peer only sets the flag (pm.c, mptcp_pm_mp_prio_received: subflow->backup =
//!   bkup, then the SUB_PRIORITY event). Nothing is pushed and nothing already sent moves.
//! - Using it: the scheduler reads both flags (protocol.c, mptcp_subflow_get_send and
//!   mptcp_subflow_get_retrans: backup = subflow->backup || subflow->request_bkup) at its next
//!   pass: the next ACK that opens the window, the writer, or the connection's retransmission
//!   timer (stale.rs), whose resend takes a subflow made regular at once where a backup is
//!   taken only when no subflow made progress.
//!
//! So the data sender's flag (`Subflow::backup`) changes in an upload (the client sends) at
//! once, and in a download when the segment reaches the server, a one-way delay of the
//! subflow's path later, or never if that path is down. A subflow still in its handshake takes
//! the flag at once (its MP_JOIN carries it; the kernel sends no MP_PRIO during a handshake).

use super::Connection;
use super::Effect;
use crate::packet::{Kind, Packet, PRIO_BYTES};
use crate::scenario::Direction;

impl Connection {
    /// The path manager sets (`backup`) or clears subflow `j`'s backup flag.
    pub(super) fn send_mp_prio(&mut self, j: usize, backup: bool) {
        let st = &mut self.subs[j];
        if st.closed {
            return;
        }
        if !st.established || self.info.direction == Direction::Upload {
            st.backup = backup;
            return;
        }
        let mut p = Packet::empty(st.flow, Kind::Prio, self.client_to_server());
        p.seq = backup as u64;
        p.size_bytes = PRIO_BYTES;
        self.effects.push(Effect::Send(p));
    }

    /// An MP_PRIO segment of subflow `j` reached the data sender: only the flag changes.
    pub fn on_mp_prio(&mut self, j: usize, p: &Packet) {
        if let Some(st) = self.subs.get_mut(j).filter(|st| !st.closed) {
            st.backup = p.seq != 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::super::PmSetup;
    use crate::mptcp::pm::{self as policy, PmEvent, PmName, PmParams};

    /// A download (the server sends), subflow 0 regular with 5 segments outstanding, subflow 1
    /// an established backup, and link-aware-backup on the client.
    fn download() -> (Connection, Endpoints) {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, true], 1 << 20);
        cn.pm = Some(Box::new(super::super::pm::PmState::new(PmSetup {
            policy: policy::build(PmName::LinkAwareBackup, &PmParams { backup_paths: vec![1], ..PmParams::default() }),
            paths: vec![0, 1],
            backup: vec![false, true],
        })));
        cn.on_pm_timer(Time::ZERO, &mut io);
        settle(&mut cn, &mut io, Time::ZERO);
        write(&mut cn, &mut io, Time::ZERO, 5 * MSS as u64);
        assert_eq!(io.data_on(0).len(), 5);
        cn.subs[1].established = true;
        (cn, io)
    }

    fn prios(io: &Endpoints) -> Vec<(u16, u64, Way)> {
        io.sent.iter().filter(|p| p.kind == Kind::Prio).map(|p| (p.flow, p.seq, p.way)).collect()
    }

    /// Path 0's link goes down: the policy's MP_PRIOs leave the client on each subflow (0 made a
    /// backup, 1 regular), back along the data's route; the server's flags do not change and
    /// nothing moves until one arrives. Subflow 1's arrives: only its flag changes (nothing is
    /// pushed, nothing already sent moves). The connection's retransmission timer then resends
    /// the oldest data on subflow 1 at its first firing, as a regular subflow; a backup would
    /// wait for "no progress anywhere" (stale.rs).
    #[test]
    fn mp_prio_travels_to_the_server_and_only_sets_its_flag() {
        let (mut cn, mut io) = download();
        io.up[0] = false;
        cn.on_pm_link(ms(10), 0, PmEvent::LinkDown { path: 0 }, &mut io);
        let fx = cn.take_effects();
        assert!(!fx.iter().any(|e| matches!(e, Effect::Push)), "sending MP_PRIO pushes nothing");
        io.sent.extend(fx.iter().filter_map(|e| if let Effect::Send(p) = e { Some(*p) } else { None }));
        cn.restore_effects(fx);
        assert_eq!(prios(&io), vec![(0, 1, Way::Reverse), (1, 0, Way::Reverse)]);
        assert!(!cn.subs[0].backup && cn.subs[1].backup, "the server's flags wait for the MP_PRIOs");
        assert!(io.data_on(1).is_empty(), "nothing moves at the link's loss");
        let p = *io.sent.iter().find(|p| p.kind == Kind::Prio && p.flow == 1).unwrap();
        cn.on_mp_prio(1, &p);
        assert!(cn.take_effects().is_empty(), "receiving MP_PRIO asks for nothing");
        settle(&mut cn, &mut io, ms(20));
        assert!(!cn.subs[1].backup, "subflow 1 is regular at the server");
        assert!(!cn.subs[0].backup, "subflow 0's MP_PRIO went over its dead path");
        assert!(io.data_on(1).is_empty(), "receiving MP_PRIO pushes nothing");
        let at = cn.rtx_at.expect("data outstanding: the connection's timer runs");
        cn.on_rtx_timer(at, &mut io);
        settle(&mut cn, &mut io, at);
        let on1: Vec<u64> = io.data_on(1).iter().map(|d| d.1).collect();
        assert_eq!(on1.first(), Some(&0), "the first firing resends the oldest data on subflow 1");
    }

    /// Without the MP_PRIO the same first firing leaves the backup alone: the retransmission
    /// above is the flag's doing.
    #[test]
    fn without_mp_prio_the_first_firing_skips_the_backup() {
        let (mut cn, mut io) = download();
        io.up[0] = false;
        let at = cn.rtx_at.expect("data outstanding: the connection's timer runs");
        cn.on_rtx_timer(at, &mut io);
        settle(&mut cn, &mut io, at);
        assert!(io.data_on(1).is_empty());
    }

    /// An upload's sender is the client itself: its flag changes at once (request_bkup), no
    /// segment is needed for it, and nothing is pushed by the change.
    #[test]
    fn an_upload_changes_the_senders_flag_at_once() {
        let (mut cn, mut io) = download();
        cn.info.direction = Direction::Upload;
        let before = io.sent.len();
        cn.on_pm_link(ms(10), 0, PmEvent::LinkDown { path: 0 }, &mut io);
        settle(&mut cn, &mut io, ms(10));
        assert!(cn.subs[0].backup && !cn.subs[1].backup);
        assert!(prios(&io).is_empty());
        assert_eq!(io.sent.len(), before, "nothing sent by the change itself");
    }
}
