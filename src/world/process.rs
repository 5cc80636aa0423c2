//! A process's own state: where it is in its program, its locals and its status.

use super::value::{Sym, Value};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Proc {
    /// Index of the next op of its program.
    pub pc: u32,
    pub status: Status,
    pub locals: Box<[Value]>,
    /// Inside `begin … commit`; outside, each statement is its own transaction.
    pub in_txn: bool,
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
    /// Stopped by a crash fault.
    Crashed,
    /// Stopped by a runtime error in the model (a bug in the model, reported as a violation).
    Failed(RunError),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wait {
    /// In the queue of a mutex (index into `State::mutexes`); resumes when granted it.
    Mutex(u16),
    /// In the queue of a row lock; resumes when granted it. `candidates` are the rows the
    /// statement matched in its snapshot (PG-17: the re-check never finds new rows).
    Row {
        table: u16,
        row: u16,
        candidates: u64,
    },
    /// `await CMD` on `key`: resumes when the command's reply would be truthy.
    Await { key: Sym },
}

/// A mistake the model makes at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunError {
    /// Arithmetic or comparison on nil or on values of different kinds.
    Type,
    DivideByZero,
    Overflow,
    /// `unlock m` by a process that does not hold `m`.
    UnlockNotHeld,
    /// `lock m` by the process that already holds `m` (mutexes are not re-entrant).
    Relock,
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
        }
    }
}

impl Status {
    /// Done, crashed or failed: it will never step again.
    #[must_use]
    pub fn finished(self) -> bool {
        matches!(self, Status::Done(_) | Status::Crashed | Status::Failed(_))
    }
}
