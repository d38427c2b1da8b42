//! `fast-failback`: act at both ends of an outage instead of waiting for the transport.
//!
//! At the cut, the path's address is withdrawn (REMOVE_ADDR) as long as another path has an
//! established subflow whose link is up: the peer hears it over that surviving subflow (Linux
//! sends the RM_ADDR on a subflow whose local id is not being removed: net/mptcp/pm.c,
//! mptcp_pm_addr_send_ack_avoid_list, "mptcp: pm: avoid sending RM_ADDR over same subflow"),
//! closes its subflows to the address (pm_kernel.c, mptcp_pm_rm_addr_or_subflow ->
//! mptcp_close_ssk) and, closing them, sends its whole MPTCP-level retransmission queue again
//! at once on what is left (protocol.c, __mptcp_close_ssk with MPTCP_CF_PUSH ->
//! __mptcp_retransmit_pending_data). Without it a sender whose data sits on the dead subflow
//! (the connection-level window full of it) resends only at its MPTCP retransmission timer or
//! once the subflow is stale; an MP_PRIO clearing the survivor's backup flag moves nothing that
//! was already sent (mptcp_pm_mp_prio_received only sets the flag).
//!
//! When the link comes back, a fresh subflow is opened on it at once instead of waiting for the
//! old subflow's backed-off retransmission timer (after an outage of a few seconds the next RTO
//! can be seconds away: 0.2, 0.4, 0.8, 1.6, 3.2 s ...; AMuSe measured a restored 60 GHz link
//! unused for ~12 s). Once the fresh subflow is established the old ones still open on that
//! path are closed (their unacknowledged data goes to the others).
//!
//! Only a path the connection had a subflow on is re-joined (the path manager's first MP_JOIN
//! there is the kernel's business), and one fresh subflow at a time per path: a link that drops
//! again before the new subflow is up does not stack another.

use super::{slot, PathId, PathManager, PmAction, PmEvent, SubflowId};
use crate::time::Time;

#[derive(Debug, Default)]
struct PathState {
    down: bool,
    /// The established subflows on the path.
    subflows: Vec<SubflowId>,
    /// The path had a subflow when its link went down (it may have been closed since, by the
    /// removal): it is re-joined when the link returns.
    rejoin: bool,
    /// A fresh subflow was asked for and is not established yet.
    pending: bool,
    /// The subflows to close once the fresh one is established.
    retire: Vec<SubflowId>,
}

#[derive(Debug, Default)]
pub struct FastFailback {
    paths: Vec<PathState>,
}

impl FastFailback {
    /// Another path than `path` has an established subflow and its link up: a removal of
    /// `path`'s address can reach the peer, and the connection keeps a subflow.
    fn survivor(&self, path: PathId) -> bool {
        self.paths.iter().enumerate().any(|(k, p)| k != path as usize && !p.down && !p.subflows.is_empty())
    }
}

impl PathManager for FastFailback {
    fn name(&self) -> &'static str {
        "fast-failback"
    }

    fn on_event(&mut self, _now: Time, ev: &PmEvent, out: &mut Vec<PmAction>) {
        let path: PathId = ev.path();
        let survivor = matches!(ev, PmEvent::LinkDown { .. }) && self.survivor(path);
        let p = slot(&mut self.paths, path);
        match *ev {
            PmEvent::LinkDown { .. } => {
                if p.down {
                    return;
                }
                p.down = true;
                p.rejoin |= !p.subflows.is_empty();
                if survivor && !p.subflows.is_empty() {
                    out.push(PmAction::Remove { path });
                }
            }
            PmEvent::LinkUp { .. } => {
                if !std::mem::take(&mut p.down) || p.pending || !std::mem::take(&mut p.rejoin) {
                    return;
                }
                p.retire.clone_from(&p.subflows);
                p.pending = true;
                out.push(PmAction::CreateSubflow { path });
            }
            PmEvent::SubflowEstablished { subflow, .. } => {
                if !p.subflows.contains(&subflow) {
                    p.subflows.push(subflow);
                }
                if p.pending && !p.retire.contains(&subflow) {
                    p.pending = false;
                    for old in p.retire.drain(..) {
                        out.push(PmAction::CloseSubflow { path, subflow: old });
                    }
                }
            }
            PmEvent::SubflowClosed { subflow, .. } => {
                p.subflows.retain(|&s| s != subflow);
                p.retire.retain(|&s| s != subflow);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: &mut FastFailback, ev: PmEvent) -> Vec<PmAction> {
        let mut out = Vec::new();
        p.on_event(Time::from_secs(1), &ev, &mut out);
        out
    }

    /// Subflow 0 on path 0, subflow 1 on path 1, both established.
    fn two_paths() -> FastFailback {
        let mut p = FastFailback::default();
        assert!(run(&mut p, PmEvent::ConnCreated { path: 0 }).is_empty());
        assert!(run(&mut p, PmEvent::SubflowEstablished { path: 0, subflow: 0 }).is_empty());
        assert!(run(&mut p, PmEvent::SubflowEstablished { path: 1, subflow: 1 }).is_empty());
        p
    }

    /// Down: the address is withdrawn at once (the peer resends over path 1); up: a fresh
    /// subflow at once; once it is established the old one is closed.
    #[test]
    fn a_returning_link_gets_a_fresh_subflow_and_the_old_one_is_retired() {
        let mut p = two_paths();
        assert_eq!(run(&mut p, PmEvent::LinkDown { path: 0 }), vec![PmAction::Remove { path: 0 }]);
        assert!(run(&mut p, PmEvent::LinkDown { path: 0 }).is_empty(), "a repeated down is not a new cut");
        assert!(run(&mut p, PmEvent::SubflowRto { path: 0, subflow: 0 }).is_empty());
        assert_eq!(run(&mut p, PmEvent::LinkUp { path: 0 }), vec![PmAction::CreateSubflow { path: 0 }]);
        // The old subflow recovering is not the fresh one.
        assert!(run(&mut p, PmEvent::SubflowEstablished { path: 0, subflow: 0 }).is_empty());
        assert_eq!(
            run(&mut p, PmEvent::SubflowEstablished { path: 0, subflow: 2 }),
            vec![PmAction::CloseSubflow { path: 0, subflow: 0 }]
        );
        assert!(run(&mut p, PmEvent::SubflowClosed { path: 0, subflow: 0, error: false }).is_empty());
        // The next outage withdraws the address again and retires subflow 2.
        assert_eq!(run(&mut p, PmEvent::LinkDown { path: 0 }), vec![PmAction::Remove { path: 0 }]);
        assert_eq!(run(&mut p, PmEvent::LinkUp { path: 0 }), vec![PmAction::CreateSubflow { path: 0 }]);
        assert_eq!(
            run(&mut p, PmEvent::SubflowEstablished { path: 0, subflow: 3 }),
            vec![PmAction::CloseSubflow { path: 0, subflow: 2 }]
        );
    }

    /// An up without a down before it, a path never joined, and a second outage while the
    /// fresh subflow is still joining ask for nothing.
    #[test]
    fn no_fresh_subflow_without_an_outage_a_subflow_or_while_one_is_joining() {
        let mut p = two_paths();
        assert!(run(&mut p, PmEvent::LinkUp { path: 0 }).is_empty(), "no outage");
        run(&mut p, PmEvent::LinkDown { path: 2 });
        assert!(run(&mut p, PmEvent::LinkUp { path: 2 }).is_empty(), "no subflow was ever on path 2");
        assert_eq!(run(&mut p, PmEvent::LinkDown { path: 1 }), vec![PmAction::Remove { path: 1 }]);
        assert_eq!(run(&mut p, PmEvent::LinkUp { path: 1 }).len(), 1);
        run(&mut p, PmEvent::LinkDown { path: 1 });
        assert!(run(&mut p, PmEvent::LinkUp { path: 1 }).is_empty(), "the fresh subflow is still joining");
        // The old subflow closed by itself meanwhile: nothing left to retire.
        run(&mut p, PmEvent::SubflowClosed { path: 1, subflow: 1, error: true });
        assert!(run(&mut p, PmEvent::SubflowEstablished { path: 1, subflow: 5 }).is_empty());
    }

    /// The address is withdrawn only while another path has an established subflow on a link
    /// that is up: with both links down nothing could carry the RM_ADDR, and the connection
    /// would be left without a subflow. A path removed (its subflows closed by the removal, as
    /// in the simulator) is still re-joined when its link returns.
    #[test]
    fn the_address_is_withdrawn_only_with_a_survivor_and_a_removed_path_is_rejoined() {
        let mut p = two_paths();
        assert_eq!(run(&mut p, PmEvent::LinkDown { path: 1 }), vec![PmAction::Remove { path: 1 }]);
        assert!(run(&mut p, PmEvent::LinkDown { path: 0 }).is_empty(), "path 1 is down too: no survivor");
        assert_eq!(run(&mut p, PmEvent::LinkUp { path: 0 }), vec![PmAction::CreateSubflow { path: 0 }]);
        // Path 1's subflow was closed by the removal: it is re-joined all the same.
        assert!(run(&mut p, PmEvent::SubflowClosed { path: 1, subflow: 1, error: false }).is_empty());
        assert_eq!(run(&mut p, PmEvent::LinkUp { path: 1 }), vec![PmAction::CreateSubflow { path: 1 }]);
        assert!(run(&mut p, PmEvent::SubflowEstablished { path: 1, subflow: 7 }).is_empty(), "nothing left to retire");
        // A single-path connection: nothing to withdraw towards.
        let mut one = FastFailback::default();
        run(&mut one, PmEvent::SubflowEstablished { path: 0, subflow: 0 });
        assert!(run(&mut one, PmEvent::LinkDown { path: 0 }).is_empty());
    }
}
