//! What an ACK does, in the order of Linux's tcp_ack (net/ipv4/tcp_input.c, Linux 4.10): the
//! peer's window and timestamp, D-SACK detection (sender/undo.rs), the SACK scoreboard and the
//! cumulative ACK, the RTT samples (Karn's rule, RFC 7323 RTTM: tcp_clean_rtx_queue,
//! tcp_ack_update_rtt) and the algorithm's pkts_acked, the loss-recovery state machine
//! (tcp_fastretrans_alert, sender/recovery.rs), the end of a loss-probe episode
//! (sender/loss_probe.rs), the window update (tcp_cong_control: the algorithm's cong_control,
//! PRR or cong_avoid) and finally what the ACK lets the sender send.

use super::{AckFlags, TcpSender, Xmit};
use crate::packet::Packet;
use crate::tcp::cc::AckInfo;
use crate::tcp::scoreboard::SentSpan;
use crate::time::Time;

impl TcpSender {
    /// What the congestion control hears of an ACK (the same for pkts_acked and cong_avoid).
    fn ack_info(&self, now: Time, acked: u32, rtt: Option<Time>, prior_in_flight: u32) -> AckInfo {
        AckInfo {
            now,
            acked,
            rtt,
            prior_in_flight,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            mss: self.mss,
            pacing_rate_bps: self.stack_pacing_rate_bps(),
        }
    }

    /// Processes an ACK and sends what it allows.
    pub fn on_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if p.ack < self.snd_una || p.ack > self.snd_nxt {
            return; // old or not for anything we sent
        }
        let win_update = p.rwnd as u64 != self.peer_rwnd;
        self.peer_rwnd = p.rwnd as u64;
        self.ts_recent = p.ts_val_ns;
        // tcp_ack: a pending loss probe gives the timer back to the RTO (tcp_rearm_rto); the
        // probe is scheduled again at the end.
        self.tlp_at = None;
        let prior_in_flight = self.sb.in_flight();
        let prior_una = self.snd_una;
        self.sb.begin_ack(now, self.min_rtt);
        self.sb.set_ack_ts_ecr(p.ts_ecr_ns);

        let dsack = self.check_dsack(p);

        let (mut newly_sacked, mut sacked_span) = (0u32, SentSpan::default());
        for &(s, e) in p.sack_blocks() {
            if e <= p.ack {
                continue; // D-SACK or stale block
            }
            let (n, span) = self.sb.sack(s, e);
            newly_sacked += n;
            sacked_span.merge(span);
        }
        let (acked, acked_span) = self.sb.ack(p.ack);
        self.snd_una = p.ack;
        let advanced = self.snd_una > prior_una;
        let orig_end = match (acked_span.orig_end_min, sacked_span.orig_end_min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let flags = AckFlags {
            advanced,
            win_update,
            data_sacked: newly_sacked > 0,
            dsack,
            orig_sack_acked: orig_end.is_some_and(|e| e <= self.high_seq),
            is_dupack: !advanced && !win_update,
        };

        // RTT: srtt from the earliest segment this ACK covers (Linux seq_rtt), CC from the
        // latest (ca_rtt). Karn: retransmitted segments give none (filtered by the board), and
        // a cumulative ACK that covers any retransmitted data gives none from its other
        // segments either (FLAG_RETRANS_DATA_ACKED in tcp_clean_rtx_queue); newly SACKed
        // segments still may. Failing both, an ACK of new data gives the timestamp echo's RTT
        // (tcp_ack_update_rtt, RFC 7323 RTTM).
        let acked_first = if acked_span.retrans_acked { None } else { acked_span.first };
        let acked_last = if acked_span.retrans_acked { None } else { acked_span.last };
        //
        // The congestion control and the rate sample get ca_rtt as tcp_clean_rtx_queue computed
        // it, without the timestamp fallback: tcp_ack_update_rtt takes ca_rtt_us by value, so
        // its `seq_rtt_us = ca_rtt_us = <TS echo>` reaches tcp_update_rtt_min and the RTO
        // estimator but not pkts_acked (ack_sample.rtt_us) or rs->rtt_us (Linux 4.x
        // net/ipv4/tcp_input.c). An ACK that covers only retransmitted data gives the
        // algorithm no RTT sample.
        let ts_rtt = (advanced && p.ts_ecr_ns > 0 && now.ns() > p.ts_ecr_ns).then(|| Time(now.ns() - p.ts_ecr_ns));
        let ca_rtt = acked_last.or(sacked_span.last).map(|t| now - t);
        let seq_rtt = acked_first.or(sacked_span.first).map(|t| now - t);
        let (seq_rtt_est, ca_rtt_est) = match seq_rtt {
            Some(r) => (Some(r), ca_rtt),
            None => (ts_rtt, ts_rtt),
        };
        if let Some(r) = seq_rtt_est {
            // tcp_update_rtt_min (from ca_rtt) before the estimator, as tcp_ack_update_rtt.
            if let Some(c) = ca_rtt_est {
                self.min_rtt = Some(self.min_rtt.map_or(c, |m| m.min(c)));
            }
            self.rtt.sample(r);
            self.stats.rtt_ms.record(r.ms_f64());
        }
        // tcp_clean_rtx_queue calls pkts_acked (CUBIC's HyStart, Vegas's RTT count) before
        // tcp_fastretrans_alert changes the state and before tcp_cong_control.
        let newly_delivered = acked + newly_sacked;
        if ca_rtt.is_some() {
            let info = self.ack_info(now, newly_delivered, ca_rtt, prior_in_flight);
            self.cc.on_rtt(&mut self.w, &info);
        }

        if advanced {
            self.dupacks = 0;
            self.rto_retransmits = 0;
            self.arm_rto(now);
        } else if self.sb.packets_out() > 0 && (newly_sacked > 0 || p.nsack == 0) {
            self.dupacks += 1;
        }
        let (rexmit_new, newly_lost) = self.fastretrans_alert(now, p.ts_ecr_ns, flags);
        self.process_tlp_ack(now, p.ack, flags);

        self.delivered += newly_delivered as u64;
        self.lost += newly_lost as u64;
        let info = self.ack_info(now, newly_delivered, ca_rtt, prior_in_flight);
        if self.cc.owns_cwnd() {
            let rs = self.rate_gen(now, newly_delivered, newly_lost, prior_in_flight, ca_rtt);
            if self.cc.cong_control(&mut self.w, &rs).mark_app_limited {
                self.app_limited = (self.delivered + self.sb.in_flight() as u64).max(1);
            }
        } else if self.in_cwnd_reduction() {
            // tcp_cong_control: PRR in Recovery and CWR alike (tcp_cwnd_reduction).
            self.prr(newly_delivered, advanced, newly_lost);
        } else if advanced && self.cwnd_limited() {
            // tcp_may_raise_cwnd: grow only on in-order delivery (RFC 5681), by all that was
            // delivered (acked + SACKed).
            self.cc.cong_avoid(&mut self.w, &info);
        } else if advanced {
            self.cc.cong_avoid_not_cwnd_limited(&mut self.w, &info);
        }
        self.expand_sndbuf();
        // tcp_xmit_recovery: F-RTO step 2.b sends new data only; if none could go, F-RTO ends
        // and the lost segments are retransmitted as usual.
        if rexmit_new {
            self.xmit = Xmit::NewOnly;
            self.try_send(now, out);
            self.xmit = Xmit::Normal;
            if self.snd_nxt <= self.high_seq {
                self.frto = false;
                self.try_send(now, out);
            }
        } else {
            self.try_send(now, out);
        }
        if self.tlp_at.is_none() {
            self.schedule_loss_probe(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::testkit::*;

    /// Every RTO calls the algorithm's set_state hook with Loss, repeated ones included
    /// (tcp_enter_loss -> tcp_set_ca_state), and an ACK of retransmitted data gives the
    /// algorithm no RTT sample even when its timestamp echo gives the estimator one
    /// (tcp_ack_update_rtt takes ca_rtt_us by value; pkts_acked sees -1).
    #[test]
    fn every_rto_reaches_the_cc_and_timestamp_rtts_do_not() {
        let (mut s, log) = probed();
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        assert_eq!(log.lock().unwrap().rtts, vec![Some(Time::from_ms(10))]);
        let d1 = s.timer_deadline().unwrap();
        s.on_timer(d1, &mut out);
        let d2 = s.timer_deadline().unwrap();
        s.on_timer(d2, &mut out);
        assert_eq!(s.stats.rtos, 2);
        assert_eq!(log.lock().unwrap().states, vec![CaState::Loss, CaState::Loss], "one hook call per RTO");
        // The retransmitted head is ACKed with a timestamp echo: the estimator takes it ...
        let mut a = ack(2000, &[]);
        a.ts_ecr_ns = (d2 + Time::from_ms(1)).ns();
        s.on_ack(d2 + Time::from_ms(11), &a, &mut out);
        assert_eq!(s.rtt.backoff(), 0, "RTTM sample reset the backoff");
        // ... the congestion control does not.
        assert_eq!(log.lock().unwrap().rtts.len(), 1);
    }

    /// pkts_acked (on_rtt) comes before the state machine of the same ACK: the ACK that takes
    /// the sender from Disorder back to Open delivers its RTT sample while it is in Disorder.
    #[test]
    fn rtt_sample_precedes_the_state_change_of_its_ack() {
        let (mut s, log) = probed();
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(0, &[(1000, 2000)]), &mut out);
        assert_eq!(s.state, CaState::Disorder);
        let n = log.lock().unwrap().rtts.len();
        s.on_ack(Time::from_ms(11), &ack(5000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        let l = log.lock().unwrap();
        assert_eq!(l.rtts.len(), n + 1);
        assert_eq!(l.state_at_rtt[n], CaState::Disorder);
        assert_eq!(*l.states.last().unwrap(), CaState::Open);
    }
}
