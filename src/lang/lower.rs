//! Lowering of the declarations into a resolved `ir::Model`.

use std::collections::HashMap;

use indexmap::IndexSet;

use super::ast::{
    Decl, DeclKind, ExpectDecl, FaultAst, Lit, LivenessForm, Name, ProcessDecl, Setting,
};
use super::diag::Diagnostic;
use super::lower_expr::{self, Place};
use super::lower_workload;
use super::program::{apply_tick, lower_program};
use super::schema::{duplicate, lower_schema};
use super::scope::{Cx, GroupInfo};
use super::suggest;
use super::ParseOptions;
use crate::ir::{
    BinOp, Db, Expect, Expr, Fault, FaultKind, Flavour, Ghost, Group, InitialKey, Isolation, Model, Pid,
    Process, Property, PropertyKind, RedisServer, Settings, Span, StatusKind, UnOp, Value,
};

/// Builds the model; every problem found goes to `diags`.
pub fn lower(
    origin: &str,
    source: &str,
    decls: &[Decl],
    opts: &ParseOptions,
    diags: &mut Vec<Diagnostic>,
) -> Model {
    let mut cx = Cx::new(source, diags);
    let mut model = Model {
        origin: origin.to_string(),
        source: source.to_string(),
        ..Model::default()
    };
    header(&mut cx, decls, &mut model);
    model.tags = super::tags::lower(&mut cx, decls);
    let db = database(&mut cx, decls, opts);
    let settings = settings(&mut cx, decls, opts.db.is_some());
    lower_schema(&mut cx, decls, db.is_some());
    ghosts_and_mutexes(&mut cx, decls);
    redis_servers(&mut cx, decls);
    model.keys = initial_keys(&mut cx, decls);
    lower_workload::declarations(&mut cx, decls);
    let processes: Vec<&ProcessDecl> = declare_groups(&mut cx, decls, &mut model);
    for (g, decl) in processes.iter().enumerate() {
        let arrival = lower_workload::arrival(&mut cx, &decl.arrival);
        cx.workload.arrivals.push(arrival);
        let pool = lower_workload::pool(&mut cx, decl.pool.as_ref());
        cx.workload.group_pool.push(pool);
        let (program, regions) = lower_program(&mut cx, decl);
        cx.groups[g].regions = regions;
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
    super::lower_schedule::schedules(&mut cx, decls, &mut model);
    finish(cx, model, db, settings)
}

/// Moves what the context gathered into the model and converts durations to ticks.
fn finish(
    cx: Cx,
    mut model: Model,
    db: Option<(Flavour, Isolation)>,
    mut settings: Settings,
) -> Model {
    let mut cx = cx;
    if !cx.workload.is_empty() {
        // `simulate` draws lengths in whole ticks: at most a millisecond each.
        cx.durations.push(1);
    }
    let tick = cx.durations.iter().fold(0, |g, &d| gcd(g, d)).max(1);
    model.tick_ms = tick;
    lower_workload::to_ticks(&mut cx.workload, tick);
    model.workload = std::mem::take(&mut cx.workload);
    for group in &mut model.groups {
        apply_tick(&mut group.program.ops, tick);
    }
    for fault in &mut model.faults {
        match &mut fault.kind {
            FaultKind::Pause { max: ms } | FaultKind::Drift { max: ms } => {
                *ms = (u64::from(*ms) / tick) as u32;
            }
            FaultKind::ClockJump { by, .. } => *by = (i64::from(*by) / tick as i64) as i32,
            FaultKind::Restart { down: ms, .. }
            | FaultKind::Partition {
                heal: Some(ms), ..
            } => *ms = (u64::from(*ms) / tick) as u32,
            _ => {}
        }
    }
    for ms in [
        &mut settings.lock_timeout,
        &mut settings.deadlock_timeout,
        &mut settings.innodb_lock_wait_timeout,
    ]
    .into_iter()
    .flatten()
    {
        *ms = (u64::from(*ms) / tick) as u32;
    }
    model.db = db.map(|(flavour, isolation)| Db {
        flavour,
        isolation,
        tables: cx.tables,
        settings,
    });
    for key in &mut model.keys {
        if let Some(ms) = &mut key.ttl {
            *ms = (u64::from(*ms) / tick) as u32;
        }
    }
    model.ghosts = cx.ghosts;
    model.mutexes = cx.mutexes;
    if cx.redis_declared || cx.redis_used {
        model.redis = cx.redis;
    }
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

/// The effective flavour and default isolation: the first `db` line's, or the override's.
/// Sets `cx.flavour`; `None` without a `db` line.
fn database(cx: &mut Cx, decls: &[Decl], opts: &ParseOptions) -> Option<(Flavour, Isolation)> {
    let (flavour, isolation) = decls.iter().find_map(|d| match &d.kind {
        DeclKind::Db { flavour, isolation } => Some((*flavour, *isolation)),
        _ => None,
    })?;
    let flavour = opts.db.or(flavour).unwrap_or(Flavour::Postgres);
    cx.flavour = Some(flavour);
    Some((flavour, isolation.unwrap_or(flavour.default_isolation())))
}

/// The `set` lines, checked against the flavour; durations stay in milliseconds for now.
fn settings(cx: &mut Cx, decls: &[Decl], overridden: bool) -> Settings {
    let mut settings = Settings::default();
    let mut seen = HashMap::new();
    for decl in decls {
        let DeclKind::Setting { name, value } = &decl.kind else {
            continue;
        };
        let Some(flavour) = cx.flavour else {
            let d = Diagnostic::new("a setting needs a database", decl.span, "no `db` line")
                .with_hint("add `db postgres`, `db mysql` or `db mariadb` before the settings");
            cx.report(d);
            return settings;
        };
        let mut key = name.clone();
        key.text = key.text.to_ascii_lowercase();
        if duplicate(cx, &mut seen, &key, "setting") {
            continue;
        }
        if let Some((label, hint)) = misplaced(value, flavour) {
            let via = if overridden {
                " (chosen with --db)"
            } else {
                ""
            };
            let msg = format!(
                "setting `{}` does not apply to {}{via}",
                key.text,
                flavour.name()
            );
            cx.report(Diagnostic::new(msg, name.span, label).with_hint(hint));
            continue;
        }
        let mut ms = |ms: u64| {
            cx.durations.push(ms);
            ms as u32
        };
        match *value {
            Setting::LockTimeout(0) => settings.lock_timeout = None,
            Setting::LockTimeout(t) => settings.lock_timeout = Some(ms(t)),
            Setting::DeadlockTimeout(t) => settings.deadlock_timeout = Some(ms(t)),
            Setting::InnodbLockWaitTimeout(t) => settings.innodb_lock_wait_timeout = Some(ms(t)),
            Setting::InnodbSnapshotIsolation(on) => settings.innodb_snapshot_isolation = on,
            Setting::SqlMode { strict } => settings.non_strict = !strict,
        }
    }
    settings
}

/// Why a setting does not apply to the flavour: the label and the hint; `None` if it does.
fn misplaced(value: &Setting, flavour: Flavour) -> Option<(&'static str, &'static str)> {
    Some(match (value, flavour) {
        (Setting::LockTimeout(_), f) if f.innodb() => (
            "a PostgreSQL setting",
            "InnoDB gives up waiting for a row lock after `innodb_lock_wait_timeout`",
        ),
        (Setting::DeadlockTimeout(_), f) if f.innodb() => (
            "a PostgreSQL setting",
            "InnoDB looks for a deadlock as soon as a transaction waits; there is no delay to set",
        ),
        (Setting::InnodbLockWaitTimeout(_), Flavour::Postgres) => (
            "an InnoDB setting",
            "PostgreSQL bounds a lock wait with `lock_timeout`",
        ),
        (Setting::InnodbSnapshotIsolation(_), Flavour::Postgres) => (
            "a MariaDB setting",
            "PostgreSQL's repeatable_read is snapshot isolation already",
        ),
        _ => return None,
    })
}

/// `model`, `about`, `db`, `timing`, `fairness`: at most once; `model`, `about` and `expect` present.
fn header(cx: &mut Cx, decls: &[Decl], model: &mut Model) {
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
            DeclKind::Db { .. } => "db",
            DeclKind::Timing(timing, split) => {
                if let (false, Some(t)) = (seen.contains_key("timing"), timing) {
                    model.timing = *t;
                    model.split_steps = *split;
                }
                "timing"
            }
            DeclKind::Fairness(fairness) => {
                if let (false, Some(f)) = (seen.contains_key("fairness"), fairness) {
                    model.fairness = *f;
                }
                "fairness"
            }
            DeclKind::AllowFailed(allowed) => {
                model.allow_failed |= *allowed;
                "allow"
            }
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
    if let Some(first) = decls
        .iter()
        .find(|d| matches!(d.kind, DeclKind::Expect { .. }))
    {
        seen.insert("expect", first.span);
    }
    required(cx, decls, &seen);
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
                cx.add_ghost(Ghost {
                    name: name.text.clone(),
                    init: *init,
                });
            }
            DeclKind::Mutex(name) if !duplicate(cx, &mut mutexes, name, "mutex") => {
                cx.add_mutex(name.text.clone());
            }
            _ => {}
        }
    }
}

/// The `redis NAME [with N replicas]` lines; without any, the implicit server `redis`
/// (kept in the model only if something uses Redis).
fn redis_servers(cx: &mut Cx, decls: &[Decl]) {
    let mut seen = HashMap::new();
    for decl in decls {
        if let DeclKind::Redis { name, replicas } = &decl.kind {
            cx.redis_declared = true;
            if !duplicate(cx, &mut seen, name, "Redis server") {
                cx.redis.push(RedisServer {
                    name: name.text.clone(),
                    replicas: *replicas,
                });
            }
        }
    }
    if !cx.redis_declared {
        cx.redis.push(RedisServer {
            name: "redis".into(),
            replicas: 0,
        });
    }
}

/// The `key K = V [ttl D] [on S]` lines, their TTLs still in milliseconds.
fn initial_keys(cx: &mut Cx, decls: &[Decl]) -> Vec<InitialKey> {
    let mut keys: Vec<InitialKey> = Vec::new();
    for decl in decls {
        let DeclKind::InitialKey {
            key,
            value,
            ttl,
            on,
        } = &decl.kind
        else {
            continue;
        };
        cx.redis_used = true;
        let server = match on {
            Some(name) => cx.server(name),
            None => cx.only_server(decl.span, "key lock = 'w0' on NAME"),
        };
        let Some(server) = server else { continue };
        if key.text.contains('$') {
            let d = Diagnostic::new("a declared key cannot hold a `$variable`", key.span, "this key")
                .with_hint("a `key` line names one key: write it out, like `lock:order:42`");
            cx.report(d);
            continue;
        }
        let sym = cx.intern(&key.text);
        if let Some(k) = keys.iter().find(|k| k.key == sym && k.server == server) {
            let line = cx.line(k.span);
            let msg = format!("the key `{}` is declared twice", key.text);
            let d = Diagnostic::new(msg, key.span, "declared again")
                .with_hint(format!("line {line} declares it already, on the same server"));
            cx.report(d);
            continue;
        }
        let ttl = ttl.map(|(ms, _)| ms);
        cx.durations.extend(ttl);
        keys.push(InitialKey {
            server,
            key: sym,
            value: lower_expr::lit_value(cx, &value.kind),
            ttl: ttl.map(|ms| ms as u32),
            span: decl.span,
        });
    }
    keys
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
        cx.add_group(GroupInfo {
            name: p.name.text.clone(),
            count: p.count,
            first,
            regions: Vec::new(),
        });
        groups.push(p);
    }
    model.instances = instances.into_iter().collect();
    groups
}

/// The faults; a pause's longest duration, a drift's offset and a jump's step stay in
/// milliseconds until [`finish`].
fn faults(cx: &mut Cx, decls: &[Decl], model: &mut Model) {
    for decl in decls {
        let DeclKind::Fault {
            kind,
            group,
            budget,
            during,
        } = &decl.kind
        else {
            continue;
        };
        let kind = match *kind {
            FaultAst::Crash => FaultKind::Crash,
            FaultAst::Hang => FaultKind::Hang,
            FaultAst::Pause(ms) => {
                cx.durations.push(ms);
                FaultKind::Pause { max: ms as u32 }
            }
            FaultAst::Drift(ms) => {
                cx.durations.push(ms);
                FaultKind::Drift { max: ms as u32 }
            }
            FaultAst::Timeout => FaultKind::LostReply,
            FaultAst::Failover
            | FaultAst::Jump { .. }
            | FaultAst::Restart { .. }
            | FaultAst::Partition { .. } => {
                let Some(kind) = server_fault(cx, *kind, group, decl.span) else {
                    continue;
                };
                model.faults.push(Fault {
                    kind,
                    group: 0,
                    budget: *budget,
                    during: None,
                    span: decl.span,
                });
                continue;
            }
        };
        let Some(group) = cx.group(group) else {
            continue;
        };
        let during = match during {
            Some(region) => match cx.region(group, region) {
                Some(range) => Some(range),
                None => continue,
            },
            None => None,
        };
        model.faults.push(Fault {
            kind,
            group,
            budget: *budget,
            during,
            span: decl.span,
        });
    }
}

/// The server of `fault jump NAME [replica K]`: it must have a K-th replica.
/// A fault of a Redis server rather than of a process group; `None` when `name` is no server
/// it can strike (reported).
fn server_fault(cx: &mut Cx, kind: FaultAst, name: &super::ast::Name, span: Span) -> Option<FaultKind> {
    Some(match kind {
        FaultAst::Jump { replica, by } => {
            let server = jump_server(cx, name, replica, span)?;
            cx.redis_used = true;
            cx.durations.push(by.unsigned_abs());
            FaultKind::ClockJump {
                server,
                replica,
                by: by as i32,
            }
        }
        FaultAst::Restart { down } => {
            let server = redis_server(cx, name)?;
            cx.durations.extend((down > 0).then_some(down));
            FaultKind::Restart {
                server,
                down: down as u32,
            }
        }
        FaultAst::Partition { heal } => {
            let server = redis_server(cx, name)?;
            cx.durations.extend(heal);
            FaultKind::Partition {
                server,
                heal: heal.map(|ms| ms as u32),
            }
        }
        _ => FaultKind::Failover {
            server: failover_server(cx, name)?,
        },
    })
}

/// The server `name` names (reported if none), which the model now uses.
fn redis_server(cx: &mut Cx, name: &super::ast::Name) -> Option<u16> {
    let server = cx.server(name)?;
    cx.redis_used = true;
    Some(server)
}

fn jump_server(cx: &mut Cx, name: &super::ast::Name, replica: u8, span: Span) -> Option<u16> {
    let server = cx.server(name)?;
    let has = cx.redis[usize::from(server)].replicas;
    if replica > has {
        let msg = format!("`{}` has no replica {replica}", name.text);
        let hint = match has {
            0 => format!(
                "`fault jump {} by D` steps its own clock; a replica's clock needs one, like \
                 `redis {} with 1 replica`",
                name.text, name.text
            ),
            n => format!("its replicas are numbered 1 to {n}"),
        };
        let d = Diagnostic::new(msg, span, "no such replica").with_hint(hint);
        cx.diags.push(d);
        return None;
    }
    Some(server)
}

/// The server of `fault failover NAME`: it must have a replica to promote.
fn failover_server(cx: &mut Cx, name: &super::ast::Name) -> Option<u16> {
    let server = cx.server(name)?;
    if cx.redis[usize::from(server)].replicas == 0 {
        let msg = format!("`{}` has no replica to fail over to", name.text);
        let hint = if cx.redis_declared {
            format!(
                "a failover promotes a replica: declare `redis {} with 1 replica`",
                name.text
            )
        } else {
            "a failover promotes a replica: declare the server with one, like \
             `redis cache with 1 replica`"
                .to_string()
        };
        let d = Diagnostic::new(msg, name.span, "no replica").with_hint(hint);
        cx.report(d);
        return None;
    }
    Some(server)
}

fn properties(cx: &mut Cx, decls: &[Decl], model: &mut Model) {
    let mut seen = HashMap::new();
    for decl in decls {
        if let DeclKind::Property {
            kind,
            name,
            expr,
            then,
        } = &decl.kind
        {
            let expr = lower_expr::lower(cx, &mut Place::Property, expr);
            let then = then
                .as_ref()
                .map(|q| lower_expr::lower(cx, &mut Place::Property, q));
            if !duplicate(cx, &mut seen, name, "property") {
                model.properties.push(Property {
                    name: name.text.clone(),
                    kind: *kind,
                    expr,
                    then,
                    span: decl.span,
                });
            }
        } else if let DeclKind::Liveness {
            form,
            name,
            group,
            index,
        } = &decl.kind
        {
            let lowered = liveness(cx, *form, group, index.as_ref());
            if let (false, Some((kind, expr, then))) =
                (duplicate(cx, &mut seen, name, "property"), lowered)
            {
                model.properties.push(Property {
                    name: name.text.clone(),
                    kind,
                    expr,
                    then,
                    span: decl.span,
                });
            }
        }
    }
}

/// `terminates G` as `eventually count(G, done) + count(G, failed) + count(G, crashed) +
/// count(G, hung) = N`; `no_starvation G[i]` as `leads_to status(G[i], waiting) => not …`.
fn liveness(
    cx: &mut Cx,
    form: LivenessForm,
    group: &Name,
    index: Option<&Lit>,
) -> Option<(PropertyKind, Expr, Option<Expr>)> {
    match form {
        LivenessForm::Terminates => {
            let g = cx.group(group)?;
            let count = cx.groups[g].count;
            let finished = [
                StatusKind::Done,
                StatusKind::Failed,
                StatusKind::Crashed,
                StatusKind::Hung,
            ]
            .map(|status| Expr::Count {
                group: g as u16,
                status,
            })
            .into_iter()
            .reduce(|a, b| Expr::Binary(BinOp::Add, Box::new(a), Box::new(b)))?;
            let n = Expr::Lit(Value::Int(count as i64));
            let all = Expr::Binary(BinOp::Eq, Box::new(finished), Box::new(n));
            Some((PropertyKind::Eventually, all, None))
        }
        LivenessForm::NoStarvation => {
            let pid = lower_expr::process(cx, group, index)?;
            let waiting = Expr::Status {
                pid,
                status: StatusKind::Waiting,
            };
            let not_waiting = Expr::Unary(UnOp::Not, Box::new(waiting.clone()));
            Some((PropertyKind::LeadsTo, waiting, Some(not_waiting)))
        }
    }
}

/// An `expect` line: the declaration, its flavours (if it names any), the expectation.
type ExpectLine<'a> = (&'a Decl, Option<&'a [(Flavour, Span)]>, &'a ExpectDecl);

/// The expectation for the effective flavour, and the flavours the file states expectations
/// for. One line without flavours, or lines naming each flavour at most once.
fn expect(cx: &mut Cx, decls: &[Decl], model: &mut Model) {
    let lines: Vec<ExpectLine> = decls
        .iter()
        .filter_map(|d| match &d.kind {
            DeclKind::Expect {
                expect: ExpectDecl::Schedule { .. },
                ..
            } => None,
            DeclKind::Expect { flavours, expect } => Some((d, flavours.as_deref(), expect)),
            _ => None,
        })
        .collect();
    let Some(&(first, ..)) = lines.first() else {
        return;
    };
    let per_flavour = lines.iter().any(|(_, flavours, _)| flavours.is_some());
    let mut chosen = None;
    let mut seen: HashMap<Flavour, Span> = HashMap::new();
    for &(decl, flavours, e) in &lines {
        let expect = expectation(cx, model, e);
        if !per_flavour {
            if chosen.is_some() {
                let line = cx.line(first.span);
                let d = Diagnostic::new("a second `expect` line", decl.span, "repeated").with_hint(
                    format!(
                        "a model has one `expect` line, or one per flavour \
                         (`expect mysql: holds`); the first is on line {line}"
                    ),
                );
                cx.report(d);
            } else {
                chosen = Some((decl.span, expect));
            }
            continue;
        }
        let Some(flavours) = flavours else {
            let d = Diagnostic::new(
                "an `expect` without a flavour",
                decl.span,
                "for which flavour?",
            )
            .with_hint(
                "when expectations name flavours, every one does: `expect postgres, mysql: holds`",
            );
            cx.report(d);
            continue;
        };
        for &(flavour, span) in flavours {
            if let Some(earlier) = seen.get(&flavour) {
                let line = cx.line(*earlier);
                let msg = format!("a second expectation for {}", flavour.name());
                let d = Diagnostic::new(msg, span, "repeated").with_hint(format!(
                    "the expectation for {} is on line {line}",
                    flavour.name()
                ));
                cx.report(d);
                continue;
            }
            seen.insert(flavour, span);
            model.expect_flavours.push(flavour);
            if cx.flavour == Some(flavour) {
                chosen = Some((decl.span, expect.clone()));
            }
        }
    }
    if per_flavour && cx.flavour.is_none() {
        let d = Diagnostic::new(
            "an expectation per flavour needs a database",
            first.span,
            "no `db` line",
        )
        .with_hint("add `db postgres`, `db mysql` or `db mariadb`, or drop the flavours");
        cx.report(d);
    }
    let (span, expect) = chosen.unwrap_or((first.span, Expect::Unstated));
    model.expect_span = span;
    model.expect = expect;
}

fn expectation(cx: &mut Cx, model: &Model, e: &ExpectDecl) -> Expect {
    match e {
        ExpectDecl::Schedule { .. } => Expect::Unstated,
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
    }
}
