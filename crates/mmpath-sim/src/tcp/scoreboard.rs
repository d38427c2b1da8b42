//! The sender's retransmission queue with per-segment SACK state (Linux's rtx queue with
//! TCPCB_SACKED_ACKED / TCPCB_LOST / TCPCB_SACKED_RETRANS), and the counters Linux derives
//! packets-in-flight from: in_flight = packets_out - (sacked_out + lost_out) + retrans_out
//! (include/net/tcp.h tcp_packets_in_flight).
//!
//! RACK (RFC 8985; Linux net/ipv4/tcp_recovery.c) runs on top of the RFC 6675 rule once the
//! sender is recovering: a segment is lost when one sent later (by transmit time) has been
//! delivered and it has waited RACK.rtt + reo_wnd. Because it orders by transmit time, not by
//! sequence, it also finds retransmissions that are lost again, which the sequence-based rule
//! cannot (they stay "in flight" until the RTO otherwise).

use crate::packet::MAX_SACK_BLOCKS;
use crate::time::Time;
use std::collections::VecDeque;

pub const SACKED: u8 = 1;
pub const LOST: u8 = 2;
/// Retransmitted and not yet known delivered or lost again.
pub const RETRANS: u8 = 4;
/// Retransmitted at least once: no RTT sample from it (Karn's rule).
pub const EVER_RETRANS: u8 = 8;

/// Earliest and latest send time among segments an ACK newly covers (for RTT samples; only
/// never-retransmitted segments count, Karn's rule).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SentSpan {
    pub first: Option<Time>,
    pub last: Option<Time>,
    /// Some segment the ACK removed was ever retransmitted (Linux FLAG_RETRANS_DATA_ACKED):
    /// then the cumulative ACK gives no sequence RTT sample at all (tcp_clean_rtx_queue).
    pub retrans_acked: bool,
    /// The lowest end sequence among the never-retransmitted segments newly delivered: Linux
    /// sets FLAG_ORIG_SACK_ACKED when one of them ends at or below high_seq (F-RTO's test that
    /// data sent only once got through).
    pub orig_end_min: Option<u64>,
}

impl SentSpan {
    fn add(&mut self, t: Time) {
        self.first = Some(self.first.map_or(t, |f| f.min(t)));
        self.last = Some(self.last.map_or(t, |l| l.max(t)));
    }

    fn add_orig(&mut self, s: &Seg) {
        self.add(s.sent);
        self.orig_end_min = Some(self.orig_end_min.map_or(s.end(), |e| e.min(s.end())));
    }

    /// The span covering both.
    pub fn merge(&mut self, o: SentSpan) {
        if let Some(f) = o.first {
            self.add(f);
        }
        if let Some(l) = o.last {
            self.add(l);
        }
        if let Some(e) = o.orig_end_min {
            self.orig_end_min = Some(self.orig_end_min.map_or(e, |m| m.min(e)));
        }
        self.retrans_acked |= o.retrans_acked;
    }
}

/// What Linux's tcp_rate_skb_sent stamps on a packet each time it is (re)transmitted
/// (TCP_SKB_CB(skb)->tx): the connection's delivery state at that moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxRate {
    /// tp->delivered when sent.
    pub delivered: u64,
    /// tp->delivered_mstamp when sent.
    pub delivered_mstamp: Time,
    /// tp->first_tx_mstamp when sent (start of the send interval).
    pub first_tx_mstamp: Time,
    /// tp->app_limited was set when sent.
    pub app_limited: bool,
}

/// The packet tcp_rate_skb_delivered picks for this ACK's rate sample: among the packets the
/// ACK newly delivers, the one sent with the most data delivered before it (the newest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RatePick {
    pub tx: TxRate,
    /// Its (last) send time: the end of the send interval.
    pub sent: Time,
    pub retrans: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct Seg {
    pub start: u64,
    pub len: u32,
    pub sent: Time,
    pub flags: u8,
    pub tx: TxRate,
}

impl Seg {
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// RACK's state (Linux tp->rack; RFC 8985 RACK.xmit_ts, RACK.end_seq, RACK.rtt): the most
/// recently sent segment among those delivered so far.
#[derive(Debug, Clone, Copy, Default)]
struct Rack {
    /// RACK.xmit_ts (None: nothing delivered yet).
    xmit: Option<Time>,
    /// RACK.end_seq: breaks ties between segments sent at the same instant.
    end_seq: u64,
    /// RACK.rtt: from that segment's (re)transmission to the ACK that delivered it.
    rtt: Time,
    /// tp->rack.advanced: xmit moved on since the last detection pass.
    advanced: bool,
}

/// tcp_rack_sent_after: was (t1, seq1) sent after (t2, seq2)?
fn sent_after(t1: Time, t2: Time, seq1: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

#[derive(Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Segments marked lost and not yet retransmitted.
    pub lost_pending: u32,
    /// Starts of the three highest SACKed segments, highest first (0 = none): a segment
    /// below the third has DupThresh SACKed segments above it (RFC 6675 IsLost).
    top_sacked: [u64; 3],
    n_top: usize,
    /// Lowest seq that may still need lost-marking; everything below was examined.
    lost_scan: u64,
    /// Lowest seq FACK marking (mark_lost_fack) may still have to examine.
    fack_scan: u64,
    /// Lowest seq that may hold a lost-not-retransmitted segment.
    retrans_hint: u64,
    /// The rate-sample pick of the ACK being processed (`begin_ack` clears it).
    pub rate_pick: Option<RatePick>,
    rack: Rack,
    /// The ACK being processed: its arrival time and the sender's min RTT before it (RACK
    /// needs both for every segment the ACK delivers).
    ack_now: Time,
    ack_min_rtt: Option<Time>,
    /// The ACK's timestamp echo in ns (0: none), for tcp_skb_spurious_retrans.
    ack_ts_ecr_ns: u64,
    /// Outstanding retransmissions in transmit order, (start, send time): the retransmitted
    /// part of Linux's time-sorted tsorted_sent_queue. Original transmissions are in transmit
    /// order in `segs` already. Entries whose segment was delivered, retransmitted again or
    /// reset by an RTO since are stale and skipped (the send time no longer matches).
    rtx_order: VecDeque<(u64, Time)>,
    /// Lowest seq RACK may still have to examine among original transmissions.
    rack_scan: u64,
    /// The SACK blocks of the previous ACK, and of the one being processed (Linux's
    /// tp->recv_sack_cache in tcp_sacktag_write_queue): every whole segment inside a block
    /// processed before is SACKed, and SACKED is cleared only when the cumulative ACK removes
    /// the segment, so the part of a block the previous ACK already carried is not walked again.
    /// Without this every ACK re-walked its blocks: with thousands of segments SACKed above a
    /// hole (BBR at 50 ms over a shallow queue), that walk was half of the run's time.
    sack_prev: [(u64, u64); MAX_SACK_BLOCKS],
    n_prev: usize,
    sack_cur: [(u64, u64); MAX_SACK_BLOCKS],
    n_cur: usize,
}

impl Scoreboard {
    pub fn new() -> Self {
        Scoreboard {
            segs: VecDeque::with_capacity(1024),
            rtx_order: VecDeque::with_capacity(256),
            ..Default::default()
        }
    }

    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    pub fn in_flight(&self) -> u32 {
        self.packets_out() + self.retrans_out - self.sacked_out - self.lost_out
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    pub fn front(&self) -> Option<&Seg> {
        self.segs.front()
    }

    pub fn push(&mut self, seg: Seg) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seg.start));
        self.segs.push_back(seg);
    }

    fn index_of(&self, seq: u64) -> Option<usize> {
        let front = self.segs.front()?;
        let first = front.start;
        if seq < first {
            return None;
        }
        // Segments are contiguous and nearly all one MSS long (the front's length): try the
        // index that gives first, a hit for a bulk sender's board.
        let guess = ((seq - first) / front.len.max(1) as u64) as usize;
        if let Some(s) = self.segs.get(guess) {
            if s.start <= seq && seq < s.end() {
                return Some(guess);
            }
        }
        // Otherwise binary search on start.
        let i = self.segs.partition_point(|s| s.start <= seq);
        if i == 0 {
            return None;
        }
        let s = &self.segs[i - 1];
        (seq < s.end()).then_some(i - 1)
    }

    fn note_top_sacked(&mut self, start: u64) {
        let mut v = start;
        for k in 0..self.n_top {
            if self.top_sacked[k] == v {
                return;
            }
            if self.top_sacked[k] < v {
                std::mem::swap(&mut self.top_sacked[k], &mut v);
            }
        }
        if self.n_top < 3 {
            self.top_sacked[self.n_top] = v;
            self.n_top += 1;
        }
    }

    /// Starts processing a new ACK arriving at `now`, with the sender's min RTT so far:
    /// forget the previous ACK's rate-sample pick.
    pub fn begin_ack(&mut self, now: Time, min_rtt: Option<Time>) {
        self.rate_pick = None;
        self.ack_now = now;
        self.ack_min_rtt = min_rtt;
        self.ack_ts_ecr_ns = 0;
        self.sack_prev = self.sack_cur;
        self.n_prev = self.n_cur;
        self.n_cur = 0;
    }

    /// The timestamp the ACK being processed echoes (TSecr, ns; after `begin_ack`).
    pub fn set_ack_ts_ecr(&mut self, ts_ecr_ns: u64) {
        self.ack_ts_ecr_ns = ts_ecr_ns;
    }

    /// tcp_skb_spurious_retrans (net/ipv4/tcp_input.c, in Linux 4.x and 6.x alike): a
    /// retransmitted segment whose cumulative ACK echoes a timestamp older than its last
    /// transmission was delivered by an earlier copy, so its send time says nothing of the
    /// path: tcp_clean_rtx_queue does not let it advance RACK. (A segment held 2 s in a queue
    /// while the RTO retransmitted it would otherwise make RACK take the retransmission's short
    /// RTT and mark everything sent before it lost.)
    fn spurious_retrans(&self, s: &Seg) -> bool {
        s.has(EVER_RETRANS) && self.ack_ts_ecr_ns > 0 && self.ack_ts_ecr_ns < s.sent.ns()
    }

    /// tcp_rack_advance: a delivered segment moves RACK.xmit_ts on if it was sent after the
    /// current one. A retransmitted segment delivered less than min RTT after its last
    /// transmission may have been the original arriving late (RFC 8985 6.2 step 2): ignored.
    fn rack_advance(&mut self, s: &Seg) {
        if self.rack.xmit.is_some_and(|x| !sent_after(s.sent, x, s.end(), self.rack.end_seq)) {
            return;
        }
        let rtt = self.ack_now.saturating_sub(s.sent);
        if s.has(EVER_RETRANS) && self.ack_min_rtt.is_none_or(|m| rtt < m) {
            return;
        }
        self.rack = Rack { xmit: Some(s.sent), end_seq: s.end(), rtt, advanced: true };
    }

    /// tcp_rate_skb_delivered: keep the newest packet (most delivered at send time).
    fn note_delivered(&mut self, s: Seg) {
        let take = match &self.rate_pick {
            None => true,
            Some(p) => s.tx.delivered > p.tx.delivered || p.tx.delivered == 0,
        };
        if take {
            self.rate_pick = Some(RatePick { tx: s.tx, sent: s.sent, retrans: s.has(EVER_RETRANS) });
        }
    }

    fn set_sacked(&mut self, i: usize) -> bool {
        let s = &mut self.segs[i];
        if s.has(SACKED) {
            return false;
        }
        if s.has(LOST) {
            self.lost_out -= 1;
            if !s.has(RETRANS) {
                self.lost_pending -= 1;
            }
        }
        if s.has(RETRANS) {
            self.retrans_out -= 1;
        }
        s.flags = (s.flags & !(LOST | RETRANS)) | SACKED;
        self.sacked_out += 1;
        let seg = *s;
        self.note_top_sacked(seg.start);
        self.note_delivered(seg);
        self.rack_advance(&seg);
        true
    }

    /// Marks [start, end) SACKed. Returns the newly SACKed segments and their send-time span.
    /// Only the parts of the block outside the previous ACK's blocks are walked (`sack_prev`).
    pub fn sack(&mut self, start: u64, end: u64) -> (u32, SentSpan) {
        let mut n = 0;
        let mut span = SentSpan::default();
        let Some(last_end) = self.segs.back().map(Seg::end) else {
            return (0, span);
        };
        let mut prev = self.sack_prev;
        let prev = &mut prev[..self.n_prev];
        prev.sort_unstable();
        let mut pos = start;
        for &(cs, ce) in prev.iter() {
            if ce <= pos {
                continue;
            }
            if cs >= end {
                break;
            }
            if cs > pos {
                self.sack_walk(pos, cs, start, end, &mut n, &mut span);
            }
            pos = ce;
        }
        if pos < end {
            self.sack_walk(pos, end, start, end, &mut n, &mut span);
        }
        // Cached as the whole segments inside it, edge to edge, so that cached ranges never
        // cut a segment (two overlapping blocks can each hold part of one), and only up to the
        // last segment sent (a valid block never covers data not sent yet).
        let lo = match self.index_of(start) {
            Some(i) if self.segs[i].start < start => self.segs[i].end(),
            Some(_) => start,
            None => self.segs.front().map_or(start, |f| f.start.max(start)),
        };
        let hi = match self.index_of(end) {
            Some(i) => self.segs[i].start,
            None => end.min(last_end),
        };
        if lo < hi && self.n_cur < MAX_SACK_BLOCKS {
            self.sack_cur[self.n_cur] = (lo, hi);
            self.n_cur += 1;
        }
        (n, span)
    }

    /// SACKs the segments that start below `to`, from the one holding `from` on, and lie wholly
    /// inside the block [start, end).
    fn sack_walk(&mut self, from: u64, to: u64, start: u64, end: u64, n: &mut u32, span: &mut SentSpan) {
        let Some(mut i) = self.index_of(from).or_else(|| {
            // The block may begin below snd_una (already cumulatively ACKed).
            let f = self.segs.front()?;
            (from < f.start && to > f.start).then_some(0)
        }) else {
            return;
        };
        while i < self.segs.len() && self.segs[i].start < to && self.segs[i].end() <= end {
            // Only whole segments are SACKed; the receiver never splits ours.
            if self.segs[i].start >= start && self.set_sacked(i) {
                *n += 1;
                let s = self.segs[i];
                if !s.has(EVER_RETRANS) {
                    span.add_orig(&s);
                }
            }
            i += 1;
        }
    }

    /// Removes segments wholly below `ack`. Returns the segments newly delivered (removed and
    /// not SACKed before, as Linux's tp->delivered counts each packet once) and the send-time
    /// span of the removed never-retransmitted ones.
    pub fn ack(&mut self, ack: u64) -> (u32, SentSpan) {
        let mut n = 0;
        let mut span = SentSpan::default();
        while let Some(s) = self.segs.front() {
            if s.end() > ack {
                break;
            }
            let s = self.segs.pop_front().expect("front");
            span.retrans_acked |= s.has(EVER_RETRANS);
            if s.has(SACKED) {
                self.sacked_out -= 1;
                continue;
            }
            n += 1;
            self.note_delivered(s);
            if !self.spurious_retrans(&s) {
                self.rack_advance(&s);
            }
            if !s.has(EVER_RETRANS) {
                span.add_orig(&s);
            }
            if s.has(LOST) {
                self.lost_out -= 1;
                if !s.has(RETRANS) {
                    self.lost_pending -= 1;
                }
            }
            if s.has(RETRANS) {
                self.retrans_out -= 1;
            }
        }
        (n, span)
    }

    /// RFC 6675 loss marking: every segment with DupThresh (3) SACKed segments above it that
    /// is neither SACKed nor already lost or retransmitted is lost. Returns how many were
    /// newly marked.
    pub fn mark_lost_by_sack(&mut self) -> u32 {
        if self.n_top < 3 {
            return 0;
        }
        let threshold = self.top_sacked[2];
        let mut n = 0;
        let Some(mut i) = self.index_of(self.lost_scan.max(self.segs.front().map_or(0, |s| s.start))) else {
            return 0;
        };
        while i < self.segs.len() && self.segs[i].start < threshold {
            let s = &mut self.segs[i];
            if s.flags & (SACKED | LOST | RETRANS) == 0 {
                s.flags |= LOST;
                self.lost_out += 1;
                self.lost_pending += 1;
                n += 1;
                self.retrans_hint = self.retrans_hint.min(s.start);
            }
            i += 1;
        }
        self.lost_scan = self.lost_scan.max(threshold);
        n
    }

    /// Marks the first unacknowledged segment lost (fast retransmit on three duplicate ACKs).
    pub fn mark_head_lost(&mut self) -> bool {
        let Some(s) = self.segs.front_mut() else { return false };
        if s.flags & (SACKED | LOST | RETRANS) != 0 {
            return false;
        }
        s.flags |= LOST;
        self.lost_out += 1;
        self.lost_pending += 1;
        self.retrans_hint = self.retrans_hint.min(s.start);
        true
    }

    /// RTO (Linux tcp_enter_loss): forget retransmissions, mark everything not SACKed lost.
    /// Returns how many were not marked lost before (tp->lost grows by these).
    pub fn mark_all_lost(&mut self) -> u32 {
        let before = self.lost_out;
        self.retrans_out = 0;
        self.lost_out = 0;
        self.lost_pending = 0;
        for s in self.segs.iter_mut() {
            s.flags &= !(RETRANS | LOST);
            if !s.has(SACKED) {
                s.flags |= LOST;
                self.lost_out += 1;
                self.lost_pending += 1;
            }
        }
        if let Some(f) = self.segs.front() {
            self.retrans_hint = f.start;
        }
        self.fack_scan = 0;
        // No retransmission is outstanding any more.
        self.rtx_order.clear();
        self.lost_out.saturating_sub(before)
    }

    /// tcp_undo_cwnd_reduction(sk, true): the loss marks of an episode found spurious are
    /// cleared (TCPCB_LOST off everywhere, lost_out = 0). Retransmissions still in flight
    /// stay counted (retrans_out), as in Linux.
    pub fn unmark_lost(&mut self) {
        if self.lost_out == 0 {
            return;
        }
        for s in self.segs.iter_mut() {
            s.flags &= !LOST;
        }
        self.lost_out = 0;
        self.lost_pending = 0;
        // Everything may need marking again.
        self.lost_scan = 0;
        self.fack_scan = 0;
        self.rack_scan = 0;
    }

    /// tp->fackets_out: the packets from snd_una through the highest SACKed one (0: nothing
    /// SACKed).
    pub fn fackets_out(&self) -> u32 {
        if self.n_top == 0 {
            return 0;
        }
        self.index_of(self.top_sacked[0]).map_or(0, |i| i as u32 + 1)
    }

    /// FACK loss marking (Linux 4.10 tcp_update_scoreboard with tcp_fack = 1 ->
    /// tcp_mark_head_lost(fackets_out - reordering), at least 1): counting from snd_una, every
    /// segment more than `reordering` packets below the highest SACKed one and ending at or
    /// below `high_seq`, neither SACKed nor lost nor retransmitted, is lost. Returns how many
    /// were newly marked.
    pub fn mark_lost_fack(&mut self, reordering: u32, high_seq: u64) -> u32 {
        let packets = self.fackets_out().saturating_sub(reordering).max(1) as usize;
        let end = packets.min(self.segs.len());
        let Some(front) = self.segs.front() else { return 0 };
        let Some(mut i) = self.index_of(self.fack_scan.max(front.start)) else { return 0 };
        let mut n = 0;
        while i < end {
            let s = &mut self.segs[i];
            if s.end() > high_seq {
                break;
            }
            if s.flags & (SACKED | LOST | RETRANS) == 0 {
                s.flags |= LOST;
                self.lost_out += 1;
                self.lost_pending += 1;
                self.retrans_hint = self.retrans_hint.min(s.start);
                n += 1;
            }
            self.fack_scan = s.end();
            i += 1;
        }
        n
    }

    /// The highest segment sent, retransmitted as a tail loss probe (tcp_send_loss_probe ->
    /// __tcp_retransmit_skb): it goes out again now and is marked TCPCB_EVER_RETRANS (no RTT
    /// sample, Karn) but not as an outstanding retransmission (no TCPCB_SACKED_RETRANS, no
    /// retrans_out, no retrans_stamp: those are tcp_retransmit_skb's).
    pub fn probe_tail(&mut self, now: Time, tx: TxRate) -> Option<Seg> {
        let s = self.segs.back_mut()?;
        s.flags |= EVER_RETRANS;
        s.sent = now;
        s.tx = tx;
        let seg = *s;
        if seg.has(RETRANS) {
            // Keep RACK's transmit order of retransmissions current.
            self.rtx_order.push_back((seg.start, now));
        }
        Some(seg)
    }

    /// tcp_any_retrans_done: a retransmission is outstanding or the head was retransmitted.
    pub fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || self.segs.front().is_some_and(|s| s.has(EVER_RETRANS))
    }

    /// The lowest lost segment not yet retransmitted, marked as retransmitted now with the
    /// connection's delivery state `tx` (tcp_rate_skb_sent runs on every transmission).
    pub fn take_retransmission(&mut self, now: Time, tx: TxRate) -> Option<Seg> {
        if self.lost_pending == 0 {
            return None;
        }
        let from = self.retrans_hint.max(self.segs.front()?.start);
        let mut i = self.index_of(from).unwrap_or(0);
        while i < self.segs.len() {
            let s = &mut self.segs[i];
            if s.has(LOST) && !s.has(RETRANS) {
                s.flags |= RETRANS | EVER_RETRANS;
                s.sent = now;
                s.tx = tx;
                self.retrans_out += 1;
                self.lost_pending -= 1;
                self.retrans_hint = s.end();
                let seg = *s;
                self.rtx_order.push_back((seg.start, now));
                return Some(seg);
            }
            i += 1;
        }
        debug_assert!(false, "lost_pending = {} but no lost segment found", self.lost_pending);
        None
    }

    /// Whether a segment was delivered whose transmission RACK has not examined the queue
    /// against yet (tp->rack.advanced).
    pub fn rack_advanced(&self) -> bool {
        self.rack.advanced
    }

    /// RACK loss detection (tcp_rack_detect_loss, RFC 8985 6.2 step 5): every segment that is
    /// neither delivered nor already marked lost and waiting for its retransmission, sent
    /// before RACK.xmit_ts, is lost once `now - sent > RACK.rtt + reo_wnd`. A lost
    /// retransmission stops counting as retransmitted and waits for another one
    /// (tcp_rack_mark_skb_lost). Returns how many were newly marked lost and, if some segments
    /// sent before RACK.xmit_ts are still inside their reordering window, how long until the
    /// last of them expires, plus 1 ns (Linux: the longest `remaining` + 1 us; the reordering
    /// timer, tcp_rack_reo_timeout).
    pub fn rack_detect_loss(&mut self, now: Time, reo_wnd: Time) -> (u32, Option<Time>) {
        self.rack.advanced = false;
        let Some(xmit) = self.rack.xmit else { return (0, None) };
        let (rack_end, wait) = (self.rack.end_seq, self.rack.rtt + reo_wnd);
        let mut n = 0;
        // The longest remaining wait of a segment sent before RACK.xmit_ts that is not lost
        // yet. Both orders below are transmit orders, so the expired segments are a prefix of
        // each and the waiting ones follow.
        let mut timer: Option<Time> = None;
        let mut note_wait = |sent: Time| {
            let left = (sent + wait).saturating_sub(now) + Time(1);
            timer = Some(timer.map_or(left, |t| t.max(left)));
        };

        // Retransmissions, oldest transmission first.
        let mut k = 0;
        while k < self.rtx_order.len() {
            let (start, sent) = self.rtx_order[k];
            let i = match self.index_of(start) {
                Some(i) if self.segs[i].has(RETRANS) && self.segs[i].sent == sent => i,
                _ => {
                    if k == 0 {
                        self.rtx_order.pop_front(); // stale
                    } else {
                        k += 1;
                    }
                    continue;
                }
            };
            if !sent_after(xmit, sent, rack_end, self.segs[i].end()) {
                break; // this and every later one were sent after RACK.xmit_ts
            }
            if now - sent <= wait || k > 0 {
                note_wait(sent);
                k += 1;
                continue;
            }
            self.rtx_order.pop_front();
            let s = &mut self.segs[i];
            // Lost again (tcp_rack_mark_skb_lost): LOST, no longer retransmitted, back in the
            // queue. Usually it was LOST already; after an undo that cleared the marks
            // (tcp_undo_cwnd_reduction with unmark_loss) it is marked anew.
            if !s.has(LOST) {
                s.flags |= LOST;
                self.lost_out += 1;
            }
            s.flags &= !RETRANS;
            self.retrans_out -= 1;
            self.lost_pending += 1;
            self.retrans_hint = self.retrans_hint.min(start);
            n += 1;
        }

        // Original transmissions: in sequence order, which is their transmit order.
        let front = self.segs.front().map_or(0, |s| s.start);
        if let Some(mut i) = self.index_of(self.rack_scan.max(front)) {
            let mut waiting = false;
            while i < self.segs.len() {
                let s = &mut self.segs[i];
                i += 1;
                if s.flags & (SACKED | LOST | RETRANS) == 0 {
                    if !sent_after(xmit, s.sent, rack_end, s.end()) {
                        break;
                    }
                    if waiting || now - s.sent <= wait {
                        waiting = true;
                        note_wait(s.sent);
                        continue;
                    }
                    s.flags |= LOST;
                    self.lost_out += 1;
                    self.lost_pending += 1;
                    self.retrans_hint = self.retrans_hint.min(s.start);
                    n += 1;
                }
                // Examined for good: SACKed, lost, or retransmitted (`rtx_order` has it).
                if !waiting {
                    self.rack_scan = s.end();
                }
            }
        }
        (n, timer)
    }

    /// Recounts every counter from the flags; the oracle compares this to the running counters.
    pub fn recount(&self) -> (u32, u32, u32, u32) {
        let (mut s, mut l, mut r, mut p) = (0, 0, 0, 0);
        for g in &self.segs {
            s += g.has(SACKED) as u32;
            l += g.has(LOST) as u32;
            r += g.has(RETRANS) as u32;
            p += (g.has(LOST) && !g.has(RETRANS)) as u32;
        }
        (s, l, r, p)
    }

    pub fn counters(&self) -> (u32, u32, u32, u32) {
        (self.sacked_out, self.lost_out, self.retrans_out, self.lost_pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64, mss: u32) -> Scoreboard {
        let mut b = Scoreboard::new();
        for i in 0..n {
            b.push(Seg { start: i * mss as u64, len: mss, sent: Time::from_us(i), flags: 0, tx: TxRate::default() });
        }
        b
    }

    #[test]
    fn sack_cache_skips_repeated_blocks_and_still_takes_straddled_segments() {
        let mut b = board(100, 100);
        b.begin_ack(Time::ZERO, None);
        assert_eq!(b.sack(1000, 3000).0, 20);
        // The next ACK repeats the block, extended: only the new part counts.
        b.begin_ack(Time::ZERO, None);
        assert_eq!(b.sack(1000, 5000).0, 20);
        b.begin_ack(Time::ZERO, None);
        assert_eq!(b.sack(1000, 5000).0, 0);
        assert_eq!(b.sack(7050, 8000).0, 9); // 7000-7100 is not wholly inside
                                             // A block that now starts below the cached one takes the segment the cache cut.
        b.begin_ack(Time::ZERO, None);
        assert_eq!(b.sack(7000, 8000).0, 1);
        assert_eq!(b.counters().0, 50);
    }

    /// Random ACK sequences over segments of uneven length: the cached walk SACKs exactly what
    /// a walk of every block would (every whole segment inside any block received, until
    /// cumulatively ACKed).
    #[test]
    fn sack_cache_matches_a_full_walk() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m.max(1)
        };
        for _ in 0..300 {
            let mut b = Scoreboard::new();
            let mut segs = Vec::new(); // (start, end, wanted SACKed)
            let mut at = 0u64;
            for i in 0..200 {
                let len = if rnd(5) == 0 { 40 + rnd(60) as u32 } else { 100 };
                b.push(Seg { start: at, len, sent: Time::from_us(i), flags: 0, tx: TxRate::default() });
                segs.push((at, at + len as u64, false));
                at += len as u64;
            }
            let top = at;
            let mut una = 0u64;
            for _ in 0..30 {
                b.begin_ack(Time::ZERO, None);
                for _ in 0..rnd(4) {
                    let s = una + rnd(top - una);
                    let e = (s + 1 + rnd(3_000)).min(top);
                    b.sack(s, e);
                    for g in segs.iter_mut() {
                        g.2 |= g.0 >= s && g.1 <= e;
                    }
                }
                if rnd(4) == 0 {
                    let target = una + rnd(2_000);
                    una = segs.iter().map(|g| g.1).filter(|&e| e <= target).max().unwrap_or(una).max(una);
                    b.ack(una);
                }
                let got: Vec<bool> = b.segs.iter().map(|g| g.has(SACKED)).collect();
                let want: Vec<bool> = segs.iter().filter(|g| g.0 >= una).map(|g| g.2).collect();
                assert_eq!(got, want);
                assert_eq!(b.counters().0 as usize, want.iter().filter(|&&w| w).count());
            }
        }
    }

    #[test]
    fn three_sacked_above_mark_a_hole_lost() {
        let mut b = board(10, 100);
        // Segment 0 lost; 1 and 2 SACKed: not yet (RFC 6675 needs DupThresh = 3 above).
        b.sack(100, 300);
        assert_eq!(b.mark_lost_by_sack(), 0);
        b.sack(300, 400);
        assert_eq!(b.mark_lost_by_sack(), 1);
        assert_eq!(b.counters(), (3, 1, 0, 1));
        assert_eq!(b.in_flight(), 10 - 3 - 1);
        let r = b.take_retransmission(Time::from_ms(1), TxRate::default()).unwrap();
        assert_eq!(r.start, 0);
        assert_eq!(b.in_flight(), 10 - 3 - 1 + 1);
        assert!(b.take_retransmission(Time::from_ms(1), TxRate::default()).is_none());
        assert_eq!(b.recount(), b.counters());
    }

    #[test]
    fn cumulative_ack_clears_state() {
        let mut b = board(10, 100);
        b.sack(200, 600);
        b.mark_lost_by_sack();
        assert_eq!(b.lost_out, 2);
        let (n, _) = b.ack(600);
        assert_eq!(n, 2, "the 4 SACKed segments were delivered already");
        assert_eq!(b.counters(), (0, 0, 0, 0));
        assert_eq!(b.packets_out(), 4);
    }

    /// Segments 0-9 sent at t = 0; segment 0 lost (RFC 6675) and retransmitted at 10 ms;
    /// segments 10-11 sent at `later`.
    fn retransmitted_head(later: Time) -> Scoreboard {
        let mut b = board(10, 100);
        for i in 0..10 {
            b.segs[i].sent = Time::ZERO;
        }
        b.begin_ack(Time::from_ms(10), None);
        b.sack(100, 400);
        assert_eq!(b.mark_lost_by_sack(), 1);
        let r = b.take_retransmission(Time::from_ms(10), TxRate::default()).unwrap();
        assert_eq!(r.start, 0);
        b.begin_ack(Time::from_ms(10), Some(Time::from_ms(10)));
        b.sack(400, 1000);
        for i in 10..12 {
            b.push(Seg { start: i * 100, len: 100, sent: later, flags: 0, tx: TxRate::default() });
        }
        b
    }

    /// RACK: a retransmission is lost again once a segment sent more than reo_wnd after it
    /// is delivered; it goes back to the retransmission queue with the counters adjusted.
    #[test]
    fn rack_marks_a_lost_retransmission_lost_again() {
        let reo_wnd = Time(Time::from_ms(10).ns() / 4);
        let mut b = retransmitted_head(Time::from_ms(13));
        assert_eq!(b.counters(), (9, 1, 1, 0));
        // The originals sent at t = 0 were delivered, but none was sent after the
        // retransmission: nothing to detect.
        assert_eq!(b.rack_detect_loss(Time::from_ms(11), reo_wnd), (0, None));
        // Segment 10 (sent at 13 ms, 3 ms > reo_wnd after the retransmission) is SACKed.
        b.begin_ack(Time::from_ms(23), Some(Time::from_ms(10)));
        b.sack(1000, 1100);
        assert!(b.rack_advanced());
        assert_eq!(b.rack_detect_loss(Time::from_ms(23), reo_wnd), (1, None));
        assert_eq!(b.counters(), (10, 1, 0, 1), "still lost, no longer retransmitted");
        assert_eq!(b.in_flight(), 12 - 10 - 1, "segment 11 only");
        assert_eq!(b.recount(), b.counters());
        let r = b.take_retransmission(Time::from_ms(23), TxRate::default()).unwrap();
        assert_eq!(r.start, 0, "the lost retransmission goes out again");
        assert_eq!(b.counters(), (10, 1, 1, 0));
        // Its stale entry from 10 ms is skipped; the new one is not before RACK.xmit_ts.
        assert_eq!(b.rack_detect_loss(Time::from_ms(30), reo_wnd), (0, None));
        assert_eq!(b.recount(), b.counters());
    }

    /// A held outage (reno-hold-50ms in the x-kernel battery): segments 0-9 sent at ~0 wait in
    /// a queue; segment 0 is retransmitted at 500 ms (an RTO), and at 2 s the original's
    /// cumulative ACK arrives, echoing the original's timestamp. tcp_clean_rtx_queue skips
    /// tcp_rack_advance for it (tcp_skb_spurious_retrans): RACK keeps no 1.5 s "RTT" of the
    /// retransmission, and segments 1-9, still draining from the queue, are not marked lost.
    /// Echoing the retransmission's timestamp instead (the retransmission delivered it), RACK
    /// advances to it and marks all nine: the rule is what keeps them.
    #[test]
    fn rack_ignores_the_cumulative_ack_of_a_spurious_retransmission() {
        let reo_wnd = Time(Time::from_ms(10).ns() / 4);
        let held = |ts_ecr: Time| {
            let mut b = board(10, 100);
            assert!(b.mark_head_lost());
            let r = b.take_retransmission(Time::from_ms(500), TxRate::default()).unwrap();
            assert_eq!(r.start, 0);
            b.begin_ack(Time::from_secs(2), Some(Time::from_ms(10)));
            b.set_ack_ts_ecr(ts_ecr.ns());
            assert_eq!(b.ack(100).0, 1);
            let n = b.rack_detect_loss(Time::from_secs(2), reo_wnd).0;
            assert_eq!(b.recount(), b.counters());
            n
        };
        assert_eq!(held(Time(1)), 0, "the original's ACK: nothing marked lost");
        assert_eq!(held(Time::from_ms(500)), 9, "the retransmission's ACK: the nine sent before it");
    }

    /// RACK tolerates reordering inside reo_wnd: a segment sent 1 ms (< min RTT / 4) after the
    /// retransmission arriving first marks nothing, only arms the reordering timer; the
    /// retransmission arriving right after leaves nothing to mark.
    #[test]
    fn rack_no_spurious_marking_within_reo_wnd() {
        let reo_wnd = Time(Time::from_ms(10).ns() / 4);
        let mut b = retransmitted_head(Time::from_ms(11));
        b.begin_ack(Time::from_ms(21), Some(Time::from_ms(10)));
        b.sack(1000, 1100);
        // The retransmission (10 ms) waits until 10 ms + RACK.rtt (10 ms) + reo_wnd (2.5 ms).
        let (n, timer) = b.rack_detect_loss(Time::from_ms(21), reo_wnd);
        assert_eq!(n, 0);
        assert_eq!(timer, Some(Time::from_us(1500) + Time(1)));
        assert_eq!(b.counters(), (10, 1, 1, 0));
        // The retransmission arrives 1 ms later (reordered): delivered, nothing lost.
        b.begin_ack(Time::from_ms(22), Some(Time::from_ms(10)));
        b.ack(100);
        assert_eq!(b.rack_detect_loss(Time::from_ms(22), reo_wnd), (0, None));
        assert_eq!(b.counters(), (10, 0, 0, 0));
        assert_eq!(b.recount(), b.counters());
        // Segment 11, sent at the same instant as segment 10 but after it (higher sequence),
        // is never "sent before" it, however long it waits.
        b.begin_ack(Time::from_ms(40), Some(Time::from_ms(10)));
        assert_eq!(b.rack_detect_loss(Time::from_ms(40), reo_wnd), (0, None));
        assert_eq!(b.in_flight(), 1);
    }

    /// RACK on original transmissions: a hole with fewer than DupThresh SACKed segments above
    /// it is lost once a segment sent more than reo_wnd later is delivered, not before.
    #[test]
    fn rack_marks_an_original_by_send_time() {
        let reo_wnd = Time::from_ms(2);
        let mut b = Scoreboard::new();
        for i in 0..4u64 {
            b.push(Seg { start: i * 100, len: 100, sent: Time::from_ms(i), flags: 0, tx: TxRate::default() });
        }
        // Segment 2 (sent at 2 ms) delivered at 12 ms: segment 0 (sent 2 ms earlier) is
        // inside the window (not more than reo_wnd), segment 1 too.
        b.begin_ack(Time::from_ms(12), Some(Time::from_ms(10)));
        b.sack(200, 300);
        assert_eq!(b.mark_lost_by_sack(), 0);
        let (n, timer) = b.rack_detect_loss(Time::from_ms(12), reo_wnd);
        assert_eq!(n, 0);
        assert!(timer.is_some());
        // Segment 3 (sent at 3 ms) delivered at 13 ms: segment 0 has waited 13 ms > 10 + 2.
        b.begin_ack(Time::from_ms(13), Some(Time::from_ms(10)));
        b.sack(300, 400);
        // Segment 1 (sent at 1 ms) has waited exactly RACK.rtt + reo_wnd: not yet (strictly more).
        assert_eq!(b.rack_detect_loss(Time::from_ms(13), reo_wnd), (1, Some(Time(1))));
        assert_eq!(b.counters(), (2, 1, 0, 1));
        assert_eq!(b.recount(), b.counters());
    }

    #[test]
    fn rto_marks_all_unsacked_lost() {
        let mut b = board(5, 100);
        b.sack(300, 400);
        b.mark_all_lost();
        assert_eq!(b.counters(), (1, 4, 0, 4));
        assert_eq!(b.in_flight(), 0);
        assert_eq!(b.recount(), b.counters());
    }
}
