//! RTT estimation and the retransmission timeout, as Linux computes them.
//!
//! RFC 6298 smoothing (alpha 1/8, beta 1/4). Linux departs from the RFC in the RTO formula:
//! `rto = srtt + max(4 * rttvar, tcp_rto_min)` (net/ipv4/tcp_input.c `tcp_set_rto`, where
//! `rttvar_us = max(mdev_max_us, tcp_rto_min_us)`), so on a 1 ms path the RTO is ~201 ms
//! rather than the RFC's 1 s floor. Initial RTO 1 s (TCP_TIMEOUT_INIT), maximum 120 s
//! (TCP_RTO_MAX), exponential backoff on each expiry, reset by the next valid RTT sample
//! (RFC 6298 section 5.7; Linux resets icsk_backoff in tcp_ack_update_rtt).

use crate::scenario::{err, ScenarioError};
use crate::time::Time;

/// Linux TCP_TIMEOUT_INIT.
pub const INITIAL_RTO: Time = Time::from_secs(1);
/// Linux TCP_RTO_MAX.
pub const MAX_RTO: Time = Time::from_secs(120);

/// Checks a flow's RTO floor (`tcp.min_rto_ms`, named `field`) against the ceiling. Linux
/// bounds every RTO by TCP_RTO_MAX (120 s, include/net/tcp.h; tcp_bound_rto): a larger floor
/// could never apply (`RttEstimator` caps the RTO the same way).
pub fn validate_min_rto(field: &str, min_rto_ms: f64) -> Result<(), ScenarioError> {
    let max_rto_ms = MAX_RTO.ns() / 1_000_000;
    if min_rto_ms > max_rto_ms as f64 {
        return Err(err(field, format!("must be at most {max_rto_ms} ms, Linux's TCP_RTO_MAX (got {min_rto_ms})")));
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt_ns: Option<u64>,
    rttvar_ns: u64,
    min_rtt_ns: u64,
    min_rto: Time,
    backoff: u32,
}

impl RttEstimator {
    pub fn new(min_rto: Time) -> Self {
        RttEstimator { srtt_ns: None, rttvar_ns: 0, min_rtt_ns: u64::MAX, min_rto, backoff: 0 }
    }

    /// Feeds one RTT sample (Karn's rule is the caller's: never from a retransmitted segment).
    pub fn sample(&mut self, rtt: Time) {
        let r = rtt.ns().max(1);
        self.min_rtt_ns = self.min_rtt_ns.min(r);
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(r);
                self.rttvar_ns = r / 2;
            }
            Some(s) => {
                let err = s.abs_diff(r);
                // rttvar = 3/4 rttvar + 1/4 |srtt - r|; srtt = 7/8 srtt + 1/8 r
                self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
                self.srtt_ns = Some((7 * s + r) / 8);
            }
        }
        self.backoff = 0;
    }

    /// The RTO floor (tcp.min_rto_ms; Linux's tcp_rto_min_us).
    pub fn min_rto(&self) -> Time {
        self.min_rto
    }

    pub fn srtt(&self) -> Option<Time> {
        self.srtt_ns.map(Time)
    }

    pub fn rttvar(&self) -> Time {
        Time(self.rttvar_ns)
    }

    pub fn min_rtt(&self) -> Option<Time> {
        (self.min_rtt_ns != u64::MAX).then_some(Time(self.min_rtt_ns))
    }

    /// The RTO without backoff.
    pub fn base_rto(&self) -> Time {
        match self.srtt_ns {
            None => INITIAL_RTO,
            Some(s) => Time(s + (4 * self.rttvar_ns).max(self.min_rto.ns())).min(MAX_RTO),
        }
    }

    /// The RTO with the current exponential backoff applied.
    pub fn rto(&self) -> Time {
        let base = self.base_rto().ns();
        let shifted = base.checked_shl(self.backoff).unwrap_or(u64::MAX);
        Time(if self.backoff >= 63 { u64::MAX } else { shifted }).min(MAX_RTO)
    }

    /// An RTO expired: double the timeout.
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(16);
    }

    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Forget the backoff (a valid RTT sample does this; so does restoring a window).
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_rto_is_one_second() {
        assert_eq!(RttEstimator::new(Time::from_ms(200)).rto(), Time::from_secs(1));
    }

    #[test]
    fn linux_min_rto_dominates_on_short_paths() {
        let mut e = RttEstimator::new(Time::from_ms(200));
        for _ in 0..50 {
            e.sample(Time::from_ms(1));
        }
        let rto = e.rto();
        assert!(rto >= Time::from_ms(200) && rto <= Time::from_ms(202), "{rto:?}");
    }

    #[test]
    fn rto_doubles_on_backoff_and_resets_on_sample() {
        let mut e = RttEstimator::new(Time::from_ms(200));
        e.sample(Time::from_ms(10));
        let base = e.rto();
        e.back_off();
        assert_eq!(e.rto(), Time(base.ns() * 2));
        e.back_off();
        assert_eq!(e.rto(), Time(base.ns() * 4));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), MAX_RTO, "capped at 120 s");
        e.sample(Time::from_ms(10));
        assert_eq!(e.backoff(), 0);
        assert!(e.rto() < Time(base.ns() * 2));
    }

    #[test]
    fn smoothing_follows_rfc6298() {
        let mut e = RttEstimator::new(Time::from_ms(200));
        e.sample(Time::from_ms(100));
        assert_eq!(e.srtt(), Some(Time::from_ms(100)));
        assert_eq!(e.rttvar(), Time::from_ms(50));
        e.sample(Time::from_ms(200));
        // srtt = 7/8*100 + 1/8*200 = 112.5 ms; rttvar = 3/4*50 + 1/4*100 = 62.5 ms
        assert_eq!(e.srtt(), Some(Time::from_us(112_500)));
        assert_eq!(e.rttvar(), Time::from_us(62_500));
    }
}
