"""`mmpath reproduce`: the framework (claim table, files, exit codes, unknown ids, determinism) and,
in fast mode (2 runs per point, 3 s scenarios), every claim's honest result.

Claims that fail today are marked xfail(strict=True) with the numbers measured and why, so the
suite stays green while they fail and a claim that starts passing is noticed (XPASS fails).
"""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import assert_one_line_error
from mmpath.reproduce import CLAIMS, Mode, UnknownClaim, known_ids, reproduce, select
from mmpath.reproduce import registry, runner
from mmpath.reproduce.registry import Check, Claim, Experiment, Point


@pytest.fixture(scope="session")
def fast(tmp_path_factory):
    """Every claim in fast mode, with its output folder (a few seconds on 2 cores)."""
    out = tmp_path_factory.mktemp("reproduce") / "out"
    return reproduce(list(EXPECTED), fast=True, out=out)


# --------------------------------------------------------------------------- each claim, honestly


def _xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# Measured in fast mode on the core of commit cd9ae26 (wil6210 A-MPDU limits, Panasonic receiver
# 8 dB above the minimum, channel over time, commodity rate adaptation, interferers with the
# model's default geometry: sensed 0.5 / 0, 20 dB adjacent-channel rejection, equal power).
EXPECTED = {
    "000-mcs": None,
    "000-udp1500": None,
    "000-tcp1500": None,
    "000-mtu7912": _xfail(
        "TCP at MCS 6 reaches 1029 Mbit/s (paper: above 1 Gbps only from MCS 7); the rest holds: "
        "monotonic, UDP > 1 Gbps exactly from MCS 6, TCP MCS 9 1392 vs 1316 Mbit/s"),
    "000-weak7912": _xfail(
        "weak-signal TCP is not degraded at MCS 8 (weak/strong 0.999: 1327 vs 1328 Mbit/s) and only "
        "by 11 % at MCS 9 (0.894; paper: significantly degraded from MCS 8, read as < 0.85): the "
        "receiver 8 dB above the standard's minimum keeps MCS 8 clean at -65..-69 dBm"),
    "000-interf": _xfail(
        "ACI has no effect (normalized 1.00 at every MCS, 1576/1665 Mbit/s at MCS 8/9 vs the paper's "
        "~1000, no loss vs ~1 %): an equal-power interferer 20 dB down leaves > 20 dB of SINR; CCI "
        "is 0.67 already at MCS 1 (airtime shared with a half-sensed saturated link; paper >= 0.8) "
        "and its worst loss is 0.35 % (paper ~5 %). CCI < ACI at every MCS and CCI < 1 Gbps hold"),
    "000-concurrent": _xfail(
        "link 2 keeps all its UDP and TCP throughput under ACI (share 1.00; paper 1/2) and gets 0.335 "
        "of its UDP under CCI (paper 1/4, 0.21-0.29 with 15 %); TCP 0.28 < UDP 0.335 under CCI holds"),
    "000-outage": None,
    "001-distance": _xfail(
        "PHY rate decays smoothly instead of in three regions: 3352 Mbit/s at 30 ft (paper 1317-2935), "
        "1085 and 828 at 110 and 130 ft (below that range), 130 ft std only 63; std 113 and 154 at "
        "145 and 155 ft (paper: stable); TCP still 30 Mbit/s at 165 ft (paper: link broken beyond "
        "155 ft; the per-run 3 dB shadowing keeps some runs up)"),
    "001-tcp": _xfail(
        "TCP falls below the paper's 200-750 Mbit/s at 110 and 130 ft (167, 95) and no session holds "
        "a PHY rate of 1500-2500 Mbit/s for 75 % of the time (ARF oscillates within each run), so "
        "the paper's 'intermediate rates give widely varying TCP' cannot be shown"),
    # Seed 003, measured in fast mode on branch bbr (BBRv1 + internal pacing; wil6210-dock at 3 m,
    # MTU 1500, 10 GbE backbone).
    "003-los": _xfail(
        "no Cubic drop >= 34 % at all on the static 3 m link (the rate adaptation holds the top MCS); "
        "Vegas gets 6.76x less than Cubic (paper 5x, 4.25..5.75) with 6.10x lower mean RTT (paper 8x, "
        "6.8..9.2): 1216 vs 180 Mbit/s, 9.29 vs 1.53 ms"),
    "003-buffers": None,
    "003-probertt": None,
    "003-blockage": _xfail(
        "after the 5 s blockage Cubic's cwnd is back to 0.66 of its pre-outage mean 5 s after the link "
        "returns (criterion < 0.5), although its throughput takes 29.5 s to re-saturate; the rest holds: "
        "Cubic 25.2 s after 1 s (> 17 s), BBR 2.25 s and 7.75 s, below Cubic"),
}


def test_expectations_cover_every_claim():
    from test_reproduce_mptcp import EXPECTED as MPTCP  # seeds 002 / 004 (their own fast run)

    assert sorted(list(EXPECTED) + list(MPTCP)) == sorted(known_ids())


@pytest.mark.parametrize("cid", [pytest.param(c, marks=m) if m else c for c, m in EXPECTED.items()])
def test_claim(fast, cid):
    v = fast.results[cid].verdict
    detail = "; ".join(c.text for c in v.failed) or "; ".join(v.errors)
    assert v.status == "PASS", f"{cid} {v.status}: {v.mmpath} -- {detail}"


# --------------------------------------------------------------------------- the framework


def test_every_claim_has_a_row_with_its_criterion(fast):
    assert list(fast.results) == list(EXPECTED)
    for cid, r in fast.results.items():
        assert r.claim.claim and r.claim.paper and r.claim.criterion
        assert r.verdict.status in ("PASS", "FAIL", "ERROR")
        assert r.verdict.mmpath
        if r.verdict.status == "ERROR":
            assert r.verdict.errors
        else:
            assert r.verdict.checks, cid
            assert (r.verdict.status == "PASS") == all(c.ok for c in r.verdict.checks)
    claims = pd.read_csv(fast.out / "claims.csv")
    assert list(claims["id"]) == list(EXPECTED)
    assert {"id", "claim", "paper", "mmpath", "criterion", "result"} <= set(claims.columns)
    assert list(claims["result"]) == [r.verdict.status for r in fast.results.values()]


def test_criteria_print_their_tolerance(fast):
    """A number from the paper is compared within 15 %: the printed check says so."""
    texts = [c.text for r in fast.results.values() for c in r.verdict.checks]
    assert any("within 15%" in t for t in texts)
    assert "15%" in CLAIMS["000-mtu7912"].criterion


def test_report_files(fast):
    out = fast.out
    md = (out / "report.md").read_text()
    assert "| id | claim | paper | mmpath | criterion | result |" in md
    for cid in EXPECTED:
        assert f"| {cid} |" in md
    assert "<table>" in (out / "report.html").read_text()
    for exp_id, d in fast.data.items():
        if len(d.runs):
            png = out / f"{exp_id}.png"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", exp_id
            assert png.name in md


def test_runs_table_parquet_and_csv(fast):
    runs = pd.read_parquet(fast.out / "000-mcs.parquet")
    assert len(runs) == 72 * 2  # MCS 1-9 x MTU 2 x signal 2 x TCP/UDP, 2 runs each
    assert set(runs["seed"]) == {1, 2}
    assert {"mtu", "signal", "proto", "mcs", "seed", "goodput_mbps", "invariants_ok"} <= set(runs.columns)
    assert runs["invariants_ok"].all()
    csv = pd.read_csv(fast.out / "000-mcs.csv")
    assert len(csv) == len(runs)
    assert (fast.out / "000-outage-series.parquet").exists()  # the Fig. 9 timelines


def test_runs_are_deterministic(fast):
    again = reproduce(["000-outage"], fast=True)
    a = fast.data["000-outage"].runs.drop(columns="wall_s")
    b = again.data["000-outage"].runs.drop(columns="wall_s")
    pd.testing.assert_frame_equal(a, b)


def test_modes():
    assert (Mode.make().runs, Mode.make().duration_s) == (10, 10.0)
    assert (Mode.make(fast=True).runs, Mode.make(fast=True).duration_s) == (2, 3.0)
    assert Mode.make(runs=4).seeds == [1, 2, 3, 4]


def test_select_and_plan():
    assert [c.id for c in select(["all"])] == known_ids()
    assert [c.id for c in select(["001-tcp", "000-mtu7912"])] == ["000-mtu7912", "001-tcp"]
    with pytest.raises(UnknownClaim, match="000-mcs"):
        select(["000-nope"])
    # A claim runs only the points it needs: MTU 7912, strong, TCP and UDP, MCS 1-9.
    todo = runner.plan(select(["000-mtu7912"]), Mode.make(fast=True))
    assert list(todo) == ["000-mcs"]
    assert len(todo["000-mcs"]) == 18
    assert {(p.key["mtu"], p.key["signal"]) for p in todo["000-mcs"]} == {(7912, "strong")}
    # Two claims of one experiment share its points.
    todo = runner.plan(select(["001-distance", "001-tcp"]), Mode.make(fast=True))
    assert len(todo["001-distance"]) == len(set(p.label for p in todo["001-distance"]))


# --------------------------------------------------------------------------- the command line


def test_unknown_id_exits_2_with_the_known_ids(run_cli):
    rc, out, err = run_cli("reproduce", "000-mcs", "000-nope")
    assert rc == 2
    assert out == ""
    assert_one_line_error(err, "000-nope", "000-mcs", "001-tcp")


def test_bad_runs_exits_2(run_cli):
    rc, _, err = run_cli("reproduce", "000-outage", "--runs", "0")
    assert rc == 2
    assert "--runs" in err


def test_list(run_cli):
    rc, out, _ = run_cli("reproduce", "--list")
    assert rc == 0
    assert [line.split()[0] for line in out.splitlines()] == known_ids()


def _outage_claim(cid: str, ok: bool) -> Claim:
    return Claim(id=cid, experiment="000-outage", claim="test claim", paper="test paper",
                 criterion="always holds" if ok else "never holds",
                 check=lambda runs, mode: (f"{len(runs)} runs", [Check("the test criterion", ok)]))


@pytest.fixture
def test_claims(monkeypatch):
    """Claims with a known outcome (on the real 000-outage runs, or a scenario the core rejects),
    so the exit codes are tested whatever the model's current results."""
    known_ids()  # the seed modules are loaded before the registry is patched
    bad = Experiment(id="test-bad", paper="000", title="rejected", figure="none",
                     points=lambda mode: [Point({"x": 1}, {"duration_s": 1.0, "no_such_field": 1,
                                                          "path": [{"rate_mbps": 10.0}], "flow": [{}]})],
                     measure=lambda res, point, mode: {})
    monkeypatch.setitem(registry.EXPERIMENTS, "test-bad", bad)
    monkeypatch.setitem(registry.CLAIMS, "test-pass", _outage_claim("test-pass", True))
    monkeypatch.setitem(registry.CLAIMS, "test-fail", _outage_claim("test-fail", False))
    monkeypatch.setitem(registry.CLAIMS, "test-error", Claim(
        id="test-error", experiment="test-bad", claim="c", paper="p", criterion="k",
        check=lambda runs, mode: ("", [Check("x", True)])))


def test_exit_codes_follow_the_verdicts(run_cli, test_claims, tmp_path):
    rc, out, _ = run_cli("reproduce", "test-pass", "--fast", "--no-progress", "--out", tmp_path / "p")
    assert rc == 0
    assert "test-pass  PASS" in out
    assert (tmp_path / "p" / "report.md").exists()
    rc, out, _ = run_cli("reproduce", "test-pass", "test-fail", "--fast", "--runs", "1", "--out", tmp_path / "f")
    assert rc == 1
    assert "test-fail  FAIL" in out and "the test criterion" in out
    assert "1 PASS, 1 FAIL" in out
    rc, out, _ = run_cli("reproduce", "test-error", "--fast", "--out", tmp_path / "e")
    assert rc == 1
    assert "test-error  ERROR" in out and "no_such_field" in out
