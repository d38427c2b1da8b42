"""Per-direction TCP metrics from the packet arrays, vectorised with numpy, and time-binning helpers.

Delivered bytes (cumulative-ACK progress, else new data sent), retransmissions, D-SACKs (RFC 2883:
first SACK block below the cumulative ACK), RTT samples (Karn), smoothed RTT (RFC 6298), in flight,
receive window (RFC 7323 window scale).
"""

from __future__ import annotations

from ...lazy import numpy as np  # on first use (start-up time): lazy.py
from .directions import TcpDir
from .options import ACK, SYN
from .packets import conn_name, ip_str


def unwrap32(x: np.ndarray, base: int) -> np.ndarray:
    """32-bit sequence numbers relative to `base`, unwrapped into int64 (RFC 9293 modular arithmetic)."""
    rel = (x.astype(np.int64) - base) % (1 << 32)
    if rel.size < 2:
        return rel
    d = np.diff(rel)
    d = (d + (1 << 31)) % (1 << 32) - (1 << 31)
    return np.concatenate([rel[:1], rel[0] + np.cumsum(d)])


def _ewma_srtt(samples_ms: np.ndarray) -> np.ndarray:
    """RFC 6298 smoothed RTT: SRTT = 7/8 SRTT + 1/8 R', first SRTT = R."""
    out = np.empty_like(samples_ms)
    s = np.nan
    for i, r in enumerate(samples_ms):
        s = r if np.isnan(s) else 0.875 * s + 0.125 * r
        out[i] = s
    return out


def tcp_direction(key, d: TcpDir, r: TcpDir | None, t_bin: float):
    """Analyze data sent in direction `d` (ACKs come back in `r`). Returns (flow dict, bins, samples)."""
    ts = np.frombuffer(d.ts, dtype=float)
    seq = np.frombuffer(d.seq, dtype=np.uint32)
    plen = np.frombuffer(d.plen, dtype=np.int64) if d.plen.itemsize == 8 else np.asarray(d.plen, dtype=np.int64)
    flags = np.frombuffer(d.flags, dtype=np.uint8)
    syn_idx = np.flatnonzero(flags & SYN)
    isn = int(seq[syn_idx[0]]) if syn_idx.size else int(seq[0])
    rel = unwrap32(seq, isn)
    data = plen > 0
    di = np.flatnonzero(data)
    s0 = rel[di]
    e0 = s0 + plen[di]
    t0 = ts[di]
    prev_max = np.concatenate([[s0[0] if s0.size else 0], np.maximum.accumulate(e0)[:-1]]) if e0.size else e0
    retrans = s0 < prev_max
    new_bytes = np.clip(e0 - np.maximum(s0, prev_max), 0, None)
    first_data = int(s0.min()) if s0.size else 0
    hi = int(e0.max()) if e0.size else 0

    # ---- ACKs from the reverse direction
    ack_t = np.empty(0)
    ack_v = np.empty(0, dtype=np.int64)
    rwnd_t = np.empty(0)
    rwnd_v = np.empty(0)
    sack_acks = dsacks = 0
    if r is not None and len(r.ts):
        rts = np.frombuffer(r.ts, dtype=float)
        rfl = np.frombuffer(r.flags, dtype=np.uint8)
        rack = np.frombuffer(r.ack, dtype=np.uint32)
        m = (rfl & ACK) > 0
        ack_t = rts[m]
        ack_v = unwrap32(rack[m], isn)
        # Receive window: the 16-bit field scaled by the shift the receiver announced in its SYN,
        # valid only if both SYNs carried the option (RFC 7323 2.2); never scaled on SYNs.
        scale = r.wscale if (r.wscale is not None and d.wscale is not None) else 0
        rwin = np.frombuffer(r.win, dtype=np.uint16).astype(np.int64)
        shift = np.where(rfl & SYN, 0, scale)
        rwnd_t = rts
        rwnd_v = (rwin << shift).astype(float)
        sack_acks = len(r.sacks)
        if r.sacks:
            # D-SACK (RFC 2883): the first SACK block reports data below the cumulative ACK.
            idxs = np.fromiter((i for i, _ in r.sacks), dtype=np.int64, count=len(r.sacks))
            lefts = np.fromiter((b[0][0] for _, b in r.sacks), dtype=np.uint32, count=len(r.sacks))
            acks_at = rack[idxs].astype(np.int64)
            dl = ((lefts.astype(np.int64) - acks_at + (1 << 31)) % (1 << 32)) - (1 << 31)
            dsacks = int((dl < 0).sum())
    acked_max = np.maximum.accumulate(ack_v) if ack_v.size else ack_v

    # ---- delivered bytes: cumulative ACK progress when the ACKs were captured, else new data sent
    if ack_v.size and acked_max[-1] > first_data:
        cm = np.clip(acked_max, first_data, hi)
        inc = np.diff(np.concatenate([[first_data], cm]))
        byte_t, byte_v = ack_t, inc.astype(float)
        delivered = int(cm[-1] - first_data)
        basis = "acked"
    else:
        byte_t, byte_v = t0, new_bytes.astype(float)
        delivered = int(new_bytes.sum())
        basis = "sent"
    nz = byte_v > 0
    if nz.any():
        t_first = float(t0[0]) if t0.size else float(byte_t[nz][0])
        t_last = float(byte_t[nz][-1])
    else:
        t_first = t_last = float(ts[0])
    dur = max(t_last - t_first, 1e-9)

    # ---- RTT samples: first ACK covering a segment's end, never a retransmitted segment (Karn)
    rtt_t = np.empty(0)
    rtt_ms = np.empty(0)
    if ack_v.size and s0.size:
        fresh = ~retrans
        fe, ft = e0[fresh], t0[fresh]
        covered = np.zeros(fe.size + 1, dtype=np.int64)
        if retrans.any():
            rs, re_ = s0[retrans], e0[retrans]
            lo = np.searchsorted(fe, rs, side="right")
            hi_i = np.searchsorted(fe, re_, side="right")
            np.add.at(covered, lo, 1)
            np.add.at(covered, hi_i, -1)
        tainted = np.cumsum(covered)[:-1] > 0
        prev = np.concatenate([[-1], acked_max[:-1]])
        adv = ack_v > prev
        at, av = ack_t[adv], ack_v[adv]
        j = np.searchsorted(fe, av, side="right") - 1
        ok = j >= 0
        j2 = np.where(ok, j, 0)
        ok &= ~tainted[j2] & (ft[j2] <= at)
        # each segment sampled once: the first ACK reaching it
        _, first = np.unique(j2[ok], return_index=True)
        sel = np.flatnonzero(ok)[first]
        rtt_t = at[sel]
        rtt_ms = (at[sel] - ft[j2[sel]]) * 1e3

    # ---- in flight at each data packet: highest byte sent - highest byte cumulatively ACKed
    inflight_t = t0
    if t0.size:
        hi_sent = np.maximum.accumulate(e0)
        if ack_v.size:
            k = np.searchsorted(ack_t, t0, side="right") - 1
            una = np.where(k >= 0, acked_max[np.clip(k, 0, None)], first_data)
        else:
            una = np.full(t0.size, first_data)
        inflight_v = np.clip(hi_sent - np.maximum(una, first_data), 0, None).astype(float)
    else:
        inflight_v = np.empty(0)

    nret = int(retrans.sum())
    flow = {
        "name": conn_name(key), "kind": "tcp", "src": ip_str(key[0]), "sport": key[1], "dst": ip_str(key[2]),
        "dport": key[3], "iface": d.iface, "bytes": delivered, "bytes_basis": basis,
        "start": t_first, "end": t_last, "duration_s": dur, "mbps": delivered * 8 / dur / 1e6,
        "packets": int(di.size), "retransmits": nret,
        "retrans_pct": 100.0 * nret / di.size if di.size else 0.0,
        "retrans_bytes": int((np.minimum(e0, prev_max) - s0).clip(0).sum()) if s0.size else 0,
        "sack_permitted": bool(d.sack_ok and (r.sack_ok if r else False)), "sack_acks": sack_acks,
        "dsacks": dsacks, "rtt_samples": int(rtt_ms.size),
        "wscale": r.wscale if r is not None else None,
    }
    bins = (byte_t, byte_v)
    srtt = _ewma_srtt(rtt_ms) if rtt_ms.size else rtt_ms
    samples = {"rtt": (rtt_t, rtt_ms, srtt), "inflight": (inflight_t, inflight_v), "rwnd": (rwnd_t, rwnd_v)}
    return flow, bins, samples


def bin_sum(t: np.ndarray, v: np.ndarray, t_bin: float) -> tuple[np.ndarray, np.ndarray]:
    if t.size == 0:
        return t, v
    k = np.floor(t / t_bin).astype(np.int64)
    uk, inv = np.unique(k, return_inverse=True)
    return uk * t_bin, np.bincount(inv, weights=v)


def last_per_bin(t, v, t_bin):
    """The latest sample of each bin, one per bin. Captures are not always in time order (several
    interfaces or pcapng sections, clock steps), so the samples are put in time order first; a
    stable sort keeps capture order among equal timestamps and leaves ordered input as it was."""
    if t.size == 0:
        return t, v
    order = np.argsort(t, kind="stable")
    t, v = t[order], v[order]
    k = np.floor(t / t_bin).astype(np.int64)
    last = np.flatnonzero(np.diff(np.append(k, k[-1] + 1)) != 0)
    return k[last] * t_bin, v[last]
