"""A flow's `path_manager` policy on the emulated client: the path-manager daemon
(`mmpath-pm`, python/mmpath/pm/, docs/path-manager.md) run in the client's namespace.

With `path_manager = "kernel"` (the default) the in-kernel path manager opens the subflows from
the endpoints netns.build gives it, as before. With another policy the daemon is started as a
child (`python -m mmpath.pm.cli --netns <client> ...`) before the traffic: it switches the
client's namespace to the userspace path manager, makes the joins the in-kernel one would
(its `baseline`), and carries out the policy's actions from then on, hearing the paths' link
changes (a `drop` outage takes the client's end of the path down, drops.py) and the kernel's
MPTCP events. Its paths are the client's interfaces `p<k>c` in scenario order, its backup paths
the flow's (backup mode: every path but the first). It is a child of the run's main thread with
a parent-death signal (reaper.popen), so a hard kill of the run takes it too; its namespace and
the record of the setting it changed (pm/system.py STATE_DIR/<namespace>.json) go with the
run's other leftovers (reaper.py).

The daemon's log (JSON lines, each record with its wall-clock time `t`) is kept in the run's
folder as `pm-daemon.jsonl`; emu.json `path_manager` lists its actions and commands on the
scenario's clock (the shaper's bin 0, `t0_unix`).
"""

from __future__ import annotations

from collections import Counter
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import reaper
from .errors import EmuError
from .linkfeed import SOCKET_NAME, Feeder
from .netns import Topology

# How long the daemon may take to be listening (it imports pyroute2 and the extension: about a
# second on this loaded 2-core machine) and to restore the setting after SIGTERM.
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0
LOG_NAME = "pm-daemon.jsonl"
STDERR_NAME = "pm-daemon.stderr.txt"


def policy(flow: dict[str, Any] | None) -> str:
    """The flow's policy; "kernel" for none or a flow without the field."""
    return str((flow or {}).get("path_manager") or "kernel")


class PmDaemon:
    def __init__(self, topo: Topology, name: str, backup_paths: list[int], folder: Path,
                 feed: list[tuple[float, dict]] | None = None) -> None:
        """`feed`: the radio paths' link reports (linkfeed.plan), sent to the daemon's
        --link-feed socket from `start_feed` on; none for wired paths alone."""
        self.topo, self.name, self.backup = topo, name, sorted(backup_paths)
        self.log_path, self.err_path = folder / LOG_NAME, folder / STDERR_NAME
        self.feeder = Feeder(folder / SOCKET_NAME, feed) if feed and self.needed() else None
        self.proc: subprocess.Popen | None = None
        self.exit_code: int | None = None

    def needed(self) -> bool:
        return self.name != "kernel"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "mmpath.pm.cli", "--policy", self.name,
               "--paths", ",".join(p.cli_if for p in self.topo.paths), "--netns", self.topo.cli,
               "--log", str(self.log_path)]
        if self.backup:
            cmd += ["--backup-paths", ",".join(str(k) for k in self.backup)]
        if self.feeder is not None:
            cmd += ["--link-feed", str(self.feeder.sock_path)]
        return cmd

    def start_feed(self, t0: float) -> None:
        """The radio paths' reports from the shaper's bin 0 (`t0`, time.monotonic) on."""
        if self.feeder is not None and self.proc is not None:
            self.feeder.start(t0)

    def start(self) -> None:
        """Starts the daemon (from the calling thread, which must outlive it: reaper.py) and
        waits until its log says it has switched the path manager and listens."""
        if not self.needed():
            return
        with open(self.err_path, "wb") as err:
            self.proc = reaper.popen(self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=err)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if any(r.get("type") == "start" for r in self.records()):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        why = " ".join(self.err_path.read_text(errors="replace").split()) or "no message"
        self.kill()
        raise EmuError(f"the path-manager daemon (path_manager = {self.name!r}) did not start: {why}")

    def stop(self) -> None:
        """SIGTERM: the daemon restores the namespace's path manager and exits."""
        if self.feeder is not None:
            self.feeder.stop()
        if self.proc is None or self.proc.poll() is not None:
            self._reap()
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._reap()

    def kill(self) -> None:
        if self.feeder is not None:
            self.feeder.stop()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        self._reap()

    def _reap(self) -> None:
        if self.proc is not None:
            self.exit_code = self.proc.wait()

    def records(self) -> list[dict[str, Any]]:
        try:
            lines = self.log_path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:  # a line being written
                break
        return out

    def record(self, t0_unix: float) -> dict[str, Any]:
        """emu.json `path_manager`: the policy and, for the daemon, what it did when (t_s on the
        scenario's clock): its actions (`source`: `baseline` for the joins the in-kernel path
        manager would make, `policy` for the policy's), the commands with the kernel's answer,
        the link changes it heard and the RTOs and stale marks it read (`transport`)."""
        out: dict[str, Any] = {"policy": self.name}
        if not self.needed():
            out["by"] = "the kernel's in-kernel path manager"
            return out
        recs = self.records()
        t_s = (lambda r: round(float(r["t"]) - t0_unix, 6))
        paths = {p.cli_if: p.index for p in self.topo.paths}
        start = next((r for r in recs if r.get("type") == "start"), {})
        by_ifindex = {p.get("ifindex"): paths.get(p.get("ifname")) for p in start.get("paths", [])}
        out.update({
            "by": "mmpath-pm in the client's namespace",
            "command": self.command()[1:],
            "log": LOG_NAME,
            "exit_code": self.exit_code,
            "backup_paths": self.backup,
            "actions": [{"t_s": t_s(r), "source": r.get("source"), **r.get("action", {})}
                        for r in recs if r.get("type") == "action"],
            "commands": [{"t_s": t_s(r), "command": r.get("command"), "ok": r.get("ok"),
                          **({"error": r["error"]} if "error" in r else {})}
                         for r in recs if r.get("type") == "command"],
            "links": [{"t_s": t_s(r), "path": by_ifindex.get(r.get("ifindex")), "up": r.get("up")}
                      for r in recs if r.get("type") == "link"],
            "transport": [{"t_s": t_s(r), "event": r.get("event"), "path": r.get("path"), "subflow": r.get("subflow"),
                           "backoff": r.get("backoff")} for r in recs if r.get("type") == "transport"],
            "restored": next((r.get("restored") for r in recs if r.get("type") == "stop"), None),
        })
        if self.feeder is not None:
            # Counts only: a fading channel changes every coherence time (pm-daemon.jsonl has
            # each report and each change the policies heard, with its time).
            def per_path(match) -> dict[str, int]:
                return dict(Counter(str(by_ifindex.get(r.get("ifindex"))) for r in recs if match(r)))

            heard = per_path(lambda r: r.get("type") == "link_quality")
            scans = per_path(lambda r: r.get("type") == "scan" and r.get("scanning"))
            out["link_feed"] = {**self.feeder.record(), "quality_changes_heard": heard, "scans_heard": scans,
                                "refused": sum(1 for r in recs if r.get("type") == "feed_error")}
        return out
