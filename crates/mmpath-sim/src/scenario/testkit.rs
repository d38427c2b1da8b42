//! What the scenario tests share.

use super::Scenario;

pub(super) fn fails(json: &str) -> String {
    Scenario::from_json(json).unwrap_err().to_string()
}
