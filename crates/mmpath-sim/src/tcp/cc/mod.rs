//! Congestion control behind one trait, modelled on Linux's `tcp_congestion_ops`.
//!
//! The TCP sender owns the window (`Window`, in packets as in Linux) and the loss-recovery
//! state machine (PRR during fast recovery, cwnd = 1 after an RTO); an algorithm grows the
//! window on ACKs (`cong_avoid`), chooses the post-loss threshold (`ssthresh`), sees RTT
//! samples (`on_rtt`, Linux's `pkts_acked`) and state changes (`on_state`). An algorithm that
//! sets the window and the pacing rate itself from delivery-rate samples (BBR, Linux's
//! `cong_control` hook) says so with `owns_cwnd` and gets every ACK's `RateSample` in
//! `cong_control`; the stack then skips PRR and `cong_avoid` for it, as Linux's
//! tcp_cong_control does. One file per algorithm; `build` maps a scenario entry onto one.

pub mod bbr;
pub mod cubic;
pub mod reno;
pub mod vegas;

use crate::engine::RngStream;
use crate::scenario::{CcKind, TcpOpts};
use crate::time::Time;

/// Linux's congestion-avoidance states (include/net/tcp.h `tcp_ca_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaState {
    Open = 0,
    Disorder = 1,
    Recovery = 2,
    Loss = 3,
    /// Linux TCP_CA_CWR: a window reduction without retransmission. The sender passes through
    /// it within one ACK when a tail loss probe turns out to have repaired a loss
    /// (tcp_process_tlp_ack: tcp_init_cwnd_reduction, CWR, tcp_end_cwnd_reduction,
    /// tcp_try_keep_open), so the algorithm's set_state hook sees it (Vegas disables itself).
    Cwr = 4,
}

impl CaState {
    pub const NAMES: [&'static str; 5] = ["open", "disorder", "recovery", "loss", "cwr"];
}

/// Congestion window state, in packets (MSS-sized segments), as Linux keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Linux snd_cwnd_cnt: ACKed packets counted towards the next +1 in congestion avoidance.
    pub cwnd_cnt: u32,
}

/// "Infinite" ssthresh before the first loss (Linux TCP_INFINITE_SSTHRESH).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl Window {
    pub fn new(initial_cwnd: u32) -> Self {
        Window { cwnd: initial_cwnd, ssthresh: INFINITE_SSTHRESH, cwnd_cnt: 0 }
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Linux tcp_slow_start: grow by `acked` up to ssthresh; returns the ACKs left over.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd).min(acked);
        self.cwnd = cwnd;
        left
    }

    /// Linux tcp_cong_avoid_ai: +1 packet for every `w` packets ACKed.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
    }
}

/// What an ACK tells the algorithm.
#[derive(Debug, Clone, Copy)]
pub struct AckInfo {
    pub now: Time,
    /// Packets newly delivered by this ACK (cumulatively ACKed + newly SACKed).
    pub acked: u32,
    /// RTT of the most recently sent segment this ACK covers (Linux ca_rtt), if valid.
    pub rtt: Option<Time>,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// Highest byte acknowledged (snd_una) and next byte to send (snd_nxt), for round tracking.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub mss: u32,
    /// Linux sk_pacing_rate as the stack computes it even without fq (tcp_update_pacing_rate).
    pub pacing_rate_bps: u64,
}

/// Data goes out with nothing in flight: Linux's CA_EVENT_TX_START, which tcp_event_data_sent
/// (net/ipv4/tcp_output.c, every data transmission) raises when tcp_packets_in_flight is 0,
/// before it stamps lsndtime. CUBIC shifts its epoch by the idle time (tcp_cubic.c
/// cubictcp_cwnd_event, since Linux 4.3: "better follow cubic curve after idle period"),
/// Vegas starts over (tcp_vegas_cwnd_event -> tcp_vegas_init), BBR notes an idle restart when
/// the sender was application-limited (bbr_cwnd_event).
#[derive(Debug, Clone, Copy)]
pub struct TxStart {
    pub now: Time,
    /// When data last went out before this transmission (tp->lsndtime).
    pub last_send: Time,
    /// snd_nxt as the event sees it: before this segment (tcp_event_new_data_sent advances it
    /// after the transmission).
    pub snd_nxt: u64,
    /// The sender's application-limited mark is set (tp->app_limited != 0).
    pub app_limited: bool,
    pub srtt: Option<Time>,
}

/// One ACK's delivery-rate sample, as Linux's tcp_rate.c builds `struct rate_sample`
/// (tcp_rate_gen), plus the connection state `bbr_main` reads from `tcp_sock`.
#[derive(Debug, Clone, Copy)]
pub struct RateSample {
    pub now: Time,
    /// Packets delivered over the sampling interval (rs->delivered); None = not a valid sample.
    pub delivered: Option<u64>,
    /// max(send interval, ACK interval) of the sample (rs->interval_us); None = invalid.
    pub interval: Option<Time>,
    /// tp->delivered when the sampled packet was sent (rs->prior_delivered).
    pub prior_delivered: u64,
    /// Packets in flight before this ACK (rs->prior_in_flight).
    pub prior_in_flight: u32,
    /// Packets newly delivered (ACKed or SACKed) by this ACK (rs->acked_sacked).
    pub acked_sacked: u32,
    /// Packets newly marked lost on this ACK (rs->losses).
    pub losses: u32,
    /// RTT of the newest packet this ACK covers (rs->rtt_us; Linux ca_rtt).
    pub rtt: Option<Time>,
    /// The sampled packet was sent while the application was the limit (rs->is_app_limited).
    pub is_app_limited: bool,
    /// Connection totals: tp->delivered, tp->lost, tp->delivered_mstamp.
    pub tp_delivered: u64,
    pub tp_lost: u64,
    pub delivered_mstamp: Time,
    /// Packets in flight after this ACK (tcp_packets_in_flight).
    pub in_flight: u32,
    /// The congestion state after this ACK's loss processing (icsk_ca_state).
    pub state: CaState,
    pub mss: u32,
    /// Smoothed RTT (tp->srtt_us), if any sample yet.
    pub srtt: Option<Time>,
    /// How far the pacing schedule runs ahead of now: max(tcp_wstamp_ns, now) - now.
    pub edt_ahead: Time,
}

/// What `cong_control` asks of the stack beyond cwnd.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CongControlOut {
    /// Mark the connection application-limited now (BBR in ProbeRTT sets tp->app_limited so
    /// that low-rate samples of that phase do not drag the bandwidth filter down).
    pub mark_app_limited: bool,
}

pub trait CongestionControl: Send + Sync {
    fn name(&self) -> &'static str;
    /// Grows the window on an ACK. Called only when not in Recovery and cwnd-limited.
    fn cong_avoid(&mut self, w: &mut Window, ack: &AckInfo);
    /// The same ACK when the sender is not cwnd-limited (tcp_is_cwnd_limited false). Linux
    /// calls every CC's cong_avoid from tcp_cong_control whenever tcp_may_raise_cwnd holds and
    /// leaves the cwnd-limited test to the CC: Reno and CUBIC return at once (the default
    /// here); Vegas still closes its once-per-RTT round (tcp_vegas_cong_avoid).
    fn cong_avoid_not_cwnd_limited(&mut self, _w: &mut Window, _ack: &AckInfo) {}
    /// The slow-start threshold after a congestion event (fast recovery or RTO).
    fn ssthresh(&mut self, w: &Window) -> u32;
    /// The window to restore when a reduction proves spurious (Linux 4.10 tcp_undo_cwnd_reduction
    /// calls ops->undo_cwnd, before ssthresh is put back). Without the hook (Reno, Vegas in
    /// 4.10) the stack uses max(cwnd, 2 x ssthresh), which this default is.
    fn undo_cwnd(&mut self, w: &Window) -> u32 {
        w.cwnd.max(w.ssthresh.saturating_mul(2))
    }
    /// Every ACK carrying an RTT sample, in any state (Linux pkts_acked).
    fn on_rtt(&mut self, _w: &mut Window, _ack: &AckInfo) {}
    /// The sender changed congestion state.
    fn on_state(&mut self, _w: &mut Window, _now: Time, _state: CaState) {}
    /// The same, with the sender's snd_nxt at that moment (Linux's set_state hooks read
    /// tp->snd_nxt: CUBIC's bictcp_hystart_reset starts a HyStart round ending there). The
    /// sender calls this one; by default it is `on_state`.
    fn on_state_seq(&mut self, w: &mut Window, now: Time, state: CaState, _snd_nxt: u64) {
        self.on_state(w, now, state);
    }
    /// Data goes out with nothing in flight (`TxStart`, CA_EVENT_TX_START).
    fn on_tx_start(&mut self, _w: &Window, _ev: &TxStart) {}
    /// Runs as Linux 6.18 does where the algorithm changed since 4.10 (the default), for the
    /// flows that stand for a current kernel (upstream MPTCP's subflows); `paced`: the socket
    /// is paced (sk_pacing_status not SK_PACING_NONE). CUBIC: its HyStart (cubic.rs
    /// `HyStartRule`); the others are unchanged.
    fn use_current_kernel(&mut self, _paced: bool) {}
    /// Pacing rate the algorithm sets itself (sk_pacing_rate), bits/s of payload; None = the
    /// stack's own rate (tcp_update_pacing_rate) applies when pacing is on.
    fn pacing_rate_bps(&self) -> Option<u64> {
        None
    }
    /// Segments per TSO/GSO skb the algorithm asks for (the `tso_segs_goal` hook of Linux 4.10,
    /// `min_tso_segs` later); None = the stack's own tcp_tso_autosize.
    fn tso_segs_goal(&self) -> Option<u32> {
        None
    }
    /// The algorithm needs the stack to pace (SK_PACING_NEEDED: BBR's init asks for it, so
    /// Linux paces internally without fq).
    fn needs_pacing(&self) -> bool {
        false
    }
    /// The algorithm has a `cong_control` hook: it sets cwnd (and pacing) on every ACK from the
    /// rate sample, and the stack's PRR / cong_avoid / cwnd = ssthresh at the end of recovery
    /// do not apply (tcp_cong_control, tcp_end_cwnd_reduction).
    fn owns_cwnd(&self) -> bool {
        false
    }
    /// Linux `cong_control`: called on every ACK when `owns_cwnd`.
    fn cong_control(&mut self, _w: &mut Window, _rs: &RateSample) -> CongControlOut {
        CongControlOut::default()
    }
    /// Send-buffer autotuning multiple of cwnd (ops->sndbuf_expand; Linux's default 2).
    fn sndbuf_expand(&self) -> u32 {
        2
    }
    /// A short name for the algorithm's internal mode (BBR: startup, drain, probe_bw,
    /// probe_rtt), for tests and diagnostics; None for algorithms without modes.
    fn mode_name(&self) -> Option<&'static str> {
        None
    }
    /// The controller itself, for an owner that lends it state between calls (an MPTCP
    /// connection's coupled controllers, mptcp/coupled.rs `lend`); None for the others.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

/// Builds the algorithm a scenario names (config = factory), with a fixed random seed.
pub fn build(kind: CcKind, opts: &TcpOpts) -> Box<dyn CongestionControl> {
    build_seeded(kind, opts, 0, 0)
}

/// Builds the algorithm for flow `flow` of a run with seed `seed`: algorithms that draw random
/// numbers (BBR's ProbeBW start phase) own a stream seeded from (seed, 0x4000 + flow), so a
/// run stays reproducible and no other component's numbers move.
pub fn build_seeded(kind: CcKind, opts: &TcpOpts, seed: u64, flow: u16) -> Box<dyn CongestionControl> {
    match kind {
        CcKind::Reno => Box::new(reno::Reno),
        CcKind::Cubic => Box::new(cubic::Cubic::new(opts.hystart)),
        CcKind::Vegas => Box::new(vegas::Vegas::new()),
        CcKind::Bbr => Box::new(bbr::Bbr::new(RngStream::new(seed, 0x4000 + flow as u64))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut w = Window { cwnd: 10, ssthresh: 14, cwnd_cnt: 0 };
        assert_eq!(w.slow_start(6), 2);
        assert_eq!(w.cwnd, 14);
    }

    #[test]
    fn additive_increase_is_one_per_window() {
        let mut w = Window { cwnd: 10, ssthresh: 5, cwnd_cnt: 0 };
        for _ in 0..10 {
            w.cong_avoid_ai(10, 1);
        }
        assert_eq!(w.cwnd, 11);
        assert_eq!(w.cwnd_cnt, 0);
    }
}
