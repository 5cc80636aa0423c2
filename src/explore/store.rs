//! The visited set: exact (every state kept, encoded compactly, insertion-ordered, so a
//! state's index is its BFS rank) or fingerprints (a 64-bit hash per state; the states of the
//! frontier are kept, encoded, by the search itself).

use super::prints::Prints;
use crate::world::State;
use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;
use std::hash::{Hash, Hasher};

/// A state encoded compactly (`world::codec`): a few bytes per process instead of a tree of
/// allocations.
pub type Packed = Box<[u8]>;

pub use crate::world::codec::{pack, pack_into, unpack};

/// Every visited state, packed, in discovery order.
#[derive(Default)]
pub struct Seen {
    set: IndexSet<Packed, FxBuildHasher>,
    /// Bytes of all packed states, kept as they are added (progress reports read it).
    packed_bytes: usize,
}

impl Seen {
    #[must_use]
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// State number `i`, unpacked.
    #[must_use]
    pub fn get(&self, i: usize) -> State {
        unpack(&self.set[i])
    }

    /// State number `i`, packed.
    #[must_use]
    pub fn packed(&self, i: usize) -> &[u8] {
        &self.set[i]
    }

    #[must_use]
    pub fn index_of(&self, s: &State) -> Option<usize> {
        self.set.get_index_of(&pack(s)[..])
    }

    /// Visits a packed state: its index and whether it is new (only then is it copied).
    pub fn insert_full(&mut self, p: &[u8]) -> (usize, bool) {
        match self.set.get_index_of(p) {
            Some(i) => (i, false),
            None => {
                self.packed_bytes += p.len();
                self.set.insert_full(Box::from(p))
            }
        }
    }

    fn bytes(&self) -> usize {
        self.packed_bytes + self.set.capacity() * (std::mem::size_of::<Packed>() + 16)
    }
}

pub enum Store {
    Exact(Seen),
    Prints(Prints),
}

impl Store {
    #[must_use]
    pub fn new(fingerprints: bool) -> Self {
        if fingerprints {
            Store::Prints(Prints::default())
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

    /// Whether the packed state has been visited.
    #[must_use]
    pub fn contains(&self, p: &[u8]) -> bool {
        match self {
            Store::Exact(seen) => seen.set.contains(p),
            Store::Prints(set) => set.contains(fingerprint(p)),
        }
    }

    /// Visits a packed state: its index (in fingerprint mode only for a new state;
    /// `usize::MAX` otherwise) and whether it is new. In fingerprint mode the store keeps
    /// nothing of the state itself: the search keeps the new ones it must expand.
    pub fn insert(&mut self, p: &[u8]) -> (usize, bool) {
        match self {
            Store::Exact(seen) => seen.insert_full(p),
            Store::Prints(set) => {
                let new = set.insert(fingerprint(p));
                (if new { set.len() - 1 } else { usize::MAX }, new)
            }
        }
    }

    /// Bytes the store holds, roughly (table slots, and packed states in exact mode).
    #[must_use]
    pub fn bytes(&self) -> usize {
        match self {
            Store::Exact(s) => s.bytes(),
            Store::Prints(s) => s.bytes(),
        }
    }
}

/// A packed state's 64-bit fingerprint (the standard library's SipHash with its fixed
/// `new()` keys: the same on every run of one build).
#[must_use]
pub fn fingerprint(p: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    p.hash(&mut h);
    h.finish()
}

/// The chance that two of `n` distinct states share a fingerprint (the birthday bound,
/// n(n-1)/2 pairs over 2^64 values): the chance that fingerprint mode missed a state.
#[must_use]
pub fn collision_probability(n: usize) -> f64 {
    let n = n as f64;
    (n * (n - 1.0) / 2.0) / 2f64.powi(64)
}
