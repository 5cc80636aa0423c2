//! A process group's program as the lines a reader follows: the visible operations (each a
//! step the checker interleaves), the delays during which time passes, the loops, and the
//! conditions that guard any of them, each with its model line.

use super::Source;
use crate::ir::{Group, Model, Op, OpKind};
use std::collections::BTreeMap;

/// What a source line holds, most telling first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mark {
    /// The head of a loop (a `retry`'s also rolls back: that step shows as the loop).
    Loop,
    /// A visible operation: a step of its own.
    Step,
    /// `work`, `sleep`: time passes; other processes may run.
    Delay,
    /// `watchdog KEY lease D`, `watchdog stop`: a timer of the process starts or stops.
    Timer,
    /// The rest of an `atomic` block, part of the step above.
    Inside,
    /// The head of a `for`: its body once per item (unrolled); kept when it guards a line.
    Unrolled,
    /// A condition; kept only when it guards a line kept below it.
    Test,
}

impl Mark {
    fn sign(self) -> &'static str {
        match self {
            Mark::Step => "▸",
            Mark::Delay => "⏱",
            Mark::Timer => "⟳",
            Mark::Loop => "↻",
            Mark::Unrolled => "×",
            Mark::Inside | Mark::Test => " ",
        }
    }
}

/// The group's heading and its lines.
pub(super) fn group(m: &Model, src: &Source, g: &Group) -> String {
    let mut out = crate::verdict::wrap(&super::clean(&heading(m, g)), "  ", "    ");
    let lines = kept(src, g);
    let indent = lines
        .iter()
        .map(|(l, _)| leading(src.text(*l)))
        .min()
        .unwrap_or(0);
    for (line, mark) in lines {
        let text = src.text(line);
        let depth = leading(text).saturating_sub(indent);
        let body = format!("{}{}", " ".repeat(depth), super::clean(text.trim()));
        let row = format!("    L{line:<4} {} {body}", mark.sign());
        out.push_str(&clip(&row, 100));
        out.push('\n');
    }
    out
}

/// `buyer[2]: buyer[0], buyer[1], each on an instance of its own`.
fn heading(m: &Model, g: &Group) -> String {
    let pids = (0..g.count).map(|i| g.first.index() + i);
    let names: Vec<String> = pids
        .clone()
        .map(|p| m.process_name(crate::ir::Pid(p as u16)))
        .collect();
    let instances: Vec<usize> = pids.map(|p| m.processes[p].instance).collect();
    let shared = instances.windows(2).all(|w| w[0] == w[1]);
    let place = match (g.count, shared) {
        (1, _) => String::new(),
        (_, true) => format!(", all on instance {}", m.instances[instances[0]]),
        (_, false) => ", each on an instance of its own".to_string(),
    };
    let pool = m
        .workload
        .group_pool
        .get(m.processes[g.first.index()].group)
        .copied()
        .flatten()
        .map(|p| {
            format!(
                ", connections from pool {}",
                m.workload.pools[p as usize].name
            )
        })
        .unwrap_or_default();
    let all = match names.len() {
        0 | 1 => return format!("{}{pool}", names.concat()),
        2..=4 => names.join(", "),
        n => format!("{} … {}", names[0], names[n - 1]),
    };
    format!("{}[{}]: {all}{place}{pool}", g.name, g.count)
}

/// The lines to show, in order, each with its mark.
fn kept(src: &Source, g: &Group) -> Vec<(usize, Mark)> {
    let mut marks: BTreeMap<usize, Mark> = BTreeMap::new();
    let mut mark = |line: usize, k: Mark| {
        let e = marks.entry(line).or_insert(k);
        *e = (*e).min(k);
    };
    let ops = &g.program.ops;
    for (i, op) in ops.iter().enumerate() {
        let line = src.line(op.span);
        match &op.kind {
            k if k.is_visible() => {
                mark(line, Mark::Step);
                if let OpKind::Atomic { body, .. } = k {
                    inside(src, body, &mut mark);
                }
            }
            OpKind::Work { .. } | OpKind::Sleep { .. } | OpKind::SleepFor { .. } => {
                mark(line, Mark::Delay);
            }
            OpKind::WatchdogStart { .. } | OpKind::WatchdogStop => mark(line, Mark::Timer),
            OpKind::Jump(t) if (*t as usize) <= i => mark(line, Mark::Loop),
            OpKind::JumpUnless { .. } if g.program.tests.contains(&(i as u32)) => {
                mark(line, Mark::Test);
            }
            _ => {}
        }
    }
    for_heads(src, &mut marks);
    guarding(src, marks.into_iter().collect())
}

/// Marks the `for` lines among the program's lines: no op carries one, as the loop is
/// unrolled when the model is read.
fn for_heads(src: &Source, marks: &mut BTreeMap<usize, Mark>) {
    let (Some(&first), Some(&last)) = (marks.keys().next(), marks.keys().last()) else {
        return;
    };
    for line in first..last {
        let text = src.text(line).trim();
        if text.starts_with("for $") && text.ends_with('{') {
            marks.entry(line).or_insert(Mark::Unrolled);
        }
    }
}

fn inside(src: &Source, body: &[Op], mark: &mut impl FnMut(usize, Mark)) {
    for op in body {
        mark(src.line(op.span), Mark::Inside);
    }
}

/// Drops the conditions that guard no kept line (one kept below them, indented deeper).
fn guarding(src: &Source, lines: Vec<(usize, Mark)>) -> Vec<(usize, Mark)> {
    let mut out: Vec<(usize, Mark)> = Vec::new();
    for (line, mark) in lines.into_iter().rev() {
        if matches!(mark, Mark::Test | Mark::Unrolled) {
            let deeper = out
                .last()
                .is_some_and(|&(next, _)| leading(src.text(next)) > leading(src.text(line)));
            if !deeper {
                continue;
            }
        }
        out.push((line, mark));
    }
    out.reverse();
    out
}

/// The width of a line's indentation (a tab counts four).
fn leading(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// At most `n` characters, the last an ellipsis when cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n - 1).collect();
    out.push('…');
    out
}
