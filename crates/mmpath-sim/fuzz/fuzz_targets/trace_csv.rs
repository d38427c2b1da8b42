//! The csv trace parser: any text given to `link::trace::parse` as a csv trace must give a
//! trace or one `TraceError`, never a panic, a hang or a huge allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mmpath_sim::link::trace::{parse, TraceFormat, TraceOpts};

fuzz_target!(|data: &[u8]| {
    // `load` refuses text that is not UTF-8 before parsing (its own unit tests); parse the rest.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = parse(text, "fuzz", TraceFormat::Csv, &TraceOpts::default()) {
            let _ = e.to_string();
        }
    }
});
