//! Command line: `mmpath-delay --queue NUM:DELAY_US [--queue ...] [--max-len PACKETS]
//! [--origin-unix-ns NS --hold NUM:START-END[,START-END...] ... --cut NUM:START-END[,...] ...
//! --from-client NUM:IFNAME ...]`. The
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
    /// Per queue, its cut windows `[start, end)` on the same clock: a `drop` outage, the path cut
    /// at the client's end (cut.rs).
    pub cuts: Vec<(u16, Vec<(Nanos, Nanos)>)>,
    /// Per queue, the interface (in this namespace) by which its packets from the client arrive;
    /// a queue without one carries only packets toward the client.
    pub from_client: Vec<(u16, String)>,
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
                         [--origin-unix-ns NS --hold NUM:START_NS-END_NS[,START_NS-END_NS...] ... \
                         --cut NUM:START_NS-END_NS[,START_NS-END_NS...] ... --from-client NUM:IFNAME ...]";

/// `START-END,START-END,...`: whole ns after the origin, each start before its end, sorted,
/// not overlapping (back to back allowed).
/// `out`: the queue's windows so far (an earlier --hold for it), which these continue.
fn parse_windows(flag: &str, v: &str, list: &str, out: &mut Vec<(Nanos, Nanos)>) -> Result<(), String> {
    for w in list.split(',') {
        let bad = || {
            format!("{flag} {v:?}: window {w:?}: expected START_NS-END_NS, whole ns after the origin, 0..{MAX_HOLD_NS}")
        };
        let (a, b) = w.split_once('-').ok_or_else(bad)?;
        let num = |x: &str| x.parse::<u64>().ok().filter(|n| *n <= MAX_HOLD_NS).ok_or_else(bad);
        let (a, b) = (num(a)?, num(b)?);
        if a >= b {
            return Err(format!("{flag} {v:?}: window {w:?} ends before it starts (START_NS < END_NS)"));
        }
        if let Some(&(pa, pb)) = out.last() {
            if a < pa {
                return Err(format!("{flag} {v:?}: window {w:?} starts before the one before it (sort them)"));
            }
            if a < pb {
                return Err(format!("{flag} {v:?}: window {w:?} overlaps {pa}-{pb} (merge them)"));
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
    let mut cuts: Vec<(u16, Vec<(Nanos, Nanos)>)> = Vec::new();
    let mut from_client: Vec<(u16, String)> = Vec::new();
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
            "--hold" | "--cut" => {
                let v = value(&mut it)?;
                let (num, list) = v
                    .split_once(':')
                    .ok_or_else(|| format!("{flag} {v:?}: expected NUM:START_NS-END_NS[,START_NS-END_NS...]"))?;
                let num: u16 = num.parse().map_err(|_| format!("{flag} {v:?}: queue number must be 0..65535"))?;
                // A queue's windows may come in several --hold (one argument is at most 128 KiB
                // on Linux): each continues the one before, in order.
                let windows = if flag == "--hold" { &mut holds } else { &mut cuts };
                let at = match windows.iter().position(|h| h.0 == num) {
                    Some(at) => at,
                    None => {
                        windows.push((num, Vec::new()));
                        windows.len() - 1
                    }
                };
                parse_windows(flag, &v, list, &mut windows[at].1)?;
            }
            "--from-client" => {
                let v = value(&mut it)?;
                let (num, name) =
                    v.split_once(':').filter(|(_, n)| !n.is_empty() && n.len() < 16).ok_or_else(|| {
                        format!("--from-client {v:?}: expected NUM:IFNAME (an interface name, 1-15 bytes)")
                    })?;
                let num: u16 =
                    num.parse().map_err(|_| format!("--from-client {v:?}: queue number must be 0..65535"))?;
                if from_client.iter().any(|f| f.0 == num) {
                    return Err(format!("--from-client {v:?}: queue {num} given twice"));
                }
                from_client.push((num, name.to_string()));
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
    for (flag, nums) in [
        ("--hold", holds.iter().map(|h| h.0).collect::<Vec<_>>()),
        ("--cut", cuts.iter().map(|h| h.0).collect()),
        ("--from-client", from_client.iter().map(|h| h.0).collect()),
    ] {
        if let Some(num) = nums.iter().find(|n| !queues.iter().any(|q| q.0 == **n)) {
            return Err(format!("{flag} for queue {num}, which no --queue gives"));
        }
    }
    if (!holds.is_empty() || !cuts.is_empty()) && origin_unix_ns.is_none() {
        return Err("--hold / --cut needs --origin-unix-ns (the windows' time zero)".to_string());
    }
    Ok(Args { queues, max_len, holds, cuts, from_client, origin_unix_ns })
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
    fn reads_cut_windows_and_the_client_side_interface() {
        let a =
            p("--queue 0:5 --queue 1:5 --origin-unix-ns 9 --cut 1:10-20 --hold 1:30-40 --from-client 0:p0a").unwrap();
        assert_eq!((a.cuts, a.holds), (vec![(1, vec![(10, 20)])], vec![(1, vec![(30, 40)])]), "kept apart");
        assert_eq!(a.from_client, vec![(0, "p0a".to_string())]);
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
            ("--queue 0:1 --cut 0:5-9", "needs --origin-unix-ns"),
            ("--queue 0:1 --origin-unix-ns 7 --cut 2:5-9", "--cut for queue 2, which no --queue gives"),
            ("--queue 0:1 --origin-unix-ns 7 --cut 0:9-5", "--cut \"0:9-5\""),
            ("--queue 0:1 --from-client 0", "NUM:IFNAME"),
            ("--queue 0:1 --from-client 0:", "NUM:IFNAME"),
            ("--queue 0:1 --from-client 0:averyveryverylongname", "NUM:IFNAME"),
            ("--queue 0:1 --from-client x:p0a", "0..65535"),
            ("--queue 0:1 --from-client 0:a --from-client 0:b", "given twice"),
            ("--queue 0:1 --from-client 3:p3a", "--from-client for queue 3"),
        ] {
            let e = p(bad).err().unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
