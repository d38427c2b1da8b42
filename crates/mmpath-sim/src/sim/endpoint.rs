//! A flow's endpoints: the TCP sender's and receiver's lazy timers, what reaches the far end
//! of a route (data to the receiver, ACKs to the sender, UDP datagrams with their RFC 3550
//! jitter, SYNs to MPTCP's path manager), the delivery counters and bins, and the applications
//! (bulk, rate, CBR) writing into a single-path flow.

use super::{Ev, Simulation};
use crate::app::{App, RATE_TICK};
use crate::link::{Freed, Link};
use crate::packet::{Kind, Packet, Way, TCP_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::time::Time;

impl Simulation {
    /// Sends what an endpoint produced and keeps its timers armed.
    pub(super) fn after_endpoint(&mut self, now: Time, f: u16) {
        self.flush(now);
        self.arm_timers(f);
    }

    /// Schedules the flow's sender and receiver timers if they are due earlier than the entries
    /// already queued for them (lazy timers: a later deadline keeps the earlier, stale entry).
    /// Idempotent: a second call with nothing changed in between schedules nothing.
    pub(super) fn arm_timers(&mut self, f: u16) {
        let fl = &mut self.flows[f as usize];
        if let Some(d) = fl.sender.as_ref().and_then(|s| s.timer_deadline()) {
            if fl.sender_timer.is_none_or(|t| d < t) {
                fl.sender_timer = Some(d);
                self.q.schedule(d, Ev::SenderTimer(f));
            }
        }
        if let Some(d) = fl.receiver.as_ref().and_then(|r| r.timer_deadline()) {
            if fl.receiver_timer.is_none_or(|t| d < t) {
                fl.receiver_timer = Some(d);
                self.q.schedule(d, Ev::ReceiverTimer(f));
            }
        }
    }

    /// A packet reached the far end of a hop: on to the next hop, or to its endpoint.
    pub(super) fn arrive(&mut self, now: Time, mut p: Packet) {
        let f = p.flow;
        // TSQ on a first hop whose frames are freed once through it (the 802.11 medium's); the
        // others release at their TX completion, in on_tx_done (route.rs).
        if p.hop == 0
            && p.kind == Kind::Data
            && self.links[self.route_hop(&p).link as usize].freed() == Freed::AtDelivery
        {
            // A merged skb (GRO) releases each of its segments' headers, as they were charged.
            self.left_first_hop(now, p.flow, p.len as u64 + u64::from(p.segs) * TCP_HEADER_BYTES as u64);
        }
        if p.hop + 1 < self.flows[f as usize].hops {
            p.hop += 1;
            self.forward(now, p);
            return;
        }
        let fl = &mut self.flows[f as usize];
        if fl.closed {
            // A subflow the path manager closed: what reaches it arrived (the oracle's count),
            // and the kernel resets it.
            if p.kind == Kind::Data {
                fl.counters.data_arrived += u64::from(p.segs);
            }
            return;
        }
        match p.kind {
            Kind::Data => {
                fl.counters.data_arrived += u64::from(p.segs);
                let rx = fl.receiver.as_mut().expect("tcp flow has a receiver");
                let delivered = rx.on_data(now, &p, &mut self.out);
                let conn = fl.conn;
                // A single-path application reads what arrived at once (tcp_recvmsg ->
                // tcp_cleanup_rbuf); an MPTCP application reads from the connection.
                if conn.is_none() && delivered > 0 {
                    rx.on_read(now, delivered, &mut self.out);
                }
                if delivered > 0 {
                    let rcv_nxt = rx.rcv_nxt();
                    let sent = fl.sender.as_ref().map_or(0, |s| s.snd_nxt);
                    if rcv_nxt > sent {
                        fl.counters.delivered_unsent = true;
                    }
                    self.record_delivery(now, f, delivered);
                }
                match conn {
                    Some(c) => {
                        let copied = self.conn_on_data(now, c, &p);
                        // This subflow's own ACK leaves first (it updates the advertised
                        // window the read is compared with), then the read's.
                        self.after_endpoint(now, f);
                        self.conn_on_read(now, c.0, copied);
                    }
                    None => self.after_endpoint(now, f),
                }
            }
            Kind::Ack => match fl.conn {
                // An MPTCP subflow's sender hears its ACK through its connection, which ends
                // with a push that sends and arms every subflow's timers, this one's too.
                Some(c) => self.conn_on_ack(now, c, &p),
                None => {
                    if let Some(s) = fl.sender.as_mut() {
                        s.on_ack(now, &p, &mut self.out);
                    }
                    self.after_endpoint(now, f);
                }
            },
            Kind::Syn => self.on_handshake(now, &p),
            Kind::Prio => self.on_mp_prio(now, &p),
            Kind::Udp => {
                fl.counters.data_arrived += 1;
                fl.counters.udp_bytes_received += p.len as u64;
                // RFC 3550 jitter, as iperf3 reports it: J += (|D| - J) / 16.
                let transit = now.ns() as i64 - p.ts_val_ns as i64;
                if let Some(prev) = fl.counters.udp_last_transit_ns {
                    let d = (transit - prev).abs() as f64;
                    fl.counters.udp_jitter_ns += (d - fl.counters.udp_jitter_ns) / 16.0;
                }
                fl.counters.udp_last_transit_ns = Some(transit);
                fl.counters.udp_transit_sum_ns += transit as f64;
                fl.counters.udp_transit_min_ns =
                    Some(fl.counters.udp_transit_min_ns.map_or(transit, |m| m.min(transit)));
                fl.counters.udp_transit_max_ns = fl.counters.udp_transit_max_ns.max(transit);
                self.record_delivery(now, f, p.len as u64);
            }
        }
    }

    fn record_delivery(&mut self, now: Time, f: u16, bytes: u64) {
        let fl = &mut self.flows[f as usize];
        fl.bins.add(now.ns(), bytes);
        fl.counters.delivered_bytes += bytes;
        if now >= fl.start && now <= fl.stop {
            fl.counters.goodput_bytes += bytes;
        }
    }

    pub(super) fn on_app_tick(&mut self, now: Time, f: u16) {
        let fl = &mut self.flows[f as usize];
        if now >= fl.stop || fl.closed {
            return;
        }
        match &mut fl.app {
            App::Bulk { bytes } => {
                let limit = bytes.unwrap_or(u64::MAX);
                if let Some(s) = fl.sender.as_mut() {
                    s.set_app_limit(limit);
                    s.try_send(now, &mut self.out);
                }
            }
            App::Rate { rate_bps, bytes, written, ticks } => {
                *ticks += 1;
                *written = App::rate_written(*rate_bps, *ticks, *bytes);
                let limit = *written;
                let done = bytes.is_some_and(|b| limit >= b);
                if let Some(s) = fl.sender.as_mut() {
                    s.set_app_limit(limit);
                    s.try_send(now, &mut self.out);
                }
                let next = fl.start + Time(RATE_TICK.ns() * *ticks);
                if !done && next < fl.stop {
                    self.q.schedule(next, Ev::AppTick(f));
                }
            }
            App::Cbr { rate_bps, payload, bytes, sent } => {
                let len = match bytes {
                    Some(b) => (*b - (*sent * *payload as u64).min(*b)).min(*payload as u64) as u32,
                    None => *payload,
                };
                if len > 0 {
                    let mut p = Packet::empty(f, Kind::Udp, Way::Forward);
                    p.seq = *sent;
                    p.len = len;
                    p.size_bytes = len + UDP_HEADER_BYTES;
                    p.ts_val_ns = now.ns();
                    self.out.push(p);
                    *sent += 1;
                    let next = fl.start + App::cbr_offset(*rate_bps, *payload, *sent);
                    let more = bytes.is_none_or(|b| *sent * (*payload as u64) < b);
                    if more && next < fl.stop {
                        self.q.schedule(next, Ev::AppTick(f));
                    }
                }
            }
        }
        self.after_endpoint(now, f);
    }
}
