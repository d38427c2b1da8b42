"""Reader for periodic `ss -tin` / `ss -tinO` dumps with timestamps.

A dump is a sequence of samples; each starts with a timestamp line, then ss's output:

    # mmpath-capture ss t=1795328936.835196        (what `mmpath capture` writes)
    1795328936.835196                               (or a bare Unix time: `date +%s.%N; ss -tinO`)
    Sun Dec  6 00:06:50 UTC 2026                    (or `date`, `date -R`, `date -Ins`, ...: stamps.py)
    State Recv-Q Send-Q Local Address:Port Peer Address:Port Process
    ESTAB 0 118736 10.1.0.2:51944 10.1.0.1:5201 cubic wscale:10,10 rto:204 rtt:0.03/0.019 ... cwnd:16 ...

With ``-O`` (``--oneline``) each socket is one line; without it the TCP info is on the following
indented line, which is joined to its socket. Field meanings are those of iproute2's ss(8) and
misc/ss.c (tcp_show_info): ``rtt:SRTT/RTTVAR`` (ms), ``cwnd``/``ssthresh`` (segments of ``mss``),
``bytes_acked``/``bytes_received`` (cumulative), ``retrans:CUR/TOTAL``, ``unacked``, ``sacked``,
``lost`` (segments), ``snd_wnd`` (bytes, the peer's advertised window), ``send``/``pacing_rate``/
``delivery_rate`` followed by a rate in bps, and for MPTCP subflows ``tcp-ulp-mptcp ...
token:REMOTE(id:N)/LOCAL(id:M)`` (subflows of one connection share the LOCAL token).
In flight is computed as Linux's tcp_packets_in_flight: ``unacked - (sacked + lost) + retrans CUR``.
"""

from __future__ import annotations

import re
from pathlib import Path
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from . import stamps
from .errors import AnalyzeInputError, open_text
from .model import Source

ALLOWED = ("`ss -tin`/`ss -tinO` output with a timestamp line before each sample "
           "(`# mmpath-capture ss t=UNIX_SECONDS` as `mmpath capture` writes, or " + stamps.FORMS + ")")
_STATES = {"ESTAB", "SYN-SENT", "SYN-RECV", "FIN-WAIT-1", "FIN-WAIT-2", "TIME-WAIT", "CLOSE-WAIT",
           "LAST-ACK", "LISTEN", "CLOSING", "UNCONN", "CLOSED"}
_FLAGS = {"ts", "sack", "ecn", "ecnseen", "fastopen", "app_limited", "tcp-ulp-mptcp", "tcp-ulp-tls",
          "noqueue", "orphaned"}
_RATE = re.compile(r"^([0-9.]+)([KMGT]?)bps$")
_UNIT = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


# With more than one socket table (`ss -tinOM`: TCP and MPTCP) ss prints a Netid column first.
_NETIDS = {"tcp", "mptcp", "udp", "raw", "sctp", "dccp", "tipc", "vsock", "xdp", "u_str", "u_dgr", "u_seq",
           "nl", "p_raw", "p_dgr"}


def _is_header(line: str) -> bool:
    return (line.startswith("State") or line.startswith("Netid")) and "Recv-Q" in line


def looks_like(head: str) -> bool:
    lines = head.splitlines()[:5]
    if any(stamps.is_capture_mark(ln, "ss") for ln in lines) or any(_is_header(ln) for ln in lines):
        return True
    # `ss -H` (no header line) under timestamp lines: a timestamp, then a TCP socket line (anywhere
    # in the head: the samples before the test starts list no socket).
    lines = head.splitlines()
    return any(parse_socket(b) is not None and _quiet_stamp(a) for a, b in zip(lines, lines[1:]))


def _quiet_stamp(line: str) -> bool:
    try:
        return stamps.parse(line) is not None
    except stamps.StampError:
        return True  # a time the reader will name in its error


def _rate(tok: str) -> float:
    m = _RATE.match(tok)
    return float(m.group(1)) * _UNIT[m.group(2)] / 1e6 if m else np.nan


def _addr(a: str) -> tuple[str, str | None, str]:
    host, _, port = a.rpartition(":")
    dev = None
    if "%" in host:
        host, _, dev = host.partition("%")
    return host.strip("[]"), dev, port


def parse_socket(line: str) -> dict | None:
    toks = line.split()
    netid = "tcp"
    if len(toks) > 1 and toks[0] in _NETIDS and toks[1] in _STATES:
        netid, toks = toks[0], toks[1:]
    if len(toks) < 5 or toks[0] not in _STATES or netid not in ("tcp", "mptcp"):
        return None
    lh, ldev, lp = _addr(toks[3])
    ph, _, pp = _addr(toks[4])
    rec: dict = {"state": toks[0], "local": f"{lh}:{lp}", "peer": f"{ph}:{pp}", "dev": ldev}
    if netid == "mptcp":
        # `ss -M` (iproute2 misc/ss.c, mptcp_stats_print): the connection's local `token:` and its
        # 64-bit data sequence numbers `snd_una` (data ACKed) and `rcv_nxt` (data received), hex.
        rec["mptcp_conn"] = True
        for t in toks[5:]:
            k, _, v = t.partition(":")
            try:
                if k == "token":
                    rec["mptcp_token"] = f"{int(v, 16):08x}"
                elif k in ("snd_una", "rcv_nxt"):
                    rec["d_" + k] = int(v, 16)
            except ValueError:
                pass
        return rec
    i = 5
    n = len(toks)
    while i < n:
        t = toks[i]
        if t in ("send", "pacing_rate", "delivery_rate") and i + 1 < n:
            rec[t + "_mbps"] = _rate(toks[i + 1])
            i += 2
            continue
        if ":" in t:
            k, _, v = t.partition(":")
            if k == "rtt" and "/" in v:
                a, _, b = v.partition("/")
                rec["rtt_ms"], rec["rttvar_ms"] = float(a), float(b)
            elif k == "retrans" and "/" in v:
                a, _, b = v.partition("/")
                rec["retrans_cur"], rec["retrans_total"] = int(a), int(b)
            elif k == "token":
                m = re.match(r"([0-9a-f]+)\(id:\d+\)/([0-9a-f]+)\(id:\d+\)", v)
                if m:
                    # ss prints tokens without leading zeros (%x); the pcap reader's names use all
                    # 8 hex digits of the 32-bit token (RFC 8684 3.2), so pad them to match.
                    rec["mptcp_remote_token"], rec["mptcp_token"] = (f"{int(m.group(1), 16):08x}",
                                                                     f"{int(m.group(2), 16):08x}")
            elif k in ("cwnd", "ssthresh", "mss", "unacked", "sacked", "lost", "snd_wnd", "bytes_acked",
                       "bytes_received", "bytes_sent", "bytes_retrans", "delivered", "notsent"):
                try:
                    rec[k] = int(v)
                except ValueError:
                    pass
            elif k == "minrtt":
                try:
                    rec["minrtt_ms"] = float(v)
                except ValueError:
                    pass
        elif t not in _FLAGS and "cc" not in rec and re.fullmatch(r"[a-z][a-z0-9_]*", t) and i == 5:
            rec["cc"] = t
        i += 1
    return rec


def read(path) -> Source:
    path = Path(path)
    f = open_text(path, ALLOWED)
    rows = []
    t = None
    nmarks = 0
    pending: str | None = None
    clock = stamps.LineClock(path, "ss")
    with f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            ts = stamps.quick(line, "ss")
            if ts is None:
                ts = _stamp(clock, lineno, line)
            if ts is not None:
                if pending is not None:
                    r = parse_socket(pending)
                    if r:
                        r["t"] = t
                        rows.append(r)
                    pending = None
                t = ts
                nmarks += 1
                continue
            if not line.strip() or _is_header(line) or line.startswith("#"):
                continue
            if line[0] in " \t":
                if pending is not None:  # ss without -O: the info line continues the socket
                    pending += " " + line.strip()
                continue
            if pending is not None:
                r = parse_socket(pending)
                if r:
                    r["t"] = t
                    rows.append(r)
            if t is None:
                raise AnalyzeInputError(path, "socket line before any timestamp line", ALLOWED, line=lineno)
            pending = line
        if pending is not None:
            r = parse_socket(pending)
            if r:
                r["t"] = t
                rows.append(r)
    if nmarks == 0:
        raise AnalyzeInputError(path, "no timestamp lines, so not a timed ss log", ALLOWED)
    clock.warn()
    src = Source(path=str(path), kind="ss", clock="unix")
    if not rows:
        src.meta = {"samples": nmarks, "sockets": 0, **clock.facts()}
        return src
    conn_rows = [r for r in rows if r.get("mptcp_conn")]
    rows = [r for r in rows if not r.get("mptcp_conn")]
    if not rows and not conn_rows:
        src.meta = {"samples": nmarks, "sockets": 0, **clock.facts()}
        return src
    df = pd.DataFrame(rows) if rows else pd.DataFrame({"local": pd.Series(dtype=str), "peer": pd.Series(dtype=str),
                                                       "t": pd.Series(dtype=float)})
    for c in ("bytes_acked", "bytes_received", "cwnd", "ssthresh", "mss", "unacked", "sacked", "lost",
              "retrans_cur", "retrans_total", "snd_wnd", "rtt_ms", "rttvar_ms", "mptcp_token",
              "mptcp_remote_token", "cc", "delivery_rate_mbps", "pacing_rate_mbps"):
        if c not in df:
            df[c] = np.nan
    df["sock"] = df["local"] + ">" + df["peer"]
    # Data direction per socket: the side whose cumulative counter grew most.
    g = df.groupby("sock")
    acked = g["bytes_acked"].max().fillna(0) - g["bytes_acked"].min().fillna(0)
    recvd = g["bytes_received"].max().fillna(0) - g["bytes_received"].min().fillna(0)
    sender = (acked >= recvd)
    # MPTCP connection name: the remote token that joins carry (matches the pcap reader's names)
    conn = {}
    tok = df.dropna(subset=["mptcp_token"])
    for lt, grp in tok.groupby("mptcp_token"):
        rts = [x for x in grp["mptcp_remote_token"].dropna().unique() if int(x, 16) != 0]
        conn[lt] = "mptcp-" + (rts[0] if rts else lt)
    flows, bins, samples = [], [], []
    sub_counter: dict[str, int] = {}
    for sock, grp in g:
        # Samples of one socket sharing a timestamp (a whole-second style, `date` or `date +%s`,
        # in a faster loop): the first is kept, nearest its stamp; its counter progress to the
        # next stamp then spans a real interval instead of a zero-length one.
        grp = grp.sort_values("t", kind="stable").drop_duplicates("t", keep="first")
        is_snd = bool(sender[sock])
        local, peer = sock.split(">")
        name = f"{local}>{peer}" if is_snd else f"{peer}>{local}"
        ctr = grp["bytes_acked"] if is_snd else grp["bytes_received"]
        ctr = ctr.astype(float).ffill().fillna(0)
        tok_ = grp["mptcp_token"].dropna()
        flow_id, subflow = name, -1
        if len(tok_):
            cname = conn.get(tok_.iloc[0], "mptcp-" + str(tok_.iloc[0]))
            flow_id = cname + (":fwd" if is_snd else ":rev")
            subflow = sub_counter.setdefault(flow_id, 0)
            sub_counter[flow_id] += 1
        path_ = grp["dev"].dropna().iloc[0] if grp["dev"].notna().any() else ""
        tt = grp["t"].to_numpy(float)
        inc = np.diff(ctr.to_numpy())
        if tt.size > 1:
            bins.append(pd.DataFrame({"t": tt[:-1], "dt": np.diff(tt), "flow": flow_id, "subflow": subflow,
                                      "path": path_, "bytes": np.clip(inc, 0, None)}))
        mss = grp["mss"].astype(float)
        # A receiving socket's `rtt:` is measured on what it sent itself (iperf3's 37-byte cookie:
        # 0.015 ms, constant, beside a 40 ms data RTT on the tour's testbed), not the data's: only
        # the sending socket's RTT describes the flow, as for iperf3's receiving end.
        rtt = grp["rtt_ms"].to_numpy(float) if is_snd else np.nan
        rttvar = grp["rttvar_ms"].to_numpy(float) if is_snd else np.nan
        infl = (grp["unacked"].fillna(0) - grp["sacked"].fillna(0) - grp["lost"].fillna(0)
                + grp["retrans_cur"].fillna(0)) * mss
        samples.append(pd.DataFrame({
            "t": tt, "flow": flow_id, "subflow": subflow, "path": path_,
            "cwnd_bytes": (grp["cwnd"] * mss).to_numpy(float) if is_snd else np.nan,
            "ssthresh_bytes": (grp["ssthresh"] * mss).to_numpy(float) if is_snd else np.nan,
            "srtt_ms": rtt, "rttvar_ms": rttvar,
            "in_flight_bytes": infl.to_numpy(float) if is_snd else np.nan,
            "rwnd_bytes": grp["snd_wnd"].to_numpy(float) if is_snd else np.nan,
            "delivery_rate_mbps": grp["delivery_rate_mbps"].to_numpy(float),
            "pacing_rate_mbps": grp["pacing_rate_mbps"].to_numpy(float),
            "retransmits": grp["retrans_total"].to_numpy(float),
        }))
        total = float(ctr.iloc[-1] - ctr.iloc[0])
        dur = float(tt[-1] - tt[0]) if tt.size > 1 else 0.0
        f = {"name": flow_id if subflow < 0 else name, "kind": "mptcp-subflow" if subflow >= 0 else "tcp",
             "sender_side": is_snd, "bytes": int(total), "duration_s": dur, "start": float(tt[0]), "end": float(tt[-1]),
             "mbps": total * 8 / dur / 1e6 if dur > 0 else 0.0, "path": path_,
             "cc": grp["cc"].dropna().iloc[0] if grp["cc"].notna().any() else None,
             "retransmits": int(grp["retrans_total"].max()) if grp["retrans_total"].notna().any() else None,
             "samples": int(len(grp))}
        if subflow >= 0:
            f["connection"], f["subflow"] = flow_id, subflow
        flows.append(f)
    _mptcp_connections(conn_rows, conn, flows, bins, samples)
    src.flows = flows
    if bins:
        src.bins = pd.concat(bins, ignore_index=True)
    src.samples = pd.concat(samples, ignore_index=True) if samples else pd.DataFrame()
    src.meta = {"samples": nmarks, "sockets": int(df["sock"].nunique()),
                "mptcp_connections": len({r.get("mptcp_token") for r in conn_rows}), **clock.facts()}
    return src


def _stamp(clock: stamps.LineClock, lineno: int, line: str) -> float | None:
    """The time of a timestamp line in one of the shell-loop styles (stamps.py), None for ss's own
    lines (sockets, their indented info lines, headers) and other text; a line meant as a time in
    a form not understood is an error naming the line."""
    if not line or line[0] in " \t" or _is_header(line):
        return None
    first = line.split(None, 1)[0] if line.strip() else ""
    if first in _STATES or first in _NETIDS:
        return None
    return clock.at(lineno, line)


def _mptcp_connections(conn_rows: list[dict], conn: dict, flows: list, bins: list, samples: list) -> None:
    """MPTCP connection-level flows from `ss -M` lines: the data ACKed (`snd_una` progress, the
    sending end) or received (`rcv_nxt`, the receiving end), modulo 2^64, per connection token;
    named as the pcap reader names the connection (mptcp-REMOTETOKEN:fwd/rev via the subflows)."""
    by_tok: dict[str, list[dict]] = {}
    for r in conn_rows:
        if r.get("mptcp_token") and r.get("t") is not None:
            by_tok.setdefault(r["mptcp_token"], []).append(r)
    for tok, rs in by_tok.items():
        rs.sort(key=lambda r: r["t"])
        rs = [r for i, r in enumerate(rs) if i == 0 or r["t"] != rs[i - 1]["t"]]  # as for the sockets
        tt = np.array([r["t"] for r in rs], float)
        prog = {}
        for k in ("d_snd_una", "d_rcv_nxt"):
            v = [r.get(k) for r in rs]
            if any(x is None for x in v):
                prog[k] = None
                continue
            prog[k] = np.array([(b - a) % (1 << 64) for a, b in zip(v[:-1], v[1:])], float)
        snd, rcv = prog["d_snd_una"], prog["d_rcv_nxt"]
        tot_s = float(snd.sum()) if snd is not None else -1.0
        tot_r = float(rcv.sum()) if rcv is not None else -1.0
        if max(tot_s, tot_r) < 0:
            continue
        is_snd = tot_s >= tot_r
        inc = snd if is_snd else rcv
        name = conn.get(tok, "mptcp-" + tok) + (":fwd" if is_snd else ":rev")
        total = float(inc.sum())
        dur = float(tt[-1] - tt[0]) if tt.size > 1 else 0.0
        if tt.size > 1:
            bins.append(pd.DataFrame({"t": tt[:-1], "dt": np.diff(tt), "flow": name, "subflow": -1, "path": "",
                                      "bytes": inc}))
        flows.append({"name": name, "kind": "mptcp", "sender_side": is_snd, "bytes": int(total),
                      "duration_s": dur, "start": float(tt[0]), "end": float(tt[-1]),
                      "mbps": total * 8 / dur / 1e6 if dur > 0 else 0.0, "path": "", "samples": len(rs)})
