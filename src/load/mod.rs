//! `interlock load`: the model's processes as real concurrent clients of a real PostgreSQL or
//! MySQL/MariaDB server — one thread and one connection each, the model's tables and rows in a
//! scratch database — measured with `simulate`'s figures. No second semantics: each process's
//! local code runs by the engine's rules (`exec::remote`), its statements on the server; the
//! final rows, read back, are checked against the model's properties.

mod client;
mod render;
mod watch;

pub(crate) use render::{json, text};

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::explore::Failure;
use crate::ir::workload::Arrival;
use crate::ir::{ColumnType, Flavour, Model, OpKind, Value};
use crate::replay::statement;
use crate::servers::{Kind, Scratch};
use crate::sim::tally::Tally;
use crate::world::shared::Shared as Cow;
use crate::world::{db::Db, State};

/// How to load the server.
#[derive(Clone, Debug)]
pub struct Options {
    /// `postgres://user@host:port/db` or `mysql://user@host:port/`.
    pub sql: String,
    /// At most this many clients (threads, connections) at once; `None`: one per process.
    pub clients: Option<usize>,
    /// No request starts after this many milliseconds (closed-loop groups repeat until then).
    pub duration_ms: u64,
    /// Real time per model time, for `work`, `sleep` and think times.
    pub time_scale: f64,
    /// The seed of the clients' draws (delays, `pick`).
    pub seed: u64,
}

/// What a load run measured.
#[derive(Clone, Debug)]
pub struct Load {
    /// The figures, every duration in microseconds; `time` is the run's wall time.
    pub tally: Tally,
    /// `PostgreSQL 15.18`, `10.11.19-MariaDB…`.
    pub server: String,
    /// Clients that ran at once.
    pub clients: usize,
    /// The server's own counters over the run: (name, increase).
    pub counters: Vec<(String, i64)>,
    /// The properties the final state breaks, by name.
    pub broken: Vec<String>,
    /// The properties checked on the final state.
    pub checked: Vec<String>,
    /// What the reader should know about what was and was not measured.
    pub notes: Vec<String>,
}

/// Why the model cannot run under load, if it cannot: said before anything runs.
#[must_use]
pub fn cannot(m: &Model) -> Vec<String> {
    let mut why = Vec::new();
    if m.db.is_none() {
        why.push("the model has no database: load runs SQL clients".to_string());
    }
    if !m.redis.is_empty() {
        why.push("Redis commands: load runs SQL clients only (not built yet)".to_string());
    }
    if !m.mutexes.is_empty() {
        why.push("an in-process mutex: load runs SQL clients only (not built yet)".to_string());
    }
    let ops = m.groups.iter().flat_map(|g| &g.program.ops);
    if ops
        .clone()
        .any(|o| matches!(o.kind, OpKind::WatchdogStart { .. }))
    {
        why.push("a watchdog: load runs SQL clients only".to_string());
    }
    if (0..m.groups.len()).any(|g| matches!(m.workload.arrival(g), Arrival::Open { .. })) {
        why.push("an open arrival stream (`arrive`): load runs processes and closed loops".into());
    }
    if m.db.as_ref().is_some_and(|db| {
        db.tables
            .iter()
            .any(|t| t.columns.iter().any(|c| c.ty == ColumnType::Timestamp))
    }) {
        why.push("a timestamp column: model time is not the server's clock".to_string());
    }
    why
}

/// Runs every process of `m` as a client of the server `opts` names, and measures.
///
/// # Errors
/// The model cannot run under load (see [`cannot`]), the server cannot be reached or refused
/// the schema, or a client's connection failed.
pub fn run(m: &Model, opts: &Options) -> Result<Load, String> {
    let why = cannot(m);
    if !why.is_empty() {
        return Err(format!("cannot load this model: {}", why.join("; ")));
    }
    let db = m.db.as_ref().expect("checked: a database");
    let kind = if db.flavour == Flavour::Postgres {
        Kind::Postgres
    } else {
        Kind::Mysql
    };
    let name = format!("interlock_load_{}", std::process::id());
    let mut scratch = Scratch::create(kind, &opts.sql, &name)?;
    let full = scratch.version();
    let server = full.split(" (").next().unwrap_or(&full).to_string();
    let mariadb = full.contains("MariaDB");
    for t in &db.tables {
        for sql in statement::schema(m, t, db.flavour) {
            if let Some(e) = scratch.execute(&sql)?.error {
                return Err(format!("the server refused `{sql}`: {e}"));
            }
        }
    }
    let n = m.processes.len();
    let clients = opts.clients.unwrap_or(n).clamp(1, n.max(1));
    let settings = statement::settings(m, opts.time_scale, mariadb);
    let conns = (0..clients)
        .map(|_| scratch.client(&settings))
        .collect::<Result<Vec<_>, String>>()?;
    let mut watcher = scratch.watcher()?;
    let before = watcher.counters()?;
    let slots: Arc<Vec<watch::Slot>> =
        Arc::new((0..clients).map(|_| watch::Slot::default()).collect());
    let watching = watch::Watch::start(scratch.watcher()?, Arc::clone(&slots))?;
    let start = Instant::now();
    let shared = client::Shared {
        m,
        plan: crate::sim::program::Plan::new(m),
        ghosts: Mutex::new(m.ghosts.iter().map(|g| g.init).collect()),
        next: AtomicUsize::new(0),
        until: start + Duration::from_millis(opts.duration_ms),
        tick: Duration::from_secs_f64(m.tick_ms as f64 * opts.time_scale / 1000.0),
        slots,
        pools: m
            .workload
            .pools
            .iter()
            .map(|p| (Mutex::new(usize::from(p.size)), Condvar::new()))
            .collect(),
        seed: opts.seed,
        finals: Mutex::new(vec![None; n]),
    };
    let results: Vec<Result<client::Measured, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, conn)| {
                let shared = &shared;
                scope.spawn(move || client::run(shared, i, conn))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a client thread panicked".into()))
            })
            .collect()
    });
    let wall = start.elapsed();
    watching.finish()?;
    let mut tally = Tally::new(m.groups.len(), m.mutexes.len());
    for r in results {
        tally.merge(&r?.tally);
    }
    tally.time = u64::try_from(wall.as_micros()).unwrap_or(u64::MAX);
    tally.runs = 1;
    std::thread::sleep(Duration::from_millis(1100)); // PostgreSQL's statistics reach the view
    let after = watcher.counters()?;
    let counters = after
        .iter()
        .map(|(k, v)| {
            let was = before.iter().find(|(b, _)| b == k).map_or(0, |(_, b)| *b);
            (k.clone(), v - was)
        })
        .collect();
    let ghosts = shared
        .ghosts
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    let finals = shared
        .finals
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    let end = final_state(m, &mut scratch, ghosts, finals)?;
    let mut failures = Vec::new();
    crate::explore::check(m, &end, &mut failures);
    Ok(Load {
        tally,
        server,
        clients,
        counters,
        broken: failures.iter().map(|f: &Failure| f.name(m)).collect(),
        checked: m
            .properties
            .iter()
            .filter(|p| !p.kind.is_liveness())
            .map(|p| p.name.clone())
            .collect(),
        notes: notes(m, kind, mariadb, clients),
    })
}

/// The state after the run: the server's rows, the ghosts, and each process as it ended.
fn final_state(
    m: &Model,
    scratch: &mut Scratch,
    ghosts: Vec<i64>,
    finals: Vec<Option<crate::world::process::Proc>>,
) -> Result<State, String> {
    let db = m.db.as_ref().expect("a database");
    let mut tables = Vec::new();
    for t in &db.tables {
        let sql = statement::select_all(t);
        let out = scratch.execute(&sql)?;
        if let Some(e) = out.error {
            return Err(format!("reading the final rows, `{sql}`: {e}"));
        }
        let rows = out
            .rows
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.into_iter().map(|c| client::value(m, &sql, c)).collect())
            .collect::<Result<Vec<Vec<Value>>, String>>()?;
        tables.push((t.pk, rows));
    }
    let mut s = State::initial(m);
    s.db = Cow::new(Db::new(tables));
    s.ghosts = ghosts;
    for (p, end) in s.procs.iter_mut().zip(finals) {
        if let Some(end) = end {
            *p = end.into();
        }
    }
    Ok(s)
}

fn notes(m: &Model, kind: Kind, mariadb: bool, clients: usize) -> Vec<String> {
    let mut out = vec![format!(
        "{clients} clients, one connection and one thread each; durations are wall-clock time"
    )];
    out.push(match kind {
        Kind::Postgres => "lock waits: sampled every 2 ms from pg_stat_activity \
                           (wait_event_type = 'Lock'); a wait's time is its statement's"
            .to_string(),
        Kind::Mysql => "lock waits: sampled every 2 ms from SHOW ENGINE INNODB STATUS; a wait's \
                        time is its statement's; InnoDB's own counters below"
            .to_string(),
    });
    if m.db.as_ref().is_some_and(|d| d.flavour == Flavour::Mysql) && mariadb {
        out.push("the mysql flavour run on MariaDB".to_string());
    }
    if !m.faults.is_empty() {
        out.push("faults are not injected under load".to_string());
    }
    if m.workload.db_workers.is_some() {
        out.push(
            "`db workers` is the simulated server's capacity: the real server has its own".into(),
        );
    }
    if !m.workload.pools.is_empty() {
        out.push("each pool's size bounds the transactions open at once, as a pool does".into());
    }
    out.push("the properties are checked on the final rows only, not at every step".to_string());
    out
}
