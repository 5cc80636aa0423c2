//! Depth-first search: memory for the visited set and one path only (no layers, no parent
//! links), for state spaces too large to search breadth-first. Safety properties and
//! deadlocks only; the counterexample is the path on the stack, shortened (`shorten.rs`),
//! exact but not proven shortest.

use super::coverage::Coverage;
use super::properties::{check, Failure};
use super::reduce::{Reducer, Scratch};
use super::shorten::shorten;
use super::store::{pack, Store};
use super::{rules, Bound, Options, Outcome, Progress, Stats, Stop};
use crate::exec::Choice;
use crate::ir::Model;
use crate::world::State;

/// One state on the stack: the transitions left to try, and the one that led here.
struct Frame {
    succ: std::vec::IntoIter<(Choice, State)>,
    via: Choice,
}

/// Explores every reachable state of `m` depth-first, in choice order.
pub fn search(
    m: &Model,
    opts: Options,
    monitor: &mut dyn FnMut(&Progress) -> Option<Bound>,
    stop: &Stop,
) -> (Outcome, Stats, Coverage) {
    let r = Reducer::new(m, &opts);
    let mut stats = Stats {
        fingerprints: opts.fingerprints,
        dfs: true,
        ..r.active()
    };
    let mut store = Store::new(opts.fingerprints);
    let mut sc = Scratch::default();
    let mut fails = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut cut = false;
    let init = r.initial();
    let packed = pack(&init);
    store.insert(&packed, store.hash(&packed));
    // A state enters the visited set when it is found, and is expanded right after.
    let mut next = Some((Choice::Tick, init));
    loop {
        if let Some((via, s)) = next.take() {
            if let Some(bound) = stop.raised() {
                return (Outcome::Incomplete { bound }, stats, sc.cover);
            }
            stats.states = store.len();
            check(m, &s, &mut fails);
            let mut succ = Vec::new();
            let Some(exp) = r.expand_until(&s, true, &mut sc, &mut succ, Some(stop)) else {
                let bound = stop.raised().expect("only a limit cuts an expansion short");
                return (Outcome::Incomplete { bound }, stats, sc.cover);
            };
            let deadlock = rules::deadlocked(&exp, s.is_final());
            if let Some(&f) = fails.first().or(deadlock.then_some(&Failure::Deadlock)) {
                let path: Vec<Choice> = if stack.is_empty() {
                    Vec::new() // the initial state fails
                } else {
                    stack.iter().skip(1).map(|f| f.via).chain([via]).collect()
                };
                return (shortened(m, r.failed(f, &path)), stats, sc.cover);
            }
            if rules::redo_in_full(&exp, || store.contains(&pack(&succ[0].1))) {
                r.expand(&s, false, &mut sc, &mut succ);
            } else if exp.reduced() {
                stats.ample += 1;
            }
            stats.transitions += succ.len();
            if rules::at_depth_limit(&opts, stack.len()) {
                cut |= !succ.is_empty();
                succ.clear();
            }
            stack.push(Frame {
                succ: succ.into_iter(),
                via,
            });
            stats.depth = stats.depth.max(stack.len() - 1);
            if rules::states_full(&opts, store.len()) {
                return (
                    Outcome::Incomplete {
                        bound: Bound::MaxStates(store.len()),
                    },
                    stats,
                    sc.cover,
                );
            }
            if store.len() % 4096 == 0 {
                let p = Progress {
                    states: store.len(),
                    transitions: stats.transitions,
                    depth: stack.len(),
                    queue: stack.len(),
                    store_bytes: store.bytes(),
                };
                if let Some(bound) = monitor(&p) {
                    return (Outcome::Incomplete { bound }, stats, sc.cover);
                }
            }
        }
        let Some(top) = stack.last_mut() else {
            break;
        };
        match top.succ.next() {
            Some((c, n)) => {
                let p = pack(&n);
                if store.insert(&p, store.hash(&p)).1 {
                    next = Some((c, n));
                }
            }
            None => {
                stack.pop();
            }
        }
    }
    let outcome = if cut {
        Outcome::Incomplete {
            bound: Bound::MaxDepth(opts.max_depth.unwrap_or(0)),
        }
    } else {
        Outcome::Holds
    };
    (outcome, stats, sc.cover)
}

/// A failure's path with the steps that do not lead to it left out.
fn shortened(m: &Model, mut outcome: Outcome) -> Outcome {
    if let Outcome::Failed { failure, path, .. } = &mut outcome {
        *path = shorten(m, *failure, path);
    }
    outcome
}
