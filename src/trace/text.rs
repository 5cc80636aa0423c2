//! The trace as a timeline a person reads: one row per step, at most 100 columns.

use super::describe::wait_name;
use super::holders::{self, Held};
use super::rows::{self, Row};
use super::{belief, summary, Trace};
use crate::ir::value::Pid;
use crate::explore::Failure;
use crate::exec::observe::{Event, Reply};
use crate::ir::Model;
use crate::world::process::Status;

/// The widest line the renderer writes.
pub const WIDTH: usize = 100;
const WORLD: usize = 30;
const MIN_PROCESS: usize = 26;

/// Renders the trace: the summary, then the steps as a table (a column per process when
/// they fit, else one row per step with the actor named), quiet runs folded.
#[must_use]
pub fn render(m: &Model, t: &Trace) -> String {
    render_with(m, t, false)
}

/// As [`render`]; `full` keeps one row per step.
#[must_use]
pub fn render_with(m: &Model, t: &Trace, full: bool) -> String {
    let held = holders::after_each(m, t);
    let notes = belief::notes(m, t);
    let rows = rows::rows(m, t, &notes.shown, full);
    let mut out = String::new();
    for line in summary::lines(m, t, &held, &notes) {
        out.push_str(&indented(&line, "  ", "    "));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let n = m.processes.len();
    let number_w = rows.iter().map(|r| label(t, r).chars().count()).max().unwrap_or(1).max(2);
    let per_process = (WIDTH - number_w - WORLD).saturating_sub(2 * n) / n.max(1);
    let table = Table { m, t, held: &held, number_w };
    out.push_str(&if per_process >= MIN_PROCESS {
        table.columns(&rows, per_process)
    } else {
        table.list(&rows)
    });
    out.push_str(&ending(m, t));
    out
}

/// What the table's rows are drawn from.
struct Table<'a> {
    m: &'a Model,
    t: &'a Trace,
    held: &'a [Vec<Held>],
    number_w: usize,
}

impl Table<'_> {
    fn columns(&self, rows: &[Row], w: usize) -> String {
        let (m, t) = (self.m, self.t);
        let n = m.processes.len();
        let mut widths = vec![self.number_w];
        widths.extend(std::iter::repeat_n(w, n));
        widths.push(WIDTH - self.number_w - (w + 2) * n - 2);
        let mut head = vec!["#".to_string()];
        head.extend((0..n).map(|p| m.process_name(Pid(p as u16))));
        head.push("world".into());
        let mut out = grid_row(&widths, &head);
        for (k, r) in rows.iter().enumerate() {
            let mut cells = vec![label(t, r)];
            cells.extend(std::iter::repeat_n(String::new(), n));
            let mut world = r.world.clone();
            match r.actor {
                Some(p) => cells[1 + p.index()] = doing(r),
                None => world = join(&r.doing, &world),
            }
            cells.push(mark(m, t, r, world));
            out.push_str(&loop_marker(t, r.first));
            out.push_str(&grid_row(&widths, &cells));
            out.push_str(&self.after(rows, k));
        }
        out
    }

    fn list(&self, rows: &[Row]) -> String {
        let (m, t) = (self.m, self.t);
        let name_w = (0..m.processes.len())
            .map(|p| m.process_name(Pid(p as u16)).chars().count())
            .max()
            .unwrap_or(3)
            .max(3);
        let doing_w = (WIDTH - self.number_w - name_w - 6) * 3 / 5;
        let widths = [
            self.number_w,
            name_w,
            doing_w,
            WIDTH - self.number_w - name_w - doing_w - 6,
        ];
        let head = ["#".into(), "who".into(), "step".into(), "world".into()];
        let mut out = grid_row(&widths, &head);
        for (k, r) in rows.iter().enumerate() {
            let who = r.actor.map_or_else(|| "env".to_string(), |p| m.process_name(p));
            let cells = [label(t, r), who, doing(r), mark(m, t, r, r.world.clone())];
            out.push_str(&loop_marker(t, r.first));
            out.push_str(&grid_row(&widths, &cells));
            out.push_str(&self.after(rows, k));
        }
        out
    }

    /// The lines under row `k`: its false beliefs, then who holds what when that changed.
    fn after(&self, rows: &[Row], k: usize) -> String {
        let (m, r) = (self.m, &rows[k]);
        let pad = " ".repeat(self.number_w + 2);
        let mut out = String::new();
        for line in &r.wide {
            out.push_str(&indented(&format!("↯ {line}"), &pad, &format!("{pad}  ")));
        }
        for note in belief::words(m, &r.notes) {
            out.push_str(&indented(&format!("⚠ {note}"), &pad, &format!("{pad}  ")));
        }
        for said in server_said(m, self.t, r) {
            out.push_str(&indented(&format!("server: {said}"), &pad, &format!("{pad}  ")));
        }
        let was: &[Held] = k.checked_sub(1).map_or(&[], |j| &self.held[rows[j].last]);
        let now = &self.held[r.last];
        if now != was {
            // Where no time passes in the whole trace, the time says nothing.
            let line = if self.t.end_time() == 0 {
                format!("held: {}", holders::words(now, m))
            } else {
                let time = super::describe::ms(m, self.t.steps[r.last].time);
                format!("⏱ {time} · {}", holders::words(now, m))
            };
            out.push_str(&indented(&line, &pad, &format!("{pad}  ")));
        }
        out
    }
}

/// The errors the row's statements got, as the engine's client prints them, each once.
fn server_said(m: &Model, t: &Trace, r: &Row) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in t.steps[r.first..=r.last].iter().flat_map(|s| &s.events) {
        let Event::Sql {
            reply: Reply::Error(refusal),
            ..
        } = e
        else {
            continue;
        };
        if let Some(line) = super::words::line(m, refusal) {
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// A row's number: `6`, or `6–15` for folded steps (see [`number`]).
fn label(t: &Trace, r: &Row) -> String {
    if r.first == r.last {
        number(t, r.first)
    } else {
        format!("{}–{}", r.first + 1, r.last + 1)
    }
}

/// What the row's actor did, after the model line it is written on.
fn doing(r: &Row) -> String {
    match &r.lines {
        Some(l) => format!("{l} {}", r.doing),
        None => r.doing.clone(),
    }
}

/// `text` wrapped to the table's width, the first line after `first`, the rest after `rest`.
fn indented(text: &str, first: &str, rest: &str) -> String {
    let w = WIDTH - rest.chars().count();
    let mut out = String::new();
    for (i, line) in wrap(text, w).into_iter().enumerate() {
        out.push_str(if i == 0 { first } else { rest });
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A row's number: its step, or for a schedule's trace the schedule step that ran it, and
/// `↳` for a step that followed on its own (a waiter resuming, a due check, time passing).
pub(crate) fn number(t: &Trace, i: usize) -> String {
    match t.causes.get(i) {
        None => (i + 1).to_string(),
        Some(super::schedule::Cause::Scheduled(k)) => k.to_string(),
        Some(_) => "↳".into(),
    }
}

/// Marks the last row with the property it breaks.
fn mark(m: &Model, t: &Trace, r: &Row, world: String) -> String {
    if r.last + 1 != t.steps.len() || t.loop_start.is_some() {
        return world;
    }
    match t.failure {
        Some(f @ (Failure::Property(_) | Failure::RuntimeError(_))) => {
            join(&world, &format!("✗ {}", f.name(m)))
        }
        Some(Failure::Unreached(_)) | None => world,
        Some(f @ Failure::Unevaluable(_)) => {
            join(&world, &format!("✗ {} cannot be evaluated", f.name(m)))
        }
        Some(Failure::Deadlock) => join(&world, "✗ deadlock"),
    }
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}, {b}"),
    }
}

/// The line that opens a liveness counterexample's loop.
fn loop_marker(t: &Trace, i: usize) -> String {
    if t.loop_start == Some(i) {
        "── from here the steps repeat forever ──\n".to_string()
    } else {
        String::new()
    }
}

/// After the table: for a deadlock, who waits for whom (a `  A waits for …` line each); for a
/// lasso, where it loops back.
pub(crate) fn ending(m: &Model, t: &Trace) -> String {
    if let Some(start) = t.loop_start {
        return format!("↻ back to step {} — forever\n", start + 1);
    }
    if t.failure != Some(Failure::Deadlock) {
        return String::new();
    }
    let (head, edges) = match &t.cycle {
        Some(cycle) => ("wait-for cycle:\n", cycle.as_slice()),
        None => (
            "no process can move and no time can pass:\n",
            t.waits.as_slice(),
        ),
    };
    let mut out = head.to_string();
    for e in edges {
        let crashed = if t.end.procs[e.holder.index()].status == Status::Crashed {
            " (crashed)"
        } else {
            ""
        };
        out.push_str(&format!(
            "  {} waits for {} ← held by {}{crashed}\n",
            m.process_name(e.waiter),
            wait_name(m, e.wait),
            m.process_name(e.holder)
        ));
    }
    if t.cycle.is_none() {
        for (pid, key, value, ttl) in crate::exec::waits::ownerless_awaits(m, &t.end) {
            let frees = if ttl.is_some() {
                "only its TTL frees it"
            } else {
                "it has no TTL: nothing will free it"
            };
            let line = format!(
                "{} waits for {} ← it holds {} (no process's); {frees}",
                m.process_name(pid),
                m.symbol(key),
                m.show(&value)
            );
            out.push_str(&indented(&line, "  ", "    "));
        }
    }
    for (pid, server, need, has) in crate::exec::waits::replica_waits(m, &t.end) {
        let name = m.redis.get(usize::from(server)).map_or("redis", |r| r.name.as_str());
        let line = format!(
            "{} waits for {need} {} of {name} to have its writes ← {name} has {has}; a WAIT with \
             timeout 0 never gives up",
            m.process_name(pid),
            if need == 1 { "replica" } else { "replicas" }
        );
        out.push_str(&indented(&line, "  ", "    "));
    }
    for p in 0..t.end.procs.len() {
        let pid = crate::ir::value::Pid(p as u16);
        if let Some((r, held)) = crate::exec::capacity::waiting_for(m, &t.end, pid) {
            let what = r.describe(m);
            let names: Vec<String> = held.iter().map(|&h| m.process_name(h)).collect();
            out.push_str(&format!(
                "  {} waits for {what} ← held by {}\n",
                m.process_name(pid),
                names.join(", ")
            ));
        }
    }
    out
}

/// One table row; cells wrap at word boundaries and the row grows to the tallest cell.
pub(crate) fn grid_row(widths: &[usize], cells: &[String]) -> String {
    let wrapped: Vec<Vec<String>> = cells.iter().zip(widths).map(|(c, &w)| wrap(c, w)).collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let mut out = String::new();
    for line in 0..height {
        let mut s = String::new();
        for (k, (cell, &w)) in wrapped.iter().zip(widths).enumerate() {
            let text = cell.get(line).map_or("", String::as_str);
            s.push_str(text);
            if k + 1 < widths.len() {
                let pad = w.saturating_sub(text.chars().count()) + 2;
                s.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    }
    out
}

/// Splits text into lines of at most `w` characters, at spaces where possible.
fn wrap(text: &str, w: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        while word.chars().count() > w {
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            let head: String = word.chars().take(w).collect();
            word = word.chars().skip(w).collect();
            lines.push(head);
        }
        let needed = cur.chars().count() + usize::from(!cur.is_empty()) + word.chars().count();
        if needed > w && !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_keeps_every_line_within_the_width() {
        let text = "UPDATE sku SET stock = $stock - 1 WHERE id = 1 AND version = $v → 1 row";
        for w in [5, 10, 26, 40] {
            let lines = wrap(text, w);
            assert!(
                lines.iter().all(|l| l.chars().count() <= w),
                "{w}: {lines:?}"
            );
            assert_eq!(lines.join(" ").replace(' ', ""), text.replace(' ', ""));
        }
    }
}
