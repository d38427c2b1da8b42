//! Command line: `mmpath-delay --queue NUM:DELAY_US [--queue ...] [--max-len PACKETS]`. The
//! emulator (python/mmpath/emu/delay.py) starts it inside the AP's namespace; the messages are
//! still one line naming what is wrong and what is allowed.

use crate::line::Nanos;

pub struct Args {
    /// (netfilter queue number, one-way delay in ns)
    pub queues: Vec<(u16, Nanos)>,
    /// The kernel's per-queue packet limit (nfnetlink_queue's default of 1024 would drop a
    /// 50 ms x 2 Gbit/s window of 1500-byte packets).
    pub max_len: u32,
}

/// One way; an hour is far beyond any scenario's propagation delay.
pub const MAX_DELAY_US: u64 = 3_600_000_000;
pub const DEFAULT_MAX_LEN: u32 = 1 << 20;

pub const USAGE: &str = "usage: mmpath-delay --queue NUM:DELAY_US [--queue NUM:DELAY_US ...] [--max-len PACKETS]";

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut queues: Vec<(u16, Nanos)> = Vec::new();
    let mut max_len = DEFAULT_MAX_LEN;
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
            other => return Err(format!("unknown argument {other:?}; {USAGE}")),
        }
    }
    if queues.is_empty() {
        return Err(format!("no --queue given; {USAGE}"));
    }
    Ok(Args { queues, max_len })
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
        ] {
            let e = p(bad).err().unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
