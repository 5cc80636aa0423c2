//! What a verdict did not cover, in words: statements no process ever ran, `if` tests that
//! always came out the same way, SQL statements that never met a row, processes that end on
//! an uncaught error in a `holds`; and how the processes ended in the final states. A proof
//! that never reached its critical section, or whose `WHERE` has a typo in its key, is no
//! proof: these say so (docs/explorer.md, "Coverage"). And where `timing bounded` keeps a
//! window shut that a delay could open (`windows`).

mod windows;

use crate::explore::coverage::{Coverage, End, OpCount};
use crate::explore::Outcome;
use crate::ir::{Expect, Model, OpKind, Program, RedisCmd, Span, SqlStmt};

/// One thing the search did not cover, at its place in the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// What was not covered, naming the group and the statement.
    pub message: String,
    /// Where in the model (byte range; [`crate::Verdict::render`] shows `file:line:col`).
    pub span: Option<Span>,
    /// What to look at.
    pub hint: Option<String>,
}

/// The warnings for a search that ended with `outcome`. Statements and tests are judged only
/// when the search covered every state (a failure or a bound stops it early).
#[must_use]
pub fn warnings(m: &Model, outcome: &Outcome, cov: &Coverage) -> Vec<Warning> {
    let complete = matches!(outcome, Outcome::Holds)
        || matches!(
            outcome,
            Outcome::Failed {
                failure: crate::explore::Failure::Unreached(_),
                ..
            }
        );
    let mut out = Vec::new();
    if complete {
        for (g, group) in m.groups.iter().enumerate() {
            let Some(counts) = cov.ops.get(g) else {
                continue;
            };
            let mut found = Vec::new();
            never_ran(m, &group.name, &group.program, counts, &mut found);
            tests(m, &group.name, &group.program, counts, &mut found);
            no_rows(m, &group.name, &group.program, counts, &mut found);
            found.sort_by_key(|w| w.span.map(|s| s.start));
            out.extend(found);
        }
    }
    if matches!(outcome, Outcome::Holds) && !m.allow_failed {
        failed_processes(m, cov, &mut out);
    }
    if matches!(outcome, Outcome::Holds) {
        windows::shut_windows(m, &mut out);
    }
    for group in &m.groups {
        waits_beyond_replicas(m, &group.name, &group.program, &mut out);
    }
    out
}

/// `WAIT n` on a server with fewer than `n` replicas is legal in Redis; it waits out its
/// whole timeout every time (for ever with 0), which is seldom what was meant.
fn waits_beyond_replicas(m: &Model, group: &str, p: &Program, out: &mut Vec<Warning>) {
    for op in &p.ops {
        let OpKind::Redis {
            cmd: RedisCmd::Wait { replicas, timeout },
            server,
            ..
        } = &op.kind
        else {
            continue;
        };
        let (name, has) = m
            .redis
            .get(usize::from(*server))
            .map_or(("redis", 0), |r| (r.name.as_str(), r.replicas));
        if *replicas <= has {
            continue;
        }
        let plural = |n: u8| if n == 1 { "replica" } else { "replicas" };
        let outcome = if *timeout == 0 {
            "it never returns".to_string()
        } else {
            format!("it always waits its whole timeout and replies at most {has}")
        };
        out.push(Warning {
            message: format!(
                "{group}: `{}` asks for more replicas than `{name}` has ({has}): {outcome}",
                text(m, op.span)
            ),
            span: Some(op.span),
            hint: Some(format!(
                "declare `redis {name} with {replicas} {}`, or wait for at most {has}",
                plural(*replicas)
            )),
        });
    }
}

/// The statement an op came from, as written (its first line, shortened).
fn text(m: &Model, span: Span) -> String {
    let src = &m.source;
    let (s, e) = (span.start as usize, (span.end as usize).min(src.len()));
    let line = src
        .get(s..e)
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("")
        .trim();
    let mut t: String = line.chars().take(40).collect();
    if line.chars().count() > 40 {
        t.push_str("...");
    }
    t
}

/// Ops that stand for a statement of their own (not a jump of a loop or an `if`, nor the
/// program's implicit end).
fn is_statement(p: &Program, i: usize) -> bool {
    !matches!(p.ops[i].kind, OpKind::Jump(_)) && i + 1 < p.ops.len()
}

/// Runs of statements no step ever ran, one warning each. The ops a construct lowers to
/// share its place (a `retry`'s rollback and backoff, a `repeat`'s counter): a place counts
/// as run when any of its ops ran.
fn never_ran(m: &Model, group: &str, p: &Program, counts: &[OpCount], out: &mut Vec<Warning>) {
    let mut places: Vec<(u32, u32)> = (0..p.ops.len())
        .filter(|&i| counts[i].runs > 0)
        .map(|i| (p.ops[i].span.start, p.ops[i].span.end))
        .collect();
    places.sort_unstable();
    let unrun = |i: usize| {
        let at = (p.ops[i].span.start, p.ops[i].span.end);
        is_statement(p, i) && places.binary_search(&at).is_err()
    };
    let mut i = 0;
    while i < p.ops.len() {
        if !unrun(i) {
            i += 1;
            continue;
        }
        let first = i;
        let mut last = i;
        while i < p.ops.len() && (unrun(i) || !is_statement(p, i)) {
            if unrun(i) {
                last = i;
            }
            i += 1;
        }
        let span = p.ops[first].span;
        let (from, to) = (m.line_of(span), m.line_of(p.ops[last].span));
        let lines = if from == to {
            format!("line {from}")
        } else {
            format!("lines {from} to {to}")
        };
        let why = first
            .checked_sub(1)
            .filter(|&t| p.tests.contains(&(t as u32)) && counts[t].taken[0] == 0)
            .map(|t| format!(": its `if {}` is never true", text(m, p.ops[t].span)));
        out.push(Warning {
            message: format!(
                "{group}: `{}` ({lines}) never ran{}",
                text(m, span),
                why.unwrap_or_default()
            ),
            span: Some(span),
            hint: Some(
                "no explored run gets there: a property about it is proved vacuously; check \
                 the conditions and the faults that lead to it"
                    .into(),
            ),
        });
    }
}

/// `if` tests that ran but always came out true (the other way holds no statement, or it
/// would be reported as never run).
fn tests(m: &Model, group: &str, p: &Program, counts: &[OpCount], out: &mut Vec<Warning>) {
    for &t in &p.tests {
        let c = counts[t as usize];
        if c.runs > 0 && c.taken[1] == 0 {
            let span = p.ops[t as usize].span;
            out.push(Warning {
                message: format!("{group}: `if {}` is always true", text(m, span)),
                span: Some(span),
                hint: Some("the case where it is false is never explored".into()),
            });
        }
    }
}

/// SQL statements that ran but never returned or affected a row: a key that matches nothing.
fn no_rows(m: &Model, group: &str, p: &Program, counts: &[OpCount], out: &mut Vec<Warning>) {
    for (i, op) in p.ops.iter().enumerate() {
        let OpKind::Sql { stmt, .. } = &op.kind else {
            continue;
        };
        let reads = matches!(
            stmt,
            SqlStmt::Select { .. } | SqlStmt::Update { .. } | SqlStmt::Delete { .. }
        );
        if reads && counts[i].runs > 0 && !counts[i].rows {
            let innodb = m.db.as_ref().is_some_and(|d| d.flavour.innodb());
            let hint = if innodb {
                "check its WHERE against the rows declared (a typo in a key?); InnoDB counts an \
                 UPDATE's rows changed, not matched"
            } else {
                "check its WHERE against the rows declared (a typo in a key?)"
            };
            out.push(Warning {
                message: format!(
                    "{group}: `{}` never returned or changed a row",
                    text(m, op.span)
                ),
                span: Some(op.span),
                hint: Some(hint.into()),
            });
        }
    }
}

/// Processes that end on an uncaught error in some final state of a `holds`.
fn failed_processes(m: &Model, cov: &Coverage, out: &mut Vec<Warning>) {
    for &((g, end), n) in &cov.ends {
        let End::Failed(code) = end else {
            continue;
        };
        let group = &m.groups[g as usize];
        let deadlock = matches!(m.expect, Expect::Deadlock);
        let hint = if deadlock {
            "a deadlock was expected, but the database broke every cycle by failing a victim; \
             declare `allow failed` if that is the lesson"
        } else {
            "the run ends with this error in these states; catch it (`catch $e`, `retry`) or \
             declare `allow failed` if that is the lesson"
        };
        out.push(Warning {
            message: format!(
                "{}: a process fails with ERROR {} in {n} of {} final states",
                group.name,
                describe_code(m, code),
                cov.finals
            ),
            span: Some(group.span),
            hint: Some(hint.into()),
        });
    }
}

fn describe_code(m: &Model, code: crate::ir::value::Sym) -> String {
    let c = m.symbol(code);
    match crate::ir::error_meaning(c) {
        Some(why) => format!("{c} ({why})"),
        None => c.to_string(),
    }
}

/// `final states: 3 — buyer: done in 3; worker: failed with ERROR 1213 (deadlock victim) in 1`,
/// or `None` when the search met no final state; a search that stopped early (`complete` is
/// false) says they are the ones it met before it stopped.
#[must_use]
pub fn final_states(m: &Model, cov: &Coverage, complete: bool) -> Option<String> {
    if cov.finals == 0 {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    for (g, group) in m.groups.iter().enumerate() {
        let ends: Vec<String> = cov
            .ends
            .iter()
            .filter(|((gg, _), _)| *gg as usize == g)
            .map(|&((_, end), n)| format!("{} in {n}", end_text(m, end)))
            .collect();
        if !ends.is_empty() {
            parts.push(format!("{}: {}", group.name, ends.join(", ")));
        }
    }
    let what = if complete {
        "final states"
    } else {
        "final states met before the search stopped"
    };
    Some(format!("{what}: {} — {}", cov.finals, parts.join("; ")))
}

fn end_text(m: &Model, end: End) -> String {
    match end {
        End::Done(None) => "done".into(),
        End::Done(Some(o)) => format!("done \"{}\"", m.symbol(o)),
        End::Failed(code) => format!("failed with ERROR {}", describe_code(m, code)),
        End::Crashed => "crashed".into(),
        End::Hung => "hung".into(),
        End::RuntimeError(e) => format!("stopped by a mistake ({})", e.message()),
    }
}

/// The full table `--coverage` prints: per group, each statement with the times it ran and
/// the states it ran from, and each `if` with how often it went each way.
#[must_use]
pub fn table(m: &Model, cov: &Coverage) -> String {
    let mut out = String::new();
    for (g, group) in m.groups.iter().enumerate() {
        let Some(counts) = cov.ops.get(g) else {
            continue;
        };
        out.push_str(&format!(
            "coverage of {} ({} process{}):\n  {:<6} {:<48} {:>9} {:>9}\n",
            group.name,
            group.count,
            if group.count == 1 { "" } else { "es" },
            "line",
            "statement",
            "runs",
            "states"
        ));
        let p = &group.program;
        for (i, op) in p.ops.iter().enumerate() {
            // One row per statement: the ops a construct lowers to share its place, and the
            // row shows the busiest of them.
            if !is_statement(p, i) || (0..i).any(|j| is_statement(p, j) && p.ops[j].span == op.span)
            {
                continue;
            }
            let same = (i..p.ops.len()).filter(|&j| is_statement(p, j) && p.ops[j].span == op.span);
            let busiest = same.max_by_key(|&j| counts[j].runs).unwrap_or(i);
            let c = OpCount {
                taken: counts[i].taken,
                ..counts[busiest]
            };
            let mut what = text(m, op.span);
            if group.program.tests.contains(&(i as u32)) {
                what = format!("if {what}");
            }
            let what: String = what.chars().take(48).collect();
            let mut line = format!(
                "  L{:<5} {:<48} {:>9} {:>9}",
                m.line_of(op.span),
                what,
                c.runs,
                c.states
            );
            if group.program.tests.contains(&(i as u32)) {
                line.push_str(&format!("  true {} false {}", c.taken[0], c.taken[1]));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}
