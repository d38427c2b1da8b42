//! Scans in the simulation: a path's periodic scan requests (link/channel.rs) become a timeline
//! of off-channel dwells and home-channel rests on its radio, and an MPTCP scheduler that
//! arbitrates scans (AMuSe SCAN) can hold a scan until its subflow there has drained.

use super::{Ev, Simulation};
use crate::link::channel::ScanPattern;
use crate::mptcp::pm::PmEvent;
use crate::mptcp::sched::LinkEvent;
use crate::time::Time;

impl Simulation {
    /// Whether an MPTCP scheduler with a subflow on path `pi` arbitrates its scans.
    fn scan_arbitrated(&self, pi: u16) -> bool {
        self.conns
            .iter()
            .any(|cn| cn.sched.arbitrates_scans() && cn.subs.iter().any(|st| self.flows[st.flow as usize].path == pi))
    }

    /// A scan is requested on path `pi` (the channel's periodic scans). Without an arbitrating
    /// scheduler it starts at once. With one (AMuSe SCAN), the scheduler stops assigning to the
    /// subflow and takes back its unsent data, and the scan starts once the subflow's send
    /// queue is empty (seed 004, AMuSe-SCAN).
    pub(super) fn scan_request(&mut self, now: Time, pi: u16, pattern: ScanPattern) {
        let ps = &self.paths[pi as usize];
        if ps.scan_held.is_some() || ps.scan_run.is_some() {
            return; // one scan at a time: a request during a scan is dropped
        }
        if self.scan_arbitrated(pi) {
            self.paths[pi as usize].scan_held = Some(pattern);
            self.conn_link_event(now, pi, LinkEvent::ScanStart);
            self.pm_link_event(now, pi, PmEvent::ScanStart { path: pi });
            self.start_held_scan(now, pi);
        } else {
            self.conn_link_event(now, pi, LinkEvent::ScanStart);
            self.pm_link_event(now, pi, PmEvent::ScanStart { path: pi });
            self.begin_scan(now, pi, pattern);
        }
    }

    /// Starts the held scan on `pi` if every arbitrating subflow there has drained.
    pub(super) fn start_held_scan(&mut self, now: Time, pi: u16) {
        let Some(pattern) = self.paths[pi as usize].scan_held else { return };
        let drained = self.conns.iter().filter(|cn| cn.sched.arbitrates_scans()).all(|cn| {
            cn.subs.iter().all(|st| {
                let f = &self.flows[st.flow as usize];
                let s = f.sender.as_ref().expect("tcp");
                f.path != pi || st.closed || s.snd_una >= s.app_limit()
            })
        });
        if !drained {
            return;
        }
        self.paths[pi as usize].scan_held = None;
        self.begin_scan(now, pi, pattern);
    }

    /// The radio starts the scan's timeline: its first off-channel dwell now.
    fn begin_scan(&mut self, now: Time, pi: u16, pattern: ScanPattern) {
        self.paths[pi as usize].scan_run = Some((now, pattern, now));
        self.scan_step(now, pi);
    }

    /// The scan under way on `pi` changes channel now: off for a dwell, back home, or over.
    pub(super) fn scan_step(&mut self, now: Time, pi: u16) {
        let Some((start, pattern, due)) = self.paths[pi as usize].scan_run else { return };
        if due != now {
            return;
        }
        let since = now - start;
        self.set_path_on_channel(now, pi, !pattern.off_at(since));
        match pattern.next_change(since) {
            Some(next) => {
                let at = start + next;
                self.paths[pi as usize].scan_run = Some((start, pattern, at));
                self.q.schedule(at, Ev::ScanStep(pi));
            }
            None => {
                self.paths[pi as usize].scan_run = None;
                self.conn_link_event(now, pi, LinkEvent::ScanEnd);
                self.pm_link_event(now, pi, PmEvent::ScanEnd { path: pi });
            }
        }
    }

    /// A scanning radio leaves its channel for a dwell (`on` = false) or comes back. Only the
    /// radio hop pauses: mac80211 stops the interface's queues while off channel
    /// (ieee80211_offchannel_stop_vifs, IEEE80211_QUEUE_STOP_REASON_OFFCHANNEL), so frames wait,
    /// and the client announced power save before leaving (a null frame with PM=1), so the AP
    /// buffers its frames for it too (both stations' queues hold, up to their capacity). The
    /// association stays: neither the endpoints nor the MPTCP schedulers see a link event; they
    /// heard of the scan as a whole (LinkEvent::ScanStart / ScanEnd).
    fn set_path_on_channel(&mut self, now: Time, pi: u16, on: bool) {
        if self.radio_of(pi).is_none() {
            return;
        }
        // The client's radio meter: awake while it listens off channel (energy.rs
        // `RadioMeter::off_channel`); back before anything can go on the air again.
        if on {
            self.radio_of_mut(pi).expect("a radio path").meter_off_channel(now, false);
        }
        // Back on a channel whose link is lost (blockage) carries nothing either.
        if on && !self.paths[pi as usize].radio.as_ref().is_none_or(|r| r.channel.link_up()) {
            return;
        }
        self.switch_path(now, pi, on);
        // Off after the TXOP the departure cut short was counted.
        if !on {
            self.radio_of_mut(pi).expect("a radio path").meter_off_channel(now, true);
        }
    }
}
