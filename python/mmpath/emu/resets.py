"""A wired path's `reset` step done as a middlebox does it (docs/scenario.md, `schedule`:
`{ t_s, reset = true }`): at the step's time every TCP connection crossing the path is reset, both
ends, and the path stays up for new connections.

How: the AP's namespace is the router every path crosses (netns.py; the server's own namespace
when the scenario has no backbone). At the step, the path's client address joins an nft set whose
rules answer every TCP segment from or to it with `reject with tcp reset` (net/ipv4/netfilter/
nf_reject_ipv4.c, nf_send_reset: a RST to the segment's sender, its sequence number the
segment's acknowledgement number): in the input hook (the client's segments to a server in the
AP's namespace), the output hook (that server's segments to the client) and the forward hook
(both ways, a server behind the AP). RSTs themselves pass, the ones the rules make included. Each
end is reset by the RST answering the next segment it sends through the router. The server's
segments are answered at once; the client's RST travels behind what the AP had queued for it, so
the client's receive point has moved on and the kernel answers it with a challenge ACK (RFC 5961,
tcp_validate_incoming), which the rule answers again, until one RST matches once the queue has
drained: the set keeps the address for `WINDOW_S` (the longest drain of a path's 1000-packet
queue at the rates the benchmarks use, 1000 x 1500 bytes at 100 Mbit/s = 0.12 s, plus round
trips). Then the address leaves the set, and anything still open on the address (a connection
idle through the whole window sent nothing to be answered) is destroyed at both ends with `ss -K`
(sock_diag's SOCK_DESTROY, CONFIG_INET_DIAG_DESTROY: tcp_abort, which sends the peer a RST; the
error there is ECONNABORTED), so that, as in the simulator, nothing that crossed the path at the
step survives it. The simulator resets both ends at the step's instant; here each end goes within
about a round trip of a busy subflow (the server's at once), and emu.json has when.

The kernel's view of each MPTCP subflow's close is recorded from `ip mptcp monitor` in the
client's and the server's namespaces: SF_CLOSED with the socket's error (104, ECONNRESET, for a
subflow reset by a RST). emu.json `resets` has per step the planned and applied times, when the
set let the address go, what `ss -K` destroyed, and those events.

Only MPTCP flows are reset here: iperf3 keeps a TCP control connection on its flow's path (MPTCP
too under mptcpize, so with another path it survives the reset as the data connection does), and
iperf3 ends with an error when a TCP flow's connection or a UDP flow's control connection is
reset, leaving no result to record: such a scenario is refused in one line (`plan`).

The table lives in the AP's namespace and goes with it (netns.teardown, the reaper's watchdog).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from typing import Any

from .errors import EmuError
from .netns import Topology, stop
from .reaper import popen, run

TABLE = "mmpath_reset"
# How long a reset path's address stays in the set (above).
WINDOW_S = 0.5
RULESET = f"""table inet {TABLE} {{
  set addrs {{ type ipv4_addr; }}
  chain r_in {{ type filter hook input priority -400; ip saddr @addrs tcp flags & rst == 0 reject with tcp reset; }}
  chain r_fwd {{ type filter hook forward priority -400; ip saddr @addrs tcp flags & rst == 0 reject with tcp reset; ip daddr @addrs tcp flags & rst == 0 reject with tcp reset; }}
  chain r_out {{ type filter hook output priority -400; ip daddr @addrs tcp flags & rst == 0 reject with tcp reset; }}
}}
"""
# `ip mptcp monitor`: "[       SF_CLOSED] token=... saddr4=... error=104 ...".
_EVENT = re.compile(r"^\[\s*(?P<name>[A-Z_]+)\]\s*(?P<rest>.*)$")


def plan(config: dict[str, Any], until_s: float) -> dict[int, list[float]]:
    """Per path index, the times (s) of its `reset` steps before `until_s`; EmuError for a reset
    the emulator cannot make and still record the run (above)."""
    paths = config.get("path", [])
    names = [str(p.get("name")) for p in paths]
    out: dict[int, list[float]] = {}
    for i, p in enumerate(paths):
        ts = sorted(float(st["t_s"]) for st in p.get("schedule") or [] if st.get("reset"))
        ts = [t for t in ts if t < until_s]
        if ts:
            out[i] = ts
    if not out:
        return out
    reset_names = {names[i] for i in out}
    for j, f in enumerate(config.get("flow", [])):
        kind = f.get("kind", "tcp")
        if kind == "mptcp":
            used = [str(n) for n in (f.get("paths") or names)]
            if all(n in reset_names for n in used):
                raise EmuError(f"flow.{j}: every path of this MPTCP flow ({', '.join(used)}) has a `reset` step: "
                               "iperf3's control connection would be left without a path and iperf3 ends with an "
                               "error (allowed: a reset on some of its paths; the simulator runs it as given)")
            continue
        path = str(f.get("path") or names[0])
        if path in reset_names:
            k = names.index(path)
            what = "TCP connection" if kind == "tcp" else "iperf3 control connection (TCP)"
            raise EmuError(f"path.{k}.schedule: a `reset` step on path {path!r} would end flow.{j}'s {what} and "
                           "iperf3 with an error, leaving no result: the emulator resets only paths that MPTCP flows "
                           "cross with another path to go on (allowed: an MPTCP flow there; the simulator runs it "
                           "as given)")
    return out


def parse_monitor(text: str) -> list[dict[str, Any]]:
    """`ip mptcp monitor` lines (each prefixed with its read time, `T<TAB>`) as dicts: `t`,
    `event` and the attributes (numbers as ints)."""
    out = []
    for line in text.splitlines():
        stamp, _, body = line.partition("\t")
        m = _EVENT.match(body.strip())
        if m is None:
            continue
        ev: dict[str, Any] = {"t": float(stamp), "event": m["name"]}
        for kv in m["rest"].split():
            k, _, v = kv.partition("=")
            ev[k] = int(v) if v.isdigit() else v
        out.append(ev)
    return out


class PathResets:
    """Resets the TCP connections crossing each path at its `reset` steps' times (s from bin 0)."""

    def __init__(self, topo: Topology, resets_s: dict[int, list[float]], mptcp: bool) -> None:
        self.topo = topo
        self.resets_s = {k: list(v) for k, v in resets_s.items() if v}
        self.mptcp = mptcp
        self._nft: subprocess.Popen | None = None
        self._monitors: dict[str, subprocess.Popen] = {}
        self._lines: dict[str, list[str]] = {}
        self._readers: list[threading.Thread] = []
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._stopped = False
        self.t0: float | None = None
        self.t0_unix: float | None = None
        # Per reset made: path, planned, applied and lifted (s from bin 0), what ss -K destroyed.
        self.done: list[dict[str, Any]] = []

    def needed(self) -> bool:
        return bool(self.resets_s)

    def prepare(self) -> None:
        """The table in the AP's namespace, a long-lived `nft -i` to change its set at once (a
        fork per change costs ~30 ms), and the MPTCP event monitors."""
        if not self.needed():
            return
        missing = [t for t in ("nft", "ss", "stdbuf") if shutil.which(t) is None]
        if missing:
            raise EmuError(f"a `reset` step needs {', '.join(missing)} on PATH (Debian: apt-get install nftables "
                           "iproute2 coreutils)")
        try:
            run(["ip", "netns", "exec", self.topo.ap, "nft", "-f", "-"], input=RULESET, capture_output=True,
                text=True, timeout=10, check=True)
        except (OSError, subprocess.SubprocessError) as e:
            detail = getattr(e, "stderr", None) or str(e)
            raise EmuError(f"the reset's nft rules could not be set: {' '.join(str(detail).split())}") from None
        self._nft = popen(["ip", "netns", "exec", self.topo.ap, "nft", "-i"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if self.mptcp:
            for role, ns in (("client", self.topo.cli), ("server", self.topo.srv)):
                # Line-buffered (ip's stdout is a pipe here), each line stamped as it is read.
                p = popen(["ip", "netns", "exec", ns, "stdbuf", "-oL", "ip", "mptcp", "monitor"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                self._monitors[role] = p
                self._lines[role] = []
                t = threading.Thread(target=self._read_monitor, args=(p, self._lines[role]), daemon=True)
                t.start()
                self._readers.append(t)

    @staticmethod
    def _read_monitor(p: subprocess.Popen, lines: list[str]) -> None:
        for line in p.stdout:
            lines.append(f"{time.time()!r}\t{line.rstrip()}")

    def _nft_do(self, line: str) -> None:
        """Writes one change to `nft -i` and waits until it is committed (a listing after it)."""
        assert self._nft is not None and self._nft.stdin is not None and self._nft.stdout is not None
        self._nft.stdin.write(f"{line}\nlist set inet {TABLE} addrs\n")
        self._nft.stdin.flush()
        for out in self._nft.stdout:
            if out.rstrip() == "}":
                break

    def start(self, t0: float) -> None:
        """Makes each reset at its time from bin 0 at `t0` (time.monotonic()) on."""
        if not self.needed() or self._nft is None:
            return
        self.t0 = t0
        self.t0_unix = time.time() - (time.monotonic() - t0)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        steps = sorted((t, k) for k, ts in self.resets_s.items() for t in ts)
        assert self.t0 is not None
        for at, k in steps:
            if self._cancel.wait(max(0.0, self.t0 + at - time.monotonic())):
                return
            addr = self.topo.paths[k].cli_addr
            try:
                self._nft_do(f"add element inet {TABLE} addrs {{ {addr} }}")
                applied = time.monotonic() - self.t0
                self._cancel.wait(WINDOW_S)
                self._nft_do(f"delete element inet {TABLE} addrs {{ {addr} }}")
                lifted = time.monotonic() - self.t0
            except (OSError, ValueError, AssertionError):
                return  # nft died: stop() says what was done
            swept = {}
            for role, ns, sel in (("client", self.topo.cli, "src"), ("server", self.topo.srv, "dst")):
                p = run(["ip", "netns", "exec", ns, "ss", "-K", "-Htn", sel, addr], capture_output=True, text=True,
                        timeout=10)
                swept[role] = len([x for x in p.stdout.splitlines() if x.strip()])
            self.done.append({"path": self.topo.paths[k].name, "planned_s": at, "applied_s": round(applied, 6),
                              "lifted_s": round(lifted, 6), "destroyed_after": swept})

    def stop(self) -> dict[str, Any]:
        """Ends the resets (what is still due is abandoned), and returns emu.json `resets`."""
        if not self.needed() or self._stopped:
            return {}
        self._stopped = True
        self._cancel.set()
        if self._thread is not None:
            self._thread.join(timeout=15)
        if self._nft is not None:
            nft, self._nft = self._nft, None
            stop(nft)
        # The set emptied whatever happened (the table goes with the namespace anyway).
        run(["ip", "netns", "exec", self.topo.ap, "nft", "delete", "table", "inet", TABLE], capture_output=True,
            text=True, timeout=10)
        for p in self._monitors.values():
            stop(p)
        for t in self._readers:
            t.join(timeout=5)
        self._monitors = {}
        return self.record()

    def record(self) -> dict[str, Any]:
        t0 = self.t0_unix or 0.0
        closed = []
        for role, lines in self._lines.items():
            for ev in parse_monitor("\n".join(lines)):
                if ev["event"] != "SF_CLOSED":
                    continue
                row = {"end": role, "t_s": round(ev.pop("t") - t0, 6)}
                row.update({k: ev[k] for k in ("saddr4", "daddr4", "sport", "dport", "error") if k in ev})
                closed.append(row)
        return {"how": f"nft `reject with tcp reset` in the AP's namespace for TCP from or to the path's client "
                       f"address for {WINDOW_S:g} s, then `ss -K` at both ends of what was still open on it",
                "window_s": WINDOW_S, "steps": self.done,
                "subflows_closed": sorted(closed, key=lambda r: r["t_s"]) if self.mptcp else None}
