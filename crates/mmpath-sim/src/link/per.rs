//! The packet error rate model, as pure functions of the signal margin and the frame length:
//! the waterfall of a 4096-octet PSDU around the standard's sensitivity, and its scaling to any
//! length. It imports nothing, so that the PHY tables' users (radio.rs `ideal_mcs`) and the
//! medium (medium/per.rs) both take it from here, one-way.

/// Slope of the PER waterfall, per dB of margin. Coded OFDM/SC links go from almost no errors
/// to almost all frames lost within a few dB (LDPC/BCC waterfall); 2 / dB makes PER fall from
/// 90 % to 1 % over ~3.4 dB. A modelling assumption, documented in docs/models.md.
pub const PER_SLOPE_PER_DB: f64 = 2.0;

/// PER of a 4096-octet PSDU at `margin_db` above the MCS's sensitivity: a logistic waterfall
/// anchored at PER = 1 % at the sensitivity (the standard's definition of sensitivity:
/// 802.11ad 21.3.7, PER < 1 % at 4096 octets).
pub fn per_4096(margin_db: f64) -> f64 {
    // 1 / (1 + exp(a (m - m0))) with 1 / (1 + exp(-a m0)) = 0.01 -> m0 = -ln(99) / a.
    let m0 = -(99f64).ln() / PER_SLOPE_PER_DB;
    1.0 / (1.0 + (PER_SLOPE_PER_DB * (margin_db - m0)).exp())
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

    #[test]
    fn per_is_one_percent_at_sensitivity_and_falls_with_margin() {
        assert!((per_4096(0.0) - 0.01).abs() < 1e-12);
        assert!(per_4096(3.0) < 1e-4);
        assert!(per_4096(-3.0) > 0.5);
        assert!(per_4096(-10.0) > 0.999);
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
}
