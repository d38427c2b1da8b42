//! A commodity 802.11ad link's per-session rate (link/session_rate.rs) wired into the medium:
//! beam training draws the session's sector, the rate search sets both stations' MCS, and the
//! medium's TXOPs feed the Block Ack trigger that trains again.

use super::{Medium, AP, STA};
use crate::engine::RngStream;
use crate::link::session_rate::{sector_loss_db, SessionRate};

pub(super) struct Session {
    rate: SessionRate,
    /// Draws each training's sectors (its own stream: the medium's frame draws are unchanged).
    rng: RngStream,
    /// The session's mean signal (no small-scale fading), dBm, as the channel last gave it.
    mean_rssi_dbm: f64,
}

impl Medium {
    /// Lets the link set its rate per session (`rate`, untrained) with sector draws from `rng`;
    /// it trains at once at `mean_rssi_dbm`.
    pub fn use_session_rate(&mut self, rate: SessionRate, rng: RngStream, mean_rssi_dbm: f64) {
        self.session = Some(Session { rate, rng, mean_rssi_dbm });
        self.train();
    }

    /// The session's mean signal moved (a walk, a partial blockage): the held MCS stays until
    /// the next training.
    pub fn set_session_signal(&mut self, mean_rssi_dbm: f64) {
        if let Some(s) = self.session.as_mut() {
            s.mean_rssi_dbm = mean_rssi_dbm;
        }
    }

    /// The session's sector loss, dB (None without a per-session rate).
    pub fn sector_loss_db(&self) -> Option<f64> {
        self.session.as_ref().map(|s| s.rate.sector_loss_db())
    }

    /// Beamforming (a new sector for each end) and the rate search.
    pub(super) fn train(&mut self) {
        let Some(s) = self.session.as_mut() else { return };
        let loss = sector_loss_db(s.rng.uniform(), s.rng.uniform());
        let mcs = s.rate.train(s.mean_rssi_dbm, loss);
        for from in [AP, STA] {
            self.st[from].mcs = mcs;
            self.refresh_per(from);
        }
    }

    /// A TXOP's outcome for the Block Ack trigger; true if it re-trained.
    pub(super) fn session_feedback(&mut self, mpdus: usize, failed: usize) -> bool {
        let again = self.session.as_mut().is_some_and(|s| s.rate.on_txop(mpdus, failed));
        if again {
            self.train();
        }
        again
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::medium::testkit::*;

    fn dock() -> SessionRate {
        let sens = [(1, -68.0), (2, -66.0), (4, -64.0), (6, -63.0), (7, -62.0), (8, -61.0), (10, -55.0), (11, -54.0)];
        SessionRate::new(sens.to_vec(), 1.57, 1538)
    }

    /// Where the sector decides (0.3 dB above what MCS 8 needs with the best sectors), seeds
    /// that draw different sectors hold different rates; far from any threshold they agree.
    #[test]
    fn the_session_draw_decides_between_rates_and_not_at_the_top() {
        let mut held = std::collections::BTreeSet::new();
        let at = dock().threshold_dbm(8) + 0.3;
        for seed in 1..=20 {
            let mut m = medium(0);
            m.set_signal(at, 0.0);
            m.use_session_rate(dock(), RngStream::new(seed, 0x5000), at);
            assert_eq!(m.mcs(AP), m.mcs(STA));
            held.insert(m.mcs(AP));
        }
        assert!(held.len() >= 2, "{held:?}");
        for seed in 1..=20 {
            let mut m = medium(0);
            m.use_session_rate(dock(), RngStream::new(seed, 0x5000), -45.0);
            assert_eq!(m.mcs(AP), 11);
        }
    }

    #[test]
    fn three_txops_without_block_ack_train_again() {
        let mut m = medium(0);
        m.use_session_rate(dock(), RngStream::new(1, 0x5000), -45.0);
        assert!(!m.session_feedback(32, 32));
        assert!(!m.session_feedback(32, 32));
        // The signal fell meanwhile (a walk): the next training finds a lower rate.
        m.set_session_signal(-64.0);
        assert_eq!(m.mcs(AP), 11, "held until the trigger");
        assert!(m.session_feedback(32, 32));
        assert!(m.mcs(AP) < 8, "{}", m.mcs(AP));
    }
}
