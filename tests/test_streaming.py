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
        if a[c].dtype.kind in "fiub":  # (object columns: their bytes are pointers)
            assert a[c].to_numpy().tobytes() == b[c].to_numpy().tobytes(), c


@pytest.fixture(scope="module")
def in_memory():
    return simulate(load_scenario("blockage", SHORT))


def _as_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its categorical columns as plain labels (object), for readers that are not
    mmpath's: a Parquet dictionary holds the names a row group uses, in the order it met them."""
    out = frame.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(object)
    return out


@pytest.mark.parametrize("chunk_rows", [1 << 14, 100])
def test_streamed_timeline_is_the_in_memory_one(tmp_path, in_memory, chunk_rows):
    res = simulate_to(load_scenario("blockage", SHORT), tmp_path / "out", report=False, chunk_rows=chunk_rows)
    assert res.timeline_file == tmp_path / "out" / "timeline.parquet"
    meta = pq.ParquetFile(res.timeline_file).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    # Chunks of 100 rows (boundaries mid-sample: 100 is no multiple of 3 rows) go into one open
    # row group: the file's groups are set by their encoded size, not by the chunks.
    assert sizes == [603], sizes
    _same_bits(in_memory.timeline, res.timeline)
    _same_bits(in_memory.intervals, res.intervals)
    strip = ("wall_s", "sim_s_per_wall_s", "events_per_s")
    assert {k: v for k, v in res.summary.items() if k not in strip} == \
        {k: v for k, v in in_memory.summary.items() if k not in strip}
    # Saved again elsewhere: the file is copied, the same rows; pandas alone reads the same values.
    again = res.save(tmp_path / "again", report=False)
    _same_bits(_as_labels(pd.read_parquet(again / "timeline.parquet")), _as_labels(in_memory.timeline))


def test_row_groups_close_at_their_encoded_size(tmp_path, in_memory):
    """A row group is held encoded in memory until it is GROUP_BYTES big, then written: a long
    run's file has few groups (each costs its readers metadata) and its writer a bounded buffer.
    With a 4 KiB bound, 603 rows written 50 at a time make several groups, each closed at the
    first chunk that took it past the bound; read back batch by batch, the same rows."""
    from mmpath import outputs

    f = outputs.TimelineFile(tmp_path / "t.parquet", group_bytes=4096)
    frame = in_memory.timeline
    for i in range(0, len(frame), 50):
        f.write(frame.iloc[i:i + 50].reset_index(drop=True))
    f.close()
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert sum(sizes) == 603 and len(sizes) >= 3, sizes
    assert all(n % 50 == 0 for n in sizes[:-1]), sizes  # closed between chunks, never inside one
    assert max(sizes) < 603 // 2, sizes
    _same_bits(f.read(), frame)
    batches = list(f.groups(["t_s", "cc_state"]))
    assert sum(map(len, batches)) == 603 and all(len(b) <= outputs.READ_ROWS for b in batches)
    for b in batches:  # each batch with the run's categories, whichever its group met
        assert list(b.columns) == ["t_s", "cc_state"]
        assert list(b["cc_state"].cat.categories) == list(frame["cc_state"].cat.categories)


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
            time.sleep(0.05)
        assert part is not None, proc.stderr.read().decode() if proc.poll() is not None else "no part file"
        time.sleep(1.0)  # a few chunks into the open row group
        assert proc.poll() is None, proc.stderr.read().decode()
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
    reads timeline.parquet and the intervals a batch of rows at a time, never whole (issue 26: a
    whole-column read is what made a long run's memory grow), and gives the bytes the in-memory
    run's folder holds."""
    import pyarrow.parquet as pq_mod

    from mmpath import outputs

    def whole(*a, **k):
        raise AssertionError("a whole-file read after a streamed run")

    monkeypatch.setattr(pd, "read_parquet", whole)
    monkeypatch.setattr(pq_mod, "read_table", whole)
    monkeypatch.setattr(outputs, "READ_ROWS", 100)  # batches of 100 rows: several per pass
    whole0, groups0 = outputs.WHOLE_READS[0], outputs.GROUPS_READ[0]
    res = simulate_to(load_scenario("blockage", SHORT), tmp_path / "out", report=False, chunk_rows=100)
    assert outputs.WHOLE_READS[0] == whole0, "TimelineFile.read() (the whole file) was called"
    # 603 timeline rows in batches of <= 100, 60 interval rows in one: several passes of each.
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


def test_a_timeline_file_gone_or_damaged_after_the_run_is_one_clear_error(tmp_path):
    """Result.timeline of a streamed run reads its file each time: deleted, or overwritten with
    something that is not Parquet, it raises OutputError naming the file, not a traceback from
    the reader."""
    from mmpath.errors import OutputError

    res = simulate_to(load_scenario("blockage", {"duration_s": 0.5}), tmp_path / "out", report=False)
    res.timeline_file.write_bytes(b"not parquet at all\n" * 10)
    with pytest.raises(OutputError, match=r"timeline\.parquet"):
        res.timeline
    res.timeline_file.unlink()
    with pytest.raises(OutputError, match="is gone"):
        res.timeline


def test_a_batch_whose_category_column_is_all_missing_reads_back(tmp_path, in_memory):
    """A batch of connection-level interval rows has no path: its Parquet dictionary is empty.
    Read back, the column is all missing with the run's categories (it panicked the reader once:
    arrow's normalized_keys refuses an empty dictionary)."""
    from mmpath import outputs

    iv = in_memory.intervals
    conn = iv[iv["subflow"] < 0].reset_index(drop=True)
    assert len(conn) and conn["path"].isna().all()
    f = outputs.TimelineFile(tmp_path / "iv.parquet")
    f.write(conn)
    f.close()
    back = f.read()
    _same_bits(back, conn)
    assert list(back["path"].cat.categories) == list(iv["path"].cat.categories)
