"""streamstats: numpy's sum, mean and percentile of data fed in batches, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from mmpath.streamstats import PairwiseSum, order_statistics, percentile, percentile_ranks

SIZES = [1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 1000, 8191, 8192, 8193, 100_003]


def _pieces(a, rng):
    cuts = np.sort(rng.integers(0, len(a) + 1, size=5))
    return np.split(a, cuts)


@pytest.mark.parametrize("n", SIZES)
def test_pairwise_sum_is_numpys_sum(n):
    rng = np.random.default_rng(n)
    a = rng.random(n) * 10 ** rng.uniform(-3, 6, size=n)  # magnitudes that make the order matter
    s = PairwiseSum(n)
    for piece in _pieces(a, rng):
        s.push(piece)
    assert s.total() == np.sum(a)
    assert s.total() / n == a.mean()


def test_pairwise_sum_needs_its_count():
    s = PairwiseSum(3)
    s.push([1.0, 2.0])
    with pytest.raises(ValueError, match="2 of the 3"):
        s.total()
    with pytest.raises(ValueError, match="more than the 3"):
        s.push([1.0, 2.0])
    assert PairwiseSum(0).total() == 0.0


@pytest.mark.parametrize("n", [1, 2, 3, 20, 21, 1000, 4099])
def test_percentile_is_numpys(n):
    rng = np.random.default_rng(n)
    # Repeated values and negatives too; two series at once.
    a = np.round(rng.normal(30, 20, size=n), 1)
    b = rng.random(n + 5) * 1e3
    pieces = list(zip(_pieces(a, rng), _pieces(b, rng)))
    ranks = [percentile_ranks(len(a), 95), percentile_ranks(len(b), 95)]
    got = order_statistics(lambda: pieces, ranks)
    for x, (lo, hi) in zip((a, b), got):
        assert percentile(len(x), 95, lo, hi) == np.percentile(x, 95)
        assert (lo, hi) == tuple(np.sort(x)[list(percentile_ranks(len(x), 95))])
