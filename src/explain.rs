//! `interlock explain`: a model read aloud before it is checked — its lesson, its world, its
//! processes as the steps the checker interleaves, the environment's moves (time, timers,
//! faults), its properties and expectations, and the rules of docs/semantics.md it reaches.
//! Pure: it reads the IR and its source text, never searches.

mod rules;
mod steps;

pub(crate) use rules::Uses;

use crate::ir::{self, FaultKind, Model, PropertyKind, Timing};
use crate::verdict::wrap;
use rules::RULES;

/// The explanation of a model, given once per flavour it is checked on (the first is shown
/// whole; the others add their rules and expectation).
#[must_use]
pub(crate) fn render(variants: &[&Model]) -> String {
    let m = variants[0];
    let mut out = format!("{}\n{}\n", m.origin, clean(&m.name));
    if !m.about.is_empty() {
        out.push('\n');
        out.push_str(&wrap(&words(&m.about), "  ", "  "));
    }
    out.push_str("\nWorld\n");
    world(variants, &mut out);
    let src = Source::new(&m.source);
    out.push_str("\nProcesses\n");
    let groups: String = m.groups.iter().map(|g| steps::group(m, &src, g)).collect();
    out.push_str(&wrap(&legend(&groups), "  ", "    "));
    out.push_str(&groups);
    out.push_str("\nEnvironment\n");
    environment(m, &src, &mut out);
    out.push_str("\nProperties\n");
    properties(m, &src, &mut out);
    schedules(m, &src, &mut out);
    expectations(variants, &src, &mut out);
    out
}

/// The model's source cut into lines once, so that finding a span's line is a binary search
/// (a program of many operations in a large file stays linear).
pub(crate) struct Source<'a> {
    lines: Vec<&'a str>,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

impl<'a> Source<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source {
            lines: text.split('\n').collect(),
            starts,
        }
    }

    /// The 1-based line a span starts on.
    fn line(&self, span: ir::Span) -> usize {
        self.starts.partition_point(|&s| s <= span.start as usize)
    }

    /// The text of 1-based line `n`, without its line ending.
    fn text(&self, n: usize) -> &'a str {
        let l = self
            .lines
            .get(n.wrapping_sub(1))
            .copied()
            .unwrap_or_default();
        l.strip_suffix('\r').unwrap_or(l)
    }
}

/// What the marks in front of the steps mean, for those that occur.
fn legend(groups: &str) -> String {
    let mut parts = vec![
        "▸ a step (one visible operation and the local code around it): the checker tries \
         every order of the steps."
            .to_string(),
    ];
    for (sign, meaning) in [
        ("⏱", "time passes (another process may run)."),
        ("↻", "a loop."),
        ("×", "a `for`: its body once per item, as if written out."),
        ("⟳", "a timer of the process (a watchdog) starts or stops."),
    ] {
        if groups.contains(sign) {
            parts.push(format!("{sign} {meaning}"));
        }
    }
    parts.join(" ")
}

/// Whitespace runs made one space, as a paragraph reads.
fn words(text: &str) -> String {
    clean(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Text with control characters made harmless, for a terminal.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '·' } else { c })
        .collect()
}

/// The source text of a span on one line (a declaration written over several lines is joined).
fn quote(m: &Model, span: ir::Span) -> String {
    let (a, b) = (span.start as usize, span.end as usize);
    let text = m.source.get(a..b.max(a)).unwrap_or_default();
    words(text)
}

/// One item: `  Lnn  text`, wrapped under itself.
fn item(out: &mut String, line: usize, text: &str) {
    let head = format!("  L{line:<4}");
    out.push_str(&wrap(text, &head, &" ".repeat(head.len())));
}

fn world(variants: &[&Model], out: &mut String) {
    let m = variants[0];
    if let Some(db) = &m.db {
        let levels: Vec<String> = variants
            .iter()
            .filter_map(|v| v.db.as_ref())
            .map(|d| {
                let default = if d.isolation == d.flavour.default_isolation() {
                    " (its default)"
                } else {
                    ""
                };
                format!(
                    "{} at {}{default}",
                    d.flavour.name(),
                    level_name(d.isolation)
                )
            })
            .collect();
        let each = if levels.len() > 1 { ", a run each" } else { "" };
        let line = format!("database: {}{each}", levels.join("; "));
        out.push_str(&wrap(&line, "  ", "    "));
        for t in &db.tables {
            let cols: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
            let rows = match t.rows.len() {
                1 => "1 row".to_string(),
                n => format!("{n} rows"),
            };
            let mut line = format!("table {} ({}): {rows}", t.name, cols.join(", "));
            for ix in &t.indexes {
                let on: Vec<&str> = ix
                    .columns
                    .iter()
                    .map(|&c| t.columns[c].name.as_str())
                    .collect();
                let kind = if ix.unique { "unique index" } else { "index" };
                line.push_str(&format!("; {kind} ({})", on.join(", ")));
            }
            out.push_str(&wrap(&clean(&line), "  ", "    "));
        }
        for s in settings(m, &db.settings) {
            out.push_str(&wrap(&s, "  ", "    "));
        }
    }
    redis(m, out);
    for g in &m.ghosts {
        out.push_str(&format!("  ghost {} = {}\n", clean(&g.name), g.init));
    }
    for x in &m.mutexes {
        out.push_str(&format!(
            "  mutex {}: a copy on each service instance\n",
            clean(x)
        ));
    }
    for p in &m.workload.pools {
        let n = match p.size {
            1 => "1 connection".to_string(),
            n => format!("{n} connections"),
        };
        out.push_str(&format!("  pool {}: {n}\n", clean(&p.name)));
    }
}

/// The Redis servers, those alike (the same number of replicas) on one line.
fn redis(m: &Model, out: &mut String) {
    let mut i = 0;
    while i < m.redis.len() {
        let n = m.redis[i].replicas;
        let run = m.redis[i..].iter().take_while(|r| r.replicas == n).count();
        let names: Vec<String> = m.redis[i..i + run].iter().map(|r| clean(&r.name)).collect();
        let replicas = match n {
            0 => String::new(),
            1 => ", with a replica each".to_string(),
            n => format!(", with {n} replicas each"),
        };
        let servers = if run == 1 { "server" } else { "servers" };
        let line = format!("redis {servers} {}{replicas}", names.join(", "));
        out.push_str(&wrap(&line, "  ", "    "));
        i += run;
    }
    for k in &m.keys {
        let ttl = k.ttl.map_or(", no TTL".to_string(), |t| {
            format!(
                ", expiring in {}",
                crate::trace::describe::ms(m, u64::from(t))
            )
        });
        let on = if m.redis.len() > 1 {
            format!(" on {}", clean(&m.redis[usize::from(k.server)].name))
        } else {
            String::new()
        };
        let line = format!(
            "key {} = {} at the start{on}{ttl}",
            m.symbol(k.key),
            m.show(&k.value)
        );
        out.push_str(&wrap(&line, "  ", "    "));
    }
}

fn level_name(l: ir::Isolation) -> &'static str {
    match l {
        ir::Isolation::ReadUncommitted => "READ UNCOMMITTED",
        ir::Isolation::ReadCommitted => "READ COMMITTED",
        ir::Isolation::RepeatableRead => "REPEATABLE READ",
        ir::Isolation::Serializable => "SERIALIZABLE",
    }
}

/// The server settings the model changes, as `set` lines would say them.
fn settings(m: &Model, s: &ir::Settings) -> Vec<String> {
    let ms = |t: u32| u64::from(t) * m.tick_ms;
    let mut out = Vec::new();
    if let Some(t) = s.lock_timeout {
        out.push(format!("set lock_timeout = {} ms", ms(t)));
    }
    if let Some(t) = s.deadlock_timeout {
        out.push(format!("set deadlock_timeout = {} ms", ms(t)));
    }
    if let Some(t) = s.innodb_lock_wait_timeout {
        out.push(format!("set innodb_lock_wait_timeout = {} ms", ms(t)));
    }
    if s.innodb_snapshot_isolation {
        out.push("set innodb_snapshot_isolation = on".to_string());
    }
    if s.non_strict {
        out.push("set sql_mode = '' (not strict)".to_string());
    }
    out
}

fn environment(m: &Model, src: &Source, out: &mut String) {
    let u = Uses::of(m);
    let time = match m.timing {
        Timing::Bounded => {
            "timing bounded: when no process can step, time passes to the next deadline (a \
             delay's end, a TTL, a timeout)"
        }
        Timing::Async => {
            "timing async: time may pass to the next deadline at any moment, even while \
             processes could step"
        }
    };
    out.push_str(&wrap(time, "  ", "    "));
    if m.split_steps {
        let split = "split: a step ends at each reply; the code after it runs in the process's \
                     next step, so a pause or another process can come between";
        out.push_str(&wrap(split, "  ", "    "));
    }
    let mut timers = Vec::new();
    if u.watchdog {
        timers.push("watchdog renewals");
    }
    if m.db
        .as_ref()
        .is_some_and(|d| d.flavour == ir::Flavour::Postgres)
        && u.contends()
    {
        timers.push("PostgreSQL's deadlock checks");
    }
    if !timers.is_empty() {
        let t = format!("timers run when due: {}", timers.join(", "));
        out.push_str(&wrap(&t, "  ", "    "));
    }
    if u.replicas {
        out.push_str("  each replica applies the primary's next write at a moment it chooses\n");
    }
    if m.faults.is_empty() {
        out.push_str("  no faults: every process runs to its end unharmed\n");
    }
    for f in &m.faults {
        item(out, src.line(f.span), &quote(m, f.span));
        out.push_str(&wrap(fault_meaning(f.kind), "        ", "        "));
    }
}

fn fault_meaning(k: FaultKind) -> &'static str {
    match k {
        FaultKind::Crash => {
            "a live process may crash with its instance: its transaction rolls back, its row \
             locks and mutexes go, its Redis keys stay until their TTL"
        }
        FaultKind::Pause { .. } => {
            "a process may freeze (a GC pause) while servers' clocks and TTLs run on; its \
             watchdog stands still; it resumes unaware"
        }
        FaultKind::Hang => {
            "a process may stop for good with its connections open: its transaction, row locks, \
             keys and watchdog live on"
        }
        FaultKind::Drift { .. } => "a process's own clock() may run ahead of or behind real time",
        FaultKind::LostReply => {
            "a plain Redis command may take effect while its reply is lost: the client gets \
             'TIMEOUT'"
        }
        FaultKind::ClockJump { by, .. } if by < 0 => {
            "a clock of the server steps back: its keys live that much longer (RS-3)"
        }
        FaultKind::ClockJump { .. } => {
            "a clock of the server jumps forward: its keys expire that much earlier (RS-3)"
        }
        FaultKind::Restart { .. } => {
            "the server restarts without persistence and comes back empty: every key is gone, \
             on its replicas too (RF-6, RL-6)"
        }
        FaultKind::Partition { .. } => {
            "the clients lose their path to the server: a command times out with no effect, \
             or, the one in flight when it struck, with its effect (RL-2, RL-4)"
        }
        FaultKind::Failover { .. } => {
            "the primary fails and a replica is promoted: writes it had not applied are lost \
             (RF-2)"
        }
    }
}

fn properties(m: &Model, src: &Source, out: &mut String) {
    for p in &m.properties {
        item(out, src.line(p.span), &quote(m, p.span));
        out.push_str(&wrap(property_meaning(p.kind), "        ", "        "));
    }
    let built_in = "built in: no deadlock (a state where nothing can move and a process has not \
                    finished) and no_runtime_error (no process stops on a mistake in its code)";
    out.push_str(&wrap(built_in, "  ", "    "));
}

fn property_meaning(k: PropertyKind) -> &'static str {
    match k {
        PropertyKind::Invariant => "must hold in every reachable state",
        PropertyKind::Final => "must hold when every process has finished",
        PropertyKind::Eventually => "must come true at some point of every fair run",
        PropertyKind::AlwaysEventually => "must come true again and again on every fair run",
        PropertyKind::LeadsTo => {
            "every state where the first holds is followed by one where \
                                  the second does, on every fair run"
        }
        PropertyKind::Reachable => {
            "some reachable state must satisfy it (so a proof of the \
                                    rest is not vacuous)"
        }
    }
}

/// The model's chosen interleavings, for `interlock run`.
fn schedules(m: &Model, src: &Source, out: &mut String) {
    if m.schedules.is_empty() {
        return;
    }
    out.push_str("\nSchedules (interlock run follows each, step by step)\n");
    for s in &m.schedules {
        let steps: Vec<String> = s.steps.iter().map(|(t, _)| clean(t)).collect();
        let text = format!("schedule {}: {}", clean(&s.name), steps.join(", "));
        item(out, src.line(s.span), &text);
    }
}

/// The expectation of each flavour, then the rules that apply on any, each marked with the
/// flavours it applies on when not on all.
fn expectations(variants: &[&Model], src: &Source, out: &mut String) {
    let several = variants.len() > 1;
    out.push_str(if several {
        "\nExpected\n"
    } else {
        "\nExpected: "
    });
    for m in variants {
        if let (Some(db), true) = (&m.db, several) {
            out.push_str(&format!("  on {}: ", db.flavour.name()));
        }
        out.push_str(&expect_text(&m.expect));
        if m.expect != ir::Expect::Unstated {
            out.push_str(&format!(" (L{})", src.line(m.expect_span)));
        }
        out.push('\n');
    }
    out.push_str("\nRules that apply (docs/semantics.md)\n");
    let uses: Vec<Uses> = variants.iter().map(|m| Uses::of(m)).collect();
    let mut any = false;
    for r in RULES {
        let on: Vec<&str> = variants
            .iter()
            .zip(&uses)
            .filter(|(_, u)| (r.applies)(u))
            .filter_map(|(m, _)| m.db.as_ref().map(|d| d.flavour.name()))
            .collect();
        if !uses.iter().any(|u| (r.applies)(u)) {
            continue;
        }
        any = true;
        let text = if several && on.len() < variants.len() {
            format!("{} ({})", r.text, on.join(", "))
        } else {
            r.text.to_string()
        };
        let head = format!("  {:<13}", r.ids);
        let rest = " ".repeat(16);
        if head.chars().count() > 15 {
            out.push_str(&format!("  {}\n", r.ids));
            out.push_str(&wrap(&text, &rest, &rest));
        } else {
            out.push_str(&wrap(&text, &head, &rest));
        }
    }
    if !any {
        out.push_str("  only those of every model: steps, time and waiting\n");
    }
}

fn expect_text(e: &ir::Expect) -> String {
    match e {
        ir::Expect::Holds => "holds".to_string(),
        ir::Expect::Violated(n) => format!("violated {}", clean(n)),
        ir::Expect::Deadlock => "deadlock".to_string(),
        ir::Expect::Unstated => "nothing stated".to_string(),
    }
}
