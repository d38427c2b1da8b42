//! The channel fields a trace can carry, each optional (docs/traces.md, "What a trace becomes").
//! One type serves both as what a step changes (`TraceStep::set`: `None` = left as it was) and
//! as the channel the steps up to some time leave (`Trace::state_at`: `None` = never set): the
//! two are the same partial description of the channel, and both are built by the one rule in
//! [`ChannelState::apply`], a later value replacing an earlier one. A new field is declared here
//! and nowhere else.

/// Some or all of the channel's indicators; `None` = not given (not changed, or never set).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ChannelState {
    /// Capacity in bit/s; `Some(0)` = no service (link up but stalled).
    pub rate_bps: Option<u64>,
    /// PHY MCS index (the simulator maps it to a rate with its PHY/MAC model).
    pub mcs: Option<u8>,
    /// Link status.
    pub up: Option<bool>,
    pub rssi_dbm: Option<f32>,
    /// Only from sources that report an SNR in dB (mmpath CSV). wil6210's SQI is not an SNR
    /// and is not mapped.
    pub snr_db: Option<f32>,
    /// Tx sector (wil6210).
    pub sector: Option<u16>,
}

impl ChannelState {
    /// True if no field is given (a step that changes nothing).
    pub fn is_empty(&self) -> bool {
        self.rate_bps.is_none()
            && self.mcs.is_none()
            && self.up.is_none()
            && self.rssi_dbm.is_none()
            && self.snr_db.is_none()
            && self.sector.is_none()
    }

    /// Overlays `later`: each field it gives replaces ours, the others stay. This is how a
    /// step moves the channel on, and how two changes at the same instant fold into one (rows
    /// with the same time, changes a run records at once). Returns whether anything changed.
    pub fn apply(&mut self, later: &ChannelState) -> bool {
        let before = *self;
        self.rate_bps = later.rate_bps.or(self.rate_bps);
        self.mcs = later.mcs.or(self.mcs);
        self.up = later.up.or(self.up);
        self.rssi_dbm = later.rssi_dbm.or(self.rssi_dbm);
        self.snr_db = later.snr_db.or(self.snr_db);
        self.sector = later.sector.or(self.sector);
        *self != before
    }

    /// The fields of `later` whose values differ from ours: what applying it would change
    /// (empty if nothing). A run records only such changes: a looping trace re-applies the same
    /// values every pass.
    pub fn changes(&self, later: &ChannelState) -> ChannelState {
        fn new<T: PartialEq + Copy>(now: Option<T>, later: Option<T>) -> Option<T> {
            later.filter(|v| now != Some(*v))
        }
        ChannelState {
            rate_bps: new(self.rate_bps, later.rate_bps),
            mcs: new(self.mcs, later.mcs),
            up: new(self.up, later.up),
            rssi_dbm: new(self.rssi_dbm, later.rssi_dbm),
            snr_db: new(self.snr_db, later.snr_db),
            sector: new(self.sector, later.sector),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_overlays_given_fields_and_reports_a_change() {
        let mut st = ChannelState::default();
        assert!(st.is_empty());
        let first = ChannelState { rate_bps: Some(1000), up: Some(true), rssi_dbm: Some(-50.0), ..Default::default() };
        assert!(st.apply(&first));
        assert_eq!(st, first);
        // The later value wins; fields it leaves out keep theirs.
        assert!(st.apply(&ChannelState { up: Some(false), sector: Some(3), ..Default::default() }));
        assert_eq!(
            st,
            ChannelState { rate_bps: Some(1000), up: Some(false), rssi_dbm: Some(-50.0), sector: Some(3), ..first }
        );
        // Nothing given, or the same values again: no change.
        assert!(!st.apply(&ChannelState::default()));
        assert!(!st.apply(&ChannelState { rate_bps: Some(1000), sector: Some(3), ..Default::default() }));
        assert!(!st.is_empty());
    }

    #[test]
    fn changes_keeps_only_new_values() {
        let now = ChannelState { rate_bps: Some(1000), up: Some(true), mcs: Some(8), ..Default::default() };
        let later = ChannelState { rate_bps: Some(1000), up: Some(false), sector: Some(2), ..Default::default() };
        assert_eq!(now.changes(&later), ChannelState { up: Some(false), sector: Some(2), ..Default::default() });
        assert!(now.changes(&now).is_empty());
        assert!(now.changes(&ChannelState::default()).is_empty());
    }
}
