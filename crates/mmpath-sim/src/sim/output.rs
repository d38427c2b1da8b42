//! What a run produces: the timeline sampled every `timeline.sample_ms` while it runs, and at
//! the end summary.json (flows, MPTCP connections, paths, energy, the oracle's verdicts from
//! sim/oracle.rs), intervals.csv and each path's channel log.

use super::{PathState, Simulation, UserFlow, INTERVAL};
use crate::link::trace as chtrace;
use crate::link::Link;
use crate::scenario::{AppKind, Direction, FlowKind};
use crate::tcp::cc::INFINITE_SSTHRESH;
use crate::time::Time;
use crate::trace::{EventCols, IntervalCols, TimelineCols, TimelineRow};
use serde_json::{json, Value};

impl Simulation {
    pub(super) fn sample(&mut self, now: Time) {
        for f in self.flows.iter() {
            let h = f.path_hop();
            let (queue, rate, up) = (self.hop_queue_bytes(h), self.hop_rate_bps(h), self.hop_up(h));
            let (subflow, sf_state, scheduled_bytes) = match f.conn {
                Some((c, j)) => {
                    let st = &self.conns[c as usize].subs[j as usize];
                    (j as i32, st.state_code(), st.scheduled_bytes)
                }
                None => (-1, -1, 0),
            };
            let mut row = TimelineRow {
                t_s: now.secs_f64(),
                flow: f.owner as i32,
                path: f.path as i32,
                cwnd_bytes: f64::NAN,
                ssthresh_bytes: f64::NAN,
                srtt_ms: f64::NAN,
                rttvar_ms: f64::NAN,
                in_flight_bytes: f64::NAN,
                rwnd_bytes: f64::NAN,
                cc_state: -1,
                queue_bytes: queue as f64,
                phy_rate_mbps: rate as f64 / 1e6,
                mcs: self.paths[f.path as usize].mcs,
                rssi_dbm: self.paths[f.path as usize].rssi_dbm,
                snr_db: self.paths[f.path as usize].snr_db,
                link_up: up,
                delivered_bytes: f.counters.delivered_bytes,
                retransmits: 0,
                subflow,
                sf_state,
                scheduled_bytes,
                sched_metric: f64::NAN,
                energy_j: self.energy_j(now, std::iter::once(f.path)),
            };
            if let (Some(s), Some(r)) = (&f.sender, &f.receiver) {
                let mss = s.mss() as f64;
                row.cwnd_bytes = s.w.cwnd as f64 * mss;
                row.ssthresh_bytes =
                    if s.w.ssthresh >= INFINITE_SSTHRESH { f64::NAN } else { s.w.ssthresh as f64 * mss };
                row.srtt_ms = s.rtt.srtt().map_or(f64::NAN, |t| t.ms_f64());
                row.rttvar_ms = s.rtt.srtt().map_or(f64::NAN, |_| s.rtt.rttvar().ms_f64());
                row.retransmits = s.stats.retransmits;
                row.in_flight_bytes = s.in_flight() as f64 * mss;
                row.rwnd_bytes = r.last_rwnd as f64;
                row.cc_state = s.state as i8;
            }
            self.timeline.push(row);
        }
        for c in 0..self.conns.len() {
            let mut row = self.conn_row(now, c);
            let ps = self.conns[c].subs.iter().map(|st| self.flows[st.flow as usize].path);
            row.energy_j = self.energy_j(now, ps);
            self.timeline.push(row);
        }
    }

    /// Timeline rows the run records per simulated second (a row per flow, subflow and MPTCP
    /// connection each sample): how far a caller may run before taking a chunk of a given size.
    pub fn timeline_rows_per_s(&self) -> f64 {
        (self.flows.len() + self.conns.len()) as f64 / self.sample_every.secs_f64()
    }

    /// Hands out what the run recorded since the last call: the timeline's rows, the interval
    /// bins that have ended (every bin once the run is at its end), the link events. A caller
    /// that writes each chunk away keeps the run's memory bounded by its state, not its length
    /// (issue 26); the chunks put together are exactly what one call at the end returns.
    pub fn drain(&mut self) -> OutputChunk {
        let upto = if self.now() >= self.end { usize::MAX } else { (self.now().ns() / INTERVAL.ns()) as usize };
        OutputChunk {
            timeline: self.timeline.take(),
            intervals: self.take_intervals(upto),
            events: std::mem::take(&mut self.events),
        }
    }

    /// Interval rows of the bins before `upto` not yet handed out: per bin, per user flow (an
    /// MPTCP connection's own row, then its subflows').
    fn take_intervals(&mut self, upto: usize) -> IntervalCols {
        let mut intervals = IntervalCols::default();
        let Some(first) = self.flows.first().map(|f| f.bins.first()) else { return intervals };
        let upto = upto.min(self.flows[0].bins.count());
        for b in first..upto {
            for uf in &self.user_flows {
                let mut row = |flow: u16, sub: i32, path: i32, bytes: u64| {
                    intervals.t_s.push(b as f64 * INTERVAL.secs_f64());
                    intervals.flow.push(flow as i32);
                    intervals.subflow.push(sub);
                    intervals.path.push(path);
                    intervals.bytes.push(bytes);
                };
                match *uf {
                    UserFlow::Single(i) => {
                        let f = &self.flows[i as usize];
                        row(f.owner, -1, f.path as i32, f.bins.get(b));
                    }
                    UserFlow::Conn(c) => {
                        let cn = &self.conns[c as usize];
                        row(cn.owner, -1, -1, cn.bins.get(b));
                        for (j, st) in cn.subs.iter().enumerate() {
                            let f = &self.flows[st.flow as usize];
                            row(cn.owner, j as i32, f.path as i32, f.bins.get(b));
                        }
                    }
                }
            }
        }
        for f in self.flows.iter_mut() {
            f.bins.take_until(upto);
        }
        for c in self.conns.iter_mut() {
            c.bins.take_until(upto);
        }
        intervals
    }

    /// Runs to the end (if not there yet) and returns the results.
    pub fn finish(&mut self) -> RunOutput {
        self.run_to_end();
        self.finished = true;
        let duration_s = self.end.secs_f64();
        let mut flows = Vec::new();
        let mut checks = Vec::new();
        let mut all_ok = true;
        let mut check = |flow: &str, name: &str, ok: bool, detail: String, checks: &mut Vec<Value>| {
            all_ok &= ok;
            checks.push(json!({"flow": flow, "check": name, "ok": ok, "detail": detail}));
        };
        let mut sub_values: Vec<Option<Value>> = vec![None; self.flows.len()];
        for (i, f) in self.flows.iter().enumerate() {
            let c = &f.counters;
            let window_s = (f.stop.saturating_sub(f.start)).secs_f64().max(1e-9);
            let goodput_mbps = c.goodput_bytes as f64 * 8.0 / window_s / 1e6;
            let kind = if f.kind == FlowKind::Tcp { "tcp" } else { "udp" };
            let in_network = self.check_flow(i, &mut check, &mut checks);
            let mut v = json!({
                "name": f.name,
                "kind": kind,
                "app": match f.app_kind { AppKind::Bulk => "bulk", AppKind::Rate => "rate", AppKind::Cbr => "cbr" },
                "direction": match f.direction { Direction::Download => "download", Direction::Upload => "upload" },
                "path": self.paths[f.path as usize].name,
                "start_s": f.start.secs_f64(),
                "stop_s": f.stop.secs_f64(),
                "goodput_mbps": goodput_mbps,
            });
            let m = v.as_object_mut().expect("object");
            if f.ack_path != f.path {
                m.insert("ack_path".into(), json!(self.paths[f.ack_path as usize].name));
            }
            if let Some(t) = f.reset_at {
                m.insert("reset_s".into(), json!(t.secs_f64()));
            }
            if let (Some(s), Some(r)) = (&f.sender, &f.receiver) {
                let delivered = r.check.delivered;
                let h = &s.stats.rtt_ms;
                let data_pkts = c.data_sent.max(1);
                m.insert("cc".into(), json!(s.cc_name()));
                m.insert("bytes_delivered".into(), json!(delivered));
                m.insert("bytes_sent".into(), json!(s.stats.bytes_sent));
                m.insert("packets_sent".into(), json!(c.data_sent));
                m.insert("packets_dropped".into(), json!(c.data_dropped));
                m.insert("acks_dropped".into(), json!(c.acks_dropped));
                m.insert("retransmits".into(), json!(s.stats.retransmits));
                m.insert("fast_recoveries".into(), json!(s.stats.fast_recoveries));
                m.insert("rto_count".into(), json!(s.stats.rtos));
                m.insert("tlp_probes".into(), json!(s.stats.tlp_probes));
                m.insert("cwnd_idle_restarts".into(), json!(s.stats.idle_restarts));
                m.insert("cwnd_app_limited_cuts".into(), json!(s.stats.app_limited_reductions));
                m.insert("loss_pct".into(), json!(100.0 * c.data_dropped as f64 / data_pkts as f64));
                m.insert("duplicate_bytes".into(), json!(r.check.duplicate_bytes));
                m.insert("mss_bytes".into(), json!(f.mss));
                m.insert(
                    "rtt_ms".into(),
                    json!({"mean": h.mean(), "p95": h.quantile(0.95), "min": h.min(), "max": h.max(), "samples": h.count()}),
                );
                m.insert("final_cwnd_bytes".into(), json!(s.w.cwnd as u64 * s.mss() as u64));
            } else {
                let sent = c.data_sent;
                let lost = c.data_dropped;
                m.insert("cc".into(), Value::Null);
                m.insert("bytes_delivered".into(), json!(c.udp_bytes_received));
                m.insert("packets_sent".into(), json!(sent));
                m.insert("packets_received".into(), json!(c.data_arrived));
                m.insert("packets_lost".into(), json!(lost));
                m.insert("packets_in_flight_at_end".into(), json!(in_network));
                m.insert("retransmits".into(), json!(0));
                m.insert("jitter_ms".into(), json!(c.udp_jitter_ns / 1e6));
                // One-way delay, send to arrival (what a latency probe reads; capacity.py).
                m.insert(
                    "delay_ms".into(),
                    match c.udp_transit_min_ns {
                        Some(min) => json!({
                            "mean": c.udp_transit_sum_ns / c.data_arrived.max(1) as f64 / 1e6,
                            "min": min as f64 / 1e6,
                            "max": c.udp_transit_max_ns as f64 / 1e6,
                        }),
                        None => Value::Null,
                    },
                );
                // Lost over what had a chance to arrive (datagrams still in flight at the end
                // are neither delivered nor lost).
                let settled = (sent - in_network).max(1);
                m.insert("loss_pct".into(), json!(100.0 * lost as f64 / settled as f64));
                m.insert("rtt_ms".into(), Value::Null);
            }
            sub_values[i] = Some(v);
        }
        for uf in &self.user_flows {
            match *uf {
                UserFlow::Single(i) => flows.push(sub_values[i as usize].take().expect("each flow once")),
                UserFlow::Conn(c) => {
                    let subs: Vec<Value> = self.conns[c as usize]
                        .subs
                        .iter()
                        .map(|st| sub_values[st.flow as usize].take().expect("each subflow once"))
                        .collect();
                    flows.push(self.conn_summary(c, subs, &mut check, &mut checks));
                }
            }
        }
        let mut paths: Vec<Value> = self.paths.iter().map(|p| self.path_summary(p)).collect();
        let energy = self.energy_summary(&mut flows, &mut paths);
        let summary = json!({
            "sim_s": duration_s,
            "events": self.q.processed(),
            "flows": flows,
            "paths": paths,
            "energy": energy,
            "invariants": {"ok": all_ok, "checks": checks},
        });

        let rest = self.drain();
        RunOutput {
            summary,
            intervals: rest.intervals,
            timeline: rest.timeline,
            events: rest.events,
            channel_csv: self
                .paths
                .iter()
                .map(|p| {
                    // The record lasts the whole run: a last row at the run's end (only `t_s`)
                    // makes that its period, so a replay with the default `loop = true` does not
                    // start over at the last change (docs/traces.md, CSV `period`).
                    let mut log = p.channel_log.clone();
                    if log.last().is_some_and(|s| s.at < self.end) {
                        log.push(chtrace::TraceStep::new(self.end, chtrace::ChannelState::default()));
                    }
                    let mut buf = Vec::new();
                    chtrace::write_csv(&mut buf, &log).expect("writing to memory");
                    (p.name.clone(), String::from_utf8(buf).expect("csv is utf-8"))
                })
                .collect(),
            flow_names: self.sc.flow.iter().map(|f| f.name.clone().unwrap_or_default()).collect(),
            path_names: self.paths.iter().map(|p| p.name.clone()).collect(),
            ok: all_ok,
        }
    }

    fn path_summary(&self, p: &PathState) -> Value {
        let span = self.end.ns().max(1) as f64;
        // Each direction's link reports its totals (the downlink's, then the uplink's).
        let mut v = Value::Object(Default::default());
        let o = v.as_object_mut().expect("object");
        for (h, dir) in p.hops.iter().zip(["down", "up"]) {
            self.links[h.link as usize].summarize(h.port as usize, dir, span, o);
        }
        if p.radio.is_some() {
            o.insert("rssi_dbm".into(), json!(p.rssi_dbm));
        }
        o.insert("name".into(), json!(p.name));
        o.insert("rate_mbps".into(), json!(p.base_down_bps as f64 / 1e6));
        o.insert("uplink_rate_mbps".into(), json!(p.base_up_bps as f64 / 1e6));
        o.insert("mtu_bytes".into(), json!(p.mtu));
        v
    }
}

/// What a run recorded over a stretch of it (`Simulation::drain`).
pub struct OutputChunk {
    pub timeline: TimelineCols,
    pub intervals: IntervalCols,
    pub events: EventCols,
}

/// Everything a run produces; its intervals, timeline and events are those not yet handed out
/// by `Simulation::drain` (all of them when it was never called).
pub struct RunOutput {
    pub summary: Value,
    pub intervals: IntervalCols,
    pub timeline: TimelineCols,
    pub events: EventCols,
    /// Per path (name, the channel as it happened in mmpath's trace CSV format).
    pub channel_csv: Vec<(String, String)>,
    pub flow_names: Vec<String>,
    pub path_names: Vec<String>,
    pub ok: bool,
}
