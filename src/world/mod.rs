//! The simulated components, each a pure value: `Clone + Eq + Hash`, no IO, no real time.

pub mod codec;
pub mod db;
pub mod lock;
pub mod permute;
pub mod process;
pub mod redis;
pub mod shared;
pub mod value;

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
        State {
            procs,
            db: Shared::new(db::Db::new(tables)),
            redis: vec![redis::Redis::default(); m.redis_nodes()],
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

    /// Every process has finished (done, crashed or failed).
    #[must_use]
    pub fn is_final(&self) -> bool {
        self.procs.iter().all(|p| p.status.finished())
    }
}

impl State {
    /// Renumbers database commits densely and drops versions no snapshot can see, so that
    /// states differing only in history long gone are one state.
    pub fn normalise(&mut self) {
        // Only processes holding a snapshot are written (the rest stay shared).
        let mut snaps: Vec<&mut u32> = self
            .procs
            .iter_mut()
            .filter(|p| p.txn.is_some_and(|t| t.snapshot.is_some()))
            .filter_map(|p| p.txn.as_mut().and_then(|t| t.snapshot.as_mut()))
            .collect();
        if !snaps.is_empty() || !self.db.forgotten() {
            self.db.normalise(&mut snaps);
        }
    }
}
