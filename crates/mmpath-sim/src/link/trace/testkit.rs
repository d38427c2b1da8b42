//! What the trace parsers' unit tests share: parsing with the default options, expected
//! errors, the fixture files (tests/data/traces) and a small deterministic generator.

use super::{load, Trace, TraceError, TraceOpts};
pub(super) use super::{parse, TraceFormat};
pub(super) use crate::time::Time;
use std::path::PathBuf;

pub(super) fn opts() -> TraceOpts {
    TraceOpts::default()
}
pub(super) fn p(text: &str, f: TraceFormat) -> Result<Trace, TraceError> {
    parse(text, "t.txt", f, &opts())
}
pub(super) fn err(text: &str, f: TraceFormat) -> TraceError {
    p(text, f).expect_err("expected a TraceError")
}
/// Each text must fail at the given line with a message containing every needle.
pub(super) fn expect_errors(f: TraceFormat, cases: &[(&str, Option<usize>, &[&str])]) {
    for (text, line, needles) in cases {
        let e = err(text, f);
        assert_eq!(e.line, *line, "{text:?}: {e}");
        for n in needles.iter() {
            assert!(e.message.contains(n), "{text:?}: {e} (wanted {n})");
        }
    }
}
pub(super) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces").join(name)
}
pub(super) fn load_fixture(name: &str, f: TraceFormat) -> Result<Trace, TraceError> {
    load(&fixture(name), f, &opts())
}

pub(super) struct Lcg(pub(super) u64);
impl Lcg {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}
