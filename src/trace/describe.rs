//! Words for events: what the acting process did, and what changed in the world.

use super::Step;
use crate::exec::observe::{Event, Reply};
use crate::exec::Choice;
use crate::ir::{Model, RedisCmd, SqlStmt};
use crate::world::process::Wait;
use crate::ir::value::{Pid, Value};

/// One step in words.
pub struct Described {
    /// The acting process; `None` for the environment (time, faults).
    pub actor: Option<Pid>,
    /// The model line of its visible operation (none for time and faults).
    pub line: Option<usize>,
    /// What it did, phrase by phrase (`SET lock 1 NX PX 1000 → 'OK'`, `work 100ms`).
    pub doing: Vec<String>,
    /// What changed in the world, phrase by phrase (`sku#1 stock=4`, `⌛ lock expired`).
    pub world: Vec<String>,
    /// What needs a line of its own under the step: a deadlock's cycle, victim and reason.
    pub wide: Vec<String>,
    /// Whether nothing a reader follows changed: no world change, no fault, no wait, no
    /// lock taken or given, no write, no end (a failed `SET NX`, a read, a sleep, time).
    pub quiet: bool,
}

impl Described {
    /// What it did, in one phrase.
    #[must_use]
    pub fn doing_text(&self) -> String {
        self.doing.join("; ")
    }

    /// What changed, in one phrase (with the lines of their own).
    #[must_use]
    pub fn world_text(&self) -> String {
        let all: Vec<&str> = self.world.iter().chain(&self.wide).map(String::as_str).collect();
        all.join(", ")
    }
}

/// The step in words.
pub fn describe(m: &Model, step: &Step) -> Described {
    let actor = step.choice.actor();
    let mut line = None;
    let mut doing: Vec<String> = Vec::new();
    let mut world: Vec<String> = Vec::new();
    let mut wide: Vec<String> = Vec::new();
    for e in &step.events {
        match e {
            Event::At { span } => line = Some(m.line_of(*span)),
            Event::Woke { .. } => {}
            Event::Sql {
                stmt,
                reply,
                locals,
            } => {
                let text = actor.map_or_else(
                    || sql_text(stmt).to_string(),
                    |p| with_locals(m, p, sql_text(stmt), locals, literal),
                );
                doing.push(sql(&text, reply, m));
            }
            Event::Redis {
                server,
                cmd,
                arg,
                reply,
            } => {
                let on = on(m, *server);
                doing.push(format!("{}{on} → {}", redis(m, cmd, *arg), m.show(reply)));
            }
            Event::Waits { holder, .. } => {
                let who = holder.map_or(String::new(), |h| format!(" for {}", m.process_name(h)));
                match doing.last_mut() {
                    Some(last) => last.push_str(&format!(" → waits{who}")),
                    None => doing.push(format!("waits{who}")),
                }
            }
            Event::Lock { mutex } => doing.push(format!("lock {}", m.mutexes[*mutex as usize])),
            Event::Unlock { mutex } => {
                doing.push(format!("unlock {}", m.mutexes[*mutex as usize]));
            }
            Event::SetGhost { ghost, value } => {
                world.push(format!("{} = {value}", m.ghosts[*ghost as usize].name));
            }
            Event::Delay { work, ticks, upto } => {
                let verb = if *work { "work" } else { "sleep" };
                let len = if upto > ticks {
                    format!("{}..{}", ms(m, u64::from(*ticks)), ms(m, u64::from(*upto)))
                } else {
                    ms(m, u64::from(*ticks))
                };
                doing.push(format!("{verb} {len}"));
            }
            Event::ReplyLost { pid } => doing.push(format!(
                "⚡ the reply misses {}'s timeout → 'TIMEOUT'",
                m.process_name(*pid)
            )),
            Event::Drift { pid, by } => doing.push(format!(
                "⚡ {}'s clock drifts {}{}",
                m.process_name(*pid),
                if *by >= 0 { "+" } else { "-" },
                ms(m, u64::from(by.unsigned_abs()))
            )),
            Event::Picked { local, value } => {
                let name = actor.map_or("?", |a| m.program(a).locals[*local as usize].as_str());
                doing.push(format!("pick ${name} = {value}"));
            }
            Event::Restarted { pid } => {
                doing.push(format!("{} starts its next request", m.process_name(*pid)));
            }
            Event::EndedEarly { pid } => {
                doing.push(format!("{} finishes early", m.process_name(*pid)));
            }
            Event::Finished { outcome: None } => doing.push("done".into()),
            Event::Finished { outcome: Some(o) } => {
                doing.push(format!("return '{}'", m.symbol(*o)));
            }
            Event::Uncaught { code } => {
                doing.push(format!("fails: uncaught ERROR {}", m.symbol(*code)));
            }
            Event::Failed(e) => doing.push(format!("runtime error: {}", e.message())),
            Event::RowCommitted { table, key, values } => {
                world.push(row_values(m, *table, *key, values.as_deref()));
            }
            Event::RowLocked { table, key } => {
                let who = actor.map_or(String::new(), |a| format!(" by {}", m.process_name(a)));
                world.push(format!("{} locked{who}", row_name(m, *table, *key)));
            }
            Event::Aborted { pid } => {
                world.push(format!(
                    "{}'s transaction rolled back",
                    m.process_name(*pid)
                ));
            }
            Event::Granted { pid, wait } => {
                world.push(format!(
                    "{} → {}",
                    wait_name(m, *wait),
                    m.process_name(*pid)
                ));
            }
            Event::KeySet {
                server,
                key,
                value,
                ttl,
            } => {
                let ttl = ttl.map_or(String::new(), |t| {
                    format!(" (expires in {})", ms(m, u64::from(t)))
                });
                world.push(format!(
                    "{}{} = {}{ttl}",
                    at(m, *server),
                    m.symbol(*key),
                    m.show(value)
                ));
            }
            Event::Watchdog { key, running } => doing.push(format!(
                "watchdog {} {}",
                if *running { "starts on" } else { "stops on" },
                m.symbol(*key)
            )),
            Event::Renewal {
                pid, key, renewed, ..
            } => doing.push(if *renewed {
                format!(
                    "{}'s watchdog renews {}",
                    m.process_name(*pid),
                    m.symbol(*key)
                )
            } else {
                format!(
                    "{}'s watchdog finds {} not held by {0}: stops",
                    m.process_name(*pid),
                    m.symbol(*key)
                )
            }),
            Event::Paused { pid, paused: true } => {
                doing.push(format!(
                    "⚡ {} pauses (stop-the-world)",
                    m.process_name(*pid)
                ));
            }
            Event::Paused { pid, paused: false } => {
                doing.push(format!("▶ {} resumes, unaware", m.process_name(*pid)));
            }
            Event::Hung { pid } => {
                doing.push(format!(
                    "⚡ {} hangs (connections stay open)",
                    m.process_name(*pid)
                ));
            }
            Event::Replicated { node, key } => world.push(format!(
                "{} replicates {}",
                node_name(m, *node),
                m.symbol(*key)
            )),
            Event::ClockJump {
                server,
                replica,
                by,
            } => doing.push(format!("⚡ {}", jumped(m, *server, *replica, *by))),
            Event::ServerRestarted { server, lost, down } => {
                let back = if *down == 0 {
                    String::new()
                } else {
                    format!("; down for {}", passed(m, u64::from(*down)))
                };
                doing.push(format!(
                    "⚡ {} restarts without persistence: {}{back}",
                    m.redis[*server as usize].name,
                    lost_keys(m, lost)
                ));
            }
            Event::Partitioned { server, in_flight } => doing.push(format!(
                "⚡ the clients lose their path to {}{}",
                m.redis[*server as usize].name,
                if *in_flight {
                    " while a request is on its way"
                } else {
                    ""
                }
            )),
            Event::Reachable { server } => world.push(format!(
                "{} is reachable again",
                m.redis[*server as usize].name
            )),
            Event::Unreached {
                pid,
                server,
                refused,
            } => doing.push(format!(
                "⚡ {}'s request does not reach {} → {}",
                m.process_name(*pid),
                m.redis[*server as usize].name,
                if *refused { "'REFUSED'" } else { "'TIMEOUT'" }
            )),
            Event::Failover { server, promoted } => doing.push(format!(
                "⚡ {}'s primary fails; Sentinel promotes {}",
                m.redis[*server as usize].name,
                node_name(m, *promoted)
            )),
            Event::KeyTtl { server, key, ttl } => world.push(format!(
                "{}{} expires in {}",
                at(m, *server),
                m.symbol(*key),
                ms(m, u64::from(*ttl))
            )),
            Event::KeyDeleted { server, key } => {
                world.push(format!("{}{} deleted", at(m, *server), m.symbol(*key)));
            }
            Event::KeyExpired { server, key } => {
                world.push(format!("⌛ {}{} expired", at(m, *server), m.symbol(*key)));
            }
            Event::TimePasses { ticks: 0 } => doing.push(format!(
                "time moves 1ms past the deadline (now just after {})",
                ms(m, step.time)
            )),
            Event::TimePasses { ticks } => doing.push(format!(
                "time passes {} (now {})",
                ms(m, u64::from(*ticks)),
                ms(m, step.time)
            )),
            Event::Deadlock { cycle, victim } => {
                let waits: Vec<String> = cycle
                    .iter()
                    .map(|e| {
                        format!(
                            "{} waits for {} ← held by {}",
                            m.process_name(e.waiter),
                            wait_name(m, e.wait),
                            m.process_name(e.holder)
                        )
                    })
                    .collect();
                wide.push(format!(
                    "deadlock: {}; victim: {} ({})",
                    waits.join("; "),
                    m.process_name(*victim),
                    victim_reason(m, step, *victim)
                ));
            }
            Event::Interrupted { pid, code } => world.push(format!(
                "{}'s statement fails: ERROR {}",
                m.process_name(*pid),
                m.symbol(*code)
            )),
            Event::Crashed { pid } => doing.push(format!("⚡ {} crashes", m.process_name(*pid))),
        }
    }
    match step.choice {
        Choice::Check(p) => doing.insert(
            0,
            format!(
                "{}'s deadlock_timeout ends: it checks for a cycle",
                m.process_name(p)
            ),
        ),
        Choice::Timeout(p) => {
            doing.insert(0, format!("{}'s lock wait times out", m.process_name(p)));
        }
        _ => {}
    }
    if doing.is_empty() && world.is_empty() {
        if let Choice::Fault { .. } = step.choice {
            // A fault that shows only later (a reply to be lost): name it where it is chosen.
            doing.push(format!("⚡ {}", super::token::name(m, step.choice, 0)));
        }
    }
    let quiet = world.is_empty() && step.events.iter().all(is_quiet);
    Described {
        actor,
        line,
        doing,
        world,
        wide,
        quiet,
    }
}

/// Whether an event changes nothing a reader follows (with no world phrase besides).
fn is_quiet(e: &Event) -> bool {
    match e {
        Event::At { .. } | Event::Woke { .. } | Event::Delay { .. } | Event::TimePasses { .. } => {
            true
        }
        Event::Redis { cmd, .. } => !matches!(cmd, RedisCmd::Wait { .. }),
        Event::Sql { stmt, reply, .. } => {
            matches!(stmt, SqlStmt::Select { lock: None, .. })
                && !matches!(reply, Reply::Error(_))
        }
        _ => false,
    }
}

/// Why the engine rolled back this member of a wait-for cycle.
fn victim_reason(m: &Model, step: &Step, victim: Pid) -> String {
    let flavour = m.db.as_ref().map(|d| d.flavour);
    match (flavour, step.choice) {
        (Some(crate::ir::Flavour::Postgres), Choice::Check(p)) if p == victim => {
            "PostgreSQL: its deadlock_timeout ended first, and the waiter whose check finds \
             the cycle aborts itself, PG-28"
                .into()
        }
        (Some(crate::ir::Flavour::Postgres), _) => {
            "PostgreSQL: the waiter whose check finds the cycle aborts itself, PG-28".into()
        }
        _ => "InnoDB rolls back the lighter transaction: fewer rows changed and locked, MY-20"
            .into(),
    }
}

/// A statement's text with each `$name` the value the process's local had when it ran,
/// written by `show` (a SQL literal for a server; the trace's own words for a reader).
pub(crate) fn with_locals(
    m: &Model,
    pid: Pid,
    written: &str,
    locals: &[Value],
    show: fn(&Model, Value) -> String,
) -> String {
    let names = &m.program(pid).locals;
    let mut out = String::with_capacity(written.len());
    let mut rest = written;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..len];
        match names.iter().position(|n| n == name) {
            Some(i) if i < locals.len() => out.push_str(&show(m, locals[i])),
            _ => {
                out.push('$');
                out.push_str(name);
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// A value as a SQL literal.
pub(crate) fn literal(m: &Model, v: Value) -> String {
    match v {
        Value::Nil => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => if b { "TRUE" } else { "FALSE" }.into(),
        Value::Str(s) => format!("'{}'", m.symbol(s).replace('\'', "''")),
        Value::Pid(p) => format!("'{}'", m.process_name(p)),
    }
}

/// A statement as written (`BEGIN`, `COMMIT`, `ROLLBACK` for those).
pub(crate) fn sql_text(stmt: &SqlStmt) -> &str {
    match stmt {
        SqlStmt::Begin { .. } => "BEGIN",
        SqlStmt::Commit => "COMMIT",
        SqlStmt::Rollback => "ROLLBACK",
        SqlStmt::Select { text, .. }
        | SqlStmt::Update { text, .. }
        | SqlStmt::Insert { text, .. }
        | SqlStmt::Delete { text, .. } => text,
    }
}

fn sql(text: &str, reply: &Reply, m: &Model) -> String {
    match reply {
        Reply::None => text.to_string(),
        Reply::Tag(tag) => format!("{text} → {tag}"),
        Reply::Error(r) => format!("{text} → ERROR {}", m.symbol(r.code)),
        Reply::Count(n) => format!("{text} → {n} row{}", if *n == 1 { "" } else { "s" }),
        Reply::Rows(rows) if rows.is_empty() => format!("{text} → no row"),
        Reply::Rows(rows) => {
            let shown: Vec<String> = rows.iter().map(|r| tuple(m, r)).collect();
            format!("{text} → {}", shown.join(" "))
        }
    }
}

fn tuple(m: &Model, r: &[Value]) -> String {
    let vals: Vec<String> = r.iter().map(|v| m.show(v)).collect();
    if vals.len() == 1 {
        vals[0].clone()
    } else {
        format!("({})", vals.join(", "))
    }
}

pub(super) fn redis(m: &Model, cmd: &RedisCmd, arg: Value) -> String {
    match cmd {
        RedisCmd::Set { key, nx, px, ex, .. } => {
            let mut s = format!("SET {} {}", m.symbol(*key), m.show(&arg));
            if *nx {
                s.push_str(" NX");
            }
            match px.map(|t| u64::from(t) * m.tick_ms) {
                Some(ms) if *ex => s.push_str(&format!(" EX {}", ms / 1000)),
                Some(ms) => s.push_str(&format!(" PX {ms}")),
                None => {}
            }
            s
        }
        RedisCmd::Get { key } => format!("GET {}", m.symbol(*key)),
        RedisCmd::GetReplica { key, replica } => {
            format!("GET {} (replica {replica})", m.symbol(*key))
        }
        RedisCmd::Del { key } => format!("DEL {}", m.symbol(*key)),
        RedisCmd::Pexpire { key, ttl } => {
            format!("PEXPIRE {} {}", m.symbol(*key), u64::from(*ttl) * m.tick_ms)
        }
        RedisCmd::Pttl { key } => format!("PTTL {}", m.symbol(*key)),
        RedisCmd::Incr { key } => format!("INCR {}", m.symbol(*key)),
        RedisCmd::Wait { replicas, timeout } => {
            format!("WAIT {replicas} {}", u64::from(*timeout) * m.tick_ms)
        }
    }
}

/// `sku#1`: a row by its table and primary key.
pub fn row_name(m: &Model, table: u16, key: Value) -> String {
    let db = m.db.as_ref().expect("rows exist only with a db");
    format!("{}#{}", db.tables[table as usize].name, m.show(&key))
}

fn row_values(m: &Model, table: u16, key: Value, values: Option<&[Value]>) -> String {
    let db = m.db.as_ref().expect("rows exist only with a db");
    let t = &db.tables[table as usize];
    let Some(values) = values else {
        return format!("{} deleted", row_name(m, table, key));
    };
    let cols: Vec<String> = t
        .columns
        .iter()
        .enumerate()
        .filter(|&(c, _)| c != t.pk)
        .map(|(c, col)| format!("{}={}", col.name, m.show(&values[c])))
        .collect();
    format!("{} {}", row_name(m, table, key), cols.join(" "))
}

/// What a wait is for: `sku#1`, `mutex m on app`, `await`.
pub fn wait_name(m: &Model, w: Wait) -> String {
    match w {
        Wait::Row { table, key, .. } => row_name(m, table, key),
        Wait::Mutex(l) => {
            let n = m.mutexes.len().max(1);
            let (inst, mutex) = (l as usize / n, l as usize % n);
            format!("mutex {} on {}", m.mutexes[mutex], m.instances[inst])
        }
        Wait::Gap { table, key } => format!("the gap where {} goes", row_name(m, table, key)),
        Wait::Replicas { server, need } => {
            format!("{need} replica(s) of {}", m.redis[server as usize].name)
        }
        Wait::Await { key } => format!("key {}", m.symbol(key)),
    }
}

/// Ticks as milliseconds: `300ms`, `2s`.
/// How long a `tick` lets pass, as written: a tick that only moves past a deadline (RS-2:
/// a key goes 1 ms after it) is `1ms`.
pub fn passed(m: &Model, ticks: u64) -> String {
    if ticks == 0 {
        "1ms".into()
    } else {
        ms(m, ticks)
    }
}

pub fn ms(m: &Model, ticks: u64) -> String {
    let v = ticks * m.tick_ms;
    if v >= 1000 && v % 1000 == 0 {
        format!("{}s", v / 1000)
    } else {
        format!("{v}ms")
    }
}

/// A Redis node by server and position: `cache` for a primary as declared, `cache/replica1`.
pub(super) fn node_name(m: &Model, node: u16) -> String {
    let mut base = 0usize;
    for r in &m.redis {
        let n = 1 + r.replicas as usize;
        if (node as usize) < base + n {
            let i = node as usize - base;
            return if i == 0 {
                r.name.clone()
            } else {
                format!("{}/replica{i}", r.name)
            };
        }
        base += n;
    }
    format!("node{node}")
}

/// ` on n1` after a command, when the model has several servers.
fn on(m: &Model, server: u16) -> String {
    if m.redis.len() > 1 {
        format!(" on {}", m.redis[server as usize].name)
    } else {
        String::new()
    }
}

/// `n1:` before a key, when the model has several servers.
pub(super) fn at(m: &Model, server: u16) -> String {
    if m.redis.len() > 1 {
        format!("{}:", m.redis[server as usize].name)
    } else {
        String::new()
    }
}

/// How a finished process ended, in a few words: `returned 'sold'`, `error 40001`.
pub fn finished_name(m: &Model, status: crate::world::process::Status) -> String {
    use crate::world::process::Status;
    match status {
        Status::Done(Some(outcome)) => format!("returned '{}'", m.symbol(outcome)),
        Status::Done(None) => "returned".into(),
        Status::Errored(code) => format!("error {}", m.symbol(code)),
        Status::Failed(_) => "a runtime error".into(),
        Status::Crashed => "crashed".into(),
        Status::Hung => "hung".into(),
        _ => "running".into(),
    }
}

/// `n3's clock jumps 2s forward`, `cache's replica 1 has its clock jump 2s back`.
#[must_use]
pub fn jumped(m: &Model, server: u16, replica: u8, by: i32) -> String {
    let name = &m.redis[server as usize].name;
    let way = if by < 0 { "back" } else { "forward" };
    let step = ms(m, u64::from(by.unsigned_abs()));
    match replica {
        0 => format!("{name}'s clock jumps {step} {way}"),
        k => format!("{name}'s replica {k} has its clock jump {step} {way}"),
    }
}

/// `every key is gone (lock, token)`, or `it had no key`.
fn lost_keys(m: &Model, lost: &[crate::ir::value::Sym]) -> String {
    if lost.is_empty() {
        return "it had no key".into();
    }
    let names: Vec<&str> = lost.iter().map(|k| m.symbol(*k)).collect();
    format!("every key is gone ({})", names.join(", "))
}
