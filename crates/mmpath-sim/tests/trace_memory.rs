//! A long Mahimahi trace is read in one pass that keeps only its bins: a 10-minute trace at
//! 1 ms resolution and 1 Gbit/s is 50 million lines (340 MB). The parser used to collect every
//! line (24 bytes each) and every timestamp (8 bytes) first: 2 GB of memory and 8 s to load that
//! file, where the run itself needs a few MB. Measured as the growth of this process's peak
//! resident memory (Linux /proc; unsafe code, and so a counting allocator, is forbidden here),
//! in a test binary of its own so that no other test runs meanwhile.

use mmpath_sim::link::trace::{parse, TraceFormat, TraceOpts};
use mmpath_sim::Time;

/// Resets this process's peak resident memory (VmHWM) to its current resident size.
fn reset_peak() -> Option<()> {
    std::fs::write("/proc/self/clear_refs", "5").ok()
}

/// Peak resident memory in bytes (VmHWM).
fn peak_bytes() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: usize = s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resident memory in bytes (VmRSS).
fn resident_bytes() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: usize = s.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[test]
fn a_long_mahimahi_trace_is_parsed_in_memory_proportional_to_its_bins() {
    // 60 s at 1 ms resolution, 8 to 12 opportunities per ms (about 120 Mbit/s): 600,000 lines.
    let mut text = String::new();
    for ms in 1..=60_000u64 {
        for _ in 0..8 + ms % 5 {
            text.push_str(&ms.to_string());
            text.push('\n');
        }
    }
    let lines = text.lines().count();
    assert_eq!(lines, 600_000);
    let opts = TraceOpts { bin: Time::from_ms(10), ..TraceOpts::default() };
    let (Some(()), Some(before)) = (reset_peak(), resident_bytes()) else {
        eprintln!("no /proc/self memory counters here: not measured");
        return;
    };
    let t = parse(&text, "long.trace", TraceFormat::Mahimahi, &opts).unwrap();
    let grew = peak_bytes().unwrap().saturating_sub(before);
    assert_eq!(t.period, Time::from_secs(60));
    // Every 10 ms bin has 100 opportunities (8..12 per ms, ten of each residue; bin 0 has the
    // last timestamp's 8): a constant rate, one step.
    assert_eq!(t.steps.len(), 1, "{:?}", &t.steps[..t.steps.len().min(3)]);
    assert_eq!(t.steps[0].set.rate_bps, Some(100 * 1504 * 8 * 100));
    // The bins' counts (16 bytes each, 96 kB) and the steps; the text is the caller's. Holding
    // the lines took 24 bytes a line (14.4 MB here), the timestamps 8 more (4.8 MB).
    assert!(grew < 4_000_000, "peak resident memory grew by {grew} bytes parsing {lines} lines");
}
