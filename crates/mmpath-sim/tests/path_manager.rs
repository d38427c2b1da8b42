//! The path-manager policies in whole runs (docs/path-manager.md "Policies"): a dual-path MPTCP
//! backup-mode download over wired paths (200 Mbit/s primary, 50 Mbit/s backup), the primary
//! cut for 5 s (a dropping outage: what is queued or sent while it is down is lost) and
//! restored. For each policy: how long the backup takes to carry the traffic after the cut,
//! and how long the primary takes to carry traffic again after it is back.
//!
//! `cargo test --release -p mmpath-sim --test path_manager -- --nocapture` prints the table.

use mmpath_sim::Simulation;

const CUT_S: f64 = 5.0;
const BACK_S: f64 = 10.0;

fn scenario(pm: &str, kernel: &str, drop: bool) -> String {
    format!(
        r#"{{"name":"pm","duration_s":15.0,"backbone":{{"enabled":false}},"timeline":{{"sample_ms":1}},
        "path":[{{"name":"primary","rate_mbps":200.0,"delay_ms":5.0,
                  "schedule":[{{"t_s":{CUT_S},"up":false,"drop":{drop}}},{{"t_s":{BACK_S},"up":true}}]}},
                {{"name":"backup","rate_mbps":50.0,"delay_ms":10.0}}],
        "flow":[{{"name":"dl","kind":"mptcp","mode":"backup","kernel":"{kernel}","path_manager":"{pm}"}}]}}"#
    )
}

/// What a run shows, in seconds after the cut (backup) or the return (primary): the first
/// data the path delivers, and the end of its first 100 ms carrying at least half its rate.
struct Times {
    over: Option<f64>,
    over_full: Option<f64>,
    back: Option<f64>,
    back_full: Option<f64>,
    goodput: f64,
}

fn measure(pm: &str, kernel: &str) -> Times {
    measure_outage(pm, kernel, true)
}

fn measure_outage(pm: &str, kernel: &str, drop: bool) -> Times {
    let mut sim = Simulation::from_json(&scenario(pm, kernel, drop), 1).expect("valid scenario");
    let out = sim.finish();
    let failed: Vec<&serde_json::Value> = out.summary["invariants"]["checks"]
        .as_array()
        .map(|v| v.iter().filter(|c| c["ok"] == false).collect())
        .unwrap_or_default();
    assert!(out.ok, "{pm} {kernel} drop={drop}: the oracle failed: {failed:?}");
    let tl = &out.timeline;
    // The subflows' delivered bytes per path, summed at each sample (subflow rows only).
    let mut t = Vec::new();
    let mut on = [Vec::new(), Vec::new()];
    for i in 0..tl.t_s.len() {
        if tl.subflow[i] < 0 {
            continue;
        }
        if t.last() != Some(&tl.t_s[i]) {
            t.push(tl.t_s[i]);
            on[0].push(0u64);
            on[1].push(0u64);
        }
        *on[tl.path[i] as usize].last_mut().unwrap() += tl.delivered_bytes[i];
    }
    // The first sample after `from` at which path `p` has delivered more than at `from`.
    let first_rise = |p: usize, from: f64| {
        let k0 = t.iter().position(|&x| x >= from)?;
        (k0..t.len()).find(|&k| on[p][k] > on[p][k0]).map(|k| t[k] - from)
    };
    // The first sample after `from` from which path `p` delivers half of `mbps` in 100 ms
    // (samples are 1 ms apart).
    let sustained = |p: usize, from: f64, mbps: f64| {
        let k0 = t.iter().position(|&x| x >= from)?;
        let half = (0.5 * mbps * 1e6 / 8.0 * 0.1) as u64;
        (k0..t.len().saturating_sub(100)).find(|&k| on[p][k + 100] - on[p][k] >= half).map(|k| t[k + 100] - from)
    };
    Times {
        over: first_rise(1, CUT_S),
        over_full: sustained(1, CUT_S, 50.0),
        back: first_rise(0, BACK_S),
        back_full: sustained(0, BACK_S, 200.0),
        goodput: out.summary["flows"][0]["goodput_mbps"].as_f64().unwrap(),
    }
}

fn secs(x: Option<f64>) -> String {
    x.map_or("never".into(), |v| format!("{v:.3}"))
}

#[test]
fn policies_against_a_five_second_primary_cut() {
    let mut rows = Vec::new();
    println!(
        "kernel          policy             backup: first / half-rate   primary back: first / half-rate   goodput"
    );
    for kernel in ["linux-upstream", "linux-v0.9x"] {
        for pm in ["kernel", "fast-failback", "link-aware-backup", "recreate"] {
            let m = measure(pm, kernel);
            println!(
                "{kernel:15} {pm:18} {:>7} / {:>7} s           {:>7} / {:>7} s             {:.1} Mbit/s",
                secs(m.over),
                secs(m.over_full),
                secs(m.back),
                secs(m.back_full),
                m.goodput
            );
            rows.push((kernel, pm, m.over, m.back));
        }
    }
    let get = |k: &str, p: &str| rows.iter().find(|r| r.0 == k && r.1 == p).map(|r| (r.2, r.3)).unwrap();
    for kernel in ["linux-upstream", "linux-v0.9x"] {
        let (_, kernel_back) = get(kernel, "kernel");
        let (_, ff_back) = get(kernel, "fast-failback");
        let ff = ff_back.expect("fast-failback: the primary carries traffic again");
        // The fresh subflow's MP_JOIN takes a round trip and a half on the primary (~15 ms).
        assert!(ff < 0.5, "{kernel}: fast-failback back after {ff} s");
        // fast-failback withdraws the cut path's address at the cut: its data goes to the
        // backup at once, arriving one backup one-way delay (10 ms) and a few segments later,
        // before the kernel's own failover (the connection timer or the first RTO).
        let (ff_over, _) = get(kernel, "fast-failback");
        let (k_over, _) = get(kernel, "kernel");
        let ffo = ff_over.expect("fast-failback: the backup takes over");
        assert!(ffo < 0.05 && k_over.is_none_or(|k| k > ffo), "{kernel}: {ffo} vs kernel {k_over:?}");
        // The kernel's own path manager waits for the old subflow's backed-off RTO.
        assert!(kernel_back.is_none_or(|k| k > 1.0), "{kernel}: kernel PM back after {kernel_back:?} s");
        // link-aware-backup's MP_PRIO reaches the server over the backup and only sets the
        // flag there (mptcp/connection/mp_prio.rs): the data stuck on the primary moves at the
        // sender's next retransmission, never later than with the kernel's path manager. On
        // upstream that is the connection timer's first firing, which resends on a regular
        // subflow at once where the backup waits for "no progress anywhere" (stale.rs): before
        // the kernel's own failover. v0.9x resends at the primary's RTO either way.
        let (law_over, _) = get(kernel, "link-aware-backup");
        let (k_over, _) = get(kernel, "kernel");
        let law = law_over.expect("link-aware-backup: the backup takes over");
        assert!(k_over.is_none_or(|k| k >= law), "{kernel}: {law} vs kernel {k_over:?}");
        if kernel == "linux-upstream" {
            assert!(k_over.is_none_or(|k| k > law), "{kernel}: {law} vs kernel {k_over:?}");
        }
    }
}

/// A holding outage (the queue waits for the link): every policy's run keeps the oracle
/// (`measure_outage` checks it): data reaching a subflow after the path manager closed it is
/// counted as arrived (and dropped by its host). The link keeps its carrier through it (a paused
/// interface, as the emulator's hold is), so the policies that act on link events hear none
/// and run as the in-kernel path manager does.
#[test]
fn a_holding_outage_keeps_the_oracle_and_the_carrier() {
    for kernel in ["linux-upstream", "linux-v0.9x"] {
        let base = measure_outage("kernel", kernel, false);
        for pm in ["kernel", "fast-failback", "link-aware-backup", "recreate"] {
            let m = measure_outage(pm, kernel, false);
            println!("hold {kernel:15} {pm:18} backup {} s, primary back {} s", secs(m.over), secs(m.back));
            if pm == "fast-failback" || pm == "link-aware-backup" {
                assert_eq!((m.over, m.back, m.goodput), (base.over, base.back, base.goodput), "{kernel} {pm}");
            }
        }
    }
}
