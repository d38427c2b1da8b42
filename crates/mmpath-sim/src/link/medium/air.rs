//! Two radio paths of one scenario on the same or adjacent channels, each the other's
//! interferer (`[[path.interferer]] path = "..."`): seed 000 section 3.4's two 802.11ad links,
//! each running its own iperf3 flow. Instead of a fixed `load` drawn at random phases
//! (foreign.rs), each medium sees the PPDUs the other actually put on the air: its own flow's
//! traffic, its own retries and backoff, its own losses to our frames in turn (symmetric
//! hidden terminals).
//!
//! The two media share one `Air`: each publishes its TXOP on the air (when it holds the medium
//! and where its data PPDU falls) and the PPDUs it has finished. A TXOP is settled at its end,
//! and every PPDU of the other link that overlaps ours began before our PPDU ended, so it is
//! known by then: as the one on the air (a TXOP's PPDU no longer moves once it has begun:
//! edca.rs only re-plans a TXOP during its backoff) or as a finished one. An overlapped MPDU is
//! received at the SINR the interferer's power leaves (per.rs), as for a fixed-load interferer.
//!
//! Sensed (the CCA rule at its power at our transmitters, as foreign.rs decides it), the other
//! link's TXOP defers ours to its end, and the link that has just finished lets a waiting one
//! go first: one TXOP each per round, as CSMA/CA gives backlogged contenders. Not modelled:
//! their RTS, CTS and Block Acks as interference (a few microseconds against PPDUs of tens to
//! hundreds), backoff collisions between the two links.

use super::{Medium, Txop, Wake, OTHERS};
use crate::time::Time;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A PPDU's time on the air, ns: [from, to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) from: u64,
    pub(super) to: u64,
}

impl Span {
    fn overlaps(&self, a: u64, b: u64) -> bool {
        self.from < b && self.to > a
    }
}

/// What one side has on the air now: its TXOP (for the other's carrier sense) and its
/// PPDU(s) (two in a collision between its own stations).
#[derive(Debug, Clone, Copy)]
struct OnAir {
    end: Time,
    ppdu: [Option<Span>; 2],
}

#[derive(Debug)]
struct Side {
    /// Finished PPDUs the other side may still need (pruned as it moves on).
    past: VecDeque<Span>,
    on: Option<OnAir>,
    /// It deferred to the other side's TXOP and waits for its turn.
    waiting: bool,
}

/// The air two coupled media share (one per pair; sim/build.rs makes it).
#[derive(Debug)]
pub struct Air {
    sides: [Side; 2],
}

pub type SharedAir = Arc<Mutex<Air>>;

impl Air {
    pub fn shared() -> SharedAir {
        let side = || Side { past: VecDeque::with_capacity(64), on: None, waiting: false };
        Arc::new(Mutex::new(Air { sides: [side(), side()] }))
    }

    /// Does a PPDU of side `x` overlap [a, b)?
    fn hits(&self, x: usize, a: u64, b: u64) -> bool {
        let s = &self.sides[x];
        s.past.iter().any(|p| p.overlaps(a, b))
            || s.on.is_some_and(|o| o.ppdu.iter().flatten().any(|p| p.overlaps(a, b)))
    }
}

/// The data PPDU(s) of a TXOP as `t.end` places them: the Block Ack (and SIFS) follow the
/// PPDU; a collision between our own stations is both PPDUs (or, with RTS/CTS, the two RTS).
fn ppdus(m: &Medium, t: &Txop) -> [Option<Span>; 2] {
    let end = t.end.ns();
    let tail = m.mac.sifs_ns + m.mac.ack_ns;
    let span = |len: u64, tail: u64| Span { from: end.saturating_sub(tail + len), to: end.saturating_sub(tail) };
    if t.collide {
        if m.mac.protection_ns > 0 {
            let rts = span(m.mac.protection_ns, 0);
            return [Some(rts), None];
        }
        return [Some(span(t.ppdu_ns, tail)), Some(span(t.ppdu2_ns, tail))];
    }
    [Some(span(t.ppdu_ns, tail)), None]
}

/// Where our MPDUs fall in the PPDU being settled: the PPDU's start, its preamble and header,
/// each PSDU byte's airtime, and the bytes before the next MPDU.
pub(super) struct AirScan {
    start: u64,
    pre: u64,
    ns_per_byte: f64,
    done_bytes: u64,
}

impl Medium {
    /// Couples this medium to another through `air`, as its side `side` (0 or 1).
    pub fn set_air(&mut self, air: SharedAir, side: usize) {
        self.air = Some((air, side & 1));
    }

    /// Tells the other side what this medium has on the air now (after anything that may
    /// have started, re-planned or ended a TXOP).
    pub(super) fn publish_air(&mut self) {
        let Some((air, side)) = &self.air else { return };
        let on = self.busy.filter(|t| t.from != OTHERS).map(|t| OnAir { end: t.end, ppdu: ppdus(self, &t) });
        let mut a = air.lock().expect("air lock");
        let s = &mut a.sides[*side];
        s.on = on;
        if on.is_some() {
            s.waiting = false;
        }
    }

    /// TXOP `t` has ended (or was cut at `now` by the link going down): its PPDUs, up to
    /// `now`, join the finished ones the other side may still overlap.
    pub(super) fn air_finished(&mut self, t: &Txop, now: Time) {
        let Some((air, side)) = &self.air else { return };
        if t.from == OTHERS {
            return;
        }
        let spans = ppdus(self, t);
        let mut a = air.lock().expect("air lock");
        // The other side's next PPDU to settle starts no earlier than its TXOP on the air (or
        // now): anything finished before that it can no longer overlap.
        let floor = a.sides[1 - side].on.map_or(now.ns(), |o| o.ppdu[0].map_or(now.ns(), |p| p.from.min(now.ns())));
        let s = &mut a.sides[*side];
        while s.past.front().is_some_and(|p| p.to <= floor) {
            s.past.pop_front();
        }
        for p in spans.into_iter().flatten() {
            let p = Span { from: p.from, to: p.to.min(now.ns()) };
            if p.to > p.from {
                s.past.push_back(p);
            }
        }
        s.on = None;
    }

    /// Our data PPDU of TXOP `t` (station `from`, `psdu_bytes` in all), ready to ask for each
    /// MPDU whether the other link was on the air during it; None when not coupled.
    pub(super) fn air_scan(&mut self, t: &Txop, psdu_bytes: u32) -> Option<AirScan> {
        let (air, side) = self.air.as_ref()?;
        self.interferer?;
        let span = ppdus(self, t)[0]?;
        // PPDUs of the other side that ended before ours began can no longer matter to us.
        {
            let mut a = air.lock().expect("air lock");
            let s = &mut a.sides[1 - side];
            while s.past.front().is_some_and(|p| p.to <= span.from) {
                s.past.pop_front();
            }
        }
        let mcs = self.st[t.from].mcs;
        let pre = self.phy.ppdu_ns(0, mcs).min(t.ppdu_ns);
        Some(AirScan {
            start: span.from,
            pre,
            ns_per_byte: t.ppdu_ns.saturating_sub(pre) as f64 / psdu_bytes.max(1) as f64,
            done_bytes: 0,
        })
    }

    /// Was the other link on the air during our next MPDU of `len` bytes?
    pub(super) fn air_overlaps(&self, scan: &mut AirScan, len: u32) -> bool {
        let Some((air, side)) = &self.air else { return false };
        let a = scan.start + scan.pre + (scan.done_bytes as f64 * scan.ns_per_byte) as u64;
        scan.done_bytes += len as u64;
        let b = scan.start + scan.pre + (scan.done_bytes as f64 * scan.ns_per_byte) as u64;
        air.lock().expect("air lock").hits(1 - side, a, b.max(a + 1))
    }

    /// Carrier sense of the coupled link: with frames to send, we defer to its TXOP on the air
    /// when we hear it (`sensed`, drawn per attempt when it is a fraction), and let it go first
    /// once when it waited for ours. True if we hold back (a wake-up is asked for).
    ///
    /// The link that waited starts when our TXOP ends, and we right after it: both count their
    /// backoff from there, as contenders after a busy medium do. If we do not hear it, nothing
    /// then stops our PPDU from overlapping its (the hidden side of an unequal pair: it defers
    /// to us, we never to it, and both lose frames).
    pub(super) fn defer_to_air(&mut self, now: Time, wake: &mut Wake) -> bool {
        let Some((air, side)) = self.air.clone() else { return false };
        let sensed = self.int_state.sensed;
        if self.interferer.is_none() || self.st.iter().all(|s| s.queue.is_empty()) {
            return false;
        }
        let mut a = air.lock().expect("air lock");
        let other = 1 - side;
        let on_until = a.sides[other].on.map(|o| o.end).filter(|&e| e > now);
        if let Some(end) = on_until.filter(|_| sensed > 0.0) {
            if sensed >= 1.0 || self.rng.uniform() < sensed {
                a.sides[side].waiting = true;
                drop(a);
                // The medium is busy until then: our backoff counts from its end.
                self.idle_since = self.idle_since.max(end);
                self.wake_when_ready(now, Some(end), wake);
                return true;
            }
        } else if on_until.is_none() && a.sides[other].waiting {
            // It waited through our last TXOP: its turn first (it starts at this instant, when
            // its own wake-up fires); we look again just after.
            a.sides[other].waiting = false;
            drop(a);
            self.wake_when_ready(now, Some(now + Time(1)), wake);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::medium::testkit::*;
    use crate::link::seam::Wake;

    /// Two media coupled through one air, each `from` AP with `n` packets of 7912 bytes at MCS
    /// `mcs`, -42 dBm signal, the other link at `power_db` relative to it (each side senses the
    /// other as given).
    /// Driven together in time order until both are idle; returns both media and when each
    /// last delivered.
    fn pair(
        n: [usize; 2],
        mcs: u8,
        power_db: f64,
        sensed: [Option<f64>; 2],
        coupled: bool,
    ) -> ([Medium; 2], [Time; 2]) {
        let air = Air::shared();
        let mut ms = [0, 1].map(|k| {
            let mut mac = MacTiming::dmg();
            mac.cw_min = 15;
            let mut m = Medium::new(RadioPhy::Dmg, mac, 0, Time::ZERO, 1 << 40, mcs, RngStream::new(7, k));
            m.set_signal(-42.0, 0.0);
            if coupled {
                m.set_interferer(Some(Interferer {
                    coupled: true,
                    ..interferer(power_db, sensed[k as usize], false, 0.0)
                }));
                m.set_air(air.clone(), k as usize);
            }
            m
        });
        let mut wakes = [Wake::default(), Wake::default()];
        for k in 0..2 {
            let mut w = Wake::default();
            ms[k].set_up(Time::ZERO, false, &mut w);
            for _ in 0..n[k] {
                ms[k].enqueue(Time::ZERO, AP, pkt(0, 7912), &mut w);
            }
            ms[k].set_up(Time::ZERO, true, &mut w);
            wakes[k] = w;
        }
        let mut dropped = Vec::new();
        // Pending wake-ups per medium (tx_done only: arrivals do not touch the air).
        let mut next: [Vec<Time>; 2] = [vec![], vec![]];
        let mut last = [Time::ZERO; 2];
        loop {
            for k in 0..2 {
                if let Some(t) = wakes[k].tx_done.take() {
                    next[k].push(t);
                }
                wakes[k].arrival = [None, None];
            }
            let due = (0..2).filter_map(|k| next[k].iter().min().map(|&t| (t, k))).min();
            let Some((t, k)) = due else { break };
            next[k].retain(|&x| x != t);
            let before = ms[k].stats.bytes_delivered[AP];
            ms[k].on_tx_done(t, &mut wakes[k], &mut dropped);
            if ms[k].stats.bytes_delivered[AP] != before {
                last[k] = t;
            }
        }
        (ms, last)
    }

    fn delivered(m: &Medium) -> u64 {
        m.stats.bytes_delivered[AP] / 7912
    }

    /// Two backlogged links, hidden from each other (never sensed), as strong at each other's
    /// receiver as their own signal (SINR 0 dB: no MCS captures): their PPDUs overlap and both
    /// lose frames; uncoupled (each alone) neither does.
    #[test]
    fn hidden_links_at_0_db_corrupt_each_other() {
        let (alone, _) = pair([3000, 3000], 9, 0.0, [Some(0.0); 2], false);
        let (both, _) = pair([3000, 3000], 9, 0.0, [Some(0.0); 2], true);
        for k in 0..2 {
            assert_eq!(alone[k].stats.mpdus_failed[AP], 0);
            assert_eq!(delivered(&alone[k]), 3000);
            let s = &both[k].stats;
            assert!(s.mpdus_interfered[AP] > 1000, "link {k}: {} overlapped", s.mpdus_interfered[AP]);
            assert!(s.mpdus_failed[AP] as f64 > 0.9 * s.mpdus_interfered[AP] as f64);
            assert!(s.drops_retry[AP] > 0, "link {k}: nothing lost after 8 attempts");
        }
    }

    /// Only what the other link puts on the air interferes: a link with nothing to send harms
    /// nobody, and the busier the other link, the more of ours it overlaps.
    #[test]
    fn interference_follows_the_other_links_traffic() {
        let (idle, _) = pair([3000, 0], 9, 0.0, [Some(0.0); 2], true);
        assert_eq!(idle[0].stats.mpdus_interfered[AP], 0);
        assert_eq!(delivered(&idle[0]), 3000);
        let (light, _) = pair([3000, 200], 9, 0.0, [Some(0.0); 2], true);
        let (heavy, _) = pair([3000, 3000], 9, 0.0, [Some(0.0); 2], true);
        let hit = |m: &Medium| m.stats.mpdus_interfered[AP];
        assert!(hit(&light[0]) > 0 && hit(&light[0]) * 3 < hit(&heavy[0]), "{} vs {}", hit(&light[0]), hit(&heavy[0]));
    }

    /// Adjacent-channel leakage 20 dB below our signal is captured at MCS 9 (it needs 12.5 dB):
    /// the PPDUs overlap, nothing is lost, and both links run as if alone.
    #[test]
    fn captured_interference_hurts_neither() {
        let (both, _) = pair([3000, 3000], 9, -20.1, [Some(0.0); 2], true);
        for m in &both {
            assert!(m.stats.mpdus_interfered[AP] > 1000);
            assert_eq!(m.stats.mpdus_failed[AP], 0);
            assert_eq!(delivered(m), 3000);
        }
    }

    /// Sensed both ways, the links take turns: no PPDU overlaps, nothing is lost, and each
    /// link's 3000 frames take about twice as long as alone (each gets about half the air while
    /// both are backlogged).
    #[test]
    fn sensed_links_take_turns() {
        let (_, one) = pair([3000, 0], 9, 0.0, [None; 2], false);
        let (both, end) = pair([3000, 3000], 9, 0.0, [Some(1.0); 2], true);
        for (m, end) in both.iter().zip(end) {
            assert_eq!(m.stats.mpdus_interfered[AP], 0);
            assert_eq!(m.stats.mpdus_failed[AP], 0);
            assert_eq!(delivered(m), 3000);
            let r = end.secs_f64() / one[0].secs_f64();
            assert!((r - 2.0).abs() < 0.1, "{r}");
        }
    }

    /// Heard one way only (link 0 hears link 1, link 1 does not hear link 0): link 0 defers and
    /// link 1 lets it go first after each TXOP it waited through, so neither is starved, but
    /// link 1, starting right after, overlaps link 0's PPDUs: both lose frames. Without the
    /// turn link 0 would wait for ever behind a backlogged link 1.
    #[test]
    fn heard_one_way_neither_starves_nor_is_spared() {
        let (both, end) = pair([3000, 3000], 9, 0.0, [Some(1.0), Some(0.0)], true);
        let r = end[0].secs_f64() / end[1].secs_f64();
        assert!(r < 1.5, "link 0 finished {r}x later than link 1");
        for (k, m) in both.iter().enumerate() {
            assert_eq!(delivered(m) + m.stats.drops_retry[AP], 3000, "link {k}");
            assert!(m.stats.txops[AP] > 100, "link {k}: {} TXOPs", m.stats.txops[AP]);
            assert!(m.stats.mpdus_failed[AP] > 100, "link {k}: {} lost", m.stats.mpdus_failed[AP]);
        }
    }
}
