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


class Translator:
    def __init__(self, paths: list[Path], backup_paths: set[int] | frozenset[int] = frozenset()) -> None:
        self.paths = list(paths)
        self.backup = set(backup_paths)  # paths whose subflows carry the backup flag now
        self.conns: dict[int, Connection] = {}
        self.link_up: dict[int, bool] = {}
        self.quality: dict[int, tuple[float | None, int | None]] = {}

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
