//! Randomized robustness tests of the trace parsers (Mahimahi, mmpath CSV, wil6210), with
//! proptest: generated valid traces must parse and keep their meaning; mutated traces, random
//! lines and random bytes must either parse to a sane trace or fail with one clear
//! `FILE[:LINE]: MESSAGE` error; never panic. The unit tests next to the parsers
//! (link/trace.rs `garbage_never_panics`) cover the same ground with a fixed generator; these
//! add shrinking, structured generators and stronger checks on what an accepted trace holds.

use mmpath_sim::link::trace::{load, parse, write_csv, Trace, TraceError, TraceFormat, TraceOpts};
use mmpath_sim::Time;
use proptest::prelude::*;

mod common;
use common::config;
use std::path::PathBuf;

const LABEL: &str = "fuzz.trace";

fn fixtures() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces");
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    names.into_iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect()
}

fn opts_strategy() -> impl Strategy<Value = TraceOpts> {
    (
        prop_oneof![Just(10_000_000u64), 1u64..50_000_000, Just(1u64), Just(u64::MAX)],
        prop_oneof![Just(1504u32), 1u32..10_000, Just(u32::MAX)],
    )
        .prop_map(|(bin, b)| TraceOpts { bin: Time(bin), bytes_per_opportunity: b })
}

/// An error is one line naming the file, with a message that says something.
fn check_error(e: &TraceError, text: &str) {
    assert_eq!(e.file, LABEL, "{e}");
    assert!(!e.message.trim().is_empty(), "empty message for {text:?}");
    let shown = e.to_string();
    assert!(!shown.chars().any(char::is_control), "message with a control character {shown:?} for {text:?}");
    assert!(shown.len() < 1000, "message of {} bytes for {text:?}", shown.len());
    assert!(shown.starts_with(LABEL), "{shown}");
    if let Some(n) = e.line {
        // The line it blames exists (a BOM or a trailing newline do not shift numbering).
        assert!(n >= 1 && n <= text.split('\n').count().max(1), "line {n} out of range in {shown} for {text:?}");
    }
}

/// What any accepted trace must hold, whatever the format.
fn check_trace(t: &Trace, f: TraceFormat, text: &str) {
    assert_eq!(t.format, f);
    assert!(!t.steps.is_empty(), "{f}: no steps from {text:?}");
    assert!(t.steps.windows(2).all(|w| w[0].at < w[1].at), "{f}: steps not strictly increasing for {text:?}");
    for s in &t.steps {
        if f == TraceFormat::Csv {
            assert!(s.at <= t.period, "{f}: step at {:?} after the period {:?} for {text:?}", s.at, t.period);
        } else {
            assert!(s.at < t.period, "{f}: step at {:?} not before the period {:?} for {text:?}", s.at, t.period);
        }
        let c = &s.set;
        assert!(c.mcs.is_none_or(|m| m <= 31), "{f}: mcs {:?} for {text:?}", c.mcs);
        assert!(c.rssi_dbm.is_none_or(f32::is_finite), "{f}: rssi {:?} for {text:?}", c.rssi_dbm);
        assert!(c.snr_db.is_none_or(f32::is_finite), "{f}: snr {:?} for {text:?}", c.snr_db);
    }
    if f != TraceFormat::Csv {
        assert!(t.period > Time::ZERO, "{f}: zero period for {text:?}");
    }
    // What a run records reads back as the same steps.
    let mut buf = Vec::new();
    write_csv(&mut buf, &t.steps).unwrap();
    let back = parse(std::str::from_utf8(&buf).unwrap(), "rt", TraceFormat::Csv, &TraceOpts::default())
        .unwrap_or_else(|e| panic!("{f}: recorded steps do not read back ({e}) for {text:?}"));
    assert_eq!(back.steps, t.steps, "{f}: round trip changed the steps of {text:?}");
}

/// Parses `text` in every format; accepted traces are checked, errors must be clear.
fn parse_all(text: &str, o: &TraceOpts) {
    for f in TraceFormat::ALL {
        match parse(text, LABEL, f, o) {
            Ok(t) => check_trace(&t, f, text),
            Err(e) => check_error(&e, text),
        }
    }
}

// ----- generators of valid traces

/// Non-decreasing millisecond timestamps ending above 0.
fn mahimahi_ms() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(0u64..200, 1..80).prop_map(|gaps| {
        let mut t = 0;
        let mut v: Vec<u64> = gaps
            .iter()
            .map(|g| {
                t += g / 4; // many repeats
                t
            })
            .collect();
        if *v.last().unwrap() == 0 {
            v.push(1);
        }
        v
    })
}

fn mahimahi_text(ms: &[u64]) -> String {
    ms.iter().map(|m| format!("{m}\n")).collect()
}

#[derive(Debug, Clone)]
struct CsvRow {
    dt_ms: u32,
    rate_kbps: Option<u64>,
    mcs: Option<u8>,
    up: Option<bool>,
    rssi: Option<i16>,
}

fn csv_rows() -> impl Strategy<Value = Vec<CsvRow>> {
    let row = (
        0u32..3000,
        prop::option::of(0u64..10_000_000),
        prop::option::of(0u8..32),
        prop::option::of(any::<bool>()),
        prop::option::of(-100i16..0),
    )
        .prop_map(|(dt_ms, rate_kbps, mcs, up, rssi)| CsvRow { dt_ms, rate_kbps, mcs, up, rssi });
    prop::collection::vec(row, 1..40)
}

fn csv_text(rows: &[CsvRow]) -> String {
    let mut s = String::from("t_s,rate_mbps,mcs,link_up,rssi_dbm\n");
    let mut t = 0u64;
    for r in rows {
        t += u64::from(r.dt_ms);
        let opt = |v: Option<String>| v.unwrap_or_default();
        s.push_str(&format!(
            "{}.{:03},{},{},{},{}\n",
            t / 1000,
            t % 1000,
            opt(r.rate_kbps.map(|k| format!("{}.{:03}", k / 1000, k % 1000))),
            opt(r.mcs.map(|m| m.to_string())),
            opt(r.up.map(|u| if u { "1".into() } else { "0".into() })),
            opt(r.rssi.map(|x| x.to_string())),
        ));
    }
    s
}

/// wil6210 rows with a time column in one of the units the parser takes.
fn wil_text() -> impl Strategy<Value = String> {
    let row = (
        prop::option::of(0u8..13),
        prop::option::of(0u16..64),
        prop::sample::select(vec!["connected", "pending", "unused", "2", "0", "NaN", ""]),
        prop::option::of(-90i16..-30),
    );
    (
        prop::sample::select(vec![
            ("time_ms", 1u64),
            ("Time (s)", 1000),
            ("t_us", 1),
            ("timestamp", 1),
            ("time_ns", 1),
        ]),
        prop::collection::vec(row, 1..40),
        prop::sample::select(vec![",", "\t", ";"]),
    )
        .prop_map(|((head, _), rows, sep)| {
            let mut s = [head, "Azimuth", "MCS", "Tx Sector", "Link Status", "SQI", "RSSI"].join(sep);
            s.push('\n');
            for (i, (mcs, sector, status, rssi)) in rows.iter().enumerate() {
                let ms = 1_597_345_123_450u64 + 10 * i as u64;
                let t = match head {
                    "time_ms" => ms.to_string(),
                    "Time (s)" => format!("{}.{:03}", ms / 1000, ms % 1000),
                    "t_us" => (ms * 1000).to_string(),
                    "time_ns" => (10_000_000 * i as u64).to_string(),
                    _ => ms.to_string(), // epoch ms, unit inferred from the 10 ms spacing
                };
                let o = |v: Option<String>| v.unwrap_or_else(|| "NaN".into());
                let cells = [
                    t,
                    "12.5".into(),
                    o(mcs.map(|m| m.to_string())),
                    o(sector.map(|x| x.to_string())),
                    status.to_string(),
                    "70".into(),
                    o(rssi.map(|x| x.to_string())),
                ];
                s.push_str(&cells.join(sep));
                s.push('\n');
            }
            s
        })
}

// ----- mutations

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Insert(usize, char),
    Replace(usize, char),
    Duplicate(usize, usize, usize),
    SwapLines(usize, usize),
    DropLine(usize),
    InsertLine(usize, String),
    Truncate(usize),
}

fn nasty_char() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select(
            "0123456789.,;-+eE:#\n\r \t\"'()[]_NnaIif\u{0}\u{1b}\u{7f}\u{85}\u{feff}é".chars().collect::<Vec<_>>()
        ),
        any::<char>(),
    ]
}

fn nasty_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("NaN".to_string()),
        Just("inf,-inf,nan,1e309,-0".to_string()),
        Just("18446744073709551616".to_string()),
        Just("-9223372036854775809,1".to_string()),
        Just("1e400,1e-400".to_string()),
        Just("99999999999999999999999999999999999999999,1".to_string()),
        Just("9999-99-99 99:99:99.999,1,1,connected,1,1".to_string()),
        Just("2020-02-30 24:00:60.999,1".to_string()),
        Just("\u{feff}t_s,rate_mbps".to_string()),
        Just("t_s,rate_mbps,mcs,link_up,rssi_dbm,snr_db,sector".to_string()),
        Just("time_ms,mcs,sector,status,sqi,rssi".to_string()),
        Just("time (s),throughput (gbps),mcs".to_string()),
        "(time|rssi|mcs|throughput|sector) ?[(\\[][ -~\r\u{1b}]{0,12}[)\\]]?,(mcs|status)",
        Just(",,,,,".to_string()),
        "[ -~]{0,40}",
        "[0-9.,:eE+-]{0,30}",
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), nasty_char()).prop_map(|(a, c)| Mutation::Insert(a, c)),
        (any::<usize>(), nasty_char()).prop_map(|(a, c)| Mutation::Replace(a, c)),
        (any::<usize>(), 1usize..40, any::<usize>()).prop_map(|(a, n, b)| Mutation::Duplicate(a, n, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<usize>().prop_map(Mutation::DropLine),
        (any::<usize>(), nasty_line()).prop_map(|(a, l)| Mutation::InsertLine(a, l)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn split_lines(s: &[char]) -> Vec<String> {
    let txt: String = s.iter().collect();
    txt.split('\n').map(str::to_string).collect()
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for m in muts {
        let len = s.len();
        let at = |i: usize, n: usize| if n == 0 { 0 } else { i % n };
        match m {
            Mutation::Delete(i) if len > 0 => {
                s.remove(at(*i, len));
            }
            Mutation::Insert(i, c) => s.insert(at(*i, len + 1), *c),
            Mutation::Replace(i, c) if len > 0 => s[at(*i, len)] = *c,
            Mutation::Duplicate(i, n, to) if len > 0 => {
                let a = at(*i, len);
                let chunk: Vec<char> = s[a..(a + n).min(len)].to_vec();
                let to = at(*to, len + 1);
                s.splice(to..to, chunk);
            }
            Mutation::SwapLines(a, b) => {
                let mut lines = split_lines(&s);
                let n = lines.len();
                lines.swap(at(*a, n), at(*b, n));
                s = lines.join("\n").chars().collect();
            }
            Mutation::DropLine(a) => {
                let mut lines = split_lines(&s);
                let n = lines.len();
                lines.remove(at(*a, n));
                s = lines.join("\n").chars().collect();
            }
            Mutation::InsertLine(a, l) => {
                let mut lines = split_lines(&s);
                let n = lines.len();
                lines.insert(at(*a, n + 1), l.clone());
                s = lines.join("\n").chars().collect();
            }
            Mutation::Truncate(i) => s.truncate(at(*i, len + 1)),
            _ => {}
        }
    }
    s.into_iter().collect()
}

fn seed_text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(fixtures()),
        mahimahi_ms().prop_map(|v| mahimahi_text(&v)),
        csv_rows().prop_map(|r| csv_text(&r)),
        wil_text(),
    ]
}

proptest! {
    #![proptest_config(config(6000))]

    /// A valid Mahimahi trace parses; every pass carries all of its opportunities (within the
    /// rounding of one bit/s per bin); a timestamp earlier than the one before is rejected at
    /// its line.
    #[test]
    fn mahimahi_valid_and_reordered(ms in mahimahi_ms(), bin_us in 1u64..50_000, at in any::<usize>()) {
        let o = TraceOpts { bin: Time(bin_us * 1000), bytes_per_opportunity: 1504 };
        let text = mahimahi_text(&ms);
        let t = parse(&text, LABEL, TraceFormat::Mahimahi, &o).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        check_trace(&t, TraceFormat::Mahimahi, &text);
        let last = *ms.last().unwrap();
        prop_assert_eq!(t.period, Time::from_ms(last));
        let mut bits: u128 = 0;
        for (i, s) in t.steps.iter().enumerate() {
            let end = t.steps.get(i + 1).map_or(t.period, |n| n.at);
            bits += u128::from(s.set.rate_bps.unwrap()) * u128::from((end - s.at).ns());
        }
        let want = (ms.len() as u128) * 1504 * 8 * 1_000_000_000;
        let bins = u128::from(t.period.ns().div_ceil(o.bin.ns()));
        // Each bin's rate is rounded to the nearest bit/s: at most 0.5 bit/s x its length off.
        prop_assert!(bits.abs_diff(want) <= bins * u128::from(o.bin.ns()), "{} vs {}", bits, want);

        // Make one line earlier than the line before it.
        let i = 1 + at % ms.len();
        let mut bad = ms.clone();
        let prev = if i < bad.len() { bad[i - 1] } else { last };
        if prev > 0 {
            bad.insert(i, prev - 1);
            bad[i - 1] = prev;
            let text = mahimahi_text(&bad);
            if bad.windows(2).any(|w| w[1] < w[0]) {
                let e = parse(&text, LABEL, TraceFormat::Mahimahi, &o).unwrap_err();
                check_error(&e, &text);
                prop_assert!(e.message.contains("earlier than the previous"), "{}", e);
            }
        }
    }

    /// A valid mmpath CSV parses to the rows it holds; a time that goes backwards is rejected.
    #[test]
    fn csv_valid_and_reordered(rows in csv_rows(), at in any::<usize>()) {
        let text = csv_text(&rows);
        let t = parse(&text, LABEL, TraceFormat::Csv, &TraceOpts::default()).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        check_trace(&t, TraceFormat::Csv, &text);
        let total: u64 = rows.iter().map(|r| u64::from(r.dt_ms)).sum();
        prop_assert_eq!(t.period, Time::from_ms(total));
        if rows.iter().skip(1).any(|r| r.dt_ms > 0) {
            // Swap the row with the first later time to the front of the data.
            let mut lines: Vec<&str> = text.lines().collect();
            let j = 2 + rows.iter().skip(1).position(|r| r.dt_ms > 0).unwrap();
            let k = 1 + at % (j - 1);
            lines.swap(k, j);
            let bad = lines.join("\n");
            let e = parse(&bad, LABEL, TraceFormat::Csv, &TraceOpts::default()).unwrap_err();
            check_error(&e, &bad);
            prop_assert!(e.message.contains("time goes backwards"), "{}", e);
        }
    }

    /// A wil6210 log in any of its time units and separators parses to 10 ms samples.
    #[test]
    fn wil6210_valid(text in wil_text()) {
        match parse(&text, LABEL, TraceFormat::Wil6210, &TraceOpts::default()) {
            Ok(t) => {
                check_trace(&t, TraceFormat::Wil6210, &text);
                let rows = text.lines().count() as u64 - 1;
                prop_assert_eq!(t.period, Time::from_ms(10 * rows));
            }
            // Only a log whose every link cell is empty may fail.
            Err(e) => prop_assert!(e.message.contains("no row sets any value"), "{}: {:?}", e, text),
        }
    }

    /// Mutated valid traces (fixtures and generated ones): a sane trace or one clear error.
    #[test]
    fn mutated_traces(text in seed_text(), muts in prop::collection::vec(mutation(), 1..6), o in opts_strategy()) {
        parse_all(&apply(&text, &muts), &o);
    }

    /// Random lines built from number-ish pieces under each format's header.
    #[test]
    fn random_lines(head in prop::sample::select(vec!["", "t_s,rate_mbps,mcs,link_up,rssi_dbm,snr_db,sector\n", "time,mcs,sector,status,sqi,rssi\n", "timestamp,MCS,throughput (Gbps)\n"]),
                    lines in prop::collection::vec(nasty_line(), 0..12), o in opts_strategy()) {
        let text = format!("{head}{}", lines.join("\n"));
        parse_all(&text, &o);
    }
}

proptest! {
    #![proptest_config(config(2000))]

    /// Random bytes read from a file: non-UTF-8 is one error naming the line, the rest parses or fails cleanly.
    #[test]
    fn random_bytes_from_file(bytes in prop::collection::vec(any::<u8>(), 0..300), case in any::<u64>()) {
        let dir = std::env::temp_dir().join(format!("mmpath-fuzz-traces-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("t{case}.bin"));
        std::fs::write(&path, &bytes).unwrap();
        for f in TraceFormat::ALL {
            match load(&path, f, &TraceOpts::default()) {
                Ok(t) => check_trace(&t, f, &String::from_utf8_lossy(&bytes)),
                Err(e) => {
                    prop_assert_eq!(&e.file, &path.display().to_string());
                    prop_assert!(!e.to_string().contains('\n'), "{}", e);
                    if std::str::from_utf8(&bytes).is_err() {
                        prop_assert!(e.message.contains("not UTF-8"), "{}", e);
                    }
                }
            }
        }
        std::fs::remove_file(&path).unwrap();
        // Leave no folder behind (the next case makes it again).
        std::fs::remove_dir(&dir).unwrap();
    }
}
