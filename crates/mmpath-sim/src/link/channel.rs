//! The radio channel of a path over time: the received signal strength and the events that
//! change it.
//!
//! RSSI(t) = base + shadowing + fading(t) - blockage(t), where
//! - base is given (`rssi_dbm`), drawn once per run from a named range (`signal`), or follows
//!   from distance: EIRP + antenna gains - (FSPL at 1 m + 10 n log10(d)) (log-distance model);
//! - shadowing is one normal draw per run (`shadowing_db`);
//! - fading is a new normal draw every coherence interval (`fading_db`, `coherence_ms`);
//! - a blockage subtracts its attenuation while it lasts; a total blockage or an antenna turn
//!   takes the link down, and it stays down for the beam re-training time after the event;
//! - with an association floor (`Association`, devices that characterise it), the client hears
//!   the AP's beacons only while the RSSI is at or above the floor: after `BEACON_LOSS_COUNT`
//!   missed beacons in a row it loses the association (the link goes down), and it is back a
//!   re-training time after the first beacon it hears again.

use super::medium::Interferer;
use crate::engine::RngStream;
use crate::scenario::{EventKind, PathCfg};
use crate::time::Time;

/// A change to the link the channel asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Set the blockage attenuation (0 = none), dB.
    Attenuate(f64),
    /// The path's mean received power changed (the client moved), dBm.
    Base(f64),
    /// Other stations now offer this load on the channel, Mbit/s (0 = none).
    Contend(f64),
    /// Another link starts (Some) or stops (None) interfering.
    Interfere(Option<Interferer>),
    Down,
    Up,
    /// A scan is requested: from its start the interface alternates between off-channel
    /// dwells (nothing sent or received there) and returns to its own channel, as the pattern
    /// says, and MPTCP schedulers hear of the scan; a scheduler that arbitrates scans (AMuSe
    /// SCAN, seed 004) may hold it until its subflow has drained. The simulation runs the
    /// pattern and ends the scan.
    ScanStart(ScanPattern),
}

/// Off-channel dwell per scanned channel when a scenario does not say: qcacld-3.0's
/// `gActiveMaxChannelTime` default, 40 ms (CFG_ACTIVE_MAX_CHANNEL_TIME_DEFAULT,
/// core/hdd/inc/wlan_hdd_cfg.h), the driver of the Qualcomm 11ac radios in the phones of seeds
/// 002 / 004. For comparison: ath10k's firmware scan asks 50 ms active / 150 ms passive
/// (ath10k_wmi_start_scan_init, `dwell_time_active` / `dwell_time_passive`); mac80211's software
/// scan IEEE80211_PROBE_DELAY + IEEE80211_CHANNEL_TIME = 2 x HZ/33 active, HZ/9 passive
/// (net/mac80211/scan.c).
pub const SCAN_DWELL_MS: f64 = 40.0;

/// Time back on the home channel between two off-channel dwells when a scenario does not say:
/// qcacld-3.0's `gRestTimeConc` default, 100 ms (CFG_REST_TIME_CONC_DEFAULT: "rest time before
/// moving to a new channel to scan"). For comparison: the WMI scan command's
/// `min_rest_time` / `max_rest_time` (ath10k asks 50 / 500 ms; with traffic on the home channel
/// the firmware stays up to max_rest_time), and mac80211's software scan, which with frames
/// pending goes back to the operating channel after every channel (ieee80211_scan_state_decision
/// -> SCAN_SUSPEND) for HZ/5 = 200 ms (ieee80211_scan_state_suspend), and never stays away more
/// than HZ/8 = 125 ms in a row.
pub const SCAN_REST_MS: f64 = 100.0;

/// The timeline of one scan: off-channel dwells of `dwell`, each followed by `rest` back on
/// the home channel, from the scan's start until `total` has passed (the last dwell is cut
/// short at `total`). `rest` = 0 is one continuous off-channel period of `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanPattern {
    pub total: Time,
    pub dwell: Time,
    pub rest: Time,
}

impl ScanPattern {
    /// A validated pattern: `dwell` > 0 (a zero dwell is raised to 1 us).
    pub fn new(total: Time, dwell: Time, rest: Time) -> ScanPattern {
        let dwell = dwell.max(Time::from_us(1));
        match rest {
            Time::ZERO => ScanPattern { total, dwell: total.max(Time::from_us(1)), rest },
            _ => ScanPattern { total, dwell, rest },
        }
    }

    /// Whether the radio is off its channel `since` after the scan started (within the scan).
    pub fn off_at(&self, since: Time) -> bool {
        if since >= self.total {
            return false;
        }
        let cycle = self.dwell + self.rest;
        Time(since.ns() % cycle.ns()) < self.dwell
    }

    /// When (since the scan's start) the radio next changes channel after `since`; the scan's
    /// end (`total`) is the last change.
    pub fn next_change(&self, since: Time) -> Option<Time> {
        if since >= self.total {
            return None;
        }
        let cycle = self.dwell + self.rest;
        let start = Time(since.ns() - since.ns() % cycle.ns());
        let next = if since < start + self.dwell { start + self.dwell } else { start + cycle };
        Some(next.min(self.total))
    }

    /// Total off-channel time of the scan.
    pub fn off_time(&self) -> Time {
        let cycle = self.dwell + self.rest;
        let full = self.total.ns() / cycle.ns();
        let part = (self.total.ns() % cycle.ns()).min(self.dwell.ns());
        Time(full * self.dwell.ns() + part)
    }
}

/// A walk moves the mean RSSI in steps this far apart.
pub const WALK_STEP: Time = Time::from_ms(100);

/// Beacons missed in a row before the client gives up the association: Linux mac80211's
/// IEEE80211_BEACON_LOSS_COUNT (net/mac80211/mlme.c), 7 beacon intervals.
pub const BEACON_LOSS_COUNT: u32 = 7;

/// The client's association, kept by the AP's beacons (802.11ad: DMG Beacons in the beacon
/// transmission interval of every 102.4 ms beacon interval, 10.37).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Association {
    /// Lowest RSSI (of the data link, as the channel reports it) at which a beacon is heard.
    floor_dbm: f64,
    interval: Time,
    /// From hearing the first beacon again to carrying data (re-association and beamforming).
    rejoin: Time,
    next_beacon: Time,
    missed: u32,
    associated: bool,
    rejoin_at: Option<Time>,
}

impl Association {
    /// Beacons every `interval` from time 0, heard at or above `floor_dbm`; `rejoin` after the
    /// first beacon heard again, the client carries data again.
    pub fn new(floor_dbm: f64, interval: Time, rejoin: Time) -> Association {
        Association {
            floor_dbm,
            interval: interval.max(Time::from_us(100)),
            rejoin,
            next_beacon: Time::ZERO,
            missed: 0,
            associated: true,
            rejoin_at: None,
        }
    }

    pub fn associated(&self) -> bool {
        self.associated
    }

    pub fn floor_dbm(&self) -> f64 {
        self.floor_dbm
    }

    /// The next beacon or re-association, whichever is first.
    fn next_time(&self) -> Time {
        self.rejoin_at.map_or(self.next_beacon, |r| r.min(self.next_beacon))
    }

    /// A run starts on an established link when the AP is audible on average (`rssi_dbm`
    /// without fading); otherwise the client was never associated: the first beacon (at
    /// time 0) takes the link down, and it joins once it hears one.
    fn start(&mut self, rssi_dbm: f64) {
        if rssi_dbm < self.floor_dbm {
            self.missed = BEACON_LOSS_COUNT - 1;
        }
    }

    /// Lets the beacon due pass without counting it (the link is down for another reason).
    fn skip(&mut self) {
        if self.rejoin_at.is_some_and(|r| r <= self.next_beacon) {
            self.rejoin_at = Some(self.next_beacon + self.interval);
        }
        self.next_beacon += self.interval;
    }

    /// Settles the event due at `next_time()` with the RSSI of that moment; returns the new
    /// association state if it changed.
    fn step(&mut self, rssi_dbm: f64) -> Option<bool> {
        if self.rejoin_at.is_some_and(|r| r <= self.next_beacon) {
            self.rejoin_at = None;
            self.associated = true;
            self.missed = 0;
            return Some(true);
        }
        let at = self.next_beacon;
        self.next_beacon = at + self.interval;
        let heard = rssi_dbm >= self.floor_dbm;
        if self.associated {
            self.missed = if heard { 0 } else { self.missed + 1 };
            if self.missed >= BEACON_LOSS_COUNT {
                self.associated = false;
                self.missed = 0;
                return Some(false);
            }
        } else if heard {
            self.rejoin_at.get_or_insert(at + self.rejoin);
        }
        None
    }
}

pub struct Channel {
    base_dbm: f64,
    shadow_db: f64,
    fade_db: f64,
    block_db: f64,
    fading_sigma_db: f64,
    coherence: Time,
    actions: Vec<(Time, Action)>,
    next: usize,
    /// Beacon-kept association, for devices that characterise it.
    assoc: Option<Association>,
    /// A total blockage or antenna turn holds the link down.
    blocked: bool,
    rng: RngStream,
}

impl Channel {
    /// The channel of a validated radio path. `eirp_gain_dbm`, `fspl_1m_db` and `retrain` come
    /// from the device and the band; `assoc`, if given, keeps the link up only while beacons
    /// are heard.
    pub fn new(
        p: &PathCfg,
        eirp_gain_dbm: f64,
        fspl_1m_db: f64,
        retrain: Time,
        assoc: Option<Association>,
        mut rng: RngStream,
    ) -> Channel {
        let base = match (p.rssi_dbm, p.signal, p.distance_m) {
            (Some(r), _, _) => r,
            (None, Some(sig), _) => {
                let (lo, hi) = sig.range_dbm();
                lo + (hi - lo) * rng.uniform()
            }
            (None, None, Some(d)) => {
                eirp_gain_dbm - (fspl_1m_db + 10.0 * p.path_loss_exponent.unwrap_or(2.0) * d.log10())
            }
            (None, None, None) => -42.0,
        };
        let shadow = p.shadowing_db.unwrap_or(0.0) * rng.normal();
        let n = p.path_loss_exponent.unwrap_or(2.0);
        let at_distance = |d: f64| eirp_gain_dbm - (fspl_1m_db + 10.0 * n * d.max(0.01).log10());
        let mut actions = Vec::new();
        for e in &p.event {
            let start = Time::from_secs_f64(e.t_s);
            let end = Time::from_secs_f64(e.t_s + e.duration_s);
            let retrain = e.retrain_ms.map_or(retrain, Time::from_ms_f64);
            match (e.kind, e.loss_db) {
                (EventKind::Blockage, Some(db)) => {
                    actions.push((start, Action::Attenuate(db)));
                    actions.push((end, Action::Attenuate(0.0)));
                }
                (EventKind::Blockage | EventKind::AntennaTurn, None) => {
                    actions.push((start, Action::Down));
                    actions.push((end + retrain, Action::Up));
                }
                (EventKind::Walk, _) => {
                    // Linear in distance; the path's distance_m is where the walk starts.
                    let (d0, d1) = (p.distance_m.unwrap_or(1.0), e.to_distance_m.unwrap_or(1.0));
                    let steps = (Time::from_secs_f64(e.duration_s).ns() / WALK_STEP.ns()).max(1);
                    for k in 1..=steps {
                        let d = d0 + (d1 - d0) * k as f64 / steps as f64;
                        actions.push((start + Time(WALK_STEP.ns() * k), Action::Base(at_distance(d))));
                    }
                }
                (EventKind::Scan, _) => {
                    let every = Time::from_secs_f64(e.every_s.unwrap_or(1.0)).max(Time::from_us(1));
                    let scan = ScanPattern::new(
                        Time::from_ms_f64(e.scan_ms.unwrap_or(0.0)),
                        Time::from_ms_f64(e.dwell_ms.unwrap_or(SCAN_DWELL_MS)),
                        Time::from_ms_f64(e.rest_ms.unwrap_or(SCAN_REST_MS)),
                    );
                    let mut t = start;
                    while t < end {
                        actions.push((t, Action::ScanStart(scan)));
                        t += every;
                    }
                }
                (EventKind::Contention, _) => {
                    actions.push((start, Action::Contend(e.load_mbps.unwrap_or(0.0))));
                    actions.push((end, Action::Contend(0.0)));
                }
                (EventKind::AntennaTurn, Some(_)) => unreachable!("validated: an antenna turn takes no loss_db"),
            }
        }
        for x in &p.interferer {
            let rejection_db = x.rejection_db.unwrap_or(0.0);
            // Outside each other's beams, our transmitters hear it through two side lobes; that
            // path is not our link's, so it keeps the run's mean (no fades, walks or blockages).
            let sensed_dbm = (x.beams == crate::scenario::Beams::Apart)
                .then(|| base + shadow + x.power_db - rejection_db - super::spectrum::beams_apart_isolation_db());
            let i = Interferer {
                load: x.load.unwrap_or(1.0),
                sensed: x.sensed,
                sensed_dbm,
                power_db: x.power_db,
                rejection_db,
                adjacent: x.channel == crate::scenario::ChannelRelation::Adjacent,
                mcs: x.mcs.unwrap_or(1),
                mpdu_bytes: x.mtu_bytes.unwrap_or(p.mtu_bytes) + super::radio::MPDU_OVERHEAD_BYTES,
                coupled: x.path.is_some(),
            };
            actions.push((Time::from_secs_f64(x.start_s), Action::Interfere(Some(i))));
            if let Some(stop) = x.stop_s {
                actions.push((Time::from_secs_f64(stop), Action::Interfere(None)));
            }
        }
        // Stable sort: same-time actions keep the scenario's order.
        actions.sort_by_key(|a| a.0);
        let mut c = Channel {
            base_dbm: base,
            shadow_db: shadow,
            fade_db: 0.0,
            block_db: 0.0,
            fading_sigma_db: p.fading_db.unwrap_or(0.0),
            coherence: Time::from_ms_f64(p.coherence_ms.unwrap_or(10.0)).max(Time::from_us(100)),
            actions,
            next: 0,
            assoc,
            blocked: false,
            rng,
        };
        c.fade();
        let mean = c.base_dbm + c.shadow_db;
        if let Some(a) = c.assoc.as_mut() {
            a.start(mean);
        }
        c
    }

    /// Whether the client holds its association (always, without an association model).
    pub fn associated(&self) -> bool {
        self.assoc.is_none_or(|a| a.associated())
    }

    /// Whether the link can carry data: associated and not blocked.
    pub fn link_up(&self) -> bool {
        self.associated() && !self.blocked
    }

    pub fn rssi_dbm(&self) -> f64 {
        self.base_dbm + self.shadow_db + self.fade_db - self.block_db
    }

    /// The signal without its small-scale fading: what a beam training's rate search settles
    /// for (link/session_rate.rs).
    pub fn mean_rssi_dbm(&self) -> f64 {
        self.base_dbm + self.shadow_db - self.block_db
    }

    /// Whether the signal varies over time on its own (fading).
    pub fn fades(&self) -> bool {
        self.fading_sigma_db > 0.0
    }

    pub fn coherence(&self) -> Time {
        self.coherence
    }

    /// Draws the fading of the next coherence interval.
    pub fn fade(&mut self) {
        if self.fading_sigma_db > 0.0 {
            self.fade_db = self.fading_sigma_db * self.rng.normal();
        }
    }

    pub fn next_action_time(&self) -> Option<Time> {
        let listed = self.actions.get(self.next).map(|a| a.0);
        let beacon = self.assoc.as_ref().map(|a| a.next_time());
        match (listed, beacon) {
            (Some(l), Some(b)) => Some(l.min(b)),
            (l, b) => l.or(b),
        }
    }

    /// Takes the next action if due; attenuation is applied to the RSSI here. Link changes
    /// (`Down` / `Up`) are reported only when they change whether the link can carry data:
    /// a blockage ending while the association is lost does not bring the link back.
    pub fn take_due(&mut self, now: Time) -> Option<Action> {
        loop {
            let listed = self.actions.get(self.next).map(|a| a.0).filter(|&t| t <= now);
            let beacon = self.assoc.as_ref().map(|a| a.next_time()).filter(|&t| t <= now);
            let was_up = self.link_up();
            // Listed actions first at equal times (a blockage then the beacon it hides).
            if listed.is_some() && beacon.is_none_or(|b| listed.is_some_and(|l| l <= b)) {
                let (_, a) = self.actions[self.next];
                self.next += 1;
                match a {
                    Action::Attenuate(db) => self.block_db = db,
                    Action::Base(dbm) => self.base_dbm = dbm,
                    Action::Down => self.blocked = true,
                    Action::Up => self.blocked = false,
                    _ => {}
                }
                if matches!(a, Action::Down | Action::Up) {
                    match self.link_up() == was_up {
                        true => continue,
                        false => return Some(a),
                    }
                }
                return Some(a);
            }
            if beacon.is_some() {
                let (rssi, blocked) = (self.rssi_dbm(), self.blocked);
                let a = self.assoc.as_mut().expect("a beacon is due");
                if blocked {
                    // A total blockage already stands for the lost link and its re-training.
                    a.skip();
                    continue;
                }
                if a.step(rssi).is_some() && self.link_up() != was_up {
                    return Some(if self.link_up() { Action::Up } else { Action::Down });
                }
                continue;
            }
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn path(extra: &str) -> PathCfg {
        let json = format!(r#"{{"path": [{{"technology": "11ad" {extra}}}], "flow": [{{}}]}}"#);
        Scenario::from_json(&json).unwrap().path.remove(0)
    }

    #[test]
    fn distance_follows_log_distance_path_loss() {
        let p = path(r#", "distance_m": 10, "path_loss_exponent": 2"#);
        let c = Channel::new(&p, 40.0, 68.0, Time::ZERO, None, RngStream::new(1, 1));
        // 40 - (68 + 20 log10(10)) = -48 dBm.
        assert!((c.rssi_dbm() + 48.0).abs() < 1e-9, "{}", c.rssi_dbm());
        let far = Channel::new(&path(r#", "distance_m": 100"#), 40.0, 68.0, Time::ZERO, None, RngStream::new(1, 1));
        assert!((far.rssi_dbm() + 68.0).abs() < 1e-9);
    }

    /// Beams apart: our transmitters hear the interferer two side lobes (26.52 dB) below its
    /// power at our receivers, at the run's mean signal, whatever the fades; shared beams leave
    /// it to follow our signal.
    #[test]
    fn interferer_beams_set_the_power_our_transmitters_sense() {
        let sensed_dbm = |beams: &str| {
            let extra = format!(
                r#", "rssi_dbm": -42, "fading_db": 3, "interferer": [{{"channel": "same", "power_db": -2{beams}}}]"#
            );
            let mut c = Channel::new(&path(&extra), 40.0, 68.0, Time::ZERO, None, RngStream::new(1, 1));
            match c.take_due(Time::ZERO) {
                Some(Action::Interfere(Some(i))) => i.sensed_dbm,
                a => panic!("{a:?}"),
            }
        };
        assert_eq!(sensed_dbm(""), None);
        assert_eq!(sensed_dbm(r#", "beams": "apart""#), Some(-42.0 - 2.0 - 26.52));
    }

    #[test]
    fn total_blockage_goes_down_then_up_after_retraining() {
        let p = path(r#", "rssi_dbm": -50, "event": [{"kind": "blockage", "t_s": 2, "duration_s": 1}]"#);
        let mut c = Channel::new(&p, 40.0, 68.0, Time::from_ms(400), None, RngStream::new(1, 1));
        assert_eq!(c.next_action_time(), Some(Time::from_secs(2)));
        assert_eq!(c.take_due(Time::from_secs(2)), Some(Action::Down));
        assert_eq!(c.next_action_time(), Some(Time::from_ms(3400)), "back 400 ms after the blockage ends");
        assert_eq!(c.take_due(Time::from_ms(3399)), None);
        assert_eq!(c.take_due(Time::from_ms(3400)), Some(Action::Up));
    }

    #[test]
    fn partial_blockage_attenuates() {
        let p =
            path(r#", "rssi_dbm": -45, "event": [{"kind": "blockage", "t_s": 1, "duration_s": 0.5, "loss_db": 25}]"#);
        let mut c = Channel::new(&p, 40.0, 68.0, Time::ZERO, None, RngStream::new(1, 1));
        c.take_due(Time::from_secs(1));
        assert_eq!(c.rssi_dbm(), -70.0);
        c.take_due(Time::from_ms(1500));
        assert_eq!(c.rssi_dbm(), -45.0);
    }

    #[test]
    fn walk_moves_the_mean_rssi_and_scans_toggle_the_link() {
        let p = path(
            r#", "distance_m": 1, "event": [{"kind": "walk", "t_s": 0, "duration_s": 1, "to_distance_m": 10},
                {"kind": "scan", "t_s": 2, "duration_s": 1, "every_s": 0.5, "scan_ms": 20}]"#,
        );
        let mut c = Channel::new(&p, 40.0, 68.0, Time::ZERO, None, RngStream::new(1, 1));
        assert!((c.rssi_dbm() + 28.0).abs() < 1e-9);
        while c.take_due(Time::from_secs(1)).is_some() {}
        assert!((c.rssi_dbm() + 48.0).abs() < 1e-9, "10 m away: {}", c.rssi_dbm());
        let mut seen = Vec::new();
        while let Some(a) = c.take_due(Time::from_secs(5)) {
            seen.push(a);
        }
        let s20 = ScanPattern::new(Time::from_ms(20), Time::from_ms(SCAN_DWELL_MS as u64), Time::from_ms(100));
        assert_eq!(seen, vec![Action::ScanStart(s20), Action::ScanStart(s20)]);
    }

    /// Every channel change of a scan (since its start): (time, off channel after it).
    fn timeline(p: ScanPattern) -> Vec<(u64, bool)> {
        let mut out = vec![(0, p.off_at(Time::ZERO))];
        let mut t = Time::ZERO;
        while let Some(n) = p.next_change(t) {
            out.push((n.ns() / 1_000_000, p.off_at(n)));
            t = n;
        }
        out
    }

    #[test]
    fn a_scan_alternates_dwells_and_returns_home() {
        // 40 ms away, 100 ms home, for 300 ms: dwells at 0, 140, 280 (cut at 300).
        let p = ScanPattern::new(Time::from_ms(300), Time::from_ms(40), Time::from_ms(100));
        assert_eq!(timeline(p), vec![(0, true), (40, false), (140, true), (180, false), (280, true), (300, false)]);
        assert_eq!(p.off_time(), Time::from_ms(100));
        assert!(p.off_at(Time::from_ms(150)) && !p.off_at(Time::from_ms(100)) && !p.off_at(Time::from_ms(300)));
        // A scan that ends while home: the last change is the return after the last dwell.
        let q = ScanPattern::new(Time::from_ms(200), Time::from_ms(40), Time::from_ms(100));
        assert_eq!(timeline(q), vec![(0, true), (40, false), (140, true), (180, false), (200, false)]);
        assert_eq!(q.off_time(), Time::from_ms(80));
    }

    #[test]
    fn no_rest_is_one_continuous_off_channel_period() {
        let p = ScanPattern::new(Time::from_ms(1000), Time::from_ms(40), Time::ZERO);
        assert_eq!(timeline(p), vec![(0, true), (1000, false)]);
        assert_eq!(p.off_time(), Time::from_ms(1000));
    }

    #[test]
    fn fading_varies_around_the_mean() {
        let p = path(r#", "rssi_dbm": -60, "fading_db": 3"#);
        let mut c = Channel::new(&p, 40.0, 68.0, Time::ZERO, None, RngStream::new(1, 1));
        let xs: Vec<f64> = (0..2000)
            .map(|_| {
                c.fade();
                c.rssi_dbm()
            })
            .collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        assert!((mean + 60.0).abs() < 0.3, "{mean}");
        assert!((sd - 3.0).abs() < 0.3, "{sd}");
    }

    fn assoc(floor: f64) -> Option<Association> {
        Some(Association::new(floor, Time::from_ms(100), Time::from_ms(500)))
    }

    /// Every action due up to `until`, with its time.
    fn drain(c: &mut Channel, until: Time) -> Vec<(Time, Action)> {
        let mut out = Vec::new();
        while let Some(t) = c.next_action_time().filter(|&t| t <= until) {
            while let Some(a) = c.take_due(t) {
                out.push((t, a));
            }
        }
        out
    }

    #[test]
    fn a_client_below_the_beacon_floor_never_associates() {
        let mut c =
            Channel::new(&path(r#", "rssi_dbm": -70"#), 40.0, 68.0, Time::ZERO, assoc(-68.0), RngStream::new(1, 1));
        assert_eq!(drain(&mut c, Time::from_secs(5)), vec![(Time::ZERO, Action::Down)]);
        assert!(!c.associated() && !c.link_up());
        let mut ok =
            Channel::new(&path(r#", "rssi_dbm": -67"#), 40.0, 68.0, Time::ZERO, assoc(-68.0), RngStream::new(1, 1));
        assert_eq!(drain(&mut ok, Time::from_secs(5)), vec![], "at the floor or above: the link holds");
    }

    #[test]
    fn seven_missed_beacons_lose_the_association_and_one_heard_beacon_restores_it() {
        // A partial blockage takes the signal 10 dB under the floor from 1 s to 3 s.
        let p = path(r#", "rssi_dbm": -60, "event": [{"kind": "blockage", "t_s": 1, "duration_s": 2, "loss_db": 10}]"#);
        let mut c = Channel::new(&p, 40.0, 68.0, Time::ZERO, assoc(-65.0), RngStream::new(1, 1));
        let links: Vec<(Time, Action)> = drain(&mut c, Time::from_secs(5))
            .into_iter()
            .filter(|(_, a)| matches!(a, Action::Down | Action::Up))
            .collect();
        // Beacons at 1.0 s ... 1.6 s are missed (the blockage starts before the 1 s beacon):
        // the 7th takes the link down. The 3.0 s beacon is heard (the blockage has ended);
        // re-joining takes 500 ms.
        assert_eq!(links, vec![(Time::from_ms(1600), Action::Down), (Time::from_ms(3500), Action::Up)]);
        assert!(c.link_up());
    }

    #[test]
    fn a_short_fade_under_the_floor_keeps_the_association() {
        let p =
            path(r#", "rssi_dbm": -60, "event": [{"kind": "blockage", "t_s": 1, "duration_s": 0.55, "loss_db": 10}]"#);
        let mut c = Channel::new(&p, 40.0, 68.0, Time::ZERO, assoc(-65.0), RngStream::new(1, 1));
        let links = drain(&mut c, Time::from_secs(5))
            .into_iter()
            .filter(|(_, a)| matches!(a, Action::Down | Action::Up))
            .count();
        assert_eq!(links, 0, "6 missed beacons are not 7");
    }

    #[test]
    fn a_total_blockage_keeps_its_own_recovery() {
        // A total blockage stands for the lost link and its re-training: beacons during it are
        // not counted, so the link is back at the blockage's end + 400 ms re-training, not later.
        let p = path(r#", "rssi_dbm": -60, "event": [{"kind": "blockage", "t_s": 1, "duration_s": 2}]"#);
        let mut c = Channel::new(&p, 40.0, 68.0, Time::from_ms(400), assoc(-65.0), RngStream::new(1, 1));
        let links: Vec<(Time, Action)> = drain(&mut c, Time::from_secs(6))
            .into_iter()
            .filter(|(_, a)| matches!(a, Action::Down | Action::Up))
            .collect();
        assert_eq!(links, vec![(Time::from_secs(1), Action::Down), (Time::from_ms(3400), Action::Up)]);
    }

    #[test]
    fn a_blockage_ending_does_not_restore_a_lost_association() {
        // The signal is under the floor for good from 1 s (a partial blockage of 4 s); a total
        // blockage from 2 s to 3 s ends (+ 400 ms) while the association is lost: no Up.
        let p = path(
            r#", "rssi_dbm": -60, "event": [{"kind": "blockage", "t_s": 1, "duration_s": 4, "loss_db": 10},
                {"kind": "blockage", "t_s": 2, "duration_s": 1}]"#,
        );
        let mut c = Channel::new(&p, 40.0, 68.0, Time::from_ms(400), assoc(-65.0), RngStream::new(1, 1));
        let links: Vec<(Time, Action)> = drain(&mut c, Time::from_secs(4))
            .into_iter()
            .filter(|(_, a)| matches!(a, Action::Down | Action::Up))
            .collect();
        assert_eq!(links, vec![(Time::from_ms(1600), Action::Down)]);
        assert!(!c.link_up());
    }
}
