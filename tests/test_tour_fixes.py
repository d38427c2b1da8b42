"""Defects found touring mmpath as a new user (sweep, Python API, reproduce), each pinned by a test
that failed before its fix."""

from __future__ import annotations

import pickle
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import mmpath
import mmpath.sweep
from mmpath.cli import main
from mmpath.errors import OutputError
from mmpath.sweep import SweepError, execute

SMALL = {"scenario": "11ad-bulk", "seeds": [1], "set": {"duration_s": 0.2},
         "grid": {"flow.0.cc": ["cubic", "reno"]}}
SWEEP_TOML = """scenario = "11ad-bulk"
seeds = [1]
[set]
duration_s = 0.2
[grid]
"flow.0.cc" = ["cubic", "reno"]
"""


def _never(*_a, **_k):
    raise AssertionError("no run may start")


# --------------------------------------------------------------------------- sweep output folder


def test_sweep_out_that_cannot_be_written_stops_before_any_run(tmp_path, monkeypatch, capsys):
    # Before: every run was done, then a traceback (FileExistsError / NotADirectoryError) at the end.
    monkeypatch.setattr(execute, "run_one", _never)
    (tmp_path / "study.toml").write_text(SWEEP_TOML, encoding="utf-8")
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    for out in (afile, afile / "sub"):
        rc = main(["sweep", str(tmp_path / "study.toml"), "--out", str(out), "--no-progress"])
        err = capsys.readouterr().err
        assert rc == 2
        assert "Traceback" not in err
        assert len(err.strip().splitlines()) == 1 and "afile" in err and "not a folder" in err
    with pytest.raises(OutputError):
        mmpath.sweep.run(SMALL, workers=1, out=afile)


def test_sweep_files_are_written_all_or_nothing(tmp_path, monkeypatch):
    # Before: results.parquet was replaced, then an interrupted CSV write left the old CSV beside
    # it (and the old sweep.json): a folder mixing two sweeps.
    out = tmp_path / "out"
    out.mkdir()
    for name in ("results.parquet", "results.csv", "sweep.json"):
        (out / name).write_text("old", encoding="utf-8")

    def interrupted(self, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", interrupted)
    with pytest.raises(KeyboardInterrupt):
        mmpath.sweep.run(SMALL, workers=1, out=out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left behind
    for name in ("results.parquet", "results.csv", "sweep.json"):
        assert (out / name).read_text(encoding="utf-8") == "old"
    monkeypatch.undo()
    mmpath.sweep.run(SMALL, workers=1, out=out)
    assert len(pd.read_parquet(out / "results.parquet")) == 2
    assert len(pd.read_csv(out / "results.csv")) == 2


# --------------------------------------------------------------------------- sweep table dtypes


def test_metric_columns_stay_numeric_when_no_run_has_a_value(tmp_path):
    # 11ad-bulk meters no energy: before, energy_j / nj_per_bit / energy_total_j were object
    # columns of None (Parquet type null) instead of float NaN.
    res = mmpath.sweep.run(SMALL, workers=1, out=tmp_path)
    t = res.table
    for col in ("energy_j", "nj_per_bit", "energy_total_j", "goodput_mbps", "rtt_mean_ms"):
        assert t[col].dtype == "float64", col
    assert t["energy_j"].isna().all()
    schema = pq.read_schema(tmp_path / "results.parquet")
    assert str(schema.field("energy_j").type) == "double"
    assert str(schema.field("bytes_delivered").type) == "int64"  # integers stay integers


# --------------------------------------------------------------------------- sweep file keys


def test_unquoted_dotted_grid_key_says_to_quote_it(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('scenario = "11ad-bulk"\n[grid]\nflow.0.cc = ["reno"]\n', encoding="utf-8")
    with pytest.raises(SweepError, match=r'grid\."flow": .*dotted key must be in quotes .*"flow\.0\.cc"'):
        mmpath.sweep.load_sweep(p)


def test_unquoted_dotted_set_key_says_to_quote_it(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('scenario = "11ad-bulk"\n[set]\nflow.0.cc = "reno"\n[grid]\n"duration_s" = [0.2]\n',
                 encoding="utf-8")
    with pytest.raises(SweepError, match=r'dotted key must be in quotes .*"flow\.0\.cc"'):
        mmpath.sweep.load_sweep(p)


def test_sweep_header_counts_are_singular_for_one(tmp_path, capsys):
    p = tmp_path / "one.toml"
    p.write_text('scenario = "11ad-bulk"\nseeds = [1]\n[set]\nduration_s = 0.2\n[grid]\n"flow.0.cc" = ["reno"]\n',
                 encoding="utf-8")
    assert main(["sweep", str(p), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    cap = capsys.readouterr()
    assert "1 point x 1 seed = 1 run on" in cap.err
    assert "1 run in " in cap.out


# --------------------------------------------------------------------------- custom schedulers


class _Raises:
    def select(self, now_s, subflows, conn):
        if now_s > 0.05:
            return subflows[99]["id"]  # the line the error must name
        return subflows[0]["id"]


def test_scheduler_error_names_the_users_line_and_keeps_the_traceback():
    with pytest.raises(mmpath.SchedulerError) as ei:
        mmpath.run("blockage", scheduler=_Raises(), overrides={"duration_s": 0.2})
    line = _Raises.select.__code__.co_firstlineno + 2
    msg = str(ei.value)
    assert 'custom scheduler "_Raises": select(): IndexError' in msg
    assert f"test_tour_fixes.py:{line}, in select" in msg
    cause = ei.value.__cause__
    assert isinstance(cause, IndexError)
    assert any(fr.f_code is _Raises.select.__code__ for fr in _frames(cause.__traceback__))


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def test_scheduler_error_pickles():
    # A run in a worker process (process pool, Dask) sends its exception back pickled; before,
    # the class was `_core.SchedulerError`, which pickle cannot import.
    e = pickle.loads(pickle.dumps(mmpath.SchedulerError("custom scheduler \"x\": select(): boom")))
    assert isinstance(e, mmpath.SchedulerError) and "boom" in str(e)


# --------------------------------------------------------------------------- reproduce


def test_reproduce_mode_line_with_one_run():
    from types import SimpleNamespace

    from mmpath.reproduce.report import _mode_line

    one = _mode_line(SimpleNamespace(mode=SimpleNamespace(runs=1, duration_s=3.0, fast=True)))
    assert one.startswith("1 run per point (seed 1), 3 s scenarios")
    two = _mode_line(SimpleNamespace(mode=SimpleNamespace(runs=2, duration_s=3.0, fast=True)))
    assert two.startswith("2 runs per point (seeds 1-2)")


def test_out_check_leaves_no_folder_behind(tmp_path):
    from mmpath.outputs import check_out_folder

    check_out_folder(tmp_path / "a" / "b")
    assert (tmp_path / "a").is_dir() and not (tmp_path / "a" / "b").exists()
    assert list((tmp_path / "a").iterdir()) == []


def test_reproduce_out_that_cannot_be_written_stops_before_any_run(tmp_path, monkeypatch, capsys):
    # Before: every run was done, then a traceback from mkdir at the end.
    from mmpath.reproduce import runner

    monkeypatch.setattr(runner, "run", _never)
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    rc = main(["reproduce", "000-outage", "--fast", "--out", str(afile / "sub"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and "not a folder" in err
    with pytest.raises(OutputError):
        from mmpath.reproduce import reproduce

        reproduce(["000-outage"], fast=True, out=afile)


def test_reproduce_files_are_written_all_or_nothing(tmp_path, monkeypatch):
    from mmpath.reproduce import reproduce

    out = tmp_path / "rep"
    out.mkdir()
    (out / "claims.csv").write_text("old", encoding="utf-8")
    (out / "000-outage.parquet").write_text("old", encoding="utf-8")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    import mmpath.reproduce.report as report

    monkeypatch.setattr(report, "_markdown", interrupted)  # after the tables, before report.md
    with pytest.raises(KeyboardInterrupt):
        reproduce(["000-outage"], fast=True, runs=1, out=out, workers=1, plots=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    assert sorted(p.name for p in out.iterdir()) == ["000-outage.parquet", "claims.csv"]
    assert (out / "000-outage.parquet").read_text(encoding="utf-8") == "old"


def test_run_out_that_cannot_be_written_stops_before_the_run(tmp_path, monkeypatch, capsys):
    # Before: the whole simulation ran, then "cannot create output folder afile/sub: File exists".
    import mmpath.api

    monkeypatch.setattr(mmpath.api, "simulate", _never)
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(OutputError, match="afile is a file, not a folder"):
        mmpath.run("11ad-bulk", out=afile / "sub")
    rc = main(["run", "11ad-bulk", "--out", str(afile / "sub"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "afile is a file, not a folder" in err


def test_dask_cluster_without_workers_says_so_then_runs_when_one_joins(capsys):
    # Before: a scheduler with no workers left the sweep waiting with nothing on the screen.
    import threading
    import time

    distributed = pytest.importorskip("distributed", reason="dask.distributed is installed by `make setup`")
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        box: dict = {}
        th = threading.Thread(target=lambda: box.update(res=mmpath.sweep.run(SMALL, dask=cluster.scheduler_address)))
        th.start()
        err, deadline = "", time.monotonic() + 30
        while "no workers" not in err and time.monotonic() < deadline:
            time.sleep(0.1)
            err += capsys.readouterr().err
        assert "has no workers yet" in err and cluster.scheduler_address in err
        cluster.scale(1)
        th.join(60)
    assert box["res"].ok and len(box["res"].table) == 2


def test_columns_in_the_documented_order_whatever_the_first_row(monkeypatch):
    # Before: a TCP flow first put subflow_<path>_mbps after `error`; a failed first run put
    # `error` right after the grid keys.
    import tomllib

    doc = tomllib.loads((Path(mmpath.__file__).parent / "scenarios" / "blockage.toml").read_text(encoding="utf-8"))
    doc["duration_s"] = 0.3
    doc["flow"].insert(0, {"name": "tcp1", "kind": "tcp", "path": "11ac"})
    real = execute.run_one

    def first_fails(run, engine="simulate"):
        if run.index == 0:
            raise RuntimeError("boom")
        return real(run, engine)

    monkeypatch.setattr(execute, "run_one", first_fails)
    res = mmpath.sweep.run({"scenario": doc, "seeds": [1], "grid": {"flow.1.scheduler": ["minrtt", "musher"]}},
                           workers=1)
    cols = list(res.table.columns)
    assert cols[:4] == ["point", "seed", "flow.1.scheduler", "flow"]
    assert cols[-1] == "error"
    assert cols.index("rtt_p95_ms") < cols.index("subflow_11ad_mbps") < cols.index("sim_s")
    assert cols[cols.index("sim_s"):-1] == ["sim_s", "wall_s", "events", "invariants_ok", "energy_total_j"]
    assert res.errors and 0 in res.errors


def test_seed_out_of_range_is_one_clear_error():
    from mmpath.errors import ScenarioError

    with pytest.raises(ScenarioError, match=r"seed: must be an integer in 0\.\.18446744073709551615"):
        mmpath.run("11ad-bulk", seed=2**70)


def test_custom_scheduler_returning_a_bool_is_refused():
    class Yes:
        def select(self, now_s, subflows, conn):
            return True  # a bool is an int to Python, but not a subflow index

    with pytest.raises(mmpath.SchedulerError, match="not bool"):
        mmpath.run("blockage", overrides={"duration_s": 0.2}, scheduler=Yes())
