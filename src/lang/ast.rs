//! Syntax tree of a model file as written: names unresolved, durations in milliseconds.

use std::collections::BTreeSet;

use crate::ir::{
    BinOp, ColumnType, Fairness, Flavour, Isolation, LockMode, PropertyKind, Span, Timing, UnOp,
    WaitPolicy,
};

/// A name with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Decl {
    pub kind: DeclKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum DeclKind {
    Model(String),
    About(String),
    /// `tags NAME=VALUE …`: names lowercased, values as written (lowercased).
    Tags(Vec<(Name, Name)>),
    /// `db FLAVOUR [isolation LEVEL]`; `None` where the word was unknown (already reported).
    Db {
        flavour: Option<Flavour>,
        isolation: Option<Isolation>,
    },
    /// `db workers N`: the database server's capacity.
    Workers(u16),
    /// `redis workers N`: each Redis server's capacity.
    RedisWorkers(u16),
    /// `pool NAME size N`: a connection pool.
    Pool { name: Name, size: u16 },
    /// `set NAME = value`: a server setting, checked against the flavour when lowered.
    Setting {
        name: Name,
        value: Setting,
    },
    /// `[unique] index T (col, …)`
    Index {
        unique: bool,
        table: Name,
        columns: Vec<Name>,
    },
    Table {
        name: Name,
        columns: Vec<ColumnDef>,
    },
    Row {
        table: Name,
        values: Vec<Lit>,
        /// `row t (1..100, …)`: the value at this position is a range, up to this literal.
        through: Option<(usize, Lit)>,
    },
    Ghost {
        name: Name,
        init: i64,
    },
    /// `key K = V [ttl D] [on S]`: a Redis key present when the model starts.
    InitialKey {
        key: Name,
        value: Lit,
        ttl: Option<(u64, Span)>,
        on: Option<Name>,
    },
    Mutex(Name),
    /// `latency KIND D`: what every operation of the kind costs.
    Latency {
        kind: crate::ir::workload::Latency,
        delay: DelayAst,
    },
    /// `param NAME = V` (already substituted where the name is used): the value in force,
    /// as written (`10`, `50ms`).
    Param { name: Name, value: String },
    /// `redis NAME [with N replicas]`
    Redis {
        name: Name,
        replicas: u8,
    },
    /// `timing bounded|async [split]`; `None` where the word was unknown (already
    /// reported); `true` with `split`.
    Timing(Option<Timing>, bool),
    /// `fairness weak|strong`; `None` where the word was unknown (already reported).
    Fairness(Option<Fairness>),
    /// `allow failed` (false where the word was unknown, already reported).
    AllowFailed(bool),
    Process(ProcessDecl),
    /// `fault KIND GROUP [up to D] at most N [during REGION]` (no `during` for `drift`), `fault failover SERVER at most N`,
    /// `fault jump SERVER by D at most N`
    Fault {
        kind: FaultAst,
        /// The process group, or the Redis server of a failover or a clock jump.
        group: Name,
        budget: u8,
        during: Option<Name>,
    },
    Property {
        kind: PropertyKind,
        name: Name,
        expr: Expr,
        /// `leads_to NAME: P => Q`: the Q (`expr` is the P).
        then: Option<Expr>,
    },
    /// `terminates NAME: GROUP` / `no_starvation NAME: GROUP[i]`: named liveness forms,
    /// lowered to `eventually` / `leads_to` once the group's size is known.
    Liveness {
        form: LivenessForm,
        name: Name,
        group: Name,
        /// `GROUP[i]` (`no_starvation` only; `None` for a group of one).
        index: Option<Lit>,
    },
    /// `expect [FLAVOUR, … :] holds|violated NAME|deadlock`; `flavours` is `None` when the
    /// line names none (unknown flavours are reported and left out).
    Expect {
        flavours: Option<Vec<(Flavour, Span)>>,
        expect: ExpectDecl,
    },
    /// `schedule NAME { … }`
    Schedule(ScheduleAst),
}

/// The named liveness forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LivenessForm {
    /// Every process of the group eventually finishes (done, failed, crashed or hung).
    Terminates,
    /// Every time the process waits, it eventually stops waiting.
    NoStarvation,
}

/// A fault's kind as written; `Pause` carries its longest pause, `Drift` its largest clock
/// offset and `Jump` its (signed) step, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAst {
    Crash,
    Pause(u64),
    Hang,
    Drift(u64),
    /// `fault timeout`: a Redis reply misses the client's timeout.
    Timeout,
    Failover,
    /// `fault jump S [replica K] by [-]D`: the replica (0 = the primary) and the signed step.
    Jump { replica: u8, by: i64 },
    /// `fault restart S [down D]`: the server comes back empty, after `down` ms refusing
    /// connections (0: at once).
    Restart { down: u64 },
    /// `fault partition S [for D]`: the clients cannot reach the server, for `heal` ms or
    /// for good.
    Partition { heal: Option<u64> },
}

#[derive(Clone, Debug)]
pub struct ColumnDef {
    pub name: Name,
    pub ty: ColumnType,
    /// The `primary key` words, when present.
    pub pk: Option<Span>,
    /// The `unique` word, when present.
    pub unique: Option<Span>,
}

/// The value of a `set` line, already read according to the setting's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `lock_timeout` in milliseconds; 0 = off.
    LockTimeout(u64),
    DeadlockTimeout(u64),
    InnodbLockWaitTimeout(u64),
    InnodbSnapshotIsolation(bool),
    /// `sql_mode = '…'`: true when the mode is strict.
    SqlMode {
        strict: bool,
    },
}

/// A delay as written: the shortest and the longest length in milliseconds, and the
/// distribution `simulate` draws from (`check` explores `lo..=hi`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayAst {
    pub lo: u64,
    pub hi: u64,
    pub dist: DistAst,
    pub span: Span,
}

/// The distribution of a [`DelayAst`]; its parameters in microseconds (a Poisson rate's
/// mean gap need not be a whole millisecond).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DistAst {
    /// `5ms` (fixed), `1..3ms` or `uniform 1ms..3ms`: every length in the range alike.
    Range,
    /// `exponential mean M max X`
    Exponential { mean_us: u64 },
    /// `lognormal median M p99 P max X`
    LogNormal { median_us: u64, p99_us: u64 },
}

/// How a process group is run, as its header says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArrivalAst {
    Once,
    /// `loop think D`
    Closed(DelayAst),
    /// `arrive poisson R/s` (R per second) or `arrive every D`: the gap between arrivals.
    Open(DelayAst),
}

/// A literal value in a `row`, a cell reference or an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LitKind {
    Int(i64),
    Str(String),
    Null,
}

#[derive(Clone, Debug)]
pub struct Lit {
    pub kind: LitKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct ProcessDecl {
    pub name: Name,
    pub count: usize,
    pub on: Option<Name>,
    /// `pool P`: the connection pool its processes use.
    pub pool: Option<Name>,
    /// `loop think D` / `arrive …` after the count: how the group's processes run.
    pub arrival: ArrivalAst,
    pub body: Block,
    /// `process name[N] [on inst]`: where the group is declared.
    pub header: Span,
    /// The closing brace: where falling off the end happens.
    pub end: Span,
    /// Every local assigned or bound by `into` in the body (found from tokens, so statements
    /// that failed to parse still count).
    pub defined: BTreeSet<String>,
}

#[derive(Clone, Debug)]
pub enum ExpectDecl {
    Holds,
    Violated(Name),
    Deadlock,
    /// `expect [FLAVOURS:] schedule NAME: CLAIM, CLAIM, …`
    Schedule { name: Name, claims: Vec<ClaimAst> },
}

/// `schedule NAME { STEP … }`: the steps as written, each with where it is.
#[derive(Clone, Debug)]
pub struct ScheduleAst {
    pub name: Name,
    pub steps: Vec<(String, Span)>,
}

/// One claim about a schedule's run (docs/language.md, "Schedules").
#[derive(Clone, Debug)]
pub struct ClaimAst {
    pub kind: ClaimAstKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ClaimAstKind {
    /// `P waits at K`, or `P waits` (still, at the end).
    Waits { who: Name, at: Option<usize> },
    /// `P gets 'CODE' at K`: a statement of P's fails with this code.
    Gets { who: Name, code: String, at: usize },
    /// `P reads (1, 10) (2, 20) at K`, `P reads 10 at K`, `P reads nothing at K`.
    Reads {
        who: Name,
        rows: Vec<Vec<Lit>>,
        at: usize,
    },
    /// `P finishes` (any outcome) or `P returns 'outcome'`.
    Ends { who: Name, outcome: Option<String> },
    /// `final EXPR`: true of the state the run ends in.
    Final(Expr),
}

pub type Block = Vec<Stmt>;

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GhostOp {
    Set,
    Add,
    Sub,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    SetLocal {
        name: Name,
        expr: Expr,
    },
    SetGhost {
        name: Name,
        op: GhostOp,
        expr: Expr,
    },
    If {
        arms: Vec<(Expr, Block)>,
        otherwise: Option<Block>,
    },
    Repeat {
        count: u32,
        /// `repeat N`, where the loop's own ops point.
        head: Span,
        body: Block,
    },
    /// `for $v in ITEMS { … }`: the body once per item, in order, `$v` standing for the item
    /// (a name is a string); unrolled when lowered. `head` is `for $v in ITEMS`.
    For {
        var: Name,
        items: Vec<Lit>,
        head: Span,
        body: Block,
    },
    /// `loop { … }`: unbounded; only `break` leaves it. `head` is the `loop` keyword.
    Loop {
        head: Span,
        body: Block,
    },
    Break,
    Return(Option<String>),
    /// `raise 'Code'`: an application error.
    Raise((String, Span)),
    /// `work D`: computation inside the critical section.
    Work(DelayAst),
    /// `sleep D`: waiting on purpose (backoff).
    Sleep(DelayAst),
    /// `sleep EXPR ms` / `sleep EXPR s`: a computed pause; the unit in milliseconds.
    SleepFor(Expr, u64),
    /// `call NAME D`: a call to another service (a payment provider), as `work`.
    Call(Name, DelayAst),
    /// `pick $x from lo..hi [zipf s]`: the environment chooses the value.
    Pick {
        local: Name,
        lo: i64,
        hi: i64,
        zipf: Option<f64>,
    },
    Lock(Name),
    Unlock(Name),
    Sql(Box<SqlText>),
    /// A Redis command; `on` names its server.
    Redis {
        cmd: RedisAst,
        into: Option<Name>,
        wait: bool,
        on: Option<Name>,
    },
    /// `atomic [on SERVER] { … }`; `head` is `atomic [on SERVER]`.
    Atomic {
        body: Block,
        on: Option<Name>,
        head: Span,
    },
    /// `watchdog KEY lease D`: the lease in milliseconds (a multiple of 3, checked when parsed).
    Watchdog {
        key: Name,
        lease: u64,
    },
    /// `watchdog stop`
    WatchdogStop,
    /// `region NAME { … }`: the body, lowered inline; the group's region NAME covers its ops.
    Region {
        name: Name,
        body: Block,
    },
    /// `retry N on 'code', … [backoff D] { … }`
    Retry {
        attempts: u32,
        codes: Vec<(String, Span)>,
        /// How long to wait before the next attempt.
        backoff: Option<BackoffAst>,
        /// `retry … on …`, where the retry's own ops point.
        head: Span,
        body: Block,
    },
}

/// A SQL statement: the text as written and sqlparser's reading of it.
#[derive(Clone, Debug)]
pub struct SqlText {
    /// `None` when sqlparser rejected the text (already reported).
    pub stmt: Option<sqlparser::ast::Statement>,
    pub text: String,
    /// Byte offset of `text` in the source.
    pub base: usize,
    pub into: Vec<Name>,
    /// `catch $e` after the statement.
    pub catch: Option<Name>,
    /// A SELECT's locking clause, read by the front end (sqlparser sees the text before it).
    pub lock: Option<LockAst>,
    /// The words of the text, for pointing at clauses sqlparser gives no span for.
    pub words: Vec<Name>,
    /// The text is ASCII: a column counted in characters is a byte offset (finding a span
    /// costs nothing, not a walk along the line).
    pub ascii: bool,
}

impl SqlText {
    pub fn span(&self) -> Span {
        Span::new(self.base, self.base + self.text.len())
    }
}

/// `FOR UPDATE [NOWAIT]`, `LOCK IN SHARE MODE`, …
#[derive(Clone, Debug)]
pub struct LockAst {
    pub mode: LockMode,
    pub wait: WaitPolicy,
    /// Written `LOCK IN SHARE MODE` (MySQL's spelling of `FOR SHARE`).
    pub in_share_mode: bool,
    /// The lock words (`FOR NO KEY UPDATE`), without the wait policy.
    pub mode_span: Span,
    /// `NOWAIT` / `SKIP LOCKED`, when written.
    pub wait_span: Option<Span>,
}

#[derive(Clone, Debug)]
pub enum RedisAst {
    Set {
        key: Name,
        value: Expr,
        nx: bool,
        px: Option<u64>,
        /// The TTL was written `EX s` (seconds), not `PX ms`.
        ex: bool,
    },
    Get(Name),
    /// `GET key on S replica K`: K is 1-based as written; the span is `replica K`'s.
    GetReplica {
        key: Name,
        replica: u8,
        span: Span,
    },
    Del(Name),
    /// `PEXPIRE key ms`: the TTL in milliseconds.
    Pexpire {
        key: Name,
        ttl: u64,
    },
    Pttl(Name),
    Incr(Name),
    /// `WAIT numreplicas timeout`: the timeout in milliseconds, 0 for ever.
    Wait { replicas: u8, timeout: u64 },
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Lit(LitKind),
    Bool(bool),
    Local(String),
    Me,
    /// A bare name: a ghost.
    Name(String),
    /// `clock()`: the client's own clock (process code only).
    Clock,
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `t[pk].col`
    Cell {
        table: Name,
        pk: Lit,
        column: Name,
    },
    /// `sum(t.col)`
    Sum {
        table: Name,
        column: Name,
    },
    /// `redis(key)`, `redis(key on server)`
    Key { key: Name, on: Option<Name> },
    /// `count(group, status)`
    Count {
        group: Name,
        status: Name,
    },
    /// `count(table)`, `count(table where cond)`: rows, the condition over their columns.
    Rows {
        table: Name,
        filter: Option<Box<Expr>>,
    },
    /// `group[i]`: a process, as a value (`redis(lock) = client[0]`).
    Process { group: Name, index: Lit },
    /// `status(group[i], status)`; the index may be left out for a group of one.
    Status {
        group: Name,
        index: Option<Lit>,
        status: Name,
    },
}

/// `backoff D` (a fixed wait is the case multiplier = min = max) or `backoff exponential …` /
/// `backoff random_exponential …`, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BackoffAst {
    Exponential {
        multiplier: u64,
        min: u64,
        max: Option<u64>,
        /// `random_exponential`: any wait from `min` up to the exponential's.
        jitter: bool,
        span: Span,
    },
}
