"""The emulated network, the scenario's topology (docs/scenario.md): a server namespace behind a
backbone veth to an AP namespace (a router), and one veth pair per scenario path between the AP
and the client (the radio links), each with its own subnet: path k is 10.199.(k+1).0/24, the AP
.1 and the client .2; the backbone is 10.198.0.0/24 (server .1, AP .2). Data crosses the AP,
so a link that is down drops the server's packets at the AP, as a blocked 60 GHz link does, not in
the sender's own queue (where Linux TCP would see the drop locally). The client routes by source
address (one routing table per path), so a socket bound to a path's address, or an MPTCP subflow
from it, leaves over that path.

With the scenario's backbone disabled (`backbone.enabled = false`) the simulator puts the server
AT the AP: the path's queue is the server's own, and TCP Small Queues charge each frame to its
socket until it has left. A router in between would hide that queue (the AP drops a forwarded
packet's socket reference when it receives it: net/ipv4/ip_input.c, ip_rcv_core, skb_orphan), so
then the server runs in the AP's namespace (`Topology.colocated`): no server namespace and no
backbone veth, the server's address (SERVER_ADDR, on the AP's loopback so that it belongs to no
one path) reached over every path, and each path's shaped interface is the server's own egress.

For MPTCP the kernel's in-kernel path manager opens the subflows: every path of the flow's `paths`
but the first (which carries the initial subflow) is a client endpoint with the `subflow` flag
(`backup` too for the flow's `backup_paths`), and the limits allow one subflow per path. Everything is torn down on exit, whatever happened.
"""

from __future__ import annotations

import json
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import EmuError
from . import reaper


def read_proc(path: str) -> str | None:
    """A /proc (or /sys) file's text, stripped; None when it cannot be read."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 5.0) -> tuple[Any, Any]:
    """Asks a process the run started to end (`sig`, unless it has exited), waits up to `timeout`
    seconds for it, kills it if it is still there, and returns its (stdout, stderr)."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def sh(*args: str, ns: str | None = None, check: bool = True, timeout: float = 20.0) -> str:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    try:
        p = reaper.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise EmuError(f"`{' '.join(cmd)}` did not finish in {timeout:g} s") from None
    if check and p.returncode != 0:
        msg = " ".join((p.stderr or p.stdout).split())
        raise EmuError(f"`{' '.join(cmd)}` failed: {msg}")
    return p.stdout


def set_sysctl(ns: str, key: str, value: str) -> None:
    """Sets a sysctl in a namespace and reads it back: `sysctl -q` exits 0 even when the kernel
    refuses a write (e.g. a key that only the initial namespace may change)."""
    sh("sysctl", "-w", f"{key}={value}", ns=ns, check=False)
    got = " ".join(sh("sysctl", "-n", key, ns=ns, check=False).split())
    if got != " ".join(value.split()):
        raise EmuError(f"could not set {key} = {value} in namespace {ns} (it reads {got or 'nothing'})")


SERVER_ADDR = "10.198.0.1"
UNREACHABLE_METRIC = "4294967295"
AP_BACKBONE_ADDR = "10.198.0.2"


@dataclass
class PathLink:
    index: int
    name: str
    mtu: int
    cli_if: str
    ap_if: str
    cli_addr: str
    ap_addr: str


@dataclass
class Topology:
    tag: str
    paths: list[PathLink] = field(default_factory=list)
    backbone_mtu: int | None = None  # None: the backbone never binds (no link of its own)
    # The server in the AP's namespace (the scenario's backbone disabled): see the module's doc.
    colocated: bool = False
    # Per namespace, the attributes tcpconf.apply added to its `routes` (initcwnd, rto_min,
    # quickack): what a path's routes get back when its link returns from a drop (drops.py).
    route_attrs: dict[str, list[str]] = field(default_factory=dict)

    @property
    def srv(self) -> str:
        """The server's namespace: its own, or the AP's when colocated."""
        return f"{self.tag}-ap" if self.colocated else f"{self.tag}-srv"

    @property
    def cli(self) -> str:
        return f"{self.tag}-cli"

    @property
    def ap(self) -> str:
        return f"{self.tag}-ap"

    @property
    def srv_addr(self) -> str:
        return SERVER_ADDR

    @property
    def namespaces(self) -> list[str]:
        """The namespaces the run builds, client first (the order teardown removes them in)."""
        return [self.cli, self.ap] + ([] if self.colocated else [self.srv])

    @property
    def layout(self) -> str:
        """The topology, as emu.json records it."""
        return "server in the AP's namespace (no backbone)" if self.colocated else \
            "server behind the AP (backbone veth)"

    def path(self, name: str) -> PathLink:
        return next(p for p in self.paths if p.name == name)


def _veth(a_ns: str, a_if: str, a_addr: str, b_ns: str, b_if: str, b_addr: str, mtu: int) -> None:
    sh("ip", "link", "add", a_if, "netns", a_ns, "type", "veth", "peer", "name", b_if, "netns", b_ns)
    for ns, ifname, addr in ((a_ns, a_if, a_addr), (b_ns, b_if, b_addr)):
        sh("ip", "-n", ns, "link", "set", ifname, "mtu", str(mtu))
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", ifname)
        sh("ip", "-n", ns, "link", "set", ifname, "up")
        # Segmentation offloads stay on (veth passes TSO/GSO super-packets of up to 64 KiB): per
        # packet work at 2 Gbit/s through a forwarding namespace would otherwise make the CPU,
        # not the shaper, the bottleneck on a small machine. The shaper counts bytes (bfifo).


def build(path_names: list[str], mtus: list[int], mptcp: bool, backup: set[str],
          mptcp_paths: list[str] | None = None, backbone_mtu: int | None = None,
          colocated: bool = False) -> Topology:
    """`mptcp_paths`: the MPTCP flow's `paths`, in order (default: every path); its first path
    carries the initial subflow, each other one gets a client endpoint. `backbone_mtu`: the
    backbone's MTU when it is a link of its own (else the largest path MTU, so it never binds).
    `colocated`: the server in the AP's namespace (the scenario's backbone disabled)."""
    topo = Topology(tag=reaper.tag(), backbone_mtu=backbone_mtu, colocated=colocated)
    mptcp_paths = list(path_names) if mptcp_paths is None else list(mptcp_paths)
    try:
        for ns in reversed(topo.namespaces):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        if colocated:
            # The server's address, on the AP's loopback: every path reaches it (each client
            # table's default route is via the path's AP address) and no one path owns it.
            sh("ip", "-n", topo.ap, "addr", "add", f"{SERVER_ADDR}/32", "dev", "lo")
        else:
            set_sysctl(topo.ap, "net.ipv4.ip_forward", "1")
            _veth(topo.srv, "bb0", SERVER_ADDR, topo.ap, "bb1", AP_BACKBONE_ADDR, backbone_mtu or max(mtus))
            sh("ip", "-n", topo.srv, "route", "add", "10.199.0.0/16", "via", AP_BACKBONE_ADDR)
        for k, (name, mtu) in enumerate(zip(path_names, mtus)):
            link = PathLink(index=k, name=name, mtu=mtu, cli_if=f"p{k}c", ap_if=f"p{k}a",
                            cli_addr=f"10.199.{k + 1}.2", ap_addr=f"10.199.{k + 1}.1")
            _veth(topo.ap, link.ap_if, link.ap_addr, topo.cli, link.cli_if, link.cli_addr, mtu)
            if colocated:
                # The server's packets leave from its own address: a socket bound to no address
                # (iperf3's UDP server) would otherwise take the path's AP address from the
                # connected route, and the client's socket, connected to SERVER_ADDR, would not
                # know them (measured: a UDP download delivered nothing, the client's Udp
                # NoPorts counted them).
                sh("ip", "-n", topo.ap, "route", "replace", *_server_route(link))
            # The AP knows its station's MAC address, as an AP knows the stations associated
            # with it: a permanent neighbour entry, which the kernel keeps when the link loses its
            # carrier (a `drop` outage, drops.py). Learnt by ARP instead, it is flushed then, and
            # what the AP forwards during the outage waits in the neighbour's queue for ARP to
            # resolve (up to 3 probes, 1 s apart): the last retransmissions sent into the outage
            # arrived when the link was back (measured: a TLP and two RTOs sent 0.15-0.9 s into a
            # 1 s drop delivered together after it), where they are lost on a link that is down.
            mac = json.loads(sh("ip", "-j", "-n", topo.cli, "link", "show", "dev", link.cli_if))[0]["address"]
            sh("ip", "-n", topo.ap, "neigh", "replace", link.cli_addr, "lladdr", mac, "dev", link.ap_if, "nud",
               "permanent")
            table = str(100 + k)
            sh("ip", "-n", topo.cli, "rule", "add", "from", link.cli_addr, "table", table)
            sh("ip", "-n", topo.cli, "route", "add", "default", "via", link.ap_addr, "dev", link.cli_if,
               "table", table)
            # While the path's interface is down (a `drop` outage, drops.py) the kernel removes
            # the route above; the path's packets are then refused here ("sends on that path
            # fail", EHOSTUNREACH) instead of falling through to the main table and leaving by
            # path 0's default route. Never chosen while the route above exists (lowest metric).
            sh("ip", "-n", topo.cli, "route", "add", "unreachable", "default", "metric", UNREACHABLE_METRIC,
               "table", table)
            if k == 0:
                sh("ip", "-n", topo.cli, "route", "add", "default", "via", link.ap_addr, "dev", link.cli_if)
            topo.paths.append(link)
        if mptcp:
            for ns in (topo.srv, topo.cli):
                set_sysctl(ns, "net.mptcp.enabled", "1")
                n = str(max(len(path_names), 1))
                sh("ip", "-n", ns, "mptcp", "limits", "set", "subflow", n, "add_addr_accepted", n)
            for link in (topo.path(n) for n in mptcp_paths[1:]):
                flags = ["subflow"] + (["backup"] if link.name in backup else [])
                sh("ip", "-n", topo.cli, "mptcp", "endpoint", "add", link.cli_addr, "dev", link.cli_if, *flags)
    except BaseException:
        teardown(topo)
        raise
    return topo


def packet_hooks(topo: Topology, index: int) -> list[tuple[str, str, list[list[str]]]]:
    """Where path `index`'s packets, both ways, pass a netfilter hook after its sender's queue and
    without their socket (the delay line's queues, delay.py; random loss, loss.py): (namespace,
    its short name, the iptables chain and matches of each rule). Behind the AP: its FORWARD
    chain, either way. With the server in the AP's namespace nothing is forwarded: each
    direction where it arrives, the client's INPUT for the AP's packets and the AP's INPUT for
    the client's. Not the server's OUTPUT: there a packet still holds its socket's reference
    (TCP Small Queues would count a packet held there as queued at the sender) and a drop is an
    error of the server's own send; the receiver's IP layer drops the reference on arrival
    (net/ipv4/ip_input.c, ip_rcv_core, skb_orphan), before its hooks."""
    link = topo.paths[index]
    if topo.colocated:
        return [(topo.cli, "cli", [["INPUT", "-i", link.cli_if]]), (topo.ap, "ap", [["INPUT", "-i", link.ap_if]])]
    return [(topo.ap, "ap", [["FORWARD", "-i", i, "-o", o] for i, o in (("bb1", link.ap_if), (link.ap_if, "bb1"))])]


def _server_route(link: PathLink) -> list[str]:
    """The colocated server's route to the client over `link` (its connected subnet)."""
    return [f"10.199.{link.index + 1}.0/24", "dev", link.ap_if, "proto", "kernel", "scope", "link", "src",
            SERVER_ADDR]


def routes(topo: Topology) -> dict[str, list[list[str]]]:
    """The routes build() added toward the far end, per namespace, as `ip route` arguments: where
    per-route TCP settings (initcwnd, rto_min, quickack) go."""
    cli = []
    for link in topo.paths:
        cli.append(["default", "via", link.ap_addr, "dev", link.cli_if, "table", str(100 + link.index)])
    if topo.paths:
        cli.append(["default", "via", topo.paths[0].ap_addr, "dev", topo.paths[0].cli_if])
    if topo.colocated:
        # The server reaches the client by each path's own subnet (build(): its connected route,
        # from the server's address).
        srv = [_server_route(lk) for lk in topo.paths]
    else:
        srv = [["10.199.0.0/16", "via", AP_BACKBONE_ADDR]]
    return {topo.srv: srv, topo.cli: cli}


def teardown(topo: Topology) -> None:
    for ns in topo.namespaces:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def tx_bytes(ns: str, ifname: str) -> int:
    try:
        return int(sh("cat", f"/sys/class/net/{ifname}/statistics/tx_bytes", ns=ns).strip())
    except (EmuError, ValueError):
        return 0


def mptcp_counters(ns: str) -> dict[str, int]:
    """The namespace's non-zero MPTCP MIB counters (MPTcpExt* of /proc/net/netstat: joins,
    reinjections, stale subflows, retransmissions...), for emu.json."""
    try:
        text = sh("cat", "/proc/net/netstat", ns=ns)
    except EmuError:
        return {}
    lines = text.splitlines()
    out: dict[str, int] = {}
    for head, vals in zip(lines[::2], lines[1::2]):
        names, nums = head.split(), vals.split()
        if names and names[0] == "MPTcpExt:":
            for n, v in zip(names[1:], nums[1:]):
                if v.isdigit() and int(v):
                    out[n] = int(v)
    return out


def udp_rcvbuf_errors(ns: str) -> int:
    """Datagrams the namespace's UDP sockets dropped for a full receive buffer (Udp: RcvbufErrors
    of /proc/net/snmp): the receiving host's limit, not the emulated link's."""
    try:
        text = sh("cat", "/proc/net/snmp", ns=ns)
    except EmuError:
        return 0
    rows = [ln.split() for ln in text.splitlines() if ln.startswith("Udp:")]
    if len(rows) < 2 or "RcvbufErrors" not in rows[0]:
        return 0
    try:
        return int(rows[1][rows[0].index("RcvbufErrors")])
    except (IndexError, ValueError):
        return 0
