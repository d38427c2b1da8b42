//! `recreate`: keep every path in use. A subflow closed on an error (a reset, a timeout) is
//! opened again on its path after a backoff that doubles with each failure there (Linux's own
//! connect retry timing, `PmParams`) and starts over once a subflow there is established; a
//! subflow the kernel marked stale is probed with a fresh subflow on its path as soon as the
//! link is up (at once, or when it comes back), and retired once the probe is established.

use super::{slot, PathId, PathManager, PmAction, PmEvent, PmParams, SubflowId};
use crate::time::Time;

#[derive(Debug, Default)]
struct PathState {
    down: bool,
    /// The next re-creation's wait, and the re-creation due (after a close on an error).
    backoff: Option<Time>,
    due: Option<Time>,
    /// Stale subflows to retire once a probe is established, and whether a probe is joining.
    stale: Vec<SubflowId>,
    probing: bool,
}

pub struct Recreate {
    p: PmParams,
    paths: Vec<PathState>,
}

impl Recreate {
    pub fn new(p: &PmParams) -> Self {
        Recreate { p: p.clone(), paths: Vec::new() }
    }

    /// Probes the path's stale subflows if its link is up and no probe is joining.
    fn probe(s: &mut PathState, path: PathId, out: &mut Vec<PmAction>) {
        if !s.stale.is_empty() && !s.down && !s.probing && s.due.is_none() {
            s.probing = true;
            out.push(PmAction::CreateSubflow { path });
        }
    }
}

impl PathManager for Recreate {
    fn name(&self) -> &'static str {
        "recreate"
    }

    fn on_event(&mut self, now: Time, ev: &PmEvent, out: &mut Vec<PmAction>) {
        let path = ev.path();
        let (first, max) = (self.p.backoff, self.p.max_backoff);
        let s = slot(&mut self.paths, path);
        match *ev {
            PmEvent::LinkDown { .. } => s.down = true,
            PmEvent::LinkUp { .. } => {
                s.down = false;
                Self::probe(s, path, out);
            }
            PmEvent::SubflowStale { subflow, .. } => {
                if !s.stale.contains(&subflow) {
                    s.stale.push(subflow);
                }
                Self::probe(s, path, out);
            }
            PmEvent::SubflowEstablished { subflow, .. } => {
                s.backoff = None;
                if s.stale.contains(&subflow) {
                    return; // the stale subflow came back by itself: the probe still retires it
                }
                if std::mem::take(&mut s.probing) {
                    for old in s.stale.drain(..) {
                        out.push(PmAction::CloseSubflow { path, subflow: old });
                    }
                }
            }
            PmEvent::SubflowClosed { subflow, error, .. } => {
                s.stale.retain(|&x| x != subflow);
                if error && s.due.is_none() {
                    let wait = s.backoff.unwrap_or(first);
                    s.backoff = Some(Time(wait.ns().saturating_mul(2)).min(max));
                    s.due = Some(now + wait);
                }
            }
            _ => {}
        }
    }

    fn poll_at(&self) -> Option<Time> {
        self.paths.iter().filter_map(|s| s.due).min()
    }

    fn on_timer(&mut self, now: Time, out: &mut Vec<PmAction>) {
        for (i, s) in self.paths.iter_mut().enumerate() {
            if s.due.is_some_and(|t| t <= now) {
                s.due = None;
                out.push(PmAction::CreateSubflow { path: i as PathId });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Time {
        Time::from_secs(x)
    }

    fn run(p: &mut Recreate, now: Time, ev: PmEvent) -> Vec<PmAction> {
        let mut out = Vec::new();
        p.on_event(now, &ev, &mut out);
        out
    }

    fn timer(p: &mut Recreate, now: Time) -> Vec<PmAction> {
        let mut out = Vec::new();
        p.on_timer(now, &mut out);
        out
    }

    /// Closed on an error: re-created after 1 s, then 2 s, 4 s; an establishment resets it; a
    /// close the policy or the application asked for is not re-created.
    #[test]
    fn an_errored_subflow_is_recreated_with_doubling_backoff() {
        let mut p = Recreate::new(&PmParams::default());
        assert!(run(&mut p, s(10), PmEvent::SubflowClosed { path: 1, subflow: 1, error: true }).is_empty());
        assert_eq!(p.poll_at(), Some(s(11)));
        assert!(timer(&mut p, s(10)).is_empty(), "not due");
        assert_eq!(timer(&mut p, s(11)), vec![PmAction::CreateSubflow { path: 1 }]);
        assert_eq!(p.poll_at(), None);
        run(&mut p, s(12), PmEvent::SubflowClosed { path: 1, subflow: 2, error: true });
        assert_eq!(p.poll_at(), Some(s(14)));
        timer(&mut p, s(14));
        run(&mut p, s(15), PmEvent::SubflowClosed { path: 1, subflow: 3, error: true });
        assert_eq!(p.poll_at(), Some(s(19)));
        timer(&mut p, s(19));
        run(&mut p, s(19), PmEvent::SubflowEstablished { path: 1, subflow: 4 });
        run(&mut p, s(30), PmEvent::SubflowClosed { path: 1, subflow: 4, error: true });
        assert_eq!(p.poll_at(), Some(s(31)), "established: the backoff starts over");
        timer(&mut p, s(31));
        assert!(run(&mut p, s(40), PmEvent::SubflowClosed { path: 1, subflow: 5, error: false }).is_empty());
        assert_eq!(p.poll_at(), None);
    }

    /// The backoff stops doubling at max_backoff (TCP_RTO_MAX).
    #[test]
    fn the_backoff_is_capped() {
        let mut p = Recreate::new(&PmParams::default());
        let mut now = s(0);
        let mut waits = Vec::new();
        for k in 0..10 {
            run(&mut p, now, PmEvent::SubflowClosed { path: 0, subflow: k, error: true });
            let due = p.poll_at().unwrap();
            waits.push((due - now).secs_f64());
            timer(&mut p, due);
            now = due;
        }
        assert_eq!(waits, vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 120.0, 120.0, 120.0]);
    }

    /// Stale with the link up: probed at once, retired when the probe is up. Stale with the
    /// link down: probed when it comes back.
    #[test]
    fn stale_subflows_are_probed_when_the_link_is_up() {
        let mut p = Recreate::new(&PmParams::default());
        assert_eq!(
            run(&mut p, s(1), PmEvent::SubflowStale { path: 0, subflow: 0 }),
            vec![PmAction::CreateSubflow { path: 0 }]
        );
        assert!(run(&mut p, s(1), PmEvent::SubflowStale { path: 0, subflow: 0 }).is_empty(), "one probe");
        assert_eq!(
            run(&mut p, s(2), PmEvent::SubflowEstablished { path: 0, subflow: 2 }),
            vec![PmAction::CloseSubflow { path: 0, subflow: 0 }]
        );

        let mut p = Recreate::new(&PmParams::default());
        run(&mut p, s(0), PmEvent::LinkDown { path: 0 });
        assert!(run(&mut p, s(1), PmEvent::SubflowStale { path: 0, subflow: 0 }).is_empty(), "link down");
        assert_eq!(run(&mut p, s(5), PmEvent::LinkUp { path: 0 }), vec![PmAction::CreateSubflow { path: 0 }]);
        // The stale subflow recovering first does not count as the probe.
        assert!(run(&mut p, s(5), PmEvent::SubflowEstablished { path: 0, subflow: 0 }).is_empty());
        assert_eq!(run(&mut p, s(6), PmEvent::SubflowEstablished { path: 0, subflow: 3 }).len(), 1);
        // No stale subflow: a link coming back asks for nothing.
        run(&mut p, s(7), PmEvent::LinkDown { path: 0 });
        assert!(run(&mut p, s(8), PmEvent::LinkUp { path: 0 }).is_empty());
    }
}
