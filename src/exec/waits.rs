//! The wait-for graph of a state, derived from the processes' `Waiting` statuses.

use crate::ir::{Flavour, Model, OpKind};
use crate::world::db::conflicts;
use crate::world::process::{Status, Wait};
use crate::ir::value::{Pid, Sym, Value};
use crate::world::State;
use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;

/// One edge: `waiter` waits at `wait` for what `holder` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub waiter: Pid,
    pub wait: Wait,
    pub holder: Pid,
}

/// Every wait edge of the state, by waiter: a row-lock waiter waits for every holder whose
/// mode conflicts with the one it asked for.
#[must_use]
pub fn edges(m: &Model, s: &State) -> Vec<Edge> {
    let mut out = Vec::new();
    for (i, p) in s.procs.iter().enumerate() {
        let Status::Waiting(wait) = p.status else {
            continue;
        };
        let waiter = Pid(i as u16);
        let holders: Vec<Pid> = match wait {
            Wait::Mutex(l) => s.mutexes[l as usize].holder.into_iter().collect(),
            Wait::Row { table, key, mode } => {
                let flavour = m.db.as_ref().map_or(Flavour::Postgres, |d| d.flavour);
                s.db.find(table, key).map_or(Vec::new(), |r| {
                    let row = s.db.row(table, r);
                    let mut who: Vec<Pid> = row
                        .locks
                        .held
                        .iter()
                        .filter(|&&(h, hm)| h != waiter && conflicts(flavour, hm, mode))
                        .map(|&(h, _)| h)
                        .collect();
                    // InnoDB: a request also waits for conflicting requests queued ahead.
                    if flavour.innodb() && row.held_by(waiter).is_none_or(|h| h > mode) {
                        who.extend(row.waiters_ahead(flavour, waiter, mode));
                    }
                    who
                })
            }
            Wait::Gap { table, key } => {
                let row = p.candidates.as_deref().unwrap_or(&[]);
                let mut owners: Vec<Pid> =
                    s.db.gaps
                        .iter()
                        .filter(|g| g.table == table && g.owner != waiter)
                        .filter(|g| !row.is_empty() && g.range.covers(key, row))
                        .map(|g| g.owner)
                        .collect();
                owners.dedup();
                owners
            }
            Wait::Await { .. } => await_owner(m, s, waiter).into_iter().collect(),
            Wait::Replicas { .. } => Vec::new(),
        };
        for holder in holders.into_iter().filter(|&h| h != waiter) {
            out.push(Edge {
                waiter,
                wait,
                holder,
            });
        }
    }
    out
}

/// The process named by the value of the key an `await` polls (a lock token), if any.
fn await_owner(m: &Model, s: &State, pid: Pid) -> Option<Pid> {
    let op = &m.program(pid).ops[s.procs[pid.index()].pc as usize];
    let OpKind::AwaitRedis { cmd, server, .. } = &op.kind else {
        return None;
    };
    match s.redis[s.node(m, *server)].get(cmd.key())?.value {
        Value::Pid(p) => Some(p),
        _ => None,
    }
}

/// The processes that `await` a Redis command on a key no process holds (the value is not a
/// process id: a key left at the start, or by a process that stored something else), with the
/// key and what it holds: no process's release will ever wake them; only a TTL can.
#[must_use]
pub fn ownerless_awaits(m: &Model, s: &State) -> Vec<(Pid, Sym, Value, Option<u32>)> {
    let mut out = Vec::new();
    for (p, proc) in s.procs.iter().enumerate() {
        let pid = Pid(p as u16);
        if !matches!(proc.status, Status::Waiting(Wait::Await { .. })) {
            continue;
        }
        let op = &m.program(pid).ops[proc.pc as usize];
        let OpKind::AwaitRedis { cmd, server, .. } = &op.kind else {
            continue;
        };
        match s.redis[s.node(m, *server)].get(cmd.key()) {
            Some(k) if !matches!(k.value, Value::Pid(_)) => {
                out.push((pid, k.name, k.value, k.ttl));
            }
            _ => {}
        }
    }
    out
}

/// The processes blocked in a `WAIT n 0` (no timeout): each with the server, the replicas it
/// needs and the replicas the server has now. Only replication can end such a wait.
#[must_use]
pub fn replica_waits(m: &Model, s: &State) -> Vec<(Pid, u16, u8, usize)> {
    let mut out = Vec::new();
    for (p, proc) in s.procs.iter().enumerate() {
        if let Status::Waiting(Wait::Replicas { server, need }) = proc.status {
            if proc.timeout_in.is_none() {
                out.push((Pid(p as u16), server, need, s.replicas(m, server).len()));
            }
        }
    }
    out
}

/// A cycle of waits, if there is one: the edges in order, starting at the smallest pid.
#[must_use]
pub fn cycle(m: &Model, s: &State) -> Option<Vec<Edge>> {
    let edges = edges(m, s);
    let g: DiGraphMap<u16, ()> = edges.iter().map(|e| (e.waiter.0, e.holder.0)).collect();
    let scc = tarjan_scc(&g).into_iter().find(|c| c.len() > 1)?;
    let start = *scc.iter().min()?;
    let mut out = Vec::new();
    let mut at = start;
    loop {
        let e = *edges.iter().find(|e| e.waiter.0 == at)?;
        out.push(e);
        at = e.holder.0;
        if at == start || out.len() > edges.len() {
            break;
        }
    }
    Some(out)
}

/// Whether some wait edge of [`edges`] ends at `pid`: a process waits for what `pid` holds,
/// or (InnoDB) for `pid`'s request queued ahead of its own. A cycle through `pid` needs one,
/// so a search for one can stop here when there is none; this test looks at each waiter once
/// and at each row's queue once, where [`edges`] lists every waiter ahead of every waiter.
#[must_use]
pub fn awaited(m: &Model, s: &State, pid: Pid) -> bool {
    let flavour = m.db.as_ref().map_or(Flavour::Postgres, |d| d.flavour);
    // Per row: the mode `pid` is queued with there, and which processes are queued ahead
    // of it (a waiter not among them, queued behind or not queued, has `pid` ahead).
    let mut queues: Vec<((u16, Value), Option<Place>)> = Vec::new();
    for (i, p) in s.procs.iter().enumerate() {
        let Status::Waiting(wait) = p.status else {
            continue;
        };
        let waiter = Pid(i as u16);
        if waiter == pid {
            continue;
        }
        let hit = match wait {
            Wait::Mutex(l) => s.mutexes[l as usize].holder == Some(pid),
            Wait::Row { table, key, mode } => s.db.find(table, key).is_ok_and(|r| {
                let row = s.db.row(table, r);
                let held = row
                    .locks
                    .held
                    .iter()
                    .any(|&(h, hm)| h == pid && conflicts(flavour, hm, mode));
                let mut queued = || {
                    let at = match queues.iter().position(|(k, _)| *k == (table, key)) {
                        Some(at) => at,
                        None => {
                            queues.push(((table, key), ahead_of(&row.locks.queue, pid, s)));
                            queues.len() - 1
                        }
                    };
                    queues[at].1.as_ref().is_some_and(|(pm, before)| {
                        !before[waiter.index()] && conflicts(flavour, *pm, mode)
                    })
                };
                held || (flavour.innodb()
                    && row.held_by(waiter).is_none_or(|h| h > mode)
                    && queued())
            }),
            Wait::Gap { table, key } => {
                let row = p.candidates.as_deref().unwrap_or(&[]);
                !row.is_empty()
                    && s.db
                        .gaps
                        .iter()
                        .any(|g| g.table == table && g.owner == pid && g.range.covers(key, row))
            }
            Wait::Await { .. } => await_owner(m, s, waiter) == Some(pid),
            Wait::Replicas { .. } => false,
        };
        if hit {
            return true;
        }
    }
    false
}

/// A process's place in a row's queue: the mode it asked for, and a mark on every process
/// queued ahead of it.
type Place = (crate::ir::LockMode, Vec<bool>);

/// `pid`'s [`Place`] in a row's queue; `None` when it is not queued there.
fn ahead_of(queue: &[(Pid, crate::ir::LockMode)], pid: Pid, s: &State) -> Option<Place> {
    let at = queue.iter().position(|&(p, _)| p == pid)?;
    let mut before = vec![false; s.procs.len()];
    for &(p, _) in &queue[..at] {
        before[p.index()] = true;
    }
    Some((queue[at].1, before))
}
