//! The driver's transmit descriptor ring between the qdisc and the MAC.
//!
//! Linux hands a packet from the interface's qdisc to the driver, which maps it onto a
//! descriptor of its TX ring; the packet stays on the ring until the device reports it done
//! (sent, or given up after its retries) and the driver frees it. The qdisc holds what the ring
//! has no room for, up to its own limit, and drops beyond that. The wil6210 driver (docs/facts.md,
//! "Transmit ring") stops the netdev queue once fewer than size/8 descriptors are free after a
//! transmit and wakes it once more than size/4 are free after a completion (txrx.c
//! wil_vring_wmark_low / wil_vring_wmark_high, __wil_update_net_queues): while stopped, the qdisc
//! keeps its packets even as the ring drains, down to the wake level. An empty qdisc with the
//! queue awake passes a packet straight to the driver (the qdisc bypass).
//!
//! A station's queue (`Station::queue`) is the ring's frames followed by the qdisc's, in order;
//! `TxRing::n` says where the ring ends. The MAC aggregates from the head, i.e. from the ring:
//! the qdisc holds frames only while the ring holds at least its wake level, more than any
//! aggregate takes (checked in `set_tx_ring`). One descriptor per queued packet (wil6210 uses one
//! per linear skb; a scatter-gather skb takes one per fragment, which the model does not have).
//!
//! The qdisc is drop-tail at its limit, or, where the device's kernel attaches fq_codel (the
//! Netgear X10's: docs/facts.md "Transmit ring"), also runs CoDel (link/codel.rs) on each packet
//! it hands the driver: a packet that waited too long in the qdisc is dropped there instead.
//! With one flow per direction fq_codel's flow queues and round robin have nothing to share, so
//! CoDel on the one queue is what is left of it. Its sojourn clock covers the qdisc only: the
//! ring's own delay is below it, out of its sight (wil6210 has no BQL to shorten the ring).

use super::{Codel, Medium, Packet, Time, AP, STA};

/// A station's TX ring: its descriptors in use and the netdev queue's state.
#[derive(Debug, Clone, Copy)]
pub(super) struct TxRing {
    /// Descriptors in use at which the driver stops the queue: size - size / 8.
    stop: usize,
    /// Descriptors in use at or below which a stopped queue wakes: free > size / 4, i.e.
    /// used < size - 1 - size / 4 (one descriptor is never used: wil_vring_avail_tx).
    wake: usize,
    /// Frames on the ring (the head of the station's queue).
    pub(super) n: usize,
    /// The netdev queue is stopped: the qdisc keeps its frames.
    stopped: bool,
}

impl TxRing {
    /// The ring of `size` descriptors (a power of two, `1 << tx_ring_order`).
    pub(super) fn new(size: usize) -> TxRing {
        TxRing { stop: size - size / 8, wake: size - 1 - size / 4 - 1, n: 0, stopped: false }
    }
}

impl Medium {
    /// Gives both stations a driver TX ring of `size` descriptors below their qdisc, whose limit
    /// is the queue's byte cap (`queue_cap_bytes`). 0 = no ring: the queue is one drop-tail
    /// queue of that cap (the model without a driver ring).
    pub fn set_tx_ring(&mut self, size: u32) {
        for from in [AP, STA] {
            self.set_tx_ring_at(from, size);
        }
    }

    /// `set_tx_ring` for station `from` alone (an AP whose driver build differs from the
    /// client's).
    pub fn set_tx_ring_at(&mut self, from: usize, size: u32) {
        if size == 0 {
            return;
        }
        let ring = TxRing::new(size as usize);
        let biggest = (self.mac.max_mpdus * self.mac.amsdu_msdus.max(1)) as usize;
        assert!(ring.wake >= biggest, "a TX ring of {size} cannot feed a {biggest}-frame aggregate");
        self.st[from].ring = Some(ring);
    }

    /// The qdisc of station `from` is fq_codel: CoDel (link/codel.rs, its default 5 ms target and
    /// 100 ms interval) decides on each packet it hands the ring, under a limit of `limit_bytes`
    /// (fq_codel's packet limit times the MTU). Needs a ring (`set_tx_ring` first): without a
    /// driver queue stopping the qdisc, it would never hold a packet long.
    pub fn set_fq_codel(&mut self, from: usize, limit_bytes: u64) {
        assert!(self.st[from].ring.is_some(), "fq_codel is modelled above a driver TX ring only");
        self.st[from].codel = Some(Codel::default());
        self.st[from].cap_bytes = limit_bytes;
    }

    /// Packets CoDel dropped at station `from`'s qdisc.
    pub fn codel_drops(&self, from: usize) -> u64 {
        self.st[from].codel.map_or(0, |c| c.drops)
    }

    /// Packets on station `from`'s TX ring (None without a ring).
    pub fn ring_len(&self, from: usize) -> Option<usize> {
        self.st[from].ring.map(|r| r.n)
    }

    /// Whether packet `p` offered to station `from` fits: on the ring if the queue is awake
    /// with an empty qdisc and the ring below its stop level, else in the qdisc within its
    /// limit. Counts it where it goes.
    pub(super) fn admit(&mut self, from: usize, p: &Packet) -> bool {
        let s = &mut self.st[from];
        let size = p.size_bytes as u64;
        let Some(ring) = s.ring.as_mut() else {
            if s.queue_bytes + size > s.cap_bytes {
                return false;
            }
            s.queue_bytes += size;
            return true;
        };
        if !ring.stopped && ring.n == s.queue.len() {
            // Qdisc bypass: straight to the driver (refill keeps the qdisc empty while awake).
            // fq_codel has no bypass, but its dequeue comes at once: a zero sojourn, which
            // ends a dropping state as an empty queue does.
            if let Some(c) = s.codel.as_mut() {
                c.on_empty();
            }
            ring.n += 1;
            ring.stopped = ring.n >= ring.stop;
        } else if s.qdisc_bytes + size > s.cap_bytes {
            return false;
        } else {
            s.qdisc_bytes += size;
        }
        s.queue_bytes += size;
        true
    }

    /// A frame at the head of station `from`'s queue left it for good (received, dropped after
    /// its retries, or flushed): its descriptor is free.
    pub(super) fn left_ring(&mut self, from: usize) {
        if let Some(r) = self.st[from].ring.as_mut() {
            r.n -= 1;
        }
    }

    /// After TX completions at `now`: a stopped queue wakes at its wake level, and an awake
    /// queue's qdisc moves its frames onto the ring until it is empty or the ring reaches its
    /// stop level. With CoDel, a frame it drops on the way leaves the queue (to `dropped`).
    pub(super) fn refill_ring(&mut self, from: usize, now: Time, dropped: &mut Vec<Packet>) {
        let s = &mut self.st[from];
        let Some(ring) = s.ring.as_mut() else { return };
        if ring.stopped && ring.n <= ring.wake {
            ring.stopped = false;
        }
        while !ring.stopped && ring.n < s.queue.len() {
            let f = &s.queue[ring.n];
            let bytes = f.p.size_bytes as u64;
            s.qdisc_bytes -= bytes;
            if s.codel.as_mut().is_some_and(|c| c.drop_head(f.queued, now, bytes, s.qdisc_bytes)) {
                let f = s.queue.remove(ring.n).expect("the qdisc's head is queued");
                s.queue_bytes -= bytes;
                // It never reached the MAC: the frames behind it take the sequence numbers
                // from its own on (the firmware numbers MPDUs as it sends them).
                for g in s.queue.range_mut(ring.n..) {
                    g.seq -= 1;
                }
                s.next_seq -= 1;
                self.stats.drops_queue[from] += 1;
                dropped.push(f.p);
                continue;
            }
            ring.n += 1;
            ring.stopped = ring.n >= ring.stop;
        }
        if !ring.stopped {
            // The qdisc ran empty with the queue awake.
            if let Some(c) = s.codel.as_mut() {
                c.on_empty();
            }
        }
    }

    /// The link is lost: the driver freed its ring and the qdisc was reset (the queue is
    /// empty again).
    pub(super) fn reset_ring(&mut self, from: usize) {
        let s = &mut self.st[from];
        if let Some(r) = s.ring.as_mut() {
            r.n = 0;
            r.stopped = false;
        }
        if let Some(c) = s.codel.as_mut() {
            c.on_empty();
        }
        s.qdisc_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use crate::link::medium::testkit::*;

    /// A medium whose qdisc holds `qdisc` packets of 1500 bytes, with a TX ring of `ring`
    /// descriptors (0 = none).
    fn ringed(ring: u32, qdisc: u64) -> Medium {
        let mut mac = MacTiming::dmg();
        mac.cw_min = 0;
        let mut m = Medium::new(RadioPhy::Dmg, mac, 0, Time::ZERO, qdisc * 1500, 9, RngStream::new(1, 1));
        m.set_tx_ring(ring);
        m
    }

    /// Offers `n` 1500-byte packets to the AP while the link is down; how many it took.
    fn offer(m: &mut Medium, n: usize) -> usize {
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        (0..n).filter(|_| m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w)).count()
    }

    /// With a 512-descriptor ring (the driver stops its queue at 448 in use) below a
    /// 1000-packet qdisc, a backlog of 2000 packets leaves 1448 queued at the AP: the qdisc
    /// drops only beyond its own 1000. Without the ring the same queue takes 1000.
    #[test]
    fn the_ring_holds_packets_below_the_qdisc() {
        let mut m = ringed(512, 1000);
        assert_eq!(offer(&mut m, 2000), 448 + 1000);
        assert_eq!(m.ring_len(AP), Some(448));
        assert_eq!(m.queue_bytes(AP), 1448 * 1500, "the station's queue counts ring and qdisc");
        assert_eq!(m.stats.drops_queue[AP], 2000 - 1448);
        let mut m = ringed(0, 1000);
        assert_eq!(offer(&mut m, 2000), 1000);
        assert_eq!(m.ring_len(AP), None);
    }

    /// The driver's watermarks: a stopped queue does not refill the ring as it drains until
    /// more than size/4 descriptors are free (383 in use of 512), then fills it to the stop
    /// level (448) again; everything queued is delivered, in order.
    #[test]
    fn a_stopped_queue_wakes_at_the_high_watermark() {
        let mut m = ringed(512, 1000);
        assert_eq!(offer(&mut m, 1448), 1448);
        let mut w = Wake::default();
        m.set_up(Time::ZERO, true, &mut w);
        let mut dropped = Vec::new();
        let mut seen = Vec::new();
        let mut now = Time::ZERO;
        let mut got = 0usize;
        while got < 1448 {
            let t = w.tx_done.take().expect("the AP has frames to send");
            now = now.max(t);
            m.on_tx_done(now, &mut w, &mut dropped);
            while m.on_arrival(Time(u64::MAX / 2), AP, &mut w).is_some() {
                got += 1;
            }
            let (ring, total) = (m.ring_len(AP).unwrap_or(0), m.queue_bytes(AP) / 1500);
            seen.push((ring, total as usize));
        }
        assert!(dropped.is_empty());
        // While the qdisc holds packets, the ring stays between the wake and stop levels, and
        // it drops below 448 - 32 (one aggregate) only when nothing waits in the qdisc.
        for &(ring, total) in &seen {
            if total > ring {
                assert!((383 - 32..=448).contains(&ring), "ring {ring} with {total} queued");
            }
        }
        assert!(seen.iter().any(|&(r, t)| t > r && r < 448 - 32), "the ring drained below its stop level");
        assert_eq!(seen.last().map(|s| s.1), Some(0));
    }

    /// A lost link flushes the ring and the qdisc: afterwards packets go straight to the ring.
    #[test]
    fn a_disconnect_empties_ring_and_qdisc() {
        let mut m = ringed(512, 1000);
        offer(&mut m, 1448);
        let (mut w, mut dropped) = (Wake::default(), Vec::new());
        m.disconnect(Time::ZERO, &mut w, &mut dropped);
        assert_eq!(dropped.len(), 1448);
        assert_eq!((m.ring_len(AP), m.queue_bytes(AP)), (Some(0), 0));
        m.set_up(Time::ZERO, true, &mut w);
        assert!(m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w));
        assert_eq!(m.ring_len(AP), Some(1));
    }

    /// Offers 1500-byte packets to the AP every `gap_ns` for `secs` while the link carries
    /// them; returns (offered, delivered, dropped at the AP: at its queue or after retries).
    fn stream(m: &mut Medium, gap_ns: u64, secs: u64) -> (u64, u64, u64) {
        let (mut w, mut dropped) = (Wake::default(), Vec::new());
        let (mut offered, mut got) = (0u64, 0u64);
        let end = Time::from_secs(secs);
        let mut next = Time::ZERO;
        loop {
            let done = w.tx_done;
            if next < end && done.is_none_or(|t| next <= t) {
                offered += 1;
                m.enqueue(next, AP, pkt(0, 1500), &mut w);
                next += Time::from_ns(gap_ns);
            } else if let Some(t) = done {
                w.tx_done = None;
                m.on_tx_done(t, &mut w, &mut dropped);
            } else {
                break;
            }
            while m.on_arrival(Time(u64::MAX / 2), AP, &mut w).is_some() {
                got += 1;
            }
        }
        (offered, got, m.stats.drops_queue[AP] + m.stats.drops_retry[AP])
    }

    /// fq_codel above the ring: a standing qdisc (packets offered faster than any DMG rate for
    /// 0.3 s) meets CoDel, which drops at the qdisc's head as packets leave it for the ring;
    /// what it drops never reaches the MAC, so the receiver does not wait for it and every
    /// other packet is delivered. Without fq_codel the same qdisc only drops at its tail.
    #[test]
    fn codel_drops_from_a_standing_qdisc_and_the_rest_is_delivered() {
        let mut m = ringed(1024, 1024);
        m.set_fq_codel(AP, 1024 * 1500);
        let (offered, got, dropped) = stream(&mut m, 2_000, 1);
        assert!(m.codel_drops(AP) > 0, "no CoDel drop");
        assert!(dropped >= m.codel_drops(AP));
        assert_eq!(got + dropped, offered, "every packet is delivered or dropped");
        let mut plain = ringed(1024, 1024);
        let (offered, got, dropped) = stream(&mut plain, 2_000, 1);
        assert_eq!(plain.codel_drops(AP), 0);
        assert_eq!(got + dropped, offered);
    }

    /// Below the link's rate the qdisc never holds a packet for 5 ms: CoDel drops nothing.
    #[test]
    fn codel_leaves_a_short_queue_alone() {
        let mut m = ringed(1024, 1024);
        m.set_fq_codel(AP, 1024 * 1500);
        let (offered, got, dropped) = stream(&mut m, 20_000, 1);
        assert_eq!((got, dropped, m.codel_drops(AP)), (offered, 0, 0));
    }
}
