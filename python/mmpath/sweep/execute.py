"""Running a sweep's runs: on this machine's cores (a process pool) or on a Dask cluster
(dask.distributed, `--dask ADDRESS`). Either way each run is one call of `run_one`, a plain
function of plain data (the validated scenario and its seed) that returns the run's rows, so the
results do not depend on where or in which order the runs finished.

Dask is optional (``pip install "mmpath[dask]"``); workers need mmpath installed, and a file a
scenario names (a capacity trace) must be readable at the same path on every worker.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from ..errors import MmpathError
from .spec import Run

# Per flow: the summary fields copied to the table as they are.
FLOW_FIELDS = ("kind", "cc", "scheduler", "mode", "goodput_mbps", "bytes_delivered", "retransmits",
               "loss_pct", "energy_j", "nj_per_bit")


class DaskUnavailable(MmpathError):
    """`--dask` given but dask.distributed is not installed."""


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


def run_one(run: Run) -> tuple[int, list[dict[str, Any]]]:
    """Simulate one run (in a worker) and return (its index, its rows)."""
    from ..api import simulate

    result = simulate(run.scenario)
    return run.index, rows_of(result.summary)


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group: the parent handles it and stops the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_local(runs: list[Run], workers: int | None) -> Iterator[tuple[Run, list[dict[str, Any]] | None, str | None]]:
    """Runs on this machine: in-process for one worker, else a process pool."""
    if (workers or os.cpu_count() or 1) <= 1 or len(runs) == 1:
        for r in runs:
            yield (r, *_guard(run_one, r))
        return
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count(), initializer=_ignore_sigint) as pool:
        futures = {pool.submit(run_one, r): r for r in runs}
        try:
            for fut in as_completed(futures):
                r = futures[fut]
                try:
                    _, rows = fut.result()
                    yield r, rows, None
                except Exception as e:  # noqa: BLE001 - a run's failure is reported in its row
                    yield r, None, f"{type(e).__name__}: {e}"
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def run_dask(runs: list[Run], address: str) -> Iterator[tuple[Run, list[dict[str, Any]] | None, str | None]]:
    """Runs on the Dask cluster whose scheduler listens at `address` (tcp://host:port)."""
    try:
        from distributed import Client, as_completed as dask_completed
    except ImportError:
        raise DaskUnavailable('--dask needs dask.distributed: pip install "mmpath[dask]" '
                              '(or "dask[distributed]")') from None
    try:
        client = Client(address, timeout=10)
    except (OSError, TimeoutError) as e:
        raise MmpathError(f"--dask {address}: cannot reach a Dask scheduler there ({' '.join(str(e).split())})") \
            from None
    try:
        # pure=False: two runs are never the same task, whatever their arguments hash to.
        futures = client.map(run_one, runs, pure=False)
        by_key = {f.key: r for f, r in zip(futures, runs)}
        for fut in dask_completed(futures):
            r = by_key[fut.key]
            try:
                _, rows = fut.result()
                yield r, rows, None
            except Exception as e:  # noqa: BLE001
                yield r, None, f"{type(e).__name__}: {e}"
    finally:
        client.close()


def _guard(fn: Callable[[Run], tuple[int, list[dict[str, Any]]]], r: Run):
    try:
        return fn(r)[1], None
    except Exception as e:  # noqa: BLE001 - as in the pool: a run's failure is reported in its row
        return None, f"{type(e).__name__}: {e}"
