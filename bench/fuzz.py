"""Coverage-guided fuzzing of every parser, for a fixed budget per target (not in CI, not in
`make test`): the Rust core's with cargo-fuzz (crates/mmpath-sim/fuzz), the Python package's with
atheris (bench/fuzz_py.py). Prints one row per target: budget, executions, crashes.

    .venv/bin/python bench/fuzz.py                        # every target, 60 s each
    .venv/bin/python bench/fuzz.py --budget 300 --only trace_csv,pcap

Needs `cargo +nightly` and cargo-fuzz (`cargo install cargo-fuzz`) for the Rust targets, and
atheris in the venv (`.venv/bin/pip install atheris`) for the Python ones. Each target runs with
one job (-jobs/-workers not set); seeds are the repository's own fixtures, copied (cut to
SEED_BYTES) into target/fuzz/seeds/TARGET; the corpus each run grows is kept in
target/fuzz/corpus/TARGET, and any crashing input in target/fuzz/artifacts/TARGET/. A crash is
then made a regression test (bench/README.md, "Fuzzing"). The Rust targets build into
target/fuzz/build.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "crates" / "mmpath-sim" / "fuzz"
WORK = ROOT / "target" / "fuzz"
FX = ROOT / "tests" / "analyze" / "fixtures"
TRACES = ROOT / "crates" / "mmpath-sim" / "tests" / "data" / "traces"
SCENARIOS = ROOT / "python" / "mmpath" / "scenarios"
SEED_BYTES = 16384

RUST = ("scenario_json", "trace_mahimahi", "trace_csv", "trace_wil6210")
PYTHON = ("scenario_toml", "pcap", "iperf3", "ss", "iw")
PARSER = {
    "scenario_json": "Scenario::from_json (scenario/parse.rs, sections.rs)",
    "trace_mahimahi": "link::trace::parse, Mahimahi",
    "trace_csv": "link::trace::parse, CSV",
    "trace_wil6210": "link::trace::parse, wil6210",
    "scenario_toml": "mmpath.load_scenario (scenario.py)",
    "pcap": "analyze/pcap (pcap, pcapng)",
    "iperf3": "analyze/iperf3.py",
    "ss": "analyze/ss.py",
    "iw": "analyze/iw.py",
}


def _scenario_json(f: Path) -> bytes:
    doc = tomllib.loads(f.read_text())
    doc.pop("variant", None)
    return json.dumps(doc).encode()


def seed_files(target: str) -> list[tuple[str, bytes]]:
    """(name, bytes) of the fixtures a target starts from."""
    def files(pattern_dir: Path, glob: str):
        return sorted(p for p in pattern_dir.glob(glob) if p.is_file())

    if target == "scenario_json":
        return [(f.stem + ".json", _scenario_json(f)) for f in files(SCENARIOS, "*.toml")]
    if target == "scenario_toml":
        return [(f.name, f.read_bytes()) for f in files(SCENARIOS, "*.toml")]
    if target.startswith("trace_"):
        fmt = target.removeprefix("trace_")
        out = [(f.name, f.read_bytes()) for f in files(TRACES, f"{fmt}_*")]
        if fmt == "wil6210":
            out.append(("handmade.csv", (FX / "handmade" / "wil6210.csv").read_bytes()))
        return out
    globs = {"pcap": ["**/*.pcap", "**/*.pcapng"], "iperf3": ["**/*.json"], "ss": ["**/ss*.log"],
             "iw": ["**/iw*.log"]}[target]
    out = []
    for g in globs:
        for f in files(FX, g):
            if target == "iperf3" and f.name in ("capture.json", "summary.json", "emu.json"):
                continue
            out.append((str(f.relative_to(FX)).replace("/", "_"), f.read_bytes()[:SEED_BYTES]))
    return out


def run_target(target: str, budget: int, rss_mb: int, timeout_s: int) -> dict:
    seeds = WORK / "seeds" / target
    corpus = WORK / "corpus" / target
    artifacts = WORK / "artifacts" / target
    shutil.rmtree(seeds, ignore_errors=True)
    for d in (seeds, corpus, artifacts):
        d.mkdir(parents=True, exist_ok=True)
    for name, data in seed_files(target):
        (seeds / name).write_bytes(data)
    flags = [f"-max_total_time={budget}", f"-rss_limit_mb={rss_mb}", f"-timeout={timeout_s}",
             f"-artifact_prefix={artifacts}/", "-print_final_stats=1"]
    before = set(artifacts.iterdir())
    with tempfile.TemporaryDirectory(prefix="mmpath-fuzz-") as tmp:
        if target in RUST:
            # The build goes under the repository's target/ (not crates/, whose .rs files the
            # Makefile watches; `make clean` removes it).
            cmd = ["cargo", "+nightly", "fuzz", "run", "--target-dir", str(WORK / "build"), target, str(corpus),
                   str(seeds), "--", *flags]
            cwd = FUZZ.parent
        else:
            cmd = [sys.executable, str(ROOT / "bench" / "fuzz_py.py"), target, *flags, str(corpus), str(seeds)]
            cwd = ROOT
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace",
                           env={**os.environ, "MMPATH_FUZZ_TMP": tmp})
        wall = time.monotonic() - t0
    log = p.stdout + p.stderr
    (WORK / f"{target}.log").write_text(log)
    runs = re.findall(r"^Done (\d+) runs", log, re.M) or re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
    if not runs:
        runs = re.findall(r"^#(\d+)\s", log, re.M)
    crashes = sorted(set(artifacts.iterdir()) - before)
    return {"target": target, "parser": PARSER[target], "budget_s": budget, "wall_s": round(wall),
            "executions": int(runs[-1]) if runs else 0, "exit": p.returncode,
            "crashes": [str(c.relative_to(ROOT)) for c in crashes]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=int, default=60, help="seconds per target (default 60)")
    ap.add_argument("--only", help="comma-separated targets (default: all: " + ",".join(RUST + PYTHON) + ")")
    ap.add_argument("--rss-mb", type=int, default=2048, help="memory bound: above it is a crash (default 2048)")
    ap.add_argument("--timeout", type=int, default=10, help="seconds for one input: above it is a crash (default 10)")
    ap.add_argument("--json", type=Path, help="also write the rows to this file")
    a = ap.parse_args(argv)
    targets = a.only.split(",") if a.only else list(RUST + PYTHON)
    unknown = [t for t in targets if t not in RUST + PYTHON]
    if unknown:
        ap.error(f"unknown targets {unknown} (allowed: {', '.join(RUST + PYTHON)})")
    rows = []
    print("| target | parser | budget | executions | crashes |\n|---|---|---|---|---|", flush=True)
    for t in targets:
        r = run_target(t, a.budget, a.rss_mb, a.timeout)
        rows.append(r)
        note = "" if r["exit"] == 0 or r["crashes"] else f" (exit {r['exit']}: see target/fuzz/{t}.log)"
        print(f"| {t} | {r['parser']} | {r['budget_s']} s | {r['executions']:,} | {len(r['crashes'])}{note} |",
              flush=True)
        for c in r["crashes"]:
            print(f"|   | {c} | | | |", flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if any(r["crashes"] or r["exit"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
