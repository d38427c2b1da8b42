//! Congestion control behind one trait, modelled on Linux's `tcp_congestion_ops`.
//!
//! The TCP sender owns the window (`Window`, in packets as in Linux) and the loss-recovery
//! state machine (PRR during fast recovery, cwnd = 1 after an RTO); an algorithm grows the
//! window on ACKs (`cong_avoid`), chooses the post-loss threshold (`ssthresh`), sees RTT
//! samples (`on_rtt`, Linux's `pkts_acked`) and state changes (`on_state`). One file per
//! algorithm; `build` maps a scenario entry onto one.

pub mod cubic;
pub mod reno;
pub mod vegas;

use crate::scenario::{CcKind, TcpOpts};
use crate::time::Time;

/// Linux's congestion-avoidance states (include/net/tcp.h `tcp_ca_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaState {
    Open = 0,
    Disorder = 1,
    Recovery = 2,
    Loss = 3,
}

impl CaState {
    pub const NAMES: [&'static str; 4] = ["open", "disorder", "recovery", "loss"];
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

pub trait CongestionControl: Send + Sync {
    fn name(&self) -> &'static str;
    /// Grows the window on an ACK. Called only when not in Recovery and cwnd-limited.
    fn cong_avoid(&mut self, w: &mut Window, ack: &AckInfo);
    /// The slow-start threshold after a congestion event (fast recovery or RTO).
    fn ssthresh(&mut self, w: &Window) -> u32;
    /// Every ACK carrying an RTT sample, in any state (Linux pkts_acked).
    fn on_rtt(&mut self, _w: &mut Window, _ack: &AckInfo) {}
    /// The sender changed congestion state.
    fn on_state(&mut self, _w: &mut Window, _now: Time, _state: CaState) {}
    /// Pacing rate the algorithm wants; None = no pacing (Linux without fq or BBR).
    fn pacing_rate_bps(&self) -> Option<u64> {
        None
    }
}

/// Builds the algorithm a scenario names (config = factory).
pub fn build(kind: CcKind, opts: &TcpOpts) -> Box<dyn CongestionControl> {
    match kind {
        CcKind::Reno => Box::new(reno::Reno),
        CcKind::Cubic => Box::new(cubic::Cubic::new(opts.hystart)),
        CcKind::Vegas => Box::new(vegas::Vegas::new()),
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
