//! BLEST, BLocking ESTimation (Ferlin, Alay, Mehani, Boreli, "BLEST: Blocking
//! Estimation-based MPTCP Scheduler for Heterogeneous Networks", IFIP Networking 2016), as in
//! the v0.9x module net/mptcp/mptcp_blest.c (`blest_get_available_subflow`).
//!
//! Rule: take minRTT's choice. If that is not the fastest subflow f (f's cwnd is full), it is
//! a slower subflow s, and the meta skb sent on s now (`skb->len` in the source: the head of
//! the meta write queue, a whole meta skb here, sched/mod.rs `meta_skb_bytes`) occupies the
//! data-level window until s ACKs it. Estimate the bytes f could send meanwhile (X, over s's
//! estimated linger time, scaled by lambda); if X exceeds the window space left once s's
//! in-flight bytes and that skb are counted, wait for f (None) instead of blocking it.
//!
//! lambda starts at 1.2 and stays in [1.0, 1.3]; at most once per (minimum) RTT of s it goes
//! +0.04 if a penalization / opportunistic retransmission happened since the last update (the
//! source's `retrans_flag`, set in its copy of mptcp_rcv_buf_optimization) and -0.01 otherwise.
//! `on_rto` is deliberately not used: the source counts only those receive-buffer events, the
//! head-of-line blocking BLEST adapts to, not path losses.
//!
//! The window: the source compares with the whole data-level send window `meta_tp->snd_wnd`
//! (from the data snd_una), i.e. `send_window_free_bytes + data_in_flight_bytes` here, minus
//! s's in-flight bytes and the skb. docs/facts.md says "free send window"; subtracting s's
//! in-flight bytes from the already-reduced free window would count them twice, so the
//! source's reading is used.
//!
//! Like minRTT it also runs penalization and opportunistic retransmission (same contract as
//! minrtt.rs: `Penalize` / `ReinjectHeadOfLine`, `ConnView::hol_subflow`).

use super::minrtt::{by_id, ensure_len, fastest_established, get_available_subflow, next_segment, RbufOpt};
use super::{meta_mss, meta_skb_bytes, ConnView, SchedAction, Scheduler, SubflowView};
use crate::tcp::cc::INFINITE_SSTHRESH;
use crate::time::Time;

/// mptcp_blest.c module parameters, lambda x 1000 (the source keeps `lambda_1000`):
/// start 12/10, range [10/10, 13/10]; `dyn_lambda_bad` 40 (+4 %), `dyn_lambda_good` 10 (-1 %).
const LAMBDA_INIT: u64 = 1200;
const LAMBDA_MIN: u64 = 1000;
const LAMBDA_MAX: u64 = 1300;
const LAMBDA_BAD_STEP: u64 = 40;
const LAMBDA_GOOD_STEP: u64 = 10;
/// blestsched_estimate_bytes caps the slow-start doubling at 16 RTTs "for sanity".
const MAX_SS_RTTS: u32 = 16;

#[derive(Debug)]
struct State {
    lambda_milli: u64,
    last_lambda_update: Option<Time>,
    retrans_flag: bool,
    /// blestsched_priv min_srtt_us / max_srtt_us per subflow, ns: every srtt seen.
    rtt_range: Vec<(u64, u64)>,
}

/// The BLEST scheduler.
#[derive(Debug)]
pub struct Blest {
    rbuf: RbufOpt,
    st: State,
}

impl Default for Blest {
    fn default() -> Self {
        Self::new()
    }
}

impl Blest {
    pub fn new() -> Self {
        Blest {
            rbuf: RbufOpt::default(),
            st: State {
                lambda_milli: LAMBDA_INIT,
                last_lambda_update: None,
                retrans_flag: false,
                rtt_range: Vec::new(),
            },
        }
    }

    /// Current lambda (scaling of the fast subflow's estimated bytes).
    pub fn lambda(&self) -> f64 {
        self.st.lambda_milli as f64 / 1000.0
    }
}

impl State {
    /// (min, max) srtt seen on `sf`; its current srtt if none recorded yet.
    fn range(&self, sf: &SubflowView) -> (u64, u64) {
        match self.rtt_range.get(sf.id) {
            Some(&(lo, hi)) if lo <= hi => (lo, hi),
            _ => (sf.srtt_ns, sf.srtt_ns),
        }
    }

    /// blestsched_update_lambda: once per minimum RTT of the slow subflow.
    fn update_lambda(&mut self, now: Time, slow: &SubflowView) {
        let (slow_min_rtt, _) = self.range(slow);
        let last = *self.last_lambda_update.get_or_insert(now);
        if now.0.saturating_sub(last.0) < slow_min_rtt {
            return;
        }
        self.lambda_milli = if self.retrans_flag {
            self.lambda_milli + LAMBDA_BAD_STEP
        } else {
            self.lambda_milli.saturating_sub(LAMBDA_GOOD_STEP)
        }
        .clamp(LAMBDA_MIN, LAMBDA_MAX);
        self.retrans_flag = false;
        self.last_lambda_update = Some(now);
    }

    /// blestsched_estimate_linger_time: when would a segment sent on `slow` now be ACKed?
    /// Interpolates between its min and max srtt by how full its cwnd is (counting the new
    /// segment), and never less than its current srtt.
    fn slow_linger_ns(&self, slow: &SubflowView) -> u64 {
        let (lo, hi) = self.range(slow);
        let inflight = slow.in_flight as u64 + 1;
        let cwnd = (slow.cwnd as u64).max(1);
        let estimate = if inflight >= cwnd { hi } else { lo + (hi - lo) * inflight / cwnd };
        estimate.max(slow.srtt_ns)
    }

    /// blestsched_estimate_bytes: bytes `fast` sends during `time_ns`, assuming Reno growth
    /// (cwnd doubling per RTT in initial slow start, +1 per RTT after), times lambda.
    fn fast_bytes(&self, fast: &SubflowView, time_ns: u64) -> u64 {
        let (lo, hi) = self.range(fast);
        let avg_rtt = (lo + hi) / 2;
        // "round up"; 1 RTT when the average is 0 ("sanity").
        let mut rtts = time_ns.checked_div(avg_rtt).map_or(1, |n| n + 1);
        let cwnd = fast.cwnd as u64;
        let packets = if fast.ssthresh >= INFINITE_SSTHRESH {
            rtts = rtts.min(MAX_SS_RTTS as u64);
            cwnd * ((1u64 << rtts) - 1) // cwnd + 2 cwnd + 4 cwnd + ...
        } else {
            // "assume we jump to CA already"; the source's integer (n - 1) / 2 kept as is.
            let ca_cwnd = cwnd.max(fast.ssthresh as u64 + 1);
            (ca_cwnd + (rtts - 1) / 2).saturating_mul(rtts)
        };
        packets.saturating_mul(fast.mss as u64).saturating_mul(self.lambda_milli) / 1000
    }

    /// blest_get_available_subflow.
    fn pick(&mut self, now: Time, conn: &ConnView, sfs: &[SubflowView]) -> Option<usize> {
        let best = get_available_subflow(sfs)?;
        let Some(fast_id) = fastest_established(sfs) else {
            return Some(best);
        };
        if fast_id == best {
            return Some(best);
        }
        let (Some(slow), Some(fast)) = (by_id(sfs, best), by_id(sfs, fast_id)) else {
            return Some(best);
        };
        self.update_lambda(now, slow);
        let fast_bytes = self.fast_bytes(fast, self.slow_linger_ns(slow));
        // write_seq - snd_una of the slow subflow, plus the meta skb it would be handed
        // (skb->len: a whole meta skb, sched/mod.rs `meta_skb_bytes`, or what is left to send).
        let seg = meta_skb_bytes(meta_mss(sfs).unwrap_or(slow.mss)).min(conn.unassigned_bytes.max(1));
        let slow_bytes = slow.queued_bytes + slow.unacked_bytes + seg;
        let snd_wnd = conn.send_window_free_bytes + conn.data_in_flight_bytes;
        let avail = snd_wnd.saturating_sub(slow_bytes);
        if fast_bytes > avail {
            return None; // sending on s would block f: wait for f
        }
        Some(best)
    }
}

impl Scheduler for Blest {
    /// v0.9x's default mptcp_next_segment hands out meta skbs (sched/mod.rs `next_segment_bytes`).
    fn hands_out_skbs(&self) -> bool {
        true
    }

    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "blest"
    }

    fn select(&mut self, now: Time, conn: &ConnView, sfs: &[SubflowView], act: &mut Vec<SchedAction>) -> Option<usize> {
        // blestsched_init stamps last_lambda_update when the first subflow is set up.
        self.st.last_lambda_update.get_or_insert(now);
        // The first loop of blest_get_available_subflow: record every established subflow's
        // srtt range (unmeasured ones skipped, see fastest_established).
        ensure_len(&mut self.st.rtt_range, sfs, (u64::MAX, 0));
        for sf in sfs.iter().filter(|sf| sf.established && sf.srtt_ns > 0) {
            let r = &mut self.st.rtt_range[sf.id];
            *r = (r.0.min(sf.srtt_ns), r.1.max(sf.srtt_ns));
        }
        let st = &mut self.st;
        let (r, flag) = next_segment(&mut self.rbuf, now, conn, sfs, act, |sfs| st.pick(now, conn, sfs));
        if flag {
            self.st.retrans_flag = true;
        }
        r
    }

    fn metric(&self) -> f64 {
        self.lambda()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// Fast subflow: 2 ms, cwnd 10 all in flight (unavailable), congestion avoidance
    /// (ssthresh 20). Slow subflow: 20 ms, idle, cwnd 10.
    fn views() -> [SubflowView; 2] {
        let base = SubflowView { established: true, cwnd: 10, ssthresh: 20, mss: MSS, ..Default::default() };
        [
            SubflowView { id: 0, srtt_ns: 2_000_000, in_flight: 10, unacked_bytes: 10 * MSS as u64, ..base },
            SubflowView { id: 1, srtt_ns: 20_000_000, ..base },
        ]
    }

    fn conn(free: u64, in_flight: u64) -> ConnView {
        ConnView {
            unassigned_bytes: 1 << 20,
            send_window_free_bytes: free,
            data_in_flight_bytes: in_flight,
            sndbuf_free_bytes: 1 << 20,
            ..Default::default()
        }
    }

    fn pick(sfs: &[SubflowView], c: &ConnView) -> Option<usize> {
        Blest::new().select(Time::ZERO, c, sfs, &mut Vec::new())
    }

    /// X for `views()`: slow linger 20 ms (idle: min srtt), fast avg RTT 2 ms, so 11 RTTs;
    /// congestion avoidance from max(10, 20 + 1) = 21: (21 + 5) x 11 = 286 packets, x 1.2.
    const FAST_BYTES: u64 = 286 * 1448 * 12 / 10;

    #[test]
    fn estimate_matches_the_reno_model() {
        let b = Blest::new();
        let [fast, slow] = views();
        assert_eq!(b.st.slow_linger_ns(&slow), 20_000_000);
        assert_eq!(b.st.fast_bytes(&fast, 20_000_000), FAST_BYTES);
        // Initial slow start: cwnd x (2^n - 1), n capped at 16.
        let ss = SubflowView { ssthresh: INFINITE_SSTHRESH, ..fast };
        assert_eq!(b.st.fast_bytes(&ss, 5_000_000), 10 * 7 * 1448 * 12 / 10); // n = 3
        assert_eq!(b.st.fast_bytes(&ss, 1_000_000_000), 10 * 65_535 * 1448 * 12 / 10);
        // A fuller slow cwnd lengthens its linger time toward its max srtt.
        let mut b = Blest::new();
        b.st.rtt_range = vec![(2_000_000, 2_000_000), (20_000_000, 40_000_000)];
        assert_eq!(b.st.slow_linger_ns(&SubflowView { in_flight: 4, ..slow }), 30_000_000);
        assert_eq!(b.st.slow_linger_ns(&SubflowView { in_flight: 9, ..slow }), 40_000_000);
    }

    #[test]
    fn fast_subflow_available_is_used_without_a_check() {
        let [fast, slow] = views();
        let idle_fast = SubflowView { in_flight: 0, unacked_bytes: 0, ..fast };
        assert_eq!(pick(&[idle_fast, slow], &conn(10_000, 0)), Some(0));
    }

    #[test]
    fn waits_for_the_fast_subflow_when_it_would_fill_the_window_first() {
        let sfs = views();
        // Window 300 kB < X + the meta skb: sending on the slow path would block the fast one.
        assert_eq!(pick(&sfs, &conn(100_000, 200_000)), None);
        let edge = FAST_BYTES + meta_skb_bytes(MSS);
        assert_eq!(pick(&sfs, &conn(edge - 1, 0)), None);
        // Window big enough: send on the slow subflow.
        assert_eq!(pick(&sfs, &conn(edge, 0)), Some(1));
        assert_eq!(pick(&sfs, &conn(1 << 20, 0)), Some(1));
    }

    #[test]
    fn slow_subflow_in_flight_bytes_take_window_space() {
        let [fast, slow] = views();
        let c = conn(600_000, 0);
        assert_eq!(pick(&[fast, slow], &c), Some(1));
        let loaded = SubflowView { unacked_bytes: 150_000, ..slow };
        assert_eq!(pick(&[fast, loaded], &c), None);
    }

    #[test]
    fn lambda_decreases_by_one_percent_per_quiet_rtt_down_to_1_0() {
        let mut b = Blest::new();
        let sfs = views();
        let c = conn(1 << 22, 0);
        assert_eq!(b.metric(), 1.2);
        for k in 0..=1 {
            b.select(Time::from_ms(20 * k), &c, &sfs, &mut Vec::new());
        }
        assert!((b.lambda() - 1.19).abs() < 1e-9, "{}", b.lambda());
        // Less than one slow RTT later: no update.
        b.select(Time::from_ms(39), &c, &sfs, &mut Vec::new());
        assert!((b.lambda() - 1.19).abs() < 1e-9);
        for k in 2..40 {
            b.select(Time::from_ms(20 * k), &c, &sfs, &mut Vec::new());
        }
        assert_eq!(b.lambda(), 1.0);
    }

    #[test]
    fn lambda_increases_by_four_percent_after_a_penalization_up_to_1_3() {
        let mut b = Blest::new();
        let sfs = views();
        // Window-limited (100 bytes free) with a large window in flight, head of line on the
        // slow subflow: the pick passes BLEST's check, the window test fails and the
        // receive-buffer optimization runs (retrans_flag).
        let c = ConnView { hol_subflow: Some(1), ..conn(100, 4 << 20) };
        let mut act = Vec::new();
        assert_eq!(b.select(Time::ZERO, &c, &sfs, &mut act), None);
        b.select(Time::from_ms(20), &c, &sfs, &mut act);
        assert!((b.lambda() - 1.24).abs() < 1e-9, "{}", b.lambda());
        b.select(Time::from_ms(40), &c, &sfs, &mut act);
        assert!((b.lambda() - 1.28).abs() < 1e-9);
        b.select(Time::from_ms(60), &c, &sfs, &mut act);
        assert_eq!(b.lambda(), 1.3);
        // A larger lambda makes BLEST wait where 1.2 would have sent on the slow path.
        let edge = ConnView { hol_subflow: Some(1), ..conn(FAST_BYTES + meta_skb_bytes(MSS), 0) };
        assert_eq!(pick(&sfs, &edge), Some(1));
        assert_eq!(b.select(Time::from_ms(61), &edge, &sfs, &mut act), None);
    }
}
