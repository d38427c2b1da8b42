"""Between the kernel and a policy, clock-free: the kernel's MPTCP events (netlink.decode_event)
and link changes become the policy's events (dicts, docs/path-manager.md); the policy's actions
become `mptcp_pm` commands. `Translator` keeps what that needs: the paths (interfaces), each
connection's subflows with the ids it gave them, which paths are backup.

Ids: a connection's initial subflow is subflow 0; every subflow established after it gets the
next id, in the order the kernel reports them (the policies only compare ids). Local address
ids: path k's address is id k + 1 in every connection (id 0 is the initial subflow's address,
RFC 8684 section 3.2), so one path keeps one id across re-created subflows, as the userspace PM
requires (pm_userspace.c, mptcp_userspace_pm_append_new_local_addr refuses an address under a
second id).

The kernel has no event for a subflow's RTO or its stale mark; the daemon polls what it exports
instead (transport.py) and `on_transport` turns it into `subflow_rto` and `subflow_stale`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import netlink
from .netlink import Endpoint


@dataclass
class Path:
    """Path `index` of the policy: an interface of the machine and its address."""

    index: int
    ifname: str
    ifindex: int
    addr: str

    @property
    def addr_id(self) -> int:
        return self.index + 1


@dataclass
class Subflow:
    id: int
    path: int
    local: Endpoint
    remote: Endpoint
    backup: bool = False
    # Its tcp_info as last polled (on_transport): icsk_backoff, and, once reported stale, the time
    # of the last ACK it had then (ms on the daemon's clock; None: not stale, or an ACK came since).
    backoff: int = 0
    stale_ack_ms: float | None = None


@dataclass
class Connection:
    token: int
    path: int
    local: Endpoint
    remote: Endpoint
    established: bool = False
    subflows: dict[int, Subflow] = field(default_factory=dict)
    next_id: int = 1
    # Subflows this daemon closed: their SUB_CLOSED is not an error for the policy.
    closing: set[int] = field(default_factory=set)


@dataclass
class Command:
    """A command for the kernel and what it carries out, for the log."""

    token: int
    action: dict
    msg: netlink.pm_command

    def describe(self) -> dict:
        return netlink.describe(self.msg)


def _v4(addr: str | None) -> str | None:
    """An IPv4-mapped IPv6 address (a dual-stack socket's, as the events give it) as IPv4."""
    if addr is not None and addr.lower().startswith("::ffff:") and "." in addr:
        return addr[7:]
    return addr


def _endpoints(attrs: dict) -> tuple[Endpoint, Endpoint] | None:
    saddr = _v4(attrs.get("saddr4") or attrs.get("saddr6"))
    daddr = _v4(attrs.get("daddr4") or attrs.get("daddr6"))
    if saddr is None or daddr is None:
        return None
    return (Endpoint(saddr, attrs.get("sport", 0), attrs.get("loc_id", 0), ifindex=attrs.get("if_idx", 0)),
            Endpoint(daddr, attrs.get("dport", 0), attrs.get("rem_id", 0)))


def _same(a: Endpoint, b: Endpoint) -> bool:
    return a.addr == b.addr and a.port == b.port


# enum tcp_ca_state (include/uapi/linux/tcp.h): an RTO puts the socket in TCP_CA_Loss
# (tcp_retransmit_timer -> tcp_enter_loss) as it doubles icsk_backoff; a zero-window probe, which
# doubles icsk_backoff too (tcp_send_probe0), does not.
TCP_CA_LOSS = 4
# Two readings of one ACK's time (poll time - tcpi_last_ack_recv) differ by up to a jiffy (the
# value is counted in jiffies: 10 ms at HZ = 100, the coarsest) plus the lookup's own time; a time
# later by more than this is a new ACK.
ACK_SLACK_MS = 20.0


class Translator:
    def __init__(self, paths: list[Path], backup_paths: set[int] | frozenset[int] = frozenset()) -> None:
        self.paths = list(paths)
        self.backup = set(backup_paths)  # paths whose subflows carry the backup flag now
        self.conns: dict[int, Connection] = {}
        self.link_up: dict[int, bool] = {}
        self.quality: dict[int, tuple[float | None, int | None]] = {}
        self.scanning: dict[int, bool] = {}
        # The kernel's SubflowStale counter when last read (None: not read since the daemon had
        # no connection; the first reading after is the baseline).
        self.stale_seen: int | None = None
        # Rises of the counter put on no subflow (no candidate: another connection's mark).
        self.stale_unattributed = 0

    # ------------------------------------------------------------------ paths

    def path_of(self, addr: str | None = None, ifindex: int | None = None) -> int | None:
        """The path of a local address (or, failing that, interface); None: not one of ours."""
        for p in self.paths:
            if addr is not None and p.addr == addr:
                return p.index
        for p in self.paths:
            if ifindex and p.ifindex == ifindex:
                return p.index
        return None

    def on_link(self, ifindex: int, up: bool) -> list[dict]:
        """A link's state as rtnetlink reports it (every RTM_NEWLINK, changed or not): the
        policy event when it changed for one of the paths, else nothing."""
        path = self.path_of(ifindex=ifindex)
        if path is None or self.link_up.get(path) == up:
            return []
        known = path in self.link_up
        self.link_up[path] = up
        if not known and up:
            return []  # the first report of a link that is up: nothing changed
        return [{"kind": "link_up" if up else "link_down", "path": path}]

    def on_quality(self, ifindex: int, signal_dbm: float | None, mcs: int | None) -> list[dict]:
        """A wireless path's station (nl80211): a link_quality event when the signal or the MCS
        changed since the last report, with the ones known."""
        path = self.path_of(ifindex=ifindex)
        if path is None or (signal_dbm is None and mcs is None) or self.quality.get(path) == (signal_dbm, mcs):
            return []
        self.quality[path] = (signal_dbm, mcs)
        ev: dict = {"kind": "link_quality", "path": path}
        if signal_dbm is not None:
            ev["signal_dbm"] = signal_dbm
        if mcs is not None:
            ev["mcs"] = mcs
        return [ev]

    def on_scan(self, ifindex: int, scanning: bool) -> list[dict]:
        """A wireless path's scan started or ended (nl80211's scan notifications, or a feed):
        a scan_start / scan_end event when that changed for one of the paths. The simulator's
        path manager hears a scan as a whole, from its start to its last dwell's end
        (sim/scan.rs), not each dwell off channel."""
        path = self.path_of(ifindex=ifindex)
        if path is None or self.scanning.get(path, False) == scanning:
            return []
        self.scanning[path] = scanning
        return [{"kind": "scan_start" if scanning else "scan_end", "path": path}]

    # ------------------------------------------------------------------ kernel events

    def on_mptcp(self, name: str, attrs: dict) -> list[tuple[int, dict]]:
        """One kernel event: the (token, policy event) pairs it makes. Connections whose
        initial subflow is not on one of the paths, and the server side of connections, are
        not the daemon's and are ignored."""
        token = attrs.get("token")
        if token is None:
            return []
        if name == "CREATED":
            ends = _endpoints(attrs)
            if ends is None or attrs.get("server_side"):
                return []
            path = self.path_of(ends[0].addr, attrs.get("if_idx"))
            if path is None:
                return []
            self.conns[token] = Connection(token, path, ends[0], ends[1])
            return [(token, {"kind": "conn_created", "path": path})]
        conn = self.conns.get(token)
        if conn is None:
            return []
        if name == "ESTABLISHED":
            if conn.established:
                return []
            conn.established = True
            conn.subflows[0] = Subflow(0, conn.path, conn.local, conn.remote, conn.path in self.backup)
            return [(token, {"kind": "subflow_established", "path": conn.path, "subflow": 0})]
        if name == "CLOSED":
            del self.conns[token]
            if not self.conns:
                self.stale_seen = None  # not polled until the next connection: a new baseline then
            return []
        ends = _endpoints(attrs)
        if ends is None:
            return []
        if name == "SUB_ESTABLISHED":
            if self._find(conn, *ends) is not None:
                return []
            path = self.path_of(ends[0].addr, attrs.get("if_idx"))
            if path is None:
                return []
            sf = Subflow(conn.next_id, path, ends[0], ends[1], bool(attrs.get("backup")))
            conn.next_id += 1
            conn.subflows[sf.id] = sf
            return [(token, {"kind": "subflow_established", "path": path, "subflow": sf.id})]
        if name == "SUB_CLOSED":
            sf = self._find(conn, *ends)
            if sf is None:
                return []
            del conn.subflows[sf.id]
            ours = sf.id in conn.closing
            conn.closing.discard(sf.id)
            return [(token, {"kind": "subflow_closed", "path": sf.path, "subflow": sf.id,
                             "error": bool(attrs.get("error")) and not ours})]
        if name == "SUB_PRIORITY":
            sf = self._find(conn, *ends)
            if sf is not None:
                sf.backup = bool(attrs.get("backup"))
        return []

    @staticmethod
    def _find(conn: Connection, local: Endpoint, remote: Endpoint) -> Subflow | None:
        for sf in conn.subflows.values():
            if _same(sf.local, local) and _same(sf.remote, remote):
                return sf
        return None

    # ------------------------------------------------------------------ transport (polled)

    def polled(self) -> list[tuple[int, int, Endpoint, Endpoint]]:
        """(token, subflow id, local, remote) of every subflow whose tcp_info the daemon reads:
        all of the connections it manages. In a download the client's subflows send only ACKs,
        which have no retransmission timer, so nothing comes of them."""
        return [(c.token, sf.id, sf.local, sf.remote) for c in self.conns.values() for sf in c.subflows.values()]

    def on_transport(self, now_s: float, samples: dict[tuple[int, int], dict | None],
                     stale_total: int | None) -> list[tuple[int, dict, dict]]:
        """One poll: `samples[(token, subflow id)]` the subflow's tcp_info fields
        (transport.sample; None: the socket was not found), `stale_total` the namespace's
        SubflowStale counter. Returns (token, policy event, what it was read from):

        - `subflow_rto`, once per step icsk_backoff rose while the socket is in TCP_CA_Loss (the
          RTO's doubling; a fall is the reset of a valid RTT sample, the new baseline);
        - `subflow_stale`, one per step the counter rose, for the subflow the kernel most likely
          marked: the kernel marks a subflow with data queued that heard no ACK through more than
          net.mptcp.stale_loss_cnt runs of the connection's retransmission timer while another
          subflow of the connection was active (net/mptcp/pm.c, mptcp_pm_subflow_chk_stale ->
          mptcp_pm_subflows_chk_stale), so of the subflows with data in flight or unsent, in a connection of two or more, not
          reported since their last ACK, the one whose last ACK is oldest. The counter is the
          namespace's: exact with one connection losing ACKs at a time; with several, or with MPTCP
          connections the daemon does not manage, a mark can be put on the wrong subflow.
        """
        out: list[tuple[int, dict, dict]] = []
        now_ms = now_s * 1000.0
        known: list[tuple[int, Subflow, dict]] = []
        for (token, sid), s in sorted(samples.items()):
            conn = self.conns.get(token)
            sf = conn.subflows.get(sid) if conn is not None else None
            if sf is None or s is None:
                continue
            known.append((token, sf, s))
            ev = {"kind": "subflow_rto", "path": sf.path, "subflow": sid}
            if s["backoff"] > sf.backoff and s["ca_state"] == TCP_CA_LOSS:
                out += [(token, dict(ev), s) for _ in range(s["backoff"] - sf.backoff)]
            sf.backoff = s["backoff"]
            if sf.stale_ack_ms is not None and now_ms - s["last_ack_recv_ms"] > sf.stale_ack_ms + ACK_SLACK_MS:
                sf.stale_ack_ms = None  # an ACK came: the kernel makes it active again
        if stale_total is None:
            return out
        rise = 0 if self.stale_seen is None else max(0, stale_total - self.stale_seen)
        self.stale_seen = stale_total
        if not rise:
            return out
        candidates = [(token, sf, s) for token, sf, s in known
                      if (s["unacked"] > 0 or s.get("notsent_bytes", 0) > 0) and sf.stale_ack_ms is None
                      and len(self.conns[token].subflows) >= 2]
        candidates.sort(key=lambda c: -c[2]["last_ack_recv_ms"])  # stable: ties in (token, id) order
        for token, sf, s in candidates[:rise]:
            sf.stale_ack_ms = now_ms - s["last_ack_recv_ms"]
            out.append((token, {"kind": "subflow_stale", "path": sf.path, "subflow": sf.id},
                        {**s, "stale_counter": stale_total}))
        self.stale_unattributed += max(0, rise - len(candidates))
        return out

    # ------------------------------------------------------------------ actions

    def baseline(self, token: int) -> list[dict]:
        """What the in-kernel path manager would do once the connection is established, which
        the userspace one leaves to us: one subflow on each other path (an endpoint with the
        `subflow` flag per path, as the emulator sets up; docs/path-manager.md)."""
        conn = self.conns.get(token)
        if conn is None:
            return []
        have = {sf.path for sf in conn.subflows.values()}
        return [{"kind": "create_subflow", "path": p.index} for p in self.paths if p.index not in have]

    def commands(self, token: int, action: dict) -> list[Command]:
        """The commands that carry out one action on the connection; none when it cannot apply
        (a path or subflow the connection does not have)."""
        conn = self.conns.get(token)
        kind, path = action.get("kind"), action.get("path")
        if conn is None or not isinstance(path, int) or not 0 <= path < len(self.paths):
            return []
        p = self.paths[path]
        if kind == "create_subflow":
            flags = netlink.FLAG_BACKUP if path in self.backup else 0
            local = Endpoint(p.addr, 0, p.addr_id, flags, p.ifindex)
            return [Command(token, action, netlink.subflow_create(token, local, Endpoint(conn.remote.addr, conn.remote.port)))]
        if kind == "close_subflow":
            sf = conn.subflows.get(action.get("subflow", -1))
            if sf is None:
                return []
            conn.closing.add(sf.id)
            return [Command(token, action, netlink.subflow_destroy(token, sf.local, sf.remote))]
        if kind in ("set_backup", "clear_backup"):
            backup = kind == "set_backup"
            (self.backup.add if backup else self.backup.discard)(path)
            # One command per subflow: the kernel applies MP_PRIO to the first subflow that
            # matches the addresses and ports given (pm_netlink.c, mptcp_pm_nl_mp_prio_send_ack).
            return [Command(token, action, netlink.set_flags(token, sf.local, sf.remote, backup))
                    for sf in conn.subflows.values() if sf.path == path]
        if kind == "announce":
            return [Command(token, action, netlink.announce(token, Endpoint(p.addr, 0, p.addr_id, 0, p.ifindex)))]
        if kind == "remove":
            # REMOVE (RM_ADDR) of each local id the path's subflows use: id 0 for the initial
            # subflow (pm_userspace.c, mptcp_userspace_pm_remove_id_zero_address), the path's
            # id for the others. The kernel sends the RM_ADDR on a subflow whose id is not
            # removed (pm.c, "avoid sending RM_ADDR over same subflow"), so the peer hears it
            # over a surviving path, closes its subflows to the address and sends their data
            # again at once (docs/path-manager.md). Then the path's subflows here are
            # destroyed: a sender's data on them goes to the others (protocol.c,
            # __mptcp_close_ssk -> __mptcp_retransmit_pending_data), as the simulator does.
            subs = [sf for sf in conn.subflows.values() if sf.path == path]
            ids = sorted({sf.local.id for sf in subs}) or [p.addr_id]
            cmds = [Command(token, action, netlink.remove(token, i)) for i in ids]
            for sf in subs:
                conn.closing.add(sf.id)
                cmds.append(Command(token, action, netlink.subflow_destroy(token, sf.local, sf.remote)))
            return cmds
        return []
