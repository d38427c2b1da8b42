//! Data-level sequencing on the wire: DSS stamped on every segment leaving a subflow (RFC 8684
//! 3.3: the DSN mapping on data, DATA_ACK and window on ACKs), the receiver's reassembly into the
//! connection's byte stream, and the sender's side of a data ACK (the window's right edge is never
//! retracted, RFC 8684 3.3.5; a valid ACK clears pf as v0.9x tcp_ack, anything revives a stale
//! subflow as upstream does), and the ACKs the application's read can trigger on the subflows
//! (`conn_on_read`).

use crate::packet::{Kind, Packet, DSS_ACK_BYTES, DSS_DATA_BYTES};
use crate::scenario::Kernel;
use crate::sim::Simulation;
use crate::tcp::cc::CaState;
use crate::time::Time;

impl Simulation {
    // ----- packets -----

    /// Stamps DSS information on a packet leaving a subflow endpoint.
    pub(in crate::sim) fn conn_stamp(&mut self, (c, j): (u16, u8), p: &mut Packet) {
        let cn = &mut self.conns[c as usize];
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
                // mptcp_set_rwin: the window this ACK advertises is the read rule's reference.
                cn.old_wspace = p.data_wnd;
            }
            _ => {}
        }
    }

    /// A data segment's DSN range reaches the connection; returns the bytes that became in
    /// order, which the application reads at once (`conn_on_read`).
    pub(in crate::sim) fn conn_on_data(&mut self, now: Time, (c, _j): (u16, u8), p: &Packet) -> u64 {
        let cn = &mut self.conns[c as usize];
        let delivered = cn.rx.on_data(p.dsn, p.len as u64);
        if delivered > 0 {
            cn.bins.add(now.ns(), delivered);
            cn.delivered_bytes += delivered;
            if now >= cn.start && now <= cn.stop {
                cn.goodput_bytes += delivered;
            }
        }
        delivered
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
    pub(in crate::sim) fn conn_on_read(&mut self, now: Time, c: u16, copied: u64) {
        if copied == 0 {
            return;
        }
        let cn = &self.conns[c as usize];
        // The reader takes everything in order at once: what remains queued is the
        // out-of-order data.
        let rx_empty = cn.rx.ooo_bytes == 0;
        let space = cn.rx.window();
        let cleanup = space > 0 && space >= 2 * cn.old_wspace;
        let kernel = cn.kernel;
        for j in 0..cn.subs.len() {
            let st = &self.conns[c as usize].subs[j];
            if !st.established {
                continue;
            }
            let f = st.flow;
            let rx = self.flows[f as usize].receiver.as_mut().expect("a subflow has a receiver");
            let acked = match kernel {
                Kernel::V09x => rx.cleanup_rbuf(now, copied, rx_empty, &mut self.out),
                Kernel::Upstream if cleanup || rx.could_cleanup(rx_empty) => {
                    let held = rx.nothing_held();
                    rx.cleanup_rbuf(now, copied, held, &mut self.out)
                }
                Kernel::Upstream => false,
            };
            if acked {
                self.after_endpoint(now, f);
            }
        }
    }

    pub(in crate::sim) fn conn_on_ack(&mut self, now: Time, (c, j): (u16, u8), p: &Packet, prior_una: u64) {
        let cn = &mut self.conns[c as usize];
        let data_advanced = p.data_ack > cn.data_una;
        if data_advanced {
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
        // Anything from the peer revives a stale subflow (upstream: rcv_tstamp moves, which
        // mptcp_subflow_active sees at once); its loss count is reset only by the next check
        // (mptcp_pm_subflow_chk_stale, stale.rs), and until then the subflow's timer stays out
        // of the connection timer's interval (mptcp_timeout_from_subflow). A valid ACK clears
        // pf (v0.9x tcp_ack).
        st.last_ack = now;
        st.stale = false;
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
        if data_advanced {
            self.conn_rtx_on_progress(now, c);
            self.conn_writer_wake(c);
        }
        // ack_update_msk: a window beyond snd_nxt pushes pending data (__mptcp_check_push).
        let min_mss = self.conn_min_mss(c);
        let cn = &mut self.conns[c as usize];
        if cn.peer_right.saturating_sub(cn.data_nxt) >= min_mss {
            cn.pass_due = true;
        }
        self.conn_push(now, c);
    }
}
