//! Renaming processes: a state with its processes permuted, every process id held anywhere in
//! the world (lock holders and queues, pending row changes, gap locks, Redis values, locals)
//! renamed to match. Symmetry reduction stores one arrangement per class of states.

use super::db::{Db, GapRange};
use super::redis::Redis;
use crate::ir::value::{Pid, Value};
use super::State;

/// A renaming of processes: `new[old]` is the new id of process `old`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Perm {
    pub new: Vec<u16>,
}

impl Perm {
    #[must_use]
    pub fn identity(n: usize) -> Self {
        Perm {
            new: (0..n as u16).collect(),
        }
    }

    #[must_use]
    pub fn is_identity(&self) -> bool {
        self.new.iter().enumerate().all(|(i, &n)| i == n as usize)
    }

    #[must_use]
    pub fn apply(&self, p: Pid) -> Pid {
        Pid(self.new[p.index()])
    }

    #[must_use]
    pub fn inverse(&self) -> Perm {
        let mut new = vec![0; self.new.len()];
        for (old, &n) in self.new.iter().enumerate() {
            new[n as usize] = old as u16;
        }
        Perm { new }
    }

    /// `self` after `first`: the renaming that applies `first`, then `self`.
    #[must_use]
    pub fn after(&self, first: &Perm) -> Perm {
        Perm {
            new: first.new.iter().map(|&m| self.new[m as usize]).collect(),
        }
    }

    fn value(&self, v: Value) -> Value {
        match v {
            Value::Pid(p) => Value::Pid(self.apply(p)),
            other => other,
        }
    }

    fn values(&self, vs: &mut [Value]) {
        for v in vs {
            *v = self.value(*v);
        }
    }
}

impl State {
    /// The same state with process `p` renamed `perm.new[p]`; `instances` renames the
    /// service instances the same way (a process's private instance moves with it), as
    /// `new[old]` over instance ids. Consumes the state: nothing is copied.
    #[must_use]
    pub fn permuted(
        mut self,
        perm: &Perm,
        instances: &[u16],
        mutexes_per_instance: usize,
    ) -> State {
        move_to(&mut self.procs, |old| perm.new[old] as usize);
        // Only what names a process changes; the rest stays shared with the unrenamed state.
        for p in &mut self.procs {
            let mut renamed = false;
            p.values(|v| renamed |= perm.value(v) != v);
            if renamed {
                p.values_mut(|v| *v = perm.value(*v));
            }
        }
        let per = mutexes_per_instance;
        move_to(&mut self.mutexes, |i| {
            instances[i / per] as usize * per + i % per
        });
        for l in &mut self.mutexes {
            l.holder = l.holder.map(|h| perm.apply(h));
            l.queue.iter_mut().for_each(|q| *q = perm.apply(*q));
        }
        if names_processes(&self.db) {
            db(perm, &mut self.db);
        }
        self.redis.iter_mut().for_each(|r| redis(perm, r));
        self
    }
}

/// Moves the item at each index `i` to index `dest(i)` (a bijection), in place: each cycle
/// of the renaming is followed with swaps.
fn move_to<T>(items: &mut [T], dest: impl Fn(usize) -> usize) {
    // `target[i]`: where the item now at `i` belongs.
    let mut target: Vec<usize> = (0..items.len()).map(dest).collect();
    for i in 0..items.len() {
        while target[i] != i {
            let t = target[i];
            items.swap(i, t);
            target.swap(i, t);
        }
    }
}

/// Whether the database names any process: a change's owner, a lock's holder or waiter, a
/// gap lock, a process id among its values. Renaming changes nothing else.
fn names_processes(d: &Db) -> bool {
    let pid = |v: &Value| matches!(v, Value::Pid(_));
    !d.gaps.is_empty()
        || d.tables.iter().flatten().any(|r| {
            r.pending.is_some()
                || !r.locks.held.is_empty()
                || !r.locks.queue.is_empty()
                || pid(&r.key)
                || r.versions
                    .iter()
                    .any(|(_, v)| v.as_deref().is_some_and(|v| v.iter().any(pid)))
        })
}

fn db(perm: &Perm, d: &mut Db) {
    for rows in &mut d.tables {
        let mut rekeyed = false;
        for r in rows.iter_mut() {
            let key = perm.value(r.key);
            rekeyed |= key != r.key;
            r.key = key;
            for (_, v) in &mut r.versions {
                if let Some(v) = v {
                    perm.values(v);
                }
            }
            if let Some((owner, v)) = &mut r.pending {
                *owner = perm.apply(*owner);
                if let Some(v) = v {
                    perm.values(v);
                }
            }
            for (h, _) in r.locks.held.iter_mut().chain(r.locks.queue.iter_mut()) {
                *h = perm.apply(*h);
            }
        }
        if rekeyed {
            rows.sort_by_key(|r| r.key);
        }
    }
    for g in &mut d.gaps {
        g.owner = perm.apply(g.owner);
        match &mut g.range {
            GapRange::All => {}
            GapRange::Between(lo, hi) => {
                *lo = lo.map(|v| perm.value(v));
                *hi = hi.map(|v| perm.value(v));
            }
            GapRange::Value { value, .. } => *value = perm.value(*value),
        }
    }
    d.gaps.sort();
}

fn redis(perm: &Perm, r: &mut Redis) {
    for k in &mut r.keys {
        k.value = perm.value(k.value);
    }
    for w in &mut r.backlog {
        if let Some((v, _)) = &mut w.state {
            *v = perm.value(*v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_and_composition() {
        let p = Perm { new: vec![2, 0, 1] };
        assert!(p.inverse().after(&p).is_identity());
        assert!(p.after(&p.inverse()).is_identity());
        assert_eq!(p.after(&p).new, vec![1, 2, 0]);
        assert_eq!(p.apply(Pid(0)), Pid(2));
    }

    /// Three processes; process 0 keeps process 1's id in a local, process 2 holds a lock
    /// on row 7 and process 1 waits for it; row 8 stores process 0's id.
    fn naming_state() -> State {
        use crate::ir::LockMode;
        use crate::world::process::Proc;
        use crate::world::shared::Shared;
        let mut procs: Vec<Shared<Proc>> = (0..3).map(|_| Shared::new(Proc::new(1))).collect();
        procs[0].locals[0] = Value::Pid(Pid(1));
        procs[1].pc = 5;
        let mut db = Db::new(vec![(
            0,
            vec![
                vec![Value::Int(7), Value::Int(0)],
                vec![Value::Int(8), Value::Pid(Pid(0))],
            ],
        )]);
        db.tables[0][0].locks.held.push((Pid(2), LockMode::Update));
        db.tables[0][0].locks.queue.push((Pid(1), LockMode::Update));
        State {
            procs,
            db: Shared::new(db),
            ..State::default()
        }
    }

    #[test]
    fn renaming_reaches_ids_kept_in_locals_locks_and_rows() {
        let perm = Perm { new: vec![2, 0, 1] };
        let s = naming_state().permuted(&perm, &[], 1);
        // Old process 0 is now process 2 and names old process 1, now 0.
        assert_eq!(s.procs[2].locals[0], Value::Pid(Pid(0)));
        assert_eq!(s.procs[0].pc, 5);
        let rows = &s.db.tables[0];
        assert_eq!(
            rows[0].locks.held,
            vec![(Pid(1), crate::ir::LockMode::Update)]
        );
        assert_eq!(
            rows[0].locks.queue,
            vec![(Pid(0), crate::ir::LockMode::Update)]
        );
        assert_eq!(
            rows[1].latest(),
            Some(&[Value::Int(8), Value::Pid(Pid(2))][..])
        );
        // Renaming back gives the state again.
        assert_eq!(s.permuted(&perm.inverse(), &[], 1), naming_state());
        // With no lock left, the id stored in a row still names a process.
        let mut bare = naming_state();
        bare.db.tables[0][0].locks = crate::world::db::RowLocks::default();
        let s = bare.permuted(&perm, &[], 1);
        assert_eq!(
            s.db.tables[0][1].latest(),
            Some(&[Value::Int(8), Value::Pid(Pid(2))][..])
        );
    }

    #[test]
    fn move_to_puts_each_item_at_its_destination() {
        let dest = [3, 0, 4, 1, 2, 5];
        let mut items = ['a', 'b', 'c', 'd', 'e', 'f'];
        move_to(&mut items, |i| dest[i]);
        assert_eq!(items, ['b', 'd', 'e', 'a', 'c', 'f']);
    }
}
