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
        "full mesh is barely below TCP over 11ad: Ben(fullmesh) -0.004 (range -0.005..-0.002 over 3 "
        "runs of 60 s; fast mode similar), always negative but not widely spread; Ben(backup) -0.003 "
        "holds. The model's minRTT seldom uses 11n while 11ad's window has room"),
    "000-mtu-sweep": _xfail(
        "both modes rise with the MTU, but the crossover is reversed in 60 s runs: full mesh 420 / "
        "583 vs backup 605 / 1107 Mbit/s at MTU 1500 / 3000 (head-of-line blocking behind 11n), "
        "equal at 4500 / 6000 (1249 / 1306 vs 1249 / 1309); fast 3 s runs: full mesh ahead at "
        "1500-3000 and also at 4500-6000"),
    "000-fullmesh-mcs": _xfail(
        "full mesh is above TCP at MCS 1 (as in the paper) but also at MCS 2-5 (gaps -5..-1 Mbit/s "
        "in 60 s runs) and below from MCS 6 with a gap rising to 4.9 Mbit/s at MCS 9, far smaller "
        "than the paper's"),
    "000-switchover": None,
    "002-fixedratio": _xfail(
        "downlink SPTCP over 11ad is 438 Mbit/s (paper 1600): host-limited TCP download stalls in "
        "RTOs every ~0.3 s (retransmissions dropped at the AP's full drop-tail queue are only "
        "recovered by the RTO in the TCP model); downlink FixedRatio 73:27 1728 vs 2200 (fast, 3 s "
        "with slow start). Holds: uplink 11ad 1443 vs 1450, 11ac 546/542 vs 600, uplink 70:30 1770 "
        "vs 2050, one peak at 70 (down) / 73 (up)"),
    "002-host": _xfail(
        "caps derived from seed 002 (LITTLE 2000, big 2150, GRO off 1810 Mbit/s) but the downlink TCP "
        "RTO stalls (host-limited 11ad downloads, fixed on another branch) keep 3 s runs below them: "
        "GRO off 1763 / GRO on 1850 / big 1826 Mbit/s; big is under its 1828 floor and not above GRO on"),
    "002-power": _xfail(
        "11ac Rx 1099 / Tx 2798, 11ad Tx 1516 mW hold (paper 1100 / 2800 / 1600); 11ad Rx 896 vs 2200 mW "
        "because the downlink RTO stalls leave the 11ad radio idle most of the time (440 Mbit/s); MPTCP "
        "uplink 4265 vs downlink 3063 mW = +39% (paper +56%: the paper's own per-radio figures sum to +33%)"),
    "002-energy-backlogged": _xfail(
        "downlink: 73 is both throughput- and energy-optimal among dual-path ratios (holds); gain / cost "
        "over 100:0 are +316% / -26% (paper +32% / +1.4%) because 11ad alone downloads at ~445 Mbit/s (RTO "
        "stalls); uplink energy-optimal dual-path 90 holds (nJ/bit 70:2.41, 80:2.13, 90:1.96), but the "
        "uplink throughput peak of the 3 s fast sweep (70, 80, 90, 100) is at 80, not 70"),
    "002-energy-rate": _xfail(
        "holds: 500 down -> 0:100, 500 up and 1400 up -> 100:0. Fails: down 1750 -> 73 (66:34 carries "
        "only 1566 Mbit/s: the 11ac model tops out at ~546, not 600 Mbit/s); down 1500 -> 90 (11ad alone "
        "445 Mbit/s, RTO stalls); up 1750 -> 90 (83:17 carries 1657 in 3 s runs)"),
    "002-backup-power": None,
    "002-energy-aware": _xfail(
        "7 of 8 classes within 5 points (backlogged 73 / 71, up 1750 83, 1500 / 1400 100, 500 0 / 100); "
        "down 1750 settles at 71.5 vs 66: the scheduler learns that 11ac carries ~530 Mbit/s, not 600, "
        "and fills it to that"),
    "004-scan": _xfail(
        "AMuSe-SCAN does not keep the 11ad throughput during scans: the model's scans come "
        "unannounced, so AMuSe can only reclaim the 11ac subflow's unsent data; what is already in "
        "flight on 11ac waits out the scan and head-of-line blocks the receiver, and 11ad stalls "
        "too (AMuSe's arbitration, delaying the scan until the 11ac queue drains, is not modelled). "
        "Fast: 11ad during / outside scans default 492 / 857, AMuSe-SCAN 332 / 1337 Mbit/s; "
        "connection during scans AMuSe / default 340 / 502 = 0.68x (paper 2.2x)"),
    "004-contention": _xfail(
        "the expected sum is built on SPTCP 11ad download, which the TCP model's RTO stalls cut to "
        "~440 Mbit/s, so FixedRatio (1648 / 1713 Mbit/s at 100 / 400 Mbps) is far above it, and the "
        "default is never < 85% of it; FixedRatio > default holds at every load (1056 / 1649)"),
    "004-blockage": _xfail(
        "default (minRTT, v0.9x) resumes 11ad 3.1 s after the link is back on average (0-6.2 s "
        "over runs; paper ~12 s): with a 5 s blockage the backed-off RTO fires within a few s of "
        "the link's return; AMuSe-BLOCKAGE resumes at once (0 s < 1 s holds)"),
    "x-musher": _xfail(
        "MuSher beats default at 100 Mbps contention (1765 vs 1056 Mbit/s, 1.67x) and after the "
        "blockage (resumes at once vs 3.1 s) but not at 400 Mbps (1053 vs 1649 Mbit/s)"),
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
