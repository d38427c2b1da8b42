//! What a radio path needs from the PHY tables: rates and PPDU airtime per MCS (`RadioPhy`),
//! the MAC's fixed costs (`MacTiming`), and an ideal (SNR-based) MCS choice from the packet
//! error rate model (per.rs).

use super::per::{per_4096, per_for_len};
use super::phy::{dmg, ht, vht};

/// The PHY of a radio path and its fixed configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RadioPhy {
    /// 802.11ad DMG (Control + SC + OFDM MCS).
    Dmg,
    /// 802.11ac VHT.
    Vht { bw: vht::Bandwidth, nss: u8, sgi: bool },
    /// 802.11n HT (MCS 0-7 per stream; 8-15 for two streams).
    Ht { bw: ht::Bandwidth, sgi: bool, band: ht::Band },
}

impl RadioPhy {
    /// PHY rate of `mcs`, bit/s (0 for an MCS this PHY does not have).
    pub fn rate_bps(&self, mcs: u8) -> u64 {
        match *self {
            RadioPhy::Dmg => dmg::mcs(mcs).map_or(0, |m| m.rate_bps),
            RadioPhy::Vht { bw, nss, sgi } => vht::rate_bps(mcs, bw, nss, sgi).unwrap_or(0),
            RadioPhy::Ht { bw, sgi, .. } => ht::rate_bps(mcs, bw, sgi).unwrap_or(0),
        }
    }

    pub fn is_valid(&self, mcs: u8) -> bool {
        self.rate_bps(mcs) > 0
    }

    /// Airtime of a PPDU carrying `psdu_bytes` at `mcs` (preamble and header included).
    /// Callers validate the MCS first (scenario validation does).
    pub fn ppdu_ns(&self, psdu_bytes: u32, mcs: u8) -> u64 {
        match *self {
            RadioPhy::Dmg => dmg::ppdu_duration_ns(psdu_bytes, mcs).unwrap_or(u64::MAX / 4),
            RadioPhy::Vht { bw, nss, sgi } => vht::vht_ppdu_duration_ns(psdu_bytes, mcs, bw, nss, sgi),
            RadioPhy::Ht { bw, sgi, band } => ht::ht_ppdu_duration_ns(psdu_bytes, mcs, bw, sgi, band),
        }
    }

    /// Channel width, Hz.
    pub fn bandwidth_hz(&self) -> f64 {
        match *self {
            // 802.11ad: 1.76 GHz occupied (the chip rate) of the 2.16 GHz channel.
            RadioPhy::Dmg => 1.76e9,
            RadioPhy::Vht { bw, .. } => bw_mhz_vht(bw) as f64 * 1e6,
            RadioPhy::Ht { bw, .. } => bw.mhz() as f64 * 1e6,
        }
    }

    /// The standard's minimum receiver sensitivity for `mcs` (PER < 1 % / 10 % at the
    /// standard's reference length), dBm.
    pub fn sensitivity_dbm(&self, mcs: u8) -> Option<f64> {
        match *self {
            RadioPhy::Dmg => dmg::mcs(mcs).and_then(|m| m.sensitivity_dbm).map(f64::from),
            RadioPhy::Vht { bw, .. } => vht::sensitivity_dbm(mcs, bw).map(f64::from),
            RadioPhy::Ht { bw, .. } => ht::sensitivity_dbm(mcs, bw).map(f64::from),
        }
    }

    /// The MCS indexes a device of this PHY may use, up to `max_mcs`, lowest first.
    pub fn mcs_candidates(&self, max_mcs: u8) -> impl Iterator<Item = u8> + '_ {
        let lo = match self {
            // SC only: commodity 802.11ad devices do not use Control or OFDM for data.
            RadioPhy::Dmg => 1,
            _ => 0,
        };
        (lo..=max_mcs).filter(move |&m| self.is_valid(m) && self.sensitivity_dbm(m).is_some())
    }
}

/// The MAC's fixed costs of one transmit opportunity and its aggregation limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MacTiming {
    /// AIFS before the backoff.
    pub access_ns: u64,
    pub slot_ns: u64,
    /// Backoff drawn uniformly from [0, CW] slots; CW starts at `cw_min`.
    pub cw_min: u32,
    /// CW doubles after a failed exchange up to this (802.11-2016 10.22.2.2: CW = min(2(CW + 1)
    /// - 1, CWmax)) and is reset to `cw_min` after a successful one.
    pub cw_max: u32,
    /// Backoff collisions between the two stations (on for every path): each counts down its
    /// own backoff, drawn from its own CW and kept (frozen) when the other takes the medium
    /// first; both reaching zero in the same slot fails both exchanges. Off only in unit tests
    /// that need exact arithmetic: the stations then take turns and never collide.
    pub collisions: bool,
    /// RTS + SIFS + CTS + SIFS, if the MAC protects every TXOP.
    pub protection_ns: u64,
    pub sifs_ns: u64,
    /// The Block Ack answering an A-MPDU.
    pub ack_ns: u64,
    /// MPDUs per A-MPDU (the Block Ack window the device uses).
    pub max_mpdus: u32,
    pub max_ampdu_bytes: u32,
    pub max_ppdu_ns: u64,
    /// MAC header + FCS + LLC/SNAP + A-MPDU delimiter added to every IP packet.
    pub mpdu_overhead_bytes: u32,
    /// MSDUs (IP packets) per MPDU: 1 = every MPDU carries one MSDU; more = the transmitter
    /// packs up to this many queued MSDUs into one A-MSDU (a device property).
    pub amsdu_msdus: u32,
    /// Longest MPDU an A-MSDU may make (the peer's maximum MPDU length), octets.
    pub max_amsdu_bytes: u32,
    /// Transmissions of an MPDU after the first before it is dropped.
    pub retry_limit: u32,
    /// Airtime per beacon interval that data cannot use (802.11ad's beacon header interval),
    /// and the interval: data airtime is stretched by interval / (interval - header), the
    /// average effect of the periodic BHI. 0 for 802.11ac/n, whose beacons are short and
    /// contend like data.
    pub beacon_header_ns: u64,
    pub beacon_interval_ns: u64,
}

impl MacTiming {
    /// A full MPDU of `msdu_bytes`-octet IP packets (as many as one A-MSDU takes) with its
    /// A-MPDU delimiter, octets: the frame length a backlogged sender's PER is judged at.
    pub fn full_mpdu_bytes(&self, msdu_bytes: u32) -> u32 {
        let mut k = 1;
        while k < self.amsdu_msdus && mpdu_len((0..=k).map(|_| msdu_bytes)) <= self.max_amsdu_bytes {
            k += 1;
        }
        DELIMITER_BYTES + mpdu_len((0..k).map(|_| msdu_bytes))
    }

    /// A TXOP of `air_ns` on the air, counted with its share of the beacon header interval.
    pub fn with_beacon_share(&self, air_ns: u64) -> u64 {
        if self.beacon_header_ns == 0 {
            return air_ns;
        }
        let data = self.beacon_interval_ns - self.beacon_header_ns;
        ((air_ns as u128 * self.beacon_interval_ns as u128).div_ceil(data as u128)) as u64
    }
}

/// QoS Data MAC header (802.11-2016 9.2.4, 9.3.2.1): frame control, duration, three addresses,
/// sequence control, QoS control.
pub const MAC_HEADER_BYTES: u32 = 26;
pub const FCS_BYTES: u32 = 4;
/// LLC/SNAP encapsulation of an IP packet (RFC 1042), inside every MSDU.
pub const LLC_SNAP_BYTES: u32 = 8;
/// A-MPDU subframe delimiter (802.11-2016 9.7.1).
pub const DELIMITER_BYTES: u32 = 4;
/// A-MSDU subframe header: DA, SA, Length (802.11-2016 9.3.2.2.2, Figure 9-70).
pub const AMSDU_SUBFRAME_HEADER_BYTES: u32 = 14;
/// One IP packet as one MPDU in an A-MPDU: MAC header (26) + FCS (4) + LLC/SNAP (8) + A-MPDU
/// delimiter (4) = 42 octets (before the subframe's padding).
pub const MPDU_OVERHEAD_BYTES: u32 = MAC_HEADER_BYTES + FCS_BYTES + LLC_SNAP_BYTES + DELIMITER_BYTES;
/// HT: longest MPDU (hence A-MSDU) inside an A-MPDU under a Block Ack agreement, 4095 octets
/// (802.11-2016 9.7.1: the delimiter's MPDU length field; Linux IEEE80211_MAX_MPDU_LEN_HT_BA).
pub const HT_MAX_MPDU_IN_AMPDU_BYTES: u32 = 4_095;

/// `x` rounded up to a multiple of 4 (A-MSDU and A-MPDU subframes are padded to 4 octets, all
/// but the last: 802.11-2016 9.3.2.2.2, 9.7.1).
pub const fn pad4(x: u32) -> u32 {
    x.div_ceil(4) * 4
}

/// Length of the MPDU (MAC header to FCS) carrying the IP packets `sizes`: one packet is a
/// plain MSDU (header + LLC/SNAP + packet + FCS); two or more are an A-MSDU, each subframe
/// (14-octet header + LLC/SNAP + packet) padded to 4 octets except the last.
pub fn mpdu_len(sizes: impl IntoIterator<Item = u32>) -> u32 {
    let mut m = MpduBuilder::default();
    for s in sizes {
        m = m.with(s);
    }
    m.bytes()
}

/// An MPDU being filled one IP packet at a time: `mpdu_len` of the packets so far, without
/// summing them again for each packet added (the aggregation loop asks after every one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MpduBuilder {
    msdus: u32,
    /// A-MSDU subframes so far, the last one unpadded.
    body: u32,
    first: u32,
}

impl MpduBuilder {
    /// The same MPDU with one more packet of `s` octets.
    pub const fn with(self, s: u32) -> Self {
        let first = if self.msdus == 0 { s } else { self.first };
        let body = pad4(self.body) + AMSDU_SUBFRAME_HEADER_BYTES + LLC_SNAP_BYTES + s;
        MpduBuilder { msdus: self.msdus + 1, body, first }
    }

    /// Its length from MAC header to FCS (0 when empty).
    pub const fn bytes(&self) -> u32 {
        match self.msdus {
            0 => 0,
            1 => MAC_HEADER_BYTES + LLC_SNAP_BYTES + self.first + FCS_BYTES,
            _ => MAC_HEADER_BYTES + self.body + FCS_BYTES,
        }
    }
}

/// PSDU length after appending an MPDU of `mpdu` octets to an A-MPDU of `psdu` octets: the
/// previous subframe is padded to 4 octets, then delimiter + MPDU.
pub const fn ampdu_append(psdu: u32, mpdu: u32) -> u32 {
    pad4(psdu) + DELIMITER_BYTES + mpdu
}
/// Block Ack frame: 32 bytes with the compressed bitmap (802.11-2016 9.3.1.9).
const BLOCK_ACK_BYTES: u32 = 32;
/// dot11ShortRetryLimit (802.11-2016 Annex C): 7.
const RETRY_LIMIT: u32 = 7;
/// EDCA best effort: AIFSN 3, CWmin 15 (802.11-2016 Table 9-137).
const AIFSN_BE: u64 = 3;
const CW_MIN_BE: u32 = 15;
/// EDCA best effort CWmax = aCWmax = 1023 (802.11-2016 Table 9-137; aCWmax of the OFDM, HT,
/// VHT and DMG PHYs, Tables 17-21, 19-25, 21-28, 20-32).
const CW_MAX_BE: u32 = 1023;

impl MacTiming {
    /// 802.11ad CBAP access with RTS/DMG CTS protection at the Control PHY (802.11ad uses
    /// RTS/DMG CTS to set the NAV around directional transmissions), Block Ack at SC MCS 1.
    /// `max_mpdus` is a device property (set by the device preset).
    pub fn dmg() -> MacTiming {
        let rts = dmg::control_ppdu_duration_ns(20);
        let cts = dmg::control_ppdu_duration_ns(26);
        MacTiming {
            access_ns: dmg::SIFS_NS + AIFSN_BE * dmg::SLOT_NS,
            slot_ns: dmg::SLOT_NS,
            cw_min: CW_MIN_BE,
            cw_max: CW_MAX_BE,
            collisions: true,
            protection_ns: rts + dmg::SIFS_NS + cts + dmg::SIFS_NS,
            sifs_ns: dmg::SIFS_NS,
            ack_ns: dmg::sc_ppdu_duration_ns(BLOCK_ACK_BYTES, 1),
            max_mpdus: 64,
            max_ampdu_bytes: dmg::MAX_AMPDU_BYTES,
            max_ppdu_ns: dmg::PPDU_MAX_TIME_NS,
            mpdu_overhead_bytes: MPDU_OVERHEAD_BYTES,
            amsdu_msdus: 1,
            // DMG MSDU limit plus its headers (A-MSDU is not used by the 802.11ad presets).
            max_amsdu_bytes: dmg::MAX_MSDU_BYTES + MPDU_OVERHEAD_BYTES,
            retry_limit: RETRY_LIMIT,
            beacon_header_ns: dmg::beacon_header_ns(),
            beacon_interval_ns: dmg::BEACON_INTERVAL_NS,
        }
    }

    /// 802.11ac EDCA best effort, Block Ack as a legacy 24 Mbit/s OFDM frame (20 us preamble +
    /// 32 bytes: 3 symbols of 4 us + service/tail -> 32 us).
    pub fn vht() -> MacTiming {
        MacTiming {
            access_ns: vht::SIFS_NS + AIFSN_BE * vht::SLOT_NS,
            slot_ns: vht::SLOT_NS,
            cw_min: CW_MIN_BE,
            cw_max: CW_MAX_BE,
            collisions: true,
            // No RTS/CTS before an aggregate: the seed 002 phone's qcacld-3.0 ini sets
            // RTSThreshold = 1048576 (docs/models.md, Radio paths), and Linux mac80211 leaves
            // the RTS threshold off by default (wiphy rts_threshold = (u32)-1). A backoff
            // collision then costs the whole PPDU and the Block Ack timeout.
            protection_ns: 0,
            sifs_ns: vht::SIFS_NS,
            ack_ns: 32_000,
            max_mpdus: 64,
            max_ampdu_bytes: vht::MAX_AMPDU_BYTES,
            max_ppdu_ns: vht::PPDU_MAX_TIME_NS,
            mpdu_overhead_bytes: MPDU_OVERHEAD_BYTES,
            amsdu_msdus: 1,
            max_amsdu_bytes: vht::MAX_MPDU_BYTES,
            retry_limit: RETRY_LIMIT,
            beacon_header_ns: 0,
            beacon_interval_ns: 0,
        }
    }

    /// 802.11n EDCA best effort at `band`, Block Ack as for 802.11ac.
    pub fn ht(band: ht::Band) -> MacTiming {
        let sifs = ht::sifs_ns(band);
        MacTiming {
            access_ns: sifs + AIFSN_BE * ht::SLOT_NS,
            slot_ns: ht::SLOT_NS,
            cw_min: CW_MIN_BE,
            cw_max: CW_MAX_BE,
            collisions: true,
            // No RTS/CTS (mac80211's default RTS threshold is off; see `vht`).
            protection_ns: 0,
            sifs_ns: sifs,
            ack_ns: 32_000,
            max_mpdus: 64,
            max_ampdu_bytes: ht::MAX_AMPDU_BYTES,
            max_ppdu_ns: ht::PPDU_MAX_TIME_NS,
            mpdu_overhead_bytes: MPDU_OVERHEAD_BYTES,
            amsdu_msdus: 1,
            max_amsdu_bytes: HT_MAX_MPDU_IN_AMPDU_BYTES,
            retry_limit: RETRY_LIMIT,
            beacon_header_ns: 0,
            beacon_interval_ns: 0,
        }
    }
}

/// The MCS an ideal rate adaptation picks from `ladder`: the one maximising rate x (1 - PER)
/// for frames of `len` bytes at `rssi_dbm`, given the receiver beats the standard's
/// sensitivity by `rx_gain_db`.
pub fn ideal_mcs(phy: &RadioPhy, rssi_dbm: f64, rx_gain_db: f64, len: u32, ladder: &[u8]) -> Option<u8> {
    let mut best: Option<(u8, f64)> = None;
    for &m in ladder {
        let margin = rssi_dbm - (phy.sensitivity_dbm(m)? - rx_gain_db);
        let p = per_for_len(per_4096(margin), len);
        let goodput = phy.rate_bps(m) as f64 * (1.0 - p);
        if best.is_none_or(|(_, g)| goodput > g) {
            best = Some((m, goodput));
        }
    }
    best.map(|(m, _)| m)
}

fn bw_mhz_vht(bw: vht::Bandwidth) -> u32 {
    match bw {
        vht::Bandwidth::Mhz20 => 20,
        vht::Bandwidth::Mhz40 => 40,
        vht::Bandwidth::Mhz80 => 80,
        vht::Bandwidth::Mhz160 => 160,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_mcs_moves_down_and_up_with_signal() {
        let phy = RadioPhy::Dmg;
        let sc: Vec<u8> = phy.mcs_candidates(9).collect();
        let sc = sc.as_slice();
        // Far above every SC sensitivity: the top SC MCS the device allows.
        assert_eq!(ideal_mcs(&phy, -40.0, 0.0, 7954, sc), Some(9));
        // Weak: below MCS 9's -59 dBm and MCS 8's -61 dBm, above MCS 7's -62 dBm by 1 dB.
        let m = ideal_mcs(&phy, -61.0, 0.0, 7954, sc).unwrap();
        assert!(m <= 8, "{m}");
        let lower = ideal_mcs(&phy, -66.0, 0.0, 7954, sc).unwrap();
        assert!(lower < m, "{lower} < {m}");
        // Back up when the signal returns.
        assert_eq!(ideal_mcs(&phy, -40.0, 0.0, 7954, sc), Some(9));
    }

    #[test]
    fn dmg_mac_costs_are_microseconds() {
        let m = MacTiming::dmg();
        assert_eq!(m.access_ns, 18_000);
        assert!(m.protection_ns > 15_000 && m.protection_ns < 40_000, "{}", m.protection_ns);
        assert!(m.ack_ns > 2_000 && m.ack_ns < 5_000, "{}", m.ack_ns);
    }
}

#[cfg(test)]
mod efficiency_tests {
    use super::*;

    /// MAC efficiency of one TXOP: payload bits over the TXOP's airtime, as a fraction of the
    /// PHY rate (mean backoff).
    fn efficiency(phy: &RadioPhy, mac: &MacTiming, mcs: u8, n: u32, msdu: u32) -> f64 {
        let psdu = n * (msdu + MPDU_OVERHEAD_BYTES);
        let backoff = mac.slot_ns as f64 * mac.cw_min as f64 / 2.0;
        let air = mac.access_ns as f64
            + backoff
            + mac.protection_ns as f64
            + phy.ppdu_ns(psdu, mcs) as f64
            + mac.sifs_ns as f64
            + mac.ack_ns as f64;
        let air =
            air * mac.beacon_interval_ns.max(1) as f64 / (mac.beacon_interval_ns - mac.beacon_header_ns).max(1) as f64;
        let goodput = (n * msdu) as f64 * 8.0 / (air / 1e9);
        goodput / phy.rate_bps(mcs) as f64
    }

    /// docs/facts.md: MCS 1 with 7 x 7920-octet MSDUs per TXOP gives 332 of 385 Mbit/s (86 %).
    /// Without the beacon header interval the TXOP alone is 91.6 % efficient; the BHI (BTI + A-BFT
    /// with the standard's defaults, about 3 ms of every 102.4 ms) brings it to ~89 %.
    #[test]
    fn dmg_efficiency_matches_the_published_mcs1_point() {
        let mac = MacTiming::dmg();
        let bhi = mac.beacon_header_ns as f64 / mac.beacon_interval_ns as f64;
        assert!(bhi > 0.02 && bhi < 0.04, "BHI takes {bhi:.3} of the beacon interval");
        let e = efficiency(&RadioPhy::Dmg, &mac, 1, 7, 7920);
        assert!((e - 0.86).abs() < 0.04, "efficiency {e:.3}");
    }

    /// Frame lengths at hand-computed points (802.11-2016 9.3.2.2.2 A-MSDU subframes, 9.7.1
    /// A-MPDU subframes, both padded to 4 octets except the last).
    #[test]
    fn mpdu_and_ampdu_lengths() {
        // One 1500-byte IP packet: 26 + 8 + 1500 + 4 = 1538; with its delimiter 1542.
        assert_eq!(mpdu_len([1500]), 1538);
        assert_eq!(ampdu_append(0, 1538), 1542);
        // Second MPDU: the first subframe is padded 1542 -> 1544, then 4 + 1538.
        assert_eq!(ampdu_append(1542, 1538), 3086);
        // A-MSDU of three: subframes 14 + 8 + 1500 = 1522, padded to 1524 but the last:
        // 1524 + 1524 + 1522 = 4570; MPDU 26 + 4570 + 4 = 4600 (already 4-aligned).
        assert_eq!(mpdu_len([1500, 1500, 1500]), 4600);
        assert_eq!(ampdu_append(ampdu_append(0, 4600), 4600), 9208);
        // Two TCP ACKs (52 bytes): 74 -> 76 + 74 = 150; 26 + 150 + 4 = 180.
        assert_eq!(mpdu_len([52, 52]), 180);
        assert_eq!(mpdu_len([]), 0);
        // The MPDU a backlogged sender's PER is judged at.
        let mut mac = MacTiming::vht();
        assert_eq!(mac.full_mpdu_bytes(1500), 1542);
        mac.amsdu_msdus = 3;
        assert_eq!(mac.full_mpdu_bytes(1500), 4604);
        mac.max_amsdu_bytes = 3895; // the smallest VHT maximum MPDU length: two fit
        assert_eq!(mac.full_mpdu_bytes(1500), 4 + mpdu_len([1500, 1500]));
        assert_eq!(MacTiming::ht(ht::Band::Ghz5).max_amsdu_bytes, 4095);
    }

    /// 802.11ac, 80 MHz, 2 SS, short GI, MCS 9 (866.7 Mbit/s), 64-MPDU A-MPDUs of 1500-byte
    /// packets, mean backoff (7.5 slots), by hand:
    /// - one MSDU per MPDU: PSDU 63 x 1544 + 1542 = 98,814 octets; N_SYM =
    ///   ceil((8 x 98,814 + 16 + 6 x 2) / 3120) = 254, 914.4 us -> 916 us (whole 4 us) + 44 us
    ///   preamble = 960 us; TXOP 43 + 67.5 + 960 + 16 + 32 = 1118.5 us for 768,000 bits: 686.6 Mbit/s = 79.2 %;
    /// - three MSDUs per MPDU (A-MSDU): PSDU 64 x 4604 = 294,656; N_SYM = ceil(2,357,276 / 3120)
    ///   = 756, 2721.6 -> 2724 us + 44 = 2768 us; TXOP 2926.5 us for 2,304,000 bits:
    ///   787.3 Mbit/s = 90.8 %.
    #[test]
    fn vht_efficiency_with_and_without_amsdu() {
        let phy = RadioPhy::Vht { bw: vht::Bandwidth::Mhz80, nss: 2, sgi: true };
        let mac = MacTiming::vht();
        let psdu = |k: u32| (0..64).fold(0, |acc, _| ampdu_append(acc, mpdu_len((0..k).map(|_| 1500))));
        assert_eq!(psdu(1), 98_814);
        assert_eq!(psdu(3), 294_656);
        assert_eq!(phy.ppdu_ns(98_814, 9), 960_000);
        assert_eq!(phy.ppdu_ns(294_656, 9), 2_768_000);
        let eff = |k: u32| {
            let txop = mac.access_ns as f64 + 67_500.0 + phy.ppdu_ns(psdu(k), 9) as f64 + 16_000.0 + 32_000.0;
            (64 * k * 1500 * 8) as f64 / txop * 1e9 / phy.rate_bps(9) as f64
        };
        assert!((eff(1) - 0.792).abs() < 0.001, "{}", eff(1));
        assert!((eff(3) - 0.908).abs() < 0.001, "{}", eff(3));
    }

    /// Small frames cost far more airtime per byte than jumbo frames (seed 000's MTU effect).
    #[test]
    fn dmg_efficiency_depends_on_frame_size_and_aggregation() {
        let mac = MacTiming::dmg();
        let jumbo = efficiency(&RadioPhy::Dmg, &mac, 9, 8, 7912);
        let small_one = efficiency(&RadioPhy::Dmg, &mac, 9, 1, 1500);
        let small_agg = efficiency(&RadioPhy::Dmg, &mac, 9, 32, 1500);
        assert!(small_one < 0.15, "one 1500 B frame per TXOP: {small_one:.3}");
        assert!(small_agg > small_one && jumbo > 0.6, "{small_agg:.3} {jumbo:.3}");
    }
}
