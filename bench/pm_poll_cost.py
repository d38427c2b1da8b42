"""What one poll of the path-manager daemon's transport state costs (python/mmpath/pm/transport.py),
side by side: the exact lookup of one subflow's tcp_info it makes (SOCK_DIAG_BY_FAMILY with the
subflow's addresses and ports: a hash lookup in the kernel) against a dump of the namespace's TCP
sockets (pyroute2's DiagSocket.get_sock_stats, what `ss -ti` does: the kernel walks its whole TCP
hash table, every namespace's buckets, whatever this namespace holds), and the read of the
SubflowStale counter. No root: the sockets are a TCP connection of the script's own, on loopback.

    .venv/bin/python bench/pm_poll_cost.py [--n 500]

Prints the medians per call of batches of 50 and their ratio to the lookup (bench/README.md).
"""

from __future__ import annotations

import argparse
import socket
import statistics
import time

from pyroute2.netlink.diag import SS_CONN, DiagSocket

from mmpath.pm.netlink import Endpoint
from mmpath.pm.transport import EXT_INFO, TcpInfo, read_stale_counter


def per_call(fn, n: int) -> float:
    """The median over batches of 50 calls of the time per call, seconds."""
    fn()
    out = []
    for _ in range(max(1, n // 50)):
        t = time.perf_counter()
        for _ in range(50):
            fn()
        out.append((time.perf_counter() - t) / 50)
    return statistics.median(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=500, help="calls of each (default 500)")
    a = ap.parse_args()
    srv = socket.create_server(("127.0.0.1", 0))
    c = socket.create_connection(srv.getsockname())
    peer, _ = srv.accept()
    local, remote = Endpoint(*c.getsockname()), Endpoint(*c.getpeername())
    tcp = TcpInfo()
    ds = DiagSocket()
    ds.bind()
    try:
        rows = [("exact lookup of one subflow (the daemon's)", per_call(lambda: tcp.lookup(local, remote), a.n)),
                ("dump of every TCP socket, IPv4 (DiagSocket)",
                 per_call(lambda: ds.get_sock_stats(family=socket.AF_INET, states=SS_CONN, extensions=EXT_INFO), a.n)),
                ("SubflowStale counter (/proc/net/netstat)", per_call(read_stale_counter, a.n))]
    finally:
        ds.close()
        tcp.close()
        for s in (peer, c, srv):
            s.close()
    base = rows[0][1]
    print("| what | per call | ratio to the lookup |\n|---|---|---|")
    for name, t in rows:
        print(f"| {name} | {t * 1e3:.3f} ms | {t / base:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
