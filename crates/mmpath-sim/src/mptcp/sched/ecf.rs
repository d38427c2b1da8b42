//! ECF, Earliest Completion First (Lim, Nahum, Towsley, Gibbens, "ECF: An MPTCP Path
//! Scheduler to Manage Heterogeneous Paths", CoNEXT 2017), as in the v0.9x module
//! net/mptcp/mptcp_ecf.c (`ecf_get_available_subflow`).
//!
//! Rule: take minRTT's choice. If it is not the fastest subflow f (f's cwnd is full) but a
//! slower s, decide whether waiting for f finishes the queued data sooner than using s. With
//! k = queued bytes (data not yet handed to any subflow), x_f = max(k, cwnd_f mss),
//! x_s = max(k, cwnd_s mss), delta = max(rttvar_f, rttvar_s), beta = 1/4 and the waiting flag w:
//!
//!   if rtt_f (x_f + cwnd_f mss) < (1 + w beta) cwnd_f mss (rtt_s + delta):
//!       if rtt_s x_s >= cwnd_s mss (2 rtt_f + delta): wait for f (None), w = 1
//!       else: send on s (w unchanged)
//!   else: send on s, w = 0
//!
//! The flag is hysteresis: once ECF has decided to wait, the condition to keep waiting is
//! looser by beta, so it does not flip between the paths on every segment.
//!
//! delta: the view's rttvar (RFC 6298 RTTVAR, the paper's sigma). The kernel module uses
//! `rttvar_us >> 1` of Linux's rto_min-floored rttvar, which would make delta >= 100 ms and
//! the comparison moot on Wi-Fi RTTs; the paper's definition is followed.
//!
//! ECF uses the default mptcp_next_segment, so it also runs minRTT's penalization and
//! opportunistic retransmission (contract in minrtt.rs).

use super::minrtt::{by_id, fastest_established, get_available_subflow, next_segment, RbufOpt};
use super::{ConnView, SchedAction, Scheduler, SubflowView};
use crate::time::Time;

/// mptcp_ecf.c `mptcp_ecf_r_beta` = 4: beta = 1 / 4 (paper: beta = 0.25).
const R_BETA: u128 = 4;

#[derive(Debug, Default)]
pub struct Ecf {
    rbuf: RbufOpt,
    /// ecfsched_cb::switching_margin, the paper's "waiting" flag.
    waiting: bool,
}

impl Ecf {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn waiting(&self) -> bool {
        self.waiting
    }
}

/// ecf_get_available_subflow. Products are ns x bytes, in u128 (the source uses u64 in us).
fn pick(waiting: &mut bool, conn: &ConnView, sfs: &[SubflowView]) -> Option<usize> {
    let best = get_available_subflow(sfs)?;
    let Some(fast_id) = fastest_established(sfs) else {
        return Some(best);
    };
    if fast_id == best {
        return Some(best);
    }
    let (Some(s), Some(f)) = (by_id(sfs, best), by_id(sfs, fast_id)) else {
        return Some(best);
    };
    let mss = u128::from(s.mss); // "assuming equal MSS"
    let queued = u128::from(conn.unassigned_bytes);
    let (rtt_f, rtt_s) = (u128::from(f.srtt_ns), u128::from(s.srtt_ns));
    let delta = u128::from(f.rttvar_ns.max(s.rttvar_ns));
    let win_f = u128::from(f.cwnd) * mss;
    let win_s = u128::from(s.cwnd) * mss;
    // "at least one time tx over fastest subflow is required"
    let x_f = queued.max(win_f);
    let lhs = rtt_f * (x_f + win_f);
    let rhs = win_f * (rtt_s + delta);
    let w = u128::from(*waiting);
    if R_BETA * lhs < R_BETA * rhs + w * rhs {
        let x_s = queued.max(win_s);
        if rtt_s * x_s >= win_s * (2 * rtt_f + delta) {
            // s is too slow compared with waiting for f.
            *waiting = true;
            return None;
        }
    } else {
        *waiting = false;
    }
    Some(best)
}

impl Scheduler for Ecf {
    /// v0.9x's default mptcp_next_segment hands out meta skbs (sched/mod.rs `next_segment_bytes`).
    fn hands_out_skbs(&self) -> bool {
        true
    }

    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "ecf"
    }

    fn select(&mut self, now: Time, conn: &ConnView, sfs: &[SubflowView], act: &mut Vec<SchedAction>) -> Option<usize> {
        let waiting = &mut self.waiting;
        next_segment(&mut self.rbuf, now, conn, sfs, act, |sfs| pick(waiting, conn, sfs)).0
    }

    fn metric(&self) -> f64 {
        f64::from(u8::from(self.waiting))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;
    const WIN: u64 = 10 * MSS as u64;

    /// Fast subflow (cwnd 10, all in flight: unavailable) and an idle slow one, RTTs in ms.
    fn views(rtt_f_ms: u64, rtt_s_ms: u64, rttvar_ms: u64) -> [SubflowView; 2] {
        let base = SubflowView { established: true, cwnd: 10, ssthresh: 20, mss: MSS, ..Default::default() };
        [
            SubflowView {
                id: 0,
                srtt_ns: rtt_f_ms * 1_000_000,
                rttvar_ns: rttvar_ms * 1_000_000,
                in_flight: 10,
                ..base
            },
            SubflowView { id: 1, srtt_ns: rtt_s_ms * 1_000_000, ..base },
        ]
    }

    fn queued(bytes: u64) -> ConnView {
        ConnView {
            unassigned_bytes: bytes,
            send_window_free_bytes: 1 << 30,
            sndbuf_free_bytes: 1 << 30,
            ..Default::default()
        }
    }

    fn select(e: &mut Ecf, sfs: &[SubflowView], c: &ConnView) -> Option<usize> {
        e.select(Time::ZERO, c, sfs, &mut Vec::new())
    }

    #[test]
    fn fast_subflow_available_is_used() {
        let [f, s] = views(2, 20, 0);
        let mut e = Ecf::new();
        assert_eq!(select(&mut e, &[SubflowView { in_flight: 0, ..f }, s], &queued(WIN)), Some(0));
        assert!(!e.waiting());
    }

    #[test]
    fn little_data_and_a_much_slower_path_waits_for_the_fast_one() {
        // 2 ms x 2 windows < 1 window x 20 ms, and 20 ms x 1 window >= 1 window x 4 ms.
        let mut e = Ecf::new();
        assert_eq!(select(&mut e, &views(2, 20, 0), &queued(WIN)), None);
        assert!(e.waiting());
        assert_eq!(e.metric(), 1.0);
    }

    #[test]
    fn lots_of_queued_data_uses_the_slow_path_too_and_clears_the_flag() {
        let mut e = Ecf { waiting: true, ..Ecf::new() };
        // 10 MB queued: draining on f alone takes longer than s's RTT.
        assert_eq!(select(&mut e, &views(2, 20, 0), &queued(10 << 20)), Some(1));
        assert!(!e.waiting());
    }

    #[test]
    fn slow_path_not_slow_enough_sends_without_touching_the_flag() {
        // First test true (2 x 2 = 4 < 4 + 1), second false (4 < 2 x 2 + 1): send on s.
        for w in [false, true] {
            let mut e = Ecf { waiting: w, ..Ecf::new() };
            assert_eq!(select(&mut e, &views(2, 4, 1), &queued(WIN)), Some(1));
            assert_eq!(e.waiting(), w);
        }
    }

    #[test]
    fn delta_is_the_larger_rttvar() {
        // Same fast subflow, w = 1; only the slow subflow's rttvar differs, so delta must take
        // the larger of the two to change the outcome.
        let [f, s] = views(2, 4, 0);
        let mut e = Ecf { waiting: true, ..Ecf::new() };
        // w = 1: 4 x 4 = 16 < 4 x 4 + 4 = 20, second test 4 >= 4: wait.
        assert_eq!(select(&mut e, &[f, s], &queued(WIN)), None);
        // rttvar 1 ms on s: second test 4 >= 2 x 2 + 1 fails: send on s.
        let s_var = SubflowView { rttvar_ns: 1_000_000, ..s };
        let mut e = Ecf { waiting: true, ..Ecf::new() };
        assert_eq!(select(&mut e, &[f, s_var], &queued(WIN)), Some(1));
    }

    #[test]
    fn waiting_flag_hysteresis() {
        // Queue of 150 kB with f 2 ms, s 20 ms: rtt_f (x_f + W) = 2 x 164.48 kB is between
        // W x 20 ms and 1.25 x that. Without the flag: send on s; with it: keep waiting.
        let sfs = views(2, 20, 0);
        let mut fresh = Ecf::new();
        assert_eq!(select(&mut fresh, &sfs, &queued(150_000)), Some(1));
        assert!(!fresh.waiting());
        let mut e = Ecf::new();
        assert_eq!(select(&mut e, &sfs, &queued(WIN)), None, "small queue: starts waiting");
        assert_eq!(select(&mut e, &sfs, &queued(150_000)), None, "flag widens the margin by beta");
        // Beyond the widened margin (2 x (x_f + W) >= 1.25 x 20 W, x_f > 167 kB): send, w = 0.
        assert_eq!(select(&mut e, &sfs, &queued(200_000)), Some(1));
        assert_eq!(select(&mut e, &sfs, &queued(150_000)), Some(1), "flag cleared");
    }

    #[test]
    fn runs_the_receive_buffer_optimization_when_window_limited() {
        let [f, s] = views(1, 20, 0);
        let idle_fast = SubflowView { in_flight: 0, ..f };
        let c =
            ConnView { send_window_free_bytes: 10, data_in_flight_bytes: 1 << 20, hol_subflow: Some(1), ..queued(WIN) };
        let mut e = Ecf::new();
        e.rbuf.observe(Time::ZERO, &[idle_fast, s]);
        let mut act = Vec::new();
        assert_eq!(e.select(Time::from_secs(1), &c, &[idle_fast, s], &mut act), None);
        assert_eq!(act, vec![SchedAction::Penalize(1), SchedAction::ReinjectHeadOfLine(0)]);
    }
}
