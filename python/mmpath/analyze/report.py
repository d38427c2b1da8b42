"""report.html and analysis.png: throughput, cwnd, RTT and MCS/RSSI on one shared time axis.

Every panel shares the x axis (seconds from the analysis origin), so a dip in throughput lines up
with the cwnd, RTT and PHY state that explain it (seed 003's mmNetAnalyzer idea). Shading: link
down periods (red), throughput outages found by mmpath.metrics.outages (grey); vertical lines:
MPTCP MP_PRIO (blue), ADD_ADDR (green), reinjections (orange ticks), backup takeover (purple).
"""

from __future__ import annotations

import html
from pathlib import Path
from ..lazy import numpy as np, pandas as pd, pyplot as plt  # on first use (start-up time): lazy.py

from .. import metrics as M

PREFERRED = ("pcap", "ss", "run", "iperf3")  # which source draws a flow's throughput


def _pick_series(res) -> dict[str, set[str]]:
    """Which source draws each flow's throughput (source -> flows). A flow is drawn from one log:
    the first in PREFERRED order that holds it (several logs of one test would draw it twice),
    an MPTCP connection's subflows claimed with it (iperf3 names the connection by its first
    subflow); every flow of every mmpath run folder is drawn (each run, e.g. each variant of a
    comparison folder, is its own experiment). Before, one source was picked for all: analyzing
    the logs of several tests together drew only the first capture's flows."""
    kinds = {s.path: s.kind for s in res.sources}
    iv = res.intervals
    if iv.empty:
        return {}
    tot = iv.groupby(["source", "flow"], observed=True)["bytes"].sum()
    tot = tot[tot >= 10_000]
    subs: dict[tuple[str, str], set[str]] = {}
    for f in res.summary["flows"]:
        if f.get("connection"):
            subs.setdefault((str(f["source"]), str(f["connection"])), set()).add(str(f["name"]))
    rank = {k: i for i, k in enumerate(PREFERRED)}
    order = sorted(kinds, key=lambda p: rank.get(kinds[p], len(PREFERRED)))  # stable: input order within a kind
    drawn: dict[str, set[str]] = {}
    claimed: set[str] = set()
    for p in order:
        flows = [str(f) for (src, f) in tot.index if src == p]
        for flow in flows:
            names = {flow} | subs.get((p, flow), set())
            if kinds[p] != "run":
                if names & claimed:
                    continue
                claimed |= names
            drawn.setdefault(p, set()).add(flow)
    return drawn


def _pick_sources(res) -> list[str]:
    """The sources that draw throughput (see `_pick_series`), in drawing order."""
    return list(_pick_series(res))


def short_names(paths) -> dict[str, str]:
    """Each source by its file name, with its folder where two share a name (tcp/client.pcap and
    mptcp/client.pcap analyzed together)."""
    names = {}
    for p in dict.fromkeys(str(x) for x in paths):
        names[p] = Path(p).name
    dup = {n for n in names.values() if list(names.values()).count(n) > 1}
    return {p: (str(Path(*Path(p).parts[-2:])) if n in dup else n) for p, n in names.items()}


def _legend(a, twin=None) -> None:
    """A legend for every panel that has labelled lines (a twin axis' lines included); more than 8
    go beside the panel, so a comparison of several runs still says which line is which."""
    h, lbl = a.get_legend_handles_labels()
    if twin is not None:
        h2, l2 = twin.get_legend_handles_labels()
        h, lbl = h + h2, lbl + l2
    n = len(h)
    if not n:
        return
    if n <= 8:
        a.legend(h, lbl, fontsize=7, loc="best")  # the corner with the fewest data points
    else:
        a.legend(h, lbl, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 + (n - 1) // 14,
                 borderaxespad=0.0)


def _min_span(a, values, span: float, centre: float = 0.5) -> None:
    """Give axis `a` at least `span` units around `values` (placed at `centre` of the height), so a
    steady value is drawn inside the panel rather than on its edge."""
    v = values.dropna().to_numpy(float)
    if not v.size:
        return
    lo, hi = float(v.min()), float(v.max())
    if hi - lo >= span * 0.8:
        return
    mid = (lo + hi) / 2
    a.set_ylim(mid - span * centre, mid + span * (1 - centre))


def _series_style(res):
    """One label and one colour per (source, flow, subflow), shared by every panel, so a
    subflow's throughput, cwnd and RTT are the same colour. A subflow is named by its path where
    the logs give it ("download/11ad"), else by its index ("download sf1"); the source is named
    only when several sources are drawn."""
    keys: list[tuple[str, str, int]] = []
    paths: dict[tuple[str, str, int], str] = {}
    for df in (res.intervals, res.timeline):
        if df is None or df.empty or "subflow" not in df:
            continue
        cols = ["source", "flow", "subflow"] + (["path"] if "path" in df else [])
        for row in df[cols].drop_duplicates().itertuples(index=False):
            k = (str(row[0]), str(row[1]), int(row[2]))
            if k not in keys:
                keys.append(k)
            p = row[3] if len(row) > 3 else None
            if k[2] >= 0 and isinstance(p, str) and p and k not in paths:
                paths[k] = p
    many = len({k[0] for k in keys}) > 1
    short = short_names([s.path for s in res.sources] + [k[0] for k in keys])
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if len(keys) > len(cycle):  # more series than the default 10 colours: no two lines alike
        cm = plt.get_cmap("tab20")
        cycle = [matplotlib_colors_hex(cm(i)) for i in range(20)]
    # Two subflows of one connection on one path (one per server address, the tour's capture of
    # `tcpdump -i any`) had one label for two lines: those also carry their index.
    per_path: dict[tuple, int] = {}
    for k, p in paths.items():
        per_path[(k[0], k[1], p)] = per_path.get((k[0], k[1], p), 0) + 1
    # One source: each path's subflow in the path's colour of the run report and compare.png
    # (C0, C1, ... in path order, here the order of the subflows), the rest after them.
    colour_of: dict[tuple[str, str, int], str] = {}
    if not many and len(set(paths.values())) == len(paths):
        order = sorted(paths, key=lambda k: k[2])
        colour_of = {k: cycle[i % len(cycle)] for i, k in enumerate(order)}
        rest = [k for k in keys if k not in colour_of]
        colour_of.update({k: cycle[(len(order) + i) % len(cycle)] for i, k in enumerate(rest)})
    style = {}
    for i, k in enumerate(keys):
        src, flow, sub = k
        if sub < 0:
            name = flow
        elif k in paths:
            name = f"{flow}/{paths[k]}" + (f" sf{sub}" if per_path[(src, flow, paths[k])] > 1 else "")
        else:
            name = f"{flow} sf{sub}"
        label = f"{short[src]}: {name}" if many else name
        # long labels keep both ends (which log, which flow), cut in the middle
        style[k] = (label if len(label) <= 60 else label[:20] + "…" + label[-39:], colour_of.get(k, cycle[i % len(cycle)]))
    return style


def matplotlib_colors_hex(rgba) -> str:
    from matplotlib.colors import to_hex  # heavy: loaded with the first plot, not at start-up

    return to_hex(rgba)


def plot(res, path: Path) -> bool:
    runs = [s.path for s in res.sources if s.kind == "run"]
    fig = figure_per_run(res) if len(runs) > 1 and len(runs) == len(res.sources) else figure(res)[0]
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return True


def figure_per_run(res):
    """Several mmpath run folders (a comparison's variants): small multiples, one row per run,
    its throughput (left: each path's subflow in that path's colour, the connection's total in
    black) and its RTT (right), on shared axes; shading explained in the legend. One axis of
    every variant's every series was unreadable (the default demo: 13 lines)."""
    from matplotlib.lines import Line2D  # heavy: loaded with the first plot, not at start-up
    from matplotlib.patches import Patch  # heavy, as above

    srcs = [s.path for s in res.sources]
    short = short_names(srcs)
    iv, tl, ev = res.intervals, res.timeline, res.events
    paths: list[str] = []
    for src in srcs:
        sub = iv[(iv["source"] == src) & (iv["subflow"] >= 0)].sort_values(["subflow", "t_s"], kind="stable")
        for p in sub["path"].dropna().astype(str):
            if p and p not in paths:
                paths.append(p)
    for p in iv["path"].dropna().astype(str).unique():
        if p and p not in paths and "+" not in p:
            paths.append(p)
    colour = {p: f"C{i % 10}" for i, p in enumerate(paths)}
    n = len(srcs)
    fig, axes = plt.subplots(n, 2, figsize=(12, 1.7 * n + 1.2), sharex=True, sharey="col", squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2]})
    spans_seen = {"down": False, "outage": False}
    for (ax, axr), src in zip(axes, srcs):
        d = iv[iv["source"] == src]
        with_sub = set(d.loc[d["subflow"] >= 0, "flow"].astype(str))
        for (flow, sf), g in d.groupby(["flow", "subflow"], observed=True, sort=True):
            if g["bytes"].sum() < 10_000:
                continue
            p = g["path"].dropna().astype(str)
            p = p.iloc[0] if len(p) else ""
            if sf < 0 and str(flow) in with_sub:
                ax.step(g["t_s"], g["mbps"], where="post", lw=0.9, color="k", alpha=0.7)
            else:
                ax.step(g["t_s"], g["mbps"], where="post", lw=1.1, color=colour.get(p, "k"))
        t = tl[tl["source"] == src] if len(tl) and "subflow" in tl else tl.iloc[0:0]
        t = t[(t["subflow"] >= 0) | ~t["flow"].astype(str).isin(with_sub)]  # a connection's own rows: no RTT
        if len(t):
            for (flow, sf), g in t.groupby(["flow", "subflow"], observed=True, sort=True):
                c = "srtt_ms" if g["srtt_ms"].notna().any() else "rtt_ms"
                g = g[g[c].notna()]
                p = g["path"].dropna().astype(str)
                if len(g):
                    axr.plot(g["t_s"], g[c], lw=0.7, color=colour.get(p.iloc[0] if len(p) else "", "k"))
        e = ev[(ev["source"] == src) & ev["kind"].isin(["down", "up"])] if len(ev) else ev
        down = M.link_outages(e["t_s"], e["path"], e["kind"], e["value"], set(e["path"].astype(str)),
                              end_s=float(iv["t_s"].max()) + 0.1) if len(e) else []
        outs = [(o["start_s"], o["end_s"]) for f in res.summary["flows"] if f["source"] == src
                for o in f.get("outages") or [] if (o["start_s"], o["end_s"]) not in down]
        for a in (ax, axr):
            for t0, t1 in down:
                a.axvspan(t0, t1, color="red", alpha=0.10, lw=0)
            for t0, t1 in outs:
                a.axvspan(t0, t1, color="grey", alpha=0.25, lw=0)
            a.grid(alpha=0.3)
        spans_seen["down"] |= bool(down)
        spans_seen["outage"] |= bool(outs)
        conn = [f for f in res.summary["flows"] if f["source"] == src and not f.get("connection")]
        gp = ", ".join(f"{f['name']} {f['mbps']:.0f} Mbit/s" for f in conn if f.get("mbps") is not None)
        ax.set_title(f"{short.get(src, Path(src).name)}: {gp}", fontsize=9, loc="left")
        ax.set_ylabel("Mbit/s")
        axr.set_ylabel("RTT ms")
    axes[-1, 0].set_xlabel(f"time (s), {res.summary['bin_s']:g} s bins")
    axes[-1, 1].set_xlabel("time (s)")
    handles = [Line2D([], [], color=colour[p], lw=1.5, label=f"path {p}") for p in paths]
    handles.append(Line2D([], [], color="k", alpha=0.7, lw=1, label="MPTCP connection (all paths)"))
    if spans_seen["down"]:
        handles.append(Patch(color="red", alpha=0.10, label="a path down (link events)"))
    if spans_seen["outage"]:
        handles.append(Patch(color="grey", alpha=0.25, label="flow's throughput outage"))
    fig.legend(handles=handles, loc="upper center", ncol=min(len(handles), 5), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / (1.7 * n + 1.2)))
    return fig


def figure(res):
    """The analysis figure and its panels by name (tput, cwnd, rtt, phy)."""
    tl = res.timeline
    # TCP state of the flows the summary lists (>= 10 kB, or an MPTCP connection of that size):
    # iperf3's control connection, sampled by ss and captured too, is a flat line otherwise.
    keep = {(str(f["source"]), str(f.get("connection") or f["name"])) for f in res.summary["flows"]
            if f.get("bytes", 0) >= 10_000}

    def shown(s, f) -> bool:
        return not keep or (str(s), str(f)) in keep

    # The cwnd and RTT panels only when a listed flow has such samples: a UDP test's capture has
    # RTT samples of iperf3's control connection alone, which gave an empty RTT panel.
    tcp_state = tl
    if keep and len(tl):
        tcp_state = tl[pd.MultiIndex.from_arrays([tl["source"].astype(str), tl["flow"].astype(str)]).isin(keep)]
    panels = ["tput"]
    if "cwnd_bytes" in tcp_state and tcp_state["cwnd_bytes"].notna().any():
        panels.append("cwnd")
    if tcp_state[["srtt_ms", "rtt_ms"]].notna().any().any():
        panels.append("rtt")
    if tl[["mcs", "rssi_dbm"]].notna().any().any():
        panels.append("phy")
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(11, 2.4 * len(panels) + 0.6), squeeze=False)
    axes = axes[:, 0]
    series = _pick_series(res)
    srcs = list(series)
    big = [f for f in res.summary["flows"] if str(f.get("connection") or f["name"]) in series.get(f["source"], ())]
    style = _series_style(res)

    def look(s, f, sf):
        return style.get((str(s), str(f), int(sf)), (f"{f}", None))

    ax = axes[0]
    for src in srcs:
        iv = res.intervals[res.intervals["source"] == src]
        for (flow, sub), g in iv.groupby(["flow", "subflow"], observed=True):
            if g["bytes"].sum() < 10_000 or str(flow) not in series[src]:
                continue
            lbl, colour = look(src, flow, sub)
            ax.step(g["t_s"], g["mbps"], where="post", lw=1, label=lbl, color=colour)
    if srcs:
        short = short_names([s.path for s in res.sources])
        names = ", ".join(short.get(x, Path(x).name) for x in srcs)
        ax.set_title(f"throughput ({res.summary['bin_s']:g} s bins) from {names}", fontsize=9)
    ax.set_ylabel("Mbit/s")
    _legend(ax)
    for name, a in zip(panels[1:], axes[1:]):
        if name == "cwnd":
            d = tl[tl["cwnd_bytes"].notna()]
            for (s, f, sf), g in d.groupby(["source", "flow", "subflow"], observed=True):
                if not shown(s, f):
                    continue
                lbl, colour = look(s, f, sf)
                a.step(g["t_s"], g["cwnd_bytes"] / 1e3, where="post", lw=1, label=lbl, color=colour)
            a.set_ylabel("cwnd kB")
        elif name == "rtt":
            col = "rtt_ms"
            for (s, f, sf), g in tl.groupby(["source", "flow", "subflow"], observed=True):
                if not shown(s, f):
                    continue
                c = "srtt_ms" if g["srtt_ms"].notna().any() else col
                g = g[g[c].notna()]
                if len(g):
                    lbl, colour = look(s, f, sf)
                    a.plot(g["t_s"], g[c], lw=0.8, label=lbl, color=colour)
            a.set_ylabel("RTT ms")
        elif name == "phy":
            # One colour per path for its MCS (solid) and RSSI (dashed), both in the legend, and
            # each axis at least a few steps tall: a steady link drew its MCS on the panel's edge
            # and its RSSI (right axis, not in the legend) exactly over it, so the RSSI could not
            # be seen (found by the analyzer tour on an mmpath run: MCS 8/9, RSSI -41.9/-41.4 dBm).
            # A sample with the link down stays in (no MCS, no RSSI), so the lines break there
            # instead of joining across a disconnection as if the link had held its MCS.
            down = (tl["link_up"] == False) if "link_up" in tl else False  # noqa: E712 (object column)
            d = tl[tl["mcs"].notna() | tl["rssi_dbm"].notna() | down]
            cyc = plt.rcParams["axes.prop_cycle"].by_key()["color"]
            # A path in the colour of its subflow's throughput, cwnd and RTT lines (the first one
            # drawn on it), so 11ad is one colour in every panel; else the next of the cycle.
            iv = res.intervals
            on_path: dict[str, str] = {}
            if len(iv) and "path" in iv:
                rows = iv.loc[iv["subflow"] >= 0, ["source", "flow", "subflow", "path"]].dropna().drop_duplicates()
                for s_, f_, sf_, p_ in rows.itertuples(index=False):
                    on_path.setdefault(str(p_), look(s_, f_, sf_)[1])
            colour = {p: on_path.get(p) or cyc[i % len(cyc)]
                      for i, p in enumerate(sorted(d["path"].astype(str).unique()))}
            for p, g in d.groupby("path", observed=True):
                if g["mcs"].notna().any():
                    a.step(g["t_s"], g["mcs"], where="post", lw=1, label=f"MCS {p}", color=colour[str(p)])
            a.set_ylabel("MCS")
            _min_span(a, d["mcs"], 4.0, centre=0.6)
            a2 = None
            if d["rssi_dbm"].notna().any():
                a2 = a.twinx()
                for p, g in d.groupby("path", observed=True):
                    if g["rssi_dbm"].notna().any():
                        a2.plot(g["t_s"], g["rssi_dbm"], lw=0.8, ls="--", label=f"RSSI {p}",
                                color=colour[str(p)])
                a2.set_ylabel("RSSI dBm")
                _min_span(a2, d["rssi_dbm"], 20.0, centre=0.25)
            _legend(a, a2)
            continue
        _legend(a)
    # events on every panel
    ev = res.events
    downs = []
    if len(ev):
        for p, g in ev[ev["kind"].isin(["down", "up"])].groupby("path", observed=True):
            t_down = None
            for t, k in zip(g["t_s"], g["kind"]):
                if k == "down" and t_down is None:
                    t_down = t
                elif k == "up" and t_down is not None:
                    downs.append((t_down, t))
                    t_down = None
            if t_down is not None:
                downs.append((t_down, None))
    xmax = max([a.get_xlim()[1] for a in axes])
    for a in axes:
        for t0, t1 in downs:
            a.axvspan(t0, t1 if t1 is not None else xmax, color="red", alpha=0.12, lw=0)
        for f in big:
            for o in f.get("outages") or []:
                a.axvspan(o["start_s"], o["end_s"], color="grey", alpha=0.15, lw=0)
        if len(ev):
            for t in ev.loc[ev["kind"] == "mp_prio", "t_s"]:
                a.axvline(t, color="tab:blue", lw=0.8, ls=":")
            for t in ev.loc[ev["kind"] == "add_addr", "t_s"]:
                a.axvline(t, color="tab:green", lw=0.8, ls=":")
        for c in res.summary.get("connections", []):
            if c.get("takeover"):
                a.axvline(c["takeover"]["t_s"], color="purple", lw=1.2, ls="--")
    if len(ev) and (ev["kind"] == "reinjection").any():
        ymax = axes[0].get_ylim()[1]
        axes[0].plot(ev.loc[ev["kind"] == "reinjection", "t_s"], np.full((ev["kind"] == "reinjection").sum(), ymax * 0.97),
                     "|", color="tab:orange", ms=8, label="reinjection")
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    return fig, dict(zip(panels, axes))


def _table(rows: list[dict], cols: list[str]) -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            if isinstance(v, float):
                v = f"{v:.4g}"
            elif isinstance(v, (list, dict)):
                v = len(v) if c in ("outages", "drops") else v
            cells.append(f"<td>{html.escape('' if v is None else str(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{h}</tr>{''.join(body)}</table>"


def write_report(res, out: Path) -> None:
    out = Path(out)
    has_plot = False
    try:
        has_plot = plot(res, out / "analysis.png")
    except Exception as e:  # a plot must never cost the analysis; say why in the page
        err = f"<p>plot failed: {html.escape(str(e))}</p>"
    else:
        err = ""
    s = res.summary
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>mmpath analyze</title>",
        "<style>body{font-family:sans-serif;margin:1.5em;max-width:1200px}table{border-collapse:collapse;"
        "font-size:12px;margin:0.6em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        "th{background:#eee}td:first-child,td:nth-child(2){text-align:left}</style></head><body>",
        "<h1>mmpath analyze</h1>",
        f"<p>{len(s['sources'])} sources, {len(s['flows'])} flows "
        f"({s.get('minor_flows', 0)} more under {s.get('minor_flow_bytes', 10_000)} bytes counted, not listed), "
        f"{len(s.get('connections', []))} MPTCP connections "
        f"({sum(1 for c in s.get('connections', []) if c.get('minor'))} of them small, marked minor), "
        f"{s['duration_s']} s, bins {s['bin_s']} s.</p>",
    ]
    if has_plot:
        parts.append("<img src='analysis.png' alt='throughput, cwnd, RTT and MCS/RSSI on a shared time axis' "
                     "style='max-width:100%'>")
    parts.append(err)
    parts.append("<h2>Flows</h2>")
    flows = [{**f, "rtt_mean_ms": (f.get("rtt_ms") or {}).get("mean")} for f in s["flows"]]
    parts.append(_table(flows, ["source", "name", "kind", "path", "subflow", "bytes", "duration_s", "mbps",
                                "retrans_pct", "rtt_mean_ms", "outages", "drops", "ben", "normalized_throughput"]))
    if s.get("connections"):
        parts.append("<h2>MPTCP connections</h2>")
        rows = [{**c, "takeover_s": (c.get("takeover") or {}).get("t_s"),
                 "shares": ", ".join(f"{k}: {v:.2f}" for k, v in c["path_shares"].items() if v is not None)}
                for c in s["connections"]]
        parts.append(_table(rows, ["source", "name", "mbps", "bytes", "minor", "reinjections", "reinjected_bytes",
                                   "takeover_s", "shares"]))
    if s.get("iperf3_agreement"):
        parts.append("<h2>iperf3 vs capture</h2>")
        parts.append(_table(s["iperf3_agreement"], ["iperf3", "side", "capture", "flow", "iperf3_mbps",
                                                    "capture_mbps", "diff_pct", "capture_missing_s"]))
    parts.append("<h2>Sources and alignment</h2>")
    parts.append(_table(s["sources"], ["path", "kind", "clock", "offset_s", "anchor", "flows", "samples", "error"]))
    parts.append("</body></html>")
    (out / "report.html").write_text("\n".join(parts), encoding="utf-8")
