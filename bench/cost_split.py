#!/usr/bin/env python3
"""Where the dual-band MPTCP bench's instructions go, part by part, beside the single path's
(issue 26: is MPTCP at 2x the single path within reach?).

Runs the cases of bench/mptcp_bench.py (and its `--per-link` ones: TCP alone on the 11ad link,
then on the 11ac link) for their first S simulated seconds under valgrind's callgrind
(Debian package valgrind), reads `callgrind_annotate`'s instructions per source line's file and
puts each file in one part of the core: (a) the 802.11 medium, (b) the MPTCP connection and its
schedulers, (c) the event queue, the TCP endpoints, the wired link, and the simulation's own
dispatch, routing and records. Code of the standard library inlined into a function counts in
the part of the function it was inlined into. The last column says what the MPTCP case would
cost against the single path without (b), and without (a) and (b): the floor of the ratio that
no change to the MPTCP connection or the MAC alone can go below.

    .venv/bin/python bench/cost_split.py [--seconds 3] [--case minrtt]

Instruction counts, not times: they do not move with the machine's load (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SRC = str(REPO / "crates" / "mmpath-sim" / "src") + "/"

PARTS = [
    "(a) 802.11 medium: MAC, PER, Block Ack reorder, hosts",
    "(b) MPTCP connection, schedulers, coupled CC",
    "(c) event queue",
    "TCP sender and receiver",
    "wired link (backbone; the single path's link)",
    "simulation: dispatch, routing, endpoints, records",
    "other: set-up, summary, libm, allocator",
]
MEDIUM_FILES = ("reorder.rs", "per.rs", "radio.rs", "arf.rs", "channel.rs", "spectrum.rs")


def part_of(path: str, function: str) -> str:
    """The part of the core that one `callgrind_annotate` row (a source file, and the function
    its lines were compiled into) belongs to."""
    rel = path[len(SRC):] if path.startswith(SRC) else ""
    if not rel:
        # Inlined library code, or a file outside the crate: the function it ran in decides.
        if "EventQueue" in function:
            return PARTS[2]
        m = re.search(r"mmpath_sim::([a-z_]+(?:::[a-z_]+)?)", function)
        if not m:
            return PARTS[6]
        rel = m.group(1).replace("::", "/") + ".rs"
    if rel.startswith(("mptcp", "sim/mptcp")):
        return PARTS[1]
    if rel.startswith(("link/medium", "link/phy", "energy")) or rel.split("/")[-1] in MEDIUM_FILES:
        return PARTS[0]
    if rel.startswith("engine"):
        return PARTS[2]
    if rel.startswith("tcp"):
        return PARTS[3]
    if rel.startswith("link/wire"):
        return PARTS[4]
    if rel.startswith(("sim", "link", "trace")):
        return PARTS[5]
    return PARTS[6]


def split(exe: Path, scenario: dict, seed: int, seconds: float, tmp: Path) -> Counter:
    sc = dict(scenario, duration_s=seconds)
    for fl in sc.get("flow", []):
        if (fl.get("stop_s") or 0) > seconds:
            fl["stop_s"] = seconds
    js, out = tmp / "scenario.json", tmp / "callgrind.out"
    js.write_text(json.dumps(sc))
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(exe), str(js), str(seed)],
                   capture_output=True, text=True, check=True)
    return parts(out)


def parts(out: Path) -> Counter:
    """Instructions per part in one callgrind output file (its function list: self cost per
    source file and function; no annotated source, whose lines would count twice)."""
    ann = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", str(out)],
                         capture_output=True, text=True, check=True).stdout
    got: Counter = Counter()
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S+?):(.*)$", line)
        if m:
            got[part_of(m.group(2), m.group(3))] += int(m.group(1).replace(",", ""))
    return got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="simulated seconds per case (default 3)")
    ap.add_argument("--case", choices=["upstream", "minrtt", "musher"], default="minrtt",
                    help="the MPTCP case to split beside the single path (default minrtt)")
    args = ap.parse_args(argv)
    if not 0 < args.seconds <= 60:
        ap.error(f"--seconds must be above 0 and at most 60 (got {args.seconds:g})")
    for tool in ("valgrind", "callgrind_annotate"):
        if not shutil.which(tool):
            ap.error(f"{tool} is needed (apt-get install -y valgrind)")
    sys.path.insert(0, str(REPO / "python"))
    sys.path.insert(0, str(BENCH))
    from mptcp_bench import CASES, PER_LINK, core_binary
    from mmpath.scenario import load_scenario

    exe = core_binary()
    mptcp = {"upstream": 1, "minrtt": 2, "musher": 3}[args.case]
    cases = [CASES[0]] + PER_LINK + [CASES[mptcp]]
    cols = []
    with tempfile.TemporaryDirectory(prefix="mmpath-cost-split-") as tmp:
        for label, name, overrides in cases:
            sc = load_scenario(name, overrides)
            print(f"{label} ...", file=sys.stderr)
            cols.append(split(exe, json.loads(sc.json), sc.seed, args.seconds, Path(tmp)))
    single, mp = sum(cols[0].values()), sum(cols[-1].values())
    head = ["part"] + [c[0] for c in cases]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(cases) + "|"]
    for p in PARTS:
        lines.append(f"| {p} | " + " | ".join(f"{c[p] / 1e6:.1f} M ({100 * c[p] / sum(c.values()):.0f} %)"
                                              for c in cols) + " |")
    lines.append("| total | " + " | ".join(f"{sum(c.values()) / 1e6:.1f} M" for c in cols) + " |")
    print("\n".join(lines))
    no_b = mp - cols[-1][PARTS[1]]
    no_ab = no_b - cols[-1][PARTS[0]]
    print(f"\n{cases[-1][0]} / single path: {mp / single:.2f}x; without (b): {no_b / single:.2f}x; "
          f"without (a) and (b): {no_ab / single:.2f}x (instructions over the first {args.seconds:g} simulated s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
