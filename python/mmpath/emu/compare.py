"""`mmpath emu run --compare`: the same scenario, seed and overrides through the simulator, side
by side with the emulation (the check `mmpath reproduce x-kernel` makes for one scenario, for
any scenario a user emulates).

Per flow: goodput (iperf3's, against the simulator's), and, when a path of the flow goes down
(or a wired one stalls at rate 0) during the run, the outage and the recovery as x-kernel
measures them: the outage is the time after the first link-down with the flow's 100 ms
throughput under 10 % of its mean over the 2 s before; the recovery is the time from the
link's return until the 1 s mean is back to 90 % of that pre-outage mean
(mmpath.metrics.resaturation_time; None: not within the run).
Written as compare.json and compare.png (the two throughput series per flow) into the
emulator's output folder. The simulated side runs at the emulating kernel's CONFIG_HZ
(`tcp.kernel_hz`, kconfig.py): a build-time setting the emulator cannot give the kernel, so the
model follows the kernel rather than the other way round.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from .. import metrics
from ..api import simulate
from ..scenario import normalize
from ..lazy import numpy as np, pandas as pd, pyplot as plt  # on first use (start-up time): lazy.py
from ..table import align
from .holds import flow_paths
from .kconfig import host_hz

BIN_S = 0.1
PRE_S = 2.0  # x-kernel's pre-outage window
OUTAGE_FRAC = 0.10  # x-kernel: "below 10 % of the pre-blockage mean"


def _down_up(events: pd.DataFrame, paths: set[str], wired: set[str] = frozenset()) -> tuple[float, float] | None:
    """The first outage of `paths` in the simulator's events (metrics.link_outages: on the
    `wired` ones a rate 0 counts as down until the next rate above 0, as the emulator holds a
    stall as it holds a down step): its start and the link's return (inf: not back)."""
    if events is None or not len(events):
        return None
    spans = metrics.link_outages(events["t_s"], events["path"], events["kind"], events["value"], paths, wired=wired)
    return spans[0] if spans else None


def _outage_recovery(t: np.ndarray, y: np.ndarray, down: float, up: float, end_s: float) -> dict[str, Any]:
    """x-kernel's measures (metrics.outage_and_recovery); None where there is no pre-outage
    throughput to compare with, and no recovery when the link is not back within the run."""
    m = metrics.outage_and_recovery(t, y, down, up, pre_s=PRE_S, frac=OUTAGE_FRAC, bin_s=BIN_S)
    if not np.isfinite(m["pre_mbps"]) or m["pre_mbps"] <= 0:
        return {"outage_s": None, "recovery_s": None}
    rec = m["recovery_s"] if up < end_s else None
    return {"outage_s": round(m["outage_s"], 3), "recovery_s": None if rec is None else round(rec, 3)}


def _flow_series_sim(res, name: str) -> tuple[np.ndarray, np.ndarray]:
    iv = res.intervals
    iv = iv[(iv["flow"].astype(str) == name) & (iv["subflow"] < 0)] if "subflow" in iv else iv[iv["flow"].astype(str) == name]
    g = iv.groupby("t_s")["mbps"].sum()
    return g.index.to_numpy(dtype=float), g.to_numpy(dtype=float)


def _flow_paths(sc, f: dict[str, Any]) -> set[str]:
    """The paths a flow of the scenario crosses (a TCP flow without `path`: the first)."""
    return set(flow_paths(f, sc.config["path"][0]["name"]))


def _path_shares(sim, sc, name: str, paths: list[str], emu) -> dict[str, dict[str, float | None]]:
    """An MPTCP flow's share of its bytes by path, percent, in each engine: simulated, what its
    subflows delivered on each path; emulated, what each path's shaped interface sent (emu.json
    `path_mbps`), which is this flow's only when no other flow crosses the path (else None).
    Shares, not rates: the interface counts headers, the simulator payload."""
    iv = sim.intervals
    sub = iv[(iv["flow"].astype(str) == name) & (iv["subflow"] >= 0)] if "subflow" in iv else iv.iloc[0:0]
    per_sim = {str(k): float(v) for k, v in sub.groupby("path", observed=True)["bytes"].sum().items()}
    others = {p for g in sc.config["flow"] if str(g.get("name")) != name for p in _flow_paths(sc, g)}
    per_emu = {p: float(emu.path_mbps.get(p, 0.0)) for p in paths}
    tot_sim, tot_emu = sum(per_sim.get(p, 0.0) for p in paths), sum(per_emu.values())
    own = not (others & set(paths))
    return {p: {"simulated": round(100.0 * per_sim.get(p, 0.0) / tot_sim, 1) if tot_sim > 0 else None,
                "emulated": round(100.0 * per_emu[p] / tot_emu, 1) if own and tot_emu > 0 else None}
            for p in paths}


def at_host_hz(sc) -> tuple[Any, int | None]:
    """`sc` with every flow's `tcp.kernel_hz` set to the CONFIG_HZ of the kernel the emulator ran
    (its TCP timers tick at that rate, whatever the scenario says; kconfig.py), and that HZ
    (None, and `sc` as it is, when the kernel's config cannot be read)."""
    hz = host_hz()
    flows = sc.config.get("flow") or []
    if hz is None or all((f.get("tcp") or {}).get("kernel_hz") == hz for f in flows):
        return sc, hz
    config = copy.deepcopy(sc.config)
    for f in config["flow"]:
        f.setdefault("tcp", {})["kernel_hz"] = hz
    return normalize(config, sc.source), hz


def compare(sc, emu) -> dict[str, Any]:
    """Simulate `sc` (the scenario the emulator ran, its seed included) and set it beside
    `emu` (an EmuResult)."""
    sc, hz = at_host_hz(sc)
    sim = simulate(sc)
    end_s = float(sc.config["duration_s"])
    flows = []
    for i, f in enumerate(sc.config["flow"]):
        name = str(f.get("name", f"flow{i}"))
        sf = next((x for x in sim.summary["flows"] if x.get("name") == name), None)
        ef = emu.flows.get(name)
        if sf is None or ef is None:
            continue
        row: dict[str, Any] = {"flow": name, "kind": sf.get("kind"),
                               "simulated_mbps": round(float(sf["goodput_mbps"]), 3),
                               "emulated_mbps": round(float(ef.goodput_mbps), 3)}
        row["diff_pct"] = round(100.0 * (row["simulated_mbps"] / row["emulated_mbps"] - 1.0), 2) \
            if row["emulated_mbps"] > 0 else None
        paths = _flow_paths(sc, f)
        if f.get("kind") == "mptcp":
            row["path_share_pct"] = _path_shares(sim, sc, name, [str(p) for p in f.get("paths") or []], emu)
        wired = {str(p["name"]) for p in sc.config["path"] if (p.get("technology") or "wired") == "wired"}
        du = _down_up(sim.events, paths, wired)
        if du is not None:
            down, up = du
            ts, ys = _flow_series_sim(sim, name)
            te = ef.intervals["t_s"].to_numpy(dtype=float)
            ye = ef.intervals["mbps"].to_numpy(dtype=float)
            s, e = _outage_recovery(ts, ys, down, up, end_s), _outage_recovery(te, ye, down, up, end_s)
            row.update({"link_down_s": down, "link_up_s": up if np.isfinite(up) else None,
                        "simulated_outage_s": s["outage_s"], "emulated_outage_s": e["outage_s"],
                        "simulated_recovery_s": s["recovery_s"], "emulated_recovery_s": e["recovery_s"]})
        flows.append(row)
    return {"seed": int(sc.seed), "kernel_hz": hz, "simulated_wall_s": round(float(sim.summary.get("wall_s", 0.0)), 3),
            "flows": flows, "_sim": sim}


def write(cmp: dict[str, Any], emu, out: Path) -> None:
    """compare.json and compare.png into `out` (the emulator's output folder)."""
    doc = {k: v for k, v in cmp.items() if not k.startswith("_")}
    (out / "compare.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    rows = cmp["flows"]
    if not rows:
        return
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 2.2 * len(rows) + 0.6), sharex=True, squeeze=False)
    for ax, row in zip(axes[:, 0], rows):
        ts, ys = _flow_series_sim(cmp["_sim"], row["flow"])
        ef = emu.flows[row["flow"]]
        ax.step(ts, ys, where="post", lw=1.1, label=f"simulated {row['simulated_mbps']:.0f} Mbit/s")
        ax.step(ef.intervals["t_s"].to_numpy(dtype=float), ef.intervals["mbps"].to_numpy(dtype=float),
                where="post", lw=1.1, label=f"emulated {row['emulated_mbps']:.0f} Mbit/s")
        if row.get("link_down_s") is not None:
            ax.axvspan(row["link_down_s"], row["link_up_s"] or ts.max(initial=0.0), color="0.85", zorder=0)
        ax.set_title(f"{row['flow']} ({row['kind']})", fontsize=9, loc="left")
        ax.set_ylabel("Mbit/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[-1, 0].set_xlabel("time (s), 100 ms bins; shaded: a path of the flow is down or stalled")
    fig.tight_layout()
    fig.savefig(out / "compare.png", dpi=110)
    plt.close(fig)


def format_rows(cmp: dict[str, Any]) -> list[str]:
    rows = cmp["flows"]
    hz = f", this kernel's CONFIG_HZ {cmp['kernel_hz']}" if cmp.get("kernel_hz") else ""
    lines = [f"compared with the simulator (same scenario, seed {cmp['seed']}{hz}; "
             f"{cmp['simulated_wall_s']:g} s to simulate):"]
    timed = any("simulated_outage_s" in r for r in rows)
    header = ["flow", "simulated Mbps", "emulated Mbps", "diff %"]
    if timed:
        header += ["outage s sim / emu", "recovery s sim / emu"]

    def t(v, digits: int = 2):
        return "-" if v is None else f"{v:.{digits}f}"

    body = []
    for r in rows:
        cells = [r["flow"], f"{r['simulated_mbps']:.1f}", f"{r['emulated_mbps']:.1f}",
                 "-" if r["diff_pct"] is None else f"{r['diff_pct']:+.1f}"]
        if timed:
            if "simulated_outage_s" in r:
                cells += [f"{t(r['simulated_outage_s'])} / {t(r['emulated_outage_s'])}",
                          f"{t(r['simulated_recovery_s'])} / {t(r['emulated_recovery_s'])}"]
            else:
                cells += ["-", "-"]
        body.append(cells)
    lines += ["  " + ln for ln in align(header, body, 1).splitlines()]
    for r in rows:
        if r.get("path_share_pct"):
            shares = ", ".join(f"{p} {t(v['simulated'], 1)} / {t(v['emulated'], 1)}"
                               for p, v in r["path_share_pct"].items())
            lines.append(f"  {r['flow']}: share of its bytes by path (%), simulated / emulated: {shares}")
    return lines
