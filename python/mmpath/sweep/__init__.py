"""Sweeps: a grid of scenario overrides x seeds, run in parallel on this machine's cores or on a
Dask cluster, gathered into one results table (docs/sweep.md `mmpath sweep`).

    import mmpath.sweep
    res = mmpath.sweep.run("study.toml", workers=4, out="study-out")   # or dask="tcp://host:8786"
    res.table                       # pandas DataFrame, a row per run and flow (results.py)
    res.ok                          # every run finished and every invariant held

The sweep file's format: spec.py. One run and its rows: execute.py; where runs execute: ../executor.py. The table and files: results.py.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..lazy import pandas as pd  # on first use (start-up time): lazy.py
from ..outputs import check_out_folder
from ..progress import RunCounter
from ..version import __version__
from . import results as _results
from .execute import execute_runs
from .spec import SweepError, SweepSpec, load_sweep

__all__ = ["SweepError", "SweepResult", "load_sweep", "run"]


@dataclass
class SweepResult:
    spec: SweepSpec
    table: pd.DataFrame
    errors: dict[int, str] = field(default_factory=dict)
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        """Every run finished and every invariant of every run held."""
        if self.errors:
            return False
        return "invariants_ok" not in self.table or bool(self.table["invariants_ok"].all())

    def summary_text(self) -> str:
        header, rows = _results.summary_rows(self.spec, self.table)
        return _results.format_rows(header, rows)


def run(sweep: str | os.PathLike | Mapping[str, Any], workers: int | None = None, dask: str | None = None,
        out: str | os.PathLike | None = None, progress: bool = False) -> SweepResult:
    """Validate the whole sweep, run every (grid point, seed), and return the table.

    workers  processes on this machine (default: one per CPU); ignored with `dask`
    dask     address of a Dask scheduler (e.g. "tcp://10.0.0.5:8786")
    out      if given, write results.parquet, results.csv and sweep.json there
    """
    spec = sweep if isinstance(sweep, SweepSpec) else load_sweep(sweep)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError(f"workers: must be an integer >= 1 (got {workers!r})")
    if spec.engine == "emulate":
        # Real time on this machine's kernel: one run at a time, here (docs/sweep.md).
        if dask:
            raise SweepError(f"{spec.source}: engine = \"emulate\" runs on this machine's kernel, one run at a "
                             "time; --dask does not apply (allowed: no --dask)")
        workers = 1
    if out is not None:
        check_out_folder(Path(out))  # before the runs: a folder that cannot be written loses no work
    stream = execute_runs(spec.runs, workers=workers, dask=dask, engine=spec.engine)
    done: dict[int, list[dict[str, Any]]] = {}
    errors: dict[int, str] = {}
    bar = RunCounter(len(spec.runs), progress, label="sweeping")
    t0 = time.perf_counter()
    try:
        for r, rows, err in stream:
            if err is not None:
                errors[r.index] = err
            else:
                done[r.index] = rows or []
            bar.step(", ".join(f"{k}={v}" for k, v in r.values) + f", seed {r.seed}")
    finally:
        bar.close()
    wall_s = time.perf_counter() - t0
    table = _results.table(spec, done, errors)
    res = SweepResult(spec=spec, table=table, errors=errors, wall_s=wall_s)
    if out is not None:
        meta = {"engine": spec.engine,
                "executor": f"dask {dask}" if dask else f"local, {workers or os.cpu_count()} workers",
                "wall_s": wall_s, "failed_runs": len(errors), "mmpath_version": __version__,
                "python": platform.python_version()}
        _results.write(spec, table, Path(out), meta)
    return res
