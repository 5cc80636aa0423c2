//! The rows a reader sees: steps folded where folding hides nothing a reader follows.
//!
//! Neighbouring steps of one actor share a row when both are quiet (a failed `SET NX`, a read,
//! a sleep, time passing: nothing changes), or when each does what the one before did on the
//! next server (`SET lock … on n1`, `… on n2`). A folded row lists every phrase of its steps,
//! merged where they differ in one word (`on n1…n5`) or repeat (`×3`). A schedule's trace
//! and `--full` keep one row per step; a lasso's loop starts a row of its own.

use super::belief::Note;
use super::describe::{at, describe, ms, Described};
use super::series::{merge, mergeable};
use super::Trace;
use crate::exec::observe::Event;
use crate::ir::value::Pid;
use crate::ir::Model;

/// One row: the steps `first..=last` (0-based) and what they did, in words.
pub struct Row {
    pub first: usize,
    pub last: usize,
    pub actor: Option<Pid>,
    /// `L23`, or `L14–70` for a folded row whose steps are written on several lines.
    pub lines: Option<String>,
    pub doing: String,
    pub world: String,
    /// The false beliefs its steps show.
    pub notes: Vec<Note>,
    /// Lines of their own under the row (a deadlock's cycle and victim).
    pub wide: Vec<String>,
}

/// The trace's rows; `full` keeps one row per step.
#[must_use]
pub fn rows(m: &Model, t: &Trace, notes: &[Vec<Note>], full: bool) -> Vec<Row> {
    let d: Vec<Described> = t.steps.iter().map(|s| describe(m, s)).collect();
    let keep = full || !t.causes.is_empty();
    let mut out = Vec::new();
    let mut i = 0;
    while i < d.len() {
        let mut j = i;
        while !keep && j + 1 < d.len() && together(t, &d, j) {
            j += 1;
        }
        out.push(row(m, t, &d, notes, i, j));
        i = j + 1;
    }
    out
}

/// Whether step `j + 1` folds into the row that holds step `j`.
fn together(t: &Trace, d: &[Described], j: usize) -> bool {
    let (a, b) = (&d[j], &d[j + 1]);
    if a.actor != b.actor || t.loop_start == Some(j + 1) {
        return false;
    }
    let both_quiet = a.quiet && b.quiet || timely(&t.steps[j]) && timely(&t.steps[j + 1]);
    both_quiet || (follows(&a.doing, &b.doing) && follows(&a.world, &b.world))
}

/// Whether phrases `b` go on from `a` on the next server: `a` is one phrase that `b`'s first
/// merges with (`b` may say more after it), or both are empty.
fn follows(a: &[String], b: &[String]) -> bool {
    match (a, b.first()) {
        ([], None) => true,
        ([one], Some(first)) => mergeable(one, first),
        _ => false,
    }
}

/// Whether a step only lets time pass (keys may expire as it does).
fn timely(s: &super::Step) -> bool {
    s.choice.actor().is_none()
        && s.events.iter().all(|e| {
            matches!(
                e,
                Event::TimePasses { .. } | Event::Woke { .. } | Event::KeyExpired { .. }
            )
        })
}

fn row(m: &Model, t: &Trace, d: &[Described], notes: &[Vec<Note>], i: usize, j: usize) -> Row {
    let steps = &t.steps[i..=j];
    let only_time = j > i && steps.iter().all(timely);
    let doing = if only_time {
        let ticks: u64 = steps
            .iter()
            .flat_map(|s| &s.events)
            .map(|e| match e {
                Event::TimePasses { ticks } => u64::from(*ticks),
                _ => 0,
            })
            .sum();
        format!("time passes {} (now {})", ms(m, ticks), ms(m, steps[steps.len() - 1].time))
    } else {
        let parts: Vec<String> = d[i..=j].iter().flat_map(|x| x.doing.clone()).collect();
        merge(&parts).join("; ")
    };
    let world: Vec<String> = if only_time {
        steps
            .iter()
            .flat_map(|s| {
                s.events.iter().filter_map(move |e| match e {
                    Event::KeyExpired { server, key } => Some(format!(
                        "⌛ {}{} expired at {}",
                        at(m, *server),
                        m.symbol(*key),
                        ms(m, s.time)
                    )),
                    _ => None,
                })
            })
            .collect()
    } else {
        d[i..=j].iter().flat_map(|x| x.world.clone()).collect()
    };
    let lines: Vec<usize> = d[i..=j].iter().filter_map(|x| x.line).collect();
    let lines = match (lines.iter().min(), lines.iter().max()) {
        (Some(a), Some(b)) if a == b => Some(format!("L{a}")),
        (Some(a), Some(b)) => Some(format!("L{a}–{b}")),
        _ => None,
    };
    let mut shown: Vec<Note> = Vec::new();
    for n in notes[i..=j].iter().flatten() {
        if !shown.contains(n) {
            shown.push(n.clone());
        }
    }
    Row {
        first: i,
        last: j,
        actor: d[i].actor,
        lines,
        doing,
        world: merge(&world).join(", "),
        notes: shown,
        wide: d[i..=j].iter().flat_map(|x| x.wide.clone()).collect(),
    }
}
