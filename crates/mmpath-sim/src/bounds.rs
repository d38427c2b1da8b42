//! Upper bounds on values a user gives that only catch typos (a value off by many powers of
//! ten), far beyond anything mmpath models; one constant each, used wherever the value enters
//! (a scenario field, a `--set`, a trace file's rows). Times have theirs in time.rs
//! (`MAX_USER_SECS`).

/// The largest link rate, in Mbit/s: 10 Tbit/s, a thousand times the fastest 60 GHz PHY rate.
/// A path's `rate_mbps`, the backbone's, a schedule step's (scenario/validate.rs) and every rate
/// a trace replays (a CSV trace's `rate_mbps`, a Mahimahi trace's opportunities per bin;
/// link/trace/) are at most this.
pub const MAX_RATE_MBPS: f64 = 1e7;

/// [`MAX_RATE_MBPS`] in bit/s, as traces carry rates.
pub const MAX_RATE_BPS: u64 = MAX_RATE_MBPS as u64 * 1_000_000;
