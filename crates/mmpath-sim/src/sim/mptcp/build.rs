//! Building an MPTCP connection from its scenario flow (sim/build.rs calls `build` for each flow
//! of kind "mptcp"): the scheduler the flow names (src/mptcp/sched), the (client address, server
//! address) pairs its path manager opens subflows between (v0.9x fullmesh path manager,
//! full_mesh_create_subflows in net/mptcp/mptcp_fullmesh.c), a crossed subflow's routes, each
//! subflow's TCP sender and receiver (MSS clamped to the smaller path's as tcp_mss_clamp, less the
//! DSS option; the connection-level window of RFC 8684 3.3.5), the backup flag (v0.9x low_prio /
//! rcv_low_prio, net/mptcp/mptcp_sched.c), the MP_PRIO schedule and the path-manager policy;
//! and a subflow a path-manager policy opens during the run (`subflow_at`).

use crate::app::App;
use crate::mptcp::connection::{ConnCfg, ConnInfo, ConnSndbuf, Connection, PmSetup, RcvSpace, Subflow};
use crate::mptcp::coupled;
use crate::mptcp::pm::{self, PmName, PmParams};
use crate::mptcp::sched::{self, SchedParams};
use crate::packet::{DSS_DATA_BYTES, TCP_HEADER_BYTES};
use crate::scenario::{
    AppKind, BufSize, CcKind, CoupledName, Direction, FlowKind, Kernel, MptcpMode, Scenario, SchedName, SubflowLayout,
};
use crate::sim::build::host_wheel;
use crate::sim::{routes, Flow, FlowCounters, Hop, PathState, Simulation, INTERVAL};
use crate::tcp::cc::{self, CongestionControl};
use crate::tcp::receiver::{ReceiverCfg, TcpReceiver, RMEM_DEFAULT};
use crate::tcp::sender::{SenderCfg, TcpSender};
use crate::time::Time;
use crate::trace::Bins;

/// The parameters of the scheduler flow `f` names. `mss`: its first two subflows' MSS (the
/// ratio schedulers run per-path subflows only, so subflow k is on path k).
fn sched_params(f: &crate::scenario::FlowCfg, mss: [u32; 2]) -> SchedParams {
    let uplink = f.direction == Direction::Upload;
    let m = f.max_rates_mbps.as_deref().unwrap_or(sched::energy::default_max_rates_mbps(uplink));
    let a = f.amuse.unwrap_or_default();
    SchedParams {
        ratio: f.ratio,
        amuse: [a.scan, a.contention, a.blockage],
        // Validated: the energy-aware scheduler has two rates; the others do not read them.
        max_mbps: [m.first().copied().unwrap_or(0.0), m.get(1).copied().unwrap_or(0.0)],
        uplink,
        mss,
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

/// The share of a received skb's truesize that is payload, in 256ths (tp->scaling_ratio), on a
/// wired path: Linux >= 6.5 measures it per subflow (skb->len / skb->truesize,
/// tcp_measure_rcv_mss, net/ipv4/tcp_input.c) and advertises that share of the buffer's free
/// space (__tcp_win_from_space, include/net/tcp.h). 229 is what the emulator's kernel measures
/// on its veth receive path, GSO packets kept whole (docs/facts.md, "MPTCP receive window"):
/// the kernel wired paths are compared with.
const WIRED_SCALING_RATIO: u64 = 229;
/// A radio path's: no receive truesize of the drivers is known, so tcp_adv_win_scale = 1's half
/// of the buffer (Linux 4.10, tcp_win_from_space) stays.
const HALF_SCALING_RATIO: u64 = 128;

/// The connection-level window flow `i` advertises with nothing held, at most (its receive
/// buffer's window share), and, when the buffer is autotuned, where it starts (`RcvSpace`).
/// Its buffer: SO_RCVBUF as given, which the kernel doubles (sock_setsockopt), or autotuned up
/// to tcp_rmem[2]. `linux-v0.9x` advertises half of it (tcp_adv_win_scale = 1) and is taken at
/// its ceiling from the start (its meta socket's autotuning is not modelled). `linux-upstream`
/// advertises the msk's scaling_ratio of it (__mptcp_space -> mptcp_win_from_space,
/// net/mptcp/protocol.h), the smallest of its subflows' (mptcp_rcv_space_adjust,
/// net/mptcp/protocol.c, Linux 6.18): a wired path's measured ratio, a radio path's half; its
/// autotuned buffer starts at tcp_rmem[1] (mptcp_init_sock) and grows with the reads
/// (connection/rcv_space.rs).
fn conn_rcv_window(sc: &Scenario, i: usize, paths: &[PathState]) -> (u64, Option<RcvSpace>) {
    let f = &sc.flow[i];
    let t = &f.tcp;
    let buffer = match t.rcvbuf_bytes {
        BufSize::Bytes(b) => 2 * b,
        BufSize::Auto => t.rmem_max(),
    };
    let kernel = f.kernel.unwrap_or(Kernel::Upstream);
    let ratio = match kernel {
        Kernel::V09x => HALF_SCALING_RATIO,
        Kernel::Upstream => f
            .paths
            .iter()
            .flatten()
            .filter_map(|n| paths.iter().find(|p| &p.name == n))
            .map(|p| if p.radio.is_some() { HALF_SCALING_RATIO } else { WIRED_SCALING_RATIO })
            .min()
            .unwrap_or(HALF_SCALING_RATIO),
    };
    let ceiling = buffer * ratio / 256;
    let space = match (t.rcvbuf_bytes, kernel) {
        (BufSize::Auto, Kernel::Upstream) => Some(RcvSpace::new(RMEM_DEFAULT * ratio / 256, ceiling)),
        _ => None,
    };
    (ceiling, space)
}

/// Subflow `j` of connection `c` (scenario flow `i`) between the client address on path `cp`
/// and the server's on path `sp` (runner path indexes): its internal flow (routes, TCP sender
/// and receiver) with handle `fi` and congestion control `cc`, and its MSS.
#[allow(clippy::too_many_arguments)]
fn subflow_flow(
    sc: &Scenario,
    i: usize,
    (c, j): (u16, usize),
    (cp, sp): (usize, usize),
    paths: &[PathState],
    bb_links: Option<(u16, u16)>,
    (fi, cc): (u16, Box<dyn CongestionControl>),
    label: String,
    (end, seed): (Time, u64),
) -> (Flow, u32) {
    let f = &sc.flow[i];
    let t = &f.tcp;
    let kernel = f.kernel.unwrap_or(Kernel::Upstream);
    let (rcv_window, _) = conn_rcv_window(sc, i, paths);
    let start = Time::from_secs_f64(f.start_s);
    let stop = Time::from_secs_f64(f.stop_s.unwrap_or(sc.duration_s)).min(end);
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
    let mtu = sc.path_mtu(&paths[cp].name).min(sc.path_mtu(&paths[sp].name));
    let mss = mtu - TCP_HEADER_BYTES - DSS_DATA_BYTES;
    // Upstream subflows run a current kernel's congestion control where it changed since 4.10
    // (CUBIC's HyStart, cc/cubic.rs `HyStartRule`); their socket is paced only when the
    // scenario or the algorithm asks.
    let mut cc = cc;
    if kernel == Kernel::Upstream {
        let paced = t.pacing || cc.needs_pacing();
        cc.use_current_kernel(paced);
    }
    let mut sender = TcpSender::new(SenderCfg {
        flow: fi,
        mss,
        initial_cwnd: t.initial_cwnd,
        min_rto: Time::from_ms_f64(t.min_rto_ms),
        // The connection's send buffer limits what is scheduled; the subflow holds only
        // what it was given.
        sndbuf: BufSize::Bytes(1 << 40),
        wmem_max: 1 << 40,
        cc,
        pacing: t.pacing,
    });
    sender.apply_sysctls(t, host_wheel(t, seed));
    // Upstream subflows run a current kernel's TCP: its tail loss probe rule, which the
    // connection timer's interval reads (stale.rs).
    sender.set_modern_loss_probe(kernel == Kernel::Upstream);
    // Subflows advertise the connection's window (RFC 8684 3.3.5): no subflow-level
    // limit beyond it.
    let mut receiver = TcpReceiver::new(ReceiverCfg {
        flow: fi,
        mss,
        rcvbuf: BufSize::Bytes(rcv_window.max(2 * mss as u64)),
        rmem_max: t.rmem_max(),
        delayed_ack: t.delayed_ack,
        // Linux >= 6.6 pushes a full segment with PSH (receiver.rs measure_rcv_mss); the
        // v0.9x kernels (4.x) do not.
        push_full_segments: kernel == Kernel::Upstream,
    });
    receiver.set_timer_wheel(host_wheel(t, seed));
    let flow = Flow {
        name: format!("{}/{}", f.name.clone().unwrap_or_default(), label),
        owner: i as u16,
        conn: Some((c, j as u8)),
        kind: FlowKind::Tcp,
        app_kind: AppKind::Bulk,
        direction: f.direction,
        path: data_pi as u16,
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
        closed: false,
        reset_at: None,
    };
    (flow, mss)
}

/// A subflow connection `c`'s path manager opens during the run on path `pi` (a per-path one:
/// validated), as subflow `j`: its internal flow, named `flow/path#n` for the path's n-th
/// subflow, and the connection's state for it, with the path's backup flag as it stands.
pub(in crate::sim) fn subflow_at(
    sim: &Simulation,
    c: u16,
    j: usize,
    pi: u16,
    backup: bool,
    now: Time,
) -> (Flow, Subflow) {
    let cn = &sim.conns[c as usize];
    let i = cn.owner as usize;
    let f = &sim.sc.flow[i];
    let fi = sim.flows.len() as u16;
    let bb_links = sim.sc.backbone.enabled.then_some((0, 1));
    // Uncoupled only (validated): the new subflow's controller has its own random stream,
    // labelled by the internal flow it is, as at the start.
    let cc = cc::build_seeded(f.cc.unwrap_or(CcKind::Cubic), &f.tcp, sim.seed, fi);
    let n = cn.subs.iter().filter(|st| st.path == pi).count() + 1;
    let label = format!("{}#{n}", sim.paths[pi as usize].name);
    let p = pi as usize;
    let (flow, mss) =
        subflow_flow(&sim.sc, i, (c, j), (p, p), &sim.paths, bb_links, (fi, cc), label, (sim.end, sim.seed));
    (flow, Subflow::new(fi, pi, mss, false, backup, now))
}

/// Builds scenario flow `i` as connection `c`, appending its subflows to `flows`.
#[allow(clippy::too_many_arguments)]
pub(in crate::sim) fn build(
    sc: &Scenario,
    i: usize,
    c: u16,
    paths: &[PathState],
    bb_links: Option<(u16, u16)>,
    flows: &mut Vec<Flow>,
    end: Time,
    seed: u64,
) -> Connection {
    let f = &sc.flow[i];
    let t = &f.tcp;
    let names = f.paths.clone().unwrap_or_default();
    let backups = f.backup_paths.clone().unwrap_or_default();
    let pairs = address_pairs(names.len(), f.subflows.unwrap_or(SubflowLayout::PerPath));
    let cc_kind = f.cc.unwrap_or(CcKind::Cubic);
    let coupled = f.coupled.unwrap_or(CoupledName::Uncoupled);
    let (mut ccs, coupling): (Vec<Box<dyn CongestionControl>>, _) = match coupled {
        // Each subflow's controller gets its own random stream (BBR's ProbeBW start phase),
        // labelled by the internal flow it will be.
        CoupledName::Uncoupled => {
            let ccs = (0..pairs.len()).map(|j| cc::build_seeded(cc_kind, t, seed, (flows.len() + j) as u16));
            (ccs.collect(), None)
        }
        kind => {
            let (ccs, coupling) = coupled::build(kind, pairs.len());
            (ccs, Some(coupling))
        }
    };
    // The connection's buffers. Receive: `conn_rcv_window`. Send: SO_SNDBUF as given, or
    // autotuned from the subflows' (sndbuf.rs).
    let (rcv_window, rcv_space) = conn_rcv_window(sc, i, paths);
    let kernel = f.kernel.unwrap_or(Kernel::Upstream);
    let (sndbuf, sndbuf_rule) = match (t.sndbuf_bytes, kernel) {
        (BufSize::Bytes(b), _) => (b, ConnSndbuf::Fixed),
        (BufSize::Auto, Kernel::V09x) => (t.wmem_max(), ConnSndbuf::Fixed),
        (BufSize::Auto, Kernel::Upstream) => (0, ConnSndbuf::UpstreamSum { wmem_max: t.wmem_max() }),
    };
    let start = Time::from_secs_f64(f.start_s);
    let stop = Time::from_secs_f64(f.stop_s.unwrap_or(sc.duration_s)).min(end);
    let mut subs = Vec::new();
    // The first two subflows' MSS, for the ratio schedulers (per-path subflows: k on path k).
    let mut ratio_mss = [0u32; 2];
    let index = |k: usize| paths.iter().position(|p| p.name == names[k]).unwrap_or(0);
    for (j, &(ck, sk)) in pairs.iter().enumerate() {
        let (cp, sp) = (index(ck), index(sk));
        let label = if ck == sk { names[ck].clone() } else { format!("{}>{}", names[ck], names[sk]) };
        let fi = flows.len() as u16;
        let (flow, mss) =
            subflow_flow(sc, i, (c, j), (cp, sp), paths, bb_links, (fi, ccs.remove(0)), label, (end, seed));
        if let Some(m) = ratio_mss.get_mut(j) {
            *m = mss;
        }
        let pi = flow.path;
        flows.push(flow);
        // v0.9x treats a subflow as backup if either end flagged it (low_prio or rcv_low_prio,
        // mptcp_sched.c): a crossed subflow touching a backup address is one. MP_CAPABLE on the
        // first path completed before the test started.
        let backup = backups.contains(&names[ck]) || backups.contains(&names[sk]);
        subs.push(Subflow::new(fi, pi, mss, j == 0, backup, start));
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
    let sched = sched::build(f.scheduler.unwrap_or(SchedName::Default), &sched_params(f, ratio_mss));
    // A userspace path manager speaks of the flow's paths by their index in `paths`.
    let pm = match f.path_manager.unwrap_or(PmName::Kernel) {
        PmName::Kernel => None,
        name => {
            let backup: Vec<bool> = names.iter().map(|n| backups.contains(n)).collect();
            let backup_paths = (0..names.len() as u16).filter(|&k| backup[k as usize]).collect();
            Some(PmSetup {
                policy: pm::build(name, &PmParams { backup_paths, ..PmParams::default() }),
                paths: (0..names.len()).map(|k| index(k) as u16).collect(),
                backup,
            })
        }
    };
    let cfg = ConnCfg {
        owner: i as u16,
        info: ConnInfo {
            name: f.name.clone().unwrap_or_default(),
            kernel,
            mode: f.mode.unwrap_or(MptcpMode::Fullmesh),
            coupled,
            cc: cc_kind,
            app_kind,
            direction: f.direction,
            start,
            stop,
            wheel: host_wheel(&f.tcp, seed),
        },
        sched,
        app: App::new(app_kind, f.rate_mbps, f.bytes, 0),
        end,
        interval: INTERVAL,
        rcv_window,
        rcv_space,
        sndbuf,
        sndbuf_rule,
        prio,
        coupling,
        pm,
    };
    Connection::new(cfg, subs)
}

#[cfg(test)]
mod tests {
    use crate::sim::Simulation;

    /// The connection-level window a flow starts with (its reassembly's, which its subflows'
    /// receivers advertise too), for `paths` (JSON path objects named a, b) and `flow` fields.
    fn window(paths: &str, flow: &str) -> (u64, u64) {
        let json =
            format!(r#"{{"duration_s":1,"path":[{paths}],"flow":[{{"kind":"mptcp","paths":["a","b"]{flow}}}]}}"#);
        let sim = Simulation::from_json(&json, 1).expect("valid scenario");
        let cn = &sim.conns[0];
        let sub = sim.flows[cn.subs[0].flow as usize].receiver.as_ref().expect("a receiver").window();
        (cn.rx.rcvbuf, sub)
    }

    /// linux-upstream advertises the buffer times the smallest of its subflows' scaling_ratio
    /// (229/256 on wired paths, half on a radio path), an autotuned buffer starting at
    /// tcp_rmem[1] (131 072) with the subflows' receivers at its ceiling; linux-v0.9x half of
    /// the ceiling; SO_RCVBUF is doubled.
    #[test]
    fn upstream_window_is_the_buffer_times_the_scaling_ratio() {
        let wired = r#"{"name":"a","rate_mbps":5},{"name":"b","rate_mbps":5}"#;
        let radio = r#"{"name":"a","rate_mbps":5},{"name":"b","technology":"11ac"}"#;
        let rmem = r#","tcp":{"rmem_max_bytes":262144}"#;
        assert_eq!(window(wired, rmem), (117_248, 234_496), "131072 x 229 / 256; its ceiling 262144 x 229 / 256");
        assert_eq!(window(radio, rmem).0, 65_536, "a radio path's half is the smallest ratio");
        let v09x = r#","kernel":"linux-v0.9x","scheduler":"minrtt","tcp":{"rmem_max_bytes":262144}"#;
        assert_eq!(window(wired, v09x).0, 131_072, "v0.9x: tcp_adv_win_scale's half");
        let so = r#","tcp":{"rcvbuf_bytes":100000}"#;
        assert_eq!(window(wired, so).0, 200_000 * 229 / 256, "SO_RCVBUF doubled, then the ratio");
    }
}
