//! A connection's start and its application: a scheduler set from outside before the run
//! (mmpath-py's Python schedulers), the first events (application, MP_JOINs, MP_PRIO changes,
//! scheduler ticks), and the application writing into the connection (bulk or rate, src/app.rs;
//! iperf3 -t's end drops what is not yet scheduled, as a TCP socket's unsent data is).

use crate::app::{App, RATE_TICK};
use crate::mptcp::sched::Scheduler;
use crate::sim::{Ev, Simulation};
use crate::time::Time;

impl Simulation {
    /// Replaces the scheduler of MPTCP flow `flow` (its name) before the run starts: how a
    /// scheduler written outside the core (mmpath-py's Python schedulers) gets in.
    pub fn set_scheduler(&mut self, flow: &str, sched: Box<dyn Scheduler>) -> Result<(), String> {
        if self.now() > Time::ZERO {
            return Err("a scheduler can only be set before the run starts".into());
        }
        let Some(c) = self.conns.iter().position(|c| c.name == flow) else {
            let names: Vec<&str> = self.conns.iter().map(|c| c.name.as_str()).collect();
            return Err(format!(
                "no MPTCP flow named {flow:?} (MPTCP flows: {})",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ));
        };
        let cn = &mut self.conns[c];
        cn.sched = sched;
        cn.pacing_in_views = cn.sched.reads_pacing_rate();
        // The first tick was scheduled for the scenario's scheduler; follow the new one's.
        cn.tick_at = cn.sched.next_tick(cn.start);
        if let Some(t) = cn.tick_at {
            self.q.schedule(t, Ev::SchedTick(c as u16));
        }
        Ok(())
    }

    /// The connection's first events: its application, its joins, MP_PRIO changes, ticks.
    pub(in crate::sim) fn schedule_conn(&mut self, c: u16) {
        let cn = &self.conns[c as usize];
        let (start, stop) = (cn.start, cn.stop);
        self.q.schedule(start, Ev::ConnTick(c));
        self.q.schedule(stop, Ev::ConnStop(c));
        for st in cn.subs.iter().skip(1) {
            self.q.schedule(start, Ev::JoinTimer(st.flow));
        }
        for &(t, _, _) in &cn.prio {
            self.q.schedule(t, Ev::Prio(c));
        }
        if let Some(t) = cn.sched.next_tick(start) {
            self.conns[c as usize].tick_at = Some(t);
            self.q.schedule(t, Ev::SchedTick(c));
        }
    }

    // ----- application -----

    pub(in crate::sim) fn conn_app_tick(&mut self, now: Time, c: u16) {
        let cn = &mut self.conns[c as usize];
        if now >= cn.stop {
            return;
        }
        match &mut cn.app {
            App::Bulk { bytes } => {
                cn.data_limit = bytes.unwrap_or(u64::MAX);
                cn.app_done = bytes.is_some();
            }
            App::Rate { rate_bps, bytes, written, ticks } => {
                *ticks += 1;
                *written = App::rate_written(*rate_bps, *ticks, *bytes);
                cn.data_limit = *written;
                let done = bytes.is_some_and(|b| *written >= b);
                cn.app_done = done;
                let next = cn.start + Time(RATE_TICK.ns() * *ticks);
                if !done && next < cn.stop {
                    self.q.schedule(next, Ev::ConnTick(c));
                }
            }
            App::Cbr { .. } => unreachable!("validated: MPTCP flows take bulk or rate"),
        }
        // sendmsg: the application writes into the send buffer and pushes (stale.rs).
        self.conn_writer_write(c);
        self.conn_push(now, c);
    }

    /// iperf3 -t ends: no new data; what was written and not yet scheduled is dropped, as a
    /// TCP socket's unsent data is when the test ends.
    pub(in crate::sim) fn conn_app_stop(&mut self, _now: Time, c: u16) {
        let cn = &mut self.conns[c as usize];
        cn.data_limit = cn.data_limit.min(cn.data_nxt);
        cn.app_done = true;
    }
}
