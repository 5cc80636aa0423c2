//! Expanding a batch of states on several threads, with results in batch order.
//!
//! The only structures threads share are [`Chunks`] (an atomic cursor that hands out ranges
//! of the batch) and [`Slots`] (one result cell per chunk). The visited set is never shared:
//! the search's own thread merges the results in order, so the outcome does not depend on
//! scheduling. With the features `loom` and `shuttle` both types are built on those crates'
//! primitives and tested under their schedulers (`tests` below).

use std::ops::Range;

#[cfg(feature = "loom")]
use loom::sync::{atomic::AtomicUsize, atomic::Ordering, Mutex};
#[cfg(all(feature = "shuttle", not(feature = "loom")))]
use shuttle::sync::{atomic::AtomicUsize, atomic::Ordering, Mutex};
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
use std::sync::{atomic::AtomicUsize, atomic::Ordering, Mutex};

/// Hands out the chunks of `0..len`, each exactly once, in increasing order.
#[derive(Debug)]
pub struct Chunks {
    next: AtomicUsize,
    len: usize,
    size: usize,
}

impl Chunks {
    #[must_use]
    pub fn new(len: usize, size: usize) -> Self {
        Chunks {
            next: AtomicUsize::new(0),
            len,
            size: size.max(1),
        }
    }

    /// How many chunks there are.
    #[must_use]
    pub fn count(&self) -> usize {
        self.len.div_ceil(self.size)
    }

    /// The next unclaimed chunk: its number and its range; `None` when all are taken.
    pub fn claim(&self) -> Option<(usize, Range<usize>)> {
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        let start = k.checked_mul(self.size)?;
        (start < self.len).then(|| (k, start..(start + self.size).min(self.len)))
    }
}

/// One result cell per chunk, filled by whichever thread ran the chunk.
#[derive(Debug)]
pub struct Slots<T> {
    cells: Mutex<Vec<Option<T>>>,
}

impl<T> Slots<T> {
    #[must_use]
    pub fn new(n: usize) -> Self {
        Slots {
            cells: Mutex::new((0..n).map(|_| None).collect()),
        }
    }

    /// Stores chunk `k`'s result. Panics if the chunk already has one (a chunk runs once).
    pub fn put(&self, k: usize, value: T) {
        let mut cells = self
            .cells
            .lock()
            .expect("no thread panics holding the slots");
        assert!(cells[k].is_none(), "chunk {k} ran twice");
        cells[k] = Some(value);
    }

    /// Every chunk's result, in chunk order. Panics if a chunk has none.
    pub fn into_results(self) -> Vec<T> {
        self.cells
            .into_inner()
            .expect("no thread panicked")
            .into_iter()
            .enumerate()
            .map(|(k, v)| v.unwrap_or_else(|| panic!("chunk {k} never ran")))
            .collect()
    }
}

/// Runs `f` over `0..len` in chunks of `size` on `threads` threads (the caller's included),
/// while the calling thread first runs `first`: the other threads start on the chunks at
/// once, and the calling thread joins them when `first` is done. Returns the chunks'
/// results, in order, and what `first` returned. On one thread, `first` runs before every
/// chunk.
///
/// Each thread hands one workspace to every chunk it runs (buffers, caches: what a chunk
/// leaves there must not change another chunk's result): the calling thread uses `mine`,
/// which the caller keeps from one call to the next; every other thread makes its own with
/// `init`.
///
/// With the feature `loom` or `shuttle` the search itself runs on one thread: those crates'
/// primitives only work inside their own schedulers, where the tests below use them.
pub fn map_chunks_beside<T, W, I, F, R>(
    threads: usize,
    len: usize,
    size: usize,
    mine: &mut W,
    init: I,
    f: F,
    first: impl FnOnce() -> R,
) -> (Vec<T>, R)
where
    T: Send,
    I: Fn() -> W + Sync,
    F: Fn(&mut W, Range<usize>) -> T + Sync,
{
    let chunks = Chunks::new(len, size);
    // Helpers: as many as there are chunks for, the calling thread aside; none for a single
    // chunk, which costs less than starting a thread.
    let helpers = match chunks.count() {
        _ if cfg!(any(feature = "loom", feature = "shuttle")) => 0,
        0 | 1 => 0,
        n => threads.saturating_sub(1).min(n),
    };
    if helpers == 0 {
        let before = first();
        let results = (0..chunks.count())
            .map(|k| f(mine, k * chunks.size..((k + 1) * chunks.size).min(len)))
            .collect();
        return (results, before);
    }
    let slots = Slots::new(chunks.count());
    let work = |w: &mut W| {
        while let Some((k, range)) = chunks.claim() {
            slots.put(k, f(w, range));
        }
    };
    let before = std::thread::scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|| work(&mut init()));
        }
        let before = first();
        work(mine);
        before
    });
    (slots.into_results(), before)
}

#[cfg(all(test, not(any(feature = "loom", feature = "shuttle"))))]
mod tests {
    use super::*;

    /// The chunks alone, with nothing for the calling thread to do first.
    fn map_chunks<T: Send, W>(
        threads: usize,
        len: usize,
        size: usize,
        mine: &mut W,
        init: impl Fn() -> W + Sync,
        f: impl Fn(&mut W, Range<usize>) -> T + Sync,
    ) -> Vec<T> {
        map_chunks_beside(threads, len, size, mine, init, f, || ()).0
    }

    #[test]
    fn results_come_back_in_order_whatever_the_thread_count() {
        let squares = |threads| {
            let sum = |(): &mut (), r: Range<usize>| r.map(|x| x * x).sum::<usize>();
            map_chunks(threads, 1000, 7, &mut (), || (), sum)
        };
        let one = squares(1);
        for threads in [2, 3, 8] {
            assert_eq!(squares(threads), one);
        }
        assert_eq!(one.len(), 1000usize.div_ceil(7));
        assert!(map_chunks(2, 0, 7, &mut (), || (), |(), r| r.len()).is_empty());
    }

    #[test]
    fn the_other_threads_work_while_the_caller_runs_its_first_job() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let done = AtomicUsize::new(0);
        let f = |(): &mut (), r: Range<usize>| {
            done.fetch_add(1, Ordering::SeqCst);
            r.sum::<usize>()
        };
        // The first job waits until a helper has finished a chunk: it cannot return unless
        // the helpers run beside it.
        let first = || {
            let mut waited = 0u64;
            while done.load(Ordering::SeqCst) == 0 {
                waited += 1;
                assert!(waited < 100_000_000, "no helper ran beside");
                std::thread::yield_now();
            }
            "merged"
        };
        let (sums, before) = map_chunks_beside(2, 100, 7, &mut (), || (), f, first);
        assert_eq!(before, "merged");
        let want: Vec<usize> = (0..100usize.div_ceil(7))
            .map(|k| (k * 7..((k + 1) * 7).min(100)).sum())
            .collect();
        assert_eq!(sums, want);
        // On one thread, or with a single chunk, no thread is started and the first job
        // comes before every chunk.
        for (threads, len) in [(1, 10), (2, 3)] {
            let done = AtomicUsize::new(0);
            let count = |(): &mut (), _: Range<usize>| done.fetch_add(1, Ordering::SeqCst);
            let no_thread = || panic!("a thread was started");
            let first = || done.load(Ordering::SeqCst);
            let (_, seen) = map_chunks_beside(threads, len, 3, &mut (), no_thread, count, first);
            assert_eq!(seen, 0);
        }
    }

    #[test]
    fn the_caller_keeps_its_workspace_and_each_other_thread_makes_one() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        for threads in [1, 3] {
            let made = AtomicUsize::new(0);
            let init = || {
                made.fetch_add(1, Ordering::Relaxed);
                0usize
            };
            // Each chunk reports how many chunks its thread's workspace ran, itself included.
            let mut mine = 0usize;
            let seen = map_chunks(threads, 1000, 7, &mut mine, init, |ran, _| {
                *ran += 1;
                *ran
            });
            assert!(made.load(Ordering::Relaxed) < threads.max(1));
            assert_eq!(seen.len(), 1000usize.div_ceil(7));
            if threads == 1 {
                assert_eq!(seen, (1..=seen.len()).collect::<Vec<_>>());
                assert_eq!(mine, seen.len());
            }
            // The caller's workspace goes on counting in the next call.
            let again = map_chunks(1, 14, 7, &mut mine, init, |ran, _| {
                *ran += 1;
                *ran
            });
            assert_eq!(again.first(), Some(&(mine - 1)));
        }
    }
}

/// The chunk cursor and the result slots under loom's scheduler: with every interleaving of
/// two workers (and of three with at most two preemptions, as loom advises for more threads),
/// each chunk runs exactly once and every result lands in its own slot. Run with
/// `cargo test --lib --features loom parallel`.
#[cfg(all(test, feature = "loom"))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    fn workers(threads: usize, len: usize, size: usize, preemptions: Option<usize>) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = preemptions;
        builder.check(move || {
            let chunks = Arc::new(Chunks::new(len, size));
            let slots = Arc::new(Slots::new(chunks.count()));
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let (chunks, slots) = (Arc::clone(&chunks), Arc::clone(&slots));
                    loom::thread::spawn(move || {
                        while let Some((k, r)) = chunks.claim() {
                            slots.put(k, r);
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            let slots = Arc::try_unwrap(slots).expect("workers are done");
            let got = slots.into_results();
            let want: Vec<_> = (0..chunks.count())
                .map(|k| k * size..((k + 1) * size).min(len))
                .collect();
            assert_eq!(got, want);
        });
    }

    #[test]
    fn two_workers_share_three_chunks() {
        workers(2, 5, 2, None);
    }

    #[test]
    fn three_workers_share_two_chunks() {
        workers(3, 4, 2, Some(2));
    }
}

/// The same structures under shuttle's randomized and PCT schedulers, with more workers and
/// chunks than loom can explore exhaustively. Run with `cargo test --lib --features shuttle
/// parallel`.
#[cfg(all(test, feature = "shuttle", not(feature = "loom")))]
mod shuttle_tests {
    use super::*;
    use shuttle::sync::Arc;

    fn workers(threads: usize, len: usize, size: usize) {
        let chunks = Arc::new(Chunks::new(len, size));
        let slots = Arc::new(Slots::new(chunks.count()));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (chunks, slots) = (Arc::clone(&chunks), Arc::clone(&slots));
                shuttle::thread::spawn(move || {
                    while let Some((k, r)) = chunks.claim() {
                        slots.put(k, r.sum::<usize>());
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let slots = Arc::try_unwrap(slots).expect("workers are done");
        let got = slots.into_results();
        let want: Vec<usize> = (0..chunks.count())
            .map(|k| (k * size..((k + 1) * size).min(len)).sum())
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn eight_workers_random_schedules() {
        shuttle::check_random(|| workers(8, 100, 3), 2000);
    }

    #[test]
    fn six_workers_pct_schedules() {
        shuttle::check_pct(|| workers(6, 50, 4), 2000, 3);
    }
}
