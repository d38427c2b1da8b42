"""One run of a sweep, and the rows it gives. Each run is one call of `run_one`, a plain function of
plain data (the validated scenario and its seed), so it can execute in a local process or on a
Dask worker (mmpath/executor.py) with the same result.

A file a scenario names (a capacity trace) must be readable at the same path on every worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# The engines are looked up when a run starts (api.simulate, emu.run), so a test or a caller that
# replaces one is followed, as when they were imported here at that moment.
from .. import api, emu, executor
from .spec import Run

# Per flow: the summary fields copied to the table as they are.
FLOW_FIELDS = ("kind", "cc", "scheduler", "mode", "goodput_mbps", "bytes_delivered", "retransmits",
               "loss_pct", "energy_j", "nj_per_bit")
# Per run, on each of its rows, after the flow's metrics.
RUN_FIELDS = ("sim_s", "wall_s", "events", "invariants_ok", "energy_total_j")


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


def emulated_rows_of(res: Any) -> list[dict[str, Any]]:
    """One row per flow of an emulation (mmpath.emu.EmuResult): iperf3's goodput, the bytes each
    path's interface sent, and how late the delay line was; the simulator's other columns
    (retransmits, RTT, energy...) stay empty."""
    m = res.meta
    queues = (m.get("delay_line") or {}).get("queues", [])
    late = [q["late_max_us"] / 1e3 for q in queues]
    n = sum(q["packets"] for q in queues)
    run = {"wall_s": m.get("wall_s"), "kernel": m.get("kernel"),
           "delay_late_mean_ms": sum(q["late_mean_us"] * q["packets"] for q in queues) / n / 1e3 if n else None,
           "delay_late_max_ms": max(late) if late else None}
    for path, mbps in res.path_mbps.items():
        run[f"path_{path}_mbps"] = mbps
    return [{"flow": f["name"], "kind": f["kind"], "cc": f.get("cc"), "mode": f.get("mode"),
             "goodput_mbps": f["goodput_mbps"], **run} for f in m["flows"]]


def run_one(run: Run, engine: str = "simulate") -> list[dict[str, Any]]:
    """Simulate (or emulate) one run, in a worker, and return its rows."""
    if engine == "emulate":
        return emulated_rows_of(emu.run(run.scenario.config, seed=run.seed, capture=False))

    return rows_of(api.simulate(run.scenario).summary)


def execute_runs(runs: list[Run], workers: int | None = None, dask: str | None = None,
                 engine: str = "simulate") -> Iterator[tuple[Run, list[dict[str, Any]] | None, str | None]]:
    """(run, rows, None) or (run, None, error) for every run, as each finishes."""
    tasks = [(r, engine) for r in runs]
    for i, rows, err in executor.map_unordered(run_one, tasks, workers=workers, dask=dask):
        yield runs[i], rows, err
