//! What reaches the scheduler besides ACKs and RTOs: link events on a subflow's path (11ad
//! beam scans and blockages, sim/path.rs and sim/scan.rs), the scheduler's own ticks (MuSher,
//! AMuSe, the energy-aware scheduler), and MP_PRIO changes of a subflow's backup flag (RFC 8684
//! 3.3.8).

use crate::mptcp::sched::LinkEvent;
use crate::sim::{Ev, Simulation};
use crate::time::Time;

impl Simulation {
    // ----- link events, ticks, MP_PRIO -----

    pub(in crate::sim) fn conn_link_event(&mut self, now: Time, pi: u16, ev: LinkEvent) {
        for c in 0..self.conns.len() {
            for j in 0..self.conns[c].subs.len() {
                let f = self.conns[c].subs[j].flow as usize;
                if self.flows[f].path != pi {
                    continue;
                }
                match ev {
                    LinkEvent::ScanStart => self.conns[c].subs[j].scanning = true,
                    LinkEvent::ScanEnd => self.conns[c].subs[j].scanning = false,
                    _ => {}
                }
                let c16 = c as u16;
                self.sync_sndbuf(c16);
                let view = self.conn_view(c16);
                self.fill_views(c16);
                let cn = &mut self.conns[c];
                let mut actions = std::mem::take(&mut cn.actions);
                cn.sched.on_link_event(now, j, ev, &view, &cn.views, &mut actions);
                cn.actions = actions;
                self.apply_actions(now, c16);
                self.conn_push(now, c16);
            }
        }
    }

    pub(in crate::sim) fn conn_sched_tick(&mut self, now: Time, c: u16) {
        if self.conns[c as usize].tick_at != Some(now) {
            return;
        }
        self.sync_sndbuf(c);
        let view = self.conn_view(c);
        self.fill_views(c);
        let cn = &mut self.conns[c as usize];
        let mut actions = std::mem::take(&mut cn.actions);
        cn.sched.on_tick(now, &view, &cn.views, &mut actions);
        cn.actions = actions;
        cn.tick_at = cn.sched.next_tick(now).filter(|&t| t > now);
        if let Some(t) = cn.tick_at {
            self.q.schedule(t, Ev::SchedTick(c));
        }
        self.apply_actions(now, c);
        self.conn_push(now, c);
    }

    pub(in crate::sim) fn conn_prio(&mut self, now: Time, c: u16) {
        let cn = &mut self.conns[c as usize];
        for &(t, j, b) in &cn.prio {
            if t == now {
                cn.subs[j].backup = b;
            }
        }
        self.conn_push(now, c);
    }
}
