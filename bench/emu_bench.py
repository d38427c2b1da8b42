#!/usr/bin/env python3
"""What `mmpath emu run` reproduces faithfully on this machine, measured side by side in one run
(needs root, as the emulator does; docs/emulate.md):

1. Rate ceiling of the shaper: one wired path (bench/emu-wired.toml, no delay) at each capacity
   and MTU, one TCP download for --seconds: the emulated goodput (iperf3) against the simulated
   one, so the rate from which the emulation stops following the link shows (this machine's CPU
   forwards, shapes, captures and runs both iperf3 ends; and the capacity probe offers at most
   emu/capacity.py PROBE_MBPS, 5000 Mbit/s, so the 6000 Mbit/s case shows that cap).
2. Delay fidelity: the same path at 1000 Mbit/s with backbone.delay_ms set (the emulator's delay
   line, mmpath-delay), a light TCP flow (app = "rate"): the RTT the sending kernel measured
   (`ss -tinO` every 50 ms, the run's ss.log: its smallest `minrtt` and median `rtt`) against the
   configured base RTT and the simulator's.
3. Overhead: wall seconds of a whole `mmpath emu run` (capacity probe, namespaces, shaper, delay
   line, captures, analysis) per emulated second, for the bundled `blockage` scenario.

Timings are never asserted in tests. Writes bench/results/emu-latest.json and, with
--update-readme, the tables between the emu-bench markers of bench/README.md.

    sudo .venv/bin/python bench/emu_bench.py [--repeat 3] [--seconds 4] [--update-readme]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
README = BENCH / "README.md"
SCENARIO = BENCH / "emu-wired.toml"
START, END = "<!-- emu-bench:start -->", "<!-- emu-bench:end -->"
# The light flow of the delay cases: well under the link's 1000 Mbit/s, so the queue stays short
# and the RTT is the propagation's (iperf3 -b writes its 128 KiB blocks in bursts: one burst
# takes ~1 ms at 1000 Mbit/s, which the median RTT may see; the smallest does not).
LIGHT_MBPS = 20.0
DELAY_RATE_MBPS = 1000.0


def sh(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def machine() -> dict:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "cores": os.cpu_count(), "cpu": cpu,
            "kernel": platform.release(), "iperf3": (sh(["iperf3", "--version"]).splitlines() or ["?"])[0],
            "commit": sh(["git", "-C", str(REPO), "rev-parse", "--short=10", "HEAD"]),
            "dirty": bool(sh(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"]))}


def sender_rtt_ms(ss_log: Path) -> dict:
    """The data sender's RTT from an emulator run's ss.log: the socket that had the most bytes
    acknowledged (not iperf3's control connection, nor the receiving end, whose `rtt:` times its
    own few bytes), its smallest `minrtt` and the median of its `rtt` (srtt) samples."""
    from mmpath.analyze.ss import parse_socket

    socks: dict[str, list[dict]] = {}
    for line in ss_log.read_text(encoding="utf-8", errors="replace").splitlines():
        r = parse_socket(line) if line and not line.startswith("#") else None
        if r and r.get("state") == "ESTAB":
            socks.setdefault(f"{r['local']}>{r['peer']}", []).append(r)
    if not socks:
        return {"min_rtt_ms": None, "srtt_median_ms": None, "samples": 0}
    rows = max(socks.values(), key=lambda rs: max(r.get("bytes_acked", 0) for r in rs))
    mins = [r["minrtt_ms"] for r in rows if "minrtt_ms" in r]
    srtt = [r["rtt_ms"] for r in rows if "rtt_ms" in r]
    return {"min_rtt_ms": min(mins) if mins else None, "srtt_median_ms": statistics.median(srtt) if srtt else None,
            "samples": len(srtt)}


def sim_flow(overrides: dict) -> dict:
    """The simulator's goodput and RTTs for the same scenario and overrides: its smallest RTT
    sample (summary `rtt_ms.min`) and the median of the timeline's srtt (docs/outputs.md)."""
    import mmpath

    res = mmpath.run(str(SCENARIO), overrides=overrides)
    f = res.summary["flows"][0]
    srtt = res.timeline.loc[res.timeline["flow"] == f["name"], "srtt_ms"].dropna()
    return {"goodput_mbps": float(f["goodput_mbps"]), "min_rtt_ms": (f.get("rtt_ms") or {}).get("min"),
            "srtt_median_ms": float(srtt.median()) if len(srtt) else None}


def emu(overrides: dict, out: Path | None, scenario: str | None = None, capture: bool = True):
    import mmpath.emu

    return mmpath.emu.run(scenario or str(SCENARIO), overrides=overrides, out=out, capture=capture)


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def rate_ceiling(rates: list[float], mtus: list[int], seconds: float, repeat: int) -> list[dict]:
    rows = []
    for mtu in mtus:
        for rate in rates:
            ov = {"duration_s": seconds, "path.0.rate_mbps": rate, "path.0.mtu_bytes": mtu}
            sim = sim_flow(ov)
            got, shaped, caps = [], [], []
            for _ in range(repeat):
                r = emu(ov, None)
                got.append(r.goodput_mbps)
                shaped.append(r.meta["path_mbps"]["wire"])
                caps.append(r.meta["capacity_mean_mbps"]["wire"])
            # wire_tx_mbps: the shaped interface's tx_bytes per active second (emu.json path_mbps),
            # kept in the JSON only: veth counts a GSO packet's headers once, not per segment.
            row = {"mtu": mtu, "rate_mbps": rate, "shaper_mbps": caps[0], "sim_mbps": sim["goodput_mbps"],
                   "emu_mbps": med(got), "emu_runs_mbps": got, "wire_tx_mbps": med(shaped)}
            row["ratio"] = row["emu_mbps"] / row["sim_mbps"]
            print(f"rate {rate:g} Mbit/s MTU {mtu}: emulated {row['emu_mbps']:.0f} "
                  f"({', '.join(f'{g:.0f}' for g in got)}), simulated {row['sim_mbps']:.0f}", file=sys.stderr)
            rows.append(row)
    return rows


def delay_fidelity(delays: list[float], seconds: float, repeat: int) -> list[dict]:
    rows = []
    for d in delays:
        ov = {"duration_s": seconds, "path.0.rate_mbps": DELAY_RATE_MBPS, "backbone.delay_ms": d,
              "flow.0.app": "rate", "flow.0.rate_mbps": LIGHT_MBPS}
        sim = sim_flow(ov)
        runs = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="mmpath-emubench-") as tmp:
                out = Path(tmp) / "out"
                r = emu(ov, out)
                rtt = sender_rtt_ms(out / "ss.log")
                line = r.meta.get("delay_line") or {}
                rtt.update({"goodput_mbps": r.goodput_mbps, "realtime": line.get("realtime"),
                            "late_mean_ms": _late(line, "mean"), "late_max_ms": _late(line, "max")})
                runs.append(rtt)
        row = {"one_way_ms": d, "base_rtt_ms": 2 * d, "sim_min_rtt_ms": sim["min_rtt_ms"],
               "sim_srtt_median_ms": sim["srtt_median_ms"], "emu_min_rtt_ms": _med_of(runs, "min_rtt_ms"),
               "emu_srtt_median_ms": _med_of(runs, "srtt_median_ms"), "late_mean_ms": _med_of(runs, "late_mean_ms"),
               "late_max_ms": max((x["late_max_ms"] for x in runs if x["late_max_ms"] is not None),
                                  default=float("nan")),
               "realtime": all(x["realtime"] for x in runs), "runs": runs}
        print(f"delay {d:g} ms one way: kernel min RTT {row['emu_min_rtt_ms']:.2f} ms, median srtt "
              f"{row['emu_srtt_median_ms']:.2f} ms (configured {2 * d:g})", file=sys.stderr)
        rows.append(row)
    return rows


def _med_of(runs: list[dict], key: str) -> float:
    vals = [x[key] for x in runs if x[key] is not None]
    return med(vals) if vals else float("nan")


def _late(line: dict, which: str) -> float | None:
    """The delay line's release lateness (ms) over its queues, from emu.json `delay_line`."""
    vals = [q[f"late_{which}_us"] / 1000.0 for q in line.get("queues", []) if q.get(f"late_{which}_us") is not None]
    if not vals:
        return None
    return max(vals) if which == "max" else statistics.mean(vals)


OVERHEAD_CASES = [
    ("blockage, default (captures, ss, analysis)", []),
    ("blockage, --no-capture", ["--no-capture"]),
]
OVERHEAD_SET = ["--set", "flow.0.kernel=linux-upstream", "--set", "flow.0.scheduler=default"]


def overhead(repeat: int) -> list[dict]:
    exe = str(Path(sys.executable).parent / "mmpath")
    rows = []
    for label, extra in OVERHEAD_CASES:
        walls, traffic = [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="mmpath-emubench-") as tmp:
                out = Path(tmp) / "out"
                cmd = [exe, "emu", "run", "blockage", *OVERHEAD_SET, *extra, "--out", str(out)]
                t = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                walls.append(time.perf_counter() - t)
                meta = json.loads((out / "emu.json").read_text())
                traffic.append(float(meta["wall_s"]))
        emulated = _blockage_seconds()
        row = {"case": label, "command": " ".join(["mmpath", *cmd[1:-2], "--out", "DIR"]), "emulated_s": emulated,
               "wall_s": med(walls), "traffic_s": med(traffic), "walls": walls}
        row["per_emulated_s"] = row["wall_s"] / emulated
        row["outside_traffic_s"] = row["wall_s"] - row["traffic_s"]
        print(f"{label}: {row['wall_s']:.1f} s wall for {emulated:g} s emulated", file=sys.stderr)
        rows.append(row)
    return rows


def _blockage_seconds() -> float:
    from mmpath.scenario import load_scenario

    return float(load_scenario("blockage").duration_s)


def tables(info: dict, args: argparse.Namespace, rate_rows, delay_rows, over_rows) -> str:
    m = info["machine"]
    out = [f"Measured {m['date']} on {m['cores']} cores, {m['cpu']}, Linux {m['kernel']}, {m['iperf3']}; mmpath "
           f"commit {m['commit']}{' (uncommitted changes)' if m['dirty'] else ''}. Command: `sudo .venv/bin/python "
           f"bench/emu_bench.py {' '.join(info['argv'])}` ({info['bench_wall_s'] / 60:.1f} min).", ""]
    if rate_rows:
        out += [f"**Rate ceiling** (`mmpath emu run bench/emu-wired.toml --set duration_s={args.seconds:g} --set "
                "path.0.rate_mbps=R --set path.0.mtu_bytes=M`, captures on; emulated: median of "
                f"{args.repeat} runs, the runs in brackets; simulated: `mmpath run` with the same --set):", "",
                "| MTU | link Mbit/s | capacity Mbit/s | simulated Mbit/s | emulated Mbit/s | emulated / simulated |",
                "|---:|---:|---:|---:|---:|---:|"]
        for r in rate_rows:
            out.append(f"| {r['mtu']} | {r['rate_mbps']:g} | {r['shaper_mbps']:.0f} | {r['sim_mbps']:.0f} | "
                       f"{r['emu_mbps']:.0f} ({', '.join(f'{g:.0f}' for g in r['emu_runs_mbps'])}) | "
                       f"{r['ratio']:.2f} |")
        out.append("")
    if delay_rows:
        out += [f"**Delay** (`... --set path.0.rate_mbps={DELAY_RATE_MBPS:g} --set backbone.delay_ms=D --set "
                f"flow.0.app=rate --set flow.0.rate_mbps={LIGHT_MBPS:g}`, {args.seconds:g} s; emulated: the "
                f"sender's `ss -tinO` in the run's ss.log, median of {args.repeat} runs; the delay line's "
                "release lateness from emu.json `delay_line`: median of the runs' means / largest in any run):", "",
                "| backbone delay_ms | base RTT ms | simulated min / median RTT ms | kernel minrtt ms | "
                "kernel median srtt ms | delay line late mean / max ms |",
                "|---:|---:|---:|---:|---:|---:|"]
        for r in delay_rows:
            out.append(f"| {r['one_way_ms']:g} | {r['base_rtt_ms']:g} | {_ms(r['sim_min_rtt_ms'])} / "
                       f"{_ms(r['sim_srtt_median_ms'])} | {_ms(r['emu_min_rtt_ms'])} | {_ms(r['emu_srtt_median_ms'])} | "
                       f"{_ms(r['late_mean_ms'], 3)} / {_ms(r['late_max_ms'])} |")
        out.append("")
    if over_rows:
        out += [f"**Overhead** (`mmpath emu run blockage {' '.join(OVERHEAD_SET)}"
                f" --out DIR`, timed around the process, median of {args.repeat}; traffic: emu.json `wall_s`, "
                "the shaper's start to the last iperf3's end):", "",
                "| case | emulated s | wall s | traffic s | outside the traffic s | wall s per emulated s |",
                "|---|---:|---:|---:|---:|---:|"]
        for r in over_rows:
            out.append(f"| {r['case']} | {r['emulated_s']:g} | {r['wall_s']:.1f} | {r['traffic_s']:.1f} | "
                       f"{r['outside_traffic_s']:.1f} | {r['per_emulated_s']:.2f} |")
    return "\n".join(out).rstrip("\n")


def _ms(x, digits: int = 2) -> str:
    return "-" if x is None or x != x else f"{x:.{digits}f}"


def _floats(s: str) -> list[float]:
    return [float(x) for x in s.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="100,500,1000,2000,4000,6000", help="link capacities, Mbit/s (comma-separated)")
    ap.add_argument("--mtus", default="1500,7912", help="path MTUs (comma-separated)")
    ap.add_argument("--delays", default="1,10,25", help="backbone one-way delays, ms (comma-separated)")
    ap.add_argument("--seconds", type=float, default=4.0, help="emulated seconds per rate and delay case")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the median is reported")
    ap.add_argument("--skip", default="", help="parts to leave out: rate,delay,overhead")
    ap.add_argument("--update-readme", action="store_true", help="rewrite the section in bench/README.md")
    args = ap.parse_args(argv)
    try:
        rates, delays = _floats(args.rates), _floats(args.delays)
        mtus = [int(x) for x in args.mtus.split(",") if x.strip()]
    except ValueError as e:
        ap.error(f"--rates, --mtus and --delays take comma-separated numbers ({e})")
    if args.repeat < 1 or args.seconds < 1:
        ap.error("--repeat must be at least 1 and --seconds at least 1 (the emulator's shortest flow)")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - {"rate", "delay", "overhead"}:
        ap.error(f"--skip takes rate, delay, overhead (got {args.skip})")
    if os.geteuid() != 0:
        print("emu_bench: needs root, as `mmpath emu run` does (namespaces, tc): sudo .venv/bin/python "
              "bench/emu_bench.py", file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO / "python"))
    t0 = time.perf_counter()
    info = {"machine": machine(), "argv": argv if argv is not None else sys.argv[1:]}
    rate_rows = [] if "rate" in skip else rate_ceiling(rates, mtus, args.seconds, args.repeat)
    delay_rows = [] if "delay" in skip else delay_fidelity(delays, args.seconds, args.repeat)
    over_rows = [] if "overhead" in skip else overhead(args.repeat)
    info["bench_wall_s"] = time.perf_counter() - t0
    left = [n for n in sh(["ip", "netns", "list"]).split() if n.startswith("mmpath")]
    if left:
        print(f"emu_bench: namespaces left behind: {' '.join(left)}", file=sys.stderr)
    info.update({"rate": rate_rows, "delay": delay_rows, "overhead": over_rows})
    (BENCH / "results").mkdir(exist_ok=True)
    (BENCH / "results" / "emu-latest.json").write_text(json.dumps(info, indent=2, default=str) + "\n")
    table = tables(info, args, rate_rows, delay_rows, over_rows)
    print(table)
    if args.update_readme:
        from readme_block import replace_block

        replace_block(README, START, END, table, "The emulator on this machine")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
