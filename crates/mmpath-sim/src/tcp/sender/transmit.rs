//! What the sender may send now, and sending it: Linux's tcp_write_xmit and the checks it makes
//! before each segment (net/ipv4/tcp_output.c, Linux 4.10 unless noted): the congestion window
//! (tcp_cwnd_test), the peer's receive window (tcp_snd_wnd_test), the send buffer
//! (tcp_sndbuf_expand), Nagle for a sub-MSS tail (RFC 896, tcp_nagle_test), TCP Small Queues
//! (tcp_small_queue_check) and the pacing schedule (tcp_pacing_check, sender/pacing.rs);
//! retransmissions go before new data (tcp_xmit_retransmit_queue). Each transmission stamps the
//! delivery-rate state on the segment (sender/rate.rs) and advances the pacing schedule.

use super::{TcpSender, Xmit};
use crate::packet::{Kind, Packet, Way, TCP_HEADER_BYTES};
use crate::scenario::BufSize;
use crate::tcp::cc::CaState;
use crate::tcp::scoreboard::Seg;
use crate::time::Time;

impl TcpSender {
    /// Whether the socket is waiting for its queued packets to leave the host (TSQ).
    pub fn tsq_throttled(&self) -> bool {
        self.tsq_throttled
    }

    /// A packet of `bytes` (payload + headers, as counted when sent) left the first hop (transmitted or dropped): true if the socket was
    /// throttled and may send again (tcp_tsq_handler), which the caller does with try_send.
    pub fn tsq_done(&mut self, bytes: u64) -> bool {
        self.tsq_queued = self.tsq_queued.saturating_sub(bytes);
        std::mem::take(&mut self.tsq_throttled)
    }

    /// A queued packet of `bytes` was dropped before leaving the host.
    pub fn tsq_release(&mut self, bytes: u64) {
        self.tsq_queued = self.tsq_queued.saturating_sub(bytes);
    }

    /// Whether the first hop has gone away and frees what it is given (link/seam.rs `Gone`):
    /// then nothing waits below TCP, and the socket sends as far as its window allows, every
    /// segment lost.
    pub fn set_first_hop_gone(&mut self, gone: bool) {
        self.first_hop_gone = gone;
    }

    /// tcp_enter_cwr: the first hop answered NET_XMIT_CN (a no-op qdisc: the interface lost
    /// its carrier), which tcp_transmit_skb takes as local congestion. Outside a reduction the
    /// window starts one (ssthresh from the algorithm, PRR from the current window, high_seq
    /// at snd_nxt) in CWR, with no undo; CWR, Recovery and Loss keep theirs.
    pub fn local_congestion(&mut self, now: Time) {
        self.prior_ssthresh = 0;
        if matches!(self.state, CaState::Open | CaState::Disorder) {
            self.undo_marker = None;
            self.init_cwnd_reduction();
            self.set_state(now, CaState::Cwr);
        }
    }

    /// tcp_small_queue_check (Linux 4.x tcp_output.c): at most max(2 packets, ~1 ms at the
    /// pacing rate) and never more than tcp_limit_output_bytes may sit below TCP.
    fn tsq_blocked(&mut self) -> bool {
        if self.tsq_limit == 0 || self.first_hop_gone {
            return false;
        }
        let pkt = (self.mss + TCP_HEADER_BYTES) as u64;
        let per_ms = self.stack_pacing_rate_memo() / 8 / 1024; // sk_pacing_rate >> 10
        let limit = per_ms.max(2 * pkt).min(self.tsq_limit);
        if self.tsq_queued > limit {
            self.tsq_throttled = true;
            return true;
        }
        false
    }

    /// Bytes of data the socket may hold unacknowledged (send buffer): SO_SNDBUF as given, or
    /// autotuned (tcp/sndbuf.rs: grown with the window, never shrunk by a cut).
    pub(super) fn sndbuf_bytes(&self) -> u64 {
        match self.sndbuf {
            BufSize::Bytes(b) => b,
            BufSize::Auto => self.sndbuf_auto.at(self.w.cwnd, self.mss, self.cc.sndbuf_expand(), self.wmem_max),
        }
    }

    /// tcp_sndbuf_expand after an ACK (tcp_new_space): the buffer keeps the largest size the
    /// window has asked for.
    pub(super) fn expand_sndbuf(&mut self) {
        if self.sndbuf == BufSize::Auto {
            self.sndbuf_auto.grow(self.w.cwnd, self.mss, self.cc.sndbuf_expand(), self.wmem_max);
        }
    }

    /// Unsent data the socket holds (tcp_send_head != NULL): below the application's limit
    /// and within the send buffer.
    pub(super) fn has_send_head(&self) -> bool {
        self.snd_nxt < self.app_limit && self.snd_nxt - self.snd_una < self.sndbuf_bytes()
    }

    /// After a (re)transmission of `len` bytes: TSQ counts what this socket has below it from
    /// the moment it is sent (tcp_transmit_skb charges sk_wmem_alloc, tcp_wfree releases it),
    /// and the pacing schedule advances (sender/pacing.rs).
    pub(super) fn after_send(&mut self, now: Time, len: u32) {
        self.tsq_queued += (len + TCP_HEADER_BYTES) as u64;
        self.advance_departure(now, len);
        self.note_data_sent(now);
    }

    /// Linux tcp_is_cwnd_limited.
    pub(super) fn cwnd_limited(&self) -> bool {
        if self.w.in_slow_start() {
            self.w.cwnd < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        }
    }

    pub(super) fn data_packet(&self, seg: &Seg, now: Time) -> Packet {
        let mut p = Packet::empty(self.flow, Kind::Data, Way::Forward);
        p.seq = seg.start;
        p.len = seg.len;
        p.size_bytes = seg.len + TCP_HEADER_BYTES;
        p.ts_val_ns = now.ns();
        p.ts_ecr_ns = self.ts_recent;
        p.psh = seg.start < self.pushed_seq && self.pushed_seq <= seg.start + seg.len as u64;
        p
    }

    /// Sends what the window, the receive window, the send buffer and the application allow.
    pub fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut cwnd_full = false;
        if self.pace_wait.is_some_and(|t| t <= now) {
            self.pace_wait = None;
        }
        // Each call builds new skbs (tcp_write_xmit): the last one ended with the last call.
        self.skb_segs_left = 0;
        let mut out_of_data = false;
        let mut sent_new = 0u32;
        let probe = self.xmit == Xmit::Probe;
        loop {
            if self.sb.in_flight() >= self.w.cwnd {
                cwnd_full = true;
                // tcp_write_xmit: "Force out a loss probe pkt."
                if !probe {
                    break;
                }
            }
            let may_retx = self.xmit == Xmit::Normal && self.sb.lost_pending > 0;
            if may_retx && self.pace_blocked(now) {
                break;
            }
            if self.tsq_blocked() {
                break;
            }
            // Read before the retransmission counts as in flight (tcp_event_data_sent runs in
            // the transmission, before tcp_retransmit_skb adds it to retrans_out).
            let none_in_flight = may_retx && self.sb.in_flight() == 0;
            let retx = if may_retx {
                let tx = self.tx_stamp(now);
                self.sb.take_retransmission(now, tx)
            } else {
                None
            };
            if let Some(seg) = retx {
                if none_in_flight {
                    self.tx_start(now);
                }
                out.push(self.data_packet(&seg, now));
                // tcp_retransmit_skb: the first retransmission's time (Eifel's reference) and
                // one more retransmission a D-SACK may show spurious.
                self.retrans_stamp.get_or_insert(now);
                self.undo_retrans = self.undo_retrans.max(0) + 1;
                self.stats.retransmits += 1;
                self.stats.segments_sent += 1;
                self.stats.bytes_sent += seg.len as u64;
                self.after_send(now, seg.len);
                if self.in_cwnd_reduction() {
                    self.prr_out += 1;
                }
                if seg.start == self.snd_una {
                    self.arm_rto(now);
                }
                continue;
            }
            if self.snd_nxt >= self.app_limit {
                out_of_data = true;
                break;
            }
            while self.boundaries.front().is_some_and(|&b| b <= self.snd_nxt) {
                self.boundaries.pop_front();
            }
            let record_end = self.boundaries.front().copied().unwrap_or(u64::MAX).min(self.app_limit);
            let len = (record_end - self.snd_nxt).min(self.mss as u64) as u32;
            let end = self.snd_nxt + len as u64;
            if end > self.snd_una + self.peer_rwnd {
                break;
            }
            if end - self.snd_una > self.sndbuf_bytes() {
                break;
            }
            // Nagle (RFC 896): a sub-MSS segment waits while anything is unacknowledged, unless
            // it ends a record that more data follows.
            if len < self.mss && end == self.app_limit && !self.sb.is_empty() && !probe {
                out_of_data = true;
                break;
            }
            if self.pace_blocked(now) {
                break;
            }
            let was_idle = self.sb.is_empty();
            if was_idle {
                self.restart_after_idle(now);
            }
            if self.sb.in_flight() == 0 {
                self.tx_start(now);
            }
            let tx = self.tx_stamp(now);
            let seg = Seg { start: self.snd_nxt, len, sent: now, flags: 0, tx };
            self.sb.push(seg);
            self.snd_nxt = end;
            out.push(self.data_packet(&seg, now));
            self.stats.segments_sent += 1;
            self.stats.bytes_sent += len as u64;
            self.after_send(now, len);
            // tcp_write_xmit / tcp_xmit_retransmit_queue: PRR counts what goes out in any
            // window reduction (tcp_in_cwnd_reduction: CWR or Recovery).
            if self.in_cwnd_reduction() {
                self.prr_out += 1;
            }
            if was_idle || self.rto_at.is_none() {
                self.arm_rto(now);
            }
            sent_new += 1;
            if probe {
                break; // push_one
            }
        }
        // tcp_write_xmit: "Send one loss probe per tail loss episode" (not after the probe
        // itself; tcp_event_new_data_sent gave a pending probe's timer back to the RTO first).
        if sent_new > 0 && !probe {
            self.schedule_loss_probe(now);
        }
        // tcp_rate_check_app_limited: the application, not the network, is the limit now.
        if out_of_data && self.sb.in_flight() < self.w.cwnd && self.sb.lost_out == 0 {
            self.app_limited = (self.delivered + self.sb.in_flight() as u64).max(1);
        }
        // tcp_cwnd_validate: remember whether this window was limited by cwnd.
        let packets_out = self.sb.packets_out();
        if self.snd_una >= self.cwnd_usage_seq
            || cwnd_full
            || (!self.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = cwnd_full;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        // tcp_write_xmit calls tcp_cwnd_validate when it sent data or hit cwnd.
        if sent_new > 0 || cwnd_full {
            self.validate_cwnd(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tcp::sender::testkit::*;

    /// TCP Small Queues holds a socket to ~2 segments below it; with its first hop gone (which
    /// frees every frame at once) nothing is below it, and the whole window goes.
    #[test]
    fn a_gone_first_hop_leaves_tsq_nothing_to_hold() {
        let mut s = sender(1000);
        s.set_output_limit(1 << 20);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert!(s.tsq_throttled());
        assert!(out.len() < 10, "TSQ held some of the initial window back");
        s.set_first_hop_gone(true);
        out.clear();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(s.packets_out(), 10, "the rest of the window went");
    }

    #[test]
    fn initial_window_is_ten_segments() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        // Initial RTO 1 s = 250 ticks at HZ = 250, in the wheel's level 1: run at tick 256.
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(1024)), "initial RTO 1 s, on the wheel");
    }

    /// MPTCP record boundaries: no segment spans one, and a sub-MSS segment that ends a
    /// record goes out at once (Nagle holds only the tail).
    #[test]
    fn segments_never_cross_a_record_boundary() {
        let mut s = sender(1000);
        s.set_app_limit(2500);
        s.mark_boundary(2500);
        s.set_app_limit(5000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        let segs: Vec<(u64, u32)> = out.iter().map(|p| (p.seq, p.len)).collect();
        // 2000..2500 ends a record and goes; 4500..5000 is the tail and waits (Nagle).
        assert_eq!(segs, vec![(0, 1000), (1000, 1000), (2000, 500), (2500, 1000), (3500, 1000)]);
    }

    #[test]
    fn receive_window_limits_what_is_sent() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        let mut a = ack(0, &[]);
        a.rwnd = 3500;
        s.on_ack(Time::ZERO, &a, &mut out);
        assert_eq!(out.len(), 3, "3 whole segments fit in 3500 bytes");
    }
}
