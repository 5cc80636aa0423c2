//! Unit tests of the front end, one file per topic, and the helpers they share.

mod clock;
mod core;
mod db;
mod faults;
mod for_loop;
mod liveness;
mod properties;
mod redis;
mod timing;
mod workload;

use super::{parse, parse_with, ParseOptions};
use crate::ir::{Model, OpKind};

/// The model `src` describes; panics with the rendered diagnostics if it has errors.
fn model(src: &str) -> Model {
    parse("test.model", src).unwrap_or_else(|d| panic!("{}", d.render()))
}

/// A minimal model: declarations, one group `p` with `body`, then `after` (faults, properties).
fn source(decls: &str, body: &str, after: &str) -> String {
    format!("model \"t\"\nabout \"t\"\n{decls}\nprocess p {{\n{body}\n}}\n{after}\nexpect holds\n")
}

/// The model of [`source`].
fn with(decls: &str, body: &str, after: &str) -> Model {
    model(&source(decls, body, after))
}

/// The diagnostics of a model that must not parse.
fn diagnostics(src: &str, opts: &ParseOptions) -> Vec<super::Diagnostic> {
    match parse_with("test.model", src, opts) {
        Ok(_) => panic!("expected errors"),
        Err(d) => d.items,
    }
}

/// The messages of every error, with their hints: `message / hint`.
fn errors(src: &str) -> Vec<String> {
    errors_with(src, &ParseOptions::default())
}

/// [`errors`] under the given options.
fn errors_with(src: &str, opts: &ParseOptions) -> Vec<String> {
    diagnostics(src, opts)
        .into_iter()
        .map(|i| format!("{} / {}", i.message, i.hint.unwrap_or_default()))
        .collect()
}

/// The messages of every error, without their hints.
fn messages(src: &str) -> Vec<String> {
    diagnostics(src, &ParseOptions::default())
        .into_iter()
        .map(|i| i.message)
        .collect()
}

/// The kinds of the first group's ops, in order.
fn ops(m: &Model) -> Vec<OpKind> {
    m.groups[0]
        .program
        .ops
        .iter()
        .map(|o| o.kind.clone())
        .collect()
}
