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

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    /// Five segments on subflow 0 (v0.9x, minRTT), then subflow 1, a backup, joined; `prio`
    /// changes the backup flags at 10 ms (MP_PRIO, RFC 8684 3.3.8), after which 5 more segments
    /// are written. Returns how many data segments each subflow carried in all.
    fn after_prio(prio: Vec<(Time, usize, bool)>) -> (usize, usize) {
        let (mut cn, mut io) = connection(Kernel::V09x, SchedName::Minrtt, &[false, true], 1 << 20);
        write(&mut cn, &mut io, Time::ZERO, 5 * MSS as u64);
        assert_eq!((io.data_on(0).len(), io.data_on(1).len()), (5, 0));
        cn.subs[1].established = true;
        cn.prio = prio;
        cn.on_prio(ms(10), &mut io);
        settle(&mut cn, &mut io, ms(10));
        write(&mut cn, &mut io, ms(11), 10 * MSS as u64);
        (io.data_on(0).len(), io.data_on(1).len())
    }

    /// Without a priority change the backup idles and subflow 0 takes the new data; once
    /// MP_PRIO swaps the flags (0 a backup, 1 not), the new data goes to subflow 1 instead.
    #[test]
    fn mp_prio_moves_new_data_to_the_subflow_made_regular() {
        let (on0, on1) = after_prio(Vec::new());
        assert_eq!((on0, on1), (10, 0), "no MP_PRIO: the backup idles");
        let (on0, on1) = after_prio(vec![(ms(10), 0, true), (ms(10), 1, false)]);
        assert_eq!(on0, 5, "subflow 0, now a backup, gets no new data");
        assert_eq!(on1, 5, "the new data goes to subflow 1");
        // A change due at another instant is not applied at 10 ms.
        let (on0, on1) = after_prio(vec![(ms(20), 0, true), (ms(20), 1, false)]);
        assert_eq!((on0, on1), (10, 0));
    }
}
