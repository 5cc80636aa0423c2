//! The `.model` front end: text in, a resolved [`crate::ir::Model`] or diagnostics out.

mod ast;
mod decls;
mod diag;
mod expr;
mod lexer;
mod lower;
mod lower_expr;
mod parser;
mod program;
mod schema;
mod scope;
mod sql;
mod sqltext;
mod stmt;
mod suggest;

#[cfg(test)]
mod tests;

pub use diag::{Diagnostic, Diagnostics};

/// Parses and resolves a model file. `origin` names it in messages (a path or `<string>`).
///
/// # Errors
/// Every problem found in the file, each with its span, a label and usually a hint.
pub fn parse(origin: &str, source: &str) -> Result<crate::ir::Model, Diagnostics> {
    let mut diags = Vec::new();
    let tokens = lexer::lex(source, &mut diags);
    let decls = {
        let mut p = parser::Parser::new(source, tokens, &mut diags);
        decls::parse_file(&mut p)
    };
    let model = lower::lower(origin, source, &decls, &mut diags);
    if diags.is_empty() {
        Ok(model)
    } else {
        Err(Diagnostics::new(origin, source, diags))
    }
}
