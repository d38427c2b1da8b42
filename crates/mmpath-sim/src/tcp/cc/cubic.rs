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

    fn on_state(&mut self, _w: &mut Window, now: Time, state: CaState) {
        if state == CaState::Loss {
            self.reset();
            self.hystart_reset(now, 0);
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
}
