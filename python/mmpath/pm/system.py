"""What the daemon needs of the machine, each refused in one line before anything is changed: root,
the namespace, MPTCP in the kernel, the path manager's sysctl, one daemon per namespace, the
interfaces of the paths. Then the one change it makes (the namespace's path manager) and its undo.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path as FsPath

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError
from pyroute2.netns import setns

from ..errors import MmpathError
from .events import Path

NETNS_DIR = FsPath("/run/netns")  # where `ip netns add` keeps its namespaces (iproute2)
SYSCTL = FsPath("/proc/sys/net/mptcp")
STATE_DIR = FsPath("/run/mmpath-pm")  # root's, like /run/netns


class PmError(MmpathError):
    """Something the daemon cannot run with (printed as one line, exit status 2)."""


def require_root() -> None:
    if os.geteuid() != 0:
        raise PmError("mmpath-pm needs root: it sets net.mptcp.pm_type and joins the mptcp_pm netlink family "
                      "(CAP_NET_ADMIN); run it with sudo")


def enter_netns(name: str | None) -> None:
    """Moves this process into the namespace (every socket it opens after is there)."""
    if name is None:
        return
    if "/" in name or name in (".", "..") or not (NETNS_DIR / name).exists():
        have = sorted(p.name for p in NETNS_DIR.iterdir()) if NETNS_DIR.is_dir() else []
        raise PmError(f"network namespace {name!r} does not exist (`ip netns list`: {', '.join(have) or 'none'})")
    try:
        setns(name, flags=0)
    except OSError as e:
        raise PmError(f"cannot enter network namespace {name!r}: {e.strerror or e}") from None


def read_sysctl(key: str) -> str | None:
    """net.mptcp.KEY of the current namespace (/proc/sys/net is the reader's namespace's)."""
    try:
        return (SYSCTL / key).read_text().strip()
    except OSError:
        return None


def require_mptcp(where: str) -> None:
    enabled = read_sysctl("enabled")
    if enabled is None:
        raise PmError("this kernel has no MPTCP (net.mptcp.enabled is absent): it needs CONFIG_MPTCP, "
                      "Linux >= 5.19 for the userspace path manager")
    if enabled != "1":
        raise PmError(f"MPTCP is disabled in {where} (net.mptcp.enabled = {enabled}); "
                      "enable it with `sysctl -w net.mptcp.enabled=1`")
    if read_sysctl("pm_type") is None and read_sysctl("path_manager") is None:
        raise PmError("this kernel has no userspace MPTCP path manager (neither net.mptcp.pm_type nor "
                      "net.mptcp.path_manager): it needs Linux >= 5.19")


class Lock:
    """One daemon per namespace: a listening abstract Unix socket. Abstract socket names are per
    network namespace (unix(7)), so the name is taken in the namespace the daemon entered, and
    the kernel frees it when the daemon dies, however it dies. A second daemon learns the first
    one's PID from its connection (SO_PEERCRED)."""

    NAME = b"\0mmpath-pm"

    def __init__(self, where: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.bind(self.NAME)
        except OSError:
            self.sock.close()
            raise PmError(f"another mmpath-pm runs on {where}{self._holder()}; stop it first") from None
        self.sock.listen(1)

    @classmethod
    def _holder(cls) -> str:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(1.0)
                s.connect(cls.NAME)
                creds = s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
                return f" (pid {int.from_bytes(creds[:4], 'little')})"
        except OSError:
            return ""

    def close(self) -> None:
        self.sock.close()


class PmSetting:
    """The namespace's path manager: set to userspace, and back to what it was. Kernels >= 6.15
    name it net.mptcp.path_manager ("kernel" / "userspace"), earlier ones (>= 5.19) only
    net.mptcp.pm_type (0 / 1); on kernels with both they are two views of one setting
    (Documentation/networking/mptcp-sysctl.rst), so the one written is the one restored.

    A daemon killed outright (SIGKILL, the OOM killer) cannot restore it, so the value it found
    is written first to `state` (STATE_DIR/<namespace>.json, removed on restore); the next
    daemon on the namespace (it holds the lock, so the other one is gone) restores from it before
    it reads the setting (`recovered`: the value put back)."""

    def __init__(self, state: FsPath | None = None) -> None:
        if read_sysctl("path_manager") is not None:
            self.key, self.userspace = "path_manager", "userspace"
        else:
            self.key, self.userspace = "pm_type", "1"
        self.state = state
        self.recovered: str | None = None
        if state is not None and state.exists():
            try:
                left = json.loads(state.read_text())
                key, was = left["sysctl"], left["was"]
            except (OSError, ValueError, KeyError, TypeError):
                key = was = None
            if key in ("path_manager", "pm_type") and isinstance(was, str) and read_sysctl(key) is not None:
                self.key = key
                self._write(was)
                self.recovered = was
            state.unlink(missing_ok=True)
        self.old = read_sysctl(self.key) or ""
        self.changed = False

    def set_userspace(self) -> None:
        if self.old == self.userspace:
            return
        if self.state is not None:
            self.state.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.state.write_text(json.dumps({"sysctl": self.key, "was": self.old, "pid": os.getpid()}) + "\n")
        self._write(self.userspace)
        self.changed = True

    def restore(self) -> None:
        if self.changed:
            self._write(self.old)
            self.changed = False
            if self.state is not None:
                self.state.unlink(missing_ok=True)
                try:
                    self.state.parent.rmdir()  # the last daemon's leaves nothing behind
                except OSError:
                    pass  # another namespace's daemon still runs

    def _write(self, value: str) -> None:
        try:
            (SYSCTL / self.key).write_text(value + "\n")
        except OSError as e:
            raise PmError(f"could not set net.mptcp.{self.key} = {value}: {e.strerror or e}") from None


def state_file(netns: str | None) -> FsPath:
    """Where a daemon on this namespace keeps the path-manager value it found (PmSetting)."""
    return STATE_DIR / f"{netns or '.host'}.json"


def resolve_paths(names: list[str], where: str) -> list[Path]:
    """The paths' interfaces, in order, with each one's first address (IPv4 first)."""
    out: list[Path] = []
    with IPRoute() as ipr:
        have = {link.get_attr("IFLA_IFNAME"): link["index"] for link in ipr.get_links()}
        for k, name in enumerate(names):
            if name not in have:
                raise PmError(f"--paths: no interface {name!r} in {where} (it has: {', '.join(sorted(have))})")
            addrs = [a for a in ipr.get_addr(index=have[name]) if a["scope"] == 0]
            addrs.sort(key=lambda a: a["family"] != socket.AF_INET)
            if not addrs:
                raise PmError(f"--paths: interface {name!r} has no global address in {where}")
            out.append(Path(k, name, have[name], addrs[0].get_attr("IFA_ADDRESS")))
    return out


def link_states(paths: list[Path]) -> list[tuple[int, bool]]:
    """Each path's interface: (ifindex, up), up meaning administratively up with carrier
    (IFF_UP and IFF_LOWER_UP, include/uapi/linux/if.h), as the daemon's link events report it."""
    out = []
    with IPRoute() as ipr:
        for p in paths:
            links = ipr.get_links(p.ifindex)
            flags = links[0]["flags"] if links else 0
            out.append((p.ifindex, bool(flags & 0x1) and bool(flags & 0x10000)))
    return out


# include/uapi/linux/neighbour.h: a resolution under way (no answer yet), or given up.
NUD_INCOMPLETE = 0x01
NUD_FAILED = 0x20


def reset_neighbours(ifindex: int) -> list[str]:
    """Deletes the interface's neighbour entries that are resolving or failed, and returns their
    addresses. While the carrier was down, a packet toward the gateway started an ARP / ND
    resolution whose requests went nowhere; at the return the entry is still INCOMPLETE and its
    next request waits for the entry's retransmit timer (retrans_time_ms, 1000 ms by default:
    Documentation/networking/ip-sysctl.rst; net/core/neighbour.c, neigh_timer_handler), so a new
    subflow's SYN waits in its queue for up to a second. A fresh entry solicits at once
    (neighbour.c, __neigh_event_send)."""
    gone = []
    with IPRoute() as ipr:
        for n in ipr.get_neighbours(ifindex=ifindex):
            if n["state"] & (NUD_INCOMPLETE | NUD_FAILED):
                dst = n.get_attr("NDA_DST")
                try:
                    ipr.neigh("del", dst=dst, ifindex=ifindex)
                    gone.append(dst)
                except NetlinkError:
                    pass  # gone meanwhile
    return gone
