//! Trace replay and recording (being written).
