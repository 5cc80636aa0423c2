//! The visited set: exact (every state kept, encoded compactly, insertion-ordered, so a
//! state's index is its BFS rank) or fingerprints (a 64-bit hash per state; the states of the
//! frontier are kept, encoded, by the search itself).

use super::prints::Prints;
use crate::world::State;
use indexmap::map::{raw_entry_v1::RawEntryMut, IndexMap, RawEntryApiV1};
use rustc_hash::FxBuildHasher;
use std::hash::{BuildHasher, Hash, Hasher};

/// A state encoded compactly (`world::codec`): a few bytes per process instead of a tree of
/// allocations.
pub type Packed = Box<[u8]>;

pub use crate::world::codec::{pack, pack_into, unpack};

/// Every visited state, packed, in discovery order. A state is looked up by its
/// [`Store::hash`], which the search's threads compute beside packing it.
#[derive(Default)]
pub struct Seen {
    set: IndexMap<Packed, (), FxBuildHasher>,
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
        unpack(self.packed(i))
    }

    /// State number `i`, packed.
    #[must_use]
    pub fn packed(&self, i: usize) -> &[u8] {
        self.set
            .get_index(i)
            .map(|(k, ())| &k[..])
            .expect("a visited state")
    }

    #[must_use]
    pub fn index_of(&self, s: &State) -> Option<usize> {
        let p = pack(s);
        self.find(&p, exact_hash(&p))
    }

    fn find(&self, p: &[u8], hash: u64) -> Option<usize> {
        self.set
            .raw_entry_v1()
            .index_from_hash(hash, |k| k[..] == *p)
    }

    /// Visits a packed state whose [`exact_hash`] is `hash`: its index and whether it is new
    /// (only then is it copied).
    pub fn insert_full(&mut self, p: &[u8], hash: u64) -> (usize, bool) {
        match self.set.raw_entry_mut_v1().from_hash(hash, |k| k[..] == *p) {
            RawEntryMut::Occupied(o) => (o.index(), false),
            RawEntryMut::Vacant(v) => {
                let i = v.index();
                v.insert_hashed_nocheck(hash, Box::from(p), ());
                self.packed_bytes += p.len();
                (i, true)
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

    /// What the store looks a packed state up by: its fingerprint, or in exact mode a
    /// hash of its bytes. It depends on the bytes and the kind of store only, so the
    /// search's threads compute it beside packing, off the thread that visits.
    #[must_use]
    pub fn hash(&self, p: &[u8]) -> u64 {
        match self {
            Store::Exact(_) => exact_hash(p),
            Store::Prints(_) => fingerprint(p),
        }
    }

    /// Whether the packed state has been visited.
    #[must_use]
    pub fn contains(&self, p: &[u8]) -> bool {
        match self {
            Store::Exact(seen) => seen.find(p, exact_hash(p)).is_some(),
            Store::Prints(set) => set.contains(fingerprint(p)),
        }
    }

    /// Visits a packed state, whose [`Store::hash`] is `hash`: its index (in fingerprint
    /// mode only for a new state; `usize::MAX` otherwise) and whether it is new. In
    /// fingerprint mode the store keeps nothing of the state itself: the search keeps the
    /// new ones it must expand.
    pub fn insert(&mut self, p: &[u8], hash: u64) -> (usize, bool) {
        debug_assert_eq!(hash, self.hash(p));
        match self {
            Store::Exact(seen) => seen.insert_full(p, hash),
            Store::Prints(set) => {
                let new = set.insert(hash);
                (if new { set.len() - 1 } else { usize::MAX }, new)
            }
        }
    }

    /// Reads where each of `hashes` would be looked up, without changing anything: the
    /// reads miss the cache independently of one another, so the processor overlaps them,
    /// and the visits that follow find the lines loaded. (Fingerprint mode; the exact
    /// store's table is not reachable this way.)
    pub fn preload(&self, hashes: impl Iterator<Item = u64>) {
        if let Store::Prints(set) = self {
            let mut seen = 0u64;
            for h in hashes {
                seen ^= set.peek(h);
            }
            std::hint::black_box(seen);
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

/// The exact store's hash of a packed state (the one its table was built with).
#[must_use]
pub fn exact_hash(p: &[u8]) -> u64 {
    FxBuildHasher.hash_one(p)
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
