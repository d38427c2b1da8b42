"""The phone's radio power model against its calibration (crates/mmpath-sim/src/energy.rs).

Each radio's amplifier power is derived from seed 002's Tx-mode figure and the share of a
backlogged upload's Tx-mode time the client's own PPDUs are on the air (``tx_on_share``, read
once from the MAC model). If the MAC model changes, that share moves and the derived power no
longer reproduces the measured figure: these tests catch it.
"""

from __future__ import annotations

import pytest

import mmpath

# Seed 002 section 4.1: Tx-mode power under backlogged traffic, mW; the preset's share.
TX_FIGURE = {"rog-phone-2-11ad": 1600.0, "rog-phone-2-11ac": 2800.0}
SHARE = {"rog-phone-2-11ad": 0.356, "rog-phone-2-11ac": 0.866}


def _upload(device: str, tech: str, seconds: float = 10.0) -> dict:
    sc = {
        "name": "calibration", "duration_s": seconds, "seed": 1,
        "path": [{"name": "p", "technology": tech, "device": device, "distance_m": 1.0}],
        "flow": [{"name": "f", "kind": "tcp", "path": "p", "direction": "upload", "cc": "cubic"}],
    }
    return mmpath.run(sc).summary["paths"][0]["energy"]


@pytest.mark.parametrize("device,tech", [("rog-phone-2-11ad", "11ad"), ("rog-phone-2-11ac", "11ac")])
def test_backlogged_upload_draws_the_measured_tx_figure(device, tech):
    e = _upload(device, tech)
    share = e["tx_on_s"] / e["tx_s"]
    assert share == pytest.approx(SHARE[device], abs=0.005), f"the MAC's on-air share moved: {share:.4f}"
    assert e["mean_power_mw"] == pytest.approx(TX_FIGURE[device], rel=0.02)
    # The amplifier draws more than the average, listening less.
    assert e["power_mw"]["tx_on"] > TX_FIGURE[device] > e["power_mw"]["idle"]


def test_light_upload_costs_less_than_its_busy_time():
    """At a tenth of the 11ac radio's capacity its power falls well below the Tx figure even
    though short TXOPs keep the medium busy a large part of the time (seed 002 Fig. 4d)."""
    sc = {
        "name": "light", "duration_s": 5.0, "seed": 1,
        "path": [{"name": "p", "technology": "11ac", "device": "rog-phone-2-11ac", "distance_m": 1.0}],
        "flow": [{"name": "f", "kind": "tcp", "path": "p", "direction": "upload", "cc": "cubic",
                  "app": "rate", "rate_mbps": 60.0}],
    }
    e = mmpath.run(sc).summary["paths"][0]["energy"]
    busy = e["tx_s"] / 5.0
    # Charging every Tx-mode TXOP whole at the figure would give busy x 2800 mW.
    assert busy > 0.3
    assert e["mean_power_mw"] < 0.5 * busy * TX_FIGURE["rog-phone-2-11ac"]
