//! Shortening a path found depth-first, as long as it stays a real path to the same failure.
//! A depth-first search runs the first process to its end before it tries anything else, so
//! its path to a failure carries steps that have nothing to do with it. Runs of steps are
//! left out, halving their length down to single steps (as delta debugging does), and a
//! shorter path is kept when every one of its steps can be taken and it ends where the same
//! failure happens. The result is no longer, often much shorter, but not proven shortest: a
//! shortest path may take other steps altogether.

use super::properties::{check, Failure};
use crate::exec::{apply, observe::Silent, successors, Choice};
use crate::ir::Model;
use crate::world::State;

/// Steps replayed at most while shortening one path: a bound on the work (a path of `n`
/// steps costs about `2 n²`), so that a path of thousands of steps is shortened in part
/// rather than for minutes. A count, not a time: the result is the same on every machine.
const WORK: usize = 1 << 18;

/// A path from the initial state of `m` to a state where `failure` happens, no longer than
/// `path` (which must be one), in plain semantics: choices name concrete processes.
#[must_use]
pub fn shorten(m: &Model, failure: Failure, path: &[Choice]) -> Vec<Choice> {
    let mut work = WORK;
    let mut best = path.to_vec();
    let mut run = (path.len() / 2).max(1);
    loop {
        let mut i = 0;
        while i < best.len() && work > 0 {
            let end = (i + run).min(best.len());
            let candidate: Vec<Choice> = best[..i].iter().chain(&best[end..]).copied().collect();
            match reaches(m, failure, &candidate, &mut work) {
                Some(k) => best = candidate[..k].to_vec(),
                None => i += run,
            }
        }
        if run == 1 || work == 0 {
            return best;
        }
        run /= 2;
    }
}

/// The number of steps of `path` after which `failure` first happens, if every step up to
/// there can be taken: `None` when one cannot or the failure never happens. Each step
/// replayed is taken from `work`.
fn reaches(m: &Model, failure: Failure, path: &[Choice], work: &mut usize) -> Option<usize> {
    let mut s = State::initial(m);
    let mut fails = Vec::new();
    for (k, &c) in path.iter().enumerate() {
        *work = work.checked_sub(1)?;
        s = apply(m, &s, c, &mut Silent)?;
        if failure != Failure::Deadlock {
            check(m, &s, &mut fails);
            if fails.contains(&failure) {
                return Some(k + 1);
            }
        }
    }
    (failure == Failure::Deadlock && deadlocked(m, &s)).then_some(path.len())
}

/// No progress out of `s` and some process not finished.
fn deadlocked(m: &Model, s: &State) -> bool {
    let mut out = Vec::new();
    successors(m, s, &mut out) == 0 && !s.is_final()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::value::Pid;

    /// `b` sets the key `a` must not see; `a` does three things first.
    const LATE: &str = "model \"m\"\nabout \"a\"\n\
        process a { SET x 1\n SET x 2\n SET x 3 }\n\
        process b { SET y 1 }\n\
        invariant never_y: redis(y) = nil\nexpect violated never_y\n";

    fn model(text: &str) -> Model {
        crate::lang::parse("t.model", text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn steps_that_do_not_lead_to_the_failure_are_left_out() {
        let m = model(LATE);
        let (a, b) = (Choice::Proc(Pid(0)), Choice::Proc(Pid(1)));
        let f = Failure::Property(0);
        let mut work = WORK;
        assert_eq!(reaches(&m, f, &[a, a, a, b], &mut work), Some(4));
        assert_eq!(shorten(&m, f, &[a, a, a, b]), vec![b]);
    }

    #[test]
    fn a_path_that_is_shortest_already_comes_back_as_it_is() {
        let m = model(LATE);
        let b = Choice::Proc(Pid(1));
        assert_eq!(shorten(&m, Failure::Property(0), &[b]), vec![b]);
    }

    #[test]
    fn a_step_that_cannot_be_taken_is_never_kept() {
        let m = model(LATE);
        let b = Choice::Proc(Pid(1));
        let mut work = WORK;
        // b has one step: the second is not enabled.
        assert_eq!(reaches(&m, Failure::Property(0), &[b, b], &mut work), Some(1));
        assert_eq!(reaches(&m, Failure::Deadlock, &[b, b], &mut work), None);
    }
}
