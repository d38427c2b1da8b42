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
//! TSO/GSO: a paced sender sends an skb of `tso_segs` segments at a time (tcp_tso_autosize, or
//! the algorithm's goal) with one pacing check and one send time (sender/pacing.rs), as Linux
//! paces and timestamps per skb; an unpaced one sends what the window allows at once, which is
//! what Linux's skbs would carry too.
//!
//! Not modelled (documented in docs/models.md): RACK before recovery starts (Linux >= 4.18
//! also detects the first loss by time), early retransmit (RFC 5827), tcp_try_undo_partial
//! and the reordering estimator (tp->reordering stays 3), idle restart.
//!
//! This file holds the sender's state, its configuration and counters, the application's side
//! (what it has written, record boundaries) and the timer events. Its parts are child modules,
//! so that they share the sender's private state without widening its visibility:
//! - sender/transmit.rs: what may be sent now (cwnd, rwnd, send buffer, Nagle, TSQ) and sending it;
//! - sender/pacing.rs: the pacing rate and the earliest departure time;
//! - sender/rate.rs: delivery-rate sampling (tcp_rate.c);
//! - sender/ack.rs: what an ACK does, in tcp_ack's order;
//! - sender/recovery.rs: fast recovery: entry, PRR, FACK and RACK loss marking, exit;
//! - sender/rto.rs: the retransmission timeout, the Loss state and F-RTO;
//! - sender/undo.rs: undoing a spurious reduction (D-SACK, Eifel timestamps);
//! - sender/loss_probe.rs: tail loss probes.

mod ack;
mod idle;
mod loss_probe;
mod pacing;
mod rate;
mod recovery;
mod rto;
#[cfg(test)]
mod testkit;
mod transmit;
mod undo;

use super::cc::{CaState, CongestionControl, Window};
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::timer_wheel::TimerWheel;
use crate::packet::Packet;
use crate::scenario::{BufSize, TcpOpts};
use crate::time::Time;
use crate::trace::LogHistogram;

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
    /// tcp_cwnd_restart after an idle spell longer than the RTO (sender/idle.rs).
    pub idle_restarts: u64,
    /// tcp_cwnd_application_limited reductions (sender/idle.rs).
    pub app_limited_reductions: u64,
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
    /// TCP_INIT_CWND as configured: the floor of both RFC 2861 reductions (sender/idle.rs).
    initial_cwnd: u32,
    /// RFC 2861 congestion window validation state (sender/idle.rs).
    idle: idle::IdleState,
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
    /// The autotuned send buffer (sndbuf "auto"): grow-only, tcp/sndbuf.rs.
    sndbuf_auto: crate::tcp::sndbuf::Autotuned,
    wmem_max: u64,
    ts_recent: u64,
    // Linux tcp_cwnd_validate bookkeeping.
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    /// Sequence numbers no new segment may cross (MPTCP: where one DSS mapping ends and a
    /// discontiguous one begins; Linux never puts two mappings in one skb). Empty for TCP.
    boundaries: std::collections::VecDeque<u64>,
    /// tp->pushed_seq: where the last push ended (`mark_push`); the segment reaching it carries
    /// PSH. 0: never pushed (a single-path flow's writer is modelled without pushes).
    pushed_seq: u64,
    /// TCP Small Queues (tcp_small_queue_check): bytes of this socket queued below TCP (in
    /// the first hop's queue, not yet transmitted), the ceiling (net.ipv4.tcp_limit_output_bytes;
    /// 0 = off) and whether sending stopped on it (TSQ_THROTTLED).
    tsq_queued: u64,
    tsq_limit: u64,
    tsq_throttled: bool,
    /// The first hop has gone away (link/seam.rs `Gone`): it frees every frame at once, so
    /// nothing stays queued below TCP and TSQ never holds the socket back.
    first_hop_gone: bool,
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
    /// The skb being sent (TSO/GSO): its segments still to go without a pacing check, and
    /// the lateness credit (tcp_update_skb_after_send) it has left.
    skb_segs_left: u32,
    skb_credit_ns: u64,
    /// `stack_pacing_rate_memo`'s last ((srtt ns, max(cwnd, packets out), slow-start ratio),
    /// rate).
    pacing_memo: Option<((u64, u32, bool), u64)>,
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
    /// The host kernel's tick and timer wheel: when the retransmission timer (RTO, probe,
    /// reordering timeout) fires.
    wheel: TimerWheel,
    /// Current kernels' probe rule (`set_modern_loss_probe`).
    tlp_modern: bool,
    frto_enabled: bool,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(cfg: SenderCfg) -> Self {
        let pacing = cfg.pacing || cfg.cc.needs_pacing();
        TcpSender {
            flow: cfg.flow,
            mss: cfg.mss,
            initial_cwnd: cfg.initial_cwnd,
            idle: idle::IdleState::default(),
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
            sndbuf_auto: crate::tcp::sndbuf::Autotuned::default(),
            wmem_max: cfg.wmem_max,
            ts_recent: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            boundaries: std::collections::VecDeque::new(),
            pushed_seq: 0,
            tsq_queued: 0,
            tsq_limit: 0,
            tsq_throttled: false,
            first_hop_gone: false,
            delivered: 0,
            lost: 0,
            delivered_mstamp: Time::ZERO,
            first_tx_mstamp: Time::ZERO,
            app_limited: 0,
            min_rtt: None,
            pacing,
            wstamp: Time::ZERO,
            pace_wait: None,
            skb_segs_left: 0,
            skb_credit_ns: 0,
            pacing_memo: None,
            tlp_at: None,
            tlp_high_seq: None,
            prior_ssthresh: 0,
            undo_marker: None,
            undo_retrans: -1,
            retrans_stamp: None,
            frto: false,
            xmit: Xmit::Normal,
            tlp_enabled: true,
            wheel: TimerWheel::default(),
            tlp_modern: false,
            frto_enabled: true,
            stats: SenderStats::default(),
        }
    }

    pub fn mss(&self) -> u32 {
        self.mss
    }

    /// The congestion control's send-buffer multiple of cwnd (ops->sndbuf_expand).
    pub fn sndbuf_expand_factor(&self) -> u32 {
        self.cc.sndbuf_expand()
    }

    /// The congestion control, for an owner that lends it state (mptcp/coupled.rs `lend`).
    pub fn cc_mut(&mut self) -> &mut dyn CongestionControl {
        self.cc.as_mut()
    }

    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    /// When the socket's retransmit timer slot fires, if armed: Linux keeps one (icsk_timeout),
    /// holding the loss probe, RACK's reordering timeout or the RTO (icsk_pending says which);
    /// here they are separate deadlines, and the slot's is the earliest armed one.
    pub fn xmit_timer_deadline(&self) -> Option<Time> {
        [self.tlp_at, self.reo_at, self.rto_at].into_iter().flatten().min()
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

    /// Packets delivered so far (tp->delivered).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Whether this sender paces.
    pub fn is_pacing(&self) -> bool {
        self.pacing
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

    /// The tail loss probe as current kernels schedule it (Linux 6.x tcp_output.c
    /// tcp_schedule_loss_probe: in Open or CWR with packets out, whether or not cwnd has room
    /// for queued data), for the subflows of an upstream MPTCP connection; the default is
    /// Linux 4.10's rule (Open only, not with cwnd room and data waiting).
    pub fn set_modern_loss_probe(&mut self, on: bool) {
        self.tlp_modern = on;
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
    /// F-RTO, slow start after idle), for single-path flows and MPTCP subflows alike, and the
    /// host's timer wheel (its CONFIG_HZ, `t.kernel_hz`, at the run's clock phase).
    pub fn apply_sysctls(&mut self, t: &TcpOpts, wheel: TimerWheel) {
        self.set_output_limit(t.limit_output_bytes);
        self.set_loss_probes(t.tail_loss_probes);
        self.set_frto(t.frto);
        self.set_slow_start_after_idle(t.slow_start_after_idle);
        self.wheel = wheel;
    }

    /// No segment may span `seq` (it starts a new record: an MPTCP mapping).
    pub fn mark_boundary(&mut self, seq: u64) {
        if seq > self.snd_nxt && self.boundaries.back().is_none_or(|&b| b < seq) {
            self.boundaries.push_back(seq);
        }
    }

    /// A push ends at `seq` (the end of what the writer queued): tcp_push marks the write
    /// queue's tail skb PSH (tcp_mark_push, net/ipv4/tcp.c), and a TSO skb's PSH goes to its
    /// last segment (tcp_gso_segment), so the segment reaching `seq` carries it. Only the
    /// latest push is kept: data appended to an unsent tail skb carries its PSH on to the new
    /// end (tcp_skb_can_collapse_to / mptcp_skb_can_collapse_to append to it).
    pub fn mark_push(&mut self, seq: u64) {
        self.pushed_seq = seq;
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

    /// tcp_set_ca_state: a new congestion-avoidance state, which the algorithm hears of.
    fn set_state(&mut self, now: Time, s: CaState) {
        if self.state != s {
            self.state = s;
            self.cc.on_state_seq(&mut self.w, now, s, self.snd_nxt);
        }
    }

    /// A timer fires: a packet's pacing release time, RACK's reordering timer
    /// (sender/recovery.rs), the loss probe (sender/loss_probe.rs) or the RTO (sender/rto.rs);
    /// a stale timer event does nothing.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.pace_wait.is_some_and(|t| t <= now) {
            self.try_send(now, out);
        }
        if self.reo_at.is_some_and(|t| t <= now) {
            self.rack_reo_timeout(now, out);
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
        self.retransmit_timer(now, out);
    }
}
