"""MPTCP (RFC 8684) above the subflows: connection identity from keys/tokens, data-level throughput
from data ACKs, reinjections from DSS mappings, and the coverage of the data sequence space the
receiver data-ACKed by those mappings (`data_stream`)."""

from __future__ import annotations

import hashlib
from ...lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from .metrics import bin_sum, unwrap32
from .options import ACK, ADD_ADDR, DSS, MP_CAPABLE, MP_JOIN, MP_PRIO, SYN
from .packets import conn_name


def _path_shares(subs, sub_bytes: float) -> dict[str, float]:
    """Each path's share of the connection's subflow bytes; two subflows on one path (e.g. one per
    server address) add up."""
    shares: dict[str, float] = {}
    for _, _, f in subs:
        shares[f["path"]] = shares.get(f["path"], 0.0) + (f["bytes"] / sub_bytes if sub_bytes else 0.0)
    return shares


def _reinjections(maps):
    """Count data-level bytes sent again on a *different* subflow (MPTCP reinjection).

    `maps` are DSS mappings (t, subflow, dsn, dsn_is_64bit, length) of data as captured: only
    mappings on segments that carry payload, with a DATA_FIN's octet taken off (see
    `_data_mapping`). A mapping is a reinjection when part of its data-sequence range was mapped
    earlier (in capture time) on another subflow. Repeats on the same subflow (TSO segments of one mapping, subflow retransmissions) are
    not reinjections; they are counted by the subflow's TCP analysis. Capture order across subflows
    is not DSN order (each path has its own queue), so the test is on range overlap, not on the
    highest DSN seen: a sweep over mappings sorted by DSN start, comparing only ranges that overlap.
    """
    if not maps:
        return 0, 0, []
    base = _dsn_base(maps)
    rows = {}
    for t, sf, dsn, is64, ln in maps:
        rel = _rel_dsn(dsn, is64, base)
        k = (sf, rel, ln)
        if k not in rows or t < rows[k]:
            rows[k] = t  # first time this exact mapping appeared on this subflow
    items = sorted(((rel, rel + ln, t, sf) for (sf, rel, ln), t in rows.items()))
    active: list[tuple[int, int, float, int]] = []  # ranges that may still overlap later starts
    reinj: dict[tuple, int] = {}
    for s0, e0, t, sf in items:
        active = [a for a in active if a[1] > s0]
        for s1, e1, t1, sf1 in active:
            if sf1 == sf:
                continue
            ov = min(e0, e1) - max(s0, s1)
            if ov <= 0:
                continue
            # the later of the two in capture time is the copy
            later = (s0, e0, t, sf) if t > t1 else (s1, e1, t1, sf1)
            reinj[later] = max(reinj.get(later, 0), ov)
        active.append((s0, e0, t, sf))
    ev = sorted((t, sf, b) for (s0, e0, t, sf), b in reinj.items())
    return len(ev), int(sum(b for _, _, b in ev)), [(float(t), sf, b) for t, sf, b in ev]


def _dsn_base(maps) -> int:
    """The data sequence number mappings are taken relative to when no IDSN is known: the lowest
    one when all are 64-bit, else the first captured (a 32-bit DSN is the low half of the 64)."""
    return min(m[2] for m in maps) if all(m[3] for m in maps) else maps[0][2]


def _rel_dsn(dsn: int, is64: bool, base: int) -> int:
    """`dsn` relative to `base`, in the mapping's own width (RFC 8684 3.3.1: a 4-octet DSN is the
    64-bit one's low 32 bits), negative when just below: the modular distance, as TCP's."""
    mod = 1 << 64 if is64 else 1 << 32
    rel = (dsn - base) % mod
    return rel - mod if rel >= mod // 2 else rel


def _data_ack_progress(dacks, base: int | None = None) -> np.ndarray:
    """The data ACKs (t, value, is_64bit), sorted by time, as progress from `base` (None: the
    first data ACK's own value). A data ACK is 4 or 8 octets (RFC 8684 3.3.2), and one
    connection mixes both: Linux sends 4-octet ones until it has seen the peer use 64-bit
    sequence numbers (a join's first ACKs). Taking the first one's width for all made the
    progress modulo 2^32, and a connection stopped counting at 2^31 bytes (2.1 GB). The low 32
    bits of every data ACK, unwrapped in time order (consecutive data ACKs are far less than
    2 GB apart), are the progress of any length."""
    low = np.array([v & 0xFFFFFFFF for _, v, _ in sorted(dacks, key=lambda x: x[0])], dtype=np.uint32)
    return unwrap32(low, int(low[0]) if base is None else base & 0xFFFFFFFF)


def dsn_coverage(spans, upto: int | None = None) -> tuple[int, list[tuple[int, int]]]:
    """How much of the data sequence space [0, upto) the ranges `spans` ([start, end), relative
    to the connection's first data byte, in any order, overlapping or repeated as reinjections
    and retransmissions repeat them) cover: (covered bytes, the holes [start, end) left, in
    order). `upto` None: up to the furthest end. A sorted interval union: one pass after a sort,
    whatever the overlaps."""
    ivs = sorted((max(0, a), b) for a, b in spans if b > max(0, a))
    if upto is None:
        upto = max((b for _, b in ivs), default=0)
    holes: list[tuple[int, int]] = []
    reach = 0  # everything in [0, reach) is covered so far
    for a, b in ivs:
        if a >= upto:
            break
        if a > reach:
            holes.append((reach, a))
        reach = max(reach, b)
    if reach < upto:
        holes.append((reach, upto))
    return upto - sum(b - a for a, b in holes), holes


def data_stream(maps, dacks, fins, first_dsn: tuple[int, bool] | None = None) -> dict:
    """One connection direction's data stream as its captures show it: whether every data byte
    the receiver data-ACKed was mapped on some subflow (RFC 8684 3.3.1: a DSS mapping gives the
    subflow bytes their data sequence numbers).

    `maps`: data mappings (t, subflow, dsn, dsn_is_64bit, length), as `_reinjections` takes them
    (a DATA_FIN's octet off); `dacks`: the receiver's data ACKs (t, value, is_64bit); `fins`: the
    data sequence numbers (dsn, is_64bit) of the sender's DATA_FIN octets; `first_dsn`: the first
    data byte's (the sender's IDSN + 1, 3.1: the SYN takes the IDSN's octet), None when the
    captures lack the keys (then the lowest mapping stands for it, and `first_known` is false).

    Returns `first_known`; `acked_bytes`: the furthest data ACK past the first data byte, the
    DATA_FIN's octet not counted (`data_fin_acked`); `covered_bytes` of those mapped at least once;
    `holes`, `hole_bytes` and `first_hole` ([start, end) past the first data byte) of the rest;
    `mapped_bytes`: the furthest mapping's end (beyond the data ACK: sent, not acknowledged).
    None without any mapping."""
    if not maps:
        return None
    if first_dsn is None:
        base, known = _dsn_base(maps), False
    else:
        base, known = first_dsn[0], True
    spans = [(r, r + ln) for r, ln in ((_rel_dsn(dsn, is64, base), ln) for _t, _sf, dsn, is64, ln in maps)]
    mapped = max(b for _, b in spans)
    acked = 0
    if dacks:
        # The first data ACK is near the first data byte.
        rel = _data_ack_progress(dacks, base)
        if rel[0] >= 1 << 31:  # a data ACK before the first data byte (the IDSN's own octet)
            rel = rel - (1 << 32)
        acked = max(0, int(rel.max()))
    fin_rel = {_rel_dsn(d, is64, base) for d, is64 in fins}
    fin_acked = bool(acked and (acked - 1) in fin_rel)
    if fin_acked:
        acked -= 1  # the DATA_FIN's octet is acknowledged, but it is no data (3.3.3)
    covered, holes = dsn_coverage(spans, acked)
    return {"first_known": known, "acked_bytes": acked, "covered_bytes": covered, "holes": len(holes),
            "hole_bytes": acked - covered, "first_hole": list(holes[0]) if holes else None,
            "mapped_bytes": mapped, "data_fin_acked": fin_acked}


def _data_mapping(plen: int, fields):
    """(dsn, dsn_is_64bit, data length) of a DSS option's mapping that maps data, else None.

    RFC 8684 3.3.3: a DATA_FIN occupies one octet of data-sequence space, counted in the
    Data-Level Length but not sent as payload ("a segment with DSN 80, and Data-Level Length 11,
    with DATA_FIN set, would map 10 octets"), and it may be repeated on any subflow. So a mapping
    on a segment without TCP payload (a DATA_FIN-only segment; 3.3.1 pure data ACKs carry no
    mapping) maps no data and is never a (re)injection, and a DATA_FIN's octet is not data.
    """
    data_ack, dsn, ssn, dlen, data_fin = fields
    if dsn is None or not dlen or plen <= 0:
        return None
    n = dlen - 1 if data_fin else dlen
    return (dsn[0], dsn[1], n) if n > 0 else None


def mptcp_token(key: bytes) -> str:
    # RFC 8684 3.1: the token is the most significant 32 bits of SHA-256(key); IDSN the least
    # significant 64 bits.
    return hashlib.sha256(key).digest()[:4].hex()


def _idsn(key: bytes) -> int:
    return int.from_bytes(hashlib.sha256(key).digest()[-8:], "big")


def connection_map(tcp, events, idsn: dict | None = None):
    """MPTCP connection identity from MP_CAPABLE keys, subflows joined by token (RFC 8684 3.1, 3.2).

    Returns (conn_of: initiator-direction key -> connection name, backup: MP_JOIN initiator key ->
    backup bit); MP_PRIO and ADD_ADDR (not echo) are appended to `events`; `idsn`, when given, is
    filled with each connection's IDSN per sending direction (name -> {"fwd": the initiator's,
    "rev": the responder's}, where the keys were captured), for `data_stream`'s first data byte.
    """
    conn_of: dict[tuple, str] = {}  # canonical (initiator) key -> connection name
    token_conn: dict[str, str] = {}
    sub_info: dict[tuple, dict] = {}
    for key, d in tcp.items():
        for idx, st, f in d.mptcp:
            if st == MP_CAPABLE and (f[2] is not None):
                fl = d.flags[idx]
                if fl & SYN and fl & ACK:
                    # SYN/ACK: responder's key -> the responder's token (the one joins use)
                    ini = (key[2], key[3], key[0], key[1])
                    tok = mptcp_token(f[2])
                    info = sub_info.setdefault(ini, {})
                    info.update(resp_token=tok, resp_idsn=_idsn(f[2]))
                elif f[3] is not None:
                    ini = key
                    info = sub_info.setdefault(ini, {})
                    info.update(init_token=mptcp_token(f[2]), init_idsn=_idsn(f[2]),
                                resp_token=mptcp_token(f[3]), resp_idsn=_idsn(f[3]))
    for ini, info in sub_info.items():
        if "resp_token" in info:
            cname = "mptcp-" + info["resp_token"]
            conn_of[ini] = cname
            token_conn[info["resp_token"]] = cname
            if "init_token" in info:
                token_conn[info["init_token"]] = cname
            if idsn is not None:
                idsn[cname] = {"fwd": info.get("init_idsn"), "rev": info.get("resp_idsn")}
    backup: dict[tuple, bool] = {}
    for key, d in tcp.items():
        for idx, st, f in d.mptcp:
            if st == MP_JOIN and f[0] == "syn":
                tok = f[3].hex()
                if tok in token_conn:
                    conn_of[key] = token_conn[tok]
                backup[key] = bool(f[1])
            elif st == MP_PRIO:
                events.append((float(d.ts[idx]), "", "mp_prio", float(f[0]),
                               f"{conn_name(key)} sets backup={f[0]}"))
            elif st == ADD_ADDR and not f[0]:
                events.append((float(d.ts[idx]), "", "add_addr", np.nan,
                               f"{conn_name(key)} announces {f[2]} (id {f[1]})"))
    return conn_of, backup


def connection_flows(per_conn_subflows, tcp, fine_s, flows, bin_frames, events, idsn: dict | None = None):
    """MPTCP connection level: data-level delivered bytes (data ACKs), reinjections and the data
    stream's coverage (`data_stream`; `idsn` from connection_map gives its first data byte).

    Appends one `mptcp` flow per connection to `flows`, its data-level bins to `bin_frames` and
    reinjection events to `events`.
    """
    for cname, subs in per_conn_subflows.items():
        maps = []  # (t, subflow, dsn, dsn_is_64bit, data length): data mappings only
        dacks = []  # (t, data_ack)
        fins = set()  # (dsn, dsn_is_64bit) of the DATA_FIN octet (repeated on any subflow)
        for k2, a, flow in subs:
            rv = tcp.get((k2[2], k2[3], k2[0], k2[1]))
            for idx, st, f in a.mptcp:
                if st == DSS:
                    m = _data_mapping(a.plen[idx], f)
                    if m is not None:
                        maps.append((a.ts[idx], flow["subflow"], *m))
                    if f[4] and f[1] is not None and f[3]:
                        fins.add((f[1][0] + f[3] - 1, f[1][1]))  # 3.3.3: the mapping's last octet
                elif st == MP_CAPABLE and f[4] and f[2] is not None and a.plen[idx] > 0:
                    # The initiator's first data, mapped by its MP_CAPABLE (RFC 8684 3.1): from
                    # the first data byte, its sender's (key 1's) IDSN + 1.
                    maps.append((a.ts[idx], flow["subflow"], (_idsn(f[2]) + 1) % (1 << 64), True, f[4]))
            if rv is not None:
                for idx, st, f in rv.mptcp:
                    if st == DSS and f[0] is not None:
                        dacks.append((rv.ts[idx], f[0][0], f[0][1]))
        reinj_n, reinj_bytes, reinj_events = _reinjections(maps)
        # The first data byte: the sending side's IDSN + 1 (the connection name ends in ":fwd"
        # when the initiator sends, ":rev" when the responder does: flows.py).
        base, _, side = cname.rpartition(":")
        sender_idsn = (idsn or {}).get(base, {}).get(side)
        stream = data_stream(maps, dacks, fins, None if sender_idsn is None else ((sender_idsn + 1) % (1 << 64), True))
        for t, sf, nbytes in reinj_events:
            events.append((t, "", "reinjection", float(nbytes), f"{cname} subflow {sf}"))
        # Data ACKs: delivered at the data level
        conn_bytes = None
        if dacks:
            dacks.sort(key=lambda x: x[0])
            dt_ = np.array([x[0] for x in dacks])
            rel = _data_ack_progress(dacks).astype(float)
            cm = np.maximum.accumulate(rel)
            inc = np.diff(np.concatenate([[0.0], cm]))
            conn_bytes = float(cm[-1])
            tb, vb = bin_sum(dt_, inc, fine_s)
        sub_bytes = sum(f["bytes"] for _, _, f in subs)
        if conn_bytes is None or conn_bytes <= 0:
            conn_bytes = float(sub_bytes)
            tb, vb = None, None
        starts = [f["start"] for _, _, f in subs]
        ends = [f["end"] for _, _, f in subs]
        dur = max(max(ends) - min(starts), 1e-9)
        cf = {
            "name": cname, "kind": "mptcp", "bytes": int(conn_bytes), "start": min(starts), "end": max(ends),
            "duration_s": dur, "mbps": conn_bytes * 8 / dur / 1e6,
            "subflows": [f["name"] for _, _, f in subs], "paths": [f["path"] for _, _, f in subs],
            "retransmits": sum(f["retransmits"] for _, _, f in subs),
            "reinjections": reinj_n, "reinjected_bytes": int(reinj_bytes), "data_stream": stream,
            "path_shares": _path_shares(subs, sub_bytes),
            "backup_subflows": [f["subflow"] for _, _, f in subs if f.get("backup")],
        }
        flows.append(cf)
        if tb is not None:
            bin_frames.append(pd.DataFrame({"t": tb, "dt": fine_s, "flow": cname,
                                            "subflow": -1, "path": "", "bytes": vb}))
        # connection row uses the connection+direction name for consistency with subflow rows
        if tb is not None:
            bin_frames[-1]["flow"] = subs[0][2]["connection"]
        cf["name"] = subs[0][2]["connection"]
