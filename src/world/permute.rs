//! Renaming processes: a state with its processes permuted, every process id held anywhere in
//! the world (lock holders and queues, pending row changes, gap locks, Redis values, locals)
//! renamed to match. Symmetry reduction stores one arrangement per class of states.

use super::db::{Db, GapRange};
use super::redis::Redis;
use super::value::{Pid, Value};
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
        for p in &mut self.procs {
            p.values_mut(|v| *v = perm.value(*v));
        }
        let per = mutexes_per_instance;
        move_to(&mut self.mutexes, |i| {
            instances[i / per] as usize * per + i % per
        });
        for l in &mut self.mutexes {
            l.holder = l.holder.map(|h| perm.apply(h));
            l.queue.iter_mut().for_each(|q| *q = perm.apply(*q));
        }
        db(perm, &mut self.db);
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

    #[test]
    fn move_to_puts_each_item_at_its_destination() {
        let dest = [3, 0, 4, 1, 2, 5];
        let mut items = ['a', 'b', 'c', 'd', 'e', 'f'];
        move_to(&mut items, |i| dest[i]);
        assert_eq!(items, ['b', 'd', 'e', 'a', 'c', 'f']);
    }
}
