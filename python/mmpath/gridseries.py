"""A run's throughput series on its regular grid, measured a block of samples at a time.

A run's summary measures each flow's 100 ms series (api.flow_series: sample k starts at
``t = k * dt``) with metrics.outages, metrics.outage_and_recovery and metrics.throughput_drops.
Those take whole arrays and build a dozen temporaries of the series' length (the sample times,
the bin edges, the step function's running integral, masks, window means): for a simulated day,
864 000 samples, about 7 MB each, tens of MB at the peak (bench/README.md "Memory of long runs").

GridSeries gives the same results, bit for bit, holding only the series itself and one block
of samples' worth of temporaries:

- the sample times and bin edges are computed where needed (``np.arange(a, b) * dt`` is, element
  by element, what ``np.arange(n) * dt`` holds);
- the running integral (metrics._cumulative: a sequential ``np.cumsum``) is kept at every block's
  first edge, so any stretch of it is recomputed exactly from the nearest checkpoint (cumsum adds
  left to right: seeding a block with the integral before it gives the same sums);
- window means interpolate on a stretch of edges around the windows (np.interp uses only the two
  edges around each point);
- the last edge lasts the median sample spacing, found from the spacings' counts (the grid has a
  handful of distinct spacings) as numpy's median takes it.

tests/test_gridseries.py checks every result against the whole-array functions, with blocks of a
few samples so that every boundary case is crossed.
"""

from __future__ import annotations

from typing import Any

from .lazy import numpy as np  # on first use (start-up time): lazy.py

BLOCK = 1 << 14  # samples per block (~10 temporaries of this length at a time: ~1.3 MB)


class GridSeries:
    """Throughput `mbps[k]` (Mbit/s) over the bin starting at ``k * dt`` s (a run's flow series)."""

    def __init__(self, mbps: Any, dt: float = 0.1, block: int = BLOCK) -> None:
        y = np.asarray(mbps, dtype=float).ravel()
        if not np.all(np.isfinite(y)):  # (metrics._series: a missing sample carries no bytes)
            y = np.where(np.isfinite(y), y, 0.0)
        self.y = y
        self.n = int(y.size)
        self.dt = float(dt)
        self.block = max(int(block), 2)
        self._last_edge = self._find_last_edge() if self.n else 0.0
        # The integral at the first edge of each block (index j * block), and at the last edge.
        self._checkpoints = np.zeros(1)
        if self.n:
            self._fill_checkpoints()

    # ------------------------------------------------------------------ grid, edges, integral

    def t(self, a: int, b: int) -> np.ndarray:
        """Sample start times k * dt for k in [a, b)."""
        return np.arange(a, b) * self.dt

    def t_at(self, k: int) -> float:
        return k * self.dt  # (float(k) * dt: the same product as np.arange(n) * dt's element k)

    def edges(self, a: int, b: int) -> np.ndarray:
        """Bin edges e[a:b] (0 <= a <= b <= n + 1): the sample starts, then the last edge."""
        e = self.t(a, min(b, self.n))
        if b > self.n:
            e = np.append(e, self._last_edge)
        return e

    def edge_at(self, k: int) -> float:
        return self._last_edge if k >= self.n else self.t_at(k)

    def _find_last_edge(self) -> float:
        """metrics._edges: t[-1] + the median spacing (0.1 for a single sample)."""
        n = self.n
        t_last = self.t_at(n - 1)
        if n == 1:
            return t_last + 0.1
        counts: dict[float, int] = {}
        for a in range(0, n - 1, self.block):
            d = np.diff(self.t(a, min(a + self.block + 1, n)))
            vals, cnt = np.unique(d, return_counts=True)
            for v, c in zip(vals.tolist(), cnt.tolist()):
                counts[v] = counts.get(v, 0) + c
        m = n - 1
        order = sorted(counts)

        def kth(k: int) -> float:
            seen = 0
            for v in order:
                seen += counts[v]
                if k < seen:
                    return v
            raise AssertionError("unreachable")

        if m % 2:
            med = float(np.mean(np.array([kth(m // 2)])))
        else:
            med = float(np.mean(np.array([kth(m // 2 - 1), kth(m // 2)])))
        return t_last + med

    def _increments(self, a: int, b: int) -> np.ndarray:
        """y[k] * (e[k + 1] - e[k]) for k in [a, b): what the integral adds over each bin."""
        return self.y[a:b] * np.diff(self.edges(a, b + 1))

    def _fill_checkpoints(self) -> None:
        nb = (self.n + self.block - 1) // self.block
        self._checkpoints = np.zeros(nb + 1)  # (filled in order: block j reads checkpoint j)
        for j in range(nb):
            self._checkpoints[j + 1] = self._cumsum_block(j)[-1]

    def _cumsum_block(self, j: int) -> np.ndarray:
        """The integral at edges j * block + 1 ... of block j (its running sum)."""
        a = j * self.block
        x = self._increments(a, min(a + self.block, self.n))
        if j:
            x[0] = self._checkpoints[j] + x[0]
        return np.cumsum(x)

    def integral(self, a: int, b: int) -> np.ndarray:
        """The integral c[a:b] at edges a..b-1 (c[0] = 0: metrics._cumulative)."""
        out = np.empty(b - a)
        k = a
        while k < b:
            if k == 0:
                out[0] = 0.0
                k = 1
                continue
            j = (k - 1) // self.block  # edge k is the end of increment k - 1, in block j
            block = self._cumsum_block(j)
            first = j * self.block + 1  # the edge block[0] ends at
            take = min(b, first + block.size) - k
            out[k - a:k - a + take] = block[k - first:k - first + take]
            k += take
        return out

    # ------------------------------------------------------------------ searches

    def first_t_at_least(self, x: float, tol: float = 0.0) -> int:
        """The first k with t[k] >= x - tol (n if none), as the whole-array mask finds it."""
        k = int(np.clip(np.floor(x / self.dt) - 2, 0, self.n)) if np.isfinite(x) else (0 if x < 0 else self.n)
        while k > 0 and self.t_at(k - 1) >= x - tol:
            k -= 1
        while k < self.n and not self.t_at(k) >= x - tol:
            k += 1
        return k

    def window_mean(self, a_s: np.ndarray, b_s: np.ndarray) -> np.ndarray:
        """metrics.window_mean over the windows [a_s, b_s) (1-d, nondecreasing in both)."""
        a_s = np.asarray(a_s, dtype=float)
        b_s = np.asarray(b_s, dtype=float)
        if self.n == 0:
            return np.full(a_s.shape, np.nan)
        e0, e_last = 0.0, self._last_edge
        out = np.empty(a_s.shape)
        for i in range(0, a_s.size, self.block):
            a = np.clip(a_s[i:i + self.block], e0, e_last)
            b = np.clip(b_s[i:i + self.block], e0, e_last)
            lo = max(self.first_t_at_least(float(a.min())) - 2, 0)
            hi = min(self.first_t_at_least(float(b.max())) + 3, self.n + 1)
            e = self.edges(lo, hi)
            c = self.integral(lo, hi)
            ia = np.interp(a, e, c)
            ib = np.interp(b, e, c)
            span = b - a
            with np.errstate(invalid="ignore", divide="ignore"):
                out[i:i + self.block] = np.where(span > 0, (ib - ia) / np.where(span > 0, span, 1.0), np.nan)
        return out

    # ------------------------------------------------------------------ metrics

    def outages(self, floor_mbps: float = 1.0, min_s: float = 0.1) -> list[tuple[float, float]]:
        """metrics.outages(t, mbps, floor_mbps=..., min_s=...)."""
        out: list[tuple[float, float]] = []
        start = -1
        for a in range(0, self.n, self.block):
            low = self.y[a:a + self.block] < floor_mbps
            d = np.diff(np.concatenate([[start >= 0], low]).astype(np.int8))
            for k in np.flatnonzero(d):
                k = int(k) + a
                if start < 0:
                    start = k
                else:
                    self._close(out, start, k, min_s)
                    start = -1
        if start >= 0:
            self._close(out, start, self.n, min_s)
        return out

    def _close(self, out: list[tuple[float, float]], i: int, j: int, min_s: float) -> None:
        s, f = self.edge_at(i), self.edge_at(j)
        if f - s >= min_s - 1e-9:
            out.append((s, f))

    def outage_and_recovery(self, down_s: float, up_s: float, *, pre_s: float = 2.0, frac: float = 0.1,
                            bin_s: float = 0.1) -> dict[str, float | None]:
        """metrics.outage_and_recovery(t, mbps, down_s, up_s, ...)."""
        i0 = self.first_t_at_least(down_s - pre_s)
        i1 = self.first_t_at_least(down_s)
        pre = float(self.y[i0:i1].copy().mean()) if i1 > i0 else float("nan")
        if np.isfinite(pre):
            low = 0
            for a in range(i1, self.n, self.block):
                low += int(np.count_nonzero(self.y[a:a + self.block] < frac * pre))
            outage = float(low * bin_s)
        else:
            outage = float("nan")
        rec = self.resaturation_time(up_s, pre_start_s=down_s - pre_s, pre_end_s=down_s)
        return {"pre_mbps": pre, "outage_s": outage, "recovery_s": None if rec is None else float(rec)}

    def resaturation_time(self, restored_s: float, *, pre_start_s: float, pre_end_s: float, frac: float = 0.9,
                          window_s: float = 1.0) -> float | None:
        """metrics.resaturation_time(t, mbps, restored_s, pre_start_s=..., pre_end_s=...)."""
        if self.n == 0:
            return None
        pre = float(self.window_mean(np.array([pre_start_s]), np.array([pre_end_s]))[0])
        if not np.isfinite(pre) or pre <= 0:
            return None
        e_last = self._last_edge
        for a in range(self.first_t_at_least(restored_s, 1e-12), self.n, self.block):
            t = self.t(a, min(a + self.block, self.n))
            cand = t[t + window_s <= e_last + 1e-9]  # (the times before restored_s are behind a)
            if cand.size == 0:
                return None
            m = self.window_mean(cand, cand + window_s)
            ok = np.flatnonzero(m >= frac * pre - 1e-9)
            if ok.size:
                return max(0.0, float(cand[ok[0]] - restored_s))
        return None

    def throughput_drops(self, window_s: float = 1.0, depth: float = 0.3) -> list[dict]:
        """metrics.throughput_drops(t, mbps, window_s=..., depth=...)."""
        drops: list[dict] = []
        y, n = self.y, self.n
        t0 = self.t_at(0) if n else 0.0
        resume = 0
        for a in range(0, n, self.block):
            b = min(a + self.block, n)
            if resume >= b:
                continue
            t = self.t(a, b)
            level = self.window_mean(t - window_s, t)
            has_history = t - window_s >= t0 - 1e-9
            with np.errstate(invalid="ignore"):
                cand = has_history & np.isfinite(level) & (level > 0) & (y[a:b] < (1.0 - depth) * level)
            for k in np.flatnonzero(cand):
                i = int(k) + a
                if i < resume:
                    continue
                lv = float(level[k])
                thr = (1.0 - depth) * lv
                j = self._first_at_or_above(i, thr)
                mn = float(y[i:j].min())
                end = self.edge_at(j)
                start = float(t[k])
                drops.append({"start_s": start, "end_s": end, "length_s": float(end - start),
                              "level_mbps": lv, "min_mbps": mn, "depth": float(1.0 - mn / lv)})
                resume = j
        return drops

    def _first_at_or_above(self, i: int, thr: float) -> int:
        """The first j >= i with y[j] >= thr (n if none)."""
        for a in range(i, self.n, self.block):
            hit = np.flatnonzero(~(self.y[a:a + self.block] < thr))
            if hit.size:
                return a + int(hit[0])
        return self.n
