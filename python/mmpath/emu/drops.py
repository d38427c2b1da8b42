"""A wired path's `drop` outage done as a machine does it: the path's link is taken down, so the
kernel discards what is queued on it and everything sent onto it is lost, both ways, until the
step that brings it back (docs/scenario.md, `schedule`: `{ t_s, up = false, drop = true }`).

How, for each side of the path's veth pair (client end `p<k>c`, AP end `p<k>a`; netns.py):

- The client's end is set down (`ip link set dev p<k>c down`): an end host whose interface goes
  down. Its qdisc is deactivated and purged (the upload's queue is lost), its routes through the
  interface are removed, so the path's sends fail at once (EHOSTUNREACH: the path's routing
  table ends in an unreachable route, netns.py, rather than letting them leave by another path),
  and TCP keeps them for its retransmission timer. The IPv4 address stays (Linux removes IPv4
  addresses only when they are deleted; IPv6 ones would go unless keep_addr_on_down), and the
  in-kernel MPTCP path manager does not follow link state (its endpoints change only through
  its netlink commands, net/mptcp/pm_kernel.c), so the endpoint and the subflow stay, as on a
  machine without mptcpd: the subflow stops carrying and the connection's own timers decide.
- The AP's end is not set down: a router whose station's link goes loses the carrier, and a
  veth end whose peer is down loses it too (veth_open/veth_close). The kernel then deactivates
  its qdisc (linkwatch: dev_deactivate, which purges it: the download's queue at the AP is lost)
  and what is forwarded to it is dropped silently, while its routes stay (marked `linkdown`),
  so the AP sends no ICMP unreachable to the server. Setting the AP's end down too would remove
  its connected route, and the AP would answer each forwarded packet with an ICMP net
  unreachable, which Linux TCP takes as a reason to revert its RTO backoff (RFC 6069,
  tcp_ld_RTO_revert): not what a link that simply carries nothing does.
- An nft drop rule in both directions (at the AP) would leave both qdiscs' packets to leave,
  and arrive, during the outage; a shaper gate (the radio's outage, shaper.py) drops the AP's
  queue but not the client's, and the client's kernel would not see its link go.

At the step `up = true` the client's end is set up: the kernel adds the address's own routes
back, and this puts back the ones the emulator added (the path's table, the default route for
path 0, with tcpconf's per-route settings), as `ip route replace`; the AP's end gets its carrier
back and its qdisc is activated again. A drop window still open at the run's end is ended there,
so that iperf3 can exchange its results (as the shaper brings a link back after its trace).

Timing: one thread sleeps until each change on the run's clock (the shaper's bin 0) and writes
it to a long-lived `ip -batch` in the client's namespace (a fork per change would cost ms).
When the changes took effect is measured by `ip -ts monitor link` in both namespaces (the
kernel's link notifications, stamped when the monitor reads them): the client's end going down
and up, the AP's end losing and regaining its carrier; emu.json `outages` has them per window.
The namespaces hold the links, routes and processes, so deleting them (netns.teardown, the
reaper's watchdog, `mmpath emu clean`) leaves nothing behind.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import threading
import time
from typing import Any

from .netns import Topology, routes
from .reaper import popen

# `ip -ts -o monitor link`: "[2026-12-06T03:15:37.207390] 3: p0a@if2: <NO-CARRIER,...,UP> ...".
_EVENT = re.compile(r"^\[(?P<ts>[0-9T:.-]+)\]\s+\d+:\s+(?P<ifname>[^:@\s]+)(?:@[^:]*)?:\s+<(?P<flags>[^>]*)>")


def plan(windows_ns: dict[int, list[tuple[int, int]]]) -> list[tuple[float, bool, int]]:
    """The changes to make: (seconds from bin 0, down?, path index), in time order, a link's
    return before another's going down at the same instant."""
    steps = [(a / 1e9, True, k) for k, w in windows_ns.items() for a, _ in w]
    steps += [(b / 1e9, False, k) for k, w in windows_ns.items() for _, b in w]
    steps.sort(key=lambda st: (st[0], st[1], st[2]))
    return steps


def commands(topo: Topology, index: int, down: bool) -> list[str]:
    """The `ip -batch` lines that take path `index`'s client end down, or bring it up and put
    back the routes the emulator gave it (with tcpconf's per-route settings)."""
    link = topo.paths[index]
    if down:
        return [f"link set dev {link.cli_if} down"]
    attrs = topo.route_attrs.get(topo.cli, [])
    lines = [f"link set dev {link.cli_if} up"]
    for r in routes(topo)[topo.cli]:
        if r[r.index("dev") + 1] == link.cli_if:
            lines.append(" ".join(["route replace", *r, *attrs]))
    return lines


def parse_events(text: str) -> list[tuple[float, str, frozenset[str]]]:
    """`ip -ts -o monitor link` lines as (Unix time, interface, flags)."""
    out = []
    for line in text.splitlines():
        m = _EVENT.match(line.strip())
        if m is None:
            continue
        try:
            # ip stamps with the local time (localtime(3)); fromisoformat reads it as local too.
            t = datetime.datetime.fromisoformat(m["ts"]).timestamp()
        except ValueError:
            continue
        out.append((t, m["ifname"], frozenset(m["flags"].split(","))))
    return out


def transitions(events: list[tuple[float, str, frozenset[str]]], ifname: str, flag: str,
                absent: str | None = None) -> tuple[list[float], list[float]]:
    """Times `ifname` lost and regained its state: `flag` among its flags (and `absent` not),
    from a first state of having it."""
    lost, back = [], []
    have = True
    for t, name, flags in events:
        if name != ifname:
            continue
        now = flag in flags and (absent is None or absent not in flags)
        if have and not now:
            lost.append(t)
        elif now and not have:
            back.append(t)
        have = now
    return lost, back


class LinkDrops:
    """Takes each path's link down through its `drop` windows (ns from bin 0) and back."""

    def __init__(self, topo: Topology, windows_ns: dict[int, list[tuple[int, int]]]) -> None:
        self.topo = topo
        self.windows_ns = {k: list(w) for k, w in windows_ns.items() if w}
        self._batch: subprocess.Popen | None = None
        self._monitors: dict[str, subprocess.Popen] = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._down: set[int] = set()  # paths whose link this has taken down and not yet brought back
        self.t0_unix: float | None = None
        # Per change made: (path, down?, planned s from bin 0, written s from bin 0).
        self.written: list[tuple[int, bool, float, float]] = []

    def needed(self) -> bool:
        return bool(self.windows_ns)

    def prepare(self) -> None:
        """Starts the monitors and the `ip -batch` (from the main thread, which outlives them:
        they die with the run, reaper.py), ahead of bin 0 so the monitors are listening."""
        if not self.needed():
            return
        for ns in (self.topo.cli, self.topo.ap):
            self._monitors[ns] = popen(["ip", "-n", ns, "-ts", "-o", "monitor", "link"], stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, text=True)
        self._batch = popen(["ip", "-n", self.topo.cli, "-force", "-batch", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def start(self, t0: float) -> None:
        """Makes the changes from bin 0 at `t0` (time.monotonic()) on."""
        if not self.needed():
            return
        self.t0_unix = time.time() - (time.monotonic() - t0)
        self._thread = threading.Thread(target=self._run, args=(t0,), daemon=True)
        self._thread.start()

    def _run(self, t0: float) -> None:
        for at, down, k in plan(self.windows_ns):
            wait = t0 + at - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            if not self._apply(k, down):
                return
            self.written.append((k, down, at, time.monotonic() - t0))

    def _apply(self, k: int, down: bool) -> bool:
        with self._lock:
            if self._batch is None:
                return False
            try:
                self._batch.stdin.write("\n".join(commands(self.topo, k, down)) + "\n")
                self._batch.stdin.flush()
            except (BrokenPipeError, OSError):
                return False
            (self._down.add if down else self._down.discard)(k)
            return True

    def stop(self) -> dict[str, Any]:
        """Ends the changes, brings back any link still down (an error or Ctrl-C mid-outage),
        and returns per path what was planned and what the monitors saw (`record`)."""
        if not self.needed() or self._stop.is_set():
            return {}
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for k in sorted(self._down):
            self._apply(k, False)
        errors = ""
        if self._batch is not None:
            batch, self._batch = self._batch, None
            try:  # communicate() closes its stdin: ip reads the end of its batch and exits
                _, errors = batch.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                batch.kill()
                _, errors = batch.communicate()
        # The monitors see the last changes a moment after they are made.
        time.sleep(0.05)
        texts = {}
        for ns, p in self._monitors.items():
            p.terminate()
            try:
                texts[ns], _ = p.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                texts[ns], _ = p.communicate()
        self._monitors = {}
        return self.record(texts.get(self.topo.cli, ""), texts.get(self.topo.ap, ""),
                           " ".join((errors or "").split()))

    def record(self, cli_text: str, ap_text: str, errors: str = "") -> dict[int, dict[str, Any]]:
        """Per path index: its windows, planned and as the monitors saw them, in s from bin 0,
        and the largest error of the measured change against the plan (ms)."""
        cli, ap = parse_events(cli_text), parse_events(ap_text)
        t0 = self.t0_unix or 0.0
        out = {}
        for k, windows in sorted(self.windows_ns.items()):
            link = self.topo.paths[k]
            # The client's end: admin state (UP); the AP's end: its carrier (LOWER_UP without NO-CARRIER).
            c_down, c_up = transitions(cli, link.cli_if, "UP")
            a_off, a_on = transitions(ap, link.ap_if, "LOWER_UP", absent="NO-CARRIER")

            def rel(ts: list[float], j: int) -> float | None:
                return round(ts[j] - t0, 6) if j < len(ts) else None

            rows = []
            for j, (a, b) in enumerate(windows):
                written = [w for kk, down, _, w in self.written if kk == k]
                row = {"planned_s": [a / 1e9, b / 1e9],
                       "written_s": [round(x, 6) for x in written[2 * j:2 * j + 2]],
                       "client_down_s": rel(c_down, j), "ap_carrier_off_s": rel(a_off, j),
                       "client_up_s": rel(c_up, j), "ap_carrier_on_s": rel(a_on, j)}
                rows.append(row)
            errs = []
            for row in rows:
                a, b = row["planned_s"]
                if row["client_down_s"] is not None:
                    errs.append(abs(row["client_down_s"] - a))
                back = [x for x in (row["client_up_s"], row["ap_carrier_on_s"]) if x is not None]
                if len(back) == 2:
                    errs.append(abs(max(back) - b))
            out[k] = {"kind": "drop", "how": f"ip link set dev {link.cli_if} down (the AP's {link.ap_if} loses its "
                      "carrier)", "windows": rows,
                      "measured": all(r["client_down_s"] is not None and r["client_up_s"] is not None for r in rows),
                      "max_error_ms": round(max(errs) * 1e3, 3) if errs else None}
            if errors:
                out[k]["ip_errors"] = errors
        return out
