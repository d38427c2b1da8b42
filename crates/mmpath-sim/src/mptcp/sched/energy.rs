//! Energy-aware ratio scheduler for a dual-band 11ad + 11ac phone, following seed 002's
//! guidelines (section 4.2 and Fig. 9). Subflow 0 runs over 802.11ad, subflow 1 over 802.11ac.
//!
//! - Start with MuSher (musher.rs), whose ratio is throughput-optimal, from the ratio of the
//!   interfaces' maximum rates (the optimum seed 002 section 3.2 derives), and let it search.
//! - Estimate the application's demand online, every `WINDOW` (1 s): the bytes delivered over
//!   both subflows in the window, and whether the connection was backlogged (data waiting to be
//!   assigned at most of the 100 ms samples). Backlogged: the demand is at least what is
//!   carried; not backlogged: the demand is what was carried.
//! - Compare the demand D with each interface's maximum rate R and pick the cheapest
//!   configuration (seed 002 section 4.2):
//!   - downlink (Rx: 11ac 1100 mW < 11ad 2200 mW): D <= R_ac: 11ac alone (0:100, 11ad sleeps);
//!     R_ac < D <= R_ad: 11ad alone (100:0); R_ad < D < R_ad + R_ac: fill 11ac first, ratio =
//!     (D - R_ac) / D (66:34 at 1750 Mbit/s);
//!   - uplink (Tx: 11ad 1600 mW < 11ac 2800 mW): D <= R_ad: 11ad alone; R_ad < D < sum: fill
//!     11ad first, ratio = R_ad / D (83:17 at 1750 Mbit/s);
//!   - D at or above the sum (backlogged traffic): MuSher's throughput-optimal ratio, which
//!     seed 002 finds near energy-optimal under backlog ("the throughput optimal ratio should
//!     be selected even in an energy-aware design").
//! - R is hard-coded per Fig. 9's text (11ad 1.6 Gbit/s, 11ac 600 Mbit/s; seed 002 section 3.2
//!   gives 1450 for the 11ad uplink) and lowered online: when a chosen configuration turns out
//!   backlogged, the data waiting to be assigned tells why. Draining (less at the window's
//!   end than at its start): an earlier configuration left it and this one carries more than
//!   the demand; it stays. Growing, with the application writing (carried + growth) more
//!   than the demand / 0.97: the demand grew; back to MuSher (a new search). Growing
//!   otherwise: the interface nearest its R could not carry its share; its R becomes 97 % of
//!   what it carried and the configuration is recomputed.
//!
//! Interfaces with a zero share carry no data and their radios fall into PSM (energy.rs); the
//! ratio rounds (ratio.rs) keep the connection moving if the only used subflow fails.

use super::musher::MuSher;
use super::ratio::{ratio_available, segment_share, RatioRounds};
use super::{ConnView, LinkEvent, SchedAction, Scheduler, SubflowView};
use crate::time::Time;

/// Demand estimation window.
pub const WINDOW: Time = Time(1_000_000_000);
/// Backlog samples within a window.
pub const SAMPLE: Time = Time(100_000_000);
/// A sample is backlogged when at least this much data waits to be assigned to a subflow.
pub const BACKLOG_BYTES: u64 = 1 << 20;
/// Share of an interface's estimated max rate kept when a configuration saturated it.
const CAP_MARGIN: f64 = 0.97;

/// Seed 002 section 3.2 single-path TCP rates, Mbit/s (11ad, 11ac), as Fig. 9's text suggests
/// hard-coding them.
pub fn default_max_rates_mbps(uplink: bool) -> &'static [f64] {
    if uplink {
        &[1450.0, 600.0]
    } else {
        &[1600.0, 600.0]
    }
}

/// What the scheduler runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Config {
    /// MuSher searching / holding the throughput-optimal ratio.
    Throughput,
    /// A fixed energy configuration: segments per 100 to 11ad (0 = 11ac alone, 100 = 11ad alone).
    Fixed(u32),
}

/// The Fig. 9 decision for demand `demand_bps` with max rates `cap_bps` = [11ad, 11ac]. Fig. 9's
/// ratios are shares of the bytes; the rounds count segments, so the share is converted by the
/// subflows' `mss` (ratio.rs `segment_share`; the same number when the MSS are equal).
pub fn choose(uplink: bool, demand_bps: f64, cap_bps: [f64; 2], mss: [u32; 2]) -> Config {
    let [ad, ac] = cap_bps;
    if demand_bps >= ad + ac {
        return Config::Throughput;
    }
    let r = if uplink {
        if demand_bps <= ad {
            100.0
        } else {
            100.0 * ad / demand_bps
        }
    } else if demand_bps <= ac {
        0.0
    } else if demand_bps <= ad {
        100.0
    } else {
        100.0 * (demand_bps - ac) / demand_bps
    };
    Config::Fixed(segment_share(r, mss))
}

pub struct EnergyAware {
    uplink: bool,
    initial_ratio: u32,
    musher: MuSher,
    rounds: RatioRounds,
    config: Config,
    /// Estimated max rate of each interface, bit/s.
    cap_bps: [f64; 2],
    /// The subflows' MSS (11ad, 11ac): converts shares of bytes into the rounds' segments.
    mss: [u32; 2],
    /// Last demand measured while not backlogged, bit/s.
    demand_bps: Option<f64>,
    // Window accounting.
    next_sample: Option<Time>,
    /// Window start: time, bytes delivered per subflow, bytes waiting to be assigned.
    win_start: Option<(Time, [u64; 2], u64)>,
    samples: u32,
    backlogged_samples: u32,
    /// Windows to skip after a change (the new ratio settles).
    settle: u32,
    /// How many times the configuration changed.
    pub changes: u32,
}

impl EnergyAware {
    /// `initial_ratio` is in segments, as for every ratio scheduler; without it MuSher starts
    /// at the max rates' share of the bytes, in segments by `mss`.
    pub fn new(initial_ratio: Option<u32>, max_mbps: [f64; 2], uplink: bool, mss: [u32; 2]) -> Self {
        let cap_bps = [max_mbps[0] * 1e6, max_mbps[1] * 1e6];
        let r = initial_ratio.unwrap_or_else(|| segment_share(100.0 * cap_bps[0] / (cap_bps[0] + cap_bps[1]), mss));
        EnergyAware {
            uplink,
            initial_ratio: r,
            musher: MuSher::new(r),
            rounds: RatioRounds::new(r),
            config: Config::Throughput,
            cap_bps,
            mss,
            demand_bps: None,
            next_sample: None,
            win_start: None,
            samples: 0,
            backlogged_samples: 0,
            settle: 1,
            changes: 0,
        }
    }

    pub fn config(&self) -> Config {
        self.config
    }

    pub fn cap_bps(&self) -> [f64; 2] {
        self.cap_bps
    }

    /// The ratio in force: MuSher's while it runs, else the fixed one.
    pub fn ratio(&self) -> u32 {
        match self.config {
            Config::Throughput => self.musher.ratio(),
            Config::Fixed(r) => r,
        }
    }

    fn set(&mut self, c: Config) {
        if c == self.config {
            return;
        }
        match c {
            Config::Fixed(r) => {
                // A fresh round at the new ratio.
                self.rounds = RatioRounds::new(r);
            }
            Config::Throughput => {
                // Back to MuSher: a new search from the throughput-optimal starting point
                // (rare: allocation here is fine).
                self.musher = MuSher::new(self.initial_ratio);
            }
        }
        self.config = c;
        self.changes += 1;
        self.settle = 1;
    }

    /// One demand window ended: `carried_bps` per subflow; `backlog` is None if the window was
    /// not backlogged, else the rate at which the data waiting to be assigned grew (bit/s,
    /// negative while it drains).
    pub fn on_window(&mut self, carried_bps: [f64; 2], backlog: Option<f64>) {
        if self.settle > 0 {
            self.settle -= 1;
            return;
        }
        let total = carried_bps[0] + carried_bps[1];
        let Some(growth) = backlog else {
            self.demand_bps = Some(total);
            let c = choose(self.uplink, total, self.cap_bps, self.mss);
            self.set(c);
            return;
        };
        match self.config {
            // Backlogged under MuSher: demand at or above what the paths carry; stay.
            Config::Throughput => {}
            Config::Fixed(_) => {
                if growth <= 0.0 {
                    // The waiting data drains: the configuration carries more than the
                    // application writes (an earlier configuration left the backlog). Keep it.
                    return;
                }
                // What the application wrote in the window.
                let wanted = total + growth;
                let demand = self.demand_bps.unwrap_or(wanted);
                if wanted > demand / CAP_MARGIN {
                    // The demand grew beyond the configuration: search again.
                    self.demand_bps = None;
                    self.set(Config::Throughput);
                    return;
                }
                // Short of the demand: the interface nearest its estimated max could not
                // carry its share.
                let u = [carried_bps[0] / self.cap_bps[0], carried_bps[1] / self.cap_bps[1]];
                let i = if u[0] >= u[1] { 0 } else { 1 };
                let lowered = (carried_bps[i] * CAP_MARGIN).max(1.0);
                if lowered < self.cap_bps[i] {
                    self.cap_bps[i] = lowered;
                    let c = choose(self.uplink, demand, self.cap_bps, self.mss);
                    self.set(c);
                } else {
                    // Even the lowered estimate does not explain the shortfall: search again.
                    self.demand_bps = None;
                    self.set(Config::Throughput);
                }
            }
        }
    }
}

impl Scheduler for EnergyAware {
    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "energy"
    }

    fn select(&mut self, now: Time, conn: &ConnView, sfs: &[SubflowView], act: &mut Vec<SchedAction>) -> Option<usize> {
        match self.config {
            Config::Throughput => self.musher.select(now, conn, sfs, act),
            Config::Fixed(_) => self.rounds.select(sfs, conn.reinjecting, ratio_available),
        }
    }

    fn on_link_event(
        &mut self,
        now: Time,
        sf: usize,
        ev: LinkEvent,
        conn: &ConnView,
        sfs: &[SubflowView],
        act: &mut Vec<SchedAction>,
    ) {
        // MuSher's blockage recovery (clear pf, restore cwnd) in every configuration.
        self.musher.on_link_event(now, sf, ev, conn, sfs, act);
    }

    fn next_tick(&self, now: Time) -> Option<Time> {
        let own = self.next_sample.unwrap_or(now);
        Some(match self.config {
            Config::Throughput => own.min(self.musher.next_tick(now).unwrap_or(own)),
            Config::Fixed(_) => own,
        })
    }

    fn on_tick(&mut self, now: Time, conn: &ConnView, sfs: &[SubflowView], act: &mut Vec<SchedAction>) {
        if self.config == Config::Throughput && self.musher.next_tick(now).is_some_and(|t| t <= now) {
            self.musher.on_tick(now, conn, sfs, act);
        }
        if self.next_sample.is_some_and(|t| t > now) {
            return;
        }
        self.next_sample = Some(now + SAMPLE);
        let delivered = |j: usize| sfs.iter().find(|s| s.id == j).map_or(0, |s| s.delivered_bytes);
        let d = [delivered(0), delivered(1)];
        let Some((t0, d0, w0)) = self.win_start else {
            self.win_start = Some((now, d, conn.unassigned_bytes));
            return;
        };
        self.samples += 1;
        if conn.unassigned_bytes >= BACKLOG_BYTES {
            self.backlogged_samples += 1;
        }
        let dt = now.saturating_sub(t0);
        if dt < WINDOW {
            return;
        }
        let secs = dt.secs_f64();
        let carried = [(d[0] - d0[0]) as f64 * 8.0 / secs, (d[1] - d0[1]) as f64 * 8.0 / secs];
        let backlogged = 2 * self.backlogged_samples >= self.samples;
        let growth = (conn.unassigned_bytes as f64 - w0 as f64) * 8.0 / secs;
        self.win_start = Some((now, d, conn.unassigned_bytes));
        self.samples = 0;
        self.backlogged_samples = 0;
        self.on_window(carried, backlogged.then_some(growth));
    }

    fn metric(&self) -> f64 {
        self.ratio() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: f64 = 1e6;
    const DOWN: [f64; 2] = [1600.0 * M, 600.0 * M];
    const UP: [f64; 2] = [1450.0 * M, 600.0 * M];
    /// Equal MSS on both subflows (seed 002's phone, MTU 1500 on both radios).
    const EQ: [u32; 2] = [1448, 1448];

    #[test]
    fn downlink_choices_follow_fig9() {
        // Seed 002 section 4.2, downlink: 500 -> 11ac alone, 1500 -> 11ad alone,
        // 1750 -> 66:34 (fill 11ac first), backlogged -> throughput-optimal.
        assert_eq!(choose(false, 500.0 * M, DOWN, EQ), Config::Fixed(0));
        assert_eq!(choose(false, 600.0 * M, DOWN, EQ), Config::Fixed(0));
        assert_eq!(choose(false, 1500.0 * M, DOWN, EQ), Config::Fixed(100));
        assert_eq!(choose(false, 1750.0 * M, DOWN, EQ), Config::Fixed(66));
        assert_eq!(choose(false, 2200.0 * M, DOWN, EQ), Config::Throughput);
        // 66:34 of the bytes with 11ad at MSS 7860 beside 11ac at 1448: 65.71 / 7860 : 34.29 /
        // 1448 = 26 segments in 100; the single-interface choices stay 0 and 100.
        assert_eq!(choose(false, 1750.0 * M, DOWN, [7860, 1448]), Config::Fixed(26));
        assert_eq!(choose(false, 1500.0 * M, DOWN, [7860, 1448]), Config::Fixed(100));
    }

    #[test]
    fn uplink_choices_follow_fig9() {
        // Uplink: 500 and 1400 -> 11ad alone, 1750 -> 83:17 (fill 11ad first).
        assert_eq!(choose(true, 500.0 * M, UP, EQ), Config::Fixed(100));
        assert_eq!(choose(true, 1400.0 * M, UP, EQ), Config::Fixed(100));
        assert_eq!(choose(true, 1750.0 * M, UP, EQ), Config::Fixed(83));
        assert_eq!(choose(true, 2050.0 * M, UP, EQ), Config::Throughput);
    }

    #[test]
    fn starts_at_the_max_rate_ratio_with_musher() {
        let e = EnergyAware::new(None, [1600.0, 600.0], false, EQ);
        assert_eq!((e.config(), e.ratio()), (Config::Throughput, 73));
        let e = EnergyAware::new(None, [1450.0, 600.0], true, EQ);
        assert_eq!(e.ratio(), 71);
        // 72.7 % of the bytes at MSS 7860 beside 1448 is 33 segments in 100; a given ratio is
        // taken in segments as it is.
        assert_eq!(EnergyAware::new(None, [1600.0, 600.0], false, [7860, 1448]).ratio(), 33);
        assert_eq!(EnergyAware::new(Some(73), [1600.0, 600.0], false, [7860, 1448]).ratio(), 73);
    }

    #[test]
    fn online_demand_windows_pick_and_revise_the_configuration() {
        let mut e = EnergyAware::new(None, [1600.0, 600.0], false, EQ);
        // First window settles (slow start); then 500 Mbit/s carried, not backlogged.
        e.on_window([400.0 * M, 100.0 * M], None);
        assert_eq!(e.config(), Config::Throughput);
        e.on_window([365.0 * M, 135.0 * M], None);
        assert_eq!(e.config(), Config::Fixed(0));
        // Settling window, then steady: stays.
        e.on_window([0.0, 500.0 * M], None);
        e.on_window([0.0, 500.0 * M], None);
        assert_eq!(e.config(), Config::Fixed(0));

        // 1750 Mbit/s downlink: fill 11ac first; 11ac only carries 546 -> its max is lowered
        // and 11ad takes more.
        let mut e = EnergyAware::new(None, [1600.0, 600.0], false, EQ);
        e.on_window([0.0, 0.0], None);
        e.on_window([1277.0 * M, 473.0 * M], None);
        assert_eq!(e.config(), Config::Fixed(66));
        e.on_window([1000.0 * M, 500.0 * M], Some(150.0 * M)); // settling
        e.on_window([1060.0 * M, 546.0 * M], Some(140.0 * M));
        let cap_ac = 546.0 * M * CAP_MARGIN;
        assert_eq!(e.cap_bps()[1], cap_ac);
        assert_eq!(e.config(), Config::Fixed((100.0 * (1750.0 * M - cap_ac) / (1750.0 * M)).round() as u32));

        // The 66:34 phase left data waiting; at the new ratio it drains (the connection carries
        // 1810 Mbit/s, more than the 1750 the application writes): not a demand growth nor a
        // shortfall, the ratio stays.
        let fixed = e.config();
        e.on_window([1200.0 * M, 560.0 * M], Some(-10.0 * M)); // settling
        e.on_window([1260.0 * M, 550.0 * M], Some(-60.0 * M));
        assert_eq!((e.config(), e.cap_bps()[1]), (fixed, cap_ac));
        // Waiting data growing while 11ac carries less: a shortfall, its max is lowered.
        e.on_window([1150.0 * M, 500.0 * M], Some(100.0 * M));
        assert!(e.cap_bps()[1] < cap_ac);
        // The application writing clearly more than the known demand: search again.
        let mut e2 = EnergyAware::new(None, [1600.0, 600.0], false, EQ);
        e2.on_window([0.0, 0.0], None);
        e2.on_window([1277.0 * M, 473.0 * M], None);
        e2.on_window([1000.0 * M, 500.0 * M], Some(150.0 * M)); // settling
        e2.on_window([1150.0 * M, 590.0 * M], Some(400.0 * M));
        assert_eq!(e2.config(), Config::Throughput);

        // Backlogged from the start: MuSher keeps the throughput-optimal ratio.
        let mut e = EnergyAware::new(None, [1450.0, 600.0], true, EQ);
        for _ in 0..5 {
            e.on_window([1400.0 * M, 590.0 * M], Some(100.0 * M));
        }
        assert_eq!(e.config(), Config::Throughput);
    }

    #[test]
    fn demand_growth_returns_to_musher() {
        let mut e = EnergyAware::new(None, [1450.0, 600.0], true, EQ);
        e.on_window([0.0, 0.0], None);
        e.on_window([500.0 * M, 0.0], None);
        assert_eq!(e.config(), Config::Fixed(100));
        e.on_window([500.0 * M, 0.0], None);
        // Now backlogged at what 11ad can carry, with no demand beyond it known: search again.
        e.on_window([1440.0 * M, 0.0], Some(2000.0 * M));
        assert_eq!(e.config(), Config::Throughput);
    }
}
