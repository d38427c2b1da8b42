"""Radio paths from the front end: the timeline carries the MCS and signal; errors are one line."""

import mmpath
import pytest


def test_radio_scenario_reports_mcs_and_signal():
    res = mmpath.run("11ad-radio", overrides={"duration_s": 0.5, "flow.0.stop_s": 0.5, "flow.1.start_s": 0.25})
    assert res.ok
    t = res.timeline
    assert set(t["mcs"].dropna().unique()) == {9.0}
    assert t["rssi_dbm"].between(-43, -41).all()
    path = res.summary["paths"][0]
    assert path["technology"] == "11ad" and path["mcs"] == 9
    assert path["txops_down"] > 0 and path["txops_up"] > 0, "TCP's ACKs use the shared channel"


def test_radio_field_on_wired_path_is_a_clear_error():
    with pytest.raises(mmpath.ScenarioError) as e:
        mmpath.run("11ad-bulk", overrides={"path.0.mcs": 9})
    assert "path.0.mcs: only radio paths take this" in str(e.value)
