//! What the sender's unit tests share: senders, ACKs, a congestion control that records what
//! it hears, and the states the tests start from.

pub(super) use super::{SenderCfg, TcpSender};
pub(super) use crate::packet::{Kind, Packet, Way};
pub(super) use crate::scenario::{BufSize, CcKind, TcpOpts};
pub(super) use crate::tcp::cc::{self, AckInfo, CaState, CongestionControl, TxStart, Window, INFINITE_SSTHRESH};
pub(super) use crate::time::Time;

/// A sender with unlimited buffers, initial window 10 and a 200 ms minimum RTO.
pub(super) fn sender_with(mss: u32, cc: Box<dyn cc::CongestionControl>, pacing: bool) -> TcpSender {
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

pub(super) fn sender(mss: u32) -> TcpSender {
    sender_with(mss, cc::build(CcKind::Reno, &TcpOpts::default()), false)
}

pub(super) fn ack(a: u64, sack: &[(u64, u64)]) -> Packet {
    let mut p = Packet::empty(0, Kind::Ack, Way::Reverse);
    p.ack = a;
    p.rwnd = 1 << 30;
    for (i, b) in sack.iter().enumerate() {
        p.sack[i] = *b;
    }
    p.nsack = sack.len() as u8;
    p
}

/// Records what the sender hands its congestion control.
#[derive(Default)]
pub(super) struct Log {
    pub(super) rtts: Vec<Option<Time>>,
    pub(super) states: Vec<CaState>,
    /// Sender state when each RTT sample arrived.
    pub(super) state_at_rtt: Vec<CaState>,
    pub(super) last_state: Option<CaState>,
    /// Each CA_EVENT_TX_START heard.
    pub(super) tx_starts: Vec<TxStart>,
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
    fn on_tx_start(&mut self, _w: &Window, ev: &TxStart) {
        self.0.lock().unwrap().tx_starts.push(*ev);
    }
}

pub(super) fn probed() -> (TcpSender, std::sync::Arc<std::sync::Mutex<Log>>) {
    let log = std::sync::Arc::new(std::sync::Mutex::new(Log::default()));
    let mut s = sender_with(1000, Box::new(Probe(log.clone())), false);
    s.set_loss_probes(false);
    (s, log)
}

/// A Reno sender without loss probes or F-RTO (tcp_early_retrans = 0, tcp_frto = 0): the
/// RTO tests below see the timeout itself.
pub(super) fn plain_sender(mss: u32) -> TcpSender {
    let mut s = sender(mss);
    s.set_loss_probes(false);
    s.set_frto(false);
    s
}

/// Segments 0-9 sent at 0; SACKs at 10 ms: 10 and 11 sent, then segment 0 retransmitted
/// on entering Recovery; at `t2` the rest of the first window is SACKed, which lets PRR send
/// segments 12 and 13 at `t2`. Returns the sender.
pub(super) fn recovering(t2: Time) -> TcpSender {
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

/// Every packet sent so far has left the host (the simulation reports this per packet
/// through tsq_done; a probe does not retransmit a packet still queued below TCP).
pub(super) fn left_host(s: &mut TcpSender) {
    s.tsq_done(u64::MAX);
}

pub(super) fn with_rwnd(mut p: Packet, rwnd: u32) -> Packet {
    p.rwnd = rwnd;
    p
}

/// 10 segments out, the first ACKed at 10 ms (srtt 10 ms), then the ACKs stall until the
/// RTO fires and retransmits segment 1. Returns the sender after the RTO.
pub(super) fn stalled_after_rto(cc_kind: Option<CcKind>) -> TcpSender {
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

/// ACKs, one by one, every segment outstanding now (one round trip of a loss-free path), all at
/// time `t`.
pub(super) fn ack_round(s: &mut TcpSender, t: Time, out: &mut Vec<Packet>) {
    let round_end = s.snd_nxt;
    let mut a = s.snd_una;
    while a < round_end {
        a += s.mss() as u64;
        s.on_ack(t, &ack(a, &[]), out);
    }
}
