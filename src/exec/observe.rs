//! What a step reports besides its successor: for traces and partial-order reduction, its
//! events; for coverage, the ops it runs.
//!
//! The explorer's hot loop uses [`Silent`] (or coverage's counter), which the compiler
//! reduces to nothing (or to counting); trace replay and partial-order reduction use
//! [`Record`].

use crate::ir::{RedisCmd, Span, SqlStmt};
use crate::world::process::{RunError, Wait};
use crate::ir::value::{Pid, Sym, Value};

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
        /// The process's locals as the statement ran (what its `$names` were), for replay
        /// on a real server.
        locals: Box<[Value]>,
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
    /// A finished process of a repeating group started its next request.
    Restarted {
        pid: Pid,
    },
    /// A `work A..B` ended before its longest length.
    EndedEarly {
        pid: Pid,
    },
    /// `pick $x`: the environment chose this value for the local.
    Picked { local: u16, value: i32 },
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
        cycle: Vec<crate::exec::waits::Edge>,
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
        /// The lease the renewal sets, in ticks.
        lease: u32,
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
    /// A clock of a server stepped `by` ticks (back when negative): its primary's
    /// (`replica` 0) or its `replica`-th live replica's.
    ClockJump {
        server: u16,
        replica: u8,
        by: i32,
    },
    /// A server's primary restarted without persistence: these keys were lost.
    ServerRestarted {
        server: u16,
        lost: Vec<Sym>,
        /// Ticks it stays down, refusing connections, before it is back (0: back at once).
        down: u32,
    },
    /// The clients lost their path to a server (RL-2, RL-4); `in_flight`: while a request was on
    /// its way, which still reaches it.
    Partitioned { server: u16, in_flight: bool },
    /// A partitioned server is reachable again, or a restarted one is back up.
    Reachable { server: u16 },
    /// A process's command (or its watchdog's renewal) did not reach the server: it timed
    /// out, or the connection was refused (`refused`: the server is down). It had no effect.
    Unreached { pid: Pid, server: u16, refused: bool },
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
    /// The statement failed with this error.
    Error(Refusal),
}

/// An error a statement raised: the code a process catches, and what the server's message
/// names besides it (`trace::words` writes the message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: Sym,
    pub about: About,
    /// The failed statement's table, when it has one (set where the failure is reported).
    pub table: Option<u16>,
}

/// The detail of an error that its message shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum About {
    #[default]
    Nothing,
    /// PostgreSQL found the row its snapshot saw updated by a later transaction.
    Updated,
    /// … or deleted by one.
    Deleted,
    /// PostgreSQL's SSI at COMMIT: a dangerous structure of read/write dependencies.
    Dependencies,
    /// A value out of `column`'s range in the statement's `row`-th row (from 1).
    Range { column: u16, row: u32 },
    /// An arithmetic result out of the engine's integer range.
    Overflow,
    /// The key an INSERT duplicates.
    Duplicate(Value),
    /// PostgreSQL's `lock_timeout` ran out (55P03 as NOWAIT's, in other words).
    LockTimeout,
}

impl From<Sym> for Refusal {
    fn from(code: Sym) -> Self {
        Refusal::of(code, About::Nothing)
    }
}

impl Refusal {
    /// The error a lock wait ended with, as the statement that waited reports it:
    /// PostgreSQL's 55P03 after a wait is `lock_timeout`'s (NOWAIT fails without waiting),
    /// in words of its own (`canceling statement due to lock timeout`, checked on
    /// PostgreSQL 15).
    #[must_use]
    pub fn ending_wait(code: Sym) -> Self {
        let about = if code == crate::ir::error_code("55P03") {
            About::LockTimeout
        } else {
            About::Nothing
        };
        Refusal::of(code, about)
    }

    #[must_use]
    pub fn of(code: Sym, about: About) -> Self {
        Refusal {
            code,
            about,
            table: None,
        }
    }
}

/// Receives a step's events and coverage. Every method defaults to doing nothing.
pub trait Observer {
    /// False for observers that ignore events, so callers skip building them.
    const EVENTS: bool;
    /// False for observers that ignore coverage, so the step does not report it.
    const COVER: bool = false;
    /// True for observers that want the locals a SQL statement ran with (a trace, for
    /// replay on a server); the partial-order reduction's replays skip copying them.
    const LOCALS: bool = false;
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

/// Keeps every event, for traces.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub events: Vec<Event>,
}

impl Observer for Record {
    const EVENTS: bool = true;
    const LOCALS: bool = true;
    fn event(&mut self, e: Event) {
        self.events.push(e);
    }
}

/// Keeps every event without the values a trace shows, for partial-order reduction's
/// footprints (inside the search: no copy of a process's locals per SQL step).
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    pub events: Vec<Event>,
}

impl Observer for Footprint {
    const EVENTS: bool = true;
    fn event(&mut self, e: Event) {
        self.events.push(e);
    }
}
