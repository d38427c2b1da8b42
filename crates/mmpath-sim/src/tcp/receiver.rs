//! A TCP receiver modelled on Linux: in-order delivery to an application that reads at once,
//! an out-of-order queue reported with SACK (most recent block first, RFC 2018), delayed ACKs
//! (every second full-sized segment or after the 40 ms delayed-ACK timer, TCP_DELACK_MIN),
//! quick ACKs at connection start (TCP_MAX_QUICKACKS = 16) and immediate ACKs while a hole is
//! open or when it is filled (RFC 5681 section 4.2), receive-window autotuning
//! (tcp_rcv_space_adjust), and the ACK a read can trigger (tcp_cleanup_rbuf, `on_read`): a
//! pending delayed ACK goes at once when the read took a short ("pushed") segment.

use super::timer_wheel::TimerWheel;
use crate::packet::{Kind, Packet, Way, MAX_SACK_BLOCKS, SACK_BLOCK_BYTES, SACK_OPTION_BASE_BYTES, TCP_HEADER_BYTES};
use crate::scenario::BufSize;
use crate::time::Time;

/// Linux TCP_DELACK_MIN (HZ/25).
pub const DELACK_MIN: Time = Time::from_ms(40);
/// Linux TCP_MAX_QUICKACKS.
const MAX_QUICKACKS: u32 = 16;
/// Linux tcp_rmem\[1\] (131072); with tcp_adv_win_scale = 1 half of it is window.
pub const RMEM_DEFAULT: u64 = 131_072;
/// Linux TCP_MSS_DEFAULT (include/net/tcp.h): the receiver's MSS estimate starts there
/// (tcp_initialize_rcv_mss) and tcp_measure_rcv_mss's short-segment test uses it.
const TCP_MSS_DEFAULT: u32 = 536;
/// icsk_ack.pending bits (include/net/inet_connection_sock.h): a short segment was received
/// (ICSK_ACK_PUSHED), and another one after it (ICSK_ACK_PUSHED2).
const ACK_PUSHED: u8 = 1;
const ACK_PUSHED2: u8 = 2;

pub struct ReceiverCfg {
    pub flow: u16,
    pub mss: u32,
    pub rcvbuf: BufSize,
    pub rmem_max: u64,
    pub delayed_ack: bool,
    /// Linux >= 6.6's tcp_measure_rcv_mss: a full-sized segment with PSH is "pushed" too
    /// (`measure_rcv_mss`). Off for receivers modelled on older kernels (MPTCP linux-v0.9x).
    pub push_full_segments: bool,
}

/// What the oracle needs to know about the byte stream the application saw.
#[derive(Debug, Clone, Default)]
pub struct StreamCheck {
    /// Bytes handed to the application, in order.
    pub delivered: u64,
    /// Bytes that arrived again after being received (spurious retransmissions).
    pub duplicate_bytes: u64,
}

pub struct TcpReceiver {
    flow: u16,
    mss: u32,
    rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted, disjoint, not touching rcv_nxt.
    ooo: Vec<(u64, u64)>,
    ooo_bytes: u64,
    /// Range that received the latest out-of-order segment (reported first).
    latest: Option<(u64, u64)>,
    unacked_bytes: u64,
    /// icsk_ack.rcv_mss, the receiver's estimate of the sender's MSS, and
    /// icsk_ack.last_seg_size (tcp_measure_rcv_mss).
    rcv_mss: u32,
    last_seg_size: u32,
    /// ACK_PUSHED / ACK_PUSHED2, cleared when an ACK goes out.
    pushed: u8,
    push_full_segments: bool,
    quickack: u32,
    delayed_ack: bool,
    /// The host kernel's tick and timer wheel: when the delayed-ACK timer fires.
    wheel: TimerWheel,
    delack_at: Option<Time>,
    /// The window we will grow to (window_clamp) and its ceiling.
    window: u64,
    window_max: u64,
    autotune: bool,
    rcvq_space: u64,
    rcvq_time: Time,
    rcvq_seq: u64,
    rcv_rtt_ns: Option<u64>,
    /// The last autotuning measure was a tie with a full window (see `autotune`).
    rcvq_tied: bool,
    ts_recent: u64,
    /// tp->rcv_wup: rcv_nxt when the last ACK went out. A segment starting at or below it
    /// updates ts_recent (tcp_replace_ts_recent, RFC 7323 section 4.3).
    rcv_wup: u64,
    /// A duplicate to report in the next ACK's first SACK block (tcp_dsack_set, RFC 2883;
    /// net.ipv4.tcp_dsack = 1).
    dsack: Option<(u64, u64)>,
    /// Last window advertised (for the timeline).
    pub last_rwnd: u64,
    pub check: StreamCheck,
}

impl TcpReceiver {
    /// The receiving host's timer wheel: its CONFIG_HZ (`tcp.kernel_hz`; Linux's default 250
    /// until set) at the run's kernel clock phase.
    pub fn set_timer_wheel(&mut self, wheel: TimerWheel) {
        self.wheel = wheel;
    }

    pub fn new(cfg: ReceiverCfg) -> Self {
        let (window, window_max, autotune) = match cfg.rcvbuf {
            // SO_RCVBUF = X: the kernel doubles it and advertises half, i.e. about X.
            BufSize::Bytes(b) => (b, b, false),
            // Autotuning from tcp_rmem[1] up to tcp_rmem[2], half of each being window.
            BufSize::Auto => {
                let max = cfg.rmem_max / 2;
                ((RMEM_DEFAULT / 2).max(10 * cfg.mss as u64).min(max), max, true)
            }
        };
        TcpReceiver {
            flow: cfg.flow,
            mss: cfg.mss,
            rcv_nxt: 0,
            ooo: Vec::with_capacity(16),
            ooo_bytes: 0,
            latest: None,
            unacked_bytes: 0,
            // tcp_initialize_rcv_mss: min(advmss, TCP_MSS_DEFAULT), the first full segment
            // raises it.
            rcv_mss: cfg.mss.min(TCP_MSS_DEFAULT),
            last_seg_size: 0,
            pushed: 0,
            push_full_segments: cfg.push_full_segments,
            // tcp_incr_quickack at connection start: min(rcv_wnd / (2 rcv_mss), 16).
            quickack: ((window / (2 * cfg.mss as u64)) as u32).min(MAX_QUICKACKS),
            delayed_ack: cfg.delayed_ack,
            wheel: TimerWheel::default(),
            delack_at: None,
            window,
            window_max,
            autotune,
            rcvq_space: window.min(10 * cfg.mss as u64),
            rcvq_time: Time::ZERO,
            rcvq_seq: 0,
            rcv_rtt_ns: None,
            rcvq_tied: false,
            ts_recent: 0,
            rcv_wup: 0,
            dsack: None,
            last_rwnd: window,
            check: StreamCheck::default(),
        }
    }

    /// The receive-side RTT estimate (tcp_rcv_rtt_measure_ts), None before any sample.
    pub fn rcv_rtt(&self) -> Option<Time> {
        self.rcv_rtt_ns.map(Time::from_ns)
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    pub fn window(&self) -> u64 {
        self.window
    }
    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }
    pub fn timer_deadline(&self) -> Option<Time> {
        self.delack_at
    }

    fn rwnd(&self) -> u64 {
        self.window.saturating_sub(self.ooo_bytes).min(u32::MAX as u64)
    }

    fn send_ack(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut p = Packet::empty(self.flow, Kind::Ack, Way::Reverse);
        p.ack = self.rcv_nxt;
        p.rwnd = self.rwnd() as u32;
        self.last_rwnd = p.rwnd as u64;
        p.ts_val_ns = now.ns();
        p.ts_ecr_ns = self.ts_recent;
        let mut n = 0;
        // A D-SACK goes first, once (tcp_established_options: it takes one of the blocks).
        if let Some(d) = self.dsack.take() {
            p.sack[0] = d;
            n = 1;
        }
        if let Some(b) = self.latest {
            p.sack[n] = b;
            n += 1;
        }
        // Then the others, highest first: the sender learns the top of the window quickly.
        for &r in self.ooo.iter().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if Some(r) != self.latest {
                p.sack[n] = r;
                n += 1;
            }
        }
        p.nsack = n as u8;
        p.size_bytes = TCP_HEADER_BYTES + if n > 0 { SACK_OPTION_BASE_BYTES + SACK_BLOCK_BYTES * n as u32 } else { 0 };
        out.push(p);
        self.rcv_wup = self.rcv_nxt;
        self.unacked_bytes = 0;
        // tcp_event_ack_sent -> inet_csk_clear_xmit_timer(ICSK_TIME_DACK): pending cleared.
        self.delack_at = None;
        self.pushed = 0;
        if self.quickack > 0 {
            self.quickack -= 1;
        }
    }

    /// Inserts [s, e) into the out-of-order set; returns the merged range containing it.
    fn insert_ooo(&mut self, s: u64, e: u64) -> (u64, u64) {
        let i = self.ooo.partition_point(|r| r.1 < s);
        let mut ns = s;
        let mut ne = e;
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            ns = ns.min(self.ooo[j].0);
            ne = ne.max(self.ooo[j].1);
            self.ooo_bytes -= self.ooo[j].1 - self.ooo[j].0;
            j += 1;
        }
        self.ooo.drain(i..j);
        self.ooo.insert(i, (ns, ne));
        self.ooo_bytes += ne - ns;
        (ns, ne)
    }

    /// tcp_rcv_space_adjust: once per receiver RTT, grow the window to twice what the
    /// application read in the last RTT (plus the growth trend), up to the ceiling.
    fn autotune(&mut self, now: Time) {
        if !self.autotune {
            return;
        }
        let Some(rtt) = self.rcv_rtt_ns else { return };
        if now.saturating_sub(self.rcvq_time).ns() < rtt {
            return;
        }
        let copied = self.check.delivered - self.rcvq_seq;
        // Linux grows only on `copied > space`. A sender held by this very window delivers
        // exactly one window per RTT, and when the window is no larger than `space` (the
        // start: both 10 segments) a tie is all it can ever show: on a link so fast that a
        // window arrives in one burst, each measure opened at a burst's segment closes at the
        // same segment one burst later, and the window never grew (200 Gbit/s: 10 segments
        // per RTT for good). The whole window read in each of two RTTs in a row is the sign
        // to grow (one such RTT happens in ordinary runs, which grow the next one anyway).
        let tie = copied == self.rcvq_space && copied >= self.window;
        let stuck = tie && self.rcvq_tied;
        self.rcvq_tied = tie && !stuck;
        if copied > self.rcvq_space || stuck {
            let mut rcvwin = 2 * copied + 16 * self.mss as u64;
            let grow = rcvwin * (copied - self.rcvq_space) / self.rcvq_space.max(1);
            rcvwin += 2 * grow;
            self.window = self.window.max(rcvwin.min(self.window_max));
            self.rcvq_space = copied;
        }
        self.rcvq_seq = self.check.delivered;
        self.rcvq_time = now;
    }

    /// Handles a data segment; returns the bytes newly delivered to the application.
    pub fn on_data(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) -> u64 {
        // Receiver RTT from the echoed timestamp (tcp_rcv_rtt_measure_ts), EWMA 1/8.
        if p.ts_ecr_ns > 0 && now.ns() > p.ts_ecr_ns {
            let s = now.ns() - p.ts_ecr_ns;
            self.rcv_rtt_ns = Some(match self.rcv_rtt_ns {
                None => s,
                Some(r) => (7 * r + s) / 8,
            });
        }
        let (s, e) = (p.seq, p.seq + p.len as u64);
        if s <= self.rcv_wup {
            self.ts_recent = p.ts_val_ns;
        }
        if e <= self.rcv_nxt {
            // All old: a spurious retransmission. ACK at once (Linux enters quickack), with a
            // D-SACK for it.
            self.check.duplicate_bytes += p.len as u64;
            self.dsack = Some((s, e));
            self.send_ack(now, out);
            return 0;
        }
        if s > self.rcv_nxt {
            // A hole: queue, and ACK at once with SACK (a D-SACK if we had it all already,
            // tcp_data_queue_ofo).
            let before = self.ooo_bytes;
            let r = self.insert_ooo(s, e);
            let new = (self.ooo_bytes - before).min(p.len as u64);
            self.check.duplicate_bytes += p.len as u64 - new;
            if new == 0 {
                self.dsack = Some((s, e));
            }
            self.latest = Some(r);
            self.send_ack(now, out);
            return 0;
        }
        // In order (possibly overlapping what we have: D-SACK the old part).
        if s < self.rcv_nxt {
            self.check.duplicate_bytes += self.rcv_nxt - s;
            self.dsack = Some((s, self.rcv_nxt));
        }
        self.measure_rcv_mss(p.len, p.psh);
        let old = self.rcv_nxt;
        self.rcv_nxt = e;
        let had_hole = !self.ooo.is_empty();
        while let Some(&(rs, re)) = self.ooo.first() {
            if rs > self.rcv_nxt {
                break;
            }
            self.ooo.remove(0);
            self.ooo_bytes -= re - rs;
            if re > self.rcv_nxt {
                self.check.duplicate_bytes += self.rcv_nxt - rs;
                self.rcv_nxt = re;
            } else {
                self.check.duplicate_bytes += re - rs;
            }
        }
        if let Some(l) = self.latest {
            if l.1 <= self.rcv_nxt {
                self.latest = None;
            }
        }
        let delivered = self.rcv_nxt - old;
        self.check.delivered += delivered;
        self.autotune(now);
        self.unacked_bytes += delivered;
        let ack_now = !self.delayed_ack
            || self.quickack > 0
            || had_hole
            || !self.ooo.is_empty()
            || self.unacked_bytes > self.rcv_mss as u64; // more than one full segment
        if ack_now {
            self.send_ack(now, out);
        } else if self.delack_at.is_none() {
            // tcp_send_delayed_ack: sk_reset_timer(jiffies + ato), run by the timer wheel.
            self.delack_at = Some(self.wheel.after(now, DELACK_MIN));
        }
        delivered
    }

    /// tcp_measure_rcv_mss, for an in-order segment of `len` payload bytes: a full one sets
    /// the estimate; a short one is "pushed" (the tail of a write), unless it repeats the
    /// previous short length, which then becomes the estimate (a peer with a smaller MSS). A
    /// short segment's PSH flag decides for those under TCP_MSS_DEFAULT; the model's short
    /// segments are write tails, which Linux sends with PSH (tcp_push -> tcp_mark_push).
    /// Since Linux 6.6 a full one with PSH is pushed too ("tcp: fix delayed ACKs for MSS
    /// boundary condition", commit 4720852ed9af, net/ipv4/tcp_input.c): the end of a write
    /// whose sender may wait for the ACK, which tcp_cleanup_rbuf then sends once the reader
    /// has taken everything (`push_full_segments`).
    fn measure_rcv_mss(&mut self, len: u32, psh: bool) {
        let lss = self.last_seg_size;
        self.last_seg_size = 0;
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(self.mss);
            if psh && self.push_full_segments {
                self.pushed |= ACK_PUSHED;
            }
            return;
        }
        // The test is on the segment with its TCP header (20 bytes + 12 of timestamps);
        // its second clause (>= TCP_MIN_MSS + 20) needs PSH clear, so it never holds here.
        if len + 32 >= TCP_MSS_DEFAULT + 20 {
            self.last_seg_size = len;
            if len == lss {
                self.rcv_mss = len;
                return;
            }
        }
        if self.pushed & ACK_PUSHED != 0 {
            self.pushed |= ACK_PUSHED2;
        }
        self.pushed |= ACK_PUSHED;
    }

    /// Whether a delayed ACK is scheduled (inet_csk_ack_scheduled).
    pub fn ack_scheduled(&self) -> bool {
        self.delack_at.is_some()
    }

    /// Bytes received in order since the last ACK (rcv_nxt - rcv_wup).
    pub fn unacked_bytes(&self) -> u64 {
        self.unacked_bytes
    }

    /// Nothing held out of order (the subflow's share of sk_rmem_alloc once the reader has
    /// taken the rest).
    pub fn nothing_held(&self) -> bool {
        self.ooo_bytes == 0
    }

    /// The first part of mptcp_subflow_could_cleanup (upstream MPTCP): an ACK is scheduled
    /// and either more than one segment waits for it or a short segment does while the
    /// connection's receive queue is empty (`rx_empty`).
    pub fn could_cleanup(&self, rx_empty: bool) -> bool {
        self.ack_scheduled() && (self.unacked_bytes > self.rcv_mss as u64 || (rx_empty && self.pushed != 0))
    }

    /// tcp_cleanup_rbuf after a read that copied `copied` bytes: sends the ACK now, and
    /// returns true, if a delayed ACK is scheduled and more than one segment waits for it, or
    /// the read took a short segment and left nothing queued (`rmem_empty`; the reader is not
    /// in ping-pong mode: mmpath's receivers never send data back).
    ///
    /// Its second part, a window update when the read at least doubled the window left of
    /// the last advertisement, is not modelled: mmpath's advertised window follows
    /// autotuning at once, where Linux's grows by at most 2 rcv_mss per segment received
    /// (rcv_ssthresh, tcp_grow_window), so an immediate update here would announce a jump
    /// Linux never does. With it, 2 of 8 seeds of 003-buffers' default-buffer Cubic flow
    /// (50 ms) overflowed the AP's queue with the burst it released (docs/models.md).
    pub fn cleanup_rbuf(&mut self, now: Time, copied: u64, rmem_empty: bool, out: &mut Vec<Packet>) -> bool {
        let time_to_ack = self.ack_scheduled()
            && (self.unacked_bytes > self.rcv_mss as u64 || (copied > 0 && self.pushed != 0 && rmem_empty));
        if time_to_ack {
            self.send_ack(now, out);
        }
        time_to_ack
    }

    /// The application read `copied` bytes just delivered (mmpath's readers read at once):
    /// tcp_recvmsg ends in tcp_cleanup_rbuf. A single-path flow's receiver; an MPTCP
    /// subflow's reads happen at the connection (mptcp/connection/packets.rs).
    pub fn on_read(&mut self, now: Time, copied: u64, out: &mut Vec<Packet>) -> bool {
        let empty = self.nothing_held();
        self.cleanup_rbuf(now, copied, empty, out)
    }

    /// The delayed-ACK timer fires (stale events do nothing).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(t) = self.delack_at {
            if t <= now {
                self.send_ack(now, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(delayed: bool) -> TcpReceiver {
        let mut r = TcpReceiver::new(ReceiverCfg {
            flow: 0,
            mss: 1000,
            rcvbuf: BufSize::Bytes(100_000),
            rmem_max: 1 << 22,
            delayed_ack: delayed,
            push_full_segments: true,
        });
        r.quickack = 0;
        r
    }

    fn seg(seq: u64) -> Packet {
        let mut p = Packet::empty(0, Kind::Data, Way::Forward);
        p.seq = seq;
        p.len = 1000;
        p
    }

    fn short(seq: u64, len: u32) -> Packet {
        let mut p = seg(seq);
        p.len = len;
        p
    }

    /// tcp_cleanup_rbuf's first part: a short segment ("pushed") waiting for the delayed ACK
    /// is acknowledged when the application reads it; a full one is not, and nothing is sent
    /// without a read (an MPTCP subflow whose data the connection has not handed out).
    #[test]
    fn a_read_acks_a_pending_short_segment_but_not_a_full_one() {
        let mut r = rx(true);
        let mut out = Vec::new();
        r.on_data(Time::ZERO, &seg(0), &mut out);
        assert!(out.is_empty() && r.ack_scheduled());
        assert!(!r.on_read(Time::ZERO, 1000, &mut out), "one full segment waits for its pair or the timer");
        assert!(out.is_empty());
        r.on_data(Time::from_us(5), &seg(1000), &mut out);
        assert_eq!(out.len(), 1, "the second full segment is acknowledged at once");
        r.on_data(Time::from_us(10), &short(2000, 400), &mut out);
        assert_eq!(out.len(), 1, "the short tail waits for the delayed-ACK timer ...");
        assert!(r.could_cleanup(true) && !r.could_cleanup(false), "... unless the queue is empty when read");
        assert!(r.on_read(Time::from_us(10), 400, &mut out), "... and the read sends it");
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].ack, 2400);
        assert!(!r.ack_scheduled());
    }

    /// Linux >= 6.6: a full segment with PSH (the end of the sender's push) is pushed like a
    /// short one, so the read that empties the queue sends its pending ACK; without PSH, or
    /// on a receiver of an older kernel, it waits for its pair or the delayed-ACK timer.
    #[test]
    fn a_read_acks_a_pending_full_segment_that_ends_a_push() {
        for (push_full, psh, acked) in [(true, true, true), (true, false, false), (false, true, false)] {
            let mut r = rx(true);
            r.push_full_segments = push_full;
            let mut out = Vec::new();
            let mut p = seg(0);
            p.psh = psh;
            r.on_data(Time::ZERO, &p, &mut out);
            assert!(out.is_empty() && r.ack_scheduled(), "one full segment: a delayed ACK");
            assert_eq!(r.could_cleanup(true), acked, "rule {push_full}, PSH {psh}");
            assert!(!r.could_cleanup(false), "never while data is held");
            assert_eq!(r.on_read(Time::from_us(5), 1000, &mut out), acked, "rule {push_full}, PSH {psh}");
            assert_eq!(out.len(), acked as usize);
            assert_eq!(r.ack_scheduled(), !acked);
        }
    }

    /// Data held out of order keeps the receive queue non-empty: the short segment's ACK is
    /// not flushed by the read (tcp_cleanup_rbuf tests sk_rmem_alloc).
    #[test]
    fn held_data_keeps_the_short_segment_ack_delayed() {
        let mut r = rx(true);
        let mut out = Vec::new();
        assert!(!r.cleanup_rbuf(Time::ZERO, 0, true, &mut out));
        r.on_data(Time::ZERO, &short(0, 400), &mut out);
        assert!(!r.cleanup_rbuf(Time::ZERO, 400, false, &mut out), "queue not empty");
        assert!(!r.cleanup_rbuf(Time::ZERO, 0, true, &mut out), "nothing copied");
        assert!(r.cleanup_rbuf(Time::ZERO, 400, true, &mut out));
        assert_eq!(out.len(), 1);
    }

    /// tcp_measure_rcv_mss: the estimate starts at TCP_MSS_DEFAULT, rises with the first full
    /// segment, and falls to a short length seen twice in a row (>= 536 bytes with headers),
    /// which is then not "pushed".
    #[test]
    fn receiver_mss_estimate_follows_the_segments() {
        let mut r = rx(true);
        let mut out = Vec::new();
        assert_eq!(r.rcv_mss, 536);
        r.on_data(Time::ZERO, &seg(0), &mut out);
        assert_eq!(r.rcv_mss, 1000);
        out.clear();
        r.send_ack(Time::ZERO, &mut out);
        r.on_data(Time::ZERO, &short(1000, 600), &mut out);
        assert_eq!((r.rcv_mss, r.pushed), (1000, ACK_PUSHED), "a first short segment is pushed");
        r.on_data(Time::ZERO, &short(1600, 600), &mut out);
        assert_eq!(r.rcv_mss, 600, "the same short length twice becomes the estimate");
        r.on_data(Time::ZERO, &short(2200, 100), &mut out);
        r.on_data(Time::ZERO, &short(2300, 100), &mut out);
        assert_eq!(r.rcv_mss, 600, "too short to be an MSS: pushed both times");
        assert_eq!(r.pushed, ACK_PUSHED | ACK_PUSHED2);
        r.on_data(Time::ZERO, &seg(2400), &mut out);
        assert_eq!(r.rcv_mss, 1000);
    }

    #[test]
    fn acks_every_second_segment() {
        let mut r = rx(true);
        let mut out = Vec::new();
        r.on_data(Time::ZERO, &seg(0), &mut out);
        assert!(out.is_empty());
        // 40 ms = 10 ticks at HZ = 250 from tick 0: the wheel runs it at tick 11.
        assert_eq!(r.timer_deadline(), Some(DELACK_MIN + Time::from_ms(4)));
        r.on_data(Time::from_us(10), &seg(1000), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 2000);
        assert_eq!(r.timer_deadline(), None);
    }

    /// TCP_DELACK_MIN (40 ms) in jiffies from the tick the segment arrived in, run one tick
    /// after its expiry by the timer wheel: at HZ = 250 a segment at 5 ms (tick 1) is ACKed at
    /// tick 12 = 48 ms; at HZ = 1000 at tick 46 = 46 ms.
    #[test]
    fn delayed_ack_timer_fires_after_40ms_on_the_wheel() {
        for (hz, at_ms) in [(250, 48), (1000, 46)] {
            let mut r = rx(true);
            r.set_timer_wheel(TimerWheel::new(hz));
            let mut out = Vec::new();
            r.on_data(Time::from_ms(5), &seg(0), &mut out);
            assert_eq!(r.timer_deadline(), Some(Time::from_ms(at_ms)), "HZ {hz}");
            r.on_timer(Time::from_ms(at_ms) - Time(1), &mut out);
            assert!(out.is_empty(), "HZ {hz}: not before the wheel runs the timer");
            r.on_timer(Time::from_ms(at_ms), &mut out);
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].ack, 1000);
        }
    }

    #[test]
    fn hole_gets_immediate_sack_and_fill_gets_immediate_ack() {
        let mut r = rx(true);
        let mut out = Vec::new();
        r.on_data(Time::ZERO, &seg(0), &mut out);
        r.on_data(Time::ZERO, &seg(2000), &mut out);
        r.on_data(Time::ZERO, &seg(3000), &mut out);
        r.on_data(Time::ZERO, &seg(5000), &mut out);
        assert_eq!(out.len(), 3, "every out-of-order segment is ACKed at once");
        let last = out.last().unwrap();
        assert_eq!(last.ack, 1000);
        assert_eq!(last.sack_blocks(), &[(5000, 6000), (2000, 4000)]);
        assert_eq!(r.rwnd(), 100_000 - 3000);
        out.clear();
        let d = r.on_data(Time::ZERO, &seg(1000), &mut out);
        assert_eq!(d, 3000);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 4000);
        assert_eq!(out[0].sack_blocks(), &[(5000, 6000)]);
        assert_eq!(r.check.delivered, 4000);
    }

    #[test]
    fn duplicates_are_counted_not_delivered() {
        let mut r = rx(false);
        let mut out = Vec::new();
        r.on_data(Time::ZERO, &seg(0), &mut out);
        assert_eq!(r.on_data(Time::ZERO, &seg(0), &mut out), 0);
        assert_eq!(r.check.duplicate_bytes, 1000);
        assert_eq!(r.check.delivered, 1000);
    }

    #[test]
    fn autotuning_grows_window_with_throughput() {
        let mut r = TcpReceiver::new(ReceiverCfg {
            flow: 0,
            mss: 1000,
            rcvbuf: BufSize::Auto,
            rmem_max: 6_291_456,
            delayed_ack: true,
            push_full_segments: true,
        });
        let w0 = r.window();
        assert_eq!(w0, 65_536);
        let mut out = Vec::new();
        // 10 ms RTT; deliver 200 kB per RTT for a while.
        let mut seq = 0;
        for rtt in 1..20u64 {
            for i in 0..200u64 {
                let mut p = seg(seq);
                p.ts_ecr_ns = (rtt * 10_000_000 + i * 50_000).saturating_sub(10_000_000).max(1);
                r.on_data(Time(rtt * 10_000_000 + i * 50_000), &p, &mut out);
                seq += 1000;
            }
        }
        assert!(r.window() >= 400_000, "window grew to {}", r.window());
        assert!(r.window() <= 6_291_456 / 2);
    }

    /// A sender held by the receive window delivers exactly one window per RTT; on a fast link
    /// the whole window arrives in one burst and each RTT's measure (opened and closed at the
    /// same segment of consecutive bursts) sees exactly `rcvq_space` bytes. That tie used to
    /// hold the window at its first 10 segments for good (`mmpath run 11ad-bulk` at 200 Gbit/s:
    /// 628 Mbit/s): the window must grow.
    #[test]
    fn a_window_read_whole_each_rtt_grows_even_on_a_tie() {
        let mss = 7860u64;
        let mut r = TcpReceiver::new(ReceiverCfg {
            flow: 0,
            mss: mss as u32,
            rcvbuf: BufSize::Auto,
            rmem_max: 6_291_456,
            delayed_ack: true,
            push_full_segments: true,
        });
        let w0 = r.window();
        assert_eq!(w0, 10 * mss, "starts at 10 segments, as rcvq_space");
        let mut out = Vec::new();
        // 1 ms RTT, bursts of exactly one window, segments 317 ns apart (7912 B at 200 Gbit/s);
        // the RTT estimate a little under the burst period, as the run measured it.
        let period = 1_000_960u64;
        let mut seq = 0;
        for k in 1..10u64 {
            let segs = r.window() / mss;
            for i in 0..segs {
                let mut p = seg(seq);
                p.len = mss as u32;
                let now = k * period + i * 317;
                p.ts_ecr_ns = now - 1_000_810;
                r.on_data(Time(now), &p, &mut out);
                seq += mss;
            }
        }
        assert!(r.window() > 4 * w0, "window stuck at {} (started at {w0})", r.window());
    }
}
