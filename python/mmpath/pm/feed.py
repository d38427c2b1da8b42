"""`--link-feed SOCKET`: link reports for the paths the kernel cannot report itself, read from a
Unix datagram socket the daemon creates (docs/path-manager.md "Link feed").

A machine's Wi-Fi interface tells the daemon two things: its carrier (rtnetlink; the driver
drops it when the station disassociates, e.g. wil6210's disconnect path calls
netif_carrier_off) and its station's signal and MCS (nl80211, wifi.py). An emulated radio is a
veth: its carrier never follows the radio, and it has no nl80211 station. A feed stands in for
both: each datagram is one JSON object naming an interface of `--paths` and what changed,

    {"interface": "p0c", "up": false}
    {"interface": "p0c", "signal_dbm": -62.5, "mcs": 8}
    {"interface": "p1c", "scan": true}

(`up` a bool; `signal_dbm` a number in dBm; `mcs` an integer 0..31; `scan` a bool, true when the
radio starts a scan and false when the scan is over; at least one of the four), taken as what
rtnetlink or nl80211 would have said at the moment it arrives (nl80211 announces a scan's start
and end, NL80211_CMD_TRIGGER_SCAN and NL80211_CMD_NEW_SCAN_RESULTS / SCAN_ABORTED, which `iw
event` prints: docs/path-manager.md shows a feeder built on it). Once a feed has
given an interface's `up`, its carrier comes from the feed only (the veth's, always up, would
contradict it). The emulator feeds its radio paths this way (emu/linkfeed.py); on a machine a
script can feed a link whose quality comes from elsewhere (a modem's signal, say).

A datagram that is not such an object is logged (`feed_error`) and skipped: a feeder's mistake
does not stop the daemon managing the connection.
"""

from __future__ import annotations

import json
import math
import os
import socket
import stat
from pathlib import Path as FsPath

from .system import PmError

MAX_DATAGRAM = 4096
MCS_MAX = 31  # nl80211 reports HT MCS 0-31, VHT/HE 0-11, DMG 0-31 (enum nl80211_rate_info)


class LinkFeed:
    def __init__(self, path: str, interfaces: list[str]) -> None:
        """Creates the socket at `path` (refused when something is there: a second daemon's
        feed, or a file this one must not replace)."""
        self.path = FsPath(path)
        self.interfaces = set(interfaces)
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise PmError(f"--link-feed: cannot use {path}: {e.strerror or e}") from None
        if st is not None:
            what = "a socket (another daemon's feed?)" if stat.S_ISSOCK(st.st_mode) else "a file"
            raise PmError(f"--link-feed: {path} exists and is {what}; give a path where nothing is")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            self.sock.bind(str(self.path))
        except OSError as e:
            self.sock.close()
            raise PmError(f"--link-feed: cannot create the socket {path}: {e.strerror or e}") from None
        self.sock.setblocking(False)

    def fileno(self) -> int:
        return self.sock.fileno()

    def read(self) -> list[dict]:
        """The reports waiting, each checked: {"interface", "up"?, "signal_dbm"?, "mcs"?, "scan"?} or
        {"error": why, "datagram": text} for one that is refused."""
        out = []
        while True:
            try:
                data = self.sock.recv(MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                return out
            out.append(self.parse(data))

    def parse(self, data: bytes) -> dict:
        text = data.decode("utf-8", errors="replace")
        try:
            rep = json.loads(text)
        except ValueError:
            return {"error": "not JSON", "datagram": text[:200]}
        why = check(rep, self.interfaces)
        if why:
            return {"error": why, "datagram": text[:200]}
        return rep

    def close(self) -> None:
        self.sock.close()
        try:
            self.path.unlink()
        except OSError:
            pass


# What a report may say of its interface (besides naming it), in the order messages list them.
REPORTED = ("up", "signal_dbm", "mcs", "scan")


def check(rep: object, interfaces: set[str]) -> str | None:
    """Why a report is refused, or None."""
    if not isinstance(rep, dict):
        return "not a JSON object"
    extra = sorted(set(rep) - {"interface", *REPORTED})
    if extra:
        return f"unknown field {extra[0]!r} (allowed: interface, {', '.join(REPORTED)})"
    ifname = rep.get("interface")
    if ifname not in interfaces:
        return f"interface {ifname!r} is not one of --paths ({', '.join(sorted(interfaces))})"
    if not any(k in rep for k in REPORTED):
        return f"gives none of {', '.join(REPORTED)}"
    for key in ("up", "scan"):
        if key in rep and not isinstance(rep[key], bool):
            return f"{key} must be true or false (got {rep[key]!r})"
    sig = rep.get("signal_dbm")
    if "signal_dbm" in rep and (isinstance(sig, bool) or not isinstance(sig, (int, float))
                                or not math.isfinite(sig) or not -150 <= sig <= 30):
        return f"signal_dbm must be a number of dBm in -150..30 (got {sig!r})"
    mcs = rep.get("mcs")
    if "mcs" in rep and (isinstance(mcs, bool) or not isinstance(mcs, int) or not 0 <= mcs <= MCS_MAX):
        return f"mcs must be an integer 0..{MCS_MAX} (got {mcs!r})"
    return None
