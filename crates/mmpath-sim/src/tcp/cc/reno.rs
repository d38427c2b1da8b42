//! NewReno's window rules (RFC 5681 / RFC 6582; Linux tcp_reno_cong_avoid, tcp_reno_ssthresh).
//! The NewReno part, recovery that survives partial ACKs, lives in the sender's SACK-based
//! recovery (RFC 6675), which Linux uses for every algorithm.

use super::{AckInfo, CongestionControl, Window};

pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &AckInfo) {
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let cwnd = w.cwnd;
        w.cong_avoid_ai(cwnd, acked);
    }

    /// Halve, at least 2 packets (Linux tcp_reno_ssthresh).
    fn ssthresh(&mut self, w: &Window) -> u32 {
        (w.cwnd >> 1).max(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Time;

    fn ack(acked: u32) -> AckInfo {
        AckInfo {
            now: Time::ZERO,
            acked,
            rtt: None,
            prior_in_flight: 0,
            snd_una: 0,
            snd_nxt: 0,
            mss: 1448,
            pacing_rate_bps: 0,
        }
    }

    #[test]
    fn doubles_per_rtt_in_slow_start_then_adds_one() {
        let mut r = Reno;
        let mut w = Window::new(10);
        r.cong_avoid(&mut w, &ack(10));
        assert_eq!(w.cwnd, 20);
        w.ssthresh = 20;
        for _ in 0..20 {
            r.cong_avoid(&mut w, &ack(1));
        }
        assert_eq!(w.cwnd, 21);
    }

    #[test]
    fn halves_on_loss() {
        let w = Window { cwnd: 41, ssthresh: 100, cwnd_cnt: 0 };
        assert_eq!(Reno.ssthresh(&w), 20);
        let w = Window { cwnd: 3, ssthresh: 100, cwnd_cnt: 0 };
        assert_eq!(Reno.ssthresh(&w), 2);
    }
}
