"""The bundled scenarios that stage each seed paper's study (cc-blockage, phone-energy,
interference, scan, walk-away): each runs its variants and shows the behaviour its comment
promises. Nothing here is a paper claim (`mmpath reproduce` checks those); these guard the
gallery users start from against a model or format change that silently empties it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mmpath.compare import compare, format_table


@pytest.fixture(scope="module")
def runs():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = compare(name, seed=1)
        return cache[name]

    return get


def _row(cmp, variant):
    t = cmp.table
    return t[t["variant"] == variant].iloc[0]


def test_cc_blockage_bbr_recovers_first_and_cubic_takes_long(runs):
    cmp = runs("cc-blockage")
    assert list(cmp.table["variant"]) == ["cubic", "reno", "vegas", "bbr"]
    assert list(cmp.table["cc"]) == ["cubic", "reno", "vegas", "bbr"]  # shown: the variants differ
    cubic, bbr = _row(cmp, "cubic"), _row(cmp, "bbr")
    # Every variant lost its link at the blockage (10 s, back 0.5 s after its end).
    for res in cmp.results.values():
        outs = res.summary["flows"][0]["metrics"]["outages"]
        assert len(outs) == 1 and abs(outs[0]["start_s"] - 10.0) < 0.2, outs
    # BBR's bandwidth filter remembers the pre-outage rate; Cubic climbs back from RTOs.
    assert bbr["resaturation_s"] < 2.0
    assert cubic["goodput_mbps"] > _row(cmp, "reno")["goodput_mbps"]
    # The congestion window is in each variant's timeline, as the comparison plot draws it.
    for res in cmp.results.values():
        assert res.timeline["cwnd_bytes"].notna().any()


def test_cc_blockage_cubic_takes_longer_to_resaturate_than_bbr(runs):
    # The poster's observation the scenario stages: Cubic slow to re-saturate, BBR quick. How
    # slow is a matter of the run: with the kernel clock's phase drawn from the seed
    # (tcp/timer_wheel.rs) Cubic is back in 1.2-5.0 s at seven of seeds 1-8 (seed 1: 4.2 s) and
    # in 27.4 s at seed 4, where a second loss episode in the recovery after the RTO's undo cuts
    # its ssthresh again (docs/models.md). The poster's > 20 s is `mmpath reproduce 003-blockage`'s
    # claim, over its seeds. With the 4.10 driver's 4096 / 4000 at the AP Cubic was back in 2.2 s
    # at phase 0 (docs/facts.md "Transmit ring").
    cmp = runs("cc-blockage")
    cubic, bbr = _row(cmp, "cubic")["resaturation_s"], _row(cmp, "bbr")["resaturation_s"]
    assert cubic > 3.0 and cubic > 3 * bbr, (cubic, bbr)


def test_phone_energy_table_has_energy_and_the_energy_scheduler_fills_a_500_mbps_source(runs):
    cmp = runs("phone-energy")
    t = cmp.table
    assert {"energy_J", "nJ_per_bit"} <= set(t.columns)
    ad, ac, r73 = _row(cmp, "11ad-only"), _row(cmp, "11ac-only"), _row(cmp, "ratio-73")
    assert r73["goodput_mbps"] > ad["goodput_mbps"] > ac["goodput_mbps"]
    assert r73["goodput_mbps"] < ad["goodput_mbps"] + ac["goodput_mbps"]
    # 11ad moves more bits per joule than 11ac under a backlogged download (seed 002 Fig. 4).
    assert ad["nJ_per_bit"] < ac["nJ_per_bit"]
    low = _row(cmp, "energy-500")
    assert abs(low["goodput_mbps"] - 500.0) < 25.0
    # It starts from MuSher's ratio and moves to 11ac alone after its first 1 s estimate.
    res = cmp.results["energy-500"]
    iv = res.intervals
    late = iv[(iv["t_s"] >= 3.0) & (iv["subflow"] >= 0)].groupby("path", observed=True)["bytes"].sum()
    assert late.get("11ad", 0) < 0.02 * late.sum(), late


def test_interference_adjacent_is_harmless_co_channel_shares_and_hidden_collides(runs):
    cmp = runs("interference")
    none, adj = _row(cmp, "none")["goodput_mbps"], _row(cmp, "adjacent")["goodput_mbps"]
    sensed, hidden = _row(cmp, "same-sensed"), _row(cmp, "same-hidden")
    assert abs(adj - none) < 0.02 * none
    assert sensed["goodput_mbps"] < 0.9 * none and sensed["retransmits"] == 0
    assert hidden["goodput_mbps"] < sensed["goodput_mbps"] and hidden["retransmits"] > 0
    # Nothing happens before the neighbour starts at 3 s.
    for name in ("same-sensed", "same-hidden"):
        iv = cmp.results[name].intervals
        early = iv[(iv["t_s"] >= 1.0) & (iv["t_s"] < 3.0)]["mbps"].mean()
        assert early > 0.95 * none, (name, early)


def test_scan_amuse_keeps_11ad_going_during_scans(runs):
    cmp = runs("scan")

    def ad_during_scans(res):
        iv = res.intervals
        ad = iv[(iv["path"].astype(str) == "11ad") & (iv["subflow"] >= 0)]
        t = ad["t_s"].to_numpy(dtype=float)
        inside = ((t >= 2.0) & (t < 2.9)) | ((t >= 6.0) & (t < 6.9))
        return float(ad["mbps"].to_numpy()[inside].mean())

    d, a = ad_during_scans(cmp.results["default"]), ad_during_scans(cmp.results["amuse-scan"])
    assert a > 1.3 * d, (a, d)
    assert _row(cmp, "amuse-scan")["goodput_mbps"] > _row(cmp, "default")["goodput_mbps"]
    # The scans show in the run as the 11ac path going off channel and back.
    ev = cmp.results["default"].events
    assert (ev["kind"].astype(str) == "down").sum() >= 10


def test_walk_away_rate_falls_with_distance_and_ideal_beats_commodity(runs):
    cmp = runs("walk-away")
    assert _row(cmp, "ideal")["goodput_mbps"] > _row(cmp, "commodity")["goodput_mbps"]
    for res in cmp.results.values():
        tl = res.timeline
        tl = tl[tl["path"].astype(str) == "11ad"]
        rssi_start = tl[tl["t_s"] < 1.0]["rssi_dbm"].mean()
        rssi_end = tl[tl["t_s"] > 30.0]["rssi_dbm"].mean()
        assert rssi_start - rssi_end > 15.0
        early = tl[tl["t_s"] < 1.0]["phy_rate_mbps"].mean()
        late = tl[(tl["t_s"] > 25.0) & tl["link_up"]]["phy_rate_mbps"].mean()
        assert late < 0.6 * early


def test_table_marks_never_resaturated_and_unmeasured_apart(runs):
    cmp = runs("interference")
    t = cmp.table
    assert math.isinf(_row(cmp, "same-hidden")["resaturation_s"])
    assert np.isnan(_row(cmp, "none")["resaturation_s"])
    text = format_table(t)
    line = {ln.split()[0]: ln for ln in text.splitlines()[2:]}
    assert "never" in line["same-hidden"] and "never" not in line["none"]
    assert "mode/scheduler" not in text  # no MPTCP variant: its columns are left out


def test_comparison_output_is_refused_early_and_written_whole(tmp_path, monkeypatch):
    import mmpath.compare as cmpmod
    from mmpath.errors import OutputError

    blocker = tmp_path / "file"
    blocker.write_text("x")
    ran = []
    monkeypatch.setattr(cmpmod, "simulate", lambda *a, **k: ran.append(1))
    with pytest.raises(OutputError, match="not a folder"):
        compare("default", overrides={"duration_s": 0.3}, out=blocker)
    assert ran == []  # refused before any variant ran
    monkeypatch.undo()

    # A failure while writing (here: the plot) leaves the folder as it was: nothing half-written.
    out = tmp_path / "o"

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cmpmod, "plot", boom)
    with pytest.raises(KeyboardInterrupt):
        compare("default", overrides={"duration_s": 0.3}, out=out)
    assert not out.exists() or not any(out.iterdir())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".o.tmp")]


def test_run_one_variant(run_cli, tmp_path):
    rc, out, err = run_cli("run", "scan", "--variant", "amuse-scan", "--set", "duration_s=0.5",
                           "--out", tmp_path / "o", "--json")
    assert rc == 0, err
    import json

    doc = json.loads(out)
    assert doc["flows"][0]["scheduler"] == "amuse"  # one summary, not one per variant
    assert (tmp_path / "o" / "summary.json").is_file() and not (tmp_path / "o" / "compare.csv").exists()
    res = __import__("mmpath").run("scan", overrides={"duration_s": 0.5}, variant="fixedratio")
    assert res.summary["flows"][0]["scheduler"] == "fixedratio"
    rc, _, err = run_cli("run", "scan", "--variant", "nope")
    assert rc == 2 and "allowed: default, fixedratio, amuse-scan" in err and "Traceback" not in err
    rc, _, err = run_cli("run", "11ad-bulk", "--variant", "x")
    assert rc == 2 and "has no [[variant]] entries" in err
