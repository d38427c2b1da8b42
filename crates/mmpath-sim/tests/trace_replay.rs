//! A run's recorded channel (`channel-<path>.csv`) replayed as a trace, and what a replayed trace
//! does to a path and to the run's records (docs/traces.md, docs/scenario.md `path.N.trace`).

use mmpath_sim::{RunOutput, Simulation};
use serde_json::Value;
use std::path::PathBuf;

fn run(json: &str, seed: u64) -> (Value, RunOutput) {
    let mut sim = Simulation::from_json(json, seed).expect("valid scenario");
    let out = sim.finish();
    (out.summary.clone(), out)
}

/// A scratch folder of this test's own (tests run in parallel).
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mmpath-trace-replay-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Bytes per (path, 100 ms bin), summed over the flows (and subflows) on each path.
fn per_path_bins(out: &RunOutput) -> Vec<(i32, u64, u64)> {
    let iv = &out.intervals;
    let mut v: Vec<(i32, u64, u64)> = Vec::new();
    for i in 0..iv.t_s.len() {
        if iv.path[i] < 0 {
            continue; // an MPTCP connection's own row
        }
        let bin = (iv.t_s[i] * 10.0).round() as u64;
        match v.iter_mut().find(|(p, b, _)| *p == iv.path[i] && *b == bin) {
            Some(e) => e.2 += iv.bytes[i],
            None => v.push((iv.path[i], bin, iv.bytes[i])),
        }
    }
    v.sort();
    v
}

fn link_events(out: &RunOutput) -> Vec<(f64, i8)> {
    let e = &out.events;
    (0..e.t_s.len()).filter(|&i| e.kind[i] != 2).map(|i| (e.t_s[i], e.kind[i])).collect()
}

fn write_channel(out: &RunOutput, path: usize, dir: &std::path::Path) -> PathBuf {
    let f = dir.join(format!("channel-{}.csv", out.channel_csv[path].0));
    std::fs::write(&f, &out.channel_csv[path].1).unwrap();
    f
}

/// A recorded channel lasts the whole run, so replaying it with the default `loop = true`
/// gives the same run. It used to end at its last change (here the link's return at 1.5 s of a
/// 3 s run), so the replay looped there and took the link down again at 2.5 s.
#[test]
fn recorded_channel_replays_to_the_same_run_with_the_default_loop() {
    let dir = scratch("wired");
    let base = r#"{"duration_s": 3, "path": [{"name": "w", "rate_mbps": 300, "mtu_bytes": 1500 PATH}],
                   "flow": [{"cc": "cubic"}]}"#;
    let sched =
        r#", "schedule": [{"t_s": 0.4, "rate_mbps": 150}, {"t_s": 1.0, "up": false}, {"t_s": 1.5, "up": true}]"#;
    let (s1, o1) = run(&base.replace("PATH", sched), 1);
    let rec = write_channel(&o1, 0, &dir);
    let text = std::fs::read_to_string(&rec).unwrap();
    assert!(text.trim_end().ends_with("\n3,,,,,,"), "the record ends at the run's end:\n{text}");
    let replay = format!(r#", "trace": {{"file": "{}"}}"#, rec.display());
    let (s2, o2) = run(&base.replace("PATH", &replay), 1);
    assert_eq!(link_events(&o2), link_events(&o1));
    assert_eq!(link_events(&o1), vec![(1.0, 0), (1.5, 1)]);
    assert_eq!(per_path_bins(&o2), per_path_bins(&o1));
    assert_eq!(s2["flows"][0]["bytes_delivered"], s1["flows"][0]["bytes_delivered"]);
    // And the replay records the same channel again.
    assert_eq!(o2.channel_csv[0].1, o1.channel_csv[0].1);
    std::fs::remove_dir_all(&dir).ok();
}

/// The `blockage` scenario's 11ad path: a blockage takes the 60 GHz link down and drops the
/// frames it held (the driver frees the station's ring); the record's `link_up = 0` does the
/// same when replayed on the radio path, so each path carries the same bytes in every 100 ms bin.
/// Before, a trace's link down on a radio path kept the queue, and the replayed subflow was
/// back at once where the original waited out its RTO (892 against 971 Mbit/s).
#[test]
fn radio_blockage_record_replays_to_the_same_throughput_over_time() {
    let dir = scratch("radio");
    let base = r#"{"duration_s": 8, "backbone": {"rate_mbps": 10000, "delay_ms": 0.5},
        "path": [{"name": "11ad", "technology": "11ad", "device": "panasonic-wigig", "mcs": 8,
                  "mtu_bytes": 7912, "signal": "strong" AD},
                 {"name": "11ac", "technology": "11ac", "bandwidth_mhz": 80, "streams": 2, "mcs": 9,
                  "mtu_bytes": 1500, "signal": "strong"}],
        "flow": [{"name": "download", "kind": "mptcp", "kernel": "linux-v0.9x"}]}"#;
    let blockage = r#", "event": [{"kind": "blockage", "t_s": 3.0, "duration_s": 1.5}]"#;
    let (s1, o1) = run(&base.replace("AD", blockage), 1);
    assert_eq!(link_events(&o1), vec![(3.0, 0), (5.0, 1)], "down at 3 s, back after 500 ms re-training");
    let rec = write_channel(&o1, 0, &dir);
    let replay = format!(r#", "trace": {{"file": "{}"}}"#, rec.display());
    let (s2, o2) = run(&base.replace("AD", &replay), 1);
    assert_eq!(link_events(&o2), link_events(&o1));
    assert_eq!(per_path_bins(&o2), per_path_bins(&o1));
    assert_eq!(s2["flows"][0]["bytes_delivered"], s1["flows"][0]["bytes_delivered"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A looping trace re-applies its steps every pass; only what changes is an event and a row of
/// the channel record. A one-line Mahimahi trace (one opportunity per ms, period 1 ms) used to
/// write a `rate` event and a channel row every millisecond.
#[test]
fn a_looping_trace_records_only_changes() {
    let dir = scratch("loop");
    let mm = dir.join("one.trace");
    std::fs::write(&mm, "1\n").unwrap();
    let wil = dir.join("one.csv");
    std::fs::write(&wil, "time_ms,mcs,status\n0,9,connected\n").unwrap();
    let json = format!(
        r#"{{"duration_s": 2,
            "path": [{{"name": "a", "rate_mbps": 100, "trace": {{"file": "{}", "format": "mahimahi"}}}},
                     {{"name": "b", "rate_mbps": 100, "trace": {{"file": "{}", "format": "wil6210"}}}}],
            "flow": [{{"kind": "udp", "rate_mbps": 5, "path": "a"}}, {{"kind": "udp", "rate_mbps": 5, "path": "b"}}]}}"#,
        mm.display(),
        wil.display()
    );
    let (s, out) = run(&json, 1);
    assert_eq!(s["invariants"]["ok"], true);
    assert_eq!(out.events.t_s.len(), 1, "one rate event, at 0 s (100 -> 12.032 Mbit/s on path a)");
    let rows = |i: usize| out.channel_csv[i].1.lines().skip(2).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(rows(0), vec!["0,12.032,,1,,,", "2,,,,,,"]);
    assert_eq!(rows(1), vec!["0,100,9,1,,,", "2,,,,,,"]);
    std::fs::remove_dir_all(&dir).ok();
}

fn radio_with_trace(file: &std::path::Path, format: &str) -> String {
    format!(
        r#"{{"duration_s": 3, "path": [{{"technology": "11ad", "device": "panasonic-wigig", "mcs": 8,
             "mtu_bytes": 7912, "signal": "strong", "trace": {{"file": "{}", "format": "{format}", "loop": false}}}}],
            "flow": [{{"kind": "udp", "rate_mbps": 3000}}]}}"#,
        file.display()
    )
}

/// A radio path's rate follows its MCS: a capacity trace cannot drive it. It used to be
/// accepted and ignored, while the channel record and the events showed the trace's rates as
/// if they had applied.
#[test]
fn a_rate_trace_on_a_radio_path_is_refused() {
    let dir = scratch("radio-rate");
    let f = dir.join("cap.csv");
    std::fs::write(&f, "t_s,rate_mbps\n0,50\n1,20\n2,\n").unwrap();
    let e = Simulation::from_json(&radio_with_trace(&f, "csv"), 1).err().expect("refused").to_string();
    assert!(e.starts_with("path.0.trace.file: "), "{e}");
    assert!(e.contains("cap.csv") && e.contains("rate") && e.contains("radio path"), "{e}");
    assert!(e.contains("allowed"), "{e}");
    let mm = dir.join("cap.trace");
    std::fs::write(&mm, "1\n2\n").unwrap();
    assert!(Simulation::from_json(&radio_with_trace(&mm, "mahimahi"), 1).is_err());
    std::fs::remove_dir_all(&dir).ok();
}

/// A radio path has the 802.11 model a trace's MCS acts through (docs/scenario.md: "a trace may
/// set its link status, MCS and RSSI"); an MCS-only trace used to be refused there with "needs
/// the 802.11 path model, which a fixed-rate path does not have".
#[test]
fn an_mcs_trace_drives_a_radio_path() {
    let dir = scratch("radio-mcs");
    let f = dir.join("mcs.csv");
    std::fs::write(&f, "t_s,mcs\n0,8\n1,2\n2,8\n3,\n").unwrap();
    let (s, out) = run(&radio_with_trace(&f, "csv"), 1);
    assert_eq!(s["invariants"]["ok"], true);
    let mbps = |lo: f64, hi: f64| -> f64 {
        let iv = &out.intervals;
        let b: u64 = (0..iv.t_s.len()).filter(|&i| iv.t_s[i] >= lo && iv.t_s[i] < hi).map(|i| iv.bytes[i]).sum();
        b as f64 * 8.0 / (hi - lo) / 1e6
    };
    let (high, low) = (mbps(0.2, 1.0), mbps(1.2, 2.0));
    // SC MCS 2 is 770 Mbit/s of PHY rate against MCS 8's 2310.
    assert!(low < 0.5 * high && low > 100.0, "MCS 8: {high} Mbit/s, MCS 2: {low} Mbit/s");
    let t = &out.timeline;
    let at = |x: f64| t.mcs[t.t_s.iter().position(|&v| v >= x).unwrap()];
    assert_eq!((at(0.5), at(1.5), at(2.5)), (8.0, 2.0, 8.0));
    // A trace that acts on nothing a radio path has (the sector alone) is still refused.
    let g = dir.join("sector.csv");
    std::fs::write(&g, "time_ms,mcs,sector\n0,NaN,3\n").unwrap();
    let e = Simulation::from_json(&radio_with_trace(&g, "wil6210"), 1).err().expect("refused").to_string();
    assert!(e.starts_with("path.0.trace.file: ") && e.contains("sector.csv"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
