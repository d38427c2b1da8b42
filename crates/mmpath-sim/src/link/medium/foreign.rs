//! Transmitters on the channel outside the path: other stations that take a share of the
//! airtime (a contention event) and another link on the same or an adjacent channel (an
//! interferer). What our stations sense of them takes turns with our TXOPs, as CSMA/CA gives
//! every backlogged contender one per round (the 802.11 performance anomaly, Heusse et al.,
//! INFOCOM 2003); what they do not sense overlaps our MPDUs, which then see the SINR per.rs
//! works out. Whether an interferer is sensed follows the CCA rule (spectrum.rs).

use super::{Medium, Txop, Wake, AP, OTHERS, STA};
use crate::link::spectrum::cca_thresholds_dbm;
use crate::time::Time;

/// Other stations never hold more than this share of the airtime.
pub const MAX_FOREIGN_SHARE: f64 = 0.95;

/// Another link on the same or an adjacent channel: a saturated (or `load`-limited) link of the
/// same kind of device, sending full aggregates of `mpdu_bytes` MPDUs at `mcs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interferer {
    /// Fraction of the time it has frames to send (1 = saturated, iperf3 UDP at full speed).
    pub load: f64,
    /// Fraction of its transmissions our stations hear and defer to; None = from the CCA rule
    /// (`cca_thresholds_dbm`) at its power at our transmitters.
    pub sensed: Option<f64>,
    /// Its power inside our channel at our transmitters, dBm, when the beams set it apart from
    /// our signal (spectrum.rs `beams_apart_isolation_db`: the hidden terminal); None = its
    /// power at our receivers (its transmitter inside our beams), which follows our signal.
    pub sensed_dbm: Option<f64>,
    /// Its power at our stations relative to our own signal, dB.
    pub power_db: f64,
    /// How far below its own power the part of it inside our channel is (0 on the same
    /// channel; on the adjacent one see `adjacent_rejection_db`), dB.
    pub rejection_db: f64,
    /// On an adjacent channel (only energy detection can sense it) or on ours.
    pub adjacent: bool,
    /// Its MCS and MPDU size (MTU + MAC overhead): they set its TXOP and how much of it is on air.
    pub mcs: u8,
    pub mpdu_bytes: u32,
    /// Another path of the scenario (air.rs): its own traffic puts its PPDUs on the air, so
    /// `load`, `mcs` and `mpdu_bytes` are not used; only its power and sensing are.
    pub coupled: bool,
}

/// One TXOP's view of the unsensed interferer's PPDUs (`Medium::overlap_scan`), all in ns from
/// its cycle's origin.
#[derive(Debug, Clone, Copy)]
pub(super) struct OverlapScan {
    phase: u64,
    period: u64,
    on: u64,
    /// Probability that one of its cycles carries a PPDU we did not defer to.
    active: f64,
    /// Our PPDU's preamble and header, then each PSDU byte's airtime.
    pre: u64,
    ns_per_byte: f64,
    done_bytes: u64,
    /// The last cycle whose PPDU was drawn, and whether it was on.
    drawn: Option<(u64, bool)>,
}

/// The interferer as the MAC sees it, derived once per `set_interferer` / signal change.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct InterfState {
    /// Airtime of one of its TXOPs (access, mean backoff, RTS/CTS, PPDU, SIFS, Block Ack).
    pub(super) txop: Time,
    /// Its data PPDU's airtime, the part of each TXOP that overlaps what we send.
    pub(super) ppdu: Time,
    /// Fraction of the time its data PPDUs are on the air: load x PPDU / TXOP.
    pub(super) duty: f64,
    /// Fraction of its TXOPs our stations defer to (take turns with).
    pub(super) sensed: f64,
    /// Its power inside our channel at our receivers, dBm (NaN without a signal).
    pub(super) in_channel_dbm: f64,
}

impl Medium {
    /// Other stations contend for the channel and take `share` of the airtime (0 = none).
    /// After each of our TXOPs they get one of their own, sized so that their long-run share is
    /// `share` while we have traffic (EDCA gives contenders turns).
    pub fn set_foreign_share(&mut self, share: f64) {
        self.contention_share = share.max(0.0);
        self.foreign_share = self.contention_share.clamp(0.0, MAX_FOREIGN_SHARE);
        if self.foreign_share == 0.0 && self.int_state.sensed == 0.0 {
            self.foreign_due = Time::ZERO;
        }
    }

    /// Another link interferes (None: it stopped). The part of its transmissions our stations
    /// sense (`sensed`, by default the CCA rule at its power) takes turns with ours: CSMA/CA
    /// gives every backlogged contender one TXOP per round, whatever its length (so a slow
    /// neighbour costs a fast link more: the 802.11 performance anomaly, Heusse et al.,
    /// INFOCOM 2003). The rest overlaps our MPDUs as often as it is on the air, and an
    /// overlapped MPDU is received at the SINR its power inside our channel leaves.
    pub fn set_interferer(&mut self, i: Option<Interferer>) {
        self.interferer = i;
        self.int_round = 0;
        self.int_state = match i {
            Some(i) => {
                let (ppdu, txop) = self.txop_ns(i.mcs, i.mpdu_bytes);
                InterfState {
                    txop: Time(txop),
                    ppdu: Time(ppdu),
                    // A coupled path overlaps us by what it actually sends (air.rs), not at a duty.
                    duty: if i.coupled { 0.0 } else { i.load * ppdu as f64 / txop as f64 },
                    ..Default::default()
                }
            }
            None => InterfState::default(),
        };
        self.update_interference();
    }

    /// The interferer's TXOP as this MAC runs it: a full aggregate of `mpdu_bytes` MPDUs at
    /// `mcs` after the mean backoff: (data PPDU, whole TXOP) in ns.
    fn txop_ns(&self, mcs: u8, mpdu_bytes: u32) -> (u64, u64) {
        let (mut n, mut psdu) = (0u32, 0u32);
        while n < self.mac.max_mpdus.max(1) {
            let next = psdu + mpdu_bytes;
            if n > 0 && (next > self.mac.max_ampdu_bytes || self.phy.ppdu_ns(next, mcs) > self.mac.max_ppdu_ns) {
                break;
            }
            n += 1;
            psdu = next;
        }
        let ppdu = self.phy.ppdu_ns(psdu, mcs);
        let backoff = self.mac.slot_ns * self.mac.cw_min as u64 / 2;
        let txop = self.mac.with_beacon_share(
            self.mac.access_ns + backoff + self.mac.protection_ns + ppdu + self.mac.sifs_ns + self.mac.ack_ns,
        );
        (ppdu, txop)
    }

    /// Re-derives what the interferer does to us from its settings and our signal.
    pub(super) fn update_interference(&mut self) {
        if let Some(i) = self.interferer {
            let inside = self.budget.map_or(f64::NAN, |(rssi, _)| rssi + i.power_db - i.rejection_db);
            let (preamble, energy) = cca_thresholds_dbm(&self.phy);
            // Only energy detection can sense a neighbour on another channel.
            let threshold = if i.adjacent { energy } else { preamble };
            // CCA is our transmitters' (they defer); the SINR is our receivers'.
            let at_tx = i.sensed_dbm.unwrap_or(inside);
            let sensed = i.sensed.unwrap_or(if at_tx >= threshold { 1.0 } else { 0.0 });
            self.int_state.sensed = sensed;
            self.int_state.in_channel_dbm = inside;
            self.overlap_prob = self.int_state.duty * (1.0 - sensed);
        } else {
            self.overlap_prob = 0.0;
        }
        self.refresh_per(AP);
        self.refresh_per(STA);
    }

    /// Where the unsensed interferer's PPDUs fall against our data PPDU of this TXOP (None when
    /// nothing overlaps us): it runs its TXOPs back to back, unsynchronised with ours, so its
    /// cycle starts at a uniform phase; each of its cycles carries a PPDU we did not defer to
    /// with probability load x (1 - sensed).
    pub(super) fn overlap_scan(&mut self, from: usize, psdu_bytes: u32) -> Option<OverlapScan> {
        if self.overlap_prob <= 0.0 {
            return None;
        }
        let i = self.interferer?;
        let period = self.int_state.txop.ns().max(1);
        let mcs = self.st[from].mcs;
        let pre = self.phy.ppdu_ns(0, mcs);
        let ppdu = self.phy.ppdu_ns(psdu_bytes, mcs);
        Some(OverlapScan {
            phase: (self.rng.uniform() * period as f64) as u64,
            period,
            on: self.int_state.ppdu.ns(),
            active: i.load * (1.0 - self.int_state.sensed),
            pre,
            ns_per_byte: ppdu.saturating_sub(pre) as f64 / psdu_bytes.max(1) as f64,
            done_bytes: 0,
            drawn: None,
        })
    }

    /// Does the MPDU of `len` bytes that follows the ones `scan` has seen overlap one of the
    /// interferer's PPDUs? Its airtime is [pre + b0 t, pre + (b0 + len) t] from our PPDU's start
    /// (b0 the bytes before it, t the time per byte at our MCS).
    pub(super) fn mpdu_overlaps(&mut self, scan: &mut OverlapScan, len: u32) -> bool {
        let a = scan.pre + (scan.done_bytes as f64 * scan.ns_per_byte) as u64 + scan.phase;
        scan.done_bytes += len as u64;
        let b = scan.pre + (scan.done_bytes as f64 * scan.ns_per_byte) as u64 + scan.phase;
        let mut hit = false;
        // Its cycle k is on the air over [k T, k T + on): the cycles this MPDU touches.
        for k in a / scan.period..=b / scan.period {
            let on_from = k * scan.period;
            if on_from >= b || on_from + scan.on <= a {
                continue;
            }
            // Whether cycle k carried a PPDU, drawn once per cycle in order.
            let active = if scan.active >= 1.0 {
                true
            } else {
                while scan.drawn.is_none_or(|(d, _)| d < k) {
                    let next = scan.drawn.map_or(a / scan.period, |(d, _)| d + 1);
                    scan.drawn = Some((next, self.rng.uniform() < scan.active));
                }
                scan.drawn.is_some_and(|(_, on)| on)
            };
            hit |= active;
        }
        hit
    }

    /// Probability that an MPDU overlaps the interferer, and the fraction of its TXOPs we defer to.
    pub fn interference(&self) -> (f64, f64) {
        (self.overlap_prob, self.int_state.sensed)
    }

    /// The other stations' turn, if they are owed one and we have something to send: they
    /// hold the medium for the airtime owed. True if they took it.
    pub(super) fn others_take_turn(&mut self, now: Time, wake: &mut Wake) -> bool {
        if self.foreign_due > Time::ZERO && self.st.iter().any(|s| !s.queue.is_empty()) {
            let end = now + self.foreign_due;
            self.foreign_due = Time::ZERO;
            self.busy = Some(Txop::new(OTHERS, now, end));
            wake.tx_done = Some(end);
            return true;
        }
        false
    }

    /// What the other stations are owed after our TXOP `t`: their share of its airtime, and
    /// the sensed interferer's TXOP once per round of our backlogged stations.
    pub(super) fn owe_others(&mut self, t: &Txop) {
        if self.foreign_share > 0.0 {
            let mine = (t.end - t.start).ns() as f64;
            self.foreign_due = Time((mine * self.foreign_share / (1.0 - self.foreign_share)) as u64);
        }
        let from = t.from;
        // The sensed interferer is one more contender: one TXOP per round of our backlogged
        // stations (they still hold this TXOP's frames until it is settled, so count them now).
        if self.int_state.sensed > 0.0 {
            if let Some(i) = self.interferer.filter(|i| !i.coupled) {
                self.int_round += 1;
                let other_waiting = !self.st[1 - from].queue.is_empty();
                let round = if other_waiting { 2 } else { 1 };
                if self.int_round >= round {
                    self.int_round = 0;
                    if self.rng.uniform() < self.int_state.sensed * i.load {
                        self.foreign_due += self.int_state.txop;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::medium::testkit::*;

    /// Contention: other stations take the asked share of the airtime.
    #[test]
    fn contention_takes_its_share_of_airtime() {
        let run = |share: f64| {
            let mut m = medium(0);
            m.set_foreign_share(share);
            let mut w = Wake::default();
            for _ in 0..2000 {
                m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            }
            drain(&mut m, Time::ZERO, w).1
        };
        let alone = run(0.0).secs_f64();
        let shared = run(0.5).secs_f64();
        assert!((shared / alone - 2.0).abs() < 0.05, "half the airtime: {alone} vs {shared}");
    }

    /// CCA: an SC preamble from -68 dBm on our channel; a neighbour only by its energy
    /// (-48 dBm) inside our channel.
    #[test]
    fn cca_decides_what_is_sensed() {
        let sensed = |i: Interferer| {
            let mut m = medium(0);
            m.set_signal(-42.0, 0.0);
            m.set_interferer(Some(i));
            m.interference().1
        };
        assert_eq!(sensed(interferer(-30.0, None, false, 0.0)), 0.0); // -72 dBm
        assert_eq!(sensed(interferer(-20.0, None, false, 0.0)), 1.0); // -62 dBm
        assert_eq!(sensed(interferer(0.0, None, true, 20.1)), 0.0); // -62.1 dBm of leakage
        assert_eq!(sensed(interferer(15.0, None, true, 20.1)), 1.0); // -47.1 dBm
        assert_eq!(sensed(interferer(15.0, Some(0.25), true, 20.1)), 0.25); // as given
    }

    /// The interferer's TXOP is a full aggregate at its MCS after the mean backoff (7.5 of
    /// CWmin 15's slots); it is on
    /// the air for its PPDU's share of that.
    #[test]
    fn interferer_txop_and_duty_follow_the_mac() {
        let mut m = medium(0);
        m.mac.cw_min = 15;
        let mac = m.mac;
        m.set_interferer(Some(Interferer { load: 0.5, ..interferer(0.0, Some(0.0), false, 0.0) }));
        // 64 MPDUs of 7954 bytes exceed the 262,143-byte A-MPDU limit: 32 fit.
        let n = (mac.max_ampdu_bytes / 7954).min(mac.max_mpdus);
        assert_eq!(n, 32);
        let ppdu = RadioPhy::Dmg.ppdu_ns(n * 7954, 9);
        let txop = mac.with_beacon_share(
            mac.access_ns + 15 * mac.slot_ns / 2 + mac.protection_ns + ppdu + mac.sifs_ns + mac.ack_ns,
        );
        assert_eq!(m.int_state.txop, Time(txop));
        assert!((m.int_state.duty - 0.5 * ppdu as f64 / txop as f64).abs() < 1e-12);
        assert!((m.interference().0 - m.int_state.duty).abs() < 1e-12, "unsensed: overlaps at its duty");
    }

    /// A sensed interferer takes one TXOP of its own after each of ours: with a lone sender
    /// the run lasts exactly (TXOPs - 1) interferer TXOPs longer (the turn owed after our last
    /// TXOP is never taken: we have nothing left to send).
    #[test]
    fn sensed_interferer_takes_turns() {
        let run = |i: Option<Interferer>| {
            let mut m = medium(0);
            m.set_signal(-42.0, 0.0);
            m.set_interferer(i);
            let mut w = Wake::default();
            for _ in 0..2000 {
                m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            }
            let (got, end) = drain(&mut m, Time::ZERO, w);
            assert_eq!(got[AP], 2000);
            (end, m.stats.txops[AP], m.int_state.txop)
        };
        let (alone, n, _) = run(None);
        let (shared, n2, t_i) = run(Some(interferer(-20.0, Some(1.0), false, 0.0)));
        assert_eq!(n, n2);
        assert_eq!(shared - alone, Time(t_i.ns() * (n - 1)));
    }

    /// An unsensed interferer, unsynchronised with us, overlaps an MPDU attempt when one of its
    /// PPDUs (D) is on the air during any of the MPDU's airtime (L): with probability (D + L) / T
    /// for its cycle T, more than its duty D / T. Stronger than our signal it destroys MCS 1
    /// frames, so every overlap is a failure; each retry is a later TXOP at a fresh phase.
    #[test]
    fn unsensed_interferer_overlaps_by_time() {
        let mut m = medium(0);
        m.set_signal(-42.0, 0.0);
        // Our MCS 1 MPDUs (32 us) against its MCS 9 aggregates, 5 dB above our signal.
        m.set_mcs(AP, 1);
        m.set_interferer(Some(interferer(5.0, Some(0.0), false, 0.0)));
        let (duty, _) = m.interference();
        assert!(m.st[AP].per_int_4096 > 0.999);
        let mpdu_ns = (m.phy.ppdu_ns(16 * 1542, 1) - m.phy.ppdu_ns(0, 1)) as f64 / 16.0;
        let q = (m.int_state.ppdu.ns() as f64 + mpdu_ns) / m.int_state.txop.ns() as f64;
        assert!(q > duty + 0.03 && q < 1.0, "{q} vs duty {duty}");
        let mut w = Wake::default();
        for _ in 0..20_000 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        drain(&mut m, Time::ZERO, w);
        let s = &m.stats;
        let hit = s.mpdus_interfered[AP] as f64 / s.mpdus_sent[AP] as f64;
        // (The MPDUs of one TXOP share its phase: a few hundred independent draws.)
        assert!((hit - q).abs() < 0.012, "overlap share {hit} vs {q}");
        // Nothing else fails at 38 dB of margin; a 1542-byte MPDU escapes now and then.
        let (failed, hit_n) = (s.mpdus_failed[AP] as f64, s.mpdus_interfered[AP] as f64);
        assert!(failed <= hit_n && failed > 0.99 * hit_n, "{failed} of {hit_n}");
        // A frame is lost after 8 attempts that all overlapped: q^8 of those the MAC carried
        // or gave up on (the rest overflowed the queue).
        let carried = s.bytes_delivered[AP] as f64 / 1500.0 + s.drops_retry[AP] as f64;
        let lost = s.drops_retry[AP] as f64 / carried;
        assert!((lost - q.powi(8)).abs() < 0.15 * q.powi(8), "lost {lost} vs {}", q.powi(8));
    }

    /// A part-loaded interferer carries a PPDU in each of its cycles with probability load: the
    /// overlap share falls with it.
    #[test]
    fn part_loaded_interferer_overlaps_less() {
        let share = |load: f64| {
            let mut m = medium(0);
            m.set_signal(-42.0, 0.0);
            m.set_interferer(Some(Interferer { load, ..interferer(0.0, Some(0.0), false, 0.0) }));
            let mut w = Wake::default();
            for _ in 0..5000 {
                m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            }
            drain(&mut m, Time::ZERO, w);
            m.stats.mpdus_interfered[AP] as f64 / m.stats.mpdus_sent[AP] as f64
        };
        let (full, half) = (share(1.0), share(0.5));
        // Our 64-MPDU PPDU spans about one of its cycles: each MPDU touches one or two cycles.
        assert!(half > 0.4 * full && half < 0.65 * full, "{half} vs {full}");
    }

    /// Hidden terminal: the same neighbour, as strong as our signal at our receivers, is sensed
    /// when our transmitters hear it as strongly (inside our beams) and takes turns without a
    /// loss; heard through the side lobes (beams apart: -42 - 26.52 dBm, below the -68 dBm
    /// preamble detection) it is not sensed, overlaps our MPDUs, and frames are lost.
    #[test]
    fn hidden_interferer_causes_loss_a_sensed_one_does_not() {
        let run = |sensed_dbm: Option<f64>| {
            let mut m = medium(0);
            m.set_signal(-42.0, 0.0);
            m.set_interferer(Some(Interferer { sensed_dbm, ..interferer(0.0, None, false, 0.0) }));
            let mut w = Wake::default();
            for _ in 0..5000 {
                m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            }
            drain(&mut m, Time::ZERO, w);
            (m.interference(), m.stats.mpdus_failed[AP], m.stats.drops_retry[AP])
        };
        let ((p, sensed), failed, dropped) = run(None);
        assert_eq!((p, sensed, failed, dropped), (0.0, 1.0, 0, 0));
        let ((p, sensed), failed, dropped) = run(Some(-42.0 - crate::link::spectrum::beams_apart_isolation_db()));
        assert_eq!(sensed, 0.0);
        assert!(p > 0.5, "{p}");
        assert!(failed > 1000 && dropped > 0, "{failed} failed, {dropped} dropped");
    }

    /// Capture: under the same unsensed neighbour 8 dB below our signal, an MCS 1 frame (it
    /// needs 3.5 dB of SINR) survives every overlap and an MCS 9 one (12.5 dB) does not.
    #[test]
    fn capture_saves_a_robust_mcs_not_a_fast_one() {
        let run = |mcs: u8| {
            let mut m = medium(0);
            m.set_signal(-42.0, 0.0);
            m.set_mcs(AP, mcs);
            m.set_interferer(Some(interferer(-8.0, Some(0.0), false, 0.0)));
            let mut w = Wake::default();
            for _ in 0..3000 {
                m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            }
            drain(&mut m, Time::ZERO, w);
            (m.stats.mpdus_interfered[AP], m.stats.mpdus_failed[AP])
        };
        let (hit, failed) = run(1);
        assert!(hit > 500 && failed == 0, "MCS 1: {failed} of {hit} overlapped MPDUs lost");
        let (hit, failed) = run(9);
        assert!(hit > 500 && failed as f64 > 0.75 * hit as f64, "MCS 9: {failed} of {hit} overlapped MPDUs lost");
    }
}
