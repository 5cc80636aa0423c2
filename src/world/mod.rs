//! The simulated components, each a pure value: `Clone + Eq + Hash`, no IO, no real time.

pub mod value;
