//! The set of visited fingerprints: one open-addressed table of 64-bit values in fixed-size
//! chunks, indexed by a fingerprint's top bits, probed linearly and never wrapping around.
//!
//! Indexing by the top bits keeps the table ordered by home slot, so growing it is one pass
//! in slot order: the entries of an old chunk land in the new table's chunks at about twice
//! its position, and the old chunk is freed as soon as it is read. A growing table thus holds
//! about its new size, never the old and the new tables whole at once (a hash set that
//! doubles by copying needs 1.5 times its new size for a moment, and that moment was the
//! peak of a breadth-first fingerprint search). Chunks are allocated when first written.

/// Slots per chunk, as a power of two (1 MiB chunks).
const CHUNK_BITS: u32 = 17;
/// Home slots of a new table, as a power of two.
const MIN_BITS: u32 = 10;

/// Fingerprints, each kept once. The value 0 marks an empty slot: a fingerprint of 0 is kept
/// as 1.
pub struct Prints {
    /// The table has `1 << bits` home slots; a run of entries may go on past them into
    /// further chunks (there is no wrap-around).
    bits: u32,
    /// Slots per chunk, as a power of two: `min(CHUNK_BITS, bits)`.
    chunk_bits: u32,
    /// A chunk of length 0 has not been written yet: all its slots are empty.
    chunks: Vec<Box<[u64]>>,
    len: usize,
}

impl Default for Prints {
    fn default() -> Self {
        Prints {
            bits: MIN_BITS,
            chunk_bits: MIN_BITS,
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl Prints {
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    #[must_use]
    pub fn contains(&self, fp: u64) -> bool {
        self.find(nonzero(fp)).1
    }

    /// Adds a fingerprint; whether it is new.
    pub fn insert(&mut self, fp: u64) -> bool {
        let fp = nonzero(fp);
        let (i, found) = self.find(fp);
        if found {
            return false;
        }
        self.put(i, fp);
        self.len += 1;
        // At most three quarters of the home slots are used: a lookup then probes a few
        // slots on average, within one or two cache lines.
        if self.len * 4 > 3 << self.bits {
            self.grow();
        }
        true
    }

    /// The value in `fp`'s home slot (0 if its chunk is not written): a plain read, which
    /// brings the slot's cache line in before `fp` is inserted.
    #[must_use]
    pub fn peek(&self, fp: u64) -> u64 {
        let i = self.home(nonzero(fp));
        let (c, offset) = (i >> self.chunk_bits, i & ((1 << self.chunk_bits) - 1));
        self.chunks
            .get(c)
            .and_then(|chunk| chunk.get(offset))
            .copied()
            .unwrap_or(0)
    }

    /// Bytes of the chunks written so far.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.chunks.iter().map(|c| c.len() * 8).sum()
    }

    fn home(&self, fp: u64) -> usize {
        (fp >> (64 - self.bits)) as usize
    }

    /// The slot that holds `fp`, or the empty slot that would: its index and whether `fp`
    /// is there.
    fn find(&self, fp: u64) -> (usize, bool) {
        let mut i = self.home(fp);
        loop {
            let (c, offset) = (i >> self.chunk_bits, i & ((1 << self.chunk_bits) - 1));
            let Some(chunk) = self.chunks.get(c).filter(|c| !c.is_empty()) else {
                return (i, false);
            };
            for (k, &v) in chunk[offset..].iter().enumerate() {
                if v == fp || v == 0 {
                    return (i + k, v == fp);
                }
            }
            i = (c + 1) << self.chunk_bits;
        }
    }

    /// Writes `fp` into slot `i`, allocating its chunk if needed.
    fn put(&mut self, i: usize, fp: u64) {
        let c = i >> self.chunk_bits;
        if c >= self.chunks.len() {
            self.chunks.resize_with(c + 1, Box::default);
        }
        if self.chunks[c].is_empty() {
            self.chunks[c] = vec![0; 1 << self.chunk_bits].into_boxed_slice();
        }
        self.chunks[c][i & ((1 << self.chunk_bits) - 1)] = fp;
    }

    /// Doubles the home slots, moving the entries chunk by chunk in slot order and freeing
    /// each old chunk once it is read.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.chunks);
        self.bits += 1;
        self.chunk_bits = self.bits.min(CHUNK_BITS);
        for chunk in old {
            for &fp in chunk.iter().filter(|&&v| v != 0) {
                let (i, _) = self.find(fp);
                self.put(i, fp);
            }
        }
    }
}

fn nonzero(fp: u64) -> u64 {
    fp.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spread of 64-bit values (splitmix64), as fingerprints are.
    fn spread(i: u64) -> u64 {
        let mut z = i
            .wrapping_add(0x9e37_79b9_7f4a_7c15)
            .wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn every_fingerprint_is_kept_once_across_growths() {
        let mut p = Prints::default();
        let n = 300_000u64;
        for i in 0..n {
            assert!(p.insert(spread(i)), "{i} is new");
        }
        for i in (0..n).step_by(7) {
            assert!(!p.insert(spread(i)), "{i} is known");
        }
        assert_eq!(p.len(), n as usize);
        assert!((0..n).all(|i| p.contains(spread(i))));
        assert!((n..n + 10_000).all(|i| !p.contains(spread(i))));
        // 300,000 entries at most three quarters full: 2^19 home slots, in 1 MiB chunks.
        assert_eq!(p.bits, 19);
        assert!(
            p.bytes() <= (1 << 19) * 8 + (1 << 20),
            "{} bytes",
            p.bytes()
        );
    }

    #[test]
    fn zero_and_clustered_fingerprints_are_kept() {
        let mut p = Prints::default();
        // Zero is kept as one; values with equal top bits all share one home slot, and the
        // largest ones run past the last home slot into slots of their own.
        assert!(p.insert(0));
        assert!(!p.insert(1));
        let top = u64::MAX - 5000;
        for v in top..=u64::MAX {
            assert!(p.insert(v));
        }
        for v in (1u64..=3000).map(|k| k << 40) {
            assert!(p.insert(v));
        }
        assert_eq!(p.len(), 1 + 5001 + 3000);
        assert!(p.contains(0) && p.contains(1));
        assert!((top..=u64::MAX).all(|v| p.contains(v)));
        assert!((1u64..=3000).all(|k| p.contains(k << 40)));
        assert!(!p.contains(top - 1) && !p.contains(2));
    }

    #[test]
    fn peeking_reads_the_home_slot_and_changes_nothing() {
        let mut p = Prints::default();
        assert_eq!(p.peek(spread(1)), 0, "no chunk yet");
        assert!(p.insert(spread(1)));
        assert_eq!(p.peek(spread(1)), spread(1));
        assert_eq!(p.peek(0), 0, "zero is looked up as one, which is not there");
        assert_eq!(p.len(), 1);
    }
}
