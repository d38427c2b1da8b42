//! Simulated time: integer nanoseconds.
//!
//! Integer time keeps runs bit-for-bit reproducible (no float accumulation in the clock) and
//! nanoseconds resolve a 7.9 kB frame at 4.6 Gbit/s (13.7 us) with room to spare; u64 ns
//! covers 584 years.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// The latest time, and the longest span, a user may give, in seconds: one day. Every time that
/// enters from outside goes through this one bound: a scenario's times, spans and delays
/// (scenario.rs `at_most_secs` / `at_most_ms`, whichever way they were set, file or `--set`)
/// and the rows of a trace file (link/trace/). One day is the longest run mmpath accepts
/// (`duration_s`), so a later time could never take effect and is a typo; and it keeps every
/// sum of user times (an event's `t_s + duration_s`, a trace's `start_s` plus a row's time, a
/// delay on top of either) far inside u64 nanoseconds (584 years), where 1e300 used to
/// saturate the clock silently.
pub const MAX_USER_SECS: u64 = 86_400;

/// A point in simulated time, or a span of it, in nanoseconds.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_ns(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Time {
        Time(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN inputs clamp to zero.
    pub fn from_secs_f64(s: f64) -> Time {
        if s.is_nan() || s <= 0.0 {
            Time(0)
        } else {
            Time((s * 1e9).round() as u64)
        }
    }
    pub fn from_ms_f64(ms: f64) -> Time {
        Time::from_secs_f64(ms / 1e3)
    }
    pub const fn ns(self) -> u64 {
        self.0
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn ms_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn us_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
    /// Time to serialise `bytes` at `rate_bps`, rounded up to whole nanoseconds.
    pub fn transmission(bytes: u64, rate_bps: u64) -> Time {
        debug_assert!(rate_bps > 0);
        // bit-nanoseconds fit in u64 for any frame (under 2.3 GB), and a u64 division is a
        // fraction of a u128 one (a libcall); the quotient is the same either way.
        match bytes.checked_mul(8 * 1_000_000_000) {
            Some(bits) => Time(bits.div_ceil(rate_bps)),
            None => Self::transmission_u128(bytes, rate_bps),
        }
    }

    /// `transmission` beyond u64 bit-nanoseconds. Out of line: its libcall would otherwise make
    /// every caller (a link's per-packet paths) save registers.
    #[cold]
    #[inline(never)]
    fn transmission_u128(bytes: u64, rate_bps: u64) -> Time {
        Time((bytes as u128 * 8 * 1_000_000_000).div_ceil(rate_bps as u128) as u64)
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, o: Time) -> Time {
        Time(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Time {
    fn add_assign(&mut self, o: Time) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for Time {
    type Output = Time;
    fn sub(self, o: Time) -> Time {
        debug_assert!(self.0 >= o.0, "time went backwards: {} - {}", self.0, o.0);
        Time(self.0.saturating_sub(o.0))
    }
}
impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn transmission_time_rounds_up() {
        // 1500 bytes at 1 Gbit/s = 12 us exactly.
        assert_eq!(Time::transmission(1500, 1_000_000_000), Time::from_us(12));
        // 7914 bytes at 2310 Mbit/s = 27407.79 ns -> 27408 ns.
        assert_eq!(Time::transmission(7914, 2_310_000_000).ns(), 27408);
        // Beyond u64 bit-nanoseconds (over 2.3 GB) it still rounds up exactly.
        assert_eq!(Time::transmission(3_000_000_000, 7).ns(), (24_000_000_000_000_000_000u128).div_ceil(7) as u64);
    }
    #[test]
    fn float_conversions() {
        assert_eq!(Time::from_secs_f64(0.5), Time::from_ms(500));
        assert_eq!(Time::from_ms_f64(0.25), Time::from_us(250));
        assert_eq!(Time::from_secs_f64(-1.0), Time::ZERO);
    }
}
