"""Reader for periodic `iw dev IF station dump` and `iw dev IF link` output with timestamps.

Samples start with a timestamp line (``# mmpath-capture iw t=UNIX_SECONDS``, as `mmpath capture`
writes, or a bare Unix time from ``date +%s.%N``). Fields, as iw prints them (iw's station.c
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

import numpy as np
import pandas as pd

from .errors import AnalyzeInputError, open_text
from .model import Source

ALLOWED = ("`iw dev IF station dump` / `iw dev IF link` output with a timestamp line before each "
           "sample (`# mmpath-capture iw t=UNIX_SECONDS`, or a bare Unix time)")
_MARK = re.compile(r"^#\s*mmpath-capture\s+iw\s+t=([0-9.]+)")
_BARE_T = re.compile(r"^\s*([0-9]{9,11}(?:\.[0-9]+)?)\s*$")
_STA = re.compile(r"^(Station|Connected to)\s+([0-9a-fA-F:]{17})(?:\s+\(on\s+(\S+)\))?")
_RATE = re.compile(r"([0-9.]+)\s*MBit/s(.*)")
_MCS = re.compile(r"(?:^|\s)(?:[A-Z]+-)?MCS\s+([0-9]+)")
_SIG = re.compile(r"(-?[0-9.]+)")


def looks_like(head: str) -> bool:
    lines = head.splitlines()[:8]
    return any(_MARK.match(ln) for ln in lines) or any(_STA.match(ln) or ln.startswith("Not connected")
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
    with f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            m = _MARK.match(line) or _BARE_T.match(line)
            if m:
                _finish(cur, samples)
                cur = None
                if t is not None and not any(s["t"] == t for s in samples[-4:]):
                    samples.append({"t": t, "link_up": False})
                t = float(m.group(1))
                nmarks += 1
                continue
            s = line.strip()
            if not s:
                continue
            sm = _STA.match(s)
            if sm or s.startswith("Not connected"):
                if t is None:
                    raise AnalyzeInputError(path, "station data before any timestamp line", ALLOWED, line=lineno)
                if sm:
                    if cur is not None and cur.get("station") == sm.group(2).lower():
                        continue  # `link` after `station dump` for the same station: merge
                    _finish(cur, samples)
                    cur = {"t": t, "station": sm.group(2).lower(), "link_up": True}
                    iface = sm.group(3) or iface
                else:
                    _finish(cur, samples)
                    cur = None
                    samples.append({"t": t, "link_up": False})
                continue
            if cur is None or ":" not in s:
                continue
            k, _, v = s.partition(":")
            k = k.strip().lower()
            v = v.strip()
            if k in ("tx bitrate", "rx bitrate"):
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
        raise AnalyzeInputError(path, "no timestamp lines, so not a timed iw log", ALLOWED)
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
    src.meta = {"samples": nmarks, "path": base}
    if len(stations) > 1:
        src.meta["stations"] = stations
    return src


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
