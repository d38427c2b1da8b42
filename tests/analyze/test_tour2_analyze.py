"""Defects found by a second tour of `mmpath analyze` with real testbed logs (netns + veth, iperf3
-J TCP/UDP/-R/--bidir/-P 2/MPTCP, tcpdump pcap (Ethernet, SLL, SLL2, ns precision, IPv6, BIG TCP),
dumpcap pcapng, `ss -tin`, mmpath run folders). Each test failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import dpkt
import pandas as pd

import mmpath
from mmpath.analyze import iw, pcap

FX = Path(__file__).parent / "fixtures"


# --------------------------------------------------------------------------- capture facts


def _dpkt_counts(path: Path) -> dict:
    n = {"packets": 0, "ipv4": 0, "ipv6": 0, "tcp": 0, "udp": 0}
    with open(path, "rb") as f:
        r = dpkt.pcap.Reader(f)
        lt = r.datalink()
        for _, buf in r:
            n["packets"] += 1
            if lt == 276:  # LINUX_SLL2: protocol type first, 20-byte header
                et, ip = int.from_bytes(buf[:2], "big"), buf[20:]
            else:
                eth = dpkt.ethernet.Ethernet(buf)
                et, ip = eth.type, bytes(eth.data)
            if et == 0x0800:
                n["ipv4"] += 1
                p = ip[9]
            elif et == 0x86DD:
                n["ipv6"] += 1
                p = ip[6]
            else:
                continue
            n["tcp"] += p == 6
            n["udp"] += p == 17
    return n


def test_capture_source_counts_its_packets_by_protocol_and_names_its_link_types():
    """summary.json's capture source said ipv4 0, ipv6 0, tcp 0, udp 0 for every capture (the
    counters were never incremented) and left out its link types."""
    for name, lt in (("tcp", "EN10MB"), ("udp", "EN10MB"), ("mptcp", "LINUX_SLL2")):
        path = FX / name / "capture.pcap"
        src = pcap.read(path)
        want = _dpkt_counts(path)
        assert {k: src.meta[k] for k in want} == want
        assert want["tcp"] + want["udp"] > 0
        assert src.meta["linktypes"] == lt
    a = mmpath.analyze([FX / "udp" / "capture.pcap"])
    row = a.summary["sources"][0]
    assert row["udp"] > 1000 and row["linktypes"] == "EN10MB"


# --------------------------------------------------------------------------- IPv6 extension headers


def test_ipv6_big_tcp_jumbo_segments_are_tcp():
    """IPv6 BIG TCP super-packets (payload length 0, a Hop-by-Hop Jumbo Payload option before the
    TCP header) were counted as 'other', so a capture lost most data segments: retransmissions,
    RTT samples and in-flight came from the few small segments left."""
    path = FX / "tour2" / "bigtcp6.pcap"
    want: dict = {}
    jumbo = 0
    with open(path, "rb") as f:
        for _, buf in dpkt.pcap.Reader(f):
            ip = dpkt.ethernet.Ethernet(buf).data
            if isinstance(ip, dpkt.ip6.IP6) and isinstance(ip.data, dpkt.tcp.TCP):
                key = (ip.src, ip.data.sport, ip.dst, ip.data.dport)
                want[key] = want.get(key, 0) + 1
                jumbo += ip.nxt == 0 and ip.plen == 0
    assert jumbo > 20
    tcp, _, stats = pcap.read_packets(path)
    assert {k: len(d.ts) for k, d in tcp.items()} == want
    assert stats["other"] == 0 and stats["short"] == 0
    # every data byte is in sequence: the payload lengths add up to the sequence space covered
    d = max(tcp.values(), key=lambda d: sum(d.plen))
    data = [(s, n) for s, n in zip(d.seq, d.plen) if n > 0]
    assert sum(n for _, n in data) == max(s + n for s, n in data) - min(s for s, _ in data)
    assert min(n for _, n in data) > 0 and max(n for _, n in data) > 65535


# --------------------------------------------------------------------------- content detection


TCPDUMP_STDERR = ("tcpdump: data link type LINUX_SLL2\n"
                  "tcpdump: listening on any, link-type LINUX_SLL2 (Linux cooked v2), snapshot length 128 bytes\n"
                  "31707 packets captured\n31707 packets received by filter\n0 packets dropped by kernel\n")


def test_folder_with_tcpdump_stderr_and_notes_is_read(tmp_path):
    """tcpdump's stderr saved beside the capture (`2> tcpdump.err`) has the word 'link' in its first
    line, which made it a wil6210 log; the whole folder then failed with 'row has 13 cells but the
    header has 5'. A real wil6210 header is still recognised."""
    from mmpath.analyze import sources, wil6210

    d = tmp_path / "run1"
    d.mkdir()
    for f in ("capture.pcap", "client.json"):
        (d / f).write_bytes((FX / "tcp" / f).read_bytes())
    (d / "tcpdump.err").write_text(TCPDUMP_STDERR)
    (d / "notes.txt").write_text("Link status: the AP was 2 m away\n")
    a = mmpath.analyze([d])
    assert sorted(Path(s["path"]).name for s in a.summary["sources"]) == ["capture.pcap", "client.json"]
    assert not wil6210.looks_like(TCPDUMP_STDERR)
    for head in ("Timestamp,Azimuth,MCS,Tx_Sector,Link_Status,SQI,RSSI\n", "time_ms,mcs,status,rssi\n",
                 "mcs,sector,status\n", "time mcs sector status sqi rssi\n", "MCS;RSSI [dBm]\n"):
        assert wil6210.looks_like(head), head
    assert sources.detect(FX / "handmade" / "wil6210.csv") == "wil6210"


# --------------------------------------------------------------------------- iperf3 ends without a receiver count


def test_iperf3_server_report_of_the_streams_it_sends_is_listed():
    """iperf 3.12's server writes 0 receiver bytes for the streams it sends (-R, the reverse
    streams of --bidir): the stream was dropped as a flow under 10 kB, with the only sender-side
    RTT, cwnd and retransmit count of a -R test. It is now listed with what the server wrote."""
    from mmpath.analyze import iperf3

    sj = json.loads((FX / "tcp_reverse" / "server.json").read_text())
    snd = sj["end"]["streams"][0]["sender"]
    assert sj["end"]["streams"][0]["receiver"]["bytes"] == 0 and snd["bytes"] > 0
    f = iperf3.read(FX / "tcp_reverse" / "server.json").flows[0]
    assert f["sender"] and f["bytes_basis"] == "sent"
    assert f["bytes"] == snd["bytes"] and abs(f["mbps"] - snd["bits_per_second"] / 1e6) < 1e-9
    a = mmpath.analyze([FX / "tcp_reverse" / "server.json", FX / "tcp_reverse" / "capture.pcap"])
    rows = [x for x in a.summary["flows"] if x["source"].endswith("server.json")]
    assert len(rows) == 1 and rows[0]["rtt_ms"]["mean"] == snd["mean_rtt"] / 1e3
    assert rows[0]["retransmits"] == snd["retransmits"]
    # what the server wrote is not the receiver's throughput: no iperf3-vs-capture row from it
    assert not [x for x in a.summary["iperf3_agreement"] if x["iperf3"].endswith("server.json")]
    # --bidir: the server's report lists both of its streams, the sent one from its sender totals
    b = iperf3.read(FX / "tcp_p2_bidir" / "server.json")
    assert all(f["bytes"] > 10_000 for f in b.flows)
    assert sorted(f.get("bytes_basis", "receiver") for f in b.flows) == ["receiver"] * 2 + ["sent"] * 2


def test_iperf3_udp_server_with_parallel_streams_is_listed():
    """A UDP server's per-stream results with -P 2 hold 0 bytes (only end.sum_received has them):
    both streams were dropped as flows under 10 kB. Their bytes are now the sum of the server's
    own (received) intervals, which add up to sum_received."""
    from mmpath.analyze import iperf3

    path = FX / "tour2" / "udp_p2_server.json"
    sj = json.loads(path.read_text())
    assert all(x["udp"]["bytes"] == 0 for x in sj["end"]["streams"])
    r = iperf3.read(path)
    assert len(r.flows) == 2 and {f["bytes_basis"] for f in r.flows} == {"received"}
    assert sum(f["bytes"] for f in r.flows) == sj["end"]["sum_received"]["bytes"]
    a = mmpath.analyze([path])
    assert len(a.summary["flows"]) == 2 and a.summary["minor_flows"] == 0


def test_iperf3_udp_client_with_parallel_streams_reports_the_receivers_throughput():
    """With -P 2 a UDP client's per-stream results are what it sent (4.8 % of it was lost), and
    the analyzer showed them as the streams' throughput (with -P 1 it used the receiver's sum).
    A stream's receiver throughput is now its datagrams that arrived, which is what the server's
    own report of the same run counts, stream by stream."""
    from mmpath.analyze import iperf3

    cj = json.loads((FX / "tour2" / "udp_p2_client.json").read_text())
    c = {f["name"]: f for f in iperf3.read(FX / "tour2" / "udp_p2_client.json").flows}
    s = {f["name"]: f for f in iperf3.read(FX / "tour2" / "udp_p2_server.json").flows}
    assert c.keys() == s.keys() and len(c) == 2
    for name, f in c.items():
        assert f["bytes"] == s[name]["bytes"]  # (packets - lost) datagrams of the block size
        assert f["bytes_sent"] > f["bytes"] and f["sent_mbps"] > f["mbps"]
    assert sum(f["bytes"] for f in c.values()) == sum(x["udp"]["bytes"] * (x["udp"]["packets"] - x["udp"]["lost_packets"])
                                                       // x["udp"]["packets"] for x in cj["end"]["streams"])
    assert abs(sum(f["mbps"] for f in c.values()) - cj["end"]["sum_received"]["bits_per_second"] / 1e6) < 0.01


# --------------------------------------------------------------------------- MPTCP data ACKs


def test_mptcp_connection_counts_past_2_gb_when_data_acks_mix_widths():
    """Linux sends 4-octet data ACKs on a join's first packets and 8-octet ones after (the tour's
    MPTCP capture has both in one connection). The connection's progress was taken modulo the
    first data ACK's width, so with a 4-octet one first a connection stopped counting at 2^31
    bytes. Here: one 4-octet data ACK, then 8-octet ones up to 3 GB."""
    from mmpath.analyze.pcap.mptcp import connection_flows
    from mmpath.analyze.pcap.options import ACK, DSS
    from mmpath.analyze.pcap.packets import TcpDir

    idsn = 0x0123_4567_89AB_CDEF
    fwd_key = (b"\x0a\x01\x00\x02", 40000, b"\x0a\x01\x00\x01", 5201)
    rev_key = (fwd_key[2], fwd_key[3], fwd_key[0], fwd_key[1])
    data, acks = TcpDir("a0"), TcpDir("a0")
    steps = [(0.0, (idsn + 1) & 0xFFFFFFFF, False)] + [
        (0.1 * i, idsn + 1 + i * 100_000_000, True) for i in range(1, 31)]
    for i, (t, v, is64) in enumerate(steps):
        for arr, x in ((acks.ts, t), (acks.seq, 1), (acks.ack, 1), (acks.plen, 0), (acks.flags, ACK),
                       (acks.win, 1000)):
            arr.append(x)
        acks.mptcp.append((i, DSS, ((v, is64), None, None, None, False)))
    flow = {"name": "a", "subflow": 0, "bytes": 3_000_000_000, "start": 0.0, "end": 3.0, "path": "a0",
            "retransmits": 0, "connection": "mptcp-00000001:fwd"}
    flows, bins, events = [], [], []
    connection_flows({"mptcp-00000001:fwd": [(fwd_key, data, flow)]}, {fwd_key: data, rev_key: acks},
                      0.001, flows, bins, events)
    assert flows[0]["bytes"] == 3_000_000_000
    assert bins[0]["bytes"].sum() == 3_000_000_000


# --------------------------------------------------------------------------- ss receiving sockets


def test_ss_receiving_socket_rtt_is_not_the_flows():
    """In `ss -tin` the receiving socket of a stream (the client's sockets of the --bidir reverse
    streams) reports the RTT of what it sent itself (iperf3's cookie: 0.015 ms, constant), which
    was shown as the flow's RTT beside the 29-62 ms its sender measured."""
    a = mmpath.analyze([FX / "tcp_p2_bidir" / "ss.log"])
    flows = a.summary["flows"]
    fwd = [f for f in flows if f["name"].startswith("10.1.0.2:")]
    rev = [f for f in flows if f["name"].startswith("10.1.0.1:5201>")]
    assert len(fwd) == 2 and len(rev) == 2
    assert all(f["rtt_ms"]["min"] > 10 for f in fwd)
    assert all(f.get("rtt_ms") is None for f in rev)
    tl = a.timeline
    assert tl.loc[tl["flow"].isin([f["name"] for f in rev]), "srtt_ms"].isna().all()


# --------------------------------------------------------------------------- a capture without TCP/UDP


def test_capture_without_tcp_or_udp_says_so(tmp_path, capsys):
    """A capture holding only ARP (the wrong interface, a capture filter) gave an empty table and
    exit status 0 with no word of why."""
    p = tmp_path / "arp.pcap"
    with open(p, "wb") as f:
        w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        arp = dpkt.ethernet.Ethernet(dst=b"\xff" * 6, src=b"\x02" * 6, type=dpkt.ethernet.ETH_TYPE_ARP,
                                     data=bytes(dpkt.arp.ARP()))
        w.writepkt(bytes(arp), ts=1.0)
        w.writepkt(bytes(arp), ts=1.5)
    a = mmpath.analyze([p])
    assert a.summary["flows"] == []
    err = capsys.readouterr().err
    assert "arp.pcap: no TCP or UDP packets among its 2 packets (2 other)" in err
    assert err.count("\n") == 1


# --------------------------------------------------------------------------- the plot


def _iw_log(path: Path, dev: str, mcs: int, rssi: float) -> Path:
    lines = []
    for i in range(30):
        lines += [f"# mmpath-capture iw t={1795328936.8 + i * 0.1:.6f}", f"Station 04:ce:14:0a:21:5c (on {dev})",
                  f"\tsignal:  \t{rssi} dBm", f"\ttx bitrate:\t866.7 MBit/s VHT-MCS {mcs} 80MHz short GI VHT-NSS 2"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_phy_panel_shows_and_names_a_steady_rssi(tmp_path):
    """Two steady links (MCS 9 / -41.4 dBm and MCS 8 / -41.9 dBm, as an mmpath dual-band run
    records them) drew each MCS on an edge of the panel and each RSSI (right axis, not in the
    legend) exactly over it: the RSSI could not be seen or told apart."""
    from mmpath.analyze import report

    a = mmpath.analyze([_iw_log(tmp_path / "iw-wlan0.log", "wlan0", 9, -41.4),
                        _iw_log(tmp_path / "iw-wigig0.log", "wigig0", 8, -41.9)])
    fig, panels = report.figure(a)
    ax = panels["phy"]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(labels) == ["MCS wigig0", "MCS wlan0", "RSSI wigig0", "RSSI wlan0"]
    heights = {}
    for axis in fig.axes:
        if axis is not ax and axis.bbox.bounds != ax.bbox.bounds:
            continue
        lo, hi = axis.get_ylim()
        for ln in axis.get_lines():
            y = ln.get_ydata()
            if len(y):
                heights[ln.get_label()] = (float(y[0]) - lo) / (hi - lo)
    assert len(heights) == 4
    for lbl, h in heights.items():
        assert 0.1 < h < 0.9, (lbl, h)  # inside the panel, not on its edge
    # each RSSI line clear of each MCS line
    for r in ("RSSI wlan0", "RSSI wigig0"):
        for m in ("MCS wlan0", "MCS wigig0"):
            assert abs(heights[r] - heights[m]) > 0.05, (r, m)
    # a path's MCS and RSSI share its colour
    col = {ln.get_label(): ln.get_color() for axis in fig.axes for ln in axis.get_lines()}
    assert col["MCS wlan0"] == col["RSSI wlan0"] != col["MCS wigig0"] == col["RSSI wigig0"]


def test_two_subflows_on_one_path_have_their_own_labels():
    """With `tcpdump -i any` and a server that announces its second address, two subflows of a
    connection leave by one interface (if3): both lines were labelled `mptcp-...:fwd/if3`."""
    from mmpath.analyze import report

    a = mmpath.analyze([FX / "mptcp" / "capture.pcap"])
    style = report._series_style(a)
    by_flow: dict = {}
    for (src, flow, sub), (label, _) in style.items():
        by_flow.setdefault(flow, []).append(label)
    assert any(len(v) >= 4 for v in by_flow.values())  # a connection with 3 subflows
    for labels in by_flow.values():
        assert len(set(labels)) == len(labels), labels
    fig, panels = report.figure(a)
    shown = [t.get_text() for t in panels["tput"].get_legend().get_texts()]
    assert len(set(shown)) == len(shown)


def test_udp_test_plot_has_no_empty_rtt_panel():
    """A UDP test's capture has RTT samples only for iperf3's control connection (not drawn, under
    10 kB): the plot had an empty RTT panel with axes 0-1."""
    from mmpath.analyze import report

    a = mmpath.analyze([FX / "udp" / "capture.pcap"])
    assert [f["kind"] for f in a.summary["flows"]] == ["udp"]
    fig, panels = report.figure(a)
    assert list(panels) == ["tput"]
    t = mmpath.analyze([FX / "tcp" / "capture.pcap"])
    fig, panels = report.figure(t)
    assert "rtt" in panels and panels["rtt"].get_lines()


# --------------------------------------------------------------------------- mmpath run folders


def test_run_folder_connection_has_reinjected_bytes_and_path_shares(tmp_path):
    """connections[] of an mmpath MPTCP run had reinjected_bytes null and path_shares empty,
    though the run reports the one and its subflows' bytes give the other."""
    res = mmpath.run("blockage", overrides={"duration_s": 1.5}, out=tmp_path / "run")
    a = mmpath.analyze([tmp_path / "run"])
    conn = res.summary["flows"][0]
    (c,) = a.summary["connections"]
    assert c["reinjected_bytes"] == conn["reinjected_bytes"] and c["reinjections"] == conn["reinjections"]
    iv = pd.read_csv(tmp_path / "run" / "intervals.csv")
    by_path = {sf["path"]: float(iv.loc[(iv["flow"] == conn["name"]) & (iv["subflow"] == sf["subflow"]),
                                         "bytes"].sum()) for sf in conn["subflows"]}
    tot = sum(by_path.values())
    assert set(c["path_shares"]) == {"11ad", "11ac"}
    for p, b in by_path.items():
        assert abs(c["path_shares"][p] - b / tot) < 1e-6


# --------------------------------------------------------------------------- UDP iperf3 vs capture


def test_udp_agreement_row_says_the_capture_counts_lost_datagrams(run_cli, tmp_path):
    """A UDP capture taken before the loss counted iperf3's lost datagrams, and the agreement row
    said only 'capture +2.59 %' against the receiver's rate (+36.7 % on a 200 Mbit/s run): a
    disagreement that is the loss. The row now gives iperf3's loss and sending rate too."""
    cap, rep = FX / "tour2" / "udp_loss.pcap", FX / "tour2" / "udp_loss_client.json"
    cj = json.loads(rep.read_text())["end"]["sum"]
    a = mmpath.analyze([rep, cap])
    (row,) = a.summary["iperf3_agreement"]
    assert row["diff_pct"] > 2.0  # against the receiver's throughput: the loss
    assert row["iperf3_loss_pct"] == round(100 * cj["lost_packets"] / cj["packets"], 6)
    assert abs(row["iperf3_sent_mbps"] - cj["bits_per_second"] / 1e6) < 1e-6
    assert abs(row["diff_sent_pct"]) < 0.2  # the capture saw what was sent
    rc, out, err = run_cli("analyze", rep, cap, "--out", tmp_path / "o")
    assert rc == 0 and "lost 2.52 %" in out and "a capture before the loss counts the lost datagrams" in out
    # no loss, no note
    rc, out, err = run_cli("analyze", FX / "udp", "--out", tmp_path / "o2")
    assert rc == 0 and " vs " in out and "lost" not in out


def test_logs_of_several_tests_analyzed_together_all_draw_their_throughput():
    """`mmpath analyze tcp/ mptcp/ udp/client.json`: the throughput panel drew the first capture's
    flows only (one source was picked for all), while the cwnd and RTT panels drew every test.
    Each flow is now drawn once, from the first log that holds it, and sources that share a file
    name are told apart by their folder."""
    from mmpath.analyze import report

    a = mmpath.analyze([FX / "tcp", FX / "mptcp", FX / "udp" / "client.json"])
    assert len(report._pick_sources(a)) == 3
    series = report._pick_series(a)
    drawn = sorted((Path(src).parent.name, Path(src).name, f) for src, fl in series.items() for f in fl)
    tests = {d for d, _, _ in drawn}
    assert tests == {"tcp", "mptcp", "udp"}, drawn
    # one log per flow: the captures draw tcp's and mptcp's flows, iperf3 only the UDP stream
    assert [(d, n) for d, n, _ in drawn if n.endswith(".json")] == [("udp", "client.json")]
    names = [f for _, _, f in drawn]
    assert len(names) == len(set(names))
    # the MPTCP connection drawn, not again as iperf3's stream named by its first subflow
    mp = [f for d, _, f in drawn if d == "mptcp"]
    assert mp and all(f.startswith("mptcp-") for f in mp)
    fig, panels = report.figure(a)
    title = panels["tput"].get_title()
    assert "tcp/capture.pcap" in title and "mptcp/capture.pcap" in title and "client.json" in title
    labels = [t.get_text() for t in panels["tput"].get_legend().get_texts()]
    assert any(lbl.startswith("udp/client.json: udp ") for lbl in labels), labels


# --------------------------------------------------------------------------- the printed table


def test_printed_table_says_dash_for_missing_values_and_names_same_named_logs_by_folder(run_cli, tmp_path):
    """The table printed `nan` where a log has no retransmission share or RTT (every iperf3 row),
    and with two tests analyzed together its agreement lines read 'client.json vs capture.pcap'
    twice, naming neither test."""
    rc, out, err = run_cli("analyze", FX / "tcp", FX / "tcp_reverse", "--out", tmp_path / "o")
    assert rc == 0 and "nan" not in out
    rows = [ln for ln in out.splitlines() if "client.json " in ln and " tcp " in ln]
    assert rows and all(ln.split()[-2] == "-" for ln in rows)  # retx % of an iperf3 row
    assert "tcp/client.json vs tcp/capture.pcap:" in out
    assert "tcp_reverse/client.json vs tcp_reverse/capture.pcap:" in out


def test_a_capture_that_stops_before_the_test_says_so(run_cli, tmp_path):
    """A capture whose tcpdump stopped before iperf3's test ended read -48 % against iperf3 with
    no word that it lacks the test's last second; the row now gives the uncovered time and the
    printed line says the capture reads low. A whole capture has none."""
    import dpkt

    src = FX / "tcp" / "capture.pcap"
    with open(src, "rb") as f:
        r = dpkt.pcap.Reader(f)
        link, pk = r.datalink(), list(r)
    t0, t1 = pk[0][0], pk[-1][0]
    d = tmp_path / "cut"
    d.mkdir()
    (d / "client.json").write_bytes((FX / "tcp" / "client.json").read_bytes())
    with open(d / "capture.pcap", "wb") as f:
        w = dpkt.pcap.Writer(f, linktype=link)
        for ts, buf in pk:
            if ts < t0 + 0.6 * (t1 - t0):
                w.writepkt(buf, ts)
    (row,) = mmpath.analyze([d]).summary["iperf3_agreement"]
    assert row["diff_pct"] < -40 and 0.8 < row["capture_missing_s"] < 1.1, row
    rc, out, _ = run_cli("analyze", d, "--out", tmp_path / "o")
    assert rc == 0 and "the capture misses 0.9" in out and "so it reads low" in out
    whole = mmpath.analyze([FX / "tcp" / "client.json", src]).summary["iperf3_agreement"]
    assert whole and all(a["capture_missing_s"] == 0 for a in whole)
    rc, out, _ = run_cli("analyze", FX / "tcp" / "client.json", src, "--out", tmp_path / "o2")
    assert rc == 0 and "misses" not in out


def test_an_ap_station_dump_gives_each_station_its_own_link(tmp_path):
    """An AP's `iw dev IF station dump` lists every associated station; only the first of each
    sample was kept, so a second station's MCS, signal and disconnection were lost. Each station
    is now its own link, IF/MAC; a sample without a station has its link down."""
    a, b = "04:ce:14:0a:21:5c", "04:ce:14:0a:99:01"

    def sta(mac, mcs, sig):
        return (f"Station {mac} (on wlan0)\n\tsignal:  \t{sig} dBm\n"
                f"\ttx bitrate:\t{[433.3, 866.7][mcs == 9]} MBit/s VHT-MCS {mcs} 80MHz short GI VHT-NSS 2\n")

    log = tmp_path / "iw-wlan0.log"
    log.write_text("".join([
        "# mmpath-capture iw t=100.0\n", sta(a, 9, -50), sta(b, 4, -70),
        "# mmpath-capture iw t=100.1\n", sta(a, 9, -51), sta(b, 4, -71),
        "# mmpath-capture iw t=100.2\n", sta(a, 9, -50),                  # b gone
        "# mmpath-capture iw t=100.3\n", sta(a, 8, -55), sta(b, 9, -60),  # b back
    ]))
    src = iw.read(log)
    assert src.meta["stations"] == [a, b]
    s = src.samples.set_index(["path", "t"])
    pa, pb = f"wlan0/{a}", f"wlan0/{b}"
    assert s.loc[pa, "mcs"].tolist() == [9, 9, 9, 8]
    assert s.loc[pb, "rssi_dbm"].tolist()[:2] == [-70, -71]
    assert s.loc[pb, "link_up"].tolist() == [True, True, False, True]
    ev = src.events
    assert [(r.path, r.kind) for r in ev.itertuples() if r.kind in ("down", "up")] == [(pb, "down"), (pb, "up")]
    # One station: the interface is the link, as before.
    one = tmp_path / "one" / "iw-wlan0.log"
    one.parent.mkdir()
    one.write_text("# mmpath-capture iw t=1.0\n" + sta(a, 9, -50) + "# mmpath-capture iw t=1.1\n" + sta(a, 8, -52))
    assert set(iw.read(one).samples["path"]) == {"wlan0"}


def test_the_mcs_line_breaks_while_the_link_is_down(tmp_path):
    """The MCS/RSSI panel dropped the samples with the link down (no MCS, no RSSI) before
    drawing, so a station's lines joined across its disconnection as if it had kept its MCS."""
    import numpy as np

    from mmpath.analyze import report

    log = tmp_path / "iw-wlan0.log"
    txt = ""
    for i in range(30):
        txt += f"# mmpath-capture iw t={100 + i * 0.1:.1f}\n"
        if not 10 <= i < 15:
            txt += ("Station 04:ce:14:0a:21:5c (on wlan0)\n\tsignal:  \t-60 dBm\n"
                    "\ttx bitrate:\t433.3 MBit/s VHT-MCS 4 80MHz short GI VHT-NSS 2\n")
    log.write_text(txt)
    fig, panels = report.figure(mmpath.analyze([log]))
    for axis in fig.axes:
        for ln in axis.get_lines():
            if ln.get_label() in ("MCS wlan0", "RSSI wlan0"):
                x, y = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
                gap = (x > 1.05) & (x < 1.45)
                assert gap.any() and np.isnan(y[gap]).all(), ln.get_label()
