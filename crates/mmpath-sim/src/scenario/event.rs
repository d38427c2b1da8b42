//! A radio path's `event` list (blockage, antenna turn, walk, scan, contention) and its
//! `interferer` list (other links on the same or an adjacent channel).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A body or object in the beam: the signal drops by `loss_db`, or (no loss_db) the
    /// link is lost, then re-trained for `retrain_ms` after the blockage ends.
    Blockage,
    /// The device is turned away: the link is lost for the duration, then re-trained.
    AntennaTurn,
    /// The client walks from `distance_m` to `to_distance_m` over the duration.
    Walk,
    /// Periodic scans: every `every_s` a scan of `scan_ms` in all: off-channel dwells of
    /// `dwell_ms`, each followed by `rest_ms` back on the home channel (link/channel.rs).
    Scan,
    /// Other stations on the channel want `load_mbps` of airtime for the duration.
    Contention,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelRelation {
    Same,
    Adjacent,
}

/// Where the interferer's transmitter is against our stations' beams (link/spectrum.rs
/// `beams_apart_isolation_db`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Beams {
    /// Inside them: our transmitters hear it as our receivers do (`power_db`).
    #[default]
    Shared,
    /// Each transmitter outside the other's directional transmission (the hidden terminals of
    /// seed 000 section 3.4): our transmitters hear it through both arrays' side lobes.
    Apart,
}

impl Beams {
    pub fn is_shared(&self) -> bool {
        *self == Beams::Shared
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfererCfg {
    pub channel: ChannelRelation,
    /// Another path of this scenario as the interfering link (link/medium/air.rs): its own
    /// flows decide what it puts on the air, and our frames interfere with its in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Fraction of the time the interfering link transmits (1 = saturated, e.g. UDP at full
    /// rate); filled with 1 unless `path` is given (scenario/defaults.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Its power at our receivers relative to our own signal, dB (0: a link alongside).
    #[serde(default)]
    pub power_db: f64,
    /// Fraction of its transmissions our stations hear and defer to; omitted = the standard's
    /// CCA rule at its power inside our channel (spectrum.rs `cca_thresholds_dbm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensed: Option<f64>,
    /// Whether its transmitter is inside our stations' beams or outside (hidden); decides the
    /// power our transmitters sense it at.
    #[serde(default, skip_serializing_if = "Beams::is_shared")]
    pub beams: Beams,
    /// How far below its power the part inside our channel is, dB; default 0 on the same
    /// channel and, on an adjacent one, the rejection its standard's transmit mask allows
    /// (spectrum.rs `adjacent_rejection_db`: 20.1 dB for 802.11ad).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection_db: Option<f64>,
    /// Its MCS; default the top of our path's MCS ladder (a strong-signal link of the same
    /// device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcs: Option<u8>,
    /// Its MTU, bytes; default our path's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu_bytes: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventCfg {
    pub kind: EventKind,
    pub t_s: f64,
    pub duration_s: f64,
    /// Blockage attenuation, dB; omitted = total loss of the link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_db: Option<f64>,
    /// Beam re-training after a lost link; default the device's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrain_ms: Option<f64>,
    /// Walk: where the client ends up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_distance_m: Option<f64>,
    /// Scan: period and length of each scan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_ms: Option<f64>,
    /// Scan: off-channel time per scanned channel (default link::channel::SCAN_DWELL_MS) and
    /// time back on the home channel between two (default SCAN_REST_MS; 0 = one continuous
    /// off-channel period of scan_ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dwell_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest_ms: Option<f64>,
    /// Contention: the other stations' offered load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_mbps: Option<f64>,
}
