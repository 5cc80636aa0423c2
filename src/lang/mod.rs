//! The `.model` front end: text in, a resolved [`crate::ir::Model`] or diagnostics out.

mod ast;
mod backoff;
mod decls;
mod delay;
mod diag;
mod expr;
mod for_loop;
mod lexer;
mod lower;
mod lower_expr;
mod lower_schedule;
mod lower_workload;
mod params;
mod parser;
mod pick;
mod program;
mod schema;
mod schedule;
mod scope;
mod sql;
mod sqltext;
mod stmt;
mod suggest;
pub mod tags;

#[cfg(test)]
mod tests;

pub use diag::{Diagnostic, Diagnostics};

/// What the caller may change about a model while it is read.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Runs the model against this flavour instead of its `db` line's (`--db`). The isolation
    /// level stays if the file names one, else it becomes the flavour's default.
    pub db: Option<crate::ir::Flavour>,
    /// `--set NAME=V`: values for the model's `param` lines, as written.
    pub set: Vec<(String, String)>,
}

/// The diagnostic for a file that is not UTF-8 text: where its first byte that is not.
#[must_use]
pub fn not_utf8(origin: &str, bytes: &[u8], e: std::str::Utf8Error) -> Diagnostics {
    let at = e.valid_up_to();
    let text = String::from_utf8_lossy(bytes);
    let d = Diagnostic::new(
        "the file is not UTF-8 text",
        crate::ir::Span::new(at, at + 1),
        "here",
    )
    .with_hint("a model is text: save it as UTF-8");
    Diagnostics::new(origin, &text, vec![d])
}

/// Checks a cost file (`simulate --cost`): `latency` and `param` lines only, well formed.
///
/// # Errors
/// Every problem found in the file.
pub fn check_costs(origin: &str, source: &str) -> Result<(), Diagnostics> {
    let mut diags = Vec::new();
    let tokens = lexer::lex(source, &mut diags);
    let decls = {
        let mut p = parser::Parser::new(source, tokens, &mut diags);
        decls::parse_file(&mut p)
    };
    for d in &decls {
        if !matches!(
            d.kind,
            ast::DeclKind::Latency { .. } | ast::DeclKind::Param { .. } | ast::DeclKind::Workers(_)
                | ast::DeclKind::RedisWorkers(_)
        ) {
            let diag = Diagnostic::new(
                "a cost file holds only `latency`, `db workers`, `redis workers` and `param` lines",
                d.span,
                "not a cost",
            )
            .with_hint("the scenario goes in the model file; the cost file prices its operations");
            diags.push(diag);
        }
    }
    if diags.is_empty() {
        Ok(())
    } else {
        Err(Diagnostics::new(origin, source, diags))
    }
}

/// Parses and resolves a model file. `origin` names it in messages (a path or `<string>`).
///
/// # Errors
/// Every problem found in the file, each with its span, a label and usually a hint.
pub fn parse(origin: &str, source: &str) -> Result<crate::ir::Model, Diagnostics> {
    parse_with(origin, source, &ParseOptions::default())
}

/// [`parse`] with options, such as another database flavour.
///
/// # Errors
/// Every problem found in the file, each with its span, a label and usually a hint.
pub fn parse_with(
    origin: &str,
    source: &str,
    opts: &ParseOptions,
) -> Result<crate::ir::Model, Diagnostics> {
    let mut diags = Vec::new();
    let mut tokens = lexer::lex(source, &mut diags);
    params::substitute(&mut tokens, &opts.set, &mut diags);
    let decls = {
        let mut p = parser::Parser::new(source, tokens, &mut diags);
        decls::parse_file(&mut p)
    };
    let mut model = lower::lower(origin, source, &decls, opts, &mut diags);
    model.clock = model.reads_clock();
    if diags.is_empty() {
        Ok(model)
    } else {
        Err(Diagnostics::new(origin, source, diags))
    }
}
