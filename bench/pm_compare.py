"""The path-manager policies in the simulator and on the real kernel, side by side (issue 28;
docs/path-manager.md, "Simulator and kernel, side by side"). Needs root for the kernel's half
(`--sim-only` runs the simulator's alone).

One scenario, x-pm's `cut-drop` case (python/mmpath/reproduce/xpm.py, whose measures this uses): a dual-path MPTCP download in backup mode over wired paths, primary
(path 0) 100 Mbit/s 5 ms one way, backup (path 1) 50 Mbit/s 10 ms, no backbone; path 0 cut by a
dropping outage (`drop = true`: the client's end of its link goes down, docs/emulate.md) at
CUT_S for 5 s, then restored. For each policy the same scenario (seed 1) runs in the simulator
(`mmpath.simulate`) and in the emulator (`mmpath.emu.run`, the policy run by the `mmpath-pm`
daemon in the client's namespace, python/mmpath/emu/pmdaemon.py).

Measured on 100 ms bins aligned on the cut (the simulator's intervals per subflow's path; the
emulator's capture of each client interface, TCP payload from the sender, pcap timestamps put on
the scenario's clock with emu.json `t0_unix`):
- `takeover_s`: from the cut to the end of the first bin in which the backup carries at least
  half its rate (50 % of 50 Mbit/s: it carries nothing before the cut in backup mode);
  `first_backup_s`: to the first payload on the backup after the cut (the emulator's first
  packet, the simulator's 1 ms timeline).
- `back_s`: from the return to the end of the first bin in which the primary carries at least
  half its mean rate of the 2 s before the cut; `first_primary_s` as above.
- `received_mb`: bytes the application received (iperf3's receiver; the simulator's delivered);
  `dup_b`: data bytes that reached the
  receiver more than once (the simulator's duplicate_bytes; the kernel's MPTcpExtDuplicateData
  on the receiver, a count of segments, shown as such).

`--direction upload` makes the client the sender (the capture counts the client's payload):
then the sender's own link goes down, and its transmissions fail locally through the outage.

    sudo .venv/bin/python bench/pm_compare.py [--runs N] [--policies kernel,fast-failback]
        [--direction upload] [--out FILE.json] [--keep DIR] [--sim-only]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import mmpath
import mmpath.emu
from mmpath.reproduce import xpm

CASE = xpm.CASES["cut-drop"]
CUT_S, BACK_S = CASE.event_s, CASE.back_s
POLICIES = xpm.POLICIES

DIRECTION = ["download"]  # --direction: the data's way (upload: the client sends)


def scenario(policy: str) -> dict:
    sc = xpm.scenario(CASE, policy)
    sc["flow"][0]["direction"] = DIRECTION[0]
    return sc


def run_sim(policy: str) -> dict:
    sc = scenario(policy)
    sc["timeline"] = {"sample_ms": 1}
    res = mmpath.run(sc)
    m, _ = xpm.sim_measures(res, CASE)
    m["dup_b"] = m.pop("duplicates")
    m["pm"] = res.summary["flows"][0].get("path_manager")
    return m


def run_emu(policy: str, keep: Path | None) -> dict:
    out = (keep / f"emu-{policy}") if keep else Path(tempfile.mkdtemp(prefix="pm-compare-")) / "out"
    mmpath.emu.run(scenario(policy), out=out)
    m, _ = xpm.emu_measures(out, CUT_S, BACK_S, download=DIRECTION[0] == "download")
    m["dup_segments"] = m.pop("duplicates")
    meta = json.loads((out / "emu.json").read_text())
    pm = meta.get("path_manager") or {}
    m.update({"drop_windows": (meta.get("outages") or {}).get("primary", {}).get("windows"),
              "pm_actions": [a for a in pm.get("actions", []) if a.get("source") == "policy"],
              "out": str(out) if keep else None})
    return m


def _fmt(v) -> str:
    return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1, help="emulated runs per policy (default 1)")
    ap.add_argument("--policies", default=",".join(POLICIES), help="comma-separated (default: all four)")
    ap.add_argument("--out", help="write every run's measures to this JSON file")
    ap.add_argument("--keep", help="keep the emulator's output folders under this folder")
    ap.add_argument("--sim-only", action="store_true", help="the simulator only (no root needed)")
    ap.add_argument("--direction", choices=("download", "upload"), default="download",
                    help="the data's way (default download: the server sends)")
    a = ap.parse_args()
    DIRECTION[0] = a.direction
    policies = [p.strip() for p in a.policies.split(",") if p.strip()]
    bad = [p for p in policies if p not in POLICIES]
    if bad:
        print(f"error: --policies: unknown {bad[0]!r} (allowed: {', '.join(POLICIES)})", file=sys.stderr)
        return 2
    if not a.sim_only and os.geteuid() != 0:
        print("error: the emulator needs root (sudo); --sim-only runs the simulator alone", file=sys.stderr)
        return 2
    keep = Path(a.keep) if a.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    rows = []
    for p in policies:
        rows.append({"policy": p, "engine": "sim", **run_sim(p)})
        print(json.dumps(rows[-1]), flush=True)
    for r in range(0 if a.sim_only else a.runs):
        for p in policies:  # alternating, so that the machine's load falls on every policy alike
            rows.append({"policy": p, "engine": "kernel", "run": r, **run_emu(p, keep)})
            print(json.dumps(rows[-1]), flush=True)
    cols = ("takeover_s", "first_backup_s", "back_s", "first_primary_s", "received_mb")
    print("\n| policy | engine | " + " | ".join(cols) + " | duplicates |")
    print("|---|---|" + "---|" * (len(cols) + 1))
    for row in rows:
        dup = f"{row['dup_b']} B" if "dup_b" in row else f"{row['dup_segments']} seg"
        print(f"| {row['policy']} | {row['engine']} | " + " | ".join(_fmt(row.get(c)) for c in cols) + f" | {dup} |")
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
