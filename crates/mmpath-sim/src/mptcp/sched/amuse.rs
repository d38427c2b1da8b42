//! AMuSe (seed 004): the ratio scheduler of `ratio.rs` with three mechanisms, each switchable
//! on its own (`SchedParams::amuse`: scan, contention, blockage); with all three off it is
//! FixedRatio at `initial_ratio`.
//!
//! - SCAN (seed 004: "(1) stops the assignment of packets to subflow about to undertake
//!   scanning and (2) waits for the subflow-level send-queue to be emptied out"): on
//!   `LinkEvent::ScanStart` the subflow leaves the rounds (the others get every segment) and we
//!   ask for `Reclaim(sf)` so its unsent queue is reassigned to the others first instead of
//!   waiting behind the scan; on `ScanEnd` it rejoins.
//! - CONTENTION (seed 004: "set the packet-assignment ratio to match the ratio of the
//!   throughput of 802.11ad and 802.11ac flows, accounting for the drop in 802.11ac throughput
//!   due to contention"): every 500 ms the ratio is set to the ratio of the paths' current
//!   throughputs, estimated from the views' `delivered_bytes` (see `estimate` for how, and why
//!   the plain delivered-bytes ratio is not enough under a strict ratio), counted in segments
//!   as the rounds count them (each path's rate over its MSS).
//! - BLOCKAGE (seed 004: reset pf and restore the cwnd to its value just before the loss, so the
//!   11ad subflow is used < 1 s after the link is back instead of 12 s): on `LinkEvent::Up`,
//!   `ClearPf` + `RestoreCwnd` (`ratio::blockage_recovery`).
//!
//! No public code of AMuSe is known to us (searched); the estimator's constants are ours and
//! say so where they are defined.

use super::ratio::{blockage_recovery, ratio_available, RatioRounds, Wait};
use super::{ConnView, LinkEvent, SchedAction, Scheduler, SubflowView};
use crate::time::Time;

/// Subflows the CONTENTION estimator and the SCAN mask track (ids 0..8); the papers use two.
pub const MAX_TRACKED: usize = 8;
/// CONTENTION sampling tick: MuSher's regular sampling interval (100 ms, mptcp_musher.c), the
/// same authors' choice for rate sampling. Our choice for AMuSe, not from seed 004.
pub const TICK: Time = Time::from_ms(100);
/// CONTENTION estimation window: 5 ticks, as MuSher averages its reference over 5 samples.
/// Our choice for AMuSe, not from seed 004.
pub const WINDOW: Time = Time::from_ms(500);
/// The ratio CONTENTION sets stays within MuSher's bounds [5, 95] so every path keeps a trickle
/// of data and its estimate stays fresh. Our choice for AMuSe.
pub const MIN_RATIO: u32 = 5;
pub const MAX_RATIO: u32 = 95;

pub struct AMuSe {
    rounds: RatioRounds,
    scan: bool,
    contention: bool,
    blockage: bool,
    /// Bit i: subflow i is off channel for a scan (set on ScanStart, cleared on ScanEnd).
    scanning: u64,
    /// CONTENTION window: start time, per-subflow delivered bytes at the start.
    win_start: Option<Time>,
    win_delivered: [u64; MAX_TRACKED],
    /// Times the round waited on each subflow (its turn, no cwnd room) in the window.
    waits: [u32; MAX_TRACKED],
    /// Bit i: subflow i had its cwnd full at some tick of the window (in flight and queued
    /// fill it), so its window, cwnd x mss / srtt, is what it can carry.
    cwnd_full: u64,
    /// Each subflow's last estimate, segments/s (0 = none yet): what a path starved by the
    /// ratio is taken to carry until it is measured again (see `estimate`).
    capacity: [f64; MAX_TRACKED],
    /// A subflow was unavailable at some tick of the window: its rates say nothing about
    /// capacity, so the window is not used.
    disturbed: bool,
}

impl AMuSe {
    pub fn new(initial_ratio: u32, scan: bool, contention: bool, blockage: bool) -> Self {
        AMuSe {
            rounds: RatioRounds::new(initial_ratio),
            scan,
            contention,
            blockage,
            scanning: 0,
            win_start: None,
            win_delivered: [0; MAX_TRACKED],
            waits: [0; MAX_TRACKED],
            cwnd_full: 0,
            capacity: [0.0; MAX_TRACKED],
            disturbed: false,
        }
    }

    pub fn ratio(&self) -> u32 {
        self.rounds.ratio()
    }

    fn is_scanning(&self, id: usize) -> bool {
        id < 64 && self.scanning & (1u64 << id) != 0
    }

    fn available(&self, sf: &SubflowView) -> bool {
        ratio_available(sf) && !(self.scan && self.is_scanning(sf.id))
    }

    fn start_window(&mut self, now: Time, sfs: &[SubflowView]) {
        self.win_start = Some(now);
        self.waits = [0; MAX_TRACKED];
        self.cwnd_full = 0;
        self.win_delivered = [0; MAX_TRACKED];
        for s in sfs.iter().filter(|s| s.id < MAX_TRACKED) {
            self.win_delivered[s.id] = s.delivered_bytes;
        }
        self.disturbed = sfs.iter().any(|s| !self.available(s));
    }

    /// Sets the ratio to the ratio of the paths' throughputs over the window.
    ///
    /// Under a strict ratio every path delivers exactly its share, so the delivered-bytes ratio
    /// always equals the ratio in force and tells nothing by itself. Only the bottleneck path
    /// (the one the rounds had to wait on) delivers its full throughput; the others deliver a
    /// lower bound. So: the path waited on most is measured by its delivered rate. Another
    /// path whose cwnd was full at some tick is measured by the larger of its delivered rate
    /// and what its window carries, cwnd x mss / srtt (Little's law; the rate the stack itself
    /// paces at, before the 1.2 / 2 gain of tcp_update_pacing_rate). A path the ratio starved
    /// (cwnd never full) says nothing new: its cwnd is what it grew to earlier, its srtt
    /// that of an empty queue, and their quotient can be many times what the path carries
    /// (11ad's 3 MB window over 2 ms is 12 Gbit/s); it keeps its last estimate (or its
    /// delivered rate, if larger). Without that rule each window's starved path looked the
    /// faster and the ratio swung between its bounds every window. A window in which the
    /// rounds never waited (the application is the bottleneck) carries no capacity
    /// information and leaves the ratio.
    fn estimate(&mut self, dt: Time, sfs: &[SubflowView]) {
        let dt_ns = dt.ns();
        if dt_ns == 0 {
            return;
        }
        let mut bottleneck = None;
        let mut most = 0;
        for (id, &w) in self.waits.iter().enumerate() {
            if w > most {
                most = w;
                bottleneck = Some(id);
            }
        }
        let Some(bottleneck) = bottleneck else {
            return;
        };
        let mut est0 = None;
        let (mut others, mut n_others) = (0f64, 0u32);
        for s in sfs.iter().filter(|s| s.id < MAX_TRACKED) {
            let bytes = s.delivered_bytes.saturating_sub(self.win_delivered[s.id]);
            let rate = bytes as f64 * 8e9 / dt_ns as f64;
            let full = self.cwnd_full & (1u64 << s.id) != 0;
            let est = if s.id == bottleneck || s.srtt_ns == 0 {
                rate
            } else if full {
                let window_rate = s.cwnd as f64 * s.mss as f64 * 8e9 / s.srtt_ns as f64;
                rate.max(window_rate)
            } else {
                rate.max(self.capacity[s.id] * s.mss.max(1) as f64)
            };
            // The rounds count segments (ratio.rs `segment_share`): compare segment rates, so
            // paths with different MSS get the share of bytes their throughputs call for.
            let segs = est / s.mss.max(1) as f64;
            self.capacity[s.id] = segs;
            if s.id == 0 {
                est0 = Some(segs);
            } else {
                others += segs;
                n_others += 1;
            }
        }
        let Some(e0) = est0 else {
            return;
        };
        if n_others == 0 {
            return;
        }
        // Subflow 0 gets r segments per round and every other subflow 100 - r: compare subflow
        // 0's segment rate with the mean of the others' (the papers have exactly one other).
        let e1 = others / n_others as f64;
        if e0 + e1 <= 0.0 {
            return;
        }
        let r = (100.0 * e0 / (e0 + e1)).round() as u32;
        self.rounds.set_ratio(r.clamp(MIN_RATIO, MAX_RATIO));
    }
}

impl Scheduler for AMuSe {
    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "amuse"
    }

    fn select(
        &mut self,
        _now: Time,
        conn: &ConnView,
        sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) -> Option<usize> {
        let scan = self.scan;
        let scanning = self.scanning;
        let pick = self.rounds.select(sfs, conn.reinjecting, |s| {
            ratio_available(s) && !(scan && s.id < 64 && scanning & (1u64 << s.id) != 0)
        });
        if self.contention {
            if let Some(Wait::NoRoom(id)) = self.rounds.last_wait {
                if id < MAX_TRACKED {
                    self.waits[id] = self.waits[id].saturating_add(1);
                }
            }
        }
        pick
    }

    fn on_link_event(
        &mut self,
        _now: Time,
        sf: usize,
        ev: LinkEvent,
        _conn: &ConnView,
        sfs: &[SubflowView],
        act: &mut Vec<SchedAction>,
    ) {
        match ev {
            LinkEvent::ScanStart if self.scan && sf < 64 => {
                self.scanning |= 1u64 << sf;
                act.push(SchedAction::Reclaim(sf));
            }
            LinkEvent::ScanEnd if sf < 64 => {
                self.scanning &= !(1u64 << sf);
            }
            LinkEvent::Up if self.blockage => blockage_recovery(sf, ev, sfs, act),
            _ => {}
        }
    }

    fn arbitrates_scans(&self) -> bool {
        self.scan
    }

    fn next_tick(&self, now: Time) -> Option<Time> {
        if !self.contention {
            return None;
        }
        Some(match self.win_start {
            None => now,
            Some(t) => {
                // Every TICK from the window start.
                let elapsed = now.saturating_sub(t).ns();
                let k = elapsed / TICK.ns() + 1;
                Time(t.ns() + k * TICK.ns())
            }
        })
    }

    fn on_tick(&mut self, now: Time, _conn: &ConnView, sfs: &[SubflowView], _act: &mut Vec<SchedAction>) {
        if !self.contention {
            return;
        }
        let Some(t0) = self.win_start else {
            self.start_window(now, sfs);
            return;
        };
        if sfs.iter().any(|s| !self.available(s)) {
            self.disturbed = true;
        }
        for s in sfs.iter().filter(|s| s.id < MAX_TRACKED) {
            // In flight plus queued fill the window (TSQ's hold is not the window's).
            if s.cwnd_full() {
                self.cwnd_full |= 1u64 << s.id;
            }
        }
        let dt = now.saturating_sub(t0);
        if dt >= WINDOW {
            if !self.disturbed {
                self.estimate(dt, sfs);
            }
            self.start_window(now, sfs);
        }
    }

    fn metric(&self) -> f64 {
        self.ratio() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::ratio::tests::{full, sf};
    use super::*;

    fn run(s: &mut AMuSe, sfs: &[SubflowView], n: usize) -> [u32; 2] {
        let mut got = [0u32; 2];
        for _ in 0..n {
            if let Some(i) = s.select(Time::ZERO, &ConnView::default(), sfs, &mut Vec::new()) {
                got[i] += 1;
            }
        }
        got
    }

    fn event(s: &mut AMuSe, sf_id: usize, ev: LinkEvent, sfs: &[SubflowView]) -> Vec<SchedAction> {
        let mut act = Vec::new();
        s.on_link_event(Time::ZERO, sf_id, ev, &ConnView::default(), sfs, &mut act);
        act
    }

    #[test]
    fn all_off_is_fixedratio() {
        let mut s = AMuSe::new(73, false, false, false);
        let sfs = [sf(0), sf(1)];
        assert_eq!(run(&mut s, &sfs, 1000), [730, 270]);
        assert_eq!(s.next_tick(Time::ZERO), None);
    }

    #[test]
    fn scan_stops_assignment_and_reclaims_then_resumes() {
        let mut s = AMuSe::new(73, true, false, false);
        let sfs = [sf(0), sf(1)];
        assert_eq!(event(&mut s, 1, LinkEvent::ScanStart, &sfs), vec![SchedAction::Reclaim(1)]);
        assert_eq!(run(&mut s, &sfs, 500), [500, 0], "nothing to the scanning subflow");
        assert!(event(&mut s, 1, LinkEvent::ScanEnd, &sfs).is_empty());
        let got = run(&mut s, &sfs, 1000);
        assert_eq!(got[0] + got[1], 1000);
        assert!(got[1] >= 260, "subflow 1 back in the rounds: {got:?}");
    }

    #[test]
    fn scan_off_keeps_assigning_and_waits_for_the_scanning_subflow() {
        let mut s = AMuSe::new(73, false, false, false);
        let sfs = [sf(0), sf(1)];
        assert!(event(&mut s, 1, LinkEvent::ScanStart, &sfs).is_empty());
        assert_eq!(run(&mut s, &sfs, 100), [73, 27]);
        // The scanning subflow's cwnd fills: its turn blocks the 11ad subflow too.
        let sfs_full = [sf(0), full(1)];
        assert_eq!(run(&mut s, &sfs_full, 50), [0, 0]);
    }

    #[test]
    fn blockage_emits_clear_pf_and_restore_cwnd_only_when_enabled() {
        let mut s0 = sf(0);
        s0.pf = true;
        let sfs = [s0, sf(1)];
        let mut on = AMuSe::new(73, false, false, true);
        assert_eq!(event(&mut on, 0, LinkEvent::Up, &sfs), vec![SchedAction::ClearPf(0), SchedAction::RestoreCwnd(0)]);
        let mut off = AMuSe::new(73, true, true, false);
        assert!(event(&mut off, 0, LinkEvent::Up, &sfs).is_empty());
    }

    /// Drives one CONTENTION window: ticks from t = 1 s, `waits_on` select() calls that find
    /// that subflow's turn without room, then the window's end with the given rates (Mbit/s).
    fn window(s: &mut AMuSe, waits_on: Option<usize>, mbps: [u64; 2], cwnd0: u32) {
        window_mss(s, waits_on, mbps, cwnd0, [1448, 1448], false);
    }

    /// `window` with each subflow's MSS given, and subflow 0's cwnd full (all in flight) or
    /// idle (nothing in flight) at the ticks.
    fn window_mss(s: &mut AMuSe, waits_on: Option<usize>, mbps: [u64; 2], cwnd0: u32, mss: [u32; 2], full0: bool) {
        let mut t = Time::from_secs(1);
        let mut base = [sf(0), sf(1)];
        base[0].mss = mss[0];
        base[1].mss = mss[1];
        let tick = s.next_tick(t).unwrap();
        assert_eq!(tick, t);
        s.on_tick(t, &ConnView::default(), &base, &mut Vec::new());
        if let Some(id) = waits_on {
            // Fill the other subflow's share so `id` has the turn, then find it full.
            let mut views = base;
            views[id] = SubflowView { mss: mss[id], ..full(id) };
            for _ in 0..200 {
                s.select(t, &ConnView::default(), &views, &mut Vec::new());
            }
        }
        for _ in 0..5 {
            t = s.next_tick(t).unwrap();
            let mut views = base;
            for (i, v) in views.iter_mut().enumerate() {
                v.delivered_bytes = mbps[i] * 1_000_000 / 8 * (t.ns() - 1_000_000_000) / 1_000_000_000;
            }
            views[0].cwnd = cwnd0;
            views[0].in_flight = if full0 { cwnd0 } else { 0 };
            s.on_tick(t, &ConnView::default(), &views, &mut Vec::new());
        }
        assert_eq!(t, Time::from_ms(1500));
    }

    #[test]
    fn contention_sets_the_ratio_to_measured_throughputs() {
        // 11ac (subflow 1) is the bottleneck at 400 Mbit/s under contention; the 11ad subflow's
        // window (cwnd 10 x 1448 B / 1 ms = 116 Mbit/s) says less than its 1600 Mbit/s
        // delivered, so the delivered rates decide: 1600 : 400 = 80 : 20.
        let mut s = AMuSe::new(73, false, true, false);
        window(&mut s, Some(1), [1600, 400], 10);
        assert_eq!(s.ratio(), 80);
        assert_eq!(s.metric(), 80.0);
    }

    #[test]
    fn contention_ratio_counts_segments_when_the_mss_differ() {
        // The same 1600 : 400 Mbit/s (80 : 20 of the bytes) with 11ad at MSS 7860 and 11ac at
        // 1448: 1600 / 7860 : 400 / 1448 segments = 0.2036 : 0.2762, i.e. 42 segments in 100.
        let mut s = AMuSe::new(73, false, true, false);
        window_mss(&mut s, Some(1), [1600, 400], 10, [7860, 1448], false);
        assert_eq!(s.ratio(), 42);
    }

    #[test]
    fn contention_uses_the_window_rate_of_a_path_with_its_cwnd_full() {
        // 11ac is the bottleneck at 400; the 11ad subflow delivered only 1000 but had its
        // window full, which carries cwnd 200 x 1448 B / 1 ms = 2317 Mbit/s:
        // 2317 / (2317 + 400) = 85 %.
        let mut s = AMuSe::new(73, false, true, false);
        window_mss(&mut s, Some(1), [1000, 400], 200, [1448, 1448], true);
        assert_eq!(s.ratio(), 85);
    }

    #[test]
    fn contention_keeps_the_last_estimate_of_a_path_the_ratio_starves() {
        // The same window with the 11ad subflow's big cwnd idle (the ratio starved it): its
        // window says nothing, so its delivered 1000 stands: 1000 / 1400 = 71 %.
        let mut s = AMuSe::new(73, false, true, false);
        window_mss(&mut s, Some(1), [1000, 400], 200, [1448, 1448], false);
        assert_eq!(s.ratio(), 71);
        // Later 11ad is the bottleneck and delivers 1200 while 11ac, starved, delivers 300 with
        // an idle window: 11ac keeps its measured 400, so 1200 / 1600 = 75 %, not a swing
        // towards 11ac's idle window (cwnd 1000 x 1448 B / 1 ms = 11.6 Gbit/s, 11 %).
        let mut t = s.next_tick(Time::from_ms(1500)).unwrap();
        let mut views = [sf(0), sf(1)];
        views[0] = full(0);
        for _ in 0..200 {
            s.select(t, &ConnView::default(), &views, &mut Vec::new());
        }
        let (d0, d1) = (1000u64 * 1_000_000 / 8 / 2, 400u64 * 1_000_000 / 8 / 2);
        while t < Time::from_secs(2) {
            t = s.next_tick(t).unwrap();
            let ms = (t.ns() - 1_500_000_000) / 1_000_000;
            let mut v = [sf(0), sf(1)];
            v[0].delivered_bytes = d0 + 1200 * 1_000_000 / 8 * ms / 1000;
            v[1].delivered_bytes = d1 + 300 * 1_000_000 / 8 * ms / 1000;
            v[1].cwnd = 1000;
            s.on_tick(t, &ConnView::default(), &v, &mut Vec::new());
        }
        assert_eq!(s.ratio(), 75);
    }

    #[test]
    fn contention_leaves_the_ratio_without_a_bottleneck_or_when_off() {
        let mut s = AMuSe::new(73, false, true, false);
        window(&mut s, None, [1600, 400], 10);
        assert_eq!(s.ratio(), 73, "application-limited window: no capacity information");
        let mut off = AMuSe::new(73, false, false, false);
        assert_eq!(off.next_tick(Time::ZERO), None);
        off.on_tick(Time::from_secs(5), &ConnView::default(), &[sf(0), sf(1)], &mut Vec::new());
        assert_eq!(off.ratio(), 73);
    }

    #[test]
    fn contention_ratio_stays_within_bounds() {
        let mut s = AMuSe::new(50, false, true, false);
        window(&mut s, Some(1), [1600, 10], 10);
        assert_eq!(s.ratio(), MAX_RATIO);
    }
}
