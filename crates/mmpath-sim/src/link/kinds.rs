//! The kinds of link a route's hop can cross, registered in one enum: the simulation keeps one
//! list of `AnyLink` and drives each through the `Link` seam, which this enum implements by
//! handing every call to its kind (a static match, no trait object on the per-packet path).
//!
//! A new kind implements `Link` in its own file, then gets one variant here and one arm in
//! `dispatch!` below (and, to be built from a scenario, its place in sim/build.rs).

use super::medium::Medium;
use super::seam::{Freed, Gone, Link, Wake};
use super::wire::Wire;
use crate::packet::{Kind, Packet};
use crate::scenario::Outage;
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
    fn set_outage(&mut self, outage: Outage, dropped: &mut Vec<Packet>) {
        dispatch!(self, l => Link::set_outage(l, outage, dropped))
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
    fn gone(&self, port: usize) -> Option<Gone> {
        dispatch!(self, l => Link::gone(l, port))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;
    use crate::link::medium::{AP, STA};
    use crate::link::radio::{MacTiming, RadioPhy};
    use crate::link::wire::LinkCfg;
    use crate::packet::Way;

    fn pkt(seq: u64, size: u32) -> Packet {
        let mut p = Packet::empty(0, Kind::Udp, Way::Forward);
        p.seq = seq;
        p.size_bytes = size;
        p
    }

    fn links() -> Vec<AnyLink> {
        let cfg = LinkCfg {
            rate_bps: 1_000_000_000,
            delay: Time::from_ms(1),
            queue_cap_bytes: 100_000,
            frame_overhead_bytes: 0,
            loss_prob: 0.0,
            toward_cut: false,
        };
        let mut mac = MacTiming::dmg();
        mac.cw_min = 0; // no random backoff
        let medium = Medium::new(RadioPhy::Dmg, mac, 0, Time::ZERO, 100_000, 9, RngStream::new(1, 1));
        vec![AnyLink::Wire(Wire::new(cfg, RngStream::new(1, 2))), AnyLink::Medium(medium)]
    }

    /// A packet delivered: (link, port, seq, time).
    type Delivery = (usize, usize, u64, Time);

    /// Runs the list's events, the way the simulation does, from what `offer` (link, port, seq)
    /// enqueues at 0; returns every delivery and, per link, the frames `tx_done` reported sent.
    fn run(links: &mut [AnyLink], offer: &[(usize, usize, u64)]) -> (Vec<Delivery>, Vec<usize>) {
        let mut pending: Vec<(Time, usize, Option<usize>)> = Vec::new(); // (at, link, arrival port)
        let note = |pending: &mut Vec<_>, l: usize, w: Wake| {
            pending.extend(w.tx_done.map(|t| (t, l, None)));
            for (port, a) in w.arrival.iter().enumerate() {
                pending.extend(a.map(|t| (t, l, Some(port))));
            }
        };
        for &(l, port, seq) in offer {
            let mut w = Wake::default();
            assert!(links[l].enqueue(Time::ZERO, port, pkt(seq, 1500), &mut w));
            note(&mut pending, l, w);
        }
        let (mut got, mut sent) = (Vec::new(), vec![0; links.len()]);
        let mut dropped = Vec::new();
        while !pending.is_empty() {
            pending.sort_by_key(|&(t, l, port)| (t, l, port));
            let (now, l, port) = pending.remove(0);
            let mut w = Wake::default();
            match port {
                None => sent[l] += links[l].tx_done(now, &mut w, &mut dropped).is_some() as usize,
                Some(port) => got.extend(links[l].deliver(now, port, &mut w).map(|p| (l, port, p.seq, now))),
            }
            note(&mut pending, l, w);
        }
        assert!(dropped.is_empty());
        (got, sent)
    }

    /// One list, one pair of events: a wire and the 802.11 medium each deliver what was offered
    /// to a direction at the far end of that direction.
    #[test]
    fn one_list_drives_every_kind_through_the_same_calls() {
        let mut l = links();
        let (got, sent) = run(&mut l, &[(0, 0, 1), (1, AP, 2), (1, STA, 3)]);
        let at = |seq| got.iter().find(|g| g.2 == seq).map(|g| (g.0, g.1, g.3));
        // The wire: 12 us of serialisation at 1 Gbit/s, then 1 ms of propagation.
        assert_eq!(at(1), Some((0, 0, Time::from_us(1012))));
        assert!(matches!(at(2), Some((1, AP, _))), "{got:?}");
        assert!(matches!(at(3), Some((1, STA, _))), "{got:?}");
        assert_eq!(got.len(), 3);
        // TSQ: the wire's frame is reported sent at its TX completion; the medium's are freed
        // when they are through (the simulation's arrive).
        assert_eq!(sent, vec![1, 0]);
        assert_eq!((l[0].freed(), l[1].freed()), (Freed::AtTxEnd, Freed::AtDelivery));
        assert_eq!((l[0].mcs(), l[1].mcs()), (None, Some(9)));
        assert!(l[0].medium().is_none() && l[1].medium().is_some());
    }

    /// The path summary's per-direction totals come from each kind under the same keys.
    #[test]
    fn each_kind_fills_the_path_summary_per_direction() {
        let mut l = links();
        run(&mut l, &[(0, 0, 1), (1, STA, 3)]);
        let mut out = Map::new();
        l[0].summarize(0, "down", 1e9, &mut out);
        assert_eq!((out["technology"].as_str(), out["bytes_sent_down"].as_u64()), (Some("wired"), Some(1500)));
        let mut out = Map::new();
        l[1].summarize(AP, "down", 1e9, &mut out);
        l[1].summarize(STA, "up", 1e9, &mut out);
        assert_eq!(out["technology"].as_str(), Some("11ad"));
        assert_eq!((out["bytes_sent_down"].as_u64(), out["bytes_sent_up"].as_u64()), (Some(0), Some(1500)));
    }
}
