//! The replay's loop: each step's events, in order, turned into what a client sends, and
//! each answer set beside the simulation's.

use std::time::Duration;

use super::compare::{self, agree};
use super::redis::RedisSide;
use super::statement;
use super::{Line, Options, Report};
use crate::exec::observe::{Event, Refusal, Reply};
use crate::exec::Choice;
use crate::ir::{FaultKind, Flavour, Model, Pid, RedisCmd, SqlStmt, Sym, Value};
use crate::servers::{Cell, Kind, Outcome, Scratch, Session, Step};
use crate::trace::Trace;

/// The watchdog's renewal script (Redisson's, in substance): renew only one's own key.
const RENEW: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
                     return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/// How long a statement may take before it counts as waiting, when the server does not say.
const STEP_LIMIT: Duration = Duration::from_secs(3);
/// How long a waiter whose lock the simulation granted may take to get its answer.
const GRANT_LIMIT: Duration = Duration::from_secs(5);

/// Where a process's connection stands.
#[derive(Debug)]
enum Conn {
    /// No statement outstanding.
    Idle,
    /// A statement the server has not answered yet (it waits).
    Pending,
    /// The server answered a statement the simulation has not answered yet in the trace.
    Answered(Outcome),
    /// Its interrupted wait was compared; the next SQL error event is that answer again.
    Compared,
}

pub struct Driver<'m> {
    m: &'m Model,
    flavour: Flavour,
    /// Whose words an error message is compared with: the flavour's, or MariaDB's for the
    /// mysql flavour replayed on MariaDB.
    words: Flavour,
    scratch: Option<Scratch>,
    redis: Option<RedisSide>,
    sessions: Vec<Option<Session>>,
    conns: Vec<Conn>,
    lines: Vec<Line>,
    notes: Vec<String>,
    scale: f64,
    /// How long a wait the simulation ends by a timeout or a deadlock check may take.
    timed_limit: Duration,
    /// Model time 0 in real time: a tick sleeps until its model time, scaled, so that the
    /// replay's own time does not add up.
    origin: std::time::Instant,
    /// How long past a model deadline a tick waits, so that a key whose TTL ends at that
    /// moment has expired on the server too (Redis expires a key only once its deadline has
    /// passed); a quarter of a tick, at most 20 ms.
    margin: Duration,
}

impl<'m> Driver<'m> {
    /// Connects, creates the scratch database with the model's tables and rows, opens one
    /// session per process, and clears the Redis key prefix.
    pub fn start(m: &'m Model, opts: &Options) -> Result<Self, String> {
        static REPLAYS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = REPLAYS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("interlock_replay_{}_{n}", std::process::id());
        let mut notes = Vec::new();
        let (scratch, sessions, (flavour, words)) = match &m.db {
            None => (None, Vec::new(), (Flavour::Postgres, Flavour::Postgres)),
            Some(db) => {
                let url = opts
                    .sql
                    .as_deref()
                    .ok_or("the model has a database: give its server")?;
                let (scratch, sessions, words) =
                    sql_side(m, url, &name, opts.time_scale, &mut notes)?;
                (Some(scratch), sessions, (db.flavour, words))
            }
        };
        let redis = if m.redis.is_empty() {
            None
        } else {
            let url = opts
                .redis
                .as_deref()
                .ok_or("the model uses Redis: give its server (--redis)")?;
            notes.push(format!(
                "redis: keys under `{name}:`, one prefix per server of the model"
            ));
            let pad = 2 * margin(m, opts.time_scale).as_millis() as u64;
            notes.push(format!(
                "redis: every TTL is sent {pad} ms longer, so that a key is still there at its \
                 deadline when the replay arrives a little late (RS-2)"
            ));
            let mut side = RedisSide::open(url, format!("{name}:"), opts.time_scale, pad)?;
            side.seed(m)?;
            Some(side)
        };
        let longest = m.db.as_ref().map_or(0, |db| {
            let s = &db.settings;
            [
                s.lock_timeout,
                s.deadlock_timeout,
                s.innodb_lock_wait_timeout,
            ]
            .into_iter()
            .flatten()
            .max()
            .map_or(50_000, |t| u64::from(t) * m.tick_ms)
        });
        let timed_limit = Duration::from_millis((longest as f64 * opts.time_scale) as u64)
            + Duration::from_secs(5);
        Ok(Driver {
            m,
            flavour,
            words,
            scratch,
            redis,
            sessions,
            conns: m.processes.iter().map(|_| Conn::Idle).collect(),
            lines: Vec::new(),
            notes,
            scale: opts.time_scale,
            timed_limit,
            origin: std::time::Instant::now(),
            margin: margin(m, opts.time_scale),
        })
    }

    /// Drives every step of `t`, stopping at the first line where the server disagrees, then
    /// compares the tables' final rows.
    pub fn replay(mut self, t: &Trace) -> Result<Report, String> {
        self.origin = std::time::Instant::now();
        'steps: for (i, step) in t.steps.iter().enumerate() {
            let number = crate::trace::text::number(t, i);
            let past = matches!(step.events.first(), Some(Event::TimePasses { ticks: 0 }));
            self.environment(step.choice, step.time, past)?;
            if let Choice::ServerFault { fault } = step.choice {
                self.restart(&number, fault, &step.events)?;
            }
            let actor = step.choice.actor();
            for (k, e) in step.events.iter().enumerate() {
                let waits = matches!(step.events.get(k + 1), Some(Event::Waits { .. }));
                match e {
                    Event::Sql {
                        stmt,
                        reply,
                        locals,
                    } => {
                        let Some(p) = actor else { continue };
                        self.sql(&number, p, stmt, reply, locals, waits)?;
                    }
                    Event::Interrupted { pid, code } => {
                        self.interrupted(&number, *pid, Refusal::ending_wait(*code))?;
                    }
                    Event::Redis {
                        server,
                        cmd,
                        arg,
                        reply,
                    } => {
                        let who = step.choice.concerns();
                        self.redis_command(&number, who, (*server, cmd, *arg), *reply)?;
                    }
                    Event::Renewal {
                        pid,
                        key,
                        renewed,
                        lease,
                    } => self.renewal(&number, *pid, *key, *renewed, *lease)?,
                    // A PostgreSQL block an error aborted stays open until ROLLBACK (PG-27),
                    // on the server as in the model: nothing to send.
                    Event::Aborted { pid } if step.after.procs[pid.index()].txn.is_none() => {
                        self.rollback(*pid)?;
                    }
                    _ => {}
                }
                if self.lines.last().is_some_and(|l| !l.agree) {
                    break 'steps;
                }
            }
        }
        if self.lines.iter().all(|l| l.agree) {
            self.finals(t)?;
            self.redis_finals(t)?;
        }
        if let Some(r) = &mut self.redis {
            r.clear();
        }
        let server = match self.notes.first() {
            Some(n) if n.starts_with("server: ") => self.notes.remove(0),
            _ => "Redis".into(),
        };
        Ok(Report {
            server: server.trim_start_matches("server: ").to_string(),
            lines: self.lines,
            notes: self.notes,
        })
    }

    /// What the environment does to the clients: time passes (in real time, scaled), a
    /// crash closes the process's connection, a server without replicas that restarts
    /// without persistence loses its keys (its prefix on the real server is emptied).
    fn environment(&mut self, c: Choice, time: u64, past: bool) -> Result<(), String> {
        match c {
            Choice::Tick => {
                let ms = (time * self.m.tick_ms) as f64 * self.scale;
                // At a deadline the replay arrives a margin late, and the TTLs it sends are
                // two margins long: past it, it waits for the padded TTL to run out.
                let late = if past {
                    3 * self.margin + Duration::from_millis(1)
                } else {
                    self.margin
                };
                let target = self.origin + Duration::from_secs_f64(ms / 1000.0) + late;
                std::thread::sleep(target.saturating_duration_since(std::time::Instant::now()));
            }
            Choice::Fault { fault, pid }
                if self.m.faults[fault as usize].kind == FaultKind::Crash =>
            {
                if let Some(s) = self.sessions.get_mut(pid.index()).and_then(Option::take) {
                    s.close();
                }
                self.conns[pid.index()] = Conn::Idle;
            }
            _ => {}
        }
        Ok(())
    }

    /// A server restarting without persistence: its keys on the real server go too, and the
    /// line compares how many there were with how many the simulation lost.
    fn restart(&mut self, number: &str, fault: u16, events: &[Event]) -> Result<(), String> {
        let (FaultKind::Restart { server, .. }, Some(side)) =
            (self.m.faults[fault as usize].kind, self.redis.as_mut())
        else {
            return Ok(());
        };
        let removed = side.forget(self.m, server)?;
        let lost = events
            .iter()
            .find_map(|e| match e {
                Event::ServerRestarted { lost, .. } => Some(lost.len() as u64),
                _ => None,
            })
            .unwrap_or(0);
        let keys = |n: u64| format!("{n} {}", if n == 1 { "key" } else { "keys" });
        self.lines.push(Line {
            number: number.to_string(),
            who: "env".into(),
            statement: format!(
                "restart {} (its keys removed)",
                self.m.redis[server as usize].name
            ),
            simulated: format!("{} lost", keys(lost)),
            server: format!("{} removed", keys(removed)),
            agree: lost == removed,
        });
        Ok(())
    }

    fn session(&mut self, p: Pid) -> Result<&mut Session, String> {
        let name = self.m.process_name(p);
        self.sessions[p.index()]
            .as_mut()
            .ok_or_else(|| format!("{name}'s connection was closed by a crash"))
    }

    fn sql(
        &mut self,
        number: &str,
        p: Pid,
        stmt: &SqlStmt,
        reply: &Reply,
        locals: &[Value],
        waits: bool,
    ) -> Result<(), String> {
        if let SqlStmt::Begin { isolation } = stmt {
            for sql in statement::begin(self.flavour, *isolation) {
                let out = match self.session(p)?.step(&sql, STEP_LIMIT)? {
                    Step::Done(out) => out,
                    Step::Waiting => return Err(format!("`{sql}` did not answer")),
                };
                self.line(number, p, &sql, &Reply::None, Some(&out));
            }
            return Ok(());
        }
        let sql = statement::text(self.m, p, stmt, locals);
        match std::mem::replace(&mut self.conns[p.index()], Conn::Idle) {
            Conn::Compared if matches!(reply, Reply::Error(_)) => Ok(()),
            Conn::Answered(out) => {
                self.line(number, p, &sql, reply, Some(&out));
                Ok(())
            }
            Conn::Pending => {
                let out = self.session(p)?.resume(GRANT_LIMIT)?;
                self.line(number, p, &format!("(resumes) {sql}"), reply, out.as_ref());
                Ok(())
            }
            Conn::Idle | Conn::Compared => {
                let ends = matches!(stmt, SqlStmt::Commit | SqlStmt::Rollback);
                self.issue(number, p, &sql, reply, (waits, ends))
            }
        }
    }

    /// Sends a new statement and sets its answer (or its wait) beside the simulation's.
    /// `ends`: the statement is COMMIT or ROLLBACK, whose answer is no rows and no count.
    fn issue(
        &mut self,
        number: &str,
        p: Pid,
        sql: &str,
        reply: &Reply,
        (waits, ends): (bool, bool),
    ) -> Result<(), String> {
        let got = self.session(p)?.step(sql, STEP_LIMIT)?;
        let unanswered = matches!(reply, Reply::None) && !waits && !ends;
        match got {
            Step::Waiting if waits => {
                self.conns[p.index()] = Conn::Pending;
                self.waits_line(number, p, sql, true);
            }
            // The simulation ends this statement later in the step (a deadlock, at once).
            Step::Waiting if unanswered => self.conns[p.index()] = Conn::Pending,
            Step::Done(out) if unanswered => self.conns[p.index()] = Conn::Answered(out),
            Step::Done(out) if waits => {
                let l = self.line(number, p, sql, reply, Some(&out));
                l.simulated = "waits".into();
                l.agree = false;
            }
            Step::Done(out) => {
                self.line(number, p, sql, reply, Some(&out));
            }
            Step::Waiting => {
                // The simulation answers at once: the server may have been about to.
                let out = self.session(p)?.resume(Duration::from_secs(1))?;
                match out {
                    Some(out) => {
                        self.line(number, p, sql, reply, Some(&out));
                    }
                    None => {
                        self.conns[p.index()] = Conn::Pending;
                        let l = self.line(number, p, sql, reply, None);
                        l.server = "waits".into();
                    }
                }
            }
        }
        Ok(())
    }

    /// The simulation ended `q`'s wait (a deadlock victim, a lock timeout) with `code`.
    fn interrupted(&mut self, number: &str, q: Pid, error: Refusal) -> Result<(), String> {
        let out = match std::mem::replace(&mut self.conns[q.index()], Conn::Compared) {
            Conn::Pending => {
                let limit = self.timed_limit;
                self.session(q)?.resume(limit)?
            }
            Conn::Answered(out) => Some(out),
            Conn::Idle | Conn::Compared => None,
        };
        let l = self.line(
            number,
            q,
            "(its wait ends)",
            &Reply::Error(error),
            out.as_ref(),
        );
        if out.is_none() {
            l.server = "no answer".into();
        }
        Ok(())
    }

    /// A transaction the simulation ended by abort: a client that gives up rolls back.
    fn rollback(&mut self, p: Pid) -> Result<(), String> {
        if !matches!(self.conns[p.index()], Conn::Idle) || self.sessions[p.index()].is_none() {
            return Ok(());
        }
        match self.session(p)?.step("ROLLBACK", STEP_LIMIT)? {
            Step::Done(_) => Ok(()),
            Step::Waiting => Err("ROLLBACK did not answer".into()),
        }
    }

    /// Adds a line comparing `reply` with the server's answer (`None`: it gave none).
    fn line(
        &mut self,
        number: &str,
        p: Pid,
        sql: &str,
        reply: &Reply,
        out: Option<&Outcome>,
    ) -> &mut Line {
        let ordered = sql.to_ascii_lowercase().contains("order by");
        let (mut server, ok) = match out {
            Some(o) => (
                compare::server(o),
                agree(self.m, reply, o, ordered, self.words),
            ),
            None => ("waits".into(), false),
        };
        let mut simulated = compare::simulated(self.m, reply);
        let differ = |o| compare::words_differ(self.m, reply, o, self.words);
        if let Some((ours, theirs)) = out.and_then(differ) {
            (simulated, server) = (ours, theirs);
        }
        self.lines.push(Line {
            number: number.to_string(),
            who: self.m.process_name(p),
            statement: sql.to_string(),
            simulated,
            server,
            agree: ok,
        });
        self.lines.last_mut().expect("just pushed")
    }

    fn waits_line(&mut self, number: &str, p: Pid, sql: &str, server_waits: bool) {
        self.lines.push(Line {
            number: number.to_string(),
            who: self.m.process_name(p),
            statement: sql.to_string(),
            simulated: "waits".into(),
            server: if server_waits { "waits" } else { "answers" }.into(),
            agree: server_waits,
        });
    }

    /// Sends one Redis command and sets its reply beside the simulation's.
    fn redis_command(
        &mut self,
        number: &str,
        who: Option<Pid>,
        (server, cmd, arg): (u16, &RedisCmd, Value),
        reply: Value,
    ) -> Result<(), String> {
        let Some(r) = self.redis.as_mut() else {
            return Err("a Redis command, and no Redis server".into());
        };
        let words = r.words(self.m, server, cmd, arg);
        let got = r.send(&words)?;
        let pttl = matches!(cmd, RedisCmd::Pttl { .. });
        let reply = match reply {
            // The server's milliseconds are the model's, scaled.
            Value::Int(ms) if pttl && ms >= 0 => {
                Value::Int((ms as f64 * self.scale) as i64 + r.pad() as i64)
            }
            v => v,
        };
        let agree = compare::redis_agree(self.m, reply, &got, pttl, r.tolerance());
        self.lines.push(Line {
            number: number.to_string(),
            who: who.map_or_else(|| "env".into(), |p| self.m.process_name(p)),
            statement: shown(&words),
            simulated: compare::redis_simulated(self.m, reply),
            server: compare::redis_server(&got),
            agree,
        });
        Ok(())
    }

    /// A watchdog's renewal, as Redisson's one script: if the key holds the owner's token,
    /// reset its TTL to the lease (1), else 0.
    fn renewal(
        &mut self,
        number: &str,
        pid: Pid,
        key: Sym,
        renewed: bool,
        lease: u32,
    ) -> Result<(), String> {
        let Some(r) = self.redis.as_mut() else {
            return Err("a watchdog renewal, and no Redis server".into());
        };
        let ms = ((u64::from(lease) * self.m.tick_ms) as f64 * self.scale)
            .round()
            .max(1.0);
        let words: Vec<String> = vec![
            "EVAL".into(),
            RENEW.into(),
            "1".into(),
            r.key(self.m, 0, key),
            self.m.process_name(pid),
            (ms as u64).to_string(),
        ];
        let got = r.send(&words)?;
        let want = Value::Int(i64::from(renewed));
        let agree = compare::redis_agree(self.m, want, &got, false, 0);
        self.lines.push(Line {
            number: number.to_string(),
            who: self.m.process_name(pid),
            statement: format!(
                "watchdog: if GET {} = {} then PEXPIRE {} {}",
                self.m.symbol(key),
                self.m.process_name(pid),
                self.m.symbol(key),
                ms as u64
            ),
            simulated: compare::redis_simulated(self.m, want),
            server: compare::redis_server(&got),
            agree,
        });
        Ok(())
    }

    /// Every Redis key at the end: its value on each server's primary, simulated and real.
    fn redis_finals(&mut self, t: &Trace) -> Result<(), String> {
        let Some(r) = self.redis.as_mut() else {
            return Ok(());
        };
        let m = self.m;
        for server in 0..m.redis.len() as u16 {
            let node = &t.end.redis[t.end.node(m, server)];
            let mut names: Vec<crate::ir::Sym> = node.keys.iter().map(|k| k.name).collect();
            for e in t.steps.iter().flat_map(|s| &s.events) {
                if let Event::Redis {
                    server: sv, cmd, ..
                } = e
                {
                    if *sv == server && !names.contains(&cmd.key()) {
                        names.push(cmd.key());
                    }
                }
            }
            names.sort_by_key(|s| m.symbol(*s).to_string());
            for key in names {
                let want = node.get(key).map(|k| super::redis::value_text(m, k.value));
                let real = r.key(m, server, key);
                let got = r.get(&real)?;
                let show =
                    |v: &Option<String>| v.as_ref().map_or("absent".into(), |v| format!("\"{v}\""));
                self.lines.push(Line {
                    number: "end".into(),
                    who: String::new(),
                    statement: format!(
                        "key {} on {}",
                        m.symbol(key),
                        m.redis[server as usize].name
                    ),
                    simulated: show(&want),
                    server: show(&got),
                    agree: want == got,
                });
            }
        }
        Ok(())
    }

    /// Every table's committed rows at the end, simulated and on the server.
    fn finals(&mut self, t: &Trace) -> Result<(), String> {
        let Some(db) = self.m.db.as_ref() else {
            return Ok(());
        };
        for (ti, table) in db.tables.iter().enumerate() {
            let mut want: Vec<Vec<Cell>> = Vec::new();
            for r in 0..t.end.db.rows(ti as u16) {
                if let Some(vals) = t.end.db.row(ti as u16, r).latest() {
                    want.push(vals.iter().map(|&v| compare::cell(self.m, v)).collect());
                }
            }
            let sql = statement::select_all(table);
            let out = self.scratch.as_mut().expect("a database").execute(&sql)?;
            let got = out.rows.clone().unwrap_or_default();
            let key = |rows: &[Vec<Cell>]| {
                let mut k: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
                k.sort();
                k
            };
            self.lines.push(Line {
                number: "end".into(),
                who: String::new(),
                statement: format!("rows of {}", table.name),
                simulated: compare::rows_text(&want),
                server: out
                    .error
                    .as_ref()
                    .map_or_else(|| compare::rows_text(&got), |e| format!("ERROR {}", e.code)),
                agree: out.error.is_none() && key(&got) == key(&want),
            });
        }
        Ok(())
    }
}

/// The SQL side: the scratch database with the model's schema and rows, and one session per
/// process with the model's settings.
fn sql_side(
    m: &Model,
    url: &str,
    name: &str,
    scale: f64,
    notes: &mut Vec<String>,
) -> Result<(Scratch, Vec<Option<Session>>, Flavour), String> {
    let db = m.db.as_ref().expect("a database");
    let kind = if db.flavour == Flavour::Postgres {
        Kind::Postgres
    } else {
        Kind::Mysql
    };
    let mut scratch = Scratch::create(kind, url, name)?;
    let full = scratch.version();
    // `PostgreSQL 15.18 (Debian …) on x86_64 …`: the name and number are enough.
    let version = full.split(" (").next().unwrap_or(&full).to_string();
    let mariadb = full.contains("MariaDB");
    notes.push(format!("server: {version}"));
    let mut words = db.flavour;
    if db.flavour == Flavour::Mysql && mariadb {
        notes.push(
            "the mysql flavour replayed on MariaDB: it is checked against MySQL's \
             documentation, and against MariaDB only where the two agree (error messages in \
             MariaDB's words)"
                .into(),
        );
        words = Flavour::Mariadb;
    }
    for t in &db.tables {
        for sql in statement::schema(m, t, db.flavour) {
            if let Some(e) = scratch.execute(&sql)?.error {
                return Err(format!("the server refused `{sql}`: {e}"));
            }
        }
    }
    let settings = statement::settings(m, scale, mariadb);
    let mut sessions = Vec::new();
    for _ in &m.processes {
        sessions.push(Some(scratch.session(&settings)?));
    }
    Ok((scratch, sessions, words))
}

/// Redis words as redis-cli would echo them, the prefix left out.
fn shown(words: &[String]) -> String {
    words
        .iter()
        .map(|w| match w.find(':') {
            Some(i) if w.starts_with("interlock_replay_") => w[i + 1..].to_string(),
            _ => w.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// How late the replay arrives at a moment of the model: a quarter tick, at most 20 ms.
fn margin(m: &Model, scale: f64) -> Duration {
    Duration::from_secs_f64((m.tick_ms as f64 * scale / 4.0).min(20.0) / 1000.0)
}
