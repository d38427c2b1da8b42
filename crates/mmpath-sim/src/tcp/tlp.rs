//! Tail loss probe timing (Linux 4.10 net/ipv4/tcp_output.c tcp_schedule_loss_probe;
//! draft-dukkipati-tcpm-tcp-loss-probe-01, net.ipv4.tcp_early_retrans = 3, the default since
//! Linux 3.10).
//!
//! The probe timeout (PTO) is two smoothed RTTs, at least 10 ms; with one packet outstanding
//! at least 1.5 srtt + TCP_DELACK_MAX, since its ACK may be delayed; before any RTT sample
//! TCP_TIMEOUT_INIT (1 s). A probe never fires later than the RTO would: if the PTO ends after
//! the pending RTO, the probe takes the RTO's place. (Linux computes this in jiffies; at
//! HZ = 1000 that rounds srtt up to the millisecond, which the 10 ms floor makes immaterial
//! here: the model uses nanoseconds.)

use super::rtt::INITIAL_RTO;
use crate::time::Time;

/// TCP_DELACK_MAX (include/net/tcp.h: HZ / 5).
pub const DELACK_MAX: Time = Time::from_ms(200);
/// The PTO floor, msecs_to_jiffies(10) in tcp_schedule_loss_probe.
pub const PTO_MIN: Time = Time::from_ms(10);

/// The probe timeout from `now`: `srtt` (None before the first sample), the packets
/// outstanding, and the time left until the pending RTO fires (None: no RTO pending).
pub fn probe_timeout(srtt: Option<Time>, packets_out: u32, rto_left: Option<Time>) -> Time {
    let mut pto = match srtt {
        Some(s) if s.ns() > 0 => Time(2 * s.ns()),
        _ => INITIAL_RTO,
    };
    if packets_out == 1 {
        let s = srtt.unwrap_or(Time::ZERO).ns();
        pto = pto.max(Time(s + s / 2) + DELACK_MAX);
    }
    pto = pto.max(PTO_MIN);
    // "If RTO is shorter, just schedule TLP in its place."
    if let Some(left) = rto_left {
        if pto > left && left > Time::ZERO {
            pto = left;
        }
    }
    pto
}

/// TCP_TIMEOUT_MIN_US (include/net/tcp.h, Linux >= 6.7): what current kernels add to 2 srtt for
/// the probe timeout, in place of 4.10's 10 ms floor.
pub const TIMEOUT_MIN_US: Time = Time::from_ms(2);

/// The probe timeout as current kernels compute it (Linux 6.7+ net/ipv4/tcp_output.c
/// tcp_schedule_loss_probe): 2 srtt + TCP_TIMEOUT_MIN_US (2 ms), or 2 srtt + the RTO floor
/// (`rto_min`, tcp_rto_min_us) with one packet out, whose ACK may be delayed; TCP_TIMEOUT_INIT
/// before any RTT sample; never later than the pending RTO. No 10 ms floor: on a sub-ms path
/// the probe comes ~2 ms after the last transmission (one jiffy at HZ = 250, where the caller's
/// usecs_to_jiffies rounds it), where Linux 4.10 waited 10 ms.
pub fn probe_timeout_modern(srtt: Option<Time>, packets_out: u32, rto_min: Time, rto_left: Option<Time>) -> Time {
    let mut pto = match srtt {
        Some(s) if s.ns() > 0 => Time(2 * s.ns()) + if packets_out == 1 { rto_min } else { TIMEOUT_MIN_US },
        _ => INITIAL_RTO,
    };
    if let Some(left) = rto_left {
        if pto > left && left > Time::ZERO {
            pto = left;
        }
    }
    pto
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modern_pto_is_two_srtt_plus_two_ms_without_a_floor() {
        let min = Time::from_ms(200);
        // A 0.2 ms path: 0.4 + 2 ms (4.10: 10 ms).
        assert_eq!(probe_timeout_modern(Some(Time::from_us(200)), 23, min, None), Time::from_us(2400));
        assert_eq!(probe_timeout(Some(Time::from_us(200)), 23, None), Time::from_ms(10));
        // A 20 ms path: 42 ms.
        assert_eq!(probe_timeout_modern(Some(Time::from_ms(20)), 10, min, None), Time::from_ms(42));
        // One packet out: the RTO floor instead of 2 ms.
        assert_eq!(probe_timeout_modern(Some(Time::from_ms(1)), 1, min, None), Time::from_ms(202));
        // No sample yet; an earlier RTO.
        assert_eq!(probe_timeout_modern(None, 10, min, None), Time::from_secs(1));
        assert_eq!(probe_timeout_modern(Some(Time::from_ms(1)), 1, min, Some(Time::from_ms(150))), Time::from_ms(150));
    }

    #[test]
    fn pto_is_two_srtt_with_a_10ms_floor() {
        // A 20 ms path: 40 ms.
        assert_eq!(probe_timeout(Some(Time::from_ms(20)), 10, None), Time::from_ms(40));
        // A 1 ms Wi-Fi path: the 10 ms floor.
        assert_eq!(probe_timeout(Some(Time::from_ms(1)), 10, None), Time::from_ms(10));
        // No RTT sample yet: TCP_TIMEOUT_INIT.
        assert_eq!(probe_timeout(None, 10, None), Time::from_secs(1));
    }

    #[test]
    fn one_packet_out_waits_for_a_delayed_ack() {
        // 1.5 x 1 ms + 200 ms.
        assert_eq!(probe_timeout(Some(Time::from_ms(1)), 1, None), Time::from_us(201_500));
        // Two packets out: no delayed-ACK allowance.
        assert_eq!(probe_timeout(Some(Time::from_ms(1)), 2, None), Time::from_ms(10));
        // 1.5 x 200 ms + 200 ms = 500 ms > 2 x 200 ms.
        assert_eq!(probe_timeout(Some(Time::from_ms(200)), 1, None), Time::from_ms(500));
    }

    #[test]
    fn never_later_than_the_rto() {
        // PTO 201.5 ms, RTO due in 150 ms: the probe goes at the RTO's time.
        assert_eq!(probe_timeout(Some(Time::from_ms(1)), 1, Some(Time::from_ms(150))), Time::from_ms(150));
        // An RTO further away does not matter.
        assert_eq!(probe_timeout(Some(Time::from_ms(1)), 5, Some(Time::from_ms(150))), Time::from_ms(10));
        // An RTO already due (delta <= 0): Linux keeps the computed timeout.
        assert_eq!(probe_timeout(Some(Time::from_ms(1)), 5, Some(Time::ZERO)), Time::from_ms(10));
    }
}
