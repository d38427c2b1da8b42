//! mmpath's own CSV trace format (docs/traces.md "mmpath CSV"): a header naming any of the
//! columns `t_s`, `rate_mbps`, `mcs`, `link_up`, `rssi_dbm`, `snr_db`, `sector`, then one row
//! per step; an empty cell keeps the previous value. Times and rates are read as exact
//! decimals. write.rs writes the same format.

use super::lex::{is_comment, numbered_lines, parse_decimal_scaled, parse_finite_f32, parse_int_in, show, Ctx};
use super::{push_step, ChannelState, Trace, TraceError, TraceFormat, TraceStep};
use crate::bounds::{MAX_RATE_BPS, MAX_RATE_MBPS};
use crate::time::{Time, MAX_USER_SECS};

pub(super) const CSV_COLUMNS: [&str; 7] = ["t_s", "rate_mbps", "mcs", "link_up", "rssi_dbm", "snr_db", "sector"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum CsvCol {
    T,
    Rate,
    Mcs,
    Up,
    Rssi,
    Snr,
    Sector,
}

const CSV_COL_KINDS: [CsvCol; 7] =
    [CsvCol::T, CsvCol::Rate, CsvCol::Mcs, CsvCol::Up, CsvCol::Rssi, CsvCol::Snr, CsvCol::Sector];

pub(super) fn parse_csv(text: &str, cx: &Ctx) -> Result<Trace, TraceError> {
    let allowed = CSV_COLUMNS.join(", ");
    let mut lines = numbered_lines(text).filter(|(_, l)| !l.trim().is_empty() && !is_comment(l));
    let Some((hn, header)) = lines.next() else {
        return Err(cx.file_err(format!(
            "empty file: expected a header row naming the columns, then one row per step (allowed columns: {allowed})"
        )));
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if names.iter().any(|c| parse_decimal_scaled(c, 0).is_some()) {
        return Err(cx.err(
            hn,
            format!(
                "missing header: the first row {} holds numbers; it must name the columns, e.g. \
                 `t_s,rate_mbps` (allowed columns: {allowed})",
                show(header)
            ),
        ));
    }
    let mut cols: Vec<CsvCol> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let Some(k) = CSV_COLUMNS.iter().position(|c| c == name) else {
            let what = if name.is_empty() {
                format!("column {} of the header has no name", i + 1)
            } else {
                format!("unknown column {}", show(name))
            };
            return Err(cx.err(hn, format!("{what} (allowed columns: {allowed})")));
        };
        if cols.contains(&CSV_COL_KINDS[k]) {
            return Err(cx.err(hn, format!("column `{name}` appears twice in the header")));
        }
        cols.push(CSV_COL_KINDS[k]);
    }
    if !cols.contains(&CsvCol::T) {
        return Err(cx.err(hn, "the header has no `t_s` column (required: seconds from the start of the trace)"));
    }
    // A column some path replays: a wired path a rate or the link status, a radio path the link
    // status, MCS or RSSI (an RSSI change re-runs its rate adaptation). SNR and sector alone are
    // only ever recorded.
    if ![CsvCol::Rate, CsvCol::Mcs, CsvCol::Up, CsvCol::Rssi].iter().any(|c| cols.contains(c)) {
        return Err(cx.err(
            hn,
            "the header needs at least one of the columns rate_mbps, mcs, link_up, rssi_dbm \
             (snr_db and sector alone are only recorded, never replayed)",
        ));
    }

    let mut steps: Vec<TraceStep> = Vec::new();
    let mut prev_t: Option<(u64, &str)> = None;
    for (rows, (n, line)) in lines.enumerate() {
        cx.check_rows(rows + 1, n)?;
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != cols.len() {
            return Err(cx.err(
                n,
                format!(
                    "row has {} cells but the header has {} columns ({}); every row needs one cell per \
                     column (empty = unchanged)",
                    cells.len(),
                    cols.len(),
                    names.join(",")
                ),
            ));
        }
        let mut step = TraceStep::new(Time::ZERO, ChannelState::default());
        for (&col, &cell) in cols.iter().zip(&cells) {
            if col == CsvCol::T {
                let ns = csv_time(cell).map_err(|why| {
                    cx.err(
                        n,
                        format!(
                            "column t_s: {why} (allowed: seconds from 0 to {MAX_USER_SECS}, e.g. 1.25, non-decreasing)"
                        ),
                    )
                })?;
                if let Some((p, ptxt)) = prev_t {
                    if ns < p {
                        return Err(cx.err(
                            n,
                            format!(
                                "column t_s: time goes backwards, {} after {} (allowed: non-decreasing times)",
                                show(cell),
                                show(ptxt)
                            ),
                        ));
                    }
                }
                prev_t = Some((ns, cell));
                step.at = Time(ns);
                continue;
            }
            if cell.is_empty() {
                continue;
            }
            let bad = |name: &str, allowed: &str| {
                cx.err(n, format!("column {name}: {} is not valid (allowed: {allowed})", show(cell)))
            };
            match col {
                CsvCol::T => {}
                CsvCol::Rate => {
                    let bps = parse_decimal_scaled(cell, 6).ok_or_else(|| {
                        bad("rate_mbps", &format!("a number of Mbit/s from 0 to {MAX_RATE_MBPS:e}; 0 = stalled"))
                    })?;
                    if bps < 0 {
                        return Err(cx.err(
                            n,
                            format!("column rate_mbps: negative rate {} (allowed: >= 0; 0 = stalled)", show(cell)),
                        ));
                    }
                    // The bound on every rate (bounds.rs), as on a path's rate_mbps.
                    let bps = u64::try_from(bps).ok().filter(|&b| b <= MAX_RATE_BPS).ok_or_else(|| {
                        cx.err(
                            n,
                            format!(
                                "column rate_mbps: {} is above {MAX_RATE_MBPS:e} Mbit/s (allowed: 0 to \
                                 {MAX_RATE_MBPS:e} Mbit/s, as a path's rate_mbps; 0 = stalled)",
                                show(cell)
                            ),
                        )
                    })?;
                    step.set.rate_bps = Some(bps);
                }
                CsvCol::Mcs => {
                    let m = parse_int_in(cell, 0, 31, false).ok_or_else(|| bad("mcs", "an integer 0-31"))?;
                    step.set.mcs = Some(m as u8);
                }
                CsvCol::Up => {
                    step.set.up = Some(match cell.to_ascii_lowercase().as_str() {
                        "1" | "true" => true,
                        "0" | "false" => false,
                        _ => return Err(bad("link_up", "0, 1, true or false")),
                    });
                }
                CsvCol::Rssi => {
                    step.set.rssi_dbm = Some(parse_finite_f32(cell).ok_or_else(|| bad("rssi_dbm", "a number of dBm"))?);
                }
                CsvCol::Snr => {
                    step.set.snr_db = Some(parse_finite_f32(cell).ok_or_else(|| bad("snr_db", "a number of dB"))?);
                }
                CsvCol::Sector => {
                    let x = parse_int_in(cell, 0, 65535, false).ok_or_else(|| bad("sector", "an integer 0-65535"))?;
                    step.set.sector = Some(x as u16);
                }
            }
        }
        push_step(&mut steps, step);
    }
    let Some(last) = steps.last() else {
        return Err(cx.err(hn, "the header is not followed by any row (allowed: at least one row)"));
    };
    Ok(Trace { period: last.at, steps, format: TraceFormat::Csv })
}

fn csv_time(cell: &str) -> Result<u64, String> {
    if cell.is_empty() {
        return Err("empty time (every row needs one)".into());
    }
    let ns = parse_decimal_scaled(cell, 9).ok_or_else(|| format!("{} is not a number", show(cell)))?;
    if ns < 0 {
        return Err(format!("{} is negative", show(cell)));
    }
    // The one bound on user-given times (time.rs MAX_USER_SECS): a row later than that could
    // never be replayed, as no run is longer.
    match u64::try_from(ns) {
        Ok(ns) if ns <= MAX_USER_SECS * 1_000_000_000 => Ok(ns),
        _ => Err(format!("{} is too large (at most {MAX_USER_SECS} s, one day)", show(cell))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::trace::testkit::*;

    /// Rates share the scenario's bound (bounds.rs): 1e7 Mbit/s is the most, said at the row.
    #[test]
    fn csv_rate_above_the_bound_is_refused() {
        let t = p("t_s,rate_mbps\n0,1e7\n", TraceFormat::Csv).unwrap();
        assert_eq!(t.steps[0].set.rate_bps, Some(MAX_RATE_BPS));
        for cell in ["1e9", "10000000.000001", "1e30"] {
            let e = err(&format!("t_s,rate_mbps\n0,1\n1,{cell}\n"), TraceFormat::Csv);
            assert_eq!(e.line, Some(3), "{e}");
            assert_eq!(
                e.message,
                format!(
                    "column rate_mbps: `{cell}` is above 1e7 Mbit/s (allowed: 0 to 1e7 Mbit/s, as a path's \
                     rate_mbps; 0 = stalled)"
                )
            );
        }
        let e = err("t_s,rate_mbps\n0,1e300\n", TraceFormat::Csv);
        assert!(e.message.ends_with("is not valid (allowed: a number of Mbit/s from 0 to 1e7; 0 = stalled)"), "{e}");
    }

    /// At most MAX_ROWS rows (a day of 1 ms rows), said at the first row past it; comments and
    /// blank lines are not rows. Shown with a bound of 3 (86.4 million rows is too many for a test).
    #[test]
    fn csv_rows_are_bounded() {
        assert_eq!(crate::link::trace::lex::MAX_ROWS, 86_400_000);
        let cx = Ctx { file: "t.csv", max_rows: 3 };
        assert!(parse_csv("t_s,rate_mbps\n0,1\n# c\n\n1,2\n2,3\n", &cx).is_ok());
        let e = parse_csv("t_s,rate_mbps\n0,1\n# c\n\n1,2\n2,3\n3,4\n", &cx).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:7: more than 3 rows (allowed: at most 3, a day of 1 ms rows; cut or resample the trace)"
        );
    }

    #[test]
    fn csv_good() {
        let text = "# a comment\n\
                    t_s,rate_mbps,link_up,mcs\n\
                    0,1000,1,\n\
                    \n\
                    0.5,,0,\n\
                    # gap\n\
                    1.25,0,true,8\n\
                    1.25,2310.5,,9\n\
                    2,,,\n";
        let t = p(text, TraceFormat::Csv).unwrap();
        assert_eq!(t.format, TraceFormat::Csv);
        assert_eq!(t.period, Time::from_secs(2));
        let s = |ms, rate_bps, up, mcs| {
            TraceStep::new(Time::from_ms(ms), ChannelState { rate_bps, up, mcs, ..Default::default() })
        };
        assert_eq!(
            t.steps,
            vec![
                s(0, Some(1_000_000_000), Some(true), None),
                s(500, None, Some(false), None),
                // Two rows at 1.25 s merge, the later cells winning.
                s(1250, Some(2_310_500_000), Some(true), Some(9)),
                s(2000, None, None, None),
            ]
        );
        let st = t.state_at(Time::from_ms(1900), false);
        assert_eq!((st.rate_bps, st.up, st.mcs), (Some(2_310_500_000), Some(true), Some(9)));
    }

    #[test]
    fn csv_columns_any_order() {
        let t = p("sector,snr_db,rssi_dbm,mcs,t_s\n12,21.5,-55,7,0.01\n", TraceFormat::Csv).unwrap();
        assert_eq!(
            t.steps,
            vec![TraceStep::new(
                Time::from_ms(10),
                ChannelState {
                    sector: Some(12),
                    snr_db: Some(21.5),
                    rssi_dbm: Some(-55.0),
                    mcs: Some(7),
                    ..Default::default()
                }
            )]
        );
    }

    #[test]
    fn csv_rssi_alone() {
        // What a radio path replays with nothing else (its rate adaptation follows the signal):
        // it was refused for want of a rate, MCS or link column.
        let t = p("t_s,rssi_dbm\n0,-50\n1.5,-66.5\n2,\n", TraceFormat::Csv).unwrap();
        let s = |ms, rssi_dbm| TraceStep::new(Time::from_ms(ms), ChannelState { rssi_dbm, ..Default::default() });
        assert_eq!(t.steps, vec![s(0, Some(-50.0)), s(1500, Some(-66.5)), s(2000, None)]);
        assert_eq!(t.period, Time::from_secs(2));
    }

    #[test]
    fn csv_errors() {
        let cases: [(&str, Option<usize>, &[&str]); 16] = [
            ("", None, &["empty file", "t_s, rate_mbps"]),
            ("# only\n", None, &["empty file"]),
            ("0,100\n1,200\n", Some(1), &["missing header", "allowed columns"]),
            ("t_s,rate_mbps,speed\n", Some(1), &["unknown column `speed`", "allowed columns: t_s, rate_mbps"]),
            ("t_s,,mcs\n", Some(1), &["column 2 of the header has no name"]),
            ("t_s,mcs,mcs\n", Some(1), &["`mcs` appears twice"]),
            ("rate_mbps,mcs\n1,2\n", Some(1), &["no `t_s` column"]),
            (
                "t_s,snr_db,sector\n0,20,3\n",
                Some(1),
                &["at least one of the columns rate_mbps, mcs, link_up, rssi_dbm"],
            ),
            ("t_s,rate_mbps\n", Some(1), &["not followed by any row"]),
            ("t_s,rate_mbps\n0,1\n0.1,fast\n", Some(3), &["column rate_mbps: `fast`", "allowed"]),
            ("t_s,rate_mbps\n0,1\n0.1,-5\n", Some(3), &["negative rate `-5`", ">= 0"]),
            ("t_s,rate_mbps\n1,1\n0.5,2\n", Some(3), &["time goes backwards", "`0.5` after `1`", "non-decreasing"]),
            ("t_s,rate_mbps\n-1,1\n", Some(2), &["column t_s: `-1` is negative", "seconds from 0 to 86400"]),
            ("t_s,rate_mbps\n0,1,2\n", Some(2), &["row has 3 cells but the header has 2 columns"]),
            ("t_s,mcs\n0,32\n", Some(2), &["column mcs: `32`", "integer 0-31"]),
            ("t_s,link_up\n0,yes\n", Some(2), &["column link_up: `yes`", "0, 1, true or false"]),
        ];
        expect_errors(TraceFormat::Csv, &cases);
        for (text, needle) in [
            ("t_s,mcs\n,3\n", "column t_s: empty time"),
            ("t_s,mcs\nsoon,3\n", "column t_s: `soon` is not a number"),
            ("t_s,mcs,rssi_dbm\n0,3,inf\n", "column rssi_dbm: `inf`"),
            ("t_s,mcs,snr_db\n0,3,x\n", "column snr_db: `x`"),
            ("t_s,mcs,sector\n0,3,70000\n", "column sector: `70000`"),
            ("t_s,mcs\n0,2.5\n", "column mcs: `2.5`"),
        ] {
            expect_errors(TraceFormat::Csv, &[(text, Some(2), &[needle])]);
        }
    }

    #[test]
    fn csv_fixtures() {
        let t = load_fixture("csv_good.csv", TraceFormat::Csv).unwrap();
        assert_eq!(t.period, Time::from_secs(3));
        assert_eq!(t.steps.len(), 5);
        assert_eq!(t.steps[0].set.rate_bps, Some(2_310_000_000));
        assert_eq!(t.steps[1].set.up, Some(false));
        assert_eq!(t.state_at(Time::from_ms(2500), false).rate_bps, Some(1_155_000_000));
        assert_eq!(t.state_at(Time::from_ms(3100), true).rate_bps, Some(2_310_000_000));
        let cases = [
            ("csv_no_header.csv", Some(2), "missing header"),
            ("csv_unknown_column.csv", Some(1), "unknown column `throughput`"),
            ("csv_missing_t.csv", Some(1), "no `t_s` column"),
            ("csv_bad_number.csv", Some(4), "column mcs: `high`"),
            ("csv_negative_rate.csv", Some(3), "negative rate"),
            ("csv_backwards.csv", Some(4), "time goes backwards"),
            ("csv_cell_count.csv", Some(3), "row has 2 cells"),
        ];
        for (name, line, needle) in cases {
            let e = load_fixture(name, TraceFormat::Csv).unwrap_err();
            assert_eq!(e.line, line, "{name}: {e}");
            assert!(e.message.contains(needle), "{name}: {e}");
        }
    }
}
