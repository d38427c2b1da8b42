//! The scenario model's sections wired to the components that own them: the scenario
//! (scenario.rs) is plain data that imports none of what it configures, and asks these, through
//! `scenario::Sections`, for the defaults and checks that belong to a component.

use crate::scenario::{PathCfg, Scenario, ScenarioError, Sections, Technology};
use crate::{energy, link, tcp};

/// The simulator's components as `scenario::Sections`: the radio's from link/device.rs, the
/// client host's from energy.rs, the RTO's from tcp/rtt.rs.
pub struct Components;

impl Sections for Components {
    fn default_device(&self, technology: Technology) -> &'static str {
        link::device::default_for(technology).name
    }
    fn fill_interferers(&self, p: &mut PathCfg) {
        link::device::fill_interferer_defaults(p);
    }
    fn host_buffer_ceilings(&self, device: &str) -> Option<(u64, u64)> {
        energy::host_of(device).map(|h| (h.tcp_rmem_max, h.tcp_wmem_max))
    }
    fn queue_frames(&self, device: &str) -> Option<u64> {
        link::device::find(device).map(|d| d.tx_queue_len as u64).filter(|n| *n > 0)
    }
    fn validate_radio(&self, p: &PathCfg, i: usize) -> Result<(), ScenarioError> {
        link::device::validate_radio(p, i)
    }
    fn validate_host(&self, p: &PathCfg, i: usize) -> Result<(), ScenarioError> {
        let merges = p.technology != Technology::Wired && link::device::device_of(p).client_gro_msdus > 0;
        let mergers: Vec<&str> =
            link::device::DEVICES.iter().filter(|d| d.client_gro_msdus > 0).map(|d| d.name).collect();
        energy::validate_host(p, i, merges, &mergers)
    }
    fn validate_min_rto(&self, field: &str, min_rto_ms: f64) -> Result<(), ScenarioError> {
        tcp::rtt::validate_min_rto(field, min_rto_ms)
    }
}

impl Scenario {
    /// Parses, fills defaults and validates a scenario given as JSON (each component's section
    /// by that component).
    pub fn from_json(json: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_json_with(json, &Components)
    }
}
