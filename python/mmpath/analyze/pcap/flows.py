"""Flow reconstruction: a capture's per-direction arrays into a Source (TCP, MPTCP subflows and
connections, UDP), with 1 ms delivered-byte bins and 10 ms samples."""

from __future__ import annotations

from pathlib import Path
from ...lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from ..model import Source, empty_events
from .capture import LINKTYPES
from .metrics import bin_sum, last_per_bin, tcp_direction
from .mptcp import connection_flows, connection_map
from .packets import conn_name, ip_str, read_packets


def read(path, *, fine_s: float = 0.001, sample_s: float = 0.01, min_bytes: int = 1) -> Source:
    """Read a capture into a Source: per-flow results, 1 ms delivered-byte bins, 10 ms samples."""
    path = Path(path)
    tcp, udp, stats = read_packets(path)
    return build(str(path), tcp, udp, stats, fine_s=fine_s, sample_s=sample_s, min_bytes=min_bytes)


def build(label: str, tcp, udp, stats, *, fine_s: float = 0.001, sample_s: float = 0.01,
          min_bytes: int = 1) -> Source:
    """A Source named `label` from per-direction tables (one capture's, or a capture set's merged
    by capture_set.py)."""
    flows: list[dict] = []
    bin_frames = []
    sample_frames = []
    events = []

    # ---- MPTCP: connection identity from MP_CAPABLE keys, subflows joined by token
    idsn: dict = {}
    conn_of, backup = connection_map(tcp, events, idsn)

    def conn_key(key):
        rev = (key[2], key[3], key[0], key[1])
        if key in conn_of:
            return key, True
        if rev in conn_of:
            return rev, False
        return None, None

    # ---- TCP flows, one per direction that carried data
    seen = set()
    sub_index: dict[str, int] = {}
    per_conn_subflows: dict[tuple, list] = {}
    for key, d in tcp.items():
        if key in seen:
            continue
        rev = (key[2], key[3], key[0], key[1])
        r = tcp.get(rev)
        for k2, a, b in ((key, d, r), (rev, r, d)):
            if a is None:
                continue
            seen.add(k2)
            if not any(p > 0 for p in a.plen):
                continue
            flow, (bt, bv), smp = tcp_direction(k2, a, b, fine_s)
            if flow["bytes"] < min_bytes:
                continue
            ini, forward = conn_key(k2)
            subflow = -1
            if ini is not None:
                cname = conn_of[ini]
                flow["kind"] = "mptcp-subflow"
                flow["connection"] = cname + (":fwd" if forward else ":rev")
                sub_index.setdefault(flow["connection"], 0)
                subflow = sub_index[flow["connection"]]
                sub_index[flow["connection"]] += 1
                flow["subflow"] = subflow
                flow["backup"] = bool(backup.get(ini, False))
                flow["join"] = ini in backup
            # Path: the interface name when the capture recorded one, else the address pair.
            flow["path"] = a.iface or f"{flow['src']}-{flow['dst']}"
            flows.append(flow)
            tb, vb = bin_sum(bt, bv, fine_s)
            bin_frames.append(pd.DataFrame({"t": tb, "dt": fine_s, "flow": flow.get("connection", flow["name"]),
                                            "subflow": subflow, "path": flow["path"], "bytes": vb}))
            rt, rv, rs = smp["rtt"]
            it, iv = smp["inflight"]
            wt, wv = smp["rwnd"]
            cols = {}
            for col, (tt, vv) in (("rtt_ms", (rt, rv)), ("srtt_ms", (rt, rs)), ("in_flight_bytes", (it, iv)),
                                  ("rwnd_bytes", (wt, wv))):
                tt2, vv2 = last_per_bin(tt, vv, sample_s)
                cols[col] = pd.Series(vv2, index=tt2)
            sm = pd.DataFrame(cols)
            if len(sm):
                sm = sm.groupby(level=0).last()
                sm.index.name = "t"
                sm = sm.reset_index()
                sm["flow"] = flow.get("connection", flow["name"])
                sm["subflow"] = subflow
                sm["path"] = flow["path"]
                sample_frames.append(sm)
            if ini is not None:
                per_conn_subflows.setdefault(flow["connection"], []).append((k2, a, flow))

    # ---- MPTCP connection level: data-level delivered bytes and reinjections
    connection_flows(per_conn_subflows, tcp, fine_s, flows, bin_frames, events, idsn)

    # ---- UDP
    for key, u in udp.items():
        ts = np.frombuffer(u.ts, dtype=float)
        pl = np.asarray(u.plen, dtype=float)
        tot = float(pl.sum())
        if tot < min_bytes:
            continue
        dur = max(float(ts[-1] - ts[0]), 1e-9)
        name = "udp " + conn_name(key)
        path_ = u.iface or f"{ip_str(key[0])}-{ip_str(key[2])}"
        flows.append({"name": name, "kind": "udp", "src": ip_str(key[0]), "sport": key[1],
                      "dst": ip_str(key[2]), "dport": key[3], "bytes": int(tot), "packets": int(ts.size),
                      "start": float(ts[0]), "end": float(ts[-1]), "duration_s": dur,
                      "mbps": tot * 8 / dur / 1e6, "path": path_})
        tb, vb = bin_sum(ts, pl, fine_s)
        bin_frames.append(pd.DataFrame({"t": tb, "dt": fine_s, "flow": name, "subflow": -1, "path": path_,
                                        "bytes": vb}))

    src = Source(path=label, kind="pcap", clock="unix")
    src.flows = flows
    if bin_frames:
        src.bins = pd.concat(bin_frames, ignore_index=True)
    if sample_frames:
        src.samples = pd.concat(sample_frames, ignore_index=True)
    if events:
        src.events = pd.DataFrame(events, columns=["t", "path", "kind", "value", "detail"])
    else:
        src.events = empty_events()
    src.meta = {k: (sorted(v) if isinstance(v, set) else v) for k, v in stats.items()}
    # Named as tcpdump names them (LINUX_SLL2, ...) in one string, so summary.json's source lists them.
    src.meta["linktypes"] = ", ".join(LINKTYPES.get(lt, str(lt)) for lt in sorted(stats.get("linktypes", ())))
    src.meta["tcp_directions"] = len(tcp)
    src.meta["udp_directions"] = len(udp)
    # keep raw direction tables for one-way delay between two captures (align.one_way_delay)
    src.meta["_tcp"] = tcp
    src.meta["_udp"] = udp
    return src
