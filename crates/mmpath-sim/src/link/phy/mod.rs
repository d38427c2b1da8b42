//! PHY rate tables: 802.11ad DMG (dmg.rs), 802.11ac VHT (vht.rs), 802.11n HT (ht.rs).

pub mod dmg;
pub mod ht;
pub mod vht;
