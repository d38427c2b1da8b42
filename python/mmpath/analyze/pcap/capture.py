"""Capture containers: libpcap and pcapng files streamed into (ts, data, origlen, iface_name, linktype).

Why the containers are parsed here rather than by dpkt's readers: ``dpkt.pcapng.Reader`` keeps only
the first Interface Description Block (a multi-interface pcapng, as Wireshark writes for several
interfaces, would get every packet's link type and timestamp resolution from interface 0), and
``dpkt.pcap.Reader`` silently yields a short last packet when a file is truncated; both are a few
dozen lines of the formats' specs. A pcap file is read in CHUNK (4 MiB) pieces.

A capture cut short inside a packet record (tcpdump killed, a disk filled, a partial copy) is read
up to the cut, as tcpdump and Wireshark do, and the cut is reported (`capture_records`' `notes`); a cut
before the first complete packet, or a corrupt record, is an error.

Formats:
- pcap: https://www.tcpdump.org/manpages/pcap-savefile.5.html (magic a1b2c3d4 µs / a1b23c4d ns)
- pcapng: draft-ietf-opsawg-pcapng (SHB 0x0A0D0D0A, IDB 1, EPB 6, SPB 3, obsolete PB 2,
  if_name option 2, if_tsresol option 9)
- link types: https://www.tcpdump.org/linktypes.html (EN10MB 1, RAW 101/12/14, LINUX_SLL 113,
  LINUX_SLL2 276, NULL 0, IPV4 228, IPV6 229)
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..errors import AnalyzeInputError

CHUNK = 4 << 20
MAX_RECORD = 1 << 28  # a record longer than 256 MiB means a corrupt length field
ALLOWED = "a libpcap file (magic a1b2c3d4 or a1b23c4d) or pcapng file (starting with a Section Header Block)"

_PCAP_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9),
}
LINKTYPES = {0: "NULL", 1: "EN10MB", 12: "RAW", 14: "RAW", 101: "RAW", 113: "LINUX_SLL",
             276: "LINUX_SLL2", 228: "IPV4", 229: "IPV6"}



class _Cut(Exception):
    """A packet record or block cut short at the end of the file (read up to it, see `capture_records`)."""


_CUT_ALLOWED = "a complete capture; re-copy the file or let the capture tool exit cleanly (SIGINT)"


def is_pcap(head: bytes) -> bool:
    return head[:4] in _PCAP_MAGIC or head[:4] == b"\x0a\x0d\x0d\x0a"


def capture_records(path: Path, notes: dict | None = None):
    """Yield (ts, data, origlen, iface_name, linktype) for every packet, streaming; clear errors on
    damage. A file cut short inside a record after at least one complete packet ends there:
    ``notes["truncated"]`` says where (with `notes` None the cut is an error, as before)."""
    n = 0
    try:
        for rec in _containers(path):
            n += 1
            yield rec
    except _Cut as cut:
        if notes is None or n == 0:
            raise AnalyzeInputError(path, str(cut), _CUT_ALLOWED) from None
        notes["truncated"] = f"{cut}; the {n} complete packet{'s' if n != 1 else ''} before it were read"


def _containers(path: Path):
    try:
        f = open(path, "rb")
    except OSError as e:
        raise AnalyzeInputError(path, f"cannot open: {e.strerror}") from None
    with f:
        head = f.read(4)
        if not head:
            raise AnalyzeInputError(path, "empty file", ALLOWED)
        f.seek(0)
        if head in _PCAP_MAGIC:
            yield from _pcap_records(path, f)
        elif head == b"\x0a\x0d\x0d\x0a":
            yield from _pcapng_records(path, f)
        else:
            raise AnalyzeInputError(path, f"not a capture file (starts with bytes {head.hex()})", ALLOWED)


def _pcap_records(path, f):
    gh = f.read(24)
    if len(gh) < 24:
        raise AnalyzeInputError(path, f"truncated pcap file: the 24-byte file header has only {len(gh)} bytes",
                                "a complete capture; re-copy the file or let tcpdump exit cleanly")
    end, scale = _PCAP_MAGIC[gh[:4]]
    linktype = struct.unpack(end + "I", gh[20:24])[0] & 0x0FFFFFFF
    if linktype not in LINKTYPES:
        raise AnalyzeInputError(path, f"unsupported link type {linktype}",
                                "link types " + ", ".join(f"{v} ({k})" for k, v in sorted(LINKTYPES.items())))
    rh = struct.Struct(end + "IIII")
    buf = b""
    pos = 0
    offset = 24  # file offset of buf[0]
    n = 0
    while True:
        if len(buf) - pos < 16:
            more = f.read(CHUNK)
            if not more:
                if len(buf) - pos:
                    raise _Cut(f"truncated pcap file: packet record {n + 1} at byte {offset + pos} is cut "
                               f"short ({len(buf) - pos} of 16 header bytes)")
                return
            offset += pos
            buf = buf[pos:] + more
            pos = 0
            continue
        sec, frac, caplen, origlen = rh.unpack_from(buf, pos)
        if caplen > MAX_RECORD:
            raise AnalyzeInputError(path, f"corrupt pcap file: packet record {n + 1} at byte {offset + pos} "
                                          f"claims {caplen} bytes", ALLOWED)
        if len(buf) - pos < 16 + caplen:
            more = f.read(max(CHUNK, caplen + 16))
            if not more:
                raise _Cut(f"truncated pcap file: packet record {n + 1} at byte {offset + pos} is cut short "
                           f"({len(buf) - pos - 16} of {caplen} bytes)")
            offset += pos
            buf = buf[pos:] + more
            pos = 0
            continue
        s = pos + 16
        pos = s + caplen
        n += 1
        yield sec + frac * scale, buf[s:pos], origlen, None, linktype


def _pcapng_records(path, f):
    end = "<"
    ifaces: list[tuple[int, float, str | None]] = []  # (linktype, seconds per tick, name)
    n = 0
    offset = 0
    while True:
        bh = f.read(8)
        if not bh:
            return
        if len(bh) < 8:
            raise _Cut(f"truncated pcapng file: block at byte {offset} is cut short")
        btype_le = struct.unpack("<I", bh[:4])[0]
        if btype_le == 0x0A0D0D0A:
            bom = f.read(4)
            if len(bom) < 4:
                raise AnalyzeInputError(path, "truncated pcapng file: section header is cut short", ALLOWED)
            if bom == b"\x4d\x3c\x2b\x1a":
                end = "<"
            elif bom == b"\x1a\x2b\x3c\x4d":
                end = ">"
            else:
                raise AnalyzeInputError(path, f"corrupt pcapng section header (byte-order magic {bom.hex()})", ALLOWED)
            blen = struct.unpack(end + "I", bh[4:8])[0]
            body = f.read(blen - 12) if blen >= 12 else b""
            if blen < 28 or len(body) < blen - 12:
                raise AnalyzeInputError(path, f"truncated or corrupt pcapng section header at byte {offset}", ALLOWED)
            ifaces = []  # interface ids are per section
            offset += blen
            continue
        btype, blen = struct.unpack(end + "II", bh)
        if blen < 12 or blen % 4 or blen > MAX_RECORD:
            raise AnalyzeInputError(path, f"corrupt pcapng file: block at byte {offset} has length {blen}",
                                    "block lengths that are multiples of 4 and >= 12")
        body = f.read(blen - 8)
        if len(body) < blen - 8:
            raise _Cut(f"truncated pcapng file: block {n + 1} at byte {offset} is cut short "
                       f"({len(body) + 8} of {blen} bytes)")
        offset += blen
        body = body[:-4]
        if btype == 1:  # Interface Description Block
            lt = struct.unpack(end + "H", body[:2])[0]
            tick, name = 1e-6, None
            i = 8
            while i + 4 <= len(body):
                code, olen = struct.unpack(end + "HH", body[i:i + 4])
                val = body[i + 4:i + 4 + olen]
                if code == 0:
                    break
                if code == 2:
                    name = val.decode("utf-8", "replace").rstrip("\x00")
                elif code == 9 and val:
                    v = val[0]
                    tick = 2.0 ** -(v & 0x7F) if v & 0x80 else 10.0 ** -(v & 0x7F)
                i += 4 + olen + (-olen % 4)
            ifaces.append((lt, tick, name))
        elif btype in (6, 2):  # Enhanced Packet Block / obsolete Packet Block
            if btype == 6:
                iid, hi, lo, caplen, origlen = struct.unpack(end + "IIIII", body[:20])
            else:
                iid, _drops, hi, lo, caplen, origlen = struct.unpack(end + "HHIIII", body[:20])
            if iid >= len(ifaces):
                raise AnalyzeInputError(path, f"corrupt pcapng file: packet refers to interface {iid} "
                                              f"but only {len(ifaces)} were described", ALLOWED)
            lt, tick, name = ifaces[iid]
            n += 1
            yield ((hi << 32) | lo) * tick, body[20:20 + caplen], origlen, name, lt
        # other blocks (SPB without timestamps, name resolution, statistics, ...) carry nothing we use
