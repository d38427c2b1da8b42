"""The traffic and the captures: real iperf3, one server (in the server namespace, port 5201 + the
flow's index) and one client (in the client's; `-R` for a download) per flow, the client started at
the flow's start time; made MPTCP by `mptcpize run` (an LD_PRELOAD that opens IPPROTO_MPTCP
sockets) for MPTCP flows; and tcpdump on every path's client interface.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from . import tcpconf
from .errors import EmuError
from .netns import Topology, sh, stop
from .reaper import popen

PORT = 5201
# iperf3 -l for UDP: one datagram per packet at the path's MTU (IPv4 20 + UDP 8 bytes of headers).
UDP_HEADERS = 28
CAPTURE_SNAPLEN = 128  # headers (TCP options, MPTCP DSS) without payload


def _mptcp(cmd: list[str], on: bool) -> list[str]:
    return ["mptcpize", "run", *cmd] if on else cmd


def start_server(topo: Topology, mptcp: bool, log: Path, port: int = PORT) -> subprocess.Popen:
    cmd = _mptcp(["iperf3", "-s", "-1", "-J", "-p", str(port), "--logfile", str(log)], mptcp)
    p = popen(["ip", "netns", "exec", topo.srv, *cmd], stdout=subprocess.DEVNULL,
              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if f":{port}" in sh("ss", "-Hltn", ns=topo.srv, check=False):
            return p
        if p.poll() is not None:
            raise EmuError(f"iperf3 server did not start: {' '.join((p.stderr.read() or '').split())}")
        time.sleep(0.05)
    p.kill()
    raise EmuError(f"iperf3 server (port {port}) did not listen within 5 s")


def udp_buffer_bytes() -> int:
    """The largest socket buffer the host lets iperf3 ask for (0: unknown, leave iperf3's)."""
    vals = []
    for key in ("rmem_max", "wmem_max"):
        try:
            vals.append(int(Path(f"/proc/sys/net/core/{key}").read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            return 0
    return min(vals)


def client_cmd(topo: Topology, flow: dict[str, Any], duration_s: float, log: Path, port: int = PORT) -> list[str]:
    kind = flow["kind"]
    first = topo.path(flow.get("path") or topo.paths[0].name)
    if kind == "mptcp":
        paths = flow.get("paths") or [p.name for p in topo.paths]
        first = topo.path(paths[0])
    cmd = ["iperf3", "-c", topo.srv_addr, "-p", str(port), "-t", f"{duration_s:g}", "-J", "-i", "0.1",
           "--logfile", str(log), "-B", first.cli_addr]
    if flow.get("direction", "download") == "download":
        cmd.append("-R")
    if kind == "udp":
        # One datagram per packet: the flow's packet_bytes, by default the path MTU's worth (the
        # smaller of the radio path's and the backbone's, as the simulator's MSS).
        mtu = min(first.mtu, topo.backbone_mtu or first.mtu)
        size = int(flow.get("packet_bytes") or mtu - UDP_HEADERS)
        cmd += ["-u", "-b", f"{float(flow.get('rate_mbps') or 1000):g}M", "-l", str(size)]
        # The receiving socket's buffer as large as the host allows (-w: SO_RCVBUF / SO_SNDBUF,
        # capped by net.core.rmem_max / wmem_max): the simulator's receiver never drops a
        # datagram, and the default 208 KiB overflowed at a few hundred Mbit/s here.
        buf = udp_buffer_bytes()
        if buf:
            cmd += ["-w", str(buf)]
    else:
        cmd += ["-C", str(flow.get("cc") or "cubic"), *tcpconf.iperf_args(flow)]
        if flow.get("app") == "rate":
            # A TCP source at rate_mbps: iperf3 -b paces its writes (1 ms timer by default), as the
            # simulator's rate app is fed every 1 ms (docs/scenario.md).
            cmd += ["-b", f"{float(flow['rate_mbps']):g}M"]
    return ["ip", "netns", "exec", topo.cli, *_mptcp(cmd, kind == "mptcp")]


class Client(threading.Thread):
    """One flow's iperf3 client, started at its flow's start time on the run's clock."""

    def __init__(self, cmd: list[str], at: float, timeout_s: float) -> None:
        super().__init__(daemon=True)
        self.cmd, self.at, self.timeout_s = cmd, at, timeout_s
        self.result: subprocess.CompletedProcess | None = None
        self.timed_out = False
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    def run(self) -> None:
        if self._cancel.wait(max(0.0, self.at - time.monotonic())):
            return
        with self._lock:
            if self._cancel.is_set():
                return
            self._proc = popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = self._proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.communicate()
            self.timed_out = True
            return
        self.result = subprocess.CompletedProcess(self.cmd, self._proc.returncode, out, err)

    def kill(self) -> None:
        """Stops the client (not started yet: it never starts). An interrupted run must not leave
        iperf3 behind: `ip netns del` only unnames a namespace a process still runs in."""
        with self._lock:
            self._cancel.set()
            p = self._proc
        if p is not None and p.poll() is None:
            p.kill()
        if self.ident is not None:  # started
            self.join(timeout=5)


# The smallest packet taken as a flow's data rather than iperf3's control (its cookie, 37 bytes; its
# parameters' JSON, a few hundred; its 1-byte state messages): a data segment or datagram is a
# path MTU's worth (at least 576 bytes of IPv4).
DATA_MIN_BYTES = 560
# How long tcpdump is given to open its socket before the traffic it must see starts.
LISTEN_S = 0.3


class ClockProbe:
    """Where a flow's iperf3 clock sits on the run's: iperf3 counts its intervals from the test's
    start (the client's TEST_START, after the control connection's exchange and the data
    connection's handshake: ~3 RTTs after the client starts, 0.2-0.3 s at 50 ms), not from the
    moment the emulator starts the client. The first data packet of the flow's port seen in the
    client's namespace marks that start (a download's first segment arrives with TEST_START,
    which the server sends just before it; an upload's leaves right after TEST_RUNNING):
    `tcpdump -c 1`, started before bin 0, stamps it on the wall clock (-tt), as the captures
    are. Without a packet (a UDP flow of small datagrams), `unix_s` is None."""

    def __init__(self, topo: Topology, port: int) -> None:
        self.port = port
        self._p = popen(["ip", "netns", "exec", topo.cli, "tcpdump", "-i", "any", "-n", "-tt", "-l", "-c", "1",
                         f"port {port} and greater {DATA_MIN_BYTES}"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        # Read (and reaped) as soon as it exits: a finished probe left unwaited is a zombie, which
        # a hard kill of the run would hand to an init that may be slow to reap it.
        self._out: list[str] = []
        self._reader = threading.Thread(target=lambda: self._out.append(self._p.communicate()[0] or ""),
                                        daemon=True)
        self._reader.start()

    def unix_s(self) -> float | None:
        """The first data packet's wall-clock time (stops the probe)."""
        if self._p.poll() is None:
            self._p.terminate()
        self._reader.join(timeout=5)
        if self._reader.is_alive():
            self._p.kill()
            self._reader.join(timeout=5)
        return first_stamp("".join(self._out))


def first_stamp(text: str) -> float | None:
    """The time stamp opening `tcpdump -tt`'s first line, or None."""
    for line in (text or "").splitlines():
        try:
            return float(line.split()[0])
        except (ValueError, IndexError):
            continue
    return None


def start_captures(topo: Topology, out: Path) -> list[tuple[subprocess.Popen, Path]]:
    caps = []
    for link in topo.paths:
        f = out / f"{link.name}.pcap"
        p = popen(["ip", "netns", "exec", topo.cli, "tcpdump", "-i", link.cli_if, "-s",
                   str(CAPTURE_SNAPLEN), "-U", "-w", str(f), "tcp or udp"],
                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        caps.append((p, f))
    # tcpdump prints "listening on" once its socket is open; give it a moment.
    time.sleep(LISTEN_S)
    return caps


# libpcap hands tcpdump the packets of its kernel ring a block at a time (TPACKET_V3), a block
# when it is full or 1 s (tcpdump's read timeout) after it began; tcpdump stopped at once loses
# the block still open: an x-pm run's captures ended 0.4 s before iperf3 did, 3.9 MB of the
# 128 MB the client read never in them (found by x-pm's `intact` check). Waiting out one block
# timeout after the traffic has ended lets the kernel retire that block and tcpdump write it.
CAPTURE_FLUSH_S = 1.1


def stop_captures(caps: list[tuple[subprocess.Popen, Path]], flush_s: float = CAPTURE_FLUSH_S) -> list[str]:
    """Stops the captures, after `flush_s` (0 on an error's way out: nothing to keep then)."""
    notes = []
    if caps and flush_s > 0:
        time.sleep(flush_s)
    for p, f in caps:
        _, err = stop(p, signal.SIGINT, timeout=10)
        for line in (err or "").splitlines():
            if "dropped by kernel" in line or "captured" in line:
                notes.append(f"{f.name}: {line.strip()}")
    return notes
