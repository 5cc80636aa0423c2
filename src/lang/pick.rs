//! Grammar of `pick $x from A..B [uniform | zipf S]`: a value the environment chooses.
//! `check` explores every value of the range; `simulate` draws one by the distribution.

use super::ast::StmtKind;
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{PResult, Parser};
use super::suggest;

/// The most values one `pick` may choose among (`check` explores each).
pub const MAX_PICK_VALUES: i64 = 65_536;

const SHAPES: [&str; 2] = ["uniform", "zipf"];

impl Parser<'_> {
    /// `pick $x from A..B [uniform | zipf S]`.
    pub(super) fn pick_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let t = self.peek().clone();
        let Tok::Local(name) = t.tok else {
            return self.unexpected("the local that receives the value, like `$sku`");
        };
        self.bump();
        let local = super::ast::Name {
            text: name,
            span: t.span,
        };
        self.expect_word("from")?;
        let start = self.pos;
        let lo = self.literal_int()?;
        self.expect_punct(".")?;
        self.expect_punct(".")?;
        let hi = self.literal_int()?;
        let range = self.span_from(start);
        if hi < lo || hi - lo >= MAX_PICK_VALUES || lo < i64::from(i32::MIN) || hi > i64::from(i32::MAX)
        {
            let what = if hi < lo { "an empty range" } else { "a range too wide" };
            let d = Diagnostic::new(format!("`pick` over {what}: {lo}..{hi}"), range, what)
                .with_hint(format!(
                    "a range runs from its lower end to its upper, both included, at most \
                     {MAX_PICK_VALUES} values (`check` explores each)"
                ));
            return self.fail(d);
        }
        let zipf = self.pick_shape()?;
        Ok(StmtKind::Pick {
            local,
            lo,
            hi,
            zipf,
        })
    }

    /// An integer, maybe negative.
    fn literal_int(&mut self) -> PResult<i64> {
        let negative = self.eat_punct("-");
        match self.peek().tok {
            Tok::Num {
                value,
                suffix: None,
            } => {
                self.bump();
                Ok(if negative { -value } else { value })
            }
            _ => self.unexpected("an integer"),
        }
    }

    /// Nothing or `uniform` (every value alike), or `zipf S`: the k-th value of the range
    /// drawn with weight 1/k^S, so the first values are the hot ones.
    fn pick_shape(&mut self) -> PResult<Option<f64>> {
        let word = match &self.peek().tok {
            Tok::Word(w) => w.to_ascii_lowercase(),
            _ => return Ok(None),
        };
        let t = self.peek().clone();
        match word.as_str() {
            "uniform" => {
                self.bump();
                Ok(None)
            }
            "zipf" => {
                self.bump();
                let (s, span) = self.decimal()?;
                if !(s > 0.0 && s <= 10.0) {
                    let d = Diagnostic::new("a zipf exponent lies above 0", span, "out of range")
                        .with_hint("`zipf 1.1` is a common skew; 0 would be uniform, and at most 10");
                    return self.fail(d);
                }
                Ok(Some(s))
            }
            _ if self.at_stmt_end() => Ok(None),
            _ => {
                let hint = suggest::hint(&word, SHAPES, "the shapes are", "");
                let msg = format!("unknown distribution \"{}\"", self.text(t.span));
                let d = Diagnostic::new(msg, t.span, "not a distribution of values").with_hint(hint);
                self.fail(d)
            }
        }
    }

    /// A decimal number written `1`, `1.1` or `0.75`.
    fn decimal(&mut self) -> PResult<(f64, crate::ir::Span)> {
        let start = self.pos;
        let Tok::Num { suffix: None, .. } = self.peek().tok else {
            return self.unexpected("a number, like `1.1`");
        };
        self.bump();
        if self.at_punct(".") && matches!(self.peek_at(1).tok, Tok::Num { suffix: None, .. }) {
            self.bump();
            self.bump();
        }
        let span = self.span_from(start);
        let text: String = self.text(span).chars().filter(|c| !c.is_whitespace()).collect();
        match text.parse::<f64>() {
            Ok(v) => Ok((v, span)),
            Err(_) => self.unexpected("a number, like `1.1`"),
        }
    }
}
