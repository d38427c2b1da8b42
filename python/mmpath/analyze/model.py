"""What every reader returns: one `Source` per input file, in that file's own clock.

Times are seconds in the source's clock: ``clock = "unix"`` (wall clock, pcap / ss / iw / capture
logs) or ``"relative"`` (seconds from the source's own start: iperf3 intervals, mmpath runs, wil6210
traces without absolute timestamps). ``t0_unix`` is the wall-clock time of a relative source's
t = 0 when the file says (iperf3's ``start.timestamp.timesecs``, whole seconds only). align.py puts
all sources on one clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lazy import pandas as pd  # on first use (start-up time): lazy.py

BIN_COLS = ["t", "dt", "flow", "subflow", "path", "bytes"]
EVENT_COLS = ["t", "path", "kind", "value", "detail"]


def empty_bins() -> pd.DataFrame:
    return pd.DataFrame({"t": pd.Series(dtype=float), "dt": pd.Series(dtype=float),
                         "flow": pd.Series(dtype=str), "subflow": pd.Series(dtype="int64"),
                         "path": pd.Series(dtype=str), "bytes": pd.Series(dtype=float)})


def empty_events() -> pd.DataFrame:
    return pd.DataFrame({"t": pd.Series(dtype=float), "path": pd.Series(dtype=str),
                         "kind": pd.Series(dtype=str), "value": pd.Series(dtype=float),
                         "detail": pd.Series(dtype=str)})


@dataclass
class Source:
    path: str
    kind: str
    clock: str = "unix"
    t0_unix: float | None = None
    # Per-flow results as the source states or measures them (dicts; keys per docs/analyze.md).
    flows: list[dict] = field(default_factory=list)
    # Delivered bytes: t (bin start), dt (bin length), flow, subflow (-1 = connection), path, bytes.
    bins: pd.DataFrame = field(default_factory=empty_bins)
    # Cross-layer samples: t, flow, path and timeline columns (docs/trace-schema.md).
    samples: pd.DataFrame = field(default_factory=lambda: pd.DataFrame())
    # Link / protocol events: t, path, kind (down, up, rate, mp_prio, add_addr, ...), value, detail.
    events: pd.DataFrame = field(default_factory=empty_events)
    meta: dict = field(default_factory=dict)
