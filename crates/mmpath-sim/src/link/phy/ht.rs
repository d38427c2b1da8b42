//! 802.11n HT PHY (IEEE 802.11n-2009, clause 20): MCS 0-15 (0-7 one spatial stream, 8-15 two),
//! 20 / 40 MHz, long / short guard interval; receiver sensitivities; HT-mixed PPDU timing.
//!
//! Rate = data subcarriers (52 / 108) x bits per subcarrier x code rate x streams / symbol time
//! (4.0 us long GI, 3.6 us short GI) (docs/facts.md "802.11ac / 802.11n"; 802.11n-2009 20.6, the HT MCS parameter tables). The types shared by the OFDM PHYs (`CodeRate`, `Modulation`, the
//! data-field symbol count) live here; `vht` (802.11ac) builds on them.
//!
//! Only BCC coding, no STBC, one user: the configuration of commodity 1-2 stream clients.

/// A forward-error-correction code rate `num / den` (e.g. 5/6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodeRate {
    pub num: u8,
    pub den: u8,
}

impl CodeRate {
    pub const fn new(num: u8, den: u8) -> CodeRate {
        CodeRate { num, den }
    }
    pub fn as_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl std::fmt::Display for CodeRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

/// Subcarrier modulation of the 802.11a/n/ac OFDM PHYs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modulation {
    Bpsk,
    Qpsk,
    Qam16,
    Qam64,
    /// 802.11ac only (VHT MCS 8-9).
    Qam256,
}

impl Modulation {
    /// Coded bits per subcarrier per spatial stream (N_BPSCS).
    pub const fn bits_per_subcarrier(self) -> u32 {
        match self {
            Modulation::Bpsk => 1,
            Modulation::Qpsk => 2,
            Modulation::Qam16 => 4,
            Modulation::Qam64 => 6,
            Modulation::Qam256 => 8,
        }
    }
}

/// HT channel width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bandwidth {
    Mhz20,
    Mhz40,
}

impl Bandwidth {
    pub const fn mhz(self) -> u32 {
        match self {
            Bandwidth::Mhz20 => 20,
            Bandwidth::Mhz40 => 40,
        }
    }
    /// Data subcarriers N_SD (802.11n-2009 Table 20-6: 52 at 20 MHz, 108 at 40 MHz).
    pub const fn data_subcarriers(self) -> u32 {
        match self {
            Bandwidth::Mhz20 => 52,
            Bandwidth::Mhz40 => 108,
        }
    }
    /// Sensitivity penalty relative to 20 MHz: +3 dB per doubling of the noise bandwidth
    /// (802.11n-2009 Table 20-22).
    const fn sensitivity_offset_db(self) -> i8 {
        match self {
            Bandwidth::Mhz20 => 0,
            Bandwidth::Mhz40 => 3,
        }
    }
}

/// Frequency band: decides SIFS and the 2.4 GHz signal extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Band {
    Ghz2_4,
    Ghz5,
}

/// One HT MCS (802.11n-2009 20.6, HT MCS parameter tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtMcs {
    pub index: u8,
    pub spatial_streams: u8,
    pub modulation: Modulation,
    pub code_rate: CodeRate,
    /// Minimum receiver input sensitivity at 20 MHz (802.11n-2009 Table 20-22, 10 % PER at a
    /// 4096-octet PSDU); 40 MHz is 3 dB higher. The table is per modulation and code rate, so
    /// MCS 8-15 share the values of MCS 0-7.
    pub sensitivity_20mhz_dbm: i8,
}

impl HtMcs {
    /// Data bits per OFDM symbol, N_DBPS (all HT MCS 0-15 give an integer).
    pub const fn data_bits_per_symbol(&self, bw: Bandwidth) -> u32 {
        bw.data_subcarriers()
            * self.modulation.bits_per_subcarrier()
            * self.spatial_streams as u32
            * self.code_rate.num as u32
            / self.code_rate.den as u32
    }
    /// PHY rate in bit/s, rounded to the nearest bit/s (short-GI rates are not integers).
    pub const fn rate_bps(&self, bw: Bandwidth, sgi: bool) -> u64 {
        rate_from_symbol_bps(self.data_bits_per_symbol(bw), sgi)
    }
    pub const fn sensitivity_dbm(&self, bw: Bandwidth) -> i8 {
        self.sensitivity_20mhz_dbm + bw.sensitivity_offset_db()
    }
}

const fn ht(index: u8, modulation: Modulation, num: u8, den: u8, sensitivity_20mhz_dbm: i8) -> HtMcs {
    HtMcs {
        index,
        spatial_streams: index / 8 + 1,
        modulation,
        code_rate: CodeRate::new(num, den),
        sensitivity_20mhz_dbm,
    }
}

use Modulation::{Bpsk, Qam16, Qam64, Qpsk};

/// HT MCS 0-15. Modulation / code rate: 802.11n-2009 20.6 (HT MCS parameter tables). Sensitivity:
/// 802.11n-2009 Table 20-22 (-82 / -79 / -77 / -74 / -70 / -66 / -65 / -64 dBm at 20 MHz).
pub static HT_MCS: [HtMcs; 16] = [
    ht(0, Bpsk, 1, 2, -82),
    ht(1, Qpsk, 1, 2, -79),
    ht(2, Qpsk, 3, 4, -77),
    ht(3, Qam16, 1, 2, -74),
    ht(4, Qam16, 3, 4, -70),
    ht(5, Qam64, 2, 3, -66),
    ht(6, Qam64, 3, 4, -65),
    ht(7, Qam64, 5, 6, -64),
    ht(8, Bpsk, 1, 2, -82),
    ht(9, Qpsk, 1, 2, -79),
    ht(10, Qpsk, 3, 4, -77),
    ht(11, Qam16, 1, 2, -74),
    ht(12, Qam16, 3, 4, -70),
    ht(13, Qam64, 2, 3, -66),
    ht(14, Qam64, 3, 4, -65),
    ht(15, Qam64, 5, 6, -64),
];

pub fn mcs(index: u8) -> Option<&'static HtMcs> {
    HT_MCS.get(index as usize)
}

pub fn all_mcs() -> &'static [HtMcs] {
    &HT_MCS
}

/// PHY rate of HT MCS `mcs` in bit/s; None for an index outside 0-15.
pub fn rate_bps(mcs_index: u8, bw: Bandwidth, sgi: bool) -> Option<u64> {
    mcs(mcs_index).map(|m| m.rate_bps(bw, sgi))
}

/// Receiver minimum sensitivity of `mcs` at `bw`, dBm; None for an index outside 0-15.
pub fn sensitivity_dbm(mcs_index: u8, bw: Bandwidth) -> Option<i8> {
    mcs(mcs_index).map(|m| m.sensitivity_dbm(bw))
}

/// The fastest HT MCS with `spatial_streams` streams, index at most `max_mcs`, whose minimum
/// sensitivity is met at `rssi_dbm`. None when even the most robust one is not.
pub fn highest_mcs_at(rssi_dbm: f64, bw: Bandwidth, spatial_streams: u8, max_mcs: u8) -> Option<u8> {
    HT_MCS
        .iter()
        .filter(|m| m.spatial_streams == spatial_streams && m.index <= max_mcs)
        .filter(|m| m.sensitivity_dbm(bw) as f64 <= rssi_dbm)
        .max_by_key(|m| m.rate_bps(bw, false))
        .map(|m| m.index)
}

// ---- Timing -----------------------------------------------------------------------------

/// OFDM symbol with the 0.8 us long guard interval (802.11n-2009 Table 20-5, T_SYM).
pub const SYMBOL_LONG_GI_NS: u64 = 4_000;
/// OFDM symbol with the 0.4 us short guard interval (802.11n-2009 Table 20-5, T_SYMS).
pub const SYMBOL_SHORT_GI_NS: u64 = 3_600;
/// Legacy short training field (802.11n-2009 Table 20-5, T_L-STF).
pub const L_STF_NS: u64 = 8_000;
/// Legacy long training field (T_L-LTF).
pub const L_LTF_NS: u64 = 8_000;
/// Legacy SIGNAL field (T_L-SIG).
pub const L_SIG_NS: u64 = 4_000;
/// HT-SIG, two symbols (T_HT-SIG).
pub const HT_SIG_NS: u64 = 8_000;
/// HT short training field in the HT-mixed format (T_HT-STF).
pub const HT_STF_NS: u64 = 4_000;
/// One HT long training field (T_HT-LTF); there are `num_ltf(nss)` of them.
pub const HT_LTF_NS: u64 = 4_000;
/// Signal extension after an HT PPDU in the 2.4 GHz band (802.11n-2009 20.4.3, Table 20-5;
/// ns-3 wifi-phy.cc adds 6 us for HT at 2.4 GHz).
pub const SIGNAL_EXTENSION_2G4_NS: u64 = 6_000;
/// SERVICE field bits ahead of the PSDU (802.11n-2009 20.3.11.1).
pub const SERVICE_BITS: u64 = 16;
/// BCC tail bits per encoder (802.11n-2009 20.3.11.3).
pub const TAIL_BITS_PER_ENCODER: u64 = 6;

/// SIFS in the 5 GHz band (aSIFSTime of the HT PHY characteristics, 802.11n-2009 20.4.4;
/// ns-3 uses 16 us for HT/VHT at 5 GHz).
pub const SIFS_5GHZ_NS: u64 = 16_000;
/// SIFS in the 2.4 GHz band (aSIFSTime, 802.11n-2009 20.4.4).
pub const SIFS_2G4_NS: u64 = 10_000;
/// Slot time (aSlotTime, 802.11n-2009 20.4.4: 9 us; at 2.4 GHz only when short slot is in use,
/// else 20 us).
pub const SLOT_NS: u64 = 9_000;
/// AIFSN of AC_BE, the class bulk data uses (802.11-2012 Table 8-105, default EDCA set).
pub const AIFSN_BE: u64 = 3;
/// aCWmin / aCWmax of the OFDM PHYs (802.11-2012 Table 18-17; AC_BE uses them unchanged).
pub const CW_MIN: u32 = 15;
pub const CW_MAX: u32 = 1023;

/// Maximum A-MPDU length: 2^(13 + 3) - 1 octets, the largest Maximum A-MPDU Length Exponent (3)
/// of the HT Capabilities element (802.11n-2009 7.3.2.56.3).
pub const MAX_AMPDU_BYTES: u32 = 65_535;
/// Maximum A-MSDU length (the larger of the two HT options, 802.11n-2009 7.3.2.56.2).
pub const MAX_AMSDU_BYTES: u32 = 7_935;
/// Maximum HT PSDU: the 16-bit HT-SIG LENGTH field (aPSDUMaxLength, 802.11n-2009 20.4.4).
pub const MAX_PSDU_BYTES: u32 = 65_535;
/// Longest HT-mixed PPDU: what the 12-bit L-SIG LENGTH (<= 4095 octets at 6 Mbit/s) can
/// announce, 20 us + 4 us x ceil((8 x 4095 + 22) / 24) = 5.484 ms; the same number as VHT's
/// aPPDUMaxTime (802.11ac-2013 22.4.4). A test derives it.
pub const PPDU_MAX_TIME_NS: u64 = 5_484_000;

pub const fn sifs_ns(band: Band) -> u64 {
    match band {
        Band::Ghz2_4 => SIFS_2G4_NS,
        Band::Ghz5 => SIFS_5GHZ_NS,
    }
}

/// DIFS = SIFS + 2 x slot (802.11-2012 9.3.7): 34 us at 5 GHz, 28 us at 2.4 GHz.
pub const fn difs_ns(band: Band) -> u64 {
    sifs_ns(band) + 2 * SLOT_NS
}

/// `AIFS[AC]` = SIFS + AIFSN x slot (802.11-2012 9.2.4.2): 43 us for AC_BE at 5 GHz.
pub const fn aifs_ns(band: Band, aifsn: u64) -> u64 {
    sifs_ns(band) + aifsn * SLOT_NS
}

/// Number of HT-LTFs for `nss` streams without STBC: 1, 2, 4, 4 (802.11n-2009 20.3.9.4.6;
/// ns-3 wifi-phy.cc GetPlcpTrainingSymbolDuration).
pub const fn num_ltf(nss: u8) -> u64 {
    match nss {
        0 | 1 => 1,
        2 => 2,
        _ => 4,
    }
}

/// HT-mixed preamble + headers: L-STF + L-LTF + L-SIG + HT-SIG + HT-STF + N_LTF x HT-LTF
/// (802.11n-2009 20.4.3, Figure 20-1; ns-3 wifi-phy.cc for HT_MF): 36 us for one stream, 40 us
/// for two.
pub const fn preamble_duration_ns(nss: u8) -> u64 {
    L_STF_NS + L_LTF_NS + L_SIG_NS + HT_SIG_NS + HT_STF_NS + num_ltf(nss) * HT_LTF_NS
}

/// Rate from data bits per symbol: N_DBPS / T_SYM, rounded to the nearest bit/s.
pub(crate) const fn rate_from_symbol_bps(data_bits_per_symbol: u32, sgi: bool) -> u64 {
    let sym_ns = if sgi { SYMBOL_SHORT_GI_NS } else { SYMBOL_LONG_GI_NS };
    (data_bits_per_symbol as u64 * 1_000_000_000 + sym_ns / 2) / sym_ns
}

/// Data-field OFDM symbols with BCC: N_SYM = ceil((8 L + 16 + 6 N_ES) / N_DBPS)
/// (802.11n-2009 eq. 20-32; 802.11ac-2013 eq. 22-107 for VHT SU, no STBC).
pub(crate) const fn data_symbols(psdu_bytes: u32, data_bits_per_symbol: u32, encoders: u32) -> u64 {
    let bits = 8 * psdu_bytes as u64 + SERVICE_BITS + TAIL_BITS_PER_ENCODER * encoders as u64;
    bits.div_ceil(data_bits_per_symbol as u64)
}

/// Duration of `n_sym` data symbols. With the short GI the TXTIME formula rounds the data
/// field up to whole 4 us symbols, T_SYM x ceil(T_SYMS x N_SYM / T_SYM)
/// (802.11n-2009 eq. 20-32; 802.11ac-2013 eq. 22-106).
pub(crate) const fn data_duration_ns(n_sym: u64, sgi: bool) -> u64 {
    if sgi {
        SYMBOL_LONG_GI_NS * (SYMBOL_SHORT_GI_NS * n_sym).div_ceil(SYMBOL_LONG_GI_NS)
    } else {
        SYMBOL_LONG_GI_NS * n_sym
    }
}

/// Airtime of an HT-mixed PPDU carrying `psdu_bytes` (an MPDU or a whole A-MPDU) at HT MCS
/// `mcs`: preamble + ceil data symbols (+ 6 us signal extension at 2.4 GHz). BCC, one
/// encoder (all of MCS 0-15 are at most 300 Mbit/s, 802.11n-2009 20.3.11.3).
///
/// # Panics
/// If `mcs` is not 0-15 (check with [`mcs`] first).
pub fn ht_ppdu_duration_ns(psdu_bytes: u32, mcs_index: u8, bw: Bandwidth, sgi: bool, band: Band) -> u64 {
    let m = mcs(mcs_index).unwrap_or_else(|| panic!("HT MCS {mcs_index} does not exist (0-15)"));
    let n_sym = data_symbols(psdu_bytes, m.data_bits_per_symbol(bw), 1);
    let ext = match band {
        Band::Ghz2_4 => SIGNAL_EXTENSION_2G4_NS,
        Band::Ghz5 => 0,
    };
    preamble_duration_ns(m.spatial_streams) + data_duration_ns(n_sym, sgi) + ext
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rate from the formula in docs/facts.md, in floating point, independent of the integer code.
    fn formula_bps(m: &HtMcs, bw: Bandwidth, sgi: bool) -> f64 {
        let sd = match bw {
            Bandwidth::Mhz20 => 52.0,
            Bandwidth::Mhz40 => 108.0,
        };
        let bits = match m.modulation {
            Bpsk => 1.0,
            Qpsk => 2.0,
            Qam16 => 4.0,
            Qam64 => 6.0,
            Modulation::Qam256 => 8.0,
        };
        let sym_s = if sgi { 3.6e-6 } else { 4.0e-6 };
        sd * bits * m.code_rate.as_f64() * m.spatial_streams as f64 / sym_s
    }

    #[test]
    fn every_rate_matches_the_formula() {
        for m in all_mcs() {
            for bw in [Bandwidth::Mhz20, Bandwidth::Mhz40] {
                for sgi in [false, true] {
                    let want = formula_bps(m, bw, sgi);
                    let got = m.rate_bps(bw, sgi) as f64;
                    assert!((got - want).abs() <= 0.5, "MCS {} {:?} sgi={sgi}: {got} vs {want}", m.index, bw);
                }
            }
        }
    }

    /// Published 802.11n rates (802.11n-2009 20.6), in Mbit/s to 0.1.
    #[test]
    fn published_rates() {
        let mbps = |i, bw, sgi| (rate_bps(i, bw, sgi).unwrap() as f64 / 1e5).round() / 10.0;
        assert_eq!(mbps(0, Bandwidth::Mhz20, false), 6.5);
        assert_eq!(mbps(7, Bandwidth::Mhz20, false), 65.0);
        assert_eq!(mbps(7, Bandwidth::Mhz20, true), 72.2);
        assert_eq!(mbps(7, Bandwidth::Mhz40, false), 135.0);
        assert_eq!(mbps(7, Bandwidth::Mhz40, true), 150.0);
        assert_eq!(mbps(15, Bandwidth::Mhz20, true), 144.4);
        assert_eq!(mbps(14, Bandwidth::Mhz40, false), 243.0);
        assert_eq!(mbps(15, Bandwidth::Mhz40, true), 300.0);
        assert_eq!(mbps(8, Bandwidth::Mhz20, false), 13.0);
    }

    #[test]
    fn out_of_range_is_none() {
        assert!(mcs(16).is_none());
        assert!(rate_bps(16, Bandwidth::Mhz20, false).is_none());
        assert!(sensitivity_dbm(255, Bandwidth::Mhz40).is_none());
    }

    #[test]
    fn two_stream_mcs_double_the_one_stream_rate() {
        for i in 0..8u8 {
            for bw in [Bandwidth::Mhz20, Bandwidth::Mhz40] {
                let one = mcs(i).unwrap().data_bits_per_symbol(bw);
                assert_eq!(mcs(i + 8).unwrap().data_bits_per_symbol(bw), 2 * one);
            }
        }
    }

    #[test]
    fn sensitivities() {
        let s20: Vec<i8> = (0..8).map(|i| sensitivity_dbm(i, Bandwidth::Mhz20).unwrap()).collect();
        assert_eq!(s20, vec![-82, -79, -77, -74, -70, -66, -65, -64]);
        let s40: Vec<i8> = (0..8).map(|i| sensitivity_dbm(i, Bandwidth::Mhz40).unwrap()).collect();
        assert_eq!(s40, vec![-79, -76, -74, -71, -67, -63, -62, -61]);
        assert_eq!(sensitivity_dbm(15, Bandwidth::Mhz20), Some(-64));
    }

    #[test]
    fn highest_mcs_follows_sensitivity() {
        assert_eq!(highest_mcs_at(-90.0, Bandwidth::Mhz20, 1, 7), None);
        assert_eq!(highest_mcs_at(-82.0, Bandwidth::Mhz20, 1, 7), Some(0));
        assert_eq!(highest_mcs_at(-71.0, Bandwidth::Mhz20, 1, 7), Some(3));
        assert_eq!(highest_mcs_at(-71.0, Bandwidth::Mhz40, 1, 7), Some(3));
        assert_eq!(highest_mcs_at(-40.0, Bandwidth::Mhz20, 1, 7), Some(7));
        assert_eq!(highest_mcs_at(-40.0, Bandwidth::Mhz20, 1, 5), Some(5));
        assert_eq!(highest_mcs_at(-40.0, Bandwidth::Mhz40, 2, 15), Some(15));
        assert_eq!(highest_mcs_at(-78.0, Bandwidth::Mhz40, 2, 15), Some(8));
    }

    #[test]
    fn preamble_and_interframe_spaces() {
        assert_eq!(preamble_duration_ns(1), 36_000);
        assert_eq!(preamble_duration_ns(2), 40_000);
        assert_eq!(difs_ns(Band::Ghz5), 34_000);
        assert_eq!(difs_ns(Band::Ghz2_4), 28_000);
        assert_eq!(aifs_ns(Band::Ghz5, AIFSN_BE), 43_000);
    }

    /// Hand-computed: 1500 B at MCS 7, 20 MHz: N_DBPS = 52 x 6 x 5/6 = 260,
    /// N_SYM = ceil((12000 + 16 + 6) / 260) = ceil(46.24) = 47 -> 188 us; + 36 us preamble.
    /// Short GI: 4 x ceil(0.9 x 47 = 42.3) = 172 us. 2.4 GHz adds 6 us.
    #[test]
    fn ppdu_duration_hand_computed() {
        assert_eq!(ht_ppdu_duration_ns(1500, 7, Bandwidth::Mhz20, false, Band::Ghz5), 224_000);
        assert_eq!(ht_ppdu_duration_ns(1500, 7, Bandwidth::Mhz20, true, Band::Ghz5), 208_000);
        assert_eq!(ht_ppdu_duration_ns(1500, 7, Bandwidth::Mhz20, false, Band::Ghz2_4), 230_000);
        // 65535 B at MCS 15, 40 MHz: N_DBPS = 108 x 6 x 5/6 x 2 = 1080,
        // N_SYM = ceil((524280 + 22) / 1080) = ceil(485.46) = 486 -> 1944 us; + 40 us preamble.
        assert_eq!(ht_ppdu_duration_ns(65_535, 15, Bandwidth::Mhz40, false, Band::Ghz5), 1_984_000);
        // 40 B at MCS 0, 20 MHz: N_DBPS = 26, ceil((320 + 22) / 26) = 14 symbols = 56 us.
        assert_eq!(ht_ppdu_duration_ns(40, 0, Bandwidth::Mhz20, false, Band::Ghz5), 92_000);
    }

    /// The L-SIG bound: LENGTH <= 4095 octets at 6 Mbit/s (24 data bits per 4 us symbol,
    /// 16 SERVICE + 6 tail bits) behind the 20 us legacy preamble and L-SIG.
    #[test]
    fn ppdu_max_time_is_the_l_sig_limit() {
        let symbols = (4095u64 * 8 + 16 + 6).div_ceil(24);
        assert_eq!(L_STF_NS + L_LTF_NS + L_SIG_NS + symbols * SYMBOL_LONG_GI_NS, PPDU_MAX_TIME_NS);
    }

    #[test]
    #[should_panic(expected = "HT MCS 16")]
    fn duration_of_a_missing_mcs_panics() {
        ht_ppdu_duration_ns(100, 16, Bandwidth::Mhz20, false, Band::Ghz5);
    }
}
