//! The database: rows with committed versions, one uncommitted change, and row locks.
//!
//! Storage and locking only; which rows a statement reads, locks or waits for is decided by the
//! statement code (`exec::sql`), per flavour and isolation level (docs/semantics.md).

use crate::ir::{Flavour, LockMode};
use crate::ir::value::{Pid, Value};

/// Invariant: rows are sorted by key and keys are unique; an uncommitted change exists only
/// while its owner holds a lock on the row; commit numbers are dense (normalised after every
/// step), so states that differ only in how many commits happened long ago are one state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Db {
    /// Rows per table, in primary-key order.
    pub tables: Vec<Vec<Row>>,
    /// The number of the newest commit; a snapshot taken now sees versions numbered ≤ this.
    pub seq: u32,
    /// InnoDB gap locks, sorted: they block only inserts by other transactions (MY-10).
    pub gaps: Vec<Gap>,
}

/// An InnoDB gap lock: who holds it and which inserts it blocks.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gap {
    pub table: u16,
    pub owner: Pid,
    pub range: GapRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GapRange {
    /// Every gap of the table, the supremum included (a full scan at RR, MY-13).
    All,
    /// The gap between two neighbouring keys, exclusive (a unique search that found nothing).
    Between(Option<Value>, Option<Value>),
    /// The gaps around the records of a secondary index value: inserts with that value.
    Value { column: u16, value: Value },
}

impl GapRange {
    /// Whether inserting a row with `key` and `values` falls in this gap.
    #[must_use]
    pub fn covers(&self, key: Value, values: &[Value]) -> bool {
        match self {
            GapRange::All => true,
            GapRange::Between(lo, hi) => lo.is_none_or(|l| l < key) && hi.is_none_or(|h| key < h),
            GapRange::Value { column, value } => values[*column as usize] == *value,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    /// The primary-key value (primary keys are never updated).
    pub key: Value,
    /// Committed versions, oldest first: (commit number, values); `None` = deleted.
    pub versions: Vec<(u32, Option<Box<[Value]>>)>,
    /// The uncommitted change of the transaction holding the row: new values, or `None` for a
    /// delete.
    pub pending: Option<(Pid, Option<Box<[Value]>>)>,
    pub locks: RowLocks,
}

/// Row locks: who holds which mode, who waits in arrival order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RowLocks {
    pub held: Vec<(Pid, LockMode)>,
    pub queue: Vec<(Pid, LockMode)>,
}

/// What a transaction sees of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The newest committed version (and the transaction's own change).
    Latest,
    /// The newest version committed at or before commit number `n`.
    Snapshot(u32),
    /// The newest version, another transaction's uncommitted change included (InnoDB READ
    /// UNCOMMITTED, MY-3).
    Dirty,
}

/// A lock that changed hands when a transaction ended: (table, row key, new holder).
pub type Grant = (u16, Value, Pid);

/// Whether a lock of mode `a` held by one transaction conflicts with mode `b` requested by
/// another: PostgreSQL's four row-lock modes (PG-5), InnoDB's S and X (MY-9).
#[must_use]
pub fn conflicts(flavour: Flavour, a: LockMode, b: LockMode) -> bool {
    use LockMode::{KeyShare, NoKeyUpdate, Share, Update};
    if flavour.innodb() {
        let shared = |m| matches!(m, Share | KeyShare);
        return !(shared(a) && shared(b));
    }
    match (a, b) {
        (Update, _) | (_, Update) => true,
        (NoKeyUpdate, NoKeyUpdate | Share) | (Share, NoKeyUpdate) => true,
        (KeyShare, _) | (_, KeyShare) | (Share, Share) => false,
    }
}

impl Row {
    /// The newest committed version.
    #[must_use]
    pub fn latest(&self) -> Option<&[Value]> {
        self.versions.last().and_then(|(_, v)| v.as_deref())
    }

    /// The commit number of the newest committed version (0 for a row never committed).
    #[must_use]
    pub fn latest_seq(&self) -> u32 {
        self.versions.last().map_or(0, |(n, _)| *n)
    }

    /// The version a snapshot taken at commit `n` sees.
    #[must_use]
    pub fn at(&self, n: u32) -> Option<&[Value]> {
        self.versions
            .iter()
            .rev()
            .find(|(s, _)| *s <= n)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Whom a request of `mode` by `pid` must wait for: the first other holder whose lock
    /// conflicts; in InnoDB also the first conflicting request queued ahead of it, since a
    /// new request (an upgrade included) queues behind earlier waiters (observed in
    /// Hermitage's SERIALIZABLE runs). `None` when `pid` already holds at least `mode`.
    #[must_use]
    pub fn blocker(&self, flavour: Flavour, pid: Pid, mode: LockMode) -> Option<Pid> {
        if self.held_by(pid).is_some_and(|h| h <= mode) {
            return None;
        }
        let held = self
            .locks
            .held
            .iter()
            .find(|&&(h, m)| h != pid && conflicts(flavour, m, mode))
            .map(|&(h, _)| h);
        if held.is_some() || !flavour.innodb() {
            return held;
        }
        self.waiters_ahead(flavour, pid, mode).next()
    }

    /// Other requests queued ahead of `pid`'s (all of them if it is not queued) that conflict
    /// with `mode`.
    pub fn waiters_ahead(
        &self,
        flavour: Flavour,
        pid: Pid,
        mode: LockMode,
    ) -> impl Iterator<Item = Pid> + '_ {
        let q = &self.locks.queue;
        let pos = q.iter().position(|&(p, _)| p == pid).unwrap_or(q.len());
        q[..pos]
            .iter()
            .filter(move |&&(p, m)| p != pid && conflicts(flavour, m, mode))
            .map(|&(p, _)| p)
    }

    /// The mode `pid` holds, if any.
    #[must_use]
    pub fn held_by(&self, pid: Pid) -> Option<LockMode> {
        self.locks
            .held
            .iter()
            .find(|&&(h, _)| h == pid)
            .map(|&(_, m)| m)
    }
}

impl Db {
    /// A database whose initial rows (sorted by key, `pk` = key column) are commit 0.
    #[must_use]
    pub fn new(initial: Vec<(usize, Vec<Vec<Value>>)>) -> Self {
        let tables = initial
            .into_iter()
            .map(|(pk, rows)| {
                rows.into_iter()
                    .map(|v| Row {
                        key: v[pk],
                        versions: vec![(0, Some(v.into_boxed_slice()))],
                        pending: None,
                        locks: RowLocks::default(),
                    })
                    .collect()
            })
            .collect();
        Db {
            tables,
            seq: 0,
            gaps: Vec::new(),
        }
    }

    /// How many rows table `t` holds (deleted ones too, until they are purged).
    #[must_use]
    pub fn rows(&self, t: u16) -> usize {
        self.tables[t as usize].len()
    }

    #[must_use]
    pub fn row(&self, t: u16, r: usize) -> &Row {
        &self.tables[t as usize][r]
    }

    /// The position of the row with `key`, or where it would go.
    ///
    /// # Errors
    /// `Err(position)` when there is no such row.
    pub fn find(&self, t: u16, key: Value) -> Result<usize, usize> {
        self.tables[t as usize].binary_search_by(|r| r.key.cmp(&key))
    }

    /// What `pid` sees of row `r`: its own change, else the version `view` selects.
    #[must_use]
    pub fn read(&self, t: u16, r: usize, pid: Pid, view: View) -> Option<&[Value]> {
        let row = self.row(t, r);
        match &row.pending {
            Some((owner, v)) if *owner == pid || view == View::Dirty => v.as_deref(),
            _ => match view {
                View::Dirty => row.latest(),
                View::Latest => row.latest(),
                View::Snapshot(n) => row.at(n),
            },
        }
    }

    /// Grants `pid` a lock of `mode` on row `r` (keeping the stronger if it holds one).
    pub fn lock(&mut self, t: u16, r: usize, pid: Pid, mode: LockMode) {
        let locks = &mut self.tables[t as usize][r].locks;
        locks.queue.retain(|&(q, _)| q != pid);
        match locks.held.iter_mut().find(|(h, _)| *h == pid) {
            Some((_, m)) => *m = (*m).min(mode),
            None => locks.held.push((pid, mode)),
        }
    }

    /// Queues `pid` for a lock of `mode` on row `r`, behind the earlier waiters.
    pub fn enqueue(&mut self, t: u16, r: usize, pid: Pid, mode: LockMode) {
        let q = &mut self.tables[t as usize][r].locks.queue;
        if !q.iter().any(|&(p, _)| p == pid) {
            q.push((pid, mode));
        }
    }

    /// Drops `pid`'s lock on row `r` (InnoDB RC releases rows that did not match) and grants
    /// what can now be granted.
    pub fn unlock(&mut self, flavour: Flavour, t: u16, r: usize, pid: Pid) -> Vec<Grant> {
        let row = &mut self.tables[t as usize][r];
        if row.pending.as_ref().is_some_and(|(o, _)| *o == pid) {
            return Vec::new(); // a row it changed stays locked until the end
        }
        row.locks.held.retain(|&(h, _)| h != pid);
        self.grant(flavour, t, r)
    }

    /// Records a gap lock (InnoDB RR/SERIALIZABLE scans).
    pub fn lock_gap(&mut self, table: u16, owner: Pid, range: GapRange) {
        let g = Gap {
            table,
            owner,
            range,
        };
        if let Err(i) = self.gaps.binary_search(&g) {
            self.gaps.insert(i, g);
        }
    }

    /// The first transaction other than `pid` holding a gap lock that blocks inserting `key`
    /// with `values` into `table` (the insert-intention lock waits for it, MY-16).
    #[must_use]
    pub fn gap_blocker(&self, table: u16, pid: Pid, key: Value, values: &[Value]) -> Option<Pid> {
        self.gaps
            .iter()
            .find(|g| g.table == table && g.owner != pid && g.range.covers(key, values))
            .map(|g| g.owner)
    }

    /// The keys either side of where `key` is or would be: the bounds of its gap.
    #[must_use]
    pub fn neighbours(&self, table: u16, key: Value) -> (Option<Value>, Option<Value>) {
        let rows = &self.tables[table as usize];
        let (below, above) = match self.find(table, key) {
            Ok(r) => (r, r + 1),
            Err(r) => (r, r),
        };
        let lo = below.checked_sub(1).map(|i| rows[i].key);
        (lo, rows.get(above).map(|r| r.key))
    }

    /// Takes `pid` out of row `r`'s queue (its wait ended without the lock). Requests queued
    /// behind it may now be grantable (InnoDB queues behind waiters): they are granted, and
    /// the grants returned.
    pub fn dequeue(&mut self, flavour: Flavour, t: u16, r: usize, pid: Pid) -> Vec<Grant> {
        self.tables[t as usize][r]
            .locks
            .queue
            .retain(|&(q, _)| q != pid);
        self.grant(flavour, t, r)
    }

    /// Records `pid`'s uncommitted change to row `r` (it must hold the row).
    pub fn write(&mut self, t: u16, r: usize, pid: Pid, values: Option<Box<[Value]>>) {
        self.tables[t as usize][r].pending = Some((pid, values));
    }

    /// Adds an empty row (no committed version) for `key` at its position; returns it.
    pub fn insert_slot(&mut self, t: u16, key: Value) -> usize {
        match self.find(t, key) {
            Ok(r) => r,
            Err(r) => {
                self.tables[t as usize].insert(
                    r,
                    Row {
                        key,
                        versions: Vec::new(),
                        pending: None,
                        locks: RowLocks::default(),
                    },
                );
                r
            }
        }
    }

    /// Whether `pid` has anything in the database: a change, a row lock held or asked
    /// for, a gap lock. ([`Db::end`] changes nothing for a transaction that has not.)
    #[must_use]
    pub fn involves(&self, pid: Pid) -> bool {
        let mine = |&(p, _): &(Pid, LockMode)| p == pid;
        self.gaps.iter().any(|g| g.owner == pid)
            || self.tables.iter().flatten().any(|r| {
                r.pending.as_ref().is_some_and(|(o, _)| *o == pid)
                    || r.locks.held.iter().any(mine)
                    || r.locks.queue.iter().any(mine)
            })
    }

    /// Ends `pid`'s transaction: on commit its changes become one new commit, on abort they
    /// vanish; its locks go, its waits end, and waiting transactions are granted in order.
    pub fn end(&mut self, flavour: Flavour, pid: Pid, commit: bool) -> Vec<Grant> {
        let wrote = self
            .tables
            .iter()
            .flatten()
            .any(|r| r.pending.as_ref().is_some_and(|(o, _)| *o == pid));
        if commit && wrote {
            self.seq += 1;
        }
        let seq = self.seq;
        let mut touched = Vec::new();
        for (t, rows) in self.tables.iter_mut().enumerate() {
            for (r, row) in rows.iter_mut().enumerate() {
                if row.pending.as_ref().is_some_and(|(o, _)| *o == pid) {
                    let (_, v) = row.pending.take().expect("checked");
                    if commit {
                        row.versions.push((seq, v));
                    }
                }
                let before = row.locks.held.len() + row.locks.queue.len();
                row.locks.held.retain(|&(h, _)| h != pid);
                row.locks.queue.retain(|&(q, _)| q != pid);
                if row.locks.held.len() + row.locks.queue.len() != before {
                    touched.push((t as u16, r));
                }
            }
        }
        self.gaps.retain(|g| g.owner != pid);
        let mut grants = Vec::new();
        for (t, r) in touched {
            grants.extend(self.grant(flavour, t, r));
        }
        grants
    }

    /// Grants queued requests in arrival order while each is compatible with every holder;
    /// the first that is not stops the line (no waiter overtakes an earlier one).
    fn grant(&mut self, flavour: Flavour, t: u16, r: usize) -> Vec<Grant> {
        let row = &mut self.tables[t as usize][r];
        let mut out = Vec::new();
        while let Some(&(p, mode)) = row.locks.queue.first() {
            if row.blocker(flavour, p, mode).is_some() {
                break;
            }
            row.locks.queue.remove(0);
            match row.locks.held.iter_mut().find(|(h, _)| *h == p) {
                Some((_, m)) => *m = (*m).min(mode),
                None => row.locks.held.push((p, mode)),
            }
            out.push((t, row.key, p));
        }
        out
    }

    /// Forgets what no snapshot can see and renumbers commits densely.
    ///
    /// `snapshots` are the commit numbers of every live snapshot; they are renumbered too.
    pub fn normalise(&mut self, snapshots: &mut [&mut u32]) {
        if snapshots.is_empty() {
            return self.forget_history();
        }
        for rows in &mut self.tables {
            for row in rows.iter_mut() {
                prune(row, snapshots);
            }
            rows.retain(kept);
        }
        // What matters of a commit number is only where it falls among the live snapshots:
        // with snapshots s1 < … < sk, a version becomes 2·#{sj < v} and sj becomes 2j − 1,
        // which keeps every "v ≤ s" and "v > s" and forgets the rest.
        let mut snaps: Vec<u32> = snapshots.iter().map(|s| **s).collect();
        snaps.sort_unstable();
        snaps.dedup();
        let below = |v: u32| snaps.partition_point(|&s| s < v) as u32;
        for row in self.tables.iter_mut().flatten() {
            for (v, _) in &mut row.versions {
                *v = 2 * below(*v);
            }
        }
        for s in snapshots.iter_mut() {
            **s = 2 * below(**s) + 1;
        }
        self.seq = 2 * snaps.len() as u32;
    }
}

impl Db {
    /// Whether [`Db::normalise`] with these snapshots would change nothing (checked first, so
    /// that a state whose database is already normal keeps sharing it).
    #[must_use]
    pub fn is_normal(&self, snapshots: &[u32]) -> bool {
        if snapshots.is_empty() {
            return self.forgotten();
        }
        let mut snaps = snapshots.to_vec();
        snaps.sort_unstable();
        snaps.dedup();
        if self.seq != 2 * snaps.len() as u32
            || snaps.iter().enumerate().any(|(j, &s)| s != 2 * j as u32 + 1)
        {
            return false;
        }
        let below = |v: u32| snaps.partition_point(|&s| s < v) as u32;
        self.tables.iter().flatten().all(|row| {
            kept(row)
                && row.versions.iter().all(|(v, _)| *v == 2 * below(*v))
                && pruned(row, &snaps)
        })
    }

    /// Whether [`Db::forget_history`] would change nothing: every row has one version,
    /// numbered 0, and is kept. (Checked first so that a state whose database did not
    /// change keeps sharing it.)
    #[must_use]
    pub fn forgotten(&self) -> bool {
        self.seq == 0
            && self
                .tables
                .iter()
                .flatten()
                .all(|row| matches!(row.versions.as_slice(), [(0, _)]) && kept(row))
    }

    /// With no snapshot alive only the newest versions matter: every row keeps its newest
    /// version, numbered 0.
    fn forget_history(&mut self) {
        for rows in &mut self.tables {
            rows.retain_mut(|row| {
                if row.versions.len() > 1 {
                    row.versions.drain(..row.versions.len() - 1);
                }
                if let Some((s, _)) = row.versions.last_mut() {
                    *s = 0;
                }
                kept(row)
            });
        }
        self.seq = 0;
    }
}

/// Whether a row still matters: a change or a lock on it, or a version that is not a
/// deletion.
fn kept(row: &Row) -> bool {
    row.pending.is_some()
        || !row.locks.held.is_empty()
        || !row.locks.queue.is_empty()
        || row.versions.iter().any(|(_, v)| v.is_some())
}

/// Whether [`prune`] would keep every version of the row.
fn pruned(row: &Row, snapshots: &[u32]) -> bool {
    let n = row.versions.len();
    if n <= 1 {
        return true;
    }
    let mut keep = vec![false; n];
    keep[n - 1] = true;
    for &s in snapshots {
        if let Some(i) = row.versions.iter().rposition(|(v, _)| *v <= s) {
            keep[i] = true;
        }
    }
    keep.iter().all(|&k| k)
}

/// Keeps a row's newest version and, for each snapshot, the version it sees; a row whose only
/// surviving version says "deleted" and that nobody can see alive keeps just that.
fn prune(row: &mut Row, snapshots: &[&mut u32]) {
    let n = row.versions.len();
    if n <= 1 {
        return;
    }
    let mut keep = vec![false; n];
    keep[n - 1] = true;
    for s in snapshots {
        if let Some(i) = row.versions.iter().rposition(|(v, _)| *v <= **s) {
            keep[i] = true;
        }
    }
    let mut i = 0;
    row.versions.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_lock_modes_conflict_as_documented() {
        use LockMode::{KeyShare, NoKeyUpdate, Share, Update};
        let pg = Flavour::Postgres;
        assert!(!conflicts(pg, KeyShare, NoKeyUpdate));
        assert!(conflicts(pg, KeyShare, Update));
        assert!(!conflicts(pg, Share, Share));
        assert!(conflicts(pg, Share, NoKeyUpdate));
        assert!(conflicts(pg, NoKeyUpdate, NoKeyUpdate));
        assert!(!conflicts(Flavour::Mysql, Share, Share));
        assert!(conflicts(Flavour::Mysql, Share, Update));
    }

    #[test]
    fn normalise_keeps_what_snapshots_see() {
        let mut db = Db::new(vec![(0, vec![vec![Value::Int(1), Value::Int(10)]])]);
        let p = Pid(0);
        for v in [9, 8, 7] {
            db.lock(0, 0, p, LockMode::Update);
            db.write(
                0,
                0,
                p,
                Some(vec![Value::Int(1), Value::Int(v)].into_boxed_slice()),
            );
            db.end(Flavour::Postgres, p, true);
        }
        let mut snap = 1u32; // sees the 9
        db.normalise(&mut [&mut snap]);
        assert_eq!(db.row(0, 0).versions.len(), 2);
        assert_eq!(db.row(0, 0).at(snap).unwrap()[1], Value::Int(9));
        assert_eq!(db.row(0, 0).latest().unwrap()[1], Value::Int(7));
        assert!(db.row(0, 0).latest_seq() > snap);
    }
}
