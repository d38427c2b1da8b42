//! `kernel`: the in-kernel path manager as the simulator models it (today's behaviour): the
//! subflows are opened at the start (MP_CAPABLE, then an MP_JOIN per path) and nothing is
//! decided afterwards; a lost link is left to the transport (RTO backoff, pf / stale). It is the
//! baseline the other policies are compared with, and what the daemon runs to change nothing.

use super::{PathManager, PmAction, PmEvent};
use crate::time::Time;

pub struct Kernel;

impl PathManager for Kernel {
    fn name(&self) -> &'static str {
        "kernel"
    }

    fn on_event(&mut self, _now: Time, _ev: &PmEvent, _out: &mut Vec<PmAction>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever happens, the in-kernel path manager asks for nothing and sets no timer.
    #[test]
    fn the_kernel_policy_decides_nothing() {
        let mut k = Kernel;
        let mut out = Vec::new();
        let t = Time::from_secs(1);
        for ev in [
            PmEvent::ConnCreated { path: 0 },
            PmEvent::LinkDown { path: 0 },
            PmEvent::SubflowRto { path: 0, subflow: 0 },
            PmEvent::SubflowStale { path: 0, subflow: 0 },
            PmEvent::LinkUp { path: 0 },
            PmEvent::SubflowClosed { path: 1, subflow: 1, error: true },
        ] {
            k.on_event(t, &ev, &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(k.poll_at(), None);
    }
}
