//! JSON in and out: parsing with serde's errors turned into mmpath's (the `--set` dotted path
//! of the field, TOML words instead of Rust types), then defaults (defaults.rs) and validation
//! (validate.rs); and the normalized scenario back as JSON.

use super::{err, Scenario, ScenarioError, Sections};

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
    // A named choice is an enum to serde, whose "unknown variant" would read as one of a
    // scenario's [[variant]] entries: the user gave a value the field does not allow.
    let msg = msg.replacen("unknown variant ", "unknown value ", 1);
    // Integer fields name their range, not their Rust type ("expected u8").
    msg.replace("floating point", "number")
        .replace("expected f64", "expected a number")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected u32", "expected an integer from 0 to 4294967295")
        .replace("expected u16", "expected an integer from 0 to 65535")
        .replace("expected u8", "expected an integer from 0 to 255")
}
/// The byte range of the `NaN`, `Infinity` or `-Infinity` token at the JSON syntax error at
/// `line`:`column` (1-based, as serde_json reports them), with its TOML spelling; None when the
/// error is something else.
fn non_finite_at(json: &str, line: usize, column: usize) -> Option<(std::ops::Range<usize>, &'static str)> {
    let line_start: usize = json.split('\n').take(line.saturating_sub(1)).map(|l| l.len() + 1).sum();
    let text = json.get(line_start..)?.split('\n').next()?;
    let mut at = column.saturating_sub(1).min(text.len());
    // Never cut a character (defensive): a column inside one steps back to its first byte.
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    // The column points at the token's first byte or just past it; look at both. The token
    // starts after the last character that cannot be in it, which may be several bytes long
    // (found by fuzzing: `+ 1` after a two-byte character sliced it in two, a panic).
    let from = text[..at]
        .char_indices()
        .rev()
        .find(|&(_, c)| !c.is_ascii_alphanumeric() && c != '-')
        .map_or(0, |(i, c)| i + c.len_utf8());
    let len = text[from..].find(|c: char| !c.is_ascii_alphanumeric() && c != '-').unwrap_or(text.len() - from);
    let toml = match &text[from..from + len] {
        "NaN" => "nan",
        "Infinity" => "inf",
        "-Infinity" => "-inf",
        _ => return None,
    };
    Some((line_start + from..line_start + from + len, toml))
}

/// What `field`, given NaN or an infinity at `token`, allows, in words: "must be true or false",
/// "must be a finite number", "must be one of `reno`, ...". A non-finite number never gets past
/// serde_json, so the field's type is learnt by reading the scenario again with a string in the
/// token's place: each kind of field refuses a string with its own "expected ..." (a
/// bool "a boolean", a number "f64", a choice its names), and a string field takes it.
fn allowed_instead_of_non_finite(json: &str, token: std::ops::Range<usize>, field: &str) -> String {
    let probe = format!("{}\"NaN\"{}", &json[..token.start], &json[token.end..]);
    let de = &mut serde_json::Deserializer::from_str(&probe);
    let msg = match serde_path_to_error::deserialize::<_, Scenario>(de) {
        Err(e) if dotted(e.path()) == field && !e.inner().is_syntax() => tidy(&e.into_inner().to_string()),
        // Taken (or the next error is elsewhere): a string field.
        _ => return "must be a string".into(),
    };
    let msg = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
    if let Some(i) = msg.find("expected one of ") {
        return format!("must be {}", &msg[i + "expected ".len()..]);
    }
    match msg.find("expected ").map(|i| &msg[i + "expected ".len()..]) {
        Some("a boolean") => "must be true or false".into(),
        Some("a number") => "must be a finite number".into(),
        Some("a sequence") => "must be a list".into(),
        Some(what) => format!("must be {what}"),
        None => "must be a finite number".into(),
    }
}

impl Scenario {
    /// Parses, fills defaults and validates a scenario given as JSON, the components' own
    /// sections by `sections` (crate::sections `Scenario::from_json` passes the simulator's).
    pub fn from_json_with(json: &str, sections: &dyn Sections) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(json);
        let mut sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = dotted(e.path());
            let inner = e.into_inner();
            if inner.is_syntax() {
                if let Some((token, toml)) = non_finite_at(json, inner.line(), inner.column()) {
                    // Python's json.dumps writes a TOML `nan` / `inf` as NaN / Infinity, which
                    // serde_json only calls "expected value": say what the field allows.
                    let allowed = allowed_instead_of_non_finite(json, token, &field);
                    return err(field, format!("{allowed} (got {toml})"));
                }
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
        sc.fill_defaults(sections);
        sc.validate(sections)?;
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
        assert!(m.starts_with("flow.0.cc: unknown value `vegass`"), "{m}");
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
        for (tok, toml) in [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf")] {
            let m = fails(&format!(r#"{{"duration_s": {tok}, "path":[{{"rate_mbps":1}}],"flow":[{{}}]}}"#));
            assert_eq!(m, format!("duration_s: must be a finite number (got {toml})"), "{tok}");
            let m = fails(&format!(r#"{{"path":[{{"rate_mbps":{tok}}}],"flow":[{{}}]}}"#));
            assert_eq!(m, format!("path.0.rate_mbps: must be a finite number (got {toml})"), "{tok}");
        }
        // A name given as a number keeps its own message.
        let m = fails(r#"{"path":[{"rate_mbps":5}],"flow":[{"kind":"mptcp","mode":3}]}"#);
        assert!(m.contains("expected a name in quotes"), "{m}");
    }

    #[test]
    fn syntax_error_inside_a_multibyte_character_is_an_error() {
        // Found by the cargo-fuzz target scenario_json (bench/README.md, "Fuzzing"): at a syntax
        // error just after a two-byte character (here a NUL in a key), looking back for a NaN
        // token took the byte after that character's first as the token's start: a panic.
        let crash = "{\"n0ame MCS 8 + 1\u{3de}h\u{0}80 MHz 2x2s at t = 4 s\", \"durati_s\": 12.00.9x\"}]}";
        let m = fails(crash);
        assert!(m.contains("control character"), "{m}");
        for json in ["{\"\u{3de}\u{0}\"}", "{\"a\u{3de}\u{1}\": 1}", "{\"\u{1F600}\u{7}\": NaN}"] {
            assert!(!fails(json).is_empty(), "{json:?}");
        }
    }

    #[test]
    fn nan_in_a_field_that_is_not_a_number_says_what_it_takes() {
        // `--set path.0.gro=nan` was "must be a finite number" for a field that takes true or
        // false: each kind of field now says what it allows.
        let sc = |path: &str, flow: &str| {
            fails(&format!(r#"{{"path":[{{"technology":"11ad"{path}}}],"flow":[{{{flow}}}]}}"#))
        };
        assert_eq!(sc(r#","gro":NaN"#, ""), "path.0.gro: must be true or false (got nan)");
        assert_eq!(sc(r#","mcs":Infinity"#, ""), "path.0.mcs: must be an integer from 0 to 255 (got inf)");
        assert_eq!(sc("", r#""cc":NaN"#), "flow.0.cc: must be one of `reno`, `cubic`, `vegas`, `bbr` (got nan)");
        assert_eq!(sc("", r#""name":-Infinity"#), "flow.0.name: must be a string (got -inf)");
        assert_eq!(sc("", r#""tcp":{"hystart":NaN}"#), "flow.0.tcp.hystart: must be true or false (got nan)");
        assert_eq!(
            sc("", r#""tcp":{"rcvbuf_bytes":NaN}"#),
            "flow.0.tcp.rcvbuf_bytes: must be \"auto\" or a positive byte count (got nan)"
        );
        assert_eq!(
            sc(r#","schedule":[{"t_s":1,"up":NaN}]"#, ""),
            "path.0.schedule.0.up: must be true or false (got nan)"
        );
        let m = fails(r#"{"seed":NaN,"path":[{"rate_mbps":1}],"flow":[{}]}"#);
        assert_eq!(m, "seed: must be a non-negative integer (got nan)");
        // A second NaN later in the scenario does not change what the first field is said to take.
        let m = fails(r#"{"path":[{"technology":"11ad","gro":NaN}],"flow":[{"name":NaN}]}"#);
        assert_eq!(m, "path.0.gro: must be true or false (got nan)");
    }

    #[test]
    fn control_characters_in_values_are_escaped() {
        // Found by tests/fuzz_scenarios.rs: an unknown name was echoed raw, escape sequence
        // and line ends included.
        let e = crate::Scenario::from_json(r#"{"path":[{"technology":"\u001b[2J\r\n"}],"flow":[{}]}"#).unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("path.0.technology: unknown value `\\u{1b}[2J\\r\\n`"), "{m}");
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
