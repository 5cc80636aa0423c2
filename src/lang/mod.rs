//! The `.model` front end: text in, a resolved [`crate::ir::Model`] or diagnostics out.
