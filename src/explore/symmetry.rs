//! Symmetry reduction: processes that run the same program from the same start, placed alike,
//! are interchangeable, so the search keeps one arrangement of each state.
//!
//! The canonical form sorts each class of interchangeable processes by a key that ignores
//! process identities (the process's own state with every id blanked, plus the roles the world
//! gives it: lock holder, position in a queue, value of a Redis key). Sorting costs
//! O(n log n), not n!. Equal keys keep their order, so two states of one orbit may get two
//! representatives: that costs reduction, never soundness (docs/explorer.md).

use crate::exec::Choice;
use crate::ir::{Expr, Model, OpKind};
use crate::world::permute::Perm;
use crate::world::process::{Proc, Status, Wait};
use crate::world::shared::{ByAddr, Shared};
use crate::ir::value::{Pid, Value};
use crate::world::State;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// The classes of interchangeable processes of a model.
#[derive(Clone, Debug)]
pub struct Symmetry {
    /// Classes of two or more processes, each in pid order.
    classes: Vec<Vec<u16>>,
    /// `class[p]`: the class of process `p`, if it has one.
    class: Vec<Option<u16>>,
    /// Per class, whether each process runs on an instance of its own (which then moves
    /// with it).
    private: Vec<bool>,
    /// `instance[p]`: the instance process `p` runs on.
    instance: Vec<u16>,
    instances: usize,
    mutexes: usize,
}

impl Symmetry {
    /// The model's classes; `None` when no two processes are interchangeable or the model
    /// lets process ids be ordered (an id stored in a table can be a key, sorted, scanned).
    #[must_use]
    pub fn of(m: &Model) -> Option<Symmetry> {
        if m.groups.iter().any(|g| ids_reach_sql(&g.program.ops)) {
            return None;
        }
        let named = named_processes(m);
        let mut users = vec![0usize; m.instances.len()];
        for p in &m.processes {
            users[p.instance] += 1;
        }
        let mut classes: Vec<Vec<u16>> = Vec::new();
        let mut private = Vec::new();
        let mut class = vec![None; m.processes.len()];
        for g in 0..m.groups.len() {
            let members: Vec<usize> = (0..m.processes.len())
                .filter(|&p| m.processes[p].group == g && !named.contains(&p))
                .collect();
            // Members sharing one instance, or each alone on its own, are interchangeable.
            let own = members.iter().all(|&p| users[m.processes[p].instance] == 1);
            // One class for private instances; one per shared instance otherwise.
            let place = |p: usize| if own { 0 } else { m.processes[p].instance + 1 };
            let mut by_instance: Vec<Vec<u16>> = Vec::new();
            for &p in &members {
                match by_instance
                    .iter_mut()
                    .find(|c| place(c[0] as usize) == place(p))
                {
                    Some(c) => c.push(p as u16),
                    None => by_instance.push(vec![p as u16]),
                }
            }
            for c in by_instance.into_iter().filter(|c| c.len() > 1) {
                for &p in &c {
                    class[p as usize] = Some(classes.len() as u16);
                }
                classes.push(c);
                private.push(own);
            }
        }
        if classes.is_empty() {
            return None;
        }
        Some(Symmetry {
            classes,
            class,
            private,
            instance: m.processes.iter().map(|p| p.instance as u16).collect(),
            instances: m.instances.len(),
            mutexes: m.mutexes.len(),
        })
    }

    /// The representative of `s`'s class of states, and the renaming that maps `s` to it
    /// (`None`: `s` is its own representative); `known` remembers processes' hashes from one
    /// call to the next.
    #[must_use]
    pub fn canon(&self, s: State, known: Option<&mut OwnHashes>) -> (State, Option<Perm>) {
        let keys = self.keys(&s, known);
        // Most states are found from a representative by one process's step, and most such
        // steps leave every class in key order: then the stable sort below moves no one.
        let sorted = |c: &Vec<u16>| {
            c.windows(2)
                .all(|w| keys[w[0] as usize] <= keys[w[1] as usize])
        };
        if self.classes.iter().all(sorted) {
            return (s, None);
        }
        let mut perm = Perm::identity(s.procs.len());
        for c in &self.classes {
            let mut sorted = c.clone();
            sorted.sort_by_key(|&p| keys[p as usize]);
            for (slot, &p) in c.iter().zip(&sorted) {
                perm.new[p as usize] = *slot;
            }
        }
        if perm.is_identity() {
            return (s, None);
        }
        let inst = self.instance_perm(&perm);
        (s.permuted(&perm, &inst, self.mutexes.max(1)), Some(perm))
    }

    /// The classes of interchangeable processes, each in pid order.
    #[must_use]
    pub fn classes(&self) -> &[Vec<u16>] {
        &self.classes
    }

    /// The mutexes per instance, as [`State::permuted`] counts them.
    #[must_use]
    pub fn mutexes_per_instance(&self) -> usize {
        self.mutexes.max(1)
    }

    /// The renaming of instances that goes with a renaming of processes.
    pub fn instance_perm(&self, perm: &Perm) -> Vec<u16> {
        let mut inst: Vec<u16> = (0..self.instances as u16).collect();
        for (c, members) in self.classes.iter().enumerate() {
            if !self.private[c] {
                continue;
            }
            for &p in members {
                let to = perm.new[p as usize] as usize;
                inst[self.instance[p as usize] as usize] = self.instance[to];
            }
        }
        inst
    }

    /// The same transition seen from a renamed state.
    #[must_use]
    pub fn rename(c: Choice, perm: &Perm) -> Choice {
        c.concerns().map_or(c, |p| c.by(perm.apply(p)))
    }

    /// Processes whose transitions mirror an earlier process's in `s`: same class, equal own
    /// state, and neither named anywhere in the world, so swapping the two maps `s` to
    /// itself. Their transitions lead to the same representatives and need not be taken.
    ///
    /// In a representative, a class's processes are in the order of their sort keys, so
    /// equal processes sit side by side: each is compared with the previous unnamed one only
    /// (linear, not quadratic, in the class size). Where that misses a mirror (a state that
    /// is not a representative, or two keys that collide), the transition is taken, which
    /// costs time, not soundness.
    pub fn mirrors(&self, s: &State, out: &mut Vec<bool>) {
        let partners = self.mirror_partners(s);
        out.clear();
        out.extend(partners.iter().map(Option::is_some));
    }

    /// Per process, the earlier process it mirrors (see [`Symmetry::mirrors`]), if any:
    /// swapping the two maps `s` to itself, so a transition of the later one is a transition
    /// of the earlier one seen through that swap.
    #[must_use]
    pub fn mirror_partners(&self, s: &State) -> Vec<Option<u16>> {
        let mut out = vec![None; s.procs.len()];
        let named = referenced(s);
        for c in &self.classes {
            let mut prev: Option<usize> = None;
            for &p in c {
                let p = p as usize;
                if named[p] {
                    continue;
                }
                out[p] = prev.filter(|&q| s.procs[q] == s.procs[p]).map(|q| q as u16);
                prev = Some(p);
            }
        }
        out
    }

    /// Per process: a hash of everything about it that does not depend on process names.
    fn keys(&self, s: &State, known: Option<&mut OwnHashes>) -> Vec<u64> {
        let mut h: Vec<FxHasher> = match known {
            // With two processes a successor shares one: not worth the bookkeeping.
            Some(known) if s.procs.len() > 2 => s
                .procs
                .iter()
                .map(|p| known.get(p, s.procs.len()))
                .collect(),
            _ => s.procs.iter().map(|p| own_hash(p)).collect(),
        };
        roles(s, self.mutexes.max(1), &self.class, &self.private, &mut h);
        h.into_iter().map(|h| h.finish()).collect()
    }
}

/// What [`hash_own`] makes of a process, for the processes a thread saw lately, by identity:
/// a successor shares all but one or two of its processes with its parent, and the parent's
/// were hashed when the parent was found. Only a process that another holder shares is kept
/// (then it cannot change in place while kept); a slot per process address, direct-mapped.
#[derive(Default)]
pub struct OwnHashes {
    known: ByAddr<Proc, FxHasher>,
}

impl OwnHashes {
    /// The hasher after [`hash_own`] of `p`, a process of a state of `n` processes.
    fn get(&mut self, p: &Shared<Proc>, n: usize) -> FxHasher {
        self.known.size((4 * n).clamp(64, 4096).next_power_of_two());
        if let Some(h) = self.known.get(p) {
            return h.clone();
        }
        let h = own_hash(p);
        if Shared::is_shared(p) {
            self.known.put(p, h.clone());
        }
        h
    }
}

fn own_hash(p: &Proc) -> FxHasher {
    let mut h = FxHasher::default();
    hash_own(p, &mut h);
    h
}

/// Hashes a process's own state with every process id blanked (ids differ between
/// interchangeable processes; the roles below say what they mean).
fn hash_own(p: &Proc, h: &mut FxHasher) {
    let blank = |v: Value| match v {
        Value::Pid(_) => Value::Pid(Pid(u16::MAX)),
        other => other,
    };
    p.pc.hash(h);
    match p.status {
        Status::Waiting(Wait::Row { table, key, mode }) => {
            (0u8, table, blank(key), mode).hash(h);
        }
        Status::Waiting(Wait::Gap { table, key }) => (1u8, table, blank(key)).hash(h),
        // No process id in these.
        other @ (Status::Waiting(Wait::Mutex(_) | Wait::Replicas { .. } | Wait::Await { .. })
        | Status::Ready
        | Status::Busy(_)
        | Status::Done(_)
        | Status::Errored(_)
        | Status::Crashed
        | Status::Hung
        | Status::Failed(_)) => (2u8, other).hash(h),
    }
    p.locals.iter().for_each(|&v| blank(v).hash(h));
    p.candidates
        .iter()
        .flatten()
        .for_each(|&v| blank(v).hash(h));
    p.reads.iter().for_each(|&(t, v)| (t, blank(v)).hash(h));
    (
        p.txn,
        p.error,
        p.check_in,
        p.timeout_in,
        p.paused,
        p.slack,
        p.drift,
        p.lose_reply,
        p.last_write,
        p.watchdog,
    )
        .hash(h);
}

/// Mixes into each process's hash the places the world names it, in the world's own order
/// (which does not depend on names): mutexes, row locks and queues, pending changes, gap
/// locks, Redis values.
fn roles(s: &State, per: usize, class: &[Option<u16>], private: &[bool], h: &mut [FxHasher]) {
    let mut mark = |p: Pid, role: &dyn Fn(&mut FxHasher)| role(&mut h[p.index()]);
    for (i, l) in s.mutexes.iter().enumerate() {
        // A private instance's mutex moves with its process: name it by its place only.
        let k = i % per;
        if let Some(hd) = l.holder {
            let private_inst = class[hd.index()].is_some_and(|c| private[c as usize]);
            let at = if private_inst { k } else { i };
            mark(hd, &|h| (1u8, at).hash(h));
        }
        for (pos, &q) in l.queue.iter().enumerate() {
            mark(q, &|h| (2u8, i, pos).hash(h));
        }
    }
    for (t, rows) in s.db.tables.iter().enumerate() {
        for r in rows {
            for (pos, &(p, mode)) in r.locks.held.iter().enumerate() {
                mark(p, &|h| (3u8, t, r.key, pos, mode).hash(h));
            }
            for (pos, &(p, mode)) in r.locks.queue.iter().enumerate() {
                mark(p, &|h| (4u8, t, r.key, pos, mode).hash(h));
            }
            if let Some((p, v)) = &r.pending {
                mark(*p, &|h| (5u8, t, r.key, v).hash(h));
            }
        }
    }
    for g in &s.db.gaps {
        mark(g.owner, &|h| (6u8, g.table).hash(h));
    }
    for (n, node) in s.redis.iter().enumerate() {
        for k in &node.keys {
            if let Value::Pid(p) = k.value {
                mark(p, &|h| (7u8, n, k.name, k.ttl).hash(h));
            }
        }
        for (pos, w) in node.backlog.iter().enumerate() {
            if let Some((Value::Pid(p), ttl)) = w.state {
                mark(p, &|h| (8u8, n, pos, w.key, ttl).hash(h));
            }
        }
    }
}

/// Which processes the world names: in a lock, a queue, a value, another's locals.
fn referenced(s: &State) -> Vec<bool> {
    let mut named = vec![false; s.procs.len()];
    let mut v = |x: Value| {
        if let Value::Pid(p) = x {
            named[p.index()] = true;
        }
    };
    s.procs.iter().for_each(|p| p.values(&mut v));
    for node in &s.redis {
        node.keys.iter().for_each(|k| v(k.value));
        node.backlog
            .iter()
            .filter_map(|w| w.state)
            .for_each(|(x, _)| v(x));
    }
    let mut pid = |p: Pid| named[p.index()] = true;
    for l in &s.mutexes {
        l.holder
            .into_iter()
            .chain(l.queue.iter().copied())
            .for_each(&mut pid);
    }
    for rows in &s.db.tables {
        for r in rows {
            r.locks
                .held
                .iter()
                .chain(&r.locks.queue)
                .for_each(|&(p, _)| pid(p));
            if let Some((p, _)) = r.pending {
                pid(p);
            }
        }
    }
    s.db.gaps.iter().for_each(|g| pid(g.owner));
    named
}

/// Processes a property names one by one (`status(buyer[0], …)`, `no_starvation buyer[0]`,
/// `redis(lock) = client[0]`): they leave their class.
fn named_processes(m: &Model) -> Vec<usize> {
    let mut out = Vec::new();
    for p in &m.properties {
        for e in std::iter::once(&p.expr).chain(p.then.as_ref()) {
            e.visit(&mut |x| match x {
                Expr::Status { pid, .. } | Expr::Lit(Value::Pid(pid)) => out.push(pid.index()),
                _ => {}
            });
        }
    }
    out
}

/// Whether a program can put a process id into SQL (`insert … values ($me)`, `where owner =
/// $me`): rows could then be keyed, sorted and scanned by ids, which is not symmetric. A
/// local may hold an id when it is set from `$me`, from such a local, or from a Redis reply.
fn ids_reach_sql(ops: &[crate::ir::Op]) -> bool {
    let mut ids: Vec<u16> = Vec::new();
    let mentions = |e: &Expr, ids: &[u16]| {
        let mut yes = false;
        e.visit(&mut |x| {
            yes |= matches!(x, Expr::Me) || matches!(x, Expr::Local(l) if ids.contains(l));
        });
        yes
    };
    let mut flat: Vec<&crate::ir::Op> = Vec::new();
    for op in ops {
        flat.push(op);
        if let OpKind::Atomic { body, .. } = &op.kind {
            flat.extend(body);
        }
    }
    loop {
        let before = ids.len();
        for op in &flat {
            let set = match &op.kind {
                OpKind::Assign { local, expr } => mentions(expr, &ids).then_some(*local),
                // A picked value is an integer, never an id.
                OpKind::Pick { .. } => None,
                // A reply may be a process id (a lock token).
                OpKind::Redis { into, .. } | OpKind::AwaitRedis { into, .. } => *into,
                // A row holds an id only once ids reach SQL (what this finds out), an error
                // local gets a code, and a ghost holds an integer; an `atomic` body's ops are
                // in `flat` themselves.
                OpKind::Sql { .. }
                | OpKind::SetGhost { .. }
                | OpKind::Jump(_)
                | OpKind::JumpUnless { .. }
                | OpKind::Return { .. }
                | OpKind::Work { .. }
                | OpKind::Sleep { .. }
                | OpKind::SleepFor { .. }
                | OpKind::Atomic { .. }
                | OpKind::Raise { .. }
                | OpKind::WatchdogStart { .. }
                | OpKind::WatchdogStop
                | OpKind::Lock { .. }
                | OpKind::Unlock { .. } => None,
            };
            if let Some(l) = set.filter(|l| !ids.contains(l)) {
                ids.push(l);
            }
        }
        if ids.len() == before {
            break;
        }
    }
    flat.iter().any(|op| {
        let OpKind::Sql { stmt, .. } = &op.kind else {
            return false;
        };
        let mut yes = false;
        stmt.exprs(&mut |e| yes |= mentions(e, &ids));
        yes
    })
}
