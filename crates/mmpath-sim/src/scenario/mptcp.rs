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

/// Which path-manager policy a flow names (the scenario's `path_manager`; serde reads these
/// spellings): the in-kernel path manager's behaviour, or one of the userspace policies of
/// mptcp/pm/ that open, close and re-flag subflows during the run (docs/path-manager.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PmName {
    /// The in-kernel path manager: subflows opened at the start, nothing decided later.
    Kernel,
    /// A returning link gets a fresh subflow at once; the old one is retired.
    FastFailback,
    /// A failing or weak link is made backup (MP_PRIO) before it dies; back with hysteresis.
    LinkAwareBackup,
    /// Subflows closed on an error are re-created with backoff; stale ones are probed.
    Recreate,
}

impl PmName {
    /// Every policy, in the order error messages list them.
    pub const ALL: [PmName; 4] = [PmName::Kernel, PmName::FastFailback, PmName::LinkAwareBackup, PmName::Recreate];

    /// The spelling serde reads, for outputs and the Python binding.
    pub fn name(self) -> &'static str {
        match self {
            PmName::Kernel => "kernel",
            PmName::FastFailback => "fast-failback",
            PmName::LinkAwareBackup => "link-aware-backup",
            PmName::Recreate => "recreate",
        }
    }

    /// The policy spelled `s`, if there is one.
    pub fn from_name(s: &str) -> Option<PmName> {
        PmName::ALL.into_iter().find(|p| p.name() == s)
    }
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
