//! Command line: `mmpath-delay --queue NUM:DELAY_US [--queue ...] [--max-len PACKETS]
//! [--origin-unix-ns NS --hold NUM:START-END[,START-END...] ...]`. The
//! emulator (python/mmpath/emu/delay.py) starts it inside the AP's namespace; the messages are
//! still one line naming what is wrong and what is allowed.

use crate::line::Nanos;

pub struct Args {
    /// (netfilter queue number, one-way delay in ns)
    pub queues: Vec<(u16, Nanos)>,
    /// The kernel's per-queue packet limit (nfnetlink_queue's default of 1024 would drop a
    /// 50 ms x 2 Gbit/s window of 1500-byte packets).
    pub max_len: u32,
    /// Per queue, its hold windows `[start, end)` in ns after `origin_unix_ns`, sorted, not
    /// overlapping (a scanning radio's dwells off channel, docs/emulate.md).
    pub holds: Vec<(u16, Vec<(Nanos, Nanos)>)>,
    /// The windows' time zero on CLOCK_REALTIME, ns since the Unix epoch (Python's
    /// `time.time_ns()`); main.rs turns it into its monotonic clock once, at start.
    pub origin_unix_ns: Option<u128>,
}

/// One way; an hour is far beyond any scenario's propagation delay.
pub const MAX_DELAY_US: u64 = 3_600_000_000;
pub const DEFAULT_MAX_LEN: u32 = 1 << 20;
/// A hold window's end at most a day after the origin (no scenario runs longer: 86400 s).
pub const MAX_HOLD_NS: u64 = 86_400_000_000_000;

pub const USAGE: &str = "usage: mmpath-delay --queue NUM:DELAY_US [--queue NUM:DELAY_US ...] [--max-len PACKETS] \
                         [--origin-unix-ns NS --hold NUM:START_NS-END_NS[,START_NS-END_NS...] ...]";

/// `START-END,START-END,...`: whole ns after the origin, each start before its end, sorted,
/// not overlapping (back to back allowed).
/// `out`: the queue's windows so far (an earlier --hold for it), which these continue.
fn parse_windows(v: &str, list: &str, out: &mut Vec<(Nanos, Nanos)>) -> Result<(), String> {
    for w in list.split(',') {
        let bad = || {
            format!("--hold {v:?}: window {w:?}: expected START_NS-END_NS, whole ns after the origin, 0..{MAX_HOLD_NS}")
        };
        let (a, b) = w.split_once('-').ok_or_else(bad)?;
        let num = |x: &str| x.parse::<u64>().ok().filter(|n| *n <= MAX_HOLD_NS).ok_or_else(bad);
        let (a, b) = (num(a)?, num(b)?);
        if a >= b {
            return Err(format!("--hold {v:?}: window {w:?} ends before it starts (START_NS < END_NS)"));
        }
        if let Some(&(pa, pb)) = out.last() {
            if a < pa {
                return Err(format!("--hold {v:?}: window {w:?} starts before the one before it (sort them)"));
            }
            if a < pb {
                return Err(format!("--hold {v:?}: window {w:?} overlaps {pa}-{pb} (merge them)"));
            }
        }
        out.push((a, b));
    }
    Ok(())
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut queues: Vec<(u16, Nanos)> = Vec::new();
    let mut max_len = DEFAULT_MAX_LEN;
    let mut holds: Vec<(u16, Vec<(Nanos, Nanos)>)> = Vec::new();
    let mut origin_unix_ns: Option<u128> = None;
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let value = |it: &mut std::slice::Iter<String>| {
            it.next().cloned().ok_or_else(|| format!("{flag} needs a value; {USAGE}"))
        };
        match flag.as_str() {
            "--queue" => {
                let v = value(&mut it)?;
                let (num, delay) =
                    v.split_once(':').ok_or_else(|| format!("--queue {v:?}: expected NUM:DELAY_US, e.g. 0:25000"))?;
                let num: u16 = num.parse().map_err(|_| format!("--queue {v:?}: queue number must be 0..65535"))?;
                let us: u64 = delay
                    .parse()
                    .ok()
                    .filter(|d| *d <= MAX_DELAY_US)
                    .ok_or_else(|| format!("--queue {v:?}: delay must be whole microseconds, 0..{MAX_DELAY_US}"))?;
                if queues.iter().any(|q| q.0 == num) {
                    return Err(format!("--queue {v:?}: queue {num} given twice"));
                }
                queues.push((num, us * 1000));
            }
            "--max-len" => {
                let v = value(&mut it)?;
                max_len = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--max-len {v:?}: must be a packet count, 1..{}", u32::MAX))?;
            }
            "--hold" => {
                let v = value(&mut it)?;
                let (num, list) = v
                    .split_once(':')
                    .ok_or_else(|| format!("--hold {v:?}: expected NUM:START_NS-END_NS[,START_NS-END_NS...]"))?;
                let num: u16 = num.parse().map_err(|_| format!("--hold {v:?}: queue number must be 0..65535"))?;
                // A queue's windows may come in several --hold (one argument is at most 128 KiB
                // on Linux): each continues the one before, in order.
                let at = match holds.iter().position(|h| h.0 == num) {
                    Some(at) => at,
                    None => {
                        holds.push((num, Vec::new()));
                        holds.len() - 1
                    }
                };
                parse_windows(&v, list, &mut holds[at].1)?;
            }
            "--origin-unix-ns" => {
                let v = value(&mut it)?;
                origin_unix_ns = Some(v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("--origin-unix-ns {v:?}: must be whole ns since the Unix epoch (CLOCK_REALTIME)")
                })?);
            }
            other => return Err(format!("unknown argument {other:?}; {USAGE}")),
        }
    }
    if queues.is_empty() {
        return Err(format!("no --queue given; {USAGE}"));
    }
    if let Some((num, _)) = holds.iter().find(|h| !queues.iter().any(|q| q.0 == h.0)) {
        return Err(format!("--hold for queue {num}, which no --queue gives"));
    }
    if !holds.is_empty() && origin_unix_ns.is_none() {
        return Err("--hold needs --origin-unix-ns (the windows' time zero)".to_string());
    }
    Ok(Args { queues, max_len, holds, origin_unix_ns })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Args, String> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn reads_queues_and_limit() {
        let a = p("--queue 0:25000 --queue 3:0 --max-len 5000").unwrap();
        assert_eq!(a.queues, vec![(0, 25_000_000), (3, 0)]);
        assert_eq!(a.max_len, 5000);
        assert_eq!(p("--queue 1:1").unwrap().max_len, DEFAULT_MAX_LEN);
        assert!(p("--queue 1:1").unwrap().holds.is_empty());
    }

    #[test]
    fn reads_hold_windows() {
        let a = p("--queue 0:0 --queue 1:5 --origin-unix-ns 1700000000000000000 --hold 1:10-20,20-30,40-50").unwrap();
        assert_eq!(a.holds, vec![(1, vec![(10, 20), (20, 30), (40, 50)])], "back to back is allowed");
        assert_eq!(a.origin_unix_ns, Some(1_700_000_000_000_000_000));
        let a = p("--queue 0:0 --origin-unix-ns 9 --hold 0:10-20 --queue 1:0 --hold 0:30-40,50-60").unwrap();
        assert_eq!(a.holds, vec![(0, vec![(10, 20), (30, 40), (50, 60)])], "a second --hold continues the first");
    }

    #[test]
    fn refuses_bad_arguments_naming_them() {
        for (bad, says) in [
            ("", "no --queue"),
            ("--queue", "needs a value"),
            ("--queue 0", "NUM:DELAY_US"),
            ("--queue 70000:5", "0..65535"),
            ("--queue 0:-5", "whole microseconds"),
            ("--queue 0:2.5", "whole microseconds"),
            ("--queue 0:3600000001", "whole microseconds"),
            ("--queue 0:1 --queue 0:2", "given twice"),
            ("--queue 0:1 --max-len 0", "packet count"),
            ("--queue 0:1 --jitter 5", "unknown argument"),
            ("--queue 0:1 --hold 0:5-9", "needs --origin-unix-ns"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 1:5-9", "which no --queue gives"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0", "NUM:START_NS-END_NS"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:", "expected START_NS-END_NS"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:5", "expected START_NS-END_NS"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:5-x", "expected START_NS-END_NS"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:-5-9", "expected START_NS-END_NS"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:1.5-9", "expected START_NS-END_NS"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:5-86400000000001", "expected START_NS-END_NS"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:9-5", "ends before it starts"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:5-5", "ends before it starts"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:20-30,5-9", "starts before the one before it"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:5-30,20-40", "overlaps 5-30"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:5-30 --hold 0:20-40", "overlaps 5-30"),
            ("--queue 0:1 --origin-unix-ns 7 --hold 0:50-60 --hold 0:20-40", "starts before the one before it"),
            ("--queue 0:1 --origin-unix-ns 0 --hold 0:5-9", "since the Unix epoch"),
            ("--queue 0:1 --origin-unix-ns -3", "since the Unix epoch"),
        ] {
            let e = p(bad).err().unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
