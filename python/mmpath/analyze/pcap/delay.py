"""One-way delay between two captures of the same packets (used by summary.one_way_delay)."""

from __future__ import annotations

from ...lazy import numpy as np  # on first use (start-up time): lazy.py
from ..model import Source
from .packets import conn_name


def one_way_delay(a: Source, b: Source) -> dict:
    """One-way delay of data segments seen in both captures (same packet = same flow, seq, length).

    For each TCP direction present in both, a segment's first appearance in the sender-side capture
    is matched with its first appearance in the other; the delay is the timestamp difference, so
    it is only meaningful when both capture clocks agree (same host, or PTP/NTP-synchronized hosts;
    apply --offset otherwise). Returns per flow name {samples, mean_ms, p50_ms, p95_ms, min_ms}
    with the direction sign chosen so most delays are positive (which capture is the sender is
    found from the data).
    """
    out = {}
    ta, tb = a.meta.get("_tcp", {}), b.meta.get("_tcp", {})
    for key, da in ta.items():
        db = tb.get(key)
        if db is None or not any(p > 0 for p in da.plen):
            continue
        def firsts(d):
            seq = np.frombuffer(d.seq, dtype=np.uint32).astype(np.int64)
            pl = np.asarray(d.plen, dtype=np.int64)
            ts = np.frombuffer(d.ts, dtype=float)
            m = pl > 0
            k = seq[m] * 65536 + pl[m] % 65536
            uk, first = np.unique(k, return_index=True)
            return uk, ts[m][first]
        ka, tA = firsts(da)
        kb, tB = firsts(db)
        common, ia, ib = np.intersect1d(ka, kb, return_indices=True)
        if common.size == 0:
            continue
        delay = (tB[ib] - tA[ia]) * 1e3
        if np.median(delay) < 0:
            delay = -delay
        out[conn_name(key)] = {"samples": int(delay.size), "mean_ms": float(delay.mean()),
                           "p50_ms": float(np.median(delay)), "p95_ms": float(np.percentile(delay, 95)),
                           "min_ms": float(delay.min())}
    return out
