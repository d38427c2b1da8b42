"""Run the experiments the selected claims need: every point x seeds 1..N, in parallel.

Each run is one `mmpath.run(scenario, seed=k)` in a worker process; the experiment's ``measure``
turns it into one row of metrics (plus, for some experiments, a time series). Rows come back to
the parent and form one pandas DataFrame per experiment, ordered by point then seed, so the
table is the same whatever order the workers finished in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..api import run as mmpath_run
from ..executor import map_unordered
from ..lazy import pandas as pd  # on first use (start-up time): lazy.py
from ..progress import RunCounter
from ..scenario import load_scenario
from . import catalog, registry  # noqa: F401 (catalog: registers every experiment)
from .registry import Claim, Experiment, Mode, Point


@dataclass
class ExperimentData:
    experiment: Experiment
    points: list[Point]
    runs: pd.DataFrame  # one row per (point, seed): the point's key columns, seed, metrics
    series: pd.DataFrame | None = None  # optional time series (key columns, seed, t_s, ...)
    # (point key, seed or None for the whole point, message) for every failed run or point
    failures: list[tuple[dict[str, Any], int | None, str]] = field(default_factory=list)

    def errors(self, needs=lambda key: True) -> list[str]:
        """One line per distinct failure message among the points ``needs`` selects."""
        grouped: dict[str, list[str]] = {}
        for key, seed, msg in self.failures:
            if needs(key):
                where = _describe_key(key) + (f" seed={seed}" if seed is not None else "")
                grouped.setdefault(msg, []).append(where)
        lines = []
        for msg, where in grouped.items():
            more = f" (+{len(where) - 1} more)" if len(where) > 1 else ""
            lines.append(f"{where[0]}{more}: {msg}")
        return lines


def plan(claims: Iterable[Claim], mode: Mode) -> dict[str, list[Point]]:
    """The points each experiment must run: the union of what the claims need, in the
    experiment's own order."""
    wanted: dict[str, list[Claim]] = {}
    for c in claims:
        wanted.setdefault(c.experiment, []).append(c)
    out: dict[str, list[Point]] = {}
    for exp_id, cs in wanted.items():
        exp = registry.EXPERIMENTS[exp_id]
        pts = [p for p in exp.points(mode) if any(c.needs(p.key) for c in cs)]
        seen: set = set()
        out[exp_id] = [p for p in pts if not (p.label in seen or seen.add(p.label))]
    return out


def _describe_key(key: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in key.items())


def run_one(exp_id: str, index: int, point: Point, seed: int, mode: Mode) -> dict[str, Any]:
    """One run in a worker process. Never raises: failures come back as an ``error`` string."""
    exp = registry.EXPERIMENTS[exp_id]
    t0 = time.perf_counter()
    try:
        res = exp.run(point, seed) if exp.run is not None else mmpath_run(dict(point.scenario), seed=seed)
        measured = exp.measure(res, point, mode)
    except Exception as e:  # a bug or a rejected scenario: reported, never a crash of the pool
        return {"exp": exp_id, "index": index, "seed": seed, "row": None, "series": None,
                "error": f"{type(e).__name__}: {' '.join(str(e).split())}"}
    series = None
    if isinstance(measured, tuple):
        measured, series = measured
    ok = getattr(res, "ok", True)
    row = {**point.key, "seed": seed, **measured, "invariants_ok": ok,
           "wall_s": time.perf_counter() - t0}
    error = None
    if not ok:
        error = "invariant check failed: " + "; ".join(
            f"{c.get('flow')}: {c.get('check')}: {c.get('detail')}" for c in res.failed_checks)
    if series is not None:
        series = series.copy()
        for k, v in point.key.items():
            series.insert(0, k, v)
        series.insert(len(point.key), "seed", seed)
    return {"exp": exp_id, "index": index, "seed": seed, "row": row, "series": series, "error": error}


def _validate(points: list[Point]) -> dict[int, str]:
    """Check each point's scenario once in this process, so a field the core does not know yet
    fails one point with one message instead of N runs in the workers."""
    bad: dict[int, str] = {}
    for i, p in enumerate(points):
        try:
            load_scenario(dict(p.scenario))
        except Exception as e:
            bad[i] = f"{type(e).__name__}: {' '.join(str(e).split())}"
    return bad


def run(claims: Iterable[Claim], mode: Mode, workers: int | None = None,
        progress: bool = True, dask: str | None = None) -> dict[str, ExperimentData]:
    """Run every point each selected claim needs, ``mode.runs`` times (seeds 1..N), on local
    processes or on the Dask cluster at ``dask`` (mmpath/executor.py)."""
    todo = plan(claims, mode)
    failures: dict[str, list[tuple[dict[str, Any], int | None, str]]] = {e: [] for e in todo}
    tasks: list[tuple[str, int, Point, int]] = []
    for exp_id, points in todo.items():
        bad = _validate(points)
        for i, msg in bad.items():
            failures[exp_id].append((dict(points[i].key), None, msg))
        for i, p in enumerate(points):
            if i not in bad:
                tasks += [(exp_id, i, p, s) for s in registry.EXPERIMENTS[exp_id].seeds(mode)]

    results: list[dict[str, Any]] = []
    bar = RunCounter(len(tasks), progress, label="reproducing")
    # Exclusive experiments (emulation: real time on this machine) run after the others, one
    # at a time, here.
    solo = [t for t in tasks if registry.EXPERIMENTS[t[0]].exclusive]
    shared = [t for t in tasks if not registry.EXPERIMENTS[t[0]].exclusive]
    try:
        for batch, kw in ((shared, {"workers": workers, "dask": dask}), (solo, {"workers": 1})):
            args = [(exp_id, i, p, s, mode) for exp_id, i, p, s in batch]
            for k, r, err in map_unordered(run_one, args, **kw):
                if err is not None:  # run_one reports its own failures; this is a lost worker
                    exp_id, i, _, s = batch[k]
                    r = {"exp": exp_id, "index": i, "seed": s, "row": None, "series": None, "error": err}
                results.append(r)
                bar.step()
    finally:
        bar.close()

    out: dict[str, ExperimentData] = {}
    for exp_id, points in todo.items():
        mine = sorted((r for r in results if r["exp"] == exp_id), key=lambda r: (r["index"], r["seed"]))
        for r in mine:
            if r["error"]:
                failures[exp_id].append((dict(points[r["index"]].key), r["seed"], r["error"]))
        rows = [r["row"] for r in mine if r["row"] is not None]
        series = [r["series"] for r in mine if r["series"] is not None and len(r["series"])]
        out[exp_id] = ExperimentData(
            experiment=registry.EXPERIMENTS[exp_id],
            points=points,
            runs=pd.DataFrame(rows),
            series=pd.concat(series, ignore_index=True) if series else None,
            failures=failures[exp_id],
        )
    return out
