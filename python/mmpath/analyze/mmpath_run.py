"""Reader for an mmpath run folder (`mmpath run --out DIR`; layout in docs/outputs.md).

The run's own numbers are recomputed from its files, not copied: a flow's throughput is the sum of
its connection-level (``subflow = -1``) bytes in intervals.csv x 8 / (``stop_s - start_s``), which is
exactly how the core defines ``goodput_mbps`` (docs/outputs.md, flows[]), so `mmpath analyze DIR`
reports the same number the run did (tested). Link events come from the ``channel-<path>.csv``
traces the run recorded (link_up changes, rate changes).
"""

from __future__ import annotations

import json
from pathlib import Path
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from .errors import AnalyzeInputError
from .model import Source

ALLOWED = "an mmpath output folder (summary.json, intervals.csv, timeline.parquet from `mmpath run --out DIR`)"


def looks_like(d: Path) -> bool:
    return d.is_dir() and (d / "summary.json").is_file() and (d / "intervals.csv").is_file()


def read(path) -> Source:
    d = Path(path)
    try:
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise AnalyzeInputError(d / "summary.json", f"cannot read the run summary: {e}", ALLOWED) from None
    if not isinstance(summary, dict) or not isinstance(summary.get("flows"), list):
        raise AnalyzeInputError(d / "summary.json", "not an mmpath run summary (no flows list)", ALLOWED)
    try:
        iv = pd.read_csv(d / "intervals.csv")
    except Exception as e:  # pandas raises many kinds on bad CSV
        raise AnalyzeInputError(d / "intervals.csv", f"cannot read: {' '.join(str(e).split())}", ALLOWED) from None
    need = {"t_s", "flow", "subflow", "path", "bytes"}
    if not need <= set(iv.columns):
        raise AnalyzeInputError(d / "intervals.csv", f"missing columns {sorted(need - set(iv.columns))}",
                                "t_s, flow, subflow, path, bytes, mbps (docs/outputs.md)")
    # An all-empty path column (connection rows only) reads as float NaN: cast before filling.
    iv["path"] = iv["path"].astype(object).fillna("").astype(str)
    iv["flow"] = iv["flow"].astype(str)
    # bins are 100 ms except the last, which may be shorter (docs/outputs.md)
    sim_s = float(summary.get("sim_s") or (iv["t_s"].max() + 0.1))
    dt = np.minimum(0.1, sim_s - iv["t_s"].to_numpy(float))
    bins = pd.DataFrame({"t": iv["t_s"].to_numpy(float), "dt": dt, "flow": iv["flow"],
                         "subflow": iv["subflow"].astype("int64"), "path": iv["path"],
                         "bytes": iv["bytes"].astype(float)})
    def entry(f: dict, name: str, b: float, t0: float, t1: float) -> dict:
        """One flow (or MPTCP subflow) as the run reported it, with its bytes from intervals.csv."""
        dur = max(t1 - t0, 1e-12)
        e = {"name": name, "kind": f.get("kind"), "cc": f.get("cc"), "path": f.get("path"),
             "bytes": int(b), "start": t0, "end": t1, "duration_s": dur, "mbps": b * 8 / dur / 1e6,
             "retransmits": f.get("retransmits"), "loss_pct": f.get("loss_pct"),
             "reported_goodput_mbps": f.get("goodput_mbps")}
        if isinstance(f.get("rtt_ms"), dict):
            e["rtt_ms"] = f["rtt_ms"]
        return e

    flows = []
    for f in summary["flows"]:
        name = str(f.get("name"))
        t0, t1 = float(f.get("start_s", 0.0)), float(f.get("stop_s", sim_s))
        rows = bins[(bins["flow"] == name) & (bins["subflow"] == -1)]
        ff = entry(f, name, float(rows["bytes"].sum()), t0, t1)
        subs = f.get("subflows") or []
        if f.get("kind") == "mptcp":
            ff["reinjections"] = f.get("reinjections")
            # connections[] lists these for captures; a run's were null / empty (found by the tour)
            ff["reinjected_bytes"] = f.get("reinjected_bytes")
            sub_bytes = {}
            for sf in subs:
                j = int(sf.get("subflow", 0))
                b = float(bins.loc[(bins["flow"] == name) & (bins["subflow"] == j), "bytes"].sum())
                p = str(sf.get("path") or j)
                sub_bytes[p] = sub_bytes.get(p, 0.0) + b
            tot = sum(sub_bytes.values())
            if tot > 0:
                ff["path_shares"] = {p: b / tot for p, b in sub_bytes.items()}
            # The connection runs over every subflow's path; its segments are theirs.
            paths = list(dict.fromkeys(str(sf.get("path")) for sf in subs if sf.get("path")))
            if paths:
                ff["path"] = "+".join(paths)
            sent = sum(int(sf.get("packets_sent") or 0) for sf in subs)
            if sent:
                ff["retrans_pct"] = 100.0 * sum(int(sf.get("retransmits") or 0) for sf in subs) / sent
        elif f.get("packets_sent"):
            ff["retrans_pct"] = 100.0 * (f.get("retransmits") or 0) / f["packets_sent"]
        flows.append(ff)
        # MPTCP: each subflow as its own entry (its subflow-level bytes), like the pcap reader's.
        for sf in subs:
            j = int(sf.get("subflow", 0))
            srows = bins[(bins["flow"] == name) & (bins["subflow"] == j)]
            sub = entry(sf, str(sf.get("name") or f"{name}/{sf.get('path')}"), float(srows["bytes"].sum()), t0, t1)
            sub.update(kind="mptcp-subflow", connection=name, subflow=j, backup=sf.get("backup"))
            if sf.get("packets_sent"):
                sub["retrans_pct"] = 100.0 * (sf.get("retransmits") or 0) / sf["packets_sent"]
            flows.append(sub)
    src = Source(path=str(d), kind="run", clock="relative", t0_unix=None)
    src.flows = flows
    src.bins = bins
    tl = d / "timeline.parquet"
    if tl.is_file():
        try:
            t = pd.read_parquet(tl)
        except Exception as e:
            raise AnalyzeInputError(tl, f"cannot read: {' '.join(str(e).split())}", ALLOWED) from None
        t = t.rename(columns={"t_s": "t"})
        for c in ("flow", "path", "cc_state"):
            if c in t:
                t[c] = t[c].astype(str)
        if "subflow" not in t:  # runs from before MPTCP: every row is a flow's own
            t["subflow"] = -1
        src.samples = t
    ev = []
    for ch in sorted(d.glob("channel-*.csv")):
        p = ch.stem[len("channel-"):]
        try:
            c = pd.read_csv(ch, comment="#")
        except Exception:
            continue
        if "link_up" in c:
            up = c["link_up"].ffill()
            prev = None
            for t_, u in zip(c["t_s"], up):
                if pd.isna(u):
                    continue
                u = bool(int(u))
                if prev is not None and u != prev:
                    ev.append((float(t_), p, "up" if u else "down", np.nan, ""))
                prev = u
        if "rate_mbps" in c:
            for t_, r in zip(c["t_s"].iloc[1:], c["rate_mbps"].iloc[1:]):
                if pd.notna(r):
                    ev.append((float(t_), p, "rate", float(r), ""))
    if ev:
        src.events = pd.DataFrame(ev, columns=["t", "path", "kind", "value", "detail"])
    src.meta = {"scenario": summary.get("scenario"), "seed": summary.get("seed"), "sim_s": sim_s,
                "paths": summary.get("paths")}
    return src
