#!/usr/bin/env python3
"""Issue 4's speed check: a 60 s dual-band MPTCP download (802.11ad MCS 8 + 802.11ac 80 MHz 2x2,
the bundled `blockage` scenario without its blockage) timed in the Rust core, side by side with
the single-path reference (the bundled `ns3-reference` scenario, CUBIC, MTU 7912, 60 s), in one
run on this machine. Reports wall seconds and the ratio; target: the MPTCP run under 2 s. Timings
are never asserted in tests.

    .venv/bin/python bench/mptcp_bench.py [--repeat 3] [--update-readme]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
README = BENCH / "README.md"
START, END = "<!-- mptcp-bench:start -->", "<!-- mptcp-bench:end -->"

CASES = [
    ("single-path TCP (ns3-reference, CUBIC, MTU 7912)", "ns3-reference", {"duration_s": 60.0}),
    ("MPTCP upstream default scheduler", "blockage",
     {"duration_s": 60.0, "path.0.event": [], "flow.0.kernel": "linux-upstream"}),
    ("MPTCP v0.9x minRTT", "blockage", {"duration_s": 60.0, "path.0.event": []}),
    ("MPTCP v0.9x MuSher", "blockage",
     {"duration_s": 60.0, "path.0.event": [], "flow.0.scheduler": "musher", "flow.0.ratio": 70}),
]


def core_binary() -> Path:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "mmpath-sim", "--example", "run_json"],
                   cwd=REPO, check=True)
    return REPO / "target" / "release" / "examples" / "run_json"


def run(exe: Path, scenario_json: str, seed: int) -> dict:
    f = BENCH / "results" / "mptcp-bench-scenario.json"
    f.parent.mkdir(exist_ok=True)
    f.write_text(scenario_json)
    out = subprocess.run([str(exe), str(f), str(seed)], capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{"):out.rindex("}") + 1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the median wall time is reported")
    ap.add_argument("--update-readme", action="store_true", help="rewrite the section in bench/README.md")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "python"))
    from mmpath.scenario import load_scenario

    exe = core_binary()
    rows = []
    for label, name, overrides in CASES:
        sc = load_scenario(name, overrides)
        runs = [run(exe, sc.json, sc.seed) for _ in range(max(args.repeat, 1))]
        wall = statistics.median(r["wall_s"] for r in runs)
        rows.append({"case": label, "wall_s": wall, "events": runs[0]["events"],
                     "goodput_mbps": runs[0]["flows"][0]["goodput_mbps"]})
        print(f"{label}: {wall:.3f} s wall, {runs[0]['events']:,} events, "
              f"{rows[-1]['goodput_mbps']:.1f} Mbit/s", file=sys.stderr)
    ref = rows[0]["wall_s"]
    lines = ["| case (60 s simulated) | wall s | vs single path | events | Mevents/s | goodput Mbit/s |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['wall_s']:.3f} | {r['wall_s'] / ref:.2f}x | {r['events']:,} | "
                     f"{r['events'] / r['wall_s'] / 1e6:.1f} | {r['goodput_mbps']:.1f} |")
    table = "\n".join(lines)
    print(table)
    if args.update_readme:
        text = README.read_text(encoding="utf-8")
        block = (f"{START}\nMedian of {args.repeat} runs of target/release/examples/run_json on this machine "
                 f"(`.venv/bin/python bench/mptcp_bench.py --update-readme`); target: MPTCP under 2 s.\n\n"
                 f"{table}\n{END}")
        if START in text:
            pre, _, rest = text.partition(START)
            _, _, post = rest.partition(END)
            text = pre + block + post
        else:
            text = text.rstrip("\n") + "\n\n## Dual-band MPTCP, 60 s (issue 4)\n\n" + block + "\n"
        README.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
