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
        "fast mode: Ben(fullmesh) mean 0.847 [0.780..0.915], Ben(backup) mean -0.003 [-0.004..-0.003]; "
        "L_11ad 1209, L_11n 51.7 Mbit/s -- fails: Ben(fullmesh), highest run = 0.915 < 0 (always negati"
        "ve)"),
    "000-mtu-sweep": _xfail(
        "fast mode: MTU 1500: full mesh max 797 (mean 791), backup mean 633; MTU 3000: full mesh max 12"
        "07 (mean 1199), backup mean 1170; MTU 4500: full mesh max 1247 (mean 1240), backup mean 1186; "
        "MTU 6000: full mesh max 1240 (mean 1238), backup mean 1167 Mbit/s -- fails: fullmesh max throu"
        "ghput by MTU [1500, 3000, 4500, 6000] rises at every step: [797, 1207, 1247, 1240] Mbit/s; not"
        " at 4500->6000: 1247->1240 backup mean throughput by MTU [1500, 3000, 4500, 6000] rises at eve"
        "ry step: [633, 1170, 1186, 1167] Mbit/s; not at 4500->6000: 1186->1167 MTU 4500: backup mean ="
        " 1186 Mbit/s > full mesh max 1247..."),
    "000-fullmesh-mcs": _xfail(
        "fast mode: MCS 1: gap -42.3, MCS 3: gap -33.3, MCS 5: gap -33.4, MCS 7: gap -34.6, MCS 9: gap "
        "-44.2 Mbit/s (TCP - full mesh) -- fails: MCS 3: full mesh mean = 700 Mbit/s < TCP 667 Mbit/s M"
        "CS 5: full mesh mean = 835 Mbit/s < TCP 802 Mbit/s MCS 7: full mesh mean = 1084 Mbit/s < TCP 1"
        "049 Mbit/s MCS 9: full mesh mean = 1252 Mbit/s < TCP 1208 Mbit/s TCP - full mesh gap by MCS (M"
        "CS > 1) rises at every step: [-33.3, -33.4, -34.6, -44.2] Mbit/s; not at 3->5: -33.3->-33.4; 5"
        "->7: -33.4->-34.6; 7->9: -34.6->-44.2"),
    "000-switchover": None,
    "002-fixedratio": None,
    "002-host": None,
    "002-power": None,
    "002-energy-backlogged": _xfail(
        "fast mode: down: throughput-optimal 73, energy-optimal dual-path 73; up: throughput-optimal 70"
        ", energy-optimal dual-path 90 -- fails: downlink energy-per-bit increase over 11ad alone (frac"
        "tion) = -0.016, paper 0.014 (within 15%: 0.012..0.016)"),
    "002-energy-rate": None,
    "002-backup-power": None,
    "002-energy-aware": None,
    "004-scan": _xfail(
        "fast mode: 11ad during / outside scans: default 807 / 1430, AMuSe-SCAN 1451 / 1413 Mbit/s: 1.8"
        "0x during scans; connection during scans 1453 vs 1030 Mbit/s = 1.41x -- fails: 11ad throughput"
        " during scans, AMuSe-SCAN / default = 1.80 x, paper 2.20 x (within 15%: 1.87..2.53)"),
    "004-contention": _xfail(
        "fast mode: 100: expected 2165, FixedRatio 1913, default 1918; 400: expected 1932, FixedRatio 1"
        "842, default 1796 Mbit/s -- fails: 100 Mbps: default mean = 1918 Mbit/s < FixedRatio 1913 Mbit"
        "/s lowest default / expected sum over the loads = 0.886 < 0.85 (much lower: more than 15% belo"
        "w at some load)"),
    "004-blockage": _xfail(
        "fast mode: 11ad resumes 0.900 s (default, 0.900-0.900) and 0.000 s (AMuSe-BLOCKAGE) after the "
        "link is back; the default's 11ad subflow took 5.00 RTOs over the 5.50 s without a link (backof"
        "f doubling: the retry that finds the link back comes within about one backoff interval, less t"
        "han the outage, so a ~12 s wait needs an outage of ~12 s or more) -- fails: default: delay fro"
        "m link back to the 11ad subflow carrying >= 100 Mbit/s in a 100 ms bin = 0.900 s, paper 12.0 s"
        " (within 15%: 10.2..13.8)"),
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
