//! CUBIC as in Linux net/ipv4/tcp_cubic.c (RFC 9438), with HyStart, as of kernel 4.10 (the
//! kernel of seed 003's testbed).
//!
//! W(t) = C (t - K)^3 + W_max with K = cbrt(W_max (1 - beta) / C), where t counts from the
//! start of the congestion-avoidance epoch plus the minimum RTT (Linux adds `delay_min` so the
//! target is where the window should be one RTT from now). The window grows by
//! 1 / cnt per ACKed packet with cnt = cwnd / (target - cwnd), bounded by the TCP-friendly
//! (Reno-equivalent) window. Linux works in fixed point on jiffies; this port keeps Linux's
//! structure and integer window but computes the cubic in f64 seconds (same curve, no
//! 1/1024 s quantisation).
//!
//! HyStart is the 4.10 one (before the 2020 rework that moved it to microseconds, added
//! hystart_ack_delay and kept curr_rtt as the minimum over the whole round, and the 2021 move
//! of the round reset from bictcp_cong_avoid into hystart_update): a millisecond clock
//! (bictcp_clock), RTTs in 1/8 ms (bictcp_acked: delay = (rtt_us << 3) / USEC_PER_MSEC), an
//! ACK-train exit once the train has lasted more than delay_min / 2 (`delay_min >> 4`), a
//! delay exit on the minimum of a round's first 8 samples, and the round restarted by
//! bictcp_cong_avoid when the cumulative ACK passes end_seq. A flow that stands for a current
//! kernel (upstream MPTCP's subflows) runs Linux 6.18's HyStart instead (`HyStartRule`): the
//! 2020 rework (a microsecond clock, delays in microseconds, the ACK train's threshold
//! delay_min + hystart_ack_delay halved for an unpaced socket, curr_rtt the minimum of every
//! sample of the round, checked from the ninth) and the 2021 move of the round reset into
//! hystart_update, before the 16-segment floor (net/ipv4/tcp_cubic.c, 6.18).

use super::{AckInfo, CaState, CongestionControl, TxStart, Window};
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
/// HyStart (tcp_cubic.c 4.10): only above 16 packets (hystart_low_window); ACKs at most 2 ms
/// apart (hystart_ack_delta, in bictcp_clock milliseconds) form a train; the delay exit looks
/// at the first 8 RTT samples of a round (HYSTART_MIN_SAMPLES) against delay_min +
/// clamp(delay_min / 8, 4 ms, 16 ms) (HYSTART_DELAY_MIN / MAX = 4U << 3 / 16U << 3, in the
/// 1/8 ms units of `delay`).
const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_ACK_DELTA_MS: u32 = 2;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN: u32 = 4 << 3;
const HYSTART_DELAY_MAX: u32 = 16 << 3;
/// Linux 6.18's HyStart constants, in microseconds (tcp_cubic.c: hystart_ack_delta_us 2000,
/// HYSTART_DELAY_MIN 4000U, HYSTART_DELAY_MAX 16000U).
const HYSTART_ACK_DELTA_US: u32 = 2_000;
const HYSTART_DELAY_MIN_US: u32 = 4_000;
const HYSTART_DELAY_MAX_US: u32 = 16_000;
/// sk_gso_max_size as hystart_ack_delay reads it: GSO_LEGACY_MAX_SIZE, a device's default
/// (include/linux/netdevice.h; BIG TCP raises it only where configured).
const GSO_MAX_SIZE: u64 = 65_536;

/// Which kernel's HyStart a CUBIC flow runs; the rest of CUBIC is the same in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HyStartRule {
    /// Linux 4.10 (the module doc): the papers' kernels.
    Linux410,
    /// Linux 6.18: the emulator's kernel, which upstream MPTCP stands for. `paced`: the socket's
    /// sk_pacing_status is not SK_PACING_NONE, so the ACK train's threshold is not halved.
    Linux618 { paced: bool },
}

/// hystart_ack_delay (6.18): the ACK train's cushion for TSO and GRO batching, the time four
/// 64 KB GSO packets take at sk_pacing_rate, at most 1 ms; 0 before the socket has a rate.
fn hystart_ack_delay_us(pacing_rate_bps: u64) -> u32 {
    let bytes_per_s = pacing_rate_bps / 8;
    if bytes_per_s == 0 {
        return 0;
    }
    (GSO_MAX_SIZE * 4 * 1_000_000 / bytes_per_s).min(1_000) as u32
}

/// tcp_mstamp as a wrapping 32-bit microsecond clock (bictcp_clock_us).
fn clock_us(now: Time) -> u32 {
    (now.ns() / 1_000) as u32
}

/// bictcp_clock: milliseconds (jiffies_to_msecs, or ktime in ms when HZ < 1000).
fn bictcp_clock(now: Time) -> u32 {
    (now.ns() / 1_000_000) as u32
}

/// bictcp_acked: an RTT sample in units of 1/8 ms, at least 1.
fn delay_units(rtt: Time) -> u32 {
    ((rtt.ns() / 1000).saturating_mul(8) / 1000).clamp(1, u32::MAX as u64) as u32
}

pub struct Cubic {
    hystart: bool,
    rule: HyStartRule,
    fast_convergence: bool,
    cnt: u32,
    last_max_cwnd: u32,
    /// cwnd at the last reduction (bictcp_recalc_ssthresh's ca->loss_cwnd), what
    /// bictcp_undo_cwnd restores. Not cleared by bictcp_reset (only bictcp_init zeroes it).
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time: Option<Time>,
    origin_point: u32,
    k_s: f64,
    /// Minimum RTT (tcp_cubic.c `delay_min`): in 1/8 ms under 4.10 (msec << 3), in
    /// microseconds under 6.18; 0 = none yet.
    delay_min: u32,
    epoch_start: Option<Time>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    // HyStart
    found: bool,
    /// The HyStart clock: bictcp_clock milliseconds (4.10), microseconds (6.18).
    round_start: u32,
    end_seq: u64,
    last_ack: u32,
    /// 4.10: the minimum of the round's first HYSTART_MIN_SAMPLES delays (1/8 ms; 0 = none
    /// yet). 6.18: the minimum of all the round's delays (us; u32::MAX = none yet).
    curr_rtt: u32,
    sample_cnt: u32,
}

impl Cubic {
    pub fn new(hystart: bool) -> Self {
        Cubic {
            hystart,
            rule: HyStartRule::Linux410,
            fast_convergence: true,
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            origin_point: 0,
            k_s: 0.0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: 0,
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
        let (hystart, rule, fc, loss_cwnd) = (self.hystart, self.rule, self.fast_convergence, self.loss_cwnd);
        *self = Cubic::new(hystart);
        self.rule = rule;
        self.fast_convergence = fc;
        self.loss_cwnd = loss_cwnd;
    }

    /// bictcp_hystart_reset: a new round starts now and ends when snd_nxt is ACKed.
    fn hystart_reset(&mut self, now: Time, snd_nxt: u64) {
        (self.round_start, self.curr_rtt) = match self.rule {
            HyStartRule::Linux410 => (bictcp_clock(now), 0),
            HyStartRule::Linux618 { .. } => (clock_us(now), u32::MAX),
        };
        self.last_ack = self.round_start;
        self.end_seq = snd_nxt;
        self.sample_cnt = 0;
    }

    /// delay_min as bictcp_update adds it to t: whole milliseconds under 4.10
    /// (msecs_to_jiffies(delay_min >> 3)), microseconds under 6.18 (usecs_to_jiffies), in
    /// exact time (the module doc).
    fn delay_min_secs(&self) -> f64 {
        match self.rule {
            HyStartRule::Linux410 => (self.delay_min >> 3) as f64 * 1e-3,
            HyStartRule::Linux618 { .. } => self.delay_min as f64 * 1e-6,
        }
    }

    /// An RTT sample in the rule's units (cubictcp_acked: microseconds, at least 1).
    fn delay_of(&self, rtt: Time) -> u32 {
        match self.rule {
            HyStartRule::Linux410 => delay_units(rtt),
            HyStartRule::Linux618 { .. } => (rtt.ns() / 1_000).clamp(1, u32::MAX as u64) as u32,
        }
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
        let t = (now - epoch).secs_f64() + self.delay_min_secs();
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

    /// hystart_update (4.10): HyStart's two exit signals, each setting ssthresh = cwnd. An ACK
    /// train: ACKs at most 2 ms apart (millisecond clock) that keep coming for more than
    /// delay_min / 2 after the round started. A delay increase: the minimum of the round's first
    /// 8 samples above delay_min + clamp(delay_min / 8, 4 ms, 16 ms).
    fn hystart_update(&mut self, w: &mut Window, delay: u32, now: Time) {
        if self.found {
            return;
        }
        let now = bictcp_clock(now);
        if now.wrapping_sub(self.last_ack) as i32 <= HYSTART_ACK_DELTA_MS as i32 {
            self.last_ack = now;
            if now.wrapping_sub(self.round_start) as i32 > (self.delay_min >> 4) as i32 {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            if self.curr_rtt == 0 || self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
            if self.curr_rtt > self.delay_min + thresh {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
    }

    /// hystart_update (6.18), for every RTT sample in slow start until an exit is found: a new
    /// round once the cumulative ACK passes end_seq (before the 16-segment floor, so rounds
    /// follow the flow from its start); above the floor, an ACK train (ACKs at most 2 ms apart
    /// on the microsecond clock) that lasts more than delay_min + hystart_ack_delay, halved
    /// for an unpaced socket, and a delay increase (the minimum of every sample of the round,
    /// from its ninth sample on, above delay_min + clamp(delay_min / 8, 4 ms, 16 ms)).
    fn hystart_update_618(&mut self, w: &mut Window, delay: u32, ack: &AckInfo, paced: bool) {
        if ack.snd_una > self.end_seq {
            self.hystart_reset(ack.now, ack.snd_nxt);
        }
        if w.cwnd < HYSTART_LOW_WINDOW {
            return;
        }
        let now = clock_us(ack.now);
        if now.wrapping_sub(self.last_ack) as i32 <= HYSTART_ACK_DELTA_US as i32 {
            self.last_ack = now;
            let mut threshold = self.delay_min.saturating_add(hystart_ack_delay_us(ack.pacing_rate_bps));
            if !paced {
                threshold >>= 1;
            }
            if now.wrapping_sub(self.round_start) as i32 > threshold as i32 {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
            if self.curr_rtt > self.delay_min.saturating_add(thresh) {
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
            // bictcp_cong_avoid (4.10): a new HyStart round once the cumulative ACK passes the
            // round's end_seq (after this ACK's RTT sample went to hystart_update).
            if self.hystart && self.rule == HyStartRule::Linux410 && ack.snd_una > self.end_seq {
                self.hystart_reset(ack.now, ack.snd_nxt);
            }
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
        self.loss_cwnd = w.cwnd;
        ((w.cwnd * BETA_SCALE_1024) / 1024).max(2)
    }

    /// bictcp_undo_cwnd (Linux 4.10): max(cwnd, loss_cwnd). W_max and the epoch are not put
    /// back (an RTO's bictcp_reset stays).
    fn undo_cwnd(&mut self, w: &Window) -> u32 {
        w.cwnd.max(self.loss_cwnd)
    }

    /// bictcp_acked: every ACK's RTT sample (Linux's ca_rtt, never a timestamp echo).
    fn on_rtt(&mut self, w: &mut Window, ack: &AckInfo) {
        let Some(rtt) = ack.rtt else { return };
        // Discard delay samples right after fast recovery (tcp_cubic.c, 1 s).
        if let Some(e) = self.epoch_start {
            if ack.now.saturating_sub(e) < Time::from_secs(1) {
                return;
            }
        }
        let delay = self.delay_of(rtt);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        match self.rule {
            HyStartRule::Linux410 => {
                if self.hystart && w.in_slow_start() && w.cwnd >= HYSTART_LOW_WINDOW {
                    self.hystart_update(w, delay, ack.now);
                }
            }
            HyStartRule::Linux618 { paced } => {
                if self.hystart && !self.found && w.in_slow_start() {
                    self.hystart_update_618(w, delay, ack, paced);
                }
            }
        }
    }

    fn use_current_kernel(&mut self, paced: bool) {
        self.rule = HyStartRule::Linux618 { paced };
    }

    /// cubictcp_cwnd_event (Linux >= 4.3, so both kernels the model stands for): data going out
    /// after the sender was idle shifts the epoch by the idle time (now - lsndtime), at most to
    /// now, so the window resumes on the cubic curve where it left it instead of jumping to
    /// the target the elapsed time gives ("the delta t of now - epoch_start can be arbitrary
    /// large after app idle as well as the bic_target", the commit's words). Linux counts the
    /// idle time in jiffies; the model's curve runs on exact time (module doc), so the shift
    /// is the exact idle time, which the jiffy count equals on average.
    fn on_tx_start(&mut self, _w: &Window, ev: &TxStart) {
        if let Some(e) = self.epoch_start {
            if ev.now > ev.last_send {
                self.epoch_start = Some((e + (ev.now - ev.last_send)).min(ev.now));
            }
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
        c.delay_min = delay_units(rtt);
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
        c.delay_min = delay_units(rtt);
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

    /// cubictcp_cwnd_event: an application that stops for 20 s in congestion avoidance resumes
    /// on the cubic curve where it stopped (the epoch moves by the idle time), not at the
    /// target 20 s more of the curve would give (far above W_max), which would grow the window
    /// by half a packet per ACK (cnt's floor of 2). The shift never puts the epoch after now.
    #[test]
    fn an_idle_spell_moves_the_epoch_by_its_length() {
        let rtt = Time::from_ms(20);
        let run = |shift: bool| {
            let mut c = Cubic::new(false);
            let mut w = Window { cwnd: 100, ssthresh: INF, cwnd_cnt: 0 };
            w.ssthresh = c.ssthresh(&w);
            w.cwnd = w.ssthresh;
            c.delay_min = delay_units(rtt);
            let t0 = Time::from_secs(10);
            clock_rtts(&mut c, &mut w, t0, rtt, 10);
            let stop = t0 + Time(rtt.ns() * 10);
            let (cnt_before, epoch) = (c.cnt, c.epoch_start.unwrap());
            let resume = stop + Time::from_secs(20);
            if shift {
                c.on_tx_start(&w, &TxStart { now: resume, last_send: stop, snd_nxt: 0, app_limited: true, srtt: None });
                assert_eq!(c.epoch_start, Some(epoch + Time::from_secs(20)));
            }
            c.cong_avoid(&mut w, &ack(resume, 1, rtt));
            (cnt_before, c.cnt)
        };
        let (before, after) = run(true);
        assert!(after + 2 >= before && after <= before + 2, "resumes on the curve: cnt {before} then {after}");
        let (_, unshifted) = run(false);
        assert_eq!(unshifted, 2, "without the event the 20 s count toward the curve");
        // An epoch that would land after now is held at now; no epoch yet (slow start): nothing
        // to move.
        let w = Window { cwnd: 50, ssthresh: 40, cwnd_cnt: 0 };
        let idle_5s = TxStart {
            now: Time::from_secs(10),
            last_send: Time::from_secs(5),
            snd_nxt: 0,
            app_limited: true,
            srtt: None,
        };
        for (epoch, want) in [(Some(Time::from_secs(9)), Some(Time::from_secs(10))), (None, None)] {
            let mut c = Cubic::new(false);
            c.epoch_start = epoch;
            c.on_tx_start(&w, &idle_5s);
            assert_eq!(c.epoch_start, want);
        }
    }

    /// An RTT sample as Linux 6.18's tcp_ack hands it to cubictcp_acked, with the socket's
    /// sk_pacing_rate.
    fn sample_618(now: Time, rtt: Time, snd_una: u64, snd_nxt: u64, rate_bps: u64) -> AckInfo {
        AckInfo { snd_una, snd_nxt, pacing_rate_bps: rate_bps, ..ack(now, 1, rtt) }
    }

    fn cubic_618(paced: bool) -> Cubic {
        let mut c = Cubic::new(true);
        c.use_current_kernel(paced);
        c
    }

    /// hystart_ack_delay: four 64 KB GSO packets at the pacing rate, at most 1 ms, 0 without a
    /// rate.
    #[test]
    fn hystart_ack_delay_is_four_gso_packets_at_most_a_millisecond() {
        assert_eq!(hystart_ack_delay_us(0), 0);
        assert_eq!(hystart_ack_delay_us(150_000_000), 1_000);
        assert_eq!(hystart_ack_delay_us(10_000_000_000), 209);
    }

    /// 6.18's ACK train, on a 250 us path at 150 Mbit/s (the x-pm backup's): ACKs 100 us apart
    /// end slow start once the train is longer than (delay_min + hystart_ack_delay) / 2 =
    /// (250 + 1000) / 2 = 625 us for an unpaced socket, i.e. at the 8th ACK of the round (700
    /// us); a paced one waits for 1250 us (the 14th). Under 4.10 the same train ends slow start
    /// as soon as it crosses a millisecond tick (its threshold, delay_min / 2 in whole ms, is 0).
    #[test]
    fn hystart_618_train_needs_the_ack_delay_cushion() {
        let rtt = Time::from_us(250);
        let t0 = Time::from_ms(50) + Time::from_us(800);
        // The index of the round's ACK (100 us apart from t0) that ends slow start.
        let exit = |mut c: Cubic| {
            let mut w = Window { cwnd: 20, ssthresh: INF, cwnd_cnt: 0 };
            let found = (0..20u64).find(|&k| {
                c.on_rtt(&mut w, &sample_618(t0 + Time::from_us(100 * k), rtt, 1 + k, 1_000_000, 150_000_000));
                c.hystart_found()
            });
            assert_eq!(w.ssthresh, w.cwnd);
            found
        };
        assert_eq!(exit(cubic_618(false)), Some(7), "unpaced");
        assert_eq!(exit(cubic_618(true)), Some(13), "paced");
        // 4.10: the train's first ACK after the 51 ms tick ends it (the 3rd, at 51.0 ms).
        let mut c = Cubic::new(true);
        c.hystart_reset(t0, 1_000_000);
        assert_eq!(exit(c), Some(2));
    }

    /// 6.18's delay exit takes the minimum of every sample of the round (4.10: of its first 8),
    /// from the ninth sample on, against delay_min + clamp(delay_min / 8, 4 ms, 16 ms): with
    /// delay_min 10 ms, eight 15 ms samples then a 12 ms one, 4.10 exits at the ninth (15 >
    /// 14 ms) and 6.18 does not (its minimum is now 12 ms). Samples 3 ms apart: no ACK train.
    #[test]
    fn hystart_618_delay_exit_uses_the_whole_round() {
        for current in [false, true] {
            let mut c = if current { cubic_618(false) } else { Cubic::new(true) };
            let mut w = Window { cwnd: 20, ssthresh: INF, cwnd_cnt: 0 };
            c.delay_min = c.delay_of(Time::from_ms(10));
            c.hystart_reset(Time::from_secs(1), 1_000_000);
            let mut now = Time::from_secs(1);
            for k in 0..9u64 {
                now += Time::from_ms(3);
                let rtt = if k < 8 { Time::from_ms(15) } else { Time::from_ms(12) };
                c.on_rtt(&mut w, &sample_618(now, rtt, 1, 1_000_000, 150_000_000));
            }
            assert_eq!(c.hystart_found(), !current, "current kernel {current}");
        }
    }

    /// 6.18 starts a new round in hystart_update, whatever the window (4.10: in cong_avoid, and
    /// only above 16 segments does the sample reach hystart_update).
    #[test]
    fn hystart_618_rounds_follow_the_flow_below_the_floor() {
        let mut c = cubic_618(false);
        let mut w = Window { cwnd: 10, ssthresh: INF, cwnd_cnt: 0 };
        c.on_rtt(&mut w, &sample_618(Time::from_ms(5), Time::from_ms(1), 14_480, 28_960, 0));
        assert_eq!((c.end_seq, c.round_start), (28_960, 5_000));
        let mut c = Cubic::new(true);
        c.on_rtt(&mut w, &sample_618(Time::from_ms(5), Time::from_ms(1), 14_480, 28_960, 0));
        assert_eq!(c.end_seq, 0, "4.10 leaves the round to cong_avoid");
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

    /// One ACK as Linux's tcp_ack hands it to CUBIC: the RTT sample first (bictcp_acked, from
    /// tcp_clean_rtx_queue), then the window (bictcp_cong_avoid, from tcp_cong_control).
    fn feed(c: &mut Cubic, w: &mut Window, now: Time, rtt: Time, snd_una: u64, snd_nxt: u64) {
        let mut a = ack(now, 1, rtt);
        a.snd_una = snd_una;
        a.snd_nxt = snd_nxt;
        c.on_rtt(w, &a);
        // Hold the window (a test of the exit signals, not of slow start's growth).
        let cwnd = w.cwnd;
        c.cong_avoid(w, &a);
        w.cwnd = cwnd;
    }

    #[test]
    fn hystart_exits_slow_start_on_delay_increase() {
        let mut c = Cubic::new(true);
        let mut w = Window::new(32);
        let base = Time::from_ms(20);
        // Round 1: samples at the base RTT set delay_min; ACKs 3 ms apart (no train).
        let mut now = Time::from_ms(100);
        for i in 0..10 {
            now += Time::from_ms(3);
            feed(&mut c, &mut w, now, base, 1 + i, 100);
        }
        assert!(!c.hystart_found());
        // Next round (its first ACK passes end_seq = 100): queueing adds 5 ms to every sample,
        // more than max(20 ms / 8, 4 ms) = 4 ms. The decision comes after the 8th sample.
        for i in 0..10 {
            now += Time::from_ms(3);
            feed(&mut c, &mut w, now, base + Time::from_ms(5), 101 + i, 300);
            assert_eq!(c.hystart_found(), i >= 9, "sample {i}");
        }
        assert_eq!(w.ssthresh, w.cwnd, "HyStart sets ssthresh to cwnd");
    }

    /// 4.10 compares the minimum of a round's first 8 samples only: a rise of 3.5 ms (under
    /// the 4 ms floor) does not count, nor does a late rise after 8 low samples.
    #[test]
    fn hystart_delay_exit_uses_the_first_eight_samples_of_a_round() {
        let mut c = Cubic::new(true);
        let mut w = Window::new(32);
        let mut now = Time::from_ms(100);
        for i in 0..10 {
            now += Time::from_ms(3);
            feed(&mut c, &mut w, now, Time::from_ms(20), 1 + i, 100);
        }
        for i in 0..20 {
            now += Time::from_ms(3);
            feed(&mut c, &mut w, now, Time::from_us(23_500), 101 + i, 300);
        }
        assert!(!c.hystart_found(), "3.5 ms is under the 4 ms threshold");
        for i in 0..20 {
            now += Time::from_ms(3);
            let rtt = if i < 8 { Time::from_ms(20) } else { Time::from_ms(40) };
            feed(&mut c, &mut w, now, rtt, 301 + i, 500);
        }
        assert!(!c.hystart_found(), "samples after the 8th do not enter curr_rtt");
    }

    /// bictcp_state on an RTO: everything CUBIC learnt is forgotten (bictcp_reset), so the
    /// regrowth after the RTO's slow start has no W_max to return to: K = 0, origin at the
    /// current window, and the "unknown bandwidth" rule (cnt <= 20: at least 5 % per RTT).
    #[test]
    fn rto_forgets_wmax_and_regrows_at_five_percent_per_rtt() {
        let rtt = Time::from_ms(50);
        let mut c = Cubic::new(true);
        let mut w = Window { cwnd: 5000, ssthresh: INF, cwnd_cnt: 0 };
        c.delay_min = delay_units(rtt);
        c.found = true;
        // The RTO: ssthresh first (tcp_enter_loss), then the Loss state (tcp_set_ca_state).
        w.ssthresh = c.ssthresh(&w);
        assert_eq!(w.ssthresh, 5000 * 717 / 1024);
        assert_eq!(c.last_max_cwnd(), 5000);
        c.on_state_seq(&mut w, Time::from_secs(10), CaState::Loss, 123_456);
        assert_eq!(c.last_max_cwnd(), 0, "bictcp_reset clears W_max");
        assert!(c.delay_min == 0 && !c.hystart_found() && c.epoch_start.is_none());
        assert_eq!(c.end_seq, 123_456, "the HyStart round ends at snd_nxt at the RTO");
        assert_eq!(c.round_start, bictcp_clock(Time::from_secs(10)));
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
        c.delay_min = delay_units(rtt);
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

    /// HyStart's ACK-train exit (4.10): ACKs at most 2 ms apart on the millisecond clock that
    /// keep coming for more than delay_min >> 4 ms (half the minimum RTT, rounded down) since
    /// the round started. At 50 ms: a 25 ms train does not exit, a 26 ms one does.
    #[test]
    fn hystart_ack_train_exits_after_half_the_min_rtt() {
        let rtt = Time::from_ms(50);
        for (train_us, exits) in [(25_900u64, false), (26_000, true)] {
            let mut c = Cubic::new(true);
            let mut w = Window::new(2000);
            let mut now = Time::from_secs(1);
            // Round 1 sets delay_min (ACKs 3 ms apart: no train).
            for i in 0..10u64 {
                now += Time::from_ms(3);
                feed(&mut c, &mut w, now, rtt, 1 + i, 10_000);
            }
            assert_eq!(c.delay_min, 400, "50 ms in 1/8 ms");
            // Round 2 starts at a whole millisecond with the ACK that passes end_seq; then an
            // ACK every 20 us for `train_us`.
            let start = Time::from_ms(1_100);
            let n = train_us / 20;
            for i in 0..=n {
                now = start + Time::from_us(20 * i);
                feed(&mut c, &mut w, now, rtt, 10_001 + i, 30_000);
            }
            assert_eq!(c.hystart_found(), exits, "train {train_us} us");
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
        c.delay_min = delay_units(rtt);
        let mut now = Time::from_secs(1);
        feed(&mut c, &mut w, now, rtt, 1, 10_000); // passes end_seq 0: a new round
        for i in 0..20u64 {
            now += Time::from_us(3_100); // 3.1 ms apart: never a train
            feed(&mut c, &mut w, now, rtt, 2 + i, 10_000);
        }
        assert!(now - Time::from_secs(1) > Time::from_ms(40));
        assert!(!c.hystart_found());
    }

    /// After an RTO the HyStart round ends at snd_nxt at the RTO; until snd_una passes it, the
    /// train is timed from the RTO (round_start, last_ack), so ACKs arriving a backed-off RTO
    /// later never join a train and HyStart does not cut the RTO's slow start short.
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
            feed(&mut c, &mut w, start + Time::from_us(20 * i), rtt, 500_000 + i, 2_000_000);
        }
        assert!(!c.hystart_found(), "no ACK train counted from the RTO's round");
        assert_eq!(w.ssthresh, 3000);
    }

    /// The round restarts in cong_avoid, after the ACK's RTT sample (tcp_ack calls pkts_acked
    /// from tcp_clean_rtx_queue before tcp_cong_control), and only in slow start.
    #[test]
    fn round_restarts_in_cong_avoid_after_the_sample() {
        let rtt = Time::from_ms(50);
        let mut c = Cubic::new(true);
        let mut w = Window::new(100);
        let mut a = ack(Time::from_ms(700), 1, rtt);
        a.snd_una = 10;
        a.snd_nxt = 500;
        c.on_rtt(&mut w, &a);
        assert_eq!(c.end_seq, 0, "the sample alone does not start a round");
        c.cong_avoid(&mut w, &a);
        assert_eq!((c.end_seq, c.round_start, c.last_ack), (500, 700, 700));
        // In congestion avoidance no new round starts.
        let mut w = Window { cwnd: 100, ssthresh: 50, cwnd_cnt: 0 };
        a.snd_una = 600;
        a.snd_nxt = 900;
        c.cong_avoid(&mut w, &a);
        assert_eq!(c.end_seq, 500);
    }

    /// Below a 2 ms min RTT `delay_min >> 4` is 0: in 4.10 any train that reaches the next
    /// millisecond tick of the round ends slow start (once cwnd >= 16), as on a LAN path.
    #[test]
    fn hystart_on_a_sub_2ms_path_exits_at_the_first_millisecond_tick() {
        let rtt = Time::from_us(1_200);
        let mut c = Cubic::new(true);
        let mut w = Window::new(32);
        // The round starts at 5.000 ms (first ACK past end_seq 0); ACKs every 100 us.
        for i in 0..20u64 {
            let now = Time::from_ms(5) + Time::from_us(100 * i);
            feed(&mut c, &mut w, now, rtt, 1 + i, 1_000);
            assert_eq!(c.hystart_found(), i >= 10, "ACK at {} us", 5_000 + 100 * i);
        }
        assert_eq!(w.ssthresh, 32);
    }

    /// bictcp_acked's units: microseconds x 8 / 1000, at least 1.
    #[test]
    fn delay_is_in_eighths_of_a_millisecond() {
        assert_eq!(delay_units(Time::from_ms(50)), 400);
        assert_eq!(delay_units(Time::from_us(1_030)), 8);
        assert_eq!(delay_units(Time::from_us(50)), 1);
    }
}
