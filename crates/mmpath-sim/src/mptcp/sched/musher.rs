//! MuSher (Saha et al., MobiCom'19): the ratio scheduler of `ratio.rs` plus an online search
//! for the throughput-optimal ratio, and blockage recovery.
//!
//! Source: the authors' public code, swetanksaha/mptcp-musher `net/mptcp/mptcp_musher.c`
//! (`mptcp_musher_next_segment`, `trigger_search`, `find_optimal_ratio`), constants as docs/facts.md
//! gives them. Read for its rules; the code here is ours.
//!
//! - Sampling: every `regular_interval` = 100 ms, `search_interval` = 200 ms while searching.
//!   The source reads the interfaces' tx byte counters; we take the aggregate rate from the
//!   views' `delivered_bytes` differences (bytes ACKed on all subflows) between two ticks.
//! - Reference: after (re)start the first 5 samples are averaged into a reference rate and
//!   send-buffer size; the 6th sample completes it (and is otherwise unused), as in the source.
//! - Trigger: `rate_diff` accumulates (rate - previous rate) from the reference on, i.e. it is
//!   the rate's change since the reference. |rate_diff| > 200 Mbps (source: 200000 kbit/s) for
//!   5 samples in a row, or a send-buffer change below -75 kB (source: -75000 bytes) for 5
//!   samples in a row, triggers a search, at most once every 3 s (3000 ms). A trigger (even one
//!   held off by the 3 s rule) restarts the reference.
//! - The send buffer is the sum over subflows of (write_seq - snd_una) = queued + unacked
//!   bytes, averaged over the scheduler calls of the interval (musher_update_buffer_size runs on
//!   every next_segment call); here over `select` calls, or the tick's views if there were none.
//! - Search (find_optimal_ratio), one step per 200 ms sample, step 5, ratio within [5, 95]:
//!   INIT_RIGHT: ratio + 5 (if <= 95). RIGHT_RATIO_SET: if the rate rose by more than 5 Mbps
//!   (source: 5000 kbit/s) keep going right (SEARCH_RATE), else INIT_LEFT: ratio = initial - 5
//!   (if >= 5). LEFT_RATIO_SET: if the rate rose by > 5 Mbps keep going left, else revert to
//!   the initial ratio. SEARCH_RATE: step again while the rate does not drop; when it drops,
//!   step back and stop.
//! - Blockage (paper): when the interface is back, clear pf, restore cwnd / ssthresh to their
//!   pre-loss values, and probe (`ratio::blockage_recovery`; RestoreCwnd includes the probe).
//!
//! Deviations from the source, each because the source is plainly not doing what the paper
//! and docs/facts.md describe:
//! - LEFT_RATIO_SET on failure subtracts `step` (+5) again in the source, moving the ratio to
//!   initial - 10 instead of back to the initial ratio; we revert to the initial ratio.
//! - INIT_LEFT at the lower bound ends the search leaving the failed right probe (initial + 5)
//!   in place in the source; we revert to the initial ratio.
//! - SEARCH_RATE has no bounds check in the source (the u8 ratio can leave [5, 95] or wrap);
//!   we stop the search at the bound.
//! - The source never clears its send-buffer accumulator after a search (it grows by the whole
//!   buffer every search sample, which disables the buffer trigger afterwards); we clear it
//!   with the rate accumulator when the new reference is taken.

use super::ratio::{blockage_recovery, ratio_available, RatioRounds};
use super::{ConnView, LinkEvent, SchedAction, Scheduler, SubflowView};
use crate::time::Time;

/// Sampling interval outside a search (mptcp_musher.c `regular_interval` = 100 ms).
pub const REGULAR_INTERVAL: Time = Time::from_ms(100);
/// Sampling interval during a search (mptcp_musher.c `search_interval` = 200 ms).
pub const SEARCH_INTERVAL: Time = Time::from_ms(200);
/// Samples averaged into the reference, and consecutive samples needed to trigger (source: 5).
pub const SAMPLES: u32 = 5;
/// Rate-change trigger threshold, bit/s (source: 200000 kbit/s).
pub const RATE_TRIGGER_BPS: i64 = 200_000_000;
/// Send-buffer shrink trigger threshold, bytes (source: -75000).
pub const BUF_TRIGGER_BYTES: i64 = 75_000;
/// Minimum time between two searches (source: 3000 ms).
pub const HOLD_OFF: Time = Time::from_secs(3);
/// Search step and the bounds of the ratio (source: step 5, [5, 95]).
pub const STEP: i32 = 5;
pub const MIN_RATIO: u32 = 5;
pub const MAX_RATIO: u32 = 95;
/// Rate gain that counts as an improvement for the first step in each direction, bit/s
/// (source: 5000 kbit/s).
pub const IMPROVE_BPS: u64 = 5_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SearchState {
    InitRight,
    RightRatioSet,
    InitLeft,
    LeftRatioSet,
    SearchRate,
}

pub struct MuSher {
    rounds: RatioRounds,
    interval: Time,
    /// Time and aggregate delivered bytes of the previous tick (None before the first tick).
    last_tick: Option<(Time, u64)>,
    /// Send-buffer samples taken in `select` during the current interval.
    buf_sum: u64,
    buf_n: u64,
    // Trigger detector (names follow mushersched_meta_cb).
    last_rate: u64,
    last_buf: u64,
    ref_rate: u64,
    ref_buf: u64,
    ref_cnt: u32,
    rate_diff: i64,
    buf_diff: i64,
    rate_cnt: u32,
    buf_cnt: u32,
    last_trigger: Option<Time>,
    // Search.
    in_search: bool,
    state: SearchState,
    step: i32,
    init_ratio: u32,
    prev_rate: u64,
    searches: u32,
}

impl MuSher {
    pub fn new(initial_ratio: u32) -> Self {
        MuSher {
            rounds: RatioRounds::new(initial_ratio),
            interval: REGULAR_INTERVAL,
            last_tick: None,
            buf_sum: 0,
            buf_n: 0,
            last_rate: 0,
            last_buf: 0,
            ref_rate: 0,
            ref_buf: 0,
            ref_cnt: 0,
            rate_diff: 0,
            buf_diff: 0,
            rate_cnt: 0,
            buf_cnt: 0,
            last_trigger: None,
            in_search: false,
            state: SearchState::InitRight,
            step: STEP,
            init_ratio: initial_ratio,
            prev_rate: 0,
            searches: 0,
        }
    }

    /// The ratio new rounds use.
    pub fn ratio(&self) -> u32 {
        self.rounds.ratio()
    }

    pub fn in_search(&self) -> bool {
        self.in_search
    }

    /// Searches started so far (held-off triggers do not count).
    pub fn searches(&self) -> u32 {
        self.searches
    }

    fn set_ratio(&mut self, r: u32) {
        self.rounds.set_ratio(r);
    }

    fn end_search(&mut self) {
        self.in_search = false;
        self.interval = REGULAR_INTERVAL;
    }

    /// One more step in the current direction, or stop at the bound of [5, 95].
    fn advance(&mut self) {
        let next = self.ratio() as i32 + self.step;
        if next < MIN_RATIO as i32 || next > MAX_RATIO as i32 {
            self.end_search();
        } else {
            self.set_ratio(next as u32);
        }
    }

    /// trigger_search: restart the reference; start a search unless one started < 3 s ago.
    fn trigger(&mut self, now: Time) {
        self.rate_cnt = 0;
        self.buf_cnt = 0;
        self.last_rate = 0;
        self.last_buf = 0;
        self.buf_diff = 0;
        self.ref_cnt = 0;
        let allowed = self.last_trigger.is_none_or(|t| now.saturating_sub(t) >= HOLD_OFF);
        if allowed {
            self.in_search = true;
            self.interval = SEARCH_INTERVAL;
            self.step = STEP;
            self.last_trigger = Some(now);
            self.state = SearchState::InitRight;
            self.init_ratio = self.ratio();
            self.searches += 1;
        }
    }

    /// find_optimal_ratio: one search step on the latest rate sample.
    fn search_step(&mut self, cur: u64) {
        match self.state {
            SearchState::InitRight => {
                if self.init_ratio + STEP as u32 <= MAX_RATIO {
                    self.prev_rate = cur;
                    self.set_ratio(self.init_ratio + STEP as u32);
                    self.state = SearchState::RightRatioSet;
                } else {
                    self.state = SearchState::InitLeft;
                }
            }
            SearchState::RightRatioSet => {
                if cur > self.prev_rate + IMPROVE_BPS {
                    self.prev_rate = cur;
                    self.state = SearchState::SearchRate;
                    self.advance();
                } else {
                    self.state = SearchState::InitLeft;
                }
            }
            SearchState::InitLeft => {
                if self.init_ratio >= MIN_RATIO + STEP as u32 {
                    self.prev_rate = cur;
                    self.set_ratio(self.init_ratio - STEP as u32);
                    self.state = SearchState::LeftRatioSet;
                } else {
                    self.set_ratio(self.init_ratio);
                    self.end_search();
                }
            }
            SearchState::LeftRatioSet => {
                if cur > self.prev_rate + IMPROVE_BPS {
                    self.step = -STEP;
                    self.prev_rate = cur;
                    self.state = SearchState::SearchRate;
                    self.advance();
                } else {
                    self.set_ratio(self.init_ratio);
                    self.end_search();
                }
            }
            SearchState::SearchRate => {
                if cur < self.prev_rate {
                    let back = self.ratio() as i32 - self.step;
                    self.set_ratio(back as u32);
                    self.end_search();
                } else {
                    self.prev_rate = cur;
                    self.advance();
                }
            }
        }
    }

    /// One rate / send-buffer sample (the body of mptcp_musher_next_segment's timed block).
    fn on_sample(&mut self, now: Time, cur_rate: u64, cur_buf: u64) {
        if !self.in_search && self.last_rate == 0 {
            // Reference phase: 5 samples, averaged on the 6th.
            if self.ref_cnt == SAMPLES {
                self.last_rate = self.ref_rate / SAMPLES as u64;
                self.last_buf = self.ref_buf / SAMPLES as u64;
                self.ref_rate = 0;
                self.ref_buf = 0;
                self.ref_cnt = 0;
                self.rate_diff = 0;
                self.buf_diff = 0;
            } else {
                self.ref_rate += cur_rate;
                self.ref_buf += cur_buf;
                self.ref_cnt += 1;
            }
            return;
        }
        if self.in_search {
            self.search_step(cur_rate);
            return;
        }
        self.rate_diff += cur_rate as i64 - self.last_rate as i64;
        self.buf_diff += cur_buf as i64 - self.last_buf as i64;
        if self.rate_diff.abs() > RATE_TRIGGER_BPS {
            self.buf_cnt = 0;
            self.rate_cnt += 1;
            if self.rate_cnt == SAMPLES {
                self.trigger(now);
                return;
            }
        } else if self.buf_diff < -BUF_TRIGGER_BYTES {
            self.rate_cnt = 0;
            self.buf_cnt += 1;
            if self.buf_cnt == SAMPLES {
                self.trigger(now);
                return;
            }
        } else {
            self.rate_cnt = 0;
            self.buf_cnt = 0;
        }
        self.last_rate = cur_rate;
        self.last_buf = cur_buf;
    }
}

fn send_buffer_bytes(sfs: &[SubflowView]) -> u64 {
    sfs.iter().map(|s| s.queued_bytes + s.unacked_bytes).sum()
}

impl Scheduler for MuSher {
    /// Never reads the pacing rate: the connection may skip computing it.
    fn reads_pacing_rate(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "musher"
    }

    fn select(
        &mut self,
        _now: Time,
        conn: &ConnView,
        sfs: &[SubflowView],
        _act: &mut Vec<SchedAction>,
    ) -> Option<usize> {
        self.buf_sum += send_buffer_bytes(sfs);
        self.buf_n += 1;
        self.rounds.select(sfs, conn.reinjecting, ratio_available)
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
        blockage_recovery(sf, ev, sfs, act);
    }

    fn next_tick(&self, now: Time) -> Option<Time> {
        Some(match self.last_tick {
            None => now,
            Some((t, _)) => t + self.interval,
        })
    }

    fn on_tick(&mut self, now: Time, _conn: &ConnView, sfs: &[SubflowView], _act: &mut Vec<SchedAction>) {
        let delivered: u64 = sfs.iter().map(|s| s.delivered_bytes).sum();
        let buf = self.buf_sum.checked_div(self.buf_n).unwrap_or_else(|| send_buffer_bytes(sfs));
        self.buf_sum = 0;
        self.buf_n = 0;
        let prev = self.last_tick.replace((now, delivered));
        let Some((t0, d0)) = prev else {
            return;
        };
        let dt = now.saturating_sub(t0).ns();
        if dt == 0 {
            return;
        }
        let rate = (delivered.saturating_sub(d0) as u128 * 8 * 1_000_000_000 / dt as u128) as u64;
        self.on_sample(now, rate, buf);
    }

    fn metric(&self) -> f64 {
        self.ratio() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::ratio::tests::sf;
    use super::*;

    /// Drives a MuSher with rate samples, as the connection would with ticks.
    struct Drive {
        now: Time,
        delivered: u64,
        buf: u64,
    }

    impl Drive {
        fn new(m: &mut MuSher) -> Self {
            let d = Drive { now: Time::from_secs(10), delivered: 0, buf: 0 };
            // First tick: baseline only.
            let t = m.next_tick(d.now).unwrap();
            assert_eq!(t, d.now);
            m.on_tick(t, &ConnView::default(), &d.views(), &mut Vec::new());
            d
        }

        fn views(&self) -> [SubflowView; 2] {
            let mut a = sf(0);
            let mut b = sf(1);
            a.delivered_bytes = self.delivered / 2;
            b.delivered_bytes = self.delivered - self.delivered / 2;
            a.queued_bytes = self.buf;
            b.queued_bytes = 0;
            [a, b]
        }

        /// One sample at `mbps`, one interval after the last tick.
        fn sample(&mut self, m: &mut MuSher, mbps: u64) {
            let next = m.next_tick(self.now).unwrap();
            let dt = next.saturating_sub(self.now);
            self.now = next;
            self.delivered += mbps * 1_000_000 / 8 * dt.ns() / 1_000_000_000;
            m.on_tick(self.now, &ConnView::default(), &self.views(), &mut Vec::new());
        }

        fn samples(&mut self, m: &mut MuSher, mbps: u64, n: usize) {
            for _ in 0..n {
                self.sample(m, mbps);
            }
        }
    }

    /// Reference (5 samples + the 6th that completes it) at `mbps`.
    fn settle(m: &mut MuSher, d: &mut Drive, mbps: u64) {
        d.samples(m, mbps, 6);
        assert_eq!(m.last_rate, mbps * 1_000_000);
    }

    #[test]
    fn samples_every_100_ms_and_200_ms_while_searching() {
        let mut m = MuSher::new(50);
        let mut d = Drive::new(&mut m);
        assert_eq!(m.next_tick(d.now), Some(d.now + REGULAR_INTERVAL));
        settle(&mut m, &mut d, 1000);
        d.samples(&mut m, 700, 5);
        assert!(m.in_search());
        assert_eq!(m.next_tick(d.now), Some(d.now + SEARCH_INTERVAL));
    }

    #[test]
    fn rate_change_triggers_after_five_samples_not_four() {
        let mut m = MuSher::new(50);
        let mut d = Drive::new(&mut m);
        settle(&mut m, &mut d, 1000);
        // 4 samples 300 Mbps below the reference, then back: no search.
        d.samples(&mut m, 700, 4);
        assert!(!m.in_search());
        d.samples(&mut m, 1000, 1);
        assert_eq!(m.rate_cnt, 0);
        // A change under 200 Mbps never triggers.
        d.samples(&mut m, 850, 10);
        assert!(!m.in_search());
        // 5 samples more than 200 Mbps off the reference: search.
        d.samples(&mut m, 1000, 1);
        d.samples(&mut m, 1250, 4);
        assert!(!m.in_search());
        d.samples(&mut m, 1250, 1);
        assert!(m.in_search());
        assert_eq!(m.searches(), 1);
    }

    #[test]
    fn send_buffer_shrink_triggers_after_five_samples() {
        let mut m = MuSher::new(50);
        let mut d = Drive::new(&mut m);
        d.buf = 300_000;
        settle(&mut m, &mut d, 1000);
        d.buf = 200_000; // 100 kB below the reference, rate unchanged
        d.samples(&mut m, 1000, 4);
        assert!(!m.in_search());
        d.samples(&mut m, 1000, 1);
        assert!(m.in_search());
        // A 50 kB shrink is below the threshold.
        let mut m = MuSher::new(50);
        let mut d = Drive::new(&mut m);
        d.buf = 300_000;
        settle(&mut m, &mut d, 1000);
        d.buf = 250_000;
        d.samples(&mut m, 1000, 10);
        assert!(!m.in_search());
    }

    fn triggered(ratio: u32) -> (MuSher, Drive) {
        let mut m = MuSher::new(ratio);
        let mut d = Drive::new(&mut m);
        settle(&mut m, &mut d, 1000);
        d.samples(&mut m, 700, 5);
        assert!(m.in_search());
        (m, d)
    }

    #[test]
    fn search_goes_right_first_and_keeps_stepping_while_better() {
        let (mut m, mut d) = triggered(50);
        d.sample(&mut m, 700); // INIT_RIGHT at the initial ratio's rate
        assert_eq!(m.ratio(), 55, "first step is to the right");
        d.sample(&mut m, 720); // +20 Mbps > 5: keep going right
        assert_eq!(m.ratio(), 60);
        d.sample(&mut m, 730);
        assert_eq!(m.ratio(), 65);
        d.sample(&mut m, 725); // drop: step back and stop
        assert_eq!(m.ratio(), 60);
        assert!(!m.in_search());
    }

    #[test]
    fn search_tries_left_then_reverts_if_nothing_helps() {
        let (mut m, mut d) = triggered(50);
        d.sample(&mut m, 700);
        assert_eq!(m.ratio(), 55);
        d.sample(&mut m, 703); // +3 Mbps is not an improvement
        assert_eq!(m.ratio(), 55, "INIT_LEFT acts on the next sample");
        d.sample(&mut m, 703);
        assert_eq!(m.ratio(), 45, "left probe");
        d.sample(&mut m, 700); // no better on the left either
        assert_eq!(m.ratio(), 50, "revert to the initial ratio");
        assert!(!m.in_search());
    }

    #[test]
    fn search_goes_left_when_left_is_better() {
        let (mut m, mut d) = triggered(50);
        d.sample(&mut m, 700);
        d.sample(&mut m, 690);
        d.sample(&mut m, 690);
        assert_eq!(m.ratio(), 45);
        d.sample(&mut m, 760);
        assert_eq!(m.ratio(), 40);
        d.sample(&mut m, 800);
        assert_eq!(m.ratio(), 35);
        d.sample(&mut m, 790);
        assert_eq!(m.ratio(), 40);
        assert!(!m.in_search());
    }

    #[test]
    fn ratio_stays_within_5_and_95() {
        // At 95 the right probe is skipped: the first move is to the left.
        let (mut m, mut d) = triggered(95);
        d.sample(&mut m, 700);
        assert_eq!(m.ratio(), 95);
        d.sample(&mut m, 700);
        assert_eq!(m.ratio(), 90);
        // Rising all the way right from 85 stops at 95.
        let (mut m, mut d) = triggered(85);
        for r in [700, 800, 900, 1000, 1100] {
            d.sample(&mut m, r);
        }
        assert_eq!(m.ratio(), 95);
        assert!(!m.in_search());
        // Rising all the way left from 15 stops at 5.
        let (mut m, mut d) = triggered(15);
        d.sample(&mut m, 700); // right probe 20
        d.sample(&mut m, 700); // not better
        d.sample(&mut m, 700); // left probe 10
        assert_eq!(m.ratio(), 10);
        for r in [800, 900, 1000, 1100] {
            d.sample(&mut m, r);
        }
        assert_eq!(m.ratio(), 5);
        assert!(!m.in_search());
        // At 5 nothing helps: back to 5, never below.
        let (mut m, mut d) = triggered(5);
        for _ in 0..4 {
            d.sample(&mut m, 700);
        }
        assert_eq!(m.ratio(), 5);
        assert!(!m.in_search());
    }

    #[test]
    fn at_most_one_search_per_3_s() {
        let (mut m, mut d) = triggered(50);
        let t_first = d.now;
        // Finish the search quickly (right better, then worse).
        d.sample(&mut m, 700);
        d.sample(&mut m, 720);
        d.sample(&mut m, 710);
        assert!(!m.in_search());
        // New reference at 1000, then a big change again: held off (< 3 s).
        settle(&mut m, &mut d, 1000);
        d.samples(&mut m, 500, 5);
        assert!(d.now.saturating_sub(t_first) < HOLD_OFF);
        assert!(!m.in_search());
        assert_eq!(m.searches(), 1);
        // The held-off trigger restarted the reference; keep the change until 3 s have passed.
        while d.now.saturating_sub(t_first) < HOLD_OFF + Time::from_ms(1200) && !m.in_search() {
            settle(&mut m, &mut d, 1000);
            d.samples(&mut m, 500, 5);
        }
        assert!(m.in_search());
        assert_eq!(m.searches(), 2);
        assert!(d.now.saturating_sub(t_first) >= HOLD_OFF);
    }

    #[test]
    fn up_after_blockage_clears_pf_and_restores_cwnd() {
        let mut m = MuSher::new(73);
        let mut s0 = sf(0);
        s0.pf = true;
        s0.cwnd = 1;
        let mut act = Vec::new();
        m.on_link_event(Time::ZERO, 0, LinkEvent::Up, &ConnView::default(), &[s0, sf(1)], &mut act);
        assert_eq!(act, vec![SchedAction::ClearPf(0), SchedAction::RestoreCwnd(0)]);
    }

    #[test]
    fn select_follows_the_ratio() {
        let mut m = MuSher::new(73);
        let sfs = [sf(0), sf(1)];
        let mut n = [0u32; 2];
        for _ in 0..200 {
            n[m.select(Time::ZERO, &ConnView::default(), &sfs, &mut Vec::new()).unwrap()] += 1;
        }
        assert_eq!(n, [146, 54]);
        assert_eq!(m.metric(), 73.0);
    }
}
