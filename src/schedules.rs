//! A model's schedules, run and judged: each `schedule` block's trace (or why it cannot run)
//! and each claim of its `expect schedule` line, true or what happened instead.

use crate::ir::Model;
use crate::trace::schedule::{self, ScheduleError};
use crate::trace::Trace;

/// One schedule's run.
#[derive(Clone, Debug)]
pub struct ScheduleRun {
    /// The schedule's name.
    pub name: String,
    /// Its trace: every step, or those before the one that could not run.
    pub trace: Trace,
    /// The step that could not run, if one could not.
    pub error: Option<ScheduleError>,
    /// Each claim as written, and `Err` with what happened instead when it is false.
    pub claims: Vec<(String, Result<(), String>)>,
}

impl ScheduleRun {
    /// The schedule ran and every claim about it is true.
    #[must_use]
    pub fn met(&self) -> bool {
        self.error.is_none() && self.claims.iter().all(|(_, r)| r.is_ok())
    }
}

impl ScheduleRun {
    /// The run as `interlock run` prints it: the trace, how it ends, and each claim judged.
    #[must_use]
    pub fn text(&self, model: &crate::Model) -> String {
        let m = model.ir();
        let mut out = String::new();
        let t = &self.trace;
        if !t.is_empty() {
            out.push_str(&crate::trace::text::render(m, t));
        }
        if let Some(e) = &self.error {
            out.push_str(&error_lines(e, None));
            return out;
        }
        out.push_str(&ending(m, t));
        for (text, r) in &self.claims {
            match r {
                Ok(()) => out.push_str(&format!("✓ {text}\n")),
                Err(why) => out.push_str(&format!("✗ {text} — {why}\n")),
            }
        }
        out
    }
}

/// A step that cannot run, in lines of at most 100 columns: where (a place in the file,
/// when the schedule is written in one), what, and the hint.
fn error_lines(e: &ScheduleError, place: Option<String>) -> String {
    let head = format!(
        "step {} of the schedule (`{}`): {}",
        e.step, e.written, e.message
    );
    let mut out = match place {
        Some(p) => crate::verdict::wrap(&format!("{p}: {head}"), "  ", "    "),
        None => crate::verdict::wrap(&format!("✗ {head}"), "", "  "),
    };
    if let Some(h) = &e.hint {
        out.push_str(&crate::verdict::wrap(
            &format!("hint: {h}"),
            "  ",
            "        ",
        ));
    }
    out
}

/// How a schedule's run ends: what its end breaks, and each process not done.
fn ending(m: &Model, t: &Trace) -> String {
    use crate::world::process::Status;
    let mut out = String::new();
    if let Some(f) = t.failure {
        let what = match f {
            crate::explore::Failure::Deadlock => "a deadlock".to_string(),
            f => f.name(m),
        };
        out.push_str(&format!("✗ its end breaks {what}\n"));
    }
    let mut open = Vec::new();
    for (i, p) in t.end.procs.iter().enumerate() {
        let name = m.process_name(crate::ir::Pid(i as u16));
        match p.status {
            Status::Done(_) => {}
            Status::Waiting(w) => open.push(format!(
                "{name} still waits for {}",
                crate::trace::describe::wait_name(m, w)
            )),
            Status::Ready | Status::Busy(_) => open.push(format!("{name} has more to do")),
            s => open.push(format!(
                "{name} ended: {}",
                crate::trace::describe::finished_name(m, s)
            )),
        }
    }
    if open.is_empty() {
        out.push_str("its end: every process has finished\n");
    } else {
        out.push_str(&format!("its end: {}\n", open.join("; ")));
    }
    out
}

/// Runs every schedule of `m` that this flavour has claims about and judges them (`check`
/// leaves the others to `interlock run`).
#[must_use]
pub fn run_all(m: &Model) -> Vec<ScheduleRun> {
    run_each(m, true)
}

/// Runs the schedules of `m` (only those with claims, if `claimed`) and judges their claims.
#[must_use]
pub fn run_each(m: &Model, claimed: bool) -> Vec<ScheduleRun> {
    m.schedules
        .iter()
        .filter(|s| !claimed || !s.claims.is_empty())
        .map(|s| {
            let steps: Vec<String> = s.steps.iter().map(|(w, _)| w.clone()).collect();
            let (trace, error) = schedule::run_partly(m, &steps);
            let claims = s
                .claims
                .iter()
                .map(|c| {
                    let verdict = match &error {
                        None => schedule::judge(m, &trace, c),
                        Some(_) => Err("the schedule did not run".into()),
                    };
                    (c.text.clone(), verdict)
                })
                .collect();
            ScheduleRun {
                name: s.name.clone(),
                trace,
                error,
                claims,
            }
        })
        .collect()
}

/// The schedules' lines under a verdict: `✓ schedule g0: …` or, for one not met, its claims
/// and its trace.
#[must_use]
pub fn render(m: &Model, runs: &[ScheduleRun]) -> String {
    let mut out = String::new();
    for run in runs {
        let decl = m
            .schedules
            .iter()
            .find(|s| s.name == run.name)
            .expect("a run of a declared schedule");
        let mark = if run.met() { "✓" } else { "✗" };
        let (line, _) = m.line_col_of(decl.span);
        out.push_str(&format!("{mark} schedule {} (line {line})", run.name));
        if let Some(e) = &run.error {
            let (l, c) = m.line_col_of(decl.steps[e.step - 1].1);
            out.push_str(": cannot run\n");
            out.push_str(&error_lines(e, Some(format!("{}:{l}:{c}", m.origin))));
            continue;
        }
        let t = &run.trace;
        match () {
            () if run.claims.is_empty() => out.push_str(": runs (no claim)\n"),
            () if run.met() => {
                let texts: Vec<&str> = run.claims.iter().map(|(t, _)| t.as_str()).collect();
                let one = format!(": {}", texts.join(", "));
                if out.lines().last().map_or(0, |l| l.chars().count()) + one.chars().count()
                    <= crate::trace::text::WIDTH
                {
                    out.push_str(&one);
                    out.push('\n');
                } else {
                    out.push('\n');
                    for t in texts {
                        out.push_str(&format!("  ✓ {t}\n"));
                    }
                }
            }
            () => {
                out.push('\n');
                for (text, r) in &run.claims {
                    match r {
                        Ok(()) => out.push_str(&format!("  ✓ {text}\n")),
                        Err(why) => out.push_str(&format!("  ✗ {text} — {why}\n")),
                    }
                }
                out.push_str(&crate::trace::text::render(m, t));
            }
        }
    }
    out
}
