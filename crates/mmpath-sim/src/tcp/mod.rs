//! TCP, modelled on Linux: sender, receiver, RTT estimation, SACK scoreboard and congestion
//! control (one file per algorithm under cc/).

pub mod cc;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod sndbuf;
pub mod timer_wheel;
pub mod tlp;
