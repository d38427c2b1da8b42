"""The sweep file (`mmpath sweep SWEEP.toml`): which scenario, which overrides on every run, the
grid of overrides to cross, and the seeds. Everything is checked here, before anything runs: every
grid point is loaded and validated as the scenario it will be, so a bad value is reported with the
point it belongs to and no run starts (nothing half-written).

    name = "scheduler-vs-mcs"            # optional; default: the file's stem
    description = "..."                  # optional
    scenario = "blockage"                # bundled name or .toml path (relative to this file)
    seeds = [1, 2, 3]                    # or: runs = 3 (seeds 1..3); default: the scenario's seed
    [set]                                # optional: the same overrides on every run
    duration_s = 5
    [grid]                               # every combination of these (the --set keys)
    "flow.0.scheduler" = ["minrtt", "musher", "amuse"]
    "path.0.mcs" = [6, 8]

A scenario with ``[[variant]]`` entries (compare.py) is swept per variant: the grid key
``variant`` takes variant names (each applies that variant's overrides).
A trace file the sweep file names (in [set], [grid] or an inline scenario) is taken from the
sweep file's folder, as a scenario file's are from its own.
"""

from __future__ import annotations

import copy
import importlib.resources
import itertools
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from ..emu.checks import scenario as check
from ..emu.errors import EmuError
from ..errors import ScenarioError
from ..scenario import Scenario, load_scenario, resolve_override_files, resolve_trace_files
from ..spelling import SWEEP

TOP_FIELDS = ("name", "description", "scenario", "engine", "seeds", "runs", "set", "grid")
# simulate: mmpath's simulator (any number of workers, or Dask); emulate: `mmpath emu run` on this
# machine's kernel, one run at a time (each takes its scenario's duration in real time, and two at
# once would share the CPU the measurement depends on).
ENGINES = ("simulate", "emulate")
VARIANT_KEY = "variant"
# A sweep is a list of runs held in memory and written as one table; this bounds a typo such as
# `runs = 100000` before it starts (split a larger study into several sweeps).
MAX_RUNS = 100_000


class SweepError(ScenarioError):
    """A bad sweep file: one line naming the file, the field, the value and what is allowed."""


@dataclass(frozen=True)
class Run:
    """One simulation of the sweep: grid point `point` (its overrides) with `seed`."""

    index: int
    point: int
    seed: int
    values: tuple[tuple[str, Any], ...]
    scenario: Scenario


@dataclass
class SweepSpec:
    name: str
    description: str
    source: str
    scenario: str | dict[str, Any]
    base: dict[str, Any]
    keys: tuple[str, ...]
    points: list[tuple[tuple[str, Any], ...]]
    seeds: list[int]
    runs: list[Run] = field(default_factory=list)
    engine: str = "simulate"


def _fail(source: str, where: str, msg: str) -> SweepError:
    return SweepError(f"{source}: {where}: {msg}" if where else f"{source}: {msg}")


def bundled_sweeps() -> dict[str, Path]:
    """Name -> file of every sweep shipped with mmpath (python/mmpath/sweeps), sorted by name."""
    try:
        d = importlib.resources.files("mmpath") / "sweeps"
        entries = list(d.iterdir()) if d.is_dir() else []
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        entries = []
    return dict(sorted((e.name[: -len(".toml")], Path(str(e))) for e in entries
                       if e.name.endswith(".toml") and e.is_file()))


def describe_bundled() -> list[tuple[str, str]]:
    """(name, description) of each bundled sweep, for `mmpath sweep --list`."""
    out = []
    for name, path in bundled_sweeps().items():
        try:
            desc = str(tomllib.loads(path.read_text(encoding="utf-8")).get("description", ""))
        except (OSError, tomllib.TOMLDecodeError):
            desc = ""
        out.append((name, desc))
    return out


def read_sweep_file(path: str | os.PathLike) -> tuple[dict[str, Any], str, Path]:
    p = Path(path)
    source = str(p)
    if not p.is_file():
        bundled = bundled_sweeps()
        name = str(path)
        if name in bundled and not name.endswith(".toml") and os.sep not in name:
            p = bundled[name]
            source = f"{p.name} (bundled)"
        else:
            raise SweepError(f"{source}: no such sweep file (a .toml file with `scenario` and a [grid] table); "
                             f"bundled sweeps: {', '.join(bundled) or 'none'}")
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise SweepError(f"{source}: not a text (UTF-8) TOML file") from None
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{source}: invalid TOML: {e}") from None
    return doc, source, p.parent


def _seeds(doc: Mapping[str, Any], source: str) -> list[int] | None:
    if "seeds" in doc and "runs" in doc:
        raise _fail(source, "seeds", "give either `seeds` (a list) or `runs` (a count), not both")
    if "seeds" in doc:
        seeds = doc["seeds"]
        if not isinstance(seeds, list) or not seeds:
            raise _fail(source, "seeds", f"must be a non-empty list of integers >= 0 (got {seeds!r})")
        for i, s in enumerate(seeds):
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise _fail(source, f"seeds.{i}", f"must be an integer >= 0 (got {s!r})")
        if len(set(seeds)) != len(seeds):
            raise _fail(source, "seeds", "lists a seed twice (each run would repeat another exactly)")
        return list(seeds)
    if "runs" in doc:
        n = doc["runs"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise _fail(source, "runs", f"must be an integer >= 1 (seeds 1..runs; got {n!r})")
        return list(range(1, n + 1))
    return None


def _dotted(key: str, value: Any) -> str | None:
    """The --set path an unquoted TOML dotted key was read from: `flow.0.cc = [...]` reaches us as
    {"flow": {"0": {"cc": [...]}}}; this gives "flow.0.cc" (the first leaf), or None when
    `value` is not a table."""
    if not isinstance(value, Mapping) or not value:
        return None
    k, v = next(iter(value.items()))
    return _dotted(f"{key}.{k}", v) or f"{key}.{k}"


def _quote_hint(key: str, value: Any) -> str:
    path = _dotted(key, value)
    return (f"; a dotted key must be in quotes in a sweep file (\"{path}\" = ...): unquoted, TOML reads "
            f"{path} as nested tables") if path else ""


def _grid(doc: Mapping[str, Any], source: str) -> tuple[tuple[str, ...], list[tuple[tuple[str, Any], ...]]]:
    grid = doc.get("grid")
    if grid is None:
        raise _fail(source, "grid", "required: a table of --set keys, each with a list of values "
                                    "(e.g. \"flow.0.cc\" = [\"cubic\", \"bbr\"])")
    if not isinstance(grid, Mapping) or not grid:
        raise _fail(source, "grid", "must be a non-empty table of --set keys, each with a list of values")
    keys, values = [], []
    for key, vals in grid.items():
        if isinstance(vals, Mapping):
            raise _fail(source, f'grid."{key}"', "must be a list of values, not a table" + _quote_hint(key, vals))
        if not isinstance(vals, list) or not vals:
            raise _fail(source, f'grid."{key}"', f"must be a non-empty list of values (got {vals!r})")
        for i, v in enumerate(vals):
            if any(v == w and type(v) is type(w) for w in vals[:i]):
                raise _fail(source, f'grid."{key}"', f"lists the value {v!r} twice")
        keys.append(str(key))
        values.append(vals)
    points = [tuple(zip(keys, combo)) for combo in itertools.product(*values)]
    return tuple(keys), points


def _variant_overrides(sc: Scenario, name: Any, source: str, where: str) -> list[tuple[str, Any]]:
    known = [n for n, _ in sc.variants]
    if not known:
        raise _fail(source, where, f"the scenario {sc.name!r} has no [[variant]] entries to choose from")
    for n, sets in sc.variants:
        if n == name:
            return list(sets)
    raise _fail(source, where, f"unknown variant {name!r} (allowed: {', '.join(known)})")


def _emulatable(sc: Scenario, source: str, where: str) -> None:
    """What `mmpath emu run` would refuse in this point's scenario, refused now (not mid-sweep)."""
    try:
        check(sc.config)
    except EmuError as e:
        raise SweepError(f"{source}: {where}: {e}") from None


def load_sweep(spec: str | os.PathLike | Mapping[str, Any]) -> SweepSpec:
    """Parse and validate a sweep (file path or dict) and expand it into its runs."""
    if isinstance(spec, Mapping):
        doc, source, base_dir = dict(spec), "<dict>", Path.cwd()
        default_name = "sweep"
    else:
        doc, source, base_dir = read_sweep_file(spec)
        default_name = Path(str(spec)).stem
    unknown = sorted(set(doc) - set(TOP_FIELDS))
    if unknown:
        raise _fail(source, unknown[0], f"unknown field (allowed: {', '.join(TOP_FIELDS)})")
    name = doc.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise _fail(source, "name", f"must be a non-empty string (got {name!r})")
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise _fail(source, "description", f"must be a string (got {description!r})")

    engine = doc.get("engine", "simulate")
    if engine not in ENGINES:
        raise _fail(source, "engine", f"{engine!r} is not an engine (allowed: {', '.join(ENGINES)})")

    scen = doc.get("scenario")
    if scen is None:
        raise _fail(source, "scenario", "required: a bundled scenario name (`mmpath scenarios`) or a .toml path")
    if isinstance(scen, str):
        # A path is relative to the sweep file; a bare name is a bundled scenario.
        cand = base_dir / scen
        scen_spec: str | dict[str, Any] = str(cand) if (scen.endswith(".toml") or os.sep in scen) else scen
    elif isinstance(scen, Mapping):
        # An inline scenario is written in the sweep file: its trace files are found from there.
        scen_spec = copy.deepcopy(dict(scen))
        resolve_trace_files(scen_spec, base_dir.resolve())
    else:
        raise _fail(source, "scenario", f"must be a scenario name, a .toml path or an inline table (got {scen!r})")

    base = doc.get("set", {})
    if not isinstance(base, Mapping):
        raise _fail(source, "set", "must be a table of overrides (\"flow.0.cc\" = \"reno\")")
    record = {str(k): v for k, v in base.items()}  # as written, for sweep.json
    # A trace file the sweep names is found from the sweep file's folder (as a scenario's own
    # are from the scenario file's), not from wherever the sweep was started.
    # Absolute, so a worker started elsewhere (Dask) finds it too.
    files_dir = base_dir.resolve()
    base = {k: resolve_override_files(k, copy.deepcopy(v), files_dir) for k, v in record.items()}
    set_variant = base.pop(VARIANT_KEY, None)
    seeds = _seeds(doc, source)
    keys, points = _grid(doc, source)
    clash = sorted(set(keys) & set(base))
    if clash:
        raise _fail(source, f'grid."{clash[0]}"', "also set in [set]: a key is either fixed or swept")
    if set_variant is not None and VARIANT_KEY in keys:
        raise _fail(source, f'grid."{VARIANT_KEY}"', "also set in [set]: a key is either fixed or swept")
    if "seed" in keys or "seed" in base:
        raise _fail(source, "seed", "seeds are given by `seeds` or `runs`, not as an override")

    try:
        base_sc = load_scenario(scen_spec, base, spelling=SWEEP)
    except ScenarioError as e:
        # Only for the key the error blames: a table value can be meant (e.g. a trace table).
        hint = next((_quote_hint(k, v) for k, v in base.items() if SWEEP.blame(k) in str(e)), "")
        raise SweepError(f"{source}: scenario{' with [set]' if base else ''}: {e}{hint}") from None
    if set_variant is not None:
        # [set] variant = "name": that variant's overrides on every run; the file's own [set]
        # keys and the grid's win over them.
        base = {**dict(_variant_overrides(base_sc, set_variant, source, f"set.{VARIANT_KEY}")), **base}
        try:
            base_sc = load_scenario(scen_spec, base, spelling=SWEEP)
        except ScenarioError as e:
            raise SweepError(f"{source}: scenario with [set] (variant {set_variant!r}): {e}") from None
    elif base_sc.variants and VARIANT_KEY not in keys:
        names = ", ".join(n for n, _ in base_sc.variants)
        raise _fail(source, "grid", f"the scenario {base_sc.name!r} has [[variant]] entries ({names}): add "
                                    f"`{VARIANT_KEY} = [...]` to [grid] to choose them (one configuration per run), "
                                    f"or `{VARIANT_KEY} = \"name\"` to [set] for one of them")
    if seeds is None:
        seeds = [base_sc.seed]
    n_runs = len(points) * len(seeds)
    if n_runs > MAX_RUNS:
        raise _fail(source, "grid", f"{len(points)} points x {len(seeds)} seeds = {n_runs} runs, more than "
                                    f"{MAX_RUNS}; split the study into several sweeps")

    out = SweepSpec(name=name, description=description, source=source, scenario=scen_spec, base=record,
                    keys=keys, points=points, seeds=seeds, engine=engine)
    for pi, values in enumerate(points):
        overrides = dict(base)
        where = f"grid point {pi} (" + ", ".join(f"{k} = {v!r}" for k, v in values) + ")"
        for k, v in values:
            if k == VARIANT_KEY:
                overrides.update(_variant_overrides(base_sc, v, source, where))
            else:
                overrides[k] = resolve_override_files(k, copy.deepcopy(v), files_dir)
        for seed in seeds:
            try:
                sc = load_scenario(scen_spec, overrides, seed=seed, spelling=SWEEP)
            except ScenarioError as e:
                raise SweepError(f"{source}: {where}: {e}") from None
            # The variant's own list is the base scenario's: a run is one configuration.
            sc = Scenario(name=sc.name, config=sc.config, json=sc.json, source=sc.source)
            if engine == "emulate":
                _emulatable(sc, source, where)
            out.runs.append(Run(index=len(out.runs), point=pi, seed=seed, values=values, scenario=sc))
    _check_traces(out, source)
    return out


def _check_traces(spec: SweepSpec, source: str) -> None:
    """Reads every trace file the runs replay, once per distinct set of paths, before anything
    runs. Validation (load_scenario) checks a trace table's fields but not its file: the core
    reads the file when a run's simulation is built, together with the path it is replayed on
    (a rate trace on a radio path is refused there). Building that simulation here makes a
    missing, malformed or misplaced trace stop the sweep like any other bad value."""
    seen: set[str] = set()
    for run in spec.runs:
        paths = run.scenario.config.get("path", [])
        if not any(isinstance(p, Mapping) and p.get("trace") for p in paths):
            continue
        key = json.dumps(paths, sort_keys=True, default=str)
        if key in seen:
            continue
        seen.add(key)
        try:
            _core.Simulation(run.scenario.json, run.seed)
        except _core.ScenarioError as e:
            where = "scenario" if not run.values else (
                f"grid point {run.point} (" + ", ".join(f"{k} = {v!r}" for k, v in run.values) + ")")
            raise SweepError(f"{source}: {where}: {e}") from None
