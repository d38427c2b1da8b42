//! Whole-scenario tests: behaviours that only show when the engine, links and TCP run together.

use mmpath_sim::Simulation;
use serde_json::Value;

fn run(json: &str, seed: u64) -> (Value, mmpath_sim::RunOutput) {
    let mut sim = Simulation::from_json(json, seed).expect("valid scenario");
    let out = sim.finish();
    (out.summary.clone(), out)
}

fn flow(s: &Value, i: usize) -> &Value {
    &s["flows"][i]
}

/// A fixed receive window caps a flow at rwnd / RTT, whatever the link could carry.
#[test]
fn receive_window_limits_throughput_to_rwnd_over_rtt() {
    // 1 Gbit/s link, 20 ms base RTT (backbone 10 ms each way), 250 kB window -> 100 Mbit/s.
    let json = r#"{"duration_s": 10, "backbone": {"delay_ms": 10},
        "path": [{"rate_mbps": 1000, "mtu_bytes": 1500}],
        "flow": [{"cc": "cubic", "tcp": {"rcvbuf_bytes": 250000}}]}"#;
    let (s, _) = run(json, 1);
    let g = flow(&s, 0)["goodput_mbps"].as_f64().unwrap();
    // Steady state is rwnd (rounded down to whole segments) per RTT; the first second is
    // slow start, so allow a few percent below the bound and nothing above it.
    let bound = 250_000.0 * 8.0 / 0.020 / 1e6;
    assert!(g <= bound * 1.01 && g >= bound * 0.93, "goodput {g} vs rwnd/RTT {bound}");
    assert_eq!(flow(&s, 0)["retransmits"], 0, "a window-limited flow never overflows the queue");
    assert_eq!(s["invariants"]["ok"], true);
}

/// Offered 2x the link rate, the drop-tail queue fills at Q / (r_in - r_out) and then drops.
#[test]
fn bottleneck_queue_fills_and_drops_at_the_predicted_time() {
    // 2 Gbit/s of UDP into a 1 Gbit/s path with a 1 MB queue: fills after 1e6*8/1e9 = 8 ms.
    let json = r#"{"duration_s": 0.05, "timeline": {"sample_ms": 0.5},
        "backbone": {"enabled": false},
        "path": [{"rate_mbps": 1000, "mtu_bytes": 1500, "queue_bytes": 1000000}],
        "flow": [{"kind": "udp", "rate_mbps": 2000}]}"#;
    let (s, out) = run(json, 1);
    let t = &out.timeline;
    let full = t.t_s.iter().zip(&t.queue_bytes).find(|(_, &q)| q > 1_000_000.0 - 1500.0).map(|(t, _)| *t).unwrap();
    // Datagrams are 1500 B on the wire at 2 Gbit/s in, 1 Gbit/s out (payload rate 2 Gbit/s
    // of 1472 B payload -> 2038 Mbit/s of IP packets): fills in 1e6*8/(2.038e9-1e9) = 7.7 ms.
    let predicted = 1e6 * 8.0 / (2000.0 * 1500.0 / 1472.0 * 1e6 - 1e9);
    assert!((full - predicted).abs() < 0.001, "queue full at {full} s, predicted {predicted} s");
    let f = flow(&s, 0);
    let loss = f["loss_pct"].as_f64().unwrap();
    // After it fills, about half of what is offered is dropped.
    assert!(loss > 35.0 && loss < 52.0, "loss {loss}%");
    assert_eq!(s["invariants"]["ok"], true);
}

#[test]
fn same_seed_same_result_other_seed_differs() {
    let json = r#"{"duration_s": 3,
        "path": [{"rate_mbps": 500, "mtu_bytes": 1500, "loss_pct": 0.5}],
        "flow": [{"cc": "cubic"}, {"cc": "reno", "start_s": 0.5}]}"#;
    let (a, _) = run(json, 7);
    let (b, _) = run(json, 7);
    let (c, _) = run(json, 8);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    assert_ne!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&c).unwrap());
}

/// Random loss exercises SACK recovery and retransmission; the oracle still holds.
#[test]
fn random_loss_is_recovered_and_the_stream_is_intact() {
    let json = r#"{"duration_s": 5,
        "path": [{"rate_mbps": 1000, "mtu_bytes": 1500, "loss_pct": 1.0}],
        "flow": [{"cc": "reno"}, {"cc": "cubic", "direction": "upload"}]}"#;
    let (s, _) = run(json, 3);
    assert_eq!(s["invariants"]["ok"], true, "{}", s["invariants"]);
    for i in 0..2 {
        let f = flow(&s, i);
        assert!(f["retransmits"].as_u64().unwrap() > 100);
        assert!(f["fast_recoveries"].as_u64().unwrap() > 10);
        assert!(f["goodput_mbps"].as_f64().unwrap() > 10.0);
    }
}

/// A path that goes down stalls TCP into RTOs (with backoff); it resumes when the path is back.
#[test]
fn outage_causes_rtos_and_recovery() {
    let json = r#"{"duration_s": 8,
        "path": [{"rate_mbps": 1000, "mtu_bytes": 1500,
                  "schedule": [{"t_s": 2, "up": false}, {"t_s": 4, "up": true}]}],
        "flow": [{"cc": "cubic"}]}"#;
    let (s, out) = run(json, 1);
    let f = flow(&s, 0);
    assert!(f["rto_count"].as_u64().unwrap() >= 2, "{f}");
    assert_eq!(s["invariants"]["ok"], true);
    // Nothing delivered during the outage (plus the propagation tail), traffic after it.
    let iv = &out.intervals;
    let during: u64 = iv.t_s.iter().zip(&iv.bytes).filter(|(t, _)| **t >= 2.1 && **t < 3.9).map(|(_, b)| b).sum();
    let after: u64 = iv.t_s.iter().zip(&iv.bytes).filter(|(t, _)| **t >= 6.0).map(|(_, b)| b).sum();
    assert_eq!(during, 0);
    assert!(after as f64 * 8.0 / 2.0 / 1e6 > 500.0, "back above 500 Mbit/s after the outage");
    assert_eq!(out.events.kind, vec![0, 1]);
}

/// Flows sharing a bottleneck split it; the sum stays near the link rate.
#[test]
fn competing_flows_share_the_bottleneck() {
    let json = r#"{"duration_s": 20, "backbone": {"delay_ms": 5},
        "path": [{"rate_mbps": 500, "mtu_bytes": 1500}],
        "flow": [{"cc": "cubic"}, {"cc": "cubic"}]}"#;
    let (s, _) = run(json, 1);
    let a = flow(&s, 0)["goodput_mbps"].as_f64().unwrap();
    let b = flow(&s, 1)["goodput_mbps"].as_f64().unwrap();
    let cap = 500.0 * 1448.0 / 1500.0;
    assert!(a + b > 0.9 * cap && a + b <= cap * 1.001, "sum {} of {cap}", a + b);
    assert!(a.min(b) / a.max(b) > 0.5, "shares {a} / {b}");
}

/// A bulk transfer of a fixed size (iperf3 -n) delivers exactly that many bytes.
#[test]
fn fixed_size_transfer_delivers_exactly() {
    let json = r#"{"duration_s": 2,
        "path": [{"rate_mbps": 100, "mtu_bytes": 1500}],
        "flow": [{"cc": "cubic", "bytes": 1000001}, {"kind": "tcp", "app": "rate", "rate_mbps": 20}]}"#;
    let (s, _) = run(json, 1);
    assert_eq!(flow(&s, 0)["bytes_delivered"], 1_000_001);
    let r = flow(&s, 1)["goodput_mbps"].as_f64().unwrap();
    assert!((r - 20.0).abs() < 0.5, "rate-limited source at {r} Mbit/s");
    assert_eq!(s["invariants"]["ok"], true);
}

fn fixture(name: &str) -> String {
    format!("{}/tests/data/traces/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A Mahimahi trace of 1 opportunity per ms (12.032 Mbit/s) carries UDP at that rate and
/// loops; the run's channel record replays to the same result.
#[test]
fn mahimahi_trace_sets_the_capacity_and_the_record_replays() {
    let dir = std::env::temp_dir().join(format!("mmpath-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mm = dir.join("one-per-ms.trace");
    std::fs::write(&mm, (1..=100).map(|t| format!("{t}\n")).collect::<String>()).unwrap();
    let json = format!(
        r#"{{"duration_s": 2, "backbone": {{"enabled": false}},
            "path": [{{"rate_mbps": 1000, "mtu_bytes": 1500, "trace": {{"file": "{}", "format": "mahimahi"}}}}],
            "flow": [{{"kind": "udp", "rate_mbps": 50, "packet_bytes": 1472}}]}}"#,
        mm.display()
    );
    let (s, out) = run(&json, 1);
    let g = flow(&s, 0)["goodput_mbps"].as_f64().unwrap();
    // 1504 bytes per ms = 12.032 Mbit/s of wire capacity; 1472 of 1500 bytes are payload.
    let expected = 12.032 * 1472.0 / 1500.0;
    assert!((g - expected).abs() / expected < 0.02, "goodput {g} vs {expected}");
    // Replaying the recorded channel reproduces the run exactly.
    let (_, csv) = &out.channel_csv[0];
    let rec = dir.join("channel.csv");
    std::fs::write(&rec, csv).unwrap();
    let json2 = json.replace(&mm.display().to_string(), &rec.display().to_string()).replace("mahimahi", "csv");
    let (s2, _) = run(&json2.replace(r#""loop": true"#, ""), 1);
    assert_eq!(s2["flows"][0]["bytes_delivered"], s["flows"][0]["bytes_delivered"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A CSV trace that takes the link down stops delivery; TCP recovers after it.
#[test]
fn csv_trace_outage_stops_delivery() {
    let dir = std::env::temp_dir().join(format!("mmpath-trace-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("outage.csv");
    std::fs::write(&f, "t_s,rate_mbps,link_up\n0,500,1\n1,,0\n2,,1\n4,,\n").unwrap();
    let json = format!(
        r#"{{"duration_s": 4, "path": [{{"rate_mbps": 1000, "trace": {{"file": "{}", "loop": false}}}}],
            "flow": [{{"cc": "cubic"}}]}}"#,
        f.display()
    );
    let (s, out) = run(&json, 1);
    assert_eq!(s["invariants"]["ok"], true);
    let iv = &out.intervals;
    let during: u64 = iv.t_s.iter().zip(&iv.bytes).filter(|(t, _)| **t >= 1.1 && **t < 1.9).map(|(_, b)| b).sum();
    let before: u64 = iv.t_s.iter().zip(&iv.bytes).filter(|(t, _)| **t >= 0.2 && **t < 1.0).map(|(_, b)| b).sum();
    assert_eq!(during, 0);
    // Before the outage the trace's 500 Mbit/s is the bottleneck, not the path's 1000:
    // at most 500 x 1448 / 1500 = 482.7 Mbit/s of payload (single 100 ms bins can exceed it
    // when a filled hole releases out-of-order data, so average over 0.8 s).
    let mbps = before as f64 * 8.0 / 0.8 / 1e6;
    assert!(mbps > 430.0 && mbps < 482.8, "{mbps}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_trace_file_is_a_scenario_error_naming_the_field() {
    let json = format!(
        r#"{{"path": [{{"rate_mbps": 10, "trace": {{"file": "{}", "format": "mahimahi"}}}}], "flow": [{{}}]}}"#,
        fixture("mahimahi_decreasing.trace")
    );
    let e = match Simulation::from_json(&json, 1) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a decreasing mahimahi trace must be rejected"),
    };
    assert!(e.starts_with("path.0.trace.file: "), "{e}");
    assert!(e.contains("mahimahi_decreasing.trace:"), "{e}");
    let missing = r#"{"path": [{"rate_mbps": 10, "trace": {"file": "/nonexistent/x.csv"}}], "flow": [{}]}"#;
    let e = Simulation::from_json(missing, 1).err().expect("a missing trace file must be rejected").to_string();
    assert!(e.starts_with("path.0.trace.file: ") && e.contains("/nonexistent/x.csv"), "{e}");
}

/// A wil6210 log replays link status and reports MCS and RSSI in the timeline.
#[test]
fn wil6210_log_drives_link_status_and_timeline_channel_columns() {
    let json = format!(
        r#"{{"duration_s": 0.08, "timeline": {{"sample_ms": 10}},
            "path": [{{"rate_mbps": 1000, "trace": {{"file": "{}", "format": "wil6210", "loop": false}}}}],
            "flow": [{{"kind": "udp", "rate_mbps": 10}}]}}"#,
        fixture("wil6210_good.csv")
    );
    let (s, out) = run(&json, 1);
    assert_eq!(s["invariants"]["ok"], true);
    let t = &out.timeline;
    // Rows at 0, 10, ..., 80 ms; the log's rows are 10 ms apart from its first timestamp.
    assert_eq!(t.mcs[0], 9.0);
    assert_eq!(t.rssi_dbm[0], -54.0);
    assert_eq!(t.mcs[2], 8.0);
    assert_eq!(t.rssi_dbm[3], -58.0);
    assert!(!t.link_up[4], "pending = not connected");
    assert!(!t.link_up[5]);
    assert!(t.link_up[6]);
    assert_eq!(t.mcs[6], 6.0);
    assert!(t.snr_db.iter().all(|x| x.is_nan()), "the log has no SNR in dB");
    assert_eq!(out.events.kind, vec![0, 1], "one outage: down then up");
}

fn radio(path: &str, flow: &str, secs: f64, seed: u64) -> Value {
    let json = format!(r#"{{"duration_s": {secs}, "path": [{path}], "flow": [{flow}]}}"#);
    run(&json, seed).0
}

fn goodput(s: &Value) -> f64 {
    s["flows"][0]["goodput_mbps"].as_f64().unwrap()
}

/// At MTU 1500 the Panasonic hosts' packet rate, not the PHY, limits UDP: the same ~1 Gbit/s at
/// MCS 8 and 9; a device without a host limit gets far more from the same airtime.
#[test]
fn radio_udp_at_mtu_1500_is_host_limited() {
    let udp = r#"{"kind": "udp", "rate_mbps": 4000}"#;
    let p = |mcs: u8, dev: &str| {
        format!(r#"{{"technology": "11ad", "device": "{dev}", "mcs": {mcs}, "mtu_bytes": 1500, "rssi_dbm": -42}}"#)
    };
    let g8 = goodput(&radio(&p(8, "panasonic-wigig"), udp, 1.0, 1));
    let g9 = goodput(&radio(&p(9, "panasonic-wigig"), udp, 1.0, 1));
    // 12 us per packet -> 83.3 kpps x 1472 B of payload = 981 Mbit/s.
    let cap = 1e9 / 12_000.0 * 1472.0 * 8.0 / 1e6;
    for g in [g8, g9] {
        assert!(g > 0.97 * cap && g <= cap * 1.001, "{g} vs host cap {cap}");
    }
    let free = goodput(&radio(&p(9, "generic-11ad"), udp, 1.0, 1));
    assert!(free > 1.3 * cap, "without the host limit: {free}");
}

/// Seed 000's weak link at MCS 8, MTU 7912 (receiver 9 dB over the standard: MCS 8 needs
/// -70 dBm): at a steady -68 dBm the MAC's retries hide every error from TCP; with the office's
/// fading (2.9 dB every 10 ms) around the same mean, fades outlast the 8 attempts, whole
/// aggregates are given up and reach TCP as losses, and TCP loses more than UDP does. (Before
/// tail loss probes and FACK most of those bursts ended in 200 ms RTOs and TCP lost far more;
/// with them, seed 1 recovers every burst by fast recovery: TCP keeps 0.88, UDP 0.91.)
#[test]
fn fades_longer_than_the_retries_reach_tcp_as_loss_bursts() {
    let p = |fading: f64| {
        format!(
            r#"{{"technology": "11ad", "device": "panasonic-wigig", "mcs": 8, "mtu_bytes": 7912,
                "rssi_dbm": -68, "fading_db": {fading}, "coherence_ms": 10}}"#
        )
    };
    let (tcp, udp) =
        (r#"{"cc": "cubic", "direction": "upload"}"#, r#"{"kind": "udp", "rate_mbps": 3000, "direction": "upload"}"#);
    let steady = radio(&p(0.0), tcp, 3.0, 1);
    assert_eq!(steady["paths"][0]["retry_drops_up"], 0);
    assert_eq!(steady["flows"][0]["rto_count"], 0);
    let faded = radio(&p(2.9), tcp, 3.0, 1);
    assert!(faded["paths"][0]["retry_drops_up"].as_u64().unwrap() > 0);
    let f = &faded["flows"][0];
    assert!(f["retransmits"].as_u64().unwrap() > 0, "{f}");
    assert!(f["fast_recoveries"].as_u64().unwrap() + f["rto_count"].as_u64().unwrap() > 0, "{f}");
    let tcp_ratio = goodput(&faded) / goodput(&steady);
    let udp_ratio = goodput(&radio(&p(2.9), udp, 3.0, 1)) / goodput(&radio(&p(0.0), udp, 3.0, 1));
    assert!(tcp_ratio < udp_ratio - 0.02, "TCP keeps {tcp_ratio:.2}, UDP {udp_ratio:.2}");
}

/// The same fading link: some fades take the tail of a window, and Linux's tail loss probe
/// (tcp_early_retrans = 3) goes out 2 srtt later instead of waiting for the 200 ms RTO; the
/// per-flow summary counts the probes, and without TLP there are none. (At -69 dBm: since
/// failed exchanges double the contention window, an aggregate's 8 attempts span more of a
/// fade's 10 ms, and at -67 dBm seed 1's fades no longer take a window's tail.) Whether the
/// probes save RTOs on this link is not asserted: a probe sent into a fade that outlasts 2 srtt
/// is lost too, and with the send buffer kept after a cut (tcp/sndbuf.rs) F-RTO recovers most
/// tails either way (seeds 1-12: 31 RTOs with TLP, 28 without).
#[test]
fn fades_trigger_tail_loss_probes() {
    let p = r#"{"technology": "11ad", "device": "panasonic-wigig", "mcs": 9, "mtu_bytes": 7912,
                "rssi_dbm": -69, "fading_db": 2.9, "coherence_ms": 10}"#;
    let faded = radio(p, r#"{"cc": "cubic", "direction": "upload"}"#, 3.0, 1);
    let f = &faded["flows"][0];
    assert!(f["tlp_probes"].as_u64().unwrap() > 0, "{f}");
    // tcp_early_retrans < 3: the same fades, no probes, and the tails wait for the RTO.
    let off = radio(p, r#"{"cc": "cubic", "direction": "upload", "tcp": {"tail_loss_probes": false}}"#, 3.0, 1);
    let g = &off["flows"][0];
    assert_eq!(g["tlp_probes"], 0, "{g}");
    assert!(off["paths"][0]["retry_drops_up"].as_u64().unwrap() > 0, "the same fades");
    let steady = radio(
        r#"{"technology": "11ad", "device": "panasonic-wigig", "mcs": 9, "mtu_bytes": 7912, "rssi_dbm": -42}"#,
        r#"{"cc": "cubic", "direction": "upload"}"#,
        1.0,
        1,
    );
    assert_eq!(steady["flows"][0]["tlp_probes"], 0, "no probes without losses");
}

/// With jumbo frames the airtime limits: goodput rises with every MCS step, TCP below UDP.
#[test]
fn radio_goodput_rises_with_mcs_at_mtu_7912() {
    let mut last = (0.0, 0.0);
    for mcs in [1u8, 3, 5, 6, 7, 8, 9] {
        let p = format!(r#"{{"technology": "11ad", "device": "panasonic-wigig", "mcs": {mcs}, "mtu_bytes": 7912}}"#);
        let u = radio(&p, r#"{"kind": "udp", "rate_mbps": 4000}"#, 1.0, 1);
        let t = radio(&p, r#"{"cc": "cubic"}"#, 2.0, 1);
        let (gu, gt) = (goodput(&u), goodput(&t));
        assert!(gu > last.0 && gt > last.1, "MCS {mcs}: udp {gu} tcp {gt} after {last:?}");
        assert!(gt < gu, "MCS {mcs}: TCP {gt} must stay below UDP {gu} (its ACKs share the air)");
        let phy = mmpath_sim::link::phy::dmg::mcs(mcs).unwrap().rate_bps as f64 / 1e6;
        assert!(gu < phy, "MCS {mcs}: {gu} above the PHY rate {phy}");
        assert_eq!(t["invariants"]["ok"], true);
        last = (gu, gt);
    }
}

/// A weak signal at a fixed high MCS loses frames: MAC retries, then drops that TCP sees.
/// Ideal rate adaptation steps down instead and does better.
#[test]
fn weak_signal_hurts_fixed_mcs_and_rate_adaptation_steps_down() {
    let tcp = r#"{"cc": "cubic"}"#;
    let strong = radio(r#"{"technology": "11ad", "mcs": 9, "mtu_bytes": 7912, "rssi_dbm": -42}"#, tcp, 3.0, 1);
    let weak = radio(r#"{"technology": "11ad", "mcs": 9, "mtu_bytes": 7912, "rssi_dbm": -62}"#, tcp, 3.0, 1);
    let adapt = radio(r#"{"technology": "11ad", "mtu_bytes": 7912, "rssi_dbm": -62}"#, tcp, 3.0, 1);
    assert!(weak["paths"][0]["mpdus_failed_down"].as_u64().unwrap() > 50, "{}", weak["paths"][0]);
    assert!(weak["paths"][0]["retry_drops_down"].as_u64().unwrap() > 0, "{}", weak["paths"][0]);
    assert!(goodput(&weak) < 0.8 * goodput(&strong), "weak {} strong {}", goodput(&weak), goodput(&strong));
    let m = adapt["paths"][0]["mcs"].as_u64().unwrap();
    assert!(m < 9, "ideal rate adaptation picked MCS {m} at -62 dBm");
    assert!(goodput(&adapt) > goodput(&weak));
    for s in [&strong, &weak, &adapt] {
        assert_eq!(s["invariants"]["ok"], true);
    }
}

/// A named signal range is drawn per run: seeds give different RSSI inside the range.
#[test]
fn signal_range_is_drawn_per_seed() {
    let p = r#"{"technology": "11ad", "signal": "weak"}"#;
    let f = r#"{"kind": "udp", "rate_mbps": 10}"#;
    let r: Vec<f64> = (1..6).map(|seed| radio(p, f, 0.1, seed)["paths"][0]["rssi_dbm"].as_f64().unwrap()).collect();
    assert!(r.iter().all(|x| (-69.0..=-65.0).contains(x)), "{r:?}");
    assert!(r.windows(2).any(|w| w[0] != w[1]), "{r:?}");
}

/// Blockage on a radio path: nothing is delivered while it is down.
#[test]
fn radio_outage_delivers_nothing() {
    let json = r#"{"duration_s": 3,
        "path": [{"technology": "11ad", "mcs": 8, "mtu_bytes": 7912,
                  "schedule": [{"t_s": 1, "up": false}, {"t_s": 2, "up": true}]}],
        "flow": [{"cc": "cubic"}]}"#;
    let (s, out) = run(json, 1);
    assert_eq!(s["invariants"]["ok"], true);
    let iv = &out.intervals;
    let during: u64 = iv.t_s.iter().zip(&iv.bytes).filter(|(t, _)| **t >= 1.1 && **t < 1.9).map(|(_, b)| b).sum();
    let after: u64 = iv.t_s.iter().zip(&iv.bytes).filter(|(t, _)| **t >= 2.5).map(|(_, b)| b).sum();
    assert_eq!(during, 0);
    assert!(after > 0);
}

#[test]
fn radio_fields_are_validated() {
    let bad = |path: &str| match Simulation::from_json(&format!(r#"{{"path": [{path}], "flow": [{{}}]}}"#), 1) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{path} must be rejected"),
    };
    assert!(bad(r#"{"technology": "11ad", "rate_mbps": 100}"#).starts_with("path.0.rate_mbps: a 11ad path's rate"));
    let e = bad(r#"{"technology": "11ad", "device": "nokia"}"#);
    assert!(e.starts_with("path.0.device: unknown 11ad device") && e.contains("panasonic-wigig"), "{e}");
    let e = bad(r#"{"technology": "11ad", "device": "panasonic-wigig", "mcs": 12}"#);
    assert!(e.starts_with("path.0.mcs: 12 is not an MCS") && e.contains("allowed: 1, 2"), "{e}");
    assert!(bad(r#"{"technology": "11ad", "bandwidth_mhz": 80}"#).starts_with("path.0.bandwidth_mhz"));
    assert!(
        bad(r#"{"technology": "11ac", "bandwidth_mhz": 60}"#).starts_with("path.0.bandwidth_mhz: must be 20, 40, 80")
    );
    assert!(bad(r#"{"rate_mbps": 10, "mcs": 3}"#).starts_with("path.0.mcs: only radio paths"));
    assert!(bad(r#"{"technology": "11ad", "mtu_bytes": 9000}"#).starts_with("path.0.mtu_bytes: 802.11ad carries"));
    assert!(bad(r#"{"technology": "11ad", "rate_adaptation": "fixed"}"#).starts_with("path.0.mcs: rate_adaptation"));
    let e = bad(r#"{"technology": "wifi7"}"#);
    assert!(e.starts_with("path.0.technology: unknown value `wifi7`"), "{e}");
}

/// 802.11ac and 802.11n paths run too, at rates their PHY tables allow.
#[test]
fn ac_and_n_paths_carry_traffic_below_their_phy_rate() {
    let ac = radio(r#"{"technology": "11ac", "mcs": 9, "rssi_dbm": -40}"#, r#"{"cc": "cubic"}"#, 2.0, 1);
    let g = goodput(&ac);
    assert!(g > 0.5 * 866.7 && g < 866.7, "11ac 80 MHz 2x2 MCS 9: {g}");
    let n = radio(r#"{"technology": "11n", "mcs": 7, "rssi_dbm": -40}"#, r#"{"cc": "cubic"}"#, 2.0, 1);
    let g = goodput(&n);
    assert!(g > 0.4 * 72.2 && g < 72.2, "11n 20 MHz MCS 7 SGI: {g}");
}

/// A total blockage takes the link down for its duration plus the beam re-training time.
#[test]
fn blockage_event_goes_down_and_comes_back_after_retraining() {
    let json = r#"{"duration_s": 4,
        "path": [{"technology": "11ad", "mcs": 8, "mtu_bytes": 7912,
                  "event": [{"kind": "blockage", "t_s": 1, "duration_s": 1, "retrain_ms": 300}]}],
        "flow": [{"cc": "cubic"}]}"#;
    let (s, out) = run(json, 1);
    assert_eq!(s["invariants"]["ok"], true);
    let ev: Vec<(f64, i8)> = out.events.t_s.iter().copied().zip(out.events.kind.iter().copied()).collect();
    assert_eq!(ev, vec![(1.0, 0), (2.3, 1)], "down at 1 s, up at 2 s + 300 ms");
    let iv = &out.intervals;
    let during: u64 = iv.t_s.iter().zip(&iv.bytes).filter(|(t, _)| **t >= 1.1 && **t < 2.3).map(|(_, b)| b).sum();
    assert_eq!(during, 0);
}

/// A 25 dB blockage is not a lost link: ideal rate adaptation drops the MCS while it lasts.
#[test]
fn partial_blockage_lowers_the_mcs() {
    let json = r#"{"duration_s": 3, "timeline": {"sample_ms": 50},
        "path": [{"technology": "11ad", "rssi_dbm": -42, "mtu_bytes": 7912,
                  "event": [{"kind": "blockage", "t_s": 1, "duration_s": 1, "loss_db": 25}]}],
        "flow": [{"kind": "udp", "rate_mbps": 100}]}"#;
    let (_, out) = run(json, 1);
    let t = &out.timeline;
    let at = |x: f64| t.t_s.iter().position(|v| (*v - x).abs() < 1e-9).unwrap();
    assert!(t.mcs[at(1.5)] < t.mcs[at(0.5)], "{} then {}", t.mcs[at(0.5)], t.mcs[at(1.5)]);
    assert_eq!(t.rssi_dbm[at(1.5)], -67.0);
    assert_eq!(t.mcs[at(2.5)], t.mcs[at(0.5)]);
}

/// Commodity 802.11ad sets its rate per session (link/session_rate.rs): near the dock every
/// session holds the top rate; at 60 ft of seed 001's lobby, where the sector beam training
/// picks decides, sessions (seeds) hold different rates, each for more than 75 % of the session
/// (seed 001 Fig. 3(b)'s selection).
#[test]
fn commodity_60ghz_rate_is_set_per_session() {
    let session = |ft: f64, seed: u64| {
        let json = format!(
            r#"{{"duration_s": 3, "path": [{{"technology": "11ad", "device": "wil6210-dock",
                "rate_adaptation": "commodity", "distance_m": {}, "fading_db": 1.57,
                "path_loss_exponent": 1.24}}],
                "flow": [{{"kind": "udp", "rate_mbps": 500}}]}}"#,
            ft * 0.3048
        );
        let (_, out) = run(&json, seed);
        let m: Vec<u8> = out.timeline.mcs.iter().filter(|x| x.is_finite()).map(|x| *x as u8).collect();
        let mut counts = [0usize; 32];
        for x in &m {
            counts[*x as usize] += 1;
        }
        let (mcs, n) = counts.iter().enumerate().max_by_key(|c| *c.1).map(|(i, n)| (i as u8, *n)).unwrap();
        (mcs, n as f64 / m.len() as f64)
    };
    let mut held = std::collections::BTreeSet::new();
    for seed in 1..=8 {
        assert_eq!(session(5.0, seed), (11, 1.0), "5 ft, seed {seed}");
        let (mcs, share) = session(60.0, seed);
        assert!(share > 0.75, "60 ft, seed {seed}: MCS {mcs} held {share}");
        held.insert(mcs);
    }
    assert!(held.len() >= 2, "60 ft: every session held {held:?}");
}

/// 11ac periodic scans take the radio off the channel: link events at every scan, and the
/// goodput drops by about the scan duty cycle.
#[test]
fn scans_cost_their_duty_cycle() {
    let run_with = |event: &str| {
        let json = format!(
            r#"{{"duration_s": 4, "path": [{{"technology": "11ac", "mcs": 9, "rssi_dbm": -40 {event}}}],
                "flow": [{{"kind": "udp", "rate_mbps": 2000}}]}}"#
        );
        run(&json, 1)
    };
    let (base, _) = run_with("");
    // rest_ms = 0: each scan is one continuous off-channel period.
    let (scanned, out) = run_with(
        r#", "event": [{"kind": "scan", "t_s": 0, "duration_s": 4, "every_s": 0.2, "scan_ms": 50, "rest_ms": 0}]"#,
    );
    assert_eq!(out.events.kind.iter().filter(|k| **k == 0).count(), 20, "a scan every 200 ms");
    let ratio = goodput(&scanned) / goodput(&base);
    assert!((ratio - 0.75).abs() < 0.05, "off-channel 25 % of the time: ratio {ratio}");
    // Default dwells (40 ms) and returns home (100 ms): a 1 s scan every 2 s leaves the
    // channel 8 times (0, 140, ..., 980 ms; the last cut at 1000 ms), 300 ms off in all.
    let (scanned, out) =
        run_with(r#", "event": [{"kind": "scan", "t_s": 0, "duration_s": 4, "every_s": 2, "scan_ms": 1000}]"#);
    assert_eq!(out.events.kind.iter().filter(|k| **k == 0).count(), 16, "8 dwells per scan, 2 scans");
    let ratio = goodput(&scanned) / goodput(&base);
    assert!((ratio - 0.85).abs() < 0.04, "off-channel 15 % of the time: ratio {ratio}");
}

/// The phone's 11ac driver and firmware hold 1056 frames below its qdisc (device.rs
/// `client_tx_queue_frames`): a UDP upload through one 300 ms dwell overflows the qdisc (1000 x
/// MTU) and those frames; the phone drops 1056 datagrams fewer than the generic 11ac client,
/// which holds only the qdisc, and delivers them after the dwell.
#[test]
fn the_phones_driver_queue_holds_through_a_dwell() {
    let run_on = |device: &str| {
        let json = format!(
            r#"{{"duration_s": 1,
                "path": [{{"technology": "11ac", "device": "{device}", "mcs": 9, "rssi_dbm": -40,
                    "event": [{{"kind": "scan", "t_s": 0.3, "duration_s": 0.3, "every_s": 1, "scan_ms": 300, "rest_ms": 0}}]}}],
                "flow": [{{"kind": "udp", "rate_mbps": 200, "direction": "upload"}}]}}"#
        );
        let (s, _) = run(&json, 1);
        assert_eq!(s["invariants"]["ok"], true, "{}", s["invariants"]);
        let n = |v: &Value| v.as_f64().unwrap();
        (n(&s["paths"][0]["queue_drops_up"]), n(&flow(&s, 0)["packets_lost"]))
    };
    // 200 Mbit/s for 300 ms is ~5000 datagrams of 1500 bytes: more than either queue holds.
    let (generic_drops, generic_lost) = run_on("generic-11ac");
    assert!(generic_drops > 3000.0, "{generic_drops} dropped at the qdisc");
    let (phone_drops, phone_lost) = run_on("rog-phone-2-11ac");
    // (The presets differ in A-MSDU packing, so what each had queued when the dwell began
    // differs by a few tens of frames.)
    assert!((generic_drops - phone_drops - 1056.0).abs() < 50.0, "{generic_drops} vs {phone_drops}");
    assert_eq!(generic_lost - phone_lost, generic_drops - phone_drops, "the held frames are delivered");
}

/// Contention from other stations takes its airtime share from a saturated flow.
#[test]
fn contention_reduces_goodput_by_its_airtime_share() {
    let run_with = |event: &str| {
        let json = format!(
            r#"{{"duration_s": 3, "path": [{{"technology": "11ac", "mcs": 9, "rssi_dbm": -40 {event}}}],
                "flow": [{{"kind": "udp", "rate_mbps": 2000}}]}}"#
        );
        run(&json, 1).0
    };
    let alone = goodput(&run_with(""));
    // 433 Mbit/s of other traffic on an 866.7 Mbit/s channel: half the airtime.
    let shared =
        goodput(&run_with(r#", "event": [{"kind": "contention", "t_s": 0, "duration_s": 3, "load_mbps": 433.35}]"#));
    assert!((shared / alone - 0.5).abs() < 0.05, "{shared} of {alone}");
}

/// Walking away lowers the RSSI along the path-loss curve and the MCS follows.
#[test]
fn walking_away_lowers_rssi_and_mcs() {
    let json = r#"{"duration_s": 3, "timeline": {"sample_ms": 100},
        "path": [{"technology": "11ad", "distance_m": 2,
                  "event": [{"kind": "walk", "t_s": 0.5, "duration_s": 2, "to_distance_m": 40}]}],
        "flow": [{"kind": "udp", "rate_mbps": 100}]}"#;
    let (_, out) = run(json, 1);
    let t = &out.timeline;
    let first = (t.rssi_dbm[0], t.mcs[0]);
    let last = (*t.rssi_dbm.last().unwrap(), *t.mcs.last().unwrap());
    // 20 log10(40 / 2) = 26 dB weaker.
    assert!((first.0 - last.0 - 26.02).abs() < 0.1, "{first:?} -> {last:?}");
    assert!(last.1 < first.1, "MCS {first:?} -> {last:?}");
}

#[test]
fn event_fields_are_validated_per_kind() {
    let bad = |ev: &str| {
        let json = format!(r#"{{"path": [{{"technology": "11ad", "event": [{ev}]}}], "flow": [{{}}]}}"#);
        match Simulation::from_json(&json, 1) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{ev} must be rejected"),
        }
    };
    let e = bad(r#"{"kind": "scan", "t_s": 0, "duration_s": 1, "every_s": 0.1}"#);
    assert_eq!(e, "path.0.event.0.scan_ms: required for kind = \"scan\"");
    let e = bad(r#"{"kind": "scan", "t_s": 0, "duration_s": 1, "every_s": 0.5, "scan_ms": 100, "dwell_ms": 0}"#);
    assert_eq!(e, "path.0.event.0.dwell_ms: must be between 0.01 and 60000 (got 0)");
    let e = bad(r#"{"kind": "scan", "t_s": 0, "duration_s": 1, "every_s": 0.5, "scan_ms": 100, "rest_ms": -1}"#);
    assert_eq!(e, "path.0.event.0.rest_ms: must be between 0 and 60000 (got -1)");
    let e = bad(r#"{"kind": "blockage", "t_s": 0, "duration_s": 1, "dwell_ms": 30}"#);
    assert_eq!(e, "path.0.event.0.dwell_ms: kind = \"blockage\" does not take dwell_ms");
    let e = bad(r#"{"kind": "walk", "t_s": 0, "duration_s": 1, "to_distance_m": 3}"#);
    assert!(e.starts_with("path.0.event.0.kind: a walk needs the path's distance_m"), "{e}");
    let e = bad(r#"{"kind": "blockage", "t_s": 0, "duration_s": 1, "load_mbps": 3}"#);
    assert_eq!(e, "path.0.event.0.load_mbps: kind = \"blockage\" does not take load_mbps");
    let e = bad(r#"{"kind": "teleport", "t_s": 0, "duration_s": 1}"#);
    assert!(e.starts_with("path.0.event.0.kind: unknown value `teleport`"), "{e}");
}

/// Another 802.11ad link (generic device: ~3.5 dB SINR at MCS 1, ~12.5 dB at MCS 9). What our
/// stations sense takes turns with us (one TXOP each, so a fast MCS loses the larger share);
/// what they do not sense collides with our MPDUs, which costs the MCS that need a high SINR.
#[test]
fn interference_shares_turns_and_hurts_high_mcs_more() {
    let norm = |mcs: u8, interferer: &str| {
        let g = |extra: &str| {
            let p = format!(r#"{{"technology": "11ad", "mcs": {mcs}, "mtu_bytes": 7912, "rssi_dbm": -42 {extra}}}"#);
            goodput(&radio(&p, r#"{"kind": "udp", "rate_mbps": 4000}"#, 2.0, 1))
        };
        g(&format!(r#", "interferer": [{interferer}]"#)) / g("")
    };
    // 40 dB weaker: below the CCA threshold (-82 < -68 dBm) and harmless under overlap.
    assert!(norm(9, r#"{"channel": "same", "power_db": -40}"#) > 0.97);
    // Sensed, at MCS 9 like us: equal turns, half the airtime; at MCS 1 our
    // TXOPs (2 ms PPDUs) are twice its: we keep ~2 / 3.
    let sensed = r#"{"channel": "same", "power_db": -40, "sensed": 1, "mcs": 9}"#;
    let (s1, s9) = (norm(1, sensed), norm(9, sensed));
    assert!((s9 - 0.5).abs() < 0.03, "equal turns: {s9}");
    assert!(s1 > s9 + 0.15, "MCS 1 keeps more: {s1} vs {s9}");
    // Unsensed, 6 dB below our signal: SINR 6 dB under overlap; enough for MCS 1, not MCS 9.
    let same = r#"{"channel": "same", "power_db": -6, "sensed": 0}"#;
    let (low, high) = (norm(1, same), norm(9, same));
    assert!(low > 0.95, "MCS 1 survives the overlap: {low}");
    assert!(high < low - 0.1, "collisions cost MCS 9: {high} vs {low}");
    // Adjacent channel, 8 dB rejection: leakage at -50 dBm, below energy detection (-48 dBm).
    let adj = r#"{"channel": "adjacent", "rejection_db": 8}"#;
    let (a1, a9) = (norm(1, adj), norm(9, adj));
    assert!(a1 > 0.97, "MCS 1 shrugs off leakage: {a1}");
    assert!(a9 < 0.8, "MCS 9 needs a SINR the leakage denies: {a9}");
    // The transmit mask's 20.1 dB: a link as strong as ours does nothing...
    assert!(norm(9, r#"{"channel": "adjacent"}"#) > 0.97);
    // ...but 15 dB stronger its leakage (-47 dBm) trips energy detection: turns again.
    let loud = norm(9, r#"{"channel": "adjacent", "power_db": 15, "mcs": 9}"#);
    assert!((loud - 0.5).abs() < 0.03, "energy-detected neighbour: {loud}");
}

/// Two 802.11ad links, each with its own TCP upload, linked as each other's interferer (`path`):
/// hidden from each other on one channel (never sensed) at an SINR of 0 dB, which no MCS
/// captures, both lose frames and together carry less than one link alone; heard both ways they
/// take turns and lose nothing; on the adjacent channel the leakage (20.1 dB below) is captured
/// and neither is hurt.
#[test]
fn linked_tcp_links_share_or_spoil_the_air() {
    let run2 = |it: &str| {
        let link = |name: &str, more: &str| {
            format!(
                r#"{{"name": "{name}", "technology": "11ad", "device": "panasonic-wigig", "mcs": 9, "mtu_bytes": 7912,
                    "rssi_dbm": -42{more}}}"#
            )
        };
        let json = format!(
            r#"{{"duration_s": 2, "backbone": {{"enabled": false}},
                "path": [{}, {}],
                "flow": [{{"path": "a", "direction": "upload"}}, {{"path": "b", "direction": "upload"}}]}}"#,
            link("a", &format!(r#", "interferer": [{it}]"#)),
            link("b", "")
        );
        let (s, _) = run(&json, 1);
        assert_eq!(s["invariants"]["ok"], true);
        let g = |i: usize| flow(&s, i)["goodput_mbps"].as_f64().unwrap();
        // MPDUs lost while the other link's PPDU was on the air (each link's own AP-client
        // backoff collisions lose some too, with or without the other link).
        let spoiled = |i: usize| {
            let failed = s["paths"][i]["mpdus_failed_up"].as_u64().unwrap();
            let hit = s["paths"][i]["mpdus_interfered_up"].as_u64().unwrap();
            (hit, failed)
        };
        ([g(0), g(1)], [spoiled(0), spoiled(1)])
    };
    let alone = {
        let json = r#"{"duration_s": 2, "backbone": {"enabled": false},
            "path": [{"technology": "11ad", "device": "panasonic-wigig", "mcs": 9, "mtu_bytes": 7912, "rssi_dbm": -42}],
            "flow": [{"direction": "upload"}]}"#;
        let (s, _) = run(json, 1);
        flow(&s, 0)["goodput_mbps"].as_f64().unwrap()
    };
    let (hidden, lost) = run2(r#"{"channel": "same", "path": "b", "sensed": 0}"#);
    assert!(lost.iter().all(|&(hit, failed)| hit > 1000 && failed > hit / 2), "both lose frames: {lost:?}");
    assert!(hidden[0] < alone && hidden[1] < alone, "{hidden:?} vs alone {alone}");
    assert!(hidden[0] + hidden[1] < alone, "the overlaps waste air: {hidden:?} vs alone {alone}");
    let (turns, lost) = run2(r#"{"channel": "same", "path": "b", "sensed": 1}"#);
    assert!(lost.iter().all(|&(hit, _)| hit == 0), "no overlaps: {lost:?}");
    for g in turns {
        assert!((g / alone - 0.5).abs() < 0.1, "half the air each: {turns:?} vs alone {alone}");
    }
    let (aci, lost) = run2(r#"{"channel": "adjacent", "path": "b"}"#);
    assert!(lost.iter().all(|&(hit, _)| hit > 1000), "overlapped, and captured: {lost:?}");
    for g in aci {
        assert!(g > 0.97 * alone, "{aci:?} vs alone {alone}");
    }
}

#[test]
fn interferer_fields_are_validated() {
    let bad = |it: &str| {
        let json = format!(
            r#"{{"path": [{{"technology": "11ad", "device": "panasonic-wigig", "interferer": [{it}]}}], "flow": [{{}}]}}"#
        );
        match Simulation::from_json(&json, 1) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{it} must be rejected"),
        }
    };
    let e = bad(r#"{"channel": "same", "mcs": 12}"#);
    assert!(e.starts_with("path.0.interferer.0.mcs: 12 is not an MCS this 11ad device"), "{e}");
    let e = bad(r#"{"channel": "same", "mtu_bytes": 9000}"#);
    assert_eq!(e, "path.0.interferer.0.mtu_bytes: must be between 576 and 7920 for 11ad (got 9000)");
    let e = bad(r#"{"channel": "adjacent", "sensed": 1.5}"#);
    assert_eq!(e, "path.0.interferer.0.sensed: must be between 0 and 1 (got 1.5)");
}

/// TCP Small Queues keeps a sender's own first-hop queue near tcp_limit_output_bytes; without
/// it the queue holds most of the window.
#[test]
fn tsq_bounds_the_senders_local_queue() {
    let mean_queue = |limit: u64| {
        let json = format!(
            r#"{{"duration_s": 3, "backbone": {{"enabled": false}},
                "path": [{{"technology": "11ad", "device": "panasonic-wigig", "mcs": 9, "mtu_bytes": 7912, "signal": "strong"}}],
                "flow": [{{"direction": "upload", "tcp": {{"limit_output_bytes": {limit}}}}}]}}"#
        );
        let (s, out) = run(&json, 1);
        assert_eq!(s["invariants"]["ok"], true);
        let q = &out.timeline.queue_bytes;
        (q.iter().sum::<f64>() / q.len() as f64, flow(&s, 0)["goodput_mbps"].as_f64().unwrap())
    };
    let (with_tsq, g1) = mean_queue(131_072);
    let (without, g0) = mean_queue(0);
    assert!(with_tsq < 160_000.0, "TSQ 128 KiB: mean local queue {with_tsq}");
    assert!(without > 1_000_000.0, "no TSQ: mean local queue {without}");
    assert!((g1 - g0).abs() < 0.02 * g0, "same goodput: {g1} vs {g0}");
}

/// GRO at a Linux client: a download straight from the AP (the medium is the sender's first
/// hop, whose frames release TCP Small Queues when delivered) runs as fast with the merge as
/// without, with far fewer ACKs; a merged skb releases every segment it holds (a release of
/// one header per skb starved the sender within milliseconds), and the oracle counts segments.
#[test]
fn gro_merges_a_download_without_starving_tsq() {
    let run_gro = |gro: bool| {
        let json = format!(
            r#"{{"duration_s": 3, "backbone": {{"enabled": false}},
                "path": [{{"technology": "11ac", "device": "generic-11ac", "rssi_dbm": -50, "mtu_bytes": 1500, "gro": {gro}}}],
                "flow": [{{"cc": "cubic"}}]}}"#
        );
        let (s, _) = run(&json, 1);
        assert_eq!(s["invariants"]["ok"], true, "{}", s["invariants"]);
        let f = flow(&s, 0);
        (f["goodput_mbps"].as_f64().unwrap(), s["paths"][0]["bytes_sent_up"].as_u64().unwrap())
    };
    let (merged, acks_merged) = run_gro(true);
    let (alone, acks_alone) = run_gro(false);
    assert!(merged > 0.95 * alone, "GRO {merged} Mbit/s against {alone} without");
    assert!(acks_merged * 4 < acks_alone, "ACK bytes up: {acks_merged} with GRO, {acks_alone} without");
}

/// A blockage drops what the driver had queued and refuses frames until the link is back, so
/// TCP resumes at its next backed-off RTO after the re-training, not at once; a scan only
/// pauses the queue (nothing dropped).
#[test]
fn blockage_drops_queued_frames_scan_keeps_them() {
    let json = r#"{"duration_s": 12,
        "path": [{"technology": "11ad", "device": "panasonic-wigig", "mcs": 9, "mtu_bytes": 7912, "signal": "strong",
                  "event": [{"kind": "blockage", "t_s": 3, "duration_s": 5, "retrain_ms": 500}]}],
        "flow": [{"cc": "cubic"}]}"#;
    let (s, out) = run(json, 1);
    assert_eq!(s["invariants"]["ok"], true);
    assert!(flow(&s, 0)["rto_count"].as_u64().unwrap() >= 4);
    // The frames queued at the blockage are dropped (the same link without the event drops
    // none: a strong signal at MCS 9 and a queue the TSQ-limited sender does not fill).
    assert!(s["paths"][0]["drops_down"].as_u64().unwrap() > 0, "{}", s["paths"][0]);
    let iv = &out.intervals;
    let resumed = (0..iv.t_s.len()).find(|&i| iv.t_s[i] >= 8.5 && iv.bytes[i] * 80 > 100_000_000).map(|i| iv.t_s[i]);
    let t = resumed.expect("TCP resumes");
    // RTOs from ~3.2 s double 0.2, 0.4, 0.8, 1.6, 3.2 s: the one after 8.5 s is due near 9.6 s.
    assert!(t > 9.0 && t < 10.5, "resumed at {t}, link back at 8.5 s");
    let scan = r#"{"duration_s": 3,
        "path": [{"technology": "11ad", "mcs": 8, "mtu_bytes": 7912,
                  "event": [{"kind": "scan", "t_s": 1, "duration_s": 1, "every_s": 0.2, "scan_ms": 20}]}],
        "flow": [{"cc": "cubic"}]}"#;
    let (s, _) = run(scan, 1);
    assert_eq!(s["invariants"]["ok"], true);
    assert_eq!(s["paths"][0]["drops_down"], 0, "a scan pauses the queue, it drops nothing");
}

/// The application's read acknowledges a short last segment at once (tcp_cleanup_rbuf: a
/// pushed segment, the queue drained) instead of after the 40 ms delayed-ACK timer: a
/// transfer of 20 full segments and a 400-byte tail is fully acknowledged one round trip
/// after it is sent, for a single-path flow and for an MPTCP subflow alike.
#[test]
fn a_short_tail_is_acknowledged_when_read_not_after_the_delayed_ack() {
    let bytes = 20 * 1448 + 400;
    for kind in ["tcp", "mptcp"] {
        let json = format!(
            r#"{{"duration_s": 0.5, "timeline": {{"sample_ms": 1}}, "backbone": {{"enabled": false}},
                "path": [{{"name": "A", "rate_mbps": 1000, "mtu_bytes": 1500, "delay_ms": 5}}],
                "flow": [{{"kind": "{kind}", "bytes": {bytes}, "tcp": {{"delayed_ack": true}}}}]}}"#
        );
        let (s, out) = run(&json, 1);
        assert_eq!(s["invariants"]["ok"], true, "{kind}");
        let t = &out.timeline;
        // The first sample after data went out at which nothing is in flight any more.
        let rows: Vec<usize> = (0..t.t_s.len()).filter(|&i| t.flow[i] == 0 && t.subflow[i] <= 0).collect();
        let sent = rows.iter().position(|&i| t.in_flight_bytes[i] > 0.0).expect("data in flight");
        let done =
            rows[sent..].iter().find(|&&i| t.in_flight_bytes[i] == 0.0).map(|&i| t.t_s[i]).expect("acknowledged");
        // Handshake done before t = 0; 10 + 11 segments in two round trips of 10 ms (the
        // second flight's ACK comes back at ~20 ms); without the read rule the tail's ACK
        // waits 40 ms more.
        assert!(done < 0.035, "{kind}: all acknowledged at {done} s");
    }
}

/// The fastest link a scenario may have (validate.rs: 1e7 Mbit/s) is simulated right: a bulk
/// CUBIC flow over it reaches its receive-buffer bound (rmem_max 6 MB: a 3 MB window per 1 ms
/// RTT = 24 Gbit/s), as at 100 Gbit/s. From 180 Gbit/s up the window used to stay at its first
/// 10 segments (628 Mbit/s): the receiver's autotuning only saw ties (tcp/receiver.rs).
#[test]
fn the_fastest_accepted_link_reaches_the_receive_window_bound() {
    for rate in ["100000", "200000", "10000000"] {
        let json = format!(
            r#"{{"duration_s": 0.5, "backbone": {{"rate_mbps": {rate}}},
            "path": [{{"rate_mbps": {rate}, "mtu_bytes": 7912}}],
            "flow": [{{"cc": "cubic"}}]}}"#
        );
        let (s, _) = run(&json, 1);
        let g = flow(&s, 0)["goodput_mbps"].as_f64().unwrap();
        assert!(g > 15_000.0, "{rate} Mbit/s: goodput {g} Mbit/s");
        assert_eq!(s["invariants"]["ok"], true);
    }
}
