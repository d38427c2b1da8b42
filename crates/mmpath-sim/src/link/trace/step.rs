//! The step model every format is turned into (docs/traces.md, "What a trace becomes"): a step
//! holds from its time until the next one and changes only the fields it sets (the fields are
//! declared once, in state.rs); and a parsed trace with the period it loops over. Pass k starts
//! at k x period, as mahimahi advances its base by the last timestamp on wraparound
//! (ravinet/mahimahi src/frontend/link_queue.cc); that a pass starts from the state the whole
//! previous pass left is mmpath's rule (docs/traces.md, "Period and looping").

use super::{ChannelState, TraceFormat};
use crate::time::Time;

/// One change of the channel, `at` from the start of the trace: the fields in `set` take their
/// new values, the others keep theirs, until the next step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceStep {
    pub at: Time,
    /// What the step changes (`None` = unchanged).
    pub set: ChannelState,
}

impl TraceStep {
    pub const fn new(at: Time, set: ChannelState) -> TraceStep {
        TraceStep { at, set }
    }
}

/// Appends `step` to steps in time order, folding it into the last one if both are at the same
/// instant (its values win), so that times stay strictly increasing: how the parsers merge rows
/// with the same time and how a run records several changes made at once.
pub fn push_step(steps: &mut Vec<TraceStep>, step: TraceStep) {
    match steps.last_mut() {
        Some(last) if last.at == step.at => {
            last.set.apply(&step.set);
        }
        _ => steps.push(step),
    }
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub steps: Vec<TraceStep>,
    /// Length of one pass, for looping: pass k starts at k x period. Mahimahi: the last
    /// timestamp; CSV: the last row's time (so a final row with only `t_s` gives the previous
    /// row a duration); wil6210: the last row's time plus one sample interval. Zero (a CSV
    /// whose rows are all at t = 0) means there is nothing to loop.
    pub period: Time,
    pub format: TraceFormat,
}

impl Trace {
    /// The channel at time `t`. With `looped`, pass k >= 1 starts from the state the whole
    /// previous pass left (fields a pass never sets keep their values from the pass before).
    /// Linear in the number of steps: for inspection and tests; a replay walks the steps.
    pub fn state_at(&self, t: Time, looped: bool) -> ChannelState {
        let p = self.period.ns();
        let mut st = ChannelState::default();
        let off = if looped && p > 0 && t.ns() >= p {
            for s in &self.steps {
                st.apply(&s.set);
            }
            Time(t.ns() % p)
        } else {
            t
        };
        for s in self.steps.iter().take_while(|s| s.at <= off) {
            st.apply(&s.set);
        }
        st
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_step_folds_changes_at_the_same_instant() {
        let at = |ms, set| TraceStep::new(Time::from_ms(ms), set);
        let none = ChannelState::default();
        let mut steps = Vec::new();
        push_step(&mut steps, at(0, ChannelState { rate_bps: Some(5), up: Some(true), ..none }));
        push_step(&mut steps, at(0, ChannelState { up: Some(false), mcs: Some(3), ..none }));
        push_step(&mut steps, at(10, ChannelState { mcs: Some(4), ..none }));
        assert_eq!(
            steps,
            vec![
                at(0, ChannelState { rate_bps: Some(5), up: Some(false), mcs: Some(3), ..none }),
                at(10, ChannelState { mcs: Some(4), ..none }),
            ]
        );
    }
}
