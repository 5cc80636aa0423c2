//! A process's own state: where it is in its program, its locals, its status, its transaction.

use crate::ir::value::{Sym, Value};
use crate::ir::{Isolation, LockMode};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Proc {
    /// Index of the next op of its program.
    pub pc: u32,
    pub status: Status,
    pub locals: Box<[Value]>,
    /// The open database transaction: explicit (`begin`) or the one of an autocommit statement
    /// that is waiting.
    pub txn: Option<Txn>,
    /// A waiting statement's own data: the keys a PostgreSQL statement matched in its
    /// snapshot (PG-17: the re-check after the wait never finds new rows), or the row a
    /// waiting INSERT will insert.
    pub candidates: Option<Box<[Value]>>,
    /// An error delivered while it waited (deadlock victim, lock timeout): its statement fails
    /// with it when the process next steps.
    pub error: Option<Sym>,
    /// Ticks until a waiting PostgreSQL backend runs its deadlock check (`deadlock_timeout`).
    pub check_in: Option<u32>,
    /// Ticks until a lock wait times out (`lock_timeout`, `innodb_lock_wait_timeout`).
    pub timeout_in: Option<u32>,
    /// Ticks a pause fault may still last (the process is frozen while `Some`).
    pub paused: Option<u32>,
    /// For `work A..B`: how much longer than its minimum the current delay may last.
    pub slack: u32,
    /// How far its own clock (`clock()`) is off, in ticks (a drift fault).
    pub drift: i32,
    /// The reply to its next Redis command will miss its timeout (a timeout fault).
    pub lose_reply: bool,
    /// The server and failover epoch of its last Redis write (what `WAIT` waits for).
    pub last_write: Option<(u16, u8)>,
    /// Its lock watchdog, while one runs.
    pub watchdog: Option<Watchdog>,
    /// What a PostgreSQL SERIALIZABLE transaction has read, for the serialization check at
    /// COMMIT: (table, key), or (table, nil) for a whole-table read.
    pub reads: Vec<(u16, Value)>,
}

/// A Redisson-style lock watchdog: renews `key` to `lease` every lease/3 while the key holds
/// the process's id (WD-1..3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Watchdog {
    pub key: Sym,
    pub lease: u32,
    /// Ticks until the next renewal.
    pub next_in: u32,
}

/// A database transaction as the server sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Txn {
    pub isolation: Isolation,
    /// Opened by `begin`; otherwise it is one autocommit statement's.
    pub explicit: bool,
    /// The commit number its snapshot sees (RR, SERIALIZABLE), once taken.
    pub snapshot: Option<u32>,
    /// PostgreSQL: an error aborted it; statements fail with 25P02 until ROLLBACK (PG-27).
    pub aborted: bool,
    /// InnoDB's measure for choosing a deadlock victim: rows changed plus rows locked.
    pub weight: u16,
    /// The clock when it began (PostgreSQL's `now()`, PG-33); 0 when the model has no clock.
    pub started: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Its next step can run.
    Ready,
    /// Working or sleeping: ready again when this many ticks have passed.
    Busy(u32),
    /// Blocked at the op at `pc`; the op runs again (resumes) once the wait is over.
    Waiting(Wait),
    /// Finished, with the outcome named by `return "…"`, if any.
    Done(Option<Sym>),
    /// Finished by a SQL error it did not catch (the code).
    Errored(Sym),
    /// Stopped by a crash fault.
    Crashed,
    /// Stopped for good by a hang fault; its connections and watchdog live on.
    Hung,
    /// Stopped by a runtime error in the model (a bug in the model, reported as a violation).
    Failed(RunError),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wait {
    /// In the queue of a mutex (index into `State::mutexes`); resumes when granted it.
    Mutex(u16),
    /// In the queue of a row lock (by table and primary key); resumes when granted it.
    Row {
        table: u16,
        key: Value,
        mode: LockMode,
    },
    /// An INSERT of `key` into a gap another transaction has locked (InnoDB); the row being
    /// inserted is kept in `Proc::candidates`. Resumes when no such gap lock is left.
    Gap { table: u16, key: Value },
    /// `WAIT n`: resumes when `need` replicas of `server` have every write, or at its timeout.
    Replicas { server: u16, need: u8 },
    /// `await CMD` on `key`: resumes when the command's reply would be truthy.
    Await { key: Sym },
}

/// A mistake the model makes at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RunError {
    /// Arithmetic or comparison on nil or on values of different kinds.
    Type,
    DivideByZero,
    Overflow,
    /// `unlock m` by a process that does not hold `m`.
    UnlockNotHeld,
    /// `lock m` by the process that already holds `m` (mutexes are not re-entrant).
    Relock,
    /// An UPDATE that sets the primary key (not modelled).
    KeyUpdate,
    /// `sleep $d ms` with a negative (or not integer) `$d`.
    BadDelay,
}

impl RunError {
    #[must_use]
    pub fn message(self) -> &'static str {
        match self {
            RunError::Type => "arithmetic or comparison on nil or on mismatched values",
            RunError::DivideByZero => "division by zero",
            RunError::Overflow => "integer overflow",
            RunError::UnlockNotHeld => "unlock of a mutex this process does not hold",
            RunError::Relock => "lock of a mutex this process already holds",
            RunError::KeyUpdate => "an UPDATE of the primary key (not modelled)",
            RunError::BadDelay => "a sleep whose length is negative or not a whole number",
        }
    }
}

impl Status {
    /// Done, failed, crashed: it will never step again.
    #[must_use]
    pub fn finished(self) -> bool {
        matches!(
            self,
            Status::Done(_)
                | Status::Errored(_)
                | Status::Crashed
                | Status::Hung
                | Status::Failed(_)
        )
    }
}

impl Proc {
    /// Calls `f` on every value the process holds that may be a process id: its locals, a
    /// waiting statement's candidate keys, its SERIALIZABLE reads, the key of the row or gap
    /// it waits for. (What symmetry reduction must rename, or must see named.)
    pub fn values(&self, mut f: impl FnMut(Value)) {
        self.locals.iter().for_each(|&v| f(v));
        self.candidates.iter().flatten().for_each(|&v| f(v));
        self.reads.iter().for_each(|&(_, v)| f(v));
        if let Status::Waiting(Wait::Row { key, .. } | Wait::Gap { key, .. }) = self.status {
            f(key);
        }
    }

    /// Calls `f` on each of the [`Proc::values`], to change it.
    pub fn values_mut(&mut self, mut f: impl FnMut(&mut Value)) {
        self.locals.iter_mut().for_each(&mut f);
        if let Some(c) = &mut self.candidates {
            c.iter_mut().for_each(&mut f);
        }
        self.reads.iter_mut().for_each(|(_, v)| f(v));
        if let Status::Waiting(Wait::Row { key, .. } | Wait::Gap { key, .. }) = &mut self.status {
            f(key);
        }
    }

    /// A process at the start of its program.
    #[must_use]
    pub fn new(locals: usize) -> Self {
        Proc {
            pc: 0,
            status: Status::Ready,
            locals: vec![Value::Nil; locals].into_boxed_slice(),
            txn: None,
            candidates: None,
            error: None,
            check_in: None,
            timeout_in: None,
            reads: Vec::new(),
            paused: None,
            slack: 0,
            drift: 0,
            lose_reply: false,
            last_write: None,
            watchdog: None,
        }
    }
}
