"""x-kernel (docs/reproduce.md, beyond the papers): a battery of scenarios, each run in the simulator
and over this machine's real Linux TCP / MPTCP (`mmpath emu run`), that must agree.

The rows (xkernel_rows.py): single-path CUBIC, BBR and Reno through a 2 s outage of the link that
holds its queue (`up = false`) or loses it (`drop = true`), at a sub-ms and a 50 ms RTT; MPTCP
backup mode with the primary cut and restored; MPTCP full mesh over paths whose rates differ 1:4
and 1:20 and whose RTTs differ 1:10, with the kernel's receive buffer and a small one (head-of-line
blocking); MPTCP with random loss on one path; and the bundled `blockage` scenario (11ad + 11ac,
the 11ad beam blocked), the one x-kernel always ran. The kernel's own timers and buffers are in
every simulated scenario (xkernel_rows.host_tcp).

A row agrees when (docs/reproduce.md "x-kernel"): mean goodput within 10 % of the emulation's;
every outage / recovery time within 20 % of the emulation's or 0.3 s, whichever is larger; the
first path's share of an MPTCP connection's bytes within 10 points. The claim holds when at least
90 % of the rows agree. The emulation's runs take real time, so they run alone, after every other
run (Experiment.exclusive), at most MAX_RUNS per row; fast mode (`make test`) runs one row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import metrics
from ..api import run as mmpath_run
from ..emu import run as emulate
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from . import kernelcompare as kc, plotting
from .registry import Checks, Claim, Experiment, Mode, Point, claim, experiment
from .xkernel_rows import (BACK, FAST_ROW, FIRST_BYTE, GOODPUT, OUTAGE, RESAT, ROWS, SHARE, SIMULATOR_KNOBS, TAKEOVER,
                           Row, host_knobs, host_tcp)

PAPER = "x"
BIN_S = 0.1
PRE_S = 2.0  # the pre-outage mean: the 2 s before the outage
OUTAGE_FRAC = 0.1  # "outage": the connection below 10 % of its pre-outage mean
THROUGHPUT_TOL = 0.10  # docs/reproduce.md x-kernel
SHARE_TOL_PTS = 10.0
AGREE_FRAC = 0.9
MAX_RUNS = 1  # per row and engine: 21 emulated runs of 6-12 s (+ ~7 s of set-up each) stay under 10 minutes
ENGINES = ("simulation", "emulation")
TIMES = (FIRST_BYTE, RESAT, OUTAGE, TAKEOVER, BACK)
LABELS = {GOODPUT: "goodput (Mbit/s)", FIRST_BYTE: "first byte after (s)", RESAT: "90 % rate after (s)",
          OUTAGE: "outage (s)", TAKEOVER: "to the backup (s)", BACK: "back to the primary (s)",
          SHARE: "first path's share (%)"}


def _rows(mode: Mode) -> list[Row]:
    return [ROWS[FAST_ROW]] if mode.fast else list(ROWS.values())


def _points(mode: Mode) -> list[Point]:
    tcp = host_tcp()
    out = []
    for row in _rows(mode):
        cfg = row.scenario(tcp)
        out += [Point({"row": row.id, "engine": e}, cfg) for e in ENGINES]
    return out


def _run(point: Point, seed: int):
    if point.key["engine"] == "emulation":
        return emulate(dict(point.scenario), seed=seed, capture=False)
    return mmpath_run(dict(point.scenario), seed=seed)


def _series(res, engine: str) -> tuple[np.ndarray, np.ndarray, float]:
    """The connection's throughput per 100 ms bin and its mean goodput."""
    iv = res.intervals
    if engine == "emulation":
        return iv["t_s"].to_numpy(dtype=float), iv["mbps"].to_numpy(dtype=float), float(res.goodput_mbps)
    conn = iv[iv["subflow"] == -1]
    return (conn["t_s"].to_numpy(dtype=float), conn["mbps"].to_numpy(dtype=float),
            float(res.summary["flows"][0]["goodput_mbps"]))


def _share(res, engine: str, cfg: dict[str, Any]) -> float:
    """The first path's share of the bytes both paths carried, percent: on the kernel, what each
    path's shaped interface sent (emu.json path_mbps); simulated, what each subflow delivered."""
    first = cfg["path"][0]["name"]
    if engine == "emulation":
        per = {k: float(v) for k, v in res.path_mbps.items()}
    else:
        iv = res.intervals
        sub = iv[iv["subflow"] != -1]
        per = {str(k): float(v) for k, v in sub.groupby("path")["bytes"].sum().items()}
    total = sum(per.values())
    return 100.0 * per.get(first, 0.0) / total if total > 0 else float("nan")


def first_byte_s(t: np.ndarray, y: np.ndarray, end_s: float, left_s: float) -> float:
    """From `end_s` to the start of the first 100 ms bin at or after it with data delivered (a
    bin is "at" `end_s` from half a bin before: iperf3's bins start a few ms off the scenario's
    clock); the time left when none (a lower bound)."""
    sel = (t >= end_s - BIN_S / 2) & (y > 0)
    return max(0.0, float(t[sel][0]) - end_s) if sel.any() else left_s


def _measure(res, point: Point, mode: Mode):
    row = ROWS[point.key["row"]]
    cfg = dict(point.scenario)
    engine = point.key["engine"]
    t, y, goodput = _series(res, engine)
    out: dict[str, Any] = {GOODPUT: goodput}
    if row.outage is not None:
        start, end = row.outage
        left = float(cfg["duration_s"]) - end
        m = metrics.outage_and_recovery(t, y, start, end, pre_s=PRE_S, frac=OUTAGE_FRAC, bin_s=BIN_S)
        # A run that never re-saturates counts the time left (a lower bound).
        resat = m["recovery_s"] if m["recovery_s"] is not None else left
        out["pre_mbps"] = m["pre_mbps"]
        for k in row.metrics:
            if k == FIRST_BYTE:
                out[k] = first_byte_s(t, y, end, left)
            elif k in (RESAT, BACK):
                out[k] = resat
            elif k in (OUTAGE, TAKEOVER):
                out[k] = m["outage_s"]
    if SHARE in row.metrics:
        out[SHARE] = _share(res, engine, cfg)
    return out, pd.DataFrame({"t_s": t, "mbps": y})


def _agrees(key: str, sim: float, emu: float) -> tuple[bool, str]:
    """One metric's verdict and the tolerance it was held to."""
    if key == GOODPUT:
        return kc.share_of_agrees(sim, emu, THROUGHPUT_TOL)
    if key == SHARE:
        return kc.points_agree(sim, emu, SHARE_TOL_PTS)
    return kc.time_agrees(sim, emu)


def row_results(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """Per row present in `runs`: each metric's mean per engine, its verdict, and the row's."""
    out = []
    for row in ROWS.values():
        mine = runs[runs["row"] == row.id]
        if not len(mine):
            continue
        items, n, ok = kc.compare(mine, row.metrics, _agrees)
        out.append({"row": row, "items": items, "runs": n, "ok": ok})
    return out


def table(runs: pd.DataFrame) -> str:
    """The battery as one Markdown table: per row, each metric simulated / emulated (tolerance)."""
    lines = ["| row | scenario | runs | compared: simulated / emulated (tolerance) | agrees |", "|---|---|---|---|---|"]
    for r in row_results(runs):
        lines.append(f"| {r['row'].id} | {r['row'].what} | {r['runs']['simulation']} + {r['runs']['emulation']} "
                     f"| {kc.cells(r['items'], LABELS)} | {'yes' if r['ok'] else '**no**'} |")
    return "\n".join(lines)


def _plot(runs: pd.DataFrame, series, path: Path) -> None:
    """One panel per row: both engines' connection throughput (100 ms bins, mean of the runs),
    the outage shaded."""
    if series is None or not len(series):
        return
    done = row_results(runs)
    if not done:
        return
    plt, fig, axes, used, ncols = kc.panels(len(done))
    for ax, r in zip(used, done):
        row = r["row"]
        s = series[series["row"] == row.id]
        for engine in ENGINES:
            e = s[s["engine"] == engine]
            if len(e):
                m = e.assign(t_s=(e["t_s"] / BIN_S).round() * BIN_S).groupby("t_s")["mbps"].mean()
                plotting.step(ax, m.index, m.to_numpy(), BIN_S, label=engine, color=plotting.colour(engine))
        for a, b, label in row.shade:
            plotting.shade(ax, a, b, label=label, kind="retrain" if "re-training" in label else "outage")
        kc.finish(ax, row.id, r["ok"])
    plotting.fig_legend(fig, axes, ncol=2 if ncols == 1 else 4)
    plotting.save(plt, fig, path, "x-kernel", "each battery row's connection throughput, simulated vs emulated "
                  "on this kernel (100 ms bins, mean of the runs; the outage shaded)")


experiment(Experiment(
    id="x-kernel", paper=PAPER, title="Simulation vs emulation over the real Linux TCP / MPTCP: the battery",
    figure="(beyond the papers) each row's connection throughput, both engines",
    points=_points, measure=_measure, plot=_plot, run=_run, exclusive=True, max_runs=MAX_RUNS, table=table,
))


def _check(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    res = row_results(runs)
    want = len(_rows(mode))
    c.present("rows run in both engines", sum(min(r["runs"].values()) > 0 for r in res), want)
    ok = [r for r in res if r["ok"]]
    c.at_least("rows agreeing", len(ok) / want if want else 0.0, AGREE_FRAC, bound_text=f"{AGREE_FRAC:.0%}")
    k = host_knobs()
    text = (f"{len(ok)} of {want} rows agree"
            + (f"; disagreeing: {', '.join(r['row'].id for r in res if not r['ok'])}" if len(ok) < len(res) else "")
            + f" (this kernel: CONFIG_HZ {k.get('CONFIG_HZ')} (both engines), stale_loss_cnt {k.get('stale_loss_cnt')}, "
              f"tcp_rmem {k.get('tcp_rmem')}, "
              f"tcp_pacing_ss_ratio {k.get('tcp_pacing_ss_ratio')}, tcp_pacing_ca_ratio {k.get('tcp_pacing_ca_ratio')};"
              f" simulated: {SIMULATOR_KNOBS})")
    return text, c.items


claim(Claim(
    id="x-kernel", experiment="x-kernel",
    claim="The same scenarios in simulation and in emulation over the real Linux TCP / MPTCP agree: mean "
          "throughput within 10 %, outage and recovery times within 20 % or 0.3 s, path shares within 10 points",
    paper="(beyond the papers: docs/reproduce.md) the simulator's model of the kernel's TCP and MPTCP is checked "
          "against the kernel itself",
    criterion=f"a battery of scenarios (single-path CUBIC / BBR / Reno through a 2 s hold or drop outage at "
              f"0.5 and 50 ms RTT; MPTCP backup with the primary cut; MPTCP full mesh over 1:4 and 1:20 rates and "
              f"1:10 RTTs with the kernel's and a small receive buffer; random loss on one path; the bundled "
              f"`blockage`), each in `mmpath run` and `mmpath emu run` (root; real iperf3 through this kernel "
              f"over veth shaped by the simulated capacity), at most {MAX_RUNS} runs each, with this kernel's "
              "TCP sysctls; a row agrees when its means have goodput within 10 % of the emulation's, times "
              "(first byte and 90 % of the pre-outage rate after the outage, outage, backup takeover and return) "
              "within 20 % of the emulation's or 0.3 s, whichever is larger, and the first path's share within "
              "10 points; at least 90 % of the rows agree (fast mode: the `blockage` row alone)",
    check=_check,
))
