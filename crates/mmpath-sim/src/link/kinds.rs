//! The kinds of link a route's hop can cross, registered in one enum: the simulation keeps one
//! list of `AnyLink` and drives each through the `Link` seam, which this enum implements by
//! handing every call to its kind (a static match, no trait object on the per-packet path).
//!
//! A new kind implements `Link` in its own file, then gets one variant here and one arm in
//! `dispatch!` below (and, to be built from a scenario, its place in sim/build.rs).

use super::medium::Medium;
use super::seam::{Freed, Link, Wake};
use super::wire::Wire;
use crate::packet::{Kind, Packet};
use crate::time::Time;
use serde_json::{Map, Value};

/// A link of any registered kind.
///
/// Unboxed although a medium is several times a wire's size: a run has a handful of links,
/// made once, and every packet event reaches its link straight from the list, without a
/// pointer to follow.
#[allow(clippy::large_enum_variant)]
pub enum AnyLink {
    /// A wired direction (wire.rs), or a trace-driven one.
    Wire(Wire),
    /// The half-duplex 802.11 channel of a radio path (medium.rs), both its directions.
    Medium(Medium),
}

/// Runs `$body` on the link inside `$l`, whatever its kind, as `$x`.
macro_rules! dispatch {
    ($l:expr, $x:ident => $body:expr) => {
        match $l {
            AnyLink::Wire($x) => $body,
            AnyLink::Medium($x) => $body,
        }
    };
}

impl AnyLink {
    /// The 802.11 medium, for what only a radio has (its PHY, MCS, scans, power meter).
    pub fn medium(&self) -> Option<&Medium> {
        match self {
            AnyLink::Medium(m) => Some(m),
            _ => None,
        }
    }
    pub fn medium_mut(&mut self) -> Option<&mut Medium> {
        match self {
            AnyLink::Medium(m) => Some(m),
            _ => None,
        }
    }
}

impl Link for AnyLink {
    #[inline]
    fn enqueue(&mut self, now: Time, port: usize, p: Packet, wake: &mut Wake) -> bool {
        dispatch!(self, l => Link::enqueue(l, now, port, p, wake))
    }
    #[inline]
    fn tx_done(&mut self, now: Time, wake: &mut Wake, dropped: &mut Vec<Packet>) -> Option<&Packet> {
        dispatch!(self, l => Link::tx_done(l, now, wake, dropped))
    }
    #[inline]
    fn deliver(&mut self, now: Time, port: usize, wake: &mut Wake) -> Option<Packet> {
        dispatch!(self, l => Link::deliver(l, now, port, wake))
    }
    fn set_up(&mut self, now: Time, up: bool, wake: &mut Wake, dropped: &mut Vec<Packet>) {
        dispatch!(self, l => Link::set_up(l, now, up, wake, dropped))
    }
    fn set_rate(&mut self, now: Time, port: usize, rate_bps: u64, wake: &mut Wake) {
        dispatch!(self, l => Link::set_rate(l, now, port, rate_bps, wake))
    }
    #[inline]
    fn queue_bytes(&self, port: usize) -> u64 {
        dispatch!(self, l => Link::queue_bytes(l, port))
    }
    #[inline]
    fn rate_bps(&self, port: usize) -> u64 {
        dispatch!(self, l => Link::rate_bps(l, port))
    }
    #[inline]
    fn is_up(&self) -> bool {
        dispatch!(self, l => Link::is_up(l))
    }
    #[inline]
    fn freed(&self) -> Freed {
        dispatch!(self, l => Link::freed(l))
    }
    #[inline]
    fn mcs(&self) -> Option<u8> {
        dispatch!(self, l => Link::mcs(l))
    }
    fn count_in_network(&self, flow: u16, kind: Kind) -> u64 {
        dispatch!(self, l => Link::count_in_network(l, flow, kind))
    }
    fn summarize(&self, port: usize, dir: &str, span_ns: f64, out: &mut Map<String, Value>) {
        dispatch!(self, l => Link::summarize(l, port, dir, span_ns, out))
    }
}

