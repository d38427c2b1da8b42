//! The rate a commodity 60 GHz device sets per session: beam training picks a sector, the
//! firmware's rate search picks an MCS for what that sector leaves, and the MCS is held while
//! it delivers (docs/models.md, "Commodity 802.11ad rate: set per session").
//!
//! - *Sector.* At association the sector level sweep (SLS, 802.11ad-2012 9.35.2) has each end
//!   pick the transmit sector whose sweep frame it read strongest. One frame per sector is read,
//!   so a sector a little weaker than the best is sometimes picked: the chosen sector's gain
//!   falls short of the best one's by a loss drawn per session (`SECTOR_LOSS_DB`, from measured
//!   QCA9500 sector patterns; docs/facts.md "Beamforming and blockage").
//! - *Rate search.* When beamforming completes the firmware runs its rate search (wil6210 wmi.h
//!   `struct wmi_rs_cfg`: an MCS "will be considered as failed if PER during RS is higher" than
//!   its `per_threshold`; `dbg_disable_internal_trigger`: the search "is currently triggered by
//!   BF Done"). Here: the highest MCS of the ladder whose MPDU PER, averaged over the channel's
//!   fading at the session's mean signal less the sector loss, is at most its threshold
//!   (`per_threshold_pct`, the Talon AD7200 tools' `wmi_rs_cfg` defaults); MCS 1 at worst.
//! - *Hold.* The MCS then stays. Of the firmware's re-training triggers (wmi.h
//!   `enum wmi_bf_triggers`) only the Block Ack one is modelled: after `max_back_failure_th`
//!   = 3 TXOPs in a row without a Block Ack (every MPDU lost) the device beamforms again (a new
//!   sector drawn) and searches again. The upward triggers are not published; none is modelled.
//!
//! Clock-free: the medium feeds it TXOP outcomes and asks it to train; it draws nothing itself
//! (the sector's two uniform draws are passed in).

use super::per::{per_4096, per_for_len};

/// Loss of the sector the stock sweep picks against the best sector of the codebook, dB, one
/// end of the link: the 25 mid-quantiles (4 % each) of its distribution. Derived from SEEMOO's
/// measured sector patterns of the Talon AD7200's QCA9500 (github.com/seemoo-lab/
/// talon-sector-patterns, `precise_measurements/pattern_planar_default_sector_*.csv`: SNR mean,
/// low and high per sector and azimuth, 36 sectors; Steinmetzer et al., CoNEXT 2017): at each
/// azimuth within +-90 degrees of broadside, each sector's sweep frame read uniformly within its
/// measured [low, high] and the strongest read picked; the loss is the best sector's mean less
/// the picked one's (docs/facts.md "Beamforming and blockage": 83 % of sweeps pick the
/// best sector, mean loss 0.25 dB).
pub const SECTOR_LOSS_DB: [f64; 25] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.44,
    1.15, 1.78, 2.71,
];

/// wil6210 wmi.h `struct wmi_rs_cfg` `max_back_failure_th`: TXOPs in a row without a Block Ack
/// before the firmware re-trains (the Talon AD7200 tools' default, 3).
pub const BACK_FAILURES: u32 = 3;

/// The rate search's PER threshold for an MCS, %: wmi.h `wmi_rs_cfg.per_threshold` as the
/// SEEMOO Talon AD7200 tools set it (MCS 2/3/4/6/7/8/10/11/12: 40/15/10/20/15/10/15/10/10).
/// MCS 1 is the floor the search falls back to; MCS 5 and 9, absent from that set, take the
/// strictest listed threshold (10 %).
pub fn per_threshold_pct(mcs: u8) -> f64 {
    match mcs {
        2 => 40.0,
        3 => 15.0,
        6 => 20.0,
        7 => 15.0,
        10 => 15.0,
        _ => 10.0,
    }
}

/// The loss of one session's sectors, both ends (`u_ap`, `u_sta` uniform in [0, 1)).
pub fn sector_loss_db(u_ap: f64, u_sta: f64) -> f64 {
    let pick = |u: f64| SECTOR_LOSS_DB[((u * SECTOR_LOSS_DB.len() as f64) as usize).min(SECTOR_LOSS_DB.len() - 1)];
    pick(u_ap) + pick(u_sta)
}

/// Mean PER of an MPDU of `len` octets at `margin_db` over a normal fading of `sigma_db`
/// (the channel's model of small-scale fading, channel.rs), by the midpoint rule over +-5 sigma.
pub fn mean_per(margin_db: f64, sigma_db: f64, len: u32) -> f64 {
    if sigma_db <= 0.0 {
        return per_for_len(per_4096(margin_db), len);
    }
    const N: usize = 101;
    let (mut sum, mut wsum) = (0.0, 0.0);
    for i in 0..N {
        let z = -5.0 + 10.0 * (i as f64 + 0.5) / N as f64;
        let w = (-0.5 * z * z).exp();
        sum += w * per_for_len(per_4096(margin_db + sigma_db * z), len);
        wsum += w;
    }
    sum / wsum
}

#[derive(Debug, Clone)]
pub struct SessionRate {
    /// The device's MCS set, ascending, and each one's sensitivity less the receiver's gain.
    ladder: Vec<(u8, f64)>,
    fading_sigma_db: f64,
    mpdu_bytes: u32,
    mcs: u8,
    sector_loss_db: f64,
    no_back: u32,
}

impl SessionRate {
    /// `ladder`: (MCS, sensitivity dBm less the receiver's gain), ascending; `fading_sigma_db`:
    /// the channel's fading; `mpdu_bytes`: a full MPDU. Untrained: the lowest MCS.
    pub fn new(ladder: Vec<(u8, f64)>, fading_sigma_db: f64, mpdu_bytes: u32) -> SessionRate {
        let mcs = ladder.first().map_or(1, |l| l.0);
        SessionRate { ladder, fading_sigma_db, mpdu_bytes, mcs, sector_loss_db: 0.0, no_back: 0 }
    }

    pub fn mcs(&self) -> u8 {
        self.mcs
    }

    pub fn sector_loss_db(&self) -> f64 {
        self.sector_loss_db
    }

    /// Beamforming done with a sector `sector_loss_db` short of the best, at a mean signal of
    /// `mean_rssi_dbm`: the rate search picks the MCS, returned.
    pub fn train(&mut self, mean_rssi_dbm: f64, sector_loss_db: f64) -> u8 {
        self.sector_loss_db = sector_loss_db;
        self.no_back = 0;
        let snr = mean_rssi_dbm - sector_loss_db;
        self.mcs = self.ladder.first().map_or(1, |l| l.0);
        for &(m, sens) in self.ladder.iter().rev() {
            let per = mean_per(snr - sens, self.fading_sigma_db, self.mpdu_bytes);
            if per * 100.0 <= per_threshold_pct(m) {
                self.mcs = m;
                break;
            }
        }
        self.mcs
    }

    /// One TXOP's outcome (`mpdus` sent, `failed` lost): true when the device re-trains
    /// (`BACK_FAILURES` in a row without a Block Ack), after which the caller draws a sector
    /// and calls `train`.
    pub fn on_txop(&mut self, mpdus: usize, failed: usize) -> bool {
        if mpdus == 0 {
            return false;
        }
        if failed < mpdus {
            self.no_back = 0;
            return false;
        }
        self.no_back += 1;
        self.no_back >= BACK_FAILURES
    }

    /// The session's signal at which MCS `mcs` would just pass the search (a test helper).
    #[cfg(test)]
    pub(crate) fn threshold_dbm(&self, mcs: u8) -> f64 {
        let (_, sens) = *self.ladder.iter().find(|l| l.0 == mcs).unwrap();
        let (mut lo, mut hi) = (sens - 20.0, sens + 20.0);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if mean_per(mid - sens, self.fading_sigma_db, self.mpdu_bytes) * 100.0 <= per_threshold_pct(mcs) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// wil6210-dock's ladder with the 802.11ad-2012 Table 21-3 sensitivities (no receiver gain).
    fn dock(sigma: f64) -> SessionRate {
        let sens = [(1, -68.0), (2, -66.0), (4, -64.0), (6, -63.0), (7, -62.0), (8, -61.0), (10, -55.0), (11, -54.0)];
        SessionRate::new(sens.to_vec(), sigma, 1538)
    }

    #[test]
    fn a_large_margin_gives_the_top_rate_whatever_the_sector() {
        let mut r = dock(1.57);
        for loss in [0.0, 0.44, 2.71, 2.71 + 2.71] {
            assert_eq!(r.train(-45.0, loss), 11, "loss {loss}");
        }
        // Below MCS 2's reach, MCS 1 whatever the sector.
        for loss in [0.0, 2.71] {
            assert_eq!(r.train(-70.0, loss), 1);
        }
    }

    #[test]
    fn between_rates_the_sector_decides() {
        let mut r = dock(1.57);
        // Just above what MCS 8 needs: the best sector holds it, a 1.15 dB loss does not.
        let at = r.threshold_dbm(8) + 0.3;
        assert_eq!(r.train(at, 0.0), 8);
        assert_eq!(r.train(at, 1.15), 7);
        assert_eq!(r.train(at, 1.15 + 1.78), 6);
        assert!((r.sector_loss_db() - 2.93).abs() < 1e-9);
    }

    #[test]
    fn fading_costs_margin() {
        // With no fading MCS 8 passes 0.3 dB below its sensitivity (PER of a 1538-octet MPDU
        // there is under 10 %); the K = 12 dB fading (1.57 dB) needs more than the sensitivity.
        let still = dock(0.0);
        let faded = dock(1.57);
        assert!(still.threshold_dbm(8) < -61.0, "{}", still.threshold_dbm(8));
        assert!(faded.threshold_dbm(8) > still.threshold_dbm(8) + 0.5, "{}", faded.threshold_dbm(8));
    }

    #[test]
    fn the_rate_is_held_until_three_txops_in_a_row_get_no_block_ack() {
        let mut r = dock(1.57);
        r.train(-58.0, 0.0);
        let held = r.mcs();
        // Losses that leave a Block Ack never re-train, however many.
        for _ in 0..1000 {
            assert!(!r.on_txop(32, 31));
        }
        assert!(!r.on_txop(32, 32));
        assert!(!r.on_txop(32, 32));
        assert!(!r.on_txop(0, 0), "an empty TXOP says nothing");
        assert!(!r.on_txop(32, 1), "a Block Ack resets the count");
        assert!(!r.on_txop(32, 32));
        assert!(!r.on_txop(32, 32));
        assert!(r.on_txop(32, 32), "the third in a row re-trains");
        assert_eq!(r.mcs(), held, "the caller re-trains; the MCS stays until then");
    }

    #[test]
    fn sector_draws_cover_the_table_for_both_ends() {
        assert_eq!(sector_loss_db(0.0, 0.0), 0.0);
        assert!((sector_loss_db(0.999, 0.0) - 2.71).abs() < 1e-12);
        assert!((sector_loss_db(0.999, 0.999) - 5.42).abs() < 1e-12);
        assert!((sector_loss_db(0.85, 0.5) - 0.44).abs() < 1e-12);
        // 21 of 25 quantiles are the best sector: 84 % of the draws of one end.
        let zero = (0..1000).filter(|i| sector_loss_db(*i as f64 / 1000.0, 0.0) == 0.0).count();
        assert_eq!(zero, 840);
    }

    #[test]
    fn thresholds_follow_the_talon_tools_defaults() {
        let t: Vec<f64> = [2, 3, 4, 6, 7, 8, 10, 11, 12].iter().map(|&m| per_threshold_pct(m)).collect();
        assert_eq!(t, vec![40.0, 15.0, 10.0, 20.0, 15.0, 10.0, 15.0, 10.0, 10.0]);
    }
}
