"""What the kernel tells of a subflow's transport without an event for it: each subflow's TCP
state (struct tcp_info, what `ss -ti` shows) through sock_diag / inet_diag, and the kernel's count
of the subflows it marked stale (the MPTcpExt `SubflowStale` counter of the namespace, what `nstat`
shows). The daemon polls both every POLL_S while it manages a connection, and events.Translator
turns them into the policies' `subflow_rto` and `subflow_stale` (docs/path-manager.md, "The mapping
onto the kernel").

The messages are pyroute2's (pyroute2.netlink.diag: inet_diag_req, inet_diag_msg and its tcp_info),
sent on a plain NETLINK_SOCK_DIAG socket as the events' sockets are (netlink.Events): one exact
lookup per subflow by its addresses and ports (inet_diag_find_one_icsk, a hash lookup), not a dump
of every socket (pyroute2's DiagSocket.get_sock_stats dumps: the kernel walks its whole TCP hash
table, every namespace's buckets; 15 times the lookup's cost here, bench/pm_poll_cost.py).
"""

from __future__ import annotations

import errno
import os
import socket
import struct
from pathlib import Path as FsPath

from pyroute2.netlink import NETLINK_SOCK_DIAG, NLM_F_DUMP, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, nlmsgerr
from pyroute2.netlink.diag import SOCK_DIAG_BY_FAMILY, SS_ALL, SS_LISTEN, MarshalDiag, inet_diag_req

from .netlink import Endpoint
from .system import PmError

# How often the subflows are read. An RTO never fires sooner than TCP_RTO_MIN (200 ms,
# include/net/tcp.h) after the previous one on a subflow, so at 20 ms each one is read within a
# tenth of the shortest interval between two, and an event reaches the policy at most 20 ms (plus
# a lookup, ~0.1 ms per subflow) after the kernel's: well inside the 0.3 s to which the simulator
# and the kernel are compared (issue 28). The kernel's own clock (jiffies) ticks every 4 ms at
# HZ = 250, so polling much faster would mostly read the same values again.
POLL_S = 0.02

# The extension that asks for struct tcp_info: 1 << (INET_DIAG_INFO - 1), INET_DIAG_INFO = 2
# (include/uapi/linux/inet_diag.h).
EXT_INFO = 1 << (2 - 1)
# idiag_cookie: "no cookie", match by addresses and ports alone (INET_DIAG_NOCOOKIE, ~0U in both
# halves; sock_diag_check_cookie).
NO_COOKIE = (1 << 64) - 1

NETSTAT = FsPath("/proc/net/netstat")  # the reader's namespace's (/proc/self/net)
STALE_COUNTER = "SubflowStale"         # net/mptcp/mib.c, MPTCP_MIB_SUBFLOWSTALE


def _addr_words(addr: str) -> tuple[int, int, int, int]:
    """An address as inet_diag_sockid's idiag_src / idiag_dst, four big-endian 32-bit words (the
    form pyroute2's inet_diag_req field '>4I' takes; IPv4 in the first word)."""
    if ":" in addr:
        return struct.unpack(">4I", socket.inet_pton(socket.AF_INET6, addr))
    return struct.unpack(">I", socket.inet_aton(addr)) + (0, 0, 0)


def sample(msg) -> dict | None:
    """The fields of one inet_diag_msg the translation reads (events.Translator.on_transport),
    from its tcp_info: `backoff` (icsk_backoff: how often the RTO has been doubled since the last
    valid RTT sample), `ca_state` (TCP_CA_Open 0 ... TCP_CA_Loss 4, enum tcp_ca_state in
    include/uapi/linux/tcp.h), `retransmits` (icsk_retransmits: RTOs since the last progress),
    `unacked` (segments in flight), `notsent_bytes` (written, not yet sent) and
    `last_ack_recv_ms` (ms since the last ACK came in: tcp_sk->rcv_tstamp, what the kernel's stale
    rule compares). None: no tcp_info in it."""
    info = msg.get_attr("INET_DIAG_INFO")
    if info is None:
        return None
    return {"backoff": int(info["tcpi_backoff"]), "ca_state": int(info["tcpi_ca_state"]),
            "retransmits": int(info["tcpi_retransmits"]), "unacked": int(info["tcpi_unacked"]),
            "notsent_bytes": int(info["tcpi_notsent_bytes"]), "last_ack_recv_ms": int(info["tcpi_last_ack_recv"])}


def stale_counter(text: str) -> int | None:
    """The MPTcpExt SubflowStale counter in the text of /proc/net/netstat (pairs of lines: the
    names, then the values, each line starting with its group); None: not there."""
    lines = text.splitlines()
    for names, values in zip(lines, lines[1:]):
        if names.startswith("MPTcpExt:") and values.startswith("MPTcpExt:"):
            table = dict(zip(names.split()[1:], values.split()[1:]))
            if STALE_COUNTER in table:
                return int(table[STALE_COUNTER])
    return None


def read_stale_counter() -> int | None:
    try:
        return stale_counter(NETSTAT.read_text())
    except OSError:
        return None


class TcpInfo:
    """A sock_diag socket of the namespace the daemon runs in; refused in one line when the kernel
    cannot answer it (no inet_diag / tcp_diag, or no SubflowStale counter)."""

    def __init__(self) -> None:
        why = "it needs CONFIG_INET_DIAG and CONFIG_INET_TCP_DIAG (as a module: `modprobe tcp_diag`)"
        try:
            self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
            self.sock.bind((0, 0))
        except OSError as e:
            raise PmError(f"sock_diag is unavailable ({e.strerror or e}): mmpath-pm reads each subflow's "
                          f"tcp_info through it for subflow_rto and subflow_stale; {why}") from None
        self.marshal = MarshalDiag()
        self.seq = 0
        err = self._probe()
        if err:
            self.close()
            raise PmError(f"inet_diag for TCP is unavailable ({os.strerror(err)}): mmpath-pm reads each "
                          f"subflow's tcp_info through it for subflow_rto and subflow_stale; {why}")
        if read_stale_counter() is None:
            self.close()
            raise PmError(f"this kernel's MPTCP counters ({NETSTAT}, MPTcpExt) have no {STALE_COUNTER}: "
                          "mmpath-pm reads it for subflow_stale; it needs Linux >= 5.15")

    def _request(self, family: int, states: int, flags: int, local: Endpoint | None = None,
                 remote: Endpoint | None = None, ifindex: int = 0) -> bytes:
        self.seq += 1
        r = inet_diag_req()
        r["header"]["type"] = SOCK_DIAG_BY_FAMILY
        r["header"]["flags"] = flags
        r["header"]["sequence_number"] = self.seq
        r["sdiag_family"], r["sdiag_protocol"] = family, socket.IPPROTO_TCP
        r["idiag_ext"], r["idiag_states"] = EXT_INFO, states
        if local is not None and remote is not None:
            r["idiag_src"], r["idiag_sport"] = _addr_words(local.addr), local.port
            r["idiag_dst"], r["idiag_dport"] = _addr_words(remote.addr), remote.port
            # A subflow the path manager opened from an interface is bound to it, and the lookup
            # matches a bound socket only on its device (inet_bound_dev_eq); an unbound one
            # matches any.
            r["idiag_if"] = ifindex
        r["idiag_cookie"] = NO_COOKIE
        r.encode()
        return bytes(r.data)

    def _probe(self) -> int:
        """A dump of the listening TCP sockets (a short walk): 0 when the kernel answers it, else
        its errno (ENOENT: no handler for the family or for TCP, net/core/sock_diag.c,
        inet_diag.c)."""
        self.sock.send(self._request(socket.AF_INET, 1 << SS_LISTEN, NLM_F_REQUEST | NLM_F_DUMP))
        while True:
            for msg in self.marshal.parse(self.sock.recv(1 << 16)):
                t = msg["header"]["type"]
                if t == NLMSG_DONE:
                    return 0
                if t == NLMSG_ERROR:
                    return _errno(msg)

    def lookup(self, local: Endpoint, remote: Endpoint) -> dict | None:
        """The subflow's tcp_info fields (`sample`); None when the kernel has no such socket
        (closed meanwhile: ENOENT) or the socket failed (the next poll asks again: one missed
        reading of a subflow only delays its events by a poll)."""
        family = socket.AF_INET6 if ":" in local.addr else socket.AF_INET
        try:
            self.sock.send(self._request(family, SS_ALL, NLM_F_REQUEST, local, remote, local.ifindex))
            while True:  # the kernel answers every request, a reading or an error, in order
                for msg in self.marshal.parse(self.sock.recv(1 << 16)):
                    if msg["header"]["sequence_number"] != self.seq:
                        continue  # the answer to a request whose reading failed before
                    return sample(msg) if msg["header"]["type"] == SOCK_DIAG_BY_FAMILY else None
        except OSError:
            return None

    def close(self) -> None:
        self.sock.close()


def _errno(msg) -> int:
    """The errno of an NLMSG_ERROR, which MarshalDiag leaves undecoded (it maps messages by
    family, not type: pyroute2.netlink.diag), decoded with pyroute2's nlmsgerr."""
    err = nlmsgerr(msg.data)
    err.decode()
    return abs(int(err["error"])) or errno.EIO
