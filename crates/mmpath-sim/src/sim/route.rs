//! Packets on their routes: an endpoint's output put on its first hop, each hop a direction of
//! a link of any kind (link/kinds.rs), the events their wake-ups schedule, arrivals handed on to
//! the next hop (sim/endpoint.rs at the last), drops counted per flow, and TSQ's release when a
//! data packet has left its sender's host.

use super::{Ev, Hop, Simulation};
use crate::link::{Freed, Gone, Link, Wake};
use crate::packet::{Kind, Packet, Way, TCP_HEADER_BYTES};
use crate::time::Time;

impl Simulation {
    pub(super) fn flush(&mut self, now: Time) {
        if self.out.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        for mut p in out.drain(..) {
            if let Some(c) = self.flows[p.flow as usize].conn {
                self.conn_stamp(c, &mut p);
            }
            self.send(now, p);
        }
        self.out = out;
    }

    /// Puts a packet from an endpoint on the first hop of its route.
    pub(super) fn send(&mut self, now: Time, mut p: Packet) {
        p.hop = 0;
        if matches!(p.kind, Kind::Data | Kind::Udp) {
            self.flows[p.flow as usize].counters.data_sent += 1;
        }
        self.forward(now, p);
    }

    pub(super) fn route_hop(&self, p: &Packet) -> Hop {
        let f = &self.flows[p.flow as usize];
        let r = if p.way == Way::Forward { &f.route_fwd } else { &f.route_rev };
        r[p.hop as usize]
    }

    pub(super) fn forward(&mut self, now: Time, p: Packet) {
        let h = self.route_hop(&p);
        let mut wake = Wake::default();
        let accepted = self.links[h.link as usize].enqueue(now, h.port as usize, p, &mut wake);
        self.apply_wake(h.link, wake);
        if !accepted {
            self.count_drop(&p);
            if p.hop == 0 && p.kind == Kind::Data {
                self.refused_at_host(now, h, &p);
            }
        }
    }

    /// A data packet refused by its sender's own first hop. A link that has gone away and
    /// lost its carrier answers NET_XMIT_CN, which puts the socket in CWR
    /// (link/seam.rs `Gone`); either way the segment counts as sent (and lost).
    #[cold]
    #[inline(never)]
    fn refused_at_host(&mut self, now: Time, h: Hop, p: &Packet) {
        if self.links[h.link as usize].gone(h.port as usize) != Some(Gone::NoCarrier) {
            return;
        }
        if let Some(s) = self.flows[p.flow as usize].sender.as_mut() {
            s.local_congestion(now);
        }
    }

    /// Link `l` went away or came back: each sender whose first hop it is learns whether that
    /// hop now frees what it is given (link/seam.rs `Gone`: TSQ holds nothing back then), and
    /// one that TSQ held back goes on at once, as the frames the link freed let it
    /// (tcp_wfree -> tcp_tsq_handler).
    pub(super) fn first_hop_changed(&mut self, now: Time, l: u16) {
        for f in 0..self.flows.len() {
            let h = self.flows[f].route_fwd[0];
            if h.link != l {
                continue;
            }
            let gone = self.links[l as usize].gone(h.port as usize).is_some();
            let Some(s) = self.flows[f].sender.as_mut() else { continue };
            s.set_first_hop_gone(gone);
            if gone {
                self.left_first_hop(now, f as u16, 0);
            }
        }
    }

    pub(super) fn hop_queue_bytes(&self, h: Hop) -> u64 {
        self.links[h.link as usize].queue_bytes(h.port as usize)
    }

    pub(super) fn hop_rate_bps(&self, h: Hop) -> u64 {
        self.links[h.link as usize].rate_bps(h.port as usize)
    }

    pub(super) fn hop_up(&self, h: Hop) -> bool {
        self.links[h.link as usize].is_up()
    }

    /// Schedules the events link `l` asked for: its transmission's end, then each direction's
    /// next arrival.
    pub(super) fn apply_wake(&mut self, l: u16, wake: Wake) {
        if let Some(t) = wake.tx_done {
            self.q.schedule(t, Ev::TxDone(l));
        }
        // Written out per port (PORTS = 2): the per-packet path makes no loop of it.
        let [a0, a1] = wake.arrival;
        if let Some(t) = a0 {
            self.q.schedule(t, Ev::Arrival(l, 0));
        }
        if let Some(t) = a1 {
            self.q.schedule(t, Ev::Arrival(l, 1));
        }
    }

    /// A data packet of flow `f` left its first hop (sent on, or given up on by the MAC):
    /// `bytes` (payload + header) are no longer below TCP, and TSQ may let its sender go on.
    pub(super) fn left_first_hop(&mut self, now: Time, f: u16, bytes: u64) {
        if self.flows[f as usize].closed {
            return;
        }
        let Some(s) = self.flows[f as usize].sender.as_mut() else { return };
        if s.tsq_done(bytes) {
            s.try_send(now, &mut self.out);
            match self.flows[f as usize].conn {
                // conn_push ends by sending and arming every subflow's timers, this one's too.
                Some(c) => self.conn_push(now, c.0),
                None => self.after_endpoint(now, f),
            }
        }
    }

    pub(super) fn count_drop(&mut self, p: &Packet) {
        if p.hop == 0 && p.kind == Kind::Data {
            // Dropped before leaving the host: no longer queued below TCP. The socket goes on at
            // its next ACK or timer (not from here, where the same full queue would drop again).
            if let Some(s) = self.flows[p.flow as usize].sender.as_mut() {
                s.tsq_release(p.len as u64 + TCP_HEADER_BYTES as u64);
            }
        }
        let c = &mut self.flows[p.flow as usize].counters;
        match p.kind {
            Kind::Ack => c.acks_dropped += 1,
            Kind::Data | Kind::Udp => c.data_dropped += 1,
            Kind::Syn | Kind::Prio => {}
        }
    }

    /// Link `l`'s transmission ends. The frames it destroyed or gave up on are counted as
    /// drops; TSQ learns of the frames the sender's driver frees now (the link's `Freed`).
    pub(super) fn on_tx_done(&mut self, now: Time, l: u16) {
        let mut wake = Wake::default();
        // What TSQ needs of a sent frame (not a copy of it): a data packet's flow and length
        // when this is its first hop.
        let sent = self.links[l as usize]
            .tx_done(now, &mut wake, &mut self.dropped)
            .filter(|h| h.hop == 0 && h.kind == Kind::Data)
            .map(|h| (h.flow, h.len));
        if self.dropped.is_empty() {
            self.apply_wake(l, wake);
        } else {
            self.tx_dropped(now, l, wake);
        }
        // TSQ: a data packet has left its sender's host once its first hop finished sending it
        // (the driver's TX completion), not when it reaches the far end.
        if let Some((f, len)) = sent {
            self.left_first_hop(now, f, len as u64 + TCP_HEADER_BYTES as u64);
        }
        // A link that adapts its MCS on its own (ARF on the 802.11 medium) has its path's
        // records follow.
        if let Some(mcs) = self.links[l as usize].mcs() {
            let pi = self.link_path[l as usize];
            if mcs as f64 != self.paths[pi as usize].mcs {
                self.note_mcs(now, pi);
            }
        }
    }

    /// `on_tx_done` when the transmission dropped frames (in `self.dropped`).
    #[cold]
    #[inline(never)]
    fn tx_dropped(&mut self, now: Time, l: u16, wake: Wake) {
        let mut dropped = std::mem::take(&mut self.dropped);
        for p in dropped.iter() {
            self.count_drop(p);
        }
        self.apply_wake(l, wake);
        // A frame the MAC gave up on (retries exhausted) is freed by the driver like a sent one:
        // Linux's TSQ (tcp_wfree -> tcp_tsq_handler) lets a throttled socket send again.
        if self.links[l as usize].freed() == Freed::AtDelivery {
            for p in &dropped {
                if p.hop == 0 && p.kind == Kind::Data {
                    self.left_first_hop(now, p.flow, 0); // count_drop released its bytes
                }
            }
        }
        dropped.clear();
        self.dropped = dropped;
    }

    pub(super) fn on_arrival(&mut self, now: Time, l: u16, port: u8) {
        let mut wake = Wake::default();
        let p = self.links[l as usize].deliver(now, port as usize, &mut wake);
        self.apply_wake(l, wake);
        if let Some(p) = p {
            self.arrive(now, p);
        }
    }
}
