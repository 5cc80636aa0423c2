//! Exhaustive exploration: breadth-first search over a visited set with parent links, so the
//! first counterexample found is a shortest one.

mod bfs;
mod chunked;
pub mod coverage;
mod dead;
pub mod edges;
mod dfs;
pub mod graph;
mod liveness;
pub mod memo;
mod parallel;
mod por;
mod prints;
pub mod probe;
mod properties;
pub mod queue;
pub mod reduce;
mod rules;
mod shorten;
mod stop;
mod store;
mod switches;
pub mod symmetry;

pub use bfs::{explore, explore_with};
pub use properties::{check, evaluation_error, rank, Checker, Failure};
pub use stop::Stop;
pub use store::collision_probability;

use crate::exec::Choice;

/// How to search, and bounds on it. A search that hits a bound ends with
/// [`Outcome::Incomplete`]. Reductions never change a verdict (docs/explorer.md).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Stop (incomplete) once this many distinct states are known.
    pub max_states: Option<usize>,
    /// Do not explore past this many steps (incomplete if there was more).
    pub max_depth: Option<usize>,
    /// Symmetry reduction: interchangeable processes are explored once per arrangement
    /// (on by default; off for models with liveness properties).
    pub symmetry: bool,
    /// Partial-order reduction: a step no one else can observe is taken alone (on by
    /// default; off for models with liveness properties).
    pub por: bool,
    /// Dead-variable reduction: locals that will be written before they are read again are
    /// reset (on by default; off for models with liveness properties).
    pub dead_locals: bool,
    /// Threads that expand a layer: 1 is the caller's thread only; 0 (the default) every core
    /// ([`crate::Model::check_with`] asks the system how many; the engine runs 0 as 1). The
    /// verdict, counts and trace are the same whatever the number.
    pub threads: usize,
    /// Keep only 64-bit fingerprints of visited states instead of the states.
    pub fingerprints: bool,
    /// Search depth-first: memory for the visited set and one path; counterexamples are not
    /// the shortest. Models with liveness properties are searched breadth-first regardless.
    pub dfs: bool,
    /// When to remember process steps by what they read and hand them out again
    /// (docs/explorer.md, "The step memo"). A cache: states, verdicts and traces are the same
    /// without it.
    pub step_memo: StepMemo,
    /// Stop (incomplete) after this many seconds of wall-clock time. The engine never reads
    /// the clock: [`crate::Model::check_with`] measures it on a thread of its own and raises
    /// the limit on the search's `Stop`.
    pub time_limit: Option<u64>,
    /// Stop (incomplete) once the process's resident memory reaches this many MiB, measured
    /// like `time_limit` (Linux; elsewhere the visited set's own size is counted).
    pub max_memory: Option<u64>,
    /// When a breadth-first search that has found nothing yet dives depth-first for a deep
    /// failure, and how long it then looks for a shorter one (docs/explorer.md, "The
    /// depth-first probe").
    pub probe: probe::Probe,
}

/// When the step memo takes a thread's steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepMemo {
    /// Never: every step is run.
    Off,
    /// Once the thread has expanded 256 states (the default): a small search ends before its
    /// steps repeat, and would only pay for the memo.
    Warm,
    /// From the first state: for comparing the memo with the steps on small searches too.
    Always,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_states: None,
            max_depth: None,
            symmetry: true,
            por: true,
            dead_locals: true,
            threads: 0,
            fingerprints: false,
            dfs: false,
            step_memo: StepMemo::Warm,
            time_limit: None,
            max_memory: None,
            probe: probe::Probe::default(),
        }
    }
}

impl Options {
    /// No reductions, one thread, exact storage: the plain search every reduction is
    /// compared against.
    #[must_use]
    pub fn full() -> Self {
        Options {
            symmetry: false,
            por: false,
            dead_locals: false,
            threads: 1,
            ..Options::default()
        }
    }
}

/// What the search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every reachable state satisfies every property and none deadlocks.
    Holds,
    /// The path (a shortest one, with the fewest context switches among those) to a state
    /// where `failure` happens.
    Failed {
        /// What goes wrong at the end of the path.
        failure: Failure,
        /// The path, in the engine's terms: [`crate::Verdict::trace`] shows it step by step.
        path: Vec<Choice>,
        /// For a liveness violation, where the path's loop begins: the steps from there on
        /// repeat forever. `None` for safety failures and runs that end.
        loop_start: Option<usize>,
        /// The other failures the breadth-first search met in the same layer, at the same
        /// depth as `failure`, most relevant first (each once; empty for depth-first searches,
        /// liveness and failures with no path).
        also: Vec<Failure>,
    },
    /// A bound stopped the search before it covered every state.
    Incomplete {
        /// The bound that stopped it.
        bound: Bound,
    },
}

/// What stopped a search before it covered every state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `--max-states`: this many distinct states were known.
    MaxStates(usize),
    /// `--max-depth`: this deep, and there was more.
    MaxDepth(usize),
    /// `--time-limit`, in seconds (the caller's monitor measures it).
    TimeLimit(u64),
    /// `--max-memory`, in MiB (the caller's monitor measures it).
    MaxMemory(u64),
}

/// Where a running search is, for progress displays and for the caller's limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Distinct states found so far.
    pub states: usize,
    /// Transitions taken so far.
    pub transitions: usize,
    /// The depth of the layer being expanded.
    pub depth: usize,
    /// States found but not expanded yet.
    pub queue: usize,
    /// Bytes the visited set's table holds, roughly.
    pub store_bytes: usize,
}

/// Counters of one search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Distinct states reached.
    pub states: usize,
    /// Transitions taken (edges, including those to known states).
    pub transitions: usize,
    /// Length of the longest shortest path from the initial state: the BFS depth reached.
    pub depth: usize,
    /// Which reductions the search applied (a model with liveness properties gets none):
    /// symmetry,
    pub symmetry: bool,
    /// partial-order reduction,
    pub por: bool,
    /// dead locals.
    pub dead_locals: bool,
    /// States partial-order reduction expanded by one step only.
    pub ample: usize,
    /// Visited states were kept as 64-bit fingerprints (the chance of a missed state is printed with the verdict).
    pub fingerprints: bool,
    /// The search was depth-first: a counterexample is not the shortest.
    pub dfs: bool,
    /// The counterexample is the depth-first probe's, shortened, not proven shortest: the
    /// breadth-first search stopped (its budget, a limit) before it got that deep. No
    /// counterexample of fewer steps than this exists (0 when partial-order reduction made
    /// the breadth-first depths bound nothing).
    pub probe: Option<usize>,
}
