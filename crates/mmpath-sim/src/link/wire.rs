//! A wired link direction: a drop-tail byte queue served at the current rate, then a propagation
//! pipe. The queue schedules a "transmission done" event only while it is busy, and the pipe
//! one "arrival" event for its head packet, so a link costs two events per packet no matter
//! how many packets it holds. Pipe and queue are one FIFO (the pipe's packets, oldest first,
//! then the queue's), so a packet is not copied from one to the other when it is sent. A
//! capacity trace (link/trace.rs) drives the same link through `set_rate` and `set_up`.
//!
//! Down, a wire either holds (its queue keeps what it had and takes more, as far as it holds,
//! sent when the link returns) or drops (its queue is purged and everything offered is lost
//! until the link returns): `Outage`, set before the link goes down (`set_outage`). A drop
//! outage is the path cut at its client's end at one instant (`ip link set down` there), so
//! what is already propagating (in the pipe) toward the client is lost with it and what is
//! propagating away from the client arrives, having left the cut interface before it went
//! (`LinkCfg::toward_cut`); a hold outage delivers the pipe either way.

use super::seam::{Gone, Link, Wake};
use crate::engine::RngStream;
use crate::packet::{Kind, Packet};
pub use crate::scenario::Outage;
use crate::time::Time;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;

/// Static configuration of one direction of a link.
#[derive(Debug, Clone)]
pub struct LinkCfg {
    pub rate_bps: u64,
    pub delay: Time,
    pub queue_cap_bytes: u64,
    /// Link-layer bytes added to every frame (PPP 2, Ethernet 38, ...).
    pub frame_overhead_bytes: u32,
    /// Independent random frame-loss probability.
    pub loss_prob: f64,
    /// This direction ends at the interface a drop outage takes down (a path's downlink, to the
    /// client): what it is propagating then would arrive at a dead interface and is lost with
    /// the queue. False for the uplink, whose pipe left the cut interface before the cut, and for
    /// the backbone, which no outage takes down.
    pub toward_cut: bool,
}

/// Counters a link keeps for the summary.
#[derive(Debug, Clone, Default)]
pub struct LinkStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub drops_queue: u64,
    pub drops_down: u64,
    pub drops_random: u64,
    /// Time the transmitter was busy (for utilisation).
    pub busy_ns: u64,
}

/// One direction of a wired link (or a trace-driven one: its rate and state set from outside).
pub struct Wire {
    pub cfg: LinkCfg,
    rate_bps: u64,
    up: bool,
    /// What the link does while it is down (the next down period, or this one).
    outage: Outage,
    /// Down and dropping: everything offered is refused (`enqueue` tests this one flag).
    refusing: bool,
    /// The pipe then the queue: the first `in_pipe` entries propagate (with their arrival
    /// times), the rest wait or are being transmitted (their times unused, zero).
    line: VecDeque<(Time, Packet)>,
    in_pipe: usize,
    queue_bytes: u64,
    /// Completion time of the frame at the queue head, if one is being transmitted.
    tx_end: Option<Time>,
    tx_start: Time,
    /// The stream the random frame loss (`cfg.loss_prob`) is drawn from.
    loss_rng: RngStream,
    pub stats: LinkStats,
}

impl Wire {
    pub fn new(cfg: LinkCfg, loss_rng: RngStream) -> Wire {
        Wire {
            rate_bps: cfg.rate_bps,
            cfg,
            up: true,
            outage: Outage::Hold,
            refusing: false,
            line: VecDeque::with_capacity(512),
            in_pipe: 0,
            queue_bytes: 0,
            tx_end: None,
            tx_start: Time::ZERO,
            loss_rng,
            stats: LinkStats::default(),
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    pub fn is_up(&self) -> bool {
        self.up
    }
    pub fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }
    pub fn queue_len(&self) -> usize {
        self.line.len() - self.in_pipe
    }

    fn frame_time(&self, p: &Packet) -> Time {
        Time::transmission((p.size_bytes + self.cfg.frame_overhead_bytes) as u64, self.rate_bps)
    }

    fn start_tx(&mut self, now: Time) -> Option<Time> {
        // Rate 0 (a capacity trace with no delivery opportunity) stalls the queue like a
        // link that is up but given no airtime; nothing is lost.
        if self.tx_end.is_some() || !self.up || self.rate_bps == 0 {
            return None;
        }
        let head = self.head()?;
        let end = now + self.frame_time(head);
        self.tx_end = Some(end);
        self.tx_start = now;
        Some(end)
    }

    /// Whether a TxDone event at `now` is the real end of the frame on the air (not stale).
    pub fn tx_due(&self, now: Time) -> bool {
        self.tx_end == Some(now)
    }

    /// Offers a packet to the queue. Returns false (and counts a drop) when it does not fit.
    ///
    /// Per packet, this and `on_tx_done` make no call on their common path (growing the line or
    /// losing the frame is a tail call out of line), so they save no registers.
    pub fn enqueue(&mut self, now: Time, p: Packet, wake: &mut Wake) -> bool {
        if self.refusing {
            return self.refuse();
        }
        if self.line.len() == self.line.capacity() {
            return self.enqueue_growing(now, p, wake);
        }
        let size = p.size_bytes as u64;
        if self.queue_bytes + size > self.cfg.queue_cap_bytes {
            self.stats.drops_queue += 1;
            return false;
        }
        self.queue_bytes += size;
        self.line.push_back((Time::ZERO, p));
        if let Some(t) = self.start_tx(now) {
            wake.tx_done = Some(t);
        }
        true
    }

    /// `enqueue` when the line is full: make room, then enqueue as usual.
    #[cold]
    #[inline(never)]
    fn enqueue_growing(&mut self, now: Time, p: Packet, wake: &mut Wake) -> bool {
        self.line.reserve(1);
        self.enqueue(now, p, wake)
    }

    /// `enqueue` while down and dropping: the packet is lost.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self) -> bool {
        self.stats.drops_down += 1;
        false
    }

    /// The packet at the head of the queue (the one in transmission, if any).
    pub fn head(&self) -> Option<&Packet> {
        self.line.get(self.in_pipe).map(|(_, p)| p)
    }

    /// The head frame's transmission ends. `lost` says whether the channel destroyed it
    /// (random loss is drawn by the caller, who owns the RNG stream). Stale events (the link
    /// went down mid-frame) are ignored. Returns the frame if the channel destroyed it.
    pub fn on_tx_done(&mut self, now: Time, lost: bool, wake: &mut Wake) -> Option<Packet> {
        if self.tx_end != Some(now) {
            return None;
        }
        self.tx_end = None;
        self.stats.busy_ns += (now - self.tx_start).ns();
        if lost {
            return self.lose_head(now, wake);
        }
        // The head of the queue joins the pipe where it is: at its end.
        let at = now + self.cfg.delay;
        let (t, p) = self.line.get_mut(self.in_pipe).expect("a frame was in transmission");
        *t = at;
        let size = p.size_bytes as u64;
        self.queue_bytes -= size;
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += size;
        if self.in_pipe == 0 {
            wake.arrival[0] = Some(at);
        }
        self.in_pipe += 1;
        if let Some(t) = self.start_tx(now) {
            wake.tx_done = Some(t);
        }
        None
    }

    /// `on_tx_done` of a frame the channel destroyed: it leaves the line (returned to the
    /// caller) and the next one starts.
    #[cold]
    #[inline(never)]
    fn lose_head(&mut self, now: Time, wake: &mut Wake) -> Option<Packet> {
        let (_, p) = self.line.remove(self.in_pipe).expect("a frame was in transmission");
        self.queue_bytes -= p.size_bytes as u64;
        self.stats.drops_random += 1;
        if let Some(t) = self.start_tx(now) {
            wake.tx_done = Some(t);
        }
        Some(p)
    }

    /// Pops the packet arriving now at the far end, if any, and asks for the next arrival.
    pub fn on_arrival(&mut self, now: Time, wake: &mut Wake) -> Option<Packet> {
        match self.line.front() {
            Some(&(t, _)) if self.in_pipe > 0 && t <= now => {
                let (_, p) = self.line.pop_front().expect("the pipe's head");
                self.in_pipe -= 1;
                if self.in_pipe > 0 {
                    wake.arrival[0] = Some(self.line[0].0);
                }
                Some(p)
            }
            _ => None,
        }
    }

    /// Changes the transmission rate; a frame already on the air finishes at the old rate.
    /// Rate 0 stalls transmission until a non-zero rate is set.
    pub fn set_rate(&mut self, now: Time, rate_bps: u64, wake: &mut Wake) {
        self.rate_bps = rate_bps;
        if let Some(t) = self.start_tx(now) {
            wake.tx_done = Some(t);
        }
    }

    /// Takes the link down or up. Going down destroys the frame being transmitted (it never
    /// reaches the far end); with `Outage::Hold` the queue keeps filling, as a driver's does,
    /// until it is full; with `Outage::Drop` the queue is purged and every packet offered is
    /// lost until the link comes up. Coming up restarts transmission. The packets destroyed
    /// are added to `dropped`.
    pub fn set_up(&mut self, now: Time, up: bool, wake: &mut Wake, dropped: &mut Vec<Packet>) {
        if up == self.up {
            return;
        }
        self.up = up;
        if !up {
            if self.tx_end.take().is_some() {
                self.stats.busy_ns += (now - self.tx_start).ns();
                let (_, p) = self.line.remove(self.in_pipe).expect("a frame was in transmission");
                self.queue_bytes -= p.size_bytes as u64;
                self.stats.drops_down += 1;
                dropped.push(p);
            }
            if self.outage == Outage::Drop {
                self.purge(dropped);
            }
        } else {
            self.refusing = false;
            if let Some(t) = self.start_tx(now) {
                wake.tx_done = Some(t);
            }
        }
    }

    /// Sets what the link does while down. Set while the link is down and holding, `Drop`
    /// purges what it held then.
    pub fn set_outage(&mut self, outage: Outage, dropped: &mut Vec<Packet>) {
        self.outage = outage;
        if !self.up {
            if outage == Outage::Drop {
                self.purge(dropped);
            } else {
                self.refusing = false;
            }
        }
    }

    /// A dropping outage: every queued packet is lost, and so is the pipe's on a direction
    /// toward the cut interface (`LinkCfg::toward_cut`); the link refuses new ones until it
    /// comes up. No frame is in transmission (the link is down). An arrival event already asked
    /// for a purged pipe's head finds nothing due (`on_arrival`).
    fn purge(&mut self, dropped: &mut Vec<Packet>) {
        debug_assert!(!self.up && self.tx_end.is_none());
        let from = if self.cfg.toward_cut { 0 } else { self.in_pipe };
        let n = self.line.len() - from;
        self.stats.drops_down += n as u64;
        dropped.extend(self.line.drain(from..).map(|(_, p)| p));
        self.in_pipe = self.in_pipe.min(from);
        self.queue_bytes = 0;
        self.refusing = true;
    }

    pub fn outage(&self) -> Outage {
        self.outage
    }

    /// Packets of `flow` (of the given kind) still queued or propagating: the oracle's
    /// independent count of what is in the network at the end of a run.
    pub fn count_in_network(&self, flow: u16, kind: Kind) -> u64 {
        self.line.iter().filter(|(_, p)| p.flow == flow && p.kind == kind).count() as u64
    }
}

/// The wire as a `Link`: one direction, so `port` is always 0.
impl Link for Wire {
    #[inline]
    fn enqueue(&mut self, now: Time, _port: usize, p: Packet, wake: &mut Wake) -> bool {
        Wire::enqueue(self, now, p, wake)
    }
    /// The head frame's transmission ends, lost with probability `cfg.loss_prob` (drawn from
    /// the link's own stream); a sent frame joins the pipe and is returned (a NIC frees it at
    /// its TX completion, `Freed::AtTxEnd`).
    #[inline]
    fn tx_done(&mut self, now: Time, wake: &mut Wake, dropped: &mut Vec<Packet>) -> Option<&Packet> {
        if !self.tx_due(now) {
            return None;
        }
        let p = self.cfg.loss_prob;
        let lost = p > 0.0 && self.loss_rng.bernoulli(p);
        if let Some(d) = self.on_tx_done(now, lost, wake) {
            dropped.push(d);
            return None;
        }
        // The frame just sent is the pipe's newest.
        self.line.get(self.in_pipe - 1).map(|(_, p)| p)
    }
    #[inline]
    fn deliver(&mut self, now: Time, _port: usize, wake: &mut Wake) -> Option<Packet> {
        self.on_arrival(now, wake)
    }
    /// Down and dropping, the direction toward the cut sends from the end that lost its
    /// carrier when the far end went down (a veth, a NIC whose cable's other end is unplugged):
    /// NoCarrier. The other direction is sent by the end that was taken down, whose routes
    /// through it are gone (EHOSTUNREACH, nothing sent at all); the model keeps counting those
    /// as sent and lost, not as gone.
    fn gone(&self, _port: usize) -> Option<Gone> {
        (self.refusing && self.cfg.toward_cut).then_some(Gone::NoCarrier)
    }
    fn set_up(&mut self, now: Time, up: bool, wake: &mut Wake, dropped: &mut Vec<Packet>) {
        Wire::set_up(self, now, up, wake, dropped);
    }
    fn set_outage(&mut self, outage: Outage, dropped: &mut Vec<Packet>) {
        Wire::set_outage(self, outage, dropped);
    }
    fn set_rate(&mut self, now: Time, _port: usize, rate_bps: u64, wake: &mut Wake) {
        Wire::set_rate(self, now, rate_bps, wake);
    }
    #[inline]
    fn queue_bytes(&self, _port: usize) -> u64 {
        Wire::queue_bytes(self)
    }
    #[inline]
    fn rate_bps(&self, _port: usize) -> u64 {
        Wire::rate_bps(self)
    }
    #[inline]
    fn is_up(&self) -> bool {
        Wire::is_up(self)
    }
    fn count_in_network(&self, flow: u16, kind: Kind) -> u64 {
        Wire::count_in_network(self, flow, kind)
    }
    /// Bytes sent, drops (queue, outage and random loss; the queue's alone) and utilisation.
    fn summarize(&self, _port: usize, dir: &str, span_ns: f64, out: &mut Map<String, Value>) {
        let s = &self.stats;
        out.insert("technology".into(), json!("wired"));
        let mut put = |key: &str, v: Value| out.insert(format!("{key}_{dir}"), v);
        put("bytes_sent", json!(s.bytes_sent));
        put("drops", json!(s.drops_queue + s.drops_down + s.drops_random));
        put("queue_drops", json!(s.drops_queue));
        put("utilization", json!(s.busy_ns as f64 / span_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Way;

    fn pkt(size: u32) -> Packet {
        let mut p = Packet::empty(0, Kind::Udp, Way::Forward);
        p.size_bytes = size;
        p
    }

    fn link(rate_bps: u64, cap: u64) -> Wire {
        Wire::new(
            LinkCfg {
                rate_bps,
                delay: Time::from_ms(1),
                queue_cap_bytes: cap,
                frame_overhead_bytes: 0,
                loss_prob: 0.0,
                toward_cut: false,
            },
            RngStream::new(0, 0),
        )
    }

    /// Down and dropping, the direction toward the cut end is sent by the end that lost its
    /// carrier (Gone::NoCarrier); holding, or the other direction, is not gone; back up, neither.
    #[test]
    fn a_drop_outage_is_gone_toward_the_cut_end_only() {
        let (mut w, mut dropped) = (Wake::default(), Vec::new());
        for toward_cut in [true, false] {
            for outage in [Outage::Drop, Outage::Hold] {
                let mut l = link(1_000_000_000, 10_000);
                l.cfg.toward_cut = toward_cut;
                l.set_outage(outage, &mut dropped);
                l.set_up(Time::ZERO, false, &mut w, &mut dropped);
                let gone = (toward_cut && outage == Outage::Drop).then_some(Gone::NoCarrier);
                assert_eq!(Link::gone(&l, 0), gone, "toward_cut {toward_cut}, {outage:?}");
                l.set_up(Time::ZERO, true, &mut w, &mut dropped);
                assert_eq!(Link::gone(&l, 0), None);
            }
        }
    }

    #[test]
    fn serialises_then_propagates() {
        let mut l = link(1_000_000_000, 10_000);
        let mut w = Wake::default();
        assert!(l.enqueue(Time::ZERO, pkt(1500), &mut w));
        assert_eq!(w.tx_done, Some(Time::from_us(12)));
        let mut w2 = Wake::default();
        assert!(l.enqueue(Time::from_us(1), pkt(1500), &mut w2));
        assert_eq!(w2.tx_done, None, "a busy queue does not reschedule");
        let mut w3 = Wake::default();
        l.on_tx_done(Time::from_us(12), false, &mut w3);
        assert_eq!(w3.arrival[0], Some(Time::from_us(1012)));
        assert_eq!(w3.tx_done, Some(Time::from_us(24)));
        let mut w4 = Wake::default();
        assert!(l.on_arrival(Time::from_us(1012), &mut w4).is_some());
    }

    /// A queue that holds 3 packets drops the 5th of a burst: one is on the air, three wait.
    #[test]
    fn drop_tail_overflows_at_capacity() {
        let mut l = link(1_000_000_000, 4_500);
        let mut w = Wake::default();
        let accepted: Vec<bool> = (0..5).map(|_| l.enqueue(Time::ZERO, pkt(1500), &mut w)).collect();
        // The head in transmission still occupies the queue, so capacity 4500 = 3 frames.
        assert_eq!(accepted, vec![true, true, true, false, false]);
        assert_eq!(l.stats.drops_queue, 2);
        // Once the head leaves, there is room for exactly one more.
        let mut w = Wake::default();
        l.on_tx_done(Time::from_us(12), false, &mut w);
        assert!(l.enqueue(Time::from_us(12), pkt(1500), &mut w));
        assert!(!l.enqueue(Time::from_us(12), pkt(1500), &mut w));
    }

    #[test]
    fn down_link_destroys_frame_on_air_and_resumes() {
        let mut l = link(1_000_000_000, 100_000);
        let mut w = Wake::default();
        l.enqueue(Time::ZERO, pkt(1500), &mut w);
        l.enqueue(Time::ZERO, pkt(1500), &mut w);
        let (mut w, mut dropped) = (Wake::default(), vec![]);
        l.set_up(Time::from_us(5), false, &mut w, &mut dropped);
        assert_eq!((l.stats.drops_down, dropped.len()), (1, 1));
        // The stale TxDone at 12 us is ignored.
        let mut w = Wake::default();
        l.on_tx_done(Time::from_us(12), false, &mut w);
        assert_eq!(w, Wake::default());
        assert_eq!(l.queue_len(), 1);
        let mut w = Wake::default();
        l.set_up(Time::from_us(100), true, &mut w, &mut dropped);
        assert_eq!(w.tx_done, Some(Time::from_us(112)));
        assert_eq!(dropped.len(), 1, "a holding outage loses only the frame on the air");
    }

    /// A frame lost (or destroyed by the link going down) while earlier frames propagate and
    /// later ones wait leaves both in order: the pipe delivers the earlier, then the later.
    #[test]
    fn losses_between_pipe_and_queue_keep_the_order() {
        let mut l = link(1_000_000_000, 100_000);
        let mut w = Wake::default();
        for seq in 0..4 {
            let mut p = pkt(1500);
            p.seq = seq;
            assert!(l.enqueue(Time::ZERO, p, &mut w));
        }
        let us = Time::from_us;
        let mut w = Wake::default();
        assert!(l.on_tx_done(us(12), false, &mut w).is_none());
        assert_eq!((w.arrival[0], w.tx_done), (Some(us(1012)), Some(us(24))));
        // Frame 1 is lost on the channel: it leaves the middle of the line.
        let mut w = Wake::default();
        assert_eq!(l.on_tx_done(us(24), true, &mut w).map(|p| p.seq), Some(1));
        assert_eq!((w.arrival[0], w.tx_done), (None, Some(us(36))));
        assert_eq!((l.queue_len(), l.queue_bytes()), (2, 3000));
        // Frame 2 is destroyed by the link going down mid-frame; frame 3 waits.
        let (mut w, mut dropped) = (Wake::default(), vec![]);
        l.set_up(us(30), false, &mut w, &mut dropped);
        assert_eq!(dropped.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![2]);
        assert_eq!(l.count_in_network(0, Kind::Udp), 2, "frame 0 propagating, frame 3 queued");
        let mut w = Wake::default();
        l.set_up(us(40), true, &mut w, &mut dropped);
        assert_eq!(w.tx_done, Some(us(52)));
        let mut w = Wake::default();
        l.on_tx_done(us(52), false, &mut w);
        assert_eq!(w.arrival[0], None, "the pipe already has a head with its arrival scheduled");
        let mut w = Wake::default();
        assert_eq!(l.on_arrival(us(1012), &mut w).map(|p| p.seq), Some(0));
        assert_eq!(w.arrival[0], Some(us(1052)));
        let mut w = Wake::default();
        assert!(l.on_arrival(us(1051), &mut w).is_none(), "not yet");
        assert_eq!(l.on_arrival(us(1052), &mut w).map(|p| p.seq), Some(3));
        assert_eq!(w.arrival[0], None);
        assert_eq!((l.queue_len(), l.count_in_network(0, Kind::Udp)), (0, 0));
        assert_eq!((l.stats.packets_sent, l.stats.drops_random, l.stats.drops_down), (2, 1, 1));
    }

    #[test]
    fn zero_rate_stalls_without_loss() {
        let mut l = link(1_000_000_000, 100_000);
        let mut w = Wake::default();
        l.set_rate(Time::ZERO, 0, &mut w);
        l.enqueue(Time::ZERO, pkt(1500), &mut w);
        assert_eq!(w.tx_done, None, "nothing starts at rate 0");
        let mut w = Wake::default();
        l.set_rate(Time::from_us(50), 500_000_000, &mut w);
        assert_eq!(w.tx_done, Some(Time::from_us(74)), "resumes at the new rate");
        assert_eq!(l.stats.drops_down + l.stats.drops_random + l.stats.drops_queue, 0);
    }

    fn numbered(l: &mut Wire, now: Time, seqs: std::ops::Range<u64>) -> Vec<bool> {
        let mut w = Wake::default();
        seqs.map(|seq| {
            let mut p = pkt(1500);
            p.seq = seq;
            l.enqueue(now, p, &mut w)
        })
        .collect()
    }

    /// A dropping outage, state by state: going down loses the frame on the air and purges the
    /// queue; what was already propagating away from the cut arrives; everything offered while
    /// down is lost; coming up, the link carries packets again as before.
    #[test]
    fn drop_outage_purges_the_queue_and_loses_what_is_sent_until_up() {
        let us = Time::from_us;
        let mut l = link(1_000_000_000, 100_000);
        let mut dropped = vec![];
        l.set_outage(Outage::Drop, &mut dropped);
        assert!(dropped.is_empty() && l.is_up(), "set while up, it only says what going down will do");
        assert_eq!(numbered(&mut l, Time::ZERO, 0..4), vec![true; 4]);
        let mut w = Wake::default();
        l.on_tx_done(us(12), false, &mut w); // frame 0 propagates; frame 1 on the air
        let mut w = Wake::default();
        l.set_up(us(15), false, &mut w, &mut dropped);
        assert_eq!(
            dropped.iter().map(|p| p.seq).collect::<Vec<_>>(),
            vec![1, 2, 3],
            "frame on the air, then the queue"
        );
        assert_eq!((l.queue_len(), l.queue_bytes(), l.stats.drops_down), (0, 0, 3));
        assert_eq!(l.count_in_network(0, Kind::Udp), 1, "frame 0 is in the pipe");
        assert_eq!(w, Wake::default());
        // Offered while down: lost, counted, nothing scheduled.
        let mut w = Wake::default();
        assert_eq!(numbered(&mut l, us(20), 4..6), vec![false, false]);
        assert_eq!((w, l.queue_len(), l.stats.drops_down, l.stats.drops_queue), (Wake::default(), 0, 5, 0));
        // The stale TxDone of frame 1 does nothing; frame 0 arrives at its time.
        assert!(l.on_tx_done(us(24), false, &mut w).is_none());
        assert_eq!(l.on_arrival(us(1012), &mut w).map(|p| p.seq), Some(0));
        assert_eq!(l.count_in_network(0, Kind::Udp), 0);
        // Up again: the next packet is queued, sent and delivered as on a fresh link.
        let mut w = Wake::default();
        l.set_up(us(2000), true, &mut w, &mut dropped);
        assert_eq!(w, Wake::default(), "nothing was kept to send");
        assert_eq!(numbered(&mut l, us(2000), 6..7), vec![true]);
        let mut w = Wake::default();
        assert!(l.enqueue(us(2000), pkt(1500), &mut w));
        assert_eq!(w.tx_done, None, "busy with frame 6");
        let mut w = Wake::default();
        l.on_tx_done(us(2012), false, &mut w);
        assert_eq!(w.arrival[0], Some(us(3012)));
        assert_eq!(l.on_arrival(us(3012), &mut w).map(|p| p.seq), Some(6));
        assert_eq!((dropped.len() as u64, l.stats.drops_down), (3, 5), "refused packets are the caller's count");
    }

    /// The direction that ends at the cut interface (a path's downlink) loses its pipe too: the
    /// frame propagating when the link goes down would arrive at a dead interface. Its arrival
    /// event, already asked for, finds nothing; after the return the link delivers as before.
    #[test]
    fn drop_outage_toward_the_cut_loses_what_is_propagating() {
        let us = Time::from_us;
        let mut l = link(1_000_000_000, 100_000);
        l.cfg.toward_cut = true;
        let mut dropped = vec![];
        l.set_outage(Outage::Drop, &mut dropped);
        assert_eq!(numbered(&mut l, Time::ZERO, 0..3), vec![true; 3]);
        let mut w = Wake::default();
        l.on_tx_done(us(12), false, &mut w); // frame 0 propagates, due at 1012 us
        assert_eq!(w.arrival[0], Some(us(1012)));
        let mut w = Wake::default();
        l.set_up(us(15), false, &mut w, &mut dropped);
        assert_eq!(dropped.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1, 0, 2], "on the air, pipe, queue");
        assert_eq!((l.count_in_network(0, Kind::Udp), l.stats.drops_down), (0, 3));
        assert!(l.on_arrival(us(1012), &mut w).is_none(), "the pipe's frame is gone");
        l.set_up(us(2000), true, &mut w, &mut dropped);
        assert_eq!(numbered(&mut l, us(2000), 3..4), vec![true]);
        let mut w = Wake::default();
        l.on_tx_done(us(2012), false, &mut w);
        assert_eq!(w.arrival[0], Some(us(3012)));
        assert_eq!(l.on_arrival(us(3012), &mut w).map(|p| p.seq), Some(3));
    }

    /// Without `Outage::Drop` the same outage holds: the queue is kept and sent when the link
    /// returns (the default, and `set_outage(Hold)` after a `Drop`).
    #[test]
    fn hold_outage_keeps_the_queue_for_the_return() {
        let us = Time::from_us;
        let mut l = link(1_000_000_000, 100_000);
        let mut dropped = vec![];
        l.set_outage(Outage::Drop, &mut dropped);
        l.set_outage(Outage::Hold, &mut dropped);
        assert_eq!(numbered(&mut l, Time::ZERO, 0..3), vec![true; 3]);
        let mut w = Wake::default();
        l.set_up(us(5), false, &mut w, &mut dropped);
        assert_eq!(numbered(&mut l, us(6), 3..4), vec![true], "a held link still queues");
        assert_eq!((dropped.len(), l.queue_len()), (1, 3));
        let mut w = Wake::default();
        l.set_up(us(100), true, &mut w, &mut dropped);
        assert_eq!(w.tx_done, Some(us(112)));
        assert_eq!(l.head().map(|p| p.seq), Some(1));
    }

    /// A link down and holding that is told its outage drops purges then and refuses from then.
    #[test]
    fn drop_set_while_down_purges_then() {
        let mut l = link(1_000_000_000, 100_000);
        let (mut w, mut dropped) = (Wake::default(), vec![]);
        l.set_up(Time::ZERO, false, &mut w, &mut dropped);
        assert_eq!(numbered(&mut l, Time::ZERO, 0..2), vec![true; 2]);
        l.set_outage(Outage::Drop, &mut dropped);
        assert_eq!((dropped.len(), l.queue_len(), l.queue_bytes()), (2, 0, 0));
        assert_eq!(numbered(&mut l, Time::from_us(1), 2..3), vec![false]);
        assert_eq!(l.stats.drops_down, 3);
    }

    /// Through the seam, going down hands the frame on the air to the caller's drop list.
    #[test]
    fn the_seam_drives_the_wire() {
        let mut l = link(1_000_000_000, 100_000);
        let mut w = Wake::default();
        assert!(Link::enqueue(&mut l, Time::ZERO, 0, pkt(1500), &mut w));
        assert_eq!((Link::queue_bytes(&l, 0), Link::rate_bps(&l, 0)), (1500, 1_000_000_000));
        let mut dropped = vec![];
        Link::set_up(&mut l, Time::from_us(5), false, &mut w, &mut dropped);
        assert_eq!((dropped.len(), Link::is_up(&l)), (1, false));
        Link::set_up(&mut l, Time::from_us(6), true, &mut w, &mut dropped);
        assert!(Link::enqueue(&mut l, Time::from_us(6), 0, pkt(1500), &mut w));
        let mut w = Wake::default();
        l.on_tx_done(Time::from_us(18), false, &mut w);
        assert_eq!(w.arrival[0], Some(Time::from_us(1018)));
        assert!(Link::deliver(&mut l, Time::from_us(1018), 0, &mut w).is_some());
        assert_eq!(Link::count_in_network(&l, 0, Kind::Udp), 0);
    }
}
