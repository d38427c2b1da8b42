//! A commodity rate adaptation: Auto Rate Fallback (Kamerman & Monteban, WaveLAN-II, 1997),
//! the ancestor of the success-counting algorithms in commodity firmware, with AARF's
//! adaptive probing (Lacage, Manshaei, Turletti, MSWiM 2004), applied per transmit
//! opportunity (A-MPDU).
//!
//! After `up_after` clean TXOPs in a row (10 at first) it probes the next MCS up; a failed
//! probe steps back and doubles `up_after` (up to 60: a rate that keeps failing is probed ever
//! more rarely); `DOWN_AFTER` bad TXOPs in a row step down and reset `up_after` to 10. With a stable channel it settles at the top
//! MCS the link supports (high SNR) or a low one (low SNR). At intermediate SNR, where the
//! next MCS is sometimes clean and sometimes not (fading), it keeps climbing and falling: the
//! unstable behaviour seed 001 measured on wil6210 radios between 20 and 135 ft.

/// Clean TXOPs in a row before probing up (ARF: 10 successes; AARF's minimum).
pub const UP_AFTER: u32 = 10;
/// AARF (Lacage, Manshaei, Turletti, MSWiM 2004; ns-3 AarfWifiManager SuccessK = 2,
/// MaxSuccessThreshold = 60): a failed probe doubles the clean TXOPs needed before the next
/// probe, up to 60; a regular step down resets it to `UP_AFTER`.
pub const UP_AFTER_MAX: u32 = 60;
/// Bad TXOPs in a row before stepping down (ARF: 2 failures).
pub const DOWN_AFTER: u32 = 2;
/// A TXOP is clean when at most this fraction of its MPDUs failed ...
pub const CLEAN_FAILED_FRACTION: f64 = 0.1;
/// ... and bad when more than this fraction failed.
pub const BAD_FAILED_FRACTION: f64 = 0.5;

#[derive(Debug, Clone)]
pub struct Arf {
    /// The MCS indexes the device uses, ascending.
    mcs_set: Vec<u8>,
    idx: usize,
    clean: u32,
    bad: u32,
    probing: bool,
    /// Clean TXOPs needed before the next probe (AARF).
    up_after: u32,
}

impl Arf {
    /// Starts at `start` (or the closest MCS below it in the set).
    pub fn new(mcs_set: Vec<u8>, start: u8) -> Arf {
        let idx = mcs_set.iter().rposition(|&m| m <= start).unwrap_or(0);
        Arf { mcs_set, idx, clean: 0, bad: 0, probing: false, up_after: UP_AFTER }
    }

    pub fn mcs(&self) -> u8 {
        self.mcs_set[self.idx]
    }

    pub fn mcs_set(&self) -> &[u8] {
        &self.mcs_set
    }

    /// Feeds one TXOP's outcome; returns the new MCS if it changed.
    pub fn on_txop(&mut self, mpdus: usize, failed: usize) -> Option<u8> {
        if mpdus == 0 {
            return None;
        }
        let frac = failed as f64 / mpdus as f64;
        let before = self.idx;
        if frac <= CLEAN_FAILED_FRACTION {
            self.bad = 0;
            self.probing = false;
            self.clean += 1;
            if self.clean >= self.up_after && self.idx + 1 < self.mcs_set.len() {
                self.idx += 1;
                self.clean = 0;
                self.probing = true;
            }
        } else if frac > BAD_FAILED_FRACTION {
            self.clean = 0;
            self.bad += 1;
            if (self.probing || self.bad >= DOWN_AFTER) && self.idx > 0 {
                self.up_after = if self.probing { (self.up_after * 2).min(UP_AFTER_MAX) } else { UP_AFTER };
                self.idx -= 1;
                self.bad = 0;
            }
            self.probing = false;
        } else {
            self.clean = 0;
            self.bad = 0;
            self.probing = false;
        }
        (self.idx != before).then(|| self.mcs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn climbs_after_ten_clean_txops() {
        let mut a = Arf::new(vec![1, 2, 4, 6], 2);
        for _ in 0..9 {
            assert_eq!(a.on_txop(8, 0), None);
        }
        assert_eq!(a.on_txop(8, 0), Some(4));
    }

    #[test]
    fn failed_probe_falls_back_at_once() {
        let mut a = Arf::new(vec![1, 2, 4, 6], 2);
        for _ in 0..10 {
            a.on_txop(8, 0);
        }
        assert_eq!(a.mcs(), 4);
        assert_eq!(a.on_txop(8, 8), Some(2), "a bad probe steps straight back");
    }

    #[test]
    fn two_bad_txops_step_down_and_moderate_ones_do_not() {
        let mut a = Arf::new(vec![1, 2, 4, 6], 6);
        assert_eq!(a.on_txop(8, 2), None, "25 % failed: neither clean nor bad");
        assert_eq!(a.on_txop(8, 6), None);
        assert_eq!(a.on_txop(8, 6), Some(4));
        for _ in 0..20 {
            a.on_txop(8, 8);
        }
        assert_eq!(a.mcs(), 1, "never below the lowest MCS");
    }

    #[test]
    fn start_snaps_to_the_set() {
        assert_eq!(Arf::new(vec![1, 2, 4, 6, 7, 8, 10, 11], 9).mcs(), 8);
        assert_eq!(Arf::new(vec![4, 6], 1).mcs(), 4);
    }

    #[test]
    fn failed_probes_are_repeated_ever_more_rarely_until_a_regular_fallback() {
        let mut a = Arf::new(vec![1, 2, 4, 6], 2);
        // Clean TXOPs needed before each probe; every probe fails.
        let mut gaps = Vec::new();
        for _ in 0..5 {
            let mut n = 0;
            while a.mcs() == 2 {
                a.on_txop(8, 0);
                n += 1;
            }
            gaps.push(n);
            assert_eq!(a.on_txop(8, 8), Some(2), "the probe fails");
        }
        assert_eq!(gaps, vec![10, 20, 40, 60, 60]);
        // Two bad TXOPs in a row (not a probe): down, and probing is eager again.
        a.on_txop(8, 8);
        assert_eq!(a.on_txop(8, 8), Some(1));
        for _ in 0..9 {
            assert_eq!(a.on_txop(8, 0), None);
        }
        assert_eq!(a.on_txop(8, 0), Some(2), "10 clean TXOPs after a regular fallback");
    }
}
