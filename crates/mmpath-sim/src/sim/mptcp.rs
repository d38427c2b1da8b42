//! MPTCP in the simulation: a connection per scenario flow of kind "mptcp", one TCP subflow per
//! path (each an internal `Flow` with its own sender, receiver and route), and the glue that
//! moves data between them:
//!
//! - sending: the application writes into the connection; the scheduler picks a subflow for
//!   each chunk, which is appended to that subflow's send queue and mapped to data sequence
//!   numbers (`MapQueue`); every data segment leaving a subflow is stamped with its DSN;
//! - receiving: every data segment's DSN range goes into the connection's reassembly buffer
//!   (`Reassembly`); ACKs carry the data ACK and the connection-level window back;
//! - failures: an RTO marks the subflow pf (linux-v0.9x); the connection's own retransmission
//!   timer marks it stale after stale_loss_cnt intervals without an ACK (linux-upstream); either
//!   way its outstanding data is reinjected on the others;
//! - path manager: MP_CAPABLE is done before t = 0 (iperf3 starts its clock once connected);
//!   every other subflow does its MP_JOIN handshake on its own path from the flow's start,
//!   retrying with TCP's SYN timeout (1 s, doubling) when a step is lost.
//!
//! Layout (sim/mptcp/):
//! - build.rs: a connection and its subflows from the scenario flow;
//! - app.rs: its start, first events and application;
//! - schedule.rs: views, the scheduler's decision loop, chunk assignment;
//! - actions.rs: the scheduler's side effects (penalty, opportunistic retransmission, ...);
//! - packets.rs: DSS stamping, reassembly, data ACKs;
//! - failure.rs: pf handling on an RTO (v0.9x), reinjection;
//! - sndbuf.rs: the connection-level send buffer (v0.9x and upstream autotuning);
//! - stale.rs: upstream's connection-level retransmission timer and stale subflows;
//! - events.rs: link events, scheduler ticks, MP_PRIO;
//! - join.rs: the MP_JOIN handshake;
//! - output.rs: the timeline row and summary entry.

mod actions;
mod app;
mod build;
mod events;
mod failure;
mod join;
mod output;
mod packets;
mod schedule;
mod sndbuf;
mod stale;

pub(super) use build::build;

use crate::app::App;
use crate::mptcp::conn::{MapQueue, Reassembly, ReinjectQueue};
use crate::mptcp::sched::{SchedAction, Scheduler, SubflowView};
use crate::scenario::{AppKind, CcKind, CoupledName, Direction, Kernel, MptcpMode};
use crate::tcp::cc::CaState;
use crate::tcp::sender::TcpSender;
use crate::time::Time;
use crate::trace::Bins;
use serde_json::Value;

/// The oracle's recorder: (flow, check, ok, detail, the list it appends to).
pub(super) type CheckFn<'a> = dyn FnMut(&str, &str, bool, String, &mut Vec<Value>) + 'a;

/// Linux TCP_TIMEOUT_INIT: the first SYN retransmission after 1 s, then doubling.
const SYN_TIMEOUT: Time = Time::from_secs(1);
/// Upstream net.mptcp.stale_loss_cnt default (net/mptcp/ctrl.c).
const STALE_LOSS_CNT: u32 = 4;
/// A bound on scheduler decisions per wake-up, against a scheduler that keeps choosing a
/// subflow that cannot take data.
const MAX_DECISIONS: usize = 4096;

/// The sender's state just before a timer event, to see whether it was an RTO and to keep the
/// pre-loss window (MuSher/AMuSe restore it when the link comes back).
#[derive(Debug, Clone, Copy)]
pub(super) struct SenderSnapshot {
    rtos: u64,
    cwnd: u32,
    ssthresh: u32,
    state: CaState,
}

impl SenderSnapshot {
    pub(super) fn of(s: &TcpSender) -> Self {
        SenderSnapshot { rtos: s.stats.rtos, cwnd: s.w.cwnd, ssthresh: s.w.ssthresh, state: s.state }
    }
}

/// Per-subflow state the connection keeps (the subflow's TCP state is in its `Flow`).
pub(super) struct SubState {
    /// Internal flow index of the subflow.
    pub flow: u16,
    pub maps: MapQueue,
    pub established: bool,
    pub backup: bool,
    pub pf: bool,
    pub stale: bool,
    stale_count: u32,
    /// When the subflow last received anything (tcp_sock rcv_tstamp), and its value when the
    /// current count of fruitless connection-level retransmission intervals began (stale.rs).
    last_ack: Time,
    stale_stamp: Time,
    /// Handshake retransmission deadline and current timeout.
    hs_deadline: Option<Time>,
    hs_rto: Time,
    /// When the data sender last sent its handshake segment whose answer gives it an RTT
    /// sample (join.rs).
    hs_sent_at: Option<Time>,
    /// cwnd and ssthresh before the RTO that started the current loss episode.
    pre_loss: Option<(u32, u32)>,
    pub scanning: bool,
    pub scheduled_bytes: u64,
    pub reinjected_bytes: u64,
    pub established_at: Option<Time>,
    /// The subflow's own autotuned send buffer (tcp_sndbuf_expand), which the connection's
    /// adds up (sndbuf.rs).
    pub sndbuf: crate::tcp::sndbuf::Autotuned,
}

impl SubState {
    /// The timeline's sf_state code (see trace.rs).
    pub(super) fn state_code(&self) -> i8 {
        if !self.established {
            3
        } else if self.stale {
            2
        } else if self.pf {
            1
        } else if self.backup {
            4
        } else {
            0
        }
    }
}

#[derive(Debug, Default, Clone)]
pub(super) struct ConnStats {
    pub reinjections: u64,
    pub reinjected_bytes: u64,
    pub penalizations: u64,
    pub opportunistic_retransmits: u64,
    pub redundant_bytes: u64,
    pub decisions: u64,
    pub waits: u64,
}

pub(super) struct MpConn {
    pub owner: u16,
    pub name: String,
    pub kernel: Kernel,
    pub mode: MptcpMode,
    pub coupled: CoupledName,
    pub cc: CcKind,
    pub subs: Vec<SubState>,
    pub sched: Box<dyn Scheduler>,
    pub app: App,
    pub app_kind: AppKind,
    pub direction: Direction,
    pub start: Time,
    pub stop: Time,
    /// Data bytes the application has written (u64::MAX: unlimited).
    pub data_limit: u64,
    /// Next new data sequence number to assign.
    pub data_nxt: u64,
    /// Highest data ACK the sender has seen.
    pub data_una: u64,
    /// The right edge of the receiver's connection-level window: the furthest data ACK +
    /// window advertised so far. Taken as a maximum because ACKs arrive over different
    /// subflows out of order, and an older one's window is relative to its older data ACK
    /// (RFC 8684 3.3.5: the window is relative to the DATA_ACK; the receiver never retracts an
    /// edge it advertised).
    pub peer_right: u64,
    /// The connection's send buffer now (sndbuf.rs sizes it), and how.
    pub sndbuf: u64,
    pub sndbuf_rule: sndbuf::ConnSndbuf,
    pub reinject: ReinjectQueue,
    pub rx: Reassembly,
    /// The window the last ACK advertised (upstream msk->old_wspace): upstream's read-time
    /// ACK rule visits every subflow when a read at least doubles it (packets.rs).
    old_wspace: u64,
    views: Vec<SubflowView>,
    /// The scheduler reads the views' pacing rate (`Scheduler::reads_pacing_rate`, asked once:
    /// the views are built on every decision).
    pacing_in_views: bool,
    actions: Vec<SchedAction>,
    pub delivered_bytes: u64,
    pub goodput_bytes: u64,
    pub bins: Bins,
    pub stats: ConnStats,
    tick_at: Option<Time>,
    /// Upstream's connection-level retransmission timer (stale.rs): its deadline, and the time
    /// of the one engine event queued for it.
    rtx_at: Option<Time>,
    rtx_event: Option<Time>,
    /// msk->timer_ival: what the timer is re-armed with, set by the last scheduling pass
    /// (stale.rs `conn_set_timeout`), not recomputed at each re-arm.
    timer_ival: Time,
    /// The kernel's write_seq: the data the application has written into the send buffer
    /// (stale.rs `conn_writer_wake`). Written but not yet handed to a subflow is the kernel's
    /// pending data (mptcp_send_head).
    written: u64,
    /// One of the kernel's push points ran (stale.rs): the next `conn_push` is a scheduling
    /// pass (mptcp_subflow_get_send) if written data is pending.
    pass_due: bool,
    /// MP_PRIO changes still to come: (time, subflow, backup).
    prio: Vec<(Time, usize, bool)>,
    /// A bytes-limited transfer has been written completely (its tail may be sub-MSS).
    app_done: bool,
    /// New data chunks in DSN order: (end DSN, subflow that first carried it); the front is
    /// the head-of-line chunk once data ACKs pop what they cover.
    carriers: std::collections::VecDeque<(u64, u8)>,
}
