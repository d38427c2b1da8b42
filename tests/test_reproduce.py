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
        "fast mode: weak/strong TCP mean MCS 1-9: 1.00, 1.00, 0.997, 0.991, 0.956, 0.983, 0.956, 0.911, 0"
        ".682; weak UDP MCS 1-9: 345, 644, 778, 900, 926, 1119, 1290, 1404, 1221 Mbit/s -- fails: TCP MCS"
        " 8 weak/strong mean (1129/1240) = 0.911 < 0.85 (degraded by more than 15%)"),
    "000-interf": _xfail(
        "fast mode: normalized mean MCS 1-9: ACI 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.000, 0.999; "
        "CCI 0.003, 0.066, 0.124, 0.163, 0.177, 0.206, 0.232, 0.244, 0.246; worst loss ACI 0.000 %, CCI 9"
        "4.7 % -- fails: ACI MCS 6 normalized mean = 1.00 < 0.800 ACI MCS 7 normalized mean = 1.00 < 0.80"
        "0 ACI MCS 8 normalized mean = 1.000 < 0.800 ACI MCS 9 normalized mean = 0.999 < 0.800 CCI MCS 1 "
        "normalized mean = 0.003 >= 0.800 ACI MCS 8 UDP mean = 1531 Mbit/s, paper 1000 Mbit/s (within 15%"
        ": 850..1150) ACI MCS 9 UDP mean = 1617 Mbit/s, paper 1000 Mbit/s (within 15%: 850..1150) CCI lar"
        "gest lost-packet share (any MCS, any run) = 94.7 %, paper's range 2.50..7.50 % (criteria review "
        "2026-12-05)"),
    "000-concurrent": _xfail(
        "fast mode: link 2 share of its interference-free mean: UDP ACI 1.00, CCI 0.247; TCP ACI 1.00, CC"
        "I 0.008 -- fails: UDP link 2 ACI / interference-free mean = 1.00, paper 0.500 (within 15%: 0.425"
        "..0.575) ACI: TCP link 2 share = 1.00 < UDP share 1.00"),
    "000-outage": None,
    "001-distance": _xfail(
        "fast mode: PHY mean (std) Mbit/s: 2 ft 3850 (0.000), 10 ft 3815 (1.81), 20 ft 3462 (12.7), 30 ft"
        " 2951 (17.2), 50 ft 2424 (0.904), 80 ft 2023 (13.6), 110 ft 1631 (1.81), 130 ft 1388 (34.4), 145"
        " ft 1214 (7.24), 155 ft 1154 (11.8), 165 ft 1096 (23.5); region RSSI -49.6/-61.8/-65.8 dBm -- fa"
        "ils: 30 ft PHY mean = 2951 Mbit/s, paper's range 1317..2935 Mbit/s 30 ft PHY std = 17.2 Mbit/s >"
        "= 10% of the mean (large) 50 ft PHY std = 0.904 Mbit/s >= 10% of the mean (large) 80 ft PHY std "
        "= 13.6 Mbit/s >= 10% of the mean (large) 110 ft PHY std = 1.81 Mbit/s >= 10% of the mean (large)"
        " 130 ft PHY std = 34.4 Mbit/s >= 10% of the mean (large) 165 ft TCP mean (link broken) = 188 Mbi"
        "t/s < 1.00 Mbit/s..."),
    "001-tcp": _xfail(
        "fast mode: TCP mean (std) Mbit/s: 2 ft 929 (0.666), 10 ft 923 (8.96), 20 ft 796 (15.5), 30 ft 79"
        "8 (40.8), 50 ft 662 (11.5), 80 ft 359 (0.341), 110 ft 249 (52.5), 130 ft 248 (3.84), 145 ft 221 "
        "(20.6), 155 ft 219 (8.18); sessions by held PHY rate: >=3000 n=4 mean 926, 1500-2500 n=0 n/a-n/a"
        ", <1500 n=0 mean n/a -- fails: 50 ft TCP std = 11.5 Mbit/s >= 10% of the mean (large) 80 ft TCP "
        "std = 0.341 Mbit/s >= 10% of the mean (large) 130 ft TCP std = 3.84 Mbit/s >= 10% of the mean (l"
        "arge) sessions holding a PHY rate of 1500-2500 more than 75% of the time: 0 of 2 sessions holdin"
        "g a PHY rate < 1500 more than 75% of the time: 0 of 1 TCP spread (max-min) of sessions at PHY 15"
        "00-2500 = n/a >= 468 (the pa..."),
    "003-los": _xfail(
        "fast mode: base RTT 1 ms: Cubic 1300 Mbit/s, mean RTT 19.1 ms, 0 drop(s) >= 34 % (longest 0.00"
        "0 s, deepest 0.000); Vegas 305 Mbit/s, 1.50 ms: 4.27x less throughput, 12.7x lower RTT -- fail"
        "s: Cubic drops of >= 34 % (40 % less 15 %) below the 1 s mean that recover within the run, ove"
        "r all runs = 0.000 >= 1.00 Cubic / Vegas mean RTT = 12.7 x, paper 8.00 x (within 15%: 6.80..9."
        "20); the wil6210 4.10 driver's 4096-descriptor ring and 4000-packet qdisc let Cubic fill the "
        "3 MB receive window (docs/models.md \"Why the 1 ms LoS Cubic never dips\")"),
    "003-buffers": None,
    "003-probertt": None,
    "003-blockage": _xfail(
        "fast mode: 1 s blockage: re-saturated after Cubic 1.15 s, BBR 1.25 s, Reno 33.5 s, Vegas 33.5 s;"
        " 5 s blockage: re-saturated after Cubic 3.80 s, BBR 4.40 s, Reno 29.5 s, Vegas 29.5 s; 5 s block"
        "age: PHY back after 0.000 s, Cubic's mean cwnd over the 5 s after 0.199 of its pre-outage mean -"
        "- fails: 1 s blockage: Cubic time to re-saturate = 1.15 s > 17.0 s (20 s less 15 %) 1 s blockage"
        ": BBR time to re-saturate = 1.25 s < Cubic's 1.15 s 5 s blockage: BBR time to re-saturate = 4.40"
        " s < Cubic's 3.80 s; it passed with the AP's 1000-frame queue and with the 2014 driver's 512 / 1"
        "000 before sk_pacing_rate counted packets_out (docs/models.md \"Driver transmit ring\"; not re-mea"
        "sured since); sk_pacing_rate counting max(cwnd, packets_out) (tcp_update_pacing_rate) took Cubic "
        "from 2.25 / 4.95 s to 1.15 / 3.80 s, below BBR's 1.25 / 4.40 (docs/models.md, Pacing)"),
}


def test_expectations_cover_every_claim():
    from test_reproduce_mptcp import EXPECTED as MPTCP  # seeds 002 / 004 (their own fast run)

    # x-kernel compares with a real-time emulation on this kernel, whose outcome varies from run
    # to run: tests/test_emu.py runs it and checks what it measured, not its verdict.
    assert sorted(list(EXPECTED) + list(MPTCP) + ["x-kernel"]) == sorted(known_ids())


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
