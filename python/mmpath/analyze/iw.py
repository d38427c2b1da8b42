"""Reader for periodic `iw dev IF station dump` and `iw dev IF link` output with timestamps.

Samples start with a timestamp line (``# mmpath-capture iw t=UNIX_SECONDS``, as `mmpath capture`
writes, or a bare Unix time from ``date +%s.%N``, or `date`'s other styles: stamps.py). A log
without timestamp lines (``while :; do iw dev wlan0 station dump; sleep 0.1; done``) is timed by
each station entry's ``current time: N ms`` (wall clock, iw >= 5.4; `_times_from_current`). Fields, as iw prints them (iw's station.c
print_sta_handler / link.c print_link_sta and util.c parse_bitrate):

    Station 04:ce:14:0a:21:5c (on wlan0)          | Connected to 04:ce:14:0a:21:5c (on wlan0)
        signal:  -55 [-57, -58] dBm                |     signal: -55 dBm
        tx bitrate: 866.7 MBit/s VHT-MCS 9 80MHz short GI VHT-NSS 2
        rx bitrate: 1155.0 MBit/s MCS 7
        tx retries: 12    tx failed: 0             | Not connected.

The MCS is taken from ``MCS n``, ``HT-MCS``/``VHT-MCS``/``HE-MCS``/``EHT-MCS``/``EDMG-MCS`` or
``DMG-MCS n`` tokens (802.11ad stations through wil6210 report DMG rates; when iw prints only the
bitrate, ``mcs`` stays NaN and ``phy_rate_mbps`` carries the rate). ``Not connected.`` or a
sample without any station marks the link down.
"""

from __future__ import annotations

import re
from pathlib import Path
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from . import stamps
from .errors import AnalyzeInputError, open_text
from .model import Source

ALLOWED = ("`iw dev IF station dump` / `iw dev IF link` output with a timestamp line before each "
           "sample (`# mmpath-capture iw t=UNIX_SECONDS`, or " + stamps.FORMS + "), or `station dump` "
           "output alone, timed by its `current time: N ms` lines (iw >= 5.4)")
_STA = re.compile(r"^(Station|Connected to)\s+([0-9a-fA-F:]{17})(?:\s+\(on\s+(\S+)\))?")
_RATE = re.compile(r"([0-9.]+)\s*MBit/s(.*)")
_MCS = re.compile(r"(?:^|\s)(?:[A-Z]+-)?MCS\s+([0-9]+)")
_SIG = re.compile(r"(-?[0-9.]+)")


def looks_like(head: str) -> bool:
    lines = head.splitlines()[:8]
    return any(stamps.is_capture_mark(ln, "iw") or _STA.match(ln) or ln.startswith("Not connected")
               for ln in lines)


def _finish(cur, out):
    if cur is not None:
        out.append(cur)


def read(path) -> Source:
    path = Path(path)
    f = open_text(path, ALLOWED)
    samples = []  # (t, dict or None for "not connected")
    t = None
    cur = None
    nmarks = 0
    iface = None
    m_ = re.match(r"iw-(.+)\.log$", path.name)
    if m_:
        iface = m_.group(1)
    clock = stamps.LineClock(path, "iw")
    unstamped = None  # line of the first station data before any timestamp line
    with f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            ts = stamps.quick(line, "iw")
            if ts is None:
                ts = _stamp(clock, lineno, line)
            if ts is not None:
                if unstamped is not None:
                    raise AnalyzeInputError(path, "station data before any timestamp line", ALLOWED, line=unstamped)
                _finish(cur, samples)
                cur = None
                if t is not None and not any(s["t"] == t for s in samples[-4:]):
                    samples.append({"t": t, "link_up": False})
                t = ts
                nmarks += 1
                continue
            s = line.strip()
            if not s:
                continue
            sm = _STA.match(s)
            if sm or s.startswith("Not connected"):
                if t is None and unstamped is None:
                    unstamped = lineno  # no timestamp lines (yet): `current time:` may time it
                if sm:
                    if (cur is not None and cur.get("station") == sm.group(2).lower()
                            and sm.group(1) not in cur["heads"]):
                        cur["heads"].add(sm.group(1))
                        continue  # `link` after `station dump` for the same station: merge
                    _finish(cur, samples)
                    cur = {"t": t, "station": sm.group(2).lower(), "link_up": True, "line": lineno,
                           "heads": {sm.group(1)}}
                    iface = sm.group(3) or iface
                else:
                    _finish(cur, samples)
                    cur = None
                    samples.append({"t": t, "link_up": False, "line": lineno})
                continue
            if cur is None or ":" not in s:
                continue
            k, _, v = s.partition(":")
            k = k.strip().lower()
            v = v.strip()
            if k == "current time" and v.endswith("ms"):
                try:
                    cur.setdefault("now", int(v[:-2]) / 1e3)
                except ValueError:
                    pass
            elif k in ("tx bitrate", "rx bitrate"):
                rm = _RATE.match(v)
                if rm:
                    pre = "tx" if k.startswith("tx") else "rx"
                    cur.setdefault(f"{pre}_rate_mbps", float(rm.group(1)))
                    mm = _MCS.search(rm.group(2))
                    if mm:
                        cur.setdefault(f"{pre}_mcs", float(mm.group(1)))
            elif k == "signal":
                sg = _SIG.match(v)
                if sg:
                    cur.setdefault("rssi_dbm", float(sg.group(1)))
            elif k == "signal avg":
                sg = _SIG.match(v)
                if sg:
                    cur["rssi_avg_dbm"] = float(sg.group(1))
            elif k in ("tx retries", "tx failed", "tx packets", "rx packets", "tx bytes", "rx bytes"):
                try:
                    cur[k.replace(" ", "_")] = int(v.split()[0])
                except (ValueError, IndexError):
                    pass
    _finish(cur, samples)
    if t is not None and not any(s["t"] == t for s in samples[-4:]):
        samples.append({"t": t, "link_up": False})
    if nmarks == 0:
        if not samples:
            raise AnalyzeInputError(path, "no timestamp lines, so not a timed iw log", ALLOWED)
        samples = _times_from_current(path, samples)
    clock.warn()
    src = Source(path=str(path), kind="iw", clock="unix")
    base = iface or path.stem
    df = pd.DataFrame(samples)
    for c in ("station", "tx_mcs", "rx_mcs", "tx_rate_mbps", "rx_rate_mbps", "rssi_dbm", "tx_retries", "tx_failed"):
        if c not in df:
            df[c] = np.nan
    stations = sorted(st for st in df["station"].dropna().unique())
    if len(stations) <= 1:
        # One link (a client's view, or an AP with one station): the interface is the path.
        per_path = [(base, df.sort_values("t", kind="stable").drop_duplicates("t", keep="first"))]
    else:
        # An AP's `station dump` lists every associated station: each is its own link, named
        # IF/MAC, and a sample without a station has that station's link down.
        times = np.sort(df["t"].unique())
        per_path = []
        for st in stations:
            mine = df[df["station"] == st].drop_duplicates("t", keep="first").set_index("t")
            d = mine.reindex(times)
            d["link_up"] = d["link_up"].fillna(False)
            per_path.append((f"{base}/{st}", d.reset_index().rename(columns={"index": "t"})))
    frames, events = [], []
    for path_, d in per_path:
        smp = pd.DataFrame({
            "t": d["t"].to_numpy(float), "flow": "", "subflow": -1, "path": path_,
            "mcs": d["tx_mcs"].to_numpy(float), "rx_mcs": d["rx_mcs"].to_numpy(float),
            "phy_rate_mbps": d["tx_rate_mbps"].to_numpy(float), "rx_rate_mbps": d["rx_rate_mbps"].to_numpy(float),
            "rssi_dbm": d["rssi_dbm"].to_numpy(float), "link_up": d["link_up"].astype(bool).to_numpy(),
            "tx_retries": d["tx_retries"].to_numpy(float), "tx_failed": d["tx_failed"].to_numpy(float),
        })
        frames.append(smp)
        events.append(_link_events(smp, path_))
    src.samples = pd.concat(frames, ignore_index=True)
    src.events = pd.concat(events, ignore_index=True)
    src.meta = {"samples": nmarks or int(df["t"].nunique()), "path": base, **clock.facts()}
    if nmarks == 0:
        src.meta["timed_by"] = "current time"
    if len(stations) > 1:
        src.meta["stations"] = stations
    return src


def _stamp(clock: stamps.LineClock, lineno: int, line: str) -> float | None:
    """A timestamp line's time (stamps.py styles); None for iw's own lines: its station and link
    headers, their indented fields, and its messages (``command failed: ...``)."""
    if not line or line[0] in " \t":
        return None
    s = line.strip()
    if _STA.match(s) or s.startswith(("Not connected", "command failed")):
        return None
    return clock.at(lineno, line)


# Station entries of one `station dump` (an AP lists several) are printed within a few ms; a later
# entry, or one for a station already in the dump, starts the next sample.
_SAME_DUMP_S = 0.05


def _times_from_current(path, samples: list[dict]) -> list[dict]:
    """Time a log without timestamp lines by its station entries' ``current time: N ms`` (iw
    station.c prints the wall clock, gettimeofday, after each entry). Entries of one dump share the
    first one's time. ``Not connected.`` (from `iw link`, which prints no time) is placed one
    median sample interval after the sample before it (before the next one); an empty dump prints
    nothing, so a gap longer than 3 median intervals with no sample is the link down from one
    interval after the last sample seen."""
    for s in samples:
        if s["link_up"] and s.get("now") is None:
            raise AnalyzeInputError(path, "station data before any timestamp line, and no `current time:` line "
                                          "in it to time it (`iw link` prints none)", ALLOWED, line=s["line"])
    if not any(s["link_up"] for s in samples):
        raise AnalyzeInputError(path, "no timestamp lines and no station entries with a `current time:` line, "
                                      "so not a timed iw log", ALLOWED)
    t0, seen = None, set()
    for s in samples:
        if s["link_up"]:
            if t0 is None or s["station"] in seen or s["now"] - t0 > _SAME_DUMP_S:
                t0, seen = s["now"], set()
            seen.add(s["station"])
            s["t"] = t0
        else:
            t0, seen = None, set()
    times = np.unique([s["t"] for s in samples if s["link_up"]])
    step = float(np.median(np.diff(times))) if times.size > 1 else 0.1
    prev, k = None, 0
    for i, s in enumerate(samples):
        if s["link_up"]:
            prev, k = s["t"], 0
            continue
        k += 1
        nxt = next((x["t"] for x in samples[i + 1:] if x["link_up"]), None)
        if prev is None:
            s["t"] = nxt - step * k if nxt is not None else None
        else:
            s["t"] = prev + step * k if nxt is None else min(prev + step * k, (prev + nxt) / 2)
    out = [s for s in samples if s["t"] is not None]
    known = np.unique([s["t"] for s in out])
    for a, b in zip(known[:-1], known[1:]):
        if b - a > 3 * step:
            out.append({"t": float(a + step), "link_up": False})
    out.sort(key=lambda s: s["t"])
    return out


def _link_events(s: pd.DataFrame, path_: str) -> pd.DataFrame:
    ev = []
    up = s["link_up"].to_numpy()
    t = s["t"].to_numpy()
    rate = s["phy_rate_mbps"].to_numpy()
    for i in range(1, len(s)):
        if up[i] != up[i - 1]:
            ev.append((t[i], path_, "up" if up[i] else "down", np.nan, ""))
        elif up[i] and np.isfinite(rate[i]) and np.isfinite(rate[i - 1]) and rate[i] != rate[i - 1]:
            ev.append((t[i], path_, "rate", float(rate[i]), ""))
    return pd.DataFrame(ev, columns=["t", "path", "kind", "value", "detail"])
