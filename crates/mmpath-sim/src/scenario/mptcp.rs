//! A flow's MPTCP fields: path usage (fullmesh / backup), subflow layout, kernel, packet
//! scheduler, coupled congestion control, AMuSe's switches and MP_PRIO changes.

use super::d_true;
use serde::{Deserialize, Serialize};

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

/// Which Linux MPTCP implementation's rules to follow (docs/facts.md, MPTCP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kernel {
    /// The out-of-tree multipath-tcp.org v0.9x kernel the papers used: pf flag, minRTT.
    #[serde(rename = "linux-v0.9x")]
    V09x,
    /// Upstream Linux (5.6+): stale subflows, the linger-time scheduler.
    #[serde(rename = "linux-upstream")]
    Upstream,
}

// The packet scheduler and the coupled congestion control are named by these enums, one per
// concept: serde reads them here and the core (mptcp/sched, mptcp/coupled) builds from them.

/// Which scheduler a flow names (the scenario's `scheduler`; serde reads these spellings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedName {
    /// The kernel's default: `upstream` for linux-upstream, `minrtt` for linux-v0.9x.
    Default,
    /// Upstream Linux default (linger time).
    Upstream,
    /// v0.9x default: lowest RTT, with penalization and opportunistic retransmission.
    Minrtt,
    Roundrobin,
    Redundant,
    Blest,
    Ecf,
    /// Segments per 100 given to the first subflow (seed 002).
    Fixedratio,
    Musher,
    Amuse,
    /// Energy-aware (seed 002 Fig. 9): MuSher's ratio, then the cheapest configuration.
    Energy,
}

/// Which coupled congestion control a flow names (the scenario's `coupled`; serde reads these
/// spellings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoupledName {
    /// Each subflow runs the flow's `cc` on its own (upstream Linux).
    Uncoupled,
    Lia,
    Olia,
    Balia,
}

impl CoupledName {
    /// The spelling serde reads, for outputs.
    pub fn name(self) -> &'static str {
        match self {
            CoupledName::Uncoupled => "uncoupled",
            CoupledName::Lia => "lia",
            CoupledName::Olia => "olia",
            CoupledName::Balia => "balia",
        }
    }
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
