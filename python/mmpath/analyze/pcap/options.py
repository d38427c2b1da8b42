"""TCP option decoding (one packet's option bytes into a direction's state) and MPTCP option kind 30.

- TCP options: RFC 9293 (MSS 2, window scale 3 (RFC 7323), SACK-permitted 4 / SACK 5 (RFC 2018),
  timestamps 8)
- MPTCP option kind 30 and its subtypes: RFC 8684 section 3 (see _mptcp_option)
"""

from __future__ import annotations

import ipaddress
import struct

from .directions import TcpDir

# TCP flag bits
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

# MPTCP option subtypes (RFC 8684 section 3, IANA "MPTCP Option Subtypes")
MP_CAPABLE, MP_JOIN, DSS, ADD_ADDR, REMOVE_ADDR, MP_PRIO, MP_FAIL, MP_FASTCLOSE = range(8)


def _mptcp_option(o: bytes, flags: int):
    """Decode one MPTCP option (kind 30) per RFC 8684 section 3; returns (subtype, fields) or None."""
    if len(o) < 3:
        return None
    st = o[2] >> 4
    olen = len(o)
    if st == MP_CAPABLE:
        # SYN: 4 bytes (v1, no key); SYN/ACK: 12 (sender key); ACK: 20 (+2 data len, +2 checksum).
        # The data length is there on the initiator's first data segment, which maps its data
        # with this option instead of a DSS (RFC 8684 3.1: DSN = its IDSN + 1, SSN 1).
        ver = o[2] & 0x0F
        k1 = o[4:12] if olen >= 12 else None
        k2 = o[12:20] if olen >= 20 else None
        dlen = int.from_bytes(o[20:22], "big") if olen >= 22 else None
        return st, (ver, o[3] if olen > 3 else 0, k1, k2, dlen)
    if st == MP_JOIN:
        backup = o[2] & 0x01
        addr_id = o[3] if olen > 3 else None
        if flags & SYN and not flags & ACK and olen >= 12:
            return st, ("syn", backup, addr_id, o[4:8])  # receiver's token
        if flags & SYN and flags & ACK:
            return st, ("synack", backup, addr_id, None)
        return st, ("ack", backup, addr_id, None)
    if st == DSS:
        if olen < 4:
            return None
        fl = o[3]
        i = 4
        data_ack = dsn = ssn = dlen = None
        if fl & 0x01:  # A: data ACK present; a (0x02): 8 octets
            w = 8 if fl & 0x02 else 4
            if olen < i + w:
                return None
            data_ack = (int.from_bytes(o[i:i + w], "big"), w == 8)
            i += w
        if fl & 0x04:  # M: DSN, subflow seq, data-level length (+ checksum); m (0x08): 8-octet DSN
            w = 8 if fl & 0x08 else 4
            if olen < i + w + 6:
                return None
            dsn = (int.from_bytes(o[i:i + w], "big"), w == 8)
            ssn, dlen = struct.unpack_from(">IH", o, i + w)
        return st, (data_ack, dsn, ssn, dlen, bool(fl & 0x10))
    if st == ADD_ADDR:
        echo = o[2] & 0x01
        addr_id = o[3] if olen > 3 else None
        # IPv4 forms: 8 (echo), 10 (echo+port), 16 (HMAC), 18 (port+HMAC); IPv6: 20, 22, 28, 30.
        if olen in (8, 10, 16, 18):
            addr = ".".join(str(b) for b in o[4:8])
        elif olen in (20, 22, 28, 30):
            addr = str(ipaddress.IPv6Address(o[4:20]))
        else:
            addr = None
        return st, (echo, addr_id, addr)
    if st == MP_PRIO:
        return st, (o[2] & 0x01,)
    if st in (REMOVE_ADDR, MP_FAIL, MP_FASTCLOSE):
        return st, ()
    return st, ()


def tcp_options(opts: bytes):
    """Each TCP option as (kind, its bytes), in order; stops at End of Option List and at a
    malformed option or one cut by the snap length (what was read before it is kept)."""
    i, n = 0, len(opts)
    while i < n:
        kind = opts[i]
        if kind == 0:
            return
        if kind == 1:
            i += 1
            continue
        if i + 1 >= n:
            return
        ln = opts[i + 1]
        if ln < 2 or i + ln > n:
            return
        yield kind, opts[i:i + ln]
        i += ln


def parse_opts(d: TcpDir, idx: int, flags: int, opts: bytes) -> None:
    for kind, o in tcp_options(opts):
        if kind == 3 and flags & SYN:
            d.wscale = min(o[2], 14)  # RFC 7323 2.3: shift counts above 14 are taken as 14
        elif kind == 4:
            d.sack_ok = True
        elif kind == 5 and len(o) >= 10:
            blocks = tuple(struct.unpack_from(">II", o, j) for j in range(2, len(o) - 7, 8))
            d.sacks.append((idx, blocks))
        elif kind == 30:
            m = _mptcp_option(o, flags)
            if m is not None:
                d.mptcp.append((idx, m[0], m[1]))


TS_ONLY = b"\x01\x01\x08\x0a"  # NOP NOP TS: the common case, nothing to keep
