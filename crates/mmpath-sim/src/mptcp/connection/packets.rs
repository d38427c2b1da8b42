//! Data-level sequencing on the wire: DSS stamped on every segment leaving a subflow (RFC 8684
//! 3.3: the DSN mapping on data, DATA_ACK and window on ACKs), the receiver's reassembly into the
//! connection's byte stream, and the sender's side of a data ACK (the window's right edge is never
//! retracted, RFC 8684 3.3.5; a valid ACK clears pf as v0.9x tcp_ack, anything revives a stale
//! subflow as upstream does), and the ACKs the application's read can trigger on the subflows
//! (`read_rule`, `read_ack`).

use super::{Connection, SubflowIo};
use crate::packet::{Kind, Packet, DSS_ACK_BYTES, DSS_DATA_BYTES};
use crate::scenario::Kernel;
use crate::tcp::cc::CaState;
use crate::time::Time;

/// What a read of the connection decides once for all its subflows' ACKs (`read_rule`).
#[derive(Debug, Clone, Copy)]
pub struct ReadRule {
    copied: u64,
    /// Nothing out of order is left queued (the reader took everything in order).
    rx_empty: bool,
    /// Upstream: the read at least doubled the window last advertised.
    cleanup: bool,
}

impl Connection {
    // ----- packets -----

    /// Stamps DSS information on a packet leaving subflow `j`'s endpoints.
    pub fn stamp(&mut self, j: usize, p: &mut Packet) {
        match p.kind {
            Kind::Data => {
                let (dsn, covered) = self.subs[j].maps.dsn_of(p.seq).expect("every sent byte is mapped");
                assert!(covered >= p.len as u64, "a segment never straddles two mappings");
                p.dsn = dsn;
                p.size_bytes += DSS_DATA_BYTES;
            }
            Kind::Ack => {
                p.data_ack = self.rx.data_ack;
                p.data_wnd = match self.info.kernel {
                    Kernel::Upstream => self.rx.advertise(self.subs[j].rcv_ssthresh),
                    Kernel::V09x => self.rx.window(),
                };
                p.size_bytes += DSS_ACK_BYTES;
                // mptcp_set_rwin: the window this ACK advertises is the read rule's reference.
                self.old_wspace = p.data_wnd;
            }
            _ => {}
        }
    }

    /// A data segment reached subflow `j` and its DSN range the connection; returns the bytes
    /// that became in order, which the application reads at once (`read_rule`, `read_ack`).
    pub fn on_data(&mut self, now: Time, j: usize, p: &Packet) -> u64 {
        if self.info.kernel == Kernel::Upstream {
            self.grow_window(j, p.len as u64);
        }
        let delivered = self.rx.on_data(p.dsn, p.len as u64);
        if delivered > 0 {
            self.bins.add(now.ns(), delivered);
            self.delivered_bytes += delivered;
            if now >= self.info.start && now <= self.info.stop {
                self.goodput_bytes += delivered;
            }
        }
        delivered
    }

    /// tcp_grow_window (net/ipv4/tcp_input.c, Linux 6.18) on subflow `j` for a segment of
    /// `len` bytes, called from tcp_event_data_recv (in order, at least 128 bytes) and
    /// tcp_data_queue_ofo: rcv_ssthresh grows by max(2 advmss, 2 len) up to the room left below
    /// the subflow's window clamp: its own buffer's when the connection's is autotuned, which
    /// follows the connection's only while that one grows (rcv_space.rs), the connection's fixed
    /// buffer otherwise (SO_RCVBUF reaches every subflow). Its truesize test (check #2) is taken to pass: the model's
    /// buffer is already in window units (docs/models.md, MPTCP receive window). The
    /// model grows it for every data segment, the subflow's rare duplicates too. So a
    /// subflow that has carried little (a backup, idle until the primary fails) offers a
    /// window of at most ~64 KB plus twice what it has received, however large the
    /// connection's: its ACKs cannot move the edge the primary's ACKs advertised until its
    /// rcv_ssthresh catches up (docs/models.md, "A subflow's window grows with what it
    /// carries").
    fn grow_window(&mut self, j: usize, len: u64) {
        if len < 128 {
            return;
        }
        let st = &mut self.subs[j];
        // Its own buffer's window_clamp when autotuned (rcv_space.rs), else the connection's
        // buffer, which SO_RCVBUF gave every subflow.
        let cap = st.rcvbuf.map_or(self.rx.rcvbuf, |b| b.clamp());
        let room = cap.saturating_sub(st.rcv_ssthresh);
        let incr = 2 * (st.mss as u64).max(len);
        st.rcv_ssthresh += room.min(incr);
    }

    /// The application read `copied` bytes from the connection: the ACKs the read sends on
    /// the subflows, each the first part of the kernel's tcp_cleanup_rbuf on that subflow (a
    /// delayed ACK held for a short segment, or for more than one segment, goes at once if
    /// the read left nothing queued; TcpReceiver::cleanup_rbuf says why its window-update
    /// part is not modelled). Without this, the last short segment of a burst waits for the
    /// 40 ms delayed-ACK timer, and a backup subflow taking over looks silent to upstream's
    /// stale check (docs/models.md).
    /// - `linux-v0.9x` mptcp_cleanup_rbuf (net/mptcp/mptcp_input.c): every subflow that can
    ///   ACK, with the meta socket's receive memory (its out-of-order queue) as the test.
    /// - `linux-upstream` mptcp_cleanup_rbuf (net/mptcp/protocol.c, Linux 6.18): a subflow is
    ///   visited if the read at least doubled the window last advertised (old_wspace) or
    ///   mptcp_subflow_could_cleanup holds (an ACK scheduled, and more than one segment, or a
    ///   short one with the msk's queues empty); tcp_cleanup_rbuf then tests the subflow's
    ///   own receive memory.
    ///
    /// This decides what holds for every subflow (None: nothing was read); `read_ack` then
    /// visits each subflow in order, and its ACK leaves before the next subflow's is decided.
    pub fn read_rule(&self, copied: u64) -> Option<ReadRule> {
        if copied == 0 {
            return None;
        }
        // The reader takes everything in order at once: what remains queued is the
        // out-of-order data.
        let rx_empty = self.rx.ooo_bytes == 0;
        // __mptcp_space: the free space, not capped by any subflow's rcv_ssthresh.
        let space = match self.info.kernel {
            Kernel::Upstream => self.rx.free(),
            Kernel::V09x => self.rx.window(),
        };
        let cleanup = space > 0 && space >= 2 * self.old_wspace;
        Some(ReadRule { copied, rx_empty, cleanup })
    }

    /// The read's ACK on subflow `j` (`read_rule`): true if its receiver sent one.
    pub fn read_ack(&mut self, now: Time, j: usize, rule: ReadRule, io: &mut impl SubflowIo) -> bool {
        let st = &self.subs[j];
        if !st.established {
            return false;
        }
        let (rx, out) = io.receiver_out(st.flow);
        match self.info.kernel {
            Kernel::V09x => rx.cleanup_rbuf(now, rule.copied, rule.rx_empty, out),
            Kernel::Upstream if rule.cleanup || rx.could_cleanup(rule.rx_empty) => {
                let held = rx.nothing_held();
                rx.cleanup_rbuf(now, rule.copied, held, out)
            }
            Kernel::Upstream => false,
        }
    }

    /// An ACK reached subflow `j`: its sender takes it, then the connection its data ACK and
    /// window, and the subflow's state. Returns whether the data ACK advanced, for `after_ack`,
    /// which the caller calls next (a scan held for this subflow may start in between).
    pub fn on_ack(&mut self, now: Time, j: usize, p: &Packet, io: &mut impl SubflowIo) -> bool {
        let prior_una = self.with_sender(j, io, |s, out| {
            let prior_una = s.snd_una;
            s.on_ack(now, p, out);
            prior_una
        });
        let data_advanced = p.data_ack > self.data_una;
        if data_advanced {
            self.data_una = p.data_ack.min(self.data_nxt);
            while self.carriers.front().is_some_and(|&(end, _)| end <= self.data_una) {
                self.carriers.pop_front();
            }
        }
        self.peer_right = self.peer_right.max(p.data_ack + p.data_wnd);
        let st = &mut self.subs[j];
        let s = io.sender(st.flow);
        let acked = s.snd_una - prior_una.min(s.snd_una);
        st.maps.prune(s.snd_una);
        // Anything from the peer revives a stale subflow (upstream: rcv_tstamp moves, which
        // mptcp_subflow_active sees at once); its loss count is reset only by the next check
        // (mptcp_pm_subflow_chk_stale, stale.rs), and until then the subflow's timer stays out
        // of the connection timer's interval (mptcp_timeout_from_subflow). A valid ACK clears
        // pf (v0.9x tcp_ack).
        st.last_ack = now;
        st.stale = false;
        self.queue_shrunk |= acked > 0;
        if acked > 0 {
            st.pf = false;
            if s.state != CaState::Loss {
                st.pre_loss = None;
            }
        }
        if acked > 0 {
            self.sched.on_ack(now, j, acked);
        }
        data_advanced
    }

    /// The rest of an ACK (`on_ack`): the retransmission timer and the writer follow the data
    /// ACK, and a window beyond snd_nxt pushes pending data.
    pub fn after_ack(&mut self, now: Time, data_advanced: bool, io: &mut impl SubflowIo) {
        let shrunk = std::mem::take(&mut self.queue_shrunk);
        if data_advanced {
            self.rtx_on_progress(now);
            self.writer_wake();
        } else if shrunk {
            // An ACK that frees part of a subflow's queue (SOCK_QUEUE_SHRUNK) while the writer
            // sleeps (SOCK_NOSPACE on the socket the subflows share with it) runs
            // tcp_check_space -> tcp_new_space: the subflow's buffer grows with its window
            // (tcp_sndbuf_expand), the connection's with it (subflow_write_space ->
            // mptcp_propagate_sndbuf), and mptcp_write_space wakes the writer if the grown
            // buffer now has room, with no data ACK needed: behind a hole on a dead subflow a
            // healthy one's ACKs grow the buffer and the writer writes (and pushes, a scheduling
            // pass) while the data ACK stands still.
            self.sync_sndbuf(io);
            self.writer_wake();
        }
        // ack_update_msk: a window beyond snd_nxt pushes pending data (__mptcp_check_push).
        let min_mss = self.min_mss();
        if self.peer_right.saturating_sub(self.data_nxt) >= min_mss {
            self.pass_due = true;
        }
        self.push(now, io);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use crate::mptcp::connection::RcvSpace;
    use crate::scenario::BufSize;
    use crate::tcp::receiver::{ReceiverCfg, TcpReceiver};

    fn data(dsn: u64, len: u32) -> Packet {
        let mut p = Packet::empty(0, Kind::Data, Way::Forward);
        p.dsn = dsn;
        p.len = len;
        p
    }

    /// The data ACK and window an ACK of subflow `j` carries now.
    fn stamped_ack(cn: &mut Connection, j: usize) -> (u64, u64) {
        let mut p = Packet::empty(j as u16, Kind::Ack, Way::Reverse);
        cn.stamp(j, &mut p);
        (p.data_ack, p.data_wnd)
    }

    /// Receiving side: data behind a hole is held (head-of-line blocking), the ACKs keep
    /// the data ACK at the hole on every subflow, and filling it delivers both at once.
    #[test]
    fn data_behind_a_hole_waits_and_the_acks_say_so() {
        let (mut cn, _io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], 10 * MSS as u64);
        assert_eq!(cn.on_data(ms(1), 0, &data(1000, 1000)), 0, "hole at 0..1000");
        assert_eq!(stamped_ack(&mut cn, 0), (0, 10_000));
        assert_eq!(stamped_ack(&mut cn, 1), (0, 10_000), "the connection's data ACK on every subflow");
        assert_eq!(cn.delivered_bytes, 0);
        assert_eq!(cn.on_data(ms(2), 0, &data(0, 1000)), 2000);
        assert_eq!(cn.delivered_bytes, 2000);
        assert_eq!(stamped_ack(&mut cn, 1), (2000, 10_000));
    }

    /// Upstream: a subflow's ACKs offer at most its rcv_ssthresh (__tcp_select_window), which
    /// grows by twice what it receives (tcp_grow_window), and never retract the edge another
    /// subflow advertised (mptcp_set_rwin). A backup that takes over from a primary whose ACKs
    /// opened a large window leaves that edge where it stood until its rcv_ssthresh catches up;
    /// then the edge moves with its ACKs. v0.9x advertises the free space at once.
    #[test]
    fn an_idle_subflow_moves_the_edge_only_once_its_rcv_ssthresh_catches_up() {
        const WIN: u64 = 1 << 20;
        let (mut cn, _io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, true], WIN);
        cn.subs[1].established = true;
        // The primary has carried enough for its own rcv_ssthresh to reach the window.
        cn.subs[0].rcv_ssthresh = WIN;
        assert_eq!(stamped_ack(&mut cn, 0), (0, WIN), "the primary's ACK opens the whole window");
        let edge = WIN;
        // The backup, fresh, receives in order from DSN 0 (the primary's data lost).
        let mut dsn = 0;
        let mut moved_at = None;
        while dsn < WIN {
            cn.on_data(ms(1), 1, &data(dsn, MSS));
            dsn += MSS as u64;
            let (ack, wnd) = stamped_ack(&mut cn, 1);
            assert_eq!(ack, dsn);
            let ssthresh = cn.subs[1].rcv_ssthresh;
            assert_eq!(ssthresh, (65_535 + 2 * dsn).min(WIN), "grows by twice each segment");
            if ack + ssthresh <= edge {
                assert_eq!(ack + wnd, edge, "the edge stands still at {dsn}");
            } else {
                assert_eq!(ack + wnd, ack + ssthresh, "the backup's ACK moves the edge at {dsn}");
                moved_at.get_or_insert(dsn);
            }
        }
        // It moves once 64 KB + 3 x received passes the old edge: after about a third of it.
        let moved_at = moved_at.expect("the edge moved");
        assert!(moved_at > (WIN - 65_535) / 3 && moved_at <= (WIN - 65_535) / 3 + MSS as u64, "{moved_at}");

        // v0.9x: the same arrivals move the edge with the first ACK.
        let (mut cn, _io) = connection(Kernel::V09x, SchedName::Upstream, &[false, true], WIN);
        cn.subs[1].established = true;
        stamped_ack(&mut cn, 0);
        cn.on_data(ms(1), 1, &data(0, MSS));
        let (ack, wnd) = stamped_ack(&mut cn, 1);
        assert_eq!(ack + wnd, MSS as u64 + WIN);
        assert_eq!(cn.subs[1].rcv_ssthresh, 65_535, "v0.9x grows no subflow window");
    }

    /// Upstream with an autotuned buffer: a subflow that joined after the connection's buffer
    /// stopped growing keeps tcp_rmem[1] of its own, and its rcv_ssthresh (so the window its
    /// ACKs may open) stops at that buffer's window less one advmss (rcv_space.rs; the
    /// emulator's kernel: rcv_ssthresh 100 119 on a 131 072-byte subflow buffer beside a
    /// 262 144-byte connection's). Following the connection's buffer instead, it grows to that.
    #[test]
    fn a_subflow_joined_late_grows_its_window_only_to_its_own_buffer() {
        const WIN: u64 = 234_496; // tcp_rmem[2] = 256 KiB at 229/256
        const RMEM1: u64 = 117_248; // tcp_rmem[1] = 128 KiB at 229/256
        for own in [true, false] {
            let (mut cn, _io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], WIN);
            cn.subs[1].established = true;
            if own {
                let mut b = RcvSpace::new(RMEM1, WIN).subflow_buffer(MSS);
                b.begin(cn.subs[1].rcv_ssthresh);
                cn.subs[1].rcvbuf = Some(b);
            }
            let mut dsn = 0;
            while dsn < 4 * WIN {
                cn.on_data(ms(1), 1, &data(dsn, MSS));
                dsn += MSS as u64;
            }
            let top = if own { RMEM1 - MSS as u64 } else { WIN };
            assert_eq!(cn.subs[1].rcv_ssthresh, top, "own buffer: {own}");
            let (_, wnd) = stamped_ack(&mut cn, 1);
            assert_eq!(wnd, top, "what its ACK offers, own buffer: {own}");
        }
    }

    /// Upstream, Linux >= 6.6: the slow subflow's last segment, the end of its push (PSH),
    /// fills the connection-level hole; the read that takes everything then sends the
    /// subflows' pending delayed ACKs at once (mptcp_cleanup_rbuf -> tcp_cleanup_rbuf, the
    /// segment "pushed" by tcp_measure_rcv_mss), and they carry the data ACK past the data
    /// held behind the hole. Without the rule the full segment's ACK waits for the 40 ms
    /// timer with the data ACK from before the fill (docs/models.md, "A small
    /// connection-level receive buffer": the kernel's ACK came ~0.1 ms after the fill).
    #[test]
    fn the_read_after_a_hole_fills_acks_a_full_segment_that_ended_a_push() {
        for push_full in [true, false] {
            let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], 10 * MSS as u64);
            cn.subs[1].established = true;
            for (j, r) in io.receivers.iter_mut().enumerate() {
                // Delayed ACKs on; a one-segment buffer leaves no quick ACKs at the start
                // (tcp_incr_quickack: window / 2 rcv_mss).
                *r = TcpReceiver::new(ReceiverCfg {
                    flow: j as u16,
                    mss: MSS,
                    rcvbuf: BufSize::Bytes(MSS as u64),
                    rmem_max: 1 << 30,
                    delayed_ack: true,
                    push_full_segments: push_full,
                });
            }
            // The window the last ACK advertised: the read does not double it.
            stamped_ack(&mut cn, 0);
            let seg = |j: u16, seq: u64, dsn: u64, psh: bool| {
                let mut p = data(dsn, MSS);
                p.flow = j;
                p.seq = seq;
                p.psh = psh;
                p
            };
            let arrive = |cn: &mut Connection, io: &mut Endpoints, t: u64, p: Packet| {
                io.receivers[p.flow as usize].on_data(ms(t), &p, &mut io.out);
                let copied = cn.on_data(ms(t), p.flow as usize, &p);
                if let Some(rule) = cn.read_rule(copied) {
                    for j in 0..2 {
                        cn.read_ack(ms(t), j, rule, io);
                    }
                }
            };
            // The fast subflow's three segments (DSN 1000..4000, the last ends its push) are
            // held behind the hole; its second one is ACKed, its third waits.
            for k in 0..3u64 {
                arrive(&mut cn, &mut io, 1, seg(1, k * 1000, 1000 + k * 1000, k == 2));
            }
            assert_eq!(io.out.len(), 1, "the fast subflow's pair is ACKed, its last segment waits");
            assert_eq!(cn.delivered_bytes, 0);
            io.out.clear();
            // The slow subflow's only segment, the end of its push, fills the hole.
            arrive(&mut cn, &mut io, 3, seg(0, 0, 0, true));
            assert_eq!(cn.delivered_bytes, 4000);
            let mut acks: Vec<(u16, u64)> = Vec::new();
            for mut p in std::mem::take(&mut io.out) {
                cn.stamp(p.flow as usize, &mut p);
                acks.push((p.flow, p.data_ack));
            }
            if push_full {
                assert_eq!(acks, vec![(0, 4000), (1, 4000)], "both pending ACKs go at the read, with the new data ACK");
            } else {
                assert!(acks.is_empty(), "without the rule both wait for the delayed-ACK timer");
            }
        }
    }

    /// Each chunk the scheduler gives a subflow ends a push: its last segment carries PSH,
    /// the others do not (tcp_push marks the tail, net/ipv4/tcp.c).
    #[test]
    fn the_last_segment_of_each_chunk_carries_psh() {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false], 4 * MSS as u64);
        write(&mut cn, &mut io, Time::ZERO, 100 * MSS as u64);
        let psh: Vec<bool> = io.sent.iter().filter(|p| p.kind == Kind::Data).map(|p| p.psh).collect();
        assert_eq!(psh, vec![false, false, false, true]);
    }

    /// Upstream copies the window's last sliver, however short (mptcp_check_allowed_size):
    /// the subflow sends it as a short segment once its full ones are ACKed (Nagle). v0.9x
    /// hands out whole segments only and leaves the sliver unused.
    #[test]
    fn upstream_fills_the_window_to_its_edge_with_a_short_segment() {
        let mss = MSS as u64;
        let window = 8 * mss + mss / 2;
        for (kernel, sched, nxt) in
            [(Kernel::Upstream, SchedName::Upstream, window), (Kernel::V09x, SchedName::Roundrobin, 8 * mss)]
        {
            let (mut cn, mut io) = connection(kernel, sched, &[false], window);
            write(&mut cn, &mut io, Time::ZERO, 100 * mss);
            assert_eq!(cn.data_nxt, nxt, "{kernel:?}: assigned up to the edge");
            assert_eq!(io.data_on(0).len(), 8, "{kernel:?}: the full segments go at once");
            // The full segments are ACKed, the data ACK moves, the right edge does not.
            ack(&mut cn, &mut io, ms(10), 0, 8 * mss, 8 * mss, mss / 2);
            let sent = io.data_on(0);
            if kernel == Kernel::Upstream {
                assert_eq!(sent.len(), 9);
                assert_eq!(sent[8].1, 8 * mss, "the sliver's DSN");
                assert_eq!(u64::from(sent[8].2), mss / 2, "a short segment up to the edge");
            } else {
                assert_eq!(sent.len(), 8, "v0.9x: nothing until a whole segment fits");
            }
        }
    }

    /// Sending side: the peer's connection-level window bounds what the scheduler hands out
    /// over all subflows together, however much room their cwnds have; a data ACK moving the
    /// right edge lets more go, and the head-of-line chunk's carrier is known.
    #[test]
    fn the_peer_window_bounds_all_subflows_together() {
        let window = 8 * MSS as u64;
        let (mut cn, mut io) = connection(Kernel::V09x, SchedName::Roundrobin, &[false, false], window);
        cn.subs[1].established = true;
        write(&mut cn, &mut io, Time::ZERO, 100 * MSS as u64);
        let sent = |io: &Endpoints| io.data_on(0).len() + io.data_on(1).len();
        assert_eq!(cn.data_nxt, window, "two cwnds of 10 segments, a window of 8");
        assert_eq!(sent(&io), 8);
        assert!(!io.data_on(0).is_empty() && !io.data_on(1).is_empty(), "round robin uses both");
        let hol = cn.conn_view().hol_subflow.expect("data outstanding");
        assert_eq!(io.data_on(hol as u16)[0].1, 0, "the carrier of DSN 0");
        // An ACK of subflow 0's data that does not move the data ACK opens nothing.
        let una0 = io.senders[0].snd_nxt;
        ack(&mut cn, &mut io, ms(10), 0, una0, 0, window);
        assert_eq!(cn.data_nxt, window);
        // The data ACK moves by 2 segments: 2 more go.
        ack(&mut cn, &mut io, ms(11), 0, una0, 2 * MSS as u64, window);
        assert_eq!(cn.data_nxt, window + 2 * MSS as u64);
        assert_eq!(sent(&io), 10);
    }
}
