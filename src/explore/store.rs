//! The visited set: exact (every state kept, encoded compactly, insertion-ordered, so a
//! state's index is its BFS rank) or fingerprints (a 64-bit hash per state; the states of the
//! frontier are kept, encoded, by the search itself).

use super::chunked::Packs;
use super::prints::Prints;
use crate::world::State;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

pub use crate::world::codec::{pack, unpack};

/// Slots of a new exact table, as a power of two (small: a small search stays small).
const MIN_BITS: u32 = 6;

/// Every visited state, packed, in discovery order (a state's index is its BFS rank).
///
/// The states' bytes lie one after another in fixed-size blocks (`Packs`), which never
/// move. The table is open addressing with linear probing, at most three quarters full:
/// a slot holds the top 32 bits of the state's [`exact_hash`] and its index plus one (0 is
/// empty). A probe compares bytes only where those 32 bits agree, and the table is indexed
/// by the hash's top bits, so it doubles without reading a state again.
pub struct Seen {
    packs: Packs,
    slots: Vec<u64>,
    /// The table has `1 << bits` slots.
    bits: u32,
    len: usize,
    /// Bytes of all packed states, kept as they are added (progress reports read it).
    packed_bytes: usize,
}

impl Default for Seen {
    fn default() -> Self {
        Seen {
            packs: Packs::growing(),
            slots: vec![0; 1 << MIN_BITS],
            bits: MIN_BITS,
            len: 0,
            packed_bytes: 0,
        }
    }
}

impl Seen {
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// State number `i`, unpacked.
    #[must_use]
    pub fn get(&self, i: usize) -> State {
        unpack(self.packed(i))
    }

    /// State number `i`, packed.
    #[must_use]
    pub fn packed(&self, i: usize) -> &[u8] {
        assert!(i < self.len, "state {i} of {} visited", self.len);
        self.packs.get(i)
    }

    #[must_use]
    pub fn index_of(&self, s: &State) -> Option<usize> {
        let p = pack(s);
        self.find(&p, exact_hash(&p)).ok()
    }

    fn home(&self, hash: u64) -> usize {
        (hash >> (64 - self.bits)) as usize
    }

    /// The index of the state `p`, whose hash is `hash`; else the empty slot it would go in.
    fn find(&self, p: &[u8], hash: u64) -> Result<usize, usize> {
        let tag = hash >> 32;
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let v = self.slots[i];
            if v == 0 {
                return Err(i);
            }
            let j = (v & u64::from(u32::MAX)) as usize - 1;
            if v >> 32 == tag && self.packs.get(j) == p {
                return Ok(j);
            }
            i = (i + 1) & mask;
        }
    }

    /// Visits a packed state whose [`exact_hash`] is `hash`: its index and whether it is new
    /// (only then is it copied).
    pub fn insert_full(&mut self, p: &[u8], hash: u64) -> (usize, bool) {
        let slot = match self.find(p, hash) {
            Ok(j) => return (j, false),
            Err(slot) => slot,
        };
        let j = self.len;
        let index = u32::try_from(j + 1).expect("fewer than 2^32 - 1 states");
        self.slots[slot] = (hash >> 32) << 32 | u64::from(index);
        self.packs.push(p);
        self.len += 1;
        self.packed_bytes += p.len();
        if self.len * 4 > 3 << self.bits {
            self.grow();
        }
        (j, true)
    }

    /// Doubles the table, placing each slot by the hash bits it keeps.
    fn grow(&mut self) {
        assert!(
            self.bits < 32,
            "the exact table holds fewer than 2^32 slots"
        );
        let old = std::mem::replace(&mut self.slots, vec![0; 2 << self.bits]);
        self.bits += 1;
        let mask = self.slots.len() - 1;
        for v in old.into_iter().filter(|&v| v != 0) {
            let mut i = self.home(v & !u64::from(u32::MAX));
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = v;
        }
    }

    /// The value in the home slot of `hash` (see [`Store::preload`]).
    fn peek(&self, hash: u64) -> u64 {
        self.slots[self.home(hash)]
    }

    fn bytes(&self) -> usize {
        self.packs.bytes() + self.slots.len() * 8
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
        self.hasher()(p)
    }

    /// The function [`Store::hash`] uses, to hash without the store at hand.
    #[must_use]
    pub fn hasher(&self) -> fn(&[u8]) -> u64 {
        match self {
            Store::Exact(_) => exact_hash,
            Store::Prints(_) => fingerprint,
        }
    }

    /// Whether the packed state has been visited.
    #[must_use]
    pub fn contains(&self, p: &[u8]) -> bool {
        match self {
            Store::Exact(seen) => seen.find(p, exact_hash(p)).is_ok(),
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
    /// and the visits that follow find the lines loaded.
    pub fn preload(&self, hashes: impl Iterator<Item = u64>) {
        let mut seen = 0u64;
        for h in hashes {
            seen ^= match self {
                Store::Exact(s) => s.peek(h),
                Store::Prints(set) => set.peek(h),
            };
        }
        std::hint::black_box(seen);
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

/// The exact store's hash of a packed state: a fast hash, its bits spread by a final mix
/// (splitmix64's), since the table is indexed by the top bits.
#[must_use]
pub fn exact_hash(p: &[u8]) -> u64 {
    let mut z = FxBuildHasher.hash_one(p);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A packed state's 64-bit fingerprint: XXH3-64, whose output is specified (the same on
/// every machine and build) and whose bits are well mixed, as the collision bound assumes.
#[must_use]
pub fn fingerprint(p: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(p)
}

/// The chance that two of `n` distinct states share a fingerprint (the birthday bound,
/// n(n-1)/2 pairs over 2^64 values): the chance that fingerprint mode missed a state.
#[must_use]
pub fn collision_probability(n: usize) -> f64 {
    let n = n as f64;
    (n * (n - 1.0) / 2.0) / 2f64.powi(64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(i: u32) -> Vec<u8> {
        // Lengths vary, so that states straddle the blocks' ends at various places.
        let mut b = i.to_le_bytes().to_vec();
        b.resize(4 + (i % 7) as usize, 0xab);
        b
    }

    #[test]
    fn exact_states_keep_their_discovery_order_across_growths() {
        let mut seen = Seen::default();
        let n = 200_000;
        for i in 0..n {
            let b = bytes(i);
            assert_eq!(seen.insert_full(&b, exact_hash(&b)), (i as usize, true));
        }
        for i in (0..n).step_by(13) {
            let b = bytes(i);
            assert_eq!(seen.insert_full(&b, exact_hash(&b)), (i as usize, false));
            assert_eq!(seen.packed(i as usize), &b[..]);
        }
        assert_eq!(seen.len(), n as usize);
        assert!(
            seen.bits >= 18,
            "200,000 states at most three quarters full"
        );
        let b = bytes(n);
        assert_eq!(seen.find(&b, exact_hash(&b)).ok(), None);
    }

    #[test]
    fn equal_hashes_are_told_apart_by_their_bytes() {
        // Every state with one hash: one home slot, one tag, a run of probes.
        let mut seen = Seen::default();
        for i in 0..3000 {
            assert_eq!(seen.insert_full(&bytes(i), 42 << 40), (i as usize, true));
        }
        for i in 0..3000 {
            assert_eq!(seen.insert_full(&bytes(i), 42 << 40), (i as usize, false));
        }
        assert_eq!(seen.find(&bytes(3000), 42 << 40).ok(), None);
    }
}
