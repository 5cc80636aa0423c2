//! Grammar of delays: a length, a range, or a distribution `simulate` draws from —
//! `5ms`, `1..3ms`, `uniform 1ms..3ms`, `exponential mean 10ms max 200ms`,
//! `lognormal median 5ms p99 50ms max 500ms` — and of open arrivals, `poisson 200/s`.

use super::ast::{DelayAst, DistAst};
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{PResult, Parser};
use super::suggest;

/// The distributions a delay may name.
pub const DISTRIBUTIONS: [&str; 4] = ["fixed", "uniform", "exponential", "lognormal"];

impl Parser<'_> {
    /// A delay: a duration, a range, or a named distribution.
    pub fn delay_spec(&mut self) -> PResult<DelayAst> {
        let start = self.pos;
        if self.at_punct("-") {
            let span = self.peek().span;
            let d = Diagnostic::new("a negative duration", span, "time does not run backwards")
                .with_hint("a delay is a length of time, like `2ms` or `1..3ms`");
            return self.fail(d);
        }
        let dist = match &self.peek().tok {
            Tok::Word(w) => w.to_ascii_lowercase(),
            _ => {
                let (lo, hi) = self.duration_range()?;
                return Ok(self.range(lo, hi, start));
            }
        };
        match dist.as_str() {
            "fixed" => {
                self.bump();
                let (ms, _) = self.duration()?;
                Ok(self.range(ms, ms, start))
            }
            "uniform" => {
                self.bump();
                let (lo, hi) = self.duration_range()?;
                Ok(self.range(lo, hi, start))
            }
            "exponential" => {
                self.bump();
                self.expect_word("mean")?;
                let (mean, mean_span) = self.duration()?;
                let hi = self.upper_bound("exponential")?;
                if hi < mean {
                    let d = Diagnostic::new("the cap lies below the mean", mean_span, "above its cap")
                        .with_hint(format!("a cap well above the mean keeps its shape: `max {}ms`", mean * 10));
                    return self.fail(d);
                }
                let mean_us = mean * 1000;
                let dist = DistAst::Exponential { mean_us };
                Ok(self.bounded(dist, hi, start))
            }
            "lognormal" => self.lognormal(start),
            _ => {
                let word = self.peek().clone();
                let hint = suggest::hint(&dist, DISTRIBUTIONS, "distributions are", "");
                let msg = format!("unknown distribution \"{}\"", self.text(word.span));
                let d = Diagnostic::new(msg, word.span, "unknown distribution").with_hint(hint);
                self.fail(d)
            }
        }
    }

    fn lognormal(&mut self, start: usize) -> PResult<DelayAst> {
        self.bump();
        self.expect_word("median")?;
        let (median, _) = self.duration()?;
        self.expect_word("p99")?;
        let (p99, p99_span) = self.duration()?;
        if p99 <= median {
            let d = Diagnostic::new(
                "the 99th percentile must lie above the median",
                p99_span,
                "not above the median",
            )
            .with_hint(format!(
                "a log-normal spreads upwards from its median: try `p99 {}ms`",
                median * 10
            ));
            return self.fail(d);
        }
        let hi = self.upper_bound("lognormal")?;
        let dist = DistAst::LogNormal {
            median_us: median * 1000,
            p99_us: p99 * 1000,
        };
        Ok(self.bounded(dist, hi, start))
    }

    /// `max D`, which a distribution without an upper bound needs.
    fn upper_bound(&mut self, dist: &str) -> PResult<u64> {
        if !self.at_word("max") {
            let t = self.peek().clone();
            let found = self.describe(&t);
            let msg = format!("expected `max D` after the {dist} distribution, found {found}");
            let d = Diagnostic::new(msg, t.span, "the longest length is missing").with_hint(
                "an unbounded distribution needs a cap, which is also the range `check` \
                 explores: add `max 500ms`",
            );
            return self.fail(d);
        }
        self.bump();
        Ok(self.duration()?.0)
    }

    /// `poisson R/s`: the gap between arrivals is exponential with mean 1/R.
    pub fn poisson_rate(&mut self) -> PResult<DelayAst> {
        let start = self.pos;
        self.expect_word("poisson")?;
        let t = self.peek().clone();
        let per_second = match t.tok {
            Tok::Num {
                value,
                suffix: None,
            } if (1..=1_000_000).contains(&value) => value as u64,
            _ => {
                let d = Diagnostic::new("expected an arrival rate", t.span, "not a rate")
                    .with_hint("write how many arrivals a second, from 1 to 1000000: `200/s`");
                return self.fail(d);
            }
        };
        self.bump();
        self.expect_punct("/")?;
        self.expect_word("s")?;
        let mean_us = 1_000_000 / per_second;
        // A thousand mean gaps: the share of draws cut there is e^-1000.
        let hi = mean_us.max(1);
        let dist = DistAst::Exponential { mean_us };
        Ok(self.bounded(dist, hi, start))
    }

    fn range(&self, lo: u64, hi: u64, start: usize) -> DelayAst {
        DelayAst {
            lo,
            hi,
            dist: DistAst::Range,
            span: self.span_from(start),
        }
    }

    fn bounded(&self, dist: DistAst, hi: u64, start: usize) -> DelayAst {
        DelayAst {
            lo: 0,
            hi,
            dist,
            span: self.span_from(start),
        }
    }
}
