//! `retry … backoff …`: how long to wait before each next attempt, as tenacity writes it.
//!
//! - `backoff D` / `backoff fixed D`: `D` every time;
//! - `backoff exponential multiplier M [min A] [max B]`: before attempt k + 1, `M·2^(k−1)`
//!   held within `A..B` (tenacity's `wait_exponential`: multiplier 1 s, min 1 s, max 5 s waits
//!   1, 2, 4, 5 s);
//! - `backoff random_exponential multiplier M [min A] [max B]`: any time from `A` (default 0)
//!   up to that (tenacity's `wait_random_exponential`, "full jitter"): `check` explores the
//!   range, `simulate` draws uniformly.

use super::ast::BackoffAst;
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{PResult, Parser};
use super::suggest;
use crate::ir::Span;

/// The longest one wait may be; a longer one needs a `max`.
const LONGEST_MS: u64 = 3_600_000;

const FORMS: [&str; 3] = ["fixed", "exponential", "random_exponential"];

impl Parser<'_> {
    /// What follows `backoff`.
    pub(super) fn backoff_spec(&mut self) -> PResult<BackoffAst> {
        let start = self.pos;
        let word = match &self.peek().tok {
            Tok::Word(w) => w.to_ascii_lowercase(),
            _ => return Ok(BackoffAst::fixed(self.duration()?.0, self.span_from(start))),
        };
        let t = self.peek().clone();
        self.bump();
        let jitter = match word.as_str() {
            "fixed" => return Ok(BackoffAst::fixed(self.duration()?.0, self.span_from(start))),
            "exponential" => false,
            "random_exponential" => true,
            _ => {
                let hint = suggest::hint(&word, FORMS, "the backoffs are", "");
                let msg = format!("unknown backoff \"{}\"", self.text(t.span));
                let d = Diagnostic::new(msg, t.span, "not a backoff").with_hint(hint);
                return self.fail(d);
            }
        };
        self.expect_word("multiplier")?;
        let multiplier = self.duration()?.0;
        let min = if self.eat_word("min") { self.duration_or_zero()? } else { 0 };
        let max = if self.eat_word("max") { Some(self.duration()?.0) } else { None };
        let span = self.span_from(start);
        if max.is_some_and(|m| m < min) {
            let d = Diagnostic::new("the backoff's max lies below its min", span, "max < min")
                .with_hint("tenacity's `wait_exponential(multiplier=1, min=1, max=5)` reads `multiplier 1s min 1s max 5s`");
            return self.fail(d);
        }
        Ok(BackoffAst::Exponential {
            multiplier,
            min,
            max,
            jitter,
            span,
        })
    }

    /// A duration, or a bare `0`.
    fn duration_or_zero(&mut self) -> PResult<u64> {
        if let Tok::Num {
            value: 0,
            suffix: None,
        } = self.peek().tok
        {
            self.bump();
            return Ok(0);
        }
        Ok(self.duration()?.0)
    }
}

impl BackoffAst {
    fn fixed(ms: u64, span: Span) -> Self {
        BackoffAst::Exponential {
            multiplier: ms,
            min: ms,
            max: Some(ms),
            jitter: false,
            span,
        }
    }

    /// The wait before each next attempt, after attempt 1, 2, …, `attempts` − 1: the shortest
    /// and the longest in milliseconds; an error when one is longer than an hour.
    pub fn waits(&self, attempts: u32) -> Result<Vec<(u64, u64)>, Diagnostic> {
        let BackoffAst::Exponential {
            multiplier,
            min,
            max,
            jitter,
            span,
        } = *self;
        let mut out = Vec::new();
        for k in 1..attempts {
            let grown = multiplier.saturating_mul(1u64.checked_shl(k - 1).unwrap_or(u64::MAX));
            let high = grown.min(max.unwrap_or(u64::MAX)).max(min);
            if high > LONGEST_MS {
                let d = Diagnostic::new(
                    format!("the wait before attempt {} is longer than an hour", k + 1),
                    span,
                    "grows without a cap",
                )
                .with_hint("give the backoff a `max`, like `max 5s`");
                return Err(d);
            }
            out.push((if jitter { min } else { high }, high));
        }
        Ok(out)
    }
}
