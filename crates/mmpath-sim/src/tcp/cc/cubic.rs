//! CUBIC as in Linux net/ipv4/tcp_cubic.c (RFC 9438), with HyStart.
//!
//! W(t) = C (t - K)^3 + W_max with K = cbrt(W_max (1 - beta) / C), where t counts from the
//! start of the congestion-avoidance epoch plus the minimum RTT (Linux adds `delay_min` so the
//! target is where the window should be one RTT from now). The window grows by
//! 1 / cnt per ACKed packet with cnt = cwnd / (target - cwnd), bounded by the TCP-friendly
//! (Reno-equivalent) window. Linux works in fixed point on jiffies; this port keeps Linux's
//! structure and integer window but computes the cubic in f64 seconds (same curve, no
//! 1/1024 s quantisation).

use super::{AckInfo, CaState, CongestionControl, Window};
use crate::time::Time;

/// beta = 717/1024 ~ 0.7 (tcp_cubic.c `beta`).
pub const BETA: f64 = 717.0 / 1024.0;
const BETA_SCALE_1024: u32 = 717;
/// C: Linux's bic_scale 41 -> cube_rtt_scale 410 / 1024 = 0.4004 (RFC 9438: 0.4).
pub const C: f64 = 410.0 / 1024.0;
/// TCP-friendly estimator step: 8 (1024 + 717) / 3 / (1024 - 717) = 15 (integer, as in Linux).
const FRIENDLY_BETA_SCALE: u32 = 8 * (1024 + 717) / 3 / (1024 - 717);
/// Linux recomputes the target at most every HZ/32 while cwnd is unchanged.
const RECALC_INTERVAL: Time = Time::from_us(31_250);
/// HyStart (tcp_cubic.c): only above 16 packets; ACK trains closer than 2 ms; 8 RTT samples
/// per round; delay threshold delay_min/8 clamped to [4, 16] ms.
const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_ACK_DELTA: Time = Time::from_ms(2);
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN: Time = Time::from_ms(4);
const HYSTART_DELAY_MAX: Time = Time::from_ms(16);
/// sk_gso_max_size (64 KB) used by hystart_ack_delay.
const GSO_MAX_SIZE: u64 = 65_536;

pub struct Cubic {
    hystart: bool,
    fast_convergence: bool,
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: Option<Time>,
    origin_point: u32,
    k_s: f64,
    delay_min: Option<Time>,
    epoch_start: Option<Time>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    // HyStart
    found: bool,
    round_start: Time,
    end_seq: u64,
    last_ack: Time,
    curr_rtt: Time,
    sample_cnt: u32,
}

impl Cubic {
    pub fn new(hystart: bool) -> Self {
        Cubic {
            hystart,
            fast_convergence: true,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            origin_point: 0,
            k_s: 0.0,
            delay_min: None,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            round_start: Time::ZERO,
            end_seq: 0,
            last_ack: Time::ZERO,
            curr_rtt: Time::MAX,
            sample_cnt: 0,
        }
    }

    /// W_max as CUBIC currently remembers it (packets).
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// K in seconds for the current epoch.
    pub fn k_seconds(&self) -> f64 {
        self.k_s
    }

    pub fn hystart_found(&self) -> bool {
        self.found
    }

    fn reset(&mut self) {
        let (hystart, fc) = (self.hystart, self.fast_convergence);
        *self = Cubic::new(hystart);
        self.fast_convergence = fc;
    }

    fn hystart_reset(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = Time::MAX;
        self.sample_cnt = 0;
    }

    /// bictcp_update: recompute cnt, the number of ACKed packets per +1 of cwnd.
    fn update(&mut self, cwnd: u32, acked: u32, now: Time) {
        self.ack_cnt = self.ack_cnt.saturating_add(acked);
        if self.last_cwnd == cwnd {
            if let Some(lt) = self.last_time {
                if now.saturating_sub(lt) <= RECALC_INTERVAL {
                    return;
                }
            }
        }
        self.last_cwnd = cwnd;
        self.last_time = Some(now);

        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k_s = 0.0;
                    self.origin_point = cwnd;
                } else {
                    self.k_s = ((self.last_max_cwnd - cwnd) as f64 / C).cbrt();
                    self.origin_point = self.last_max_cwnd;
                }
                now
            }
        };

        // t: time since the epoch began plus the minimum RTT, in seconds.
        let t = (now - epoch).secs_f64() + self.delay_min.map_or(0.0, |d| d.secs_f64());
        let target = self.origin_point as f64 + C * (t - self.k_s).powi(3);
        let target = if target < 0.0 { 0 } else { target.floor() as u32 };
        self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
        // In the first epoch (no loss seen yet) grow at least as fast as 1 packet per 20 ACKs.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }

        // TCP-friendly region: track what Reno would have and do not grow slower than it.
        let delta = (cwnd * FRIENDLY_BETA_SCALE) >> 3;
        if delta > 0 {
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(2);
    }

    /// HyStart's two exit signals: an ACK train lasting half the minimum RTT, or the RTT of
    /// this round rising above delay_min + clamp(delay_min / 8, 4 ms, 16 ms).
    fn hystart_update(&mut self, w: &mut Window, delay: Time, ack: &AckInfo) {
        let now = ack.now;
        let delay_min = self.delay_min.unwrap_or(delay);
        if now.saturating_sub(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            // hystart_ack_delay: time to send 4 GSO super-packets at the pacing rate, <= 1 ms.
            let ack_delay = (GSO_MAX_SIZE * 4 * 8 * 1_000_000_000)
                .checked_div(ack.pacing_rate_bps)
                .map_or(Time::ZERO, |ns| Time(ns.min(1_000_000)));
            // Without fq pacing Linux halves the threshold.
            let threshold = Time((delay_min + ack_delay).ns() / 2);
            if now.saturating_sub(self.round_start) > threshold {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
        if self.curr_rtt > delay {
            self.curr_rtt = delay;
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = Time(delay_min.ns() / 8).max(HYSTART_DELAY_MIN).min(HYSTART_DELAY_MAX);
            if self.curr_rtt > delay_min + thresh {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &AckInfo) {
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(w.cwnd, acked, ack.now);
        let cnt = self.cnt;
        w.cong_avoid_ai(cnt, acked);
    }

    /// recalc_ssthresh with fast convergence: a flow that lost below its previous W_max
    /// remembers a lower W_max to leave room for newcomers.
    fn ssthresh(&mut self, w: &Window) -> u32 {
        self.epoch_start = None;
        if w.cwnd < self.last_max_cwnd && self.fast_convergence {
            self.last_max_cwnd = (w.cwnd * (1024 + BETA_SCALE_1024)) / (2 * 1024);
        } else {
            self.last_max_cwnd = w.cwnd;
        }
        ((w.cwnd * BETA_SCALE_1024) / 1024).max(2)
    }

    fn on_rtt(&mut self, w: &mut Window, ack: &AckInfo) {
        let Some(rtt) = ack.rtt else { return };
        // Discard delay samples right after fast recovery (tcp_cubic.c, 1 s).
        if let Some(e) = self.epoch_start {
            if ack.now.saturating_sub(e) < Time::from_secs(1) {
                return;
            }
        }
        let delay = rtt.max(Time::from_us(1));
        if self.delay_min.is_none_or(|d| d > delay) {
            self.delay_min = Some(delay);
        }
        if self.hystart && ack.snd_una > self.end_seq {
            self.hystart_reset(ack.now, ack.snd_nxt);
        }
        if !self.found && self.hystart && w.in_slow_start() && w.cwnd >= HYSTART_LOW_WINDOW {
            self.hystart_update(w, delay, ack);
        }
    }

    fn on_state(&mut self, w: &mut Window, now: Time, state: CaState) {
        self.on_state_seq(w, now, state, 0);
    }

    /// bictcp_state: an RTO (TCP_CA_Loss) forgets everything (bictcp_reset: W_max, the epoch,
    /// K, delay_min, HyStart's `found`) and starts a HyStart round that ends at snd_nxt
    /// (bictcp_hystart_reset). After the RTO's slow start, growth therefore restarts with
    /// last_max_cwnd = 0: origin at the current cwnd, K = 0, at least 5 % per RTT (cnt <= 20).
    fn on_state_seq(&mut self, _w: &mut Window, now: Time, state: CaState, snd_nxt: u64) {
        if state == CaState::Loss {
            self.reset();
            self.hystart_reset(now, snd_nxt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now: Time, acked: u32, rtt: Time) -> AckInfo {
        AckInfo {
            now,
            acked,
            rtt: Some(rtt),
            prior_in_flight: 0,
            snd_una: 0,
            snd_nxt: 0,
            mss: 1448,
            pacing_rate_bps: 0,
        }
    }

    /// Congestion avoidance for `rounds` RTTs from `now`: one ACK per segment of the window,
    /// spread evenly over each RTT.
    fn clock_rtts(c: &mut Cubic, w: &mut Window, mut now: Time, rtt: Time, rounds: usize) {
        for _ in 0..rounds {
            let n = w.cwnd;
            for i in 0..n {
                let t = now + Time(rtt.ns() * i as u64 / n as u64);
                c.cong_avoid(w, &ack(t, 1, rtt));
            }
            now += rtt;
        }
    }

    /// After a loss at W_max, the window follows W(t) = C (t - K)^3 + W_max: concave up to
    /// W_max at t = K, flat there, convex beyond. Drive one ACK per packet per RTT and compare.
    #[test]
    fn window_follows_the_cubic_after_a_loss() {
        // A long RTT keeps the flow in the cubic region (the Reno-friendly estimate grows by
        // only ~0.5 packet per RTT, so it stays below the cubic curve).
        let rtt = Time::from_ms(100);
        let mut c = Cubic::new(false);
        let w_max = 1000u32;
        let mut w = Window { cwnd: w_max, ssthresh: INF, cwnd_cnt: 0 };
        // The loss.
        w.ssthresh = c.ssthresh(&w);
        w.cwnd = w.ssthresh;
        assert_eq!(w.cwnd, 700, "beta = 0.7");
        // K from the integer post-loss window, as Linux computes it (700 = 1000 * 717 / 1024).
        let k = ((w_max - w.cwnd) as f64 / C).cbrt();
        let mut now = Time::from_secs(5);
        // Seed delay_min (outside the 1 s post-loss sample blackout, as on a long-running flow).
        c.delay_min = Some(rtt);
        let t0 = now;
        let mut worst: f64 = 0.0;
        let mut before_k = 0;
        while now < t0 + Time::from_secs(12) {
            // One RTT's worth of ACKs, spread over the RTT.
            let n = w.cwnd;
            for i in 0..n {
                let t = now + Time(rtt.ns() * i as u64 / n as u64);
                c.cong_avoid(&mut w, &ack(t, 1, rtt));
            }
            now += rtt;
            let t = (now - t0).secs_f64();
            // Target one RTT ahead (Linux adds delay_min to t).
            let expected = C * (t - k).powi(3) + w_max as f64;
            let err = (w.cwnd as f64 - expected).abs() / expected;
            worst = worst.max(err);
            if t < 8.0 {
                before_k = w.cwnd;
            }
        }
        assert!((c.k_seconds() - k).abs() < 1e-9, "K = {} vs {}", c.k_seconds(), k);
        assert!(worst < 0.03, "cwnd strayed {:.1}% from W(t)", worst * 100.0);
        // 8 s after the loss (K = 9.1 s) the window is still below but close to W_max ...
        assert!(before_k < w_max && before_k > 990, "cwnd {before_k}");
        // ... and 12 s after, beyond K, it probes above it.
        assert!(w.cwnd > w_max + 5, "cwnd {}", w.cwnd);
    }

    const INF: u32 = super::super::INFINITE_SSTHRESH;

    #[test]
    fn plateau_at_wmax_then_convex_probe() {
        let rtt = Time::from_ms(100);
        let mut c = Cubic::new(false);
        let mut w = Window { cwnd: 200, ssthresh: INF, cwnd_cnt: 0 };
        w.ssthresh = c.ssthresh(&w);
        w.cwnd = w.ssthresh;
        c.delay_min = Some(rtt);
        let k = ((200 - w.cwnd) as f64 / C).cbrt();
        let mut now = Time::from_secs(10);
        let t0 = now;
        let mut at_k = 0;
        while now < t0 + Time::from_secs_f64(2.0 * k + 1.0) {
            for i in 0..w.cwnd {
                let t = now + Time(rtt.ns() * i as u64 / w.cwnd as u64);
                c.cong_avoid(&mut w, &ack(t, 1, rtt));
            }
            now += rtt;
            if at_k == 0 && (now - t0).secs_f64() >= k {
                at_k = w.cwnd;
            }
        }
        assert!((198..=203).contains(&at_k), "at t = K the window is W_max, got {at_k}");
        assert!(w.cwnd > 215, "beyond K the window probes above W_max, got {}", w.cwnd);
    }

    #[test]
    fn fast_convergence_lowers_wmax() {
        let mut c = Cubic::new(false);
        let w = Window { cwnd: 100, ssthresh: INF, cwnd_cnt: 0 };
        c.ssthresh(&w);
        assert_eq!(c.last_max_cwnd(), 100);
        let w = Window { cwnd: 80, ssthresh: 70, cwnd_cnt: 0 };
        assert_eq!(c.ssthresh(&w), 56);
        assert_eq!(c.last_max_cwnd(), 80 * 1741 / 2048);
    }

    #[test]
    fn hystart_exits_slow_start_on_delay_increase() {
        let mut c = Cubic::new(true);
        let mut w = Window::new(32);
        let base = Time::from_ms(20);
        // Round 1: 8+ samples at the base RTT set delay_min.
        let mut now = Time::from_ms(100);
        let mut a = ack(now, 1, base);
        a.snd_una = 1;
        a.snd_nxt = 100;
        for _ in 0..10 {
            now += Time::from_ms(3); // spaced > 2 ms apart: no ACK train
            a.now = now;
            c.on_rtt(&mut w, &a);
        }
        assert!(!c.hystart_found());
        // Next round: queueing adds 8 ms (> max(20/8, 4) ms threshold).
        a.snd_una = 101;
        a.snd_nxt = 300;
        a.rtt = Some(base + Time::from_ms(8));
        for _ in 0..10 {
            now += Time::from_ms(3);
            a.now = now;
            c.on_rtt(&mut w, &a);
        }
        assert!(c.hystart_found());
        assert_eq!(w.ssthresh, w.cwnd, "HyStart sets ssthresh to cwnd");
    }

    #[test]
    fn hystart_ignores_small_delay_jitter() {
        let mut c = Cubic::new(true);
        let mut w = Window::new(32);
        let mut now = Time::from_ms(100);
        let mut a = ack(now, 1, Time::from_ms(20));
        a.snd_una = 1;
        a.snd_nxt = 100;
        for i in 0..40 {
            now += Time::from_ms(3);
            a.now = now;
            a.rtt = Some(Time::from_ms(20) + Time::from_ms(i % 3));
            c.on_rtt(&mut w, &a);
        }
        assert!(!c.hystart_found());
    }

    /// bictcp_state on an RTO: everything CUBIC learnt is forgotten (bictcp_reset), so the
    /// regrowth after the RTO's slow start has no W_max to return to: K = 0, origin at the
    /// current window, and the "unknown bandwidth" rule (cnt <= 20: at least 5 % per RTT).
    #[test]
    fn rto_forgets_wmax_and_regrows_at_five_percent_per_rtt() {
        let rtt = Time::from_ms(50);
        let mut c = Cubic::new(true);
        let mut w = Window { cwnd: 5000, ssthresh: INF, cwnd_cnt: 0 };
        c.delay_min = Some(rtt);
        c.found = true;
        // The RTO: ssthresh first (tcp_enter_loss), then the Loss state (tcp_set_ca_state).
        w.ssthresh = c.ssthresh(&w);
        assert_eq!(w.ssthresh, 5000 * 717 / 1024);
        assert_eq!(c.last_max_cwnd(), 5000);
        c.on_state_seq(&mut w, Time::from_secs(10), CaState::Loss, 123_456);
        assert_eq!(c.last_max_cwnd(), 0, "bictcp_reset clears W_max");
        assert!(c.delay_min.is_none() && !c.hystart_found() && c.epoch_start.is_none());
        assert_eq!(c.end_seq, 123_456, "the HyStart round ends at snd_nxt at the RTO");
        assert_eq!(c.round_start, Time::from_secs(10));
        // Slow start brought cwnd back to ssthresh; congestion avoidance from there.
        w.cwnd = w.ssthresh;
        let start = w.cwnd;
        clock_rtts(&mut c, &mut w, Time::from_secs(11), rtt, 10);
        assert_eq!(c.k_seconds(), 0.0, "K = 0: no W_max to climb back to");
        // 10 RTTs at 1 / 20 per ACK: 1.05^10 = 1.63 (Linux's cnt = 20 in bictcp_update).
        let growth = w.cwnd as f64 / start as f64;
        assert!((1.55..1.68).contains(&growth), "grew x{growth:.3} in 10 RTTs");
    }

    /// The same RTO without the clamp's condition: after a fast recovery W_max is remembered
    /// and the window climbs back concavely, far slower than 5 % per RTT near W_max.
    #[test]
    fn fast_recovery_keeps_wmax_and_climbs_concavely() {
        let rtt = Time::from_ms(50);
        let mut c = Cubic::new(false);
        let mut w = Window { cwnd: 5000, ssthresh: INF, cwnd_cnt: 0 };
        c.delay_min = Some(rtt);
        w.ssthresh = c.ssthresh(&w);
        c.on_state_seq(&mut w, Time::from_secs(10), CaState::Recovery, 0);
        assert_eq!(c.last_max_cwnd(), 5000, "only Loss resets");
        w.cwnd = w.ssthresh;
        clock_rtts(&mut c, &mut w, Time::from_secs(11), rtt, 10);
        // K = cbrt((5000 - 3500) / 0.4) = 15.5 s; after 0.5 s the window is about
        // W_max - 0.4 (K - 0.55)^3 (t counts one delay_min ahead).
        let k = c.k_seconds();
        assert!((k - (1500.0f64 / C).cbrt()).abs() < 1e-9, "K {k}");
        let expect = 5000.0 - C * (k - 0.55f64).powi(3);
        assert!((w.cwnd as f64 - expect).abs() < 0.01 * expect, "cwnd {} vs {expect:.0}", w.cwnd);
        // 4 % in 10 RTTs, against 63 % after an RTO.
        assert!(w.cwnd < 3500 * 105 / 100, "concave start: {}", w.cwnd);
    }

    fn ss_ack(now: Time, rtt: Time, snd_una: u64, snd_nxt: u64, cwnd: u32) -> AckInfo {
        let mut a = ack(now, 2, rtt);
        a.snd_una = snd_una;
        a.snd_nxt = snd_nxt;
        // tcp_update_pacing_rate in slow start: 2 x cwnd x mss / srtt.
        a.pacing_rate_bps = (2.0 * cwnd as f64 * 1448.0 * 8.0 / rtt.secs_f64()) as u64;
        a
    }

    /// HyStart's ACK-train exit: ACKs closer than 2 ms that keep coming for longer than
    /// (delay_min + hystart_ack_delay) / 2 (no fq pacing) since the round started. A train just
    /// short of it does not exit; one just beyond it sets ssthresh = cwnd.
    #[test]
    fn hystart_ack_train_exits_after_half_the_min_rtt() {
        let rtt = Time::from_ms(50);
        for (train_ms, exits) in [(24.0, false), (27.0, true)] {
            let mut c = Cubic::new(true);
            let mut w = Window::new(2000);
            let mut now = Time::from_secs(1);
            // Round 1 sets delay_min (ACKs 3 ms apart: no train).
            for i in 0..10u64 {
                now += Time::from_ms(3);
                let a = ss_ack(now, rtt, 1 + i, 10_000, w.cwnd);
                c.on_rtt(&mut w, &a);
            }
            assert_eq!(c.delay_min, Some(rtt));
            // Round 2: its first ACK resets the round, then ACKs every 20 us for `train_ms`.
            let start = now + Time::from_ms(3);
            let n = (train_ms * 1000.0 / 20.0) as u64;
            for i in 0..=n {
                now = start + Time::from_us(20 * i);
                let a = ss_ack(now, rtt, 10_001 + i, 30_000, w.cwnd);
                c.on_rtt(&mut w, &a);
            }
            // Threshold: (50 ms + min(1 ms, 4 x 64 KB / pacing rate)) / 2.
            let pacing = 2.0 * 2000.0 * 1448.0 * 8.0 / 0.05;
            let ack_delay_ms: f64 = (4.0 * 65536.0 * 8.0 / pacing * 1e3_f64).min(1.0);
            assert_eq!(ack_delay_ms, 1.0, "4 x 64 KB at ~0.93 Gbit/s is over 1 ms: capped");
            assert_eq!(c.hystart_found(), exits, "train {train_ms} ms vs {:.2} ms", (50.0 + ack_delay_ms) / 2.0);
            assert_eq!(w.ssthresh == w.cwnd, exits);
        }
    }

    /// A gap of more than hystart_ack_delta (2 ms) breaks the train: the train is measured from
    /// the round start only while ACKs keep coming close together.
    #[test]
    fn hystart_ack_train_needs_close_acks() {
        let rtt = Time::from_ms(50);
        let mut c = Cubic::new(true);
        let mut w = Window::new(2000);
        c.delay_min = Some(rtt);
        let mut now = Time::from_secs(1);
        let a = ss_ack(now, rtt, 1, 10_000, w.cwnd);
        c.on_rtt(&mut w, &a); // resets the round
        for i in 0..20u64 {
            now += Time::from_us(2_500); // 2.5 ms apart: never a train
            let a = ss_ack(now, rtt, 2 + i, 10_000, w.cwnd);
            c.on_rtt(&mut w, &a);
        }
        assert!(now - Time::from_secs(1) > Time::from_ms(40));
        assert!(!c.hystart_found());
    }

    /// After an RTO the HyStart round ends at snd_nxt at the RTO; until snd_una passes it, RTT
    /// samples of new data sent during the retransmissions cannot start an ACK train (Linux's
    /// last_ack is the RTO time), so HyStart does not cut the RTO's slow start short.
    #[test]
    fn no_ack_train_before_the_round_of_the_rto_ends() {
        let rtt = Time::from_ms(50);
        let mut c = Cubic::new(true);
        let mut w = Window { cwnd: 1, ssthresh: 3000, cwnd_cnt: 0 };
        c.on_state_seq(&mut w, Time::from_secs(10), CaState::Loss, 1_000_000);
        w.cwnd = 2000;
        // New data SACKed every 20 us for 40 ms while snd_una is still below the RTO's snd_nxt.
        let start = Time::from_secs(12);
        for i in 0..2000u64 {
            let now = start + Time::from_us(20 * i);
            let a = ss_ack(now, rtt, 500_000 + i, 2_000_000, w.cwnd);
            c.on_rtt(&mut w, &a);
        }
        assert!(!c.hystart_found(), "no ACK train counted from the RTO's round");
        assert_eq!(w.ssthresh, 3000);
    }
}
