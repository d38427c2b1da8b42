"""The logs people record by hand: `ss` and `iw` in shell loops with their own timestamp lines
(`date +%s`, `date +%s.%N`, `# ...`, `date`, `date -R`, `date -Iseconds`, `date -Ins`, ISO 8601
without a timezone, ms digits; iw station dumps with no date lines at all), and `tcpdump -i any`
captures (Linux cooked v1 and v2) and a pcapng with two interfaces of different link types.

The ss logs and captures are real: fixtures/make_logstyles.sh recorded them in network namespaces
during one iperf3 run (all ss loops at once, both tcpdumps at once), so every style must tell the
same story. The iw styles are the hand-made log's samples with other timestamp lines
(fixtures/make_iw_styles.py: no radio on this machine)."""

from __future__ import annotations

import json
import struct
from datetime import datetime, timezone
from pathlib import Path

import dpkt
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mmpath
from mmpath.analyze import AnalyzeInputError, iw, pcap, ss, stamps
from mmpath.analyze.sources import read_one

from conftest import assert_one_line_error

FX = Path(__file__).parent / "fixtures"
LS = FX / "logstyles"
DATA = "10.1.0.2"  # the client's address: its flow to 10.1.0.1:5201 is the test's data

SUBSECOND = ["ss-date-sN.log", "ss-hash-sN.log", "ss-iso-ns-tin.log", "ss-iso-naive.log", "ss-date-ms.log"]
WHOLE_SECOND = ["ss-date-s.log", "ss-date.log", "ss-date-R.log", "ss-iso-seconds.log"]


def _data_flow(src):
    (f,) = [f for f in src.flows if f["name"].startswith(DATA + ":") and f["name"].endswith(">10.1.0.1:5201")
            and f["bytes"] > 10000]
    return f


# --------------------------------------------------------------------------- the timestamp forms


@pytest.mark.parametrize("line, unix, naive", [
    ("1796516745", 1796516745.0, False),                              # date +%s
    ("1796516745.954131517", 1796516745.954131517, False),            # date +%s.%N
    ("# 1796516745.954131517", 1796516745.954131517, False),          # echo "# $(date +%s.%N)"
    ("1796516745954", 1796516745.954, False),                         # date +%s%3N
    ("1796516745954131517", 1796516745.954131517, False),             # date +%s%N
    ("Sun Dec  6 00:25:45 UTC 2026", 1796516745.0, False),            # date (C locale)
    ("Sun 06 Dec 2026 12:25:45 AM UTC", 1796516745.0, False),         # date (en_US locale)
    ("Sun 06 Dec 2026 12:25:45 PM GMT", 1796516745.0 + 12 * 3600, False),
    ("Sun, 06 Dec 2026 00:25:45 +0000", 1796516745.0, False),         # date -R
    ("# Sat, 05 Dec 2026 19:25:45 -0500", 1796516745.0, False),
    ("2026-12-06T00:25:45+00:00", 1796516745.0, False),               # date -Iseconds
    ("2026-12-06T01:25:45,954131517+01:00", 1796516745.954131517, False),  # date -Ins, TZ=Europe/Berlin
    ("2026-12-06T00:25:45.5Z", 1796516745.5, False),
    ("2026-12-06T00:25:45.954131517", 1796516745.954131517, True),    # date +%FT%T.%N
    ("2026-12-06 00:25:45", 1796516745.0, True),                      # date '+%F %T'
])
def test_every_documented_timestamp_form_gives_its_unix_time(line, unix, naive):
    st = stamps.parse(line)
    assert st is not None and st.t == pytest.approx(unix, abs=1e-6) and st.naive is naive


@pytest.mark.parametrize("line", ["ESTAB 0 0 10.1.0.2:35898 10.1.0.1:5201", "\t cubic rtt:2/1", "# run 3 at 12:00",
                                  "State Recv-Q Send-Q", "Station 04:ce:14:0a:21:5c (on wlan0)", ""])
def test_lines_of_the_logs_themselves_are_not_timestamps(line):
    assert stamps.parse(line) is None
    assert not stamps.looks_like_time(line)  # so no error either: the readers go on


# --------------------------------------------------------------------------- ss in shell loops


def test_ss_logs_of_every_timestamp_style_recorded_together_agree():
    """Ten loops logged `ss` during the same iperf3 test, each with its own timestamp style: each
    reads, finds the data socket, and places it where the `date +%s.%N` loop does (sub-second
    styles: within one 0.2 s loop period; whole-second styles: within their 1 s resolution plus
    the loop period), with the bytes a loop of the same period sees."""
    ref = _data_flow(ss.read(LS / "ss-date-sN.log"))
    start = json.loads((LS / "client.json").read_text())["start"]["timestamp"]["timesecs"]
    assert start - 1 <= ref["start"] <= start + 1
    for name in SUBSECOND:
        f = _data_flow(ss.read(LS / name))
        assert abs(f["start"] - ref["start"]) < 0.25 and abs(f["end"] - ref["end"]) < 0.25, name
        # each end may be one 0.2 s loop period (+ jitter) apart: 0.25 s at the 1 Mbit/s shaper
        assert abs(f["bytes"] - ref["bytes"]) <= 2 * 0.25 * 125_000, name
        assert f["samples"] >= 12, name
    for name in WHOLE_SECOND:
        src = ss.read(LS / name)
        f = _data_flow(src)
        assert src.meta["samples"] >= 4, name
        assert f["start"] == int(f["start"]), name  # whole seconds, as `date` wrote them
        assert ref["start"] - 2.3 < f["start"] < ref["end"] and ref["start"] < f["end"] < ref["end"] + 2.3, name
        assert f["bytes"] > 50000, name


def test_ss_without_o_and_with_iso_ns_reads_like_the_oneline_log():
    """`ss -tin` (the TCP info on an indented second line) under `date -Ins` lines: same socket,
    same RTT and cwnd kind of samples as the `ss -tinO` loop."""
    src = ss.read(LS / "ss-iso-ns-tin.log")
    f = _data_flow(src)
    smp = src.samples[src.samples["flow"] == f["name"]]
    assert smp["srtt_ms"].notna().sum() >= 10 and smp["cwnd_bytes"].notna().sum() >= 10
    assert f["cc"] == _data_flow(ss.read(LS / "ss-date-sN.log"))["cc"] and f["cc"]


def test_a_log_without_timezone_is_read_as_utc_and_says_so(capsys):
    src = ss.read(LS / "ss-iso-naive.log")
    assert src.meta["timezone"].startswith("none")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "read as UTC" in err and "--offset" in err
    assert "timezone" not in ss.read(LS / "ss-date-sN.log").meta


def test_analyze_places_the_iso_ss_log_with_the_capture(tmp_path):
    """The whole pipeline with a `date -Ins` ss log beside the capture and iperf3's report of the
    same test: one origin, and the ss flow's first sample within a loop period of the capture's."""
    a = mmpath.analyze([LS / "client.json", LS / "sll2.pcap", LS / "ss-iso-ns-tin.log"], out=tmp_path / "a")
    rows = {(r["source"].rsplit("/", 1)[-1], r["name"]): r for r in a.summary["flows"]
            if r["name"].startswith(DATA + ":")}
    cap = rows[("sll2.pcap", next(n for s, n in rows if s == "sll2.pcap"))]
    log = next(r for (s, _), r in rows.items() if s == "ss-iso-ns-tin.log")
    assert cap["mbps"] == pytest.approx(0.98, abs=0.1)  # tbf at 1 Mbit/s
    assert log["mbps"] == pytest.approx(cap["mbps"], rel=0.1)


def test_a_timezone_name_is_refused_in_one_line_naming_file_line_and_forms(run_cli, tmp_path):
    """`TZ=Europe/Berlin date` writes `CET`, a name several zones share: one error line, FILE:1:,
    what to record instead, and the accepted forms; exit status 2, no traceback."""
    rc, _, err = run_cli("analyze", LS / "ss-date-cet.log", "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, "ss-date-cet.log:1: timestamp 'Sun Dec ", "CET 2026' not understood: timezone name 'CET'",
                          "TZ=UTC date", "date -R", "allowed:", "date -Ins", "`#`")


@pytest.mark.parametrize("fmt", [
    lambda t: datetime.fromtimestamp(t, timezone.utc).strftime("%H:%M:%S"),         # date +%T
    lambda t: datetime.fromtimestamp(t, timezone.utc).strftime("%b %d %H:%M:%S"),   # no year
    lambda t: str(int(t))[:6],                                                       # a cut number
])
def test_a_time_in_a_form_not_understood_is_an_error_on_its_line(run_cli, tmp_path, fmt):
    """The real `date +%s.%N` log with its timestamp lines rewritten in a form without a date (or a
    cut Unix time): the first such line is named with the accepted forms, instead of the samples
    being run together under no time."""
    lines = (LS / "ss-date-sN.log").read_text().splitlines()
    out = []
    for ln in lines:
        st = stamps.parse(ln) if ln[:1].isdigit() else None
        out.append(fmt(st.t) if st else ln)
    first = next(i for i, ln in enumerate(lines, 1) if ln[:1].isdigit())
    shown = out[first - 1]
    log = tmp_path / "ss.log"
    log.write_text("# run 3 at 12:00, a comment\n" + "\n".join(out) + "\n")
    rc, _, err = run_cli("analyze", f"ss:{log}", "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, f"ss.log:{first + 1}: timestamp line not understood: '{shown}'", "date +%s.%N",
                          "ISO 8601")


# --------------------------------------------------------------------------- iw in shell loops


def _events(src):
    return [(round(e["t"], 3), e["kind"], None if np.isnan(e["value"]) else e["value"])
            for e in src.events.to_dict("records")]


REF_IW = FX / "handmade" / "iw-wlan0.log"


@pytest.mark.parametrize("name", ["iw-date-sN.log", "iw-hash-sN.log", "iw-iso-ns.log", "iw-iso-naive.log",
                                  "iw-date-ms.log"])
def test_iw_logs_with_subsecond_date_lines_read_as_the_capture_log(name):
    ref, src = iw.read(REF_IW), iw.read(LS / "iw" / name)
    assert _events(src) == _events(ref) == [(1795328938.0, "down", None), (1795328938.4, "up", None),
                                            (1795328938.8, "rate", 585.0)]
    cols = ["t", "mcs", "phy_rate_mbps", "rssi_dbm", "link_up"]
    assert src.samples[cols].round(3).equals(ref.samples[cols].round(3))


@pytest.mark.parametrize("name", ["iw-date.log", "iw-date-R.log", "iw-iso-seconds.log"])
def test_iw_logs_with_whole_second_date_lines(name):
    """A `sleep 1` loop sees the samples on whole seconds: the link is down at 938 s, up at 939 s."""
    src = iw.read(LS / "iw" / name)
    assert _events(src) == [(1795328938.0, "down", None), (1795328939.0, "up", None)]
    assert src.samples["t"].tolist() == [1795328937.0, 1795328938.0, 1795328939.0]


@pytest.mark.parametrize("name", ["iw-dump-only.log", "iw-dump-link.log"])
def test_iw_station_dumps_without_date_lines_are_timed_by_current_time(name):
    """No date lines: each station entry's `current time: N ms` times it. With `iw link` in the loop
    the `Not connected.` lines mark the link down; without it the empty dumps print nothing and the
    gap does: the same down/up/rate events as the timed log."""
    src = iw.read(LS / "iw" / name)
    assert src.meta["timed_by"] == "current time"
    assert _events(src) == _events(iw.read(REF_IW))
    up = src.samples[src.samples["link_up"]]
    assert up["mcs"].notna().all() and len(up) == 26


def test_iw_link_alone_without_date_lines_names_the_line_and_what_times_it(run_cli, tmp_path):
    text = "".join(ln for ln in (LS / "iw" / "iw-dump-link.log").read_text().splitlines(True)
                   if "current time" not in ln)
    (tmp_path / "iw-wlan0.log").write_text(text)
    rc, _, err = run_cli("analyze", f"iw:{tmp_path / 'iw-wlan0.log'}", "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, "iw-wlan0.log:1: station data before any timestamp line", "current time",
                          "date -Ins")


def test_an_ap_station_dump_without_date_lines_keeps_each_station_a_link(tmp_path):
    """An AP's dump lists two stations, each entry with its own `current time` a few ms apart: one
    sample per dump, each station its own link, down while it is missing from the dumps."""
    def entry(mac, ms, mcs):
        return (f"Station {mac} (on wlan0)\n\tsignal:  \t-50 dBm\n\ttx bitrate:\t{mcs * 100}.0 MBit/s MCS {mcs}\n"
                f"\tcurrent time:\t{ms} ms\n")
    t0, a, b = 1795328936000, "04:ce:14:0a:21:5c", "04:ce:14:0a:21:5d"
    text = "".join(entry(a, t0 + 100 * k, 7) + (entry(b, t0 + 100 * k + 3, 4) if not 3 <= k < 6 else "")
                   for k in range(10))
    (tmp_path / "iw-wlan0.log").write_text(text)
    src = iw.read(tmp_path / "iw-wlan0.log")
    assert src.meta["stations"] == [a, b] and src.meta["samples"] == 10
    ev = [(e["path"], round(e["t"] - t0 / 1e3, 3), e["kind"]) for e in src.events.to_dict("records")]
    assert ev == [(f"wlan0/{b}", 0.3, "down"), (f"wlan0/{b}", 0.6, "up")]


# --------------------------------------------------------------------------- tcpdump -i any, pcapng


def _dpkt_tcp(path: Path, decode) -> tuple[int, int]:
    """(TCP packets, TCP payload bytes) as dpkt decodes the link layer of every packet."""
    n = payload = 0
    with open(path, "rb") as f:
        for _, buf in dpkt.pcap.Reader(f):
            ip = decode(buf).data
            if isinstance(ip, dpkt.ip.IP) and isinstance(ip.data, dpkt.tcp.TCP):
                n += 1
                payload += ip.len - ip.hl * 4 - ip.data.off * 4
    return n, payload


def _payload(src) -> int:
    return sum(f["bytes"] for f in src.flows if f["kind"] == "tcp")


@pytest.mark.parametrize("name, linktype, decode", [
    ("sll.pcap", "LINUX_SLL", dpkt.sll.SLL),     # tcpdump -i any -y LINUX_SLL (link type 113)
    ("sll2.pcap", "LINUX_SLL2", dpkt.sll2.SLL2),  # tcpdump -i any (4.99: link type 276)
])
def test_tcpdump_any_captures_in_both_cooked_formats(name, linktype, decode):
    """Both captures ran at once on the same test: same packets, the link type named, every TCP
    packet dpkt decodes counted, and the data flow's bytes what iperf3's receiver got."""
    src = pcap.read(LS / name)
    n, _ = _dpkt_tcp(LS / name, decode)
    assert src.meta["linktypes"] == linktype and src.meta["tcp"] == n == src.meta["packets"]
    # The capture counts every byte ACKed until it stops, iperf3 what its receiver read in its
    # window: a few per cent apart (the analyzer's own comparison, with the ACK slack, is < 2 %).
    got = json.loads((LS / "client.json").read_text())["end"]["sum_received"]["bytes"]
    assert _data_flow(src)["bytes"] == pytest.approx(got, rel=0.04)


def test_the_two_cooked_captures_give_the_same_flows():
    a, b = pcap.read(LS / "sll.pcap"), pcap.read(LS / "sll2.pcap")
    key = ("name", "bytes", "retransmits")
    assert [{k: f.get(k) for k in key} for f in a.flows] == [{k: f.get(k) for k in key} for f in b.flows]
    assert _data_flow(b)["path"].startswith("if")  # SLL2 names the interface (index), SLL v1 cannot


def _pcapng_packets(path: Path):
    """(interface name, link type, packet bytes) of every Enhanced Packet Block, decoded by dpkt's
    own block classes (its Reader keeps only the first interface), independently of the analyzer."""
    from dpkt import pcapng
    blob, i, ifaces = path.read_bytes(), 0, []
    while i < len(blob):
        btype, blen = struct.unpack_from("<II", blob, i)
        if btype == pcapng.PCAPNG_BT_IDB:
            idb = pcapng.InterfaceDescriptionBlockLE(blob[i:i + blen])
            name = next(o.data for o in idb.opts if o.code == pcapng.PCAPNG_OPT_IF_NAME)
            ifaces.append((name.decode(), idb.linktype))
        elif btype == pcapng.PCAPNG_BT_EPB:
            epb = pcapng.EnhancedPacketBlockLE(blob[i:i + blen])
            yield ifaces[epb.iface_id] + (epb.pkt_data,)
        i += blen


def test_pcapng_with_an_ethernet_and_a_cooked_interface():
    """dumpcap recorded path A on a0 (Ethernet) and path B on `any` (LINUX_SLL, filtered to path B's
    subnet) into one pcapng: each packet is decoded by its own interface's link type (dpkt agrees
    packet by packet), and the MPTCP connection is whole: both subflows, each on its interface,
    and the data iperf3 received."""
    path = LS / "mptcp_2if.pcapng"
    per_if: dict[str, int] = {}
    for ifname, lt, data in _pcapng_packets(path):
        frame = dpkt.ethernet.Ethernet(data) if lt == 1 else dpkt.sll.SLL(data)
        assert isinstance(frame.data, dpkt.ip.IP) and isinstance(frame.data.data, dpkt.tcp.TCP)
        per_if[f"{ifname}/{lt}"] = per_if.get(f"{ifname}/{lt}", 0) + 1
    assert set(per_if) == {"a0/1", "any/113"} and min(per_if.values()) > 100
    src = pcap.read(path)
    assert src.meta["linktypes"] == "EN10MB, LINUX_SLL" and src.meta["tcp"] == sum(per_if.values())
    (conn,) = [f for f in src.flows if f["kind"] == "mptcp" and f["bytes"] > 10000]  # not iperf3's control
    subs = sorted((f["path"], f["name"].split(":")[0]) for f in src.flows
                  if f["kind"] == "mptcp-subflow" and f["bytes"] > 10000)
    assert subs == [("a0", "10.1.0.2"), ("any", "10.2.0.2")]
    got = json.loads((LS / "mptcp_client.json").read_text())["end"]["sum_received"]["bytes"]
    assert conn["bytes"] == pytest.approx(got, rel=0.04)  # as for the cooked captures


def test_analyze_agrees_with_iperf3_on_each_new_capture(tmp_path):
    for cap, report in (("sll.pcap", "client.json"), ("sll2.pcap", "client.json"),
                        ("mptcp_2if.pcapng", "mptcp_client.json")):
        a = mmpath.analyze([LS / report, LS / cap], out=tmp_path / cap)
        rows = a.summary["iperf3_agreement"]
        assert rows and all(abs(r["diff_pct"]) < 2.0 for r in rows), (cap, rows)


def test_stamps_error_type_is_the_analyzer_error():
    """The readers turn a StampError into the analyzer's own one-line error (never a traceback)."""
    with pytest.raises(AnalyzeInputError):
        ss.read(LS / "ss-date-cet.log")


def test_whole_second_stamps_in_a_faster_loop_keep_the_rate(tmp_path):
    """The 0.2 s loop's log with its stamps cut to whole seconds (`date +%s` in a `sleep 0.2`
    loop): five samples share each second. Only the first of them is read, so the bytes between
    two stamps span the second between them: the 1 Mbit/s shaper's rate, not a 0-length interval
    whose bytes land in one 0.1 s bin (that read ~9 Mbit/s). The flow's mean is as coarse as its
    stamps: the first sample, taken late in its second, is placed at the second's start."""
    text = (LS / "ss-date-sN.log").read_text()
    cut = "\n".join(ln.split(".")[0] if ln[:1].isdigit() else ln for ln in text.splitlines()) + "\n"
    (tmp_path / "ss.log").write_text(cut)
    a = mmpath.analyze([tmp_path / "ss.log"], out=tmp_path / "a")
    data = a.intervals[a.intervals["flow"].str.startswith(DATA + ":")]
    assert 0.5 < data["mbps"].max() < 1.3
    (row,) = [f for f in a.summary["flows"] if f["name"].startswith(DATA + ":")]
    assert 0.5 < row["mbps"] < 1.3


# --------------------------------------------------------------------------- fuzz (as test_fuzz.py)

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_STAMPISH = st.text(alphabet="0123456789 :-+.,#TZ", max_size=40) | st.sampled_from([
    "Sun Dec  6 00:25:45 UTC 2026", "Sun, 06 Dec 2026 00:25:45 +0000", "2026-12-06T00:25:45,954+01:00",
    "Mon Feb 30 25:61:61 XYZ 0000", "Sun 06 Dec 2026 13:25:45 PM UTC", "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+14:00", "99999999999999999999", "1" * 19 + ".5"])


@SETTINGS
@given(st.one_of(_STAMPISH, st.text(max_size=40)))
def test_fuzz_timestamp_lines_read_or_say_why(line):
    """Any line: a time, no timestamp at all, or the StampError the readers turn into their one line."""
    try:
        st_ = stamps.parse(line)
    except stamps.StampError as e:
        assert str(e) and "\n" not in str(e)
    else:
        assert st_ is None or isinstance(st_.t, float)


@SETTINGS
@given(st.data())
def test_fuzz_ss_and_iw_logs_with_mutated_timestamp_lines(tmp_path, data):
    """The real `date -Ins` ss log and the `date` iw log with their timestamp lines replaced by
    fuzzed ones: each reads or fails with one line naming the file."""
    name, kind = data.draw(st.sampled_from([("ss-iso-ns-tin.log", "ss"), ("iw/iw-date.log", "iw")]))
    lines = (LS / name).read_text().splitlines()[:120]
    for i, ln in enumerate(lines):
        if stamps.parse(ln) is not None and data.draw(st.booleans()):
            lines[i] = data.draw(_STAMPISH)
    p = tmp_path / "f.log"
    p.write_text("\n".join(lines) + "\n")
    try:
        read_one(p, kind)
    except AnalyzeInputError as e:
        assert "\n" not in str(e) and str(p) in str(e)


def test_ss_without_header_lines_is_still_found_an_ss_log(tmp_path):
    """`ss -tinOH` (no `State Recv-Q ...` header) under `date -Ins` lines: found by its content (a
    timestamp line, then a socket line) and read like the log with headers."""
    text = "".join(ln for ln in (LS / "ss-iso-ns-tin.log").read_text().splitlines(True)
                   if not ln.startswith("State"))
    (tmp_path / "ss.log").write_text(text)
    a = mmpath.analyze([tmp_path / "ss.log"], out=tmp_path / "a")
    assert a.summary["sources"][0]["kind"] == "ss"
    (row,) = [f for f in a.summary["flows"] if f["name"].startswith(DATA + ":")]
    assert row["bytes"] == _data_flow(ss.read(LS / "ss-iso-ns-tin.log"))["bytes"]


def test_a_pcapng_interface_of_a_link_type_not_read_is_named_and_the_rest_read(tmp_path, capsys):
    """The two-interface pcapng with its second interface's link type turned into 127 (radiotap, a
    monitor interface's): one warning line naming that interface, its packet count and the link
    types read; the Ethernet interface's subflow is still read."""
    blob = bytearray((LS / "mptcp_2if.pcapng").read_bytes())
    i, idbs = 0, []
    while i < len(blob):
        btype, blen = struct.unpack_from("<II", blob, i)
        if btype == 1:
            idbs.append(i)
        i += blen
    struct.pack_into("<H", blob, idbs[1] + 8, 127)
    (tmp_path / "x.pcapng").write_bytes(bytes(blob))
    src = pcap.read(tmp_path / "x.pcapng")
    n_any = sum(1 for ifname, _, _ in _pcapng_packets(LS / "mptcp_2if.pcapng") if ifname == "any")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"interface any of link type 127: its {n_any} packets are not read" in err[0]
    assert "113 (LINUX_SLL)" in err[0] and "276 (LINUX_SLL2)" in err[0]
    assert [f["path"] for f in src.flows if f["kind"] == "mptcp-subflow" and f["bytes"] > 10000] == ["a0"]
