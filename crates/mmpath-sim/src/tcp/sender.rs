//! A TCP sender modelled on Linux: SACK scoreboard with RFC 6675 loss marking, fast recovery
//! with Proportional Rate Reduction (RFC 6937, Linux tcp_cwnd_reduction), RTO per RFC 6298 with
//! Linux's 200 ms floor and exponential backoff, cwnd = 1 and everything un-SACKed marked lost
//! after an RTO (tcp_enter_loss), Nagle for sub-MSS tails, and send-buffer limits.
//!
//! Delivery-rate sampling as Linux's tcp_rate.c (every transmission stamps the connection's
//! delivered count and times on the packet; every ACK builds a rate sample from the newest
//! packet it delivers) feeds algorithms with a `cong_control` hook (BBR). Pacing as Linux's
//! internal pacing with earliest departure times (tcp_update_skb_after_send,
//! tcp_pacing_check): when the algorithm asks for it (BBR) or the scenario turns it on, a
//! packet leaves no earlier than the pacing schedule, and the next release time is a timer
//! deadline like the RTO.
//!
//! RACK loss detection (RFC 8985, Linux net/ipv4/tcp_recovery.c) once in Recovery or Loss,
//! as Linux 4.4-4.17 ran it alongside the SACK dupthresh rule: a segment, original or
//! retransmission, is lost when a segment sent after it has been delivered and it has waited
//! RACK.rtt + reo_wnd (reo_wnd = min RTT / 4, at most srtt), with the reordering timer for
//! segments still inside the window. This is what finds retransmissions that are dropped
//! again (Linux's "lost retransmit" detection); without it they wait for the RTO.
//!
//! Linux 4.10's other loss machinery, all on by default in the kernels the papers ran:
//! - FACK (tcp_fack = 1): recovery starts once the highest SACK is more than `REORDERING`
//!   packets above snd_una, and everything un-SACKed below that distance is lost
//!   (tcp_time_to_recover, tcp_update_scoreboard, tcp_mark_head_lost).
//! - Tail loss probes (tcp_early_retrans = 3; tcp_schedule_loss_probe, tcp_send_loss_probe,
//!   tcp_process_tlp_ack): in Open, 2 srtt (see `tlp`) after the last transmission or ACK, one
//!   new segment beyond cwnd or the last segment again; a loss the probe repaired costs a
//!   reduction through CWR.
//! - F-RTO (tcp_frto = 2, SACK-enhanced; tcp_process_loss): after an RTO, new data before
//!   more retransmissions, and an undo when data never retransmitted turns out delivered.
//! - Undo (tcp_may_undo, tcp_try_undo_loss / _recovery / _dsack, tcp_undo_cwnd_reduction)
//!   on D-SACK evidence (undo_retrans) or timestamps (Eifel, tcp_packet_delayed), with the
//!   algorithm's undo_cwnd.
//!
//! Not modelled (documented in docs/models.md): RACK before recovery starts (Linux >= 4.18
//! also detects the first loss by time), early retransmit (RFC 5827), tcp_try_undo_partial
//! and the reordering estimator (tp->reordering stays 3), TSO/GSO batching, idle restart.

use super::cc::{AckInfo, CaState, CongestionControl, RateSample, Window, INFINITE_SSTHRESH};
use super::rtt::RttEstimator;
use super::scoreboard::{Scoreboard, Seg, SentSpan, TxRate};
use super::tlp;
use crate::packet::{Kind, Packet, Way, TCP_HEADER_BYTES};
use crate::scenario::{BufSize, TcpOpts};
use crate::time::Time;
use crate::trace::LogHistogram;

/// Linux tcp_wmem[1]: the send buffer before autotuning grows it.
const WMEM_DEFAULT: u64 = 16_384;
/// Linux pacing ratios used for sk_pacing_rate even without fq (sysctl tcp_pacing_ss_ratio
/// 200 %, tcp_pacing_ca_ratio 120 %); CUBIC's HyStart reads it.
const PACING_SS_RATIO: f64 = 2.0;
const PACING_CA_RATIO: f64 = 1.2;
/// tcp_update_skb_after_send: the first 10 data segments are not paced ("Original sch_fq does
/// not pace first 10 MSS").
const UNPACED_SEGMENTS: u64 = 10;
/// TCP_TIMEOUT_MIN (include/net/tcp.h, 2 jiffies; 2 ms at HZ = 1000): tcp_rack_mark_lost adds
/// it to the reordering timer.
const TCP_TIMEOUT_MIN: Time = Time::from_ms(2);
/// tp->reordering's initial value, net.ipv4.tcp_reordering = 3 (the model has no reordering
/// estimator; Linux raises it, and turns FACK off, only when it detects reordering).
const REORDERING: u32 = 3;

pub struct SenderCfg {
    pub flow: u16,
    pub mss: u32,
    pub initial_cwnd: u32,
    pub min_rto: Time,
    pub sndbuf: BufSize,
    pub wmem_max: u64,
    pub cc: Box<dyn CongestionControl>,
    /// Pace even if the algorithm does not ask for it (fq qdisc or SO_MAX_PACING_RATE in
    /// Linux: the stack's pacing rate, tcp_update_pacing_rate).
    pub pacing: bool,
}

#[derive(Debug, Clone, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub fast_recoveries: u64,
    pub rtos: u64,
    /// Tail loss probes sent (LINUX_MIB_TCPLOSSPROBES).
    pub tlp_probes: u64,
    /// Probes that repaired a loss, with the window reduction that follows
    /// (LINUX_MIB_TCPLOSSPROBERECOVERY).
    pub tlp_recoveries: u64,
    /// RTOs F-RTO found spurious (LINUX_MIB_TCPSPURIOUSRTOS).
    pub spurious_rtos: u64,
    /// Window reductions undone (loss, recovery and D-SACK undo together).
    pub undos: u64,
    pub rtt_ms: LogHistogram,
}

/// What an ACK showed, as the flags Linux's tcp_ack collects.
#[derive(Debug, Clone, Copy, Default)]
struct AckFlags {
    /// FLAG_SND_UNA_ADVANCED.
    advanced: bool,
    /// FLAG_WIN_UPDATE (approximated: the advertised window changed).
    win_update: bool,
    /// FLAG_DATA_SACKED: something newly SACKed.
    data_sacked: bool,
    /// FLAG_DSACKING_ACK: the first SACK block reports a duplicate (RFC 2883).
    dsack: bool,
    /// FLAG_ORIG_SACK_ACKED: a segment never retransmitted, ending at or below high_seq, was
    /// newly ACKed or SACKed.
    orig_sack_acked: bool,
    /// is_dupack in tcp_ack: no advance and none of FLAG_NOT_DUP (data, window update, ACKed).
    is_dupack: bool,
}

/// What try_send may send (tcp_write_xmit's callers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Xmit {
    /// Retransmissions first, then new data (tcp_xmit_retransmit_queue + tcp_write_xmit).
    Normal,
    /// New data only (F-RTO step 2b, REXMIT_NEW in tcp_xmit_recovery).
    NewOnly,
    /// One new segment as a loss probe: cwnd may be exceeded and Nagle is off
    /// (tcp_send_loss_probe -> tcp_write_xmit(push_one = 2, TCP_NAGLE_OFF)).
    Probe,
}

pub struct TcpSender {
    flow: u16,
    mss: u32,
    /// Bytes the application has handed to the socket so far (u64::MAX: unlimited).
    app_limit: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    sb: Scoreboard,
    pub w: Window,
    cc: Box<dyn CongestionControl>,
    pub state: CaState,
    high_seq: u64,
    prior_cwnd: u32,
    prr_delivered: u32,
    prr_out: u32,
    dupacks: u32,
    /// icsk_retransmits: RTO expiries since snd_una last advanced (tcp_ack zeroes it on any
    /// advance; the RTO backoff, by contrast, waits for a valid RTT sample).
    rto_retransmits: u32,
    pub rtt: RttEstimator,
    rto_at: Option<Time>,
    /// RACK's reordering timer (ICSK_TIME_REO_TIMEOUT).
    reo_at: Option<Time>,
    peer_rwnd: u64,
    sndbuf: BufSize,
    wmem_max: u64,
    ts_recent: u64,
    // Linux tcp_cwnd_validate bookkeeping.
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    /// Sequence numbers no new segment may cross (MPTCP: where one DSS mapping ends and a
    /// discontiguous one begins; Linux never puts two mappings in one skb). Empty for TCP.
    boundaries: std::collections::VecDeque<u64>,
    /// TCP Small Queues (tcp_small_queue_check): bytes of this socket queued below TCP (in
    /// the first hop's queue, not yet transmitted), the ceiling (net.ipv4.tcp_limit_output_bytes;
    /// 0 = off) and whether sending stopped on it (TSQ_THROTTLED).
    tsq_queued: u64,
    tsq_limit: u64,
    tsq_throttled: bool,
    // tcp_rate.c state: tp->delivered, tp->lost, tp->delivered_mstamp, tp->first_tx_mstamp,
    // tp->app_limited (0 = not application-limited), tcp_min_rtt.
    delivered: u64,
    lost: u64,
    delivered_mstamp: Time,
    first_tx_mstamp: Time,
    app_limited: u64,
    min_rtt: Option<Time>,
    // Pacing (EDT): whether on, tp->tcp_wstamp_ns, and the release time we wait for.
    pacing: bool,
    wstamp: Time,
    pace_wait: Option<Time>,
    // Tail loss probe: when the probe timer fires (Linux's ICSK_TIME_LOSS_PROBE, which takes
    // the RTO timer's place while armed; None = the RTO is the pending timer) and
    // tp->tlp_high_seq (None = no probe retransmission outstanding).
    tlp_at: Option<Time>,
    tlp_high_seq: Option<u64>,
    // Undo (tcp_init_undo, tcp_may_undo): tp->prior_ssthresh (0 = none), tp->undo_marker,
    // tp->undo_retrans (-1 = no retransmission yet), tp->retrans_stamp (the first
    // retransmission of the episode), tp->frto (F-RTO running after this RTO).
    prior_ssthresh: u32,
    undo_marker: Option<u64>,
    undo_retrans: i32,
    retrans_stamp: Option<Time>,
    frto: bool,
    xmit: Xmit,
    /// net.ipv4.tcp_early_retrans >= 3 (loss probes) and net.ipv4.tcp_frto != 0; both on by
    /// default as in every kernel since 3.10.
    tlp_enabled: bool,
    frto_enabled: bool,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(cfg: SenderCfg) -> Self {
        let pacing = cfg.pacing || cfg.cc.needs_pacing();
        TcpSender {
            flow: cfg.flow,
            mss: cfg.mss,
            app_limit: 0,
            snd_una: 0,
            snd_nxt: 0,
            sb: Scoreboard::new(),
            w: Window::new(cfg.initial_cwnd),
            cc: cfg.cc,
            state: CaState::Open,
            high_seq: 0,
            prior_cwnd: cfg.initial_cwnd,
            prr_delivered: 0,
            prr_out: 0,
            dupacks: 0,
            rto_retransmits: 0,
            rtt: RttEstimator::new(cfg.min_rto),
            rto_at: None,
            reo_at: None,
            // Until the first ACK: the peer's initial window (Linux's initial rcv_wnd is at
            // least 10 segments), so the initial window of 10 can go out.
            peer_rwnd: 65_535,
            sndbuf: cfg.sndbuf,
            wmem_max: cfg.wmem_max,
            ts_recent: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            boundaries: std::collections::VecDeque::new(),
            tsq_queued: 0,
            tsq_limit: 0,
            tsq_throttled: false,
            delivered: 0,
            lost: 0,
            delivered_mstamp: Time::ZERO,
            first_tx_mstamp: Time::ZERO,
            app_limited: 0,
            min_rtt: None,
            pacing,
            wstamp: Time::ZERO,
            pace_wait: None,
            tlp_at: None,
            tlp_high_seq: None,
            prior_ssthresh: 0,
            undo_marker: None,
            undo_retrans: -1,
            retrans_stamp: None,
            frto: false,
            xmit: Xmit::Normal,
            tlp_enabled: true,
            frto_enabled: true,
            stats: SenderStats::default(),
        }
    }

    pub fn mss(&self) -> u32 {
        self.mss
    }
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }
    pub fn app_limit(&self) -> u64 {
        self.app_limit
    }
    pub fn in_flight(&self) -> u32 {
        self.sb.in_flight()
    }
    pub fn packets_out(&self) -> u32 {
        self.sb.packets_out()
    }
    pub fn peer_rwnd(&self) -> u64 {
        self.peer_rwnd
    }
    /// The next time the sender needs the clock: the RTO deadline, the pacing release time
    /// of a packet held back by the pacing schedule, RACK's reordering timer or the loss probe
    /// timer, whichever is first.
    pub fn timer_deadline(&self) -> Option<Time> {
        // Nested matches rather than an iterator over an array: this runs after every event of
        // the flow, and the iterator form cost ~2 % of a dual-band run's instructions.
        fn earlier(a: Option<Time>, b: Option<Time>) -> Option<Time> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, None) => x,
                (None, y) => y,
            }
        }
        earlier(earlier(earlier(self.rto_at, self.pace_wait), self.reo_at), self.tlp_at)
    }

    /// When the tail loss probe fires, if armed.
    pub fn tlp_deadline(&self) -> Option<Time> {
        self.tlp_at
    }
    /// What the congestion control hears of an ACK (the same for pkts_acked and cong_avoid).
    fn ack_info(&self, now: Time, acked: u32, rtt: Option<Time>, prior_in_flight: u32) -> AckInfo {
        AckInfo {
            now,
            acked,
            rtt,
            prior_in_flight,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            mss: self.mss,
            pacing_rate_bps: self.stack_pacing_rate_bps(),
        }
    }
    /// Packets delivered so far (tp->delivered).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    /// Whether this sender paces.
    pub fn is_pacing(&self) -> bool {
        self.pacing
    }
    /// The pacing rate in force, bits/s of payload (None: not pacing, or no rate yet).
    pub fn pacing_rate_bps(&self) -> Option<u64> {
        if !self.pacing {
            return None;
        }
        match self.cc.pacing_rate_bps() {
            Some(r) => Some(r),
            None => self.linux_pacing_rate_bps(),
        }
    }
    /// The congestion control's mode name, if it has modes (BBR).
    pub fn cc_mode(&self) -> Option<&'static str> {
        self.cc.mode_name()
    }
    /// Consistency of the scoreboard counters with its flags (the oracle asks).
    pub fn scoreboard_consistent(&self) -> bool {
        self.sb.recount() == self.sb.counters()
    }

    /// The application has written up to `limit` bytes in total.
    pub fn set_app_limit(&mut self, limit: u64) {
        self.app_limit = limit;
    }

    /// net.ipv4.tcp_early_retrans < 3 turns tail loss probes off (on by default).
    pub fn set_loss_probes(&mut self, on: bool) {
        self.tlp_enabled = on;
        if !on {
            self.tlp_at = None;
        }
    }

    /// net.ipv4.tcp_frto = 0 turns F-RTO off (on by default).
    pub fn set_frto(&mut self, on: bool) {
        self.frto_enabled = on;
    }

    /// Turns TCP Small Queues on with this tcp_limit_output_bytes (0: off).
    pub fn set_output_limit(&mut self, bytes: u64) {
        self.tsq_limit = bytes;
    }

    /// The flow's host sysctls from its scenario TCP options (TSQ's limit, loss probes,
    /// F-RTO), for single-path flows and MPTCP subflows alike.
    pub fn apply_sysctls(&mut self, t: &TcpOpts) {
        self.set_output_limit(t.limit_output_bytes);
        self.set_loss_probes(t.tail_loss_probes);
        self.set_frto(t.frto);
    }

    /// Whether the socket is waiting for its queued packets to leave the host (TSQ).
    pub fn tsq_throttled(&self) -> bool {
        self.tsq_throttled
    }

    /// A packet of `bytes` (payload + headers, as counted when sent) left the first hop (transmitted or dropped): true if the socket was
    /// throttled and may send again (tcp_tsq_handler), which the caller does with try_send.
    pub fn tsq_done(&mut self, bytes: u64) -> bool {
        self.tsq_queued = self.tsq_queued.saturating_sub(bytes);
        std::mem::take(&mut self.tsq_throttled)
    }

    /// A queued packet of `bytes` was dropped before leaving the host.
    pub fn tsq_release(&mut self, bytes: u64) {
        self.tsq_queued = self.tsq_queued.saturating_sub(bytes);
    }

    /// tcp_small_queue_check (Linux 4.x tcp_output.c): at most max(2 packets, ~1 ms at the
    /// pacing rate) and never more than tcp_limit_output_bytes may sit below TCP.
    fn tsq_blocked(&mut self) -> bool {
        if self.tsq_limit == 0 {
            return false;
        }
        let pkt = (self.mss + TCP_HEADER_BYTES) as u64;
        let per_ms = self.stack_pacing_rate_bps() / 8 / 1024; // sk_pacing_rate >> 10
        let limit = per_ms.max(2 * pkt).min(self.tsq_limit);
        if self.tsq_queued > limit {
            self.tsq_throttled = true;
            return true;
        }
        false
    }

    /// No segment may span `seq` (it starts a new record: an MPTCP mapping).
    pub fn mark_boundary(&mut self, seq: u64) {
        if seq > self.snd_nxt && self.boundaries.back().is_none_or(|&b| b < seq) {
            self.boundaries.push_back(seq);
        }
    }

    /// Forget boundaries at or beyond `seq` (queued data taken back).
    pub fn drop_boundaries_from(&mut self, seq: u64) {
        while self.boundaries.back().is_some_and(|&b| b >= seq) {
            self.boundaries.pop_back();
        }
    }

    /// Stop accepting new application data now (iperf3 -t ends): nothing beyond what was
    /// already sent will be sent.
    pub fn close_app(&mut self) {
        self.app_limit = self.app_limit.min(self.snd_nxt);
    }

    /// Bytes of data the socket may hold unacknowledged (send buffer).
    fn sndbuf_bytes(&self) -> u64 {
        match self.sndbuf {
            BufSize::Bytes(b) => b,
            // tcp_sndbuf_expand: room for two congestion windows, bounded by tcp_wmem[2].
            // (ops->sndbuf_expand: 2, BBR 3.)
            BufSize::Auto => (self.cc.sndbuf_expand() as u64 * self.w.cwnd as u64 * self.mss as u64)
                .max(WMEM_DEFAULT)
                .min(self.wmem_max),
        }
    }

    /// Linux sk_pacing_rate (tcp_update_pacing_rate), bits/s; 0 before the first RTT sample.
    pub fn stack_pacing_rate_bps(&self) -> u64 {
        match self.rtt.srtt() {
            None => 0,
            Some(s) => {
                let ratio = if self.w.in_slow_start() { PACING_SS_RATIO } else { PACING_CA_RATIO };
                (self.w.cwnd as f64 * self.mss as f64 * 8.0 * ratio / s.secs_f64().max(1e-9)) as u64
            }
        }
    }

    /// sk_pacing_rate as tcp_update_pacing_rate sets it: 200 % of cwnd x mss / srtt while
    /// cwnd < ssthresh / 2, else 120 %, with cwnd at least packets_out; None before an RTT
    /// sample (Linux leaves the rate unlimited then).
    fn linux_pacing_rate_bps(&self) -> Option<u64> {
        let srtt = self.rtt.srtt()?;
        let ratio = if self.w.cwnd < self.w.ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
        let pkts = self.w.cwnd.max(self.sb.packets_out()) as f64;
        Some((pkts * self.mss as f64 * 8.0 * ratio / srtt.secs_f64().max(1e-9)) as u64)
    }

    /// tcp_pacing_check: is the next packet held back by the pacing schedule? If so, wait
    /// for its release time.
    fn pace_blocked(&mut self, now: Time) -> bool {
        if self.pacing && self.wstamp > now {
            self.pace_wait = Some(self.wstamp);
            return true;
        }
        false
    }

    /// tcp_rate_skb_sent (the connection's delivery state stamped on a packet) before a
    /// transmission.
    fn tx_stamp(&mut self, now: Time) -> TxRate {
        if self.sb.packets_out() == 0 {
            self.first_tx_mstamp = now;
            self.delivered_mstamp = now;
        }
        TxRate {
            delivered: self.delivered,
            delivered_mstamp: self.delivered_mstamp,
            first_tx_mstamp: self.first_tx_mstamp,
            app_limited: self.app_limited != 0,
        }
    }

    /// tcp_update_skb_after_send: advance the earliest departure time by len / rate, less up
    /// to half of it as credit for lateness ("take into account OS jitter").
    fn after_send(&mut self, now: Time, len: u32) {
        // TSQ counts what this socket has below it from the moment it is sent.
        self.tsq_queued += (len + TCP_HEADER_BYTES) as u64;
        if !self.pacing {
            return;
        }
        let prior = self.wstamp;
        self.wstamp = self.wstamp.max(now);
        if self.stats.segments_sent < UNPACED_SEGMENTS {
            return;
        }
        let Some(rate) = self.pacing_rate_bps().filter(|&r| r > 0) else { return };
        let mut len_ns = (len as u128 * 8 * 1_000_000_000 / rate as u128) as u64;
        let credit = (self.wstamp - prior).ns();
        len_ns -= (len_ns / 2).min(credit);
        self.wstamp += Time(len_ns);
    }

    /// Linux tcp_is_cwnd_limited.
    fn cwnd_limited(&self) -> bool {
        if self.w.in_slow_start() {
            self.w.cwnd < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        }
    }

    fn data_packet(&self, seg: &Seg, now: Time) -> Packet {
        let mut p = Packet::empty(self.flow, Kind::Data, Way::Forward);
        p.seq = seg.start;
        p.len = seg.len;
        p.size_bytes = seg.len + TCP_HEADER_BYTES;
        p.ts_val_ns = now.ns();
        p.ts_ecr_ns = self.ts_recent;
        p
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_at = if self.sb.is_empty() { None } else { Some(now + self.rtt.rto()) };
    }

    /// Sends what the window, the receive window, the send buffer and the application allow.
    pub fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut cwnd_full = false;
        if self.pace_wait.is_some_and(|t| t <= now) {
            self.pace_wait = None;
        }
        let mut out_of_data = false;
        let mut sent_new = 0u32;
        let probe = self.xmit == Xmit::Probe;
        loop {
            if self.sb.in_flight() >= self.w.cwnd {
                cwnd_full = true;
                // tcp_write_xmit: "Force out a loss probe pkt."
                if !probe {
                    break;
                }
            }
            let may_retx = self.xmit == Xmit::Normal && self.sb.lost_pending > 0;
            if may_retx && self.pace_blocked(now) {
                break;
            }
            if self.tsq_blocked() {
                break;
            }
            let retx = if may_retx {
                let tx = self.tx_stamp(now);
                self.sb.take_retransmission(now, tx)
            } else {
                None
            };
            if let Some(seg) = retx {
                out.push(self.data_packet(&seg, now));
                // tcp_retransmit_skb: the first retransmission's time (Eifel's reference) and
                // one more retransmission a D-SACK may show spurious.
                self.retrans_stamp.get_or_insert(now);
                self.undo_retrans = self.undo_retrans.max(0) + 1;
                self.stats.retransmits += 1;
                self.stats.segments_sent += 1;
                self.stats.bytes_sent += seg.len as u64;
                self.after_send(now, seg.len);
                if self.state == CaState::Recovery {
                    self.prr_out += 1;
                }
                if seg.start == self.snd_una {
                    self.arm_rto(now);
                }
                continue;
            }
            if self.snd_nxt >= self.app_limit {
                out_of_data = true;
                break;
            }
            while self.boundaries.front().is_some_and(|&b| b <= self.snd_nxt) {
                self.boundaries.pop_front();
            }
            let record_end = self.boundaries.front().copied().unwrap_or(u64::MAX).min(self.app_limit);
            let len = (record_end - self.snd_nxt).min(self.mss as u64) as u32;
            let end = self.snd_nxt + len as u64;
            if end > self.snd_una + self.peer_rwnd {
                break;
            }
            if end - self.snd_una > self.sndbuf_bytes() {
                break;
            }
            // Nagle (RFC 896): a sub-MSS segment waits while anything is unacknowledged, unless
            // it ends a record that more data follows.
            if len < self.mss && end == self.app_limit && !self.sb.is_empty() && !probe {
                out_of_data = true;
                break;
            }
            if self.pace_blocked(now) {
                break;
            }
            let was_idle = self.sb.is_empty();
            let tx = self.tx_stamp(now);
            let seg = Seg { start: self.snd_nxt, len, sent: now, flags: 0, tx };
            self.sb.push(seg);
            self.snd_nxt = end;
            out.push(self.data_packet(&seg, now));
            self.stats.segments_sent += 1;
            self.stats.bytes_sent += len as u64;
            self.after_send(now, len);
            if self.state == CaState::Recovery {
                self.prr_out += 1;
            }
            if was_idle || self.rto_at.is_none() {
                self.arm_rto(now);
            }
            sent_new += 1;
            if probe {
                break; // push_one
            }
        }
        // tcp_write_xmit: "Send one loss probe per tail loss episode" (not after the probe
        // itself; tcp_event_new_data_sent gave a pending probe's timer back to the RTO first).
        if sent_new > 0 && !probe {
            self.schedule_loss_probe(now);
        }
        // tcp_rate_check_app_limited: the application, not the network, is the limit now.
        if out_of_data && self.sb.in_flight() < self.w.cwnd && self.sb.lost_out == 0 {
            self.app_limited = (self.delivered + self.sb.in_flight() as u64).max(1);
        }
        // tcp_cwnd_validate: remember whether this window was limited by cwnd.
        let packets_out = self.sb.packets_out();
        if self.snd_una >= self.cwnd_usage_seq
            || cwnd_full
            || (!self.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = cwnd_full;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    fn set_state(&mut self, now: Time, s: CaState) {
        if self.state != s {
            self.state = s;
            self.cc.on_state_seq(&mut self.w, now, s, self.snd_nxt);
        }
    }

    /// Whether the state is one of Linux's window reductions (tcp_in_cwnd_reduction).
    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.state, CaState::Cwr | CaState::Recovery)
    }

    /// tcp_current_ssthresh: the threshold to restore on undo, remembered as prior_ssthresh.
    fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.w.ssthresh
        } else {
            self.w.ssthresh.max((self.w.cwnd >> 1) + (self.w.cwnd >> 2))
        }
    }

    /// tcp_init_undo: a reduction starts that may later prove spurious.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = if self.sb.retrans_out > 0 { self.sb.retrans_out as i32 } else { -1 };
    }

    /// tcp_init_cwnd_reduction: PRR starts from the current window with the algorithm's new
    /// ssthresh; an outstanding loss probe is forgotten.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.w.cwnd_cnt = 0;
        self.prior_cwnd = self.w.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.w.ssthresh = self.cc.ssthresh(&self.w);
    }

    /// tcp_end_cwnd_reduction (not for algorithms with cong_control): cwnd = ssthresh after
    /// CWR, or after Recovery unless the reduction was undone (undo_marker cleared).
    fn end_cwnd_reduction(&mut self) {
        if self.cc.owns_cwnd() {
            return;
        }
        if self.state == CaState::Cwr || (self.undo_marker.is_some() && self.w.ssthresh < INFINITE_SSTHRESH) {
            self.w.cwnd = self.w.ssthresh;
        }
    }

    /// tcp_enter_recovery.
    fn enter_recovery(&mut self, now: Time) {
        self.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            self.prior_ssthresh = self.current_ssthresh();
            self.init_cwnd_reduction();
        }
        self.stats.fast_recoveries += 1;
        self.set_state(now, CaState::Recovery);
    }

    /// tcp_try_keep_open: Disorder while anything is SACKed, lost or retransmitted, else Open.
    fn try_keep_open(&mut self, now: Time) {
        let st = if self.sb.sacked_out + self.sb.lost_out > 0 || self.sb.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.state != st {
            self.set_state(now, st);
            self.high_seq = self.snd_nxt;
        }
    }

    /// tcp_packet_delayed (Eifel, RFC 3522): the ACK echoes a timestamp older than the first
    /// retransmission, so it was the original that arrived. No retransmission at all counts
    /// as delayed too.
    fn packet_delayed(&self, ts_ecr_ns: u64) -> bool {
        match self.retrans_stamp {
            None => true,
            Some(t) => ts_ecr_ns > 0 && ts_ecr_ns < t.ns(),
        }
    }

    /// tcp_may_undo: a reduction is spurious if every retransmission was D-SACKed
    /// (undo_retrans == 0) or the timestamps show the originals arrived.
    fn may_undo(&self, ts_ecr_ns: u64) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(ts_ecr_ns))
    }

    /// tcp_undo_cwnd_reduction: the window before the reduction comes back (the algorithm's
    /// undo_cwnd; ssthresh back to prior_ssthresh if that is higher), optionally with the loss
    /// marks of an RTO cleared.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_lost();
        }
        if self.prior_ssthresh > 0 {
            self.w.cwnd = self.cc.undo_cwnd(&self.w).max(1);
            if self.prior_ssthresh > self.w.ssthresh {
                self.w.ssthresh = self.prior_ssthresh;
            }
        }
        self.undo_marker = None;
        self.stats.undos += 1;
    }

    /// tcp_try_undo_loss: leave Loss with the window restored, on F-RTO's verdict or when
    /// tcp_may_undo holds.
    fn try_undo_loss(&mut self, now: Time, frto_undo: bool, ts_ecr_ns: u64) -> bool {
        if !(frto_undo || self.may_undo(ts_ecr_ns)) {
            return false;
        }
        self.undo_cwnd_reduction(true);
        if frto_undo {
            self.stats.spurious_rtos += 1;
        }
        self.rto_retransmits = 0;
        self.reo_at = None;
        self.set_state(now, CaState::Open);
        true
    }

    /// tcp_try_undo_dsack: every retransmission of the episode was D-SACKed.
    fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// Unsent data the socket holds (tcp_send_head != NULL): below the application's limit
    /// and within the send buffer.
    fn has_send_head(&self) -> bool {
        self.snd_nxt < self.app_limit && self.snd_nxt - self.snd_una < self.sndbuf_bytes()
    }

    /// tcp_process_loss (Linux 4.10) with F-RTO (RFC 5682, SACK-enhanced, tcp_frto = 2) for an
    /// ACK in the Loss state. Returns true for F-RTO step 2b: send new data instead of
    /// retransmitting (REXMIT_NEW).
    fn process_loss(&mut self, now: Time, ts_ecr_ns: u64, f: AckFlags) -> bool {
        let recovered = self.snd_una >= self.high_seq;
        if f.advanced && self.try_undo_loss(now, false, ts_ecr_ns) {
            return false;
        }
        if self.frto {
            // Step 3.b: data never retransmitted was (S)ACKed: the RTO was spurious.
            if f.orig_sack_acked && self.try_undo_loss(now, true, ts_ecr_ns) {
                return false;
            }
            if self.snd_nxt > self.high_seq {
                // Step 3.a: a SACK or a duplicate ACK after new data was sent: the loss was real.
                if f.data_sacked || f.is_dupack {
                    self.frto = false;
                }
            } else if f.advanced && !recovered {
                self.high_seq = self.snd_nxt;
                // Step 2.b: send new data if there is some and the peer's window allows.
                if self.has_send_head() && self.snd_una + self.peer_rwnd > self.snd_nxt {
                    return true;
                }
                self.frto = false;
            }
        }
        if recovered {
            // tcp_try_undo_recovery, then Open (F-RTO step 2.a and the end of conventional
            // recovery alike).
            if self.may_undo(ts_ecr_ns) {
                self.undo_cwnd_reduction(false);
            }
            self.set_state(now, CaState::Open);
        }
        false
    }

    /// tcp_process_tlp_ack (Linux 4.10): the end of a probe episode. A D-SACK or a pure
    /// duplicate ACK at tlp_high_seq says the original and the probe both arrived (no loss);
    /// an ACK beyond tlp_high_seq without one says the probe repaired a loss, which costs a
    /// window reduction (tcp_init_cwnd_reduction, CWR, tcp_end_cwnd_reduction,
    /// tcp_try_keep_open).
    fn process_tlp_ack(&mut self, now: Time, ack: u64, f: AckFlags) {
        let Some(h) = self.tlp_high_seq else { return };
        if ack < h {
            return;
        }
        if f.dsack {
            self.tlp_high_seq = None;
        } else if ack > h {
            self.init_cwnd_reduction();
            self.set_state(now, CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open(now);
            self.stats.tlp_recoveries += 1;
        } else if !(f.advanced || f.win_update || f.data_sacked) {
            self.tlp_high_seq = None;
        }
    }

    /// tcp_schedule_loss_probe (Linux 4.10 tcp_output.c): in Open with data outstanding, when
    /// the sender is limited by cwnd or by the application (not with room in cwnd and data
    /// waiting), arm the probe timer at the PTO (see `tlp`), in the RTO's place.
    fn schedule_loss_probe(&mut self, now: Time) {
        self.tlp_at = None;
        let Some(rto_at) = self.rto_at else { return };
        if !self.tlp_enabled {
            return;
        }
        if self.state != CaState::Open || self.sb.is_empty() {
            return;
        }
        if self.w.cwnd > self.sb.in_flight() && self.has_send_head() {
            return;
        }
        let pto = tlp::probe_timeout(self.rtt.srtt(), self.sb.packets_out(), Some(rto_at.saturating_sub(now)));
        self.tlp_at = Some(now + pto);
    }

    /// tcp_send_loss_probe: one new segment if the peer's window allows one (cwnd may be
    /// exceeded), else the highest segment sent again, unless a probe retransmission is
    /// outstanding already (tlp_high_seq) or the previous transmission of that segment has not
    /// left the host yet (skb_still_in_host_queue: approximated by this socket having packets
    /// in its first hop's queue, which is FIFO, so the newest transmission is among them).
    /// Afterwards the RTO runs from now if a probe went out, else it keeps its deadline.
    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut sent = false;
        let next_len = (self.app_limit.saturating_sub(self.snd_nxt)).min(self.mss as u64);
        if self.has_send_head() && self.snd_nxt + next_len <= self.snd_una + self.peer_rwnd {
            let before = self.sb.packets_out();
            self.xmit = Xmit::Probe;
            self.try_send(now, out);
            self.xmit = Xmit::Normal;
            sent = self.sb.packets_out() > before;
        } else if self.tlp_high_seq.is_none() && self.tsq_queued == 0 {
            let tx = self.tx_stamp(now);
            if let Some(seg) = self.sb.probe_tail(now, tx) {
                out.push(self.data_packet(&seg, now));
                self.stats.retransmits += 1;
                self.stats.segments_sent += 1;
                self.stats.bytes_sent += seg.len as u64;
                self.after_send(now, seg.len);
                self.tlp_high_seq = Some(self.snd_nxt);
                sent = true;
            }
        }
        if sent {
            self.stats.tlp_probes += 1;
            self.arm_rto(now);
        } else if self.rto_at.is_some_and(|t| t <= now) {
            // tcp_rearm_rto with the probe timer pending and the RTO's time passed: a full RTO.
            self.arm_rto(now);
        }
    }

    /// RFC 6937 PRR as Linux's tcp_cwnd_reduction computes it.
    fn prr(&mut self, newly_delivered: u32, una_advanced: bool, newly_lost: u32) {
        if newly_delivered == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_delivered;
        let in_flight = self.sb.in_flight() as i64;
        let ssthresh = self.w.ssthresh as i64;
        let delta = ssthresh - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = ssthresh as u64 * self.prr_delivered as u64 + self.prior_cwnd as u64 - 1;
            (dividend / self.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_delivered as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.w.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// RACK's reordering window (tcp_rack_reo_wnd, RFC 8985 6.2 step 4): a quarter of the
    /// min RTT, at most srtt. (Before any RTT sample: 1 ms, Linux 4.18's floor.)
    fn reo_wnd(&self) -> Time {
        let w = self.min_rtt.map_or(Time::from_ms(1), |m| Time(m.ns() / 4));
        self.rtt.srtt().map_or(w, |s| w.min(s))
    }

    /// One RACK pass (tcp_rack_mark_lost): marks what it finds lost and (re)arms the
    /// reordering timer for segments still inside the window. Returns how many were marked.
    fn rack_detect(&mut self, now: Time) -> u32 {
        let (n, wait) = self.sb.rack_detect_loss(now, self.reo_wnd());
        self.reo_at = wait.map(|w| now + w + TCP_TIMEOUT_MIN);
        n
    }

    /// tcp_fastretrans_alert in the Loss state: "Change state if cwnd is undone or retransmit
    /// is lost". When RACK finds a retransmission lost again (FLAG_LOST_RETRANS: retrans_out
    /// fell below `prior_retrans`), the sender leaves Loss for Recovery with a second window
    /// reduction (tcp_enter_recovery -> tcp_init_cwnd_reduction: ssthresh from the CC at the
    /// current cwnd, PRR from here). Linux >= 4.4 (net/ipv4/tcp_input.c). Returns whether it did.
    fn lost_retransmit_in_loss(&mut self, now: Time, prior_retrans: u32) -> bool {
        if self.state == CaState::Loss && self.sb.retrans_out < prior_retrans {
            self.enter_recovery(now);
            return true;
        }
        false
    }

    /// Processes an ACK and sends what it allows.
    pub fn on_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if p.ack < self.snd_una || p.ack > self.snd_nxt {
            return; // old or not for anything we sent
        }
        let win_update = p.rwnd as u64 != self.peer_rwnd;
        self.peer_rwnd = p.rwnd as u64;
        self.ts_recent = p.ts_val_ns;
        // tcp_ack: a pending loss probe gives the timer back to the RTO (tcp_rearm_rto); the
        // probe is scheduled again at the end.
        self.tlp_at = None;
        let prior_in_flight = self.sb.in_flight();
        let prior_una = self.snd_una;
        self.sb.begin_ack(now, self.min_rtt);

        // tcp_check_dsack: a first block below the ACK or inside the second one is a D-SACK.
        // Each one takes a retransmission off undo_retrans (Linux counts per block for data
        // already ACKed and per segment above; our segments are single, so one per block).
        let blocks = p.sack_blocks();
        let dsack = match blocks {
            [(s0, e0), rest @ ..] => *s0 < p.ack || rest.first().is_some_and(|&(s1, e1)| *e0 <= e1 && *s0 >= s1),
            [] => false,
        };
        if dsack && self.undo_retrans > 0 && self.undo_marker.is_some_and(|m| blocks[0].1 > m) {
            self.undo_retrans -= 1;
        }

        let (mut newly_sacked, mut sacked_span) = (0u32, SentSpan::default());
        for &(s, e) in p.sack_blocks() {
            if e <= p.ack {
                continue; // D-SACK or stale block
            }
            let (n, span) = self.sb.sack(s, e);
            newly_sacked += n;
            sacked_span.merge(span);
        }
        let (acked, acked_span) = self.sb.ack(p.ack);
        self.snd_una = p.ack;
        let advanced = self.snd_una > prior_una;
        let orig_end = match (acked_span.orig_end_min, sacked_span.orig_end_min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let flags = AckFlags {
            advanced,
            win_update,
            data_sacked: newly_sacked > 0,
            dsack,
            orig_sack_acked: orig_end.is_some_and(|e| e <= self.high_seq),
            is_dupack: !advanced && !win_update,
        };

        // RTT: srtt from the earliest segment this ACK covers (Linux seq_rtt), CC from the
        // latest (ca_rtt). Karn: retransmitted segments give none (filtered by the board), and
        // a cumulative ACK that covers any retransmitted data gives none from its other
        // segments either (FLAG_RETRANS_DATA_ACKED in tcp_clean_rtx_queue); newly SACKed
        // segments still may. Failing both, an ACK of new data gives the timestamp echo's RTT
        // (tcp_ack_update_rtt, RFC 7323 RTTM).
        let acked_first = if acked_span.retrans_acked { None } else { acked_span.first };
        let acked_last = if acked_span.retrans_acked { None } else { acked_span.last };
        //
        // The congestion control and the rate sample get ca_rtt as tcp_clean_rtx_queue computed
        // it, without the timestamp fallback: tcp_ack_update_rtt takes ca_rtt_us by value, so
        // its `seq_rtt_us = ca_rtt_us = <TS echo>` reaches tcp_update_rtt_min and the RTO
        // estimator but not pkts_acked (ack_sample.rtt_us) or rs->rtt_us (Linux 4.x
        // net/ipv4/tcp_input.c). An ACK that covers only retransmitted data gives the
        // algorithm no RTT sample.
        let ts_rtt = (advanced && p.ts_ecr_ns > 0 && now.ns() > p.ts_ecr_ns).then(|| Time(now.ns() - p.ts_ecr_ns));
        let ca_rtt = acked_last.or(sacked_span.last).map(|t| now - t);
        let seq_rtt = acked_first.or(sacked_span.first).map(|t| now - t);
        let (seq_rtt_est, ca_rtt_est) = match seq_rtt {
            Some(r) => (Some(r), ca_rtt),
            None => (ts_rtt, ts_rtt),
        };
        if let Some(r) = seq_rtt_est {
            // tcp_update_rtt_min (from ca_rtt) before the estimator, as tcp_ack_update_rtt.
            if let Some(c) = ca_rtt_est {
                self.min_rtt = Some(self.min_rtt.map_or(c, |m| m.min(c)));
            }
            self.rtt.sample(r);
            self.stats.rtt_ms.record(r.ms_f64());
        }
        // tcp_clean_rtx_queue calls pkts_acked (CUBIC's HyStart, Vegas's RTT count) before
        // tcp_fastretrans_alert changes the state and before tcp_cong_control.
        let newly_delivered = acked + newly_sacked;
        if ca_rtt.is_some() {
            let info = self.ack_info(now, newly_delivered, ca_rtt, prior_in_flight);
            self.cc.on_rtt(&mut self.w, &info);
        }

        if advanced {
            self.dupacks = 0;
            self.rto_retransmits = 0;
            self.arm_rto(now);
        } else if self.sb.packets_out() > 0 && (newly_sacked > 0 || p.nsack == 0) {
            self.dupacks += 1;
        }
        let mut newly_lost = self.sb.mark_lost_by_sack();

        // Leave recovery once everything outstanding at its start is acknowledged, undoing the
        // reduction if it proved spurious (tcp_try_undo_recovery, then tcp_end_cwnd_reduction);
        // Loss goes through tcp_process_loss (F-RTO, undo, exit).
        let mut rexmit_new = false;
        match self.state {
            CaState::Recovery if self.snd_una >= self.high_seq => {
                if self.may_undo(p.ts_ecr_ns) {
                    self.undo_cwnd_reduction(false);
                }
                self.end_cwnd_reduction();
                self.w.cwnd_cnt = 0;
                self.set_state(now, CaState::Open);
            }
            CaState::Loss => rexmit_new = self.process_loss(now, p.ts_ecr_ns, flags),
            _ => {}
        }
        // FACK in Recovery (tcp_fastretrans_alert's do_lost -> tcp_update_scoreboard): on a
        // duplicate ACK, or on a SACK or partial ACK with fackets_out > reordering.
        if self.state == CaState::Recovery
            && (flags.is_dupack || ((flags.data_sacked || flags.advanced) && self.sb.fackets_out() > REORDERING))
        {
            newly_lost += self.sb.mark_lost_fack(REORDERING, self.high_seq);
        }
        // RACK, in Recovery and Loss only, after the exit check and before the entry check, as
        // in Linux 4.4-4.17's tcp_fastretrans_alert (tcp_rack_mark_lost).
        if matches!(self.state, CaState::Recovery | CaState::Loss) {
            if self.sb.rack_advanced() {
                let prior_retrans = self.sb.retrans_out;
                newly_lost += self.rack_detect(now);
                self.lost_retransmit_in_loss(now, prior_retrans);
            }
        } else {
            self.reo_at = None;
        }
        // tcp_try_undo_dsack: in Recovery it ends the episode (tcp_try_keep_open); in Open and
        // Disorder it undoes a finished one whose retransmissions all proved spurious. Linux
        // runs it only for ACKs that reach tcp_fastretrans_alert (tcp_ack_is_dubious).
        if flags.dsack {
            let dubious = flags.is_dupack || flags.data_sacked || self.state != CaState::Open;
            let state = self.state;
            if state == CaState::Recovery && self.try_undo_dsack() {
                self.try_keep_open(now);
            } else if matches!(state, CaState::Open | CaState::Disorder) && dubious {
                self.try_undo_dsack();
            }
        }
        if matches!(self.state, CaState::Open | CaState::Disorder) {
            // tcp_time_to_recover (Linux 4.10, tcp_fack = 1 by default until 4.15): a loss is
            // proven, or tcp_dupack_heuristics = fackets_out exceeds the reordering degree (the
            // highest SACK is more than 3 packets above snd_una); dupacks for SACK-less ACKs.
            if self.sb.lost_out > 0 || self.dupacks >= 3 || self.sb.fackets_out() > REORDERING {
                if self.sb.lost_out == 0 && self.sb.mark_head_lost() {
                    newly_lost += 1;
                }
                self.enter_recovery(now);
                // tcp_update_scoreboard(fast_rexmit): FACK marks below the highest SACK.
                newly_lost += self.sb.mark_lost_fack(REORDERING, self.high_seq);
            } else if self.sb.sacked_out > 0 || self.dupacks > 0 {
                self.set_state(now, CaState::Disorder);
            } else {
                self.set_state(now, CaState::Open);
            }
        }

        // tcp_fastretrans_alert's state D: in Open the episode's first-retransmission time is
        // forgotten once no retransmission is outstanding.
        if matches!(self.state, CaState::Open | CaState::Disorder) && !self.sb.any_retrans_done() {
            self.retrans_stamp = None;
        }
        self.process_tlp_ack(now, p.ack, flags);

        self.delivered += newly_delivered as u64;
        self.lost += newly_lost as u64;
        let info = self.ack_info(now, newly_delivered, ca_rtt, prior_in_flight);
        if self.cc.owns_cwnd() {
            let rs = self.rate_gen(now, newly_delivered, newly_lost, prior_in_flight, ca_rtt);
            if self.cc.cong_control(&mut self.w, &rs).mark_app_limited {
                self.app_limited = (self.delivered + self.sb.in_flight() as u64).max(1);
            }
        } else if self.state == CaState::Recovery {
            self.prr(newly_delivered, advanced, newly_lost);
        } else if advanced && self.cwnd_limited() {
            // tcp_may_raise_cwnd: grow only on in-order delivery (RFC 5681), by all that was
            // delivered (acked + SACKed).
            self.cc.cong_avoid(&mut self.w, &info);
        } else if advanced {
            self.cc.cong_avoid_not_cwnd_limited(&mut self.w, &info);
        }
        // tcp_xmit_recovery: F-RTO step 2.b sends new data only; if none could go, F-RTO ends
        // and the lost segments are retransmitted as usual.
        if rexmit_new {
            self.xmit = Xmit::NewOnly;
            self.try_send(now, out);
            self.xmit = Xmit::Normal;
            if self.snd_nxt <= self.high_seq {
                self.frto = false;
                self.try_send(now, out);
            }
        } else {
            self.try_send(now, out);
        }
        if self.tlp_at.is_none() {
            self.schedule_loss_probe(now);
        }
    }

    /// Puts back a window from before a loss episode and sends at once, without waiting for
    /// the backed-off RTO: what MuSher and AMuSe do when a blocked 60 GHz link returns
    /// (seed 004). Outstanding data stays marked lost and goes out first.
    pub fn restore_window(&mut self, now: Time, cwnd: u32, ssthresh: u32, out: &mut Vec<Packet>) {
        self.w.cwnd = cwnd.max(1);
        self.w.ssthresh = ssthresh;
        self.w.cwnd_cnt = 0;
        self.rtt.reset_backoff();
        self.rto_retransmits = 0;
        if self.state == CaState::Loss {
            self.high_seq = self.snd_una;
            self.set_state(now, CaState::Open);
        }
        // The episode is over by decree: nothing left to undo, F-RTO has no verdict to give.
        self.undo_marker = None;
        self.frto = false;
        self.arm_rto(now);
        self.try_send(now, out);
        if self.tlp_at.is_none() {
            self.schedule_loss_probe(now);
        }
    }

    /// tcp_rate_gen: this ACK's delivery-rate sample, from the packet the scoreboard picked.
    fn rate_gen(
        &mut self,
        now: Time,
        delivered: u32,
        lost: u32,
        prior_in_flight: u32,
        rtt: Option<Time>,
    ) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_mstamp = now;
        }
        let mut rs = RateSample {
            now,
            delivered: None,
            interval: None,
            prior_delivered: 0,
            prior_in_flight,
            acked_sacked: delivered,
            losses: lost,
            rtt,
            is_app_limited: false,
            tp_delivered: self.delivered,
            tp_lost: self.lost,
            delivered_mstamp: self.delivered_mstamp,
            in_flight: self.sb.in_flight(),
            state: self.state,
            mss: self.mss,
            srtt: self.rtt.srtt(),
            edt_ahead: self.wstamp.saturating_sub(now),
        };
        if let Some(p) = self.sb.rate_pick {
            // tcp_rate_skb_delivered: the send interval ends at the picked packet.
            self.first_tx_mstamp = p.sent;
            rs.prior_delivered = p.tx.delivered;
            rs.is_app_limited = p.tx.app_limited;
            rs.delivered = Some(self.delivered - p.tx.delivered);
            let snd = p.sent.saturating_sub(p.tx.first_tx_mstamp);
            let ack = now.saturating_sub(p.tx.delivered_mstamp);
            let interval = snd.max(ack);
            // An interval shorter than the minimum RTT is bogus (ACK compression, a
            // retransmission's spurious sample): no bandwidth sample.
            if self.min_rtt.is_some_and(|m| interval >= m) {
                rs.interval = Some(interval);
            }
        }
        rs
    }

    /// A timer fires: a packet's pacing release time, or the RTO (a stale timer event does
    /// nothing).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.pace_wait.is_some_and(|t| t <= now) {
            self.try_send(now, out);
        }
        // tcp_rack_reo_timeout: the reordering window has passed; what is still undelivered
        // is lost and goes out now (we are in Recovery or Loss already, so no state change).
        if self.reo_at.is_some_and(|t| t <= now) {
            self.reo_at = None;
            if matches!(self.state, CaState::Recovery | CaState::Loss) {
                let prior_retrans = self.sb.retrans_out;
                let n = self.rack_detect(now);
                if n > 0 {
                    self.lost += n as u64;
                    // tcp_rack_reo_timeout: entering Recovery here reduces at once, as if one
                    // packet had been delivered (tcp_cwnd_reduction(sk, 1, ...)).
                    if self.lost_retransmit_in_loss(now, prior_retrans) && !self.cc.owns_cwnd() {
                        self.prr(1, false, n);
                    }
                    self.try_send(now, out);
                }
            }
        }
        // The loss probe timer holds the RTO's place while armed (ICSK_TIME_LOSS_PROBE).
        if self.tlp_at.is_some_and(|t| t <= now) {
            self.tlp_at = None;
            self.send_loss_probe(now, out);
            return;
        }
        match self.rto_at {
            Some(t) if t <= now => {}
            _ => return,
        }
        if self.sb.is_empty() {
            self.rto_at = None;
            return;
        }
        // tcp_enter_loss: a new ssthresh unless we are already reducing for this window: in
        // Open/Disorder, past the recovery point, or in Loss with !icsk_retransmits (snd_una
        // advanced since the last RTO).
        let new_recovery = matches!(self.state, CaState::Open | CaState::Disorder | CaState::Cwr);
        let recompute =
            new_recovery || self.high_seq <= self.snd_una || (self.state == CaState::Loss && self.rto_retransmits == 0);
        if recompute {
            self.prior_ssthresh = self.current_ssthresh();
            self.w.ssthresh = self.cc.ssthresh(&self.w);
            self.init_undo();
        }
        // tcp_retransmit_timer forgets an outstanding probe; tcp_enter_loss starts F-RTO
        // (tcp_frto = 2) unless a recovery was already under way, except for repeated timeouts
        // on the same snd_una (RFC 5682 3.2).
        self.tlp_high_seq = None;
        self.tlp_at = None;
        self.frto = self.frto_enabled && (new_recovery || self.rto_retransmits > 0);
        self.w.cwnd = 1;
        self.w.cwnd_cnt = 0;
        self.lost += self.sb.mark_all_lost() as u64;
        self.reo_at = None;
        self.high_seq = self.snd_nxt;
        self.dupacks = 0;
        // tcp_enter_loss -> tcp_set_ca_state(TCP_CA_Loss) calls the algorithm's set_state hook
        // on every RTO, repeated ones included (CUBIC's bictcp_state resets again and restarts
        // its HyStart round at this moment; BBR's bbr_set_state counts another loss round).
        self.state = CaState::Loss;
        self.cc.on_state_seq(&mut self.w, now, CaState::Loss, self.snd_nxt);
        self.stats.rtos += 1;
        self.rto_retransmits += 1;
        self.rtt.back_off();
        self.rto_at = Some(now + self.rtt.rto());
        self.try_send(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::CcKind;
    use crate::tcp::cc;

    /// A sender with unlimited buffers, initial window 10 and a 200 ms minimum RTO.
    fn sender_with(mss: u32, cc: Box<dyn cc::CongestionControl>, pacing: bool) -> TcpSender {
        TcpSender::new(SenderCfg {
            flow: 0,
            mss,
            initial_cwnd: 10,
            min_rto: Time::from_ms(200),
            sndbuf: BufSize::Bytes(1 << 30),
            wmem_max: 1 << 30,
            cc,
            pacing,
        })
    }

    fn sender(mss: u32) -> TcpSender {
        sender_with(mss, cc::build(CcKind::Reno, &TcpOpts::default()), false)
    }

    fn ack(a: u64, sack: &[(u64, u64)]) -> Packet {
        let mut p = Packet::empty(0, Kind::Ack, Way::Reverse);
        p.ack = a;
        p.rwnd = 1 << 30;
        for (i, b) in sack.iter().enumerate() {
            p.sack[i] = *b;
        }
        p.nsack = sack.len() as u8;
        p
    }

    #[test]
    fn initial_window_is_ten_segments() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        assert_eq!(s.timer_deadline(), Some(Time::from_secs(1)), "initial RTO 1 s");
    }

    /// Three duplicate ACKs carrying SACK for segments above a hole trigger a fast
    /// retransmit of the hole, and the sender enters Recovery with ssthresh halved.
    #[test]
    fn sack_dupacks_trigger_fast_retransmit() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        let t = Time::from_ms(10);
        // Segment 0 lost; 1, 2, 3 arrive: three dup ACKs for 0 with growing SACK blocks.
        s.on_ack(t, &ack(0, &[(1000, 2000)]), &mut out);
        s.on_ack(t, &ack(0, &[(1000, 3000)]), &mut out);
        assert_eq!(s.state, CaState::Disorder);
        assert!(out.iter().all(|p| p.seq >= 10_000), "no retransmission before DupThresh");
        out.clear();
        s.on_ack(t, &ack(0, &[(1000, 4000)]), &mut out);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.w.ssthresh, 5);
        assert_eq!(out.first().map(|p| p.seq), Some(0), "the hole goes out first");
        assert_eq!(s.stats.retransmits, 1);
        assert_eq!(s.stats.fast_recoveries, 1);
        // The retransmission is ACKed with everything: recovery ends at cwnd = ssthresh.
        out.clear();
        let delivered = s.packets_out() - 3; // the three SACKed ones were counted already
        s.on_ack(Time::from_ms(20), &ack(s.snd_nxt, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.w.ssthresh, 5);
        // cwnd = ssthresh at exit (tcp_end_cwnd_reduction); the same ACK then feeds congestion
        // avoidance, as in Linux's tcp_ack: +1 per cwnd packets delivered.
        assert_eq!(s.w.cwnd, 5 + delivered / 5);
    }

    #[test]
    fn three_plain_dupacks_trigger_fast_retransmit_without_sack() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(1), &ack(1000, &[]), &mut out);
        out.clear();
        for _ in 0..3 {
            s.on_ack(Time::from_ms(2), &ack(1000, &[]), &mut out);
        }
        assert_eq!(s.state, CaState::Recovery);
        assert!(out.iter().any(|p| p.seq == 1000), "segment 1 retransmitted");
    }

    /// RTO: cwnd 1, everything outstanding lost, the head retransmitted, the timeout doubled;
    /// a new ACK brings the backoff back to zero.
    /// Records what the sender hands its congestion control.
    #[derive(Default)]
    struct Log {
        rtts: Vec<Option<Time>>,
        states: Vec<CaState>,
        /// Sender state when each RTT sample arrived.
        state_at_rtt: Vec<CaState>,
        last_state: Option<CaState>,
    }
    struct Probe(std::sync::Arc<std::sync::Mutex<Log>>);
    impl CongestionControl for Probe {
        fn name(&self) -> &'static str {
            "probe"
        }
        fn cong_avoid(&mut self, w: &mut Window, _ack: &AckInfo) {
            w.cwnd += 1;
        }
        fn ssthresh(&mut self, w: &Window) -> u32 {
            (w.cwnd / 2).max(2)
        }
        fn on_rtt(&mut self, _w: &mut Window, ack: &AckInfo) {
            let mut l = self.0.lock().unwrap();
            l.rtts.push(ack.rtt);
            let st = l.last_state.unwrap_or(CaState::Open);
            l.state_at_rtt.push(st);
        }
        fn on_state(&mut self, _w: &mut Window, _now: Time, state: CaState) {
            let mut l = self.0.lock().unwrap();
            l.states.push(state);
            l.last_state = Some(state);
        }
    }

    fn probed() -> (TcpSender, std::sync::Arc<std::sync::Mutex<Log>>) {
        let log = std::sync::Arc::new(std::sync::Mutex::new(Log::default()));
        let mut s = sender_with(1000, Box::new(Probe(log.clone())), false);
        s.set_loss_probes(false);
        (s, log)
    }

    /// A Reno sender without loss probes or F-RTO (tcp_early_retrans = 0, tcp_frto = 0): the
    /// RTO tests below see the timeout itself.
    fn plain_sender(mss: u32) -> TcpSender {
        let mut s = sender(mss);
        s.set_loss_probes(false);
        s.set_frto(false);
        s
    }

    /// Every RTO calls the algorithm's set_state hook with Loss, repeated ones included
    /// (tcp_enter_loss -> tcp_set_ca_state), and an ACK of retransmitted data gives the
    /// algorithm no RTT sample even when its timestamp echo gives the estimator one
    /// (tcp_ack_update_rtt takes ca_rtt_us by value; pkts_acked sees -1).
    #[test]
    fn every_rto_reaches_the_cc_and_timestamp_rtts_do_not() {
        let (mut s, log) = probed();
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        assert_eq!(log.lock().unwrap().rtts, vec![Some(Time::from_ms(10))]);
        let d1 = s.timer_deadline().unwrap();
        s.on_timer(d1, &mut out);
        let d2 = s.timer_deadline().unwrap();
        s.on_timer(d2, &mut out);
        assert_eq!(s.stats.rtos, 2);
        assert_eq!(log.lock().unwrap().states, vec![CaState::Loss, CaState::Loss], "one hook call per RTO");
        // The retransmitted head is ACKed with a timestamp echo: the estimator takes it ...
        let mut a = ack(2000, &[]);
        a.ts_ecr_ns = (d2 + Time::from_ms(1)).ns();
        s.on_ack(d2 + Time::from_ms(11), &a, &mut out);
        assert_eq!(s.rtt.backoff(), 0, "RTTM sample reset the backoff");
        // ... the congestion control does not.
        assert_eq!(log.lock().unwrap().rtts.len(), 1);
    }

    /// pkts_acked (on_rtt) comes before the state machine of the same ACK: the ACK that takes
    /// the sender from Disorder back to Open delivers its RTT sample while it is in Disorder.
    #[test]
    fn rtt_sample_precedes_the_state_change_of_its_ack() {
        let (mut s, log) = probed();
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(0, &[(1000, 2000)]), &mut out);
        assert_eq!(s.state, CaState::Disorder);
        let n = log.lock().unwrap().rtts.len();
        s.on_ack(Time::from_ms(11), &ack(5000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        let l = log.lock().unwrap();
        assert_eq!(l.rtts.len(), n + 1);
        assert_eq!(l.state_at_rtt[n], CaState::Disorder);
        assert_eq!(*l.states.last().unwrap(), CaState::Open);
    }

    #[test]
    fn rto_collapses_window_and_backs_off() {
        let mut s = plain_sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        let deadline = s.timer_deadline().unwrap();
        out.clear();
        // A stale timer (before the deadline) does nothing.
        s.on_timer(deadline - Time::from_ms(1), &mut out);
        assert!(out.is_empty());
        s.on_timer(deadline, &mut out);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.w.cwnd, 1);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 1000);
        assert_eq!(s.stats.rtos, 1);
        let first_rto = s.rtt.base_rto();
        assert_eq!(s.timer_deadline(), Some(deadline + Time(first_rto.ns() * 2)));
        // Second expiry: doubled again.
        let d2 = s.timer_deadline().unwrap();
        out.clear();
        s.on_timer(d2, &mut out);
        assert_eq!(s.rtt.rto(), Time(first_rto.ns() * 4).min(super::super::rtt::MAX_RTO));
        // The retransmission is ACKed, but Karn's rule gives no RTT sample: backoff stays...
        s.on_ack(d2 + Time::from_ms(10), &ack(2000, &[]), &mut out);
        assert_eq!(s.rtt.backoff(), 2);
        // An ACK that also covers segments retransmitted in Loss gives no sample from the
        // never-retransmitted ones among them (FLAG_RETRANS_DATA_ACKED)...
        let n = s.snd_nxt;
        assert!(n > 3000, "Loss retransmitted more than the head");
        s.on_ack(d2 + Time::from_ms(20), &ack(3000, &[]), &mut out);
        assert_eq!(s.rtt.backoff(), 2);
        // ...but its timestamp echo does (RFC 7323 RTTM): the backoff is back to zero.
        let mut a = ack(n, &[]);
        a.ts_ecr_ns = (d2 + Time::from_ms(15)).ns();
        s.on_ack(d2 + Time::from_ms(25), &a, &mut out);
        assert_eq!(s.rtt.backoff(), 0);
        assert_eq!(s.rtt.srtt(), Some(Time::from_ms(10)), "the echo gives 25 - 15 = 10 ms, as the first sample did");
        assert!(s.scoreboard_consistent());
    }

    /// MPTCP record boundaries: no segment spans one, and a sub-MSS segment that ends a
    /// record goes out at once (Nagle holds only the tail).
    #[test]
    fn segments_never_cross_a_record_boundary() {
        let mut s = sender(1000);
        s.set_app_limit(2500);
        s.mark_boundary(2500);
        s.set_app_limit(5000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        let segs: Vec<(u64, u32)> = out.iter().map(|p| (p.seq, p.len)).collect();
        // 2000..2500 ends a record and goes; 4500..5000 is the tail and waits (Nagle).
        assert_eq!(segs, vec![(0, 1000), (1000, 1000), (2000, 500), (2500, 1000), (3500, 1000)]);
    }

    /// With pacing on, packets leave at the pacing rate: one per len / rate, each release time
    /// being the sender's timer deadline (the first 10 segments are not paced, as in Linux).
    #[test]
    fn pacing_spaces_packets_at_the_pacing_rate() {
        let mut s = sender_with(1000, cc::build(CcKind::Cubic, &TcpOpts::default()), true);
        s.set_loss_probes(false); // the loop below follows the pacing timer only
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10, "the initial window leaves at once");
        // Two segments ACKed after 10 ms: srtt 10 ms, cwnd 12, room for 4 more.
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(2000, &[]), &mut out);
        assert_eq!(out.len(), 1, "one packet, then the pacing schedule holds the next");
        let rate = s.pacing_rate_bps().expect("pacing rate");
        // tcp_update_pacing_rate in slow start: 2 x cwnd x mss / srtt.
        assert_eq!(rate, 2 * 12 * 1000 * 8 * 100);
        let gap = Time(1000 * 8 * 1_000_000_000 / rate);
        let mut times = vec![Time::from_ms(10)];
        while let Some(d) = s.timer_deadline().filter(|&d| d < Time::from_ms(100)) {
            out.clear();
            s.on_timer(d, &mut out);
            for _ in &out {
                times.push(d);
            }
        }
        assert_eq!(times.len(), 4, "cwnd 12 with 8 in flight: 4 sent, paced");
        // The first gap is halved: the sender was idle (credit for lateness, up to len / 2).
        assert_eq!(times[1] - times[0], Time(gap.ns() - gap.ns() / 2));
        for w in times[1..].windows(2) {
            assert_eq!(w[1] - w[0], gap, "{times:?}");
        }
    }

    /// Segments 0-9 sent at 0; SACKs at 10 ms: 10 and 11 sent, then segment 0 retransmitted
    /// on entering Recovery; at `t2` the rest of the first window is SACKed, which lets PRR send
    /// segments 12 and 13 at `t2`. Returns the sender.
    fn recovering(t2: Time) -> TcpSender {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        let t = Time::from_ms(10);
        for e in [2000, 3000, 4000] {
            s.on_ack(t, &ack(0, &[(1000, e)]), &mut out);
        }
        assert_eq!(s.state, CaState::Recovery);
        let sent: Vec<u64> = out.iter().map(|p| p.seq).collect();
        assert_eq!(sent, vec![10_000, 11_000, 0], "segment 0 retransmitted at 10 ms");
        out.clear();
        s.on_ack(t2, &ack(0, &[(1000, 10_000)]), &mut out);
        let sent: Vec<u64> = out.iter().map(|p| p.seq).collect();
        assert_eq!(sent, vec![12_000, 13_000]);
        s
    }

    /// A retransmission that is dropped again is found by RACK and retransmitted again as
    /// soon as a segment sent more than reo_wnd after it (min RTT 10 ms / 4 = 2.5 ms) is
    /// SACKed: no RTO.
    #[test]
    fn lost_retransmission_is_retransmitted_again_without_rto() {
        let mut s = recovering(Time::from_ms(13));
        let mut out = Vec::new();
        // Segments 10-12 SACKed at 23 ms, 12 sent at 13 ms; the retransmission of 0 (10 ms)
        // is not.
        s.on_ack(Time::from_ms(23), &ack(0, &[(1000, 13_000)]), &mut out);
        assert_eq!(out.first().map(|p| p.seq), Some(0), "segment 0 goes out a third time");
        assert_eq!(s.stats.retransmits, 2);
        assert_eq!(s.stats.rtos, 0);
        assert_eq!(s.state, CaState::Recovery);
        assert!(s.scoreboard_consistent());
        // The second retransmission gets through: recovery ends without a timeout.
        let n = s.snd_nxt;
        s.on_ack(Time::from_ms(33), &ack(n, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.stats.rtos, 0);
        assert!(s.scoreboard_consistent());
    }

    /// Reordering inside reo_wnd: segments sent 1 ms after the retransmission arrive first.
    /// Nothing is marked; the reordering timer is armed and the retransmission, arriving 1 ms
    /// later, disarms it with no spurious retransmission.
    #[test]
    fn no_spurious_retransmission_within_reo_wnd() {
        let mut s = recovering(Time::from_ms(11));
        let mut out = Vec::new();
        s.on_ack(Time::from_ms(21), &ack(0, &[(1000, 13_000)]), &mut out);
        assert!(out.iter().all(|p| p.seq != 0), "not yet: inside the reordering window");
        assert_eq!(s.stats.retransmits, 1);
        // The reordering timer: the retransmission (10 ms) expires at 10 + RACK.rtt (10) +
        // reo_wnd (2.5) ms, plus TCP_TIMEOUT_MIN; well before the RTO.
        let reo = Time::from_us(22_500) + Time(1) + TCP_TIMEOUT_MIN;
        assert_eq!(s.timer_deadline(), Some(reo));
        // The retransmission arrives: everything below 13 000 is ACKed.
        s.on_ack(Time::from_ms(22), &ack(13_000, &[]), &mut out);
        assert!(out.iter().all(|p| p.seq != 0));
        s.on_timer(reo, &mut out);
        assert!(out.iter().all(|p| p.seq != 0), "a stale reordering timer does nothing");
        assert_eq!(s.stats.retransmits, 1);
        assert_eq!(s.stats.rtos, 0);
        assert!(s.scoreboard_consistent());
    }

    /// The same, but the retransmission never arrives: the reordering timer marks it lost and
    /// it is retransmitted again, long before the RTO.
    #[test]
    fn reordering_timer_retransmits_a_lost_retransmission() {
        let mut s = recovering(Time::from_ms(11));
        let mut out = Vec::new();
        s.on_ack(Time::from_ms(21), &ack(0, &[(1000, 13_000)]), &mut out);
        let reo = s.timer_deadline().unwrap();
        assert!(reo < Time::from_ms(30), "{reo:?}");
        out.clear();
        s.on_timer(reo, &mut out);
        assert_eq!(out.first().map(|p| p.seq), Some(0));
        assert_eq!(s.stats.retransmits, 2);
        assert_eq!(s.stats.rtos, 0);
        assert_eq!(s.state, CaState::Recovery);
        assert!(s.scoreboard_consistent());
    }

    /// After an RTO, a retransmission that is lost again moves the sender from Loss to Recovery
    /// with a second reduction (Linux tcp_fastretrans_alert: "Change state if cwnd is undone or
    /// retransmit is lost"): ssthresh from the CC at the current window, high_seq at snd_nxt.
    #[test]
    fn lost_retransmission_in_loss_enters_recovery() {
        let mut s = plain_sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out); // srtt 10 ms
        let rto = s.timer_deadline().unwrap();
        out.clear();
        s.on_timer(rto, &mut out);
        assert_eq!((s.state, s.w.cwnd, s.w.ssthresh), (CaState::Loss, 1, 5));
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1000]);
        let loss_high = s.snd_nxt;
        // The retransmission of 1000 arrives: cwnd 2, 2000 and 3000 go out again.
        let t1 = rto + Time::from_ms(10);
        out.clear();
        s.on_ack(t1, &ack(2000, &[]), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![2000, 3000]);
        // 2000 arrives, 3000 does not: cwnd 3, 4000 and 5000 go out 10 ms after 3000.
        let t2 = t1 + Time::from_ms(10);
        out.clear();
        s.on_ack(t2, &ack(3000, &[]), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![4000, 5000]);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.stats.fast_recoveries, 0);
        // 4000 and 5000 are SACKed: RACK finds the retransmission of 3000 lost (sent 10 ms
        // before them, RACK.rtt 10 ms + reo_wnd 2.5 ms ago): Recovery, ssthresh = 3 / 2 -> 2.
        let t3 = t2 + Time::from_ms(10);
        out.clear();
        s.on_ack(t3, &ack(3000, &[(4000, 6000)]), &mut out);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.stats.fast_recoveries, 1);
        assert_eq!(s.w.ssthresh, 2);
        assert!(s.snd_nxt >= loss_high);
        assert_eq!(out.first().map(|p| p.seq), Some(3000), "3000 goes out a third time");
        assert_eq!(s.stats.rtos, 1);
        assert!(s.scoreboard_consistent());
    }

    /// tcp_enter_loss on repeated RTOs: the same outage keeps the first RTO's ssthresh, but an
    /// RTO after snd_una has advanced in Loss (icsk_retransmits back at 0) takes a new one from
    /// the window of that moment, even though no valid RTT sample reset the backoff.
    #[test]
    fn repeated_rto_recomputes_ssthresh_only_after_progress() {
        let mut s = plain_sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        let d1 = s.timer_deadline().unwrap();
        s.on_timer(d1, &mut out);
        assert_eq!((s.state, s.w.ssthresh), (CaState::Loss, 5), "cwnd 11 / 2");
        // A second expiry with nothing acknowledged: ssthresh stays.
        let d2 = s.timer_deadline().unwrap();
        s.on_timer(d2, &mut out);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (1, 5));
        // The retransmission is acknowledged (Karn: no RTT sample, backoff stays), slow start
        // in Loss: cwnd 2.
        s.on_ack(d2 + Time::from_ms(10), &ack(2000, &[]), &mut out);
        assert_eq!((s.state, s.w.cwnd), (CaState::Loss, 2));
        assert_eq!(s.rtt.backoff(), 2);
        // Another expiry before the recovery point: a new ssthresh from cwnd 2 (Reno: 2).
        let d3 = s.timer_deadline().unwrap();
        s.on_timer(d3, &mut out);
        assert_eq!((s.state, s.w.cwnd, s.w.ssthresh), (CaState::Loss, 1, 2));
        assert_eq!(s.stats.rtos, 3);
        assert!(s.scoreboard_consistent());
    }

    #[test]
    fn receive_window_limits_what_is_sent() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        let mut a = ack(0, &[]);
        a.rwnd = 3500;
        s.on_ack(Time::ZERO, &a, &mut out);
        assert_eq!(out.len(), 3, "3 whole segments fit in 3500 bytes");
    }

    // ---- Tail loss probes (tcp_schedule_loss_probe, tcp_send_loss_probe, tcp_process_tlp_ack)

    /// Every packet sent so far has left the host (the simulation reports this per packet
    /// through tsq_done; a probe does not retransmit a packet still queued below TCP).
    fn left_host(s: &mut TcpSender) {
        s.tsq_done(u64::MAX);
    }

    fn with_rwnd(mut p: Packet, rwnd: u32) -> Packet {
        p.rwnd = rwnd;
        p
    }

    /// A sender limited by cwnd: the probe is one new segment beyond cwnd, 2 x srtt after the
    /// last transmission, and the RTO then runs from the probe.
    #[test]
    fn tlp_sends_new_data_beyond_cwnd() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out); // srtt 10 ms, cwnd 11
        assert_eq!(out.len(), 2);
        assert_eq!(s.in_flight(), s.w.cwnd, "cwnd-limited");
        assert_eq!(s.tlp_deadline(), Some(Time::from_ms(30)), "PTO = 2 x srtt");
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(30)));
        out.clear();
        s.on_timer(Time::from_ms(30), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![12_000], "a new segment");
        assert_eq!(s.in_flight(), s.w.cwnd + 1, "cwnd exceeded by the probe");
        assert_eq!(s.stats.tlp_probes, 1);
        assert_eq!(s.stats.retransmits, 0);
        assert_eq!(s.tlp_high_seq, None, "only retransmitted probes are tracked");
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(30) + s.rtt.rto()), "RTO from the probe");
        assert_eq!(s.stats.rtos, 0);
    }

    /// An application-limited sender: the probe retransmits the highest segment sent.
    #[test]
    fn tlp_retransmits_the_last_segment_when_no_new_data() {
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        assert!(out.is_empty());
        assert_eq!(s.tlp_deadline(), Some(Time::from_ms(30)));
        // Still in the host's queue: no probe retransmission (skb_still_in_host_queue).
        s.on_timer(Time::from_ms(30), &mut out);
        assert!(out.is_empty());
        assert_eq!(s.stats.tlp_probes, 0);
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        left_host(&mut s);
        s.on_timer(Time::from_ms(30), &mut out);
        assert_eq!(out.iter().map(|p| (p.seq, p.len)).collect::<Vec<_>>(), vec![(9000, 1000)]);
        assert_eq!((s.stats.tlp_probes, s.stats.retransmits), (1, 1));
        assert_eq!(s.tlp_high_seq, Some(10_000));
        assert_eq!(s.state, CaState::Open);
        assert!(s.scoreboard_consistent());
    }

    /// With the peer's window closed to new data and cwnd full, the probe is the last segment.
    #[test]
    fn tlp_retransmits_the_last_segment_when_rwnd_is_closed() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        // cwnd 11; the window ends at 12 000: two new segments fill both.
        s.on_ack(Time::from_ms(10), &with_rwnd(ack(1000, &[]), 11_000), &mut out);
        assert_eq!(s.snd_nxt, 12_000);
        out.clear();
        left_host(&mut s);
        s.on_timer(s.tlp_deadline().expect("armed"), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![11_000]);
        assert_eq!(s.tlp_high_seq, Some(12_000));
    }

    /// One packet out: the PTO allows for a delayed ACK (1.5 srtt + 200 ms), and a probe
    /// never comes later than the RTO: here it takes the RTO's place.
    #[test]
    fn tlp_with_one_packet_out_replaces_the_rto() {
        let mut s = sender(1000);
        s.set_app_limit(2000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        // 1.5 x 10 + 200 = 215 ms > RTO (10 + max(4 x 5, 200) = 210 ms): the probe fires then.
        let rto_at = Time::from_ms(10) + s.rtt.rto();
        assert_eq!(s.tlp_deadline(), Some(rto_at));
        out.clear();
        left_host(&mut s);
        s.on_timer(rto_at, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1000]);
        assert_eq!((s.stats.tlp_probes, s.stats.rtos), (1, 0), "a probe, not a timeout");
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.timer_deadline(), Some(rto_at + s.rtt.rto()));
    }

    /// At most one probe retransmission is outstanding: a later probe timer only re-arms.
    #[test]
    fn one_tlp_retransmission_at_a_time() {
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        left_host(&mut s);
        s.on_timer(Time::from_ms(30), &mut out);
        assert_eq!(s.stats.tlp_probes, 1);
        // A partial ACK arms the probe again ...
        s.on_ack(Time::from_ms(40), &ack(5000, &[]), &mut out);
        let t = s.tlp_deadline().expect("re-armed in Open");
        out.clear();
        s.on_timer(t, &mut out);
        // ... but it sends nothing while the first probe's episode is open.
        assert!(out.is_empty());
        assert_eq!(s.stats.tlp_probes, 1);
        assert!(s.timer_deadline().is_some_and(|d| d > t), "the RTO stays armed");
    }

    /// No probe outside Open (SACKed data: Disorder), nor with room in cwnd and data waiting.
    #[test]
    fn tlp_only_in_open_and_when_limited() {
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[(2000, 3000)]), &mut out);
        assert_eq!(s.state, CaState::Disorder);
        assert_eq!(s.tlp_deadline(), None);
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        s.try_send(Time::ZERO, &mut out);
        // Nothing may be sent (window closed) though cwnd has room: no probe.
        s.on_ack(Time::from_ms(10), &with_rwnd(ack(1000, &[]), 9000), &mut out);
        assert!(s.in_flight() < s.w.cwnd);
        assert_eq!(s.tlp_deadline(), None);
    }

    /// The probe repaired the tail loss: the ACK beyond tlp_high_seq without a D-SACK costs a
    /// window reduction through CWR (ssthresh from the algorithm, cwnd = ssthresh).
    #[test]
    fn tlp_that_repairs_a_loss_reduces_the_window() {
        let (mut s, log) = probed();
        s.set_loss_probes(true);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(9000, &[]), &mut out); // segment 9 lost
        let cwnd = s.w.cwnd;
        let t = s.tlp_deadline().unwrap();
        left_host(&mut s);
        s.on_timer(t, &mut out);
        assert_eq!(s.tlp_high_seq, Some(10_000));
        // The probe's ACK reaches tlp_high_seq: not yet decided.
        s.on_ack(t + Time::from_ms(10), &ack(10_000, &[]), &mut out);
        assert_eq!(s.stats.tlp_recoveries, 0);
        let cwnd2 = s.w.cwnd;
        s.set_app_limit(12_000);
        s.try_send(t + Time::from_ms(10), &mut out);
        s.on_ack(t + Time::from_ms(20), &ack(12_000, &[]), &mut out);
        assert_eq!(s.stats.tlp_recoveries, 1);
        assert_eq!(s.tlp_high_seq, None);
        assert_eq!(s.w.ssthresh, (cwnd2 / 2).max(2));
        assert_eq!(s.w.cwnd, s.w.ssthresh, "tcp_end_cwnd_reduction in CWR");
        assert!(cwnd2 >= cwnd);
        assert_eq!(s.state, CaState::Open);
        let l = log.lock().unwrap();
        assert_eq!(l.states, vec![CaState::Cwr, CaState::Open], "passes through CWR");
    }

    /// Original and probe both arrived: the receiver's D-SACK ends the episode, no reduction.
    #[test]
    fn tlp_dsack_means_no_loss() {
        let mut s = sender(1000);
        s.set_app_limit(10_000);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(9000, &[]), &mut out);
        let t = s.tlp_deadline().unwrap();
        left_host(&mut s);
        s.on_timer(t, &mut out);
        s.on_ack(t + Time::from_ms(1), &ack(10_000, &[]), &mut out); // the original
        s.on_ack(t + Time::from_ms(10), &ack(10_000, &[(9000, 10_000)]), &mut out); // the probe
        assert_eq!(s.tlp_high_seq, None);
        let (cwnd, ssthresh) = (s.w.cwnd, s.w.ssthresh);
        s.set_app_limit(12_000);
        s.try_send(t + Time::from_ms(10), &mut out);
        s.on_ack(t + Time::from_ms(20), &ack(12_000, &[]), &mut out);
        assert_eq!(s.stats.tlp_recoveries, 0);
        assert_eq!(s.w.ssthresh, ssthresh);
        assert!(s.w.cwnd >= cwnd);
    }

    // ---- F-RTO (tcp_process_loss, tcp_frto = 2) and undo

    /// 10 segments out, the first ACKed at 10 ms (srtt 10 ms), then the ACKs stall until the
    /// RTO fires and retransmits segment 1. Returns the sender after the RTO.
    fn stalled_after_rto(cc_kind: Option<CcKind>) -> TcpSender {
        let mut s = match cc_kind {
            Some(k) => sender_with(1000, cc::build(k, &TcpOpts::default()), false),
            None => sender(1000),
        };
        s.set_app_limit(u64::MAX);
        s.set_loss_probes(false);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out);
        let rto = s.timer_deadline().unwrap();
        out.clear();
        s.on_timer(rto, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1000]);
        assert_eq!((s.state, s.w.cwnd), (CaState::Loss, 1));
        assert!(s.frto);
        s
    }

    /// A spurious RTO (the ACKs were only late): the first ACK advances over the
    /// retransmitted head, F-RTO sends new data instead of retransmitting (step 2.b), and the
    /// next ACK covers segments sent only once: undo (step 3.b), back to Open with the
    /// window of before the timeout.
    #[test]
    fn frto_detects_a_spurious_rto_and_undoes() {
        let mut s = stalled_after_rto(None);
        let rto_at = Time::from_ms(10) + s.rtt.base_rto();
        let mut out = Vec::new();
        s.on_ack(rto_at + Time::from_ms(1), &ack(2000, &[]), &mut out);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![12_000, 13_000], "new data, no retransmission");
        assert_eq!(s.stats.retransmits, 1);
        out.clear();
        s.on_ack(rto_at + Time::from_ms(2), &ack(4000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.stats.spurious_rtos, 1);
        // Reno (no undo_cwnd hook in 4.10): cwnd = max(cwnd, 2 x ssthresh) = 2 x 5; ssthresh
        // back to prior_ssthresh (infinite before the first loss).
        assert_eq!(s.w.ssthresh, INFINITE_SSTHRESH);
        assert!(s.w.cwnd >= 10, "cwnd {}", s.w.cwnd);
        assert_eq!(s.sb.lost_out, 0, "loss marks cleared");
        assert_eq!(s.stats.retransmits, 1, "nothing else retransmitted");
        assert!(s.scoreboard_consistent());
    }

    /// CUBIC's bictcp_undo_cwnd gives back the window it had when the RTO struck.
    #[test]
    fn frto_undo_restores_cubic_loss_cwnd() {
        let mut s = stalled_after_rto(Some(CcKind::Cubic));
        let rto_at = Time::from_ms(10) + s.rtt.base_rto();
        let mut out = Vec::new();
        s.on_ack(rto_at + Time::from_ms(1), &ack(2000, &[]), &mut out);
        s.on_ack(rto_at + Time::from_ms(2), &ack(4000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        // cwnd was 11 at the RTO (10 + 1 in slow start); the ACK of the undo adds its 2.
        assert!(s.w.cwnd >= 11, "cwnd {}", s.w.cwnd);
    }

    /// A real loss: after the new data of step 2.b, a duplicate ACK SACKing it says the
    /// window was lost (step 3.a): F-RTO ends and the lost segments are retransmitted, in Loss.
    #[test]
    fn frto_keeps_a_genuine_rto_in_loss() {
        let mut s = stalled_after_rto(None);
        let rto_at = Time::from_ms(10) + s.rtt.base_rto();
        let mut out = Vec::new();
        s.on_ack(rto_at + Time::from_ms(10), &ack(2000, &[]), &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![12_000, 13_000]);
        out.clear();
        s.on_ack(rto_at + Time::from_ms(20), &ack(2000, &[(12_000, 13_000)]), &mut out);
        assert!(!s.frto);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.stats.spurious_rtos, 0);
        assert_eq!(out.first().map(|p| p.seq), Some(2000), "conventional recovery");
        assert_eq!(s.w.ssthresh, 5);
        assert!(s.scoreboard_consistent());
    }

    /// Eifel (tcp_packet_delayed): the first ACK after the RTO echoes the original's
    /// timestamp, older than the retransmission: undo at once (tcp_try_undo_loss).
    #[test]
    fn timestamps_undo_a_spurious_rto() {
        let mut s = stalled_after_rto(None);
        let rto_at = Time::from_ms(10) + s.rtt.base_rto();
        let mut a = ack(2000, &[]);
        a.ts_ecr_ns = 1; // segment 1's first transmission, at time 0 (+1 ns)
        let mut out = Vec::new();
        s.on_ack(rto_at + Time::from_ms(1), &a, &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.stats.undos, 1);
        assert_eq!(s.stats.spurious_rtos, 0, "not F-RTO's verdict");
        // The echo of the retransmission itself does not undo.
        let mut s = stalled_after_rto(None);
        let mut a = ack(2000, &[]);
        a.ts_ecr_ns = rto_at.ns();
        s.on_ack(rto_at + Time::from_ms(10), &a, &mut out);
        assert_eq!(s.state, CaState::Loss);
        assert_eq!(s.stats.undos, 0);
    }

    /// D-SACK undo: the fast retransmission of segment 0 arrives after the original; its
    /// D-SACK shows every retransmission of the episode was spurious and the reduction is
    /// undone.
    #[test]
    fn dsack_undoes_a_spurious_fast_recovery() {
        let mut s = recovering(Time::from_ms(13));
        let before = s.w.ssthresh;
        assert_eq!(s.undo_retrans, 1);
        let mut out = Vec::new();
        // The original segment 0 arrives late: everything up to 14 000 is ACKed ...
        s.on_ack(Time::from_ms(20), &ack(14_000, &[]), &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.stats.undos, 0, "no evidence yet (no timestamps)");
        let reduced = s.w.ssthresh;
        assert_eq!(reduced, before);
        // ... then the retransmission, which the receiver reports as a duplicate.
        s.on_ack(Time::from_ms(21), &ack(14_000, &[(0, 1000)]), &mut out);
        assert_eq!(s.undo_retrans, 0);
        assert_eq!(s.stats.undos, 1);
        assert_eq!(s.w.ssthresh, INFINITE_SSTHRESH, "prior_ssthresh restored");
        assert!(s.w.cwnd >= 2 * reduced);
    }

    /// An RTO during a recovery (not repeated) does not run F-RTO (tcp_enter_loss:
    /// new_recovery false and icsk_retransmits 0).
    #[test]
    fn no_frto_for_an_rto_in_recovery() {
        let mut s = recovering(Time::from_ms(13));
        let d = s.rto_at.unwrap();
        let mut out = Vec::new();
        s.on_timer(d, &mut out);
        assert_eq!(s.state, CaState::Loss);
        assert!(!s.frto);
    }

    // ---- FACK (Linux 4.10, tcp_fack = 1)

    /// A burst loss: segments 0-4 lost, 5 SACKed. fackets_out = 6 > reordering 3, so
    /// recovery starts on this first SACK (RFC 6675 alone would wait for three), and the
    /// segments more than 3 below the highest SACK (0, 1 and 2) are marked lost at once.
    #[test]
    fn fack_enters_recovery_on_the_first_distant_sack() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(0, &[(5000, 6000)]), &mut out);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.sb.fackets_out(), 6);
        assert_eq!(s.sb.lost_out, 3);
        assert_eq!(out.first().map(|p| p.seq), Some(0));
        // A SACK just above the head is not enough (fackets_out 2).
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(Time::from_ms(10), &ack(0, &[(1000, 2000)]), &mut out);
        assert_eq!(s.state, CaState::Disorder);
        assert!(s.scoreboard_consistent());
    }

    /// The tail of a window is lost: the loss probe (a new segment) is SACKed, FACK starts
    /// recovery and RACK finds the rest, without waiting for the RTO.
    #[test]
    fn tlp_turns_a_tail_loss_into_fast_recovery() {
        let mut s = sender(1000);
        s.set_app_limit(u64::MAX);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(Time::from_ms(10), &ack(1000, &[]), &mut out); // 1..12 000 then lost
        let t = s.tlp_deadline().unwrap();
        out.clear();
        s.on_timer(t, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![12_000]);
        out.clear();
        s.on_ack(t + Time::from_ms(10), &ack(1000, &[(12_000, 13_000)]), &mut out);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(out.first().map(|p| p.seq), Some(1000), "fast retransmit, no RTO");
        assert_eq!(s.stats.rtos, 0);
        assert!(s.scoreboard_consistent());
    }

    /// MuSher / AMuSe's window restore ends the RTO episode outright: nothing is left for an
    /// undo or F-RTO to act on, and in Open the loss probe is armed again.
    #[test]
    fn restore_window_ends_the_undo_episode() {
        let mut s = stalled_after_rto(None);
        s.set_loss_probes(true);
        let now = s.rto_at.unwrap();
        let mut out = Vec::new();
        s.restore_window(now, 10, 20, &mut out);
        assert_eq!(s.state, CaState::Open);
        assert_eq!((s.undo_marker, s.frto), (None, false));
        assert!(s.tlp_deadline().is_some());
    }
}
