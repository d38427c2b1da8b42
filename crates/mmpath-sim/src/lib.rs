//! mmpath-sim: a deterministic packet-level simulator of TCP (and, in later modules, MPTCP)
//! over dual-band 802.11ad + 802.11ac/n links. Pure Rust; `mmpath-py` exposes it to Python.
//!
//! Layout follows ../../docs (ARCHITECTURE): `engine` (event queue, RNG streams), `link`
//! (queue + pipe, schedules), `tcp` (sender, receiver, congestion control), `app`
//! (bulk / rate / CBR sources), `trace` (columnar recording), `scenario` (the file format),
//! `sim` (the topology and the event loop).

pub mod app;
pub mod bounds;
pub mod energy;
pub mod engine;
pub mod link;
pub mod mptcp;
pub mod packet;
pub mod scenario;
pub mod sections;
pub mod sim;
pub mod tcp;
pub mod time;
pub mod trace;

pub use scenario::{Scenario, ScenarioError};
pub use sim::{RunOutput, Simulation};
pub use time::Time;
