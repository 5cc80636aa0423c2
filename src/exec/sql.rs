//! SQL statements against the database, PostgreSQL READ COMMITTED.

use super::eval::{eval, Scope};
use super::observe::{Event, Observer, Reply, Resource};
use super::step::{scope, Flow};
use crate::ir::{Expr, Model, SqlStmt};
use crate::world::db::Access;
use crate::world::process::{RunError, Status, Wait};
use crate::world::value::{Pid, Value};
use crate::world::State;

/// Runs a statement other than BEGIN (which is local code).
pub(super) fn run<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    stmt: &SqlStmt,
    into: &[u16],
    obs: &mut O,
) -> Result<Flow, RunError> {
    let reply = match stmt {
        SqlStmt::Begin => unreachable!("BEGIN is local code"),
        SqlStmt::Commit | SqlStmt::Rollback => {
            let commit = matches!(stmt, SqlStmt::Commit);
            if O::EVENTS {
                obs.event(Event::Sql {
                    stmt: stmt.clone(),
                    reply: Reply::None,
                });
            }
            // COMMIT or ROLLBACK outside a transaction only warns (PostgreSQL).
            if st.procs[pid.index()].in_txn {
                end_txn(st, pid, commit, obs);
            }
            return Ok(Flow::Next);
        }
        SqlStmt::Select {
            table,
            columns,
            filter,
            lock: None,
            ..
        } => {
            let rows = plain_select(m, st, pid, *table, filter.as_ref(), obs)?;
            project(&rows, columns)
        }
        SqlStmt::Select {
            table,
            columns,
            filter,
            ..
        } => match locking(m, st, pid, *table, filter.as_ref(), obs)? {
            Err(holder) => return Ok(blocked(st, pid, stmt, holder, obs)),
            Ok(rows) => {
                let values = rows
                    .iter()
                    .map(|&r| st.db.visible(*table, r, pid).into())
                    .collect::<Vec<Box<[Value]>>>();
                project(&values, columns)
            }
        },
        SqlStmt::Update {
            table,
            sets,
            filter,
            ..
        } => match locking(m, st, pid, *table, filter.as_ref(), obs)? {
            Err(holder) => return Ok(blocked(st, pid, stmt, holder, obs)),
            Ok(rows) => {
                for &r in &rows {
                    let new = updated(m, st, pid, *table, r, sets)?;
                    st.db.write(*table, r, pid, new);
                }
                Reply::Count(rows.len() as i64)
            }
        },
    };
    bind_reply(st, pid, into, &reply);
    if O::EVENTS {
        obs.event(Event::Sql {
            stmt: stmt.clone(),
            reply,
        });
    }
    if !st.procs[pid.index()].in_txn {
        end_txn(st, pid, true, obs);
    }
    Ok(Flow::Next)
}

fn blocked<O: Observer>(st: &State, pid: Pid, stmt: &SqlStmt, holder: Pid, obs: &mut O) -> Flow {
    if O::EVENTS {
        obs.event(Event::Sql {
            stmt: stmt.clone(),
            reply: Reply::None,
        });
        if let Status::Waiting(wait) = st.procs[pid.index()].status {
            obs.event(Event::Waits {
                wait,
                holder: Some(holder),
            });
        }
    }
    Flow::Blocked
}

/// A plain SELECT: never blocks, never locks (PG-7).
fn plain_select<O: Observer>(
    m: &Model,
    st: &State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
    obs: &mut O,
) -> Result<Vec<Box<[Value]>>, RunError> {
    let sc = scope(m, st, pid);
    let set = st
        .db
        .matching(table, pid, &mut |row| matches(filter, &sc, row))?;
    let rows: Vec<_> = (0..64u16).filter(|r| set & (1 << r) != 0).collect();
    for r in 0..st.db.tables[table as usize].len() as u16 {
        obs.read(Resource::Row { table, row: r });
    }
    Ok(rows
        .into_iter()
        .map(|r| st.db.visible(table, r, pid).into())
        .collect())
}

/// The row-locking part of UPDATE and SELECT … FOR UPDATE: the rows locked, or the holder of
/// the row the process now waits for. A resumed statement keeps the candidates of its first attempt.
fn locking<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
    obs: &mut O,
) -> Result<Result<Vec<u16>, Pid>, RunError> {
    for r in 0..st.db.tables[table as usize].len() as u16 {
        obs.write(Resource::Row { table, row: r });
    }
    let (candidates, waited) = match st.procs[pid.index()].status {
        Status::Waiting(Wait::Row {
            candidates, row, ..
        }) => (candidates, Some(row)),
        _ => {
            let sc = scope(m, st, pid);
            let set = st
                .db
                .matching(table, pid, &mut |row| matches(filter, &sc, row))?;
            (set, None)
        }
    };
    let held_before: u64 = (0..st.db.tables[table as usize].len() as u16)
        .filter(|&r| st.db.tables[table as usize][r as usize].lock.held_by(pid))
        .fold(0, |acc, r| acc | 1 << r);
    // The filter sees only the row, locals and `$me`; the database is taken out of the state
    // for the call so both can be borrowed.
    let mut db = std::mem::take(&mut st.db);
    let access = {
        let sc = scope(m, st, pid);
        db.lock_rows(table, pid, candidates, waited, &mut |row| {
            matches(filter, &sc, row)
        })
    };
    st.db = db;
    let access = access?;
    match access {
        Access::Wait { row, holder } => {
            st.procs[pid.index()].status = Status::Waiting(Wait::Row {
                table,
                row,
                candidates,
            });
            Ok(Err(holder))
        }
        Access::Locked(rows) => {
            // An autocommit statement releases its locks in the same step: not worth a line.
            if O::EVENTS && st.procs[pid.index()].in_txn {
                for &row in &rows {
                    if held_before & (1 << row) == 0 || waited == Some(row) {
                        obs.event(Event::RowLocked { table, row });
                    }
                }
            }
            Ok(Ok(rows))
        }
    }
}

fn matches(filter: Option<&Expr>, sc: &Scope, row: &[Value]) -> Result<bool, RunError> {
    match filter {
        None => Ok(true),
        Some(f) => Ok(eval(
            f,
            &Scope {
                row: Some(row),
                ..*sc
            },
        )?
        .truthy()),
    }
}

/// The new version of a row: every SET expression sees the row before the update.
fn updated(
    m: &Model,
    st: &State,
    pid: Pid,
    table: u16,
    r: u16,
    sets: &[(u16, Expr)],
) -> Result<Box<[Value]>, RunError> {
    let old = st.db.visible(table, r, pid);
    let sc = Scope {
        row: Some(old),
        ..scope(m, st, pid)
    };
    let mut new: Box<[Value]> = old.into();
    for (c, e) in sets {
        new[*c as usize] = eval(e, &sc)?;
    }
    Ok(new)
}

fn project(rows: &[Box<[Value]>], columns: &[u16]) -> Reply {
    Reply::Rows(
        rows.iter()
            .map(|r| columns.iter().map(|&c| r[c as usize]).collect())
            .collect(),
    )
}

/// `into`: the first row's columns (nil when there is none), or the row count.
fn bind_reply(st: &mut State, pid: Pid, into: &[u16], reply: &Reply) {
    let locals = &mut st.procs[pid.index()].locals;
    match reply {
        Reply::Rows(rows) => {
            for (k, &l) in into.iter().enumerate() {
                locals[l as usize] = rows.first().map_or(Value::Nil, |r| r[k]);
            }
        }
        Reply::Count(n) => {
            if let Some(&l) = into.first() {
                locals[l as usize] = Value::Int(*n);
            }
        }
        Reply::None => {}
    }
}

/// Ends `pid`'s transaction (commit or abort) and hands its row locks to the next waiters.
pub(super) fn end_txn<O: Observer>(st: &mut State, pid: Pid, commit: bool, obs: &mut O) {
    let written = if O::EVENTS && commit {
        written_rows(st, pid)
    } else {
        Vec::new()
    };
    let was_open = st.procs[pid.index()].in_txn;
    let grants = st.db.end(pid, commit);
    st.procs[pid.index()].in_txn = false;
    if !O::EVENTS {
        return;
    }
    // Every row the transaction wrote, even to the value it already had: a learner must see
    // the overwrite of a lost update.
    for (table, row) in written {
        let values = st.db.tables[table as usize][row as usize].committed.clone();
        obs.event(Event::RowCommitted { table, row, values });
    }
    if !commit && was_open {
        obs.event(Event::Aborted { pid });
    }
    for (table, row, next) in grants {
        let wait = match st.procs[next.index()].status {
            Status::Waiting(w) => w,
            _ => Wait::Row {
                table,
                row,
                candidates: 0,
            },
        };
        obs.event(Event::Granted { pid: next, wait });
    }
}

fn written_rows(st: &State, pid: Pid) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    for (t, rows) in st.db.tables.iter().enumerate() {
        for (r, row) in rows.iter().enumerate() {
            if row.lock.held_by(pid) && row.pending.is_some() {
                out.push((t as u16, r as u16));
            }
        }
    }
    out
}
