//! What the randomized test files share (tests/fuzz_*.rs).

use proptest::test_runner::{Config as ProptestConfig, RngSeed};

/// Fixed seed (reproducible runs); `MMPATH_FUZZ_SEED` picks another, `MMPATH_FUZZ_SCALE`
/// multiplies the number of cases (e.g. 100 for a long exploration).
pub fn config(cases: u32) -> ProptestConfig {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let scale = env("MMPATH_FUZZ_SCALE").unwrap_or(1) as u32;
    ProptestConfig {
        cases: cases.saturating_mul(scale),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(env("MMPATH_FUZZ_SEED").unwrap_or(20261122)),
        ..ProptestConfig::default()
    }
}
