//! What reaches the scheduler besides ACKs and RTOs: link events on a subflow's path (11ad
//! beam scans and blockages, sim/path.rs and sim/scan.rs), the scheduler's own ticks (MuSher,
//! AMuSe, the energy-aware scheduler), and MP_PRIO changes of a subflow's backup flag (RFC 8684
//! 3.3.8).

use super::{Connection, Effect, SubflowIo, Timer};
use crate::mptcp::sched::LinkEvent;
use crate::time::Time;

impl Connection {
    // ----- link events, ticks, MP_PRIO -----

    /// A link event on subflow `j`'s interface.
    pub fn on_link_event(&mut self, now: Time, j: usize, ev: LinkEvent, io: &mut impl SubflowIo) {
        match ev {
            LinkEvent::ScanStart => self.subs[j].scanning = true,
            LinkEvent::ScanEnd => self.subs[j].scanning = false,
            _ => {}
        }
        self.sync_sndbuf(io);
        let view = self.conn_view();
        self.fill_views(io);
        let mut actions = std::mem::take(&mut self.actions);
        self.sched.on_link_event(now, j, ev, &view, &self.views, &mut actions);
        self.actions = actions;
        self.apply_actions(now, io);
        self.push(now, io);
    }

    /// The scheduler's tick (`Timer::Sched`).
    pub fn on_sched_tick(&mut self, now: Time, io: &mut impl SubflowIo) {
        if self.tick_at != Some(now) {
            return;
        }
        self.sync_sndbuf(io);
        let view = self.conn_view();
        self.fill_views(io);
        let mut actions = std::mem::take(&mut self.actions);
        self.sched.on_tick(now, &view, &self.views, &mut actions);
        self.actions = actions;
        self.tick_at = self.sched.next_tick(now).filter(|&t| t > now);
        if let Some(t) = self.tick_at {
            self.effects.push(Effect::Timer(t, Timer::Sched));
        }
        self.apply_actions(now, io);
        self.push(now, io);
    }

    /// An MP_PRIO change is due (`Timer::Prio`).
    pub fn on_prio(&mut self, now: Time, io: &mut impl SubflowIo) {
        for &(t, j, b) in &self.prio {
            if t == now {
                self.subs[j].backup = b;
            }
        }
        self.push(now, io);
    }
}
