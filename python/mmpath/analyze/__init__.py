"""mmNetAnalyzer (seed 003): cross-layer analysis of real testbed logs and of mmpath runs.

    import mmpath
    res = mmpath.analyze(["client.json", "capture.pcap", "ss.log"], out="analysis")
    res.summary      # dict, as summary.json
    res.intervals    # throughput bins: t_s, source, flow, subflow, path, bytes, mbps
    res.timeline     # cross-layer samples (docs/trace-schema.md)
    res.events       # link / protocol events

Readers (one module each; pcap/ is a package): iperf3.py, pcap/, ss.py, iw.py, wil6210.py, trace.py,
mmpath_run.py, one per input kind of kinds.py;
alignment in align.py; outputs in timeline.py, summary.py, report.py. See docs/analyze.md.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..lazy import pandas as pd  # on first use (start-up time): lazy.py
from ..outputs import dumps, staged_folder
from . import align as al, summary as sm, timeline as tl
from .errors import AnalyzeInputError
from .model import Source
from .report import write_report
from .sources import load

__all__ = ["analyze", "Analysis", "AnalyzeInputError", "Source"]


@dataclass
class Analysis:
    summary: dict
    intervals: pd.DataFrame
    timeline: pd.DataFrame
    events: pd.DataFrame
    sources: list[Source] = field(default_factory=list)
    out: Path | None = None

    def __repr__(self) -> str:
        return (f"<mmpath.Analysis sources={len(self.sources)} flows={len(self.summary.get('flows', []))}"
                f" out={str(self.out) if self.out else None!r}>")


def analyze(paths, out: str | os.PathLike | None = None, *, offsets: dict[str, float] | None = None,
            baselines: dict[str, float] | None = None, expected_mbps: float | None = None,
            bin_s: float = 0.1, report: bool = True, floor_mbps: float = 1.0,
            names_relative_to: str | os.PathLike | None = None) -> Analysis:
    """Read, align and analyze PATHs (files or folders); write DIR/ when `out` is given.

    baselines: single-path throughputs {name: Mbit/s} for Ben(mode) (seed 000 eq. 2/3);
    expected_mbps: Th_expected of the normalized throughput (seed 000 eq. 1);
    names_relative_to: name the sources relative to this folder (the emulator analyzes its
    staging folder, which is renamed afterwards).
    """

    if not (0.001 <= bin_s <= 60):
        raise AnalyzeInputError("--bin", f"{bin_s} s is out of range", "0.001-60 seconds")
    # NaN or an infinity here ended in a traceback (--offset) or a NaN in the summary
    # (--expected, --baseline); found by tests/analyze/test_cli_fuzz.py.
    for name, secs in (offsets or {}).items():
        # Up to 1e10 s: a Unix time is a valid shift (a relative trace placed among captures).
        if not math.isfinite(secs) or abs(secs) > 1e10:
            raise AnalyzeInputError("--offset", f"{name}={secs}: the shift is not a number of seconds in range",
                                    "a number of seconds between -1e10 and 1e10")
    for name, mbps in (baselines or {}).items():
        if not (math.isfinite(mbps) and mbps > 0):
            raise AnalyzeInputError("--baseline", f"{name}={mbps}: not a throughput", "a finite number of Mbit/s > 0")
    if expected_mbps is not None and not (math.isfinite(expected_mbps) and expected_mbps > 0):
        raise AnalyzeInputError("--expected", f"{expected_mbps} Mbit/s is not a throughput",
                                "a finite number of Mbit/s > 0")
    implied: dict[str, float] = {}
    sources = load(paths, keep_apart=set(offsets or {}), implied_offsets=implied)
    if names_relative_to is not None:
        for src in sources:
            src.path = os.path.relpath(src.path, names_relative_to)
    # An emulator folder places its capacity traces itself; the user's --offset wins.
    table, origin = al.align(sources, {**implied, **(offsets or {})})
    intervals, timeline, events = tl.build(sources, table, origin, bin_s)
    summary = sm.summarize(sources, table, origin, intervals, timeline, events, bin_s=bin_s,
                           baselines=baselines, expected_mbps=expected_mbps, floor_mbps=floor_mbps)
    res = Analysis(summary=summary, intervals=intervals, timeline=timeline, events=events, sources=sources)
    if out is not None:
        res.out = write(res, Path(out), report=report)
    return res


def write(res: Analysis, out: Path, report: bool = True) -> Path:
    """summary.json, intervals.csv, timeline.parquet, events.csv, report.html + PNGs; atomic like a run."""
    out = Path(out)
    with staged_folder(out) as tmp:
        (tmp / "summary.json").write_text(dumps(res.summary), encoding="utf-8")
        res.intervals.to_csv(tmp / "intervals.csv", index=False, lineterminator="\n")
        res.timeline.to_parquet(tmp / "timeline.parquet", engine="pyarrow", index=False)
        res.events.to_csv(tmp / "events.csv", index=False, lineterminator="\n")
        if report:
            write_report(res, tmp)
    return out


# mmpath/__init__.py binds this package as `mmpath.analyze`; making the module callable makes
# `mmpath.analyze([...])` run the analyzer.
class _CallableModule(sys.modules[__name__].__class__):
    def __call__(self, *args, **kwargs):
        return analyze(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
