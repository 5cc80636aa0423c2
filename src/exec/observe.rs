//! What a step reports besides its successor: its footprint and, for traces, its events.
//!
//! The explorer's hot loop uses [`Silent`], which the compiler erases; trace replay and the
//! reductions use [`Record`].

use crate::ir::{RedisCmd, Span, SqlStmt};
use crate::world::process::{RunError, Wait};
use crate::world::value::{Pid, Sym, Value};

/// A piece of shared state a step reads or writes (partial-order reduction reads these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    Row {
        table: u16,
        key: Value,
    },
    Key(Sym),
    Mutex(u16),
    Ghost(u16),
    /// Time and every deadline.
    Clock,
    /// A process's status (crashes, grants).
    Process(Pid),
}

/// Something that happened during a step, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A visible operation starts; `span` is where the model wrote it.
    At {
        span: Span,
    },
    Sql {
        stmt: SqlStmt,
        reply: Reply,
    },
    /// `arg` is the value a SET wrote (nil for other commands); `server` answered it.
    Redis {
        server: u16,
        cmd: RedisCmd,
        arg: Value,
        reply: Value,
    },
    Lock {
        mutex: u16,
    },
    Unlock {
        mutex: u16,
    },
    /// The operation must wait; `holder` is whom it waits for, when known.
    Waits {
        wait: Wait,
        holder: Option<Pid>,
    },
    SetGhost {
        ghost: u16,
        value: i64,
    },
    /// `work`/`sleep` for `ticks`, or for anything up to `upto` when it is a range.
    Delay {
        work: bool,
        ticks: u32,
        upto: u32,
    },
    /// The reply to a Redis command missed the client's timeout.
    ReplyLost {
        pid: Pid,
    },
    /// A process's clock started running `by` ticks off (negative: behind).
    Drift {
        pid: Pid,
        by: i32,
    },
    /// A `work A..B` ended before its longest length.
    EndedEarly {
        pid: Pid,
    },
    Finished {
        outcome: Option<Sym>,
    },
    Failed(RunError),
    /// The process ends on a SQL error nothing caught.
    Uncaught {
        code: Sym,
    },
    /// A row's committed version changed (`None`: deleted).
    RowCommitted {
        table: u16,
        key: Value,
        values: Option<Box<[Value]>>,
    },
    /// A row lock was taken by the acting process.
    RowLocked {
        table: u16,
        key: Value,
    },
    /// The database found a wait-for cycle and chose a victim.
    Deadlock {
        cycle: Vec<crate::explore::waits::Edge>,
        victim: Pid,
    },
    /// A lock wait ended in an error (deadlock victim, lock timeout).
    Interrupted {
        pid: Pid,
        code: Sym,
    },
    /// A transaction ended by abort (rollback, crash, a process ending inside it).
    Aborted {
        pid: Pid,
    },
    /// A released lock went to the next waiter.
    Granted {
        pid: Pid,
        wait: Wait,
    },
    KeySet {
        server: u16,
        key: Sym,
        value: Value,
        ttl: Option<u32>,
    },
    /// A watchdog started (or stopped) renewing a key.
    Watchdog {
        key: Sym,
        running: bool,
    },
    /// A watchdog renewal: the key held the owner's id and got its lease back (`renewed`), or
    /// it did not and the watchdog stopped.
    Renewal {
        pid: Pid,
        key: Sym,
        renewed: bool,
    },
    /// A pause fault froze the process (`true`) or it went on (`false`).
    Paused {
        pid: Pid,
        paused: bool,
    },
    /// A hang fault stopped the process for good, its connections open.
    Hung {
        pid: Pid,
    },
    /// A replica applied a write from its replication stream.
    Replicated {
        node: u16,
        key: Sym,
    },
    /// A server's clock stepped forward.
    ClockJump {
        server: u16,
        by: u32,
    },
    /// A server's primary failed and a replica (node index) was promoted.
    Failover {
        server: u16,
        promoted: u16,
    },
    /// `PEXPIRE` set a key's TTL.
    KeyTtl {
        server: u16,
        key: Sym,
        ttl: u32,
    },
    KeyDeleted {
        server: u16,
        key: Sym,
    },
    KeyExpired {
        server: u16,
        key: Sym,
    },
    TimePasses {
        ticks: u32,
    },
    Woke {
        pid: Pid,
    },
    Crashed {
        pid: Pid,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    None,
    Rows(Vec<Box<[Value]>>),
    Count(i64),
    /// A command tag worth showing (`ROLLBACK` for a COMMIT of an aborted transaction).
    Tag(&'static str),
    /// The statement failed with this error code.
    Error(Sym),
}

/// Receives footprints and events. Every method defaults to doing nothing.
pub trait Observer {
    /// False for observers that ignore events, so callers skip building them.
    const EVENTS: bool;
    /// False for observers that ignore coverage, so the step does not report it.
    const COVER: bool = false;
    fn read(&mut self, _r: Resource) {}
    fn write(&mut self, _r: Resource) {}
    fn event(&mut self, _e: Event) {}
    /// `pid` runs the op at `pc` of its program (a blocked operation that resumes runs
    /// again).
    fn ran(&mut self, _pid: Pid, _pc: u32) {}
    /// The `if` test at `pc` of `pid`'s program came out `taken`.
    fn branch(&mut self, _pid: Pid, _pc: u32, _taken: bool) {}
    /// The SQL statement `ran` last returned or affected this many rows.
    fn rows(&mut self, _rows: usize) {}
}

/// Observes nothing.
pub struct Silent;

impl Observer for Silent {
    const EVENTS: bool = false;
}

/// Keeps everything, for traces and reductions.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub reads: Vec<Resource>,
    pub writes: Vec<Resource>,
    pub events: Vec<Event>,
}

impl Observer for Record {
    const EVENTS: bool = true;
    fn read(&mut self, r: Resource) {
        if !self.reads.contains(&r) {
            self.reads.push(r);
        }
    }
    fn write(&mut self, r: Resource) {
        if !self.writes.contains(&r) {
            self.writes.push(r);
        }
    }
    fn event(&mut self, e: Event) {
        self.events.push(e);
    }
}
