"""pcap / pcapng reader: TCP flows (SACK, retransmissions, RTT, in-flight, rwnd), MPTCP, UDP.

Streaming: the file is read in 4 MiB chunks and each packet is reduced to a few numbers kept in
compact arrays (``array``), so memory grows with the packet count (~40 bytes/packet) but never with
the file size, and per-flow analysis afterwards is vectorised with numpy.

Modules, in the order a capture flows through them:
- capture.py: the pcap and pcapng containers -> (ts, data, origlen, iface_name, linktype) records
- options.py: TCP flag bits, TCP options (RFC 9293/7323/2018) and MPTCP option kind 30 (RFC 8684)
- directions.py: one direction of a TCP connection or UDP flow, packet fields in arrays
- packets.py: link layer, IPv4/IPv6, TCP/UDP headers -> per-direction arrays (read_packets)
- metrics.py: per-direction TCP metrics (delivered bytes, retransmissions, D-SACK, RTT, in flight,
  rwnd) and time binning
- mptcp.py: MPTCP connection identity (keys, tokens, MP_JOIN), data-level throughput, reinjections
- flows.py: read(): everything above into a Source (TCP, MPTCP subflows and connections, UDP)
- delay.py: one_way_delay() between two captures of the same packets
- capture_set.py: read_all(): per-interface captures of one MPTCP connection as one Source

The reader's entry points (read, read_all, one_way_delay, read_packets, is_pcap...) and the TCP/MPTCP
flag constants are re-exported here; everything else is imported from the module that defines it.
"""

from __future__ import annotations

from .capture import ALLOWED, CHUNK, LINKTYPES, MAX_RECORD, capture_records, is_pcap  # noqa: F401
from .capture_set import read_all  # noqa: F401
from .delay import one_way_delay  # noqa: F401
from .flows import read  # noqa: F401
from .options import (  # noqa: F401
    ACK,
    ADD_ADDR,
    DSS,
    FIN,
    MP_CAPABLE,
    MP_FAIL,
    MP_FASTCLOSE,
    MP_JOIN,
    MP_PRIO,
    PSH,
    REMOVE_ADDR,
    RST,
    SYN,
)
from .packets import read_packets  # noqa: F401
