//! What the connection's unit tests share: subflow endpoints without a simulation (real TCP
//! senders and receivers in a list, a subflow's handle being its index), a connection over
//! them, and the steps a test drives it by: carrying out its effects, ACKing a subflow, firing
//! a subflow's RTO.

pub(super) use super::{ConnCfg, ConnInfo, ConnSndbuf, Connection, Effect, Subflow, SubflowIo, Timer};
pub(super) use crate::mptcp::sched::SchedName;
pub(super) use crate::packet::{Kind, Packet, Way};
pub(super) use crate::scenario::{Direction, Kernel};
pub(super) use crate::time::Time;

use crate::app::App;
use crate::mptcp::coupled::CoupledName;
use crate::mptcp::sched::{self, SchedParams};
use crate::scenario::{AppKind, BufSize, CcKind, MptcpMode, TcpOpts};
use crate::tcp::cc;
use crate::tcp::receiver::{ReceiverCfg, TcpReceiver};
use crate::tcp::sender::{SenderCfg, TcpSender};
use crate::tcp::timer_wheel::TimerWheel;

/// Every subflow's MSS.
pub(super) const MSS: u32 = 1000;

pub(super) fn ms(x: u64) -> Time {
    Time::from_ms(x)
}

/// The subflows' endpoints, and what the connection's effects did.
pub(super) struct Endpoints {
    pub(super) senders: Vec<TcpSender>,
    pub(super) receivers: Vec<TcpReceiver>,
    pub(super) out: Vec<Packet>,
    pub(super) up: Vec<bool>,
    /// Every packet that left: the endpoints' (stamped at their push) and handshake segments.
    pub(super) sent: Vec<Packet>,
    /// The timer events asked for, in order.
    pub(super) timers: Vec<(Time, Timer)>,
    /// The subflow endpoints let go (`Effect::Closed`).
    pub(super) closed: Vec<u16>,
    /// The window the receivers advertise.
    window: u64,
}

impl SubflowIo for Endpoints {
    fn sender(&self, sf: u16) -> &TcpSender {
        &self.senders[sf as usize]
    }
    fn sender_out(&mut self, sf: u16) -> (&mut TcpSender, &mut Vec<Packet>) {
        (&mut self.senders[sf as usize], &mut self.out)
    }
    fn receiver_out(&mut self, sf: u16) -> (&mut TcpReceiver, &mut Vec<Packet>) {
        (&mut self.receivers[sf as usize], &mut self.out)
    }
    fn link_up(&self, sf: u16) -> bool {
        self.up[sf as usize]
    }
}

impl Endpoints {
    /// One more subflow's endpoints, as `connection` makes them (a path manager's new subflow).
    pub(super) fn add_endpoints(&mut self) {
        let j = self.senders.len() as u16;
        self.senders.push(sender(j));
        self.receivers.push(receiver(j, self.window));
        self.up.push(true);
    }

    /// The data segments subflow `j` sent: (subflow sequence, DSN, length).
    pub(super) fn data_on(&self, j: u16) -> Vec<(u64, u64, u32)> {
        self.sent.iter().filter(|p| p.flow == j && p.kind == Kind::Data).map(|p| (p.seq, p.dsn, p.len)).collect()
    }

    /// The handshake segments sent: (subflow, step, way).
    pub(super) fn syns(&self) -> Vec<(u16, u64, Way)> {
        self.sent.iter().filter(|p| p.kind == Kind::Syn).map(|p| (p.flow, p.seq, p.way)).collect()
    }
}

/// Subflow `j`'s sender: Reno, loss probes off.
fn sender(j: u16) -> TcpSender {
    let mut s = TcpSender::new(SenderCfg {
        flow: j,
        mss: MSS,
        initial_cwnd: 10,
        min_rto: ms(200),
        sndbuf: BufSize::Bytes(1 << 40),
        wmem_max: 1 << 40,
        cc: cc::build(CcKind::Reno, &TcpOpts::default()),
        pacing: false,
    });
    s.set_loss_probes(false);
    s
}

/// Subflow `j`'s receiver, advertising `window`.
fn receiver(j: u16, window: u64) -> TcpReceiver {
    TcpReceiver::new(ReceiverCfg {
        flow: j,
        mss: MSS,
        rcvbuf: BufSize::Bytes(window),
        rmem_max: 1 << 30,
        delayed_ack: false,
        push_full_segments: true,
    })
}

/// A download over one subflow per `backup` entry (subflow 0 established by MP_CAPABLE, the
/// others not yet joined), an unlimited bulk writer, Reno on every subflow, loss probes off,
/// a fixed send buffer and a peer window of `window` bytes.
pub(super) fn connection(kernel: Kernel, sched: SchedName, backup: &[bool], window: u64) -> (Connection, Endpoints) {
    let n = backup.len();
    let senders = (0..n).map(|j| sender(j as u16)).collect();
    let receivers = (0..n).map(|j| receiver(j as u16, window)).collect();
    let subs = (0..n).map(|j| Subflow::new(j as u16, j as u16, MSS, j == 0, backup[j], Time::ZERO)).collect();
    let cfg = ConnCfg {
        owner: 0,
        info: ConnInfo {
            name: "mptcp".into(),
            kernel,
            mode: MptcpMode::Fullmesh,
            coupled: CoupledName::Uncoupled,
            cc: CcKind::Reno,
            app_kind: AppKind::Bulk,
            direction: Direction::Download,
            start: Time::ZERO,
            stop: Time::from_secs(100),
            wheel: TimerWheel::default(),
        },
        sched: sched::build(sched, &SchedParams::default()),
        app: App::new(AppKind::Bulk, None, None, 0),
        end: Time::from_secs(100),
        interval: ms(100),
        rcv_window: window,
        rcv_space: None,
        sndbuf: 1 << 30,
        sndbuf_rule: ConnSndbuf::Fixed,
        prio: Vec::new(),
        coupling: None,
        pm: None,
    };
    let io = Endpoints {
        senders,
        receivers,
        out: Vec::new(),
        up: vec![true; n],
        sent: Vec::new(),
        timers: Vec::new(),
        closed: Vec::new(),
        window,
    };
    (Connection::new(cfg, subs), io)
}

/// Carries out the connection's effects as the simulation does, at once: timers are noted,
/// handshake segments and pushed packets (stamped) are sent.
pub(super) fn settle(cn: &mut Connection, io: &mut Endpoints, now: Time) {
    let fx = cn.take_effects();
    let mut new = Vec::new();
    for &e in &fx {
        match e {
            Effect::Timer(at, t) => io.timers.push((at, t)),
            Effect::Send(p) => io.sent.push(p),
            // A path manager's new subflow: endpoints like the others', added once these
            // effects are carried out.
            Effect::NewSubflow { path, backup } => new.push((path, backup)),
            Effect::Closed(f) => io.closed.push(f),
            Effect::Push => {
                for mut p in std::mem::take(&mut io.out) {
                    cn.stamp(p.flow as usize, &mut p);
                    io.sent.push(p);
                }
                if let Some(t) = cn.after_push(now, io) {
                    io.timers.push((t, Timer::Rtx));
                }
            }
        }
    }
    cn.restore_effects(fx);
    for (path, backup) in new {
        let f = io.senders.len() as u16;
        io.add_endpoints();
        cn.add_subflow(now, Subflow::new(f, path, MSS, false, backup, now));
        settle(cn, io, now);
    }
}

/// The application may write `bytes` in all; pushes.
pub(super) fn write(cn: &mut Connection, io: &mut Endpoints, now: Time, bytes: u64) {
    cn.data_limit = bytes;
    cn.writer_write();
    cn.push(now, io);
    settle(cn, io, now);
}

/// An ACK reaches subflow `j`'s sender: subflow bytes below `ack`, data below `data_ack`, and
/// a connection-level window of `data_wnd` from there.
pub(super) fn ack(
    cn: &mut Connection,
    io: &mut Endpoints,
    now: Time,
    j: usize,
    ack: u64,
    data_ack: u64,
    data_wnd: u64,
) {
    let mut p = Packet::empty(j as u16, Kind::Ack, Way::Reverse);
    p.ack = ack;
    p.rwnd = 1 << 30;
    p.data_ack = data_ack;
    p.data_wnd = data_wnd;
    let advanced = cn.on_ack(now, j, &p, io);
    cn.after_ack(now, advanced, io);
    settle(cn, io, now);
}

/// Subflow `j`'s retransmission timer fires (at its deadline, which is returned).
pub(super) fn rto(cn: &mut Connection, io: &mut Endpoints, j: usize) -> Time {
    let at = io.senders[j].timer_deadline().expect("a timer is armed");
    cn.on_sender_timer(at, j, io);
    settle(cn, io, at);
    at
}
