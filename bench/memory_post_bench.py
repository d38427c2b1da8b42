"""Issue 26: the work after a run (summary metrics, intervals.csv, iperf3.json, report.html) on
a timeline of hours, without simulating hours.

memory_bench.py measures whole runs, which on a loaded machine take ~1 wall second or more per
simulated second. The core's memory is flat (memory_bench.py core, bench/README.md); what grew
with a run's length was the work after it. This bench isolates that work:

1. runs the bundled `blockage` scenario for 60 s into a folder (timeline.parquet and
   .intervals.parquet streamed, as `mmpath run` does);
2. for each duration asked for, writes the 60 s files repeated end to end (through
   outputs.TimelineFile as a run writes them, each copy's t_s shifted by 60 s; the link events repeated likewise: one blockage a
   minute) as the files of a run of that length (the scenario's duration_s set to it);
3. in a fresh child process per duration, builds the run's Result on those files (the 60 s
   run's summary, metrics removed), computes the flow metrics (api.add_flow_metrics, under
   outputs.system_arrow_pool as api.simulate_to runs them) and writes
   summary.json, intervals.csv, iperf3.json (and with --report report.html and its plots), and
   reports that process's peak resident memory (VmHWM).

    .venv/bin/python bench/memory_post_bench.py [--hours 0,6,24] [--report]

0 hours means the 60 s files as they are. The numbers in the files are not a real run's (the
repeated cumulative counters jump back every minute); the sizes are.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE_S = 60.0

CHILD = r"""
import json, sys, time
folder, seconds, report = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1"
from pathlib import Path
from mmpath import api, outputs
from mmpath.scenario import load_scenario
import pandas as pd
folder = Path(folder)
def hwm():
    status = open("/proc/self/status").read()
    return int(next(l for l in status.splitlines() if l.startswith("VmHWM:")).split()[1]) / 1024
t0 = time.perf_counter()
summary = json.loads((folder / "base-summary.json").read_text())
events = pd.read_pickle(folder / "events.pkl")
sc = load_scenario("blockage", {"duration_s": seconds})
res = api.Result(summary, outputs.TimelineFile(folder / api.INTERVALS_FILE),
                 outputs.TimelineFile(folder / "timeline.parquet"), events, sc)
# As api.simulate_to does it: pyarrow on the C library's allocator meanwhile (system_arrow_pool).
with outputs.system_arrow_pool():
    api.add_flow_metrics(res)
    out = folder  # (the timeline and intervals files are already there: not copied)
    outputs.write_run_files(res, out, report=report)
import pyarrow.parquet as pq
meta = pq.ParquetFile(folder / "timeline.parquet").metadata
print(json.dumps({"rows": meta.num_rows, "groups": meta.num_row_groups, "wall_s": time.perf_counter() - t0, "peak_mib": hwm(),
                  "iperf3_mib": (out / "iperf3.json").stat().st_size / 2**20}))
"""


def repeat(src: Path, dst: Path, seconds: float) -> None:
    """dst: src's timeline, intervals and events repeated to `seconds`; its summary for them."""
    import pandas as pd

    from mmpath import api, outputs

    copies = max(1, int(round(seconds / BASE_S)))
    dst.mkdir(parents=True)
    for name in ("timeline.parquet", api.INTERVALS_FILE):
        # Written as a run writes it (outputs.TimelineFile: row groups closed at their encoded
        # size), a batch of the 60 s file at a time.
        w = outputs.TimelineFile(dst / name)
        for k in range(copies):
            for frame in outputs.TimelineFile(src / name).groups():
                frame["t_s"] = frame["t_s"] + k * BASE_S
                w.write(frame)
        w.close()
    summary = json.loads((src / "summary.json").read_text())
    for flow in summary.get("flows", []):
        flow.pop("metrics", None)
    summary["sim_s"] = copies * BASE_S
    summary["scenario_config"]["duration_s"] = copies * BASE_S
    (dst / "base-summary.json").write_text(json.dumps(summary))
    ev = pd.read_pickle(src / "events.pkl")
    parts = [ev.assign(t_s=ev["t_s"] + k * BASE_S) for k in range(copies)]
    pd.concat(parts, ignore_index=True).to_pickle(dst / "events.pkl")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", default="0,6,24", help="lengths of timeline, hours, comma-separated (0: the 60 s run)")
    ap.add_argument("--report", action="store_true", help="also write report.html and its plots")
    args = ap.parse_args()
    from mmpath import api
    from mmpath.scenario import load_scenario

    print(f"# post-run work on `blockage` files repeated, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"report: {args.report}", flush=True)
    print("| timeline of | timeline rows | row groups | wall s | peak MiB | vs first | iperf3.json MiB |", flush=True)
    print("|---|---:|---:|---:|---:|---:|---:|", flush=True)
    with tempfile.TemporaryDirectory(prefix="mmpath-post-bench-") as tmp:
        base = Path(tmp) / "base"
        res = api.simulate_to(load_scenario("blockage", {"duration_s": BASE_S}), base, report=False)
        res.events.to_pickle(base / "events.pkl")
        first = None
        for h in (float(x) for x in args.hours.split(",")):
            seconds = h * 3600 if h > 0 else BASE_S
            folder = Path(tmp) / f"h{h:g}"
            repeat(base, folder, seconds)
            p = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(seconds), "1" if args.report else "0"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"memory_post_bench: {h:g} h failed:\n{p.stderr}")
            m = json.loads(p.stdout.strip().splitlines()[-1])
            first = first or m["peak_mib"]
            label = f"{h:g} h" if h > 0 else "60 s"
            print(f"| {label} | {m['rows']:,} | {m['groups']} | {m['wall_s']:.1f} | {m['peak_mib']:.1f} | {m['peak_mib'] / first:.2f}x | "
                  f"{m['iperf3_mib']:.1f} |", flush=True)
            import shutil

            shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
