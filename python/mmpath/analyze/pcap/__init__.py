"""pcap / pcapng reader: TCP flows (SACK, retransmissions, RTT, in-flight, rwnd), MPTCP, UDP.

Streaming: the file is read in 4 MiB chunks and each packet is reduced to a few numbers kept in
compact arrays (``array``), so memory grows with the packet count (~40 bytes/packet) but never with
the file size, and per-flow analysis afterwards is vectorised with numpy.

Modules, in the order a capture flows through them:
- capture.py: the pcap and pcapng containers -> (ts, data, origlen, iface_name, linktype) records
- options.py: TCP flag bits, TCP options (RFC 9293/7323/2018) and MPTCP option kind 30 (RFC 8684)
- packets.py: link layer, IPv4/IPv6, TCP/UDP headers -> per-direction arrays (read_packets)
- metrics.py: per-direction TCP metrics (delivered bytes, retransmissions, D-SACK, RTT, in flight,
  rwnd) and time binning
- mptcp.py: MPTCP connection identity (keys, tokens, MP_JOIN), data-level throughput, reinjections
- flows.py: read(): everything above into a Source (TCP, MPTCP subflows and connections, UDP)
- delay.py: one_way_delay() between two captures of the same packets
- capture_set.py: read_all(): per-interface captures of one MPTCP connection as one Source

Every name the single-module reader had is re-exported here, so ``from mmpath.analyze.pcap import X``
keeps working.
"""

from __future__ import annotations

from .capture import (  # noqa: F401
    _PCAP_MAGIC, ALLOWED, CHUNK, LINKTYPES, MAX_RECORD, _pcap_records, _pcapng_records, _records, is_pcap,
)
from .capture_set import read_all  # noqa: F401
from .delay import one_way_delay  # noqa: F401
from .flows import read  # noqa: F401
from .metrics import _bin_sum, _ewma_srtt, _last_per_bin, _tcp_direction, _unwrap32  # noqa: F401
from .mptcp import _connection_flows, _connection_map, _idsn, _reinjections, _token  # noqa: F401
from .options import (  # noqa: F401
    ACK, ADD_ADDR, DSS, FIN, MP_CAPABLE, MP_FAIL, MP_FASTCLOSE, MP_JOIN, MP_PRIO, PSH, REMOVE_ADDR, RST, SYN,
    _TS_ONLY, _mptcp_option, _parse_opts,
)
from .packets import _Dir, _ip_str, _name, _UDir, read_packets  # noqa: F401

