//! Which rows a locking statement (UPDATE, DELETE, SELECT … FOR …) locks, waits for or
//! skips: PostgreSQL locks the rows it returns (PG-10, PG-16); InnoDB locks what it scans
//! (MY-13, MY-14).

use super::deadlock;
use super::eval::eval;
use super::observe::{About, Event, Observer, Refusal};
use super::sql::{matches, schema, snapshot, sort};
use super::step::scope;
use crate::ir::{error_code, BinOp, Expr, Flavour, Isolation, LockClause, Model, WaitPolicy};
use crate::world::db::{GapRange, View};
use crate::world::process::{RunError, Status, Wait};
use crate::ir::value::{Pid, Value};
use crate::world::State;

/// The statement a scan serves.
#[derive(Clone, Copy)]
pub(super) enum Kind<'a> {
    Select {
        order: &'a [(u16, bool)],
        limit: Option<u32>,
    },
    Update,
    Delete,
}

pub(super) enum Scan {
    /// Every target is locked: the rows (positions) to return or change, in order.
    Rows(Vec<usize>),
    /// The process now waits for a row that `holder` holds.
    Wait(Pid),
    Error(Refusal),
}

/// Locks the statement's target rows for `pid`.
#[allow(clippy::too_many_arguments)] // one statement's parts
pub(super) fn lock_rows<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
    clause: LockClause,
    kind: Kind,
    obs: &mut O,
) -> Result<Scan, RunError> {
    let held = |st: &State| -> Vec<Value> {
        st.db.tables[table as usize]
            .iter()
            .filter(|r| r.held_by(pid).is_some())
            .map(|r| r.key)
            .collect()
    };
    let before = if O::EVENTS { held(st) } else { Vec::new() };
    let scan = if schema(m).flavour.innodb() {
        innodb(m, st, pid, table, filter, clause, kind, obs)?
    } else {
        postgres(m, st, pid, table, filter, clause, kind)?
    };
    // An autocommit statement releases its locks in the same step: not worth a line.
    if O::EVENTS && st.procs[pid.index()].txn.is_some_and(|t| t.explicit) {
        for key in held(st).into_iter().filter(|k| !before.contains(k)) {
            obs.event(Event::RowLocked { table, key });
        }
    }
    Ok(scan)
}

/// The row this process was waiting for, if it is resuming a wait.
fn waited(st: &State, pid: Pid) -> Option<Value> {
    match st.procs[pid.index()].status {
        Status::Waiting(Wait::Row { key, .. }) => Some(key),
        _ => None,
    }
}

/// PostgreSQL: the candidates are the rows matching in the statement's snapshot (kept across
/// a wait, PG-17); each is locked in turn; after a wait it is re-checked against its newest
/// version (RC, PG-16) or fails with 40001 if it changed since the snapshot (RR, PG-21).
fn postgres(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
    clause: LockClause,
    kind: Kind,
) -> Result<Scan, RunError> {
    let txn = st.procs[pid.index()].txn.expect("in a transaction");
    let snap = (txn.isolation >= Isolation::RepeatableRead).then(|| snapshot(st, pid));
    let view = snap.map_or(View::Latest, View::Snapshot);
    let waited = waited(st, pid);
    let keys: Box<[Value]> = match st.procs[pid.index()].candidates.take() {
        Some(k) => k,
        None => candidates(m, st, pid, table, filter, view, kind)?,
    };
    let limit = match kind {
        Kind::Select { limit, .. } => limit.map(|n| n as usize),
        _ => None,
    };
    let mut out = Vec::new();
    for &key in keys.iter() {
        let Ok(r) = st.db.find(table, key) else {
            continue;
        };
        if let Some(h) = st
            .db
            .row(table, r)
            .blocker(Flavour::Postgres, pid, clause.mode)
        {
            match clause.wait {
                WaitPolicy::SkipLocked => continue,
                WaitPolicy::NoWait => return Ok(Scan::Error(error_code("55P03").into())),
                WaitPolicy::Wait => {
                    st.procs[pid.index()].candidates = Some(keys.clone());
                    return Ok(wait(m, st, pid, table, r, clause, h));
                }
            }
        }
        let row = st.db.row(table, r);
        let own = row.pending.as_ref().is_some_and(|(o, _)| *o == pid);
        if snap.is_some_and(|s| !own && row.latest_seq() > s) {
            let gone = row.latest().is_none();
            let about = if gone { About::Deleted } else { About::Updated };
            return Ok(Scan::Error(Refusal::of(error_code("40001"), about)));
        }
        let hit = match st.db.read(table, r, pid, View::Latest) {
            Some(v) => matches(filter, &scope(m, st, pid), v)?,
            None => false,
        };
        if hit {
            st.db.lock(table, r, pid, clause.mode);
            out.push(r);
            if limit.is_some_and(|n| out.len() >= n) {
                break;
            }
        } else if waited == Some(key) {
            // The lock granted for the wait is passed on: the row is not a target after all.
            st.db.unlock(Flavour::Postgres, table, r, pid);
        }
    }
    Ok(Scan::Rows(out))
}

/// PostgreSQL's candidate rows: matching in `view`, in ORDER BY order (sorting happens before
/// locking, PG-11).
fn candidates(
    m: &Model,
    st: &State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
    view: View,
    kind: Kind,
) -> Result<Box<[Value]>, RunError> {
    let sc = scope(m, st, pid);
    let mut rows: Vec<&[Value]> = Vec::new();
    for r in 0..st.db.tables[table as usize].len() {
        if let Some(v) = st.db.read(table, r, pid, view) {
            if matches(filter, &sc, v)? {
                rows.push(v);
            }
        }
    }
    if let Kind::Select { order, .. } = kind {
        sort(&mut rows, order);
    }
    let pk = schema(m).tables[table as usize].pk;
    Ok(rows.iter().map(|v| v[pk]).collect())
}

/// InnoDB: scan the rows the access path reaches, in key order, reading the newest committed
/// version; lock every scanned row at RR and SERIALIZABLE (MY-13), only matching rows at RC
/// (non-matching ones are released after the WHERE is evaluated, and UPDATE/DELETE use a
/// semi-consistent read so they do not wait for a non-matching row, MY-14).
#[allow(clippy::too_many_arguments)] // one statement's parts
fn innodb<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
    clause: LockClause,
    kind: Kind,
    obs: &mut O,
) -> Result<Scan, RunError> {
    let db = schema(m);
    let txn = st.procs[pid.index()].txn.expect("in a transaction");
    let rc = txn.isolation <= Isolation::ReadCommitted; // RU locks as RC does (MY-3)
    let writes = matches!(kind, Kind::Update | Kind::Delete);
    let path = access_path(m, st, pid, table, filter)?;
    let limit = match kind {
        Kind::Select { limit, .. } => limit.map(|n| n as usize),
        _ => None,
    };
    let mut out = Vec::new();
    let mut r = 0;
    while r < st.db.tables[table as usize].len() {
        let key = st.db.row(table, r).key;
        let newest = st
            .db
            .read(table, r, pid, View::Latest)
            .map(Box::<[Value]>::from);
        if !path.reaches(key, newest.as_deref()) {
            r += 1;
            continue;
        }
        let hit = match &newest {
            Some(v) => matches(filter, &scope(m, st, pid), v)?,
            None => false,
        };
        let must_lock = !rc || !writes || hit;
        if must_lock {
            if let Some(h) = st.db.row(table, r).blocker(db.flavour, pid, clause.mode) {
                match clause.wait {
                    WaitPolicy::SkipLocked => {
                        r += 1;
                        continue;
                    }
                    WaitPolicy::NoWait => {
                        let code = if db.flavour == Flavour::Mariadb {
                            "1205"
                        } else {
                            "3572"
                        };
                        return Ok(Scan::Error(error_code(code).into()));
                    }
                    WaitPolicy::Wait => {
                        let w = wait(m, st, pid, table, r, clause, h);
                        return Ok(deadlock::innodb_on_wait(m, st, pid, w, obs));
                    }
                }
            }
            if newest.is_some() || st.db.row(table, r).pending.is_some() {
                if st.db.row(table, r).held_by(pid).is_none() {
                    bump_weight(st, pid);
                }
                st.db.lock(table, r, pid, clause.mode);
            }
        }
        if hit {
            if writes && snapshot_conflict(m, st, pid, table, r) {
                return Ok(Scan::Error(error_code("1020").into()));
            }
            out.push(r);
            if limit.is_some_and(|n| out.len() >= n) {
                break;
            }
        } else if rc && must_lock {
            st.db.unlock(db.flavour, table, r, pid);
        }
        r += 1;
    }
    if !rc {
        lock_gaps(st, pid, table, &path);
    }
    if let Kind::Select { order, .. } = kind {
        let pk = db.tables[table as usize].pk;
        let mut rows: Vec<Box<[Value]>> = out
            .iter()
            .filter_map(|&r| st.db.read(table, r, pid, View::Latest).map(Box::from))
            .collect();
        sort(&mut rows, order);
        out = rows
            .iter()
            .filter_map(|v| st.db.find(table, v[pk]).ok())
            .collect();
    }
    Ok(Scan::Rows(out))
}

/// InnoDB RR/SERIALIZABLE: the gaps a finished scan leaves locked (MY-11, MY-12): every gap
/// after a full scan, the gap of each unique key searched and not found, the gaps around the
/// records of an index value. They block inserts by others, never reads or other gap locks.
fn lock_gaps(st: &mut State, pid: Pid, table: u16, path: &Path) {
    let ranges: Vec<GapRange> = match path {
        Path::Full => vec![GapRange::All],
        Path::Keys(keys) => keys
            .iter()
            .filter(|&&k| {
                st.db
                    .find(table, k)
                    .map_or(true, |r| st.db.row(table, r).latest().is_none())
            })
            .map(|&k| {
                let (lo, hi) = st.db.neighbours(table, k);
                GapRange::Between(lo, hi)
            })
            .collect(),
        Path::Index(c, v) => vec![GapRange::Value {
            column: *c as u16,
            value: *v,
        }],
    };
    for range in ranges {
        st.db.lock_gap(table, pid, range);
    }
}

fn bump_weight(st: &mut State, pid: Pid) {
    if let Some(t) = st.procs[pid.index()].txn.as_mut() {
        t.weight = t.weight.saturating_add(1);
    }
}

/// MariaDB with `innodb_snapshot_isolation`: writing at RR a row changed since the snapshot
/// fails with 1020 (domain §12).
fn snapshot_conflict(m: &Model, st: &State, pid: Pid, table: u16, r: usize) -> bool {
    let db = schema(m);
    let txn = st.procs[pid.index()].txn.expect("in a transaction");
    db.flavour == Flavour::Mariadb
        && db.settings.innodb_snapshot_isolation
        && txn.isolation >= Isolation::RepeatableRead
        && txn
            .snapshot
            .is_some_and(|s| st.db.row(table, r).latest_seq() > s)
}

/// Starts waiting for row `r`: joins its queue, sets the timers the engine runs while waiting.
pub(super) fn wait(
    m: &Model,
    st: &mut State,
    pid: Pid,
    table: u16,
    r: usize,
    clause: LockClause,
    holder: Pid,
) -> Scan {
    let key = st.db.row(table, r).key;
    st.db.enqueue(table, r, pid, clause.mode);
    let db = schema(m);
    let ticks = |ms: u64| ms.div_ceil(m.tick_ms.max(1)) as u32;
    let p = &mut st.procs[pid.index()];
    p.status = Status::Waiting(Wait::Row {
        table,
        key,
        mode: clause.mode,
    });
    if db.flavour.innodb() {
        p.timeout_in = Some(
            db.settings
                .innodb_lock_wait_timeout
                .unwrap_or(ticks(50_000)),
        );
    } else {
        p.check_in = Some(db.settings.deadlock_timeout.unwrap_or(ticks(1_000)));
        p.timeout_in = db.settings.lock_timeout;
    }
    Scan::Wait(holder)
}

/// Which rows a statement's index access reaches.
pub(super) enum Path {
    /// A primary-key lookup: exactly these keys (MY-12: no gap for a unique match).
    Keys(Vec<Value>),
    /// A secondary index equality: rows whose column `c` equals the value.
    Index(usize, Value),
    /// No usable index: every row (MY-13).
    Full,
}

impl Path {
    /// Whether the scan reaches the row with `key` whose newest version is `newest`.
    pub(super) fn reaches(&self, key: Value, newest: Option<&[Value]>) -> bool {
        match self {
            Path::Keys(k) => k.contains(&key),
            Path::Index(c, v) => newest.is_none_or(|n| n[*c] == *v),
            Path::Full => true,
        }
    }
}

/// The access path of a WHERE clause: a primary-key equality (or `IN` list) anywhere in its
/// top-level conjunction, else an indexed column's equality, else a full scan.
pub(super) fn access_path(
    m: &Model,
    st: &State,
    pid: Pid,
    table: u16,
    filter: Option<&Expr>,
) -> Result<Path, RunError> {
    let t = &schema(m).tables[table as usize];
    let mut conj = Vec::new();
    if let Some(f) = filter {
        conjuncts(f, &mut conj);
    }
    let sc = scope(m, st, pid);
    for e in &conj {
        if let Some(keys) = key_list(e, t.pk as u16) {
            let vals = keys
                .iter()
                .map(|k| eval(k, &sc))
                .collect::<Result<_, _>>()?;
            return Ok(Path::Keys(vals));
        }
    }
    for e in &conj {
        if let Expr::Binary(BinOp::Eq, a, b) = e {
            if let (Expr::Column(c), v) | (v, Expr::Column(c)) = (a.as_ref(), b.as_ref()) {
                let c = *c as usize;
                if !has_column(v) && t.indexes.iter().any(|i| i.columns.first() == Some(&c)) {
                    return Ok(Path::Index(c, eval(v, &sc)?));
                }
            }
        }
    }
    Ok(Path::Full)
}

fn conjuncts<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::Binary(BinOp::And, a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        _ => out.push(e),
    }
}

/// `pk = v` or `pk = a OR pk = b …` (what `IN` lowers to): the values.
fn key_list(e: &Expr, pk: u16) -> Option<Vec<&Expr>> {
    match e {
        Expr::Binary(BinOp::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
            (Expr::Column(c), v) | (v, Expr::Column(c)) if *c == pk && !has_column(v) => {
                Some(vec![v])
            }
            _ => None,
        },
        Expr::Binary(BinOp::Or, a, b) => {
            let mut l = key_list(a, pk)?;
            l.extend(key_list(b, pk)?);
            Some(l)
        }
        _ => None,
    }
}

fn has_column(e: &Expr) -> bool {
    match e {
        Expr::Column(_) => true,
        Expr::Unary(_, a) => has_column(a),
        Expr::Binary(_, a, b) => has_column(a) || has_column(b),
        _ => false,
    }
}
