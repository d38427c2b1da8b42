"""report.html with PNG plots beside it (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

# Imported on first use (start-up time); pyplot with the Agg backend (headless: CI, ssh sessions,
# worker processes).
from .lazy import numpy as np, pandas as pd, pyplot as plt
from .runstats import whole_samples
from .table import flow_rows

if TYPE_CHECKING:
    from .api import Result

_MAX_POINTS = 4000  # per line, about: more is invisible at this size and slows savefig down
_MAX_RATE_EVENTS = 200  # beyond this, "rate" events would paint the plot grey
_EVENT_STYLE = {
    "down": dict(color="tab:red", linestyle="-", alpha=0.6),
    "up": dict(color="tab:green", linestyle="-", alpha=0.6),
}
_DEFAULT_EVENT_STYLE = dict(color="0.5", linestyle=":", alpha=0.5)


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


def _per_subflow(timeline: pd.DataFrame, shared: set[tuple[str, str]] | None = None) -> pd.DataFrame:
    """TCP state rows with a `series` label: the flow, or for an MPTCP subflow "flow/path" (its
    subflow index too where two subflows share a path, as an address mesh's do). An MPTCP
    connection's own rows carry no cwnd or RTT and are left out; grouping by flow alone would
    interleave the subflows' windows into one saw-tooth line."""
    if len(timeline) == 0 or "subflow" not in timeline.columns:
        return timeline.assign(series=timeline.get("flow", pd.Series(dtype=object)))
    tl = timeline[(timeline["subflow"] >= 0) | timeline["path"].notna()]
    if shared is None:  # (`shared`: the pairs two subflows share, when `timeline` is a part of it)
        sub = tl[tl["subflow"] >= 0]
        counts = sub.groupby(["flow", "path"], observed=True)["subflow"].nunique()
        shared = {(str(f), str(p)) for (f, p), n in counts.items() if n > 1}
    flow, path, sf = tl["flow"].astype(str), tl["path"].astype(str), tl["subflow"].astype(int)
    label = [f if k < 0 else (f"{f}/{p}#{k}" if (f, p) in shared else f"{f}/{p}")
             for f, p, k in zip(flow, path, sf)]
    return tl.assign(series=label)


def _per_path_samples(timeline: pd.DataFrame) -> pd.DataFrame:
    """Path-level columns repeat on every flow's row; keep one sample per (path, time)."""
    if len(timeline) == 0:
        return timeline
    return timeline.drop_duplicates(subset=["path", "t_s"], keep="first")


def throughput_by_path(iv: pd.DataFrame, has_sub: Any = None) -> pd.DataFrame:
    """Bytes per (path, bin): subflow rows where a flow has them (`has_sub`: those flows, when
    `iv` is a part of the intervals), else its connection row."""
    if has_sub is None:
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


def _batches(result: "Result", name: str, columns: list[str]) -> Any:
    """A pass over the run's `name` ("timeline", "intervals"): a streamed run's file a batch
    at a time (outputs.TimelineFile.groups), an in-memory run's frame as one batch; regrouped so
    no sample time is split between two batches."""
    src = getattr(result, f"_{name}", None)
    if hasattr(src, "groups"):
        have = set(src.columns())
        return whole_samples(lambda: src.groups([c for c in columns if c in have]))
    return whole_samples(lambda: iter([getattr(result, name)]))


def _split(df: pd.DataFrame, key: str, column: str, scale: float = 1.0) -> Iterator[tuple[str, Any, Any, Any]]:
    """(label, its order, t_s, values) of each line in this batch, as groupby(key, observed=True,
    sort=True) groups the whole frame: categories in their order, other labels sorted."""
    if column not in df.columns or key not in df.columns or len(df) == 0:
        return
    col = df[key]
    t = df["t_s"].to_numpy(dtype=np.float64)
    v = df[column].to_numpy(dtype=np.float64) * scale
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
        cats = col.cat.categories
        for c in np.unique(codes[codes >= 0]):
            sel = codes == c
            yield str(cats[c]), (0, int(c), ""), t[sel], v[sel]
    else:
        labels = col.to_numpy(dtype=object)
        for label in sorted({x for x in labels if isinstance(x, str)}):
            sel = labels == label
            yield label, (1, 0, label), t[sel], v[sel]


class _Lines:
    """One plot's lines, from two passes over the data: count() sees every line's rows, keep()
    then keeps every step-th of them (step = rows // _MAX_POINTS: the stride the plots always took of a whole
    line), so a line holds at most 2 x _MAX_POINTS points however long the run (a day of 10 ms
    samples is 8.6 million per line)."""

    def __init__(self) -> None:
        self.rows: dict[str, int] = {}
        self.finite: dict[str, bool] = {}
        self.order: dict[str, Any] = {}
        self.seen: dict[str, int] = {}
        self.t: dict[str, list[Any]] = {}
        self.v: dict[str, list[Any]] = {}

    def count(self, parts: Iterator[tuple[str, Any, Any, Any]]) -> None:
        for label, order, _, v in parts:
            self.order.setdefault(label, order)
            self.rows[label] = self.rows.get(label, 0) + len(v)
            self.finite[label] = self.finite.get(label, False) or bool(np.isfinite(v).any())

    def keep(self, parts: Iterator[tuple[str, Any, Any, Any]]) -> None:
        for label, _, t, v in parts:
            step = max(1, self.rows[label] // _MAX_POINTS)
            at = self.seen.get(label, 0)
            pick = np.flatnonzero((at + np.arange(len(v))) % step == 0)
            self.seen[label] = at + len(v)
            self.t.setdefault(label, []).append(t[pick])
            self.v.setdefault(label, []).append(v[pick])

    def draw(self, steps: bool = False, colour: Callable[[str], str | None] | None = None) -> Callable[[Any], bool]:
        """A draw function: one line per label, in the order groupby(key, sort=True) gives."""

        def draw(ax) -> bool:
            drew = False
            for label in sorted(self.rows, key=lambda k: self.order[k]):
                if not self.finite[label]:
                    continue  # e.g. cwnd of a UDP flow
                t = np.concatenate(self.t.get(label) or [np.empty(0)])
                v = np.concatenate(self.v.get(label) or [np.empty(0)])
                if steps and len(t):  # close the last bin at its end, not its start
                    t, v = np.append(t, t[-1] + 0.1), np.append(v, v[-1])
                ax.plot(t, v, linewidth=1, label=label, drawstyle="steps-post" if steps else "default",
                        color=colour(label) if colour else None)
                drew = True
            return drew

        return draw


class _Power:
    """power_per_flow in passes: the first (first()) finds each flow's first and last sample,
    each later one (bins()) makes the same 100 ms bins batch by batch, interpolating the
    cumulative energy between the samples on either side of each bin edge, as np.interp over
    the whole series does."""

    BIN_S = 0.1

    def __init__(self) -> None:
        self.span: dict[str, list[float]] = {}  # flow -> [first t, last t, samples]
        self.order: dict[str, Any] = {}

    @staticmethod
    def _own(b: pd.DataFrame) -> Iterator[tuple[str, Any, Any]]:
        if len(b) == 0 or "energy_j" not in b.columns:
            return
        own = b[b["subflow"] < 0] if "subflow" in b.columns else b
        for label, _, t, e in _split(own, "flow", "energy_j"):
            ok = np.isfinite(t) & np.isfinite(e)
            if ok.any():
                yield label, t[ok], e[ok]

    def first(self, b: pd.DataFrame) -> None:
        for label, t, _ in self._own(b):
            sp = self.span.setdefault(label, [float(t[0]), float(t[-1]), 0])
            sp[1] = float(t[-1])
            sp[2] += len(t)

    def start(self) -> None:
        """Before a pass of bins()."""
        self.state: dict[str, dict[str, Any]] = {}
        for label, (t0, t1, n) in self.span.items():
            if n < 2 or t1 <= t0:
                continue
            # np.arange(t0, t1, 0.1) element by element (numpy's DOUBLE_fill: the first two
            # values, then t0 + i * delta), and np.append(..., t1).
            m = max(int(np.ceil((t1 - t0) / self.BIN_S)), 0)
            delta = (t0 + self.BIN_S) - t0
            last_kept = m - 1
            if m and t1 - self._edge(t0, delta, m - 1) <= 1e-12:
                last_kept = m - 2  # edges closer than 1e-12 to the next are dropped
            self.state[label] = {"t0": t0, "t1": t1, "delta": delta, "m": last_kept + 1, "i": 0, "done": False,
                                 "xp": None, "fp": None, "prev": None}

    def _edge(self, t0: float, delta: float, i: int) -> float:
        if i == 0:
            return t0
        if i == 1:
            return t0 + self.BIN_S
        return t0 + float(i) * delta

    def bins(self, b: pd.DataFrame) -> Iterator[tuple[str, Any, Any, Any]]:
        """(flow, its order, bin starts, mean power) of the bins whose edges this batch reaches."""
        for label, t, e in self._own(b):
            st = self.state.get(label)
            if st is None:
                continue
            xp = t if st["xp"] is None else np.concatenate([[st["xp"]], t])
            fp = e if st["fp"] is None else np.concatenate([[st["fp"]], e])
            st["xp"], st["fp"] = float(xp[-1]), float(fp[-1])
            edges = []
            while st["i"] < st["m"]:
                x = self._edge(st["t0"], st["delta"], st["i"])
                if x > xp[-1]:
                    break
                edges.append(x)
                st["i"] += 1
            if st["i"] >= st["m"] and not st["done"] and st["t1"] <= xp[-1]:
                edges.append(st["t1"])
                st["done"] = True
            if not edges:
                continue
            x = np.asarray(edges)
            y = np.interp(x, xp, fp)
            if st["prev"] is not None:
                x, y = np.concatenate([[st["prev"][0]], x]), np.concatenate([[st["prev"][1]], y])
            st["prev"] = (float(x[-1]), float(y[-1]))
            if len(x) >= 2:
                yield label, (1, 0, label), x[:-1], np.diff(y) / np.diff(x)


def make_plots(result: "Result", out_dir: Path) -> list[tuple[str, str]]:
    """Write the PNGs; return [(file name, caption)] of those that had data.

    The intervals and the timeline are read in a few passes, a batch at a time (a streamed run's
    file read 16 Ki rows at a time): each line keeps every k-th point, about _MAX_POINTS of them (_Lines)."""
    ev = result.events
    c = plot_colours([str(p["name"]) for p in result.summary.get("paths", [])],
                     list((result.scenario.config if result.scenario is not None else {}).get("flow") or []))
    # Intervals: which flows have subflow rows; then the lines, counted, then kept.
    has_sub: set[str] = set()
    for iv in _batches(result, "intervals", ["t_s", "flow", "subflow", "path", "bytes", "mbps"]):
        has_sub |= {str(f) for f in iv.loc[iv["subflow"] >= 0, "flow"].unique()}
    flow_tp, path_tp = _Lines(), _Lines()
    for k in range(2):
        for iv in _batches(result, "intervals", ["t_s", "flow", "subflow", "path", "bytes", "mbps"]):
            conn = iv[iv["subflow"] < 0]
            by_path = throughput_by_path(iv, [f for f in iv["flow"].unique() if str(f) in has_sub])
            (flow_tp.count if k == 0 else flow_tp.keep)(_split(conn, "flow", "mbps"))
            (path_tp.count if k == 0 else path_tp.keep)(_split(by_path, "path", "mbps"))
    # Timeline: which (flow, path) pairs two subflows share, each flow's energy samples; then
    # the lines, counted, then kept.
    tl_cols = ["t_s", "flow", "path", "subflow", "cwnd_bytes", "srtt_ms", "queue_bytes", "phy_rate_mbps", "energy_j"]
    subflows: dict[tuple[str, str], set[int]] = {}
    power = _Power()
    for tl in _batches(result, "timeline", tl_cols):
        if len(tl) and "subflow" in tl.columns:
            sub = tl[tl["subflow"] >= 0]
            for (f, p), g in sub.groupby(["flow", "path"], observed=True)["subflow"]:
                subflows.setdefault((str(f), str(p)), set()).update(int(x) for x in g.unique())
        power.first(tl)
    shared = {k for k, ids in subflows.items() if len(ids) > 1}
    cwnd, rtt, queue, phy, pw = _Lines(), _Lines(), _Lines(), _Lines(), _Lines()
    for k in range(2):
        power.start()
        for tl in _batches(result, "timeline", tl_cols):
            tcp = _per_subflow(tl, shared)
            per_path = _per_path_samples(tl)
            for lines, part in ((cwnd, _split(tcp, "series", "cwnd_bytes", 1e-3)),
                                (rtt, _split(tcp, "series", "srtt_ms")),
                                (queue, _split(per_path, "path", "queue_bytes", 1e-3)),
                                (phy, _split(per_path, "path", "phy_rate_mbps")),
                                (pw, power.bins(tl))):
                (lines.count if k == 0 else lines.keep)(part)
    specs = [
        ("throughput_flow.png", "Goodput per flow (100 ms bins)", "Mbps", flow_tp.draw(steps=True, colour=c)),
        ("throughput_path.png", "Goodput per path (100 ms bins)", "Mbps", path_tp.draw(steps=True, colour=c)),
        ("cwnd.png", "Congestion window per flow (MPTCP: per subflow)", "cwnd (KB)", cwnd.draw(colour=c)),
        ("rtt.png", "Smoothed RTT per flow (MPTCP: per subflow)", "srtt (ms)", rtt.draw(colour=c)),
        ("queue.png", "Transmit queue per path (data direction)", "queue (KB)", queue.draw(colour=c)),
        ("phy_rate.png", "PHY rate per path (data direction)", "Mbps", phy.draw(colour=c)),
        # Only with a metered device (energy_j NaN elsewhere: no line, no file).
        ("power.png", "Power per flow: its metered radios and the phone's receive-side host (100 ms means)",
         "power (W)", pw.draw(steps=True, colour=c)),
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
