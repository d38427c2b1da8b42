//! `[[path]]`: one AP <-> client link, wired (a fixed rate) or an 802.11 radio (technology,
//! MCS or rate adaptation, signal, device preset, PHY options, path loss, shadowing, fading),
//! with its queue, loss, schedule of rate / up-down steps and an optional capacity trace. Its
//! radio events and interferers are in event.rs; the rules the fields must meet in validate.rs
//! and link/device.rs (`validate_radio`).

use super::d_true;
use super::event::{EventCfg, InterfererCfg};
use serde::{Deserialize, Serialize};

fn d_path_mtu() -> u32 {
    1500
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathCfg {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// "wired" (a fixed-rate link) or an 802.11 radio path ("11ad", "11ac", "11n").
    #[serde(default)]
    pub technology: Technology,
    /// Rate in the AP -> client direction (downlink), Mbit/s. Wired paths only: a radio
    /// path's rate follows from its MCS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// Radio paths: fixed MCS; omitted = chosen by `rate_adaptation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcs: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_adaptation: Option<RateAdaptation>,
    /// Radio paths: received signal strength, dBm ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rssi_dbm: Option<f64>,
    /// ... or a named range of it, drawn once per run (seed 000's strong / weak).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<Signal>,
    /// Radio paths: device class preset (docs/models.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// 802.11ac / 802.11n: channel width, spatial streams, short guard interval, band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_mhz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_gi: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band_ghz: Option<f64>,
    /// Radio paths: distance AP <-> client; the RSSI follows from a log-distance path loss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance_m: Option<f64>,
    /// Log-distance path-loss exponent (2 = free space).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_loss_exponent: Option<f64>,
    /// Shadowing: a normal draw with this standard deviation, once per run, dB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadowing_db: Option<f64>,
    /// Fading: a normal draw with this standard deviation every `coherence_ms`, dB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fading_db: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence_ms: Option<f64>,
    /// Radio paths: blockage and antenna-turn events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event: Vec<EventCfg>,
    /// Radio paths: other links on the same or an adjacent channel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interferer: Vec<InterfererCfg>,
    /// Rate client -> AP; defaults to `rate_mbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_rate_mbps: Option<f64>,
    /// One-way propagation delay.
    #[serde(default)]
    pub delay_ms: f64,
    #[serde(default = "d_path_mtu")]
    pub mtu_bytes: u32,
    /// Drop-tail queue per direction; default 1000 frames at the MTU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_bytes: Option<u64>,
    /// Bytes of link-layer cost per frame on top of the IP packet (2 for PPP, 38 for Ethernet).
    #[serde(default)]
    pub frame_overhead_bytes: u32,
    /// Independent random frame loss, percent, both directions.
    #[serde(default)]
    pub loss_pct: f64,
    /// Piecewise-constant changes: each step applies from `t_s` on.
    #[serde(default)]
    pub schedule: Vec<ScheduleStep>,
    /// Replay a capacity / channel trace on this path (docs/traces.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceCfg>,
    /// Client host (devices with a host model, energy.rs): GRO on this interface (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gro: Option<bool>,
    /// Client host: CPU class the interface's soft-IRQs run on, "big" or "little" (default:
    /// the device's, msm_irqbalance on the ROG Phone II = "little").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirq_cpu: Option<SoftirqCpu>,
}

/// CPU class the soft-IRQs of the client's interfaces run on (seed 002 section 3.4): the
/// scenario's `softirq_cpu` and the host model's (energy.rs) one enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SoftirqCpu {
    Big,
    Little,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Technology {
    #[default]
    #[serde(rename = "wired")]
    Wired,
    #[serde(rename = "11ad")]
    Dot11ad,
    #[serde(rename = "11ac")]
    Dot11ac,
    #[serde(rename = "11n")]
    Dot11n,
}

impl Technology {
    /// The name a scenario spells it by.
    pub fn name(self) -> &'static str {
        match self {
            Technology::Wired => "wired",
            Technology::Dot11ad => "11ad",
            Technology::Dot11ac => "11ac",
            Technology::Dot11n => "11n",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateAdaptation {
    /// The MCS in `mcs`, whatever the signal.
    Fixed,
    /// The MCS maximising rate x (1 - PER) at the current signal.
    Ideal,
    /// What a commodity device does: on 802.11ad a rate set per session by beam training and
    /// the firmware's rate search (link/session_rate.rs); elsewhere Auto Rate Fallback over
    /// the device's MCS ladder, learning from each TXOP (link/arf.rs).
    Commodity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signal {
    /// Seed 000: RSSI kept within -41..-43 dBm.
    Strong,
    /// Seed 000: RSSI within -65..-69 dBm.
    Weak,
}

impl Signal {
    /// (low, high) dBm.
    pub fn range_dbm(self) -> (f64, f64) {
        match self {
            Signal::Strong => (-43.0, -41.0),
            Signal::Weak => (-69.0, -65.0),
        }
    }
}

/// A trace file's format: the scenario's `trace.format` and the trace reader's (link/trace.rs,
/// which also parses and prints its name) one enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    Mahimahi,
    Csv,
    Wil6210,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 3] = [TraceFormat::Mahimahi, TraceFormat::Csv, TraceFormat::Wil6210];

    /// The name a scenario spells it by.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Mahimahi => "mahimahi",
            TraceFormat::Csv => "csv",
            TraceFormat::Wil6210 => "wil6210",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceCfg {
    /// Path of the trace file (relative paths are resolved against the scenario file's folder
    /// by the front end).
    pub file: String,
    #[serde(default = "d_trace_format")]
    pub format: TraceFormat,
    /// Mahimahi: width of the bins delivery opportunities are averaged over.
    #[serde(default = "d_trace_bin_ms")]
    pub bin_ms: f64,
    /// Start the trace again when it ends (as mahimahi does unless --once).
    #[serde(default = "d_true", rename = "loop")]
    pub looping: bool,
    /// Shift: the trace's time 0 falls at this simulated time.
    #[serde(default)]
    pub start_s: f64,
    /// Wired paths: what the trace's down periods do with the packets, "hold" (the default)
    /// or "drop" (docs/traces.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage: Option<Outage>,
}

fn d_trace_format() -> TraceFormat {
    TraceFormat::Csv
}
fn d_trace_bin_ms() -> f64 {
    10.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleStep {
    pub t_s: f64,
    /// New rate (both directions scale by the same factor) from t_s on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// Link up (true) or down (false) from t_s on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<bool>,
    /// With `up = false`: the outage loses data (the queue is purged and whatever is sent
    /// while down is lost, both directions) instead of holding it until the link returns.
    #[serde(default, skip_serializing_if = "is_false")]
    pub drop: bool,
    /// A wired path only, alone in its step: at t_s a middlebox on the path resets every TCP
    /// connection crossing it (both ends receive a RST, as an nft `reject with tcp reset` in the
    /// router does); the path itself stays up and carries new connections (docs/scenario.md).
    #[serde(default, skip_serializing_if = "is_false")]
    pub reset: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What a wired link does with its packets while it is down: the scenario's (a schedule step's
/// `drop`, a trace's `outage`) and the wire's (link/wire.rs) one enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outage {
    /// Queued frames stay queued and new ones queue behind them (as far as the queue holds)
    /// until the link returns: a paused interface, a scan's dwell off channel.
    #[default]
    Hold,
    /// Queued frames are discarded and new ones refused until the link returns: `ip link set
    /// down` (which purges the interface's queue), a cut cable, a drop rule.
    Drop,
}

impl Outage {
    /// The name a scenario spells it by.
    pub fn name(self) -> &'static str {
        match self {
            Outage::Hold => "hold",
            Outage::Drop => "drop",
        }
    }
}
