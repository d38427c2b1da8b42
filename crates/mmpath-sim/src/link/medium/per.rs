//! Frame errors on the shared channel: each station's packet error rate at its MCS, from the
//! received signal's margin over the standard's sensitivity less the device's gain (link/per.rs
//! `per_4096`: PER 1 % at 4096 octets at the sensitivity, 802.11ad-2012 21.3.7), under an
//! interferer's overlap (the SINR against the standard's noise floor, kTB + 10 dB), and for an
//! MPDU of any length (independent bit errors); MCS changes (fixed, or ARF) refresh it.

use super::Medium;
use crate::link::arf::Arf;
use crate::link::per::per_4096;

/// Thermal noise density, dBm/Hz (kT at 290 K).
const NOISE_FLOOR_DBM_PER_HZ: f64 = -174.0;
/// Receiver noise figure, dB: the value commonly assumed for 802.11ad receivers (ns-3 wigig's
/// default RxNoiseFigure is 10 dB).
const NOISE_FIGURE_DB: f64 = 10.0;

impl Medium {
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

    pub(super) fn refresh_per(&mut self, from: usize) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::medium::testkit::*;

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
}
