"""Seed 000's full mesh with the real kernel as witness (issue 27): does a slow path whose queue
the sender's TCP Small Queues cannot see make MPTCP full mesh fall below TCP on the fast path?

Seed 000 (section 4.2) measured MPTCP full mesh over 802.11ad (TCP 1316 Mbit/s at best, MTU
7912) and 802.11n (46.16 Mbit/s, MTU 1500) below TCP over the 802.11ad link alone, widely
spread; the simulator's v0.9x full mesh aggregates almost ideally (docs/models.md, "Seed 000's
full mesh over 11ad + 11n"). The kernel here is upstream Linux with its default scheduler, not
v0.90's minRTT, so it cannot reproduce the paper; what it can show is what a queue outside TSQ's
reach does to an upstream full mesh, which both engines model:

- `tsq-sees-queue`: the server at the AP (`backbone.enabled = false`), so the slow path's queue
  is the sender's own qdisc, which TCP Small Queues charges to each subflow's socket (the kernel
  keeps ~1 ms of it; docs/emulate.md, Topology);
- `queue-below-tsq`: a 10 GbE backbone between the server and the AP, so the slow path's queue
  is in a router that dropped the socket's reference on arrival (ip_rcv_core: skb_orphan), as
  a NIC or Wi-Fi card's hardware queue that frees its skbs early would be: nothing holds the
  sender back from filling it.

Two wired paths stand in for seed 000's links, at rates whose single-path TCP goodput is the
paper's best runs (path a 1330 Mbit/s, MTU 7912; path b 48 Mbit/s, MTU 1500; 0.25 ms each way),
the slow path's queue `--queue-frames` frames (default 1000: Linux's default txqueuelen). Each
case runs in the simulator (`mmpath run`, deterministic) and on this machine's kernel (`mmpath emu
run`, root, `--runs` times); TCP alone on each path gives L_11ad and L_11n for Ben (seed 000
eq. 3).

    sudo .venv/bin/python bench/fullmesh_witness.py [--runs 3] [--seconds 10] [--out FILE.json]
    .venv/bin/python bench/fullmesh_witness.py --sim-only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

RATE_A, MTU_A = 1330.0, 7912
RATE_B, MTU_B = 48.0, 1500
DELAY_MS = 0.25

CASES = ("tcp-a", "tcp-b", "mesh:tsq-sees-queue", "mesh:queue-below-tsq")


def scenario(case: str, seconds: float, queue_frames: int) -> dict[str, Any]:
    paths = [
        {"name": "a", "rate_mbps": RATE_A, "mtu_bytes": MTU_A, "delay_ms": DELAY_MS, "queue_bytes": 1000 * MTU_A},
        {"name": "b", "rate_mbps": RATE_B, "mtu_bytes": MTU_B, "delay_ms": DELAY_MS,
         "queue_bytes": queue_frames * MTU_B},
    ]
    if case.startswith("tcp-"):
        flow = {"name": "f", "kind": "tcp", "path": case[-1], "stop_s": seconds}
    else:
        flow = {"name": "f", "kind": "mptcp", "paths": ["a", "b"], "kernel": "linux-upstream",
                "scheduler": "default", "stop_s": seconds}
    backbone = case != "mesh:tsq-sees-queue"
    return {"name": f"witness-{case.replace(':', '-')}", "duration_s": seconds,
            "backbone": {"enabled": backbone, "rate_mbps": 10000.0, "delay_ms": 0.0},
            "path": paths, "flow": [flow]}


def simulated(case: str, seconds: float, queue_frames: int) -> dict[str, Any]:
    from mmpath.api import run

    res = run(scenario(case, seconds, queue_frames), seed=1)
    f = res.summary["flows"][0]
    out: dict[str, Any] = {"goodput_mbps": round(float(f["goodput_mbps"]), 1)}
    if case.startswith("mesh"):
        sub = res.intervals[res.intervals["subflow"] != -1]
        per = sub.groupby("path", observed=True)["bytes"].sum()
        tl = res.timeline
        slow = tl[(tl["subflow"] >= 0) & (tl["path"] == "b")]
        out["path_b_share_pct"] = round(100.0 * float(per.get("b", 0)) / float(per.sum()), 1)
        out["path_b_srtt_ms_median"] = round(float(slow["srtt_ms"].median()), 1)
        out["path_b_cwnd_segments_last"] = int(slow["cwnd_bytes"].iloc[-1] // (MTU_B - 72))
    return out


def emulated(case: str, seconds: float, queue_frames: int) -> dict[str, Any]:
    from mmpath.emu import run

    res = run(scenario(case, seconds, queue_frames), seed=1, capture=False)
    out: dict[str, Any] = {"goodput_mbps": round(float(res.goodput_mbps), 1)}
    if case.startswith("mesh"):
        per = {k: float(v) for k, v in res.path_mbps.items()}
        out["path_b_share_pct"] = round(100.0 * per.get("b", 0.0) / sum(per.values()), 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="emulated runs per case (default 3)")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--queue-frames", type=int, default=1000, help="the slow path's queue (default 1000)")
    ap.add_argument("--sim-only", action="store_true", help="only the simulator (no root needed)")
    ap.add_argument("--out", type=Path, help="write every number as JSON")
    a = ap.parse_args()
    if a.runs < 1 or a.seconds < 2 or a.queue_frames < 1:
        print("fullmesh_witness: --runs >= 1, --seconds >= 2 and --queue-frames >= 1", file=sys.stderr)
        return 2
    if not a.sim_only and os.geteuid() != 0:
        print("fullmesh_witness: the emulated runs need root (or --sim-only)", file=sys.stderr)
        return 2
    rows: dict[str, dict[str, Any]] = {}
    for case in CASES:
        rows[case] = {"simulated": simulated(case, a.seconds, a.queue_frames), "emulated": []}
        if not a.sim_only:
            for _ in range(a.runs):
                rows[case]["emulated"].append(emulated(case, a.seconds, a.queue_frames))
        print(json.dumps({case: rows[case]}), flush=True)

    def l(case: str, engine: str) -> float:
        r = rows[case][engine]
        return r["goodput_mbps"] if engine == "simulated" else max(x["goodput_mbps"] for x in r)

    from mmpath.metrics import ben  # seed 000 eq. (3)

    engines = ["simulated"] + ([] if a.sim_only else ["emulated"])
    print()
    print("| case | engine | goodput Mbit/s | Ben (eq. 3; L = best TCP run of the engine) | path b share % |")
    print("|---|---|---|---|---|")
    for case in CASES:
        for eng in engines:
            runs = [rows[case][eng]] if eng == "simulated" else rows[case][eng]
            gp = ", ".join(f"{r['goodput_mbps']:.1f}" for r in runs)
            b = ""
            share = ""
            if case.startswith("mesh"):
                b = ", ".join(f"{ben(r['goodput_mbps'], [l('tcp-a', eng), l('tcp-b', eng)]):+.2f}" for r in runs)
                share = ", ".join(f"{r['path_b_share_pct']:.1f}" for r in runs)
            print(f"| {case} | {eng} | {gp} | {b} | {share} |")
    if a.out:
        a.out.write_text(json.dumps({"args": vars(a) | {"out": str(a.out)}, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
