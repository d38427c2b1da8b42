//! The simulation: builds the topology from a scenario, dispatches events to links, TCP
//! endpoints and applications, samples the timeline, and checks the correctness oracle.
//!
//! Topology: client <-> AP over one or more radio paths, AP <-> server over the backbone.
//! Every link is two independent directions (data one way, ACKs back). A download's data
//! crosses backbone-down then path-down; its ACKs path-up then backbone-up. An upload is the
//! mirror image. With the backbone disabled, flows cross the radio path only.

mod energy_out;
mod mptcp;
mod scan;

use crate::app::{App, RATE_TICK};
use crate::energy;
use crate::engine::{EventQueue, RngStream};
use crate::link::channel::{Action, Channel, ScanPattern};
use crate::link::device;
use crate::link::medium::{AirWake, Medium, SharedCpu, AP, STA};
use crate::link::radio::ideal_mcs;
use crate::link::schedule::Schedule;
use crate::link::trace::{self as chtrace, TraceFormat, TraceOpts, TraceStep};
use crate::link::{Link, LinkCfg, Wake};
use crate::mptcp::sched;
use crate::packet::{Kind, Packet, Way, TCP_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::scenario::{
    AppKind, Direction, FlowKind, RateAdaptation, Scenario, ScenarioError, Technology, TraceFormatCfg,
};
use crate::tcp::cc::{self, CaState, INFINITE_SSTHRESH};
use crate::tcp::receiver::{ReceiverCfg, TcpReceiver};
use crate::tcp::sender::{SenderCfg, TcpSender};
use crate::time::Time;
use crate::trace::{Bins, EventCols, IntervalCols, TimelineCols, TimelineRow, EVENT_KINDS, EV_DOWN, EV_RATE, EV_UP};
use mptcp::MpConn;
use serde_json::{json, Value};

/// Width of intervals.csv bins (iperf3-style, finer than its 1 s default).
pub const INTERVAL: Time = Time::from_ms(100);

/// One hop of a route: a wired link direction, or a radio medium sent on by one station.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    Wire(u16),
    Air(u16, u8),
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    TxDone(u16),
    Arrival(u16),
    AirTxDone(u16),
    AirArrival(u16, u8),
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
    /// A scan an MPTCP scheduler holds until its subflow has drained (sim/mptcp.rs, AMuSe
    /// SCAN), and the scan under way: its start, pattern and next channel change.
    scan_held: Option<ScanPattern>,
    scan_run: Option<(Time, ScanPattern, Time)>,
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
}

/// A whole simulation run.
pub struct Simulation {
    sc: Scenario,
    seed: u64,
    q: EventQueue<Ev>,
    links: Vec<Link>,
    link_rng: Vec<RngStream>,
    media: Vec<Medium>,
    /// The path each medium belongs to.
    media_path: Vec<u16>,
    /// Scratch for packets a medium drops after its last retry.
    dropped: Vec<Packet>,
    paths: Vec<PathState>,
    /// TCP and UDP flows and the subflows of MPTCP connections, by internal index.
    flows: Vec<Flow>,
    conns: Vec<MpConn>,
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

/// A flow's forward and reverse hops and how many there are, given its path's two radio
/// directions and the backbone.
fn routes(bb_links: Option<(u16, u16)>, path_hops: [Hop; 2], dir: Direction) -> ([Hop; 2], [Hop; 2], u8) {
    let [down, up] = path_hops;
    match (bb_links, dir) {
        (Some((bd, bu)), Direction::Download) => ([Hop::Wire(bd), down], [up, Hop::Wire(bu)], 2),
        (Some((bd, bu)), Direction::Upload) => ([up, Hop::Wire(bu)], [Hop::Wire(bd), down], 2),
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

    /// Loads path `i`'s trace, if it has one; trace errors name the scenario field.
    fn load_replay(sc: &Scenario, i: usize) -> Result<Option<Replay>, ScenarioError> {
        let Some(t) = &sc.path[i].trace else { return Ok(None) };
        let field = format!("path.{i}.trace");
        let format = match t.format {
            TraceFormatCfg::Mahimahi => TraceFormat::Mahimahi,
            TraceFormatCfg::Csv => TraceFormat::Csv,
            TraceFormatCfg::Wil6210 => TraceFormat::Wil6210,
        };
        let opts = TraceOpts { bin: Time::from_ms_f64(t.bin_ms), ..TraceOpts::default() };
        let tr = chtrace::load(std::path::Path::new(&t.file), format, &opts)
            .map_err(|e| ScenarioError { field: format!("{field}.file"), message: e.to_string() })?;
        if !tr.steps.iter().any(|s| s.rate_bps.is_some() || s.up.is_some()) {
            return Err(ScenarioError {
                field: format!("{field}.file"),
                message: format!(
                    "{}: the trace sets neither a rate nor the link status; replaying MCS or RSSI alone needs the \
                     802.11 path model, which a fixed-rate path does not have",
                    t.file
                ),
            });
        }
        Ok(Some(Replay {
            steps: tr.steps,
            period: tr.period,
            looping: t.looping,
            next: 0,
            offset: Time::from_secs_f64(t.start_s),
        }))
    }

    pub fn new(sc: Scenario, seed: u64) -> Result<Simulation, ScenarioError> {
        let replays = (0..sc.path.len()).map(|i| Self::load_replay(&sc, i)).collect::<Result<Vec<_>, _>>()?;
        let mut replays = replays.into_iter();
        let end = Time::from_secs_f64(sc.duration_s);
        let mut links = Vec::new();
        let mut link_rng = Vec::new();
        let mut add_link = |cfg: LinkCfg, links: &mut Vec<Link>| -> u16 {
            let id = links.len() as u16;
            links.push(Link::new(cfg));
            link_rng.push(RngStream::new(seed, 0x1000 + id as u64));
            id
        };
        // Backbone: links 0 (AP -> server... no: server -> AP, "down") and 1 (AP -> server).
        let bb = &sc.backbone;
        let bb_links = if bb.enabled {
            let cfg = LinkCfg {
                rate_bps: mbps_to_bps(bb.rate_mbps),
                delay: Time::from_ms_f64(bb.delay_ms),
                queue_cap_bytes: bb.queue_bytes.unwrap_or(0),
                frame_overhead_bytes: bb.frame_overhead_bytes,
                loss_prob: 0.0,
            };
            let d = add_link(cfg.clone(), &mut links);
            let u = add_link(cfg, &mut links);
            Some((d, u))
        } else {
            None
        };
        let mut paths = Vec::new();
        let mut media = Vec::new();
        let mut media_path = Vec::new();
        // One client device: its interfaces share one receive server (energy.rs).
        let client_cpu = SharedCpu::default();
        // ... and one receive-side host power meter, created with its first metered radio.
        let mut client_host: Option<energy::SharedHost> = None;
        for (pi, p) in sc.path.iter().enumerate() {
            let replay = replays.next().flatten();
            let name = p.name.clone().unwrap_or_default();
            if p.technology == Technology::Wired {
                let down_bps = mbps_to_bps(p.rate_mbps.unwrap_or(0.0));
                let up_bps = mbps_to_bps(p.uplink_rate_mbps.or(p.rate_mbps).unwrap_or(0.0));
                let mk = |rate_bps| LinkCfg {
                    rate_bps,
                    delay: Time::from_ms_f64(p.delay_ms),
                    queue_cap_bytes: p.queue_bytes.unwrap_or(0),
                    frame_overhead_bytes: p.frame_overhead_bytes,
                    loss_prob: p.loss_pct / 100.0,
                };
                let down = add_link(mk(down_bps), &mut links);
                let up = add_link(mk(up_bps), &mut links);
                paths.push(PathState {
                    name,
                    hops: [Hop::Wire(down), Hop::Wire(up)],
                    radio: None,
                    base_down_bps: down_bps,
                    base_up_bps: up_bps,
                    mtu: p.mtu_bytes,
                    schedule: Schedule::from_cfg(&p.schedule),
                    replay,
                    mcs: f64::NAN,
                    rssi_dbm: f64::NAN,
                    snr_db: f64::NAN,
                    scan_held: None,
                    scan_run: None,
                    channel_log: vec![TraceStep {
                        rate_bps: Some(down_bps),
                        up: Some(true),
                        ..TraceStep::new(Time::ZERO)
                    }],
                });
                continue;
            }
            // A radio path: one shared medium; its channel draws the signal on the path's own
            // random stream.
            let dev = device::device_of(p);
            let phy = device::radio_phy(p);
            let channel = Channel::new(
                p,
                dev.eirp_gain_dbm,
                device::fspl_1m_db(p),
                Time::from_ms_f64(dev.retrain_ms),
                device::association(p, dev),
                RngStream::new(seed, 0x2000 + pi as u64),
            );
            let rssi = channel.rssi_dbm();
            let adaptation = p.rate_adaptation.unwrap_or(RateAdaptation::Ideal);
            let ladder = device::mcs_ladder(p, dev);
            let mac = device::mac_timing(p, dev);
            // A backlogged sender's MPDU (an A-MSDU where the device packs them).
            let mpdu_bytes = mac.full_mpdu_bytes(p.mtu_bytes);
            let mcs = match (p.mcs, adaptation) {
                (Some(m), _) => m,
                (None, RateAdaptation::Ideal) => {
                    ideal_mcs(&phy, rssi, dev.rx_gain_db, mpdu_bytes, &ladder).unwrap_or(ladder[0])
                }
                // ARF starts at the top of its ladder and learns.
                (None, _) => *ladder.last().expect("a radio path has at least one MCS"),
            };
            let mut m = Medium::new(
                phy,
                mac,
                dev.host_pkt_ns,
                Time::from_ms_f64(p.delay_ms),
                p.queue_bytes.unwrap_or(0),
                mcs,
                RngStream::new(seed, 0x3000 + pi as u64),
            );
            // The client's power meter and shared receive server (energy.rs).
            if let Some(pw) = energy::radio_power(dev.name) {
                let mut meter = energy::RadioMeter::new(pw);
                if let Some(h) = energy::host_of(dev.name) {
                    let host = client_host.get_or_insert_with(|| energy::HostRxMeter::shared(h.rx_active_mw));
                    meter = meter.with_host(host);
                }
                m.set_meter(meter);
            }
            if let Some(ns) = energy::path_rx_pkt_ns(p) {
                m.set_client_cpu(client_cpu.clone(), ns);
            }
            m.set_signal(rssi, dev.rx_gain_db);
            m.set_client_tx_pkt_ns(dev.client_tx_pkt_ns);
            if adaptation == RateAdaptation::Commodity {
                m.use_arf(AP, ladder.clone());
                m.use_arf(STA, ladder.clone());
            }
            let radio = RadioState { rx_gain_db: dev.rx_gain_db, adaptation, mpdu_bytes, ladder, channel };
            let mi = media.len() as u16;
            media.push(m);
            media_path.push(pi as u16);
            let rate = phy.rate_bps(mcs);
            paths.push(PathState {
                name,
                hops: [Hop::Air(mi, AP as u8), Hop::Air(mi, STA as u8)],
                radio: Some(radio),
                base_down_bps: rate,
                base_up_bps: rate,
                mtu: p.mtu_bytes,
                schedule: Schedule::from_cfg(&p.schedule),
                replay,
                mcs: mcs as f64,
                rssi_dbm: rssi,
                snr_db: f64::NAN,
                scan_held: None,
                scan_run: None,
                channel_log: vec![TraceStep {
                    up: Some(true),
                    mcs: Some(mcs),
                    rssi_dbm: Some(rssi as f32),
                    ..TraceStep::new(Time::ZERO)
                }],
            });
        }
        let mut flows = Vec::new();
        let mut conns = Vec::new();
        let mut user_flows = Vec::new();
        for (i, f) in sc.flow.iter().enumerate() {
            if f.kind == FlowKind::Mptcp {
                let c = conns.len() as u16;
                conns.push(mptcp::build(&sc, i, c, &paths, bb_links, &mut flows, end, seed));
                user_flows.push(UserFlow::Conn(c));
                continue;
            }
            user_flows.push(UserFlow::Single(flows.len() as u16));
            let pname = f.path.clone().unwrap_or_default();
            let pi = paths.iter().position(|p| p.name == pname).unwrap_or(0);
            let ps = &paths[pi];
            let (fwd, rev, hops) = routes(bb_links, ps.hops, f.direction);
            let mtu = sc.path_mtu(&pname);
            let mss = mtu - TCP_HEADER_BYTES;
            let app_kind = f.app.unwrap_or(AppKind::Bulk);
            let payload = f.packet_bytes.unwrap_or(mtu - UDP_HEADER_BYTES);
            let fi = flows.len() as u16;
            let (sender, receiver) = if f.kind == FlowKind::Tcp {
                let t = &f.tcp;
                let cc = cc::build_seeded(f.cc.unwrap_or(crate::scenario::CcKind::Cubic), t, seed, fi);
                let mut sender = TcpSender::new(SenderCfg {
                    flow: fi,
                    mss,
                    initial_cwnd: t.initial_cwnd,
                    min_rto: Time::from_ms_f64(t.min_rto_ms),
                    sndbuf: t.sndbuf_bytes,
                    wmem_max: t.wmem_max(),
                    cc,
                    pacing: t.pacing,
                });
                sender.apply_sysctls(t);
                (
                    Some(sender),
                    Some(TcpReceiver::new(ReceiverCfg {
                        flow: fi,
                        mss,
                        rcvbuf: t.rcvbuf_bytes,
                        rmem_max: t.rmem_max(),
                        delayed_ack: t.delayed_ack,
                    })),
                )
            } else {
                (None, None)
            };
            flows.push(Flow {
                name: f.name.clone().unwrap_or_default(),
                owner: i as u16,
                conn: None,
                kind: f.kind,
                app_kind,
                direction: f.direction,
                path: pi as u16,
                ack_path: pi as u16,
                route_fwd: fwd,
                route_rev: rev,
                hops,
                start: Time::from_secs_f64(f.start_s),
                stop: Time::from_secs_f64(f.stop_s.unwrap_or(sc.duration_s)).min(end),
                app: App::new(app_kind, f.rate_mbps, f.bytes, payload),
                mss,
                sender,
                receiver,
                sender_timer: None,
                receiver_timer: None,
                counters: FlowCounters::default(),
                bins: Bins::new(INTERVAL.ns(), end.ns()),
            });
        }
        let sample_every = Time::from_ms_f64(sc.timeline.sample_ms).max(Time::from_us(100));
        let n_samples = (end.ns() / sample_every.ns()) as usize + 1;
        let mut sim = Simulation {
            seed,
            q: EventQueue::new(),
            links,
            link_rng,
            media_path,
            media,
            dropped: Vec::with_capacity(64),
            paths,
            timeline: TimelineCols::with_capacity(n_samples * (flows.len() + conns.len())),
            flows,
            conns,
            user_flows,
            out: Vec::with_capacity(64),
            end,
            sample_every,
            events: EventCols::default(),
            finished: false,
            sc,
        };
        for i in 0..sim.flows.len() {
            let f = &sim.flows[i];
            if f.conn.is_some() {
                continue; // MPTCP subflows are fed by their connection
            }
            let (start, stop) = (f.start, f.stop);
            sim.q.schedule(start, Ev::AppTick(i as u16));
            sim.q.schedule(stop, Ev::AppStop(i as u16));
        }
        for c in 0..sim.conns.len() {
            sim.schedule_conn(c as u16);
        }
        for (i, p) in sim.paths.iter().enumerate() {
            if let Some(t) = p.schedule.next_time() {
                sim.q.schedule(t, Ev::PathStep(i as u16));
            }
            if let Some(t) = p.replay.as_ref().and_then(|r| r.next_time()) {
                sim.q.schedule(t, Ev::TraceStep(i as u16));
            }
            if let Some(r) = &p.radio {
                if r.channel.fades() {
                    sim.q.schedule(r.channel.coherence(), Ev::Fade(i as u16));
                }
                if let Some(t) = r.channel.next_action_time() {
                    sim.q.schedule(t, Ev::ChannelAction(i as u16));
                }
            }
        }
        sim.q.schedule(Time::ZERO, Ev::Sample);
        Ok(sim)
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
            Ev::Arrival(l) => self.on_arrival(now, l),
            Ev::AirTxDone(m) => self.on_air_tx_done(now, m),
            Ev::AirArrival(m, from) => self.on_air_arrival(now, m, from),
            Ev::SenderTimer(f) => {
                let fl = &mut self.flows[f as usize];
                if fl.sender_timer == Some(now) {
                    fl.sender_timer = None;
                }
                // Only an MPTCP subflow's connection needs to see what the timer changed.
                let before = fl.conn.and(fl.sender.as_ref()).map(mptcp::SenderSnapshot::of);
                if let Some(s) = fl.sender.as_mut() {
                    s.on_timer(now, &mut self.out);
                }
                if let (Some(c), Some(b)) = (fl.conn, before) {
                    self.conn_after_sender_timer(now, c, b);
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
            Ev::Sample => {
                self.sample(now);
                let next = now + self.sample_every;
                if next <= self.end {
                    self.q.schedule(next, Ev::Sample);
                }
            }
        }
    }

    /// Sends what an endpoint produced and keeps its timers armed.
    fn after_endpoint(&mut self, now: Time, f: u16) {
        self.flush(now);
        self.arm_timers(f);
    }

    /// Schedules the flow's sender and receiver timers if they are due earlier than the entries
    /// already queued for them (lazy timers: a later deadline keeps the earlier, stale entry).
    /// Idempotent: a second call with nothing changed in between schedules nothing.
    fn arm_timers(&mut self, f: u16) {
        let fl = &mut self.flows[f as usize];
        if let Some(d) = fl.sender.as_ref().and_then(|s| s.timer_deadline()) {
            if fl.sender_timer.is_none_or(|t| d < t) {
                fl.sender_timer = Some(d);
                self.q.schedule(d, Ev::SenderTimer(f));
            }
        }
        if let Some(d) = fl.receiver.as_ref().and_then(|r| r.timer_deadline()) {
            if fl.receiver_timer.is_none_or(|t| d < t) {
                fl.receiver_timer = Some(d);
                self.q.schedule(d, Ev::ReceiverTimer(f));
            }
        }
    }

    fn flush(&mut self, now: Time) {
        if self.out.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        for mut p in out.drain(..) {
            if let Some(c) = self.flows[p.flow as usize].conn {
                self.conn_stamp(c, &mut p);
            }
            self.send(now, p);
        }
        self.out = out;
    }

    /// Puts a packet from an endpoint on the first hop of its route.
    fn send(&mut self, now: Time, mut p: Packet) {
        p.hop = 0;
        if matches!(p.kind, Kind::Data | Kind::Udp) {
            self.flows[p.flow as usize].counters.data_sent += 1;
        }
        self.forward(now, p);
    }

    fn route_hop(&self, p: &Packet) -> Hop {
        let f = &self.flows[p.flow as usize];
        let r = if p.way == Way::Forward { &f.route_fwd } else { &f.route_rev };
        r[p.hop as usize]
    }

    fn forward(&mut self, now: Time, p: Packet) {
        let accepted = match self.route_hop(&p) {
            Hop::Wire(l) => {
                let mut wake = Wake::default();
                let ok = self.links[l as usize].enqueue(now, p, &mut wake);
                self.apply_wake(l, wake);
                ok
            }
            Hop::Air(m, from) => {
                let mut wake = AirWake::default();
                let ok = self.media[m as usize].enqueue(now, from as usize, p, &mut wake);
                self.apply_air_wake(m, wake);
                ok
            }
        };
        if !accepted {
            self.count_drop(&p);
        }
    }

    fn apply_air_wake(&mut self, m: u16, wake: AirWake) {
        if let Some(t) = wake.tx_done {
            self.q.schedule(t, Ev::AirTxDone(m));
        }
        for (d, a) in wake.arrival.iter().enumerate() {
            if let Some(t) = *a {
                self.q.schedule(t, Ev::AirArrival(m, d as u8));
            }
        }
    }

    fn on_air_tx_done(&mut self, now: Time, m: u16) {
        let mut wake = AirWake::default();
        let mut dropped = std::mem::take(&mut self.dropped);
        self.media[m as usize].on_tx_done(now, &mut wake, &mut dropped);
        for p in dropped.iter() {
            self.count_drop(p);
        }
        self.apply_air_wake(m, wake);
        // A frame the MAC gave up on (retries exhausted) is freed by the driver like a sent one:
        // Linux's TSQ (tcp_wfree -> tcp_tsq_handler) lets a throttled socket send again.
        for p in &dropped {
            if p.hop == 0 && p.kind == Kind::Data {
                self.left_first_hop(now, p.flow, 0); // count_drop released its bytes
            }
        }
        dropped.clear();
        self.dropped = dropped;
        let pi = self.media_path[m as usize];
        if self.media[m as usize].mcs(AP) as f64 != self.paths[pi as usize].mcs {
            self.note_mcs(now, pi);
        }
    }

    fn on_air_arrival(&mut self, now: Time, m: u16, from: u8) {
        let mut wake = AirWake::default();
        let p = self.media[m as usize].on_arrival(now, from as usize, &mut wake);
        self.apply_air_wake(m, wake);
        if let Some(p) = p {
            self.arrive(now, p);
        }
    }

    fn hop_queue_bytes(&self, h: Hop) -> u64 {
        match h {
            Hop::Wire(l) => self.links[l as usize].queue_bytes(),
            Hop::Air(m, from) => self.media[m as usize].queue_bytes(from as usize),
        }
    }

    fn hop_rate_bps(&self, h: Hop) -> u64 {
        match h {
            Hop::Wire(l) => self.links[l as usize].rate_bps(),
            Hop::Air(m, from) => self.media[m as usize].rate_bps(from as usize),
        }
    }

    fn hop_up(&self, h: Hop) -> bool {
        match h {
            Hop::Wire(l) => self.links[l as usize].is_up(),
            Hop::Air(m, _) => self.media[m as usize].is_up(),
        }
    }

    fn apply_wake(&mut self, l: u16, wake: Wake) {
        if let Some(t) = wake.tx_done {
            self.q.schedule(t, Ev::TxDone(l));
        }
        if let Some(t) = wake.arrival {
            self.q.schedule(t, Ev::Arrival(l));
        }
    }

    /// A data packet of flow `f` left its first hop (sent on, or given up on by the MAC):
    /// `bytes` (payload + header) are no longer below TCP, and TSQ may let its sender go on.
    fn left_first_hop(&mut self, now: Time, f: u16, bytes: u64) {
        let Some(s) = self.flows[f as usize].sender.as_mut() else { return };
        if s.tsq_done(bytes) {
            s.try_send(now, &mut self.out);
            match self.flows[f as usize].conn {
                // conn_push ends by sending and arming every subflow's timers, this one's too.
                Some(c) => self.conn_push(now, c.0),
                None => self.after_endpoint(now, f),
            }
        }
    }

    fn count_drop(&mut self, p: &Packet) {
        if p.hop == 0 && p.kind == Kind::Data {
            // Dropped before leaving the host: no longer queued below TCP. The socket goes on at
            // its next ACK or timer (not from here, where the same full queue would drop again).
            if let Some(s) = self.flows[p.flow as usize].sender.as_mut() {
                s.tsq_release(p.len as u64 + TCP_HEADER_BYTES as u64);
            }
        }
        let c = &mut self.flows[p.flow as usize].counters;
        match p.kind {
            Kind::Ack => c.acks_dropped += 1,
            Kind::Data | Kind::Udp => c.data_dropped += 1,
            Kind::Syn => {}
        }
    }

    fn on_tx_done(&mut self, now: Time, l: u16) {
        let link = &self.links[l as usize];
        if !link.tx_due(now) {
            return;
        }
        let p = link.cfg.loss_prob;
        let lost = p > 0.0 && self.link_rng[l as usize].bernoulli(p);
        // What TSQ needs of the frame (not a copy of it): a data packet's flow and length when
        // this is its first hop.
        let first_hop_data =
            self.links[l as usize].head().filter(|h| h.hop == 0 && h.kind == Kind::Data).map(|h| (h.flow, h.len));
        let mut wake = Wake::default();
        let dropped = self.links[l as usize].on_tx_done(now, lost, &mut wake);
        if let Some(d) = dropped {
            self.count_drop(&d);
        }
        self.apply_wake(l, wake);
        // TSQ: a data packet has left its sender's host once its first hop finished sending it
        // (the driver's TX completion), not when it reaches the far end.
        if let (Some((f, len)), None) = (first_hop_data, dropped) {
            self.left_first_hop(now, f, len as u64 + TCP_HEADER_BYTES as u64);
        }
    }

    fn on_arrival(&mut self, now: Time, l: u16) {
        let mut wake = Wake::default();
        let Some(p) = self.links[l as usize].on_arrival(now, &mut wake) else { return };
        self.apply_wake(l, wake);
        self.arrive(now, p);
    }

    /// A packet reached the far end of a hop: on to the next hop, or to its endpoint.
    fn arrive(&mut self, now: Time, mut p: Packet) {
        let f = p.flow;
        // TSQ on a radio first hop: released when the frame is through the air (wired first
        // hops release at their TX completion, in on_tx_done).
        if p.hop == 0 && p.kind == Kind::Data && matches!(self.route_hop(&p), Hop::Air(..)) {
            self.left_first_hop(now, p.flow, p.len as u64 + TCP_HEADER_BYTES as u64);
        }
        if p.hop + 1 < self.flows[f as usize].hops {
            p.hop += 1;
            self.forward(now, p);
            return;
        }
        let fl = &mut self.flows[f as usize];
        match p.kind {
            Kind::Data => {
                fl.counters.data_arrived += 1;
                let rx = fl.receiver.as_mut().expect("tcp flow has a receiver");
                let delivered = rx.on_data(now, &p, &mut self.out);
                let conn = fl.conn;
                if delivered > 0 {
                    let rcv_nxt = rx.rcv_nxt();
                    let sent = fl.sender.as_ref().map_or(0, |s| s.snd_nxt);
                    if rcv_nxt > sent {
                        fl.counters.delivered_unsent = true;
                    }
                    self.record_delivery(now, f, delivered);
                }
                if let Some(c) = conn {
                    self.conn_on_data(now, c, &p);
                }
                self.after_endpoint(now, f);
            }
            Kind::Ack => {
                let prior_una = fl.sender.as_ref().map_or(0, |s| s.snd_una);
                if let Some(s) = fl.sender.as_mut() {
                    s.on_ack(now, &p, &mut self.out);
                }
                match fl.conn {
                    // conn_on_ack ends with conn_push, which sends and arms every subflow's
                    // timers, this one's too.
                    Some(c) => self.conn_on_ack(now, c, &p, prior_una),
                    None => self.after_endpoint(now, f),
                }
            }
            Kind::Syn => self.on_handshake(now, &p),
            Kind::Udp => {
                fl.counters.data_arrived += 1;
                fl.counters.udp_bytes_received += p.len as u64;
                // RFC 3550 jitter, as iperf3 reports it: J += (|D| - J) / 16.
                let transit = now.ns() as i64 - p.ts_val_ns as i64;
                if let Some(prev) = fl.counters.udp_last_transit_ns {
                    let d = (transit - prev).abs() as f64;
                    fl.counters.udp_jitter_ns += (d - fl.counters.udp_jitter_ns) / 16.0;
                }
                fl.counters.udp_last_transit_ns = Some(transit);
                self.record_delivery(now, f, p.len as u64);
            }
        }
    }

    fn record_delivery(&mut self, now: Time, f: u16, bytes: u64) {
        let fl = &mut self.flows[f as usize];
        fl.bins.add(now.ns(), bytes);
        fl.counters.delivered_bytes += bytes;
        if now >= fl.start && now <= fl.stop {
            fl.counters.goodput_bytes += bytes;
        }
    }

    fn on_app_tick(&mut self, now: Time, f: u16) {
        let fl = &mut self.flows[f as usize];
        if now >= fl.stop {
            return;
        }
        match &mut fl.app {
            App::Bulk { bytes } => {
                let limit = bytes.unwrap_or(u64::MAX);
                if let Some(s) = fl.sender.as_mut() {
                    s.set_app_limit(limit);
                    s.try_send(now, &mut self.out);
                }
            }
            App::Rate { rate_bps, bytes, written, ticks } => {
                *ticks += 1;
                *written = App::rate_written(*rate_bps, *ticks, *bytes);
                let limit = *written;
                let done = bytes.is_some_and(|b| limit >= b);
                if let Some(s) = fl.sender.as_mut() {
                    s.set_app_limit(limit);
                    s.try_send(now, &mut self.out);
                }
                let next = fl.start + Time(RATE_TICK.ns() * *ticks);
                if !done && next < fl.stop {
                    self.q.schedule(next, Ev::AppTick(f));
                }
            }
            App::Cbr { rate_bps, payload, bytes, sent } => {
                let len = match bytes {
                    Some(b) => (*b - (*sent * *payload as u64).min(*b)).min(*payload as u64) as u32,
                    None => *payload,
                };
                if len > 0 {
                    let mut p = Packet::empty(f, Kind::Udp, Way::Forward);
                    p.seq = *sent;
                    p.len = len;
                    p.size_bytes = len + UDP_HEADER_BYTES;
                    p.ts_val_ns = now.ns();
                    self.out.push(p);
                    *sent += 1;
                    let next = fl.start + App::cbr_offset(*rate_bps, *payload, *sent);
                    let more = bytes.is_none_or(|b| *sent * (*payload as u64) < b);
                    if more && next < fl.stop {
                        self.q.schedule(next, Ev::AppTick(f));
                    }
                }
            }
        }
        self.after_endpoint(now, f);
    }

    fn on_path_step(&mut self, now: Time, pi: u16) {
        while let Some(step) = self.paths[pi as usize].schedule.take_due(now) {
            if let Some(r) = step.rate_bps {
                let ps = &self.paths[pi as usize];
                // The uplink follows the downlink's change in proportion.
                let up_rate = (ps.base_up_bps as u128 * r as u128 / ps.base_down_bps as u128) as u64;
                self.set_path_rate(now, pi, r, Some(up_rate));
            }
            if let Some(u) = step.up {
                self.set_path_up(now, pi, u);
            }
        }
        if let Some(t) = self.paths[pi as usize].schedule.next_time() {
            self.q.schedule(t, Ev::PathStep(pi));
        }
    }

    /// Applies every trace step due now. A trace drives the downlink's rate (the direction
    /// capacity traces describe) and the link status of both directions.
    fn on_trace_step(&mut self, now: Time, pi: u16) {
        loop {
            let Some(r) = self.paths[pi as usize].replay.as_mut() else { return };
            match r.next_time() {
                Some(t) if t <= now => {}
                Some(t) => {
                    self.q.schedule(t, Ev::TraceStep(pi));
                    return;
                }
                None => return,
            }
            let step = r.take().expect("a step is due");
            if let Some(rate) = step.rate_bps {
                self.set_path_rate(now, pi, rate, None);
            }
            if let Some(u) = step.up {
                self.set_path_up(now, pi, u);
            }
            let ps = &mut self.paths[pi as usize];
            let radio = ps.radio.is_some();
            if let Some(m) = step.mcs {
                ps.mcs = m as f64;
            }
            if let Some(r) = step.rssi_dbm {
                ps.rssi_dbm = r as f64;
            }
            if let Some(x) = step.snr_db {
                ps.snr_db = x as f64;
            }
            if radio && (step.mcs.is_some() || step.rssi_dbm.is_some()) {
                self.update_radio(now, pi, step.mcs);
            }
            if step.mcs.is_some() || step.rssi_dbm.is_some() || step.snr_db.is_some() || step.sector.is_some() {
                self.log_channel(now, pi, TraceStep { at: now, rate_bps: None, up: None, ..step });
            }
        }
    }

    fn set_path_rate(&mut self, now: Time, pi: u16, down_bps: u64, up_bps: Option<u64>) {
        let [down, up] = self.paths[pi as usize].hops;
        for (h, rate) in [(down, Some(down_bps)), (up, up_bps)] {
            let (Hop::Wire(l), Some(rate)) = (h, rate) else { continue };
            let mut wake = Wake::default();
            self.links[l as usize].set_rate(now, rate, &mut wake);
            self.apply_wake(l, wake);
        }
        self.push_event(now, pi, EV_RATE, down_bps as f64 / 1e6);
        self.log_channel(now, pi, TraceStep { rate_bps: Some(down_bps), ..TraceStep::new(now) });
    }

    fn set_path_up(&mut self, now: Time, pi: u16, u: bool) {
        if self.switch_path(now, pi, u) {
            self.conn_link_event(now, pi, if u { sched::LinkEvent::Up } else { sched::LinkEvent::Down });
        }
    }

    /// Takes a path's hops down or up, with its event and channel-log rows; false if it already
    /// was so.
    fn switch_path(&mut self, now: Time, pi: u16, u: bool) -> bool {
        let hops = self.paths[pi as usize].hops;
        let was = self.hop_up(hops[0]);
        if was == u {
            return false;
        }
        for h in hops {
            match h {
                Hop::Wire(l) => {
                    let mut wake = Wake::default();
                    if let Some(d) = self.links[l as usize].set_up(now, u, &mut wake) {
                        self.count_drop(&d);
                    }
                    self.apply_wake(l, wake);
                }
                Hop::Air(m, from) => {
                    if from as usize == AP {
                        let mut wake = AirWake::default();
                        self.media[m as usize].set_up(now, u, &mut wake);
                        self.apply_air_wake(m, wake);
                    }
                }
            }
        }
        self.push_event(now, pi, if u { EV_UP } else { EV_DOWN }, f64::NAN);
        self.log_channel(now, pi, TraceStep { up: Some(u), ..TraceStep::new(now) });
        true
    }

    /// A radio path loses its link (blockage, antenna turn): its queued frames are dropped.
    fn disconnect(&mut self, now: Time, pi: u16) {
        if let Hop::Air(m, _) = self.paths[pi as usize].hops[0] {
            let mut wake = AirWake::default();
            let mut dropped = std::mem::take(&mut self.dropped);
            self.media[m as usize].disconnect(now, &mut wake, &mut dropped);
            for p in dropped.drain(..) {
                self.count_drop(&p);
            }
            self.dropped = dropped;
            self.apply_air_wake(m, wake);
        }
    }

    /// A radio path's signal changed (channel process or trace), or a trace forces an MCS:
    /// give the medium the new signal, re-pick the MCS (ideal adaptation; ARF adapts on its own
    /// from the TXOPs that follow) and record what changed.
    fn update_radio(&mut self, now: Time, pi: u16, forced_mcs: Option<u8>) {
        let ps = &self.paths[pi as usize];
        let (Some(r), Hop::Air(m, _)) = (&ps.radio, ps.hops[0]) else { return };
        let rssi = ps.rssi_dbm;
        let medium = &mut self.media[m as usize];
        medium.set_signal(rssi, r.rx_gain_db);
        let pick = match (forced_mcs, r.adaptation) {
            (Some(x), _) => Some(x),
            (None, RateAdaptation::Ideal) => ideal_mcs(medium.phy(), rssi, r.rx_gain_db, r.mpdu_bytes, &r.ladder),
            _ => None,
        };
        if let Some(x) = pick {
            medium.set_mcs(AP, x);
            medium.set_mcs(STA, x);
        }
        self.note_mcs(now, pi);
    }

    /// Records a change of the path's (downlink) MCS as an event and in the channel log.
    fn note_mcs(&mut self, now: Time, pi: u16) {
        let ps = &self.paths[pi as usize];
        let Hop::Air(m, _) = ps.hops[0] else { return };
        let medium = &self.media[m as usize];
        let mcs = medium.mcs(AP);
        if ps.mcs == mcs as f64 {
            return;
        }
        let rate = medium.rate_bps(AP);
        self.paths[pi as usize].mcs = mcs as f64;
        self.push_event(now, pi, EV_RATE, rate as f64 / 1e6);
        self.log_channel(now, pi, TraceStep { mcs: Some(mcs), ..TraceStep::new(now) });
    }

    fn on_fade(&mut self, now: Time, pi: u16) {
        let Some(r) = self.paths[pi as usize].radio.as_mut() else { return };
        r.channel.fade();
        let (rssi, next) = (r.channel.rssi_dbm(), now + r.channel.coherence());
        self.paths[pi as usize].rssi_dbm = rssi;
        self.update_radio(now, pi, None);
        if next <= self.end {
            self.q.schedule(next, Ev::Fade(pi));
        }
    }

    fn on_channel_action(&mut self, now: Time, pi: u16) {
        loop {
            let Some(r) = self.paths[pi as usize].radio.as_mut() else { return };
            let Some(a) = r.channel.take_due(now) else { break };
            let rssi = r.channel.rssi_dbm();
            match a {
                Action::Contend(load_mbps) => {
                    if let Hop::Air(m, _) = self.paths[pi as usize].hops[0] {
                        let md = &mut self.media[m as usize];
                        // The other stations send at about this path's PHY rate: their share of
                        // airtime is their load over that rate.
                        let share = load_mbps * 1e6 / md.rate_bps(AP).max(1) as f64;
                        md.set_foreign_share(share);
                    }
                }
                Action::Interfere(i) => {
                    if let Hop::Air(m, _) = self.paths[pi as usize].hops[0] {
                        self.media[m as usize].set_interferer(i);
                    }
                }
                Action::Attenuate(_) | Action::Base(_) => {
                    self.paths[pi as usize].rssi_dbm = rssi;
                    self.update_radio(now, pi, None);
                    self.log_channel(now, pi, TraceStep { rssi_dbm: Some(rssi as f32), ..TraceStep::new(now) });
                }
                Action::Down => {
                    self.set_path_up(now, pi, false);
                    self.disconnect(now, pi);
                }
                Action::Up => self.set_path_up(now, pi, true),
                Action::ScanStart(pattern) => self.scan_request(now, pi, pattern),
            }
        }
        if let Some(t) = self.paths[pi as usize].radio.as_ref().and_then(|r| r.channel.next_action_time()) {
            self.q.schedule(t, Ev::ChannelAction(pi));
        }
    }

    /// Appends to the path's channel record, merging changes made at the same instant.
    fn log_channel(&mut self, now: Time, pi: u16, step: TraceStep) {
        let log = &mut self.paths[pi as usize].channel_log;
        match log.last_mut() {
            Some(last) if last.at == now => last.merge(&step),
            _ => log.push(step),
        }
    }

    fn push_event(&mut self, now: Time, path: u16, kind: i8, value: f64) {
        self.events.t_s.push(now.secs_f64());
        self.events.path.push(path as i32);
        self.events.kind.push(kind);
        self.events.value.push(value);
    }

    fn sample(&mut self, now: Time) {
        for f in self.flows.iter() {
            let h = f.route_fwd[f.hops as usize - 1];
            let (queue, rate, up) = (self.hop_queue_bytes(h), self.hop_rate_bps(h), self.hop_up(h));
            let (subflow, sf_state, scheduled_bytes) = match f.conn {
                Some((c, j)) => {
                    let st = &self.conns[c as usize].subs[j as usize];
                    (j as i32, st.state_code(), st.scheduled_bytes)
                }
                None => (-1, -1, 0),
            };
            let mut row = TimelineRow {
                t_s: now.secs_f64(),
                flow: f.owner as i32,
                path: f.path as i32,
                cwnd_bytes: f64::NAN,
                ssthresh_bytes: f64::NAN,
                srtt_ms: f64::NAN,
                rttvar_ms: f64::NAN,
                in_flight_bytes: f64::NAN,
                rwnd_bytes: f64::NAN,
                cc_state: -1,
                queue_bytes: queue as f64,
                phy_rate_mbps: rate as f64 / 1e6,
                mcs: self.paths[f.path as usize].mcs,
                rssi_dbm: self.paths[f.path as usize].rssi_dbm,
                snr_db: self.paths[f.path as usize].snr_db,
                link_up: up,
                delivered_bytes: f.counters.delivered_bytes,
                retransmits: 0,
                subflow,
                sf_state,
                scheduled_bytes,
                sched_metric: f64::NAN,
                energy_j: self.energy_j(now, std::iter::once(f.path)),
            };
            if let (Some(s), Some(r)) = (&f.sender, &f.receiver) {
                let mss = s.mss() as f64;
                row.cwnd_bytes = s.w.cwnd as f64 * mss;
                row.ssthresh_bytes =
                    if s.w.ssthresh >= INFINITE_SSTHRESH { f64::NAN } else { s.w.ssthresh as f64 * mss };
                row.srtt_ms = s.rtt.srtt().map_or(f64::NAN, |t| t.ms_f64());
                row.rttvar_ms = s.rtt.srtt().map_or(f64::NAN, |_| s.rtt.rttvar().ms_f64());
                row.retransmits = s.stats.retransmits;
                row.in_flight_bytes = s.in_flight() as f64 * mss;
                row.rwnd_bytes = r.last_rwnd as f64;
                row.cc_state = s.state as i8;
            }
            self.timeline.push(row);
        }
        for c in 0..self.conns.len() {
            let mut row = self.conn_row(now, c);
            let ps = self.conns[c].subs.iter().map(|st| self.flows[st.flow as usize].path);
            row.energy_j = self.energy_j(now, ps);
            self.timeline.push(row);
        }
    }

    /// Runs to the end (if not there yet) and returns the results.
    pub fn finish(&mut self) -> RunOutput {
        self.run_to_end();
        self.finished = true;
        let duration_s = self.end.secs_f64();
        let mut flows = Vec::new();
        let mut checks = Vec::new();
        let mut all_ok = true;
        let mut check = |flow: &str, name: &str, ok: bool, detail: String, checks: &mut Vec<Value>| {
            all_ok &= ok;
            checks.push(json!({"flow": flow, "check": name, "ok": ok, "detail": detail}));
        };
        let mut sub_values: Vec<Option<Value>> = vec![None; self.flows.len()];
        for (i, f) in self.flows.iter().enumerate() {
            let c = &f.counters;
            let window_s = (f.stop.saturating_sub(f.start)).secs_f64().max(1e-9);
            let goodput_mbps = c.goodput_bytes as f64 * 8.0 / window_s / 1e6;
            let kind = if f.kind == FlowKind::Tcp { "tcp" } else { "udp" };
            let pkt_kind = if f.kind == FlowKind::Tcp { Kind::Data } else { Kind::Udp };
            let in_network: u64 = self.links.iter().map(|l| l.count_in_network(i as u16, pkt_kind)).sum::<u64>()
                + self.media.iter().map(|m| m.count_in_network(i as u16, pkt_kind)).sum::<u64>();
            // Conservation: every data packet sent arrived, was dropped, or is still in the network.
            let conserved = c.data_sent == c.data_arrived + c.data_dropped + in_network;
            check(
                &f.name,
                "packet-conservation",
                conserved,
                format!(
                    "sent {} = arrived {} + dropped {} + in network {}",
                    c.data_sent, c.data_arrived, c.data_dropped, in_network
                ),
                &mut checks,
            );
            let binned = f.bins.total();
            let mut v = json!({
                "name": f.name,
                "kind": kind,
                "app": match f.app_kind { AppKind::Bulk => "bulk", AppKind::Rate => "rate", AppKind::Cbr => "cbr" },
                "direction": match f.direction { Direction::Download => "download", Direction::Upload => "upload" },
                "path": self.paths[f.path as usize].name,
                "start_s": f.start.secs_f64(),
                "stop_s": f.stop.secs_f64(),
                "goodput_mbps": goodput_mbps,
            });
            let m = v.as_object_mut().expect("object");
            if f.ack_path != f.path {
                m.insert("ack_path".into(), json!(self.paths[f.ack_path as usize].name));
            }
            if let (Some(s), Some(r)) = (&f.sender, &f.receiver) {
                let delivered = r.check.delivered;
                let stream_ok = !c.delivered_unsent
                    && s.snd_una <= r.rcv_nxt()
                    && r.rcv_nxt() == delivered
                    && r.rcv_nxt() <= s.snd_nxt;
                check(
                    &f.name,
                    "tcp-byte-stream",
                    stream_ok,
                    format!(
                        "receiver got bytes [0, {}) once, in order; sender sent {} and saw {} acknowledged{}",
                        r.rcv_nxt(),
                        s.snd_nxt,
                        s.snd_una,
                        if c.delivered_unsent { "; a delivery covered bytes never sent" } else { "" }
                    ),
                    &mut checks,
                );
                check(
                    &f.name,
                    "sack-scoreboard",
                    s.scoreboard_consistent(),
                    "sender's SACK/lost/retransmit counters match its segment flags".into(),
                    &mut checks,
                );
                check(
                    &f.name,
                    "interval-accounting",
                    binned == delivered,
                    format!("interval bins sum to {binned} of {delivered} delivered bytes"),
                    &mut checks,
                );
                let h = &s.stats.rtt_ms;
                let data_pkts = c.data_sent.max(1);
                m.insert("cc".into(), json!(s.cc_name()));
                m.insert("bytes_delivered".into(), json!(delivered));
                m.insert("bytes_sent".into(), json!(s.stats.bytes_sent));
                m.insert("packets_sent".into(), json!(c.data_sent));
                m.insert("packets_dropped".into(), json!(c.data_dropped));
                m.insert("acks_dropped".into(), json!(c.acks_dropped));
                m.insert("retransmits".into(), json!(s.stats.retransmits));
                m.insert("fast_recoveries".into(), json!(s.stats.fast_recoveries));
                m.insert("rto_count".into(), json!(s.stats.rtos));
                m.insert("tlp_probes".into(), json!(s.stats.tlp_probes));
                m.insert("loss_pct".into(), json!(100.0 * c.data_dropped as f64 / data_pkts as f64));
                m.insert("duplicate_bytes".into(), json!(r.check.duplicate_bytes));
                m.insert("mss_bytes".into(), json!(f.mss));
                m.insert(
                    "rtt_ms".into(),
                    json!({"mean": h.mean(), "p95": h.quantile(0.95), "min": h.min(), "max": h.max(), "samples": h.count()}),
                );
                m.insert("final_cwnd_bytes".into(), json!(s.w.cwnd as u64 * s.mss() as u64));
            } else {
                let sent = c.data_sent;
                let lost = c.data_dropped;
                check(
                    &f.name,
                    "interval-accounting",
                    binned == c.udp_bytes_received,
                    format!("interval bins sum to {binned} of {} received bytes", c.udp_bytes_received),
                    &mut checks,
                );
                m.insert("cc".into(), Value::Null);
                m.insert("bytes_delivered".into(), json!(c.udp_bytes_received));
                m.insert("packets_sent".into(), json!(sent));
                m.insert("packets_received".into(), json!(c.data_arrived));
                m.insert("packets_lost".into(), json!(lost));
                m.insert("packets_in_flight_at_end".into(), json!(in_network));
                m.insert("retransmits".into(), json!(0));
                m.insert("jitter_ms".into(), json!(c.udp_jitter_ns / 1e6));
                // Lost over what had a chance to arrive (datagrams still in flight at the end
                // are neither delivered nor lost).
                let settled = (sent - in_network).max(1);
                m.insert("loss_pct".into(), json!(100.0 * lost as f64 / settled as f64));
                m.insert("rtt_ms".into(), Value::Null);
            }
            sub_values[i] = Some(v);
        }
        for uf in &self.user_flows {
            match *uf {
                UserFlow::Single(i) => flows.push(sub_values[i as usize].take().expect("each flow once")),
                UserFlow::Conn(c) => {
                    let subs: Vec<Value> = self.conns[c as usize]
                        .subs
                        .iter()
                        .map(|st| sub_values[st.flow as usize].take().expect("each subflow once"))
                        .collect();
                    flows.push(self.conn_summary(c, subs, &mut check, &mut checks));
                }
            }
        }
        let mut paths: Vec<Value> = self.paths.iter().map(|p| self.path_summary(p)).collect();
        let energy = self.energy_summary(&mut flows, &mut paths);
        let summary = json!({
            "sim_s": duration_s,
            "events": self.q.processed(),
            "flows": flows,
            "paths": paths,
            "energy": energy,
            "invariants": {"ok": all_ok, "checks": checks},
        });

        let mut intervals = IntervalCols::default();
        let nbins = Bins::new(INTERVAL.ns(), self.end.ns()).bytes.len();
        for b in 0..nbins {
            for uf in &self.user_flows {
                let mut row = |flow: u16, sub: i32, path: i32, bytes: u64| {
                    intervals.t_s.push(b as f64 * INTERVAL.secs_f64());
                    intervals.flow.push(flow as i32);
                    intervals.subflow.push(sub);
                    intervals.path.push(path);
                    intervals.bytes.push(bytes);
                };
                match *uf {
                    UserFlow::Single(i) => {
                        let f = &self.flows[i as usize];
                        row(f.owner, -1, f.path as i32, f.bins.bytes[b]);
                    }
                    UserFlow::Conn(c) => {
                        let cn = &self.conns[c as usize];
                        row(cn.owner, -1, -1, cn.bins.bytes[b]);
                        for (j, st) in cn.subs.iter().enumerate() {
                            let f = &self.flows[st.flow as usize];
                            row(cn.owner, j as i32, f.path as i32, f.bins.bytes[b]);
                        }
                    }
                }
            }
        }
        RunOutput {
            summary,
            intervals,
            timeline: std::mem::take(&mut self.timeline),
            events: std::mem::take(&mut self.events),
            channel_csv: self
                .paths
                .iter()
                .map(|p| {
                    let mut buf = Vec::new();
                    chtrace::write_csv(&mut buf, &p.channel_log).expect("writing to memory");
                    (p.name.clone(), String::from_utf8(buf).expect("csv is utf-8"))
                })
                .collect(),
            flow_names: self.sc.flow.iter().map(|f| f.name.clone().unwrap_or_default()).collect(),
            path_names: self.paths.iter().map(|p| p.name.clone()).collect(),
            ok: all_ok,
        }
    }

    fn path_summary(&self, p: &PathState) -> Value {
        let span = self.end.ns().max(1) as f64;
        let mut v = match p.hops {
            [Hop::Wire(dl), Hop::Wire(ul)] => {
                let (d, u) = (&self.links[dl as usize].stats, &self.links[ul as usize].stats);
                json!({
                    "technology": "wired",
                    "bytes_sent_down": d.bytes_sent,
                    "bytes_sent_up": u.bytes_sent,
                    "drops_down": d.drops_queue + d.drops_down + d.drops_random,
                    "drops_up": u.drops_queue + u.drops_down + u.drops_random,
                    "queue_drops_down": d.drops_queue,
                    "queue_drops_up": u.drops_queue,
                    "utilization_down": d.busy_ns as f64 / span,
                    "utilization_up": u.busy_ns as f64 / span,
                })
            }
            [Hop::Air(m, _), _] => {
                let md = &self.media[m as usize];
                let s = &md.stats;
                json!({
                    "technology": match md.phy() {
                        crate::link::radio::RadioPhy::Dmg => "11ad",
                        crate::link::radio::RadioPhy::Vht { .. } => "11ac",
                        crate::link::radio::RadioPhy::Ht { .. } => "11n",
                    },
                    "mcs": md.mcs(AP),
                    "phy_rate_mbps": md.rate_bps(AP) as f64 / 1e6,
                    "rssi_dbm": p.rssi_dbm,
                    "per_4096": md.per_4096(AP),
                    "bytes_sent_down": s.bytes_delivered[AP],
                    "bytes_sent_up": s.bytes_delivered[STA],
                    "drops_down": s.drops_queue[AP] + s.drops_retry[AP],
                    "drops_up": s.drops_queue[STA] + s.drops_retry[STA],
                    "queue_drops_down": s.drops_queue[AP],
                    "queue_drops_up": s.drops_queue[STA],
                    "retry_drops_down": s.drops_retry[AP],
                    "retry_drops_up": s.drops_retry[STA],
                    "mpdus_failed_down": s.mpdus_failed[AP],
                    "mpdus_interfered_down": s.mpdus_interfered[AP],
                    "mpdus_interfered_up": s.mpdus_interfered[STA],
                    "mpdus_failed_up": s.mpdus_failed[STA],
                    "txops_down": s.txops[AP],
                    "txops_up": s.txops[STA],
                    "collisions": s.collisions,
                    "utilization_down": s.busy_ns[AP] as f64 / span,
                    "utilization_up": s.busy_ns[STA] as f64 / span,
                })
            }
            _ => json!({}),
        };
        let o = v.as_object_mut().expect("object");
        o.insert("name".into(), json!(p.name));
        o.insert("rate_mbps".into(), json!(p.base_down_bps as f64 / 1e6));
        o.insert("uplink_rate_mbps".into(), json!(p.base_up_bps as f64 / 1e6));
        o.insert("mtu_bytes".into(), json!(p.mtu));
        v
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

/// Everything a run produces.
pub struct RunOutput {
    pub summary: Value,
    pub intervals: IntervalCols,
    pub timeline: TimelineCols,
    pub events: EventCols,
    /// Per path (name, the channel as it happened in mmpath's trace CSV format).
    pub channel_csv: Vec<(String, String)>,
    pub flow_names: Vec<String>,
    pub path_names: Vec<String>,
    pub ok: bool,
}

pub const CC_STATES: [&str; 5] = CaState::NAMES;
pub const LINK_EVENT_KINDS: [&str; 3] = EVENT_KINDS;
