"""Each path's capacity over time, for the emulator's shaper: what the path's link model delivers
when saturated. The simulator runs the scenario's path alone (its radio, events, channel, seed)
under a UDP flow offered above any PHY rate, in the flow's direction, and the delivered rate per
100 ms bin is the path's capacity in that bin (MAC efficiency, aggregation, rate adaptation,
fading, scans and outages included; 0 while the link is down).

One simplification, stated: the probe carries no reverse traffic, so the capacity does not lose
the airtime a TCP flow's ACKs take on a half-duplex radio (the simulator's own TCP runs do).
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


def probe(config: dict[str, Any], path_index: int, direction: str, duration_s: float, seed: int) -> Capacity:
    """Simulate path `path_index` of the normalized scenario `config` saturated by UDP."""
    from ..api import simulate

    doc = copy.deepcopy(config)
    p = doc["path"][path_index]
    doc["path"] = [p]
    doc["flow"] = [{"name": "probe", "kind": "udp", "path": p["name"], "direction": direction,
                    "rate_mbps": PROBE_MBPS, "start_s": 0.0, "stop_s": duration_s}]
    doc["duration_s"] = duration_s
    doc.pop("timeline", None)
    sc = load_scenario(doc, seed=seed)
    res = simulate(sc)
    iv = res.intervals
    n = int(round(duration_s / BIN_S))
    mbps = np.zeros(n)
    rows = iv[iv["subflow"] <= 0] if "subflow" in iv else iv
    idx = np.round(rows["t_s"].to_numpy(dtype=float) / BIN_S).astype(int)
    ok = (idx >= 0) & (idx < n)
    np.add.at(mbps, idx[ok], rows["mbps"].to_numpy(dtype=float)[ok])
    return Capacity(path=str(p["name"]), bin_s=BIN_S, mbps=mbps)
