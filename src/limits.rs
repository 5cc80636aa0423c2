//! The time and memory limits of a search, measured outside the engine (which reads neither
//! the clock nor the process's memory): a thread polls both while the search runs and raises
//! the first limit reached on the search's [`Stop`].

use crate::explore::{Bound, Options, Progress, Stop};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the watching thread looks at the clock and the memory.
const POLL: Duration = Duration::from_millis(10);
/// Growth of the resident memory past its size at the start that counts (MiB): less is noise.
const GROWTH: u64 = 8;

/// Runs `search` with `opts`'s limits watched on another thread (none when it has none).
pub fn watched<T: Send>(opts: &Options, stop: &Stop, search: impl FnOnce() -> T) -> T {
    if opts.time_limit.is_none() && opts.max_memory.is_none() {
        return search();
    }
    let started = Instant::now();
    let baseline = resident_mib().unwrap_or(0);
    if let Some(bound) = reached(opts, started, baseline) {
        stop.raise(bound); // a zero time limit: nothing to search
    }
    let (done, finished) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // Ends as soon as the search does (the sender is dropped), else polls.
            while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(POLL) {
                if let Some(bound) = reached(opts, started, baseline) {
                    stop.raise(bound);
                }
            }
        });
        let out = search();
        drop(done);
        out
    })
}

/// The first of `opts`'s limits that is reached now, if any. The memory limit counts the
/// process's resident memory, but only once it grows past what it was when the search began
/// (`baseline`, MiB): memory an earlier search freed is often kept by the allocator, and a
/// new search reuses it before the process grows, so it must not count against the new one.
/// The process thus stays within the larger of the limit and what it held before, plus one
/// poll's growth.
fn reached(opts: &Options, started: Instant, baseline: u64) -> Option<Bound> {
    if let Some(limit) = opts.time_limit {
        if started.elapsed().as_secs_f64() >= limit as f64 {
            return Some(Bound::TimeLimit(limit));
        }
    }
    let max = opts.max_memory?;
    resident_mib()
        .filter(|&used| used >= max && used > baseline + GROWTH)
        .map(|_| Bound::MaxMemory(max))
}

/// Where the resident memory cannot be read, the visited set's own size stands in for it.
pub fn store_too_big(opts: &Options, p: &Progress) -> Option<Bound> {
    let max = opts.max_memory?;
    (resident_mib().is_none() && (p.store_bytes >> 20) as u64 >= max)
        .then_some(Bound::MaxMemory(max))
}

/// The resident memory of this process in MiB, where the system tells it (Linux).
#[must_use]
pub fn resident_mib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some((pages * 4096) >> 20)
}
