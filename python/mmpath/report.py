"""report.html with PNG plots beside it (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

# Imported on first use (start-up time); pyplot with the Agg backend (headless: CI, ssh sessions,
# worker processes).
from .lazy import numpy as np, pandas as pd, pyplot as plt
from .table import flow_rows

if TYPE_CHECKING:
    from .api import Result

_MAX_POINTS = 4000  # per line: more is invisible at this size and slows savefig down
_MAX_RATE_EVENTS = 200  # beyond this, "rate" events would paint the plot grey
_EVENT_STYLE = {
    "down": dict(color="tab:red", linestyle="-", alpha=0.6),
    "up": dict(color="tab:green", linestyle="-", alpha=0.6),
}
_DEFAULT_EVENT_STYLE = dict(color="0.5", linestyle=":", alpha=0.5)


def _thin(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    step = max(1, len(t) // _MAX_POINTS)
    return t[::step], v[::step]


def _mark_events(ax, events: pd.DataFrame) -> None:
    """Vertical lines at link events: red = down, green = up, dotted = rate change."""
    if events is None or len(events) == 0:
        return
    kinds = events["kind"].astype(str).to_numpy()
    paths = events["path"].astype(str).to_numpy()
    t = events["t_s"].to_numpy(dtype=np.float64)
    shade_outages(ax, t, kinds, paths)
    for kind in np.unique(kinds):
        of_kind = kinds == kind
        if kind not in _EVENT_STYLE and of_kind.sum() > _MAX_RATE_EVENTS:
            continue
        style = _EVENT_STYLE.get(kind, _DEFAULT_EVENT_STYLE)
        for path in np.unique(paths[of_kind]):
            sel = of_kind & (paths == path)
            # One vlines call per (kind, path), spanning the axes height whatever the data range.
            ax.vlines(t[sel], 0, 1, transform=ax.get_xaxis_transform(), linewidth=0.8,
                      label=f"{path} {kind}", **style)


def shade_outages(ax, t: np.ndarray, kinds: np.ndarray, paths: np.ndarray) -> None:
    """Shade each down..up span (to the right edge if the path never came back). The axis keeps
    the limits the data gave it: a span to the edge must not widen it."""
    xlim = ax.get_xlim()
    for path in np.unique(paths):
        mine = paths == path
        down, up = np.sort(t[mine & (kinds == "down")]), np.sort(t[mine & (kinds == "up")])
        for t0 in down:  # link events are few (one per outage), not per-sample data
            later = up[up > t0]
            t1 = later[0] if len(later) else xlim[1]
            ax.axvspan(t0, t1, color="tab:red", alpha=0.07, linewidth=0)
    ax.set_xlim(xlim)


def _plot(out_dir: Path, fname: str, ylabel: str, title: str, events: pd.DataFrame,
          draw: Callable[[Any], bool]) -> str | None:
    fig, ax = plt.subplots(figsize=(10, 3.2), dpi=100)
    try:
        if not draw(ax):
            return None
        _mark_events(ax, events)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.set_xlim(left=0)
        # Outside the axes: inside, it hides exactly the data one looks for (the top of the curve).
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
        fig.tight_layout()
        fig.savefig(out_dir / fname)
        return fname
    finally:
        plt.close(fig)


def _lines(df: pd.DataFrame, key: str, column: str, scale: float = 1.0,
           steps: bool = False, colour: Callable[[str], str | None] | None = None) -> Callable[[Any], bool]:
    """A draw function: one line of `column` against t_s per value of `key` (flow or path).

    steps=True draws bins as flat steps from their start time (intervals are bin starts);
    colour: the line's colour from its label (plot_colours), None for matplotlib's next.
    """

    def draw(ax) -> bool:
        if column not in df.columns or len(df) == 0:
            return False
        drew = False
        for label, g in df.groupby(key, observed=True, sort=True):
            v = g[column].to_numpy(dtype=np.float64) * scale
            if not np.isfinite(v).any():
                continue  # e.g. cwnd of a UDP flow
            t, v = _thin(g["t_s"].to_numpy(dtype=np.float64), v)
            if steps and len(t):  # close the last bin at its end, not its start
                t, v = np.append(t, t[-1] + 0.1), np.append(v, v[-1])
            ax.plot(t, v, linewidth=1, label=str(label), drawstyle="steps-post" if steps else "default",
                    color=colour(str(label)) if colour else None)
            drew = True
        return drew

    return draw


def _per_subflow(timeline: pd.DataFrame) -> pd.DataFrame:
    """TCP state rows with a `series` label: the flow, or for an MPTCP subflow "flow/path" (its
    subflow index too where two subflows share a path, as an address mesh's do). An MPTCP
    connection's own rows carry no cwnd or RTT and are left out; grouping by flow alone would
    interleave the subflows' windows into one saw-tooth line."""
    if len(timeline) == 0 or "subflow" not in timeline.columns:
        return timeline.assign(series=timeline.get("flow", pd.Series(dtype=object)))
    tl = timeline[(timeline["subflow"] >= 0) | timeline["path"].notna()]
    sub = tl[tl["subflow"] >= 0]
    shared = sub.groupby(["flow", "path"], observed=True)["subflow"].nunique()
    shared = {k for k, n in shared.items() if n > 1}
    flow, path, sf = tl["flow"].astype(str), tl["path"].astype(str), tl["subflow"].astype(int)
    label = [f if k < 0 else (f"{f}/{p}#{k}" if (f, p) in shared else f"{f}/{p}")
             for f, p, k in zip(flow, path, sf)]
    return tl.assign(series=label)


def _per_path_samples(timeline: pd.DataFrame) -> pd.DataFrame:
    """Path-level columns repeat on every flow's row; keep one sample per (path, time)."""
    if len(timeline) == 0:
        return timeline
    return timeline.drop_duplicates(subset=["path", "t_s"], keep="first")


def throughput_by_path(iv: pd.DataFrame) -> pd.DataFrame:
    """Bytes per (path, bin): subflow rows where a flow has them, else its connection row."""
    has_sub = iv.loc[iv["subflow"] >= 0, "flow"].unique()
    rows = iv[(iv["subflow"] >= 0) | ~iv["flow"].isin(has_sub)]
    g = rows.groupby(["path", "t_s"], observed=True, sort=True)["bytes"].sum().reset_index()
    g["mbps"] = g["bytes"].to_numpy(dtype=np.float64) * 8 / 0.1 / 1e6
    return g


def power_per_flow(timeline: pd.DataFrame, bin_s: float = 0.1) -> pd.DataFrame:
    """Mean power (W) per flow in `bin_s` bins from the timeline's cumulative `energy_j` on each
    flow's own row (a TCP/UDP flow's, an MPTCP connection's): the metered radios the flow may use
    and the phone's receive-side host (docs/outputs.md). Bins start at 0; rows: flow, t_s (bin
    start), power_w. Empty when nothing is metered."""
    cols = ["flow", "t_s", "power_w"]
    if len(timeline) == 0 or "energy_j" not in timeline.columns:
        return pd.DataFrame(columns=cols)
    own = timeline[timeline["subflow"] < 0] if "subflow" in timeline.columns else timeline
    parts = []
    for flow, g in own.groupby("flow", observed=True, sort=True):
        t = g["t_s"].to_numpy(dtype=np.float64)
        e = g["energy_j"].to_numpy(dtype=np.float64)
        ok = np.isfinite(t) & np.isfinite(e)
        t, e = t[ok], e[ok]
        if len(t) < 2 or t[-1] <= t[0]:
            continue
        order = np.argsort(t, kind="stable")
        t, e = t[order], e[order]
        # Bin edges on the run's clock; the last bin ends at the last sample (a partial bin).
        edges = np.append(np.arange(t[0], t[-1], bin_s), t[-1])
        edges = edges[np.append(np.diff(edges) > 1e-12, True)]
        w = np.diff(np.interp(edges, t, e)) / np.diff(edges)
        parts.append(pd.DataFrame({"flow": str(flow), "t_s": edges[:-1], "power_w": w}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


# Every PNG make_plots may write; a plot without data is not written (outputs.write_outputs
# removes an earlier run's copy of one this run did not make).
PLOT_FILES = ("throughput_flow.png", "throughput_path.png", "cwnd.png", "rtt.png", "queue.png", "phy_rate.png",
              "power.png")


def plot_colours(paths: list[str], flows: list[dict[str, Any]]) -> Callable[[str], str | None]:
    """One colour per path in every figure of a run and in compare.png: C0, C1, ... in the
    scenario's path order. A label is a path, a subflow "flow/path[#k]" (its path's colour) or
    a flow: a single-path flow takes its path's colour when no two flows share one, any other
    flow a colour after the paths'."""
    pc = {p: f"C{i % 10}" for i, p in enumerate(paths)}
    own = [f.get("path") if f.get("kind") != "mptcp" else None for f in flows]
    by_path = all(own) and len(set(own)) == len(own)
    fc = {str(f.get("name")): (pc.get(str(own[i])) if by_path else f"C{(len(paths) + i) % 10}")
          for i, f in enumerate(flows)}

    def colour(label: str) -> str | None:
        if label in pc:
            return pc[label]
        if "/" in label:
            return pc.get(label.split("/", 1)[1].split("#", 1)[0])
        return fc.get(label)

    return colour


def make_plots(result: "Result", out_dir: Path) -> list[tuple[str, str]]:
    """Write the PNGs; return [(file name, caption)] of those that had data."""
    iv = result.intervals
    tl = result.timeline
    ev = result.events
    conn = iv[iv["subflow"] < 0]
    per_path = _per_path_samples(tl)
    tcp = _per_subflow(tl)
    c = plot_colours([str(p["name"]) for p in result.summary.get("paths", [])],
                     list((result.scenario.config if result.scenario is not None else {}).get("flow") or []))
    specs = [
        ("throughput_flow.png", "Goodput per flow (100 ms bins)", "Mbps", _lines(conn, "flow", "mbps", steps=True, colour=c)),
        ("throughput_path.png", "Goodput per path (100 ms bins)", "Mbps",
         _lines(throughput_by_path(iv), "path", "mbps", steps=True, colour=c)),
        ("cwnd.png", "Congestion window per flow (MPTCP: per subflow)", "cwnd (KB)",
         _lines(tcp, "series", "cwnd_bytes", 1e-3, colour=c)),
        ("rtt.png", "Smoothed RTT per flow (MPTCP: per subflow)", "srtt (ms)", _lines(tcp, "series", "srtt_ms", colour=c)),
        ("queue.png", "Transmit queue per path (data direction)", "queue (KB)",
         _lines(per_path, "path", "queue_bytes", 1e-3, colour=c)),
        ("phy_rate.png", "PHY rate per path (data direction)", "Mbps", _lines(per_path, "path", "phy_rate_mbps", colour=c)),
        # Only with a metered device (energy_j NaN elsewhere: no line, no file).
        ("power.png", "Power per flow: its metered radios and the phone's receive-side host (100 ms means)",
         "power (W)", _lines(power_per_flow(tl), "flow", "power_w", steps=True, colour=c)),
    ]
    assert tuple(f for f, *_ in specs) == PLOT_FILES
    made = []
    for fname, title, ylabel, draw in specs:
        if _plot(out_dir, fname, ylabel, title, ev, draw):
            made.append((fname, title))
    return made


# --------------------------------------------------------------------------- HTML

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1000px; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.ok { color: #1a7f37; font-weight: bold; } .fail { color: #cf222e; font-weight: bold; }
img { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""


def _table(header: list[str], rows: list[list[Any]], left: int = 1) -> str:
    def cell(tag: str, i: int, v: Any) -> str:
        cls = ' class="l"' if i < left else ""
        return f"<{tag}{cls}>{html.escape(str(v))}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows)
    head_row = f"<tr>{head}</tr>" if any(header) else ""
    return f"<table>{head_row}{body}</table>"


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if x.is_integer() and abs(x) < 1e15:
            return f"{int(x):,}"
        return f"{x:,.1f}" if abs(x) >= 100 else f"{x:.{digits}g}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def energy_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]] | None:
    """The energy table: one row per metered radio (its meter: joules, mean power, time per
    state), the phone's receive-side host and the total; None when nothing is metered."""
    energy = summary.get("energy") or {}
    if energy.get("total_j") is None:
        return None
    header = ["", "joules", "mean mW", "Tx s", "on air s", "Rx s", "idle s", "PSM s", "PSM entries"]
    rows = []
    for p in summary.get("paths", []):
        e = p.get("energy")
        if not e:
            continue
        rows.append([f"radio {p.get('name')}", _fmt(e.get("joules")), _fmt(e.get("mean_power_mw")),
                     _fmt(e.get("tx_s")), _fmt(e.get("tx_on_s")), _fmt(e.get("rx_s")), _fmt(e.get("idle_s")),
                     _fmt(e.get("psm_s")), _fmt(e.get("psm_entries"))])
    host = energy.get("host")
    if host:
        rows.append(["host (receive side)", _fmt(host.get("joules")), _fmt(host.get("mean_power_mw")),
                     "-", "-", _fmt(host.get("rx_active_s")), "-", "-", "-"])
    rows.append(["total", _fmt(energy.get("total_j")), _fmt(energy.get("mean_power_mw")), *["-"] * 6])
    return header, rows


def render_html(result: "Result", plots: list[tuple[str, str]]) -> str:
    s = result.summary
    inv_ok = result.ok
    checks = s["invariants"].get("checks", [])
    run_rows = [
        ["scenario", s["scenario"]],
        ["description", s.get("scenario_config", {}).get("description", "")],
        ["seed", s["seed"]],
        ["simulated time (s)", _fmt(s.get("sim_s"))],
        ["wall time (s)", _fmt(s.get("wall_s"))],
        ["events", _fmt(s.get("events"))],
        ["events / s", _fmt(s.get("events_per_s"))],
        ["mmpath version", s.get("mmpath_version", "")],
    ]
    flow_header, flow_body = flow_rows(s)
    # Every scalar the core reports per path, in its order: the set grows with the models.
    paths = s.get("paths", [])
    path_keys = [k for k in (paths[0] if paths else {}) if k != "name"
                 and not isinstance(paths[0][k], (dict, list))]
    path_header = ["path", *path_keys]
    path_body = [[p.get("name"), *(_fmt(p.get(k)) for k in path_keys)] for p in paths]
    failed = [[c.get("flow"), c.get("check"), c.get("detail")] for c in checks if not c.get("ok")]
    verdict = (f'<span class="ok">ok</span> ({len(checks)} checks)' if inv_ok
               else f'<span class="fail">FAILED</span> ({len(failed)} of {len(checks)} checks)')
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>mmpath: {html.escape(str(s['scenario']))} (seed {s['seed']})</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>mmpath run: {html.escape(str(s['scenario']))}</h1>",
        _table(["", ""], [[k, v] for k, v in run_rows], left=2),
        f"<p>Invariant check (every byte delivered once and in order): {verdict}</p>",
    ]
    if failed:
        parts.append(_table(["flow", "check", "detail"], failed, left=3))
    parts += [
        "<h2>Flows</h2>", _table(flow_header, flow_body, left=4),
        "<h2>Paths</h2>", _table(path_header, path_body),
    ]
    energy = energy_rows(s)
    if energy is not None:
        nj = (s.get("energy") or {}).get("nj_per_bit")
        parts += [
            "<h2>Energy</h2>",
            "<p>The client's metered radios and its receive-side host (docs/models.md, Energy); "
            f"all flows: {html.escape(_fmt(nj))} nJ/bit.</p>",
            _table(*energy),
        ]
    parts += [
        "<h2>Plots</h2>",
        "<p>Vertical lines mark link events: red = link down, green = link up, dotted = rate change.</p>",
    ]
    for fname, caption in plots:
        parts.append(f"<h3>{html.escape(caption)}</h3>")
        parts.append(f'<img src="{html.escape(fname)}" alt="{html.escape(caption)}">')
    parts.append(
        "<p>Data: <code>summary.json</code>, <code>intervals.csv</code>, <code>timeline.parquet</code>, "
        "<code>iperf3.json</code> in this folder (columns: docs/outputs.md).</p>"
    )
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(result: "Result", out_dir: str | Path) -> Path:
    out = Path(out_dir)
    plots = make_plots(result, out)
    path = out / "report.html"
    path.write_text(render_html(result, plots), encoding="utf-8")
    return path
