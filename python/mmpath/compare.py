"""Side-by-side runs of a scenario's ``[[variant]]`` entries (the default demo compares MPTCP
modes and schedulers this way): each variant is the base scenario with its ``set`` overrides,
run with the same seed; one table, one plot of per-path throughput over time, one output folder
per variant.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .api import Result, simulate
from .errors import ScenarioError
from .lazy import numpy as np, pandas as pd, pyplot as plt  # on first use (start-up time): lazy.py
from .outputs import check_out_folder, safe_name, staged_folder
from .report import shade_outages, throughput_by_path
from .scenario import Overrides, ScenarioSpec, load_scenario, variant_scenarios
from .spelling import PYTHON, Spelling
from .table import align


@dataclass
class Comparison:
    """The variants' results in order, and the comparison table (one row per variant)."""

    results: dict[str, Result]
    table: pd.DataFrame

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results.values())


def _path_mbps(res: Result) -> dict[str, float]:
    """Mean Mbit/s each path carried over the run (subflow rows, or a flow's own row)."""
    span = max(float(res.summary.get("sim_s", 0.0)), 1e-9)
    by = throughput_by_path(res.intervals).groupby("path", observed=True)["bytes"].sum()
    return {str(p): float(b) * 8 / span / 1e6 for p, b in by.items()}


def _resaturation_s(f: dict[str, Any]) -> float:
    """Time to re-saturate after the flow's longest outage (summary metrics; the first of equal
    ones): inf when it never got back to its pre-outage rate within the run, NaN when it had
    no outage."""
    outages = ((f.get("metrics") or {}).get("outages")) or []
    if not outages:
        return float("nan")
    longest = max(outages, key=lambda o: o.get("length_s") or 0.0)
    r = longest.get("resaturation_s")
    return float("inf") if r is None else float(r)


def _row(name: str, res: Result) -> dict[str, Any]:
    f = res.summary["flows"][0]
    row: dict[str, Any] = {
        "variant": name,
        "kind": f.get("kind"),
        "cc": f.get("cc") or "-",
        "mode/scheduler": f"{f.get('mode')}/{f.get('scheduler')}" if f.get("kind") == "mptcp" else "-",
        "goodput_mbps": float(f.get("goodput_mbps", 0.0)),
    }
    for p, v in _path_mbps(res).items():
        row[f"{p}_mbps"] = v
    row["reinjected_MB"] = float(f.get("reinjected_bytes", 0)) / 1e6
    row["retransmits"] = int(f.get("retransmits", 0))
    row["resaturation_s"] = _resaturation_s(f)
    rtt = f.get("rtt_ms") or {}
    row["rtt_mean_ms"] = float(rtt["mean"]) if rtt.get("mean") is not None else float("nan")
    # Both on the whole run's basis: every metered radio's and the host's joules, and those over
    # all flows' delivered bits (summary energy.nj_per_bit), not the first flow's own figure
    # (only the radios it may use, over its bits), which would mix two bases in one row.
    energy = res.summary.get("energy") or {}
    if energy.get("total_j") is not None:
        row["energy_J"] = float(energy["total_j"])
        nj = energy.get("nj_per_bit")
        row["nJ_per_bit"] = float(nj) if nj is not None else float("nan")  # nothing delivered
    return row


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per variant. Columns that say nothing for this comparison are left out: the
    congestion control when every variant uses the same one, MPTCP columns when no variant is
    MPTCP, re-saturation when no variant had an outage. A metric a variant lacks (no outage to
    re-saturate after) is NaN, not 0; a re-saturation that never came within the run is inf."""
    table = pd.DataFrame(rows)
    if table["cc"].nunique() <= 1:
        table = table.drop(columns="cc")
    if not (table["kind"] == "mptcp").any():
        table = table.drop(columns=["mode/scheduler", "reinjected_MB"])
    if table["resaturation_s"].isna().all():
        table = table.drop(columns="resaturation_s")
    rate_cols = [c for c in table.columns if c.endswith("_mbps")]
    table[rate_cols] = table[rate_cols].fillna(0.0)
    # The paths' columns together after the goodput, whichever variant first used a path.
    first = [c for c in table.columns if c not in rate_cols]
    at = first.index("mode/scheduler" if "mode/scheduler" in first else "cc" if "cc" in first else "kind") + 1
    return table[first[:at] + rate_cols + first[at:]]


def compare(spec: ScenarioSpec, overrides: Overrides = None, seed: int | None = None,
            out: str | os.PathLike | None = None, progress: bool = False,
            spelling: Spelling = PYTHON) -> Comparison:
    """Run every ``[[variant]]`` of a scenario; optionally write the folder (see docs/outputs.md).
    `spelling`: errors name the Python arguments (the CLI passes spelling.CLI)."""
    base = load_scenario(spec, overrides, seed=seed, spelling=spelling)
    if out is not None:
        check_out_folder(Path(out))  # before the runs, not after them
    if not base.variants:
        raise ScenarioError(f"{base.source}: has no [[variant]] entries to compare")
    results: dict[str, Result] = {}
    scenarios = variant_scenarios(base, spec, overrides, seed, spelling)
    for i, (name, sc) in enumerate(scenarios, 1):
        results[name] = simulate(sc, show_progress=progress, label=f"variant {name} ({i}/{len(scenarios)})")
    table = _table([_row(n, r) for n, r in results.items()])
    cmp = Comparison(results=results, table=table)
    if out is not None:
        write(cmp, Path(out))
    return cmp


def format_table(table: pd.DataFrame) -> str:
    cols = list(table.columns)
    names = {"resaturation_s": "resat s", "rtt_mean_ms": "RTT ms", "nJ_per_bit": "nJ/bit", "energy_J": "energy J"}
    header = [names.get(c, c.replace("_mbps", " Mbps").replace("_MB", " MB")) for c in cols]

    def cell(col: str, v: Any) -> str:
        if isinstance(v, float):
            if np.isnan(v):
                return "-"  # not measured: no outage, no RTT sample, no energy model
            if np.isinf(v):
                return "never"  # re-saturation: not back to the pre-outage rate in the run
            return f"{v:.2f}" if col == "nJ_per_bit" else f"{v:.1f}"
        return str(v)

    rows = [[cell(c, r[c]) for c in cols] for _, r in table.iterrows()]
    return align(header, rows, 3)


def _shade_outages(ax, res: Result) -> None:
    """Each path's down..up spans, as the run report shades them (report.shade_outages)."""
    ev = res.events
    shade_outages(ax, ev["t_s"].to_numpy(dtype=float), ev["kind"].astype(str).to_numpy(), ev["path"].astype(str).to_numpy())


def _cwnd_series(res: Result):
    """(label, path, t_s, cwnd MB) per TCP flow or MPTCP subflow (an MPTCP connection's own
    rows have no path and no window), labelled by path, with the flow's name when several
    flows share the run."""
    tl = res.timeline
    if tl is None or not len(tl) or "cwnd_bytes" not in tl.columns:
        return
    rows = tl[tl["cwnd_bytes"].notna() & tl["path"].notna()]
    multi = rows["flow"].nunique() > 1
    for (flow, path), g in rows.groupby(["flow", "path"], observed=True, sort=False):
        label = f"{flow}/{path}" if multi else str(path)
        yield label, str(path), g["t_s"].to_numpy(), g["cwnd_bytes"].to_numpy(dtype=float) / 1e6


def plot(cmp: Comparison, path: Path) -> None:
    """One row per variant: per-path throughput over time (left) and each TCP flow's or
    subflow's congestion window (right), link outages shaded in both."""
    n = len(cmp.results)
    # One colour per path across every panel.
    names: list[str] = []
    for res in cmp.results.values():
        for p in res.summary.get("paths", []):
            if p["name"] not in names:
                names.append(p["name"])
    colour = {p: f"C{i}" for i, p in enumerate(names)}
    fig, axes = plt.subplots(n, 2, figsize=(13, 1.9 * n + 0.6), sharex=True, squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2]})
    for (ax, axw), (name, res) in zip(axes, cmp.results.items()):
        iv = res.intervals
        for p, g in throughput_by_path(iv).groupby("path", observed=True):
            p = str(p)
            ax.step(g["t_s"].to_numpy(), g["mbps"].to_numpy(), where="post", label=p, lw=1.2, color=colour.get(p))
        if len(names) > 1:
            conn = iv[iv["subflow"] < 0].groupby("t_s")["mbps"].sum()
            ax.plot(conn.index.to_numpy(), conn.to_numpy(), color="k", lw=0.8, alpha=0.6, label="total")
        _shade_outages(ax, res)
        ax.set_ylabel("Mbit/s")
        ax.set_title(f"{name}: {res.summary['flows'][0]['goodput_mbps']:.0f} Mbit/s", fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="upper right", ncol=3)
        ax.grid(alpha=0.3)
        drawn = False
        for label, p, t, w in _cwnd_series(res):
            axw.step(t, w, where="post", lw=1.0, label=label, color=colour.get(p))
            drawn = True
        _shade_outages(axw, res)
        axw.set_ylabel("cwnd (MB)")
        axw.set_title(f"{name}: congestion window", fontsize=9, loc="left")
        if drawn:
            axw.legend(fontsize=7, loc="upper right", ncol=2)
        axw.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time (s); shaded: a path is down")
    axes[-1, 1].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(cmp: Comparison, out: Path) -> None:
    """Every variant's folder, compare.csv and compare.png, moved into `out` together
    (outputs.staged_folder): an interrupted or failed write leaves `out` as it was."""
    with staged_folder(out) as tmp:
        for name, res in cmp.results.items():
            res.save(tmp / safe_name(name, "variant"))
        cmp.table.to_csv(tmp / "compare.csv", index=False, float_format="%.3f")
        plot(cmp, tmp / "compare.png")


# Two variants closer than this are not ranked from one seed: the default demo's goodput moved by
# up to 4.9 % between seeds 1-5 (MuSher 1367.9..1436.8 Mbit/s; single-path TCP 0.8 %, full mesh 1.0 %).
SAME_WITHIN = 0.05


def best(cmp: Comparison) -> str:
    """The one-line verdict: the variant with the highest goodput, and with an energy model also
    the one with the fewest nJ/bit, each named with its measure; none where the top two are
    within SAME_WITHIN of each other, closer than one seed can tell apart."""
    t = cmp.table
    said = [_best_by(t, "goodput_mbps", "goodput", "Mbit/s", highest=True)]
    if "nJ_per_bit" in t and np.isfinite(t["nJ_per_bit"].to_numpy(dtype=float)).sum() >= 2:
        said.append(_best_by(t, "nJ_per_bit", "energy per bit", "nJ/bit", highest=False))
    return "; ".join(said)


def _best_by(t: pd.DataFrame, col: str, what: str, unit: str, highest: bool) -> str:
    v = t[col].to_numpy(dtype=float)
    ok = np.flatnonzero(np.isfinite(v))
    if len(ok) < 2:
        return f"by {what}, {t.loc[ok[0], 'variant']} (the only one)" if len(ok) else f"by {what}, none measured"
    order = ok[np.argsort(-v[ok] if highest else v[ok], kind="stable")]
    a, b = order[0], order[1]
    na, nb = t.loc[a, "variant"], t.loc[b, "variant"]
    gap = abs(v[a] - v[b]) / max(abs(v[a]), abs(v[b]), 1e-12)
    nd = 2 if unit == "nJ/bit" else 1
    pair = f"{na} {v[a]:.{nd}f} vs {nb} {v[b]:.{nd}f} {unit}"
    if gap < SAME_WITHIN:
        return (f"by {what}, no winner ({pair}: {gap * 100:.1f} % apart, within the "
                f"{SAME_WITHIN * 100:.0f} % one seed can move it)")
    return f"by {what}, {na} ({pair})"
