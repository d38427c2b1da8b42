"""Capture sets: per-interface captures of one MPTCP connection read as one source.

A multihomed host captured one file per interface (`tcpdump -i wlan0`, `tcpdump -i wigig0`, or the
emulator's `11ad.pcap` and `11ac.pcap`) holds each subflow in a different file. Read apart, no file
sees the whole connection: the MP_JOIN subflow's file lacks the MP_CAPABLE keys that name its
connection, and the data ACKs one path carries stop while it is down, then jump by everything the
other path delivered meanwhile (a 100 ms bin of 13 Gbit/s after an 11ad blockage). So captures are
read together when they belong together:

- they share an MPTCP connection: a token one file's MP_CAPABLE keys give (RFC 8684 3.1: the token
  is the top 32 bits of SHA-256(key)) is one another file's MP_JOIN SYN carries, or both files
  carry the same connection's keys; and
- no TCP direction (4-tuple) is in both: the files saw different packets. Two captures of the
  same packets (the two ends of a path, for one-way delay) stay apart.

A merged source is named `a.pcap+b.pcap` (in the first file's folder). A direction whose capture
recorded no interface name is given its file's name without the extension (`11ad`), so the paths
of the merged connection keep the names the files had.
"""

from __future__ import annotations

from pathlib import Path

from ..model import Source
from .flows import build
from .mptcp import mptcp_token
from .options import MP_CAPABLE, MP_JOIN
from .packets import read_packets


def _tokens(tcp) -> set[str]:
    """The MPTCP tokens a capture shows: of every MP_CAPABLE key, and in every MP_JOIN SYN."""
    out: set[str] = set()
    for d in tcp.values():
        for _idx, st, f in d.mptcp:
            if st == MP_CAPABLE:
                out.update(mptcp_token(k) for k in (f[2], f[3]) if k is not None)
            elif st == MP_JOIN and f[0] == "syn" and f[3] is not None:
                out.add(f[3].hex())
    return out


def _groups(tables) -> list[list[int]]:
    """Indices of the captures read together, each group in input order, groups in the order of
    their first capture: a capture joins the first group it shares a token with and no TCP
    direction with."""
    groups: list[tuple[list[int], set[str], set[tuple]]] = []  # members, tokens, directions
    for i, t in enumerate(tables):
        toks, keys = _tokens(t[1]), set(t[1])
        for members, gtoks, gkeys in groups:
            if toks & gtoks and not keys & gkeys:
                members.append(i)
                gtoks |= toks
                gkeys |= keys
                break
        else:
            groups.append(([i], toks, keys))
    return [g[0] for g in groups]


def read_all(paths: list[Path], keep_apart=frozenset(), packets=read_packets) -> list[Source]:
    """Read captures, each once; those of one MPTCP connection's interfaces as one Source.

    `keep_apart`: capture paths (or file names) never merged, e.g. ones the user shifts in time.
    `packets`: the per-file reader (sources.py wraps read_packets in its error handling).
    """
    tables = [(Path(p), *packets(Path(p))) for p in paths]
    apart = {i for i, t in enumerate(tables) if str(t[0]) in keep_apart or t[0].name in keep_apart}
    mergeable = [i for i in range(len(tables)) if i not in apart]
    groups = [[mergeable[k] for k in g] for g in _groups([tables[i] for i in mergeable])]
    groups += [[i] for i in sorted(apart)]
    groups.sort(key=lambda g: g[0])
    out = []
    for g in groups:
        if len(g) == 1:
            p, tcp, udp, stats = tables[g[0]]
            out.append(build(str(p), tcp, udp, stats))
            continue
        tcp, udp, stats = {}, {}, None
        for i in g:
            p, t, u, st = tables[i]
            for d in list(t.values()) + list(u.values()):
                if not d.iface:
                    d.iface = p.stem
            tcp.update(t)
            udp.update(u)
            if stats is None:
                stats = dict(st, linktypes=set(st["linktypes"]))
            else:
                for k in ("packets", "ipv4", "ipv6", "tcp", "udp", "other", "short"):
                    stats[k] += st[k]
                stats["first_ts"] = min(stats["first_ts"], st["first_ts"])
                stats["last_ts"] = max(stats["last_ts"], st["last_ts"])
                stats["linktypes"] |= set(st["linktypes"])
        first = tables[g[0]][0]
        label = str(first.parent / "+".join(tables[i][0].name for i in g))
        src = build(label, tcp, udp, stats)
        src.meta["captures"] = [str(tables[i][0]) for i in g]
        out.append(src)
    return out
