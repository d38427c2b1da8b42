"""Seed 004: AMuSe (poster fragment), and x-musher (MuSher, MobiCom'19, as docs/facts.md summarises it).
The AMuSe poster (a fragment without its title block; docs/facts.md, Sources).

Set-up: seed 002's dual-band phone (``seed002.paths``: ROG Phone II presets 1 m from the AP),
backlogged MPTCP on the v0.9x kernel the papers ran (``kernel = "linux-v0.9x"``), whose default
scheduler is minRTT: "default MPTCP" below. AMuSe runs as ``scheduler = "amuse"`` with only the
mechanism under test switched on, starting from seed 002's throughput-optimal ratio; MuSher
(x-musher) starts from the same ratio. Direction: downlink (seed 002's main set-up, 73:27) for
contention and blockage, whose mechanisms act on whichever host sends; uplink (70:30) for the
scan, whose mechanism needs the scanning phone to be the sender (see 004-scan below).

The poster gives no scan interval or length, no contention traffic details beyond 100-400 Mbps,
and no blockage length; the values chosen here are stated beside each experiment (ours, fixed a
priori, the same for every scheduler).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from . import plotting
from .registry import Checks, Claim, Experiment, Mode, Point, claim, experiment, fmt, mean_of, select_rows, stats
from .seed002 import mptcp_flow, paths, scenario, tcp_flow

PAPER = "004"
BIN_S = 0.1  # iperf3's 100 ms reports (seed 002 section 2), the intervals' default
START_RATIO = 73  # seed 002: the throughput-optimal downlink ratio
DEFAULT = {"scheduler": "minrtt"}  # v0.9x default
KINDS = {
    "default": lambda: dict(DEFAULT),
    "amuse-scan": lambda: {"scheduler": "amuse", "ratio": START_RATIO,
                           "amuse": {"scan": True, "contention": False, "blockage": False}},
    "amuse-blockage": lambda: {"scheduler": "amuse", "ratio": START_RATIO,
                               "amuse": {"scan": False, "contention": False, "blockage": True}},
    "musher": lambda: {"scheduler": "musher", "ratio": START_RATIO},
}


def _flow(kind: str, **more: Any) -> dict[str, Any]:
    spec = KINDS[kind]()
    sched = spec.pop("scheduler")
    ratio = spec.pop("ratio", None)
    return mptcp_flow("download", sched, ratio, **spec, **more)


def _bins(res, duration_s: float) -> dict[int, np.ndarray]:
    """Per-subflow (and -1: connection) Mbit/s in 100 ms bins."""
    iv = res.intervals
    n = int(round(duration_s / BIN_S))
    out: dict[int, np.ndarray] = {}
    for sf, g in iv.groupby("subflow"):
        a = np.zeros(n)
        idx = np.round(g["t_s"].to_numpy(dtype=float) / BIN_S).astype(int)
        ok = (idx >= 0) & (idx < n)
        np.add.at(a, idx[ok], g["mbps"].to_numpy(dtype=float)[ok])
        out[int(sf)] = a
    for k in (-1, 0, 1):
        out.setdefault(k, np.zeros(n))
    return out


def _series(b: dict[int, np.ndarray]) -> pd.DataFrame:
    n = len(b[-1])
    t = np.arange(n) * BIN_S
    return pd.DataFrame({"t_s": t, "conn_mbps": b[-1], "ad_mbps": b[0], "ac_mbps": b[1]})


_KIND_LABEL = {"default": "default MPTCP (minRTT)", "amuse-scan": "AMuSe-SCAN", "amuse-blockage": "AMuSe-BLOCKAGE",
               "musher": "MuSher", "fixedratio": "FixedRatio (adjusted ratio)"}


def _timeline_plot(series: pd.DataFrame, kinds: list[str], ax, col: str, spans, title: str,
                   span_label: str, span_kind: str = "outage") -> None:
    """The mean over runs of each scheduler's 100 ms bins, events shaded."""
    for kind in kinds:
        s = series[series["kind"] == kind]
        if not len(s):
            continue
        m = s.groupby("t_s")[col].mean()
        plotting.step(ax, m.index, m.to_numpy(), BIN_S, linewidth=1.2, label=_KIND_LABEL.get(kind, kind),
                      color=plotting.colour(kind))
    for i, (a, b) in enumerate(spans):
        plotting.shade(ax, a, b, label=span_label if i == 0 else None, kind=span_kind)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3)


# --------------------------------------------------------------------------- 004-scan

# Scans on the 11ac interface (ours; the poster gives no numbers): a 1 s scan every 4 s. Full
# mode: 10 s, scans at 2 and 6 s; fast: 4.5 s, one scan at 2 s (bins away from scans remain).
#
# How the phone scans while associated: not one continuous absence. A firmware (offload) scan
# and mac80211's software scan both leave the home channel for one channel's dwell and come
# back between channels (the link/channel.rs defaults and their sources; docs/scenario.md).
# The phone's 11ac radio is a Qualcomm part (qcacld-3.0): an active channel costs
# gActiveMaxChannelTime = 40 ms away, a passive one gPassiveMaxChannelTime = 110 ms, and it
# rests gRestTimeConc = 100 ms at home in between. The 5 GHz channels with radar detection (DFS,
# 52-144: 16 of the 25 US channels) may only be scanned passively (mac80211: IEEE80211_CHAN_
# NO_IR / RADAR -> passive dwell, net/mac80211/scan.c), so most of a 5 GHz scan is passive
# dwells: the 1 s modelled here is that part, 110 ms away then 100 ms home. (With 40 ms active
# dwells the default scheduler loses less: see the report / docs.)
#
# Direction: uplink (phone -> server). AMuSe-SCAN "arbitrates the network scan requests
# generated from the user space and disables the scheduling of packets to the subflow where
# the request has been made ... waits for the subflow-level send-queue to be emptied out": the
# scan request, the packet scheduler it gates and the send queue it drains are on one host, the
# phone, so the phone is the MPTCP sender. (On a downlink the phone's scheduler would only
# carry ACKs and AMuSe-SCAN could not act.) AMuSe starts from seed 002's uplink optimum 70:30.
SCAN_EVERY_S = 4.0
SCAN_MS = 1000.0
SCAN_DWELL_MS = 110.0  # qcacld-3.0 CFG_PASSIVE_MAX_CHANNEL_TIME_DEFAULT (DFS channels)
SCAN_REST_MS = 100.0  # qcacld-3.0 CFG_REST_TIME_CONC_DEFAULT
SCAN_DIRECTION = "upload"
SCAN_RATIO = 70  # seed 002: the throughput-optimal uplink ratio


def _scan_flow(kind: str) -> dict[str, Any]:
    spec = KINDS[kind]()
    sched = spec.pop("scheduler")
    ratio = SCAN_RATIO if spec.pop("ratio", None) is not None else None
    return mptcp_flow(SCAN_DIRECTION, sched, ratio, **spec)


def _scan_dur(mode: Mode) -> float:
    return 4.5 if mode.fast else mode.duration_s


def _scan_times(mode: Mode) -> list[float]:
    out, t = [], 2.0
    while t + SCAN_MS / 1000 <= _scan_dur(mode):
        out.append(t)
        t += SCAN_EVERY_S
    return out


def _scan_points(mode: Mode) -> list[Point]:
    t0, dur = _scan_times(mode)[0], _scan_dur(mode)
    ev = [{"kind": "scan", "t_s": t0, "duration_s": dur - t0, "every_s": SCAN_EVERY_S, "scan_ms": SCAN_MS,
           "dwell_ms": SCAN_DWELL_MS, "rest_ms": SCAN_REST_MS}]
    return [Point({"kind": k}, scenario("004-scan", dur, _scan_flow(k), paths(events_ac=ev)))
            for k in ("default", "amuse-scan")]


def _scan_measure(res, point: Point, mode: Mode):
    b = _bins(res, _scan_dur(mode))
    t = np.arange(len(b[-1])) * BIN_S
    eps = 1e-9
    inside = np.zeros(len(t), dtype=bool)
    near = np.zeros(len(t), dtype=bool)
    for s in _scan_times(mode):
        e = s + SCAN_MS / 1000
        inside |= (t >= s - eps) & (t + BIN_S <= e + eps)
        near |= (t + BIN_S > s - 0.5) & (t < e + 0.5)
    outside = (t >= 1.0 - eps) & ~near
    row = {"goodput_mbps": float(res.summary["flows"][0]["goodput_mbps"])}
    for name, m in (("scan", inside), ("out", outside)):
        row[f"conn_{name}_mbps"] = float(b[-1][m].mean()) if m.any() else np.nan
        row[f"ad_{name}_mbps"] = float(b[0][m].mean()) if m.any() else np.nan
    return row, _series(b)


SCAN_GAIN = 2.2  # the poster: AMuSe-SCAN's 802.11ad throughput during scans, over the default's


def _plot_scan(runs: pd.DataFrame, series, path: Path) -> None:
    if series is None or not len(series):
        return
    t_end = float(series["t_s"].max()) + BIN_S
    fast = t_end < 6
    spans = [(s, s + SCAN_MS / 1000) for s in _scan_times(Mode.make(fast=fast))]
    plt, fig, axes = plotting.figure(1, 3, w=5.0, h=3.6, gridspec_kw={"width_ratios": [2, 2, 1]})
    kinds = ["default", "amuse-scan"]
    _timeline_plot(series, kinds, axes[0, 0], "ad_mbps", spans, "Figs. 2(a) / 3: the 11ad subflow",
                   "11ac scanning (110 ms dwells, 100 ms home)", "scan")
    _timeline_plot(series, kinds, axes[0, 1], "conn_mbps", spans, "the MPTCP connection",
                   "11ac scanning (110 ms dwells, 100 ms home)", "scan")
    ax = axes[0, 2]
    st = [stats(select_rows(runs, kind=k)["ad_scan_mbps"]) for k in kinds]
    x = plotting.bars(ax, ["default", "AMuSe-\nSCAN"], {"11ad": st}, "11ad throughput in scans (Mbit/s)",
                      "11ad during scans\n(mean, min-max)", xlabel="scheduler", legend_kw=False,
                      group_colours=[plotting.colour(k) for k in kinds])
    plotting.paper_marks(ax, [x[1]], [SCAN_GAIN * st[0]["mean"]], half=0.4, label="paper: 2.2x the default")
    ax.set_ylim(0, 1.2 * max([SCAN_GAIN * st[0]["mean"]] + [s["max"] for s in st]))
    plotting.fig_legend(fig, axes, ncol=4)
    plotting.save(plt, fig, path, "004-scan", "periodic 11ac scans during an uplink MPTCP transfer: default (minRTT) "
                  "vs AMuSe-SCAN, 100 ms bins, mean of runs (seed 004 Fig. 2(a), Fig. 3)")


experiment(Experiment(
    id="004-scan", paper=PAPER, title="Periodic 11ac scans: default MPTCP vs AMuSe-SCAN",
    figure="seed 004 Fig. 2(a), Fig. 3 (scan)", points=_scan_points, measure=_scan_measure, plot=_plot_scan,
))


def _check_scan(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    d_in, d_out = mean_of(runs, "ad_scan_mbps", kind="default"), mean_of(runs, "ad_out_mbps", kind="default")
    a_in, a_out = mean_of(runs, "ad_scan_mbps", kind="amuse-scan"), mean_of(runs, "ad_out_mbps", kind="amuse-scan")
    c.below("default: 11ad subflow during scans", d_in, 0.85 * d_out, "Mbit/s",
            bound_text=f"85% of its {fmt(d_out)} Mbit/s outside scans (loses more than 15%)")
    c.at_least("AMuSe-SCAN: 11ad subflow during scans", a_in, 0.85 * a_out, "Mbit/s",
               bound_text=f"85% of its {fmt(a_out)} Mbit/s outside scans (kept within 15%)")
    # The gain is the 11ad subflow's: the poster's scan paragraph measures 802.11ad throughput
    # ("the 802.11ad throughput remains unaffected during the scan interval. We repeated the
    # measurements several times and observed 2.2x performance gain on average"), as Fig. 2(a)
    # does. The connection's ratio (which adds what the default's 11ac carries between dwells)
    # is printed beside it.
    gain = a_in / d_in if d_in > 0 else np.inf
    c.within("11ad throughput during scans, AMuSe-SCAN / default", gain, 2.2, "x")
    gd, ga = mean_of(runs, "conn_scan_mbps", kind="default"), mean_of(runs, "conn_scan_mbps", kind="amuse-scan")
    conn = ga / gd if gd > 0 else np.inf
    return (f"11ad during / outside scans: default {fmt(d_in)} / {fmt(d_out)}, AMuSe-SCAN {fmt(a_in)} / "
            f"{fmt(a_out)} Mbit/s: {fmt(gain)}x during scans; connection during scans {fmt(ga)} vs {fmt(gd)} "
            f"Mbit/s = {fmt(conn)}x"), c.items


claim(Claim(
    id="004-scan", experiment="004-scan",
    claim="Periodic scans on the 11ac interface: default MPTCP loses 11ad throughput during scans; "
          "AMuSe-SCAN keeps it, ~2.2x gain during the scan",
    paper="Fig. 2(a) / section 4: with default MPTCP the 11ad throughput collapses while 11ac scans; with "
          "AMuSe-SCAN it is unaffected; 2.2x average gain during the scan",
    criterion="100 ms bins fully inside a scan vs bins >= 0.5 s away from any scan (after 1 s): default's "
              "11ad mean inside < 85% of outside; AMuSe-SCAN's >= 85% of outside; 11ad mean inside "
              "scans AMuSe-SCAN / default within 15% of 2.2 (uplink, 110 ms passive dwells, 100 ms rests)",
    check=_check_scan,
))


# --------------------------------------------------------------------------- 004-contention

LOADS_FULL = [100, 200, 300, 400]
LOADS_FAST = [100, 400]
VHT_80_2SS_MBPS = 866.7  # docs/facts.md: 80 MHz 2SS MCS 9, short GI


def contention_ratio(load_mbps: float) -> int:
    """AMuSe-CONTENTION's ratio from the paths' throughputs: 11ad 1600 (seed 002) and 11ac 600
    reduced by the airtime the contending stations take (load / PHY rate, as the contention
    event defines it): 100 -> 75, 200 -> 78, 300 -> 80, 400 -> 83."""
    ac = 600.0 * (1.0 - load_mbps / VHT_80_2SS_MBPS)
    return int(round(100.0 * 1600.0 / (1600.0 + ac)))


def _cont_points(mode: Mode) -> list[Point]:
    dur = mode.duration_s
    pts = [Point({"load": 0, "kind": "tcp-11ad"}, scenario("004-contention", dur, tcp_flow("download", "11ad"), paths()))]
    for load in (LOADS_FAST if mode.fast else LOADS_FULL):
        ev = [{"kind": "contention", "t_s": 0.0, "duration_s": dur, "load_mbps": float(load)}]
        pts.append(Point({"load": load, "kind": "tcp-11ac"},
                         scenario("004-contention", dur, tcp_flow("download", "11ac"), paths(events_ac=ev))))
        for k in ("default", "fixedratio", "musher"):
            fl = mptcp_flow("download", "fixedratio", contention_ratio(load)) if k == "fixedratio" else _flow(k)
            pts.append(Point({"load": load, "kind": k}, scenario("004-contention", dur, fl, paths(events_ac=ev))))
    return pts


def _cont_measure(res, point: Point, mode: Mode) -> dict[str, Any]:
    return {"goodput_mbps": float(res.summary["flows"][0]["goodput_mbps"])}


def _expected(runs: pd.DataFrame, load: int) -> float:
    return mean_of(runs, kind="tcp-11ad") + mean_of(runs, kind="tcp-11ac", load=load)


def _plot_cont(runs: pd.DataFrame, series, path: Path) -> None:
    loads = sorted(x for x in runs["load"].unique() if x > 0)
    if not loads:
        return
    plt, fig, axes = plotting.figure(1, 1, w=7.5, h=4.0)
    ax = axes[0, 0]
    exp = [{"mean": _expected(runs, L), "min": np.nan, "max": np.nan} for L in loads]
    bars = {"expected sum (11ad + contended 11ac)": exp}
    colours = {"expected sum (11ad + contended 11ac)": plotting.colour("expected sum")}
    pts = {}
    for k in ("default", "fixedratio", "musher"):
        if (runs["kind"] == k).any():
            lab = _KIND_LABEL[k]
            bars[lab] = [stats(select_rows(runs, kind=k, load=L)["goodput_mbps"]) for L in loads]
            colours[lab] = plotting.colour(k)
            pts[lab] = [select_rows(runs, kind=k, load=L)["goodput_mbps"] for L in loads]
    plotting.bars(ax, [f"{L} Mbit/s" for L in loads], bars, "MPTCP throughput (Mbit/s)",
                  "Fig. 3(a): mean, min-max and runs (paper: FixedRatio close to the expected sum,\n"
                  "the default can be much lower)", xlabel="contending traffic on the 11ac channel",
                  colours=colours, points=pts, legend_kw=False)
    ax.set_ylim(0, 1.15 * max(e["mean"] for e in exp))
    plotting.fig_legend(fig, axes, ncol=3)
    plotting.save(plt, fig, path, "004-contention", "downlink MPTCP over 11ad + 11ac with contention on the 11ac "
                  "channel (seed 004 Fig. 3(a))")


experiment(Experiment(
    id="004-contention", paper=PAPER, title="11ac contention: expected sum, default, FixedRatio, MuSher",
    figure="seed 004 Fig. 3(a)", points=_cont_points, measure=_cont_measure, plot=_plot_cont,
))


def _check_cont(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    loads = sorted(x for x in runs["load"].unique() if x > 0)
    parts, worst = [], np.inf
    for L in loads:
        exp = _expected(runs, L)
        fr, de = mean_of(runs, kind="fixedratio", load=L), mean_of(runs, kind="default", load=L)
        c.within(f"{L} Mbps: FixedRatio {contention_ratio(L)}:{100 - contention_ratio(L)} mean vs the expected sum",
                 fr, exp, "Mbit/s")
        c.below(f"{L} Mbps: default mean", de, fr, "Mbit/s", bound_text=f"FixedRatio {fmt(fr)} Mbit/s")
        worst = min(worst, de / exp if exp else np.inf)
        parts.append(f"{L}: expected {fmt(exp)}, FixedRatio {fmt(fr)}, default {fmt(de)}")
    c.below("lowest default / expected sum over the loads", worst, 0.85,
            bound_text="0.85 (much lower: more than 15% below at some load)")
    return "; ".join(parts) + " Mbit/s", c.items


claim(Claim(
    id="004-contention", experiment="004-contention",
    claim="100-400 Mbps of contention on 11ac: FixedRatio at the contention-adjusted ratio stays close to "
          "the expected sum; the default scheduler can be much lower",
    paper="Fig. 3(a): for 100-400 Mbps of contention, FixedRatio at the optimal ratio is close to the "
          "expected sum (11ad + contention-reduced 11ac) in all cases; default MPTCP can be much lower",
    criterion="expected sum = mean SPTCP 11ad + mean SPTCP 11ac under that contention; at every load "
              "FixedRatio's mean within 15% of it and the default's mean < FixedRatio's; at some load the "
              "default's mean < 85% of the expected sum (loads 100-400 by 100; fast: 100, 400)",
    check=_check_cont,
    needs=lambda k: k["kind"] != "musher",
))


# --------------------------------------------------------------------------- 004-blockage

# The poster gives no blockage length (criteria review of 2026-12-05, docs/reproduce.md): the claim
# is the mechanism, so blockages of 1 to 15 s in 1 s steps (fast: three of them) each block the
# 11ad beam (link lost) from 3 s, then re-train for 500 ms (the device's retrain_ms, given
# explicitly). The default's wait after the link returns is then set by what is left of its 11ad
# subflow's RTO backoff interval, measured in the same run: the first retransmission on that
# subflow at or after the link's return (the 10 ms timeline's retransmission counter).
BLOCK_T_S, RETRAIN_MS = 3.0, 500.0
BLOCK_LENGTHS_S = {False: tuple(float(x) for x in range(1, 16)), True: (1.0, 7.0, 13.0)}
RESUME_MBPS = 100.0  # a 100 ms bin with >= 100 Mbit/s on the 11ad subflow = "using 11ad again"
WAIT_TOL, WAIT_FLOOR_S = 0.10, 0.2  # the default's wait vs the backoff left: within 10 % or 0.2 s
LONG_WAIT_S = 10.0  # "~12 s": the wait exceeds 10 s for some length
# x-musher's blockage case: one 5 s blockage (its criterion's set-up, unchanged).
MUSHER_BLOCK_S = 5.0


def link_back_s(length_s: float) -> float:
    return BLOCK_T_S + length_s + RETRAIN_MS / 1000


def block_run_s(length_s: float) -> float:
    """Long enough to see a wait of twice the time without a link (the RTO backoff interval
    reached is at most about that) plus 2 s; a run that never resumes counts the time left, a
    lower bound."""
    return float(np.ceil(link_back_s(length_s) + 2 * (length_s + RETRAIN_MS / 1000) + 2.0))


def _block_scenario(name: str, kind: str, length_s: float) -> dict[str, Any]:
    ev = [{"kind": "blockage", "t_s": BLOCK_T_S, "duration_s": length_s, "retrain_ms": RETRAIN_MS}]
    return scenario(name, block_run_s(length_s), _flow(kind), paths(events_ad=ev))


def _block_points(mode: Mode) -> list[Point]:
    return [Point({"kind": k, "block_s": L}, _block_scenario("004-blockage", k, L))
            for L in BLOCK_LENGTHS_S[mode.fast] for k in ("default", "amuse-blockage")]


def _first_retransmission_after(res, subflow: int, t0: float) -> float:
    """When `subflow` next retransmitted at or after `t0` (s; NaN if it did not): the timeline's
    cumulative retransmission counter rising, at its 10 ms sampling."""
    tl = res.timeline
    g = tl[tl["subflow"] == subflow] if "subflow" in tl else tl
    t = g["t_s"].to_numpy(dtype=float)
    rx = g["retransmits"].to_numpy(dtype=float)
    rise = np.flatnonzero(np.diff(rx) > 0) + 1
    rise = rise[t[rise] >= t0 - 1e-9]
    return float(t[rise[0]]) if len(rise) else float("nan")


def _block_measure(res, point: Point, mode: Mode):
    length = float(point.key.get("block_s", MUSHER_BLOCK_S))
    back, dur = link_back_s(length), block_run_s(length)
    b = _bins(res, dur)
    t = np.arange(len(b[0])) * BIN_S
    after = np.nonzero((t >= back - 1e-9) & (b[0] >= RESUME_MBPS))[0]
    resumed = bool(len(after))
    delay = float(t[after[0]] - back) if resumed else float(dur - back)
    post = (t >= back - 1e-9) & (t < back + 5.0)
    f = res.summary["flows"][0]
    ad = [sf for sf in f.get("subflows", []) if str(sf.get("path")) == "11ad"]
    rtos = int(sum(int(sf.get("rto_count") or 0) for sf in ad))
    sub = int(ad[0]["subflow"]) if ad else 0
    rtx = _first_retransmission_after(res, sub, back)
    return {"goodput_mbps": float(f["goodput_mbps"]), "resume_delay_s": delay, "resumed": resumed,
            "post_mbps": float(b[-1][post].mean()), "ad_rtos": rtos,
            # What was left of the 11ad subflow's backoff when the link came back.
            "backoff_left_s": rtx - back if np.isfinite(rtx) else float(dur - back)}, _series(b)


PAPER_RESUME_S = {"default": 12.0, "amuse-blockage": 1.0}  # the poster: 12 s (Fig. 2(c)); < 1 s (Fig. 3(b))


def _lengths(runs: pd.DataFrame) -> list[float]:
    return sorted(float(x) for x in runs["block_s"].dropna().unique()) if "block_s" in runs else []


def _plot_block(runs: pd.DataFrame, series, path: Path) -> None:
    """Left: the wait after the link's return against the blockage's length, both schedulers, and
    what was left of the default's RTO backoff; right: the 11ad subflow over time for the longest
    blockage whose default wait exceeds 10 s (else the longest), first seed."""
    if not len(runs):
        return
    plt, fig, axes = plotting.figure(1, 2, w=6.0, h=3.6, gridspec_kw={"width_ratios": [2, 3]})
    ax = axes[0, 0]
    Ls = _lengths(runs)
    for k in ("default", "amuse-blockage"):
        st = [stats(select_rows(runs, kind=k, block_s=L)["resume_delay_s"]) for L in Ls]
        ax.errorbar(Ls, [x["mean"] for x in st],
                    yerr=[[x["mean"] - x["min"] for x in st], [x["max"] - x["mean"] for x in st]],
                    marker="o", ms=4, color=plotting.colour(k), label=f"mmpath: {_KIND_LABEL[k]}", capsize=2)
    left = [stats(select_rows(runs, kind="default", block_s=L)["backoff_left_s"])["mean"] for L in Ls]
    ax.plot(Ls, left, linestyle=":", color="k", marker="x", ms=5,
            label="what was left of the default's\n11ad RTO backoff at the return")
    ax.axhline(PAPER_RESUME_S["default"], color=plotting.colour("default"), linestyle="--", linewidth=1.0,
               label="paper: default ~12 s (length not given)")
    ax.axhline(PAPER_RESUME_S["amuse-blockage"], color=plotting.colour("amuse-blockage"), linestyle="--",
               linewidth=1.0, label="paper: AMuSe-BLOCKAGE < 1 s")
    ax.set_xlabel("blockage length (s)")
    ax.set_ylabel("11ad unused after the link's return (s)")
    ax.set_title("wait by blockage length (mean, min-max)", fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax = axes[0, 1]
    dflt = {L: stats(select_rows(runs, kind="default", block_s=L)["resume_delay_s"])["mean"] for L in Ls}
    long_ = [L for L in Ls if dflt[L] > LONG_WAIT_S]
    show = max(long_) if long_ else max(Ls)
    if series is not None and len(series) and "block_s" in series:
        s = series[(series["block_s"] == show) & (series["seed"] == series["seed"].min())]
        for k in ("default", "amuse-blockage"):
            g = s[s["kind"] == k]
            if len(g):
                ax.plot(g["t_s"] + BIN_S, g["ad_mbps"], linewidth=0.9, color=plotting.colour(k),
                        label=None)
        plotting.shade(ax, BLOCK_T_S, BLOCK_T_S + show, "11ad blocked")
        plotting.shade(ax, BLOCK_T_S + show, link_back_s(show), "beam re-training", kind="retrain")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("11ad subflow (Mbit/s)")
    ax.set_title(f"the 11ad subflow in 100 ms bins: {show:g} s blockage, first run", fontsize="medium")
    ax.grid(True, alpha=0.3)
    plotting.fig_legend(fig, axes, ncol=3)
    plotting.save(plt, fig, path, "004-blockage", f"11ad blocked 1-15 s at {BLOCK_T_S:g} s, then {RETRAIN_MS:g} ms "
                  "re-training: when 11ad is used again (seed 004 Figs. 2(c), 3(b))")


experiment(Experiment(
    id="004-blockage", paper=PAPER, title="11ad blockages of 1-15 s: when the 11ad subflow is used again",
    figure="seed 004 Fig. 2(c), Fig. 3(b)", points=_block_points, measure=_block_measure, plot=_plot_block,
))


def _check_block(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    Ls = _lengths(runs)
    waits, parts = {}, []
    for L in Ls:
        d = stats(select_rows(runs, kind="default", block_s=L)["resume_delay_s"])["mean"]
        left = stats(select_rows(runs, kind="default", block_s=L)["backoff_left_s"])["mean"]
        waits[L] = d
        tol = max(WAIT_TOL * left, WAIT_FLOOR_S) if np.isfinite(left) else np.nan
        c.add(f"{L:g} s blockage: default's wait after the link's return (11ad >= 100 Mbit/s in a 100 ms bin) = "
              f"{fmt(d, 's')}, what was left of its 11ad RTO backoff {fmt(left, 's')} (within 10 % or 0.2 s: "
              f"{fmt(left - tol)}..{fmt(left + tol, 's')})", bool(np.isfinite(d) and abs(d - left) <= tol))
        parts.append(f"{L:g} s: {fmt(d)} (backoff left {fmt(left)})")
    longest = max(waits.values()) if waits else np.nan
    c.above("longest default wait over the blockage lengths", longest, LONG_WAIT_S, "s",
            bound_text=f"{LONG_WAIT_S:g} s (paper ~12 s)")
    a = {L: stats(select_rows(runs, kind="amuse-blockage", block_s=L)["resume_delay_s"])["mean"] for L in Ls}
    worst = max(a, key=lambda L: a[L]) if a else None
    c.below(f"AMuSe-BLOCKAGE's longest wait over the lengths (at {worst:g} s)" if worst is not None
            else "AMuSe-BLOCKAGE's longest wait", a[worst] if worst is not None else np.nan, 1.0, "s")
    for kind in ("default", "amuse-blockage"):
        r = select_rows(runs, kind=kind)["resumed"]
        c.add(f"{kind}: every run uses the 11ad subflow again within the run ({int(r.sum())} of {len(r)})",
              bool(len(r)) and bool(r.all()))
    return (f"default's wait after the link's return by blockage length: {'; '.join(parts)} s; "
            f"AMuSe-BLOCKAGE at most {fmt(a[worst] if worst is not None else np.nan)} s"), c.items


claim(Claim(
    id="004-blockage", experiment="004-blockage",
    claim="After 11ad blockage ends, default MPTCP resumes using 11ad only after ~12 s; AMuSe-BLOCKAGE in < 1 s",
    paper="Fig. 2(c): default MPTCP (pf set, cwnd 1) uses the 11ad subflow again 12 s after the link is back; "
          "Fig. 3(b): with AMuSe-BLOCKAGE, in less than 1 s (the blockage's length is not given)",
    criterion="11ad blocked at 3 s for 1 to 15 s in 1 s steps (fast: 1, 7, 13 s), then 500 ms of re-training "
              "(criteria review 2026-12-05); wait = from the link's return to the first 100 ms bin with >= 100 "
              "Mbit/s on the 11ad subflow (every run must get there; runs last twice the time without a link "
              "after it, plus 2 s). At every length the default's mean wait equals what was left of its 11ad "
              "subflow's RTO backoff at the return (its next retransmission, same runs) within 10 % or 0.2 s; "
              "the default's wait exceeds 10 s at some length; AMuSe-BLOCKAGE's mean wait < 1 s at every length",
    check=_check_block,
))


# --------------------------------------------------------------------------- x-musher


def _check_musher(runs: pd.DataFrame, mode: Mode):
    c = Checks()
    parts = []
    if "load" in runs.columns:
        for L in sorted(x for x in runs["load"].dropna().unique() if x > 0):
            m, d = mean_of(runs, kind="musher", load=L), mean_of(runs, kind="default", load=L)
            c.above(f"contention {int(L)} Mbps: MuSher mean ({fmt(d and m / d)}x default; paper up to 1.5x)", m, d,
                    "Mbit/s", bound_text=f"default {fmt(d)} Mbit/s")
            parts.append(f"{int(L)} Mbps: {fmt(m)} vs {fmt(d)}")
    if "resume_delay_s" in runs.columns:
        blk = runs[runs["resume_delay_s"].notna()]
        m, d = mean_of(blk, "resume_delay_s", kind="musher"), mean_of(blk, "resume_delay_s", kind="default")
        c.below(f"blockage: MuSher's 11ad resume delay (default / MuSher = {fmt(d / m if m > 0 else np.inf)}x; "
                "paper 8x faster)", m, d, "s", bound_text=f"default's {fmt(d)} s")
        parts.append(f"resume {fmt(m)} vs {fmt(d)} s")
    return "MuSher vs default: " + "; ".join(parts), c.items


# x-musher draws on two experiments; the registry gives a claim one, so it gets its own
# experiment made of the points it needs. Its contention differs from 004-contention's in one
# respect: the contending stations start mid-run, at MUSHER_ONSET_S. MuSher is a reaction to
# change (its searches are triggered by a sustained rate or send-queue change, docs/facts.md /
# mptcp_musher.c trigger_search); with contention present from t = 0 it has no change to react
# to and keeps its 73:27 start, which measures the start ratio, not the scheduler. Throughput
# is the connection's mean from the onset to the end of the run, for both schedulers.
MUSHER_ONSET_S = 4.0
MUSHER_RUN_S = {True: 10.0, False: 16.0}  # fast / full: 6 s or 12 s of contention


def _musher_cont_points(mode: Mode) -> list[Point]:
    dur = MUSHER_RUN_S[mode.fast]
    pts = []
    for load in (LOADS_FAST if mode.fast else LOADS_FULL):
        ev = [{"kind": "contention", "t_s": MUSHER_ONSET_S, "duration_s": dur - MUSHER_ONSET_S,
               "load_mbps": float(load)}]
        for k in ("default", "musher"):
            pts.append(Point({"load": load, "kind": k, "case": "contention"},
                             scenario("x-musher", dur, _flow(k), paths(events_ac=ev))))
    return pts


def _musher_points(mode: Mode) -> list[Point]:
    pts = _musher_cont_points(mode)
    for k in ("default", "musher"):
        pts.append(Point({"kind": k, "load": -1, "case": "blockage"},
                         _block_scenario("x-musher", k, MUSHER_BLOCK_S)))
    return pts


def _musher_measure(res, point: Point, mode: Mode):
    if point.key["case"] == "blockage":
        row, _ = _block_measure(res, point, mode)
        return row
    dur = MUSHER_RUN_S[mode.fast]
    b = _bins(res, dur)
    t = np.arange(len(b[-1])) * BIN_S
    after = t >= MUSHER_ONSET_S - 1e-9
    return {"goodput_mbps": float(b[-1][after].mean()), "resume_delay_s": np.nan}


MUSHER_GAIN, MUSHER_RECOVERY = 1.5, 8.0  # MuSher's paper: up to 1.5x throughput, 8x faster recovery


def _plot_musher(runs: pd.DataFrame, series, path: Path) -> None:
    if not len(runs):
        return
    kinds = ("default", "musher")
    plt, fig, axes = plotting.figure(1, 2, w=5.2, h=3.8, gridspec_kw={"width_ratios": [3, 2]})
    ax = axes[0, 0]
    cont = runs[runs["case"] == "contention"]
    loads = sorted(int(x) for x in cont["load"].unique())
    if loads:
        x = plotting.bars(ax, [f"{L} Mbit/s" for L in loads],
                          {_KIND_LABEL[k]: [stats(select_rows(cont, kind=k, load=L)["goodput_mbps"]) for L in loads]
                           for k in kinds},
                          "throughput from the onset (Mbit/s)",
                          f"contention on 11ac from {MUSHER_ONSET_S:g} s (mean, min-max)",
                          xlabel="contending traffic on the 11ac channel", legend_kw=False,
                          colours={_KIND_LABEL[k]: plotting.colour(k) for k in kinds})
        dflt = [stats(select_rows(cont, kind="default", load=L)["goodput_mbps"])["mean"] for L in loads]
        plotting.paper_marks(ax, x + 0.2, [MUSHER_GAIN * d for d in dflt], half=0.2,
                             label="MuSher's paper: up to 1.5x the default")
        ax.set_ylim(0, 1.15 * MUSHER_GAIN * max(dflt))
    else:
        plotting.empty(ax, "no contention runs", "contending traffic", "throughput (Mbit/s)", "contention")
    ax = axes[0, 1]
    blk = runs[runs["case"] == "blockage"]
    if len(blk):
        st = [stats(select_rows(blk, kind=k)["resume_delay_s"]) for k in kinds]
        x = plotting.bars(ax, [_KIND_LABEL[k].replace(" (", "\n(") for k in kinds], {"delay": st},
                          "11ad resume delay (s)", "a 5 s 11ad blockage: delay from the\nlink's return to "
                          "11ad use (mean, min-max)", xlabel="scheduler", legend_kw=False,
                          group_colours=[plotting.colour(k) for k in kinds])
        plotting.paper_marks(ax, [x[1]], [st[0]["mean"] / MUSHER_RECOVERY], half=0.4,
                             label="MuSher's paper: 8x faster (default / 8)")
        for xi, s_ in zip(x, st):
            ax.text(xi, s_["max"], f"{s_['mean']:.2f} s", ha="center", va="bottom", fontsize="small")
        ax.set_ylim(0, 1.25 * max([s_["max"] for s_ in st if np.isfinite(s_["max"])] + [0.1]))
    else:
        plotting.empty(ax, "no blockage runs", "scheduler", "delay (s)", "blockage")
    plotting.fig_legend(fig, axes, ncol=2)
    plotting.save(plt, fig, path, "x-musher", "MuSher vs default MPTCP (minRTT) from 73:27, downlink, ROG Phone "
                  "II presets (beyond the seeds: MuSher, MobiCom'19)")


experiment(Experiment(
    id="x-musher", paper=PAPER, title="MuSher vs default MPTCP under contention and blockage",
    figure="MuSher (MobiCom'19) throughput under contention, recovery after blockage",
    points=_musher_points, measure=_musher_measure, plot=_plot_musher,
))

claim(Claim(
    id="x-musher", experiment="x-musher",
    claim="MuSher beats the default scheduler under contention and blockage, in the direction of its paper's "
          "1.5x throughput and 8x faster recovery",
    paper="MuSher (MobiCom'19): up to 1.5x throughput and 8x faster recovery than default MPTCP in WLANs",
    criterion="004-contention's loads, but starting at 4 s of a 16 s run (fast: 10 s), and a 5 s 11ad blockage at 3 s; "
              "MuSher from 73:27: at every contention load MuSher's mean connection throughput from the onset on > "
              "default's, and MuSher's mean 11ad resume delay < default's (ratios printed against the paper's "
              "1.5x / 8x)",
    check=_check_musher,
))
