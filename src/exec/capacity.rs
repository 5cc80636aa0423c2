//! Shared capacity a step may have to wait for: the database server's workers (`db workers
//! N`, SIM-8) and the connection pools (`pool P size N`, SIM-9). Neither is kept in the
//! state: who holds one is read off the processes, so no count can drift from the truth.

use crate::ir::{Model, OpKind, SqlStmt};
use crate::ir::value::Pid;
use crate::world::process::Status;
use crate::world::State;

/// Whether `pid` cannot start its next op yet: it needs a worker or a connection and none
/// is free.
#[must_use]
pub fn must_wait(m: &Model, s: &State, pid: Pid) -> bool {
    let pc = s.procs[pid.index()].pc as usize;
    let op = &m.program(pid).ops[pc].kind;
    if m.workload.holds_worker(op) && !worker_free(m, s) {
        return true;
    }
    if redis_server_of(m, pid, pc).is_some_and(|srv| !redis_worker_free(m, s, srv)) {
        return true;
    }
    needs_connection(m, s, pid) && !connection_free(m, s, pid)
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

/// The processes spending a command's latency on Redis server `server`.
fn redis_busy(m: &Model, s: &State, server: u16) -> Vec<Pid> {
    (0..s.procs.len())
        .filter(|&i| {
            let p = &s.procs[i];
            matches!(p.status, Status::Busy(_))
                && p.pc > 0
                && redis_server_of(m, Pid(i as u16), p.pc as usize - 1) == Some(server)
        })
        .map(|i| Pid(i as u16))
        .collect()
}

/// Whether Redis server `server` has a free worker.
fn redis_worker_free(m: &Model, s: &State, server: u16) -> bool {
    m.workload
        .redis_workers
        .is_none_or(|n| redis_busy(m, s, server).len() < usize::from(n))
}

/// Whether a database worker is free: fewer statements than `db workers` spend their latency.
fn worker_free(m: &Model, s: &State) -> bool {
    let Some(n) = m.workload.db_workers else {
        return true;
    };
    let busy = (0..s.procs.len())
        .filter(|&i| {
            let p = &s.procs[i];
            matches!(p.status, Status::Busy(_))
                && p.pc > 0
                && m.workload
                    .holds_worker(&m.program(Pid(i as u16)).ops[p.pc as usize - 1].kind)
        })
        .count();
    busy < usize::from(n)
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
    let group = m.processes[pid.index()].group;
    if m.workload.pool_of(group).is_none() || holds_connection(m, s, pid.index()) {
        return false;
    }
    let ops = &m.program(pid).ops;
    let pc = s.procs[pid.index()].pc as usize;
    let op = &ops[pc].kind;
    matches!(op, OpKind::Sql { stmt: SqlStmt::Begin { .. }, .. })
        || statement(op)
        || (m.workload.is_db_latency(op) && ops.get(pc + 1).is_some_and(|n| statement(&n.kind)))
}

/// Whether `pid`'s pool has a connection no process holds.
fn connection_free(m: &Model, s: &State, pid: Pid) -> bool {
    let group = m.processes[pid.index()].group;
    let Some(pool) = m.workload.pool_of(group) else {
        return true;
    };
    let held = (0..s.procs.len())
        .filter(|&i| {
            m.workload.pool_of(m.processes[i].group) == Some(pool) && holds_connection(m, s, i)
        })
        .count();
    held < usize::from(m.workload.pools[pool as usize].size)
}

/// What `pid`, ready at its next op, waits for, if anything: a database worker or a
/// connection of its pool, with the processes that hold them.
#[must_use]
pub fn waiting_for(m: &Model, s: &State, pid: Pid) -> Option<(String, Vec<Pid>)> {
    let p = &s.procs[pid.index()];
    if p.status != Status::Ready {
        return None;
    }
    let op = &m.program(pid).ops.get(p.pc as usize)?.kind;
    let holders = |held: &dyn Fn(usize) -> bool| -> Vec<Pid> {
        (0..s.procs.len()).filter(|&i| held(i)).map(|i| Pid(i as u16)).collect()
    };
    if m.workload.holds_worker(op) && !worker_free(m, s) {
        let busy = holders(&|i| {
            let q = &s.procs[i];
            matches!(q.status, Status::Busy(_))
                && q.pc > 0
                && m.workload
                    .holds_worker(&m.program(Pid(i as u16)).ops[q.pc as usize - 1].kind)
        });
        return Some(("a database worker".to_string(), busy));
    }
    if let Some(srv) = redis_server_of(m, pid, p.pc as usize) {
        if !redis_worker_free(m, s, srv) {
            let name = &m.redis[srv as usize].name;
            return Some((format!("a worker of Redis {name}"), redis_busy(m, s, srv)));
        }
    }
    if !needs_connection(m, s, pid) || connection_free(m, s, pid) {
        return None;
    }
    let pool = m.workload.pool_of(m.processes[pid.index()].group)?;
    let held = holders(&|i| {
        m.workload.pool_of(m.processes[i].group) == Some(pool) && holds_connection(m, s, i)
    });
    let name = &m.workload.pools[pool as usize].name;
    Some((format!("a connection of pool {name}"), held))
}
