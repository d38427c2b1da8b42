//! Mahimahi link traces (`mm-link`, docs/traces.md "Mahimahi"): one integer millisecond
//! timestamp per line, each a delivery opportunity for one packet of up to 1504 bytes, counted
//! per bin into rate steps. Accepted input, rejected input and the wraparound follow mahimahi's
//! own loader and link (ravinet/mahimahi src/frontend/link_queue.cc and link_queue.hh:
//! PACKET_SIZE, myatoi, "timestamps must be monotonically nondecreasing", "trace must last for
//! a nonzero amount of time", base_timestamp_ += schedule_.back() on wraparound).

use super::lex::{numbered_lines, parse_decimal_scaled, show, Ctx};
use super::{ChannelState, Trace, TraceError, TraceFormat, TraceStep};
use crate::bounds::{MAX_RATE_BPS, MAX_RATE_MBPS};
use crate::time::Time;

/// Options for formats that need them (Mahimahi).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceOpts {
    /// Mahimahi aggregation bin: opportunities are counted per bin and become one rate step.
    pub bin: Time,
    /// Bytes one Mahimahi delivery opportunity carries: 1504, mahimahi's PACKET_SIZE
    /// ("default max TUN payload size", src/frontend/link_queue.hh).
    pub bytes_per_opportunity: u32,
}

impl Default for TraceOpts {
    fn default() -> TraceOpts {
        TraceOpts { bin: Time::from_ms(10), bytes_per_opportunity: 1504 }
    }
}

/// Largest timestamp: one day, the one bound on user-given times (time.rs MAX_USER_SECS); a later
/// opportunity could never be replayed, as no run is longer.
const MAX_MS: u64 = crate::time::MAX_USER_SECS * 1_000;

pub(super) fn parse_mahimahi(text: &str, cx: &Ctx, opts: &TraceOpts) -> Result<Trace, TraceError> {
    if opts.bin.ns() == 0 {
        return Err(cx.file_err("Mahimahi aggregation bin is 0 (allowed: > 0; default 10 ms)"));
    }
    if opts.bytes_per_opportunity == 0 {
        return Err(cx.file_err("bytes per Mahimahi opportunity is 0 (allowed: > 0; default 1504)"));
    }
    let bin = opts.bin.ns();
    let bits = u128::from(opts.bytes_per_opportunity) * 8;

    // One pass over the lines, keeping only the opportunities per bin (sparse, in time order):
    // a 10-minute trace at 1 Gbit/s is 50 million lines, which must not be held as a list.
    let mut counts: Vec<(u64, u64)> = Vec::new();
    // Each bin's first line, for the message of a bin above the largest rate.
    let mut firsts: Vec<usize> = Vec::new();
    // The latest timestamp, its line, and how many lines carry it.
    let mut last: Option<(u64, usize, u64)> = None;
    // A blank line seen since the latest timestamp: an error only if another timestamp follows.
    let mut blank: Option<usize> = None;
    for (n, raw) in numbered_lines(text) {
        let s = raw.trim();
        if s.is_empty() {
            blank.get_or_insert(n);
            continue;
        }
        if let Some(b) = blank {
            return Err(cx.err(
                b,
                "blank line inside the trace (allowed: one integer millisecond timestamp per line; \
                 blank lines only at the end of the file)",
            ));
        }
        let v = mahimahi_ms(s).map_err(|why| {
            cx.err(
                n,
                format!(
                    "{why}: {} (allowed: one integer number of milliseconds from 0 to {MAX_MS}, one day, per line)",
                    show(s)
                ),
            )
        })?;
        last = match last {
            Some((prev, _, same)) if v == prev => Some((v, n, same + 1)),
            Some((prev, _, _)) if v < prev => {
                return Err(cx.err(
                    n,
                    format!(
                        "timestamp {v} ms is earlier than the previous line's {prev} ms (allowed: \
                         non-decreasing timestamps; repeat a value for several packets in one millisecond)"
                    ),
                ));
            }
            _ => Some((v, n, 1)),
        };
        let k = v * 1_000_000 / bin; // v <= MAX_MS: no overflow
        match counts.last_mut() {
            Some((kk, c)) if *kk == k => *c += 1,
            _ => {
                counts.push((k, 1));
                firsts.push(n);
            }
        }
    }
    let Some((last, last_line, at_last)) = last else {
        return Err(cx.file_err("empty file (allowed: one integer millisecond timestamp per line, at least one line)"));
    };
    if last == 0 {
        return Err(cx.err(
            last_line,
            "the last timestamp is 0 ms: a Mahimahi trace lasts until its last timestamp, which must \
             be > 0 (mahimahi rejects such a file too)",
        ));
    }
    let period = last * 1_000_000;

    // An opportunity at the last timestamp falls on the start of the next pass (mahimahi
    // advances its base by the last timestamp when it wraps), so it is counted in bin 0: over a
    // loop every pass then carries all of the file's opportunities. They are the last lines, so
    // they were counted last, in the bin of the period.
    let (k_last, c) = counts.last_mut().expect("a timestamp was counted");
    debug_assert_eq!(*k_last, period / bin);
    *c -= at_last;
    if *c == 0 {
        counts.pop();
        firsts.pop();
    }
    match counts.first_mut() {
        Some((0, c)) => *c += at_last,
        _ => {
            counts.insert(0, (0, at_last));
            firsts.insert(0, last_line);
        }
    }
    let rate = |k: u64, c: u64| -> u64 {
        let start = k * bin;
        let len = u128::from(start.saturating_add(bin).min(period) - start);
        let r = (u128::from(c) * bits * 1_000_000_000 + len / 2) / len;
        u64::try_from(r).unwrap_or(u64::MAX)
    };
    let nbins = period.div_ceil(bin);
    let mut steps: Vec<TraceStep> = Vec::new();
    let mut push = |k: u64, r: u64| {
        if steps.last().and_then(|s| s.set.rate_bps) != Some(r) {
            steps.push(TraceStep::new(Time(k * bin), ChannelState { rate_bps: Some(r), ..Default::default() }));
        }
    };
    let mut next = 0u64;
    for ((k, c), first) in counts.into_iter().zip(firsts) {
        if k > next {
            push(next, 0);
        }
        let r = rate(k, c);
        // The bound on every rate (bounds.rs), as on a path's rate_mbps.
        if r > MAX_RATE_BPS {
            let (from, to) = (k * bin, (k * bin).saturating_add(bin).min(period));
            return Err(cx.err(
                first,
                format!(
                    "{c} opportunities of {} bytes from {} ms to {} ms are {:.4e} Mbit/s (allowed: at most \
                     {MAX_RATE_MBPS:e} Mbit/s, as a path's rate_mbps)",
                    opts.bytes_per_opportunity,
                    Time(from).ms_f64(),
                    Time(to).ms_f64(),
                    r as f64 / 1e6
                ),
            ));
        }
        push(k, r);
        next = k + 1;
    }
    if next < nbins {
        push(next, 0);
    }
    Ok(Trace { steps, period: Time(period), format: TraceFormat::Mahimahi })
}

/// One timestamp: plain ASCII digits (the common case, read in one pass), else the reason it
/// is not one.
fn mahimahi_ms(s: &str) -> Result<u64, &'static str> {
    let mut v: u64 = 0;
    let mut digits = true;
    for b in s.bytes() {
        if !b.is_ascii_digit() {
            digits = false;
            break;
        }
        // Saturates past MAX_MS, so that any run of digits, however long, is "too large".
        v = (v * 10 + u64::from(b - b'0')).min(MAX_MS + 1);
    }
    if digits {
        return if v <= MAX_MS { Ok(v) } else { Err("timestamp too large") };
    }
    match parse_decimal_scaled(s, 0) {
        Some(_) if s.starts_with('-') && s.bytes().skip(1).any(|b| b != b'0' && b != b'.') => Err("negative timestamp"),
        Some(_) => Err("not a plain integer"),
        None => Err("not a number"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::trace::testkit::*;

    fn rate_step(ms: u64, bps: u64) -> TraceStep {
        TraceStep::new(Time::from_ms(ms), ChannelState { rate_bps: Some(bps), ..Default::default() })
    }
    /// Bits per second of `n` 1504-byte opportunities in `ms` milliseconds.
    fn bps(n: u64, ms: u64) -> u64 {
        n * 1504 * 8 * 1000 / ms
    }

    /// A bin's opportunities share the scenario's rate bound (bounds.rs): 1e7 Mbit/s at most,
    /// said at the bin's first line. 831,117 packets of 1504 bytes in 1 ms are 9.99999e6 Mbit/s;
    /// one more is over.
    #[test]
    fn a_bin_above_the_rate_bound_is_refused() {
        let o = TraceOpts { bin: Time::from_ms(1), ..TraceOpts::default() };
        let trace = |n: usize| format!("1\n{}5\n", "2\n".repeat(n));
        let t = parse(&trace(831_117), "m.trace", TraceFormat::Mahimahi, &o).unwrap();
        assert!(t.steps.iter().all(|s| s.set.rate_bps.unwrap() <= MAX_RATE_BPS));
        let e = parse(&trace(831_118), "m.trace", TraceFormat::Mahimahi, &o).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert_eq!(
            e.message,
            "831118 opportunities of 1504 bytes from 2 ms to 3 ms are 1.0000e7 Mbit/s (allowed: at most 1e7 \
             Mbit/s, as a path's rate_mbps)"
        );
        // Large opportunities too (bytes_per_opportunity); the last line's opportunity counts in
        // bin 0, the start of the next pass.
        let o = TraceOpts { bin: Time::from_ms(1), bytes_per_opportunity: u32::MAX };
        let e = parse("0\n0\n0\n0\n5\n", "m.trace", TraceFormat::Mahimahi, &o).unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.message.starts_with("5 opportunities of 4294967295 bytes from 0 ms to 1 ms are 1.7180e8"), "{e}");
    }

    #[test]
    fn mahimahi_bin_arithmetic() {
        // 12 opportunities in the first 10 ms bin = 12 x 1504 x 8 / 0.01 bit/s.
        let mut text = String::new();
        for _ in 0..12 {
            text.push_str("3\n");
        }
        text.push_str("20\n");
        let t = p(&text, TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.period, Time::from_ms(20));
        // The opportunity at 20 ms (the last) starts the next pass: it counts in bin 0.
        assert_eq!(t.steps, vec![rate_step(0, bps(13, 10)), rate_step(10, 0)]);
        assert_eq!(bps(12, 10), 14_438_400);
        assert_eq!(12 * 1504 * 8 * 100, 14_438_400);

        // Without the wrap: 12 in [0,10), 2 in [10,20), then the last at 30.
        let t = p("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n9\n9\n15\n19\n30\n", TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.steps, vec![rate_step(0, bps(13, 10)), rate_step(10, bps(2, 10)), rate_step(20, 0)]);
        let t = p("1\n2\n3\n4\n5\n6\n7\n8\n9\n9\n9\n9\n15\n19\n30\n", TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.steps[0], rate_step(0, 14_438_400 + bps(1, 10)));
    }

    #[test]
    fn mahimahi_partial_last_bin_and_custom_opts() {
        // Period 25 ms: the last bin is [20, 25), 5 ms long.
        let t = p("21\n22\n25\n", TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.period, Time::from_ms(25));
        assert_eq!(t.steps, vec![rate_step(0, bps(1, 10)), rate_step(10, 0), rate_step(20, bps(2, 5))]);
        // 1 ms bins, 1500-byte opportunities: one per ms = 12 Mbit/s, constant -> one step.
        let o = TraceOpts { bin: Time::from_ms(1), bytes_per_opportunity: 1500 };
        let t = parse("1\n2\n3\n4\n", "x", TraceFormat::Mahimahi, &o).unwrap();
        assert_eq!(t.steps, vec![rate_step(0, 12_000_000)]);
        // A bin longer than the trace: one bin over the whole period.
        let o = TraceOpts { bin: Time::from_secs(1), ..opts() };
        let t = parse("5\n10\n", "x", TraceFormat::Mahimahi, &o).unwrap();
        assert_eq!(t.steps, vec![rate_step(0, bps(2, 10))]);
    }

    #[test]
    fn mahimahi_constant_rate_merges_and_loops() {
        // One packet every ms for 100 ms: 12.032 Mbit/s in every bin -> a single step.
        let text: String = (1..=100).map(|i| format!("{i}\n")).collect();
        let t = p(&text, TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.steps, vec![rate_step(0, 12_032_000)]);
        assert_eq!(t.period, Time::from_ms(100));
    }

    #[test]
    fn mahimahi_looping_period() {
        // Bursty: 5 packets at 1 ms, nothing until 50 ms (the last timestamp = the period).
        let t = p("1\n1\n1\n1\n1\n50\n", TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.period, Time::from_ms(50));
        assert_eq!(t.steps, vec![rate_step(0, bps(6, 10)), rate_step(10, 0)]);
        for pass in 0..4u64 {
            let base = pass * 50;
            assert_eq!(t.state_at(Time::from_ms(base + 3), true).rate_bps, Some(bps(6, 10)));
            assert_eq!(t.state_at(Time::from_ms(base + 10), true).rate_bps, Some(0));
            assert_eq!(t.state_at(Time::from_ms(base + 49), true).rate_bps, Some(0));
        }
        // Without looping the last step holds.
        assert_eq!(t.state_at(Time::from_ms(53), false).rate_bps, Some(0));
        // Average over a pass equals mahimahi's: all 6 lines x 1504 B per 50 ms.
        let bits: u64 = t
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let end = t.steps.get(i + 1).map_or(t.period, |n| n.at);
                s.set.rate_bps.unwrap() * (end - s.at).ns() / 1_000_000_000
            })
            .sum();
        assert_eq!(bits, 6 * 1504 * 8);
    }

    #[test]
    fn mahimahi_gaps_become_zero_rate() {
        // 5 ms and the wrapped 40 ms in bin 0, nothing in 10-29, 35 ms in bin 3.
        let t = p("5\n35\n40\n", TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.steps, vec![rate_step(0, bps(2, 10)), rate_step(10, 0), rate_step(30, bps(1, 10))]);
        assert_eq!(t.period, Time::from_ms(40));
    }

    #[test]
    fn mahimahi_trailing_blank_lines_and_crlf_ok() {
        let t = p("1\r\n2\r\n10\r\n\r\n\n  \n", TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.period, Time::from_ms(10));
        assert_eq!(t.steps, vec![rate_step(0, bps(3, 10))]);
    }

    #[test]
    fn mahimahi_errors() {
        let cases: [(&str, usize, &str); 8] = [
            ("1\n\n3\n", 2, "blank line"),
            ("1\n-4\n", 2, "negative timestamp: `-4`"),
            ("1\n2.5\n", 2, "not a plain integer: `2.5`"),
            ("1\nabc\n", 2, "not a number: `abc`"),
            ("5\n7\n6\n", 3, "6 ms is earlier than the previous line's 7 ms"),
            ("0\n0\n", 2, "last timestamp is 0 ms"),
            ("1\n99999999999999999999\n", 2, "too large"),
            ("1\n2 3\n", 2, "not a number"),
        ];
        for (text, line, needle) in cases {
            let e = err(text, TraceFormat::Mahimahi);
            assert_eq!(e.line, Some(line), "{text:?}: {e}");
            assert!(e.message.contains(needle), "{text:?}: {e}");
            assert!(e.message.contains("allowed") || e.message.contains("must be"), "{e}");
            assert!(e.to_string().starts_with(&format!("t.txt:{line}: ")), "{e}");
        }
        for text in ["", "\n\n", "  \n"] {
            let e = err(text, TraceFormat::Mahimahi);
            assert_eq!(e.line, None);
            assert!(e.message.contains("empty file"), "{e}");
        }
        let e = parse("1\n", "x", TraceFormat::Mahimahi, &TraceOpts { bin: Time::ZERO, ..opts() }).unwrap_err();
        assert!(e.message.contains("bin is 0"), "{e}");
        let o = TraceOpts { bytes_per_opportunity: 0, ..opts() };
        assert!(parse("1\n", "x", TraceFormat::Mahimahi, &o).is_err());
    }

    #[test]
    fn mahimahi_fixtures() {
        let t = load_fixture("mahimahi_good.trace", TraceFormat::Mahimahi).unwrap();
        assert_eq!(t.format, TraceFormat::Mahimahi);
        assert_eq!(t.period, Time::from_ms(40));
        // 0-9 ms: 4 + 1 wrapped; 10-19: 12; 20-29: none; 30-39: 2.
        assert_eq!(
            t.steps,
            vec![rate_step(0, bps(5, 10)), rate_step(10, bps(12, 10)), rate_step(20, 0), rate_step(30, bps(2, 10))]
        );
        let cases = [
            ("mahimahi_blank_line.trace", Some(3), "blank line"),
            ("mahimahi_negative.trace", Some(2), "negative"),
            ("mahimahi_decimal.trace", Some(3), "not a plain integer"),
            ("mahimahi_decreasing.trace", Some(4), "earlier than the previous"),
            ("mahimahi_empty.trace", None, "empty file"),
        ];
        for (name, line, needle) in cases {
            let e = load_fixture(name, TraceFormat::Mahimahi).unwrap_err();
            assert_eq!(e.line, line, "{name}: {e}");
            assert!(e.message.contains(needle), "{name}: {e}");
            assert!(e.file.ends_with(name), "{e}");
        }
        let e = load_fixture("no_such_file.trace", TraceFormat::Mahimahi).unwrap_err();
        assert!(e.message.contains("cannot read"), "{e}");
    }
}
