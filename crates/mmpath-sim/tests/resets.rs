//! A schedule step's `reset` in whole runs (docs/scenario.md): a middlebox on a wired path
//! resets every TCP connection crossing it at one instant, and the path stays up.
//!
//! - A backup-mode MPTCP download whose primary (the MP_CAPABLE subflow's path) is reset: the
//!   connection goes on over the backup; the in-kernel path manager never puts a subflow on the
//!   primary again (pm_kernel.c gives an endpoint back only when it is removed), `recreate`
//!   opens one after its first backoff (1 s) and the primary carries again.
//! - A single-path TCP flow on the reset path is aborted (`reset_s` in its summary) and a flow
//!   starting on that path afterwards runs.

use mmpath_sim::Simulation;

const RESET_S: f64 = 6.0;

fn mptcp(pm: &str) -> String {
    format!(
        r#"{{"name":"reset","duration_s":10.0,"backbone":{{"enabled":false}},"timeline":{{"sample_ms":1}},
        "path":[{{"name":"primary","rate_mbps":100.0,"delay_ms":5.0,"schedule":[{{"t_s":{RESET_S},"reset":true}}]}},
                {{"name":"backup","rate_mbps":50.0,"delay_ms":10.0}}],
        "flow":[{{"name":"dl","kind":"mptcp","mode":"backup","kernel":"linux-upstream","path_manager":"{pm}"}}]}}"#
    )
}

fn run(json: &str) -> mmpath_sim::RunOutput {
    let mut sim = Simulation::from_json(json, 1).expect("valid scenario");
    let out = sim.finish();
    let failed: Vec<&serde_json::Value> = out.summary["invariants"]["checks"]
        .as_array()
        .map(|v| v.iter().filter(|c| c["ok"] == false).collect())
        .unwrap_or_default();
    assert!(out.ok, "the oracle failed: {failed:?}");
    out
}

/// Bytes the subflows on path `p` delivered in [a, b) (from the 1 ms timeline).
fn delivered(out: &mmpath_sim::RunOutput, p: i32, a: f64, b: f64) -> u64 {
    let tl = &out.timeline;
    let at = |t: f64| -> u64 {
        (0..tl.t_s.len())
            .filter(|&i| tl.subflow[i] >= 0 && tl.path[i] == p && (tl.t_s[i] - t).abs() < 5e-4)
            .map(|i| tl.delivered_bytes[i])
            .sum()
    };
    at(b) - at(a)
}

#[test]
fn a_reset_primary_moves_the_connection_to_the_backup_and_only_recreate_brings_it_back() {
    let kernel = run(&mptcp("kernel"));
    let recreate = run(&mptcp("recreate"));
    for out in [&kernel, &recreate] {
        let subs = out.summary["flows"][0]["subflows"].as_array().unwrap();
        assert_eq!(subs[0]["reset_s"].as_f64(), Some(RESET_S), "the MP_CAPABLE subflow was reset");
        assert!(subs[1].get("reset_s").is_none(), "the backup's subflow was not");
        // Before the reset the primary carries (backup mode); right after, the backup does.
        assert!(delivered(out, 0, 5.0, 6.0) > 8_000_000, "primary before");
        assert!(delivered(out, 1, 6.2, 7.0) > 3_000_000, "backup at once after the reset");
    }
    // The in-kernel path manager: the primary carries nothing after the reset.
    assert_eq!(delivered(&kernel, 0, RESET_S, 10.0), 0);
    assert_eq!(kernel.summary["flows"][0]["subflows"].as_array().unwrap().len(), 2);
    // recreate: a new subflow on the primary after 1 s, which carries again.
    let subs = recreate.summary["flows"][0]["subflows"].as_array().unwrap();
    assert_eq!(subs.len(), 3);
    assert_eq!(subs[2]["path"], "primary");
    let est = subs[2]["established_s"].as_f64().unwrap();
    assert!((RESET_S + 1.0..RESET_S + 1.1).contains(&est), "re-created at the first backoff: {est}");
    assert!(delivered(&recreate, 0, 8.0, 10.0) > 15_000_000, "the primary carries again");
    assert_eq!(recreate.summary["flows"][0]["path_manager"]["subflows_created"], 1);
}

#[test]
fn a_reset_aborts_a_tcp_flow_and_the_path_stays_usable() {
    let out = run(r#"{"name":"reset-tcp","duration_s":4.0,"backbone":{"enabled":false},
        "path":[{"name":"w","rate_mbps":20.0,"delay_ms":5.0,"schedule":[{"t_s":1.0,"reset":true}]}],
        "flow":[{"name":"a","path":"w"},{"name":"b","path":"w","start_s":2.0}]}"#);
    let flows = out.summary["flows"].as_array().unwrap();
    assert_eq!(flows[0]["reset_s"].as_f64(), Some(1.0));
    let a = flows[0]["bytes_delivered"].as_f64().unwrap();
    assert!(a > 1.0e6 && a < 2.6e6, "a carried until the reset only: {a}");
    assert!(flows[1].get("reset_s").is_none());
    let b = flows[1]["bytes_delivered"].as_f64().unwrap();
    assert!(b > 3.0e6, "b, started after the reset, ran: {b}");
}
