"""Per-flow statistics of a run's timeline, in passes over its batches (issue 26).

A run's summary needs, per flow, the mean and 95th percentile of its 10 ms srtt samples and the
mean capacity of its bottleneck over the run (api.flow_metrics). A day-long run's timeline is
millions of rows that a run written to a folder never holds (timeline.parquet is read back a
batch at a time), so these are computed in a few passes over the batches, with state that
does not grow with the run: counts first, then numpy's pairwise sums of exactly those values
(streamstats.PairwiseSum), then the percentile's ranks by radix selection. An in-memory run
gives its whole timeline as one batch: one code path, the same numbers to the last bit as
numpy on whole columns (tests/test_streaming.py compares the two).

``batches()`` starts a pass: an iterable of DataFrames with (at least) the columns of COLUMNS
the timeline has, in the file's row order (time never decreases from one row to the next).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from .streamstats import PairwiseSum, order_statistics, percentile, percentile_ranks

COLUMNS = ["t_s", "flow", "path", "subflow", "srtt_ms", "phy_rate_mbps", "link_up"]

Batches = Callable[[], Iterable[Any]]


def whole_samples(batches: Batches) -> Iterator[Any]:
    """The batches regrouped so no sample time is split between two (the rows of the last time
    in a batch are held back and go with the next one): the per-sample capacity sums a sample's
    rows."""
    carry = None
    for b in batches():
        if carry is not None and len(carry):
            b = pd.concat([carry, b], ignore_index=True)
        if not len(b):
            carry = b
            continue
        t = b["t_s"].to_numpy(dtype=float)
        cut = int(np.searchsorted(t, t[-1], side="left"))
        if cut:
            yield b.iloc[:cut]
        carry = b.iloc[cut:]
    if carry is not None and len(carry):
        yield carry


def _flow_rows(b: Any, name: str) -> Any:
    return b[b["flow"].astype(str) == name] if "flow" in b else b


def _srtt(rows: Any) -> Any:
    r = rows["srtt_ms"].to_numpy(dtype=float)
    return r[np.isfinite(r)]


def _capacity(rows: Any, backbone: float | None) -> Any:
    """The flow's bottleneck rate at each sample of these rows (whole samples)."""
    rate = rows["phy_rate_mbps"].to_numpy(dtype=float)
    rate = np.where(rows["link_up"].to_numpy(dtype=bool), rate, 0.0)
    if "path" in rows and "subflow" in rows:
        # An MPTCP connection has one row per subflow per sample (and its own row, with no
        # path): its capacity is the sum of its paths' rates at each sample, each path once
        # (two address-mesh subflows may share one). Averaging the rows instead gave the mean
        # path's rate, and utilizations above 1.
        per = pd.DataFrame({"t": rows["t_s"].to_numpy(dtype=float), "path": rows["path"].astype(object),
                            "rate": rate})
        per = per[per["path"].notna()].drop_duplicates(["t", "path"])
        rate = per.groupby("t", sort=True)["rate"].sum(min_count=1).to_numpy(dtype=float)
    if backbone is not None:
        rate = np.minimum(rate, backbone)
    return rate


def flow_timeline_stats(batches: Batches, names: list[str], config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """name -> {"rows": the flow's timeline rows, "srtt": (n, mean, p95) of its finite srtt
    samples (None without any), "capacity": np.nanmean of its bottleneck rate per sample (None
    when no sample has one)}."""
    bb = config.get("backbone") or {}
    backbone = float(bb["rate_mbps"]) if bb.get("enabled", True) and bb.get("rate_mbps") else None
    rows = dict.fromkeys(names, 0)
    n_rtt = dict.fromkeys(names, 0)
    n_cap = dict.fromkeys(names, 0)
    counted_cap = dict.fromkeys(names, 0)  # samples np.nanmean counts: not NaN
    finite_cap = dict.fromkeys(names, False)  # any finite one (else no capacity)
    has_srtt = has_cap = True
    # Pass 1: counts.
    for b in whole_samples(batches):
        has_srtt = "srtt_ms" in b
        has_cap = "phy_rate_mbps" in b and "link_up" in b
        for name in names:
            fr = _flow_rows(b, name)
            rows[name] += len(fr)
            if has_srtt:
                n_rtt[name] += len(_srtt(fr))
            if has_cap and len(fr):
                cap = _capacity(fr, backbone)
                n_cap[name] += len(cap)
                counted_cap[name] += int((~np.isnan(cap)).sum())
                finite_cap[name] = finite_cap[name] or bool(np.isfinite(cap).any())
    # Pass 2: the sums, in numpy's order.
    srtt_sum = {n: PairwiseSum(n_rtt[n]) for n in names}
    cap_sum = {n: PairwiseSum(n_cap[n]) for n in names}
    if any(n_rtt.values()) or any(finite_cap.values()):
        for b in whole_samples(batches):
            for name in names:
                fr = _flow_rows(b, name)
                if not len(fr):
                    continue
                if has_srtt:
                    srtt_sum[name].push(_srtt(fr))
                if has_cap:
                    cap = _capacity(fr, backbone)
                    cap_sum[name].push(np.where(np.isnan(cap), 0.0, cap))  # np.nanmean's sum
    # Passes 3-6: the 95th percentile's two ranks.
    want = [n for n in names if n_rtt[n]]
    ranks = [percentile_ranks(n_rtt[n], 95) for n in want]

    def srtt_batches() -> Iterator[list[Any]]:
        for b in batches():
            yield [_srtt(_flow_rows(b, n)) for n in want]

    picked = order_statistics(srtt_batches, ranks) if want else []
    p95 = {n: percentile(n_rtt[n], 95, lo, hi) for n, (lo, hi) in zip(want, picked)}
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        srtt = (n_rtt[name], srtt_sum[name].total() / n_rtt[name], p95[name]) if n_rtt[name] else None
        capacity = cap_sum[name].total() / counted_cap[name] if finite_cap[name] else None
        out[name] = {"rows": rows[name], "srtt": srtt, "capacity": capacity}
    return out
