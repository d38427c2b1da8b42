"""The propagation delay, without sch_netem (this kernel, like many cloud kernels, has none; nor
sch_fq or sch_etf, which could hold packets to a timestamp): iptables rules in the AP's
namespace send each path's forwarded packets, both ways, to a netfilter queue of its own, and
`mmpath-delay` (crates/mmpath-delay), bound to those queues, holds every packet for the path's
one-way delay before letting the kernel forward it. Path k's queue holds the backbone's delay
plus the path's, so the RTT over path k is twice that, as in the simulator (docs/scenario.md).

A scanned path's dwells off channel (holds.py) are hold windows of its queue: a packet due inside
one leaves at the window's end, in order, as a radio off its channel keeps both ends' frames and
sends them when it is back; the line then runs for that path even without a propagation delay.
The windows are given in ns after the shaper's start (`origin_unix_ns`, CLOCK_REALTIME, which
mmpath-delay turns into its own monotonic clock once when it starts).

The delay line runs at real-time priority (`chrt -f`) when it can: on a two-core machine that
also runs iperf3 at Gbit/s, an ordinary process is preempted for milliseconds and its releases
come late (measured: mean 0.26 ms / max 8.8 ms late at 3 Gbit/s without, 0.05 / 0.5 ms with). Its
lateness is measured and kept in emu.json (`delay_line`). The queues drop rather than pass a
packet undelayed when full (fail-closed); the kernel's drop counters go to emu.json too.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from .errors import EmuError
from .netns import Topology, sh
from .reaper import popen

BINARY = "mmpath-delay"
# The real-time priority of the delay line: above iperf3 and tcpdump (SCHED_OTHER), below the
# kernel's own threads that run at SCHED_FIFO 50.
RT_PRIORITY = "20"
READY_TIMEOUT_S = 5.0
# Hold windows per --hold argument: ~40 characters each, well under Linux's 128 KiB per argument.
HOLD_CHUNK = 1000


def binary() -> str | None:
    """mmpath-delay: $MMPATH_DELAY, else next to this Python (the venv's bin/, where `make setup`
    installs it), else on PATH, else a cargo build in this checkout."""
    env = os.environ.get("MMPATH_DELAY")
    if env:
        return env if os.access(env, os.X_OK) else None
    beside = Path(sys.executable).parent / BINARY
    if os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(BINARY)
    if found:
        return found
    built = Path(__file__).resolve().parents[3] / "target" / "release" / BINARY
    return str(built) if os.access(built, os.X_OK) else None


def one_way_us(config: dict[str, Any]) -> list[int]:
    """Each path's one-way delay in whole microseconds: the backbone's plus the path's own."""
    bb = config.get("backbone") or {}
    bb_ms = float(bb.get("delay_ms") or 0.0) if bb.get("enabled", True) else 0.0
    return [round((bb_ms + float(p.get("delay_ms") or 0.0)) * 1000.0) for p in config.get("path", [])]


class DelayLine:
    """The rules and the process; `stop()` returns what it measured."""

    def __init__(self, topo: Topology, delays_us: list[int],
                 holds_ns: dict[int, list[tuple[int, int]]] | None = None) -> None:
        self.topo = topo
        self.delays_us = delays_us
        # Per path index: hold windows [start, end) in ns after the origin given to start().
        self.holds_ns = {k: v for k, v in (holds_ns or {}).items() if v}
        self.proc: subprocess.Popen | None = None
        self.realtime = False

    def needed(self) -> bool:
        return any(us > 0 for us in self.delays_us) or bool(self.holds_ns)

    def start(self, origin_unix_ns: int | None = None) -> None:
        """Rules and process; `origin_unix_ns` (time.time_ns()): the hold windows' time zero,
        required when there are any."""
        todo = [(link, us) for link, us in zip(self.topo.paths, self.delays_us)
                if us > 0 or link.index in self.holds_ns]
        if not todo:
            return
        exe = binary()
        if exe is None:
            raise EmuError(f"the scenario has a propagation delay or a scan and {BINARY} was not found (build it "
                           "with `make setup`, or point MMPATH_DELAY at it)")
        if self.holds_ns and origin_unix_ns is None:
            raise EmuError("internal: the delay line's hold windows need their origin")
        ns = self.topo.ap
        queues = []
        for link, us in todo:
            for i, o in (("bb1", link.ap_if), (link.ap_if, "bb1")):
                sh("iptables", "-A", "FORWARD", "-i", i, "-o", o, "-j", "NFQUEUE", "--queue-num", str(link.index),
                   ns=ns)
            queues += ["--queue", f"{link.index}:{us}"]
            windows = self.holds_ns.get(link.index, [])
            # HOLD_CHUNK windows per --hold (Linux takes at most 128 KiB in one argument).
            for c in range(0, len(windows), HOLD_CHUNK):
                queues += ["--hold", f"{link.index}:" + ",".join(f"{a}-{b}" for a, b in windows[c:c + HOLD_CHUNK])]
        if self.holds_ns:
            queues += ["--origin-unix-ns", str(origin_unix_ns)]
        # Real-time priority where the machine allows it (CAP_SYS_NICE); else an ordinary
        # process, and emu.json says so (`realtime`).
        err = ""
        for rt in ([["chrt", "-f", RT_PRIORITY]] if shutil.which("chrt") else []) + [[]]:
            err = self._launch(ns, [*rt, exe, *queues])
            if not err:
                self.realtime = bool(rt)
                return
        raise EmuError(f"{BINARY} did not start: {err}")

    def _launch(self, ns: str, argv: list[str]) -> str:
        """Starts the line; '' once it reports ready, else why not."""
        self.proc = popen(["ip", "netns", "exec", ns, *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], READY_TIMEOUT_S)
        line = self.proc.stdout.readline() if ready else ""
        if line.strip() == "ready":
            return ""
        self.proc.kill()
        _, err = self.proc.communicate()
        self.proc = None
        return " ".join((err or line or f"no answer in {READY_TIMEOUT_S:g} s").split())

    def stop(self) -> dict[str, Any]:
        """Stops the line; its counts and lateness, and the kernel's queue drops."""
        if self.proc is None:
            return {"one_way_ms": [us / 1000.0 for us in self.delays_us], "queues": []}
        died = self.proc.poll() is not None
        drops = self._kernel_drops()  # the queues' rows go with the process
        if not died:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self.proc = None
        stats: dict[str, Any] = {}
        for line in reversed(out.splitlines()):
            if line.startswith("{"):
                stats = json.loads(line)
                break
        if died:
            raise EmuError(f"{BINARY} stopped during the run: {' '.join((err or '').split()) or 'no message'}")
        stats["one_way_ms"] = [us / 1000.0 for us in self.delays_us]
        stats["kernel_drops"] = drops
        stats["realtime"] = self.realtime
        return stats

    def _kernel_drops(self) -> dict[str, int]:
        """/proc/net/netfilter/nfnetlink_queue: per queue, packets dropped for a full queue
        (queue_dropped) or a full netlink socket (user_dropped)."""
        try:
            text = sh("cat", "/proc/net/netfilter/nfnetlink_queue", ns=self.topo.ap)
        except EmuError:
            return {}
        drops = {}
        for row in text.splitlines():
            f = row.split()
            if len(f) >= 7:
                drops[f"queue{f[0]}"] = int(f[5]) + int(f[6])
        return drops

