//! The simulation: builds the topology from a scenario, dispatches events to links, TCP
//! endpoints and applications, samples the timeline, and checks the correctness oracle.
//!
//! Topology: client <-> AP over one or more radio paths, AP <-> server over the backbone.
//! Every link is two independent directions (data one way, ACKs back). A download's data
//! crosses backbone-down then path-down; its ACKs path-up then backbone-up. An upload is the
//! mirror image. With the backbone disabled, flows cross the radio path only.
//!
//! This file holds the simulation's state (hops, events, paths, flows), the run loop and the
//! event dispatch. The rest are child modules, each an `impl Simulation` block:
//! - sim/build.rs: the topology, flows and first events built from a scenario;
//! - sim/route.rs: packets on their routes: hops, the links' wake-ups, drops, TSQ;
//! - sim/endpoint.rs: TCP and UDP endpoints: timers, deliveries, applications;
//! - sim/path.rs: a path's changes over time: schedule, trace, fading, channel events;
//! - sim/scan.rs: a radio's scans;
//! - sim/mptcp.rs: MPTCP connections and their subflows;
//! - sim/output.rs: the timeline samples, and at the end summary.json, intervals, channel logs;
//! - sim/oracle.rs: the correctness checks on every flow at the end of a run;
//! - sim/energy_out.rs: the energy model's outputs.

mod build;
mod endpoint;
mod energy_out;
mod mptcp;
mod oracle;
mod output;
mod path;
mod route;
mod scan;

pub use output::{OutputChunk, RunOutput};

use crate::app::App;
use crate::engine::EventQueue;
use crate::link::channel::{Channel, ScanPattern};
use crate::link::schedule::Schedule;
use crate::link::trace::{ChannelState, TraceStep};
use crate::link::wire::Outage;
use crate::link::AnyLink;
use crate::mptcp::connection::Connection;
use crate::packet::Packet;
use crate::scenario::{AppKind, Direction, FlowKind, RateAdaptation, Scenario, ScenarioError};
use crate::tcp::cc::CaState;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::time::Time;
use crate::trace::{Bins, EventCols, TimelineCols, EVENT_KINDS};

/// Width of intervals.csv bins (iperf3-style, finer than its 1 s default).
pub const INTERVAL: Time = Time::from_ms(100);

/// One hop of a route: a link (`Simulation::links`, of any kind) and the direction crossed
/// (a wire's only one, 0; on the 802.11 medium the sending station, `medium::AP` or `STA`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hop {
    link: u16,
    port: u8,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A link's transmission ends; a packet reaches the far end of a link's direction.
    TxDone(u16),
    Arrival(u16, u8),
    SenderTimer(u16),
    ReceiverTimer(u16),
    AppTick(u16),
    AppStop(u16),
    PathStep(u16),
    TraceStep(u16),
    /// A radio path's fading moves to its next coherence interval.
    Fade(u16),
    /// A radio path's channel event (blockage start/end, re-trained) is due.
    ChannelAction(u16),
    Sample,
    /// MPTCP connection events: the application's tick and stop, the scheduler's own tick,
    /// an MP_PRIO change, and a subflow's handshake time-out (by internal flow).
    ConnTick(u16),
    ConnStop(u16),
    SchedTick(u16),
    Prio(u16),
    JoinTimer(u16),
    /// A scan under way on this path changes channel (leaves for a dwell, comes back, ends).
    ScanStep(u16),
    /// Upstream MPTCP's connection-level retransmission timer (mptcp/connection/stale.rs).
    ConnRtx(u16),
    /// A connection's path-manager policy: its start, or its own timer (mptcp/connection/pm.rs).
    PmTimer(u16),
}

struct RadioState {
    rx_gain_db: f64,
    adaptation: RateAdaptation,
    /// MPDU size the ideal rate adaptation optimises for (MTU + MAC overhead).
    mpdu_bytes: u32,
    /// The MCS indexes the device uses.
    ladder: Vec<u8>,
    channel: Channel,
}

/// A trace being replayed on a path: its steps, where we are, and the loop offset.
struct Replay {
    steps: Vec<TraceStep>,
    period: Time,
    looping: bool,
    next: usize,
    offset: Time,
    /// What the trace's down periods do on a wired path (the trace's `outage`).
    outage: Outage,
}

impl Replay {
    fn next_time(&self) -> Option<Time> {
        self.steps.get(self.next).map(|s| self.offset + s.at)
    }
    /// Takes the next step, wrapping to the next pass when looping.
    fn take(&mut self) -> Option<TraceStep> {
        let s = *self.steps.get(self.next)?;
        self.next += 1;
        if self.next == self.steps.len() && self.looping && self.period > Time::ZERO {
            self.next = 0;
            self.offset += self.period;
        }
        Some(s)
    }
}

struct PathState {
    name: String,
    /// The downlink (AP -> client) and uplink hops.
    hops: [Hop; 2],
    /// Radio paths: the receiver's gain over the standard's sensitivity, the max MCS and the
    /// rate adaptation, to re-pick the MCS when the signal changes.
    radio: Option<RadioState>,
    base_down_bps: u64,
    base_up_bps: u64,
    mtu: u32,
    schedule: Schedule,
    replay: Option<Replay>,
    /// Channel indicators as last reported by a trace (NaN = not known).
    mcs: f64,
    rssi_dbm: f64,
    snr_db: f64,
    /// The channel as it happened (initial state, then every change): written as
    /// channel-<path>.csv, replayable with format = "csv".
    channel_log: Vec<TraceStep>,
    /// The channel the record has reached (every field the log has set, at its latest value).
    channel_now: ChannelState,
    /// A scan an MPTCP scheduler holds until its subflow has drained (sim/mptcp.rs, AMuSe
    /// SCAN), and the scan under way: its start, pattern and next channel change.
    scan_held: Option<ScanPattern>,
    scan_run: Option<(Time, ScanPattern, Time)>,
    /// The path's carrier as a path manager hears it (rtnetlink IFF_LOWER_UP): lost when the
    /// link goes down losing what it holds (a wired `drop` outage, a radio's disconnect), kept
    /// through a wired `hold` outage (a paused interface keeps its carrier: the emulator's
    /// hold is its delay line's, the veth stays up). Only a lost carrier is a link event for
    /// the path manager (sim/path.rs `set_path_up`).
    carrier_lost: bool,
    /// What the path's current wired outage does with its packets (set before it goes down).
    outage: Outage,
}

#[derive(Debug, Default, Clone)]
struct FlowCounters {
    data_sent: u64,
    data_arrived: u64,
    data_dropped: u64,
    acks_dropped: u64,
    udp_bytes_received: u64,
    /// Bytes delivered inside [start, stop] (goodput window).
    goodput_bytes: u64,
    /// Bytes delivered so far (the timeline's running total).
    delivered_bytes: u64,
    /// A delivery covered bytes the sender never sent: an oracle violation.
    delivered_unsent: bool,
    /// UDP interarrival jitter (RFC 3550 section 6.4.1), ns, and the previous transit time.
    udp_jitter_ns: f64,
    udp_last_transit_ns: Option<i64>,
    /// UDP one-way transit (send to arrival), ns: sum, least and most over the datagrams that
    /// arrived (`data_arrived` of them).
    udp_transit_sum_ns: f64,
    udp_transit_min_ns: Option<i64>,
    udp_transit_max_ns: i64,
}

struct Flow {
    name: String,
    /// The scenario flow this is (or, for an MPTCP subflow, belongs to).
    owner: u16,
    /// MPTCP: (connection, subflow index); None for plain TCP / UDP flows.
    conn: Option<(u16, u8)>,
    kind: FlowKind,
    app_kind: AppKind,
    direction: Direction,
    /// The path the data goes over.
    path: u16,
    /// The path the ACKs come back over: `path`, except for an MPTCP subflow between addresses
    /// on different paths (flow.subflows = "address-mesh").
    ack_path: u16,
    route_fwd: [Hop; 2],
    route_rev: [Hop; 2],
    hops: u8,
    start: Time,
    stop: Time,
    app: App,
    mss: u32,
    sender: Option<TcpSender>,
    receiver: Option<TcpReceiver>,
    sender_timer: Option<Time>,
    receiver_timer: Option<Time>,
    counters: FlowCounters,
    bins: Bins,
    /// An MPTCP subflow the path manager closed, or a TCP connection a reset ended (a schedule
    /// step's `reset`): what reaches its endpoints is dropped, its timers and application no
    /// longer run.
    closed: bool,
    /// When a reset ended it (summary.json `reset_s`).
    reset_at: Option<Time>,
}

/// A whole simulation run.
pub struct Simulation {
    sc: Scenario,
    seed: u64,
    q: EventQueue<Ev>,
    /// Every link, of every kind (link/kinds.rs): the backbone's, then each path's.
    links: Vec<AnyLink>,
    /// The path each link belongs to (`NO_PATH` for the backbone's).
    link_path: Vec<u16>,
    /// Scratch for packets a link drops (random loss, the last retry, an outage).
    dropped: Vec<Packet>,
    paths: Vec<PathState>,
    /// TCP and UDP flows and the subflows of MPTCP connections, by internal index.
    flows: Vec<Flow>,
    conns: Vec<Connection>,
    /// Per scenario flow: its internal flow, or its MPTCP connection.
    user_flows: Vec<UserFlow>,
    out: Vec<Packet>,
    end: Time,
    sample_every: Time,
    timeline: TimelineCols,
    events: EventCols,
    finished: bool,
}

#[derive(Debug, Clone, Copy)]
enum UserFlow {
    Single(u16),
    Conn(u16),
}

impl Flow {
    /// The hop on the flow's own path in the data direction: where its data waits for the
    /// path's transmitter. A download's data crosses the backbone first and the path last, an
    /// upload's the path first and then the backbone (`routes`); the last hop is the path only
    /// without a backbone.
    fn path_hop(&self) -> Hop {
        match self.direction {
            Direction::Download => self.route_fwd[self.hops as usize - 1],
            Direction::Upload => self.route_fwd[0],
        }
    }
}

/// The path of a link that belongs to none (the backbone's).
const NO_PATH: u16 = u16::MAX;

/// A flow's forward and reverse hops and how many there are, given its path's two directions
/// and the backbone.
fn routes(bb_links: Option<(u16, u16)>, path_hops: [Hop; 2], dir: Direction) -> ([Hop; 2], [Hop; 2], u8) {
    let [down, up] = path_hops;
    let wire = |link| Hop { link, port: 0 };
    match (bb_links, dir) {
        (Some((bd, bu)), Direction::Download) => ([wire(bd), down], [up, wire(bu)], 2),
        (Some((bd, bu)), Direction::Upload) => ([up, wire(bu)], [wire(bd), down], 2),
        (None, Direction::Download) => ([down, down], [up, up], 1),
        (None, Direction::Upload) => ([up, up], [down, down], 1),
    }
}

fn mbps_to_bps(r: f64) -> u64 {
    ((r * 1e6).round() as u64).max(1)
}

impl Simulation {
    /// Parses and validates `json` and builds the run.
    pub fn from_json(json: &str, seed: u64) -> Result<Simulation, ScenarioError> {
        let sc = Scenario::from_json(json)?;
        Simulation::new(sc, seed)
    }

    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn now(&self) -> Time {
        self.q.now()
    }
    pub fn end(&self) -> Time {
        self.end
    }
    pub fn events_processed(&self) -> u64 {
        self.q.processed()
    }

    /// Runs every event due at or before `min(t, end)`.
    pub fn run_until(&mut self, t: Time) {
        let horizon = t.min(self.end);
        while let Some((now, ev)) = self.q.pop_until(horizon) {
            self.dispatch(now, ev);
        }
        self.q.advance_to(horizon);
    }

    pub fn run_to_end(&mut self) {
        let end = self.end;
        self.run_until(end);
    }

    fn dispatch(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::TxDone(l) => self.on_tx_done(now, l),
            Ev::Arrival(l, port) => self.on_arrival(now, l, port),
            Ev::SenderTimer(f) | Ev::ReceiverTimer(f) if self.flows[f as usize].closed => {}
            Ev::SenderTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.sender_timer == Some(now) {
                    fl.sender_timer = None;
                }
                // An MPTCP subflow's timer goes through its connection (an RTO is its failure).
                match fl.conn {
                    Some(c) => self.conn_sender_timer(now, c),
                    None => {
                        if let Some(s) = fl.sender.as_mut() {
                            s.on_timer(now, &mut self.out);
                        }
                    }
                }
                self.after_endpoint(now, f);
            }
            Ev::ReceiverTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.receiver_timer == Some(now) {
                    fl.receiver_timer = None;
                }
                if let Some(r) = fl.receiver.as_mut() {
                    r.on_timer(now, &mut self.out);
                }
                self.after_endpoint(now, f);
            }
            Ev::AppTick(f) => self.on_app_tick(now, f),
            Ev::AppStop(f) => {
                if let Some(s) = self.flows[f as usize].sender.as_mut() {
                    s.close_app();
                }
            }
            Ev::PathStep(p) => self.on_path_step(now, p),
            Ev::TraceStep(p) => self.on_trace_step(now, p),
            Ev::Fade(p) => self.on_fade(now, p),
            Ev::ChannelAction(p) => self.on_channel_action(now, p),
            Ev::ConnTick(c) => self.conn_app_tick(now, c),
            Ev::ConnStop(c) => self.conn_app_stop(now, c),
            Ev::SchedTick(c) => self.conn_sched_tick(now, c),
            Ev::Prio(c) => self.conn_prio(now, c),
            Ev::JoinTimer(f) => self.join_timer(now, f),
            Ev::ScanStep(p) => self.scan_step(now, p),
            Ev::ConnRtx(c) => self.conn_rtx_timer(now, c),
            Ev::PmTimer(c) => self.conn_pm_timer(now, c),
            Ev::Sample => {
                self.sample(now);
                let next = now + self.sample_every;
                if next <= self.end {
                    self.q.schedule(next, Ev::Sample);
                }
            }
        }
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

pub const CC_STATES: [&str; 5] = CaState::NAMES;
pub const LINK_EVENT_KINDS: [&str; 3] = EVENT_KINDS;
