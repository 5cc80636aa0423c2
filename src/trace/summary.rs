//! The story of a trace in at most six lines, from its events: who took which lock, the
//! faults and expiries, the moment two holders overlap or a write rests on a stale read, a
//! deadlock, and the property broken with its values.

use super::belief::Notes;
use super::describe::{ms, row_name};
use super::holders::{key_name, Held};
use super::series::merge_keeping_subjects as merge;
use super::Trace;
use crate::exec::eval::{eval, Scope};
use crate::exec::observe::Event;
use crate::explore::Failure;
use crate::ir::Expr;
use crate::ir::Model;

/// At most this many lines.
pub const LINES: usize = 6;

/// A line of the story and how much it matters (higher is kept first when there are too
/// many): 1 a lock taken (a row lock only in a deadlock's story), 2 an error, 3 a fault, an expiry, an overlap, a stale write,
/// 4 a deadlock broken, 5 the failure.
struct Line {
    weight: u8,
    text: String,
}

/// The summary's lines, in the order things happened.
#[must_use]
pub fn lines(m: &Model, t: &Trace, held: &[Vec<Held>], notes: &Notes) -> Vec<String> {
    let mut story: Vec<Line> = Vec::new();
    let mut before: &[Held] = &[];
    // Row locks come and go with every statement; they tell the story of a deadlock only.
    let deadlocks = t.failure == Some(Failure::Deadlock)
        || t.steps
            .iter()
            .any(|s| s.events.iter().any(|e| matches!(e, Event::Deadlock { .. })));
    for (i, step) in t.steps.iter().enumerate() {
        let at = ms(m, step.time);
        for e in &step.events {
            if let Some(line) = event_line(m, step.choice.actor(), e, &at) {
                story.push(line);
            }
        }
        for h in held[i]
            .iter()
            .filter(|h| !before.contains(h) && (deadlocks || !h.row))
        {
            let believer = notes.locks_after[i]
                .iter()
                .find(|n| n.who != h.who && n.believes == format!("it holds {}", h.what));
            let (weight, text) = match believer {
                Some(n) => (
                    3,
                    format!(
                        "{} takes {} at {at} while {} believes it still holds it",
                        m.process_name(h.who),
                        h.what,
                        m.process_name(n.who)
                    ),
                ),
                None => (1, format!("{} takes {} at {at}", m.process_name(h.who), h.what)),
            };
            story.push(Line { weight, text });
        }
        for n in &notes.shown[i] {
            if n.row.is_none() && n.believes.starts_with("its SET") {
                story.push(Line {
                    weight: 3,
                    text: n.text(m),
                });
            }
            let wrote = n.row.is_some_and(|(table, key)| {
                step.choice.actor() == Some(n.who) && writes(step, table, key)
            });
            if wrote {
                let (table, key) = n.row.expect("checked above");
                let row = row_name(m, table, key);
                let read = n.believes.strip_prefix(&format!("{row} ")).unwrap_or(&n.believes);
                story.push(Line {
                    weight: 3,
                    text: format!(
                        "{} writes {row} believing {read}; {}",
                        m.process_name(n.who),
                        n.truth
                    ),
                });
            }
        }
        before = &held[i];
    }
    if let Some(text) = failure_line(m, t) {
        story.push(Line { weight: 5, text });
    }
    fit(story)
}

/// Whether a step commits a change to the row, or runs a write on its table that changed a
/// row (inside a transaction: the change is pending until COMMIT).
fn writes(step: &super::Step, table: u16, key: crate::ir::value::Value) -> bool {
    use crate::exec::observe::Reply;
    use crate::ir::SqlStmt;
    step.events.iter().any(|e| match e {
        Event::RowCommitted { table: t, key: k, .. } => (*t, *k) == (table, key),
        Event::Sql {
            stmt:
                SqlStmt::Update { table: t, .. }
                | SqlStmt::Insert { table: t, .. }
                | SqlStmt::Delete { table: t, .. },
            reply: Reply::Count(n),
            ..
        } => *t == table && *n > 0,
        _ => false,
    })
}

/// The story's line for one event, if it tells one.
fn event_line(m: &Model, actor: Option<crate::ir::value::Pid>, e: &Event, at: &str) -> Option<Line> {
    let (weight, text) = match e {
        Event::Paused { pid, paused: true } => {
            (3, format!("⚡ {} pauses (stop-the-world) at {at}", m.process_name(*pid)))
        }
        Event::Crashed { pid } => (3, format!("⚡ {} crashes at {at}", m.process_name(*pid))),
        Event::Hung { pid } => (3, format!("⚡ {} hangs at {at}", m.process_name(*pid))),
        Event::ReplyLost { pid } => (
            3,
            format!("⚡ a reply misses {}'s timeout at {at}", m.process_name(*pid)),
        ),
        Event::Drift { pid, .. } => {
            (3, format!("⚡ {}'s clock drifts at {at}", m.process_name(*pid)))
        }
        Event::ClockJump {
            server,
            replica,
            by,
        } => (
            3,
            format!("⚡ {} at {at}", super::describe::jumped(m, *server, *replica, *by)),
        ),
        Event::ServerRestarted { server, .. } => (
            3,
            format!(
                "⚡ {} restarts empty at {at}",
                m.redis[*server as usize].name
            ),
        ),
        Event::Failover { server, .. } => (
            3,
            format!("⚡ {}'s primary fails over at {at}", m.redis[*server as usize].name),
        ),
        Event::KeyExpired { server, key } => {
            (3, format!("⌛ {} expires at {at}", key_name(m, *server, *key)))
        }
        Event::Uncaught { code } => {
            let who = actor.map_or_else(|| "a process".into(), |p| m.process_name(p));
            (2, format!("{who} fails with ERROR {} at {at}", m.symbol(*code)))
        }
        Event::Deadlock { cycle, victim } => {
            let who: Vec<String> = cycle.iter().map(|e| m.process_name(e.waiter)).collect();
            (
                4,
                format!(
                    "deadlock at {at}: {} wait for each other; {} is rolled back",
                    who.join(" and "),
                    m.process_name(*victim)
                ),
            )
        }
        _ => return None,
    };
    Some(Line { weight, text })
}

/// The broken property in words, with the values it reads at the end.
fn failure_line(m: &Model, t: &Trace) -> Option<String> {
    let f = t.failure?;
    let text = match f {
        Failure::Property(i) | Failure::Unevaluable(i) => {
            let p = &m.properties[i];
            let written = m
                .source
                .get(p.span.start as usize..p.span.end as usize)
                .unwrap_or("");
            let expr = written.split_once(':').map_or(written, |(_, e)| e).trim();
            let expr = expr.split_whitespace().collect::<Vec<_>>().join(" ");
            let values = leaves(m, &p.expr, &t.end);
            let values = if values.is_empty() {
                String::new()
            } else {
                format!(" — {}", values.join(", "))
            };
            match t.loop_start {
                Some(k) => format!(
                    "✗ {}: from step {} on the steps repeat forever without `{expr}`",
                    p.name,
                    k + 1
                ),
                None => format!("✗ {}: `{expr}` is false{values}", p.name),
            }
        }
        Failure::Deadlock => match &t.cycle {
            Some(cycle) => {
                let waits: Vec<String> = cycle
                    .iter()
                    .map(|e| format!("{} waits for {}", m.process_name(e.waiter), m.process_name(e.holder)))
                    .collect();
                format!("✗ deadlock: {}; no process can move", waits.join(", "))
            }
            None => "✗ deadlock: no process can move, and not all have finished".into(),
        },
        Failure::RuntimeError(_) => format!("✗ {}", f.name(m)),
        Failure::Unreached(_) => return None,
    };
    Some(text)
}

/// The values of the state a property reads: ghosts, cells, sums, keys.
fn leaves(m: &Model, e: &Expr, s: &crate::world::State) -> Vec<String> {
    let sc = Scope::global(m, s);
    let mut out: Vec<String> = Vec::new();
    e.visit(&mut |x| {
        let name = match x {
            Expr::Ghost(g) => m.ghosts[*g as usize].name.clone(),
            Expr::Cell { table, pk, column } => {
                let t = &m.db.as_ref().expect("cells need a db").tables[*table as usize];
                format!("{}[{}].{}", t.name, m.show(pk), t.columns[*column as usize].name)
            }
            Expr::Sum { table, column } => {
                let t = &m.db.as_ref().expect("sums need a db").tables[*table as usize];
                format!("sum({}.{})", t.name, t.columns[*column as usize].name)
            }
            Expr::Key { key, server } if m.redis.len() > 1 => {
                let on = &m.redis[usize::from(*server)].name;
                format!("redis({} on {on})", m.symbol(*key))
            }
            Expr::Key { key, .. } => format!("redis({})", m.symbol(*key)),
            Expr::Count { group, status } => {
                format!("count({}, {})", m.groups[*group as usize].name, status.name())
            }
            Expr::Rows { table, filter } => {
                let t = &m.db.as_ref().expect("rows need a db").tables[*table as usize];
                let cond = if filter.is_some() { " where …" } else { "" };
                format!("count({}{cond})", t.name)
            }
            _ => return,
        };
        if let Ok(v) = eval(x, &sc) {
            let line = format!("{name} = {}", m.show(&v));
            if !out.contains(&line) {
                out.push(line);
            }
        }
    });
    out
}

/// At most [`LINES`] lines: phrases that differ in one word merged, then the lightest lines
/// dropped, earliest first, until the story fits.
fn fit(story: Vec<Line>) -> Vec<String> {
    let all: Vec<String> = story.iter().map(|l| l.text.clone()).collect();
    let mut merged: Vec<Line> = Vec::new();
    let mut k = 0;
    while k < all.len() {
        let mut run = 1;
        while k + run < all.len() && merge(&all[k..=k + run]).len() == 1 {
            run += 1;
        }
        let text = merge(&all[k..k + run]).swap_remove(0);
        let weight = story[k..k + run].iter().map(|l| l.weight).max().unwrap_or(0);
        merged.push(Line { weight, text });
        k += run;
    }
    while merged.len() > LINES {
        let lightest = merged.iter().map(|l| l.weight).min().unwrap_or(0);
        let at = merged.iter().position(|l| l.weight == lightest).unwrap_or(0);
        merged.remove(at);
    }
    merged.into_iter().map(|l| l.text).collect()
}
