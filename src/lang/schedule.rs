//! Grammar of `schedule NAME { STEP … }` and of the claims after `expect schedule NAME:`
//! (docs/language.md, "Schedules").

use super::ast::{ClaimAst, ClaimAstKind, DeclKind, ExpectDecl, Lit, Name, ScheduleAst};
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{PResult, Parser};
use crate::ir::schedule::step_width;
use crate::ir::Span;

/// The words a claim about a process starts with after its name.
const CLAIMS: [&str; 5] = ["waits", "gets", "reads", "finishes", "returns"];

impl Parser<'_> {
    /// `schedule NAME { STEP … }`: steps are separated by spaces or newlines.
    pub(super) fn schedule(&mut self) -> PResult<DeclKind> {
        let name = self.name("the schedule's name")?;
        self.skip_newlines_before(|p| p.at_punct("{"));
        let open = self.expect_punct("{")?;
        let mut words: Vec<(String, Span)> = Vec::new();
        let mut last_end = None;
        loop {
            let t = self.peek().clone();
            match t.tok {
                Tok::Eof => {
                    let d = Diagnostic::new("an unclosed schedule", open, "opened here")
                        .with_hint("end the schedule with `}`");
                    return self.fail(d);
                }
                Tok::Punct("}") => {
                    self.bump();
                    break;
                }
                Tok::Newline | Tok::Punct(";") => last_end = None,
                _ => {
                    let text = self.text(t.span).to_string();
                    match (last_end == Some(t.span.start), words.last_mut()) {
                        (true, Some((w, span))) => {
                            w.push_str(&text);
                            span.end = t.span.end;
                        }
                        _ => words.push((text, t.span)),
                    }
                    last_end = Some(t.span.end);
                }
            }
            self.bump();
        }
        if words.is_empty() {
            let d = Diagnostic::new("an empty schedule", name.span, "no step")
                .with_hint("list the steps in order: `schedule s { T1 T2 T1 }`");
            return self.fail(d);
        }
        Ok(DeclKind::Schedule(ScheduleAst {
            name,
            steps: group_steps(&words),
        }))
    }

    /// `NAME: CLAIM, CLAIM, …` after `expect [FLAVOURS:] schedule`; a claim list may go on
    /// on the next line after a `,`.
    pub(super) fn schedule_claims(&mut self) -> PResult<ExpectDecl> {
        let name = self.name("the name of a schedule")?;
        self.expect_punct(":")?;
        let mut claims = vec![self.claim()?];
        while self.eat_punct(",") {
            self.skip_newlines();
            claims.push(self.claim()?);
        }
        Ok(ExpectDecl::Schedule { name, claims })
    }

    fn claim(&mut self) -> PResult<ClaimAst> {
        let start = self.pos;
        if self.eat_word("final") {
            let expr = self.expr()?;
            return Ok(ClaimAst {
                kind: ClaimAstKind::Final(expr),
                span: self.span_from(start),
            });
        }
        let who = self.process_name()?;
        let verb = self.name("`waits`, `gets`, `reads`, `finishes` or `returns`")?;
        let kind = match verb.text.as_str() {
            "waits" => {
                let at = if self.at_word("at") {
                    Some(self.at_step()?)
                } else {
                    None
                };
                ClaimAstKind::Waits { who, at }
            }
            "gets" => {
                let (code, _) = self.string("an error code, as a string (`'40001'`)")?;
                let at = self.at_step()?;
                ClaimAstKind::Gets { who, code, at }
            }
            "reads" => {
                let rows = self.claim_rows()?;
                let at = self.at_step()?;
                ClaimAstKind::Reads { who, rows, at }
            }
            "finishes" => ClaimAstKind::Ends { who, outcome: None },
            "returns" => {
                let (outcome, _) = self.string("the outcome, as a string (`'aborted'`)")?;
                ClaimAstKind::Ends {
                    who,
                    outcome: Some(outcome),
                }
            }
            _ => {
                let hint = super::suggest::hint(&verb.text, CLAIMS, "a claim about a process is", "");
                let msg = format!("unknown claim \"{}\"", verb.text);
                let d = Diagnostic::new(msg, verb.span, "not a claim").with_hint(hint);
                return self.fail(d);
            }
        };
        Ok(ClaimAst {
            kind,
            span: self.span_from(start),
        })
    }

    /// A process as a trace names it: `T1`, `buyer[0]`.
    fn process_name(&mut self) -> PResult<Name> {
        let start = self.pos;
        let mut name = self.name("a process name, or `final`")?;
        if self.at_punct("[") {
            self.bump();
            let i = self.count("a process's index", 0..=65_535)?;
            self.expect_punct("]")?;
            name.text = format!("{}[{i}]", name.text);
            name.span = self.span_from(start);
        }
        Ok(name)
    }

    /// `at K`: a schedule step, from 1.
    fn at_step(&mut self) -> PResult<usize> {
        self.expect_word("at")?;
        Ok(self.count("a step of the schedule, from 1", 1..=1_000_000)? as usize)
    }

    /// `nothing`, one literal (a row of one column), or tuples `(1, 10) (2, 20)`.
    fn claim_rows(&mut self) -> PResult<Vec<Vec<Lit>>> {
        if self.eat_word("nothing") {
            return Ok(Vec::new());
        }
        if !self.at_punct("(") {
            return Ok(vec![vec![self.literal()?]]);
        }
        let mut rows = Vec::new();
        while self.eat_punct("(") {
            let mut row = vec![self.literal()?];
            while self.eat_punct(",") {
                row.push(self.literal()?);
            }
            self.expect_punct(")")?;
            rows.push(row);
        }
        Ok(rows)
    }
}

/// Words into steps: `tick 100ms` and `fault crash T1` are one step each.
fn group_steps(words: &[(String, Span)]) -> Vec<(String, Span)> {
    let texts: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let n = step_width(&texts[at..]).max(1);
        let span = Span {
            start: words[at].1.start,
            end: words[at + n - 1].1.end,
        };
        out.push((texts[at..at + n].join(" "), span));
        at += n;
    }
    out
}
