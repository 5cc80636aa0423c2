//! The breadth-first search loop.

use super::properties::{check, rank, Failure};
use super::{switches, Bound, Options, Outcome, Stats};
use crate::exec::{successors, Choice};
use crate::ir::Model;
use crate::world::State;
use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

/// The visited set: states in discovery order, so a state's index is its BFS rank.
pub(super) type Seen = IndexSet<State, FxBuildHasher>;

/// Explores every reachable state of `m` breadth-first.
///
/// Layer by layer: a failure found in a layer ends the search once that layer is complete, so
/// the counterexample is a shortest one and the choice among equally short ones does not
/// depend on the order of discovery within the layer.
///
/// # Complexity
/// Time and memory linear in the number of reachable states (within the bounds), times the
/// cost of one step.
#[must_use]
pub fn explore(m: &Model, opts: Options) -> (Outcome, Stats) {
    let mut seen = Seen::default();
    seen.insert(State::initial(m));
    let mut parents: Vec<(u32, Choice)> = vec![(u32::MAX, Choice::Tick)];
    let mut stats = Stats {
        states: 1,
        ..Stats::default()
    };
    let mut fails = Vec::new();
    let mut found: Vec<(Failure, u32)> = Vec::new();
    check(m, &seen[0], &mut fails);
    found.extend(fails.iter().map(|&f| (f, 0)));
    let mut bounds = vec![0usize, 1];
    let mut succ = Vec::new();
    // Liveness judges runs on the whole graph: keep its edges as the search finds them.
    let live = m.properties.iter().any(|p| p.kind.is_liveness());
    let mut edges: Vec<Vec<(Choice, u32)>> = Vec::new();
    while found.is_empty() {
        let depth = bounds.len() - 2;
        let (start, end) = (bounds[depth], bounds[depth + 1]);
        stats.depth = depth;
        let at_limit = opts.max_depth.is_some_and(|d| depth >= d);
        let mut deadlocks = Vec::new();
        let mut cut = false;
        for i in start..end {
            let progress = successors(m, &seen[i], &mut succ);
            if progress == 0 && !seen[i].is_final() {
                deadlocks.push((Failure::Deadlock, i as u32));
            }
            if at_limit {
                cut |= !succ.is_empty();
                continue;
            }
            stats.transitions += succ.len();
            if live {
                edges.push(Vec::with_capacity(succ.len()));
            }
            for (c, n) in succ.drain(..) {
                let (j, new) = seen.insert_full(n);
                if live {
                    edges[i].push((c, j as u32));
                }
                if !new {
                    continue;
                }
                parents.push((i as u32, c));
                check(m, &seen[j], &mut fails);
                found.extend(fails.iter().map(|&f| (f, j as u32)));
                if opts.max_states.is_some_and(|max| seen.len() >= max) && found.is_empty() {
                    stats.states = seen.len();
                    return (
                        Outcome::Incomplete {
                            bound: Bound::MaxStates(seen.len()),
                        },
                        stats,
                    );
                }
            }
        }
        stats.states = seen.len();
        if !deadlocks.is_empty() {
            found = deadlocks;
            bounds.truncate(depth + 2);
            break;
        }
        if cut {
            let bound = Bound::MaxDepth(depth);
            return (Outcome::Incomplete { bound }, stats);
        }
        if seen.len() == end {
            stats.states = seen.len();
            // Every state is known: now the runs can be judged.
            return match super::liveness::check(m, &seen, edges) {
                Some(l) => {
                    let failure = Failure::Property(l.property);
                    let path = l.path;
                    let loop_start = l.loop_start;
                    (
                        Outcome::Failed {
                            failure,
                            path,
                            loop_start,
                        },
                        stats,
                    )
                }
                None => (Outcome::Holds, stats),
            };
        }
        bounds.push(seen.len());
    }
    stats.states = seen.len();
    stats.depth = bounds.len() - 2;
    let best = found
        .iter()
        .map(|&(f, _)| rank(m, f))
        .min()
        .expect("found")
        .1;
    let targets: Vec<u32> = found
        .iter()
        .filter(|&&(f, _)| f == best)
        .map(|&(_, j)| j)
        .collect();
    let path = switches::fewest(m, &seen, &bounds, &targets);
    debug_assert_eq!(path.len(), depth_of(&bounds, targets[0] as usize));
    (
        Outcome::Failed {
            failure: best,
            path,
            loop_start: None,
        },
        stats,
    )
}

fn depth_of(bounds: &[usize], i: usize) -> usize {
    bounds.iter().rposition(|&b| b <= i).unwrap_or(0)
}
