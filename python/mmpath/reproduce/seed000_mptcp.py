"""Seed 000, section 4: MPTCP over 802.11ad + 802.11n (full mesh vs backup), Figs. 11-15.

Set-up (section 4.2): a multiband client with an 802.11n radio (2.4 GHz) and an 802.11ad radio
(the Panasonic module, preset ``panasonic-wigig``), a multiband AP, both on the MPTCP v0.90
kernel (``kernel = "linux-v0.9x"``: minRTT scheduler, pf flag); iperf3 sends TCP from the client
to the AP (``direction = "upload"``, no network behind the AP) for 60 s. Both hosts have an
address on each radio and policy routing by source address, so v0.90's fullmesh path manager
opens a subflow between every pair of addresses (``subflows = "address-mesh"``: two of them
crossed, data on one radio and ACKs on the other, at the 11n's MSS); in backup mode every
subflow touching an 11n address is a backup one. 11ad at MTU 7912 and MCS
9 with a strong signal unless a figure varies them; 11n at MTU 1500 (its maximum, section 4.2).

The 11n radio: the paper names no card; its best TCP run, 46.16 Mbit/s, is what one spatial
stream at 20 MHz gives (HT MCS 7, 72.2 Mbit/s with the short guard interval, docs/facts.md: TCP is
65-70 % of the PHY rate), so the path is HT 20 MHz, one stream, strong signal, ideal rate
adaptation. Ben (eq. 3) uses L_11ad and L_11n as the paper does: the best single-path TCP run of
each link in the same batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from . import plotting
from .registry import Checks, Claim, Experiment, Mode, Point, claim, experiment, fmt, stats
from .seed000 import DEVICE, ENVIRONMENT

PAPER = "000"
MCS_TOP = 9
MTU_11AD = 7912
MTU_SWEEP = (1500, 3000, 4500, 6000)  # section 4.2, Fig. 13
MCS_ALL = list(range(1, 10))
MODES = ("fullmesh", "backup")
GBPS_000 = 1000.0  # the paper's 1 Gbit/s reference level, Mbit/s
# iperf3 ran 60 s in section 4; fast mode keeps the suite short.
SECONDS_FULL = 60.0


def _seconds(mode: Mode) -> float:
    return mode.duration_s if mode.fast else SECONDS_FULL


def paths(mcs: int = MCS_TOP, mtu: int = MTU_11AD, events: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    ad: dict[str, Any] = {"name": "11ad", "technology": "11ad", "device": DEVICE, "mcs": mcs,
                          "mtu_bytes": mtu, "signal": "strong", **ENVIRONMENT}
    if events:
        ad["event"] = events
    n = {"name": "11n", "technology": "11n", "bandwidth_mhz": 20, "streams": 1, "mtu_bytes": 1500,
         "signal": "strong"}
    return [ad, n]


def scenario(mode: Mode, name: str, how: str, *, mcs: int = MCS_TOP, mtu: int = MTU_11AD,
             events: list[dict[str, Any]] | None = None, seconds: float | None = None) -> dict[str, Any]:
    """``how``: tcp-11ad / tcp-11n (single path) or an MPTCP mode (fullmesh / backup)."""
    if how.startswith("tcp-"):
        flow: dict[str, Any] = {"name": how, "kind": "tcp", "path": how[4:], "cc": "cubic"}
    else:
        flow = {"name": how, "kind": "mptcp", "kernel": "linux-v0.9x", "mode": how, "cc": "cubic",
                "subflows": "address-mesh"}
    flow["direction"] = "upload"
    return {
        "name": name,
        "description": f"seed 000 {name}: {how}, 11ad MCS {mcs} MTU {mtu}",
        "duration_s": seconds or _seconds(mode),
        "backbone": {"enabled": False},
        "path": paths(mcs, mtu, events),
        "flow": [flow],
    }


def measure(res, point: Point, mode: Mode) -> dict[str, Any]:
    f = res.summary["flows"][0]
    row: dict[str, Any] = {"goodput_mbps": float(f["goodput_mbps"]),
                           "retransmits": int(f.get("retransmits") or 0)}
    subs = {s["path"]: s for s in f.get("subflows", [])}
    for p in ("11ad", "11n"):
        row[f"{p}_mbps"] = float(subs[p]["goodput_mbps"]) if p in subs else (
            row["goodput_mbps"] if f.get("path") == p else 0.0)
    row["reinjections"] = int(f.get("reinjections") or 0)
    # What binds a full mesh run (docs/models.md, MPTCP: "Seed 000's full mesh"): the most data held
    # out of order at the receiver and the minRTT receive-buffer optimisation's actions.
    for k in ("max_reorder_bytes", "penalizations", "opportunistic_retransmits"):
        row[k] = int(f.get(k) or 0)
    return row


def ben(t: float, l_ad: float, l_n: float) -> float:
    """Seed 000 eq. (3): the aggregation benefit of an MPTCP mode over the best link (11ad)."""
    return (t - l_ad) / l_n if t >= l_ad else (t - l_ad) / l_ad


def _col(runs: pd.DataFrame, col: str = "goodput_mbps", **where: Any) -> pd.Series:
    sel = np.ones(len(runs), dtype=bool)
    for k, v in where.items():
        sel &= (runs[k] == v).to_numpy()
    return runs.loc[sel, col]


def _mean(runs: pd.DataFrame, col: str = "goodput_mbps", **where: Any) -> float:
    return stats(_col(runs, col, **where))["mean"]


# --------------------------------------------------------------------------- 000-ben (Figs 11-12)


def _ben_points(mode: Mode) -> list[Point]:
    return [Point({"how": h}, scenario(mode, "000-ben", h)) for h in ("tcp-11ad", "tcp-11n", *MODES)]


def _bens(runs: pd.DataFrame) -> dict[str, np.ndarray]:
    l_ad = float(_col(runs, how="tcp-11ad").max())
    l_n = float(_col(runs, how="tcp-11n").max())
    return {m: np.array([ben(t, l_ad, l_n) for t in _col(runs, how=m)]) for m in MODES}


# Section 4.2's single-path best runs (L_11ad, L_11n of eq. 3).
PAPER_L = {"tcp-11ad": 1316.0, "tcp-11n": 46.16}
_MODE_LABEL = {"tcp-11ad": "TCP over 11ad", "tcp-11n": "TCP over 11n", "fullmesh": "MPTCP full mesh",
               "backup": "MPTCP backup"}


def _plot_ben(runs: pd.DataFrame, series, path: Path) -> None:
    plt, fig, axes = plotting.figure(1, 2, w=5.5, h=3.8)
    b = _bens(runs)
    ax = axes[0, 0]
    x = plotting.bars(ax, [_MODE_LABEL[m] for m in MODES], {"Ben": [stats(b[m]) for m in MODES]},
                      "aggregation benefit Ben (eq. 3)", "Fig. 11: Ben(mode), each run and mean (min-max)",
                      xlabel="MPTCP mode", points={"Ben": [b[m] for m in MODES]}, legend_kw=False,
                      group_colours=[plotting.colour(m) for m in MODES])
    ax.axhline(0.0, color="0.3", linewidth=0.8)
    # The paper: every full mesh run below 0, the worst near the 11n throughput (Ben near
    # (46 - 1316) / 1316); backup runs around 0.
    worst = (PAPER_L["tcp-11n"] - PAPER_L["tcp-11ad"]) / PAPER_L["tcp-11ad"]
    ax.fill_between([x[0] - 0.4, x[0] + 0.4], worst, 0.0, color="0.6", alpha=0.25, linewidth=0,
                    label="paper's range: full mesh < 0, worst near 11n alone")
    plotting.paper_marks(ax, [x[1]], [0.0], label="paper: backup around 0")
    allb = np.concatenate([b[m] for m in MODES]) if len(runs) else np.zeros(1)
    ax.set_ylim(min(-1.05, 1.1 * float(np.nanmin(allb))), max(1.05, 1.1 * float(np.nanmax(allb))))
    ax = axes[0, 1]
    hows = ["tcp-11ad", *MODES]
    st = [stats(_col(runs, how=h)) for h in hows]
    x = plotting.bars(ax, [_MODE_LABEL[h] for h in hows], {"throughput": st}, "throughput (Mbit/s)",
                      "Fig. 12: TCP vs the MPTCP modes (mean, min-max, runs)", xlabel="transport",
                      points={"throughput": [_col(runs, how=h) for h in hows]}, legend_kw=False,
                      group_colours=[plotting.colour(h) for h in hows])
    ax.plot(x[0], PAPER_L["tcp-11ad"], marker="*", ms=9, color="k", linestyle="none",
            label="paper: best TCP run over 11ad (L_11ad 1316)")
    plotting.paper_line(ax, GBPS_000, "1 Gbit/s")
    ax.set_ylim(0, 1.1 * max([s["max"] for s in st] + [PAPER_L["tcp-11ad"]]))
    plotting.fig_legend(fig, axes, ncol=3)
    l_ad, l_n = float(_col(runs, how="tcp-11ad").max()), float(_col(runs, how="tcp-11n").max())
    plotting.save(plt, fig, path, "000-ben", f"11ad (MCS 9, MTU 7912) + 11n, upload; L_11ad = {l_ad:.0f}, L_11n = "
                  f"{l_n:.1f} Mbit/s (mmpath's best runs; paper 1316 / 46.16) (seed 000 Figs. 11-12)")


experiment(Experiment(
    id="000-ben", paper=PAPER, title="MPTCP full mesh vs backup over 11ad + 11n: aggregation benefit",
    figure="seed 000 Figs. 11-12", points=_ben_points, measure=measure, plot=_plot_ben,
))


def _check_ben(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    b = _bens(runs)
    fm, bk = stats(b["fullmesh"]), stats(b["backup"])
    c.below("Ben(fullmesh), highest run", fm["max"], 0.0, bound_text="0 (always negative)")
    spread_fm, spread_bk = fm["max"] - fm["min"], bk["max"] - bk["min"]
    # "Largely varied": the paper's runs span from about 0 down to the 11n throughput (Ben near
    # -1); a spread of at least 0.1 in Ben and 3x the backup's is the least that deserves it.
    c.at_least("spread of Ben(fullmesh) (max - min)", spread_fm, 0.1, bound_text="0.1 (widely spread)")
    c.above("spread of Ben(fullmesh) over that of Ben(backup)", spread_fm / max(spread_bk, 1e-6),
            3.0, bound_text="3x (varied vs stable)")
    c.below("|mean Ben(backup)|", abs(bk["mean"]), 0.05, bound_text="0.05 (near 0)")
    text = (f"Ben(fullmesh) mean {fmt(fm['mean'])} [{fmt(fm['min'])}..{fmt(fm['max'])}], "
            f"Ben(backup) mean {fmt(bk['mean'])} [{fmt(bk['min'])}..{fmt(bk['max'])}]; "
            f"L_11ad {fmt(float(_col(runs, how='tcp-11ad').max()))}, L_11n {fmt(float(_col(runs, how='tcp-11n').max()))} Mbit/s")
    return text, c.items


claim(Claim(
    id="000-ben", experiment="000-ben",
    claim="11ad (MTU 7912, MCS 9) + 11n (MTU 1500), 10 runs: Ben(full mesh) always negative and widely "
          "spread; Ben(backup) near 0. Ben as in seed 000 eq. (3)",
    paper="Fig. 11: Ben(fullmesh) always negative and largely varied (worst full mesh run near the 11n "
          "throughput); Ben(backup) stable around 0. L_11ad = 1316, L_11n = 46.16 Mbit/s (best runs)",
    criterion="60 s runs (fast: 3 s). Every full mesh run has Ben < 0; the min-max spread of Ben(fullmesh) is at least "
              "0.1 and over 3x that of Ben(backup); |mean Ben(backup)| < 0.05. L_i are the best single-path "
              "TCP runs of the batch",
    check=_check_ben,
))


# --------------------------------------------------------------------------- 000-mtu-sweep (Fig 13)


def _mtu_points(mode: Mode) -> list[Point]:
    return [Point({"mtu": mtu, "how": m}, scenario(mode, "000-mtu-sweep", m, mtu=mtu))
            for mtu in MTU_SWEEP for m in MODES]


def _plot_mtu(runs: pd.DataFrame, series, path: Path) -> None:
    # The statistics Fig. 13 plots (FIG13_STAT, below): the best full mesh run and the mean of the
    # backup runs; the bars end there and the error bars span every run (min-max).
    plt, fig, axes = plotting.figure(1, 1, w=7.5, h=4.0)
    ax = axes[0, 0]
    shown = {}
    for m in MODES:
        sts = []
        for mtu in MTU_SWEEP:
            st = stats(_col(runs, mtu=mtu, how=m))
            sts.append({**st, "mean": st[FIG13_STAT[m]]})
        shown[f"{_MODE_LABEL[m]} ({'best run' if FIG13_STAT[m] == 'max' else 'mean'})"] = sts
    plotting.bars(ax, [str(m) for m in MTU_SWEEP], shown, "throughput (Mbit/s)",
                  "Fig. 13: full mesh (best run) vs backup (mean), error bars: every run (min-max).\n"
                  "Paper: full mesh above at 1500 and 3000 bytes, backup above at 4500 and 6000",
                  xlabel="11ad MTU (bytes); 11n at 1500", legend_kw=False,
                  colours={k: plotting.colour(m) for k, m in zip(shown, MODES)})
    plotting.paper_line(ax, GBPS_000, "1 Gbit/s (paper: far below it at the small MTUs)")
    ax.set_ylim(0, 1.15 * max(max(s["max"] for s in sts) for sts in shown.values()))
    plotting.fig_legend(fig, axes, ncol=2)
    plotting.save(plt, fig, path, "000-mtu-sweep", "MPTCP full mesh vs backup over 11ad (MCS 9) + 11n by the "
                  "11ad MTU, upload (seed 000 Fig. 13)")


experiment(Experiment(
    id="000-mtu-sweep", paper=PAPER, title="Full mesh vs backup by 11ad MTU",
    figure="seed 000 Fig. 13", points=_mtu_points, measure=measure, plot=_plot_mtu,
))


# Fig. 13 plots one statistic per mode (section 4.2): "we show the average throughput of MPTCP
# backup since the collected values are quite stable. Meanwhile, we show the maximum values of the
# MPTCP full mesh." Its comparisons are between those two statistics.
FIG13_STAT = {"fullmesh": "max", "backup": "mean"}


def _fig13(runs: pd.DataFrame) -> dict[str, list[float]]:
    return {m: [stats(_col(runs, mtu=mtu, how=m))[FIG13_STAT[m]] for mtu in MTU_SWEEP] for m in MODES}


def _check_mtu(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    shown = _fig13(runs)
    for m in MODES:
        c.increasing(f"{m} {FIG13_STAT[m]} throughput by MTU {list(MTU_SWEEP)}", list(MTU_SWEEP), shown[m],
                     "Mbit/s")
    for i, mtu in enumerate(MTU_SWEEP):
        fm, bk = shown["fullmesh"][i], shown["backup"][i]
        if mtu <= 3000:
            c.above(f"MTU {mtu}: full mesh max", fm, bk, "Mbit/s", bound_text=f"backup mean {fmt(bk)} Mbit/s")
        else:
            c.above(f"MTU {mtu}: backup mean", bk, fm, "Mbit/s", bound_text=f"full mesh max {fmt(fm)} Mbit/s")
    text = "; ".join(f"MTU {mtu}: full mesh max {fmt(shown['fullmesh'][i])} (mean "
                     f"{fmt(_mean(runs, mtu=mtu, how='fullmesh'))}), backup mean {fmt(shown['backup'][i])}"
                     for i, mtu in enumerate(MTU_SWEEP)) + " Mbit/s"
    return text, c.items


claim(Claim(
    id="000-mtu-sweep", experiment="000-mtu-sweep",
    claim="11ad MTU {1500, 3000, 4500, 6000}: throughput rises with MTU in both modes; full mesh beats "
          "backup at 1500 and 3000, backup wins at 4500 and 6000",
    paper="Fig. 13: both modes rise with the MTU; full mesh (max shown) above backup (mean) at 1500 and "
          "3000 bytes, backup above at 4500 and 6000; all far below 1 Gbit/s at the small MTUs",
    criterion="60 s runs (fast: 3 s). The statistics Fig. 13 plots: the best full mesh run and the mean of the backup "
              "runs. Each rises at every MTU step; full mesh max > backup mean at 1500 and 3000; backup mean > full "
              "mesh max at 4500 and 6000",
    check=_check_mtu,
))


# --------------------------------------------------------------------------- 000-fullmesh-mcs (Fig 14)


def _mcs_points(mode: Mode) -> list[Point]:
    mcss = [1, 3, 5, 7, 9] if mode.fast else MCS_ALL
    return [Point({"mcs": mcs, "how": h}, scenario(mode, "000-fullmesh-mcs", h, mcs=mcs))
            for mcs in mcss for h in ("tcp-11ad", "fullmesh")]


def _plot_mcs(runs: pd.DataFrame, series, path: Path) -> None:
    mcss = sorted(int(m) for m in runs["mcs"].unique())
    plt, fig, axes = plotting.figure(1, 2, w=6.0, gridspec_kw={"width_ratios": [3, 2]})
    ax = axes[0, 0]
    groups = [str(m) for m in mcss]
    plotting.bars(ax, groups,
                  {"TCP over 11ad (= MPTCP backup)": [stats(_col(runs, mcs=m, how="tcp-11ad")) for m in mcss],
                   "MPTCP full mesh": [stats(_col(runs, mcs=m, how="fullmesh")) for m in mcss]},
                  "throughput (Mbit/s)", "Fig. 14: mean, min-max over runs", xlabel="11ad MCS (SC PHY)",
                  colours={"TCP over 11ad (= MPTCP backup)": plotting.colour("tcp-11ad"),
                           "MPTCP full mesh": plotting.colour("fullmesh")},
                  legend_kw={"loc": "upper left"})
    ax.set_ylim(0, 1.25 * float(runs["goodput_mbps"].max()))
    ax = axes[0, 1]
    gap = [_mean(runs, mcs=m, how="tcp-11ad") - _mean(runs, mcs=m, how="fullmesh") for m in mcss]
    ax.bar(groups, gap, 0.6, color=[plotting.colour("fullmesh")] * len(gap), label="mmpath: TCP - full mesh (means)")
    ax.axhline(0.0, color="0.3", linewidth=0.8)
    ax.set_xlabel("11ad MCS (SC PHY)")
    ax.set_ylabel("TCP - full mesh (Mbit/s)")
    ax.set_title("the gap the claim tests (paper: < 0 at MCS 1, > 0\nand growing with the MCS above it)",
                 fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3)
    lim = 1.3 * max(abs(g) for g in gap) if gap else 1.0
    ax.set_ylim(-lim, lim)
    plotting.legend(ax, loc="upper left")
    thin = " (fast mode: MCS " + ", ".join(groups) + ")" if len(mcss) < len(MCS_ALL) else ""
    plotting.save(plt, fig, path, "000-fullmesh-mcs", "MPTCP full mesh vs TCP over 11ad (MTU 7912) + 11n for each "
                  f"11ad MCS, upload{thin} (seed 000 Fig. 14)")


experiment(Experiment(
    id="000-fullmesh-mcs", paper=PAPER, title="Full mesh vs TCP over 11ad for each MCS",
    figure="seed 000 Fig. 14", points=_mcs_points, measure=measure, plot=_plot_mcs,
))


def _check_mcs(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    mcss = sorted(int(m) for m in runs["mcs"].unique())
    gaps = []
    for m in mcss:
        tcp, fm = _mean(runs, mcs=m, how="tcp-11ad"), _mean(runs, mcs=m, how="fullmesh")
        gaps.append(tcp - fm)
        if m == 1:
            c.at_least("MCS 1: full mesh mean", fm, tcp, "Mbit/s", bound_text=f"TCP {fmt(tcp)} Mbit/s")
        else:
            c.below(f"MCS {m}: full mesh mean", fm, tcp, "Mbit/s", bound_text=f"TCP {fmt(tcp)} Mbit/s")
    high = [g for m, g in zip(mcss, gaps) if m > 1]
    c.increasing("TCP - full mesh gap by MCS (MCS > 1)", [m for m in mcss if m > 1], high, "Mbit/s")
    text = ", ".join(f"MCS {m}: gap {fmt(g)}" for m, g in zip(mcss, gaps)) + " Mbit/s (TCP - full mesh)"
    return text, c.items


claim(Claim(
    id="000-fullmesh-mcs", experiment="000-fullmesh-mcs",
    claim="Full mesh vs TCP over 11ad for each MCS: full mesh lower at every MCS but MCS 1, and the gap "
          "grows with the rate",
    paper="Fig. 14: full mesh's mean below TCP's at every MCS except MCS 1 (slightly above), and the higher "
          "the PHY rate the worse",
    criterion="60 s runs (fast: 3 s). Means of the runs: full mesh >= TCP at MCS 1, < TCP at every other MCS, and TCP - full mesh "
              "rises at every MCS step above 1 (fast mode: MCS 1, 3, 5, 7, 9)",
    check=_check_mcs,
))


# --------------------------------------------------------------------------- 000-switchover (Fig 15)


def _switch_window(seconds: float) -> tuple[float, float]:
    """The antenna is turned away over 40-60 % of the run (24-36 s of 60 s)."""
    return 0.4 * seconds, 0.2 * seconds


def _switch_points(mode: Mode) -> list[Point]:
    t0, dur = _switch_window(_seconds(mode))
    ev = [{"kind": "antenna_turn", "t_s": t0, "duration_s": dur}]
    return [Point({"how": "backup"}, scenario(mode, "000-switchover", "backup", events=ev))]


def measure_switch(res, point: Point, mode: Mode):
    row = measure(res, point, mode)
    seconds = float(res.summary["sim_s"])
    t0, dur = _switch_window(seconds)
    iv = res.intervals
    sub = iv[iv["subflow"] >= 0]
    n = int(round(seconds / 0.1))
    t = np.arange(n) * 0.1
    cols = {}
    for p in ("11ad", "11n"):
        mb = np.zeros(n)
        g = sub[sub["path"].astype(str) == p]
        idx = np.round(g["t_s"].to_numpy(dtype=float) / 0.1).astype(int)
        ok = (idx >= 0) & (idx < n)
        np.add.at(mb, idx[ok], g["mbps"].to_numpy(dtype=float)[ok])
        cols[p] = mb
    eps = 1e-9
    before = (t >= 1.0) & (t + 0.1 <= t0 + eps)
    # The outage as the device sees it: from the turn until the beam is re-trained, skipping the
    # first 0.5 s (the backup takes over after an RTO).
    during = (t >= t0 + 0.5) & (t + 0.1 <= t0 + dur + eps)
    after = t >= t0 + dur + 0.5 * (seconds - t0 - dur)
    for p in ("11ad", "11n"):
        for name, sel in (("before", before), ("during", during), ("after", after)):
            row[f"{p}_{name}_mbps"] = float(cols[p][sel].mean()) if sel.any() else np.nan
    return row, pd.DataFrame({"t_s": t, "11ad": cols["11ad"], "11n": cols["11n"]})


def _plot_switch(runs: pd.DataFrame, series, path: Path) -> None:
    if series is None or not len(series):
        return
    # Two panels on their own linear scales (11ad carries ~25x what 11n does), as Fig. 15 shows
    # one run's 0.1 s throughput per path.
    plt, fig, axes = plotting.figure(2, 1, w=10.0, h=2.4, sharex=True)
    first = series[series["seed"] == series["seed"].min()]
    end = float(series["t_s"].max()) + 0.1
    t0, dur = _switch_window(end)
    for ax, p in zip(axes.flat, ("11ad", "11n")):
        plotting.step(ax, first["t_s"], first[p], 0.1, color=plotting.colour(p), label=f"{p} subflow", linewidth=1.2)
        plotting.shade(ax, t0, t0 + dur, label="11ad antenna turned away")
        ax.set_ylabel(f"{p} (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{p} path: the paper's traffic moves "
                     + ("off 11ad during the turn and back after" if p == "11ad" else "to 11n during the turn"),
                     fontsize="medium")
        ax.grid(True, alpha=0.3)
        plotting.legend(ax, outside=True)
    axes[-1, 0].set_xlabel("time (s)")
    plotting.save(plt, fig, path, "000-switchover", "MPTCP backup mode over 11ad (MCS 9, MTU 7912) + 11n, upload: "
                  "per-path throughput in 100 ms bins, first run (seed 000 Fig. 15)")


experiment(Experiment(
    id="000-switchover", paper=PAPER, title="Backup-mode switchover when the 11ad antenna turns away and back",
    figure="seed 000 Fig. 15", points=_switch_points, measure=measure_switch, plot=_plot_switch,
))


def _check_switch(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    m = {k: _mean(runs, k) for k in runs.columns if k.endswith("_mbps") and ("_before" in k or "_during" in k
                                                                               or "_after" in k)}
    c.above("before: 11ad mean", m["11ad_before_mbps"], 10 * max(m["11n_before_mbps"], 1.0), "Mbit/s",
            bound_text=f"10x 11n ({fmt(m['11n_before_mbps'])} Mbit/s)")
    c.below("during: 11ad mean", m["11ad_during_mbps"], 1.0, "Mbit/s", bound_text="1 Mbit/s (link gone)")
    c.above("during: 11n mean", m["11n_during_mbps"], 10.0, "Mbit/s", bound_text="10 Mbit/s (took over)")
    c.above("after: 11ad mean", m["11ad_after_mbps"], 10 * max(m["11n_after_mbps"], 1.0), "Mbit/s",
            bound_text=f"10x 11n ({fmt(m['11n_after_mbps'])} Mbit/s) (moved back)")
    text = (f"11ad before/during/after {fmt(m['11ad_before_mbps'])}/{fmt(m['11ad_during_mbps'])}/"
            f"{fmt(m['11ad_after_mbps'])}, 11n {fmt(m['11n_before_mbps'])}/{fmt(m['11n_during_mbps'])}/"
            f"{fmt(m['11n_after_mbps'])} Mbit/s")
    return text, c.items


claim(Claim(
    id="000-switchover", experiment="000-switchover",
    claim="Backup mode, 60 s, 11ad blocked mid-run then restored: traffic moves to 11n during the outage and "
          "back to 11ad after (0.1 s throughput timeline)",
    paper="Fig. 15: iperf3 traffic switches from 11ad to 11n when the antenna turns away, and back to 11ad "
          "when it is restored",
    criterion="60 s runs (fast: 3 s), antenna turned away over 40-60 % of the run. Per-path means of 100 ms bins: before, 11ad carries > 10x 11n; during (from 0.5 s after the "
              "turn), 11ad < 1 and 11n > 10 Mbit/s; in the second half after, 11ad > 10x 11n again",
    check=_check_switch,
))
