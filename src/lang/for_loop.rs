//! Grammar of `for $v in A..B { … }` and `for $v in x, y, z { … }`: a body written once and
//! run once per item, in order, with `$v` standing for the item. The loop is unrolled when
//! the program is lowered (`program.rs`), so `$v` may name a server (`on $v`) or a piece of a
//! key (`lock:$v`) as well as a value.

use super::ast::{Lit, LitKind, Name, StmtKind};
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{PResult, Parser};

/// The most items one `for` may have: its body is copied once per item.
pub const MAX_FOR_ITEMS: usize = 1_000;

impl Parser<'_> {
    /// `for $v in ITEMS { … }`.
    pub(super) fn for_stmt(&mut self) -> PResult<StmtKind> {
        let start = self.pos;
        self.bump();
        let var = self.for_variable()?;
        self.expect_word("in")?;
        let items = self.for_items()?;
        let head = self.span_from(start);
        self.skip_newlines_before(|p| p.at_punct("{"));
        let body = self.block()?.0;
        Ok(StmtKind::For {
            var,
            items,
            head,
            body,
        })
    }

    fn for_variable(&mut self) -> PResult<Name> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Local(name) if name != "me" => {
                self.bump();
                Ok(Name {
                    text: name,
                    span: t.span,
                })
            }
            Tok::Local(_) => {
                let d = Diagnostic::new("`$me` cannot be a loop variable", t.span, "`$me`")
                    .with_hint("`$me` is the process itself; name the variable, like `$n`");
                self.fail(d)
            }
            Tok::Word(w) => {
                let d = Diagnostic::new(
                    format!("a `for` variable is written with `$`: `${w}`"),
                    t.span,
                    "no `$`",
                )
                .with_hint(format!("write `for ${w} in …`"));
                self.fail(d)
            }
            _ => self.unexpected("the loop variable, like `$n`"),
        }
    }

    /// `A..B` (whole numbers, both included) or `x, y, z` (names, numbers or strings).
    fn for_items(&mut self) -> PResult<Vec<Lit>> {
        let start = self.pos;
        let first = self.for_item()?;
        if !self.at_punct(".") {
            let mut items = vec![first];
            while self.eat_punct(",") {
                items.push(self.for_item()?);
            }
            return self.counted(items, start);
        }
        self.expect_punct(".")?;
        self.expect_punct(".")?;
        let last = self.for_item()?;
        let span = self.span_from(start);
        let (LitKind::Int(lo), LitKind::Int(hi)) = (&first.kind, &last.kind) else {
            let d = Diagnostic::new("a `for` range runs between two whole numbers", span, "not numbers")
                .with_hint("write `1..5`, or list the items: `for $n in n1, n2, n3`");
            return self.fail(d);
        };
        let (lo, hi) = (*lo, *hi);
        if hi < lo {
            let d = Diagnostic::new(format!("an empty `for` range: {lo}..{hi}"), span, "empty")
                .with_hint("a range runs from its lower end up to its upper, both included");
            return self.fail(d);
        }
        if (hi - lo) as u64 >= MAX_FOR_ITEMS as u64 {
            return self.counted(vec![first; MAX_FOR_ITEMS + 1], start);
        }
        let items = (lo..=hi)
            .map(|v| Lit {
                kind: LitKind::Int(v),
                span,
            })
            .collect();
        Ok(items)
    }

    fn counted(&mut self, items: Vec<Lit>, start: usize) -> PResult<Vec<Lit>> {
        if items.len() <= MAX_FOR_ITEMS {
            return Ok(items);
        }
        let span = self.span_from(start);
        let d = Diagnostic::new(
            format!("a `for` has at most {MAX_FOR_ITEMS} items"),
            span,
            "too many",
        )
        .with_hint("the body is copied once per item; loop at run time with `repeat N` instead");
        self.fail(d)
    }

    /// One item: a name (`n1`), a whole number (maybe negative) or a string.
    fn for_item(&mut self) -> PResult<Lit> {
        let t = self.peek().clone();
        if let Tok::Word(w) = &t.tok {
            self.bump();
            return Ok(Lit {
                kind: LitKind::Str(w.clone()),
                span: t.span,
            });
        }
        let is_value = matches!(t.tok, Tok::Num { suffix: None, .. } | Tok::Str(_))
            || (t.tok == Tok::Punct("-")
                && matches!(self.peek_at(1).tok, Tok::Num { suffix: None, .. }));
        if !is_value {
            return self.unexpected("an item: a name, a whole number or a string");
        }
        let lit = self.literal()?;
        Ok(lit)
    }
}
