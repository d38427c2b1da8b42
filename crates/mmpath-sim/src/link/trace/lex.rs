//! What the three parsers share: the error context naming the file, numbered lines without
//! their line ends, `#` comments, values quoted (and cut) for messages, and exact decimal
//! numbers: times and rates are parsed without going through floating point, so that
//! nanoseconds and bit/s survive a CSV round trip (docs/traces.md).

use super::TraceError;

/// The most rows of steps a CSV or wil6210 trace may have: a day (the longest run,
/// time::MAX_USER_SECS) of 1 ms rows, 86.4 million. No trace mmpath replays is finer than 1 ms
/// (wil6210 logs are per 10 ms, channel records per change) nor longer than a day, so a file
/// with more is not a trace; its steps (~48 bytes each) would take over 4 GB of memory.
/// (A Mahimahi trace's lines are packets, not steps: counted per bin as they are read, bounded
/// by MAX_BYTES and its one-day time bound.)
pub(super) const MAX_ROWS: usize = 86_400_000;

/// The largest trace file read, in bytes: 4 GiB. A day of 1 ms CSV rows with every column
/// (`86399.999,2310.5,12,1,-54.5,20.5,63`, ~36 bytes) is ~3.1 GB; a 10-minute Mahimahi trace at
/// 2 Gbit/s (100 million lines) ~0.9 GB. A larger file is refused before it is read.
pub(super) const MAX_BYTES: u64 = 4 << 30;

/// The first bytes of a file, read to tell text from a binary or compressed file before the rest.
pub(super) const HEAD_BYTES: u64 = 8192;

pub(super) struct Ctx<'a> {
    pub(super) file: &'a str,
    /// MAX_ROWS but in the parsers' own tests.
    pub(super) max_rows: usize,
}

impl Ctx<'_> {
    pub(super) fn err(&self, line: usize, message: impl Into<String>) -> TraceError {
        TraceError { file: self.file.to_string(), line: Some(line), message: message.into() }
    }
    pub(super) fn file_err(&self, message: impl Into<String>) -> TraceError {
        TraceError { file: self.file.to_string(), line: None, message: message.into() }
    }
    /// The error for a trace whose row at `line` is one more than `max_rows` (MAX_ROWS).
    pub(super) fn check_rows(&self, rows: usize, line: usize) -> Result<(), TraceError> {
        if rows <= self.max_rows {
            return Ok(());
        }
        Err(self.err(
            line,
            format!(
                "more than {} rows (allowed: at most {}, a day of 1 ms rows; cut or resample the trace)",
                self.max_rows, self.max_rows
            ),
        ))
    }
}

/// Lines numbered from 1, without their `\n` / `\r\n`.
pub(super) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n').enumerate().map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

/// A value quoted for an error message, cut to 40 characters. Control characters (a stray
/// `\r`, a tab, an escape sequence) are written as escapes so that the message stays one
/// printable line.
pub(super) fn show(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().take(40) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if s.chars().nth(40).is_some() {
        out.push_str("...");
    }
    format!("`{out}`")
}

/// Parses a decimal number (optional sign, digits, optional fraction, optional exponent)
/// exactly and returns it times 10^scale, rounded to the nearest integer (halves away from
/// zero). `None` for anything else (including inf / NaN) or out of range.
pub(super) fn parse_decimal_scaled(s: &str, scale: i32) -> Option<i128> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mant: u128 = 0;
    let mut sig = 0u32;
    let mut exp10: i64 = 0;
    let mut any = false;
    // Beyond 38 significant digits (u128 holds 10^38) further digits are dropped.
    let mut digit = |d: u8, frac: bool, mant: &mut u128| {
        if *mant == 0 && d == 0 {
            if frac {
                exp10 -= 1;
            }
        } else if sig >= 38 {
            if !frac {
                exp10 += 1;
            }
        } else {
            sig += 1;
            *mant = *mant * 10 + u128::from(d);
            if frac {
                exp10 -= 1;
            }
        }
    };
    while i < b.len() && b[i].is_ascii_digit() {
        digit(b[i] - b'0', false, &mut mant);
        any = true;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            digit(b[i] - b'0', true, &mut mant);
            any = true;
            i += 1;
        }
    }
    if !any {
        return None;
    }
    let mut exp: i64 = 0;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let eneg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            exp = (exp * 10 + i64::from(b[i] - b'0')).min(100_000);
            i += 1;
        }
        if i == start {
            return None;
        }
        if eneg {
            exp = -exp;
        }
    }
    if i != b.len() {
        return None;
    }
    let total = exp10 + exp + i64::from(scale);
    let mag: u128 = if mant == 0 {
        0
    } else if total >= 0 {
        let p = 10u128.checked_pow(u32::try_from(total).ok()?)?;
        mant.checked_mul(p)?
    } else if total < -38 {
        0
    } else {
        let div = 10u128.pow(u32::try_from(-total).ok()?);
        let (q, r) = (mant / div, mant % div);
        if r >= div - r {
            q + 1
        } else {
            q
        }
    };
    let mag = i128::try_from(mag).ok()?;
    Some(if neg { -mag } else { mag })
}

/// A cell that must be a whole number in `lo..=hi`; integral decimals such as `7.0` are
/// accepted when `lenient` (pandas writes integer columns with gaps as floats).
pub(super) fn parse_int_in(s: &str, lo: i128, hi: i128, lenient: bool) -> Option<i128> {
    let v = if lenient {
        let scaled = parse_decimal_scaled(s, 9)?;
        if scaled % 1_000_000_000 != 0 {
            return None;
        }
        scaled / 1_000_000_000
    } else {
        if !s.trim_start_matches(['-', '+']).bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        parse_decimal_scaled(s, 0)?
    };
    (lo..=hi).contains(&v).then_some(v)
}

pub(super) fn parse_finite_f32(s: &str) -> Option<f32> {
    // Plain decimal syntax only (no "inf" / "nan" spellings), finite in f32.
    if !s.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) {
        return None;
    }
    s.parse::<f32>().ok().filter(|v| v.is_finite())
}

pub(super) fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_values_stay_on_one_line() {
        // Found by tests/fuzz_traces.rs: a bare `\r` inside a line was echoed into the message.
        assert_eq!(show("a\rb\tc\u{1b}[2J"), "`a\\rb\\tc\\u{1b}[2J`");
        assert_eq!(show(&"x".repeat(41)), format!("`{}...`", "x".repeat(40)));
        let e = super::super::parse("1\n2\r\r3\n", "t", super::super::TraceFormat::Mahimahi, &Default::default())
            .unwrap_err();
        assert!(e.to_string().contains("`2\\r\\r3`") && !e.to_string().contains('\r'), "{e}");
    }

    #[test]
    fn decimal_parser_is_exact() {
        assert_eq!(parse_decimal_scaled("1.25", 9), Some(1_250_000_000));
        assert_eq!(parse_decimal_scaled("0.000000001", 9), Some(1));
        assert_eq!(parse_decimal_scaled("1e-3", 9), Some(1_000_000));
        assert_eq!(parse_decimal_scaled("-2.5", 0), Some(-3));
        assert_eq!(parse_decimal_scaled("2.5E2", 0), Some(250));
        assert_eq!(parse_decimal_scaled(".5", 1), Some(5));
        assert_eq!(parse_decimal_scaled("5.", 1), Some(50));
        for bad in ["", ".", "-", "1e", "1.2.3", "inf", "NaN", "1,5", "0x10", "1 2", "e5"] {
            assert_eq!(parse_decimal_scaled(bad, 0), None, "{bad}");
        }
        assert_eq!(parse_decimal_scaled("1e100000000", 0), None);
        assert_eq!(parse_decimal_scaled("1e-100000000", 0), Some(0));
    }
}
