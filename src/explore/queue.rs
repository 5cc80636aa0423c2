//! The fingerprint search's queue: the packed states of the layer being expanded and of the
//! next one, each kept by its parts.
//!
//! A packed state is its process count, its processes one by one, then the rest of the world
//! with the database (`codec::split`). A search meets few distinct parts (M2 with seven
//! clients: 106 bytes a state, and 49 distinct parts in the first 16 million states it
//! queued), so the queue numbers each part the first time it sees it and keeps, per state,
//! the count and one number per part (9 bytes a state there, and 8 to find it). The queue was most of
//! a breadth-first fingerprint search's memory, and on a machine where fresh memory is slow
//! to get, most of its time (docs/explorer.md, "The queue").
//!
//! A part is written as a number `2k` (part `k` of the table) or `2n + 1` followed by its
//! `n` bytes (a part not numbered: the table is full, or the part is long). A part keeps the
//! number it was given for the whole search, so the same state is always written the same
//! way; and what comes back is the packed state, byte for byte.

use super::chunked::Packs;
use crate::world::codec::{put_varint, read_varint, split};
use rustc_hash::{FxHashMap, FxHasher};
use std::collections::hash_map::Entry;
use std::hash::Hasher;

/// At most this many parts are numbered; later new parts are written whole. (A model whose
/// parts never repeat fills the table once and pays a byte a part after that.)
const MAX_PARTS: usize = 1 << 18;
/// A longer part is written whole: it is rarely met twice.
const MAX_PART_BYTES: usize = 256;

/// The layer being expanded and the next one, and the parts their states are written with.
#[derive(Default)]
pub struct Queue {
    /// States of the layer being expanded, by number within the layer.
    current: Packs,
    /// States of the next layer, as they are found.
    next: Packs,
    parts: Parts,
    /// Scratch: a state as it is written, and where its parts end.
    written: Vec<u8>,
    ends: Vec<usize>,
}

/// Every part numbered so far: its bytes and its number, both ways.
#[derive(Default)]
struct Parts {
    /// By a hash of the part's bytes: its number. (Two parts with one hash: the second is
    /// written whole.)
    number: FxHashMap<u64, u32>,
    /// Part `k` is `bytes[spans[k].0 .. spans[k].1]`.
    spans: Vec<(u32, u32)>,
    bytes: Vec<u8>,
}

impl Queue {
    /// Adds the packed state `packed` to the next layer.
    pub fn push(&mut self, packed: &[u8]) {
        split(packed, &mut self.ends);
        self.written.clear();
        self.written.extend_from_slice(&packed[..self.ends[0]]);
        for w in self.ends.windows(2) {
            self.parts.write(&packed[w[0]..w[1]], &mut self.written);
        }
        self.next.push(&self.written);
    }

    /// Appends state `i` of the current layer, packed, to `out`. It must not have been
    /// released.
    pub fn get(&self, i: usize, out: &mut Vec<u8>) {
        let written = self.current.get(i);
        let (n, mut at) = read_varint(written);
        out.extend_from_slice(&written[..at]);
        for _ in 0..=n {
            let (tag, len) = read_varint(&written[at..]);
            at += len;
            let k = usize::try_from(tag >> 1).expect("a part's length or number fits");
            if tag & 1 == 0 {
                out.extend_from_slice(self.parts.part(k as u32));
            } else {
                out.extend_from_slice(&written[at..at + k]);
                at += k;
            }
        }
        debug_assert_eq!(at, written.len(), "a written state is read whole");
    }

    /// Frees what holds only states of the current layer before number `i`.
    pub fn release_before(&mut self, i: usize) {
        self.current.release_before(i);
    }

    /// The next layer becomes the current one.
    pub fn advance(&mut self) {
        self.current = std::mem::take(&mut self.next);
    }

    /// Bytes held: both layers and the parts.
    #[must_use]
    pub fn bytes(&self) -> usize {
        let parts = &self.parts;
        self.current.bytes()
            + self.next.bytes()
            + parts.bytes.capacity()
            + parts.spans.capacity() * 8
            + parts.number.capacity() * (std::mem::size_of::<(u64, u32)>() + 1)
    }
}

impl Parts {
    /// The bytes of part number `k`.
    fn part(&self, k: u32) -> &[u8] {
        let (start, end) = self.spans[k as usize];
        &self.bytes[start as usize..end as usize]
    }

    /// Writes `part` to `out`: its number (given now if it has none and may get one), or the
    /// part whole.
    fn write(&mut self, part: &[u8], out: &mut Vec<u8>) {
        let mut h = FxHasher::default();
        h.write(part);
        match self.number.entry(h.finish()) {
            Entry::Occupied(e) => {
                let k = *e.get();
                if same(self.part(k), part) {
                    put_varint(out, u64::from(k) << 1);
                    return;
                }
            }
            Entry::Vacant(e) if self.spans.len() < MAX_PARTS && part.len() <= MAX_PART_BYTES => {
                let k = u32::try_from(self.spans.len()).expect("MAX_PARTS fits in 32 bits");
                let start = u32::try_from(self.bytes.len()).expect("the parts fit in 4 GiB");
                self.bytes.extend_from_slice(part);
                self.spans.push((start, start + part.len() as u32));
                e.insert(k);
                put_varint(out, u64::from(k) << 1);
                return;
            }
            Entry::Vacant(_) => {}
        }
        put_varint(out, (part.len() as u64) << 1 | 1);
        out.extend_from_slice(part);
    }
}

/// Whether two parts are the same bytes. Parts are short (about ten bytes), and comparing
/// them eight bytes at a time here costs less than a call to the library's comparison.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a == b;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    // Eight bytes at a time, the last eight overlapping the ones before.
    (0..n - 8).step_by(8).all(|at| word(a, at) == word(b, at)) && word(a, n - 8) == word(b, n - 8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::codec::pack;
    use crate::world::State;

    const MODEL: &str = r#"model "Compare-and-set"
about "Three clients buy two units, reading again when they lose the race."
db postgres isolation read_committed
table sku (id int primary key, stock int)
row sku (1, 2)
process client[3] {
  repeat 2 {
    select stock from sku where id = 1 into $s
    if $s = 0 { return "sold out" }
    update sku set stock = $s - 1 where id = 1 and stock = $s into $n
    if $n = 1 { return "bought" }
  }
}
invariant never_negative: sku[1].stock >= 0
expect holds
"#;

    /// Layers of the model's breadth-first search, every state packed (repeats left in).
    fn layers() -> Vec<Vec<Vec<u8>>> {
        let m = crate::lang::parse("cas", MODEL).expect("the model parses");
        let mut layer = vec![State::initial(&m)];
        let (mut out, mut succ) = (Vec::new(), Vec::new());
        while !layer.is_empty() {
            out.push(layer.iter().map(|s| pack(s).into_vec()).collect());
            let mut next = Vec::new();
            for s in &layer {
                crate::exec::successors(&m, s, &mut succ);
                next.extend(succ.drain(..).map(|(_, n)| n));
            }
            layer = next;
        }
        out
    }

    #[test]
    fn states_come_back_byte_for_byte_across_layers() {
        let layers = layers();
        assert!(layers.len() > 5, "{} layers", layers.len());
        let mut q = Queue::default();
        let mut out = Vec::new();
        q.push(&layers[0][0]);
        q.advance();
        for (depth, layer) in layers.iter().enumerate() {
            for (i, s) in layer.iter().enumerate() {
                out.clear();
                q.get(i, &mut out);
                assert_eq!(&out, s, "state {i} of layer {depth}");
            }
            q.release_before(layer.len());
            for s in layers.get(depth + 1).into_iter().flatten() {
                q.push(s);
            }
            q.advance();
        }
        // Every state shares its parts with others: the states keep a few bytes each.
        let (states, bytes) = layers
            .iter()
            .flatten()
            .fold((0, 0), |(n, b), s| (n + 1, b + s.len()));
        assert!(
            q.parts.bytes.len() * 4 < bytes,
            "{} of {bytes}",
            q.parts.bytes.len()
        );
        assert!(states > 100, "{states} states");
    }

    #[test]
    fn parts_are_the_same_only_when_every_byte_is() {
        for n in [0, 1, 7, 8, 9, 15, 16, 17, 40] {
            let a: Vec<u8> = (0..n as u8).collect();
            assert!(same(&a, &a.clone()), "{n} bytes");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x40;
                assert!(!same(&a, &b), "{n} bytes, byte {i} differs");
            }
            assert!(!same(&a, &a[..n.saturating_sub(1)]) || n == 0);
        }
    }

    #[test]
    fn a_part_whose_hash_is_taken_is_written_whole() {
        let mut p = Parts::default();
        let mut out = Vec::new();
        p.write(&[1, 2, 3], &mut out);
        // Part 0's hash now stands for other bytes, as two parts with one hash would.
        let mut h = FxHasher::default();
        h.write(&[5, 6]);
        p.number.insert(h.finish(), 0);
        out.clear();
        p.write(&[5, 6], &mut out);
        assert_eq!(out, [5, 5, 6], "length 2, whole");
        assert_eq!(p.spans.len(), 1);
    }

    #[test]
    fn a_full_table_or_a_long_part_writes_the_part_whole() {
        let mut p = Parts::default();
        let long = vec![7u8; MAX_PART_BYTES + 1];
        let mut out = Vec::new();
        p.write(&long, &mut out);
        assert_eq!(p.spans.len(), 0, "a long part gets no number");
        assert_eq!(out.len(), 2 + long.len());
        p.spans.resize(MAX_PARTS, (0, 0));
        out.clear();
        p.write(&[1, 2, 3], &mut out);
        assert_eq!(out, [7, 1, 2, 3], "length 3, whole");
    }
}
