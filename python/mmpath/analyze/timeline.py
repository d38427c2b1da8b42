"""Aligned outputs: intervals (throughput bins), timeline (cross-layer samples), events.

Column names and units follow docs/outputs.md (the simulator's intervals.csv and timeline.parquet)
with two additions that a multi-source analysis needs: ``source`` (the input file a row came from)
and ``subflow`` in the timeline. The full schema is in docs/trace-schema.md.
"""

from __future__ import annotations
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from .model import Source

# Timeline columns in schema order; a source fills those it has, the rest are NaN.
TIMELINE_COLS = [
    "t_s", "source", "flow", "subflow", "path",
    "cwnd_bytes", "ssthresh_bytes", "srtt_ms", "rttvar_ms", "rtt_ms", "in_flight_bytes", "rwnd_bytes",
    "cc_state", "queue_bytes", "phy_rate_mbps", "rx_rate_mbps", "mcs", "rx_mcs", "rssi_dbm", "snr_db",
    "sqi", "sector", "link_up", "delivered_bytes", "retransmits", "delivery_rate_mbps", "pacing_rate_mbps",
    "tx_retries", "tx_failed", "trace_rate_mbps",
]
STR_COLS = ("source", "flow", "path", "cc_state")


def rebin(src: Source, offset: float, origin: float, bin_s: float) -> pd.DataFrame:
    """A source's delivered-byte bins on the common grid [k*bin_s, (k+1)*bin_s), split by overlap."""
    b = src.bins
    if b is None or b.empty:
        return pd.DataFrame(columns=["t_s", "source", "flow", "subflow", "path", "bytes"])
    a = b["t"].to_numpy(float) + offset - origin
    dt = np.maximum(b["dt"].to_numpy(float), 0.0)
    e = a + dt
    eps = 1e-9
    k0 = np.floor((a + eps) / bin_s).astype(np.int64)
    k1 = np.floor((np.maximum(e, a) - eps) / bin_s).astype(np.int64)
    k1 = np.maximum(k1, k0)
    by = b["bytes"].to_numpy(float)
    single = k0 == k1
    ks = [k0[single]]
    vs = [by[single]]
    idx = [np.flatnonzero(single)]
    for i in np.flatnonzero(~single):
        kk = np.arange(k0[i], k1[i] + 1)
        lo = np.maximum(kk * bin_s, a[i])
        hi = np.minimum((kk + 1) * bin_s, e[i])
        w = np.clip(hi - lo, 0, None)
        w = w / w.sum() if w.sum() > 0 else np.full(kk.size, 1.0 / kk.size)
        ks.append(kk)
        vs.append(by[i] * w)
        idx.append(np.full(kk.size, i))
    k = np.concatenate(ks)
    v = np.concatenate(vs)
    ii = np.concatenate(idx)
    df = pd.DataFrame({"k": k, "flow": b["flow"].to_numpy()[ii], "subflow": b["subflow"].to_numpy()[ii],
                       "path": b["path"].to_numpy()[ii], "bytes": v})
    g = df.groupby(["flow", "subflow", "path", "k"], sort=True, observed=True)["bytes"].sum().reset_index()
    g["t_s"] = (g["k"] * bin_s).round(9)
    g["source"] = src.path
    return g[["t_s", "source", "flow", "subflow", "path", "bytes"]]


def build(sources: list[Source], table: dict, origin: float, bin_s: float):
    iv, tl, ev = [], [], []
    for s in sources:
        off = table[s.path]["offset_s"]
        iv.append(rebin(s, off, origin, bin_s))
        if s.samples is not None and len(s.samples):
            d = s.samples.copy()
            d["t_s"] = d.pop("t").astype(float) + off - origin
            d["source"] = s.path
            tl.append(d)
        if s.events is not None and len(s.events):
            e = s.events.copy()
            e["t_s"] = e.pop("t").astype(float) + off - origin
            e["source"] = s.path
            ev.append(e)
    intervals = pd.concat([x for x in iv if len(x)], ignore_index=True) if any(len(x) for x in iv) else \
        pd.DataFrame(columns=["t_s", "source", "flow", "subflow", "path", "bytes"])
    intervals["bytes"] = intervals["bytes"].astype(float)
    intervals["mbps"] = intervals["bytes"] * 8 / bin_s / 1e6
    intervals = intervals.sort_values(["source", "flow", "subflow", "t_s"], kind="stable").reset_index(drop=True)
    if tl:
        timeline = pd.concat(tl, ignore_index=True, sort=False)
    else:
        timeline = pd.DataFrame(columns=TIMELINE_COLS)
    for c in TIMELINE_COLS:
        if c not in timeline:
            timeline[c] = np.nan
    extra = [c for c in timeline.columns if c not in TIMELINE_COLS]
    timeline = timeline[TIMELINE_COLS + extra].sort_values(["t_s", "source", "flow"], kind="stable")
    timeline = timeline.reset_index(drop=True)
    for c in STR_COLS:
        timeline[c] = timeline[c].where(timeline[c].notna(), "").astype(str).astype("category")
    timeline["subflow"] = pd.to_numeric(timeline["subflow"], errors="coerce").fillna(-1).astype("int64")
    if "link_up" in timeline:
        lu = timeline["link_up"]
        timeline["link_up"] = lu.map(lambda x: x if isinstance(x, (bool, np.bool_)) else (
            bool(x) if isinstance(x, (int, float)) and not pd.isna(x) else pd.NA)).astype("boolean")
    for c in timeline.columns:
        if c not in STR_COLS and c not in ("subflow", "link_up") and timeline[c].dtype == object:
            timeline[c] = pd.to_numeric(timeline[c], errors="coerce")
    if ev:
        events = pd.concat(ev, ignore_index=True)[["t_s", "source", "path", "kind", "value", "detail"]]
        events = events.sort_values("t_s", kind="stable").reset_index(drop=True)
    else:
        events = pd.DataFrame(columns=["t_s", "source", "path", "kind", "value", "detail"])
    return intervals, timeline, events
