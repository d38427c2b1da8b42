"""`mmpath reproduce [ID ... | all] [--runs N] [--out DIR] [--fast]`: the seed papers' claims.

Exit status: 0 when every selected claim passes, 1 when any FAILs (or could not run: ERROR),
2 for usage errors such as an unknown claim id.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import reproduce as rp
from .cliargs import positive_int, print_error
from .outputs import check_out_folder
from .reproduce.report import console

DEFAULT_OUT = Path("mmpath-out") / "reproduce"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "reproduce", help="run the seed papers' experiments and check each claim",
        description="Run the seed papers' experiments (docs/reproduce.md) and print, for each claim, what the "
                    "paper measured, what mmpath measured, the criterion and PASS/FAIL. Exit 1 on any FAIL.")
    p.add_argument("ids", nargs="*", metavar="ID",
                   help="claim ids (e.g. 000-mtu7912 001-tcp) or 'all' (the default)")
    p.add_argument("--runs", type=positive_int, metavar="N",
                   help="runs per scenario point, seeds 1..N (default 10; 2 with --fast)")
    p.add_argument("--out", metavar="DIR", help=f"output folder (default: {DEFAULT_OUT})")
    p.add_argument("--fast", action="store_true",
                   help="quick check: 2 runs per point, 3 s scenarios, fewer sweep points where a claim allows")
    p.add_argument("--workers", type=positive_int, metavar="N", help="processes on this machine (default: one per CPU)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run on the Dask cluster whose scheduler is at ADDRESS (e.g. tcp://10.0.0.5:8786)")
    p.add_argument("--list", action="store_true", help="list the claim ids with their claims and exit")
    p.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:

    if args.list:
        for cid in rp.known_ids():
            print(f"{cid:<16} {rp.CLAIMS[cid].claim}")
        return 0
    try:
        rp.select(args.ids)
    except rp.UnknownClaim as e:
        print_error(f"error: {e}")
        return 2
    if args.dask and args.workers:
        print_error("error: --workers and --dask exclude each other (the Dask cluster has its own workers)")
        return 2
    out = Path(args.out) if args.out else DEFAULT_OUT

    check_out_folder(out)  # an OutputError ends here (status 2), not after hours of runs
    rep = rp.reproduce(args.ids or ["all"], runs=args.runs, out=out, fast=args.fast,
                       progress=not args.no_progress, workers=args.workers, dask=args.dask)
    print(console(rep))
    if not args.out:
        print_error(f"outputs written to {out}/ (choose with --out DIR)")
    sys.stdout.flush()
    return 0 if rep.ok else 1
