//! Shared capacity a step may have to wait for: the database server's workers (`db workers
//! N`, SIM-8), the Redis servers' (`redis workers N`) and the connection pools (`pool P size
//! N`, SIM-9). None is kept in the state: who holds one is read off the processes, so no
//! count can drift from the truth.

use crate::ir::{Model, OpKind, SqlStmt};
use crate::ir::value::Pid;
use crate::world::process::Status;
use crate::world::State;

/// A shared thing a process may have to wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// One of the database's `db workers`.
    DbWorker,
    /// One of this Redis server's `redis workers`.
    RedisWorker(u16),
    /// A connection of this pool.
    Connection(u16),
}

impl Resource {
    /// How it is named in a trace.
    #[must_use]
    pub fn describe(self, m: &Model) -> String {
        match self {
            Resource::DbWorker => "a database worker".to_string(),
            Resource::RedisWorker(s) => format!("a worker of Redis {}", m.redis[s as usize].name),
            Resource::Connection(p) => {
                format!("a connection of pool {}", m.workload.pools[p as usize].name)
            }
        }
    }

    fn size(self, m: &Model) -> usize {
        usize::from(match self {
            Resource::DbWorker => m.workload.db_workers.unwrap_or(u16::MAX),
            Resource::RedisWorker(_) => m.workload.redis_workers.unwrap_or(u16::MAX),
            Resource::Connection(p) => m.workload.pools[p as usize].size,
        })
    }

    /// Whether process `i` holds one.
    fn held_by(self, m: &Model, s: &State, i: usize) -> bool {
        let p = &s.procs[i];
        let pid = Pid(i as u16);
        let in_latency = matches!(p.status, Status::Busy(_)) && p.pc > 0;
        match self {
            Resource::DbWorker => {
                in_latency && m.workload.holds_worker(&m.program(pid).ops[p.pc as usize - 1].kind)
            }
            Resource::RedisWorker(srv) => {
                in_latency && redis_server_of(m, pid, p.pc as usize - 1) == Some(srv)
            }
            Resource::Connection(pool) => {
                m.workload.pool_of(m.processes[i].group) == Some(pool) && holds_connection(m, s, i)
            }
        }
    }

    /// The processes that hold one.
    fn holders<'a>(self, m: &'a Model, s: &'a State) -> impl Iterator<Item = Pid> + 'a {
        (0..s.procs.len())
            .filter(move |&i| self.held_by(m, s, i))
            .map(|i| Pid(i as u16))
    }

    /// Whether every one is held.
    fn exhausted(self, m: &Model, s: &State) -> bool {
        self.holders(m, s).count() >= self.size(m)
    }
}

/// What `pid`'s next op takes that it does not hold yet: a server's worker for a latency,
/// and a connection of its pool outside a transaction (a statement's latency takes both).
fn needs(m: &Model, s: &State, pid: Pid) -> [Option<Resource>; 2] {
    let pc = s.procs[pid.index()].pc as usize;
    let op = &m.program(pid).ops[pc].kind;
    let worker = if m.workload.holds_worker(op) {
        Some(Resource::DbWorker)
    } else {
        redis_server_of(m, pid, pc).map(Resource::RedisWorker)
    };
    let pool = m.workload.pool_of(m.processes[pid.index()].group);
    let connection = pool.filter(|_| needs_connection(m, s, pid)).map(Resource::Connection);
    [worker, connection]
}

/// Whether `pid` cannot start its next op yet: it needs a worker or a connection and none
/// is free.
#[must_use]
pub fn must_wait(m: &Model, s: &State, pid: Pid) -> bool {
    needs(m, s, pid)
        .into_iter()
        .flatten()
        .any(|r| r.exhausted(m, s))
}

/// What `pid`, ready at its next op, waits for, if anything, with the processes that hold
/// every one of it.
#[must_use]
pub fn waiting_for(m: &Model, s: &State, pid: Pid) -> Option<(Resource, Vec<Pid>)> {
    if s.procs[pid.index()].status != Status::Ready {
        return None;
    }
    let r = needs(m, s, pid)
        .into_iter()
        .flatten()
        .find(|r| r.exhausted(m, s))?;
    Some((r, r.holders(m, s).collect()))
}

/// The Redis server whose worker the op at `pc` of `pid` takes: a Redis command's latency
/// (the command follows it), with `redis workers N`.
fn redis_server_of(m: &Model, pid: Pid, pc: usize) -> Option<u16> {
    m.workload.redis_workers?;
    let ops = &m.program(pid).ops;
    let OpKind::Work { draw: Some(d), upto, .. } = ops.get(pc)?.kind else {
        return None;
    };
    let redis = crate::ir::workload::Spent::Latency(crate::ir::workload::Latency::Redis);
    if upto == 0 || m.workload.draws[d as usize].spent != redis {
        return None;
    }
    match ops.get(pc + 1)?.kind {
        OpKind::Redis { server, .. }
        | OpKind::AwaitRedis { server, .. }
        | OpKind::Atomic { server, .. } => Some(server),
        _ => None,
    }
}

/// Whether a statement (not COMMIT or ROLLBACK, which need no connection of their own).
fn statement(op: &OpKind) -> bool {
    matches!(op, OpKind::Sql { stmt, .. } if !matches!(stmt, SqlStmt::Commit | SqlStmt::Rollback))
}

/// Whether process `i` holds a connection of its pool: it has a transaction open (explicit,
/// or an autocommit statement's that waits), or an autocommit statement of its is under way
/// (spending its latency, or just done with it).
#[must_use]
pub fn holds_connection(m: &Model, s: &State, i: usize) -> bool {
    let p = &s.procs[i];
    if p.txn.is_some() {
        return true;
    }
    let ops = &m.program(Pid(i as u16)).ops;
    let pc = p.pc as usize;
    // A hung process keeps its connections (its autocommit statement's too).
    matches!(p.status, Status::Busy(_) | Status::Ready | Status::Hung)
        && pc > 0
        && ops.get(pc).is_some_and(|op| statement(&op.kind))
        && m.workload.is_db_latency(&ops[pc - 1].kind)
}

/// Whether `pid`'s next op would take a connection it does not hold: a BEGIN, a statement,
/// or a statement's latency (not COMMIT's or ROLLBACK's), outside a transaction, by a
/// process placed on a pool.
fn needs_connection(m: &Model, s: &State, pid: Pid) -> bool {
    if holds_connection(m, s, pid.index()) {
        return false;
    }
    let ops = &m.program(pid).ops;
    let pc = s.procs[pid.index()].pc as usize;
    let op = &ops[pc].kind;
    matches!(op, OpKind::Sql { stmt: SqlStmt::Begin { .. }, .. })
        || statement(op)
        || (m.workload.is_db_latency(op) && ops.get(pc + 1).is_some_and(|n| statement(&n.kind)))
}

