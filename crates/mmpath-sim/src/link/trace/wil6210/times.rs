//! The time column of a wil6210 log: its unit (from the header, or inferred from the row
//! spacing, as the NUWiNS dataset logs every 10 ms), clock times `[YYYY-MM-DD ]HH:MM:SS[.fff]`
//! (dates by H. Hinnant's days_from_civil, "chrono-Compatible Low-Level Date Algorithms"), and
//! the per-row times and sample interval the steps and the period are built from.

use super::{WilRow, WIL_ROW_INTERVAL};
use crate::link::trace::lex::{parse_decimal_scaled, show, Ctx};
use crate::link::trace::TraceError;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum TimeUnit {
    S,
    Ms,
    Us,
    Ns,
    Infer,
}

impl TimeUnit {
    fn name(self) -> Option<&'static str> {
        match self {
            TimeUnit::S => Some("s"),
            TimeUnit::Ms => Some("ms"),
            TimeUnit::Us => Some("us"),
            TimeUnit::Ns => Some("ns"),
            TimeUnit::Infer => None,
        }
    }

    fn ns(self) -> i128 {
        match self {
            TimeUnit::S | TimeUnit::Infer => 1_000_000_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::Us => 1_000,
            TimeUnit::Ns => 1,
        }
    }
}

/// `[YYYY-MM-DD( |T)]HH:MM:SS[.fff][Z]` -> ns since 1970-01-01 (or since midnight without a date).
fn parse_clock_ns(s: &str) -> Option<i128> {
    let s = s.strip_suffix('Z').unwrap_or(s);
    let (date, clock) = match s.find([' ', 'T']) {
        Some(i) => (Some(&s[..i]), s[i + 1..].trim_start()),
        None => (None, s),
    };
    let num = |p: &str, max: i64| -> Option<i64> {
        if p.is_empty() || p.len() > 4 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        p.parse::<i64>().ok().filter(|v| *v <= max)
    };
    let days = match date {
        None => 0,
        Some(d) => {
            let mut it = d.split('-');
            let (y, m, dd) = (it.next()?, it.next()?, it.next()?);
            if it.next().is_some() {
                return None;
            }
            let (y, m, dd) = (num(y, 9999)?, num(m, 12)?, num(dd, 31)?);
            if m == 0 || dd == 0 {
                return None;
            }
            days_from_civil(y, m, dd)
        }
    };
    let mut it = clock.split(':');
    let (h, mi, sec) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some() {
        return None;
    }
    let (h, mi) = (num(h, 24)?, num(mi, 59)?);
    if !sec.bytes().next()?.is_ascii_digit() {
        return None;
    }
    let sec_ns = parse_decimal_scaled(sec, 9)?;
    if !(0..61_000_000_000).contains(&sec_ns) {
        return None;
    }
    Some(i128::from((days * 24 + h) * 3600 + mi * 60) * 1_000_000_000 + sec_ns)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The time column resolved: per-row times in ns from the first row, the sample interval (median
/// spacing), and for the analyzer the first row's own time and how the column was read.
pub(super) struct WilTimes {
    pub(super) times: Vec<u64>,
    pub(super) interval: u64,
    /// The first row's time in ns: since 1970 for Unix times (or a clock time with a date), since
    /// midnight for a clock time without one.
    pub(super) first_ns: i128,
    /// Clock times (`HH:MM:SS`) rather than numbers.
    pub(super) clock: bool,
    /// The unit named by the header, else the inferred one for numbers; None for clock times.
    pub(super) unit: Option<&'static str>,
}

/// Per-row times in ns from the first row, and the sample interval (median spacing).
pub(super) fn wil_times(rows: &[WilRow], unit: TimeUnit, cx: &Ctx) -> Result<WilTimes, TraceError> {
    // Raw values: numbers in units of 1e-9 of the column's unit, or clock times in ns.
    let mut raw: Vec<i128> = Vec::with_capacity(rows.len());
    let mut clock: Option<bool> = None;
    for r in rows {
        let cell = r.time.unwrap_or_default();
        let is_clock = cell.contains(':');
        if clock.is_some_and(|c| c != is_clock) {
            return Err(cx.err(
                r.line,
                format!("time {} mixes clock times and plain numbers in one column (allowed: one kind)", show(cell)),
            ));
        }
        clock = Some(is_clock);
        let v = if is_clock { parse_clock_ns(cell) } else { parse_decimal_scaled(cell, 9) };
        let v = v.ok_or_else(|| {
            cx.err(
                r.line,
                format!(
                    "time {} is not valid (allowed: a number in the column's unit, or a clock time \
                     [YYYY-MM-DD ]HH:MM:SS[.fff])",
                    show(cell)
                ),
            )
        })?;
        if let Some(&prev) = raw.last() {
            if v < prev {
                return Err(
                    cx.err(r.line, format!("time {} goes backwards (allowed: non-decreasing times)", show(cell)))
                );
            }
        }
        raw.push(v);
    }
    // ns per raw unit, as a ratio num / 1e9 (raw numbers carry a 1e9 scale; clock times are ns).
    let mut diffs: Vec<i128> = raw.windows(2).map(|w| w[1].saturating_sub(w[0])).filter(|d| *d > 0).collect();
    diffs.sort_unstable();
    let median = diffs.get(diffs.len() / 2).copied();
    let unit_ns: i128 = if clock == Some(true) {
        1_000_000_000 // raw already ns; dividing by 1e9 below undoes the 1e9 scale
    } else if unit != TimeUnit::Infer {
        unit.ns()
    } else {
        match median {
            None => 1_000_000_000,
            Some(d) => {
                // Pick the unit that puts the rows 1 ms - 1 s apart (the dataset logs every 10 ms).
                let ok = [1_000_000_000i128, 1_000_000, 1_000, 1]
                    .into_iter()
                    .find(|u| (1_000_000..1_000_000_000).contains(&(d.saturating_mul(*u) / 1_000_000_000)));
                ok.ok_or_else(|| {
                    cx.err(
                        rows[0].line,
                        format!(
                            "cannot tell the unit of the time column: the rows are {d}e-9 units apart; \
                             name the column time_s, time_ms, time_us or time_ns"
                        ),
                    )
                })?
            }
        }
    };
    let to_ns = |v: i128| v.saturating_mul(unit_ns) / 1_000_000_000;
    // Both operands of the subtraction below lie within i128 / 1e9: it cannot overflow.
    let t0 = to_ns(raw[0]);
    let mut times = Vec::with_capacity(raw.len());
    // The one bound on user-given times (time.rs MAX_USER_SECS): a row later than that could
    // never be replayed, as no run is longer.
    let max_ns = crate::time::MAX_USER_SECS * 1_000_000_000;
    for (r, &v) in rows.iter().zip(&raw) {
        let t = u64::try_from(to_ns(v) - t0).ok().filter(|t| *t <= max_ns).ok_or_else(|| {
            cx.err(
                r.line,
                format!(
                    "time is too far from the first row's (allowed: within {} s, one day)",
                    crate::time::MAX_USER_SECS
                ),
            )
        })?;
        times.push(t);
    }
    let interval = median.map(|d| to_ns(d).max(1)).and_then(|d| u64::try_from(d).ok());
    let clock = clock == Some(true);
    let unit_name = match unit {
        TimeUnit::Infer if clock => None,
        TimeUnit::Infer => [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns")]
            .into_iter()
            .find(|(u, _)| *u == unit_ns)
            .map(|(_, n)| n),
        named => named.name(),
    };
    Ok(WilTimes { times, interval: interval.unwrap_or(WIL_ROW_INTERVAL.ns()), first_ns: t0, clock, unit: unit_name })
}

#[cfg(test)]
mod tests {
    use crate::link::trace::testkit::*;

    #[test]
    fn wil6210_time_units() {
        let rows = "8,12,connected,70,-60\n9,12,connected,70,-61\n";
        let with = |head: &str, t0: &str, t1: &str| {
            let mut lines = rows.lines();
            format!(
                "{head},mcs,sector,status,sqi,rssi\n{t0},{}\n{t1},{}\n",
                lines.next().unwrap(),
                lines.next().unwrap()
            )
        };
        for (head, t0, t1) in [
            ("time_ms", "1000", "1010"),
            ("Time (s)", "5.5", "5.51"),
            ("t_us", "0", "10000"),
            ("timestamp", "1597345123456", "1597345123466"), // epoch ms, inferred
            ("timestamp", "1597345123.456", "1597345123.466"), // epoch s, inferred
            ("time", "2020-08-13 14:05:01.250", "2020-08-13 14:05:01.260"),
            ("time", "23:59:59.995", "24:00:00.005"),
            ("Timestamp (UTC)", "2020-08-13T14:05:01.250Z", "2020-08-13T14:05:01.260Z"),
        ] {
            let t = p(&with(head, t0, t1), TraceFormat::Wil6210).unwrap_or_else(|e| panic!("{head} {t0}: {e}"));
            assert_eq!(t.steps[1].at, Time::from_ms(10), "{head} {t0}");
            assert_eq!(t.period, Time::from_ms(20), "{head} {t0}");
        }
    }

    #[test]
    fn wil6210_mixed_time_kinds() {
        let e = err("time,mcs\n12:00:00,1\n5,1\n", TraceFormat::Wil6210);
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("mixes clock times and plain numbers"), "{e}");
    }
}
