//! A connection's outputs (sim/output.rs and sim/oracle.rs call these): its timeline row
//! (subflow -1: delivered bytes, reorder buffer, scheduler metric) and its summary.json entry,
//! with its subflows' MPTCP columns and the connection-level checks of the correctness oracle
//! (mptcp-data-stream, interval-accounting).

use super::CheckFn;
use crate::scenario::{AppKind, Direction, Kernel, MptcpMode};
use crate::sim::Simulation;
use crate::time::Time;
use crate::trace::TimelineRow;
use serde_json::{json, Value};

impl Simulation {
    // ----- outputs -----

    /// The connection's timeline row (subflow -1): its delivered bytes, reorder buffer and
    /// scheduler state.
    pub(in crate::sim) fn conn_row(&self, now: Time, c: usize) -> TimelineRow {
        let cn = &self.conns[c];
        TimelineRow {
            t_s: now.secs_f64(),
            flow: cn.owner as i32,
            path: -1,
            cwnd_bytes: f64::NAN,
            ssthresh_bytes: f64::NAN,
            srtt_ms: f64::NAN,
            rttvar_ms: f64::NAN,
            in_flight_bytes: (cn.data_nxt - cn.data_una.min(cn.data_nxt)) as f64,
            rwnd_bytes: cn.rx.window().saturating_sub(cn.rx.ooo_bytes) as f64,
            cc_state: -1,
            queue_bytes: cn.rx.ooo_bytes as f64,
            phy_rate_mbps: f64::NAN,
            mcs: f64::NAN,
            rssi_dbm: f64::NAN,
            snr_db: f64::NAN,
            link_up: true,
            delivered_bytes: cn.delivered_bytes,
            retransmits: cn.stats.reinjections,
            subflow: -1,
            sf_state: -1,
            scheduled_bytes: cn.data_nxt,
            sched_metric: cn.sched.metric(),
            energy_j: f64::NAN,
        }
    }

    /// The connection's entry in summary.json, with its subflows' entries and its oracle.
    pub(in crate::sim) fn conn_summary(
        &self,
        c: u16,
        subs: Vec<Value>,
        check: &mut CheckFn<'_>,
        checks: &mut Vec<Value>,
    ) -> Value {
        let cn = &self.conns[c as usize];
        let window_s = (cn.info.stop.saturating_sub(cn.info.start)).secs_f64().max(1e-9);
        let goodput_mbps = cn.goodput_bytes as f64 * 8.0 / window_s / 1e6;
        // The connection-level byte stream: every data byte once and in order, never beyond
        // what was sent, never beyond the window.
        let ok = cn.rx.data_ack == cn.delivered_bytes
            && cn.rx.data_ack <= cn.data_nxt
            && cn.data_una <= cn.rx.data_ack
            && cn.rx.beyond_window_bytes == 0
            && cn.rx.ooo_ranges().iter().all(|&(s, e)| s > cn.rx.data_ack && e <= cn.data_nxt);
        check(
            &cn.info.name,
            "mptcp-data-stream",
            ok,
            format!(
                "receiver got data [0, {}) once, in order; sender assigned {} and saw {} data-ACKed; {} bytes beyond the window",
                cn.rx.data_ack, cn.data_nxt, cn.data_una, cn.rx.beyond_window_bytes
            ),
            checks,
        );
        let binned = cn.bins.total();
        check(
            &cn.info.name,
            "interval-accounting",
            binned == cn.delivered_bytes,
            format!("interval bins sum to {binned} of {} delivered data bytes", cn.delivered_bytes),
            checks,
        );
        let mut retransmits = 0u64;
        let mut subs = subs;
        for (j, v) in subs.iter_mut().enumerate() {
            let st = &cn.subs[j];
            retransmits += v["retransmits"].as_u64().unwrap_or(0);
            let o = v.as_object_mut().expect("object");
            o.insert("subflow".into(), json!(j));
            o.insert("backup".into(), json!(st.backup));
            o.insert("established_s".into(), json!(st.established_at.map(|t| t.secs_f64())));
            o.insert("scheduled_bytes".into(), json!(st.scheduled_bytes));
            o.insert("reinjected_bytes".into(), json!(st.reinjected_bytes));
            o.insert("share".into(), json!(st.scheduled_bytes as f64 / cn.data_nxt.max(1) as f64));
        }
        // The connection's RTT samples are all its subflows' (the first subflow's alone hid a
        // slower path's queue).
        let mut rtt = crate::trace::LogHistogram::default();
        for st in &cn.subs {
            if let Some(snd) = self.flows[st.flow as usize].sender.as_ref() {
                rtt.merge(&snd.stats.rtt_ms);
            }
        }
        let s = &cn.stats;
        let mut entry = json!({
            "name": cn.info.name,
            "kind": "mptcp",
            "app": match cn.info.app_kind { AppKind::Bulk => "bulk", AppKind::Rate => "rate", AppKind::Cbr => "cbr" },
            "direction": match cn.info.direction { Direction::Download => "download", Direction::Upload => "upload" },
            "path": subs.first().and_then(|v| v["path"].as_str()).unwrap_or(""),
            "start_s": cn.info.start.secs_f64(),
            "stop_s": cn.info.stop.secs_f64(),
            "goodput_mbps": goodput_mbps,
            "bytes_delivered": cn.delivered_bytes,
            // The data level's two ends beside what the application got: the bytes the sender
            // gave data sequence numbers (sent at least once) and the receiver's data ACK (its
            // in-order data), so a byte-stream check outside the oracle can compare them as it
            // compares the kernel's counts and captures (x-pm's `intact`).
            "data_sent_bytes": cn.data_nxt,
            "data_received_bytes": cn.rx.data_ack,
            "cc": cn.info.cc.name(),
            "coupled": cn.info.coupled.name(),
            "scheduler": cn.sched.name(),
            "mode": match cn.info.mode { MptcpMode::Fullmesh => "fullmesh", MptcpMode::Backup => "backup" },
            "kernel": match cn.info.kernel { Kernel::V09x => "linux-v0.9x", Kernel::Upstream => "linux-upstream" },
            "retransmits": retransmits,
            "reinjections": s.reinjections,
            "reinjected_bytes": s.reinjected_bytes,
            "opportunistic_retransmits": s.opportunistic_retransmits,
            "penalizations": s.penalizations,
            "redundant_bytes": s.redundant_bytes,
            "scheduler_decisions": s.decisions,
            "duplicate_bytes": cn.rx.duplicate_bytes,
            "max_reorder_bytes": cn.rx.max_ooo_bytes,
            "loss_pct": subs.iter().map(|v| v["loss_pct"].as_f64().unwrap_or(0.0)).fold(0.0, f64::max),
            "rtt_ms": json!({"mean": rtt.mean(), "p95": rtt.quantile(0.95), "min": rtt.min(), "max": rtt.max(), "samples": rtt.count()}),
            "subflows": subs,
        });
        // Only with a userspace path manager: the in-kernel one's entry stays as it was.
        if let Some((policy, pm)) = cn.pm_summary() {
            entry["path_manager"] = json!({
                "policy": policy,
                "subflows_created": pm.subflows_created,
                "subflows_closed": pm.subflows_closed,
                "backup_changes": pm.backup_changes,
                "refused": pm.refused,
            });
        }
        entry
    }
}
