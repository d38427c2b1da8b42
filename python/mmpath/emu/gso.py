"""How large a packet each sender builds, so that a path behaves as a link serialising at its rate.

veth carries TSO/GSO packets of up to 64 KiB whole (netns.py), and the shaper's HTB sends a packet
as soon as its class has any tokens, charging all of it (sch_htb.c htb_dequeue_tree /
htb_charge_class: the class may go into debt by one packet): a 64 KiB packet leaves the AP in
one piece, 5.2 ms of a 100 Mbit/s link's time at once, where a real link sends frame by frame.
So each interface a sender's data leaves by is given a `gso_max_segs` (iproute2's `ip link set
... gso_max_segs`, as loss.py sets it; pyroute2 opens a socket in another namespace from a forked
child of this process, which inherits `mmpath emu run`'s SIGTERM handler: its stop, a SIGTERM,
interrupted the run): the frames the path's link carries in PACKET_S at its rate, at least one. The
kernel's TCP never builds a larger skb than its device's gso_max_segs (tcp_tso_segs takes the
minimum with sk_gso_max_segs, which sk_setup_caps copies from the route's device when the
socket connects). PACKET_S is the kernel's own notion of a harmless burst: tcp_tso_autosize
sizes a TSO packet to ~1 ms at the pacing rate (sk_pacing_shift = 10, net/ipv4/tcp_output.c);
here the link's rate stands for the pacing rate. The shaper's bucket is one such packet (shaper.py).

A download's data leaves the server by its one backbone interface, whichever path it takes:
that interface gets the bound of the slowest path a download crosses. An upload's leaves the
client by the path's own interface. A path whose rate changes over the run (a radio's capacity)
is bounded at the rate it holds most of the time, the median of its bins with the link up. The
settings live on the run's own interfaces and go with its namespaces (nothing on the machine
changes). At ~545 Mbit/s and above (MTU 1500) the bound is the kernel's own 64 KiB (45
segments). The bound counts segments, so on the shared backbone interface a path of a smaller
MTU gets smaller packets: in `blockage` the 11ad path (MTU 7912, 1220 Mbit/s) sets 19, and
11ac's packets (MTU 1500) are 27.5 KB, 0.42 ms of its 522 Mbit/s; the delay line then passed
116 000 packets in the run instead of 95 000 (docs/emulate.md step 2).
"""

from __future__ import annotations

import json
import statistics
from typing import Any, Iterable

from .errors import EmuError
from .netns import sh

PACKET_S = 0.001
# What an Ethernet frame adds to the IP packet on veth (the shaper charges it too: shaper.py).
ETH_HEADER_BYTES = 14
# Linux's largest gso_max_segs (GSO_MAX_SEGS, include/linux/netdevice.h): "no bound".
GSO_MAX_SEGS = 65_535


def frame_bytes(mtu: int) -> int:
    return mtu + ETH_HEADER_BYTES


def frames_per_packet(rate_mbps: float, mtu: int) -> int:
    """The frames a link at `rate_mbps` carries in PACKET_S, at least one."""
    return max(1, min(GSO_MAX_SEGS, int(rate_mbps * 1e6 / 8 * PACKET_S // frame_bytes(mtu))))


def typical_rate_mbps(mbps: Iterable[float]) -> float | None:
    """The rate a capacity trace holds most of the time: the median of its bins with the link up
    (None: never up)."""
    up = [float(r) for r in mbps if float(r) > 0]
    return float(statistics.median(up)) if up else None


def plan(senders: list[tuple[str, str, int, float | None]]) -> dict[tuple[str, str], int]:
    """(namespace, interface, mtu, the path's typical rate) per path and direction that carries
    data -> the bound per interface: the least over the paths that send by it."""
    out: dict[tuple[str, str], int] = {}
    for ns, ifname, mtu, rate in senders:
        if rate is None:
            continue
        n = frames_per_packet(rate, mtu)
        out[(ns, ifname)] = min(n, out.get((ns, ifname), GSO_MAX_SEGS))
    return out


def _segs(ns: str, ifname: str) -> int:
    """The interface's gso_max_segs, as the kernel has it."""
    info = json.loads(sh("ip", "-d", "-j", "-n", ns, "link", "show", "dev", ifname))
    return int(info[0]["gso_max_segs"])


def apply(bounds: dict[tuple[str, str], int]) -> dict[str, Any]:
    """Sets each interface's gso_max_segs to its bound, or keeps a lower one already set (a
    lossy path's one-frame packets, loss.py); what each interface has now, for emu.json."""
    done: dict[str, Any] = {}
    for (ns, ifname), n in sorted(bounds.items()):
        if n < _segs(ns, ifname):
            sh("ip", "-n", ns, "link", "set", "dev", ifname, "gso_max_segs", str(n))
        now = _segs(ns, ifname)
        if now > n:
            raise EmuError(f"{ifname} in namespace {ns} kept gso_max_segs {now} (asked {n}): the kernel refused it")
        done[f"{ns.rsplit('-', 1)[-1]} {ifname}"] = now
    return done
