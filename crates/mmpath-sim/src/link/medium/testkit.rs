//! What the medium's unit tests share: packets, media, and an event loop that drives one.

pub(super) use super::{Interferer, Medium, Wake, AP, STA};
pub(super) use crate::engine::RngStream;
pub(super) use crate::link::radio::{MacTiming, RadioPhy};
pub(super) use crate::packet::{Kind, Packet, Way};
pub(super) use crate::time::Time;

pub(super) fn pkt(flow: u16, size: u32) -> Packet {
    let mut p = Packet::empty(flow, Kind::Udp, Way::Forward);
    p.size_bytes = size;
    p
}

pub(super) fn medium(host_pkt_ns: u64) -> Medium {
    let mut mac = MacTiming::dmg();
    mac.cw_min = 0; // no random backoff: exact arithmetic
    Medium::new(RadioPhy::Dmg, mac, host_pkt_ns, Time::ZERO, 10_000_000, 9, RngStream::new(1, 1))
}

/// Drive the medium until idle; returns delivered packets per direction and the end time.
/// `w` carries the wake-ups the calls before asked for.
pub(super) fn drain(m: &mut Medium, mut now: Time, mut w: Wake) -> ([u64; 2], Time) {
    let mut got = [0u64; 2];
    let mut dropped = Vec::new();
    let mut pending: Vec<(Time, u8)> = Vec::new(); // (time, 0 = txdone, 1/2 = arrival dir+1)
    loop {
        if let Some(t) = w.tx_done.take() {
            pending.push((t, 0));
        }
        for d in 0..2 {
            if let Some(t) = w.arrival[d].take() {
                pending.push((t, d as u8 + 1));
            }
        }
        pending.sort();
        let Some((t, what)) = (if pending.is_empty() { None } else { Some(pending.remove(0)) }) else { break };
        now = t;
        if what == 0 {
            m.on_tx_done(now, &mut w, &mut dropped);
        } else if m.on_arrival(now, what as usize - 1, &mut w).is_some() {
            got[what as usize - 1] += 1;
        }
    }
    (got, now)
}

/// `m` with `n` packets of `size` bytes queued at station `from` before its first TXOP
/// starts (queued while the link is down, so the first TXOP sees them all).
pub(super) fn backlogged(mut m: Medium, from: usize, n: usize, size: u32) -> (Medium, Wake) {
    let mut w = Wake::default();
    m.set_up(Time::ZERO, false, &mut w);
    for _ in 0..n {
        m.enqueue(Time::ZERO, from, pkt(0, size), &mut w);
    }
    m.set_up(Time::ZERO, true, &mut w);
    (m, w)
}

pub(super) fn interferer(power_db: f64, sensed: Option<f64>, adjacent: bool, rejection_db: f64) -> Interferer {
    Interferer {
        load: 1.0,
        sensed,
        sensed_dbm: None,
        power_db,
        rejection_db,
        adjacent,
        mcs: 9,
        mpdu_bytes: 7912 + 42,
        coupled: false,
    }
}
