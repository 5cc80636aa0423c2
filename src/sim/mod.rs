//! The simulator: the model's own steps under a workload, timed by drawn latencies, measured.
//!
//! A run is a discrete-event loop over `exec::apply` (see [`run`]); runs are independent,
//! seeded from the user's seed and their number, spread over threads and merged in run order,
//! so the figures are the same whatever the thread count.

pub mod observer;
pub mod program;
pub mod run;
pub mod sample;
mod strikes;
pub mod tally;

use crate::exec::Choice;
use crate::explore::Stop;
use crate::explore::Failure;
use crate::ir::Model;

pub use run::Bounds;
pub use tally::{GroupTally, Tally};

/// How far a simulation has got, for a progress line: steps taken and runs done, summed
/// over the threads (read from another thread while it runs; the figures never read it).
#[derive(Debug, Default)]
pub struct Progress {
    /// Steps taken so far (told every few thousand steps, and at the end of each run).
    pub steps: std::sync::atomic::AtomicU64,
    /// Runs done.
    pub runs: std::sync::atomic::AtomicU64,
}

/// What to simulate.
#[derive(Clone, Copy, Debug)]
pub struct SimOptions {
    pub seed: u64,
    pub runs: u64,
    pub bounds: Bounds,
    pub threads: usize,
}

/// The figures of every run, merged, and the first violation met.
#[derive(Clone, Debug)]
pub struct Report {
    pub tally: Tally,
    /// The first run (by number) that broke a property: its number, the failure, its path.
    pub violation: Option<(u64, Failure, Vec<Choice>)>,
    /// Runs that broke a property.
    pub violated_runs: u64,
    /// Requests still in flight when their run was cut off (past the horizon and the drain,
    /// or at the step limit).
    pub unfinished: u64,
    /// Runs done (fewer than asked when stopped from outside).
    pub runs: u64,
}

/// Runs `opts.runs` runs of `m` and merges them in run order.
#[must_use]
pub fn simulate(m: &Model, opts: SimOptions, stop: &Stop, progress: &Progress) -> Report {
    let plan = program::Plan::new(m);
    let threads = opts.threads.clamp(1, 64).min(opts.runs.max(1) as usize);
    let results: Vec<(u64, run::RunResult)> = if threads == 1 {
        (0..opts.runs)
            .map_while(|r| one(m, &plan, opts, r, (stop, progress)))
            .collect()
    } else {
        let mut all: Vec<(u64, run::RunResult)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let plan = &plan;
                    scope.spawn(move || {
                        (t as u64..opts.runs)
                            .step_by(threads)
                            .map_while(|r| one(m, plan, opts, r, (stop, progress)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        all.sort_by_key(|(r, _)| *r);
        // Runs done on every thread: a stop keeps only the unbroken prefix.
        let prefix = all
            .iter()
            .enumerate()
            .take_while(|(i, (r, _))| *i as u64 == *r)
            .count();
        all.truncate(prefix);
        all
    };
    merge(m, results)
}

fn one(
    m: &Model,
    plan: &program::Plan,
    opts: SimOptions,
    r: u64,
    (stop, progress): (&Stop, &Progress),
) -> Option<(u64, run::RunResult)> {
    if stop.raised().is_some() {
        return None;
    }
    let rng = sample::Sampler::new(opts.seed, r);
    let res = run::run(m, plan, rng, opts.bounds, (stop, progress))?;
    progress
        .runs
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Some((r, res))
}

fn merge(m: &Model, results: Vec<(u64, run::RunResult)>) -> Report {
    let mut report = Report {
        tally: Tally::new(m.groups.len(), m.mutexes.len()),
        violation: None,
        violated_runs: 0,
        unfinished: 0,
        runs: results.len() as u64,
    };
    for (r, res) in results {
        report.tally.merge(&res.tally);
        report.unfinished += res.unfinished;
        if let Some((f, path)) = res.violation {
            report.violated_runs += 1;
            if report.violation.is_none() {
                report.violation = Some((r, f, path));
            }
        }
    }
    report
}
