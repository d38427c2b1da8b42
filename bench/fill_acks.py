"""What data-ACKs a connection-level hole's fill on the kernel: reads an emulated MPTCP download's
per-path captures (`mmpath emu run ... --out DIR`: DIR/<path>.pcap, taken at the client) and, for
every data segment that advances the connection's in-order point past data held behind it (a
"fill"), finds the first ACK from the client, on any subflow, whose DSS data ACK covers the new
in-order point: which subflow it left on and how long after the fill.

    python bench/fill_acks.py DIR [--after S]

Prints the fills' count, the share ACKed first on the filling subflow, and the delay's quantiles
by the fill's kind (a short segment, one full segment, or a GSO packet of several), with the
PSH flag's share. docs/models.md ("Against the kernel: the x-kernel battery", the read's ACK of
a segment that ends a push) has what it showed for mesh-rate-1:4-small.

Only the data connection is read: the two subflows (or more) that carried the most payload; the
DSN of a packet is its mapping's (the last DSS with a mapping on that subflow) plus its offset.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from mmpath.analyze.errors import AnalyzeInputError  # noqa: E402
from mmpath.analyze.pcap import DSS, PSH, SYN, read_packets  # noqa: E402


class Packet(NamedTuple):
    t: float
    path: str  # the capture's file name without .pcap: the path's name
    src: bytes
    sport: int
    dport: int
    seq: int
    flags: int
    plen: int
    data_ack: int | None  # of the packet's (last) DSS option
    mapping: tuple[int, int] | None  # (DSN, subflow sequence number) of that DSS


def packets(folder: Path) -> list[Packet]:
    """Every TCP packet of the folder's captures, by time; the analyzer's reader
    (mmpath.analyze.pcap.read_packets) decodes the headers and each direction's MPTCP options."""
    out = []
    pcaps = sorted(folder.glob("*.pcap"))
    for pcap in pcaps:
        tcp, _udp, _stats = read_packets(pcap)
        for (src, sport, _dst, dport), d in tcp.items():
            dss: dict = {}  # packet index -> (data_ack, mapping) of its last DSS option
            for idx, subtype, fields in d.mptcp:
                if subtype == DSS:
                    ack, dsn, ssn = fields[:3]
                    dss[idx] = (ack[0] if ack else None, (dsn[0], ssn) if dsn else None)
            out.extend(Packet(d.ts[i], pcap.stem, src, sport, dport, d.seq[i], d.flags[i], d.plen[i],
                        *dss.get(i, (None, None))) for i in range(len(d.ts)))
    # read_packets keeps a file's packets direction by direction: merged again by time, equal
    # times in the files' order. Equal times within one file come direction by direction, not in
    # capture order; the fills do not depend on it: an ACK that left before a fill arrived cannot
    # data-ACK it, so at the fill's microsecond only an ACK that followed it matches either way.
    order = {p.stem: k for k, p in enumerate(pcaps)}
    out.sort(key=lambda r: (r.t, order[r.path]))
    return out


def fills(rows: list[Packet], after_s: float):
    if not rows:
        return [], 0, 0
    # The server sends the data: the source of the most payload.
    payload: dict = {}
    for r in rows:
        payload[r.src] = payload.get(r.src, 0) + r.plen
    server = max(payload, key=payload.get)
    sub_bytes: dict = {}
    for r in rows:
        if r.src == server:
            key = (r.path, r.dport)
            sub_bytes[key] = sub_bytes.get(key, 0) + r.plen
    keys = sorted(sub_bytes, key=sub_bytes.get)[-2:]
    isn, anchor, have, found, pending = {}, {}, [], [], []
    t0 = rows[0].t
    contig = None
    for t, path, src, sport, dport, seq, flags, plen, data_ack, mapping in rows:
        key = (path, dport if src == server else sport)
        if key not in keys:
            continue
        if flags & SYN and src == server:
            isn[key] = seq
        if src == server and plen > 0 and key in isn:
            if mapping:
                anchor[key] = mapping
            if key not in anchor:
                continue
            dsn0, ssn0 = anchor[key]
            start = dsn0 + ((seq - isn[key]) % (1 << 32) - ssn0)
            contig = start if contig is None else contig
            before = contig
            have = sorted(have + [(start, start + plen)])
            merged = []
            for a, b in have:
                if merged and a <= merged[-1][1]:
                    merged[-1] = (merged[-1][0], max(merged[-1][1], b))
                else:
                    merged.append((a, b))
            if merged[0][0] <= contig:
                contig = max(contig, merged[0][1])
            have = [h for h in merged if h[1] > contig]
            if contig - before > plen and t - t0 >= after_s:
                pending.append({"t": t, "path": path, "len": plen, "psh": bool(flags & PSH),
                                "at": contig})
        elif src != server and data_ack is not None:
            for p in list(pending):
                if (data_ack - p["at"]) % (1 << 64) < (1 << 63):
                    found.append({**p, "dt_ms": 1000.0 * (t - p["t"]), "ack_path": path})
                    pending.remove(p)
    # The full segment's payload: the commonest length of a one-frame data packet over 1000 bytes
    # (short window-edge tails are commoner than full segments where GSO packets carry the rest).
    small = [r.plen for r in rows if r.src == server and 1000 < r.plen <= 1500]
    mss = max(set(small), key=small.count) if small else 0
    return found, len(pending), mss


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="an `mmpath emu run --out` folder of an MPTCP download")
    ap.add_argument("--after", type=float, default=0.0, metavar="S",
                    help="only fills S seconds or more after the first packet (default 0)")
    a = ap.parse_args(argv)
    if not a.folder.is_dir() or not any(a.folder.glob("*.pcap")):
        print(f"fill_acks: {a.folder} has no <path>.pcap (allowed: an `mmpath emu run --out` folder, "
              "captures on)", file=sys.stderr)
        return 2
    try:
        rows = packets(a.folder)
    except AnalyzeInputError as e:
        print(f"fill_acks: {e}", file=sys.stderr)
        return 2
    found, unanswered, full = fills(rows, a.after)
    if not found:
        print(f"fill_acks: no connection-level hole was filled in {a.folder} (allowed: an MPTCP download "
              "over two or more paths)", file=sys.stderr)
        return 2
    same = np.mean([f["path"] == f["ack_path"] for f in found])
    print(f"{len(found)} fills ({unanswered} never data-ACKed; a full segment: {full} bytes); first "
          f"data-ACKed on the filling subflow: {100 * same:.0f} %")
    print("kind       fills  PSH %   delay ms: median    p90    p99    max")
    for kind, sel in (("short", lambda n: n < full), ("one MSS", lambda n: n == full), ("GSO", lambda n: n > full)):
        fs = [f for f in found if sel(f["len"])]
        if not fs:
            continue
        dt = np.array([f["dt_ms"] for f in fs])
        q = np.quantile(dt, [0.5, 0.9, 0.99])
        print(f"{kind:<9} {len(fs):>6}  {100 * np.mean([f['psh'] for f in fs]):>5.0f}   "
              f"{q[0]:>15.3f} {q[1]:>6.3f} {q[2]:>6.3f} {dt.max():>6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
