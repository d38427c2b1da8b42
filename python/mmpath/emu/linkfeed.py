"""What an emulated radio tells the path-manager daemon: its association (carrier) and its
station's signal and MCS, sent to the daemon's `--link-feed` socket (pm/feed.py) at the times
the scenario's channel has them.

On a machine the daemon hears a Wi-Fi link's carrier through rtnetlink and its signal and MCS
through nl80211 (docs/path-manager.md). An emulated radio is a veth whose carrier stays up
through a blockage (the shaper gates its rate, shaper.py) and which has no nl80211 station, so
the daemon would hear nothing the simulator's path manager hears (sim/path.rs: a radio's
disconnect and return, every signal and MCS change). The emulator shapes each radio path by the
capacity the simulator's link model gives it (capacity.py); the same probe run records the
path's channel (its link status, MCS and RSSI over time, docs/traces.md), and this module sends
that record to the daemon as it happens:

- `up` at each change of the link status (a blockage that loses the link, its re-training);
- `mcs` at each MCS change, and `signal_dbm` at each RSSI change, as the RSSI plus the device's
  receiver gain (_core.device_rx_gain_db), the signal the simulator's path manager hears;
- `scan` true when a scan begins and false when it is over (the scenario's `scan` events, each
  scan as a whole: holds.scans_s), as nl80211 announces a scan to the daemon on a machine.

The times are the channel record's on the shaper's clock (bin 0 = `t0`), so the daemon hears a
blockage at the bin where the path's capacity goes to 0. A thread sends them; on this loaded
2-core machine a thread wakes up to ~15 ms late (drops.py), which `record` reports (`late_ms`):
small against the 100 ms the daemon's own nl80211 poll takes on a machine (pm/daemon.py
STATION_POLL_S). Wired paths are not fed: their veth's carrier is the path's (drops.py).
"""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from pathlib import Path
from typing import Any

from .. import _core
from . import holds
from .capacity import Capacity
from .netns import Topology

RADIO = ("11ad", "11ac", "11n")
SOCKET_NAME = "pm-feed.sock"


def reports(channel_csv: str, interface: str, rx_gain_db: float) -> list[tuple[float, dict[str, Any]]]:
    """(t_s, report) for each change of a path's channel record: the fields that changed."""
    ch = _core.parse_csv_trace(channel_csv, interface)
    out: list[tuple[float, dict[str, Any]]] = []
    last: dict[str, Any] = {}
    for i, t in enumerate(ch["t_s"]):
        rep: dict[str, Any] = {}
        up, mcs, rssi = float(ch["link_up"][i]), float(ch["mcs"][i]), float(ch["rssi_dbm"][i])
        if not math.isnan(up) and last.get("up") != bool(up):
            rep["up"] = bool(up)
        if not math.isnan(mcs) and last.get("mcs") != int(mcs):
            rep["mcs"] = int(mcs)
        if not math.isnan(rssi):
            sig = round(rssi + rx_gain_db, 3)
            if last.get("signal_dbm") != sig:
                rep["signal_dbm"] = sig
        if rep:
            last.update(rep)
            out.append((float(t), {"interface": interface, **rep}))
    return out


def plan(cfg: dict[str, Any], topo: Topology, caps: dict[str, dict[str, Capacity]]) -> list[tuple[float, dict]]:
    """Every radio path's reports, in time order (the normalized scenario `cfg`; `caps`: each
    path's capacities by direction, whose probe recorded the channel)."""
    out: list[tuple[float, dict]] = []
    for link, p in zip(topo.paths, cfg["path"]):
        if p.get("technology") not in RADIO:
            continue
        out += scan_reports(p, link.cli_if, cfg.get("duration_s"))
        channel = next((c.channel_csv for c in caps.get(link.name, {}).values() if c.channel_csv), None)
        if channel is None:
            continue
        out += reports(channel, link.cli_if, _core.device_rx_gain_db(str(p["device"])))
    out.sort(key=lambda r: r[0])
    return out


def scan_reports(path: dict[str, Any], interface: str, until_s: float | None) -> list[tuple[float, dict[str, Any]]]:
    """(t_s, report) for each scan of a radio path: `scan` true at its start, false at its end,
    the scan as a whole (holds.scans_s), as the simulator's path manager hears it."""
    out: list[tuple[float, dict[str, Any]]] = []
    for a, b in holds.scans_s(path, until_s):
        out += [(a, {"interface": interface, "scan": True}), (b, {"interface": interface, "scan": False})]
    return out


class Feeder:
    """Sends the planned reports to the daemon's socket, each at t0 + t_s (time.monotonic)."""

    def __init__(self, sock_path: Path, planned: list[tuple[float, dict]]) -> None:
        self.sock_path, self.planned = sock_path, planned
        self.sent: list[tuple[float, float]] = []  # (planned t_s, lateness s)
        self.failed = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, t0: float) -> None:
        if not self.planned:
            return
        self._thread = threading.Thread(target=self._run, args=(t0,), daemon=True)
        self._thread.start()

    def _run(self, t0: float) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            for t_s, rep in self.planned:
                wait = t0 + t_s - time.monotonic()
                if wait > 0 and self._stop.wait(wait):
                    return
                try:
                    s.sendto(json.dumps(rep).encode(), str(self.sock_path))
                except OSError:
                    self.failed += 1  # the daemon has gone: its exit is reported by pmdaemon
                    continue
                self.sent.append((t_s, time.monotonic() - (t0 + t_s)))

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def record(self) -> dict[str, Any]:
        """emu.json `path_manager.link_feed`."""
        late = [d for _, d in self.sent]
        return {"socket": SOCKET_NAME, "planned": len(self.planned), "sent": len(self.sent),
                "failed": self.failed,
                "late_ms": {"median": round(1e3 * sorted(late)[len(late) // 2], 3) if late else None,
                            "max": round(1e3 * max(late), 3) if late else None},
                "by": "the radio paths' channel record (the capacity probe's), as link reports"}
