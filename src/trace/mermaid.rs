//! The trace as a Mermaid `sequenceDiagram`: a participant per process, then the database,
//! each Redis server and each mutex; a message per row of the text trace (folded the same
//! way), from the process to what it spoke to; notes for what changed, waits, faults and
//! expiries (worded as the text trace words them: ⚡, ⌛), false beliefs (⚠) and the broken
//! property (✗). Only reads the trace.

use super::belief;
use super::rows::{self, Row};
use super::Trace;
use crate::exec::observe::Event;
use crate::explore::Failure;
use crate::ir::value::Pid;
use crate::ir::Model;

/// The diagram, as Mermaid reads it (`mermaid.render`, a Markdown ```` ```mermaid ```` block).
#[must_use]
pub fn render(m: &Model, t: &Trace) -> String {
    let notes = belief::notes(m, t);
    let rows = rows::rows(m, t, &notes.shown, false);
    let parts = Participants::of(m);
    let mut out = String::from("sequenceDiagram\n");
    for (id, name) in &parts.all {
        out.push_str(&format!("    participant {id} as {}\n", escape(name)));
    }
    let mut in_loop = false;
    for r in &rows {
        if t.loop_start == Some(r.first) {
            out.push_str("    loop forever\n");
            in_loop = true;
        }
        out.push_str(&row(m, t, &parts, r));
    }
    if in_loop {
        out.push_str("    end\n");
    }
    if let Some(f) = t.failure {
        out.push_str(&format!("    Note over {}: {}\n", parts.span(), escape(&ending(m, t, f))));
    }
    out
}

/// Who appears, with the ids the diagram uses: `P0…` processes, `DB`, `R0…` Redis servers,
/// `M0…` mutexes.
struct Participants {
    all: Vec<(String, String)>,
}

impl Participants {
    fn of(m: &Model) -> Self {
        let mut all: Vec<(String, String)> = (0..m.processes.len())
            .map(|i| (format!("P{i}"), m.process_name(Pid(i as u16))))
            .collect();
        if let Some(db) = &m.db {
            all.push(("DB".into(), db.flavour.name().to_string()));
        }
        for (i, r) in m.redis.iter().enumerate() {
            all.push((format!("R{i}"), r.name.clone()));
        }
        for (i, name) in m.mutexes.iter().enumerate() {
            all.push((format!("M{i}"), format!("mutex {name}")));
        }
        Participants { all }
    }

    /// `first,last`: a note over every participant.
    fn span(&self) -> String {
        let first = &self.all[0].0;
        let last = &self.all[self.all.len() - 1].0;
        if first == last {
            first.clone()
        } else {
            format!("{first},{last}")
        }
    }
}

/// What the row's steps spoke to, in order of first contact: the database, Redis servers,
/// mutexes.
fn targets(t: &Trace, r: &Row) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in t.steps[r.first..=r.last].iter().flat_map(|s| &s.events) {
        let id = match e {
            Event::Sql { .. } => "DB".to_string(),
            Event::Redis { server, .. } => format!("R{server}"),
            Event::Lock { mutex } | Event::Unlock { mutex } => format!("M{mutex}"),
            _ => continue,
        };
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

fn row(m: &Model, t: &Trace, parts: &Participants, r: &Row) -> String {
    let mut out = String::new();
    let world = [r.world.clone()]
        .into_iter()
        .chain(r.wide.iter().cloned())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("<br/>");
    let lines = r.lines.as_ref().map_or(String::new(), |l| format!("{l} "));
    match r.actor {
        Some(p) => {
            let me = format!("P{}", p.index());
            let to = targets(t, r);
            match to.first() {
                Some(first) => {
                    out.push_str(&format!("    {me}->>{first}: {}\n", escape(&format!("{lines}{}", r.doing))));
                    if !world.is_empty() {
                        let over = to.last().map_or(first.clone(), |l| format!("{first},{l}"));
                        let over = if to.len() == 1 { first.clone() } else { over };
                        out.push_str(&format!("    Note over {over}: {}\n", escape(&world)));
                    }
                }
                None => {
                    let text = [format!("{lines}{}", r.doing), world]
                        .into_iter()
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join("<br/>");
                    out.push_str(&format!("    Note over {me}: {}\n", escape(&text)));
                }
            }
            for b in belief::words(m, &r.notes) {
                out.push_str(&format!("    Note over {me}: {}\n", escape(&format!("⚠ {b}"))));
            }
        }
        None => {
            let text = [r.doing.clone(), world]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("<br/>");
            out.push_str(&format!("    Note over {}: {}\n", parts.span(), escape(&text)));
        }
    }
    out
}

/// The last note: the broken property, and for a deadlock who waits for whom.
fn ending(m: &Model, t: &Trace, f: Failure) -> String {
    let mut text = match f {
        Failure::Deadlock => "✗ deadlock".to_string(),
        _ => format!("✗ {}", f.name(m)),
    };
    if t.loop_start.is_some() {
        text.push_str(" — the loop repeats forever");
    }
    for line in super::text::ending(m, t).lines().filter(|l| l.starts_with("  ")) {
        text.push_str("<br/>");
        text.push_str(line.trim());
    }
    text
}

/// Text as a Mermaid message: `;` and `#` would end or start something, `<` and `>` are
/// HTML to it (only the `<br/>` this module writes stays a line break).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for part in s.split("<br/>").enumerate() {
        if part.0 > 0 {
            out.push_str("<br/>");
        }
        for c in part.1.chars() {
            match c {
                '#' => out.push_str("#35;"),
                ';' => out.push_str("#59;"),
                '<' => out.push_str("#lt;"),
                '>' => out.push_str("#gt;"),
                '\n' => out.push_str("<br/>"),
                c => out.push(c),
            }
        }
    }
    out
}
