//! Counterexamples as data: the path replayed step by step with what each step did.
//! Renderers (`text`, `json`, `mermaid`, `dot`) are separate and only read a [`Trace`].

pub mod belief;
pub(crate) mod describe;
pub mod dot;
pub mod holders;
pub mod json;
pub mod mermaid;
pub mod rows;
pub mod schedule;
pub(crate) mod series;
pub mod snapshot;
pub mod states;
pub mod summary;
pub mod text;
pub mod token;
pub mod words;

use crate::exec::observe::{Event, Record};
use crate::exec::{apply, Choice};
use crate::exec::waits::{self, Edge};
use crate::explore::Failure;
use crate::ir::Model;
use crate::ir::value::Pid;
use crate::world::State;

/// A counterexample: the steps from the initial state to the failing state.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The steps, in the engine's terms: [`Trace::text`] and [`Trace::json`] show them.
    #[doc(hidden)]
    pub steps: Vec<Step>,
    /// What the path's end breaks (`None`: a path replayed from a token that ends where
    /// nothing is broken).
    pub failure: Option<Failure>,
    /// For a deadlock: every wait edge in the final state, and the cycle among them if any.
    #[doc(hidden)]
    pub waits: Vec<Edge>,
    #[doc(hidden)]
    pub cycle: Option<Vec<Edge>>,
    /// The state the trace starts from.
    #[doc(hidden)]
    pub start: State,
    /// The state the trace ends in.
    #[doc(hidden)]
    pub end: State,
    /// A liveness counterexample's loop: the steps from this index on repeat forever.
    pub loop_start: Option<usize>,
    /// For a schedule's trace: why each step ran. Empty for any other trace.
    #[doc(hidden)]
    pub causes: Vec<schedule::Cause>,
}

/// One transition of a trace.
#[derive(Clone, Debug)]
pub struct Step {
    pub choice: Choice,
    pub events: Vec<Event>,
    /// Model time after the step, in ticks.
    pub time: u64,
    /// The state after the step (the one before it is the previous step's, or
    /// [`Trace::start`]): what renderers show as the world at this step.
    #[doc(hidden)]
    pub after: State,
}

/// Replaying a path failed: the path does not fit the model (a bug, or a stale token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayError {
    pub step: usize,
    pub choice: Choice,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step {} of the path ({:?}) is not enabled",
            self.step + 1,
            self.choice
        )
    }
}

impl std::error::Error for ReplayError {}

/// Replays `path` from the initial state, recording every step.
///
/// # Errors
/// [`ReplayError`] when a choice of the path is not enabled where it is taken.
pub fn replay(m: &Model, path: &[Choice], failure: Option<Failure>) -> Result<Trace, ReplayError> {
    let start = State::initial(m);
    let mut s = start.clone();
    let mut steps = Vec::with_capacity(path.len());
    let mut time = 0u64;
    for (i, &choice) in path.iter().enumerate() {
        let mut rec = Record::default();
        let next = apply(m, &s, choice, &mut rec).ok_or(ReplayError { step: i, choice })?;
        time += rec
            .events
            .iter()
            .map(|e| match e {
                Event::TimePasses { ticks } => u64::from(*ticks),
                _ => 0,
            })
            .sum::<u64>();
        steps.push(Step {
            choice,
            events: rec.events,
            time,
            after: next.clone(),
        });
        s = next;
    }
    let (waits, cycle) = deadlock_waits(m, &s, failure);
    Ok(Trace {
        steps,
        failure,
        waits,
        cycle,
        start,
        end: s,
        loop_start: None,
        causes: Vec::new(),
    })
}

/// What a path's end state breaks, as `check --path` judges it: the first property broken
/// by the checker's order, else a deadlock if nothing can step and not every process has
/// finished.
#[must_use]
pub fn end_failure(m: &Model, s: &State) -> Option<Failure> {
    let mut fails = Vec::new();
    crate::explore::check(m, s, &mut fails);
    let broken = fails
        .iter()
        .map(|&f| crate::explore::rank(m, f))
        .min()
        .map(|r| r.1);
    broken.or_else(|| {
        let mut succ = Vec::new();
        let progress = crate::exec::successors(m, s, &mut succ);
        (progress == 0 && !s.is_final()).then_some(Failure::Deadlock)
    })
}

/// For a deadlock, every wait edge of the end state and the cycle among them.
fn deadlock_waits(m: &Model, s: &State, failure: Option<Failure>) -> (Vec<Edge>, Option<Vec<Edge>>) {
    if failure == Some(Failure::Deadlock) {
        (waits::edges(m, s), waits::cycle(m, s))
    } else {
        (Vec::new(), None)
    }
}

impl Trace {
    /// The state before step `i` (0-based).
    #[must_use]
    #[doc(hidden)]
    pub fn before(&self, i: usize) -> &State {
        i.checked_sub(1)
            .map_or(&self.start, |k| &self.steps[k].after)
    }

    /// Whether every process has finished at its end.
    #[must_use]
    pub fn ends_finished(&self) -> bool {
        self.end.is_final()
    }

    /// Model time at its end, in ticks.
    #[must_use]
    pub fn end_time(&self) -> u64 {
        self.steps.last().map_or(0, |s| s.time)
    }

    /// How many steps it has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it has no step (the initial state already fails).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The trace as the terminal shows it: a table of at most 100 columns.
    #[must_use]
    pub fn text(&self, m: &crate::Model) -> String {
        text::render(m.ir(), self)
    }

    /// The text trace with one row per step (`check --full`).
    #[must_use]
    pub fn text_full(&self, m: &crate::Model) -> String {
        text::render_with(m.ir(), self, true)
    }

    /// The trace as JSON data (docs/json.md).
    #[must_use]
    pub fn json(&self, m: &crate::Model) -> serde_json::Value {
        json::render(m.ir(), self)
    }

    /// The trace as a Mermaid sequence diagram.
    #[must_use]
    pub fn mermaid(&self, m: &crate::Model) -> String {
        mermaid::render(m.ir(), self)
    }

    /// The trace as a Graphviz graph: the path of states, and a deadlock's wait-for graph.
    #[must_use]
    pub fn dot(&self, m: &crate::Model) -> String {
        dot::render(m.ir(), self)
    }

    /// Its replay token: the path in the step names the trace shows, which
    /// [`crate::Model::trace_of`] and `check --path` read back.
    #[must_use]
    pub fn token(&self, m: &crate::Model) -> String {
        token::render(m.ir(), self)
    }

    /// How often the acting process changes along the trace (environment steps excluded).
    #[must_use]
    pub fn context_switches(&self) -> usize {
        let actors: Vec<Pid> = self.steps.iter().filter_map(|s| s.choice.actor()).collect();
        actors.windows(2).filter(|w| w[0] != w[1]).count()
    }
}
