//! The trace as a Graphviz `digraph`: the counterexample as a path of states (one edge per
//! row of the text trace, folded the same way; each state says who holds what and what no
//! longer is so), the failing state marked, a lasso's way back dashed; for a deadlock, the
//! wait-for graph with its cycle in red. Only reads the trace.

use super::belief;
use super::describe::wait_name;
use super::holders;
use super::rows::{self, Row};
use super::Trace;
use crate::exec::waits::Edge;
use crate::ir::Model;

/// The graph, as `dot -Tsvg` reads it.
#[must_use]
pub fn render(m: &Model, t: &Trace) -> String {
    let held = holders::after_each(m, t);
    let notes = belief::notes(m, t);
    let rows = rows::rows(m, t, &notes.shown, false);
    let mut out = String::from(
        "digraph trace {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  \
         edge [fontname=\"monospace\", fontsize=9];\n",
    );
    out.push_str("  s0 [label=\"start\"];\n");
    for (k, r) in rows.iter().enumerate() {
        let mut label = vec![format!("after step {}", step_range(r))];
        label.extend(held[r.last].iter().map(|h| format!("{} holds {}", m.process_name(h.who), h.what)));
        label.extend(belief::words(m, &r.notes).into_iter().map(|b| format!("⚠ {b}")));
        let last = k + 1 == rows.len();
        let mark = match (last, t.failure) {
            (true, Some(f)) => {
                label.push(format!("✗ {}", f.name(m)));
                ", color=red, penwidth=2"
            }
            _ => "",
        };
        out.push_str(&format!("  s{} [label=\"{}\"{mark}];\n", k + 1, quote(&label.join("\n"))));
        out.push_str(&format!("  s{k} -> s{} [label=\"{}\"];\n", k + 1, quote(&edge_label(m, r))));
    }
    if let Some(start) = t.loop_start {
        let from = rows.iter().position(|r| r.first == start).unwrap_or(0);
        out.push_str(&format!(
            "  s{} -> s{from} [style=dashed, label=\"forever\"];\n",
            rows.len()
        ));
    }
    if !t.waits.is_empty() {
        out.push_str(&waits(m, t));
    }
    out.push_str("}\n");
    out
}

/// `3`, or `3–5` for a folded row.
fn step_range(r: &Row) -> String {
    if r.first == r.last {
        (r.first + 1).to_string()
    } else {
        format!("{}–{}", r.first + 1, r.last + 1)
    }
}

/// Who did what on the row, and what changed.
fn edge_label(m: &Model, r: &Row) -> String {
    let who = r.actor.map_or_else(|| "environment".to_string(), |p| m.process_name(p));
    let lines = r.lines.as_ref().map_or(String::new(), |l| format!(" {l}"));
    let mut text = format!("{who}{lines}: {}", r.doing);
    for w in std::iter::once(&r.world).chain(&r.wide).filter(|w| !w.is_empty()) {
        text.push('\n');
        text.push_str(w);
    }
    text
}

/// The wait-for graph at the end: who waits for whom, for what; the cycle's edges red.
fn waits(m: &Model, t: &Trace) -> String {
    let in_cycle = |e: &Edge| t.cycle.as_ref().is_some_and(|c| c.contains(e));
    let mut out = String::from(
        "  subgraph cluster_waits {\n    label=\"wait-for graph at the end\";\n    \
         node [shape=ellipse];\n",
    );
    let mut named: Vec<String> = Vec::new();
    for e in &t.waits {
        for p in [e.waiter, e.holder] {
            let name = m.process_name(p);
            if !named.contains(&name) {
                out.push_str(&format!("    \"w {0}\" [label=\"{0}\"];\n", quote(&name)));
                named.push(name);
            }
        }
    }
    for e in &t.waits {
        let red = if in_cycle(e) { ", color=red, fontcolor=red" } else { "" };
        out.push_str(&format!(
            "    \"w {}\" -> \"w {}\" [label=\"waits for {}\"{red}];\n",
            quote(&m.process_name(e.waiter)),
            quote(&m.process_name(e.holder)),
            quote(&wait_name(m, e.wait))
        ));
    }
    out.push_str("  }\n");
    out
}

/// Text inside a DOT double-quoted string: `"` and `\` escaped, a newline `\n`.
pub(super) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}
