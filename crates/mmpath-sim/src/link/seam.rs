//! The seam every kind of link implements, so that the simulation drives a wire, the 802.11
//! medium or a new kind the same way (link/mod.rs lists them).

use crate::packet::{Kind, Packet};
use crate::time::Time;

/// What the simulation asks of a link of any kind. `port` names a direction: a wire has one
/// (0); the 802.11 medium one per station (`medium::AP` transmits the downlink, `medium::STA`
/// the uplink). How a transmission ends (the wire's random loss, drawn from the simulation's
/// stream; the medium's TXOP with its retries) stays with each kind.
pub trait Link {
    /// The events the link asks for after a call: when its transmission ends, and when the
    /// next packet reaches the far end of each direction.
    type Wake: Default;

    /// Offers `p` to direction `port`'s queue. False (the link counts the drop) when it does
    /// not fit.
    fn enqueue(&mut self, now: Time, port: usize, p: Packet, wake: &mut Self::Wake) -> bool;
    /// The packet reaching the far end of direction `port` now, if any; asks for the next.
    fn deliver(&mut self, now: Time, port: usize, wake: &mut Self::Wake) -> Option<Packet>;
    /// Takes the link down or up; the packets going down destroys are added to `dropped`. A
    /// kind whose outage discards what it holds (everything queued and sent while down) puts
    /// them there too.
    fn set_up(&mut self, now: Time, up: bool, wake: &mut Self::Wake, dropped: &mut Vec<Packet>);
    /// Bytes waiting in direction `port`'s queue.
    fn queue_bytes(&self, port: usize) -> u64;
    /// Direction `port`'s current transmission rate, bit/s.
    fn rate_bps(&self, port: usize) -> u64;
    fn is_up(&self) -> bool;
    /// Packets of `flow` (of the given kind) queued or on their way: the oracle's independent
    /// count of what is in the network at the end of a run.
    fn count_in_network(&self, flow: u16, kind: Kind) -> u64;
}
