//! The visited set: exact (every state kept, insertion-ordered, so a state's index is its BFS
//! rank) or fingerprints (a 64-bit hash per state; the states of the frontier are kept by the
//! search itself).

use crate::world::State;
use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashSet};
use std::hash::{Hash, Hasher};

/// States in discovery order.
pub type Seen = IndexSet<State, FxBuildHasher>;

pub enum Store {
    Exact(Seen),
    Prints(FxHashSet<u64>),
}

impl Store {
    #[must_use]
    pub fn new(fingerprints: bool) -> Self {
        if fingerprints {
            Store::Prints(FxHashSet::default())
        } else {
            Store::Exact(Seen::default())
        }
    }

    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Store::Exact(s) => s.len(),
            Store::Prints(s) => s.len(),
        }
    }

    /// Whether the state has been visited.
    #[must_use]
    pub fn contains(&self, s: &State) -> bool {
        match self {
            Store::Exact(set) => set.contains(s),
            Store::Prints(set) => set.contains(&fingerprint(s)),
        }
    }

    /// Visits a state: its index (in fingerprint mode only for a new state; `usize::MAX`
    /// otherwise) and, for a new state in fingerprint mode, the state back, since the store
    /// does not keep it.
    pub fn insert(&mut self, s: State) -> (usize, Option<State>, bool) {
        match self {
            Store::Exact(set) => {
                let (i, new) = set.insert_full(s);
                (i, None, new)
            }
            Store::Prints(set) => {
                let new = set.insert(fingerprint(&s));
                let i = if new { set.len() - 1 } else { usize::MAX };
                (i, new.then_some(s), new)
            }
        }
    }

    /// Bytes the store holds, roughly (table slots and state headers; not the heap data of
    /// exact states).
    #[must_use]
    pub fn bytes(&self) -> usize {
        match self {
            Store::Exact(s) => s.capacity() * (std::mem::size_of::<State>() + 16),
            Store::Prints(s) => s.capacity() * 9,
        }
    }
}

/// A state's 64-bit fingerprint (the standard library's SipHash with its fixed `new()` keys:
/// the same on every run of one build).
#[must_use]
pub fn fingerprint(s: &State) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// The chance that two of `n` distinct states share a fingerprint (the birthday bound,
/// n(n-1)/2 pairs over 2^64 values): the chance that fingerprint mode missed a state.
#[must_use]
pub fn collision_probability(n: usize) -> f64 {
    let n = n as f64;
    (n * (n - 1.0) / 2.0) / 2f64.powi(64)
}
