"""`mmpath sweep`: grid x seeds expansion, the table's contents against direct runs, the same table
from local processes and from a Dask cluster, variants, failed runs, and bad sweep files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import mmpath
import mmpath.sweep
from mmpath.cli import main
from mmpath.sweep import execute

GRID = {
    "scenario": "11ad-bulk",
    "runs": 2,
    "set": {"duration_s": 0.5},
    "grid": {"flow.0.cc": ["cubic", "reno", "bbr"], "path.0.mtu_bytes": [1500, 7912]},
}


def _write(tmp_path: Path, text: str, name: str = "study.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _no_wall(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["wall_s"])


def test_grid_times_seeds_and_the_rows_are_the_runs_themselves():
    res = mmpath.sweep.run(GRID, workers=1)
    t = res.table
    assert res.ok and not res.errors
    # 3 x 2 points, seeds 1..2, one flow: 12 rows in point-major order.
    assert len(t) == 12
    assert t["point"].tolist() == [p for p in range(6) for _ in (1, 2)]
    assert t["seed"].tolist() == [1, 2] * 6
    assert t["flow.0.cc"].tolist() == [cc for cc in ("cubic", "reno", "bbr") for _ in range(4)]
    assert t["path.0.mtu_bytes"].tolist() == [m for _ in range(3) for m in (1500, 1500, 7912, 7912)]
    # The congestion control that actually ran is the grid's (the core reports it back).
    assert (t["cc"] == t["flow.0.cc"]).all()
    # Each row equals the same run done directly (an independent call path: mmpath.run).
    for _, row in t.iloc[[0, 7, 11]].iterrows():
        direct = mmpath.run("11ad-bulk", seed=int(row["seed"]), overrides={
            "duration_s": 0.5, "flow.0.cc": row["flow.0.cc"], "path.0.mtu_bytes": int(row["path.0.mtu_bytes"])})
        f = direct.summary["flows"][0]
        assert row["goodput_mbps"] == f["goodput_mbps"]
        assert row["retransmits"] == f["retransmits"]
        assert row["rtt_mean_ms"] == f["rtt_ms"]["mean"]
    # A bigger MTU carries more per packet: a real dependence the table must show.
    by_mtu = t.groupby("path.0.mtu_bytes")["goodput_mbps"].mean()
    assert by_mtu[7912] > by_mtu[1500]


def test_same_table_whatever_the_number_of_workers():
    one = mmpath.sweep.run(GRID, workers=1).table
    two = mmpath.sweep.run(GRID, workers=2).table
    pd.testing.assert_frame_equal(_no_wall(one), _no_wall(two))


def test_same_table_on_a_dask_cluster():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is installed by `make setup`")
    local = mmpath.sweep.run(GRID, workers=1).table
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        on_dask = mmpath.sweep.run(GRID, dask=cluster.scheduler_address)
    assert on_dask.ok
    pd.testing.assert_frame_equal(_no_wall(local), _no_wall(on_dask.table))


def test_variants_are_a_grid_dimension():
    res = mmpath.sweep.run({"scenario": "default", "seeds": [3], "set": {"duration_s": 0.5},
                            "grid": {"variant": ["tcp-11ad", "fullmesh", "backup"]}}, workers=1)
    t = res.table
    assert t["variant"].tolist() == ["tcp-11ad", "fullmesh", "backup"]
    assert t["kind"].tolist() == ["tcp", "mptcp", "mptcp"]
    assert t["mode"].tolist()[1:] == ["fullmesh", "backup"]
    # MPTCP rows carry per-subflow goodput; the single-path row has none.
    assert pd.isna(t.loc[0, "subflow_11ac_mbps"]) and t.loc[1, "subflow_11ac_mbps"] > 0


def test_cli_writes_table_csv_and_sweep_json(tmp_path, capsys):
    f = _write(tmp_path, """name = "cc"
scenario = "11ad-bulk"
seeds = [4, 5]
[set]
duration_s = 0.5
[grid]
"flow.0.cc" = ["cubic", "vegas"]
""")
    out = tmp_path / "out"
    assert main(["sweep", str(f), "--workers", "1", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "vegas" in printed and "4 runs" in printed
    pq = pd.read_parquet(out / "results.parquet")
    csv = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert len(pq) == len(csv) == 4
    assert pq["seed"].tolist() == [4, 5, 4, 5]
    assert csv["goodput_mbps"].round(6).tolist() == pq["goodput_mbps"].round(6).tolist()
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["grid"] == {"flow.0.cc": ["cubic", "vegas"]}
    assert doc["seeds"] == [4, 5] and doc["runs"] == 4 and doc["failed_runs"] == 0


def test_a_failed_run_is_reported_and_the_others_kept(tmp_path, monkeypatch, capsys):
    real = execute.run_one

    def flaky(run, engine="simulate"):
        if run.index == 1:
            raise RuntimeError("worker lost")
        return real(run, engine)

    monkeypatch.setattr(execute, "run_one", flaky)
    f = _write(tmp_path, 'scenario = "11ad-bulk"\nruns = 2\n[set]\nduration_s = 0.3\n[grid]\n"flow.0.cc" = ["reno"]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(f), "--workers", "1", "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "run failed: point 0 (flow.0.cc = 'reno'), seed 2: RuntimeError: worker lost" in err
    t = pd.read_parquet(out / "results.parquet")
    assert t["error"].tolist() == ["", "RuntimeError: worker lost"]
    assert t.loc[0, "goodput_mbps"] > 0 and pd.isna(t.loc[1, "goodput_mbps"])


BAD = [
    ('scenario = "11ad-bulk"\n', "grid: required"),
    ('scenario = "11ad-bulk"\nfoo = 1\n[grid]\n"flow.0.cc" = ["reno"]\n', "foo: unknown field (allowed: name,"),
    ('[grid]\n"flow.0.cc" = ["reno"]\n', "scenario: required"),
    ('scenario = "nope"\n[grid]\n"flow.0.cc" = ["reno"]\n', "scenario file not found: nope"),
    ('scenario = "11ad-bulk"\n[grid]\n"flow.0.cc" = []\n', 'grid."flow.0.cc": must be a non-empty list'),
    ('scenario = "11ad-bulk"\n[grid]\n"flow.0.cc" = "reno"\n', 'grid."flow.0.cc": must be a non-empty list'),
    ('scenario = "11ad-bulk"\n[grid]\n"flow.0.cc" = ["reno", "reno"]\n', "lists the value 'reno' twice"),
    ('scenario = "11ad-bulk"\nruns = 2\nseeds = [1]\n[grid]\n"flow.0.cc" = ["reno"]\n', "not both"),
    ('scenario = "11ad-bulk"\nseeds = [1, -2]\n[grid]\n"flow.0.cc" = ["reno"]\n', "seeds.1: must be an integer >= 0"),
    ('scenario = "11ad-bulk"\nseeds = [1, 1]\n[grid]\n"flow.0.cc" = ["reno"]\n', "lists a seed twice"),
    ('scenario = "11ad-bulk"\nruns = 0\n[grid]\n"flow.0.cc" = ["reno"]\n', "runs: must be an integer >= 1"),
    ('scenario = "11ad-bulk"\n[set]\n"flow.0.cc" = "reno"\n[grid]\n"flow.0.cc" = ["bbr"]\n',
     "also set in [set]"),
    ('scenario = "11ad-bulk"\n[grid]\nseed = [1, 2]\n', "seeds are given by `seeds` or `runs`"),
    ('scenario = "11ad-bulk"\n[grid]\n"flow.0.cc" = ["reno", "westwood"]\n',
     "grid point 1 (flow.0.cc = 'westwood'): 11ad-bulk.toml (bundled): flow.0.cc: unknown value `westwood`"),
    # The field is blamed on the sweep file's key, not on a --set the user never typed.
    ('scenario = "11ad-bulk"\n[set]\n"flow.0.cc" = "westwood"\n[grid]\n"path.0.mcs" = [6]\n',
     "(from the sweep's flow.0.cc)"),
    ('scenario = "11ad-bulk"\n[grid]\n"path.0.nope" = [1]\n', "grid point 0 (path.0.nope = 1)"),
    ('scenario = "default"\n[grid]\n"path.0.mcs" = [6]\n', "has [[variant]] entries"),
    ('scenario = "default"\n[grid]\nvariant = ["nope"]\n', "unknown variant 'nope' (allowed: tcp-11ad,"),
    ('scenario = "11ad-bulk"\n[grid]\nvariant = ["a"]\n', "has no [[variant]] entries"),
    ('scenario = "11ad-bulk"\nruns = 60000\n[grid]\n"flow.0.cc" = ["reno", "bbr"]\n', "more than 100000"),
    ('scenario = "11ad-bulk"\n[grid\n', "invalid TOML"),
    ('scenario = "11ad-bulk"\nengine = "ns3"\n[grid]\n"flow.0.cc" = ["reno"]\n',
     "engine: 'ns3' is not an engine (allowed: simulate, emulate)"),
    ('scenario = "11ad-bulk"\nengine = "emulate"\n[grid]\n"flow.0.tcp.hystart" = [true, false]\n',
     "grid point 1 (flow.0.tcp.hystart = False): flow.0.tcp.hystart: false cannot be emulated"),
]


@pytest.mark.parametrize("text, message", BAD, ids=[m for _, m in BAD])
def test_bad_sweep_files_get_one_line_and_nothing_runs(tmp_path, capsys, monkeypatch, text, message):
    def never(*args):  # validation happens before any run
        raise AssertionError("a run started")

    monkeypatch.setattr(execute, "run_one", never)
    f = _write(tmp_path, text)
    out = tmp_path / "out"
    assert main(["sweep", str(f), "--workers", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"mmpath: error: {f}: "), err
    assert message in err[0], err[0]
    assert not out.exists()


def test_bad_flags(tmp_path, capsys):
    f = _write(tmp_path, 'scenario = "11ad-bulk"\n[grid]\n"flow.0.cc" = ["reno"]\n')
    with pytest.raises(SystemExit) as e:
        main(["sweep", str(f), "--workers", "0"])
    assert e.value.code == 2
    assert main(["sweep", str(f), "--workers", "2", "--dask", "tcp://127.0.0.1:1"]) == 2
    assert "exclude each other" in capsys.readouterr().err
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2
    assert "no such sweep file" in capsys.readouterr().err


def test_reproduce_runs_the_same_on_a_dask_cluster():
    """`mmpath reproduce --dask`: the same runs table as local processes (executor.py serves both)."""
    distributed = pytest.importorskip("distributed", reason="dask.distributed is installed by `make setup`")
    from mmpath.reproduce import reproduce

    local = reproduce(["000-outage"], fast=True, workers=1, plots=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        on_dask = reproduce(["000-outage"], fast=True, dask=cluster.scheduler_address, plots=False)
    a, b = local.data["000-outage"].runs, on_dask.data["000-outage"].runs
    assert len(a) > 0 and not local.data["000-outage"].failures
    pd.testing.assert_frame_equal(_no_wall(a), _no_wall(b))
    assert on_dask.results["000-outage"].verdict.status == local.results["000-outage"].verdict.status


def test_unreachable_dask_scheduler_is_one_line(tmp_path, capsys, monkeypatch):
    from mmpath import executor

    monkeypatch.setattr(executor, "DASK_CONNECT_TIMEOUT_S", 1)
    f = _write(tmp_path, 'scenario = "11ad-bulk"\n[grid]\n"flow.0.cc" = ["reno"]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(f), "--dask", "tcp://127.0.0.1:1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("mmpath: error: --dask tcp://127.0.0.1:1: cannot reach a Dask scheduler"), err
    assert not out.exists()


def test_an_emulated_sweep_refuses_dask_before_running(tmp_path, capsys, monkeypatch):
    def never(*args):
        raise AssertionError("a run started")

    monkeypatch.setattr(execute, "run_one", never)
    f = _write(tmp_path, 'scenario = "11ad-bulk"\nengine = "emulate"\n[grid]\n"flow.0.cc" = ["reno"]\n')
    assert main(["sweep", str(f), "--dask", "tcp://127.0.0.1:1", "--out", str(tmp_path / "o")]) == 2
    assert "runs on this machine's kernel, one run at a time; --dask does not apply" in capsys.readouterr().err


def test_emulated_rows_are_the_emulations_own_numbers(monkeypatch):
    """engine = "emulate": each point goes to mmpath.emu.run, one at a time, and its row holds the
    emulation's iperf3 goodput and interface counts (the emulation itself is faked here; the
    real one is tests/test_emu.py's)."""
    import mmpath.emu
    from types import SimpleNamespace

    calls = []

    def fake_emulate(config, seed=None, capture=True, **kw):
        calls.append((config["flow"][0]["cc"], seed, capture))
        meta = {"flows": [{"name": "bulk", "kind": "tcp", "cc": config["flow"][0]["cc"], "mode": None,
                           "goodput_mbps": 100.0 + len(calls)}],
                "wall_s": 2.0, "kernel": "test",
                "delay_line": {"queues": [{"late_max_us": 300.0, "late_mean_us": 20.0, "packets": 10},
                                          {"late_max_us": 100.0, "late_mean_us": 40.0, "packets": 30}]}}
        return SimpleNamespace(meta=meta, path_mbps={"11ad": 99.0})

    monkeypatch.setattr(mmpath.emu, "run", fake_emulate)
    res = mmpath.sweep.run({"scenario": "11ad-bulk", "engine": "emulate", "runs": 2,
                            "grid": {"flow.0.cc": ["reno", "cubic"]}}, workers=2)
    assert [c[0] for c in calls] == ["reno", "reno", "cubic", "cubic"] and not any(c[2] for c in calls)
    t = res.table
    assert t["goodput_mbps"].tolist() == [101.0, 102.0, 103.0, 104.0]
    assert t["path_11ad_mbps"].eq(99.0).all() and t["kernel"].eq("test").all()
    assert t["delay_late_max_ms"].eq(0.3).all()
    assert abs(t["delay_late_mean_ms"].iloc[0] - (20 * 10 + 40 * 30) / 40 / 1e3) < 1e-12


def test_trace_paths_in_a_sweep_file_are_taken_from_its_folder(tmp_path, monkeypatch):
    """A trace file a sweep names ([grid], [set], or an inline scenario) is found from the sweep
    file's folder, as a scenario's own trace is from the scenario file's (it was taken from the
    current directory, so the same sweep worked or failed depending on where it was started)."""
    study = tmp_path / "study"
    (study / "traces").mkdir(parents=True)
    for name, mbps in (("slow.csv", 100), ("fast.csv", 400)):
        (study / "traces" / name).write_text(f"t_s,rate_mbps\n0,{mbps}\n")
    _write(study, """scenario = "11ad-bulk"
seeds = [1]
[set]
duration_s = 0.3
[grid]
"path.0.trace.file" = ["traces/slow.csv", "traces/fast.csv"]
""", "grid.toml")
    _write(study, """scenario = "11ad-bulk"
seeds = [1]
[set]
duration_s = 0.3
"path.0.trace" = { file = "traces/slow.csv" }
[grid]
"flow.0.cc" = ["cubic"]
""", "set.toml")
    _write(study, """seeds = [1]
[scenario]
duration_s = 0.3
path = [{ name = "p", rate_mbps = 1000, trace = { file = "traces/fast.csv" } }]
flow = [{ name = "f" }]
[grid]
"flow.0.cc" = ["cubic"]
""", "inline.toml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    spec = mmpath.sweep.load_sweep(study / "grid.toml")
    files = [r.scenario.config["path"][0]["trace"]["file"] for r in spec.runs]
    assert files == [str(study / "traces" / "slow.csv"), str(study / "traces" / "fast.csv")]
    # Given by a relative path, the same absolute files (a Dask worker may start elsewhere).
    rel = mmpath.sweep.load_sweep("../study/grid.toml")
    assert [r.scenario.config["path"][0]["trace"]["file"] for r in rel.runs] == files
    # The table's grid column keeps the values as written.
    assert [dict(p)["path.0.trace.file"] for p in spec.points] == ["traces/slow.csv", "traces/fast.csv"]
    res = mmpath.sweep.run(study / "grid.toml", workers=1)
    g = res.table["goodput_mbps"].tolist()
    assert res.ok and g[0] < 100 < g[1] < 400, g
    one = mmpath.sweep.load_sweep(study / "set.toml").runs[0].scenario.config
    assert one["path"][0]["trace"]["file"] == str(study / "traces" / "slow.csv")
    inline = mmpath.sweep.load_sweep(study / "inline.toml").runs[0].scenario.config
    assert inline["path"][0]["trace"]["file"] == str(study / "traces" / "fast.csv")


@pytest.mark.parametrize("grid, message", [
    ('"path.0.trace.file" = ["traces/ok.csv", "traces/missing.csv"]', "missing.csv"),
    ('"path.0.trace.file" = ["traces/ok.csv", "traces/bad.csv"]', "bad.csv"),
])
def test_a_bad_trace_file_stops_the_sweep_before_anything_runs(tmp_path, capsys, monkeypatch, grid, message):
    """Validation checks a trace table's fields, not its file, which the core reads when a run's
    simulation is built: a missing or malformed file passed the up-front check, every run with
    it then failed and the table was written with exit status 1. It is now one line and exit
    status 2, with no output, like any other bad value."""
    from mmpath.sweep import execute

    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "ok.csv").write_text("t_s,rate_mbps\n0,100\n")
    (tmp_path / "traces" / "bad.csv").write_text("t_s,rate_mbps\n0,fast\n")

    def never(*a, **k):
        raise AssertionError("nothing may run")

    monkeypatch.setattr(execute, "run_one", never)
    f = _write(tmp_path, f'scenario = "11ad-bulk"\nseeds = [1]\n[set]\nduration_s = 0.3\n[grid]\n{grid}\n')
    out = tmp_path / "out"
    assert main(["sweep", str(f), "--workers", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"mmpath: error: {f}: grid point 1 "), err
    assert message in err[0] and "path.0.trace" in err[0], err[0]
    assert not out.exists()
