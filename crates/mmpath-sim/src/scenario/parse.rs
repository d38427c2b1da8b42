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
    // Integer fields name their range, not their Rust type ("expected u8").
    msg.replace("floating point", "number")
        .replace("expected f64", "expected a number")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected u32", "expected an integer from 0 to 4294967295")
        .replace("expected u16", "expected an integer from 0 to 65535")
        .replace("expected u8", "expected an integer from 0 to 255")
}
/// True if the JSON syntax error at `line`:`column` (1-based, as serde_json reports them) is
/// a `NaN`, `Infinity` or `-Infinity` token.
fn non_finite_at(json: &str, line: usize, column: usize) -> bool {
    let Some(text) = json.split('\n').nth(line.saturating_sub(1)) else { return false };
    let at = column.saturating_sub(1).min(text.len());
    // The column points at the token's first byte or just past it; look at both.
    let from = text[..at].rfind(|c: char| !c.is_ascii_alphanumeric() && c != '-').map_or(0, |i| i + 1);
    let token: String = text[from..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    matches!(token.as_str(), "NaN" | "Infinity" | "-Infinity")
}

impl Scenario {
    /// Parses, fills defaults and validates a scenario given as JSON.
    pub fn from_json(json: &str) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(json);
        let mut sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = dotted(e.path());
            let inner = e.into_inner();
            if inner.is_syntax() && non_finite_at(json, inner.line(), inner.column()) {
                // Python's json.dumps writes a TOML `nan` / `inf` as NaN / Infinity, which
                // serde_json only calls "expected value".
                return err(field, "must be a finite number (got NaN or an infinity)");
            }
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
    fn nan_and_infinity_are_said_to_be_numbers() {
        // Found by tests/fuzz_scenarios.rs: `--set duration_s=nan` reached the core as NaN and
        // was reported as "expected a name in quotes".
        for tok in ["NaN", "Infinity", "-Infinity"] {
            let m = fails(&format!(r#"{{"duration_s": {tok}, "path":[{{"rate_mbps":1}}],"flow":[{{}}]}}"#));
            assert_eq!(m, "duration_s: must be a finite number (got NaN or an infinity)", "{tok}");
            let m = fails(&format!(r#"{{"path":[{{"rate_mbps":{tok}}}],"flow":[{{}}]}}"#));
            assert_eq!(m, "path.0.rate_mbps: must be a finite number (got NaN or an infinity)", "{tok}");
        }
        // A name given as a number keeps its own message.
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"kind":"mptcp","mode":3}]}"#);
        assert!(m.contains("expected a name in quotes"), "{m}");
    }

    #[test]
    fn control_characters_in_values_are_escaped() {
        // Found by tests/fuzz_scenarios.rs: an unknown name was echoed raw, escape sequence
        // and line ends included.
        let e = crate::Scenario::from_json(r#"{"path":[{"technology":"\u001b[2J\r\n"}],"flow":[{}]}"#).unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("path.0.technology: unknown variant `\\u{1b}[2J\\r\\n`"), "{m}");
        assert!(!m.chars().any(char::is_control), "{m}");
    }

    #[test]
    fn integer_ranges_are_said_in_numbers() {
        // Found by tests/fuzz_scenarios.rs: serde's "expected u8" named a Rust type.
        let m = fails(r#"{"path":[{"technology":"11ac","mcs":4413893268521814655}],"flow":[{}]}"#);
        assert_eq!(m, "path.0.mcs: invalid value: integer `4413893268521814655`, expected an integer from 0 to 255");
        let m = fails(r#"{"path":[{"technology":"11ac","streams":-1}],"flow":[{}]}"#);
        assert!(m.ends_with("expected an integer from 0 to 255"), "{m}");
        let m = fails(r#"{"path":[{"rate_mbps":5,"mtu_bytes":4294967296}],"flow":[{}]}"#);
        assert!(m.ends_with("expected an integer from 0 to 4294967295"), "{m}");
    }

    /// Found by tests/fuzz_scenarios.rs: without serde_json's `float_roundtrip` feature a
    /// normalized scenario read back could move by one ulp. Awkward floats (0.1 + 0.2, tiny,
    /// more digits than an f64 holds) are now read exactly as Rust's own correctly rounded
    /// parser reads them, and survive to_json -> from_json bit for bit.
    #[test]
    fn normalized_floats_read_back_bit_identical() {
        use crate::scenario::Scenario;
        for text in ["0.30000000000000004", "1e-7", "123.456789012345678", "0.6666666666666666", "9.999999999999999e-5"]
        {
            let v: f64 = text.parse().unwrap();
            let json = format!(
                r#"{{"duration_s":{text},"backbone":{{"delay_ms":{text}}},"timeline":{{"sample_ms":{s:?}}},"path":[{{"rate_mbps":{text},"delay_ms":{text},"loss_pct":{h:?},"schedule":[{{"t_s":{text},"rate_mbps":{text}}}]}}],"flow":[{{"kind":"udp","rate_mbps":{text},"start_s":{h:?},"tcp":{{"min_rto_ms":{text}}}}}]}}"#,
                s = v + 0.1,
                h = v / 2.0,
            );
            let a = Scenario::from_json(&json).unwrap_or_else(|e| panic!("{text}: {e}"));
            let b = Scenario::from_json(&a.to_json()).unwrap();
            let bits = |s: &Scenario| {
                let (p, f) = (&s.path[0], &s.flow[0]);
                [
                    s.duration_s,
                    s.backbone.delay_ms,
                    p.rate_mbps.unwrap(),
                    p.delay_ms,
                    p.schedule[0].t_s,
                    p.schedule[0].rate_mbps.unwrap(),
                    f.rate_mbps.unwrap(),
                    f.tcp.min_rto_ms,
                ]
                .map(f64::to_bits)
            };
            assert_eq!(bits(&a), [v.to_bits(); 8], "{text} as given");
            assert_eq!(bits(&b), bits(&a), "{text} read back");
            assert_eq!(b.timeline.sample_ms.to_bits(), (v + 0.1).to_bits(), "{text}");
            assert_eq!(b.path[0].loss_pct.to_bits(), (v / 2.0).to_bits(), "{text}");
            assert_eq!(a.to_json(), b.to_json(), "{text}");
        }
    }

    #[test]
    fn missing_required_sections() {
        let m = fails(r#"{"flow":[{}]}"#);
        assert!(m.contains("missing field `path`"), "{m}");
    }
}
