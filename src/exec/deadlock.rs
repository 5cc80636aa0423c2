//! Deadlocks and lock waits that end in an error: InnoDB's immediate detection with the
//! lighter transaction as victim (MY-20, domain §12), PostgreSQL's check after
//! `deadlock_timeout` by the waiter itself (PG-28, PG-29), and lock wait timeouts.

use super::observe::{Event, Observer};
use super::scan::Scan;
use super::sql::{end_txn, schema};
use crate::explore::waits;
use crate::ir::{error_code, Flavour, Model};
use crate::world::process::{Status, Txn, Wait};
use crate::world::value::{Pid, Sym};
use crate::world::State;

/// InnoDB, right after `pid` began to wait: if the wait closes a cycle, roll back the
/// transaction with the least weight (rows changed and locked); on a tie, the requester.
pub(super) fn innodb_on_wait<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    waiting: Scan,
    obs: &mut O,
) -> Scan {
    let Some(cycle) = cycle_through(m, st, pid) else {
        return waiting;
    };
    let edges = if O::EVENTS {
        cycle_edges(m, st, &cycle)
    } else {
        Vec::new()
    };
    let weight = |p: Pid| st.procs[p.index()].txn.map_or(0, |t| t.weight);
    let lightest = cycle.iter().map(|&p| weight(p)).min().unwrap_or(0);
    let victim = if weight(pid) == lightest {
        pid
    } else {
        *cycle
            .iter()
            .filter(|&&p| weight(p) == lightest)
            .min()
            .expect("non-empty")
    };
    if O::EVENTS {
        obs.event(Event::Deadlock {
            cycle: edges,
            victim,
        });
    }
    if victim == pid {
        return Scan::Error(error_code("1213"));
    }
    interrupt(m, st, victim, error_code("1213"), obs);
    waiting
}

/// The wait edges along a cycle of processes, in order.
fn cycle_edges(m: &Model, st: &State, cycle: &[Pid]) -> Vec<waits::Edge> {
    let edges = waits::edges(m, st);
    cycle
        .iter()
        .enumerate()
        .filter_map(|(i, &p)| {
            let next = cycle[(i + 1) % cycle.len()];
            edges
                .iter()
                .find(|e| e.waiter == p && e.holder == next)
                .copied()
        })
        .collect()
}

/// The processes on a wait-for cycle through `pid`, if there is one.
#[must_use]
pub fn cycle_through(m: &Model, st: &State, pid: Pid) -> Option<Vec<Pid>> {
    let edges = waits::edges(m, st);
    let mut path = vec![pid];
    let mut seen = vec![pid];
    fn dfs(
        edges: &[waits::Edge],
        at: Pid,
        goal: Pid,
        path: &mut Vec<Pid>,
        seen: &mut Vec<Pid>,
    ) -> bool {
        for e in edges.iter().filter(|e| e.waiter == at) {
            if e.holder == goal {
                return true;
            }
            if !seen.contains(&e.holder) {
                seen.push(e.holder);
                path.push(e.holder);
                if dfs(edges, e.holder, goal, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    dfs(&edges, pid, pid, &mut path, &mut seen).then_some(path)
}

/// A waiting process's lock wait ends in error `code`: it leaves the queue; if the error ends
/// its transaction, the transaction is rolled back now (its locks go to the next waiters;
/// PostgreSQL keeps the block open in the aborted state). Its statement fails when it next
/// steps.
pub(super) fn interrupt<O: Observer>(m: &Model, st: &mut State, pid: Pid, code: Sym, obs: &mut O) {
    let flavour = schema(m).flavour;
    if let Status::Waiting(Wait::Row { table, key, .. }) = st.procs[pid.index()].status {
        if let Ok(r) = st.db.find(table, key) {
            let grants = st.db.dequeue(flavour, table, r, pid);
            super::sql::announce(st, &grants, obs);
        }
    }
    let whole = !flavour.innodb() || code == error_code("1213");
    if let (true, Some(txn)) = (whole, st.procs[pid.index()].txn) {
        end_txn(m, st, pid, false, obs);
        if txn.explicit && flavour == Flavour::Postgres {
            st.procs[pid.index()].txn = Some(Txn {
                aborted: true,
                ..txn
            });
        }
    }
    let p = &mut st.procs[pid.index()];
    p.error = Some(code);
    p.status = Status::Ready;
    (p.check_in, p.timeout_in) = (None, None);
    if O::EVENTS {
        obs.event(Event::Interrupted { pid, code });
    }
}

/// Whether `pid` waits for a row lock it has not been granted yet, or for a gap lock to go.
#[must_use]
pub fn blocked_on_row(st: &State, pid: Pid) -> bool {
    let p = &st.procs[pid.index()];
    match p.status {
        Status::Waiting(Wait::Row { table, key, mode }) => st
            .db
            .find(table, key)
            .is_ok_and(|r| st.db.row(table, r).held_by(pid).is_none_or(|h| h > mode)),
        Status::Waiting(Wait::Gap { table, key }) => p
            .candidates
            .as_deref()
            .is_some_and(|row| st.db.gap_blocker(table, pid, key, row).is_some()),
        _ => false,
    }
}

/// PostgreSQL: `pid`'s `deadlock_timeout` has run out; it checks for a cycle through itself
/// and, if it finds one, aborts its own transaction with 40P01.
pub fn pg_check<O: Observer>(m: &Model, s: &State, pid: Pid, obs: &mut O) -> Option<State> {
    let p = &s.procs[pid.index()];
    if p.check_in != Some(0) || !blocked_on_row(s, pid) {
        return None;
    }
    let mut st = s.clone();
    st.procs[pid.index()].check_in = None;
    if let Some(cycle) = cycle_through(m, &st, pid) {
        if O::EVENTS {
            obs.event(Event::Deadlock {
                cycle: cycle_edges(m, &st, &cycle),
                victim: pid,
            });
        }
        interrupt(m, &mut st, pid, error_code("40P01"), obs);
    }
    Some(st)
}

/// A lock wait timed out: `lock_timeout` (55P03, the transaction aborts) or
/// `innodb_lock_wait_timeout` (1205, only the statement is rolled back, MY-19).
pub fn timeout<O: Observer>(m: &Model, s: &State, pid: Pid, obs: &mut O) -> Option<State> {
    let p = &s.procs[pid.index()];
    if p.timeout_in != Some(0) || !blocked_on_row(s, pid) {
        return None;
    }
    let mut st = s.clone();
    let code = if schema(m).flavour.innodb() {
        "1205"
    } else {
        "55P03"
    };
    interrupt(m, &mut st, pid, error_code(code), obs);
    Some(st)
}
