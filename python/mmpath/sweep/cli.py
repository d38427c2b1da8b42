"""`mmpath sweep SWEEP.toml|NAME [--workers N] [--dask ADDRESS] [--out DIR]`, `mmpath sweep --list`.

Exit status: 0 when every run finished with its invariants holding, 1 when a run failed or an
invariant did not hold (the table is still written: the other runs are valid), 2 for a bad sweep
file or flag (nothing runs, nothing is written).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..cliargs import positive_int, print_error
from ..outputs import check_out_folder, safe_dir_name
from . import load_sweep, run as run_sweep
from .spec import describe_bundled

DEFAULT_OUT_ROOT = Path("mmpath-out") / "sweep"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "sweep", help="run a grid of scenario overrides x seeds in parallel, one results table",
        description="Run every combination of a sweep file's [grid] (scenario overrides) with each seed, on "
                    "this machine's cores or a Dask cluster, and write one results table (Parquet + CSV). "
                    "The sweep file's format: docs/sweep.md.")
    p.add_argument("sweep", metavar="SWEEP.toml", nargs="?",
                   help="the sweep file, or the name of a bundled sweep (--list)")
    p.add_argument("--list", action="store_true", help="list the bundled sweeps with one line each")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="processes on this machine (default: one per CPU)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run on the Dask cluster whose scheduler is at ADDRESS (e.g. tcp://10.0.0.5:8786) "
                        "instead of local processes")
    p.add_argument("--out", metavar="DIR", help=f"output folder (default: {DEFAULT_OUT_ROOT}/<sweep name>)")
    p.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    p.set_defaults(func=run)
    return p


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def run(args: argparse.Namespace) -> int:

    if args.list:
        found = describe_bundled()
        width = max((len(n) for n, _ in found), default=0)
        for name, desc in found:
            print(f"{name:<{width}}  {desc}".rstrip())
        return 0
    if args.sweep is None:
        print_error("error: a sweep file or bundled sweep name is required (mmpath sweep --list shows the bundled ones)")
        return 2
    if args.dask and args.workers:
        print_error("error: --workers and --dask exclude each other (the Dask cluster has its own workers)")
        return 2
    spec = load_sweep(args.sweep)  # a SweepError ends here with one line and status 2 (cli.main)

    # The name comes from the file: one harmless folder name, as `mmpath run` makes a scenario's.
    out = Path(args.out) if args.out else DEFAULT_OUT_ROOT / safe_dir_name(spec.name)
    check_out_folder(out)  # an OutputError ends here (status 2) before anything runs
    n_local = args.workers or os.cpu_count() or 1
    where = f"the Dask cluster at {args.dask}" if args.dask else f"{n_local} local worker{'s' * (n_local > 1)}"
    if spec.engine == "emulate":
        where = "this machine's kernel (emulation), one run at a time"
    print_error(f"sweep {spec.name}: {_n(len(spec.points), 'point')} x {_n(len(spec.seeds), 'seed')} = "
                f"{_n(len(spec.runs), 'run')} on {where}")
    res = run_sweep(spec, workers=args.workers, dask=args.dask, out=out, progress=not args.no_progress)  # SweepError: 2
    print(res.summary_text())
    print(f"{_n(len(spec.runs), 'run')} in {res.wall_s:.1f} s; table: {out / 'results.parquet'} (and .csv)")
    sys.stdout.flush()
    for r, msg in [(r, res.errors[r.index]) for r in spec.runs if r.index in res.errors]:
        vals = ", ".join(f"{k} = {v!r}" for k, v in r.values)
        print_error(f"run failed: point {r.point} ({vals}), seed {r.seed}: {msg}")
    if "invariants_ok" in res.table:
        bad = res.table[(res.table["error"] == "") & (~res.table["invariants_ok"].astype(bool))]
        for _, row in bad.drop_duplicates(["point", "seed"]).iterrows():
            print_error(f"invariant check failed: point {row['point']}, seed {row['seed']} (see its summary with "
                 f"`mmpath run` and the same overrides)")
    return 0 if res.ok else 1
