"""Start-up time of the `mmpath` command: two installs side by side, several runs each.

    python bench/startup_bench.py OTHER_MMPATH [--runs N] [--run-short]

OTHER_MMPATH is another install's console script (e.g. a checkout of main:
MAIN_CHECKOUT/.venv/bin/mmpath); this checkout's is .venv/bin/mmpath. Each command runs once to
warm up, then N times alternating between the two installs; the medians and their ratio are
printed as a Markdown table (bench/README.md, "Start-up time").

Bytecode: each install runs with its own PYTHONPYCACHEPREFIX under a temporary folder and
PYTHONDONTWRITEBYTECODE unset, so both read compiled .pyc files as an installed package does,
and nothing is written into either checkout. `--no-pyc` times them compiling every module on
each run instead (what a checkout with bytecode writing off pays).

The commands: `mmpath --help`, `mmpath scenarios` and, with --run-short, `mmpath run` of the
bundled scenario `blockage` for 1 simulated second with --json (start-up plus a short run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OURS = HERE.parent / ".venv" / "bin" / "mmpath"


def _env(cache: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def _time(exe: Path, args: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([str(exe), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                          cwd=cwd)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"startup_bench: `{exe} {' '.join(args)}` exited with {proc.returncode}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="the other install's mmpath console script")
    ap.add_argument("--runs", type=int, default=9, help="timed runs per command and install (default 9)")
    ap.add_argument("--run-short", action="store_true", help="also time a 1 s `mmpath run`")
    ap.add_argument("--no-pyc", action="store_true", help="compile every module on each run (no bytecode cache)")
    args = ap.parse_args()
    if not OURS.exists():
        sys.exit(f"startup_bench: {OURS} not found (make setup)")
    if not args.other.exists():
        sys.exit(f"startup_bench: {args.other} not found")
    commands = [["--help"], ["scenarios"]]
    if args.run_short:
        commands.append(["run", "blockage", "--set", "duration_s=1", "--json", "--no-progress", "--out", "OUT"])
    with tempfile.TemporaryDirectory(prefix="mmpath-startup-") as tmp:
        tmp = Path(tmp)
        installs = {"other": args.other, "this": OURS}
        envs = {k: _env(None if args.no_pyc else tmp / f"pyc-{k}") for k in installs}
        rows = []
        for cmd in commands:
            times: dict[str, list[float]] = {k: [] for k in installs}
            for i in range(args.runs + 1):  # the first run of each only warms up (and writes .pyc)
                for k, exe in installs.items():
                    real = [str(tmp / f"out-{k}") if a == "OUT" else a for a in cmd]
                    t = _time(exe, real, envs[k], tmp)
                    if i:
                        times[k].append(t)
            med = {k: statistics.median(v) for k, v in times.items()}
            shown = " ".join(a for a in cmd if a != "OUT").replace(" --out", "")
            rows.append((f"`mmpath {shown}`", med["other"], med["this"], med["other"] / med["this"]))
    print(f"{args.runs} runs each, medians ({'no bytecode cache' if args.no_pyc else 'with bytecode cache'}):\n")
    print("| command | other (s) | this checkout (s) | other / this |")
    print("|---|---|---|---|")
    for name, a, b, r in rows:
        print(f"| {name} | {a:.3f} | {b:.3f} | {r:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
