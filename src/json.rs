//! `check --format json`: one document, `"schema": 1`, every verdict as data — the outcome,
//! the expectation, the search's counts, what it did not cover, the final states, the trace
//! with its replay token — and every invalid model's diagnostics. The schema is documented
//! in docs/json.md, which also holds its JSON Schema; a test validates every built-in model's
//! document against it. A change that breaks a reader bumps [`SCHEMA`].

use crate::explore::coverage::{Coverage, End};
use crate::explore::{Bound, Failure, Outcome};
use crate::ir::{Expect, Model};
use crate::lang::Diagnostics;
use crate::warnings::{self, Warning};
use crate::Verdict;
use serde_json::{json, Value as Json};

/// The version of the document's shape.
pub const SCHEMA: u32 = 1;

/// The whole document for a run: its results in order, and the exit code it ends with.
#[must_use]
pub fn document(results: Vec<Json>, exit_code: u8) -> Json {
    let met = results.iter().filter(|r| r["met"] == json!(true)).count();
    json!({
        "schema": SCHEMA,
        "tool": format!("interlock {}", env!("CARGO_PKG_VERSION")),
        "results": results,
        "summary": { "models": results.len(), "met": met, "exit_code": exit_code },
    })
}

/// One model's verdict; `file` is its label (`path [flavour]`).
#[must_use]
pub fn verdict(file: &str, v: &Verdict) -> Json {
    let m = v.model.ir();
    let s = v.stats;
    json!({
        "file": file,
        "model": m.name,
        "flavour": m.db.as_ref().map(|d| d.flavour.name()),
        "verdict": outcome(m, &v.outcome),
        "summary": v.summary(),
        "expected": expected(&m.expect),
        "met": v.met(),
        "stats": {
            "states": s.states,
            "transitions": s.transitions,
            "depth": s.depth,
            "seconds": v.seconds,
            "reductions": {
                "dead_locals": s.dead_locals,
                "symmetry": s.symmetry,
                "partial_order": s.por,
                "ample_states": s.ample,
            },
            "fingerprints": s.fingerprints,
            "depth_first": s.dfs,
            "probe": s.probe.map(|k| json!({ "none_shorter_than": k })),
        },
        "final_states": final_states(m, &v.coverage, complete(&v.outcome)),
        "warnings": v.warnings.iter().map(|w| warning(m, w)).collect::<Vec<_>>(),
        "coverage": coverage(m, &v.coverage),
        "trace": v.trace.as_ref().map(|t| crate::trace::json::render(m, t)),
        "schedules": v.schedules.iter().map(|r| schedule(&v.model, r)).collect::<Vec<_>>(),
        "diagnostics": Json::Null,
    })
}

/// A schedule's run: its claims judged, its trace, or the step that could not run.
#[must_use]
pub fn schedule(model: &crate::Model, r: &crate::schedules::ScheduleRun) -> Json {
    let m = model.ir();
    let claims: Vec<Json> = r
        .claims
        .iter()
        .map(|(text, got)| json!({"claim": text, "holds": got.is_ok(), "why": got.as_ref().err()}))
        .collect();
    let trace = crate::trace::json::render(m, &r.trace);
    let error = r.error.as_ref().map_or(
        Json::Null,
        |e| json!({"step": e.step, "written": e.written, "message": e.message, "hint": e.hint}),
    );
    json!({"name": r.name, "met": r.met(), "claims": claims, "error": error, "trace": trace})
}

/// A model that could not be read: its diagnostics (each at its place), and the text.
#[must_use]
pub fn invalid(file: &str, d: &Diagnostics) -> Json {
    let items: Vec<Json> = d
        .items
        .iter()
        .map(|x| {
            let (line, column) = place(&d.source, x.span.start as usize);
            let (end_line, end_column) = place(&d.source, x.span.end as usize);
            json!({
                "message": x.message, "label": x.label, "hint": x.hint,
                "line": line, "column": column, "end_line": end_line, "end_column": end_column,
            })
        })
        .collect();
    unreadable(file, items, d.render())
}

/// A file that could not be read at all (`message` says why).
#[must_use]
pub fn unreadable(file: &str, items: Vec<Json>, rendered: String) -> Json {
    json!({
        "file": file,
        "model": Json::Null,
        "flavour": Json::Null,
        "verdict": { "kind": "invalid", "property": Json::Null, "bound": Json::Null, "also": [] },
        "summary": "invalid model",
        "expected": Json::Null,
        "met": false,
        "stats": Json::Null,
        "final_states": Json::Null,
        "warnings": [],
        "coverage": [],
        "trace": Json::Null,
        "diagnostics": { "items": items, "rendered": rendered },
    })
}

/// 1-based line and column (in characters) of a byte offset.
fn place(source: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(source.len());
    while !source.is_char_boundary(at) {
        at -= 1;
    }
    let before = &source[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

fn outcome(m: &Model, o: &Outcome) -> Json {
    let also: Vec<String> = match o {
        Outcome::Failed { also, .. } => also.iter().map(|f| f.name(m)).collect(),
        _ => Vec::new(),
    };
    let (kind, property, bound) = match o {
        Outcome::Holds => ("holds", None, Json::Null),
        Outcome::Failed { failure, .. } => {
            let kind = match failure {
                Failure::Property(_) | Failure::RuntimeError(_) => "violated",
                Failure::Unevaluable(_) => "cannot_evaluate",
                Failure::Unreached(_) => "never_reached",
                Failure::Deadlock => "deadlock",
            };
            let name = (*failure != Failure::Deadlock).then(|| failure.name(m));
            (kind, name, Json::Null)
        }
        Outcome::Incomplete { bound } => {
            let (k, v) = match bound {
                Bound::MaxStates(n) => ("max_states", *n as u64),
                Bound::MaxDepth(d) => ("max_depth", *d as u64),
                Bound::TimeLimit(t) => ("time_limit_s", *t),
                Bound::MaxMemory(mb) => ("max_memory_mib", *mb),
            };
            ("incomplete", None, json!({ "kind": k, "value": v }))
        }
    };
    json!({ "kind": kind, "property": property, "bound": bound, "also": also })
}

fn expected(e: &Expect) -> Json {
    let (kind, property) = match e {
        Expect::Holds => ("holds", None),
        Expect::Violated(n) => ("violated", Some(n.as_str())),
        Expect::Deadlock => ("deadlock", None),
        Expect::Unstated => ("unstated", None),
    };
    json!({ "kind": kind, "property": property })
}

fn warning(m: &Model, w: &Warning) -> Json {
    let (line, column) = w.span.map_or((None, None), |s| {
        let (l, c) = m.line_col_of(s);
        (Some(l), Some(c))
    });
    json!({ "message": w.message, "line": line, "column": column, "hint": w.hint })
}

/// Whether the search covered every state.
fn complete(o: &Outcome) -> bool {
    matches!(
        o,
        Outcome::Holds
            | Outcome::Failed {
                failure: Failure::Unreached(_),
                ..
            }
    )
}

fn final_states(m: &Model, c: &Coverage, complete: bool) -> Json {
    let ends: Vec<Json> = c
        .ends
        .iter()
        .map(|&((g, end), n)| {
            let (kind, detail) = match end {
                End::Done(o) => ("done", o.map(|s| m.symbol(s).to_string())),
                End::Failed(code) => ("failed", Some(m.symbol(code).to_string())),
                End::Crashed => ("crashed", None),
                End::Hung => ("hung", None),
                End::RuntimeError(e) => ("runtime_error", Some(e.message().to_string())),
            };
            json!({
                "group": m.groups[g as usize].name, "end": kind, "detail": detail, "states": n,
            })
        })
        .collect();
    json!({
        "count": c.finals,
        "complete": complete,
        "ends": ends,
        "line": warnings::final_states(m, c, complete),
    })
}

fn coverage(m: &Model, c: &Coverage) -> Json {
    let groups: Vec<Json> = m
        .groups
        .iter()
        .enumerate()
        .filter_map(|(g, group)| {
            let counts = c.ops.get(g)?;
            let p = &group.program;
            let statements: Vec<Json> = p
                .ops
                .iter()
                .enumerate()
                .filter(|&(i, op)| {
                    !matches!(op.kind, crate::ir::OpKind::Jump(_)) && i + 1 < p.ops.len()
                })
                .map(|(i, op)| {
                    let (line, column) = m.line_col_of(op.span);
                    let k = counts[i];
                    let test = p.tests.contains(&(i as u32));
                    let sql = matches!(op.kind, crate::ir::OpKind::Sql { .. });
                    json!({
                        "op": i, "line": line, "column": column,
                        "runs": k.runs, "states": k.states,
                        "if": test.then(|| json!({ "true": k.taken[0], "false": k.taken[1] })),
                        "met_a_row": sql.then_some(k.rows),
                    })
                })
                .collect();
            Some(json!({ "group": group.name, "statements": statements }))
        })
        .collect();
    json!(groups)
}
