//! The seam every kind of link implements, so that the simulation drives a wire, the 802.11
//! medium or a new kind the same way (link/kinds.rs registers them).

use crate::packet::{Kind, Packet};
use crate::scenario::Outage;
use crate::time::Time;
use serde_json::{Map, Value};

/// Directions a link can have: a wire one, the 802.11 medium one per station.
pub const PORTS: usize = 2;

/// What a link asks the engine to do after a call: the events it needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wake {
    /// Schedule the link's TxDone at this time: the transmission under way ends.
    pub tx_done: Option<Time>,
    /// Schedule an Arrival at the far end of direction `port` at this time.
    pub arrival: [Option<Time>; PORTS],
}

/// When the sending host's driver frees a frame it put on the link: TCP Small Queues lets the
/// socket go on then (Linux tcp_wfree -> tcp_tsq_handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freed {
    /// At the end of its transmission (a wired NIC's TX completion): `tx_done` returns the frame
    /// it sent.
    AtTxEnd,
    /// When it is through the link (an 802.11 MPDU, acknowledged), or when the MAC gives up on
    /// it (`tx_done` puts it in `dropped`).
    AtDelivery,
}

/// How a link that has gone away takes a frame its sending host offers it, as the sending
/// socket sees it (the link refuses the frame: `enqueue` returns false). Either way the frame is
/// freed at once, so TCP Small Queues never holds the socket back, and TCP counts it as sent:
/// the sender goes on filling its window with frames that are lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// The sending interface lost its carrier (a wired path cut at its far end; a station whose
    /// driver reports the disconnect: wil6210 `_wil6210_disconnect` -> netif_carrier_off).
    /// linkwatch swaps the interface's qdisc for the no-op one (dev_deactivate), which frees
    /// what is offered and answers NET_XMIT_CN: tcp_transmit_skb takes that as local
    /// congestion, enters CWR (tcp_enter_cwr) and counts the segment as sent (net_xmit_eval
    /// maps NET_XMIT_CN to success), net/sched/sch_generic.c noop_enqueue,
    /// net/ipv4/tcp_output.c.
    NoCarrier,
    /// The interface keeps its carrier but the peer is gone (an access point whose station
    /// left): the driver takes the frame and frees it (wil6210 wil_start_xmit: no ring for the
    /// destination), which the socket sees as a frame sent.
    PeerGone,
}

/// What the simulation asks of a link of any kind. `port` names a direction: a wire has one
/// (0); the 802.11 medium one per station (`medium::AP` transmits the downlink, `medium::STA`
/// the uplink). How a transmission ends (the wire's random loss, the medium's TXOP with its
/// retries) stays with each kind.
pub trait Link {
    /// Offers `p` to direction `port`'s queue. False (the link counts the drop) when it does
    /// not fit.
    fn enqueue(&mut self, now: Time, port: usize, p: Packet, wake: &mut Wake) -> bool;
    /// The transmission a `Wake::tx_done` asked for ends now (or nothing, when the event is
    /// stale). Frames it destroys or gives up on are added to `dropped`; returns the frame it
    /// sent on, for a link whose frames are freed then (`Freed::AtTxEnd`).
    fn tx_done(&mut self, now: Time, wake: &mut Wake, dropped: &mut Vec<Packet>) -> Option<&Packet>;
    /// The packet reaching the far end of direction `port` now, if any; asks for the next.
    fn deliver(&mut self, now: Time, port: usize, wake: &mut Wake) -> Option<Packet>;
    /// Takes the link down or up; the packets going down destroys are added to `dropped`. A
    /// kind whose outage discards what it holds (everything queued and sent while down) puts
    /// them there too.
    fn set_up(&mut self, now: Time, up: bool, wake: &mut Wake, dropped: &mut Vec<Packet>);
    /// What the link's outages do from now on: hold what is queued, or lose it and what is sent
    /// while down (a wired path's `drop` schedule step, docs/models.md "Outages: hold or drop");
    /// a link already down with a dropping outage discards what it holds into `dropped`. A kind
    /// with its own model of an outage (the 802.11 medium) ignores it; the scenario refuses
    /// `drop` there.
    fn set_outage(&mut self, _outage: Outage, _dropped: &mut Vec<Packet>) {}
    /// Sets direction `port`'s rate from outside (a path's schedule, a capacity trace). A kind
    /// that picks its own rate (the 802.11 medium: from its MCS) ignores it.
    fn set_rate(&mut self, _now: Time, _port: usize, _rate_bps: u64, _wake: &mut Wake) {}
    /// Bytes waiting in direction `port`'s queue.
    fn queue_bytes(&self, port: usize) -> u64;
    /// Direction `port`'s current transmission rate, bit/s.
    fn rate_bps(&self, port: usize) -> u64;
    fn is_up(&self) -> bool;
    /// Whether direction `port` refuses what its sending host offers because the link has gone
    /// away, and how the sending socket sees that (`Gone`); None while it queues what it can
    /// (a full queue's refusal, NET_XMIT_DROP, is not this).
    fn gone(&self, _port: usize) -> Option<Gone> {
        None
    }
    /// When the sender's driver frees the frames it puts on this link.
    fn freed(&self) -> Freed {
        Freed::AtTxEnd
    }
    /// The downlink's modulation and coding scheme, for a kind that adapts one (the path's
    /// records follow it); None for a kind without.
    fn mcs(&self) -> Option<u8> {
        None
    }
    /// Packets of `flow` (of the given kind) queued or on their way: the oracle's independent
    /// count of what is in the network at the end of a run.
    fn count_in_network(&self, flow: u16, kind: Kind) -> u64;
    /// The run's totals of direction `port` for the path summary, under keys ending in `_dir`
    /// ("down" or "up"; `span_ns` the run's length, for utilisations), with the link's own
    /// fields (its technology, ...).
    fn summarize(&self, port: usize, dir: &str, span_ns: f64, out: &mut Map<String, Value>);
}
