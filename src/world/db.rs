//! The database: tables of rows with a committed version, an uncommitted version and a row lock.
//!
//! PostgreSQL, READ COMMITTED (docs/semantics.md, rules PG-2, PG-7, PG-10, PG-16, PG-17).
//! Expressions are evaluated by the caller through closures, so this file knows rows and locks,
//! not the expression language.

use super::lock::{Acquire, Lock};
use super::value::{Pid, Value};

/// Invariant: a row has an uncommitted version only while its lock is held, and that version
/// belongs to the holder.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Db {
    /// Rows per table, in primary-key order.
    pub tables: Vec<Vec<Row>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    pub committed: Box<[Value]>,
    pub pending: Option<Box<[Value]>>,
    pub lock: Lock,
}

/// A locking access either completes with the rows it locked, or must wait for a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Locked(Vec<u16>),
    Wait { row: u16, holder: Pid },
}

/// A lock that changed hands when a transaction ended: (table, row, new holder).
pub type Grant = (u16, u16, Pid);

impl Db {
    #[must_use]
    pub fn new(initial: Vec<Vec<Vec<Value>>>) -> Self {
        let tables = initial
            .into_iter()
            .map(|rows| {
                rows.into_iter()
                    .map(|v| Row {
                        committed: v.into_boxed_slice(),
                        pending: None,
                        lock: Lock::default(),
                    })
                    .collect()
            })
            .collect();
        Db { tables }
    }

    /// The version of a row a statement of `pid` sees: its own uncommitted write, else the
    /// newest committed version. (At READ COMMITTED the statement snapshot is the newest
    /// committed state, since every step is atomic.)
    #[must_use]
    pub fn visible(&self, t: u16, r: u16, pid: Pid) -> &[Value] {
        let row = &self.tables[t as usize][r as usize];
        match &row.pending {
            Some(p) if row.lock.held_by(pid) => p,
            _ => &row.committed,
        }
    }

    /// Rows of table `t` that `pid` sees matching, in primary-key order, as a bit set.
    ///
    /// # Errors
    /// Whatever the filter returns.
    pub fn matching<E>(
        &self,
        t: u16,
        pid: Pid,
        filter: &mut impl FnMut(&[Value]) -> Result<bool, E>,
    ) -> Result<u64, E> {
        let mut set = 0u64;
        for r in 0..self.tables[t as usize].len() as u16 {
            if filter(self.visible(t, r, pid))? {
                set |= 1 << r;
            }
        }
        Ok(set)
    }

    /// Locks the candidate rows in order for `pid`, waiting at the first row another
    /// transaction holds. Each candidate is re-checked against its newest version first (the
    /// EvalPlanQual re-check, PG-16): a row that stopped matching is skipped, and if it is the
    /// row this statement was waiting for, the lock just granted to it is passed on.
    ///
    /// # Errors
    /// Whatever the filter returns.
    pub fn lock_rows<E>(
        &mut self,
        t: u16,
        pid: Pid,
        candidates: u64,
        waited: Option<u16>,
        filter: &mut impl FnMut(&[Value]) -> Result<bool, E>,
    ) -> Result<Access, E> {
        let mut locked = Vec::new();
        for r in 0..self.tables[t as usize].len() as u16 {
            if candidates & (1 << r) == 0 {
                continue;
            }
            let row = &self.tables[t as usize][r as usize];
            if let Some(h) = row.lock.holder.filter(|&h| h != pid) {
                self.tables[t as usize][r as usize].lock.acquire(pid);
                return Ok(Access::Wait { row: r, holder: h });
            }
            if filter(self.visible(t, r, pid))? {
                let acquired = self.tables[t as usize][r as usize].lock.acquire(pid);
                debug_assert_eq!(acquired, Acquire::Granted);
                locked.push(r);
            } else if waited == Some(r) {
                self.tables[t as usize][r as usize].lock.release();
            }
        }
        Ok(Access::Locked(locked))
    }

    /// Writes a new uncommitted version of a row `pid` holds.
    pub fn write(&mut self, t: u16, r: u16, pid: Pid, values: Box<[Value]>) {
        let row = &mut self.tables[t as usize][r as usize];
        debug_assert!(row.lock.held_by(pid));
        row.pending = Some(values);
    }

    /// Ends `pid`'s transaction: on commit its writes become the committed versions, on abort
    /// they vanish; either way its row locks go to the next waiters, who are returned.
    pub fn end(&mut self, pid: Pid, commit: bool) -> Vec<Grant> {
        let mut grants = Vec::new();
        for (t, rows) in self.tables.iter_mut().enumerate() {
            for (r, row) in rows.iter_mut().enumerate() {
                row.lock.queue.retain(|&q| q != pid);
                if !row.lock.held_by(pid) {
                    continue;
                }
                if let Some(p) = row.pending.take() {
                    if commit {
                        row.committed = p;
                    }
                }
                if let Some(next) = row.lock.release() {
                    grants.push((t as u16, r as u16, next));
                }
            }
        }
        grants
    }

    /// The row of table `t` whose primary key (column `pk`) equals `key`.
    #[must_use]
    pub fn find(&self, t: u16, pk: usize, key: Value) -> Option<u16> {
        self.tables[t as usize]
            .iter()
            .position(|row| row.committed[pk] == key)
            .map(|r| r as u16)
    }
}
