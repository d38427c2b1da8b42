//! The receiver's Block Ack reordering buffer (IEEE 802.11-2016 10.24.7): MPDUs that arrive
//! after a gap (an earlier MPDU of the window failed and is being retried) are held and passed
//! up in sequence order once the gap is filled or given up (retry limit, Block Ack Request).
//! Without it TCP would see every MAC retransmission as reordering.

use crate::packet::Packet;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy)]
enum Slot {
    Empty,
    Ready(Packet),
    /// Dropped by the sender after its last retry: skip it.
    Skip,
}

#[derive(Debug, Default)]
pub struct Reorder {
    /// Sequence number of the first slot.
    next: u64,
    window: VecDeque<Slot>,
}

impl Reorder {
    pub fn new() -> Self {
        Reorder { next: 0, window: VecDeque::with_capacity(128) }
    }

    fn put(&mut self, seq: u64, slot: Slot) {
        debug_assert!(seq >= self.next, "sequence {seq} below the window start {}", self.next);
        let i = (seq - self.next) as usize;
        while self.window.len() <= i {
            self.window.push_back(Slot::Empty);
        }
        self.window[i] = slot;
    }

    fn release(&mut self, out: &mut impl FnMut(&Packet)) {
        while let Some(s) = self.window.front() {
            match s {
                Slot::Empty => break,
                Slot::Ready(p) => out(p),
                Slot::Skip => {}
            }
            self.window.pop_front();
            self.next += 1;
        }
    }

    /// MPDU `seq` arrived: hands `out` every packet now in order, in order. By reference (a
    /// packet is over 100 bytes): the in-order packet goes from the sender's queue to wherever
    /// `out` puts it in one copy.
    #[inline]
    pub fn accept(&mut self, seq: u64, p: &Packet, mut out: impl FnMut(&Packet)) {
        if seq == self.next && self.window.is_empty() {
            // In order with nothing held (almost always): straight through, without a round
            // trip of the packet through the window.
            out(p);
            self.next += 1;
            return;
        }
        self.put(seq, Slot::Ready(*p));
        self.release(&mut out);
    }

    /// MPDU `seq` will never arrive: hands `out` what it was holding back.
    pub fn skip(&mut self, seq: u64, mut out: impl FnMut(&Packet)) {
        self.put(seq, Slot::Skip);
        self.release(&mut out);
    }

    /// Packets held back waiting for a gap.
    pub fn held(&self) -> impl Iterator<Item = &Packet> {
        self.window.iter().filter_map(|s| match s {
            Slot::Ready(p) => Some(p),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Way};

    fn pkt(seq: u64) -> Packet {
        let mut p = Packet::empty(0, Kind::Udp, Way::Forward);
        p.seq = seq;
        p
    }

    #[test]
    fn holds_after_a_gap_and_releases_in_order() {
        let mut r = Reorder::new();
        let mut out = Vec::new();
        r.accept(0, &pkt(0), |p| out.push(*p));
        r.accept(2, &pkt(2), |p| out.push(*p));
        r.accept(3, &pkt(3), |p| out.push(*p));
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0]);
        assert_eq!(r.held().count(), 2);
        r.accept(1, &pkt(1), |p| out.push(*p));
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        // In order again with nothing held: straight through.
        r.accept(4, &pkt(4), |p| out.push(*p));
        assert_eq!(out.len(), 5);
        assert_eq!(r.held().count(), 0);
    }

    #[test]
    fn a_dropped_mpdu_unblocks_the_window() {
        let mut r = Reorder::new();
        let mut out = Vec::new();
        r.accept(1, &pkt(1), |p| out.push(*p));
        assert!(out.is_empty());
        r.skip(0, |p| out.push(*p));
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1]);
    }
}
