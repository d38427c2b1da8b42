"""summary.json of an analysis: per source, per flow, per MPTCP connection, per path; comparisons.

Metric definitions are those of mmpath.metrics (shared with the simulator's summary); the keys are
listed in docs/analyze.md.
"""

from __future__ import annotations

import math

from .. import metrics as M
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from ..version import __version__
from . import pcap as pc
from .model import Source
from .report import short_names

# Flows below this (iperf3 control connections, DNS, ...) are left out of `flows` and only counted
# (`minor_flows`, with this threshold as `minor_flow_bytes`). MPTCP connections are all listed in
# `connections`, the small ones with `minor: true` (docs/analyze.md).
MINOR_BYTES = 10_000


def _r(x, nd=6):
    if x is None:
        return None
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return round(x, nd) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _series(intervals: pd.DataFrame, source: str, flow: str, subflow: int, t0: float | None, t1: float | None,
            bin_s: float):
    rows = intervals[(intervals["source"] == source) & (intervals["flow"] == flow)
                     & (intervals["subflow"] == subflow)]
    if rows.empty:
        return np.empty(0), np.empty(0)
    g = rows.groupby("t_s")["bytes"].sum()
    k = np.round(g.index.to_numpy(float) / bin_s).astype(np.int64)
    lo = int(np.floor((t0 if t0 is not None else g.index.min()) / bin_s + 1e-9))
    hi = int(np.floor((t1 if t1 is not None else g.index.max()) / bin_s + 1e-9))
    lo, hi = min(lo, k.min()), max(hi, lo)
    grid = np.arange(lo, hi + 1)
    v = np.zeros(grid.size)
    m = (k >= lo) & (k <= hi)
    v[k[m] - lo] = g.to_numpy(float)[m]
    return grid * bin_s, v * 8 / bin_s / 1e6


def _rtt(timeline: pd.DataFrame, source: str, flow: str, subflow: int):
    if timeline.empty:
        return np.empty(0)
    rows = timeline[(timeline["source"] == source) & (timeline["flow"] == flow) & (timeline["subflow"] == subflow)]
    for c in ("rtt_ms", "srtt_ms"):
        if c in rows and rows[c].notna().any():
            return rows[c].dropna().to_numpy(float)
    return np.empty(0)


def _flow_metrics(t, mbps, rtt, floor_mbps, link_spans=()):
    out = {}
    outs = M.outages(t, mbps, floor_mbps=floor_mbps) if t.size else []
    # An outage touching the series' first or last bin is the flow starting/ending, not a link outage.
    if t.size:
        outs = [(a, b) for a, b in outs if a > t[0] + 1e-9 and b < t[-1] + (t[1] - t[0] if t.size > 1 else 0) - 1e-9]
    # The measure of the run's summary and `emu run --compare` (metrics.outage_and_recovery): from
    # the flow's paths' link events where the source has them (an mmpath run folder's
    # metrics.link_outages), else (a capture knows no link state) from its throughput.
    if t.size and len(link_spans):
        outs = [(a, b) for a, b in link_spans if t[0] - 1e-9 <= a <= t[-1] + 1e-9]
    rec = [M.outage_and_recovery(t, mbps, a, b, pre_s=2.0, frac=0.1,
                                 bin_s=float(t[1] - t[0]) if t.size > 1 else 0.1) for a, b in outs]
    out["outages"] = [{"start_s": _r(a), "end_s": _r(b), "length_s": _r(b - a),
                       "resaturation_s": _r(m["recovery_s"])} for (a, b), m in zip(outs, rec)]
    # Likewise a drop that starts in the last bin is the flow ending inside that bin (a test that
    # stops at 3.006 s leaves 6 ms of data in the 3.0-3.1 s bin), not a fall of throughput.
    drops = M.throughput_drops(t, mbps) if t.size else []
    out["drops"] = [{k: _r(v) for k, v in d.items()} for d in drops if d["start_s"] < t[-1] - 1e-9]
    if rtt.size:
        base = float(np.min(rtt))
        infl = M.rtt_inflation(rtt, base)
        out["rtt_ms"] = {"min": _r(base), "mean": _r(infl["mean_ms"]), "p95": _r(infl["p95_ms"]),
                         "max": _r(float(np.max(rtt))), "samples": int(rtt.size)}
        out["rtt_inflation"] = {k: _r(v) for k, v in infl.items() if k != "samples"}
    return out


def _takeover(subs: list[dict], series: dict, bin_s: float):
    """Backup takeover: first bin where a backup subflow carries more than all primaries together."""
    backups = [s for s in subs if s.get("backup")]
    prim = [s for s in subs if not s.get("backup")]
    if not backups or not prim:
        return None
    allt = sorted(set().union(*[set(np.round(series[s["_key"]][0], 9)) for s in subs if s["_key"] in series]))
    if not allt:
        return None
    idx = {t: i for i, t in enumerate(allt)}

    def dense(group):
        v = np.zeros(len(allt))
        for s in group:
            if s["_key"] in series:
                tt, mm = series[s["_key"]]
                for a, b in zip(np.round(tt, 9), mm):
                    v[idx[a]] += b
        return v

    pb, bb = dense(prim), dense(backups)
    t = np.array(allt)
    win = np.flatnonzero((bb > pb) & (bb > 0))
    if not win.size:
        return None
    i = int(win[0])
    before = np.flatnonzero(pb[:i] > 0)
    last_primary = float(t[before[-1]] + bin_s) if before.size else None
    after_b, after_p = bb[i:].sum(), pb[i:].sum()
    return {"t_s": _r(float(t[i])), "primary_last_data_s": _r(last_primary),
            "gap_s": _r(float(t[i]) - last_primary) if last_primary is not None else None,
            "backup_share_after": _r(after_b / (after_b + after_p)) if after_b + after_p > 0 else None,
            "backup_subflows": [s["subflow"] for s in backups]}


def _iperf3_agreement(sources: list[Source], table: dict):
    """iperf3's receiver throughput vs the capture's bytes ACKed within iperf3's own test window."""
    out = []
    caps = [s for s in sources if s.kind == "pcap"]
    for s in sources:
        if s.kind != "iperf3":
            continue
        for f in s.flows:
            if not f.get("mbps") or not f.get("duration_s") or f.get("bytes_basis") == "sent":
                continue  # a count of what this end wrote is not the receiver's throughput
            for c in caps:
                byname = {x["name"]: x for x in c.flows}
                hit = byname.get(f["name"])
                if hit is None:
                    continue
                key, sub = hit["name"], -1
                if hit.get("kind") == "mptcp-subflow":
                    key = hit["connection"]
                    conn = byname.get(key)
                    if conn is None:
                        continue
                    hit = conn
                # iperf3's window on the capture's clock: all streams of a test share its start, so
                # the window starts at the report's anchor (its earliest stream's first data
                # packet), not at this stream's own first packet (with -P/--bidir they differ).
                st = table[s.path]["offset_s"] + float(f.get("start", 0.0) or 0.0)
                dur = float(f["duration_s"])
                # iperf3's receiver stops its clock when it reads the last byte; the capture shows
                # that byte delivered when its ACK passes the capture point, later by the ACK's
                # delay from the receiver to there. The data-to-ACK time measured at the capture
                # point bounds that delay on either side (sender side: the RTT; receiver side: the
                # ACK generation delay), so the window is extended by its median.
                slack = 0.0
                smp = c.samples
                if len(smp) and "rtt_ms" in smp:
                    r = smp.loc[smp["flow"] == key, "rtt_ms"].dropna()
                    if len(r):
                        slack = float(r.median()) / 1e3
                b = c.bins
                rows = b[(b["flow"] == key) & (b["subflow"] == sub) & (b["t"] >= st) & (b["t"] < st + dur + slack)]
                cap_mbps = float(rows["bytes"].sum()) * 8 / dur / 1e6
                row = {"iperf3": s.path, "side": s.meta.get("side"), "capture": c.path,
                       "flow": f["name"], "matched": key, "window_s": _r(dur), "ack_slack_s": _r(slack),
                       "iperf3_mbps": _r(f["mbps"]), "capture_mbps": _r(cap_mbps),
                       "diff_pct": _r(100.0 * (cap_mbps - f["mbps"]) / f["mbps"]),
                       "capture_whole_flow_mbps": _r(hit.get("mbps")),
                       "capture_missing_s": _r(_uncovered(c, st, st + dur))}
                n, lost = f.get("packets"), f.get("lost_packets")
                if f.get("kind") == "udp" and isinstance(n, int) and isinstance(lost, int) and 0 <= lost < n:
                    # A UDP capture counts the datagrams passing its capture point, with no ACKs to
                    # show which arrived: one taken before the loss (the sender's host) counts the
                    # lost ones too. So the row also gives iperf3's loss and sending rate (datagrams
                    # of one size: received / (1 - loss) where the report has no sent count); the
                    # tour's capture was +36.7 % off the received rate and -0.06 % off the sent one.
                    sent = f.get("sent_mbps") or f["mbps"] / (1 - lost / n)
                    row.update(iperf3_loss_pct=_r(100.0 * lost / n), iperf3_sent_mbps=_r(sent),
                               diff_sent_pct=_r(100.0 * (cap_mbps - sent) / sent))
                out.append(row)
    return out


# A capture that stops before iperf3's test ends (tcpdump killed first, or a file cut short) reads
# low by the part it lacks: more than this much of the window uncovered is said with the row.
# One 100 ms interval: a capture started or stopped with the test misses a few ms.
UNCOVERED_NOTE_S = 0.1


def _uncovered(capture: Source, t0: float, t1: float) -> float:
    """Seconds of [t0, t1) (on the capture's clock) before its first or after its last packet."""
    first, last = capture.meta.get("first_ts"), capture.meta.get("last_ts")
    if first is None or last is None:
        return 0.0
    return max(0.0, min(t1, first) - t0) + max(0.0, t1 - max(t0, last))


_FLOW_KEYS = ("kind", "cc", "side", "sender", "path", "connection", "subflow", "backup", "bytes", "bytes_basis",
              "duration_s", "mbps", "packets", "retransmits", "retrans_pct", "retrans_bytes", "loss_pct",
              "lost_packets", "jitter_ms", "sack_permitted", "sack_acks", "dsacks", "reinjections",
              "reinjected_bytes", "path_shares", "subflows", "reported_goodput_mbps", "bytes_sent", "sent_mbps",
              "max_snd_cwnd", "data_stream")


def _link_spans(events, source: str, flow: dict) -> list[tuple[float, float]]:
    """The spans with one of `flow`'s paths ("11ad+11ac": either) down in `source`'s link events
    (an mmpath run folder's; metrics.link_outages), [] without any."""
    if events is None or not len(events) or "kind" not in events or not flow.get("path"):
        return []
    ev = events[(events["source"].astype(str) == source) & events["kind"].isin(["down", "up"])]
    if not len(ev):
        return []
    return M.link_outages(ev["t_s"], ev["path"], ev["kind"], ev.get("value", np.full(len(ev), np.nan)),
                          str(flow["path"]).split("+"))


def summarize(sources, table, origin, intervals, timeline, events, *, bin_s, baselines=None,
              expected_mbps=None, floor_mbps=1.0) -> dict:

    flows, minor = [], 0
    series: dict = {}
    conns = []
    for s in sources:
        off = table[s.path]["offset_s"]
        for f in s.flows:
            if (f.get("bytes") or 0) < MINOR_BYTES and f.get("kind") != "mptcp":
                minor += 1
                continue
            key = f.get("connection", f["name"])
            sub = int(f.get("subflow", -1)) if f.get("kind") in ("mptcp-subflow",) else -1
            t0 = f.get("start")
            t1 = f.get("end")
            t0a = t0 + off - origin if t0 is not None else None
            t1a = t1 + off - origin if t1 is not None else None
            t, mbps = _series(intervals, s.path, key, sub, t0a, t1a, bin_s)
            series[(s.path, key, sub)] = (t, mbps)
            e = {"source": s.path, "name": f["name"]}
            e.update({k: (_r(f[k]) if not isinstance(f[k], dict) else {a: _r(b) for a, b in f[k].items()})
                      for k in _FLOW_KEYS if k in f})
            e["start_s"], e["end_s"] = _r(t0a), _r(t1a)
            if isinstance(f.get("rtt_ms"), dict):
                e["rtt_ms"] = {k: _r(v) for k, v in f["rtt_ms"].items()}
            m = _flow_metrics(t, mbps, _rtt(timeline, s.path, key, sub), floor_mbps, _link_spans(events, s.path, f))
            if "rtt_ms" in e and "rtt_ms" in m:
                m.pop("rtt_ms")
            if s.kind == "iperf3" and f.get("sender"):
                # iperf3's intervals on the sending end count what the application wrote into the
                # socket, which moves in steps of the send buffer (0 or 300 kB per 0.1 s at
                # 19 Mbit/s on the tour's veth testbed), so outages and drops found in them are
                # not the network's: not reported (the receiving end's report or a capture has
                # them). Found by the analyzer tour.
                m["outages"], m["drops"] = None, None
                e["bins_basis"] = "sent"
            e.update(m)
            if expected_mbps:
                e["normalized_throughput"] = _r(M.normalized_throughput(f.get("mbps", 0.0), expected_mbps))
            if baselines and len(baselines) >= 2 and f.get("kind") not in ("mptcp-subflow",):
                e["ben"] = _r(M.ben(f.get("mbps", 0.0), baselines))
            e["_key"] = (s.path, key, sub)
            flows.append(e)
        # MPTCP connections, every one with all its subflows (a small one, e.g. iperf3's control
        # connection, is marked `minor` rather than left out); path shares and backup takeover
        for f in s.flows:
            if f.get("kind") != "mptcp":
                continue
            subs = [x for x in s.flows if x.get("kind") == "mptcp-subflow" and x.get("connection") == f["name"]]
            # the takeover needs throughput series, which only the listed (not minor) subflows have
            listed = [e for e in flows if e["source"] == s.path and e.get("connection") == f["name"]
                      and e.get("kind") == "mptcp-subflow"]
            conns.append({"source": s.path, "name": f["name"], "mbps": _r(f["mbps"]), "bytes": f["bytes"],
                          "minor": (f.get("bytes") or 0) < MINOR_BYTES,
                          "subflows": [{"subflow": x.get("subflow"), "name": x["name"], "path": x.get("path"),
                                        "backup": x.get("backup", False), "mbps": _r(x.get("mbps")),
                                        "bytes": x.get("bytes")} for x in subs],
                          "path_shares": {k: _r(v) for k, v in (f.get("path_shares") or {}).items()},
                          "reinjections": f.get("reinjections"), "reinjected_bytes": f.get("reinjected_bytes"),
                          "data_stream": f.get("data_stream"),
                          "takeover": _takeover(listed, series, bin_s)})
    for e in flows:
        e.pop("_key", None)

    # Per path: bytes and mean throughput, shares within each source
    paths = []
    if len(intervals):
        iv = intervals[(intervals["path"].astype(str) != "")]
        for (src, p), g in iv.groupby(["source", "path"], observed=True):
            tot = float(g["bytes"].sum())
            span = (g["t_s"].max() - g["t_s"].min()) + bin_s
            paths.append({"source": src, "path": p, "bytes": int(tot), "mbps": _r(tot * 8 / span / 1e6)})
        for src in {p["source"] for p in paths}:
            tot = sum(p["bytes"] for p in paths if p["source"] == src)
            for p in paths:
                if p["source"] == src:
                    p["share"] = _r(p["bytes"] / tot if tot else None)

    owd = {}
    caps = [s for s in sources if s.kind == "pcap"]
    for i in range(len(caps)):
        for j in range(i + 1, len(caps)):
            d = pc.one_way_delay(caps[i], caps[j])
            if d:
                owd[f"{caps[i].path} -> {caps[j].path}"] = {k: {a: _r(b) for a, b in v.items()} for k, v in d.items()}

    t_end = 0.0
    for df in (intervals, timeline):
        if len(df):
            t_end = max(t_end, float(np.nanmax(df["t_s"].to_numpy(float))))
    any_unix = any(s.clock == "unix" for s in sources) or any(
        table[s.path]["offset_s"] > 1e9 for s in sources)
    srcs = []
    for s in sources:
        d = {"path": s.path, "kind": s.kind, "clock": s.clock, **{k: _r(v) for k, v in table[s.path].items()
                                                                    if k not in ("kind", "clock")},
             "flows": len(s.flows), "samples": int(len(s.samples)) if s.samples is not None else 0}
        for k, v in s.meta.items():
            if not k.startswith("_") and isinstance(v, (int, float, str, bool, type(None))):
                d.setdefault(k, _r(v))
        srcs.append(d)
    ev_counts = events["kind"].value_counts().to_dict() if len(events) else {}
    return {
        "analyzer": "mmpath analyze",
        "mmpath_version": __version__,
        "bin_s": bin_s,
        "origin_unix_s": _r(origin) if any_unix else None,
        "duration_s": _r(t_end),
        "sources": srcs,
        "flows": flows,
        "minor_flows": minor,
        "minor_flow_bytes": MINOR_BYTES,
        "connections": conns,
        "paths": paths,
        "iperf3_agreement": _iperf3_agreement(sources, table),
        "one_way_delay": owd,
        "baselines_mbps": baselines,
        "expected_mbps": expected_mbps,
        "events": {str(k): int(v) for k, v in ev_counts.items()},
    }


def format_summary(s: dict) -> str:
    """The table `mmpath analyze` prints."""
    # a source by its file name, with its folder where two share one (several tests analyzed together)
    short = short_names([x["path"] for x in s.get("sources", [])])

    def nm(p: str) -> str:
        return short.get(p, p.split("/")[-1])

    def num(v, w: int) -> str:  # a value a log does not give is "-", not nan
        return f"{v:>{w}.2f}" if v is not None and math.isfinite(v) else f"{'-':>{w}}"

    lines = []
    # wide enough for an IPv4 address pair ("10.71.0.2-10.71.0.1"), which was cut at 18
    hdr = f"{'source':<28} {'flow':<44} {'kind':<13} {'path':<23} {'Mbps':>9} {'retx %':>7} {'mean RTT ms':>11}"
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for f in s["flows"]:
        src = f["source"].split("/")[-2:]
        rtt = (f.get("rtt_ms") or {}).get("mean")
        lines.append(f"{'/'.join(src)[-28:]:<28} {f['name'][:44]:<44} {str(f.get('kind'))[:13]:<13} "
                     f"{str(f.get('path') or '')[:23]:<23} {f.get('mbps') or 0:>9.3f} "
                     f"{num(f.get('retrans_pct'), 7)} {num(rtt, 11)}")
    for c in s.get("connections", []):
        tk = c.get("takeover")
        lines.append(f"{nm(c['source'])}: MPTCP {c['name']}: {c['mbps']:.3f} Mbit/s over {len(c['subflows'])} subflows, "
                     f"reinjections {c.get('reinjections')}"
                     + (f", backup takeover at {tk['t_s']:.2f} s" if tk else "")
                     + (f" (small: {c['bytes']} bytes)" if c.get("minor") else ""))
    for a in s.get("iperf3_agreement", []):
        udp = (f"; iperf3 sent {a['iperf3_sent_mbps']:.3f} Mbit/s and lost {a['iperf3_loss_pct']:.2f} %: "
               f"capture {a['diff_sent_pct']:+.2f} % of the sent (a capture before the loss counts the lost "
               f"datagrams)") if a.get("iperf3_loss_pct") else ""
        gap = a.get("capture_missing_s") or 0.0
        cut = (f"; the capture misses {gap:.2f} s of iperf3's {a['window_s']:.2f} s test (it starts later or "
                 f"stops earlier), so it reads low") if gap > UNCOVERED_NOTE_S else ""
        lines.append(f"{nm(a['iperf3'])} vs {nm(a['capture'])}: {a['flow']}: iperf3 {a['iperf3_mbps']:.3f} Mbit/s, capture "
                     f"{a['capture_mbps']:.3f} Mbit/s ({a['diff_pct']:+.2f} %){udp}{cut}")
    for src in s.get("sources", []):
        if src.get("error"):
            lines.append(f"{src['path']}: iperf3 reported an error: {src['error']} (its results may be partial)")
    if s.get("minor_flows"):
        lines.append(f"({s['minor_flows']} flows under {MINOR_BYTES} bytes not shown)")
    return "\n".join(lines)
