//! The intermediate representation every front end lowers to and every engine reads.
//!
//! A [`Model`] is fully resolved: names are indices, durations are ticks, processes are
//! expanded from their groups. Nothing here refers to source text except through [`Span`]s.

mod expr;
mod op;

pub use expr::{BinOp, Expr, StatusKind, UnOp};
pub use op::{LockClause, LockMode, OnError, Op, OpKind, RedisCmd, SqlStmt, WaitPolicy};

pub mod schedule;
pub mod value;
pub mod workload;

pub use value::{Pid, Sym, Value};

/// A byte range in the model's source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    #[must_use]
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }
}

/// A whole scenario: resources, processes, faults and properties.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// `model "…"`: the title.
    pub name: String,
    /// `about "…"`: the lesson the model teaches.
    pub about: String,
    /// `tags NAME=VALUE …`: in the order written (docs/language.md, "Tags").
    pub tags: Vec<(String, String)>,
    /// The file name (or `<string>`) the model came from, for messages.
    pub origin: String,
    /// The source text, so a trace can quote the line a step came from.
    pub source: String,
    pub db: Option<Db>,
    /// Ghost counters, in declaration order; their initial values.
    pub ghosts: Vec<Ghost>,
    /// Redis keys present at the start (`key K = V [ttl D] [on S]`), on the server's every
    /// node (replicated before the model begins).
    pub keys: Vec<InitialKey>,
    /// Names of in-process mutexes; every instance has its own copy of each.
    pub mutexes: Vec<String>,
    /// Service instances (process placement); index = instance id.
    pub instances: Vec<String>,
    /// Redis servers (`redis NAME [with N replicas]`); a model that uses Redis without
    /// declaring one gets a single server named `redis` with no replica.
    pub redis: Vec<RedisServer>,
    /// Process groups as declared (`process buyer[2] { … }`).
    pub groups: Vec<Group>,
    /// Concrete processes, grouped in declaration order; index = [`Pid`].
    pub processes: Vec<Process>,
    pub faults: Vec<Fault>,
    pub properties: Vec<Property>,
    /// What the checker must find for the database flavour this model was parsed for.
    pub expect: Expect,
    pub expect_span: Span,
    /// The flavours the file states expectations for (`expect postgres, mysql: …`), in order;
    /// empty when its expectations name no flavour. `check` runs the model once per flavour.
    pub expect_flavours: Vec<Flavour>,
    pub timing: Timing,
    /// `timing … split`: a step ends at each reply (after a visible operation), and the
    /// local code after it runs in the process's next step, so other processes, time and a
    /// pause can come between a reply and the code that uses it.
    pub split_steps: bool,
    /// The fairness liveness properties assume of processes and timers.
    pub fairness: Fairness,
    /// `allow failed`: a `holds` with processes ending on uncaught errors is not warned of.
    pub allow_failed: bool,
    /// Milliseconds in one tick: the greatest common divisor of every duration in the model.
    pub tick_ms: u64,
    /// Interned strings (Redis keys, string literals, return outcomes); index = [`Sym`].
    pub symbols: Vec<String>,
    /// Some expression reads the clock (`now()`): the state then carries the time since the
    /// start; otherwise it carries none, so states that differ only in time are one state.
    pub clock: bool,
    /// Latencies, arrivals and parameters: what `simulate` draws from (`check` explores the
    /// ranges the delay ops carry).
    pub workload: workload::Workload,
    /// The cost file appended to the source (`--cost`), if any, for replay commands.
    pub costs: Option<String>,
    /// `schedule NAME { … }` blocks, in declaration order, with this flavour's claims.
    pub schedules: Vec<schedule::Schedule>,
}

/// The database: one flavour, its default isolation level, its tables, its settings.
#[derive(Clone, Debug)]
pub struct Db {
    pub flavour: Flavour,
    /// The level a transaction gets unless its BEGIN names one: the model's `isolation …`, or
    /// the flavour's default.
    pub isolation: Isolation,
    pub tables: Vec<Table>,
    pub settings: Settings,
}

/// The database engine a model runs against; its rules differ (docs/semantics.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// PostgreSQL.
    Postgres,
    /// MySQL with InnoDB, as its manual documents it.
    Mysql,
    /// MariaDB with InnoDB: MySQL's core with the differences observed on a real server.
    Mariadb,
}

impl Flavour {
    /// The isolation level a new transaction gets by default.
    #[must_use]
    pub fn default_isolation(self) -> Isolation {
        match self {
            Flavour::Postgres => Isolation::ReadCommitted,
            Flavour::Mysql | Flavour::Mariadb => Isolation::RepeatableRead,
        }
    }

    /// True for the InnoDB flavours.
    #[must_use]
    pub fn innodb(self) -> bool {
        matches!(self, Flavour::Mysql | Flavour::Mariadb)
    }

    /// The name the `db` line and `--db` use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Flavour::Postgres => "postgres",
            Flavour::Mysql => "mysql",
            Flavour::Mariadb => "mariadb",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isolation {
    /// InnoDB: plain reads see the newest version, uncommitted ones included (MY-3);
    /// PostgreSQL: READ COMMITTED (PG-1). Numbered below the others so that the older levels
    /// keep their hashes: symmetry picks representatives by hash, and so the printed traces of
    /// models written before this level existed stay as they were.
    ReadUncommitted = -1,
    ReadCommitted = 0,
    RepeatableRead,
    Serializable,
}

/// Server settings a model may change with `set NAME = value`. Durations are in ticks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// PostgreSQL `lock_timeout` (0 / absent = wait forever).
    pub lock_timeout: Option<u32>,
    /// PostgreSQL `deadlock_timeout`; absent = the default, 1 s.
    pub deadlock_timeout: Option<u32>,
    /// InnoDB `innodb_lock_wait_timeout`; absent = the default, 50 s.
    pub innodb_lock_wait_timeout: Option<u32>,
    /// MariaDB `innodb_snapshot_isolation` (default off in 10.11).
    pub innodb_snapshot_isolation: bool,
    /// InnoDB `sql_mode` has `STRICT_TRANS_TABLES` (the default); `set sql_mode = ''` clears it.
    pub non_strict: bool,
}

#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    /// Index of the primary-key column.
    pub pk: usize,
    /// Initial rows, sorted by primary key; each has one value per column.
    pub rows: Vec<Vec<Value>>,
    /// Secondary indexes (`index t (col)`, `unique index t (col)`, a `unique` column).
    pub indexes: Vec<Index>,
}

#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// `int` / `integer`: 32-bit signed.
    Int,
    /// `bigint`: 64-bit signed.
    BigInt,
    Text,
    /// `timestamp` / `datetime`: milliseconds since the model's start. PostgreSQL keeps
    /// microseconds (so every millisecond); InnoDB without a precision keeps whole seconds
    /// (MY-25: MySQL rounds, MariaDB truncates).
    Timestamp,
}

impl ColumnType {
    /// The range an integer column holds, if it is an integer column.
    #[must_use]
    pub fn range(self) -> Option<(i64, i64)> {
        match self {
            ColumnType::Int => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
            ColumnType::BigInt => Some((i64::MIN, i64::MAX)),
            ColumnType::Text | ColumnType::Timestamp => None,
        }
    }
}

/// A secondary index (the primary key is always indexed and unique).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    pub columns: Vec<usize>,
    pub unique: bool,
}

/// A Redis deployment: a primary and its replicas (asynchronous replication).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisServer {
    pub name: String,
    pub replicas: u8,
}

#[derive(Clone, Debug)]
pub struct InitialKey {
    pub server: u16,
    pub key: Sym,
    pub value: Value,
    /// Ticks until it expires; `None`: no TTL.
    pub ttl: Option<u32>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Ghost {
    pub name: String,
    pub init: i64,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    pub count: usize,
    /// The program every process of the group runs.
    pub program: Program,
    /// Pid of the group's first process; the others follow.
    pub first: Pid,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Process {
    pub group: usize,
    /// Index within the group: `buyer[1]` has index 1.
    pub index: usize,
    pub instance: usize,
}

/// A process body, flattened: structured control flow is lowered to jumps.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub ops: Vec<Op>,
    /// The ops that test an `if`'s condition (`JumpUnless`), for coverage: the others test
    /// loop counters.
    pub tests: Vec<u32>,
    /// Names of the locals (`$stock`), index = local id. `$me` is not a local.
    pub locals: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: FaultKind,
    /// The group whose processes may suffer it.
    pub group: usize,
    /// How many times, over a whole run, the environment may inject it.
    pub budget: u8,
    /// `during NAME`: only while the process is inside that `region` of its program (op
    /// indices `start..end`); `None` = anywhere.
    pub during: Option<(u32, u32)>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// The process's instance dies: every process on it stops for good, database connections
    /// close (transactions abort, row locks go), Redis keys stay until their TTL.
    Crash,
    /// `fault pause G up to D`: the process stops the world for any time up to `max` ticks
    /// (a GC pause, a VM migration); its watchdog stops with it; then it goes on unaware.
    Pause { max: u32 },
    /// `fault hang G`: the process stops for good but its connections stay open: its
    /// transaction, row locks and watchdog live on.
    Hang,
    /// `fault drift G up to D`: the process's own clock (`clock()`) runs up to `max` ticks
    /// ahead of or behind real time, from the moment the environment chooses.
    Drift { max: u32 },
    /// `fault timeout G at most N`: the reply to the process's next Redis command does not
    /// arrive before its client-side timeout: the command takes effect, the process gets the
    /// error `'TIMEOUT'`.
    LostReply,
    /// `fault jump S [replica K] by D`: a clock of Redis server `S` steps by `by` ticks (an NTP
    /// step, an operator): forward, its keys expire that much earlier; back (`by` < 0), later
    /// (RS-3). `replica` 0 is the current primary's clock, K the K-th live replica's.
    ClockJump { server: u16, replica: u8, by: i32 },
    /// `fault restart S [down D]`: the primary of Redis server `S` restarts without
    /// persistence and comes back empty, after `down` ticks in which it refuses connections
    /// (0: at once); its replicas resynchronise and are emptied too (RF-6, RL-6).
    Restart { server: u16, down: u32 },
    /// `fault partition S [for D]`: the clients lose their network path to server `S`'s
    /// primary for `heal` ticks (`None`: for good). A command sent meanwhile times out
    /// (`'TIMEOUT'`) without reaching it; the one in flight when the path broke may have
    /// reached it (RL-2, RL-4).
    Partition { server: u16, heal: Option<u32> },
    /// `fault failover S`: Redis server `S`'s primary fails and Sentinel promotes one of its
    /// replicas; writes not yet replicated to it are lost (RF-2). `Fault::group` is unused.
    Failover { server: u16 },
}

#[derive(Clone, Debug)]
pub struct Property {
    pub name: String,
    pub kind: PropertyKind,
    pub expr: Expr,
    /// `leads_to P => Q`: the Q (`expr` is the P).
    pub then: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyKind {
    /// Must hold in every reachable state.
    Invariant,
    /// Must hold in every final state (every process done or crashed).
    Final,
    /// `eventually NAME: P`: on every fair run, P holds at some point.
    Eventually,
    /// `always_eventually NAME: P`: on every fair run, P holds again and again (progress).
    AlwaysEventually,
    /// `leads_to NAME: P => Q`: on every fair run, every state where P holds is followed, at
    /// or after it, by one where Q holds.
    LeadsTo,
    /// `reachable NAME: P`: some reachable state satisfies P (Stateright's `sometimes`); a
    /// search that finds none fails it, so that a proof of the rest is not vacuous.
    Reachable,
}

impl PropertyKind {
    /// The word that declares it.
    #[must_use]
    pub fn keyword(self) -> &'static str {
        match self {
            PropertyKind::Invariant => "invariant",
            PropertyKind::Final => "final",
            PropertyKind::Eventually => "eventually",
            PropertyKind::AlwaysEventually => "always_eventually",
            PropertyKind::LeadsTo => "leads_to",
            PropertyKind::Reachable => "reachable",
        }
    }

    /// Checked on runs (cycles), not on single states.
    #[must_use]
    pub fn is_liveness(self) -> bool {
        matches!(
            self,
            PropertyKind::Eventually | PropertyKind::AlwaysEventually | PropertyKind::LeadsTo
        )
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Expect {
    #[default]
    Holds,
    Violated(String),
    Deadlock,
    /// The file states no expectation for this flavour (it was run with `--db` for another).
    Unstated,
}

/// `fairness weak` (the default) or `fairness strong`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fairness {
    /// An actor continuously able to step eventually steps.
    #[default]
    Weak,
    /// An actor able to step again and again (even with gaps) eventually steps.
    Strong,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// A ready step always happens before time advances.
    #[default]
    Bounded,
    /// Time may pass between any two steps: any process may be delayed for any time (the
    /// model under which no lease is safe without fencing, MK).
    Async,
}

/// SQL error codes the engine raises, interned first (after `OK`) in every model's symbol
/// table, so an error is a plain string value: SQLSTATEs for PostgreSQL, error numbers for the
/// InnoDB flavours.
pub const ERROR_CODES: &[&str] = &[
    "40001", "40P01", "55P03", "25P02", "22003", "23505", "1213", "1205", "3572", "1020", "1264",
    "1690", "1062", "TIMEOUT", "REFUSED",
];

/// What an error code means, for verdicts and traces.
#[must_use]
pub fn error_meaning(code: &str) -> Option<&'static str> {
    Some(match code {
        "40001" => "serialization failure",
        "40P01" | "1213" => "deadlock victim",
        "55P03" => "lock not available",
        "25P02" => "in an aborted transaction",
        "22003" | "1264" | "1690" => "value out of range",
        "23505" | "1062" => "duplicate key",
        "1205" => "lock wait timeout",
        "3572" => "NOWAIT: row locked",
        "1020" => "record changed since the snapshot",
        "TIMEOUT" => "reply timed out",
        "REFUSED" => "connection refused",
        _ => return None,
    })
}

/// The symbol table every model starts with: `OK`, then [`ERROR_CODES`].
#[must_use]
pub fn initial_symbols() -> Vec<String> {
    std::iter::once("OK")
        .chain(ERROR_CODES.iter().copied())
        .map(String::from)
        .collect()
}

/// The symbol of an error code from [`ERROR_CODES`].
///
/// # Panics
/// If `code` is not in [`ERROR_CODES`] (a bug in the engine).
#[must_use]
pub fn error_code(code: &str) -> Sym {
    let i = ERROR_CODES
        .iter()
        .position(|c| *c == code)
        .expect("a known error code");
    Sym(1 + i as u32)
}

impl Model {
    /// The index of server `s`'s first node in `State::redis`.
    #[must_use]
    pub fn redis_base(&self, s: u16) -> usize {
        self.redis[..s as usize]
            .iter()
            .map(|r| 1 + r.replicas as usize)
            .sum()
    }

    /// The server a Redis node (index into `State::redis`) belongs to.
    #[must_use]
    pub fn server_of(&self, node: usize) -> u16 {
        let mut base = 0;
        for (s, r) in self.redis.iter().enumerate() {
            base += 1 + r.replicas as usize;
            if node < base {
                return s as u16;
            }
        }
        0
    }

    /// How many Redis nodes the model has.
    #[must_use]
    pub fn redis_nodes(&self) -> usize {
        self.redis_base(self.redis.len() as u16)
    }

    /// Whether any process expression reads the clock (`now()`).
    #[must_use]
    pub fn reads_clock(&self) -> bool {
        let mut clock = false;
        for op in self.groups.iter().flat_map(|g| &g.program.ops) {
            op.kind.exprs(&mut |e| clock |= e.reads_clock());
        }
        clock
    }

    /// The display name of a process: `buyer[0]`, or `buyer` for a group of one.
    #[must_use]
    pub fn process_name(&self, pid: Pid) -> String {
        let p = &self.processes[pid.index()];
        let g = &self.groups[p.group];
        if g.count == 1 {
            g.name.clone()
        } else {
            format!("{}[{}]", g.name, p.index)
        }
    }

    /// The program a process runs.
    #[must_use]
    pub fn program(&self, pid: Pid) -> &Program {
        &self.groups[self.processes[pid.index()].group].program
    }

    #[must_use]
    pub fn symbol(&self, s: Sym) -> &str {
        &self.symbols[s.0 as usize]
    }

    /// Renders a value as a person reads it: `nil`, `42`, `'paid'`, `buyer[1]`.
    #[must_use]
    pub fn show(&self, v: &Value) -> String {
        match v {
            Value::Nil => "nil".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Str(s) => format!("'{}'", self.symbol(*s)),
            Value::Pid(p) => self.process_name(*p),
        }
    }

    /// 1-based line of a span's start, for trace and messages.
    #[must_use]
    pub fn line_of(&self, span: Span) -> usize {
        let end = (span.start as usize).min(self.source.len());
        self.source.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// 1-based line and column (in characters) of a span's start.
    #[must_use]
    pub fn line_col_of(&self, span: Span) -> (usize, usize) {
        let end = (span.start as usize).min(self.source.len());
        let end = (0..=end)
            .rev()
            .find(|&i| self.source.is_char_boundary(i))
            .unwrap_or(0);
        let before = &self.source[..end];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (self.line_of(span), before[line_start..].chars().count() + 1)
    }

    /// Converts milliseconds to ticks (exact by construction of `tick_ms`).
    #[must_use]
    pub fn ticks(&self, ms: u64) -> u32 {
        (ms / self.tick_ms.max(1)) as u32
    }
}
