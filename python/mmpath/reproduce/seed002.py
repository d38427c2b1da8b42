"""Seed 002: Khan et al., "Multipath TCP in Smartphones Equipped with Millimeter Wave Radios"
(WiNTECH'21). ../shared/seeds/002_*.txt

Set-up (section 2, 3.2): an ASUS ROG Phone II 1 m from a Netgear Nighthawk X10 AP, 802.11ad
phased array facing the AP (``distance_m = 1``; device presets ``rog-phone-2-11ad`` and
``rog-phone-2-11ac``, set once from the device facts in device.rs), the MPTCP server behind the
AP on a 10G LAN (the default backbone), iperf3 backlogged TCP, MPTCP v0.94 (``kernel =
"linux-v0.9x"``) with the FixedRatio scheduler: ``ratio`` segments of every 100 to the 11ad
subflow (the first path). Downlink = AP -> phone (``direction = "download"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .registry import Checks, Claim, Experiment, Mode, Point, claim, experiment, fmt, stats

PAPER = "002"
DEV_AD = "rog-phone-2-11ad"
DEV_AC = "rog-phone-2-11ac"
DIRS = {"down": "download", "up": "upload"}
# Section 3.2 / Fig. 1: single-path TCP and the expected MPTCP sums, Mbit/s.
SINGLE = {("11ad", "down"): 1600.0, ("11ad", "up"): 1450.0, ("11ac", "down"): 600.0, ("11ac", "up"): 600.0}
SUM = {"down": 2200.0, "up": 2050.0}
OPT = {"down": 73, "up": 70}  # section 3.2: the throughput-optimal ratios
RATIOS_FULL = sorted(set(range(0, 101, 10)) | {73, 70})
RATIOS_FAST = [0, 30, 50, 70, 73, 90, 100]


def paths(events_ad: list | None = None, events_ac: list | None = None) -> list[dict[str, Any]]:
    ad: dict[str, Any] = {"name": "11ad", "technology": "11ad", "device": DEV_AD, "distance_m": 1.0}
    ac: dict[str, Any] = {"name": "11ac", "technology": "11ac", "device": DEV_AC, "distance_m": 1.0}
    if events_ad:
        ad["event"] = events_ad
    if events_ac:
        ac["event"] = events_ac
    return [ad, ac]


def mptcp_flow(direction: str, scheduler: str, ratio: int | None = None, **more: Any) -> dict[str, Any]:
    f: dict[str, Any] = {"name": "mptcp", "kind": "mptcp", "direction": direction,
                         "kernel": "linux-v0.9x", "scheduler": scheduler}
    if ratio is not None:
        f["ratio"] = ratio
    f.update(more)
    return f


def tcp_flow(direction: str, path: str) -> dict[str, Any]:
    return {"name": f"tcp-{path}", "kind": "tcp", "path": path, "direction": direction, "cc": "cubic"}


def scenario(name: str, duration_s: float, flow: dict[str, Any], ps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "description": f"seed {name}", "duration_s": duration_s, "path": ps, "flow": [flow]}


def subflow_mbps(res) -> dict[str, float]:
    f = res.summary["flows"][0]
    out = {"goodput_mbps": float(f["goodput_mbps"])}
    for s in f.get("subflows") or []:
        out[f"{s['path']}_mbps"] = float(s["goodput_mbps"])
    return out


def _fig(nrows: int, ncols: int, w: float = 6.0, h: float = 3.4):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), dpi=100, squeeze=False)
    return plt, fig, axes


def _save(plt, fig, path: Path, title: str) -> None:
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _sel(runs: pd.DataFrame, **where: Any) -> pd.DataFrame:
    m = np.ones(len(runs), dtype=bool)
    for k, v in where.items():
        m &= (runs[k] == v).to_numpy()
    return runs[m]


def _mean(runs: pd.DataFrame, col: str = "goodput_mbps", **where: Any) -> float:
    return stats(_sel(runs, **where)[col])["mean"]


# --------------------------------------------------------------------------- 002-fixedratio


def _fr_points(mode: Mode) -> list[Point]:
    pts = []
    for d, direction in DIRS.items():
        for path in ("11ad", "11ac"):
            pts.append(Point({"dir": d, "kind": f"tcp-{path}", "ratio": -1},
                             scenario("002-fixedratio", mode.duration_s, tcp_flow(direction, path), paths())))
        for r in (RATIOS_FAST if mode.fast else RATIOS_FULL):
            pts.append(Point({"dir": d, "kind": "fixedratio", "ratio": r},
                             scenario("002-fixedratio", mode.duration_s, mptcp_flow(direction, "fixedratio", r), paths())))
    return pts


def _fr_measure(res, point: Point, mode: Mode) -> dict[str, Any]:
    if point.key["kind"] == "fixedratio":
        row = subflow_mbps(res)
    else:
        row = {"goodput_mbps": float(res.summary["flows"][0]["goodput_mbps"])}
    row.setdefault("11ad_mbps", np.nan)
    row.setdefault("11ac_mbps", np.nan)
    return row


def _plot_fr(runs: pd.DataFrame, series, path: Path) -> None:
    if not len(runs):
        return
    plt, fig, axes = _fig(1, 3, w=5.0)
    ax = axes[0, 0]  # Fig. 1: single paths and MPTCP at the optimal ratio
    groups, bars = [], {"11ad": [], "11ac": [], "MPTCP": []}
    for d in DIRS:
        groups.append("downlink" if d == "down" else "uplink")
        bars["11ad"].append(stats(_sel(runs, dir=d, kind="tcp-11ad")["goodput_mbps"]))
        bars["11ac"].append(stats(_sel(runs, dir=d, kind="tcp-11ac")["goodput_mbps"]))
        bars["MPTCP"].append(stats(_sel(runs, dir=d, kind="fixedratio", ratio=OPT[d])["goodput_mbps"]))
    x = np.arange(len(groups))
    for i, (lab, sts) in enumerate(bars.items()):
        ax.bar(x + (i - 1) * 0.27, [s["mean"] for s in sts], 0.27, label=lab,
               yerr=[s["std"] if np.isfinite(s["std"]) else 0 for s in sts], capsize=2)
    for i, d in enumerate(DIRS):
        ax.hlines(SUM[d], i - 0.45, i + 0.45, colors="0.3", linestyles="--", linewidth=0.8)
    ax.set_xticks(x, groups)
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title("Fig. 1: SPTCP and MPTCP (FixedRatio 73:27 / 70:30)", fontsize="medium")
    ax.legend(fontsize="small")
    for ax, d in zip(axes[0, 1:], DIRS):  # Figs. 4a / 4c: throughput vs ratio
        fr = _sel(runs, dir=d, kind="fixedratio")
        g = fr.groupby("ratio")
        rs = np.array(sorted(fr["ratio"].unique()))
        for col, lab in (("goodput_mbps", "MPTCP"), ("11ad_mbps", "11ad subflow"), ("11ac_mbps", "11ac subflow")):
            m = g[col].mean().reindex(rs)
            s = g[col].std().reindex(rs).fillna(0)
            ax.errorbar(rs, m, yerr=s, marker="o", ms=3, capsize=2, label=lab)
        ax.axvline(OPT[d], color="0.4", linestyle=":", linewidth=0.8)
        ax.set_xlabel("packets to 11ad per 100 (ratio 11ad:11ac)")
        ax.set_ylabel("throughput (Mbit/s)")
        ax.set_title(f"Fig. 4{'a' if d == 'down' else 'c'}: {'downlink' if d == 'down' else 'uplink'} vs ratio",
                     fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    _save(plt, fig, path, "002-fixedratio: ROG Phone II, FixedRatio MPTCP (mean, std over runs)")


experiment(Experiment(
    id="002-fixedratio", paper=PAPER, title="Single paths and FixedRatio MPTCP over the ratio sweep",
    figure="seed 002 Fig. 1, Figs. 4a/4c (throughput)", points=_fr_points, measure=_fr_measure, plot=_plot_fr,
))


def _check_fr(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    parts = []
    for d in DIRS:
        for p in ("11ad", "11ac"):
            v = _mean(runs, dir=d, kind=f"tcp-{p}")
            c.within(f"{d}link SPTCP {p} mean", v, SINGLE[(p, d)], "Mbit/s")
        fr = _sel(runs, dir=d, kind="fixedratio")
        means = fr.groupby("ratio")["goodput_mbps"].mean().sort_index()
        at_opt = float(means.get(OPT[d], np.nan))
        c.within(f"{d}link MPTCP FixedRatio {OPT[d]}:{100 - OPT[d]} mean", at_opt, SUM[d], "Mbit/s")
        rs, ms = list(means.index), list(means.to_numpy())
        k = int(np.nanargmax(ms)) if len(ms) else 0
        peak = rs[k] if rs else None
        c.add(f"{d}link: sweep peak at ratio {peak} ({fmt(ms[k]) if ms else 'n/a'} Mbit/s) is one of the paper's "
              f"optimal ratios {sorted(OPT.values())}", peak in OPT.values())
        bad = [f"{rs[i]}->{rs[i + 1]}" for i in range(len(ms) - 1)
               if (i < k and not ms[i + 1] > ms[i]) or (i >= k and not ms[i + 1] < ms[i])]
        c.add(f"{d}link: one peak (mean rises at every step up to it, falls after): "
              f"[{', '.join(f'{r}:{fmt(m)}' for r, m in zip(rs, ms))}]"
              + (f"; not at {', '.join(bad)}" if bad else ""), not bad)
        parts.append(f"{d}: SPTCP 11ad {fmt(_mean(runs, dir=d, kind='tcp-11ad'))}, 11ac "
                     f"{fmt(_mean(runs, dir=d, kind='tcp-11ac'))}, MPTCP@{OPT[d]} {fmt(at_opt)}, peak {peak}")
    return "; ".join(parts) + " Mbit/s", c.items


claim(Claim(
    id="002-fixedratio", experiment="002-fixedratio",
    claim="Single path: 11ad 1600/1450 Mbps, 11ac 600/600 (down/up). FixedRatio at the throughput ratio "
          "(73:27 down, 70:30 up) reaches about the sum (2.2 / 2.05 Gbps); the ratio sweep has one "
          "throughput-optimal peak there",
    paper="Section 3.2, Fig. 1, Figs. 4a/4c: SPTCP 11ad 1600 / 1450, 11ac 600 / 600 Mbit/s; MPTCP at 73:27 "
          "(down) and 70:30 (up) near 2200 / 2050 Mbit/s; throughput vs ratio peaks at the ratio of the "
          "path throughputs",
    criterion="each SPTCP mean within 15% of the paper's; the MPTCP mean at 73 (down) / 70 (up) within 15% "
              "of 2200 / 2050; in each direction the sweep's highest mean is at 70 or 73 and the means "
              "rise at every step up to it and fall at every step after (0:100 .. 100:0 by 10 plus 70, 73; "
              "fast mode 0, 30, 50, 70, 73, 90, 100)",
    check=_check_fr,
))
