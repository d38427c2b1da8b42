//! What a transmitter leaks into a neighbouring channel and what a receiver senses: the
//! standards' transmit spectral masks, the adjacent-channel rejection they bound, and the
//! clear channel assessment thresholds. Pure functions of the PHY; the medium uses them to
//! decide how an interferer (medium/foreign.rs `Interferer`) reaches our stations.

use super::radio::RadioPhy;

/// 802.11ad (DMG) transmit spectral mask, |offset from the carrier| GHz -> dBr (IEEE Std
/// 802.11ad-2012, 21.3.2 "Transmit mask"; IEEE Std 802.11-2016 20.3.2): 0 dBr up to 0.94 GHz,
/// -17 dBr at 1.2 GHz, -22 dBr at 2.7 GHz, -30 dBr at 3.06 GHz and beyond, straight lines in
/// dB between.
const DMG_MASK: [(f64, f64); 4] = [(0.94e9, 0.0), (1.2e9, -17.0), (2.7e9, -22.0), (3.06e9, -30.0)];
/// 802.11ad channel spacing (docs/facts.md: channels 2.16 GHz apart).
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

/// First side lobe of a uniformly fed array below its main lobe, dB: the array factor's
/// sin(Nx)/(N sin x) peaks at 0.2172 (-13.26 dB) beside the main lobe for any large N (C. A.
/// Balanis, "Antenna Theory", 3rd ed., section 6.3, uniform linear array; a uniform planar
/// array has the same level in each principal plane). The 802.11ad devices' phased arrays are
/// such arrays; none of the seeds gives its devices' patterns, so this is the level outside a
/// trained beam.
pub const ARRAY_SIDE_LOBE_DB: f64 = 13.26;

/// How far below its power at our receivers our transmitters hear an interferer whose
/// transmitter is outside our transmitter's beam while ours is outside its (the hidden
/// terminals of seed 000 section 3.4: "not in the transmission range of each other"), dB:
/// its beam points at its own receiver and ours, receiving, at our peer, so the power between
/// the two transmitters goes through a side lobe at each end (the same distance taken as our
/// link's: the paper gives none).
pub fn beams_apart_isolation_db() -> f64 {
    2.0 * ARRAY_SIDE_LOBE_DB
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The uniform array factor |sin(N x) / (N sin x)| at its first side lobe (N x = 1.4303 pi,
    /// the first root of tan(N x) = N tan x for large N) is 0.2172: -13.26 dB.
    #[test]
    fn uniform_array_side_lobe() {
        let n = 64.0f64;
        let af = |x: f64| ((n * x).sin() / (n * x.sin())).abs();
        let peak =
            (0..2000).map(|k| af((1.1 + 0.7 * k as f64 / 2000.0) * std::f64::consts::PI / n)).fold(0.0, f64::max);
        assert!((20.0 * peak.log10() + ARRAY_SIDE_LOBE_DB).abs() < 0.02, "{}", 20.0 * peak.log10());
        assert_eq!(beams_apart_isolation_db(), 26.52);
    }
}
