"""`mmpath reproduce`: the framework (claim table, files, exit codes, unknown ids, determinism) and,
in fast mode (2 runs per point, 3 s scenarios), every claim's honest result.

Claims that fail today are marked xfail(strict=True) with the numbers measured and why, so the
suite stays green while they fail and a claim that starts passing is noticed (XPASS fails).
"""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import assert_one_line_error, assert_plots_readable
from conftest import claim_checks_hold as _held
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


# Each failing claim's reason is what the fast run printed (mmpath's numbers and the checks that
# failed), regenerated from `mmpath reproduce all --fast` after the model changes (RACK, TSQ,
# MPTCP, address mesh, host, interference, energy); docs/reproduce.md and the closing notes explain the causes.
EXPECTED = {
    "000-mcs": None,
    "000-udp1500": None,
    "000-tcp1500": None,
    "000-mtu7912": None,
    "000-weak7912": _xfail(
        "fast mode: weak/strong TCP mean MCS 1-9: 1.00, 1.00, 0.997, 0.991, 0.956, 0.983, 0.956, 0.911, 0.6"
        "78; weak UDP MCS 1-9: 345, 644, 778, 900, 926, 1119, 1290, 1404, 1221 Mbit/s -- fails: TCP MCS 8 w"
        "eak/strong mean (1129/1240) = 0.911 < 0.85 (degraded by more than 15%)"),
    "000-interf": _xfail(
        "fast mode: normalized mean MCS 1-9: ACI 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.000, 0.999; CC"
        "I 0.003, 0.066, 0.124, 0.163, 0.177, 0.206, 0.232, 0.244, 0.246; worst loss ACI 0.000 %, CCI 94.7 "
        "% -- fails: ACI MCS 6 normalized mean = 1.00 < 0.800 ACI MCS 7 normalized mean = 1.00 < 0.800 ACI "
        "MCS 8 normalized mean = 1.000 < 0.800 ACI MCS 9 normalized mean = 0.999 < 0.800 CCI MCS 1 normaliz"
        "ed mean = 0.003 >= 0.800 ACI MCS 8 UDP mean = 1531 Mbit/s, paper 1000 Mbit/s (within 15%: 850..115"
        "0) ACI MCS 9 UDP mean = 1617 Mbit/s, paper 1000 Mbit/s (within 15%: 850..1150) CCI largest lost-pa"
        "cket share (any MCS, any run) = 94.7 %, paper's range 2.50..7.50 %"),
    "000-concurrent": _xfail(
        "fast mode: link 2 share of its interference-free mean: UDP ACI 1.00, CCI 0.362; TCP ACI 0.999, CCI"
        " 0.588 (link 1's under CCI: UDP 0.193, TCP 0.351) -- fails: UDP link 2 ACI / interference-free mea"
        "n = 1.00, paper 0.500 (within 15%: 0.425..0.575) UDP link 2 CCI / interference-free mean = 0.362, "
        "paper 0.250 (within 15%: 0.212..0.287) CCI: TCP link 2 share = 0.588 < UDP share 0.362"),
    "000-outage": None,
    "001-distance": _xfail(
        "fast mode: PHY mean (std) Mbit/s: 2 ft 3850 (0.000), 10 ft 3850 (0.000), 20 ft 2695 (544), 30 ft 2"
        "310 (0.000), 50 ft 2118 (272), 80 ft 1348 (817), 110 ft 936 (235), 130 ft 770 (0.000), 145 ft 770 "
        "(0.000), 155 ft 578 (272), 165 ft 578 (272); region RSSI -49.6/-61.8/-65.9 dBm -- fails: 20 ft PHY"
        " mean = 2695 Mbit/s >= 3080 (a top rate) 20 ft PHY std = 544 Mbit/s <= 5% of the mean (stable) 30 "
        "ft PHY std = 0.000 Mbit/s >= 10% of the mean (large) 110 ft PHY mean = 936 Mbit/s, paper's range 1"
        "317..2935 Mbit/s 130 ft PHY mean = 770 Mbit/s, paper's range 1317..2935 Mbit/s 130 ft PHY std = 0."
        "000 Mbit/s >= 10% of the mean (large) 155 ft PHY std = 272 Mbit/s <= 5% of the mean (stable) 165 f"
        "t TCP mean (link broken) = 373 Mbit/s < 1.00 Mbit/s; the rate is set per session (docs/models.md \""
        "Seed 001: why the PHY rate varies between sessions\")"),
    "001-tcp": _xfail(
        "fast mode: TCP mean (std) Mbit/s: 2 ft 930 (0.912), 10 ft 930 (0.636), 20 ft 904 (36.4), 30 ft 930"
        " (0.309), 50 ft 926 (2.57), 80 ft 637 (163), 110 ft 486 (45.6), 130 ft 512 (0.773), 145 ft 498 (7."
        "00), 155 ft 389 (131); sessions by held PHY rate: >=3000 n=5 mean 919, 1500-2500 n=6 752-930, <150"
        "0 n=8 mean 479 -- fails: 50 ft TCP mean = 926 Mbit/s, paper's range 200..750 Mbit/s 50 ft TCP std "
        "= 2.57 Mbit/s >= 10% of the mean (large) 110 ft TCP std = 45.6 Mbit/s >= 10% of the mean (large) 1"
        "30 ft TCP std = 0.773 Mbit/s >= 10% of the mean (large) TCP spread (max-min) of sessions at PHY 15"
        "00-2500 = 178 Mbit/s >= 468 (the paper's 200-750 span less 15%)"),
    "003-los": _xfail(
        "fast mode: base RTT 1 ms: Cubic 1336 Mbit/s, mean RTT 13.1 ms, 0 drop(s) >= 34 % (longest 0.000 s,"
        " deepest 0.000); Vegas 330 Mbit/s, 1.30 ms: 4.04x less throughput, 10.1x lower RTT -- fails: Cubic"
        " drops of >= 34 % (40 % less 15 %) below the 1 s mean that recover within the run, over all runs ="
        " 0.000 >= 1.00 Cubic / Vegas mean goodput = 4.04 x, paper 5.00 x (within 15%: 4.25..5.75) Cubic / "
        "Vegas mean RTT = 10.1 x, paper 8.00 x (within 15%: 6.80..9.20); with the X10's own 1024-descriptor"
        " ring and fq_codel and GRO at the laptop, no mechanism of a static LoS link makes Cubic dip (docs/"
        "models.md \"Why the 1 ms LoS Cubic never dips\")"),
    "003-buffers": None,
    "003-probertt": None,
    "003-blockage": None,
}


def test_expectations_cover_every_claim():
    from test_reproduce_mptcp import EXPECTED as MPTCP  # seeds 002 / 004 (their own fast run)

    # x-kernel compares with a real-time emulation on this kernel, whose outcome varies from run
    # to run: tests/test_emu.py runs it and checks what it measured, not its verdict.
    assert sorted(list(EXPECTED) + list(MPTCP) + ["x-kernel", "x-pm"]) == sorted(known_ids())


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


def test_figures_are_readable(fast, tmp_path, monkeypatch):
    """Each experiment's figure: its title names the experiment and its claims, every panel is
    labelled, no legend covers data (plotting.problems)."""
    assert_plots_readable(fast.data, tmp_path, monkeypatch)


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


# --------------------------------------------------------------------------- guards against dead runs
# The real fast-run tables, altered to what a dead or stalled run records: each guard must hold on
# the real data and fail on the altered one.




def test_distance_guard_fails_a_session_that_lost_its_link(fast):
    runs = fast.data["001-distance"].runs
    mode = Mode.make(fast=True)
    assert _held("001-distance", runs, mode, "with the link up")
    lost = runs.copy()
    lost.loc[lost.index[lost["distance_ft"] == 80][0], "link_up_frac"] = 0.3
    assert not _held("001-distance", lost, mode, "with the link up")


def test_blockage_guard_fails_a_cubic_flow_that_never_resumes(fast):
    runs = fast.data["003-blockage"].runs
    mode = Mode.make(fast=True)
    assert _held("003-blockage", runs, mode, "carries traffic again")
    stalled = runs.copy()
    stalled.loc[stalled["cc"] == "cubic", "resumed"] = False
    assert not _held("003-blockage", stalled, mode, "carries traffic again")


def test_probertt_counts_dips_in_every_run(fast):
    runs = fast.data["003-steady"].runs
    mode = Mode.make(fast=True)
    assert _held("003-probertt", runs, mode, "fewest in any run")
    b = runs.index[(runs["cc"] == "bbr") & (runs["rtt_ms"] == 1.0)]
    uneven = runs.copy()
    uneven.loc[b[0], "drops"] = 0  # one run without dips, the other with extra: the mean would pass
    uneven.loc[b[1], "drops"] = 2 * int(runs.loc[b[1], "drops"]) + 2
    assert not _held("003-probertt", uneven, mode, "fewest in any run")


def test_xkernel_reports_the_kernels_pacing_ratios_beside_the_simulators():
    # The simulator has tcp_pacing_ss_ratio / tcp_pacing_ca_ratio as constants (no scenario knob):
    # the battery reads the emulating kernel's (Linux >= 4.1 has them) to show a host that differs.
    from pathlib import Path

    from mmpath.reproduce.xkernel_rows import SIMULATOR_KNOBS, host_knobs

    k = host_knobs()
    for name in ("tcp_pacing_ss_ratio", "tcp_pacing_ca_ratio"):
        proc = Path(f"/proc/sys/net/ipv4/{name}")
        want = [int(proc.read_text())] if proc.exists() else None
        assert k[name] == want, (name, k[name])
    assert "tcp_pacing_ss_ratio 200, tcp_pacing_ca_ratio 120" in SIMULATOR_KNOBS


def test_xkernel_times_a_whole_tolerance_apart_agree():
    """The battery's times are whole 100 ms bins: a difference of exactly the 0.3 s floor is
    "within 0.3 s", whatever binary floating point makes of 0.6 - 0.3; a bin more is not."""
    from mmpath.reproduce.xkernel import _agrees
    from mmpath.reproduce.xkernel_rows import OUTAGE

    assert 0.6000000000000001 - 0.3 > 0.3  # the arithmetic the slack is for
    assert _agrees(OUTAGE, 0.3, 0.6000000000000001)[0]
    assert _agrees(OUTAGE, 0.30000000000000004, 0.6)[0]
    assert not _agrees(OUTAGE, 0.3, 0.7000000000000001)[0]
    assert not _agrees(OUTAGE, 0.2, 0.6)[0]
