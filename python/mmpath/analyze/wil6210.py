"""Reader for the per-10 ms wil6210 CSV layout of the NUWiNS 60 GHz data set.

Parsed by the simulator core's own wil6210 parser (crates/mmpath-sim/src/link/trace/wil6210.rs,
through ``mmpath._core.parse_wil6210_log``; documented in docs/traces.md, section "wil6210 /
NUWiNS"), so a file reads here exactly as it replays as a trace, with the same errors: header
names, units, the headerless layouts, MCS 12.1, link status words and codes, missing values, the
separator and the time column's unit are the core's rules.

Unlike a trace (which keeps only the rows that change the channel), the analyzer keeps every row
as a sample, keeps SQI (column ``sqi``, no unit: the driver documents no mapping to dB) and keeps
absolute times when they are Unix times, so the log can be aligned with captures of the same run.
What stays here: telling a wil6210 log from the other logs by its first line (``looks_like``,
the column names being the core's) and turning the rows into the analyzer's samples and events.
"""

from __future__ import annotations

from pathlib import Path

from .. import _core
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from .errors import from_core, open_text
from .model import Source

ALLOWED = ("a wil6210 CSV with a header naming the columns (e.g. time_ms,mcs,sector,status,sqi,rssi) "
           "or headerless rows of 5 (mcs,sector,status,sqi,rssi) or 6 (time first) cells; see docs/traces.md")


def _sep(line: str):
    for s in (",", "\t", ";"):
        if s in line:
            return s
    return None  # whitespace


def _cells(line: str, sep):
    return [c.strip().strip('"') for c in (line.split(sep) if sep else line.split())]


def looks_like(head: str) -> bool:
    """A header naming at least two columns, MCS or link status among them; separated by spaces,
    every word must be a column name. (One known word was enough, so tcpdump's stderr, "tcpdump:
    data link type LINUX_SLL2", was taken for a wil6210 log and a capture folder holding it failed.)"""
    first = next((ln for ln in head.splitlines() if ln.strip() and not ln.startswith("#")), "")
    sep = _sep(first)
    cells = _cells(first, sep)
    fields = [_core.wil6210_column(c) for c in cells]
    known = {f for f in fields if f}
    if sep is None and None in fields:
        return False
    return len(known) >= 2 and bool(known & {"mcs", "status"})


def read(path) -> Source:
    path = Path(path)
    with open_text(path, ALLOWED) as f:
        text = f.read()
    try:
        cols = _core.parse_wil6210_log(text, str(path))
    except ValueError as e:
        raise from_core(path, e) from None
    t = np.asarray(cols["t_s"], dtype=float)
    clock = "relative"
    first = cols["first_s"]
    if first is not None and not cols["clock_times"] and first > 1e9:
        t = t + first
        clock = "unix"  # Unix times: keep them for alignment with captures
    df = pd.DataFrame({c: cols[c] for c in ("mcs", "sector", "link_up", "sqi", "rssi_dbm", "rate_mbps")})
    # Fields a row leaves empty keep their previous value (docs/traces.md "A field the step leaves
    # unset keeps its previous value").
    df = df.ffill()
    path_ = path.stem
    samples = pd.DataFrame({"t": t, "flow": "", "subflow": -1, "path": path_,
                            "mcs": df["mcs"].to_numpy(float), "sector": df["sector"].to_numpy(float),
                            "link_up": df["link_up"].fillna(1.0).to_numpy(float) > 0.5,
                            "sqi": df["sqi"].to_numpy(float), "rssi_dbm": df["rssi_dbm"].to_numpy(float),
                            "trace_rate_mbps": df["rate_mbps"].to_numpy(float)})
    samples = samples.drop_duplicates("t", keep="last")
    src = Source(path=str(path), kind="wil6210", clock=clock)
    src.samples = samples
    up = samples["link_up"].to_numpy()
    ts = samples["t"].to_numpy()
    ev = [(ts[i], path_, "up" if up[i] else "down", np.nan, "") for i in range(1, len(up)) if up[i] != up[i - 1]]
    src.events = pd.DataFrame(ev, columns=["t", "path", "kind", "value", "detail"])
    src.meta = {"rows": len(t), "time_unit": cols["time_unit"]}
    return src
