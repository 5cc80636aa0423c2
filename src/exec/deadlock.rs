//! Deadlocks and lock waits that end in an error: InnoDB's immediate detection with the
//! lighter transaction as victim (MY-20, domain §12), PostgreSQL's check after
//! `deadlock_timeout` by the waiter itself (PG-28, PG-29), and lock wait timeouts.

use super::observe::{Event, Observer};
use super::scan::Scan;
use super::sql::{end_txn, schema};
use crate::exec::waits;
use crate::ir::{error_code, Flavour, Model};
use crate::world::process::{Status, Txn, Wait};
use crate::ir::value::{Pid, Sym};
use crate::world::State;

/// InnoDB, right after `pid` began to wait: if the wait closes a cycle, roll back the
/// victim [`innodb_victim`] picks (MY-20, MY-21).
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
    let victim = innodb_victim(schema(m).flavour, &cycle, weight);
    if O::EVENTS {
        obs.event(Event::Deadlock {
            cycle: edges,
            victim,
        });
    }
    if victim == pid {
        return Scan::Error(error_code("1213").into());
    }
    interrupt(m, st, victim, error_code("1213"), obs);
    waiting
}

/// The transaction InnoDB rolls back to break a wait-for cycle. `cycle[0]` is the requester
/// whose wait closed it, and each member waits for the next. Both engines roll back the
/// lightest transaction (rows changed and locked); they break ties by the members' places
/// on the cycle, never by anything like a process number, so the choice is the same in
/// every arrangement of interchangeable processes (docs/semantics.md, "Deadlock victims").
///
/// - MySQL 8 (`lock_wait_choose_victim` after `lock_wait_order_for_choosing_victim`,
///   storage/innobase/lock/lock0wait.cc): the cycle is rotated so that the latest waiter,
///   the requester, comes last; walking it, each member at most as heavy as the one chosen so
///   far replaces it. A tie goes to the requester, else to the last tied member before it.
/// - MariaDB 10.6+ (`Deadlock::find_cycle` and `Deadlock::report`, lock0lock.cc; observed on
///   MariaDB 10.11.14): Brent's cycle finder, run from the requester along the wait-for
///   edges, stops on some member; the walk starts there and keeps the first strictly
///   lightest member, the requester counted a half lighter (`calc_victim_weight` sets the
///   lowest bit for every other transaction).
#[must_use]
pub fn innodb_victim(flavour: Flavour, cycle: &[Pid], weight: impl Fn(Pid) -> u16) -> Pid {
    let n = cycle.len();
    if flavour == Flavour::Mariadb {
        let rank = |i: usize| (u32::from(weight(cycle[i])) << 1) | u32::from(i != 0);
        let start = brent_meeting(n);
        let best = (0..n).map(|k| (start + k) % n).fold(start, |best, i| {
            if rank(i) < rank(best) {
                i
            } else {
                best
            }
        });
        return cycle[best];
    }
    let mut order = (1..n).chain(std::iter::once(0));
    let first = order.next().unwrap_or(0);
    let best = order.fold(first, |best, i| {
        if weight(cycle[best]) >= weight(cycle[i]) {
            i
        } else {
            best
        }
    });
    cycle[best]
}

/// Where Brent's cycle detection, as MariaDB's `Deadlock::find_cycle` runs it from the
/// requester (place 0) around a cycle of `n` members (place `i` waits for place `i + 1`),
/// meets itself: the place it returns.
fn brent_meeting(n: usize) -> usize {
    let (mut tortoise, mut hare) = (0usize, 0usize);
    let (mut power, mut l) = (1usize, 1usize);
    loop {
        hare = (hare + 1) % n.max(1);
        if tortoise == hare {
            return hare;
        }
        if l == power {
            power <<= 1;
            l = 0;
            tortoise = hare;
        }
        l += 1;
    }
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
    // Nothing waits for `pid`: no cycle passes through it (the common case, checked cheaply).
    if !waits::awaited(m, st, pid) {
        return None;
    }
    let edges = waits::edges(m, st);
    // Out-edges per waiter, in the edges' order: the search visits them as a scan of the
    // list would, so the cycle found (and the victim it implies) does not depend on this
    // index, which only keeps a search among many waiters linear.
    let mut out: Vec<Vec<Pid>> = vec![Vec::new(); st.procs.len()];
    for e in &edges {
        if let Some(v) = out.get_mut(e.waiter.index()) {
            v.push(e.holder);
        }
    }
    let mut path = vec![pid];
    let mut seen = vec![false; st.procs.len()];
    seen[pid.index()] = true;
    fn dfs(out: &[Vec<Pid>], at: Pid, goal: Pid, path: &mut Vec<Pid>, seen: &mut [bool]) -> bool {
        for &h in &out[at.index()] {
            if h == goal {
                return true;
            }
            if !seen[h.index()] {
                seen[h.index()] = true;
                path.push(h);
                if dfs(out, h, goal, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    dfs(&out, pid, pid, &mut path, &mut seen).then_some(path)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `cycle[i]` is transaction `i` of a cycle that starts at the requester; `weights[i]`
    /// its weight.
    fn victim(flavour: Flavour, weights: &[u16]) -> usize {
        let cycle: Vec<Pid> = (0..weights.len() as u16).map(Pid).collect();
        innodb_victim(flavour, &cycle, |p| weights[p.index()]).index()
    }

    /// Deadlocks run on MariaDB 10.11.14: transaction `i` locks row `i` (and a second row
    /// when it is to be heavier), then asks for row `i + 1` round the ring, the requester
    /// last. Listed from the requester along the waits, with the transaction rolled back.
    #[test]
    fn mariadb_victims_are_those_observed() {
        for (weights, rolled_back) in [
            (&[1, 1][..], 0),
            (&[2, 1], 1),
            (&[1, 2], 0),
            (&[2, 1, 1], 1),
            (&[1, 1, 1], 0),
            (&[2, 1, 1, 2], 1),
            (&[2, 1, 1, 1], 3),
            (&[2, 2, 1, 1], 3),
            (&[2, 1, 1, 1, 1], 2),
            (&[2, 2, 1, 1, 1], 2),
            (&[2, 2, 2, 1, 1], 3),
            (&[2, 1, 1, 2, 2], 2),
        ] {
            assert_eq!(
                victim(Flavour::Mariadb, weights),
                rolled_back,
                "{weights:?}"
            );
        }
    }

    /// MySQL 8's rule, read from lock0wait.cc: the lightest, ties to the requester, else to
    /// the last tied one before it on the cycle.
    #[test]
    fn mysql_victims_follow_its_source() {
        for (weights, rolled_back) in [
            (&[1, 1][..], 0),
            (&[2, 1], 1),
            (&[2, 1, 1], 2),
            (&[2, 1, 1, 2], 2),
            (&[2, 1, 1, 1], 3),
            (&[2, 1, 1, 1, 1], 4),
            (&[1, 1, 1, 1, 1], 0),
            (&[3, 1, 2, 1, 3], 3),
        ] {
            assert_eq!(victim(Flavour::Mysql, weights), rolled_back, "{weights:?}");
        }
    }

    /// Brent's finder, as MariaDB runs it, meets itself on the requester for a cycle of
    /// three, on the one the requester waits for for two, on the one waiting for the
    /// requester for four, and two past the requester for five.
    #[test]
    fn brent_meets_where_mariadb_starts_its_walk() {
        assert_eq!((2..=5).map(brent_meeting).collect::<Vec<_>>(), [1, 0, 3, 2]);
    }
}
