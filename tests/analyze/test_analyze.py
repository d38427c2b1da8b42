"""mmpath analyze on REAL fixtures (tests/analyze/fixtures/make_fixtures.sh: netns + veth + tbf,
iperf3, mptcpize, tcpdump, ss) and on an mmpath run folder. No root tools needed at test time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dpkt
import numpy as np
import pandas as pd
import pytest

import mmpath
from mmpath.analyze import iperf3, iw, pcap, ss, wil6210
from mmpath.analyze.pcap.mptcp import _reinjections
from mmpath.analyze.pcap.mptcp import _data_mapping, data_stream, dsn_coverage
from mmpath.analyze.pcap.options import _mptcp_option
from mmpath.analyze.summary import format_summary

from conftest import assert_one_line_error

FX = Path(__file__).parent / "fixtures"
REAL = ["tcp", "tcp_reverse", "udp", "tcp_p2_bidir", "mptcp", "mptcp_backup"]


@pytest.fixture(scope="module")
def analyses():
    return {n: mmpath.analyze([FX / n]) for n in REAL}


# --------------------------------------------------------------------------- agreement with iperf3


@pytest.mark.parametrize("name", REAL)
def test_throughput_agrees_with_iperf3_within_2pct(analyses, name):
    agr = analyses[name].summary["iperf3_agreement"]
    cj = json.loads((FX / name / "client.json").read_text())
    n_streams = len(cj["end"]["streams"])
    # every iperf3 stream (both ends' reports) found in the capture(s)
    flows = {a["flow"] for a in agr}
    assert len(flows) == n_streams, (flows, n_streams)
    for a in agr:
        assert abs(a["diff_pct"]) < 2.0, a


def test_iperf3_reader_numbers_are_iperf3s(analyses):
    src = iperf3.read(FX / "tcp" / "client.json")
    cj = json.loads((FX / "tcp" / "client.json").read_text())
    f = src.flows[0]
    assert f["mbps"] == pytest.approx(cj["end"]["sum_received"]["bits_per_second"] / 1e6)
    assert f["bytes"] == cj["end"]["sum_received"]["bytes"]
    assert f["name"] == "10.1.0.2:{}>10.1.0.1:5201".format(cj["start"]["connected"][0]["local_port"])
    # 0.1 s intervals, sender side: cwnd and RTT samples
    assert len(src.bins) == len(cj["intervals"]) and src.bins["dt"].max() < 0.11
    assert src.samples["cwnd_bytes"].notna().all() and (src.samples["srtt_ms"] > 0).all()


def test_iperf3_reverse_and_bidir_directions():
    r = iperf3.read(FX / "tcp_reverse" / "client.json")
    assert r.meta["reverse"] and r.flows[0]["name"].startswith("10.1.0.1:5201>")
    b = iperf3.read(FX / "tcp_p2_bidir" / "client.json")
    fwd = [f for f in b.flows if f["name"].startswith("10.1.0.2")]
    rev = [f for f in b.flows if f["name"].startswith("10.1.0.1")]
    assert b.meta["bidir"] and len(fwd) == 2 and len(rev) == 2
    u = iperf3.read(FX / "udp" / "server.json")
    assert u.flows[0]["kind"] == "udp" and u.meta["side"] == "server"


def test_pcap_tcp_flow_details():
    s = pcap.read(FX / "tcp" / "capture.pcap")
    f = max(s.flows, key=lambda f: f["bytes"])
    assert f["sack_permitted"] and f["sack_acks"] > 0 and f["wscale"] == 10
    assert f["retransmits"] > 0  # BBR into a shallow tbf: real losses
    assert f["rtt_samples"] > 100
    sm = s.samples[s.samples["flow"] == f["name"]]
    assert sm["in_flight_bytes"].max() > 10_000
    assert sm["rwnd_bytes"].max() > 65535  # scaled by the window-scale option
    # RTT through a 10 Mbit/s tbf with up to 30 ms of queue: between 0 and ~60 ms
    assert 0 < np.nanmedian(sm["rtt_ms"]) < 60


def test_pcap_decoding_matches_dpkt():
    """Cross-check the struct-based decoder against dpkt on a real capture."""
    path = FX / "tcp" / "capture.pcap"
    want: dict = {}
    with open(path, "rb") as fh:
        for _ts, buf in dpkt.pcap.Reader(fh):
            eth = dpkt.ethernet.Ethernet(buf)
            ip = eth.data
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            t = ip.data
            k = (bytes(ip.src), t.sport, bytes(ip.dst), t.dport)
            pl = ip.len - ip.hl * 4 - t.off * 4
            n, b = want.get(k, (0, 0))
            want[k] = (n + 1, b + pl)
    tcp, _udp, _ = pcap.read_packets(path)
    got = {k: (len(d.ts), sum(d.plen)) for k, d in tcp.items()}
    assert got == want


def test_one_way_delay_from_both_ends(analyses):
    owd = analyses["tcp"].summary["one_way_delay"]
    assert owd, "both captures of the tcp run should give one-way delays"
    d = next(iter(owd.values()))
    big = max(d.values(), key=lambda v: v["samples"])
    # same host, veth: the captured delay is tiny (microseconds to a few ms)
    assert big["samples"] > 500 and 0 <= big["p50_ms"] < 5


# --------------------------------------------------------------------------- MPTCP


def test_mptcp_both_subflows_found(analyses):
    conns = [c for c in analyses["mptcp"].summary["connections"] if c["source"].endswith("capture.pcap")]
    data = max(conns, key=lambda c: c["bytes"])
    paths = {s["path"] for s in data["subflows"]}
    assert len(data["subflows"]) >= 2 and len(paths) == 2, data
    # both paths carried a real share of the data
    assert all(v > 0.1 for v in data["path_shares"].values()), data["path_shares"]
    # shares of the subflow bytes: they add up to 1 however many subflows share a path
    assert abs(sum(data["path_shares"].values()) - 1.0) < 1e-9, data["path_shares"]
    # the join used the token from MP_CAPABLE; the server's ADD_ADDR was seen
    assert analyses["mptcp"].summary["events"].get("add_addr", 0) >= 1
    # ss sees the same connection (same token name) with its subflows
    ssf = [f for f in analyses["mptcp"].summary["flows"] if f["source"].endswith("ss.log")
           and f.get("connection") == data["name"]]
    assert len(ssf) >= 2


def test_mptcp_backup_takeover_detected(analyses):
    a = analyses["mptcp_backup"]
    down_unix = float((FX / "mptcp_backup" / "link_down_unix_s.txt").read_text())
    down_s = down_unix - a.summary["origin_unix_s"]
    conns = [c for c in a.summary["connections"] if c["source"].endswith("capture.pcap")]
    data = max(conns, key=lambda c: c["bytes"])
    backups = [s for s in data["subflows"] if s["backup"]]
    assert len(backups) == 1  # MP_JOIN with the B bit
    tk = data["takeover"]
    assert tk is not None, data
    # the backup takes over after a0 goes down, within a second, and then carries the data
    assert down_s - 0.2 <= tk["t_s"] <= down_s + 1.0, (tk, down_s)
    assert tk["backup_share_after"] > 0.9


def test_reinjection_rule_on_hand_made_mappings():
    """The rule on mappings (t, subflow, dsn, dsn_is_64bit, length) worked out by hand."""
    maps = [
        (0.0, 0, 1000, True, 100),  # [1000, 1100) on subflow 0
        (0.1, 1, 1100, True, 100),  # [1100, 1200) on 1: adjacent, no overlap
        (0.2, 0, 1000, True, 100),  # the same mapping again on 0: a subflow retransmission
        (0.3, 1, 1050, True, 100),  # [1050, 1150) on 1: 1050..1100 was mapped on 0 at 0.0 -> 50 B
        (0.4, 0, 1100, True, 40),  # [1100, 1140) on 0: mapped on 1 at 0.1 and 0.3 -> 40 B (once)
    ]
    assert _reinjections(maps) == (2, 90, [(0.3, 1, 50), (0.4, 0, 40)])
    # 32-bit DSNs across the wrap: 2^32 - 10 + 20 wraps to 10, so [5, 15) overlaps it by 5 B.
    wrap = [(0.0, 0, 2**32 - 10, False, 20), (0.5, 1, 5, False, 10)]
    assert _reinjections(wrap) == (1, 5, [(0.5, 1, 5)])
    assert _reinjections([]) == (0, 0, [])


def test_data_fin_only_and_payloadless_mappings_are_not_data():
    """RFC 8684 3.3.3: a DATA_FIN takes one octet of data-sequence space, counted in the mapping's
    Data-Level Length but not sent as payload; DSS fields are (data_ack, (dsn, 64bit), ssn, len, F)."""
    assert _data_mapping(1400, (None, (80, True), 1, 1400, False)) == (80, True, 1400)
    # the RFC's example: DSN 80, length 11, DATA_FIN -> 10 octets of data (80..89), DATA_FIN is 90
    assert _data_mapping(10, (None, (80, True), 1, 11, True)) == (80, True, 10)
    assert _data_mapping(0, (None, (90, True), 0, 1, True)) is None  # DATA_FIN-only segment
    assert _data_mapping(0, (None, (90, False), 5, 100, False)) is None  # a mapping on no payload
    assert _data_mapping(0, ((7, True), None, None, None, False)) is None  # pure data ACK
    assert _data_mapping(1, (None, (90, True), 0, 1, True)) is None  # nothing left but the DATA_FIN


def test_dsn_coverage_is_the_union_of_the_mapped_ranges():
    """Ranges [start, end) past the first data byte, in any order: (covered bytes, holes)."""
    assert dsn_coverage([(0, 100), (100, 250), (250, 300)]) == (300, [])  # contiguous
    assert dsn_coverage([(250, 300), (0, 100), (100, 250)], upto=300) == (300, [])  # any order
    assert dsn_coverage([(0, 100), (150, 300)]) == (250, [(100, 150)])  # a hole never filled
    assert dsn_coverage([(0, 100), (150, 300)], upto=100) == (100, [])  # ... beyond the data ACK
    # reinjections: the same data again on another subflow, overlapping, nested, repeated
    assert dsn_coverage([(0, 100), (50, 150), (60, 70), (0, 100), (140, 200)]) == (200, [])
    # the hole a reinjection fills is no hole
    assert dsn_coverage([(0, 100), (200, 300), (100, 200)]) == (300, [])
    # data ACKed past the furthest mapping, and data before the first byte (ignored)
    assert dsn_coverage([(-10, 50), (50, 80)], upto=100) == (80, [(80, 100)])
    assert dsn_coverage([], upto=10) == (0, [(0, 10)]) and dsn_coverage([]) == (0, [])


def test_data_stream_from_mappings_data_acks_and_a_data_fin():
    """The first data byte at IDSN + 1; a DATA_FIN's octet (3.3.3) in the data ACK but not data;
    data ACKs of 4 octets (the low 32 bits) beside 8-octet DSNs."""
    first = 2**40 + 2**32 - 100  # 100 bytes below a 32-bit wrap of the low half
    maps = [(0.0, 0, first, True, 1000), (0.1, 1, first + 1000, True, 500),
            (0.2, 1, first + 500, True, 500)]  # a reinjection of [500, 1000)
    fins = {(first + 1500, True)}  # the mapping [1500, 1501) with DATA_FIN, no payload
    acks = [(0.05, (first + 1000) & 0xFFFFFFFF, False), (0.3, (first + 1501) & 0xFFFFFFFF, False)]
    s = data_stream(maps, acks, fins, (first, True))
    assert s["first_known"] and s["data_fin_acked"]
    assert (s["acked_bytes"], s["covered_bytes"], s["holes"], s["first_hole"]) == (1500, 1500, 0, None)
    # without the DATA_FIN's ACK: the data ACK covers the data alone
    s = data_stream(maps, acks[:1] + [(0.3, (first + 1500) & 0xFFFFFFFF, False)], fins, (first, True))
    assert (s["acked_bytes"], s["data_fin_acked"]) == (1500, False)
    # the first mapping never captured: a hole from the first data byte on
    s = data_stream(maps[1:], acks, fins, (first, True))
    assert (s["covered_bytes"], s["hole_bytes"], s["first_hole"]) == (1000, 500, [0, 500])
    # ... which a capture without the keys cannot see: the lowest mapping stands for the first byte
    s = data_stream(maps[1:], [(0.3, (first + 1501) & 0xFFFFFFFF, False)], fins)
    assert not s["first_known"] and (s["acked_bytes"], s["holes"]) == (1000, 0)
    assert data_stream([], acks, fins, (first, True)) is None


def test_mp_capable_with_data_maps_the_initiators_first_bytes(analyses):
    """RFC 8684 3.1: the initiator's first data segment carries MP_CAPABLE with both keys and a
    data-level length instead of a DSS, mapping from its IDSN + 1. On the upload fixture that is
    iperf3's 37-byte cookie: with it, the data connection's stream is whole from its first byte,
    and its final data ACK is the cookie plus every byte iperf3 sent (its DATA_FIN acknowledged)."""
    opt = bytes([30, 22, 0x01, 0x81]) + bytes(range(8)) + bytes(range(8, 16)) + (37).to_bytes(2, "big")
    assert _mptcp_option(opt, 0x18) == (0, (1, 0x81, bytes(range(8)), bytes(range(8, 16)), 37))
    assert _mptcp_option(opt[:20], 0x10)[1][4] is None  # the third ACK without data
    s = analyses["mptcp_backup"].summary
    cj = json.loads((FX / "mptcp_backup" / "client.json").read_text())
    (c,) = [c for c in s["connections"] if not c["minor"] and c["source"].endswith("capture.pcap")]
    ds = c["data_stream"]
    assert ds["first_known"] and ds["holes"] == 0 and ds["data_fin_acked"], ds
    assert ds["acked_bytes"] == ds["covered_bytes"] == 37 + cj["end"]["sum_sent"]["bytes"]


def _dss_mappings(path):
    """Every DSS mapping in a capture, decoded with dpkt (not mmpath's decoder): (t, subflow
    4-tuple, dsn, data-level length, TCP payload length, DATA_FIN). RFC 8684 3.3: option kind 30,
    subtype 2; flags A (0x01) data ACK present, a (0x02) 8-byte ACK, M (0x04) mapping present,
    m (0x08) 8-byte DSN, F (0x10) DATA_FIN; the mapping is DSN, subflow sequence number (4 B),
    data-level length (2 B)."""
    out = []
    with open(path, "rb") as fh:
        for ts, buf in dpkt.pcap.Reader(fh):
            ip = dpkt.sll2.SLL2(buf).data  # tcpdump -i any
            if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.tcp.TCP):
                continue
            t = ip.data
            for kind, d in dpkt.tcp.parse_opts(t.opts):
                if kind != 30 or len(d) < 2 or d[0] >> 4 != 2 or not d[1] & 0x04:
                    continue
                i = 2 + ((8 if d[1] & 0x02 else 4) if d[1] & 0x01 else 0)
                n = 8 if d[1] & 0x08 else 4
                length = int.from_bytes(d[i + n + 4:i + n + 6], "big")
                out.append((ts, (bytes(ip.src), t.sport, bytes(ip.dst), t.dport),
                            int.from_bytes(d[i:i + n], "big"), length, len(t.data), bool(d[1] & 0x10)))
    return out


def _brute_force_reinjections(mappings, data_only=True):
    """All-pairs count: a mapping's first appearance (per subflow) is a reinjection when another
    subflow mapped part of its range earlier; its size is the largest such overlap. With
    `data_only`, mappings on segments without payload are skipped and a DATA_FIN's octet is taken
    off the length (RFC 8684 3.3.3); without it, every mapping counts (the old, wrong rule)."""
    first = {}
    for t, sf, dsn, ln, plen, fin in mappings:
        if data_only:
            if plen == 0:
                continue
            ln -= fin
        if ln > 0:
            first[(sf, dsn, ln)] = min(t, first.get((sf, dsn, ln), t))
    want = []
    for (sf, dsn, ln), t in first.items():
        ov = [min(dsn + ln, d2 + l2) - max(dsn, d2) for (sf2, d2, l2), t2 in first.items() if sf2 != sf and t2 < t]
        if max(ov, default=0) > 0:
            want.append((t, max(ov)))
    return sorted(want)


# every capture holding MPTCP: (fixture, file, reinjections, what counting payload-less mappings gives)
MPTCP_CAPTURES = [("mptcp", "capture.pcap", 1, 7), ("mptcp_backup", "capture.pcap", 2, 2),
                  ("mptcp_backup", "server.pcap", 5, 7)]


@pytest.mark.parametrize("name,file,count,count_payloadless", MPTCP_CAPTURES)
def test_reinjections_agree_with_a_brute_force_count(analyses, name, file, count, count_payloadless):
    """Reinjected data on the real captures against an all-pairs count over an independent decode,
    every event of every connection and direction (the fixtures' DSNs are 64-bit and random per
    connection direction, so mappings of different connections never overlap)."""
    maps = _dss_mappings(FX / name / file)
    want = _brute_force_reinjections(maps)
    assert len(want) == count, want  # the captures do hold reinjections: the check is not vacuous
    # ... and DATA_FINs repeated on several subflows, which the rule must not count (3 captures:
    # iperf3's control and data connections close with a DATA_FIN on each subflow)
    assert len(_brute_force_reinjections(maps, data_only=False)) == count_payloadless
    a = analyses[name]
    src = str(FX / name / file)
    ev = a.events[(a.events["source"] == src) & (a.events["kind"] == "reinjection")]
    off = next(s["offset_s"] for s in a.summary["sources"] if s["path"] == src)
    got = sorted(zip(ev["t_s"] - off + a.summary["origin_unix_s"], ev["value"].astype(int)))
    assert [b for _, b in got] == [b for _, b in want]
    assert [t for t, _ in got] == pytest.approx([t for t, _ in want], abs=1e-5)
    # the connection rows (every MPTCP connection and direction in the capture) say the same
    conns = [f for f in a.summary["flows"] if f["source"] == src and f.get("kind") == "mptcp"]
    assert sum(f["reinjections"] for f in conns) == len(want)
    assert sum(f["reinjected_bytes"] for f in conns) == sum(b for _, b in want)


def test_data_fin_repeats_are_not_reinjections_on_the_mptcp_fixture(analyses):
    """Regression: iperf3's control connection closes with a 1-byte data-level DATA_FIN on each of
    its subflows; these were counted as 3 reinjections (events said 4, the data connection 1)."""
    s = analyses["mptcp"].summary
    mp = {f["name"]: f for f in s["flows"] if f.get("kind") == "mptcp"}
    ctrl = [f for f in mp.values() if f["bytes"] < 10_000]
    assert len(ctrl) == 2  # the control connection's two directions
    assert all((f["reinjections"], f["reinjected_bytes"]) == (0, 0) for f in ctrl), ctrl
    (c,) = [c for c in s["connections"] if not c["minor"]]
    assert (c["reinjections"], c["reinjected_bytes"]) == (1, 5120)
    assert s["events"].get("reinjection", 0) == c["reinjections"] == sum(f["reinjections"] for f in mp.values())
    for name in ("mptcp", "mptcp_backup"):  # the events table and the connection rows agree
        s = analyses[name].summary
        assert s["events"].get("reinjection", 0) == sum(f["reinjections"] for f in s["flows"]
                                                        if f.get("kind") == "mptcp")


@pytest.mark.parametrize("name", REAL)
def test_small_connections_are_accounted_for(analyses, name):
    """Nothing is dropped silently: iperf3's MPTCP control connection (402 and 316 bytes) used to be
    missing from connections[] because its subflows fall under the 10 kB flows filter. Every MPTCP
    connection row is now in connections[] with all its subflows, the small ones marked minor; and
    every flow of a source is either listed or counted in minor_flows (threshold minor_flow_bytes)."""
    s = analyses[name].summary
    assert s["minor_flow_bytes"] == 10_000
    assert len(s["flows"]) + s["minor_flows"] == sum(src["flows"] for src in s["sources"])
    mp = [(f["source"], f["name"]) for f in s["flows"] if f.get("kind") == "mptcp"]
    assert sorted(mp) == sorted((c["source"], c["name"]) for c in s["connections"])
    for c in s["connections"]:
        assert c["minor"] == (c["bytes"] < s["minor_flow_bytes"]), c
    if name != "mptcp":
        return
    small = {c["name"]: c for c in s["connections"] if c["minor"]}
    assert len(small) == 2, small  # the control connection's two directions
    reader = pcap.read(FX / "mptcp" / "capture.pcap")
    for c in small.values():
        assert 0 < c["bytes"] < 10_000 and c["takeover"] is None
        subs = [f for f in reader.flows if f.get("kind") == "mptcp-subflow" and f.get("connection") == c["name"]]
        assert subs and [x["name"] for x in c["subflows"]] == [f["name"] for f in subs]
        assert [x["bytes"] for x in c["subflows"]] == [f["bytes"] for f in subs]
    assert format_summary(s).count("(small: ") == 2  # the printed table says so too


def test_pcapng_and_linux_sll2(tmp_path):
    """The MPTCP capture is `tcpdump -i any` (LINUX_SLL2); the same packets in a pcapng give the same result."""
    src = FX / "mptcp" / "capture.pcap"
    a = pcap.read(src)
    assert a.meta["packets"] > 1000
    # write a pcapng with the same packets (SHB, one IDB with if_name, EPBs)
    import struct
    out = tmp_path / "x.pcapng"
    with open(out, "wb") as w:
        shb_body = struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)
        w.write(struct.pack("<II", 0x0A0D0D0A, 12 + len(shb_body)) + shb_body + struct.pack("<I", 12 + len(shb_body)))
        name = b"any\x00"
        opts = struct.pack("<HH", 2, len(name)) + name + struct.pack("<HH", 9, 1) + b"\x06\x00\x00\x00" + b"\x00" * 4
        idb = struct.pack("<HHI", 276, 0, 262144) + opts
        w.write(struct.pack("<II", 1, 12 + len(idb)) + idb + struct.pack("<I", 12 + len(idb)))
        for ts, buf, origlen, _if, _lt in pcap.capture_records(src):
            us = int(round(ts * 1e6))
            pad = b"\x00" * (-len(buf) % 4)
            body = struct.pack("<IIIII", 0, us >> 32, us & 0xFFFFFFFF, len(buf), origlen) + buf + pad
            w.write(struct.pack("<II", 6, 12 + len(body)) + body + struct.pack("<I", 12 + len(body)))
    b = pcap.read(out)
    fa = {f["name"]: f["bytes"] for f in a.flows}
    fb = {f["name"]: f["bytes"] for f in b.flows}
    assert fa == fb


def test_capture_out_of_time_order_is_read(tmp_path):
    """A capture whose timestamps go backwards (here the same packets twice, as two pcapng
    sections or a merged capture can give) is read, not rejected as malformed; its per-flow
    samples keep one row per time bin."""
    import struct
    src = FX / "tcp" / "capture.pcap"
    raw = src.read_bytes()
    out = tmp_path / "twice.pcap"
    out.write_bytes(raw + raw[24:])  # classic pcap: one 24-byte header, then the records again
    a = pcap.read(src)
    b = pcap.read(out)
    assert struct.unpack("<I", raw[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D)
    assert b.meta["packets"] == 2 * a.meta["packets"]
    assert {f["name"] for f in b.flows} == {f["name"] for f in a.flows}
    s = b.samples
    assert len(s) and not s.duplicated(["flow", "subflow", "t"]).any()


# --------------------------------------------------------------------------- ss, iw, wil6210


def test_ss_reader():
    s = ss.read(FX / "tcp" / "ss.log")
    f = max(s.flows, key=lambda f: f["bytes"])
    assert f["cc"] == "bbr" and f["samples"] > 15
    sm = s.samples[s.samples["flow"] == f["name"]]
    assert sm["cwnd_bytes"].max() > 0 and sm["srtt_ms"].max() > 0 and sm["retransmits"].max() > 0
    # ss's bytes_acked over the run agree with iperf3's receiver within a few %
    cj = json.loads((FX / "tcp" / "client.json").read_text())
    assert f["bytes"] == pytest.approx(cj["end"]["sum_received"]["bytes"], rel=0.05)


def test_iw_and_wil6210_readers():
    i = iw.read(FX / "handmade" / "iw-wlan0.log")
    assert set(i.samples["mcs"].dropna().unique()) == {9.0, 6.0}
    assert list(i.events["kind"]) == ["down", "up", "rate"]
    w = wil6210.read(FX / "handmade" / "wil6210.csv")
    assert w.clock == "unix" and w.samples["mcs"].max() == 26  # 12.1 -> 26 as the driver reports it
    assert list(w.events["kind"]) == ["down", "up"]
    assert w.samples["sqi"].notna().all()


def test_wil6210_headerless_like_simulator():
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
        fh.write("8,12,connected,70,-60\n8,12,connected,70,-60\n9,12,2,70,-60\n9,12,1,70,-60\n")
    w = wil6210.read(fh.name)
    assert list(w.samples["t"]) == pytest.approx([0, 0.01, 0.02, 0.03])
    assert list(w.samples["link_up"]) == [True, True, True, False]


# --------------------------------------------------------------------------- mmpath run folder


def test_run_folder_reproduces_run_throughput(small_run, tmp_path):
    res, out = small_run
    a = mmpath.analyze([out], out=tmp_path / "an")
    got = {f["name"]: f["mbps"] for f in a.summary["flows"]}
    for f in res.summary["flows"]:
        assert got[f["name"]] == pytest.approx(f["goodput_mbps"], rel=1e-9, abs=1e-9), f["name"]
    for name in ("summary.json", "intervals.csv", "timeline.parquet", "report.html", "analysis.png"):
        assert (tmp_path / "an" / name).is_file()
    tl = pd.read_parquet(tmp_path / "an" / "timeline.parquet")
    for c in ("t_s", "flow", "path", "cwnd_bytes", "srtt_ms", "in_flight_bytes", "mcs", "rssi_dbm", "link_up"):
        assert c in tl.columns


def test_run_folder_of_an_mptcp_run_has_its_subflows(tmp_path):
    """An MPTCP run's folder: the connection and each subflow with the numbers the run reported."""
    res = mmpath.run("blockage", overrides={"duration_s": 1.5}, out=tmp_path / "run")
    a = mmpath.analyze([tmp_path / "run"], out=tmp_path / "an")
    got = {f["name"]: f for f in a.summary["flows"]}
    conn = res.summary["flows"][0]
    assert got[conn["name"]]["mbps"] == pytest.approx(conn["goodput_mbps"], rel=1e-9)
    for sf in conn["subflows"]:
        g = got[f"{conn['name']}/{sf['path']}"]
        assert g["kind"] == "mptcp-subflow" and g["subflow"] == sf["subflow"]
        assert g["mbps"] == pytest.approx(sf["goodput_mbps"], rel=1e-9)
        assert g["retrans_pct"] == pytest.approx(100 * sf["retransmits"] / sf["packets_sent"])
    # The connection runs over both paths; its retransmission share is its subflows' together,
    # and its RTT statistics cover every subflow's samples.
    c = got[conn["name"]]
    assert c["path"] == "11ad+11ac"
    subs = conn["subflows"]
    assert c["retrans_pct"] == pytest.approx(
        100 * sum(s["retransmits"] for s in subs) / sum(s["packets_sent"] for s in subs))
    assert conn["rtt_ms"]["samples"] == sum(s["rtt_ms"]["samples"] for s in subs)
    assert conn["rtt_ms"]["max"] == max(s["rtt_ms"]["max"] for s in subs)
    tl = pd.read_parquet(tmp_path / "an" / "timeline.parquet")
    assert set(tl["subflow"].unique()) >= {-1, 0, 1}


def test_cli_outputs(run_cli, tmp_path):
    rc, out, err = run_cli("analyze", FX / "mptcp_backup", "--out", tmp_path / "o",
                           "--baseline", "a=9.5", "--baseline", "b=3.8", "--expected", "10")
    assert rc == 0, err
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert any("ben" in f for f in s["flows"]) and any("normalized_throughput" in f for f in s["flows"])
    assert "backup takeover" in out
    html = (tmp_path / "o" / "report.html").read_text()
    assert "analysis.png" in html and "<script" not in html


# --------------------------------------------------------------------------- bad input


def _truncated(tmp_path, cut=5000):
    data = (FX / "tcp" / "capture.pcap").read_bytes()
    p = tmp_path / "cut.pcap"
    p.write_bytes(data[:cut])
    return p


def test_a_capture_cut_short_is_read_up_to_the_cut(run_cli, tmp_path):
    """As tcpdump and Wireshark do: the complete packets before the cut are analysed, one warning
    line says where the file ends, and summary.json's source records it."""
    p = _truncated(tmp_path)
    rc, out, err = run_cli("analyze", p, "--out", tmp_path / "o")
    assert rc == 0, err
    warn = [line for line in err.splitlines() if "warning" in line]
    assert len(warn) == 1 and "cut.pcap: truncated pcap file: packet record" in warn[0], err
    assert "complete packets before it were read" in warn[0]
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    src = next(s for s in summary["sources"] if s["kind"] == "pcap")
    assert "truncated pcap file" in src["truncated"]
    assert src["packets"] > 0
    assert summary["flows"], "the flow before the cut is still found"


@pytest.mark.parametrize("case,fragments", [
    ("truncated", ["cut.pcap", "truncated pcap file: packet record 1"]),
    ("empty", ["empty.log", "empty file"]),
    ("json", ["other.json", "not an iperf3 report"]),
    ("layout", ["notes.txt", "unknown log layout"]),
    ("badjson", ["bad.json", "invalid JSON"]),
    ("missing", ["nope.pcap", "no such file"]),
])
def test_bad_input_one_clear_error(run_cli, tmp_path, case, fragments):
    def write(name, text):
        (tmp_path / name).write_text(text)
        return tmp_path / name

    p = {
        "truncated": lambda: _truncated(tmp_path, 40),  # cut inside the first packet
        "empty": lambda: write("empty.log", ""),
        "json": lambda: write("other.json", '{"name": "x", "values": [1, 2]}'),
        "layout": lambda: write("notes.txt", "hello\nworld\n"),
        "badjson": lambda: write("bad.json", '{"start": {'),
        "missing": lambda: tmp_path / "nope.pcap",
    }[case]()
    rc, out, err = run_cli("analyze", p, "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, *fragments)
    assert "allowed" in err or case == "missing"
    assert not (tmp_path / "o").exists()


def test_capture_runs_command_and_samples_ss(tmp_path, run_cli):
    if shutil.which("ss") is None:
        pytest.skip("ss (iproute2) not installed")
    import sys
    # The command runs until the sampler has written three samples (not for a fixed time, which a
    # loaded machine could make too short); 60 s is only a deadline for a sampler that never writes.
    child = ("import sys, time\n"
             "end = time.monotonic() + 60\n"
             "while time.monotonic() < end:\n"
             "    try:\n"
             "        if open(sys.argv[1]).read().count('# mmpath-capture ss ') >= 3:\n"
             "            break\n"
             "    except FileNotFoundError:\n"
             "        pass\n"
             "    time.sleep(0.01)\n"
             "print('hi')\n")
    rc, out, err = run_cli("capture", "--out", tmp_path / "c", "--interval", "0.05", "--",
                           sys.executable, "-c", child, tmp_path / "c" / "ss.log")
    assert rc == 0, err
    meta = json.loads((tmp_path / "c" / "capture.json").read_text())
    assert meta["exit_status"] == 0 and meta["samples"]["ss.log"] >= 3
    assert (tmp_path / "c" / "stdout.txt").read_text() == "hi\n"
    assert ss.read(tmp_path / "c" / "ss.log").meta["samples"] >= 3


def _split_capture_by_subflow(src: Path, out_dir: Path) -> tuple[Path, Path]:
    """Split the MPTCP fixture's capture (LINUX_SLL2, IPv4) in two per-interface-like files: the
    connection's first subflow (and everything else) in one, its MP_JOIN subflow in the other."""
    import struct

    import dpkt

    with open(src, "rb") as f:
        r = dpkt.pcap.Reader(f)
        assert r.datalink() == 276
        pkts = list(r)

    def key(buf):
        ip = buf[20:]
        if len(ip) < 24 or ip[0] >> 4 != 4 or ip[9] != 6:
            return None
        ihl = (ip[0] & 15) * 4
        sp, dp = struct.unpack(">HH", ip[ihl:ihl + 4])
        a, b = (ip[12:16], sp), (ip[16:20], dp)
        return tuple(sorted([a, b]))

    def is_join_syn(buf):
        ip = buf[20:]
        ihl = (ip[0] & 15) * 4
        tcp = ip[ihl:]
        off = (tcp[12] >> 4) * 4
        opts, i = tcp[20:off], 0
        while i < len(opts):
            k = opts[i]
            if k in (0, 1):
                i += 1
                continue
            ln = opts[i + 1] if i + 1 < len(opts) else 0
            if k == 30 and ln >= 3 and opts[i + 2] >> 4 == 1 and tcp[13] & 0x02:
                return True
            i += max(ln, 2)
        return False

    joins = {key(b) for _, b in pkts if key(b) is not None and is_join_syn(b)}
    assert joins, "the fixture has an MP_JOIN subflow"
    a, b = out_dir / "wigig.pcap", out_dir / "wlan.pcap"
    for path, keep in ((a, lambda k: k not in joins), (b, lambda k: k in joins)):
        with open(path, "wb") as f:
            w = dpkt.pcap.Writer(f, snaplen=r.snaplen, linktype=276)
            for ts, buf in pkts:
                if keep(key(buf)):
                    w.writepkt(buf, ts)
    return a, b


def test_per_interface_captures_of_one_connection_read_as_one(tmp_path):
    """A multihomed host's one capture per interface: each holds one subflow. Read together they
    are one source with the whole connection, as the single capture of both subflows gives;
    read apart (a clock offset for one of them), the join's file cannot name its connection."""
    whole = mmpath.analyze([FX / "mptcp" / "capture.pcap"])
    a, b = _split_capture_by_subflow(FX / "mptcp" / "capture.pcap", tmp_path)
    both = mmpath.analyze([a, b])
    assert [s["path"].split("/")[-1] for s in both.summary["sources"]] == ["wigig.pcap+wlan.pcap"]

    def conns(res):
        return {f["name"]: f for f in res.summary["flows"] if f.get("kind") == "mptcp" and f["bytes"] > 10_000}

    w, m = conns(whole), conns(both)
    assert set(m) == set(w) and m
    for name, f in w.items():
        assert m[name]["bytes"] == f["bytes"]
        assert len(m[name]["subflows"]) == len(f["subflows"]) >= 2
        # The capture recorded interfaces (LINUX_SLL2 indices), so the paths keep those names.
        assert m[name]["path_shares"] == f["path_shares"]
    apart = mmpath.analyze([a, b], offsets={"wlan.pcap": 0.0})
    assert len(apart.summary["sources"]) == 2
    joined = [f for f in apart.summary["flows"] if f["source"].endswith("wlan.pcap") and f.get("kind") == "mptcp"]
    assert not joined, "without the MP_CAPABLE keys the join's file names no connection"


def test_mmpath_csv_trace_gives_the_link_state_and_events(tmp_path, run_cli):
    """An mmpath CSV trace (what a scenario replays, what the emulator shapes by) read by the
    core's own parser: its rate and link state on the timeline, link changes as events, placed
    among other sources by --offset; a malformed one is the core's one-line error."""
    f = tmp_path / "capacity-11ad.csv"
    f.write_text("t_s,rate_mbps,link_up,mcs\n0,1200,1,8\n2,,0,\n3.5,1100,1,\n")
    a = mmpath.analyze([f], offsets={"capacity-11ad.csv": 100.0})
    src = a.summary["sources"][0]
    assert (src["kind"], src["offset_s"]) == ("trace", 100.0)
    ev = a.events[a.events["kind"].isin(["down", "up"])]
    assert list(ev["kind"]) == ["down", "up"] and list(ev["path"]) == ["11ad", "11ad"]
    # Relative sources alone keep t = 0 at their own zero, so the shift shows as is.
    assert list(ev["t_s"]) == pytest.approx([102.0, 103.5])
    tl = a.timeline[a.timeline["path"] == "11ad"].sort_values("t_s")
    # A field a row leaves empty keeps its value (docs/traces.md): the rate while down is 1200.
    assert list(tl["trace_rate_mbps"].dropna().unique()) == [1200.0, 1100.0]
    assert set(tl["mcs"].dropna()) == {8.0}
    bad = tmp_path / "bad.csv"
    bad.write_text("t_s,rate_mbps\n0,fast\n")
    rc, _, err = run_cli("analyze", "trace:" + str(bad))
    assert rc == 2 and err.count("\n") == 1, err
    assert "bad.csv" in err and "rate_mbps" in err, err


def test_ss_tokens_name_connections_as_the_pcap_reader_does(tmp_path):
    """ss prints an MPTCP token without leading zeros (6e02b2c); the connection is named with
    all 8 hex digits, as the pcap reader names it from the keys (mptcp-06e02b2c)."""
    log = tmp_path / "ss.log"
    line = ("ESTAB 0 0 10.1.0.1:5201 10.1.0.2:45818 cubic rtt:2/1 mss:1448 cwnd:10 bytes_acked:{} "
            "tcp-ulp-mptcp flags:Mmec token:0000(id:0)/6e02b2c(id:0)\n")
    log.write_text("# mmpath-capture ss t=1795394913.40\n" + line.format(1000)
                   + "# mmpath-capture ss t=1795394913.50\n" + line.format(500000))
    flows = ss.read(log).flows
    assert [f.get("connection") for f in flows] == ["mptcp-06e02b2c:fwd"]


def test_analysis_plot_names_subflows_by_path_and_keeps_their_colour(tmp_path):
    """analysis.png: a subflow is labelled by its path and has one colour in every panel."""
    from mmpath.analyze.report import _series_style

    mmpath.run("blockage", overrides={"duration_s": 1.0}, out=tmp_path / "run")
    a = mmpath.analyze([tmp_path / "run"])
    style = _series_style(a)
    labels = {k[1:]: v[0] for k, v in style.items()}
    assert labels[("download", 0)] == "download/11ad" and labels[("download", 1)] == "download/11ac"
    assert labels[("download", -1)] == "download"
    colours = [v[1] for v in style.values()]
    assert len(set(colours)) == len(colours)


@pytest.mark.parametrize("name, text, where", [
    ("trace:bad.csv", "t_s,rate_mbps\n0,1\n0.5,fast\n", "bad.csv:3: column rate_mbps"),
    ("wil6210:w.csv", "time_ms,mcs,status\n0,8,connected\n10,40,connected\n", "w.csv:3: column mcs"),
    ("ss:ss.log", "\nESTAB 0 0 10.0.0.1:5201 10.0.0.2:4000 cubic\n", "ss.log:2: socket line before"),
    ("iw:iw.log", "Station 04:ce:14:0a:31:4d (on wlan0)\n", "iw.log:1: station data before"),
    ("iperf3:r.json", '{"start": {},\n "intervals": [,]}', "r.json:2: invalid JSON at column 16"),
])
def test_errors_name_the_line_as_the_simulator_does(run_cli, tmp_path, name, text, where):
    """FILE:N: what, as the scenario and trace readers say it (the analyzer wrote `FILE: line N:`)."""
    kind, _, fname = name.partition(":")
    (tmp_path / fname).write_text(text)
    rc, _, err = run_cli("analyze", f"{kind}:{tmp_path / fname}", "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, f"{tmp_path}/{where}")
    assert ": line " not in err and " at line " not in err, err


def test_every_input_kind_is_in_the_readers_the_help_and_the_docs():
    """analyze/kinds.py is the one list of input kinds: each has a reader, and the CLI help and
    docs/analyze.md name every one (the help once left out `trace`)."""
    import argparse

    from mmpath.analyze import cli, sources
    from mmpath.analyze.kinds import INPUTS, KINDS

    assert set(sources.READERS) == set(KINDS)
    sub = argparse.ArgumentParser().add_subparsers()
    helptext = " ".join(cli.add_parser(sub).format_help().split())
    doc = (Path(__file__).resolve().parents[2] / "docs" / "analyze.md").read_text(encoding="utf-8")
    for kind in KINDS:
        assert kind in helptext, kind
        assert f"`{kind}`" in doc, kind
    for inp in INPUTS:
        assert " ".join(inp.what.split()) in helptext, inp.what


def test_a_folder_of_variants_is_drawn_as_small_multiples(tmp_path):
    # One row per run (throughput | RTT), each path in one colour, shading in the legend: the
    # default demo's folder drew 13 series on one axis, its shading unexplained.
    from mmpath.analyze.report import figure_per_run
    from mmpath.api import simulate
    from mmpath.scenario import one_variant

    for v in ("tcp-11ad", "musher"):
        simulate(one_variant("default", ["duration_s=7"], variant=v)).save(tmp_path / "demo" / v)
    a = mmpath.analyze([str(tmp_path / "demo")], out=tmp_path / "out")
    assert (tmp_path / "out" / "analysis.png").stat().st_size > 10_000
    fig = figure_per_run(a)
    axes = fig.get_axes()
    assert len(axes) == 4  # 2 runs x (throughput, RTT)
    assert [ax.get_title(loc="left").split(":")[0] for ax in axes[::2]] == ["musher", "tcp-11ad"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:2] == ["path 11ad", "path 11ac"] and "a path down (link events)" in labels
    # 11ad in one colour in both rows
    colours = {ln.get_color() for ax in axes[::2] for ln in ax.get_lines() if ln.get_color() != "k"}
    assert colours == {"C0", "C1"}


def test_analysis_plot_draws_a_path_s_mcs_in_its_subflow_s_colour(tmp_path):
    # The MCS/RSSI panel coloured paths by sorted name (11ac first) while the throughput, cwnd
    # and RTT panels coloured each subflow by its series: 11ad's MCS took 11ac's colour.
    from mmpath.analyze.report import _series_style, figure

    mmpath.run("blockage", overrides={"duration_s": 1.0}, out=tmp_path / "run")
    a = mmpath.analyze([tmp_path / "run"])
    style = {k[1:]: v for k, v in _series_style(a).items()}
    _, panels = figure(a)
    mcs = {ln.get_label(): ln.get_color() for ln in panels["phy"].get_lines()}
    assert mcs["MCS 11ad"] == style[("download", 0)][1] and mcs["MCS 11ac"] == style[("download", 1)][1]
    # and as the run's own report draws them (report.plot_colours: C0, C1 in path order)
    from matplotlib.colors import to_hex

    assert (to_hex(mcs["MCS 11ad"]), to_hex(mcs["MCS 11ac"])) == ("#1f77b4", "#ff7f0e")


def test_an_emulator_folder_leaves_out_the_empty_capture_of_a_path_no_flow_used(tmp_path):
    """`mmpath emu run` captures every path; one no flow crossed holds the pcap header alone,
    which the pcap reader refuses: the folder's analysis reads the others and succeeds."""
    from mmpath.analyze.errors import AnalyzeInputError
    from mmpath.analyze.sources import PCAP_HEADER_BYTES, emu_folder

    d = tmp_path / "run"
    d.mkdir()
    (d / "emu.json").write_text(json.dumps({"t0_unix": 0.0}))
    shutil.copy(FX / "tcp" / "client.json", d / "iperf3-f.json")
    shutil.copy(FX / "tcp" / "capture.pcap", d / "a.pcap")
    (d / "b.pcap").write_bytes((FX / "tcp" / "capture.pcap").read_bytes()[:PCAP_HEADER_BYTES])
    files, _ = emu_folder(d)
    assert [f.name for f, _ in files] == ["iperf3-f.json", "a.pcap"]
    res = mmpath.analyze([str(d)], out=tmp_path / "out")
    assert res is not None
    # Given by name, the empty capture is still refused in one line.
    with pytest.raises(AnalyzeInputError, match="holds no packets"):
        mmpath.analyze([str(d / "b.pcap")])
