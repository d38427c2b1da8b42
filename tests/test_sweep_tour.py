"""What a researcher's own sweep files met on a tour of `mmpath sweep`: grid values of mixed kinds
(a number and "auto", an integer and a decimal)."""

from __future__ import annotations

import pandas as pd
import pytest

import mmpath.sweep
from mmpath.cli import main


def _sweep(grid: dict, seeds=(1,)) -> dict:
    return {"scenario": "11ad-bulk", "seeds": list(seeds), "set": {"duration_s": 0.2}, "grid": grid}


@pytest.mark.parametrize("grid, column", [
    # seed 003's buffer study: Linux autotuning against fixed SO_RCVBUF sizes in one column.
    ({"flow.0.tcp.rcvbuf_bytes": ["auto", 65536]}, ["auto", "65536"]),
    ({"flow.0.tcp.rcvbuf_bytes": ["auto", 65536], "flow.0.cc": ["cubic", "reno"]},
     ["auto", "auto", "65536", "65536"]),
])
def test_a_grid_key_with_values_of_different_kinds_is_written(tmp_path, grid, column):
    # A Parquet column has one type: such a key's column holds each value as its TOML text
    # (before: pyarrow's ArrowTypeError after every run had finished, and no table).
    out = tmp_path / "out"
    res = mmpath.sweep.run(_sweep(grid), workers=1, out=out)
    assert res.ok
    key = next(iter(grid))
    assert res.table[key].tolist() == column
    pq = pd.read_parquet(out / "results.parquet")
    assert pq[key].tolist() == column
    pd.testing.assert_frame_equal(pq, res.table, check_dtype=False)
    # The plot found every point (a one- or two-key grid draws one).
    assert (out / "sweep.png").is_file()
    # A smaller fixed receive window is a real difference the table keeps apart.
    g = res.table.groupby(key)["goodput_mbps"].mean()
    assert g["65536"] < g["auto"]


def test_integer_and_decimal_values_of_one_key_are_plotted(tmp_path):
    # [1, 2.5] is a float64 column (1.0): the plot placed its x values by their text ("1" vs
    # "1.0") and failed with KeyError after every run, losing the table.
    out = tmp_path / "out"
    res = mmpath.sweep.run(_sweep({"path.0.delay_ms": [1, 2.5]}), workers=1, out=out)
    assert res.ok and res.table["path.0.delay_ms"].tolist() == [1.0, 2.5]
    assert (out / "sweep.png").is_file() and (out / "results.parquet").is_file()


def test_rerunning_into_a_folder_replaces_the_earlier_sweeps_files(tmp_path, capsys):
    # The same --out twice: the second sweep's table, sweep.json and plot replace the first's;
    # a grid of three keys draws no plot, so the first sweep's sweep.png must not stay beside
    # the second sweep's table as if it were its picture.
    out = tmp_path / "out"
    mmpath.sweep.run(_sweep({"flow.0.cc": ["cubic", "reno"]}), workers=1, out=out)
    assert (out / "sweep.png").is_file()
    (out / "notes.txt").write_text("mine")
    three = _sweep({"flow.0.cc": ["cubic"], "path.0.mtu_bytes": [1500], "path.0.delay_ms": [1]})
    res = mmpath.sweep.run(three, workers=1, out=out)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "results.csv", "results.parquet", "sweep.json"]
    assert len(pd.read_parquet(out / "results.parquet")) == len(res.table) == 1
    assert (out / "notes.txt").read_text() == "mine"  # not the sweep's: left alone


def test_the_default_folder_is_the_sweeps_name_made_one_safe_folder(tmp_path, monkeypatch, capsys):
    # As `mmpath run` does with a scenario's name (outputs.safe_dir_name): a sweep named
    # "../escape" wrote to mmpath-out/escape, outside mmpath-out/sweep.
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "study.toml"
    f.write_text('name = "../escape"\nscenario = "11ad-bulk"\n[set]\nduration_s = 0.2\n'
                 '[grid]\n"flow.0.cc" = ["reno"]\n', encoding="utf-8")
    assert main(["sweep", str(f), "--workers", "1", "--no-progress"]) == 0
    assert (tmp_path / "mmpath-out" / "sweep" / "escape" / "results.parquet").is_file()
    assert not (tmp_path / "mmpath-out" / "escape").exists()
    assert "mmpath-out/sweep/escape/results.parquet" in capsys.readouterr().out


def test_ctrl_c_stops_the_runs_in_progress_not_only_the_queued_ones():
    # The pool's workers ignore SIGINT (the parent handles it); on Ctrl-C the parent cancelled
    # the queued runs but then waited, after printing "interrupted", for the runs in progress to
    # finish: with two 120 s scenarios, 30 s of silence before the prompt came back.
    import multiprocessing
    import time

    from mmpath import executor

    gen = executor.map_unordered(time.sleep, [(0,), (30,), (30,)], workers=2)
    assert next(gen)[0] == 0  # the quick one; both workers now sleep
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        gen.throw(KeyboardInterrupt)
    while any(p.is_alive() for p in multiprocessing.active_children()) and time.monotonic() - t0 < 5:
        time.sleep(0.05)
    assert not any(p.is_alive() for p in multiprocessing.active_children())
    assert time.monotonic() - t0 < 5


TRACE = "t_s,rate_mbps\n0,300\n1,600\n2,\n"


@pytest.mark.parametrize("set_, grid", [
    ({"path.0.trace": {"file": "trace.csv"}}, {"flow.0.cc": ["cubic"]}),
    ({"path.0.trace": {"file": "trace.csv"}}, {"path.0.trace.file": ["trace.csv", "sub/other.csv"]}),
    ({}, {"path.0.trace": [{"file": "trace.csv"}, {"file": "sub/other.csv", "loop": False}]}),
])
def test_a_trace_file_in_the_sweep_file_is_found_from_the_sweep_files_folder(tmp_path, monkeypatch, set_, grid):
    # As `scenario = "x.toml"` is, and as a scenario file's own trace files (and its variants')
    # are: a relative path was taken from wherever the sweep ran (a Dask worker: its own
    # folder), so the same sweep file failed every run when started from another folder.
    study = tmp_path / "study"
    (study / "sub").mkdir(parents=True)
    (study / "trace.csv").write_text(TRACE)
    (study / "sub" / "other.csv").write_text(TRACE.replace("600", "900"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    lines = ['scenario = "11ad-bulk"', "[set]", "duration_s = 1.5"]
    lines += [f'"{k}" = {_toml(v)}' for k, v in set_.items()]
    lines += ["[grid]"] + [f'"{k}" = [{", ".join(_toml(x) for x in v)}]' for k, v in grid.items()]
    f = study / "sweep.toml"
    f.write_text("\n".join(lines) + "\n")
    res = mmpath.sweep.run(str(f), workers=1)
    assert res.ok, res.errors
    assert (res.table["goodput_mbps"] > 200).all()
    if len(res.table) == 2:  # the two traces are two different capacities
        assert res.table["goodput_mbps"].iloc[1] > res.table["goodput_mbps"].iloc[0] + 50


def test_a_sweep_given_as_a_dict_is_not_changed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trace.csv").write_text(TRACE)
    doc = {"scenario": "11ad-bulk", "set": {"duration_s": 0.5, "path.0.trace": {"file": "trace.csv"}},
           "grid": {"path.0.trace.file": ["trace.csv"]}}
    spec = mmpath.sweep.load_sweep(doc)
    # The grid column keeps the value as written; the run gets the absolute path.
    assert spec.points == [(("path.0.trace.file", "trace.csv"),)]
    assert spec.runs[0].scenario.config["path"][0]["trace"]["file"] == str(tmp_path / "trace.csv")
    assert doc["set"]["path.0.trace"] == {"file": "trace.csv"} and doc["grid"]["path.0.trace.file"] == ["trace.csv"]


def _toml(v) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + " }"
    if isinstance(v, bool):
        return "true" if v else "false"
    return f'"{v}"' if isinstance(v, str) else repr(v)
