//! The step model every format is turned into (docs/traces.md, "What a trace becomes"): a step
//! holds from its time until the next one and changes only the fields it sets; the channel
//! state the steps up to a time leave; and a parsed trace with the period it loops over. Pass k
//! starts at k x period, as mahimahi advances its base by the last timestamp on wraparound
//! (ravinet/mahimahi src/frontend/link_queue.cc); that a pass starts from the state the whole
//! previous pass left is mmpath's rule (docs/traces.md, "Period and looping").

use super::TraceFormat;
use crate::time::Time;

/// One change of the channel, `at` from the start of the trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceStep {
    pub at: Time,
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

impl TraceStep {
    /// A step at `at` that changes nothing.
    pub const fn new(at: Time) -> TraceStep {
        TraceStep { at, rate_bps: None, mcs: None, up: None, rssi_dbm: None, snr_db: None, sector: None }
    }

    /// True if the step sets no field.
    pub fn is_noop(&self) -> bool {
        self.rate_bps.is_none()
            && self.mcs.is_none()
            && self.up.is_none()
            && self.rssi_dbm.is_none()
            && self.snr_db.is_none()
            && self.sector.is_none()
    }

    /// Folds a later step at the same time into this one: its set fields win.
    pub fn merge(&mut self, later: &TraceStep) {
        self.rate_bps = later.rate_bps.or(self.rate_bps);
        self.mcs = later.mcs.or(self.mcs);
        self.up = later.up.or(self.up);
        self.rssi_dbm = later.rssi_dbm.or(self.rssi_dbm);
        self.snr_db = later.snr_db.or(self.snr_db);
        self.sector = later.sector.or(self.sector);
    }
}

/// The channel as the steps up to some time leave it (`None` = never set).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ChannelState {
    pub rate_bps: Option<u64>,
    pub mcs: Option<u8>,
    pub up: Option<bool>,
    pub rssi_dbm: Option<f32>,
    pub snr_db: Option<f32>,
    pub sector: Option<u16>,
}

impl ChannelState {
    /// Applies a step; returns whether anything changed.
    pub fn apply(&mut self, s: &TraceStep) -> bool {
        let before = *self;
        self.rate_bps = s.rate_bps.or(self.rate_bps);
        self.mcs = s.mcs.or(self.mcs);
        self.up = s.up.or(self.up);
        self.rssi_dbm = s.rssi_dbm.or(self.rssi_dbm);
        self.snr_db = s.snr_db.or(self.snr_db);
        self.sector = s.sector.or(self.sector);
        *self != before
    }
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub steps: Vec<TraceStep>,
    /// Length of one pass, for looping: pass k starts at k x period. Mahimahi: the last
    /// timestamp; CSV: the last row's time (so a final row with only `t_s` gives the previous
    /// row a duration); wil6210: the last row's time plus one sample interval. Zero (a CSV
    /// whose rows are all at t = 0) means there is nothing to loop.
    pub period: Time,
    pub format: TraceFormat,
}

impl Trace {
    /// The channel at time `t`. With `looped`, pass k >= 1 starts from the state the whole
    /// previous pass left (fields a pass never sets keep their values from the pass before).
    /// Linear in the number of steps: for inspection and tests; a replay walks the steps.
    pub fn state_at(&self, t: Time, looped: bool) -> ChannelState {
        let p = self.period.ns();
        let mut st = ChannelState::default();
        let off = if looped && p > 0 && t.ns() >= p {
            for s in &self.steps {
                st.apply(s);
            }
            Time(t.ns() % p)
        } else {
            t
        };
        for s in self.steps.iter().take_while(|s| s.at <= off) {
            st.apply(s);
        }
        st
    }
}
