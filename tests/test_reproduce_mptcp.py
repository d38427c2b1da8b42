"""`mmpath reproduce` for seed 000's MPTCP section, seeds 002 and 004 and x-musher (MPTCP on the ROG Phone II presets), in
fast mode: each claim's honest result. Claims that fail today are strict xfails with the numbers
measured (fast mode, 2 runs) and why, so a claim that starts passing is noticed (XPASS fails).
"""

from __future__ import annotations

import pytest

from mmpath.reproduce import reproduce


def _xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


EXPECTED = {
    "000-ben": _xfail(
        "fast mode: Ben(fullmesh) mean -0.032 [-0.056..-0.007], Ben(backup) mean -0.003 [-0.004..-0.003"
        "]; L_11ad 1209, L_11n 51.7 Mbit/s -- fails: spread of Ben(fullmesh) (max - min) = 0.049 >= 0.1"
        " (widely spread)"),
    "000-mtu-sweep": _xfail(
        "fast mode: MTU 1500: full mesh max 753 (mean 746), backup mean 633; MTU 3000: full mesh max 10"
        "85 (mean 1076), backup mean 1110; MTU 4500: full mesh max 1162 (mean 1144), backup mean 1179; "
        "MTU 6000: full mesh max 1173 (mean 1162), backup mean 1167 Mbit/s -- fails: backup mean throug"
        "hput by MTU [1500, 3000, 4500, 6000] rises at every step: [633, 1110, 1179, 1167] Mbit/s; not "
        "at 4500->6000: 1179->1167 MTU 3000: full mesh max = 1085 Mbit/s > backup mean 1110 Mbit/s MTU "
        "6000: backup mean = 1167 Mbit/s > full mesh max 1173 Mbit/s"),
    "000-fullmesh-mcs": _xfail(
        "fast mode: MCS 1: gap -41.1, MCS 3: gap -30.3, MCS 5: gap -32.8, MCS 7: gap -11.7, MCS 9: gap "
        "37.9 Mbit/s (TCP - full mesh) -- fails: MCS 3: full mesh mean = 697 Mbit/s < TCP 667 Mbit/s MC"
        "S 5: full mesh mean = 834 Mbit/s < TCP 802 Mbit/s MCS 7: full mesh mean = 1061 Mbit/s < TCP 10"
        "49 Mbit/s TCP - full mesh gap by MCS (MCS > 1) rises at every step: [-30.3, -32.8, -11.7, 37.9"
        "] Mbit/s; not at 3->5: -30.3->-32.8"),
    "000-switchover": None,
    "002-fixedratio": None,
    "002-host": None,
    "002-power": None,
    "002-energy-backlogged": _xfail(
        "fast mode: down: throughput-optimal 73, energy-optimal dual-path 70; up: throughput-optimal 70"
        ", energy-optimal dual-path 90 -- fails: downlink: the energy-optimal dual-path ratio (70) is t"
        "he throughput-optimal one (73); nJ/bit [70:1.42, 73:1.42, 80:1.54, 100:1.43] downlink energy-p"
        "er-bit increase over 11ad alone (fraction) = -0.006, paper 0.014 (within 15%: 0.012..0.016)"),
    "002-energy-rate": None,
    "002-backup-power": None,
    "002-energy-aware": None,
    "004-scan": None,
    "004-contention": _xfail(
        "fast mode: 100: expected 2161, FixedRatio 1917, default 1936; 400: expected 1928, FixedRatio 1"
        "808, default 1807 Mbit/s -- fails: 100 Mbps: default mean = 1936 Mbit/s < FixedRatio 1917 Mbit"
        "/s lowest default / expected sum over the loads = 0.896 < 0.85 (much lower: more than 15% belo"
        "w at some load)"),
    "004-blockage": _xfail(
        "fast mode: 11ad resumes 0.800 s (default, 0.800-0.800) and 0.000 s (AMuSe-BLOCKAGE) after the "
        "link is back -- fails: default: delay from link back to the 11ad subflow carrying >= 100 Mbit/"
        "s in a 100 ms bin = 0.800 s, paper 12.0 s (within 15%: 10.2..13.8)"),
    "x-musher": None,
}


@pytest.fixture(scope="module")
def fast(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce-mptcp") / "out"
    return reproduce(list(EXPECTED), fast=True, out=out)


@pytest.mark.parametrize("cid", [pytest.param(c, marks=m) if m else c for c, m in EXPECTED.items()])
def test_claim(fast, cid):
    v = fast.results[cid].verdict
    detail = "; ".join(c.text for c in v.failed) or "; ".join(v.errors)
    assert v.status == "PASS", f"{cid} {v.status}: {v.mmpath} -- {detail}"


def test_every_claim_evaluated_with_plots(fast):
    for cid, r in fast.results.items():
        assert r.verdict.status in ("PASS", "FAIL"), (cid, r.verdict.errors)
        assert r.verdict.checks and r.claim.criterion
    for exp_id in ("002-fixedratio", "002-host", "002-power", "002-energy-sweep", "002-backup-power",
                   "002-energy-aware", "004-scan", "004-contention", "004-blockage"):
        png = fast.out / f"{exp_id}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", exp_id
