//! Append-only storage in fixed-size chunks, for what a fingerprint search keeps per state
//! (parent links) and per frontier state (packed bytes). A doubling vector holds up to twice
//! what it stores, and three times while it moves; chunks grow without moving anything, and
//! a frontier's chunks are released as soon as the search has read them.

/// Values per chunk of [`Chunked`].
const CHUNK: usize = 1 << 16;

/// Bytes per block of [`Packs`] (a longer packed state gets a block of its own size).
const BLOCK: usize = 1 << 20;

/// Bytes in the first block of [`Packs::growing`].
const FIRST_BLOCK: usize = 1 << 12;

/// Values appended one by one and read by index.
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T: Copy> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Copy> Chunked<T> {
    pub fn push(&mut self, v: T) {
        if self.len % CHUNK == 0 {
            // The first chunk grows as it fills (a small search stays small); the rest are
            // taken whole.
            let chunk = if self.chunks.is_empty() {
                Vec::new()
            } else {
                Vec::with_capacity(CHUNK)
            };
            self.chunks.push(chunk);
        }
        self.chunks.last_mut().expect("a chunk was added").push(v);
        self.len += 1;
    }

    /// Value number `i` (< `len`).
    #[must_use]
    pub fn get(&self, i: usize) -> T {
        self.chunks[i / CHUNK][i % CHUNK]
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }
}

/// Per state, in the order states are found: the state it was found from and the place of
/// the transition among that state's transitions. Six bytes a state: a place too large for
/// 16 bits (a state with 65,535 transitions or more) is kept in a side map.
#[derive(Default)]
pub struct Links {
    parents: Chunked<u32>,
    places: Chunked<u16>,
    wide: rustc_hash::FxHashMap<u32, usize>,
}

impl Links {
    pub fn push(&mut self, parent: u32, place: usize) {
        let short = u16::try_from(place).unwrap_or(u16::MAX);
        if short == u16::MAX {
            self.wide.insert(self.parents.len() as u32, place);
        }
        self.parents.push(parent);
        self.places.push(short);
    }

    /// The link of state `j`: its parent and the place of the transition.
    #[must_use]
    pub fn get(&self, j: u32) -> (u32, usize) {
        let short = self.places.get(j as usize);
        let place = if short == u16::MAX {
            self.wide[&j]
        } else {
            usize::from(short)
        };
        (self.parents.get(j as usize), place)
    }

    #[must_use]
    pub fn bytes(&self) -> usize {
        self.parents.len() * 6 + self.wide.capacity() * 16
    }
}

/// Packed states appended one after another into large blocks, read by position. The blocks
/// before a position can be released once the states there have been read.
pub struct Packs {
    /// Bytes of the first block: [`BLOCK`], or less for [`Packs::growing`].
    first: usize,
    blocks: Vec<Vec<u8>>,
    /// Per state: its block and where it starts there (it ends where the next one in the
    /// same block starts, or at the end of the block).
    at: Chunked<(u32, u32)>,
}

impl Default for Packs {
    /// Blocks of [`BLOCK`] bytes: the frontier, which is made afresh for every layer. (Blocks
    /// of many sizes, made and freed layer after layer, left the allocator holding more.)
    fn default() -> Self {
        Packs {
            first: BLOCK,
            blocks: Vec::new(),
            at: Chunked::default(),
        }
    }
}

impl Packs {
    /// Blocks from [`FIRST_BLOCK`] bytes doubling up to [`BLOCK`]: the exact store, made
    /// once per search, so that a small search does not take a large block for a few states.
    #[must_use]
    pub fn growing() -> Self {
        Packs {
            first: FIRST_BLOCK,
            ..Packs::default()
        }
    }

    pub fn push(&mut self, p: &[u8]) {
        let fits = self
            .blocks
            .last()
            .is_some_and(|b| b.len() + p.len() <= b.capacity());
        if !fits {
            let size = self
                .blocks
                .last()
                .map_or(self.first, |b| (2 * b.capacity()).clamp(self.first, BLOCK));
            self.blocks.push(Vec::with_capacity(size.max(p.len())));
        }
        let b = self.blocks.len() - 1;
        self.at.push((b as u32, self.blocks[b].len() as u32));
        self.blocks[b].extend_from_slice(p);
    }

    /// State number `i`, which must not have been released.
    #[must_use]
    pub fn get(&self, i: usize) -> &[u8] {
        let (b, start) = self.at.get(i);
        let block = &self.blocks[b as usize];
        let end = match (i + 1 < self.at.len()).then(|| self.at.get(i + 1)) {
            Some((next, s)) if next == b => s as usize,
            _ => block.len(),
        };
        &block[start as usize..end]
    }

    /// Frees the blocks that hold only states before number `i`.
    pub fn release_before(&mut self, i: usize) {
        let first_kept = if i < self.at.len() {
            self.at.get(i).0 as usize
        } else {
            self.blocks.len()
        };
        for block in &mut self.blocks[..first_kept] {
            *block = Vec::new();
        }
    }

    /// Bytes held (blocks and positions).
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.blocks.iter().map(Vec::capacity).sum::<usize>()
            + self.at.len() * std::mem::size_of::<(u32, u32)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_values_come_back_by_index_across_chunks() {
        let mut c = Chunked::default();
        for i in 0..(2 * CHUNK + 5) as u32 {
            c.push(i);
        }
        assert_eq!(c.len(), 2 * CHUNK + 5);
        assert_eq!(c.get(0), 0);
        assert_eq!(c.get(CHUNK), CHUNK as u32);
        assert_eq!(c.get(2 * CHUNK + 4), (2 * CHUNK + 4) as u32);
    }

    #[test]
    fn links_keep_places_of_any_size() {
        let mut l = Links::default();
        let places = [0, 1, 65_534, 65_535, 65_536, 1 << 20, 7];
        for (j, &place) in places.iter().enumerate() {
            l.push(j as u32 * 3, place);
        }
        for (j, &place) in places.iter().enumerate() {
            assert_eq!(l.get(j as u32), (j as u32 * 3, place));
        }
    }

    #[test]
    fn packs_come_back_whole_and_released_blocks_are_freed() {
        for p in [Packs::default(), Packs::growing()] {
            packs_come_back_whole_and_released_blocks_are_freed_in(p);
        }
    }

    fn packs_come_back_whole_and_released_blocks_are_freed_in(mut p: Packs) {
        let states: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| vec![(i % 251) as u8; 1 + (i as usize * 7919) % 997])
            .collect();
        let big = vec![7u8; BLOCK + 3];
        for s in &states {
            p.push(s);
        }
        p.push(&big);
        p.push(&[]);
        for (i, s) in states.iter().enumerate() {
            assert_eq!(p.get(i), &s[..], "state {i}");
        }
        assert_eq!(p.get(3000), &big[..]);
        assert_eq!(p.get(3001), &[] as &[u8]);
        let before = p.bytes();
        p.release_before(2000);
        for (i, s) in states.iter().enumerate().skip(2000) {
            assert_eq!(p.get(i), &s[..], "state {i} after the release");
        }
        // The big state has a block of its own: every block before it goes, and what is
        // left is that block (the empty state after it fits there) and the positions.
        p.release_before(3000);
        assert!(p.bytes() < before);
        assert!(
            p.bytes() <= big.len() + 3002 * 8,
            "{} of {before}",
            p.bytes()
        );
        assert_eq!(p.get(3000), &big[..]);
        assert_eq!(p.get(3001), &[] as &[u8]);
    }
}
