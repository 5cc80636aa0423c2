//! A request to stop a search, raised from outside it: the caller measures the wall clock and
//! the process's memory (the engine reads neither) and raises the limit it reached; the
//! search polls the request between states, inside a batch, before each step of an expansion
//! and in the counterexample pass, so a limit holds within one step, not one batch.

use super::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

/// Set at most once, by any thread; read by the search's threads.
#[derive(Debug, Default)]
pub struct Stop(AtomicU64);

/// Tags of the encoded bound (its value in the low 56 bits).
const TIME: u64 = 1 << 56;
const MEMORY: u64 = 2 << 56;
const VALUE: u64 = (1 << 56) - 1;

impl Stop {
    /// Asks the search to end with `bound` (a time or memory limit; other bounds the
    /// search checks itself). The first request raised wins.
    pub fn raise(&self, bound: Bound) {
        let code = match bound {
            Bound::TimeLimit(s) => TIME | (s & VALUE),
            Bound::MaxMemory(mb) => MEMORY | (mb & VALUE),
            Bound::MaxStates(_) | Bound::MaxDepth(_) => return,
        };
        let _ = self
            .0
            .compare_exchange(0, code, Ordering::Release, Ordering::Relaxed);
    }

    /// The limit raised, if one was.
    #[must_use]
    pub fn raised(&self) -> Option<Bound> {
        let code = self.0.load(Ordering::Acquire);
        match code & !VALUE {
            0 => None,
            TIME => Some(Bound::TimeLimit(code & VALUE)),
            _ => Some(Bound::MaxMemory(code & VALUE)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_limit_raised_is_the_one_kept() {
        let stop = Stop::default();
        assert_eq!(stop.raised(), None);
        stop.raise(Bound::MaxStates(5));
        assert_eq!(stop.raised(), None);
        stop.raise(Bound::MaxMemory(1536));
        stop.raise(Bound::TimeLimit(3));
        assert_eq!(stop.raised(), Some(Bound::MaxMemory(1536)));
        let stop = Stop::default();
        stop.raise(Bound::TimeLimit(600));
        assert_eq!(stop.raised(), Some(Bound::TimeLimit(600)));
    }
}
