//! How a station fills a TXOP: an A-MPDU of up to `max_mpdus` MPDUs (the Block Ack window
//! counts MPDUs), within the A-MPDU byte limit and the maximum PPDU duration, each MPDU one
//! MSDU or an A-MSDU of up to `amsdu_msdus` of them within the peer's maximum MPDU length, of
//! the packets its host has prepared. Lengths follow radio.rs (`mpdu_len`, `ampdu_append`:
//! 802.11-2016 9.3.2.2.2 A-MSDU subframes, 9.7.1 A-MPDU delimiters and padding).

use super::{Frame, Medium, NO_MPDU};
use crate::link::radio::{ampdu_append, MacTiming, MpduBuilder};
use crate::time::Time;
use std::iter::Peekable;

/// One MPDU of the aggregate a station last formed: its MSDUs (consecutive queued frames), its
/// length from MAC header to FCS, and whether it goes out for the first time (else it is a
/// retry, whose MSDUs already share an MPDU id).
#[derive(Debug, Clone, Copy)]
pub(super) struct MpduSpan {
    pub msdus: usize,
    pub len: u32,
    pub fresh: bool,
}

/// MCS indices `psdu_cap` caches (every table here is below it: DMG 0-31, HT 0-31, VHT 0-9).
pub(super) const PSDU_CAP_MCS: usize = 32;

impl Medium {
    /// The longest PSDU (octets) whose PPDU at `mcs` stays within the maximum PPDU time. A
    /// PPDU's duration never shrinks as its PSDU grows, so `ppdu_ns(b, mcs) <= max_ppdu_ns`
    /// exactly when `b <= psdu_cap(mcs)`: the aggregation loop compares octets instead of
    /// computing a duration per MPDU. Found once per MCS by bisection, then cached.
    fn psdu_cap(&mut self, mcs: u8) -> u32 {
        let i = mcs as usize;
        if let Some(&c) = self.psdu_cap.get(i).filter(|&&c| c != 0) {
            return c - 1;
        }
        let fits = |b: u32| self.phy.ppdu_ns(b, mcs) <= self.mac.max_ppdu_ns;
        // Beyond any A-MPDU's length limit (802.11-2016: 6,500,631 octets for VHT).
        let (mut lo, mut hi) = (0u32, 1u32 << 23);
        let cap = if fits(hi) {
            hi
        } else if !fits(lo) {
            0
        } else {
            // fits(lo) and !fits(hi).
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if fits(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        if let Some(c) = self.psdu_cap.get_mut(i) {
            *c = cap + 1;
        }
        cap
    }

    /// Builds the aggregate at the head of `from`'s queue, marking which MSDUs share an MPDU:
    /// (MSDUs, MPDUs, PSDU bytes). An A-MPDU holds up to `max_mpdus` MPDUs (the Block Ack
    /// window counts MPDUs, not MSDUs), within the A-MPDU byte limit and the PPDU time limit,
    /// of the packets its host has prepared by `now`. Its MPDUs are left in the station's
    /// `layout`, which settles the TXOP without walking the queue again. One pass over the
    /// queue (an iterator walks the VecDeque's two slices without re-indexing it), MPDU by
    /// MPDU; a new MPDU takes the next id as it is formed.
    pub(super) fn aggregate(&mut self, from: usize, now: Time) -> (usize, usize, u32) {
        let mcs = self.st[from].mcs;
        let limit = self.mac.max_ampdu_bytes.min(self.psdu_cap(mcs));
        self.st[from].layout.clear();
        let (n, psdu) = if self.mac.amsdu_msdus <= 1 {
            self.aggregate_msdus(from, now, limit)
        } else {
            self.aggregate_amsdus(from, now, limit)
        };
        (n, self.st[from].layout.len(), psdu)
    }

    /// `aggregate` without A-MSDU (the usual case): every MPDU, new or retried, is one MSDU.
    fn aggregate_msdus(&mut self, from: usize, now: Time, limit: u32) -> (usize, u32) {
        let mac = &self.mac;
        let st = &mut self.st[from];
        let mut psdu = 0u32;
        for f in st.queue.iter_mut() {
            let m = st.layout.len();
            if f.ready > now || (m > 0 && m as u32 >= mac.max_mpdus) {
                break;
            }
            let len = MpduBuilder::default().with(f.p.size_bytes).bytes();
            let next = ampdu_append(psdu, len);
            if m > 0 && next > limit {
                break;
            }
            let fresh = f.mpdu == NO_MPDU;
            if fresh {
                f.mpdu = self.next_mpdu;
                self.next_mpdu += 1;
            }
            st.layout.push(MpduSpan { msdus: 1, len, fresh });
            psdu = next;
        }
        (st.layout.len(), psdu)
    }

    /// `aggregate` with A-MSDU: an MPDU takes up to `amsdu_msdus` MSDUs.
    fn aggregate_amsdus(&mut self, from: usize, now: Time, limit: u32) -> (usize, u32) {
        let mac = &self.mac;
        let st = &mut self.st[from];
        let (mut n, mut psdu) = (0usize, 0u32);
        let mut overflow = None;
        let mut frames = st.queue.iter_mut().peekable();
        while let Some(head) = frames.next_if(|f| f.ready <= now) {
            let m = st.layout.len();
            if m > 0 && m as u32 >= mac.max_mpdus {
                break;
            }
            let span = take_mpdu(mac, head, &mut frames, now, self.next_mpdu);
            let next = ampdu_append(psdu, span.len);
            if m > 0 && next > limit {
                overflow = Some(span);
                break;
            }
            st.layout.push(span);
            self.next_mpdu += span.fresh as u64;
            n += span.msdus;
            psdu = next;
        }
        // The MPDU that did not fit stays unsent.
        if let Some(span) = overflow.filter(|s| s.fresh) {
            st.queue.range_mut(n..n + span.msdus).for_each(|f| f.mpdu = NO_MPDU);
        }
        (n, psdu)
    }
}

/// The MPDU whose first MSDU is `head`, taking from `rest` (the frames queued behind it) the
/// MSDUs that join it. An MPDU already sent keeps its MSDUs (a retry resends the same MPDU);
/// otherwise the transmitter packs up to `amsdu_msdus` MSDUs not yet sent into one A-MSDU, as
/// long as it stays within the peer's maximum MPDU length and its host has prepared them by
/// `now`. The MSDUs of a new MPDU get MPDU id `id`.
#[inline]
fn take_mpdu<'a>(
    mac: &MacTiming,
    head: &mut Frame,
    rest: &mut Peekable<impl Iterator<Item = &'a mut Frame>>,
    now: Time,
    id: u64,
) -> MpduSpan {
    let fresh = head.mpdu == NO_MPDU;
    let mut mpdu = MpduBuilder::default().with(head.p.size_bytes);
    let head_mpdu = head.mpdu;
    if fresh {
        head.mpdu = id;
    }
    let mut k = 1usize;
    let joins = |f: &Frame, k: usize, mpdu: MpduBuilder| {
        if !fresh {
            f.mpdu == head_mpdu
        } else {
            (k as u32) < mac.amsdu_msdus
                && f.mpdu == NO_MPDU
                && f.ready <= now
                && mpdu.with(f.p.size_bytes).bytes() <= mac.max_amsdu_bytes
        }
    };
    while let Some(f) = rest.next_if(|f| joins(f, k, mpdu)) {
        mpdu = mpdu.with(f.p.size_bytes);
        if fresh {
            f.mpdu = id;
        }
        k += 1;
    }
    MpduSpan { msdus: k, len: mpdu.bytes(), fresh }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::medium::testkit::*;

    #[test]
    fn aggregates_up_to_the_mpdu_limit_and_alternates() {
        let mut m = medium(0);
        // With CW 0 two ready stations always collide; this checks aggregation, so they take
        // turns (backoff contention has its own tests below).
        m.mac.collisions = false;
        let mut w = Wake::default();
        // Queue everything while the link is down, so the first TXOP sees the whole backlog.
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..20 {
            m.enqueue(Time::ZERO, AP, pkt(0, 7912), &mut w);
        }
        m.enqueue(Time::ZERO, STA, pkt(1, 52), &mut w);
        m.set_up(Time::ZERO, true, &mut w);
        let (got, _) = drain(&mut m, Time::ZERO, w);
        assert_eq!(got, [20, 1]);
        let max = MacTiming::dmg().max_mpdus as u64;
        // 20 frames need ceil(20 / max) AP TXOPs; the client's ACK gets one of its own.
        assert_eq!(m.stats.txops[AP], 20u64.div_ceil(max));
        assert_eq!(m.stats.txops[STA], 1);
    }

    /// An 802.11ac medium (80 MHz, 2 SS, short GI, MCS 9) whose stations pack `amsdu` MSDUs per
    /// MPDU, no random backoff.
    fn vht_medium(amsdu: u32, host_pkt_ns: u64) -> Medium {
        let mut mac = MacTiming::vht();
        mac.cw_min = 0;
        mac.amsdu_msdus = amsdu;
        mac.max_amsdu_bytes = 7991;
        let phy = RadioPhy::Vht { bw: crate::link::phy::vht::Bandwidth::Mhz80, nss: 2, sgi: true };
        Medium::new(phy, mac, host_pkt_ns, Time::ZERO, 10_000_000, 9, RngStream::new(1, 1))
    }

    /// With A-MSDU the 64-MPDU window carries three times the packets: 200 packets go out as
    /// 64 MPDUs of 3 (192) then 3 of 3 minus one (8 packets: 3 + 3 + 2) in a second TXOP.
    #[test]
    fn amsdu_packs_msdus_into_each_mpdu() {
        let (mut m, w) = backlogged(vht_medium(3, 0), AP, 200, 1500);
        let first = w.tx_done.expect("a TXOP");
        let mac = m.mac;
        let psdu = 64 * 4604;
        let expected = mac.access_ns + m.phy.ppdu_ns(psdu, 9) + mac.sifs_ns + mac.ack_ns;
        assert_eq!(first, Time(expected), "192 packets in one 294,656-octet PSDU");
        let (got, _) = drain(&mut m, Time::ZERO, w);
        assert_eq!(got[AP], 200);
        assert_eq!((m.stats.txops[AP], m.stats.mpdus_sent[AP]), (2, 64 + 3));
        // Without A-MSDU the same backlog takes 4 TXOPs of up to 64 MPDUs.
        let (mut m, w) = backlogged(vht_medium(1, 0), AP, 200, 1500);
        drain(&mut m, Time::ZERO, w);
        assert_eq!((m.stats.txops[AP], m.stats.mpdus_sent[AP]), (4, 200));
    }

    /// One FCS covers an A-MSDU: a lost MPDU loses all its MSDUs, which are retried together
    /// (in the same MPDU, not regrouped with packets queued since) and dropped together.
    #[test]
    fn a_lost_amsdu_loses_all_its_msdus() {
        let mut m = vht_medium(3, 0);
        m.set_per(AP, 1.0);
        let (mut m, mut w) = backlogged(m, AP, 2, 1500);
        let end = w.tx_done.take().expect("a TXOP");
        // Two more packets arrive while the 2-MSDU MPDU is on the air.
        for _ in 0..2 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        let mut dropped = Vec::new();
        m.on_tx_done(end, &mut w, &mut dropped);
        assert_eq!((m.stats.mpdus_sent[AP], m.stats.mpdus_failed[AP]), (1, 1));
        assert_eq!(m.st[AP].queue.iter().map(|f| f.retries).collect::<Vec<_>>(), [1, 1, 0, 0]);
        // The retry is the same 2-MSDU MPDU; the new packets make another (not 3 + 1).
        assert!(m.busy.is_some_and(|t| (t.n, t.m) == (4, 2)), "{:?}", m.busy);
        let ids: Vec<u64> = m.st[AP].queue.iter().map(|f| f.mpdu).collect();
        assert!(ids[0] == ids[1] && ids[2] == ids[3] && ids[1] != ids[2], "{ids:?}");
        // Every MPDU fails until its retry limit: all four packets dropped, in 2 x 8 MPDUs.
        let (got, _) = drain(&mut m, end, w);
        assert_eq!(got, [0, 0]);
        assert_eq!(m.stats.drops_retry[AP], 4);
        assert_eq!(m.stats.mpdus_failed[AP], 2 * (m.mac.retry_limit as u64 + 1));
        assert_eq!(m.queue_bytes(AP), 0);
    }

    /// `m` with `n` packets of `size` bytes queued at the AP while its
    /// link is down, so that `aggregate` sees them all at once.
    fn queued_at_ap(mut m: Medium, n: usize, size: u32) -> Medium {
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..n {
            m.enqueue(Time::ZERO, AP, pkt(0, size), &mut w);
        }
        m
    }

    /// The A-MSDU never exceeds the peer's maximum MPDU length: at 3895 octets (the smallest
    /// VHT limit) three 1500-byte packets (4600) do not fit, two (3076) do.
    #[test]
    fn amsdu_respects_the_mpdu_length_limit() {
        let mut m = queued_at_ap(vht_medium(3, 0), 6, 1500);
        m.mac.max_amsdu_bytes = 3895;
        let (n, mpdus, _) = m.aggregate(AP, Time::ZERO);
        assert_eq!((n, mpdus), (6, 3));
        // Small packets (ACKs) fill the count instead.
        let mut m = queued_at_ap(vht_medium(3, 0), 7, 52);
        assert_eq!(m.aggregate(AP, Time::ZERO).1, 3);
    }

    /// Only the MPDUs that go in the aggregate get an id: the A-MSDU that would overflow the
    /// A-MPDU byte limit stays unsent, and forms anew next time.
    #[test]
    fn the_mpdu_that_does_not_fit_gets_no_id() {
        let mut m = queued_at_ap(vht_medium(3, 0), 6, 1500);
        m.mac.max_ampdu_bytes = 6000;
        assert_eq!(m.aggregate(AP, Time::ZERO).0, 3);
        let ids: Vec<u64> = m.st[AP].queue.iter().map(|f| f.mpdu).collect();
        assert!(ids[..3].iter().all(|&i| i == ids[0] && i != NO_MPDU), "{ids:?}");
        assert!(ids[3..].iter().all(|&i| i == NO_MPDU), "{ids:?}");
    }
}
