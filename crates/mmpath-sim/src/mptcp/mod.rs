//! Multipath TCP (RFC 8684) over the core's TCP subflows.
//!
//! - `connection.rs` (and `connection/`): the connection as a clock-free object: the data
//!   level, the subflows' MPTCP state, the scheduler's loop, the timers, the path manager's
//!   MP_JOIN; whoever runs it lends it the subflows' TCP endpoints.
//! - `conn.rs`: the connection's data-level bookkeeping: DSN mappings, the reinjection queue,
//!   the reassembly buffer and its window.
//! - `sched/`: packet schedulers behind one trait (`sched::Scheduler`), one file each.
//! - `coupled.rs`: the coupled congestion controls (LIA, OLIA, BALIA).
//! - `pm/`: path-manager policies (userspace PM), one file each, clock-free.

pub mod conn;
pub mod connection;
pub mod coupled;
pub mod pm;
pub mod sched;
