"""Trace replay from the front end: relative trace paths, the recorded channel, bad traces."""

import subprocess
import sys
from pathlib import Path

import mmpath
from mmpath.scenario import load_scenario


def _scenario(tmp_path: Path, trace_line: str) -> Path:
    sub = tmp_path / "exp"
    sub.mkdir()
    (sub / "cap.csv").write_text("t_s,rate_mbps,link_up\n0,200,1\n0.5,,0\n0.7,,1\n1,,\n")
    f = sub / "traced.toml"
    f.write_text(
        'duration_s = 1.0\n[[path]]\nname = "air"\nrate_mbps = 1000.0\n'
        f"{trace_line}\n[[flow]]\ncc = \"cubic\"\n"
    )
    return f


def test_relative_trace_is_found_next_to_the_scenario_and_recorded(tmp_path, monkeypatch):
    f = _scenario(tmp_path, 'trace = { file = "cap.csv", loop = false }')
    monkeypatch.chdir(tmp_path)  # not the scenario's folder: the path must resolve against it
    res = mmpath.run(f)
    assert res.ok
    down = res.events[res.events["kind"] == "down"]
    assert list(down["t_s"]) == [0.5]
    # The run's channel, as trace CSV, is in the result and in the output folder.
    assert "0,200,,1" in res.channel["air"]
    out = res.save(tmp_path / "out", report=False)
    assert (out / "channel-air.csv").read_text() == res.channel["air"]


def test_bad_trace_is_one_line_exit_2(tmp_path):
    f = _scenario(tmp_path, 'trace = { file = "missing.csv" }')
    p = subprocess.run(
        [sys.executable, "-m", "mmpath", "run", str(f), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "path.0.trace.file" in lines[0] and "missing.csv" in lines[0]
    assert "Traceback" not in p.stderr


def test_a_variants_trace_file_is_found_next_to_the_scenario(tmp_path, monkeypatch):
    # A [[variant]]'s `set` is written in the scenario file: its trace file is taken from the
    # scenario's folder, as the path's own `trace.file` is. It used to be looked up in the
    # current directory ("cannot read the file: No such file or directory").
    f = _scenario(tmp_path, 'trace = { file = "cap.csv", loop = false }')
    (f.parent / "slow.csv").write_text("t_s,rate_mbps\n0,50\n1,\n")
    (f.parent / "home.csv").write_text("t_s,rate_mbps\n0,80\n1,\n")
    f.write_text(
        f.read_text()
        + '[[variant]]\nname = "file"\nset = { "path.0.trace.file" = "slow.csv" }\n'
        + '[[variant]]\nname = "table"\nset = { "path.0.trace" = { file = "slow.csv", loop = false } }\n'
        + '[[variant]]\nname = "home"\nset = { "path.0.trace.file" = "~/home.csv" }\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(f.parent))
    sc = load_scenario(f)
    for name, pairs in sc.variants:
        file = dict(pairs).get("path.0.trace.file") or dict(pairs)["path.0.trace"]["file"]
        assert Path(file).is_absolute() and Path(file).exists(), (name, file)
    p = subprocess.run([sys.executable, "-m", "mmpath", "run", str(f), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # A --set on the command line is a path from the current directory, as any argument.
    p = subprocess.run([sys.executable, "-m", "mmpath", "run", str(f), "--variant", "file",
                        "--set", "path.0.trace.file=slow.csv", "--out", str(tmp_path / "o2")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and str(tmp_path / "slow.csv") not in p.stderr and "slow.csv" in p.stderr, p.stderr


def test_an_rssi_only_trace_replays_on_a_radio_path_and_round_trips(tmp_path):
    # A radio path replays RSSI alone (rate adaptation follows it, docs/scenario.md), but a CSV
    # trace with only `t_s,rssi_dbm` was refused: "the header needs at least one of the columns
    # rate_mbps, mcs, link_up".
    (tmp_path / "rssi.csv").write_text("t_s,rssi_dbm\n0,-50\n0.3,-72\n0.6,\n")
    f = tmp_path / "rssi.toml"
    f.write_text('duration_s = 0.6\n[[path]]\nname = "ad"\ntechnology = "11ad"\ndevice = "panasonic-wigig"\n'
                 'trace = { file = "rssi.csv", loop = false }\n[[flow]]\nname = "f"\n')
    res = mmpath.run(f)
    assert res.ok
    tl = res.timeline[res.timeline["path"] == "ad"]
    assert set(tl["rssi_dbm"].dropna()) >= {-50.0, -72.0}
    early, late = tl[tl["t_s"] < 0.25]["mcs"].dropna(), tl[tl["t_s"] > 0.35]["mcs"].dropna()
    assert early.min() > late.max(), "a weaker signal lowers the MCS ideal rate adaptation picks"
    # The analyzer reads it with the core's parser too.
    a = mmpath.analyze([f"trace:{tmp_path / 'rssi.csv'}"])
    assert list(a.timeline["rssi_dbm"].dropna()) == [-50.0, -72.0, -72.0]
    # The run's record (every column) reads back as the same RSSI steps.
    rec = tmp_path / "channel-ad.csv"
    rec.write_text(res.channel["ad"])
    back = mmpath.analyze([f"trace:{rec}"]).timeline
    assert {-50.0, -72.0} <= set(back["rssi_dbm"].dropna())
