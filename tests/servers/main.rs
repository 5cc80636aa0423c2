//! The tests against real servers: a crate of its own, built only with `--features servers`
//! (`cargo test --features servers --test servers`), so that turning the clients on rebuilds
//! this crate and the library, not every integration test.

mod load;
mod replay;
mod servers;
