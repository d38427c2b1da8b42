//! Runs a scenario given as a JSON file and prints the summary plus wall time: the Rust-only
//! entry point the benchmark uses to time the core without Python in the loop.
//! Usage: cargo run --release --example run_json -- scenario.json [seed]

use mmpath_sim::Simulation;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run_json SCENARIO.json [SEED]");
        std::process::exit(2);
    };
    let json = match std::fs::read_to_string(path) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("run_json: cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut sim = match Simulation::from_json(&json, seed) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("run_json: {e}");
            std::process::exit(2);
        }
    };
    let t0 = Instant::now();
    let out = sim.finish();
    let wall = t0.elapsed().as_secs_f64();
    let mut s = out.summary;
    s["wall_s"] = serde_json::json!(wall);
    println!("{}", serde_json::to_string_pretty(&s).expect("json"));
}
