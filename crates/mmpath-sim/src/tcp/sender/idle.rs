//! Congestion window validation (RFC 2861) as Linux runs it with
//! net.ipv4.tcp_slow_start_after_idle = 1, the default:
//!
//! - **application-limited** (tcp_cwnd_validate -> tcp_cwnd_application_limited,
//!   net/ipv4/tcp_output.c): a sender that has not filled its cwnd for an RTO (icsk_rto) since
//!   it last did (snd_cwnd_stamp) moves cwnd halfway down to the most it used (snd_cwnd_used,
//!   at least the initial window) and keeps the old level as ssthresh (tcp_current_ssthresh),
//!   once per RTO. Not in loss recovery (CA_Open only), not while the writer is blocked on a
//!   full send buffer (SOCK_NOSPACE: then the buffer, not the application, is the limit), and
//!   not for algorithms that set cwnd themselves (BBR's cong_control).
//! - **restart after idle** (tcp_cwnd_restart, from tcp_slow_start_after_idle_check when new
//!   data is queued, tcp_event_data_sent in the 4.x kernels the v0.9x MPTCP tree is built on):
//!   a sender with nothing outstanding whose last data went out more than an RTO ago halves
//!   cwnd once per RTO of idleness, down to the initial window, and keeps the old level as
//!   ssthresh. Again not for BBR, which handles restarts in its own state machine.
//!
//! Both matter to MPTCP subflows: a subflow the scheduler leaves idle (a ratio scheduler's other
//! path, a backup, a subflow waiting out a scan) does not keep the window it once grew. A
//! subflow's struct socket is the MPTCP socket's (upstream: mptcp_sock_graft; v0.9x:
//! sk_set_socket(sk, meta_sk->sk_socket) in mptcp_init4_subsockets), so its SOCK_NOSPACE is
//! the application's writer blocked on the *connection's* send buffer: a backlogged MPTCP
//! transfer keeps its subflows' windows, a rate-limited one lets them decay.

use super::TcpSender;
use crate::tcp::cc::{CaState, TxStart};
use crate::time::Time;

impl TcpSender {
    /// net.ipv4.tcp_slow_start_after_idle (off in a bare sender; the simulation sets it from
    /// the scenario, default on as in Linux).
    pub fn set_slow_start_after_idle(&mut self, on: bool) {
        self.idle.enabled = on;
    }

    /// Whether the application writes to this socket, so that its SOCK_NOSPACE follows this
    /// socket's own send buffer: true for a TCP flow, false for an MPTCP subflow (whose
    /// connection reports its writer with `set_owner_writer_blocked`).
    pub fn set_writer_blocks(&mut self, on: bool) {
        self.idle.writer_blocks = on;
    }

    /// An MPTCP subflow: whether the application's writer is blocked on the connection's send
    /// buffer (SOCK_NOSPACE on the socket the subflow shares with the MPTCP socket).
    pub fn set_owner_writer_blocked(&mut self, blocked: bool) {
        self.idle.owner_blocked = blocked;
    }

    /// SOCK_NOSPACE: the writer waits on a full send buffer, having more to write than it takes.
    fn writer_blocked(&self) -> bool {
        self.idle.owner_blocked
            || (self.idle.writer_blocks && self.app_limit > self.snd_una.saturating_add(self.sndbuf_bytes()))
    }

    /// tcp_slow_start_after_idle_check, before new data goes out.
    pub(super) fn restart_after_idle(&mut self, now: Time) {
        if !self.idle.enabled || self.cc.owns_cwnd() || !self.sb.is_empty() || !self.idle.sent_any {
            return;
        }
        let rto = self.rtt.rto();
        if now <= self.idle.lsndtime || now - self.idle.lsndtime <= rto {
            return;
        }
        let mut delta = now - self.idle.lsndtime;
        // tcp_cwnd_restart.
        self.w.ssthresh = self.current_ssthresh();
        let restart = self.initial_cwnd.min(self.w.cwnd);
        let mut cwnd = self.w.cwnd;
        while delta > rto && cwnd > restart {
            delta = delta - rto;
            cwnd >>= 1;
        }
        self.w.cwnd = cwnd.max(restart);
        self.idle.cwnd_stamp = now;
        self.idle.cwnd_used = 0;
        self.stats.idle_restarts += 1;
    }

    /// The first half of tcp_event_data_sent: data is about to go out with nothing in flight
    /// (`tcp_packets_in_flight(tp) == 0`), so the congestion control hears CA_EVENT_TX_START
    /// with the time data last went out (cc/mod.rs `TxStart`). Called before the segment
    /// enters the scoreboard and before `note_data_sent` stamps lsndtime.
    pub(super) fn tx_start(&mut self, now: Time) {
        let ev = TxStart {
            now,
            last_send: self.idle.lsndtime,
            snd_nxt: self.snd_nxt,
            app_limited: self.app_limited != 0,
            srtt: self.rtt.srtt(),
        };
        self.cc.on_tx_start(&self.w, &ev);
    }

    /// tcp_event_data_sent: the time of the last data transmission.
    pub(super) fn note_data_sent(&mut self, now: Time) {
        self.idle.lsndtime = now;
        self.idle.sent_any = true;
    }

    /// The second half of tcp_cwnd_validate, after tcp_write_xmit sent something or hit cwnd.
    pub(super) fn validate_cwnd(&mut self, now: Time) {
        if self.cwnd_limited() {
            self.idle.cwnd_used = 0;
            self.idle.cwnd_stamp = now;
            return;
        }
        self.idle.cwnd_used = self.idle.cwnd_used.max(self.sb.packets_out());
        if self.idle.enabled
            && !self.cc.owns_cwnd()
            && now >= self.idle.cwnd_stamp
            && now - self.idle.cwnd_stamp >= self.rtt.rto()
        {
            // tcp_cwnd_application_limited.
            if self.state == CaState::Open && !self.writer_blocked() {
                let used = self.idle.cwnd_used.max(self.initial_cwnd);
                if used < self.w.cwnd {
                    self.w.ssthresh = self.current_ssthresh();
                    self.w.cwnd = (self.w.cwnd + used) >> 1;
                    self.stats.app_limited_reductions += 1;
                }
                self.idle.cwnd_used = 0;
            }
            self.idle.cwnd_stamp = now;
        }
    }
}

/// The sender's RFC 2861 state (Linux tp->snd_cwnd_used, tp->snd_cwnd_stamp, tp->lsndtime).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct IdleState {
    pub enabled: bool,
    pub writer_blocks: bool,
    pub owner_blocked: bool,
    pub cwnd_used: u32,
    pub cwnd_stamp: Time,
    pub lsndtime: Time,
    pub sent_any: bool,
}

#[cfg(test)]
mod tests {
    use crate::tcp::sender::testkit::*;

    /// A Reno sender grown to cwnd 40 in two slow-start rounds (10 ms RTT), everything ACKed.
    fn grown(ssai: bool) -> (TcpSender, Time) {
        let mut s = sender(1000);
        s.set_loss_probes(false);
        s.set_slow_start_after_idle(ssai);
        s.set_app_limit(30_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        let mut t = Time::from_ms(10);
        while s.snd_una < s.snd_nxt {
            ack_round(&mut s, t, &mut out);
            t += Time::from_ms(10);
        }
        assert_eq!((s.w.cwnd, s.snd_una), (40, 30_000));
        (s, t)
    }

    /// tcp_cwnd_restart: idle for 3 RTOs, cwnd halves per RTO down to the initial window.
    #[test]
    fn restart_after_idle_halves_per_rto_down_to_the_initial_window() {
        let (mut s, t) = grown(true);
        let rto = s.rtt.rto();
        s.set_app_limit(200_000);
        let mut out = Vec::new();
        let later = t + Time(rto.ns() * 3 / 2);
        s.try_send(later, &mut out);
        // 1.5 RTO idle: one halving (the loop stops when less than an RTO is left).
        assert_eq!(s.w.cwnd, 20);
        assert_eq!(out.len(), 20);
        // tcp_current_ssthresh = max(ssthresh, 3/4 cwnd): still "infinite" before any loss, so
        // the restarted window slow-starts back.
        assert_eq!(s.w.ssthresh, INFINITE_SSTHRESH);
        let (mut s, t) = grown(true);
        s.w.ssthresh = 20; // as after a loss: now the old level, 3/4 of 40, is kept
        s.set_app_limit(200_000);
        out.clear();
        s.try_send(t + Time(rto.ns() * 10), &mut out);
        assert_eq!(s.w.cwnd, 10, "never below the initial window");
        assert_eq!(s.w.ssthresh, 30);
        // Not idle long enough, or turned off: no change.
        let (mut s, t) = grown(true);
        s.set_app_limit(200_000);
        s.try_send(t + Time(rto.ns() / 2), &mut out);
        assert_eq!(s.w.cwnd, 40);
        let (mut s, t) = grown(false);
        s.set_app_limit(200_000);
        s.try_send(t + Time(rto.ns() * 10), &mut out);
        assert_eq!(s.w.cwnd, 40);
    }

    /// tcp_cwnd_application_limited: a sender using 5 of its 40 segments for more than an RTO
    /// moves cwnd halfway to max(used, initial window) = 10, once per RTO; not when the writer
    /// is blocked on a full send buffer (SOCK_NOSPACE).
    #[test]
    fn application_limited_cwnd_decays_towards_what_is_used() {
        for (writer_blocks, want) in [(false, 25), (true, 40)] {
            let (mut s, mut t) = grown(true);
            s.set_writer_blocks(writer_blocks);
            if writer_blocks {
                // More written than the buffer holds: the writer waits on it.
                s.sndbuf = crate::scenario::BufSize::Bytes(5_000);
            }
            let rto = s.rtt.rto();
            let start = t;
            let mut out = Vec::new();
            // 5 segments per 10 ms round, ACKed a round later, for 1.2 RTO.
            while t < start + Time(rto.ns() * 6 / 5) {
                let limit = s.snd_una + 5_000;
                s.set_app_limit(if writer_blocks { limit + 100_000 } else { limit });
                out.clear();
                s.try_send(t, &mut out);
                t += Time::from_ms(10);
                let a = s.snd_nxt;
                s.on_ack(t, &ack(a, &[]), &mut out);
            }
            assert_eq!(s.w.cwnd, want, "writer blocked: {writer_blocks}");
            if !writer_blocks {
                assert_eq!(s.w.ssthresh, INFINITE_SSTHRESH); // max(ssthresh, 3/4 cwnd)
                assert_eq!(s.stats.app_limited_reductions, 1);
            }
        }
    }

    /// BBR sets cwnd itself (cong_control): neither rule touches it.
    #[test]
    fn bbr_is_left_alone() {
        let mut s = sender_with(1000, cc::build(CcKind::Bbr, &TcpOpts::default()), true);
        s.set_slow_start_after_idle(true);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(10_000, &[]), &mut out);
        let cwnd = s.w.cwnd;
        s.set_app_limit(50_000);
        s.try_send(Time::from_secs(30), &mut out);
        assert_eq!(s.w.cwnd, cwnd);
        assert_eq!(s.stats.idle_restarts, 0);
    }
    /// tcp_event_data_sent raises CA_EVENT_TX_START when data goes out with nothing in flight:
    /// at the first transmission and after everything was ACKed, with the time data last went
    /// out and snd_nxt before the segment; not while data is in flight, and not for the rest
    /// of the burst that follows.
    #[test]
    fn data_after_an_idle_spell_is_a_tx_start() {
        let (mut s, log) = probed();
        s.set_app_limit(5_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(out.len(), 5);
        assert_eq!(log.lock().unwrap().tx_starts.len(), 1, "the first transmission, once");
        // More data while the first five are in flight: no event.
        s.set_app_limit(8_000);
        s.try_send(Time::from_ms(1), &mut out);
        assert_eq!(out.len(), 8);
        assert_eq!(log.lock().unwrap().tx_starts.len(), 1, "data in flight");
        // All ACKed at 10 ms; the application writes again at 500 ms.
        s.on_ack(Time::from_ms(10), &ack(8_000, &[]), &mut out);
        s.set_app_limit(20_000);
        out.clear();
        s.try_send(Time::from_ms(500), &mut out);
        assert!(out.len() > 1);
        let l = log.lock().unwrap();
        assert_eq!(l.tx_starts.len(), 2, "one event for the burst after the idle spell");
        let ev = l.tx_starts[1];
        assert_eq!((ev.now, ev.last_send, ev.snd_nxt), (Time::from_ms(500), Time::from_ms(1), 8_000));
    }
}
