//! The data-level state of an MPTCP connection (RFC 8684 section 3.3): how subflow bytes map to
//! data sequence numbers (DSN) on the sending side, the reinjection queue, and the
//! connection-level reassembly buffer with its receive window on the receiving side.
//!
//! The connection that moves data between these structures and the subflows' TCP endpoints is
//! `connection.rs`; everything here is plain bookkeeping with unit tests.

use std::collections::VecDeque;

/// One DSS mapping: subflow bytes [sseq, sseq + len) carry data bytes [dsn, dsn + len).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Map {
    pub sseq: u64,
    pub dsn: u64,
    pub len: u64,
}

/// The mappings of one subflow's send queue, in subflow-sequence order and contiguous
/// (each chunk the scheduler assigns is appended at the subflow's current end).
#[derive(Debug, Default)]
pub struct MapQueue {
    maps: VecDeque<Map>,
}

impl MapQueue {
    /// Subflow sequence number after the last mapped byte (the subflow's application limit).
    pub fn end(&self) -> Option<u64> {
        self.maps.back().map(|m| m.sseq + m.len)
    }

    /// Appends a mapping; merges it into the last one when both sequences continue it.
    /// Returns false when it starts a new mapping (a record boundary for the subflow).
    pub fn push(&mut self, sseq: u64, dsn: u64, len: u64) -> bool {
        debug_assert!(self.end().is_none_or(|e| e == sseq), "maps are contiguous in subflow space");
        if let Some(last) = self.maps.back_mut() {
            if last.sseq + last.len == sseq && last.dsn + last.len == dsn {
                last.len += len;
                return true;
            }
        }
        self.maps.push_back(Map { sseq, dsn, len });
        false
    }

    /// The DSN carried by subflow byte `seq`, and how many bytes from there the mapping covers.
    #[inline]
    pub fn dsn_of(&self, seq: u64) -> Option<(u64, u64)> {
        // New data is in the last map (the common case: one check); otherwise maps are sorted
        // by sseq: binary search for the last map starting at or before seq.
        let m = match self.maps.back() {
            Some(m) if m.sseq <= seq => m,
            _ => {
                let i = self.maps.partition_point(|m| m.sseq <= seq);
                self.maps.get(i.checked_sub(1)?)?
            }
        };
        (seq < m.sseq + m.len).then(|| (m.dsn + (seq - m.sseq), m.sseq + m.len - seq))
    }

    /// Forgets mappings wholly below `snd_una` (acknowledged at subflow level).
    pub fn prune(&mut self, snd_una: u64) {
        while let Some(m) = self.maps.front() {
            if m.sseq + m.len <= snd_una {
                self.maps.pop_front();
            } else {
                break;
            }
        }
    }

    /// Calls `f(dsn, len)` for every data range mapped onto subflow bytes [from, to).
    pub fn for_each_range(&self, from: u64, to: u64, mut f: impl FnMut(u64, u64)) {
        for m in &self.maps {
            let (s, e) = (m.sseq.max(from), (m.sseq + m.len).min(to));
            if s < e {
                f(m.dsn + (s - m.sseq), e - s);
            }
        }
    }

    /// Removes the mappings of subflow bytes at and beyond `seq` (unsent data taken back),
    /// calling `f(dsn, len)` for each removed data range, in order.
    pub fn truncate(&mut self, seq: u64, mut f: impl FnMut(u64, u64)) {
        while let Some(m) = self.maps.back_mut() {
            if m.sseq >= seq {
                let m = self.maps.pop_back().expect("non-empty");
                f(m.dsn, m.len);
            } else if m.sseq + m.len > seq {
                let keep = seq - m.sseq;
                f(m.dsn + keep, m.len - keep);
                m.len = keep;
            } else {
                break;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.maps.len()
    }
    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }
}

/// Data ranges waiting to be sent again on another subflow (v0.9x mptcp_reinject_data; the
/// upstream kernel's __mptcp_retransmit_pending_data).
#[derive(Debug, Default)]
pub struct ReinjectQueue {
    q: VecDeque<(u64, u64)>,
    pub bytes: u64,
}

impl ReinjectQueue {
    pub fn push(&mut self, dsn: u64, len: u64) {
        if len == 0 {
            return;
        }
        // Skip a range already queued (a second RTO on the same subflow reinjects it again).
        if self.q.iter().any(|&(d, l)| d <= dsn && dsn + len <= d + l) {
            return;
        }
        self.q.push_back((dsn, len));
        self.bytes += len;
    }

    /// The next range to send, at most `max` bytes, skipping what the peer has data-ACKed.
    pub fn pop(&mut self, data_una: u64, max: u64) -> Option<(u64, u64)> {
        while let Some(&(d, l)) = self.q.front() {
            if d + l <= data_una {
                self.q.pop_front();
                self.bytes -= l;
                continue;
            }
            let (d2, l2) = if d < data_una { (data_una, d + l - data_una) } else { (d, l) };
            let take = l2.min(max);
            self.bytes -= l - (l2 - take);
            if take == l2 {
                self.q.pop_front();
            } else {
                self.q[0] = (d2 + take, l2 - take);
            }
            return Some((d2, take));
        }
        None
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Drops everything (e.g. all of it was data-ACKed).
    pub fn clear(&mut self) {
        self.q.clear();
        self.bytes = 0;
    }
}

/// The receiver's connection-level buffer: data arrives by DSN from any subflow, in any order;
/// the application reads the in-order part at once (iperf3 reads as fast as it can), so the
/// buffer holds only out-of-order data, and that data takes buffer space: the v0.9x receiver
/// charges every skb it moves to the meta out-of-order queue to the meta socket
/// (`skb_set_owner_r(tmp1, meta_sk)` in mptcp_queue_skb, net/mptcp/mptcp_input.c) and
/// advertises `tcp_space(meta_sk)` = tcp_win_from_space(sk_rcvbuf - sk_rmem_alloc)
/// (__mptcp_select_window, net/mptcp/mptcp_output.c). With tcp_adv_win_scale = 1 the buffer is
/// twice the window because an skb's truesize is taken as twice its payload; held data costs
/// that much, so each out-of-order byte takes one byte off the window. The advertised right
/// edge never moves left (tcp_select_window keeps `cur_win` when the new window is smaller).
/// Data beyond it waits on the sender (head-of-line blocking, RFC 8684 3.3.4: one shared
/// receive window).
#[derive(Debug)]
pub struct Reassembly {
    /// Next data byte expected (the data ACK).
    pub data_ack: u64,
    /// Out-of-order ranges [start, end), sorted and disjoint, all above data_ack.
    ooo: Vec<(u64, u64)>,
    pub rcvbuf: u64,
    pub ooo_bytes: u64,
    /// Bytes that arrived more than once (reinjections and redundant copies).
    pub duplicate_bytes: u64,
    /// Bytes that arrived beyond the advertised window (the sender must never do that).
    pub beyond_window_bytes: u64,
    /// Most out-of-order bytes held at once.
    pub max_ooo_bytes: u64,
    /// The advertised right edge (data_ack + window), never moving left.
    right: u64,
    /// Upstream: the edge moves only when an ACK advertises it (`advertise`), each subflow
    /// offering at most its own rcv_ssthresh; v0.9x: it follows the free space at once.
    edge_on_ack: bool,
}

impl Reassembly {
    pub fn new(rcvbuf: u64) -> Self {
        Reassembly {
            data_ack: 0,
            ooo: Vec::with_capacity(64),
            rcvbuf,
            ooo_bytes: 0,
            duplicate_bytes: 0,
            beyond_window_bytes: 0,
            max_ooo_bytes: 0,
            right: rcvbuf,
            edge_on_ack: false,
        }
    }

    /// The upstream receiver's edge: moved only by the ACKs that advertise it (`advertise`).
    pub fn with_edge_on_ack(mut self) -> Self {
        self.edge_on_ack = true;
        self
    }

    /// The buffer's free space in window units (__mptcp_space): the window before any cap.
    pub fn free(&self) -> u64 {
        self.rcvbuf.saturating_sub(self.ooo_bytes)
    }

    /// The window an ACK of a subflow whose rcv_ssthresh is `cap` advertises (upstream): the
    /// subflow's __tcp_select_window offers the connection's free space but at most its own
    /// rcv_ssthresh, and mptcp_set_rwin (net/mptcp/options.c) never lets an ACK retract the
    /// edge an earlier one advertised on any subflow (msk->rcv_wnd_sent): it advertises the
    /// old edge instead.
    pub fn advertise(&mut self, cap: u64) -> u64 {
        self.right = self.right.max(self.data_ack + self.free().min(cap));
        self.right - self.data_ack
    }

    /// The advertised window from data_ack: what is free of the buffer once the out-of-order
    /// data is charged (one window byte per byte held, see above), but never retracting an edge
    /// already advertised.
    pub fn window(&self) -> u64 {
        self.right - self.data_ack
    }

    /// The buffer's window grew (autotuning, connection/rcv_space.rs): v0.9x's edge moves at
    /// once, for the read's ACKs to carry; upstream's with the next ACK (`advertise`).
    pub fn set_rcvbuf(&mut self, window: u64) {
        self.rcvbuf = window;
        self.update_right();
    }

    /// The right edge the window offers now: __mptcp_select_window's free space, kept at least
    /// where it was (tcp_select_window: `if (new_win < cur_win) new_win = cur_win`).
    fn update_right(&mut self) {
        if !self.edge_on_ack {
            self.right = self.right.max(self.data_ack + self.free());
        }
    }

    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// Data bytes [dsn, dsn + len) arrived; returns how many became in order (delivered).
    pub fn on_data(&mut self, dsn: u64, len: u64) -> u64 {
        let (mut s, mut e) = (dsn, dsn + len);
        let right = self.right;
        if e > right {
            self.beyond_window_bytes += e - right.max(s);
            e = right;
        }
        if s < self.data_ack {
            self.duplicate_bytes += self.data_ack.min(e) - s;
            s = self.data_ack;
        }
        if s >= e {
            return 0;
        }
        if s == self.data_ack && self.ooo.first().is_none_or(|&(os, _)| os > e) {
            // In order and touching nothing held: delivered at once. The maximum counts the
            // range for an instant as the general path does (it inserts, then delivers).
            self.max_ooo_bytes = self.max_ooo_bytes.max(self.ooo_bytes + (e - s));
            self.data_ack = e;
            self.update_right();
            return e - s;
        }
        // Insert [s, e) into the sorted set, merging the ranges it overlaps or touches
        // (ranges i..j) and counting the overlap as duplicate.
        let i = self.ooo.partition_point(|&(_, oe)| oe < s);
        let mut j = i;
        let mut ns = s;
        let mut ne = e;
        let mut overlap = 0;
        let mut removed = 0;
        while j < self.ooo.len() && self.ooo[j].0 <= ne {
            let (os, oe) = self.ooo[j];
            overlap += oe.min(e).saturating_sub(os.max(s));
            removed += oe - os;
            ns = ns.min(os);
            ne = ne.max(oe);
            j += 1;
        }
        if j == i {
            self.ooo.insert(i, (ns, ne));
        } else {
            self.ooo[i] = (ns, ne);
            self.ooo.drain(i + 1..j);
        }
        self.duplicate_bytes += overlap;
        self.ooo_bytes = self.ooo_bytes - removed + (ne - ns);
        self.max_ooo_bytes = self.max_ooo_bytes.max(self.ooo_bytes);
        let mut delivered = 0;
        if self.ooo.first().is_some_and(|&(os, _)| os == self.data_ack) {
            let (os, oe) = self.ooo.remove(0);
            delivered = oe - os;
            self.ooo_bytes -= delivered;
            self.data_ack = oe;
        }
        self.update_right();
        delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_translate_subflow_bytes_to_data_bytes() {
        let mut q = MapQueue::default();
        q.push(0, 1000, 500);
        q.push(500, 1500, 500); // continues both: merged
        assert_eq!(q.len(), 1);
        q.push(1000, 9000, 300);
        assert_eq!(q.dsn_of(0), Some((1000, 1000)));
        assert_eq!(q.dsn_of(700), Some((1700, 300)));
        assert_eq!(q.dsn_of(1100), Some((9100, 200)));
        assert_eq!(q.dsn_of(1300), None);
        let mut got = Vec::new();
        q.for_each_range(900, 1100, |d, l| got.push((d, l)));
        assert_eq!(got, vec![(1900, 100), (9000, 100)]);
        q.prune(1000);
        assert_eq!(q.len(), 1);
        assert_eq!(q.dsn_of(500), None);
    }

    #[test]
    fn truncate_returns_unsent_ranges() {
        let mut q = MapQueue::default();
        q.push(0, 0, 1000);
        q.push(1000, 5000, 1000);
        let mut got = Vec::new();
        q.truncate(600, |d, l| got.push((d, l)));
        assert_eq!(got, vec![(5000, 1000), (600, 400)]);
        assert_eq!(q.end(), Some(600));
    }

    #[test]
    fn reinject_queue_skips_acked_data_and_splits() {
        let mut r = ReinjectQueue::default();
        r.push(0, 3000);
        r.push(1000, 1000); // inside the first: not queued twice
        assert_eq!(r.bytes, 3000);
        assert_eq!(r.pop(500, 1000), Some((500, 1000)));
        assert_eq!(r.pop(500, 10_000), Some((1500, 1500)));
        assert_eq!(r.bytes, 0);
        assert!(r.is_empty());
        r.push(0, 1000);
        assert_eq!(r.pop(1000, 1000), None, "already data-ACKed");
        assert_eq!(r.bytes, 0);
    }

    #[test]
    fn reassembly_delivers_in_order_and_counts_duplicates() {
        let mut r = Reassembly::new(10_000);
        assert_eq!(r.on_data(1000, 1000), 0, "hole at 0");
        assert_eq!(r.ooo_bytes, 1000);
        assert_eq!(r.on_data(3000, 1000), 0);
        assert_eq!(r.ooo_ranges(), &[(1000, 2000), (3000, 4000)]);
        assert_eq!(r.on_data(0, 1000), 2000, "fills the hole: 0..2000 in order");
        assert_eq!(r.data_ack, 2000);
        assert_eq!(r.on_data(1500, 1000), 500, "half duplicate");
        assert_eq!(r.duplicate_bytes, 500);
        assert_eq!(r.data_ack, 2500);
        assert_eq!(r.on_data(2000, 2000), 1500, "2500..3000 new, and 3000..4000 held joins it");
        assert_eq!(r.data_ack, 4000);
        assert_eq!(r.ooo_bytes, 0);
        assert_eq!(r.duplicate_bytes, 500 + 1000 + 500);
    }

    /// Head-of-line blocking: data beyond the advertised right edge (data_ack + rcvbuf with
    /// nothing held) is outside the window.
    #[test]
    fn reassembly_window_ends_at_the_advertised_edge() {
        let mut r = Reassembly::new(4000);
        assert_eq!(r.window(), 4000);
        assert_eq!(r.on_data(1000, 3000), 0);
        assert_eq!(r.on_data(4000, 1000), 0);
        assert_eq!(r.beyond_window_bytes, 1000);
        assert_eq!(r.on_data(0, 1000), 4000);
        assert_eq!(r.data_ack, 4000);
        assert_eq!(r.window(), 4000, "nothing held: the whole buffer is window again");
    }

    /// Out-of-order data is charged to the buffer (twice its payload, of a buffer twice the
    /// window): each byte held takes a byte off the window, but an edge already advertised
    /// is never taken back.
    #[test]
    fn held_data_takes_window_without_retracting_the_edge() {
        let mut r = Reassembly::new(10_000);
        // A hole at 0..1000, 3000 bytes held behind it: the free space would end at
        // 0 + 10_000 - 3000, but the edge at 10_000 was advertised already.
        assert_eq!(r.on_data(1000, 3000), 0);
        assert_eq!(r.ooo_bytes, 3000);
        assert_eq!(r.window(), 10_000, "the edge at 10_000 stays");
        // The hole fills: 4000 delivered, nothing held, the edge moves to 4000 + 10_000.
        assert_eq!(r.on_data(0, 1000), 4000);
        assert_eq!(r.window(), 10_000);
        // 5000..9000 held behind a hole at 4000..5000: free space ends at
        // 4000 + 10_000 - 4000 = 10_000, below the advertised 14_000, which stays.
        assert_eq!(r.on_data(5000, 4000), 0);
        assert_eq!(r.window(), 10_000);
        // 4000..4500 arrives: data_ack 4500, 4000 still held: the new free space ends at
        // 4500 + 6000 = 10_500 < 14_000, so the edge does not move and the window shrinks from
        // the left only.
        assert_eq!(r.on_data(4000, 500), 500);
        assert_eq!(r.window(), 14_000 - 4500);
        // The rest arrives: everything in order, the edge moves on to 9000 + 10_000.
        assert_eq!(r.on_data(4500, 500), 4500);
        assert_eq!(r.data_ack, 9000);
        assert_eq!(r.window(), 10_000);
        // Data up to the advertised edge is accepted even while held data shrinks the free
        // space: the sender may use what it was offered.
        assert_eq!(r.on_data(10_000, 9000), 0);
        assert_eq!(r.beyond_window_bytes, 0);
        assert_eq!(r.window(), 10_000, "edge 19_000 kept though 9000 bytes are held");
        assert_eq!(r.on_data(9000, 1000), 10_000);
        assert_eq!(r.window(), 10_000);
    }

    /// The reassembly's bookkeeping against a byte-by-byte model: which bytes are held, what
    /// is delivered, duplicates, bytes beyond the window, the out-of-order total and its
    /// maximum (which, as always, counts an in-order range for the instant before delivery).
    #[test]
    fn reassembly_matches_a_byte_model_on_random_arrivals() {
        let mut rng = crate::engine::RngStream::new(11, 4);
        for window in [600u64, 5_000] {
            let mut r = Reassembly::new(window);
            let mut held = vec![false; 20_000];
            let (mut ack, mut dup, mut beyond, mut max_ooo, mut right) = (0u64, 0u64, 0u64, 0u64, window);
            for _ in 0..4000 {
                // Mostly near the data ACK, some in order, some repeats, some past the window.
                let dsn = match rng.next_u64() % 4 {
                    0 => ack,
                    1 => ack.saturating_sub(rng.next_u64() % 300),
                    _ => ack + rng.next_u64() % 1_500,
                };
                let len = 1 + rng.next_u64() % 200;
                if dsn + len >= held.len() as u64 {
                    break;
                }
                let mut e = dsn + len;
                if e > right {
                    beyond += e - right.max(dsn);
                    e = right;
                }
                let mut added = 0;
                for b in dsn..e {
                    if b < ack || held[b as usize] {
                        dup += 1;
                    } else {
                        held[b as usize] = true;
                        added += 1;
                    }
                }
                let ooo_before: u64 = (ack..held.len() as u64).filter(|&b| held[b as usize]).count() as u64;
                max_ooo = max_ooo.max(ooo_before);
                let mut delivered = 0;
                while held.get(ack as usize) == Some(&true) {
                    held[ack as usize] = false;
                    ack += 1;
                    delivered += 1;
                }
                let ooo: u64 = (ack..held.len() as u64).filter(|&b| held[b as usize]).count() as u64;
                if added > 0 {
                    right = right.max(ack + window.saturating_sub(ooo));
                }
                assert_eq!(r.on_data(dsn, len), delivered, "[{dsn}, +{len})");
                assert_eq!(
                    (r.data_ack, r.duplicate_bytes, r.beyond_window_bytes, r.ooo_bytes, r.max_ooo_bytes, r.window()),
                    (ack, dup, beyond, ooo, max_ooo, right - ack),
                    "[{dsn}, +{len})"
                );
            }
        }
    }

    #[test]
    fn reassembly_merges_bridging_range() {
        let mut r = Reassembly::new(1 << 20);
        r.on_data(1000, 100);
        r.on_data(1200, 100);
        r.on_data(1400, 100);
        r.on_data(1050, 400); // bridges all three
        assert_eq!(r.ooo_ranges(), &[(1000, 1500)]);
        assert_eq!(r.ooo_bytes, 500);
        assert_eq!(r.duplicate_bytes, 50 + 100 + 50);
    }
}
