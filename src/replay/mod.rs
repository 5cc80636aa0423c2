//! `interlock replay`: a trace driven step by step, in the same order, on a real PostgreSQL or
//! MySQL/MariaDB server — the model's tables and rows in a scratch database, one connection
//! per process — and each statement's answer compared with the simulation's: rows, counts,
//! error codes, and whether it waits (asked of the server itself). No second semantics: what
//! each step does comes from the trace the engine recorded.

mod compare;
mod driver;
mod redis;
mod render;
pub(crate) mod statement;

pub use render::{json, text};

use crate::exec::observe::Event;
use crate::exec::Choice;
use crate::ir::{ColumnType, FaultKind, Model, RedisCmd};
use crate::trace::Trace;

/// Where to replay, and how fast time runs there.
#[derive(Clone, Debug)]
pub struct Options {
    /// The SQL server, for a model with a database: `postgres://user@host:port/db` or
    /// `mysql://user@host:port/`.
    pub sql: Option<String>,
    /// The Redis server, for a model that uses Redis: `redis://host:port/`.
    pub redis: Option<String>,
    /// Real time per model time: `1.0` runs ticks, lock timeouts and deadlock timeouts at
    /// their length, `0.1` ten times faster.
    pub time_scale: f64,
}

/// One statement (or wait, or final table) side by side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The trace's row number (`3`, or `↳` for a step that followed on its own), `end` for
    /// the final rows.
    pub number: String,
    /// The process (empty for the final rows).
    pub who: String,
    /// What was sent, `$locals` written as their values.
    pub statement: String,
    /// The simulation's answer: `10`, `(1, 10) (2, 20)`, `1 row`, `ERROR 40001`, `waits`.
    pub simulated: String,
    /// The server's, in the same words.
    pub server: String,
    /// Whether the two agree.
    pub agree: bool,
}

/// A replay: the server, each line, and whether the server agreed at every one.
#[derive(Clone, Debug)]
pub struct Report {
    /// `PostgreSQL 15.18 …`, `10.11.14-MariaDB …`.
    pub server: String,
    /// Every statement sent, wait ended and final table, in order (up to the first
    /// divergence).
    pub lines: Vec<Line>,
    /// Things the reader should know about what was and was not compared.
    pub notes: Vec<String>,
}

impl Report {
    /// The server agreed at every line.
    #[must_use]
    pub fn agrees(&self) -> bool {
        self.lines.iter().all(|l| l.agree)
    }
}

/// Why the trace cannot be replayed on real servers, if it cannot: said before anything runs.
#[must_use]
pub fn cannot(m: &Model, t: &Trace) -> Vec<String> {
    let mut why: Vec<String> = Vec::new();
    let mut say = |r: &str| {
        if !why.iter().any(|w| w == r) {
            why.push(r.to_string());
        }
    };
    if m.db.is_none() && m.redis.is_empty() {
        say("the model uses neither a database nor Redis: nothing runs on a server");
    }
    if let Some(db) = &m.db {
        if db
            .tables
            .iter()
            .any(|t| t.columns.iter().any(|c| c.ty == ColumnType::Timestamp))
        {
            say("a timestamp column: model time is not the server's clock");
        }
    }
    for step in &t.steps {
        let reason = match step.choice {
            Choice::Fault { fault, .. } => match m.faults[fault as usize].kind {
                FaultKind::Crash | FaultKind::Pause { .. } | FaultKind::Hang => None,
                FaultKind::LostReply => Some("a lost reply: the server cannot be made to lose one"),
                _ => Some("a clock fault"),
            },
            Choice::Partition { .. } => {
                Some("a partition: the replay cannot cut a real server off from its clients")
            }
            Choice::ServerFault { fault } => match m.faults[fault as usize].kind {
                FaultKind::Restart { down, .. } if down > 0 => {
                    Some("a restart kept down: the real server is restarted and back at once")
                }
                FaultKind::Restart { server, .. } if m.redis[server as usize].replicas == 0 => None,
                FaultKind::Restart { .. } => {
                    Some("a restart of a server with replicas: the real one has none to empty")
                }
                _ => Some("a clock fault"),
            },
            Choice::Drift { .. } => Some("a clock fault"),
            Choice::Failover { .. } => {
                Some("a failover: when a write reaches a real replica is not the model's choice")
            }
            Choice::Pass(_) | Choice::Restart(_) => Some("a simulation's step (pass, restart)"),
            _ => None,
        };
        if let Some(r) = reason {
            say(r);
        }
        for e in &step.events {
            match e {
                Event::Redis {
                    cmd: RedisCmd::GetReplica { .. } | RedisCmd::Wait { .. },
                    ..
                } => say("a replica read or WAIT: when a write reaches a real replica is not the model's choice"),
                Event::Sql { stmt, .. }
                    if crate::trace::describe::sql_text(stmt).to_ascii_lowercase().contains("now()") =>
                {
                    say("`now()` in SQL: model time is not the server's clock");
                }
                _ => {}
            }
        }
    }
    why
}

/// Replays `t` (a trace of `m`) on the servers `opts` names.
///
/// # Errors
/// The server cannot be reached, or refused the schema or a setting: nothing was compared.
pub fn run(m: &Model, t: &Trace, opts: &Options) -> Result<Report, String> {
    driver::Driver::start(m, opts)?.replay(t)
}
