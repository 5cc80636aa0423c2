//! Belief against truth: where a process acts on something that is no longer so.
//!
//! A process believes it holds a Redis lock from its successful `SET … NX` until it deletes
//! the key, reads another value from it, or finishes; the truth is the key's value on the
//! server's primary. A process believes the row it read with a one-row `SELECT` is as it read
//! it until it writes the row or reads it again; the truth is the row's newest committed
//! values. A belief that is false is shown on the believer's steps that act on it (any step
//! for a lock, a statement on the table for a row), judged before the step, and for every
//! process at the trace's last step.

use super::describe::{ms, row_name};
use super::holders::key_name;
use super::Trace;
use crate::exec::observe::{Event, Reply};
use crate::ir::value::{Pid, Sym, Value};
use crate::ir::{Model, RedisCmd, SqlStmt};
use crate::world::State;

/// A lock a process believes it holds: (server, key, the token it wrote).
#[derive(Clone, Debug)]
struct LockBelief {
    pid: Pid,
    server: u16,
    key: Sym,
    token: Value,
}

/// A row a process read: the values it saw in these columns, at this step.
#[derive(Clone, Debug)]
struct RowBelief {
    pid: Pid,
    table: u16,
    key: Value,
    columns: Vec<u16>,
    values: Vec<Value>,
    step: usize,
}

/// A false belief: who holds it, what it believes (`it holds lock@n1`), what is so instead
/// (`lock@n1 expired at 1s`), and the row it is about, if a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub who: Pid,
    pub believes: String,
    pub truth: String,
    pub row: Option<(u16, Value)>,
}

impl Note {
    /// `client[0] believes it holds lock@n1; lock@n1 expired at 1s`.
    #[must_use]
    pub fn text(&self, m: &Model) -> String {
        format!("{} believes {}; {}", m.process_name(self.who), self.believes, self.truth)
    }
}

/// What changed a key or a row last, in words (`expired at 1s`, `step 4`).
/// One change to a key: who made it (none: the environment), whether it set the key, and
/// how, in words.
type Change = (Option<Pid>, bool, String);

/// Each key's history, and the step each row last changed at.
#[derive(Default)]
struct Changes {
    keys: Vec<((u16, Sym), Vec<Change>)>,
    rows: Vec<((u16, Value), usize)>,
}

impl Changes {
    /// A change to a key (`set`: a `SET` wrote it).
    fn key(&mut self, at: (u16, Sym), by: Option<Pid>, why: String, set: bool) {
        match self.keys.iter_mut().find(|k| k.0 == at) {
            Some(k) => k.1.push((by, set, why)),
            None => self.keys.push((at, vec![(by, set, why)])),
        }
    }

    /// What happened to a key since the believer last set it: the first change, and the
    /// last if there were more.
    fn key_words(&self, at: (u16, Sym), believer: Pid) -> String {
        let history: &[Change] = self.keys.iter().find(|k| k.0 == at).map_or(&[], |k| &k.1);
        let since = history
            .iter()
            .rposition(|c| c.0 == Some(believer) && c.1)
            .map_or(0, |i| i + 1);
        let seen: Vec<&String> = history[since..].iter().map(|c| &c.2).collect();
        match seen[..] {
            [] => "is gone".into(),
            [one] => one.clone(),
            [first, .., last] => format!("{first}, then {last}"),
        }
    }
    fn row(&mut self, at: (u16, Value), step: usize) {
        self.rows.retain(|r| r.0 != at);
        self.rows.push((at, step));
    }
}

#[derive(Default)]
struct Beliefs {
    locks: Vec<LockBelief>,
    /// Locks a process holds but believes it failed to take: its SET's reply was lost.
    missed: Vec<LockBelief>,
    rows: Vec<RowBelief>,
    changes: Changes,
}

/// The false beliefs of a trace: per step, those it shows; and per step, every false lock
/// belief after it.
pub struct Notes {
    pub shown: Vec<Vec<Note>>,
    pub locks_after: Vec<Vec<Note>>,
}

/// The false beliefs along the trace.
#[must_use]
pub fn notes(m: &Model, t: &Trace) -> Notes {
    let mut b = Beliefs::default();
    let mut shown = Vec::with_capacity(t.steps.len());
    let mut locks_after = Vec::with_capacity(t.steps.len());
    let mut said: Vec<Note> = Vec::new();
    for (i, step) in t.steps.iter().enumerate() {
        let before = t.before(i);
        let mut here = match step.choice.actor() {
            Some(p) => b.false_of(m, before, p, Some(step)),
            None => Vec::new(),
        };
        b.learn(m, t, i);
        let everyone: Vec<Note> = (0..step.after.procs.len())
            .flat_map(|p| b.false_of(m, &step.after, Pid(p as u16), None))
            .collect();
        if i + 1 == t.steps.len() {
            for note in &everyone {
                if !here.contains(note) {
                    here.push(note.clone());
                }
            }
        }
        locks_after.push(everyone.into_iter().filter(|n| n.row.is_none()).collect());
        // Said once: the same belief against the same truth is not repeated on later steps.
        here.retain(|n| !said.contains(n));
        said.extend(here.iter().cloned());
        shown.push(here);
    }
    Notes { shown, locks_after }
}

/// Notes in words, those that differ only in a server merged (`lock@n1…n5`).
#[must_use]
pub fn words(m: &Model, notes: &[Note]) -> Vec<String> {
    let texts: Vec<String> = notes.iter().map(|n| n.text(m)).collect();
    super::series::merge(&texts)
}

impl Beliefs {
    /// `pid`'s false beliefs in `s`; with `acting`, only those the step acts on.
    fn false_of(&self, m: &Model, s: &State, pid: Pid, acting: Option<&super::Step>) -> Vec<Note> {
        let mut out = Vec::new();
        for l in self.locks.iter().filter(|l| l.pid == pid) {
            let now = s.redis[s.node(m, l.server)].get(l.key).map(|k| k.value);
            if now != Some(l.token) {
                let name = key_name(m, l.server, l.key);
                let why = self.changes.key_words((l.server, l.key), pid);
                out.push(Note {
                    who: pid,
                    believes: format!("it holds {name}"),
                    truth: format!("{name} {why}"),
                    row: None,
                });
            }
        }
        for l in self.missed.iter().filter(|l| l.pid == pid) {
            let now = s.redis[s.node(m, l.server)].get(l.key).map(|k| k.value);
            if now == Some(l.token) {
                let name = key_name(m, l.server, l.key);
                out.push(Note {
                    who: pid,
                    believes: format!("its SET of {name} failed (the reply timed out)"),
                    truth: format!("{name} holds its token"),
                    row: None,
                });
            }
        }
        for r in self.rows.iter().filter(|r| r.pid == pid) {
            if acting.is_some_and(|st| !touches(st, r.table)) {
                continue;
            }
            if let Some(note) = self.stale(m, s, r) {
                out.push(note);
            }
        }
        out
    }

    /// The note for a row read that the row's newest committed values no longer match.
    fn stale(&self, m: &Model, s: &State, r: &RowBelief) -> Option<Note> {
        let now = s
            .db
            .find(r.table, r.key)
            .ok()
            .and_then(|i| s.db.row(r.table, i).latest());
        let since = self.changes.rows.iter().find(|c| c.0 == (r.table, r.key));
        let since = since.map_or(String::new(), |c| format!(" since step {}", c.1 + 1));
        let row = row_name(m, r.table, r.key);
        let read = cells(m, r.table, &r.columns, &r.values);
        let truth = match now {
            None => format!("it is deleted{since}"),
            Some(vals) => {
                let cur: Vec<Value> = r.columns.iter().map(|&c| vals[c as usize]).collect();
                if cur == r.values {
                    return None;
                }
                format!("it is {}{since}", cells(m, r.table, &r.columns, &cur))
            }
        };
        Some(Note {
            who: r.pid,
            believes: format!("{row} {read} (read at step {})", r.step + 1),
            truth,
            row: Some((r.table, r.key)),
        })
    }

    /// What step `i` teaches its actor, and what it changes for everyone.
    fn learn(&mut self, m: &Model, t: &Trace, i: usize) {
        let step = &t.steps[i];
        let actor = step.choice.actor();
        let when = ms(m, step.time);
        let lost = step.events.iter().any(|e| matches!(e, Event::ReplyLost { .. }));
        for e in &step.events {
            match e {
                Event::Redis {
                    server, cmd, arg, reply,
                } => {
                    let by = actor.map_or_else(|| "the environment".into(), |p| m.process_name(p));
                    self.redis(actor, *server, cmd, (*arg, *reply), &format!("{by} at {when}"));
                    if lost {
                        self.reply_lost(actor);
                    }
                }
                Event::KeyExpired { server, key } => {
                    let why = format!("expired at {when}");
                    self.changes.key((*server, *key), None, why, false);
                }
                Event::Failover { server, .. } => {
                    for k in &t.before(i).redis[t.before(i).node(m, *server)].keys {
                        let why = format!("was lost in a failover at {when}");
                        self.changes.key((*server, k.name), None, why, false);
                    }
                }
                Event::ServerRestarted { server, lost, .. } => {
                    for k in lost {
                        let why = format!("was lost when the server restarted at {when}");
                        self.changes.key((*server, *k), None, why, false);
                    }
                }
                Event::Sql {
                    stmt: SqlStmt::Select { table, columns, .. },
                    reply: Reply::Rows(rows),
                    ..
                } if rows.len() == 1 => {
                    if let Some(p) = actor {
                        self.read(&step.after, p, *table, columns, &rows[0], i);
                    }
                }
                Event::RowCommitted { table, key, .. } => {
                    self.changes.row((*table, *key), i);
                    if let Some(p) = actor {
                        self.rows
                            .retain(|r| !(r.pid == p && (r.table, r.key) == (*table, *key)));
                    }
                }
                _ => {}
            }
        }
        for (p, proc) in step.after.procs.iter().enumerate() {
            if !matches!(
                proc.status,
                crate::world::process::Status::Ready
                    | crate::world::process::Status::Busy(_)
                    | crate::world::process::Status::Waiting(_)
            ) {
                self.locks.retain(|l| l.pid.index() != p);
                self.missed.retain(|l| l.pid.index() != p);
                self.rows.retain(|r| r.pid.index() != p);
            }
        }
    }

    /// The actor's last SET … NX was answered, but the answer never reached it: it does not
    /// believe it holds the lock.
    fn reply_lost(&mut self, actor: Option<Pid>) {
        let Some(p) = actor else { return };
        if let Some(i) = self.locks.iter().rposition(|l| l.pid == p) {
            let l = self.locks.remove(i);
            self.missed.push(l);
        }
    }

    /// A Redis command's effect on beliefs; `by` names who ran it and when.
    fn redis(&mut self, actor: Option<Pid>, server: u16, cmd: &RedisCmd, sent: (Value, Value), by: &str) {
        let Some(p) = actor else { return };
        let (arg, reply) = sent;
        let who = |verb: &str| format!("was {verb} by {by}");
        match cmd {
            RedisCmd::Set { key, nx, .. } if matches!(reply, Value::Str(_)) => {
                self.locks.retain(|l| !(l.pid == p && (l.server, l.key) == (server, *key)));
                self.missed
                    .retain(|l| !(l.pid == p && (l.server, l.key) == (server, *key)));
                if *nx {
                    self.locks.push(LockBelief {
                        pid: p,
                        server,
                        key: *key,
                        token: arg,
                    });
                }
                self.changes.key((server, *key), Some(p), who("taken"), true);
            }
            RedisCmd::Del { key } if reply == Value::Int(1) => {
                self.locks.retain(|l| !(l.pid == p && (l.server, l.key) == (server, *key)));
                self.changes.key((server, *key), Some(p), who("deleted"), false);
            }
            RedisCmd::Get { key } => {
                // What it reads is what it now knows.
                self.missed
                    .retain(|l| !(l.pid == p && (l.server, l.key) == (server, *key)));
                self.locks
                    .retain(|l| !(l.pid == p && (l.server, l.key) == (server, *key) && l.token != reply));
            }
            _ => {}
        }
    }

    /// A one-row read: which row it came from, when exactly one row of the table ever had
    /// these values in these columns.
    fn read(&mut self, s: &State, p: Pid, table: u16, columns: &[u16], row: &[Value], i: usize) {
        let matches = |vals: &[Value]| columns.iter().zip(row).all(|(&c, v)| vals[c as usize] == *v);
        let candidates: Vec<Value> = (0..s.db.rows(table))
            .map(|r| s.db.row(table, r))
            .filter(|r| {
                r.versions
                    .iter()
                    .filter_map(|v| v.1.as_deref())
                    .chain(r.pending.as_ref().and_then(|q| q.1.as_deref()))
                    .any(matches)
            })
            .map(|r| r.key)
            .collect();
        if let [key] = candidates[..] {
            self.rows.retain(|r| !(r.pid == p && (r.table, r.key) == (table, key)));
            self.rows.push(RowBelief {
                pid: p,
                table,
                key,
                columns: columns.to_vec(),
                values: row.to_vec(),
                step: i,
            });
        }
    }
}

/// Whether a step runs a statement on `table`, or ends a transaction.
fn touches(step: &super::Step, table: u16) -> bool {
    step.events.iter().any(|e| match e {
        Event::Sql { stmt, .. } => match stmt {
            SqlStmt::Select { table: t, .. }
            | SqlStmt::Update { table: t, .. }
            | SqlStmt::Insert { table: t, .. }
            | SqlStmt::Delete { table: t, .. } => *t == table,
            SqlStmt::Commit => true,
            SqlStmt::Begin { .. } | SqlStmt::Rollback => false,
        },
        _ => false,
    })
}

/// `stock=1 version=3`.
fn cells(m: &Model, table: u16, columns: &[u16], values: &[Value]) -> String {
    let t = &m.db.as_ref().expect("rows exist only with a db").tables[table as usize];
    let shown: Vec<String> = columns
        .iter()
        .zip(values)
        .map(|(&c, v)| format!("{}={}", t.columns[c as usize].name, m.show(v)))
        .collect();
    shown.join(" ")
}
