//! TCP Vegas as in Linux net/ipv4/tcp_vegas.c (Brakmo & Peterson 1995).
//!
//! Once per RTT Vegas compares the window with what the path carries at the base (minimum)
//! RTT: diff = cwnd x (rtt - base_rtt) / base_rtt is the number of packets it keeps queued.
//! Below alpha (2) it adds a packet, above beta (4) it removes one; in slow start it leaves as
//! soon as diff exceeds gamma (1). Losses are handled as by Reno. That is why Vegas keeps
//! queues short and latency low, and loses against loss-based flows (seed 003).

use super::{AckInfo, CaState, CongestionControl, TxStart, Window};
use crate::time::Time;

/// tcp_vegas.c module parameters: alpha = 2, beta = 4, gamma = 1 (packets).
pub const ALPHA: u32 = 2;
pub const BETA: u32 = 4;
pub const GAMMA: u32 = 1;

pub struct Vegas {
    /// Active only in the Open state (tcp_vegas_state).
    doing_vegas_now: bool,
    /// snd_nxt at the start of the current RTT round.
    beg_snd_nxt: u64,
    /// RTT samples in this round, and their minimum.
    cnt_rtt: u32,
    min_rtt: Option<Time>,
    /// The smallest RTT ever seen (propagation estimate).
    base_rtt: Option<Time>,
}

impl Vegas {
    pub fn new() -> Self {
        Vegas { doing_vegas_now: true, beg_snd_nxt: 0, cnt_rtt: 0, min_rtt: None, base_rtt: None }
    }

    pub fn base_rtt(&self) -> Option<Time> {
        self.base_rtt
    }

    fn reno(w: &mut Window, acked: u32) {
        let mut acked = acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let cwnd = w.cwnd;
        w.cong_avoid_ai(cwnd, acked);
    }

    /// tcp_vegas_ssthresh as of Linux 4.10 (seed 003's kernel): min(ssthresh, cwnd - 1). (Later
    /// kernels use min(ssthresh, cwnd).)
    fn vegas_ssthresh(w: &Window) -> u32 {
        w.ssthresh.min(w.cwnd.saturating_sub(1))
    }

    /// tcp_vegas_cong_avoid; `cwnd_limited` = tcp_is_cwnd_limited, which only its Reno fallback
    /// checks.
    fn avoid(&mut self, w: &mut Window, ack: &AckInfo, cwnd_limited: bool) {
        if !self.doing_vegas_now {
            if cwnd_limited {
                Self::reno(w, ack.acked);
            }
            return;
        }
        if ack.snd_una > self.beg_snd_nxt {
            // A round (one RTT) is over: adjust once.
            self.beg_snd_nxt = ack.snd_nxt;
            match (self.cnt_rtt, self.min_rtt, self.base_rtt) {
                (c, Some(rtt), Some(base)) if c > 2 => {
                    let cwnd = w.cwnd as u64;
                    // In microseconds, as tcp_vegas_cong_avoid's integer arithmetic.
                    let (rtt_us, base_us) = ((rtt.ns() / 1000).max(1), (base.ns() / 1000).max(1));
                    let target = (cwnd * base_us / rtt_us) as u32;
                    let diff = (cwnd * (rtt_us - base_us.min(rtt_us)) / base_us) as u32;
                    if diff > GAMMA && w.in_slow_start() {
                        // Going too fast: leave slow start at the rate the path carries.
                        w.cwnd = w.cwnd.min(target + 1);
                        w.ssthresh = Self::vegas_ssthresh(w);
                    } else if w.in_slow_start() {
                        w.slow_start(ack.acked);
                    } else if diff > BETA {
                        w.cwnd -= 1;
                        w.ssthresh = Self::vegas_ssthresh(w);
                    } else if diff < ALPHA {
                        w.cwnd += 1;
                    }
                    w.cwnd = w.cwnd.max(2);
                    // tcp_current_ssthresh (Vegas runs only in Open): at least 3/4 of cwnd.
                    w.ssthresh = w.ssthresh.max((w.cwnd >> 1) + (w.cwnd >> 2));
                }
                // Too few samples to trust: behave like Reno this round.
                _ => {
                    if cwnd_limited {
                        Self::reno(w, ack.acked)
                    }
                }
            }
            self.cnt_rtt = 0;
            self.min_rtt = None;
        } else if w.in_slow_start() {
            w.slow_start(ack.acked);
        }
    }
}

impl Default for Vegas {
    fn default() -> Self {
        Self::new()
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_rtt(&mut self, _w: &mut Window, ack: &AckInfo) {
        let Some(rtt) = ack.rtt else { return };
        // Linux adds 1 us so that a zero sample still counts.
        // tcp_vegas_pkts_acked: vrtt = rtt_us + 1 (microseconds; +1 so that a zero sample counts).
        let v = Time::from_us(rtt.ns() / 1000 + 1);
        self.base_rtt = Some(self.base_rtt.map_or(v, |b| b.min(v)));
        self.min_rtt = Some(self.min_rtt.map_or(v, |m| m.min(v)));
        self.cnt_rtt += 1;
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &AckInfo) {
        self.avoid(w, ack, true);
    }

    /// tcp_vegas_cong_avoid has no cwnd-limited test of its own: a round still ends (and the
    /// window is adjusted) when the sender did not fill cwnd; only its Reno fallback
    /// (tcp_reno_cong_avoid) returns early then.
    fn cong_avoid_not_cwnd_limited(&mut self, w: &mut Window, ack: &AckInfo) {
        self.avoid(w, ack, false);
    }

    /// Losses as Reno (tcp_vegas uses tcp_reno_ssthresh).
    fn ssthresh(&mut self, w: &Window) -> u32 {
        (w.cwnd >> 1).max(2)
    }

    fn on_state(&mut self, w: &mut Window, now: Time, state: CaState) {
        self.on_state_seq(w, now, state, self.beg_snd_nxt);
    }

    /// tcp_vegas_cwnd_event: data going out after an idle spell (CA_EVENT_TX_START; a restart
    /// after idle, CA_EVENT_CWND_RESTART, always comes with one) re-initialises Vegas
    /// (tcp_vegas_init): the base RTT is forgotten and a fresh round starts at snd_nxt
    /// (vegas_enable). The path's propagation delay is then measured again from the samples
    /// that follow.
    fn on_tx_start(&mut self, _w: &Window, ev: &TxStart) {
        self.base_rtt = None;
        self.doing_vegas_now = true;
        self.beg_snd_nxt = ev.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = None;
    }

    /// tcp_vegas_state: Vegas runs in Open only. Entering Open calls vegas_enable, which starts
    /// a fresh round at snd_nxt with no RTT samples (beg_snd_nxt = snd_nxt, cntRTT = 0,
    /// minRTT = infinity); any other state calls vegas_disable.
    fn on_state_seq(&mut self, _w: &mut Window, _now: Time, state: CaState, snd_nxt: u64) {
        if state == CaState::Open {
            self.doing_vegas_now = true;
            self.beg_snd_nxt = snd_nxt;
            self.cnt_rtt = 0;
            self.min_rtt = None;
        } else {
            self.doing_vegas_now = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::INFINITE_SSTHRESH;

    fn ack(rtt_ms: f64, snd_una: u64, snd_nxt: u64) -> AckInfo {
        AckInfo {
            now: Time::ZERO,
            acked: 1,
            rtt: Some(Time::from_ms_f64(rtt_ms)),
            prior_in_flight: 0,
            snd_una,
            snd_nxt,
            mss: 1448,
            pacing_rate_bps: 0,
        }
    }

    /// Feeds one RTT round of 5 ACKs at `rtt_ms`; the first ACK of a round closes the previous
    /// one (its snd_una passes the snd_nxt recorded at the previous boundary).
    fn round(v: &mut Vegas, w: &mut Window, rtt_ms: f64, round_no: u64) {
        for k in 0..5 {
            let a = ack(rtt_ms, round_no * 1000 + k + 1, (round_no + 1) * 1000);
            v.on_rtt(w, &a);
            v.cong_avoid(w, &a);
        }
    }

    #[test]
    fn grows_when_queueing_is_below_alpha_and_shrinks_above_beta() {
        let mut v = Vegas::new();
        let mut w = Window { cwnd: 20, ssthresh: 10, cwnd_cnt: 0 };
        // At the base RTT (10 ms) diff = 0 < alpha: +1 per round.
        for r in 1..=6 {
            round(&mut v, &mut w, 10.0, r);
        }
        assert_eq!(w.cwnd, 25, "+1 per RTT after the first round");
        // RTT 15 ms: diff = cwnd x 5 / 10 > beta: -1 per round (decisions use the last round's
        // samples, so the first round at 15 ms still sees a 10 ms minimum).
        for r in 7..=12 {
            round(&mut v, &mut w, 15.0, r);
        }
        assert_eq!(w.cwnd, 21, "+1 then -1 per RTT");
        assert!(w.ssthresh <= w.cwnd);
        // RTT 11.5 ms: diff = 21 x 1.5 / 10 = 3, between alpha and beta: the window holds.
        round(&mut v, &mut w, 11.5, 13);
        let held = w.cwnd;
        for r in 14..=18 {
            round(&mut v, &mut w, 11.5, r);
        }
        assert_eq!(w.cwnd, held);
    }

    #[test]
    fn leaves_slow_start_when_diff_exceeds_gamma() {
        let mut v = Vegas::new();
        let mut w = Window { cwnd: 40, ssthresh: INFINITE_SSTHRESH, cwnd_cnt: 0 };
        round(&mut v, &mut w, 10.0, 1);
        let before = w.cwnd;
        // 12 ms against a 10 ms base: diff = cwnd x 0.2 > gamma: cut to the target + 1.
        round(&mut v, &mut w, 12.0, 2);
        round(&mut v, &mut w, 12.0, 3);
        assert!(!w.in_slow_start(), "cwnd {} ssthresh {}", w.cwnd, w.ssthresh);
        assert!(w.cwnd < before + 10, "cwnd {} from {before}", w.cwnd);
    }

    /// tcp_vegas_ssthresh (4.10): leaving slow start or backing off sets ssthresh to at most
    /// cwnd - 1, so the flow is in congestion avoidance at once (then tcp_current_ssthresh).
    #[test]
    fn vegas_ssthresh_is_cwnd_minus_one() {
        let w = Window { cwnd: 40, ssthresh: INFINITE_SSTHRESH, cwnd_cnt: 0 };
        assert_eq!(Vegas::vegas_ssthresh(&w), 39);
        let w = Window { cwnd: 40, ssthresh: 20, cwnd_cnt: 0 };
        assert_eq!(Vegas::vegas_ssthresh(&w), 20);
    }

    /// vegas_enable on entering Open: the next round starts at snd_nxt, and samples taken
    /// before (during recovery) do not count.
    #[test]
    fn entering_open_starts_a_fresh_round_at_snd_nxt() {
        let mut v = Vegas::new();
        let mut w = Window { cwnd: 20, ssthresh: 10, cwnd_cnt: 0 };
        v.on_state_seq(&mut w, Time::ZERO, CaState::Recovery, 0);
        for k in 0..5 {
            v.on_rtt(&mut w, &ack(10.0, k, 100));
        }
        assert_eq!(v.cnt_rtt, 5);
        v.on_state_seq(&mut w, Time::ZERO, CaState::Open, 7_000);
        assert_eq!((v.cnt_rtt, v.min_rtt, v.beg_snd_nxt), (0, None, 7_000));
        assert!(v.doing_vegas_now);
        // An ACK below 7000 is inside the round: no adjustment (cwnd in CA holds).
        let a = ack(10.0, 6_000, 8_000);
        v.on_rtt(&mut w, &a);
        v.cong_avoid(&mut w, &a);
        assert_eq!(w.cwnd, 20);
    }

    /// tcp_vegas_cwnd_event: data after an idle spell re-initialises Vegas: the base RTT is
    /// measured again (the next samples set it, even above the old one) and a fresh round
    /// starts at snd_nxt.
    #[test]
    fn a_tx_start_forgets_the_base_rtt() {
        let mut v = Vegas::new();
        let mut w = Window { cwnd: 20, ssthresh: 10, cwnd_cnt: 0 };
        for k in 0..4 {
            v.on_rtt(&mut w, &ack(10.0, k, 100));
        }
        assert_eq!(v.base_rtt(), Some(Time::from_us(10_001)));
        let ev = TxStart {
            now: Time::from_secs(3),
            last_send: Time::from_secs(1),
            snd_nxt: 9_000,
            app_limited: true,
            srtt: None,
        };
        v.on_tx_start(&w, &ev);
        assert_eq!((v.base_rtt(), v.cnt_rtt, v.min_rtt, v.beg_snd_nxt), (None, 0, None, 9_000));
        assert!(v.doing_vegas_now);
        v.on_rtt(&mut w, &ack(12.0, 9_000, 10_000));
        assert_eq!(v.base_rtt(), Some(Time::from_us(12_001)), "the next sample is the new base");
    }

    #[test]
    fn halves_on_loss_like_reno() {
        let w = Window { cwnd: 30, ssthresh: 100, cwnd_cnt: 0 };
        assert_eq!(Vegas::new().ssthresh(&w), 15);
    }

    /// tcp_vegas_cong_avoid has no tcp_is_cwnd_limited test: a round that ends while the sender
    /// did not fill cwnd still adjusts the window (and starts a fresh round); only the Reno
    /// fallback (too few RTT samples) keeps the window then.
    #[test]
    fn adjusts_once_per_round_even_when_not_cwnd_limited() {
        let mut v = Vegas::new();
        let mut w = Window { cwnd: 20, ssthresh: 10, cwnd_cnt: 0 };
        for r in 1..=6 {
            for k in 0..5 {
                let a = ack(10.0, r * 1000 + k + 1, (r + 1) * 1000);
                v.on_rtt(&mut w, &a);
                v.cong_avoid_not_cwnd_limited(&mut w, &a);
            }
        }
        assert_eq!(w.cwnd, 25, "+1 per RTT after the first round, as when cwnd-limited");
        // Too few samples (no RTT on these ACKs): the Reno fallback, which does check.
        let mut v = Vegas::new();
        let mut w = Window { cwnd: 20, ssthresh: 10, cwnd_cnt: 0 };
        for r in 1..=50 {
            let a = AckInfo { rtt: None, ..ack(10.0, r * 1000 + 1, (r + 1) * 1000) };
            v.cong_avoid_not_cwnd_limited(&mut w, &a);
        }
        assert_eq!(w.cwnd, 20, "Reno does not grow an application-limited window");
        for r in 51..=90 {
            let a = AckInfo { rtt: None, acked: 20, ..ack(10.0, r * 1000 + 1, (r + 1) * 1000) };
            v.cong_avoid(&mut w, &a);
        }
        assert!(w.cwnd > 20, "but does when cwnd-limited");
    }
}
