//! The hosts (driver + CPU) at both ends of the channel. Each station's host spends
//! `host_pkt_ns` on every packet it sends or receives: one server for both directions, as one
//! core handling the NIC's soft-IRQs. A packet to send is prepared (DMA-mapped, its descriptor
//! filled) when it is queued at the MAC, whoever holds the channel meanwhile; it is *ready*
//! when its host work is done, and a TXOP aggregates only ready packets and holds the channel
//! for its airtime alone. What a host sends is prepared as soon as it is made (an ACK leaves
//! from within the receive processing of its segment), so it waits only for the packets sent
//! before it; the received packets queue behind both, then cross the propagation pipe.
//! It caps the packet rate, which is what limits 802.11ad at MTU 1500 (seed 000: ~1 Gbit/s of
//! UDP at MCS 8-9 whatever the signal) while jumbo frames reach multi-Gbit/s.

use super::{Frame, Medium, Wake, STA};
use crate::link::reorder::Reorder;
use crate::packet::{Kind, Packet};
use crate::time::Time;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The client host's receive-processing server shared by all its interfaces (energy.rs): when
/// it is next free, ns. Atomic only to stay `Send`; the simulation is single-threaded.
pub type SharedCpu = Arc<AtomicU64>;

/// Generic receive offload at the client (Linux GRO, net/ipv4/tcp_offload.c tcp_gro_receive):
/// in-order TCP segments of one flow that the driver hands up in one batch are merged into one
/// skb before TCP sees them, so the receiver processes, and acknowledges, one segment per merge
/// (tcp_input.c __tcp_ack_snd_check: more than one full segment received, ACK now). A merge
/// takes the next segment only if it continues the sequence (and, for MPTCP, the data sequence),
/// carries the same timestamps (Linux compares the options; TSval ticks every ms), is no longer
/// than the first and follows no PSH or short segment (which end a merge), and keeps the skb under
/// 64 KiB (skb_gro_receive's limit). The driver bounds a batch (`max_msdus`, device.rs
/// `client_gro_msdus`) and the batch ends with the reorder buffer's release (`at`, one TXOP's or
/// one Block Ack window's): GRO flushes when the driver's poll ends. The merged skb reaches TCP
/// when its last segment has been processed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gro {
    /// Most MSDUs one batch can merge (0: no GRO, every segment goes up alone).
    pub max_msdus: u32,
    /// The merge at the pipe's tail: the release it belongs to, its segments so far and the
    /// first segment's length; `open` while it may take more.
    at: Time,
    n: u32,
    seg_len: u32,
    open: bool,
}

/// skb_gro_receive: a merged skb stays below 64 KiB (IP packet length).
const GRO_MAX_BYTES: u32 = 65_536;

/// Linux's TCP timestamp clock ticks once per millisecond (tcp_time_stamp_raw), so segments
/// sent within one tick carry the same option and merge.
const TS_TICK_NS: u64 = 1_000_000;

impl Gro {
    /// Whether `p`, released at `at`, extends `tail` (the last packet into the pipe).
    fn extends(&self, at: Time, tail: &Packet, p: &Packet) -> bool {
        self.open
            && self.at == at
            && self.n < self.max_msdus
            && p.flow == tail.flow
            && p.seq == tail.seq + tail.len as u64
            && p.dsn == if tail.dsn == 0 && p.dsn == 0 { 0 } else { tail.dsn + tail.len as u64 }
            && p.len <= self.seg_len
            && p.ts_val_ns / TS_TICK_NS == tail.ts_val_ns / TS_TICK_NS
            && p.ts_ecr_ns / TS_TICK_NS == tail.ts_ecr_ns / TS_TICK_NS
            && tail.size_bytes + p.len < GRO_MAX_BYTES
    }

    /// A new skb starts at the pipe's tail with `p` (a data segment), or none can (anything else).
    fn start(&mut self, at: Time, p: &Packet) {
        self.open = p.kind == Kind::Data && !p.psh && self.max_msdus > 1;
        self.at = at;
        self.n = 1;
        self.seg_len = p.len;
    }
}

/// A receiving host, which processes the packets its reorder buffer releases one after
/// another, then hands them to the propagation pipe.
pub(super) struct HostRx<'a> {
    host_free: &'a mut Time,
    cpu: Option<&'a (SharedCpu, u64)>,
    host_pkt_ns: u64,
    delay: Time,
    /// When the packets reached the receiver (the end of their TXOP).
    at: Time,
    pipe: &'a mut VecDeque<(Time, Packet)>,
    /// The pipe's next arrival to schedule.
    arrival: &'a mut Option<Time>,
    /// The client's receive offload, when this host is the client and merges.
    gro: Option<&'a mut Gro>,
}

impl HostRx<'_> {
    /// Packet `p` released by the reorder buffer: processed, then into the pipe (copied
    /// straight there); the first packet into an empty pipe asks for its arrival.
    pub(super) fn take(&mut self, p: &Packet) {
        *self.host_free = (*self.host_free).max(self.at) + Time(self.host_pkt_ns);
        let mut done = *self.host_free;
        if let (true, Some((cpu, ns))) = (matches!(p.kind, Kind::Data | Kind::Udp), self.cpu) {
            done = Time(cpu.load(Ordering::Relaxed).max(done.ns()) + ns);
            cpu.store(done.ns(), Ordering::Relaxed);
        }
        let t = done + self.delay;
        if let Some(g) = self.gro.as_deref_mut() {
            if p.kind == Kind::Data {
                // The head's arrival can move only while it is still this call's to schedule.
                let movable = self.pipe.len() > 1 || self.arrival.is_some();
                let tail = self.pipe.back_mut().filter(|(_, tail)| movable && g.extends(self.at, tail, p));
                if let Some((tt, tail)) = tail {
                    // GRO: the segment joins the skb at the tail, which goes up when this one is done.
                    tail.len += p.len;
                    tail.segs += p.segs;
                    tail.size_bytes += p.len;
                    tail.psh = p.psh;
                    *tt = t;
                    g.n += 1;
                    g.open = p.len == g.seg_len && !p.psh;
                    if self.pipe.len() == 1 {
                        *self.arrival = Some(t);
                    }
                    return;
                }
            }
            g.start(self.at, p);
        }
        if self.pipe.is_empty() {
            *self.arrival = Some(t);
        }
        self.pipe.push_back((t, *p));
    }
}

impl Medium {
    /// Every packet the client receives also passes its host's shared server, `pkt_ns` each.
    pub fn set_client_cpu(&mut self, cpu: SharedCpu, pkt_ns: u64) {
        self.client_cpu = Some((cpu, pkt_ns));
    }

    /// The client merges the segments it receives (GRO), at most `max_msdus` per driver batch
    /// (0 or 1: no GRO).
    pub fn set_client_gro(&mut self, max_msdus: u32) {
        self.client_gro = Gro { max_msdus, ..Gro::default() };
    }

    /// The client's host spends `ns` more on every data packet it sends (not on ACKs).
    pub fn set_client_tx_pkt_ns(&mut self, ns: u64) {
        self.client_tx_pkt_ns = ns;
    }

    /// When station `from`'s host has prepared a packet of `kind` queued now: after what it
    /// sent before (not behind received packets still queued, see `Station::tx_free`); that
    /// work delays the received packets queued behind it.
    pub(super) fn prepare(&mut self, now: Time, from: usize, kind: Kind) -> Time {
        let s = &mut self.st[from];
        let mut host_ns = self.host_pkt_ns;
        if from == STA && matches!(kind, Kind::Data | Kind::Udp) {
            host_ns += self.client_tx_pkt_ns;
        }
        let ready = s.tx_free.max(now) + Time(host_ns);
        s.tx_free = ready;
        s.host_free = s.host_free.max(now) + Time(host_ns);
        ready
    }

    /// The receiving end of direction `from` for what arrives at `at`: station `1 - from`'s
    /// reorder buffer, and its host, to which the buffer hands what it releases.
    pub(super) fn receiver<'a>(
        &'a mut self,
        from: usize,
        at: Time,
        wake: &'a mut Wake,
    ) -> (&'a mut Reorder, HostRx<'a>) {
        let (_, reorder, host) = self.receiver_parts(from, at, wake);
        (reorder, host)
    }

    /// `receiver`, with station `from`'s head frame, which the caller passes up by reference
    /// (a frame is over 150 bytes: it goes from the queue to the pipe in one copy) and then
    /// pops.
    pub(super) fn receiver_and_head<'a>(
        &'a mut self,
        from: usize,
        at: Time,
        wake: &'a mut Wake,
    ) -> Option<(&'a Frame, &'a mut Reorder, HostRx<'a>)> {
        let (head, reorder, host) = self.receiver_parts(from, at, wake);
        Some((head?, reorder, host))
    }

    /// Station `from`'s head frame (if any), and the receiving end of its direction: the two
    /// stations borrowed apart, so the head can be passed up while the receiver takes it.
    fn receiver_parts<'a>(
        &'a mut self,
        from: usize,
        at: Time,
        wake: &'a mut Wake,
    ) -> (Option<&'a Frame>, &'a mut Reorder, HostRx<'a>) {
        let to = 1 - from;
        let [ap, sta] = &mut self.st;
        let (tx, rx) = if from == STA { (sta, ap) } else { (ap, sta) };
        let host = HostRx {
            host_free: &mut rx.host_free,
            // The shared server's cost is per received data segment (how energy.rs derives it).
            cpu: self.client_cpu.as_ref().filter(|_| to == STA),
            host_pkt_ns: self.host_pkt_ns,
            delay: self.delay,
            at,
            pipe: &mut self.pipe[from],
            arrival: &mut wake.arrival[from],
            gro: Some(&mut self.client_gro).filter(|g| to == STA && g.max_msdus > 1),
        };
        (tx.queue.front(), &mut rx.reorder, host)
    }

    /// Pops the packet arriving now in direction `from` (sent by station `from`).
    pub fn on_arrival(&mut self, now: Time, from: usize, wake: &mut Wake) -> Option<Packet> {
        match self.pipe[from].front() {
            Some(&(t, p)) if t <= now => {
                self.pipe[from].pop_front();
                if let Some(&(next, _)) = self.pipe[from].front() {
                    wake.arrival[from] = Some(next);
                }
                Some(p)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::device::GRO_WHOLE_BATCH;
    use crate::link::medium::testkit::*;

    /// GRO at the client: the in-order data segments of one flow that one TXOP brings go up
    /// as one skb (its length and segment count the sums), a PSH segment ends the merge (the
    /// next one starts another), and without GRO every segment goes up alone.
    #[test]
    fn gro_merges_a_txops_in_order_segments_up_to_a_push() {
        let up = |gro: u32, psh_at: Option<u64>| -> Vec<(u32, u16)> {
            let mut m = medium(0);
            m.set_client_gro(gro);
            let mut w = Wake::default();
            m.set_up(Time::ZERO, false, &mut w);
            for i in 0..8u64 {
                let mut p = Packet::empty(0, Kind::Data, Way::Forward);
                (p.seq, p.len, p.size_bytes, p.psh) = (i * 1448, 1448, 1448 + 52, psh_at == Some(i));
                m.enqueue(Time::ZERO, AP, p, &mut w);
            }
            m.set_up(Time::ZERO, true, &mut w);
            let mut got = Vec::new();
            let mut dropped = Vec::new();
            loop {
                let next = [w.tx_done.map(|t| (t, 0)), w.arrival[AP].map(|t| (t, 1))].into_iter().flatten().min();
                let Some((t, what)) = next else { break };
                if what == 0 {
                    w.tx_done = None;
                    m.on_tx_done(t, &mut w, &mut dropped);
                } else {
                    w.arrival[AP] = None;
                    if let Some(p) = m.on_arrival(t, AP, &mut w) {
                        got.push((p.len, p.segs));
                    }
                }
            }
            got
        };
        assert_eq!(up(0, None), vec![(1448, 1); 8], "no GRO: one segment at a time");
        assert_eq!(up(GRO_WHOLE_BATCH, None), vec![(8 * 1448, 8)], "one TXOP, one skb");
        assert_eq!(up(GRO_WHOLE_BATCH, Some(2)), vec![(3 * 1448, 3), (5 * 1448, 5)], "PSH ends a merge");
        assert_eq!(up(4, None), vec![(4 * 1448, 4); 2], "the driver's batch bounds it");
    }

    /// A backlog of received packets does not hold up what the host sends (an ACK leaves from
    /// within the processing of its segment), but the sending work delays what is still queued.
    #[test]
    fn receive_backlog_does_not_hold_up_a_transmission() {
        let cost = 12_000;
        // The client sends a full aggregate in one TXOP (queued while the link is down; its
        // host has them ready at n x 12 us); the AP's host gets n x 12 us of receive work.
        let n = MacTiming::dmg().max_mpdus as u64;
        let (mut m, mut w) = backlogged(medium(cost), STA, n as usize, 1500);
        let first = w.tx_done.take().expect("the client's first frame ready");
        assert_eq!(first, Time(cost), "contends when its first frame is ready");
        let mut dropped = Vec::new();
        m.on_tx_done(Time(n * cost), &mut w, &mut dropped);
        let end = w.tx_done.take().expect("client TXOP");
        assert!(m.busy.is_some_and(|t| t.n == n as usize), "{:?}", m.busy);
        m.on_tx_done(end, &mut w, &mut dropped);
        assert_eq!(m.st[AP].host_free, end + Time(n * cost));
        // An ACK queued at the AP right away is ready after its own work, not after the
        // backlog, and goes on the air then.
        w = Wake::default();
        m.enqueue(end, AP, pkt(1, 52), &mut w);
        assert_eq!(m.st[AP].queue[0].ready, end + Time(cost));
        assert_eq!(w.tx_done, Some(end + Time(cost)));
        m.on_tx_done(end + Time(cost), &mut w, &mut dropped);
        assert!(m.busy.is_some_and(|t| t.from == AP && t.start == end + Time(cost)), "{:?}", m.busy);
        // Its host work pushes the received packets' processing back by one packet.
        assert_eq!(m.st[AP].host_free, end + Time((n + 1) * cost));
    }

    /// The host's per-packet cost caps the packet rate when the radio is faster: the host-bound
    /// rate is exactly 1 / cost (the host prepares frames while the aggregate before is on the
    /// air), up to the first frame's preparation and the last TXOP's airtime and processing.
    #[test]
    fn host_cost_caps_packet_rate() {
        let cost = 12_000; // 12 us per packet
        let mut m = medium(cost);
        let mut w = Wake::default();
        for _ in 0..3000 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        // The host has prepared the last one at 3000 x 12 us.
        assert_eq!(m.st[AP].queue.back().map(|f| f.ready), Some(Time(3000 * cost)));
        let (got, end) = drain(&mut m, Time::ZERO, w);
        assert_eq!(got[AP], 3000);
        // After the last frame is ready: at most one TXOP waiting for it (the one on the air
        // when it became ready, < 1 ms at MCS 9 with 32 MPDUs), its own, and the receiver's
        // processing of one aggregate (32 x 12 us).
        let tail = end - Time(3000 * cost);
        assert!(tail < Time::from_us(2 * 1000 + 32 * 12), "tail {tail:?}");
        let pps = 3000.0 / end.secs_f64();
        assert!(pps <= 1e9 / cost as f64 && pps > 1e9 / cost as f64 * 0.97, "pps {pps}");
    }

    /// The other station uses the channel while a host prepares its frames (both hosts 12 us per
    /// packet): the client's TXOP of one ACK goes on the air while the AP's host still
    /// prepares its 10 packets (ready at 12, 24, ... 120 us); the AP's first TXOP starts when
    /// its first frame is ready, and the channel is busy for airtime only.
    #[test]
    fn the_other_station_uses_the_channel_while_a_host_prepares() {
        let cost = 12_000;
        let mut m = medium(cost);
        // CW 0: exact arithmetic, and two ready stations take turns instead of colliding.
        m.mac.collisions = false;
        let mut w = Wake::default();
        // 10 AP frames at t = 0 (ready at 12, 24, ... 120 us); the AP's first frame goes
        // alone at 12 us, the rest queue behind it.
        for _ in 0..10 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        assert_eq!(w.tx_done, Some(Time(cost)));
        let mut dropped = Vec::new();
        m.on_tx_done(Time(cost), &mut w, &mut dropped);
        let ap_end = w.tx_done.take().expect("AP TXOP");
        assert!(m.busy.is_some_and(|t| (t.from, t.n, t.start) == (AP, 1, Time(cost))), "{:?}", m.busy);
        // One DMG TXOP of one 1542-octet MPDU is 69,042 ns (txop_duration_is_the_sum_of_its_parts).
        assert_eq!(ap_end, Time(cost + 69_042));
        // An ACK at the client at 20 us is ready at 32 us; when the AP's TXOP ends (81 us) the
        // client goes first (take turns) though the AP has 5 more ready (24..72 us).
        m.enqueue(Time(20_000), STA, pkt(1, 52), &mut Wake::default());
        m.on_tx_done(ap_end, &mut w, &mut dropped);
        assert!(m.busy.is_some_and(|t| (t.from, t.n, t.start) == (STA, 1, ap_end)), "{:?}", m.busy);
        let sta_end = w.tx_done.take().expect("client TXOP");
        // Meanwhile the AP's host finished the rest (120 us < the client's TXOP end): its next
        // TXOP carries all 9 at once, on the channel for its airtime only.
        assert!(sta_end > Time(10 * cost));
        m.on_tx_done(sta_end, &mut w, &mut dropped);
        assert!(m.busy.is_some_and(|t| (t.from, t.n, t.start) == (AP, 9, sta_end)), "{:?}", m.busy);
        let t = m.busy.expect("AP TXOP");
        let mac = m.mac;
        let psdu = 8 * 1544 + 1542;
        let parts = mac.access_ns + mac.protection_ns + m.phy.ppdu_ns(psdu, 9) + mac.sifs_ns + mac.ack_ns;
        assert_eq!(t.end - t.start, Time(mac.with_beacon_share(parts)));
    }

    /// One server for both directions: the AP's host receives 4 packets (4 x 12 us queued at
    /// the TXOP's end), then sends one at the same instant: the send is ready after its own
    /// 12 us (it is made within the receive processing, tcp_ack_snd_check), and the received
    /// packets leave the server 12 us later than without it. A second send waits for the
    /// first (in the order they were queued).
    #[test]
    fn receive_and_send_work_share_the_server() {
        let cost = 12_000;
        let (mut m, mut w) = backlogged(medium(cost), STA, 4, 1500);
        let mut dropped = Vec::new();
        m.on_tx_done(Time(4 * cost), &mut w, &mut dropped);
        let end = w.tx_done.take().expect("client TXOP");
        m.on_tx_done(end, &mut w, &mut dropped);
        assert_eq!(m.st[AP].host_free, end + Time(4 * cost));
        let arrivals = m.pipe[STA].iter().map(|&(t, _)| t).collect::<Vec<_>>();
        assert_eq!(arrivals, (1..=4).map(|k| end + Time(k * cost)).collect::<Vec<_>>());
        let mut w = Wake::default();
        m.enqueue(end, AP, pkt(1, 1500), &mut w);
        m.enqueue(end + Time(1_000), AP, pkt(1, 1500), &mut w);
        let ready = m.st[AP].queue.iter().map(|f| f.ready).collect::<Vec<_>>();
        assert_eq!(ready, [end + Time(cost), end + Time(2 * cost)]);
        assert_eq!(m.st[AP].host_free, end + Time(6 * cost));
    }

    /// The client's extra cost per data packet it sends: each data packet the client queues is
    /// ready host_pkt_ns + client_tx_pkt_ns after the one before; the AP's do not pay it.
    #[test]
    fn client_transmit_cost_applies_to_its_data_only() {
        let mut m = medium(4_830);
        m.set_client_tx_pkt_ns(744);
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..10 {
            m.enqueue(Time::ZERO, STA, pkt(0, 1500), &mut w);
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        assert_eq!(m.st[AP].tx_free, Time(10 * 4_830));
        assert_eq!(m.st[STA].tx_free, Time(10 * (4_830 + 744)));
        assert_eq!(m.st[STA].queue[2].ready, Time(3 * (4_830 + 744)));
        // ACKs from the client cost only host_pkt_ns.
        let mut m = medium(4_830);
        m.set_client_tx_pkt_ns(744);
        let mut w = Wake::default();
        let mut ack = pkt(0, 52);
        ack.kind = Kind::Ack;
        m.enqueue(Time::ZERO, STA, ack, &mut w);
        assert_eq!(m.st[STA].tx_free, Time(4_830));
    }
}
