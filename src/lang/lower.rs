//! Lowering of the declarations into a resolved `ir::Model`.

use std::collections::HashMap;

use indexmap::IndexSet;

use super::ast::{Decl, DeclKind, ExpectDecl, ProcessDecl};
use super::diag::Diagnostic;
use super::lower_expr::{self, Place};
use super::program::{apply_tick, lower_program};
use super::schema::{duplicate, lower_schema};
use super::scope::{Cx, GroupInfo};
use super::suggest;
use crate::ir::{
    Db, Expect, Fault, FaultKind, Flavour, Ghost, Group, Isolation, Model, Pid, Process, Property,
    Span,
};

/// Builds the model; every problem found goes to `diags`.
pub fn lower(origin: &str, source: &str, decls: &[Decl], diags: &mut Vec<Diagnostic>) -> Model {
    let mut cx = Cx::new(source, diags);
    let mut model = Model {
        origin: origin.to_string(),
        source: source.to_string(),
        ..Model::default()
    };
    let has_db = header(&mut cx, decls, &mut model);
    lower_schema(&mut cx, decls, has_db);
    ghosts_and_mutexes(&mut cx, decls);
    let processes: Vec<&ProcessDecl> = declare_groups(&mut cx, decls, &mut model);
    for (g, decl) in processes.iter().enumerate() {
        let program = lower_program(&mut cx, decl);
        model.groups.push(Group {
            name: decl.name.text.clone(),
            count: decl.count,
            program,
            first: Pid(cx.groups[g].first as u16),
            span: decl.header,
        });
    }
    faults(&mut cx, decls, &mut model);
    properties(&mut cx, decls, &mut model);
    expect(&mut cx, decls, &mut model);
    finish(cx, model, has_db)
}

/// Moves what the context gathered into the model and converts durations to ticks.
fn finish(cx: Cx, mut model: Model, has_db: bool) -> Model {
    let tick = cx.durations.iter().fold(0, |g, &d| gcd(g, d)).max(1);
    model.tick_ms = tick;
    for group in &mut model.groups {
        apply_tick(&mut group.program.ops, tick);
    }
    model.db = has_db.then_some(Db {
        flavour: Flavour::Postgres,
        isolation: Isolation::ReadCommitted,
        tables: cx.tables,
    });
    model.ghosts = cx.ghosts;
    model.mutexes = cx.mutexes;
    model.symbols = cx.symbols.into_iter().collect();
    model
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `model`, `about`, `expect`, `db`, `timing`: present (the first three), at most once.
fn header(cx: &mut Cx, decls: &[Decl], model: &mut Model) -> bool {
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for decl in decls {
        let what = match &decl.kind {
            DeclKind::Model(name) if !seen.contains_key("model") => {
                model.name.clone_from(name);
                "model"
            }
            DeclKind::About(text) if !seen.contains_key("about") => {
                model.about.clone_from(text);
                "about"
            }
            DeclKind::Model(_) => "model",
            DeclKind::About(_) => "about",
            DeclKind::Expect(_) => "expect",
            DeclKind::Db => "db",
            DeclKind::Timing => "timing",
            _ => continue,
        };
        if let Some(first) = seen.get(what) {
            let line = cx.line(*first);
            let d = Diagnostic::new(format!("a second `{what}` line"), decl.span, "repeated")
                .with_hint(format!(
                    "a model has one `{what}` line; the first is on line {line}"
                ));
            cx.report(d);
        } else {
            seen.insert(what, decl.span);
        }
    }
    required(cx, decls, &seen);
    seen.contains_key("db")
}

/// Reports a missing `model`, `about` or `expect`, and a `model` that is not first.
fn required(cx: &mut Cx, decls: &[Decl], seen: &HashMap<&str, Span>) {
    let start = decls.first().map_or(Span::default(), |d| d.span);
    match seen.get("model") {
        None => cx.report(
            Diagnostic::new("missing `model`", start, "expected `model \"title\"` first")
                .with_hint("a model file starts with `model \"title\"`"),
        ),
        Some(span) if span.start != start.start => cx.report(
            Diagnostic::new("`model` is not the first line", *span, "should come first")
                .with_hint("move `model \"title\"` to the top of the file"),
        ),
        Some(_) => {}
    }
    if !seen.contains_key("about") {
        let at = seen.get("model").copied().unwrap_or(start);
        let d = Diagnostic::new("missing `about`", at, "expected `about \"...\"` after this")
            .with_hint("`about \"...\"` states the lesson the model teaches");
        cx.report(d);
    }
    if !seen.contains_key("expect") {
        let end = cx.source.trim_end().len();
        let d = Diagnostic::new("missing `expect`", Span::new(end, end), "the file ends here")
            .with_hint("say what the checker must find: `expect holds`, `expect violated NAME` or `expect deadlock`");
        cx.report(d);
    }
}

fn ghosts_and_mutexes(cx: &mut Cx, decls: &[Decl]) {
    let (mut ghosts, mut mutexes) = (HashMap::new(), HashMap::new());
    for decl in decls {
        match &decl.kind {
            DeclKind::Ghost { name, init } if !duplicate(cx, &mut ghosts, name, "ghost") => {
                cx.ghosts.push(Ghost {
                    name: name.text.clone(),
                    init: *init,
                });
            }
            DeclKind::Mutex(name) if !duplicate(cx, &mut mutexes, name, "mutex") => {
                cx.mutexes.push(name.text.clone());
            }
            _ => {}
        }
    }
}

/// Assigns pids and instances to every group; returns the groups' declarations in order.
fn declare_groups<'a>(cx: &mut Cx, decls: &'a [Decl], model: &mut Model) -> Vec<&'a ProcessDecl> {
    let mut seen = HashMap::new();
    let mut instances: IndexSet<String> = IndexSet::new();
    let mut groups = Vec::new();
    for decl in decls {
        let DeclKind::Process(p) = &decl.kind else {
            continue;
        };
        if duplicate(cx, &mut seen, &p.name, "process group") {
            continue;
        }
        if model.processes.len() + p.count > usize::from(u16::MAX) {
            let d = Diagnostic::new("too many processes", p.header, "one group too many");
            cx.report(d);
            continue;
        }
        let group = groups.len();
        let first = model.processes.len();
        for index in 0..p.count {
            let instance = match &p.on {
                Some(on) => on.text.clone(),
                None if p.count == 1 => p.name.text.clone(),
                None => format!("{}[{index}]", p.name.text),
            };
            let (instance, _) = instances.insert_full(instance);
            model.processes.push(Process {
                group,
                index,
                instance,
            });
        }
        cx.groups.push(GroupInfo {
            name: p.name.text.clone(),
            count: p.count,
            first,
        });
        groups.push(p);
    }
    model.instances = instances.into_iter().collect();
    groups
}

fn faults(cx: &mut Cx, decls: &[Decl], model: &mut Model) {
    for decl in decls {
        if let DeclKind::Fault { group, budget } = &decl.kind {
            if let Some(group) = cx.group(group) {
                model.faults.push(Fault {
                    kind: FaultKind::Crash,
                    group,
                    budget: *budget,
                    span: decl.span,
                });
            }
        }
    }
}

fn properties(cx: &mut Cx, decls: &[Decl], model: &mut Model) {
    let mut seen = HashMap::new();
    for decl in decls {
        if let DeclKind::Property { kind, name, expr } = &decl.kind {
            let expr = lower_expr::lower(cx, &mut Place::Property, expr);
            if !duplicate(cx, &mut seen, name, "property") {
                model.properties.push(Property {
                    name: name.text.clone(),
                    kind: *kind,
                    expr,
                    span: decl.span,
                });
            }
        }
    }
}

fn expect(cx: &mut Cx, decls: &[Decl], model: &mut Model) {
    let Some((decl, expect)) = decls.iter().find_map(|d| match &d.kind {
        DeclKind::Expect(e) => Some((d, e)),
        _ => None,
    }) else {
        return;
    };
    model.expect_span = decl.span;
    model.expect = match expect {
        ExpectDecl::Holds => Expect::Holds,
        ExpectDecl::Deadlock => Expect::Deadlock,
        ExpectDecl::Violated(name) => {
            let known: Vec<&str> = model.properties.iter().map(|p| p.name.as_str()).collect();
            if !known.contains(&name.text.as_str()) {
                let none =
                    "no property is declared: add `invariant NAME: expr` or `final NAME: expr`";
                let hint = suggest::hint(&name.text, known.iter().copied(), "properties are", none);
                let msg = format!("unknown property \"{}\"", name.text);
                cx.report(Diagnostic::new(msg, name.span, "no such property").with_hint(hint));
            }
            Expect::Violated(name.text.clone())
        }
    };
}
