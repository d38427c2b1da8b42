"""The path-manager policies in the simulator and on the real kernel, side by side (issue 28;
docs/path-manager.md, "Simulator and kernel, side by side"). Needs root for the kernel's half
(`--sim-only` runs the simulator's alone).

One scenario (SCENARIO below): a dual-path MPTCP download in backup mode over wired paths, primary
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
  packet, the simulator's first bin with bytes: a 0.1 s resolution there).
- `back_s`: from the return to the end of the first bin in which the primary carries at least
  half its mean rate of the 2 s before the cut; `first_primary_s` as above.
- `received_mb`: bytes the application received (iperf3's receiver; the simulator's delivered);
  `lost_b`: sent by the application and not received (iperf3: sender bytes - receiver bytes; 0
  in the simulator, whose oracle checks the data stream); `dup_b`: data bytes that reached the
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

import numpy as np

import mmpath
import mmpath.emu
from mmpath.analyze.pcap.packets import ip_str, read_packets

CUT_S, BACK_S, DURATION_S = 5.0, 10.0, 14.0
BIN_S = 0.1
PRE_S = 2.0
POLICIES = ("kernel", "fast-failback", "link-aware-backup", "recreate")
RATES = (100.0, 50.0)
SERVER = "10.198.0.1"  # python/mmpath/emu/netns.py SERVER_ADDR

SCENARIO = {
    "name": "pm-compare", "duration_s": DURATION_S, "seed": 1, "backbone": {"enabled": False},
    "path": [
        {"name": "primary", "technology": "wired", "rate_mbps": RATES[0], "delay_ms": 5.0,
         "schedule": [{"t_s": CUT_S, "up": False, "drop": True}, {"t_s": BACK_S, "up": True}]},
        {"name": "backup", "technology": "wired", "rate_mbps": RATES[1], "delay_ms": 10.0},
    ],
    "flow": [{"name": "dl", "kind": "mptcp", "mode": "backup", "kernel": "linux-upstream",
              "scheduler": "default", "cc": "cubic", "direction": "download", "path_manager": "kernel"}],
}


DIRECTION = ["download"]  # --direction: the data's way (upload: the client sends)


def scenario(policy: str) -> dict:
    sc = json.loads(json.dumps(SCENARIO))
    sc["flow"][0]["path_manager"] = policy
    sc["flow"][0]["direction"] = DIRECTION[0]
    return sc


def _bins() -> np.ndarray:
    return np.arange(0.0, DURATION_S + 1e-9, BIN_S)


def measures(edges: np.ndarray, per_path: list[np.ndarray], first: list[float | None]) -> dict:
    """per_path[k][i]: bytes path k carried in [edges[i], edges[i+1]); first: the first payload
    on the backup after the cut and on the primary after the return (None: none)."""
    mbps = [b * 8 / 1e6 / BIN_S for b in per_path]
    start = edges[:-1]
    pre = mbps[0][(start >= CUT_S - PRE_S - 1e-9) & (start < CUT_S - 1e-9)].mean()

    def first_bin(k: int, frm: float, need: float) -> float | None:
        ok = np.flatnonzero((start >= frm - 1e-9) & (mbps[k] >= need))
        return None if not ok.size else round(float(start[ok[0]] + BIN_S - frm), 3)

    return {"pre_cut_mbps": round(float(pre), 1),
            "takeover_s": first_bin(1, CUT_S, 0.5 * RATES[1]),
            "first_backup_s": first[0], "back_s": first_bin(0, BACK_S, 0.5 * pre), "first_primary_s": first[1]}


def run_sim(policy: str) -> dict:
    sc = scenario(policy)
    sc["timeline"] = {"sample_ms": 1}
    res = mmpath.run(sc)
    iv = res.intervals
    iv = iv[iv["subflow"] >= 0]
    edges = _bins()
    per_path, first = [], []
    for k, (name, frm) in enumerate((("primary", None), ("backup", None))):
        sel = iv[iv["path"].astype(str) == name]
        b = np.zeros(len(edges) - 1)
        idx = np.clip(np.round(sel["t_s"].to_numpy(dtype=float) / BIN_S).astype(int), 0, len(b) - 1)
        np.add.at(b, idx, sel["bytes"].to_numpy(dtype=float))
        per_path.append(b)
    # The first delivery after the cut / return, from the 1 ms timeline (delivered_bytes is
    # cumulative per subflow).
    tl = res.timeline
    tl = tl[tl["subflow"] >= 0]
    for k, frm in ((1, CUT_S), (0, BACK_S)):
        sel = tl[tl["path"].astype(str) == ("primary", "backup")[k]]
        per_t = sel.groupby("t_s")["delivered_bytes"].sum()
        t = per_t.index.to_numpy(dtype=float)
        v = per_t.to_numpy(dtype=float)
        k0 = np.searchsorted(t, frm - 1e-9)
        rise = np.flatnonzero(v[k0:] > v[k0]) if k0 < len(t) else np.array([])
        first.append(None if not rise.size else round(float(t[k0 + rise[0]] - frm), 3))
    f = res.summary["flows"][0]
    out = measures(edges, per_path, first)
    out.update({"received_mb": round(float(f["bytes_delivered"]) / 1e6, 2),
                "dup_b": int(f.get("duplicate_bytes") or 0),
                "pm": f.get("path_manager")})
    return out


def _pcap_bytes(path: Path, t0_unix: float, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per bin, TCP payload bytes from the data's sender (the server in a download, the client
    in an upload) in a client-side capture; and the times of every such packet (scenario clock)."""
    from_server = DIRECTION[0] == "download"
    ts, sizes = [np.zeros(0)], [np.zeros(0)]
    # The capture keeps the headers only (traffic.py CAPTURE_SNAPLEN): the analyzer's reader
    # takes the payload's length from the IP total length.
    tcp, _udp, _stats = read_packets(path)
    for (src, *_ports), d in tcp.items():
        if (ip_str(src) == SERVER) == from_server:
            plen = np.array(d.plen, dtype=float)
            ts.append(np.array(d.ts)[plen > 0] - t0_unix)
            sizes.append(plen[plen > 0])
    ts_a, sz = np.concatenate(ts), np.concatenate(sizes)
    b, _ = np.histogram(ts_a, bins=edges, weights=sz)
    return b, ts_a


def run_emu(policy: str, keep: Path | None) -> dict:
    out = (keep / f"emu-{policy}") if keep else Path(tempfile.mkdtemp(prefix="pm-compare-")) / "out"
    mmpath.emu.run(scenario(policy), out=out)
    return emu_measures(out, keep is not None)


def _dup_segments(meta: dict) -> int:
    """The receiver's MPTCP DuplicateData counter (the client in a download, the server in an
    upload; emu.json names the counters without nstat's `MPTcpExt` prefix: an earlier reading
    under the prefixed name always found 0)."""
    c = meta["kernel_mptcp_counters"].get("client" if DIRECTION[0] == "download" else "server", {})
    return int(c.get("DuplicateData", c.get("MPTcpExtDuplicateData", 0)))


def emu_measures(out: Path, keep: bool = True) -> dict:
    meta = json.loads((out / "emu.json").read_text())
    t0 = float(meta["t0_unix"])
    edges = _bins()
    per_path, times = [], []
    for name in ("primary", "backup"):
        b, ts = _pcap_bytes(out / f"{name}.pcap", t0, edges)
        per_path.append(b)
        times.append(ts)
    first = []
    for k, frm in ((1, CUT_S), (0, BACK_S)):
        after = times[k][times[k] >= frm]
        first.append(None if not after.size else round(float(after.min() - frm), 3))
    doc = json.loads((out / "iperf3-dl.json").read_text())
    recv = int(doc["end"]["sum_received"]["bytes"])
    m = measures(edges, per_path, first)
    pm = meta.get("path_manager") or {}
    m.update({"received_mb": round(recv / 1e6, 2),
              "dup_segments": _dup_segments(meta),
              "goodput_mbps": round(float(meta["goodput_mbps"]), 1),
              "drop_windows": (meta.get("outages") or {}).get("primary", {}).get("windows"),
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
