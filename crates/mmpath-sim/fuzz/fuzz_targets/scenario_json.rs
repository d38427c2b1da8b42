//! The scenario parser: any bytes given to `Scenario::from_json` (parse, defaults, validation of
//! every section) must give a scenario or a `ScenarioError`, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mmpath_sim::Scenario;

fuzz_target!(|data: &[u8]| {
    // The core takes JSON text from Python (a str); bytes that are not UTF-8 never reach it.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = Scenario::from_json(text) {
            // The error must render (Display walks the field path).
            let _ = e.to_string();
        }
    }
});
