"""MPTCP through the Python API: per-subflow outputs and custom schedulers written in Python."""

from __future__ import annotations

import pytest

import mmpath
from mmpath import SchedulerError
from mmpath.errors import ScenarioError

from conftest import assert_one_line_error, to_toml

TWO_PATHS = {
    "name": "two-paths",
    "duration_s": 2.0,
    "backbone": {"enabled": False},
    "path": [
        {"name": "fast", "rate_mbps": 200.0, "mtu_bytes": 1500, "delay_ms": 2.0},
        {"name": "slow", "rate_mbps": 20.0, "mtu_bytes": 1500, "delay_ms": 10.0},
    ],
    "flow": [{"name": "mp", "kind": "mptcp", "kernel": "linux-v0.9x"}],
}


class OnlySlow:
    """Every segment on the slow path: the outcome must follow the Python code, not minRTT."""

    name = "only-slow"

    def __init__(self) -> None:
        self.calls = 0
        self.acked = 0

    def select(self, now_s, subflows, conn):
        self.calls += 1
        s = next(s for s in subflows if s["path"] == "slow")
        return s["id"] if s["established"] and s["has_cwnd_room"] else None

    def on_ack(self, now_s, subflow, acked_bytes):
        self.acked += acked_bytes


def test_python_scheduler_changes_the_outcome():
    builtin = mmpath.run(TWO_PATHS)
    sched = OnlySlow()
    custom = mmpath.run(TWO_PATHS, scheduler=sched)
    fb, fc = builtin.summary["flows"][0], custom.summary["flows"][0]
    assert fb["scheduler"] == "minrtt" and fc["scheduler"] == "only-slow"
    assert fb["goodput_mbps"] > 150.0
    # Only the 20 Mbit/s path carries data (it joins 1.5 RTT after the start).
    assert 12.0 < fc["goodput_mbps"] < 20.0
    assert fc["subflows"][0]["bytes_delivered"] == 0
    # on_ack saw the sender's acknowledged bytes: what the receiver got, less the last window.
    got = fc["subflows"][1]["bytes_delivered"]
    assert sched.calls > 100 and 0.95 * got < sched.acked <= got
    assert custom.ok


def test_per_subflow_outputs():
    res = mmpath.run(TWO_PATHS)
    f = res.summary["flows"][0]
    assert [s["path"] for s in f["subflows"]] == ["fast", "slow"]
    assert sum(s["scheduled_bytes"] for s in f["subflows"]) >= f["bytes_delivered"]
    iv = res.intervals
    conn = iv[iv["subflow"] < 0]["bytes"].sum()
    assert conn == f["bytes_delivered"]
    tl = res.timeline
    assert {"subflow", "sf_state", "scheduled_bytes", "sched_metric"} <= set(tl.columns)
    assert set(tl["subflow"].unique()) == {-1, 0, 1}
    checks = {c["check"] for c in res.summary["invariants"]["checks"]}
    assert "mptcp-data-stream" in checks


def test_mptcp_utilization_is_over_the_sum_of_its_paths():
    # docs/outputs.md: utilization = goodput / the capacity the flow could use. For a connection
    # over 200 + 20 Mbit/s that is 220 Mbit/s; the rows' mean (110) gave utilizations above 1.
    res = mmpath.run(TWO_PATHS)
    f = res.summary["flows"][0]
    assert f["goodput_mbps"] > 120  # more than the mean path's rate: both paths carry data
    assert f["metrics"]["utilization"] == pytest.approx(f["goodput_mbps"] / 220.0)
    assert f["metrics"]["utilization"] <= 1.0


def test_scheduler_errors_are_clear():
    class Broken:
        def select(self, now_s, subflows, conn):
            raise KeyError("oops")

    with pytest.raises(SchedulerError, match=r"custom scheduler \"Broken\": select\(\): .*oops"):
        mmpath.run(TWO_PATHS, scheduler=Broken())

    class OutOfRange:
        def select(self, now_s, subflows, conn):
            return 7

    with pytest.raises(SchedulerError, match=r"returned 7; subflow indexes are 0..1"):
        mmpath.run(TWO_PATHS, scheduler=OutOfRange())

    with pytest.raises(ScenarioError, match="needs a method select"):
        mmpath.run(TWO_PATHS, scheduler=object())
    with pytest.raises(ScenarioError, match=r'no MPTCP flow named "nope" \(MPTCP flows: mp\)'):
        mmpath.run(TWO_PATHS, scheduler={"nope": OnlySlow()})
    tcp_only = {**TWO_PATHS, "flow": [{"name": "t", "kind": "tcp"}]}
    with pytest.raises(ScenarioError, match="has no MPTCP flow"):
        mmpath.run(tcp_only, scheduler=OnlySlow())


def test_select_in_the_interface_specs_short_form():
    """docs/schedulers.md allows a custom scheduler's select(now, subflows): that form runs as the
    three-argument one does; a select taking neither form is refused up front."""

    class SlowShort:
        def select(self, now, subflows):
            return 1

    class SlowLong:
        def select(self, now_s, subflows, conn):
            return 1

    short = mmpath.run(TWO_PATHS, scheduler=SlowShort()).summary["flows"][0]
    long = mmpath.run(TWO_PATHS, scheduler=SlowLong()).summary["flows"][0]
    assert short["goodput_mbps"] == long["goodput_mbps"] < 25

    class NoArgs:
        def select(self):
            return 0

    with pytest.raises(ScenarioError, match=r"select\(self\)|select\(\) must take \(now_s, subflows, conn\) or \(now_s, subflows\)"):
        mmpath.run(TWO_PATHS, scheduler=NoArgs())


@pytest.mark.parametrize("flow,fragment", [
    ({"kind": "mptcp", "paths": ["fast", "nope"]}, 'flow.0.paths.1: no path named "nope" (paths: fast, slow)'),
    ({"kind": "mptcp", "paths": ["fast", "fast"]}, 'flow.0.paths.1: path "fast" is listed twice'),
    ({"kind": "mptcp", "scheduler": "fixedratio", "ratio": 140}, "flow.0.ratio: segments per 100 for the first path: 0..=100"),
    ({"kind": "mptcp", "ratio": 40}, "flow.0.ratio: only the fixedratio, musher, amuse and energy schedulers take a ratio"),
    ({"kind": "mptcp", "scheduler": "fastest"}, "flow.0.scheduler: unknown value `fastest`"),
    ({"kind": "mptcp", "kernel": "linux-4.1"}, "flow.0.kernel: unknown value `linux-4.1`"),
    ({"kind": "mptcp", "backup_paths": ["other"]}, 'flow.0.backup_paths.0: "other" is not one of this flow\'s paths'),
    ({"kind": "tcp", "scheduler": "minrtt"}, 'flow.0.scheduler: only MPTCP flows (kind = "mptcp") take this field'),
    ({"kind": "mptcp", "amuse": {"scan": True}}, 'flow.0.amuse: only scheduler = "amuse" takes amuse switches'),
    ({"kind": "mptcp", "prio": [{"t_s": 1, "path": "x", "backup": True}]}, 'flow.0.prio.0.path: "x" is not one of'),
    ({"kind": "mptcp", "app": "cbr", "rate_mbps": 10}, "flow.0.app: `cbr` is a UDP application; MPTCP flows take"),
])
def test_bad_mptcp_fields_one_clear_error(run_cli, tmp_path, flow, fragment):
    sc = {**TWO_PATHS, "flow": [{"name": "mp", **flow}]}
    with pytest.raises(ScenarioError) as e:
        mmpath.run(sc)
    assert fragment in str(e.value), str(e.value)
    # The CLI says the same in one line, exit 2, no traceback.
    toml = tmp_path / "bad.toml"
    toml.write_text(to_toml(sc))
    rc, _, err = run_cli("run", str(toml), "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, fragment)


def test_mesh_ap_scenario_opens_an_address_mesh():
    """The bundled seed 000 set-up: four subflows, the crossed ones named client>server address,
    each carrying data on its sender's path and ACKs on the other; the run table lists each path
    once and names every subflow."""
    res = mmpath.run("mesh-ap", overrides={"duration_s": 2.0, "flow.0.kernel": "linux-v0.9x",
                                           "flow.0.subflows": "address-mesh"})
    f = res.summary["flows"][0]
    subs = {s["name"]: s for s in f["subflows"]}
    assert list(subs) == ["upload/11ad", "upload/11n", "upload/11ad>11n", "upload/11n>11ad"]
    assert (subs["upload/11ad>11n"]["path"], subs["upload/11ad>11n"]["ack_path"]) == ("11ad", "11n")
    assert (subs["upload/11n>11ad"]["path"], subs["upload/11n>11ad"]["ack_path"]) == ("11n", "11ad")
    assert subs["upload/11ad>11n"]["mss_bytes"] == subs["upload/11n"]["mss_bytes"] < subs["upload/11ad"]["mss_bytes"]
    assert all(s["goodput_mbps"] > 0 for s in subs.values())
    assert res.summary["invariants"]["ok"]
    with pytest.raises(ScenarioError, match="backbone.enabled = false"):
        mmpath.run("mesh-ap", overrides={"duration_s": 0.5, "flow.0.subflows": "address-mesh",
                                         "backbone.enabled": True})
