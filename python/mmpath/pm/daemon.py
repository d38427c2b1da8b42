"""The daemon: a policy per MPTCP connection, fed the kernel's events and the paths' link changes,
its actions carried out as `mptcp_pm` commands.

`Daemon` is clock-free (every entry point takes `now_s`, seconds since the start) and talks to the
kernel through two callables, so it is tested without root (tests/test_pm.py); `serve` is the
loop around it: select() over the event sockets, the policies' timers, SIGINT / SIGTERM.
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import socket
import sys
import time
from typing import Any, Callable, Protocol

from pyroute2.netlink.exceptions import NetlinkError
from pyroute2.netlink.rtnl import RTMGRP_LINK
from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg

from .. import _core
from .events import Command, Translator
from .feed import LinkFeed
from .system import PmError, link_states
from .transport import POLL_S as TCP_POLL_S
from .transport import TcpInfo, read_stale_counter
from .wifi import Stations

# How often the wireless paths' stations are read: the driver's averaged signal takes a new sample
# with each beacon, every 102.4 ms at the default dot11BeaconPeriod of 100 TU (IEEE 802.11-2020,
# 11.1.3); reading faster would read the same value.
STATION_POLL_S = 0.1024

# include/uapi/linux/if.h: the interface is up (administratively) and has carrier.
IFF_UP = 0x1
IFF_LOWER_UP = 0x10000
RTM_NEWLINK = 16  # include/uapi/linux/rtnetlink.h


class Policy(Protocol):
    def on_event(self, now_s: float, event: dict) -> list[dict]: ...
    def poll_at(self) -> float | None: ...
    def on_timer(self, now_s: float) -> list[dict]: ...


PolicyFactory = Callable[[str, "dict | None"], Policy]


def core_policy(name: str, params: dict | None) -> Policy:
    """The policies of the Rust core (crates/mmpath-sim/src/mptcp/pm/), one per connection."""
    return _core.PathManagerPolicy(name, params)


class Daemon:
    def __init__(self, translator: Translator, policy: str, params: dict | None,
                 send: Callable[[Command], None] | None, log: Callable[[dict], None],
                 factory: PolicyFactory = core_policy,
                 link_returned: Callable[[int], list[str]] | None = None) -> None:
        """`send`: carries out one command (raises on the kernel's refusal); None: a dry run,
        the commands are only logged. `link_returned(ifindex)`: what the machine needs before the
        first new subflow on a path whose link came back (system.reset_neighbours); it returns
        what it removed, for the log."""
        self.link_returned = link_returned
        self.returned: set[int] = set()  # paths whose link came back and have no new subflow since
        self.tr = translator
        self.policy_name, self.params = policy, params
        self.send, self.log, self.factory = send, log, factory
        self.policies: dict[int, Policy] = {}
        self.fed_carrier: set[int] = set()  # ifindexes whose carrier --link-feed gives

    # ------------------------------------------------------------------ inputs

    def on_kernel_event(self, now_s: float, name: str, attrs: dict) -> None:
        self.log({"t_s": now_s, "type": "kernel_event", "event": name, "attrs": attrs})
        for token, ev in self.tr.on_mptcp(name, attrs):
            if ev["kind"] == "conn_created":
                self.policies[token] = self.factory(self.policy_name, self.params)
                self._feed(now_s, token, ev)
                # The policy learns the links already down when the connection starts.
                for path, up in sorted(self.tr.link_up.items()):
                    if not up:
                        self._feed(now_s, token, {"kind": "link_down", "path": path})
                continue
            self._feed(now_s, token, ev)
            if ev["kind"] == "subflow_established" and ev["subflow"] == 0:
                # The joins the in-kernel path manager would make (events.Translator.baseline),
                # on the paths whose link is up.
                for action in self.tr.baseline(token):
                    if self.tr.link_up.get(action["path"], True):
                        self._carry_out(now_s, token, action, "baseline")
        if name == "CLOSED" and attrs.get("token") in self.policies:
            del self.policies[attrs["token"]]

    def on_link(self, now_s: float, ifindex: int, up: bool, fed: bool = False) -> None:
        """A link's carrier from rtnetlink, or (`fed`) from --link-feed: once the feed has given
        a path's carrier, rtnetlink's for it (an emulated radio's veth, always up) is not heard."""
        if fed:
            self.fed_carrier.add(ifindex)
        elif ifindex in self.fed_carrier:
            return
        for ev in self.tr.on_link(ifindex, up):
            self.log({"t_s": now_s, "type": "link", "ifindex": ifindex, "up": up})
            (self.returned.add if up else self.returned.discard)(ev["path"])
            for token in list(self.policies):
                self._feed(now_s, token, ev)

    def on_feed(self, now_s: float, rep: dict) -> None:
        """One --link-feed report (feed.py, checked there): a carrier change, a station's signal
        and MCS, and / or a scan's start or end on one of the paths; a refused one is only
        logged."""
        if "error" in rep:
            self.log({"t_s": now_s, "type": "feed_error", **rep})
            return
        self.log({"t_s": now_s, "type": "feed", **rep})
        ifindex = next(p.ifindex for p in self.tr.paths if p.ifname == rep["interface"])
        if "up" in rep:
            self.on_link(now_s, ifindex, rep["up"], fed=True)
        if "signal_dbm" in rep or "mcs" in rep:
            self.on_quality(now_s, ifindex, rep.get("signal_dbm"), rep.get("mcs"))
        if "scan" in rep:
            self.on_scan(now_s, ifindex, rep["scan"])

    def on_scan(self, now_s: float, ifindex: int, scanning: bool) -> None:
        """A path's radio started (or ended) a scan: link-aware-backup rides it out on the backup
        (docs/path-manager.md), as the simulator's policy does."""
        for ev in self.tr.on_scan(ifindex, scanning):
            self.log({"t_s": now_s, "type": "scan", "ifindex": ifindex, "scanning": scanning})
            for token in list(self.policies):
                self._feed(now_s, token, ev)

    def on_quality(self, now_s: float, ifindex: int, signal_dbm: float | None, mcs: int | None) -> None:
        for ev in self.tr.on_quality(ifindex, signal_dbm, mcs):
            self.log({"t_s": now_s, "type": "link_quality", "ifindex": ifindex, "signal_dbm": signal_dbm, "mcs": mcs})
            for token in list(self.policies):
                self._feed(now_s, token, ev)

    def on_transport(self, now_s: float, samples: dict[tuple[int, int], dict | None],
                     stale_total: int | None) -> None:
        """One poll of the subflows' tcp_info and the stale counter (transport.py): the
        `subflow_rto` / `subflow_stale` events it makes, logged with what they were read from."""
        unattributed = self.tr.stale_unattributed
        for token, ev, facts in self.tr.on_transport(now_s, samples, stale_total):
            self.log({"t_s": now_s, "type": "transport", "token": token, "event": ev["kind"],
                      "path": ev["path"], "subflow": ev["subflow"], **facts})
            self._feed(now_s, token, ev)
        if self.tr.stale_unattributed > unattributed:
            # The kernel marked a subflow stale that none of the managed ones can be.
            self.log({"t_s": now_s, "type": "transport", "event": "stale_unattributed",
                      "count": self.tr.stale_unattributed - unattributed, "stale_counter": stale_total})

    def deadline(self) -> float | None:
        times = [t for t in (p.poll_at() for p in self.policies.values()) if t is not None]
        return min(times) if times else None

    def on_timer(self, now_s: float) -> None:
        for token, policy in list(self.policies.items()):
            at = policy.poll_at()
            if at is not None and at <= now_s:
                for action in policy.on_timer(now_s):
                    self._carry_out(now_s, token, action, "policy")

    # ------------------------------------------------------------------ outputs

    def _feed(self, now_s: float, token: int, ev: dict) -> None:
        policy = self.policies.get(token)
        if policy is None:
            return
        self.log({"t_s": now_s, "type": "policy_event", "token": token, "event": ev})
        for action in policy.on_event(now_s, ev):
            self._carry_out(now_s, token, action, "policy")

    def _carry_out(self, now_s: float, token: int, action: dict, source: str) -> None:
        self.log({"t_s": now_s, "type": "action", "token": token, "source": source, "action": action})
        path = action.get("path")
        if action.get("kind") == "create_subflow" and path in self.returned:
            # The first new subflow on a path since its link came back: its SYN must not wait
            # behind a neighbour resolution begun while the link was down (system.reset_neighbours).
            # Only then: the old subflow's packets queued on that entry are dropped with it, which
            # costs a policy that keeps the old subflow its next retransmission timeout.
            self.returned.discard(path)
            if self.link_returned is not None:
                ifindex = self.tr.paths[path].ifindex
                gone = self.link_returned(ifindex)
                if gone:
                    self.log({"t_s": now_s, "type": "neighbours_reset", "ifindex": ifindex, "addrs": gone})
        for cmd in self.tr.commands(token, action):
            rec: dict[str, Any] = {"t_s": now_s, "type": "command", "token": token, "command": cmd.describe()}
            if self.send is None:
                rec["dry_run"] = True
            else:
                try:
                    self.send(cmd)
                    rec["ok"] = True
                except NetlinkError as e:  # the kernel's refusal; its code is the errno
                    rec.update(ok=False, error=os.strerror(e.code) if e.code else str(e))
            self.log(rec)


# ---------------------------------------------------------------------- the loop


class LinkEvents:
    """rtnetlink's link group (RTMGRP_LINK): every RTM_NEWLINK, decoded with pyroute2's ifinfmsg."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.sock.bind((0, RTMGRP_LINK))

    def fileno(self) -> int:
        return self.sock.fileno()

    def read(self) -> list[tuple[int, bool]]:
        try:
            data = self.sock.recv(1 << 16)
        except OSError as e:
            if e.errno == errno.ENOBUFS:  # link changes were dropped: re-read every path's state
                return [(-1, False)]
            raise
        out, offset = [], 0
        while offset + 16 <= len(data):
            msg = ifinfmsg(data[offset:])
            msg.decode()
            length = msg["header"]["length"]
            if length < 16:
                break
            if msg["header"]["type"] == RTM_NEWLINK:
                flags = msg["flags"]
                out.append((msg["index"], bool(flags & IFF_UP) and bool(flags & IFF_LOWER_UP)))
            offset += (length + 3) & ~3
        return out

    def close(self) -> None:
        self.sock.close()


class JsonLog:
    """The --log file (JSON lines, each with its wall-clock time `t`) and, in a dry run, the
    actions, the commands and the polled transport events on stdout."""

    def __init__(self, path: str | None, echo: bool) -> None:
        try:
            self.f = open(path, "a", buffering=1) if path else None
        except OSError as e:
            raise PmError(f"--log: cannot write {path}: {e.strerror or e}") from None
        self.echo = echo

    def __call__(self, rec: dict) -> None:
        rec = {"t": round(time.time(), 6), **rec}
        line = json.dumps(rec, default=str)
        if self.f:
            self.f.write(line + "\n")
        if self.echo and rec["type"] in ("action", "command", "transport"):
            print(line, flush=True)

    def close(self) -> None:
        if self.f:
            self.f.close()


class Signals:
    """SIGINT and SIGTERM as a flag and a readable pipe for select(), from before the daemon
    changes anything until it has put everything back (a signal in between must not kill it with
    the path manager switched)."""

    def __init__(self) -> None:
        self.stop: list[int] = []
        self.rfd, self.wfd = os.pipe()
        os.set_blocking(self.wfd, False)
        os.set_blocking(self.rfd, False)
        self.old = {s: signal.signal(s, self._handler) for s in (signal.SIGINT, signal.SIGTERM)}
        self.old_wakeup = signal.set_wakeup_fd(self.wfd)

    def _handler(self, signum, _frame) -> None:
        self.stop.append(signum)

    def fileno(self) -> int:
        return self.rfd

    def drain(self) -> None:
        try:
            os.read(self.rfd, 512)
        except BlockingIOError:
            pass

    def close(self) -> None:
        signal.set_wakeup_fd(self.old_wakeup)
        for s, h in self.old.items():
            signal.signal(s, h)
        os.close(self.rfd)
        os.close(self.wfd)


def poll_transport(daemon: Daemon, tcp: TcpInfo, now_s: float) -> None:
    """Reads every managed subflow's tcp_info and the namespace's stale counter."""
    samples = {(token, sid): tcp.lookup(local, remote) for token, sid, local, remote in daemon.tr.polled()}
    daemon.on_transport(now_s, samples, read_stale_counter())


def serve(daemon: Daemon, events: Any, links: LinkEvents, initial_links: list[tuple[int, bool]],
          start: float, signals: Signals, stations: Stations | None = None, tcp: TcpInfo | None = None,
          feed: LinkFeed | None = None) -> None:
    """Runs until SIGINT or SIGTERM (`signals`). `tcp`: the subflows' tcp_info, read every
    TCP_POLL_S while the daemon manages a connection. `feed`: --link-feed's socket (feed.py)."""
    for ifindex, up in initial_links:
        daemon.on_link(time.monotonic() - start, ifindex, up)
    next_poll = 0.0 if stations is not None and stations.paths else None
    next_tcp: float | None = None
    while not signals.stop:
        now = time.monotonic() - start
        if next_poll is not None and now >= next_poll:
            for ifindex, signal_dbm, mcs in stations.poll():
                daemon.on_quality(now, ifindex, signal_dbm, mcs)
            next_poll = now + STATION_POLL_S
        if tcp is None or not daemon.tr.conns:
            next_tcp = None
        elif next_tcp is None or now >= next_tcp:
            poll_transport(daemon, tcp, now)
            next_tcp = now + TCP_POLL_S
        times = [t for t in (daemon.deadline(), next_poll, next_tcp) if t is not None]
        wait = max(0.0, min(times) - now) if times else None
        try:
            ready, _, _ = select.select([events, links, signals] + ([feed] if feed is not None else []), [], [], wait)
        except InterruptedError:
            continue
        now = time.monotonic() - start
        if events in ready:
            for name, attrs in events.read():
                daemon.on_kernel_event(now, name, attrs)
        if links in ready:
            for ifindex, up in links.read():
                if ifindex < 0:
                    for idx, now_up in link_states(daemon.tr.paths):
                        daemon.on_link(now, idx, now_up)
                else:
                    daemon.on_link(now, ifindex, up)
        if feed is not None and feed in ready:
            for rep in feed.read():
                daemon.on_feed(now, rep)
        if signals in ready:
            signals.drain()
        at = daemon.deadline()
        if at is not None and at <= time.monotonic() - start:
            daemon.on_timer(time.monotonic() - start)
    sys.stdout.flush()
