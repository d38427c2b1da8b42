"""gridseries.GridSeries: a run's throughput series measured a block at a time gives, bit for bit,
what the whole-array functions of mmpath.metrics give on (np.arange(n) * dt, mbps). Blocks of a
few samples put windows, drops, outages and the integral's checkpoints across block boundaries."""

from __future__ import annotations

import numpy as np
import pytest

from mmpath import metrics
from mmpath.gridseries import GridSeries


def _series(seed: int, n: int) -> np.ndarray:
    """A saturated flow with outages (zeros), slow recoveries, dips and noise."""
    rng = np.random.default_rng(seed)
    y = rng.normal(1500.0, 200.0, n).clip(0)
    for _ in range(max(n // 60, 1)):
        a = int(rng.integers(0, n))
        y[a:a + int(rng.integers(1, 40))] = 0.0
        r = a + int(rng.integers(1, 40))
        y[r:r + 30] *= np.linspace(0.05, 1.0, len(y[r:r + 30]))
    y[rng.random(n) < 0.02] *= 0.3
    return y


CASES = [(seed, n, block) for seed, n in [(1, 1), (2, 2), (3, 37), (4, 250), (5, 1201)] for block in (2, 7, 64, 1 << 16)]


def _same(a, b) -> None:
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float):
        assert np.array_equal(np.float64(a).view(np.int64), np.float64(b).view(np.int64)) or (np.isnan(a) and np.isnan(b)), (a, b)
    else:
        assert a == b


@pytest.mark.parametrize("seed,n,block", CASES)
def test_every_measure_is_the_whole_array_ones_bit_for_bit(seed, n, block):
    y = _series(seed, n)
    t = np.arange(n) * 0.1
    g = GridSeries(y, 0.1, block=block)
    _same(g.outages(), metrics.outages(t, y))
    _same(g.throughput_drops(1.0, 0.3), metrics.throughput_drops(t, y, window_s=1.0, depth=0.3))
    spans = metrics.outages(t, y) + [(0.0, 0.35), (n * 0.05, n * 0.05 + 0.3), (n * 0.1, n * 0.1 + 1.0), (-1.0, 0.0)]
    for down, up in spans:
        _same(g.outage_and_recovery(down, up, pre_s=2.0, frac=0.1, bin_s=0.1),
              metrics.outage_and_recovery(t, y, down, up, pre_s=2.0, frac=0.1, bin_s=0.1))
    a = np.linspace(-0.5, n * 0.1 + 0.5, 53)
    _same(list(g.window_mean(a, a + 0.73)), list(metrics.window_mean(t, y, a, a + 0.73)))


def test_the_drops_and_the_integral_cross_block_boundaries():
    """A dip that starts in one block and ends in another, and a recovery whose window straddles
    two: found once, with the whole-array values (blocks of 8 samples)."""
    y = np.full(200, 1000.0)
    y[45:60] = 100.0  # a drop from sample 45 (block 5) to 60 (block 7)
    y[100:103] = 0.0  # an outage; back at full rate at 103
    t = np.arange(200) * 0.1
    g = GridSeries(y, 0.1, block=8)
    drops = g.throughput_drops()
    assert [round(d["start_s"], 6) for d in drops] == [4.5, 10.0]
    _same(drops, metrics.throughput_drops(t, y))
    _same(g.outage_and_recovery(10.0, 10.3), metrics.outage_and_recovery(t, y, 10.0, 10.3))
    assert g.outage_and_recovery(10.0, 10.3)["outage_s"] == pytest.approx(0.3)


def test_missing_samples_count_as_zero_and_an_empty_series_measures_nothing():
    y = np.array([5.0, np.nan, np.inf, 5.0, 0.0, 0.0, 5.0])
    t = np.arange(7) * 0.1
    g = GridSeries(y, 0.1, block=2)
    _same(g.outages(), metrics.outages(t, y))
    empty = GridSeries(np.zeros(0))
    assert empty.outages() == [] and empty.throughput_drops() == []
    r = empty.outage_and_recovery(1.0, 2.0)
    assert np.isnan(r["pre_mbps"]) and np.isnan(r["outage_s"]) and r["recovery_s"] is None
