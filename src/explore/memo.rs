//! Process steps remembered by what they read (docs/explorer.md, "The step memo").
//!
//! While no other process holds a database transaction or waits, a process's step reads
//! only its own state, the database and the rest of the world (Redis, mutexes, ghosts,
//! time), and writes only those. The same process in the same own state on the same world
//! then takes the same step, whatever the other processes are doing, and a search meets that
//! situation over and over: N clients give N-fold more states than distinct (client, world)
//! pairs. The memo keeps, per expanding thread, the step's result for such a pair and hands
//! it out again instead of running the step. It is a cache, not a reduction: every state,
//! verdict and trace is the same with it and without it (tests compare every model).
//!
//! Entries are found by a hash of the process's and the world's values and compared by value,
//! which costs far less than a step; a value shared with the entry (the usual case: a
//! successor shares every part its step left alone) is equal without a look (`Rc`'s `==`
//! compares addresses first for values that are `Eq`).

use super::dead::Dead;
use crate::exec::observe::Silent;
use crate::exec::step;
use crate::ir::Model;
use crate::world::process::{Proc, Status};
use crate::world::shared::Shared;
use crate::ir::value::Pid;
use crate::world::State;
use std::hash::{Hash, Hasher};

/// Slots of a memo's first table, and most slots: an entry each, chosen by a hash of what
/// the step reads. A table that has taken four times as many entries as it has slots is
/// replaced by one four times larger (a small search does not pay for a large one).
const FIRST_SLOTS: usize = 1 << 6;
const MAX_SLOTS: usize = 1 << 12;

/// States a thread expands before its memo starts: a small search ends before its steps
/// repeat, and would only pay for the memo's entries.
const WARM_UP: usize = 256;

/// One thread's remembered steps.
#[derive(Default)]
pub struct Memo {
    /// States expanded so far, up to [`WARM_UP`].
    expanded: usize,
    slots: Vec<Option<Box<Entry>>>,
    /// Entries written into the current table.
    written: usize,
    /// Steps handed out from memory.
    served: usize,
}

/// A step of `pid` from its own state `proc` on the world `before`, and what it made.
struct Entry {
    pid: Pid,
    proc: Shared<Proc>,
    /// The world before the step: a state without processes.
    before: State,
    /// The process after the step (its dead locals already reset when that reduction is on).
    after_proc: Shared<Proc>,
    /// The world after the step: a state without processes.
    after: State,
    /// What the step reported to coverage, handed out again with it, so that what a search
    /// covered is the same with the memo as without it, whatever thread took which step.
    marks: Box<[Mark]>,
}

/// One coverage report of a step ([`crate::exec::observe::Observer`]'s `ran`, `branch`,
/// `rows`).
#[derive(Clone, Copy)]
enum Mark {
    Ran(u32),
    Branch(u32, bool),
    Rows(usize),
}

/// Passes every report on to `inner` and keeps the coverage ones.
struct Tape<'a, O> {
    inner: &'a mut O,
    marks: Vec<Mark>,
}

impl<O: crate::exec::observe::Observer> crate::exec::observe::Observer for Tape<'_, O> {
    const EVENTS: bool = O::EVENTS;
    const COVER: bool = O::COVER;
    const LOCALS: bool = O::LOCALS;
    fn event(&mut self, e: crate::exec::observe::Event) {
        self.inner.event(e);
    }
    fn ran(&mut self, pid: Pid, pc: u32) {
        self.marks.push(Mark::Ran(pc));
        self.inner.ran(pid, pc);
    }
    fn branch(&mut self, pid: Pid, pc: u32, taken: bool) {
        self.marks.push(Mark::Branch(pc, taken));
        self.inner.branch(pid, pc, taken);
    }
    fn rows(&mut self, rows: usize) {
        self.marks.push(Mark::Rows(rows));
        self.inner.rows(rows);
    }
}

/// What the memo needs to know of the state being expanded, computed once for all of its
/// processes.
pub struct Context {
    engaged: Engaged,
    /// A hash of the world's value (only when some process may be alone with it).
    world: u64,
}

/// The processes that hold a database transaction or wait.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Engaged {
    Nobody,
    Only(Pid),
    Several,
}

impl Context {
    #[must_use]
    pub fn of(s: &State) -> Self {
        let mut engaged = Engaged::Nobody;
        for (i, p) in s.procs.iter().enumerate() {
            if p.txn.is_some() || matches!(p.status, Status::Waiting(_)) {
                engaged = match engaged {
                    Engaged::Nobody => Engaged::Only(Pid(i as u16)),
                    Engaged::Only(_) | Engaged::Several => Engaged::Several,
                };
            }
        }
        // No process is alone beside two engaged ones: the memo will not look.
        let world = if engaged == Engaged::Several {
            0
        } else {
            let mut h = rustc_hash::FxHasher::default();
            s.hash_world(&mut h);
            h.finish()
        };
        Context { engaged, world }
    }

    /// Whether a step of `pid` depends on nothing but `pid`'s state and the world: no other
    /// process holds a transaction (snapshots, row locks, pending changes) or waits (lock
    /// grants, deadlock cycles).
    #[must_use]
    pub fn alone(&self, pid: Pid) -> bool {
        match self.engaged {
            Engaged::Nobody => true,
            Engaged::Only(p) => p == pid,
            Engaged::Several => false,
        }
    }
}

impl Memo {
    /// Whether the memo should take the steps of the next state this thread expands under
    /// [`super::StepMemo::Warm`]: not before it has expanded [`WARM_UP`] states.
    pub fn warm(&mut self) -> bool {
        self.expanded = (self.expanded + 1).min(WARM_UP + 1);
        self.expanded > WARM_UP
    }

    /// The step of `pid` in `s`, as `step::step` gives it, from the memo when it holds it.
    pub fn step(&mut self, m: &Model, s: &State, cx: &Context, pid: Pid) -> Option<State> {
        self.step_clearing(m, s, cx, pid, None, &mut Silent)
    }

    /// How many steps it has handed out from memory.
    #[must_use]
    pub fn served(&self) -> usize {
        self.served
    }

    /// [`Memo::step`], with the stepping process's dead locals reset when `dead` is given.
    /// A step it runs (rather than hands out) is observed by `obs`.
    pub(super) fn step_clearing<O: crate::exec::observe::Observer>(
        &mut self,
        m: &Model,
        s: &State,
        cx: &Context,
        pid: Pid,
        dead: Option<&Dead>,
        obs: &mut O,
    ) -> Option<State> {
        if !cx.alone(pid) {
            return step::step(m, s, pid, obs);
        }
        let i = pid.index();
        let slot = slot_of(cx, pid, &s.procs[i], self.slots.len());
        if let Some(e) = self.slots.get(slot).and_then(Option::as_deref) {
            // `==` on shared values looks at a value only when the two are not one.
            if e.pid == pid && e.proc == s.procs[i] && e.before.same_world(s) {
                self.served += 1;
                for mark in e.marks.iter() {
                    match *mark {
                        Mark::Ran(pc) => obs.ran(pid, pc),
                        Mark::Branch(pc, taken) => obs.branch(pid, pc, taken),
                        Mark::Rows(rows) => obs.rows(rows),
                    }
                }
                return Some(e.successor(s, i));
            }
        }
        let mut tape = Tape {
            inner: obs,
            marks: Vec::new(),
        };
        let mut n = step::step(m, s, pid, &mut tape)?;
        let marks = tape.marks.into_boxed_slice();
        // The guard says no other process can change; a step that did is not remembered.
        let others_kept = (0..s.procs.len())
            .filter(|&j| j != i)
            .all(|j| Shared::same(&s.procs[j], &n.procs[j]));
        debug_assert!(others_kept, "a step alone changed another process");
        if !others_kept {
            return Some(n);
        }
        if let Some(dead) = dead {
            dead.clear(m, &mut n);
        }
        let entry = Entry {
            pid,
            proc: s.procs[i].clone(),
            before: s.world(),
            after_proc: n.procs[i].clone(),
            after: n.world(),
            marks,
        };
        self.remember(entry, cx);
        Some(n)
    }

    fn remember(&mut self, e: Entry, cx: &Context) {
        let full = self.written >= 4 * self.slots.len();
        if full && self.slots.len() < MAX_SLOTS {
            let slots = (4 * self.slots.len()).clamp(FIRST_SLOTS, MAX_SLOTS);
            self.slots = (0..slots).map(|_| None).collect();
            self.written = 0;
        }
        let slot = slot_of(cx, e.pid, &e.proc, self.slots.len());
        self.slots[slot] = Some(Box::new(e));
        self.written += 1;
    }
}

impl Entry {
    /// The successor of `s` (whose world and process `i` are this entry's `before`).
    fn successor(&self, s: &State, i: usize) -> State {
        let mut procs = s.procs.clone();
        procs[i] = self.after_proc.clone();
        State {
            procs,
            ..self.after.clone()
        }
    }
}

/// The slot of a step of `pid` from `proc` in a table of `slots` (a power of two, or 0). It
/// hashes what most tells a process's states apart; the entry is compared whole.
fn slot_of(cx: &Context, pid: Pid, proc: &Proc, slots: usize) -> usize {
    let mut h = rustc_hash::FxHasher::default();
    (cx.world, pid.0, proc.pc, proc.status, &proc.locals).hash(&mut h);
    // FxHash mixes its high bits best.
    (h.finish() >> 32) as usize & slots.wrapping_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cas_model(clients: usize, txn: bool) -> crate::Model {
        let body = if txn {
            "begin\n  select stock from sku where id = 1 for update into $s\n  \
             update sku set stock = $s - 1 where id = 1\n  commit"
        } else {
            "select stock from sku where id = 1 into $s\n  \
             update sku set stock = $s - 1 where id = 1 and stock = $s into $n"
        };
        let text = format!(
            "model \"memo\"\nabout \"Two clients buy from one row.\"\ndb postgres isolation read_committed\n\
             table sku (id int primary key, stock int)\nrow sku (1, 5)\n\
             process client[{clients}] {{\n  {body}\n}}\n\
             invariant never_negative: sku[1].stock >= 0\nexpect holds\n"
        );
        crate::Model::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// A step met again on the same world is handed out, sharing what the first one made.
    #[test]
    fn a_step_alone_is_remembered() {
        let model = cas_model(2, false);
        let m = model.ir();
        let s = State::initial(m);
        let (cx, mut memo) = (Context::of(&s), Memo::default());
        let first = memo.step(m, &s, &cx, Pid(0)).expect("enabled");
        let again = memo.step(m, &s, &cx, Pid(0)).expect("enabled");
        assert_eq!(first, again);
        assert!(Shared::same(&first.procs[0], &again.procs[0]));
        assert_eq!(memo.served(), 1);
    }

    /// While another process holds a transaction (its row lock, its snapshot), a step is
    /// run every time, never remembered.
    #[test]
    fn a_step_beside_an_open_transaction_is_not_remembered() {
        let model = cas_model(2, true);
        let m = model.ir();
        let mut s = State::initial(m);
        // Client 1 begins and locks the row.
        while s.procs[1].txn.is_none() || s.db.tables[0][0].locks.held.is_empty() {
            s = step::step(m, &s, Pid(1), &mut Silent).expect("client 1 steps");
        }
        let (cx, mut memo) = (Context::of(&s), Memo::default());
        assert!(!cx.alone(Pid(0)));
        for _ in 0..3 {
            let got = memo.step(m, &s, &cx, Pid(0));
            assert_eq!(got, step::step(m, &s, Pid(0), &mut Silent));
        }
        assert_eq!(memo.served(), 0);
    }
}
