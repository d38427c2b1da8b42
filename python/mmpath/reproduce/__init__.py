"""`mmpath reproduce`: run the seed papers' experiments and check each claim of docs/reproduce.md.

    from mmpath.reproduce import reproduce
    rep = reproduce(["000-mtu7912"], fast=True, out="repro-out")
    rep.ok, rep.results["000-mtu7912"].verdict.status, rep.data["000-mcs"].runs

Each claim prints its text, what the paper measured, what mmpath measured, its criterion (with
the tolerance) and PASS, FAIL or ERROR (a run or a scenario failed: the claim was not evaluated).
docs/reproduce.md describes every claim and how to add one.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..lazy import pandas as pd  # on first use (start-up time): lazy.py
from ..outputs import check_out_folder
from . import runner
from .catalog import UnknownClaim, known_ids, select
from .registry import CLAIMS, EXPERIMENTS, Claim, Mode, Verdict
from .report import write
from .runner import ExperimentData

__all__ = ["reproduce", "evaluate", "Report", "ClaimResult", "Mode", "known_ids", "select",
           "UnknownClaim", "CLAIMS", "EXPERIMENTS"]


@dataclass
class ClaimResult:
    claim: Claim
    verdict: Verdict


@dataclass
class Report:
    mode: Mode
    results: dict[str, ClaimResult]
    data: dict[str, ExperimentData]
    out: Path | None = None
    files: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.verdict.status == "PASS" for r in self.results.values())


def _needed_rows(claim: Claim, runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    if not len(runs):
        return runs
    mask = [bool(claim.needs(dict(zip(keys, vals)))) for vals in runs[keys].itertuples(index=False)]
    return runs[mask].reset_index(drop=True)


def evaluate(claim: Claim, data: ExperimentData, mode: Mode) -> Verdict:
    """The claim's verdict from its experiment's runs (only the points it needs)."""
    errors = data.errors(claim.needs)
    if errors:
        return Verdict("ERROR", f"not evaluated: {len(errors)} kind(s) of failed run or rejected scenario "
                                "(below)", errors=errors)
    keys = sorted({k for p in data.points for k in p.key})
    runs = _needed_rows(claim, data.runs, keys)
    if not len(runs):
        return Verdict("ERROR", "no runs", errors=["no runs"])
    try:
        text, checks = claim.check(runs, mode)
    except Exception as e:  # a bug in a check must not hide the other claims' results
        tb = traceback.format_exc(limit=3)
        return Verdict("ERROR", f"check failed: {type(e).__name__}: {e}", errors=[tb])
    status = "PASS" if checks and all(c.ok for c in checks) else "FAIL"
    return Verdict(status, text, checks)


def reproduce(ids: Iterable[str] = ("all",), runs: int | None = None, out: str | os.PathLike | None = None,
              fast: bool = False, workers: int | None = None, progress: bool = False,
              plots: bool = True, dask: str | None = None) -> Report:
    """Run the claims ``ids`` ("all" for every one) and return their verdicts.

    runs     runs per point (seeds 1..runs); default 10, or 2 with ``fast``
    out      if given, write the runs tables (Parquet + CSV), one PNG per experiment, claims.csv,
             report.md and report.html there
    fast     2 runs per point, 3 s scenarios, thinned sweeps where the claim allows
    workers  worker processes (default: os.cpu_count())
    dask     run on the Dask cluster whose scheduler is at this address instead (docs/sweep.md)
    """
    claims = select(ids)
    mode = Mode.make(fast=fast, runs=runs)
    if out is not None:
        check_out_folder(Path(out))  # before the runs: an unwritable folder loses no work
    data = runner.run(claims, mode, workers=workers, progress=progress, dask=dask)
    results = {c.id: ClaimResult(c, evaluate(c, data[c.experiment], mode)) for c in claims}
    rep = Report(mode=mode, results=results, data=data)
    if out is not None:
        rep.out = Path(out)
        rep.files = write(rep, rep.out, plots=plots)
    return rep
