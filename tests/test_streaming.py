"""Issue 26: a run with an output folder streams its timeline to timeline.parquet as it goes
(api.simulate_to, outputs.TimelineFile), so its memory is bounded by its state, not its length.

The streamed file holds exactly the in-memory run's timeline (bit for bit, same dtypes and
categories) whatever the chunk size, and a run that fails or is killed leaves no timeline file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from mmpath.api import simulate, simulate_to
from mmpath import SchedulerError
from mmpath.scenario import load_scenario

SHORT = {"duration_s": 2.0}  # blockage: 3 rows per 10 ms sample, 603 rows


def _same_bits(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for c in a.columns:  # NaN payloads and -0.0 too, not only values that compare equal
        if not isinstance(a[c].dtype, pd.CategoricalDtype):
            assert a[c].to_numpy().tobytes() == b[c].to_numpy().tobytes(), c


@pytest.fixture(scope="module")
def in_memory():
    return simulate(load_scenario("blockage", SHORT))


@pytest.mark.parametrize("chunk_rows", [1 << 14, 100])
def test_streamed_timeline_is_the_in_memory_one(tmp_path, in_memory, chunk_rows):
    res = simulate_to(load_scenario("blockage", SHORT), tmp_path / "out", report=False, chunk_rows=chunk_rows)
    assert res.timeline_file == tmp_path / "out" / "timeline.parquet"
    meta = pq.ParquetFile(res.timeline_file).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    # 100 rows: row-group boundaries mid-run (and mid-sample: 100 is no multiple of 3 rows);
    # each group but the last holds at least chunk_rows rows.
    assert sum(sizes) == 603 and len(sizes) == (1 if chunk_rows > 603 else 6), sizes
    assert all(n >= min(chunk_rows, 603) for n in sizes[:-1]), sizes
    _same_bits(in_memory.timeline, res.timeline)
    _same_bits(in_memory.intervals, res.intervals)
    strip = ("wall_s", "sim_s_per_wall_s", "events_per_s")
    assert {k: v for k, v in res.summary.items() if k not in strip} == \
        {k: v for k, v in in_memory.summary.items() if k not in strip}
    # Saved again elsewhere: the file is copied, the same rows.
    again = res.save(tmp_path / "again", report=False)
    _same_bits(pd.read_parquet(again / "timeline.parquet"), in_memory.timeline)


def test_in_memory_run_holds_its_timeline(in_memory):
    assert in_memory.timeline_file is None and len(in_memory.timeline) == 603


def test_failed_run_leaves_no_timeline_file(tmp_path):
    class Fails:
        """Schedules on the first subflow for a while, then fails (after several row groups)."""

        def select(self, now_s, subflows, conn):
            if now_s > 1.5:
                raise RuntimeError("stop here")
            s = subflows[0]
            return s["id"] if s["established"] and s["has_cwnd_room"] else None

    with pytest.raises(SchedulerError, match="stop here"):
        simulate(load_scenario("blockage", SHORT), scheduler=Fails(), timeline_file=tmp_path / "t.parquet",
                 chunk_rows=50)
    assert list(tmp_path.iterdir()) == [], "neither the file nor its part file is left"
    with pytest.raises(SchedulerError):
        simulate_to(load_scenario("blockage", SHORT), tmp_path / "out", scheduler=Fails(), chunk_rows=50)
    assert list(tmp_path.iterdir()) == [], "no output folder, no staging folder"


KILLED = """
import sys
from mmpath.api import simulate_to
from mmpath.scenario import load_scenario
simulate_to(load_scenario("blockage", {"duration_s": 3600.0}), sys.argv[1], report=False, chunk_rows=300)
"""


def test_killed_run_leaves_no_output_file(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(out)], stderr=subprocess.PIPE)
    try:
        part = None
        deadline = time.monotonic() + 120
        while part is None and time.monotonic() < deadline and proc.poll() is None:
            # The timeline being written: a part file in the hidden staging folder.
            part = next(iter(tmp_path.glob(".out.tmp-*/.timeline.parquet.*.part")), None)
            if part is not None and part.stat().st_size < 4096:
                part = None  # wait for a few row groups
            time.sleep(0.05)
        assert part is not None, proc.stderr.read().decode() if proc.poll() is not None else "no part file"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not out.exists(), "the output folder appears only when the run finished"
    assert not list(tmp_path.rglob("timeline.parquet")), "no file under the timeline's name anywhere"
    # What a kill leaves is the hidden staging folder with the part file (nothing can clean up
    # after SIGKILL); it is never taken for a run's output, and the next run into the same
    # folder removes it (its writer is gone).
    assert [p.name.startswith(".") for p in tmp_path.iterdir()] == [True]
    simulate_to(load_scenario("blockage", {"duration_s": 0.5}), out, report=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def _outputs(folder: Path) -> dict[str, bytes]:
    """The folder's files (report and plots left out), summary.json without its wall times."""
    import json

    from mmpath.api import WALL_TIME_KEYS

    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in (".json", ".csv")}
    summary = json.loads(files.pop("summary.json"))
    files["summary.json"] = json.dumps({k: v for k, v in summary.items() if k not in WALL_TIME_KEYS}).encode()
    return files


def test_streamed_outputs_are_read_a_row_group_at_a_time(tmp_path, in_memory, monkeypatch):
    """Everything written after a streamed run (summary metrics, intervals.csv, iperf3.json)
    reads timeline.parquet and the intervals a row group at a time, never whole (issue 26: a
    whole-column read is what made a long run's memory grow), and gives the bytes the in-memory
    run's folder holds."""
    import pyarrow.parquet as pq_mod

    from mmpath import outputs

    def whole(*a, **k):
        raise AssertionError("a whole-file read after a streamed run")

    monkeypatch.setattr(pd, "read_parquet", whole)
    monkeypatch.setattr(pq_mod, "read_table", whole)
    whole0, groups0 = outputs.WHOLE_READS[0], outputs.GROUPS_READ[0]
    res = simulate_to(load_scenario("blockage", SHORT), tmp_path / "out", report=False, chunk_rows=100)
    assert outputs.WHOLE_READS[0] == whole0, "TimelineFile.read() (the whole file) was called"
    # 603 timeline rows in groups of >= 100, 60 interval rows in one group: several passes of each.
    assert outputs.GROUPS_READ[0] - groups0 >= 6 * 3
    monkeypatch.undo()
    in_memory.save(tmp_path / "mem", report=False)
    assert _outputs(tmp_path / "out") == _outputs(tmp_path / "mem")
    _same_bits(res.intervals, in_memory.intervals)
    assert (tmp_path / "out" / ".intervals.parquet").is_file()


def test_streamed_report_is_the_in_memory_one(tmp_path, in_memory, monkeypatch):
    """report.html's plots of a streamed run come from its files in passes of row groups, each
    line thinned to every k-th point as it goes: the same PNGs as the in-memory run's (lines
    thinned here to ~40 points, so the stride is at work across group boundaries)."""
    from mmpath import outputs, report

    monkeypatch.setattr(report, "_MAX_POINTS", 40)
    whole0 = outputs.WHOLE_READS[0]
    simulate_to(load_scenario("blockage", SHORT), tmp_path / "out", report=True, chunk_rows=100)
    assert outputs.WHOLE_READS[0] == whole0
    in_memory.save(tmp_path / "mem", report=True)
    pngs = sorted(p.name for p in (tmp_path / "mem").glob("*.png"))
    assert "rtt.png" in pngs and "throughput_path.png" in pngs
    for name in pngs:
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "mem" / name).read_bytes(), name
