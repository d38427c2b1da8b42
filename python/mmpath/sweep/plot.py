"""sweep.png: the curves a one- or two-key sweep is usually run for.

The first grid key is the x axis (its values in grid order; numbers spaced as numbers), the
second, if any, gives one line per value; each flow of the scenario is its own line too. Each
point is the mean over the seeds, with the standard deviation as a band. Panels: goodput, then
energy per bit when a metered device ran (seed 002's ratio sweeps), else mean RTT. A sweep of
three or more keys has no single picture: the table is the output (plot returns False).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from ..lazy import numpy as np, pandas as pd, pyplot as plt  # on first use (start-up time): lazy.py
from .cells import cell, grid_values, text_keys
from .spec import SweepSpec


def _numeric(vals: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)


def _panels(df: pd.DataFrame) -> list[tuple[str, str]]:
    panels = [("goodput_mbps", "goodput (Mbit/s)")]
    if "nj_per_bit" in df and df["nj_per_bit"].notna().any():
        panels.append(("nj_per_bit", "energy per bit (nJ/bit)"))
    elif "rtt_mean_ms" in df and df["rtt_mean_ms"].notna().any():
        panels.append(("rtt_mean_ms", "mean RTT (ms)"))
    return panels


def plot(spec: SweepSpec, df: pd.DataFrame, path: Path) -> bool:
    """Write the figure; False (nothing written) when the grid has no key or more than two, or
    no run finished."""
    if not 1 <= len(spec.keys) <= 2 or "goodput_mbps" not in df:
        return False
    ok = df[df["error"] == ""] if "error" in df else df
    if not len(ok):
        return False
    values = grid_values(spec)
    text = text_keys(spec)  # their columns hold each value's text (results.py)
    xkey = spec.keys[0]
    xs = values[xkey]
    numeric = _numeric(xs)

    def xk(v: Any) -> Any:
        # Numbers by value: a grid of [1, 2.5] is a float64 column, whose 1.0 must find the
        # grid's 1 (their texts differ); other values by their text.
        return float(v) if numeric else repr(cell(v, xkey in text))

    xpos = {xk(v): (float(v) if numeric else float(i)) for i, v in enumerate(xs)}
    lines: list[tuple[str, pd.DataFrame]] = []
    zkey = spec.keys[1] if len(spec.keys) == 2 else None
    flows = list(dict.fromkeys(ok["flow"].astype(str))) if "flow" in ok else [""]
    for z in (values[zkey] if zkey else [None]):
        sel = ok if zkey is None else ok[ok[zkey].map(lambda v: v == cell(z, zkey in text))]
        for flow in flows:
            g = sel[sel["flow"].astype(str) == flow] if flow else sel
            label = ", ".join(s for s in ((f"{zkey} = {z}" if zkey else ""), (flow if len(flows) > 1 else "")) if s)
            lines.append((label or flow or "goodput", g))

    panels = _panels(ok)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels) + 0.6, 3.8), squeeze=False)
    for ax, (col, ylabel) in zip(axes[0], panels):
        for label, g in lines:
            if not len(g):
                continue
            stat = g.groupby(g[xkey].map(xk), sort=False)[col].agg(["mean", "std"])
            order = sorted(stat.index, key=lambda k: xpos.get(k, np.inf))
            stat = stat.loc[order]
            x = np.array([xpos[k] for k in stat.index])
            m, sd = stat["mean"].to_numpy(dtype=float), stat["std"].fillna(0.0).to_numpy(dtype=float)
            ax.plot(x, m, marker="o", ms=3.5, lw=1.3, label=label)
            if (sd > 0).any():
                ax.fill_between(x, m - sd, m + sd, alpha=0.2)
        ax.set_xlabel(xkey)
        ax.set_ylabel(ylabel)
        if not numeric:
            ax.set_xticks(range(len(xs)), [str(v) for v in xs], rotation=30 if len(xs) > 4 else 0)
        ax.grid(alpha=0.3)
        if len(lines) > 1:
            ax.legend(fontsize=7)
    n_seeds = len(spec.seeds)
    fig.suptitle(f"{spec.name}: mean over {n_seeds} seed{'s' * (n_seeds != 1)}"
                 f"{' (band: +-1 std)' if n_seeds > 1 else ''}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
