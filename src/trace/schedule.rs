//! A chosen interleaving, run as a real client driver runs it: each scheduled step issues the
//! named process's next operation; a statement that must wait is shown waiting and the
//! schedule goes on; a waiter resumes as soon as its lock is granted (or its timeout or a
//! deadlock check ends the wait), before the next scheduled step. Steps the environment owes
//! at that moment (a due deadlock check, lock timeout, watchdog renewal, the end of a pause)
//! happen then too. When the schedule is over and processes still wait, time passes while it
//! can, so that a PostgreSQL deadlock check or a lock timeout ends the wait as the server's
//! would (docs/language.md, "Schedules").
//!
//! [`Driver`] is the stepping API (one scheduled step at a time; `interlock replay` drives the
//! real servers beside it); [`run`] runs a whole schedule. Both only call [`exec::apply`]:
//! there is no second semantics.

use super::{Step, Trace};
use crate::exec::observe::{Event, Record, Reply};
use crate::exec::{self, apply, Choice};
use crate::ir::schedule::{Claim, ClaimKind};
use crate::ir::value::{Pid, Value};
use crate::ir::Model;
use crate::world::process::Status;
use crate::world::State;

/// A schedule step that cannot run where it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleError {
    /// The scheduled step it is about, from 1.
    pub step: usize,
    /// The step as written.
    pub written: String,
    /// What is wrong.
    pub message: String,
    /// What would fit.
    pub hint: Option<String>,
}

impl std::fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step {} of the schedule (`{}`): {}",
            self.step, self.written, self.message
        )?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScheduleError {}

/// Why a step of a schedule's trace ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Schedule step `k` (from 1) named it.
    Scheduled(usize),
    /// It followed schedule step `k`: a waiter resumed, a due check, timeout or renewal, or
    /// time passing for a scheduled process to end its sleep.
    After(usize),
    /// After the schedule: time passed so that the waits still open could end.
    Drain,
}

/// The stepping driver: the state, and every step taken so far with its cause.
#[derive(Clone, Debug)]
pub struct Driver<'m> {
    m: &'m Model,
    state: State,
    steps: Vec<Step>,
    causes: Vec<Cause>,
    scheduled: usize,
    time: u64,
}

/// How many steps the driver takes on its own after one scheduled step, at most (a guard:
/// every such step ends a wait or a due timer, so far fewer happen).
const SETTLE_LIMIT: usize = 100_000;

impl<'m> Driver<'m> {
    /// A driver at the model's initial state.
    #[must_use]
    pub fn new(m: &'m Model) -> Self {
        Driver {
            m,
            state: State::initial(m),
            steps: Vec::new(),
            causes: Vec::new(),
            scheduled: 0,
            time: 0,
        }
    }

    /// The steps taken so far, each with its cause.
    #[must_use]
    pub fn steps(&self) -> (&[Step], &[Cause]) {
        (&self.steps, &self.causes)
    }

    /// How many scheduled steps have run.
    #[must_use]
    pub fn scheduled(&self) -> usize {
        self.scheduled
    }

    /// Runs the next scheduled step, written as a trace names it (`buyer[0]`, `tick 100ms`,
    /// `tick` for time passing to the next deadline, `fault crash buyer[1]`), and then what
    /// follows it at once. Returns how many trace steps it added.
    ///
    /// # Errors
    /// The step does not name a step of the model, or cannot happen here (the process has
    /// finished or waits); the driver is unchanged.
    pub fn take(&mut self, written: &str) -> Result<usize, ScheduleError> {
        let k = self.scheduled + 1;
        let fail = |message: String, hint: Option<String>| ScheduleError {
            step: k,
            written: written.to_string(),
            message,
            hint,
        };
        let words: Vec<&str> = written.split_whitespace().collect();
        let (choice, want) = read(self.m, &words, &self.state).map_err(|(m, h)| fail(m, h))?;
        let before = self.steps.len();
        let saved = self.clone();
        if let Choice::Proc(pid) = choice {
            self.wait_out_delay(pid, k);
        }
        let result = self.issue(choice, want.as_deref(), k);
        if let Err((message, hint)) = result {
            *self = saved;
            return Err(fail(message, hint));
        }
        self.scheduled = k;
        self.settle(Cause::After(k));
        Ok(self.steps.len() - before)
    }

    /// Ends the schedule: while a process still waits and time can pass, it passes, and the
    /// waits that a deadline ends (a PostgreSQL deadlock check, a lock timeout) end.
    pub fn drain(&mut self) {
        for _ in 0..SETTLE_LIMIT {
            self.settle(Cause::Drain);
            if !self.a_wait_can_end() || !self.apply(Choice::Tick, Cause::Drain) {
                return;
            }
        }
    }

    /// Some process waits, and time passing can end a wait: a waiter's deadlock check or
    /// lock timeout is pending, or a Redis key has a TTL (an `await` for it). Without one,
    /// time would pass for nothing (under `timing async`, for ever).
    fn a_wait_can_end(&self) -> bool {
        let s = &self.state;
        let waiting = |p: &crate::world::process::Proc| matches!(p.status, Status::Waiting(_));
        let timer = s
            .procs
            .iter()
            .any(|p| waiting(p) && (p.check_in.is_some() || p.timeout_in.is_some()));
        let awaits = s
            .procs
            .iter()
            .any(|p| matches!(p.status, Status::Waiting(crate::world::process::Wait::Await { .. })));
        timer || (awaits && s.redis.iter().any(|r| r.next_expiry().is_some()))
    }

    /// The trace of the steps taken, with the failure its end shows (a safety property
    /// broken, a deadlock), as `check --path` judges a path.
    #[must_use]
    pub fn trace(&self) -> Trace {
        let failure = super::end_failure(self.m, &self.state);
        let (waits, cycle) = super::deadlock_waits(self.m, &self.state, failure);
        Trace {
            steps: self.steps.clone(),
            failure,
            waits,
            cycle,
            start: State::initial(self.m),
            end: self.state.clone(),
            loop_start: None,
            causes: self.causes.clone(),
        }
    }

    /// A scheduled process that is working or sleeping first lets its time pass, as a
    /// client's code does before it issues the next statement — when time can pass.
    fn wait_out_delay(&mut self, pid: Pid, k: usize) {
        for _ in 0..SETTLE_LIMIT {
            let busy = matches!(self.state.procs[pid.index()].status, Status::Busy(_))
                || self.state.procs[pid.index()].paused.is_some();
            if !busy || !self.apply(Choice::Tick, Cause::After(k)) {
                return;
            }
            self.settle(Cause::After(k));
        }
    }

    /// Takes the scheduled step itself, or says why it cannot happen.
    fn issue(
        &mut self,
        choice: Choice,
        want: Option<&str>,
        k: usize,
    ) -> Result<(), (String, Option<String>)> {
        let mut rec = Record::default();
        let Some(next) = apply(self.m, &self.state, choice, &mut rec) else {
            return Err(why_not(self.m, &self.state, choice));
        };
        let passed = passes(&rec.events);
        if let Some(want) = want {
            let shown = super::describe::passed(self.m, passed);
            if shown != want {
                return Err((
                    format!("time passes {shown} here, not {want}"),
                    Some(format!("write `tick {shown}`, or `tick` alone")),
                ));
            }
        }
        self.record(choice, rec, next, Cause::Scheduled(k));
        Ok(())
    }

    /// Takes every step that follows at once: waiters whose wait is over resume, due
    /// checks, timeouts, renewals and ends of pauses happen.
    fn settle(&mut self, cause: Cause) {
        for _ in 0..SETTLE_LIMIT {
            let Some(c) = self.next_owed() else { return };
            self.apply(c, cause);
        }
    }

    /// The first step owed now, in choice order: a waiter that can resume, then due timers.
    fn next_owed(&self) -> Option<Choice> {
        let mut silent = exec::observe::Silent;
        let s = &self.state;
        for (p, q) in s.procs.iter().enumerate() {
            let pid = Pid(p as u16);
            if matches!(q.status, Status::Waiting(_)) {
                let next = apply(self.m, s, Choice::Proc(pid), &mut silent);
                if next.is_some_and(|n| n != *s) {
                    return Some(Choice::Proc(pid));
                }
            }
        }
        let due = |q: &crate::world::process::Proc, pid: Pid| {
            [
                (q.check_in == Some(0)).then_some(Choice::Check(pid)),
                (q.timeout_in == Some(0)).then_some(Choice::Timeout(pid)),
                q.watchdog
                    .is_some_and(|w| w.next_in == 0)
                    .then_some(Choice::Renew(pid)),
                (q.paused == Some(0)).then_some(Choice::Resume(pid)),
            ]
        };
        s.procs.iter().enumerate().find_map(|(p, q)| {
            due(q, Pid(p as u16))
                .into_iter()
                .flatten()
                .find(|&c| apply(self.m, s, c, &mut silent).is_some())
        })
    }

    /// Takes `c` if it is enabled; whether it was.
    fn apply(&mut self, c: Choice, cause: Cause) -> bool {
        let mut rec = Record::default();
        match apply(self.m, &self.state, c, &mut rec) {
            Some(next) => {
                self.record(c, rec, next, cause);
                true
            }
            None => false,
        }
    }

    fn record(&mut self, choice: Choice, rec: Record, next: State, cause: Cause) {
        self.time += passes(&rec.events);
        self.steps.push(Step {
            choice,
            events: rec.events,
            time: self.time,
            after: next.clone(),
        });
        self.causes.push(cause);
        self.state = next;
    }
}

/// Runs `schedule` (steps separated by spaces, as a replay token writes them; `tick` may
/// stand alone) from the initial state, then drains the waits left open.
///
/// # Errors
/// The first scheduled step that cannot run, with its number.
pub fn run(m: &Model, schedule: &[String]) -> Result<Trace, ScheduleError> {
    match run_partly(m, schedule) {
        (t, None) => Ok(t),
        (_, Some(e)) => Err(e),
    }
}

/// Runs `schedule` as [`run`] does; when a step cannot run, the trace of the steps before it
/// (not drained) and the error.
#[must_use]
pub fn run_partly(m: &Model, schedule: &[String]) -> (Trace, Option<ScheduleError>) {
    let mut d = Driver::new(m);
    for step in schedule {
        if let Err(e) = d.take(step) {
            return (d.trace(), Some(e));
        }
    }
    d.drain();
    (d.trace(), None)
}

/// Splits a schedule written on one line into its steps: `T1 T2 tick 100ms fault crash T1`
/// is `T1`, `T2`, `tick 100ms`, `fault crash T1`.
#[must_use]
pub fn split(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let n = crate::ir::schedule::step_width(&words[at..]).max(1);
        out.push(words[at..at + n].join(" "));
        at += n;
    }
    out
}

type Read = (Choice, Option<String>);

/// One written step: its choice, and the time a `tick` claims.
fn read(m: &Model, words: &[&str], s: &State) -> Result<Read, (String, Option<String>)> {
    if words.is_empty() {
        return Err(("an empty step".into(), None));
    }
    if words == ["tick"] {
        return Ok((Choice::Tick, None));
    }
    let (c, want, used) = super::token::read_step(m, words, s)?;
    if used != words.len() {
        return Err((
            format!("`{}` is more than one step", words.join(" ")),
            Some("write one step at a time".into()),
        ));
    }
    Ok((c, want))
}

/// Why `c` cannot happen in `s`, in the words of a client driver.
fn why_not(m: &Model, s: &State, c: Choice) -> (String, Option<String>) {
    let Choice::Proc(pid) = c else {
        return (
            "it cannot happen here".into(),
            Some(format!("what can happen: {}", super::token::enabled_names(m, s))),
        );
    };
    let name = m.process_name(pid);
    let q = &s.procs[pid.index()];
    let said = match q.status {
        Status::Done(_) | Status::Errored(_) | Status::Failed(_) => {
            let how = super::describe::finished_name(m, q.status);
            (
                format!("{name} has finished ({how})"),
                Some("a finished process takes no more steps".into()),
            )
        }
        Status::Crashed | Status::Hung => (format!("{name} has stopped (a fault)"), None),
        Status::Waiting(w) => (
            format!("{name} is waiting ({})", super::describe::wait_name(m, w)),
            Some(format!(
                "a waiting process resumes by itself once its wait is over: schedule another \
                 process first{}",
                if m.timing == crate::ir::Timing::Bounded {
                    ", or `tick` when none can step"
                } else {
                    ""
                }
            )),
        ),
        _ if crate::exec::step::picking(m, s, pid).is_some() => (
            format!("{name} picks a value here"),
            Some(format!("write `pick {name} V`")),
        ),
        _ => (
            format!("{name} cannot step here"),
            Some(format!("what can happen: {}", super::token::enabled_names(m, s))),
        ),
    };
    said
}

/// How much time the events let pass, in ticks.
fn passes(events: &[Event]) -> u64 {
    events
        .iter()
        .map(|e| match e {
            Event::TimePasses { ticks } => u64::from(*ticks),
            _ => 0,
        })
        .sum()
}

/// Whether `claim` is true of a schedule's trace; `Err` says what happened instead.
///
/// # Errors
/// The claim is false: what the run did at the step it names, or how it ended.
pub fn judge(m: &Model, t: &Trace, claim: &Claim) -> Result<(), String> {
    let name = |p: Pid| m.process_name(p);
    let (pid, at) = match claim.kind {
        ClaimKind::Final(ref e) => {
            let sc = crate::exec::eval::Scope::global(m, &t.end);
            return match crate::exec::eval::eval(e, &sc) {
                Ok(v) if v.truthy() => Ok(()),
                Ok(_) => Err("it is false at the end".into()),
                Err(e) => Err(format!("it cannot be evaluated at the end: {e:?}")),
            };
        }
        ClaimKind::Ends { pid, outcome } => {
            let status = t.end.procs[pid.index()].status;
            let ok = match (status, outcome) {
                (Status::Done(_), None) => true,
                (Status::Done(got), Some(want)) => got == Some(want),
                _ => false,
            };
            return if ok {
                Ok(())
            } else {
                Err(format!("{} ended: {}", name(pid), end_words(m, status)))
            };
        }
        ClaimKind::Waits { pid, at: None } => {
            return match t.end.procs[pid.index()].status {
                Status::Waiting(_) => Ok(()),
                s => Err(format!("at the end {} is {}", name(pid), end_words(m, s))),
            };
        }
        ClaimKind::Waits { pid, at: Some(k) }
        | ClaimKind::Gets { pid, at: k, .. }
        | ClaimKind::Reads { pid, at: k, .. } => (pid, k),
    };
    let steps = at_step(t, at);
    if steps.is_empty() {
        return Err(format!("the schedule has no step {at}"));
    }
    let events = || {
        steps
            .iter()
            .filter(move |&&i| t.steps[i].choice.concerns() == Some(pid))
            .flat_map(move |&i| t.steps[i].events.iter())
    };
    let found = match &claim.kind {
        ClaimKind::Waits { .. } => events().any(|e| matches!(e, Event::Waits { .. })),
        ClaimKind::Gets { code, .. } => events().any(|e| match e {
            Event::Sql {
                reply: Reply::Error(r),
                ..
            } => r.code == *code,
            Event::Interrupted { pid: p, code: c } => *p == pid && c == code,
            _ => false,
        }),
        ClaimKind::Reads { rows, .. } => events().any(|e| match e {
            Event::Sql {
                reply: Reply::Rows(got),
                ..
            } => same_rows(got, rows),
            _ => false,
        }),
        _ => unreachable!("handled above"),
    };
    if found {
        return Ok(());
    }
    let did: Vec<String> = steps
        .iter()
        .filter(|&&i| t.steps[i].choice.concerns() == Some(pid))
        .map(|&i| super::describe::describe(m, &t.steps[i]).doing_text())
        .filter(|d| !d.is_empty())
        .collect();
    Err(if did.is_empty() {
        format!("{} took no step at {at}", name(pid))
    } else {
        format!("at {at} {}: {}", name(pid), did.join("; "))
    })
}

/// The trace steps schedule step `k` ran: itself and what followed on its own (after the
/// last, the time that passed so that open waits could end).
fn at_step(t: &Trace, k: usize) -> Vec<usize> {
    let last = t
        .causes
        .iter()
        .filter(|c| matches!(c, Cause::Scheduled(_)))
        .count();
    (0..t.causes.len())
        .filter(|&i| match t.causes[i] {
            Cause::Scheduled(j) | Cause::After(j) => j == k,
            Cause::Drain => k == last,
        })
        .collect()
}

/// Rows compared as multisets.
fn same_rows(got: &[Box<[Value]>], want: &[Vec<Value>]) -> bool {
    let mut a: Vec<&[Value]> = got.iter().map(|r| &r[..]).collect();
    let mut b: Vec<&[Value]> = want.iter().map(|r| &r[..]).collect();
    let key = |r: &&[Value]| format!("{r:?}");
    a.sort_by_key(key);
    b.sort_by_key(key);
    a == b
}

/// How a process stands at the end, in words.
fn end_words(m: &Model, status: Status) -> String {
    match status {
        Status::Waiting(w) => format!("waiting for {}", super::describe::wait_name(m, w)),
        Status::Ready | Status::Busy(_) => "not finished".into(),
        s => super::describe::finished_name(m, s),
    }
}
