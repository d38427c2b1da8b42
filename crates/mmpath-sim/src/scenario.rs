//! The scenario file model: the one contract between the Python front end and the simulator.
//!
//! Python parses the TOML file, applies `--set` overrides and hands the result over as JSON.
//! Everything is validated here, once: serde rejects unknown fields and wrong types, and
//! [`Scenario::validate`] checks ranges and cross-references. Errors name the field with the
//! same dotted path users type after `--set` (`flow.0.cc`). Every field and default is
//! documented in docs/scenario.md; keep the two in step.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A scenario error: the dotted path of the offending field and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

pub(crate) fn err(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError { field: field.into(), message: message.into() }
}

// ----- defaults (sources in docs/scenario.md and next to each value) -----

fn d_name() -> String {
    "scenario".into()
}
fn d_duration() -> f64 {
    10.0
}
fn d_seed() -> u64 {
    1
}
fn d_true() -> bool {
    true
}
/// 10 GbE backbone between AP and server (seed 003's testbed; seed 001 used 1 GbE).
fn d_backbone_rate() -> f64 {
    10_000.0
}
/// 0.5 ms each way: a 1 ms base RTT, the smallest one seed 003 used.
fn d_backbone_delay() -> f64 {
    0.5
}
/// Jumbo frames on the wired side so that the radio's MTU (up to 7912 on wil6210) is the
/// path MTU, as in seed 000's MTU experiments.
fn d_backbone_mtu() -> u32 {
    9000
}
/// Ethernet per-frame cost on the wire: preamble+SFD 8, header 14, FCS 4, inter-frame gap 12.
fn d_eth_overhead() -> u32 {
    38
}
fn d_path_mtu() -> u32 {
    1500
}
fn d_timeline_ms() -> f64 {
    10.0
}
/// Linux tcp_rmem[2] (6 MB on the kernels the papers used; FACTS.md).
fn d_rmem_max() -> u64 {
    6_291_456
}
/// Linux tcp_wmem[2] (4 MB; FACTS.md).
fn d_wmem_max() -> u64 {
    4_194_304
}
/// Linux TCP_INIT_CWND (include/net/tcp.h).
fn d_init_cwnd() -> u32 {
    10
}
/// Linux TCP_RTO_MIN = HZ/5 (include/net/tcp.h).
fn d_min_rto_ms() -> f64 {
    200.0
}

/// Link queue default: Linux's txqueuelen of 1000 frames at the link MTU.
pub const DEFAULT_QUEUE_FRAMES: u64 = 1000;

// ----- the model -----

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default = "d_name")]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Simulated seconds.
    #[serde(default = "d_duration")]
    pub duration_s: f64,
    /// Default seed when the caller gives none.
    #[serde(default = "d_seed")]
    pub seed: u64,
    #[serde(default)]
    pub backbone: Backbone,
    #[serde(default)]
    pub timeline: TimelineCfg,
    pub path: Vec<PathCfg>,
    pub flow: Vec<FlowCfg>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Backbone {
    /// When false the server sits at the AP: flows cross the radio path only (a point-to-point
    /// set-up, as in the ns-3 peer benchmark).
    #[serde(default = "d_true")]
    pub enabled: bool,
    #[serde(default = "d_backbone_rate")]
    pub rate_mbps: f64,
    /// One-way delay AP <-> server; twice this is the base RTT the backbone adds.
    #[serde(default = "d_backbone_delay")]
    pub delay_ms: f64,
    #[serde(default = "d_backbone_mtu")]
    pub mtu_bytes: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_bytes: Option<u64>,
    #[serde(default = "d_eth_overhead")]
    pub frame_overhead_bytes: u32,
}

impl Default for Backbone {
    fn default() -> Self {
        Backbone {
            enabled: true,
            rate_mbps: d_backbone_rate(),
            delay_ms: d_backbone_delay(),
            mtu_bytes: d_backbone_mtu(),
            queue_bytes: None,
            frame_overhead_bytes: d_eth_overhead(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineCfg {
    /// Sampling interval of timeline.parquet.
    #[serde(default = "d_timeline_ms")]
    pub sample_ms: f64,
}

impl Default for TimelineCfg {
    fn default() -> Self {
        TimelineCfg { sample_ms: d_timeline_ms() }
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateAdaptation {
    /// The MCS in `mcs`, whatever the signal.
    Fixed,
    /// The MCS maximising rate x (1 - PER) at the current signal.
    Ideal,
    /// Auto Rate Fallback over the device's MCS ladder, learning from each TXOP.
    Commodity,
}

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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfererCfg {
    pub channel: ChannelRelation,
    /// Fraction of the time the interfering link transmits (1 = saturated, e.g. UDP at full rate).
    #[serde(default = "d_one")]
    pub load: f64,
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

fn d_one() -> f64 {
    1.0
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormatCfg {
    Mahimahi,
    Csv,
    Wil6210,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceCfg {
    /// Path of the trace file (relative paths are resolved against the scenario file's folder
    /// by the front end).
    pub file: String,
    #[serde(default = "d_trace_format")]
    pub format: TraceFormatCfg,
    /// Mahimahi: width of the bins delivery opportunities are averaged over.
    #[serde(default = "d_trace_bin_ms")]
    pub bin_ms: f64,
    /// Start the trace again when it ends (as mahimahi does unless --once).
    #[serde(default = "d_true", rename = "loop")]
    pub looping: bool,
    /// Shift: the trace's time 0 falls at this simulated time.
    #[serde(default)]
    pub start_s: f64,
}

fn d_trace_format() -> TraceFormatCfg {
    TraceFormatCfg::Csv
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    Tcp,
    Udp,
    /// Multipath TCP over several paths (one subflow per path).
    Mptcp,
}

/// MPTCP path usage (seed 000): every subflow carries data, or the backup subflows only when
/// no other is available.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MptcpMode {
    Fullmesh,
    Backup,
}

/// Which pairs of addresses an MPTCP connection opens subflows between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SubflowLayout {
    /// One subflow per path, staying on that path both ways (a single-homed server behind the
    /// AP, or a path manager that pairs each client address with the same path's server address).
    #[serde(rename = "per-path")]
    PerPath,
    /// One subflow per (client address, server address) pair: what the v0.9x `fullmesh` path
    /// manager opens when both hosts have one address per path and announce them (ADD_ADDR).
    /// With source-address policy routing on both hosts (the multipath-tcp.org set-up), every
    /// packet leaves on the path of its own source address, so a "crossed" subflow sends its
    /// data on one path and gets its ACKs over the other, and its MSS is the smaller path's.
    #[serde(rename = "address-mesh")]
    AddressMesh,
}

/// Which Linux MPTCP implementation's rules to follow (FACTS.md, MPTCP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kernel {
    /// The out-of-tree multipath-tcp.org v0.9x kernel the papers used: pf flag, minRTT.
    #[serde(rename = "linux-v0.9x")]
    V09x,
    /// Upstream Linux (5.6+): stale subflows, the linger-time scheduler.
    #[serde(rename = "linux-upstream")]
    Upstream,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedName {
    /// The kernel's default: `upstream` for linux-upstream, `minrtt` for linux-v0.9x.
    Default,
    Upstream,
    Minrtt,
    Roundrobin,
    Redundant,
    Blest,
    Ecf,
    Fixedratio,
    Musher,
    Amuse,
    /// Energy-aware (seed 002 Fig. 9): MuSher's ratio, then the cheapest configuration.
    Energy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoupledName {
    /// Each subflow runs the flow's `cc` on its own (upstream Linux).
    Uncoupled,
    Lia,
    Olia,
    Balia,
}

/// AMuSe's three mechanisms, each switchable (seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmuseCfg {
    #[serde(default = "d_true")]
    pub scan: bool,
    #[serde(default = "d_true")]
    pub contention: bool,
    #[serde(default = "d_true")]
    pub blockage: bool,
}

impl Default for AmuseCfg {
    fn default() -> Self {
        AmuseCfg { scan: true, contention: true, blockage: true }
    }
}

/// MP_PRIO: change a subflow's backup flag at `t_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrioCfg {
    pub t_s: f64,
    pub path: String,
    pub backup: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// Backlogged sender (iperf3 -t, or -n with `bytes`).
    Bulk,
    /// TCP source limited to `rate_mbps` (iperf3 -b with its 1 ms pacing timer).
    Rate,
    /// UDP constant bit rate (iperf3 -u -b).
    Cbr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Server -> client (AP transmits on the radio path).
    Download,
    /// Client -> server.
    Upload,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    Reno,
    Cubic,
    Vegas,
    Bbr,
}

impl CcKind {
    pub fn name(self) -> &'static str {
        match self {
            CcKind::Reno => "reno",
            CcKind::Cubic => "cubic",
            CcKind::Vegas => "vegas",
            CcKind::Bbr => "bbr",
        }
    }
}

/// A socket buffer size: `"auto"` (Linux autotuning) or a fixed byte count (SO_RCVBUF/SO_SNDBUF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BufSize {
    #[default]
    Auto,
    Bytes(u64),
}

impl Serialize for BufSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BufSize::Auto => s.serialize_str("auto"),
            BufSize::Bytes(b) => s.serialize_u64(*b),
        }
    }
}

impl<'de> Deserialize<'de> for BufSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = BufSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"auto\" or a positive byte count")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BufSize, E> {
                if v == "auto" {
                    Ok(BufSize::Auto)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BufSize, E> {
                if v == 0 {
                    Err(E::invalid_value(serde::de::Unexpected::Unsigned(0), &self))
                } else {
                    Ok(BufSize::Bytes(v))
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BufSize, E> {
                if v <= 0 {
                    Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self))
                } else {
                    Ok(BufSize::Bytes(v as u64))
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpOpts {
    /// Receive buffer: "auto" = Linux receive-buffer autotuning up to `rmem_max_bytes`.
    #[serde(default)]
    pub rcvbuf_bytes: BufSize,
    /// Send buffer: "auto" = Linux send-buffer autotuning up to `wmem_max_bytes`.
    #[serde(default)]
    pub sndbuf_bytes: BufSize,
    /// tcp_rmem[2] of the receiving host. Unset: the client device's own (a phone's Android
    /// network buffers, `HostProfile`) when the client receives, else Linux's 6 MB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmem_max_bytes: Option<u64>,
    /// tcp_wmem[2] of the sending host, filled the same way (Linux's 4 MB by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wmem_max_bytes: Option<u64>,
    #[serde(default = "d_init_cwnd")]
    pub initial_cwnd: u32,
    #[serde(default = "d_min_rto_ms")]
    pub min_rto_ms: f64,
    #[serde(default = "d_true")]
    pub delayed_ack: bool,
    /// CUBIC's HyStart (ignored by other algorithms).
    #[serde(default = "d_true")]
    pub hystart: bool,
    /// Pace every algorithm at the stack's pacing rate (Linux with the fq qdisc or
    /// SO_MAX_PACING_RATE); BBR always paces (Linux internal pacing).
    #[serde(default)]
    pub pacing: bool,
    /// TCP Small Queues: at most this many bytes of the socket may wait below TCP (in the first
    /// hop's queue) before it stops sending (net.ipv4.tcp_limit_output_bytes); 0 turns TSQ off.
    #[serde(default = "d_limit_output")]
    pub limit_output_bytes: u64,
    /// Tail loss probes (net.ipv4.tcp_early_retrans = 3, the default since Linux 3.10).
    #[serde(default = "d_true")]
    pub tail_loss_probes: bool,
    /// F-RTO, spurious-RTO detection and undo (net.ipv4.tcp_frto = 2, the default since 3.10).
    #[serde(default = "d_true")]
    pub frto: bool,
}

/// net.ipv4.tcp_limit_output_bytes of current kernels (1 MiB; it was 128 KiB before Linux 4.2
/// and 256 KiB after, include/net/tcp.h / tcp_ipv4.c).
fn d_limit_output() -> u64 {
    1_048_576
}

impl TcpOpts {
    /// tcp_rmem[2] in effect (filled by `fill_defaults`; Linux's if read before).
    pub fn rmem_max(&self) -> u64 {
        self.rmem_max_bytes.unwrap_or_else(d_rmem_max)
    }
    /// tcp_wmem[2] in effect.
    pub fn wmem_max(&self) -> u64 {
        self.wmem_max_bytes.unwrap_or_else(d_wmem_max)
    }
}

impl Default for TcpOpts {
    fn default() -> Self {
        TcpOpts {
            rcvbuf_bytes: BufSize::Auto,
            sndbuf_bytes: BufSize::Auto,
            rmem_max_bytes: None,
            wmem_max_bytes: None,
            initial_cwnd: d_init_cwnd(),
            min_rto_ms: d_min_rto_ms(),
            delayed_ack: true,
            hystart: true,
            pacing: false,
            limit_output_bytes: d_limit_output(),
            tail_loss_probes: true,
            frto: true,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default = "d_kind")]
    pub kind: FlowKind,
    /// Default: bulk for TCP, cbr for UDP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppKind>,
    /// Name of the path the flow uses; default the first path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default = "d_direction")]
    pub direction: Direction,
    #[serde(default)]
    pub start_s: f64,
    /// When the application stops sending; default the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Application rate for `rate` and `cbr` apps, Mbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// Total bytes to send (iperf3 -n); default unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Congestion control (TCP only); default cubic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcKind>,
    /// UDP datagram payload; default MTU - 28 (IPv4 + UDP headers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_bytes: Option<u32>,
    #[serde(default)]
    pub tcp: TcpOpts,
    /// MPTCP: the paths the connection uses, one subflow each; the first carries MP_CAPABLE.
    /// Default: every path, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
    /// MPTCP: fullmesh (default) or backup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<MptcpMode>,
    /// MPTCP: per-path subflows (default) or a subflow per pair of addresses (address-mesh;
    /// needs the AP to be the endpoint, `backbone.enabled = false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subflows: Option<SubflowLayout>,
    /// MPTCP: subflows with the backup flag. Default: none in fullmesh, all but the first path
    /// in backup mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup_paths: Option<Vec<String>>,
    /// MPTCP: kernel rules, default linux-upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<Kernel>,
    /// MPTCP: packet scheduler, default the kernel's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<SchedName>,
    /// MPTCP fixedratio (and the starting ratio of musher / amuse): segments out of every 100
    /// that go to the first path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<u32>,
    /// MPTCP: coupled congestion control, default uncoupled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupled: Option<CoupledName>,
    /// MPTCP amuse: which mechanisms are on (all by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amuse: Option<AmuseCfg>,
    /// MPTCP: MP_PRIO changes of the backup flag during the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prio: Vec<PrioCfg>,
    /// MPTCP energy scheduler: each path's maximum rate, Mbit/s, in `paths` order (default:
    /// seed 002's single-path rates for the flow's direction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rates_mbps: Option<Vec<f64>>,
}

fn d_kind() -> FlowKind {
    FlowKind::Tcp
}
fn d_direction() -> Direction {
    Direction::Download
}

// ----- parsing -----

/// Turns serde_path_to_error's `flow[0].cc` into the `--set` spelling `flow.0.cc`.
fn dotted(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut parts: Vec<String> = Vec::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => parts.push(index.to_string()),
            Segment::Map { key } => parts.push(key.clone()),
            Segment::Enum { variant } => parts.push(variant.clone()),
            Segment::Unknown => {}
        }
    }
    parts.join(".")
}

/// Makes serde's messages read like the rest of mmpath's ("expected one of `a`, `b`").
fn tidy(msg: &str) -> String {
    // "expected struct TcpOpts" names a Rust type; users wrote a TOML table.
    let msg = match msg.find("expected struct ") {
        Some(i) => format!("{}expected a table", &msg[..i]),
        None => msg.to_string(),
    };
    // serde_json's whole message for a named choice (an enum) given as a number or a table.
    if msg == "expected value" {
        return "expected a name in quotes: one of the values docs/scenario.md lists for this field".into();
    }
    msg.replace("floating point", "number")
        .replace("expected f64", "expected a number")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected u32", "expected a non-negative integer")
}

impl Scenario {
    /// Parses, fills defaults and validates a scenario given as JSON.
    pub fn from_json(json: &str) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(json);
        let mut sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = dotted(e.path());
            let inner = e.into_inner();
            let msg = inner.to_string();
            // serde_json appends " at line L column C" which points into the generated JSON,
            // not the user's file: drop it.
            let msg = match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            err(field, tidy(&msg))
        })?;
        sc.fill_defaults();
        sc.validate()?;
        Ok(sc)
    }

    /// The scenario with every default spelled out, as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("scenario serialises")
    }

    fn fill_defaults(&mut self) {
        for (i, p) in self.path.iter_mut().enumerate() {
            if p.name.is_none() {
                p.name = Some(format!("path{i}"));
            }
            if p.technology == Technology::Wired {
                if p.uplink_rate_mbps.is_none() {
                    p.uplink_rate_mbps = p.rate_mbps;
                }
            } else {
                if p.rate_adaptation.is_none() {
                    p.rate_adaptation =
                        Some(if p.mcs.is_some() { RateAdaptation::Fixed } else { RateAdaptation::Ideal });
                }
                if p.rssi_dbm.is_none() && p.signal.is_none() && p.distance_m.is_none() {
                    p.signal = Some(Signal::Strong);
                }
                p.path_loss_exponent.get_or_insert(2.0);
                p.shadowing_db.get_or_insert(0.0);
                p.fading_db.get_or_insert(0.0);
                p.coherence_ms.get_or_insert(10.0);
                if p.device.is_none() {
                    p.device = Some(crate::link::device::default_for(p.technology).name.to_string());
                }
                // "rog-phone-2" names the phone; each band has its own preset.
                if p.device.as_deref() == Some("rog-phone-2") {
                    let band = if p.technology == Technology::Dot11ad { "11ad" } else { "11ac" };
                    p.device = Some(format!("rog-phone-2-{band}"));
                }
                if matches!(p.technology, Technology::Dot11ac | Technology::Dot11n) {
                    let ac = p.technology == Technology::Dot11ac;
                    p.bandwidth_mhz.get_or_insert(if ac { 80 } else { 20 });
                    p.streams.get_or_insert(if ac { 2 } else { 1 });
                    p.short_gi.get_or_insert(true);
                    p.band_ghz.get_or_insert(if ac { 5.0 } else { 2.4 });
                }
                if !p.interferer.is_empty() {
                    use crate::link::{device, medium};
                    let phy = device::radio_phy(p);
                    let aci = medium::adjacent_rejection_db(&phy);
                    let top = p
                        .device
                        .as_deref()
                        .and_then(device::find)
                        .and_then(|d| device::mcs_ladder(p, d).last().copied());
                    let mtu = p.mtu_bytes;
                    for i in p.interferer.iter_mut() {
                        let same = i.channel == ChannelRelation::Same;
                        i.rejection_db.get_or_insert(if same { 0.0 } else { (aci * 10.0).round() / 10.0 });
                        if let (None, Some(m)) = (i.mcs, top) {
                            i.mcs = Some(m);
                        }
                        i.mtu_bytes.get_or_insert(mtu);
                    }
                }
            }
            if p.queue_bytes.is_none() {
                p.queue_bytes = Some(DEFAULT_QUEUE_FRAMES * p.mtu_bytes as u64);
            }
        }
        if self.backbone.queue_bytes.is_none() {
            self.backbone.queue_bytes = Some(DEFAULT_QUEUE_FRAMES * self.backbone.mtu_bytes as u64);
        }
        let first_path = self.path.first().and_then(|p| p.name.clone());
        // The client host behind each path, where its device has one (a phone).
        let hosts: Vec<(String, &'static crate::energy::HostProfile)> = self
            .path
            .iter()
            .filter_map(|p| {
                let h = p.device.as_deref().and_then(crate::energy::host_of)?;
                Some((p.name.clone()?, h))
            })
            .collect();
        for (i, f) in self.flow.iter_mut().enumerate() {
            if f.name.is_none() {
                f.name = Some(format!("flow{i}"));
            }
            if f.app.is_none() {
                f.app = Some(match f.kind {
                    FlowKind::Tcp | FlowKind::Mptcp => AppKind::Bulk,
                    FlowKind::Udp => AppKind::Cbr,
                });
            }
            if f.kind != FlowKind::Udp && f.cc.is_none() {
                f.cc = Some(CcKind::Cubic);
            }
            if f.kind == FlowKind::Mptcp {
                if f.paths.is_none() {
                    f.paths = Some(self.path.iter().filter_map(|p| p.name.clone()).collect());
                }
                let mode = *f.mode.get_or_insert(MptcpMode::Fullmesh);
                if f.backup_paths.is_none() {
                    let ps = f.paths.as_deref().unwrap_or(&[]);
                    f.backup_paths =
                        Some(if mode == MptcpMode::Backup { ps.iter().skip(1).cloned().collect() } else { vec![] });
                }
                let kernel = *f.kernel.get_or_insert(Kernel::Upstream);
                if f.scheduler.is_none() || f.scheduler == Some(SchedName::Default) {
                    f.scheduler = Some(match kernel {
                        Kernel::Upstream => SchedName::Upstream,
                        Kernel::V09x => SchedName::Minrtt,
                    });
                }
                f.coupled.get_or_insert(CoupledName::Uncoupled);
                if f.path.is_none() {
                    f.path = f.paths.as_ref().and_then(|p| p.first().cloned());
                }
                if matches!(f.scheduler, Some(SchedName::Fixedratio | SchedName::Musher | SchedName::Amuse))
                    && f.ratio.is_none()
                {
                    // Start from an even split; MuSher and AMuSe move away from it.
                    f.ratio = Some(50);
                }
                if f.scheduler == Some(SchedName::Amuse) && f.amuse.is_none() {
                    f.amuse = Some(AmuseCfg::default());
                }
            }
            if f.path.is_none() {
                f.path = first_path.clone();
            }
            if f.stop_s.is_none() {
                f.stop_s = Some(self.duration_s);
            }
            // Socket buffer ceilings: the client's own host sets them for its end of the flow
            // (what it receives on a download, what it sends on an upload); the server end is a
            // Linux host with the kernel's defaults.
            let used = f.paths.clone().unwrap_or_else(|| f.path.iter().cloned().collect());
            let client = hosts.iter().find(|(n, _)| used.contains(n)).map(|(_, h)| *h);
            let down = f.direction == Direction::Download;
            if f.tcp.rmem_max_bytes.is_none() {
                f.tcp.rmem_max_bytes = Some(client.filter(|_| down).map_or_else(d_rmem_max, |h| h.tcp_rmem_max));
            }
            if f.tcp.wmem_max_bytes.is_none() {
                f.tcp.wmem_max_bytes = Some(client.filter(|_| !down).map_or_else(d_wmem_max, |h| h.tcp_wmem_max));
            }
        }
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        fn pos(field: &str, v: f64) -> Result<(), ScenarioError> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(err(field, format!("must be > 0 (got {v})")))
            }
        }
        fn nonneg(field: &str, v: f64) -> Result<(), ScenarioError> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(err(field, format!("must be >= 0 (got {v})")))
            }
        }
        fn range_u(field: &str, v: u64, lo: u64, hi: u64) -> Result<(), ScenarioError> {
            if v >= lo && v <= hi {
                Ok(())
            } else {
                Err(err(field, format!("must be between {lo} and {hi} (got {v})")))
            }
        }
        pos("duration_s", self.duration_s)?;
        if self.duration_s > 86_400.0 {
            return Err(err("duration_s", format!("must be at most 86400 s (got {})", self.duration_s)));
        }
        pos("timeline.sample_ms", self.timeline.sample_ms)?;
        if self.timeline.sample_ms < 0.1 {
            return Err(err("timeline.sample_ms", format!("must be >= 0.1 (got {})", self.timeline.sample_ms)));
        }
        let b = &self.backbone;
        pos("backbone.rate_mbps", b.rate_mbps)?;
        nonneg("backbone.delay_ms", b.delay_ms)?;
        range_u("backbone.mtu_bytes", b.mtu_bytes as u64, 576, 65_535)?;
        range_u("backbone.frame_overhead_bytes", b.frame_overhead_bytes as u64, 0, 1_000)?;
        let bq = b.queue_bytes.unwrap_or(0);
        if bq < b.mtu_bytes as u64 {
            return Err(err(
                "backbone.queue_bytes",
                format!("must hold at least one MTU ({} bytes) (got {bq})", b.mtu_bytes),
            ));
        }
        if self.path.is_empty() {
            return Err(err("path", "at least one [[path]] is required"));
        }
        if self.path.len() > 64 {
            return Err(err("path", format!("at most 64 paths are supported (got {})", self.path.len())));
        }
        for (i, p) in self.path.iter().enumerate() {
            let f = |k: &str| format!("path.{i}.{k}");
            let name = p.name.as_deref().unwrap_or("");
            if name.is_empty() {
                return Err(err(f("name"), "must not be empty"));
            }
            if self.path[..i].iter().any(|q| q.name.as_deref() == Some(name)) {
                return Err(err(f("name"), format!("duplicate path name {name:?}; path names must be unique")));
            }
            if p.technology == Technology::Wired {
                match p.rate_mbps {
                    Some(r) => pos(&f("rate_mbps"), r)?,
                    None => return Err(err(f("rate_mbps"), "required for a wired path (technology = \"wired\")")),
                }
                pos(&f("uplink_rate_mbps"), p.uplink_rate_mbps.or(p.rate_mbps).unwrap_or(0.0))?;
                for (k, set) in [
                    ("mcs", p.mcs.is_some()),
                    ("rate_adaptation", p.rate_adaptation.is_some()),
                    ("rssi_dbm", p.rssi_dbm.is_some()),
                    ("signal", p.signal.is_some()),
                    ("device", p.device.is_some()),
                    ("bandwidth_mhz", p.bandwidth_mhz.is_some()),
                    ("streams", p.streams.is_some()),
                    ("short_gi", p.short_gi.is_some()),
                    ("band_ghz", p.band_ghz.is_some()),
                    ("distance_m", p.distance_m.is_some()),
                    ("path_loss_exponent", p.path_loss_exponent.is_some()),
                    ("shadowing_db", p.shadowing_db.is_some()),
                    ("fading_db", p.fading_db.is_some()),
                    ("coherence_ms", p.coherence_ms.is_some()),
                    ("event", !p.event.is_empty()),
                    ("interferer", !p.interferer.is_empty()),
                ] {
                    if set {
                        return Err(err(
                            f(k),
                            "only radio paths take this; set technology = \"11ad\", \"11ac\" or \"11n\"",
                        ));
                    }
                }
            } else {
                crate::link::device::validate_radio(p, i)?;
            }
            crate::energy::validate_host(p, i)?;
            nonneg(&f("delay_ms"), p.delay_ms)?;
            range_u(&f("mtu_bytes"), p.mtu_bytes as u64, 576, 65_535)?;
            range_u(&f("frame_overhead_bytes"), p.frame_overhead_bytes as u64, 0, 1_000)?;
            let q = p.queue_bytes.unwrap_or(0);
            if q < p.mtu_bytes as u64 {
                return Err(err(
                    f("queue_bytes"),
                    format!("must hold at least one MTU ({} bytes) (got {q})", p.mtu_bytes),
                ));
            }
            if !(p.loss_pct.is_finite() && (0.0..100.0).contains(&p.loss_pct)) {
                return Err(err(f("loss_pct"), format!("must be in [0, 100) (got {})", p.loss_pct)));
            }
            if let Some(t) = &p.trace {
                if t.file.trim().is_empty() {
                    return Err(err(f("trace.file"), "must name a trace file"));
                }
                if !(t.bin_ms.is_finite() && t.bin_ms >= 0.001 && t.bin_ms <= 10_000.0) {
                    return Err(err(f("trace.bin_ms"), format!("must be between 0.001 and 10000 (got {})", t.bin_ms)));
                }
                nonneg(&f("trace.start_s"), t.start_s)?;
            }
            let mut last = -1.0;
            for (j, s) in p.schedule.iter().enumerate() {
                let g = |k: &str| format!("path.{i}.schedule.{j}.{k}");
                nonneg(&g("t_s"), s.t_s)?;
                if s.t_s < last {
                    return Err(err(
                        g("t_s"),
                        format!("schedule steps must be in time order ({} after {last})", s.t_s),
                    ));
                }
                last = s.t_s;
                if let Some(r) = s.rate_mbps {
                    if p.technology != Technology::Wired {
                        return Err(err(g("rate_mbps"), "a radio path's rate follows its MCS; schedule `up` only"));
                    }
                    // 0 is allowed: the path stalls (up, but no service) until the next step.
                    nonneg(&g("rate_mbps"), r)?;
                }
                if s.rate_mbps.is_none() && s.up.is_none() {
                    return Err(err(format!("path.{i}.schedule.{j}"), "a step needs `rate_mbps` or `up` (or both)"));
                }
            }
        }
        if self.flow.is_empty() {
            return Err(err("flow", "at least one [[flow]] is required"));
        }
        if self.flow.len() > 1024 {
            return Err(err("flow", format!("at most 1024 flows are supported (got {})", self.flow.len())));
        }
        let names: Vec<&str> = self.path.iter().filter_map(|p| p.name.as_deref()).collect();
        for (i, fl) in self.flow.iter().enumerate() {
            let f = |k: &str| format!("flow.{i}.{k}");
            let name = fl.name.as_deref().unwrap_or("");
            if name.is_empty() {
                return Err(err(f("name"), "must not be empty"));
            }
            if self.flow[..i].iter().any(|q| q.name.as_deref() == Some(name)) {
                return Err(err(f("name"), format!("duplicate flow name {name:?}; flow names must be unique")));
            }
            let pname = fl.path.as_deref().unwrap_or("");
            if !names.contains(&pname) {
                return Err(err(f("path"), format!("no path named {pname:?} (paths: {})", names.join(", "))));
            }
            nonneg(&f("start_s"), fl.start_s)?;
            let stop = fl.stop_s.unwrap_or(self.duration_s);
            if !(stop.is_finite() && stop > fl.start_s) {
                return Err(err(f("stop_s"), format!("must be after start_s ({}) (got {stop})", fl.start_s)));
            }
            if fl.start_s >= self.duration_s {
                return Err(err(
                    f("start_s"),
                    format!("must be before the end of the run, duration_s = {} (got {})", self.duration_s, fl.start_s),
                ));
            }
            let app = fl.app.unwrap_or(AppKind::Bulk);
            match (fl.kind, app) {
                (FlowKind::Tcp, AppKind::Cbr) => {
                    return Err(err(f("app"), "`cbr` is a UDP application; TCP flows take `bulk` or `rate`"));
                }
                (FlowKind::Mptcp, AppKind::Cbr) => {
                    return Err(err(f("app"), "`cbr` is a UDP application; MPTCP flows take `bulk` or `rate`"));
                }
                (FlowKind::Udp, AppKind::Bulk | AppKind::Rate) => {
                    return Err(err(f("app"), "UDP flows take `cbr`"));
                }
                _ => {}
            }
            match app {
                AppKind::Rate | AppKind::Cbr => match fl.rate_mbps {
                    Some(r) => pos(&f("rate_mbps"), r)?,
                    None => {
                        return Err(err(
                            f("rate_mbps"),
                            format!("required for app = \"{}\"", if app == AppKind::Rate { "rate" } else { "cbr" }),
                        ))
                    }
                },
                AppKind::Bulk => {
                    if fl.rate_mbps.is_some() {
                        return Err(err(
                            f("rate_mbps"),
                            "only `rate` and `cbr` apps take a rate; remove it or set app = \"rate\"",
                        ));
                    }
                }
            }
            if let Some(b) = fl.bytes {
                if b == 0 {
                    return Err(err(f("bytes"), "must be > 0 (omit it for an unlimited transfer)"));
                }
            }
            if fl.kind == FlowKind::Udp {
                if fl.cc.is_some() {
                    return Err(err(f("cc"), "UDP flows have no congestion control; remove `cc`"));
                }
                let mtu = self.path_mtu(pname);
                if let Some(pb) = fl.packet_bytes {
                    if pb == 0 || pb + 28 > mtu {
                        return Err(err(
                            f("packet_bytes"),
                            format!("must be between 1 and {} (MTU {mtu} - 28) (got {pb})", mtu - 28),
                        ));
                    }
                }
            } else if fl.packet_bytes.is_some() {
                return Err(err(f("packet_bytes"), "only UDP flows take packet_bytes (TCP uses the MSS)"));
            }
            self.validate_mptcp(i, fl, &names)?;
            let t = &fl.tcp;
            range_u(&f("tcp.initial_cwnd"), t.initial_cwnd as u64, 1, 1000)?;
            if t.limit_output_bytes != 0 {
                range_u(&f("tcp.limit_output_bytes"), t.limit_output_bytes, 2048, 1 << 31)?;
            }
            pos(&f("tcp.min_rto_ms"), t.min_rto_ms)?;
            range_u(&f("tcp.rmem_max_bytes"), t.rmem_max(), 4096, 1 << 31)?;
            range_u(&f("tcp.wmem_max_bytes"), t.wmem_max(), 4096, 1 << 31)?;
            for (k, b) in [("tcp.rcvbuf_bytes", t.rcvbuf_bytes), ("tcp.sndbuf_bytes", t.sndbuf_bytes)] {
                if let BufSize::Bytes(v) = b {
                    range_u(&f(k), v, 2048, 1 << 31)?;
                }
            }
        }
        Ok(())
    }

    /// The MPTCP-only fields: allowed only on MPTCP flows, and consistent with the paths.
    fn validate_mptcp(&self, i: usize, fl: &FlowCfg, names: &[&str]) -> Result<(), ScenarioError> {
        let f = |k: &str| format!("flow.{i}.{k}");
        if fl.kind != FlowKind::Mptcp {
            let set = [
                ("paths", fl.paths.is_some()),
                ("mode", fl.mode.is_some()),
                ("subflows", fl.subflows.is_some()),
                ("backup_paths", fl.backup_paths.is_some()),
                ("kernel", fl.kernel.is_some()),
                ("scheduler", fl.scheduler.is_some()),
                ("ratio", fl.ratio.is_some()),
                ("coupled", fl.coupled.is_some()),
                ("amuse", fl.amuse.is_some()),
                ("prio", !fl.prio.is_empty()),
                ("max_rates_mbps", fl.max_rates_mbps.is_some()),
            ];
            if let Some((k, _)) = set.iter().find(|(_, s)| *s) {
                return Err(err(f(k), "only MPTCP flows (kind = \"mptcp\") take this field"));
            }
            return Ok(());
        }
        let paths = fl.paths.as_deref().unwrap_or(&[]);
        if paths.is_empty() {
            return Err(err(f("paths"), "an MPTCP flow needs at least one path"));
        }
        if paths.len() > 8 {
            return Err(err(f("paths"), format!("at most 8 subflows are supported (got {})", paths.len())));
        }
        for (j, p) in paths.iter().enumerate() {
            if !names.contains(&p.as_str()) {
                return Err(err(
                    format!("flow.{i}.paths.{j}"),
                    format!("no path named {p:?} (paths: {})", names.join(", ")),
                ));
            }
            if paths[..j].contains(p) {
                return Err(err(format!("flow.{i}.paths.{j}"), format!("path {p:?} is listed twice")));
            }
        }
        for (j, p) in fl.backup_paths.as_deref().unwrap_or(&[]).iter().enumerate() {
            if !paths.contains(p) {
                return Err(err(
                    format!("flow.{i}.backup_paths.{j}"),
                    format!("{p:?} is not one of this flow's paths ({})", paths.join(", ")),
                ));
            }
        }
        if let Some(r) = fl.ratio {
            if r > 100 {
                return Err(err(f("ratio"), format!("segments per 100 for the first path: 0..=100 (got {r})")));
            }
            if !matches!(
                fl.scheduler,
                Some(SchedName::Fixedratio | SchedName::Musher | SchedName::Amuse | SchedName::Energy)
            ) {
                return Err(err(f("ratio"), "only the fixedratio, musher, amuse and energy schedulers take a ratio"));
            }
        }
        if fl.subflows == Some(SubflowLayout::AddressMesh) {
            if self.backbone.enabled {
                return Err(err(
                    f("subflows"),
                    "\"address-mesh\" needs a multihomed server: the AP itself is the endpoint \
                     (backbone.enabled = false); behind a backbone the server has one address (use \"per-path\")",
                ));
            }
            let n = paths.len() * paths.len();
            if n > 8 {
                return Err(err(
                    f("subflows"),
                    format!("\"address-mesh\" opens one subflow per pair of addresses ({n} for {} paths); at most 8 are supported", paths.len()),
                ));
            }
            if matches!(
                fl.scheduler,
                Some(SchedName::Fixedratio | SchedName::Musher | SchedName::Amuse | SchedName::Energy)
            ) {
                return Err(err(
                    f("subflows"),
                    "the fixedratio, musher, amuse and energy schedulers split traffic between exactly one subflow per path; use \"per-path\"",
                ));
            }
        }
        if fl.scheduler == Some(SchedName::Energy) && paths.len() != 2 {
            return Err(err(
                f("paths"),
                format!("the energy scheduler bundles exactly two paths (11ad first, then 11ac) (got {})", paths.len()),
            ));
        }
        if let Some(m) = &fl.max_rates_mbps {
            if fl.scheduler != Some(SchedName::Energy) {
                return Err(err(f("max_rates_mbps"), "only scheduler = \"energy\" takes max_rates_mbps"));
            }
            if m.len() != paths.len() {
                return Err(err(
                    f("max_rates_mbps"),
                    format!("one rate per path in `paths` ({}), got {}", paths.len(), m.len()),
                ));
            }
            for (j, r) in m.iter().enumerate() {
                if !(r.is_finite() && *r > 0.0 && *r <= 1e6) {
                    return Err(err(
                        format!("flow.{i}.max_rates_mbps.{j}"),
                        format!("must be > 0 and <= 1e6 Mbit/s (got {r})"),
                    ));
                }
            }
        }
        if fl.amuse.is_some() && fl.scheduler != Some(SchedName::Amuse) {
            return Err(err(f("amuse"), "only scheduler = \"amuse\" takes amuse switches"));
        }
        for (j, pr) in fl.prio.iter().enumerate() {
            if !(pr.t_s.is_finite() && pr.t_s >= 0.0) {
                return Err(err(format!("flow.{i}.prio.{j}.t_s"), format!("must be >= 0 (got {})", pr.t_s)));
            }
            if !paths.contains(&pr.path) {
                return Err(err(
                    format!("flow.{i}.prio.{j}.path"),
                    format!("{:?} is not one of this flow's paths ({})", pr.path, paths.join(", ")),
                ));
            }
        }
        if let Some(p) = &fl.path {
            if !paths.contains(p) {
                return Err(err(f("path"), format!("for MPTCP, `path` is the first of `paths` ({})", paths[0])));
            }
        }
        Ok(())
    }

    /// The path MTU a flow on path `name` sees: the smaller of the radio and backbone MTUs.
    pub fn path_mtu(&self, name: &str) -> u32 {
        let p = self.path.iter().find(|p| p.name.as_deref() == Some(name)).map(|p| p.mtu_bytes).unwrap_or(1500);
        if self.backbone.enabled {
            p.min(self.backbone.mtu_bytes)
        } else {
            p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"path":[{"rate_mbps":2310,"mtu_bytes":7912}],"flow":[{"cc":"reno"}]}"#;

    fn fails(json: &str) -> String {
        Scenario::from_json(json).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_filled() {
        let s = Scenario::from_json(OK).unwrap();
        assert_eq!(s.path[0].name.as_deref(), Some("path0"));
        assert_eq!(s.path[0].queue_bytes, Some(7_912_000));
        assert_eq!(s.flow[0].app, Some(AppKind::Bulk));
        assert_eq!(s.flow[0].stop_s, Some(10.0));
        assert_eq!(s.flow[0].tcp.initial_cwnd, 10);
        // Round trip: the normalized form parses to the same normalized form.
        let again = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(again.to_json(), s.to_json());
    }

    /// The phone's end of a flow takes Android's buffer ceilings, the server's end Linux's; a
    /// laptop client and explicit values keep theirs.
    #[test]
    fn socket_buffer_ceilings_follow_the_client_host() {
        let sc = |dev: &str, dir: &str, tcp: &str| {
            let j = format!(
                r#"{{"path":[{{"name":"ad","technology":"11ad","device":"{dev}"}}],
                    "flow":[{{"kind":"tcp","path":"ad","direction":"{dir}"{tcp}}}]}}"#
            );
            let s = Scenario::from_json(&j).unwrap();
            let t = &s.flow[0].tcp;
            (t.rmem_max(), t.wmem_max())
        };
        let phone = crate::energy::ROG_PHONE_2;
        assert_eq!(sc("rog-phone-2", "download", ""), (phone.tcp_rmem_max, 4_194_304));
        assert_eq!(sc("rog-phone-2", "upload", ""), (6_291_456, phone.tcp_wmem_max));
        assert_eq!(sc("laptop-11ad", "download", ""), (6_291_456, 4_194_304));
        let set = r#","tcp":{"rmem_max_bytes":33554432}"#;
        assert_eq!(sc("rog-phone-2", "download", set), (33_554_432, 4_194_304));
        // The filled values are spelled out in the normalized scenario.
        let s =
            Scenario::from_json(r#"{"path":[{"technology":"11ac","device":"rog-phone-2"}],"flow":[{"kind":"tcp"}]}"#)
                .unwrap();
        assert!(s.to_json().contains(r#""rmem_max_bytes":4194304"#), "{}", s.to_json());
    }

    /// Linux's loss-recovery sysctls as TCP options: on by default, off when asked, and a
    /// wrong type named with its field.
    #[test]
    fn loss_probe_and_frto_switches() {
        let tcp = |t: &str| {
            let j = format!(r#"{{"path":[{{"rate_mbps":100}}],"flow":[{{"kind":"tcp"{t}}}]}}"#);
            let s = Scenario::from_json(&j).unwrap();
            (s.flow[0].tcp.tail_loss_probes, s.flow[0].tcp.frto)
        };
        assert_eq!(tcp(""), (true, true));
        assert_eq!(tcp(r#","tcp":{"tail_loss_probes":false}"#), (false, true));
        assert_eq!(tcp(r#","tcp":{"frto":false}"#), (true, false));
        let m = fails(r#"{"path":[{"rate_mbps":100}],"flow":[{"tcp":{"frto":"yes"}}]}"#);
        assert!(m.contains("frto") && m.contains("expected a boolean"), "{m}");
    }

    #[test]
    fn unknown_field_names_the_field() {
        let m = fails(r#"{"path":[{"rate_mbps":1}],"flow":[{"ccc":"reno"}]}"#);
        assert!(m.starts_with("flow.0"), "{m}");
        assert!(m.contains("unknown field `ccc`"), "{m}");
    }

    #[test]
    fn wrong_type_and_variant() {
        let m = fails(r#"{"path":[{"rate_mbps":"fast"}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.rate_mbps: invalid type"), "{m}");
        let m = fails(r#"{"path":[{"rate_mbps":1}],"flow":[{"cc":"vegass"}]}"#);
        assert!(m.starts_with("flow.0.cc: unknown variant `vegass`"), "{m}");
        assert!(m.contains("`cubic`"), "{m}");
    }

    #[test]
    fn ranges_are_checked() {
        assert_eq!(fails(r#"{"path":[{"rate_mbps":-5}],"flow":[{}]}"#), "path.0.rate_mbps: must be > 0 (got -5)");
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"path":"wifi"}]}"#);
        assert_eq!(m, "flow.0.path: no path named \"wifi\" (paths: path0)");
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"kind":"udp"}]}"#);
        assert!(m.starts_with("flow.0.rate_mbps: required"), "{m}");
        let m =
            fails(r#"{"path":[{"rate_mbps":5, "schedule":[{"t_s":2,"up":false},{"t_s":1,"up":true}]}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.schedule.1.t_s"), "{m}");
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"tcp":{"rcvbuf_bytes":"big"}}]}"#);
        assert!(m.starts_with("flow.0.tcp.rcvbuf_bytes: invalid value"), "{m}");
        assert!(m.contains("\"auto\" or a positive byte count"), "{m}");
    }

    #[test]
    fn table_expected_is_said_in_toml_terms() {
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"tcp":1}]}"#);
        assert_eq!(m, "flow.0.tcp: invalid type: integer `1`, expected a table");
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"kind":"mptcp","mode":3}]}"#);
        assert_eq!(
            m,
            "flow.0.mode: expected a name in quotes: one of the values docs/scenario.md lists for this field"
        );
    }

    #[test]
    fn missing_required_sections() {
        let m = fails(r#"{"flow":[{}]}"#);
        assert!(m.contains("missing field `path`"), "{m}");
    }

    #[test]
    fn host_and_energy_knobs_are_validated() {
        let phone = |extra: &str| {
            format!(
                r#"{{"path":[{{"name":"ad","technology":"11ad","device":"rog-phone-2"{extra}}},{{"name":"ac","technology":"11ac","device":"rog-phone-2"}}],"flow":[{{"kind":"mptcp","paths":["ad","ac"],"scheduler":"energy"}}]}}"#
            )
        };
        let sc = Scenario::from_json(&phone(r#","gro":false,"softirq_cpu":"big""#)).expect("valid");
        assert_eq!(sc.path[0].device.as_deref(), Some("rog-phone-2-11ad"));
        assert_eq!(sc.path[1].device.as_deref(), Some("rog-phone-2-11ac"));
        let m = fails(&phone(r#","softirq_cpu":"medium""#));
        assert!(m.starts_with("path.0.softirq_cpu"), "{m}");
        let m = fails(r#"{"path":[{"rate_mbps":5,"gro":true}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.gro: only a client with a host model"), "{m}");
        let m = fails(r#"{"path":[{"technology":"11ad","device":"laptop-11ad","gro":true}],"flow":[{}]}"#);
        assert!(m.starts_with("path.0.gro"), "{m}");
        let m = fails(&phone("").replace(r#""scheduler":"energy""#, r#""scheduler":"musher","max_rates_mbps":[1,2]"#));
        assert!(m.starts_with("flow.0.max_rates_mbps: only scheduler"), "{m}");
        let m = fails(&phone("").replace(r#""scheduler":"energy""#, r#""scheduler":"energy","max_rates_mbps":[1600]"#));
        assert!(m.starts_with("flow.0.max_rates_mbps: one rate per path"), "{m}");
        let m =
            fails(&phone("").replace(r#""scheduler":"energy""#, r#""scheduler":"energy","max_rates_mbps":[1600,-1]"#));
        assert!(m.starts_with("flow.0.max_rates_mbps.1"), "{m}");
        let m = fails(&phone("").replace(r#""paths":["ad","ac"]"#, r#""paths":["ad"]"#));
        assert!(m.starts_with("flow.0.paths: the energy scheduler bundles exactly two paths"), "{m}");
    }

    /// An address mesh needs a multihomed server, at most 8 subflows, a scheduler that does not
    /// split by path, and an MPTCP flow; each mistake gets its own message.
    #[test]
    fn address_mesh_is_validated() {
        let three = |extra: &str| {
            format!(
                r#"{{"backbone":{{"enabled":false}},"path":[{{"name":"a","rate_mbps":10}},{{"name":"b","rate_mbps":10}},{{"name":"c","rate_mbps":10}}],"flow":[{{"kind":"mptcp","subflows":"address-mesh"{extra}}}]}}"#
            )
        };
        let m = fails(&three(""));
        assert!(
            m.starts_with("flow.0.subflows: \"address-mesh\" opens one subflow per pair of addresses (9 for 3 paths)"),
            "{m}"
        );
        let two = three(r#","paths":["a","b"]"#);
        assert!(Scenario::from_json(&two).is_ok());
        let m = fails(&three(r#","paths":["a","b"],"scheduler":"fixedratio","ratio":70"#));
        assert!(m.starts_with("flow.0.subflows: the fixedratio, musher, amuse and energy schedulers"), "{m}");
        let m = fails(
            &two.replace(r#""kind":"mptcp","#, r#""kind":"tcp","path":"a","#).replace(r#","paths":["a","b"]"#, ""),
        );
        assert!(m.starts_with("flow.0.subflows: only MPTCP flows"), "{m}");
        let m = fails(&two.replace(r#""enabled":false"#, r#""enabled":true"#));
        assert!(m.contains("backbone.enabled = false"), "{m}");
    }
}
