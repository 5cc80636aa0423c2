//! SQL statements: transactions, reads, writes, and what an error does to them.

use super::eval::{eval, Scope};
use super::observe::{About, Event, Observer, Refusal, Reply};
use super::scan::{self, Kind, Scan};
use super::step::{scope, Flow};
use crate::ir::{error_code, Db as Schema, Expr, LockClause, LockMode, Model, OnError, SqlStmt};
use crate::ir::{Flavour, Isolation, WaitPolicy};
use crate::world::db::{Grant, View};
use crate::world::process::{RunError, Status, Txn, Wait};
use crate::ir::value::{Pid, Sym, Value};
use crate::world::State;

/// What a statement did.
pub(super) enum Outcome {
    Done(Reply),
    /// It waits for a row lock `holder` holds (status already set).
    Wait(Pid),
    Error(Refusal),
}

/// Runs a statement other than BEGIN (which is local code).
pub(super) fn run<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    stmt: &SqlStmt,
    into: &[u16],
    on_error: Option<&OnError>,
    obs: &mut O,
) -> Result<Flow, RunError> {
    let locals: Box<[Value]> = if O::LOCALS {
        st.procs[pid.index()].locals.iter().copied().collect()
    } else {
        Box::default()
    };
    let out = match st.procs[pid.index()].error.take() {
        Some(code) => Outcome::Error(Refusal::ending_wait(code)),
        None => statement(m, st, pid, stmt, obs)?,
    };
    Ok(conclude(m, st, pid, (stmt, into, on_error), out, locals, obs))
}

/// What a statement's outcome does to the process, wherever the outcome came from (the
/// simulated database, or a real server under `interlock load`): bind `into`, clear or set
/// the handler's local, end an autocommit transaction, or fail by the error rules.
pub(super) fn conclude<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    (stmt, into, on_error): (&SqlStmt, &[u16], Option<&OnError>),
    out: Outcome,
    locals: Box<[Value]>,
    obs: &mut O,
) -> Flow {
    match out {
        Outcome::Done(reply) => {
            bind_reply(st, pid, into, &reply);
            if O::COVER {
                match &reply {
                    Reply::Rows(rows) => obs.rows(rows.len()),
                    Reply::Count(n) => obs.rows(usize::try_from(*n).unwrap_or(0)),
                    Reply::None | Reply::Tag(_) | Reply::Error(_) => {}
                }
            }
            if let Some(h) = on_error {
                st.procs[pid.index()].locals[h.local as usize] = Value::Nil;
            }
            if O::EVENTS {
                obs.event(Event::Sql {
                    stmt: stmt.clone(),
                    reply,
                    locals,
                });
            }
            if st.procs[pid.index()].txn.is_some_and(|t| !t.explicit) {
                end_txn(m, st, pid, true, obs);
            }
            Flow::Next
        }
        Outcome::Wait(holder) => {
            if O::EVENTS {
                obs.event(Event::Sql {
                    stmt: stmt.clone(),
                    reply: Reply::None,
                    locals,
                });
                if let Status::Waiting(wait) = st.procs[pid.index()].status {
                    let holder = Some(holder);
                    obs.event(Event::Waits { wait, holder });
                }
            }
            Flow::Blocked
        }
        Outcome::Error(r) => fail(m, st, pid, stmt, r, on_error, obs),
    }
}

fn statement<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    stmt: &SqlStmt,
    obs: &mut O,
) -> Result<Outcome, RunError> {
    let db = schema(m);
    if matches!(stmt, SqlStmt::Commit | SqlStmt::Rollback) {
        return Ok(finish(m, st, pid, matches!(stmt, SqlStmt::Commit), obs));
    }
    let clock = st.clock;
    let txn = *st.procs[pid.index()].txn.get_or_insert(Txn {
        isolation: db.isolation,
        explicit: false,
        snapshot: None,
        aborted: false,
        weight: 0,
        started: clock,
    });
    if txn.aborted {
        return Ok(Outcome::Error(error_code("25P02").into()));
    }
    // PostgreSQL RR/SERIALIZABLE take the snapshot at the first statement (PG-3).
    if db.flavour == Flavour::Postgres && txn.isolation >= Isolation::RepeatableRead {
        snapshot(st, pid);
    }
    let r = match stmt {
        SqlStmt::Select {
            table,
            columns,
            filter,
            order,
            limit,
            lock,
            ..
        } => {
            let lock = lock.or_else(|| serializable_share(db, txn));
            if db.flavour == Flavour::Postgres && txn.isolation == Isolation::Serializable {
                note_reads(m, st, pid, *table, filter.as_ref())?;
            }
            match lock {
                None => Outcome::Done(plain_select(
                    m,
                    st,
                    pid,
                    *table,
                    filter.as_ref(),
                    order,
                    *limit,
                    columns,
                )?),
                Some(clause) => {
                    let kind = Kind::Select {
                        order,
                        limit: *limit,
                    };
                    let target = (*table, filter.as_ref(), clause, kind);
                    with_locked(m, st, pid, target, obs, |st, rows, _| {
                        let vals = rows
                            .iter()
                            .map(|&r| st.db.read(*table, r, pid, View::Latest).map(Box::from))
                            .collect::<Option<Vec<Box<[Value]>>>>()
                            .unwrap_or_default();
                        Ok(Outcome::Done(project(&vals, columns)))
                    })?
                }
            }
        }
        SqlStmt::Update {
            table,
            sets,
            filter,
            ..
        } => {
            if db.flavour == Flavour::Postgres && txn.isolation == Isolation::Serializable {
                note_reads(m, st, pid, *table, filter.as_ref())?;
            }
            let clause = LockClause {
                mode: update_mode(m, *table, sets),
                wait: WaitPolicy::Wait,
            };
            let target = (*table, filter.as_ref(), clause, Kind::Update);
            with_locked(m, st, pid, target, obs, |st, rows, _| {
                super::write::update(m, st, pid, *table, &rows, sets)
            })?
        }
        SqlStmt::Delete { table, filter, .. } => {
            let clause = LockClause {
                mode: LockMode::Update,
                wait: WaitPolicy::Wait,
            };
            let target = (*table, filter.as_ref(), clause, Kind::Delete);
            with_locked(m, st, pid, target, obs, |st, rows, _| {
                Ok(super::write::delete(st, pid, *table, &rows))
            })?
        }
        SqlStmt::Insert {
            table,
            columns,
            values,
            ..
        } => super::write::insert(m, st, pid, *table, columns, values, obs)?,
        SqlStmt::Begin { .. } | SqlStmt::Commit | SqlStmt::Rollback => unreachable!("handled"),
    };
    Ok(r)
}

/// Records what a PostgreSQL SERIALIZABLE statement reads: the rows a primary-key lookup
/// reaches, or the whole table for any other scan (a sequential scan takes a relation-level
/// predicate lock, PG-26).
fn note_reads(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
) -> Result<(), RunError> {
    let items: Vec<(u16, Value)> = match scan::access_path(m, st, pid, table, filter)? {
        scan::Path::Keys(keys) => keys.into_iter().map(|k| (table, k)).collect(),
        _ => vec![(table, Value::Nil)],
    };
    let reads = &mut st.procs[pid.index()].reads;
    for item in items {
        if !reads.contains(&item) {
            reads.push(item);
        }
    }
    Ok(())
}

/// PostgreSQL SERIALIZABLE, a conservative form of SSI's rule (PG-25): a transaction that
/// wrote something cannot commit if something it read was changed by a transaction that
/// committed after its snapshot. In a dangerous structure T_in → T_pivot → T_out the pivot
/// both writes (T_in read what it wrote) and read what T_out, the first to commit, wrote — so
/// this rule aborts every pivot, and sometimes a transaction PostgreSQL would let commit.
fn serialization_failure(st: &State, pid: Pid) -> bool {
    let p = &st.procs[pid.index()];
    let Some(snap) = p.txn.and_then(|t| t.snapshot) else {
        return false;
    };
    let wrote = st
        .db
        .tables
        .iter()
        .flatten()
        .any(|r| r.pending.as_ref().is_some_and(|(o, _)| *o == pid));
    let changed = |t: u16, key: Value| {
        let rows = &st.db.tables[t as usize];
        match key {
            Value::Nil => rows.iter().any(|r| r.latest_seq() > snap),
            k => st.db.find(t, k).is_ok_and(|r| rows[r].latest_seq() > snap),
        }
    };
    wrote && p.reads.iter().any(|&(t, k)| changed(t, k))
}

/// Locks a statement's target rows, then runs `act` on them; a wait or an error passes
/// through.
fn with_locked<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    (table, filter, clause, kind): (u16, Option<&Expr>, LockClause, Kind),
    obs: &mut O,
    act: impl FnOnce(&mut State, Vec<usize>, &mut O) -> Result<Outcome, RunError>,
) -> Result<Outcome, RunError> {
    Ok(
        match scan::lock_rows(m, st, pid, table, filter, clause, kind, obs)? {
            Scan::Rows(rows) => act(st, rows, obs)?,
            Scan::Wait(h) => Outcome::Wait(h),
            Scan::Error(r) => Outcome::Error(r),
        },
    )
}

/// InnoDB SERIALIZABLE turns a plain SELECT inside a transaction into `FOR SHARE` (MY-4).
fn serializable_share(db: &Schema, txn: Txn) -> Option<LockClause> {
    (db.flavour.innodb() && txn.isolation == Isolation::Serializable && txn.explicit).then_some(
        LockClause {
            mode: LockMode::Share,
            wait: WaitPolicy::Wait,
        },
    )
}

/// PostgreSQL: an UPDATE takes FOR UPDATE if it changes a key column, else FOR NO KEY UPDATE
/// (PG-6). InnoDB has only X locks.
fn update_mode(m: &Model, table: u16, sets: &[(u16, Expr)]) -> LockMode {
    let t = &schema(m).tables[table as usize];
    let key_col =
        |c: usize| c == t.pk || t.indexes.iter().any(|i| i.unique && i.columns.contains(&c));
    if sets.iter().any(|(c, _)| key_col(*c as usize)) {
        LockMode::Update
    } else {
        LockMode::NoKeyUpdate
    }
}

/// COMMIT or ROLLBACK. Outside a transaction both only warn; COMMIT of an aborted
/// PostgreSQL transaction rolls it back (PG-27).
fn finish<O: Observer>(m: &Model, st: &mut State, pid: Pid, commit: bool, obs: &mut O) -> Outcome {
    let Some(txn) = st.procs[pid.index()].txn else {
        return Outcome::Done(Reply::None);
    };
    let commit = commit && !txn.aborted;
    if commit
        && txn.isolation == Isolation::Serializable
        && schema(m).flavour == Flavour::Postgres
        && serialization_failure(st, pid)
    {
        return Outcome::Error(Refusal::of(error_code("40001"), About::Dependencies));
    }
    end_txn(m, st, pid, commit, obs);
    Outcome::Done(if commit {
        Reply::None
    } else {
        Reply::Tag("ROLLBACK")
    })
}

/// The transaction's snapshot, taken now if it has none.
pub(super) fn snapshot(st: &mut State, pid: Pid) -> u32 {
    let seq = st.db.seq;
    let txn = st.procs[pid.index()]
        .txn
        .as_mut()
        .expect("in a transaction");
    *txn.snapshot.get_or_insert(seq)
}

/// What a plain (non-locking) read sees: a snapshot at RR/SERIALIZABLE, the newest
/// committed data at READ COMMITTED (each statement's own snapshot, PG-2, MY-2), the newest
/// version, committed or not, at InnoDB's READ UNCOMMITTED (MY-3; PostgreSQL's is READ
/// COMMITTED, PG-1).
pub(super) fn read_view(m: &Model, st: &mut State, pid: Pid) -> View {
    let txn = st.procs[pid.index()].txn.expect("in a transaction");
    match txn.isolation {
        Isolation::ReadUncommitted if schema(m).flavour.innodb() => View::Dirty,
        Isolation::ReadUncommitted | Isolation::ReadCommitted => View::Latest,
        _ if !txn.explicit && schema(m).flavour.innodb() => View::Latest,
        _ => View::Snapshot(snapshot(st, pid)),
    }
}

#[allow(clippy::too_many_arguments)] // one SELECT's clauses
fn plain_select(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
    order: &[(u16, bool)],
    limit: Option<u32>,
    columns: &[u16],
) -> Result<Reply, RunError> {
    let view = read_view(m, st, pid);
    let sc = scope(m, st, pid);
    let mut rows: Vec<Box<[Value]>> = Vec::new();
    for r in 0..st.db.tables[table as usize].len() {
        if let Some(v) = st.db.read(table, r, pid, view) {
            if matches(filter, &sc, v)? {
                rows.push(v.into());
            }
        }
    }
    sort(&mut rows, order);
    if let Some(n) = limit {
        rows.truncate(n as usize);
    }
    Ok(project(&rows, columns))
}

/// Sorts rows by `ORDER BY` columns (stable, so ties keep primary-key order).
pub(super) fn sort<R: std::ops::Deref<Target = [Value]>>(rows: &mut [R], order: &[(u16, bool)]) {
    rows.sort_by(|a, b| {
        for &(c, desc) in order {
            let o = a[c as usize].cmp(&b[c as usize]);
            let o = if desc { o.reverse() } else { o };
            if o.is_ne() {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    });
}

pub(super) fn matches(filter: Option<&Expr>, sc: &Scope, row: &[Value]) -> Result<bool, RunError> {
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
        Reply::None | Reply::Tag(_) | Reply::Error(_) => {}
    }
}

/// Whether an error ends the whole transaction or only the statement. PostgreSQL aborts the
/// transaction on any error (PG-27); InnoDB rolls back the transaction on a deadlock (1213)
/// and on MariaDB's snapshot-isolation conflict (1020), only the statement otherwise (MY-19).
fn aborts_transaction(flavour: Flavour, code: Sym) -> bool {
    !flavour.innodb() || code == error_code("1213") || code == error_code("1020")
}

/// A statement failed with `code`: undo what the error undoes, then run the handler, or end
/// the process as failed when nothing catches it.
fn fail<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    stmt: &SqlStmt,
    refusal: Refusal,
    on_error: Option<&OnError>,
    obs: &mut O,
) -> Flow {
    let flavour = schema(m).flavour;
    let code = refusal.code;
    if O::EVENTS {
        let table = stmt.table();
        obs.event(Event::Sql {
            stmt: stmt.clone(),
            reply: Reply::Error(Refusal { table, ..refusal }),
            locals: if O::LOCALS {
                st.procs[pid.index()].locals.iter().copied().collect()
            } else {
                Box::default()
            },
        });
    }
    let p = &st.procs[pid.index()];
    if let Status::Waiting(Wait::Row { table, key, .. }) = p.status {
        if let Ok(r) = st.db.find(table, key) {
            let grants = st.db.dequeue(flavour, table, r, pid);
            announce(st, &grants, obs);
        }
    }
    let p = &mut st.procs[pid.index()];
    p.status = Status::Ready;
    (p.candidates, p.check_in, p.timeout_in) = (None, None, None);
    if let Some(txn) = p.txn {
        if aborts_transaction(flavour, code) || !txn.explicit {
            // A failed COMMIT ends the transaction; any other error leaves a PostgreSQL block
            // open in the aborted state (PG-27).
            let stays =
                txn.explicit && flavour == Flavour::Postgres && !matches!(stmt, SqlStmt::Commit);
            end_txn(m, st, pid, false, obs);
            if stays {
                st.procs[pid.index()].txn = Some(Txn {
                    aborted: true,
                    ..txn
                });
            }
        }
    }
    match on_error.filter(|h| h.codes.is_empty() || h.codes.contains(&code)) {
        Some(h) => {
            st.procs[pid.index()].locals[h.local as usize] = Value::Str(code);
            match h.target {
                Some(t) => Flow::Jump(t),
                None => Flow::Next,
            }
        }
        None => {
            end_txn(m, st, pid, false, obs);
            st.procs[pid.index()].status = Status::Errored(code);
            if O::EVENTS {
                obs.event(Event::Uncaught { code });
            }
            Flow::Stop
        }
    }
}

/// Ends `pid`'s transaction (commit or abort) and hands its row locks to the next waiters.
pub(super) fn end_txn<O: Observer>(m: &Model, st: &mut State, pid: Pid, commit: bool, obs: &mut O) {
    st.procs[pid.index()].reads.clear();
    let Some(txn) = st.procs[pid.index()].txn.take() else {
        return;
    };
    let flavour = m.db.as_ref().map_or(Flavour::Postgres, |d| d.flavour);
    let written = if O::EVENTS && commit {
        written_rows(st, pid)
    } else {
        Vec::new()
    };
    // A transaction that holds nothing (a plain read) leaves the database as it is, and
    // shared with the state it came from.
    let grants = if st.db.involves(pid) {
        st.db.end(flavour, pid, commit)
    } else {
        Vec::new()
    };
    if !O::EVENTS {
        return;
    }
    // Every row the transaction wrote, even to the value it already had: a learner must see
    // the overwrite of a lost update.
    for (table, key) in written {
        let values = st
            .db
            .find(table, key)
            .ok()
            .and_then(|r| st.db.row(table, r).latest().map(Box::from));
        obs.event(Event::RowCommitted { table, key, values });
    }
    if !commit && txn.explicit && !txn.aborted {
        obs.event(Event::Aborted { pid });
    }
    announce(st, &grants, obs);
}

/// Reports locks that changed hands.
pub(super) fn announce<O: Observer>(st: &State, grants: &[Grant], obs: &mut O) {
    if !O::EVENTS {
        return;
    }
    for &(table, key, next) in grants {
        let wait = match st.procs[next.index()].status {
            Status::Waiting(w) => w,
            _ => Wait::Row {
                table,
                key,
                mode: LockMode::Update,
            },
        };
        obs.event(Event::Granted { pid: next, wait });
    }
}

fn written_rows(st: &State, pid: Pid) -> Vec<(u16, Value)> {
    let mut out = Vec::new();
    for (t, rows) in st.db.tables.iter().enumerate() {
        for row in rows {
            if row.pending.as_ref().is_some_and(|(o, _)| *o == pid) {
                out.push((t as u16, row.key));
            }
        }
    }
    out
}

/// The model's database (the parser admits SQL only with a `db` line).
pub(super) fn schema(m: &Model) -> &Schema {
    m.db.as_ref().expect("SQL needs a db declaration")
}
