//! Upstream Linux MPTCP's connection-level retransmission timer and stale-subflow detection
//! (`kernel = "linux-upstream"`), as net/mptcp/protocol.c and pm.c run them:
//!
//! - the MPTCP socket has its own retransmission timer, re-armed (mptcp_reset_rtx_timer) with
//!   the interval the socket keeps, msk->timer_ival: whenever the data ACK advances with data
//!   still unacknowledged (__mptcp_clean_una, also at the start of every firing's
//!   __mptcp_retrans), and when data is pushed with the timer stopped; stopped when everything
//!   is data-ACKed (mptcp_stop_rtx_timer);
//! - the interval is not recomputed at a re-arm: it is set by a scheduling pass
//!   (mptcp_subflow_get_send -> __mptcp_set_timeout; mptcp_set_timeout between fragments of a
//!   push) to the most jiffies left until the expiry of the pending retransmit timer
//!   (`icsk_timeout - jiffies`: the RTO, or the tail loss probe while armed; the expiry, not the
//!   later tick the timer wheel runs it at) of any active subflow not counting losses
//!   (mptcp_timeout_from_subflow: 0 while stale_count > 0), else TCP_RTO_MIN. A pass runs only
//!   when written data waits unsent (mptcp_send_head) and one of the kernel's push points runs:
//!   an ACK leaving the peer's window beyond snd_nxt (ack_update_msk -> __mptcp_check_push ->
//!   __mptcp_subflow_push_pending), the writer's sendmsg (__mptcp_push_pending), or the worker
//!   after a firing (__mptcp_retrans -> mptcp_check_and_set_pending -> mptcp_release_cb). A
//!   bulk writer sleeps on a full send buffer and is woken when a third of it is free
//!   (mptcp_write_space -> sk_stream_write_space: free >= queued / 2), checked when the data
//!   ACK moves and when a subflow's ACK shrinks its queue (tcp_new_space: the buffer grows with
//!   that subflow's window; packets.rs `after_ack`), so with the send buffer binding, the data
//!   ACK stalled and no subflow acknowledging anything no pass runs and every firing re-arms
//!   with the interval of the last pass before the stall (`writer_wake`). The model's own push calls (TSQ
//!   completions, subflow RTOs, link events) hand out data as before but are not passes;
//! - each time it fires (mptcp_retransmit_timer -> mptcp_worker -> __mptcp_retrans ->
//!   mptcp_subflow_get_retrans), every subflow with data outstanding is checked
//!   (mptcp_pm_subflow_chk_stale): if nothing has arrived on it since the previous check
//!   (tcp_sock rcv_tstamp unchanged) its stale_count grows, else it is reset; once it exceeds
//!   net.mptcp.stale_loss_cnt (4) while another active subflow has fewer than
//!   max(stale_loss_cnt - 1, 1) (mptcp_pm_subflows_chk_stale), the subflow is marked stale and
//!   its pending data is sent again on the others (__mptcp_retransmit_pending_data);
//! - then __mptcp_retrans resends the oldest data not yet data-ACKed (the rest of the first
//!   data fragment, `retrans_len`) on a subflow with nothing outstanding at TCP level, a non-backup one
//!   first (a backup only when no subflow made progress: min stale_count > 1). A backlogged
//!   transfer has such a subflow once the peer's window is held by a hole on a failed path:
//!   the healthy subflow drains, and this retransmission is what fills the hole.
//!
//! So a blocked subflow goes stale after ~5 intervals of the *healthy* subflows' timers, not
//! after its own exponentially backed-off RTOs (0.2 + 0.4 + 0.8 + 1.6 s); the first two
//! firings come at the interval of the last pass before the blockage (the firing's re-arm
//! precedes its pass), the later ones at what the pass after a firing found.

use super::{Connection, Effect, SubflowIo, Timer, STALE_LOSS_CNT};
use crate::mptcp::pm::PmEvent;
use crate::scenario::Kernel;
use crate::tcp::timer_wheel::TimerWheel;
use crate::time::Time;

/// Linux TCP_RTO_MIN (200 ms): the MPTCP timer's interval when no subflow timer is pending.
pub(super) const TCP_RTO_MIN: Time = Time::from_ms(200);
/// The data one fragment of a backlogged writer holds. mptcp_sendmsg fills fragments from the
/// socket's page frag (sk_page_frag: 32 KiB compound pages, SKB_FRAG_PAGE_ORDER = 3), each page
/// starting with its 40-byte struct mptcp_data_frag (mptcp_carve_data_frag; list_head 16,
/// data_seq 8, four u16, page pointer 8), and a write continuing on the same page extends the
/// fragment (mptcp_frag_can_collapse_to): 32768 - 40 = 32728 bytes, the mapping length the
/// emulator's captures show (`mptcp dss ... len 32728`).
const DFRAG_DATA: u64 = 32 * 1024 - 40;

/// What one __mptcp_retrans resends from `dsn` (the data ACK): the rest of the retransmit
/// queue's first fragment (__mptcp_clean_una trims a partly acknowledged fragment's head, and
/// the resend stops at its already_sent end), at most what was sent.
fn retrans_len(dsn: u64, data_nxt: u64) -> u64 {
    let end = (dsn / DFRAG_DATA + 1) * DFRAG_DATA;
    end.min(data_nxt).saturating_sub(dsn)
}

/// mptcp_subflow_get_send's timeout, in jiffies: over the active subflows (`(active,
/// stale_count, when the wheel runs its pending retransmit timer)`), the most jiffies left
/// until the expiry of a pending timer of one with stale_count 0 (mptcp_timeout_from_subflow:
/// `icsk_timeout - jiffies`, the timer's expiry tick, not the later tick the wheel runs it
/// at), else TCP_RTO_MIN (__mptcp_set_timeout: `tout > 0 ? tout : TCP_RTO_MIN`, so a timer
/// due this tick counts for nothing either).
fn timer_interval(now: Time, wheel: &TimerWheel, subs: impl Iterator<Item = (bool, u32, Option<Time>)>) -> u64 {
    let now_tick = wheel.tick_of(now);
    let mut tout = 0;
    for (active, stale_count, deadline) in subs {
        if !active || stale_count > 0 {
            continue;
        }
        if let Some(t) = deadline {
            tout = tout.max(wheel.expiry_of(t).saturating_sub(now_tick));
        }
    }
    if tout > 0 {
        tout
    } else {
        wheel.ticks(TCP_RTO_MIN)
    }
}

/// A writer sleeping on a full send buffer (`written` bytes written, `una` data-ACKed, `limit`
/// what the application has) is woken (sk_stream_write_space: __sk_stream_is_writeable,
/// sk_stream_wspace >= sk_stream_min_wspace): the free space is at least half the queued.
fn writer_wakes(written: u64, una: u64, limit: u64, sndbuf: u64) -> bool {
    if written >= limit {
        return false;
    }
    let queued = written.saturating_sub(una);
    sndbuf.saturating_sub(queued) >= queued / 2
}

impl Connection {
    /// mptcp_subflow_get_send's __mptcp_set_timeout: the interval becomes the longest time left
    /// on the pending retransmit timer of an active subflow (established, not stale) that is
    /// not counting losses, else TCP_RTO_MIN.
    fn set_timeout(&mut self, now: Time, io: &impl SubflowIo) {
        if self.info.kernel != Kernel::Upstream {
            return;
        }
        let subs = self.subs.iter().map(|st| {
            let s = io.sender(st.flow);
            (st.established && !st.stale, st.stale_count, s.xmit_timer_deadline())
        });
        self.timer_ival = timer_interval(now, &self.info.wheel, subs);
    }

    /// mptcp_reset_rtx_timer: the connection's retransmission timer runs from now for the
    /// interval the last scheduling pass set (`sk_reset_timer(jiffies + timer_ival)`, the
    /// interval in jiffies), on the kernel's timer wheel (tcp/timer_wheel.rs). Returns the
    /// timer event to ask for, if any.
    fn rtx_restart(&mut self, now: Time) -> Option<Time> {
        if self.info.kernel != Kernel::Upstream {
            return None;
        }
        let ival = self.timer_ival;
        self.rtx_set(self.info.wheel.fire_at(now, ival))
    }

    /// The kernel's pending data (mptcp_send_head): written by the application and not yet
    /// handed to a subflow, or queued for reinjection (__mptcp_retransmit_pending_data points
    /// first_pending back at the retransmit queue's head).
    pub(super) fn send_head(&self) -> bool {
        let pending = self.written.min(self.data_limit).saturating_sub(self.data_nxt);
        pending >= self.min_mss() || (self.app_done && pending > 0) || !self.reinject.is_empty()
    }

    /// The smallest MSS of the connection's established subflows. The model hands out whole
    /// segments only (schedule.rs `assign`, but for upstream's sliver at the window's edge)
    /// where the kernel copies any sliver the window or the written data allows
    /// (mptcp_sendmsg_frag): a sliver smaller than this is what the kernel would have sent
    /// already, so it is neither pending data nor window room.
    /// (A subflow's `mss` is its sender's, both set when it is built: no sender is visited.)
    pub(super) fn min_mss(&self) -> u64 {
        let mss = self.subs.iter().filter(|st| st.established).map(|st| st.mss);
        u64::from(mss.min().unwrap_or(1).max(1))
    }

    /// The writer (sendmsg) fills the send buffer: it writes up to the buffer's size ahead of
    /// the data ACK, or what the application has produced, and pushes (a scheduling pass).
    pub(super) fn writer_write(&mut self) {
        let room = self.data_una.saturating_add(self.sndbuf);
        self.written = self.written.max(self.data_limit.min(room));
        self.pass_due = true;
    }

    /// The data ACK moved: a writer sleeping on a full send buffer is woken once a third of
    /// it is free (mptcp_write_space -> sk_stream_write_space: __sk_stream_is_writeable,
    /// sk_stream_wspace >= sk_stream_min_wspace, i.e. free >= queued / 2) and writes.
    pub(super) fn writer_wake(&mut self) {
        if writer_wakes(self.written, self.data_una, self.data_limit, self.sndbuf) {
            self.writer_write();
        }
    }

    /// Sets the deadline; at most one timer event is asked for at a time, at or before it (a
    /// later deadline is picked up when that event fires), so restarting the timer on every
    /// data ACK costs no event. Returns the event to ask for, if a new one is needed.
    fn rtx_set(&mut self, t: Time) -> Option<Time> {
        self.rtx_at = Some(t);
        if self.rtx_event.is_none_or(|e| e > t) {
            self.rtx_event = Some(t);
            return Some(t);
        }
        None
    }

    /// The data ACK moved (or data was pushed): restart the timer while data is outstanding,
    /// stop it when all is acknowledged.
    pub(super) fn rtx_on_progress(&mut self, now: Time) {
        if self.info.kernel != Kernel::Upstream {
            return;
        }
        if self.data_una < self.data_nxt {
            if let Some(t) = self.rtx_restart(now) {
                self.effects.push(Effect::Timer(t, Timer::Rtx));
            }
        } else {
            // mptcp_stop_rtx_timer
            self.rtx_at = None;
            self.timer_ival = 0;
        }
    }

    /// The end of a push, after its flush (`Effect::Push`): if it was a scheduling pass, the
    /// interval is set; data handed to the subflows starts the timer if it is not running
    /// (__mptcp_push_pending: `if (!mptcp_rtx_timer_pending(sk)) mptcp_reset_rtx_timer(sk)`).
    /// The kernel pushes data only after a pass, so a push that starts the timer counts as
    /// one. Returns when the retransmission timer's event is to be asked for (`Timer::Rtx`).
    pub fn after_push(&mut self, now: Time, io: &impl SubflowIo) -> Option<Time> {
        if self.info.kernel != Kernel::Upstream {
            return None;
        }
        let start = self.rtx_at.is_none() && self.data_una < self.data_nxt;
        if self.pushed_pass || start {
            self.set_timeout(now, io);
        }
        if start {
            return self.rtx_restart(now);
        }
        None
    }

    /// The connection's retransmission timer event (`Timer::Rtx`).
    pub fn on_rtx_timer(&mut self, now: Time, io: &mut impl SubflowIo) {
        if self.rtx_event == Some(now) {
            self.rtx_event = None;
        }
        match self.rtx_at {
            Some(t) if t <= now => {}
            Some(t) => {
                // Restarted since this event was asked for: wait for the new deadline.
                if let Some(t) = self.rtx_set(t) {
                    self.effects.push(Effect::Timer(t, Timer::Rtx));
                }
                return;
            }
            None => return,
        }
        self.rtx_at = None;
        // __mptcp_retrans begins with mptcp_clean_una_wakeup: with data outstanding the timer
        // is re-armed with the interval the last pass set, before this firing's own pass.
        if self.data_una < self.data_nxt {
            if let Some(t) = self.rtx_restart(now) {
                self.effects.push(Effect::Timer(t, Timer::Rtx));
            }
        }
        let min_stale = self.chk_stale(io);
        self.retrans(now, min_stale, io);
        // mptcp_check_and_set_pending: pending data is pushed when the worker releases the
        // socket (mptcp_release_cb -> __mptcp_push_pending), a scheduling pass.
        self.pass_due = true;
        self.push(now, io);
        self.pm_flush(now, io);
    }

    /// __mptcp_retrans: the oldest data not yet data-ACKed goes out again on a subflow with
    /// nothing outstanding (mptcp_subflow_get_retrans's pick), if there is one.
    fn retrans(&mut self, now: Time, min_stale: u32, io: &mut impl SubflowIo) {
        if self.data_una >= self.data_nxt {
            return;
        }
        let (mut pick, mut backup) = (None, None);
        for (j, st) in self.subs.iter().enumerate() {
            let s = io.sender(st.flow);
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
        let dsn = self.data_una;
        let len = retrans_len(dsn, self.data_nxt);
        self.stats.reinjections += 1;
        self.stats.reinjected_bytes += len;
        self.subs[j].reinjected_bytes += len;
        self.give(now, j, dsn, len, io);
    }

    /// mptcp_subflow_get_retrans's walk: mptcp_pm_subflow_chk_stale on every subflow with data
    /// outstanding, then mptcp_pm_subflows_chk_stale on one past the limit. Returns the lowest
    /// stale_count among them (u32::MAX if none had data outstanding).
    fn chk_stale(&mut self, io: &mut impl SubflowIo) -> u32 {
        let mut min_stale = u32::MAX;
        for j in 0..self.subs.len() {
            let st = &mut self.subs[j];
            let s = io.sender(st.flow);
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
            let alternative = self
                .subs
                .iter()
                .enumerate()
                .any(|(k, o)| k != j && o.established && !o.stale && o.stale_count < active_max);
            if !alternative {
                continue;
            }
            let (una, nxt) = (s.snd_una, s.snd_nxt);
            let st = &mut self.subs[j];
            st.stale = true;
            let reinject = &mut self.reinject;
            st.maps.for_each_range(una, nxt, |d, l| reinject.push(d, l));
            self.reclaim(j, io);
            if self.pm_hears_transport() {
                self.pm_note(j, |path, subflow| PmEvent::SubflowStale { path, subflow });
            }
        }
        min_stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    /// The interval is the longest time left on an active, non-loss-counting subflow's timer;
    /// a subflow counting losses, a stale one, an expired or absent timer count for nothing;
    /// nothing left gives TCP_RTO_MIN.
    #[test]
    fn interval_from_the_pending_timers() {
        // HZ = 250: 4 ms ticks; now is tick 250. A timer the wheel runs at tick k expired at
        // tick k - 1 (level 0), so it has k - 1 - 250 jiffies left.
        let w = TimerWheel::new(250);
        let now = ms(1001);
        let subs = [(true, 0, Some(ms(1032))), (true, 0, Some(ms(1012))), (true, 0, None)];
        assert_eq!(timer_interval(now, &w, subs.into_iter()), 7);
        let counting = [(true, 1, Some(ms(1400))), (true, 0, Some(ms(1012)))];
        assert_eq!(timer_interval(now, &w, counting.into_iter()), 2);
        let stale = [(false, 0, Some(ms(1400))), (true, 0, Some(ms(1012)))];
        assert_eq!(timer_interval(now, &w, stale.into_iter()), 2);
        // Expired, due this tick (runs next tick: 0 jiffies left), absent, or only on subflows
        // counting losses: TCP_RTO_MIN, 50 jiffies.
        let none = [(true, 2, Some(ms(1400))), (true, 0, Some(ms(900))), (true, 0, Some(ms(1004))), (true, 0, None)];
        assert_eq!(timer_interval(now, &w, none.into_iter()), 50);
        assert_eq!(timer_interval(now, &w, std::iter::empty()), 50);
    }

    /// The writer wakes once a third of the buffer is free (free >= queued / 2), never when
    /// it has written everything the application has.
    /// The resend ends at the fragment's end: a whole fragment from its start, the rest of a
    /// partly acknowledged one, never beyond what was sent.
    #[test]
    fn a_resend_is_the_rest_of_the_first_fragment() {
        assert_eq!(retrans_len(0, 1 << 30), 32_728);
        assert_eq!(retrans_len(32_728, 1 << 30), 32_728);
        assert_eq!(retrans_len(32_728 + 27_912, 1 << 30), 4816);
        assert_eq!(retrans_len(100, 1000), 900);
        assert_eq!(retrans_len(1000, 1000), 0);
    }

    #[test]
    fn writer_wakes_at_a_third_free() {
        // 3 MB buffer, 2 MB queued: 1 MB free = queued / 2.
        assert!(writer_wakes(3_000_000, 1_000_000, u64::MAX, 3_000_000));
        assert!(!writer_wakes(3_000_000, 999_000, u64::MAX, 3_000_000));
        assert!(writer_wakes(3_000_000, 3_000_000, u64::MAX, 3_000_000));
        assert!(!writer_wakes(3_000_000, 2_000_000, 3_000_000, 3_000_000), "all written");
    }
}

#[cfg(test)]
mod state_tests {
    use super::super::testkit::*;

    /// Upstream: subflow 0 never answers while subflow 1 does. Every firing of the connection
    /// timer counts one more fruitless interval on subflow 0; past stale_loss_cnt (4) it is
    /// stale and its data is sent on subflow 1; anything from its peer revives it.
    #[test]
    fn a_silent_subflow_goes_stale_after_stale_loss_cnt_firings_and_revives() {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], 1 << 20);
        cn.subs[1].established = true;
        write(&mut cn, &mut io, Time::ZERO, 4 * MSS as u64);
        assert!(!io.data_on(0).is_empty());
        let on_0 = io.senders[0].snd_nxt;
        let mut now = ms(1);
        for firing in 1..=5u32 {
            // Subflow 1 hears from its peer (whatever it carries is ACKed), subflow 0 does not.
            let nxt1 = io.senders[1].snd_nxt;
            ack(&mut cn, &mut io, now, 1, nxt1, 0, 1 << 20);
            now = cn.rtx_at.expect("data outstanding: the timer runs").max(now);
            cn.on_rtx_timer(now, &mut io);
            settle(&mut cn, &mut io, now);
            assert_eq!(cn.subs[0].stale_count, firing);
            assert_eq!(cn.subs[0].stale, firing == 5, "firing {firing}");
            now += ms(1);
        }
        // Its outstanding data went to subflow 1.
        let on_1: u64 = io.data_on(1).iter().filter(|d| d.1 < on_0).map(|d| d.2 as u64).sum();
        assert!(on_1 >= on_0, "subflow 0's {on_0} bytes sent again on subflow 1 ({on_1})");
        // An ACK on subflow 0, even of nothing new, revives it.
        let una0 = io.senders[0].snd_una;
        ack(&mut cn, &mut io, now, 0, una0, 0, 1 << 20);
        assert!(!cn.subs[0].stale);
        assert_eq!(cn.subs[0].state_code(), 0);
    }

    /// Upstream hands out only what the writer has written (snd_nxt never passes write_seq):
    /// with the writer asleep on a full send buffer, an ACK that frees part of it (less than the
    /// third that wakes the writer) leaves room in the buffer but nothing new to hand out.
    #[test]
    fn only_written_data_is_handed_out() {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false], 1 << 20);
        cn.sndbuf = 9 * MSS as u64;
        write(&mut cn, &mut io, Time::ZERO, u64::MAX);
        assert_eq!((cn.written, cn.data_nxt), (9 * MSS as u64, 9 * MSS as u64));
        // Two segments data-ACKed: 7 of 9 still queued, 2 free (< 7 / 2): the writer sleeps.
        let nxt = io.senders[0].snd_nxt;
        ack(&mut cn, &mut io, ms(1), 0, nxt, 2 * MSS as u64, 1 << 20);
        assert_eq!(cn.written, 9 * MSS as u64, "the writer is still asleep");
        assert_eq!(cn.data_nxt, 9 * MSS as u64, "nothing beyond what was written");
        // A third more ACKed: the writer wakes, writes the buffer full, and that goes out.
        ack(&mut cn, &mut io, ms(2), 0, nxt, 5 * MSS as u64, 1 << 20);
        assert_eq!(cn.written, 14 * MSS as u64);
        assert_eq!(cn.data_nxt, 14 * MSS as u64);
    }

    /// mptcp_reset_rtx_timer arms a timer_list (sk_reset_timer): the connection's timer runs on
    /// the kernel's timer wheel, as its subflows' do (tcp/timer_wheel.rs).
    #[test]
    fn the_connection_timer_runs_on_the_timer_wheel() {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false], 1 << 20);
        write(&mut cn, &mut io, ms(1), 4 * MSS as u64);
        // The interval: the jiffies left on subflow 0's initial RTO (1 s = 250 ticks from tick
        // 0, level 1, run at tick 256 = 1.024 s; its expiry read back from the run as at most
        // tick 255), from tick 0.
        assert_eq!(cn.timer_ival, 255);
        // 255 ticks from tick 0, level 1 (8-tick buckets): run at tick 256 = 1.024 s, as the
        // kernel's 250 would.
        assert_eq!(cn.rtx_at, Some(ms(1024)));
    }

    /// Without a healthy alternative a silent subflow is not marked stale.
    #[test]
    fn no_stale_mark_without_an_alternative() {
        let (mut cn, mut io) = connection(Kernel::Upstream, SchedName::Upstream, &[false, false], 1 << 20);
        write(&mut cn, &mut io, Time::ZERO, 4 * MSS as u64);
        let mut now = ms(1);
        for _ in 0..8 {
            now = cn.rtx_at.expect("timer runs").max(now);
            cn.on_rtx_timer(now, &mut io);
            settle(&mut cn, &mut io, now);
            now += ms(1);
        }
        assert!(cn.subs[0].stale_count > 4);
        assert!(!cn.subs[0].stale, "subflow 1 never joined");
    }
}
