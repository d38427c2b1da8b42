"""The emulated network: two network namespaces, a server and a client, joined by one veth pair per
scenario path (the radio links), each with its own subnet: path k is 10.199.(k+1).0/24, the server
.1 and the client .2. The client routes by source address (one routing table per path), so a
socket bound to a path's address, or an MPTCP subflow from it, leaves over that path.

For MPTCP the kernel's in-kernel path manager opens the subflows: every path but the first is a
client endpoint with the `subflow` flag (`backup` too for backup-mode paths), and the limits allow
one subflow per path. Everything is torn down on exit, whatever happened.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field

from .checks import EmuError


def sh(*args: str, ns: str | None = None, check: bool = True, timeout: float = 20.0) -> str:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise EmuError(f"`{' '.join(cmd)}` did not finish in {timeout:g} s") from None
    if check and p.returncode != 0:
        msg = " ".join((p.stderr or p.stdout).split())
        raise EmuError(f"`{' '.join(cmd)}` failed: {msg}")
    return p.stdout


@dataclass
class PathLink:
    index: int
    name: str
    mtu: int
    cli_if: str
    srv_if: str
    cli_addr: str
    srv_addr: str


@dataclass
class Topology:
    tag: str
    paths: list[PathLink] = field(default_factory=list)

    @property
    def srv(self) -> str:
        return f"{self.tag}-srv"

    @property
    def cli(self) -> str:
        return f"{self.tag}-cli"

    def path(self, name: str) -> PathLink:
        return next(p for p in self.paths if p.name == name)


def build(path_names: list[str], mtus: list[int], mptcp: bool, backup: set[str]) -> Topology:
    topo = Topology(tag=f"mmpath{os.getpid()}")
    try:
        for ns in (topo.srv, topo.cli):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        for k, (name, mtu) in enumerate(zip(path_names, mtus)):
            link = PathLink(index=k, name=name, mtu=mtu, cli_if=f"p{k}c", srv_if=f"p{k}s",
                            cli_addr=f"10.199.{k + 1}.2", srv_addr=f"10.199.{k + 1}.1")
            sh("ip", "link", "add", link.cli_if, "netns", topo.cli, "type", "veth",
               "peer", "name", link.srv_if, "netns", topo.srv)
            for ns, ifname, addr in ((topo.cli, link.cli_if, link.cli_addr), (topo.srv, link.srv_if, link.srv_addr)):
                sh("ip", "-n", ns, "link", "set", ifname, "mtu", str(mtu))
                sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", ifname)
                sh("ip", "-n", ns, "link", "set", ifname, "up")
                # No segmentation offloads: the shaper and the captures see wire-sized packets.
                sh("ethtool", "-K", ifname, "tso", "off", "gso", "off", "gro", "off", ns=ns, check=False)
            table = str(100 + k)
            sh("ip", "-n", topo.cli, "rule", "add", "from", link.cli_addr, "table", table)
            sh("ip", "-n", topo.cli, "route", "add", "default", "via", link.srv_addr, "dev", link.cli_if,
               "table", table)
            topo.paths.append(link)
        if mptcp:
            for ns in (topo.srv, topo.cli):
                sh("sysctl", "-qw", "net.mptcp.enabled=1", ns=ns)
                n = str(max(len(path_names), 1))
                sh("ip", "-n", ns, "mptcp", "limits", "set", "subflow", n, "add_addr_accepted", n)
            for link in topo.paths[1:]:
                flags = ["subflow"] + (["backup"] if link.name in backup else [])
                sh("ip", "-n", topo.cli, "mptcp", "endpoint", "add", link.cli_addr, "dev", link.cli_if, *flags)
    except BaseException:
        teardown(topo)
        raise
    return topo


def teardown(topo: Topology) -> None:
    for ns in (topo.cli, topo.srv):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def tx_bytes(ns: str, ifname: str) -> int:
    try:
        return int(sh("cat", f"/sys/class/net/{ifname}/statistics/tx_bytes", ns=ns).strip())
    except (EmuError, ValueError):
        return 0
