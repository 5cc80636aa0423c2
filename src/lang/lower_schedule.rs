//! `schedule` blocks and `expect schedule` lines into [`crate::ir::schedule::Schedule`]s: names
//! resolved, claims kept for the flavour being lowered (docs/language.md, "Schedules").

use std::collections::HashMap;

use super::ast::{ClaimAst, ClaimAstKind, Decl, DeclKind, ExpectDecl, Name};
use super::diag::Diagnostic;
use super::lower_expr::{self, lit_value, Place};
use super::scope::Cx;
use super::suggest;
use crate::ir::schedule::{Claim, ClaimKind, Schedule};
use crate::ir::{Flavour, Model, Pid};

/// Lowers every schedule and the claims this flavour expects of each; adds the flavours the
/// claims name to the model's runs.
pub fn schedules(cx: &mut Cx, decls: &[Decl], model: &mut Model) {
    let mut index: HashMap<String, usize> = HashMap::new();
    for decl in decls {
        let DeclKind::Schedule(s) = &decl.kind else { continue };
        if let Some(&first) = index.get(&s.name.text) {
            let line = cx.line(model.schedules[first].span);
            let msg = format!("a second schedule named \"{}\"", s.name.text);
            let d = Diagnostic::new(msg, s.name.span, "repeated")
                .with_hint(format!("the first is on line {line}; give this one its own name"));
            cx.report(d);
            continue;
        }
        index.insert(s.name.text.clone(), model.schedules.len());
        model.schedules.push(Schedule {
            name: s.name.text.clone(),
            span: decl.span,
            steps: s.steps.clone(),
            claims: Vec::new(),
        });
    }
    let mut seen: HashMap<(usize, Option<Flavour>), usize> = HashMap::new();
    for decl in decls {
        let DeclKind::Expect {
            flavours,
            expect: ExpectDecl::Schedule { name, claims },
        } = &decl.kind
        else {
            continue;
        };
        let Some(&k) = index.get(&name.text) else {
            unknown_schedule(cx, model, name);
            continue;
        };
        let lowered: Vec<Claim> = claims.iter().map(|c| claim(cx, model, c)).collect();
        let for_flavours: Vec<Option<Flavour>> = match flavours {
            None => vec![None],
            Some(list) => list.iter().map(|&(f, _)| Some(f)).collect(),
        };
        for f in for_flavours {
            if let Some(earlier) = seen.insert((k, f), decl.span.start as usize) {
                let line = cx.line(crate::ir::Span::new(earlier, earlier));
                let d = Diagnostic::new("a second expectation for this schedule", decl.span, "repeated")
                    .with_hint(format!("the claims about `{}` are on line {line}", name.text));
                cx.report(d);
                continue;
            }
            if let Some(f) = f {
                if !model.expect_flavours.contains(&f) {
                    model.expect_flavours.push(f);
                }
            }
            if f.is_none() || f == cx.flavour {
                model.schedules[k].claims.clone_from(&lowered);
            }
        }
    }
}

fn unknown_schedule(cx: &mut Cx, model: &Model, name: &Name) {
    let known: Vec<&str> = model.schedules.iter().map(|s| s.name.as_str()).collect();
    let none = "no schedule is declared: add `schedule NAME { T1 T2 … }`";
    let hint = suggest::hint(&name.text, known.iter().copied(), "schedules are", none);
    let msg = format!("unknown schedule \"{}\"", name.text);
    cx.report(Diagnostic::new(msg, name.span, "no such schedule").with_hint(hint));
}

fn claim(cx: &mut Cx, model: &Model, c: &ClaimAst) -> Claim {
    let text = cx
        .source
        .get(c.span.start as usize..c.span.end as usize)
        .unwrap_or("")
        .to_string();
    let kind = match &c.kind {
        ClaimAstKind::Final(e) => ClaimKind::Final(lower_expr::lower(cx, &mut Place::Property, e)),
        ClaimAstKind::Waits { who, at } => ClaimKind::Waits {
            pid: process(cx, model, who),
            at: *at,
        },
        ClaimAstKind::Gets { who, code, at } => ClaimKind::Gets {
            pid: process(cx, model, who),
            code: cx.intern(code),
            at: *at,
        },
        ClaimAstKind::Reads { who, rows, at } => ClaimKind::Reads {
            pid: process(cx, model, who),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|l| lit_value(cx, &l.kind)).collect())
                .collect(),
            at: *at,
        },
        ClaimAstKind::Ends { who, outcome } => ClaimKind::Ends {
            pid: process(cx, model, who),
            outcome: outcome.as_deref().map(|o| cx.intern(o)),
        },
    };
    Claim {
        text,
        span: c.span,
        kind,
    }
}

/// The process a claim names, as a trace names it (`T1`, `buyer[0]`).
fn process(cx: &mut Cx, model: &Model, who: &Name) -> Pid {
    let pids = (0..model.processes.len()).map(|i| Pid(i as u16));
    if let Some(pid) = pids.clone().find(|&p| model.process_name(p) == who.text) {
        return pid;
    }
    let names: Vec<String> = pids.map(|p| model.process_name(p)).collect();
    let hint = suggest::hint(
        &who.text,
        names.iter().map(String::as_str),
        "the processes are",
        "the model has no process",
    );
    let msg = format!("no process is named \"{}\"", who.text);
    cx.report(Diagnostic::new(msg, who.span, "no such process").with_hint(hint));
    Pid(0)
}
