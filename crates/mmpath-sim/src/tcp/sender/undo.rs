//! Undoing a window reduction that proved spurious (Linux 4.10 net/ipv4/tcp_input.c): the
//! evidence is D-SACK (RFC 2883, tcp_check_dsack: every retransmission of the episode reported
//! as a duplicate, undo_retrans == 0) or timestamps (Eifel, RFC 3522, tcp_packet_delayed: the
//! ACK echoes a timestamp older than the first retransmission), weighed by tcp_may_undo; F-RTO's
//! verdict (sender/rto.rs) is the third. tcp_undo_cwnd_reduction gives back the window through
//! the algorithm's undo_cwnd and ssthresh from prior_ssthresh.

use super::TcpSender;
use crate::packet::Packet;
use crate::tcp::cc::CaState;
use crate::time::Time;

impl TcpSender {
    /// tcp_check_dsack: whether this ACK carries a D-SACK (RFC 2883). A first block below the
    /// ACK or inside the second one is a D-SACK. Each one takes a retransmission off
    /// undo_retrans (Linux counts per block for data already ACKed and per segment above; our
    /// segments are single, so one per block).
    pub(super) fn check_dsack(&mut self, p: &Packet) -> bool {
        let blocks = p.sack_blocks();
        let dsack = match blocks {
            [(s0, e0), rest @ ..] => *s0 < p.ack || rest.first().is_some_and(|&(s1, e1)| *e0 <= e1 && *s0 >= s1),
            [] => false,
        };
        if dsack && self.undo_retrans > 0 && self.undo_marker.is_some_and(|m| blocks[0].1 > m) {
            self.undo_retrans -= 1;
        }
        dsack
    }

    /// tcp_init_undo: a reduction starts that may later prove spurious.
    pub(super) fn init_undo(&mut self) {
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = if self.sb.retrans_out > 0 { self.sb.retrans_out as i32 } else { -1 };
    }

    /// tcp_packet_delayed (Eifel, RFC 3522): the ACK echoes a timestamp older than the first
    /// retransmission, so it was the original that arrived. No retransmission at all counts
    /// as delayed too.
    fn packet_delayed(&self, ts_ecr_ns: u64) -> bool {
        match self.retrans_stamp {
            None => true,
            Some(t) => ts_ecr_ns > 0 && ts_ecr_ns < t.ns(),
        }
    }

    /// tcp_may_undo: a reduction is spurious if every retransmission was D-SACKed
    /// (undo_retrans == 0) or the timestamps show the originals arrived.
    pub(super) fn may_undo(&self, ts_ecr_ns: u64) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(ts_ecr_ns))
    }

    /// tcp_undo_cwnd_reduction: the window before the reduction comes back (the algorithm's
    /// undo_cwnd; ssthresh back to prior_ssthresh if that is higher), optionally with the loss
    /// marks of an RTO cleared.
    pub(super) fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_lost();
        }
        if self.prior_ssthresh > 0 {
            self.w.cwnd = self.cc.undo_cwnd(&self.w).max(1);
            if self.prior_ssthresh > self.w.ssthresh {
                self.w.ssthresh = self.prior_ssthresh;
            }
        }
        self.undo_marker = None;
        self.stats.undos += 1;
    }

    /// tcp_try_undo_loss: leave Loss with the window restored, on F-RTO's verdict or when
    /// tcp_may_undo holds.
    pub(super) fn try_undo_loss(&mut self, now: Time, frto_undo: bool, ts_ecr_ns: u64) -> bool {
        if !(frto_undo || self.may_undo(ts_ecr_ns)) {
            return false;
        }
        self.undo_cwnd_reduction(true);
        if frto_undo {
            self.stats.spurious_rtos += 1;
        }
        self.rto_retransmits = 0;
        self.reo_at = None;
        self.set_state(now, CaState::Open);
        true
    }

    /// tcp_try_undo_dsack: every retransmission of the episode was D-SACKed.
    pub(super) fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use crate::tcp::sender::testkit::*;

    /// Eifel (tcp_packet_delayed): the first ACK after the RTO echoes the original's
    /// timestamp, older than the retransmission: undo at once (tcp_try_undo_loss).
    #[test]
    fn timestamps_undo_a_spurious_rto() {
        let mut s = stalled_after_rto(None);
        // When the RTO fired (stalled_after_rto: armed at 10 ms, the 210 ms RTO on the wheel).
        let rto_at = Time::from_ms(224);
        let mut a = ack(2000, &[]);
        a.ts_ecr_ns = 1; // segment 1's first transmission, at time 0 (+1 ns)
        let mut out = Vec::new();
        s.on_ack(rto_at + Time::from_ms(1), &a, &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.stats.undos, 1);
        assert_eq!(s.stats.spurious_rtos, 0, "not F-RTO's verdict");
        // The echo of the retransmission itself does not undo.
        let mut s = stalled_after_rto(None);
        let mut a = ack(2000, &[]);
        a.ts_ecr_ns = rto_at.ns();
        s.on_ack(rto_at + Time::from_ms(10), &a, &mut out);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.stats.undos, 0);
    }

    /// D-SACK undo: the fast retransmission of segment 0 arrives after the original; its
    /// D-SACK shows every retransmission of the episode was spurious and the reduction is
    /// undone.
    #[test]
    fn dsack_undoes_a_spurious_fast_recovery() {
        let mut s = recovering(Time::from_ms(13));
        let before = s.w.ssthresh;
        assert_eq!(s.undo_retrans, 1);
        let mut out = Vec::new();
        // The original segment 0 arrives late: everything up to 14 000 is ACKed ...
        s.on_ack(Time::from_ms(20), &ack(14_000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.stats.undos, 0, "no evidence yet (no timestamps)");
        let reduced = s.w.ssthresh;
        assert_eq!(reduced, before);
        // ... then the retransmission, which the receiver reports as a duplicate.
        s.on_ack(Time::from_ms(21), &ack(14_000, &[(0, 1000)]), &mut out);
        assert_eq!(s.undo_retrans, 0);
        assert_eq!(s.stats.undos, 1);
        assert_eq!(s.w.ssthresh, INFINITE_SSTHRESH, "prior_ssthresh restored");
        assert!(s.w.cwnd >= 2 * reduced);
    }
}
