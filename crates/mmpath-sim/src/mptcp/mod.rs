//! Multipath TCP (RFC 8684) over the core's TCP subflows.
//!
//! - `sched/`: packet schedulers behind one trait (`sched::Scheduler`), one file each.
//! - `coupled.rs`: the coupled congestion controls (LIA, OLIA, BALIA).
//! - `conn.rs`: the connection: data sequence numbers, send and receive buffers, data ACKs,
//!   the reorder buffer, reinjection, pf / stale subflow states.
//! - `join.rs`: the path manager's subflow handshakes (MP_CAPABLE / MP_JOIN).

pub mod conn;
pub mod coupled;
pub mod sched;
