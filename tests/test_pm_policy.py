"""The path-manager policies through the Python binding (`_core.PathManagerPolicy`, the
interface the mmpath-pm daemon is written against; docs/core-api.md): events in, actions out,
timers, and one clear line for every bad input."""

import pytest

from mmpath import _core


def test_fast_failback_opens_a_fresh_subflow_and_retires_the_old_one() -> None:
    p = _core.PathManagerPolicy("fast-failback")
    assert p.name == "fast-failback"
    assert p.on_event(0.0, {"kind": "conn_created", "path": 0}) == []
    assert p.on_event(0.0, {"kind": "subflow_established", "path": 0, "subflow": 0}) == []
    assert p.on_event(1.0, {"kind": "link_down", "path": 0}) == []
    assert p.on_event(6.0, {"kind": "link_up", "path": 0}) == [{"kind": "create_subflow", "path": 0}]
    assert p.on_event(6.01, {"kind": "subflow_established", "path": 0, "subflow": 7}) == [
        {"kind": "close_subflow", "path": 0, "subflow": 0}]
    assert p.poll_at() is None and p.on_timer(7.0) == []


def test_fast_failback_withdraws_a_cut_path_that_has_a_survivor() -> None:
    """At the cut, with path 1's subflow up: REMOVE (RM_ADDR) of path 0, which the peer hears
    over path 1 and which makes it resend path 0's data there; the return re-joins path 0."""
    p = _core.PathManagerPolicy("fast-failback")
    p.on_event(0.0, {"kind": "subflow_established", "path": 0, "subflow": 0})
    p.on_event(0.1, {"kind": "subflow_established", "path": 1, "subflow": 1})
    assert p.on_event(1.0, {"kind": "link_down", "path": 0}) == [{"kind": "remove", "path": 0}]
    assert p.on_event(1.0, {"kind": "subflow_closed", "path": 0, "subflow": 0, "error": False}) == []
    assert p.on_event(6.0, {"kind": "link_up", "path": 0}) == [{"kind": "create_subflow", "path": 0}]
    assert p.on_event(6.01, {"kind": "subflow_established", "path": 0, "subflow": 2}) == []


def test_kernel_decides_nothing() -> None:
    p = _core.PathManagerPolicy("kernel", None)
    for ev in ({"kind": "link_down", "path": 0}, {"kind": "link_up", "path": 0},
               {"kind": "subflow_closed", "path": 1, "subflow": 1, "error": True}):
        assert p.on_event(1.0, ev) == []


def test_link_aware_backup_moves_early_and_returns_after_its_hold() -> None:
    p = _core.PathManagerPolicy("link-aware-backup", {"backup_paths": [1], "hold_s": 0.5})
    assert p.on_event(1.0, {"kind": "link_quality", "path": 0, "signal_dbm": -67.0}) == [
        {"kind": "set_backup", "path": 0}, {"kind": "clear_backup", "path": 1}]
    assert p.on_event(2.0, {"kind": "link_quality", "path": 0, "signal_dbm": -60.0, "mcs": 8}) == []
    assert p.poll_at() == pytest.approx(2.5)
    assert p.on_timer(2.5) == [{"kind": "clear_backup", "path": 0}, {"kind": "set_backup", "path": 1}]


def test_recreate_backs_off() -> None:
    p = _core.PathManagerPolicy("recreate", {"backoff_s": 0.5})
    assert p.on_event(3.0, {"kind": "subflow_closed", "path": 1, "subflow": 4, "error": True}) == []
    assert p.poll_at() == pytest.approx(3.5)
    assert p.on_timer(3.5) == [{"kind": "create_subflow", "path": 1}]


@pytest.mark.parametrize("args, message", [
    (("nope",), 'unknown name "nope" (allowed: kernel, fast-failback, link-aware-backup, recreate)'),
    (("fast-failback", {"hold_s": 1}), '"hold_s" is not read by this policy (allowed: none)'),
    (("link-aware-backup", {"hold": 1}), '"hold" is unknown (allowed: backup_paths, leave_dbm'),
    (("link-aware-backup", {"backup_paths": ["wlan0"]}), "path indexes, integers from 0 to 255"),
    (("recreate", {"backoff_s": 0}), 'params["backoff_s"]: a time in seconds > 0 (got 0'),
])
def test_bad_policies_are_one_line(args: tuple, message: str) -> None:
    with pytest.raises(ValueError) as e:
        _core.PathManagerPolicy(*args)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("event, message", [
    ({"kind": "link_sideways", "path": 0}, 'unknown kind "link_sideways" (allowed: link_up, link_down'),
    ({"kind": "link_up"}, 'link_up event: no "path"'),
    ({"kind": "subflow_rto", "path": 0}, 'subflow_rto event: no "subflow"'),
    ({"kind": "link_quality", "path": 0}, 'give "signal_dbm" (dBm) and / or "mcs"'),
    ({"kind": "link_up", "path": 0, "subflow": 1}, 'unknown key "subflow" (allowed: kind, path)'),
    ({"kind": "link_up", "path": 300}, "an integer from 0 to 255 (got 300)"),
    ({"kind": "subflow_closed", "path": 0, "subflow": 1, "error": "yes"}, "True or False"),
    ([], "event: a dict"),
])
def test_bad_events_are_one_line(event: object, message: str) -> None:
    p = _core.PathManagerPolicy("fast-failback")
    with pytest.raises(ValueError) as e:
        p.on_event(1.0, event)
    assert message in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ValueError, match="now_s: a time in seconds"):
        p.on_event(-1.0, {"kind": "link_up", "path": 0})


def _scenario(**flow: object) -> str:
    import json
    return json.dumps({"path": [{"name": "a", "rate_mbps": 100.0}, {"name": "b", "rate_mbps": 50.0}],
                       "flow": [{"kind": "mptcp", **flow}]})


@pytest.mark.parametrize("flow, message", [
    ({"path_manager": "fullmesh"},
     "flow.0.path_manager: unknown value `fullmesh`, expected one of `kernel`, `fast-failback`, "
     "`link-aware-backup`, `recreate`"),
    ({"path_manager": "fast-failback", "scheduler": "musher"},
     'flow.0.scheduler: path_manager = "fast-failback" opens subflows during the run'),
    ({"path_manager": "recreate", "coupled": "lia"}, "flow.0.coupled: path_manager"),
])
def test_the_scenario_field_is_checked_in_one_line(flow: dict, message: str) -> None:
    with pytest.raises(_core.ScenarioError) as e:
        _core.normalize_scenario(_scenario(**flow))
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_tcp_flows_refuse_the_field() -> None:
    import json
    sc = json.dumps({"path": [{"name": "a", "rate_mbps": 100.0}],
                     "flow": [{"kind": "tcp", "path_manager": "kernel"}]})
    with pytest.raises(_core.ScenarioError, match="flow.0.path_manager: only MPTCP flows"):
        _core.normalize_scenario(sc)
