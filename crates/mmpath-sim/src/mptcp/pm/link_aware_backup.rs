//! `link-aware-backup`: move traffic to the backup before the primary dies, on what the link
//! layer already knows, instead of after the transport has timed out (v0.9x: the first RTO,
//! 200 ms or more into the outage; upstream: stale after stale_loss_cnt intervals). A path that
//! is down (carrier loss, beacon loss), weak (its signal or MCS fell through a threshold of the
//! 802.11ad sensitivity table, `PmParams`) or scanning gets the backup flag (MP_PRIO); while no
//! regular path is fit, the configured backup paths are made regular. A path comes back with
//! hysteresis: its signal must climb to a higher threshold than the one it fell through, and it
//! must stay up and strong for `hold` before it is made regular again (a scan's end is final:
//! no hold).

use super::{slot, PathId, PathManager, PmAction, PmEvent, PmParams};
use crate::time::Time;

#[derive(Debug, Default)]
struct PathState {
    /// Carries the backup flag by configuration (`PmParams::backup_paths`).
    backup: bool,
    down: bool,
    weak: bool,
    scanning: bool,
    /// The last signal and MCS heard.
    signal_dbm: Option<f64>,
    mcs: Option<u8>,
    /// A regular path this policy made backup.
    demoted: bool,
    /// A backup path this policy made regular.
    promoted: bool,
    /// A demoted path fit again: made regular at this time if it stays fit.
    hold_until: Option<Time>,
}

pub struct LinkAwareBackup {
    p: PmParams,
    paths: Vec<PathState>,
}

impl LinkAwareBackup {
    pub fn new(p: &PmParams) -> Self {
        let mut paths: Vec<PathState> = Vec::new();
        for &b in &p.backup_paths {
            slot(&mut paths, b).backup = true;
        }
        LinkAwareBackup { p: p.clone(), paths }
    }

    /// The quality thresholds: weak below the leaving point, fit again at the return point.
    fn update_weak(&mut self, now: Time, path: PathId) {
        let p = &self.p;
        let s = slot(&mut self.paths, path);
        let below = s.signal_dbm.is_some_and(|x| x < p.leave_dbm) || s.mcs.is_some_and(|m| m <= p.leave_mcs);
        let fit = s.signal_dbm.is_none_or(|x| x >= p.return_dbm) && s.mcs.is_none_or(|m| m >= p.return_mcs);
        if !s.weak && below {
            s.weak = true;
            s.hold_until = None;
        } else if s.weak && fit {
            s.weak = false;
            if !s.down {
                s.hold_until = Some(now + p.hold);
            }
        }
    }

    /// Brings the flags in line with the paths' state.
    fn reconcile(&mut self, now: Time, out: &mut Vec<PmAction>) {
        for (i, s) in self.paths.iter_mut().enumerate() {
            if s.backup {
                continue;
            }
            let path = i as PathId;
            if s.down || s.weak || s.scanning {
                if !s.demoted {
                    s.demoted = true;
                    out.push(PmAction::SetBackup { path });
                }
            } else if s.demoted && s.hold_until.is_none_or(|t| t <= now) {
                s.demoted = false;
                s.hold_until = None;
                out.push(PmAction::ClearBackup { path });
            }
        }
        // The configured backups carry traffic while every regular path is demoted.
        let regular_fit = self.paths.iter().any(|s| !s.backup && !s.demoted);
        let any_regular = self.paths.iter().any(|s| !s.backup);
        for (i, s) in self.paths.iter_mut().enumerate() {
            if !s.backup {
                continue;
            }
            let path = i as PathId;
            if any_regular && !regular_fit && !s.promoted && !s.down {
                s.promoted = true;
                out.push(PmAction::ClearBackup { path });
            } else if regular_fit && s.promoted {
                s.promoted = false;
                out.push(PmAction::SetBackup { path });
            }
        }
    }
}

impl PathManager for LinkAwareBackup {
    fn name(&self) -> &'static str {
        "link-aware-backup"
    }

    fn on_event(&mut self, now: Time, ev: &PmEvent, out: &mut Vec<PmAction>) {
        let path = ev.path();
        let hold = self.p.hold;
        let s = slot(&mut self.paths, path);
        match *ev {
            PmEvent::LinkDown { .. } => {
                s.down = true;
                s.hold_until = None;
            }
            PmEvent::LinkUp { .. } => {
                if std::mem::take(&mut s.down) && !s.weak {
                    s.hold_until = Some(now + hold);
                }
            }
            PmEvent::LinkQuality { signal_dbm, mcs, .. } => {
                s.signal_dbm = signal_dbm.or(s.signal_dbm);
                s.mcs = mcs.or(s.mcs);
                self.update_weak(now, path);
            }
            PmEvent::ScanStart { .. } => s.scanning = true,
            PmEvent::ScanEnd { .. } => s.scanning = false,
            PmEvent::ConnCreated { .. } | PmEvent::SubflowEstablished { .. } => {}
            _ => return,
        }
        self.reconcile(now, out);
    }

    fn poll_at(&self) -> Option<Time> {
        self.paths.iter().filter(|s| s.demoted && !s.down && !s.weak && !s.scanning).filter_map(|s| s.hold_until).min()
    }

    fn on_timer(&mut self, now: Time, out: &mut Vec<PmAction>) {
        self.reconcile(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    fn run(p: &mut LinkAwareBackup, now: Time, ev: PmEvent) -> Vec<PmAction> {
        let mut out = Vec::new();
        p.on_event(now, &ev, &mut out);
        out
    }

    /// Path 0 regular, path 1 a configured backup.
    fn policy() -> LinkAwareBackup {
        let mut p = LinkAwareBackup::new(&PmParams { backup_paths: vec![1], ..PmParams::default() });
        assert!(run(&mut p, ms(0), PmEvent::ConnCreated { path: 0 }).is_empty());
        assert!(run(&mut p, ms(0), PmEvent::SubflowEstablished { path: 1, subflow: 1 }).is_empty());
        p
    }

    /// A lost link moves traffic to the backup at once; back only after the hold.
    #[test]
    fn link_down_moves_to_the_backup_and_link_up_comes_back_after_the_hold() {
        let mut p = policy();
        assert_eq!(
            run(&mut p, ms(100), PmEvent::LinkDown { path: 0 }),
            vec![PmAction::SetBackup { path: 0 }, PmAction::ClearBackup { path: 1 }]
        );
        assert!(run(&mut p, ms(200), PmEvent::LinkDown { path: 0 }).is_empty(), "already moved");
        assert_eq!(p.poll_at(), None);
        assert!(run(&mut p, ms(5100), PmEvent::LinkUp { path: 0 }).is_empty(), "held");
        let back = ms(5100) + p.p.hold;
        assert_eq!(p.poll_at(), Some(back));
        let mut out = Vec::new();
        p.on_timer(back - ms(1), &mut out);
        assert!(out.is_empty(), "not yet");
        p.on_timer(back, &mut out);
        assert_eq!(out, vec![PmAction::ClearBackup { path: 0 }, PmAction::SetBackup { path: 1 }]);
        assert_eq!(p.poll_at(), None);
    }

    /// A link that drops again during the hold stays backup, and the hold restarts.
    #[test]
    fn a_flapping_link_stays_backup() {
        let mut p = policy();
        run(&mut p, ms(0), PmEvent::LinkDown { path: 0 });
        run(&mut p, ms(1000), PmEvent::LinkUp { path: 0 });
        assert!(run(&mut p, ms(1300), PmEvent::LinkDown { path: 0 }).is_empty());
        assert_eq!(p.poll_at(), None);
        run(&mut p, ms(1400), PmEvent::LinkUp { path: 0 });
        assert_eq!(p.poll_at(), Some(ms(1400) + p.p.hold));
    }

    /// The signal falling below MCS 2's sensitivity (-66 dBm) demotes; climbing back to -65
    /// (above the leaving point, below the return point) does not restore; -64 (MCS 4's) starts
    /// the hold. The MCS alone does the same.
    #[test]
    fn quality_thresholds_have_hysteresis() {
        let mut p = policy();
        let q = |dbm: f64| PmEvent::LinkQuality { path: 0, signal_dbm: Some(dbm), mcs: None };
        assert!(run(&mut p, ms(0), q(-60.0)).is_empty());
        assert!(run(&mut p, ms(10), q(-66.0)).is_empty(), "-66 still holds MCS 2");
        assert_eq!(
            run(&mut p, ms(20), q(-66.5)),
            vec![PmAction::SetBackup { path: 0 }, PmAction::ClearBackup { path: 1 }]
        );
        assert!(run(&mut p, ms(30), q(-65.0)).is_empty());
        assert_eq!(p.poll_at(), None, "not fit yet");
        assert!(run(&mut p, ms(40), q(-64.0)).is_empty());
        assert_eq!(p.poll_at(), Some(ms(40) + p.p.hold));
        // Falling again during the hold cancels it.
        run(&mut p, ms(50), q(-67.0));
        assert_eq!(p.poll_at(), None);

        let mut p = policy();
        let m = |mcs: u8| PmEvent::LinkQuality { path: 0, signal_dbm: None, mcs: Some(mcs) };
        assert!(run(&mut p, ms(0), m(2)).is_empty());
        assert_eq!(run(&mut p, ms(10), m(1)).len(), 2);
        assert!(run(&mut p, ms(20), m(3)).is_empty());
        assert_eq!(p.poll_at(), None);
        run(&mut p, ms(30), m(4));
        assert_eq!(p.poll_at(), Some(ms(30) + p.p.hold));
    }

    /// A scan demotes for its length; its end restores at once.
    #[test]
    fn a_scan_is_ridden_out_on_the_backup() {
        let mut p = policy();
        assert_eq!(run(&mut p, ms(0), PmEvent::ScanStart { path: 0 }).len(), 2);
        assert_eq!(
            run(&mut p, ms(50), PmEvent::ScanEnd { path: 0 }),
            vec![PmAction::ClearBackup { path: 0 }, PmAction::SetBackup { path: 1 }]
        );
    }

    /// Fullmesh (no configured backup): a failing path is made backup, the others carry on; a
    /// backup that is down is not promoted.
    #[test]
    fn without_configured_backups_only_the_failing_path_changes() {
        let mut p = LinkAwareBackup::new(&PmParams::default());
        run(&mut p, ms(0), PmEvent::ConnCreated { path: 0 });
        run(&mut p, ms(0), PmEvent::SubflowEstablished { path: 1, subflow: 1 });
        assert_eq!(run(&mut p, ms(10), PmEvent::LinkDown { path: 1 }), vec![PmAction::SetBackup { path: 1 }]);

        let mut p = policy();
        run(&mut p, ms(0), PmEvent::LinkDown { path: 1 });
        assert_eq!(run(&mut p, ms(10), PmEvent::LinkDown { path: 0 }), vec![PmAction::SetBackup { path: 0 }]);
    }
}
