//! The scenario file model: the one contract between the Python front end and the simulator.
//!
//! Python parses the TOML file, applies `--set` overrides and hands the result over as JSON.
//! Everything is validated here, once: serde rejects unknown fields and wrong types, and
//! `Scenario::validate` checks ranges and cross-references. Errors name the field with the
//! same dotted path users type after `--set` (`flow.0.cc`). Every field and default is
//! documented in docs/scenario.md; keep the two in step.
//!
//! This file holds the error type, the top level of a scenario (name, duration, seed), the
//! backbone and the timeline. The rest are child modules, re-exported here so that every type
//! keeps its `crate::scenario::` path:
//! - scenario/path.rs: `[[path]]`: wired and radio links, signal, trace, schedule;
//! - scenario/event.rs: a radio path's events and interferers;
//! - scenario/flow.rs: `[[flow]]`: kind, application, direction, timing, congestion control;
//! - scenario/tcp_options.rs: a flow's `tcp` table and the socket buffer sizes;
//! - scenario/mptcp.rs: a flow's MPTCP fields (mode, subflows, kernel, scheduler, coupling);
//! - scenario/parse.rs: JSON in and out, and serde's errors in mmpath's words;
//! - scenario/defaults.rs: the defaults that depend on other fields;
//! - scenario/validate.rs: ranges and cross-references, one clear error each;
//! - scenario/sections.rs: what the model asks of the components it configures (their own
//!   defaults and checks), so that it imports none of them.

mod defaults;
mod event;
mod flow;
mod mptcp;
mod parse;
mod path;
mod sections;
mod tcp_options;
#[cfg(test)]
mod testkit;
mod validate;

pub use event::{Beams, ChannelRelation, EventCfg, EventKind, InterfererCfg};
pub use flow::{AppKind, CcKind, Direction, FlowCfg, FlowKind};
pub use mptcp::{AmuseCfg, CoupledName, Kernel, MptcpMode, PmName, PrioCfg, SchedName, SubflowLayout};
pub use path::{PathCfg, RateAdaptation, ScheduleStep, Signal, SoftirqCpu, Technology, TraceCfg, TraceFormat};
pub use sections::Sections;
pub use tcp_options::{BufSize, TcpOpts, DEFAULT_KERNEL_HZ, KERNEL_HZ_CHOICES};

/// What a wired path's outages do with its packets: a schedule step's `drop`, a trace's `outage`
/// and the wire's (link/wire.rs) one enum.
pub use path::Outage;

use serde::{Deserialize, Serialize};
use std::fmt;

/// A scenario error: the dotted path of the offending field and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

/// Writes `s` with control characters escaped (`\r`, `\u{1b}`): a value the user typed and an
/// error message quotes (an unknown name, a file path) cannot break the one-line message.
fn write_printable(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    for c in s.chars() {
        if c.is_control() {
            write!(f, "{}", c.escape_default())?;
        } else {
            fmt::Write::write_char(f, c)?;
        }
    }
    Ok(())
}

/// Rust prints a huge or tiny f64 with every digit (`1e300` as 301 characters): a number of
/// more than 24 characters in a message is written in exponent form instead.
fn shorten_numbers(s: &str) -> std::borrow::Cow<'_, str> {
    let is_num = |c: char| c.is_ascii_digit() || c == '.';
    if !s.split(|c: char| !is_num(c)).any(|run| run.len() > 24) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..i]);
        let run_len = rest[i..].find(|c: char| !is_num(c)).unwrap_or(rest.len() - i);
        let run = &rest[i..i + run_len];
        match run.parse::<f64>() {
            Ok(v) if run.len() > 24 => out.push_str(&format!("{v:e}")),
            _ => out.push_str(run),
        }
        rest = &rest[i + run_len..];
    }
    out.push_str(rest);
    out.into()
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.field.is_empty() {
            write_printable(f, &self.field)?;
            f.write_str(": ")?;
        }
        write_printable(f, &shorten_numbers(&self.message))
    }
}

impl std::error::Error for ScenarioError {}

pub(crate) fn err(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError { field: field.into(), message: message.into() }
}

/// The upper bound of every user-given time or span in seconds (`crate::time::MAX_USER_SECS`,
/// one day). NaN and negative values are the caller's lower-bound check.
pub(crate) fn at_most_secs(field: &str, v: f64) -> Result<(), ScenarioError> {
    use crate::time::MAX_USER_SECS;
    if v > MAX_USER_SECS as f64 {
        return Err(err(field, format!("must be at most {MAX_USER_SECS} s, one day (got {v})")));
    }
    Ok(())
}

/// The same bound for a time or span given in milliseconds.
pub(crate) fn at_most_ms(field: &str, v: f64) -> Result<(), ScenarioError> {
    let max_ms = crate::time::MAX_USER_SECS * 1_000;
    if v > max_ms as f64 {
        return Err(err(field, format!("must be at most {max_ms} ms, one day (got {v})")));
    }
    Ok(())
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
fn d_timeline_ms() -> f64 {
    10.0
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

impl Scenario {
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
