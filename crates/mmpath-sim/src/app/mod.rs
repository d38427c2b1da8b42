//! Applications: what feeds a flow. Each is a small state machine the engine wakes at its
//! start, at its own timer, and at its stop.

use crate::scenario::AppKind;
use crate::time::Time;

/// iperf3's pacing timer for -b (--pacing-timer default 1000 us): a rate-limited TCP source
/// hands the socket rate x 1 ms of data every millisecond.
pub const RATE_TICK: Time = Time::from_ms(1);

#[derive(Debug, Clone)]
pub enum App {
    /// Backlogged: everything (or `bytes`) is available at the start.
    Bulk { bytes: Option<u64> },
    /// TCP source at `rate_bps` of payload.
    Rate { rate_bps: u64, bytes: Option<u64>, written: u64, ticks: u64 },
    /// UDP constant bit rate: datagrams of `payload` bytes at `rate_bps` of payload.
    Cbr { rate_bps: u64, payload: u32, bytes: Option<u64>, sent: u64 },
}

impl App {
    pub fn new(kind: AppKind, rate_mbps: Option<f64>, bytes: Option<u64>, payload: u32) -> App {
        let rate_bps = rate_mbps.map(|r| (r * 1e6).round() as u64).unwrap_or(0).max(1);
        match kind {
            AppKind::Bulk => App::Bulk { bytes },
            AppKind::Rate => App::Rate { rate_bps, bytes, written: 0, ticks: 0 },
            AppKind::Cbr => App::Cbr { rate_bps, payload, bytes, sent: 0 },
        }
    }

    /// Rate app: bytes written after `ticks` pacing ticks (exact, no drift).
    pub fn rate_written(rate_bps: u64, ticks: u64, cap: Option<u64>) -> u64 {
        let w = (rate_bps as u128 * RATE_TICK.ns() as u128 * ticks as u128 / 8 / 1_000_000_000) as u64;
        cap.map_or(w, |c| w.min(c))
    }

    /// CBR app: send time of datagram `k` counted from the start (exact, no drift).
    pub fn cbr_offset(rate_bps: u64, payload: u32, k: u64) -> Time {
        Time((k as u128 * payload as u128 * 8 * 1_000_000_000 / rate_bps as u128) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_source_writes_rate_times_time() {
        // 100 Mbit/s for 1000 ticks of 1 ms = 12.5 MB.
        assert_eq!(App::rate_written(100_000_000, 1000, None), 12_500_000);
        assert_eq!(App::rate_written(100_000_000, 1000, Some(1_000)), 1_000);
    }

    #[test]
    fn cbr_spacing_is_exact() {
        // 1472-byte datagrams at 1 Gbit/s: 11.776 us apart.
        assert_eq!(App::cbr_offset(1_000_000_000, 1472, 1), Time::from_ns(11_776));
        assert_eq!(App::cbr_offset(1_000_000_000, 1472, 1000), Time::from_ns(11_776_000));
    }
}
