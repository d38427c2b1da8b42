"""Windows in which a path holds its packets instead of sending them, for the emulator's delay
line to hold packets through: a scanning radio's dwells off channel, a wired path's
`up = false` schedule steps, and a wired path's trace or schedule taking the link down or
stalling it (rate 0).

Wired paths (docs/scenario.md, `schedule`): "up = false takes both directions down: the frame on
the air is lost, queued frames stay queued ... nothing is transmitted until up = true". A step
with `drop = true` is the other kind of outage: the queue is discarded and everything sent is
lost until up = true; it is not held, the emulator takes the path's link down for real instead
(drops.py; `outages_ns` tells the two apart). The
emulator held nothing there before: the shaper turned a down step into an outage that dropped
the queue, so a TCP flow lost its whole window and waited out its RTO backoff (a 1 s step on a
200 Mbit/s path: back 0.9 s after the link, against the simulator's at once).

The simulator's definition (docs/scenario.md, `scan`; crates/mmpath-sim/src/link/channel.rs
`ScanPattern` and the `EventKind::Scan` actions, sim/scan.rs): from `t_s`, every `every_s` while
`t_s + duration_s` has not passed, a scan of `scan_ms` in all begins: the radio is off channel for
`dwell_ms`, back for `rest_ms`, off again, ... until `scan_ms` has passed (the last dwell cut
there); `rest_ms = 0` is one continuous absence of `scan_ms`. Defaults: `dwell_ms` 40, `rest_ms`
100 (channel.rs SCAN_DWELL_MS / SCAN_REST_MS). The arithmetic is the simulator's: times rounded
to whole ns as `Time::from_secs_f64` does, a dwell at least 1 us, scan starts `every` apart in
ns, and one scan at a time (a scan requested while another runs is dropped, sim/scan.rs), so
the windows never overlap.

A wired path's trace (docs/scenario.md, `path.N.trace`) acts as its schedule does: a link down
keeps the queue, and a rate of 0 stalls the path, "nothing is sent, nothing is lost". Its
windows are read from the simulator's own record of the path (`channel-<path>.csv`), which has
the trace as replayed (looping, `start_s`) and the schedule together; the capacity probe replays
the trace without them (`traced_wired_probes`), so the shaper never drops through them.
A schedule step `rate_mbps = 0` is the same stall ("nothing is sent, nothing is lost until a
later step gives it a rate"; the simulator keeps the queue, which fills to `queue_bytes` and
drops its tail): its windows are read from the same record, and the probe's schedule leaves the
step out, so the rate before it goes on (`without_held`). Before, the probe's rate 0 was an
outage to the shaper, which dropped everything sent through it (a 1 s stall at 200 Mbit/s:
125 against the simulator's 161 Mbit/s, the flow back 0.9 s after the link).

While off channel both ends' frames wait in their queues; nothing is dropped. The emulator
therefore holds each scanned path's packets, both ways, in the delay line during these windows
(delay.py), and shapes the path at the capacity it has without the scan (`without_scans`): the
shaper, which can only pass at a rate or drop, does not see the scan at all.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from .. import _core
from ..api import simulate
from ..lazy import numpy as np  # on first use (start-up time): lazy.py
from ..scenario import load_scenario

# channel.rs SCAN_DWELL_MS / SCAN_REST_MS: qcacld-3.0's gActiveMaxChannelTime / gRestTimeConc.
DWELL_MS_DEFAULT = 40.0
REST_MS_DEFAULT = 100.0
_US = 1_000
# An end time past any run, for a question about the whole schedule.
_FOREVER_S = 1e9


def _ns(s: float) -> int:
    """time.rs Time::from_secs_f64: whole ns, rounded; 0 for a non-positive time."""
    return 0 if not s > 0 else int(round(s * 1e9))


def _scans(path: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """A path's scans as the radio runs them, `(start, total, dwell, rest)` in ns, sorted: one
    per `every_s` of each scan event, a request during a scan dropped (sim/scan.rs
    scan_request: one scan at a time)."""
    requests: list[tuple[int, int, int, int]] = []  # (at, total, dwell, rest)
    for ev in path.get("event") or []:
        if ev.get("kind") != "scan":
            continue
        start, end = _ns(float(ev["t_s"])), _ns(float(ev["t_s"]) + float(ev["duration_s"]))
        every = max(_ns(float(ev.get("every_s") or 1.0)), _US)
        total = _ns(float(ev.get("scan_ms") or 0.0) / 1e3)
        dwell_ms = ev.get("dwell_ms")
        rest_ms = ev.get("rest_ms")
        dwell = max(_ns(float(DWELL_MS_DEFAULT if dwell_ms is None else dwell_ms) / 1e3), _US)
        rest = _ns(float(REST_MS_DEFAULT if rest_ms is None else rest_ms) / 1e3)
        if rest == 0:
            dwell = max(total, _US)  # ScanPattern::new: one continuous absence
        t = start
        while t < end:
            requests.append((t, total, dwell, rest))
            t += every
    out = []
    busy_until = 0
    for t, total, dwell, rest in sorted(requests, key=lambda r: r[0]):
        if t < busy_until:
            continue
        busy_until = t + total
        out.append((t, total, dwell, rest))
    return out


def scans_s(path: dict[str, Any], until_s: float | None = None) -> list[tuple[float, float]]:
    """A path's scans `[start, end)` in seconds, each as a whole (its first dwell's start to its
    last dwell's end: what the simulator's path manager and schedulers hear, LinkEvent::ScanStart
    and ScanEnd); `until_s`: those that begin before it, cut there."""
    out = [(t / 1e9, (t + total) / 1e9) for t, total, _d, _r in _scans(path)]
    if until_s is not None:
        out = [(a, min(b, until_s)) for a, b in out if a < until_s]
    return out


def dwells_ns(path: dict[str, Any], until_s: float | None = None) -> list[tuple[int, int]]:
    """A path's off-channel windows `[start, end)` in ns from the run's start, sorted (a path of
    the normalized scenario; none without scan events). `until_s`: only the windows that begin
    before it (the run's end), cut there."""
    out: list[tuple[int, int]] = []
    for t, total, dwell, rest in _scans(path):
        cycle = dwell + rest
        k = 0
        while k * cycle < total:
            out.append((t + k * cycle, t + min(k * cycle + dwell, total)))
            k += 1
    if until_s is not None:
        stop = _ns(until_s)
        out = [(a, min(b, stop)) for a, b in out if a < stop]
    return out


def dwells_s(path: dict[str, Any], until_s: float | None = None) -> list[tuple[float, float]]:
    """`dwells_ns` in seconds."""
    return [(a / 1e9, b / 1e9) for a, b in dwells_ns(path, until_s)]


def has_scans(config: dict[str, Any]) -> bool:
    return any(ev.get("kind") == "scan" for p in config.get("path", []) for ev in p.get("event") or [])


def without_scans(config: dict[str, Any]) -> dict[str, Any]:
    """The normalized scenario with every path's scan events removed: what the capacity probe
    simulates, so that a scanned path is shaped at the rate it has when not scanning and its
    dwells are held by the delay line instead of being averaged into the rate or dropped."""
    doc = copy.deepcopy(config)
    for p in doc.get("path", []):
        if p.get("event"):
            p["event"] = [ev for ev in p["event"] if ev.get("kind") != "scan"]
    return doc


def outages_ns(path: dict[str, Any], until_s: float) -> list[tuple[int, int, str]]:
    """A wired path's `[start, end, kind)` windows with its link down, from its schedule steps
    `up = false` .. `up = true`, in ns from the run's start, cut at `until_s`; `kind` is `hold`
    (queued frames stay queued: the delay line holds the path's packets) or `drop` (a step with
    `drop = true`: the queue is discarded and everything sent is lost until the link is back, as
    `ip link set down` does; drops.py takes the link down). Each `up = false` step sets the kind
    from its time on, as the simulator's does (sim/path.rs set_path_outage): a `drop` step while
    the link is held down ends the hold there (the queue is purged) and drops from then on, and
    a later step without `drop` holds again. Only `up = true` ends an outage. None for a radio
    path (a radio link that goes down drops its queue: the shaper's outage is right there)."""
    if (path.get("technology") or "wired") != "wired":
        return []
    out: list[tuple[int, int, str]] = []
    start: int | None = None
    kind = "hold"
    for step in sorted(path.get("schedule") or [], key=lambda st: float(st["t_s"])):
        if "up" not in step or step["up"] is None:
            continue
        t = _ns(float(step["t_s"]))
        if not step["up"]:
            new = "drop" if step.get("drop") else "hold"
            if start is None:
                start, kind = t, new
            elif new != kind:
                if t > start:
                    out.append((start, t, kind))
                start, kind = t, new
        elif start is not None:
            if t > start:
                out.append((start, t, kind))
            start = None
    stop = _ns(until_s)
    if start is not None and start < stop:
        out.append((start, stop, kind))
    return [(a, min(b, stop), k) for a, b, k in out if a < stop]


def wired_down_ns(path: dict[str, Any], until_s: float) -> list[tuple[int, int]]:
    """A wired path's `[start, end)` windows held with its link down (schedule steps `up = false`
    without `drop` .. `up = true`: `outages_ns` of kind `hold`), in ns from the run's start, cut
    at `until_s`. A `drop` outage is not held (drops.py)."""
    return [(a, b) for a, b, k in outages_ns(path, until_s) if k == "hold"]


def drops_ns(config: dict[str, Any], until_s: float) -> dict[int, list[tuple[int, int]]]:
    """Per path index, the `[start, end)` windows in ns of its `drop` outages, cut at `until_s`:
    schedule steps `up = false, drop = true` .. the next `up = true` or `up = false` without it,
    and a wired trace's link downs when its `outage` is `drop` (`trace_drops_ns`); paths without
    any left out."""
    out = {}
    for i, p in enumerate(config.get("path", [])):
        w = [(a, b) for a, b, k in outages_ns(p, until_s) if k == "drop"]
        if _trace_drops(p):
            w = _union(w, trace_drops_ns(config, i, until_s))
        if w:
            out[i] = w
    return out


def _trace_drops(path: dict[str, Any]) -> bool:
    """A wired path whose trace's down periods drop (docs/traces.md, `outage = "drop"`)."""
    return is_wired(path) and (path.get("trace") or {}).get("outage") == "drop"


def trace_drops_ns(config: dict[str, Any], i: int, until_s: float) -> list[tuple[int, int]]:
    """Path `i`'s trace's link-down windows (its rate-0 stalls are not: they hold), as the
    simulator replays the trace (looping, `start_s`) without the schedule, in ns, cut at
    `until_s`."""
    rec = _record(config, i, until_s, schedule=False)
    return _windows(rec, until_s, lambda rate, up: up == 0)


def _union(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Two lists of windows as one, sorted, overlapping or touching ones merged."""
    out: list[list[int]] = []
    for x, y in sorted(a + b):
        if out and x <= out[-1][1]:
            out[-1][1] = max(out[-1][1], y)
        else:
            out.append([x, y])
    return [(x, y) for x, y in out]


def holds_ns(config: dict[str, Any], until_s: float) -> dict[int, list[tuple[int, int]]]:
    """Per path index, the windows the delay line holds its packets through: a radio path's scan
    dwells, a wired path's down steps."""
    out = {}
    for i, p in enumerate(config.get("path", [])):
        w = dwells_ns(p, until_s) or wired_down_ns(p, until_s)
        if w:
            out[i] = w
    return out


def is_wired(path: dict[str, Any]) -> bool:
    """A wired path (no `technology`, or \"wired\"), not a radio."""
    return (path.get("technology") or "wired") == "wired"


def flow_paths(flow: dict[str, Any], first_path: str) -> list[str]:
    """The names of the paths a normalized scenario's flow crosses: an MPTCP flow's `paths`,
    else its `path`, else the scenario's first path (`first_path`)."""
    return [str(p) for p in (flow.get("paths") or [flow.get("path") or first_path])]


def _is_stall(step: dict[str, Any]) -> bool:
    """A schedule step setting the rate to 0 (docs/scenario.md: it stalls the path)."""
    return step.get("rate_mbps") is not None and not float(step["rate_mbps"]) > 0


def _recorded(path: dict[str, Any]) -> bool:
    """A wired path whose held windows come from the simulator's record of it: one with a trace
    or a schedule step to rate 0 (a stall, which `wired_down_ns` does not follow)."""
    return is_wired(path) and bool(path.get("trace") or any(_is_stall(st) for st in path.get("schedule") or []))


def hold_cause(path: dict[str, Any]) -> str:
    """Why a path with hold windows holds (`emu.json` `holds` cause): `scan` (dwells off
    channel), `trace` (a wired path's trace, with its schedule), or the wired schedule's own
    `link down` (up = false), `stall` (rate 0), or `link down and stall`."""
    if not is_wired(path):
        return "scan"
    if path.get("trace"):
        return "trace"
    steps = path.get("schedule") or []
    held_down = any(k == "hold" for _, _, k in outages_ns(path, _FOREVER_S))
    causes = [c for c, hit in (("link down", held_down),
                               ("stall", any(_is_stall(st) for st in steps))) if hit]
    return " and ".join(causes) or "link down"


def _record(config: dict[str, Any], i: int, duration_s: float, schedule: bool) -> dict[str, Any]:
    """Path `i`'s channel as the simulator replays it (its record, parsed: per step the state
    it leaves), the path alone with a trickle of traffic (a wired path's channel does not depend
    on its traffic); `schedule=False` without the path's schedule."""

    doc = copy.deepcopy(config)
    p = doc["path"][i]
    # A `drop` outage is a link down to the record too (its windows are taken out of the held
    # ones by the caller: drops.py takes the link down instead).
    p["schedule"] = [] if not schedule else [{k: v for k, v in st.items() if k != "drop"}
                                             for st in p.get("schedule") or []]
    doc["path"] = [p]
    doc["flow"] = [{"name": "trickle", "kind": "udp", "path": p["name"], "rate_mbps": 0.01}]
    doc["duration_s"] = duration_s
    doc.pop("timeline", None)
    res = simulate(load_scenario(doc))
    return _core.parse_csv_trace(res.channel[str(p["name"])], f"channel-{p['name']}.csv")


def wired_stall_windows_ns(config: dict[str, Any], until_s: float) -> dict[int, list[tuple[int, int]]]:
    """Per wired path with a trace or a schedule step to rate 0, its `[start, end)` windows in ns
    with the link down or its rate 0 (trace and schedule together), cut at `until_s`; paths with
    none are left out."""
    out = {}
    for i, p in enumerate(config.get("path", [])):
        if not _recorded(p):
            continue
        rec = _record(config, i, until_s, schedule=True)
        # NaN (never set) is neither down nor a rate of 0.
        windows = _windows(rec, until_s, lambda rate, up: up == 0 or rate == 0)
        dropped = [(a, b) for a, b, k in outages_ns(p, until_s) if k == "drop"]
        if _trace_drops(p):
            dropped = _union(dropped, trace_drops_ns(config, i, until_s))
        windows = _minus(windows, dropped)
        if windows:
            out[i] = windows
    return out


def _windows(rec: dict[str, Any], until_s: float, blocked) -> list[tuple[int, int]]:
    """The `[start, end)` windows in ns, cut at `until_s`, where a parsed channel record's steps
    are `blocked(rate, link_up)`."""
    stop = _ns(until_s)
    windows: list[tuple[int, int]] = []
    start: int | None = None
    for t, rate, up in zip(rec["t_s"], rec["rate_mbps"], rec["link_up"]):
        at = min(_ns(float(t)), stop)
        if blocked(rate, up) and start is None:
            start = at
        elif not blocked(rate, up) and start is not None:
            if at > start:
                windows.append((start, at))
            start = None
    if start is not None and start < stop:
        windows.append((start, stop))
    return windows


def _minus(windows: list[tuple[int, int]], cut: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`windows` (sorted, disjoint) without the time in `cut` (sorted, disjoint)."""
    out = []
    for a, b in windows:
        for c, d in cut:
            if d <= a or c >= b:
                continue
            if c > a:
                out.append((a, c))
            a = max(a, d)
            if a >= b:
                break
        if a < b:
            out.append((a, b))
    return out


def traced_wired_probes(config: dict[str, Any], until_s: float, folder: str) -> dict[int, str]:
    """Per wired path with a trace, a CSV trace for the capacity probe, written into `folder`:
    the trace's rates as the simulator replays them until `until_s` (without the schedule, which
    the probe keeps), with no link status and each rate 0 replaced by the rate before it (or
    after it, at the start): held windows, not outages (`wired_stall_windows_ns`)."""
    out = {}
    for i, p in enumerate(config.get("path", [])):
        if not (is_wired(p) and p.get("trace")):
            continue
        rec = _record(config, i, until_s, schedule=False)
        t = np.asarray(rec["t_s"], dtype=float)
        rate = np.asarray(rec["rate_mbps"], dtype=float)
        good = np.flatnonzero(rate > 0)
        rows = ["t_s,rate_mbps"]
        for k in range(len(t)):
            r = rate[k]
            if not r > 0 and len(good):
                before = good[good <= k]
                r = rate[before[-1]] if len(before) else rate[good[0]]
            rows.append(f"{float(t[k])!r}," + ("" if np.isnan(r) else f"{float(r)!r}"))
        f = os.path.join(folder, f"probe-trace-{i}.csv")
        with open(f, "w", encoding="utf-8") as fh:
            fh.write("\n".join(rows) + "\n")
        out[i] = f
    return out


def without_held(config: dict[str, Any], probe_traces: dict[int, str] | None = None) -> dict[str, Any]:
    """`without_scans`, and wired paths' schedules without their link up/down and their steps to
    rate 0 (their other rate steps kept: through a stall the rate before it goes on, as
    `traced_wired_probes` does for a trace), and the traces of `probe_traces` (path index ->
    `traced_wired_probes` file) in place of theirs: what the capacity probe simulates, so the
    shaper neither drops through a held window nor averages it into the rate."""
    doc = without_scans(config)
    for i, f in (probe_traces or {}).items():
        doc["path"][i]["trace"] = {**doc["path"][i]["trace"], "file": f, "format": "csv", "loop": False,
                                   "start_s": 0.0}
    for p in doc.get("path", []):
        if (p.get("technology") or "wired") == "wired" and p.get("schedule"):
            steps = []
            for st in p["schedule"]:
                st = {k: v for k, v in st.items() if k not in ("up", "drop")}
                if st.get("rate_mbps") is not None and not _is_stall(st):
                    steps.append(st)
            p["schedule"] = steps
    return doc
