"""One run of a sweep, and the rows it gives. Each run is one call of `run_one`, a plain function of
plain data (the validated scenario and its seed), so it can execute in a local process or on a
Dask worker (mmpath/executor.py) with the same result.

A file a scenario names (a capacity trace) must be readable at the same path on every worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import executor
from .spec import Run

# Per flow: the summary fields copied to the table as they are.
FLOW_FIELDS = ("kind", "cc", "scheduler", "mode", "goodput_mbps", "bytes_delivered", "retransmits",
               "loss_pct", "energy_j", "nj_per_bit")


def rows_of(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per flow of a run's summary: its metrics, per-subflow goodput, and the run's
    own numbers (simulated and wall seconds, events, whether every invariant held)."""
    inv = summary.get("invariants") or {}
    energy = summary.get("energy") or {}
    run = {
        "sim_s": summary.get("sim_s"),
        "wall_s": summary.get("wall_s"),
        "events": summary.get("events"),
        "invariants_ok": bool(inv.get("ok", False)),
        "energy_total_j": energy.get("total_j"),
    }
    rows = []
    for f in summary.get("flows", []):
        row: dict[str, Any] = {"flow": f.get("name")}
        for k in FLOW_FIELDS:
            row[k] = f.get(k)
        rtt = f.get("rtt_ms") or {}
        row["rtt_mean_ms"] = rtt.get("mean")
        row["rtt_p95_ms"] = rtt.get("p95")
        for s in f.get("subflows") or []:
            row[f"subflow_{s.get('path')}_mbps"] = s.get("goodput_mbps")
        row.update(run)
        rows.append(row)
    return rows


def run_one(run: Run) -> list[dict[str, Any]]:
    """Simulate one run (in a worker) and return its rows."""
    from ..api import simulate

    return rows_of(simulate(run.scenario).summary)


def execute_runs(runs: list[Run], workers: int | None = None,
            dask: str | None = None) -> Iterator[tuple[Run, list[dict[str, Any]] | None, str | None]]:
    """(run, rows, None) or (run, None, error) for every run, as each finishes."""
    for i, rows, err in executor.map_unordered(run_one, [(r,) for r in runs], workers=workers, dask=dask):
        yield runs[i], rows, err
