//! A path's changes over time: its schedule of rate and up/down steps, a replayed trace, the
//! radio channel's fading and events (blockage, attenuation, contention, interference, scans),
//! the MCS the rate adaptation picks for a new signal, and the two records of all this: the
//! events table and the path's channel log.

use super::{Ev, Simulation};
use crate::link::channel::Action;
use crate::link::medium::{Medium, AP, STA};
use crate::link::radio::ideal_mcs;
use crate::link::trace::{push_step, ChannelState, TraceStep};
use crate::link::wire::Outage;
use crate::link::{Link, Wake};
use crate::mptcp::pm::PmEvent;
use crate::mptcp::sched;
use crate::scenario::{FlowKind, RateAdaptation};
use crate::time::Time;
use crate::trace::{EV_DOWN, EV_RATE, EV_UP};

impl Simulation {
    pub(super) fn on_path_step(&mut self, now: Time, pi: u16) {
        while let Some(step) = self.paths[pi as usize].schedule.take_due(now) {
            if let Some(r) = step.rate_bps {
                let ps = &self.paths[pi as usize];
                // The uplink follows the downlink's change in proportion.
                let up_rate = (ps.base_up_bps as u128 * r as u128 / ps.base_down_bps as u128) as u64;
                self.set_path_rate(now, pi, r, Some(up_rate));
            }
            if let Some(u) = step.up {
                if !u {
                    self.set_path_outage(pi, step.outage);
                }
                self.set_path_up(now, pi, u);
            }
            if step.reset {
                self.reset_path(now, pi);
            }
        }
        if let Some(t) = self.paths[pi as usize].schedule.next_time() {
            self.q.schedule(t, Ev::PathStep(pi));
        }
    }

    /// A middlebox on path `pi` resets every TCP connection crossing it (a schedule step's
    /// `reset`: both ends receive a RST), and the link is left as it is. A TCP flow under way
    /// (started) is aborted: a RST ends the connection at both ends (tcp_reset -> tcp_done), so
    /// its sender, receiver and application stop there, with `reset_s` in its summary; one not
    /// started yet opens later on the usable path. An MPTCP subflow whose data or ACKs cross the
    /// path, established or joining, is closed at both ends as the kernel closes a reset subflow
    /// (mptcp/connection/pm.rs, `Connection::on_reset`): the connection goes on over the others.
    /// UDP flows are not TCP and go on.
    fn reset_path(&mut self, now: Time, pi: u16) {
        for f in 0..self.flows.len() {
            let fl = &mut self.flows[f];
            let crosses = fl.path == pi || fl.ack_path == pi;
            if !crosses || fl.closed || fl.kind != FlowKind::Tcp || fl.start > now {
                continue;
            }
            match fl.conn {
                None => {
                    fl.closed = true;
                    fl.reset_at = Some(now);
                    fl.sender_timer = None;
                    fl.receiver_timer = None;
                }
                Some((c, j)) => {
                    if self.conn_reset(now, (c, j)) {
                        self.flows[f].reset_at = Some(now);
                    }
                }
            }
        }
    }

    /// Applies every trace step due now. A trace drives a wired path's downlink rate (the
    /// direction capacity traces describe) and the link status of both directions; on a radio
    /// path, the link status, MCS and RSSI (load_replay refuses a rate there). Values a looping
    /// trace re-applies unchanged are neither events nor rows of the channel record.
    pub(super) fn on_trace_step(&mut self, now: Time, pi: u16) {
        loop {
            let Some(r) = self.paths[pi as usize].replay.as_mut() else { return };
            match r.next_time() {
                // A step at the run's end changes nothing the run carries; applied, the next
                // pass of a trace as long as the run (a replayed record) showed in the records.
                Some(t) if t >= self.end => return,
                Some(t) if t <= now => {}
                Some(t) => {
                    self.q.schedule(t, Ev::TraceStep(pi));
                    return;
                }
                None => return,
            }
            let (set, outage) = (r.take().expect("a step is due").set, r.outage);
            if let Some(rate) = set.rate_bps.filter(|&r| self.paths[pi as usize].channel_now.rate_bps != Some(r)) {
                self.set_path_rate(now, pi, rate, None);
            }
            let radio = self.paths[pi as usize].radio.is_some();
            if let Some(u) = set.up {
                let was_up = self.hop_up(self.paths[pi as usize].hops[0]);
                if !u {
                    self.set_path_outage(pi, outage);
                }
                self.set_path_up(now, pi, u);
                // A radio link that goes down loses its queued frames, as in a blockage (the
                // wil6210 driver frees the station's ring on disconnect, docs/models.md): a
                // replayed record of a blockage then does what the blockage did.
                if radio && was_up && !u {
                    self.disconnect(now, pi);
                }
            }
            let ps = &mut self.paths[pi as usize];
            if let Some(m) = set.mcs {
                ps.mcs = m as f64;
            }
            if let Some(r) = set.rssi_dbm {
                ps.rssi_dbm = r as f64;
            }
            if let Some(x) = set.snr_db {
                ps.snr_db = x as f64;
            }
            if radio && (set.mcs.is_some() || set.rssi_dbm.is_some()) {
                self.update_radio(now, pi, set.mcs);
            }
            // Rate and link status were logged above, as they took effect; the rest as given.
            let indicators = ChannelState { rate_bps: None, up: None, ..set };
            if !indicators.is_empty() {
                self.log_channel(now, pi, indicators);
            }
        }
    }

    fn set_path_rate(&mut self, now: Time, pi: u16, down_bps: u64, up_bps: Option<u64>) {
        let [down, up] = self.paths[pi as usize].hops;
        for (h, rate) in [(down, Some(down_bps)), (up, up_bps)] {
            let Some(rate) = rate else { continue };
            let mut wake = Wake::default();
            self.links[h.link as usize].set_rate(now, h.port as usize, rate, &mut wake);
            self.apply_wake(h.link, wake);
        }
        self.push_event(now, pi, EV_RATE, down_bps as f64 / 1e6);
        self.log_channel(now, pi, ChannelState { rate_bps: Some(down_bps), ..Default::default() });
    }

    fn set_path_up(&mut self, now: Time, pi: u16, u: bool) {
        if self.switch_path(now, pi, u) {
            self.conn_link_event(now, pi, if u { sched::LinkEvent::Up } else { sched::LinkEvent::Down });
            // A path manager hears the carrier (PathState::carrier_lost): a radio's disconnect
            // and a wired drop outage lose it, a wired hold outage (a paused interface) keeps it.
            let ps = &mut self.paths[pi as usize];
            let heard = if u {
                std::mem::take(&mut ps.carrier_lost)
            } else {
                ps.carrier_lost = ps.radio.is_some() || ps.outage == Outage::Drop;
                ps.carrier_lost
            };
            if heard {
                let ev = if u { PmEvent::LinkUp { path: pi } } else { PmEvent::LinkDown { path: pi } };
                self.pm_link_event(now, pi, ev);
            }
            self.path_first_hops_changed(now, pi);
        }
    }

    /// Path `pi`'s links went away or came back: their senders learn it (sim/route.rs).
    fn path_first_hops_changed(&mut self, now: Time, pi: u16) {
        let [a, b] = self.paths[pi as usize].hops;
        self.first_hop_changed(now, a.link);
        if b.link != a.link {
            self.first_hop_changed(now, b.link);
        }
    }

    /// What a wired path's outages do with its packets (link/wire.rs `Outage`), set before it
    /// goes down; a path already down and holding purges its queues on `Drop`. A radio path keeps
    /// its own model (a disconnect drops, a scan holds).
    fn set_path_outage(&mut self, pi: u16, outage: Outage) {
        self.paths[pi as usize].outage = outage;
        let mut dropped = std::mem::take(&mut self.dropped);
        for h in self.paths[pi as usize].hops {
            self.links[h.link as usize].set_outage(outage, &mut dropped);
        }
        for p in dropped.drain(..) {
            self.count_drop(&p);
        }
        self.dropped = dropped;
    }

    /// Takes a path's hops down or up, with its event and channel-log rows; false if it already
    /// was so.
    pub(super) fn switch_path(&mut self, now: Time, pi: u16, u: bool) -> bool {
        let hops = self.paths[pi as usize].hops;
        let was = self.hop_up(hops[0]);
        if was == u {
            return false;
        }
        // Each link once: a wired path has one per direction, a radio path one for both.
        for (i, h) in hops.into_iter().enumerate() {
            if i == 1 && h.link == hops[0].link {
                continue;
            }
            let mut wake = Wake::default();
            let mut dropped = std::mem::take(&mut self.dropped);
            self.links[h.link as usize].set_up(now, u, &mut wake, &mut dropped);
            for p in dropped.drain(..) {
                self.count_drop(&p);
            }
            self.dropped = dropped;
            self.apply_wake(h.link, wake);
        }
        self.push_event(now, pi, if u { EV_UP } else { EV_DOWN }, f64::NAN);
        self.log_channel(now, pi, ChannelState { up: Some(u), ..Default::default() });
        true
    }

    /// A radio path loses its link (blockage, antenna turn): its queued frames are dropped.
    fn disconnect(&mut self, now: Time, pi: u16) {
        let l = self.paths[pi as usize].hops[0].link;
        let Some(medium) = self.links[l as usize].medium_mut() else { return };
        let mut wake = Wake::default();
        let mut dropped = std::mem::take(&mut self.dropped);
        medium.disconnect(now, &mut wake, &mut dropped);
        for p in dropped.drain(..) {
            self.count_drop(&p);
        }
        self.dropped = dropped;
        self.apply_wake(l, wake);
        self.path_first_hops_changed(now, pi);
    }

    /// Path `pi`'s 802.11 medium, if it is a radio path.
    pub(super) fn radio_of(&self, pi: u16) -> Option<&Medium> {
        self.links[self.paths[pi as usize].hops[0].link as usize].medium()
    }

    pub(super) fn radio_of_mut(&mut self, pi: u16) -> Option<&mut Medium> {
        self.links[self.paths[pi as usize].hops[0].link as usize].medium_mut()
    }

    /// A radio path's signal changed (channel process or trace), or a trace forces an MCS:
    /// give the medium the new signal, re-pick the MCS (ideal adaptation; ARF adapts on its own
    /// from the TXOPs that follow) and record what changed.
    fn update_radio(&mut self, now: Time, pi: u16, forced_mcs: Option<u8>) {
        let ps = &self.paths[pi as usize];
        let (Some(r), l) = (&ps.radio, ps.hops[0].link) else { return };
        let rssi = ps.rssi_dbm;
        let mean = r.channel.mean_rssi_dbm();
        let Some(medium) = self.links[l as usize].medium_mut() else { return };
        medium.set_signal(rssi, r.rx_gain_db);
        medium.set_session_signal(mean);
        let pick = match (forced_mcs, r.adaptation) {
            (Some(x), _) => Some(x),
            (None, RateAdaptation::Ideal) => ideal_mcs(medium.phy(), rssi, r.rx_gain_db, r.mpdu_bytes, &r.ladder),
            _ => None,
        };
        if let Some(x) = pick {
            medium.set_mcs(AP, x);
            medium.set_mcs(STA, x);
        }
        // A path manager hears the signal as the receiver measures it against the
        // sensitivities: the RSSI plus the device's gain over the standard's receiver.
        let signal = rssi + r.rx_gain_db;
        self.note_mcs(now, pi);
        self.pm_link_event(now, pi, PmEvent::LinkQuality { path: pi, signal_dbm: Some(signal), mcs: None });
    }

    /// Records a change of the path's (downlink) MCS as an event and in the channel log.
    pub(super) fn note_mcs(&mut self, now: Time, pi: u16) {
        let ps = &self.paths[pi as usize];
        let Some(medium) = self.radio_of(pi) else { return };
        let mcs = medium.mcs(AP);
        if ps.mcs == mcs as f64 {
            return;
        }
        let rate = medium.rate_bps(AP);
        self.paths[pi as usize].mcs = mcs as f64;
        self.push_event(now, pi, EV_RATE, rate as f64 / 1e6);
        self.log_channel(now, pi, ChannelState { mcs: Some(mcs), ..Default::default() });
        self.pm_link_event(now, pi, PmEvent::LinkQuality { path: pi, signal_dbm: None, mcs: Some(mcs) });
    }

    pub(super) fn on_fade(&mut self, now: Time, pi: u16) {
        let Some(r) = self.paths[pi as usize].radio.as_mut() else { return };
        r.channel.fade();
        let (rssi, next) = (r.channel.rssi_dbm(), now + r.channel.coherence());
        self.paths[pi as usize].rssi_dbm = rssi;
        self.update_radio(now, pi, None);
        if next <= self.end {
            self.q.schedule(next, Ev::Fade(pi));
        }
    }

    pub(super) fn on_channel_action(&mut self, now: Time, pi: u16) {
        loop {
            let Some(r) = self.paths[pi as usize].radio.as_mut() else { return };
            let Some(a) = r.channel.take_due(now) else { break };
            let rssi = r.channel.rssi_dbm();
            match a {
                Action::Contend(load_mbps) => {
                    if let Some(md) = self.radio_of_mut(pi) {
                        // The other stations send at about this path's PHY rate: their share of
                        // airtime is their load over that rate.
                        let share = load_mbps * 1e6 / md.rate_bps(AP).max(1) as f64;
                        md.set_foreign_share(share);
                    }
                }
                Action::Interfere(i) => {
                    if let Some(md) = self.radio_of_mut(pi) {
                        md.set_interferer(i);
                    }
                }
                Action::Attenuate(_) | Action::Base(_) => {
                    self.paths[pi as usize].rssi_dbm = rssi;
                    self.update_radio(now, pi, None);
                    self.log_channel(now, pi, ChannelState { rssi_dbm: Some(rssi as f32), ..Default::default() });
                }
                Action::Down => {
                    self.set_path_up(now, pi, false);
                    self.disconnect(now, pi);
                }
                Action::Up => self.set_path_up(now, pi, true),
                Action::ScanStart(pattern) => self.scan_request(now, pi, pattern),
            }
        }
        if let Some(t) = self.paths[pi as usize].radio.as_ref().and_then(|r| r.channel.next_action_time()) {
            self.q.schedule(t, Ev::ChannelAction(pi));
        }
    }

    /// Appends a change to the path's channel record, merging changes made at the same instant;
    /// values the channel already has are left out (nothing is recorded if nothing changes).
    fn log_channel(&mut self, now: Time, pi: u16, change: ChannelState) {
        let ps = &mut self.paths[pi as usize];
        let change = ps.channel_now.changes(&change);
        if change.is_empty() {
            return;
        }
        ps.channel_now.apply(&change);
        push_step(&mut ps.channel_log, TraceStep::new(now, change));
    }

    fn push_event(&mut self, now: Time, path: u16, kind: i8, value: f64) {
        self.events.t_s.push(now.secs_f64());
        self.events.path.push(path as i32);
        self.events.kind.push(kind);
        self.events.value.push(value);
    }
}
