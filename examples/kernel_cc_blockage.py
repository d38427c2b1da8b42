"""Seed 003's blockage experiment (003-blockage) in both engines: the simulator's Linux 4.10 TCP model
and this machine's real kernel (`mmpath emu run`, root), on the same scenario: an 11ad download at
50 ms base RTT with buffers autotuned up to 32 MB, the beam blocked for 5 s at t = 30 s.

For each congestion control it prints, per engine, the time to re-saturate (issue 5's metric:
from the link's return until the 1 s mean is back to 90 % of the 2 s before the blockage) and the
window 5 s after the link's return relative to the window before the blockage (the poster: Cubic's
"cwnd stays low long after the MCS is back"). The emulated window is the sender's `ss` samples
(the analyzer's timeline of ss.log).

    sudo .venv/bin/python examples/kernel_cc_blockage.py [--cc cubic bbr] [--seed 1] [--out DIR]

Each emulated run takes its scenario's 65 s in real time. docs/models.md (Congestion control,
003-blockage) records what it showed.
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import numpy as np
import pandas as pd

import mmpath
import mmpath.emu
from mmpath import metrics
from mmpath.reproduce import seed003

BLOCK_S = seed003.BLOCK_S["long"]
AT = seed003.BLOCK_AT_S
RUN_S = seed003.BLOCK_RUN_S


def _cwnd_ratio(t: np.ndarray, cwnd: np.ndarray, restored: float) -> float:
    pre = (t >= AT - 2.0) & (t < AT)
    after = np.flatnonzero(t >= restored + 5.0)
    if not pre.any() or not len(after):
        return float("nan")
    return float(cwnd[after[0]] / np.nanmean(cwnd[pre]))


def simulated(cfg: dict, seed: int) -> dict:
    res = mmpath.run(cfg, seed=seed)
    tl = res.timeline
    tt, up = tl["t_s"].to_numpy(float), tl["link_up"].to_numpy(bool)
    down = np.flatnonzero(~up & (tt >= AT - 1e-9))
    restored = float(tt[down[-1] + 1])
    t, mbps = seed003._bins(res, RUN_S)
    return {"restored_s": restored,
            "resat_s": metrics.resaturation_time(t, mbps, restored, pre_start_s=AT - 2.0, pre_end_s=AT),
            "cwnd_ratio": _cwnd_ratio(tt, tl["cwnd_bytes"].to_numpy(float), restored),
            "mean_mbps": float(res.summary["flows"][0]["goodput_mbps"])}


def emulated(cfg: dict, seed: int, out: Path) -> dict:
    res = mmpath.emu.run(cfg, seed=seed, out=out, capture=True)
    cap = res.capacities["11ad"]
    cm = np.asarray(cap.mbps, float)
    ct = np.arange(len(cm)) * cap.bin_s
    down = np.flatnonzero((cm <= 0) & (ct >= AT - 1e-9))
    restored = float(ct[down[-1] + 1])
    t, mbps = seed003._bins(res, RUN_S)  # EmuResult.intervals has the simulator's t_s / mbps
    tl = pd.read_parquet(out / "analysis" / "timeline.parquet")
    tl = tl.dropna(subset=["cwnd_bytes"])
    # The data connection: the one whose window grew (iperf3's control connection idles at 10).
    data = tl.groupby("flow")["cwnd_bytes"].max().idxmax()
    tl = tl[tl["flow"] == data]
    return {"restored_s": restored,
            "resat_s": metrics.resaturation_time(t, mbps, restored, pre_start_s=AT - 2.0, pre_end_s=AT),
            "cwnd_ratio": _cwnd_ratio(tl["t_s"].to_numpy(float), tl["cwnd_bytes"].to_numpy(float), restored),
            "mean_mbps": res.goodput_mbps,
            "delay_line_late_max_ms": max(q["late_max_us"] for q in res.meta["delay_line"]["queues"]) / 1e3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", nargs="+", default=["cubic", "bbr"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("mmpath-out/kernel-cc-blockage"))
    a = ap.parse_args()
    rows = []
    for cc in a.cc:
        cfg = seed003.scenario(cc, 50.0, "large", RUN_S,
                               events=[{"kind": "blockage", "t_s": AT, "duration_s": BLOCK_S}])
        # Autotuned buffers up to 32 MB in both engines: a namespace cannot raise the host's
        # net.core.rmem_max for a 32 MB SO_RCVBUF (docs/emulate.md); both are over 2 x the BDP.
        cfg["flow"][0]["tcp"].update(rcvbuf_bytes="auto", sndbuf_bytes="auto")
        rows.append({"cc": cc, "engine": "simulation (Linux 4.10 model)", **simulated(cfg, a.seed)})
        rows.append({"cc": cc, "engine": f"emulation (Linux {platform.release()})",
                     **emulated(cfg, a.seed, a.out / cc)})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()
