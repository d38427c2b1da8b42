"""x-pm, the path-manager switchover benchmark (docs/reproduce.md): its cases in the simulator,
its measures and tolerances on made-up bins, and its figure from a made-up runs table. The
kernel's half needs root and real time: tests/test_emu.py runs it in fast mode."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import assert_plots_readable
from mmpath.reproduce import EXPERIMENTS, known_ids
from mmpath.reproduce import xpm
from mmpath.reproduce.registry import Mode
from mmpath.reproduce.runner import ExperimentData


def _bins(**spans) -> np.ndarray:
    """Bytes per 100 ms bin of `edges`: {(from_s, to_s): mbps, ...} given as a dict."""
    t = xpm.edges()[:-1]
    b = np.zeros(len(t))
    for (a, z), mbps in spans["spans"].items():
        b[(t >= a - 1e-9) & (t < z - 1e-9)] = mbps * 1e6 / 8 * xpm.BIN_S
    return b


def test_measures_count_from_the_event_and_the_return():
    primary = _bins(spans={(0.0, 5.0): 90.0, (10.5, 14.0): 90.0, (10.0, 10.5): 20.0})
    backup = _bins(spans={(5.2, 5.4): 10.0, (5.4, 10.6): 50.0})
    m = xpm.measures([primary, backup], [0.05, 0.02], event_s=5.0, back_s=10.0)
    assert m["pre_mbps"] == pytest.approx(90.0)
    assert m[xpm.TAKEOVER] == pytest.approx(0.5)  # the first bin at >= 25 Mbit/s is [5.4, 5.5)
    assert m[xpm.BACK] == pytest.approx(0.6)  # [10.5, 10.6) is the first at >= 45
    assert (m[xpm.FIRST_BACKUP], m[xpm.FIRST_PRIMARY]) == (0.05, 0.02)
    never = xpm.measures([primary, np.zeros_like(backup)], [None, None], 5.0, 10.0)
    assert never[xpm.TAKEOVER] is None and never[xpm.FIRST_BACKUP] is None


def test_tolerances_are_the_criterions():
    assert xpm.agrees(xpm.BACK, 1.0, 1.3)[0], "0.3 s apart: the floor"
    assert not xpm.agrees(xpm.BACK, 1.0, 1.4)[0]
    assert xpm.agrees(xpm.TAKEOVER, 4.0, 4.8)[0], "20 % of 4.8 s is more than 0.3 s"
    assert xpm.agrees(xpm.RECEIVED, 110.0, 100.0)[0] and not xpm.agrees(xpm.RECEIVED, 111.0, 100.0)[0]
    assert not xpm.agrees(xpm.BACK, float("nan"), 1.0)[0]


@pytest.fixture(scope="module")
def simulated():
    """Every case and policy in the simulator (14 s each, ~0.3 s of wall time each)."""
    out = {}
    for p in xpm._points(Mode.make(fast=False)):
        if p.key["engine"] == "simulation":
            m, _ = xpm._measure(xpm._run(p, 1), p, Mode.make(fast=False))
            out[(p.key["case"], p.key["policy"])] = m
    return out


def test_every_case_and_policy_runs_in_the_simulator(simulated):
    assert set(simulated) == {(c, p) for c in xpm.CASES for p in xpm.POLICIES}
    for (case, policy), m in simulated.items():
        # 14 s with outages: wired 100 + 50 Mbit/s; radio ~1.3 Gbit/s 60 GHz + ~150 Mbit/s 5 GHz
        lo, hi = (100, 175) if xpm.CASES[case].setup == "wired" else (900, 2500)
        assert lo < m[xpm.RECEIVED] < hi, (case, policy, m)
        assert all(0 <= m[k] <= xpm.DURATION_S for k in xpm.TIMES), (case, policy, m)


def test_the_radio_policies_act_on_what_the_radio_tells_them(simulated):
    # A 60 GHz link fading below link-aware-backup's leaving signal: its backup carries at once,
    # where the in-kernel path manager waits for the link to go and the transport to notice.
    lab, kern = simulated[("11ad-fade", "link-aware-backup")], simulated[("11ad-fade", "kernel")]
    assert lab[xpm.TAKEOVER] <= 0.2 < 1.0 < kern[xpm.TAKEOVER]
    # A blocked 60 GHz link's return: fast-failback's fresh subflow against the old one's RTO.
    ff, kb = simulated[("11ad-blockage", "fast-failback")], simulated[("11ad-blockage", "kernel")]
    assert ff[xpm.BACK] < kb[xpm.BACK] - 0.5


def test_fast_failback_returns_at_once_where_the_kernels_waits_for_its_backoff(simulated):
    ff, kern = simulated[("cut-drop", "fast-failback")], simulated[("cut-drop", "kernel")]
    assert ff[xpm.BACK] <= xpm.FAILBACK_S and ff[xpm.TAKEOVER] <= xpm.FAILBACK_S
    assert kern[xpm.BACK] > 1.0, "the old subflow's backed-off RTO"
    # A holding outage delivers what the link held at its return: the in-kernel path manager's
    # primary is back within its first bins too.
    assert simulated[("cut-hold", "kernel")][xpm.BACK] < 1.0


def test_a_reset_primary_comes_back_only_with_recreate(simulated):
    """The reset case: the backup takes over at once whatever the policy; only `recreate` opens a
    subflow on the primary again (after its 1 s backoff), the in-kernel path manager never does
    (the time counts as what is left of the run)."""
    case = xpm.CASES["reset"]
    for p in xpm.POLICIES:
        assert simulated[("reset", p)][xpm.TAKEOVER] <= 0.3, p
    assert simulated[("reset", "kernel")][xpm.BACK] == xpm.DURATION_S - case.back_s
    assert 1.0 < simulated[("reset", "recreate")][xpm.BACK] < 1.5
    assert simulated[("reset", "recreate")][xpm.RECEIVED] > simulated[("reset", "kernel")][xpm.RECEIVED] + 20


def test_xpm_figure_is_readable(tmp_path, monkeypatch):
    """x-pm's figure from a made-up runs table (its emulated runs need root and real time)."""
    known_ids()
    exp = EXPERIMENTS["x-pm"]
    t = np.round(xpm.edges()[:-1], 1)
    rows, series = [], []
    for case, policy in xpm.FAST_ROWS:
        for engine, back in (("simulation", 1.9), ("emulation", 2.0)):
            rows.append({"case": case, "policy": policy, "engine": engine, "seed": 1, xpm.TAKEOVER: 0.6,
                         xpm.FIRST_BACKUP: 0.07, xpm.BACK: back, xpm.FIRST_PRIMARY: back - 0.1,
                         xpm.RECEIVED: 120.0, "duplicates": 0.0})
            for name, mbps in (("primary", np.where((t >= 5.0) & (t < 10.0 + back), 0.0, 95.0)),
                               ("backup", np.where((t >= 5.6) & (t < 10.0 + back), 50.0, 0.0))):
                series.append(pd.DataFrame({"case": case, "policy": policy, "engine": engine, "seed": 1,
                                            "t_s": t, "path": name, "mbps": mbps}))
    data = {"x-pm": ExperimentData(experiment=exp, points=exp.points(Mode.make(fast=True)),
                                   runs=pd.DataFrame(rows), series=pd.concat(series, ignore_index=True))}
    assert_plots_readable(data, tmp_path, monkeypatch)
