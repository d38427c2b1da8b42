"""Issue 26: does a run's memory stay flat however long it simulates?

Runs the bundled `blockage` scenario (dual-band MPTCP, 3 timeline rows per 10 ms sample) for each
of several simulated durations, each in a fresh child process, and reports that process's peak
resident memory (VmHWM, /proc/self/status):

- core:  the core alone (`mmpath._core.Simulation`), its records handed out in chunks of
         api.CHUNK_ROWS timeline rows and dropped (what the core itself holds);
- whole: `mmpath.api.simulate_to`, the whole run as `mmpath run --out DIR` does it (the timeline
         streamed to DIR/timeline.parquet and DIR/.intervals.parquet, then summary with
         metrics, intervals.csv, iperf3.json read from them; add --report for report.html and
         its plots); the last column is its peak when the simulation ended, before those files.

    .venv/bin/python bench/memory_bench.py [--durations 60,3600,86400] [--what core,whole] [--report]

Each line is printed as soon as its run ends; the last column is the peak against the first
duration's (1.00x = flat). A 24 h simulated run takes hours of wall time on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
what, duration, report, out = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
from mmpath import api
from mmpath.scenario import load_scenario
sc = load_scenario("blockage", {"duration_s": duration})
def hwm():
    status = open("/proc/self/status").read()
    return int(next(l for l in status.splitlines() if l.startswith("VmHWM:")).split()[1]) / 1024
run_peak = None
t0 = time.perf_counter()
if what == "core":
    from mmpath import _core
    sim = _core.Simulation(sc.json, sc.seed)
    step = api.CHUNK_ROWS / sim.timeline_rows_per_s
    t, rows = 0.0, 0
    while t < duration:
        t = min(duration, t + step)
        sim.run_until(t)
        rows += len(sim.drain()["timeline"]["t_s"])
    rows += len(sim.finish()["timeline"]["t_s"])
else:
    # api.simulate_to, with the peak noted between the simulation and the files written after it.
    from pathlib import Path
    from mmpath import outputs
    dest = Path(out)
    with outputs.system_arrow_pool(), outputs.staged_folder(dest) as tmp:
        res = api.simulate(sc, timeline_file=tmp / "timeline.parquet", intervals_file=tmp / api.INTERVALS_FILE)
        run_peak = hwm()
        outputs.write_run_files(res, tmp, report=report)
    import pyarrow.parquet as pq
    rows = pq.ParquetFile(dest / "timeline.parquet").metadata.num_rows
wall = time.perf_counter() - t0
print(json.dumps({"rows": rows, "wall_s": wall, "peak_mib": hwm(), "run_peak_mib": run_peak}))
"""


def measure(what: str, duration: float, report: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="mmpath-memory-bench-") as tmp:
        p = subprocess.run([sys.executable, "-c", CHILD, what, str(duration), "1" if report else "0", f"{tmp}/out"],
                           capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"memory_bench: {what} {duration:g} s failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--durations", default="60,3600,86400", help="simulated seconds, comma-separated")
    ap.add_argument("--what", default="core,whole", help="core, whole or both (comma-separated)")
    ap.add_argument("--report", action="store_true", help="whole: also write report.html and its plots")
    args = ap.parse_args()
    durations = [float(d) for d in args.durations.split(",")]
    print(f"# blockage scenario, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; peak RSS (VmHWM) per run",
          flush=True)
    print("| measured | simulated s | timeline rows | wall s | peak MiB | vs first | peak MiB during the run |", flush=True)
    print("|---|---:|---:|---:|---:|---:|---:|", flush=True)
    for what in args.what.split(","):
        first = None
        for d in durations:
            m = measure(what, d, args.report)
            first = first or m["peak_mib"]
            print(f"| {what} | {d:g} | {m['rows']:,} | {m['wall_s']:.1f} | {m['peak_mib']:.1f} | "
                  f"{m['peak_mib'] / first:.2f}x | {m['run_peak_mib'] or m['peak_mib']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
