//! A half-duplex 802.11 channel shared by two stations (AP and client): the airtime MAC.
//!
//! Each station has its own drop-tail queue; one of them transmits at a time. A transmit
//! opportunity (TXOP) costs channel access (AIFS + random backoff), optional protection
//! (RTS/CTS), one PPDU carrying an A-MPDU of up to `max_mpdus` MPDUs (bounded by the A-MPDU
//! byte limit and the maximum PPDU duration), SIFS and a Block Ack. The two stations contend
//! by EDCA backoff and collide when both counters end in the same slot (medium/edca.rs). Every
//! MPDU is lost independently with the packet error rate of its length at the station's MCS
//! (medium/per.rs); lost MPDUs stay at the head of the queue and are retried up to the retry
//! limit, then dropped (the loss TCP sees). A packet goes on the air only once its host has
//! prepared it, and what is received passes the receiving host before it arrives
//! (medium/host.rs).
//!
//! This file holds the medium's state and its events (a packet queued, a TXOP's end, the link
//! going down, up or away) and settles each TXOP. Its parts are child modules, so that they
//! share the medium's private state without widening its visibility:
//! - medium/aggregation.rs: which queued packets one TXOP carries (A-MPDU of MPDUs / A-MSDUs);
//! - medium/edca.rs: who transmits when: per-station backoff, collisions;
//! - medium/host.rs: when a packet to send is ready, and the receive processing;
//! - medium/per.rs: each station's packet error rate;
//! - medium/ring.rs: the driver's transmit ring between the qdisc and the MAC;
//! - medium/session.rs: a commodity 802.11ad link's rate, set per session (beam training);
//! - medium/foreign.rs: other stations' airtime share and an interfering link;
//! - medium/air.rs: another path of the scenario as that interfering link, each the other's.

mod aggregation;
mod air;
mod edca;
mod foreign;
mod host;
mod per;
mod ring;
mod session;
#[cfg(test)]
mod testkit;

// Re-exported so that `link::medium::...` keeps naming what it did before the split.
pub use super::spectrum::{adjacent_rejection_db, cca_thresholds_dbm};
pub use air::{Air, SharedAir};
pub use foreign::{Interferer, MAX_FOREIGN_SHARE};
pub use host::SharedCpu;

use super::arf::Arf;
use super::codel::Codel;
use super::per::per_for_len;
use super::radio::{MacTiming, RadioPhy};
use super::reorder::Reorder;
use super::seam::{Freed, Gone, Link, Wake};
use crate::energy::{RadioMeter, StateTimes};
use crate::engine::RngStream;
use crate::packet::{Kind, Packet};
use crate::time::Time;
use aggregation::{MpduSpan, PSDU_CAP_MCS};
use foreign::InterfState;
use ring::TxRing;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;

/// Station index: 0 = AP (transmits the downlink), 1 = client (transmits the uplink).
pub const AP: usize = 0;
pub const STA: usize = 1;
/// Pseudo-station for other stations' transmissions on the channel (contention).
const OTHERS: usize = 2;

#[derive(Debug, Clone, Default)]
pub struct AirStats {
    pub txops: [u64; 2],
    pub mpdus_sent: [u64; 2],
    pub mpdus_failed: [u64; 2],
    pub bytes_delivered: [u64; 2],
    pub drops_queue: [u64; 2],
    pub drops_retry: [u64; 2],
    pub mpdus_interfered: [u64; 2],
    pub busy_ns: [u64; 2],
    /// Exchanges lost to a backoff collision (both stations' backoffs ended in the same slot;
    /// each also counts as one TXOP of each station).
    pub collisions: u64,
}

/// A queued MSDU: the packet, its retries so far, its (per-MSDU) sequence number, the MPDU it
/// went out in (`NO_MPDU` until first sent) and when its host has prepared it (`ready`: it may
/// go in an aggregate from then on). The MSDUs of one A-MSDU share the MPDU: they are retried
/// together, in the same MPDU, and dropped together.
#[derive(Debug, Clone, Copy)]
struct Frame {
    p: Packet,
    retries: u8,
    seq: u64,
    mpdu: u64,
    ready: Time,
    /// When it was offered to the queue (the qdisc's enqueue time: CoDel's sojourn clock).
    queued: Time,
}

const NO_MPDU: u64 = u64::MAX;

struct Station {
    queue: VecDeque<Frame>,
    /// Next MAC sequence number to assign.
    next_seq: u64,
    /// Block Ack reordering of what this station receives.
    reorder: Reorder,
    /// Bytes queued (the driver's ring and the qdisc) and the qdisc's limit: with a ring the
    /// limit is the qdisc's alone (`qdisc_bytes`), without one the whole queue's.
    queue_bytes: u64,
    cap_bytes: u64,
    qdisc_bytes: u64,
    /// The driver's transmit ring, where the device has one (medium/ring.rs).
    ring: Option<TxRing>,
    /// CoDel on the qdisc above the ring, where the device's qdisc is fq_codel (medium/ring.rs).
    codel: Option<Codel>,
    mcs: u8,
    /// Packet error rate of a 4096-octet PSDU at the current MCS and signal.
    per_4096: f64,
    /// The same while an interferer's transmission overlaps the frame.
    per_int_4096: f64,
    /// Commodity rate adaptation, when the path uses it.
    arf: Option<Arf>,
    /// When the host finishes the packets it already has (received and sent).
    host_free: Time,
    /// When the host has prepared the last packet queued to send: the next one's preparation
    /// starts then (or when it is queued, if later). Separate from `host_free` because a packet
    /// to send (an ACK made while processing a received segment) goes to the driver at once
    /// (tcp_ack_snd_check sends it from within the receive softirq); it does not wait behind
    /// segments received after it.
    tx_free: Time,
    /// Contention window, slots: CWmin, doubled after a failed exchange, reset on success.
    cw: u32,
    /// Backoff slots still to count (what was left when the other station took the medium
    /// first: frozen while the medium is busy); None = draw anew from `cw` when next contending.
    backoff: Option<u32>,
    /// The counter reached zero in idle slots while the station had nothing ready to send (its
    /// post-backoff is over): a frame that then finds the medium busy draws a new backoff.
    expired: bool,
    /// The MPDUs of the aggregate it last formed (`aggregate`), in queue order: what its TXOP
    /// on the air carries (reused: no allocation per TXOP).
    layout: Vec<MpduSpan>,
}

#[derive(Debug, Clone, Copy)]
struct Txop {
    from: usize,
    /// Its data PPDU's time on the air, ns (the rest is access, SIFS and the Block Ack).
    ppdu_ns: u64,
    /// MSDUs (queued packets) and MPDUs on the air.
    n: usize,
    m: usize,
    /// When the TXOP began to hold the medium (its contention), and when it ends.
    start: Time,
    end: Time,
    /// Since when the medium had been idle (the slot grid's origin; `start` or earlier), and
    /// the slot after AIFS at whose end `from` transmits.
    origin: Time,
    slots: u32,
    /// The other station has had its chance against this contention (it counted its own
    /// backoff on the same slot grid, or had nothing to send before the backoff ended).
    rival_drew: bool,
    /// A collision: the other station's backoff ended in the same slot, both transmitted and
    /// neither exchange succeeds. `n2`, `m2`, `ppdu2_ns`: the other station's part of it.
    collide: bool,
    n2: usize,
    m2: usize,
    ppdu2_ns: u64,
}

impl Txop {
    fn new(from: usize, start: Time, end: Time) -> Txop {
        Txop {
            from,
            ppdu_ns: 0,
            n: 0,
            m: 0,
            start,
            end,
            origin: start,
            slots: 0,
            rival_drew: true,
            collide: false,
            n2: 0,
            m2: 0,
            ppdu2_ns: 0,
        }
    }
}

pub struct Medium {
    phy: RadioPhy,
    mac: MacTiming,
    host_pkt_ns: u64,
    delay: Time,
    st: [Station; 2],
    busy: Option<Txop>,
    /// A wake-up already requested (TxDone event pending) while idle.
    kick: Option<Time>,
    last_from: usize,
    /// Since when the medium has been idle (the end of the last TXOP, or the link coming up).
    idle_since: Time,
    up: bool,
    /// The link was lost (not just paused for a scan): until it is back, the stations are not
    /// associated and the driver has nowhere to queue a frame, so new frames are dropped.
    disconnected: bool,
    pipe: [VecDeque<(Time, Packet)>; 2],
    rng: RngStream,
    /// The received signal and how much better than the standard's sensitivity the receivers
    /// are: with it, the PER follows the MCS. Without it, PER is whatever `set_per` says.
    budget: Option<(f64, f64)>,
    /// Scratch for the MSDUs of a TXOP that must be retried (reused: no allocation per TXOP).
    failed: Vec<Frame>,
    /// Next MPDU id (identifies the MSDUs of one A-MSDU in the queue).
    next_mpdu: u64,
    /// Share of airtime other stations on the channel take (0 = none).
    foreign_share: f64,
    /// Contention share from `set_foreign_share`.
    contention_share: f64,
    /// Interference: probability that an MPDU overlaps an interferer transmission we did not
    /// defer to.
    overlap_prob: f64,
    /// Airtime owed to the other stations after our last TXOP.
    foreign_due: Time,
    interferer: Option<Interferer>,
    int_state: InterfState,
    /// Our TXOPs since the sensed interferer's last turn.
    int_round: u32,
    /// The air shared with a coupled path (air.rs) and our side of it.
    air: Option<(SharedAir, usize)>,
    pub stats: AirStats,
    /// The client's shared receive server and its cost per packet received here (energy.rs).
    client_cpu: Option<(SharedCpu, u64)>,
    /// The client's receive offload (GRO, link/medium/host.rs `Gro`): what it merges of the
    /// segments it receives, and the segment being merged.
    client_gro: host::Gro,
    /// Extra host time per data packet the client sends, on top of `host_pkt_ns` (device.rs).
    client_tx_pkt_ns: u64,
    /// The client radio's power meter (energy.rs), if its device's power is characterised.
    meter: Option<RadioMeter>,
    /// `psdu_cap` per MCS, plus one (0 = not computed yet).
    psdu_cap: [u32; PSDU_CAP_MCS],
    /// A rate set per session by beam training (commodity 802.11ad), when the path uses it.
    session: Option<session::Session>,
}

impl Medium {
    pub fn new(
        phy: RadioPhy,
        mac: MacTiming,
        host_pkt_ns: u64,
        delay: Time,
        queue_cap_bytes: u64,
        mcs: u8,
        rng: RngStream,
    ) -> Medium {
        let st = || Station {
            queue: VecDeque::with_capacity(256),
            next_seq: 0,
            reorder: Reorder::new(),
            queue_bytes: 0,
            cap_bytes: queue_cap_bytes,
            qdisc_bytes: 0,
            ring: None,
            codel: None,
            mcs,
            per_4096: 0.0,
            per_int_4096: 0.0,
            arf: None,
            host_free: Time::ZERO,
            tx_free: Time::ZERO,
            cw: mac.cw_min,
            backoff: None,
            expired: false,
            layout: Vec::with_capacity(mac.max_mpdus as usize),
        };
        Medium {
            phy,
            mac,
            host_pkt_ns,
            delay,
            st: [st(), st()],
            busy: None,
            kick: None,
            last_from: STA,
            idle_since: Time::ZERO,
            up: true,
            disconnected: false,
            pipe: [VecDeque::with_capacity(256), VecDeque::with_capacity(256)],
            rng,
            failed: Vec::with_capacity(256),
            next_mpdu: 0,
            foreign_share: 0.0,
            contention_share: 0.0,
            overlap_prob: 0.0,
            foreign_due: Time::ZERO,
            interferer: None,
            int_state: InterfState::default(),
            int_round: 0,
            air: None,
            budget: None,
            stats: AirStats::default(),
            client_cpu: None,
            client_gro: host::Gro::default(),
            client_tx_pkt_ns: 0,
            meter: None,
            psdu_cap: [0; PSDU_CAP_MCS],
            session: None,
        }
    }

    /// Meters the client radio's power from the TXOPs (energy.rs).
    pub fn set_meter(&mut self, m: RadioMeter) {
        self.meter = Some(m);
    }

    pub fn meter(&self) -> Option<&RadioMeter> {
        self.meter.as_ref()
    }

    /// Airtime of a TXOP of `n` frames from `from`. The client radio's meter charges it to the
    /// mode of the data it belongs to: the client's data and the AP's ACKs for it count as
    /// transmit mode, the AP's data and the client's ACKs for it as receive mode (seed 002
    /// measures Tx / Rx mode power under backlogged traffic, its ACKs included).
    /// The client's amplifier is on while its own PPDU is on the air: the TXOP's data PPDU
    /// when it is the client's, its Block Ack when the TXOP is the AP's (energy.rs `tx_on_mw`).
    fn count_busy(&mut self, t: &Txop, end: Time) {
        self.stats.busy_ns[t.from] += (end - t.start).ns();
        if self.meter.is_some() {
            let (tx, on) = self.meter_mode(t);
            if let Some(m) = self.meter.as_mut() {
                m.busy(t.start, end, tx, on);
            }
        }
    }

    /// A TXOP's mode for the client's meter (transmit: the client's data or the AP's ACKs for
    /// it), and the client's own PPDU time in it.
    fn meter_mode(&self, t: &Txop) -> (bool, u64) {
        let data = self.st[t.from].queue.iter().take(t.n).any(|f| f.p.kind != Kind::Ack);
        let on = match (t.collide, t.from == STA) {
            // A collision: the client's own PPDU went out (nothing with RTS/CTS: only its
            // RTS, not counted), and no Block Ack.
            (true, _) if self.mac.protection_ns > 0 => 0,
            (true, true) => t.ppdu_ns,
            (true, false) => t.ppdu2_ns,
            (false, true) => t.ppdu_ns,
            (false, false) => self.mac.ack_ns,
        };
        ((t.from == STA) == data, on)
    }

    /// The TXOP on the air at `now` as the meter will count it when it ends: its start, its
    /// mode, and the client's airtime so far (the TXOP's share of it pro rata: where in the
    /// TXOP its PPDU falls is not tracked; the reading after the TXOP is exact).
    fn open_txop(&self, now: Time) -> Option<(Time, bool, u64)> {
        let t = self.busy.filter(|t| t.from != OTHERS && t.start < now)?;
        let (tx, on) = self.meter_mode(&t);
        let (done, len) = ((now.min(t.end) - t.start).ns(), (t.end - t.start).ns().max(1));
        Some((t.start, tx, (on as u128 * done as u128 / len as u128) as u64))
    }

    /// The client radio's state times at `now`, a TXOP still on the air counted up to `now`
    /// (energy.rs `RadioMeter::times_with_open`); None if the radio is not metered.
    pub fn meter_times_at(&self, now: Time) -> Option<StateTimes> {
        let m = self.meter.as_ref()?;
        Some(m.times_with_open(now, self.open_txop(now)))
    }

    /// The client's radio leaves its channel for a scan's dwell (`off`) or comes back
    /// (energy.rs `RadioMeter::off_channel`); nothing if it is not metered.
    pub fn meter_off_channel(&mut self, now: Time, off: bool) {
        if let Some(m) = self.meter.as_mut() {
            m.off_channel(now, off);
        }
    }

    /// The start of a receive-mode TXOP on the air at `now`, for the client host's meter.
    pub fn open_rx_start(&self, now: Time) -> Option<Time> {
        let m = self.meter.as_ref()?;
        match self.open_txop(now)? {
            (start, false, _) => Some(m.open_start(start)),
            _ => None,
        }
    }

    pub fn phy(&self) -> &RadioPhy {
        &self.phy
    }
    pub fn is_up(&self) -> bool {
        self.up
    }
    pub fn mcs(&self, from: usize) -> u8 {
        self.st[from].mcs
    }
    pub fn per_4096(&self, from: usize) -> f64 {
        self.st[from].per_4096
    }
    pub fn rate_bps(&self, from: usize) -> u64 {
        self.phy.rate_bps(self.st[from].mcs)
    }
    pub fn queue_bytes(&self, from: usize) -> u64 {
        self.st[from].queue_bytes
    }

    /// The client's driver and firmware hold `bytes` more below its qdisc (device.rs
    /// `client_tx_queue_frames`): one drop-tail queue stands for both, as the driver takes
    /// frames from the qdisc whenever it has descriptors, so only the total depth matters. Like
    /// the rest of the queue, they wait through a scan's dwell and go out after it, and TCP
    /// Small Queues counts them until they are through the air.
    pub fn set_client_driver_queue(&mut self, bytes: u64) {
        self.st[STA].cap_bytes = self.st[STA].cap_bytes.saturating_add(bytes);
    }

    /// Offers a packet to station `from`'s queue; false (a drop) when it does not fit.
    pub fn enqueue(&mut self, now: Time, from: usize, p: Packet, wake: &mut Wake) -> bool {
        // Counted with the queue drops: the frame is refused at the queue.
        if self.disconnected || !self.admit(from, &p) {
            self.stats.drops_queue[from] += 1;
            return false;
        }
        let s = &mut self.st[from];
        let seq = s.next_seq;
        s.next_seq += 1;
        // It may go on the air once its host has prepared it.
        let ready = self.prepare(now, from, p.kind);
        let s = &mut self.st[from];
        s.queue.push_back(Frame { p, retries: 0, seq, mpdu: NO_MPDU, ready, queued: now });
        let head = s.queue.len() == 1;
        self.try_start(now, wake);
        // A new head frame while the other station counts down its backoff: it joins.
        if head && self.busy.is_some_and(|t| t.from == 1 - from && !t.rival_drew) {
            self.rival_counts(from, ready, None, wake);
        }
        self.publish_air();
        true
    }

    /// Starts a TXOP if the channel is idle and a station has a frame its host has prepared.
    fn try_start(&mut self, now: Time, wake: &mut Wake) {
        if self.busy.is_some() || !self.up {
            return;
        }
        if self.others_take_turn(now, wake) {
            return;
        }
        if self.defer_to_air(now, wake) {
            return;
        }
        if self.mac.collisions {
            self.contend(now, wake);
        } else {
            self.take_turns(now, wake);
        }
    }

    /// Nothing can go on the air before `wait` (the earliest time a head frame is ready, if
    /// any): a wake-up then, unless one is already asked for no later.
    fn wake_when_ready(&mut self, now: Time, wait: Option<Time>, wake: &mut Wake) {
        if let Some(w) = wait {
            // (A wake-up at or before now has fired or is firing: it does not cover w.)
            if self.kick.is_none_or(|k| k <= now || w < k) {
                self.kick = Some(w);
                wake.tx_done = Some(w);
            }
        }
    }

    /// The TXOP ends (or a wake-up fires): settle each MPDU, then start the next TXOP.
    /// Packets dropped after their last retry are pushed to `dropped`.
    pub fn on_tx_done(&mut self, now: Time, wake: &mut Wake, dropped: &mut Vec<Packet>) {
        if self.kick == Some(now) {
            self.kick = None;
        }
        match self.busy {
            Some(t) if t.end == now => {
                self.busy = None;
                self.settle(t, dropped, wake);
                self.air_finished(&t, now);
                // The driver frees what completed; the qdisc refills its ring.
                self.refill_ring(AP, now, dropped);
                self.refill_ring(STA, now, dropped);
                self.idle_since = now;
            }
            Some(_) => return, // stale wake-up while a TXOP is on
            None => {}
        }
        self.try_start(now, wake);
        self.publish_air();
    }

    fn settle(&mut self, t: Txop, dropped: &mut Vec<Packet>, wake: &mut Wake) {
        if t.from == OTHERS {
            return;
        }
        self.owe_others(&t);
        let from = t.from;
        let to = 1 - from;
        self.count_busy(&t, t.end);
        self.stats.txops[from] += 1;
        if t.collide {
            self.stats.txops[to] += 1;
            self.stats.collisions += 1;
            self.fail_head(from, t.n, t.m, t.end, dropped, wake);
            self.fail_head(to, t.n2, t.m2, t.end, dropped, wake);
            self.after_exchange(&t);
            return;
        }
        let per_4096 = self.st[from].per_4096;
        self.failed.clear();
        let mut failed_now = 0usize;
        let mut last_len = u32::MAX;
        let mut last_per = 0.0;
        debug_assert_eq!(self.st[from].layout.len(), t.m, "the TXOP's aggregate is the last formed");
        let psdu = if self.overlap_prob > 0.0 || self.air.is_some() {
            self.st[from].layout.iter().map(|s| s.len).sum::<u32>()
        } else {
            0
        };
        let mut scan = if self.overlap_prob > 0.0 { self.overlap_scan(from, psdu) } else { None };
        // A coupled path's PPDUs as they were on the air (air.rs).
        let mut air = if self.air.is_some() { self.air_scan(&t, psdu) } else { None };
        for j in 0..t.m {
            // One MPDU: its MSDUs are received or lost together (one FCS covers the A-MSDU).
            let MpduSpan { msdus: k, len, .. } = self.st[from].layout[j];
            self.stats.mpdus_sent[from] += 1;
            if len != last_len {
                last_len = len;
                last_per = per_for_len(per_4096, len);
            }
            let mut lost = last_per > 0.0 && self.rng.uniform() < last_per;
            // Whether the interferer is on the air during this MPDU (a hidden one's frames at
            // any time of it, whatever else happened to the MPDU).
            let overlapped = match (scan.as_mut(), air.as_mut()) {
                (Some(sc), _) => self.mpdu_overlaps(sc, len),
                (None, Some(a)) => self.air_overlaps(a, len),
                (None, None) => false,
            };
            if !lost && overlapped {
                // An interferer's transmission overlaps this MPDU: received at the SINR it
                // leaves (capture when that still meets the MCS's requirement).
                lost = self.rng.uniform() < per_for_len(self.st[from].per_int_4096, len);
                self.stats.mpdus_interfered[from] += 1;
            }
            if lost {
                self.stats.mpdus_failed[from] += 1;
                failed_now += 1;
                for _ in 0..k {
                    let f = self.st[from].queue.pop_front().expect("aggregate frames are queued");
                    self.retry_or_drop(from, f, t.end, dropped, wake);
                }
            } else {
                // Everything the TXOP gets through meets the receiving host at its end, in the
                // order the reorder buffer releases it.
                self.deliver(from, k, t.end, wake);
            }
        }
        if self.mac.collisions {
            // No Block Ack (every MPDU lost) is a failed exchange; otherwise it succeeded.
            if t.m > 0 && failed_now == t.m {
                self.cw_double(from);
            } else {
                self.st[from].cw = self.mac.cw_min;
            }
            self.after_exchange(&t);
        }
        self.rate_feedback(from, t.m, failed_now);
        self.requeue_failed(from);
    }

    /// The first `k` frames of station `from`'s queue (one MPDU) were received at `at`: they
    /// leave the queue for the receiver's reorder buffer, which passes up what it releases.
    fn deliver(&mut self, from: usize, k: usize, at: Time, wake: &mut Wake) {
        for _ in 0..k {
            let (f, reorder, mut host) = self.receiver_and_head(from, at, wake).expect("aggregate frames are queued");
            let bytes = f.p.size_bytes as u64;
            reorder.accept(f.seq, &f.p, |p| host.take(p));
            let tx = &mut self.st[from];
            tx.queue.pop_front();
            tx.queue_bytes -= bytes;
            self.left_ring(from);
            self.stats.bytes_delivered[from] += bytes;
        }
    }

    /// Commodity rate adaptation (ARF) of station `s` learns from a TXOP: `m` MPDUs sent,
    /// `failed` of them lost.
    fn rate_feedback(&mut self, s: usize, m: usize, failed: usize) {
        if self.session_feedback(m, failed) {
            return;
        }
        if let Some(new) = self.st[s].arf.as_mut().and_then(|a| a.on_txop(m, failed)) {
            self.st[s].mcs = new;
            self.refresh_per(s);
        }
    }

    /// The frames `retry_or_drop` kept for another attempt go back to the head of station
    /// `s`'s queue, in their original order.
    fn requeue_failed(&mut self, s: usize) {
        while let Some(f) = self.failed.pop() {
            self.st[s].queue.push_front(f);
        }
    }

    /// A frame of station `s` sent at `at` and not received: back to the retry scratch with one
    /// more retry, or dropped after the last one (what the receiver's reorder buffer then
    /// releases is passed up).
    fn retry_or_drop(&mut self, s: usize, f: Frame, at: Time, dropped: &mut Vec<Packet>, wake: &mut Wake) {
        if f.retries as u32 >= self.mac.retry_limit {
            self.st[s].queue_bytes -= f.p.size_bytes as u64;
            self.left_ring(s);
            self.stats.drops_retry[s] += 1;
            dropped.push(f.p);
            let (reorder, mut host) = self.receiver(s, at, wake);
            reorder.skip(f.seq, |p| host.take(p));
        } else {
            self.failed.push(Frame { retries: f.retries + 1, ..f });
        }
    }

    /// Link down (blockage, lost beam) or back up. A TXOP on the air when the link goes down
    /// fails: its frames stay queued, one retry spent. Nothing is sent while down.
    pub fn set_up(&mut self, now: Time, up: bool, wake: &mut Wake) {
        if self.up == up {
            return;
        }
        self.up = up;
        if up && self.disconnected {
            // A new association: beam training and the rate search again (medium/session.rs).
            self.disconnected = false;
            self.train();
        }
        if !up {
            if let Some(t) = self.busy.take().filter(|t| t.from != OTHERS) {
                self.air_finished(&t, now);
                self.count_busy(&t, now);
                self.stats.txops[t.from] += 1;
                for f in self.st[t.from].queue.iter_mut().take(t.n) {
                    f.retries = f.retries.saturating_add(1);
                }
                if t.collide {
                    self.stats.txops[1 - t.from] += 1;
                    for f in self.st[1 - t.from].queue.iter_mut().take(t.n2) {
                        f.retries = f.retries.saturating_add(1);
                    }
                }
            }
        } else {
            self.idle_since = now;
            self.try_start(now, wake);
        }
        self.publish_air();
    }

    /// The link is lost (beam blocked or turned away, the firmware reports a disconnect):
    /// the driver frees the station's transmit ring, so every queued MPDU of both stations is
    /// dropped (wil6210 wil_disconnect_cid frees the vring; mac80211 flushes a station's
    /// queues when it goes away), and what the receivers' reorder buffers held is passed up.
    /// A scan, by contrast, only pauses the queues (`set_up(false)`).
    pub fn disconnect(&mut self, now: Time, wake: &mut Wake, dropped: &mut Vec<Packet>) {
        debug_assert!(!self.up, "take the link down first");
        self.disconnected = true;
        for from in 0..2 {
            // A new association starts its backoff afresh.
            self.st[from].cw = self.mac.cw_min;
            self.st[from].backoff = None;
            self.st[from].expired = false;
            while let Some(f) = self.st[from].queue.pop_front() {
                self.st[from].queue_bytes -= f.p.size_bytes as u64;
                self.stats.drops_retry[from] += 1;
                dropped.push(f.p);
                let (reorder, mut host) = self.receiver(from, now, wake);
                reorder.skip(f.seq, |p| host.take(p));
            }
            self.reset_ring(from);
        }
    }

    /// Packets of `flow` and `kind` queued or in flight on this medium (for the oracle).
    pub fn count_in_network(&self, flow: u16, kind: Kind) -> u64 {
        let mut n = 0;
        for s in &self.st {
            n += s.queue.iter().filter(|f| f.p.flow == flow && f.p.kind == kind).count();
            n += s.reorder.held().filter(|p| p.flow == flow && p.kind == kind).count();
        }
        let mut n = n as u64;
        for d in &self.pipe {
            // A merged skb (GRO) counts its segments.
            n +=
                d.iter().filter(|(_, p)| p.flow == flow && p.kind == kind).map(|(_, p)| u64::from(p.segs)).sum::<u64>();
        }
        n
    }
}

/// The medium as a `Link`: `port` is the transmitting station, `AP` for the downlink and `STA`
/// for the uplink (an arrival's direction is its sender's).
impl Link for Medium {
    #[inline]
    fn enqueue(&mut self, now: Time, port: usize, p: Packet, wake: &mut Wake) -> bool {
        Medium::enqueue(self, now, port, p, wake)
    }
    /// The TXOP ends: what it delivered goes into the receivers' pipes, what its last retry
    /// lost into `dropped`. Nothing is freed at the end of a transmission (`Freed::AtDelivery`).
    #[inline]
    fn tx_done(&mut self, now: Time, wake: &mut Wake, dropped: &mut Vec<Packet>) -> Option<&Packet> {
        self.on_tx_done(now, wake, dropped);
        None
    }
    #[inline]
    fn deliver(&mut self, now: Time, port: usize, wake: &mut Wake) -> Option<Packet> {
        self.on_arrival(now, port, wake)
    }
    /// Going down destroys nothing here: the frames wait in their queues (`disconnect` is the
    /// loss of the link, which drops them). Both directions go down together.
    fn set_up(&mut self, now: Time, up: bool, wake: &mut Wake, _dropped: &mut Vec<Packet>) {
        Medium::set_up(self, now, up, wake);
    }
    #[inline]
    fn queue_bytes(&self, port: usize) -> u64 {
        Medium::queue_bytes(self, port)
    }
    #[inline]
    fn rate_bps(&self, port: usize) -> u64 {
        Medium::rate_bps(self, port)
    }
    #[inline]
    fn is_up(&self) -> bool {
        Medium::is_up(self)
    }
    /// Disconnected (`disconnect`), the station's driver has reported the loss and taken its
    /// carrier down (wil6210 `_wil6210_disconnect`: netif_carrier_off for a station), while
    /// the access point's interface keeps its carrier for other stations and its driver frees
    /// frames for the one that left (wil_start_xmit finds no ring for it).
    fn gone(&self, port: usize) -> Option<Gone> {
        if !self.disconnected {
            return None;
        }
        Some(if port == STA { Gone::NoCarrier } else { Gone::PeerGone })
    }
    /// An MPDU is freed once its Block Ack is in (the frame through the air), or when the MAC
    /// gives up on it.
    #[inline]
    fn freed(&self) -> Freed {
        Freed::AtDelivery
    }
    #[inline]
    fn mcs(&self) -> Option<u8> {
        Some(Medium::mcs(self, AP))
    }
    fn count_in_network(&self, flow: u16, kind: Kind) -> u64 {
        Medium::count_in_network(self, flow, kind)
    }
    /// The channel's technology, the downlink's MCS, PHY rate and frame error rate, and per
    /// direction (its sender's) the bytes delivered, drops, failed and interfered MPDUs, TXOPs
    /// and airtime.
    fn summarize(&self, port: usize, dir: &str, span_ns: f64, out: &mut Map<String, Value>) {
        let s = &self.stats;
        let technology = match self.phy() {
            RadioPhy::Dmg => "11ad",
            RadioPhy::Vht { .. } => "11ac",
            RadioPhy::Ht { .. } => "11n",
        };
        out.insert("technology".into(), json!(technology));
        out.insert("mcs".into(), json!(self.mcs(AP)));
        out.insert("phy_rate_mbps".into(), json!(Medium::rate_bps(self, AP) as f64 / 1e6));
        out.insert("per_4096".into(), json!(self.per_4096(AP)));
        out.insert("collisions".into(), json!(s.collisions));
        let mut put = |key: &str, v: Value| out.insert(format!("{key}_{dir}"), v);
        put("bytes_sent", json!(s.bytes_delivered[port]));
        put("drops", json!(s.drops_queue[port] + s.drops_retry[port]));
        put("queue_drops", json!(s.drops_queue[port]));
        put("retry_drops", json!(s.drops_retry[port]));
        put("mpdus_failed", json!(s.mpdus_failed[port]));
        put("mpdus_interfered", json!(s.mpdus_interfered[port]));
        put("txops", json!(s.txops[port]));
        put("utilization", json!(s.busy_ns[port] as f64 / span_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;

    /// Airtime of a full aggregate: access + PPDU + SIFS + Block Ack, exactly, plus its share of
    /// the beacon header interval (interval / (interval - header)).
    #[test]
    fn txop_duration_is_the_sum_of_its_parts() {
        let mut m = medium(0);
        let mac = MacTiming::dmg();
        let mut w = Wake::default();
        m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        let psdu = 1500 + mac.mpdu_overhead_bytes;
        let parts = mac.access_ns + mac.protection_ns + RadioPhy::Dmg.ppdu_ns(psdu, 9) + mac.sifs_ns + mac.ack_ns;
        let data = mac.beacon_interval_ns - mac.beacon_header_ns;
        let expected = (parts as u128 * mac.beacon_interval_ns as u128).div_ceil(data as u128) as u64;
        assert!(expected > parts);
        assert_eq!(w.tx_done, Some(Time(expected)));
    }

    /// A lost link refuses what either host offers, as each host's stack sees it: the
    /// station's interface loses its carrier (no-op qdisc, NET_XMIT_CN), the access point's
    /// keeps it and its driver frees frames for the station that left; a scan's pause, or the
    /// link back, refuses nothing.
    #[test]
    fn a_disconnect_is_gone_for_both_hosts_each_its_own_way() {
        let mut m = medium(0);
        let (mut w, mut dropped) = (Wake::default(), Vec::new());
        m.set_up(Time::ZERO, false, &mut w);
        assert_eq!((Link::gone(&m, AP), Link::gone(&m, STA)), (None, None), "a pause holds frames");
        m.disconnect(Time::ZERO, &mut w, &mut dropped);
        assert_eq!(Link::gone(&m, STA), Some(Gone::NoCarrier));
        assert_eq!(Link::gone(&m, AP), Some(Gone::PeerGone));
        assert!(!m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w));
        m.set_up(Time::ZERO, true, &mut w);
        assert_eq!((Link::gone(&m, AP), Link::gone(&m, STA)), (None, None));
    }

    /// With PER 1 every MPDU fails; each is retried retry_limit times, then dropped.
    #[test]
    fn retries_then_drops() {
        let mut m = medium(0);
        m.set_per(AP, 1.0);
        let mut w = Wake::default();
        for _ in 0..3 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        let (got, _) = drain(&mut m, Time::ZERO, w);
        assert_eq!(got, [0, 0]);
        assert_eq!(m.stats.drops_retry[AP], 3);
        assert_eq!(m.stats.mpdus_failed[AP], 3 * (MacTiming::dmg().retry_limit as u64 + 1));
        assert_eq!(m.queue_bytes(AP), 0);
    }

    #[test]
    fn down_medium_holds_frames_until_up() {
        let mut m = medium(0);
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        assert_eq!(w.tx_done, None);
        let mut w = Wake::default();
        m.set_up(Time::from_ms(5), true, &mut w);
        assert!(w.tx_done.is_some());
        let (got, _) = drain(&mut m, Time::from_ms(5), w);
        assert_eq!(got[AP], 1);
    }

    /// The client's driver queue adds to its qdisc through a dwell (the link paused): with a
    /// 10-frame qdisc and 5 driver frames the client holds 15 frames, the 16th is refused, the
    /// AP still holds 10; back on channel, every held frame goes out.
    #[test]
    fn client_driver_queue_holds_frames_through_a_dwell() {
        let mut mac = MacTiming::dmg();
        mac.cw_min = 0;
        let mut m = Medium::new(RadioPhy::Dmg, mac, 0, Time::ZERO, 10 * 1500, 9, RngStream::new(1, 1));
        m.set_client_driver_queue(5 * 1500);
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        let took = |m: &mut Medium, from: usize, w: &mut Wake| {
            (0..20).filter(|_| m.enqueue(Time::ZERO, from, pkt(0, 1500), w)).count()
        };
        assert_eq!(took(&mut m, STA, &mut w), 15, "qdisc + driver");
        assert_eq!(took(&mut m, AP, &mut w), 10, "the AP has only the qdisc");
        assert_eq!(m.queue_bytes(STA), 15 * 1500);
        assert_eq!(m.stats.drops_queue, [10, 5]);
        // Nothing goes on the air while off channel.
        assert_eq!(w.tx_done, None);
        let mut w = Wake::default();
        m.set_up(Time::from_ms(110), true, &mut w);
        let (got, _) = drain(&mut m, Time::from_ms(110), w);
        assert_eq!(got, [10, 15]);
        assert_eq!(m.queue_bytes(STA), 0);
    }

    /// Runs a saturated sender of 4054-byte packets (4096-byte MPDUs, so the 4096-octet PER is
    /// each MPDU's) for `txops` TXOPs, calling `per(k)` before TXOP k to set the PER it sees;
    /// returns (MPDUs given up after the last retry, MPDUs delivered).
    fn run_with_per(txops: u64, per: impl Fn(u64) -> f64) -> (u64, u64) {
        let mut mac = MacTiming::dmg();
        mac.cw_min = 0;
        mac.max_mpdus = 8;
        let mut m = Medium::new(RadioPhy::Dmg, mac, 0, Time::ZERO, u64::MAX / 4, 9, RngStream::new(1, 1));
        let mut w = Wake::default();
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..(txops * 8 + 64) {
            m.enqueue(Time::ZERO, AP, pkt(0, 4096 - 42), &mut w);
        }
        m.set_per(AP, per(0));
        m.set_up(Time::ZERO, true, &mut w);
        let mut dropped = Vec::new();
        for k in 1..=txops {
            let t = w.tx_done.take().expect("a TXOP is on");
            m.on_tx_done(t, &mut w, &mut dropped);
            m.set_per(AP, per(k));
        }
        (m.stats.drops_retry[AP], m.stats.bytes_delivered[AP] / (4096 - 42))
    }

    /// MAC retries hide independent errors from TCP but not a fade that outlasts them: with
    /// the same mean PER (50 %), independent errors leave 0.5^8 = 0.39 % of MPDUs lost after 8
    /// attempts, while a channel that is bad (PER 1) for 20 TXOPs and good (PER 0) for 20 loses
    /// every MPDU of the aggregates whose 8 attempts all fall in a bad stretch: two aggregates
    /// (16 MPDUs) per 40 TXOPs, against 160 delivered in the good 20: 9.1 % lost, in bursts.
    #[test]
    fn a_fade_longer_than_the_retry_span_loses_a_burst() {
        let txops = 4000;
        let (lost_iid, got_iid) = run_with_per(txops, |_| 0.5);
        let (lost_burst, got_burst) = run_with_per(txops, |k| if (k / 20) % 2 == 0 { 1.0 } else { 0.0 });
        let share = |lost: u64, got: u64| lost as f64 / (lost + got) as f64;
        let iid = share(lost_iid, got_iid);
        assert!((iid - 0.5f64.powi(8)).abs() < 0.002, "independent: {iid}");
        let burst = share(lost_burst, got_burst);
        assert!((burst - 16.0 / 176.0).abs() < 0.005, "bursty: {burst} lost");
        // A fade no longer than the retry span (8 attempts) loses nothing: bad 7 TXOPs of 40.
        let (lost_short, _) = run_with_per(txops, |k| if k % 40 < 7 { 1.0 } else { 0.0 });
        assert_eq!(lost_short, 0);
    }
}
