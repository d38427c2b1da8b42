//! 802.11ac VHT PHY (IEEE 802.11ac-2013, clause 22): MCS 0-9 at 20 / 40 / 80 / 160 MHz, 1-4
//! spatial streams, long / short guard interval; receiver sensitivities; VHT SU PPDU timing.
//!
//! Rate = data subcarriers (52 / 108 / 234 / 468) x bits per subcarrier x code rate x streams /
//! symbol time (4.0 us long GI, 3.6 us short GI) (docs/facts.md "802.11ac / 802.11n"; 802.11ac-2013
//! 22.5, the VHT-MCS parameter tables). Some MCS / width / stream combinations are not valid
//! in the standard; lookups return None for them.
//!
//! Only BCC coding, no STBC, single user.

use super::ht::{data_duration_ns, data_symbols, rate_from_symbol_bps};
pub use super::ht::{CodeRate, Modulation};
use Modulation::{Bpsk, Qam16, Qam256, Qam64, Qpsk};

/// Spatial streams supported here (the standard allows 8; clients have 1-2, APs up to 4).
pub const MAX_SPATIAL_STREAMS: u8 = 4;

/// VHT channel width (80+80 MHz behaves as 160 MHz for rates and is not modelled separately).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bandwidth {
    Mhz20,
    Mhz40,
    Mhz80,
    Mhz160,
}

impl Bandwidth {
    pub const ALL: [Bandwidth; 4] = [Bandwidth::Mhz20, Bandwidth::Mhz40, Bandwidth::Mhz80, Bandwidth::Mhz160];

    pub const fn mhz(self) -> u32 {
        match self {
            Bandwidth::Mhz20 => 20,
            Bandwidth::Mhz40 => 40,
            Bandwidth::Mhz80 => 80,
            Bandwidth::Mhz160 => 160,
        }
    }
    /// Data subcarriers N_SD: 52, 108, 234, 468 (802.11ac-2013 22.3.6 / 22.5; ns-3 vht-phy.cc
    /// GetUsableSubcarriers).
    pub const fn data_subcarriers(self) -> u32 {
        match self {
            Bandwidth::Mhz20 => 52,
            Bandwidth::Mhz40 => 108,
            Bandwidth::Mhz80 => 234,
            Bandwidth::Mhz160 => 468,
        }
    }
    /// +3 dB of sensitivity per doubling of the bandwidth (802.11ac-2013 Table 22-25).
    const fn sensitivity_offset_db(self) -> i8 {
        match self {
            Bandwidth::Mhz20 => 0,
            Bandwidth::Mhz40 => 3,
            Bandwidth::Mhz80 => 6,
            Bandwidth::Mhz160 => 9,
        }
    }
}

/// One VHT MCS (per spatial stream; 802.11ac-2013 22.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VhtMcs {
    pub index: u8,
    pub modulation: Modulation,
    pub code_rate: CodeRate,
    /// Minimum receiver input sensitivity at 20 MHz (802.11ac-2013 Table 22-25, 10 % PER at a
    /// 4096-octet PSDU); each doubling of the width adds 3 dB.
    pub sensitivity_20mhz_dbm: i8,
}

const fn vht(index: u8, modulation: Modulation, num: u8, den: u8, sensitivity_20mhz_dbm: i8) -> VhtMcs {
    VhtMcs { index, modulation, code_rate: CodeRate::new(num, den), sensitivity_20mhz_dbm }
}

/// VHT MCS 0-9. MCS 0-7 are HT's modulations and code rates; 8-9 add 256-QAM 3/4 and 5/6
/// (802.11ac-2013 22.5). Sensitivities, 20 MHz: 802.11ac-2013 Table 22-25
/// (-82 -79 -77 -74 -70 -66 -65 -64 -59 -57 dBm).
pub static VHT_MCS: [VhtMcs; 10] = [
    vht(0, Bpsk, 1, 2, -82),
    vht(1, Qpsk, 1, 2, -79),
    vht(2, Qpsk, 3, 4, -77),
    vht(3, Qam16, 1, 2, -74),
    vht(4, Qam16, 3, 4, -70),
    vht(5, Qam64, 2, 3, -66),
    vht(6, Qam64, 3, 4, -65),
    vht(7, Qam64, 5, 6, -64),
    vht(8, Qam256, 3, 4, -59),
    vht(9, Qam256, 5, 6, -57),
];

pub fn mcs(index: u8) -> Option<&'static VhtMcs> {
    VHT_MCS.get(index as usize)
}

pub fn all_mcs() -> &'static [VhtMcs] {
    &VHT_MCS
}

/// Whether the standard defines MCS `mcs` at `bw` with `nss` streams (1-4 here). Not valid
/// (802.11ac-2013 22.5 tables; listed in the CWNA study guide, as quoted by Quadrio Networks
/// "802.11 PHY Data Rates"): MCS 9 at 20 MHz with 1, 2 or 4 streams; MCS 6 at 80 MHz with 3
/// streams; MCS 9 at 160 MHz with 3 streams. (ns-3 vht-phy.cc IsCombinationAllowed has the
/// first two only.) A test checks the list against the BCC divisibility rule.
pub fn is_valid(mcs_index: u8, bw: Bandwidth, nss: u8) -> bool {
    if mcs_index > 9 || nss == 0 || nss > MAX_SPATIAL_STREAMS {
        return false;
    }
    !matches!(
        (bw, mcs_index, nss),
        (Bandwidth::Mhz20, 9, 1 | 2 | 4) | (Bandwidth::Mhz80, 6, 3) | (Bandwidth::Mhz160, 9, 3)
    )
}

/// Coded bits per symbol N_CBPS = N_SD x N_BPSCS x N_SS (None outside the valid set).
pub fn coded_bits_per_symbol(mcs_index: u8, bw: Bandwidth, nss: u8) -> Option<u32> {
    if !is_valid(mcs_index, bw, nss) {
        return None;
    }
    let m = &VHT_MCS[mcs_index as usize];
    Some(bw.data_subcarriers() * m.modulation.bits_per_subcarrier() * nss as u32)
}

/// Data bits per symbol N_DBPS = N_CBPS x R (an integer for every valid combination).
pub fn data_bits_per_symbol(mcs_index: u8, bw: Bandwidth, nss: u8) -> Option<u32> {
    let cbps = coded_bits_per_symbol(mcs_index, bw, nss)?;
    let r = VHT_MCS[mcs_index as usize].code_rate;
    Some(cbps * r.num as u32 / r.den as u32)
}

/// Number of BCC encoders N_ES: one per 540 Mbit/s of long-GI rate, i.e. ceil(N_DBPS / 2160)
/// (the rule ns-3 vht-phy.cc GetNumberBccEncoders derives from the 802.11-2016 VHT-MCS
/// tables 21-30 to 21-61, "540 / 600 Mbps per encoder"), with the one exception within 4
/// streams: 160 MHz, 4 streams, MCS 7 uses 6 instead of 5.
pub fn num_bcc_encoders(mcs_index: u8, bw: Bandwidth, nss: u8) -> Option<u32> {
    let dbps = data_bits_per_symbol(mcs_index, bw, nss)?;
    if (bw, nss, mcs_index) == (Bandwidth::Mhz160, 4, 7) {
        return Some(6);
    }
    Some(dbps.div_ceil(2160))
}

/// PHY rate in bit/s rounded to the nearest bit/s; None for an invalid combination.
pub fn rate_bps(mcs_index: u8, bw: Bandwidth, nss: u8, sgi: bool) -> Option<u64> {
    data_bits_per_symbol(mcs_index, bw, nss).map(|dbps| rate_from_symbol_bps(dbps, sgi))
}

/// Receiver minimum sensitivity of `mcs` at `bw`, dBm (None for MCS > 9). The standard's
/// table does not depend on the number of streams.
pub fn sensitivity_dbm(mcs_index: u8, bw: Bandwidth) -> Option<i8> {
    mcs(mcs_index).map(|m| m.sensitivity_20mhz_dbm + bw.sensitivity_offset_db())
}

/// The fastest valid MCS (index at most `max_mcs`) at `bw` with `nss` streams whose minimum
/// sensitivity is met at `rssi_dbm`; None when not even MCS 0's is.
pub fn highest_mcs_at(rssi_dbm: f64, bw: Bandwidth, nss: u8, max_mcs: u8) -> Option<u8> {
    VHT_MCS
        .iter()
        .filter(|m| m.index <= max_mcs && is_valid(m.index, bw, nss))
        .filter(|m| sensitivity_dbm(m.index, bw).is_some_and(|s| s as f64 <= rssi_dbm))
        .max_by_key(|m| rate_bps(m.index, bw, nss, false))
        .map(|m| m.index)
}

// ---- Timing -----------------------------------------------------------------------------

pub use super::ht::{L_LTF_NS, L_SIG_NS, L_STF_NS, SYMBOL_LONG_GI_NS, SYMBOL_SHORT_GI_NS};
/// VHT-SIG-A, two symbols (T_VHT-SIG-A, 802.11ac-2013 timing-related constants; ns-3 vht-phy.cc).
pub const VHT_SIG_A_NS: u64 = 8_000;
/// VHT short training field (T_VHT-STF).
pub const VHT_STF_NS: u64 = 4_000;
/// One VHT long training field (T_VHT-LTF); there are `num_ltf(nss)` of them.
pub const VHT_LTF_NS: u64 = 4_000;
/// VHT-SIG-B, one symbol, present in SU and MU PPDUs (T_VHT-SIG-B, 802.11ac-2013 22.3.4).
pub const VHT_SIG_B_NS: u64 = 4_000;

/// SIFS (aSIFSTime of the VHT PHY characteristics, 802.11ac-2013 clause 22; 5 GHz only).
pub const SIFS_NS: u64 = 16_000;
/// Slot time (aSlotTime, same table).
pub const SLOT_NS: u64 = 9_000;
/// DIFS = SIFS + 2 slots (802.11-2012 9.3.7).
pub const DIFS_NS: u64 = SIFS_NS + 2 * SLOT_NS;
/// AIFSN of AC_BE (802.11-2012 Table 8-105, default EDCA parameter set).
pub const AIFSN_BE: u64 = 3;
/// `AIFS[AC_BE]` = SIFS + 3 slots = 43 us (802.11-2012 9.2.4.2).
pub const AIFS_BE_NS: u64 = SIFS_NS + AIFSN_BE * SLOT_NS;
/// aCWmin / aCWmax (OFDM PHY values, 802.11-2012 Table 18-17; AC_BE uses them unchanged).
pub const CW_MIN: u32 = 15;
pub const CW_MAX: u32 = 1023;

/// Maximum A-MPDU: 2^(13 + 7) - 1 octets, Maximum A-MPDU Length Exponent 7 of the VHT
/// Capabilities element (802.11ac-2013 8.4.2.160.2).
pub const MAX_AMPDU_BYTES: u32 = 1_048_575;
/// Maximum VHT PSDU (aPSDUMaxLength of the VHT PHY characteristics; ns-3 vht-phy.cc
/// GetMaxPsduSize returns the same 4692480).
pub const MAX_PSDU_BYTES: u32 = 4_692_480;
/// Maximum VHT MPDU (802.11ac-2013 8.4.2.160.2, Maximum MPDU Length 11454).
pub const MAX_MPDU_BYTES: u32 = 11_454;
/// aPPDUMaxTime of the VHT PHY characteristics: 5.484 ms, the L-SIG limit (derived in ht.rs).
pub const PPDU_MAX_TIME_NS: u64 = super::ht::PPDU_MAX_TIME_NS;

/// Number of VHT-LTFs for `nss` streams: 1, 2, 4, 4, 6, 6, 8, 8 (802.11ac-2013 clause 22,
/// N_VHTLTF per N_STS; ns-3 wifi-phy.cc GetPlcpTrainingSymbolDuration).
pub const fn num_ltf(nss: u8) -> u64 {
    match nss {
        0 | 1 => 1,
        2 => 2,
        3 | 4 => 4,
        5 | 6 => 6,
        _ => 8,
    }
}

/// VHT preamble + headers: L-STF 8 + L-LTF 8 + L-SIG 4 + VHT-SIG-A 8 + VHT-STF 4 +
/// N_LTF x VHT-LTF 4 + VHT-SIG-B 4 us (802.11ac-2013 22.4.3, eq. 22-105/106): 40 us for one
/// stream, 44 us for two, 52 us for three or four.
pub const fn preamble_duration_ns(nss: u8) -> u64 {
    L_STF_NS + L_LTF_NS + L_SIG_NS + VHT_SIG_A_NS + VHT_STF_NS + num_ltf(nss) * VHT_LTF_NS + VHT_SIG_B_NS
}

/// Airtime of a VHT SU PPDU carrying a `psdu_bytes` PSDU (an A-MPDU; VHT data is always sent
/// as one): preamble + data symbols N_SYM = ceil((8 L + 16 + 6 N_ES) / N_DBPS), the short-GI
/// data field rounded up to whole 4 us (802.11ac-2013 22.4.3, BCC).
///
/// # Panics
/// If the combination is not valid (check with [`is_valid`] first).
pub fn vht_ppdu_duration_ns(psdu_bytes: u32, mcs_index: u8, bw: Bandwidth, nss: u8, sgi: bool) -> u64 {
    let (Some(dbps), Some(n_es)) = (data_bits_per_symbol(mcs_index, bw, nss), num_bcc_encoders(mcs_index, bw, nss))
    else {
        panic!("VHT MCS {mcs_index} at {} MHz with {nss} streams is not a valid combination", bw.mhz());
    };
    let n_sym = data_symbols(psdu_bytes, dbps, n_es);
    preamble_duration_ns(nss) + data_duration_ns(n_sym, sgi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/facts.md formula in floating point, independent of the integer code.
    fn formula_bps(m: &VhtMcs, bw: Bandwidth, nss: u8, sgi: bool) -> f64 {
        let sd = match bw {
            Bandwidth::Mhz20 => 52.0,
            Bandwidth::Mhz40 => 108.0,
            Bandwidth::Mhz80 => 234.0,
            Bandwidth::Mhz160 => 468.0,
        };
        let bits = match m.modulation {
            Bpsk => 1.0,
            Qpsk => 2.0,
            Qam16 => 4.0,
            Qam64 => 6.0,
            Qam256 => 8.0,
        };
        let sym_s = if sgi { 3.6e-6 } else { 4.0e-6 };
        sd * bits * m.code_rate.as_f64() * nss as f64 / sym_s
    }

    #[test]
    fn every_rate_matches_the_formula() {
        let mut checked = 0;
        for m in all_mcs() {
            for bw in Bandwidth::ALL {
                for nss in 1..=MAX_SPATIAL_STREAMS {
                    for sgi in [false, true] {
                        match rate_bps(m.index, bw, nss, sgi) {
                            Some(got) => {
                                let want = formula_bps(m, bw, nss, sgi);
                                assert!(
                                    (got as f64 - want).abs() <= 0.5,
                                    "MCS {} {bw:?} {nss}SS: {got} vs {want}",
                                    m.index
                                );
                                checked += 1;
                            }
                            None => assert!(!is_valid(m.index, bw, nss)),
                        }
                    }
                }
            }
        }
        // 10 MCS x 4 widths x 4 stream counts, less the 5 invalid ones, x 2 GIs.
        assert_eq!(checked, (10 * 4 * 4 - 5) * 2);
    }

    /// Published 802.11ac rates in Mbit/s to 0.1 (802.11ac-2013 22.5 tables; docs/facts.md).
    #[test]
    fn published_rates() {
        let mbps = |i, bw, nss, sgi| (rate_bps(i, bw, nss, sgi).unwrap() as f64 / 1e5).round() / 10.0;
        assert_eq!(mbps(9, Bandwidth::Mhz80, 2, true), 866.7);
        assert_eq!(mbps(8, Bandwidth::Mhz20, 1, false), 78.0);
        assert_eq!(mbps(9, Bandwidth::Mhz40, 1, true), 200.0);
        assert_eq!(mbps(9, Bandwidth::Mhz40, 2, true), 400.0);
        assert_eq!(mbps(9, Bandwidth::Mhz80, 1, false), 390.0);
        assert_eq!(mbps(9, Bandwidth::Mhz80, 1, true), 433.3);
        assert_eq!(mbps(9, Bandwidth::Mhz80, 3, true), 1300.0);
        assert_eq!(mbps(9, Bandwidth::Mhz160, 2, true), 1733.3);
        assert_eq!(mbps(0, Bandwidth::Mhz20, 1, false), 6.5);
        assert_eq!(mbps(9, Bandwidth::Mhz20, 3, false), 260.0);
        assert_eq!(mbps(7, Bandwidth::Mhz80, 1, false), 292.5);
    }

    #[test]
    fn invalid_combinations_are_none() {
        for nss in [1, 2, 4] {
            assert_eq!(rate_bps(9, Bandwidth::Mhz20, nss, true), None);
        }
        assert!(rate_bps(9, Bandwidth::Mhz20, 3, true).is_some());
        assert_eq!(rate_bps(6, Bandwidth::Mhz80, 3, false), None);
        assert_eq!(rate_bps(9, Bandwidth::Mhz160, 3, false), None);
        assert_eq!(rate_bps(10, Bandwidth::Mhz80, 1, false), None);
        assert_eq!(rate_bps(0, Bandwidth::Mhz80, 0, false), None);
        assert_eq!(rate_bps(0, Bandwidth::Mhz80, 5, false), None);
        assert_eq!(num_bcc_encoders(9, Bandwidth::Mhz20, 1), None);
    }

    /// The invalid list agrees with the BCC rule behind it: a combination is valid when
    /// N_DBPS is an integer and both N_DBPS and N_CBPS split evenly over the N_ES encoders
    /// (N_ES from the 540 Mbit/s rule, or the tabulated exception).
    #[test]
    fn validity_matches_the_encoder_divisibility_rule() {
        for m in all_mcs() {
            for bw in Bandwidth::ALL {
                for nss in 1..=MAX_SPATIAL_STREAMS {
                    let cbps = bw.data_subcarriers() * m.modulation.bits_per_subcarrier() * nss as u32;
                    let r = m.code_rate;
                    let integer = (cbps * r.num as u32).is_multiple_of(r.den as u32);
                    let dbps = cbps * r.num as u32 / r.den as u32;
                    let n_es = num_bcc_encoders(m.index, bw, nss).unwrap_or(dbps.div_ceil(2160));
                    let rule = integer && dbps.is_multiple_of(n_es) && cbps.is_multiple_of(n_es);
                    assert_eq!(rule, is_valid(m.index, bw, nss), "MCS {} {bw:?} {nss}SS", m.index);
                }
            }
        }
    }

    /// N_ES against the values ns-3 lists for up to 4 streams (wifi-phy.cc, 2019).
    #[test]
    fn encoder_counts() {
        assert_eq!(num_bcc_encoders(9, Bandwidth::Mhz80, 1), Some(1));
        assert_eq!(num_bcc_encoders(6, Bandwidth::Mhz80, 2), Some(1));
        assert_eq!(num_bcc_encoders(7, Bandwidth::Mhz80, 2), Some(2));
        assert_eq!(num_bcc_encoders(9, Bandwidth::Mhz80, 3), Some(3));
        assert_eq!(num_bcc_encoders(4, Bandwidth::Mhz80, 4), Some(2));
        assert_eq!(num_bcc_encoders(7, Bandwidth::Mhz80, 4), Some(3));
        assert_eq!(num_bcc_encoders(7, Bandwidth::Mhz160, 1), Some(2));
        assert_eq!(num_bcc_encoders(7, Bandwidth::Mhz160, 2), Some(3));
        assert_eq!(num_bcc_encoders(5, Bandwidth::Mhz160, 4), Some(4));
        assert_eq!(num_bcc_encoders(7, Bandwidth::Mhz160, 4), Some(6));
    }

    #[test]
    fn sensitivities() {
        let s20: Vec<i8> = (0..10).map(|i| sensitivity_dbm(i, Bandwidth::Mhz20).unwrap()).collect();
        assert_eq!(s20, vec![-82, -79, -77, -74, -70, -66, -65, -64, -59, -57]);
        assert_eq!(sensitivity_dbm(0, Bandwidth::Mhz40), Some(-79));
        assert_eq!(sensitivity_dbm(0, Bandwidth::Mhz80), Some(-76));
        assert_eq!(sensitivity_dbm(0, Bandwidth::Mhz160), Some(-73));
        assert_eq!(sensitivity_dbm(9, Bandwidth::Mhz80), Some(-51));
        assert_eq!(sensitivity_dbm(9, Bandwidth::Mhz160), Some(-48));
        assert_eq!(sensitivity_dbm(10, Bandwidth::Mhz20), None);
    }

    #[test]
    fn highest_mcs_skips_invalid_and_follows_sensitivity() {
        assert_eq!(highest_mcs_at(-30.0, Bandwidth::Mhz20, 1, 9), Some(8));
        assert_eq!(highest_mcs_at(-30.0, Bandwidth::Mhz20, 3, 9), Some(9));
        assert_eq!(highest_mcs_at(-30.0, Bandwidth::Mhz80, 2, 9), Some(9));
        assert_eq!(highest_mcs_at(-30.0, Bandwidth::Mhz80, 2, 7), Some(7));
        assert_eq!(highest_mcs_at(-58.0, Bandwidth::Mhz80, 2, 9), Some(7));
        // 80 MHz, 3 streams: MCS 6 does not exist; at -59 dBm MCS 5 (-60) is the best.
        assert_eq!(highest_mcs_at(-59.0, Bandwidth::Mhz80, 3, 9), Some(5));
        assert_eq!(highest_mcs_at(-77.0, Bandwidth::Mhz80, 1, 9), None);
    }

    #[test]
    fn preamble_and_interframe_spaces() {
        assert_eq!(preamble_duration_ns(1), 40_000);
        assert_eq!(preamble_duration_ns(2), 44_000);
        assert_eq!(preamble_duration_ns(3), 52_000);
        assert_eq!(DIFS_NS, 34_000);
        assert_eq!(AIFS_BE_NS, 43_000);
    }

    /// Hand-computed points.
    #[test]
    fn ppdu_duration_hand_computed() {
        // 1500 B, 80 MHz, 1 SS, MCS 9: N_DBPS = 234 x 8 x 5/6 = 1560, N_ES = 1,
        // N_SYM = ceil(12022 / 1560) = ceil(7.71) = 8 -> 32 us (short GI: 4 x ceil(7.2) = 32).
        assert_eq!(vht_ppdu_duration_ns(1500, 9, Bandwidth::Mhz80, 1, false), 72_000);
        assert_eq!(vht_ppdu_duration_ns(1500, 9, Bandwidth::Mhz80, 1, true), 72_000);
        // 65535 B, 80 MHz, 2 SS, MCS 9, short GI: N_DBPS = 3120, N_ES = 2,
        // N_SYM = ceil((524280 + 16 + 12) / 3120) = ceil(168.05) = 169,
        // data = 4 x ceil(0.9 x 169 = 152.1) = 612 us; preamble 44 us.
        assert_eq!(vht_ppdu_duration_ns(65_535, 9, Bandwidth::Mhz80, 2, true), 656_000);
        // Same, long GI: 169 x 4 = 676 us.
        assert_eq!(vht_ppdu_duration_ns(65_535, 9, Bandwidth::Mhz80, 2, false), 720_000);
        // 100 B, 20 MHz, MCS 0: N_DBPS = 26, ceil((800 + 22) / 26) = 32 symbols = 128 us.
        assert_eq!(vht_ppdu_duration_ns(100, 0, Bandwidth::Mhz20, 1, false), 168_000);
    }

    #[test]
    fn long_ppdus_approach_the_phy_rate() {
        let bytes = MAX_AMPDU_BYTES;
        let d = vht_ppdu_duration_ns(bytes, 9, Bandwidth::Mhz80, 2, true);
        let eff = bytes as f64 * 8.0 / (d as f64 * 1e-9);
        let rate = rate_bps(9, Bandwidth::Mhz80, 2, true).unwrap() as f64;
        assert!(eff < rate && eff > 0.99 * rate, "{eff} vs {rate}");
        // ... but a full 1 MiB A-MPDU at 866.7 Mbit/s (9.7 ms) overruns aPPDUMaxTime: a MAC
        // model has to cap aggregates by airtime, not only by MAX_AMPDU_BYTES.
        assert!(d > PPDU_MAX_TIME_NS);
    }

    #[test]
    #[should_panic(expected = "not a valid combination")]
    fn duration_of_an_invalid_combination_panics() {
        vht_ppdu_duration_ns(1500, 9, Bandwidth::Mhz20, 1, false);
    }
}
