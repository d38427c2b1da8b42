//! An MPTCP connection (RFC 8684) as a clock-free object: one per scenario flow of kind
//! "mptcp", over one TCP subflow per (client address, server address) pair. It owns the
//! data-level state (DSN mappings, reassembly, the send buffer, reinjection), each subflow's
//! MPTCP state (MP_JOIN, backup, pf / stale), its packet scheduler and its timers; whoever runs
//! it (the simulation, or a unit test) holds the subflows' TCP endpoints and lends them through
//! `SubflowIo`, and carries out what the connection asks for (`Effect`: a timer, a handshake
//! segment, a push's flush) in the order asked.
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
//! Layout (mptcp/connection/):
//! - app.rs: its start, first timers and application;
//! - schedule.rs: views, the scheduler's decision loop, chunk assignment;
//! - actions.rs: the scheduler's side effects (penalty, opportunistic retransmission, ...);
//! - packets.rs: DSS stamping, reassembly, data ACKs;
//! - failure.rs: pf handling on an RTO (v0.9x), reinjection;
//! - sndbuf.rs: the connection-level send buffer (v0.9x and upstream autotuning);
//! - stale.rs: upstream's connection-level retransmission timer and stale subflows;
//! - events.rs: link events, scheduler ticks, MP_PRIO;
//! - join.rs: the MP_JOIN handshake;
//! - mp_prio.rs: the path manager's MP_PRIO, sent as a segment and applied where it arrives;
//! - pm.rs: a userspace path-manager policy (mptcp/pm/) run inside the connection: the events
//!   it hears, and its actions carried out (new subflows, closing one, MP_PRIO);
//! - testkit.rs: what the unit tests share (subflow endpoints without a simulation).

mod actions;
mod app;
mod events;
mod failure;
mod join;
mod mp_prio;
mod packets;
mod pm;
mod rcv_space;
mod schedule;
mod sndbuf;
mod stale;
#[cfg(test)]
mod testkit;

pub use packets::ReadRule;
pub use pm::{PmSetup, PmStats};
pub use sndbuf::ConnSndbuf;

use super::conn::{MapQueue, Reassembly, ReinjectQueue};
use super::coupled::{self, CoupledName, Coupling};
use super::sched::{SchedAction, Scheduler, SubflowView};
use crate::app::App;
use crate::packet::Packet;
use crate::scenario::{AppKind, CcKind, Direction, Kernel, MptcpMode};
use crate::tcp::cc::CaState;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::tcp::timer_wheel::TimerWheel;
use crate::time::Time;
use crate::trace::Bins;
pub use rcv_space::{RcvSpace, SubflowRcvBuf};

/// Linux TCP_TIMEOUT_INIT: the first SYN retransmission after 1 s, then doubling.
const SYN_TIMEOUT: Time = Time::from_secs(1);
/// Upstream net.mptcp.stale_loss_cnt default (net/mptcp/ctrl.c).
const STALE_LOSS_CNT: u32 = 4;
/// A subflow's first rcv_ssthresh: the initial receive window, which tcp_select_initial_window
/// (net/ipv4/tcp_output.c) caps at U16_MAX without tcp_workaround_signed_windows (default 0);
/// tcp_connect_init and tcp_openreq_init_rwin then set rcv_ssthresh to it.
const RCV_SSTHRESH_INIT: u64 = 65_535;
/// A bound on scheduler decisions per wake-up, against a scheduler that keeps choosing a
/// subflow that cannot take data.
const MAX_DECISIONS: usize = 4096;

/// The subflows' TCP endpoints, lent to the connection for one call. A subflow is named by the
/// handle it was built with (`Subflow::flow`); the packets its endpoints produce go into the
/// output buffer lent with them, which the lender sends on a `Effect::Push` (after stamping each
/// with `Connection::stamp`).
pub trait SubflowIo {
    /// Subflow `sf`'s sender.
    fn sender(&self, sf: u16) -> &TcpSender;
    /// Subflow `sf`'s sender and the output buffer.
    fn sender_out(&mut self, sf: u16) -> (&mut TcpSender, &mut Vec<Packet>);
    /// Subflow `sf`'s receiver and the output buffer.
    fn receiver_out(&mut self, sf: u16) -> (&mut TcpReceiver, &mut Vec<Packet>);
    /// The interface subflow `sf`'s data leaves on is up (no blockage or outage).
    fn link_up(&self, sf: u16) -> bool;
}

/// The connection's timers, each an event of its own for whoever runs it (`Effect::Timer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// The application's next write (`on_app_tick`).
    App,
    /// The application stops (`on_app_stop`).
    Stop,
    /// The scheduler's own tick (`on_sched_tick`).
    Sched,
    /// An MP_PRIO change is due (`on_prio`).
    Prio,
    /// Subflow `flow`'s handshake is due or timed out (`on_join_timer`).
    Join(u16),
    /// Upstream's connection-level retransmission timer (`on_rtx_timer`).
    Rtx,
    /// The path-manager policy's start or its own timer (`on_pm_timer`).
    Pm,
}

/// What the connection asks of whoever runs it, in the order it must happen.
#[derive(Debug, Clone, Copy)]
pub enum Effect {
    /// Call the timer's handler at `at`.
    Timer(Time, Timer),
    /// Put this handshake segment on its route now (it bypasses the endpoints).
    Send(Packet),
    /// Data was handed to the subflows: send what is in the output buffer, arm every subflow's
    /// timers, then call `after_push` (and arm the retransmission timer it may return).
    Push,
    /// The path manager opens a subflow on this path (the runner's index) with this backup
    /// flag: build its endpoints and hand it over with `add_subflow`.
    NewSubflow { path: u16, backup: bool },
    /// The subflow whose endpoints are this handle was closed: whatever still reaches them is
    /// dropped (the kernel resets a destroyed subflow), and their timers no longer run.
    Closed(u16),
}

/// The sender's state just before a timer event, to see whether it was an RTO and to keep the
/// pre-loss window (MuSher/AMuSe restore it when the link comes back).
#[derive(Debug, Clone, Copy)]
struct SenderSnapshot {
    rtos: u64,
    cwnd: u32,
    ssthresh: u32,
    state: CaState,
}

impl SenderSnapshot {
    fn of(s: &TcpSender) -> Self {
        SenderSnapshot { rtos: s.stats.rtos, cwnd: s.w.cwnd, ssthresh: s.w.ssthresh, state: s.state }
    }
}

/// Per-subflow state the connection keeps (the subflow's TCP state is in its endpoints).
pub struct Subflow {
    /// The handle of the subflow's endpoints (`SubflowIo`; the simulation's internal flow).
    pub flow: u16,
    /// The path its data leaves on, and its MSS.
    pub path: u16,
    pub mss: u32,
    pub maps: MapQueue,
    pub established: bool,
    /// Closed by the path manager: no longer part of the connection.
    pub closed: bool,
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
    /// Upstream receiver: the subflow's rcv_ssthresh, the most window its ACKs may offer
    /// (__tcp_select_window), grown by the data it receives (tcp_grow_window; packets.rs).
    pub rcv_ssthresh: u64,
    /// Upstream with an autotuned buffer: the subflow's own receive buffer, which bounds its
    /// rcv_ssthresh (rcv_space.rs); None: it follows the connection's fixed one.
    pub rcvbuf: Option<SubflowRcvBuf>,
}

impl Subflow {
    /// A subflow on `path` whose endpoints are `flow`; the first one (MP_CAPABLE, done before
    /// the test starts, `start`) is established from the start, the others join.
    pub fn new(flow: u16, path: u16, mss: u32, first: bool, backup: bool, start: Time) -> Self {
        Subflow {
            flow,
            path,
            mss,
            maps: MapQueue::default(),
            established: first,
            closed: false,
            established_at: first.then_some(start),
            backup,
            pf: false,
            stale: false,
            stale_count: 0,
            last_ack: Time::ZERO,
            stale_stamp: Time::ZERO,
            hs_deadline: None,
            hs_rto: SYN_TIMEOUT,
            hs_sent_at: None,
            pre_loss: None,
            scanning: false,
            scheduled_bytes: 0,
            reinjected_bytes: 0,
            sndbuf: Default::default(),
            rcv_ssthresh: RCV_SSTHRESH_INIT,
            rcvbuf: None,
        }
    }

    /// Its transfer begins (tcp_init_transfer -> tcp_init_buffer_space): its own receive
    /// buffer, if it has one, takes its first measure (rcv_space.rs).
    pub fn begin_rcvbuf(&mut self) {
        if let Some(b) = self.rcvbuf.as_mut() {
            b.begin(self.rcv_ssthresh);
        }
    }

    /// The timeline's sf_state code (see trace.rs).
    pub fn state_code(&self) -> i8 {
        if self.closed {
            5
        } else if !self.established {
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
pub struct ConnStats {
    pub reinjections: u64,
    pub reinjected_bytes: u64,
    pub penalizations: u64,
    pub opportunistic_retransmits: u64,
    pub redundant_bytes: u64,
    pub decisions: u64,
    pub waits: u64,
}

/// What a connection is, fixed when it is built (the scenario flow's MPTCP fields).
#[derive(Debug, Clone)]
pub struct ConnInfo {
    pub name: String,
    pub kernel: Kernel,
    pub mode: MptcpMode,
    pub coupled: CoupledName,
    pub cc: CcKind,
    pub app_kind: AppKind,
    pub direction: Direction,
    pub start: Time,
    pub stop: Time,
    /// The host kernel's tick and timer wheel: when the connection's retransmission timer fires.
    pub wheel: TimerWheel,
}

/// What a connection is built from (the scenario flow, sim/mptcp/build.rs).
pub struct ConnCfg {
    /// The scenario flow it is.
    pub owner: u16,
    pub info: ConnInfo,
    pub sched: Box<dyn Scheduler>,
    pub app: App,
    /// The run's end (the delivery bins' extent).
    pub end: Time,
    /// The width of a delivery bin (intervals.csv).
    pub interval: Time,
    /// The connection-level receive window (RFC 8684 3.3.5), its largest.
    pub rcv_window: u64,
    /// An autotuned receive buffer (linux-upstream, `rcvbuf = "auto"`): where the window
    /// starts and how it grows; None: `rcv_window` throughout.
    pub rcv_space: Option<RcvSpace>,
    /// The send buffer given (SO_SNDBUF or v0.9x's `tcp_wmem[2]`), and how it is sized.
    pub sndbuf: u64,
    pub sndbuf_rule: ConnSndbuf,
    /// MP_PRIO changes: (time, subflow, backup).
    pub prio: Vec<(Time, usize, bool)>,
    /// Coupled congestion control: the coupling the subflows' controllers borrow (built with
    /// them, mptcp/coupled.rs); None when uncoupled.
    pub coupling: Option<Box<Coupling>>,
    /// A userspace path-manager policy; None: the in-kernel path manager (no decisions).
    pub pm: Option<PmSetup>,
}

pub struct Connection {
    /// The scenario flow it is.
    pub owner: u16,
    pub info: ConnInfo,
    pub subs: Vec<Subflow>,
    pub sched: Box<dyn Scheduler>,
    pub app: App,
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
    pub sndbuf_rule: ConnSndbuf,
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
    /// The SOCK_NOSPACE flag last given to every subflow's sender (schedule.rs
    /// `sync_writer_blocked`); None before the first push.
    writer_blocked: Option<bool>,
    pub delivered_bytes: u64,
    pub goodput_bytes: u64,
    pub bins: Bins,
    pub stats: ConnStats,
    tick_at: Option<Time>,
    /// Upstream's connection-level retransmission timer (stale.rs): its deadline, and the time
    /// of the one timer event asked for it.
    rtx_at: Option<Time>,
    rtx_event: Option<Time>,
    /// msk->timer_ival, in jiffies: what the timer is re-armed with, set by the last scheduling
    /// pass (stale.rs `set_timeout`), not recomputed at each re-arm.
    timer_ival: u64,
    /// The kernel's write_seq: the data the application has written into the send buffer
    /// (stale.rs `writer_wake`). Written but not yet handed to a subflow is the kernel's
    /// pending data (mptcp_send_head).
    written: u64,
    /// One of the kernel's push points ran (stale.rs): the next `push` is a scheduling
    /// pass (mptcp_subflow_get_send) if written data is pending.
    pass_due: bool,
    /// The ACK `on_ack` took acknowledged data on its subflow (its queue shrank), for
    /// `after_ack`.
    queue_shrunk: bool,
    /// The last `push` was a scheduling pass (read by `after_push`).
    pushed_pass: bool,
    /// MP_PRIO changes still to come: (time, subflow, backup).
    prio: Vec<(Time, usize, bool)>,
    /// A bytes-limited transfer has been written completely (its tail may be sub-MSS).
    app_done: bool,
    /// New data chunks in DSN order: (end DSN, subflow that first carried it); the front is
    /// the head-of-line chunk once data ACKs pop what they cover.
    carriers: std::collections::VecDeque<(u64, u8)>,
    /// What the last call asks of whoever runs the connection, in order (`take_effects`).
    effects: Vec<Effect>,
    /// The coupled congestion control's one object for the connection, lent to a subflow's
    /// controller for each call into its sender (`with_sender`); None when uncoupled.
    coupling: Option<Box<Coupling>>,
    /// The path-manager policy and its state (pm.rs); None: the in-kernel path manager.
    pm: Option<Box<pm::PmState>>,
    /// The receive buffer's autotuning (rcv_space.rs); None: a fixed buffer.
    rcv_space: Option<RcvSpace>,
}

impl Connection {
    pub fn new(cfg: ConnCfg, mut subs: Vec<Subflow>) -> Self {
        for st in &mut subs {
            st.rcvbuf = cfg.rcv_space.as_ref().map(|r| r.subflow_buffer(st.mss));
            // MP_CAPABLE's subflow was established before the test (`Subflow::new`).
            if st.established {
                st.begin_rcvbuf();
            }
        }
        let pacing_in_views = cfg.sched.reads_pacing_rate();
        let rcv_window = cfg.rcv_space.as_ref().map_or(cfg.rcv_window, RcvSpace::window);
        let rx = match cfg.info.kernel {
            Kernel::Upstream => Reassembly::new(rcv_window).with_edge_on_ack(),
            Kernel::V09x => Reassembly::new(rcv_window),
        };
        let rto_min_ticks = cfg.info.wheel.ticks(stale::TCP_RTO_MIN);
        Connection {
            owner: cfg.owner,
            info: cfg.info,
            sched: cfg.sched,
            subs,
            app: cfg.app,
            data_limit: 0,
            data_nxt: 0,
            data_una: 0,
            peer_right: rcv_window,
            sndbuf: cfg.sndbuf_rule.initial(cfg.sndbuf),
            sndbuf_rule: cfg.sndbuf_rule,
            reinject: ReinjectQueue::default(),
            rx,
            old_wspace: rcv_window,
            views: Vec::with_capacity(8),
            pacing_in_views,
            actions: Vec::with_capacity(8),
            writer_blocked: None,
            delivered_bytes: 0,
            goodput_bytes: 0,
            bins: Bins::new(cfg.interval.ns(), cfg.end.ns()),
            stats: ConnStats::default(),
            tick_at: None,
            rtx_at: None,
            rtx_event: None,
            timer_ival: rto_min_ticks,
            written: 0,
            pass_due: false,
            queue_shrunk: false,
            pushed_pass: false,
            prio: cfg.prio,
            app_done: false,
            carriers: std::collections::VecDeque::with_capacity(1024),
            effects: Vec::with_capacity(8),
            coupling: cfg.coupling,
            pm: cfg.pm.map(|p| Box::new(pm::PmState::new(p))),
            rcv_space: cfg.rcv_space,
        }
    }

    /// Runs `f` on subflow `j`'s sender, with the coupling lent to its controller for the call
    /// (coupled congestion control): every call into a subflow's sender that may reach its
    /// congestion control goes through here (ACKs, timers, sending, a restored window).
    fn with_sender<R>(
        &mut self,
        j: usize,
        io: &mut impl SubflowIo,
        f: impl FnOnce(&mut TcpSender, &mut Vec<Packet>) -> R,
    ) -> R {
        let (s, out) = io.sender_out(self.subs[j].flow);
        let coupled = self.coupling.is_some();
        if coupled {
            coupled::lend(s.cc_mut(), &mut self.coupling);
        }
        let r = f(s, out);
        if coupled {
            coupled::lend(s.cc_mut(), &mut self.coupling);
        }
        r
    }

    /// What the connection asked for since the effects were last taken, in order. Give the
    /// buffer back with `restore_effects` once they are carried out (no allocation per call).
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// Returns the buffer `take_effects` gave, emptied.
    pub fn restore_effects(&mut self, mut fx: Vec<Effect>) {
        debug_assert!(self.effects.is_empty(), "nothing asks while the effects are carried out");
        fx.clear();
        self.effects = fx;
    }

    /// The subflow whose endpoints are `flow`.
    pub fn subflow_of(&self, flow: u16) -> Option<usize> {
        self.subs.iter().position(|st| st.flow == flow)
    }
}
