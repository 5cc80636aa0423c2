//! The one integration-test crate: every model's expectation, engine guarantees, diagnostics.

mod cli;
mod coverage;
mod docs;
mod explain;
mod fuzz;
mod golden;
mod hermitage;
mod isolation;
mod json;
mod lang;
mod matrix;
mod models;
mod pictures;
mod probe;
mod reading;
mod reductions;
mod regressions;
mod schedules;
mod simulate;
mod symmetry;
mod world;
