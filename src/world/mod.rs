//! The simulated components, each a pure value: `Clone + Eq + Hash`, no IO, no real time.

pub mod codec;
pub mod db;
pub mod lock;
pub mod permute;
pub mod process;
pub mod redis;
pub mod shared;

use crate::ir::Model;
use lock::Lock;
use process::Proc;
use shared::Shared;

/// One global state: the world plus every process. Time is not stored: every deadline is
/// relative to now, so states that differ only in the absolute time are one state.
/// (`Default` is an empty world with no process, a placeholder.)
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    pub procs: Vec<Shared<Proc>>,
    pub db: Shared<db::Db>,
    /// Every Redis node, server after server: its primary first as declared, then replicas.
    pub redis: Vec<redis::Redis>,
    /// Per server, which of its nodes is the primary now (failover moves it).
    pub primary: Vec<u8>,
    /// Per server, how many failovers it has been through: a connection's writes from an
    /// earlier epoch went to a primary that is gone.
    pub epochs: Vec<u8>,
    /// One lock per (instance, mutex): index `instance * mutex_count + mutex`.
    pub mutexes: Vec<Lock>,
    pub ghosts: Vec<i64>,
    /// How often each fault has been injected.
    pub faults_used: Vec<u8>,
    /// Ticks since the start, kept only when the model reads the clock (`Model::clock`).
    pub clock: u32,
}

impl State {
    /// The state before any step.
    #[must_use]
    pub fn initial(m: &Model) -> Self {
        let procs = m
            .processes
            .iter()
            .map(|p| Shared::new(Proc::new(m.groups[p.group].program.locals.len())))
            .collect();
        let tables =
            m.db.as_ref()
                .map(|db| db.tables.iter().map(|t| (t.pk, t.rows.clone())).collect())
                .unwrap_or_default();
        let mut redis = vec![redis::Redis::default(); m.redis_nodes()];
        for k in &m.keys {
            let base = m.redis_base(k.server);
            let nodes = 1 + usize::from(m.redis[usize::from(k.server)].replicas);
            for node in &mut redis[base..base + nodes] {
                node.set(k.key, k.value, false, k.ttl);
            }
        }
        State {
            procs,
            db: Shared::new(db::Db::new(tables)),
            redis,
            primary: vec![0; m.redis.len()],
            epochs: vec![0; m.redis.len()],
            mutexes: vec![Lock::default(); m.instances.len() * m.mutexes.len()],
            ghosts: m.ghosts.iter().map(|g| g.init).collect(),
            faults_used: vec![0; m.faults.len()],
            clock: 0,
        }
    }

    /// The node serving server `s` now (its primary).
    #[must_use]
    pub fn node(&self, m: &Model, s: u16) -> usize {
        m.redis_base(s) + self.primary[s as usize] as usize
    }

    /// The live replicas of server `s`, as node indices.
    #[must_use]
    pub fn replicas(&self, m: &Model, s: u16) -> Vec<usize> {
        let base = m.redis_base(s);
        let n = 1 + m.redis[s as usize].replicas as usize;
        let primary = self.node(m, s);
        (base..base + n)
            .filter(|&i| i != primary && !self.redis[i].down)
            .collect()
    }

    /// Queues a write of server `s`'s primary on every live replica, its deadline as each
    /// replica's clock sees it (RF-1, RF-5).
    pub fn send_to_replicas(&mut self, m: &Model, s: u16, w: &redis::Write) {
        let from = self.redis[self.node(m, s)].skew;
        for r in self.replicas(m, s) {
            let seen = w.seen_from(self.redis[r].skew.saturating_sub(from));
            self.redis[r].backlog.push(seen);
        }
    }

    /// Keeps the clock offsets of server `s`'s nodes canonical: relative to the slowest live
    /// node, and none on a server without replicas or on a node that is down (no clock of
    /// theirs is ever compared with another's).
    pub fn settle_clocks(&mut self, m: &Model, s: u16) {
        let base = m.redis_base(s);
        let nodes = &mut self.redis[base..=base + usize::from(m.redis[usize::from(s)].replicas)];
        if nodes.len() == 1 {
            nodes[0].skew = 0;
            return;
        }
        let least = nodes.iter().filter(|n| !n.down).map(|n| n.skew).min().unwrap_or(0);
        for n in nodes {
            n.skew = if n.down { 0 } else { n.skew.saturating_sub(least) };
        }
    }

    /// Every process has finished (done, crashed or failed).
    #[must_use]
    pub fn is_final(&self) -> bool {
        self.procs.iter().all(|p| p.status.finished())
    }
}

/// The world without its processes: what a step of a process that is alone with it reads
/// and writes besides the process itself (`explore::memo`).
impl State {
    /// Every part of the world but the database, in the order the codec packs them. It names
    /// every field, so that a field added to `State` must be placed here (and is then packed,
    /// compared and copied with the world).
    #[allow(clippy::type_complexity)]
    fn rest(&self) -> (&[redis::Redis], &[u8], &[u8], &[Lock], &[i64], &[u8], u32) {
        let State {
            procs: _,
            db: _,
            redis,
            primary,
            epochs,
            mutexes,
            ghosts,
            faults_used,
            clock,
        } = self;
        (redis, primary, epochs, mutexes, ghosts, faults_used, *clock)
    }

    /// A state with this one's world and no process.
    #[must_use]
    pub fn world(&self) -> State {
        let (redis, primary, epochs, mutexes, ghosts, faults_used, clock) = self.rest();
        State {
            procs: Vec::new(),
            db: self.db.clone(),
            redis: redis.to_vec(),
            primary: primary.to_vec(),
            epochs: epochs.to_vec(),
            mutexes: mutexes.to_vec(),
            ghosts: ghosts.to_vec(),
            faults_used: faults_used.to_vec(),
            clock,
        }
    }

    /// Whether both have the same world: equal databases (the one shared database without a
    /// look: `Rc`'s `==` compares addresses first), equal everything else.
    #[must_use]
    pub fn same_world(&self, o: &State) -> bool {
        let (a, b) = (self.rest(), o.rest());
        self.db == o.db
            && eq(a.0, b.0)
            && eq(a.1, b.1)
            && eq(a.2, b.2)
            && eq(a.3, b.3)
            && eq(a.4, b.4)
            && eq(a.5, b.5)
            && a.6 == b.6
    }

    /// Hashes the world as [`State::same_world`] compares it.
    pub fn hash_world(&self, h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        (&*self.db, self.rest()).hash(h);
    }
}

/// Slice equality that never compares empty slices: the C library's `memcmp` may load from
/// an empty slice's dangling address under a mask, and a masked load from an unmapped page
/// stalls for hundreds of cycles (measured: a third of a search's time).
fn eq<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

impl State {
    /// Renumbers database commits densely and drops versions no snapshot can see, so that
    /// states differing only in history long gone are one state.
    pub fn normalise(&mut self) {
        let before: Vec<u32> = self
            .procs
            .iter()
            .filter_map(|p| p.txn.and_then(|t| t.snapshot))
            .collect();
        // Usually nothing changes: then the database and the processes stay shared.
        if self.db.is_normal(&before) {
            return;
        }
        let mut after = before.clone();
        {
            let mut refs: Vec<&mut u32> = after.iter_mut().collect();
            self.db.normalise(&mut refs);
        }
        // Only processes whose snapshot was renumbered are written.
        let mut k = 0;
        for p in &mut self.procs {
            let Some(old) = p.txn.and_then(|t| t.snapshot) else {
                continue;
            };
            if after[k] != old {
                if let Some(t) = p.txn.as_mut() {
                    t.snapshot = Some(after[k]);
                }
            }
            k += 1;
        }
    }
}
