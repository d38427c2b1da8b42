"""`mmpath analyze PATH ... [--out DIR]`: the mmNetAnalyzer command (see docs/analyze.md)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from pathlib import Path

from ..cliargs import print_error
from ..errors import MmpathError
from ..outputs import dumps
from . import analyze, write
from .kinds import KINDS, KINDS_HELP
from .summary import format_summary

DEFAULT_OUT = Path("mmpath-out") / "analyze"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "analyze", help=f"analyze {', '.join(KINDS[:-1])} logs or an mmpath run folder",
        description=f"mmNetAnalyzer: read {KINDS_HELP}; align them on one timeline; write "
                    "timeline.parquet, intervals.csv, summary.json and report.html.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="input files or folders; a file's kind is detected from its content "
                        f"(force one with KIND:PATH, KIND one of {', '.join(KINDS)})")
    p.add_argument("--out", metavar="DIR", help=f"output folder (default: {DEFAULT_OUT})")
    p.add_argument("--offset", action="append", default=[], metavar="PATH=SECONDS",
                   help="shift a source's clock by SECONDS (added to its timestamps; repeatable)")
    p.add_argument("--baseline", action="append", default=[], metavar="PATH=MBPS",
                   help="single-path baseline throughput for Ben(mode) (seed 000 eq. 3), e.g. "
                        "--baseline 11ad=1316 --baseline 11n=46.16 (repeatable)")
    p.add_argument("--expected", type=float, metavar="MBPS",
                   help="expected throughput for the normalized throughput (seed 000 eq. 1)")
    p.add_argument("--bin", type=float, default=0.1, metavar="S", help="throughput bin width in seconds (default 0.1)")
    p.add_argument("--no-report", action="store_true", help="skip report.html and the plots")
    p.add_argument("--json", action="store_true", help="print summary.json to stdout")
    p.set_defaults(func=run)
    return p


def _pairs(items: list[str], flag: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for it in items:
        k, sep, v = it.rpartition("=")
        try:
            if not sep or not k:
                raise ValueError
            out[k] = float(v)
        except ValueError:
            raise MmpathError(f"{flag} {it!r}: expected NAME=NUMBER, e.g. {flag} 11ad=1316") from None
    return out


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else DEFAULT_OUT
    said = io.StringIO()  # the readers' warnings: one error line instead when nothing is left
    with contextlib.redirect_stderr(said):
        res = analyze(args.paths, out=None, offsets=_pairs(args.offset, "--offset"),
                      baselines=_pairs(args.baseline, "--baseline") or None, expected_mbps=args.expected,
                      bin_s=args.bin, report=not args.no_report)
    s = res.summary
    if not s.get("flows") and not s.get("minor_flows") and not any(x.get("samples") for x in s.get("sources", [])):
        # An empty table and exit 0 read as "analyzed, all fine".
        why = [ln.split("warning: ", 1)[1] for ln in said.getvalue().splitlines() if "warning: " in ln]
        raise MmpathError("; ".join(why) if why else f"{', '.join(args.paths)}: no flow in it: nothing to analyze")
    sys.stderr.write(said.getvalue())
    res.out = write(res, out, report=not args.no_report)
    if args.json:
        sys.stdout.write(dumps(res.summary))
    else:
        print(format_summary(res.summary))
    if not args.out:
        print_error(f"outputs written to {out}{os.sep} (choose with --out DIR)")
    return 0
