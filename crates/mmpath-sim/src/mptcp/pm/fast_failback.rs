//! `fast-failback`: when a link that went down comes back, open a fresh subflow on it at once
//! instead of waiting for the old subflow's backed-off retransmission timer (after an outage of
//! a few seconds the next RTO can be seconds away: 0.2, 0.4, 0.8, 1.6, 3.2 s ...; AMuSe measured
//! a restored 60 GHz link unused for ~12 s). Once the fresh subflow is established the old ones
//! on that path are closed (their unacknowledged data goes to the others).
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
    /// A fresh subflow was asked for and is not established yet.
    pending: bool,
    /// The subflows to close once the fresh one is established.
    retire: Vec<SubflowId>,
}

#[derive(Debug, Default)]
pub struct FastFailback {
    paths: Vec<PathState>,
}

impl PathManager for FastFailback {
    fn name(&self) -> &'static str {
        "fast-failback"
    }

    fn on_event(&mut self, _now: Time, ev: &PmEvent, out: &mut Vec<PmAction>) {
        let path: PathId = ev.path();
        let p = slot(&mut self.paths, path);
        match *ev {
            PmEvent::LinkDown { .. } => p.down = true,
            PmEvent::LinkUp { .. } => {
                if !std::mem::take(&mut p.down) || p.pending || p.subflows.is_empty() {
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

    /// Down, then up: a fresh subflow at once; once it is established the old one is closed.
    #[test]
    fn a_returning_link_gets_a_fresh_subflow_and_the_old_one_is_retired() {
        let mut p = two_paths();
        assert!(run(&mut p, PmEvent::LinkDown { path: 0 }).is_empty());
        assert!(run(&mut p, PmEvent::SubflowRto { path: 0, subflow: 0 }).is_empty());
        assert_eq!(run(&mut p, PmEvent::LinkUp { path: 0 }), vec![PmAction::CreateSubflow { path: 0 }]);
        // The old subflow recovering is not the fresh one.
        assert!(run(&mut p, PmEvent::SubflowEstablished { path: 0, subflow: 0 }).is_empty());
        assert_eq!(
            run(&mut p, PmEvent::SubflowEstablished { path: 0, subflow: 2 }),
            vec![PmAction::CloseSubflow { path: 0, subflow: 0 }]
        );
        assert!(run(&mut p, PmEvent::SubflowClosed { path: 0, subflow: 0, error: false }).is_empty());
        // The next outage retires subflow 2.
        run(&mut p, PmEvent::LinkDown { path: 0 });
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
        run(&mut p, PmEvent::LinkDown { path: 1 });
        assert_eq!(run(&mut p, PmEvent::LinkUp { path: 1 }).len(), 1);
        run(&mut p, PmEvent::LinkDown { path: 1 });
        assert!(run(&mut p, PmEvent::LinkUp { path: 1 }).is_empty(), "the fresh subflow is still joining");
        // The old subflow closed by itself meanwhile: nothing left to retire.
        run(&mut p, PmEvent::SubflowClosed { path: 1, subflow: 1, error: true });
        assert!(run(&mut p, PmEvent::SubflowEstablished { path: 1, subflow: 5 }).is_empty());
    }
}
