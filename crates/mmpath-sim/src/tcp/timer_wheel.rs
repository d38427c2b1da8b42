//! When a Linux TCP timer fires: its timeouts count in jiffies (ticks of CONFIG_HZ), and the
//! kernel's timer wheel runs a timer at a tick its level's granularity rounds up to.
//!
//! The retransmission timer (RTO, tail loss probe, RACK reordering timeout) and the delayed-ACK
//! timer are `timer_list`s armed with `sk_reset_timer(sk, timer, jiffies + timeout)`, the
//! timeout in whole jiffies (`usecs_to_jiffies` rounds up; `icsk_rto` is held in jiffies and
//! doubled there on each expiry). Since Linux 4.8 the wheel (kernel/time/timer.c,
//! `calc_wheel_index` / `calc_index`) files a timer `delta = expires - clk` ticks ahead in level
//! `n`, the smallest with `delta < LVL_START(n + 1)` (63, 504, 4032, ... ticks: 63 << 3n), where
//! each bucket spans `8^n` ticks; it runs the timer at the start of the bucket after the one
//! `expires` falls in: `((expires >> 3n) + 1) << 3n` ("round up with level granularity" so it
//! never fires early). So a 200 ms RTO at HZ = 250 (50 ticks, level 0) fires 51 ticks after the
//! tick it was armed in, and a 1 s backed-off one (250 ticks, level 1) up to 8 ticks = 32 ms
//! late; from 2.016 s (504 ticks, level 2) the steps are 64 ticks = 256 ms.
//!
//! The kernel's tick phase against the simulation's clock is arbitrary: jiffies start at
//! INITIAL_JIFFIES at boot (include/linux/jiffies.h), and a run begins whenever it begins, so
//! where the wheel's 8-, 64- and 512-tick bucket edges fall against an outage is a property of
//! the machine's uptime, not of the scenario. A wheel therefore carries a `phase`: the kernel
//! clock's reading (in time) at the simulation's t = 0. `phase_for_seed` draws it, once per run,
//! from the run's seed (its own random stream), so each seed is one machine and a set of seeds
//! samples the spread a set of runs on a kernel shows (a backed-off retransmission that lands
//! 8 ms before a link's return at one phase lands after it at another). The wheel's clock is
//! taken to be jiffies when the timer is armed (`forward_timer_base` brings an idle base's
//! clock up to date in `__mod_timer`).

use crate::scenario::DEFAULT_KERNEL_HZ;
use crate::time::Time;

/// LVL_CLK_SHIFT: each level's buckets are 8 times the previous level's.
const LVL_CLK_SHIFT: u32 = 3;
/// LVL_BITS: 64 buckets per level.
const LVL_SIZE: u64 = 64;
/// LVL_DEPTH at HZ > 100 (9 levels; 8 at HZ = 100). The last level's reach (63 << 24 ticks,
/// days) is beyond TCP_RTO_MAX at every HZ, so the depth never binds here.
const LVL_DEPTH: u32 = 9;
const NS_PER_S: u128 = 1_000_000_000;
const NS_PER_S_U64: u64 = 1_000_000_000;

/// `a * b / c`, rounded up or down: in u64 while the product fits (every timeout TCP arms,
/// ticks of the first ~200 days), in u128 past it; the same value either way.
fn mul_div(a: u64, b: u64, c: u64, up: bool) -> u128 {
    match a.checked_mul(b) {
        Some(p) => u128::from(if up { p.div_ceil(c) } else { p / c }),
        None => {
            let (p, c) = (u128::from(a) * u128::from(b), u128::from(c));
            if up {
                p.div_ceil(c)
            } else {
                p / c
            }
        }
    }
}

/// The span the phase is drawn over: 2^40 ns (~18 min), many times the last level a TCP timer
/// reaches (TCP_RTO_MAX 120 s, level 4 at HZ = 250: 4096-tick buckets, 16 s), so every level's
/// bucket edges fall uniformly against the run.
const PHASE_SPAN_NS: u64 = 1 << 40;

/// A host kernel's tick and timer wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerWheel {
    hz: u32,
    /// The kernel clock (jiffies as time) at the simulation's t = 0.
    phase_ns: u64,
}

impl TimerWheel {
    /// A wheel ticking `hz` times a second (CONFIG_HZ; the scenario checks it is one Linux
    /// offers), tick 0 at t = 0.
    pub fn new(hz: u32) -> Self {
        TimerWheel { hz: hz.max(1), phase_ns: 0 }
    }

    /// The same wheel with the kernel clock reading `phase` at t = 0 (below PHASE_SPAN_NS).
    pub fn with_phase(self, phase: Time) -> Self {
        TimerWheel { phase_ns: phase.ns() % PHASE_SPAN_NS, ..self }
    }

    /// A run's kernel clock phase, drawn from its seed (`RngStream(seed, 0x6000)`, a stream of
    /// its own: no other draw moves): uniform over PHASE_SPAN_NS.
    pub fn phase_for_seed(seed: u64) -> Time {
        Time(crate::engine::RngStream::new(seed, 0x6000).next_u64() % PHASE_SPAN_NS)
    }

    pub fn hz(&self) -> u32 {
        self.hz
    }

    /// One jiffy (a duration).
    pub fn tick(&self) -> Time {
        Time(u64::try_from(NS_PER_S.div_ceil(u128::from(self.hz))).unwrap_or(u64::MAX))
    }

    /// `usecs_to_jiffies`: a duration in whole ticks, rounded up (exact at HZ = 300 too).
    pub fn ticks(&self, d: Time) -> u64 {
        mul_div(d.ns(), u64::from(self.hz), NS_PER_S_U64, true) as u64
    }

    /// The tick `now` falls in (jiffies: tick 0 at the kernel clock's 0, `phase` before t = 0).
    pub fn tick_of(&self, now: Time) -> u64 {
        let k = now.ns().saturating_add(self.phase_ns);
        mul_div(k, u64::from(self.hz), NS_PER_S_U64, false) as u64
    }

    /// When tick `k` starts, on the simulation's clock (never before t = 0: callers ask for
    /// ticks after the current one).
    fn start_of(&self, k: u64) -> Time {
        let ns = mul_div(k, NS_PER_S_U64, u64::from(self.hz), true);
        Time(u64::try_from(ns.saturating_sub(u128::from(self.phase_ns))).unwrap_or(u64::MAX))
    }

    /// A timer armed at `now` to expire `ticks` jiffies later (`sk_reset_timer(jiffies +
    /// ticks)`): when the wheel runs it.
    pub fn fire_at(&self, now: Time, ticks: u64) -> Time {
        let expires = self.tick_of(now).saturating_add(ticks);
        let shift = LVL_CLK_SHIFT * Self::level(ticks);
        self.start_of(((expires >> shift) + 1) << shift)
    }

    /// The expiry tick (`timer->expires`, what icsk_timeout holds) of a timer the wheel runs at
    /// `run`: one tick before, exactly, for a timer filed in level 0 (under 63 ticks ahead when
    /// armed: every probe and reordering timeout, an unbacked RTO up to ~250 ms at HZ = 250);
    /// for a later level the latest expiry that runs then, an upper bound.
    pub fn expiry_of(&self, run: Time) -> u64 {
        self.tick_of(run).saturating_sub(1)
    }

    /// `fire_at` for a timeout given as a duration (converted as `usecs_to_jiffies` does).
    pub fn after(&self, now: Time, d: Time) -> Time {
        self.fire_at(now, self.ticks(d))
    }

    /// calc_wheel_index's level for a timer `delta` ticks ahead: the first level whose start
    /// (LVL_START(n) = (LVL_SIZE - 1) << (n - 1) * LVL_CLK_SHIFT) lies beyond it.
    fn level(delta: u64) -> u32 {
        let mut n = 0;
        while n + 1 < LVL_DEPTH && delta >= (LVL_SIZE - 1) << (n * LVL_CLK_SHIFT) {
            n += 1;
        }
        n
    }
}

impl Default for TimerWheel {
    fn default() -> Self {
        TimerWheel::new(DEFAULT_KERNEL_HZ)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mul_div`'s u64 path gives the u128 results for `ticks` and `start_of`, and the u128 one
    /// takes over where the product would overflow.
    #[test]
    fn u64_arithmetic_matches_u128() {
        for hz in [100u32, 250, 300, 1000] {
            let w = TimerWheel::new(hz).with_phase(Time(987_654_321));
            let wide_ticks = |d: u64| (u128::from(d) * u128::from(hz)).div_ceil(NS_PER_S) as u64;
            let wide_start = |k: u64| {
                let ns = (u128::from(k) * NS_PER_S).div_ceil(u128::from(hz));
                u64::try_from(ns.saturating_sub(987_654_321)).unwrap_or(u64::MAX)
            };
            for d in [0u64, 1, 999_999, 1_000_000, 3_999_999, 200_000_000, 120_000_000_000, u64::MAX / 7, u64::MAX] {
                assert_eq!(w.ticks(Time(d)), wide_ticks(d), "ticks({d}) at HZ {hz}");
            }
            for k in [0u64, 1, 63, 1 << 20, 18_446_744_073, 18_446_744_074, u64::MAX / 3, u64::MAX] {
                assert_eq!(w.start_of(k), Time(wide_start(k)), "start_of({k}) at HZ {hz}");
            }
        }
    }

    /// The levels' starts as calc_wheel_index compares them: 63, 504, 4032 ticks.
    #[test]
    fn levels_start_at_63_504_4032_ticks() {
        assert_eq!(TimerWheel::level(0), 0);
        assert_eq!(TimerWheel::level(62), 0);
        assert_eq!(TimerWheel::level(63), 1);
        assert_eq!(TimerWheel::level(503), 1);
        assert_eq!(TimerWheel::level(504), 2);
        assert_eq!(TimerWheel::level(4031), 2);
        assert_eq!(TimerWheel::level(4032), 3);
    }

    /// At HZ = 250: a level-0 timer runs one tick after its expiry tick; a level-1 one at the
    /// next 8-tick (32 ms) boundary; a level-2 one at the next 64-tick (256 ms) boundary.
    /// Never early.
    #[test]
    fn timers_fire_at_their_levels_granularity_never_early() {
        let w = TimerWheel::new(250);
        assert_eq!(w.tick(), Time::from_ms(4));
        // 200 ms = 50 ticks, armed 1 ms into tick 0: expires at tick 50, runs at tick 51.
        assert_eq!(w.after(Time::from_ms(1), Time::from_ms(200)), Time::from_ms(204));
        // 400 ms = 100 ticks from tick 0: expires 100, level 1: bucket (100 >> 3) + 1 = 13 -> tick 104.
        assert_eq!(w.after(Time::ZERO, Time::from_ms(400)), Time::from_ms(416));
        // 800 ms = 200 ticks: (200 >> 3) + 1 = 26 -> tick 208 = 832 ms.
        assert_eq!(w.after(Time::ZERO, Time::from_ms(800)), Time::from_ms(832));
        // 1600 ms = 400 ticks: (400 >> 3) + 1 = 51 -> tick 408 = 1632 ms.
        assert_eq!(w.after(Time::ZERO, Time::from_ms(1600)), Time::from_ms(1632));
        // 3200 ms = 800 ticks, level 2: (800 >> 6) + 1 = 13 -> tick 832 = 3328 ms.
        assert_eq!(w.after(Time::ZERO, Time::from_ms(3200)), Time::from_ms(3328));
        for start_us in [0u64, 1, 3999, 4000, 123_457] {
            let now = Time::from_us(start_us);
            for ms in [1u64, 10, 40, 200, 252, 256, 1000, 2016, 5000, 120_000] {
                let at = w.after(now, Time::from_ms(ms));
                assert!(at >= now + Time::from_ms(ms), "{ms} ms from {start_us} us fired early at {at:?}");
            }
        }
    }

    /// A level-0 timer's expiry is the tick before the one it runs at.
    #[test]
    fn a_level_0_timers_expiry_is_one_tick_before_its_run() {
        let w = TimerWheel::new(250);
        let now = Time::from_ms(1);
        for ticks in [0u64, 1, 2, 50, 62] {
            assert_eq!(w.expiry_of(w.fire_at(now, ticks)), w.tick_of(now) + ticks);
        }
    }

    /// With a phase the wheel's bucket edges move with the kernel clock: a level-1 timer runs at
    /// the next 8-tick boundary of jiffies, not of the simulation's clock; never early, and the
    /// level-0 expiry rule holds at any phase.
    #[test]
    fn a_phase_moves_the_bucket_edges_with_the_kernel_clock() {
        // The kernel clock reads 3 ticks (12 ms) at t = 0: a 400 ms (100-tick) timer armed at
        // t = 0 expires at tick 103, runs at tick ((103 >> 3) + 1) << 3 = 104, t = 104 * 4 - 12 ms.
        let w = TimerWheel::new(250).with_phase(Time::from_ms(12));
        assert_eq!(w.tick_of(Time::ZERO), 3);
        assert_eq!(w.after(Time::ZERO, Time::from_ms(400)), Time::from_ms(404));
        // Without the phase the same timer runs 12 ms later (tick 104 of the simulation's clock).
        assert_eq!(TimerWheel::new(250).after(Time::ZERO, Time::from_ms(400)), Time::from_ms(416));
        // A sub-tick phase: tick 0 ends 1 ms after t = 0.
        let w = TimerWheel::new(250).with_phase(Time::from_ms(3));
        assert_eq!(w.tick_of(Time::from_us(999)), 0);
        assert_eq!(w.tick_of(Time::from_ms(1)), 1);
        for phase_us in [0u64, 1, 2_999, 17_123, 987_654_321] {
            let w = TimerWheel::new(250).with_phase(Time::from_us(phase_us));
            for start_us in [0u64, 1, 3_999, 123_457] {
                let now = Time::from_us(start_us);
                for ms in [1u64, 40, 200, 252, 1000, 2016, 5000, 120_000] {
                    let at = w.after(now, Time::from_ms(ms));
                    assert!(at >= now + Time::from_ms(ms), "{ms} ms from {start_us} us at phase {phase_us} us: {at:?}");
                }
                for ticks in [0u64, 1, 50, 62] {
                    assert_eq!(w.expiry_of(w.fire_at(now, ticks)), w.tick_of(now) + ticks);
                }
            }
        }
    }

    /// The phase is the seed's: the same for a seed, different between seeds, spread over the span.
    #[test]
    fn the_phase_is_drawn_from_the_seed() {
        assert_eq!(TimerWheel::phase_for_seed(1), TimerWheel::phase_for_seed(1));
        let phases: Vec<u64> = (1..=64).map(|s| TimerWheel::phase_for_seed(s).ns()).collect();
        assert!(phases.iter().all(|&p| p < PHASE_SPAN_NS));
        let mut distinct = phases.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), phases.len());
        // Where each falls within a 32 ms level-1 bucket at HZ = 250: both halves are hit.
        let in_bucket: Vec<u64> = phases.iter().map(|p| p % 32_000_000).collect();
        assert!(in_bucket.iter().any(|&x| x < 16_000_000) && in_bucket.iter().any(|&x| x >= 16_000_000));
    }

    /// usecs_to_jiffies rounds up: 201 ms is 51 ticks at HZ = 250, 201 at HZ = 1000.
    #[test]
    fn durations_round_up_to_whole_ticks() {
        assert_eq!(TimerWheel::new(250).ticks(Time::from_ms(201)), 51);
        assert_eq!(TimerWheel::new(1000).ticks(Time::from_ms(201)), 201);
        assert_eq!(TimerWheel::new(300).ticks(Time::from_ms(200)), 60);
        assert_eq!(TimerWheel::new(100).ticks(Time::ZERO), 0);
    }
}
