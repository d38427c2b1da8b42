"""The output folder: every file exists, parses, and agrees with summary.json."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import mmpath
from mmpath.errors import OutputError



def _strict_json(path):
    def no_constants(name):  # NaN / Infinity are not JSON
        raise AssertionError(f"{path.name} contains {name}")

    return json.loads(path.read_text(), parse_constant=no_constants)


def test_all_files_exist(small_run):
    _, out = small_run
    for name in ("summary.json", "intervals.csv", "timeline.parquet", "iperf3.json", "report.html"):
        assert (out / name).is_file(), name
    # No temporary folder left beside the output.
    assert not [p for p in out.parent.iterdir() if ".tmp-" in p.name]


def test_summary_json_is_strict_json(small_run):
    res, out = small_run
    doc = _strict_json(out / "summary.json")
    assert doc["scenario"] == "small"
    assert list(doc)[:3] == ["scenario", "seed", "mmpath_version"]
    assert doc["flows"][0]["bytes_delivered"] == res.summary["flows"][0]["bytes_delivered"]


def test_intervals_csv_sums_to_bytes_delivered(small_run):
    res, out = small_run
    iv = pd.read_csv(out / "intervals.csv")
    assert list(iv.columns) == ["t_s", "flow", "subflow", "path", "bytes", "mbps"]
    conn = iv[iv["subflow"] == -1]
    per_flow = conn.groupby("flow")["bytes"].sum()
    for f in res.summary["flows"]:
        assert per_flow[f["name"]] == f["bytes_delivered"], f["name"]
    # Bins are 100 ms apart and cover the run.
    t = np.sort(conn[conn["flow"] == "bulk"]["t_s"].unique())
    np.testing.assert_allclose(np.diff(t), 0.1)
    assert t[0] == 0.0 and t[-1] < 0.5


def test_timeline_parquet_reads_with_pyarrow(small_run):
    res, out = small_run
    table = pq.read_table(out / "timeline.parquet")
    for col in ("t_s", "flow", "path", "cwnd_bytes", "srtt_ms", "queue_bytes", "phy_rate_mbps",
                "link_up", "cc_state", "delivered_bytes"):
        assert col in table.column_names, col
    assert table.num_rows == len(res.timeline)
    back = pd.read_parquet(out / "timeline.parquet")
    assert set(back["flow"].astype(str).unique()) == {"bulk", "video"}


def test_iperf3_json_layout(small_run):
    res, out = small_run
    d = _strict_json(out / "iperf3.json")
    start, intervals, end = d["start"], d["intervals"], d["end"]
    for key in ("connected", "version", "system_info", "timestamp", "connecting_to", "cookie",
                "tcp_mss_default", "test_start"):
        assert key in start, key
    ts = start["test_start"]
    assert ts["num_streams"] == 2 and ts["protocol"] == "TCP" and ts["reverse"] == 1
    assert len(start["connected"]) == 2
    # 0.5 s run -> one (partial) 1 s interval.
    assert len(intervals) == 1
    iv = intervals[0]
    assert iv["sum"]["end"] == pytest.approx(0.5)
    tcp, udp = iv["streams"]
    for key in ("socket", "start", "end", "seconds", "bytes", "bits_per_second", "snd_cwnd", "rtt", "pmtu",
                "omitted", "sender"):
        assert key in tcp, key
    assert "packets" in udp
    assert tcp["rtt"] > 100  # microseconds, as iperf3 reports them
    # end: what iperf3 tooling reads.
    flows = res.summary["flows"]
    assert end["sum_received"]["bytes"] == sum(f["bytes_delivered"] for f in flows)
    assert end["sum_received"]["bits_per_second"] == pytest.approx(end["sum_received"]["bytes"] * 8 / 0.5)
    assert end["sum_sent"]["retransmits"] == sum(f["retransmits"] for f in flows)
    assert "bits_per_second" in end["sum_sent"]
    assert "cpu_utilization_percent" in end
    s_tcp, s_udp = end["streams"]
    assert s_tcp["receiver"]["bytes"] == flows[0]["bytes_delivered"]
    assert {"retransmits", "max_snd_cwnd", "mean_rtt", "min_rtt", "max_rtt"} <= set(s_tcp["sender"])
    for key in ("jitter_ms", "lost_packets", "packets", "lost_percent"):
        assert key in s_udp["udp"], key
        assert key in end["sum"], key
    # Interval bytes add up to what was delivered.
    for i, f in enumerate(flows):
        assert sum(x["streams"][i]["bytes"] for x in intervals) == f["bytes_delivered"]


def test_iperf3_json_sender_flags_follow_the_client_role(small_run):
    # docs/outputs.md: the file is the client's view; a download is iperf3's reverse mode, where
    # the client is not the sender, and iperf3 -R writes `"sender": false` in every part of `end`
    # (tests/analyze/fixtures/tcp_reverse/client.json). mmpath wrote true in `end`.
    _, out = small_run
    d = _strict_json(out / "iperf3.json")
    assert d["start"]["test_start"]["reverse"] == 1
    end = d["end"]
    tcp, udp = end["streams"]
    assert tcp["sender"]["sender"] is False and tcp["receiver"]["sender"] is False
    assert udp["udp"]["sender"] is False
    assert end["sum_sent"]["sender"] is False and end["sum_received"]["sender"] is False
    assert all(s["sender"] is False for iv in d["intervals"] for s in iv["streams"])


def test_iperf3_json_of_an_mptcp_flow(tmp_path):
    # An MPTCP connection's summary has no bytes_sent or mss_bytes of its own (its subflows
    # have); iperf3.json wrote 0 bytes sent and tcp_mss_default 0 for it.
    res = mmpath.run({
        "duration_s": 1.0, "backbone": {"enabled": False},
        "path": [{"name": "a", "rate_mbps": 200.0, "mtu_bytes": 3000}, {"name": "b", "rate_mbps": 50.0}],
        "flow": [{"name": "mp", "kind": "mptcp", "direction": "upload"}],
    })
    out = res.save(tmp_path / "o", report=False)
    d = _strict_json(out / "iperf3.json")
    f = res.summary["flows"][0]
    sent = sum(sf["bytes_sent"] for sf in f["subflows"])
    assert sent >= f["bytes_delivered"] > 0
    assert d["end"]["streams"][0]["sender"]["bytes"] == sent
    assert d["end"]["sum_sent"]["bytes"] == sent
    # MTU - 52 (IPv4, TCP, timestamps) - 20 (the DSS option, docs/scenario.md)
    assert d["start"]["tcp_mss_default"] == f["subflows"][0]["mss_bytes"] == 3000 - 72
    assert d["end"]["sum_sent"]["sender"] is True  # an upload: the client sends


def test_iperf3_one_second_intervals(tmp_path, small_toml):
    res = mmpath.run(small_toml, overrides={"duration_s": 2.5})
    out = res.save(tmp_path / "o", report=False)
    d = json.loads((out / "iperf3.json").read_text())
    ends = [iv["sum"]["end"] for iv in d["intervals"]]
    assert ends == pytest.approx([1.0, 2.0, 2.5])
    assert d["start"]["test_start"]["duration"] == 2.5
    assert not (out / "report.html").exists()


def test_report_html_references_existing_pngs(small_run):
    _, out = small_run
    page = (out / "report.html").read_text()
    assert "<table>" in page and "bulk" in page and "video" in page
    imgs = re.findall(r'<img src="([^"]+)"', page)
    assert "throughput_flow.png" in imgs
    for src in imgs:
        assert "/" not in src  # relative, beside the page
        assert (out / src).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", src


def test_failed_write_leaves_nothing(small_run, tmp_path):
    res, _ = small_run
    target = tmp_path / "taken"
    target.write_text("a file, not a folder")
    with pytest.raises(OutputError, match="cannot write outputs to"):
        res.save(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert target.read_text() == "a file, not a folder"


def test_save_overwrites_previous_run(small_run, small_toml, tmp_path):
    """A folder holding another run's outputs (0.2 s) gets this run's (0.5 s): the same files a
    save into an empty folder writes. (Saving one result twice could not tell an overwrite from
    a save that left the folder alone.)"""
    res, _ = small_run
    out = tmp_path / "o"
    mmpath.run(small_toml, overrides={"duration_s": 0.2}).save(out, report=False)
    assert json.loads((out / "summary.json").read_text())["sim_s"] == pytest.approx(0.2)
    res.save(out, report=False)
    fresh = res.save(tmp_path / "fresh", report=False)
    assert json.loads((out / "summary.json").read_text())["sim_s"] == pytest.approx(0.5)
    for name in ("summary.json", "intervals.csv", "iperf3.json"):
        assert (out / name).read_bytes() == (fresh / name).read_bytes(), name
    pd.testing.assert_frame_equal(pd.read_parquet(out / "timeline.parquet"),
                                  pd.read_parquet(fresh / "timeline.parquet"))


def test_a_run_into_another_scenario_s_folder_leaves_none_of_its_files(tmp_path):
    """A folder holding another scenario's run: the files only that run wrote (the phone's
    power.png, its channel-11ac.csv) were left beside this run's as if they were its own. They
    go now; a file the user put there stays, and a folder that holds no run is never cleaned."""
    out = tmp_path / "o"
    mmpath.run("phone-energy", overrides={"duration_s": 0.3}).save(out)
    assert (out / "power.png").is_file() and (out / "channel-11ac.csv").is_file()
    (out / "notes.txt").write_text("mine")
    mmpath.run("11ad-bulk", overrides={"duration_s": 0.3}).save(out)
    fresh = mmpath.run("11ad-bulk", overrides={"duration_s": 0.3}).save(tmp_path / "fresh")
    assert sorted(p.name for p in out.iterdir()) == sorted([p.name for p in fresh.iterdir()] + ["notes.txt"])
    # Without a report, an earlier report goes too (it would describe the other run).
    mmpath.run("11ad-bulk", overrides={"duration_s": 0.3}).save(out, report=False)
    assert not (out / "report.html").exists() and not list(out.glob("*.png"))
    # Not a run folder: nothing of the user's is removed, even with a run's file names.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "channel-x.csv").write_text("t_s\n")
    (mine / "power.png").write_bytes(b"")
    mmpath.run("11ad-bulk", overrides={"duration_s": 0.3}).save(mine, report=False)
    assert (mine / "channel-x.csv").is_file() and (mine / "power.png").is_file()


def test_tcp_state_plots_draw_one_line_per_subflow():
    # An MPTCP flow's cwnd / RTT plots: one line per subflow, not the subflows' values
    # interleaved into one line labelled by the flow; the connection's own rows (no cwnd) left out.
    from mmpath.report import _per_subflow

    res = mmpath.run("blockage", overrides={"duration_s": 0.5})
    tl = _per_subflow(res.timeline)
    assert set(tl["series"]) == {"download/11ad", "download/11ac"}
    assert tl["cwnd_bytes"].notna().all()
    for _, g in tl.groupby("series"):
        assert g["t_s"].is_unique
    # A single-path TCP flow keeps its flow name.
    tcp = _per_subflow(mmpath.run("11ad-bulk", overrides={"duration_s": 0.3}).timeline)
    assert set(tcp["series"]) == set(tcp["flow"])


def test_an_outage_to_the_end_is_shaded_within_the_data_range():
    """A link still down when the run ends is shaded to the right edge, and the axis keeps the
    limits its data gave it (the span used to widen it past the run's end)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from mmpath.report import shade_outages

    fig, ax = plt.subplots()
    ax.plot([0.0, 32.0], [1.0, 1.0])
    before = ax.get_xlim()
    shade_outages(ax, np.array([31.7]), np.array(["down"]), np.array(["11ad"]))
    assert ax.get_xlim() == before
    plt.close(fig)


def test_one_colour_per_path_in_every_plot():
    # The run report's plots and compare.png colour a path alike (C0, C1 in the scenario's path
    # order): rtt.png drew 11ac in 11ad's colour, its series sorted by name.
    from mmpath.report import plot_colours

    c = plot_colours(["11ad", "11ac"], [{"name": "download", "kind": "mptcp"}])
    assert [c("11ad"), c("11ac"), c("download/11ad"), c("download/11ac"), c("download/11ad#1")] == \
        ["C0", "C1", "C0", "C1", "C0"]
    assert c("download") == "C2"  # an MPTCP connection: not a path's colour
    c = plot_colours(["11ad", "11ac"], [{"name": "a", "kind": "tcp", "path": "11ac"}, {"name": "b", "kind": "tcp", "path": "11ad"}])
    assert (c("a"), c("b")) == ("C1", "C0")  # a single-path flow in its path's colour
    c = plot_colours(["p"], [{"name": "a", "kind": "tcp", "path": "p"}, {"name": "b", "kind": "tcp", "path": "p"}])
    assert (c("a"), c("b")) == ("C1", "C2")  # two flows on one path: told apart
