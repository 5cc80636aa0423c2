//! The reductions a search applies to every state it expands: dead locals reset (values no
//! one will read), symmetry (one arrangement of interchangeable processes) and partial-order
//! reduction (a step no one else can observe is taken alone). All are off for models with
//! liveness properties.

use super::coverage::Coverage;
use super::dead::Dead;
use super::memo::{Context, Memo};
use super::por::Por;
use super::properties::Failure;
use super::stop::Stop;
use super::symmetry::{OwnHashes, Symmetry};
use super::{Options, Outcome, Stats, StepMemo};
use super::edges::Edges;
use crate::exec::{
    apply, listing_key, observe, successors_except, successors_stepping, Choice,
};
use crate::ir::Model;
use crate::world::permute::Perm;
use crate::world::State;

/// The reductions chosen for one search of one model.
pub struct Reducer<'m> {
    pub m: &'m Model,
    dead: Option<Dead>,
    sym: Option<Symmetry>,
    por: Option<Por>,
    memo: StepMemo,
    /// The model has `reachable` properties: each expanded state is checked against them.
    reachable: bool,
}

/// What an expansion found besides the transitions.
#[derive(Clone, Copy, Debug)]
pub struct Expansion {
    /// How many transitions of the unreduced state are progress (process steps, time): none,
    /// with unfinished processes, is a deadlock.
    pub progress: usize,
    /// Partial-order reduction kept one transition of several: this one, by its place
    /// among all the state's transitions.
    pub ample: Option<usize>,
}

impl Expansion {
    /// Partial-order reduction kept one transition of several.
    #[must_use]
    pub fn reduced(&self) -> bool {
        self.ample.is_some()
    }

    /// The place among all the state's transitions (what [`Reducer::replay`] takes) of
    /// transition `i` of the expansion.
    #[must_use]
    pub fn ordinal(&self, i: usize) -> usize {
        self.ample.unwrap_or(i)
    }
}

/// Buffers one expanding thread reuses.
#[derive(Default)]
pub struct Scratch {
    mirrors: Vec<bool>,
    full: Vec<(Choice, State)>,
    known: OwnHashes,
    memo: Memo,
    /// What the expansions so far covered (taken out by the search batch by batch).
    pub cover: Coverage,
}

impl<'m> Reducer<'m> {
    #[must_use]
    pub fn new(m: &'m Model, opts: &Options) -> Self {
        let live = m.properties.iter().any(|p| p.kind.is_liveness());
        Reducer {
            m,
            dead: (opts.dead_locals && !live).then(|| Dead::of(m)).flatten(),
            sym: (opts.symmetry && !live).then(|| Symmetry::of(m)).flatten(),
            // A statement waiting for a database worker or a connection depends on every
            // other process (`db workers`, `pool`): no step is private, none the same alone.
            por: (opts.por && !live && !m.workload.shares_capacity())
                .then(|| Por::of(m))
                .flatten(),
            memo: if m.workload.shares_capacity() {
                StepMemo::Off
            } else {
                opts.step_memo
            },
            reachable: m
                .properties
                .iter()
                .any(|p| p.kind == crate::ir::PropertyKind::Reachable),
        }
    }

    /// Search statistics with the active reductions marked.
    #[must_use]
    pub fn active(&self) -> Stats {
        Stats {
            symmetry: self.sym.is_some(),
            por: self.por.is_some(),
            dead_locals: self.dead.is_some(),
            ..Stats::default()
        }
    }

    /// The representative of a state, with the renaming that maps the state to it (`None`:
    /// no renaming): its dead locals reset, then its processes arranged.
    #[must_use]
    pub fn canon(&self, s: State) -> (State, Option<Perm>) {
        self.canon_with(s, None)
    }

    /// [`Reducer::canon`], remembering processes' hashes in `known`.
    fn canon_with(&self, mut s: State, known: Option<&mut OwnHashes>) -> (State, Option<Perm>) {
        if let Some(dead) = &self.dead {
            dead.clear(self.m, &mut s);
        }
        match &self.sym {
            Some(sym) => sym.canon(s, known),
            None => (s, None),
        }
    }

    /// The transitions the search takes out of representative `s`, their targets as
    /// representatives, in choice order. Returns how many transitions of the full
    /// (unreduced) state are progress (process steps and time): 0 with unfinished processes
    /// is a deadlock.
    ///
    /// With `reduce`, partial-order reduction may keep a single transition (the expansion is
    /// then `reduced`); the caller must expand again without it when that transition leads
    /// to a state already visited (the cycle proviso, docs/explorer.md).
    pub fn expand(
        &self,
        s: &State,
        reduce: bool,
        sc: &mut Scratch,
        out: &mut Vec<(Choice, State)>,
    ) -> Expansion {
        self.expand_until(s, reduce, sc, out, None)
            .expect("nothing stops an expansion without a stop")
    }

    /// [`Reducer::expand`], cut short (`None`, `out` empty) once a limit is raised on `stop`:
    /// a state with ten thousand successors of a large database holds many megabytes each,
    /// and a memory limit must hold within one state's expansion (the search then ends
    /// without merging what it was expanding).
    pub fn expand_until(
        &self,
        s: &State,
        reduce: bool,
        sc: &mut Scratch,
        out: &mut Vec<(Choice, State)>,
        stop: Option<&Stop>,
    ) -> Option<Expansion> {
        let stopped = || stop.is_some_and(|x| x.raised().is_some());
        if let Some(sym) = &self.sym {
            sym.mirrors(s, &mut sc.mirrors);
        }
        let memo = match self.memo {
            StepMemo::Off => false,
            StepMemo::Warm => sc.memo.warm(),
            StepMemo::Always => true,
        };
        if sc.cover.ops.is_empty() {
            sc.cover = Coverage::new(self.m);
        }
        sc.cover.next_state();
        sc.cover.final_state(self.m, s);
        if self.reachable {
            sc.cover.witness(self.m, s);
        }
        let mut cover = sc.cover.observer(self.m);
        let progress = if memo {
            let (cx, memo, dead) = (Context::of(s), &mut sc.memo, self.dead.as_ref());
            successors_stepping(self.m, s, &sc.mirrors, &mut sc.full, |pid, pick| match pick {
                _ if stopped() => None,
                None => memo.step_clearing(self.m, s, &cx, pid, dead, &mut cover),
                Some(v) => crate::exec::step::pick(self.m, s, pid, v, &mut cover),
            })
        } else {
            successors_stepping(self.m, s, &sc.mirrors, &mut sc.full, |pid, pick| match pick {
                _ if stopped() => None,
                None => crate::exec::step::step(self.m, s, pid, &mut cover),
                Some(v) => crate::exec::step::pick(self.m, s, pid, v, &mut cover),
            })
        };
        if stopped() {
            sc.full.clear();
            out.clear();
            return None;
        }
        let ample = match &self.por {
            Some(p) if reduce => p.ample(self.m, s, &sc.full),
            _ => None,
        };
        out.clear();
        match ample {
            Some(k) => out.push(sc.full.swap_remove(k)),
            None => std::mem::swap(out, &mut sc.full),
        }
        if self.sym.is_some() || self.dead.is_some() {
            for (_, n) in out.iter_mut() {
                if stopped() {
                    out.clear();
                    return None;
                }
                *n = self.canon_with(std::mem::take(n), Some(&mut sc.known)).0;
            }
        }
        Some(Expansion { progress, ample })
    }

    /// Every transition out of representative `s` (no partial-order reduction, mirrors
    /// included), in choice order, each with its target's representative and the renaming
    /// into it: what the fewest-switches pass walks. Only the successors of processes that
    /// mirror none are computed; a mirror's transitions are its chain root's, taken by it
    /// (`edges.rs`).
    pub fn expand_all(&self, s: &State, edges: &mut Edges) {
        edges.clear(s.procs.len());
        let partners = self.sym.as_ref().map(|sym| sym.mirror_partners(s));
        let skip: Vec<bool> = partners
            .iter()
            .flatten()
            .map(Option::is_some)
            .collect();
        let mut succ = Vec::new();
        successors_except(self.m, s, &skip, &mut succ);
        for (c, n) in succ {
            let (t, perm) = self.canon(n);
            edges.push_root(c, t, perm);
        }
        let Some(partners) = partners else {
            return;
        };
        let mirrors = edges.chain(&partners);
        if mirrors.is_empty() {
            return;
        }
        let mut of_process: Vec<Vec<usize>> = vec![Vec::new(); s.procs.len()];
        for (e, (c, ..)) in edges.list.iter().enumerate() {
            if let Some(p) = c.concerns() {
                of_process[p.index()].push(e);
            }
        }
        for (q, root) in mirrors {
            edges.push_mirror(q, &of_process[root.index()]);
        }
        edges.list.sort_by_key(|(c, ..)| listing_key(s, *c));
    }

    /// The transitions between representatives that a path of ordinals takes from the
    /// initial state: each ordinal is a transition's place among all the transitions of
    /// the representative reached so far (mirrors left out), as [`Expansion::ordinal`]
    /// gives it. A fingerprint search keeps these instead of the transitions themselves.
    #[must_use]
    pub fn replay(&self, ordinals: &[usize]) -> Vec<Choice> {
        let mut sc = Scratch::default();
        let mut rep = self.initial();
        let mut path = Vec::with_capacity(ordinals.len());
        for &k in ordinals {
            if let Some(sym) = &self.sym {
                sym.mirrors(&rep, &mut sc.mirrors);
            }
            successors_except(self.m, &rep, &sc.mirrors, &mut sc.full);
            let (c, next) = sc.full.swap_remove(k);
            path.push(c);
            rep = self.canon(next).0;
        }
        path
    }

    /// The initial state's representative.
    #[must_use]
    pub fn initial(&self) -> State {
        self.canon(State::initial(self.m)).0
    }

    /// Turns a path between representatives into the path of the concrete processes, by
    /// replay: each step's choice is renamed by the renaming that has accumulated so far.
    /// Returns the path and the renaming from the concrete end state to its representative.
    #[must_use]
    pub fn concretize(&self, path: &[Choice]) -> (Vec<Choice>, Perm) {
        let n = self.m.processes.len();
        let (mut rep, first) = self.canon(State::initial(self.m));
        let mut to_rep = first.unwrap_or_else(|| Perm::identity(n));
        if self.sym.is_none() {
            return (path.to_vec(), to_rep);
        }
        let mut out = Vec::with_capacity(path.len());
        let mut silent = observe::Silent;
        for &c in path {
            out.push(Symmetry::rename(c, &to_rep.inverse()));
            let next = apply(self.m, &rep, c, &mut silent).expect("the search took this step");
            let (r, p) = self.canon(next);
            if let Some(p) = p {
                to_rep = p.after(&to_rep);
            }
            rep = r;
        }
        (out, to_rep)
    }

    /// A safety failure reached by `path` (between representatives), as an outcome about
    /// the concrete processes: the path and a failing process renamed back.
    #[must_use]
    pub fn failed(&self, failure: Failure, path: &[Choice]) -> Outcome {
        let (path, to_rep) = self.concretize(path);
        let failure = match failure {
            Failure::RuntimeError(p) => Failure::RuntimeError(to_rep.inverse().apply(p)),
            f => f,
        };
        Outcome::Failed {
            failure,
            path,
            loop_start: None,
            also: Vec::new(),
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::Bound;

    /// A buyer that picks one of 50 rows: 50 successors from the first state.
    const PICKER: &str = "model \"m\"\nabout \"a\"\ndb postgres\n\
        table t (id int primary key, n int)\nrow t (1..50, 0)\n\
        process p { pick $i from 1..50\n update t set n = 1 where id = $i }\nexpect holds\n";

    #[test]
    fn a_raised_stop_cuts_an_expansion_short() {
        let m = crate::lang::parse("t.model", PICKER).unwrap_or_else(|e| panic!("{e}"));
        let r = Reducer::new(&m, &Options::full());
        let (s, mut sc, mut out) = (r.initial(), Scratch::default(), Vec::new());
        let stop = Stop::default();
        let exp = r.expand_until(&s, true, &mut sc, &mut out, Some(&stop));
        assert_eq!((exp.map(|e| e.progress), out.len()), (Some(50), 50));
        stop.raise(Bound::MaxMemory(1));
        let exp = r.expand_until(&s, true, &mut sc, &mut out, Some(&stop));
        assert!(exp.is_none() && out.is_empty());
        assert_eq!(r.expand(&s, true, &mut sc, &mut out).progress, 50);
    }
}
