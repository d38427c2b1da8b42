"""Put every source on one clock (docs/trace-schema.md, "Alignment").

Rules, in order, giving each source an offset such that ``aligned = source time + offset``:

1. Wall-clock sources (pcap, ss, iw, `mmpath capture` logs, wil6210 with Unix times): offset 0.
   Files captured on the same host share its clock; captures from different hosts need NTP/PTP or
   a user offset (rule 4).
2. iperf3 reports (time relative to the test start): anchored on the first data packet of the same
   stream in a capture (matched by address:port pair, for MPTCP by the initial subflow), else on
   the first ss sample where that socket's byte counter moves, else on ``start.timestamp.timesecs``
   (whole seconds: up to 1 s off; said so in the alignment table).
3. Relative sources with no anchor (an mmpath run, a wil6210 trace without Unix times): t = 0 is
   the common origin.
4. ``--offset PATH=SECONDS`` is added last, to any source.

The common origin (t_s = 0) is the earliest aligned time of any source's data.
"""

from __future__ import annotations

from ..lazy import numpy as np  # on first use (start-up time): lazy.py
from .errors import AnalyzeInputError
from .model import Source


def _pcap_starts(sources: list[Source]) -> dict[str, float]:
    """Flow name -> first data time in a capture; MPTCP subflow names map to their connection start."""
    out: dict[str, float] = {}
    for s in sources:
        if s.kind != "pcap":
            continue
        conn_start = {f["name"]: f["start"] for f in s.flows if f.get("kind") == "mptcp"}
        for f in s.flows:
            st = f.get("start")
            if st is None:
                continue
            if f.get("kind") == "mptcp-subflow" and f.get("subflow") == 0:
                st = conn_start.get(f.get("connection"), st)
            out.setdefault(f["name"], st)
            out[f["name"]] = min(out[f["name"]], st)
    return out


def _ss_starts(sources: list[Source]) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in sources:
        if s.kind != "ss" or s.bins.empty:
            continue
        moving = s.bins[s.bins["bytes"] > 0]
        for f in s.flows:
            rows = moving[moving["flow"] == f.get("connection", f["name"])]
            if len(rows):
                out.setdefault(f["name"], float(rows["t"].min()))
    return out


def align(sources: list[Source], user_offsets: dict[str, float] | None = None) -> tuple[dict, float]:
    """Returns ({source path: {offset_s, anchor}}, origin) and leaves the sources unchanged."""
    user_offsets = dict(user_offsets or {})
    pst = _pcap_starts(sources)
    sst = _ss_starts(sources)
    table: dict[str, dict] = {}
    for s in sources:
        if s.clock == "unix":
            off, anchor = 0.0, "wall clock"
        elif s.kind == "iperf3":
            names = [f["name"] for f in s.flows if f.get("sender", True) or True]
            hits = [pst[n] for n in names if n in pst]
            if hits:
                off, anchor = min(hits), "first data packet of the same stream in a capture"
            elif any(n in sst for n in names):
                off, anchor = min(sst[n] for n in names if n in sst), "first ss sample where the socket's bytes move"
            elif s.t0_unix is not None and any(x.clock == "unix" for x in sources):
                off, anchor = float(s.t0_unix), "iperf3 start.timestamp.timesecs (whole seconds: up to 1 s off)"
            else:
                off, anchor = 0.0, "relative (t = 0 at the test start)"
        else:
            off, anchor = 0.0, "relative (t = 0 at the source's start)"
        u = 0.0
        for key in (s.path, s.path.split("/")[-1]):
            if key in user_offsets:
                u = user_offsets.pop(key)
                break
        table[s.path] = {"kind": s.kind, "clock": s.clock, "offset_s": off + u, "anchor": anchor,
                         "user_offset_s": u}
    if user_offsets:
        k = next(iter(user_offsets))
        raise AnalyzeInputError(k, "--offset names no input", "one of: " + ", ".join(s.path for s in sources))
    def first(s: Source) -> float | None:
        off = table[s.path]["offset_s"]
        ts = [float(np.nanmin(df["t"].to_numpy(float))) + off for df in (s.bins, s.samples)
              if df is not None and len(df) and "t" in df]
        return min(ts) if ts else None

    # Rule 3: a relative source with no anchor and no --offset has its t = 0 at the common origin.
    # The origin comes from the placed sources; before, such a source sat at Unix time 0, so an
    # mmpath run analyzed beside captures gave a 57-year timeline (found by the analyzer tour).
    free = {s.path for s in sources if table[s.path]["anchor"].startswith("relative")
            and not table[s.path]["user_offset_s"]}
    placed = [x for x in (first(s) for s in sources if s.path not in free) if x is not None]
    if placed and free:
        origin = min(placed)
        for p in free:
            table[p]["offset_s"] = origin
        origin = min([origin] + [x for x in (first(s) for s in sources if s.path in free) if x is not None])
    else:
        starts = [x for x in (first(s) for s in sources) if x is not None]
        origin = min(starts) if starts else 0.0
    # A relative-only analysis keeps t = 0 at the sources' own zero.
    if all(s.clock == "relative" for s in sources):
        origin = min(0.0, origin)
    return table, origin
