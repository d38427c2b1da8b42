"""The kernel's `mptcp_pm` generic netlink family, as pyroute2 message classes: the userspace path
manager's commands (ANNOUNCE, REMOVE, SUBFLOW_CREATE, SUBFLOW_DESTROY, SET_FLAGS) and the events
of the `mptcp_pm_events` multicast group.

Numbers and attribute types are the kernel's uapi: Documentation/netlink/specs/mptcp_pm.yaml
(generated into include/uapi/linux/mptcp_pm.h); what each command needs is net/mptcp/
pm_userspace.c (mptcp_pm_nl_*_doit). pyroute2's own `mptcp_msg` (pyroute2.netlink.generic.mptcp)
covers the in-kernel endpoint commands only, with the port as host-order u16 and no token, so the
messages here are our own, in its nla framework (no bytes packed by hand).

Addresses are {"family", "addr", "port", "id", "flags", "ifindex"} dicts (Endpoint) on our side.
"""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass

from pyroute2.netlink import NETLINK_GENERIC, NLM_F_ACK, NLM_F_REQUEST, genlmsg, nla
from pyroute2.netlink.generic import GenericNetlinkSocket

FAMILY_NAME = "mptcp_pm"
EVENTS_GROUP = "mptcp_pm_events"

# mptcp_pm.yaml "operations" (in order from 0).
CMD_SET_FLAGS = 7
CMD_ANNOUNCE = 8
CMD_REMOVE = 9
CMD_SUBFLOW_CREATE = 10
CMD_SUBFLOW_DESTROY = 11
COMMAND_NAMES = {CMD_SET_FLAGS: "SET_FLAGS", CMD_ANNOUNCE: "ANNOUNCE", CMD_REMOVE: "REMOVE",
                 CMD_SUBFLOW_CREATE: "SUBFLOW_CREATE", CMD_SUBFLOW_DESTROY: "SUBFLOW_DESTROY"}
# The family's version (MPTCP_PM_VER in the generated uapi header).
VERSION = 1

# mptcp_pm.yaml "event-type": the event is the message's cmd.
EVENTS = {1: "CREATED", 2: "ESTABLISHED", 3: "CLOSED", 6: "ANNOUNCED", 7: "REMOVED",
          10: "SUB_ESTABLISHED", 11: "SUB_CLOSED", 13: "SUB_PRIORITY",
          15: "LISTENER_CREATED", 16: "LISTENER_CLOSED"}
EVENT_NUMBERS = {v: k for k, v in EVENTS.items()}

NLA_F_NESTED = 1 << 15

# MPTCP_PM_ADDR_FLAG_* (include/uapi/linux/mptcp.h).
FLAG_SIGNAL = 1 << 0
FLAG_SUBFLOW = 1 << 1
FLAG_BACKUP = 1 << 2


class _address(nla):
    """mptcp_pm.yaml attribute set "address" (MPTCP_PM_ADDR_ATTR_*)."""

    prefix = "MPTCP_PM_ADDR_ATTR_"
    nla_map = (
        ("MPTCP_PM_ADDR_ATTR_UNSPEC", "none"),
        ("MPTCP_PM_ADDR_ATTR_FAMILY", "uint16"),
        ("MPTCP_PM_ADDR_ATTR_ID", "uint8"),
        ("MPTCP_PM_ADDR_ATTR_ADDR4", "ip4addr"),  # u32, big-endian
        ("MPTCP_PM_ADDR_ATTR_ADDR6", "ip6addr"),
        # Host byte order, unlike the events' ports: pm_netlink.c reads it with
        # htons(nla_get_u16(...)) (the spec said big-endian until the kernel commit "netlink:
        # specs: mptcp: fix port endianness" corrected it).
        ("MPTCP_PM_ADDR_ATTR_PORT", "uint16"),
        ("MPTCP_PM_ADDR_ATTR_FLAGS", "uint32"),
        ("MPTCP_PM_ADDR_ATTR_IF_IDX", "int32"),
    )


class pm_command(genlmsg):
    """A command of the family (attribute set "attr", MPTCP_PM_ATTR_*)."""

    prefix = "MPTCP_PM_ATTR_"
    nla_map = (
        ("MPTCP_PM_ATTR_UNSPEC", "none"),
        ("MPTCP_PM_ATTR_ADDR", "address"),
        ("MPTCP_PM_ATTR_RCV_ADD_ADDRS", "uint32"),
        ("MPTCP_PM_ATTR_SUBFLOWS", "uint32"),
        ("MPTCP_PM_ATTR_TOKEN", "uint32"),
        ("MPTCP_PM_ATTR_LOC_ID", "uint8"),
        ("MPTCP_PM_ATTR_ADDR_REMOTE", "address"),
    )

    class address(_address):
        pass


class pm_event(genlmsg):
    """An event of the `mptcp_pm_events` group (attribute set "event-attr", MPTCP_ATTR_*)."""

    prefix = "MPTCP_ATTR_"
    nla_map = (
        ("MPTCP_ATTR_UNSPEC", "none"),
        ("MPTCP_ATTR_TOKEN", "uint32"),
        ("MPTCP_ATTR_FAMILY", "uint16"),
        ("MPTCP_ATTR_LOC_ID", "uint8"),
        ("MPTCP_ATTR_REM_ID", "uint8"),
        ("MPTCP_ATTR_SADDR4", "ip4addr"),
        ("MPTCP_ATTR_SADDR6", "ip6addr"),
        ("MPTCP_ATTR_DADDR4", "ip4addr"),
        ("MPTCP_ATTR_DADDR6", "ip6addr"),
        ("MPTCP_ATTR_SPORT", "be16"),
        ("MPTCP_ATTR_DPORT", "be16"),
        ("MPTCP_ATTR_BACKUP", "uint8"),
        ("MPTCP_ATTR_ERROR", "uint8"),
        ("MPTCP_ATTR_FLAGS", "uint16"),
        ("MPTCP_ATTR_TIMEOUT", "uint32"),
        ("MPTCP_ATTR_IF_IDX", "int32"),
        ("MPTCP_ATTR_RESET_REASON", "uint32"),
        ("MPTCP_ATTR_RESET_FLAGS", "uint32"),
        ("MPTCP_ATTR_SERVER_SIDE", "uint8"),
    )


@dataclass(frozen=True)
class Endpoint:
    """One end of a subflow, or an address to announce: what the kernel calls an mptcp_addr_info
    plus, for a local address, its id, flags and interface."""

    addr: str
    port: int = 0
    id: int = 0
    flags: int = 0
    ifindex: int = 0

    @property
    def family(self) -> int:
        return socket.AF_INET6 if ":" in self.addr else socket.AF_INET

    def attrs(self) -> dict:
        a: list = [("MPTCP_PM_ADDR_ATTR_FAMILY", self.family),
                   ("MPTCP_PM_ADDR_ATTR_ADDR6" if self.family == socket.AF_INET6 else "MPTCP_PM_ADDR_ATTR_ADDR4",
                    self.addr)]
        if self.port:
            a.append(("MPTCP_PM_ADDR_ATTR_PORT", self.port))
        if self.id:
            a.append(("MPTCP_PM_ADDR_ATTR_ID", self.id))
        if self.flags:
            a.append(("MPTCP_PM_ADDR_ATTR_FLAGS", self.flags))
        if self.ifindex:
            a.append(("MPTCP_PM_ADDR_ATTR_IF_IDX", self.ifindex))
        return {"attrs": a}


def _command(cmd: int, token: int, local: Endpoint | None = None, remote: Endpoint | None = None,
             loc_id: int | None = None) -> pm_command:
    msg = pm_command()
    msg["cmd"] = cmd
    msg["version"] = VERSION
    msg["attrs"] = [("MPTCP_PM_ATTR_TOKEN", token)]
    # NLA_F_NESTED (include/uapi/linux/netlink.h) on the nested addresses, as iproute2 sends them.
    if local is not None:
        msg["attrs"].append(("MPTCP_PM_ATTR_ADDR", local.attrs(), NLA_F_NESTED))
    if remote is not None:
        msg["attrs"].append(("MPTCP_PM_ATTR_ADDR_REMOTE", remote.attrs(), NLA_F_NESTED))
    if loc_id is not None:
        msg["attrs"].append(("MPTCP_PM_ATTR_LOC_ID", loc_id))
    return msg


def subflow_create(token: int, local: Endpoint, remote: Endpoint) -> pm_command:
    """A new subflow (MP_JOIN) from `local` (its id must be free in the connection or name the
    same address: pm_userspace.c, mptcp_userspace_pm_append_new_local_addr; FLAG_BACKUP makes
    the join a backup one) to `remote` (address and port)."""
    return _command(CMD_SUBFLOW_CREATE, token, local, remote)


def subflow_destroy(token: int, local: Endpoint, remote: Endpoint) -> pm_command:
    """Closes the subflow with exactly these four (address, port): both ports are required."""
    return _command(CMD_SUBFLOW_DESTROY, token, Endpoint(local.addr, local.port), Endpoint(remote.addr, remote.port))


def set_flags(token: int, local: Endpoint, remote: Endpoint, backup: bool) -> pm_command:
    """MP_PRIO on the connection's subflows from `local` to `remote` (a port given must match)."""
    loc = Endpoint(local.addr, local.port, local.id, FLAG_BACKUP if backup else 0)
    return _command(CMD_SET_FLAGS, token, loc, Endpoint(remote.addr, remote.port))


def announce(token: int, local: Endpoint) -> pm_command:
    """ADD_ADDR of `local`; its id must not be 0 (pm_userspace.c, mptcp_pm_nl_announce_doit)."""
    return _command(CMD_ANNOUNCE, token, Endpoint(local.addr, local.port, local.id, FLAG_SIGNAL, local.ifindex))


def remove(token: int, loc_id: int) -> pm_command:
    """REMOVE_ADDR of the local address with this id."""
    return _command(CMD_REMOVE, token, loc_id=loc_id)


def decode_event(data: bytes) -> list[tuple[str, dict]]:
    """The events in one datagram of the group: (name, {attribute: value}) with the attribute
    names lower-cased without their prefix (token, saddr4, sport, error, ...). Unknown event
    numbers are named EVENT_<n>."""
    out = []
    offset = 0
    while offset + 16 <= len(data):
        msg = pm_event(data[offset:])
        msg.decode()
        length = msg["header"]["length"]
        if length < 16:
            break
        name = EVENTS.get(msg["cmd"], f"EVENT_{msg['cmd']}")
        attrs = {k[len("MPTCP_ATTR_"):].lower(): v for k, v in msg["attrs"] if k.startswith("MPTCP_ATTR_")}
        attrs.pop("unspec", None)
        out.append((name, attrs))
        offset += (length + 3) & ~3
    return out


def encode_event(name: str, attrs: dict) -> bytes:
    """The bytes the kernel would multicast for an event (for tests and the dry run's replays)."""
    msg = pm_event()
    msg["cmd"] = EVENT_NUMBERS[name]
    msg["version"] = VERSION
    msg["attrs"] = [("MPTCP_ATTR_" + k.upper(), v) for k, v in attrs.items()]
    msg.encode()
    return bytes(msg.data)


def describe(msg: pm_command) -> dict:
    """A command as the log writes it: its name and attributes."""
    out: dict = {"command": COMMAND_NAMES.get(msg["cmd"], str(msg["cmd"]))}
    for attr in msg["attrs"]:  # (name, value) or, before encoding, (name, value, nla flags)
        key, v = attr[0][len("MPTCP_PM_ATTR_"):].lower(), attr[1]
        if isinstance(v, dict):
            v = {a[0][len("MPTCP_PM_ADDR_ATTR_"):].lower(): int(a[1]) if isinstance(a[1], int) else a[1]
                 for a in v["attrs"]}
        out[key] = v
    return out


class Commands:
    """A socket for the family's commands (one per daemon, in its namespace)."""

    def __init__(self) -> None:
        self.sock = GenericNetlinkSocket()
        self.sock.bind(FAMILY_NAME, pm_command)

    def send(self, msg: pm_command) -> None:
        """Sends and waits for the kernel's answer; a refusal raises pyroute2's NetlinkError
        (its code is the errno: EINVAL, ESRCH for a subflow not found, ...)."""
        tuple(self.sock.nlm_request(msg, msg_type=self.sock.prid, msg_flags=NLM_F_REQUEST | NLM_F_ACK))

    def close(self) -> None:
        self.sock.close()


class Events:
    """The `mptcp_pm_events` group: a plain netlink socket joined to the group's id (which the
    family's discovery gives), read with recv() from the daemon's select loop and decoded with
    pm_event."""

    def __init__(self) -> None:
        disc = GenericNetlinkSocket()
        try:
            disc.bind(FAMILY_NAME, pm_event)
            group = disc.mcast_groups[EVENTS_GROUP]
        finally:
            disc.close()
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.bind((0, 0))
        # SOL_NETLINK (270), NETLINK_ADD_MEMBERSHIP (1): include/uapi/linux/netlink.h.
        self.sock.setsockopt(270, 1, group)

    def fileno(self) -> int:
        return self.sock.fileno()

    def read(self) -> list[tuple[str, dict]]:
        """The events of one datagram; [("OVERRUN", {})] when the kernel dropped events because
        this socket's buffer was full (ENOBUFS, netlink(7)): the daemon logs it and goes on."""
        try:
            return decode_event(self.sock.recv(1 << 16))
        except OSError as e:
            if e.errno == errno.ENOBUFS:
                return [("OVERRUN", {})]
            raise

    def close(self) -> None:
        self.sock.close()
