"""Throughput-series metrics shared by the simulator's summary and the analyzer (mmNetAnalyzer).

Pure numpy functions on a throughput time series: ``t_s`` are sample (bin) start times in seconds,
increasing; ``mbps`` the throughput in each bin (10^6 bit/s). A sample holds its value until the next
sample starts (a step function, as iperf3 / intervals.csv bins are); the last sample lasts the median
sample spacing. Means over a time window are therefore *time-weighted* integrals of that step
function, so irregular sampling (ss / iw dumps every ~100 ms with jitter) is handled the same way as
regular 100 ms bins.

Definitions come from the issues and seed papers:

- outage, time to re-saturate, drop depth/length, RTT inflation, utilization: issue 5 (the seed 003
  CC study: "slow Cubic recovery after blockage", latency under load vs base RTT);
- Ben(mode): seed 000 (Nguyen et al. 2019) eq. 2, written for 11ad + 11n as eq. 3;
- normalized throughput: seed 000 eq. 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .lazy import numpy as np  # on first use (start-up time): lazy.py

__all__ = [
    "outages",
    "resaturation_time",
    "outage_and_recovery",
    "link_outages",
    "throughput_drops",
    "rtt_inflation",
    "rtt_inflation_of",
    "utilization",
    "ben",
    "normalized_throughput",
    "window_mean",
]


# --------------------------------------------------------------------------- helpers


def _series(t_s, mbps) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t_s, dtype=float).ravel()
    y = np.asarray(mbps, dtype=float).ravel()
    if t.shape != y.shape:
        raise ValueError(f"t_s and mbps differ in length ({t.size} vs {y.size})")
    if t.size and np.any(np.diff(t) <= 0):
        raise ValueError("t_s must be strictly increasing")
    # A missing sample (NaN) carries no bytes: treat it as 0 Mbit/s rather than poisoning means.
    y = np.where(np.isfinite(y), y, 0.0)
    return t, y


def _edges(t: np.ndarray) -> np.ndarray:
    """Bin edges: each sample runs to the next one; the last lasts the median spacing."""
    if t.size == 0:
        return t
    dt = float(np.median(np.diff(t))) if t.size > 1 else 0.1
    return np.append(t, t[-1] + dt)


def _cumulative(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges and the integral of the step function at each edge (Mbit)."""
    e = _edges(t)
    c = np.concatenate([[0.0], np.cumsum(y * np.diff(e))])
    return e, c


_WINDOW_BLOCK = 1 << 16  # windows window_mean computes at once


def window_mean(t_s, mbps, start_s, end_s) -> np.ndarray:
    """Time-weighted mean throughput of the step function over [start_s, end_s) (vectorised).

    Windows reaching outside the series count the outside as not measured: the mean is taken over
    the part of the window that overlaps the series (NaN when none does).
    """
    t, y = _series(t_s, mbps)
    a_all = np.atleast_1d(np.asarray(start_s, dtype=float))
    b_all = np.atleast_1d(np.asarray(end_s, dtype=float))
    if t.size == 0:
        return np.full(np.broadcast(a_all, b_all).shape, np.nan)
    a_all, b_all = np.broadcast_arrays(a_all, b_all)
    e, c = _cumulative(t, y)
    out = np.empty(a_all.shape)
    flat_a, flat_b, flat_out = a_all.reshape(-1), b_all.reshape(-1), out.reshape(-1)
    # The windows a block at a time (each value is computed on its own, so the blocks change no
    # bit): a day of 100 ms bins would otherwise hold a dozen temporaries of 864,000 values.
    for i in range(0, flat_a.size, _WINDOW_BLOCK):
        a = np.clip(flat_a[i:i + _WINDOW_BLOCK], e[0], e[-1])
        b = np.clip(flat_b[i:i + _WINDOW_BLOCK], e[0], e[-1])
        # The integral is piecewise linear in time, so linear interpolation is exact.
        ia = np.interp(a, e, c)
        ib = np.interp(b, e, c)
        span = b - a
        with np.errstate(invalid="ignore", divide="ignore"):
            flat_out[i:i + _WINDOW_BLOCK] = np.where(span > 0, (ib - ia) / np.where(span > 0, span, 1.0), np.nan)
    return out


# --------------------------------------------------------------------------- outages


def outages(t_s, mbps, *, floor_mbps: float = 1.0, min_s: float = 0.1) -> list[tuple[float, float]]:
    """Intervals ``(start_s, end_s)`` during which throughput stays below ``floor_mbps``.

    An outage starts at the start of the first bin below the floor and ends at the start of the
    next bin at or above it (the end of the series if none). Runs shorter than ``min_s`` are
    dropped (a single slow 10 ms sample is not an outage). ``min_s`` is compared with a small
    tolerance so that one 100 ms bin counts as 0.1 s despite float rounding.
    """
    t, y = _series(t_s, mbps)
    if t.size == 0:
        return []
    e = _edges(t)
    low = y < floor_mbps
    out: list[tuple[float, float]] = []
    # Run boundaries of the boolean mask.
    d = np.diff(np.concatenate([[False], low, [False]]).astype(np.int8))
    starts = np.flatnonzero(d == 1)
    ends = np.flatnonzero(d == -1)
    for i, j in zip(starts, ends):
        s, f = float(e[i]), float(e[j])
        if f - s >= min_s - 1e-9:
            out.append((s, f))
    return out


# --------------------------------------------------------------------------- re-saturation


def resaturation_time(
    t_s,
    mbps,
    restored_s: float,
    *,
    pre_start_s: float | None = None,
    pre_end_s: float | None = None,
    frac: float = 0.9,
    window_s: float = 1.0,
) -> float | None:
    """Seconds from link restoration until throughput is re-saturated (issue 5), or None if never.

    Definition (issue 5): "from link restoration until the 1 s mean throughput is back to 90 % of
    its pre-outage mean". Precisely: with ``pre`` = the time-weighted mean over
    ``[pre_start_s, pre_end_s)``, the result is ``T - restored_s`` for the earliest sample start
    ``T >= restored_s`` such that the mean over ``[T, T + window_s)`` is at least ``frac * pre``.
    The window looks *forward*, so a flow that is back at full rate the moment the link returns
    scores 0 (not ``window_s``). A window must lie wholly inside the series; None when no window
    qualifies (never recovered before the series ended) or ``pre`` is not positive.

    Defaults: ``pre_end_s`` is the start of the last outage (see :func:`outages`, floor 1 Mbit/s)
    that begins before ``restored_s``, or ``restored_s`` if there is none; ``pre_start_s`` is
    ``pre_end_s - 2 * window_s`` (clipped to the series start), long enough to average out Cubic's
    sawtooth but short enough to skip the initial slow start in typical 10-60 s runs.
    """
    t, y = _series(t_s, mbps)
    if t.size == 0:
        return None
    if pre_end_s is None:
        before = [s for s, _ in outages(t, y) if s < restored_s]
        pre_end_s = before[-1] if before else float(restored_s)
    if pre_start_s is None:
        pre_start_s = max(float(t[0]), pre_end_s - 2.0 * window_s)
    pre = float(window_mean(t, y, pre_start_s, pre_end_s)[0])
    if not np.isfinite(pre) or pre <= 0:
        return None
    e = _edges(t)
    cand = t[(t >= restored_s - 1e-12) & (t + window_s <= e[-1] + 1e-9)]
    if cand.size == 0:
        return None
    m = window_mean(t, y, cand, cand + window_s)
    ok = np.flatnonzero(m >= frac * pre - 1e-9)
    if ok.size == 0:
        return None
    return max(0.0, float(cand[ok[0]] - restored_s))


def outage_and_recovery(t_s, mbps, down_s: float, up_s: float, *, pre_s: float = 2.0, frac: float = 0.1,
                        bin_s: float = 0.1) -> dict[str, float | None]:
    """A link outage as `mmpath reproduce x-kernel` and `mmpath emu run --compare` measure it,
    on bins of `bin_s`: ``pre_mbps`` = the mean over the `pre_s` before `down_s`; ``outage_s`` =
    the time from `down_s` on with throughput under `frac` x that mean (NaN without a pre-outage
    mean); ``recovery_s`` = :func:`resaturation_time` from `up_s` (None: not within the series)."""
    t, y = _series(t_s, mbps)
    sel = (t >= down_s - pre_s) & (t < down_s)
    pre = float(y[sel].mean()) if sel.any() else float("nan")
    outage = float(np.sum((t >= down_s) & (y < frac * pre)) * bin_s) if np.isfinite(pre) else float("nan")
    rec = resaturation_time(t, y, up_s, pre_start_s=down_s - pre_s, pre_end_s=down_s)
    return {"pre_mbps": pre, "outage_s": outage, "recovery_s": None if rec is None else float(rec)}


def link_outages(t_s, path, kind, value, paths, *, wired=(), end_s: float = float("inf")) -> list[tuple[float, float]]:
    """The spans ``(down_s, up_s)`` during which one of `paths` is out, from a run's link events
    (Result.events' columns t_s, path, kind, value): a path is out from a ``down`` to its next
    ``up`` and, on the `wired` ones, from a ``rate`` step to 0 to the next step above 0 (a stall
    carries nothing either: docs/scenario.md). Spans of several paths that overlap or touch merge
    into one, which ends when the last of them is back (the link's return, from which
    :func:`outage_and_recovery` counts the recovery); a path still out at the end runs to
    `end_s`. A down and an up at the same instant are no outage. Sorted by start.

    This is where every outage mmpath reports starts and ends: the run's summary metrics (and
    so the `resat s` column of `mmpath run`), `mmpath emu run --compare` and `mmpath reproduce`.
    """
    t = np.asarray(t_s, dtype=float).ravel()
    p = np.asarray(path, dtype=object).astype(str).ravel()
    k = np.asarray(kind, dtype=object).astype(str).ravel()
    v = np.asarray(value, dtype=float).ravel()
    order = np.argsort(t, kind="stable")
    wired = {str(w) for w in wired}
    spans: list[tuple[float, float]] = []
    for name in sorted({str(x) for x in paths}):
        down = stalled = False
        since = 0.0
        for i in order[p[order] == name]:
            was = down or stalled
            if k[i] == "down":
                down = True
            elif k[i] == "up":
                down = False
            elif k[i] == "rate" and name in wired and v[i] >= 0:
                stalled = v[i] == 0
            now = down or stalled
            if now and not was:
                since = float(t[i])
            elif was and not now and t[i] > since:
                spans.append((since, float(t[i])))
        if down or stalled:
            spans.append((since, float(end_s)))
    merged: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


# --------------------------------------------------------------------------- drops


def throughput_drops(t_s, mbps, *, window_s: float = 1.0, depth: float = 0.3) -> list[dict]:
    """Drops of throughput below its running level (issue 5: "depth and length of drops").

    The running level at a sample is the time-weighted mean over the ``window_s`` before it. A drop
    starts at the first sample below ``(1 - depth) * level`` and the level is frozen there; it ends
    at the start of the first later sample back at or above that threshold (or the series end).
    Each drop is a dict: ``start_s``, ``end_s``, ``length_s``, ``level_mbps`` (the frozen level),
    ``min_mbps`` (lowest sample in the drop) and ``depth`` = ``1 - min_mbps / level_mbps`` (0-1,
    1 = throughput fell to zero). No level exists before ``window_s`` of history.
    """
    t, y = _series(t_s, mbps)
    if t.size == 0:
        return []
    e = _edges(t)
    level = window_mean(t, y, t - window_s, t)
    has_history = t - window_s >= t[0] - 1e-9
    drops: list[dict] = []
    i, n = 0, t.size
    while i < n:
        lv = level[i]
        if has_history[i] and np.isfinite(lv) and lv > 0 and y[i] < (1.0 - depth) * lv:
            thr = (1.0 - depth) * lv
            j = i
            while j < n and y[j] < thr:
                j += 1
            mn = float(y[i:j].min())
            drops.append({
                "start_s": float(t[i]),
                "end_s": float(e[j]),
                "length_s": float(e[j] - t[i]),
                "level_mbps": float(lv),
                "min_mbps": mn,
                "depth": float(1.0 - mn / lv),
            })
            i = j
        else:
            i += 1
    return drops


# --------------------------------------------------------------------------- RTT, utilization


def rtt_inflation(rtt_ms, base_rtt_ms: float) -> dict:
    """Latency under load relative to the base (unloaded) RTT (issue 5 / seed 003).

    Returns ``base_ms``, ``mean_ms``, ``p95_ms`` of the RTT samples (NaN ignored), ``mean_ratio`` =
    mean / base and ``p95_ratio`` = p95 / base (1.0 = no inflation), and ``mean_added_ms`` /
    ``p95_added_ms`` = the queueing delay added on top of the base. Values are None when there are
    no samples or the base is not positive.
    """
    r = np.asarray(rtt_ms, dtype=float).ravel()
    r = r[np.isfinite(r)]
    if r.size == 0:
        return rtt_inflation_of(0, None, None, base_rtt_ms)
    return rtt_inflation_of(int(r.size), float(r.mean()), float(np.percentile(r, 95)), base_rtt_ms)


def rtt_inflation_of(samples: int, mean_ms: float | None, p95_ms: float | None, base_rtt_ms: float) -> dict:
    """:func:`rtt_inflation` from the samples' count, mean and 95th percentile (a run's summary
    computes them in passes over its timeline: runstats.py)."""
    base = float(base_rtt_ms)
    res: dict = {"base_ms": base, "samples": int(samples), "mean_ms": None, "p95_ms": None,
                 "mean_ratio": None, "p95_ratio": None, "mean_added_ms": None, "p95_added_ms": None}
    if not samples:
        return res
    mean, p95 = float(mean_ms), float(p95_ms)
    res.update(mean_ms=mean, p95_ms=p95, mean_added_ms=mean - base, p95_added_ms=p95 - base)
    if base > 0:
        res.update(mean_ratio=mean / base, p95_ratio=p95 / base)
    return res


# --------------------------------------------------------------------------- utilization


def utilization(mbps, capacity_mbps) -> float:
    """Fraction of the capacity used: ``sum(mbps) / sum(capacity)`` over the same samples.

    ``capacity_mbps`` is a number (a fixed link rate) or a series aligned with ``mbps`` (a
    time-varying PHY/MAC rate), in which case idle capacity during e.g. a low-MCS period counts
    with its own weight. NaN throughput samples count as 0; NaN when capacity sums to 0.
    """
    y = np.asarray(mbps, dtype=float).ravel()
    y = np.where(np.isfinite(y), y, 0.0)
    cap = np.broadcast_to(np.asarray(capacity_mbps, dtype=float), y.shape)
    total = float(np.nansum(cap))
    return float(y.sum() / total) if total > 0 else float("nan")


# --------------------------------------------------------------------------- seed 000


def ben(mptcp_mbps: float, single_path_mbps: Mapping[str, float] | Sequence[float]) -> float:
    """Aggregation benefit Ben(mode) of seed 000 (Nguyen et al. 2019), eq. 2 (eq. 3 for 11ad + 11n).

    With ``L_i`` the single-path (TCP) throughputs of the links, ``L_max`` the highest and ``T`` the
    MPTCP throughput in the mode under test::

        Ben = (T - L_max) / (sum(L_i) - L_max)   if T >= L_max
        Ben = (T - L_max) / L_max                if T <  L_max

    So Ben is in [-1, 1] for T in [0, sum L_i]: 1 = perfect aggregation, 0 = as good as the best
    single path, -1 = nothing delivered. The paper takes L_i as the best single-path TCP runs
    (1316 Mbit/s for 11ad, 46.16 Mbit/s for 11n). Needs at least two links with positive capacity.
    """
    vals = list(single_path_mbps.values()) if isinstance(single_path_mbps, Mapping) else list(single_path_mbps)
    caps = np.asarray(vals, dtype=float)
    if caps.size < 2 or not np.all(np.isfinite(caps)) or np.any(caps < 0):
        raise ValueError("Ben(mode) needs single-path throughputs (Mbit/s, >= 0) of at least two links")
    lmax = float(caps.max())
    rest = float(caps.sum()) - lmax
    if lmax <= 0:
        raise ValueError("Ben(mode) needs a link with a positive single-path throughput")
    T = float(mptcp_mbps)
    if T >= lmax:
        # Other links all zero: nothing to aggregate; T can only equal L_max (benefit 0).
        return (T - lmax) / rest if rest > 0 else 0.0
    return (T - lmax) / lmax


def normalized_throughput(measured_mbps, expected_mbps):
    """Seed 000 eq. 1: ``Th_normalized = Th_measured / Th_expected``.

    The paper takes ``Th_expected`` as the maximum throughput measured at the same MCS without
    interference. Works on numbers or arrays; NaN where the expected value is not positive.
    """
    m = np.asarray(measured_mbps, dtype=float)
    x = np.asarray(expected_mbps, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(x > 0, m / np.where(x > 0, x, 1.0), np.nan)
    return float(r) if r.ndim == 0 else r
