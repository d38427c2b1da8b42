//! Upstream Linux MPTCP's connection-level retransmission timer and stale-subflow detection
//! (`kernel = "linux-upstream"`), as net/mptcp/protocol.c and pm.c run them:
//!
//! - the MPTCP socket has its own retransmission timer (mptcp_reset_rtx_timer), restarted when
//!   new data is pushed with none pending and whenever the data ACK advances with data still
//!   unacknowledged (__mptcp_clean_una), stopped when everything is data-ACKed. Its interval
//!   (mptcp_set_timeout / mptcp_timeout_from_subflow) is the longest time left on the pending
//!   retransmit timer (icsk_timeout: the RTO, or the tail loss probe while that is armed) of any
//!   subflow that is not counting losses (stale_count == 0), else TCP_RTO_MIN;
//! - each time it fires (mptcp_retransmit_timer -> mptcp_worker -> __mptcp_retrans ->
//!   mptcp_subflow_get_retrans), every subflow with data outstanding is checked
//!   (mptcp_pm_subflow_chk_stale): if nothing has arrived on it since the previous check
//!   (tcp_sock rcv_tstamp unchanged) its stale_count grows, else it is reset; once it exceeds
//!   net.mptcp.stale_loss_cnt (4) while another active subflow has fewer than
//!   max(stale_loss_cnt - 1, 1) (mptcp_pm_subflows_chk_stale), the subflow is marked stale and
//!   its pending data is sent again on the others (__mptcp_retransmit_pending_data);
//! - then __mptcp_retrans resends the oldest data not yet data-ACKed (the first data fragment,
//!   up to RETRANS_BYTES) on a subflow with nothing outstanding at TCP level, a non-backup one
//!   first (a backup only when no subflow made progress: min stale_count > 1). A backlogged
//!   transfer has such a subflow once the peer's window is held by a hole on a failed path:
//!   the healthy subflow drains, and this retransmission is what fills the hole.
//!
//! So a blocked subflow goes stale after ~5 intervals of the *healthy* subflows' RTO (about a
//! second), not after its own exponentially backed-off RTOs (0.2 + 0.4 + 0.8 + 1.6 s).

use super::STALE_LOSS_CNT;
use crate::scenario::Kernel;
use crate::sim::{Ev, Simulation};
use crate::time::Time;

/// Linux TCP_RTO_MIN (200 ms): the MPTCP timer's interval when no subflow timer is pending.
const TCP_RTO_MIN: Time = Time::from_ms(200);
/// What one __mptcp_retrans resends: the first data fragment of the retransmit queue. Fragments
/// are filled from the socket's page frag (sk_page_frag: 32 KiB compound pages, SKB_FRAG_PAGE_ORDER
/// = 3) by mptcp_sendmsg, so a backlogged sender's fragments are up to 32 KiB.
const RETRANS_BYTES: u64 = 32 * 1024;

impl Simulation {
    /// mptcp_set_timeout + mptcp_reset_rtx_timer: the connection's retransmission timer runs
    /// from now for the longest time left on a non-loss-counting subflow's RTO.
    pub(super) fn conn_rtx_restart(&mut self, now: Time, c: u16) {
        let cn = &self.conns[c as usize];
        if cn.kernel != Kernel::Upstream {
            return;
        }
        let mut tout = Time::ZERO;
        for st in &cn.subs {
            if st.stale_count > 0 {
                continue;
            }
            let s = self.flows[st.flow as usize].sender.as_ref().expect("tcp");
            if let Some(t) = s.xmit_timer_deadline() {
                if t > now && t - now > tout {
                    tout = t - now;
                }
            }
        }
        let ival = if tout > Time::ZERO { tout } else { TCP_RTO_MIN };
        self.conn_rtx_set(c, Some(now + ival));
    }

    /// Sets the deadline; the engine holds at most one event per connection, at or before it
    /// (a later deadline is picked up when that event fires), so restarting the timer on every
    /// data ACK costs no event.
    fn conn_rtx_set(&mut self, c: u16, at: Option<Time>) {
        let cn = &mut self.conns[c as usize];
        cn.rtx_at = at;
        if let Some(t) = at {
            if cn.rtx_event.is_none_or(|e| e > t) {
                cn.rtx_event = Some(t);
                self.q.schedule(t, Ev::ConnRtx(c));
            }
        }
    }

    /// The data ACK moved (or data was pushed): restart the timer while data is outstanding,
    /// stop it when all is acknowledged.
    pub(super) fn conn_rtx_on_progress(&mut self, now: Time, c: u16) {
        let cn = &self.conns[c as usize];
        if cn.kernel != Kernel::Upstream {
            return;
        }
        if cn.data_una < cn.data_nxt {
            self.conn_rtx_restart(now, c);
        } else {
            self.conns[c as usize].rtx_at = None;
        }
    }

    /// New data was handed to the subflows: start the timer if it is not running.
    pub(super) fn conn_rtx_on_push(&mut self, now: Time, c: u16) {
        let cn = &self.conns[c as usize];
        if cn.kernel == Kernel::Upstream && cn.rtx_at.is_none() && cn.data_una < cn.data_nxt {
            self.conn_rtx_restart(now, c);
        }
    }

    /// The engine's event for the connection's timer.
    pub(in crate::sim) fn conn_rtx_timer(&mut self, now: Time, c: u16) {
        let cn = &mut self.conns[c as usize];
        if cn.rtx_event == Some(now) {
            cn.rtx_event = None;
        }
        match cn.rtx_at {
            Some(t) if t <= now => {}
            Some(t) => {
                // Restarted since this event was queued: wait for the new deadline.
                self.conn_rtx_set(c, Some(t));
                return;
            }
            None => return,
        }
        cn.rtx_at = None;
        let min_stale = self.conn_chk_stale(c);
        self.conn_retrans(now, c, min_stale);
        if self.conns[c as usize].data_una < self.conns[c as usize].data_nxt {
            self.conn_rtx_restart(now, c);
        }
        self.conn_push(now, c);
    }

    /// __mptcp_retrans: the oldest data not yet data-ACKed goes out again on a subflow with
    /// nothing outstanding (mptcp_subflow_get_retrans's pick), if there is one.
    fn conn_retrans(&mut self, now: Time, c: u16, min_stale: u32) {
        let cn = &self.conns[c as usize];
        if cn.data_una >= cn.data_nxt {
            return;
        }
        let (mut pick, mut backup) = (None, None);
        for (j, st) in cn.subs.iter().enumerate() {
            let s = self.flows[st.flow as usize].sender.as_ref().expect("tcp");
            if !st.established || st.stale || s.snd_una < s.app_limit() {
                continue;
            }
            if st.backup {
                backup = backup.or(Some(j));
            } else {
                pick = pick.or(Some(j));
            }
        }
        // "use backup only if there are no progresses anywhere"
        let Some(j) = pick.or(if min_stale > 1 { backup } else { None }) else { return };
        let dsn = cn.data_una;
        let len = RETRANS_BYTES.min(cn.data_nxt - dsn);
        let cn = &mut self.conns[c as usize];
        cn.stats.reinjections += 1;
        cn.stats.reinjected_bytes += len;
        cn.subs[j].reinjected_bytes += len;
        self.give(now, c, j, dsn, len);
    }

    /// mptcp_subflow_get_retrans's walk: mptcp_pm_subflow_chk_stale on every subflow with data
    /// outstanding, then mptcp_pm_subflows_chk_stale on one past the limit. Returns the lowest
    /// stale_count among them (u32::MAX if none had data outstanding).
    fn conn_chk_stale(&mut self, c: u16) -> u32 {
        let mut min_stale = u32::MAX;
        let n = self.conns[c as usize].subs.len();
        for j in 0..n {
            let cn = &mut self.conns[c as usize];
            let st = &mut cn.subs[j];
            let s = self.flows[st.flow as usize].sender.as_ref().expect("tcp");
            if !st.established || s.snd_una >= s.app_limit() {
                continue;
            }
            if st.stale_count == 0 {
                st.stale_stamp = st.last_ack;
                st.stale_count = 1;
            } else if st.stale_stamp != st.last_ack {
                st.stale_count = 0;
                st.stale = false;
            } else {
                st.stale_count = st.stale_count.saturating_add(1);
            }
            min_stale = min_stale.min(st.stale_count);
            if st.stale_count <= 1 {
                continue;
            }
            if st.stale || st.stale_count <= STALE_LOSS_CNT {
                continue;
            }
            // Another active subflow not in loss state?
            let active_max = STALE_LOSS_CNT.saturating_sub(1).max(1);
            let alternative = cn
                .subs
                .iter()
                .enumerate()
                .any(|(k, o)| k != j && o.established && !o.stale && o.stale_count < active_max);
            if !alternative {
                continue;
            }
            let (una, nxt) = (s.snd_una, s.snd_nxt);
            let st = &mut cn.subs[j];
            st.stale = true;
            let reinject = &mut cn.reinject;
            st.maps.for_each_range(una, nxt, |d, l| reinject.push(d, l));
            self.reclaim(c, j);
        }
        min_stale
    }
}
