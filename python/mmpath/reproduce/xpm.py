"""x-pm (docs/reproduce.md, beyond the papers): the path-manager switchover benchmark, each case
run in the simulator and over this machine's real Linux MPTCP (`mmpath emu run`, the policy run by
the `mmpath-pm` daemon in the client's namespace; docs/path-manager.md).

A dual-path MPTCP download in backup mode, no backbone (the server at the AP), 14 s, in two
set-ups. Wired: primary 100 Mbit/s 5 ms one way, backup 50 Mbit/s 10 ms; cases (the primary's
schedule): cut for 5 s and restored, by a dropping and by a holding outage; flapping (three 1 s
drop cuts, 1 s apart); fading (100 -> 50 -> 20 -> 5 Mbit/s over 1.5 s, then cut, restored at
full rate); reset (at 6 s a middlebox resets the primary's TCP connections, the MP_CAPABLE
subflow among them, and the path stays up: a subflow error; docs/scenario.md `reset`). Radio (60 GHz + 5 GHz, the seed papers' pair): seed 000's 60 GHz modules at 3 m
(~1.3 Gbit/s) and a 5 GHz 11ac backup (~150 Mbit/s); cases: the 60 GHz link blocked for 5 s
(lost, then re-trained), and partly blocked first (its signal below link-aware-backup's
leaving threshold, the link still up) then blocked. On the kernel the daemon hears the radio's
loss, return, signal and MCS through its link feed (docs/path-manager.md "Link feed";
emu/linkfeed.py), as the simulator's policy hears them from the channel. Policies: the in-kernel path manager (`kernel`) and the bundled `fast-failback`,
`link-aware-backup` and `recreate`. mptcpd as Debian ships it is the in-kernel rows
(docs/path-manager.md "mptcpd, as Debian ships it").

Measured per run on 100 ms bins aligned on the case's events, in seconds:
- `takeover_s`: from the first event (the cut, or the fade's start) to the end of the first bin
  in which the backup carries at least half its rate (the radio backup's: its capacity, the link
  model saturated, as the emulator shapes it); `first_backup_s`: to its first payload;
- `back_s`: from the primary's (last) return to the end of the first bin in which it carries at
  least half its mean of the 2 s before the first event; `first_primary_s`: to its first payload;
  after a reset (the path never left, its "return" is the reset itself) only connections opened
  after it count on the primary: on the kernel what the router had queued for the reset subflow
  still reaches the client's interface after the server's end was reset (the simulator drops it
  at its closed endpoint, as the kernel does, and never delivers it); the in-kernel path manager
  opens no new subflow (mptcp/pm/kernel.rs), so `back_s` never comes and counts as what is left
  of the run in both engines, as any time that never came;
- `received_mb`: what the application received;
- `intact`: whether the application's byte stream arrived whole (issue 28: "no byte lost or
  duplicated at the application"), with its evidence `app_bytes_sent`, `app_bytes_received`,
  `dsn_bytes_acked`, `dsn_bytes_covered` and, when not, `intact_reason` (`intact_verdict`):
  on the kernel iperf3's two counts and the client's captures (the analyzer's data-level
  coverage, analyze/pcap/mptcp.py `data_stream`); in the simulator its own counts, which its
  oracle holds to the same rules;
- reported only: `reinjected_mb`, the data sent again on another subflow (MPTCP reinjection: the
  simulator's count; on the kernel the analyzer's, from the DSS mappings in the client's
  captures: a mapping whose data-sequence range was mapped before on another subflow), and
  duplicates as each engine counts them (bytes simulated; the receiver's MPTcpExtDuplicateData
  segments on the kernel).

A row (case x policy) agrees when every time is within 20 % of the kernel's or 0.3 s, whichever
is larger, and the received bytes within 10 %. The claim holds when at least 90 % of the rows
agree, every row's stream is intact in both engines, and, on the kernel, `fast-failback` has the
primary back at half rate within 0.5 s of its
return and the backup at half rate within 0.5 s of the cut (the dropping cut), where the
in-kernel path manager takes over a second to come back. Fast mode (`make test`) runs the
dropping cut with `kernel` and `fast-failback` only. The emulated runs need root and real time:
they run alone, after every other run (Experiment.exclusive), once per row.
"""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analyze.pcap.packets import ip_str, read_packets
from ..api import run as mmpath_run
from ..emu import capacity, run as emulate
from ..emu.netns import SERVER_ADDR
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from ..scenario import load_scenario
from . import kernelcompare as kc, plotting
from .registry import Checks, Claim, Experiment, Mode, Point, claim, experiment, fmt, stats

PAPER = "x"
BIN_S = 0.1
PRE_S = 2.0
DURATION_S = 14.0
RATES = (100.0, 50.0)  # primary, backup (Mbit/s)
PATHS = ("primary", "backup")
POLICIES = ("kernel", "fast-failback", "link-aware-backup", "recreate")
ENGINES = ("simulation", "emulation")
RECEIVED_TOL = 0.10
AGREE_FRAC = 0.9
FAILBACK_S = 0.5  # the "within 0.5 s" for fast-failback on the kernel
FAST_ROWS = (("cut-drop", "kernel"), ("cut-drop", "fast-failback"))
# The radio set-up (60 GHz + 5 GHz, the seed papers' pair): seed 000's 60 GHz modules (SC MCS 1-9,
# ideal rate adaptation, its 7912-byte MTU) at 3 m in free space, the client's 11ac at 40 MHz,
# one stream, a strong fixed signal; the AP as server, as in the wired set-up.
RADIO_DEVICE = "panasonic-wigig"
RADIO_MTU = 7912
RADIO_M = 3.0
# A partial blockage that leaves the 60 GHz link up at a robust MCS: at 3 m the RSSI is -37.6 dBm;
# 38 dB less is -75.6 dBm, heard as -66.6 (the device's 9 dB receiver gain), above MCS 1's
# -68 dBm sensitivity and below link-aware-backup's leaving signal, MCS 2's -66 (IEEE
# 802.11ad-2012 Table 21-3).
FADE_DB = 38.0
BACKUP_DBM = -50.0

TAKEOVER, FIRST_BACKUP, BACK, FIRST_PRIMARY, RECEIVED = (
    "takeover_s", "first_backup_s", "back_s", "first_primary_s", "received_mb")
REINJECTED = "reinjected_mb"
APP_SENT, APP_RECEIVED, DSN_ACKED, DSN_COVERED, INTACT, INTACT_WHY = (
    "app_bytes_sent", "app_bytes_received", "dsn_bytes_acked", "dsn_bytes_covered", "intact", "intact_reason")
STREAM_COUNTS = (APP_SENT, APP_RECEIVED, DSN_ACKED, DSN_COVERED)
# iperf3's cookie: the first bytes a client writes on its data connection (iperf3's COOKIE_SIZE),
# not in its byte counts.
IPERF3_COOKIE = 37
TIMES = (TAKEOVER, FIRST_BACKUP, BACK, FIRST_PRIMARY)
COMPARED = TIMES + (RECEIVED,)
LABELS = {TAKEOVER: "backup at half rate (s)", FIRST_BACKUP: "backup's first byte (s)",
          BACK: "primary back at half rate (s)", FIRST_PRIMARY: "primary's first byte (s)",
          RECEIVED: "received (MB)"}


@dataclass(frozen=True)
class Case:
    id: str
    what: str
    schedule: tuple[dict[str, Any], ...]  # the primary's schedule steps
    event_s: float  # the first event: the cut, or the fade's start
    back_s: float  # the primary's (last) return
    shade: tuple[tuple[float, float], ...]  # the primary's down spells
    setup: str = "wired"  # "wired" (the primary's `schedule`) or "radio" (the primary's radio `event`s)
    # The primary's connections are reset at event_s: on it only those opened later count after it.
    reset: bool = False


def _cut(a: float, b: float, drop: bool = True) -> list[dict[str, Any]]:
    down: dict[str, Any] = {"t_s": a, "up": False}
    if drop:
        down["drop"] = True
    return [down, {"t_s": b, "up": True}]


CASES = {c.id: c for c in (
    Case("cut-drop", "primary cut 5 s (its link down, queue lost) and restored", tuple(_cut(5.0, 10.0)),
         5.0, 10.0, ((5.0, 10.0),)),
    Case("cut-hold", "primary held 5 s (queue kept) and restored", tuple(_cut(5.0, 10.0, drop=False)),
         5.0, 10.0, ((5.0, 10.0),)),
    Case("flap", "primary cut three times for 1 s, 1 s apart (drop)",
         tuple(_cut(5.0, 6.0) + _cut(7.0, 8.0) + _cut(9.0, 10.0)), 5.0, 10.0,
         ((5.0, 6.0), (7.0, 8.0), (9.0, 10.0))),
    Case("fade", "primary fades 100 -> 50 -> 20 -> 5 Mbit/s over 1.5 s, then is cut (drop), restored at 100",
         ({"t_s": 5.0, "rate_mbps": 50.0}, {"t_s": 5.5, "rate_mbps": 20.0}, {"t_s": 6.0, "rate_mbps": 5.0},
          {"t_s": 6.5, "up": False, "drop": True}, {"t_s": 10.0, "up": True, "rate_mbps": RATES[0]}),
         5.0, 10.0, ((6.5, 10.0),)),
    Case("reset", "primary's TCP connections reset at 6 s by a middlebox (the path stays up): a subflow error",
         ({"t_s": 6.0, "reset": True},), 6.0, 6.0, (), reset=True),
    Case("11ad-blockage", "60 GHz primary blocked 5 s (link lost, re-trained) and back; 5 GHz backup",
         ({"kind": "blockage", "t_s": 5.0, "duration_s": 5.0},), 5.0, 10.0, ((5.0, 10.0),), setup="radio"),
    Case("11ad-fade", f"60 GHz primary partly blocked ({FADE_DB:g} dB: MCS 1, below link-aware-backup's leaving "
         f"signal) 1.5 s, then blocked (link lost) until 10 s; 5 GHz backup",
         ({"kind": "blockage", "t_s": 5.0, "duration_s": 1.5, "loss_db": FADE_DB},
          {"kind": "blockage", "t_s": 6.5, "duration_s": 3.5}), 5.0, 10.0, ((6.5, 10.0),), setup="radio"),
)}


def _paths(case: Case) -> list[dict[str, Any]]:
    if case.setup == "radio":
        return [{"name": PATHS[0], "technology": "11ad", "device": RADIO_DEVICE, "distance_m": RADIO_M,
                 "mtu_bytes": RADIO_MTU, "event": [dict(s) for s in case.schedule]},
                {"name": PATHS[1], "technology": "11ac", "bandwidth_mhz": 40, "streams": 1, "rssi_dbm": BACKUP_DBM,
                 "mtu_bytes": 1500}]
    return [{"name": PATHS[0], "technology": "wired", "rate_mbps": RATES[0], "delay_ms": 5.0,
             "schedule": [dict(s) for s in case.schedule]},
            {"name": PATHS[1], "technology": "wired", "rate_mbps": RATES[1], "delay_ms": 10.0}]


def scenario(case: Case, policy: str) -> dict[str, Any]:
    return {
        "name": f"x-pm-{case.id}", "duration_s": DURATION_S, "seed": 1, "backbone": {"enabled": False},
        "path": _paths(case),
        "flow": [{"name": "dl", "kind": "mptcp", "mode": "backup", "kernel": "linux-upstream",
                  "scheduler": "default", "cc": "cubic", "direction": "download", "path_manager": policy}],
    }


def edges() -> np.ndarray:
    return np.arange(0.0, DURATION_S + 1e-9, BIN_S)


@functools.lru_cache(maxsize=None)
def backup_mbps(setup: str) -> float:
    """The backup path's rate: the wired one's, or the 5 GHz radio's capacity (its link model
    saturated, as the emulator shapes it: emu/capacity.py), mean over the run."""
    if setup != "radio":
        return RATES[1]
    cfg = load_scenario(scenario(next(c for c in CASES.values() if c.setup == setup), "kernel")).config
    return float(capacity.probe(cfg, 1, "download", DURATION_S, 1).mbps.mean())


def measures(per_path: list[np.ndarray], first: list[float | None], event_s: float, back_s: float,
             backup_rate_mbps: float = RATES[1]) -> dict:
    """per_path[k][i]: bytes path k carried in bin i (`edges`); first: the first payload on the
    backup after the event and on the primary after the return (None: none)."""
    e = edges()
    mbps = [b * 8 / 1e6 / BIN_S for b in per_path]
    start = e[:-1]
    pre = float(mbps[0][(start >= event_s - PRE_S - 1e-9) & (start < event_s - 1e-9)].mean())

    def first_bin(k: int, frm: float, need: float) -> float | None:
        ok = np.flatnonzero((start >= frm - 1e-9) & (mbps[k] >= need))
        return None if not ok.size else round(float(start[ok[0]] + BIN_S - frm), 3)

    return {"pre_mbps": round(pre, 1), TAKEOVER: first_bin(1, event_s, 0.5 * backup_rate_mbps), FIRST_BACKUP: first[0],
            BACK: first_bin(0, back_s, 0.5 * pre), FIRST_PRIMARY: first[1]}


def sim_measures(res, case: Case) -> tuple[dict, list[np.ndarray]]:
    """From a simulated run (its 1 ms timeline for the first bytes)."""
    iv = res.intervals
    iv = iv[iv["subflow"] >= 0]
    e = edges()
    per_path = []
    for name in PATHS:
        sel = iv[iv["path"].astype(str) == name]
        b = np.zeros(len(e) - 1)
        idx = np.clip(np.round(sel["t_s"].to_numpy(dtype=float) / BIN_S).astype(int), 0, len(b) - 1)
        np.add.at(b, idx, sel["bytes"].to_numpy(dtype=float))
        per_path.append(b)
    tl = res.timeline
    tl = tl[tl["subflow"] >= 0]
    first = []
    for k, frm in ((1, case.event_s), (0, case.back_s)):
        per_t = tl[tl["path"].astype(str) == PATHS[k]].groupby("t_s")["delivered_bytes"].sum()
        t, v = per_t.index.to_numpy(dtype=float), per_t.to_numpy(dtype=float)
        k0 = int(np.searchsorted(t, frm - 1e-9))
        rise = np.flatnonzero(v[k0:] > v[k0]) if k0 < len(t) else np.array([])
        first.append(None if not rise.size else round(float(t[k0 + rise[0]] - frm), 3))
    f = res.summary["flows"][0]
    m = measures(per_path, first, case.event_s, case.back_s, backup_mbps(case.setup))
    m.update({RECEIVED: round(float(f["bytes_delivered"]) / 1e6, 2), "duplicates": int(f.get("duplicate_bytes") or 0),
              REINJECTED: round(float(f.get("reinjected_bytes") or 0) / 1e6, 3)})
    m.update(sim_intact(res.summary))
    return m, per_path


def intact_verdict(sent: int | None, received: int | None, stream: dict | None,
                   unread_max: int | None = None) -> dict:
    """Whether the application's byte stream arrived whole, and the counts that say so.

    `sent`: the bytes the sending application wrote; `received`: those the receiving one read;
    `stream`: the data level (analyze/pcap/mptcp.py `data_stream`'s fields): `acked_bytes`, the
    receiver's furthest data ACK past the first data byte (a DATA_FIN's octet off);
    `covered_bytes`, how many of those some subflow carried under a DSS mapping; `first_known`,
    whether the first data byte is known (else the coverage may start late); `first_hole`.
    `unread_max`: the most the receiver may have data-ACKed but its application never read (the
    kernel's receive buffer: iperf3 closes without reading what is left; 0 for the simulator,
    whose application takes every byte in order).

    Intact when every data-ACKed byte was carried (no hole from the first data byte on) and
    received <= acked <= sent: the application read no more than arrived in order (a byte handed
    to it twice would push its count past the data ACK), and nothing was acknowledged that the
    sender never wrote. Repeats on the wire (reinjections, retransmissions) are fine. iperf3 stops
    counting when its test ends, with data still in flight and in both buffers, so sent and
    received are not equal on a whole stream: what is in between is reported, not required."""
    acked = covered = None
    why = []
    if sent is None or received is None:
        why.append("iperf3 reported no " + " and no ".join(
            w for w, v in (("sender's byte count", sent), ("receiver's byte count", received)) if v is None))
    if not stream:
        why.append("no data-level stream to check (no analysis of the captures, or no DSS mapping in them)")
    else:
        acked, covered = int(stream["acked_bytes"]), int(stream["covered_bytes"])
        if not stream.get("first_known", True):
            why.append("the captures lack the connection's keys: its first data byte is unknown")
        if covered < acked:
            hole = stream.get("first_hole")
            why.append(f"{acked - covered} of the {acked} data-ACKed bytes were never carried under a mapping"
                       + (f" (first hole: bytes {hole[0]}-{hole[1]})" if hole else ""))
        if received is not None and received > acked:
            why.append(f"the application read {received} bytes, {received - acked} more than were data-ACKed")
        if sent is not None and acked > sent:
            why.append(f"{acked} bytes data-ACKed, {acked - sent} more than the sender wrote")
        if received is not None and unread_max is not None and acked - received > unread_max:
            why.append(f"{acked - received} bytes data-ACKed but never read by the application, more than "
                       f"the receiver holds ({unread_max})")
    return {APP_SENT: sent, APP_RECEIVED: received, DSN_ACKED: acked, DSN_COVERED: covered,
            INTACT: not why, INTACT_WHY: "; ".join(why)}


def sim_intact(summary: dict) -> dict:
    """`intact_verdict` from a simulated run's summary: its MPTCP flow's data sent and received in
    order at the data level and the bytes its application got, and its oracle's own verdict on
    the stream (mptcp-data-stream: every byte once, in order, never beyond what was sent)."""
    f = summary["flows"][0]
    sent, acked = f.get("data_sent_bytes"), f.get("data_received_bytes")
    stream = None
    if acked is not None:
        # The receiver's data ACK is its in-order data: contiguous from the first byte, by the
        # reassembly's construction, so all of it is covered.
        stream = {"first_known": True, "acked_bytes": acked, "covered_bytes": acked}
    v = intact_verdict(sent, f.get("bytes_delivered"), stream, unread_max=0)
    if sent is None or acked is None:
        v[INTACT_WHY] = ("the simulator's summary lacks data_sent_bytes / data_received_bytes (an extension "
                         "built before them: rebuild it, `make setup`)")
    oracle = [c for c in summary.get("invariants", {}).get("checks", [])
              if c.get("flow") == f.get("name") and c.get("check") == "mptcp-data-stream"]
    bad = [c for c in oracle if not c.get("ok")]
    if bad:
        v[INTACT] = False
        v[INTACT_WHY] = "; ".join(filter(None, [v[INTACT_WHY]] + [f"the oracle: {c.get('detail')}" for c in bad]))
    return v


def pcap_bytes(path: Path, t0_unix: float, from_server: bool = True,
               new_after: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per bin (`edges`), TCP payload bytes from the data's sender (the server in a download) in
    a client-side capture; and the times of every such packet (scenario clock). The capture
    keeps the headers only: the reader takes the payload's length from the IP total length.
    `new_after` (a reset's time): from then on only connections whose first packet came after it."""
    ts, sizes = [np.zeros(0)], [np.zeros(0)]
    tcp, _udp, _stats = read_packets(path)
    for (src, *_ports), d in tcp.items():
        if (ip_str(src) == SERVER_ADDR) == from_server:
            plen = np.array(d.plen, dtype=float)
            t = np.array(d.ts) - t0_unix
            keep = plen > 0
            if new_after is not None and len(t) and t.min() < new_after:
                keep &= t < new_after
            ts.append(t[keep])
            sizes.append(plen[keep])
    ts_a, sz = np.concatenate(ts), np.concatenate(sizes)
    b, _ = np.histogram(ts_a, bins=edges(), weights=sz)
    return b, ts_a


def emu_measures(out: Path, event_s: float, back_s: float, download: bool = True,
                 backup_rate_mbps: float = RATES[1], reset: bool = False) -> tuple[dict, list[np.ndarray]]:
    """From an emulated run's folder: the captures of the client's two interfaces, emu.json and
    iperf3's report (`reset`: the primary's connections were reset at `event_s`)."""
    meta = json.loads((out / "emu.json").read_text())
    t0 = float(meta["t0_unix"])
    per_path, times = [], []
    for k, name in enumerate(PATHS):
        b, ts = pcap_bytes(out / f"{name}.pcap", t0, from_server=download,
                           new_after=event_s if reset and k == 0 else None)
        per_path.append(b)
        times.append(ts)
    first = []
    for k, frm in ((1, event_s), (0, back_s)):
        after = times[k][times[k] >= frm]
        first.append(None if not after.size else round(float(after.min() - frm), 3))
    doc = json.loads((out / "iperf3-dl.json").read_text())
    # The receiver's MPTCP DuplicateData counter (the client in a download); emu.json names the
    # counters without nstat's MPTcpExt prefix.
    c = meta["kernel_mptcp_counters"].get("client" if download else "server", {})
    m = measures(per_path, first, event_s, back_s, backup_rate_mbps)
    m.update({RECEIVED: round(int(doc["end"]["sum_received"]["bytes"]) / 1e6, 2),
              "duplicates": int(c.get("DuplicateData", c.get("MPTcpExtDuplicateData", 0))),
              REINJECTED: analyzed_reinjections_mb(out),
              "goodput_mbps": round(float(meta["goodput_mbps"]), 1)})
    m.update(emu_intact(doc, _data_connection(out), _rmem_max(meta), meta.get("captures"), download))
    return m, per_path


def iperf3_counts(doc: dict) -> tuple[int | None, int | None]:
    """(bytes the sending application wrote, bytes the receiving one read) from the client's
    iperf3 -J report. In a download (-R) the server sends: the client's report has the server's
    count as `sum_sent` (exchanged at the test's end; iperf3 3.12 marks it `"sender": false`,
    the client's role) and its own reads as `sum_received`. None where the report lacks one
    (a test that ended before the exchange)."""
    end = doc.get("end") or {}

    def count(key: str) -> int | None:
        v = (end.get(key) or {}).get("bytes")
        return int(v) if isinstance(v, (int, float)) else None

    return count("sum_sent"), count("sum_received")


def _rmem_max(meta: dict) -> int | None:
    """The receiver's largest receive buffer (emu.json's TCP settings: tcp_rmem's third value),
    the most it can have data-ACKed that its application never read; None when not recorded."""
    v = (meta.get("tcp_settings") or {}).get("receiver net.ipv4.tcp_rmem")
    try:
        return int(str(v).split()[2])
    except (IndexError, ValueError):
        return None


def emu_intact(doc: dict, conn: dict | None, unread_max: int | None = None,
               capture_notes: list[str] | None = None, download: bool = True) -> dict:
    """`intact_verdict` of an emulated run: iperf3's counts (`doc`, the client's report) and the
    data stream the analyzer found in the client's captures (`conn`: analysis/summary.json's
    data connection, its `data_stream`). `capture_notes`: tcpdump's closing lines (emu.json
    `captures`): a capture that dropped packets is named in the reason, as a hole may be its.
    In an upload the client's stream opens with iperf3's cookie, which its counts leave out."""
    sent, received = iperf3_counts(doc)
    stream = (conn or {}).get("data_stream")
    if stream and not download and stream["acked_bytes"] >= IPERF3_COOKIE:
        stream = dict(stream, acked_bytes=stream["acked_bytes"] - IPERF3_COOKIE,
                      covered_bytes=max(0, stream["covered_bytes"] - IPERF3_COOKIE))
    v = intact_verdict(sent, received, stream, unread_max)
    dropped = [n for n in capture_notes or [] if "dropped by kernel" in n and not n.split(": ", 1)[-1].startswith("0 ")]
    if not v[INTACT] and dropped:
        v[INTACT_WHY] += f" (the captures lost packets: {'; '.join(dropped)})"
    return v


def _data_connection(out: Path) -> dict | None:
    """The run's data connection as `mmpath analyze` found it in the client's captures (the run's
    analysis/summary.json: its largest MPTCP connection and direction, iperf3's data stream, not
    its control connection or the data connection's other direction, the 37-byte cookie). None
    without an analysis."""
    try:
        summary = json.loads((out / "analysis" / "summary.json").read_text())
    except (OSError, ValueError):
        return None
    conns = [f for f in summary.get("flows", []) if f.get("kind") == "mptcp"]
    return max(conns, key=lambda f: f.get("bytes") or 0) if conns else None


def analyzed_reinjections_mb(out: Path) -> float | None:
    """The data-level bytes the emulated run sent again on another subflow, as `mmpath analyze`
    found them in the client's captures (its data connection: `_data_connection`). None without
    an analysis."""
    conn = _data_connection(out)
    if conn is None:
        return None
    return round(float(conn.get("reinjected_bytes") or 0) / 1e6, 3)


@dataclass
class _Measured:
    """An emulated run reduced to its measures at once (its captures are large and go)."""
    measures: dict
    per_path: list


def _rows(mode: Mode) -> list[tuple[str, str]]:
    return list(FAST_ROWS) if mode.fast else [(c, p) for c in CASES for p in POLICIES]


def _points(mode: Mode) -> list[Point]:
    return [Point({"case": c, "policy": p, "engine": e}, scenario(CASES[c], p))
            for c, p in _rows(mode) for e in ENGINES]


def _run(point: Point, seed: int):
    if point.key["engine"] == "simulation":
        sc = dict(point.scenario)
        sc["timeline"] = {"sample_ms": 1}
        return mmpath_run(sc, seed=seed)
    case = CASES[point.key["case"]]
    tmp = Path(tempfile.mkdtemp(prefix="mmpath-xpm-"))
    try:
        emulate(dict(point.scenario), seed=seed, out=tmp / "out")
        m, per_path = emu_measures(tmp / "out", case.event_s, case.back_s, backup_rate_mbps=backup_mbps(case.setup),
                                   reset=case.reset)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _Measured(m, per_path)


def _measure(res, point: Point, mode: Mode):
    case = CASES[point.key["case"]]
    if isinstance(res, _Measured):
        m, per_path = res.measures, res.per_path
    else:
        m, per_path = sim_measures(res, case)
    # A time that never came counts as what was left of the run (a lower bound).
    left = {TAKEOVER: DURATION_S - case.event_s, FIRST_BACKUP: DURATION_S - case.event_s,
            BACK: DURATION_S - case.back_s, FIRST_PRIMARY: DURATION_S - case.back_s}
    out = {k: (float(m[k]) if m.get(k) is not None else left[k]) for k in TIMES}
    out[RECEIVED] = float(m[RECEIVED])
    out["duplicates"] = float(m.get("duplicates", 0))
    out[REINJECTED] = float(m[REINJECTED]) if m.get(REINJECTED) is not None else float("nan")
    for k in STREAM_COUNTS:
        out[k] = float(m[k]) if m.get(k) is not None else float("nan")
    out[INTACT] = bool(m.get(INTACT, False))
    out[INTACT_WHY] = str(m.get(INTACT_WHY) or ("" if INTACT in m else "not checked"))
    t = edges()[:-1]
    series = pd.concat([pd.DataFrame({"t_s": t, "path": name, "mbps": b * 8 / 1e6 / BIN_S})
                        for name, b in zip(PATHS, per_path)], ignore_index=True)
    return out, series


def agrees(key: str, sim: float, emu: float) -> tuple[bool, str]:
    """One measure's verdict and the tolerance it was held to."""
    if key == RECEIVED:
        return kc.share_of_agrees(sim, emu, RECEIVED_TOL)
    return kc.time_agrees(sim, emu)


def stream_intact(mine: pd.DataFrame, engine: str) -> tuple[bool | None, str]:
    """Whether every run of one row in `engine` had its byte stream intact (None: no run there, or
    runs from before the check), and the reasons of those that did not."""
    sel = mine[mine["engine"] == engine]
    if not len(sel) or INTACT not in sel:
        return None, ""
    bad = sel[~sel[INTACT].fillna(False).astype(bool)]
    why = sorted({str(w) for w in bad[INTACT_WHY]}) if INTACT_WHY in bad else []
    return not len(bad), "; ".join(w for w in why if w)


def row_results(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """Per row (case, policy) present in `runs`: each measure's mean per engine and its verdict,
    and whether its byte stream was intact in each engine (`intact`: engine -> (ok, why))."""
    out = []
    for c in CASES:
        for p in POLICIES:
            mine = runs[(runs["case"] == c) & (runs["policy"] == p)]
            if not len(mine):
                continue
            items, n, ok = kc.compare(mine, COMPARED, agrees)
            out.append({"case": CASES[c], "policy": p, "items": items, "runs": n, "ok": ok,
                        "intact": {e: stream_intact(mine, e) for e in ENGINES}})
    return out


def _intact_cell(r: dict[str, Any]) -> str:
    marks = {True: "yes", False: "**NO**", None: "-"}
    return " / ".join(marks[r["intact"][e][0]] for e in ENGINES)


def table(runs: pd.DataFrame) -> str:
    """The benchmark as one Markdown table: per row, each measure simulated / emulated."""
    lines = ["| case | policy | runs | simulated / emulated (tolerance) | reinjected MB (reported) "
             "| stream intact (simulated / emulated) | agrees |",
             "|---|---|---|---|---|---|---|"]
    rows = row_results(runs)
    for r in rows:
        mine = runs[(runs["case"] == r["case"].id) & (runs["policy"] == r["policy"])]
        reinj = " / ".join(fmt(stats(mine[mine["engine"] == e][REINJECTED])["mean"]) if REINJECTED in mine else "-"
                           for e in ENGINES)
        lines.append(f"| {r['case'].id} | {r['policy']} | {r['runs']['simulation']} + {r['runs']['emulation']} "
                     f"| {kc.cells(r['items'], LABELS)} | {reinj} | {_intact_cell(r)} "
                     f"| {'yes' if r['ok'] else '**no**'} |")
    # Why a stream was not intact, under the table (too long for a cell).
    for r in rows:
        for e in ENGINES:
            ok, why = r["intact"][e]
            if ok is False:
                lines.append(f"\n{r['case'].id} / {r['policy']}, {e}: stream not intact: {why or 'no reason recorded'}")
    return "\n".join(lines)


def _plot(runs: pd.DataFrame, series, path: Path) -> None:
    """One panel per row: each path's throughput in both engines (100 ms bins, mean of the runs),
    the primary's down spells shaded."""
    if series is None or not len(series):
        return
    done = row_results(runs)
    if not done:
        return
    plt, fig, axes, used, ncols = kc.panels(len(done))
    for ax, r in zip(used, done):
        s = series[(series["case"] == r["case"].id) & (series["policy"] == r["policy"])]
        for engine in ENGINES:
            for name, style in zip(PATHS, ("-", ":")):
                e = s[(s["engine"] == engine) & (s["path"] == name)]
                if len(e):
                    m = e.groupby("t_s")["mbps"].mean()
                    plotting.step(ax, m.index, m.to_numpy(), BIN_S, label=f"{engine}, {name}",
                                  color=plotting.colour(engine), linestyle=style)
        for a, b in r["case"].shade:
            plotting.shade(ax, a, b, label="primary down", kind="outage")
        kc.finish(ax, f"{r['case'].id} / {r['policy']}", r["ok"])
    plotting.fig_legend(fig, axes, ncol=2 if ncols == 1 else 4)
    plotting.save(plt, fig, path, "x-pm", "each case and path-manager policy: the primary's (solid) and the backup's "
                  "(dotted) throughput, simulated vs emulated on this kernel (100 ms bins; the primary's down "
                  "spells shaded)")


experiment(Experiment(
    id="x-pm", paper=PAPER, title="Path-manager switchover: simulation vs this machine's MPTCP with mmpath-pm",
    figure="(beyond the papers) each case and policy: both paths' throughput, both engines",
    points=_points, measure=_measure, plot=_plot, run=_run, exclusive=True, max_runs=1, table=table,
))


def _kernel(runs: pd.DataFrame, case: str, policy: str, key: str) -> float:
    sel = runs[(runs["case"] == case) & (runs["policy"] == policy) & (runs["engine"] == "emulation")]
    return stats(sel[key])["mean"] if key in sel else float("nan")


def _check(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    res = row_results(runs)
    want = len(_rows(mode))
    c.present("rows run in both engines", sum(min(r["runs"].values()) > 0 for r in res), want)
    ok = [r for r in res if r["ok"]]
    c.at_least("rows agreeing", len(ok) / want if want else 0.0, AGREE_FRAC, bound_text=f"{AGREE_FRAC:.0%}")
    # Issue 28: no byte lost or duplicated at the application, in either engine (intact_verdict).
    broken = [f"{r['case'].id}/{r['policy']} ({e}: {r['intact'][e][1] or 'not checked'})"
              for r in res for e in ENGINES if r["intact"][e][0] is False]
    whole = sum(all(r["intact"][e][0] for e in ENGINES) for r in res)
    c.add(f"rows whose application byte stream is intact in both engines: {whole} of {want}"
          + (f"; not intact: {', '.join(broken)}" if broken else ""), whole >= want > 0)
    back = _kernel(runs, "cut-drop", "fast-failback", BACK)
    take = _kernel(runs, "cut-drop", "fast-failback", TAKEOVER)
    kback = _kernel(runs, "cut-drop", "kernel", BACK)
    c.at_most("kernel: fast-failback's primary back at half rate after the return (s)", back, FAILBACK_S)
    c.at_most("kernel: fast-failback's backup at half rate after the cut (s)", take, FAILBACK_S)
    text = (f"{len(ok)} of {want} rows agree"
            + (f"; disagreeing: {', '.join(r['case'].id + '/' + r['policy'] for r in res if not r['ok'])}"
               if len(ok) < len(res) else "")
            + f"; {whole} of {want} rows with the application's byte stream intact in both engines"
            + f"; on the kernel, the dropping cut's primary back at half rate after {fmt(back)} s with "
              f"fast-failback against {fmt(kback)} s with the in-kernel path manager, the backup at half rate "
              f"after {fmt(take)} s")
    return text, c.items


claim(Claim(
    id="x-pm", experiment="x-pm",
    claim="The path-manager policies switch over alike in simulation and on this machine's MPTCP with "
          "mmpath-pm, and fast-failback brings a returning primary back within 0.5 s",
    paper="(beyond the papers: docs/path-manager.md) the switchover benchmark: each policy designed in the "
          "simulator is run on the real kernel with the same scenario",
    criterion=f"a backup-mode download over two wired paths (100 + 50 Mbit/s, 5 + 10 ms one way), the primary "
              f"cut for 5 s (drop, then hold), flapping (three 1 s cuts), fading then cut, or its connections reset "
              f"(the path staying up), and over 60 GHz + "
              f"5 GHz, the 60 GHz link blocked for 5 s or partly blocked then blocked; the in-kernel path "
              f"manager and fast-failback, link-aware-backup and recreate; each in `mmpath run` and `mmpath emu "
              f"run` (root); a row agrees when the backup's and the returning primary's first byte and half rate "
              f"are within 20 % of the kernel's or 0.3 s, whichever is larger, and the received bytes within "
              f"10 %; at least 90 % of the rows agree, every row's application byte stream is intact in both "
              f"engines (no byte lost or duplicated: the sender's and receiver's counts and, on the kernel, the "
              f"captures' data-level coverage), and on the kernel fast-failback has the primary back and "
              f"the backup taken over at half rate within {FAILBACK_S:g} s of the dropping cut's return and start "
              f"(fast mode: the dropping cut with the in-kernel path manager and fast-failback)",
    check=_check,
))
