//! mmpath-delay: the emulator's propagation delay, for kernels without sch_netem (docs/emulate.md).
//!
//! nftables rules in the AP's namespace send every forwarded packet of a path to a netfilter
//! queue (`queue num K`); this program, bound to those queues, holds each packet for its queue's
//! one-way delay and then accepts it, so the kernel forwards it on. Only the packet's metadata
//! crosses to user space (one byte of payload), and GSO super-packets stay whole
//! (NFQA_CFG_F_GSO), so at 2 Gbit/s this is a few thousand verdicts a second.
//!
//! Timing: the loop polls the socket without blocking and sleeps at most `TICK` between looks,
//! so a packet is stamped within ~TICK of its arrival and released within ~TICK (plus the
//! timer slack) of its due time; the measured lateness is printed on exit. A packet is never
//! released early.
//!
//! Hold windows (`--hold`, a scanning radio off its channel): given in ns after an origin on
//! CLOCK_REALTIME (`--origin-unix-ns`, the emulator's shaper start as Python's time.time_ns()
//! reads it), turned into this program's monotonic clock once, at start, from one reading of
//! both clocks: a later step of the wall clock (NTP) does not move them. A packet due inside a
//! window is released at its end (line.rs).
//!
//! Output: `ready` on stdout once every queue is bound (the emulator waits for it), then on
//! SIGTERM / SIGINT one JSON line with each queue's counts and lateness. Errors: one line on
//! stderr, exit 2 for bad arguments, 1 for the kernel refusing (not root, queue taken).
//!
//! It dies with the process that started it (PR_SET_PDEATHSIG, SIGKILL): nothing of the emulator
//! outlives a `kill -9` of it (docs/emulate.md).

mod args;
mod line;

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use line::{DelayLine, Nanos};
use nfq::{Message, Queue, Verdict};

/// Longest sleep between looks at the socket and the held packets (see the timing note above).
const TICK: Duration = Duration::from_micros(100);
/// Most packets read from the socket before the due ones are released.
const BATCH: usize = 256;

fn main() {
    if let Err(e) = die_with_parent() {
        eprintln!("mmpath-delay: {e}");
        std::process::exit(1);
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match args::parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mmpath-delay: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&args) {
        eprintln!("mmpath-delay: {e}");
        std::process::exit(1);
    }
}

/// The line dies with the process that started it (the emulator), however that ends, even by
/// `kill -9`: an orphaned line would hold the queues, at real-time priority, for ever. The kernel
/// sends SIGKILL when the parent ends (PR_SET_PDEATHSIG, kept across the `exec`s of `ip netns
/// exec` and `chrt`); a parent already gone before that was set is seen as a new parent.
fn die_with_parent() -> Result<(), String> {
    let parent = std::os::unix::process::parent_id();
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(|e| format!("cannot set the parent-death signal: {e}"))?;
    if std::os::unix::process::parent_id() != parent {
        return Err("the process that started it is gone".into());
    }
    Ok(())
}

fn open(args: &args::Args) -> Result<Queue, String> {
    let mut q =
        Queue::open().map_err(|e| format!("cannot open a netfilter queue socket: {e} (needs root / CAP_NET_ADMIN)"))?;
    for &(num, _) in &args.queues {
        let named = |what: &str, e: std::io::Error| format!("queue {num}: {what}: {e}");
        q.bind(num).map_err(|e| named("cannot bind (is another process bound to it? needs CAP_NET_ADMIN)", e))?;
        // One byte of payload: the kernel reports a packet's length (NFQA_CAP_LEN) only when
        // it copies some (NFQNL_COPY_PACKET); metadata-only copies carry none.
        q.set_copy_range(num, 1).map_err(|e| named("cannot set the copy range", e))?;
        q.set_recv_gso(num, true).map_err(|e| named("cannot accept GSO packets whole", e))?;
        q.set_queue_max_len(num, args.max_len).map_err(|e| named("cannot set the queue length", e))?;
        // Full queue: drop (and count it in /proc/net/netfilter/nfnetlink_queue), never let a
        // packet through undelayed.
        q.set_fail_open(num, false).map_err(|e| named("cannot set fail-closed", e))?;
    }
    q.set_nonblocking(true);
    Ok(q)
}

fn run(args: &args::Args) -> Result<(), String> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(|e| format!("cannot catch signal {sig}: {e}"))?;
    }
    let mut q = open(args)?;
    let start = Instant::now();
    let unix_at_start =
        SystemTime::now().duration_since(UNIX_EPOCH).map_err(|e| format!("the wall clock is before 1970: {e}"))?;
    // The origin on this program's clock (ns after `start`; negative: already past).
    let origin = args.origin_unix_ns.map(|o| o as i128 - unix_at_start.as_nanos() as i128);
    let holds: Vec<(u16, Vec<(Nanos, Nanos)>)> = match origin {
        None => Vec::new(),
        Some(off) => args
            .holds
            .iter()
            .map(|(num, ws)| {
                let moved = ws
                    .iter()
                    .map(|&(a, b)| (a as i128 + off, b as i128 + off))
                    .filter(|&(_, b)| b > 0) // over before the line started
                    .map(|(a, b)| (a.max(0) as Nanos, b as Nanos))
                    .collect();
                (*num, moved)
            })
            .collect(),
    };
    let mut line: DelayLine<Message> = DelayLine::with_holds(&args.queues, &holds);
    let now = || start.elapsed().as_nanos() as Nanos;
    println!("ready");
    std::io::stdout().flush().map_err(|e| format!("stdout: {e}"))?;

    let accept = |q: &mut Queue, mut m: Message| {
        m.set_verdict(Verdict::Accept);
        q.verdict(m).map_err(|e| format!("verdict failed: {e}"))
    };
    // Verdicts the kernel answered "no such packet" (below).
    let mut gone = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let mut arrived = 0usize;
        loop {
            match q.recv() {
                Ok(m) => {
                    arrived += 1;
                    let (num, bytes) = (m.get_queue_num(), m.get_original_len() as u64);
                    if let Some(m) = line.push(num, now(), bytes, m) {
                        accept(&mut q, m)?;
                    }
                    if arrived == BATCH {
                        break; // release what is due before reading on: a burst must not hold releases up
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => break,
                // The kernel's answer to a verdict for a packet it no longer holds: when an
                // interface goes down, nfnetlink_queue drops the queued packets that came in or
                // go out by it (net/netfilter/nfnetlink_queue.c, nfqnl_rcv_dev_event ->
                // nfqnl_dev_drop), and the verdict on one of them fails with ENOENT. With the
                // line where packets arrive (the client's namespace, whose end of a path a
                // `drop` outage takes down) those were on the link when it broke: lost, as
                // the link loses them.
                Err(e) if e.kind() == ErrorKind::NotFound => gone += 1,
                Err(e) => return Err(format!("receiving from the queue failed: {e}")),
            }
        }
        let t = now();
        while let Some(m) = line.pop_due(t) {
            accept(&mut q, m)?;
        }
        if arrived == 0 {
            let wait = line.next_due().map_or(TICK, |due| Duration::from_nanos(due.saturating_sub(now())).min(TICK));
            std::thread::sleep(wait);
        }
    }
    let queues: Vec<serde_json::Value> = line
        .stats()
        .iter()
        .map(|s| {
            serde_json::json!({
                "queue": s.queue,
                "delay_ms": s.delay_ns as f64 / 1e6,
                "packets": s.packets,
                "bytes": s.bytes,
                "max_held_packets": s.max_held_packets,
                "max_held_bytes": s.max_held_bytes,
                "late_mean_us": s.late_mean_ns() / 1e3,
                "late_max_us": s.late_max_ns as f64 / 1e3,
                "late_over_1ms": s.late_over_1ms,
                "hold_windows": s.hold_windows,
                "held_by_window": s.held_by_window,
            })
        })
        .collect();
    let held = line.held();
    let origin_ms = origin.map(|o| o as f64 / 1e6);
    println!(
        "{}",
        serde_json::json!({ "queues": queues, "held_at_exit": held, "hold_origin_after_start_ms": origin_ms,
                            "dropped_by_kernel": gone })
    );
    Ok(())
}
