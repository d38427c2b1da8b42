"""numpy's mean and 95th percentile of a series read in batches, bit for bit, in bounded memory.

A day-long run's timeline does not fit in memory (issue 26), but its summary must keep the
numbers an in-memory run gives, to the last bit (the determinism guarantee, docs/outputs.md):

- ``PairwiseSum(n)``: numpy's ``np.sum`` of ``n`` float64 values, fed in pieces. numpy adds a
  contiguous array by pairwise summation (numpy/_core/src/umath/loops_utils.h.src,
  ``pairwise_sum``): blocks of at most 128 values are added with 8 running partial sums, longer
  runs are split in two at ``n/2`` rounded down to a multiple of 8 and the halves' sums added. The
  tree depends only on ``n``, so knowing ``n`` in advance (a first pass counts it) the same
  additions can be made as the values stream by, holding at most one block of 128.
- ``order_statistics``: the values of given ranks in the sorted series by radix selection on
  the float64 bit patterns, 16 bits per pass over the data (4 passes), each pass holding one
  65536-bin histogram per wanted rank; ``percentile`` then interpolates as ``np.percentile``'s
  default ("linear") method does (numpy/lib/_function_base_impl.py, ``_quantile``, ``_lerp``).

tests/test_streamstats.py checks both against numpy on random data of many lengths.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .lazy import numpy as np  # on first use (start-up time): lazy.py

_BLOCK = 128  # numpy's PW_BLOCKSIZE


def _leaf(values: list[float]) -> float:
    """numpy's pairwise_sum on at most 128 values (Python floats add as C doubles do)."""
    n = len(values)
    if n < 8:
        res = -0.0  # numpy starts the short loop from -0.0 (so a sum of -0.0s stays -0.0)
        for x in values:
            res += x
        return res
    r = values[:8]
    m = n - n % 8
    for i in range(8, m, 8):
        for j in range(8):
            r[j] += values[i + j]
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for i in range(m, n):
        res += values[i]
    return res


def _tree(n: int) -> Any:
    """A coroutine: asks for its leaves' values (yields a count, is sent that many floats) and
    returns the sum in numpy's order."""
    if n <= _BLOCK:
        values = yield n
        return _leaf(values)
    n2 = n // 2
    n2 -= n2 % 8
    left = yield from _tree(n2)
    right = yield from _tree(n - n2)
    return left + right


class PairwiseSum:
    """``np.sum`` of exactly ``n`` float64 values pushed in order, in pieces of any size."""

    def __init__(self, n: int) -> None:
        self.n = int(n)
        self._pending: list[float] = []
        self._seen = 0
        self._result: float | None = 0.0 if self.n == 0 else None
        if self.n:
            self._tree = _tree(self.n)
            self._need = next(self._tree)

    def push(self, values: Any) -> None:
        vals = np.asarray(values, dtype=np.float64).ravel()
        if not vals.size:
            return
        self._seen += vals.size
        if self._seen > self.n:
            raise ValueError(f"PairwiseSum: more than the {self.n} values announced")
        self._pending.extend(vals.tolist())
        at = 0  # (the values before `at` were summed: sliced off once, not per block)
        while self._result is None and len(self._pending) - at >= self._need:
            block = self._pending[at:at + self._need]
            at += self._need
            try:
                self._need = self._tree.send(block)
            except StopIteration as done:
                # A reduction starts from add's identity, 0.0: np.sum of -0.0s is 0.0.
                self._result = 0.0 + float(done.value)
        del self._pending[:at]

    def total(self) -> float:
        if self._result is None:
            raise ValueError(f"PairwiseSum: {self._seen} of the {self.n} values announced were pushed")
        return self._result


def _keys(values: Any) -> Any:
    """float64 -> uint64 keys in the same order (negative numbers: all bits flipped)."""
    bits = np.asarray(values, dtype=np.float64).view(np.uint64)
    neg = (bits >> np.uint64(63)).astype(bool)
    return np.where(neg, ~bits, bits | np.uint64(1 << 63))


def _from_key(key: int) -> float:
    k = np.uint64(key)
    bits = (k & ~np.uint64(1 << 63)) if (k >> np.uint64(63)) else ~k
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def order_statistics(series: Callable[[], Iterable[Sequence[Any]]], ranks: Sequence[Sequence[int]]) -> list[list[float]]:
    """For each of several series, the values at the given 0-based ranks of its sorted values.

    ``series()`` starts a new pass over the data: an iterable of batches, each a sequence with
    one array per series (that series' values in the batch; no NaN). ``ranks[s]`` are the ranks
    wanted of series ``s`` (each below its length). Four passes of 16 bits each; memory: one
    65536-bin histogram per wanted rank."""
    targets = [(s, int(r)) for s, rs in enumerate(ranks) for r in rs]
    prefix = [0] * len(targets)  # key bits fixed so far (high bits)
    left = [r for _, r in targets]  # rank within the keys that share the prefix
    for level in range(4):
        shift = np.uint64(48 - 16 * level)
        hists = [np.zeros(1 << 16, dtype=np.int64) for _ in targets]
        for batch in series():
            keys = [_keys(v) for v in batch]
            for i, (s, _) in enumerate(targets):
                k = keys[s]
                if level:
                    k = k[(k >> (shift + np.uint64(16))) == np.uint64(prefix[i])]
                if k.size:
                    hists[i] += np.bincount(((k >> shift) & np.uint64(0xFFFF)).astype(np.int64), minlength=1 << 16)
        for i in range(len(targets)):
            cum = np.cumsum(hists[i])
            digit = int(np.searchsorted(cum, left[i], side="right"))
            left[i] -= int(cum[digit - 1]) if digit else 0
            prefix[i] = (prefix[i] << 16) | digit
    values = [_from_key(p) for p in prefix]
    out: list[list[float]] = [[] for _ in ranks]
    for (s, _), v in zip(targets, values):
        out[s].append(v)
    return out


def percentile_ranks(n: int, q: float) -> tuple[int, int]:
    """The two ranks ``np.percentile(x, q)`` interpolates between, for ``len(x) == n``."""
    virtual = (n - 1) * np.true_divide(q, 100)
    prev = int(np.floor(virtual))
    if virtual >= n - 1:
        return n - 1, n - 1
    return prev, prev + 1


def percentile(n: int, q: float, below: float, above: float) -> float:
    """``np.percentile(x, q)`` (method "linear") from ``len(x) == n`` and the values at
    percentile_ranks(n, q): numpy's own index, weight and interpolation formula."""
    quantile = np.true_divide(q, 100)
    virtual = np.asarray((n - 1) * quantile)
    if virtual >= n - 1:
        return float(above)
    gamma = virtual - np.floor(virtual)
    a, b = np.asarray(below, dtype=np.float64), np.asarray(above, dtype=np.float64)
    diff = b - a
    lerp = np.add(a, diff * gamma)
    if gamma >= 0.5:
        lerp = np.subtract(b, diff * (1 - gamma))
    return float(lerp)
