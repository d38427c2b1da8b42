"""The common frame of the `mmpath reproduce` figures, one PNG per experiment shaped like the
paper's figure: the figure and its file, one colour per series in every figure, bars of means
with min-max or standard-deviation error bars, the paper's values marked where a claim compares
with a number, shaded events on time series, and a note in place of a panel with no data.

Conventions (so the figures read alike):
- the figure's title names the experiment and the claims it checks (``save``);
- the paper's value is a black dashed line (``paper_line``, ``paper_marks``), the paper's range
  a grey band (``paper_band``); a bound of mmpath's own criterion is a dotted grey line;
- a blockage or other outage is shaded grey, beam re-training or a scan lighter (``shade``);
- a legend that would cover data goes beside the axes (``legend(..., outside=True)``).

``problems(fig)`` lists what makes a figure hard to read (an axes without labels, overlapping
tick labels, a legend over data points); the tests run it on every reproduce figure.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Iterable, Sequence
from ..lazy import numpy as np, pyplot as plt  # on first use (start-up time): lazy.py
from . import registry

DPI = 150
PANEL_W, PANEL_H = 6.0, 3.4  # inches per panel

# One colour per series, the same in every panel and figure that shows it.
COLOURS: dict[str, str] = {
    # paths and the MPTCP connection
    "11ad": "tab:blue", "11ac": "tab:orange", "11n": "tab:orange", "MPTCP": "tab:green",
    # transport
    "TCP": "tab:blue", "UDP": "tab:orange",
    # interference (seed 000)
    "none": "0.55", "ACI": "tab:purple", "CCI": "tab:red",
    # MPTCP modes (seed 000)
    "tcp-11ad": "tab:blue", "fullmesh": "tab:purple", "backup": "tab:brown",
    # congestion control (seed 003)
    "cubic": "tab:blue", "reno": "tab:orange", "vegas": "tab:green", "bbr": "tab:red",
    # schedulers (seeds 002 / 004)
    "expected sum": "0.75", "default": "0.3", "fixedratio": "tab:olive", "musher": "tab:purple",
    "amuse-scan": "tab:green", "amuse-blockage": "tab:green",
    # engines (x-kernel)
    "simulation": "tab:blue", "emulation": "tab:orange",
    # mmpath next to a number of the paper's
    "mmpath": "tab:blue",
}
PAPER_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.1}
BOUND_STYLE = {"color": "0.45", "linestyle": ":", "linewidth": 1.0}
SHADE = {"outage": {"color": "0.5", "alpha": 0.22}, "retrain": {"color": "0.5", "alpha": 0.1},
         "scan": {"color": "tab:orange", "alpha": 0.12}}


def colour(name: str, default: str | None = None) -> str | None:
    return COLOURS.get(name, COLOURS.get(str(name).lower(), default))


def figure(nrows: int, ncols: int, w: float = PANEL_W, h: float = PANEL_H, **kw: Any):
    """(pyplot, figure, 2-d array of axes), the figure sized ``w`` x ``h`` inches per panel and
    laid out by matplotlib's constrained layout (titles, labels and outside legends kept apart)."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), dpi=DPI, squeeze=False,
                             layout="constrained", **kw)
    return plt, fig, axes


def claims_of(exp_id: str) -> list[str]:
    return [c.id for c in registry.CLAIMS.values() if c.experiment == exp_id]


def save(plt, fig, path: Path, exp_id: str, title: str) -> None:
    """Title the figure with the experiment, the claims it checks and ``title``; write it whole
    (``bbox_inches="tight"``: nothing clipped) and free it."""
    claims = claims_of(exp_id)
    head = exp_id if claims in ([], [exp_id]) else f"{exp_id} (claims {', '.join(claims)})"
    width = max(60, int(fig.get_figwidth() * 10))  # characters of the title's font that fit the width
    fig.suptitle(head + "\n" + textwrap.fill(title, width), fontsize="large")
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)


def legend(ax, outside: bool = False, **kw: Any):
    """The axes' legend: beside the axes (right, top-aligned) when ``outside``, else where it
    covers the least data."""
    kw.setdefault("fontsize", "small")
    if outside:
        return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw)
    kw.setdefault("loc", "best")
    return ax.legend(**kw)


def fig_legend(fig, axes, ncol: int | None = None, where: str = "lower center", **kw: Any):
    """One legend for the whole figure, outside the panels (below them by default), from every
    labelled artist of ``axes`` (each label once): for panels that show the same series."""
    handles, labels = [], []
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    kw.setdefault("fontsize", "small")
    return fig.legend(handles, labels, loc=f"outside {where}", ncol=ncol or min(len(labels), 4), **kw)


def bars(ax, groups: Sequence[str], series: dict[str, Sequence[dict[str, float]]], ylabel: str,
         title: str, xlabel: str | None = None, err: str | None = "minmax",
         colours: dict[str, str] | None = None, points: dict[str, Sequence[Iterable[float]]] | None = None,
         legend_kw: dict[str, Any] | None = None, group_colours: Sequence[str] | None = None) -> np.ndarray:
    """Grouped bars of means (``stats`` dicts) with min-max (``err="minmax"``), standard-deviation
    (``"std"``) or no error bars; ``points`` overlays each run's value. One series whose groups
    are the series themselves (the x labels name them) takes ``group_colours`` and no legend
    entry. Returns the groups' x."""
    n = max(len(series), 1)
    width = 0.8 / n
    x = np.arange(len(groups))
    runs_label = "runs"
    for i, (label, sts) in enumerate(series.items()):
        mean = np.array([s["mean"] for s in sts], dtype=float)
        yerr = None
        if err == "minmax":
            yerr = np.vstack([mean - np.array([s["min"] for s in sts]), np.array([s["max"] for s in sts]) - mean])
        elif err == "std":
            yerr = np.array([s.get("std", 0.0) or 0.0 for s in sts])
        c = list(group_colours) if group_colours is not None else (colours or {}).get(label) or colour(label)
        xs = x + (i - (n - 1) / 2) * width
        ax.bar(xs, np.nan_to_num(mean), width, label="_nolegend_" if group_colours is not None else label,
               color=c, yerr=yerr, capsize=2,
               error_kw={"linewidth": 0.8, "ecolor": "0.15"})
        if points is not None and label in points:
            for xi, vals in zip(xs, points[label]):
                v = np.asarray(list(vals), dtype=float)
                jitter = np.linspace(-0.25, 0.25, len(v)) * width if len(v) > 1 else np.zeros(len(v))
                ax.plot(xi + jitter, v, "o", ms=2.5, color="k", alpha=0.6, zorder=3, label=runs_label)
                runs_label = None
    ax.set_xticks(x, groups)
    ax.set_ylabel(ylabel)
    if xlabel:
        ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    if legend_kw is not False:
        legend(ax, **(legend_kw or {}))
    return x


def paper_line(ax, y: float, label: str | None = "paper", axis: str = "h", **kw: Any):
    """The paper's value across the axes (dashed black)."""
    style = {**PAPER_STYLE, **kw}
    return (ax.axhline if axis == "h" else ax.axvline)(y, label=label, **style)


def bound_line(ax, y: float, label: str | None = None, axis: str = "h", **kw: Any):
    """A bound of mmpath's criterion (dotted grey): not a number of the paper's."""
    style = {**BOUND_STYLE, **kw}
    return (ax.axhline if axis == "h" else ax.axvline)(y, label=label, **style)


def paper_band(ax, lo: float, hi: float, label: str | None = "paper's range", axis: str = "h", **kw: Any):
    kw = {"color": "0.6", "alpha": 0.18, "linewidth": 0, **kw}
    return (ax.axhspan if axis == "h" else ax.axvspan)(lo, hi, label=label, **kw)


def paper_marks(ax, xs: Sequence[float], ys: Sequence[float], half: float = 0.4,
                label: str | None = "paper") -> None:
    """The paper's value for each group: a dashed black segment across the group's bars."""
    first = True
    for x, y in zip(xs, ys):
        if y is None or not np.isfinite(y):
            continue
        ax.hlines(y, x - half, x + half, label=label if first else None, zorder=4, **PAPER_STYLE)
        first = False


def shade(ax, a: float, b: float, label: str | None = None, kind: str = "outage") -> None:
    ax.axvspan(a, b, label=label, linewidth=0, **SHADE[kind])


def step(ax, t, y, bin_s: float, **kw: Any):
    """Throughput in bins as steps, each bin drawn over its whole width (the last one too)."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if not len(t):
        return None
    return ax.step(np.append(t, t[-1] + bin_s), np.append(y, y[-1]), where="post", **kw)


def empty(ax, text: str, xlabel: str | None = None, ylabel: str | None = None, title: str | None = None) -> None:
    """A panel without data says why instead of staying blank."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize="small",
            wrap=True, color="0.3", bbox={"boxstyle": "round", "facecolor": "0.95", "edgecolor": "0.7"})
    ax.set_xticks([])
    ax.set_yticks([])
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize="medium")


# --------------------------------------------------------------------------- checks


def _has_data(ax) -> bool:
    return bool(ax.lines or ax.patches or ax.collections or ax.images)


def _data_lines(ax) -> list:
    """Lines drawn in data coordinates (not axhline / axvline references, not error bars)."""
    out = []
    for ln in ax.lines:
        if ln.get_transform() != ax.transData or not ln.get_visible():
            continue
        if ln.get_linestyle() == "None" and ln.get_marker() in ("_", "|"):
            continue  # error bar caps
        out.append(ln)
    return out


def problems(fig) -> list[str]:
    """What makes ``fig`` hard to read, one line each (empty when none): no figure title or one
    that other text overlaps, a panel with data but no title or axis label, tick labels that
    overlap or are offsets from a number, a legend over data points or bars, text outside the
    figure."""
    out: list[str] = []
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    sup = fig.get_suptitle() if hasattr(fig, "get_suptitle") else (fig._suptitle.get_text() if fig._suptitle else "")
    if not sup:
        out.append("figure without a title")
    else:
        sb = fig._suptitle.get_window_extent(r)
        for leg in fig.legends:
            if leg.get_window_extent(r).overlaps(sb):
                out.append("a figure legend overlaps the figure's title")
        for ax in fig.axes:
            if ax.get_visible() and ax.title.get_text() and ax.title.get_window_extent(r).overlaps(sb):
                out.append(f"{ax.get_title()}: the panel title overlaps the figure's title")
    fb, tb = fig.bbox, fig.get_tightbbox(r).transformed(fig.dpi_scale_trans)
    if tb.x0 < fb.x0 - 1 or tb.y0 < fb.y0 - 1 or tb.x1 > fb.x1 + 1 or tb.y1 > fb.y1 + 1:
        out.append("something is drawn outside the figure (clipped)")
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        twin = any(o is not ax and o.bbox.bounds == ax.bbox.bounds for o in fig.axes[:i])
        name = ax.get_title() or f"axes {i}"
        if _has_data(ax) and not twin:
            if not ax.get_title():
                out.append(f"axes {i}: no title")
            if any(t.get_visible() and t.get_text() for t in ax.get_xticklabels()) and not ax.get_xlabel():
                out.append(f"{name}: no x label")
        if _has_data(ax) and any(t.get_visible() and t.get_text() for t in ax.get_yticklabels()) \
                and not ax.get_ylabel():
            out.append(f"{name}: no y label")
        for axis, which in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            if axis.get_offset_text().get_visible() and axis.get_offset_text().get_text():
                out.append(f"{name}: {which} ticks are offsets from {axis.get_offset_text().get_text()}")
            boxes = [t.get_window_extent(r) for t in axis.get_ticklabels()
                     if t.get_visible() and t.get_text()]
            boxes.sort(key=lambda b: b.x0 if which == "x" else b.y0)
            for a, b in zip(boxes, boxes[1:]):
                if a.overlaps(b):
                    out.append(f"{name}: {which} tick labels overlap")
                    break
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            lb = leg.get_window_extent(r)
            covered = 0
            for ln in _data_lines(ax):
                xy = ax.transData.transform(np.column_stack([ln.get_xdata(orig=False), ln.get_ydata(orig=False)]))
                xy = xy[np.isfinite(xy).all(axis=1)]
                inside = (xy[:, 0] > lb.x0) & (xy[:, 0] < lb.x1) & (xy[:, 1] > lb.y0) & (xy[:, 1] < lb.y1)
                covered += int(inside.sum())
            for p in ax.patches:
                if p.get_transform() != ax.transData or not hasattr(p, "get_height"):
                    continue
                if p.get_height() and p.get_window_extent(r).overlaps(lb):
                    covered += 1
            if covered:
                out.append(f"{name}: the legend covers {covered} data point(s) or bar(s)")
    return out
