//! The changes of UPDATE, DELETE and INSERT, once their rows are locked.

use super::eval::{eval, Scope};
use super::observe::{About, Observer, Refusal, Reply};
use super::scan::{self, Scan};
use super::sql::{schema, Outcome};
use super::step::scope;
use crate::ir::{
    error_code, ColumnType, Expr, Flavour, LockClause, LockMode, Model, Table, WaitPolicy,
};
use crate::world::db::View;
use crate::world::process::{RunError, Status, Wait};
use crate::ir::value::{Pid, Value};
use crate::world::State;

/// Applies `sets` to each locked row. PostgreSQL counts matched rows (PG-32), InnoDB rows
/// actually changed (MY-24).
pub(super) fn update(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    rows: &[usize],
    sets: &[(u16, Expr)],
) -> Result<Outcome, RunError> {
    let db = schema(m);
    let t = &db.tables[table as usize];
    if sets.iter().any(|(c, _)| *c as usize == t.pk) {
        return Err(RunError::KeyUpdate);
    }
    let mut changes = Vec::with_capacity(rows.len());
    for (n, &r) in (1..).zip(rows) {
        let old: Box<[Value]> = st
            .db
            .read(table, r, pid, View::Latest)
            .expect("a locked target row is alive")
            .into();
        let sc = Scope {
            row: Some(&old),
            ..scope(m, st, pid)
        };
        let mut new = old.clone();
        for (c, e) in sets {
            new[*c as usize] = match eval(e, &sc) {
                Ok(v) => v,
                Err(RunError::Overflow) => {
                    let about = About::Overflow;
                    return Ok(Outcome::Error(Refusal::of(overflow(db.flavour), about)));
                }
                Err(e) => return Err(e),
            };
        }
        if let Err(r) = fit(db.flavour, db.settings.non_strict, t, &mut new, n) {
            return Ok(Outcome::Error(r));
        }
        changes.push((r, old != new, new));
    }
    let mut count = 0;
    for (r, changed, new) in changes {
        st.db.write(table, r, pid, Some(new));
        if changed || !db.flavour.innodb() {
            count += 1;
        }
        if changed && db.flavour.innodb() {
            bump(st, pid);
        }
    }
    Ok(Outcome::Done(Reply::Count(count)))
}

/// Marks each locked row deleted.
pub(super) fn delete(st: &mut State, pid: Pid, table: u16, rows: &[usize]) -> Outcome {
    for &r in rows {
        st.db.write(table, r, pid, None);
        bump(st, pid);
    }
    Outcome::Done(Reply::Count(rows.len() as i64))
}

/// Inserts one row. A row with the same key that another transaction has changed but not
/// committed is waited for; a live one is a duplicate (23505 / 1062).
pub(super) fn insert<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    columns: &[u16],
    values: &[Expr],
    obs: &mut O,
) -> Result<Outcome, RunError> {
    let db = schema(m);
    let t = &db.tables[table as usize];
    let sc = scope(m, st, pid);
    let mut row: Box<[Value]> = vec![Value::Nil; t.columns.len()].into_boxed_slice();
    for (c, e) in columns.iter().zip(values) {
        row[*c as usize] = eval(e, &sc)?;
    }
    if let Err(r) = fit(db.flavour, db.settings.non_strict, t, &mut row, 1) {
        return Ok(Outcome::Error(r));
    }
    let key = row[t.pk];
    if let Some(h) = st.db.gap_blocker(table, pid, key, &row) {
        return Ok(gap_wait(m, st, pid, table, key, row, h, obs));
    }
    if let Ok(r) = st.db.find(table, key) {
        if let Some(h) = duplicate_blocker(db.flavour, st.db.row(table, r), pid) {
            let clause = LockClause {
                mode: LockMode::Update,
                wait: WaitPolicy::Wait,
            };
            let mut w = scan::wait(m, st, pid, table, r, clause, h);
            if db.flavour.innodb() {
                w = super::deadlock::innodb_on_wait(m, st, pid, w, obs);
            }
            return Ok(match w {
                Scan::Error(r) => Outcome::Error(r),
                _ => Outcome::Wait(h),
            });
        }
        if st.db.read(table, r, pid, View::Latest).is_some() {
            let code = error_code(if db.flavour.innodb() { "1062" } else { "23505" });
            return Ok(Outcome::Error(Refusal::of(code, About::Duplicate(key))));
        }
    }
    let r = st.db.insert_slot(table, key);
    st.db.lock(table, r, pid, LockMode::Update);
    st.db.write(table, r, pid, Some(row));
    bump(st, pid);
    Ok(Outcome::Done(Reply::Count(1)))
}

/// Whom an INSERT of a key that row `row` has waits for. InnoDB's duplicate check takes a
/// lock on the record, so any conflicting lock holds it up (MY-16); PostgreSQL's unique
/// check waits only for a transaction that changed the row and has not ended, not for one
/// that merely locked it (PG-35, observed).
fn duplicate_blocker(f: Flavour, row: &crate::world::db::Row, pid: Pid) -> Option<Pid> {
    if f.innodb() {
        return row.blocker(f, pid, LockMode::Update);
    }
    row.pending.as_ref().map(|(o, _)| *o).filter(|&o| o != pid)
}

/// An INSERT into a gap another transaction holds waits for it (insert intention, MY-16),
/// with InnoDB's immediate deadlock check.
#[allow(clippy::too_many_arguments)] // one INSERT's parts
fn gap_wait<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    key: Value,
    row: Box<[Value]>,
    holder: Pid,
    obs: &mut O,
) -> Outcome {
    let db = schema(m);
    let timeout = db
        .settings
        .innodb_lock_wait_timeout
        .unwrap_or(50_000u64.div_ceil(m.tick_ms.max(1)) as u32);
    let p = &mut st.procs[pid.index()];
    p.status = Status::Waiting(Wait::Gap { table, key });
    p.candidates = Some(row);
    p.timeout_in = Some(timeout);
    match super::deadlock::innodb_on_wait(m, st, pid, Scan::Wait(holder), obs) {
        Scan::Error(r) => Outcome::Error(r),
        _ => Outcome::Wait(holder),
    }
}

fn bump(st: &mut State, pid: Pid) {
    if let Some(t) = st.procs[pid.index()].txn.as_mut() {
        t.weight = t.weight.saturating_add(1);
    }
}

/// A DATETIME without fractional seconds: MySQL rounds to the nearest second, MariaDB truncates
/// (MY-25, domain §12).
fn whole_seconds(f: Flavour, ms: i64) -> i64 {
    if f == Flavour::Mariadb {
        ms.div_euclid(1000) * 1000
    } else {
        (ms + 500).div_euclid(1000) * 1000
    }
}

/// The error an arithmetic overflow raises: 22003 (PostgreSQL, PG-34), 1690 (InnoDB BIGINT).
fn overflow(f: Flavour) -> crate::ir::value::Sym {
    error_code(if f.innodb() { "1690" } else { "22003" })
}

/// Checks integer values against their column types: PostgreSQL raises 22003 (PG-34); InnoDB
/// raises 1264 in strict mode and clips to the limit otherwise (MY-26). `n` is the row's
/// place among the statement's rows, for the message.
fn fit(f: Flavour, non_strict: bool, t: &Table, row: &mut [Value], n: u32) -> Result<(), Refusal> {
    for (c, (v, col)) in (0..).zip(row.iter_mut().zip(&t.columns)) {
        if let (Value::Int(ms), ColumnType::Timestamp, true) = (*v, col.ty, f.innodb()) {
            *v = Value::Int(whole_seconds(f, ms));
            continue;
        }
        let (Value::Int(i), Some((lo, hi))) = (*v, col.ty.range()) else {
            continue;
        };
        if (lo..=hi).contains(&i) {
            continue;
        }
        let out_of_range = |code| Refusal::of(error_code(code), About::Range { column: c, row: n });
        if !f.innodb() {
            return Err(out_of_range("22003"));
        }
        if !non_strict {
            return Err(out_of_range("1264"));
        }
        *v = Value::Int(i.clamp(lo, hi));
    }
    Ok(())
}
