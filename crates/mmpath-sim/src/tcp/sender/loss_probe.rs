//! Tail loss probes on the sender's side (Linux 4.10 net/ipv4/tcp_output.c
//! tcp_schedule_loss_probe, tcp_send_loss_probe; tcp_input.c tcp_process_tlp_ack;
//! net.ipv4.tcp_early_retrans = 3): in Open, a PTO (tcp/tlp.rs) after the last transmission or
//! ACK, one new segment beyond cwnd or the last segment again; a loss the probe repaired costs
//! a reduction through CWR.

use super::{AckFlags, TcpSender, Xmit};
use crate::packet::Packet;
use crate::tcp::cc::CaState;
use crate::tcp::tlp;
use crate::time::Time;

impl TcpSender {
    /// tcp_process_tlp_ack (Linux 4.10): the end of a probe episode. A D-SACK or a pure
    /// duplicate ACK at tlp_high_seq says the original and the probe both arrived (no loss);
    /// an ACK beyond tlp_high_seq without one says the probe repaired a loss, which costs a
    /// window reduction (tcp_init_cwnd_reduction, CWR, tcp_end_cwnd_reduction,
    /// tcp_try_keep_open).
    pub(super) fn process_tlp_ack(&mut self, now: Time, ack: u64, f: AckFlags) {
        let Some(h) = self.tlp_high_seq else { return };
        if ack < h {
            return;
        }
        if f.dsack {
            self.tlp_high_seq = None;
        } else if ack > h {
            self.init_cwnd_reduction();
            self.set_state(now, CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open(now);
            self.stats.tlp_recoveries += 1;
        } else if !(f.advanced || f.win_update || f.data_sacked) {
            self.tlp_high_seq = None;
        }
    }

    /// tcp_schedule_loss_probe (Linux 4.10 tcp_output.c): in Open with data outstanding, when
    /// the sender is limited by cwnd or by the application (not with room in cwnd and data
    /// waiting), arm the probe timer at the PTO (see `tlp`), in the RTO's place.
    pub(super) fn schedule_loss_probe(&mut self, now: Time) {
        self.tlp_at = None;
        let Some(rto_at) = self.rto_at else { return };
        if !self.tlp_enabled {
            return;
        }
        if self.sb.is_empty() {
            return;
        }
        if self.tlp_modern {
            // Linux 6.x: Open or CWR, no cwnd / write queue test.
            if self.state != CaState::Open && self.state != CaState::Cwr {
                return;
            }
        } else if self.state != CaState::Open || (self.w.cwnd > self.sb.in_flight() && self.has_send_head()) {
            return;
        }
        let left = Some(rto_at.saturating_sub(now));
        let pto = if self.tlp_modern {
            tlp::probe_timeout_modern(self.rtt.srtt(), self.sb.packets_out(), self.rtt.min_rto(), left)
        } else {
            tlp::probe_timeout(self.rtt.srtt(), self.sb.packets_out(), left)
        };
        // tcp_schedule_loss_probe arms the retransmission timer with the PTO in jiffies
        // (usecs_to_jiffies): the wheel runs it (tcp/timer_wheel.rs). The PTO is bounded by
        // what is left of the RTO, so on the one timer the probe never runs after the RTO would
        // have (the rounding of the two to ticks and buckets must not reverse them).
        self.tlp_at = Some(self.wheel.after(now, pto).min(rto_at));
    }

    /// tcp_send_loss_probe: one new segment if the peer's window allows one (cwnd may be
    /// exceeded), else the highest segment sent again, unless a probe retransmission is
    /// outstanding already (tlp_high_seq) or the previous transmission of that segment has not
    /// left the host yet (skb_still_in_host_queue: approximated by this socket having packets
    /// in its first hop's queue, which is FIFO, so the newest transmission is among them).
    /// Afterwards the RTO runs from now if a probe went out, else it keeps its deadline.
    pub(super) fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut sent = false;
        let next_len = (self.app_limit.saturating_sub(self.snd_nxt)).min(self.mss as u64);
        if self.has_send_head() && self.snd_nxt + next_len <= self.snd_una + self.peer_rwnd {
            let before = self.sb.packets_out();
            self.xmit = Xmit::Probe;
            self.try_send(now, out);
            self.xmit = Xmit::Normal;
            sent = self.sb.packets_out() > before;
        } else if self.tlp_high_seq.is_none() && self.tsq_queued == 0 {
            let none_in_flight = self.sb.in_flight() == 0;
            let tx = self.tx_stamp(now);
            if let Some(seg) = self.sb.probe_tail(now, tx) {
                if none_in_flight {
                    self.tx_start(now);
                }
                out.push(self.data_packet(&seg, now));
                self.stats.retransmits += 1;
                self.stats.segments_sent += 1;
                self.stats.bytes_sent += seg.len as u64;
                self.after_send(now, seg.len);
                self.tlp_high_seq = Some(self.snd_nxt);
                sent = true;
            }
        }
        if sent {
            self.stats.tlp_probes += 1;
            self.arm_rto(now);
        } else if self.rto_at.is_some_and(|t| t <= now) {
            // tcp_rearm_rto with the probe timer pending and the RTO's time passed: a full RTO.
            self.arm_rto(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::testkit::*;

    /// A sender limited by cwnd: the probe is one new segment beyond cwnd, 2 x srtt after the
    /// last transmission, and the RTO then runs from the probe.
    #[test]
    fn tlp_sends_new_data_beyond_cwnd() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out); // srtt 10 ms, cwnd 11
        assert_eq!(out.len(), 2);
        assert_eq!(s.in_flight(), s.w.cwnd, "cwnd-limited");
        // PTO = 2 x srtt = 20 ms = 5 ticks at HZ = 250, armed in tick 2: run at tick 8.
        let pto_at = Time::from_ms(32);
        assert_eq!(s.tlp_deadline(), Some(pto_at), "PTO = 2 x srtt, on the timer wheel");
        assert_eq!(s.timer_deadline(), Some(pto_at));
        out.clear();
        s.on_timer(pto_at, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![12_000], "a new segment");
        assert_eq!(s.in_flight(), s.w.cwnd + 1, "cwnd exceeded by the probe");
        assert_eq!(s.stats.tlp_probes, 1);
        assert_eq!(s.stats.retransmits, 0);
        assert_eq!(s.tlp_high_seq, None, "only retransmitted probes are tracked");
        assert_eq!(s.timer_deadline(), Some(s.rto_deadline(pto_at)), "RTO from the probe");
        assert_eq!(s.stats.rtos, 0);
    }

    /// An application-limited sender: the probe retransmits the highest segment sent.
    #[test]
    fn tlp_retransmits_the_last_segment_when_no_new_data() {
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        assert!(out.is_empty());
        let pto_at = Time::from_ms(32); // 2 x srtt on the wheel, as above
        assert_eq!(s.tlp_deadline(), Some(pto_at));
        // Still in the host's queue: no probe retransmission (skb_still_in_host_queue).
        s.on_timer(pto_at, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.stats.tlp_probes, 0);
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        left_host(&mut s);
        s.on_timer(pto_at, &mut out);
        assert_eq!(out.iter().map(|p| (p.seq, p.len)).collect::<Vec<_>>(), vec![(9000, 1000)]);
        assert_eq!((s.stats.tlp_probes, s.stats.retransmits), (1, 1));
        assert_eq!(s.tlp_high_seq, Some(10_000));
        assert_eq!(s.state, CaState::Open);
        assert!(s.scoreboard_consistent());
    }

    /// With the peer's window closed to new data and cwnd full, the probe is the last segment.
    #[test]
    fn tlp_retransmits_the_last_segment_when_rwnd_is_closed() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        // cwnd 11; the window ends at 12 000: two new segments fill both.
        s.on_ack(Time::from_ms(10), &with_rwnd(ack(1000, &[]), 11_000), &mut out);
        assert_eq!(s.snd_nxt, 12_000);
        out.clear();
        left_host(&mut s);
        s.on_timer(s.tlp_deadline().expect("armed"), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![11_000]);
        assert_eq!(s.tlp_high_seq, Some(12_000));
    }

    /// One packet out: the PTO allows for a delayed ACK (1.5 srtt + 200 ms), and a probe
    /// never comes later than the RTO: here it takes the RTO's place.
    #[test]
    fn tlp_with_one_packet_out_replaces_the_rto() {
        let mut s = sender(1000);
        s.set_app_limit(2000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        // 1.5 x 10 + 200 = 215 ms > RTO (10 + max(4 x 5, 200) = 210 ms): the probe fires then
        // (both on the timer wheel: 53 ticks from tick 2, level 0, run at tick 56).
        let rto_at = s.rto_deadline(Time::from_ms(10));
        assert_eq!(rto_at, Time::from_ms(224));
        assert_eq!(s.tlp_deadline(), Some(rto_at));
        out.clear();
        left_host(&mut s);
        s.on_timer(rto_at, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1000]);
        assert_eq!((s.stats.tlp_probes, s.stats.rtos), (1, 0), "a probe, not a timeout");
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.timer_deadline(), Some(s.rto_deadline(rto_at)));
    }

    /// At most one probe retransmission is outstanding: a later probe timer only re-arms.
    #[test]
    fn one_tlp_retransmission_at_a_time() {
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        left_host(&mut s);
        s.on_timer(s.tlp_deadline().expect("armed"), &mut out);
        assert_eq!(s.stats.tlp_probes, 1);
        // A partial ACK arms the probe again ...
        s.on_ack(Time::from_ms(40), &ack(5000, &[]), &mut out);
        let t = s.tlp_deadline().expect("re-armed in Open");
        out.clear();
        s.on_timer(t, &mut out);
        // ... but it sends nothing while the first probe's episode is open.
        assert!(out.is_empty());
        assert_eq!(s.stats.tlp_probes, 1);
        assert!(s.timer_deadline().is_some_and(|d| d > t), "the RTO stays armed");
    }

    /// No probe outside Open (SACKed data: Disorder), nor with room in cwnd and data waiting.
    #[test]
    fn tlp_only_in_open_and_when_limited() {
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[(2000, 3000)]), &mut out);
        assert_eq!(s.state, CaState::Disorder);
        assert_eq!(s.tlp_deadline(), None);
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        s.try_send(Time::ZERO, &mut out);
        // Nothing may be sent (window closed) though cwnd has room: no probe.
        s.on_ack(Time::from_ms(10), &with_rwnd(ack(1000, &[]), 9000), &mut out);
        assert!(s.in_flight() < s.w.cwnd);
        assert_eq!(s.tlp_deadline(), None);
    }

    /// The probe repaired the tail loss: the ACK beyond tlp_high_seq without a D-SACK costs a
    /// window reduction through CWR (ssthresh from the algorithm, cwnd = ssthresh).
    #[test]
    fn tlp_that_repairs_a_loss_reduces_the_window() {
        let (mut s, log) = probed();
        s.set_loss_probes(true);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(9000, &[]), &mut out); // segment 9 lost
        let cwnd = s.w.cwnd;
        let t = s.tlp_deadline().unwrap();
        left_host(&mut s);
        s.on_timer(t, &mut out);
        assert_eq!(s.tlp_high_seq, Some(10_000));
        // The probe's ACK reaches tlp_high_seq: not yet decided.
        s.on_ack(t + Time::from_ms(10), &ack(10_000, &[]), &mut out);
        assert_eq!(s.stats.tlp_recoveries, 0);
        let cwnd2 = s.w.cwnd;
        s.set_app_limit(12_000);
        s.try_send(t + Time::from_ms(10), &mut out);
        s.on_ack(t + Time::from_ms(20), &ack(12_000, &[]), &mut out);
        assert_eq!(s.stats.tlp_recoveries, 1);
        assert_eq!(s.tlp_high_seq, None);
        assert_eq!(s.w.ssthresh, (cwnd2 / 2).max(2));
        assert_eq!(s.w.cwnd, s.w.ssthresh, "tcp_end_cwnd_reduction in CWR");
        assert!(cwnd2 >= cwnd);
        assert_eq!(s.state, CaState::Open);
        let l = log.lock().unwrap();
        assert_eq!(l.states, vec![CaState::Cwr, CaState::Open], "passes through CWR");
    }

    /// Original and probe both arrived: the receiver's D-SACK ends the episode, no reduction.
    #[test]
    fn tlp_dsack_means_no_loss() {
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(9000, &[]), &mut out);
        let t = s.tlp_deadline().unwrap();
        left_host(&mut s);
        s.on_timer(t, &mut out);
        s.on_ack(t + Time::from_ms(1), &ack(10_000, &[]), &mut out); // the original
        s.on_ack(t + Time::from_ms(10), &ack(10_000, &[(9000, 10_000)]), &mut out); // the probe
        assert_eq!(s.tlp_high_seq, None);
        let (cwnd, ssthresh) = (s.w.cwnd, s.w.ssthresh);
        s.set_app_limit(12_000);
        s.try_send(t + Time::from_ms(10), &mut out);
        s.on_ack(t + Time::from_ms(20), &ack(12_000, &[]), &mut out);
        assert_eq!(s.stats.tlp_recoveries, 0);
        assert_eq!(s.w.ssthresh, ssthresh);
        assert!(s.w.cwnd >= cwnd);
    }

    /// The tail of a window is lost: the loss probe (a new segment) is SACKed, FACK starts
    /// recovery and RACK finds the rest, without waiting for the RTO.
    #[test]
    fn tlp_turns_a_tail_loss_into_fast_recovery() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out); // 1..12 000 then lost
        let t = s.tlp_deadline().unwrap();
        out.clear();
        s.on_timer(t, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![12_000]);
        out.clear();
        s.on_ack(t + Time::from_ms(10), &ack(1000, &[(12_000, 13_000)]), &mut out);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(out.first().map(|p| p.seq), Some(1000), "fast retransmit, no RTO");
        assert_eq!(s.stats.rtos, 0);
        assert!(s.scoreboard_consistent());
    }

    /// With room in cwnd and data held back by the peer's window, Linux 4.10 arms no probe
    /// (the RTO stays pending); current kernels (set_modern_loss_probe, used by upstream MPTCP
    /// subflows) arm it all the same.
    #[test]
    fn modern_rule_probes_with_cwnd_room_and_data_waiting() {
        for modern in [false, true] {
            let mut s = sender(1000);
            s.set_modern_loss_probe(modern);
            s.set_app_limit(u64::MAX);
            let mut out = Vec::new();
            s.try_send(Time::ZERO, &mut out);
            out.clear();
            // ACK of the first 2 segments, the window ending at what is already sent.
            s.on_ack(Time::from_ms(10), &with_rwnd(ack(2000, &[]), 8000), &mut out);
            assert!(out.is_empty(), "the peer's window holds the rest back");
            assert!(s.w.cwnd > s.sb.in_flight() && s.has_send_head());
            assert_eq!(s.tlp_deadline().is_some(), modern, "modern {modern}");
            assert!(s.timer_deadline().is_some());
        }
    }
}
