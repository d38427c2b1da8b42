"""The `mmpath` command line (console script entry point: main)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from pathlib import Path

from . import _core, api
from .analyze.cli import add_parser as add_analyze_parser  # `mmpath analyze`: analyze/cli.py
from .capture import add_parser as add_capture_parser  # `mmpath capture`: capture.py
from .cliargs import SuggestingParser, print_error
from .compare import best, compare, format_table as format_compare_table
from .emu.cli import add_parser as add_emu_parser  # `mmpath emu run`: emu/
from .errors import MmpathError
from .pm.args import add_parser as add_pm_parser  # `mmpath pm`: pm/ (also `mmpath-pm`)
from .outputs import check_out_folder, safe_dir_name, summary_json
from .reproduce_cli import add_parser as add_reproduce_parser  # `mmpath reproduce`: reproduce_cli.py
from .scenario import bundled_scenarios, describe, load_scenario, one_variant
from .spelling import CLI
from .sweep.cli import add_parser as add_sweep_parser  # `mmpath sweep`: sweep/
from .table import format_table, run_line
from .version import __version__

DEFAULT_SCENARIO = "default"
DEFAULT_OUT_ROOT = Path("mmpath-out")


# --------------------------------------------------------------------------- commands


def cmd_run(args: argparse.Namespace) -> int:
    spec = args.scenario or DEFAULT_SCENARIO
    if args.variant is not None:
        sc = one_variant(spec, args.overrides, seed=args.seed, variant=args.variant)
        out = Path(args.out) if args.out else DEFAULT_OUT_ROOT / safe_dir_name(sc.name) / safe_dir_name(args.variant)
    else:
        sc = load_scenario(spec, args.overrides, seed=args.seed)
        out = Path(args.out) if args.out else DEFAULT_OUT_ROOT / safe_dir_name(sc.name)
    check_out_folder(out)  # an unwritable --out is refused before the run, not after it
    if sc.variants:
        return _run_variants(args, spec, sc, out)
    # Outputs are written even when an invariant failed: they are what one debugs from. The
    # timeline is streamed into the folder as the run goes (docs/outputs.md).
    result = api.simulate_to(sc, out, show_progress=not args.no_progress)  # looked up now: tests replace it
    if not args.out:
        print_error(f"outputs written to {out}{os.sep} (choose with --out DIR)")
    if args.json:
        sys.stdout.write(summary_json(result))
    else:
        print(format_table(result.summary))
        print(run_line(result.summary))
    sys.stdout.flush()
    if not result.ok:
        for c in result.failed_checks:
            print_error(f"invariant check failed: flow {c.get('flow')}: {c.get('check')}: {c.get('detail')}")
        return 1
    return 0


def _run_variants(args: argparse.Namespace, spec, sc, out: Path) -> int:
    """A scenario with [[variant]] entries: run each, one table and one plot (compare.py)."""
    cmp = compare(spec, args.overrides, seed=args.seed, out=out, progress=not args.no_progress, spelling=CLI)
    if not args.out:
        print_error(f"outputs written to {out}{os.sep} (one folder per variant, compare.csv, compare.png)")
    if args.json:
        doc = {name: r.summary for name, r in cmp.results.items()}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        print(f"{sc.name}: {len(cmp.results)} variants, seed {sc.seed}")
        print(format_compare_table(cmp.table))
        print(f"best: {best(cmp)}; plot: {out / 'compare.png'}")
        for name, r in cmp.results.items():
            print(f"  {name}: {run_line(r.summary)}")
    sys.stdout.flush()
    if not cmp.ok:
        for name, r in cmp.results.items():
            for c in r.failed_checks:
                print_error(f"variant {name}: invariant check failed: flow {c.get('flow')}: {c.get('check')}: {c.get('detail')}")
        return 1
    return 0


def cmd_scenarios(args: argparse.Namespace) -> int:
    found = bundled_scenarios()
    if not found:
        print_error("no bundled scenarios found")
        return 0
    width = max(len(n) for n in found)
    for name, entry in found.items():
        print(f"{name:<{width}}  {describe(entry)}".rstrip())
    return 0


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    p = SuggestingParser(
        prog="mmpath",
        description="Simulate TCP/MPTCP over dual-band 802.11ad + Wi-Fi links.",
    )
    p.add_argument("--version", action="version", version=f"mmpath {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="simulate a scenario and print the results table",
                       description="Simulate a scenario; write the output folder; print a results table.")
    r.add_argument("scenario", nargs="?", metavar="SCENARIO",
                   help=f"scenario .toml file or bundled scenario name (default: {DEFAULT_SCENARIO})")
    r.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario field by its dotted path, e.g. flow.0.cc=reno or "
                        "path.0.rate_mbps=1000 (VALUE is a TOML value; repeatable)")
    r.add_argument("--variant", metavar="NAME",
                   help="for a scenario with [[variant]] entries, run only this one (its overrides, then --set's)")
    r.add_argument("--seed", type=int, metavar="N", help="random seed (default: the scenario's seed)")
    r.add_argument("--out", metavar="DIR",
                   help=f"output folder (default: {DEFAULT_OUT_ROOT}/<scenario name>)")
    r.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    r.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser("scenarios", help="list the bundled scenarios",
                       description="List the bundled scenarios, one line each.")
    s.set_defaults(func=cmd_scenarios)

    add_reproduce_parser(sub)
    add_analyze_parser(sub)
    add_capture_parser(sub)
    add_sweep_parser(sub)
    add_emu_parser(sub)
    add_pm_parser(sub)
    return p


def _is_core_scenario_error(e: BaseException) -> bool:
    return isinstance(e, _core.ScenarioError)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 with usage on a bad flag
    if not getattr(args, "func", None):
        parser.print_usage(sys.stderr)
        print_error("error: a command is required (run, scenarios, reproduce, analyze, capture, sweep, emu, pm)")
        return 2
    try:
        return args.func(args)
    except MmpathError as e:
        print_error(f"error: {e}")
        return 2
    except (FileNotFoundError, tomllib.TOMLDecodeError) as e:
        print_error(f"error: {e}")
        return 2
    except ValueError as e:
        # scenario.py converts the core's ScenarioError (a ValueError); this is the safety net for
        # any path that does not, because a user mistake must never end in a traceback.
        if _is_core_scenario_error(e):
            print_error(f"error: {e}")
            return 2
        raise
    except KeyboardInterrupt:
        print_error("interrupted")
        return 130
    except BrokenPipeError:
        # `mmpath run --json | head`: the reader left; stop quietly like other Unix tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
