//! MPTCP in the simulation: the connections (`mptcp::connection::Connection`, one per scenario
//! flow of kind "mptcp") run here over their subflows, each an internal `Flow` with its own
//! TCP sender, receiver and route. This file only moves things between them: it lends a
//! connection its subflows' endpoints (`SimIo`), hands it what reaches them (packets, timer
//! events, link events), and carries out what it asks for (`Effect`: timer events, handshake
//! segments, a push's flush) in the order asked, so the engine's events keep their order.
//!
//! - build.rs: a connection and its subflows from the scenario flow;
//! - output.rs: the timeline row and summary entry.

mod build;
mod output;

pub(super) use build::build;

use super::{Ev, Flow, Simulation};
use crate::link::{AnyLink, Link};
use crate::mptcp::connection::{Connection, Effect, SubflowIo, Timer};
use crate::mptcp::pm::PmEvent;
use crate::mptcp::sched::{LinkEvent, Scheduler};
use crate::packet::Packet;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::time::Time;
use serde_json::Value;

/// The oracle's recorder: (flow, check, ok, detail, the list it appends to).
pub(super) type CheckFn<'a> = dyn FnMut(&str, &str, bool, String, &mut Vec<Value>) + 'a;

/// A connection's subflow endpoints as the simulation holds them: a subflow's handle is its
/// internal flow, and its packets go into the simulation's output buffer.
struct SimIo<'a> {
    flows: &'a mut [Flow],
    out: &'a mut Vec<Packet>,
    links: &'a [AnyLink],
}

impl SubflowIo for SimIo<'_> {
    fn sender(&self, sf: u16) -> &TcpSender {
        self.flows[sf as usize].sender.as_ref().expect("subflows are TCP")
    }

    fn sender_out(&mut self, sf: u16) -> (&mut TcpSender, &mut Vec<Packet>) {
        (self.flows[sf as usize].sender.as_mut().expect("subflows are TCP"), self.out)
    }

    fn receiver_out(&mut self, sf: u16) -> (&mut TcpReceiver, &mut Vec<Packet>) {
        (self.flows[sf as usize].receiver.as_mut().expect("a subflow has a receiver"), self.out)
    }

    fn link_up(&self, sf: u16) -> bool {
        let f = &self.flows[sf as usize];
        self.links[f.path_hop().link as usize].is_up()
    }
}

impl Simulation {
    /// Connection `c` and its subflows' endpoints.
    fn conn_io(&mut self, c: u16) -> (&mut Connection, SimIo<'_>) {
        let io = SimIo { flows: &mut self.flows, out: &mut self.out, links: &self.links };
        (&mut self.conns[c as usize], io)
    }

    /// Runs `f` on connection `c` with its subflows' endpoints, then carries out what it asked.
    fn conn_call(&mut self, now: Time, c: u16, f: impl FnOnce(&mut Connection, &mut SimIo<'_>)) {
        let (cn, mut io) = self.conn_io(c);
        f(cn, &mut io);
        self.conn_effects(now, c);
    }

    /// Carries out what connection `c` asked for, in order.
    fn conn_effects(&mut self, now: Time, c: u16) {
        let fx = self.conns[c as usize].take_effects();
        // By reference: an effect holds a packet (over 100 bytes), and most are not one.
        for e in fx.iter() {
            match *e {
                Effect::Timer(at, t) => {
                    let ev = match t {
                        Timer::App => Ev::ConnTick(c),
                        Timer::Stop => Ev::ConnStop(c),
                        Timer::Sched => Ev::SchedTick(c),
                        Timer::Prio => Ev::Prio(c),
                        Timer::Join(f) => Ev::JoinTimer(f),
                        Timer::Rtx => Ev::ConnRtx(c),
                        Timer::Pm => Ev::PmTimer(c),
                    };
                    self.q.schedule(at, ev);
                }
                Effect::Send(ref p) => self.send(now, *p),
                Effect::NewSubflow { path, backup } => self.new_subflow(now, c, path, backup),
                Effect::Closed(f) => self.flows[f as usize].closed = true,
                Effect::Push => {
                    self.flush(now);
                    for j in 0..self.conns[c as usize].subs.len() {
                        let f = self.conns[c as usize].subs[j].flow;
                        if !self.flows[f as usize].closed {
                            self.arm_timers(f);
                        }
                    }
                    let (cn, io) = self.conn_io(c);
                    if let Some(t) = cn.after_push(now, &io) {
                        self.q.schedule(t, Ev::ConnRtx(c));
                    }
                }
            }
        }
        self.conns[c as usize].restore_effects(fx);
    }

    /// Replaces the scheduler of MPTCP flow `flow` (its name) before the run starts: how a
    /// scheduler written outside the core (mmpath-py's Python schedulers) gets in.
    pub fn set_scheduler(&mut self, flow: &str, sched: Box<dyn Scheduler>) -> Result<(), String> {
        if self.now() > Time::ZERO {
            return Err("a scheduler can only be set before the run starts".into());
        }
        let Some(c) = self.conns.iter().position(|c| c.info.name == flow) else {
            let names: Vec<&str> = self.conns.iter().map(|c| c.info.name.as_str()).collect();
            return Err(format!(
                "no MPTCP flow named {flow:?} (MPTCP flows: {})",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ));
        };
        self.conns[c].set_scheduler(sched);
        self.conn_effects(self.now(), c as u16);
        Ok(())
    }

    /// The connection's first events: its application, its joins, MP_PRIO changes, ticks.
    pub(super) fn schedule_conn(&mut self, c: u16) {
        self.conns[c as usize].start();
        self.conn_effects(self.now(), c);
    }

    pub(super) fn conn_app_tick(&mut self, now: Time, c: u16) {
        self.conn_call(now, c, |cn, io| cn.on_app_tick(now, io));
    }

    pub(super) fn conn_app_stop(&mut self, _now: Time, c: u16) {
        self.conns[c as usize].on_app_stop();
    }

    pub(super) fn conn_sched_tick(&mut self, now: Time, c: u16) {
        self.conn_call(now, c, |cn, io| cn.on_sched_tick(now, io));
    }

    pub(super) fn conn_prio(&mut self, now: Time, c: u16) {
        self.conn_call(now, c, |cn, io| cn.on_prio(now, io));
    }

    pub(super) fn conn_pm_timer(&mut self, now: Time, c: u16) {
        self.conn_call(now, c, |cn, io| cn.on_pm_timer(now, io));
    }

    /// A link event on path `pi` for every connection's path manager with a path there.
    pub(super) fn pm_link_event(&mut self, now: Time, pi: u16, ev: PmEvent) {
        for c in 0..self.conns.len() {
            if self.conns[c].has_pm() {
                self.conn_call(now, c as u16, |cn, io| cn.on_pm_link(now, pi, ev, io));
            }
        }
    }

    /// Connection `c`'s path manager opens a subflow on path `pi`: its endpoints are built as
    /// the first ones were (build.rs), and it joins now.
    fn new_subflow(&mut self, now: Time, c: u16, pi: u16, backup: bool) {
        let j = self.conns[c as usize].subs.len();
        let fi = self.flows.len() as u16;
        let (flow, sub) = build::subflow_at(self, c, j, pi, backup, now);
        self.flows.push(flow);
        debug_assert_eq!(sub.flow, fi);
        self.conn_call(now, c, |cn, _| cn.add_subflow(now, sub));
    }

    pub(super) fn conn_rtx_timer(&mut self, now: Time, c: u16) {
        self.conn_call(now, c, |cn, io| cn.on_rtx_timer(now, io));
    }

    /// Hands connection data to subflows (after a subflow's TSQ let it go on, route.rs).
    pub(super) fn conn_push(&mut self, now: Time, c: u16) {
        self.conn_call(now, c, |cn, io| cn.push(now, io));
    }

    /// Subflow `f`'s handshake is due or timed out.
    pub(super) fn join_timer(&mut self, now: Time, f: u16) {
        let Some((c, j)) = self.flows[f as usize].conn else { return };
        self.conns[c as usize].on_join_timer(now, j as usize);
        self.conn_effects(now, c);
    }

    /// A handshake segment reached its end.
    pub(super) fn on_handshake(&mut self, now: Time, p: &Packet) {
        let Some((c, j)) = self.flows[p.flow as usize].conn else { return };
        self.conn_call(now, c, |cn, io| cn.on_handshake(now, j as usize, p, io));
    }

    /// An MP_PRIO segment reached its end.
    pub(super) fn on_mp_prio(&mut self, now: Time, p: &Packet) {
        let Some((c, j)) = self.flows[p.flow as usize].conn else { return };
        self.conn_call(now, c, |cn, _| cn.on_mp_prio(j as usize, p));
    }

    /// A subflow's sender timer is due.
    pub(super) fn conn_sender_timer(&mut self, now: Time, (c, j): (u16, u8)) {
        self.conn_call(now, c, |cn, io| cn.on_sender_timer(now, j as usize, io));
    }

    /// A link event on path `pi`: every subflow there hears it.
    pub(super) fn conn_link_event(&mut self, now: Time, pi: u16, ev: LinkEvent) {
        for c in 0..self.conns.len() {
            for j in 0..self.conns[c].subs.len() {
                let f = self.conns[c].subs[j].flow as usize;
                if self.flows[f].path != pi {
                    continue;
                }
                self.conn_call(now, c as u16, |cn, io| cn.on_link_event(now, j, ev, io));
            }
        }
    }

    /// A reset on its path closes subflow `j` of connection `c` at both ends; whether it did.
    pub(super) fn conn_reset(&mut self, now: Time, (c, j): (u16, u8)) -> bool {
        let mut reset = false;
        self.conn_call(now, c, |cn, io| reset = cn.on_reset(now, j as usize, io));
        reset
    }

    /// Stamps DSS information on a packet leaving a subflow endpoint.
    pub(super) fn conn_stamp(&mut self, (c, j): (u16, u8), p: &mut Packet) {
        self.conns[c as usize].stamp(j as usize, p);
    }

    /// A data segment reached the connection; returns the bytes that became in order.
    pub(super) fn conn_on_data(&mut self, now: Time, (c, j): (u16, u8), p: &Packet) -> u64 {
        self.conns[c as usize].on_data(now, j as usize, p)
    }

    /// The application read `copied` bytes: each subflow's ACK leaves before the next one's
    /// is decided (`Connection::read_rule`).
    pub(super) fn conn_on_read(&mut self, now: Time, c: u16, copied: u64) {
        if copied > 0 {
            let (cn, mut io) = self.conn_io(c);
            cn.rcv_space_adjust(now, copied, &mut io);
        }
        let Some(rule) = self.conns[c as usize].read_rule(copied) else { return };
        for j in 0..self.conns[c as usize].subs.len() {
            let (cn, mut io) = self.conn_io(c);
            if cn.read_ack(now, j, rule, &mut io) {
                let f = cn.subs[j].flow;
                self.after_endpoint(now, f);
            }
        }
    }

    /// An ACK reached a subflow's sender.
    pub(super) fn conn_on_ack(&mut self, now: Time, (c, j): (u16, u8), p: &Packet) {
        let (cn, mut io) = self.conn_io(c);
        let advanced = cn.on_ack(now, j as usize, p, &mut io);
        // A scan held until this subflow drains may start now (AMuSe SCAN, scan.rs).
        let pi = self.flows[self.conns[c as usize].subs[j as usize].flow as usize].path;
        if self.paths[pi as usize].scan_held.is_some() {
            self.start_held_scan(now, pi);
        }
        self.conn_call(now, c, |cn, io| cn.after_ack(now, advanced, io));
    }
}
