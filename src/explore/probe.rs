//! The depth-first probe: deep failures found fast. A breadth-first search must cover every
//! layer before the one a failure is in; when that is the last layer (a property of final
//! states, a long chain of steps) it covers everything first. So once the breadth-first
//! search knows [`Probe::after`] states and has found nothing, a depth-first search with the
//! same reductions dives for a failure, with as many states again at most. If it finds one,
//! the breadth-first search goes on looking for a shorter one until it knows
//! [`Probe::budget`] states (or its layer reaches the probe's depth, where it finds one
//! itself); if it gets no further, the probe's path, shortened, is the counterexample, and
//! the verdict says how far the breadth-first search ruled out a shorter one.
//!
//! Every decision is taken at the start of a layer, on the count of states known then: the
//! same on any number of threads.

use super::{dfs, Options, Outcome, Stop};
use crate::ir::Model;

/// When the probe runs, and how long the breadth-first search looks for a shorter path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Probe once a layer starts with at least this many states known and no failure found.
    pub after: usize,
    /// Once the probe has found a failure, stop looking for a shorter one when a layer
    /// starts with at least this many states known: `None` looks on to the end (the
    /// counterexample is then a shortest one, unless a limit stops the search).
    pub budget: Option<usize>,
}

impl Default for Probe {
    /// After 32,768 states; a shorter path is looked for up to 65,536.
    fn default() -> Self {
        Probe {
            after: 1 << 15,
            budget: Some(1 << 16),
        }
    }
}

impl Probe {
    /// Never probe: the plain breadth-first search.
    #[must_use]
    pub fn never() -> Self {
        Probe {
            after: usize::MAX,
            budget: None,
        }
    }
}

/// The probe's part of a breadth-first search.
#[derive(Default)]
pub struct Watch {
    probed: bool,
    /// The probe's failure, as the outcome the search ends in if it gets no further.
    found: Option<Outcome>,
}

impl Watch {
    /// At the start of a layer, `states` known and no failure found yet: probes if it is
    /// time to; returns `true` when the breadth-first search should stop looking and the
    /// probe's path be the counterexample.
    pub fn at_layer(&mut self, m: &Model, opts: &Options, states: usize, stop: &Stop) -> bool {
        if !self.probed && states >= opts.probe.after {
            self.probed = true;
            self.found = probe(m, opts, states, stop);
        }
        self.found.is_some() && opts.probe.budget.is_some_and(|b| states >= b)
    }

    /// What the probe found, if anything.
    pub fn take(&mut self) -> Option<Outcome> {
        self.found.take()
    }
}

/// A depth-first search of `m` for a failure, with the reductions of `opts` and fingerprints
/// (a missed state only makes the probe miss), up to `states` states; its path is shortened
/// as every depth-first path is.
fn probe(m: &Model, opts: &Options, states: usize, stop: &Stop) -> Option<Outcome> {
    let opts = Options {
        max_states: Some(states),
        fingerprints: true,
        dfs: true,
        threads: 1,
        ..*opts
    };
    let outcome = dfs::search(m, opts, &mut |_| None, stop).0;
    matches!(outcome, Outcome::Failed { .. }).then_some(outcome)
}
