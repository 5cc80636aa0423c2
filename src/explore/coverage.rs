//! What a search covered: per program statement, how often it ran and from how many states,
//! which way each `if` went, whether a SQL statement ever met a row; which `reachable`
//! properties some state satisfied; how the processes ended in the final states. A proof is
//! only as good as what it explored: a statement never run, a `WHERE` that never matches, a
//! process that always fails are what a `holds` alone would hide (docs/explorer.md,
//! "Coverage").
//!
//! Counted per expansion by each thread and summed, so the figures do not depend on the
//! thread count. They describe the graph the search explored: with reductions, one
//! arrangement of interchangeable processes and fewer interleavings; the step memo hands out
//! remembered steps without running them, so runs are counted with it off (`--coverage`), and
//! only what ran at all otherwise.

use crate::exec::observe::Observer;
use crate::ir::{Model, PropertyKind};
use crate::world::process::{Proc, RunError, Status};
use crate::ir::value::{Pid, Sym};
use crate::world::State;

/// One op of a program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCount {
    /// Times a step ran it (a blocked statement that resumes runs again).
    pub runs: u64,
    /// States from which a step ran it.
    pub states: u64,
    /// For an `if` test: times it came out true, and false.
    pub taken: [u64; 2],
    /// For a SQL statement: it returned or affected a row at least once.
    pub rows: bool,
}

/// How a process ended, in a final state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum End {
    /// Done, with the outcome its `return` names, if any.
    Done(Option<Sym>),
    /// Ended by a SQL error nothing caught (the code).
    Failed(Sym),
    /// Stopped by a crash fault.
    Crashed,
    /// Stopped for good by a hang fault.
    Hung,
    /// Stopped by a mistake in the model.
    RuntimeError(RunError),
}

impl End {
    fn of(p: &Proc) -> Option<End> {
        Some(match p.status {
            Status::Done(o) => End::Done(o),
            Status::Errored(code) => End::Failed(code),
            Status::Crashed => End::Crashed,
            Status::Hung => End::Hung,
            Status::Failed(e) => End::RuntimeError(e),
            Status::Ready | Status::Busy(_) | Status::Waiting(_) => return None,
        })
    }
}

/// The coverage of one search, or of one thread's part of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Per group, per op of its program (index as in `Program::ops`).
    pub ops: Vec<Vec<OpCount>>,
    /// Per property: a reachable state satisfies it (meaningful for `reachable` ones).
    pub reached: Vec<bool>,
    /// Final states met (expanded).
    pub finals: u64,
    /// Per (group, end): the final states in which some process of the group ended so,
    /// sorted.
    pub ends: Vec<((u16, End), u64)>,
    /// Where each op last counted a state: the serial of the state being expanded.
    seen_at: Vec<Vec<u64>>,
    serial: u64,
}

impl Coverage {
    /// An empty coverage shaped for `m`.
    #[must_use]
    pub fn new(m: &Model) -> Self {
        let ops: Vec<Vec<OpCount>> = m
            .groups
            .iter()
            .map(|g| vec![OpCount::default(); g.program.ops.len()])
            .collect();
        Coverage {
            seen_at: ops.iter().map(|o| vec![0; o.len()]).collect(),
            ops,
            reached: vec![false; m.properties.len()],
            ..Coverage::default()
        }
    }

    /// Adds another thread's coverage (of other states) to this one.
    pub fn add(&mut self, other: &Coverage) {
        if self.ops.is_empty() {
            self.ops = other
                .ops
                .iter()
                .map(|g| vec![OpCount::default(); g.len()])
                .collect();
            self.seen_at = other.ops.iter().map(|g| vec![0; g.len()]).collect();
            self.reached = vec![false; other.reached.len()];
        }
        for (mine, theirs) in self.ops.iter_mut().zip(&other.ops) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.runs += b.runs;
                a.states += b.states;
                a.taken[0] += b.taken[0];
                a.taken[1] += b.taken[1];
                a.rows |= b.rows;
            }
        }
        for (a, b) in self.reached.iter_mut().zip(&other.reached) {
            *a |= *b;
        }
        self.finals += other.finals;
        for &(key, n) in &other.ends {
            self.count_end(key, n);
        }
    }

    fn count_end(&mut self, key: (u16, End), n: u64) {
        match self.ends.binary_search_by_key(&key, |&(k, _)| k) {
            Ok(i) => self.ends[i].1 += n,
            Err(i) => self.ends.insert(i, (key, n)),
        }
    }

    /// The expansion of a new state begins: its steps count it once per op.
    pub fn next_state(&mut self) {
        self.serial += 1;
    }

    /// Counts `s` if it is final: how each group's processes ended in it.
    pub fn final_state(&mut self, m: &Model, s: &State) {
        if !s.is_final() {
            return;
        }
        self.finals += 1;
        let mut ends: Vec<(u16, End)> = s
            .procs
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((m.processes[i].group as u16, End::of(p)?)))
            .collect();
        ends.sort_unstable();
        ends.dedup();
        for key in ends {
            self.count_end(key, 1);
        }
    }

    /// Marks the `reachable` properties `s` satisfies.
    pub fn witness(&mut self, m: &Model, s: &State) {
        for (i, p) in m.properties.iter().enumerate() {
            if p.kind == PropertyKind::Reachable && !self.reached[i] {
                let sc = crate::exec::eval::Scope::global(m, s);
                self.reached[i] = crate::exec::eval::eval(&p.expr, &sc).is_ok_and(|v| v.truthy());
            }
        }
    }

    /// An observer that counts the steps of `s`'s processes into this coverage.
    pub fn observer<'a>(&'a mut self, m: &'a Model) -> Cover<'a> {
        Cover {
            cov: self,
            m,
            last: None,
        }
    }
}

/// Counts what the steps it observes run.
pub struct Cover<'a> {
    cov: &'a mut Coverage,
    m: &'a Model,
    /// The op `ran` last: what `rows` is about.
    last: Option<(usize, usize)>,
}

impl Observer for Cover<'_> {
    const EVENTS: bool = false;
    const COVER: bool = true;

    fn ran(&mut self, pid: Pid, pc: u32) {
        let (g, pc) = (self.m.processes[pid.index()].group, pc as usize);
        let serial = self.cov.serial;
        let (Some(count), Some(seen)) = (
            self.cov.ops.get_mut(g).and_then(|o| o.get_mut(pc)),
            self.cov.seen_at.get_mut(g).and_then(|o| o.get_mut(pc)),
        ) else {
            return;
        };
        count.runs += 1;
        if *seen != serial {
            *seen = serial;
            count.states += 1;
        }
        self.last = Some((g, pc));
    }

    fn branch(&mut self, pid: Pid, pc: u32, taken: bool) {
        let g = self.m.processes[pid.index()].group;
        if let Some(c) = self.cov.ops.get_mut(g).and_then(|o| o.get_mut(pc as usize)) {
            c.taken[usize::from(!taken)] += 1;
        }
    }

    fn rows(&mut self, rows: usize) {
        if let Some((g, pc)) = self.last {
            if rows > 0 {
                self.cov.ops[g][pc].rows = true;
            }
        }
    }
}
