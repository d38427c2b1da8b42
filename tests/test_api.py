"""mmpath.run and Result; scenario loading and --set overrides."""

from __future__ import annotations

import io
import sys

import numpy as np
import pandas as pd
import pytest

import mmpath
from mmpath.errors import OverrideError, ScenarioError, ScenarioNotFoundError
from mmpath.progress import Progress
from mmpath.scenario import apply_override, bundled_scenarios, load_scenario, parse_overrides

from conftest import SMALL_TOML

INTERVAL_COLUMNS = ["t_s", "flow", "subflow", "path", "bytes", "mbps"]
TIMELINE_COLUMNS = ["t_s", "flow", "path", "cwnd_bytes", "ssthresh_bytes", "srtt_ms", "in_flight_bytes",
                    "rwnd_bytes", "cc_state", "queue_bytes", "phy_rate_mbps", "link_up", "delivered_bytes"]
EVENT_COLUMNS = ["t_s", "path", "kind", "value"]


# ---------------------------------------------------------------- Result


def test_result_frames_have_documented_columns(small_run):
    res, _ = small_run
    assert isinstance(res, mmpath.Result)
    for frame, cols in ((res.intervals, INTERVAL_COLUMNS), (res.timeline, TIMELINE_COLUMNS),
                        (res.events, EVENT_COLUMNS)):
        assert isinstance(frame, pd.DataFrame)
        assert set(cols) <= set(frame.columns), set(cols) - set(frame.columns)
    # Index columns are decoded to names.
    assert isinstance(res.intervals["flow"].dtype, pd.CategoricalDtype)
    assert set(res.intervals["flow"].cat.categories) == {"bulk", "video"}
    assert set(res.timeline["path"].cat.categories) == {"ad", "ac"}
    assert isinstance(res.timeline["cc_state"].dtype, pd.CategoricalDtype)
    assert isinstance(res.events["kind"].dtype, pd.CategoricalDtype)
    assert len(res.intervals) > 0 and len(res.timeline) > 0


def test_intervals_mbps(small_run):
    iv = small_run[0].intervals
    np.testing.assert_allclose(iv["mbps"], iv["bytes"].astype(float) * 8 / 0.1 / 1e6)


def test_rate_change_is_an_event(small_run):
    ev = small_run[0].events
    rate = ev[ev["kind"] == "rate"]
    assert len(rate) >= 1
    assert (rate["path"] == "ad").all()
    assert rate["t_s"].iloc[0] == pytest.approx(0.25)
    assert rate["value"].iloc[0] == pytest.approx(500)


def test_summary_keys(small_run):
    res, _ = small_run
    s = res.summary
    for key in ("scenario", "seed", "mmpath_version", "sim_s", "events", "flows", "paths", "invariants",
                "wall_s", "sim_s_per_wall_s", "events_per_s", "scenario_config"):
        assert key in s, key
    assert s["scenario"] == "small"
    assert s["seed"] == 3  # the scenario's own seed
    assert s["mmpath_version"] == mmpath.__version__
    assert s["sim_s"] == pytest.approx(0.5)
    assert s["wall_s"] > 0
    assert s["scenario_config"]["flow"][1]["name"] == "video"
    assert res.ok is True
    assert [f["name"] for f in s["flows"]] == ["bulk", "video"]
    bulk, video = s["flows"]
    assert bulk["kind"] == "tcp" and bulk["cc"] == "cubic" and bulk["bytes_delivered"] > 0
    assert video["kind"] == "udp" and video["bytes_delivered"] > 0


def test_seed_and_dict_overrides(small_toml):
    res = mmpath.run(small_toml, seed=9, overrides={"flow.0.cc": "reno", "duration_s": 0.3})
    assert res.summary["seed"] == 9
    assert res.summary["scenario_config"]["seed"] == 9
    assert res.summary["flows"][0]["cc"] == "reno"
    assert res.summary["sim_s"] == pytest.approx(0.3)


def test_list_overrides_and_dict_scenario():
    import tomllib

    doc = tomllib.loads(SMALL_TOML)
    doc["name"] = "from-dict"
    res = mmpath.run(doc, overrides=["flow.1.rate_mbps=10", "duration_s=0.2"])
    assert res.summary["scenario"] == "from-dict"
    assert res.summary["scenario_config"]["flow"][1]["rate_mbps"] == 10
    assert doc["duration_s"] == 0.5  # the caller's dict is not modified


def test_run_with_out_saves(small_toml, tmp_path):
    mmpath.run(small_toml, overrides={"duration_s": 0.2}, out=tmp_path / "o")
    assert (tmp_path / "o" / "summary.json").is_file()


def test_api_raises_scenario_error(small_toml):
    with pytest.raises(mmpath.ScenarioError, match=r"path\.0\.rate_mbps: must be > 0"):
        mmpath.run(small_toml, overrides={"path.0.rate_mbps": -1})
    with pytest.raises(mmpath.ScenarioError, match="scenario file not found"):
        mmpath.run("does/not/exist.toml")


# ---------------------------------------------------------------- scenario loading (Python side)


def test_name_defaults_to_file_stem(small_toml):
    assert load_scenario(small_toml).name == "small"


def test_explicit_name_wins(write_toml):
    p = write_toml('name = "named"\n' + SMALL_TOML, "other.toml")
    assert load_scenario(p).name == "named"


def test_normalized_config_has_defaults(small_toml):
    sc = load_scenario(small_toml)
    assert sc.config["flow"][1]["kind"] == "udp"
    assert sc.config["flow"][0]["stop_s"] == pytest.approx(0.5)  # filled in by the core
    assert sc.seed == 3


@pytest.mark.parametrize(
    "raw, value",
    [("5", 5), ("0.5", 0.5), ("true", True), ("reno", "reno"), ('"5"', "5"), ("[1, 2]", [1, 2]),
     ("{ t_s = 1, up = false }", {"t_s": 1, "up": False}), ("", ""), ("1979-05-27", "1979-05-27")],
)
def test_set_values_are_toml(raw, value):
    assert parse_overrides([f"k={raw}"]) == [("k", value)]


def test_dict_override_values_are_literal():
    assert parse_overrides({"flow.0.cc": "5"}) == [("flow.0.cc", "5")]


def test_override_index_error_message():
    doc = {"path": [{"rate_mbps": 1}]}
    with pytest.raises(OverrideError) as e:
        apply_override(doc, "path.3.rate_mbps", 5)
    assert str(e.value) == "--set path.3.rate_mbps: `path` has 1 entry (index 0)"


def test_override_creates_missing_table_keys():
    doc = {"flow": [{"name": "a"}]}
    apply_override(doc, "flow.0.tcp.initial_cwnd", 4)
    assert doc == {"flow": [{"name": "a", "tcp": {"initial_cwnd": 4}}]}


def test_override_missing_list_is_an_error():
    with pytest.raises(OverrideError, match="no `flow` list"):
        apply_override({}, "flow.0.cc", "reno")


def test_bundled_default_is_found():
    assert "default" in bundled_scenarios()
    assert load_scenario("default").name


def test_missing_scenario_lists_bundled(tmp_path):
    with pytest.raises(ScenarioNotFoundError) as e:
        load_scenario(tmp_path / "x.toml")
    assert "bundled scenarios: " in str(e.value)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, mmpath.ScenarioError)


# ---------------------------------------------------------------- progress bar


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal():
    piped = io.StringIO()
    p = Progress(10.0, stream=piped)
    p.update(5.0, force=True)
    p.close()
    assert piped.getvalue() == ""

    tty = _Tty()
    p = Progress(10.0, stream=tty)
    p.update(5.0, force=True)
    assert "5.00 / 10.00 s" in tty.getvalue() and "50.0%" in tty.getvalue()
    p.close()


def test_progress_names_the_variant_and_the_sweep_point(monkeypatch, tmp_path):
    from mmpath.compare import compare
    from mmpath.progress import RunCounter

    toml = tmp_path / "two.toml"
    toml.write_text('duration_s = 0.3\n[[path]]\nrate_mbps = 100\n[[flow]]\ncc = "cubic"\n'
                    '[[variant]]\nname = "ren"\nset = { "flow.0.cc" = "reno" }\n'
                    '[[variant]]\nname = "veg"\nset = { "flow.0.cc" = "vegas" }\n')
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    compare(str(toml), progress=True)
    assert "variant ren (1/2) [" in tty.getvalue() and "variant veg (2/2) [" in tty.getvalue()

    tty = _Tty()
    bar = RunCounter(2, stream=tty, label="sweeping")
    bar.step("flow.0.ratio=30, seed 1")
    bar.step("flow.0.ratio=40, seed 1")
    assert "2/2 runs" in tty.getvalue() and "done: flow.0.ratio=40, seed 1" in tty.getvalue()


def test_progress_disabled_explicitly():
    tty = _Tty()
    p = Progress(10.0, enabled=False, stream=tty)
    p.update(1.0, force=True)
    assert tty.getvalue() == ""


def test_a_seed_given_twice_is_refused(small_toml):
    """seed=4 with the override seed=9 silently ran seed 4 (the seed argument was applied last)."""
    with pytest.raises(mmpath.ScenarioError, match=r"seed: given twice, as the seed \(4\) and as the override seed=9"):
        mmpath.run(small_toml, seed=4, overrides={"seed": 9})
    assert mmpath.run(small_toml, overrides={"seed": 9, "duration_s": 0.2}).summary["seed"] == 9


# --------------------------------------------------------------------------- the Python API's words


def test_python_api_errors_name_its_arguments_not_the_cli_flags():
    # mmpath.run's errors point at what a Python caller wrote (overrides=, variant=), not at
    # --set / --variant, which it never typed; the command line keeps its flags (test_cli.py).
    with pytest.raises(ScenarioError) as e:
        mmpath.run("blockage", overrides={"flow.0.cc": "westwood"})
    msg = str(e.value)
    assert msg.endswith('(from overrides["flow.0.cc"])'), msg
    assert "--set" not in msg and "unknown value `westwood`" in msg, msg
    with pytest.raises(OverrideError) as e:
        mmpath.run("blockage", overrides={"path.5.mcs": 3})
    assert str(e.value) == 'overrides["path.5.mcs"]: `path` has 2 entries (index 0-1)'
    with pytest.raises(OverrideError) as e:
        mmpath.run("blockage", overrides=["duration_s"])
    assert "--set" not in str(e.value) and "expected 'KEY=VALUE'" in str(e.value)
    with pytest.raises(OverrideError, match=r"^overrides: an empty key"):
        mmpath.run("blockage", overrides={"": 1})
    with pytest.raises(OverrideError, match=r'^overrides\["a\.\.b"\]: empty part in the dotted path'):
        mmpath.run("blockage", overrides={"a..b": 1})
    with pytest.raises(ScenarioError) as e:
        mmpath.run("default", variant="nope")
    assert str(e.value).startswith('variant="nope": no such variant in default.toml') and "--variant" not in str(e.value)
    with pytest.raises(ScenarioError) as e:
        mmpath.run("11ad-bulk", variant="x")
    assert str(e.value).endswith("(leave variant out)"), str(e.value)


def test_compare_from_python_blames_the_variant_or_the_override_in_python_words():
    from mmpath.compare import compare

    # The user's override is blamed as the Python argument ...
    with pytest.raises(ScenarioError) as e:
        compare("default", overrides={"flow.0.scheduler": "bogus"})
    assert 'overrides["flow.0.scheduler"]' in str(e.value) and "--set" not in str(e.value)
    # ... and a field a variant set is blamed on the variant, as from the command line.
    with pytest.raises(ScenarioError) as e:
        compare("default", overrides={"flow.0.kind": "tcp"})
    assert "(from the variant's set" in str(e.value), str(e.value)


@pytest.mark.parametrize("direction", ["download", "upload"])
def test_timeline_path_columns_are_the_paths_in_either_direction(direction):
    """The timeline's phy_rate / queue / link_up describe the flow's own path, not the backbone:
    an upload's data crosses the path first and the backbone last (a run once showed the
    backbone's 1000 Mbit/s and its empty queue for every upload)."""
    doc = {
        "name": "dir", "duration_s": 0.3,
        "backbone": {"rate_mbps": 1000, "delay_ms": 1},
        "path": [{"name": "p", "rate_mbps": 50, "delay_ms": 1}],
        "flow": [{"name": "f", "kind": "tcp", "path": "p", "direction": direction}],
    }
    tl = mmpath.run(doc).timeline
    assert set(tl["phy_rate_mbps"].round(3)) == {50.0}
    assert tl["queue_bytes"].max() > 0  # a backlogged TCP flow queues at its 50 Mbit/s path
