//! JSON in and out: parsing with serde's errors turned into mmpath's (the `--set` dotted path
//! of the field, TOML words instead of Rust types), then defaults (defaults.rs) and validation
//! (validate.rs); and the normalized scenario back as JSON.

use super::{err, Scenario, ScenarioError};

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
}

#[cfg(test)]
mod tests {
    use crate::scenario::testkit::fails;

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
}
