"""`mmpath.run`: simulate one scenario and return a :class:`Result`."""

from __future__ import annotations

import inspect
import math
import os
import time
from pathlib import Path
from typing import Any, Mapping

from . import _core, metrics, progress as _progress, runstats
from .errors import ScenarioError
from .gridseries import GridSeries
from .lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from .outputs import (TimelineFile, check_out_folder, interval_batches, stale_files, staged_folder, system_arrow_pool,
                      timeline_batches, write_outputs, write_run_files)
from .scenario import Overrides, Scenario, ScenarioSpec, load_scenario, one_variant
from .spelling import PYTHON
from .version import __version__

# Number of run_until slices: ~1 % of the simulated duration each, so the progress bar moves
# smoothly and Ctrl-C (checked by Python between slices) is honoured within a fraction of a second.
_CHUNKS = 100

# Most timeline rows the core records between two hand-overs (a slice is shortened to stay under
# it): 16 Ki rows of 23 columns are ~2.5 MB, what a run with an output folder holds of its timeline
# at any time, however long it runs (the rows go on to timeline.parquet: outputs.TimelineFile).
CHUNK_ROWS = 1 << 14

# A run written to a folder keeps its intervals there too, typed, for Result.intervals to read
# back (intervals.csv rounds the bin starts); hidden: it is the API's, not an output to read.
INTERVALS_FILE = ".intervals.parquet"

# Keys of summary.json that depend on the machine's speed, not on the scenario and seed; the
# determinism guarantee (byte-identical outputs for the same seed) excludes exactly these.
WALL_TIME_KEYS = ("wall_s", "sim_s_per_wall_s", "events_per_s")


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
    timeline   DataFrame, 10 ms samples of transport and link state (see docs/outputs.md); read
               from timeline_file when the run streamed it there
    events     DataFrame, link events: t_s, path, kind, value
    channel    dict: path name -> that path's channel during the run, as trace CSV text
    scenario   the validated Scenario that ran

    A run written to an output folder (`run(..., out=DIR)`, `mmpath run`) streamed its timeline
    to DIR/timeline.parquet and its intervals to DIR/.intervals.parquet as it ran and holds
    neither: `timeline` and `intervals` read the file each time they are asked for (keep the
    frame in a variable), `timeline_file` is the timeline's path (None: in memory).
    """

    def __init__(
        self,
        summary: dict[str, Any],
        intervals: pd.DataFrame | TimelineFile,
        timeline: pd.DataFrame | TimelineFile,
        events: pd.DataFrame,
        scenario: Scenario,
    ) -> None:
        self.summary = summary
        self._intervals = intervals
        self._timeline = timeline
        self.events = events
        self.scenario = scenario
        # path name -> the channel the run saw, as trace CSV text (set by the runner).
        self.channel: dict[str, str] = {}

    @property
    def intervals(self) -> pd.DataFrame:
        if isinstance(self._intervals, TimelineFile):
            return self._intervals.read()
        return self._intervals

    @intervals.setter
    def intervals(self, frame: pd.DataFrame) -> None:
        self._intervals = frame

    @property
    def timeline(self) -> pd.DataFrame:
        if isinstance(self._timeline, TimelineFile):
            return self._timeline.read()
        return self._timeline

    @timeline.setter
    def timeline(self, frame: pd.DataFrame) -> None:
        self._timeline = frame

    @property
    def timeline_file(self) -> Path | None:
        """The Parquet file the timeline was streamed to (None: the timeline is in memory)."""
        return self._timeline.path if isinstance(self._timeline, TimelineFile) else None

    @property
    def ok(self) -> bool:
        """Whether every correctness invariant held (each byte delivered once, in order...)."""
        return bool(self.summary["invariants"]["ok"])

    @property
    def failed_checks(self) -> list[dict[str, Any]]:
        return [c for c in self.summary["invariants"].get("checks", []) if not c.get("ok", False)]

    def save(self, out_dir: str | os.PathLike, report: bool = True) -> Path:
        # (A streamed timeline is copied file to file, never loaded.)
        """Write summary.json, intervals.csv, timeline.parquet, iperf3.json (and report.html)."""
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


def _num(x: Any) -> float | None:
    """A JSON-safe number: None for NaN / inf / missing."""
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else None


def flow_metrics(flow: Mapping[str, Any], index: int, intervals: pd.DataFrame, timeline: pd.DataFrame,
                 config: Mapping[str, Any], events: pd.DataFrame | None = None, *,
                 series: np.ndarray | None = None, stats: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Issue 5's per-flow metrics (mmpath.metrics, shared with the analyzer), for summary.json.

    - ``outages``: the spans with one of the flow's paths down (metrics.link_outages on the
      run's `events`: several paths' overlapping spans are one, until the last is back), else
      throughput outages (100 ms bins under 1 Mbit/s); for each, metrics.outage_and_recovery's
      measure (as `mmpath emu run --compare` and `mmpath reproduce` take it, on the flow's own
      100 ms series: an MPTCP connection's, not its subflows' too): ``outage_s``, the time
      from the link-down with throughput under 10 % of the 2 s mean before, and
      ``resaturation_s``, from the link's return until the 1 s mean throughput is back to 90 %
      of that pre-outage mean (None: never, or the link not back within the run);
    - ``drops``: throughput drops >= 30 % below the 1 s running mean: count, deepest, longest;
    - ``rtt_inflation``: the 10 ms srtt samples against the minimum RTT the flow measured;
    - ``utilization``: throughput over the capacity of the flow's bottleneck (the last hop's
      rate, capped by the backbone's when there is one; an MPTCP connection's paths' rates
      summed).

    A run's own summary passes `series` (the flow's 100 ms series, flow_series) and `stats`
    (runstats.flow_timeline_stats), computed a batch at a time; without them they are computed
    here from `intervals` and `timeline`.
    """
    name = str(flow.get("name", ""))
    dt = 0.1
    sim_s = float(config.get("duration_s", 0.0))
    if series is None:
        series = flow_series(lambda: [intervals], [name], sim_s)[name]
    mbps = series
    if stats is None:
        stats = runstats.flow_timeline_stats(lambda: [timeline], [name], config)[name]
    # Measured a block of samples at a time (gridseries.py): the same numbers as the metrics
    # functions on (np.arange(n) * dt, mbps), without their whole-length temporaries.
    g = GridSeries(mbps, dt)
    out: dict[str, Any] = {}

    # Outages: the flow's paths' link events when it has any, else the throughput's.
    spans: list[tuple[float, float]] = []
    flows = config.get("flow") or []
    fc = flows[index] if index < len(flows) else {}
    paths = (fc.get("paths") if fc.get("kind") == "mptcp" else None) or [fc.get("path") or flow.get("path")]
    wired = {str(p["name"]) for p in config.get("path") or [] if (p.get("technology") or "wired") == "wired"}
    if events is not None and len(events):
        spans = metrics.link_outages(events["t_s"], events["path"], events["kind"], events["value"],
                                     [str(p) for p in paths if p is not None], wired=wired, end_s=sim_s)
    if not spans:
        spans = g.outages()
    outs = []
    for start, end in spans:
        m = g.outage_and_recovery(start, end, pre_s=2.0, frac=0.1, bin_s=dt)
        r = m["recovery_s"] if end < sim_s else None
        outs.append({"start_s": start, "restored_s": end, "length_s": end - start, "outage_s": _num(m["outage_s"]),
                     "resaturation_s": _num(r)})
    out["outages"] = outs

    drops = g.throughput_drops(window_s=1.0, depth=0.3)
    out["drops"] = {
        "count": len(drops),
        "max_depth": _num(max((d["depth"] for d in drops), default=None)),
        "max_length_s": _num(max((d["length_s"] for d in drops), default=None)),
    }

    rtt = flow.get("rtt_ms") or {}
    if stats["rows"] and rtt.get("samples"):
        srtt = stats["srtt"]
        infl = metrics.rtt_inflation_of(*(srtt or (0, None, None)), float(rtt["min"]))
        out["rtt_inflation"] = {k: (_num(v) if k != "samples" else int(v)) for k, v in infl.items()}
    else:
        out["rtt_inflation"] = None

    cap = stats["capacity"] if stats["rows"] else None
    out["utilization"] = _num(metrics.utilization([flow.get("goodput_mbps", 0.0)], cap)) if cap else None
    return out


def flow_series(batches: Any, names: list[str], sim_s: float, dt: float = 0.1) -> dict[str, np.ndarray]:
    """Each flow's own (an MPTCP connection's, not its subflows') throughput in `dt` bins over the
    run, from a pass over the intervals' batches (bins added in the rows' order, as one
    np.add.at over the whole frame adds them)."""
    n = max(int(round(sim_s / dt)), 1)
    out = {name: np.zeros(n) for name in names}
    for intervals in batches():
        if not len(intervals):
            continue
        labels = intervals["flow"].astype(str)
        for name in names:
            iv = intervals[labels == name]
            if len(iv) and "subflow" in iv:
                iv = iv[iv["subflow"] < 0]  # the flow's (connection's) own rows: its subflows' are in them
            if len(iv):
                idx = np.round(iv["t_s"].to_numpy(dtype=float) / dt).astype(int)
                ok = (idx >= 0) & (idx < n)
                np.add.at(out[name], idx[ok], iv["mbps"].to_numpy(dtype=float)[ok])
    return out


def _joined(chunks: list[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The columns of several chunks end to end (a single chunk's arrays as they are)."""
    if len(chunks) == 1:
        return dict(chunks[0])
    return {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}


def _intervals_frame(columns: Mapping[str, np.ndarray], decode_fp: Mapping[str, list[str]]) -> pd.DataFrame:
    intervals = _frame(columns, decode_fp)
    # iperf3 style rate of each 100 ms bin.
    intervals["mbps"] = intervals["bytes"].to_numpy(dtype=np.float64) * 8 / 0.1 / 1e6
    return intervals


def _build_result(out: dict[str, Any], scenario: Scenario, seed: int, wall_s: float,
                  timeline: pd.DataFrame | TimelineFile, intervals: pd.DataFrame | TimelineFile | None = None) -> Result:
    """`out`: what finish() returned, its events those of every chunk joined, and its intervals
    too unless they were streamed to a file (`intervals`)."""
    flow_names = list(out["flow_names"])
    path_names = list(out["path_names"])
    decode_fp = {"flow": flow_names, "path": path_names}

    if intervals is None:
        intervals = _intervals_frame(out["intervals"], decode_fp)
    events = _frame(out["events"], {"path": path_names, "kind": list(out["event_kinds"])})

    core_summary = _ordered(dict(out["summary"]))
    sim_s = float(core_summary.get("sim_s", scenario.duration_s))
    n_events = int(core_summary.get("events", 0))
    # Stable key order: identity first, then the core's metrics, then the machine-dependent
    # timings, then the full normalized scenario so a summary.json alone reproduces the run.
    summary: dict[str, Any] = {
        "scenario": scenario.name,
        "seed": seed,
        "mmpath_version": __version__,
        **core_summary,
        "wall_s": wall_s,
        "sim_s_per_wall_s": sim_s / wall_s if wall_s > 0 else None,
        "events_per_s": n_events / wall_s if wall_s > 0 else None,
        "scenario_config": scenario.config,
    }
    result = Result(summary, intervals, timeline, events, scenario)
    add_flow_metrics(result)
    # Each path's channel as it happened, in mmpath's trace CSV (replayable: docs/traces.md).
    result.channel = {str(k): str(v) for k, v in dict(out.get("channel_csv", {})).items()}
    return result


def add_flow_metrics(result: Result) -> None:
    """Each flow's `metrics` in result.summary (flow_metrics), from a pass or a few over the
    intervals and the timeline, a batch at a time (a streamed run's row groups, only the columns
    used; an in-memory run's whole frames)."""
    summary, config = result.summary, result.scenario.config
    if not summary.get("flows"):
        return
    names = [str(f.get("name", "")) for f in summary["flows"]]
    series = flow_series(lambda: interval_batches(result), names, float(config.get("duration_s", 0.0)))
    stats = runstats.flow_timeline_stats(lambda: timeline_batches(result, runstats.COLUMNS), names, config)
    for i, flow in enumerate(summary["flows"]):
        flow["metrics"] = flow_metrics(flow, i, None, None, config, result.events,
                                       series=series[names[i]], stats=stats[names[i]])


def _scheduler_map(scenario: Scenario, scheduler: Any) -> dict[str, Any]:
    """``scheduler``: one object for every MPTCP flow, or {flow name: object}."""
    if scheduler is None:
        return {}
    if isinstance(scheduler, Mapping):
        return dict(scheduler)
    names = [f["name"] for f in scenario.config.get("flow", []) if f.get("kind") == "mptcp"]
    if not names:
        raise ScenarioError(f"{scenario.source}: scheduler= given but the scenario has no MPTCP flow")
    return {n: scheduler for n in names}


def simulate(scenario: Scenario, show_progress: bool = False, scheduler: Any = None,
             label: str | None = None, timeline_file: str | os.PathLike | None = None,
             chunk_rows: int = CHUNK_ROWS, intervals_file: str | os.PathLike | None = None) -> Result:
    """Run an already validated Scenario (the seed is the one in its config).

    timeline_file  stream the timeline to this Parquet file as the run goes (chunks of at
               least `chunk_rows` rows, into row groups of ~4 MiB) instead of keeping it in memory; the file is
               written under a temporary name beside it and renamed when the run ends, and
               removed if the run fails or is interrupted (see simulate_to for a whole folder)
    intervals_file  the same for the intervals (100 ms bins)

    label      what the progress bar says it is running (default "simulating"; `mmpath run`
               names the variant)

    scheduler  a custom MPTCP scheduler written in Python (see docs/schedulers.md): an object
               with select(now_s, subflows, conn) -> subflow index or None, for every MPTCP
               flow, or a dict {flow name: object}
    """
    seed = scenario.seed
    try:
        sim = _core.Simulation(scenario.json, seed)
    except _core.ScenarioError as e:  # normalize_scenario accepted it, so this is unexpected
        raise ScenarioError(f"{scenario.source}: {e}") from None
    for flow, obj in _scheduler_map(scenario, scheduler).items():
        if isinstance(obj, type) and inspect.isfunction(inspect.getattr_static(obj, "select", None)):
            # scheduler=MySched without (): its select's `self` would take the time, and the run
            # go on with every argument shifted.
            raise ScenarioError(f"{scenario.source}: scheduler for flow {flow!r}: {obj.__name__} is a class; pass "
                                f"an instance: scheduler={obj.__name__}()")
        try:
            sim.set_scheduler(flow, obj)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"{scenario.source}: scheduler for flow {flow!r}: {e}") from None

    duration = float(sim.duration_s)
    bar = _progress.Progress(duration, enabled=show_progress, label=label or "simulating")
    # Slices of ~1 % of the run, shorter when that many timeline rows would pass `chunk_rows`;
    # after each the core hands over what it recorded (it keeps none of it).
    rows_per_s = float(sim.timeline_rows_per_s)
    slices = max(_CHUNKS, math.ceil(duration * rows_per_s / max(int(chunk_rows), 1)))
    iv_chunks: list[Mapping[str, np.ndarray]] = []
    ev_chunks: list[Mapping[str, np.ndarray]] = []
    tl_chunks: list[Mapping[str, np.ndarray]] = []
    writer = TimelineFile(timeline_file) if timeline_file is not None else None
    iv_writer = TimelineFile(intervals_file) if intervals_file is not None else None
    names = sim.names()
    decode = {"flow": list(names["flow_names"]), "path": list(names["path_names"]),
              "cc_state": list(names["cc_states"])}

    decode_fp = {"flow": decode["flow"], "path": decode["path"]}
    pending = 0  # timeline rows in tl_chunks not yet written (a run with a file)
    iv_pending = 0  # the same for the intervals

    def keep(chunk: Mapping[str, Any], last: bool = False) -> None:
        nonlocal pending, iv_pending
        iv_chunks.append(chunk["intervals"])
        ev_chunks.append(chunk["events"])
        tl_chunks.append(chunk["timeline"])
        pending += len(chunk["timeline"]["t_s"])
        iv_pending += len(chunk["intervals"]["t_s"])
        # Chunks of at least `chunk_rows` rows (the last one: what is left) go to the writer,
        # whose row groups close between chunks (outputs.TimelineFile).
        if writer is not None and (pending >= chunk_rows or (last and pending)):
            writer.write(_frame(_joined(tl_chunks), decode))
            tl_chunks.clear()
            pending = 0
        if iv_writer is not None and (iv_pending >= chunk_rows or (last and iv_pending)):
            iv_writer.write(_intervals_frame(_joined(iv_chunks), decode_fp))
            iv_chunks.clear()
            iv_pending = 0

    t0 = time.perf_counter()
    try:
        for k in range(1, slices + 1):
            sim.run_until(duration * k / slices)
            bar.update(sim.now_s)
            keep(sim.drain())
        out = sim.finish()
        keep(out, last=True)
        for w in (writer, iv_writer):
            if w is not None:
                w.close()
    finally:
        bar.close()
        for w in (writer, iv_writer):
            if w is not None:
                w.abandon()  # an error or Ctrl-C: no half-written file (a no-op once closed)
    wall_s = time.perf_counter() - t0
    out["events"] = _joined(ev_chunks)
    intervals: pd.DataFrame | TimelineFile | None = iv_writer
    if iv_writer is None:
        out["intervals"] = _joined(iv_chunks)
    timeline: pd.DataFrame | TimelineFile
    if writer is not None:
        timeline = writer
    else:
        timeline = _frame(_joined(tl_chunks), decode)
    return _build_result(out, scenario, seed, wall_s, timeline, intervals)


def run(
    scenario: ScenarioSpec,
    seed: int | None = None,
    overrides: Overrides = None,
    out: str | os.PathLike | None = None,
    progress: bool = False,
    scheduler: Any = None,
    variant: str | None = None,
) -> Result:
    """Simulate a scenario and return its Result.

    scenario   path to a .toml file, a bundled scenario name ("default") or a dict
    seed       RNG seed; default: the scenario's `seed` field
    overrides  {"flow.0.cc": "reno"} (values used as they are) or ["flow.0.cc=reno", ...]
               (values parsed as TOML, as --set does)
    out        if given, also write the output folder there (see docs/outputs.md)
    progress   show a progress bar on stderr (only when stderr is a terminal)
    scheduler  a custom MPTCP scheduler in Python (docs/schedulers.md), or {flow name: object}
    variant    for a scenario with [[variant]] entries, run that one (its overrides, then
               `overrides`); without it such a scenario runs its base (compare.compare runs all)
    """
    if variant is not None:
        sc = one_variant(scenario, overrides, seed, variant, spelling=PYTHON)
    else:
        sc = load_scenario(scenario, overrides, seed=seed, spelling=PYTHON)
    if out is None:
        return simulate(sc, show_progress=progress, scheduler=scheduler)
    check_out_folder(Path(out))  # an unwritable folder is refused before the run, not after it
    return simulate_to(sc, out, show_progress=progress, scheduler=scheduler)


def simulate_to(scenario: Scenario, out: str | os.PathLike, show_progress: bool = False, scheduler: Any = None,
                label: str | None = None, report: bool = True, chunk_rows: int = CHUNK_ROWS) -> Result:
    """`simulate`, writing the output folder `out` as it runs (docs/outputs.md): the timeline
    goes to timeline.parquet chunk by chunk, so the run holds at most `chunk_rows` rows of it,
    and the Result reads it back from there. Everything is written into a hidden sibling folder
    and moved into `out` only when the run and every file are complete; a failed, interrupted or
    killed run leaves `out` as it was."""
    out = Path(out)
    with system_arrow_pool(), staged_folder(out, stale=stale_files(out)) as tmp:
        result = simulate(scenario, show_progress=show_progress, scheduler=scheduler, label=label,
                          timeline_file=tmp / "timeline.parquet", chunk_rows=chunk_rows,
                          intervals_file=tmp / INTERVALS_FILE)
        write_run_files(result, tmp, report=report)
    for spooled, name in ((result._timeline, "timeline.parquet"), (result._intervals, INTERVALS_FILE)):
        if isinstance(spooled, TimelineFile):
            spooled.moved_to(out / name)
    return result
