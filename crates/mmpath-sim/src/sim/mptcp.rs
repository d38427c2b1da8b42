//! MPTCP in the simulation: a connection per scenario flow of kind "mptcp", one TCP subflow per
//! path (each an internal `Flow` with its own sender, receiver and route), and the glue that
//! moves data between them:
//!
//! - sending: the application writes into the connection; the scheduler picks a subflow for
//!   each chunk, which is appended to that subflow's send queue and mapped to data sequence
//!   numbers (`MapQueue`); every data segment leaving a subflow is stamped with its DSN;
//! - receiving: every data segment's DSN range goes into the connection's reassembly buffer
//!   (`Reassembly`); ACKs carry the data ACK and the connection-level window back;
//! - failures: an RTO marks the subflow pf (linux-v0.9x) or, after stale_loss_cnt fruitless
//!   timeouts, stale (linux-upstream), and its outstanding data is reinjected on the others;
//! - path manager: MP_CAPABLE is done before t = 0 (iperf3 starts its clock once connected);
//!   every other subflow does its MP_JOIN handshake on its own path from the flow's start,
//!   retrying with TCP's SYN timeout (1 s, doubling) when a step is lost.

use super::{routes, Ev, Flow, FlowCounters, Hop, PathState, Simulation, INTERVAL};
use crate::app::{App, RATE_TICK};
use crate::mptcp::conn::{MapQueue, Reassembly, ReinjectQueue};
use crate::mptcp::sched::{self, ConnView, LinkEvent, SchedAction, SchedKind, Scheduler, SubflowView};
use crate::packet::{Kind, Packet, Way, DSS_ACK_BYTES, DSS_DATA_BYTES, SYN_BYTES, TCP_HEADER_BYTES};
use crate::scenario::{
    AppKind, BufSize, CcKind, CoupledName, Direction, FlowKind, Kernel, MptcpMode, Scenario, SchedName, SubflowLayout,
};
use crate::tcp::cc::{self, CaState, CongestionControl, INFINITE_SSTHRESH};
use crate::tcp::receiver::{ReceiverCfg, TcpReceiver};
use crate::tcp::sender::{SenderCfg, TcpSender};
use crate::time::Time;
use crate::trace::{Bins, TimelineRow};
use serde_json::{json, Value};

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
    stale_una: u64,
    /// Handshake retransmission deadline and current timeout.
    hs_deadline: Option<Time>,
    hs_rto: Time,
    /// cwnd and ssthresh before the RTO that started the current loss episode.
    pre_loss: Option<(u32, u32)>,
    pub scanning: bool,
    pub scheduled_bytes: u64,
    pub reinjected_bytes: u64,
    pub established_at: Option<Time>,
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
    pub sndbuf: u64,
    pub reinject: ReinjectQueue,
    pub rx: Reassembly,
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
    /// MP_PRIO changes still to come: (time, subflow, backup).
    prio: Vec<(Time, usize, bool)>,
    /// A bytes-limited transfer has been written completely (its tail may be sub-MSS).
    app_done: bool,
    /// New data chunks in DSN order: (end DSN, subflow that first carried it); the front is
    /// the head-of-line chunk once data ACKs pop what they cover.
    carriers: std::collections::VecDeque<(u64, u8)>,
}

fn sched_kind(f: &crate::scenario::FlowCfg) -> SchedKind {
    let ratio = f.ratio.unwrap_or(50);
    match f.scheduler.unwrap_or(SchedName::Default) {
        SchedName::Default | SchedName::Upstream => SchedKind::Default,
        SchedName::Minrtt => SchedKind::MinRtt,
        SchedName::Roundrobin => SchedKind::RoundRobin,
        SchedName::Redundant => SchedKind::Redundant,
        SchedName::Blest => SchedKind::Blest,
        SchedName::Ecf => SchedKind::Ecf,
        SchedName::Fixedratio => SchedKind::FixedRatio { ratio },
        SchedName::Musher => SchedKind::MuSher { initial_ratio: ratio },
        SchedName::Amuse => {
            let a = f.amuse.unwrap_or_default();
            SchedKind::AMuSe { initial_ratio: ratio, scan: a.scan, contention: a.contention, blockage: a.blockage }
        }
        SchedName::Energy => {
            let uplink = f.direction == Direction::Upload;
            let m = f.max_rates_mbps.as_deref().unwrap_or(sched::energy::default_max_rates_mbps(uplink));
            SchedKind::Energy { initial_ratio: f.ratio, max_mbps: [m[0], m[1]], uplink }
        }
    }
}

/// The (client address, server address) pairs a connection opens subflows between, as indices
/// into its paths: the per-path ones first (in path order, the first carrying MP_CAPABLE), then
/// for an address mesh the crossed ones, in the order the v0.9x fullmesh path manager walks its
/// local then remote addresses (full_mesh_create_subflows).
fn address_pairs(n: usize, layout: SubflowLayout) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = (0..n).map(|k| (k, k)).collect();
    if layout == SubflowLayout::AddressMesh {
        for a in 0..n {
            v.extend((0..n).filter(|&b| b != a).map(|b| (a, b)));
        }
    }
    v
}

/// A crossed subflow's routes (no backbone: the AP is the server): the data on `data` path's
/// hop in the data's direction, the ACKs on `ack` path's hop back.
fn crossed_routes(data: [Hop; 2], ack: [Hop; 2], dir: Direction) -> ([Hop; 2], [Hop; 2], u8) {
    let ([data_down, data_up], [ack_down, ack_up]) = (data, ack);
    match dir {
        Direction::Upload => ([data_up, data_up], [ack_down, ack_down], 1),
        Direction::Download => ([data_down, data_down], [ack_up, ack_up], 1),
    }
}

/// Builds scenario flow `i` as connection `c`, appending its subflows to `flows`.
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    sc: &Scenario,
    i: usize,
    c: u16,
    paths: &[PathState],
    bb_links: Option<(u16, u16)>,
    flows: &mut Vec<Flow>,
    end: Time,
    seed: u64,
) -> MpConn {
    let f = &sc.flow[i];
    let t = &f.tcp;
    let names = f.paths.clone().unwrap_or_default();
    let backups = f.backup_paths.clone().unwrap_or_default();
    let pairs = address_pairs(names.len(), f.subflows.unwrap_or(SubflowLayout::PerPath));
    let cc_kind = f.cc.unwrap_or(CcKind::Cubic);
    let coupled = f.coupled.unwrap_or(CoupledName::Uncoupled);
    let mut ccs: Vec<Box<dyn CongestionControl>> = match coupled {
        // Each subflow's controller gets its own random stream (BBR's ProbeBW start phase),
        // labelled by the internal flow it will be.
        CoupledName::Uncoupled => {
            (0..pairs.len()).map(|j| cc::build_seeded(cc_kind, t, seed, (flows.len() + j) as u16)).collect()
        }
        CoupledName::Lia => sched::coupled::build(sched::coupled::CoupledKind::Lia, pairs.len()),
        CoupledName::Olia => sched::coupled::build(sched::coupled::CoupledKind::Olia, pairs.len()),
        CoupledName::Balia => sched::coupled::build(sched::coupled::CoupledKind::Balia, pairs.len()),
    };
    // The connection's buffers. Receive: SO_RCVBUF as given, or the ceiling Linux's
    // autotuning reaches (half of tcp_rmem[2] is window, as for a single TCP socket). Send:
    // SO_SNDBUF as given, or tcp_wmem[2].
    let rcv_window = match t.rcvbuf_bytes {
        BufSize::Bytes(b) => b,
        BufSize::Auto => t.rmem_max() / 2,
    };
    let sndbuf = match t.sndbuf_bytes {
        BufSize::Bytes(b) => b,
        BufSize::Auto => t.wmem_max(),
    };
    let start = Time::from_secs_f64(f.start_s);
    let stop = Time::from_secs_f64(f.stop_s.unwrap_or(sc.duration_s)).min(end);
    let mut subs = Vec::new();
    let index = |k: usize| paths.iter().position(|p| p.name == names[k]).unwrap_or(0);
    for (j, &(ck, sk)) in pairs.iter().enumerate() {
        let (cp, sp) = (index(ck), index(sk));
        // Source-address routing: the data leaves on its sender's address's path, the ACKs on
        // the receiver's (the same path for a per-path subflow).
        let (data_pi, ack_pi) = if f.direction == Direction::Upload { (cp, sp) } else { (sp, cp) };
        let (fwd, rev, hops) = if cp == sp {
            routes(bb_links, paths[cp].hops, f.direction)
        } else {
            crossed_routes(paths[data_pi].hops, paths[ack_pi].hops, f.direction)
        };
        // Each end announces the MSS of the path its SYN leaves on, and sends no more than the
        // peer announced (tcp_mss_clamp): a crossed subflow gets the smaller path's. The DSS
        // option takes its room out of every segment's payload.
        let mtu = sc.path_mtu(&names[ck]).min(sc.path_mtu(&names[sk]));
        let mss = mtu - TCP_HEADER_BYTES - DSS_DATA_BYTES;
        let pi = data_pi;
        let fi = flows.len() as u16;
        let mut sender = TcpSender::new(SenderCfg {
            flow: fi,
            mss,
            initial_cwnd: t.initial_cwnd,
            min_rto: Time::from_ms_f64(t.min_rto_ms),
            // The connection's send buffer limits what is scheduled; the subflow holds only
            // what it was given.
            sndbuf: BufSize::Bytes(1 << 40),
            wmem_max: 1 << 40,
            cc: ccs.remove(0),
            pacing: t.pacing,
        });
        sender.apply_sysctls(t);
        // Subflows advertise the connection's window (RFC 8684 3.3.5): no subflow-level
        // limit beyond it.
        let receiver = TcpReceiver::new(ReceiverCfg {
            flow: fi,
            mss,
            rcvbuf: BufSize::Bytes(rcv_window.max(2 * mss as u64)),
            rmem_max: t.rmem_max(),
            delayed_ack: t.delayed_ack,
        });
        let label = if ck == sk { names[ck].clone() } else { format!("{}>{}", names[ck], names[sk]) };
        flows.push(Flow {
            name: format!("{}/{}", f.name.clone().unwrap_or_default(), label),
            owner: i as u16,
            conn: Some((c, j as u8)),
            kind: FlowKind::Tcp,
            app_kind: AppKind::Bulk,
            direction: f.direction,
            path: pi as u16,
            ack_path: ack_pi as u16,
            route_fwd: fwd,
            route_rev: rev,
            hops,
            start,
            stop,
            app: App::Bulk { bytes: Some(0) },
            mss,
            sender: Some(sender),
            receiver: Some(receiver),
            sender_timer: None,
            receiver_timer: None,
            counters: FlowCounters::default(),
            bins: Bins::new(INTERVAL.ns(), end.ns()),
        });
        subs.push(SubState {
            flow: fi,
            maps: MapQueue::default(),
            // MP_CAPABLE on the first path completed before the test started.
            established: j == 0,
            established_at: (j == 0).then_some(start),
            // v0.9x treats a subflow as backup if either end flagged it (low_prio or
            // rcv_low_prio, mptcp_sched.c): a crossed subflow touching a backup address is one.
            backup: backups.contains(&names[ck]) || backups.contains(&names[sk]),
            pf: false,
            stale: false,
            stale_count: 0,
            stale_una: 0,
            hs_deadline: None,
            hs_rto: SYN_TIMEOUT,
            pre_loss: None,
            scanning: false,
            scheduled_bytes: 0,
            reinjected_bytes: 0,
        });
    }
    let app_kind = f.app.unwrap_or(AppKind::Bulk);
    // An MP_PRIO for an address applies to every subflow with an end on it.
    let prio = f
        .prio
        .iter()
        .flat_map(|p| {
            let k = names.iter().position(|n| n == &p.path).unwrap_or(0);
            let t = Time::from_secs_f64(p.t_s);
            pairs.iter().enumerate().filter(move |(_, &(a, b))| a == k || b == k).map(move |(j, _)| (t, j, p.backup))
        })
        .collect();
    let sched = sched::build(&sched_kind(f));
    let pacing_in_views = sched.reads_pacing_rate();
    MpConn {
        owner: i as u16,
        name: f.name.clone().unwrap_or_default(),
        kernel: f.kernel.unwrap_or(Kernel::Upstream),
        mode: f.mode.unwrap_or(MptcpMode::Fullmesh),
        coupled,
        cc: cc_kind,
        sched,
        subs,
        app: App::new(app_kind, f.rate_mbps, f.bytes, 0),
        app_kind,
        direction: f.direction,
        start,
        stop,
        data_limit: 0,
        data_nxt: 0,
        data_una: 0,
        peer_right: rcv_window,
        sndbuf,
        reinject: ReinjectQueue::default(),
        rx: Reassembly::new(rcv_window),
        views: Vec::with_capacity(8),
        pacing_in_views,
        actions: Vec::with_capacity(8),
        delivered_bytes: 0,
        goodput_bytes: 0,
        bins: Bins::new(INTERVAL.ns(), end.ns()),
        stats: ConnStats::default(),
        tick_at: None,
        prio,
        app_done: false,
        carriers: std::collections::VecDeque::with_capacity(1024),
    }
}

impl Simulation {
    /// Replaces the scheduler of MPTCP flow `flow` (its name) before the run starts: how a
    /// scheduler written outside the core (mmpath-py's Python schedulers) gets in.
    pub fn set_scheduler(&mut self, flow: &str, sched: Box<dyn Scheduler>) -> Result<(), String> {
        if self.now() > Time::ZERO {
            return Err("a scheduler can only be set before the run starts".into());
        }
        let Some(c) = self.conns.iter().position(|c| c.name == flow) else {
            let names: Vec<&str> = self.conns.iter().map(|c| c.name.as_str()).collect();
            return Err(format!(
                "no MPTCP flow named {flow:?} (MPTCP flows: {})",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ));
        };
        let cn = &mut self.conns[c];
        cn.sched = sched;
        cn.pacing_in_views = cn.sched.reads_pacing_rate();
        // The first tick was scheduled for the scenario's scheduler; follow the new one's.
        cn.tick_at = cn.sched.next_tick(cn.start);
        if let Some(t) = cn.tick_at {
            self.q.schedule(t, Ev::SchedTick(c as u16));
        }
        Ok(())
    }

    /// The connection's first events: its application, its joins, MP_PRIO changes, ticks.
    pub(super) fn schedule_conn(&mut self, c: u16) {
        let cn = &self.conns[c as usize];
        let (start, stop) = (cn.start, cn.stop);
        self.q.schedule(start, Ev::ConnTick(c));
        self.q.schedule(stop, Ev::ConnStop(c));
        for st in cn.subs.iter().skip(1) {
            self.q.schedule(start, Ev::JoinTimer(st.flow));
        }
        for &(t, _, _) in &cn.prio {
            self.q.schedule(t, Ev::Prio(c));
        }
        if let Some(t) = cn.sched.next_tick(start) {
            self.conns[c as usize].tick_at = Some(t);
            self.q.schedule(t, Ev::SchedTick(c));
        }
    }

    // ----- application -----

    pub(super) fn conn_app_tick(&mut self, now: Time, c: u16) {
        let cn = &mut self.conns[c as usize];
        if now >= cn.stop {
            return;
        }
        match &mut cn.app {
            App::Bulk { bytes } => {
                cn.data_limit = bytes.unwrap_or(u64::MAX);
                cn.app_done = bytes.is_some();
            }
            App::Rate { rate_bps, bytes, written, ticks } => {
                *ticks += 1;
                *written = App::rate_written(*rate_bps, *ticks, *bytes);
                cn.data_limit = *written;
                let done = bytes.is_some_and(|b| *written >= b);
                cn.app_done = done;
                let next = cn.start + Time(RATE_TICK.ns() * *ticks);
                if !done && next < cn.stop {
                    self.q.schedule(next, Ev::ConnTick(c));
                }
            }
            App::Cbr { .. } => unreachable!("validated: MPTCP flows take bulk or rate"),
        }
        self.conn_push(now, c);
    }

    /// iperf3 -t ends: no new data; what was written and not yet scheduled is dropped, as a
    /// TCP socket's unsent data is when the test ends.
    pub(super) fn conn_app_stop(&mut self, _now: Time, c: u16) {
        let cn = &mut self.conns[c as usize];
        cn.data_limit = cn.data_limit.min(cn.data_nxt);
        cn.app_done = true;
    }

    // ----- views -----

    fn fill_views(&mut self, c: u16) {
        let mut views = std::mem::take(&mut self.conns[c as usize].views);
        views.clear();
        for j in 0..self.conns[c as usize].subs.len() {
            views.push(self.view_of(c, j));
        }
        self.conns[c as usize].views = views;
    }

    /// Refreshes subflow `j`'s view only: after an assignment to `j` with no scheduler actions,
    /// nothing else in the connection changed (the views stay as `fill_views` would make them).
    fn refresh_view(&mut self, c: u16, j: usize) {
        let v = self.view_of(c, j);
        self.conns[c as usize].views[j] = v;
    }

    /// What the scheduler sees of subflow `j`.
    fn view_of(&self, c: u16, j: usize) -> SubflowView {
        let cn = &self.conns[c as usize];
        let st = &cn.subs[j];
        let f = &self.flows[st.flow as usize];
        let s = f.sender.as_ref().expect("subflows are TCP");
        SubflowView {
            id: j,
            path: f.path,
            established: st.established,
            backup: st.backup,
            pf: st.pf,
            stale: st.stale,
            in_loss: s.state == CaState::Loss,
            cwnd: s.w.cwnd,
            ssthresh: s.w.ssthresh,
            in_flight: s.in_flight(),
            queued_bytes: s.app_limit() - s.snd_nxt,
            unacked_bytes: s.snd_nxt - s.snd_una,
            mss: s.mss(),
            srtt_ns: s.rtt.srtt().map_or(0, |t| t.ns()),
            rttvar_ns: s.rtt.srtt().map_or(0, |_| s.rtt.rttvar().ns()),
            pacing_rate_bps: if cn.pacing_in_views { s.stack_pacing_rate_bps() } else { 0 },
            delivered_bytes: s.snd_una,
            link_up: self.hop_up(f.route_fwd[f.hops as usize - 1]),
            scanning: st.scanning,
            throttled: s.tsq_throttled(),
        }
    }

    fn conn_view(&self, c: u16) -> ConnView {
        let cn = &self.conns[c as usize];
        let in_flight = cn.data_nxt - cn.data_una.min(cn.data_nxt);
        let window_free = cn.peer_right.saturating_sub(cn.data_nxt);
        let sndbuf_free = cn.sndbuf.saturating_sub(in_flight);
        // The subflow that first carried the oldest un-data-ACKed byte (v0.9x: the head of the
        // meta write queue's path_mask).
        let hol = cn.carriers.front().map(|&(_, j)| j as usize);
        ConnView {
            unassigned_bytes: cn.data_limit.saturating_sub(cn.data_nxt),
            send_window_free_bytes: window_free,
            data_in_flight_bytes: in_flight,
            reinjecting: !cn.reinject.is_empty(),
            data_acked_bytes: cn.data_una,
            sndbuf_free_bytes: sndbuf_free,
            hol_subflow: hol,
        }
    }

    // ----- scheduling -----

    /// Hands connection data to subflows while the scheduler keeps choosing one.
    pub(super) fn conn_push(&mut self, now: Time, c: u16) {
        let mut retried = false;
        // The subflow the last decision assigned to, when that was all that changed.
        let mut only: Option<usize> = None;
        for _ in 0..MAX_DECISIONS {
            let view = self.conn_view(c);
            let has_new = view.unassigned_bytes > 0;
            if !has_new && !view.reinjecting {
                break;
            }
            match only.take() {
                Some(j) => self.refresh_view(c, j),
                None => self.fill_views(c),
            }
            let cn = &mut self.conns[c as usize];
            let pick = cn.sched.select(now, &view, &cn.views, &mut cn.actions);
            // Usually no actions: checked here, without the call.
            let acted = !cn.actions.is_empty() && self.apply_actions(now, c);
            let Some(j) = pick else {
                self.conns[c as usize].stats.waits += 1;
                // The actions may have made room (a penalty, a retransmission): ask once more,
                // but not again and again while the scheduler keeps waiting.
                if acted && !retried {
                    retried = true;
                    continue;
                }
                break;
            };
            if !self.assign(now, c, j, &view) {
                break;
            }
            if !acted {
                only = Some(j);
            }
        }
        self.flush_conn(now, c);
    }

    /// Gives subflow `j` its next chunk: a reinjection if one is queued, else new data within
    /// the peer's window and the send buffer. False if nothing could be assigned.
    fn assign(&mut self, now: Time, c: u16, j: usize, view: &ConnView) -> bool {
        let cn = &mut self.conns[c as usize];
        let Some(v) = cn.views.get(j).copied() else { return false };
        let burst = cn.sched.burst_bytes(&v).max(v.mss as u64);
        let mss = v.mss as u64;
        let (dsn, len, reinjected) = if let Some((d, l)) = cn.reinject.pop(cn.data_una, burst) {
            (d, l, true)
        } else {
            let room = view.unassigned_bytes.min(view.send_window_free_bytes).min(view.sndbuf_free_bytes);
            let mut len = burst.min(room);
            let tail = cn.app_done && len == view.unassigned_bytes;
            if len < mss && !tail {
                // Only whole segments, so a segment never straddles two mappings.
                return false;
            }
            if !tail {
                len -= len % mss;
            }
            if len == 0 {
                return false;
            }
            let d = cn.data_nxt;
            cn.data_nxt += len;
            (d, len, false)
        };
        cn.stats.decisions += 1;
        if !reinjected {
            cn.carriers.push_back((dsn + len, j as u8));
        }
        if reinjected {
            cn.stats.reinjections += 1;
            cn.stats.reinjected_bytes += len;
            cn.subs[j].reinjected_bytes += len;
        }
        self.give(now, c, j, dsn, len);
        if self.conns[c as usize].sched.redundant() {
            // The redundant scheduler copies every chunk onto each other established, non-pf,
            // non-backup subflow (none when the original went to a backup), as
            // mptcp_redundant.c does. Deviation: only onto one with cwnd room now, so a slow
            // subflow's queue of copies stays bounded (the source drops stale copies later).
            let orig_backup = self.conns[c as usize].views[j].backup;
            for k in 0..self.conns[c as usize].views.len() {
                let w = self.conns[c as usize].views[k];
                if !orig_backup && k != j && w.established && !w.pf && !w.stale && !w.backup && w.has_cwnd_room() {
                    self.conns[c as usize].stats.redundant_bytes += len;
                    self.give(now, c, k, dsn, len);
                }
            }
        }
        true
    }

    /// Appends data [dsn, dsn + len) to subflow `j`'s send queue and lets it send.
    fn give(&mut self, now: Time, c: u16, j: usize, dsn: u64, len: u64) {
        let st = &mut self.conns[c as usize].subs[j];
        st.scheduled_bytes += len;
        let fi = st.flow as usize;
        let s = self.flows[fi].sender.as_mut().expect("tcp");
        let sseq = s.app_limit();
        if !st.maps.push(sseq, dsn, len) {
            s.mark_boundary(sseq);
        }
        s.set_app_limit(sseq + len);
        s.try_send(now, &mut self.out);
    }

    /// Applies the scheduler's requested side effects; true if any changed a subflow.
    fn apply_actions(&mut self, now: Time, c: u16) -> bool {
        if self.conns[c as usize].actions.is_empty() {
            return false;
        }
        let mut actions = std::mem::take(&mut self.conns[c as usize].actions);
        let any = !actions.is_empty();
        for a in actions.drain(..) {
            match a {
                SchedAction::Penalize(j) => self.penalize(c, j),
                SchedAction::ReinjectHeadOfLine(j) => self.reinject_hol(now, c, j),
                SchedAction::ClearPf(j) => {
                    if let Some(st) = self.conns[c as usize].subs.get_mut(j) {
                        st.pf = false;
                        st.stale = false;
                        st.stale_count = 0;
                    }
                }
                SchedAction::RestoreCwnd(j) => self.restore_cwnd(now, c, j),
                SchedAction::Reclaim(j) => self.reclaim(c, j),
            }
        }
        self.conns[c as usize].actions = actions;
        any
    }

    /// v0.9x mptcp_rcv_buf_optimization's penalty: halve the slow subflow's cwnd. How often
    /// is the scheduler's call: the source's only guard is per penalizing (fast) subflow, once
    /// per *its* RTT (`dsp->last_rbuf_opti`, net/mptcp/mptcp_sched.c); the slow subflow may be
    /// halved again within its own RTT (no per-slow-subflow guard since v0.90).
    fn penalize(&mut self, c: u16, j: usize) {
        let Some(st) = self.conns[c as usize].subs.get(j) else { return };
        let fi = st.flow as usize;
        let s = self.flows[fi].sender.as_mut().expect("tcp");
        // mptcp_rcv_buf_optimization: ssthresh follows only if cwnd was at or above it.
        let old = s.w.cwnd;
        s.w.cwnd = (old / 2).max(1);
        if old >= s.w.ssthresh && s.w.ssthresh != INFINITE_SSTHRESH {
            s.w.ssthresh = (s.w.ssthresh / 2).max(2);
        }
        let cn = &mut self.conns[c as usize];
        cn.stats.penalizations += 1;
    }

    /// Opportunistic retransmission: the head-of-line data goes out again on subflow `j`.
    fn reinject_hol(&mut self, now: Time, c: u16, j: usize) {
        let cn = &self.conns[c as usize];
        if cn.data_una >= cn.data_nxt || j >= cn.subs.len() {
            return;
        }
        // The chunk holding data_una, unless subflow j already carries it (v0.9x path_mask).
        let mut range = None;
        let mut on_j = false;
        for (k, st) in cn.subs.iter().enumerate() {
            let s = self.flows[st.flow as usize].sender.as_ref().expect("tcp");
            st.maps.for_each_range(s.snd_una, s.app_limit(), |d, l| {
                if d <= cn.data_una && cn.data_una < d + l {
                    on_j |= k == j;
                    if range.is_none() {
                        let mss = self.flows[cn.subs[j].flow as usize].mss as u64;
                        range = Some((cn.data_una, (d + l - cn.data_una).min(mss)));
                    }
                }
            });
        }
        let Some((d, l)) = range.filter(|_| !on_j) else { return };
        let cn = &mut self.conns[c as usize];
        cn.stats.opportunistic_retransmits += 1;
        cn.stats.reinjected_bytes += l;
        cn.subs[j].reinjected_bytes += l;
        self.give(now, c, j, d, l);
    }

    /// Puts the subflow's pre-loss window back and retransmits now instead of waiting for
    /// the backed-off RTO (MuSher's and AMuSe's blockage handling).
    fn restore_cwnd(&mut self, now: Time, c: u16, j: usize) {
        let Some(st) = self.conns[c as usize].subs.get_mut(j) else { return };
        let Some((cwnd, ssthresh)) = st.pre_loss.take() else { return };
        st.pf = false;
        let fi = st.flow as usize;
        let s = self.flows[fi].sender.as_mut().expect("tcp");
        s.restore_window(now, cwnd, ssthresh, &mut self.out);
    }

    /// Takes the subflow's unsent queue back to the connection (to be sent elsewhere first).
    fn reclaim(&mut self, c: u16, j: usize) {
        let cn = &mut self.conns[c as usize];
        let Some(st) = cn.subs.get_mut(j) else { return };
        let s = self.flows[st.flow as usize].sender.as_mut().expect("tcp");
        let nxt = s.snd_nxt;
        if s.app_limit() <= nxt {
            return;
        }
        let reinject = &mut cn.reinject;
        let mut back = 0;
        st.maps.truncate(nxt, |d, l| {
            reinject.push(d, l);
            back += l;
        });
        st.scheduled_bytes -= back.min(st.scheduled_bytes);
        s.drop_boundaries_from(nxt);
        s.set_app_limit(nxt);
    }

    /// Sends what the subflows produced and keeps their timers armed.
    fn flush_conn(&mut self, now: Time, c: u16) {
        self.flush(now);
        for j in 0..self.conns[c as usize].subs.len() {
            let f = self.conns[c as usize].subs[j].flow;
            self.arm_timers(f);
        }
    }

    // ----- packets -----

    /// Stamps DSS information on a packet leaving a subflow endpoint.
    pub(super) fn conn_stamp(&mut self, (c, j): (u16, u8), p: &mut Packet) {
        let cn = &self.conns[c as usize];
        match p.kind {
            Kind::Data => {
                let (dsn, covered) = cn.subs[j as usize].maps.dsn_of(p.seq).expect("every sent byte is mapped");
                assert!(covered >= p.len as u64, "a segment never straddles two mappings");
                p.dsn = dsn;
                p.size_bytes += DSS_DATA_BYTES;
            }
            Kind::Ack => {
                p.data_ack = cn.rx.data_ack;
                p.data_wnd = cn.rx.window();
                p.size_bytes += DSS_ACK_BYTES;
            }
            _ => {}
        }
    }

    pub(super) fn conn_on_data(&mut self, now: Time, (c, _j): (u16, u8), p: &Packet) {
        let cn = &mut self.conns[c as usize];
        let delivered = cn.rx.on_data(p.dsn, p.len as u64);
        if delivered > 0 {
            cn.bins.add(now.ns(), delivered);
            cn.delivered_bytes += delivered;
            if now >= cn.start && now <= cn.stop {
                cn.goodput_bytes += delivered;
            }
        }
    }

    pub(super) fn conn_on_ack(&mut self, now: Time, (c, j): (u16, u8), p: &Packet, prior_una: u64) {
        let cn = &mut self.conns[c as usize];
        if p.data_ack > cn.data_una {
            cn.data_una = p.data_ack.min(cn.data_nxt);
            while cn.carriers.front().is_some_and(|&(end, _)| end <= cn.data_una) {
                cn.carriers.pop_front();
            }
        }
        cn.peer_right = cn.peer_right.max(p.data_ack + p.data_wnd);
        let st = &mut cn.subs[j as usize];
        let s = self.flows[st.flow as usize].sender.as_ref().expect("tcp");
        let acked = s.snd_una - prior_una.min(s.snd_una);
        st.maps.prune(s.snd_una);
        // Anything from the peer revives a stale subflow (upstream); a valid ACK clears pf
        // (v0.9x tcp_ack).
        st.stale = false;
        st.stale_count = 0;
        if acked > 0 {
            st.pf = false;
            if s.state != CaState::Loss {
                st.pre_loss = None;
            }
        }
        if acked > 0 {
            cn.sched.on_ack(now, j as usize, acked);
        }
        let pi = self.flows[cn.subs[j as usize].flow as usize].path;
        if self.paths[pi as usize].scan_held.is_some() {
            self.start_held_scan(now, pi);
        }
        self.conn_push(now, c);
    }

    /// After a subflow's timer event: on an RTO, the kernel's failure handling.
    pub(super) fn conn_after_sender_timer(&mut self, now: Time, (c, j): (u16, u8), before: SenderSnapshot) {
        let cn = &mut self.conns[c as usize];
        let st = &mut cn.subs[j as usize];
        let fi = st.flow as usize;
        let s = self.flows[fi].sender.as_ref().expect("tcp");
        if s.stats.rtos == before.rtos {
            return;
        }
        if before.state != CaState::Loss && st.pre_loss.is_none() {
            st.pre_loss = Some((before.cwnd, before.ssthresh));
        }
        let (una, nxt) = (s.snd_una, s.snd_nxt);
        let others_ok = |subs: &[SubState]| {
            subs.iter().enumerate().any(|(k, o)| k != j as usize && o.established && !o.pf && !o.stale)
        };
        let reinject_now = match cn.kernel {
            // v0.9x tcp_retransmit_timer -> mptcp_reinject_data: pf = 1 and the subflow's
            // outstanding data goes back to the meta level at once.
            Kernel::V09x => {
                st.pf = true;
                true
            }
            // Upstream: mptcp_subflow_timeout / mptcp_pm_subflows_chk_stale: stale after
            // stale_loss_cnt timeouts without progress, if another subflow is usable.
            Kernel::Upstream => {
                if una == st.stale_una {
                    st.stale_count += 1;
                } else {
                    st.stale_count = 1;
                    st.stale_una = una;
                }
                if st.stale_count >= STALE_LOSS_CNT && others_ok(&cn.subs) {
                    cn.subs[j as usize].stale = true;
                    true
                } else {
                    false
                }
            }
        };
        if reinject_now && others_ok(&cn.subs) {
            let st = &cn.subs[j as usize];
            let reinject = &mut cn.reinject;
            st.maps.for_each_range(una, nxt, |d, l| reinject.push(d, l));
            self.reclaim(c, j as usize);
        }
        self.conns[c as usize].sched.on_rto(now, j as usize);
        self.conn_push(now, c);
    }

    // ----- link events, ticks, MP_PRIO -----

    pub(super) fn conn_link_event(&mut self, now: Time, pi: u16, ev: LinkEvent) {
        for c in 0..self.conns.len() {
            for j in 0..self.conns[c].subs.len() {
                let f = self.conns[c].subs[j].flow as usize;
                if self.flows[f].path != pi {
                    continue;
                }
                match ev {
                    LinkEvent::ScanStart => self.conns[c].subs[j].scanning = true,
                    LinkEvent::ScanEnd => self.conns[c].subs[j].scanning = false,
                    _ => {}
                }
                let c16 = c as u16;
                let view = self.conn_view(c16);
                self.fill_views(c16);
                let cn = &mut self.conns[c];
                let mut actions = std::mem::take(&mut cn.actions);
                cn.sched.on_link_event(now, j, ev, &view, &cn.views, &mut actions);
                cn.actions = actions;
                self.apply_actions(now, c16);
                self.conn_push(now, c16);
            }
        }
    }

    pub(super) fn conn_sched_tick(&mut self, now: Time, c: u16) {
        if self.conns[c as usize].tick_at != Some(now) {
            return;
        }
        let view = self.conn_view(c);
        self.fill_views(c);
        let cn = &mut self.conns[c as usize];
        let mut actions = std::mem::take(&mut cn.actions);
        cn.sched.on_tick(now, &view, &cn.views, &mut actions);
        cn.actions = actions;
        cn.tick_at = cn.sched.next_tick(now).filter(|&t| t > now);
        if let Some(t) = cn.tick_at {
            self.q.schedule(t, Ev::SchedTick(c));
        }
        self.apply_actions(now, c);
        self.conn_push(now, c);
    }

    pub(super) fn conn_prio(&mut self, now: Time, c: u16) {
        let cn = &mut self.conns[c as usize];
        for &(t, j, b) in &cn.prio {
            if t == now {
                cn.subs[j].backup = b;
            }
        }
        self.conn_push(now, c);
    }

    /// The subflow's handshake is due (at the start) or timed out: send (again) its SYN.
    pub(super) fn join_timer(&mut self, now: Time, f: u16) {
        let Some((c, j)) = self.flows[f as usize].conn else { return };
        let st = &mut self.conns[c as usize].subs[j as usize];
        if st.established {
            return;
        }
        match st.hs_deadline {
            Some(d) if now < d => return,
            Some(_) => st.hs_rto = Time(st.hs_rto.ns() * 2),
            None => {}
        }
        let d = now + st.hs_rto;
        st.hs_deadline = Some(d);
        self.q.schedule(d, Ev::JoinTimer(f));
        let client_to_server = self.client_to_server(f);
        self.send_handshake(now, f, 0, client_to_server);
    }

    /// The way along the subflow's route from the client to the server.
    fn client_to_server(&self, f: u16) -> Way {
        match self.flows[f as usize].direction {
            Direction::Download => Way::Reverse,
            Direction::Upload => Way::Forward,
        }
    }

    fn send_handshake(&mut self, now: Time, f: u16, step: u64, way: Way) {
        let mut p = Packet::empty(f, Kind::Syn, way);
        p.seq = step;
        p.size_bytes = SYN_BYTES;
        self.send(now, p);
    }

    /// A handshake segment reached its end: answer it, or, at the data sender, the subflow
    /// is established. MP_JOIN: SYN, SYN/ACK, ACK; the server may send once it has the third
    /// segment; the client only after the server's ACK of it (RFC 8684 3.2, "the fourth ACK").
    pub(super) fn on_handshake(&mut self, now: Time, p: &Packet) {
        let f = p.flow;
        let Some((c, j)) = self.flows[f as usize].conn else { return };
        let c2s = self.client_to_server(f);
        let last = match self.flows[f as usize].direction {
            Direction::Download => 2,
            Direction::Upload => 3,
        };
        if p.seq >= last {
            let st = &mut self.conns[c as usize].subs[j as usize];
            if !st.established {
                st.established = true;
                st.established_at = Some(now);
                st.hs_deadline = None;
                self.conn_push(now, c);
            }
            return;
        }
        let back = if p.way == c2s {
            if c2s == Way::Forward {
                Way::Reverse
            } else {
                Way::Forward
            }
        } else {
            c2s
        };
        self.send_handshake(now, f, p.seq + 1, back);
    }

    // ----- outputs -----

    /// The connection's timeline row (subflow -1): its delivered bytes, reorder buffer and
    /// scheduler state.
    pub(super) fn conn_row(&self, now: Time, c: usize) -> TimelineRow {
        let cn = &self.conns[c];
        TimelineRow {
            t_s: now.secs_f64(),
            flow: cn.owner as i32,
            path: -1,
            cwnd_bytes: f64::NAN,
            ssthresh_bytes: f64::NAN,
            srtt_ms: f64::NAN,
            rttvar_ms: f64::NAN,
            in_flight_bytes: (cn.data_nxt - cn.data_una.min(cn.data_nxt)) as f64,
            rwnd_bytes: cn.rx.window().saturating_sub(cn.rx.ooo_bytes) as f64,
            cc_state: -1,
            queue_bytes: cn.rx.ooo_bytes as f64,
            phy_rate_mbps: f64::NAN,
            mcs: f64::NAN,
            rssi_dbm: f64::NAN,
            snr_db: f64::NAN,
            link_up: true,
            delivered_bytes: cn.delivered_bytes,
            retransmits: cn.stats.reinjections,
            subflow: -1,
            sf_state: -1,
            scheduled_bytes: cn.data_nxt,
            sched_metric: cn.sched.metric(),
            energy_j: f64::NAN,
        }
    }

    /// The connection's entry in summary.json, with its subflows' entries and its oracle.
    pub(super) fn conn_summary(
        &self,
        c: u16,
        subs: Vec<Value>,
        check: &mut CheckFn<'_>,
        checks: &mut Vec<Value>,
    ) -> Value {
        let cn = &self.conns[c as usize];
        if std::env::var("MMPATH_DEBUG").is_ok() {
            eprintln!(
                "conn: data_ack {} data_una {} data_nxt {} reinject {:?} ooo {:?}",
                cn.rx.data_ack,
                cn.data_una,
                cn.data_nxt,
                cn.reinject,
                &cn.rx.ooo_ranges()[..cn.rx.ooo_ranges().len().min(4)]
            );
            for st in &cn.subs {
                let s = self.flows[st.flow as usize].sender.as_ref().unwrap();
                let r = self.flows[st.flow as usize].receiver.as_ref().unwrap();
                eprintln!(
                    "  sub una {} nxt {} lim {} state {:?} cwnd {} inflight {} rcv_nxt {} pf {} maps {:?} first {:?}",
                    s.snd_una,
                    s.snd_nxt,
                    s.app_limit(),
                    s.state,
                    s.w.cwnd,
                    s.in_flight(),
                    r.rcv_nxt(),
                    st.pf,
                    st.maps.len(),
                    st.maps.dsn_of(s.snd_una)
                );
            }
        }
        let window_s = (cn.stop.saturating_sub(cn.start)).secs_f64().max(1e-9);
        let goodput_mbps = cn.goodput_bytes as f64 * 8.0 / window_s / 1e6;
        // The connection-level byte stream: every data byte once and in order, never beyond
        // what was sent, never beyond the window.
        let ok = cn.rx.data_ack == cn.delivered_bytes
            && cn.rx.data_ack <= cn.data_nxt
            && cn.data_una <= cn.rx.data_ack
            && cn.rx.beyond_window_bytes == 0
            && cn.rx.ooo_ranges().iter().all(|&(s, e)| s > cn.rx.data_ack && e <= cn.data_nxt);
        check(
            &cn.name,
            "mptcp-data-stream",
            ok,
            format!(
                "receiver got data [0, {}) once, in order; sender assigned {} and saw {} data-ACKed; {} bytes beyond the window",
                cn.rx.data_ack, cn.data_nxt, cn.data_una, cn.rx.beyond_window_bytes
            ),
            checks,
        );
        let binned = cn.bins.total();
        check(
            &cn.name,
            "interval-accounting",
            binned == cn.delivered_bytes,
            format!("interval bins sum to {binned} of {} delivered data bytes", cn.delivered_bytes),
            checks,
        );
        let mut retransmits = 0u64;
        let mut subs = subs;
        for (j, v) in subs.iter_mut().enumerate() {
            let st = &cn.subs[j];
            retransmits += v["retransmits"].as_u64().unwrap_or(0);
            let o = v.as_object_mut().expect("object");
            o.insert("subflow".into(), json!(j));
            o.insert("backup".into(), json!(st.backup));
            o.insert("established_s".into(), json!(st.established_at.map(|t| t.secs_f64())));
            o.insert("scheduled_bytes".into(), json!(st.scheduled_bytes));
            o.insert("reinjected_bytes".into(), json!(st.reinjected_bytes));
            o.insert("share".into(), json!(st.scheduled_bytes as f64 / cn.data_nxt.max(1) as f64));
        }
        let s = &cn.stats;
        json!({
            "name": cn.name,
            "kind": "mptcp",
            "app": match cn.app_kind { AppKind::Bulk => "bulk", AppKind::Rate => "rate", AppKind::Cbr => "cbr" },
            "direction": match cn.direction { Direction::Download => "download", Direction::Upload => "upload" },
            "path": subs.first().and_then(|v| v["path"].as_str()).unwrap_or(""),
            "start_s": cn.start.secs_f64(),
            "stop_s": cn.stop.secs_f64(),
            "goodput_mbps": goodput_mbps,
            "bytes_delivered": cn.delivered_bytes,
            "cc": cn.cc.name(),
            "coupled": match cn.coupled {
                CoupledName::Uncoupled => "uncoupled",
                CoupledName::Lia => "lia",
                CoupledName::Olia => "olia",
                CoupledName::Balia => "balia",
            },
            "scheduler": cn.sched.name(),
            "mode": match cn.mode { MptcpMode::Fullmesh => "fullmesh", MptcpMode::Backup => "backup" },
            "kernel": match cn.kernel { Kernel::V09x => "linux-v0.9x", Kernel::Upstream => "linux-upstream" },
            "retransmits": retransmits,
            "reinjections": s.reinjections,
            "reinjected_bytes": s.reinjected_bytes,
            "opportunistic_retransmits": s.opportunistic_retransmits,
            "penalizations": s.penalizations,
            "redundant_bytes": s.redundant_bytes,
            "scheduler_decisions": s.decisions,
            "duplicate_bytes": cn.rx.duplicate_bytes,
            "max_reorder_bytes": cn.rx.max_ooo_bytes,
            "loss_pct": subs.iter().map(|v| v["loss_pct"].as_f64().unwrap_or(0.0)).fold(0.0, f64::max),
            "rtt_ms": subs.first().map(|v| v["rtt_ms"].clone()).unwrap_or(Value::Null),
            "subflows": subs,
        })
    }
}
