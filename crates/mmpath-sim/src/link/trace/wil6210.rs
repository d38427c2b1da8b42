//! wil6210 per-10 ms logs as in the NUWiNS 60 GHz dataset (docs/traces.md "wil6210 / NUWiNS"):
//! columns mapped by their header names, sensor columns ignored, a headerless default layout.
//! Sources: the dataset's README (NUWiNS/pam2021-60ghz-throughput-prediction-data; Aggarwal et
//! al., PAM 2021: one row every 10 ms with MCS, Tx Sector, Link Status, SQI and RSSI); the
//! meaning of the values from the Linux driver drivers/net/wireless/ath/wil6210 (wil6210.h:
//! enum wil_sta_status, WIL_EXTENDED_MCS_26; debugfs.c: the `link` and `bf` files). The header
//! names and the headerless layout are mmpath's guess (the dataset's files are Git LFS objects
//! that could not be read; docs/traces.md).
//! The time column (units, clock times) is in wil6210/times.rs.

mod times;

use super::lex::{is_comment, numbered_lines, parse_decimal_scaled, parse_finite_f32, parse_int_in, show, Ctx};
use super::{push_step, ChannelState, Trace, TraceError, TraceFormat, TraceStep};
use crate::time::Time;
use times::{wil_times, TimeUnit, WilTimes};

/// Sample interval of the NUWiNS dataset ("data for every 10 ms (each row)", its README); also
/// the spacing assumed when a file has no time column.
const WIL_ROW_INTERVAL: Time = Time::from_ms(10);

/// Extended MCS 12.1: the firmware reports it to the driver as 26 (wil6210.h,
/// WIL_EXTENDED_MCS_26) and debugfs prints it as "12.1".
const WIL_EXTENDED_MCS_12_1: u8 = 26;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum WilCol {
    Time(TimeUnit),
    Mcs,
    Sector,
    Status,
    Sqi,
    Rssi,
    /// Measured throughput with an explicit unit, in bit/s per unit.
    Throughput(u64),
    Ignored,
}

impl WilCol {
    fn name(self) -> &'static str {
        match self {
            WilCol::Time(_) => "time",
            WilCol::Mcs => "mcs",
            WilCol::Sector => "sector",
            WilCol::Status => "status",
            WilCol::Sqi => "sqi",
            WilCol::Rssi => "rssi",
            WilCol::Throughput(_) => "throughput",
            WilCol::Ignored => "ignored",
        }
    }
}

const WIL_TIME_NAMES: [&str; 8] = ["time", "timestamp", "t", "ts", "datetime", "epoch", "epochtime", "unixtime"];
const WIL_MCS_NAMES: [&str; 4] = ["mcs", "txmcs", "bfmcs", "mcsindex"];
const WIL_SECTOR_NAMES: [&str; 5] = ["sector", "txsector", "mytxsector", "txsectorid", "sectorid"];
const WIL_STATUS_NAMES: [&str; 6] = ["status", "linkstatus", "link", "state", "linkstate", "connectionstatus"];
const WIL_SQI_NAMES: [&str; 4] = ["sqi", "signalqualityindicator", "signalquality", "sq"];
const WIL_RSSI_NAMES: [&str; 2] = ["rssi", "signalstrength"];
const WIL_THROUGHPUT_NAMES: [&str; 3] = ["throughput", "tput", "goodput"];

const UNIT_WORDS: [&str; 16] = [
    "s", "sec", "secs", "seconds", "ms", "msec", "us", "usec", "ns", "nsec", "dbm", "db", "bps", "kbps", "mbps", "gbps",
];

/// Splits a header name into a key (lowercase letters and digits only) and an optional unit:
/// `Time (ms)` -> ("time", "ms"), `rssi_dbm` -> ("rssi", "dbm"), `Tx Sector` -> ("txsector", -).
fn split_header(raw: &str) -> (String, Option<String>) {
    let lower = raw.to_ascii_lowercase();
    let (base, mut unit) = match lower.find(['(', '[']) {
        Some(i) => {
            let inner: String = lower[i + 1..].chars().take_while(|&c| c != ')' && c != ']').collect();
            (lower[..i].to_string(), Some(inner.trim().to_string()))
        }
        None => (lower, None),
    };
    let mut words: Vec<&str> = base.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    if unit.is_none() && words.len() >= 2 {
        if let Some(w) = words.last().filter(|w| UNIT_WORDS.contains(w)) {
            unit = Some(w.to_string());
            words.pop();
        }
    }
    (words.concat(), unit)
}

/// Maps a header cell to a column; `Err` for a known column with a unit it cannot take.
fn wil_column(raw: &str) -> Result<WilCol, String> {
    let (key, unit) = split_header(raw);
    let unit = unit.as_deref();
    let bad_unit = |allowed: &str| {
        Err(format!("column {} has unit {} (allowed: {allowed})", show(raw), show(unit.unwrap_or_default())))
    };
    let k = key.as_str();
    if WIL_TIME_NAMES.contains(&k) {
        return Ok(WilCol::Time(match unit {
            None => TimeUnit::Infer,
            Some("s" | "sec" | "secs" | "seconds") => TimeUnit::S,
            Some("ms" | "msec") => TimeUnit::Ms,
            Some("us" | "usec") => TimeUnit::Us,
            Some("ns" | "nsec") => TimeUnit::Ns,
            // A time zone or clock name is not a unit: infer it.
            Some("utc" | "gmt" | "local" | "epoch" | "unix") => TimeUnit::Infer,
            Some(_) => return bad_unit("s, ms, us, ns"),
        }));
    }
    if WIL_MCS_NAMES.contains(&k) {
        return if unit.is_none() { Ok(WilCol::Mcs) } else { bad_unit("none") };
    }
    if WIL_SECTOR_NAMES.contains(&k) {
        return if unit.is_none() { Ok(WilCol::Sector) } else { bad_unit("none") };
    }
    if WIL_STATUS_NAMES.contains(&k) {
        return if unit.is_none() { Ok(WilCol::Status) } else { bad_unit("none") };
    }
    if WIL_SQI_NAMES.contains(&k) {
        return Ok(WilCol::Sqi);
    }
    if WIL_RSSI_NAMES.contains(&k) {
        return match unit {
            None | Some("dbm") => Ok(WilCol::Rssi),
            Some(_) => bad_unit("dBm"),
        };
    }
    if WIL_THROUGHPUT_NAMES.contains(&k) {
        return Ok(match unit {
            Some("bps") => WilCol::Throughput(1),
            Some("kbps") => WilCol::Throughput(1_000),
            Some("mbps") => WilCol::Throughput(1_000_000),
            Some("gbps") => WilCol::Throughput(1_000_000_000),
            // A throughput without a unit is ambiguous: ignored (docs/traces.md).
            None => WilCol::Ignored,
            Some(_) => return bad_unit("bps, kbps, Mbps, Gbps"),
        });
    }
    Ok(WilCol::Ignored)
}

fn wil_missing(cell: &str) -> bool {
    matches!(cell.to_ascii_lowercase().as_str(), "" | "nan" | "na" | "n/a" | "null" | "none" | "-")
}

/// Cells of a row: the separator is picked from the first line (comma, else tab, else
/// semicolon, else runs of whitespace); surrounding double quotes are removed.
fn wil_cells(line: &str, sep: Option<char>) -> Vec<&str> {
    fn clean(c: &str) -> &str {
        let c = c.trim();
        c.strip_prefix('"').and_then(|x| x.strip_suffix('"')).unwrap_or(c).trim()
    }
    match sep {
        Some(ch) => line.split(ch).map(clean).collect(),
        None => line.split_whitespace().map(clean).collect(),
    }
}

/// Link status: `connected` (the wil6210 debugfs word), `up` or `true` -> up; any other word
/// (`unused`, `pending`, `disconnected`, ...) -> down. Numbers follow the driver's enum
/// wil_sta_status: 0 unused, 1 pending, 2 connected.
fn wil_status(cell: &str) -> Option<bool> {
    let c = cell.to_ascii_lowercase();
    match c.as_str() {
        "connected" | "up" | "true" => return Some(true),
        "0" | "1" => return Some(false),
        "2" => return Some(true),
        _ => {}
    }
    if let Some(v) = parse_decimal_scaled(&c, 3) {
        return match v {
            0 | 1000 => Some(false),
            2000 => Some(true),
            _ => None,
        };
    }
    let wordy = c.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ' || b == b'_' || b == b'-');
    wordy.then_some(false)
}

fn wil_mcs(cell: &str) -> Option<u8> {
    if cell == "12.1" {
        return Some(WIL_EXTENDED_MCS_12_1);
    }
    parse_int_in(cell, 0, 31, true).map(|v| v as u8)
}

/// A data row before its time is resolved (wil6210/times.rs needs all rows for that).
struct WilRow<'a> {
    line: usize,
    time: Option<&'a str>,
    set: ChannelState,
    /// Validated, kept for the analyzer only: SQI is not documented as an SNR in dB.
    sqi: Option<f32>,
}

/// The data rows of a log with their times resolved; `first_n` is the first line's number.
struct WilRows<'a> {
    rows: Vec<WilRow<'a>>,
    times: WilTimes,
    first_n: usize,
}

pub(super) fn parse_wil6210(text: &str, cx: &Ctx) -> Result<Trace, TraceError> {
    let WilRows { rows, times, first_n } = wil_rows(text, cx)?;
    let mut steps: Vec<TraceStep> = Vec::with_capacity(rows.len());
    for (row, &t) in rows.iter().zip(&times.times) {
        push_step(&mut steps, TraceStep::new(Time(t), row.set));
    }
    // Drop rows that change nothing (most 10 ms samples of a static link).
    let mut st = ChannelState::default();
    steps.retain(|s| st.apply(&s.set));
    if steps.is_empty() {
        return Err(cx.err(
            first_n,
            "no row sets any value: every link cell is empty or NaN (allowed: at least one MCS, status, \
             sector, RSSI or throughput value)",
        ));
    }
    let last_t = times.times.last().copied().unwrap_or(0);
    let period = Time(last_t.saturating_add(times.interval));
    Ok(Trace { steps, period, format: TraceFormat::Wil6210 })
}

/// A wil6210 log row by row, for the analyzer (`mmpath analyze`, python/mmpath/analyze/wil6210.py),
/// which keeps every sample where a trace keeps only the changes. Each field is None where its
/// row leaves the cell empty (or the log has no such column).
#[derive(Clone, Debug, PartialEq)]
pub struct Wil6210Log {
    /// Each row's time in seconds from the first row's.
    pub t_s: Vec<f64>,
    /// The first row's own time in seconds (see `clock_times`); None without a time column.
    pub first_s: Option<f64>,
    /// The times are clock times (`HH:MM:SS`, `first_s` since midnight or 1970) rather than numbers.
    pub clock_times: bool,
    /// The time column's unit (from the header, else inferred from the row spacing); None for
    /// clock times or without a time column.
    pub time_unit: Option<&'static str>,
    pub mcs: Vec<Option<u8>>,
    pub sector: Vec<Option<u16>>,
    pub up: Vec<Option<bool>>,
    pub sqi: Vec<Option<f32>>,
    pub rssi_dbm: Vec<Option<f32>>,
    pub rate_bps: Vec<Option<u64>>,
}

/// Reads a wil6210 log with the same rules and errors as a wil6210 trace (docs/traces.md).
pub fn read_wil6210_log(text: &str, file_label: &str) -> Result<Wil6210Log, TraceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let cx = Ctx { file: file_label, max_rows: super::lex::MAX_ROWS };
    let WilRows { rows, times, .. } = wil_rows(text, &cx)?;
    let has_time = rows.first().is_some_and(|r| r.time.is_some());
    Ok(Wil6210Log {
        t_s: times.times.iter().map(|&t| t as f64 / 1e9).collect(),
        first_s: has_time.then(|| times.first_ns as f64 / 1e9),
        clock_times: times.clock,
        time_unit: if has_time { times.unit } else { None },
        mcs: rows.iter().map(|r| r.set.mcs).collect(),
        sector: rows.iter().map(|r| r.set.sector).collect(),
        up: rows.iter().map(|r| r.set.up).collect(),
        sqi: rows.iter().map(|r| r.sqi).collect(),
        rssi_dbm: rows.iter().map(|r| r.set.rssi_dbm).collect(),
        rate_bps: rows.iter().map(|r| r.set.rate_bps).collect(),
    })
}

/// The name a header cell maps to (`time`, `mcs`, `sector`, `status`, `sqi`, `rssi`,
/// `throughput`), None for a column the parser ignores (a sensor's, a throughput without a
/// unit); for the analyzer's detection of a log's kind from its first line.
pub fn wil6210_column(cell: &str) -> Option<&'static str> {
    match wil_column(cell) {
        Ok(WilCol::Ignored) => None,
        Ok(col) => Some(col.name()),
        // A known column with a unit it cannot take is still that column (reading says why).
        Err(_) => {
            let (key, _) = split_header(cell);
            let names: [(&[&str], &str); 7] = [
                (&WIL_TIME_NAMES, "time"),
                (&WIL_MCS_NAMES, "mcs"),
                (&WIL_SECTOR_NAMES, "sector"),
                (&WIL_STATUS_NAMES, "status"),
                (&WIL_SQI_NAMES, "sqi"),
                (&WIL_RSSI_NAMES, "rssi"),
                (&WIL_THROUGHPUT_NAMES, "throughput"),
            ];
            names.into_iter().find(|(list, _)| list.contains(&key.as_str())).map(|(_, n)| n)
        }
    }
}

fn wil_rows<'a>(text: &'a str, cx: &Ctx) -> Result<WilRows<'a>, TraceError> {
    let mut lines = numbered_lines(text).filter(|(_, l)| !l.trim().is_empty() && !is_comment(l)).peekable();
    let Some(&(first_n, first)) = lines.peek() else {
        return Err(cx.file_err(
            "empty file (allowed: a header naming the columns, e.g. time_ms,mcs,sector,status,sqi,rssi, \
             then one row per sample)",
        ));
    };
    let sep = [',', '\t', ';'].into_iter().find(|&c| first.contains(c));
    let first_cells = wil_cells(first, sep);

    // A header if any cell names a known column; else the headerless default layout.
    let mut mapped: Vec<Result<WilCol, String>> = first_cells.iter().map(|c| wil_column(c)).collect();
    let is_header = mapped.iter().any(|m| !matches!(m, Ok(WilCol::Ignored)));
    let cols: Vec<WilCol> = if is_header {
        lines.next();
        let mut cols = Vec::with_capacity(mapped.len());
        for (i, m) in mapped.drain(..).enumerate() {
            let col = m.map_err(|e| cx.err(first_n, e))?;
            if col != WilCol::Ignored {
                if let Some(j) = cols.iter().position(|c: &WilCol| c.name() == col.name()) {
                    return Err(cx.err(
                        first_n,
                        format!(
                            "columns {} and {} both map to `{}` (allowed: one column each; rename or drop one)",
                            show(first_cells[j]),
                            show(first_cells[i]),
                            col.name()
                        ),
                    ));
                }
            }
            cols.push(col);
        }
        if !cols.iter().any(|c| matches!(c, WilCol::Mcs | WilCol::Status | WilCol::Throughput(_))) {
            return Err(cx.err(
                first_n,
                format!(
                    "no link column in the header (need at least one of: MCS [{}], status [{}], \
                     throughput with a unit, e.g. throughput_mbps)",
                    WIL_MCS_NAMES.join(", "),
                    WIL_STATUS_NAMES.join(", ")
                ),
            ));
        }
        cols
    } else {
        use WilCol::*;
        match first_cells.len() {
            6 => vec![Time(TimeUnit::Infer), Mcs, Sector, Status, Sqi, Rssi],
            5 => vec![Mcs, Sector, Status, Sqi, Rssi],
            n => {
                return Err(cx.err(
                    first_n,
                    format!(
                        "the first line is neither a header naming the columns (e.g. time_ms,mcs,sector,status,sqi,rssi) \
                         nor a headerless row of 5 or 6 cells (mcs,sector,status,sqi,rssi with an optional leading \
                         time); it has {n} cells"
                    ),
                ));
            }
        }
    };
    let time_unit = cols.iter().find_map(|c| match c {
        WilCol::Time(u) => Some(*u),
        _ => None,
    });

    let mut rows: Vec<WilRow> = Vec::new();
    for (n, line) in lines {
        cx.check_rows(rows.len() + 1, n)?;
        let cells = wil_cells(line, sep);
        if cells.len() != cols.len() {
            return Err(cx.err(
                n,
                format!(
                    "row has {} cells but {} {} columns (allowed: one cell per column; empty or NaN = unchanged)",
                    cells.len(),
                    if is_header { "the header has" } else { "the first row has" },
                    cols.len()
                ),
            ));
        }
        let mut row = WilRow { line: n, time: None, set: ChannelState::default(), sqi: None };
        for (&col, &cell) in cols.iter().zip(&cells) {
            if let WilCol::Time(_) = col {
                if wil_missing(cell) {
                    return Err(cx.err(n, format!("empty time {} (every row needs one)", show(cell))));
                }
                row.time = Some(cell);
                continue;
            }
            if wil_missing(cell) {
                continue;
            }
            let bad = |allowed: &str| {
                cx.err(n, format!("column {}: {} is not valid (allowed: {allowed})", col.name(), show(cell)))
            };
            match col {
                WilCol::Mcs => {
                    row.set.mcs = Some(wil_mcs(cell).ok_or_else(|| bad("an MCS index 0-31, or 12.1"))?);
                }
                WilCol::Sector => {
                    let v = parse_int_in(cell, 0, 65535, true).ok_or_else(|| bad("an integer 0-65535"))?;
                    row.set.sector = Some(v as u16);
                }
                WilCol::Status => {
                    row.set.up = Some(wil_status(cell).ok_or_else(|| {
                        bad("a word such as connected / pending / unused, or the driver's code 0 unused, 1 pending, 2 connected")
                    })?);
                }
                WilCol::Sqi => {
                    // Not a channel field (SQI is not documented as an SNR in dB): kept on the
                    // row for the analyzer only.
                    row.sqi = Some(parse_finite_f32(cell).ok_or_else(|| bad("a number"))?);
                }
                WilCol::Rssi => {
                    row.set.rssi_dbm = Some(parse_finite_f32(cell).ok_or_else(|| bad("a number of dBm"))?);
                }
                WilCol::Throughput(per_unit) => {
                    let v = parse_decimal_scaled(cell, 6)
                        .filter(|v| *v >= 0)
                        .ok_or_else(|| bad("a throughput >= 0 in the column's unit"))?;
                    let bps = v.checked_mul(i128::from(per_unit)).map(|x| (x + 500_000) / 1_000_000);
                    let bps = bps.and_then(|x| u64::try_from(x).ok()).ok_or_else(|| bad("a smaller throughput"))?;
                    row.set.rate_bps = Some(bps);
                }
                WilCol::Time(_) | WilCol::Ignored => {}
            }
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(cx.err(first_n, "no data rows (allowed: at least one row after the header)"));
    }

    // Times: from the time column (relative to the first row), else row number x 10 ms.
    let times = match time_unit {
        None => WilTimes {
            times: (0..rows.len() as u64).map(|i| i.saturating_mul(WIL_ROW_INTERVAL.ns())).collect(),
            interval: WIL_ROW_INTERVAL.ns(),
            first_ns: 0,
            clock: false,
            unit: None,
        },
        Some(unit) => wil_times(&rows, unit, cx)?,
    };
    Ok(WilRows { rows, times, first_n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::trace::testkit::*;

    fn wil_step(ms: u64, mcs: Option<u8>, sector: Option<u16>, up: Option<bool>, rssi: Option<f32>) -> TraceStep {
        TraceStep::new(Time::from_ms(ms), ChannelState { mcs, sector, up, rssi_dbm: rssi, ..Default::default() })
    }

    /// At most MAX_ROWS data rows, as in CSV (shown with a bound of 2).
    #[test]
    fn wil_rows_are_bounded() {
        let cx = Ctx { file: "w.csv", max_rows: 2 };
        let log = "MCS,Link_Status\n9,connected\n8,connected\n";
        assert!(parse_wil6210(log, &cx).is_ok());
        let e = parse_wil6210(&format!("{log}7,connected\n"), &cx).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.starts_with("more than 2 rows (allowed: at most 2, a day of 1 ms rows"), "{e}");
    }

    #[test]
    fn wil6210_header_maps_columns_and_ignores_sensors() {
        let text = "Timestamp,Azimuth,Pitch,Roll,AccX,AccY,AccZ,MCS,Tx Sector,Link Status,SQI,RSSI\n\
                    1597345123.000,10,2,3,0.1,0.2,9.8,8,12,connected,70,-60\n\
                    1597345123.010,11,2,3,0.1,0.2,9.8,8,12,connected,70,-60\n\
                    1597345123.020,12,2,3,0.1,0.2,9.8,9,13,connected,72,-58\n\
                    1597345123.030,13,2,3,0.1,0.2,9.8,,,pending,,\n";
        let t = p(text, TraceFormat::Wil6210).unwrap();
        assert_eq!(t.format, TraceFormat::Wil6210);
        assert_eq!(
            t.steps,
            vec![
                wil_step(0, Some(8), Some(12), Some(true), Some(-60.0)),
                // 10 ms repeats the same values: dropped.
                wil_step(20, Some(9), Some(13), Some(true), Some(-58.0)),
                wil_step(30, None, None, Some(false), None),
            ]
        );
        // Last row + one 10 ms sample.
        assert_eq!(t.period, Time::from_ms(40));
        assert!(t.steps.iter().all(|s| s.set.snr_db.is_none() && s.set.rate_bps.is_none()));
    }

    #[test]
    fn wil6210_log_keeps_every_row_its_sqi_and_its_first_time() {
        let text = "Timestamp,MCS,Tx Sector,Link Status,SQI,RSSI\n\
                    1597345123.000,8,12,connected,70,-60\n\
                    1597345123.010,8,12,connected,70,-60\n\
                    1597345123.020,,,pending,,\n";
        let log = read_wil6210_log(text, "w.csv").unwrap();
        assert_eq!(log.t_s, vec![0.0, 0.01, 0.02]);
        assert_eq!(log.first_s, Some(1_597_345_123.0));
        assert!(!log.clock_times);
        assert_eq!(log.time_unit, Some("s"));
        assert_eq!(log.mcs, vec![Some(8), Some(8), None]);
        assert_eq!(log.up, vec![Some(true), Some(true), Some(false)]);
        assert_eq!(log.sqi, vec![Some(70.0), Some(70.0), None]);
        // Without a time column: row i at i x 10 ms, no first time.
        let log = read_wil6210_log("8,12,connected,70,-60\n9,12,connected,70,-61\n", "w.csv").unwrap();
        assert_eq!((log.t_s, log.first_s, log.time_unit), (vec![0.0, 0.01], None, None));
        // The same errors as the trace parser.
        let e = read_wil6210_log("time_ms,mcs,status\n0,8,connected\n10,40,connected\n", "w.csv").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert_eq!(wil6210_column("Tx Sector"), Some("sector"));
        assert_eq!(wil6210_column("Azimuth"), None);
        assert_eq!(wil6210_column("RSSI [W]"), Some("rssi"));
    }

    #[test]
    fn wil6210_headerless_layouts() {
        // 5 cells: row index x 10 ms.
        let t =
            p("8,12,connected,70,-60\n8,12,connected,70,-60\n9,12,connected,70,-60\n", TraceFormat::Wil6210).unwrap();
        assert_eq!(t.steps.iter().map(|s| s.at).collect::<Vec<_>>(), vec![Time::ZERO, Time::from_ms(20)]);
        assert_eq!(t.period, Time::from_ms(30));
        // 6 cells, tab separated, leading time (ms inferred from the 10 ms spacing).
        let t = p("100\t8\t12\tconnected\t70\t-60\n110\t12.1\t13\t2\t70\t-60\n", TraceFormat::Wil6210).unwrap();
        assert_eq!(t.steps[1], wil_step(10, Some(26), Some(13), Some(true), Some(-60.0)));
        // Whitespace separated with numeric driver status codes.
        let t = p("0 8 1 0 0 -70\n10 8 1 2 0 -70\n20 8 1 1 0 -70\n", TraceFormat::Wil6210).unwrap();
        let ups: Vec<_> = t.steps.iter().map(|s| s.set.up).collect();
        assert_eq!(ups, vec![Some(false), Some(true), Some(false)]);
    }

    #[test]
    fn wil6210_status_words() {
        for (w, up) in
            [("connected", true), ("Connected", true), ("unused", false), ("pending", false), ("not connected", false)]
        {
            let t = p(&format!("mcs,status\n1,{w}\n"), TraceFormat::Wil6210).unwrap();
            assert_eq!(t.steps[0].set.up, Some(up), "{w}");
        }
        // pandas-style floats and NaN gaps.
        let t =
            p(",time_s,mcs,sector,status\n0,0.0,8.0,12.0,connected\n1,0.01,NaN,nan,\n", TraceFormat::Wil6210).unwrap();
        assert_eq!(t.steps, vec![wil_step(0, Some(8), Some(12), Some(true), None)]);
        assert_eq!(t.period, Time::from_ms(20));
    }

    #[test]
    fn wil6210_throughput_with_unit_becomes_rate() {
        let t = p("time_ms,throughput_mbps,mcs\n0,1520.5,8\n10,0,8\n", TraceFormat::Wil6210).unwrap();
        assert_eq!(t.steps[0].set.rate_bps, Some(1_520_500_000));
        assert_eq!(t.steps[1].set.rate_bps, Some(0));
        // Unitless throughput is ignored (ambiguous).
        let t = p("time_ms,throughput,mcs\n0,1520.5,8\n", TraceFormat::Wil6210).unwrap();
        assert_eq!(t.steps[0].set.rate_bps, None);
    }

    #[test]
    fn wil6210_errors() {
        let cases: [(&str, Option<usize>, &[&str]); 13] = [
            ("", None, &["empty file", "time_ms,mcs,sector,status,sqi,rssi"]),
            ("1,2,3\n", Some(1), &["neither a header", "5 or 6 cells", "it has 3 cells"]),
            ("time_ms,azimuth,sqi\n0,1,2\n", Some(1), &["no link column", "mcs"]),
            ("time_ms,mcs,tx_mcs\n0,1,2\n", Some(1), &["both map to `mcs`"]),
            ("time (fortnights),mcs\n0,1\n", Some(1), &["unit `fortnights`", "s, ms, us, ns"]),
            ("mcs,status\n", Some(1), &["no data rows"]),
            ("time_ms,mcs\n0,1\n10,40\n", Some(3), &["column mcs: `40`", "0-31"]),
            ("time_ms,mcs,status\n0,1,3\n", Some(2), &["column status: `3`", "2 connected"]),
            ("time_ms,mcs\n10,1\n5,1\n", Some(3), &["time `5` goes backwards", "non-decreasing"]),
            ("time_ms,mcs\n0,1,2\n", Some(2), &["row has 3 cells but the header has 2"]),
            ("time_ms,mcs\n,1\n", Some(2), &["empty time"]),
            ("time_ms,mcs,status\n0,NaN,\n10,,nan\n", Some(1), &["no row sets any value"]),
            ("timestamp,mcs\n0,1\n0.0001,1\n", Some(2), &["cannot tell the unit", "time_ms"]),
        ];
        expect_errors(TraceFormat::Wil6210, &cases);
        for (text, needle) in [
            ("time_ms,mcs,sector\n0,1,-3\n", "column sector: `-3`"),
            ("time_ms,mcs,rssi\n0,1,strong\n", "column rssi: `strong`"),
            ("time_ms,mcs,sqi\n0,1,?\n", "column sqi: `?`"),
            ("time,mcs\n25:00:00,1\n", "not valid"),
            ("time_ms,mcs,throughput_mbps\n0,1,-1\n", "column throughput: `-1`"),
        ] {
            expect_errors(TraceFormat::Wil6210, &[(text, Some(2), &[needle])]);
        }
        // Found by tests/fuzz_traces.rs: the unit was echoed raw (control characters, any length).
        let e = err("time (\u{1b}[2J\r),mcs\n0,1\n", TraceFormat::Wil6210);
        assert!(e.message.contains("has unit `\\u{1b}[2j`"), "{e}");
        assert!(!e.message.chars().any(char::is_control), "{e}");
        let e = err(&format!("rssi ({}),mcs\n0,1\n", "u".repeat(500)), TraceFormat::Wil6210);
        assert!(e.message.len() < 300, "{e}");
    }

    #[test]
    fn wil6210_fixtures() {
        let t = load_fixture("wil6210_good.csv", TraceFormat::Wil6210).unwrap();
        assert_eq!(t.period, Time::from_ms(80));
        assert_eq!(t.steps[0], wil_step(0, Some(9), Some(20), Some(true), Some(-54.0)));
        let down = t.steps.iter().find(|s| s.set.up == Some(false)).unwrap();
        assert_eq!(down.at, Time::from_ms(40));
        assert_eq!(t.state_at(Time::from_ms(75), false).mcs, Some(6));
        assert_eq!(t.state_at(Time::from_ms(85), true).mcs, Some(9));
        let t = load_fixture("wil6210_headerless.txt", TraceFormat::Wil6210).unwrap();
        assert_eq!(t.period, Time::from_ms(40));
        assert_eq!(t.steps.last().unwrap().set.up, Some(false));
        let cases = [
            ("wil6210_bad_mcs.csv", Some(3), "column mcs: `fast`"),
            ("wil6210_bad_status.csv", Some(2), "column status: `7`"),
            ("wil6210_no_link_column.csv", Some(1), "no link column"),
        ];
        for (name, line, needle) in cases {
            let e = load_fixture(name, TraceFormat::Wil6210).unwrap_err();
            assert_eq!(e.line, line, "{name}: {e}");
            assert!(e.message.contains(needle), "{name}: {e}");
        }
    }
}
