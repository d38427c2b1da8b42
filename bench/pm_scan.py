"""A scanning 5 GHz primary under a path-manager policy, in the simulator and on the real kernel,
side by side (issue 28; docs/path-manager.md, "Scans"). Needs root for the kernel's half
(`--sim-only` runs the simulator's alone).

The scenario: a dual-path MPTCP download in backup mode, no backbone; the primary an 11ac radio
(80 MHz, 2 streams, -45 dBm) that scans every 2 s from 4 s for 300 ms (qcacld's 40 ms dwells
off channel and 100 ms rests on it, docs/scenario.md `scan`), the backup an 11ac radio (40 MHz,
1 stream, -50 dBm); 10 s. The same scenario (seed 1) runs in the simulator and in the emulator
(the policy run by the mmpath-pm daemon, which hears each scan's start and end through its
link feed: docs/emulate.md, "A flow's path manager").

Printed per policy and engine: the bytes the application received; the primary's mean rate in
the 2 s before the first scan; and for each scan, each path's mean rate (Mbit/s) during the
scan's 300 ms and the 300 ms after (100 ms bins: the simulator's intervals per subflow's path,
the emulator's capture of each client interface on the scenario's clock).

    sudo .venv/bin/python bench/pm_scan.py [--policies kernel,link-aware-backup] [--sim-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from mmpath.api import run
from mmpath.reproduce import xpm

DURATION_S = 10.0
BIN_S = 0.1
SCANS_S = (4.0, 6.0, 8.0)
SCAN_S = 0.3


def scenario(policy: str) -> dict:
    return {"name": "pm-scan", "duration_s": DURATION_S, "seed": 1, "backbone": {"enabled": False},
            "path": [{"name": "primary", "technology": "11ac", "bandwidth_mhz": 80, "streams": 2, "rssi_dbm": -45.0,
                      "event": [{"kind": "scan", "t_s": SCANS_S[0], "duration_s": 4.5, "every_s": 2.0,
                                 "scan_ms": SCAN_S * 1e3}]},
                     {"name": "backup", "technology": "11ac", "bandwidth_mhz": 40, "streams": 1, "rssi_dbm": -50.0}],
            "flow": [{"name": "dl", "kind": "mptcp", "mode": "backup", "kernel": "linux-upstream",
                      "scheduler": "default", "direction": "download", "path_manager": policy}]}


def bins() -> int:
    return int(round(DURATION_S / BIN_S))


def simulated(policy: str) -> tuple[list[np.ndarray], float]:
    res = run(scenario(policy), seed=1)
    iv = res.intervals
    iv = iv[iv["subflow"] >= 0]
    per = []
    for name in xpm.PATHS:
        sel = iv[iv["path"].astype(str) == name]
        b = np.zeros(bins())
        idx = np.clip(np.round(sel["t_s"].to_numpy(dtype=float) / BIN_S).astype(int), 0, bins() - 1)
        np.add.at(b, idx, sel["bytes"].to_numpy(dtype=float))
        per.append(b)
    return per, float(res.summary["flows"][0]["bytes_delivered"]) / 1e6


def emulated(policy: str) -> tuple[list[np.ndarray], float]:
    import mmpath.emu
    tmp = Path(tempfile.mkdtemp(prefix="mmpath-pm-scan-"))
    try:
        out = tmp / "out"
        mmpath.emu.run(scenario(policy), out=out, seed=1)
        t0 = float(json.loads((out / "emu.json").read_text())["t0_unix"])
        # x-pm's 100 ms bins of the client's captures (its edges run to x-pm's own 14 s).
        per = [xpm.pcap_bytes(out / f"{name}.pcap", t0)[0][:bins()] for name in xpm.PATHS]
        rx = int(json.loads((out / "iperf3-dl.json").read_text())["end"]["sum_received"]["bytes"]) / 1e6
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return per, rx


def line(policy: str, engine: str, per: list[np.ndarray], rx: float) -> str:
    mbps = [b * 8 / 1e6 / BIN_S for b in per]
    k_scan = int(round(SCAN_S / BIN_S))
    parts = []
    for s in SCANS_S:
        k = int(round(s / BIN_S))
        during = [float(np.mean(m[k:k + k_scan])) for m in mbps]
        after = [float(np.mean(m[k + k_scan:k + 2 * k_scan])) for m in mbps]
        parts.append(f"scan at {s:g} s: primary {during[0]:.0f} backup {during[1]:.0f}, "
                     f"after {after[0]:.0f} / {after[1]:.0f}")
    k0 = int(round(SCANS_S[0] / BIN_S))
    pre = float(np.mean(mbps[0][k0 - 20:k0]))
    return f"{policy:18s} {engine:10s} received {rx:6.1f} MB, primary before {pre:.0f} Mbit/s; " + "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default="kernel,link-aware-backup",
                    help="comma-separated policies (kernel, fast-failback, link-aware-backup, recreate)")
    ap.add_argument("--sim-only", action="store_true", help="the simulator's half only (no root needed)")
    args = ap.parse_args(argv)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    bad = [p for p in policies if p not in xpm.POLICIES]
    if bad:
        print(f"pm_scan: unknown policy {bad[0]!r} (allowed: {', '.join(xpm.POLICIES)})", file=sys.stderr)
        return 2
    if not args.sim_only and os.geteuid() != 0:
        print("pm_scan: the kernel's half needs root (network namespaces); --sim-only runs the simulator's",
              file=sys.stderr)
        return 2
    for p in policies:
        print(line(p, "simulated", *simulated(p)), flush=True)
        if not args.sim_only:
            print(line(p, "kernel", *emulated(p)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
