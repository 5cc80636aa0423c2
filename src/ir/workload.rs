//! What a model says about cost and load: how long operations take, how clients arrive, the
//! parameters a run may change. `check` reads only the ranges (every length is explored);
//! `simulate` draws from the distributions.

use super::Sym;

/// The workload half of a model. Empty for a model that declares none of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    /// Distributions that delay ops refer to (`OpKind::Work::draw`); index = draw id.
    pub draws: Vec<Draw>,
    /// `latency KIND D` lines, in declaration order, as draw ids.
    pub latency: Vec<(Latency, u16)>,
    /// How each process group is run (index = group).
    pub arrivals: Vec<Arrival>,
    /// `param NAME = V`, with the value in force (after `--set`), as written (`10`, `50ms`).
    pub params: Vec<(String, String)>,
    /// `db workers N`: at most N database statements execute (spend their latency) at once.
    pub db_workers: Option<u16>,
    /// `redis workers N`: each Redis server runs at most N commands (their latency) at once.
    pub redis_workers: Option<u16>,
    /// `pool NAME size N`: connection pools, in declaration order.
    pub pools: Vec<Pool>,
    /// The pool each group's processes take their connections from (index = group).
    pub group_pool: Vec<Option<u16>>,
}

/// A connection pool: a transaction, or an autocommit statement, holds one of its `size`
/// connections from its first statement to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    pub name: String,
    pub size: u16,
}

/// A distribution of a delay, in ticks, and what the delay is spent on.
#[derive(Clone, Debug, PartialEq)]
pub struct Draw {
    pub dist: Dist,
    pub spent: Spent,
}

/// What a delay is, for the simulator's figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spent {
    /// `work D`: computation.
    Work,
    /// `sleep D`: waiting on purpose (backoff).
    Sleep,
    /// The server's time for one operation of this kind (`latency KIND D`).
    Latency(Latency),
    /// `call NAME D`: a call to another service.
    Call(Sym),
    /// An open group's wait for its next arrival.
    Arrival,
}

/// The kinds of operation a `latency` line may price.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Latency {
    /// Every SQL statement but COMMIT and ROLLBACK.
    Sql,
    /// COMMIT and ROLLBACK.
    Commit,
    /// Every Redis command or script.
    Redis,
    /// `lock` and `unlock` of an in-process mutex.
    Lock,
    /// A Redis write reaching a replica (`simulate` only: `check` lets a replica catch up at
    /// any moment, which covers every lag).
    Replication,
}

impl Latency {
    pub const ALL: [Latency; 5] = [
        Latency::Sql,
        Latency::Commit,
        Latency::Redis,
        Latency::Lock,
        Latency::Replication,
    ];

    /// The word the `latency` line uses.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Latency::Sql => "sql",
            Latency::Commit => "commit",
            Latency::Redis => "redis",
            Latency::Lock => "lock",
            Latency::Replication => "replication",
        }
    }
}

/// A distribution of durations in ticks. `check` explores its [`Dist::range`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    Fixed(u32),
    /// Every length from `lo` to `hi`, equally likely.
    Uniform { lo: u32, hi: u32 },
    /// Exponential with this mean, cut at `max` (a draw above it is `max`).
    Exponential { mean: f64, max: u32 },
    /// Log-normal with this median and 99th percentile, cut at `max`.
    LogNormal { median: f64, p99: f64, max: u32 },
}

impl Dist {
    /// The shortest and the longest length a draw can have.
    #[must_use]
    pub fn range(self) -> (u32, u32) {
        match self {
            Dist::Fixed(t) => (t, t),
            Dist::Uniform { lo, hi } => (lo, hi),
            Dist::Exponential { max, .. } | Dist::LogNormal { max, .. } => (0, max),
        }
    }
}

/// How a group's processes run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    /// Each process runs its body once, from the start (the checker's way).
    Once,
    /// `loop think D`: a closed-loop client; after each run of its body it thinks for draw
    /// `think`, then runs it again. `check` runs the body once.
    Closed { think: u16 },
    /// `arrive poisson R/s` or `arrive every D`: an open stream of requests, served by the
    /// group's processes in turn; `gap` draws the time between two arrivals. `check` starts
    /// each process once, at any moment.
    Open { gap: u16 },
}

/// The kind of cost a visible op pays, if a `latency` line may price it.
#[must_use]
pub fn latency_of(op: &super::OpKind) -> Option<Latency> {
    use super::{OpKind, SqlStmt};
    Some(match op {
        OpKind::Sql {
            stmt: SqlStmt::Commit | SqlStmt::Rollback,
            ..
        } => Latency::Commit,
        OpKind::Sql {
            stmt: SqlStmt::Begin { .. },
            ..
        } => return None,
        OpKind::Sql { .. } => Latency::Sql,
        OpKind::Redis { .. } | OpKind::AwaitRedis { .. } | OpKind::Atomic { .. } => Latency::Redis,
        OpKind::Lock { .. } | OpKind::Unlock { .. } => Latency::Lock,
        _ => return None,
    })
}

impl Workload {
    /// Whether `op` is a database statement's latency, which holds one of the server's
    /// workers while it lasts (`db workers N`).
    #[must_use]
    pub fn holds_worker(&self, op: &super::OpKind) -> bool {
        self.db_workers.is_some() && self.is_db_latency(op)
    }

    /// Whether the model declares anything of a workload (then its tick is at most 1 ms).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.draws.is_empty()
            && self.arrivals.iter().all(|a| *a == Arrival::Once)
            && self.db_workers.is_none()
            && self.redis_workers.is_none()
            && self.pools.is_empty()
    }

    /// Whether a step can depend on other processes through a shared capacity (database
    /// workers, connection pools) rather than through the data: reductions that assume
    /// otherwise are off.
    #[must_use]
    pub fn shares_capacity(&self) -> bool {
        self.db_workers.is_some()
            || self.redis_workers.is_some()
            || self.group_pool.iter().any(Option::is_some)
    }

    /// The pool group `g` takes its connections from.
    #[must_use]
    pub fn pool_of(&self, g: usize) -> Option<u16> {
        self.group_pool.get(g).copied().flatten()
    }

    /// Whether `op` is the latency of a database statement (a worker's time, SIM-8).
    #[must_use]
    pub fn is_db_latency(&self, op: &super::OpKind) -> bool {
        match op {
            super::OpKind::Work {
                draw: Some(d),
                upto,
                ..
            } if *upto > 0 => matches!(
                self.draws[*d as usize].spent,
                Spent::Latency(Latency::Sql | Latency::Commit)
            ),
            _ => false,
        }
    }

    /// The draw of `latency replication D`, if the model has one.
    #[must_use]
    pub fn replication(&self) -> Option<u16> {
        self.latency
            .iter()
            .find(|(k, _)| *k == Latency::Replication)
            .map(|&(_, d)| d)
    }

    /// How group `g` runs.
    #[must_use]
    pub fn arrival(&self, g: usize) -> Arrival {
        self.arrivals.get(g).copied().unwrap_or(Arrival::Once)
    }
}
