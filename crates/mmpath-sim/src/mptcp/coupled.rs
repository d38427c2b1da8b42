//! Coupled congestion controls of MPTCP: LIA (RFC 6356), OLIA (Khalili et al.) and BALIA
//! (Peng et al.), as the out-of-tree Linux MPTCP v0.9x implements them
//! (multipath-tcp/mptcp net/mptcp/mptcp_coupled.c, mptcp_olia.c, mptcp_balia.c). Read for their
//! rules; the code here is ours.
//!
//! Integration: what the coupled rules need about *all* subflows (cwnd, ssthresh, CA state,
//! smoothed RTT, OLIA's loss positions) is one object per connection, `Coupling`, which the
//! connection owns. Every subflow's TCP sender owns one `Box<dyn CongestionControl>` from
//! `build(kind, n_subflows)`, a `Coupled` controller that holds the coupling only while the
//! connection lends it (`lend`) for a call into that subflow's sender: the subflows run one at
//! a time, so the object is never shared and needs no lock. Each controller refreshes its own
//! entry from the `Window` and `AckInfo` it is given on every callback, so the others see it
//! at their next ACK.
//!
//! Common rules (all three sources):
//! - A subflow counts ("can send", `cnt_established`) once it has an RTT sample
//!   (`mptcp_*_sk_can_send`: sk can send && srtt != 0).
//! - Slow start is per-subflow Reno (`tcp_slow_start`); the coupled rule applies in congestion
//!   avoidance only; with one counted subflow each falls back to Reno.
//! - Loss: LIA and OLIA halve (`.ssthresh = tcp_reno_ssthresh`: max(cwnd / 2, 2)); BALIA
//!   subtracts md = (cwnd / 2) x min(alpha, 1.5) (mptcp_balia_ssthresh).
//!
//! Deviations from the v0.9x sources, and why:
//! - The sources count one ACK per `cong_avoid` call (`snd_cwnd_cnt++`), whatever the ACK
//!   covers. We count ACKed packets (`acked`), the RFC 6356 form docs/facts.md gives ("alpha x acked x
//!   mss / cwnd_total") and what this simulator's Reno does (tcp_cong_avoid_ai with ABC), so a
//!   one-subflow connection grows exactly like Reno under delayed ACKs too.
//! - Slow start hands its left-over ACKs to congestion avoidance, as reno.rs does (the sources
//!   drop them), again so one subflow is exactly Reno.
//! - The per-subflow values (LIA's alpha, BALIA's ai / md, OLIA's epsilon) are recomputed from
//!   the current shared state on every call instead of being cached between increments.
//! - OLIA's fractional counter is kept as f64 (the source truncates each step to 1/1024,
//!   which makes it grow slower than its own formula, e.g. 11 ACKs instead of 10 at cwnd 10).

use crate::tcp::cc::{AckInfo, CaState, CongestionControl, Window};
use crate::time::Time;

/// Which coupled congestion control a flow names: the scenario's enum (scenario/mptcp.rs),
/// which serde reads.
pub use crate::scenario::CoupledName;

/// What the coupled rules know about one subflow.
#[derive(Debug, Clone, Copy)]
struct Sub {
    cwnd: u32,
    ssthresh: u32,
    state: CaState,
    /// Smoothed RTT, ns (RFC 6298: 7/8 old + 1/8 sample; first sample sets it); 0 = none yet.
    srtt_ns: u64,
    /// OLIA: snd_una at the last three loss marks (mptcp_olia.c mptcp_loss1..3); `loss3`
    /// follows snd_una on every ACK outside recovery.
    loss1: u64,
    loss2: u64,
    loss3: u64,
    loss_init: bool,
}

impl Sub {
    fn new() -> Self {
        Sub { cwnd: 0, ssthresh: 0, state: CaState::Open, srtt_ns: 0, loss1: 0, loss2: 0, loss3: 0, loss_init: false }
    }

    fn counted(&self) -> bool {
        self.srtt_ns > 0
    }

    /// OLIA mptcp_get_crt_cwnd: during fast recovery cwnd is inflated, use ssthresh.
    fn crt_cwnd(&self) -> u32 {
        if self.state == CaState::Recovery {
            self.ssthresh
        } else {
            self.cwnd
        }
    }

    /// OLIA inter-loss distance: max(loss3 - loss2, loss2 - loss1), bytes.
    fn olia_interval(&self) -> u64 {
        (self.loss3.saturating_sub(self.loss2)).max(self.loss2.saturating_sub(self.loss1))
    }
}

/// One connection's coupled increase: what the coupled rules know about each of its subflows.
/// The connection owns it and lends it to one subflow's controller at a time (`lend`).
#[derive(Debug)]
pub struct Coupling {
    subs: Vec<Sub>,
}

/// One subflow's coupled congestion control: its own counter, and the connection's coupling
/// while lent.
pub struct Coupled {
    kind: CoupledName,
    idx: usize,
    lent: Option<Box<Coupling>>,
    /// OLIA's mptcp_snd_cwnd_cnt, in packets (source: units of 1/1024).
    olia_cnt: f64,
}

/// One controller per subflow (subflow i's sender gets element i) and the connection's
/// coupling they borrow in turn. `kind` is a coupled one (an uncoupled connection's subflows
/// each build the flow's own `cc`).
pub fn build(kind: CoupledName, n_subflows: usize) -> (Vec<Box<dyn CongestionControl>>, Box<Coupling>) {
    assert!(kind != CoupledName::Uncoupled, "uncoupled subflows build their own controllers");
    let ccs = (0..n_subflows)
        .map(|idx| Box::new(Coupled { kind, idx, lent: None, olia_cnt: 0.0 }) as Box<dyn CongestionControl>)
        .collect();
    (ccs, Box::new(Coupling { subs: vec![Sub::new(); n_subflows] }))
}

/// Lends the coupling in `slot` to subflow controller `cc` (built by `build`), or, called again,
/// takes it back: the two swap.
pub fn lend(cc: &mut dyn CongestionControl, slot: &mut Option<Box<Coupling>>) {
    let c = cc.as_any_mut().and_then(|a| a.downcast_mut::<Coupled>()).expect("a coupled subflow's controller");
    std::mem::swap(&mut c.lent, slot);
}

/// LIA's alpha as RFC 6356 defines it: cwnd_total x max_i(cwnd_i / rtt_i^2) /
/// (sum_i cwnd_i / rtt_i)^2, over (cwnd, rtt) pairs (any one time unit).
pub fn lia_alpha(paths: &[(u32, f64)]) -> f64 {
    let total: f64 = paths.iter().map(|p| p.0 as f64).sum();
    let max = paths.iter().map(|&(w, r)| w as f64 / (r * r)).fold(0.0, f64::max);
    let sum: f64 = paths.iter().map(|&(w, r)| w as f64 / r).sum();
    total * max / (sum * sum)
}

/// The coupling a controller holds while its connection lends it.
fn lent(slot: &mut Option<Box<Coupling>>) -> &mut Coupling {
    slot.as_deref_mut().expect("the connection lends its coupling for every call into a coupled subflow")
}

impl Coupled {
    fn sync(sh: &mut Coupling, idx: usize, w: &Window) {
        let s = &mut sh.subs[idx];
        s.cwnd = w.cwnd;
        s.ssthresh = w.ssthresh;
    }

    /// LIA (mptcp_coupled.c mptcp_ccc_cong_avoid): +1 per max(cwnd_total / alpha, cwnd_i)
    /// ACKed packets, i.e. min(alpha / cwnd_total, 1 / cwnd_i) per packet (RFC 6356 section 3),
    /// never faster than uncoupled Reno on the same subflow. The source computes
    /// cwnd_total / alpha as 2^12 / alpha_scaled = (sum cwnd_i / rtt_i)^2 / max(cwnd_i / rtt_i^2).
    fn lia_acks_per_increment(sh: &Coupling, cwnd: u32) -> u32 {
        let counted = sh.subs.iter().filter(|s| s.counted());
        if counted.clone().count() <= 1 {
            return cwnd;
        }
        let mut max_num = 0f64;
        let mut sum = 0f64;
        for s in counted {
            let rtt = s.srtt_ns as f64;
            max_num = max_num.max(s.cwnd as f64 / (rtt * rtt));
            sum += s.cwnd as f64 / rtt;
        }
        if max_num <= 0.0 {
            return cwnd;
        }
        let total_over_alpha = ((sum * sum) / max_num).floor();
        (total_over_alpha as u32).max(cwnd).max(1)
    }

    /// OLIA's epsilon for subflow `idx` (mptcp_olia.c mptcp_get_epsilon): B = paths with the
    /// largest inter-loss distance / rtt^2, M = paths with the largest cwnd. If B \ M is empty
    /// every epsilon is 0; otherwise paths in B \ M get 1 / (n |B \ M|), paths in M get
    /// -1 / (n |M|), the rest 0 (n = counted subflows).
    fn olia_epsilon(sh: &Coupling, idx: usize) -> f64 {
        let counted = || sh.subs.iter().filter(|s| s.counted());
        let n = counted().count();
        let max_cwnd = counted().map(|s| s.crt_cwnd()).max().unwrap_or(0);
        // Best path: largest interval / rtt^2, ties to the later one (source uses >=).
        let (mut best_int, mut best_rtt2) = (0u128, 1u128);
        for s in counted() {
            let rtt2 = s.srtt_ns as u128 * s.srtt_ns as u128;
            let int = s.olia_interval() as u128;
            if int * best_rtt2 >= best_int * rtt2 {
                best_int = int;
                best_rtt2 = rtt2;
            }
        }
        let in_best = |s: &Sub| {
            let rtt2 = s.srtt_ns as u128 * s.srtt_ns as u128;
            s.olia_interval() as u128 * best_rtt2 == best_int * rtt2
        };
        let m = counted().filter(|s| s.crt_cwnd() == max_cwnd).count();
        let b_not_m = counted().filter(|s| s.crt_cwnd() != max_cwnd && in_best(s)).count();
        let me = &sh.subs[idx];
        if b_not_m == 0 || !me.counted() {
            0.0
        } else if me.crt_cwnd() < max_cwnd && in_best(me) {
            1.0 / (n * b_not_m) as f64
        } else if me.crt_cwnd() == max_cwnd {
            -1.0 / (n * m) as f64
        } else {
            0.0
        }
    }

    /// OLIA's per-ACK increase for subflow `idx` (mptcp_olia.c mptcp_olia_cong_avoid):
    /// (w_i / rtt_i^2) / (sum_p w_p / rtt_p)^2 + epsilon_i / w_i, with w_p the "current" cwnd
    /// (ssthresh during fast recovery) and w_i the subflow's cwnd.
    fn olia_increase(sh: &Coupling, idx: usize, cwnd: u32) -> f64 {
        let me = &sh.subs[idx];
        if !me.counted() || cwnd == 0 {
            return 1.0 / cwnd.max(1) as f64;
        }
        let rtt_i = me.srtt_ns as f64;
        // x = rtt_i x sum_p w_p / rtt_p (the source's mptcp_get_rate before squaring).
        let x: f64 =
            sh.subs.iter().filter(|s| s.counted()).map(|s| s.crt_cwnd() as f64 * rtt_i / s.srtt_ns as f64).sum();
        if x <= 0.0 {
            return 1.0 / cwnd as f64;
        }
        cwnd as f64 / (x * x) + Self::olia_epsilon(sh, idx) / cwnd as f64
    }

    /// BALIA (mptcp_balia.c mptcp_balia_recalc_ai): with x_p = w_p / rtt_p,
    /// +1 per ai = (sum x)^2 x 10 x w_i / ((x_i + x_max)(4 x_i + x_max)) ACKed packets, i.e.
    /// x_i / (rtt_i (sum x)^2) x (1 + a_i) / 2 x (4 + a_i) / 5 per packet, a_i = x_max / x_i.
    fn balia_acks_per_increment(sh: &Coupling, idx: usize, cwnd: u32) -> u32 {
        let me = &sh.subs[idx];
        let counted = sh.subs.iter().filter(|s| s.counted());
        if counted.clone().count() <= 1 || !me.counted() {
            return cwnd;
        }
        let (mut max, mut sum) = (0u128, 0u128);
        for s in counted {
            let x = balia_rate(s);
            max = max.max(x);
            sum += x;
        }
        let x_i = balia_rate(me);
        let den = (x_i + max) * (4 * x_i + max);
        if den == 0 {
            return cwnd;
        }
        let ai = (sum * sum * 10 * cwnd as u128 / den).min(u32::MAX as u128) as u32;
        // Source: `if (!ai) ai = tp->snd_cwnd`.
        if ai == 0 {
            cwnd.max(1)
        } else {
            ai
        }
    }

    /// BALIA's decrease md = (cwnd >> 1) x min(alpha, 1.5) with alpha = x_max / x_i truncated
    /// to an integer as the source's div64_u64 does, 1.5 = (3 << 10) >> 1 in its fixed point.
    fn balia_md(sh: &Coupling, idx: usize, cwnd: u32) -> u32 {
        let me = &sh.subs[idx];
        let max = sh.subs.iter().filter(|s| s.counted()).map(balia_rate).max().unwrap_or(0);
        let x_i = balia_rate(me);
        if x_i == 0 {
            return 0;
        }
        let alpha = (max / x_i) as u64;
        let factor = (alpha << 10).min((3u64 << 10) >> 1);
        (((cwnd >> 1) as u64 * factor) >> 10) as u32
    }
}

/// BALIA's x_p = cwnd_p / rtt_p in integer fixed point (packets per 10^-12 ns; the source uses
/// mss x cwnd x 8e6 / srtt_us, the mss and scale cancel in every ratio it forms).
fn balia_rate(s: &Sub) -> u128 {
    if s.srtt_ns == 0 {
        return 0;
    }
    s.cwnd as u128 * 1_000_000_000_000 / s.srtt_ns as u128
}

impl CongestionControl for Coupled {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &AckInfo) {
        let sh = lent(&mut self.lent);
        Self::sync(sh, self.idx, w);
        if self.kind == CoupledName::Olia {
            let s = &mut sh.subs[self.idx];
            if !s.loss_init {
                (s.loss1, s.loss2, s.loss_init) = (ack.snd_una, ack.snd_una, true);
            }
            s.loss3 = ack.snd_una;
        }
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            Self::sync(sh, self.idx, w);
            if acked == 0 {
                return;
            }
        }
        match self.kind {
            CoupledName::Uncoupled => unreachable!("`build` makes coupled controllers only"),
            CoupledName::Lia => {
                let n = Self::lia_acks_per_increment(sh, w.cwnd);
                w.cong_avoid_ai(n, acked);
            }
            CoupledName::Balia => {
                let n = Self::balia_acks_per_increment(sh, self.idx, w.cwnd);
                w.cong_avoid_ai(n, acked);
            }
            CoupledName::Olia => {
                let inc = Self::olia_increase(sh, self.idx, w.cwnd);
                self.olia_cnt += inc * acked as f64;
                // Source thresholds: +-((1 << 10) - 1) in units of 1/1024. The source resets the
                // counter to 0 (its step is at most one ACK's worth); counting ACKed packets, we
                // carry the remainder as Reno's cwnd_cnt does.
                const STEP: f64 = 1023.0 / 1024.0;
                if self.olia_cnt >= STEP {
                    w.cwnd += 1;
                    self.olia_cnt = (self.olia_cnt - 1.0).max(0.0);
                } else if self.olia_cnt <= -STEP {
                    w.cwnd = w.cwnd.saturating_sub(1).max(1);
                    self.olia_cnt = (self.olia_cnt + 1.0).min(0.0);
                }
            }
        }
        Self::sync(sh, self.idx, w);
    }

    fn ssthresh(&mut self, w: &Window) -> u32 {
        let sh = lent(&mut self.lent);
        Self::sync(sh, self.idx, w);
        let reno = (w.cwnd >> 1).max(2);
        match self.kind {
            CoupledName::Uncoupled => unreachable!("`build` makes coupled controllers only"),
            CoupledName::Lia | CoupledName::Olia => reno,
            CoupledName::Balia => {
                let counted = sh.subs.iter().filter(|s| s.counted()).count();
                if counted <= 1 {
                    reno
                } else {
                    let md = Self::balia_md(sh, self.idx, w.cwnd);
                    w.cwnd.saturating_sub(md).max(1)
                }
            }
        }
    }

    fn on_rtt(&mut self, w: &mut Window, ack: &AckInfo) {
        let sh = lent(&mut self.lent);
        Self::sync(sh, self.idx, w);
        let s = &mut sh.subs[self.idx];
        if let Some(rtt) = ack.rtt {
            let sample = rtt.ns().max(1);
            s.srtt_ns = if s.srtt_ns == 0 {
                sample
            } else {
                // RFC 6298: srtt = 7/8 srtt + 1/8 sample.
                ((s.srtt_ns as i128 + (sample as i128 - s.srtt_ns as i128) / 8).max(1)) as u64
            };
        }
        if self.kind == CoupledName::Olia {
            if !s.loss_init {
                (s.loss1, s.loss2, s.loss3, s.loss_init) = (ack.snd_una, ack.snd_una, ack.snd_una, true);
            }
            // The source moves loss3 in cong_avoid, i.e. on ACKs outside recovery.
            if matches!(s.state, CaState::Open | CaState::Disorder) {
                s.loss3 = ack.snd_una;
            }
        }
    }

    fn on_state(&mut self, w: &mut Window, _now: Time, state: CaState) {
        let sh = lent(&mut self.lent);
        Self::sync(sh, self.idx, w);
        let s = &mut sh.subs[self.idx];
        // OLIA mptcp_olia_set_state: entering Loss / Recovery marks a loss (the source's
        // `!icsk_retransmits` keeps repeated RTO backoffs from marking again; we mark only on
        // entry into the state).
        if self.kind == CoupledName::Olia
            && matches!(state, CaState::Loss | CaState::Recovery)
            && s.state != state
            && s.loss3 != s.loss2
        {
            s.loss1 = s.loss2;
            s.loss2 = s.loss3;
        }
        s.state = state;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::reno::Reno;

    fn ack(acked: u32, rtt_ms: Option<u64>, snd_una: u64) -> AckInfo {
        AckInfo {
            now: Time::ZERO,
            acked,
            rtt: rtt_ms.map(Time::from_ms),
            prior_in_flight: 0,
            snd_una,
            snd_nxt: snd_una,
            mss: 1448,
            pacing_rate_bps: 0,
        }
    }

    /// The controllers `build` makes and their coupling, lent for each call as a connection
    /// lends it (`at`).
    struct Set {
        ccs: Vec<Box<dyn CongestionControl>>,
        coupling: Option<Box<Coupling>>,
    }

    /// Controller `i` with the coupling lent until dropped.
    struct Lent<'a> {
        set: &'a mut Set,
        i: usize,
    }

    impl Set {
        fn new(kind: CoupledName, n: usize) -> Set {
            let (ccs, coupling) = build(kind, n);
            Set { ccs, coupling: Some(coupling) }
        }

        fn at(&mut self, i: usize) -> Lent<'_> {
            lend(self.ccs[i].as_mut(), &mut self.coupling);
            Lent { set: self, i }
        }
    }

    impl Drop for Lent<'_> {
        fn drop(&mut self) {
            let set = &mut *self.set;
            lend(set.ccs[self.i].as_mut(), &mut set.coupling);
        }
    }

    impl std::ops::Deref for Lent<'_> {
        type Target = dyn CongestionControl;
        fn deref(&self) -> &Self::Target {
            self.set.ccs[self.i].as_ref()
        }
    }

    impl std::ops::DerefMut for Lent<'_> {
        fn deref_mut(&mut self) -> &mut Self::Target {
            self.set.ccs[self.i].as_mut()
        }
    }

    /// Controllers with windows in congestion avoidance and one RTT sample each.
    fn setup(kind: CoupledName, paths: &[(u32, u64)]) -> (Set, Vec<Window>) {
        let mut ccs = Set::new(kind, paths.len());
        let mut ws = Vec::new();
        for (i, &(cwnd, rtt_ms)) in paths.iter().enumerate() {
            let mut w = Window { cwnd, ssthresh: 1, cwnd_cnt: 0 };
            ccs.at(i).on_rtt(&mut w, &ack(1, Some(rtt_ms), 0));
            ws.push(w);
        }
        (ccs, ws)
    }

    /// ACKs (one packet each) until cwnd changes; returns how many it took.
    fn acks_to_change(cc: &mut dyn CongestionControl, w: &mut Window) -> u32 {
        let start = w.cwnd;
        for n in 1..=100_000 {
            cc.cong_avoid(w, &ack(1, None, 0));
            if w.cwnd != start {
                return n;
            }
        }
        panic!("cwnd never changed");
    }

    #[test]
    fn lia_alpha_matches_rfc6356_by_hand() {
        // cwnd 10 @ 10 ms, cwnd 20 @ 40 ms: max(w/rtt^2) = 0.1, sum w/rtt = 1.5,
        // alpha = 30 x 0.1 / 2.25 = 4/3.
        let a = lia_alpha(&[(10, 10.0), (20, 40.0)]);
        assert!((a - 4.0 / 3.0).abs() < 1e-12, "{a}");
    }

    #[test]
    fn lia_per_ack_increase_by_hand() {
        // Increase per packet = min(alpha / cwnd_total, 1 / cwnd_i) = min(0.0444, 0.1) on
        // subflow 0: one packet per cwnd_total / alpha = 22.5 -> 22 ACKs (source floors),
        // instead of Reno's 10.
        let (mut ccs, mut ws) = setup(CoupledName::Lia, &[(10, 10), (20, 40)]);
        assert_eq!(acks_to_change(&mut *ccs.at(0), &mut ws[0]), 22);
        assert_eq!(ws[0].cwnd, 11);
        // Subflow 1: min(0.0444, 1/20) -> also the coupled term.
        ccs.at(1).on_rtt(&mut ws[1], &ack(1, Some(40), 0));
        let mut w1 = ws[1];
        let n = acks_to_change(&mut *ccs.at(1), &mut w1);
        // Subflow 0 grew to 11: sum w/rtt = 1.6, max w/rtt^2 = 0.11 -> 2.56 / 0.11 = 23.27.
        assert_eq!(n, 23);
    }

    #[test]
    fn lia_never_beats_uncoupled_reno() {
        // Subflow 0: cwnd 100 @ 100 ms beside cwnd 10 @ 1 ms: cwnd_total / alpha =
        // 11^2 / 10 = 12.1 < cwnd_0, so the Reno cap (1 / cwnd_0) binds: 100 ACKs.
        let (mut ccs, mut ws) = setup(CoupledName::Lia, &[(100, 100), (10, 1)]);
        assert_eq!(acks_to_change(&mut *ccs.at(0), &mut ws[0]), 100);
        // Over many ACKs on many windows, never more than Reno.
        for (w0, r0, w1, r1) in [(10, 10, 10, 10), (50, 5, 7, 80), (3, 1, 300, 1), (1000, 20, 20, 200)] {
            let (mut ccs, mut ws) = setup(CoupledName::Lia, &[(w0, r0), (w1, r1)]);
            let mut reno = ws[0];
            let mut lia = ws.remove(0);
            for _ in 0..5000 {
                ccs.at(0).cong_avoid(&mut lia, &ack(1, None, 0));
                Reno.cong_avoid(&mut reno, &ack(1, None, 0));
                assert!(lia.cwnd <= reno.cwnd, "{w0} {r0} {w1} {r1}: {} > {}", lia.cwnd, reno.cwnd);
            }
        }
    }

    #[test]
    fn olia_increase_by_hand() {
        // Subflow 0: cwnd 10 @ 10 ms, 1 MB between its last losses; subflow 1: cwnd 20 @ 10 ms,
        // 100 kB. Best path (interval / rtt^2) = 0, max cwnd = 1: B \ M = {0}, M = {1},
        // n = 2: eps_0 = +1/2, eps_1 = -1/2. sum w/rtt = 3 per ms:
        //   inc_0 = 10 / 30^2 + 0.5 / 10 = 0.06111 -> 17 ACKs to reach 1023/1024;
        //   inc_1 = 20 / 30^2 - 0.5 / 20 = -0.002778 -> cwnd - 1 after 360 ACKs.
        let mut ccs = Set::new(CoupledName::Olia, 2);
        let mut ws = [Window { cwnd: 10, ssthresh: 1, cwnd_cnt: 0 }, Window { cwnd: 20, ssthresh: 1, cwnd_cnt: 0 }];
        for (i, interval) in [(0usize, 1_000_000u64), (1, 100_000)] {
            ccs.at(i).on_rtt(&mut ws[i], &ack(1, Some(10), 0));
            ccs.at(i).on_rtt(&mut ws[i], &ack(1, Some(10), interval));
            ccs.at(i).on_state(&mut ws[i], Time::ZERO, CaState::Recovery);
            ccs.at(i).on_state(&mut ws[i], Time::ZERO, CaState::Open);
        }
        let mut w0 = ws[0];
        let a = |una| ack(1, None, una);
        let mut n0 = 0;
        while w0.cwnd == 10 {
            ccs.at(0).cong_avoid(&mut w0, &a(1_000_000));
            n0 += 1;
        }
        assert_eq!((n0, w0.cwnd), (17, 11));
        // Put subflow 0 back at 10 for subflow 1's computation.
        let mut w0b = ws[0];
        ccs.at(0).on_rtt(&mut w0b, &ack(1, None, 1_000_000));
        let mut w1 = ws[1];
        let mut n1 = 0;
        while w1.cwnd == 20 {
            ccs.at(1).cong_avoid(&mut w1, &a(100_000));
            n1 += 1;
        }
        assert_eq!((n1, w1.cwnd), (360, 19));
    }

    #[test]
    fn olia_without_a_better_path_outside_m_has_no_epsilon() {
        // No losses yet (equal intervals) and equal RTTs: every path is in B; with equal cwnds
        // every path is also in M, so B \ M is empty and eps = 0: the increase is
        // w_i / (rtt_i sum w / rtt)^2 = 10 / 20^2 = 1/40 -> 40 ACKs (Reno: 10).
        let (mut ccs, mut ws) = setup(CoupledName::Olia, &[(10, 10), (10, 10)]);
        assert_eq!(acks_to_change(&mut *ccs.at(0), &mut ws[0]), 40);
    }

    #[test]
    fn balia_increase_and_decrease_by_hand() {
        // x_0 = 10 / 10 ms = 1, x_1 = 40 / 20 ms = 2 (per ms); sum 3, max 2.
        // ai_0 = 9 x 10 x 10 / ((1 + 2)(4 + 2)) = 50 ACKs per +1 (Reno: 10);
        // ai_1 = 9 x 10 x 40 / ((2 + 2)(8 + 2)) = 90 ACKs per +1 (Reno: 40).
        let (mut ccs, mut ws) = setup(CoupledName::Balia, &[(10, 10), (40, 20)]);
        // md_0: alpha = 2 / 1 = 2 -> min(2, 1.5) x 5 = 7 (fixed point) -> ssthresh 3.
        // md_1: alpha = 1 -> 20 -> ssthresh 20.
        assert_eq!(ccs.at(0).ssthresh(&ws[0]), 3);
        assert_eq!(ccs.at(1).ssthresh(&ws[1]), 20);
        let mut w1 = ws[1];
        assert_eq!(acks_to_change(&mut *ccs.at(1), &mut w1), 90);
        ccs.at(1).on_rtt(&mut ws[1], &ack(1, None, 0)); // back to cwnd 40 in the shared state
        assert_eq!(acks_to_change(&mut *ccs.at(0), &mut ws[0]), 50);
    }

    #[test]
    fn one_subflow_is_reno() {
        for kind in [CoupledName::Lia, CoupledName::Olia, CoupledName::Balia] {
            let mut ccs = Set::new(kind, 1);
            let mut cc = ccs.at(0);
            let mut w = Window::new(10);
            let mut r = Window::new(10);
            cc.on_rtt(&mut w, &ack(1, Some(10), 0));
            for i in 0..3000u32 {
                if i == 200 {
                    // A loss: same threshold as Reno.
                    let s = cc.ssthresh(&w);
                    assert_eq!(s, Reno.ssthresh(&r), "{kind:?}");
                    w.ssthresh = s;
                    w.cwnd = s;
                    r.ssthresh = s;
                    r.cwnd = s;
                    cc.on_state(&mut w, Time::ZERO, CaState::Recovery);
                    cc.on_state(&mut w, Time::ZERO, CaState::Open);
                }
                let acked = 1 + i % 2; // delayed ACKs mixed with single ones
                let a = ack(acked, Some(10), i as u64 * 1448);
                cc.on_rtt(&mut w, &a);
                cc.cong_avoid(&mut w, &a);
                Reno.cong_avoid(&mut r, &a);
                if kind != CoupledName::Olia {
                    assert_eq!(w, r, "{kind:?} after {i} ACKs");
                } else {
                    assert!(w.cwnd.abs_diff(r.cwnd) <= 1, "{kind:?} after {i}: {} vs {}", w.cwnd, r.cwnd);
                }
            }
            assert!(w.cwnd > 40, "{kind:?} grew: {}", w.cwnd);
        }
    }

    #[test]
    fn olia_one_subflow_single_acks_match_reno_exactly() {
        let mut ccs = Set::new(CoupledName::Olia, 1);
        let mut cc = ccs.at(0);
        let mut w = Window { cwnd: 10, ssthresh: 5, cwnd_cnt: 0 };
        let mut r = w;
        cc.on_rtt(&mut w, &ack(1, Some(10), 0));
        for _ in 0..2000 {
            cc.cong_avoid(&mut w, &ack(1, None, 0));
            Reno.cong_avoid(&mut r, &ack(1, None, 0));
            assert_eq!(w.cwnd, r.cwnd);
        }
    }

    #[test]
    fn a_subflow_without_rtt_sample_is_not_coupled() {
        // Only subflow 0 has an RTT sample: LIA behaves like Reno on it (10 ACKs at cwnd 10).
        let mut ccs = Set::new(CoupledName::Lia, 2);
        let mut w = Window { cwnd: 10, ssthresh: 1, cwnd_cnt: 0 };
        ccs.at(0).on_rtt(&mut w, &ack(1, Some(10), 0));
        let mut w1 = Window { cwnd: 10, ssthresh: 1, cwnd_cnt: 0 };
        ccs.at(1).on_rtt(&mut w1, &ack(1, None, 0));
        assert_eq!(acks_to_change(&mut *ccs.at(0), &mut w), 10);
    }

    /// The coupling is one object per connection, not shared: a controller called without it
    /// lent has nothing to couple with.
    #[test]
    #[should_panic(expected = "lends its coupling")]
    fn a_controller_without_the_coupling_lent_cannot_run() {
        let (mut ccs, _coupling) = build(CoupledName::Lia, 2);
        let mut w = Window::new(10);
        ccs[0].on_rtt(&mut w, &ack(1, Some(10), 0));
    }

    /// Lending swaps: the connection's slot is empty while a controller holds the coupling.
    #[test]
    fn lending_moves_the_one_coupling_back_and_forth() {
        let (mut ccs, coupling) = build(CoupledName::Olia, 2);
        let mut slot = Some(coupling);
        lend(ccs[1].as_mut(), &mut slot);
        assert!(slot.is_none());
        let mut w = Window::new(10);
        ccs[1].on_rtt(&mut w, &ack(1, Some(10), 0));
        lend(ccs[1].as_mut(), &mut slot);
        let c = slot.expect("back with the connection");
        assert_eq!(c.subs[1].srtt_ns, 10_000_000, "subflow 1's sample is in the one coupling");
        assert_eq!(c.subs[0].srtt_ns, 0);
    }
}
