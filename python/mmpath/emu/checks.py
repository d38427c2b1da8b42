"""What `mmpath emu run` needs from the machine and from the scenario, checked before anything is
set up, each failure one line naming what is missing or unsupported and what is allowed.

The machine: root (network namespaces, tc), iproute2 (`ip`, `tc`), iperf3, tcpdump, and for MPTCP
flows the kernel's MPTCP (net.mptcp) and `mptcpize` (mptcpd), which makes iperf3's sockets MPTCP.

The scenario: up to 8 flows (TCP, MPTCP or UDP; bulk or rate; either direction), up to 4 paths, with one
[flow.tcp] and one MPTCP path set for all (namespace-wide in the kernel). MPTCP runs the kernel's own
scheduler and path manager, i.e. `kernel = "linux-upstream"` with `scheduler = "default"`; the
schedulers mmpath models from papers (minRTT, MuSher, AMuSe...) exist only in the simulator.
Congestion control: what the kernel offers (net.ipv4.tcp_available_congestion_control).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from .errors import EmuError
from .netns import read_proc
from .tcpconf import check as check_tcp

MAX_PATHS = 4
# iperf3 pairs at once; more would make the machine's CPU, not the shaper, the bottleneck.
MAX_FLOWS = 8


def machine(need_mptcp: bool, need_delay: bool = False, need_cut: bool = False) -> None:
    if os.geteuid() != 0:
        raise EmuError("emulation needs root (network namespaces and tc): run as root, e.g. with sudo")
    tools = ["ip", "tc", "iperf3", "tcpdump"] + (["mptcpize"] if need_mptcp else []) + \
        (["iptables"] if need_delay else []) + (["nft"] if need_cut else [])
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise EmuError(f"emulation needs {', '.join(missing)} on PATH (Debian: apt-get install iproute2 iperf3 "
                       f"tcpdump mptcpize iptables nftables; `make test` installs them when run as root)")
    if need_mptcp and read_proc("/proc/sys/net/mptcp/enabled") is None:
        raise EmuError("this kernel has no MPTCP (no /proc/sys/net/mptcp): MPTCP flows need Linux >= 5.6 "
                       "with CONFIG_MPTCP")


def congestion_controls() -> list[str]:
    return (read_proc("/proc/sys/net/ipv4/tcp_available_congestion_control") or "").split()


def scenario(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The flows the emulator runs; EmuError for anything it cannot run faithfully."""
    paths = config.get("path", [])
    flows = config.get("flow", [])
    if not 1 <= len(flows) <= MAX_FLOWS:
        raise EmuError(f"flow: the emulator runs 1 to {MAX_FLOWS} flows (got {len(flows)})")
    if not 1 <= len(paths) <= MAX_PATHS:
        raise EmuError(f"path: the emulator builds 1 to {MAX_PATHS} paths (got {len(paths)})")
    for i, f in enumerate(flows):
        _flow(i, f)
    _together(flows)
    return flows


def _flow(i: int, f: dict[str, Any]) -> None:
    kind = f.get("kind")
    if kind not in ("tcp", "mptcp", "udp"):
        raise EmuError(f"flow.{i}.kind: {kind!r} cannot be emulated (allowed: tcp, mptcp, udp)")
    if kind != "udp" and f.get("app") not in (None, "bulk", "rate"):
        raise EmuError(f"flow.{i}.app: {f.get('app')!r} cannot be emulated (allowed: bulk, rate, as iperf3 sends)")
    if f.get("bytes") is not None:
        raise EmuError(f"flow.{i}.bytes: not emulated: iperf3 runs each flow from start_s to stop_s (-t) and "
                       "cannot also stop at a byte count (allowed: no bytes; set stop_s instead)")
    if f.get("prio"):
        raise EmuError(f"flow.{i}.prio: MP_PRIO changes during the run are not emulated (allowed: none; the "
                       f"backup flags of flow.{i}.backup_paths are set at the start)")
    if kind in ("tcp", "mptcp"):
        cc = f.get("cc", "cubic")
        have = congestion_controls()
        if have and cc not in have:
            raise EmuError(f"flow.{i}.cc: this kernel has no {cc!r} (available: {', '.join(have)})")
    if kind == "mptcp":
        if f.get("kernel") not in (None, "linux-upstream"):
            # One message for both fields: with v0.9x the scheduler is minRTT unless set otherwise,
            # which the emulator refuses next.
            fix = f"--set flow.{i}.kernel=linux-upstream" + \
                ("" if f.get("scheduler") in (None, "default", "upstream") else f" --set flow.{i}.scheduler=default")
            raise EmuError(f"flow.{i}.kernel: {f.get('kernel')!r}: the emulator runs this machine's kernel MPTCP "
                           f"with its own scheduler (allowed: \"linux-upstream\"; {fix})")
        if f.get("scheduler") not in (None, "default", "upstream"):
            raise EmuError(f"flow.{i}.scheduler: {f.get('scheduler')!r} exists only in the simulator; the kernel "
                           "schedules with its own (allowed: \"default\")")
        if f.get("subflows") not in (None, "per-path"):
            raise EmuError(f"flow.{i}.subflows: {f.get('subflows')!r}: the emulator's server has one address, so the "
                           f"kernel opens one subflow per path (allowed: \"per-path\"; --set flow.{i}.subflows=per-path)")
        if f.get("coupled") not in (None, "uncoupled"):
            raise EmuError(f"flow.{i}.coupled: {f.get('coupled')!r}: upstream Linux MPTCP has no coupled "
                           "congestion control (allowed: \"uncoupled\")")

    check_tcp(f, i)


def _together(flows: list[dict[str, Any]]) -> None:
    """What several flows must share, because it is set once per namespace or per interface."""
    stream = [(i, f) for i, f in enumerate(flows) if f.get("kind") in ("tcp", "mptcp")]
    for i, f in stream[1:]:
        j, g = stream[0]
        if (f.get("tcp") or {}) != (g.get("tcp") or {}):
            raise EmuError(f"flow.{i}.tcp differs from flow.{j}.tcp: the emulator sets these per namespace "
                           f"(sysctls, routes), once for every flow (allowed: the same [flow.tcp] as flow.{j})")
    mp = [(i, f) for i, f in enumerate(flows) if f.get("kind") == "mptcp"]
    for i, f in mp[1:]:
        j, g = mp[0]
        for key in ("paths", "mode", "backup_paths"):
            if f.get(key) != g.get(key):
                raise EmuError(f"flow.{i}.{key}: {f.get(key)!r} differs from flow.{j}'s {g.get(key)!r}: the "
                               "kernel's path manager endpoints are per namespace, one set for every MPTCP flow "
                               f"(allowed: the same {key} as flow.{j})")


def base_rtt_ms(config: dict[str, Any]) -> float:
    """The scenario's propagation RTT: twice the backbone's and the slowest path's one-way delay."""
    bb = config.get("backbone") or {}
    one_way = float(bb.get("delay_ms") or 0.0) if bb.get("enabled", True) else 0.0
    one_way += max((float(p.get("delay_ms") or 0.0) for p in config.get("path", [])), default=0.0)
    return 2.0 * one_way
