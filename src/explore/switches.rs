//! Among the shortest paths to a failure, the one with the fewest context switches.
//!
//! A second pass over the layers the search already built: dynamic programming over
//! (state, last acting process), layer by layer. Every state on a shortest path to a target in
//! layer d sits in its own BFS layer, so only edges from layer k to layer k + 1 count.

use super::edges::Edges;
use super::reduce::Reducer;
use super::store::Seen;
use super::Stop;
use crate::exec::Choice;
use crate::ir::value::Pid;
use rustc_hash::FxHashMap;

struct Entry {
    state: u32,
    last: Option<Pid>,
    switches: u32,
    /// Index of the entry in the previous layer this one was reached from, and how.
    from: Option<(u32, Choice)>,
}

/// The path (as choices from the initial state) to one of `targets` (all in the same layer)
/// with the fewest switches between acting processes; ties go to the earlier discovered.
/// `None` when a limit raised on `stop` cut the pass short.
///
/// Under symmetry reduction states are representatives: an entry's last actor is named as
/// in its own state, and renamed along each edge, so switches count between the concrete
/// processes of the path the choices will be renamed into.
#[must_use]
pub fn fewest(
    r: &Reducer,
    seen: &Seen,
    bounds: &[usize],
    targets: &[u32],
    stop: &Stop,
) -> Option<Vec<Choice>> {
    let depth = bounds
        .iter()
        .rposition(|&b| b <= targets[0] as usize)
        .unwrap_or(0);
    let mut layers: Vec<Vec<Entry>> = vec![vec![Entry {
        state: 0,
        last: None,
        switches: 0,
        from: None,
    }]];
    let mut edges = Edges::default();
    let mut index_of: Vec<Option<usize>> = Vec::new();
    for k in 0..depth {
        let (lo, hi) = (bounds[k + 1], bounds[k + 2]);
        let mut next: Vec<Entry> = Vec::new();
        let mut index: FxHashMap<(u32, Option<Pid>), usize> = FxHashMap::default();
        let cur = &layers[k];
        let mut e = 0;
        while e < cur.len() {
            if stop.raised().is_some() {
                return None;
            }
            let state = cur[e].state;
            r.expand_all(&seen.get(state as usize), &mut edges);
            index_of.clear();
            index_of.extend(edges.targets.iter().map(|t| seen.index_of(t)));
            let group_end = (e..cur.len())
                .find(|&x| cur[x].state != state)
                .unwrap_or(cur.len());
            for (c, n, renaming) in &edges.list {
                let Some(j) = index_of[*n].filter(|&j| (lo..hi).contains(&j)) else {
                    continue;
                };
                for (from, entry) in cur.iter().enumerate().take(group_end).skip(e) {
                    let actor = c.actor();
                    let switched = matches!((entry.last, actor), (Some(a), Some(b)) if a != b);
                    let last = actor.or(entry.last);
                    let cand = Entry {
                        state: j as u32,
                        last: last.map(|p| edges.rename(*renaming, p)),
                        switches: entry.switches + u32::from(switched),
                        from: Some((from as u32, *c)),
                    };
                    match index.get(&(cand.state, cand.last)) {
                        Some(&x) if next[x].switches <= cand.switches => {}
                        Some(&x) => next[x] = cand,
                        None => {
                            index.insert((cand.state, cand.last), next.len());
                            next.push(cand);
                        }
                    }
                }
            }
            e = group_end;
        }
        next.sort_by_key(|x| (x.state, x.last));
        layers.push(next);
    }
    let last = &layers[depth];
    let best = last
        .iter()
        .enumerate()
        .filter(|(_, x)| targets.contains(&x.state))
        .min_by_key(|(_, x)| (x.switches, x.state, x.last))
        .map(|(i, _)| i)
        .expect("a target is reachable in its own layer");
    let mut path = Vec::with_capacity(depth);
    let mut at = best;
    for k in (1..=depth).rev() {
        let (from, c) = layers[k][at].from.expect("only layer 0 has no predecessor");
        path.push(c);
        at = from as usize;
    }
    path.reverse();
    Some(path)
}
