//! A check's result as a value: what was found, whether the model expected it, the trace.

use crate::explore::coverage::Coverage;
use crate::explore::{Bound, Failure, Outcome, Stats};
use crate::ir::{Expect, Model};
use crate::trace::{self, Trace};
use crate::warnings::Warning;

/// How a safety counterexample of `n` steps was found, and whether it is a shortest one.
fn counterexample_shape(st: &Stats, n: usize) -> String {
    let steps = format!("{n} step{}", if n == 1 { "" } else { "s" });
    match st.probe {
        _ if st.dfs => format!("counterexample found depth-first (not proven shortest): {steps}"),
        Some(floor) if floor >= n => {
            format!("shortest counterexample (found depth-first): {steps}")
        }
        Some(floor) => {
            let below = match floor {
                0 => String::new(),
                k => format!("none has fewer than {k} steps: "),
            };
            format!(
                "counterexample found depth-first (not proven shortest): {steps}\n  \
                 ({below}the breadth-first search stopped first; --shortest searches on)"
            )
        }
        None => format!("shortest counterexample: {steps}"),
    }
}

/// What checking a model found: the outcome, whether the model expected it, the search's
/// counts, the counterexample, and what the search covered.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The model checked.
    pub model: crate::Model,
    /// What the search found.
    pub outcome: Outcome,
    /// Its counters.
    pub stats: Stats,
    /// Wall-clock seconds of the search (measured outside the engine).
    pub seconds: f64,
    /// The counterexample, replayed, when the outcome is a failure (not for a `reachable`
    /// property no state satisfies: there is no path to it).
    pub trace: Option<Trace>,
    /// What the search covered: statements run, tests taken, final states.
    pub coverage: Coverage,
    /// What the verdict does not cover, in words ([`Warning`]).
    pub warnings: Vec<Warning>,
    /// The model's `schedule` blocks, run and judged against their claims.
    pub schedules: Vec<crate::schedules::ScheduleRun>,
}

impl Verdict {
    /// Whether what was found is what the model's `expect` line says.
    #[must_use]
    pub fn met(&self) -> bool {
        self.search_met()
            && self
                .schedules
                .iter()
                .all(crate::schedules::ScheduleRun::met)
    }

    /// Whether the search found what the `expect` line says (schedules aside).
    fn search_met(&self) -> bool {
        match (&self.outcome, &self.model.ir().expect) {
            (Outcome::Incomplete { .. }, _) => false,
            (_, Expect::Unstated) => true,
            (Outcome::Holds, Expect::Holds) => true,
            (Outcome::Failed { failure, .. }, Expect::Violated(name)) => {
                matches!(
                    failure,
                    Failure::Property(_) | Failure::RuntimeError(_) | Failure::Unreached(_)
                ) && failure.name(self.model.ir()) == *name
            }
            (
                Outcome::Failed {
                    failure: Failure::Deadlock,
                    ..
                },
                Expect::Deadlock,
            ) => true,
            _ => false,
        }
    }

    /// The model's whole state graph as a Graphviz `digraph`, the counterexample's path
    /// marked in it, when the model has at most [`crate::trace::states::MAX_STATES`]
    /// states (the plain search, no reduction, finds them again).
    #[must_use]
    pub fn state_graph(&self) -> Option<String> {
        let m = self.model.ir();
        let g = crate::explore::graph::build(m, crate::trace::states::MAX_STATES)?;
        crate::trace::states::render(m, &g, self.trace.as_ref())
    }

    /// `holds`, `violated no_oversell`, `deadlock`, `incomplete (…)`.
    #[must_use]
    pub fn summary(&self) -> String {
        match &self.outcome {
            Outcome::Holds => "holds".into(),
            Outcome::Failed {
                failure: Failure::Deadlock,
                ..
            } => "deadlock".into(),
            Outcome::Failed {
                failure: Failure::Unevaluable(i),
                ..
            } => format!("cannot evaluate {}", self.model.ir().properties[*i].name),
            Outcome::Failed {
                failure: Failure::Unreached(i),
                ..
            } => format!("never reached {}", self.model.ir().properties[*i].name),
            Outcome::Failed { failure, .. } => {
                format!("violated {}", failure.name(self.model.ir()))
            }
            Outcome::Incomplete { bound } => format!("incomplete ({})", bound_text(*bound)),
        }
    }

    /// The expectation as written: `holds`, `violated x`, `deadlock`.
    #[must_use]
    pub fn expected(&self) -> String {
        let search: String = match &self.model.ir().expect {
            Expect::Holds => "holds".into(),
            Expect::Violated(n) => format!("violated {n}"),
            Expect::Deadlock => "deadlock".into(),
            Expect::Unstated => "nothing stated for this database".into(),
        };
        let claimed = self
            .model
            .ir()
            .schedules
            .iter()
            .filter(|s| !s.claims.is_empty())
            .count();
        match claimed {
            0 => search,
            1 => format!("{search}, and 1 schedule as claimed"),
            n => format!("{search}, and {n} schedules as claimed"),
        }
    }

    /// The verdict line, the trace (if any) and the expectation line.
    #[must_use]
    pub fn render(&self) -> String {
        self.render_with(false)
    }

    /// As [`Verdict::render`]; `full` prints one row per step of the trace (no folding).
    #[must_use]
    pub fn render_with(&self, full: bool) -> String {
        let m = self.model.ir();
        let mut out = String::new();
        let st = self.stats;
        let mut counts = format!(
            "{} states, {} transitions, depth {}",
            st.states, st.transitions, st.depth
        );
        counts.push_str(&reductions(&st));
        if st.fingerprints {
            counts.push_str(&format!(
                ", fingerprints (chance of a missed state < {:.1e})",
                crate::explore::collision_probability(st.states).max(f64::MIN_POSITIVE)
            ));
        }
        counts.push_str(&format!(", {:.2} s", self.seconds));
        match (&self.outcome, &self.trace) {
            (Outcome::Failed { failure, also, .. }, Some(t)) => {
                let what = match failure {
                    Failure::Deadlock => "deadlock".to_string(),
                    Failure::Unevaluable(i) => {
                        format!("{} cannot be evaluated", m.properties[*i].name)
                    }
                    f => format!("{} violated", f.name(m)),
                };
                let n = t.steps.len();
                let shape = match t.loop_start {
                    Some(k) => format!(
                        "a run on which it never holds: {k} steps, then {} repeating \
                         forever\n  (weak fairness per process; faults are never forced)",
                        n - k
                    ),
                    None if m.properties.iter().any(|p| p.kind.is_liveness())
                        && matches!(failure, Failure::Property(i) if m.properties[*i].kind.is_liveness()) =>
                    {
                        format!("a run that ends without it: {n} steps")
                    }
                    None => counterexample_shape(&st, n),
                };
                out.push_str(&format!("✗ {what} — {shape}\n"));
                out.push_str(&wrap(&format!("({counts})"), "  ", "   "));
                if let Some(line) = also_line(m, also, n) {
                    out.push_str(&wrap(&line, "  ", "    "));
                }
                out.push('\n');
                if n > 0 {
                    out.push_str(&trace::text::render_with(m, t, full));
                    out.push_str(&replay_line(m, t));
                }
                if let Failure::Unevaluable(i) = failure {
                    out.push_str(&unevaluable_hint(m, t, *i));
                }
            }
            (Outcome::Holds, _) => out.push_str(&headline("✓ holds", &counts)),
            (
                Outcome::Failed {
                    failure: Failure::Unreached(i),
                    ..
                },
                _,
            ) => {
                let p = &m.properties[*i];
                let (line, col) = m.line_col_of(p.span);
                out.push_str(&format!(
                    "✗ {} never reached: no reachable state satisfies it\n",
                    p.name
                ));
                out.push_str(&wrap(&format!("({counts})"), "  ", "   "));
                out.push_str(&format!("  --> {}:{line}:{col}\n", m.origin));
                out.push_str(&wrap(
                    "hint: what should happen does not: see the warnings below (statements never \
                     run, a WHERE that never matches)",
                    "  ",
                    "        ",
                ));
            }
            _ => out.push_str(&headline(&format!("? {}", self.summary()), &counts)),
        }
        let complete = matches!(self.outcome, Outcome::Holds)
            || matches!(
                self.outcome,
                Outcome::Failed {
                    failure: Failure::Unreached(_),
                    ..
                }
            );
        if let Some(line) = crate::warnings::final_states(m, &self.coverage, complete) {
            out.push_str(&wrap(&line, "  ", "    "));
        }
        for w in &self.warnings {
            out.push_str(&render_warning(m, w));
        }
        out.push_str(&crate::schedules::render(m, &self.schedules));
        let met = if self.met() { "met" } else { "NOT MET" };
        out.push_str(&format!("expected: {} — {met}\n", self.expected()));
        out
    }

    /// What the search covered, as `check --coverage` prints it: per statement the times a
    /// step ran it and the states it ran from, per `if` how often it went each way.
    #[must_use]
    pub fn coverage_table(&self) -> String {
        crate::warnings::table(self.model.ir(), &self.coverage)
    }

    /// Panics with the rendered verdict unless every property holds.
    #[track_caller]
    pub fn assert_holds(&self) {
        assert!(
            self.outcome == Outcome::Holds,
            "{}: expected every property to hold\n{}",
            self.model.ir().origin,
            self.render()
        );
    }

    /// Panics with the rendered verdict unless `property` is violated (`deadlock` for one).
    #[track_caller]
    pub fn assert_violated(&self, property: &str) {
        let ok = matches!(&self.outcome, Outcome::Failed { failure, .. } if failure.name(self.model.ir()) == property);
        assert!(
            ok,
            "{}: expected {property} to be violated\n{}",
            self.model.ir().origin,
            self.render()
        );
    }

    /// Panics unless the result is what the model's own `expect` line says.
    #[track_caller]
    pub fn assert_expected(&self) {
        assert!(self.met(), "{}:\n{}", self.model.ir().origin, self.render());
    }
}

/// Why a property could not be evaluated, and how to write it so that it can.
fn unevaluable_hint(m: &Model, t: &Trace, i: usize) -> String {
    let p = &m.properties[i];
    let (line, col) = m.line_col_of(p.span);
    let when = match t.steps.len() {
        0 => "in the initial state".to_string(),
        n => format!("after step {n}"),
    };
    let why = crate::explore::evaluation_error(m, &t.end, i).map_or("an error", |e| e.message());
    format!(
        "{} `{}` cannot be evaluated {when}\n  --> {}:{line}:{col}\n  why: {why}\n  this is a \
         mistake in the model, not a verdict about it\n  hint: an absent Redis key, a missing \
         row or a local not yet set reads as nil, which is\n        not a number; test for it \
         first, as in `redis(k) = nil or redis(k) <= 3`\n",
        p.kind.keyword(),
        p.name,
        m.origin
    )
}

/// `✓ holds (counts)` on one line when it fits in 100 columns, else the counts below it.
fn headline(head: &str, counts: &str) -> String {
    let line = format!("{head} ({counts})");
    if line.chars().count() <= 100 {
        return format!("{line}\n");
    }
    format!("{head}\n{}", wrap(&format!("({counts})"), "  ", "   "))
}

/// `replay: interlock check FILE --path '…'`: the counterexample's replay token, the lines
/// wrapped inside the quotes (a shell keeps them, and the token reads them as spaces). A long
/// file name puts `--path` (and if need be the file itself) on a line of its own, after a `\`.
pub fn replay_line(m: &Model, t: &Trace) -> String {
    replay_line_with(m, t, "")
}

/// [`replay_line`] with options after the file (`--db mysql --set clients=3`).
pub fn replay_line_with(m: &Model, t: &Trace, options: &str) -> String {
    let file = format!("{}{options}", shell_word(&m.origin));
    // Steps are kept whole (`tick 200ms` on one line); the quotes hug the first and last.
    let mut units = trace::token::compact(trace::token::steps(m, t));
    if units.is_empty() {
        units.push(String::new());
    }
    units.last_mut().expect("a unit").push('\'');
    let mut out = String::new();
    let mut head = format!("replay: interlock check {file} --path '");
    let mut indent = "";
    if head.chars().count() + units[0].chars().count() > 100 {
        let first = format!("replay: interlock check {file} \\");
        if first.chars().count() > 100 {
            out.push_str(&format!("replay: interlock check \\\n  {file} \\\n"));
        } else {
            out.push_str(&format!("{first}\n"));
        }
        head = "--path '".to_string();
        indent = "  ";
    }
    units[0].insert_str(0, &head);
    out.push_str(&fill(units.iter().map(String::as_str), indent, "  "));
    out
}

/// A file name as one shell word.
fn shell_word(s: &str) -> String {
    let plain = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain && !s.is_empty() {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `warning: …`, then where (`--> file:line:col`) and the hint.
fn render_warning(m: &Model, w: &Warning) -> String {
    let mut out = wrap(&format!("warning: {}", w.message), "", "  ");
    if let Some(span) = w.span {
        let (line, col) = m.line_col_of(span);
        out.push_str(&format!("  --> {}:{line}:{col}\n", m.origin));
    }
    if let Some(hint) = &w.hint {
        out.push_str(&wrap(&format!("hint: {hint}"), "  ", "        "));
    }
    out
}

/// `text` in lines of at most 100 columns, the first behind `first`, the others behind `rest`.
pub(crate) fn wrap(text: &str, first: &str, rest: &str) -> String {
    fill(text.split(' '), first, rest)
}

/// `units` joined by spaces in lines of at most 100 columns (a unit is never split), the
/// first line behind `first`, the others behind `rest`.
fn fill<'a>(units: impl IntoIterator<Item = &'a str>, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    for word in units {
        let fresh = line.trim().is_empty();
        if !fresh && line.chars().count() + 1 + word.chars().count() > 100 {
            out.push_str(line.trim_end());
            out.push('\n');
            line = rest.to_string();
        } else if !fresh {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

fn bound_text(b: Bound) -> String {
    match b {
        Bound::MaxStates(n) => format!("stopped at --max-states {n}"),
        Bound::MaxDepth(d) => format!("stopped at --max-depth {d}"),
        Bound::TimeLimit(t) => format!("stopped at --time-limit {t}s"),
        Bound::MaxMemory(mb) => format!("stopped at --max-memory {mb} (MiB)"),
    }
}

/// The reductions a search applied, for the verdict line: `, reduced: dead locals,
/// symmetry, partial order` (partial order only when it cut an expansion short).
fn reductions(st: &crate::explore::Stats) -> String {
    let names: Vec<&str> = [
        (st.dead_locals, "dead locals"),
        (st.symmetry, "symmetry"),
        (st.por && st.ample > 0, "partial order"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!(", reduced: {}", names.join(", "))
    }
}

/// The other failures met at the same depth as the one shown, or `None`.
fn also_line(m: &crate::ir::Model, also: &[Failure], n: usize) -> Option<String> {
    let names: Vec<String> = also
        .iter()
        .map(|f| match f {
            Failure::Deadlock => "a deadlock".to_string(),
            Failure::Unevaluable(i) => format!("{} cannot be evaluated", m.properties[*i].name),
            f => f.name(m),
        })
        .collect();
    let (first, rest) = names.split_first()?;
    let list = rest.iter().fold(first.clone(), |acc, n| acc + ", " + n);
    Some(format!(
        "also violated at the same depth ({n} step{}): {list}",
        if n == 1 { "" } else { "s" }
    ))
}
