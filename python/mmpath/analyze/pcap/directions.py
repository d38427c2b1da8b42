"""One direction of a TCP connection or a UDP flow as read from a capture: packet fields in compact
arrays (packets.py fills them, options.py adds the TCP options, metrics.py reads them)."""

from __future__ import annotations

from array import array


class TcpDir:
    """One direction of a TCP connection (src:sport -> dst:dport), packet fields in arrays."""

    __slots__ = ("ts", "seq", "ack", "plen", "flags", "win", "wscale", "syn_seen", "sacks", "mptcp",
                 "iface", "sack_ok")

    def __init__(self, iface):
        self.ts = array("d")
        self.seq = array("I")
        self.ack = array("I")
        self.plen = array("l")
        self.flags = array("B")
        self.win = array("H")
        self.wscale = None
        self.syn_seen = False
        self.sack_ok = False
        self.sacks: list[tuple[int, tuple]] = []  # (packet index, ((left, right), ...))
        self.mptcp: list[tuple[int, int, tuple]] = []  # (packet index, subtype, fields)
        self.iface = iface


class UdpDir:
    __slots__ = ("ts", "plen", "iface")

    def __init__(self, iface):
        self.ts = array("d")
        self.plen = array("l")
        self.iface = iface
