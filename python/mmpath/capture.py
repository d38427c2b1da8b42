"""`mmpath capture [--out DIR] [...] -- CMD ...`: run CMD while sampling `ss` and `iw` into files.

This is what seed 003's mmNetAnalyzer did around its iperf3 runs (tcpdump for TCP state, `iw` for the
802.11ad PHY): it records, next to CMD's own output, the kernel's view of every TCP socket and of
the wireless links, each sample stamped with the wall clock, so `mmpath analyze DIR` can put them
on one timeline with iperf3 and the pcap.

Files (the formats `mmpath analyze` reads; see docs/analyze.md):

- ``ss.log``: every ``--interval`` seconds a line ``# mmpath-capture ss t=<unix seconds>`` followed
  by the output of ``ss -tinO`` (one line per socket; ``-O`` keeps each socket on one line).
- ``iw-<IF>.log``: the same for ``iw dev IF station dump`` followed by ``iw dev IF link``.
- ``stdout.txt`` / ``stderr.txt``: CMD's output (an ``iperf3 -J`` report lands in stdout.txt).
- ``capture.pcap``: with ``--tcpdump IF``, tcpdump's capture (headers only, ``--snaplen``).
- ``capture.json``: the command, its exit status, start/end time, the sampling interval and files.

The exit status is CMD's. Sampling never runs a shell: ss/iw are exec'd directly.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from .cliargs import print_error
from .errors import MmpathError

MARK = "# mmpath-capture"


def _wireless_interfaces() -> list[str]:
    """Interfaces the kernel lists as wireless (/sys/class/net/IF/wireless or phy80211)."""
    out = []
    base = Path("/sys/class/net")
    if base.is_dir():
        for d in sorted(base.iterdir()):
            if (d / "wireless").exists() or (d / "phy80211").exists():
                out.append(d.name)
    return out


class Sampler(threading.Thread):
    """Runs `argv` every `interval_s` and appends its output under a timestamp mark."""

    def __init__(self, kind: str, argvs: list[list[str]], path: Path, interval_s: float):
        super().__init__(daemon=True)
        self.kind, self.argvs, self.path, self.interval_s = kind, argvs, path, interval_s
        self.stop = threading.Event()
        self.samples = 0
        self.failures: list[str] = []

    def run(self) -> None:
        nxt = time.monotonic()
        with open(self.path, "w", encoding="utf-8") as f:
            while not self.stop.is_set():
                # Stamp before running the tool: the sample describes the kernel state at about this
                # instant (ss takes ~1-5 ms; documented as the sampling uncertainty).
                t = time.time()
                chunks = []
                for argv in self.argvs:
                    try:
                        r = subprocess.run(argv, capture_output=True, text=True, timeout=5)
                        chunks.append(r.stdout)
                        if r.returncode != 0 and len(self.failures) < 3:
                            self.failures.append(f"{' '.join(argv)}: {r.stderr.strip()[:200]}")
                    except (OSError, subprocess.TimeoutExpired) as e:
                        if len(self.failures) < 3:
                            self.failures.append(f"{' '.join(argv)}: {e}")
                f.write(f"{MARK} {self.kind} t={t:.6f}\n")
                for c in chunks:
                    f.write(c if c.endswith("\n") or not c else c + "\n")
                f.flush()
                self.samples += 1
                nxt += self.interval_s
                self.stop.wait(max(0.0, nxt - time.monotonic()))


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "capture", help="run a command while sampling ss and iw (for `mmpath analyze`)",
        description="Run CMD while sampling `ss -tinO` (and `iw` for wireless interfaces) every "
                    "--interval seconds into DIR, optionally with tcpdump; then `mmpath analyze DIR`.")
    p.add_argument("--out", metavar="DIR", default="mmpath-capture", help="output folder (default: mmpath-capture)")
    p.add_argument("--interval", type=float, default=0.1, metavar="S", help="sampling period in seconds (default 0.1)")
    p.add_argument("--iw", action="append", default=None, metavar="IF",
                   help="wireless interface to sample with iw (repeatable; default: every wireless interface)")
    p.add_argument("--tcpdump", metavar="IF", help="also capture packets on IF (or 'any') into capture.pcap")
    p.add_argument("--snaplen", type=int, default=128, metavar="N",
                   help="tcpdump snap length in bytes (default 128: all headers incl. TCP options)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ...", help="the command to run")
    p.set_defaults(func=run_cli)
    return p


def capture(cmd: list[str], out: str | os.PathLike = "mmpath-capture", *, interval_s: float = 0.1,
            iw: list[str] | None = None, tcpdump: str | None = None, snaplen: int = 128,
            quiet: bool = False) -> int:
    """Python form of `mmpath capture`; returns CMD's exit status."""
    if not cmd:
        raise MmpathError("capture: no command given (usage: mmpath capture [--out DIR] -- CMD ...)")
    if not (0.005 <= interval_s <= 60):
        raise MmpathError(f"capture: --interval {interval_s} is out of range (allowed: 0.005-60 seconds)")
    if shutil.which(cmd[0]) is None and not Path(cmd[0]).exists():
        raise MmpathError(f"capture: command not found: {cmd[0]}")
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MmpathError(f"capture: cannot create {out}: {e.strerror}") from None

    samplers: list[Sampler] = []
    notes: list[str] = []
    if shutil.which("ss"):
        samplers.append(Sampler("ss", [["ss", "-tinO"]], out / "ss.log", interval_s))
    else:
        notes.append("ss not found (install iproute2): no ss.log")
    ifs = _wireless_interfaces() if iw is None else iw
    if ifs and not shutil.which("iw"):
        notes.append("iw not found (install iw): no iw logs")
        ifs = []
    for ifname in ifs:
        samplers.append(Sampler("iw", [["iw", "dev", ifname, "station", "dump"], ["iw", "dev", ifname, "link"]],
                                 out / f"iw-{ifname}.log", interval_s))
    if iw is None and not ifs:
        notes.append("no wireless interface found: no iw logs")

    dump = None
    if tcpdump:
        if not shutil.which("tcpdump"):
            raise MmpathError("capture: --tcpdump needs tcpdump on PATH (apt-get install tcpdump)")
        dump = subprocess.Popen(["tcpdump", "-i", tcpdump, "-s", str(snaplen), "-w", str(out / "capture.pcap"),
                                 "-U", "--immediate-mode"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.5)  # tcpdump needs a moment to open the interface; earlier packets would be lost
        if dump.poll() is not None:
            raise MmpathError(f"capture: tcpdump -i {tcpdump} failed: {dump.stderr.read().decode(errors='replace').strip()}")

    for s in samplers:
        s.start()
    t0 = time.time()
    with open(out / "stdout.txt", "wb") as so, open(out / "stderr.txt", "wb") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se)
        try:
            rc = proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            rc = proc.wait()
    t1 = time.time()
    # One more interval of samples after CMD ends shows the sockets draining.
    time.sleep(interval_s)
    for s in samplers:
        s.stop.set()
    for s in samplers:
        s.join(timeout=10)
    if dump is not None:
        time.sleep(0.2)
        dump.send_signal(signal.SIGINT)
        try:
            dump.wait(timeout=10)
        except subprocess.TimeoutExpired:
            dump.kill()
    for s in samplers:
        notes.extend(s.failures)
    meta = {
        "cmd": cmd, "exit_status": rc, "host": socket.gethostname(),
        "start_unix_s": t0, "end_unix_s": t1, "interval_s": interval_s,
        "files": sorted(p.name for p in out.iterdir() if p.name != "capture.json"),
        "samples": {s.path.name: s.samples for s in samplers},
        "notes": notes,
    }
    (out / "capture.json").write_text(json.dumps(meta, indent=2) + "\n")
    if not quiet:
        for n in notes:
            print_error(f"capture: {n}")
        print_error(f"capture: wrote {out}{os.sep} (analyze with: mmpath analyze {out})")
    return rc


def run_cli(args: argparse.Namespace) -> int:
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    return capture(cmd, args.out, interval_s=args.interval, iw=args.iw, tcpdump=args.tcpdump,
                   snaplen=args.snaplen)
