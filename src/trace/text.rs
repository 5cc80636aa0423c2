//! The trace as a timeline a person reads: one row per step, at most 100 columns.

use super::describe::{describe, wait_name};
use super::Trace;
use crate::explore::Failure;
use crate::ir::Model;
use crate::world::process::Status;

/// The widest line the renderer writes.
pub const WIDTH: usize = 100;
const WORLD: usize = 30;
const MIN_PROCESS: usize = 26;

/// Renders the steps as a table: a column per process when they fit, else one row per step
/// with the actor named.
#[must_use]
pub fn render(m: &Model, t: &Trace) -> String {
    let n = m.processes.len();
    let per_process = (WIDTH - 2 - WORLD).saturating_sub(2 * n) / n.max(1);
    let mut out = if per_process >= MIN_PROCESS {
        columns(m, t, per_process)
    } else {
        list(m, t)
    };
    out.push_str(&ending(m, t));
    out
}

fn columns(m: &Model, t: &Trace, w: usize) -> String {
    let n = m.processes.len();
    let mut widths = vec![2];
    widths.extend(std::iter::repeat_n(w, n));
    widths.push(WIDTH - 2 - (w + 2) * n - 2);
    let mut head = vec!["#".to_string()];
    head.extend((0..n).map(|p| m.process_name(crate::ir::value::Pid(p as u16))));
    head.push("world".into());
    let mut out = grid_row(&widths, &head);
    for (i, step) in t.steps.iter().enumerate() {
        let d = describe(m, step);
        let mut cells = vec![number(t, i)];
        cells.extend(std::iter::repeat_n(String::new(), n));
        let mut world = d.world;
        match d.actor {
            Some(p) => cells[1 + p.index()] = d.doing,
            None => world = join(&d.doing, &world),
        }
        cells.push(mark(m, t, i, world));
        out.push_str(&loop_marker(t, i));
        out.push_str(&grid_row(&widths, &cells));
    }
    out
}

fn list(m: &Model, t: &Trace) -> String {
    let name_w = (0..m.processes.len())
        .map(|p| m.process_name(crate::ir::value::Pid(p as u16)).len())
        .max()
        .unwrap_or(3)
        .max(3);
    let doing_w = (WIDTH - 3 - name_w - 4) * 3 / 5;
    let widths = [3, name_w, doing_w, WIDTH - 3 - name_w - doing_w - 6];
    let mut out = grid_row(
        &widths,
        &[" #".into(), "who".into(), "step".into(), "world".into()],
    );
    for (i, step) in t.steps.iter().enumerate() {
        let d = describe(m, step);
        let who = d
            .actor
            .map_or_else(|| "env".to_string(), |p| m.process_name(p));
        let cells = [
            format!("{:>2}", number(t, i)),
            who,
            d.doing,
            mark(m, t, i, d.world),
        ];
        out.push_str(&grid_row(&widths, &cells));
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

/// Where a model has Redis, every step starts its world cell with the time and who holds
/// which lock, so expiry and takeover can be followed step by step.
fn status_line(m: &Model, t: &Trace, i: usize, world: &str) -> String {
    if m.redis.is_empty() {
        return world.to_string();
    }
    let step = &t.steps[i];
    // Group the servers per (key, holder): `lock@n1,n2=client[0]`.
    let mut groups: Vec<(crate::ir::value::Sym, crate::ir::value::Pid, Vec<u16>)> =
        Vec::new();
    for &(server, key, p) in &step.holders {
        match groups.iter_mut().find(|(k, h, _)| *k == key && *h == p) {
            Some((_, _, servers)) => servers.push(server),
            None => groups.push((key, p, vec![server])),
        }
    }
    let locks: Vec<String> = groups
        .iter()
        .map(|(key, p, servers)| {
            let at = if m.redis.len() > 1 {
                let names: Vec<&str> = servers
                    .iter()
                    .map(|&s| m.redis[s as usize].name.as_str())
                    .collect();
                format!("@{}", names.join(","))
            } else {
                String::new()
            };
            format!("{}{at}={}", m.symbol(*key), m.process_name(*p))
        })
        .collect();
    let holders = if locks.is_empty() {
        "no holder".to_string()
    } else {
        locks.join(" ")
    };
    let head = format!("[{} {holders}]", super::describe::ms(m, step.time));
    join(&head, world)
}

/// Marks the last step with the property it breaks.
fn mark(m: &Model, t: &Trace, i: usize, world: String) -> String {
    let world = status_line(m, t, i, &world);
    if i + 1 != t.steps.len() || t.loop_start.is_some() {
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

/// After the table: for a deadlock, who waits for whom; for a lasso, where it loops back.
fn ending(m: &Model, t: &Trace) -> String {
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
