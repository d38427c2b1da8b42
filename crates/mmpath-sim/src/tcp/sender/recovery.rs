//! Fast recovery as Linux 4.10 runs it (net/ipv4/tcp_input.c tcp_fastretrans_alert): when to
//! enter Recovery (tcp_time_to_recover: a proven loss, three duplicate ACKs, or FACK's distance
//! of the highest SACK above snd_una), the window reduction with Proportional Rate Reduction
//! (RFC 6937, tcp_init_cwnd_reduction / tcp_cwnd_reduction / tcp_end_cwnd_reduction), the loss
//! marking while recovering (FACK, tcp_fack = 1: tcp_update_scoreboard, tcp_mark_head_lost; RACK,
//! RFC 8985 and net/ipv4/tcp_recovery.c, with its reordering timer) and the way back to Open or
//! Disorder (tcp_try_keep_open). RACK runs in Recovery and Loss only, as in Linux 4.4-4.17; a
//! retransmission it finds lost again in Loss moves the sender to Recovery.

use super::{AckFlags, TcpSender};
use crate::packet::Packet;
use crate::tcp::cc::{CaState, INFINITE_SSTHRESH};
use crate::time::Time;

/// TCP_TIMEOUT_MIN (include/net/tcp.h, 2 jiffies: 8 ms at HZ = 250): tcp_rack_mark_lost adds
/// it to the reordering timer's timeout in jiffies.
const TCP_TIMEOUT_MIN_TICKS: u64 = 2;
/// tp->reordering's initial value, net.ipv4.tcp_reordering = 3 (the model has no reordering
/// estimator; Linux raises it, and turns FACK off, only when it detects reordering).
const REORDERING: u32 = 3;

impl TcpSender {
    /// tcp_fastretrans_alert (Linux 4.10) for one ACK, after the scoreboard has taken it: RFC 6675
    /// loss marking, the exit from Recovery, the Loss state (F-RTO, sender/rto.rs), FACK and RACK
    /// marking, D-SACK undo, and the entry into Recovery. Returns whether F-RTO asks for new
    /// data only (REXMIT_NEW) and how many segments were newly marked lost.
    pub(super) fn fastretrans_alert(&mut self, now: Time, ts_ecr_ns: u64, flags: AckFlags) -> (bool, u32) {
        let mut newly_lost = self.sb.mark_lost_by_sack();

        // Leave recovery once everything outstanding at its start is acknowledged, undoing the
        // reduction if it proved spurious (tcp_try_undo_recovery, then tcp_end_cwnd_reduction);
        // Loss goes through tcp_process_loss (F-RTO, undo, exit).
        let mut rexmit_new = false;
        match self.state {
            CaState::Recovery if self.snd_una >= self.high_seq => {
                if self.may_undo(ts_ecr_ns) {
                    self.undo_cwnd_reduction(false);
                }
                self.end_cwnd_reduction();
                self.w.cwnd_cnt = 0;
                self.set_state(now, CaState::Open);
            }
            CaState::Loss => rexmit_new = self.process_loss(now, ts_ecr_ns, flags),
            // CWR (a local congestion signal, `local_congestion`) ends once something above
            // high_seq is acknowledged (tcp_fastretrans_alert, state D).
            CaState::Cwr if self.snd_una > self.high_seq => {
                self.end_cwnd_reduction();
                self.set_state(now, CaState::Open);
            }
            _ => {}
        }
        // FACK in Recovery (tcp_fastretrans_alert's do_lost -> tcp_update_scoreboard): on a
        // duplicate ACK, or on a SACK or partial ACK with fackets_out > reordering.
        if self.state == CaState::Recovery
            && (flags.is_dupack || ((flags.data_sacked || flags.advanced) && self.sb.fackets_out() > REORDERING))
        {
            newly_lost += self.sb.mark_lost_fack(REORDERING, self.high_seq);
        }
        // RACK, in Recovery and Loss only, after the exit check and before the entry check, as
        // in Linux 4.4-4.17's tcp_fastretrans_alert (tcp_rack_mark_lost).
        if matches!(self.state, CaState::Recovery | CaState::Loss) {
            if self.sb.rack_advanced() {
                let prior_retrans = self.sb.retrans_out;
                newly_lost += self.rack_detect(now);
                self.lost_retransmit_in_loss(now, prior_retrans);
            }
        } else {
            self.reo_at = None;
        }
        // tcp_try_undo_dsack: in Recovery it ends the episode (tcp_try_keep_open); in Open and
        // Disorder it undoes a finished one whose retransmissions all proved spurious. Linux
        // runs it only for ACKs that reach tcp_fastretrans_alert (tcp_ack_is_dubious).
        if flags.dsack {
            let dubious = flags.is_dupack || flags.data_sacked || self.state != CaState::Open;
            let state = self.state;
            if state == CaState::Recovery && self.try_undo_dsack() {
                self.try_keep_open(now);
            } else if matches!(state, CaState::Open | CaState::Disorder) && dubious {
                self.try_undo_dsack();
            }
        }
        if matches!(self.state, CaState::Open | CaState::Disorder | CaState::Cwr) {
            // tcp_time_to_recover (Linux 4.10, tcp_fack = 1 by default until 4.15): a loss is
            // proven, or tcp_dupack_heuristics = fackets_out exceeds the reordering degree (the
            // highest SACK is more than 3 packets above snd_una); dupacks for SACK-less ACKs.
            if self.sb.lost_out > 0 || self.dupacks >= 3 || self.sb.fackets_out() > REORDERING {
                if self.sb.lost_out == 0 && self.sb.mark_head_lost() {
                    newly_lost += 1;
                }
                self.enter_recovery(now);
                // tcp_update_scoreboard(fast_rexmit): FACK marks below the highest SACK.
                newly_lost += self.sb.mark_lost_fack(REORDERING, self.high_seq);
            } else if self.state == CaState::Cwr {
                // tcp_try_to_open leaves CWR as it is.
            } else if self.sb.sacked_out > 0 || self.dupacks > 0 {
                self.set_state(now, CaState::Disorder);
            } else {
                self.set_state(now, CaState::Open);
            }
        }

        // tcp_fastretrans_alert's state D: in Open the episode's first-retransmission time is
        // forgotten once no retransmission is outstanding.
        if matches!(self.state, CaState::Open | CaState::Disorder) && !self.sb.any_retrans_done() {
            self.retrans_stamp = None;
        }
        (rexmit_new, newly_lost)
    }

    /// Whether the state is one of Linux's window reductions (tcp_in_cwnd_reduction).
    pub(super) fn in_cwnd_reduction(&self) -> bool {
        matches!(self.state, CaState::Cwr | CaState::Recovery)
    }

    /// tcp_current_ssthresh: the threshold to restore on undo, remembered as prior_ssthresh.
    pub(super) fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.w.ssthresh
        } else {
            self.w.ssthresh.max((self.w.cwnd >> 1) + (self.w.cwnd >> 2))
        }
    }

    /// tcp_init_cwnd_reduction: PRR starts from the current window with the algorithm's new
    /// ssthresh; an outstanding loss probe is forgotten.
    pub(super) fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.w.cwnd_cnt = 0;
        self.prior_cwnd = self.w.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.w.ssthresh = self.cc.ssthresh(&self.w);
    }

    /// tcp_end_cwnd_reduction (not for algorithms with cong_control): cwnd = ssthresh after
    /// CWR, or after Recovery unless the reduction was undone (undo_marker cleared).
    pub(super) fn end_cwnd_reduction(&mut self) {
        if self.cc.owns_cwnd() {
            return;
        }
        if self.state == CaState::Cwr || (self.undo_marker.is_some() && self.w.ssthresh < INFINITE_SSTHRESH) {
            self.w.cwnd = self.w.ssthresh;
        }
    }

    /// tcp_enter_recovery.
    fn enter_recovery(&mut self, now: Time) {
        self.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            self.prior_ssthresh = self.current_ssthresh();
            self.init_cwnd_reduction();
        }
        self.stats.fast_recoveries += 1;
        self.set_state(now, CaState::Recovery);
    }

    /// tcp_try_keep_open: Disorder while anything is SACKed, lost or retransmitted, else Open.
    pub(super) fn try_keep_open(&mut self, now: Time) {
        let st = if self.sb.sacked_out + self.sb.lost_out > 0 || self.sb.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.state != st {
            self.set_state(now, st);
            self.high_seq = self.snd_nxt;
        }
    }

    /// RFC 6937 PRR as Linux's tcp_cwnd_reduction computes it.
    pub(super) fn prr(&mut self, newly_delivered: u32, una_advanced: bool, newly_lost: u32) {
        if newly_delivered == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_delivered;
        let in_flight = self.sb.in_flight() as i64;
        let ssthresh = self.w.ssthresh as i64;
        let delta = ssthresh - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = ssthresh as u64 * self.prr_delivered as u64 + self.prior_cwnd as u64 - 1;
            (dividend / self.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_delivered as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.w.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// RACK's reordering window (tcp_rack_reo_wnd, RFC 8985 6.2 step 4): a quarter of the
    /// min RTT, at most srtt. (Before any RTT sample: 1 ms, Linux 4.18's floor.)
    fn reo_wnd(&self) -> Time {
        let w = self.min_rtt.map_or(Time::from_ms(1), |m| Time(m.ns() / 4));
        self.rtt.srtt().map_or(w, |s| w.min(s))
    }

    /// One RACK pass (tcp_rack_mark_lost): marks what it finds lost and (re)arms the
    /// reordering timer for segments still inside the window. Returns how many were marked.
    fn rack_detect(&mut self, now: Time) -> u32 {
        let (n, wait) = self.sb.rack_detect_loss(now, self.reo_wnd());
        self.reo_at = wait.map(|w| self.wheel.fire_at(now, self.wheel.ticks(w) + TCP_TIMEOUT_MIN_TICKS));
        n
    }

    /// tcp_rack_reo_timeout: the reordering window has passed; what is still undelivered is
    /// lost and goes out now (we are in Recovery or Loss already, so no state change).
    pub(super) fn rack_reo_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.reo_at = None;
        if matches!(self.state, CaState::Recovery | CaState::Loss) {
            let prior_retrans = self.sb.retrans_out;
            let n = self.rack_detect(now);
            if n > 0 {
                self.lost += n as u64;
                // tcp_rack_reo_timeout: entering Recovery here reduces at once, as if one
                // packet had been delivered (tcp_cwnd_reduction(sk, 1, ...)).
                if self.lost_retransmit_in_loss(now, prior_retrans) && !self.cc.owns_cwnd() {
                    self.prr(1, false, n);
                }
                self.try_send(now, out);
            }
        }
    }

    /// tcp_fastretrans_alert in the Loss state: "Change state if cwnd is undone or retransmit
    /// is lost". When RACK finds a retransmission lost again (FLAG_LOST_RETRANS: retrans_out
    /// fell below `prior_retrans`), the sender leaves Loss for Recovery with a second window
    /// reduction (tcp_enter_recovery -> tcp_init_cwnd_reduction: ssthresh from the CC at the
    /// current cwnd, PRR from here). Linux >= 4.4 (net/ipv4/tcp_input.c). Returns whether it did.
    fn lost_retransmit_in_loss(&mut self, now: Time, prior_retrans: u32) -> bool {
        if self.state == CaState::Loss && self.sb.retrans_out < prior_retrans {
            self.enter_recovery(now);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::testkit::*;

    /// A sender in Open with its initial window of 10 (1000-byte segments) in flight at 0 ms.
    fn sent_ten() -> TcpSender {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(s.packets_out(), 10);
        s
    }

    /// `sent_ten` after a local congestion signal at 1 ms, with an empty output list.
    fn in_cwr() -> (TcpSender, Vec<Packet>) {
        let mut s = sent_ten();
        s.local_congestion(Time::from_ms(1));
        (s, Vec::new())
    }

    /// tcp_enter_cwr (a local NET_XMIT_CN): CWR with the algorithm's ssthresh (Reno: half),
    /// cwnd left to PRR, high_seq at snd_nxt, no undo; a second signal in CWR changes nothing.
    #[test]
    fn local_congestion_enters_cwr_once() {
        let mut s = sent_ten();
        s.local_congestion(Time::from_ms(1));
        assert_eq!(s.state, CaState::Cwr);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (10, 5));
        assert_eq!(s.high_seq, 10_000);
        assert!(s.undo_marker.is_none());
        s.w.cwnd = 8;
        s.local_congestion(Time::from_ms(2));
        assert_eq!((s.state, s.w.ssthresh), (CaState::Cwr, 5), "no second reduction");
    }

    /// In CWR, PRR sets the window from what is in flight and delivered (tcp_cwnd_reduction,
    /// the segments sent counted in prr_out), and CWR ends once an ACK passes high_seq, with
    /// cwnd = ssthresh; an ACK exactly at high_seq keeps it (the CWR bit must reach the peer).
    #[test]
    fn cwr_reduces_by_prr_and_ends_above_high_seq() {
        let (mut s, mut out) = in_cwr();
        // Two segments ACKed: in flight 8 > ssthresh 5, so PRR's proportional part:
        // ceil(5 x 2 / 10) - 0 = 1 new segment, cwnd = 8 + 1.
        s.on_ack(Time::from_ms(10), &ack(2000, &[]), &mut out);
        assert_eq!(s.state, CaState::Cwr);
        assert_eq!(s.w.cwnd, 9);
        assert_eq!(out.len(), 1, "PRR lets one segment go");
        assert_eq!(s.prr_out, 1);
        // Everything up to high_seq (10 000) ACKed: still CWR.
        out.clear();
        s.on_ack(Time::from_ms(11), &ack(10_000, &[]), &mut out);
        assert_eq!(s.state, CaState::Cwr);
        // Past high_seq: Open, the window at ssthresh.
        out.clear();
        s.on_ack(Time::from_ms(12), &ack(11_000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.w.cwnd, 5);
    }

    /// Losses in CWR start fast recovery from it (tcp_fastretrans_alert's default case), with
    /// the reduction CWR began (no second ssthresh).
    #[test]
    fn recovery_starts_from_cwr_without_a_second_reduction() {
        let (mut s, mut out) = in_cwr();
        for k in 2..=4u64 {
            s.on_ack(Time::from_ms(10), &ack(0, &[(1000, k * 1000)]), &mut out);
        }
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.w.ssthresh, 5);
        assert_eq!(s.stats.fast_recoveries, 1);
    }

    /// An RTO in CWR keeps the ssthresh CWR set (tcp_enter_loss recomputes it only from Open
    /// or Disorder, or past the recovery point), and still starts F-RTO (a new recovery).
    #[test]
    fn an_rto_in_cwr_keeps_its_ssthresh() {
        let (mut s, mut out) = in_cwr();
        // The loss probe armed in Open goes first (its timer was set before CWR), then the RTO.
        for _ in 0..3 {
            if s.state == CaState::Loss {
                break;
            }
            let t = s.timer_deadline().expect("a timer is armed");
            s.on_timer(t, &mut out);
        }
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.stats.rtos, 1);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (1, 5));
        assert!(s.frto);
    }

    /// Three duplicate ACKs carrying SACK for segments above a hole trigger a fast
    /// retransmit of the hole, and the sender enters Recovery with ssthresh halved.
    #[test]
    fn sack_dupacks_trigger_fast_retransmit() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        let t = Time::from_ms(10);
        // Segment 0 lost; 1, 2, 3 arrive: three dup ACKs for 0 with growing SACK blocks.
        s.on_ack(t, &ack(0, &[(1000, 2000)]), &mut out);
        s.on_ack(t, &ack(0, &[(1000, 3000)]), &mut out);
        assert_eq!(s.state, CaState::Disorder);
        assert!(out.iter().all(|p| p.seq >= 10_000), "no retransmission before DupThresh");
        out.clear();
        s.on_ack(t, &ack(0, &[(1000, 4000)]), &mut out);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.w.ssthresh, 5);
        assert_eq!(out.first().map(|p| p.seq), Some(0), "the hole goes out first");
        assert_eq!(s.stats.retransmits, 1);
        assert_eq!(s.stats.fast_recoveries, 1);
        // The retransmission is ACKed with everything: recovery ends at cwnd = ssthresh.
        out.clear();
        let delivered = s.packets_out() - 3; // the three SACKed ones were counted already
        s.on_ack(Time::from_ms(20), &ack(s.snd_nxt, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.w.ssthresh, 5);
        // cwnd = ssthresh at exit (tcp_end_cwnd_reduction); the same ACK then feeds congestion
        // avoidance, as in Linux's tcp_ack: +1 per cwnd packets delivered.
        assert_eq!(s.w.cwnd, 5 + delivered / 5);
    }

    #[test]
    fn three_plain_dupacks_trigger_fast_retransmit_without_sack() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(1), &ack(1000, &[]), &mut out);
        out.clear();
        for _ in 0..3 {
            s.on_ack(Time::from_ms(2), &ack(1000, &[]), &mut out);
        }
        assert_eq!(s.state, CaState::Recovery);
        assert!(out.iter().any(|p| p.seq == 1000), "segment 1 retransmitted");
    }

    /// A retransmission that is dropped again is found by RACK and retransmitted again as
    /// soon as a segment sent more than reo_wnd after it (min RTT 10 ms / 4 = 2.5 ms) is
    /// SACKed: no RTO.
    #[test]
    fn lost_retransmission_is_retransmitted_again_without_rto() {
        let mut s = recovering(Time::from_ms(13));
        let mut out = Vec::new();
        // Segments 10-12 SACKed at 23 ms, 12 sent at 13 ms; the retransmission of 0 (10 ms)
        // is not.
        s.on_ack(Time::from_ms(23), &ack(0, &[(1000, 13_000)]), &mut out);
        assert_eq!(out.first().map(|p| p.seq), Some(0), "segment 0 goes out a third time");
        assert_eq!(s.stats.retransmits, 2);
        assert_eq!(s.stats.rtos, 0);
        assert_eq!(s.state, CaState::Recovery);
        assert!(s.scoreboard_consistent());
        // The second retransmission gets through: recovery ends without a timeout.
        let n = s.snd_nxt;
        s.on_ack(Time::from_ms(33), &ack(n, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.stats.rtos, 0);
        assert!(s.scoreboard_consistent());
    }

    /// Reordering inside reo_wnd: segments sent 1 ms after the retransmission arrive first.
    /// Nothing is marked; the reordering timer is armed and the retransmission, arriving 1 ms
    /// later, disarms it with no spurious retransmission.
    #[test]
    fn no_spurious_retransmission_within_reo_wnd() {
        let mut s = recovering(Time::from_ms(11));
        let mut out = Vec::new();
        s.on_ack(Time::from_ms(21), &ack(0, &[(1000, 13_000)]), &mut out);
        assert!(out.iter().all(|p| p.seq != 0), "not yet: inside the reordering window");
        assert_eq!(s.stats.retransmits, 1);
        // The reordering timer: the retransmission (10 ms) expires at 10 + RACK.rtt (10) +
        // reo_wnd (2.5) ms = 22.5 ms; armed at 21 ms (tick 5 at HZ = 250) for the 1.5 ms left,
        // one tick, plus TCP_TIMEOUT_MIN (2 ticks): expiry tick 8, run at tick 9 = 36 ms by the
        // timer wheel; well before the RTO.
        let reo = Time::from_ms(36);
        assert_eq!(s.timer_deadline(), Some(reo));
        // The retransmission arrives: everything below 13 000 is ACKed.
        s.on_ack(Time::from_ms(22), &ack(13_000, &[]), &mut out);
        assert!(out.iter().all(|p| p.seq != 0));
        s.on_timer(reo, &mut out);
        assert!(out.iter().all(|p| p.seq != 0), "a stale reordering timer does nothing");
        assert_eq!(s.stats.retransmits, 1);
        assert_eq!(s.stats.rtos, 0);
        assert!(s.scoreboard_consistent());
    }

    /// The same, but the retransmission never arrives: the reordering timer marks it lost and
    /// it is retransmitted again, long before the RTO.
    #[test]
    fn reordering_timer_retransmits_a_lost_retransmission() {
        let mut s = recovering(Time::from_ms(11));
        let mut out = Vec::new();
        s.on_ack(Time::from_ms(21), &ack(0, &[(1000, 13_000)]), &mut out);
        let reo = s.timer_deadline().unwrap();
        // As above: the reordering timer on the wheel, at tick 9 (HZ = 250).
        assert_eq!(reo, Time::from_ms(36));
        out.clear();
        s.on_timer(reo, &mut out);
        assert_eq!(out.first().map(|p| p.seq), Some(0));
        assert_eq!(s.stats.retransmits, 2);
        assert_eq!(s.stats.rtos, 0);
        assert_eq!(s.state, CaState::Recovery);
        assert!(s.scoreboard_consistent());
    }

    /// After an RTO, a retransmission that is lost again moves the sender from Loss to Recovery
    /// with a second reduction (Linux tcp_fastretrans_alert: "Change state if cwnd is undone or
    /// retransmit is lost"): ssthresh from the CC at the current window, high_seq at snd_nxt.
    #[test]
    fn lost_retransmission_in_loss_enters_recovery() {
        let mut s = plain_sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out); // srtt 10 ms
        let rto = s.timer_deadline().unwrap();
        out.clear();
        s.on_timer(rto, &mut out);
        assert_eq!((s.state, s.w.cwnd, s.w.ssthresh), (CaState::Loss, 1, 5));
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1000]);
        let loss_high = s.snd_nxt;
        // The retransmission of 1000 arrives: cwnd 2, 2000 and 3000 go out again.
        let t1 = rto + Time::from_ms(10);
        out.clear();
        s.on_ack(t1, &ack(2000, &[]), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![2000, 3000]);
        // 2000 arrives, 3000 does not: cwnd 3, 4000 and 5000 go out 10 ms after 3000.
        let t2 = t1 + Time::from_ms(10);
        out.clear();
        s.on_ack(t2, &ack(3000, &[]), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![4000, 5000]);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.stats.fast_recoveries, 0);
        // 4000 and 5000 are SACKed: RACK finds the retransmission of 3000 lost (sent 10 ms
        // before them, RACK.rtt 10 ms + reo_wnd 2.5 ms ago): Recovery, ssthresh = 3 / 2 -> 2.
        let t3 = t2 + Time::from_ms(10);
        out.clear();
        s.on_ack(t3, &ack(3000, &[(4000, 6000)]), &mut out);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.stats.fast_recoveries, 1);
        assert_eq!(s.w.ssthresh, 2);
        assert!(s.snd_nxt >= loss_high);
        assert_eq!(out.first().map(|p| p.seq), Some(3000), "3000 goes out a third time");
        assert_eq!(s.stats.rtos, 1);
        assert!(s.scoreboard_consistent());
    }

    // ---- FACK (Linux 4.10, tcp_fack = 1)

    /// A burst loss: segments 0-4 lost, 5 SACKed. fackets_out = 6 > reordering 3, so
    /// recovery starts on this first SACK (RFC 6675 alone would wait for three), and the
    /// segments more than 3 below the highest SACK (0, 1 and 2) are marked lost at once.
    #[test]
    fn fack_enters_recovery_on_the_first_distant_sack() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(0, &[(5000, 6000)]), &mut out);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.sb.fackets_out(), 6);
        assert_eq!(s.sb.lost_out, 3);
        assert_eq!(out.first().map(|p| p.seq), Some(0));
        // A SACK just above the head is not enough (fackets_out 2).
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(0, &[(1000, 2000)]), &mut out);
        assert_eq!(s.state, CaState::Disorder);
        assert!(s.scoreboard_consistent());
    }
}
