//! The rules every search order shares, so that breadth-first and depth-first search cannot
//! drift apart: when a state is a deadlock, when an expansion partial-order reduction cut to
//! one step must be redone in full (the cycle proviso), and when a bound ends the search.

use super::reduce::Expansion;
use super::Options;

/// A state is a deadlock when it has unfinished processes and no transition of its full
/// (unreduced) expansion is progress: no process can step and no time can pass (faults do
/// not count).
#[must_use]
pub fn deadlocked(exp: &Expansion, finished: bool) -> bool {
    exp.progress == 0 && !finished
}

/// The cycle proviso: an expansion reduced to one transition must lead somewhere new, else
/// it is redone in full (`known` says whether that transition's target was visited already).
#[must_use]
pub fn redo_in_full(exp: &Expansion, known: impl FnOnce() -> bool) -> bool {
    exp.reduced() && known()
}

/// `--max-states` is reached once this many distinct states are known.
#[must_use]
pub fn states_full(opts: &Options, states: usize) -> bool {
    opts.max_states.is_some_and(|max| states >= max)
}

/// A state this deep is not expanded (`--max-depth`): its successors are only counted, and
/// any of them makes the search incomplete.
#[must_use]
pub fn at_depth_limit(opts: &Options, depth: usize) -> bool {
    opts.max_depth.is_some_and(|d| depth >= d)
}
