//! A userspace path-manager policy (mptcp/pm/) run inside the connection, as the `mmpath-pm`
//! daemon runs one beside the kernel: the connection tells it what happens (its start, a
//! subflow established, an RTO, a stale subflow; the runner adds link events with
//! `on_pm_link`) and carries out what it asks:
//! - create a subflow: asked of the runner (`Effect::NewSubflow`), which builds its endpoints
//!   and hands it back (`add_subflow`); it then does its MP_JOIN like any other (join.rs), with
//!   the path's backup flag as it stands;
//! - close a subflow (MPTCP_PM_CMD_SUBFLOW_DESTROY): its data not yet data-ACKed goes back to
//!   the connection and is sent again on the others (as the kernel's __mptcp_retransmit_pending
//!   on a subflow close), the runner drops whatever still reaches its endpoints (`Effect::Closed`);
//! - set / clear backup: MP_PRIO on every open subflow of the path (mp_prio.rs: in a download
//!   it reaches the server over the subflow itself, lost when the path is down, and only sets
//!   the flag there; nothing is pushed), and kept for subflows opened later;
//! - announce / remove an address: in the simulated topology the client opens every subflow
//!   itself, so an announcement changes nothing; a removal closes the path's subflows, with
//!   their data not yet data-ACKed sent again on the others at once. That is what the kernel
//!   does at both ends: the end that removes the address closes its subflows on it, and the
//!   peer, receiving the RM_ADDR over another subflow, closes its subflows to the address
//!   (pm_kernel.c, mptcp_pm_rm_addr_or_subflow -> mptcp_close_ssk), which sends its MPTCP-level
//!   retransmission queue again and pushes (protocol.c, __mptcp_close_ssk with MPTCP_CF_PUSH ->
//!   __mptcp_retransmit_pending_data). The removal is applied at once here, where the kernel's
//!   peer acts one way-delay of the surviving path later (10 ms in bench/pm_compare.py).
//!
//! Paths are the connection's own indexes (the scenario flow's `paths` order), which the policy
//! speaks in; the runner's global path indexes are mapped at the edge.

use super::{Connection, Effect, Subflow, SubflowIo, Timer};
use crate::mptcp::pm::{PathManager, PmAction, PmEvent};
use crate::scenario::Direction;
use crate::time::Time;

/// The most subflows open at once (the scenario's bound on `paths`, and upstream Linux's
/// MPTCP_PM_ADDR_MAX = 8 for the in-kernel path manager's subflows), and in a connection's life
/// (subflow indexes are u8).
const MAX_OPEN: usize = 8;
const MAX_EVER: usize = 255;

/// What a connection's path manager is built from (sim/mptcp/build.rs).
pub struct PmSetup {
    pub policy: Box<dyn PathManager>,
    /// The runner's path index of each of the connection's paths, in order.
    pub paths: Vec<u16>,
    /// Each path's backup flag at the start.
    pub backup: Vec<bool>,
}

/// What the path manager did, for summary.json.
#[derive(Debug, Default, Clone, Copy)]
pub struct PmStats {
    pub subflows_created: u64,
    pub subflows_closed: u64,
    pub backup_changes: u64,
    /// Creations refused: MAX_OPEN subflows open, or MAX_EVER opened.
    pub refused: u64,
}

pub(super) struct PmState {
    policy: Box<dyn PathManager>,
    paths: Vec<u16>,
    backup: Vec<bool>,
    /// The connection's start was told (`on_pm_timer` at the start).
    started: bool,
    /// The policy's timer event asked for.
    timer_at: Option<Time>,
    /// Events noted where the policy cannot be called (inside a walk over the subflows), told
    /// at the end of the entry point (`pm_flush`), and the actions' scratch buffer.
    pending: Vec<PmEvent>,
    out: Vec<PmAction>,
    stats: PmStats,
}

impl PmState {
    pub(super) fn new(s: PmSetup) -> Self {
        PmState {
            policy: s.policy,
            paths: s.paths,
            backup: s.backup,
            started: false,
            timer_at: None,
            pending: Vec::with_capacity(4),
            out: Vec::with_capacity(4),
            stats: PmStats::default(),
        }
    }
}

/// `ev` with its path replaced by `k`.
fn on_path(ev: PmEvent, k: u16) -> PmEvent {
    match ev {
        PmEvent::LinkUp { .. } => PmEvent::LinkUp { path: k },
        PmEvent::LinkDown { .. } => PmEvent::LinkDown { path: k },
        PmEvent::LinkQuality { signal_dbm, mcs, .. } => PmEvent::LinkQuality { path: k, signal_dbm, mcs },
        PmEvent::ScanStart { .. } => PmEvent::ScanStart { path: k },
        PmEvent::ScanEnd { .. } => PmEvent::ScanEnd { path: k },
        PmEvent::ConnCreated { .. } => PmEvent::ConnCreated { path: k },
        PmEvent::SubflowEstablished { subflow, .. } => PmEvent::SubflowEstablished { path: k, subflow },
        PmEvent::SubflowClosed { subflow, error, .. } => PmEvent::SubflowClosed { path: k, subflow, error },
        PmEvent::SubflowRto { subflow, .. } => PmEvent::SubflowRto { path: k, subflow },
        PmEvent::SubflowStale { subflow, .. } => PmEvent::SubflowStale { path: k, subflow },
    }
}

impl Connection {
    /// Runs a userspace path manager (not the in-kernel one).
    pub fn has_pm(&self) -> bool {
        self.pm.is_some()
    }

    /// The policy's name and what it did; None with the in-kernel path manager.
    pub fn pm_summary(&self) -> Option<(&'static str, PmStats)> {
        self.pm.as_ref().map(|p| (p.policy.name(), p.stats))
    }

    /// The connection's path index of subflow `j` (the runner's index mapped back).
    fn pm_path_of(&self, j: usize) -> u16 {
        let pi = self.subs[j].path;
        let paths = self.pm.as_ref().map_or(&[][..], |p| &p.paths[..]);
        paths.iter().position(|&p| p == pi).unwrap_or(0) as u16
    }

    /// Whether the policy hears the subflows' transport events (an RTO, a stale mark): only
    /// where its host sends the data. The path manager runs on the client (the `mmpath-pm`
    /// daemon in the client's namespace; the joins here leave from the client), and in a
    /// download the client's subflows carry no data: the retransmission timers and the
    /// MPTCP-level stale marking (protocol.c, mptcp_pm_subflow_chk_stale, on the sender's
    /// retransmission timer) are the server's, which nothing on the client hears. In an upload
    /// they are the client's own, and the daemon reads them from the client's kernel, which has
    /// no event for either: each subflow's tcp_info (icsk_backoff) and the namespace's
    /// SubflowStale counter, polled every 20 ms (python/mmpath/pm/transport.py,
    /// docs/path-manager.md "The mapping onto the kernel"). Told here at the RTO's and the
    /// mark's own time; the daemon's poll adds up to 20 ms.
    pub(super) fn pm_hears_transport(&self) -> bool {
        self.info.direction == Direction::Upload
    }

    /// Notes an event about subflow `j` for the policy (told at `pm_flush`).
    pub(super) fn pm_note(&mut self, j: usize, ev: impl FnOnce(u16, u16) -> PmEvent) {
        if self.pm.is_none() {
            return;
        }
        let e = ev(self.pm_path_of(j), j as u16);
        if let Some(p) = self.pm.as_mut() {
            p.pending.push(e);
        }
    }

    /// Tells the policy the events noted, carrying out its answers.
    pub(super) fn pm_flush(&mut self, now: Time, io: &mut impl SubflowIo) {
        while let Some(ev) = self.pm.as_mut().and_then(|p| (!p.pending.is_empty()).then(|| p.pending.remove(0))) {
            self.pm_event(now, ev, io);
        }
    }

    /// The policy's timer (`Timer::Pm`): the first one, at the connection's start, tells it the
    /// connection exists with its first subflow established.
    pub fn on_pm_timer(&mut self, now: Time, io: &mut impl SubflowIo) {
        let Some(p) = self.pm.as_mut() else { return };
        if !std::mem::replace(&mut p.started, true) {
            let path = self.pm_path_of(0);
            self.pm_event(now, PmEvent::ConnCreated { path }, io);
            self.pm_event(now, PmEvent::SubflowEstablished { path, subflow: 0 }, io);
        }
        let Some(p) = self.pm.as_mut() else { return };
        if p.timer_at == Some(now) {
            p.timer_at = None;
            let mut out = std::mem::take(&mut p.out);
            p.policy.on_timer(now, &mut out);
            self.pm_apply(now, &mut out, io);
        }
        self.pm_rearm();
    }

    /// A link event on the runner's path `pi` (its index in `ev` is ignored).
    pub fn on_pm_link(&mut self, now: Time, pi: u16, ev: PmEvent, io: &mut impl SubflowIo) {
        let Some(p) = self.pm.as_ref() else { return };
        let Some(k) = p.paths.iter().position(|&x| x == pi) else { return };
        self.pm_event(now, on_path(ev, k as u16), io);
    }

    /// Tells the policy `ev` and carries out its answer.
    fn pm_event(&mut self, now: Time, ev: PmEvent, io: &mut impl SubflowIo) {
        let Some(p) = self.pm.as_mut() else { return };
        let mut out = std::mem::take(&mut p.out);
        p.policy.on_event(now, &ev, &mut out);
        self.pm_apply(now, &mut out, io);
        self.pm_rearm();
    }

    /// Asks for the policy's timer if it wants one at a time not yet asked for.
    fn pm_rearm(&mut self) {
        let Some(p) = self.pm.as_mut() else { return };
        let Some(at) = p.policy.poll_at() else { return };
        if p.timer_at != Some(at) {
            p.timer_at = Some(at);
            self.effects.push(Effect::Timer(at, Timer::Pm));
        }
    }

    /// Carries out the policy's actions, in order, then pushes; gives the buffer back.
    fn pm_apply(&mut self, now: Time, out: &mut Vec<PmAction>, io: &mut impl SubflowIo) {
        // An MP_PRIO pushes nothing in the kernel (mp_prio.rs); every other action may have
        // handed data back or opened a subflow.
        let acted = out.iter().any(|a| !matches!(a, PmAction::SetBackup { .. } | PmAction::ClearBackup { .. }));
        for a in out.drain(..) {
            match a {
                PmAction::CreateSubflow { path } => self.pm_create(path),
                PmAction::CloseSubflow { path, subflow } => {
                    let j = subflow as usize;
                    if j < self.subs.len() && self.pm_path_of(j) == path {
                        self.close_subflow(now, j, io, false);
                    }
                }
                PmAction::SetBackup { path } => self.pm_backup(path, true),
                PmAction::ClearBackup { path } => self.pm_backup(path, false),
                PmAction::Announce { .. } => {}
                PmAction::Remove { path } => {
                    for j in 0..self.subs.len() {
                        if !self.subs[j].closed && self.pm_path_of(j) == path {
                            self.close_subflow(now, j, io, false);
                        }
                    }
                }
            }
        }
        if let Some(p) = self.pm.as_mut() {
            p.out = std::mem::take(out);
        }
        if acted {
            self.push(now, io);
        }
    }

    /// Asks the runner for a subflow on the connection's path `k`.
    fn pm_create(&mut self, k: u16) {
        let open = self.subs.iter().filter(|s| !s.closed).count();
        let ever = self.subs.len();
        let Some(p) = self.pm.as_mut() else { return };
        let (Some(&path), Some(&backup)) = (p.paths.get(k as usize), p.backup.get(k as usize)) else { return };
        if open >= MAX_OPEN || ever >= MAX_EVER {
            p.stats.refused += 1;
            return;
        }
        p.stats.subflows_created += 1;
        self.effects.push(Effect::NewSubflow { path, backup });
    }

    /// MP_PRIO on every open subflow of path `k` (mp_prio.rs); subflows opened later inherit it.
    fn pm_backup(&mut self, k: u16, backup: bool) {
        let Some(p) = self.pm.as_mut() else { return };
        let Some(flag) = p.backup.get_mut(k as usize) else { return };
        *flag = backup;
        p.stats.backup_changes += 1;
        for j in 0..self.subs.len() {
            if self.pm_path_of(j) == k {
                self.send_mp_prio(j, backup);
            }
        }
    }

    /// A subflow the runner built for an `Effect::NewSubflow`: it joins now (join.rs).
    pub fn add_subflow(&mut self, now: Time, mut sub: Subflow) {
        sub.rcvbuf = self.rcv_space.as_ref().map(|r| r.subflow_buffer(sub.mss));
        self.subs.push(sub);
        let j = self.subs.len() - 1;
        self.on_join_timer(now, j);
    }

    /// A RST closed subflow `j` at both ends (a middlebox on its path: the scenario's `reset`
    /// step), as the kernel handles a subflow reset: tcp_reset puts the subflow in TCP_CLOSE
    /// with sk_err = ECONNRESET, the connection's worker closes it (protocol.c,
    /// __mptcp_close_subflow -> mptcp_close_ssk -> __mptcp_close_ssk with MPTCP_CF_PUSH), which
    /// sends the connection's data not yet data-ACKed again on the others at once
    /// (__mptcp_retransmit_pending_data) and pushes, and MPTCP_EVENT_SUB_CLOSED carries the
    /// socket's error, which the policy hears as `SubflowClosed { error: true }`. The subflow's
    /// error is not the connection's (protocol.c, __mptcp_subflow_error_report propagates it
    /// only on a fallen-back connection or during the MP_CAPABLE connect), so the connection
    /// goes on over its other subflows, the MP_CAPABLE one's reset included. With none left it
    /// carries nothing until a subflow joins (the kernel keeps an established connection open for
    /// net.mptcp.close_timeout, 60 s by default, "as the protocol can still create more
    /// subflows": __mptcp_close_ssk -> mptcp_start_tout_timer; not modelled further: docs/models.md).
    /// Returns whether it was reset: a subflow closed already, or whose handshake has not
    /// begun (no segment of it has crossed the path), is not.
    pub fn on_reset(&mut self, now: Time, j: usize, io: &mut impl SubflowIo) -> bool {
        let st = &self.subs[j];
        if st.closed || !(st.established || st.hs_deadline.is_some()) {
            return false;
        }
        self.close_subflow(now, j, io, true);
        self.push(now, io);
        true
    }

    /// Closes subflow `j`: its data not yet data-ACKed is sent again on the others, its
    /// endpoints are let go (`Effect::Closed`), and the policy hears of it (`error`: a reset,
    /// not a close the policy asked for).
    pub(super) fn close_subflow(&mut self, now: Time, j: usize, io: &mut impl SubflowIo, error: bool) {
        if self.subs[j].closed {
            return;
        }
        let (una, nxt) = {
            let s = io.sender(self.subs[j].flow);
            (s.snd_una, s.snd_nxt)
        };
        let st = &mut self.subs[j];
        st.closed = true;
        st.established = false;
        st.hs_deadline = None;
        let reinject = &mut self.reinject;
        st.maps.for_each_range(una, nxt, |d, l| reinject.push(d, l));
        self.reclaim(j, io);
        let flow = self.subs[j].flow;
        self.effects.push(Effect::Closed(flow));
        if let Some(p) = self.pm.as_mut() {
            p.stats.subflows_closed += 1;
        }
        let path = self.pm_path_of(j);
        self.pm_event(now, PmEvent::SubflowClosed { path, subflow: j as u16, error }, io);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;
    use crate::mptcp::pm::{self as policy, PmName, PmParams};

    fn with_pm(cn: &mut Connection, name: PmName, backup: &[bool]) {
        let n = backup.len();
        cn.pm = Some(Box::new(PmState::new(PmSetup {
            policy: policy::build(name, &PmParams::default()),
            paths: (0..n as u16).collect(),
            backup: backup.to_vec(),
        })));
    }

    /// Carries out the effects (testkit `settle`: new subflows get endpoints and join);
    /// returns the paths of the subflows opened.
    fn build_new(cn: &mut Connection, io: &mut Endpoints, now: Time) -> Vec<u16> {
        let before = cn.subs.len();
        settle(cn, io, now);
        cn.subs[before..].iter().map(|st| st.path).collect()
    }

    /// fast-failback, state by state: path 0 down, data on subflow 1 (the backup); path 0
    /// up: a new subflow joins on path 0 at once (its SYN now, not at subflow 0's RTO); once
    /// it is established subflow 0 is closed, its outstanding data reinjected, and the new
    /// subflow takes new data.
    #[test]
    fn fast_failback_joins_at_once_and_retires_the_old_subflow() {
        let (mut cn, mut io) = connection(Kernel::V09x, SchedName::Minrtt, &[false, true], 1 << 20);
        with_pm(&mut cn, PmName::FastFailback, &[false, true]);
        cn.on_pm_timer(Time::ZERO, &mut io);
        settle(&mut cn, &mut io, Time::ZERO);
        write(&mut cn, &mut io, Time::ZERO, 5 * MSS as u64);
        assert_eq!(io.data_on(0).len(), 5);
        cn.subs[1].established = true;
        io.up[0] = false;
        cn.on_pm_link(ms(10), 0, PmEvent::LinkDown { path: 0 }, &mut io);
        assert!(build_new(&mut cn, &mut io, ms(10)).is_empty(), "nothing while it is down");
        io.up[0] = true;
        cn.on_pm_link(ms(500), 0, PmEvent::LinkUp { path: 0 }, &mut io);
        assert_eq!(build_new(&mut cn, &mut io, ms(500)), vec![0], "a subflow on path 0 at once");
        assert_eq!(cn.subs.len(), 3);
        assert_eq!(io.syns(), vec![(2, 0, Way::Reverse)], "its MP_JOIN SYN goes now");
        // The handshake completes: subflow 0 is closed and its data reinjected.
        let mut p = Packet::empty(2, Kind::Syn, Way::Reverse);
        p.seq = 2;
        cn.on_handshake(ms(510), 2, &p, &mut io);
        assert!(build_new(&mut cn, &mut io, ms(510)).is_empty());
        assert!(cn.subs[0].closed && !cn.subs[0].established);
        assert_eq!(cn.subs[0].state_code(), 5);
        assert_eq!(io.closed, vec![0]);
        let on2: Vec<u64> = io.data_on(2).iter().map(|d| d.1).collect();
        assert_eq!(&on2[..5], &[0, 1000, 2000, 3000, 4000], "subflow 0's data again, on the new subflow");
        assert_eq!(
            cn.pm_summary().map(|(n, s)| (n, s.subflows_created, s.subflows_closed)),
            Some(("fast-failback", 1, 1))
        );
    }

    /// fast-failback at the cut: the path's address is withdrawn, so subflow 0 is closed and
    /// its outstanding data goes to the backup subflow at once, before any RTO (upstream's
    /// connection-level timer included); without the removal it waits on subflow 0.
    #[test]
    fn fast_failback_withdraws_the_cut_path_and_its_data_moves_at_once() {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, true], 1 << 20);
        with_pm(&mut cn, PmName::FastFailback, &[false, true]);
        cn.on_pm_timer(Time::ZERO, &mut io);
        settle(&mut cn, &mut io, Time::ZERO);
        write(&mut cn, &mut io, Time::ZERO, 5 * MSS as u64);
        assert_eq!(io.data_on(0).len(), 5);
        cn.subs[1].established = true;
        cn.pm_event(ms(1), PmEvent::SubflowEstablished { path: 1, subflow: 1 }, &mut io);
        assert!(io.data_on(1).is_empty(), "backup mode: nothing on the backup yet");
        io.up[0] = false;
        cn.on_pm_link(ms(10), 0, PmEvent::LinkDown { path: 0 }, &mut io);
        assert!(build_new(&mut cn, &mut io, ms(10)).is_empty());
        assert!(cn.subs[0].closed, "the removal closed subflow 0");
        let on1: Vec<u64> = io.data_on(1).iter().map(|d| d.1).collect();
        assert_eq!(on1, vec![0, 1000, 2000, 3000, 4000], "subflow 0's data again, on the backup, at the cut");
        // The link returns: a fresh subflow on path 0 although the removal closed the old one.
        io.up[0] = true;
        cn.on_pm_link(ms(500), 0, PmEvent::LinkUp { path: 0 }, &mut io);
        assert_eq!(build_new(&mut cn, &mut io, ms(500)), vec![0]);
    }

    /// recreate hears a stale subflow only where its host sends the data: in a download the
    /// stale mark is the server's, which a path manager on the client cannot hear (as the
    /// daemon does not), so nothing is probed; in an upload the client's own subflow goes
    /// stale and is probed with a fresh subflow on its path.
    #[test]
    fn a_stale_subflow_reaches_the_policy_only_on_the_sending_side() {
        for (direction, probes) in [(Direction::Download, 0), (Direction::Upload, 1)] {
            let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], 1 << 20);
            cn.info.direction = direction;
            with_pm(&mut cn, PmName::Recreate, &[false, false]);
            cn.on_pm_timer(Time::ZERO, &mut io);
            settle(&mut cn, &mut io, Time::ZERO);
            cn.subs[1].established = true;
            write(&mut cn, &mut io, Time::ZERO, 4 * MSS as u64);
            let mut now = ms(1);
            // Subflow 1 hears from its peer, subflow 0 does not: stale after stale_loss_cnt
            // firings of the connection timer (stale.rs).
            let mut opened = Vec::new();
            for _ in 0..5 {
                let nxt1 = io.senders[1].snd_nxt;
                ack(&mut cn, &mut io, now, 1, nxt1, 0, 1 << 20);
                now = cn.rtx_at.expect("data outstanding: the timer runs").max(now);
                cn.on_rtx_timer(now, &mut io);
                opened.extend(build_new(&mut cn, &mut io, now));
                now += ms(1);
            }
            assert!(cn.subs[0].stale, "{direction:?}");
            assert_eq!(opened.len(), probes, "{direction:?}: probes opened {opened:?}");
        }
    }

    /// What the policy hears of an RTO is what the daemon reads from the client's kernel: in
    /// an upload each RTO of a subflow, at the time it fires; in a download nothing (the
    /// client's subflows send no data, the timers are the server's).
    #[test]
    fn an_rto_reaches_the_policy_at_its_time_only_on_the_sending_side() {
        use std::sync::{Arc, Mutex};
        struct Recorder(Arc<Mutex<Vec<(Time, PmEvent)>>>);
        impl PathManager for Recorder {
            fn name(&self) -> &'static str {
                "recorder"
            }
            fn on_event(&mut self, now: Time, ev: &PmEvent, _out: &mut Vec<PmAction>) {
                self.0.lock().unwrap().push((now, *ev));
            }
        }
        for direction in [Direction::Download, Direction::Upload] {
            let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], 1 << 20);
            cn.info.direction = direction;
            let heard = Arc::new(Mutex::new(Vec::new()));
            cn.pm = Some(Box::new(PmState::new(PmSetup {
                policy: Box::new(Recorder(heard.clone())),
                paths: vec![0, 1],
                backup: vec![false, false],
            })));
            write(&mut cn, &mut io, Time::ZERO, 4 * MSS as u64);
            // Subflow 0's timers fire unanswered (a loss probe first, then RTOs).
            let mut fired = Vec::new();
            while io.senders[0].stats.rtos < 2 {
                let before = io.senders[0].stats.rtos;
                let at = rto(&mut cn, &mut io, 0);
                if io.senders[0].stats.rtos > before {
                    fired.push(at);
                }
            }
            let rtos: Vec<(Time, PmEvent)> = heard
                .lock()
                .unwrap()
                .iter()
                .copied()
                .filter(|(_, e)| matches!(e, PmEvent::SubflowRto { .. }))
                .collect();
            let want: Vec<(Time, PmEvent)> = match direction {
                Direction::Upload => fired.iter().map(|&t| (t, PmEvent::SubflowRto { path: 0, subflow: 0 })).collect(),
                _ => Vec::new(),
            };
            assert_eq!(rtos, want, "{direction:?}");
        }
    }

    /// A reset of the MP_CAPABLE subflow, state by state: it is closed at once, its data not yet
    /// data-ACKed goes to the backup at once (nothing waits for an RTO), the policy hears
    /// `SubflowClosed { error: true }` and `recreate` opens a subflow on the path after its
    /// first backoff (1 s); the connection goes on. A second reset of the closed subflow, and a
    /// subflow whose handshake has not begun, change nothing.
    #[test]
    fn a_reset_closes_the_subflow_with_an_error_and_its_data_moves_at_once() {
        use std::sync::{Arc, Mutex};
        struct Recorder(Arc<Mutex<Vec<PmEvent>>>, Box<dyn PathManager>);
        impl PathManager for Recorder {
            fn name(&self) -> &'static str {
                "recorder"
            }
            fn on_event(&mut self, now: Time, ev: &PmEvent, out: &mut Vec<PmAction>) {
                self.0.lock().unwrap().push(*ev);
                self.1.on_event(now, ev, out);
            }
            fn poll_at(&self) -> Option<Time> {
                self.1.poll_at()
            }
            fn on_timer(&mut self, now: Time, out: &mut Vec<PmAction>) {
                self.1.on_timer(now, out);
            }
        }
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, true], 1 << 20);
        let heard = Arc::new(Mutex::new(Vec::new()));
        cn.pm = Some(Box::new(PmState::new(PmSetup {
            policy: Box::new(Recorder(heard.clone(), policy::build(PmName::Recreate, &PmParams::default()))),
            paths: vec![0, 1],
            backup: vec![false, true],
        })));
        cn.on_pm_timer(Time::ZERO, &mut io);
        settle(&mut cn, &mut io, Time::ZERO);
        cn.subs[1].established = true;
        cn.pm_event(ms(1), PmEvent::SubflowEstablished { path: 1, subflow: 1 }, &mut io);
        write(&mut cn, &mut io, ms(1), 5 * MSS as u64);
        assert_eq!(io.data_on(0).len(), 5);
        assert!(io.data_on(1).is_empty(), "backup mode: nothing on the backup yet");
        assert!(cn.on_reset(ms(10), 0, &mut io));
        assert!(build_new(&mut cn, &mut io, ms(10)).is_empty(), "no subflow at once");
        assert!(cn.subs[0].closed && !cn.subs[0].established);
        assert_eq!(io.closed, vec![0], "its endpoints are let go");
        let on1: Vec<u64> = io.data_on(1).iter().map(|d| d.1).collect();
        assert_eq!(on1, vec![0, 1000, 2000, 3000, 4000], "subflow 0's data again, on the backup, at the reset");
        assert!(heard.lock().unwrap().contains(&PmEvent::SubflowClosed { path: 0, subflow: 0, error: true }));
        assert!(!cn.on_reset(ms(20), 0, &mut io), "closed already");
        // recreate's first backoff: a subflow on path 0 one second after the reset.
        let due = io.timers.iter().rev().find(|(_, t)| *t == Timer::Pm).map(|(at, _)| *at);
        assert_eq!(due, Some(ms(1010)));
        cn.on_pm_timer(ms(1010), &mut io);
        assert_eq!(build_new(&mut cn, &mut io, ms(1010)), vec![0]);
        // A subflow added but not yet joining (its handshake not begun) is not reset.
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, true], 1 << 20);
        assert!(!cn.subs[1].established && cn.subs[1].hs_deadline.is_none());
        assert!(!cn.on_reset(ms(0), 1, &mut io));
        assert!(!cn.subs[1].closed);
    }

    /// The kernel's path manager as a policy changes nothing: no subflow is created.
    #[test]
    fn the_kernel_policy_creates_nothing() {
        let (mut cn, mut io) = connection(Kernel::V09x, SchedName::Minrtt, &[false, true], 1 << 20);
        with_pm(&mut cn, PmName::Kernel, &[false, true]);
        cn.on_pm_timer(Time::ZERO, &mut io);
        cn.on_pm_link(ms(10), 0, PmEvent::LinkDown { path: 0 }, &mut io);
        cn.on_pm_link(ms(500), 0, PmEvent::LinkUp { path: 0 }, &mut io);
        assert!(build_new(&mut cn, &mut io, ms(500)).is_empty());
        assert_eq!(cn.subs.len(), 2);
    }

    /// link-aware-backup: a link going down swaps the backup flags (MP_PRIO), so once the
    /// MP_PRIOs have reached the server new data goes to the old backup without waiting for an
    /// RTO.
    #[test]
    fn link_aware_backup_swaps_the_flags_on_link_down() {
        let (mut cn, mut io) = connection(Kernel::V09x, SchedName::Minrtt, &[false, true], 1 << 20);
        with_pm(&mut cn, PmName::LinkAwareBackup, &[false, true]);
        cn.pm.as_mut().unwrap().policy =
            policy::build(PmName::LinkAwareBackup, &PmParams { backup_paths: vec![1], ..PmParams::default() });
        cn.on_pm_timer(Time::ZERO, &mut io);
        write(&mut cn, &mut io, Time::ZERO, 5 * MSS as u64);
        cn.subs[1].established = true;
        cn.on_pm_link(ms(10), 0, PmEvent::LinkDown { path: 0 }, &mut io);
        settle(&mut cn, &mut io, ms(10));
        let prios: Vec<Packet> = io.sent.iter().filter(|p| p.kind == Kind::Prio).copied().collect();
        assert_eq!(prios.len(), 2, "one MP_PRIO per subflow");
        for p in &prios {
            cn.on_mp_prio(p.flow as usize, p);
        }
        assert!(cn.subs[0].backup && !cn.subs[1].backup);
        write(&mut cn, &mut io, ms(11), 10 * MSS as u64);
        assert_eq!(io.data_on(1).len(), 5, "new data on the old backup");
    }
}
