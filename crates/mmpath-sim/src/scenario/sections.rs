//! What the scenario model asks of the components it configures. The model is plain data and
//! imports none of them: each component fills the defaults of its own section and checks it
//! (link/device.rs the radio's, energy.rs the client host's, tcp/rtt.rs the RTO floor's), and
//! crate::sections hands them to `Scenario::from_json` through this trait. Parsing, the
//! defaults and validation call them at the same points, so errors and their order are those
//! of one pass over the scenario.

use super::{PathCfg, ScenarioError, Technology};

/// The configured components' part in filling and validating a scenario.
pub trait Sections {
    /// The device preset a radio path of `technology` takes when it names none.
    fn default_device(&self, technology: Technology) -> &'static str;
    /// Fills what a radio path's interferers leave out and its PHY and device decide (their
    /// MCS, adjacent-channel rejection and MTU); called only when it has interferers.
    fn fill_interferers(&self, p: &mut PathCfg);
    /// The socket buffer ceilings (`tcp_rmem[2]`, `tcp_wmem[2]`, bytes) of the client host
    /// behind `device`, if it has a host model.
    fn host_buffer_ceilings(&self, device: &str) -> Option<(u64, u64)>;
    /// The qdisc limit, packets, that the driver of `device` gives its interface
    /// (`tx_queue_len`), if it sets its own: a radio path's default queue then.
    fn queue_frames(&self, device: &str) -> Option<u64>;
    /// Checks a radio path's radio fields (path `i`).
    fn validate_radio(&self, p: &PathCfg, i: usize) -> Result<(), ScenarioError>;
    /// Checks the client host fields of path `i`.
    fn validate_host(&self, p: &PathCfg, i: usize) -> Result<(), ScenarioError>;
    /// Checks a flow's RTO floor, `tcp.min_rto_ms` (named `field`).
    fn validate_min_rto(&self, field: &str, min_rto_ms: f64) -> Result<(), ScenarioError>;
}
