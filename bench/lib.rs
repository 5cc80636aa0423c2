//! The benchmark crate has no library of its own: `benches/compare.rs` is all there is.
