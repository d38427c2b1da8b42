"""Each path's capacity over time, for the emulator's shaper: what the path's link model delivers
when saturated. The simulator runs the scenario's path alone (its radio, events, channel, seed)
under a UDP flow offered above any PHY rate, in the flow's direction, and the delivered rate per
100 ms bin is the path's capacity in that bin (MAC efficiency, aggregation, rate adaptation,
fading and outages included; 0 while the link is down). A capacity is a rate of IP packets: the
probe's datagrams are full-size (MTU) IP packets, so its payload rate is scaled by
MTU / (MTU - 28); TCP's full-size segments then get the same packets per second (the shaper
turns it into an Ethernet-frame rate, shaper.htb_mbps). The emulator probes the scenario with
its scan events removed (holds.without_scans): a scan's dwells off channel are held by the delay
line instead (holds.py, delay.py). Probing a scenario with scans, a bin with nothing delivered
that a dwell covers wholly is marked stalled (the radio holds its frames there).

For a TCP or MPTCP flow the probe also carries the reverse traffic TCP brings, because on a
half-duplex radio the ACKs take airtime from the data: a second, reverse UDP flow of 52-byte
packets (an IPv4 TCP ACK with timestamps) at one per two full data segments (Linux's delayed
ACK) of the first pass's mean rate, while the path's TCP and MPTCP flows run (from the first
one's start to the last one's stop): a UDP phase after a TCP one is probed as it runs, without
ACKs (the bundled `11ad-radio`'s UDP half was shaped at TCP's 1278 Mbit/s, emulated 1274
against 1608 simulated; now 1608 / 1608). The ACKs' own bytes are not shaped in the emulation
(its reverse direction is a plain veth); their airtime is in the data direction's capacity.

Flows in both directions at once (`probe_both`): the path is saturated both ways together, each
way with the other's ACK load, so the two capacities split the radio's airtime as its MAC does
when both sides are backlogged. The split is then fixed: airtime one direction leaves unused
is not lent to the other in the emulation (docs/emulate.md).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..api import simulate
from ..lazy import numpy as np  # on first use (start-up time): lazy.py
from ..scenario import load_scenario
from .holds import dwells_s, is_wired

BIN_S = 0.1
# Above every PHY rate mmpath models (802.11ad SC MCS 12: 4620 Mbit/s), so the link, never the
# probe, sets the rate; a faster wired path is offered twice its fastest rate (offered_mbps).
PROBE_MBPS = 5000.0
# A TCP ACK: IPv4 20 + TCP 20 + timestamps 12 bytes; one per two full segments (RFC 1122 4.2.3.2,
# Linux's delayed ACK). A UDP packet of that size carries 52 - 28 (IPv4 + UDP) bytes of payload.
ACK_BYTES = 52
SEGMENTS_PER_ACK = 2
UDP_IP_HEADERS = 28


@dataclass(frozen=True)
class Capacity:
    path: str
    bin_s: float
    mbps: np.ndarray  # one value per bin from t = 0
    # Per bin: nothing was delivered while a scan had the radio off channel all through it: the
    # radio's frames wait there, they are not lost. None: no such bin.
    stalled: np.ndarray | None = None
    # The probe run's channel record of the path (docs/traces.md), for a radio path: its link
    # status, MCS and RSSI over time, what the emulator's path-manager feed reports (linkfeed.py).
    channel_csv: str | None = None

    def at(self, t_s: float) -> float:
        i = min(int(t_s / self.bin_s), len(self.mbps) - 1)
        return float(self.mbps[max(i, 0)])

    def is_stalled(self, i: int) -> bool:
        return self.stalled is not None and i < len(self.stalled) and bool(self.stalled[i]) and self.mbps[i] <= 0

    def csv(self) -> str:
        """mmpath's trace CSV (docs/traces.md): time, rate, link status; replayable by `mmpath run`
        (a stalled bin is rate 0 with the link up, which stalls the path there too). A last row
        with only `t_s` at the end of the last bin gives that bin its length and the trace its
        period, so a looping replay neither drops the last bin nor starts over early."""
        lines = ["t_s,rate_mbps,link_up"]
        for i, r in enumerate(self.mbps):
            lines.append(f"{i * self.bin_s:.3f},{r:.3f},{int(r > 0 or self.is_stalled(i))}")
        lines.append(f"{len(self.mbps) * self.bin_s:.3f},,")
        return "\n".join(lines) + "\n"


def _ack_span(tcp: bool | tuple[float, float] | None, duration_s: float) -> tuple[float, float] | None:
    if tcp is True:
        return (0.0, duration_s)
    if not tcp:
        return None
    return (float(tcp[0]), float(tcp[1]))


def probe(config: dict[str, Any], path_index: int, direction: str, duration_s: float, seed: int,
          tcp: bool | tuple[float, float] | None = True) -> Capacity:
    """Simulate path `path_index` of the normalized scenario `config` saturated by UDP, with
    TCP's ACK load in the reverse direction while TCP flows use the path: `tcp` True for the
    whole run, a (start, stop) span in s, or False / None for none (a UDP-only path: a UDP
    phase after a TCP one is probed without ACKs, as it runs)."""
    span = _ack_span(tcp, duration_s)
    first = _saturate(config, path_index, direction, duration_s, seed, ack_mbps=0.0)
    if span is None or not first.mbps.any():
        return first
    mtu = int(config["path"][path_index].get("mtu_bytes") or 1500)
    return _saturate(config, path_index, direction, duration_s, seed, ack_mbps=_ack_mbps(first, mtu),
                     ack_span=span)


def _ack_mbps(cap: Capacity, mtu: int) -> float:
    """TCP's ACK load for data at `cap`'s mean rate: one 52-byte ACK per two MSS-sized segments."""
    up = cap.mbps[cap.mbps > 0]
    if not len(up):
        return 0.0
    seg_per_s = float(up.mean()) * 1e6 / 8 / mtu  # full-size IP packets per second
    return seg_per_s / SEGMENTS_PER_ACK * ACK_BYTES * 8 / 1e6


def probe_both(config: dict[str, Any], path_index: int, duration_s: float, seed: int,
               tcp: bool | tuple[float, float] | None = True) -> tuple[Capacity, Capacity]:
    """(download, upload) capacities of path `path_index` saturated both ways at once (each way
    with the other's TCP ACK load while TCP flows use the path: `tcp` as in `probe`)."""
    span = _ack_span(tcp, duration_s)
    loads = {"download": (PROBE_MBPS, 0.0), "upload": (PROBE_MBPS, 0.0)}
    caps = _saturate_many(config, path_index, duration_s, seed, loads)
    if span is not None:
        mtu = int(config["path"][path_index].get("mtu_bytes") or 1500)
        loads = {d: (PROBE_MBPS, _ack_mbps(caps[other], mtu))
                 for d, other in (("download", "upload"), ("upload", "download"))}
        caps = _saturate_many(config, path_index, duration_s, seed, loads, ack_span=span)
    return caps["download"], caps["upload"]


def _saturate(config: dict[str, Any], path_index: int, direction: str, duration_s: float, seed: int,
              ack_mbps: float, ack_span: tuple[float, float] | None = None) -> Capacity:
    back = "upload" if direction == "download" else "download"
    loads = {direction: (PROBE_MBPS, 0.0)}
    if ack_mbps > 0:
        loads[back] = (0.0, ack_mbps)
    return _saturate_many(config, path_index, duration_s, seed, loads, ack_span)[direction]


def _saturate_many(config: dict[str, Any], path_index: int, duration_s: float, seed: int,
                   loads: dict[str, tuple[float, float]],
                   ack_span: tuple[float, float] | None = None) -> dict[str, Capacity]:
    """Simulates the path alone under, per direction, (saturating UDP rate or 0, ACK-sized UDP
    rate or 0, the latter from..to `ack_span`, default the whole run); the delivered rate per
    bin of each saturating flow is that direction's capacity."""
    ack_from, ack_to = ack_span if ack_span is not None else (0.0, duration_s)
    doc = copy.deepcopy(config)
    p = doc["path"][path_index]
    doc["path"] = [p]
    mtu = int(p.get("mtu_bytes") or 1500)
    loads = {d: (offered_mbps(p) if data > 0 else 0.0, ack) for d, (data, ack) in loads.items()}
    doc["flow"] = []
    for direction, (data_mbps, ack_mbps) in loads.items():
        if data_mbps > 0:
            doc["flow"].append({"name": f"probe-{direction}", "kind": "udp", "path": p["name"],
                                "direction": direction, "rate_mbps": data_mbps, "start_s": 0.0,
                                "stop_s": duration_s})
        if ack_mbps > 0:
            doc["flow"].append({"name": f"acks-{direction}", "kind": "udp", "path": p["name"],
                                "direction": direction, "rate_mbps": ack_mbps,
                                "packet_bytes": ACK_BYTES - UDP_IP_HEADERS, "start_s": ack_from,
                                "stop_s": ack_to})
    doc["duration_s"] = duration_s
    doc.pop("timeline", None)
    sc = load_scenario(doc, seed=seed)
    res = simulate(sc)
    n = int(round(duration_s / BIN_S))
    out = {}
    for direction, (data_mbps, _) in loads.items():
        if data_mbps <= 0:
            continue
        iv = res.intervals
        iv = iv[iv["flow"] == f"probe-{direction}"]
        mbps = np.zeros(n)
        idx = np.round(iv["t_s"].to_numpy(dtype=float) / BIN_S).astype(int)
        ok = (idx >= 0) & (idx < n)
        np.add.at(mbps, idx[ok], iv["mbps"].to_numpy(dtype=float)[ok])
        mbps *= mtu / (mtu - UDP_IP_HEADERS)  # the datagrams' payload rate -> their IP rate
        out[direction] = Capacity(path=str(p["name"]), bin_s=BIN_S, mbps=mbps,
                                  stalled=_stalled(p, mbps), channel_csv=res.channel.get(str(p["name"])))
    return out


# The access-latency probe (access_latency_us): one datagram each way every LATENCY_GAP_S, the
# reverse one half a gap later, so that no frame waits for another and each is a TXOP of its own.
LATENCY_PROBE_S = 1.0
LATENCY_GAP_S = 0.005


def access_latency_us(config: dict[str, Any], path_index: int, direction: str, seed: int) -> int:
    """What a radio path's MAC adds to each frame's one-way delay on an idle channel, in whole
    microseconds: the shaper (a rate and a FIFO, shaper.py) carries the path's throughput but not
    the time one frame spends getting on the air (AIFS, backoff, the PPDU's preamble and airtime,
    the Block Ack), which sets a lightly loaded link's RTT: ~0.26 ms for an 11ac frame and its
    ACK, where a veth pair answers in a few microseconds. The simulator runs the path alone for
    LATENCY_PROBE_S with its events, its propagation delay and the backbone removed (its
    channel, device and seed kept), carrying one full-size datagram in `direction` and one
    ACK-sized datagram back every LATENCY_GAP_S; the mean of the two directions' mean one-way
    delays is what the delay line adds to the path both ways (so the round trip of a data frame
    and its ACK is the simulated one). 0 for a wired path: its link model is the shaper's rate,
    FIFO and `delay_ms`."""
    if is_wired(config["path"][path_index]):
        return 0
    doc = copy.deepcopy(config)
    q = doc["path"][path_index]
    q.pop("event", None)
    # The MAC's time alone: no backbone (the server at the AP) and no propagation delay, which
    # the delay line holds as it is (delay.one_way_us).
    q["delay_ms"] = 0.0
    doc["backbone"] = {**(doc.get("backbone") or {}), "enabled": False}
    doc["path"] = [q]
    mtu = int(q.get("mtu_bytes") or 1500)
    back = "upload" if direction == "download" else "download"
    sizes = {direction: mtu - UDP_IP_HEADERS, back: ACK_BYTES - UDP_IP_HEADERS}
    doc["flow"] = [{"name": f"latency-{d}", "kind": "udp", "path": q["name"], "direction": d,
                    "packet_bytes": size, "rate_mbps": size * 8 / LATENCY_GAP_S / 1e6,
                    "start_s": LATENCY_GAP_S / 2 if d == back else 0.0, "stop_s": LATENCY_PROBE_S}
                   for d, size in sizes.items()]
    doc["duration_s"] = LATENCY_PROBE_S + 0.1
    doc.pop("timeline", None)
    res = simulate(load_scenario(doc, seed=seed))
    means = [float((f.get("delay_ms") or {}).get("mean") or 0.0) for f in res.summary["flows"]]
    return round(sum(means) / len(means) * 1000.0) if means else 0


def offered_mbps(path: dict[str, Any]) -> float:
    """The probe's offered rate on `path`: above anything it can carry (a wired path's rate and
    schedule steps may exceed any PHY rate; a wired trace's rates are not read here)."""
    rates = [path.get("rate_mbps") or 0.0] + [ev.get("rate_mbps") or 0.0 for ev in path.get("event") or []]
    return max(PROBE_MBPS, 2.0 * max(float(r) for r in rates))


def _stalled(path: dict[str, Any], mbps: np.ndarray) -> np.ndarray | None:
    """The bins with nothing delivered that lie wholly inside a scan's off-channel periods: the
    radio holds its frames there (a blockage in the same bin would drop them, but then the link
    model delivers nothing either way; the scan is what the bin is marked for)."""
    off = dwells_s(path, len(mbps) * BIN_S)
    if not off:
        return None
    stalled = np.zeros(len(mbps), dtype=bool)
    for i in np.flatnonzero(mbps <= 0):
        lo, hi = i * BIN_S, (i + 1) * BIN_S
        covered = sum(max(0.0, min(hi, b) - max(lo, a)) for a, b in off)
        stalled[i] = covered >= BIN_S - 1e-9
    return stalled if stalled.any() else None
