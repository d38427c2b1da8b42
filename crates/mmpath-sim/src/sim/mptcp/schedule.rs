//! The packet scheduler's loop: the views it decides on (`SubflowView` per subflow, `ConnView`
//! with v0.9x's head-of-line subflow, the meta write queue head's path_mask), the decisions while
//! it keeps choosing a subflow (as v0.9x mptcp_write_xmit asks the scheduler's next_segment,
//! net/mptcp/mptcp_output.c and mptcp_sched.c), each chunk's assignment (a queued reinjection
//! first, else whole segments of new data within the peer's window and the send buffer; the
//! redundant scheduler's copies as mptcp_redundant.c), the hand-off to the subflow's send queue
//! with its DSN mapping, and the flush that sends and arms the subflows' timers.

use super::MAX_DECISIONS;
use crate::mptcp::sched::{ConnView, SubflowView};
use crate::sim::Simulation;
use crate::tcp::cc::CaState;
use crate::time::Time;

impl Simulation {
    // ----- views -----

    pub(super) fn fill_views(&mut self, c: u16) {
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

    /// SOCK_NOSPACE of the application's socket, which the subflows share (tcp/sender/idle.rs):
    /// the writer has more than the connection's send buffer takes.
    fn sync_writer_blocked(&mut self, c: u16) {
        let cn = &self.conns[c as usize];
        let blocked = cn.data_limit > cn.data_una.saturating_add(cn.sndbuf);
        for st in &cn.subs {
            if let Some(s) = self.flows[st.flow as usize].sender.as_mut() {
                s.set_owner_writer_blocked(blocked);
            }
        }
    }

    pub(super) fn conn_view(&self, c: u16) -> ConnView {
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
    pub(in crate::sim) fn conn_push(&mut self, now: Time, c: u16) {
        self.sync_sndbuf(c);
        self.sync_writer_blocked(c);
        // A scheduling pass in the kernel's sense (stale.rs): a push point ran and written
        // data is pending.
        let pass = std::mem::take(&mut self.conns[c as usize].pass_due) && self.conn_send_head(c);
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
        self.conn_rtx_on_push(now, c, pass);
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
    pub(super) fn give(&mut self, now: Time, c: u16, j: usize, dsn: u64, len: u64) {
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

    /// Sends what the subflows produced and keeps their timers armed.
    fn flush_conn(&mut self, now: Time, c: u16) {
        self.flush(now);
        for j in 0..self.conns[c as usize].subs.len() {
            let f = self.conns[c as usize].subs[j].flow;
            self.arm_timers(f);
        }
    }
}
