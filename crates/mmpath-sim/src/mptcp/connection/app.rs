//! A connection's start and its application: a scheduler set from outside before the run
//! (mmpath-py's Python schedulers), the first timers (application, MP_JOINs, MP_PRIO changes,
//! scheduler ticks, the path manager's start), and the application writing into the connection (bulk or rate, src/app.rs;
//! iperf3 -t's end drops what is not yet scheduled, as a TCP socket's unsent data is).

use super::{Connection, Effect, SubflowIo, Timer};
use crate::app::{App, RATE_TICK};
use crate::mptcp::sched::Scheduler;
use crate::time::Time;

impl Connection {
    /// Replaces the scheduler before the run starts: how a scheduler written outside the core
    /// (mmpath-py's Python schedulers) gets in.
    pub fn set_scheduler(&mut self, sched: Box<dyn Scheduler>) {
        self.sched = sched;
        self.pacing_in_views = self.sched.reads_pacing_rate();
        // The first tick was asked for the scenario's scheduler; follow the new one's.
        self.tick_at = self.sched.next_tick(self.info.start);
        if let Some(t) = self.tick_at {
            self.effects.push(Effect::Timer(t, Timer::Sched));
        }
    }

    /// The connection's first timers: its application, its joins, MP_PRIO changes, ticks.
    pub fn start(&mut self) {
        let (start, stop) = (self.info.start, self.info.stop);
        self.effects.push(Effect::Timer(start, Timer::App));
        self.effects.push(Effect::Timer(stop, Timer::Stop));
        for st in self.subs.iter().skip(1) {
            self.effects.push(Effect::Timer(start, Timer::Join(st.flow)));
        }
        for &(t, _, _) in &self.prio {
            self.effects.push(Effect::Timer(t, Timer::Prio));
        }
        // A userspace path manager hears of the connection at its start (pm.rs).
        if self.has_pm() {
            self.effects.push(Effect::Timer(start, Timer::Pm));
        }
        if let Some(t) = self.sched.next_tick(start) {
            self.tick_at = Some(t);
            self.effects.push(Effect::Timer(t, Timer::Sched));
        }
    }

    // ----- application -----

    /// The application writes (`Timer::App`).
    pub fn on_app_tick(&mut self, now: Time, io: &mut impl SubflowIo) {
        if now >= self.info.stop {
            return;
        }
        match &mut self.app {
            App::Bulk { bytes } => {
                self.data_limit = bytes.unwrap_or(u64::MAX);
                self.app_done = bytes.is_some();
            }
            App::Rate { rate_bps, bytes, written, ticks } => {
                *ticks += 1;
                *written = App::rate_written(*rate_bps, *ticks, *bytes);
                self.data_limit = *written;
                let done = bytes.is_some_and(|b| *written >= b);
                self.app_done = done;
                let next = self.info.start + Time(RATE_TICK.ns() * *ticks);
                if !done && next < self.info.stop {
                    self.effects.push(Effect::Timer(next, Timer::App));
                }
            }
            App::Cbr { .. } => unreachable!("validated: MPTCP flows take bulk or rate"),
        }
        // sendmsg: the application writes into the send buffer and pushes (stale.rs).
        self.writer_write();
        self.push(now, io);
    }

    /// iperf3 -t ends (`Timer::Stop`): no new data; what was written and not yet scheduled is
    /// dropped, as a TCP socket's unsent data is when the test ends.
    pub fn on_app_stop(&mut self) {
        self.data_limit = self.data_limit.min(self.data_nxt);
        self.app_done = true;
    }
}
