"""The trace-driven link shaper: on each path's data-sending interface an HTB class holds the rate of
the path's capacity trace (capacity.py) and a drop-tail byte FIFO (bfifo) of the path's queue
length; every bin (100 ms) the rate moves to the trace's next value, and while the trace says the
link is down the FIFO's limit is 0, so everything sent then is lost, as on a blocked 60 GHz link. Commands go to one
long-lived `tc -batch` per namespace (a fork per change would cost more than a bin at Gbit/s).
After the trace's last bin a link left down comes back up at its last rate (iperf3 still has to
exchange its results over the first path).

On the server's own interface (the server in the AP's namespace: netns.py, the backbone disabled)
the link's gate is a `blackhole` leaf instead of a FIFO of limit 0 (`silent`): a FIFO's drop is
returned to the sending socket (NET_XMIT_DROP: Linux TCP takes it for local congestion, keeps the
segment unsent and retries it every TCP_RESOURCE_PROBE_INTERVAL, 0.5 s, without backing its RTO
off: net/ipv4/tcp_timer.c tcp_retransmit_timer), where a blocked radio's driver takes the frame
and loses it, and the simulator's server at the AP sees its own queue refuse a frame as a frame
lost (sim/route.rs `forward`: counted, not told to the sender). sch_blackhole drops and answers
NET_XMIT_SUCCESS | __NET_XMIT_BYPASS, which the device layer masks to success
(net/core/dev.c dev_qdisc_enqueue, NET_XMIT_MASK): the socket's frame is freed, as sent. A full
FIFO while the link is up still answers NET_XMIT_DROP there (the kernel's own behaviour with a
qdisc of its own; TSQ keeps one flow's queue far from full).

Only the data direction is shaped. The other direction (ACKs) gets the same gate at a fixed,
unlimiting rate (GATE_MBPS): a blocked 60 GHz link carries nothing either way.

A scanned path's interfaces (both ways) also get a pause: a TBF at the root, above the HTB, that
lets everything through (PASS_MBPS) except during the scan's dwells off channel, when its rate
drops to PAUSE_KBIT and its bucket to two frames, so that what the FIFO holds when a dwell begins
waits there, as a radio off its channel keeps its frames (packets arriving during a dwell are
held by the delay line, delay.py). TBF sends a packet only when its bucket has the tokens for it
(no debt, unlike HTB at a near-zero rate), a change of its rate refills the bucket and keeps its
child (sch_tbf.c tbf_change: fifo_set_limit, not a new child, for a classful one), so the queue
resumes at the path's rate when the dwell ends. A paused TBF waits on its watchdog timer, set for
when the paused rate would have paid for its head packet (seconds): a change of rate does not
wake it, so each interface is kicked when its pause ends, by a broadcast UDP byte sent out of it
(KICK: no reply, and an enqueue runs the qdisc at once) 1, 4 and 15 ms after the change is
written to tc (whose batch applies it a little later, and a kick before that finds it paused).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from . import gso
from .capacity import Capacity
from .errors import EmuError
from .netns import sh
from .reaper import popen

# Going down swaps the leaf FIFO for a new empty one (the other handle): a replaced qdisc is
# destroyed with whatever it held, so the frames queued when the link broke are lost, as a
# 60 GHz driver frees the station's ring on disconnect (docs/models.md). Changing the limit alone
# would leave them to drain during the outage.
LEAVES = ("10:", "11:")
# The class's bucket (burst and cburst alike: with rate = ceil the smaller one would rule) is
# about one packet's time on the link: the sender's packets are at most BURST_S at the path's
# rate (gso.py), so a class that has waited long enough for one sends it and then holds the
# rate, as a link serialising frame by frame does. tc-htb(8): cburst "for perfect evening out,
# should be equal to at most one average packet"; burst at least the rate over the timer
# events per second (here the qdisc watchdog's hrtimer, which this loaded two-core VM wakes up
# to ~1 ms late: a smaller bucket would lose that time's tokens, and the rate). HTB sends a
# packet whenever its class has any tokens and charges it whole (sch_htb.c htb_charge_class:
# the class goes into debt), so a packet larger than the bucket still passes, at the rate.
# Before, the bucket was at least two 64 KiB packets (131 584 bytes, 10.5 ms at 100 Mbit/s):
# BBR's 1.25 x probing passed at veth speed and the kernel's BBR measured 113-116 Mbit/s on a
# 100 Mbit/s path (docs/models.md, x-kernel).
BURST_S = gso.PACKET_S
# The reverse direction's rate: above anything a veth pair carries here, so only the gate acts.
GATE_MBPS = 40_000.0


# The largest packet the shaper sees: a GSO/TSO super-packet (64 KiB) plus its headers.
GSO_MAX_BYTES = 65_536 + 256
# The pause's TBF: passing, a rate and a bucket (5 MB: 1 ms at 40 Gbit/s) nothing here reaches;
# paused, a rate at which one frame takes a tenth of a second and a bucket of two frames (what
# passes when a dwell begins; a GSO packet larger than that is split by TBF, sch_tbf.c
# tbf_segment, and waits frame by frame).
PASS_MBPS = GATE_MBPS
PASS_BURST = 5_000_000
PAUSE_KBIT = 100
# The kicker: a process per namespace that sends a UDP byte to 255.255.255.255:9 (discard) out
# of each interface named on a line of its stdin, KICK_AFTER_S after reading it
# (SO_BINDTODEVICE: root, as the emulator is).
KICK_AFTER_S = (0.001, 0.004, 0.015)
KICK = ("import socket, sys, time\n"
        f"AFTER = {KICK_AFTER_S!r}\n"
        "for line in sys.stdin:\n"
        "    t0 = time.monotonic()\n"
        "    for after in AFTER:\n"
        "        time.sleep(max(0.0, t0 + after - time.monotonic()))\n"
        "        for ifname in line.split():\n"
        "            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "            try:\n"
        "                s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)\n"
        "                s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())\n"
        "                s.sendto(b'k', ('255.255.255.255', 9))\n"
        "            except OSError:\n"
        "                pass\n"
        "            s.close()\n")


def burst_bytes(rate_mbps: float, mtu: int) -> int:
    """The HTB class's bucket at `rate_mbps` of IP packets: BURST_S of its frames, at least one frame."""
    return max(int(htb_mbps(rate_mbps, mtu) * 1e6 / 8 * BURST_S), gso.frame_bytes(mtu))


# HTB charges a packet its length on the wire it leaves by: the 14-byte Ethernet header of veth
# included, and for a GSO packet every segment's headers (Linux qdisc_pkt_len_init). A capacity
# is a rate of IP packets (capacity.py), so an HTB class at it would carry only mtu / (mtu + 14)
# of it: 3 % short at MTU 1500 (the emulator bench measured 937 Mbit/s of TCP on a 1000 Mbit/s
# link, the simulator 965). The class is set to the capacity's Ethernet-frame rate instead.
ETH_HEADER_BYTES = gso.ETH_HEADER_BYTES


def htb_mbps(ip_mbps: float, mtu: int) -> float:
    """The HTB rate that passes `ip_mbps` of full-size IP packets (`mtu` bytes) as frames."""
    return ip_mbps * (mtu + ETH_HEADER_BYTES) / mtu


def _rate_args(rate_mbps: float, mtu: int) -> list[str]:
    r = f"{max(htb_mbps(rate_mbps, mtu), 0.01):.3f}mbit"
    b = str(burst_bytes(rate_mbps, mtu))
    return ["rate", r, "ceil", r, "burst", b, "cburst", b]


def _tbf_args(paused: bool, mtu: int, queue_bytes: int) -> list[str]:
    if paused:
        return ["rate", f"{PAUSE_KBIT}kbit", "burst", str(2 * (mtu + 14)), "limit", str(queue_bytes)]
    return ["rate", f"{PASS_MBPS:.0f}mbit", "burst", str(PASS_BURST), "limit", str(queue_bytes)]


def leaf(queue_bytes: int, up: bool, silent: bool) -> str:
    """The leaf qdisc under the HTB class, as tc names it: the path's FIFO while the link is up;
    while it is down a FIFO of none, or a blackhole when `silent` (the sender's own interface:
    the module's doc)."""
    if up:
        return f"bfifo limit {queue_bytes}"
    return "blackhole" if silent else "bfifo limit 0"


def install(ns: str, ifname: str, rate_mbps: float, mtu: int, queue_bytes: int, up: bool,
            pausable: bool = False, silent: bool = False) -> None:
    """HTB at `rate_mbps` over a byte FIFO of `queue_bytes`, or of none while the link is down;
    `pausable`: under a passing TBF that `Shaper` pauses during a scan's dwells; `silent`: the
    link down is a blackhole (the sender's own interface: the module's doc)."""
    if pausable:
        sh("tc", "qdisc", "add", "dev", ifname, "root", "handle", "2:", "tbf", *_tbf_args(False, mtu, queue_bytes),
           ns=ns)
        sh("tc", "qdisc", "add", "dev", ifname, "parent", "2:1", "handle", "1:", "htb", "default", "1", "r2q", "1000",
           ns=ns)
    else:
        sh("tc", "qdisc", "add", "dev", ifname, "root", "handle", "1:", "htb", "default", "1", "r2q", "1000", ns=ns)
    sh("tc", "class", "add", "dev", ifname, "parent", "1:", "classid", "1:1", "htb", *_rate_args(rate_mbps, mtu),
       "quantum", "60000", ns=ns)
    sh("tc", "qdisc", "add", "dev", ifname, "parent", "1:1", "handle", LEAVES[0],
       *leaf(queue_bytes, up, silent).split(), ns=ns)


class Shaper:
    """Replays every path's capacity from `start()` on, one bin at a time, in a thread."""

    def __init__(self, targets: list[tuple[str, str, Capacity, int, int, bool]],
                 pauses: list[tuple[list[tuple[str, str, int, int]], list[tuple[float, float]]]] | None = None,
                 silent: set[tuple[str, str]] | None = None) -> None:
        # (namespace, interface, capacity, mtu, queue bytes, shaped: the rate follows the
        # capacity; else only the up / down gate does)
        self.targets = targets
        # Per scanned path: its pausable interfaces (namespace, interface, mtu, queue bytes,
        # installed with pausable=True) and its dwells [start, end) in s from bin 0, sorted.
        self.pauses = pauses or []
        # (namespace, interface) installed with silent=True: their link down is a blackhole.
        self.silent = silent or set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pause_thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._procs: dict[str, subprocess.Popen] = {}
        self._kickers: dict[str, subprocess.Popen] = {}
        self.applied = 0
        self.late_s = 0.0
        self.restored: list[str] = []  # interfaces brought back up after the trace's end
        self.paused = 0  # dwells paused
        self.pause_late_s = 0.0  # the latest a pause or its end was applied

    def _proc(self, ns: str) -> subprocess.Popen:
        if ns not in self._procs:
            # Started from the main thread (start()), which outlives it: it dies with the run (reaper.py).
            self._procs[ns] = popen(["ip", "netns", "exec", ns, "tc", "-force", "-batch", "-"],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, text=True)
        return self._procs[ns]

    def start(self, at: float | None = None) -> float:
        """Starts replaying; bin 0 begins at `at` (time.monotonic(); default now), bin 1 a bin
        later, ... The rates of bin 0 are the ones installed."""
        for ns, *_ in self.targets:
            self._proc(ns)
        for ifaces, _ in self.pauses:
            for ns, *_ in ifaces:
                if ns not in self._kickers:
                    self._kickers[ns] = popen(["ip", "netns", "exec", ns, sys.executable, "-c", KICK],
                                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL, text=True)
        t0 = time.monotonic() if at is None else at
        self._thread = threading.Thread(target=self._run, args=(t0,), daemon=True)
        self._thread.start()
        if self.pauses:
            self._pause_thread = threading.Thread(target=self._run_pauses, args=(t0,), daemon=True)
            self._pause_thread.start()
        return t0

    def _run_pauses(self, t0: float) -> None:
        """Pauses each scanned path's interfaces through its dwells (dwells back to back: one
        pause), in time order over all paths."""
        steps: list[tuple[float, bool, int]] = []  # (time from bin 0, pause?, path)
        for k, (_, windows) in enumerate(self.pauses):
            merged: list[list[float]] = []
            for a, b in windows:
                if merged and a <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], b)
                else:
                    merged.append([a, b])
            steps += [(a, True, k) for a, _ in merged] + [(b, False, k) for _, b in merged]
        steps.sort(key=lambda st: (st[0], st[1]))  # an end before a start at the same time
        for at, pause, k in steps:
            wait = t0 + at - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            self.pause_late_s = max(self.pause_late_s, -wait)
            by_ns: dict[str, list[str]] = {}
            for ns, ifname, mtu, qbytes in self.pauses[k][0]:
                by_ns.setdefault(ns, []).append(" ".join(["qdisc change dev", ifname, "root handle 2: tbf",
                                                          *_tbf_args(pause, mtu, qbytes)]))
            for ns, lines in by_ns.items():
                if not self._send(ns, lines):
                    return
            if not pause:
                # Wake each interface's qdisc (its TBF sleeps on a watchdog set for the paused rate).
                for ns in by_ns:
                    names = [ifname for n, ifname, *_ in self.pauses[k][0] if n == ns]
                    try:
                        self._kickers[ns].stdin.write(" ".join(names) + "\n")
                        self._kickers[ns].stdin.flush()
                    except (BrokenPipeError, OSError, KeyError):
                        return
            self.paused += int(pause)

    def _run(self, t0: float) -> None:
        bin_s = self.targets[0][2].bin_s
        n_bins = max(len(t[2].mbps) for t in self.targets)
        # What each interface holds now: the rate installed with bin 0, up if it was > 0, and
        # which leaf handle its FIFO has.
        state = [(float(t[2].mbps[0]), float(t[2].mbps[0]) > 0) for t in self.targets]
        leaves = [0 for _ in self.targets]
        for i in range(1, n_bins):
            wait = t0 + i * bin_s - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            self.late_s = max(self.late_s, -wait)
            for k, (ns, ifname, cap, mtu, qbytes, shaped) in enumerate(self.targets):
                if i >= len(cap.mbps):
                    continue
                rate, (held, was_up) = float(cap.mbps[i]), state[k]
                up = rate > 0
                lines = []
                if shaped and up and rate != held:
                    lines.append(" ".join(["class change dev", ifname, "parent 1: classid 1:1 htb",
                                           *_rate_args(rate, mtu)]))
                    held = rate
                if was_up and not up:
                    leaves[k] = 1 - leaves[k]
                    lines.append(f"qdisc replace dev {ifname} parent 1:1 handle {LEAVES[leaves[k]]} "
                                 + leaf(qbytes, False, (ns, ifname) in self.silent))
                elif up and not was_up:
                    lines.append(self._up_line(ns, ifname, qbytes, leaves, k))
                state[k] = (held, up)
                if lines and not self._send(ns, lines):
                    return
        # The trace is over; a link it left down comes back (at its last rate), so that iperf3
        # can still exchange its results over its control connection, which crosses the first
        # path: left down, the client failed with "unable to send control message".
        wait = t0 + n_bins * bin_s - time.monotonic()
        if wait > 0 and self._stop.wait(wait):
            return
        for k, (ns, ifname, cap, mtu, qbytes, shaped) in enumerate(self.targets):
            held, up = state[k]
            if up:
                continue
            lines = []
            last = [float(r) for r in cap.mbps if r > 0]
            if shaped and last and last[-1] != held:
                lines.append(" ".join(["class change dev", ifname, "parent 1: classid 1:1 htb",
                                       *_rate_args(last[-1], mtu)]))
            lines.append(self._up_line(ns, ifname, qbytes, leaves, k))
            if not self._send(ns, lines):
                return
            self.restored.append(ifname)

    def _up_line(self, ns: str, ifname: str, qbytes: int, leaves: list[int], k: int) -> str:
        """The tc line that brings target k's link up: its empty FIFO's limit back, or a FIFO in
        place of its blackhole (another kind: a new qdisc, under the other handle)."""
        if (ns, ifname) in self.silent:
            leaves[k] = 1 - leaves[k]
            return f"qdisc replace dev {ifname} parent 1:1 handle {LEAVES[leaves[k]]} {leaf(qbytes, True, True)}"
        return f"qdisc change dev {ifname} parent 1:1 handle {LEAVES[leaves[k]]} {leaf(qbytes, True, False)}"

    def _send(self, ns: str, lines: list[str]) -> bool:
        with self._lock:  # the bins' thread and the pauses' thread share the tc processes
            p = self._proc(ns)
            try:
                p.stdin.write("\n".join(lines) + "\n")
                p.stdin.flush()
            except (BrokenPipeError, OSError):
                return False
            self.applied += len(lines)
            return True

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._pause_thread is not None:
            self._pause_thread.join(timeout=5)
        for procs in (self._kickers, self._procs):
            for p in procs.values():
                _close(p)
            procs.clear()


def _close(p: subprocess.Popen) -> None:
    """Ends a helper process fed on its stdin (a `tc -batch` or a kicker): EOF, then a kill if
    it does not exit within 5 s."""
    try:
        p.stdin.close()
    except OSError:
        pass
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()


def check_installed(ns: str, ifname: str) -> None:
    out = sh("tc", "qdisc", "show", "dev", ifname, ns=ns)
    if "htb" not in out or ("bfifo" not in out and "blackhole" not in out):
        raise EmuError(f"the shaper on {ifname} did not install (tc shows: {' '.join(out.split())})")
