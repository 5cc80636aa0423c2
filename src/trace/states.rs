//! The whole state graph of a small model as a Graphviz `digraph`, with a counterexample's
//! path marked in it (TLC's `-dump dot`, with the path): every state a number, a final state
//! (every process finished) a double circle, a state that breaks a property or deadlocks a
//! red box saying what; the path's states boxes saying who holds what after which step, its
//! transitions red and numbered. Reads the graph and the trace; computes nothing.

use super::dot::quote;
use super::{belief, holders, token, Trace};
use crate::explore::graph::StateGraph;
use crate::ir::Model;

/// The most states a graph is drawn with: past a few hundred, nobody reads it.
pub const MAX_STATES: usize = 300;

/// The graph, or `None` when the trace's path does not run through it (it always does for
/// a counterexample of the same model: a test checks every built-in one).
#[must_use]
pub fn render(m: &Model, g: &StateGraph, t: Option<&Trace>) -> Option<String> {
    let path = match t {
        Some(t) => Some(on_path(g, t)?),
        None => None,
    };
    let mut out = format!(
        "digraph states {{\n  label=\"{} states, {} transitions{}\";\n  labelloc=t;\n  \
         node [shape=circle, fontname=\"monospace\", fontsize=9];\n  \
         edge [fontname=\"monospace\", fontsize=8, color=gray50, fontcolor=gray30];\n",
        g.states.len(),
        g.transitions(),
        if path.is_some() { "; the counterexample in red" } else { "" }
    );
    let labels = path.as_ref().zip(t).map(|(p, t)| path_labels(m, g, t, p));
    for i in 0..g.states.len() {
        let mine = labels.as_ref().and_then(|l| l[i].as_deref());
        out.push_str(&node(m, g, i, mine));
    }
    for (i, edges) in g.edges.iter().enumerate() {
        for e in edges {
            let step = path.as_ref().and_then(|p| p.step_of(i as u32, e.choice, e.to));
            let name = token::name(m, e.choice, e.ticks);
            let attrs = match step {
                Some(k) => format!("label=\"{}. {}\", color=red, fontcolor=red, penwidth=2", k + 1, quote(&name)),
                None => format!("label=\"{}\"", quote(&name)),
            };
            out.push_str(&format!("  n{i} -> n{} [{attrs}];\n", e.to));
        }
    }
    out.push_str("}\n");
    Some(out)
}

/// The path's states in the graph: `states[k]` is the state after step `k` (0: the start).
struct OnPath {
    states: Vec<u32>,
    choices: Vec<crate::exec::Choice>,
}

impl OnPath {
    /// The step of the path that takes this transition, the first if several do.
    fn step_of(&self, from: u32, c: crate::exec::Choice, to: u32) -> Option<usize> {
        (0..self.choices.len()).find(|&k| {
            self.states[k] == from && self.choices[k] == c && self.states[k + 1] == to
        })
    }
}

fn on_path(g: &StateGraph, t: &Trace) -> Option<OnPath> {
    let mut states = vec![g.find(&t.start)?];
    for s in &t.steps {
        states.push(g.find(&s.after)?);
    }
    let choices = t.steps.iter().map(|s| s.choice).collect();
    Some(OnPath { states, choices })
}

/// Per state, the label of a state on the path: after which steps it stands, who holds what
/// there and what is falsely believed.
fn path_labels(m: &Model, g: &StateGraph, t: &Trace, p: &OnPath) -> Vec<Option<String>> {
    let held = holders::after_each(m, t);
    let notes = belief::notes(m, t);
    let mut lines: Vec<Vec<String>> = vec![Vec::new(); g.states.len()];
    lines[p.states[0] as usize].push("start".into());
    for k in 0..t.steps.len() {
        let here = &mut lines[p.states[k + 1] as usize];
        here.push(format!("after step {}", k + 1));
        here.extend(held[k].iter().map(|h| format!("{} holds {}", m.process_name(h.who), h.what)));
        here.extend(belief::words(m, &notes.shown[k]).into_iter().map(|b| format!("⚠ {b}")));
    }
    let last = *p.states.last().unwrap_or(&0) as usize;
    if let Some(f) = t.failure.filter(|f| !g.fails[last].contains(f)) {
        let forever = t.loop_start.map_or(String::new(), |k| format!(" (forever from step {})", k + 1));
        lines[last].push(format!("✗ {}{forever}", f.name(m)));
    }
    lines
        .into_iter()
        .map(|l| (!l.is_empty()).then(|| l.join("\n")))
        .collect()
}

/// One state: its number, and what it is.
fn node(m: &Model, g: &StateGraph, i: usize, on_path: Option<&str>) -> String {
    let mut label = vec![i.to_string()];
    label.extend(on_path.map(str::to_string));
    let fails = &g.fails[i];
    label.extend(fails.iter().map(|f| format!("✗ {}", f.name(m))));
    let mut attrs = Vec::new();
    if on_path.is_some() || !fails.is_empty() {
        attrs.push("shape=box".to_string());
    } else if g.states[i].is_final() {
        attrs.push("shape=doublecircle".to_string());
    }
    if !fails.is_empty() {
        attrs.push("color=red, fontcolor=red".into());
    } else if on_path.is_some() {
        attrs.push("color=red".into());
    }
    if on_path.is_some() && !fails.is_empty() {
        attrs.push("penwidth=2".into());
    }
    let attrs: String = attrs.iter().map(|a| format!(", {a}")).collect();
    format!("  n{i} [label=\"{}\"{attrs}];\n", quote(&label.join("\n")))
}
