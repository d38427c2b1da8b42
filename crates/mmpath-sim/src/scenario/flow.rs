//! `[[flow]]`: what runs over the paths: TCP, UDP or MPTCP, its application (bulk, rate, cbr),
//! direction, timing, congestion control, TCP options (tcp_options.rs) and the MPTCP fields
//! (mptcp.rs).

use super::mptcp::{AmuseCfg, CoupledName, Kernel, MptcpMode, PmName, PrioCfg, SchedName, SubflowLayout};
use super::tcp_options::TcpOpts;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    Tcp,
    Udp,
    /// Multipath TCP over several paths (one subflow per path).
    Mptcp,
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
    /// MPTCP: the path-manager policy (default "kernel", the in-kernel path manager).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_manager: Option<PmName>,
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
