"""iperf3 -J reader: TCP and UDP, -R, --bidir, -P, any reporting interval, client or server side.

Layout (iperf3's own JSON, as printed by `iperf3 -J`; checked against iperf 3.12 output made by
tests/analyze/fixtures/make_fixtures.sh and against iperf3's src/iperf_api.c field names):

- ``start.connected[]``: ``socket``, ``local_host``, ``local_port``, ``remote_host``, ``remote_port``;
  ``start.timestamp.timesecs`` (whole Unix seconds); ``start.test_start``: ``protocol``,
  ``num_streams``, ``reverse``, ``bidir`` (3.7+), ``duration``.
- ``intervals[].streams[]``: ``socket``, ``start``, ``end``, ``seconds``, ``bytes``,
  ``bits_per_second``, ``sender`` (3.7+: whether this end sends on the stream), TCP sender extras
  ``retransmits``, ``snd_cwnd`` and ``snd_wnd`` (bytes), ``rtt``/``rttvar`` (microseconds), ``pmtu``;
  UDP: ``packets``, ``lost_packets`` ...
- ``end.streams[]``: TCP ``{sender: {...}, receiver: {...}}`` with ``bytes``, ``seconds``,
  ``bits_per_second``, sender ``retransmits``, ``max_snd_cwnd``, ``min/mean/max_rtt`` (µs); UDP
  ``{udp: {...}}``; ``end.sum_sent`` / ``end.sum_received`` (+ ``_bidir_reverse`` with --bidir).

Interval bytes are what *this* end wrote (sender) or read (receiver) in that interval, so a
client's sender intervals include data still queued in the socket buffer; the receiver's numbers
are the throughput (what iperf3 prints as the "receiver" line).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from .errors import AnalyzeInputError, read_text
from .model import Source

ALLOWED = "the JSON report of `iperf3 -J` (an object with start, intervals and end)"


def looks_like(obj) -> bool:
    return isinstance(obj, dict) and "start" in obj and "intervals" in obj and "end" in obj


def _load(path: Path):
    text = read_text(path, ALLOWED, ", so not an iperf3 -J report")
    if not text.strip():
        raise AnalyzeInputError(path, "empty file", ALLOWED)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        hint = " (the file ends early: was iperf3 interrupted?)" if e.pos >= len(text.rstrip()) - 1 else ""
        raise AnalyzeInputError(path, f"invalid JSON at column {e.colno}: {e.msg}{hint}",
                                ALLOWED, line=e.lineno) from None
    return obj


def _num(path, where, v, default=None):
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise AnalyzeInputError(path, f"{where}: {v!r} is not a number", ALLOWED)
    return float(v)


def _dur(r: dict) -> float:
    try:
        d = float(r["end"]) - float(r.get("start", 0.0))
        if d > 0:
            return d
    except (KeyError, TypeError, ValueError):
        pass
    return float(r.get("seconds", 0) or 0)


def _own_count(f: dict, sock, ivsum: dict, end: dict) -> None:
    """A stream whose results at this end hold no receiver count gets this end's own count.

    iperf 3.12 writes 0 receiver bytes where this end never learns them: a server's report of the
    streams it sends (-R, the reverse streams of --bidir) and a UDP server's per-stream results
    with -P > 1 (only end.sum_received has the bytes). Such a stream was left out as a flow under
    10 kB, losing the server's sender RTT, cwnd and retransmits (found by the analyzer tour). It
    now counts what this end wrote (`bytes_basis` `sent`: the sender's totals) or read
    (`received`: the sum of its intervals)."""
    if f["bytes"] > 0:
        return
    if f["sender"] and f.get("bytes_sent"):
        f.update(bytes=f["bytes_sent"], mbps=f["sent_mbps"], bytes_basis="sent")
        sent = next((x.get("sender") for x in end.get("streams", []) or []
                     if isinstance(x, dict) and (x.get("sender") or {}).get("socket") == sock), None)
        if isinstance(sent, dict) and _dur(sent) > 0:
            f["duration_s"] = _dur(sent)
        return
    acc = ivsum.get(sock)
    if acc and acc[0] > 0 and acc[2] > acc[1]:
        f.update(bytes=int(acc[0]), duration_s=acc[2] - acc[1], start=acc[1],
                 mbps=acc[0] * 8 / (acc[2] - acc[1]) / 1e6, bytes_basis="sent" if f["sender"] else "received")


def read(path, obj=None) -> Source:
    path = Path(path)
    if obj is None:
        obj = _load(path)
    if not isinstance(obj, dict):
        raise AnalyzeInputError(path, f"JSON but not an iperf3 report: the top level is a {type(obj).__name__}",
                                ALLOWED)
    if "error" in obj and not obj.get("intervals"):
        raise AnalyzeInputError(path, f"iperf3 reported an error and no results: {obj['error']}",
                                "a report of a test that ran")
    if not looks_like(obj):
        missing = [k for k in ("start", "intervals", "end") if k not in obj]
        raise AnalyzeInputError(path, f"JSON but not an iperf3 report: no {', '.join(missing)} key",
                                ALLOWED)
    start, intervals, end = obj["start"], obj["intervals"], obj["end"]
    if not isinstance(start, dict) or not isinstance(intervals, list) or not isinstance(end, dict):
        raise AnalyzeInputError(path, "JSON but not an iperf3 report: start/end must be objects and "
                                      "intervals a list", ALLOWED)
    ts = start.get("test_start", {}) or {}
    proto = str(ts.get("protocol", "TCP")).upper()
    kind = "udp" if proto == "UDP" else "tcp"
    reverse = bool(ts.get("reverse", 0))
    # iperf 3.12 does not write test_start.bidir; the *_bidir_reverse sums show --bidir too.
    bidir = bool(ts.get("bidir", 0)) or "sum_sent_bidir_reverse" in end or any(
        isinstance(iv, dict) and "sum_bidir_reverse" in iv for iv in intervals[:1])
    # Which end wrote this file: a client has `connecting_to`; a server has `accepted_connection`.
    side = "client" if "connecting_to" in start else ("server" if "accepted_connection" in start else "client")
    conns = {}
    for c in start.get("connected", []) or []:
        if isinstance(c, dict) and "socket" in c:
            conns[c["socket"]] = c

    # sender role per socket: the interval's `sender` flag (3.7+), else from -R / side
    role: dict[int, bool] = {}
    for iv in intervals:
        for s in (iv or {}).get("streams", []) or []:
            if isinstance(s, dict) and "sender" in s and s.get("socket") not in role:
                role[s["socket"]] = bool(s["sender"])
    for sock in conns:
        if sock not in role:
            role[sock] = (side == "client") != reverse

    def flow_name(sock: int) -> str:
        c = conns.get(sock)
        if not c:
            return f"iperf3 socket {sock}"
        a = f"{c.get('local_host')}:{c.get('local_port')}"
        b = f"{c.get('remote_host')}:{c.get('remote_port')}"
        n = f"{a}>{b}" if role.get(sock, True) else f"{b}>{a}"
        return ("udp " + n) if kind == "udp" else n

    bins = []
    samples = []
    ivsum: dict = {}  # socket -> [bytes, first start, last end] of its reported intervals
    for i, iv in enumerate(intervals):
        if not isinstance(iv, dict):
            raise AnalyzeInputError(path, f"intervals[{i}] is not an object", ALLOWED)
        for s in iv.get("streams", []) or []:
            sock = s.get("socket")
            t0 = _num(path, f"intervals[{i}].streams.start", s.get("start"), 0.0)
            dt = _num(path, f"intervals[{i}].streams.seconds", s.get("seconds"), 0.0)
            b = _num(path, f"intervals[{i}].streams.bytes", s.get("bytes"), 0.0)
            if s.get("omitted"):
                continue
            bins.append((t0, dt, flow_name(sock), -1, "", b))
            acc = ivsum.setdefault(sock, [0.0, t0, t0 + dt])
            acc[0] += b
            acc[1], acc[2] = min(acc[1], t0), max(acc[2], t0 + dt)
            if kind == "tcp" and role.get(sock, True):
                rtt = _num(path, f"intervals[{i}].streams.rtt", s.get("rtt"))
                rttvar = _num(path, f"intervals[{i}].streams.rttvar", s.get("rttvar"))
                samples.append({
                    "t": _num(path, f"intervals[{i}].streams.end", s.get("end"), t0 + dt),
                    "flow": flow_name(sock), "subflow": -1, "path": "",
                    "cwnd_bytes": _num(path, "snd_cwnd", s.get("snd_cwnd"), np.nan),
                    "rwnd_bytes": _num(path, "snd_wnd", s.get("snd_wnd"), np.nan),
                    "srtt_ms": rtt / 1e3 if rtt is not None else np.nan,
                    "rttvar_ms": rttvar / 1e3 if rttvar is not None else np.nan,
                    "retransmits": _num(path, "retransmits", s.get("retransmits"), np.nan),
                })

    flows = []
    socks = []  # each flow's socket
    for j, s in enumerate(end.get("streams", []) or []):
        if not isinstance(s, dict):
            continue
        if "udp" in s:
            u = s["udp"]
            sock = u.get("socket")
            f = {"name": flow_name(sock), "kind": "udp", "side": side, "sender": role.get(sock, True),
                 "bytes": int(u.get("bytes", 0) or 0), "duration_s": float(u.get("seconds", 0) or 0),
                 "mbps": float(u.get("bits_per_second", 0) or 0) / 1e6,
                 "packets": u.get("packets"), "lost_packets": u.get("lost_packets"),
                 "loss_pct": u.get("lost_percent"), "jitter_ms": u.get("jitter_ms"),
                 "out_of_order": u.get("out_of_order")}
            flows.append(f)
            socks.append(sock)
            continue
        snd, rcv = s.get("sender") or {}, s.get("receiver") or {}
        sock = snd.get("socket", rcv.get("socket"))
        f = {"name": flow_name(sock), "kind": "tcp", "side": side, "sender": role.get(sock, True),
             # A client's copy of the receiver's results has `seconds` = its own (sender) duration
             # while `bits_per_second` uses the receiver's `end` (iperf 3.12): use end - start.
             "bytes": int(rcv.get("bytes", 0) or 0), "duration_s": _dur(rcv),
             "start": float(rcv.get("start", 0.0) or 0.0) if isinstance(rcv.get("start"), (int, float)) else 0.0,
             "mbps": float(rcv.get("bits_per_second", 0) or 0) / 1e6,
             "bytes_sent": int(snd.get("bytes", 0) or 0), "sent_mbps": float(snd.get("bits_per_second", 0) or 0) / 1e6,
             "retransmits": snd.get("retransmits"), "max_snd_cwnd": snd.get("max_snd_cwnd")}
        # On the receiving end of a stream (-R client, the reverse streams of --bidir, a server)
        # iperf3 takes `retransmits` from the sender's results but fills max_snd_cwnd and
        # min/mean/max_rtt from its own socket: 0 with -R, the receiving socket's handshake RTT
        # (µs) and initial cwnd with --bidir (iperf 3.12 src/iperf_api.c, iperf_print_results).
        # They are not the data sender's, so they are left out (found by the analyzer tour).
        if not role.get(sock, True):
            f["max_snd_cwnd"] = None
        elif snd.get("mean_rtt") is not None:
            f["rtt_ms"] = {"min": snd.get("min_rtt", 0) / 1e3, "mean": snd.get("mean_rtt", 0) / 1e3,
                           "max": snd.get("max_rtt", 0) / 1e3}
        flows.append(f)
        socks.append(sock)
    # UDP receiver totals are in sum_received (3.12 puts the sender's view in streams[].udp)
    sr = end.get("sum_received")
    if kind == "udp":
        for f in flows:
            if f["sender"] and f["bytes"] > 0:
                f["bytes_sent"], f["sent_mbps"] = f["bytes"], f["mbps"]
    if kind == "udp" and isinstance(sr, dict) and len(flows) == 1 and sr.get("bits_per_second") is not None:
        flows[0]["mbps"] = float(sr["bits_per_second"]) / 1e6
        flows[0]["bytes"] = int(sr.get("bytes", flows[0]["bytes"]) or 0)
        flows[0]["duration_s"] = float(sr.get("seconds", flows[0]["duration_s"]) or 0)
    if kind == "udp" and len(flows) > 1:
        # With -P > 1 the sending end's per-stream results are its own (what it sent) plus the
        # receiver's loss count, and only the sum is the receiver's. iperf3's datagrams all have
        # the test's block size, so a stream's receiver got bytes x (packets - lost) / packets
        # (on the tour's -P 2 run exactly what the server's intervals add up to); the streams
        # were shown at the sending rate (found by the analyzer tour).
        rsec = float(sr.get("seconds") or 0) if isinstance(sr, dict) else 0.0
        for f in flows:
            n, lost = f.get("packets"), f.get("lost_packets")
            if (f["sender"] and f["bytes"] > 0 and isinstance(n, int) and isinstance(lost, int)
                    and 0 <= lost <= n and n > 0):
                dur = rsec or f["duration_s"]
                f["bytes"] = round(f["bytes"] * (n - lost) / n)
                f["duration_s"] = dur
                f["mbps"] = f["bytes"] * 8 / dur / 1e6 if dur > 0 else 0.0
    for f, sock in zip(flows, socks):
        _own_count(f, sock, ivsum, end)
    if not intervals and not flows:
        raise AnalyzeInputError(path, "iperf3 report without intervals or results", ALLOWED)

    src = Source(path=str(path), kind="iperf3", clock="relative")
    tsec = (start.get("timestamp") or {}).get("timesecs")
    src.t0_unix = float(tsec) if isinstance(tsec, (int, float)) else None
    src.flows = flows
    if bins:
        src.bins = pd.DataFrame(bins, columns=["t", "dt", "flow", "subflow", "path", "bytes"])
    if samples:
        src.samples = pd.DataFrame(samples)
    src.meta = {"side": side, "protocol": proto, "reverse": reverse, "bidir": bidir,
                "num_streams": ts.get("num_streams", len(conns)), "version": start.get("version"),
                "sum_received_mbps": (end.get("sum_received") or {}).get("bits_per_second", 0) / 1e6
                if isinstance(end.get("sum_received"), dict) else None,
                "sum_received_bytes": (end.get("sum_received") or {}).get("bytes")
                if isinstance(end.get("sum_received"), dict) else None,
                "sum_received_seconds": (end.get("sum_received") or {}).get("seconds")
                if isinstance(end.get("sum_received"), dict) else None}
    if obj.get("error"):
        # A test cut short (e.g. "the server has terminated") still has intervals; say so rather
        # than show a quietly empty result (its receiver totals are then 0; found by the tour).
        src.meta["error"] = " ".join(str(obj["error"]).split())[:200]
    return src


# --------------------------------------------------------------------------- the emulator's figures
# `mmpath emu run` reads its own iperf3 -J reports with these (emu/__init__.py): the totals iperf3
# printed, not the analyzer's per-stream flows.


def report_or_empty(path: Path) -> dict[str, Any]:
    """The report as a dict; {} when the file is missing or not JSON (iperf3 failed before writing
    it, and its exit status and stderr say why)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def interval_sums(doc: dict[str, Any], offset_s: float) -> pd.DataFrame:
    """The report's `sum` of each interval (t_s on a clock where the test starts at offset_s, bytes,
    mbps): the emulator's per-flow intervals."""
    rows = []
    for iv in doc.get("intervals", []):
        s = iv.get("sum", {})
        rows.append({"t_s": offset_s + float(s.get("start", 0.0)), "bytes": int(s.get("bytes", 0)),
                     "mbps": float(s.get("bits_per_second", 0.0)) / 1e6})
    return pd.DataFrame(rows, columns=["t_s", "bytes", "mbps"])


def end_sum(doc: dict[str, Any], udp: bool) -> dict[str, Any]:
    """iperf3's totals for what arrived: `sum_received` (TCP, and UDP from iperf3 3.x on, whose
    `sum` counts the bytes sent: 3.12's `sum` said 1341 Mbit/s where 1174 arrived); an older
    iperf3's UDP `sum` with its bytes reduced by the lost share."""
    end = doc.get("end", {})
    got = end.get("sum_received")
    if got or not udp:
        return got or {}
    s = dict(end.get("sum") or {})
    lost = float(s.get("lost_percent") or 0.0) / 100.0
    for k in ("bytes", "bits_per_second"):
        if k in s:
            s[k] = s[k] * (1.0 - lost)
    return s


def sent_mbps(doc: dict[str, Any]) -> float:
    """What iperf3 sent (UDP): below the offered rate when this machine's CPU, not the emulated
    link, was the limit (the CLI says so)."""
    end = doc.get("end", {})
    s = end.get("sum_sent") or end.get("sum") or {}
    return float(s.get("bits_per_second", 0.0)) / 1e6


def goodput_mbps(doc: dict[str, Any], udp: bool) -> float:
    return float(end_sum(doc, udp).get("bits_per_second", 0.0)) / 1e6


def received_bytes(doc: dict[str, Any], udp: bool) -> int:
    return int(end_sum(doc, udp).get("bytes", 0))
