//! The retransmission timeout and the Loss state it starts (Linux 4.10 net/ipv4/tcp_timer.c
//! tcp_retransmit_timer, tcp_input.c tcp_enter_loss and tcp_process_loss): RTO per RFC 6298
//! with Linux's 200 ms floor and exponential backoff (tcp/rtt.rs), cwnd = 1 and everything
//! un-SACKed marked lost on expiry, and F-RTO (RFC 5682, SACK-enhanced, tcp_frto = 2) for the
//! ACKs that follow: new data before more retransmissions, and an undo (sender/undo.rs) when
//! data never retransmitted turns out delivered. Also MuSher / AMuSe's restore of a window from
//! before a loss episode.

use super::{AckFlags, TcpSender};
use crate::packet::Packet;
use crate::tcp::cc::CaState;
use crate::tcp::rtt::MAX_RTO;
use crate::time::Time;

impl TcpSender {
    /// tcp_rearm_rto: the RTO runs from now while data is outstanding, and stops without.
    pub(super) fn arm_rto(&mut self, now: Time) {
        self.rto_at = if self.sb.is_empty() { None } else { Some(self.rto_deadline(now)) };
    }

    /// When an RTO armed now fires: `icsk_rto` in jiffies (__tcp_set_rto's usecs_to_jiffies,
    /// rounded up), doubled per backoff in jiffies (tcp_retransmit_timer: `icsk_rto << 1`,
    /// bounded by TCP_RTO_MAX), run by the timer wheel (tcp/timer_wheel.rs).
    pub(super) fn rto_deadline(&self, now: Time) -> Time {
        let max = self.wheel.ticks(MAX_RTO);
        // The backoff is at most 16 (RttEstimator::back_off) and the base at most TCP_RTO_MAX's
        // 120 000 ticks (HZ 1000): the shift cannot overflow.
        let ticks = self.wheel.ticks(self.rtt.base_rto()).min(max) << self.rtt.backoff();
        self.wheel.fire_at(now, ticks.min(max))
    }

    /// tcp_retransmit_timer: the RTO has fired with data outstanding (tcp_enter_loss: cwnd 1,
    /// everything un-SACKed lost, F-RTO started, the timeout backed off) and the head goes
    /// out again.
    pub(super) fn retransmit_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.sb.is_empty() {
            self.rto_at = None;
            return;
        }
        // tcp_enter_loss: a new ssthresh unless we are already reducing for this window: in
        // Open/Disorder (not in CWR, whose reduction set one), past the recovery point, or in
        // Loss with !icsk_retransmits (snd_una advanced since the last RTO). F-RTO starts on a
        // new recovery, CWR included (`icsk_ca_state < TCP_CA_Recovery`).
        let new_recovery = matches!(self.state, CaState::Open | CaState::Disorder | CaState::Cwr);
        let recompute = matches!(self.state, CaState::Open | CaState::Disorder)
            || self.high_seq <= self.snd_una
            || (self.state == CaState::Loss && self.rto_retransmits == 0);
        if recompute {
            self.prior_ssthresh = self.current_ssthresh();
            self.w.ssthresh = self.cc.ssthresh(&self.w);
            self.init_undo();
        }
        // tcp_retransmit_timer forgets an outstanding probe; tcp_enter_loss starts F-RTO
        // (tcp_frto = 2) unless a recovery was already under way, except for repeated timeouts
        // on the same snd_una (RFC 5682 3.2).
        self.tlp_high_seq = None;
        self.tlp_at = None;
        self.frto = self.frto_enabled && (new_recovery || self.rto_retransmits > 0);
        self.w.cwnd = 1;
        self.w.cwnd_cnt = 0;
        self.lost += self.sb.mark_all_lost() as u64;
        self.reo_at = None;
        self.high_seq = self.snd_nxt;
        self.dupacks = 0;
        // tcp_enter_loss -> tcp_set_ca_state(TCP_CA_Loss) calls the algorithm's set_state hook
        // on every RTO, repeated ones included (CUBIC's bictcp_state resets again and restarts
        // its HyStart round at this moment; BBR's bbr_set_state counts another loss round).
        self.state = CaState::Loss;
        self.cc.on_state_seq(&mut self.w, now, CaState::Loss, self.snd_nxt);
        self.stats.rtos += 1;
        self.rto_retransmits += 1;
        self.rtt.back_off();
        self.rto_at = Some(self.rto_deadline(now));
        self.try_send(now, out);
    }

    /// tcp_process_loss (Linux 4.10) with F-RTO (RFC 5682, SACK-enhanced, tcp_frto = 2) for an
    /// ACK in the Loss state. Returns true for F-RTO step 2b: send new data instead of
    /// retransmitting (REXMIT_NEW).
    pub(super) fn process_loss(&mut self, now: Time, ts_ecr_ns: u64, f: AckFlags) -> bool {
        let recovered = self.snd_una >= self.high_seq;
        if f.advanced && self.try_undo_loss(now, false, ts_ecr_ns) {
            return false;
        }
        if self.frto {
            // Step 3.b: data never retransmitted was (S)ACKed: the RTO was spurious.
            if f.orig_sack_acked && self.try_undo_loss(now, true, ts_ecr_ns) {
                return false;
            }
            if self.snd_nxt > self.high_seq {
                // Step 3.a: a SACK or a duplicate ACK after new data was sent: the loss was real.
                if f.data_sacked || f.is_dupack {
                    self.frto = false;
                }
            } else if f.advanced && !recovered {
                self.high_seq = self.snd_nxt;
                // Step 2.b: send new data if there is some and the peer's window allows.
                if self.has_send_head() && self.snd_una + self.peer_rwnd > self.snd_nxt {
                    return true;
                }
                self.frto = false;
            }
        }
        if recovered {
            // tcp_try_undo_recovery, then Open (F-RTO step 2.a and the end of conventional
            // recovery alike).
            if self.may_undo(ts_ecr_ns) {
                self.undo_cwnd_reduction(false);
            }
            self.set_state(now, CaState::Open);
        }
        false
    }

    /// Puts back a window from before a loss episode and sends at once, without waiting for
    /// the backed-off RTO: what MuSher and AMuSe do when a blocked 60 GHz link returns
    /// (seed 004). Outstanding data stays marked lost and goes out first.
    pub fn restore_window(&mut self, now: Time, cwnd: u32, ssthresh: u32, out: &mut Vec<Packet>) {
        self.w.cwnd = cwnd.max(1);
        self.w.ssthresh = ssthresh;
        self.w.cwnd_cnt = 0;
        self.rtt.reset_backoff();
        self.rto_retransmits = 0;
        if self.state == CaState::Loss {
            self.high_seq = self.snd_una;
            self.set_state(now, CaState::Open);
        }
        // The episode is over by decree: nothing left to undo, F-RTO has no verdict to give.
        self.undo_marker = None;
        self.frto = false;
        self.arm_rto(now);
        self.try_send(now, out);
        if self.tlp_at.is_none() {
            self.schedule_loss_probe(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::testkit::*;

    /// RTO: cwnd 1, everything outstanding lost, the head retransmitted, the timeout doubled;
    /// a new ACK brings the backoff back to zero.
    #[test]
    fn rto_collapses_window_and_backs_off() {
        let mut s = plain_sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        let deadline = s.timer_deadline().unwrap();
        // srtt 10 ms: RTO 210 ms = 53 ticks at HZ = 250, armed in tick 2: expiry tick 55 in
        // the wheel's level 0, run at tick 56.
        assert_eq!(deadline, Time::from_ms(224));
        out.clear();
        // A stale timer (before the deadline) does nothing.
        s.on_timer(deadline - Time::from_ms(1), &mut out);
        assert!(out.is_empty());
        s.on_timer(deadline, &mut out);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.w.cwnd, 1);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 1000);
        assert_eq!(s.stats.rtos, 1);
        let first_rto = s.rtt.base_rto();
        // icsk_rto doubled in jiffies: 106 ticks from tick 56, expiry 162 in level 1 (8-tick
        // buckets): run at tick 168 = 672 ms.
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(672)));
        // Second expiry: doubled again.
        let d2 = s.timer_deadline().unwrap();
        out.clear();
        s.on_timer(d2, &mut out);
        assert_eq!(s.rtt.rto(), Time(first_rto.ns() * 4).min(crate::tcp::rtt::MAX_RTO));
        // 212 ticks from tick 168: expiry 380, run at tick 384 = 1536 ms.
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(1536)));
        // The retransmission is ACKed, but Karn's rule gives no RTT sample: backoff stays...
        s.on_ack(d2 + Time::from_ms(10), &ack(2000, &[]), &mut out);
        assert_eq!(s.rtt.backoff(), 2);
        // An ACK that also covers segments retransmitted in Loss gives no sample from the
        // never-retransmitted ones among them (FLAG_RETRANS_DATA_ACKED)...
        let n = s.snd_nxt;
        assert!(n > 3000, "Loss retransmitted more than the head");
        s.on_ack(d2 + Time::from_ms(20), &ack(3000, &[]), &mut out);
        assert_eq!(s.rtt.backoff(), 2);
        // ...but its timestamp echo does (RFC 7323 RTTM): the backoff is back to zero.
        let mut a = ack(n, &[]);
        a.ts_ecr_ns = (d2 + Time::from_ms(15)).ns();
        s.on_ack(d2 + Time::from_ms(25), &a, &mut out);
        assert_eq!(s.rtt.backoff(), 0);
        assert_eq!(s.rtt.srtt(), Some(Time::from_ms(10)), "the echo gives 25 - 15 = 10 ms, as the first sample did");
        assert!(s.scoreboard_consistent());
    }

    /// tcp_enter_loss on repeated RTOs: the same outage keeps the first RTO's ssthresh, but an
    /// RTO after snd_una has advanced in Loss (icsk_retransmits back at 0) takes a new one from
    /// the window of that moment, even though no valid RTT sample reset the backoff.
    #[test]
    fn repeated_rto_recomputes_ssthresh_only_after_progress() {
        let mut s = plain_sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        let d1 = s.timer_deadline().unwrap();
        s.on_timer(d1, &mut out);
        assert_eq!((s.state, s.w.ssthresh), (CaState::Loss, 5), "cwnd 11 / 2");
        // A second expiry with nothing acknowledged: ssthresh stays.
        let d2 = s.timer_deadline().unwrap();
        s.on_timer(d2, &mut out);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (1, 5));
        // The retransmission is acknowledged (Karn: no RTT sample, backoff stays), slow start
        // in Loss: cwnd 2.
        s.on_ack(d2 + Time::from_ms(10), &ack(2000, &[]), &mut out);
        assert_eq!((s.state, s.w.cwnd), (CaState::Loss, 2));
        assert_eq!(s.rtt.backoff(), 2);
        // Another expiry before the recovery point: a new ssthresh from cwnd 2 (Reno: 2).
        let d3 = s.timer_deadline().unwrap();
        s.on_timer(d3, &mut out);
        assert_eq!((s.state, s.w.cwnd, s.w.ssthresh), (CaState::Loss, 1, 2));
        assert_eq!(s.stats.rtos, 3);
        assert!(s.scoreboard_consistent());
    }

    // ---- F-RTO (tcp_process_loss, tcp_frto = 2)

    /// A spurious RTO (the ACKs were only late): the first ACK advances over the
    /// retransmitted head, F-RTO sends new data instead of retransmitting (step 2.b), and the
    /// next ACK covers segments sent only once: undo (step 3.b), back to Open with the
    /// window of before the timeout.
    #[test]
    fn frto_detects_a_spurious_rto_and_undoes() {
        let mut s = stalled_after_rto(None);
        let rto_at = Time::from_ms(10) + s.rtt.base_rto();
        let mut out = Vec::new();
        s.on_ack(rto_at + Time::from_ms(1), &ack(2000, &[]), &mut out);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![12_000, 13_000], "new data, no retransmission");
        assert_eq!(s.stats.retransmits, 1);
        out.clear();
        s.on_ack(rto_at + Time::from_ms(2), &ack(4000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.stats.spurious_rtos, 1);
        // Reno (no undo_cwnd hook in 4.10): cwnd = max(cwnd, 2 x ssthresh) = 2 x 5; ssthresh
        // back to prior_ssthresh (infinite before the first loss).
        assert_eq!(s.w.ssthresh, INFINITE_SSTHRESH);
        assert!(s.w.cwnd >= 10, "cwnd {}", s.w.cwnd);
        assert_eq!(s.sb.lost_out, 0, "loss marks cleared");
        assert_eq!(s.stats.retransmits, 1, "nothing else retransmitted");
        assert!(s.scoreboard_consistent());
    }

    /// Step 2.b with an autotuned send buffer: the RTO's cut to cwnd 1 leaves the buffer Linux
    /// grew for the old window (tcp_sndbuf_expand only raises it), so unsent data is still
    /// queued beyond the ~40 outstanding segments and F-RTO sends it. (A buffer sized from the
    /// current window, 2 x 1 segment, would hold nothing new and end F-RTO at once.)
    #[test]
    fn frto_finds_new_data_in_an_autotuned_buffer_after_the_cut() {
        let mut s = TcpSender::new(SenderCfg {
            flow: 0,
            mss: 1000,
            initial_cwnd: 10,
            min_rto: Time::from_ms(200),
            sndbuf: BufSize::Auto,
            wmem_max: 1 << 30,
            cc: cc::build(CcKind::Reno, &TcpOpts::default()),
            pacing: false,
        });
        s.set_app_limit(u64::MAX);
        s.set_loss_probes(false);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        // Two rounds of slow start: 10 -> 20 -> 40 segments.
        let mut t = Time::from_ms(10);
        for _ in 0..2 {
            ack_round(&mut s, t, &mut out);
            t += Time::from_ms(10);
        }
        assert_eq!(s.w.cwnd, 40);
        let outstanding = s.snd_nxt - s.snd_una;
        assert_eq!(outstanding, 40_000);
        let rto = s.timer_deadline().unwrap();
        out.clear();
        s.on_timer(rto, &mut out);
        assert_eq!((s.state, s.w.cwnd), (CaState::Loss, 1));
        let (una, nxt) = (s.snd_una, s.snd_nxt);
        out.clear();
        s.on_ack(rto + Time::from_ms(10), &ack(una + 1000, &[]), &mut out);
        assert!(
            !out.is_empty() && out.iter().all(|p| p.seq >= nxt),
            "F-RTO step 2.b sends new data: {:?}",
            out.iter().map(|p| p.seq).collect::<Vec<_>>()
        );
        assert!(s.frto);
    }

    /// CUBIC's bictcp_undo_cwnd gives back the window it had when the RTO struck.
    #[test]
    fn frto_undo_restores_cubic_loss_cwnd() {
        let mut s = stalled_after_rto(Some(CcKind::Cubic));
        let rto_at = Time::from_ms(10) + s.rtt.base_rto();
        let mut out = Vec::new();
        s.on_ack(rto_at + Time::from_ms(1), &ack(2000, &[]), &mut out);
        s.on_ack(rto_at + Time::from_ms(2), &ack(4000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        // cwnd was 11 at the RTO (10 + 1 in slow start); the ACK of the undo adds its 2.
        assert!(s.w.cwnd >= 11, "cwnd {}", s.w.cwnd);
    }

    /// A real loss: after the new data of step 2.b, a duplicate ACK SACKing it says the
    /// window was lost (step 3.a): F-RTO ends and the lost segments are retransmitted, in Loss.
    #[test]
    fn frto_keeps_a_genuine_rto_in_loss() {
        let mut s = stalled_after_rto(None);
        let rto_at = Time::from_ms(10) + s.rtt.base_rto();
        let mut out = Vec::new();
        s.on_ack(rto_at + Time::from_ms(10), &ack(2000, &[]), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![12_000, 13_000]);
        out.clear();
        s.on_ack(rto_at + Time::from_ms(20), &ack(2000, &[(12_000, 13_000)]), &mut out);
        assert!(!s.frto);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.stats.spurious_rtos, 0);
        assert_eq!(out.first().map(|p| p.seq), Some(2000), "conventional recovery");
        assert_eq!(s.w.ssthresh, 5);
        assert!(s.scoreboard_consistent());
    }

    /// An RTO during a recovery (not repeated) does not run F-RTO (tcp_enter_loss:
    /// new_recovery false and icsk_retransmits 0).
    #[test]
    fn no_frto_for_an_rto_in_recovery() {
        let mut s = recovering(Time::from_ms(13));
        let d = s.rto_at.unwrap();
        let mut out = Vec::new();
        s.on_timer(d, &mut out);
        assert_eq!(s.state, CaState::Loss);
        assert!(!s.frto);
    }

    /// MuSher / AMuSe's window restore ends the RTO episode outright: nothing is left for an
    /// undo or F-RTO to act on, and in Open the loss probe is armed again.
    #[test]
    fn restore_window_ends_the_undo_episode() {
        let mut s = stalled_after_rto(None);
        s.set_loss_probes(true);
        let now = s.rto_at.unwrap();
        let mut out = Vec::new();
        s.restore_window(now, 10, 20, &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!((s.undo_marker, s.frto), (None, false));
        assert!(s.tlp_deadline().is_some());
    }
}
