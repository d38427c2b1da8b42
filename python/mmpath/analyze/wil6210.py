"""Reader for the per-10 ms wil6210 CSV layout of the NUWiNS 60 GHz data set.

Same column conventions as the simulator's trace parser (crates/mmpath-sim/src/link/trace/wil6210.rs,
``parse_wil6210``; documented in docs/traces.md, section "wil6210 / NUWiNS"), so a file that
replays as a trace is also read here:

- header detected when a cell of the first line names a known column; names matched
  case-insensitively ignoring spaces and punctuation; a unit in brackets (``RSSI [dBm]``) or as the
  last word (``time_ms``); unknown columns (sensors) ignored;
- MCS 0-31 or ``12.1`` (firmware's extended MCS, reported as 26); Tx sector; link status words
  (``connected``/``up``/``true`` = up, other words down) or the driver's enum (0 unused, 1 pending
  = down, 2 connected = up); SQI; RSSI (dBm); throughput only with a unit;
- missing values: empty, NaN, NA, N/A, null, none, ``-``;
- separator from the first line: comma, tab, ``;``, else whitespace;
- headerless rows of 5 cells (mcs, sector, status, sqi, rssi) or 6 (time first);
- time unit from the header, else the one (s, ms, us, ns) putting the median row spacing between
  1 ms and 1 s; without a time column row i is at i x 10 ms.

Unlike the simulator (which needs channel steps), the analyzer keeps SQI (column ``sqi``, no unit:
the driver documents no mapping to dB) and keeps absolute times when they are Unix times, so the
trace can be aligned with captures of the same run.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import AnalyzeInputError, open_text
from .model import Source

ALLOWED = ("a wil6210 CSV with a header naming the columns (e.g. time_ms,mcs,sector,status,sqi,rssi) "
           "or headerless rows of 5 (mcs,sector,status,sqi,rssi) or 6 (time first) cells; see docs/traces.md")
SAMPLE_S = 0.010  # NUWiNS README: one row every 10 ms
_MISSING = {"", "nan", "na", "n/a", "null", "none", "-"}
_FIELDS = {
    "time": {"time", "timestamp", "t", "ts", "datetime", "epoch", "epochtime", "unixtime"},
    "mcs": {"mcs", "txmcs", "bfmcs", "mcsindex"},
    "sector": {"sector", "txsector", "mytxsector", "txsectorid", "sectorid"},
    "status": {"status", "linkstatus", "link", "state", "linkstate", "connectionstatus"},
    "sqi": {"sqi", "signalqualityindicator", "signalquality", "sq"},
    "rssi": {"rssi", "signalstrength"},
    "throughput": {"throughput", "tput", "goodput"},
}
_TUNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_RUNITS = {"bps": 1e-6, "kbps": 1e-3, "mbps": 1.0, "gbps": 1e3}
_UNITS = set(_TUNITS) | set(_RUNITS) | {"dbm", "db", "utc", "local"}


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _split_name(cell: str) -> tuple[str, str | None]:
    """Column name and unit: 'RSSI [dBm]' / 'Time (ms)' / 'time_ms' / 'throughput_mbps'."""
    c = cell.strip().strip('"')
    m = re.match(r"^(.*?)[\s_]*[\[(]([^\])]*)[\])]\s*$", c)
    if m:
        return _norm(m.group(1)), m.group(2).strip().lower()
    parts = re.split(r"[\s_\-]+", c)
    if len(parts) > 1 and parts[-1].lower() in _UNITS:
        return _norm("".join(parts[:-1])), parts[-1].lower()
    return _norm(c), None


def _field(name: str) -> str | None:
    for f, names in _FIELDS.items():
        if name in names:
            return f
    return None


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
    fields = [_field(_split_name(c)[0]) for c in cells]
    known = {f for f in fields if f}
    if sep is None and None in fields:
        return False
    return len(known) >= 2 and bool(known & {"mcs", "status"})


def _status(v: str, path, lineno):
    w = v.strip().lower()
    if w in ("connected", "up", "true"):
        return 1.0
    try:
        x = float(w)
    except ValueError:
        return 0.0  # unused, pending, disconnected, ...
    if x in (0.0, 1.0):
        return 0.0
    if x == 2.0:
        return 1.0
    raise AnalyzeInputError(path, f"column status: `{v}` is not valid",
                            "a word such as connected / pending / unused, or the driver's code 0, 1, 2", line=lineno)


def _number(v: str, col: str, path, lineno):
    try:
        return float(v)
    except ValueError:
        raise AnalyzeInputError(path, f"column {col}: `{v}` is not a number", ALLOWED, line=lineno) from None


def read(path) -> Source:
    path = Path(path)
    f = open_text(path, ALLOWED)
    with f:
        lines = ((i, ln.rstrip("\r\n")) for i, ln in enumerate(f, 1))
        lines = ((i, ln) for i, ln in lines if ln.strip() and not ln.lstrip().startswith("#"))
        try:
            lineno, first = next(lines)
        except StopIteration:
            raise AnalyzeInputError(path, "empty file", ALLOWED) from None
        sep = _sep(first)
        cells = _cells(first, sep)
        cols: dict[str, int] = {}
        tunit = runit = None
        named = [_split_name(c) for c in cells]
        if any(_field(n) for n, _ in named):
            for j, (n, u) in enumerate(named):
                fld = _field(n)
                if fld is None:
                    continue
                if fld == "throughput":
                    if u not in _RUNITS:
                        continue  # a throughput without a unit is ambiguous: ignored (docs/traces.md)
                    runit = u
                if fld in cols:
                    raise AnalyzeInputError(path, f"columns `{cells[cols[fld]]}` and `{cells[j]}` "
                                                  f"both map to `{fld}`", "one column per field", line=lineno)
                if fld == "time" and u in _TUNITS:
                    tunit = u
                cols[fld] = j
            if not any(k in cols for k in ("mcs", "status", "throughput")):
                raise AnalyzeInputError(path, "no link column in the header",
                                        "at least one of MCS, status, or throughput with a unit", line=lineno)
            ncols = len(cells)
            data_iter = lines
        elif len(cells) in (5, 6):
            names = ["mcs", "sector", "status", "sqi", "rssi"]
            if len(cells) == 6:
                names = ["time"] + names
            cols = {n: j for j, n in enumerate(names)}
            ncols = len(cells)
            data_iter = _chain([(lineno, first)], lines)
        else:
            raise AnalyzeInputError(path, "the first line is neither a header naming the "
                                          "columns nor a headerless row of 5 or 6 cells", ALLOWED, line=lineno)
        rows = []
        for ln_no, ln in data_iter:
            c = _cells(ln, sep)
            if len(c) != ncols:
                raise AnalyzeInputError(path, f"row has {len(c)} cells but the header has {ncols}",
                                        "the same number of cells in every row", line=ln_no)
            r = {}
            for fld, j in cols.items():
                v = c[j]
                if v.strip().lower() in _MISSING:
                    continue
                if fld == "status":
                    r["link_up"] = _status(v, path, ln_no)
                elif fld == "mcs":
                    r["mcs"] = 26.0 if v.strip() == "12.1" else _number(v, "mcs", path, ln_no)
                    if not (0 <= r["mcs"] <= 31 and float(r["mcs"]).is_integer()):
                        raise AnalyzeInputError(path, f"column mcs: `{v}` is not valid",
                                                "an MCS index 0-31, or 12.1", line=ln_no)
                elif fld == "time":
                    r["time"] = v
                elif fld == "throughput":
                    r["rate_mbps"] = _number(v, "throughput", path, ln_no) * _RUNITS[runit]
                else:
                    r[{"rssi": "rssi_dbm"}.get(fld, fld)] = _number(v, fld, path, ln_no)
            rows.append(r)
    if not rows:
        raise AnalyzeInputError(path, "no data rows", ALLOWED)
    df = pd.DataFrame(rows)
    clock = "relative"
    if "time" in df:
        raw = df["time"]
        num = pd.to_numeric(raw, errors="coerce")
        if num.notna().all():
            tv = num.to_numpy(float)
            if tunit is None:
                med = float(np.median(np.diff(tv))) if tv.size > 1 else 10.0
                for u in ("s", "ms", "us", "ns"):
                    if 1e-3 <= med * _TUNITS[u] <= 1.0:
                        tunit = u
                        break
                else:
                    if tv.size > 1:
                        raise AnalyzeInputError(path, "cannot tell the unit of the time column",
                                                "name it time_s, time_ms, time_us or time_ns")
                    tunit = "ms"
            t = tv * _TUNITS[tunit]
        else:
            tt = pd.to_datetime(raw.str.replace("Z", "", regex=False), errors="coerce")
            if tt.isna().any():
                bad = raw[tt.isna()].iloc[0]
                raise AnalyzeInputError(path, f"time `{bad}` is not valid",
                                        "numbers (s/ms/us/ns) or clock times [YYYY-MM-DD ]HH:MM:SS[.fff]")
            t = (tt - tt.iloc[0]).dt.total_seconds().to_numpy()
        if np.any(np.diff(t) < 0):
            raise AnalyzeInputError(path, "time goes backwards", "non-decreasing times")
        if t.size and t[0] > 1e9:
            clock = "unix"  # Unix times: keep them for alignment with captures
        else:
            t = t - (t[0] if t.size else 0.0)
    else:
        t = np.arange(len(df)) * SAMPLE_S
    for c in ("mcs", "sector", "link_up", "sqi", "rssi_dbm", "rate_mbps"):
        if c not in df:
            df[c] = np.nan
    # Fields a row leaves empty keep their previous value (docs/traces.md "A field the step leaves
    # unset keeps its previous value").
    df[["mcs", "sector", "link_up", "sqi", "rssi_dbm", "rate_mbps"]] = \
        df[["mcs", "sector", "link_up", "sqi", "rssi_dbm", "rate_mbps"]].ffill()
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
    src.meta = {"rows": len(rows), "time_unit": tunit}
    return src


def _chain(a, b):
    yield from a
    yield from b
