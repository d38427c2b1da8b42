"""The trace-driven link shaper: on each path's data-sending interface an HTB class holds the rate of
the path's capacity trace (capacity.py) and a drop-tail byte FIFO (bfifo) of the path's queue
length; every bin (100 ms) the rate moves to the trace's next value, and while the trace says the
link is down the FIFO's limit is 0, so everything sent then is lost, as on a blocked 60 GHz link. Commands go to one
long-lived `tc -batch` per namespace (a fork per change would cost more than a bin at Gbit/s).
After the trace's last bin a link left down comes back up at its last rate (iperf3 still has to
exchange its results over the first path).

Only the data direction is shaped. The other direction (ACKs) gets the same gate at a fixed,
unlimiting rate (GATE_MBPS): a blocked 60 GHz link carries nothing either way.
"""

from __future__ import annotations

import subprocess
import threading
import time

from .capacity import Capacity
from .checks import EmuError
from .netns import sh

# Going down swaps the leaf FIFO for a new empty one (the other handle): a replaced qdisc is
# destroyed with whatever it held, so the frames queued when the link broke are lost, as a
# 60 GHz driver frees the station's ring on disconnect (docs/models.md). Changing the limit alone
# would leave them to drain during the outage.
LEAVES = ("10:", "11:")
# HTB needs a bucket of at least a timer tick's worth of data to hold a Gbit/s rate (the kernel's
# HTB works in 64 ns units but dequeues on softirq timers of ~1 ms): 1 ms at the rate, at least
# two of the largest packets it sees (GSO_MAX_BYTES).
BURST_S = 0.001
# The reverse direction's rate: above anything a veth pair carries here, so only the gate acts.
GATE_MBPS = 40_000.0


# The largest packet the shaper sees: a GSO/TSO super-packet (64 KiB) plus its headers.
GSO_MAX_BYTES = 65_536 + 256


def _burst(rate_mbps: float, mtu: int) -> int:
    return max(int(rate_mbps * 1e6 / 8 * BURST_S), 2 * GSO_MAX_BYTES, 2 * (mtu + 14))


def _rate_args(rate_mbps: float, mtu: int) -> list[str]:
    r = f"{max(rate_mbps, 0.01):.3f}mbit"
    b = str(_burst(rate_mbps, mtu))
    return ["rate", r, "ceil", r, "burst", b, "cburst", b]


def install(ns: str, ifname: str, rate_mbps: float, mtu: int, queue_bytes: int, up: bool) -> None:
    """HTB at `rate_mbps` over a byte FIFO of `queue_bytes`, or of none while the link is down."""
    sh("tc", "qdisc", "add", "dev", ifname, "root", "handle", "1:", "htb", "default", "1", "r2q", "1000", ns=ns)
    sh("tc", "class", "add", "dev", ifname, "parent", "1:", "classid", "1:1", "htb", *_rate_args(rate_mbps, mtu),
       "quantum", "60000", ns=ns)
    limit = queue_bytes if up else 0
    sh("tc", "qdisc", "add", "dev", ifname, "parent", "1:1", "handle", LEAVES[0], "bfifo", "limit", str(limit),
       ns=ns)


class Shaper:
    """Replays every path's capacity from `start()` on, one bin at a time, in a thread."""

    def __init__(self, targets: list[tuple[str, str, Capacity, int, int, bool]]) -> None:
        # (namespace, interface, capacity, mtu, queue bytes, shaped: the rate follows the
        # capacity; else only the up / down gate does)
        self.targets = targets
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._procs: dict[str, subprocess.Popen] = {}
        self.applied = 0
        self.late_s = 0.0
        self.restored: list[str] = []  # interfaces brought back up after the trace's end

    def _proc(self, ns: str) -> subprocess.Popen:
        if ns not in self._procs:
            self._procs[ns] = subprocess.Popen(["ip", "netns", "exec", ns, "tc", "-force", "-batch", "-"],
                                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL, text=True)
        return self._procs[ns]

    def start(self, at: float | None = None) -> float:
        """Starts replaying; bin 0 begins at `at` (time.monotonic(); default now), bin 1 a bin
        later, ... The rates of bin 0 are the ones installed."""
        for ns, *_ in self.targets:
            self._proc(ns)
        t0 = time.monotonic() if at is None else at
        self._thread = threading.Thread(target=self._run, args=(t0,), daemon=True)
        self._thread.start()
        return t0

    def _run(self, t0: float) -> None:
        bin_s = self.targets[0][2].bin_s
        n_bins = max(len(t[2].mbps) for t in self.targets)
        # What each interface holds now: the rate installed with bin 0, up if it was > 0, and
        # which leaf handle its FIFO has.
        state = [(float(t[2].mbps[0]), float(t[2].mbps[0]) > 0) for t in self.targets]
        leaf = [0 for _ in self.targets]
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
                    leaf[k] = 1 - leaf[k]
                    lines.append(f"qdisc replace dev {ifname} parent 1:1 handle {LEAVES[leaf[k]]} bfifo limit 0")
                elif up and not was_up:
                    lines.append(f"qdisc change dev {ifname} parent 1:1 handle {LEAVES[leaf[k]]} bfifo limit {qbytes}")
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
            lines.append(f"qdisc change dev {ifname} parent 1:1 handle {LEAVES[leaf[k]]} bfifo limit {qbytes}")
            if not self._send(ns, lines):
                return
            self.restored.append(ifname)

    def _send(self, ns: str, lines: list[str]) -> bool:
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
        for p in self._procs.values():
            try:
                p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        self._procs.clear()


def check_installed(ns: str, ifname: str) -> None:
    out = sh("tc", "qdisc", "show", "dev", ifname, ns=ns)
    if "htb" not in out or "bfifo" not in out:
        raise EmuError(f"the shaper on {ifname} did not install (tc shows: {' '.join(out.split())})")
