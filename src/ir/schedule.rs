//! A model's `schedule` blocks and the claims its `expect schedule` lines make about them
//! (docs/language.md, "Schedules"). Only data, and the written form of a step.

use super::expr::Expr;
use super::value::{Pid, Sym, Value};
use super::Span;

/// `schedule NAME { … }`: a chosen interleaving, and what this flavour expects of it.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub name: String,
    pub span: Span,
    /// The steps as written (`T1`, `tick 100ms`, `fault crash T2`), each with where it is.
    pub steps: Vec<(String, Span)>,
    /// The claims of the `expect schedule` line for this flavour (none: nothing expected).
    pub claims: Vec<Claim>,
}

/// One claim about a schedule's run.
#[derive(Clone, Debug)]
pub struct Claim {
    /// As written, for reports.
    pub text: String,
    pub span: Span,
    pub kind: ClaimKind,
}

#[derive(Clone, Debug)]
pub enum ClaimKind {
    /// The process starts waiting at schedule step `at` (or after it, on its own); with no
    /// step, it still waits when the run ends.
    Waits { pid: Pid, at: Option<usize> },
    /// A statement of the process fails with this code at step `at` (or on its own after it).
    Gets { pid: Pid, code: Sym, at: usize },
    /// A query of the process returns these rows (as a multiset) at step `at`.
    Reads {
        pid: Pid,
        rows: Vec<Vec<Value>>,
        at: usize,
    },
    /// The process has finished (`return` or the end of its code) with this outcome; `None`:
    /// with any.
    Ends { pid: Pid, outcome: Option<Sym> },
    /// True of the state the run ends in.
    Final(Expr),
}

/// How many of `words` the step at their start takes: `tick 100ms` two, `fault crash T1`
/// three, `T1` one. The same words a replay token writes (docs/json.md).
#[must_use]
pub fn step_width(words: &[&str]) -> usize {
    let upto = |n: usize| n.min(words.len());
    let Some(first) = words.first() else { return 0 };
    match *first {
        "tick" => {
            let timed = words
                .get(1)
                .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()));
            if timed {
                upto(2)
            } else {
                1
            }
        }
        "check" | "timeout" | "renew" | "resume" | "finish" | "restart" | "pass"
        | "replicate" => upto(2),
        "pick" | "fault" => upto(3),
        w if w.starts_with("drift") => upto(3),
        w if w.starts_with("failover") || w.starts_with("jump") => upto(2),
        _ => 1,
    }
}
