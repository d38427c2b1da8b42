//! Packets: small `Copy` structs with no payload bytes, so moving one through a queue is a
//! memcpy and the hot path never allocates.

/// Bytes of IPv4 (20) + TCP (20) + the timestamp option (12) on every TCP segment: Linux sends
/// timestamps by default, so an MTU-sized segment carries MTU - 52 bytes of payload.
pub const TCP_HEADER_BYTES: u32 = 52;
/// IPv4 (20) + UDP (8).
pub const UDP_HEADER_BYTES: u32 = 28;
/// A SACK option: kind+length (2) plus 8 bytes per block, padded with 2 NOPs (RFC 2018).
pub const SACK_BLOCK_BYTES: u32 = 8;
pub const SACK_OPTION_BASE_BYTES: u32 = 4;
/// MPTCP's DSS option on every subflow data segment: data ACK (4) + DSN (4) + subflow
/// sequence (4) + data-level length (2) + checksum (2) + header (4) = 20 bytes (RFC 8684
/// section 3.3; Linux subtracts the option space from the payload), and 8 bytes of data ACK on
/// pure ACKs.
pub const DSS_DATA_BYTES: u32 = 20;
pub const DSS_ACK_BYTES: u32 = 8;
/// A handshake segment: IPv4 + TCP + options (MSS, SACK-permitted, timestamps, window scale,
/// MP_JOIN): about 60 bytes on the wire.
pub const SYN_BYTES: u32 = 60;
/// An MP_PRIO segment: a pure ACK (headers and DSS data ACK) plus the 3-byte MP_PRIO option
/// (kind, length, subtype and B flag; RFC 8684 3.3.8) padded to 4.
pub const PRIO_BYTES: u32 = TCP_HEADER_BYTES + DSS_ACK_BYTES + 4;
/// With timestamps on, 40 bytes of options leave room for 3 SACK blocks (RFC 2018 section 3).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// TCP segment carrying payload.
    Data,
    /// Pure TCP ACK.
    Ack,
    /// UDP datagram.
    Udp,
    /// MPTCP subflow handshake (MP_CAPABLE / MP_JOIN SYN, SYN/ACK, ACK); `seq` is the step.
    Syn,
    /// A pure ACK carrying MP_PRIO (RFC 8684 3.3.8) for the subflow it travels on; `seq` is the
    /// backup bit (1: backup). Like a handshake segment it bypasses the endpoints.
    Prio,
}

/// Which way along the flow's route a packet travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// From the data sender to the data receiver.
    Forward,
    /// Back: ACKs.
    Reverse,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u16,
    pub kind: Kind,
    pub way: Way,
    /// Index of the hop (link) along the route the packet is on.
    pub hop: u8,
    pub nsack: u8,
    /// Data: the PSH flag, which the sender's tcp_push puts on the segment ending a push
    /// (tcp_mark_push on the write queue's tail skb, net/ipv4/tcp.c).
    pub psh: bool,
    /// IP packet size on the wire (headers included, link framing excluded).
    pub size_bytes: u32,
    /// Data: first payload byte; UDP: datagram number.
    pub seq: u64,
    /// Data: payload bytes.
    pub len: u32,
    /// Data: the segments this packet holds, 1 unless the receiving host merged several into
    /// one skb (GRO, link/medium/host.rs `Gro`); the oracle counts segments.
    pub segs: u16,
    /// ACK: cumulative acknowledgment (next byte expected).
    pub ack: u64,
    /// ACK: advertised receive window in bytes.
    pub rwnd: u32,
    /// Timestamp option (RFC 7323): sender's clock, and the echoed peer clock.
    pub ts_val_ns: u64,
    pub ts_ecr_ns: u64,
    /// ACK: SACK blocks [start, end), most recent first.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    /// MPTCP data: the data sequence number of the first payload byte (DSS mapping).
    pub dsn: u64,
    /// MPTCP ACK: the data ACK and the connection-level receive window (RFC 8684 3.3).
    pub data_ack: u64,
    pub data_wnd: u64,
}

impl Packet {
    pub fn empty(flow: u16, kind: Kind, way: Way) -> Packet {
        Packet {
            flow,
            kind,
            way,
            hop: 0,
            nsack: 0,
            psh: false,
            size_bytes: 0,
            seq: 0,
            len: 0,
            segs: 1,
            ack: 0,
            rwnd: 0,
            ts_val_ns: 0,
            ts_ecr_ns: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            dsn: 0,
            data_ack: 0,
            data_wnd: 0,
        }
    }

    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.nsack as usize]
    }
}
