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

With the server in the AP's namespace (the scenario's backbone disabled, netns.py) nothing is
forwarded: each direction is delayed where it arrives, after the link's queue, by a line in the
receiving namespace (the INPUT chain of the client for the AP's packets, of the AP for the
client's). Not where the server's packets leave (OUTPUT): there the packet still holds its
socket's reference, so TCP Small Queues would count a whole propagation delay of data as queued
at the sender (measured: a CUBIC download got 35 Mbit/s of a 100 Mbit/s path with 5 ms each way
held in the server's OUTPUT, 96 with the lines where packets arrive); the receiver's IP layer
drops that reference on arrival (net/ipv4/ip_input.c, ip_rcv_core, skb_orphan), before its
netfilter hooks. Queue then propagation is also the link's order. Then there are two lines
(one per namespace), each with the path's queue numbers; emu.json's `delay_line.queues` has both,
each with its `namespace`.

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
import subprocess
import sys
from pathlib import Path
from typing import Any

from .errors import EmuError
from .netns import Topology, packet_hooks, sh, stop
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
    """The rules and the processes (one per namespace that delays: netns.packet_hooks); `stop()` returns what
    they measured."""

    def __init__(self, topo: Topology, delays_us: list[int],
                 holds_ns: dict[int, list[tuple[int, int]]] | None = None,
                 cuts_ns: dict[int, list[tuple[int, int]]] | None = None) -> None:
        self.topo = topo
        self.delays_us = delays_us
        # Per path index: hold windows [start, end) in ns after the origin given to start().
        self.holds_ns = {k: v for k, v in (holds_ns or {}).items() if v}
        # Per path index: its `drop` outages' windows on the same clock, the path cut at the
        # client's end (mmpath-delay's cut.rs: what the client sends inside one is lost, and what
        # is on its way to the client then); drops.py takes the link down a few ms later. Only
        # with the server at the AP, where the client's line is the last stage toward the client
        # and the AP's line the first from it: behind the router the AP's one line sits before
        # the AP's queue, where a cut is neither at the client's end nor at the path's start, so
        # there the nft set and the link make the cut (drops.py), ~2 ms late (docs/emulate.md).
        self.cuts_ns = {k: v for k, v in (cuts_ns or {}).items() if v} if topo.colocated else {}
        # (namespace, short name, process) per running line.
        self.procs: list[tuple[str, str, subprocess.Popen]] = []
        self.realtime = False

    def needed(self) -> bool:
        return any(us > 0 for us in self.delays_us) or bool(self.holds_ns) or bool(self.cuts_ns)

    def timed(self) -> bool:
        """Whether the line has windows on the run's clock (start() then needs their origin)."""
        return bool(self.holds_ns) or bool(self.cuts_ns)

    def start(self, origin_unix_ns: int | None = None) -> None:
        """Rules and process; `origin_unix_ns` (time.time_ns()): the hold windows' time zero,
        required when there are any."""
        todo = [(link, us) for link, us in zip(self.topo.paths, self.delays_us)
                if us > 0 or link.index in self.holds_ns or link.index in self.cuts_ns]
        if not todo:
            return
        exe = binary()
        if exe is None:
            raise EmuError(f"the scenario has a propagation delay or a scan and {BINARY} was not found (build it "
                           "with `make setup`, or point MMPATH_DELAY at it)")
        if self.timed() and origin_unix_ns is None:
            raise EmuError("internal: the delay line's hold and cut windows need their origin")
        # Per namespace that delays: its short name and the line's arguments.
        args: dict[str, tuple[str, list[str]]] = {}
        for link, us in todo:
            for ns, short, rules in packet_hooks(self.topo, link.index):
                for match in rules:
                    sh("iptables", "-A", *match, "-j", "NFQUEUE", "--queue-num", str(link.index), ns=ns)
                queues = args.setdefault(ns, (short, []))[1]
                queues += ["--queue", f"{link.index}:{us}"]
                # HOLD_CHUNK windows per --hold / --cut (Linux takes at most 128 KiB in one
                # argument).
                for flag, by_path in (("--hold", self.holds_ns), ("--cut", self.cuts_ns)):
                    windows = by_path.get(link.index, [])
                    for c in range(0, len(windows), HOLD_CHUNK):
                        queues += [flag,
                                   f"{link.index}:" + ",".join(f"{a}-{b}" for a, b in windows[c:c + HOLD_CHUNK])]
                # The AP's line gets the client's packets by the path's AP end (netns.
                # packet_hooks); the client's own line carries only packets toward it.
                if link.index in self.cuts_ns and ns == self.topo.ap:
                    queues += ["--from-client", f"{link.index}:{link.ap_if}"]
        for ns, (short, queues) in args.items():
            if self.timed():
                queues += ["--origin-unix-ns", str(origin_unix_ns)]
            # Real-time priority where the machine allows it (CAP_SYS_NICE); else an ordinary
            # process, and emu.json says so (`realtime`: every line's).
            err = ""
            for rt in ([["chrt", "-f", RT_PRIORITY]] if shutil.which("chrt") else []) + [[]]:
                proc, err = self._launch(ns, [*rt, exe, *queues])
                if proc is not None:
                    self.procs.append((ns, short, proc))
                    self.realtime = bool(rt) and (self.realtime or len(self.procs) == 1)
                    break
            else:
                raise EmuError(f"{BINARY} did not start: {err}")

    @staticmethod
    def _launch(ns: str, argv: list[str]) -> tuple[subprocess.Popen | None, str]:
        """Starts a line; the process once it reports ready, else None and why not."""
        proc = popen(["ip", "netns", "exec", ns, *argv], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([proc.stdout], [], [], READY_TIMEOUT_S)
        line = proc.stdout.readline() if ready else ""
        if line.strip() == "ready":
            return proc, ""
        proc.kill()
        _, err = proc.communicate()
        return None, " ".join((err or line or f"no answer in {READY_TIMEOUT_S:g} s").split())

    def kill(self) -> None:
        """Ends every line at once (a run that failed)."""
        for _, _, proc in self.procs:
            proc.kill()
            proc.communicate()
        self.procs = []

    def stop(self) -> dict[str, Any]:
        """Stops the lines; their counts and lateness, and the kernel's queue drops. With two
        lines (netns.Topology.colocated) each queue's entry names its `namespace`."""
        if not self.procs:
            return {"one_way_ms": [us / 1000.0 for us in self.delays_us], "queues": []}
        two = len(self.procs) > 1
        merged: dict[str, Any] = {"queues": [], "held_at_exit": 0, "kernel_drops": {}}
        died = []
        for ns, short, proc in self.procs:
            gone = proc.poll() is not None
            drops = self._kernel_drops(ns)  # the queues' rows go with the process
            out, err = stop(proc)
            if gone:
                died.append(" ".join((err or "").split()) or "no message")
            stats: dict[str, Any] = {}
            for line in reversed(out.splitlines()):
                if line.startswith("{"):
                    stats = json.loads(line)
                    break
            merged["queues"] += [{**q, "namespace": short} if two else q for q in stats.get("queues", [])]
            merged["held_at_exit"] += int(stats.get("held_at_exit") or 0)
            # Held packets the kernel dropped itself, their interface gone down (a `drop` outage
            # of the client's end, with the line in the client's namespace: mmpath-delay).
            merged["dropped_by_kernel"] = merged.get("dropped_by_kernel", 0) + int(stats.get("dropped_by_kernel") or 0)
            # Packets from the client a cut judged by the kernel's arrival stamp (mmpath-delay).
            merged["kernel_stamped"] = merged.get("kernel_stamped", 0) + int(stats.get("kernel_stamped") or 0)
            merged.setdefault("hold_origin_after_start_ms", stats.get("hold_origin_after_start_ms"))
            merged["kernel_drops"].update({f"{short} {k}" if two else k: v for k, v in drops.items()})
        self.procs = []
        if died:
            raise EmuError(f"{BINARY} stopped during the run: {died[0]}")
        merged["one_way_ms"] = [us / 1000.0 for us in self.delays_us]
        merged["realtime"] = self.realtime
        return merged

    @staticmethod
    def _kernel_drops(ns: str) -> dict[str, int]:
        """/proc/net/netfilter/nfnetlink_queue: per queue, packets dropped for a full queue
        (queue_dropped) or a full netlink socket (user_dropped)."""
        try:
            text = sh("cat", "/proc/net/netfilter/nfnetlink_queue", ns=ns)
        except EmuError:
            return {}
        drops = {}
        for row in text.splitlines():
            f = row.split()
            if len(f) >= 7:
                drops[f"queue{f[0]}"] = int(f[5]) + int(f[6])
        return drops

