//! `param NAME = V`: a named constant that a run may change (`--set NAME=V`). Every other use
//! of the name is replaced by the value's token before the file is parsed, so a parameter can
//! stand wherever its value could: a process count, a row's value, a duration, a bound.

use super::diag::Diagnostic;
use super::lexer::{Tok, Token};
use super::suggest;
use crate::ir::Span;

/// Applies `overrides` (name, value as written) to the file's `param` lines and substitutes
/// every use of a parameter by its value.
pub fn substitute(toks: &mut [Token], overrides: &[(String, String)], diags: &mut Vec<Diagnostic>) {
    let declared = declarations(toks);
    for (name, value) in overrides {
        let Some(&(_, at)) = declared.iter().find(|(n, _)| n == name) else {
            let names: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
            let hint = suggest::hint(name, names, "its params are", "it declares none");
            let msg = format!("`--set {name}={value}`: the model declares no param `{name}`");
            let d = Diagnostic::new(msg, Span::new(0, 0), "no such param").with_hint(hint);
            diags.push(d);
            continue;
        };
        match value_token(value) {
            Some(tok) => toks[at].tok = tok,
            None => {
                let msg = format!("`--set {name}={value}`: not a value a param takes");
                let d = Diagnostic::new(msg, toks[at].span, "the param set from the command line")
                    .with_hint("a param is a whole number ≥ 0, maybe with a unit: `100`, `50ms`");
                diags.push(d);
            }
        }
    }
    let values: Vec<(String, Tok)> = declared
        .iter()
        .map(|(n, at)| (n.clone(), toks[*at].tok.clone()))
        .collect();
    let names: Vec<usize> = declared.iter().map(|(_, at)| at - 2).collect();
    for (i, t) in toks.iter_mut().enumerate() {
        let Tok::Word(w) = &t.tok else { continue };
        if names.contains(&i) {
            continue;
        }
        if let Some((_, v)) = values.iter().find(|(n, _)| n == w) {
            t.tok = v.clone();
        }
    }
}

/// `(name, index of its value token)` of every well-formed `param NAME = V` line.
fn declarations(toks: &[Token]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for i in 0..toks.len().saturating_sub(3) {
        let line_start = i == 0 || toks[i - 1].tok == Tok::Newline;
        let is_param = matches!(&toks[i].tok, Tok::Word(w) if w.eq_ignore_ascii_case("param"));
        if !(line_start && is_param) {
            continue;
        }
        if let (Tok::Word(name), Tok::Punct("="), Tok::Num { .. }) =
            (&toks[i + 1].tok, &toks[i + 2].tok, &toks[i + 3].tok)
        {
            if !out.iter().any(|(n, _)| n == name) {
                out.push((name.clone(), i + 3));
            }
        }
    }
    out
}

/// `100`, `50ms`: a number with an optional unit, as the lexer would read it.
fn value_token(text: &str) -> Option<Tok> {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    let value: i64 = text[..digits].parse().ok()?;
    let unit = &text[digits..];
    if !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let suffix = (!unit.is_empty()).then(|| unit.to_string());
    Some(Tok::Num { value, suffix })
}
