//! Packets on their routes: an endpoint's output put on its first hop, each hop a wired link
//! direction or a radio medium, the events their wake-ups schedule, arrivals handed on to the
//! next hop (sim/endpoint.rs at the last), drops counted per flow, and TSQ's release when a
//! data packet has left its sender's host.

use super::{Ev, Hop, Simulation};
use crate::link::medium::{AirWake, AP};
use crate::link::{Link, Wake};
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
        let accepted = match self.route_hop(&p) {
            Hop::Wire(l) => {
                let mut wake = Wake::default();
                let ok = Link::enqueue(&mut self.links[l as usize], now, 0, p, &mut wake);
                self.apply_wake(l, wake);
                ok
            }
            Hop::Air(m, from) => {
                let mut wake = AirWake::default();
                let ok = Link::enqueue(&mut self.media[m as usize], now, from as usize, p, &mut wake);
                self.apply_air_wake(m, wake);
                ok
            }
        };
        if !accepted {
            self.count_drop(&p);
        }
    }

    pub(super) fn apply_air_wake(&mut self, m: u16, wake: AirWake) {
        if let Some(t) = wake.tx_done {
            self.q.schedule(t, Ev::AirTxDone(m));
        }
        for (d, a) in wake.arrival.iter().enumerate() {
            if let Some(t) = *a {
                self.q.schedule(t, Ev::AirArrival(m, d as u8));
            }
        }
    }

    pub(super) fn on_air_tx_done(&mut self, now: Time, m: u16) {
        let mut wake = AirWake::default();
        let mut dropped = std::mem::take(&mut self.dropped);
        self.media[m as usize].on_tx_done(now, &mut wake, &mut dropped);
        for p in dropped.iter() {
            self.count_drop(p);
        }
        self.apply_air_wake(m, wake);
        // A frame the MAC gave up on (retries exhausted) is freed by the driver like a sent one:
        // Linux's TSQ (tcp_wfree -> tcp_tsq_handler) lets a throttled socket send again.
        for p in &dropped {
            if p.hop == 0 && p.kind == Kind::Data {
                self.left_first_hop(now, p.flow, 0); // count_drop released its bytes
            }
        }
        dropped.clear();
        self.dropped = dropped;
        let pi = self.media_path[m as usize];
        if self.media[m as usize].mcs(AP) as f64 != self.paths[pi as usize].mcs {
            self.note_mcs(now, pi);
        }
    }

    pub(super) fn on_air_arrival(&mut self, now: Time, m: u16, from: u8) {
        let mut wake = AirWake::default();
        let p = Link::deliver(&mut self.media[m as usize], now, from as usize, &mut wake);
        self.apply_air_wake(m, wake);
        if let Some(p) = p {
            self.arrive(now, p);
        }
    }

    pub(super) fn hop_queue_bytes(&self, h: Hop) -> u64 {
        match h {
            Hop::Wire(l) => Link::queue_bytes(&self.links[l as usize], 0),
            Hop::Air(m, from) => Link::queue_bytes(&self.media[m as usize], from as usize),
        }
    }

    pub(super) fn hop_rate_bps(&self, h: Hop) -> u64 {
        match h {
            Hop::Wire(l) => Link::rate_bps(&self.links[l as usize], 0),
            Hop::Air(m, from) => Link::rate_bps(&self.media[m as usize], from as usize),
        }
    }

    pub(super) fn hop_up(&self, h: Hop) -> bool {
        match h {
            Hop::Wire(l) => Link::is_up(&self.links[l as usize]),
            Hop::Air(m, _) => Link::is_up(&self.media[m as usize]),
        }
    }

    pub(super) fn apply_wake(&mut self, l: u16, wake: Wake) {
        if let Some(t) = wake.tx_done {
            self.q.schedule(t, Ev::TxDone(l));
        }
        if let Some(t) = wake.arrival {
            self.q.schedule(t, Ev::Arrival(l));
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
            Kind::Syn => {}
        }
    }

    pub(super) fn on_tx_done(&mut self, now: Time, l: u16) {
        let link = &self.links[l as usize];
        if !link.tx_due(now) {
            return;
        }
        let p = link.cfg.loss_prob;
        let lost = p > 0.0 && self.link_rng[l as usize].bernoulli(p);
        // What TSQ needs of the frame (not a copy of it): a data packet's flow and length when
        // this is its first hop.
        let first_hop_data =
            self.links[l as usize].head().filter(|h| h.hop == 0 && h.kind == Kind::Data).map(|h| (h.flow, h.len));
        let mut wake = Wake::default();
        let dropped = self.links[l as usize].on_tx_done(now, lost, &mut wake);
        if let Some(d) = dropped {
            self.count_drop(&d);
        }
        self.apply_wake(l, wake);
        // TSQ: a data packet has left its sender's host once its first hop finished sending it
        // (the driver's TX completion), not when it reaches the far end.
        if let (Some((f, len)), None) = (first_hop_data, dropped) {
            self.left_first_hop(now, f, len as u64 + TCP_HEADER_BYTES as u64);
        }
    }

    pub(super) fn on_arrival(&mut self, now: Time, l: u16) {
        let mut wake = Wake::default();
        let Some(p) = Link::deliver(&mut self.links[l as usize], now, 0, &mut wake) else { return };
        self.apply_wake(l, wake);
        self.arrive(now, p);
    }
}
