"""x-pm, the path-manager switchover benchmark (docs/reproduce.md): its cases in the simulator,
its measures and tolerances on made-up bins, and its figure from a made-up runs table. The
kernel's half needs root and real time: tests/test_emu.py runs it in fast mode."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import assert_plots_readable
from mmpath.reproduce import EXPERIMENTS, known_ids
from mmpath.reproduce import xpm
from mmpath.reproduce.registry import Mode
from mmpath.reproduce.runner import ExperimentData


def _bins(**spans) -> np.ndarray:
    """Bytes per 100 ms bin of `edges`: {(from_s, to_s): mbps, ...} given as a dict."""
    t = xpm.edges()[:-1]
    b = np.zeros(len(t))
    for (a, z), mbps in spans["spans"].items():
        b[(t >= a - 1e-9) & (t < z - 1e-9)] = mbps * 1e6 / 8 * xpm.BIN_S
    return b


def test_measures_count_from_the_event_and_the_return():
    primary = _bins(spans={(0.0, 5.0): 90.0, (10.5, 14.0): 90.0, (10.0, 10.5): 20.0})
    backup = _bins(spans={(5.2, 5.4): 10.0, (5.4, 10.6): 50.0})
    m = xpm.measures([primary, backup], [0.05, 0.02], event_s=5.0, back_s=10.0)
    assert m["pre_mbps"] == pytest.approx(90.0)
    assert m[xpm.TAKEOVER] == pytest.approx(0.5)  # the first bin at >= 25 Mbit/s is [5.4, 5.5)
    assert m[xpm.BACK] == pytest.approx(0.6)  # [10.5, 10.6) is the first at >= 45
    assert (m[xpm.FIRST_BACKUP], m[xpm.FIRST_PRIMARY]) == (0.05, 0.02)
    never = xpm.measures([primary, np.zeros_like(backup)], [None, None], 5.0, 10.0)
    assert never[xpm.TAKEOVER] is None and never[xpm.FIRST_BACKUP] is None


def test_tolerances_are_the_criterions():
    assert xpm.agrees(xpm.BACK, 1.0, 1.3)[0], "0.3 s apart: the floor"
    assert not xpm.agrees(xpm.BACK, 1.0, 1.4)[0]
    assert xpm.agrees(xpm.TAKEOVER, 4.0, 4.8)[0], "20 % of 4.8 s is more than 0.3 s"
    assert xpm.agrees(xpm.RECEIVED, 110.0, 100.0)[0] and not xpm.agrees(xpm.RECEIVED, 111.0, 100.0)[0]
    assert not xpm.agrees(xpm.BACK, float("nan"), 1.0)[0]


@pytest.fixture(scope="module")
def simulated():
    """Every case and policy in the simulator (14 s each, ~0.3 s of wall time each)."""
    out = {}
    for p in xpm._points(Mode.make(fast=False)):
        if p.key["engine"] == "simulation":
            m, _ = xpm._measure(xpm._run(p, 1), p, Mode.make(fast=False))
            out[(p.key["case"], p.key["policy"])] = m
    return out


def test_every_case_and_policy_runs_in_the_simulator(simulated):
    assert set(simulated) == {(c, p) for c in xpm.CASES for p in xpm.POLICIES}
    for (case, policy), m in simulated.items():
        # 14 s with outages: wired 100 + 50 Mbit/s; radio ~1.3 Gbit/s 60 GHz + ~150 Mbit/s 5 GHz
        lo, hi = (100, 175) if xpm.CASES[case].setup == "wired" else (900, 2500)
        assert lo < m[xpm.RECEIVED] < hi, (case, policy, m)
        assert all(0 <= m[k] <= xpm.DURATION_S for k in xpm.TIMES), (case, policy, m)


def test_the_radio_policies_act_on_what_the_radio_tells_them(simulated):
    # A 60 GHz link fading below link-aware-backup's leaving signal: its backup carries at once,
    # where the in-kernel path manager waits for the link to go and the transport to notice.
    lab, kern = simulated[("11ad-fade", "link-aware-backup")], simulated[("11ad-fade", "kernel")]
    assert lab[xpm.TAKEOVER] <= 0.2 < 1.0 < kern[xpm.TAKEOVER]
    # A blocked 60 GHz link's return: fast-failback's fresh subflow against the old one's RTO.
    ff, kb = simulated[("11ad-blockage", "fast-failback")], simulated[("11ad-blockage", "kernel")]
    assert ff[xpm.BACK] < kb[xpm.BACK] - 0.5


def test_fast_failback_returns_at_once_where_the_kernels_waits_for_its_backoff(simulated):
    ff, kern = simulated[("cut-drop", "fast-failback")], simulated[("cut-drop", "kernel")]
    assert ff[xpm.BACK] <= xpm.FAILBACK_S and ff[xpm.TAKEOVER] <= xpm.FAILBACK_S
    assert kern[xpm.BACK] > 1.0, "the old subflow's backed-off RTO"
    # A holding outage delivers what the link held at its return: the in-kernel path manager's
    # primary is back within its first bins too.
    assert simulated[("cut-hold", "kernel")][xpm.BACK] < 1.0


def test_a_reset_primary_comes_back_only_with_recreate(simulated):
    """The reset case: the backup takes over at once whatever the policy; only `recreate` opens a
    subflow on the primary again (after its 1 s backoff), the in-kernel path manager never does
    (the time counts as what is left of the run)."""
    case = xpm.CASES["reset"]
    for p in xpm.POLICIES:
        assert simulated[("reset", p)][xpm.TAKEOVER] <= 0.3, p
    assert simulated[("reset", "kernel")][xpm.BACK] == xpm.DURATION_S - case.back_s
    assert 1.0 < simulated[("reset", "recreate")][xpm.BACK] < 1.5
    assert simulated[("reset", "recreate")][xpm.RECEIVED] > simulated[("reset", "kernel")][xpm.RECEIVED] + 20


def test_xpm_figure_is_readable(tmp_path, monkeypatch):
    """x-pm's figure from a made-up runs table (its emulated runs need root and real time)."""
    known_ids()
    exp = EXPERIMENTS["x-pm"]
    t = np.round(xpm.edges()[:-1], 1)
    rows, series = [], []
    for case, policy in xpm.FAST_ROWS:
        for engine, back in (("simulation", 1.9), ("emulation", 2.0)):
            rows.append({"case": case, "policy": policy, "engine": engine, "seed": 1, xpm.TAKEOVER: 0.6,
                         xpm.FIRST_BACKUP: 0.07, xpm.BACK: back, xpm.FIRST_PRIMARY: back - 0.1,
                         xpm.RECEIVED: 120.0, "duplicates": 0.0})
            for name, mbps in (("primary", np.where((t >= 5.0) & (t < 10.0 + back), 0.0, 95.0)),
                               ("backup", np.where((t >= 5.6) & (t < 10.0 + back), 50.0, 0.0))):
                series.append(pd.DataFrame({"case": case, "policy": policy, "engine": engine, "seed": 1,
                                            "t_s": t, "path": name, "mbps": mbps}))
    data = {"x-pm": ExperimentData(experiment=exp, points=exp.points(Mode.make(fast=True)),
                                   runs=pd.DataFrame(rows), series=pd.concat(series, ignore_index=True))}
    assert_plots_readable(data, tmp_path, monkeypatch)


def _iperf3_download(sent: int | None, received: int | None) -> dict:
    """A client's iperf3 -J report of a download (-R) reduced to its end counts."""
    end = {}
    if sent is not None:
        end["sum_sent"] = {"bytes": sent, "sender": False}
    if received is not None:
        end["sum_received"] = {"bytes": received, "sender": False}
    return {"end": end}


def _conn(acked: int, covered: int | None = None, first_hole=None, first_known: bool = True) -> dict:
    """analysis/summary.json's data connection with the analyzer's data_stream."""
    covered = acked if covered is None else covered
    return {"kind": "mptcp", "bytes": acked, "data_stream": {
        "first_known": first_known, "acked_bytes": acked, "covered_bytes": covered,
        "holes": int(covered < acked), "hole_bytes": acked - covered, "first_hole": first_hole}}


def test_an_intact_download_reads_no_more_than_was_acked_nor_acks_more_than_was_sent():
    # the numbers of a real run (cut-drop / fast-failback, 2026-12-06): iperf3 stops counting with
    # 1.2 MB in flight and in the server's buffer and 234 kB data-ACKed but never read
    v = xpm.emu_intact(_iperf3_download(129_229_648, 127_818_000), _conn(128_052_272), 6_291_456)
    assert v[xpm.INTACT] and v[xpm.INTACT_WHY] == "", v
    assert (v[xpm.APP_SENT], v[xpm.APP_RECEIVED], v[xpm.DSN_ACKED], v[xpm.DSN_COVERED]) == (
        129_229_648, 127_818_000, 128_052_272, 128_052_272)


@pytest.mark.parametrize("doc,conn,unread_max,why", [
    # a hole in the data sequence space the receiver data-ACKed: bytes never carried
    (_iperf3_download(1000, 900), _conn(950, 900, [100, 150]), None,
     "50 of the 950 data-ACKed bytes were never carried under a mapping (first hole: bytes 100-150)"),
    # the application read more than arrived in order: a duplicate handed to it (or the capture's tail missing)
    (_iperf3_download(1000, 990), _conn(950), None, "the application read 990 bytes, 40 more than were data-ACKed"),
    (_iperf3_download(900, 890), _conn(950), None, "950 bytes data-ACKed, 50 more than the sender wrote"),
    (_iperf3_download(1000, 100), _conn(950), 500, "850 bytes data-ACKed but never read by the application, "
     "more than the receiver holds (500)"),
    (_iperf3_download(None, 900), _conn(950), None, "iperf3 reported no sender's byte count"),
    (_iperf3_download(1000, 900), None, None, "no data-level stream to check"),
    (_iperf3_download(1000, 900), _conn(950, first_known=False), None, "its first data byte is unknown"),
])
def test_a_stream_not_intact_says_why(doc, conn, unread_max, why):
    v = xpm.emu_intact(doc, conn, unread_max)
    assert not v[xpm.INTACT] and why in v[xpm.INTACT_WHY], v
    dropped = xpm.emu_intact(doc, conn, unread_max, ["primary.pcap: 3 packets dropped by kernel",
                                                     "backup.pcap: 0 packets dropped by kernel"])
    assert dropped[xpm.INTACT_WHY].endswith("(the captures lost packets: primary.pcap: 3 packets dropped by kernel)")


def test_an_upload_leaves_iperf3s_cookie_out_of_the_data_acked():
    v = xpm.emu_intact(_iperf3_download(1000, 990), _conn(1037 + 1), download=False)
    assert not v[xpm.INTACT] and "1001 bytes data-ACKed, 1 more" in v[xpm.INTACT_WHY]
    assert xpm.emu_intact(_iperf3_download(1000, 990), _conn(1037), download=False)[xpm.INTACT]


def test_the_simulators_stream_is_its_own_counts_and_its_oracles_verdict():
    flow = {"name": "dl", "bytes_delivered": 500, "data_sent_bytes": 600, "data_received_bytes": 500}
    ok = {"flows": [flow], "invariants": {"checks": [{"flow": "dl", "check": "mptcp-data-stream", "ok": True}]}}
    assert xpm.sim_intact(ok)[xpm.INTACT]
    # its application takes every in-order byte: one data-ACKed but not delivered is a lost byte
    short = dict(ok, flows=[dict(flow, bytes_delivered=499)])
    assert "1 bytes data-ACKed but never read" in xpm.sim_intact(short)[xpm.INTACT_WHY]
    bad = dict(ok, invariants={"checks": [{"flow": "dl", "check": "mptcp-data-stream", "ok": False,
                                           "detail": "receiver got data [0, 500) once"}]})
    v = xpm.sim_intact(bad)
    assert not v[xpm.INTACT] and v[xpm.INTACT_WHY] == "the oracle: receiver got data [0, 500) once"
    old = {"flows": [{"name": "dl", "bytes_delivered": 500}], "invariants": {"checks": []}}
    assert "rebuild it" in xpm.sim_intact(old)[xpm.INTACT_WHY] and not xpm.sim_intact(old)[xpm.INTACT]


def test_every_simulated_row_has_its_stream_intact(simulated):
    for key, m in simulated.items():
        assert m[xpm.INTACT], (key, m[xpm.INTACT_WHY])
        # the simulator's application gets every byte the receiver has in order
        assert m[xpm.APP_RECEIVED] == m[xpm.DSN_ACKED] == m[xpm.DSN_COVERED] <= m[xpm.APP_SENT], key


def _runs(intact_emu: bool) -> pd.DataFrame:
    rows = []
    for case, policy in xpm.FAST_ROWS:
        for engine in xpm.ENGINES:
            broken = engine == "emulation" and policy == "kernel" and not intact_emu
            rows.append({"case": case, "policy": policy, "engine": engine, "seed": 1, xpm.TAKEOVER: 0.3,
                         xpm.FIRST_BACKUP: 0.05, xpm.BACK: 0.2 if policy != "kernel" else 2.0,
                         xpm.FIRST_PRIMARY: 0.1, xpm.RECEIVED: 120.0, xpm.REINJECTED: 0.5,
                         xpm.INTACT: not broken, xpm.INTACT_WHY: "the application read 990 bytes" if broken else ""})
    return pd.DataFrame(rows)


def test_the_check_fails_a_row_whose_stream_is_not_intact():
    mode = Mode.make(fast=True)
    _, items = xpm._check(_runs(True), mode)
    (whole,) = [c for c in items if c.text.startswith("rows whose application byte stream is intact")]
    assert whole.ok and "2 of 2" in whole.text
    text, items = xpm._check(_runs(False), mode)
    (whole,) = [c for c in items if c.text.startswith("rows whose application byte stream is intact")]
    assert not whole.ok and "cut-drop/kernel (emulation: the application read 990 bytes)" in whole.text
    assert "1 of 2 rows with the application's byte stream intact" in text
    # the agreement verdicts stand as they were: the rows still agree
    assert [c.ok for c in items if c.text.startswith("rows agreeing")] == [True]
    table = xpm.table(_runs(False))
    assert "| yes / **NO** |" in table and "cut-drop / kernel, emulation: stream not intact" in table
