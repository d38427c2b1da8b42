"""What the claims comparing the simulator with this machine's kernel (x-kernel, x-pm) share: a
measure's tolerance and verdict, a table row's cells, and the figure's grid of panels."""

from __future__ import annotations

from typing import Any

from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from . import plotting
from .registry import fmt, stats

# Times: within 20 % of the kernel's or 0.3 s, whichever is larger.
TIME_TOL, TIME_FLOOR_S = 0.20, 0.3
# Times are counted in 100 ms bins, so two of them differ by a multiple of 0.1 s, computed in
# binary floating point: 0.6000000000000001 - 0.3 is above 0.3. "Within 0.3 s" includes 0.3 s;
# this slack (far below any bin) keeps a difference of exactly the tolerance inside it.
FLOAT_SLACK = 1e-9


def _within(sim: float, emu: float, tol: float) -> bool:
    return bool(np.isfinite(sim) and np.isfinite(emu) and abs(sim - emu) <= tol + FLOAT_SLACK)


def time_agrees(sim: float, emu: float) -> tuple[bool, str]:
    """A time's verdict and the tolerance it was held to."""
    tol = max(TIME_TOL * abs(emu), TIME_FLOOR_S)
    return _within(sim, emu, tol), f"+-{fmt(tol)}"


def share_of_agrees(sim: float, emu: float, frac: float) -> tuple[bool, str]:
    """Within `frac` of the kernel's value (throughput, bytes)."""
    tol = frac * abs(emu)
    return _within(sim, emu, tol), f"+-{fmt(tol)}"


def points_agree(sim: float, emu: float, pts: float) -> tuple[bool, str]:
    """Within `pts` percentage points (a path's share)."""
    return _within(sim, emu, pts), f"+-{pts:g} pts"


ENGINES = ("simulation", "emulation")


def compare(mine, metrics, agrees) -> tuple[list[dict[str, Any]], dict[str, int], bool]:
    """One row's runs (`mine`, an `engine` column): per metric the mean in each engine and its
    verdict (`agrees(metric, sim, emu)`), the runs per engine, and whether the row agrees (every
    metric, and at least one run in each engine)."""
    items = []
    for k in metrics:
        col = mine[k] if k in mine else pd.Series(dtype=float)
        sim = stats(col[mine["engine"] == "simulation"])["mean"]
        emu = stats(col[mine["engine"] == "emulation"])["mean"]
        ok, tol = agrees(k, sim, emu)
        items.append({"metric": k, "sim": sim, "emu": emu, "ok": ok, "tol": tol})
    n = {e: int((mine["engine"] == e).sum()) for e in ENGINES}
    return items, n, all(i["ok"] for i in items) and min(n.values()) > 0


def cells(items: list[dict[str, Any]], labels: dict[str, str]) -> str:
    """A table row's comparisons: each measure simulated / emulated (tolerance), marked if not."""
    return "; ".join(f"{labels[i['metric']]} {fmt(i['sim'])} / {fmt(i['emu'])} ({i['tol']})"
                     + ("" if i["ok"] else " **NO**") for i in items)


def panels(n: int):
    """(pyplot, figure, the first n axes, the unused ones) for n panels, at most four a row."""
    ncols = min(4, n)
    nrows = -(-n // ncols)
    plt, fig, axes = plotting.figure(nrows, ncols, w=6.5 if ncols == 1 else 4.2, h=2.6 if ncols > 1 else 3.4)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_axis_off()
    return plt, fig, axes, flat[:n], ncols


def finish(ax, title: str, ok: bool) -> None:
    """A panel's title (red when the row disagrees), labels and grid."""
    ax.set_title(f"{title}: {'agrees' if ok else 'DISAGREES'}", fontsize="small", color="black" if ok else "tab:red")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Mbit/s")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
