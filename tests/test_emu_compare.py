"""`mmpath emu run --compare`: the emulation beside the simulator's run of the same scenario
and seed, per flow (goodput; outage and recovery when a path of the flow goes down)."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from mmpath.cli import main
from mmpath.emu.compare import _outage_recovery, format_rows

_missing = [t for t in ("ip", "tc", "iperf3", "tcpdump") if shutil.which(t) is None]
needs_root = [
    pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (network namespaces, tc)"),
    pytest.mark.skipif(bool(_missing), reason=f"emulation needs {', '.join(_missing)} (make emu-tools)"),
]

SCENARIO = """\
name = "cmp"
duration_s = 6.0
[[path]]
name = "a"
rate_mbps = 200.0
delay_ms = 1.0
schedule = [{ t_s = 2.0, up = false }, { t_s = 3.0, up = true }]
[[flow]]
name = "bulk"
kind = "tcp"
cc = "cubic"
"""


def test_outage_and_recovery_follow_x_kernels_definitions():
    t = np.arange(60) * 0.1
    y = np.full(60, 100.0)
    y[20:28] = 0.0  # 0.8 s under 10 % of the 100 Mbit/s before
    y[28:33] = 50.0  # half rate until 3.3 s
    r = _outage_recovery(t, y, 2.0, 2.5, 6.0)
    assert r["outage_s"] == pytest.approx(0.8)
    # From 2.5 s: the first 1 s window with a mean of at least 90 starts at 3.1 s (two bins of 50).
    assert r["recovery_s"] == pytest.approx(0.6)
    lines = format_rows({"seed": 1, "simulated_wall_s": 0.1, "flows": [
        {"flow": "bulk", "kind": "tcp", "simulated_mbps": 100.0, "emulated_mbps": 80.0, "diff_pct": 25.0,
         "simulated_outage_s": 0.8, "emulated_outage_s": 1.0, "simulated_recovery_s": None,
         "emulated_recovery_s": 0.5}]})
    assert "+25.0" in lines[-1] and "0.80 / 1.00" in lines[-1] and "- / 0.50" in lines[-1]
    # An MPTCP flow: the share of its bytes by path in each engine, "-" where the emulated one
    # cannot be told (another flow crosses the path).
    lines = format_rows({"seed": 1, "simulated_wall_s": 0.1, "flows": [
        {"flow": "f", "kind": "mptcp", "simulated_mbps": 1428.5, "emulated_mbps": 1131.6, "diff_pct": 26.2,
         "path_share_pct": {"a": {"simulated": 96.7, "emulated": 95.8}, "b": {"simulated": 3.3, "emulated": None}}}]})
    assert lines[-1] == "  f: share of its bytes by path (%), simulated / emulated: a 96.7 / 95.8, b 3.3 / -"


def test_path_shares_read_the_subflows_and_the_interfaces():
    from types import SimpleNamespace

    from mmpath.emu.compare import _path_shares

    iv = pd.DataFrame({"flow": ["f"] * 5 + ["g"], "subflow": [-1, 0, 1, 0, 1, -1],
                       "path": ["a", "a", "b", "a", "b", "b"], "bytes": [999, 300, 100, 300, 300, 50]})
    sim = SimpleNamespace(intervals=iv)
    emu = SimpleNamespace(path_mbps={"a": 90.0, "b": 10.0})
    one = SimpleNamespace(config={"path": [{"name": "a"}, {"name": "b"}],
                                  "flow": [{"name": "f", "kind": "mptcp", "paths": ["a", "b"]}]})
    assert _path_shares(sim, one, "f", ["a", "b"], emu) == {"a": {"simulated": 60.0, "emulated": 90.0},
                                                            "b": {"simulated": 40.0, "emulated": 10.0}}
    # A second flow on path b: the interfaces' bytes are not this flow's alone.
    two = SimpleNamespace(config={"path": one.config["path"],
                                  "flow": one.config["flow"] + [{"name": "g", "kind": "tcp", "path": "b"}]})
    assert _path_shares(sim, two, "f", ["a", "b"], emu)["a"] == {"simulated": 60.0, "emulated": None}


@pytest.mark.parametrize("_", [0], ids=["emulated"])
def test_compare_writes_both_engines_side_by_side(tmp_path, capsys, _):
    for mark in needs_root:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    sc = tmp_path / "cmp.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "o"
    assert main(["emu", "run", str(sc), "--no-capture", "--compare", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "compared with the simulator" in text
    doc = json.loads((out / "compare.json").read_text())
    (row,) = doc["flows"]
    assert row["flow"] == "bulk" and row["link_down_s"] == pytest.approx(2.0)
    # A 200 Mbit/s wired path: both engines fill it apart from the outage.
    assert 0.85 < row["simulated_mbps"] / row["emulated_mbps"] < 1.15, row
    assert row["simulated_outage_s"] >= 0.9 and row["emulated_outage_s"] >= 0.9, row
    assert (out / "compare.png").read_bytes()[:4] == b"\x89PNG"
    # The wired path's down step is held, as the simulator keeps the queue: TCP keeps its window
    # and is back at once. (Before, the shaper dropped the queue and the emulated flow waited out
    # its RTO backoff ~0.9 s after the link was back: 125 vs 159 Mbit/s simulated over 6 s.)
    assert row["emulated_recovery_s"] is not None and row["emulated_recovery_s"] <= 0.3, row
    assert abs(row["simulated_mbps"] / row["emulated_mbps"] - 1) < 0.08, row
    holds = json.loads((out / "emu.json").read_text())["holds"]
    assert holds["a"]["cause"] == "link down" and holds["a"]["windows"] == 1


def test_wired_down_steps_are_held_windows_and_leave_the_capacity_probe():
    from mmpath.emu import holds

    wired = {"name": "a", "technology": "wired", "rate_mbps": 200.0,
             "schedule": [{"t_s": 2.0, "up": False}, {"t_s": 2.5, "rate_mbps": 100.0},
                          {"t_s": 3.0, "up": True}, {"t_s": 5.0, "up": False}]}
    radio = {"name": "r", "technology": "11ad", "event": [{"kind": "blockage", "t_s": 1.0, "duration_s": 1.0}]}
    cfg = {"path": [wired, radio]}
    # Down 2-3 s, and from 5 s to the end (cut at the run's 6 s); a radio's blockage is not held.
    assert holds.holds_ns(cfg, 6.0) == {0: [(2_000_000_000, 3_000_000_000), (5_000_000_000, 6_000_000_000)]}
    probe = holds.without_held(cfg)
    assert probe["path"][0]["schedule"] == [{"t_s": 2.5, "rate_mbps": 100.0}]  # the rate step stays
    assert probe["path"][1] == radio and cfg["path"][0]["schedule"][0] == {"t_s": 2.0, "up": False}


TRACED = """\
name = "cmptrace"
duration_s = 6.0
[[path]]
name = "a"
rate_mbps = 200.0
delay_ms = 1.0
trace = { file = "down.csv" }
[[flow]]
name = "bulk"
kind = "tcp"
cc = "cubic"
"""


def test_a_wired_traces_downs_and_stalls_are_held_windows_and_leave_the_capacity_probe(tmp_path):
    # A wired path's trace acts as its schedule does (docs/scenario.md): down keeps the queue,
    # rate 0 stalls it; the emulator holds both, and its windows are the simulator's (looping,
    # start_s, the schedule's own down steps with them). Before, the shaper dropped through them.
    from mmpath.emu import capacity, holds
    from mmpath.scenario import load_scenario

    (tmp_path / "t.csv").write_text("t_s,rate_mbps,link_up\n0,200,1\n1,,0\n1.5,,1\n2,0,\n2.5,100,\n3,,\n")
    (tmp_path / "s.toml").write_text(
        'duration_s = 5.0\n[[path]]\nname = "a"\nrate_mbps = 300.0\n'
        'trace = { file = "t.csv", start_s = 0.5 }\nschedule = [{ t_s = 4.7, up = false }]\n'
        '[[path]]\nname = "b"\nrate_mbps = 50.0\n[[flow]]\nkind = "tcp"\n')
    cfg = load_scenario(tmp_path / "s.toml").config
    s = 1_000_000_000
    # Trace from 0.5 s: down 1.5-2, stalled 2.5-3, looping at 3.5 (down again 4.5-5), and the
    # schedule's down step at 4.7 inside that; path b has no trace.
    assert holds.wired_stall_windows_ns(cfg, 5.0) == {0: [(3 * s // 2, 2 * s), (5 * s // 2, 3 * s), (9 * s // 2, 5 * s)]}
    probes = holds.traced_wired_probes(cfg, 5.0, str(tmp_path))
    assert list(probes) == [0]
    probe_cfg = holds.without_held(cfg, probes)
    assert probe_cfg["path"][0]["schedule"] == [] and probe_cfg["path"][0]["trace"]["loop"] is False
    assert cfg["path"][0]["trace"]["file"].endswith("t.csv")  # the scenario itself is untouched
    cap = capacity.probe(probe_cfg, 0, "download", 5.0, 1, tcp=False)
    # Never an outage: 300 Mbit/s until 0.5 s, the trace's 200 (through its down and its stall,
    # the rate before them), 100 from 3 s, 200 again from 3.5 s.
    assert cap.mbps.min() > 90, cap.mbps
    assert cap.at(0.2) > 280 and 180 < cap.at(2.7) < 200 and 90 < cap.at(3.2) < 100 and cap.at(4.8) > 180


def test_the_capacity_trace_lasts_its_last_bin():
    # capacity-<path>.csv ends with a row at the end of its last bin: its period is the run's,
    # and `mmpath run` replays it (default loop = true) without dropping the last bin.
    from mmpath import _core
    from mmpath.emu.capacity import Capacity

    text = Capacity(path="a", bin_s=0.1, mbps=np.array([100.0, 0.0, 50.0])).csv()
    assert text.splitlines() == ["t_s,rate_mbps,link_up", "0.000,100.000,1", "0.100,0.000,0",
                                 "0.200,50.000,1", "0.300,,"]
    assert list(_core.parse_csv_trace(text, "capacity-a.csv")["t_s"]) == [0.0, 0.1, 0.2, 0.3]


@pytest.mark.parametrize("_", [0], ids=["emulated"])
def test_a_wired_traces_link_down_is_held_in_the_emulation(tmp_path, capsys, _):
    for mark in needs_root:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    (tmp_path / "down.csv").write_text("t_s,rate_mbps,link_up\n0,200,1\n2,,0\n3,,1\n6,,\n")
    sc = tmp_path / "cmp.toml"
    sc.write_text(TRACED)
    out = tmp_path / "o"
    assert main(["emu", "run", str(sc), "--no-capture", "--compare", "--out", str(out)]) == 0
    (row,) = json.loads((out / "compare.json").read_text())["flows"]
    # As the schedule's down step above: measured 156.6 vs 159.1 Mbit/s, outage 0.9 vs 1.0 s;
    # before, the trace's down dropped the queue: 124.6 vs 159.1, outage 1.9 s, recovery 0.9 s.
    assert row["emulated_recovery_s"] is not None and row["emulated_recovery_s"] <= 0.3, row
    assert abs(row["simulated_mbps"] / row["emulated_mbps"] - 1) < 0.08, row
    held = json.loads((out / "emu.json").read_text())["holds"]["a"]
    assert held["cause"] == "trace" and held["windows"] == 1 and held["first_s"] == [2.0, 3.0]


def test_a_wired_schedules_stalls_are_held_windows_and_leave_the_capacity_probe():
    # A schedule step to rate 0 stalls a wired path (docs/scenario.md: "nothing is sent, nothing
    # is lost"; the simulator keeps the queue): held as a trace's stall is, its windows from the
    # simulator's record of the path (with the down steps among them), and left out of the probe,
    # so the rate before it goes on. Before, the probe's rate 0 was an outage the shaper dropped
    # through, and no window was held.
    from mmpath.emu import capacity, holds
    from mmpath.scenario import load_scenario

    cfg = load_scenario({
        "duration_s": 5.0,
        "path": [{"name": "a", "rate_mbps": 200.0, "schedule": [
            {"t_s": 1.0, "rate_mbps": 0.0}, {"t_s": 1.5, "up": False}, {"t_s": 2.0, "rate_mbps": 100.0},
            {"t_s": 2.5, "up": True}, {"t_s": 3.5, "rate_mbps": 0.0}]},
            {"name": "b", "rate_mbps": 50.0, "schedule": [{"t_s": 1.0, "rate_mbps": 0.0}, {"t_s": 2.0, "rate_mbps": 50.0}]},
            {"name": "c", "rate_mbps": 50.0, "schedule": [{"t_s": 1.0, "up": False}, {"t_s": 2.0, "up": True}]}],
        "flow": [{"kind": "tcp"}]}).config
    s = 1_000_000_000
    # a: stalled at 1 s, down from 1.5 s until 2.5 s (its rate back at 2 s), stalled again from
    # 3.5 s to the end; b: stalled 1-2 s; c has no stall (its down step: holds_ns, unchanged).
    assert holds.wired_stall_windows_ns(cfg, 5.0) == {0: [(s, 5 * s // 2), (7 * s // 2, 5 * s)], 1: [(s, 2 * s)]}
    assert holds.holds_ns(cfg, 5.0)[2] == [(s, 2 * s)]
    assert [holds.hold_cause(p) for p in cfg["path"]] == ["link down and stall", "stall", "link down"]
    probe_cfg = holds.without_held(cfg)
    assert [p["schedule"] for p in probe_cfg["path"]] == [[{"t_s": 2.0, "rate_mbps": 100.0}],
                                                            [{"t_s": 2.0, "rate_mbps": 50.0}], []]
    assert cfg["path"][0]["schedule"][0] == {"t_s": 1.0, "rate_mbps": 0.0}  # the scenario itself is untouched
    cap = capacity.probe(probe_cfg, 0, "download", 5.0, 1, tcp=False)
    # Never an outage: 200 Mbit/s through the first stall, 100 from 2 s through the second.
    assert cap.mbps.min() > 90, cap.mbps
    assert cap.at(1.2) > 180 and 90 < cap.at(4.5) < 100


def test_compare_counts_a_wired_stall_as_an_outage():
    # --compare's outage and recovery (x-kernel's) for a wired path's rate 0 until its next rate,
    # as for its link down; a radio path's rate events are its MCS, never a stall.
    import pandas as pd

    from mmpath.emu.compare import _down_up

    ev = pd.DataFrame({"t_s": [1.0, 2.0, 2.5, 3.0, 4.0], "path": ["r", "a", "a", "a", "b"],
                       "kind": ["rate", "rate", "rate", "rate", "down"], "value": [0.0, 0.0, 0.0, 150.0, float("nan")]})
    assert _down_up(ev, {"a"}, {"a"}) == (2.0, 3.0)
    assert _down_up(ev, {"a"}) is None  # not known to be wired
    assert _down_up(ev, {"r"}, {"a"}) is None
    assert _down_up(ev, {"a", "b"}, {"a", "b"}) == (2.0, 3.0)


STALLED = """\
name = "cmpstall"
duration_s = 4.0
[[path]]
name = "a"
rate_mbps = 200.0
delay_ms = 1.0
schedule = [{ t_s = 2.0, rate_mbps = 0.0 }, { t_s = 2.5, rate_mbps = 200.0 }]
[[flow]]
name = "bulk"
kind = "tcp"
cc = "cubic"
"""


@pytest.mark.parametrize("_", [0], ids=["emulated"])
def test_a_wired_schedules_stall_is_held_in_the_emulation(tmp_path, capsys, _):
    for mark in needs_root:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    sc = tmp_path / "cmp.toml"
    sc.write_text(STALLED)
    out = tmp_path / "o"
    assert main(["emu", "run", str(sc), "--no-capture", "--compare", "--out", str(out)]) == 0
    assert "stall on a: 1 window(s) at rate 0" in capsys.readouterr().out
    (row,) = json.loads((out / "compare.json").read_text())["flows"]
    # Held, TCP keeps its window and is back with the rate. Before, the shaper dropped what
    # arrived in the stall and the flow waited out its RTO backoff (a 1 s stall over 6 s:
    # 124.7 vs 160.6 Mbit/s simulated, outage 1.9 vs 1.0 s, back 0.9 s after the link).
    assert row["link_down_s"] == pytest.approx(2.0) and row["link_up_s"] == pytest.approx(2.5), row
    assert row["emulated_recovery_s"] is not None and row["emulated_recovery_s"] <= 0.3, row
    assert abs(row["simulated_mbps"] / row["emulated_mbps"] - 1) < 0.1, row
    held = json.loads((out / "emu.json").read_text())["holds"]["a"]
    assert held["cause"] == "stall" and held["windows"] == 1 and held["first_s"] == [2.0, 2.5]


def test_the_simulated_side_runs_at_the_emulating_kernels_hz(monkeypatch, tmp_path):
    """CONFIG_HZ is a build-time setting the emulator cannot give the kernel: the comparison
    simulates at the running kernel's (read from its config, kconfig.py), and leaves the
    scenario alone when the config cannot be read."""
    from mmpath.emu import compare as cmp_mod
    from mmpath.emu import kconfig
    from mmpath.scenario import load_scenario

    boot = tmp_path / "config"
    boot.write_bytes(b"# CONFIG_HZ_250 is not set\nCONFIG_HZ_1000=y\nCONFIG_HZ=1000\n")
    monkeypatch.setattr(kconfig, "_config_text", lambda: boot.read_bytes())
    assert kconfig.host_hz() == 1000
    sc = load_scenario({"path": [{"rate_mbps": 100}], "flow": [{"kind": "tcp"}, {"kind": "tcp"}]})
    assert [f["tcp"]["kernel_hz"] for f in sc.config["flow"]] == [250, 250]
    at, hz = cmp_mod.at_host_hz(sc)
    assert hz == 1000 and [f["tcp"]["kernel_hz"] for f in at.config["flow"]] == [1000, 1000]
    assert [f["tcp"]["kernel_hz"] for f in sc.config["flow"]] == [250, 250], "the caller's scenario is untouched"
    monkeypatch.setattr(kconfig, "_config_text", lambda: None)
    assert kconfig.host_hz() is None
    assert cmp_mod.at_host_hz(sc) == (sc, None)
    assert "CONFIG_HZ 1000" in format_rows({"seed": 1, "kernel_hz": 1000, "simulated_wall_s": 0.1, "flows": []})[0]
