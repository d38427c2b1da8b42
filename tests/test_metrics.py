"""Unit tests of mmpath.metrics on hand-made series with known answers."""

import math

import numpy as np
import pytest

from mmpath import metrics as M


def _blockage(pre=1000.0, down=(5.0, 6.0), ramp_s=0.0, dur=12.0, dt=0.1):
    """1000 Mbit/s, zero during `down`, then a linear ramp back over ramp_s seconds."""
    t = np.round(np.arange(0.0, dur, dt), 10)
    y = np.full(t.size, pre)
    y[(t >= down[0]) & (t < down[1])] = 0.0
    if ramp_s > 0:
        r = (t >= down[1]) & (t < down[1] + ramp_s)
        y[r] = pre * (t[r] - down[1]) / ramp_s
    return t, y


def test_outages_finds_the_blockage():
    t, y = _blockage()
    assert M.outages(t, y) == [pytest.approx((5.0, 6.0))]


def test_outages_min_length_and_floor():
    t = np.arange(0, 2.0, 0.01)
    y = np.full(t.size, 100.0)
    y[50] = 0.0  # one 10 ms sample: not an outage at min_s = 0.1
    y[100:120] = 0.5  # 200 ms below 1 Mbit/s
    assert M.outages(t, y) == [pytest.approx((1.0, 1.2))]
    assert M.outages(t, y, floor_mbps=0.1) == []
    assert len(M.outages(t, y, min_s=0.01)) == 2


def test_outage_until_end_and_empty():
    assert M.outages([0, 1, 2], [5, 0, 0]) == [(1.0, 3.0)]
    assert M.outages([], []) == []


def test_resaturation_immediate_is_zero():
    t, y = _blockage()
    assert M.resaturation_time(t, y, restored_s=6.0) == pytest.approx(0.0)


def test_resaturation_linear_ramp():
    # Ramp 0 -> 1000 over 4 s after 6 s. The mean over [T, T+1) of a linear ramp (until it
    # saturates) is 1000 * (T - 6 + 0.5) / 4 >= 900  <=>  T - 6 >= 3.1 (on the 0.1 s grid the
    # bin values are the ramp at bin start, so the mean is 1000*(T-6+0.45)/4 -> T-6 = 3.15 -> 3.2).
    t, y = _blockage(ramp_s=4.0)
    r = M.resaturation_time(t, y, restored_s=6.0)
    assert r == pytest.approx(3.2, abs=1e-6)


def test_resaturation_never_and_explicit_pre_window():
    t, y = _blockage(ramp_s=100.0)
    assert M.resaturation_time(t, y, restored_s=6.0) is None
    t, y = _blockage()
    y[t < 2.0] = 100.0  # slow start: an explicit pre window must avoid it
    assert M.resaturation_time(t, y, 6.0, pre_start_s=3.0, pre_end_s=5.0) == pytest.approx(0.0)


def test_throughput_drops_depth_and_length():
    t = np.round(np.arange(0, 5.0, 0.1), 10)
    y = np.full(t.size, 500.0)
    y[(t >= 2.0) & (t < 2.5)] = 100.0  # drop to 20 % for 0.5 s
    y[(t >= 3.5) & (t < 3.6)] = 400.0  # -20 %: below the 30 % depth, ignored
    d = M.throughput_drops(t, y)
    assert len(d) == 1
    assert d[0]["start_s"] == pytest.approx(2.0)
    assert d[0]["length_s"] == pytest.approx(0.5)
    assert d[0]["depth"] == pytest.approx(0.8)
    assert d[0]["level_mbps"] == pytest.approx(500.0)


def test_rtt_inflation():
    r = M.rtt_inflation([10, 20, 30, np.nan], base_rtt_ms=10)
    assert r["mean_ms"] == pytest.approx(20)
    assert r["mean_ratio"] == pytest.approx(2.0)
    assert r["mean_added_ms"] == pytest.approx(10)
    assert r["p95_ms"] == pytest.approx(29.0)
    assert M.rtt_inflation([], 5)["mean_ms"] is None


def test_utilization():
    assert M.utilization([50, 100], 100) == pytest.approx(0.75)
    assert M.utilization([50, 100], [100, 200]) == pytest.approx(0.5)
    assert math.isnan(M.utilization([1], 0))


def test_ben_paper_values():
    # Seed 000: L_11ad = 1316, L_11n = 46.16 Mbit/s (eq. 3).
    caps = {"11ad": 1316.0, "11n": 46.16}
    assert M.ben(1316.0 + 46.16, caps) == pytest.approx(1.0)
    assert M.ben(1316.0, caps) == pytest.approx(0.0)
    assert M.ben(0.0, caps) == pytest.approx(-1.0)
    assert M.ben(658.0, caps) == pytest.approx(-0.5)
    assert M.ben(1316.0 + 23.08, caps) == pytest.approx(0.5)
    assert M.ben(1000, [1316.0, 46.16]) == pytest.approx((1000 - 1316) / 1316)
    with pytest.raises(ValueError):
        M.ben(10, {"a": 10})


def test_normalized_throughput():
    assert M.normalized_throughput(900, 1000) == pytest.approx(0.9)
    np.testing.assert_allclose(M.normalized_throughput([1, 2], [2, 0]), [0.5, np.nan])


def test_window_mean_irregular():
    # Step function 10 on [0,1), 30 on [1,3) (last sample lasts the median spacing, 1.0 here... ).
    m = M.window_mean([0, 1, 2], [10, 30, 30], 0.5, 1.5)
    assert m[0] == pytest.approx(20.0)


def test_outage_and_recovery_as_x_kernel_measures_it():
    import numpy as np

    from mmpath.metrics import outage_and_recovery

    t = np.arange(60) * 0.1
    y = np.full(60, 100.0)
    y[20:25] = 0.0
    m = outage_and_recovery(t, y, 2.0, 2.5)
    assert m["pre_mbps"] == 100.0 and abs(m["outage_s"] - 0.5) < 1e-9 and m["recovery_s"] == 0.0
    m = outage_and_recovery(t, y, 0.0, 0.5)  # nothing before: no pre-outage mean
    assert np.isnan(m["pre_mbps"]) and np.isnan(m["outage_s"])


def test_link_outages_merge_paths_and_end_at_the_last_return():
    # 11ad down 4.0..6.5; 11ac down 5.0..5.2 inside it: one outage, until 6.5. A wired path's
    # rate 0 is out until its next rate above 0; a path never back runs to end_s.
    ev = {"t_s": [4.0, 5.0, 5.2, 6.5, 8.0, 8.5, 9.0], "path": ["ad", "ac", "ac", "ad", "w", "w", "x"],
          "kind": ["down", "down", "up", "up", "rate", "rate", "down"], "value": [np.nan, np.nan, np.nan, np.nan, 0.0, 50.0, np.nan]}
    out = M.link_outages(ev["t_s"], ev["path"], ev["kind"], ev["value"], ["ad", "ac"])
    assert out == [(4.0, 6.5)]
    out = M.link_outages(ev["t_s"], ev["path"], ev["kind"], ev["value"], ["ad", "w", "x"], wired={"w"}, end_s=10.0)
    assert out == [(4.0, 6.5), (8.0, 8.5), (9.0, 10.0)]
    assert M.link_outages(ev["t_s"], ev["path"], ev["kind"], ev["value"], ["w"]) == []  # not wired: rates are MCS


def _mptcp_run(t, conn, sub_a, sub_b):
    """A run's intervals (an MPTCP connection's row and its two subflows' per 100 ms bin) and
    events (path a down 4.0..6.5), as api.flow_metrics receives them."""
    import pandas as pd

    rows = []
    for i, tt in enumerate(t):
        rows += [{"t_s": tt, "flow": "f", "subflow": -1, "mbps": conn[i]},
                 {"t_s": tt, "flow": "f", "subflow": 0, "mbps": sub_a[i]},
                 {"t_s": tt, "flow": "f", "subflow": 1, "mbps": sub_b[i]}]
    iv = pd.DataFrame(rows)
    ev = pd.DataFrame({"t_s": [4.0, 6.5], "path": ["a", "a"], "kind": ["down", "up"], "value": [np.nan, np.nan]})
    cfg = {"duration_s": 10.0, "path": [{"name": "a", "technology": "11ad"}, {"name": "b", "technology": "11ac"}],
           "flow": [{"name": "f", "kind": "mptcp", "paths": ["a", "b"], "path": "a"}]}
    return iv, ev, cfg


def test_summary_outage_is_the_link_s_and_recovery_counts_from_its_return():
    # Hand-computed: path a carries 700, b 300 Mbit/s; a is down 4.0..6.5 (b alone: 300), back
    # at 350 for 0.3 s after its return, then 700. Pre-outage mean 1000 (2..4 s); the first 1 s
    # window from 6.5 with a mean >= 900: at 6.5 (0.3*650 + 0.7*1000 = 895) no, at 6.6
    # (0.2*650 + 0.8*1000 = 930) yes: recovery 0.1 s. The connection never fell under 10 % of
    # 1000: outage 0. One outage, not one per 10 ms sample, and the connection's own rows only.
    import pandas as pd

    from mmpath.api import flow_metrics

    t = np.round(np.arange(100) * 0.1, 10)
    a = np.where(t < 4.0, 700.0, np.where(t < 6.5, 0.0, np.where(t < 6.8, 350.0, 700.0)))
    b = np.full(t.size, 300.0)
    iv, ev, cfg = _mptcp_run(t, a + b, a, b)
    m = flow_metrics({"name": "f", "kind": "mptcp"}, 0, iv, pd.DataFrame(), cfg, ev)
    assert len(m["outages"]) == 1
    o = m["outages"][0]
    assert (o["start_s"], o["restored_s"]) == (4.0, 6.5)
    assert o["resaturation_s"] == pytest.approx(0.1) and o["outage_s"] == 0.0
    # The same series as `mmpath emu run --compare` measures it.
    from mmpath.emu.compare import _down_up, _outage_recovery

    down, up = _down_up(ev, {"a", "b"})
    assert (down, up) == (4.0, 6.5)
    assert _outage_recovery(t, a + b, down, up, 10.0) == {"outage_s": 0.0, "recovery_s": pytest.approx(0.1)}


@pytest.mark.parametrize("variant", ["tcp-11ad", "musher"])
def test_demo_table_resat_is_emu_compare_s_recovery_on_the_same_series(variant):
    # The default demo's `resat s` (summary metrics -> compare table) against `mmpath emu run
    # --compare`'s recovery on the simulated series: one measure, the same number. MuSher is back
    # at once (its plot's story); it used to read 2.4 s (250 zero-length outages, counted from
    # the first).
    from mmpath.api import simulate
    from mmpath.compare import _row
    from mmpath.scenario import one_variant
    from mmpath.emu.compare import _down_up, _flow_series_sim, _outage_recovery

    sc = one_variant("default", ["duration_s=9"], variant=variant)
    res = simulate(sc)
    assert len(res.summary["flows"][0]["metrics"]["outages"]) == 1
    f = sc.config["flow"][0]
    down, up = _down_up(res.events, set(f.get("paths") or [f["path"]]))
    ts, ys = _flow_series_sim(res, "download")
    emu = _outage_recovery(ts, ys, down, up, 9.0)
    assert _row(variant, res)["resaturation_s"] == pytest.approx(emu["recovery_s"], abs=1e-9)
    if variant == "musher":
        assert emu["recovery_s"] <= 0.1
    else:
        assert emu["recovery_s"] >= 0.5


def test_analyze_on_a_run_folder_measures_the_run_s_outage(tmp_path):
    # `mmpath analyze` on a run folder takes the outage from the run's link events, as the run's
    # summary does: the same start, end and recovery (it used the throughput's 100 ms dip instead,
    # and counted MuSher's recovery from its end: 2.1 s).
    import mmpath
    from mmpath.api import simulate
    from mmpath.scenario import one_variant

    res = simulate(one_variant("default", ["duration_s=9"], variant="musher"))
    res.save(tmp_path / "musher")
    a = mmpath.analyze([str(tmp_path / "musher")])
    conn = next(f for f in a.summary["flows"] if f["name"] == "download")
    run = res.summary["flows"][0]["metrics"]["outages"]
    assert [(o["start_s"], o["end_s"]) for o in conn["outages"]] == [(o["start_s"], o["restored_s"]) for o in run]
    assert conn["outages"][0]["resaturation_s"] == pytest.approx(run[0]["resaturation_s"], abs=1e-6)


def test_window_mean_by_blocks_is_the_same(monkeypatch):
    """window_mean computes its windows a block at a time (bounded temporaries on a day-long
    series): the same bits whatever the block size."""
    import mmpath.metrics as M

    rng = np.random.default_rng(3)
    t = np.arange(5000) * 0.1
    y = rng.random(5000) * 100
    a = rng.uniform(-1, 510, size=3001)
    b = a + rng.uniform(0, 2, size=3001)
    whole = M.window_mean(t, y, a, b)
    monkeypatch.setattr(M, "_WINDOW_BLOCK", 7)
    assert M.window_mean(t, y, a, b).tobytes() == whole.tobytes()
    assert M.window_mean(t, y, 3.0, 4.0).shape == (1,)
