"""Defects found touring the energy and host model (seed 002's dual-band phone) as a researcher,
each pinned by a test that failed before its fix, and the energy meter's outputs checked end to
end against hand arithmetic from the power table (docs/models.md "Energy")."""

from __future__ import annotations

import pytest

import mmpath
from mmpath.cli import main

# The phone's powers, mW (crates/mmpath-sim/src/energy.rs; docs/models.md "Energy").
IDLE = {"11ad": 600.0, "11ac": 120.0}
PSM = 10.0
PSM_TIMEOUT_S = 0.1


def _phone(**flow) -> dict:
    return {
        "name": "phone", "duration_s": 2.0, "seed": 1,
        "path": [{"name": "11ad", "technology": "11ad", "device": "rog-phone-2", "distance_m": 1.0},
                 {"name": "11ac", "technology": "11ac", "device": "rog-phone-2", "distance_m": 1.0}],
        "flow": [{"name": "f", **flow}],
    }


# --------------------------------------------------------------------------- --variant with --set


def test_variant_takes_a_set_that_only_the_variant_allows(tmp_path, capsys):
    # phone-energy's base flow runs the default scheduler; its `energy` variant sets
    # scheduler = "energy", which alone takes max_rates_mbps. Before, the override was checked
    # against the base first: "only scheduler = "energy" takes max_rates_mbps", exit 2.
    rc = main(["run", "phone-energy", "--variant", "energy", "--set", "duration_s=0.3",
               "--set", "flow.0.max_rates_mbps=[1500, 550]", "--out", str(tmp_path / "o"), "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    res = mmpath.run("phone-energy", variant="energy",
                     overrides={"duration_s": 0.3, "flow.0.max_rates_mbps": [1500, 550]})
    assert res.summary["scenario_config"]["flow"][0]["max_rates_mbps"] == [1500, 550]
    # A bad override is still refused in one line, naming --set.
    rc = main(["run", "phone-energy", "--variant", "energy", "--set", "flow.0.max_rates_mbps=[1500, -1]",
               "--out", str(tmp_path / "bad"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "flow.0.max_rates_mbps.1" in err and "--set" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "bad").exists()
