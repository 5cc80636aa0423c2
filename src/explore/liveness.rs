//! Liveness under weak fairness: a run that never satisfies a property, found as a lasso.
//!
//! Every property is reduced to one question: from a *trigger* state where the awaited
//! condition is false, is there a fair run that stays in *bad* states (the condition false)
//! forever? `eventually P`: trigger = the initial state, bad = ¬P. `always_eventually P`:
//! trigger = any state, bad = ¬P. `leads_to P => Q`: trigger = P, bad = ¬Q. A run that reaches
//! a state with no transition at all (every process finished) stays there forever.
//!
//! Fairness: each process, the clock, each process's timers and each replica's replication
//! are *fair actors*: an actor that is enabled in every state of a cycle must take a step in
//! it. Faults are never forced. A strongly connected component of bad states contains a fair
//! cycle exactly when every actor enabled in all of its states steps inside it, so the check is
//! per component (Tarjan's algorithm, petgraph), with no depth bound.
//!
//! # Complexity
//! Linear in states plus transitions (the search records the graph's edges).

use super::store::Seen;
use crate::exec::{eval::Scope, Choice};
use crate::ir::{Model, PropertyKind};
use crate::ir::value::Pid;
use crate::world::State;
use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;
use std::collections::VecDeque;

/// A violating run: the path from the initial state and where its loop begins (`None` when
/// the run ends in a state without transitions).
pub struct Lasso {
    pub property: usize,
    pub path: Vec<Choice>,
    pub loop_start: Option<usize>,
}

/// Who a transition belongs to, for fairness; `None` for faults, which are never forced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Actor {
    Proc(Pid),
    Timers(Pid),
    Time,
    Replica(u16),
}

fn actor(c: Choice) -> Option<Actor> {
    match c {
        Choice::Proc(p) | Choice::Pick { pid: p, .. } => Some(Actor::Proc(p)),
        Choice::Check(p)
        | Choice::Timeout(p)
        | Choice::Renew(p)
        | Choice::Resume(p)
        | Choice::Finish(p)
        | Choice::Restart(p) => Some(Actor::Timers(p)),
        Choice::Tick | Choice::Pass(_) => Some(Actor::Time),
        Choice::Replicate(n) => Some(Actor::Replica(n)),
        Choice::Fault { .. }
        | Choice::Failover { .. }
        | Choice::ServerFault { .. }
        | Choice::Partition { .. } => None,
        Choice::Drift { .. } => None,
    }
}

/// The reachable graph: transitions of every visited state.
struct Graph {
    edges: Vec<Vec<(Choice, u32)>>,
}

impl Graph {
    fn enabled(&self, s: usize) -> impl Iterator<Item = Actor> + '_ {
        self.edges[s].iter().filter_map(|(c, _)| actor(*c))
    }
}

/// The first liveness property (in declaration order) some fair run violates; `edges` are
/// every state's transitions, as the exhaustive search recorded them.
#[must_use]
pub fn check(m: &Model, seen: &Seen, edges: Vec<Vec<(Choice, u32)>>) -> Option<Lasso> {
    let props: Vec<usize> = (0..m.properties.len())
        .filter(|&i| m.properties[i].kind.is_liveness())
        .collect();
    if props.is_empty() {
        return None;
    }
    debug_assert_eq!(edges.len(), seen.len());
    let g = Graph { edges };
    // Unpacked once: every property reads every state.
    let states: Vec<State> = (0..seen.len()).map(|i| seen.get(i)).collect();
    props.into_iter().find_map(|i| violation(m, &states, &g, i))
}

fn holds(m: &Model, states: &[State], e: &crate::ir::Expr, s: usize) -> bool {
    crate::exec::eval::eval(e, &Scope::global(m, &states[s])).is_ok_and(|v| v.truthy())
}

fn violation(m: &Model, states: &[State], g: &Graph, prop: usize) -> Option<Lasso> {
    let p = &m.properties[prop];
    let n = states.len();
    let (bad, trigger): (Vec<bool>, Vec<bool>) = match p.kind {
        PropertyKind::Eventually => {
            let bad: Vec<bool> = (0..n).map(|s| !holds(m, states, &p.expr, s)).collect();
            let trig = (0..n).map(|s| s == 0).collect();
            (bad, trig)
        }
        PropertyKind::AlwaysEventually => {
            let bad: Vec<bool> = (0..n).map(|s| !holds(m, states, &p.expr, s)).collect();
            (bad, vec![true; n])
        }
        PropertyKind::LeadsTo => {
            let q = p.then.as_ref()?;
            let bad: Vec<bool> = (0..n).map(|s| !holds(m, states, q, s)).collect();
            let trig = (0..n).map(|s| holds(m, states, &p.expr, s)).collect();
            (bad, trig)
        }
        PropertyKind::Invariant | PropertyKind::Final | PropertyKind::Reachable => return None,
    };
    let goal = fair_components(g, &bad, m.fairness == crate::ir::Fairness::Strong);
    let (path, entry) = prefix(g, &bad, &trigger, &goal)?;
    let mut path = path;
    let loop_start = match goal[entry] {
        Goal::Terminal => None,
        Goal::Component(c) => {
            let start = path.len();
            let strong = m.fairness == crate::ir::Fairness::Strong;
            path.extend(cycle(g, &bad, &goal, c, entry, strong));
            Some(start)
        }
        Goal::None => unreachable!("the prefix ends at a goal"),
    };
    Some(Lasso {
        property: prop,
        path,
        loop_start,
    })
}

/// What a bad state offers: a fair cycle (its component's id), a dead end, or neither.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Goal {
    None,
    Terminal,
    Component(u32),
}

/// Marks the bad states that lie in a fair strongly connected component of the bad subgraph,
/// and the bad states without any transition.
fn fair_components(g: &Graph, bad: &[bool], strong: bool) -> Vec<Goal> {
    let n = bad.len();
    let mut goal = vec![Goal::None; n];
    for (s, edges) in g.edges.iter().enumerate() {
        if bad[s] && edges.is_empty() {
            goal[s] = Goal::Terminal;
        }
    }
    let states: Vec<usize> = (0..n).filter(|&s| bad[s]).collect();
    let mut next_id = 0;
    mark_fair(g, &states, strong, &mut goal, &mut next_id);
    goal
}

/// Marks the fair components among the strongly connected components of the subgraph induced
/// by `within`. Weak fairness: a component is fair when every actor enabled in all its states
/// steps inside it. Strong fairness: when every actor enabled in any of its states steps
/// inside it; otherwise the states where an offending actor is enabled are removed and the
/// rest is searched again (a fair cycle must avoid them), as in Emerson and Lei's algorithm.
fn mark_fair(g: &Graph, within: &[usize], strong: bool, goal: &mut [Goal], next_id: &mut u32) {
    let mut sub: DiGraph<usize, ()> = DiGraph::new();
    let mut node = vec![None; g.edges.len()];
    for &s in within {
        node[s] = Some(sub.add_node(s));
    }
    for &s in within {
        for &(_, t) in &g.edges[s] {
            if let (Some(a), Some(b)) = (node[s], node[t as usize]) {
                sub.add_edge(a, b, ());
            }
        }
    }
    for comp in tarjan_scc(&sub) {
        let states: Vec<usize> = comp.iter().map(|&ix| sub[ix]).collect();
        let inside = |t: u32| states.contains(&(t as usize));
        let cyclic = states.len() > 1
            || g.edges[states[0]]
                .iter()
                .any(|&(_, t)| t as usize == states[0]);
        if !cyclic {
            continue;
        }
        let stepping: Vec<Actor> = states
            .iter()
            .flat_map(|&s| g.edges[s].iter().filter(|&&(_, t)| inside(t)))
            .filter_map(|&(c, _)| actor(c))
            .collect();
        let owed = |a: &Actor| {
            let mut enabled = states.iter().map(|&s| g.enabled(s).any(|b| b == *a));
            let required = if strong {
                enabled.any(|e| e)
            } else {
                enabled.all(|e| e)
            };
            required && !stepping.contains(a)
        };
        let offending: Vec<Actor> = states
            .iter()
            .flat_map(|&s| g.enabled(s))
            .filter(|a| owed(a))
            .collect();
        if offending.is_empty() {
            for &s in &states {
                goal[s] = Goal::Component(*next_id);
            }
            *next_id += 1;
        } else if strong {
            let rest: Vec<usize> = states
                .iter()
                .copied()
                .filter(|&s| !g.enabled(s).any(|b| offending.contains(&b)))
                .collect();
            if !rest.is_empty() {
                mark_fair(g, &rest, strong, goal, next_id);
            }
        }
    }
}

/// The shortest path from the initial state, through a trigger, then through bad states only,
/// to a goal; returns it and the goal state reached.
fn prefix(
    g: &Graph,
    bad: &[bool],
    trigger: &[bool],
    goal: &[Goal],
) -> Option<(Vec<Choice>, usize)> {
    // BFS over (state, phase): phase 0 before the trigger, phase 1 after it (bad states only).
    let n = bad.len();
    let mut from: Vec<[Option<(u32, u8, Choice)>; 2]> = vec![[None, None]; n];
    let mut seen = vec![[false; 2]; n];
    let mut queue = VecDeque::new();
    let start_phase = u8::from(trigger[0] && bad[0]);
    seen[0][start_phase as usize] = true;
    queue.push_back((0usize, start_phase));
    while let Some((s, ph)) = queue.pop_front() {
        if ph == 1 && goal[s] != Goal::None {
            let mut path = Vec::new();
            let (mut at, mut aph) = (s, ph);
            while let Some((prev, pph, c)) = from[at][aph as usize] {
                path.push(c);
                (at, aph) = (prev as usize, pph);
            }
            path.reverse();
            return Some((path, s));
        }
        for &(c, t) in &g.edges[s] {
            let t = t as usize;
            let next = if ph == 1 {
                if !bad[t] {
                    continue;
                }
                1
            } else {
                u8::from(trigger[t] && bad[t])
            };
            if !seen[t][next as usize] {
                seen[t][next as usize] = true;
                from[t][next as usize] = Some((s as u32, ph, c));
                queue.push_back((t, next));
            }
        }
    }
    None
}

/// A fair cycle through `entry` inside component `comp`: it takes a step of every actor that
/// steps inside the component, visits a state where each other actor is disabled, and
/// returns to `entry`.
fn cycle(
    g: &Graph,
    bad: &[bool],
    goal: &[Goal],
    comp: u32,
    entry: usize,
    strong: bool,
) -> Vec<Choice> {
    let inside = |s: usize| bad[s] && goal[s] == Goal::Component(comp);
    // The shortest way round, when it is fair already (the common case).
    let shortest = walk_nonempty(g, &inside, entry, entry);
    if is_fair(g, entry, &shortest, strong) {
        return shortest;
    }
    let states: Vec<usize> = (0..bad.len()).filter(|&s| inside(s)).collect();
    let mut actors: Vec<Actor> = Vec::new();
    for &s in &states {
        for &(c, t) in &g.edges[s] {
            if let Some(a) = actor(c).filter(|_| inside(t as usize)) {
                if !actors.contains(&a) {
                    actors.push(a);
                }
            }
        }
    }
    let mut others: Vec<Actor> = Vec::new();
    for &s in &states {
        for a in g.enabled(s) {
            if !actors.contains(&a) && !others.contains(&a) {
                others.push(a);
            }
        }
    }
    let mut out = Vec::new();
    let mut at = entry;
    // Visit a state where each actor that never steps here is disabled…
    for a in others {
        if let Some(t) = states
            .iter()
            .copied()
            .find(|&s| !g.enabled(s).any(|b| b == a))
        {
            out.extend(walk(g, &inside, at, &|s| s == t));
            at = t;
        }
    }
    // …and take a step of every actor that steps here.
    for a in actors {
        let step = |s: usize| {
            g.edges[s]
                .iter()
                .find(|&&(c, t)| inside(t as usize) && actor(c) == Some(a))
                .copied()
        };
        let path = walk(g, &inside, at, &|s| step(s).is_some());
        at = end_of(g, at, &path);
        out.extend(path);
        let (c, t) = step(at).expect("the walk ends where the step starts");
        out.push(c);
        at = t as usize;
    }
    if at != entry || out.is_empty() {
        let back = walk_nonempty(g, &inside, at, entry);
        out.extend(back);
    }
    out
}

/// Whether the closed walk `path` from `s` is fair: every actor enabled in all of its states
/// (weak) or in any of them (strong) takes a step on it.
fn is_fair(g: &Graph, s: usize, path: &[Choice], strong: bool) -> bool {
    if path.is_empty() {
        return false;
    }
    let mut states = vec![s];
    let mut at = s;
    for c in path {
        at = end_of(g, at, std::slice::from_ref(c));
        states.push(at);
    }
    let stepping: Vec<Actor> = path.iter().filter_map(|&c| actor(c)).collect();
    let mut candidates: Vec<Actor> = states.iter().flat_map(|&x| g.enabled(x)).collect();
    candidates.dedup();
    candidates.iter().all(|a| {
        let mut on = states.iter().map(|&x| g.enabled(x).any(|b| b == *a));
        let owed = if strong { on.any(|e| e) } else { on.all(|e| e) };
        !owed || stepping.contains(a)
    })
}

/// The state a path from `s` ends in.
fn end_of(g: &Graph, s: usize, path: &[Choice]) -> usize {
    path.iter().fold(s, |at, c| {
        g.edges[at]
            .iter()
            .find(|(d, _)| d == c)
            .map_or(at, |&(_, t)| t as usize)
    })
}

/// The shortest path inside the component from `s` to a state satisfying `done` (empty when
/// `s` does).
fn walk(
    g: &Graph,
    inside: &dyn Fn(usize) -> bool,
    s: usize,
    done: &dyn Fn(usize) -> bool,
) -> Vec<Choice> {
    if done(s) {
        return Vec::new();
    }
    let mut from: Vec<Option<(usize, Choice)>> = vec![None; g.edges.len()];
    let mut queue = VecDeque::from([s]);
    let mut seen = vec![false; g.edges.len()];
    seen[s] = true;
    while let Some(u) = queue.pop_front() {
        for &(c, t) in &g.edges[u] {
            let t = t as usize;
            if !inside(t) || seen[t] {
                continue;
            }
            seen[t] = true;
            from[t] = Some((u, c));
            if done(t) {
                let mut path = Vec::new();
                let mut at = t;
                while let Some((p, c)) = from[at] {
                    path.push(c);
                    at = p;
                }
                path.reverse();
                return path;
            }
            queue.push_back(t);
        }
    }
    Vec::new()
}

/// A path of at least one step inside the component from `s` back to `goal`.
fn walk_nonempty(g: &Graph, inside: &dyn Fn(usize) -> bool, s: usize, goal: usize) -> Vec<Choice> {
    for &(c, t) in &g.edges[s] {
        let t = t as usize;
        if inside(t) {
            let mut p = vec![c];
            p.extend(walk(g, inside, t, &|x| x == goal));
            return p;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A graph of `n` states; edge actors 0 and 1 are processes, 2 is a fault.
    fn graph(n: usize, edges: &[(usize, usize, u8)]) -> Graph {
        let mut g = Graph {
            edges: vec![Vec::new(); n],
        };
        for &(a, b, k) in edges {
            let c = match k {
                0 | 1 => Choice::Proc(Pid(u16::from(k))),
                _ => Choice::Fault {
                    fault: 0,
                    pid: Pid(0),
                },
            };
            g.edges[a % n].push((c, (b % n) as u32));
        }
        g
    }

    /// Brute force: some set of bad states is strongly connected by edges inside it (with at
    /// least one edge) and every actor enabled in all its states steps inside it.
    fn fair_cycle_exists(g: &Graph, bad: &[bool], strong: bool) -> bool {
        let n = bad.len();
        (1u32..1 << n).any(|set| {
            let inside = |s: usize| set & (1 << s) != 0;
            let states: Vec<usize> = (0..n).filter(|&s| inside(s)).collect();
            if states.iter().any(|&s| !bad[s]) {
                return false;
            }
            let reach = |from: usize, forward: bool| {
                let mut seen = 1u32 << from;
                let mut changed = true;
                while changed {
                    changed = false;
                    for &u in &states {
                        for &(_, t) in &g.edges[u] {
                            let (a, b) = if forward {
                                (u, t as usize)
                            } else {
                                (t as usize, u)
                            };
                            if inside(b) && seen & (1 << a) != 0 && seen & (1 << b) == 0 {
                                seen |= 1 << b;
                                changed = true;
                            }
                        }
                    }
                }
                seen
            };
            let has_edge = states
                .iter()
                .any(|&u| g.edges[u].iter().any(|&(_, t)| inside(t as usize)));
            if !has_edge || reach(states[0], true) != set || reach(states[0], false) != set {
                return false;
            }
            let stepping: Vec<Actor> = states
                .iter()
                .flat_map(|&u| g.edges[u].iter().filter(|&&(_, t)| inside(t as usize)))
                .filter_map(|&(c, _)| actor(c))
                .collect();
            [Actor::Proc(Pid(0)), Actor::Proc(Pid(1))].iter().all(|a| {
                let mut on = states.iter().map(|&s| g.enabled(s).any(|b| b == *a));
                let owed = if strong { on.any(|e| e) } else { on.all(|e| e) };
                !owed || stepping.contains(a)
            })
        })
    }

    proptest! {
        #[test]
        fn fair_components_agree_with_brute_force(
            n in 1usize..7,
            edges in proptest::collection::vec((0usize..7, 0usize..7, 0u8..3), 0..16),
            bad in proptest::collection::vec(any::<bool>(), 7),
            strong in any::<bool>(),
        ) {
            let g = graph(n, &edges);
            let bad = &bad[..n];
            let goal = fair_components(&g, bad, strong);
            let found = goal.iter().any(|x| matches!(x, Goal::Component(_)));
            prop_assert_eq!(found, fair_cycle_exists(&g, bad, strong));
        }
    }

    #[test]
    fn a_process_enabled_throughout_but_never_stepping_makes_a_cycle_unfair() {
        // State 0 loops on process 0 while process 1 is enabled (to state 1) throughout.
        let g = graph(2, &[(0, 0, 0), (0, 1, 1)]);
        let goal = fair_components(&g, &[true, false], false);
        assert!(goal.iter().all(|x| *x == Goal::None));
        // If process 1's step stays inside a cycle of bad states, the cycle is fair.
        let g = graph(2, &[(0, 0, 0), (0, 1, 1), (1, 0, 0)]);
        let goal = fair_components(&g, &[true, true], false);
        assert!(matches!(goal[0], Goal::Component(_)));
    }
}
