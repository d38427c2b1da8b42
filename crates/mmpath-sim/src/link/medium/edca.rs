//! Channel access between the AP and the client: EDCA as 802.11-2016 10.22.2.2 / 10.3.4.3
//! run it (the DCF of Bianchi, "Performance analysis of the IEEE 802.11 DCF", JSAC 2000).
//! Each station has its own contention window (binary exponential backoff: doubled after a
//! failed exchange, CWmin after a success) and backoff counter (counted down in idle slots
//! after AIFS, frozen while the medium is busy, post-backoff after each exchange); the first
//! counter to end takes the TXOP, and both ending in the same slot is a collision that fails
//! both exchanges. Without collisions (unit tests only) the stations take turns.

use super::{Medium, Txop, Wake, AP, STA};
use crate::packet::Packet;
use crate::time::Time;

impl Medium {
    /// Without collisions (unit tests only): take turns, the station that did not transmit
    /// last first, after a backoff drawn from CWmin.
    pub(super) fn take_turns(&mut self, now: Time, wake: &mut Wake) {
        let order = [1 - self.last_from, self.last_from];
        let mut wait: Option<Time> = None;
        for from in order {
            let Some(head) = self.st[from].queue.front() else { continue };
            if head.ready > now {
                // It contends once its host has prepared its first frame.
                wait = Some(wait.map_or(head.ready, |w| w.min(head.ready)));
                continue;
            }
            let (n, m, psdu) = self.aggregate(from, now);
            let slots = (self.rng.next_u64() % (self.mac.cw_min as u64 + 1)) as u32;
            let ppdu_ns = self.phy.ppdu_ns(psdu, self.st[from].mcs);
            // Its frames are prepared already: the channel is busy for the airtime only.
            let end = self.txop_end(now, slots, self.exchange_ns(ppdu_ns));
            self.busy = Some(Txop { ppdu_ns, n, m, ..Txop::new(from, now, end) });
            self.last_from = from;
            wake.tx_done = Some(end);
            return;
        }
        self.wake_when_ready(now, wait, wake);
    }

    /// Backoff slots of station `s`: what it has left of its count, or a new draw uniform in
    /// [0, CW] (802.11-2016 10.3.4.3).
    fn backoff_slots(&mut self, s: usize) -> u32 {
        if let Some(b) = self.st[s].backoff {
            return b;
        }
        let b = (self.rng.next_u64() % (self.st[s].cw as u64 + 1)) as u32;
        self.st[s].backoff = Some(b);
        self.st[s].expired = false;
        b
    }

    /// RTS/CTS (if the MAC protects its TXOPs), the PPDU, SIFS and the Block Ack, ns.
    fn exchange_ns(&self, ppdu_ns: u64) -> u64 {
        self.mac.protection_ns + ppdu_ns + self.mac.sifs_ns + self.mac.ack_ns
    }

    /// End of a TXOP whose contention began at `start` (the medium idle from then) and whose
    /// backoff reached zero at the end of slot `k`, followed by `rest_ns` of exchange; the
    /// whole is stretched by the beacon header interval's share, as every TXOP is.
    fn txop_end(&self, start: Time, k: u32, rest_ns: u64) -> Time {
        start + Time(self.mac.with_beacon_share(self.mac.access_ns + k as u64 * self.mac.slot_ns + rest_ns))
    }

    /// The first backoff slot a station whose head frame is ready at `since` counts in a
    /// contention begun at `start`: slot 0 if it was ready within AIFS (it counts from the same
    /// boundary as the other), else the slot after the one in progress (the medium has been
    /// idle for AIFS already, so it counts at every slot boundary from then).
    fn first_slot(&self, start: Time, since: Time) -> u32 {
        let off = (since - start).ns();
        let boundary = |k: u64| self.mac.with_beacon_share(self.mac.access_ns + k * self.mac.slot_ns);
        // Estimate from the unstretched time, then settle on the exact boundary.
        let raw = match self.mac.beacon_header_ns {
            0 => off,
            h => (off as u128 * (self.mac.beacon_interval_ns - h) as u128 / self.mac.beacon_interval_ns as u128) as u64,
        };
        let mut k = raw.saturating_sub(self.mac.access_ns) / self.mac.slot_ns.max(1);
        while k > 0 && boundary(k - 1) > off {
            k -= 1;
        }
        while boundary(k) <= off {
            k += 1;
        }
        k.min(u32::MAX as u64) as u32
    }

    /// Backoff collisions (`MacTiming::collisions`, on for every path), EDCA as 802.11-2016
    /// 10.22.2.2 / 10.3.4.3 run it (the DCF of Bianchi, JSAC 2000). Each station has a backoff
    /// counter, drawn uniformly from its own CW after each of its exchanges (the post-backoff,
    /// run even with nothing queued) and counted down in every idle slot after AIFS, frozen
    /// while the medium is busy. The medium has been idle since `idle_since`; a station whose
    /// head frame its host has prepared transmits at the end of the slot its counter reaches
    /// zero, or, if it was already zero, at the first slot boundary after its frame is ready
    /// (a frame that found the medium busy with the counter at zero draws a new backoff). The
    /// first to transmit forms its A-MPDU (of the frames prepared by now) and takes the TXOP;
    /// the other keeps what is left of its count. Both transmitting in the same slot is a
    /// collision (`rival_counts`). Draws are made in station order (AP, then client): the
    /// same seed gives the same run.
    pub(super) fn contend(&mut self, now: Time, wake: &mut Wake) {
        let origin = self.idle_since.min(now);
        let k_now = if now > origin { self.first_slot(origin, now) } else { 0 };
        let mut e = [u32::MAX; 2];
        let mut wait: Option<Time> = None;
        for s in [AP, STA] {
            let Some(head) = self.st[s].queue.front() else { continue };
            let ready = head.ready;
            if ready > now {
                wait = Some(wait.map_or(ready, |w| w.min(ready)));
                continue;
            }
            e[s] = self.transmit_slot(s, origin, ready).max(k_now);
        }
        if e == [u32::MAX; 2] {
            self.wake_when_ready(now, wait, wake);
            return;
        }
        let from = if e[STA] < e[AP] { STA } else { AP };
        let slots = e[from];
        let (n, m, psdu) = self.aggregate(from, now);
        let ppdu_ns = self.phy.ppdu_ns(psdu, self.st[from].mcs);
        let end = self.txop_end(origin, slots, self.exchange_ns(ppdu_ns));
        self.busy = Some(Txop { ppdu_ns, n, m, origin, slots, rival_drew: false, ..Txop::new(from, now, end) });
        self.last_from = from;
        wake.tx_done = Some(end);
        // The other station, if it has a frame (ready, or ready later in this contention).
        let x = 1 - from;
        if let Some(ready) = self.st[x].queue.front().map(|f| f.ready) {
            self.rival_counts(x, ready, (e[x] != u32::MAX).then_some(e[x]), wake);
        }
    }

    /// The slot (from `origin`, the medium idle since) at whose end station `s`, whose head
    /// frame is ready at `ready`, transmits: when its counter reaches zero, and not before the
    /// first slot boundary after the frame is ready. A frame ready while the medium was still
    /// busy (before `origin`) with the counter at zero draws a new backoff (10.22.2.2).
    fn transmit_slot(&mut self, s: usize, origin: Time, ready: Time) -> u32 {
        if ready < origin && self.st[s].expired {
            self.st[s].backoff = None;
        }
        let c = self.backoff_slots(s);
        c.max(self.first_slot(origin, ready.max(origin)))
    }

    /// Station `x`'s head frame is ready at `ready`, during the contention of the TXOP `busy`
    /// holds (of the other station). If `x` transmits before the other, it takes the TXOP (the
    /// other keeps the rest of its count); in the same slot, both transmit and both exchanges
    /// fail; later, it waits (its counter is settled with the TXOP). A collision costs, with
    /// RTS/CTS, the RTS and the CTS timeout (CTSTimeout = SIFS + slot + PHY-RX-START delay,
    /// 802.11-2016 10.3.2.9, taken as the protection's SIFS + CTS + SIFS); without, the longer
    /// PPDU and the Block Ack timeout (taken as SIFS + Block Ack).
    /// `e`: its transmit slot, if `contend` has worked it out already.
    pub(super) fn rival_counts(&mut self, x: usize, ready: Time, e: Option<u32>, wake: &mut Wake) {
        let Some(t) = self.busy else { return };
        if t.rival_drew || t.from != 1 - x {
            return;
        }
        self.busy = Some(Txop { rival_drew: true, ..t });
        if self.first_slot(t.origin, ready.max(t.origin)) > t.slots {
            return; // ready after the other transmitted: it contends for the next TXOP
        }
        let e = match e {
            Some(e) => e,
            None => self.transmit_slot(x, t.origin, ready),
        };
        let since = ready.max(t.start);
        if e < t.slots {
            let (n, m, psdu) = self.aggregate(x, since);
            let ppdu_ns = self.phy.ppdu_ns(psdu, self.st[x].mcs);
            let end = self.txop_end(t.origin, e, self.exchange_ns(ppdu_ns));
            self.busy = Some(Txop { ppdu_ns, n, m, origin: t.origin, slots: e, ..Txop::new(x, t.start, end) });
            self.last_from = x;
            wake.tx_done = Some(end);
        } else if e == t.slots {
            let (n2, m2, psdu2) = self.aggregate(x, since);
            let ppdu2_ns = self.phy.ppdu_ns(psdu2, self.st[x].mcs);
            let lost_ns = if self.mac.protection_ns > 0 {
                self.mac.protection_ns
            } else {
                t.ppdu_ns.max(ppdu2_ns) + self.mac.sifs_ns + self.mac.ack_ns
            };
            let end = self.txop_end(t.origin, t.slots, lost_ns);
            self.busy = Some(Txop { end, rival_drew: true, collide: true, n2, m2, ppdu2_ns, ..t });
            wake.tx_done = Some(end);
        }
    }

    /// The counters after an exchange of `t.from` that ended in slot `t.slots`: the station(s)
    /// that transmitted draw a new backoff from their (updated) CW; the other has counted the
    /// same idle slots and keeps the rest.
    pub(super) fn after_exchange(&mut self, t: &Txop) {
        let x = 1 - t.from;
        self.st[t.from].backoff = None;
        self.backoff_slots(t.from);
        if t.collide {
            self.st[x].backoff = None;
            self.backoff_slots(x);
        } else {
            // It had nothing ready in time (or it would have transmitted by slot `t.slots`):
            // a counter that reached zero is an expired post-backoff.
            if let Some(c) = self.st[x].backoff {
                let left = c.saturating_sub(t.slots);
                self.st[x].backoff = Some(left);
                self.st[x].expired = left == 0;
            }
        }
    }

    /// After a failed exchange: CW = min(2 (CW + 1) - 1, CWmax) (802.11-2016 10.22.2.2).
    pub(super) fn cw_double(&mut self, s: usize) {
        let cw = &mut self.st[s].cw;
        *cw = (2 * (*cw + 1) - 1).min(self.mac.cw_max.max(self.mac.cw_min));
    }

    /// A collision: the first `n` MSDUs (`m` MPDUs) of station `s` were sent and not received;
    /// each spends a retry (dropped after the last one), as an MPDU lost to errors does, and
    /// the station's CW doubles.
    pub(super) fn fail_head(
        &mut self,
        s: usize,
        n: usize,
        m: usize,
        at: Time,
        dropped: &mut Vec<Packet>,
        wake: &mut Wake,
    ) {
        self.stats.mpdus_sent[s] += m as u64;
        self.stats.mpdus_failed[s] += m as u64;
        self.failed.clear();
        for _ in 0..n {
            let Some(f) = self.st[s].queue.pop_front() else { break };
            self.retry_or_drop(s, f, at, dropped, wake);
        }
        self.requeue_failed(s);
        self.cw_double(s);
        // Without RTS/CTS the aggregate went out and was lost: rate adaptation sees it fail.
        // (A lost RTS is not a data frame's failure.)
        if self.mac.protection_ns == 0 {
            self.rate_feedback(s, m, m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::medium::testkit::*;

    // ---- Backoff collisions between the AP and the client (EDCA, 802.11-2016 10.22.2) ----

    fn dmg(cw_min: u32, cw_max: u32, seed: u64) -> Medium {
        let mac = MacTiming { cw_min, cw_max, ..MacTiming::dmg() };
        assert!(mac.collisions, "collisions are on by default");
        Medium::new(RadioPhy::Dmg, mac, 0, Time::ZERO, 100_000_000, 9, RngStream::new(seed, 1))
    }

    fn vht(cw_min: u32, seed: u64) -> Medium {
        let mac = MacTiming { cw_min, ..MacTiming::vht() };
        assert!(mac.collisions && mac.protection_ns == 0, "11ac: collisions, no RTS/CTS");
        let phy = RadioPhy::Vht { bw: crate::link::phy::vht::Bandwidth::Mhz80, nss: 2, sgi: true };
        Medium::new(phy, mac, 0, Time::ZERO, 10_000_000, 9, RngStream::new(seed, 1))
    }

    /// Both stations hold `k` frames of `size` octets (and `k_sta` for the client) before the
    /// link comes up at 0.
    fn both_ready(m: &mut Medium, k: usize, k_sta: usize, size: u32) -> Wake {
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..k {
            m.enqueue(Time::ZERO, AP, pkt(0, size), &mut w);
        }
        for _ in 0..k_sta {
            m.enqueue(Time::ZERO, STA, pkt(1, size), &mut w);
        }
        m.set_up(Time::ZERO, true, &mut w);
        w
    }

    /// Runs the medium's TxDone events (arrivals stay in the pipes) until `stop` holds or
    /// nothing is scheduled; returns the time reached.
    fn run(m: &mut Medium, mut w: Wake, stop: impl Fn(&Medium) -> bool) -> Time {
        let mut dropped = Vec::new();
        let mut now = Time::ZERO;
        while let Some(t) = w.tx_done.take() {
            if stop(m) {
                break;
            }
            now = t;
            m.on_tx_done(now, &mut w, &mut dropped);
        }
        now
    }

    /// The first contention of two stations with fresh backoffs from CWmin = 15 collides when
    /// both draw the same slot: probability 1/16.
    #[test]
    fn first_contention_collides_with_probability_one_in_cw_plus_one() {
        let seeds = 4000u64;
        let mut hits = 0u64;
        for seed in 1..=seeds {
            let mut m = dmg(15, 1023, seed);
            both_ready(&mut m, 1, 1, 1500);
            let t = m.busy.expect("a contention");
            assert!(t.rival_drew);
            hits += t.collide as u64;
        }
        let p = hits as f64 / seeds as f64;
        // 1/16 = 0.0625, sigma = 0.0038 for 4000 draws: 3 sigma.
        assert!((p - 1.0 / 16.0).abs() < 0.0115, "{p}");
    }

    /// Two saturated stations (one MPDU per TXOP, so many contentions): the per-attempt
    /// collision probability is Bianchi's (JSAC 2000) fixed point for n = 2, W = CWmin + 1 = 16,
    /// m = 6 doublings to 1024: p = 0.1046 (p = 1 - (1 - tau), tau = 2 (1 - 2p) / ((1 - 2p)
    /// (W + 1) + p W (1 - (2p)^m))). Each collision is two failed attempts. The stations share
    /// the successful TXOPs equally.
    #[test]
    fn saturated_pair_collides_as_bianchi_predicts() {
        // Bianchi's fixed point, solved here by bisection.
        let (w, mm) = (16.0f64, 6);
        let tau = |p: f64| 2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(mm)));
        let (mut lo, mut hi) = (0.0f64, 0.49);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if mid < tau(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        assert!((lo - 0.1046).abs() < 0.0005, "Bianchi p {lo}");
        let mut m = dmg(15, 1023, 7);
        m.mac.max_mpdus = 1;
        let w = both_ready(&mut m, 30_000, 30_000, 100);
        run(&mut m, w, |m| m.stats.txops[AP] + m.stats.txops[STA] >= 40_000);
        let c = m.stats.collisions as f64;
        let attempts = (m.stats.txops[AP] + m.stats.txops[STA]) as f64;
        let per_attempt = 2.0 * c / attempts;
        assert!((per_attempt - lo).abs() < 0.01, "{per_attempt} vs Bianchi {lo}");
        let share = (m.stats.txops[AP] as f64 - c) / (attempts - 2.0 * c);
        assert!((share - 0.5).abs() < 0.02, "{share}");
    }

    /// With CW 0 both stations draw slot 0: a certain collision. Both exchanges fail, every
    /// MPDU of both spends a retry, CW doubles for both (0 -> 1). 802.11ad protects every TXOP
    /// with RTS/DMG CTS, so the collision costs only the RTS and the CTS timeout.
    #[test]
    fn a_protected_collision_fails_both_and_costs_the_rts_cts() {
        let mut m = dmg(0, 1023, 1);
        let mac = m.mac;
        let w = both_ready(&mut m, 3, 3, 1500);
        let t = m.busy.expect("a contention");
        assert!(t.collide && t.n == 3 && t.n2 == 3 && t.slots == 0);
        assert_eq!(t.end, Time(mac.with_beacon_share(mac.access_ns + mac.protection_ns)));
        let mut dropped = Vec::new();
        let mut w2 = w;
        w2.tx_done = None;
        m.on_tx_done(t.end, &mut w2, &mut dropped);
        assert_eq!(m.stats.collisions, 1);
        assert_eq!((m.st[AP].cw, m.st[STA].cw), (1, 1));
        for s in [AP, STA] {
            // All three MPDUs are still queued (nothing given up), each with one retry spent.
            assert_eq!(m.st[s].queue.len(), 3);
            assert!(m.st[s].queue.iter().all(|f| f.retries == 1));
            assert_eq!((m.stats.txops[s], m.stats.mpdus_failed[s], m.stats.bytes_delivered[s]), (1, 3, 0));
        }
    }

    /// Without RTS/CTS (802.11ac/n: the phone's qcacld ini sets RTSThreshold = 1048576) a
    /// collision costs the longer of the two PPDUs, SIFS and the Block Ack timeout; the
    /// client's radio meter counts its own PPDU as on the air.
    #[test]
    fn an_unprotected_collision_costs_the_longer_ppdu() {
        let mut m = vht(0, 1);
        let mac = m.mac;
        let phy = *m.phy();
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..10 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        m.enqueue(Time::ZERO, STA, pkt(1, 52), &mut w);
        m.set_up(Time::ZERO, true, &mut w);
        let x = m.busy.expect("the collided exchange");
        assert!(x.collide && x.from == AP && (x.n, x.n2) == (10, 1));
        let long = phy.ppdu_ns(m.aggregate(AP, Time::ZERO).2, 9);
        assert!(long > x.ppdu2_ns);
        assert_eq!(x.end, Time(mac.access_ns + long + mac.sifs_ns + mac.ack_ns));
        // The same collision with RTS/CTS would have cost far less airtime.
        assert!(mac.access_ns + MacTiming::dmg().protection_ns < x.end.ns() / 2);
    }

    /// CW = min(2 (CW + 1) - 1, CWmax) after each failed exchange; back to CWmin after a
    /// successful one (a Block Ack for at least one MPDU).
    #[test]
    fn cw_doubles_to_cwmax_and_resets_after_a_success() {
        let mut m = dmg(15, 1023, 1);
        let mut seen = vec![m.st[STA].cw];
        for _ in 0..8 {
            m.cw_double(STA);
            seen.push(m.st[STA].cw);
        }
        assert_eq!(seen, vec![15, 31, 63, 127, 255, 511, 1023, 1023, 1023]);
        let mut w = Wake::default();
        m.enqueue(Time::ZERO, STA, pkt(1, 1500), &mut w);
        run(&mut m, w, |_| false);
        assert_eq!(m.stats.bytes_delivered[STA], 1500);
        assert_eq!(m.st[STA].cw, 15);
        // An exchange whose every MPDU is lost (no Block Ack) doubles it.
        m.set_per(STA, 1.0);
        let mut w = Wake::default();
        m.enqueue(m.idle_since, STA, pkt(1, 1500), &mut w);
        let end = m.busy.expect("a TXOP").end;
        m.on_tx_done(end, &mut w, &mut Vec::new());
        assert_eq!(m.st[STA].cw, 31);
    }

    /// The loser keeps what is left of its count, frozen while the winner's exchange holds the
    /// medium: AP at 5, client at 9 -> the AP transmits at the end of slot 5; the client has 4
    /// left and, alone afterwards, transmits 4 slots after AIFS once the medium is idle again.
    #[test]
    fn the_loser_resumes_its_frozen_count() {
        let mut m = dmg(15, 1023, 3);
        let mac = m.mac;
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        m.enqueue(Time::ZERO, STA, pkt(1, 1500), &mut w);
        m.st[AP].backoff = Some(5);
        m.st[STA].backoff = Some(9);
        m.set_up(Time::ZERO, true, &mut w);
        let t = m.busy.expect("a TXOP");
        assert!((t.from, t.slots, t.collide) == (AP, 5, false), "{t:?}");
        let ppdu = m.phy.ppdu_ns(1500 + mac.mpdu_overhead_bytes, 9);
        let exchange = mac.protection_ns + ppdu + mac.sifs_ns + mac.ack_ns;
        assert_eq!(t.end, Time(mac.with_beacon_share(mac.access_ns + 5 * mac.slot_ns + exchange)));
        m.on_tx_done(t.end, &mut w, &mut Vec::new());
        // The AP has nothing left; the client's 4 slots count from the end of the AP's TXOP.
        assert_eq!(m.st[STA].backoff, Some(4));
        let u = m.busy.expect("the client's TXOP");
        assert_eq!((u.from, u.slots), (STA, 4));
        assert_eq!(u.end, t.end + Time(mac.with_beacon_share(mac.access_ns + 4 * mac.slot_ns + exchange)));
        // The AP's post-backoff (drawn after its exchange) counted the same 4 idle slots.
        let ap = m.st[AP].backoff.expect("post-backoff");
        m.on_tx_done(u.end, &mut w, &mut Vec::new());
        assert_eq!(m.st[AP].backoff, Some(ap.saturating_sub(4)));
    }

    /// A frame that comes after the medium has been idle longer than AIFS and the station's
    /// post-backoff goes at the next slot boundary (no new backoff); one that comes while the
    /// medium is busy after the post-backoff expired draws a new backoff.
    #[test]
    fn post_backoff_expires_in_idle_time() {
        let mut m = dmg(15, 1023, 5);
        let mac = m.mac;
        let mut w = Wake::default();
        m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        let end = run(&mut m, w, |_| false);
        assert!(m.st[AP].backoff.is_some_and(|b| b <= 15));
        // 1 ms later (far more than AIFS + 15 slots): out at the first slot boundary after.
        let at = end + Time(1_000_000);
        let mut w = Wake::default();
        m.enqueue(at, AP, pkt(0, 1500), &mut w);
        let t = m.busy.expect("a TXOP");
        let k = m.first_slot(end, at);
        assert_eq!(t.slots, k);
        let boundary = end + Time(mac.with_beacon_share(mac.access_ns + k as u64 * mac.slot_ns));
        assert!(boundary > at && boundary - at <= Time(mac.slot_ns + 1), "{boundary:?} vs {at:?}");
        // The client, idle meanwhile, had its counter expire in those slots; a frame of its
        // that was queued while the AP's TXOP held the medium draws anew.
        m.st[STA].backoff = Some(0);
        m.st[STA].expired = true;
        let during = at + Time(10_000);
        assert!(during < t.end);
        m.enqueue(during, STA, pkt(1, 52), &mut w);
        assert_eq!(m.st[STA].backoff, Some(0), "nothing happens while the medium is busy");
        let end2 = t.end;
        m.on_tx_done(end2, &mut w, &mut Vec::new());
        let u = m.busy.expect("the client's TXOP");
        assert_eq!(u.from, STA);
        assert!(!m.st[STA].expired);
    }

    /// With CW stuck at 0 (CWmin = CWmax = 0) the two stations collide on every attempt: each
    /// frame is sent retry_limit + 1 times, then dropped.
    #[test]
    fn endless_collisions_drop_after_the_retry_limit() {
        let mut m = dmg(0, 0, 1);
        let w = both_ready(&mut m, 1, 1, 1500);
        run(&mut m, w, |_| false);
        let tries = m.mac.retry_limit as u64 + 1;
        assert_eq!(m.stats.collisions, tries);
        assert_eq!(m.stats.drops_retry, [1, 1]);
        assert!(m.st[AP].queue.is_empty() && m.st[STA].queue.is_empty());
    }

    /// A station whose frame comes during the other's backoff counts on the same slot grid:
    /// it takes the TXOP when it ends first (the other keeps the rest of its count), collides
    /// in the same slot, waits otherwise. Same seed, same outcome.
    #[test]
    fn a_late_rival_counts_on_the_same_slot_grid() {
        let mut counts = [0u32; 3];
        for seed in 1..=2000 {
            let mut m = dmg(15, 1023, seed);
            let mac = m.mac;
            let mut w = Wake::default();
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            let t = m.busy.unwrap();
            // The client's frame comes 2.5 slots after AIFS: it can transmit from slot 3.
            let at = Time(mac.access_ns + 5 * mac.slot_ns / 2);
            m.enqueue(at, STA, pkt(1, 52), &mut w);
            let u = m.busy.unwrap();
            if t.slots < 3 {
                assert!(!u.collide && u.from == AP, "too late");
                continue;
            }
            let c = m.st[STA].backoff.unwrap();
            if u.collide {
                counts[0] += 1;
                assert_eq!(c.max(3), t.slots);
            } else if u.from == STA {
                counts[1] += 1;
                assert_eq!(u.slots, c.max(3));
                assert!(u.slots < t.slots);
                m.on_tx_done(u.end, &mut w, &mut Vec::new());
                assert_eq!(m.st[AP].backoff, Some(t.slots - u.slots));
            } else {
                counts[2] += 1;
                assert!(c.max(3) > t.slots);
            }
        }
        assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
        let once = |seed| {
            let mut m = dmg(15, 1023, seed);
            let mut w = Wake::default();
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            m.enqueue(Time(30_000), STA, pkt(1, 52), &mut w);
            let t = m.busy.unwrap();
            (t.from, t.slots, t.collide, t.end)
        };
        assert_eq!(once(9), once(9));
    }
}
