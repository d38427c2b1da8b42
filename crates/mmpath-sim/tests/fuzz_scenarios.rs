//! Randomized robustness tests of scenario parsing and validation, with proptest: the bundled
//! scenarios (python/mmpath/scenarios/*.toml, and each of their variants applied as `--set`
//! would) are turned into the JSON the core takes, then mutated (NaN / infinite / negative /
//! huge numbers, wrong types, empty arrays and tables, unknown names and fields, removed
//! fields). Every mutant must either be rejected with one clear error naming a field, or build
//! and run a short while without panicking.

use mmpath_sim::{Scenario, Simulation, Time};
use proptest::prelude::*;

mod common;
use common::config;
use serde_json::Value;
use std::path::PathBuf;

/// Sets `doc[key]` for a dotted `--set` key (python/mmpath/scenario.py apply_override).
fn set_dotted(doc: &mut Value, key: &str, v: Value) {
    let parts: Vec<&str> = key.split('.').collect();
    let mut cur = doc;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        cur = match cur {
            Value::Array(a) => &mut a[part.parse::<usize>().unwrap()],
            Value::Object(m) => {
                if last {
                    m.insert(part.to_string(), v);
                    return;
                }
                m.entry(part.to_string()).or_insert_with(|| Value::Object(Default::default()))
            }
            _ => panic!("{key}"),
        };
        if last {
            *cur = v;
            return;
        }
    }
}

/// The bundled scenarios and their variants, as JSON the core accepts (read once).
fn seeds() -> &'static [(String, Value)] {
    static SEEDS: std::sync::OnceLock<Vec<(String, Value)>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(read_seeds)
}

fn read_seeds() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/mmpath/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut out = Vec::new();
    for f in files.into_iter().filter(|f| f.extension().is_some_and(|e| e == "toml")) {
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        let mut doc: Value = toml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let variants = doc.as_object_mut().unwrap().remove("variant");
        Scenario::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
        out.push((name.clone(), doc.clone()));
        for v in variants.as_ref().and_then(Value::as_array).into_iter().flatten() {
            let mut d = doc.clone();
            for (k, val) in v["set"].as_object().unwrap() {
                set_dotted(&mut d, k, val.clone());
            }
            let label = format!("{name}/{}", v["name"].as_str().unwrap());
            Scenario::from_json(&d.to_string()).unwrap_or_else(|e| panic!("{label}: {e}"));
            out.push((label, d));
        }
    }
    assert!(out.len() >= 9, "found {} scenarios in {}", out.len(), dir.display());
    out
}

/// Every node of a JSON document, as the path of keys / indexes leading to it.
fn nodes(v: &Value, here: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(here.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                here.push(Value::String(k.clone()));
                nodes(x, here, out);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                here.push(Value::from(i));
                nodes(x, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn node_mut<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |cur, seg| match seg {
        Value::String(k) => &mut cur[k.as_str()],
        _ => &mut cur[seg.as_u64().unwrap() as usize],
    })
}

/// JSON text that no `Value` can hold (Python's json.dumps writes NaN and Infinity for
/// non-finite floats), spliced in through a placeholder string.
const RAW: &str = "\u{1}raw:";

#[derive(Debug, Clone)]
enum Edit {
    Replace(Value),
    Scale(f64),
    Remove,
    AddField(String, Value),
    EmptyIt,
    DupFirst,
    /// Replay a trace on path k (mod the number of paths).
    SetTrace(usize, Value),
}

/// A path's `trace` table replaying one of the parser fixtures.
fn trace(name: &str, format: &str) -> Value {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces").join(name);
    serde_json::json!({"file": file.display().to_string(), "format": format})
}

fn odd_value() -> impl Strategy<Value = Value> {
    let raw = |s: &str| Value::String(format!("{RAW}{s}"));
    prop_oneof![
        prop::sample::select(vec![
            raw("NaN"),
            raw("Infinity"),
            raw("-Infinity"),
            raw("1e400"),
            raw("-1e400"),
            raw("18446744073709551616"),
            raw("-9223372036854775809"),
            Value::from(-1),
            Value::from(-0.0),
            Value::from(0),
            Value::from(0.5),
            Value::from(1e-300),
            Value::from(1e300),
            Value::from(f64::MAX),
            Value::from(u64::MAX),
            Value::from(i64::MIN),
            Value::from(4_294_967_296u64),
            Value::from(65_536),
            Value::from(256),
            Value::Null,
            Value::Bool(true),
            Value::from(""),
            Value::from("bogus"),
            Value::from("reno"),
            Value::from("11ad"),
            Value::from("wired"),
            Value::from("blockage"),
            Value::from("backup"),
            Value::from("\u{1b}[2J\r\n"),
            Value::Array(vec![]),
            Value::Array(vec![Value::from(1)]),
            serde_json::json!({}),
            serde_json::json!({"t_s": 1.0}),
            serde_json::json!([{"t_s": -1.0, "up": false}]),
            serde_json::json!({"file": "/nonexistent/trace.csv", "format": "csv"}),
            trace("mahimahi_good.trace", "mahimahi"),
            trace("csv_good.csv", "csv"),
            trace("wil6210_good.csv", "wil6210"),
            trace("wil6210_bad_mcs.csv", "wil6210"),
        ]),
        (-1e12f64..1e12).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => odd_value().prop_map(Edit::Replace),
        2 => prop::sample::select(vec![-1.0, 0.0, 1e-9, 1e3, 1e9, 1e20, 0.999, 1.001]).prop_map(Edit::Scale),
        1 => Just(Edit::Remove),
        1 => (prop::sample::select(vec!["bogus", "t_s", "name", "rate_mbps", "mcs", "kind", "up", "duration_s", "path"]), odd_value())
            .prop_map(|(k, v)| Edit::AddField(k.to_string(), v)),
        1 => Just(Edit::EmptyIt),
        1 => Just(Edit::DupFirst),
        1 => (any::<usize>(), prop::sample::select(vec![
            trace("mahimahi_good.trace", "mahimahi"),
            trace("csv_good.csv", "csv"),
            trace("wil6210_good.csv", "wil6210"),
            trace("wil6210_headerless.txt", "wil6210"),
            trace("csv_backwards.csv", "csv"),
        ])).prop_map(|(k, v)| Edit::SetTrace(k, v)),
    ]
}

fn mutate(doc: &mut Value, picks: &[(usize, Edit)]) {
    for (pick, e) in picks {
        if let Edit::SetTrace(k, v) = e {
            if let Some(paths) = doc.get_mut("path").and_then(Value::as_array_mut).filter(|a| !a.is_empty()) {
                let n = paths.len();
                if let Value::Object(m) = &mut paths[k % n] {
                    m.insert("trace".into(), v.clone());
                }
            }
            continue;
        }
        let mut all = Vec::new();
        nodes(doc, &mut Vec::new(), &mut all);
        let path = &all[pick % all.len()];
        if let Edit::Remove = e {
            if let Some((last, parent)) = path.split_last() {
                match (node_mut(doc, parent), last) {
                    (Value::Object(m), Value::String(k)) => {
                        m.remove(k);
                    }
                    (Value::Array(a), i) => {
                        a.remove(i.as_u64().unwrap() as usize);
                    }
                    _ => {}
                }
            }
            continue;
        }
        let n = node_mut(doc, path);
        match e {
            Edit::Replace(v) => *n = v.clone(),
            Edit::Scale(k) => {
                if let Some(x) = n.as_f64() {
                    let y = x * k;
                    *n = if n.is_u64() && (0.0..1.8e19).contains(&y) && y.fract() == 0.0 {
                        Value::from(y as u64)
                    } else {
                        Value::from(y)
                    };
                }
            }
            Edit::AddField(k, v) => {
                if let Value::Object(m) = n {
                    m.insert(k.clone(), v.clone());
                }
            }
            Edit::EmptyIt => match n {
                Value::Object(m) => m.clear(),
                Value::Array(a) => a.clear(),
                Value::String(s) => s.clear(),
                _ => *n = Value::from(0),
            },
            Edit::DupFirst => {
                if let Value::Array(a) = n {
                    if let Some(x) = a.first().cloned() {
                        a.push(x);
                    }
                }
            }
            Edit::Remove | Edit::SetTrace(..) => {}
        }
    }
}

fn to_text(doc: &Value) -> String {
    let mut s = doc.to_string();
    while let Some(i) = s.find("\"\\u0001raw:") {
        let end = i + 1 + s[i + 1..].find('"').unwrap();
        let token = s[i + 11..end].to_string();
        s.replace_range(i..=end, &token);
    }
    s
}

/// One clear message: one printable line, naming a field when the document parsed as JSON,
/// without Rust's type names.
fn check_error(msg: &str, json: &str) {
    assert!(!msg.trim().is_empty(), "empty message for {json}");
    assert!(!msg.chars().any(char::is_control), "control character in {msg:?} for {json}");
    assert!(msg.len() < 600, "message of {} bytes: {msg}", msg.len());
    for rust in [" u8", " u16", " u32", " u64", " i64", " f32", " f64", "usize", "struct ", "Option<", "Vec<"] {
        assert!(!msg.contains(rust), "Rust type name `{rust}` in {msg:?} for {json}");
    }
}

/// Largest rate a fuzz run may simulate: keeps a run of a few ms to a few thousand events.
fn rates_small(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().all(|(k, x)| {
            let capped = k.contains("rate") || k.contains("mbps");
            (!capped || x.as_f64().is_none_or(|r| r <= 20_000.0)) && rates_small(x)
        }),
        Value::Array(a) => a.iter().all(rates_small),
        _ => true,
    }
}

fn check_mutant(label: &str, doc: &Value) {
    let json = to_text(doc);
    let sc = match Scenario::from_json(&json) {
        Ok(sc) => sc,
        Err(e) => {
            if std::env::var("MMPATH_FUZZ_VERBOSE").is_ok() {
                eprintln!("rejected: {e}");
            }
            return check_error(&e.to_string(), &json);
        }
    };
    if std::env::var("MMPATH_FUZZ_VERBOSE").is_ok() {
        eprintln!("accepted: {label}, runs: {}, trace: {}", rates_small(doc), json.contains("\"trace\""));
    }
    // Normalized JSON reads back to the same scenario, bit for bit (serde_json's
    // float_roundtrip feature: without it a float could move by an ulp).
    let again = Scenario::from_json(&sc.to_json()).unwrap_or_else(|e| panic!("{label}: normalized form rejected: {e}"));
    let (a, b) = (again.to_json(), sc.to_json());
    assert_eq!(a, b, "{label}: normalized form changes when read back");
    if !rates_small(doc) {
        return;
    }
    // Run a short while: at most 20 ms of simulated time.
    let mut short = doc.clone();
    let d = short["duration_s"].as_f64().unwrap_or(10.0);
    short["duration_s"] = Value::from(d.min(0.02));
    let json = to_text(&short);
    let mut sim = match Simulation::from_json(&json, 1) {
        Ok(sim) => sim,
        Err(e) => return check_error(&e.to_string(), &json),
    };
    sim.run_until(Time::from_ms(20));
    let out = sim.finish();
    assert!(out.summary.is_object(), "{label}");
}

proptest! {
    #![proptest_config(config(4000))]

    #[test]
    fn mutated_scenarios(seed in 0usize..64, picks in prop::collection::vec((any::<usize>(), edit()), 1..4)) {
        let all = seeds();
        let (label, base) = &all[seed % all.len()];
        let mut doc = base.clone();
        mutate(&mut doc, &picks);
        check_mutant(label, &doc);
    }
}

proptest! {
    #![proptest_config(config(2000))]

    /// Any float a user may give comes back bit-identical after normalizing, writing out and
    /// reading back (serde_json's float_roundtrip feature).
    #[test]
    fn normalized_floats_round_trip_exactly(
        dur in 1e-9f64..86_400.0,
        rate in 1e-9f64..1e7,
        delay in 0.0f64..86_400_000.0,
        loss in 0.0f64..100.0,
        bits in any::<u64>(),
    ) {
        // Any finite f64 at all (a raw bit pattern), as a fading spread clamped into range.
        let raw = f64::from_bits(bits);
        let fading = if raw.is_finite() { raw.abs() % 30.0 } else { 1.0 };
        let json = format!(
            r#"{{"duration_s":{dur:?},"path":[{{"rate_mbps":{rate:?},"delay_ms":{delay:?},"loss_pct":{loss:?}}},{{"name":"ad","technology":"11ad","fading_db":{fading:?}}}],"flow":[{{}}]}}"#
        );
        let a = Scenario::from_json(&json).unwrap();
        let b = Scenario::from_json(&a.to_json()).unwrap();
        let got = [a.duration_s, a.path[0].rate_mbps.unwrap(), a.path[0].delay_ms, a.path[0].loss_pct, a.path[1].fading_db.unwrap()];
        let back = [b.duration_s, b.path[0].rate_mbps.unwrap(), b.path[0].delay_ms, b.path[0].loss_pct, b.path[1].fading_db.unwrap()];
        prop_assert_eq!(got.map(f64::to_bits), [dur, rate, delay, loss, fading].map(f64::to_bits));
        prop_assert_eq!(back.map(f64::to_bits), got.map(f64::to_bits));
    }
}

/// Each bundled scenario and variant builds and runs 20 ms.
#[test]
fn bundled_scenarios_run_briefly() {
    for (label, doc) in seeds() {
        check_mutant(label, doc);
    }
}
