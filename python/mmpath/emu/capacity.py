"""Each path's capacity over time, for the emulator's shaper: what the path's link model delivers
when saturated. The simulator runs the scenario's path alone (its radio, events, channel, seed)
under a UDP flow offered above any PHY rate, in the flow's direction, and the delivered rate per
100 ms bin is the path's capacity in that bin (MAC efficiency, aggregation, rate adaptation,
fading, scans and outages included; 0 while the link is down).

For a TCP or MPTCP flow the probe also carries the reverse traffic TCP brings, because on a
half-duplex radio the ACKs take airtime from the data: a second, reverse UDP flow of 52-byte
packets (an IPv4 TCP ACK with timestamps) at one per two full data segments (Linux's delayed
ACK) of the first pass's mean rate. The ACKs' own bytes are not shaped in the emulation (its
reverse direction is a plain veth); their airtime is in the data direction's capacity.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..scenario import load_scenario

BIN_S = 0.1
# Above every PHY rate mmpath models (802.11ad SC MCS 12: 4620 Mbit/s), so the link, never the
# probe, sets the rate.
PROBE_MBPS = 5000.0
# A TCP ACK: IPv4 20 + TCP 20 + timestamps 12 bytes; one per two full segments (RFC 1122 4.2.3.2,
# Linux's delayed ACK). A UDP packet of that size carries 52 - 28 (IPv4 + UDP) bytes of payload.
ACK_BYTES = 52
SEGMENTS_PER_ACK = 2
UDP_IP_HEADERS = 28
TCP_IP_HEADERS = 52


@dataclass(frozen=True)
class Capacity:
    path: str
    bin_s: float
    mbps: np.ndarray  # one value per bin from t = 0

    def at(self, t_s: float) -> float:
        i = min(int(t_s / self.bin_s), len(self.mbps) - 1)
        return float(self.mbps[max(i, 0)])

    def csv(self) -> str:
        """mmpath's trace CSV (docs/traces.md): time, rate, link status; replayable by `mmpath run`."""
        lines = ["t_s,rate_mbps,link_up"]
        for i, r in enumerate(self.mbps):
            lines.append(f"{i * self.bin_s:.3f},{r:.3f},{int(r > 0)}")
        return "\n".join(lines) + "\n"


def probe(config: dict[str, Any], path_index: int, direction: str, duration_s: float, seed: int,
          tcp: bool = True) -> Capacity:
    """Simulate path `path_index` of the normalized scenario `config` saturated by UDP (with
    TCP's ACK load in the reverse direction when `tcp`)."""
    first = _saturate(config, path_index, direction, duration_s, seed, ack_mbps=0.0)
    if not tcp or not first.mbps.any():
        return first
    mtu = int(config["path"][path_index].get("mtu_bytes") or 1500)
    # ACKs per second = segments per second / 2; segments carry MSS = MTU - 52 bytes.
    seg_per_s = float(first.mbps[first.mbps > 0].mean()) * 1e6 / 8 / (mtu - TCP_IP_HEADERS)
    ack_mbps = seg_per_s / SEGMENTS_PER_ACK * ACK_BYTES * 8 / 1e6
    return _saturate(config, path_index, direction, duration_s, seed, ack_mbps=ack_mbps)


def _saturate(config: dict[str, Any], path_index: int, direction: str, duration_s: float, seed: int,
              ack_mbps: float) -> Capacity:
    from ..api import simulate

    doc = copy.deepcopy(config)
    p = doc["path"][path_index]
    doc["path"] = [p]
    doc["flow"] = [{"name": "probe", "kind": "udp", "path": p["name"], "direction": direction,
                    "rate_mbps": PROBE_MBPS, "start_s": 0.0, "stop_s": duration_s}]
    if ack_mbps > 0:
        back = "upload" if direction == "download" else "download"
        doc["flow"].append({"name": "acks", "kind": "udp", "path": p["name"], "direction": back,
                            "rate_mbps": ack_mbps, "packet_bytes": ACK_BYTES - UDP_IP_HEADERS,
                            "start_s": 0.0, "stop_s": duration_s})
    doc["duration_s"] = duration_s
    doc.pop("timeline", None)
    sc = load_scenario(doc, seed=seed)
    res = simulate(sc)
    iv = res.intervals
    iv = iv[iv["flow"] == "probe"]
    n = int(round(duration_s / BIN_S))
    mbps = np.zeros(n)
    idx = np.round(iv["t_s"].to_numpy(dtype=float) / BIN_S).astype(int)
    ok = (idx >= 0) & (idx < n)
    np.add.at(mbps, idx[ok], iv["mbps"].to_numpy(dtype=float)[ok])
    return Capacity(path=str(p["name"]), bin_s=BIN_S, mbps=mbps)
