//! The packet scheduler's loop: the views it decides on (`SubflowView` per subflow, `ConnView`
//! with v0.9x's head-of-line subflow, the meta write queue head's path_mask), the decisions while
//! it keeps choosing a subflow (as v0.9x mptcp_write_xmit asks the scheduler's next_segment,
//! net/mptcp/mptcp_output.c and mptcp_sched.c), each chunk's assignment (a queued reinjection
//! first, else whole segments of new data within the peer's window and the send buffer: a meta
//! skb's worth as the cwnd allows for minRTT and its kin, `next_segment_bytes`; the
//! redundant scheduler's copies as mptcp_redundant.c), the hand-off to the subflow's send queue
//! with its DSN mapping, and the push's flush asked of whoever runs the connection.

use super::{Connection, Effect, SubflowIo, MAX_DECISIONS};
use crate::mptcp::sched::{meta_mss, meta_skb_bytes, next_segment_bytes, ConnView, SubflowView};
use crate::scenario::Kernel;
use crate::tcp::cc::CaState;
use crate::time::Time;

/// The application's write size, bytes: iperf3's TCP default (DEFAULT_TCP_BLKSIZE, src/iperf.h),
/// the papers' tool. v0.9x's subflow segments carry PSH where a write ends (`give`).
const APP_WRITE_BYTES: u64 = 128 * 1024;

impl Connection {
    // ----- views -----

    pub(super) fn fill_views(&mut self, io: &mut impl SubflowIo) {
        let mut views = std::mem::take(&mut self.views);
        views.clear();
        for j in 0..self.subs.len() {
            views.push(self.view_of(j, io));
        }
        self.views = views;
    }

    /// Refreshes subflow `j`'s view only: after an assignment to `j` with no scheduler actions,
    /// nothing else in the connection changed (the views stay as `fill_views` would make them).
    fn refresh_view(&mut self, j: usize, io: &mut impl SubflowIo) {
        let v = self.view_of(j, io);
        self.views[j] = v;
    }

    /// What the scheduler sees of subflow `j`.
    fn view_of(&self, j: usize, io: &mut impl SubflowIo) -> SubflowView {
        let st = &self.subs[j];
        let link_up = io.link_up(st.flow);
        let s = io.sender_out(st.flow).0;
        debug_assert_eq!(st.mss, s.mss(), "a subflow's MSS is its sender's");
        let srtt = s.rtt.srtt();
        SubflowView {
            id: j,
            path: st.path,
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
            mss: st.mss,
            srtt_ns: srtt.map_or(0, |t| t.ns()),
            rttvar_ns: srtt.map_or(0, |_| s.rtt.rttvar().ns()),
            pacing_rate_bps: if self.pacing_in_views { s.stack_pacing_rate_memo() } else { 0 },
            delivered_bytes: s.snd_una,
            link_up,
            scanning: st.scanning,
            throttled: s.tsq_throttled(),
        }
    }

    /// SOCK_NOSPACE of the application's socket, which the subflows share (tcp/sender/idle.rs):
    /// the writer has more than the connection's send buffer takes.
    /// Only the connection sets the flag, so the subflows are visited only when it changes.
    fn sync_writer_blocked(&mut self, io: &mut impl SubflowIo) {
        let blocked = self.data_limit > self.data_una.saturating_add(self.sndbuf);
        if self.writer_blocked == Some(blocked) {
            return;
        }
        self.writer_blocked = Some(blocked);
        for st in &self.subs {
            io.sender_out(st.flow).0.set_owner_writer_blocked(blocked);
        }
    }

    pub(super) fn conn_view(&self) -> ConnView {
        let in_flight = self.data_nxt - self.data_una.min(self.data_nxt);
        let window_free = self.peer_right.saturating_sub(self.data_nxt);
        let sndbuf_free = self.sndbuf.saturating_sub(in_flight);
        // The subflow that first carried the oldest un-data-ACKed byte (v0.9x: the head of the
        // meta write queue's path_mask).
        let hol = self.carriers.front().map(|&(_, j)| j as usize);
        // Upstream hands out only what the writer has written: mptcp_send_head is the first
        // fragment the writer queued and no subflow took, so snd_nxt never passes write_seq
        // (net/mptcp/protocol.c). v0.9x's meta socket is modelled with its writer ahead.
        let written = match self.info.kernel {
            Kernel::Upstream => self.written.min(self.data_limit),
            _ => self.data_limit,
        };
        ConnView {
            unassigned_bytes: written.saturating_sub(self.data_nxt),
            send_window_free_bytes: window_free,
            data_in_flight_bytes: in_flight,
            reinjecting: !self.reinject.is_empty(),
            data_acked_bytes: self.data_una,
            sndbuf_free_bytes: sndbuf_free,
            hol_subflow: hol,
        }
    }

    // ----- scheduling -----

    /// Hands connection data to subflows while the scheduler keeps choosing one, then asks
    /// for the flush (`Effect::Push`, which ends with `after_push`).
    pub fn push(&mut self, now: Time, io: &mut impl SubflowIo) {
        self.sync_sndbuf(io);
        self.sync_writer_blocked(io);
        // A scheduling pass in the kernel's sense (stale.rs): a push point ran and written
        // data is pending.
        let pass = std::mem::take(&mut self.pass_due) && self.send_head();
        let mut retried = false;
        // The subflow the last decision assigned to, when that was all that changed.
        let mut only: Option<usize> = None;
        for _ in 0..MAX_DECISIONS {
            let view = self.conn_view();
            let has_new = view.unassigned_bytes > 0;
            if !has_new && !view.reinjecting {
                break;
            }
            match only.take() {
                Some(j) => self.refresh_view(j, io),
                None => self.fill_views(io),
            }
            let pick = self.sched.select(now, &view, &self.views, &mut self.actions);
            // Usually no actions: checked here, without the call.
            let acted = !self.actions.is_empty() && self.apply_actions(now, io);
            let Some(j) = pick else {
                self.stats.waits += 1;
                // The actions may have made room (a penalty, a retransmission): ask once more,
                // but not again and again while the scheduler keeps waiting.
                if acted && !retried {
                    retried = true;
                    continue;
                }
                break;
            };
            if !self.assign(now, j, &view, io) {
                break;
            }
            if !acted {
                only = Some(j);
            }
        }
        self.pushed_pass = pass;
        self.effects.push(Effect::Push);
    }

    /// Gives subflow `j` its next chunk: a reinjection if one is queued, else new data within
    /// the peer's window and the send buffer. False if nothing could be assigned.
    fn assign(&mut self, now: Time, j: usize, view: &ConnView, io: &mut impl SubflowIo) -> bool {
        let Some(v) = self.views.get(j) else { return false };
        let mss = v.mss as u64;
        let burst = if self.sched.hands_out_skbs() {
            next_segment_bytes(v, meta_skb_bytes(meta_mss(&self.views).unwrap_or(v.mss)))
        } else {
            self.sched.burst_bytes(v).max(mss)
        };
        let (dsn, len, reinjected) = if let Some((d, l)) = self.reinject.pop(self.data_una, burst) {
            (d, l, true)
        } else {
            let room = view.unassigned_bytes.min(view.send_window_free_bytes).min(view.sndbuf_free_bytes);
            let mut len = burst.min(room);
            let tail = self.app_done && len == view.unassigned_bytes;
            // Upstream copies whatever the peer's window still allows, however short
            // (mptcp_sendmsg_frag: mptcp_check_allowed_size clamps the copy to wnd_end -
            // data_seq, net/mptcp/protocol.c): the window's last sliver goes as a short segment,
            // which the receiver ACKs as soon as the reader takes it (ICSK_ACK_PUSHED,
            // mptcp_subflow_could_cleanup) instead of holding the data ACK that reopens the
            // window for the 40 ms delayed ACK. v0.9x segments the meta queue by whole MSS.
            let window_edge = self.info.kernel == Kernel::Upstream && len > 0 && len == view.send_window_free_bytes;
            if len < mss && !tail && !window_edge {
                // Only whole segments, so a segment never straddles two mappings.
                return false;
            }
            if !tail && !window_edge {
                len -= len % mss;
            }
            if len == 0 {
                return false;
            }
            let d = self.data_nxt;
            self.data_nxt += len;
            (d, len, false)
        };
        self.stats.decisions += 1;
        if !reinjected {
            self.carriers.push_back((dsn + len, j as u8));
        }
        if reinjected {
            self.stats.reinjections += 1;
            self.stats.reinjected_bytes += len;
            self.subs[j].reinjected_bytes += len;
        }
        self.give(now, j, dsn, len, io);
        if self.sched.redundant() {
            // The redundant scheduler copies every chunk onto each other established, non-pf,
            // non-backup subflow (none when the original went to a backup), as
            // mptcp_redundant.c does. Deviation: only onto one with cwnd room now, so a slow
            // subflow's queue of copies stays bounded (the source drops stale copies later).
            let orig_backup = self.views[j].backup;
            for k in 0..self.views.len() {
                let w = self.views[k];
                if !orig_backup && k != j && w.established && !w.pf && !w.stale && !w.backup && w.has_cwnd_room() {
                    self.stats.redundant_bytes += len;
                    self.give(now, k, dsn, len, io);
                }
            }
        }
        true
    }

    /// Appends data [dsn, dsn + len) to subflow `j`'s send queue and lets it send.
    pub(super) fn give(&mut self, now: Time, j: usize, dsn: u64, len: u64, io: &mut impl SubflowIo) {
        let st = &mut self.subs[j];
        st.scheduled_bytes += len;
        let s = io.sender_out(st.flow).0;
        let sseq = s.app_limit();
        if !st.maps.push(sseq, dsn, len) {
            s.mark_boundary(sseq);
        }
        s.set_app_limit(sseq + len);
        // Upstream ends each subflow's turn with tcp_push (mptcp_push_release, net/mptcp/
        // protocol.c), which marks the subflow's queued tail PSH; the receiver's read ACKs a
        // pending segment that ends a push at once (Linux >= 6.6, tcp/receiver.rs). The model
        // sends at each chunk, so each chunk's end is its push (the kernel has one PSH where
        // two chunks in a row go to the same subflow). v0.9x pushes its subflows without
        // marking them (mptcp_write_xmit -> tcp_transmit_skb); a subflow segment carries the
        // PSH its meta skb had, which the meta socket's tcp_push put on the tail of each
        // application write: iperf3 writes 128 KiB at a time (DEFAULT_TCP_BLKSIZE, src/iperf.h).
        let ends_write =
            (dsn + len) / APP_WRITE_BYTES != dsn / APP_WRITE_BYTES || (self.app_done && dsn + len >= self.data_limit);
        if self.info.kernel == Kernel::Upstream || ends_write {
            s.mark_push(sseq + len);
        }
        self.with_sender(j, io, |s, out| s.try_send(now, out));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    /// v0.9x minRTT hands the subflow what its cwnd quota allows of the meta skb per decision
    /// (mptcp_next_segment): with the initial cwnd of 10, two decisions of 5 segments (half
    /// the cwnd each), not ten of one.
    #[test]
    fn a_minrtt_decision_hands_over_the_cwnd_quota() {
        let (mut cn, mut io) = connection(Kernel::V09x, SchedName::Minrtt, &[false, false], 1 << 20);
        cn.subs[1].established = false;
        write(&mut cn, &mut io, Time::ZERO, 20 * MSS as u64);
        assert_eq!(io.data_on(0).len(), 10, "the initial cwnd's worth goes");
        assert_eq!(cn.stats.decisions, 2, "half the cwnd per decision");
    }

    /// Round-robin keeps its one segment per decision (mptcp_rr.c's quota of 1).
    #[test]
    fn round_robin_still_hands_over_one_segment() {
        let (mut cn, mut io) = connection(Kernel::V09x, SchedName::Roundrobin, &[false, false], 1 << 20);
        cn.subs[1].established = false;
        write(&mut cn, &mut io, Time::ZERO, 20 * MSS as u64);
        assert_eq!(io.data_on(0).len(), 10);
        assert_eq!(cn.stats.decisions, 10);
    }
}
