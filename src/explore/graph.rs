//! The whole reachable graph of a small model, found by the plain search (no reduction, every
//! process by its own name): what `check --format dot` draws, with a counterexample's path
//! marked in it. A state that breaks a safety property, or that deadlocks, is where the
//! checker stops: it is kept, marked, and not expanded.

use super::properties::{check, Failure};
use crate::exec::observe::{Event, Record};
use crate::exec::{apply, successors, Choice};
use crate::ir::Model;
use crate::world::State;
use rustc_hash::FxHashMap;

/// Every state reachable from the initial one (number 0), breadth-first, with its transitions.
pub struct StateGraph {
    /// The states, in the order the breadth-first search met them.
    pub states: Vec<State>,
    /// Per state, its transitions in choice order: the choice, the target's number and, for
    /// time passing, how many ticks pass.
    pub edges: Vec<Vec<Edge>>,
    /// Per state, what it breaks (a deadlock included), in the checker's priority order.
    pub fails: Vec<Vec<Failure>>,
    index: FxHashMap<State, u32>,
}

/// One transition of the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub choice: Choice,
    pub to: u32,
    /// Ticks that pass on this transition (0 but for time).
    pub ticks: u64,
}

impl StateGraph {
    /// The number of the state equal to `s`, if the graph holds it.
    #[must_use]
    pub fn find(&self, s: &State) -> Option<u32> {
        self.index.get(s).copied()
    }

    /// How many transitions the graph holds.
    #[must_use]
    pub fn transitions(&self) -> usize {
        self.edges.iter().map(Vec::len).sum()
    }
}

/// The reachable graph of `m`, or `None` when it has more than `max` states (the search stops
/// as soon as it meets state `max + 1`).
///
/// # Complexity
/// Linear in states plus transitions, times the cost of a step; at most `max + 1` states.
#[must_use]
pub fn build(m: &Model, max: usize) -> Option<StateGraph> {
    let mut g = StateGraph {
        states: Vec::new(),
        edges: Vec::new(),
        fails: Vec::new(),
        index: FxHashMap::default(),
    };
    g.add(m, State::initial(m));
    let mut succ = Vec::new();
    let mut next = 0;
    while next < g.states.len() {
        let s = g.states[next].clone();
        let mut edges = Vec::new();
        if g.fails[next].is_empty() {
            let progress = successors(m, &s, &mut succ);
            if progress == 0 && !s.is_final() {
                g.fails[next].push(Failure::Deadlock);
            }
            for (choice, n) in succ.drain(..) {
                let ticks = if choice == Choice::Tick { ticks(m, &s) } else { 0 };
                let to = match g.find(&n) {
                    Some(i) => i,
                    None if g.states.len() >= max => return None,
                    None => g.add(m, n),
                };
                edges.push(Edge { choice, to, ticks });
            }
        }
        g.edges[next] = edges;
        next += 1;
    }
    Some(g)
}

impl StateGraph {
    fn add(&mut self, m: &Model, s: State) -> u32 {
        let i = self.states.len() as u32;
        let mut fails = Vec::new();
        check(m, &s, &mut fails);
        self.fails.push(fails);
        self.edges.push(Vec::new());
        self.index.insert(s.clone(), i);
        self.states.push(s);
        i
    }
}

/// How long time passes out of `s` (replayed with its events recorded).
fn ticks(m: &Model, s: &State) -> u64 {
    let mut rec = Record::default();
    let _ = apply(m, s, Choice::Tick, &mut rec);
    rec.events
        .iter()
        .map(|e| match e {
            Event::TimePasses { ticks } => u64::from(*ticks),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(src: &str) -> Model {
        crate::lang::parse("t.model", src).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn two_increments_make_the_diamond_of_their_reads_and_writes() {
        let m = model(
            "model \"t\"\nabout \"t\"\nghost x = 0\nprocess p[2] {\n  $v = x\n  x = $v + 1\n}\n\
             invariant ok: x <= 2\nexpect holds\n",
        );
        let g = build(&m, 100).expect("small");
        assert!(g.states.len() > 4);
        assert_eq!(g.find(&State::initial(&m)), Some(0));
        for (i, es) in g.edges.iter().enumerate() {
            for e in es {
                assert!((e.to as usize) < g.states.len(), "edge from {i}");
            }
        }
        assert!(g.fails.iter().all(Vec::is_empty));
        assert!(build(&m, 3).is_none(), "more than three states");
    }
}
