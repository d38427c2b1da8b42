//! The energy model's outputs (energy.rs): per-radio joules in the path summaries, the client
//! host's receive-side joules, per-flow joules and nJ/bit, the run's total, and the timeline's
//! cumulative `energy_j` column.

use super::{Simulation, UserFlow};
use crate::energy::{lock, nj_per_bit, RadioMeter, SharedHost, StateTimes};
use crate::time::Time;
use serde_json::{json, Value};

impl Simulation {
    /// The client radio meter of path `pi`, if the path is a metered radio path.
    fn meter_of(&self, pi: u16) -> Option<&RadioMeter> {
        self.radio_of(pi)?.meter()
    }

    /// The client host's receive meter, if a metered radio reports to one (one per run).
    fn host_meter(&self) -> Option<&SharedHost> {
        (0..self.paths.len()).find_map(|pi| self.meter_of(pi as u16).and_then(|m| m.host()))
    }

    /// Whether a reading at `now` counts the TXOPs still on the air up to `now`: during the run
    /// (the timeline's samples), so that energy follows the airtime between samples. The run's
    /// final reading (the summary, the timeline's last row) counts what had ended by the end, as
    /// it always has: a TXOP on the air then (at most one per radio, <= 5.5 ms) is charged as
    /// the gap it interrupts. Counting it would move the reproduced claims' values (002-power's
    /// 11ac Tx by 1 mW in the fast mode), which this project keeps fixed.
    fn reads_open(&self, now: Time) -> bool {
        now < self.end
    }

    /// Path `pi`'s client radio meter and its state times at `now` (a TXOP still on the air
    /// counted up to `now` during the run: medium.rs `meter_times_at`).
    fn radio_at(&self, pi: u16, now: Time) -> Option<(&RadioMeter, StateTimes)> {
        let md = self.radio_of(pi)?;
        let meter = md.meter()?;
        let t = if self.reads_open(now) { md.meter_times_at(now)? } else { meter.times_at(now) };
        Some((meter, t))
    }

    /// The client host's receive-side joules at `now`, with the receive TXOPs of its radios
    /// still on the air counted up to `now`.
    fn host_joules_at(&self, h: &SharedHost, now: Time) -> f64 {
        lock(h).joules_with_open(now, &self.open_rx_starts(now))
    }

    /// The starts of the receive TXOPs on the air at `now` of the radios reporting to the
    /// client host (one host per run).
    fn open_rx_starts(&self, now: Time) -> Vec<Time> {
        if !self.reads_open(now) {
            return Vec::new();
        }
        self.links
            .iter()
            .filter_map(|l| l.medium())
            .filter(|m| m.meter().is_some_and(|r| r.host().is_some()))
            .filter_map(|m| m.open_rx_start(now))
            .collect()
    }

    /// Joules the radios of `paths` used up to `now`, plus the client host's receive-side
    /// joules if one of them reports to it; NaN if none of them is metered.
    pub(super) fn energy_j(&self, now: Time, paths: impl Iterator<Item = u16>) -> f64 {
        let mut j = f64::NAN;
        let mut host = None;
        for pi in paths {
            if let Some((m, t)) = self.radio_at(pi, now) {
                j = if j.is_nan() { 0.0 } else { j } + t.joules(&m.power);
                host = host.or(m.host());
            }
        }
        if let Some(h) = host {
            j += self.host_joules_at(h, now);
        }
        j
    }

    /// The paths a scenario flow may use (one, or an MPTCP connection's subflows').
    fn user_flow_paths(&self, uf: UserFlow) -> Vec<u16> {
        match uf {
            UserFlow::Single(i) => vec![self.flows[i as usize].path],
            UserFlow::Conn(c) => {
                self.conns[c as usize].subs.iter().map(|st| self.flows[st.flow as usize].path).collect()
            }
        }
    }

    /// Adds the energy fields to the flow and path summaries and returns the run's "energy"
    /// object. A flow is charged every radio it may use (radios shared by flows are not split).
    pub(super) fn energy_summary(&self, flows: &mut [Value], paths: &mut [Value]) -> Value {
        let end = self.end;
        let mut radios = Vec::new();
        let mut total = f64::NAN;
        for (pi, v) in paths.iter_mut().enumerate() {
            let Some((m, t)) = self.radio_at(pi as u16, end) else {
                if let Some(o) = v.as_object_mut() {
                    o.insert("energy".into(), Value::Null);
                }
                continue;
            };
            let j = t.joules(&m.power);
            total = if total.is_nan() { 0.0 } else { total } + j;
            let e = json!({
                "joules": j,
                "mean_power_mw": j / end.secs_f64().max(1e-12) * 1e3,
                "tx_s": t.tx_ns as f64 / 1e9,
                "tx_on_s": t.tx_on_ns as f64 / 1e9,
                "rx_s": t.rx_ns as f64 / 1e9,
                "idle_s": t.idle_ns as f64 / 1e9,
                "psm_s": t.psm_ns as f64 / 1e9,
                "psm_entries": t.psm_entries,
                "power_mw": {"tx": m.power.tx_mw, "tx_on": crate::energy::tx_on_mw(&m.power), "rx": m.power.rx_mw,
                             "idle": m.power.idle_mw, "psm": m.power.psm_mw},
                "psm_timeout_ms": m.power.psm_timeout.ns() as f64 / 1e6,
            });
            radios.push(json!({"path": self.paths[pi].name, "joules": j}));
            if let Some(o) = v.as_object_mut() {
                o.insert("energy".into(), e);
            }
        }
        let host = self.host_meter().map(|h| {
            let open = self.open_rx_starts(end);
            let h = lock(h);
            let active = h.active_ns_with_open(end, &open);
            let j = active as f64 * h.power_mw * 1e-12;
            total = if total.is_nan() { 0.0 } else { total } + j;
            json!({
                "joules": j,
                "mean_power_mw": j / end.secs_f64().max(1e-12) * 1e3,
                "rx_active_s": active as f64 / 1e9,
                "power_mw": h.power_mw,
            })
        });
        let mut bytes_all = 0u64;
        for (k, uf) in self.user_flows.iter().enumerate() {
            let ps = self.user_flow_paths(*uf);
            let j = self.energy_j(end, ps.iter().copied());
            let bytes = flows[k]["bytes_delivered"].as_u64().unwrap_or(0);
            bytes_all += bytes;
            if let Some(o) = flows[k].as_object_mut() {
                o.insert("energy_j".into(), json_f(j));
                o.insert("nj_per_bit".into(), json_f(nj_per_bit(j, bytes)));
            }
        }
        json!({
            "total_j": json_f(total),
            "mean_power_mw": json_f(total / end.secs_f64().max(1e-12) * 1e3),
            "nj_per_bit": json_f(nj_per_bit(total, bytes_all)),
            "radios": radios,
            "host": host.unwrap_or(Value::Null),
        })
    }
}

/// NaN (nothing metered) is written as null.
fn json_f(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}
