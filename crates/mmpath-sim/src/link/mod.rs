//! The links a route's hops cross, and the seam they share.
//!
//! Every kind of link is driven the same way (seam.rs `Link`): a packet is offered to one of its
//! directions (`enqueue`), the link says which events it needs next through its `Wake` (when
//! its transmission ends, when a packet reaches the far end of a direction), and when those are
//! due the simulation calls `tx_done` and `deliver`. How a kind gets a frame across is its own
//! business, in its own files:
//! - wire.rs: a wired direction, a drop-tail queue then a pipe; a capacity trace drives the same
//!   link through its rate and state;
//! - medium.rs: a half-duplex 802.11 channel shared by AP and client, its PHY from phy/ through
//!   radio.rs and its frame errors from per.rs.
//!
//! A new kind (a 5G NR trace, an Ethernet bottleneck with AQM) implements `Link` in its own
//! file and is registered once, in kinds.rs `AnyLink`: the simulation keeps one list of them
//! and dispatches statically, no trait object on the per-packet path.

pub mod arf;
pub mod channel;
pub mod codel;
pub mod device;
pub mod kinds;
pub mod medium;
pub mod per;
pub mod phy;
pub mod radio;
pub mod reorder;
pub mod schedule;
pub mod seam;
pub mod session_rate;
pub mod spectrum;
pub mod trace;
pub mod wire;

pub use kinds::AnyLink;
pub use seam::{Freed, Gone, Link, Wake};
pub use wire::{LinkCfg, LinkStats, Wire};
