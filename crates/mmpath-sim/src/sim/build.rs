//! Building a run from a scenario: the backbone's and wired paths' links, each radio path's
//! channel, medium (with its power meter and the client's shared receive server) and rate
//! adaptation, a trace to replay, the flows (MPTCP connections in sim/mptcp.rs) and the first
//! events. Random streams are seeded per wire and per path here, in this order.

use super::{mbps_to_bps, routes, Ev, Flow, FlowCounters, Hop, PathState, RadioState, Replay, Simulation, UserFlow};
use super::{mptcp, INTERVAL, NO_PATH};
use crate::app::App;
use crate::energy;
use crate::engine::{EventQueue, RngStream};
use crate::link::channel::Channel;
use crate::link::device;
use crate::link::medium::{Air, Medium, SharedAir, SharedCpu, AP, STA};
use crate::link::radio::ideal_mcs;
use crate::link::schedule::Schedule;
use crate::link::session_rate::SessionRate;
use crate::link::trace::{self as chtrace, ChannelState, TraceOpts, TraceStep};
use crate::link::wire::Outage;
use crate::link::{AnyLink, LinkCfg, Wire};
use crate::packet::{TCP_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::scenario::{AppKind, FlowKind, RateAdaptation, Scenario, ScenarioError, TcpOpts, Technology};
use crate::tcp::cc;
use crate::tcp::receiver::{ReceiverCfg, TcpReceiver};
use crate::tcp::sender::{SenderCfg, TcpSender};
use crate::tcp::timer_wheel::TimerWheel;
use crate::time::Time;
use crate::trace::{Bins, EventCols, TimelineCols, TIMELINE_FIRST_ROWS};

impl Simulation {
    /// Loads path `i`'s trace, if it has one; trace errors name the scenario field.
    fn load_replay(sc: &Scenario, i: usize) -> Result<Option<Replay>, ScenarioError> {
        let Some(t) = &sc.path[i].trace else { return Ok(None) };
        let field = format!("path.{i}.trace");
        let format = t.format;
        let opts = TraceOpts { bin: Time::from_ms_f64(t.bin_ms), ..TraceOpts::default() };
        let tr = chtrace::load(std::path::Path::new(&t.file), format, &opts)
            .map_err(|e| ScenarioError { field: format!("{field}.file"), message: e.to_string() })?;
        let refuse = |message: String| Err(ScenarioError { field: format!("{field}.file"), message });
        if sc.path[i].technology == Technology::Wired {
            if !tr.steps.iter().any(|s| s.set.rate_bps.is_some() || s.set.up.is_some()) {
                return refuse(format!(
                    "{}: the trace sets neither a rate nor the link status; replaying MCS or RSSI alone needs the \
                     802.11 path model, which a fixed-rate path does not have (allowed on a wired path: a trace \
                     with rate_mbps or link_up; or give the path a `technology`)",
                    t.file
                ));
            }
        } else {
            // A radio path's rate follows its MCS (the PHY/MAC model): a capacity would be
            // ignored there, so it is refused rather than shown in the records as if it applied.
            if let Some(s) = tr.steps.iter().find(|s| s.set.rate_bps.is_some()) {
                return refuse(format!(
                    "{}: the trace sets a rate (at {} s), but path {i} is a radio path whose rate follows its MCS \
                     (allowed on a radio path: link status, MCS and RSSI; replay a capacity trace (rate_mbps, \
                     mahimahi) on a wired path, one without `technology`)",
                    t.file,
                    s.at.secs_f64()
                ));
            }
            if !tr.steps.iter().any(|s| s.set.up.is_some() || s.set.mcs.is_some() || s.set.rssi_dbm.is_some()) {
                return refuse(format!(
                    "{}: the trace sets none of the link status, MCS or RSSI, the fields a radio path replays \
                     (SNR and sector are only recorded)",
                    t.file
                ));
            }
        }
        Ok(Some(Replay {
            steps: tr.steps,
            period: tr.period,
            looping: t.looping,
            next: 0,
            offset: Time::from_secs_f64(t.start_s),
            outage: t.outage.unwrap_or_default(),
        }))
    }

    pub fn new(sc: Scenario, seed: u64) -> Result<Simulation, ScenarioError> {
        let replays = (0..sc.path.len()).map(|i| Self::load_replay(&sc, i)).collect::<Result<Vec<_>, _>>()?;
        let mut replays = replays.into_iter();
        let end = Time::from_secs_f64(sc.duration_s);
        let mut links = Vec::new();
        let mut link_path = Vec::new();
        // Wires draw their random loss from streams numbered in the order they are made.
        let mut wires = 0u64;
        let mut add_wire = |cfg: LinkCfg, path: u16, links: &mut Vec<AnyLink>, link_path: &mut Vec<u16>| -> u16 {
            let id = links.len() as u16;
            links.push(AnyLink::Wire(Wire::new(cfg, RngStream::new(seed, 0x1000 + wires))));
            link_path.push(path);
            wires += 1;
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
                toward_cut: false,
            };
            let d = add_wire(cfg.clone(), NO_PATH, &mut links, &mut link_path);
            let u = add_wire(cfg, NO_PATH, &mut links, &mut link_path);
            Some((d, u))
        } else {
            None
        };
        let mut paths = Vec::new();
        // One client device: its interfaces share one receive server (energy.rs).
        let client_cpu = SharedCpu::default();
        // ... and one receive-side host power meter, created with its first metered radio.
        let mut client_host: Option<energy::SharedHost> = None;
        let linked = linked_paths(&sc);
        for (pi, p) in sc.path.iter().enumerate() {
            let replay = replays.next().flatten();
            let name = p.name.clone().unwrap_or_default();
            if p.technology == Technology::Wired {
                let down_bps = mbps_to_bps(p.rate_mbps.unwrap_or(0.0));
                let up_bps = mbps_to_bps(p.uplink_rate_mbps.or(p.rate_mbps).unwrap_or(0.0));
                // A drop outage cuts the path at the client's end: the downlink ends there.
                let mk = |rate_bps, toward_cut| LinkCfg {
                    rate_bps,
                    delay: Time::from_ms_f64(p.delay_ms),
                    queue_cap_bytes: p.queue_bytes.unwrap_or(0),
                    frame_overhead_bytes: p.frame_overhead_bytes,
                    loss_prob: p.loss_pct / 100.0,
                    toward_cut,
                };
                let wired_start = ChannelState { rate_bps: Some(down_bps), up: Some(true), ..Default::default() };
                let down = add_wire(mk(down_bps, true), pi as u16, &mut links, &mut link_path);
                let up = add_wire(mk(up_bps, false), pi as u16, &mut links, &mut link_path);
                paths.push(PathState {
                    name,
                    hops: [Hop { link: down, port: 0 }, Hop { link: up, port: 0 }],
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
                    carrier_lost: false,
                    outage: Outage::default(),
                    channel_log: vec![TraceStep::new(Time::ZERO, wired_start)],
                    channel_now: wired_start,
                });
                continue;
            }
            // A radio path: one shared medium; its channel draws the signal on the path's own
            // random stream.
            let dev = device::device_of(p);
            let phy = device::radio_phy(p);
            // A path another one names as its interferer has that link as its own (the same
            // geometry seen from its side).
            let mirrored;
            let p = match &linked[pi] {
                Some((_, Some(x), _)) => {
                    let mut q = p.clone();
                    q.interferer.push(x.clone());
                    mirrored = q;
                    &mirrored
                }
                _ => p,
            };
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
            // GRO at the client (device.rs `client_gro_msdus`) unless the path turns it off (`gro = false`).
            m.set_client_gro(if p.gro == Some(false) { 0 } else { dev.client_gro_msdus });
            m.set_tx_ring(dev.tx_ring);
            // An AP with its own driver build and qdisc (device.rs `ap_tx_ring`, `ap_fq_codel_limit`).
            m.set_tx_ring_at(AP, dev.ap_tx_ring);
            if dev.ap_fq_codel_limit > 0 {
                m.set_fq_codel(AP, dev.ap_fq_codel_limit as u64 * p.mtu_bytes as u64);
            }
            m.set_client_driver_queue(dev.client_tx_queue_frames as u64 * p.mtu_bytes as u64);
            if adaptation == RateAdaptation::Commodity && p.technology == Technology::Dot11ad {
                // Commodity 60 GHz: the rate is set per session by beam training and the
                // firmware's rate search, and held (link/session_rate.rs).
                let sens =
                    ladder.iter().filter_map(|&x| phy.sensitivity_dbm(x).map(|s| (x, s - dev.rx_gain_db))).collect();
                let rate = SessionRate::new(sens, p.fading_db.unwrap_or(0.0), mpdu_bytes);
                m.use_session_rate(rate, RngStream::new(seed, 0x5000 + pi as u64), channel.mean_rssi_dbm());
            } else if adaptation == RateAdaptation::Commodity {
                m.use_arf(AP, ladder.clone());
                m.use_arf(STA, ladder.clone());
            }
            if let Some((_, _, air)) = &linked[pi] {
                m.set_air(air.0.clone(), air.1);
            }
            // What the link starts at (a per-session rate has trained by now).
            let mcs = m.mcs(AP);
            let radio = RadioState { rx_gain_db: dev.rx_gain_db, adaptation, mpdu_bytes, ladder, channel };
            let mi = links.len() as u16;
            links.push(AnyLink::Medium(m));
            link_path.push(pi as u16);
            let rate = phy.rate_bps(mcs);
            let radio_start =
                ChannelState { up: Some(true), mcs: Some(mcs), rssi_dbm: Some(rssi as f32), ..Default::default() };
            paths.push(PathState {
                name,
                hops: [Hop { link: mi, port: AP as u8 }, Hop { link: mi, port: STA as u8 }],
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
                carrier_lost: false,
                outage: Outage::default(),
                channel_log: vec![TraceStep::new(Time::ZERO, radio_start)],
                channel_now: radio_start,
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
                sender.apply_sysctls(t, host_wheel(t, seed));
                sender.set_writer_blocks(true); // the application writes to this socket (SOCK_NOSPACE)
                let mut receiver = TcpReceiver::new(ReceiverCfg {
                    flow: fi,
                    mss,
                    rcvbuf: t.rcvbuf_bytes,
                    rmem_max: t.rmem_max(),
                    delayed_ack: t.delayed_ack,
                    // A current kernel's receiver; a single-path writer is modelled
                    // without pushes, so no segment carries PSH for the rule to see.
                    push_full_segments: true,
                });
                receiver.set_timer_wheel(host_wheel(t, seed));
                (Some(sender), Some(receiver))
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
                closed: false,
                reset_at: None,
            });
        }
        let sample_every = Time::from_ms_f64(sc.timeline.sample_ms).max(Time::from_us(100));
        let n_samples = (end.ns() / sample_every.ns()) as usize + 1;
        let mut sim = Simulation {
            seed,
            q: EventQueue::new(),
            links,
            link_path,
            dropped: Vec::with_capacity(64),
            paths,
            timeline: TimelineCols::with_capacity((n_samples * (flows.len() + conns.len())).min(TIMELINE_FIRST_ROWS)),
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
            if let Some(t) = p.replay.as_ref().and_then(|r| r.next_time()).filter(|&t| t < end) {
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
}

/// Per path, the path it is linked to (`[[path.interferer]] path = ...`, validated: pairs of
/// radio paths): the partner's index, the interferer entry it gets from the partner's
/// declaration (None on the declaring side, which has its own), and the pair's shared air
/// with its side (0 for the declaring path).
type Linked = Option<(usize, Option<crate::scenario::InterfererCfg>, (SharedAir, usize))>;

/// The host kernel's timer wheel for a flow's TCP: its CONFIG_HZ (`tcp.kernel_hz`) at the run's
/// kernel clock phase, drawn from the seed (timer_wheel.rs). One clock per run, sender and
/// receiver alike, as in the emulator, whose namespaces share one kernel.
pub(in crate::sim) fn host_wheel(t: &TcpOpts, seed: u64) -> TimerWheel {
    TimerWheel::new(t.kernel_hz).with_phase(TimerWheel::phase_for_seed(seed))
}

fn linked_paths(sc: &Scenario) -> Vec<Linked> {
    let mut out: Vec<Linked> = vec![None; sc.path.len()];
    for (i, p) in sc.path.iter().enumerate() {
        for x in &p.interferer {
            let Some(k) = x.path.as_deref().and_then(|n| sc.path.iter().position(|q| q.name.as_deref() == Some(n)))
            else {
                continue;
            };
            let air = Air::shared();
            // The same link seen from the other side: our path is its interferer.
            let back = crate::scenario::InterfererCfg { path: p.name.clone(), ..x.clone() };
            out[i] = Some((k, None, (air.clone(), 0)));
            out[k] = Some((i, Some(back), (air, 1)));
        }
    }
    out
}
