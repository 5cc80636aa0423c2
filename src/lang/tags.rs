//! `tags strategy=optimistic fault=pause`: what a model is about, for `interlock matrix`.
//! The names and the values of `strategy` and `fault` are a small fixed vocabulary
//! (docs/language.md, "Tags"); their order here is the matrix's order of rows and columns.

use std::collections::HashMap;

use super::ast::{Decl, DeclKind, Name};
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::scope::Cx;
use super::parser::{PResult, Parser};
use super::suggest;

/// The tag names.
pub const NAMES: [&str; 3] = ["strategy", "fault", "lesson"];

/// The values of `strategy`, in the matrix's row order: no protection first, then the
/// database's forms, the process's, Redis's, and a lease by the clock.
pub const STRATEGIES: [&str; 12] = [
    "no-lock",
    "isolation",
    "optimistic",
    "conditional-update",
    "pessimistic",
    "skip-locked",
    "mutex",
    "redis-lock",
    "watchdog",
    "redlock",
    "fencing",
    "lease",
];

/// The values of `fault`, in the matrix's column order: none, then what the schedule alone
/// does, then what the environment does.
pub const FAULTS: [&str; 13] = [
    "none",
    "contention",
    "deadlock",
    "pause",
    "crash",
    "hang",
    "expiry",
    "lost-reply",
    "failover",
    "restart",
    "partition",
    "clock-jump",
    "drift",
];

/// The values a tag name allows; `None`: any (`lesson`).
pub fn values(name: &str) -> Option<&'static [&'static str]> {
    match name {
        "strategy" => Some(&STRATEGIES),
        "fault" => Some(&FAULTS),
        _ => None,
    }
}

impl Parser<'_> {
    /// `tags NAME=VALUE …`: one or more on the line; a value is words joined by `-`.
    pub(super) fn tags(&mut self) -> PResult<DeclKind> {
        let mut tags = Vec::new();
        loop {
            let name = self.name("a tag, `NAME=value` (e.g. `strategy=optimistic`)")?;
            let lower = name.text.to_ascii_lowercase();
            if !NAMES.contains(&lower.as_str()) {
                let hint = suggest::hint(&name.text, NAMES, "the tags are", "");
                let msg = format!("unknown tag \"{}\"", name.text);
                let d = Diagnostic::new(msg, name.span, "unknown tag").with_hint(hint);
                return self.fail(d);
            }
            if !self.at_punct("=") {
                let t = self.peek().clone();
                let found = self.describe(&t);
                let msg = format!("expected `=` after the tag `{lower}`, found {found}");
                let d = Diagnostic::new(msg, t.span, "expected `=`").with_hint(format!(
                    "a tag is `NAME=value`, e.g. `{lower}={}`",
                    values(&lower).map_or("lost-update", |v| v[0])
                ));
                return self.fail(d);
            }
            let eq = self.bump().span;
            let value = self.tag_value();
            let Some(value) = value else {
                let t = self.peek().clone();
                let found = self.describe(&t);
                let msg = format!("the tag `{lower}` has no value, found {found}");
                let d = Diagnostic::new(msg, eq, "no value after `=`").with_hint(
                    "write the value right after `=`, with no space: words joined by `-`, \
                     e.g. `fault=lost-reply`",
                );
                return self.fail(d);
            };
            if let Some(known) = values(&lower) {
                if !known.contains(&value.text.as_str()) {
                    let hint = suggest::hint(&value.text, known.iter().copied(), "they are", "");
                    let msg = format!("unknown {lower} \"{}\"", value.text);
                    let d = Diagnostic::new(msg, value.span, format!("not a {lower}"))
                        .with_hint(hint);
                    self.diags.push(d);
                }
            }
            tags.push((
                Name {
                    text: lower,
                    span: name.span,
                },
                value,
            ));
            if self.at_line_end() {
                return Ok(DeclKind::Tags(tags));
            }
        }
    }

    /// A tag's value: the words, numbers and `-` right after `=`, with no space between
    /// them; `None` when none follows at once.
    fn tag_value(&mut self) -> Option<Name> {
        let mut end = self.toks[self.pos - 1].span.end;
        let start = end;
        while self.peek().span.start == end
            && matches!(
                self.peek().tok,
                Tok::Word(_) | Tok::Num { .. } | Tok::Punct("-")
            )
        {
            end = self.bump().span.end;
        }
        if end == start {
            return None;
        }
        let span = crate::ir::Span { start, end };
        let text = self.text(span).to_ascii_lowercase();
        Some(Name { text, span })
    }
}

/// The `tags` lines, in order; a name given twice (on any line) is reported.
pub fn lower(cx: &mut Cx, decls: &[Decl]) -> Vec<(String, String)> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for decl in decls {
        let DeclKind::Tags(tags) = &decl.kind else {
            continue;
        };
        for (name, value) in tags {
            if let Some(&line) = seen.get(&name.text) {
                let msg = format!("the tag `{}` is given twice", name.text);
                let d = Diagnostic::new(msg, name.span, "given again here").with_hint(format!(
                    "a model has one `{}`; the first is on line {line}",
                    name.text
                ));
                cx.report(d);
                continue;
            }
            seen.insert(name.text.clone(), cx.line(name.span));
            out.push((name.text.clone(), value.text.clone()));
        }
    }
    out
}
