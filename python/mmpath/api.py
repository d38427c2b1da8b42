"""`mmpath.run`: simulate one scenario and return a :class:`Result`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import progress as _progress
from .errors import ScenarioError
from .scenario import Overrides, Scenario, ScenarioSpec, load_scenario

# Number of run_until slices: ~1 % of the simulated duration each, so the progress bar moves
# smoothly and Ctrl-C (checked by Python between slices) is honoured within a fraction of a second.
_CHUNKS = 100

# Keys of summary.json that depend on the machine's speed, not on the scenario and seed; the
# determinism guarantee (byte-identical outputs for the same seed) excludes exactly these.
WALL_TIME_KEYS = ("wall_s", "sim_s_per_wall_s", "events_per_s")


def _version() -> str:
    from . import __version__

    return __version__


def _decode(codes: np.ndarray, names: list[str]) -> pd.Categorical:
    """Integer codes (-1 = none) -> Categorical of names, without a Python loop over rows."""
    codes = np.asarray(codes)
    if len(set(names)) == len(names):
        return pd.Categorical.from_codes(codes.astype(np.int64), categories=list(names))
    # Categories must be unique; should the core ever repeat a name, fall back to plain labels.
    labels = np.array(list(names) + [None], dtype=object)
    return pd.Categorical(labels[np.where(codes < 0, len(names), codes)])


def _frame(columns: Mapping[str, np.ndarray], decode: Mapping[str, list[str]]) -> pd.DataFrame:
    """DataFrame from the core's column arrays; integer index columns become Categoricals."""
    data: dict[str, Any] = {}
    for name, values in columns.items():
        data[name] = _decode(values, decode[name]) if name in decode else np.asarray(values)
    return pd.DataFrame(data)


class Result:
    """One finished simulation.

    summary    dict, exactly what summary.json holds
    intervals  DataFrame, 100 ms bins: t_s, flow, subflow, path, bytes, mbps
    timeline   DataFrame, 10 ms samples of transport and link state (see docs/outputs.md)
    events     DataFrame, link events: t_s, path, kind, value
    channel    dict: path name -> that path's channel during the run, as trace CSV text
    scenario   the validated Scenario that ran
    """

    def __init__(
        self,
        summary: dict[str, Any],
        intervals: pd.DataFrame,
        timeline: pd.DataFrame,
        events: pd.DataFrame,
        scenario: Scenario,
    ) -> None:
        self.summary = summary
        self.intervals = intervals
        self.timeline = timeline
        self.events = events
        self.scenario = scenario
        # path name -> the channel the run saw, as trace CSV text (set by the runner).
        self.channel: dict[str, str] = {}

    @property
    def ok(self) -> bool:
        """Whether every correctness invariant held (each byte delivered once, in order...)."""
        return bool(self.summary["invariants"]["ok"])

    @property
    def failed_checks(self) -> list[dict[str, Any]]:
        return [c for c in self.summary["invariants"].get("checks", []) if not c.get("ok", False)]

    def save(self, out_dir: str | os.PathLike, report: bool = True) -> Path:
        """Write summary.json, intervals.csv, timeline.parquet, iperf3.json (and report.html)."""
        from .outputs import write_outputs

        return write_outputs(self, out_dir, report=report)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<mmpath.Result scenario={s['scenario']!r} seed={s['seed']} sim_s={s['sim_s']} "
            f"flows={len(s['flows'])} ok={self.ok}>"
        )


# Top-level keys of the core's summary in reading order (the core's JSON map sorts them
# alphabetically); keys not listed keep the core's order after these.
_SUMMARY_ORDER = ("sim_s", "events", "flows", "paths", "invariants")


def _ordered(core_summary: dict[str, Any]) -> dict[str, Any]:
    head = {k: core_summary[k] for k in _SUMMARY_ORDER if k in core_summary}
    return {**head, **{k: v for k, v in core_summary.items() if k not in head}}


def _build_result(out: dict[str, Any], scenario: Scenario, seed: int, wall_s: float) -> Result:
    flow_names = list(out["flow_names"])
    path_names = list(out["path_names"])
    decode_fp = {"flow": flow_names, "path": path_names}

    intervals = _frame(out["intervals"], decode_fp)
    # iperf3 style rate of each 100 ms bin.
    intervals["mbps"] = intervals["bytes"].to_numpy(dtype=np.float64) * 8 / 0.1 / 1e6
    timeline = _frame(out["timeline"], {**decode_fp, "cc_state": list(out["cc_states"])})
    events = _frame(out["events"], {"path": path_names, "kind": list(out["event_kinds"])})

    core_summary = _ordered(dict(out["summary"]))
    sim_s = float(core_summary.get("sim_s", scenario.duration_s))
    n_events = int(core_summary.get("events", 0))
    # Stable key order: identity first, then the core's metrics, then the machine-dependent
    # timings, then the full normalized scenario so a summary.json alone reproduces the run.
    summary: dict[str, Any] = {
        "scenario": scenario.name,
        "seed": seed,
        "mmpath_version": _version(),
        **core_summary,
        "wall_s": wall_s,
        "sim_s_per_wall_s": sim_s / wall_s if wall_s > 0 else None,
        "events_per_s": n_events / wall_s if wall_s > 0 else None,
        "scenario_config": scenario.config,
    }
    result = Result(summary, intervals, timeline, events, scenario)
    # Each path's channel as it happened, in mmpath's trace CSV (replayable: docs/traces.md).
    result.channel = {str(k): str(v) for k, v in dict(out.get("channel_csv", {})).items()}
    return result


def simulate(scenario: Scenario, show_progress: bool = False) -> Result:
    """Run an already validated Scenario (the seed is the one in its config)."""
    from . import _core

    seed = scenario.seed
    try:
        sim = _core.Simulation(scenario.json, seed)
    except _core.ScenarioError as e:  # normalize_scenario accepted it, so this is unexpected
        raise ScenarioError(f"{scenario.source}: {e}") from None

    duration = float(sim.duration_s)
    bar = _progress.Progress(duration, enabled=show_progress)
    t0 = time.perf_counter()
    try:
        for k in range(1, _CHUNKS + 1):
            sim.run_until(duration * k / _CHUNKS)
            bar.update(sim.now_s)
        out = sim.finish()
    finally:
        bar.close()
    wall_s = time.perf_counter() - t0
    return _build_result(out, scenario, seed, wall_s)


def run(
    scenario: ScenarioSpec,
    seed: int | None = None,
    overrides: Overrides = None,
    out: str | os.PathLike | None = None,
    progress: bool = False,
) -> Result:
    """Simulate a scenario and return its Result.

    scenario   path to a .toml file, a bundled scenario name ("default") or a dict
    seed       RNG seed; default: the scenario's `seed` field
    overrides  {"flow.0.cc": "reno"} or ["flow.0.cc=reno", ...] (values parsed as TOML)
    out        if given, also write the output folder there (see docs/outputs.md)
    progress   show a progress bar on stderr (only when stderr is a terminal)
    """
    sc = load_scenario(scenario, overrides, seed=seed)
    result = simulate(sc, show_progress=progress)
    if out is not None:
        result.save(out)
    return result
