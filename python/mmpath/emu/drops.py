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
  its netlink commands: net/mptcp/pm_kernel.c, pm_netlink.c in older kernels, registers no
  netdevice notifier), so the endpoint and the subflow stay, as on a
  machine without mptcpd: the subflow stops carrying and the connection's own timers decide.
- The AP's end is not set down: a router whose station's link goes loses the carrier, and a
  veth end whose peer is down loses it too (veth_open/veth_close). The kernel then deactivates
  its qdisc (linkwatch: dev_deactivate, which purges it: the download's queue at the AP is lost)
  and what is forwarded to it is dropped silently, while its routes stay (marked `linkdown`),
  so the AP sends no ICMP unreachable to the server. Setting the AP's end down too would remove
  its connected route, and the AP would answer forwarded packets with ICMP destination
  unreachable (measured: 2 for 20 datagrams sent to the client in 1 s, the AP's ICMP rate
  limit; none with only the client's end down), which Linux TCP takes as a reason to revert
  its RTO backoff (RFC 6069, tcp_ld_RTO_revert): not what a link that simply carries nothing
  does. The AP's neighbour entry for the client is permanent (netns.py), so what it forwards
  during the outage is dropped, not parked in ARP's queue until the link is back.
- The cut is one instant, as the scenario's step is: with the server at the AP the delay line
  makes it at the planned instant (delay.py, mmpath-delay `--cut`: what it releases toward the
  client or receives from the client inside the window is lost; behind the router the line
  sits before the AP's queue and leaves the cut to what follows). Then, ~2 ms later, the
  client's end joins an nft set
  whose rules drop everything arriving by it (prerouting, and input after the delay line's
  queue, so a packet the line releases later is dropped too) and everything leaving by it
  (output), then it is set down. `ip link set down` alone is not one instant: it clears the
  interface's running state and swaps its qdisc for the no-op one at once, but keeps the
  interface up for receiving until an RCU grace period has passed (net/core/dev.c
  `__dev_close_many`: `dev_deactivate_many`, whose `synchronize_net` is 0.4-11 ms here under
  load, before `IFF_UP` is cleared and nfnetlink_queue drops what it holds for the interface).
  In that window the client still received data and its ACKs died in the no-op qdisc: the
  server later retransmitted a segment the client had, got a D-SACK acknowledging ~8 segments
  with a timestamp echo from before the cut, took a multi-second RTT sample from it and stayed
  silent (docs/path-manager.md). What left the client before the cut (the AP's delay line)
  arrives; what was on its way to the client is lost: the simulator's drop outage does the same
  (docs/models.md "Outages: hold or drop"). At the return the interface leaves the set, then
  is set up.
- An nft drop rule in both directions (at the AP) would leave both qdiscs' packets to leave,
  and arrive, during the outage; a shaper gate (the radio's outage, shaper.py) drops the AP's
  queue but not the client's, and the client's kernel would not see its link go.

At the step `up = true` the client's end is set up: the kernel adds the address's own routes
back, and this puts back the ones the emulator added (the path's table, the default route for
path 0, with tcpconf's per-route settings), as `ip route replace`; the AP's end gets its carrier
back and its qdisc is activated again. A drop window still open at the run's end is ended there,
so that iperf3 can exchange its results (as the shaper brings a link back after its trace).

Timing: the plan is known at the start, so it is handed before bin 0 to a driver at real-time
priority in the client's namespace (`DRIVER`), which sleeps until each change is due and writes
it to its long-lived `ip -batch` (a fork per change would cost ~30 ms). A thread of the
emulator doing the same woke up to 14 ms late on this loaded 2-core machine; the driver writes
within 0.2 ms. When the changes took effect is measured by `ip -ts monitor link` in both
namespaces (the kernel's link notifications, stamped when the monitor reads them): the
client's end going down and up, the AP's end losing and regaining its carrier; emu.json
`outages` has them per window. What remains is the kernel's: `ip link set down` returns after
the interface's qdiscs are deactivated (an RCU grace period), 0.4-11 ms here under load.

The namespaces hold the links, routes and processes, so deleting them (netns.teardown, the
reaper's watchdog, `mmpath emu clean`) leaves nothing behind.
"""

from __future__ import annotations

import datetime
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from typing import Any

from .errors import EmuError
from .netns import Topology, routes, stop
from .reaper import popen, run

# `ip -ts -o monitor link`: "[2026-12-06T03:15:37.207390] 3: p0a@if2: <NO-CARRIER,...,UP> ...".
_EVENT = re.compile(r"^\[(?P<ts>[0-9T:.-]+)\]\s+\d+:\s+(?P<ifname>[^:@\s]+)(?:@[^:]*)?:\s+<(?P<flags>[^>]*)>")


def plan(windows_ns: dict[int, list[tuple[int, int]]]) -> list[tuple[float, bool, int]]:
    """The changes to make: (seconds from bin 0, down?, path index), in time order, a link's
    return before another's going down at the same instant."""
    steps = [(a / 1e9, True, k) for k, w in windows_ns.items() for a, _ in w]
    steps += [(b / 1e9, False, k) for k, w in windows_ns.items() for _, b in w]
    steps.sort(key=lambda st: (st[0], st[1], st[2]))
    return steps


# The cut's nft table in the client's namespace (deleted with it): a set of cut interfaces and
# the rules that drop what arrives or leaves by one of them. Input's chain runs after the delay
# line's NFQUEUE rule (iptables' filter chains, priority 0), so a packet the line releases into
# a cut interface's input is dropped.
CUT_TABLE = "mmpath_cut"
CUT_RULESET = f"""table inet {CUT_TABLE} {{
  set cut {{ type ifname; }}
  chain pre {{ type filter hook prerouting priority -400; iifname @cut drop; }}
  chain inp {{ type filter hook input priority 400; iifname @cut drop; }}
  chain out {{ type filter hook output priority -400; oifname @cut drop; }}
}}
"""


def cut_command(topo: Topology, index: int, down: bool) -> str:
    """The `nft` line that puts path `index`'s client end in the cut set, or takes it out."""
    verb = "add" if down else "delete"
    return f'{verb} element inet {CUT_TABLE} cut {{ "{topo.paths[index].cli_if}" }}'


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


# The driver: at real-time priority in the client's namespace (a thread of the emulator, an
# ordinary process on a loaded 2-core machine, woke up to 14 ms late), it reads the plan's
# lines `AT PATH DOWN NFT<TAB>IP COMMANDS` (AT on CLOCK_MONOTONIC, shared by all processes; the
# commands tab-separated), sleeps until each is due, writes the nft line to its `nft -i` child
# and waits until nft has committed it (a listing of the set after it comes back), then writes
# the rest to its `ip -batch` child (both inherit the priority) and answers `PATH DOWN
# CUT_AT`, when the nft change had taken effect.
DRIVER = ("import subprocess, sys, time\n"
          "ip = subprocess.Popen(['ip', '-force', '-batch', '-'], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,\n"
          "                      text=True)\n"
          "nft = subprocess.Popen(['nft', '-i'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n"
          "print('ready', flush=True)\n"
          "for line in sys.stdin:\n"
          "    at, k, down, cmds = line.rstrip('\\n').split(' ', 3)\n"
          "    cut, _, rest = cmds.partition('\\t')\n"
          "    wait = float(at) - time.monotonic()\n"
          "    if wait > 0:\n"
          "        time.sleep(wait)\n"
          f"    nft.stdin.write(cut + '\\nlist set inet {CUT_TABLE} cut\\n')\n"
          "    nft.stdin.flush()\n"
          "    for out in nft.stdout:\n"
          "        if out.rstrip() == '}':\n"
          "            break\n"
          "    done = time.monotonic()\n"
          "    ip.stdin.write(rest.replace('\\t', '\\n') + '\\n')\n"
          "    ip.stdin.flush()\n"
          "    print(k, down, repr(done), flush=True)\n"
          "ip.stdin.close()\n"
          "nft.stdin.close()\n"
          "ip.wait()\n"
          "nft.wait()\n")
# The driver's real-time priority: delay.py's (above iperf3 and tcpdump, below the kernel's own
# SCHED_FIFO 50 threads).
RT_PRIORITY = "20"
READY_TIMEOUT_S = 5.0


class LinkDrops:
    """Takes each path's link down through its `drop` windows (ns from bin 0) and back."""

    def __init__(self, topo: Topology, windows_ns: dict[int, list[tuple[int, int]]]) -> None:
        self.topo = topo
        self.windows_ns = {k: list(w) for k, w in windows_ns.items() if w}
        self._driver: subprocess.Popen | None = None
        self._monitors: dict[str, subprocess.Popen] = {}
        self._reader: threading.Thread | None = None
        self._stopped = False
        self.realtime = False
        self.t0: float | None = None
        self.t0_unix: float | None = None
        # Per change made: (path, down?, planned s from bin 0, written s from bin 0).
        self.written: list[tuple[int, bool, float, float]] = []

    def needed(self) -> bool:
        return bool(self.windows_ns)

    def prepare(self) -> None:
        """Starts the monitors and the driver (from the main thread, which outlives them: they
        die with the run, reaper.py), ahead of bin 0 so that the monitors are listening."""
        if not self.needed():
            return
        # The cut's set and rules, in the client's namespace (they go with it).
        try:
            run(["ip", "netns", "exec", self.topo.cli, "nft", "-f", "-"], input=CUT_RULESET, capture_output=True,
                text=True, timeout=10, check=True)
        except (OSError, subprocess.SubprocessError) as e:
            detail = getattr(e, "stderr", None) or str(e)
            raise EmuError(f"the drop outage's nft rules could not be set: {' '.join(str(detail).split())}") from None
        for ns in (self.topo.cli, self.topo.ap):
            self._monitors[ns] = popen(["ip", "-n", ns, "-ts", "-o", "monitor", "link"], stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, text=True)
        err = ""
        for rt in ([["chrt", "-f", RT_PRIORITY]] if shutil.which("chrt") else []) + [[]]:
            self._driver = popen(["ip", "netns", "exec", self.topo.cli, *rt, sys.executable, "-I", "-c", DRIVER],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            ready, _, _ = select.select([self._driver.stdout], [], [], READY_TIMEOUT_S)
            line = self._driver.stdout.readline() if ready else ""
            if line.strip() == "ready":
                self.realtime = bool(rt)
                return
            self._driver.kill()
            _, err = self._driver.communicate()
            self._driver = None
        raise EmuError(f"the link drops' driver did not start: {' '.join((err or 'no answer').split())}")

    def start(self, t0: float) -> None:
        """Hands the driver every change, due from bin 0 at `t0` (time.monotonic()) on."""
        if not self.needed() or self._driver is None:
            return
        self.t0 = t0
        self.t0_unix = time.time() - (time.monotonic() - t0)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        lines = [f"{t0 + at!r} {k} {int(down)} " + "\t".join([cut_command(self.topo, k, down),
                                                                *commands(self.topo, k, down)])
                 for at, down, k in plan(self.windows_ns)]
        try:
            self._driver.stdin.write("\n".join(lines) + "\n")
            self._driver.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the driver died: stop() says so

    def _read(self) -> None:
        """The driver's answers: when it wrote each change."""
        due = {(k, down): [] for at, down, k in plan(self.windows_ns)}
        for at, down, k in plan(self.windows_ns):
            due[(k, down)].append(at)
        for line in self._driver.stdout:
            try:
                k, down, when = line.split()
                k, down = int(k), down == "1"
                at = due[(k, down)].pop(0)
            except (ValueError, KeyError, IndexError):
                continue
            self.written.append((k, down, at, float(when) - self.t0))

    def stop(self) -> dict[str, Any]:
        """Ends the changes, brings back every dropped path's link (still down after an error or
        Ctrl-C mid-outage; a no-op otherwise), and returns per path what was planned and what
        the monitors saw (`record`)."""
        if not self.needed() or self._stopped:
            return {}
        self._stopped = True
        errors = ""
        if self._driver is not None:
            driver, self._driver = self._driver, None
            # What is still due is abandoned (the run is over); its ip child reads the end of its
            # batch and exits.
            _, errors = stop(driver)
            if self._reader is not None:
                self._reader.join(timeout=5)
        restore = [c for k in sorted(self.windows_ns) for c in commands(self.topo, k, False)]
        # Out of the cut set (an nft error for one not in it is expected and ignored).
        for k in sorted(self.windows_ns):
            run(["ip", "netns", "exec", self.topo.cli, "nft", cut_command(self.topo, k, False)],
                capture_output=True, text=True, timeout=10)
        try:
            p = run(["ip", "-n", self.topo.cli, "-force", "-batch", "-"], input="\n".join(restore) + "\n",
                    capture_output=True, text=True, timeout=10)
            errors = " ".join(x for x in (errors, p.stderr) if x)
        except subprocess.TimeoutExpired:
            errors += " ip did not bring the links back within 10 s"
        # The monitors see the last changes a moment after they are made.
        time.sleep(0.05)
        texts = {}
        for ns, p in self._monitors.items():
            texts[ns], _ = stop(p)
        self._monitors = {}
        rec = self.record(texts.get(self.topo.cli, ""), texts.get(self.topo.ap, ""), " ".join(errors.split()))
        for r in rec.values():
            r["realtime"] = self.realtime
        return rec

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
            out[k] = {"kind": "drop", "how": f"ip link set dev {link.cli_if} down; the AP's {link.ap_if} loses its "
                      "carrier", "windows": rows,
                      "measured": all(r["client_down_s"] is not None and r["client_up_s"] is not None for r in rows),
                      "max_error_ms": round(max(errs) * 1e3, 3) if errs else None}
            if errors:
                out[k]["ip_errors"] = errors
        return out
