"""Defects found by touring `mmpath analyze` with real testbed logs (netns + veth + tbf, iperf3 -J,
tcpdump, `ss -tinO` with and without -M, an mmpath output folder). Each test failed before its fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import mmpath
from mmpath.analyze import iperf3, ss
from mmpath.analyze.summary import _flow_metrics

FX = Path(__file__).parent / "fixtures"
TOUR = FX / "tour"


# --------------------------------------------------------------------------- iperf3 receiving end


def test_iperf3_receiving_end_has_no_sender_rtt_or_cwnd():
    """An iperf3 -R client (and the reverse streams of --bidir) reports the sender's RTT as 0 or
    as its own receiving socket's handshake RTT (tens of µs); those are not the data sender's."""
    r = iperf3.read(FX / "tcp_reverse" / "client.json")
    f = r.flows[0]
    assert f["sender"] is False
    assert "rtt_ms" not in f and f["max_snd_cwnd"] is None
    assert f["retransmits"] > 0  # the sender's, sent over by iperf3: kept
    b = iperf3.read(FX / "tcp_p2_bidir" / "client.json")
    for f in b.flows:
        if f["sender"]:
            assert f["rtt_ms"]["mean"] > 1.0 and f["max_snd_cwnd"] > 0
        else:
            assert "rtt_ms" not in f and f["max_snd_cwnd"] is None
    a = mmpath.analyze([FX / "tcp_reverse" / "client.json"])
    row = a.summary["flows"][0]
    assert row.get("rtt_ms") is None and "rtt_inflation" not in row


# --------------------------------------------------------------------------- drops at the flow's end


def test_partial_last_bin_is_not_a_throughput_drop():
    """Every flow ended with a 'drop' in its last 0.1 s bin, which only held the few ms of data
    before the test stopped; a drop earlier in the flow is still found."""
    t = np.round(np.arange(0, 3.1, 0.1), 9)
    mbps = np.full(t.size, 20.0)
    mbps[-1] = 0.6  # 3 ms of data in the last bin
    assert _flow_metrics(t, mbps, np.empty(0), 1.0)["drops"] == []
    mbps[20] = 5.0  # a real drop at 2.0 s
    d = _flow_metrics(t, mbps, np.empty(0), 1.0)["drops"]
    assert [x["start_s"] for x in d] == [2.0]


def test_no_end_of_test_drops_on_real_fixtures():
    a = mmpath.analyze([FX / "tcp"])
    for f in a.summary["flows"]:
        last = f["start_s"] + f["duration_s"]
        assert all(d["start_s"] < last - 0.1 for d in f["drops"] or []), (f["source"], f["drops"])


def test_iperf3_sending_end_writes_give_no_outages_or_drops(tmp_path):
    """The sending end's intervals are application writes (steps of the send buffer), which made
    'outages' and 'drops' the capture and the receiver never saw; they are null there, with
    bins_basis = sent, and still computed from the receiving end's report."""
    a = mmpath.analyze([FX / "tcp"], out=tmp_path / "A")
    rows = {f["source"].split("/")[-1]: f for f in a.summary["flows"]}
    cli, srv = rows["client.json"], rows["server.json"]
    assert cli["sender"] and cli["outages"] is None and cli["drops"] is None and cli["bins_basis"] == "sent"
    assert not srv["sender"] and isinstance(srv["outages"], list) and isinstance(srv["drops"], list)
    assert (tmp_path / "A" / "report.html").is_file() and (tmp_path / "A" / "analysis.png").is_file()


# --------------------------------------------------------------------------- ss -M (Netid column)


def test_ss_log_with_mptcp_sockets_is_read():
    """`ss -tinO -M` prints a Netid column (tcp / mptcp) and one line per MPTCP connection; such a
    log was refused as an 'unknown log layout'. Its connection lines give the connection's data
    throughput (snd_una progress), which agrees with iperf3 within a few %."""
    d = TOUR / "mptcp_ss_M"
    s = ss.read(d / "ss.log")
    subs = [f for f in s.flows if f["kind"] == "mptcp-subflow" and f["bytes"] > 100_000]
    conns = [f for f in s.flows if f["kind"] == "mptcp" and f["bytes"] > 100_000]
    assert len(subs) == 2 and len(conns) == 1
    conn = conns[0]
    assert {f["connection"] for f in subs} == {conn["name"]}
    assert conn["name"].startswith("mptcp-") and conn["name"].endswith(":fwd")
    ip = json.loads((d / "client.json").read_text())["end"]["sum_received"]["bits_per_second"] / 1e6
    assert abs(conn["mbps"] - ip) / ip < 0.03, (conn["mbps"], ip)
    # the subflows' data add up to at least the connection's (subflow bytes include reinjections)
    assert sum(f["bytes"] for f in subs) >= 0.97 * conn["bytes"]
    a = mmpath.analyze([d])  # the folder: the log is detected as ss
    kinds = {src["path"].split("/")[-1]: src["kind"] for src in a.summary["sources"]}
    assert kinds == {"client.json": "iperf3", "ss.log": "ss"}
    assert any(c["name"] == conn["name"] and not c["minor"] for c in a.summary["connections"])


# --------------------------------------------------------------------------- clocks


def test_run_folder_beside_captures_starts_at_the_common_origin(small_run):
    """An mmpath run (relative clock) analyzed together with wall-clock logs was placed at Unix
    time 0: a 57-year timeline and plots squeezed to two lines. Its t = 0 is the common origin."""
    _, run = small_run
    a = mmpath.analyze([FX / "tcp" / "ss.log", FX / "tcp" / "client.json", run])
    src = {s["path"]: s for s in a.summary["sources"]}
    ss_log, run_src = src[str(FX / "tcp" / "ss.log")], src[str(run)]
    assert run_src["offset_s"] == pytest.approx(a.summary["origin_unix_s"])
    assert a.summary["origin_unix_s"] > 1e9 and a.summary["duration_s"] < 60
    assert a.intervals["t_s"].max() < 60 and a.timeline["t_s"].max() < 60
    # an explicit --offset still places it anywhere
    b = mmpath.analyze([FX / "tcp" / "ss.log", run], offsets={str(run): a.summary["origin_unix_s"] + 1.0})
    assert {s["path"]: s for s in b.summary["sources"]}[str(run)]["offset_s"] == pytest.approx(
        a.summary["origin_unix_s"] + 1.0)


# --------------------------------------------------------------------------- mmpath output folders


def test_variant_comparison_folder_is_read_run_by_run(small_run, tmp_path):
    """`mmpath run` of a scenario with variants (the bundled default, docs' example
    `mmpath analyze mmpath-out/default`) writes one run folder per variant plus compare.csv/png;
    analyzing that folder was 'folder holds no file the analyzer reads'."""
    from mmpath.analyze.report import _pick_sources

    res, run = small_run
    cmp_ = tmp_path / "default"
    cmp_.mkdir()
    for v in ("a", "b"):
        shutil.copytree(run, cmp_ / v)
    (cmp_ / "compare.csv").write_text("variant,goodput_mbps\na,1\nb,1\n")
    a = mmpath.analyze([cmp_], out=tmp_path / "A")
    assert [(s["path"], s["kind"]) for s in a.summary["sources"]] == [(str(cmp_ / "a"), "run"),
                                                                      (str(cmp_ / "b"), "run")]
    want = res.summary["flows"][0]["goodput_mbps"]
    for v in ("a", "b"):
        f = next(f for f in a.summary["flows"] if f["source"] == str(cmp_ / v))
        assert f["mbps"] == pytest.approx(want, rel=1e-6)
    # every variant's throughput is drawn (not only the first run's)
    assert _pick_sources(a) == [str(cmp_ / "a"), str(cmp_ / "b")]
    assert (tmp_path / "A" / "analysis.png").stat().st_size > 10_000


# --------------------------------------------------------------------------- report and table


def test_report_names_the_capture_of_each_agreement_row_and_shows_rtt(tmp_path):
    """With a capture at each end, the 'iperf3 vs capture' table had two identical-looking rows
    per stream (no capture column), and the flows table had no RTT; the printed table cut an
    IPv4 address pair path to '10.1.0.2-10.1.0.1'[:18]."""
    from mmpath.analyze.summary import format_summary

    a = mmpath.analyze([FX / "tcp"], out=tmp_path / "A")
    page = (tmp_path / "A" / "report.html").read_text()
    agr = page.split("<h2>iperf3 vs capture</h2>")[1].split("</table>")[0]
    assert "<th>capture</th>" in agr and "capture.pcap" in agr and "server.pcap" in agr
    flows = page.split("<h2>Flows</h2>")[1].split("</table>")[0]
    assert "<th>rtt_mean_ms</th>" in flows
    row = dict(a.summary["flows"][0], path="10.71.0.2-10.71.0.1")
    assert "10.71.0.2-10.71.0.1 " in format_summary({**a.summary, "flows": [row]})


def test_iperf3_error_beside_partial_results_is_reported():
    """A test whose server was killed mid-way has intervals and an "error"; the analysis showed
    an empty table with exit 0 and no word of the error."""
    from mmpath.analyze.summary import format_summary

    a = mmpath.analyze([TOUR / "iperf3_server_terminated.json"])
    src = a.summary["sources"][0]
    assert src["error"] == "the server has terminated"
    assert "iperf3 reported an error: the server has terminated" in format_summary(a.summary)
