//! interlock: a deterministic concurrency simulator and explicit-state model checker for the
//! ways backend services protect shared data.

pub mod ir;
pub mod lang;
pub mod world;
