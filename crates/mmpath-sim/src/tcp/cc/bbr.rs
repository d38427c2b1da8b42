//! BBR (version 1) as in Linux net/ipv4/tcp_bbr.c (Cardwell et al., "BBR: Congestion-Based
//! Congestion Control", ACM Queue 2016).
//!
//! On every ACK BBR updates a model of the path from the delivery-rate sample the stack
//! builds (tcp_rate.c, see `RateSample`): the bottleneck bandwidth is the windowed maximum of
//! the delivery rate over 10 packet-timed rounds, the propagation RTT the minimum RTT seen in
//! the last 10 s. It paces at pacing_gain x bandwidth (1 % under it) and caps the window at
//! cwnd_gain x bandwidth x min RTT. The gains follow a state machine:
//!
//! - Startup: gain 2/ln 2 = 2.885 (pacing and cwnd) until the bandwidth has not grown by 25 %
//!   for 3 rounds (the pipe is full);
//! - Drain: pacing gain 1/2.885 until what is in flight falls to one BDP;
//! - ProbeBW: cwnd gain 2, pacing gains cycling 1.25, 0.75, 1, 1, 1, 1, 1, 1 (one phase per
//!   min RTT), the first phase drawn at random (never the 0.75 one);
//! - ProbeRTT: when the min RTT has not been refreshed for 10 s, cwnd 4 packets for 200 ms and
//!   at least one round, then back (to ProbeBW, or Startup if the pipe was never full).
//!
//! Losses do not cut the rate: in the first round of fast recovery BBR sends one packet per
//! packet delivered (packet conservation), then grows back toward its target, and restores the
//! pre-recovery window when recovery ends. The long-term ("policer") mode of tcp_bbr.c is
//! here too: two consecutive 4-16-round intervals with >= 20 % loss and the same delivery rate
//! (within 1/8 or 4 kbit/s) make BBR pace at that rate for 48 rounds.
//!
//! Not ported: the ACK-aggregation cwnd boost (bbr_update_ack_aggregation, added in Linux 5.1,
//! after the 4.10 kernel seed 003 ran) and undo. Units are
//! Linux's: bandwidth in packets per microsecond << 24 (BW_SCALE), gains in 1/256 (BBR_SCALE);
//! times are the simulator's nanoseconds instead of microseconds and jiffies.

use super::{AckInfo, CaState, CongControlOut, CongestionControl, RateSample, TxStart, Window};
use crate::engine::RngStream;
use crate::time::Time;

/// Gains in units of 1/256 (tcp_bbr.c BBR_SCALE 8, BBR_UNIT).
const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Bandwidth in packets/us << 24 (tcp_bbr.c BW_SCALE 24, BW_UNIT).
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// Phases in a ProbeBW gain cycle (tcp_bbr.c CYCLE_LEN).
const CYCLE_LEN: usize = 8;
/// Window of the max-bandwidth filter, in rounds: CYCLE_LEN + 2 (tcp_bbr.c bbr_bw_rtts).
pub const BW_RTTS: u32 = CYCLE_LEN as u32 + 2;
/// Window of the min-RTT filter (tcp_bbr.c bbr_min_rtt_win_sec = 10).
pub const MIN_RTT_WIN: Time = Time::from_secs(10);
/// Minimum time at cwnd 4 in ProbeRTT (tcp_bbr.c bbr_probe_rtt_mode_ms = 200).
pub const PROBE_RTT_MODE: Time = Time::from_ms(200);
/// Below this pacing rate TSO budgets one segment (tcp_bbr.c bbr_min_tso_rate, bit/s).
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// Pace 1 % below the estimate (tcp_bbr.c bbr_pacing_margin_percent).
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// Startup gain 2/ln 2 (tcp_bbr.c bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1 = 739).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// Drain gain 1/2.885 (tcp_bbr.c bbr_drain_gain = 88).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// Steady-state cwnd gain (tcp_bbr.c bbr_cwnd_gain).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// ProbeBW pacing gains (tcp_bbr.c bbr_pacing_gain[]).
pub const PACING_GAIN: [u32; CYCLE_LEN] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// The first ProbeBW phase is drawn over this many phases (tcp_bbr.c bbr_cycle_rand).
const CYCLE_RAND: u32 = 7;
/// Minimum cwnd, and cwnd during ProbeRTT (tcp_bbr.c bbr_cwnd_min_target).
pub const CWND_MIN_TARGET: u32 = 4;
/// "Full pipe": bandwidth grew less than 25 % ... (tcp_bbr.c bbr_full_bw_thresh = 5/4)
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ... for 3 rounds (tcp_bbr.c bbr_full_bw_cnt).
pub const FULL_BW_CNT: u32 = 3;
/// Long-term sampling (tcp_bbr.c): intervals of at least 4 rounds, lossy at >= 50/256 = 20 %
/// loss, consistent within 1/8 or 4 kbit/s (500 bytes/s), used for 48 rounds.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
const LT_BW_DIFF_BYTES_PER_S: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// Linux TCP_INIT_CWND (include/net/tcp.h).
const TCP_INIT_CWND: u32 = 10;
/// tcp_tso_autosize as BBR uses it: at most GSO_MAX_SIZE - 1 - MAX_TCP_HEADER bytes per TSO
/// packet (65536 - 1 - 320 on x86-64), ~1 ms of data (sk_pacing_shift 10), at most 127
/// segments (bbr_tso_segs_goal).
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
const PACING_SHIFT: u32 = 10;
const TSO_MAX_SEGS: u32 = 0x7f;

/// BBR's modes (tcp_bbr.c enum bbr_mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// Kathleen Nichols' windowed max filter (Linux lib/minmax.c): the best, second-best and
/// third-best samples in the window, so the max can age out without storing every sample.
#[derive(Debug, Clone, Copy, Default)]
struct MinMax {
    s: [(u32, u64); 3],
}

impl MinMax {
    fn get(&self) -> u64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u32, v: u64) {
        self.s = [(t, v); 3];
    }

    /// minmax_running_max: add sample `v` at time `t` (here: round count), window `win`.
    fn running_max(&mut self, win: u32, t: u32, v: u64) {
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            self.reset(t, v);
            return;
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, t, v);
    }

    /// minmax_subwin_update: age the best samples through quarters and halves of the window.
    fn subwin_update(&mut self, win: u32, t: u32, v: u64) {
        let dt = t.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
    }
}

fn state_rank(s: CaState) -> u8 {
    // Linux's tcp_ca_state order: Open < Disorder < CWR < Recovery < Loss.
    match s {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

pub struct Bbr {
    rng: RngStream,
    mode: Mode,
    /// Windowed min RTT (None = no sample yet, Linux's ~0U) and when it was last refreshed.
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    /// End of the 200 ms ProbeRTT dwell (None = not started).
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    bw: MinMax,
    /// Packet-timed rounds so far, and tp->delivered at the end of the current round.
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    round_start: bool,
    /// Start of the current ProbeBW phase (a delivered_mstamp).
    cycle_mstamp: Time,
    cycle_idx: usize,
    prev_ca_state: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    full_bw: u64,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    // Long-term (policer) bandwidth sampling.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    /// sk_pacing_rate, bytes/s of payload (0 until the first ACK initialises it).
    pacing_rate: u64,
    /// The connection state last seen in a rate sample (for hooks that get none).
    mss: u32,
    tp_delivered: u64,
    tp_lost: u64,
    delivered_mstamp: Time,
    initialized: bool,
}

impl Bbr {
    pub fn new(rng: RngStream) -> Self {
        Bbr {
            rng,
            mode: Mode::Startup,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_mstamp: Time::ZERO,
            cycle_idx: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_rate: 0,
            mss: 0,
            tp_delivered: 0,
            tp_lost: 0,
            delivered_mstamp: Time::ZERO,
            initialized: false,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }
    /// The bandwidth estimate in bits/s of payload (bbr_bw converted with the MSS).
    pub fn bw_bps(&self) -> u64 {
        ((self.bbr_bw() as u128 * self.mss as u128 * 8 * 1_000_000) >> BW_SCALE) as u64
    }
    /// The pacing rate in bits/s of payload.
    pub fn pacing_rate(&self) -> u64 {
        self.pacing_rate * 8
    }

    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    fn bbr_bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// bbr_rate_bytes_per_sec: bandwidth x gain in bytes/s, 1 % under (the pacing margin).
    fn rate_bytes_per_sec(&self, bw: u64, gain: u32) -> u64 {
        let r = (bw as u128 * self.mss as u128 * gain as u128) >> BBR_SCALE;
        ((r * (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128) >> BW_SCALE) as u64
    }

    /// bbr_init_pacing_rate_from_rtt: high_gain x cwnd / (srtt, or a nominal 1 ms).
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u32, srtt: Option<Time>) {
        let rtt_ns = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.ns().max(1_000)
            }
            None => 1_000_000,
        };
        let bw = (cwnd as u128 * BW_UNIT as u128 * 1_000 / rtt_ns as u128) as u64;
        self.pacing_rate = self.rate_bytes_per_sec(bw, HIGH_GAIN);
    }

    /// bbr_set_pacing_rate: only raise the rate until the pipe is known full.
    fn set_pacing_rate(&mut self, bw: u64, gain: u32, cwnd: u32, srtt: Option<Time>) {
        let rate = self.rate_bytes_per_sec(bw, gain);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate_from_rtt(cwnd, srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// bbr_tso_segs_goal (via bbr_min_tso_segs and tcp_tso_autosize).
    fn tso_segs_goal(&self) -> u32 {
        let min_segs = if self.pacing_rate < (MIN_TSO_RATE_BPS >> 3) { 1 } else { 2 };
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(TSO_MAX_BYTES);
        let segs = ((bytes / self.mss.max(1) as u64) as u32).max(min_segs);
        segs.min(TSO_MAX_SEGS)
    }

    /// bbr_bdp: ceil(bw x min_rtt x gain), or the initial window without an RTT sample.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        let Some(min_rtt) = self.min_rtt else { return TCP_INIT_CWND };
        let w = bw as u128 * min_rtt.ns() as u128 / 1_000;
        ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128) as u32
    }

    /// bbr_quantization_budget: room for 3 TSO bursts, an even count, +2 in the probing phase.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// bbr_inflight: the in-flight target for a bandwidth and gain.
    fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// bbr_packets_in_net_at_edt: in flight less what the bottleneck will have delivered by
    /// the time the next paced packet leaves.
    fn packets_in_net_at_edt(&self, inflight_now: u32, edt_ahead: Time) -> u32 {
        let interval_us = edt_ahead.ns() / 1_000;
        let interval_delivered = ((self.bbr_bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal() as u64;
        }
        at_edt.saturating_sub(interval_delivered) as u32
    }

    /// bbr_save_cwnd: the last known good window, to restore after recovery or ProbeRTT.
    fn save_cwnd(&mut self, cwnd: u32) {
        if state_rank(self.prev_ca_state) < state_rank(CaState::Recovery) && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = self.delivered_mstamp;
    }

    /// bbr_reset_probe_bw_mode: start the gain cycle at a random phase other than 0.75.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        let r = ((self.rng.uniform() * CYCLE_RAND as f64) as u32).min(CYCLE_RAND - 1);
        self.cycle_idx = CYCLE_LEN - 1 - r as usize;
        self.advance_cycle_phase();
    }

    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self) {
        self.lt_last_stamp_ms = self.delivered_mstamp.ns() / 1_000_000;
        self.lt_last_delivered = self.tp_delivered;
        self.lt_last_lost = self.tp_lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval();
    }

    /// bbr_lt_bw_interval_done: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw
                || self.rate_bytes_per_sec(diff, BBR_UNIT) <= LT_BW_DIFF_BYTES_PER_S
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval();
    }

    /// bbr_lt_bw_sampling.
    fn lt_bw_sampling(&mut self, losses: u32, is_app_limited: bool) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval();
            self.lt_is_sampling = true;
        }
        if is_app_limited {
            self.reset_lt_bw_sampling();
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling();
            return;
        }
        if losses == 0 {
            return;
        }
        let lost = self.tp_lost - self.lt_last_lost;
        let delivered = self.tp_delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (self.delivered_mstamp.ns() / 1_000_000).saturating_sub(self.lt_last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms * 1_000);
        self.lt_bw_interval_done(bw);
    }

    /// bbr_update_bw: round counting and the max-bandwidth filter.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else { return };
        if interval == Time::ZERO {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.tp_delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs.losses, rs.is_app_limited);
        let bw = (delivered as u128 * BW_UNIT as u128 * 1_000 / interval.ns() as u128) as u64;
        // App-limited samples only count when they show at least the current estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// bbr_is_next_cycle_phase.
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let min_rtt = self.min_rtt.unwrap_or(Time::MAX);
        let is_full_length = rs.delivered_mstamp.saturating_sub(self.cycle_mstamp) > min_rtt;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(rs.prior_in_flight, rs.edt_ahead);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// bbr_check_full_bw_reached: 3 rounds without 25 % bandwidth growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH as u64) >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// bbr_check_drain.
    fn check_drain(&mut self, w: &mut Window, rs: &RateSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(rs.in_flight, rs.edt_ahead) <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// bbr_check_probe_rtt_done.
    fn check_probe_rtt_done(&mut self, w: &mut Window, now: Time) {
        if self.probe_rtt_done_stamp.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now;
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// bbr_update_min_rtt: the 10 s min-RTT filter and ProbeRTT.
    fn update_min_rtt(&mut self, w: &mut Window, rs: &RateSample, out: &mut CongControlOut) {
        let now = rs.now;
        let filter_expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt <= m) || filter_expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore the low-rate samples of this phase.
            out.mark_app_limited = true;
            if self.probe_rtt_done_stamp.is_none() && rs.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = rs.tp_delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w, now);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx] }, CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// bbr_set_cwnd_to_recover_or_restore: packet conservation in the first round of
    /// recovery, the saved window back when recovery ends. Returns Some(cwnd) when packet
    /// conservation decides the window.
    fn recover_or_restore(&mut self, rs: &RateSample, cwnd: &mut u32) -> bool {
        let (prev, state) = (self.prev_ca_state, rs.state);
        let acked = rs.acked_sacked;
        if rs.losses > 0 {
            *cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        let rec = state_rank(CaState::Recovery);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = rs.tp_delivered;
            *cwnd = rs.in_flight + acked;
        } else if state_rank(prev) >= rec && state_rank(state) < rec {
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            *cwnd = (*cwnd).max(rs.in_flight + acked);
            return true;
        }
        false
    }

    /// bbr_set_cwnd.
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, bw: u64, gain: u32) {
        let acked = rs.acked_sacked;
        let mut cwnd = w.cwnd;
        if acked > 0 && !self.recover_or_restore(rs, &mut cwnd) {
            let target = self.quantization_budget(self.bdp(bw, gain));
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || rs.tp_delivered < TCP_INIT_CWND as u64 {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        w.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(CWND_MIN_TARGET);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// Never called: BBR sets the window in `cong_control`.
    fn cong_avoid(&mut self, _w: &mut Window, _ack: &AckInfo) {}

    /// bbr_ssthresh: entering recovery saves the window; ssthresh itself is left alone.
    fn ssthresh(&mut self, w: &Window) -> u32 {
        self.save_cwnd(w.cwnd);
        w.ssthresh
    }

    /// bbr_undo_cwnd (Linux 4.10): the window stays as BBR set it.
    fn undo_cwnd(&mut self, w: &Window) -> u32 {
        w.cwnd
    }

    /// bbr_set_state: an RTO counts as the end of a round and a loss for long-term sampling.
    fn on_state(&mut self, _w: &mut Window, _now: Time, state: CaState) {
        if state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(1, false);
        }
    }

    /// bbr_cwnd_event (Linux 4.10): data going out after an idle spell of an
    /// application-limited sender is an idle restart (which keeps a ProbeRTT from starting
    /// until data is delivered), and in ProbeBW the pacing drops to the estimated bandwidth
    /// ("avoid pointless buffer overflows"). Later kernels also reset the ACK-aggregation epoch
    /// and check ProbeRTT's end here; neither is in this 4.10 port.
    fn on_tx_start(&mut self, w: &Window, ev: &TxStart) {
        if !ev.app_limited {
            return;
        }
        self.idle_restart = true;
        if self.mode == Mode::ProbeBw {
            self.set_pacing_rate(self.bbr_bw(), BBR_UNIT, w.cwnd, ev.srtt);
        }
    }

    fn pacing_rate_bps(&self) -> Option<u64> {
        self.initialized.then_some(self.pacing_rate * 8)
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn tso_segs_goal(&self) -> Option<u32> {
        Some(Bbr::tso_segs_goal(self))
    }

    fn owns_cwnd(&self) -> bool {
        true
    }

    /// bbr_main.
    fn cong_control(&mut self, w: &mut Window, rs: &RateSample) -> CongControlOut {
        self.mss = rs.mss;
        self.tp_delivered = rs.tp_delivered;
        self.tp_lost = rs.tp_lost;
        self.delivered_mstamp = rs.delivered_mstamp;
        if !self.initialized {
            // bbr_init: the pacing rate from the initial window and a nominal 1 ms RTT.
            self.initialized = true;
            self.init_pacing_rate_from_rtt(w.cwnd, None);
        }
        let mut out = CongControlOut::default();
        self.update_bw(rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(rs);
        self.check_drain(w, rs);
        self.update_min_rtt(w, rs, &mut out);
        self.update_gains();
        let bw = self.bbr_bw();
        self.set_pacing_rate(bw, self.pacing_gain, w.cwnd, rs.srtt);
        self.set_cwnd(w, rs, bw, self.cwnd_gain);
        out
    }

    /// bbr_sndbuf_expand: 3 windows, since BBR may grow during recovery.
    fn sndbuf_expand(&self) -> u32 {
        3
    }

    fn mode_name(&self) -> Option<&'static str> {
        Some(self.mode.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// A hand-built rate sample: `delivered` packets over `interval_ms`, ending a round when
    /// `prior_delivered` reaches the round's end.
    #[allow(clippy::too_many_arguments)]
    fn sample(
        now_ms: f64,
        tp_delivered: u64,
        prior_delivered: u64,
        delivered: u64,
        interval_ms: f64,
        rtt_ms: f64,
        in_flight: u32,
        acked: u32,
    ) -> RateSample {
        let now = Time::from_ms_f64(now_ms);
        RateSample {
            now,
            delivered: Some(delivered),
            interval: Some(Time::from_ms_f64(interval_ms)),
            prior_delivered,
            prior_in_flight: in_flight + acked,
            acked_sacked: acked,
            losses: 0,
            rtt: Some(Time::from_ms_f64(rtt_ms)),
            is_app_limited: false,
            tp_delivered,
            tp_lost: 0,
            delivered_mstamp: now,
            in_flight,
            state: CaState::Open,
            mss: MSS,
            srtt: Some(Time::from_ms_f64(rtt_ms)),
            edt_ahead: Time::ZERO,
        }
    }

    fn bbr() -> Bbr {
        Bbr::new(RngStream::new(1, 0x4000))
    }

    /// Startup ends only after 3 consecutive rounds without 25 % bandwidth growth.
    #[test]
    fn startup_exits_after_three_rounds_without_growth() {
        let mut b = bbr();
        let mut w = Window::new(10);
        let mut tp = 0u64;
        // Rounds 1-5: the delivery rate doubles every round: Startup stays.
        let mut per_round = 10u64;
        let mut now = 0.0;
        for _ in 0..5 {
            let prior = tp;
            tp += per_round;
            now += 10.0;
            b.cong_control(&mut w, &sample(now, tp, prior, per_round, 10.0, 10.0, 2 * per_round as u32, 2));
            assert_eq!(b.mode(), Mode::Startup);
            per_round *= 2;
        }
        let plateau = per_round / 2;
        // Flat rounds: 1 and 2 do not end Startup, 3 does (in flight stays high, so Drain).
        for k in 1..=3 {
            let prior = tp;
            tp += plateau;
            now += 10.0;
            b.cong_control(&mut w, &sample(now, tp, prior, plateau, 10.0, 10.0, 4 * plateau as u32, 2));
            if k < 3 {
                assert_eq!(b.mode(), Mode::Startup, "flat round {k}");
                assert!(!b.full_bw_reached());
            }
        }
        assert!(b.full_bw_reached());
        assert_eq!(b.mode(), Mode::Drain);
        assert_eq!(b.pacing_gain(), DRAIN_GAIN);
        // Growth that never reaches 25 % over the last plateau is no growth: 7 % per round.
        let mut b2 = bbr();
        let mut w2 = Window::new(10);
        let (mut tp2, mut d, mut t2) = (0u64, 100u64, 0.0);
        for _ in 0..4 {
            let prior = tp2;
            tp2 += d;
            t2 += 10.0;
            b2.cong_control(&mut w2, &sample(t2, tp2, prior, d, 10.0, 10.0, 1000, 2));
            d = d * 107 / 100;
        }
        assert!(b2.full_bw_reached(), "7 % growth per round is not growth for BBR");
    }

    /// Drive a BBR flow to ProbeBW at 1000 packets per 10 ms (1.16 Gbit/s at MSS 1448) with a
    /// 10 ms min RTT; returns (bbr, window, tp_delivered, now_ms).
    fn steady() -> (Bbr, Window, u64, f64) {
        let mut b = bbr();
        let mut w = Window::new(10);
        let (mut tp, mut now) = (0u64, 0.0);
        for _ in 0..12 {
            let prior = tp;
            tp += 1000;
            now += 10.0;
            b.cong_control(&mut w, &sample(now, tp, prior, 1000, 10.0, 10.0, 500, 1000));
        }
        assert_eq!(b.mode(), Mode::ProbeBw);
        (b, w, tp, now)
    }

    /// bbr_cwnd_event (4.10): an application-limited sender starting again after idle is an idle
    /// restart, and in ProbeBW paces at the estimated bandwidth (gain 1) whatever phase of the
    /// cycle it is in; a sender that was not application-limited changes nothing.
    #[test]
    fn an_app_limited_restart_paces_at_the_bandwidth() {
        let (mut b, w, _, now) = steady();
        b.pacing_rate = b.rate_bytes_per_sec(b.bbr_bw(), PACING_GAIN[0]);
        let probing = b.pacing_rate;
        let ev = |app_limited| TxStart {
            now: Time::from_ms_f64(now + 100.0),
            last_send: Time::from_ms_f64(now),
            snd_nxt: 0,
            app_limited,
            srtt: Some(Time::from_ms(10)),
        };
        b.on_tx_start(&w, &ev(false));
        assert_eq!((b.pacing_rate, b.idle_restart), (probing, false), "not application-limited");
        b.on_tx_start(&w, &ev(true));
        assert!(b.idle_restart);
        assert_eq!(b.pacing_rate, b.rate_bytes_per_sec(b.bbr_bw(), BBR_UNIT));
        assert!(b.pacing_rate < probing, "1.25 x bandwidth down to 1 x");
    }

    /// Pacing at 99 % of bandwidth x gain, in every phase of the cycle.
    #[test]
    fn pacing_rate_is_99pct_of_bw_times_gain() {
        let (mut b, mut w, mut tp, mut now) = steady();
        let bw_bps = 1000.0 * MSS as f64 * 8.0 / 0.010;
        assert!((b.bw_bps() as f64 / bw_bps - 1.0).abs() < 1e-3, "bw {}", b.bw_bps());
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..20 {
            let gain = b.pacing_gain() as f64 / BBR_UNIT as f64;
            let want = bw_bps * gain * 0.99;
            let got = b.pacing_rate_bps().unwrap() as f64;
            assert!((got / want - 1.0).abs() < 2e-3, "gain {gain}: {got} vs {want}");
            seen.insert(b.pacing_gain());
            let prior = tp;
            tp += 1000;
            now += 10.0;
            // In flight at the BDP plus the probing phase's extra (so 1.25 can end).
            b.cong_control(&mut w, &sample(now, tp, prior, 1000, 10.0, 10.5, 1400, 1000));
        }
        assert!(seen.contains(&(BBR_UNIT * 5 / 4)) && seen.contains(&(BBR_UNIT * 3 / 4)) && seen.contains(&BBR_UNIT));
        // Startup paces at 2.885 x: a fresh flow after its first sample.
        let mut s = bbr();
        let mut w0 = Window::new(10);
        s.cong_control(&mut w0, &sample(10.0, 10, 0, 10, 10.0, 10.0, 0, 10));
        let bw0 = 10.0 * MSS as f64 * 8.0 / 0.010;
        let got = s.pacing_rate_bps().unwrap() as f64;
        assert!((got / (bw0 * HIGH_GAIN as f64 / 256.0 * 0.99) - 1.0).abs() < 2e-3, "startup pacing {got}");
        // Steady-state cwnd: 2 x BDP + the quantization budget.
        assert!(w.cwnd >= 2000 && w.cwnd <= 2000 + 3 * 127 + 4, "cwnd {}", w.cwnd);
    }

    /// ProbeRTT: entered once the min RTT is 10 s old, cwnd 4 during it, left after 200 ms and
    /// a round at that level, with the window restored.
    #[test]
    fn probe_rtt_every_ten_seconds_at_cwnd_four() {
        let (mut b, mut w, mut tp, mut now) = steady();
        let min_at = now; // last time a sample matched the 10 ms min RTT
        let cwnd_before = w.cwnd;
        // Samples at 12 ms (a standing queue) never refresh the min RTT.
        while now < min_at + 10_000.0 {
            let prior = tp;
            tp += 1000;
            now += 10.0;
            b.cong_control(&mut w, &sample(now, tp, prior, 1000, 10.0, 12.0, 1200, 1000));
            if now <= min_at + 10_000.0 {
                assert_ne!(b.mode(), Mode::ProbeRtt, "at {now} ms");
            }
        }
        let prior = tp;
        tp += 1000;
        now += 10.0;
        let out = b.cong_control(&mut w, &sample(now, tp, prior, 1000, 10.0, 12.0, 1200, 1000));
        assert_eq!(b.mode(), Mode::ProbeRtt, "min RTT older than 10 s");
        assert_eq!(w.cwnd, CWND_MIN_TARGET);
        assert!(out.mark_app_limited);
        // In flight drains to 4: the 200 ms dwell starts. The samples of this phase are
        // application-limited (BBR marked the connection so), so the bandwidth filter keeps
        // its estimate.
        let low = |now: f64, tp: u64, prior: u64, d: u64| RateSample {
            is_app_limited: true,
            ..sample(now, tp, prior, d, 10.0, 10.0, 4, d as u32)
        };
        let t_low = now + 1.0;
        b.cong_control(&mut w, &low(t_low, tp + 1, tp, 1));
        tp += 1;
        let mut left_at = None;
        let mut t = t_low;
        while t < t_low + 400.0 {
            t += 5.0;
            let prior = tp;
            tp += 2;
            b.cong_control(&mut w, &low(t, tp, prior, 2));
            if b.mode() == Mode::ProbeRtt {
                assert!(w.cwnd <= CWND_MIN_TARGET, "cwnd {} in ProbeRTT", w.cwnd);
            } else {
                left_at = Some(t);
                break;
            }
        }
        let left_at = left_at.expect("ProbeRTT ends");
        assert!(left_at > t_low + 200.0 && left_at <= t_low + 210.0, "left after {} ms", left_at - t_low);
        assert_eq!(b.mode(), Mode::ProbeBw);
        // Restored to the saved window, capped by the target of the new phase (which may lack
        // the probing phase's +2).
        assert!(w.cwnd + 2 >= cwnd_before && w.cwnd > 1000, "cwnd restored: {} vs {cwnd_before}", w.cwnd);
        assert_eq!(b.min_rtt(), Some(Time::from_ms(10)));
    }

    /// ProbeBW starts at a random phase, never the draining 0.75 one, and is reproducible.
    #[test]
    fn probe_bw_start_phase_is_random_but_seeded() {
        let mut phases = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let mut b = Bbr::new(RngStream::new(seed, 0x4000));
            b.reset_probe_bw_mode();
            assert_ne!(b.cycle_idx(), 1);
            phases.insert(b.cycle_idx());
            let mut again = Bbr::new(RngStream::new(seed, 0x4000));
            again.reset_probe_bw_mode();
            assert_eq!(again.cycle_idx(), b.cycle_idx());
        }
        assert_eq!(phases.len(), 7, "{phases:?}");
    }

    /// Windowed max over 10 rounds: an old peak ages out.
    #[test]
    fn bandwidth_filter_forgets_after_ten_rounds() {
        let mut m = MinMax::default();
        m.running_max(BW_RTTS, 1, 100);
        for r in 2..=11 {
            m.running_max(BW_RTTS, r, 50);
            assert_eq!(m.get(), 100, "round {r}");
        }
        m.running_max(BW_RTTS, 12, 50);
        assert_eq!(m.get(), 50);
    }
}
