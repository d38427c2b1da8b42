//! Piecewise-constant rate / up-down schedules for a path, from the scenario's
//! `[[path.schedule]]` steps. The wireless models of later issues drive the same link calls.

use crate::scenario::{Outage, ScheduleStep};
use crate::time::Time;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub at: Time,
    /// New downlink rate in bit/s (the uplink scales by the same factor).
    pub rate_bps: Option<u64>,
    pub up: Option<bool>,
    /// What a step taking the link down does with its packets.
    pub outage: Outage,
    /// Every TCP connection crossing the path is reset (the scenario step's `reset`).
    pub reset: bool,
}

/// The steps of one path, consumed in time order.
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    steps: Vec<Step>,
    next: usize,
}

impl Schedule {
    pub fn from_cfg(steps: &[ScheduleStep]) -> Schedule {
        Schedule {
            steps: steps
                .iter()
                .map(|s| Step {
                    at: Time::from_secs_f64(s.t_s),
                    rate_bps: s.rate_mbps.map(|r| (r * 1e6).round() as u64),
                    up: s.up,
                    outage: if s.drop { Outage::Drop } else { Outage::Hold },
                    reset: s.reset,
                })
                .collect(),
            next: 0,
        }
    }

    /// Time of the next step not yet applied.
    pub fn next_time(&self) -> Option<Time> {
        self.steps.get(self.next).map(|s| s.at)
    }

    /// Takes the next step if it is due at `now`.
    pub fn take_due(&mut self, now: Time) -> Option<Step> {
        let s = *self.steps.get(self.next)?;
        if s.at <= now {
            self.next += 1;
            Some(s)
        } else {
            None
        }
    }
}
