"""Are two builds of mmpath the same simulator? Record what one build produces, compare another.

A refactor that claims "behaviour unchanged" must show it: this script runs every bundled
scenario and every one of its variants (6 s of simulated time each, or the scenario's own length when a flow starts later; the
scenario's own seed) and
keeps each run's summary.json (the wall-time fields, which depend on the machine, left out), plus
a digest of its timeline and intervals; optionally it also runs `mmpath reproduce all --fast` and
keeps every claim's measured numbers and verdict.

    python bench/same_outputs.py record before.json [--reproduce]
    ... change the code, rebuild (make setup) ...
    python bench/same_outputs.py record after.json [--reproduce]
    python bench/same_outputs.py compare before.json after.json

`--folders` also writes each run's output folder (`mmpath.run(..., out=DIR)`: timeline and
intervals streamed, then summary.json, intervals.csv, iperf3.json, report.html and its plots
written from the files) and keeps a digest of every file in it (summary.json and report.html
without their wall times), so the writers are compared too, not only the in-memory Result.

`compare` exits 0 when everything is identical, 1 otherwise, naming every scenario, variant and
field that moved (with both values), so a deliberate change can be described by what it moved.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

DURATION_S = 6


def _digest_frame(df) -> str:
    """A digest of a DataFrame's values (column names, dtypes and bytes), order-sensitive."""
    h = hashlib.sha256()
    for name in df.columns:
        col = df[name]
        h.update(str(name).encode())
        h.update(str(col.dtype).encode())
        if hasattr(col, "cat"):
            h.update("\x1f".join(map(str, col.astype(object).tolist())).encode())
        else:
            h.update(col.to_numpy().tobytes())
    return h.hexdigest()[:16]


def _strip_wall(summary: Any) -> Any:
    from mmpath.api import WALL_TIME_KEYS

    if isinstance(summary, dict):
        return {k: _strip_wall(v) for k, v in summary.items() if k not in WALL_TIME_KEYS}
    if isinstance(summary, list):
        return [_strip_wall(v) for v in summary]
    return summary


def _digest_folder(folder: Path) -> dict[str, str]:
    out = {}
    for f in sorted(folder.iterdir()):
        if not f.is_file():
            continue
        data = f.read_bytes()
        if f.name == "summary.json":
            data = json.dumps(_strip_wall(json.loads(data)), sort_keys=True).encode()
        elif f.name == "report.html":  # its run table's wall time and events / s
            data = re.sub(rb"((?:wall time \(s\)|events / s)</td><td[^>]*>)[^<]*", rb"\1", data)
        out[f.name] = hashlib.sha256(data).hexdigest()[:16]
    return out


def record_runs(folders: bool = False) -> dict[str, Any]:
    import tempfile

    import mmpath
    from mmpath.errors import ScenarioError
    from mmpath.scenario import bundled_scenarios, load_scenario

    out: dict[str, Any] = {}
    for name in sorted(bundled_scenarios()):
        base = load_scenario(name)
        for variant in [None] + [v for v, _ in base.variants]:
            key = name if variant is None else f"{name}/{variant}"
            try:
                res = mmpath.run(name, variant=variant, overrides={"duration_s": DURATION_S})
            except ScenarioError:  # a scenario whose flows start after 6 s runs its own length
                res = mmpath.run(name, variant=variant)
            out[key] = {
                "summary": _strip_wall(res.summary),
                "timeline": _digest_frame(res.timeline),
                "intervals": _digest_frame(res.intervals),
            }
            if folders:
                with tempfile.TemporaryDirectory() as tmp:
                    over = {"duration_s": res.summary["sim_s"]}
                    mmpath.run(name, variant=variant, overrides=over, out=Path(tmp) / "out")
                    out[key]["files"] = _digest_folder(Path(tmp) / "out")
            print(f"  {key}", file=sys.stderr)
    return out


def record_reproduce() -> dict[str, Any]:
    from mmpath.reproduce import known_ids, reproduce

    # The x-kernel claims run the machine's kernel, whose timing differs run to run: left out.
    ids = [i for i in known_ids() if not i.startswith("x-")]
    rep = reproduce(ids, fast=True, plots=False)
    out: dict[str, Any] = {}
    for cid, r in sorted(rep.results.items()):
        v = r.verdict
        out[cid] = {"status": v.status, "mmpath": v.mmpath, "checks": [str(c) for c in v.checks],
                    "errors": list(v.errors)}
    return out


def _diff(a: Any, b: Any, where: str, found: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                found.append(f"{where}.{k}: only in {'after' if k not in a else 'before'}")
            else:
                _diff(a[k], b[k], f"{where}.{k}", found)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{where}[{i}]", found)
    elif a != b:
        found.append(f"{where}: {a!r} -> {b!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="run every bundled scenario and variant; write FILE")
    rec.add_argument("file", type=Path)
    rec.add_argument("--reproduce", action="store_true", help="also `mmpath reproduce all --fast`")
    rec.add_argument("--folders", action="store_true", help="also write each run's output folder; digest its files")
    cmp_ = sub.add_parser("compare", help="compare two recordings")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    args = ap.parse_args(argv)

    if args.cmd == "record":
        data = {"runs": record_runs(folders=args.folders)}
        if args.reproduce:
            data["reproduce"] = record_reproduce()
        args.file.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")
        print(f"{len(data['runs'])} runs recorded in {args.file}")
        return 0

    before = json.loads(args.before.read_text())
    after = json.loads(args.after.read_text())
    found: list[str] = []
    for part in ("runs", "reproduce"):
        if part in before and part in after:
            _diff(before[part], after[part], part, found)
        elif part in before or part in after:
            print(f"note: only one recording has '{part}'; not compared")
    for line in found:
        print(line)
    n = len(before.get("runs", {}))
    print(f"{'identical' if not found else f'{len(found)} difference(s)'} ({n} runs compared)")
    return 0 if not found else 1


if __name__ == "__main__":
    sys.exit(main())
