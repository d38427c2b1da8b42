//! Path-manager policies: what a userspace MPTCP path manager decides (Linux's
//! `net.mptcp.pm_type = 1`, the `mptcp_pm` generic netlink family: create and destroy subflows,
//! announce and remove addresses, set a subflow's backup flag with MP_PRIO), written once as
//! clock-free objects. The simulator runs them inside a connection (mptcp/connection/pm.rs);
//! the `mmpath-pm` daemon runs the same objects against the real kernel through the Python
//! binding (crates/mmpath-py, `_core.PathManagerPolicy`).
//!
//! A policy hears link events (up, down, signal / MCS, scans) and connection events (created,
//! subflow established / closed / RTO / stale), each with `now`, and answers with actions; a
//! policy with timers says when it next wants `on_timer` (`poll_at`). Paths are indexes into
//! the connection's list of paths (the scenario flow's `paths`; the daemon maps them to
//! interfaces), subflows are the ids whoever runs the policy gives them.
//!
//! - kernel.rs: the in-kernel path manager: no decisions (today's behaviour, for comparison);
//! - fast_failback.rs: a lost link's address is withdrawn at once (the peer resends over the
//!   others); a returning link gets a fresh subflow at once, the old one is retired;
//! - link_aware_backup.rs: a link that is down, weak or scanning is made backup before the
//!   transport notices, and made regular again with hysteresis;
//! - recreate.rs: subflows closed on an error are re-created with backoff; stale ones probed.

mod fast_failback;
mod kernel;
mod link_aware_backup;
mod recreate;

use crate::link::phy::dmg;
pub use crate::scenario::PmName;
use crate::time::Time;

/// A path index (into the connection's paths) and a subflow id.
pub type PathId = u16;
pub type SubflowId = u16;

/// What a policy hears.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PmEvent {
    /// The path's link is up again (carrier / association back).
    LinkUp {
        path: PathId,
    },
    /// The path's link is lost (carrier down, beacon loss, disassociation).
    LinkDown {
        path: PathId,
    },
    /// The link's quality changed: received signal (dBm at the receiver, what the 802.11
    /// sensitivities are measured against) and / or the MCS in use.
    LinkQuality {
        path: PathId,
        signal_dbm: Option<f64>,
        mcs: Option<u8>,
    },
    /// The radio leaves its channel for a scan (off-channel dwells follow), or is back for good.
    ScanStart {
        path: PathId,
    },
    ScanEnd {
        path: PathId,
    },
    /// The connection exists (MP_CAPABLE done) with its first subflow on `path`.
    ConnCreated {
        path: PathId,
    },
    SubflowEstablished {
        path: PathId,
        subflow: SubflowId,
    },
    /// The subflow is gone; `error`: it was reset or timed out, not closed by the policy or
    /// the application.
    SubflowClosed {
        path: PathId,
        subflow: SubflowId,
        error: bool,
    },
    /// The subflow's retransmission timer fired.
    SubflowRto {
        path: PathId,
        subflow: SubflowId,
    },
    /// The kernel marked the subflow stale (upstream: stale_loss_cnt fruitless intervals).
    SubflowStale {
        path: PathId,
        subflow: SubflowId,
    },
}

impl PmEvent {
    /// The path the event is about.
    pub fn path(&self) -> PathId {
        match *self {
            PmEvent::LinkUp { path }
            | PmEvent::LinkDown { path }
            | PmEvent::LinkQuality { path, .. }
            | PmEvent::ScanStart { path }
            | PmEvent::ScanEnd { path }
            | PmEvent::ConnCreated { path }
            | PmEvent::SubflowEstablished { path, .. }
            | PmEvent::SubflowClosed { path, .. }
            | PmEvent::SubflowRto { path, .. }
            | PmEvent::SubflowStale { path, .. } => path,
        }
    }
}

/// What a policy asks of the path manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmAction {
    /// Open a new subflow on the path (MP_JOIN; MPTCP_PM_CMD_SUBFLOW_CREATE).
    CreateSubflow {
        path: PathId,
    },
    /// Close the subflow (MPTCP_PM_CMD_SUBFLOW_DESTROY); its unacknowledged data is sent again
    /// on the others.
    CloseSubflow {
        path: PathId,
        subflow: SubflowId,
    },
    /// Set / clear the backup flag of the path's subflows (MP_PRIO; MPTCP_PM_CMD_SET_FLAGS).
    SetBackup {
        path: PathId,
    },
    ClearBackup {
        path: PathId,
    },
    /// Announce / withdraw the path's address (ADD_ADDR / REMOVE_ADDR; MPTCP_PM_CMD_ANNOUNCE,
    /// MPTCP_PM_CMD_REMOVE).
    Announce {
        path: PathId,
    },
    Remove {
        path: PathId,
    },
}

/// A path-manager policy: clock-free, every entry point takes `now`; actions are appended to
/// `out` (which the caller empties), in the order they are to be carried out.
pub trait PathManager: Send + Sync {
    fn name(&self) -> &'static str;
    fn on_event(&mut self, now: Time, ev: &PmEvent, out: &mut Vec<PmAction>);
    /// When the policy next wants `on_timer`, if ever.
    fn poll_at(&self) -> Option<Time> {
        None
    }
    /// A timer the policy asked for (`poll_at`) is due; a call at another time does nothing.
    fn on_timer(&mut self, _now: Time, _out: &mut Vec<PmAction>) {}
}

/// The parameters a policy reads; every one has a default set from a cited fact.
#[derive(Debug, Clone, PartialEq)]
pub struct PmParams {
    /// The paths whose subflows carry the backup flag from the start (link-aware-backup gives
    /// them traffic when no other path is fit). The scenario's `backup_paths`.
    pub backup_paths: Vec<PathId>,
    /// link-aware-backup: a path is weak below `leave_dbm` or at or below `leave_mcs`, and fit
    /// again at or above both `return_dbm` and `return_mcs` (those known).
    pub leave_dbm: f64,
    pub leave_mcs: u8,
    pub return_dbm: f64,
    pub return_mcs: u8,
    /// link-aware-backup: how long a path that came back (up, strong again) must stay so
    /// before it is made regular again.
    pub hold: Time,
    /// recreate: the first wait before re-creating a subflow closed on an error, doubled at
    /// each failure on the path, at most `max_backoff`.
    pub backoff: Time,
    pub max_backoff: Time,
}

/// The 802.11ad minimum sensitivity of DMG MCS `m` (802.11ad-2012 Table 21-3, link/phy/dmg.rs
/// and docs/facts.md).
fn dmg_sensitivity(m: u8) -> f64 {
    dmg::mcs(m).and_then(|x| x.sensitivity_dbm).map(f64::from).expect("SC MCS 1-12 have a sensitivity")
}

impl Default for PmParams {
    fn default() -> Self {
        PmParams {
            backup_paths: Vec::new(),
            // Weak: the signal no longer holds MCS 2 (-66 dBm), i.e. the link is down to MCS 1,
            // the last SC rate before only the control PHY (beacons) gets through; 2 dB above
            // losing data altogether (MCS 1: -68 dBm). 802.11ad-2012 Table 21-3.
            leave_dbm: dmg_sensitivity(2),
            leave_mcs: 1,
            // Fit again: the signal holds MCS 4 (-64 dBm), two table rows above the leaving
            // point, so a signal wandering across one row boundary does not flap the flag.
            return_dbm: dmg_sensitivity(4),
            return_mcs: 4,
            // mac80211 declares a link lost after IEEE80211_BEACON_LOSS_COUNT (7) missed
            // beacons (net/mac80211/mlme.c) at the default beacon interval of 100 TU
            // (102.4 ms, dot11BeaconPeriod): a link that stays up that long has outlived the
            // detector that would have caught it failing again.
            hold: Time::from_us(7 * 102_400),
            // Linux's SYN retransmission timing for a failed connect: TCP_TIMEOUT_INIT (1 s),
            // doubling, capped at TCP_RTO_MAX (120 s) (include/net/tcp.h).
            backoff: Time::from_secs(1),
            max_backoff: Time::from_secs(120),
        }
    }
}

/// The parameter names `PmParams` has, for error messages.
pub const PARAM_NAMES: [&str; 8] =
    ["backup_paths", "leave_dbm", "leave_mcs", "return_dbm", "return_mcs", "hold_s", "backoff_s", "max_backoff_s"];

/// The parameters policy `name` reads (`PmParams`, by their names in PARAM_NAMES); giving it
/// another is a mistake worth a message.
pub fn params_of(name: PmName) -> &'static [&'static str] {
    match name {
        PmName::Kernel | PmName::FastFailback => &[],
        PmName::LinkAwareBackup => &PARAM_NAMES[..6],
        PmName::Recreate => &PARAM_NAMES[6..],
    }
}

/// Builds the policy `name` names.
pub fn build(name: PmName, p: &PmParams) -> Box<dyn PathManager> {
    match name {
        PmName::Kernel => Box::new(kernel::Kernel),
        PmName::FastFailback => Box::new(fast_failback::FastFailback::default()),
        PmName::LinkAwareBackup => Box::new(link_aware_backup::LinkAwareBackup::new(p)),
        PmName::Recreate => Box::new(recreate::Recreate::new(p)),
    }
}

/// Per-path state a policy keeps, grown as paths are first heard of (a policy hears of at most
/// as many paths as the connection has: no allocation per event once they are known).
fn slot<T: Default>(v: &mut Vec<T>, path: PathId) -> &mut T {
    let i = path as usize;
    if v.len() <= i {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_defaults_follow_the_sensitivity_table() {
        for n in PmName::ALL {
            assert_eq!(PmName::from_name(n.name()), Some(n));
            assert_eq!(build(n, &PmParams::default()).name(), n.name());
        }
        assert_eq!(PmName::from_name("fullmesh"), None);
        let p = PmParams::default();
        assert_eq!((p.leave_dbm, p.return_dbm), (-66.0, -64.0));
        assert_eq!(p.hold, Time::from_us(716_800));
    }
}
