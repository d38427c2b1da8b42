//! A half-duplex 802.11 channel shared by two stations (AP and client): the airtime MAC.
//!
//! Each station has its own drop-tail queue; one of them transmits at a time. A transmit
//! opportunity (TXOP) costs channel access (AIFS + random backoff), optional protection
//! (RTS/CTS), one PPDU carrying an A-MPDU of up to `max_mpdus` MPDUs (bounded by the A-MPDU
//! byte limit and the maximum PPDU duration), SIFS and a Block Ack. The two stations contend
//! by EDCA backoff, each with its own contention window and counter (binary exponential
//! backoff, residual counts frozen while the medium is busy, post-backoff), and collide when
//! both counters end in the same slot (`contend`). Every MPDU is lost independently with the packet error rate of its length at the
//! station's MCS; lost MPDUs stay at the head of the queue and are retried up to the retry
//! limit, then dropped (the loss TCP sees).
//!
//! Each station also has a host (driver + CPU) that spends `host_pkt_ns` on every packet it
//! sends or receives: one server for both directions, as one core handling the NIC's soft-IRQs.
//! A packet to send is prepared (DMA-mapped, its descriptor filled) when it is queued at the
//! MAC, whoever holds the channel meanwhile; it is *ready* when its host work is done, and a
//! TXOP aggregates only ready packets and holds the channel for its airtime alone. What a host
//! sends is prepared as soon as it is made (an ACK leaves from within the receive processing
//! of its segment), so it waits only for the packets sent before it; the received packets
//! queue behind both.
//! It caps the packet rate, which is what limits 802.11ad at MTU 1500 (seed 000: ~1 Gbit/s of
//! UDP at MCS 8-9 whatever the signal) while jumbo frames reach multi-Gbit/s.

use super::arf::Arf;
use super::radio::{ampdu_append, mpdu_len, per_4096, MacTiming, RadioPhy};
use super::reorder::Reorder;
use crate::energy::RadioMeter;
use crate::engine::RngStream;
use crate::packet::{Kind, Packet};
use crate::time::Time;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The client host's receive-processing server shared by all its interfaces (energy.rs): when
/// it is next free, ns. Atomic only to stay `Send`; the simulation is single-threaded.
pub type SharedCpu = Arc<AtomicU64>;

/// Thermal noise density, dBm/Hz (kT at 290 K).
const NOISE_FLOOR_DBM_PER_HZ: f64 = -174.0;
/// Receiver noise figure, dB: the value commonly assumed for 802.11ad receivers (ns-3 wigig's
/// default RxNoiseFigure is 10 dB).
const NOISE_FIGURE_DB: f64 = 10.0;

/// Another link on the same or an adjacent channel: a saturated (or `load`-limited) link of the
/// same kind of device, sending full aggregates of `mpdu_bytes` MPDUs at `mcs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interferer {
    /// Fraction of the time it has frames to send (1 = saturated, iperf3 UDP at full speed).
    pub load: f64,
    /// Fraction of its transmissions our stations hear and defer to; None = from the CCA rule
    /// (`cca_thresholds_dbm`) at its power at our stations.
    pub sensed: Option<f64>,
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
}

/// The interferer as the MAC sees it, derived once per `set_interferer` / signal change.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct InterfState {
    /// Airtime of one of its TXOPs (access, mean backoff, RTS/CTS, PPDU, SIFS, Block Ack).
    txop: Time,
    /// Fraction of the time its data PPDUs are on the air: load x PPDU / TXOP.
    duty: f64,
    /// Fraction of its TXOPs our stations defer to (take turns with).
    sensed: f64,
    /// Its power inside our channel at our receivers, dBm (NaN without a signal).
    in_channel_dbm: f64,
}

/// 802.11ad (DMG) transmit spectral mask, |offset from the carrier| GHz -> dBr (IEEE Std
/// 802.11ad-2012, 21.3.2 "Transmit mask"; IEEE Std 802.11-2016 20.3.2): 0 dBr up to 0.94 GHz,
/// -17 dBr at 1.2 GHz, -22 dBr at 2.7 GHz, -30 dBr at 3.06 GHz and beyond, straight lines in
/// dB between.
const DMG_MASK: [(f64, f64); 4] = [(0.94e9, 0.0), (1.2e9, -17.0), (2.7e9, -22.0), (3.06e9, -30.0)];
/// 802.11ad channel spacing (FACTS.md: channels 2.16 GHz apart).
const DMG_CHANNEL_SPACING_HZ: f64 = 2.16e9;

/// Transmit mask of a VHT PPDU of width `w` Hz (IEEE Std 802.11-2016 21.3.17.1; HT's, 19.3.18.1,
/// is the same to -28 dBr): 0 dBr to w/2 - 1 MHz (9 MHz at 20 MHz), -20 dBr at w/2 + 1 MHz,
/// -28 dBr at w, -40 dBr at 1.5 w and beyond.
fn ofdm_mask(w: f64) -> [(f64, f64); 4] {
    let edge = if w <= 20e6 { 9e6 } else { w / 2.0 - 1e6 };
    [(edge, 0.0), (w / 2.0 + 1e6, -20.0), (w, -28.0), (1.5 * w, -40.0)]
}

/// Mask level at `f` Hz from the carrier, dBr.
fn mask_dbr(mask: &[(f64, f64)], f: f64) -> f64 {
    let f = f.abs();
    if f <= mask[0].0 {
        return mask[0].1;
    }
    for w in mask.windows(2) {
        let ((f0, d0), (f1, d1)) = (w[0], w[1]);
        if f <= f1 {
            return d0 + (d1 - d0) * (f - f0) / (f1 - f0);
        }
    }
    mask[mask.len() - 1].1
}

/// Power of `mask` between `lo` and `hi` Hz (offsets from its carrier), relative to 1 Hz at
/// 0 dBr: each straight-in-dB piece integrates in closed form.
fn mask_power(mask: &[(f64, f64)], lo: f64, hi: f64) -> f64 {
    let mut cuts: Vec<f64> = vec![lo, hi];
    cuts.extend(mask.iter().map(|m| m.0).filter(|&f| f > lo && f < hi));
    cuts.sort_by(f64::total_cmp);
    cuts.windows(2)
        .map(|w| {
            let (p0, p1) = (10f64.powf(mask_dbr(mask, w[0]) / 10.0), 10f64.powf(mask_dbr(mask, w[1]) / 10.0));
            let df = w[1] - w[0];
            if (p0 - p1).abs() < 1e-12 * p0 {
                p0 * df
            } else {
                df * (p0 - p1) / (p0 / p1).ln()
            }
        })
        .sum()
}

/// Adjacent-channel rejection of a receiver whose neighbour one channel away transmits at the
/// limit of its standard's transmit mask, dB: the neighbour's power in its own occupied band
/// over the power its mask lets into ours (our occupied band, one channel spacing away). The
/// receiver's own filtering is taken as ideal: the standards set no adjacent-channel rejection
/// for DMG receivers, so the transmitter's spectral regrowth bounds it. DMG: 20.1 dB.
pub fn adjacent_rejection_db(phy: &RadioPhy) -> f64 {
    let bw = phy.bandwidth_hz();
    let (mask, spacing): (Vec<(f64, f64)>, f64) = match phy {
        RadioPhy::Dmg => (DMG_MASK.to_vec(), DMG_CHANNEL_SPACING_HZ),
        // HT/VHT channels of width w are w apart.
        _ => (ofdm_mask(bw).to_vec(), bw),
    };
    let own = mask_power(&mask, 0.0, bw / 2.0) * 2.0;
    let leak = mask_power(&mask, spacing - bw / 2.0, spacing + bw / 2.0);
    10.0 * (own / leak).log10()
}

/// Clear channel assessment, dBm: (a frame's preamble is detected from this level, any energy
/// from this level). DMG SC PHY (IEEE Std 802.11ad-2012 clause 21, the SC PHY's CCA
/// requirements): an SC PPDU at or above MCS 1's sensitivity (-68 dBm) is detected; any signal
/// 20 dB above it (-48 dBm) holds CCA busy. HT/VHT (IEEE Std 802.11-2016 clauses 19 and 21,
/// CCA sensitivity): -82 dBm preamble and -62 dBm energy per 20 MHz, +3 dB per doubling.
pub fn cca_thresholds_dbm(phy: &RadioPhy) -> (f64, f64) {
    match phy {
        RadioPhy::Dmg => (-68.0, -48.0),
        _ => {
            let wide = 10.0 * (phy.bandwidth_hz() / 20e6).log10();
            (-82.0 + wide, -62.0 + wide)
        }
    }
}

/// Station index: 0 = AP (transmits the downlink), 1 = client (transmits the uplink).
pub const AP: usize = 0;
pub const STA: usize = 1;
/// Pseudo-station for other stations' transmissions on the channel (contention).
const OTHERS: usize = 2;
/// Other stations never hold more than this share of the airtime.
pub const MAX_FOREIGN_SHARE: f64 = 0.95;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AirWake {
    /// Schedule the medium's TxDone at this time.
    pub tx_done: Option<Time>,
    /// Schedule an Arrival for direction d (0 = downlink, delivered at the client).
    pub arrival: [Option<Time>; 2],
}

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
}

const NO_MPDU: u64 = u64::MAX;

/// MCS indices `psdu_cap` caches (every table here is below it: DMG 0-31, HT 0-31, VHT 0-9).
const PSDU_CAP_MCS: usize = 32;

struct Station {
    queue: VecDeque<Frame>,
    /// Next MAC sequence number to assign.
    next_seq: u64,
    /// Block Ack reordering of what this station receives.
    reorder: Reorder,
    queue_bytes: u64,
    cap_bytes: u64,
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
    /// Scratch for packets the reorder buffer releases (reused).
    released: Vec<Packet>,
    pub stats: AirStats,
    /// The client's shared receive server and its cost per packet received here (energy.rs).
    client_cpu: Option<(SharedCpu, u64)>,
    /// Extra host time per data packet the client sends, on top of `host_pkt_ns` (device.rs).
    client_tx_pkt_ns: u64,
    /// The client radio's power meter (energy.rs), if its device's power is characterised.
    meter: Option<RadioMeter>,
    /// `psdu_cap` per MCS, plus one (0 = not computed yet).
    psdu_cap: [u32; PSDU_CAP_MCS],
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
            mcs,
            per_4096: 0.0,
            per_int_4096: 0.0,
            arf: None,
            host_free: Time::ZERO,
            tx_free: Time::ZERO,
            cw: mac.cw_min,
            backoff: None,
            expired: false,
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
            released: Vec::with_capacity(64),
            foreign_share: 0.0,
            contention_share: 0.0,
            overlap_prob: 0.0,
            foreign_due: Time::ZERO,
            interferer: None,
            int_state: InterfState::default(),
            int_round: 0,
            budget: None,
            stats: AirStats::default(),
            client_cpu: None,
            client_tx_pkt_ns: 0,
            meter: None,
            psdu_cap: [0; PSDU_CAP_MCS],
        }
    }

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

    /// Every packet the client receives also passes its host's shared server, `pkt_ns` each.
    pub fn set_client_cpu(&mut self, cpu: SharedCpu, pkt_ns: u64) {
        self.client_cpu = Some((cpu, pkt_ns));
    }

    /// The client's host spends `ns` more on every data packet it sends (not on ACKs).
    pub fn set_client_tx_pkt_ns(&mut self, ns: u64) {
        self.client_tx_pkt_ns = ns;
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
        if let Some(m) = self.meter.as_mut() {
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
            m.busy(t.start, end, (t.from == STA) == data, on);
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

    pub fn set_mcs(&mut self, from: usize, mcs: u8) {
        self.st[from].mcs = mcs;
        if let Some(a) = self.st[from].arf.as_mut() {
            *a = Arf::new(a.mcs_set().to_vec(), mcs);
        }
        self.refresh_per(from);
    }

    /// Lets station `from` adapt its MCS with ARF over `mcs_set`, starting at its current MCS.
    pub fn use_arf(&mut self, from: usize, mcs_set: Vec<u8>) {
        let a = Arf::new(mcs_set, self.st[from].mcs);
        self.st[from].mcs = a.mcs();
        self.st[from].arf = Some(a);
        self.refresh_per(from);
    }

    /// Sets the received signal (both directions see the same channel) and the receivers'
    /// gain over the standard's sensitivity; the PER then follows each station's MCS.
    pub fn set_signal(&mut self, rssi_dbm: f64, rx_gain_db: f64) {
        self.budget = Some((rssi_dbm, rx_gain_db));
        self.update_interference();
    }

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
                InterfState { txop: Time(txop), duty: i.load * ppdu as f64 / txop as f64, ..Default::default() }
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
    fn update_interference(&mut self) {
        if let Some(i) = self.interferer {
            let inside = self.budget.map_or(f64::NAN, |(rssi, _)| rssi + i.power_db - i.rejection_db);
            let (preamble, energy) = cca_thresholds_dbm(&self.phy);
            // Only energy detection can sense a neighbour on another channel.
            let threshold = if i.adjacent { energy } else { preamble };
            let sensed = i.sensed.unwrap_or(if inside >= threshold { 1.0 } else { 0.0 });
            self.int_state.sensed = sensed;
            self.int_state.in_channel_dbm = inside;
            self.overlap_prob = self.int_state.duty * (1.0 - sensed);
        } else {
            self.overlap_prob = 0.0;
        }
        self.refresh_per(AP);
        self.refresh_per(STA);
    }

    /// Probability that an MPDU overlaps the interferer, and the fraction of its TXOPs we defer to.
    pub fn interference(&self) -> (f64, f64) {
        (self.overlap_prob, self.int_state.sensed)
    }

    /// PER of a 4096-byte PSDU at `mcs` with the current signal (None without a signal).
    pub fn per_at(&self, mcs: u8) -> Option<f64> {
        let (rssi, gain) = self.budget?;
        let sens = self.phy.sensitivity_dbm(mcs)?;
        Some(per_4096(rssi - (sens - gain)))
    }

    /// Margin over `mcs`'s requirement while the interferer overlaps, dB. The standard's
    /// sensitivity is the SNR an MCS needs over the standard's noise floor (kTB + 10 dB noise
    /// figure); the device's `gain` lowers its own noise floor (or is its RSSI scale's offset),
    /// which helps against noise, not against an interferer: SINR = S / (N_dev + I).
    fn interfered_margin_db(&self, mcs: u8) -> Option<f64> {
        let (rssi, gain) = self.budget?;
        let sens = self.phy.sensitivity_dbm(mcs)?;
        let n_std = NOISE_FLOOR_DBM_PER_HZ + 10.0 * self.phy.bandwidth_hz().log10() + NOISE_FIGURE_DB;
        let n_dev = n_std - gain;
        let i = self.int_state.in_channel_dbm;
        let n_plus_i = 10.0 * (10f64.powf(n_dev / 10.0) + 10f64.powf(i / 10.0)).log10();
        Some(rssi - n_plus_i - (sens - n_std))
    }

    fn refresh_per(&mut self, from: usize) {
        let mcs = self.st[from].mcs;
        if let Some(p) = self.per_at(mcs) {
            self.st[from].per_4096 = p;
        }
        if self.interferer.is_some() {
            if let Some(m) = self.interfered_margin_db(mcs) {
                self.st[from].per_int_4096 = per_4096(m);
            }
        }
    }
    pub fn set_per(&mut self, from: usize, per_4096: f64) {
        self.st[from].per_4096 = per_4096.clamp(0.0, 1.0);
    }

    /// The MPDU starting at queue position `i` of station `from`: (MSDUs in it, its length from
    /// MAC header to FCS). An MPDU already sent keeps its MSDUs (a retry resends the same
    /// MPDU); otherwise the transmitter packs up to `amsdu_msdus` MSDUs not yet sent into one
    /// A-MSDU, as long as it stays within the peer's maximum MPDU length and its host has
    /// prepared them by `now`.
    fn mpdu_at(&self, from: usize, i: usize, now: Time) -> (usize, u32) {
        let q = &self.st[from].queue;
        let head = q[i];
        let mut k = 1usize;
        if head.mpdu != NO_MPDU {
            while i + k < q.len() && q[i + k].mpdu == head.mpdu {
                k += 1;
            }
        } else {
            while (k as u32) < self.mac.amsdu_msdus
                && i + k < q.len()
                && q[i + k].mpdu == NO_MPDU
                && q[i + k].ready <= now
            {
                let next = mpdu_len(q.range(i..=i + k).map(|f| f.p.size_bytes));
                if next > self.mac.max_amsdu_bytes {
                    break;
                }
                k += 1;
            }
        }
        (k, mpdu_len(q.range(i..i + k).map(|f| f.p.size_bytes)))
    }

    /// Offers a packet to station `from`'s queue; false (a drop) when it does not fit.
    pub fn enqueue(&mut self, now: Time, from: usize, p: Packet, wake: &mut AirWake) -> bool {
        let s = &mut self.st[from];
        // Counted with the queue drops: the frame is refused at the queue.
        if self.disconnected || s.queue_bytes + p.size_bytes as u64 > s.cap_bytes {
            self.stats.drops_queue[from] += 1;
            return false;
        }
        s.queue_bytes += p.size_bytes as u64;
        let seq = s.next_seq;
        s.next_seq += 1;
        // The host prepares it after what it sent before (not behind received packets still
        // queued, see `tx_free`); that work delays the received packets queued behind it.
        let mut host_ns = self.host_pkt_ns;
        if from == STA && matches!(p.kind, Kind::Data | Kind::Udp) {
            host_ns += self.client_tx_pkt_ns;
        }
        let ready = s.tx_free.max(now) + Time(host_ns);
        s.tx_free = ready;
        s.host_free = s.host_free.max(now) + Time(host_ns);
        s.queue.push_back(Frame { p, retries: 0, seq, mpdu: NO_MPDU, ready });
        let head = s.queue.len() == 1;
        self.try_start(now, wake);
        // A new head frame while the other station counts down its backoff: it joins.
        if head && self.busy.is_some_and(|t| t.from == 1 - from && !t.rival_drew) {
            self.rival_counts(from, ready, None, wake);
        }
        true
    }

    /// Builds the aggregate at the head of `from`'s queue, marking which MSDUs share an MPDU:
    /// (MSDUs, MPDUs, PSDU bytes). An A-MPDU holds up to `max_mpdus` MPDUs (the Block Ack
    /// window counts MPDUs, not MSDUs), within the A-MPDU byte limit and the PPDU time limit,
    /// of the packets its host has prepared by `now`.
    fn aggregate(&mut self, from: usize, now: Time) -> (usize, usize, u32) {
        let (mut n, mut m, mut psdu) = (0usize, 0usize, 0u32);
        let mcs = self.st[from].mcs;
        let limit = self.mac.max_ampdu_bytes.min(self.psdu_cap(mcs));
        while n < self.st[from].queue.len() && self.st[from].queue[n].ready <= now {
            let (k, len) = self.mpdu_at(from, n, now);
            let next = ampdu_append(psdu, len);
            if m > 0 && (m as u32 >= self.mac.max_mpdus || next > limit) {
                break;
            }
            if self.st[from].queue[n].mpdu == NO_MPDU {
                let id = self.next_mpdu;
                self.next_mpdu += 1;
                for f in self.st[from].queue.range_mut(n..n + k) {
                    f.mpdu = id;
                }
            }
            n += k;
            m += 1;
            psdu = next;
        }
        (n, m, psdu)
    }

    /// Starts a TXOP if the channel is idle and a station has a frame its host has prepared.
    fn try_start(&mut self, now: Time, wake: &mut AirWake) {
        if self.busy.is_some() || !self.up {
            return;
        }
        // The other stations' turn, if they are owed one and we have something to send.
        if self.foreign_due > Time::ZERO && self.st.iter().any(|s| !s.queue.is_empty()) {
            let end = now + self.foreign_due;
            self.foreign_due = Time::ZERO;
            self.busy = Some(Txop::new(OTHERS, now, end));
            wake.tx_done = Some(end);
            return;
        }
        if self.mac.collisions {
            self.contend(now, wake);
            return;
        }
        // Without collisions (unit tests only): take turns, the station that did not transmit
        // last first.
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
            let backoff = self.mac.slot_ns * (self.rng.next_u64() % (self.mac.cw_min as u64 + 1));
            let ppdu_ns = self.phy.ppdu_ns(psdu, self.st[from].mcs);
            let air_ns = self.mac.with_beacon_share(
                self.mac.access_ns + backoff + self.mac.protection_ns + ppdu_ns + self.mac.sifs_ns + self.mac.ack_ns,
            );
            // Its frames are prepared already: the channel is busy for the airtime only.
            let end = now + Time(air_ns);
            self.busy = Some(Txop { ppdu_ns, n, m, ..Txop::new(from, now, end) });
            self.last_from = from;
            wake.tx_done = Some(end);
            return;
        }
        if let Some(w) = wait {
            // (A wake-up at or before now has fired or is firing: it does not cover w.)
            if self.kick.is_none_or(|k| k <= now || w < k) {
                self.kick = Some(w);
                wake.tx_done = Some(w);
            }
        }
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
    fn contend(&mut self, now: Time, wake: &mut AirWake) {
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
            if let Some(w) = wait {
                // (A wake-up at or before now has fired or is firing: it does not cover w.)
                if self.kick.is_none_or(|k| k <= now || w < k) {
                    self.kick = Some(w);
                    wake.tx_done = Some(w);
                }
            }
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
    fn rival_counts(&mut self, x: usize, ready: Time, e: Option<u32>, wake: &mut AirWake) {
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
    fn after_exchange(&mut self, t: &Txop) {
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
    fn cw_double(&mut self, s: usize) {
        let cw = &mut self.st[s].cw;
        *cw = (2 * (*cw + 1) - 1).min(self.mac.cw_max.max(self.mac.cw_min));
    }

    /// A collision: the first `n` MSDUs (`m` MPDUs) of station `s` were sent and not received;
    /// each spends a retry (dropped after the last one), as an MPDU lost to errors does, and
    /// the station's CW doubles.
    fn fail_head(&mut self, s: usize, n: usize, m: usize, at: Time, dropped: &mut Vec<Packet>, wake: &mut AirWake) {
        let to = 1 - s;
        self.stats.mpdus_sent[s] += m as u64;
        self.stats.mpdus_failed[s] += m as u64;
        self.failed.clear();
        for _ in 0..n {
            let Some(f) = self.st[s].queue.pop_front() else { break };
            if f.retries as u32 >= self.mac.retry_limit {
                self.st[s].queue_bytes -= f.p.size_bytes as u64;
                self.stats.drops_retry[s] += 1;
                dropped.push(f.p);
                self.st[to].reorder.skip(f.seq, &mut self.released);
                self.pass_up(s, at, wake);
            } else {
                self.failed.push(Frame { retries: f.retries + 1, ..f });
            }
        }
        while let Some(f) = self.failed.pop() {
            self.st[s].queue.push_front(f);
        }
        self.cw_double(s);
        // Without RTS/CTS the aggregate went out and was lost: rate adaptation sees it fail.
        // (A lost RTS is not a data frame's failure.)
        if self.mac.protection_ns == 0 {
            if let Some(new) = self.st[s].arf.as_mut().and_then(|a| a.on_txop(m, m)) {
                self.st[s].mcs = new;
                self.refresh_per(s);
            }
        }
    }

    /// The TXOP ends (or a wake-up fires): settle each MPDU, then start the next TXOP.
    /// Packets dropped after their last retry are pushed to `dropped`.
    pub fn on_tx_done(&mut self, now: Time, wake: &mut AirWake, dropped: &mut Vec<Packet>) {
        if self.kick == Some(now) {
            self.kick = None;
        }
        match self.busy {
            Some(t) if t.end == now => {
                self.busy = None;
                self.settle(t, dropped, wake);
                self.idle_since = now;
            }
            Some(_) => return, // stale wake-up while a TXOP is on
            None => {}
        }
        self.try_start(now, wake);
    }

    fn settle(&mut self, t: Txop, dropped: &mut Vec<Packet>, wake: &mut AirWake) {
        if t.from == OTHERS {
            return;
        }
        if self.foreign_share > 0.0 {
            let mine = (t.end - t.start).ns() as f64;
            self.foreign_due = Time((mine * self.foreign_share / (1.0 - self.foreign_share)) as u64);
        }
        let from = t.from;
        // The sensed interferer is one more contender: one TXOP per round of our backlogged
        // stations (they still hold this TXOP's frames until it is settled, so count them now).
        if self.int_state.sensed > 0.0 {
            if let Some(i) = self.interferer {
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
        let mut left = t.n;
        while left > 0 {
            // One MPDU: its MSDUs are received or lost together (one FCS covers the A-MSDU).
            let (k, len) = self.mpdu_at(from, 0, t.start);
            let k = k.min(left);
            left -= k;
            self.stats.mpdus_sent[from] += 1;
            if len != last_len {
                last_len = len;
                last_per = per_for_len(per_4096, len);
            }
            let mut lost = last_per > 0.0 && self.rng.uniform() < last_per;
            if !lost && self.overlap_prob > 0.0 && self.rng.uniform() < self.overlap_prob {
                // An interferer's transmission overlaps this MPDU.
                lost = self.rng.uniform() < per_for_len(self.st[from].per_int_4096, len);
                self.stats.mpdus_interfered[from] += 1;
            }
            if lost {
                self.stats.mpdus_failed[from] += 1;
                failed_now += 1;
            }
            for _ in 0..k {
                let f = self.st[from].queue.pop_front().expect("aggregate frames are queued");
                if !lost {
                    self.st[from].queue_bytes -= f.p.size_bytes as u64;
                    self.stats.bytes_delivered[from] += f.p.size_bytes as u64;
                    self.st[to].reorder.accept(f.seq, f.p, &mut self.released);
                    self.pass_up(from, t.end, wake);
                } else if f.retries as u32 >= self.mac.retry_limit {
                    self.st[from].queue_bytes -= f.p.size_bytes as u64;
                    self.stats.drops_retry[from] += 1;
                    dropped.push(f.p);
                    self.st[to].reorder.skip(f.seq, &mut self.released);
                    self.pass_up(from, t.end, wake);
                } else {
                    self.failed.push(Frame { retries: f.retries + 1, ..f });
                }
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
        // Commodity rate adaptation learns from this TXOP's MPDUs.
        if let Some(new) = self.st[from].arf.as_mut().and_then(|a| a.on_txop(t.m, failed_now)) {
            self.st[from].mcs = new;
            self.refresh_per(from);
        }
        // Failed MPDUs go back to the head, in their original order.
        while let Some(f) = self.failed.pop() {
            self.st[from].queue.push_front(f);
        }
    }

    /// Hands what the receiver's reorder buffer released to its host, which processes packets
    /// one after another, then to the propagation pipe.
    fn pass_up(&mut self, from: usize, at: Time, wake: &mut AirWake) {
        let to = 1 - from;
        for p in self.released.drain(..) {
            let rx = &mut self.st[to];
            rx.host_free = rx.host_free.max(at) + Time(self.host_pkt_ns);
            let mut done = rx.host_free;
            // The shared server's cost is per received data segment (how energy.rs derives it).
            let data = matches!(p.kind, Kind::Data | Kind::Udp);
            if let (STA, true, Some((cpu, ns))) = (to, data, &self.client_cpu) {
                done = Time(cpu.load(Ordering::Relaxed).max(done.ns()) + ns);
                cpu.store(done.ns(), Ordering::Relaxed);
            }
            let t = done + self.delay;
            if self.pipe[from].is_empty() {
                wake.arrival[from] = Some(t);
            }
            self.pipe[from].push_back((t, p));
        }
    }

    /// Pops the packet arriving now in direction `from` (sent by station `from`).
    pub fn on_arrival(&mut self, now: Time, from: usize, wake: &mut AirWake) -> Option<Packet> {
        match self.pipe[from].front() {
            Some(&(t, p)) if t <= now => {
                self.pipe[from].pop_front();
                if let Some(&(next, _)) = self.pipe[from].front() {
                    wake.arrival[from] = Some(next);
                }
                Some(p)
            }
            _ => None,
        }
    }

    /// Link down (blockage, lost beam) or back up. A TXOP on the air when the link goes down
    /// fails: its frames stay queued, one retry spent. Nothing is sent while down.
    pub fn set_up(&mut self, now: Time, up: bool, wake: &mut AirWake) {
        if self.up == up {
            return;
        }
        self.up = up;
        if up {
            self.disconnected = false;
        }
        if !up {
            if let Some(t) = self.busy.take().filter(|t| t.from != OTHERS) {
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
    }

    /// The link is lost (beam blocked or turned away, the firmware reports a disconnect):
    /// the driver frees the station's transmit ring, so every queued MPDU of both stations is
    /// dropped (wil6210 wil_disconnect_cid frees the vring; mac80211 flushes a station's
    /// queues when it goes away), and what the receivers' reorder buffers held is passed up.
    /// A scan, by contrast, only pauses the queues (`set_up(false)`).
    pub fn disconnect(&mut self, now: Time, wake: &mut AirWake, dropped: &mut Vec<Packet>) {
        debug_assert!(!self.up, "take the link down first");
        self.disconnected = true;
        for from in 0..2 {
            let to = 1 - from;
            // A new association starts its backoff afresh.
            self.st[from].cw = self.mac.cw_min;
            self.st[from].backoff = None;
            self.st[from].expired = false;
            while let Some(f) = self.st[from].queue.pop_front() {
                self.st[from].queue_bytes -= f.p.size_bytes as u64;
                self.stats.drops_retry[from] += 1;
                dropped.push(f.p);
                self.st[to].reorder.skip(f.seq, &mut self.released);
            }
            self.pass_up(from, now, wake);
        }
    }

    /// Packets of `flow` and `kind` queued or in flight on this medium (for the oracle).
    pub fn count_in_network(&self, flow: u16, kind: Kind) -> u64 {
        let mut n = 0;
        for s in &self.st {
            n += s.queue.iter().filter(|f| f.p.flow == flow && f.p.kind == kind).count();
            n += s.reorder.held().filter(|p| p.flow == flow && p.kind == kind).count();
        }
        for d in &self.pipe {
            n += d.iter().filter(|(_, p)| p.flow == flow && p.kind == kind).count();
        }
        n as u64
    }
}

/// PER of an `len`-byte PSDU from the PER of a 4096-byte one, assuming independent bit errors:
/// 1 - (1 - PER_4096)^(len / 4096).
pub fn per_for_len(per_4096: f64, len: u32) -> f64 {
    if per_4096 <= 0.0 {
        0.0
    } else if per_4096 >= 1.0 {
        1.0
    } else {
        1.0 - (1.0 - per_4096).powf(len as f64 / 4096.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::radio::{MacTiming, RadioPhy};
    use crate::packet::Way;

    fn pkt(flow: u16, size: u32) -> Packet {
        let mut p = Packet::empty(flow, Kind::Udp, Way::Forward);
        p.size_bytes = size;
        p
    }

    fn medium(host_pkt_ns: u64) -> Medium {
        let mut mac = MacTiming::dmg();
        mac.cw_min = 0; // no random backoff: exact arithmetic
        Medium::new(RadioPhy::Dmg, mac, host_pkt_ns, Time::ZERO, 10_000_000, 9, RngStream::new(1, 1))
    }

    /// Drive the medium until idle; returns delivered packets per direction and the end time.
    /// `w` carries the wake-ups the calls before asked for.
    fn drain(m: &mut Medium, mut now: Time, mut w: AirWake) -> ([u64; 2], Time) {
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

    #[test]
    fn aggregates_up_to_the_mpdu_limit_and_alternates() {
        let mut m = medium(0);
        // With CW 0 two ready stations always collide; this checks aggregation, so they take
        // turns (backoff contention has its own tests below).
        m.mac.collisions = false;
        let mut w = AirWake::default();
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

    /// Airtime of a full aggregate: access + PPDU + SIFS + Block Ack, exactly, plus its share of
    /// the beacon header interval (interval / (interval - header)).
    #[test]
    fn txop_duration_is_the_sum_of_its_parts() {
        let mut m = medium(0);
        let mac = MacTiming::dmg();
        let mut w = AirWake::default();
        m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        let psdu = 1500 + mac.mpdu_overhead_bytes;
        let parts = mac.access_ns + mac.protection_ns + RadioPhy::Dmg.ppdu_ns(psdu, 9) + mac.sifs_ns + mac.ack_ns;
        let data = mac.beacon_interval_ns - mac.beacon_header_ns;
        let expected = (parts as u128 * mac.beacon_interval_ns as u128).div_ceil(data as u128) as u64;
        assert!(expected > parts);
        assert_eq!(w.tx_done, Some(Time(expected)));
    }

    /// A backlog of received packets does not hold up what the host sends (an ACK leaves from
    /// within the processing of its segment), but the sending work delays what is still queued.
    #[test]
    fn receive_backlog_does_not_hold_up_a_transmission() {
        let cost = 12_000;
        // The client sends a full aggregate in one TXOP (queued while the link is down; its
        // host has them ready at n x 12 us); the AP's host gets n x 12 us of receive work.
        let n = MacTiming::dmg().max_mpdus as u64;
        let (mut m, mut w) = backlogged(medium(cost), STA, n as usize, 1500);
        let first = w.tx_done.take().expect("the client's first frame ready");
        assert_eq!(first, Time(cost), "contends when its first frame is ready");
        let mut dropped = Vec::new();
        m.on_tx_done(Time(n * cost), &mut w, &mut dropped);
        let end = w.tx_done.take().expect("client TXOP");
        assert!(m.busy.is_some_and(|t| t.n == n as usize), "{:?}", m.busy);
        m.on_tx_done(end, &mut w, &mut dropped);
        assert_eq!(m.st[AP].host_free, end + Time(n * cost));
        // An ACK queued at the AP right away is ready after its own work, not after the
        // backlog, and goes on the air then.
        w = AirWake::default();
        m.enqueue(end, AP, pkt(1, 52), &mut w);
        assert_eq!(m.st[AP].queue[0].ready, end + Time(cost));
        assert_eq!(w.tx_done, Some(end + Time(cost)));
        m.on_tx_done(end + Time(cost), &mut w, &mut dropped);
        assert!(m.busy.is_some_and(|t| t.from == AP && t.start == end + Time(cost)), "{:?}", m.busy);
        // Its host work pushes the received packets' processing back by one packet.
        assert_eq!(m.st[AP].host_free, end + Time((n + 1) * cost));
    }

    /// The host's per-packet cost caps the packet rate when the radio is faster: the host-bound
    /// rate is exactly 1 / cost (the host prepares frames while the aggregate before is on the
    /// air), up to the first frame's preparation and the last TXOP's airtime and processing.
    #[test]
    fn host_cost_caps_packet_rate() {
        let cost = 12_000; // 12 us per packet
        let mut m = medium(cost);
        let mut w = AirWake::default();
        for _ in 0..3000 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        // The host has prepared the last one at 3000 x 12 us.
        assert_eq!(m.st[AP].queue.back().map(|f| f.ready), Some(Time(3000 * cost)));
        let (got, end) = drain(&mut m, Time::ZERO, w);
        assert_eq!(got[AP], 3000);
        // After the last frame is ready: at most one TXOP waiting for it (the one on the air
        // when it became ready, < 1 ms at MCS 9 with 32 MPDUs), its own, and the receiver's
        // processing of one aggregate (32 x 12 us).
        let tail = end - Time(3000 * cost);
        assert!(tail < Time::from_us(2 * 1000 + 32 * 12), "tail {tail:?}");
        let pps = 3000.0 / end.secs_f64();
        assert!(pps <= 1e9 / cost as f64 && pps > 1e9 / cost as f64 * 0.97, "pps {pps}");
    }

    /// The other station uses the channel while a host prepares its frames (both hosts 12 us per
    /// packet): the client's TXOP of one ACK goes on the air while the AP's host still
    /// prepares its 10 packets (ready at 12, 24, ... 120 us); the AP's first TXOP starts when
    /// its first frame is ready, and the channel is busy for airtime only.
    #[test]
    fn the_other_station_uses_the_channel_while_a_host_prepares() {
        let cost = 12_000;
        let mut m = medium(cost);
        // CW 0: exact arithmetic, and two ready stations take turns instead of colliding.
        m.mac.collisions = false;
        let mut w = AirWake::default();
        // 10 AP frames at t = 0 (ready at 12, 24, ... 120 us); the AP's first frame goes
        // alone at 12 us, the rest queue behind it.
        for _ in 0..10 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        assert_eq!(w.tx_done, Some(Time(cost)));
        let mut dropped = Vec::new();
        m.on_tx_done(Time(cost), &mut w, &mut dropped);
        let ap_end = w.tx_done.take().expect("AP TXOP");
        assert!(m.busy.is_some_and(|t| (t.from, t.n, t.start) == (AP, 1, Time(cost))), "{:?}", m.busy);
        // One DMG TXOP of one 1542-octet MPDU is 69,042 ns (txop_duration_is_the_sum_of_its_parts).
        assert_eq!(ap_end, Time(cost + 69_042));
        // An ACK at the client at 20 us is ready at 32 us; when the AP's TXOP ends (81 us) the
        // client goes first (take turns) though the AP has 5 more ready (24..72 us).
        m.enqueue(Time(20_000), STA, pkt(1, 52), &mut AirWake::default());
        m.on_tx_done(ap_end, &mut w, &mut dropped);
        assert!(m.busy.is_some_and(|t| (t.from, t.n, t.start) == (STA, 1, ap_end)), "{:?}", m.busy);
        let sta_end = w.tx_done.take().expect("client TXOP");
        // Meanwhile the AP's host finished the rest (120 us < the client's TXOP end): its next
        // TXOP carries all 9 at once, on the channel for its airtime only.
        assert!(sta_end > Time(10 * cost));
        m.on_tx_done(sta_end, &mut w, &mut dropped);
        assert!(m.busy.is_some_and(|t| (t.from, t.n, t.start) == (AP, 9, sta_end)), "{:?}", m.busy);
        let t = m.busy.expect("AP TXOP");
        let mac = m.mac;
        let psdu = 8 * 1544 + 1542;
        let parts = mac.access_ns + mac.protection_ns + m.phy.ppdu_ns(psdu, 9) + mac.sifs_ns + mac.ack_ns;
        assert_eq!(t.end - t.start, Time(mac.with_beacon_share(parts)));
    }

    /// One server for both directions: the AP's host receives 4 packets (4 x 12 us queued at
    /// the TXOP's end), then sends one at the same instant: the send is ready after its own
    /// 12 us (it is made within the receive processing, tcp_ack_snd_check), and the received
    /// packets leave the server 12 us later than without it. A second send waits for the
    /// first (in the order they were queued).
    #[test]
    fn receive_and_send_work_share_the_server() {
        let cost = 12_000;
        let (mut m, mut w) = backlogged(medium(cost), STA, 4, 1500);
        let mut dropped = Vec::new();
        m.on_tx_done(Time(4 * cost), &mut w, &mut dropped);
        let end = w.tx_done.take().expect("client TXOP");
        m.on_tx_done(end, &mut w, &mut dropped);
        assert_eq!(m.st[AP].host_free, end + Time(4 * cost));
        let arrivals = m.pipe[STA].iter().map(|&(t, _)| t).collect::<Vec<_>>();
        assert_eq!(arrivals, (1..=4).map(|k| end + Time(k * cost)).collect::<Vec<_>>());
        let mut w = AirWake::default();
        m.enqueue(end, AP, pkt(1, 1500), &mut w);
        m.enqueue(end + Time(1_000), AP, pkt(1, 1500), &mut w);
        let ready = m.st[AP].queue.iter().map(|f| f.ready).collect::<Vec<_>>();
        assert_eq!(ready, [end + Time(cost), end + Time(2 * cost)]);
        assert_eq!(m.st[AP].host_free, end + Time(6 * cost));
    }

    /// With PER 1 every MPDU fails; each is retried retry_limit times, then dropped.
    #[test]
    fn retries_then_drops() {
        let mut m = medium(0);
        m.set_per(AP, 1.0);
        let mut w = AirWake::default();
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
        let mut w = AirWake::default();
        m.set_up(Time::ZERO, false, &mut w);
        m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        assert_eq!(w.tx_done, None);
        let mut w = AirWake::default();
        m.set_up(Time::from_ms(5), true, &mut w);
        assert!(w.tx_done.is_some());
        let (got, _) = drain(&mut m, Time::from_ms(5), w);
        assert_eq!(got[AP], 1);
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
    /// `m` with `n` packets of `size` bytes queued at station `from` before its first TXOP
    /// starts (queued while the link is down, so the first TXOP sees them all).
    fn backlogged(mut m: Medium, from: usize, n: usize, size: u32) -> (Medium, AirWake) {
        let mut w = AirWake::default();
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..n {
            m.enqueue(Time::ZERO, from, pkt(0, size), &mut w);
        }
        m.set_up(Time::ZERO, true, &mut w);
        (m, w)
    }

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

    /// The A-MSDU never exceeds the peer's maximum MPDU length: at 3895 octets (the smallest
    /// VHT limit) three 1500-byte packets (4600) do not fit, two (3076) do.
    #[test]
    fn amsdu_respects_the_mpdu_length_limit() {
        let mut m = vht_medium(3, 0);
        m.mac.max_amsdu_bytes = 3895;
        let mut w = AirWake::default();
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..6 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        let (n, mpdus, _) = m.aggregate(AP, Time::ZERO);
        assert_eq!((n, mpdus), (6, 3));
        // Small packets (ACKs) fill the count instead.
        let mut m = vht_medium(3, 0);
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..7 {
            m.enqueue(Time::ZERO, AP, pkt(0, 52), &mut w);
        }
        assert_eq!(m.aggregate(AP, Time::ZERO).1, 3);
    }

    /// The client's extra cost per data packet it sends: each data packet the client queues is
    /// ready host_pkt_ns + client_tx_pkt_ns after the one before; the AP's do not pay it.
    #[test]
    fn client_transmit_cost_applies_to_its_data_only() {
        let mut m = medium(4_830);
        m.set_client_tx_pkt_ns(744);
        let mut w = AirWake::default();
        m.set_up(Time::ZERO, false, &mut w);
        for _ in 0..10 {
            m.enqueue(Time::ZERO, STA, pkt(0, 1500), &mut w);
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        assert_eq!(m.st[AP].tx_free, Time(10 * 4_830));
        assert_eq!(m.st[STA].tx_free, Time(10 * (4_830 + 744)));
        assert_eq!(m.st[STA].queue[2].ready, Time(3 * (4_830 + 744)));
        // ACKs from the client cost only host_pkt_ns.
        let mut m = medium(4_830);
        m.set_client_tx_pkt_ns(744);
        let mut w = AirWake::default();
        let mut ack = pkt(0, 52);
        ack.kind = Kind::Ack;
        m.enqueue(Time::ZERO, STA, ack, &mut w);
        assert_eq!(m.st[STA].tx_free, Time(4_830));
    }

    /// Contention: other stations take the asked share of the airtime.
    #[test]
    fn contention_takes_its_share_of_airtime() {
        let run = |share: f64| {
            let mut m = medium(0);
            m.set_foreign_share(share);
            let mut w = AirWake::default();
            for _ in 0..2000 {
                m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            }
            drain(&mut m, Time::ZERO, w).1
        };
        let alone = run(0.0).secs_f64();
        let shared = run(0.5).secs_f64();
        assert!((shared / alone - 2.0).abs() < 0.05, "half the airtime: {alone} vs {shared}");
    }

    fn interferer(power_db: f64, sensed: Option<f64>, adjacent: bool, rejection_db: f64) -> Interferer {
        Interferer { load: 1.0, sensed, power_db, rejection_db, adjacent, mcs: 9, mpdu_bytes: 7912 + 42 }
    }

    /// The 802.11ad mask lets 1.724e7 "0 dBr-Hz" into the neighbour's 1.28-3.04 GHz band (two
    /// straight-in-dB pieces: -17.27..-22 dBr over 1.28-2.7 GHz, -22..-29.56 dBr over
    /// 2.7-3.04 GHz); its own 1.76 GHz are at 0 dBr: 10 log10(1.76e9 / 1.724e7) = 20.09 dB.
    #[test]
    fn adjacent_rejection_from_the_dmg_transmit_mask() {
        assert!((mask_dbr(&DMG_MASK, 2.16e9) + 20.2).abs() < 1e-9);
        assert!((mask_dbr(&DMG_MASK, -1.2e9) + 17.0).abs() < 1e-9);
        assert_eq!(mask_dbr(&DMG_MASK, 5e9), -30.0);
        let leak = mask_power(&DMG_MASK, 1.28e9, 3.04e9);
        assert!((leak / 1.724_37e7 - 1.0).abs() < 1e-4, "{leak}");
        assert!((adjacent_rejection_db(&RadioPhy::Dmg) - 20.089).abs() < 0.001);
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

    /// SINR under overlap at a hand-computed point: S = -42 dBm, I = -52 dBm, device noise
    /// floor N = -174 + 10 log10(1.76e9) + 10 - 8 = -79.545 dBm: N + I = -51.992 dBm. MCS 9
    /// needs -59 - (-71.545) = 12.545 dB, so the margin is 9.992 - 12.545 = -2.553 dB; the
    /// device's 8 dB gain does not help against the interferer.
    #[test]
    fn sinr_under_overlap_at_a_hand_computed_point() {
        let mut m = medium(0);
        m.set_signal(-42.0, 8.0);
        m.set_interferer(Some(interferer(-10.0, Some(0.0), false, 0.0)));
        let want = per_4096(-2.553);
        assert!((m.st[AP].per_int_4096 - want).abs() < 1e-3 * want.max(1e-6), "{} vs {want}", m.st[AP].per_int_4096);
        // Without it the same link has 25 dB of margin at MCS 9.
        assert!(m.per_4096(AP) < 1e-9);
        // MCS 1 needs 3.545 dB: 6.45 dB of margin under the same overlap.
        m.set_mcs(AP, 1);
        assert!((m.st[AP].per_int_4096 - per_4096(9.992 - 3.545)).abs() < 1e-6);
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
            let mut w = AirWake::default();
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

    /// An unsensed interferer overlaps each MPDU attempt with probability = its duty; as strong
    /// as our signal it destroys MCS 9 frames, so every overlap is a failure.
    #[test]
    fn unsensed_interferer_collides_at_its_duty() {
        let mut m = medium(0);
        m.set_signal(-42.0, 0.0);
        m.set_interferer(Some(interferer(0.0, Some(0.0), false, 0.0)));
        let (p, _) = m.interference();
        assert!(p > 0.5 && p < 1.0, "{p}");
        assert!(m.st[AP].per_int_4096 > 0.999);
        let mut w = AirWake::default();
        for _ in 0..20_000 {
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        }
        drain(&mut m, Time::ZERO, w);
        let s = &m.stats;
        let hit = s.mpdus_interfered[AP] as f64 / s.mpdus_sent[AP] as f64;
        assert!((hit - p).abs() < 0.01, "overlap share {hit} vs {p}");
        // Nothing else fails at 17 dB of margin; a 1542-byte MPDU escapes now and then.
        let (failed, hit_n) = (s.mpdus_failed[AP] as f64, s.mpdus_interfered[AP] as f64);
        assert!(failed <= hit_n && failed > 0.99 * hit_n, "{failed} of {hit_n}");
        // A frame is lost after 8 attempts that all overlapped: p^8 of those the MAC carried
        // or gave up on (the rest overflowed the queue).
        let carried = s.bytes_delivered[AP] as f64 / 1500.0 + s.drops_retry[AP] as f64;
        let lost = s.drops_retry[AP] as f64 / carried;
        assert!((lost - p.powi(8)).abs() < 0.25 * p.powi(8) + 0.002, "lost {lost} vs {}", p.powi(8));
    }

    #[test]
    fn per_scales_with_length() {
        assert_eq!(per_for_len(0.0, 1500), 0.0);
        assert!((per_for_len(0.1, 4096) - 0.1).abs() < 1e-12);
        let short = per_for_len(0.1, 1024);
        assert!((short - (1.0 - 0.9f64.powf(0.25))).abs() < 1e-12);
    }

    /// The length scaling is the independent-bit-error model PER(L) = 1 - (1 - BER)^(8 L), with
    /// the BER that gives PER = 1 % at the 4096-octet PSDU of the standard's sensitivity
    /// definition (802.11ad-2012 21.3.7 / Table 21-3): BER = 1 - 0.99^(1 / 32768) = 3.067e-7.
    /// Hand-computed (ln 0.99 = -0.0100503):
    /// - seed 000's jumbo MPDU, 7912 + 42 = 7954 octets: 1 - exp(-0.0100503 x 7954 / 4096)
    ///   = 1 - exp(-0.0195168) = 1.9328 %, i.e. 1.93x the 4096-octet PER;
    /// - an MTU 1500 MPDU, 1542 octets: 1 - exp(-0.0037836) = 0.3776 %;
    /// - a TCP ACK, 52 + 42 = 94 octets: 1 - exp(-0.00023065) = 0.02306 %.
    #[test]
    fn per_length_scaling_at_hand_computed_points() {
        let ber = 1.0 - 0.99f64.powf(1.0 / 32_768.0);
        assert!((ber - 3.0671e-7).abs() < 1e-10, "{ber}");
        for (len, want) in [(7954u32, 0.019_328), (1542, 0.003_776_4), (94, 0.000_230_6)] {
            let p = per_for_len(0.01, len);
            assert!((p - want).abs() < 2e-6, "{len} B: {p} vs {want}");
            let from_ber = 1.0 - (1.0 - ber).powf(8.0 * len as f64);
            assert!((p - from_ber).abs() < 1e-9, "{len} B: {p} vs {from_ber}");
        }
        assert!((per_for_len(0.01, 7954) / 0.01 - 1.933).abs() < 0.001);
    }

    /// Runs a saturated sender of 4054-byte packets (4096-byte MPDUs, so the 4096-octet PER is
    /// each MPDU's) for `txops` TXOPs, calling `per(k)` before TXOP k to set the PER it sees;
    /// returns (MPDUs given up after the last retry, MPDUs delivered).
    fn run_with_per(txops: u64, per: impl Fn(u64) -> f64) -> (u64, u64) {
        let mut mac = MacTiming::dmg();
        mac.cw_min = 0;
        mac.max_mpdus = 8;
        let mut m = Medium::new(RadioPhy::Dmg, mac, 0, Time::ZERO, u64::MAX / 4, 9, RngStream::new(1, 1));
        let mut w = AirWake::default();
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
    fn both_ready(m: &mut Medium, k: usize, k_sta: usize, size: u32) -> AirWake {
        let mut w = AirWake::default();
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
    fn run(m: &mut Medium, mut w: AirWake, stop: impl Fn(&Medium) -> bool) -> Time {
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
        let mut w = AirWake::default();
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
        let mut w = AirWake::default();
        m.enqueue(Time::ZERO, STA, pkt(1, 1500), &mut w);
        run(&mut m, w, |_| false);
        assert_eq!(m.stats.bytes_delivered[STA], 1500);
        assert_eq!(m.st[STA].cw, 15);
        // An exchange whose every MPDU is lost (no Block Ack) doubles it.
        m.set_per(STA, 1.0);
        let mut w = AirWake::default();
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
        let mut w = AirWake::default();
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
        let mut w = AirWake::default();
        m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
        let end = run(&mut m, w, |_| false);
        assert!(m.st[AP].backoff.is_some_and(|b| b <= 15));
        // 1 ms later (far more than AIFS + 15 slots): out at the first slot boundary after.
        let at = end + Time(1_000_000);
        let mut w = AirWake::default();
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
            let mut w = AirWake::default();
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
            let mut w = AirWake::default();
            m.enqueue(Time::ZERO, AP, pkt(0, 1500), &mut w);
            m.enqueue(Time(30_000), STA, pkt(1, 52), &mut w);
            let t = m.busy.unwrap();
            (t.from, t.slots, t.collide, t.end)
        };
        assert_eq!(once(9), once(9));
    }
}
