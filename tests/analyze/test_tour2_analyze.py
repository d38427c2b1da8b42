"""Defects found by a second tour of `mmpath analyze` with real testbed logs (netns + veth, iperf3
-J TCP/UDP/-R/--bidir/-P 2/MPTCP, tcpdump pcap (Ethernet, SLL, SLL2, ns precision, IPv6, BIG TCP),
dumpcap pcapng, `ss -tin`, mmpath run folders). Each test failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import dpkt

import mmpath
from mmpath.analyze import pcap

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
