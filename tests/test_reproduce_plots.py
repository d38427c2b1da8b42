"""The reproduce figures' common frame (mmpath/reproduce/plotting.py): every experiment draws one,
and `plotting.problems` finds what makes a figure hard to read. The figures drawn from the fast
runs are checked in tests/test_reproduce.py and tests/test_reproduce_mptcp.py
(test_figures_are_readable); x-kernel's, whose runs need the emulator, here from a made-up table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from conftest import assert_plots_readable
from mmpath.reproduce import EXPERIMENTS, known_ids, plotting
from mmpath.reproduce.registry import Mode
from mmpath.reproduce.runner import ExperimentData


def test_every_experiment_draws_a_figure():
    known_ids()
    assert [e for e, exp in EXPERIMENTS.items() if exp.plot is None] == []


def _fig_with(legend_loc: str, labels: bool):
    plt, fig, axes = plotting.figure(1, 1)
    ax = axes[0, 0]
    t = np.linspace(0.0, 1.0, 50)
    ax.plot(t, np.full_like(t, 10.0), label="flat")  # runs along the top, under an upper legend
    ax.set_ylim(0, 10.3)
    if labels:
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput (Mbit/s)")
        ax.set_title("a panel")
    plotting.legend(ax, loc=legend_loc)
    return plt, fig


def test_problems_finds_missing_labels_and_a_legend_over_data():
    plt, fig = _fig_with("upper center", labels=False)
    found = plotting.problems(fig)
    plt.close(fig)
    assert "figure without a title" in found
    assert any("no title" in p for p in found)
    assert any("no x label" in p for p in found) and any("no y label" in p for p in found)
    assert any("legend covers" in p for p in found)


def test_problems_passes_a_labelled_figure():
    plt, fig = _fig_with("lower center", labels=True)
    fig.suptitle("test figure")
    found = plotting.problems(fig)
    plt.close(fig)
    assert found == []


def test_problems_finds_offset_ticks():
    plt, fig, axes = plotting.figure(1, 1)
    ax = axes[0, 0]
    ax.plot([0, 1], [1499.41, 1499.51])  # the default formatter writes "+1.4994e3" and offsets
    ax.set_xlabel("x (s)")
    ax.set_ylabel("y (Mbit/s)")
    ax.set_title("offsets")
    fig.suptitle("test figure")
    found = plotting.problems(fig)
    plt.close(fig)
    assert any("offsets from" in p for p in found)


def test_xkernel_figure_is_readable(tmp_path, monkeypatch):
    """x-kernel's figure from a made-up runs table (its emulated runs need root and real time)."""
    known_ids()
    exp = EXPERIMENTS["x-kernel"]
    t = np.round(np.arange(0.0, 12.0, 0.1), 1)
    rows, series = [], []
    for engine, level in (("simulation", 1700.0), ("emulation", 1600.0)):
        for seed in (1, 2):
            rows.append({"row": "blockage", "engine": engine, "seed": seed, "goodput_mbps": level * 0.8,
                         "pre_mbps": level, "outage_s": 0.25, "resat_s": 0.9})
            mbps = np.where((t >= 4.0) & (t < 7.5), 500.0, level)
            series.append(pd.DataFrame({"row": "blockage", "engine": engine, "seed": seed, "t_s": t, "mbps": mbps}))
    data = {"x-kernel": ExperimentData(experiment=exp, points=exp.points(Mode.make(fast=True)),
                                       runs=pd.DataFrame(rows), series=pd.concat(series, ignore_index=True))}
    assert_plots_readable(data, tmp_path, monkeypatch)
