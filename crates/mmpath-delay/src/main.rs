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
mod cut;
mod line;

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cut::Cuts;
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
    // Windows given after the origin, on this program's clock (one over before the line started
    // is dropped, one under way is cut at the start).
    let on_this_clock = |windows: &[(u16, Vec<(Nanos, Nanos)>)]| -> Vec<(u16, Vec<(Nanos, Nanos)>)> {
        let Some(off) = origin else { return Vec::new() };
        windows
            .iter()
            .map(|(num, ws)| {
                let moved = ws
                    .iter()
                    .map(|&(a, b)| (a as i128 + off, b as i128 + off))
                    .filter(|&(_, b)| b > 0)
                    .map(|(a, b)| (a.max(0) as Nanos, b as Nanos))
                    .collect();
                (*num, moved)
            })
            .collect()
    };
    let holds = on_this_clock(&args.holds);
    // Per queue: its cut windows and the interface its packets from the client come in by.
    let mut sides: Vec<Side> = Vec::new();
    for (num, ws) in on_this_clock(&args.cuts) {
        sides.push(Side { queue: num, cuts: Cuts::new(ws), from_client: None, lost: 0, stamped: 0 });
    }
    for (num, name) in &args.from_client {
        let index = nix::net::if_::if_nametoindex(name.as_str())
            .map_err(|e| format!("--from-client {num}:{name}: no such interface in this namespace ({e})"))?;
        // Only a queue with cut windows asks where a packet came from.
        if let Some(s) = sides.iter_mut().find(|s| s.queue == *num) {
            s.from_client = Some(index);
        }
    }
    // A cut judges a packet from the client by when it arrived, which the kernel stamps on it
    // (NFQA_TIMESTAMP, nfnetlink_queue: skb_tstamp_cond) only while some socket on the machine
    // asks for receive time stamps (net_enable_timestamp): this one does, for as long as the line
    // runs. Without it the arrival is when the line read the packet, up to a poll (TICK) later.
    let _stamps_on = if sides.iter().any(|s| s.from_client.is_some() && !s.cuts.is_empty()) {
        let sock = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| format!("cannot open a UDP socket: {e}"))?;
        nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::ReceiveTimestamp, &true)
            .map_err(|e| format!("cannot turn receive time stamps on: {e}"))?;
        Some(sock)
    } else {
        None
    };
    let mut line: DelayLine<Message> = DelayLine::with_holds(&args.queues, &holds);
    let now = || start.elapsed().as_nanos() as Nanos;
    println!("ready");
    std::io::stdout().flush().map_err(|e| format!("stdout: {e}"))?;

    // Verdicts the kernel answered "no such packet" (below).
    let mut gone = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let mut arrived = 0usize;
        loop {
            match q.recv() {
                Ok(m) => {
                    arrived += 1;
                    let (num, bytes) = (m.get_queue_num(), m.get_original_len() as u64);
                    let t = now();
                    if cut_on_arrival(&mut sides, &m, t, unix_at_start) {
                        give(&mut q, m, true)?;
                    } else if let Some(m) = line.push(num, t, bytes, m) {
                        // Not delayed: released as it arrives.
                        let lost = cut_on_release(&mut sides, &m, t, t);
                        give(&mut q, m, lost)?;
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
        while let Some((m, came)) = line.pop_due_arrived(t) {
            // Judged when it is released, not when it was due: a packet the poll lets go after
            // the cut's instant reaches the client after it (and its ACK would leave after it
            // too, lost on the client's side of the cut).
            let lost = cut_on_release(&mut sides, &m, came, t);
            give(&mut q, m, lost)?;
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
                "cut_windows": sides.iter().find(|c| c.queue == s.queue).map_or(0, |c| c.cuts.len()),
                "lost_to_cut": sides.iter().find(|c| c.queue == s.queue).map_or(0, |c| c.lost),
            })
        })
        .collect();
    let held = line.held();
    let origin_ms = origin.map(|o| o as f64 / 1e6);
    println!(
        "{}",
        serde_json::json!({ "queues": queues, "held_at_exit": held, "hold_origin_after_start_ms": origin_ms,
                            "dropped_by_kernel": gone,
                            "kernel_stamped": sides.iter().map(|c| c.stamped).sum::<u64>() })
    );
    Ok(())
}

/// One queue's cut (cut.rs) and the interface its packets from the client come in by (none: the
/// queue carries only packets toward the client, as the line in the client's namespace does).
struct Side {
    queue: u16,
    cuts: Cuts,
    from_client: Option<u32>,
    lost: u64,
    /// Packets from the client whose arrival the kernel stamped (the rest: when the line read
    /// them).
    stamped: u64,
}

fn side_of<'a>(sides: &'a mut [Side], m: &Message) -> Option<&'a mut Side> {
    let queue = m.get_queue_num();
    sides.iter_mut().find(|s| s.queue == queue && !s.cuts.is_empty())
}

fn is_from_client(s: &Side, m: &Message) -> bool {
    s.from_client.is_some_and(|i| i == m.get_indev())
}

/// A packet from the client that arrived inside a cut window: lost (counted). Its arrival is the
/// kernel's receive time stamp where it has one (set while anything on the machine asks for time
/// stamps, as the line does), else `read`, when the line read it, up to a poll later: a cut's
/// edge to the microsecond. Only packets a cut judges pay for the look.
fn cut_on_arrival(sides: &mut [Side], m: &Message, read: Nanos, unix_at_start: Duration) -> bool {
    let Some(s) = side_of(sides, m) else { return false };
    if !is_from_client(s, m) {
        return false;
    }
    let stamp = m
        .get_timestamp()
        .and_then(|st| st.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128 - unix_at_start.as_nanos() as i128)
        .filter(|&x| x >= 0 && x <= read as i128);
    s.stamped += u64::from(stamp.is_some());
    let lost = s.cuts.loses_from_client(stamp.map_or(read, |x| x as Nanos));
    s.lost += u64::from(lost);
    lost
}

/// A packet toward the client, arrived at `came` and released at `t`, that was in the line
/// inside a cut window: lost (counted).
fn cut_on_release(sides: &mut [Side], m: &Message, came: Nanos, t: Nanos) -> bool {
    let Some(s) = side_of(sides, m) else { return false };
    let lost = !is_from_client(s, m) && s.cuts.loses_toward_client(came, t);
    s.lost += u64::from(lost);
    lost
}

/// The packet's verdict: let through, or dropped when a cut lost it.
fn give(q: &mut Queue, mut m: Message, lost: bool) -> Result<(), String> {
    m.set_verdict(if lost { Verdict::Drop } else { Verdict::Accept });
    q.verdict(m).map_err(|e| format!("verdict failed: {e}"))
}
