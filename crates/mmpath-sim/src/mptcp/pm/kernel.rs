//! `kernel`: the in-kernel path manager as the simulator models it (today's behaviour): the
//! subflows are opened at the start (MP_CAPABLE, then an MP_JOIN per path) and nothing is
//! decided afterwards; a lost link is left to the transport (RTO backoff, pf / stale). It is the
//! baseline the other policies are compared with, and what the daemon runs to change nothing.
//!
//! A subflow closed on an error (a reset) is not opened again either, as in the kernel: the
//! in-kernel path manager opens a subflow from a `subflow` endpoint only while the endpoint's id
//! is in the connection's `id_avail_bitmap` (net/mptcp/pm_kernel.c, select_local_address), clears
//! the id when it uses it (mptcp_pm_create_subflow_or_signal_addr), and sets it again only when
//! the endpoint is deleted or flushed (__mark_subflow_endp_available,
//! mptcp_pm_flush_addrs_and_subflows), not when the subflow closes: the close only lets it try
//! endpoints not used yet (pm.c, mptcp_pm_subflow_check_next). The MP_CAPABLE subflow's endpoint
//! is marked used the same way (MPTCP_PM_MPC_ENDPOINT_ACCOUNTED).

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

    /// Whatever happens, the in-kernel path manager asks for nothing and sets no timer: a
    /// subflow closed on an error (a reset) included.
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
