//! 802.11ad DMG PHY (IEEE 802.11ad-2012, clause 21): Control MCS 0, single-carrier (SC)
//! MCS 1-12, OFDM MCS 13-24. Rates, receiver sensitivities, PPDU timing.
//!
//! Rates (docs/facts.md "802.11ad (DMG) PHY"; 802.11ad-2012 Table 21-18; ns-3 wigig-module
//! src/wifi/model/wifi-phy.cc GetDMG_MCS*):
//! - Control: 1760 Mchip/s / 32 (Ga32 spreading) x 1 bit (DBPSK) x 1/2 = 27.5 Mbit/s.
//! - SC: 1760 Mchip/s x 448/512 (data symbols per 512-chip block, the rest is the 64-chip
//!   guard interval) x bits/symbol x code rate / repetition.
//! - OFDM: 336 data subcarriers x bits/subcarrier x code rate / 0.2424 us symbol
//!   (640 samples at 2640 Msample/s: 512 DFT + 128 guard).
//!
//! Commodity devices (wil6210, Qualcomm) implement Control + SC only (docs/facts.md: "Commodity
//! devices use SC only"); OFDM is optional and was never shipped (Keysight's 802.11ad concepts
//! page: "no commercial implementation"), kept for completeness.

pub use super::ht::CodeRate;

/// Which DMG PHY an MCS belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DmgPhy {
    Control,
    SingleCarrier,
    Ofdm,
}

/// DMG modulations (802.11ad-2012 clause 21: Control 21.4, OFDM 21.5, SC 21.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DmgModulation {
    /// Control PHY: differential BPSK, spread by Ga32.
    Dbpsk,
    Pi2Bpsk,
    Pi2Qpsk,
    Pi2Qam16,
    /// OFDM spread QPSK: QPSK on pairs of subcarriers, one data bit per subcarrier.
    Sqpsk,
    Qpsk,
    Qam16,
    Qam64,
}

impl DmgModulation {
    /// Coded bits per symbol (SC) or per data subcarrier (OFDM; N_CBPS / 336).
    pub const fn bits_per_symbol(self) -> u32 {
        match self {
            DmgModulation::Dbpsk | DmgModulation::Pi2Bpsk | DmgModulation::Sqpsk => 1,
            DmgModulation::Pi2Qpsk | DmgModulation::Qpsk => 2,
            DmgModulation::Pi2Qam16 | DmgModulation::Qam16 => 4,
            DmgModulation::Qam64 => 6,
        }
    }
}

/// One DMG MCS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmgMcs {
    pub index: u8,
    pub phy: DmgPhy,
    pub modulation: DmgModulation,
    /// LDPC code rate (the Control PHY's is the effective 1/2 of its shortened 3/4 code).
    pub code_rate: CodeRate,
    /// Repetition factor rho: 2 for SC MCS 1, else 1.
    pub repetition: u8,
    pub rate_bps: u64,
    /// Minimum receiver sensitivity (PER < 1 % at a 4096-octet PSDU, 802.11ad-2012 Table 21-3).
    pub sensitivity_dbm: Option<i8>,
}

impl DmgMcs {
    /// PSDU bits one 672-bit LDPC codeword carries: 672 x R / rho (SC 21.6.3.2.3.3,
    /// OFDM 21.5.3.2.3.3). 168 for MCS 1, 336 for rate 1/2, 420 for 5/8, 504 for 3/4,
    /// 546 for 13/16. Not meaningful for the Control PHY (see `control_ppdu_duration_ns`).
    pub const fn data_bits_per_codeword(&self) -> u64 {
        LDPC_CODEWORD_BITS * self.code_rate.num as u64 / (self.code_rate.den as u64 * self.repetition as u64)
    }
}

#[allow(clippy::too_many_arguments)]
const fn m(
    index: u8,
    phy: DmgPhy,
    modulation: DmgModulation,
    num: u8,
    den: u8,
    repetition: u8,
    rate_bps: u64,
    sensitivity_dbm: Option<i8>,
) -> DmgMcs {
    DmgMcs { index, phy, modulation, code_rate: CodeRate::new(num, den), repetition, rate_bps, sensitivity_dbm }
}

use DmgModulation::{Dbpsk, Pi2Bpsk, Pi2Qam16, Pi2Qpsk, Qam16, Qam64, Qpsk, Sqpsk};
use DmgPhy::{Control, Ofdm, SingleCarrier as Sc};

/// MCS 0-24. Rates: 802.11ad-2012 Table 21-18 (SC) and the OFDM MCS table of 21.5, docs/facts.md,
/// ns-3 wigig-module wifi-phy.cc GetDMG_MCS0-24; each is re-derived from the formula in the tests.
///
/// Sensitivities: MCS 0-12 from docs/facts.md (802.11ad-2012 Table 21-3; MCS 5-8 are the least
/// certain there, treat them as configurable). OFDM MCS 13-24 (-66 ... -47 dBm) are
/// 802.11ad-2012 Table 21-3 as reproduced by two secondary sources found with the search
/// tool, not by the standard's text itself: the same twelve values in an ns-3 60 GHz
/// "flyways" simulation script (`mcsLimits_OFDM[]`), and the ordering of Table 1 of
/// "60 GHz Modular Antenna Array Link Budget Estimation with WiGig Baseband ..." (Int. J.
/// Antennas Propag. 2017, "regenerated from Table 21-3"), which ranks MCS 13 with MCS 2,
/// MCS 14 with MCS 4, MCS 15 with MCS 6, MCS 16 with MCS 5/7, MCS 20 with MCS 11 and MCS 21
/// with MCS 12.
pub static DMG_MCS: [DmgMcs; 25] = [
    m(0, Control, Dbpsk, 1, 2, 1, 27_500_000, Some(-78)),
    m(1, Sc, Pi2Bpsk, 1, 2, 2, 385_000_000, Some(-68)),
    m(2, Sc, Pi2Bpsk, 1, 2, 1, 770_000_000, Some(-66)),
    m(3, Sc, Pi2Bpsk, 5, 8, 1, 962_500_000, Some(-65)),
    m(4, Sc, Pi2Bpsk, 3, 4, 1, 1_155_000_000, Some(-64)),
    m(5, Sc, Pi2Bpsk, 13, 16, 1, 1_251_250_000, Some(-62)),
    m(6, Sc, Pi2Qpsk, 1, 2, 1, 1_540_000_000, Some(-63)),
    m(7, Sc, Pi2Qpsk, 5, 8, 1, 1_925_000_000, Some(-62)),
    m(8, Sc, Pi2Qpsk, 3, 4, 1, 2_310_000_000, Some(-61)),
    m(9, Sc, Pi2Qpsk, 13, 16, 1, 2_502_500_000, Some(-59)),
    m(10, Sc, Pi2Qam16, 1, 2, 1, 3_080_000_000, Some(-55)),
    m(11, Sc, Pi2Qam16, 5, 8, 1, 3_850_000_000, Some(-54)),
    m(12, Sc, Pi2Qam16, 3, 4, 1, 4_620_000_000, Some(-53)),
    m(13, Ofdm, Sqpsk, 1, 2, 1, 693_000_000, Some(-66)),
    m(14, Ofdm, Sqpsk, 5, 8, 1, 866_250_000, Some(-64)),
    m(15, Ofdm, Qpsk, 1, 2, 1, 1_386_000_000, Some(-63)),
    m(16, Ofdm, Qpsk, 5, 8, 1, 1_732_500_000, Some(-62)),
    m(17, Ofdm, Qpsk, 3, 4, 1, 2_079_000_000, Some(-60)),
    m(18, Ofdm, Qam16, 1, 2, 1, 2_772_000_000, Some(-58)),
    m(19, Ofdm, Qam16, 5, 8, 1, 3_465_000_000, Some(-56)),
    m(20, Ofdm, Qam16, 3, 4, 1, 4_158_000_000, Some(-54)),
    m(21, Ofdm, Qam16, 13, 16, 1, 4_504_500_000, Some(-53)),
    m(22, Ofdm, Qam64, 5, 8, 1, 5_197_500_000, Some(-51)),
    m(23, Ofdm, Qam64, 3, 4, 1, 6_237_000_000, Some(-49)),
    m(24, Ofdm, Qam64, 13, 16, 1, 6_756_750_000, Some(-47)),
];

/// MCS `index` (0-24), or None.
pub fn mcs(index: u8) -> Option<&'static DmgMcs> {
    DMG_MCS.get(index as usize)
}

/// All of MCS 0-24.
pub fn all_mcs() -> &'static [DmgMcs] {
    &DMG_MCS
}

/// SC MCS 1-12, the ones commodity devices use.
pub fn sc_mcs() -> &'static [DmgMcs] {
    &DMG_MCS[1..=12]
}

/// OFDM MCS 13-24.
pub fn ofdm_mcs() -> &'static [DmgMcs] {
    &DMG_MCS[13..=24]
}

/// The fastest MCS with index at most `max_mcs` whose minimum sensitivity is met at
/// `rssi_dbm`; None when not even MCS 0's (-78 dBm) is. With `max_mcs` <= 12 this is the SC
/// choice; above, OFDM MCS compete on rate (not index: OFDM MCS 13 is slower than SC MCS 2).
/// Sensitivity is not monotone in the index (MCS 5 needs -62, MCS 6 -63 dBm), so this is the
/// fastest qualifying MCS, not the first failing one minus one.
pub fn highest_mcs_at(rssi_dbm: f64, max_mcs: u8) -> Option<u8> {
    DMG_MCS
        .iter()
        .filter(|m| m.index <= max_mcs)
        .filter(|m| m.sensitivity_dbm.is_some_and(|s| s as f64 <= rssi_dbm))
        .max_by_key(|m| m.rate_bps)
        .map(|m| m.index)
}

// ---- PHY constants ----------------------------------------------------------------------

/// SC / Control chip rate, 1/Tc (802.11ad-2012 Table 21-4: Tc = 0.57 ns).
pub const SC_CHIP_RATE_HZ: u64 = 1_760_000_000;
/// OFDM sample rate, 1/Ts (802.11ad-2012 Table 21-4: Ts = 0.38 ns = 2/3 Tc).
pub const OFDM_SAMPLE_RATE_HZ: u64 = 2_640_000_000;
/// LDPC codeword length L_CW (802.11ad-2012 21.6.3.2.3; ns-3 wigig wifi-phy.cc "Lcw = 672").
pub const LDPC_CODEWORD_BITS: u64 = 672;
/// SC block: 448 data symbols + 64-chip guard interval = 512 chips (802.11ad-2012
/// Table 21-4 T_Data = (N_BLKS x 512 + 64) x Tc).
pub const SC_BLOCK_CHIPS: u64 = 512;
pub const SC_GI_CHIPS: u64 = 64;
pub const SC_DATA_SYMBOLS_PER_BLOCK: u64 = 448;
/// Control PHY spreading factor (Ga32, 802.11ad-2012 21.4.3.3; ns-3 wigig wifi-phy.cc
/// "Chips = DencodedSymmbols * 32").
pub const CONTROL_SPREADING_FACTOR: u64 = 32;
/// OFDM data subcarriers N_SD (802.11ad-2012 Table 21-4).
pub const OFDM_DATA_SUBCARRIERS: u64 = 336;
/// OFDM symbol: 512-sample DFT + 128-sample guard interval = 640 Ts = 242.4 ns
/// (802.11ad-2012 Table 21-4, T_SYM = 0.242 us).
pub const OFDM_SYMBOL_SAMPLES: u64 = 640;

/// SC short training field: 16 x Ga128 + (-Ga128) = 2176 chips (802.11ad-2012 21.3.6, SC
/// preamble; with CE it makes ns-3 wigig's "SC Preamble = 3328 Samples").
pub const SC_STF_CHIPS: u64 = 2176;
/// Channel estimation field: Gu512 + Gv512 + Gv128 = 1152 chips (802.11ad-2012 21.3.6; ns-3
/// wigig wifi-phy.cc "CTRL Preamble = (6400 + 1152) Samples").
pub const CE_CHIPS: u64 = 1152;
/// SC header: two 512-chip blocks (448 symbols + GI each) = 1024 chips
/// (802.11ad-2012 Table 21-4, T_HEADER = 0.582 us).
pub const SC_HEADER_CHIPS: u64 = 1024;
/// Control STF: 48 x Gb128 + (-Gb128) + (-Ga128) = 6400 chips (802.11ad-2012 21.4.3.1;
/// ns-3 wigig wifi-phy.cc "CTRL Preamble = (6400 + 1152) Samples").
pub const CONTROL_STF_CHIPS: u64 = 6400;
/// Control header together with the first 6 PSDU octets: 40 header + 48 data bits, LDPC
/// (672, 504) shortened to 88 + 168 parity = 256 coded bits, x 32 chips = 8192 chips = 4.654 us
/// (802.11ad-2012 21.4.3.3.3; ns-3 wigig wifi-phy.cc "From Annex L (L.5.2.5) 4654 ns").
pub const CONTROL_HEADER_CHIPS: u64 = 8192;
/// Octets of the PSDU carried in the Control header's codeword (see above).
pub const CONTROL_HEADER_PSDU_BYTES: u32 = 6;
/// PSDU bits per Control-PHY data codeword after the first (LDPC (672, 504) shortened to
/// 168 data bits + 168 parity, effective rate 1/2; ns-3 wigig wifi-phy.cc).
pub const CONTROL_BITS_PER_CODEWORD: u64 = 168;

/// SC preamble, STF + CE = 3328 chips = 1.891 us (ns-3 wigig wifi-phy.cc: 1891 ns). Rounded
/// to whole ns for display; PPDU durations are computed in chips and rounded once.
pub const SC_PREAMBLE_DURATION_NS: u64 = 1_891;
/// SC header, 1024 chips = 0.582 us (802.11ad-2012 Table 21-4; ns-3: 582 ns).
pub const SC_HEADER_DURATION_NS: u64 = 582;
/// Control preamble, STF + CE = 7552 chips = 4.291 us (ns-3 wigig wifi-phy.cc: 4291 ns).
pub const CONTROL_PREAMBLE_DURATION_NS: u64 = 4_291;
/// Control header (+ first 6 PSDU octets), 8192 chips = 4654.5 ns (ns-3 truncates to 4654).
pub const CONTROL_HEADER_DURATION_NS: u64 = 4_655;
/// OFDM header: one OFDM symbol, 640 Ts = 242.4 ns (802.11ad-2012 Table 21-4: 0.242 us).
pub const OFDM_HEADER_DURATION_NS: u64 = 242;

/// aSIFSTime (802.11ad-2012 Table 21-31; ns-3 wigig wifi-mac-ad.cc).
pub const SIFS_NS: u64 = 3_000;
/// aSlotTime (802.11ad-2012 Table 21-31; ns-3 wigig wifi-mac-ad.cc).
pub const SLOT_NS: u64 = 5_000;
/// aRIFSTime (802.11ad-2012 Table 21-31; ns-3 wigig wifi-mac-ad.cc).
pub const RIFS_NS: u64 = 1_000;
/// PIFS = SIFS + slot (802.11-2012 9.3.2.3; ns-3 wigig wifi-mac-ad.cc).
pub const PIFS_NS: u64 = SIFS_NS + SLOT_NS;
/// DIFS = SIFS + 2 slots = 13 us (802.11-2012 9.3.2.3).
pub const DIFS_NS: u64 = SIFS_NS + 2 * SLOT_NS;
/// aPPDUMaxTime = 2 ms (802.11ad-2012 Table 21-31; NIST 802.11ay toolbox "aPPDUMaxTime = 2e3
/// ... Table 21-31").
pub const PPDU_MAX_TIME_NS: u64 = 2_000_000;

// ----- The beacon header interval (802.11ad 10.37 / Table 8-183c defaults) -----
// Every beacon interval starts with a BHI in which no data flows: the BTI (the AP sweeps a DMG
// Beacon through its sectors), the A-BFT (stations answer with sector sweeps), the ATI (not
// used here). The data transfer interval gets the rest.

/// Beacon interval: 100 TU = 102.4 ms (the common dot11BeaconPeriod).
pub const BEACON_INTERVAL_NS: u64 = 102_400_000;
/// Sectors swept in the BTI and per A-BFT responder sweep: 32, as in docs/facts.md's "full SLS with
/// 32 + 32 sectors".
pub const BHI_SECTORS: u64 = 32;
/// A minimal DMG Beacon: frame control 2, duration 2, BSSID 6, timestamp 8, SSW 3, beacon
/// interval 2, beacon interval control 6, DMG parameters 1, FCS 4 = 34 octets (802.11ad 8.3.4.1).
pub const DMG_BEACON_BYTES: u32 = 34;
/// Sector Sweep frame 26 octets, SSW-Feedback 28 octets (802.11ad 8.3.1.16-17).
pub const SSW_BYTES: u32 = 26;
pub const SSW_FEEDBACK_BYTES: u32 = 28;
/// A-BFT: 8 slots (A-BFT Length default) of up to 16 SSW frames (FSS default 16).
pub const ABFT_SLOTS: u64 = 8;
pub const ABFT_FSS: u64 = 16;
/// SBIFS 1 us between the frames of a sweep, MBIFS = 3 SIFS between the BHI's parts.
pub const SBIFS_NS: u64 = 1_000;
pub const MBIFS_NS: u64 = 3 * SIFS_NS;

/// Airtime of the beacon header interval: BTI + A-BFT (+ the MBIFS gaps), ns.
pub fn beacon_header_ns() -> u64 {
    let bti = BHI_SECTORS * (control_ppdu_duration_ns(DMG_BEACON_BYTES) + SBIFS_NS);
    let slot = ABFT_FSS.min(BHI_SECTORS) * (control_ppdu_duration_ns(SSW_BYTES) + SBIFS_NS)
        + MBIFS_NS
        + control_ppdu_duration_ns(SSW_FEEDBACK_BYTES);
    bti + MBIFS_NS + ABFT_SLOTS * slot + MBIFS_NS
}

/// Maximum MSDU (docs/facts.md; the Linux wil6210 MTU is 7912).
pub const MAX_MSDU_BYTES: u32 = 7_920;
/// Maximum A-MSDU (docs/facts.md).
pub const MAX_AMSDU_BYTES: u32 = 7_935;
/// Maximum A-MPDU: 2^(13 + 5) - 1 octets, the DMG Maximum A-MPDU Length Exponent 5 (docs/facts.md).
pub const MAX_AMPDU_BYTES: u32 = 262_143;
/// Control PHY PSDU length limits (802.11ad-2012 21.4.3.3; NIST toolbox "PSDULength between 14
/// and 1023 ... for control PHY").
pub const CONTROL_MIN_PSDU_BYTES: u32 = 14;
pub const CONTROL_MAX_PSDU_BYTES: u32 = 1023;

/// Chips (Tc = 1/1760 MHz = 25/44 ns) to ns, rounded up.
pub const fn chips_to_ns_ceil(chips: u64) -> u64 {
    (chips * 25).div_ceil(44)
}

/// OFDM samples (Ts = 1/2640 MHz = 25/66 ns) to ns, rounded up.
pub const fn ofdm_samples_to_ns_ceil(samples: u64) -> u64 {
    (samples * 25).div_ceil(66)
}

fn require(mcs_index: u8, phy: DmgPhy) -> &'static DmgMcs {
    match mcs(mcs_index) {
        Some(m) if m.phy == phy => m,
        _ => panic!("DMG MCS {mcs_index} is not a {phy:?} MCS"),
    }
}

/// LDPC codewords of an SC or OFDM PSDU: N_CW = ceil(8 L / (L_CW x R / rho))
/// (802.11ad-2012 21.6.3.2.3.3 SC, 21.5.3.2.3.3 OFDM; NIST toolbox edmgSCEncodingInfo).
pub fn codewords(psdu_bytes: u32, mcs_index: u8) -> u64 {
    let m = mcs(mcs_index).unwrap_or_else(|| panic!("DMG MCS {mcs_index} does not exist (0-24)"));
    assert!(m.phy != DmgPhy::Control, "the Control PHY's codewords are counted in control_ppdu_duration_ns");
    (8 * psdu_bytes as u64).div_ceil(m.data_bits_per_codeword())
}

/// SC symbol blocks: N_BLKS = ceil(N_CW x L_CW / N_CBPB), N_CBPB = 448 x bits per symbol
/// (802.11ad-2012 21.6.3.2.3.3; NIST toolbox edmgSCEncodingInfo; ns-3 wigig wifi-phy.cc).
///
/// # Panics
/// If `mcs` is not an SC MCS (1-12).
pub fn sc_blocks(psdu_bytes: u32, mcs_index: u8) -> u64 {
    let m = require(mcs_index, DmgPhy::SingleCarrier);
    let cbpb = SC_DATA_SYMBOLS_PER_BLOCK * m.modulation.bits_per_symbol() as u64;
    (codewords(psdu_bytes, mcs_index) * LDPC_CODEWORD_BITS).div_ceil(cbpb)
}

/// Airtime of an SC PPDU carrying `psdu_bytes` (an MPDU or A-MPDU) at SC MCS `mcs` (1-12):
/// STF + CE + header + N_BLKS x 512 chips + the final 64-chip guard interval
/// (802.11ad-2012 Table 21-4: T_Data = (N_BLKS x 512 + 64) x Tc), rounded up to a whole ns.
/// No TRN (beam-refinement) field.
///
/// # Panics
/// If `mcs` is not 1-12.
pub fn sc_ppdu_duration_ns(psdu_bytes: u32, mcs: u8) -> u64 {
    let blocks = sc_blocks(psdu_bytes, mcs);
    let chips = SC_STF_CHIPS + CE_CHIPS + SC_HEADER_CHIPS + blocks * SC_BLOCK_CHIPS + SC_GI_CHIPS;
    chips_to_ns_ceil(chips)
}

/// Airtime of an OFDM PPDU at MCS 13-24: preamble (3328 chips = 4992 Ts) + one header symbol +
/// N_SYM symbols, N_SYM = ceil(N_CW x 672 / N_CBPS), N_CBPS = 336 x bits per subcarrier
/// (802.11ad-2012 21.5.3.2.3.3, Table 21-4; ns-3 wigig wifi-phy.cc), rounded up to a whole ns.
///
/// # Panics
/// If `mcs` is not 13-24.
pub fn ofdm_ppdu_duration_ns(psdu_bytes: u32, mcs: u8) -> u64 {
    let m = require(mcs, DmgPhy::Ofdm);
    let cbps = OFDM_DATA_SUBCARRIERS * m.modulation.bits_per_symbol() as u64;
    let symbols = (codewords(psdu_bytes, mcs) * LDPC_CODEWORD_BITS).div_ceil(cbps);
    // The preamble is sent at the SC chip rate: 3328 Tc = 4992 Ts.
    let preamble_samples = (SC_STF_CHIPS + CE_CHIPS) * 3 / 2;
    ofdm_samples_to_ns_ceil(preamble_samples + OFDM_SYMBOL_SAMPLES + symbols * OFDM_SYMBOL_SAMPLES)
}

/// Airtime of a Control-PHY PPDU (MCS 0; DMG beacons, sector sweeps, RTS/CTS): STF + CE +
/// header codeword (with the first 6 PSDU octets) + the remaining 8 (L - 6) bits in
/// codewords of at most 168 bits, each with 168 parity bits, one DBPSK symbol per coded bit,
/// 32 chips per symbol. This is the count ns-3 wigig wifi-phy.cc makes (802.11ad-2012
/// 21.4.3.3.3); its per-codeword split sums to 168 x N_CW + 8 (L - 6) coded bits.
///
/// # Panics
/// If `psdu_bytes` is outside 14-1023.
pub fn control_ppdu_duration_ns(psdu_bytes: u32) -> u64 {
    assert!(
        (CONTROL_MIN_PSDU_BYTES..=CONTROL_MAX_PSDU_BYTES).contains(&psdu_bytes),
        "Control PHY PSDU must be 14-1023 octets, got {psdu_bytes}"
    );
    let data_bits = 8 * (psdu_bytes - CONTROL_HEADER_PSDU_BYTES) as u64;
    let codewords = data_bits.div_ceil(CONTROL_BITS_PER_CODEWORD);
    let coded_bits = codewords * CONTROL_BITS_PER_CODEWORD + data_bits;
    let chips = CONTROL_STF_CHIPS + CE_CHIPS + CONTROL_HEADER_CHIPS + coded_bits * CONTROL_SPREADING_FACTOR;
    chips_to_ns_ceil(chips)
}

/// PPDU airtime for any MCS 0-24; None for an MCS that does not exist or a Control PSDU
/// outside 14-1023 octets.
pub fn ppdu_duration_ns(psdu_bytes: u32, mcs_index: u8) -> Option<u64> {
    match mcs(mcs_index)?.phy {
        DmgPhy::Control => (CONTROL_MIN_PSDU_BYTES..=CONTROL_MAX_PSDU_BYTES)
            .contains(&psdu_bytes)
            .then(|| control_ppdu_duration_ns(psdu_bytes)),
        DmgPhy::SingleCarrier => Some(sc_ppdu_duration_ns(psdu_bytes, mcs_index)),
        DmgPhy::Ofdm => Some(ofdm_ppdu_duration_ns(psdu_bytes, mcs_index)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rate from the formulas in docs/facts.md, in exact integer arithmetic (asserting that
    /// every division is exact).
    fn formula_rate_bps(m: &DmgMcs) -> u64 {
        let bits = match m.modulation {
            Dbpsk | Pi2Bpsk | Sqpsk => 1u64,
            Pi2Qpsk | Qpsk => 2,
            Pi2Qam16 | Qam16 => 4,
            Qam64 => 6,
        };
        let (num, den) = (m.code_rate.num as u64, m.code_rate.den as u64);
        let exact = |n: u64, d: u64| {
            assert_eq!(n % d, 0, "MCS {}: {n}/{d} is not an integer rate", m.index);
            n / d
        };
        match m.phy {
            // 1760 Mchip/s / 32 chips per symbol x 1 bit x 1/2.
            DmgPhy::Control => exact(1_760_000_000 * bits * num, 32 * den),
            // 1760 Mchip/s x 448/512 x bits x R / repetition.
            DmgPhy::SingleCarrier => exact(1_760_000_000 * 448 * bits * num, 512 * den * m.repetition as u64),
            // 336 subcarriers x bits x R / (640 / 2640 MHz).
            DmgPhy::Ofdm => exact(336 * bits * num * 2_640_000_000, den * 640),
        }
    }

    #[test]
    fn every_rate_matches_the_formula() {
        for m in all_mcs() {
            assert_eq!(m.rate_bps, formula_rate_bps(m), "MCS {}", m.index);
        }
    }

    #[test]
    fn rates_as_facts_md_states_them() {
        let mbps: Vec<f64> = all_mcs().iter().map(|m| m.rate_bps as f64 / 1e6).collect();
        let facts = [
            27.5, 385.0, 770.0, 962.5, 1155.0, 1251.25, 1540.0, 1925.0, 2310.0, 2502.5, 3080.0, 3850.0, 4620.0, 693.0,
            866.25, 1386.0, 1732.5, 2079.0, 2772.0, 3465.0, 4158.0, 4504.5, 5197.5, 6237.0, 6756.75,
        ];
        assert_eq!(mbps, facts);
        // The OFDM symbol is 0.2424 us: MCS 24 = 336 x 6 x 13/16 / 0.242424 us = 6756.75 Mbit/s.
        let mcs24: f64 = 336.0 * 6.0 * 13.0 / 16.0 / (640.0 / 2640.0e6);
        assert!((mcs24 - 6_756_750_000.0).abs() < 1e-3);
    }

    #[test]
    fn table_structure() {
        for (i, m) in all_mcs().iter().enumerate() {
            assert_eq!(m.index as usize, i);
            let want = match i {
                0 => DmgPhy::Control,
                1..=12 => DmgPhy::SingleCarrier,
                _ => DmgPhy::Ofdm,
            };
            assert_eq!(m.phy, want);
        }
        assert_eq!(sc_mcs().len(), 12);
        assert_eq!(sc_mcs()[0].index, 1);
        assert_eq!(ofdm_mcs().first().map(|m| m.index), Some(13));
        assert!(mcs(25).is_none());
        // SC rates rise with the index; so do OFDM rates.
        assert!(sc_mcs().windows(2).all(|w| w[0].rate_bps < w[1].rate_bps));
        assert!(ofdm_mcs().windows(2).all(|w| w[0].rate_bps < w[1].rate_bps));
        // Only MCS 1 repeats.
        assert!(all_mcs().iter().all(|m| (m.repetition == 2) == (m.index == 1)));
    }

    #[test]
    fn sensitivities() {
        let sc: Vec<i8> = (0..=12).map(|i| mcs(i).unwrap().sensitivity_dbm.unwrap()).collect();
        assert_eq!(sc, vec![-78, -68, -66, -65, -64, -62, -63, -62, -61, -59, -55, -54, -53]);
        let ofdm: Vec<i8> = ofdm_mcs().iter().map(|m| m.sensitivity_dbm.unwrap()).collect();
        assert_eq!(ofdm, vec![-66, -64, -63, -62, -60, -58, -56, -54, -53, -51, -49, -47]);
    }

    #[test]
    fn highest_mcs_at_rssi() {
        assert_eq!(highest_mcs_at(-80.0, 12), None);
        assert_eq!(highest_mcs_at(-78.0, 12), Some(0));
        assert_eq!(highest_mcs_at(-68.0, 12), Some(1));
        assert_eq!(highest_mcs_at(-66.5, 12), Some(1));
        // -62.5 dBm: MCS 5 (-62) fails but MCS 6 (-63) passes.
        assert_eq!(highest_mcs_at(-62.5, 12), Some(6));
        assert_eq!(highest_mcs_at(-62.0, 12), Some(7));
        assert_eq!(highest_mcs_at(-53.0, 12), Some(12));
        assert_eq!(highest_mcs_at(-41.0, 12), Some(12));
        assert_eq!(highest_mcs_at(-41.0, 8), Some(8));
        // Seed 000's weakest working RSSI, -69 dBm, is below MCS 1's -68: Control only.
        assert_eq!(highest_mcs_at(-69.0, 12), Some(0));
        // With OFDM allowed the choice is by rate, not by index.
        assert_eq!(highest_mcs_at(-66.0, 24), Some(2));
        assert_eq!(highest_mcs_at(-40.0, 24), Some(24));
        assert_eq!(highest_mcs_at(-53.0, 24), Some(12));
    }

    #[test]
    fn header_and_preamble_durations_match_their_chip_counts() {
        assert_eq!(((SC_STF_CHIPS + CE_CHIPS) * 25 + 22) / 44, SC_PREAMBLE_DURATION_NS);
        assert_eq!((SC_HEADER_CHIPS * 25 + 22) / 44, SC_HEADER_DURATION_NS);
        assert_eq!(((CONTROL_STF_CHIPS + CE_CHIPS) * 25 + 22) / 44, CONTROL_PREAMBLE_DURATION_NS);
        assert_eq!(chips_to_ns_ceil(CONTROL_HEADER_CHIPS), CONTROL_HEADER_DURATION_NS);
        assert_eq!(OFDM_SYMBOL_SAMPLES * 25 / 66, OFDM_HEADER_DURATION_NS);
        // The 512-chip SC block carries 448 symbols: the 448/512 of the rate formula.
        assert_eq!(SC_BLOCK_CHIPS - SC_GI_CHIPS, SC_DATA_SYMBOLS_PER_BLOCK);
        assert_eq!(DIFS_NS, 13_000);
    }

    /// Hand-computed SC points.
    #[test]
    fn sc_ppdu_duration_hand_computed() {
        // 14 B (an ACK) at MCS 1: 112 bits / 168 per codeword -> 1 codeword; 672 / 448 -> 2
        // blocks; 2176 + 1152 + 1024 + 2 x 512 + 64 = 5440 chips = 3090.9 ns.
        assert_eq!(codewords(14, 1), 1);
        assert_eq!(sc_blocks(14, 1), 2);
        assert_eq!(sc_ppdu_duration_ns(14, 1), 3091);
        // 1500 B at MCS 8 (QPSK 3/4): 12000 / 504 -> 24 codewords; 24 x 672 / 896 -> 18
        // blocks; 4352 + 18 x 512 + 64 = 13632 chips = 7745.45 ns.
        assert_eq!(codewords(1500, 8), 24);
        assert_eq!(sc_blocks(1500, 8), 18);
        assert_eq!(sc_ppdu_duration_ns(1500, 8), 7746);
        // 7935 B at MCS 12 (16-QAM 3/4): 63480 / 504 -> 126 codewords; 84672 / 1792 = 47.25
        // -> 48 blocks; 4352 + 24576 + 64 = 28992 chips = 16472.7 ns.
        assert_eq!(sc_ppdu_duration_ns(7935, 12), 16_473);
        // 7935 B at MCS 5 (13/16): 63480 / 546 -> 117 codewords; 78624 / 448 = 175.5 -> 176
        // blocks; 4352 + 90112 + 64 = 94528 chips = 53709.1 ns.
        assert_eq!(sc_ppdu_duration_ns(7935, 5), 53_710);
    }

    #[test]
    fn long_sc_ppdus_approach_the_phy_rate_and_short_ones_do_not() {
        for m in sc_mcs() {
            let d = sc_ppdu_duration_ns(MAX_AMPDU_BYTES, m.index) as f64 * 1e-9;
            let eff = MAX_AMPDU_BYTES as f64 * 8.0 / d;
            let r = m.rate_bps as f64;
            assert!(eff < r && eff > 0.99 * r, "MCS {}: {eff} vs {r}", m.index);
        }
        // A 1500 B frame at MCS 12 spends 2473 ns on preamble + header and 2655 ns on its
        // 9 data blocks: barely half the PHY rate.
        let d = sc_ppdu_duration_ns(1500, 12) as f64 * 1e-9;
        assert!(1500.0 * 8.0 / d < 0.55 * 4.62e9);
    }

    /// aPPDUMaxTime binds low MCS: a full A-MPDU fits at MCS 12 but not at MCS 1.
    #[test]
    fn ppdu_max_time_binds_at_low_mcs() {
        assert!(sc_ppdu_duration_ns(MAX_AMPDU_BYTES, 12) < PPDU_MAX_TIME_NS);
        assert!(sc_ppdu_duration_ns(MAX_AMPDU_BYTES, 1) > PPDU_MAX_TIME_NS);
        assert!(sc_ppdu_duration_ns(7 * MAX_MSDU_BYTES, 1) < PPDU_MAX_TIME_NS);
    }

    #[test]
    fn ofdm_ppdu_duration_hand_computed() {
        // 1500 B at MCS 24 (64-QAM 13/16): 12000 / 546 -> 22 codewords; 22 x 672 / 2016 = 7.33
        // -> 8 symbols; 4992 + 640 + 8 x 640 = 10752 Ts = 4072.7 ns.
        assert_eq!(ofdm_ppdu_duration_ns(1500, 24), 4073);
        // 1500 B at MCS 13 (SQPSK 1/2): 12000 / 336 -> 36 codewords; 36 x 672 / 336 = 72
        // symbols; 4992 + 640 + 46080 = 51712 Ts = 19587.9 ns.
        assert_eq!(ofdm_ppdu_duration_ns(1500, 13), 19_588);
    }

    #[test]
    fn control_ppdu_duration_hand_computed() {
        // 14 B: 8 x 8 = 64 bits after the header codeword -> 1 codeword of 64 + 168 = 232
        // coded bits x 32 = 7424 chips; 6400 + 1152 + 8192 + 7424 = 23168 chips = 13163.6 ns.
        assert_eq!(control_ppdu_duration_ns(14), 13_164);
        // 26 B: 160 bits -> 1 codeword, 328 coded bits -> 10496 chips; 26240 chips = 14909.1 ns.
        assert_eq!(control_ppdu_duration_ns(26), 14_910);
        // 1023 B: 8136 bits -> 49 codewords (48.4), 8232 + 8136 = 16368 coded bits.
        assert_eq!(control_ppdu_duration_ns(1023), chips_to_ns_ceil(15_744 + 16_368 * 32));
        // Long control frames approach 27.5 Mbit/s.
        let eff = 1023.0 * 8.0 / (control_ppdu_duration_ns(1023) as f64 * 1e-9);
        assert!(eff < 27.5e6 && eff > 0.9 * 27.5e6, "{eff}");
    }

    #[test]
    fn dispatcher_and_invalid_inputs() {
        assert_eq!(ppdu_duration_ns(14, 1), Some(3091));
        assert_eq!(ppdu_duration_ns(1500, 24), Some(4073));
        assert_eq!(ppdu_duration_ns(14, 0), Some(13_164));
        assert_eq!(ppdu_duration_ns(13, 0), None);
        assert_eq!(ppdu_duration_ns(1024, 0), None);
        assert_eq!(ppdu_duration_ns(100, 25), None);
    }

    #[test]
    #[should_panic(expected = "not a SingleCarrier MCS")]
    fn sc_duration_rejects_ofdm_mcs() {
        sc_ppdu_duration_ns(100, 13);
    }

    #[test]
    #[should_panic(expected = "not a SingleCarrier MCS")]
    fn sc_duration_rejects_control_mcs() {
        sc_ppdu_duration_ns(100, 0);
    }
}
