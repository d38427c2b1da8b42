"""Windows in which a path holds its packets instead of sending them, for the emulator's delay
line to hold packets through: a scanning radio's dwells off channel, and a wired path's
`up = false` schedule steps.

Wired paths (docs/scenario.md, `schedule`): "up = false takes both directions down: the frame on
the air is lost, queued frames stay queued ... nothing is transmitted until up = true". The
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

While off channel both ends' frames wait in their queues; nothing is dropped. The emulator
therefore holds each scanned path's packets, both ways, in the delay line during these windows
(delay.py), and shapes the path at the capacity it has without the scan (`without_scans`): the
shaper, which can only pass at a rate or drop, does not see the scan at all.
"""

from __future__ import annotations

import copy
from typing import Any

# channel.rs SCAN_DWELL_MS / SCAN_REST_MS: qcacld-3.0's gActiveMaxChannelTime / gRestTimeConc.
DWELL_MS_DEFAULT = 40.0
REST_MS_DEFAULT = 100.0
_US = 1_000


def _ns(s: float) -> int:
    """time.rs Time::from_secs_f64: whole ns, rounded; 0 for a non-positive time."""
    return 0 if not s > 0 else int(round(s * 1e9))


def dwells_ns(path: dict[str, Any], until_s: float | None = None) -> list[tuple[int, int]]:
    """A path's off-channel windows `[start, end)` in ns from the run's start, sorted (a path of
    the normalized scenario; none without scan events). `until_s`: only the windows that begin
    before it (the run's end), cut there."""
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
    out: list[tuple[int, int]] = []
    busy_until = 0
    for t, total, dwell, rest in sorted(requests, key=lambda r: r[0]):
        if t < busy_until:
            continue  # sim/scan.rs scan_request: one scan at a time, a request during one is dropped
        busy_until = t + total
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


def wired_down_ns(path: dict[str, Any], until_s: float) -> list[tuple[int, int]]:
    """A wired path's `[start, end)` windows with its link down (schedule steps `up = false` ..
    `up = true`), in ns from the run's start, cut at `until_s`; none for a radio path (a radio
    link that goes down drops its queue: the shaper's outage is right there)."""
    if (path.get("technology") or "wired") != "wired":
        return []
    out: list[tuple[int, int]] = []
    down_at: int | None = None
    for step in sorted(path.get("schedule") or [], key=lambda st: float(st["t_s"])):
        if "up" not in step or step["up"] is None:
            continue
        t = _ns(float(step["t_s"]))
        if not step["up"] and down_at is None:
            down_at = t
        elif step["up"] and down_at is not None:
            if t > down_at:
                out.append((down_at, t))
            down_at = None
    stop = _ns(until_s)
    if down_at is not None and down_at < stop:
        out.append((down_at, stop))
    return [(a, min(b, stop)) for a, b in out if a < stop]


def holds_ns(config: dict[str, Any], until_s: float) -> dict[int, list[tuple[int, int]]]:
    """Per path index, the windows the delay line holds its packets through: a radio path's scan
    dwells, a wired path's down steps."""
    out = {}
    for i, p in enumerate(config.get("path", [])):
        w = dwells_ns(p, until_s) or wired_down_ns(p, until_s)
        if w:
            out[i] = w
    return out


def without_held(config: dict[str, Any]) -> dict[str, Any]:
    """`without_scans`, and wired paths' schedules without their link up/down (their rate steps
    kept): what the capacity probe simulates, so the shaper neither drops through a held window
    nor averages it into the rate."""
    doc = without_scans(config)
    for p in doc.get("path", []):
        if (p.get("technology") or "wired") == "wired" and p.get("schedule"):
            steps = []
            for st in p["schedule"]:
                st = {k: v for k, v in st.items() if k != "up"}
                if st.get("rate_mbps") is not None:
                    steps.append(st)
            p["schedule"] = steps
    return doc
