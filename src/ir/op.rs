//! Operations of a process program: local code, delays and visible operations.

use super::{Expr, Span, Sym};

/// One instruction with the source it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub kind: OpKind,
    pub span: Span,
}

/// Instructions. Jump targets are indices into the same op list (for `Atomic`, into its body).
#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    // --- local: no shared state; folded into the step of the neighbouring visible operation.
    /// `$x = expr`
    Assign {
        local: u16,
        expr: Expr,
    },
    /// `sold += 1` / `sold = expr` (the parser lowers `+=` and `-=` to `Ghost(g) ± e`).
    SetGhost {
        ghost: u16,
        expr: Expr,
    },
    Jump(u32),
    JumpUnless {
        cond: Expr,
        target: u32,
    },
    /// `return` / `return "label"` / falling off the end: the process is done.
    Return {
        outcome: Option<Sym>,
    },
    // --- delays: start a timed busy period; the step ends after them.
    /// `work 100ms`: computation inside the critical section. `work 100..300ms` lasts any
    /// time from `ticks` to `upto` (the environment chooses); otherwise `upto == ticks`.
    Work {
        ticks: u32,
        upto: u32,
        /// The distribution `simulate` draws the length from (`Workload::draws`); `None`:
        /// uniform over `ticks..=upto`.
        draw: Option<u16>,
    },
    /// `sleep 50ms` / `sleep 50..150ms`: waiting on purpose (backoff).
    Sleep {
        ticks: u32,
        upto: u32,
        draw: Option<u16>,
    },
    /// `sleep EXPR ms` (or `s`): a pause of a length the process computes, `unit` ticks per
    /// unit of the value (a backoff written as the seeds write it: `sleep $delay ms`).
    SleepFor {
        expr: Expr,
        unit: u32,
    },
    /// `pick $x from lo..hi [zipf s]`: the environment chooses a value of the range for the
    /// local (`Choice::Pick`); it starts a step of its own, which goes on as a step does.
    Pick {
        local: u16,
        lo: i32,
        hi: i32,
        /// `zipf s`: `simulate` draws the k-th value with weight 1/k^s; `None`: uniform.
        zipf: Option<f64>,
    },
    // --- visible: at most one per step.
    /// A SQL statement. Without `on_error`, an error ends the process (status `failed`) after
    /// rolling back its transaction, as an unhandled exception ends a request.
    Sql {
        stmt: SqlStmt,
        into: Vec<u16>,
        on_error: Option<OnError>,
    },
    /// A Redis command sent to server `server` (index into `Model::redis`): its current
    /// primary answers.
    Redis {
        cmd: RedisCmd,
        into: Option<u16>,
        server: u16,
    },
    /// `await CMD`: retry the Redis command until its reply is truthy (not nil, 0 or false);
    /// the process waits in between without spending steps.
    AwaitRedis {
        cmd: RedisCmd,
        into: Option<u16>,
        server: u16,
    },
    /// `atomic { … }`: Redis commands and local code run as one step (a Lua script) on one
    /// server. The body holds no visible operation other than `Redis` (all for `server`) and
    /// no delay.
    Atomic {
        body: Vec<Op>,
        server: u16,
    },
    /// Ends the process as failed with the error code held in `local` (a `retry` that ran
    /// out of attempts re-raises the last error).
    Raise {
        local: u16,
    },
    /// `watchdog KEY lease D`: start renewing `KEY` every lease/3 with an ownership-checked
    /// renew (the key must hold `$me`), as Redisson's lock watchdog does; `lease` in ticks.
    /// Local code: it only schedules a timer of the process's own.
    WatchdogStart {
        key: Sym,
        lease: u32,
    },
    /// `watchdog stop`: stop renewing.
    WatchdogStop,
    /// `lock m` on the process's own instance's mutex `m`.
    Lock {
        mutex: u16,
    },
    /// `unlock m`.
    Unlock {
        mutex: u16,
    },
}

/// What a statement does when it fails: `catch $e` (any error, continue) or the handler a
/// `retry … on 'code'` block installs (listed codes, jump to the handler).
#[derive(Clone, Debug, PartialEq)]
pub struct OnError {
    /// The local that receives the error code (a string such as `'40001'`), nil on success.
    pub local: u16,
    /// The codes caught; empty = every error.
    pub codes: Vec<Sym>,
    /// Where to continue after a caught error; `None` = the next op.
    pub target: Option<u32>,
}

/// A SQL statement, resolved against the schema. `text` is the statement as written.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlStmt {
    /// `BEGIN` / `START TRANSACTION`, with `ISOLATION LEVEL …` if given.
    Begin {
        isolation: Option<super::Isolation>,
    },
    Commit,
    Rollback,
    Select {
        table: u16,
        columns: Vec<u16>,
        filter: Option<Expr>,
        /// `ORDER BY`: (column, descending), in written order.
        order: Vec<(u16, bool)>,
        limit: Option<u32>,
        lock: Option<LockClause>,
        text: String,
    },
    Update {
        table: u16,
        /// `SET col = expr`, in written order; expressions see the row before the update.
        sets: Vec<(u16, Expr)>,
        filter: Option<Expr>,
        text: String,
    },
    /// `INSERT INTO t (cols) VALUES (…)`: one row; columns not named are NULL.
    Insert {
        table: u16,
        columns: Vec<u16>,
        values: Vec<Expr>,
        text: String,
    },
    /// `DELETE FROM t [WHERE …]`
    Delete {
        table: u16,
        filter: Option<Expr>,
        text: String,
    },
}

impl SqlStmt {
    /// The table the statement reads or writes (none for BEGIN, COMMIT, ROLLBACK).
    #[must_use]
    pub fn table(&self) -> Option<u16> {
        match self {
            SqlStmt::Select { table, .. }
            | SqlStmt::Update { table, .. }
            | SqlStmt::Insert { table, .. }
            | SqlStmt::Delete { table, .. } => Some(*table),
            SqlStmt::Begin { .. } | SqlStmt::Commit | SqlStmt::Rollback => None,
        }
    }

    /// Calls `f` on every expression of the statement: filters, SET values, inserted values.
    pub fn exprs(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            SqlStmt::Select { filter, .. } | SqlStmt::Delete { filter, .. } => {
                filter.iter().for_each(f);
            }
            SqlStmt::Update { sets, filter, .. } => {
                sets.iter().for_each(|(_, e)| f(e));
                filter.iter().for_each(f);
            }
            SqlStmt::Insert { values, .. } => values.iter().for_each(f),
            SqlStmt::Begin { .. } | SqlStmt::Commit | SqlStmt::Rollback => {}
        }
    }
}

/// The locking clause of a SELECT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LockClause {
    pub mode: LockMode,
    pub wait: WaitPolicy,
}

/// Row lock strengths, strongest first. InnoDB has only `Update` (X) and `Share` (S);
/// `LOCK IN SHARE MODE` is `Share`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockMode {
    /// `FOR UPDATE`
    Update,
    /// `FOR NO KEY UPDATE` (PostgreSQL)
    NoKeyUpdate,
    /// `FOR SHARE` / `LOCK IN SHARE MODE`
    Share,
    /// `FOR KEY SHARE` (PostgreSQL)
    KeyShare,
}

/// What a locking read does at a row another transaction holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitPolicy {
    Wait,
    /// `NOWAIT`: fail at once.
    NoWait,
    /// `SKIP LOCKED`: leave the row out.
    SkipLocked,
}

/// A Redis command. Keys are fixed names; values are expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum RedisCmd {
    /// `SET key value [NX] [PX ms]`; `px` is already in ticks. Reply `'OK'` or nil.
    Set {
        key: Sym,
        value: Expr,
        nx: bool,
        px: Option<u32>,
        /// The TTL was written `EX s`: traces show it so (a replay sends `PX`, which a time
        /// scale can shrink).
        ex: bool,
    },
    /// `GET key`: the value or nil.
    Get { key: Sym },
    /// `GET key on S replica K`: the value as the server's K-th live replica (1-based) sees it,
    /// by its own copy and clock: an expired key is absent there too (RF-5); nil when there is
    /// no such replica. Reads only.
    GetReplica { key: Sym, replica: u8 },
    /// `DEL key`: 1 if a key was removed, else 0.
    Del { key: Sym },
    /// `PEXPIRE key ms`: set or refresh the TTL (ticks) of an existing key: 1, else 0 (RS-4).
    Pexpire { key: Sym, ttl: u32 },
    /// `PTTL key`: remaining milliseconds; -1 without a TTL; -2 without the key (RS-5).
    Pttl { key: Sym },
    /// `INCR key`: add one to an integer value (a missing key counts as 0); keeps the TTL
    /// (RS-4, RS-10).
    Incr { key: Sym },
    /// `WAIT replicas timeout`: block until this many replicas have every write made so far,
    /// or `timeout` ticks pass; reply the number that have (RF-4). Not inside `atomic`.
    Wait { replicas: u8, timeout: u32 },
}

impl OpKind {
    /// Calls `f` on every expression the op evaluates (those of an `atomic` body too), each
    /// whole: [`Expr::visit`] reaches the parts.
    pub fn exprs(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            OpKind::Assign { expr, .. } | OpKind::SetGhost { expr, .. } => f(expr),
            OpKind::JumpUnless { cond, .. } | OpKind::SleepFor { expr: cond, .. } => f(cond),
            OpKind::Sql { stmt, .. } => stmt.exprs(f),
            OpKind::Redis { cmd, .. } | OpKind::AwaitRedis { cmd, .. } => {
                if let RedisCmd::Set { value, .. } = cmd {
                    f(value);
                }
            }
            OpKind::Atomic { body, .. } => body.iter().for_each(|op| op.kind.exprs(f)),
            _ => {}
        }
    }

    /// True for operations that touch shared state (at most one per step).
    #[must_use]
    pub fn is_visible(&self) -> bool {
        match self {
            // BEGIN touches nothing until the first statement, so it is local code.
            OpKind::Sql { stmt, .. } => !matches!(stmt, SqlStmt::Begin { .. }),
            _ => matches!(
                self,
                OpKind::Redis { .. }
                    | OpKind::AwaitRedis { .. }
                    | OpKind::Atomic { .. }
                    | OpKind::Lock { .. }
                    | OpKind::Unlock { .. }
            ),
        }
    }
}

impl RedisCmd {
    /// The key the command works on (`OK` for `WAIT`, which has none).
    #[must_use]
    pub fn key(&self) -> Sym {
        match self {
            RedisCmd::Set { key, .. }
            | RedisCmd::Get { key }
            | RedisCmd::GetReplica { key, .. }
            | RedisCmd::Del { key }
            | RedisCmd::Pexpire { key, .. }
            | RedisCmd::Pttl { key }
            | RedisCmd::Incr { key } => *key,
            RedisCmd::Wait { .. } => Sym::OK,
        }
    }
}
